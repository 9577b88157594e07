/*
 * btl_tcp.h: internals of the tcp BTL (btl.h): TCP sockets between any two ranks.
 *
 *   rank i                                                    rank j
 *   endpoint[j] --- socket i connected (first send to j) ---> accepted conn (from i)
 *   accepted conn (from j) <--- socket j connected ---------- endpoint[i]
 *
 * Connections are one-way: rank i sends to rank j only over the socket i connected to j,
 * and receives from j only on the sockets it accepted. Two ranks that start sending to each
 * other at the same moment therefore open two independent connections, and there is no
 * simultaneous-connect race to break. Per-peer ordering (btl.h) follows from TCP: every
 * fragment i sends to j goes down one byte stream, in send order.
 *
 * Lifecycle of an endpoint: IDLE (add_procs: the peer's address is known, nothing is open)
 * -> CONNECTING (first send: non-blocking connect, handshake queued) -> CONNECTED ->
 * FAILED (connect refused, reset: logged once; every later send is CRMPI_ERR_UNREACH).
 * Connections are made lazily because most peers of a large job never talk to each other.
 *
 * Who may connect: a rank listens only on the addresses it publishes (one listening socket
 * each, one port for all), and a connection counts only once its handshake proves that the
 * connecting process holds the job's key (btl_tcp_auth.c): an HMAC-SHA256, under a key
 * derived from the job's key, over the handshake's fields (sender, receiver, job, a nonce
 * fresh for each connection) and the receiver's listen nonce, a random value each module
 * publishes in its modex blob. The listen nonce is new with every module (MPI_Init, and
 * every rebuild after a checkpoint), so a handshake recorded on the wire is worth nothing to
 * another module, and one replayed to the same module is refused by its nonce. A process
 * without the key (another user, a stale rank of an earlier run) is refused before a
 * single fragment is read from it. Frames are not authenticated one by one: whoever can
 * inject bytes into an established TCP stream is root on one of the nodes.
 *
 * Wire format, in the host's byte order (every rank of a job runs on the same architecture,
 * convertor.h): a connection opens with one btl_tcp_handshake_t, then carries frames, each
 * a btl_tcp_frame_hdr_t, `gap` bytes of padding, the `length` bytes of the sender's hdr and
 * packed payload, and zero padding up to a multiple of BTL_TCP_ALIGN: every fragment
 * reaches its receive callback 8-byte aligned within the receive buffer.
 *
 * Copy alignment (why the gap and the page-aligned buffers): on this platform's AMD EPYC
 * (FSRM), `rep movsb`, which both the kernel's user copies and glibc's memcpy use for large
 * blocks, runs at about 3 GB/s instead of 45 GB/s when the destination is 1 to 31 bytes
 * past the source modulo 4 KiB. The kernel fills a socket's pages from offset 0 when the
 * previous data was consumed, so the receive buffer starts on a page (a frame read into
 * it lands at the page offsets it was sent from), and the sender chooses the gap so that
 * the payload's page offset in the socket is 0 or at least 32 bytes away from its offset
 * in the user's buffer, in both directions (the receiver's copy into a buffer placed like
 * the sender's then avoids the slow case too). Measured on a 64 KiB ping-pong: 19 us
 * one-way instead of 43 to 64 us.
 *
 * Placement (btl.h, "Placement"; CRMPI_BTL_FLAG_RECV_PLACE, btl_tcp_recv_place): the
 * sender already writes a contiguous payload from the user's buffer (one sendmsg over the
 * frame header, the hdr and the payload: the kernel copy is the only one), so the copy
 * that placement removes is the receiver's: without it a large payload is read into the
 * connection's buffer and then unpacked into the receive buffer. With it, once a frame of
 * a tag with a placer has its header in the buffer, the placer (the PML, which checks the
 * header against its own request) gives an iov into the receive buffer, and the rest of
 * the payload is read with readv() straight there (btl_tcp_conn.c). To keep the part that
 * is read into the buffer first small, a connection whose last frame was placed, or longer
 * than an eager message (so part of a rendezvous), reads the next header alone
 * (BTL_TCP_CONN_HEAD_READ bytes): each FRAG of a rendezvous copies at most that much, and
 * a stream of eager messages keeps its single read per frame. The placed frame's padding
 * and any discarded bytes (a truncated receive) are read into the buffer and dropped. A
 * placement in progress ends only when its last byte is in place, or with an error when
 * the connection dies or the module is finalized (placed() is called once either way);
 * the PML counts the receive as incomplete until then, so a checkpoint's drain waits for
 * it like for any rendezvous.
 *
 * Progress: when no peer uses the module (the BML gave every peer to sm or self and
 * del_procs'd them here, or none was reachable), progress returns before any syscall, so
 * tcp costs the other BTLs nothing. Otherwise one epoll_wait (level-triggered, timeout 0)
 * covers the listening socket, the accepted sockets and the outgoing sockets that wait to
 * write (connecting, or with a queue); with a single accepted socket and nothing to write,
 * that socket is read directly and epoll asked only every few calls (btl_tcp_module.c).
 * Accepted sockets delay their ACKs (btl_tcp_conn.c): with one-way connections an ACK
 * can never ride on returning data.
 *
 * Removing peers: del_procs closes the outgoing socket once its queue is out (finalize
 * flushes what is left, for up to BTL_TCP_FINALIZE_TIMEOUT_MS). Sockets the peer connected
 * stay until it closes them: its last fragments may still be in flight. The BML's choice
 * is symmetric (both ranks pick the same transport for a pair), so a peer deleted here
 * does not connect to us afterwards.
 *
 * Selection: exclusivity 1024 (sm is 32768, self 65536), so the BML uses tcp only for the
 * peers no shared-memory or self module reaches. Not CKPT_FRIENDLY, decided by testing
 * CRIU 4.1.1 on this kernel (crs-criu/README.md): it cannot dump any TCP socket, listening
 * or established (kernels from 6.16 refuse SO_PASSCRED on them), and a restart elsewhere
 * could not reuse the addresses anyway. So INC finalizes the module before the dump
 * (every socket closed) and the BML creates it again after, with a new listening address
 * in a new modex; connections are made again on first use.
 *
 * Threading: like every BTL, called with the library lock held, from one thread at a
 * time; no thread of its own. Receive callbacks run inside progress and may call send
 * (progress guards itself against re-entrance).
 */
#ifndef CRMPI_BTL_TCP_H
#define CRMPI_BTL_TCP_H

#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "btl.h"

#define BTL_TCP_EXCLUSIVITY 1024u
/* The modex key under which each rank publishes its addresses and port. */
#define BTL_TCP_MODEX_KEY "btl.tcp"
/* "CRTC": the first four bytes of the modex blob and of every handshake. */
#define BTL_TCP_MAGIC 0x43525443u
/* Bumped whenever the handshake, the frames or the modex blob change meaning. */
#define BTL_TCP_VERSION 2u
/* Bytes of the nonces (a module's listen nonce, a connection's own) and of the MAC. */
#define BTL_TCP_NONCE_LEN 16u
#define BTL_TCP_MAC_LEN   32u
/* Frames are padded to this, so callbacks see aligned headers (see above). */
#define BTL_TCP_ALIGN 8u
/* Payloads from this size on get a gap when their alignment calls for one (see above);
 * below it, copies do not use `rep movsb`, or cost less than the gap. */
#define BTL_TCP_GAP_MIN_PAYLOAD 4096u
/* Largest gap: 64 bytes move a payload out of the slow window in either direction. */
#define BTL_TCP_GAP_MAX 64u
/* Receive buffers and send queues start on a page (see "Copy alignment" above). */
#define BTL_TCP_PAGE 4096u
/* Largest frame a receiver accepts from a peer (its max_send_size may differ from ours);
 * anything longer is a corrupt stream, not a fragment. */
#define BTL_TCP_FRAME_MAX (256u * 1024 * 1024)
/* Bytes queued per endpoint before send answers CRMPI_ERR_RESOURCE_BUSY, in units of
 * max_send_size: enough to keep the socket busy while the PML pipelines. */
#define BTL_TCP_QUEUE_LIMIT_FRAGS 4u
/* How long finalize keeps flushing send queues before it drops what is left. */
#define BTL_TCP_FINALIZE_TIMEOUT_MS 10000

/* The first bytes on every connection, from the connecting rank. */
typedef struct btl_tcp_handshake {
    uint32_t magic;                   /* BTL_TCP_MAGIC: this is a crmpi tcp connection */
    uint16_t version;                 /* BTL_TCP_VERSION of the connecting rank */
    uint16_t reserved;                /* zero; keeps the fields below aligned */
    uint32_t sender_rank;             /* the connecting rank, in MPI_COMM_WORLD */
    uint32_t receiver_rank;           /* the rank it means to reach */
    uint64_t jobid;                   /* the connecting rank's job */
    uint8_t nonce[BTL_TCP_NONCE_LEN]; /* fresh for this connection: a replay is refused */
    uint8_t mac[BTL_TCP_MAC_LEN];     /* HMAC over the bytes above and the receiver's listen
                                       * nonce (btl_tcp_auth.c) */
} btl_tcp_handshake_t;

/* Before every fragment on the wire. */
typedef struct btl_tcp_frame_hdr {
    uint32_t length;     /* bytes of hdr + payload (after the gap; padding not counted) */
    uint8_t tag;         /* the receive callback's tag (< CRMPI_BTL_TAG_MAX) */
    uint8_t gap;         /* bytes between this header and the fragment: a multiple of
                          * BTL_TCP_ALIGN, at most BTL_TCP_GAP_MAX (copy alignment) */
    uint8_t reserved[2]; /* zero; pads the header to BTL_TCP_ALIGN */
} btl_tcp_frame_hdr_t;

/* Bytes the frame of `fh` takes on the wire, header, gap and padding included. */
static inline size_t btl_tcp_frame_size(const btl_tcp_frame_hdr_t *fh)
{
    return sizeof(*fh) + fh->gap +
           ((fh->length + BTL_TCP_ALIGN - 1) & ~(size_t)(BTL_TCP_ALIGN - 1));
}

/* The modex blob: this header, then num_addrs btl_tcp_modex_addr_t. */
typedef struct btl_tcp_modex_hdr {
    uint32_t magic;                          /* BTL_TCP_MAGIC */
    uint16_t version;                        /* BTL_TCP_VERSION */
    uint16_t port;                           /* the listening port, network byte order */
    uint32_t num_addrs;                      /* entries that follow */
    uint8_t listen_nonce[BTL_TCP_NONCE_LEN]; /* what handshakes to this module must cover */
} btl_tcp_modex_hdr_t;

/* One published address. */
typedef struct btl_tcp_modex_addr {
    uint32_t addr;      /* IPv4 address, network byte order */
    uint8_t prefix_len; /* its subnet's prefix length, for the same-subnet preference */
    uint8_t loopback;   /* 1: a loopback address, usable only by ranks on the same node */
    uint16_t reserved;  /* zero */
} btl_tcp_modex_addr_t;

/* One IPv4 address of an interface (ours from getifaddrs, or a peer's from the modex). */
typedef struct btl_tcp_if {
    char name[IF_NAMESIZE]; /* interface name ("eth0"); empty for a peer's address */
    struct in_addr addr;    /* the address */
    uint8_t prefix_len;     /* its netmask as a prefix length */
    bool loopback;          /* IFF_LOOPBACK: reaches only this node */
} btl_tcp_if_t;

/* What an epoll event's data.ptr points to: the first field of each polled object. */
typedef enum {
    BTL_TCP_POLL_LISTEN,   /* a listening socket (btl_tcp_listener_t) */
    BTL_TCP_POLL_CONN,     /* an accepted socket (btl_tcp_conn_t) */
    BTL_TCP_POLL_ENDPOINT, /* an outgoing socket (crmpi_btl_endpoint_t) */
} btl_tcp_poll_kind_t;

typedef struct btl_tcp_pollable {
    btl_tcp_poll_kind_t kind; /* which object embeds this */
} btl_tcp_pollable_t;

/* A listening socket, on one of the module's addresses. */
typedef struct btl_tcp_listener {
    btl_tcp_pollable_t poll; /* BTL_TCP_POLL_LISTEN; first, for epoll */
    int fd;                  /* non-blocking, bound to ifs[i].addr:listen_port, or -1 */
} btl_tcp_listener_t;

/* Bytes the kernel has not taken yet, in send order: [head, tail) of buf. */
typedef struct btl_tcp_sendq {
    char *buf;        /* page-aligned; allocated on first use, grown on demand, kept until
                       * the endpoint dies */
    size_t cap;       /* bytes allocated at buf */
    size_t head;      /* first unsent byte */
    size_t tail;      /* end of the queued bytes */
    size_t unit_left; /* unsent bytes of the first unit (handshake or frame) in the queue; the
                       * units after it are whole, so their frame headers can be read */
} btl_tcp_sendq_t;

typedef enum {
    BTL_TCP_EP_IDLE,       /* peer known, no socket yet (connections are lazy) */
    BTL_TCP_EP_CONNECTING, /* connect() in progress; handshake and fragments queued */
    BTL_TCP_EP_CONNECTED,  /* handshake sent or queued; fragments flow */
    BTL_TCP_EP_FAILED,     /* logged once; sends answer CRMPI_ERR_UNREACH */
} btl_tcp_endpoint_state_t;

typedef struct btl_tcp_module btl_tcp_module_t;

/* This rank's way to one peer: the outgoing half of the pair of connections. */
struct crmpi_btl_endpoint {
    btl_tcp_pollable_t poll;                 /* BTL_TCP_POLL_ENDPOINT; first, for epoll */
    btl_tcp_module_t *module;                /* the owner */
    uint32_t peer_rank;                      /* in MPI_COMM_WORLD */
    struct sockaddr_in addr;                 /* the peer's chosen address and listening port */
    uint8_t listen_nonce[BTL_TCP_NONCE_LEN]; /* the peer module's, from its modex blob */
    char addr_text[INET_ADDRSTRLEN + 8];     /* "10.0.0.2:41234", for messages */
    btl_tcp_endpoint_state_t state;          /* see the lifecycle above */
    int fd;                                  /* the connected socket, or -1 */
    uint32_t poll_events;                    /* events registered with epoll for fd */
    btl_tcp_sendq_t queue;                   /* what the kernel did not take yet */
    bool deleted;                            /* del_procs'd; kept only until its queue drains */
    crmpi_btl_endpoint_t *next_draining;     /* link in module->draining while deleted */
};

/* A socket another rank connected to us: where its fragments arrive. */
typedef struct btl_tcp_conn {
    btl_tcp_pollable_t poll;             /* BTL_TCP_POLL_CONN; first, for epoll */
    btl_tcp_module_t *module;            /* the owner */
    int fd;                              /* the accepted socket */
    bool identified;                     /* the handshake arrived and was valid */
    uint32_t peer_rank;                  /* the sender, once identified */
    char addr_text[INET_ADDRSTRLEN + 8]; /* the sender's address and port, for messages */
    char *buf;                           /* page-aligned; received bytes not yet delivered:
                                          * [start, fill) */
    size_t cap;                          /* bytes allocated at buf */
    size_t start;                        /* first byte of the first incomplete frame */
    size_t fill;                         /* end of the received bytes */
    bool placing;                        /* a frame's payload is being read into `place` (btl.h,
                                          * "Placement"); buf holds nothing meanwhile */
    bool large_last;                     /* the last frame was placed or longer than an
                                          * eager message (a rendezvous's): read the next
                                          * header alone, so that a payload to be placed is not
                                          * read into buf first */
    bool place_reported;                 /* placed() already ran (an abort): the rest is dropped */
    uint8_t place_tag;                   /* the placed frame's tag: its placer gets `placed` */
    crmpi_btl_place_t place;             /* where the payload goes; iov[place_iov...] advanced past
                                          * what arrived */
    int place_iov;                       /* first entry of place.iov not yet full */
    size_t place_left;                   /* bytes of the frame still to read: the rest of the iov,
                                          * then place.discard, then the frame's padding */
    struct btl_tcp_conn *prev;           /* previous in module->conns, or NULL */
    struct btl_tcp_conn *next;           /* next in module->conns, or NULL */
} btl_tcp_conn_t;

/* Where the module's bytes went: the copies it made, for btl_base_verbose and the tests. */
typedef struct btl_tcp_stats {
    uint64_t sent_direct;     /* frame bytes the kernel took straight from the caller's memory */
    uint64_t sent_queued;     /* frame bytes copied into a send queue (the socket was full) */
    uint64_t recv_delivered;  /* frame bytes read into a connection's buffer and delivered */
    uint64_t recv_placed;     /* payload bytes read straight into a placement (readv) */
    uint64_t recv_place_copy; /* payload bytes of placed frames that had been read into the
                               * connection's buffer already, and copied from it */
} btl_tcp_stats_t;

struct btl_tcp_module {
    crmpi_btl_module_t super;          /* the slots; first, so the BML's pointer is ours */
    uint64_t jobid;                    /* checked in every handshake */
    uint32_t my_rank;                  /* this rank, in MPI_COMM_WORLD */
    uint32_t job_size;                 /* ranks in MPI_COMM_WORLD */
    uint32_t my_node;                  /* node id: loopback addresses only reach the same node */
    uint32_t *node_of_rank;            /* copy of the job's node ids, job_size entries */
    btl_tcp_if_t *ifs;                 /* the interfaces chosen by btl_tcp_if_include/exclude */
    size_t num_ifs;                    /* entries in ifs */
    btl_tcp_listener_t *listeners;     /* one per entry of ifs, all on listen_port */
    uint16_t listen_port;              /* host byte order, as published */
    uint8_t auth_key[BTL_TCP_MAC_LEN]; /* derived from the job's key (btl_tcp_auth.c) */
    uint8_t listen_nonce[BTL_TCP_NONCE_LEN];   /* published; covered by every handshake to us */
    uint8_t (*seen_nonces)[BTL_TCP_NONCE_LEN]; /* of the handshakes accepted so far */
    size_t num_seen_nonces;                    /* entries in seen_nonces */
    int epoll_fd;                              /* listen_fd, accepted sockets, outgoing sockets */
    crmpi_btl_endpoint_t **endpoints;          /* by peer rank; NULL: not added, or deleted */
    crmpi_btl_endpoint_t *draining;            /* deleted endpoints whose queues still flush */
    btl_tcp_conn_t *conns;                     /* accepted sockets, newest first */
    size_t num_live;                           /* endpoints added and not deleted */
    size_t num_draining;                       /* entries in draining */
    size_t num_conns;                          /* entries in conns */
    size_t num_writing;    /* endpoints waiting for EPOLLOUT (connecting, queued) */
    unsigned poll_tick;    /* progress calls, for the direct-read path's epoll turn */
    size_t queue_limit;    /* BTL_TCP_QUEUE_LIMIT_FRAGS * max_send_size */
    size_t sndbuf;         /* SO_SNDBUF of every socket, 0: kernel autotuning */
    size_t rcvbuf;         /* SO_RCVBUF of every socket, 0: kernel autotuning */
    char *bounce;          /* page-aligned, max_send_size bytes for packing non-contiguous
                            * payloads; one per module is enough because a send
                            * never returns before the bytes are written or queued */
    size_t recv_cap;       /* receive buffer of a streaming connection: two
                            * max-size frames, so reads are large */
    int accept_errno;      /* last accept() failure logged, so it is logged once */
    bool in_progress;      /* progress is running: a callback must not re-enter it */
    btl_tcp_stats_t stats; /* logged at finalize (btl_base_verbose 10) */
};

/* What init read from the parameters (btl_tcp_info.c). */
typedef struct btl_tcp_settings {
    size_t max_send_size; /* btl_tcp_max_send_size: largest hdr + payload of one send */
    size_t eager_limit;   /* btl_tcp_eager_limit, for the PML */
    size_t sndbuf;        /* btl_tcp_sndbuf, 0: autotuning */
    size_t rcvbuf;        /* btl_tcp_rcvbuf, 0: autotuning */
    bool recv_place;      /* btl_tcp_recv_place: CRMPI_BTL_FLAG_RECV_PLACE */
} btl_tcp_settings_t;

/* Does the module have anything to poll? False lets progress return without a syscall. */
static inline bool btl_tcp_module_active(const btl_tcp_module_t *module)
{
    return module->num_live + module->num_draining + module->num_conns != 0;
}

/* Interfaces and modex (btl_tcp_if.c) */

/**
 * Choose this rank's interfaces: every up IPv4 one (loopback included: its addresses are
 * published flagged and used only by ranks on the same node), narrowed by exactly one of
 * the include/exclude lists (names or a.b.c.d/n subnets, comma-separated).
 * @return CRMPI_OK with a malloc'ed array; CRMPI_ERR_BAD_PARAM (both lists set, a bad
 *         entry, an included name that does not exist, nothing left: logged);
 *         CRMPI_ERR_NOT_SUPPORTED (no lists and no up IPv4 interface: verbose only).
 */
int btl_tcp_if_select(const char *include, const char *exclude, btl_tcp_if_t **ifs_out,
                      size_t *num_out);

/** Which of the peer's addresses to connect to; CRMPI_ERR_UNREACH when none can work. */
int btl_tcp_if_choose_peer(const btl_tcp_if_t *mine, size_t num_mine, const btl_tcp_if_t *theirs,
                           size_t num_theirs, bool same_node, struct in_addr *addr_out);

/** Encode our addresses, port and listen nonce for crmpi_rte_modex_publish (malloc'ed). */
int btl_tcp_modex_pack(const btl_tcp_module_t *module, void **blob_out, size_t *len_out);

/** Decode a peer's blob; CRMPI_ERR_PROTO (not logged) when it is malformed or another version. */
int btl_tcp_modex_unpack(const void *blob, size_t len, btl_tcp_if_t **addrs_out, size_t *num_out,
                         uint16_t *port_out, uint8_t *listen_nonce_out);

/* Authentication (btl_tcp_auth.c) */

/**
 * Derive the module's key from the job's and draw its listen nonce.
 * @return CRMPI_OK; CRMPI_ERR_NOT_SUPPORTED when the job has no key (logged);
 *         CRMPI_ERR_IO when the kernel gives no randomness (logged)
 */
int btl_tcp_auth_init(btl_tcp_module_t *module, const crmpi_rte_job_info_t *job);
/** Fill the handshake's nonce and MAC for a connection to `ep`. @return as getrandom. */
int btl_tcp_auth_sign(const crmpi_btl_endpoint_t *ep, btl_tcp_handshake_t *hs);
/**
 * Does the handshake prove the key, name this module's rank and job, and carry a nonce not
 * seen before? The nonce is remembered when it does.
 * @return true, or false with `why` saying what was wrong
 */
bool btl_tcp_auth_check(btl_tcp_module_t *module, const btl_tcp_handshake_t *hs, char *why,
                        size_t why_len);

/* The module (btl_tcp_module.c) */

/**
 * Create the module: its epoll set and its listening socket (published by the caller).
 * @param ifs  the chosen interfaces, malloc'ed; the module owns them on CRMPI_OK only
 * @return CRMPI_OK, or an error (logged)
 */
int btl_tcp_module_create(const crmpi_rte_job_info_t *job, const btl_tcp_settings_t *settings,
                          btl_tcp_if_t *ifs, size_t num_ifs, btl_tcp_module_t **module_out);

/** `size` bytes starting on a page (see "Copy alignment"), or NULL; free() releases them. */
void *btl_tcp_page_alloc(size_t size);

/** TCP_NODELAY and the configured buffer sizes. @return 0, or -1 with errno. */
int btl_tcp_socket_tune(const btl_tcp_module_t *module, int fd);

/* Endpoints (btl_tcp_endpoint.c) */

/** An IDLE endpoint for `peer_rank`, to connect to `addr` on its first send; the peer's
 *  listen nonce goes into the handshake. */
int btl_tcp_endpoint_create(btl_tcp_module_t *module, uint32_t peer_rank,
                            const struct sockaddr_in *addr, const uint8_t *listen_nonce,
                            crmpi_btl_endpoint_t **ep_out);
/** Close the socket (what the kernel holds is still delivered) and free the endpoint. */
void btl_tcp_endpoint_destroy(crmpi_btl_endpoint_t *ep);
/** The module's send slot (btl.h). */
int btl_tcp_endpoint_send(crmpi_btl_module_t *module, crmpi_btl_endpoint_t *ep, uint8_t tag,
                          const void *hdr, size_t hdr_len, crmpi_convertor_t *payload,
                          size_t payload_len);
/** Handle epoll/poll events on the socket. @return frames that left the queue completely. */
int btl_tcp_endpoint_event(crmpi_btl_endpoint_t *ep, uint32_t events);
/** Does the endpoint still hold bytes for its peer (or a connect in progress)? */
bool btl_tcp_endpoint_busy(const crmpi_btl_endpoint_t *ep);
/** Frames in the endpoint's queue (for finalize's report of what was lost). */
size_t btl_tcp_endpoint_queued_frames(const crmpi_btl_endpoint_t *ep);

/* Accepted connections (btl_tcp_conn.c) */

/** Accept every pending connection on one of the module's listening sockets. */
void btl_tcp_conn_accept_all(btl_tcp_module_t *module, btl_tcp_listener_t *listener);
/**
 * Read what arrived and hand every complete frame to its callback (or drop it when
 * `deliver` is false: finalize). Closes and frees the conn at EOF or on error.
 * @return frames delivered (or dropped)
 */
int btl_tcp_conn_event(btl_tcp_conn_t *conn, uint32_t events, bool deliver);
/** Close the accepted socket, unlink it from the module and free it. */
void btl_tcp_conn_destroy(btl_tcp_conn_t *conn);

#endif /* CRMPI_BTL_TCP_H */
