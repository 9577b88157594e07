/*
 * rte.h: the rank's view of the run-time environment (libmpi side).
 *
 *   MPI_Init -> crmpi_rte_init()  connect to the agent over the inherited control socket
 *                                 (fd number in CRMPI_CTL_FD), HELLO, receive job facts
 *            -> crmpi_rte_modex_publish() ... crmpi_rte_fence(collect=1)
 *            -> crmpi_rte_modex_lookup() for each peer the transports need
 *   MPI_Finalize -> crmpi_rte_finalize()  (a fence without data, then FINALIZE)
 *   MPI_Abort    -> crmpi_rte_abort()     (the agent tells mpirun, which ends the job)
 *
 * PMIx lives in the agent, not here: a restored rank cannot reconnect a stale PMIx client
 * (see "Processes" in docs/design.md). Every call is a request/reply over the control socket.
 *
 * Thread safety: callers hold the library lock; calls are serialised internally as well.
 */
#ifndef CRMPI_RTE_H
#define CRMPI_RTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CRMPI_RTE_NAME_MAX 256
/* Bytes of the job's key: the secret mpirun made for this run of the job, which only the
 * job's processes learn (from the agent, never from argv, the environment or a file); the
 * transports authenticate their peers with keys derived from it. */
#define CRMPI_RTE_KEY_LEN 32

typedef struct crmpi_rte_job_info {
    uint64_t jobid;                    /* mpirun's pid (Open MPI 1.x convention) */
    uint32_t rank;                     /* this process's rank in MPI_COMM_WORLD */
    uint32_t size;                     /* ranks in MPI_COMM_WORLD */
    uint32_t local_rank;               /* index among the ranks on this node */
    uint32_t local_size;               /* ranks on this node */
    uint32_t node_id;                  /* index of this node in the job's node list */
    uint32_t num_nodes;                /* nodes in the job */
    uint32_t *node_of_rank;            /* node_id of every rank; `size` entries, owned by the rte */
    char nodename[CRMPI_RTE_NAME_MAX]; /* this node's name, as the launcher knows it */
    char session_dir[CRMPI_RTE_NAME_MAX]; /* node-local scratch directory of this job */
    uint8_t job_key[CRMPI_RTE_KEY_LEN];   /* the job's key; a restart brings the new run's */
    uint32_t job_key_len;                 /* CRMPI_RTE_KEY_LEN, or 0: none (a singleton) */
} crmpi_rte_job_info_t;

/**
 * Connect to the agent and learn the job facts. A program started without mpirun (no
 * CRMPI_CTL_FD) is a singleton: rank 0 of 1 on this node, with no agent, as Open MPI does
 * (MPI-3.1 section 10.5.2 leaves it to the implementation).
 * @return CRMPI_OK (connected, or a singleton: crmpi_rte_connected tells which);
 *         CRMPI_ERR_BAD_PARAM (CRMPI_CTL_FD names no open descriptor), CRMPI_ERR_PROTO /
 *         CRMPI_ERR_PEER_GONE (the agent's answer).
 */
int crmpi_rte_init(void);

/**
 * The job facts: what every layer of libmpi knows of the job (size, rank, node, locality).
 * The rte owns them; valid from a successful crmpi_rte_init (NULL before it), replaced by a
 * restart (crmpi_rte_job_info_replace), kept after crmpi_rte_finalize.
 */
const crmpi_rte_job_info_t *crmpi_rte_job(void);

/** An agent is there: false for a singleton, and after crmpi_rte_finalize. */
bool crmpi_rte_connected(void);

/** A restart: the restored rank takes the new agent's facts (the rte owns them from now;
 *  the old ones are freed). @return the rte's copy. */
const crmpi_rte_job_info_t *crmpi_rte_job_info_replace(const crmpi_rte_job_info_t *info);

/** Publish this rank's value for `key` (visible to others after the next collecting fence). */
int crmpi_rte_modex_publish(const char *key, const void *data, size_t len);

/** Block until every rank of the job has called it; collect != 0 exchanges published data. */
int crmpi_rte_fence(int collect);

/**
 * Look up `key` as published by `peer_rank`.
 * @param data_out  malloc'ed copy, owned by the caller (free()); set only on CRMPI_OK
 * @return CRMPI_OK or CRMPI_ERR_NOT_FOUND (the peer published no such key).
 */
int crmpi_rte_modex_lookup(uint32_t peer_rank, const char *key, void **data_out, size_t *len_out);

/**
 * Tell mpirun that this rank aborts the job with `errcode`; `message` is shown to the user.
 * Returns when the agent has the message (the job is being torn down); the caller exits.
 */
int crmpi_rte_abort(int errcode, const char *message);

/**
 * End the whole job with exit code `errcode`, from any layer of libmpi. The application's
 * buffered output is flushed first, so that it comes before the reason. Under mpirun the
 * reason goes to mpirun, which says it once, in its one line for the job's end, and stops
 * every rank; a singleton (or a rank whose agent cannot be told) logs it on its own stderr.
 * Called with the library lock held (or before MPI_Init).
 */
__attribute__((noreturn, format(printf, 2, 3))) void
crmpi_rte_abort_job(int errcode, const char *reason_fmt, ...);

/** Leave the job: fence without data, tell the agent, close the control socket. */
int crmpi_rte_finalize(void);

/*
 * The reader thread (checkpoint/restart). With C/R on, from the end of MPI_Init to the
 * start of MPI_Finalize, one thread of the rank, the C/R thread, is the only reader of the
 * control socket: it files replies for the threads that asked (they wait for them) and
 * hands every other message, a command from the agent (snapc.h), to `command_fn`, on the
 * reader thread. The command function may wait for the next commands itself
 * (crmpi_rte_command_wait) and make requests of its own (the modex of a restart).
 */
struct crmpi_ctl_msg;
/** Handle one command; the message is the callee's (crmpi_ctl_msg_free). */
typedef void (*crmpi_rte_command_fn_t)(struct crmpi_ctl_msg *msg);

/** Start the reader thread, then tell the agent that commands may come (CR_START).
 *  @return CRMPI_OK, CRMPI_ERR_NOT_FOUND (no agent), or an error (logged). */
int crmpi_rte_reader_start(crmpi_rte_command_fn_t command_fn);

/**
 * Offer the agent a userfaultfd with asynchronous write-protect on this process (CR_TRACK),
 * through which it tracks the pages written between checkpoints (incremental checkpoints);
 * the rank keeps no copy. Done by crmpi_rte_reader_start, and again by a restarted rank.
 * Where the kernel has no such userfaultfd, nothing is sent: checkpoints are full.
 */
void crmpi_rte_track_offer(void);

/**
 * Stop it: tell the agent that no checkpoint may start from now on (CR_STOP), and wait for
 * the reader to finish the command it may be running and end. Called without the library
 * lock (a command in progress needs it). A no-op without a reader.
 */
int crmpi_rte_reader_stop(void);

/**
 * Reader thread only: the next command from the agent, waiting up to `timeout_ms` (0:
 * only what is there, -1: forever).
 * @return CRMPI_OK with *msg_out (the caller frees it), CRMPI_ERR_TIMEOUT,
 *         CRMPI_ERR_RESOURCE_BUSY (a reply for another thread was read; call again), or a
 *         transport error (the agent is gone).
 */
int crmpi_rte_command_wait(int timeout_ms, struct crmpi_ctl_msg *msg_out);

/** Send a message of the C/R protocol to the agent (any thread; whole messages). */
struct crmpi_buf;
int crmpi_rte_command_send(int type, uint32_t seq, int32_t status, const struct crmpi_buf *payload);

/* Encoding of the job facts in CRMPI_CTL_JOB_INFO (runtime/job_info.c, used by the agent
 * to send and by the rank to receive). */
void crmpi_rte_job_info_pack(const crmpi_rte_job_info_t *info, struct crmpi_buf *buf);
/** Fills *info_out (node_of_rank malloc'ed) only on CRMPI_OK; CRMPI_ERR_PROTO otherwise. */
int crmpi_rte_job_info_unpack(struct crmpi_buf *buf, crmpi_rte_job_info_t *info_out);
void crmpi_rte_job_info_free(crmpi_rte_job_info_t *info);

#endif /* CRMPI_RTE_H */
