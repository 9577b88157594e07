/*
 * ctl.h: the control protocol between crmpi's processes.
 *
 *   tools --unix--> mpirun (HNP) <--stream--> crmpi-agent (one per rank) <--socketpair--> rank
 *                                                   ^ also the rank's init (exit status)
 *
 * mpirun <-> agent is a unix socket on one node, TCP when the agents run on other nodes
 * (plm.h); there the agent's hello carries the job's key, which mpirun checks before it
 * takes the connection for the agent's.
 *
 * One framing everywhere: a fixed 20-byte header in host byte order (every peer of a
 * connection runs on the same machine architecture: a job's nodes are alike) followed by
 * `len` payload bytes.
 * Payloads are sequences of typed fields built with crmpi_buf_t; a reader skips nothing
 * and fails with CRMPI_ERR_PROTO on any mismatch. The version is checked on every message:
 * a peer of another version is refused, never misread.
 *
 * Every request carries a sequence number; its reply carries the same number and a status
 * (CRMPI_OK or a negative crmpi status).
 *
 * Thread safety: a connection is used by one thread at a time (the caller serialises).
 */
#ifndef CRMPI_CTL_H
#define CRMPI_CTL_H

#include <stddef.h>
#include <stdint.h>

#define CRMPI_CTL_MAGIC       0x43524d50u /* "CRMP" */
#define CRMPI_CTL_VERSION     1
#define CRMPI_CTL_MAX_PAYLOAD (64u << 20) /* a larger length is a protocol error */

typedef enum {
    /* rank <-> agent */
    CRMPI_CTL_HELLO = 1,   /* rank -> agent: u32 pid; reply JOB_INFO */
    CRMPI_CTL_JOB_INFO,    /* agent -> rank: see crmpi_rte_job_info_t fields, in order */
    CRMPI_CTL_MODEX_PUT,   /* rank -> agent: str key, bytes value; reply status only */
    CRMPI_CTL_FENCE,       /* rank -> agent: u32 collect; reply when every rank arrived */
    CRMPI_CTL_MODEX_GET,   /* rank -> agent: u32 rank, str key; reply: bytes value */
    CRMPI_CTL_ABORT,       /* rank -> agent -> mpirun: i32 errcode, str message */
    CRMPI_CTL_FINALIZE,    /* rank -> agent: the rank is leaving MPI; reply status */
    CRMPI_CTL_REPLY,       /* any reply: status in the header, payload per request */
    CRMPI_CTL_INIT_EXIT,   /* rank's init -> agent: i32 raw wait status of the rank */
    CRMPI_CTL_CR_STOP,     /* rank -> agent: no checkpoint from here on (MPI_Finalize); reply */
    CRMPI_CTL_CR_START,    /* rank -> agent: its C/R thread reads the socket now; reply */
    CRMPI_CTL_CR_TRACK,    /* rank -> agent: no payload; one byte follows, carrying a
                              userfaultfd (SCM_RIGHTS) for dirty-page tracking; no reply */
    CRMPI_CTL_CR_APP_CKPT, /* rank -> agent: str its pheap backup file; MPIX_Checkpoint asks
                              for an application checkpoint; no reply (the checkpoint's
                              CKPT_* steps, then CKPT_APP_DONE, follow) */
    /* agent <-> mpirun */
    CRMPI_CTL_AGENT_HELLO = 32, /* agent -> mpirun: u32 rank, u32 agent pid, u32 rank pid,
                                   str node name, str the job's key */
    CRMPI_CTL_AGENT_EXIT,       /* agent -> mpirun: u32 rank, i32 raw wait status */
    CRMPI_CTL_AGENT_ABORT,      /* agent -> mpirun: u32 rank, i32 errcode, str message */
    CRMPI_CTL_AGENT_OUTPUT,     /* agent -> mpirun (--output ctl): u32 stream (1 stdout,
                                   2 stderr), bytes what the rank wrote */
    CRMPI_CTL_AGENT_SIGNAL,     /* mpirun -> agent: i32 signal, as if the agent received it */
    CRMPI_CTL_AGENT_APP_CKPT,   /* agent -> mpirun: its rank called MPIX_Checkpoint */
    /* A checkpoint (snapc.h): the header's seq is the checkpoint's sequence number; "down"
     * goes mpirun -> agent -> rank, "up" the other way; every "up" carries a status. */
    CRMPI_CTL_CKPT_BEGIN = 64, /* down: u32 flags (CRMPI_SNAPC_TERM, ...) */
    CRMPI_CTL_CKPT_BOOKMARKS,  /* up: u32 n, then n x (u32 peer, u32 messages sent to it) */
    CRMPI_CTL_CKPT_EXPECT,     /* down: u32 n, then n x (u32 peer, u32 messages it sent) */
    CRMPI_CTL_CKPT_DRAINED,    /* up: u64 bookmark ns, u64 drain ns, u64 messages, u64 bytes */
    CRMPI_CTL_CKPT_SUSPEND,    /* down: release what CRIU cannot take */
    CRMPI_CTL_CKPT_READY,      /* up: u64 suspend ns; the rank waits, lock held */
    CRMPI_CTL_CKPT_DUMP,       /* mpirun -> agent: u32 flags, u32 parent sequence (0: none),
                                  str its directory; images go to node-local storage */
    CRMPI_CTL_CKPT_DUMPED,     /* agent -> mpirun: u64 image bytes, u64 dump ns; or str error */
    CRMPI_CTL_CKPT_CONTINUE,   /* down: rebuild and go on */
    CRMPI_CTL_CKPT_CONTINUED,  /* up: u64 continue ns */
    CRMPI_CTL_CKPT_ABORT,      /* down: undo whatever was done, go on; up: the answer */
    CRMPI_CTL_CKPT_STORE,      /* mpirun -> agent: str rank directory in the global snapshot */
    CRMPI_CTL_CKPT_STORED,     /* agent -> mpirun: str the rank's files (filem rank entry) */
    CRMPI_CTL_CKPT_RESTART,    /* new agent -> restored rank: u32 n, n x str CRMPI_MCA_ entry
                                  (or CRMPI_MEMPOLICY=..., mempolicy.h; ranks skip entries
                                  they do not know), then the job facts (JOB_INFO's
                                  encoding); answer CONTINUED */
    CRMPI_CTL_CKPT_APP_WANTED, /* down, seq 0: crs pheap; ompi-checkpoint asked for a
                                  checkpoint, which the ranks' next MPIX_Checkpoint takes */
    CRMPI_CTL_CKPT_APP_DONE,   /* down: i32 status, str text; the end of the application
                                  checkpoint the ranks asked for (CR_APP_CKPT): committed
                                  (status 0, seq its sequence; text: the snapshot), or
                                  refused (seq 0) or aborted, text saying why */
    CRMPI_CTL_CKPT_PRUNE,      /* mpirun -> agent, seq the sequence just committed: u32 n,
                                  then n x u32 the committed sequences kept (the commit
                                  record's after snapc_base_keep's cleanup); the agent removes
                                  its node's copies of the others (its rank's, and the partner
                                  copies it received) but the one it is dumping or copying;
                                  no reply */
    /* tools <-> mpirun (over mpirun's control socket, like the agents) */
    CRMPI_CTL_TOOL_CKPT = 96, /* tool -> mpirun: u32 flags; replies TOOL_PROGRESS..., REPLY */
    CRMPI_CTL_TOOL_PROGRESS,  /* mpirun -> tool: str one line of progress */
    CRMPI_CTL_TOOL_STATUS,    /* tool -> mpirun; REPLY: u64 jobid, u32 np, u32 C/R enabled,
                                 u32 snapc state, u32 last checkpoint, str jobdir, str program,
                                 u64 periodic interval (ms, 0: none), u32 auto, u64 MTBF (s),
                                 u32 ranks running, str hosts ("n1:2,n2:2") */
} crmpi_ctl_type_t;

typedef struct crmpi_ctl_hdr {
    uint32_t magic;   /* CRMPI_CTL_MAGIC */
    uint16_t version; /* CRMPI_CTL_VERSION */
    uint16_t type;    /* crmpi_ctl_type_t */
    uint32_t seq;     /* request sequence number; replies echo it */
    int32_t status;   /* CRMPI_OK or a negative crmpi status (replies) */
    uint32_t len;     /* payload bytes that follow */
} crmpi_ctl_hdr_t;

typedef struct crmpi_ctl_msg {
    crmpi_ctl_hdr_t hdr; /* as received */
    uint8_t *payload;    /* malloc'ed, hdr.len bytes (NULL when 0); owned by the caller */
} crmpi_ctl_msg_t;

/* A growable byte buffer with typed, bounds-checked field encoding. */
typedef struct crmpi_buf {
    uint8_t *data; /* owned; malloc'ed by the put functions */
    size_t len;    /* bytes written (put) or total bytes (get) */
    size_t cap;    /* allocated bytes (put) */
    size_t pos;    /* read position (get) */
    int failed;    /* sticky: a put ran out of memory or a get ran past the end */
} crmpi_buf_t;

void crmpi_buf_init(crmpi_buf_t *buf);
/** Read from borrowed memory: the buffer does not own `data` and must not be freed. */
void crmpi_buf_init_read(crmpi_buf_t *buf, const void *data, size_t len);
void crmpi_buf_free(crmpi_buf_t *buf);
void crmpi_buf_put_u32(crmpi_buf_t *buf, uint32_t value);
void crmpi_buf_put_i32(crmpi_buf_t *buf, int32_t value);
void crmpi_buf_put_u64(crmpi_buf_t *buf, uint64_t value);
void crmpi_buf_put_str(crmpi_buf_t *buf, const char *value); /* NULL encodes as "" */
void crmpi_buf_put_bytes(crmpi_buf_t *buf, const void *data, size_t len);
/* Getters set *value_out only on success; a failure is also sticky in buf->failed. */
int crmpi_buf_get_u32(crmpi_buf_t *buf, uint32_t *value_out);
int crmpi_buf_get_i32(crmpi_buf_t *buf, int32_t *value_out);
int crmpi_buf_get_u64(crmpi_buf_t *buf, uint64_t *value_out);
/** *value_out points into the buffer (NUL-terminated), valid while the buffer lives. */
int crmpi_buf_get_str(crmpi_buf_t *buf, const char **value_out);
/** *data_out points into the buffer, valid while the buffer lives. */
int crmpi_buf_get_bytes(crmpi_buf_t *buf, const void **data_out, size_t *len_out);
/** CRMPI_OK when every get consumed exactly the whole buffer and none failed. */
int crmpi_buf_get_done(const crmpi_buf_t *buf);

/**
 * Send one message (header + payload) completely; retries EINTR and short writes.
 * @return CRMPI_OK, CRMPI_ERR_PEER_GONE (EPIPE/ECONNRESET), CRMPI_ERR_IO.
 */
int crmpi_ctl_send(int fd, crmpi_ctl_type_t type, uint32_t seq, int32_t status, const void *payload,
                   size_t len);

/**
 * Receive one whole message; blocks until it has arrived.
 * @return CRMPI_OK, CRMPI_ERR_PEER_GONE (orderly close before a header began),
 *         CRMPI_ERR_PROTO (bad magic, version or length, or close mid-message), CRMPI_ERR_IO.
 */
int crmpi_ctl_recv(int fd, crmpi_ctl_msg_t *msg_out);

void crmpi_ctl_msg_free(crmpi_ctl_msg_t *msg);

/**
 * A descriptor on a unix socket: one byte that carries it (SCM_RIGHTS), sent right after a
 * message that announces it (CR_TRACK); the receiver reads it with crmpi_ctl_recv_fd once
 * it has read that message. send does not close fd.
 * @return CRMPI_OK (recv: *fd_out is the receiver's copy), CRMPI_ERR_PEER_GONE,
 *         CRMPI_ERR_PROTO (recv: the byte came without a descriptor), CRMPI_ERR_IO
 */
int crmpi_ctl_send_fd(int sock, int fd);
int crmpi_ctl_recv_fd(int sock, int *fd_out);

/**
 * TCP keepalive on a control connection between nodes, so that a peer whose node vanished
 * (it sends no end of file) is found gone within CRMPI_CTL_KEEPALIVE_S seconds: its reads
 * fail then as if it had closed.
 */
#define CRMPI_CTL_KEEPALIVE_S 30
void crmpi_ctl_tcp_keepalive(int fd);

/** A message type's name for logs ("MODEX_GET"); "?" for unknown. */
const char *crmpi_ctl_type_name(uint16_t type);

#endif /* CRMPI_CTL_H */
