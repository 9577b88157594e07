/*
 * btl_ofi.h: internals of the ofi BTL (btl.h): fragments over a libfabric provider's
 * reliable datagram (RDM) endpoint.
 *
 *   rank i                                                   rank j
 *   send: hdr + payload packed into a pooled send buffer     receive buffers posted to the
 *         -> fi_send(endpoint, buffer, fi_addr of j) ------> endpoint (any sender); each
 *         buffer back to the pool at its send completion      completion is delivered to
 *                                                             its callback, then re-posted
 *   progress: fi_cq_read on the one completion queue of the endpoint (sends and receives)
 *
 * One endpoint per rank, reached through an address vector (FI_AV_TABLE) filled in
 * add_procs from the modex: each rank publishes its endpoint's name (fi_getname) with the
 * provider's name under BTL_OFI_MODEX_KEY. The provider makes connections itself
 * (tcp;ofi_rxm connects on the first send to a peer).
 *
 * FI_MSG, not FI_TAGGED: every receive buffer takes a fragment from any sender, and the
 * receive callback is chosen by one byte of our own header. Tagged receives would make the
 * provider run a matching engine (ofi_rxm keeps tagged receive and unexpected queues) only
 * to match everything with an ignore mask, and the sender's rank would still have to
 * travel: FI_SOURCE is optional, and a provider's source address would have to be mapped
 * back to a rank. With FI_MSG the provider hands each message to the oldest posted buffer.
 *
 * Order (btl.h: fragments to one peer arrive whole, once, in order). The endpoint is asked
 * for FI_ORDER_SAS on send and receive (fi_endpoint(3): messages from one endpoint to
 * another are matched to receive buffers in the order they were sent); a provider that
 * cannot give it is not used, and btl_base_verbose 10 says so. SAS orders the matching,
 * not the completions: every provider here reports comp_order FI_ORDER_NONE, and ofi_rxm
 * completes a message it segments (above 16 KiB) or moves by rendezvous (above 128 KiB)
 * after smaller ones sent behind it, thousands of times in a test of a few seconds. So each
 * fragment carries a per-peer sequence number, and the receiver delivers a fragment that
 * completes early only after the ones before it (btl_ofi_recv_complete), holding its
 * buffer meanwhile; SAS bounds how many wait.
 *
 * Provider (btl_ofi_provider): empty chooses tcp;ofi_rxm, else sockets, whichever first
 * offers an RDM endpoint with FI_MSG and FI_ORDER_SAS; any other provider, a NIC's
 * (verbs;ofi_rxm, psm3, ...), udp;ofi_rxd or shm, runs when named (crmpi has been tested on
 * the four found here, not on a NIC's), and a name libfabric does not know fails init with
 * one line listing the ones it does.
 * Within the provider, btl_ofi_domain chooses the domain (for the IP providers, a network
 * interface: eth0, lo); empty, libfabric's first one is used, which may be an interface
 * that comes and goes (a container's bridge): name one on such nodes.
 *
 * Who may send (btl-adapters/btl_auth.h): an RDM endpoint takes a message from anyone who
 * has its name, and a provider over IP accepts connections from any process of the node
 * (tcp;ofi_rxm and sockets listen on a TCP port), so without more any local user could have
 * fragments delivered to the PML. Each module derives its own key from the job's key and
 * publishes a random nonce in its modex blob, new with every module; in add_procs a sender
 * computes, for each peer, a 16-byte token (an HMAC under the module key over both ranks,
 * the jobid and the peer's nonce) and writes it into every fragment's header, and the
 * receiver computes the token it expects from each sender. A completion is checked first
 * (length, sender rank, token in constant time, tag) and refused before it touches the
 * sender's sequence number or early list: its buffer is posted again, and a line is logged
 * the first time per claimed sender. The token is a bearer token, not a MAC of the fragment:
 * it keeps out whoever lacks the key (another user of the node, a rank of another run, or
 * one replaying a token made for a module from before a checkpoint), not whoever can read the
 * ranks' traffic, which on a node takes root (an unprivileged user cannot capture loopback
 * packets). A MAC of every fragment would also keep out that reader, but hashes every byte
 * sent and received: per fragment, more than the token's compare by the cost btl_auth.h
 * gives, which over shared memory is a large part of a small message's latency.
 *
 * Reachability (add_procs): a peer is reached when it published an ofi address, with the
 * same provider, and, if either address reaches only its own node, on the same node. An
 * address reaches only its node when the provider is shm (shared memory: the shm module
 * reaches only the ranks of its node) or the address is a loopback one (127.0.0.0/8,
 * ::1). Ranks of different nodes must use the same provider, on fabrics that route to
 * each other; nothing here can check the latter.
 *
 * Selection: exclusivity 4096, below self (65536) and sm (32768), above tcp (1024): with
 * `--mca btl self,sm,ofi` ranks of a node use sm and the others ofi; with `self,ofi`, ofi
 * carries every peer. When every rank of the job is on one node and the btl list does not
 * name ofi, the component declines in query: sm and self reach everyone, and opening a
 * fabric (loading libfabric, an endpoint, its sockets) would cost every MPI_Init and every
 * checkpoint for nothing. Named in the list, ofi is opened anyway, and its failures (no
 * libfabric, no usable provider) are errors instead of quiet verbose lines.
 *
 * The library (btl_ofi_lib.c): libfabric is loaded with dlopen at init and closed at
 * finalize, not linked. A node without libfabric still runs every other BTL, and after
 * finalize nothing of libfabric stays mapped (it maps a dozen libraries: ibverbs, psm2,
 * efa, ...). Only the handful of functions libfabric exports are looked up; the rest of its
 * API is inline calls through the ops tables of its objects. IPATH_NO_BACKTRACE is set
 * (unless the user set it) before loading: libfabric's libinfinipath would otherwise take
 * over SIGTERM and the crash signals for as long as it is loaded (btl_ofi_lib.c).
 *
 * Buffers: send buffers and receive buffers are two slabs of BTL_OFI_HDR_SIZE +
 * max_send_size bytes per buffer, page-aligned and registered with the domain (fi_mr_reg;
 * needed by providers with FI_MR_LOCAL, harmless for the others). A send takes a buffer
 * from the pool, or answers CRMPI_ERR_RESOURCE_BUSY when every one is in flight or the
 * provider's queue is full (-FI_EAGAIN); nothing is consumed then. Every receive buffer is
 * posted at init and re-posted once its fragment has been delivered. Memory per rank:
 * (btl_ofi_send_buffers + btl_ofi_recv_buffers) * (max_send_size + 64): 12 MiB by default
 * (16 and 32 buffers of 256 KiB). The pools are clamped to the provider's queue sizes
 * (tx_attr->size, rx_attr->size).
 *
 * Sizes: ofi_rxm sends a message up to 16 KiB from its own buffers, segments one up to
 * 128 KiB through them (SAR), and moves a larger one by rendezvous, the receiver reading
 * it straight from the sender's buffer into its own. Fragments of 256 KiB take that path:
 * NetPIPE measured about twice the bandwidth of 64 KiB fragments from 256 KiB to 2 MiB, on
 * the loopback interface; 512 KiB gained nothing more. The eager limit of 64 KiB spares
 * messages up to it the rendezvous round trip of the PML.
 *
 * Progress: one fi_cq_read per call, up to BTL_OFI_CQ_BATCH completions; it also drives the
 * provider (FI_PROGRESS_MANUAL is asked for: tcp;ofi_rxm moves data only inside it). When
 * no peer uses the module (the BML gave them all to sm or self) and no send is in flight,
 * progress returns at once.
 *
 * Placement (btl.h; btl_ofi_recv_place, off until measured against the copy): a fragment
 * of a tag with a placer, whose payload is at least CRMPI_BTL_PLACE_MIN, goes as two
 * messages towards a rank that published takes_placed: its payload as a tagged message
 * (fi_tsend, from the send buffer), then its header alone as the usual FI_MSG fragment with
 * BTL_OFI_HDR_ANNOUNCE and the payload's length, the "announce". When the announce's turn
 * comes in the sender's stream, the receiver asks the placer and posts a tagged receive of
 * exactly that length: into the placer's iov when the provider takes it as it is (at most
 * rx_attr->iov_limit pieces, no discarded tail), else into a malloc'ed buffer, copied into
 * the iov (or, declined, delivered with its header to the recv callback) at completion.
 * Over tcp;ofi_rxm a payload above 128 KiB moves by its rendezvous, not before its receive
 * is posted, and then into the posted buffer. The sender's later fragments wait
 * behind it ("Order": held like early ones), so the PML sees one fragment at a time per
 * peer, as over a stream. The tag is the pair's token folded with the sequence number
 * (btl_ofi_payload_tag): only a holder of the job's key can have a message matched to the
 * receive, and the length comes from the authenticated announce, never from the payload. A
 * payload longer than announced fails its receive (FI_ETRUNC) and the placement ends with
 * an error. The payload is sent first, so that an announce never names a payload not
 * sent; an announce the provider refuses then (-FI_EAGAIN) is sent again first thing in
 * progress, in order. Needs FI_TAGGED, asked for only when the parameter is on, and a
 * provider without FI_MR_LOCAL (placing into memory it never registered); ranks may differ.
 * A checkpoint never sees a payload in flight: each belongs to a rendezvous receive, which
 * the drain waits for (docs/design.md, "Placement").
 *
 * Checkpoint/restart: not CKPT_FRIENDLY. The endpoint holds sockets (tcp, sockets, udp),
 * shared-memory mappings (shm) and, with the sockets provider, two progress threads of
 * libfabric's own; CRIU can take none of them. Finalize (also how the BML releases the
 * module before a dump) waits for the sends in flight, closes endpoint, address vector,
 * completion queue, registrations, domain and fabric (which ends the sockets provider's
 * threads), frees the pools and closes the library: the process is back to the fds,
 * threads and mappings it had before init. After the dump, init runs again, with a new
 * endpoint name in a new modex. That costs libfabric's load and first fi_getinfo again
 * (0.4 to 0.6 s with Debian 12's 1.17: docs/design.md, "Platform facts the code relies
 * on"), the price of not carrying what libfabric learned of this node (its interfaces and
 * devices) into a restart on another one.
 *
 * Threading: as btl.h; every slot is called with the library lock held, so the domain is
 * opened with FI_THREAD_DOMAIN. No thread of our own (the sockets provider's, above, are
 * libfabric's). Receive callbacks run inside progress and may call send; progress guards
 * itself against re-entrance.
 */
#ifndef CRMPI_BTL_OFI_H
#define CRMPI_BTL_OFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include "btl.h"
#include "btl_auth.h"

/* Between sm (32768) and tcp (1024); ucx shares the band. */
#define BTL_OFI_EXCLUSIVITY 4096u
/* The modex key under which each rank publishes its endpoint's name. */
#define BTL_OFI_MODEX_KEY "btl.ofi"
/* "CROF": the first four bytes of the modex blob. */
#define BTL_OFI_MAGIC 0x43524f46u
/* Bumped whenever the modex blob or the fragment header change meaning (2: the nonce in the
 * blob, the token in the header). */
#define BTL_OFI_VERSION 2u
/* The libfabric API this code is written against (fi_getinfo's version argument). */
#define BTL_OFI_FI_VERSION FI_VERSION(1, 10)
/* Room for a provider's name in the modex ("tcp;ofi_rxm"). */
#define BTL_OFI_PROVIDER_MAX 48
/* Largest endpoint name accepted from fi_getname or a peer's modex. */
#define BTL_OFI_ADDR_MAX 256
/* Completions taken per fi_cq_read. */
#define BTL_OFI_CQ_BATCH 16
/* How long finalize waits for the sends in flight before it closes the endpoint anyway. */
#define BTL_OFI_FINALIZE_TIMEOUT_MS 10000
/* Buffers start on a page: the copies into and out of them are the large ones. */
#define BTL_OFI_PAGE 4096u
/* The tag bits a payload's tag uses ("Placement"): some providers keep the top ones. */
#define BTL_OFI_TAG_MASK (~0ull >> 8)

/* Before every fragment, inside the provider's message. 32 bytes, so that the fragment
 * that follows is 16-byte aligned in the (page-aligned) receive buffer. */
typedef struct btl_ofi_hdr {
    uint32_t sender_rank; /* the sending rank, in MPI_COMM_WORLD: FI_MSG carries no source */
    uint32_t seq;         /* per (sender, receiver), from 0: the delivery order */
    uint8_t tag;          /* the receive callback's tag (< CRMPI_BTL_TAG_MAX) */
    uint8_t flags;        /* BTL_OFI_HDR_* */
    uint16_t reserved;    /* zero */
    uint32_t payload_len; /* BTL_OFI_HDR_ANNOUNCE: bytes of payload sent by tag ("Placement") */
    uint8_t token[CRMPI_BTL_AUTH_TOKEN_LEN]; /* proves the job's key ("Who may send") */
} btl_ofi_hdr_t;

/* btl_ofi_hdr_t.flags */
enum {
    /* The message is the fragment's header only; its payload follows as a tagged message
     * ("Placement"). */
    BTL_OFI_HDR_ANNOUNCE = 1u << 0,
};

#define BTL_OFI_HDR_SIZE sizeof(btl_ofi_hdr_t)

/* The modex blob: this, then addr_len bytes of fi_getname. */
typedef struct btl_ofi_modex {
    uint32_t magic;                          /* BTL_OFI_MAGIC */
    uint16_t version;                        /* BTL_OFI_VERSION */
    uint16_t addr_len;                       /* bytes of endpoint name that follow */
    uint8_t node_local;                      /* 1: the address reaches only this node */
    uint8_t takes_placed;                    /* 1: send it large payloads by tag ("Placement") */
    uint8_t reserved[6];                     /* zero */
    char provider[BTL_OFI_PROVIDER_MAX];     /* the provider's name, NUL-terminated */
    uint8_t nonce[CRMPI_BTL_AUTH_NONCE_LEN]; /* the module's: covered by tokens to it */
} btl_ofi_modex_t;

/* The few functions libfabric exports (btl_ofi_lib.c); the rest of its API is inline. */
typedef struct btl_ofi_lib {
    void *handle; /* from dlopen */
    int (*getinfo)(uint32_t version, const char *node, const char *service, uint64_t flags,
                   const struct fi_info *hints, struct fi_info **info);
    void (*freeinfo)(struct fi_info *info);
    struct fi_info *(*dupinfo)(const struct fi_info *info);
    int (*fabric)(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
    const char *(*strerror)(int errnum);
    uint32_t (*version)(void);
} btl_ofi_lib_t;

/* What an operation's completion belongs to. */
typedef enum {
    BTL_OFI_OP_SEND,    /* a send buffer's message: back to the free list once it is done */
    BTL_OFI_OP_TSEND,   /* a send buffer's payload sent by tag ("Placement") */
    BTL_OFI_OP_RECV,    /* a receive buffer: delivered, then re-posted */
    BTL_OFI_OP_PAYLOAD, /* a payload received by tag: placed, or delivered with its header */
} btl_ofi_op_kind_t;

/* What libfabric's op_context points to: the first field of every operation's owner. */
typedef struct btl_ofi_op {
    struct fi_context2 ctx; /* first (FI_CONTEXT2 mode) */
    btl_ofi_op_kind_t kind; /* whose it is */
} btl_ofi_op_t;

/* One buffer of a pool. */
typedef struct btl_ofi_buf {
    btl_ofi_op_t op;          /* first: its message's operation (kind SEND or RECV) */
    btl_ofi_op_t tsend;       /* send: its payload sent by tag (kind TSEND), if announced */
    unsigned pending;         /* send: operations not completed yet (1, or 2 when announced) */
    bool failed;              /* send: one of them failed */
    uint32_t peer_rank;       /* send: the destination; receive: the sender, once arrived */
    fi_addr_t addr;           /* send: the destination's address */
    uint32_t seq;             /* receive: the fragment's sequence number, once arrived */
    size_t len;               /* bytes received (receive), or sent (send) */
    char *data;               /* BTL_OFI_HDR_SIZE + max_send_size bytes in the slab */
    struct btl_ofi_buf *next; /* free list (send), early arrivals or re-post list (receive) */
} btl_ofi_buf_t;

/* The payload of an announced fragment, received by tag ("Placement"); at most one per
 * sender at a time, since the sender's later fragments wait for it. */
typedef struct btl_ofi_payload {
    btl_ofi_op_t op;         /* first: the tagged receive (kind PAYLOAD) */
    uint8_t tag;             /* the fragment's crmpi tag */
    bool placing;            /* the placer took it: placed() follows, once */
    bool posted;             /* the receive is posted (else the provider was full: retried) */
    crmpi_btl_place_t place; /* the placer's answer */
    char *bounce;            /* NULL: received straight into place.iov; else malloc'ed: the
                              * header then the payload (declined: delivered whole), or the
                              * payload only (copied into place.iov at completion) */
    size_t hdr_len;          /* bytes of header at bounce (declined) */
    size_t payload_len;      /* bytes announced */
} btl_ofi_payload_t;

/* What this rank knows of one sender: the token its fragments carry, and their order. */
typedef struct btl_ofi_peer {
    uint8_t token[CRMPI_BTL_AUTH_TOKEN_LEN]; /* expected in its fragments (add_procs) */
    bool known;                              /* token is set: add_procs named the rank */
    bool receiving;                          /* payload is posted: the stream waits for it */
    uint32_t recv_seq;                       /* the sequence number to deliver next */
    btl_ofi_buf_t *early;      /* fragments that completed before their turn, by seq */
    btl_ofi_payload_t payload; /* the announced fragment being received, when receiving */
} btl_ofi_peer_t;

typedef struct btl_ofi_module btl_ofi_module_t;

/* This rank's way to one peer. */
struct crmpi_btl_endpoint {
    btl_ofi_module_t *module; /* the owner */
    uint32_t peer_rank;       /* in MPI_COMM_WORLD */
    fi_addr_t addr;           /* the peer's endpoint in the address vector */
    uint32_t send_seq;        /* the sequence number of the next fragment sent to it */
    bool failed;              /* a send to it failed (logged); later sends fail at once */
    bool announce;            /* large payloads to it go by tag ("Placement") */
    uint8_t token[CRMPI_BTL_AUTH_TOKEN_LEN]; /* in every fragment to it (its nonce's) */
};

/* What init read from the parameters (btl_ofi_info.c). */
typedef struct btl_ofi_settings {
    const char *library;  /* btl_ofi_library: what dlopen loads */
    const char *provider; /* btl_ofi_provider: "" chooses (btl_ofi_provider.c) */
    const char *domain;   /* btl_ofi_domain: "" takes the provider's first */
    bool required;        /* the btl list names ofi, or a provider or domain is set: what keeps
                           * ofi from running is an error, not a verbose line */
    size_t max_send_size; /* btl_ofi_max_send_size: largest hdr + payload of one send */
    size_t eager_limit;   /* btl_ofi_eager_limit, for the PML */
    size_t send_buffers;  /* btl_ofi_send_buffers: buffers in the send pool */
    size_t recv_buffers;  /* btl_ofi_recv_buffers: receive buffers kept posted */
    bool recv_place;      /* btl_ofi_recv_place: take large payloads by tag, placed */
} btl_ofi_settings_t;

struct btl_ofi_module {
    crmpi_btl_module_t super;         /* the slots; first, so the BML's pointer is ours */
    uint32_t my_rank;                 /* this rank, in MPI_COMM_WORLD */
    uint32_t job_size;                /* ranks in MPI_COMM_WORLD */
    uint32_t my_node;                 /* node id, for the node-local reachability rule */
    uint32_t *node_of_rank;           /* copy of the job's node ids, job_size entries */
    btl_ofi_lib_t lib;                /* libfabric, loaded for this module */
    struct fi_info *info;             /* the chosen provider, fabric and domain */
    struct fid_fabric *fabric;        /* opened from info */
    struct fid_domain *domain;        /* opened from info */
    struct fid_cq *cq;                /* send and receive completions */
    struct fid_av *av;                /* peers' endpoint names -> fi_addr_t */
    struct fid_ep *ep;                /* the RDM endpoint */
    struct fid_mr *send_mr;           /* registration of send_slab */
    struct fid_mr *recv_mr;           /* registration of recv_slab */
    void *send_desc;                  /* fi_mr_desc(send_mr), passed with every send */
    void *recv_desc;                  /* fi_mr_desc(recv_mr), passed with every receive */
    char addr[BTL_OFI_ADDR_MAX];      /* this endpoint's name (fi_getname) */
    size_t addr_len;                  /* bytes of addr */
    bool node_local;                  /* addr reaches only this node (shm, loopback) */
    size_t buf_size;                  /* bytes per buffer: BTL_OFI_HDR_SIZE + max_send_size */
    char *send_slab;                  /* num_send buffers of buf_size, page-aligned */
    char *recv_slab;                  /* num_recv buffers of buf_size, page-aligned */
    btl_ofi_buf_t *send_bufs;         /* num_send descriptors */
    btl_ofi_buf_t *recv_bufs;         /* num_recv descriptors */
    size_t num_send;                  /* buffers in the send pool */
    size_t num_recv;                  /* receive buffers */
    btl_ofi_buf_t *send_free;         /* send buffers not in flight */
    size_t num_sending;               /* send buffers in flight (awaiting their completion) */
    btl_ofi_buf_t *repost;            /* receive buffers the provider refused (-FI_EAGAIN) */
    crmpi_btl_auth_t auth;            /* module key and nonce; refusals said */
    crmpi_btl_endpoint_t **endpoints; /* by peer rank; NULL: not added, or deleted */
    btl_ofi_peer_t *peers;            /* by sender rank: delivery order */
    size_t num_live;                  /* endpoints added and not deleted */
    uint64_t num_early;               /* fragments that completed before their turn */
    bool in_progress;                 /* progress is running: a callback must not re-enter it */
    bool recv_place;                  /* takes payloads by tag (FI_TAGGED is open) */
    bool place_direct;                /* ... straight into the placer's iov: no FI_MR_LOCAL */
    size_t iov_limit;                 /* most iov entries of one tagged receive */
    btl_ofi_buf_t *announce_retry;    /* announces the provider refused after their payload
                                       * went (-FI_EAGAIN): sent again first in progress */
    size_t num_unposted;              /* payload receives the provider refused: retried */
    bool tagged;                      /* FI_TAGGED is open: payloads can go by tag */
    uint64_t num_payloads;            /* announced payloads received, placed or not */
    uint64_t placed_bytes;            /* payload bytes received straight into a placement */
    uint64_t place_copied_bytes;      /* ... received by tag, then copied (bounce) */
};

/* The buffer whose operation `op` is (kinds SEND, TSEND and RECV). */
static inline btl_ofi_buf_t *btl_ofi_op_buf(btl_ofi_op_t *op)
{
    if (op->kind == BTL_OFI_OP_TSEND)
        return (btl_ofi_buf_t *)((char *)op - offsetof(btl_ofi_buf_t, tsend));
    return (btl_ofi_buf_t *)op;
}

/* Does the module have anything to poll? False lets progress return at once. */
static inline bool btl_ofi_module_active(const btl_ofi_module_t *module)
{
    return module->num_live + module->num_sending != 0;
}

/* The library (btl_ofi_lib.c) */

/**
 * dlopen `name` and look up libfabric's exported functions.
 * @param loud  log a failure as an error (settings->required); else at verbose 10
 * @return CRMPI_OK; CRMPI_ERR_NOT_SUPPORTED (not found, too old: logged as above)
 */
int btl_ofi_lib_open(const char *name, bool loud, btl_ofi_lib_t *lib_out);
/** dlclose: libfabric's destructor runs and every library it pulled in is unmapped. */
void btl_ofi_lib_close(btl_ofi_lib_t *lib);

/* The provider (btl_ofi_provider.c) */

/**
 * Choose the provider, fabric and domain (btl_ofi.h, "Provider"), logging why each
 * provider considered is not used at btl_base_verbose 10.
 * @return CRMPI_OK with *info_out (free with lib->freeinfo); CRMPI_ERR_BAD_PARAM (a named
 *         provider that does not exist or cannot serve: logged); CRMPI_ERR_NOT_SUPPORTED
 *         (automatic choice, nothing usable: an error when settings->required, else
 *         verbose 10)
 */
int btl_ofi_provider_choose(const btl_ofi_lib_t *lib, const btl_ofi_settings_t *settings,
                            uint32_t my_rank, struct fi_info **info_out);
/** Does the endpoint name `addr` of provider `info` reach only its own node? */
bool btl_ofi_provider_node_local(const struct fi_info *info, const void *addr, size_t addr_len);

/* The module (btl_ofi_module.c) */

/**
 * Create the module: open the provider's objects, the pools, post the receives.
 * @param lib   loaded; the module owns it on CRMPI_OK only
 * @param info  chosen; the module owns it on CRMPI_OK only
 * @return CRMPI_OK, or an error (logged)
 */
int btl_ofi_module_create(const crmpi_rte_job_info_t *job, const btl_ofi_settings_t *settings,
                          btl_ofi_lib_t *lib, struct fi_info *info, btl_ofi_module_t **module_out);

/** "fi_send: Connection refused (-111)" from a libfabric status, for messages. */
const char *btl_ofi_strerror(const btl_ofi_module_t *module, int fi_status);

/* Endpoints and fragments (btl_ofi_endpoint.c) */

/** Encode this module's endpoint name for crmpi_rte_modex_publish (malloc'ed blob). */
int btl_ofi_modex_pack(const btl_ofi_module_t *module, void **blob_out, size_t *len_out);
/** Decode a peer's blob; CRMPI_ERR_PROTO (not logged) when it is malformed or another
 *  version (one without a nonce). *modex_out and *addr_out point into `blob`. */
int btl_ofi_modex_unpack(const void *blob, size_t len, const btl_ofi_modex_t **modex_out,
                         const void **addr_out);

/** The module's send slot (btl.h). */
int btl_ofi_endpoint_send(crmpi_btl_module_t *module, crmpi_btl_endpoint_t *ep, uint8_t tag,
                          const void *hdr, size_t hdr_len, crmpi_convertor_t *payload,
                          size_t payload_len);
/** A send buffer's completion: back to the pool; `failed` (the caller logged why) makes the
 *  destination's endpoint fail every later send. */
void btl_ofi_send_complete(btl_ofi_module_t *module, btl_ofi_buf_t *buf, bool failed);

/**
 * A receive buffer's completion: refuse it unless its header is whole, from a rank add_procs
 * named, with that rank's token and a valid tag (btl_ofi.h, "Who may send"); else deliver
 * it, and any fragment of the same sender that was waiting for it, in sequence ("Order");
 * re-post what was delivered or refused.
 * @param deliver  false: finalize; drop the fragment (nobody is listening any more)
 * @return fragments delivered
 */
int btl_ofi_recv_complete(btl_ofi_module_t *module, btl_ofi_buf_t *buf, size_t len, bool deliver);
/** Post a receive buffer, or keep it for the next progress when the provider is full. */
void btl_ofi_recv_post(btl_ofi_module_t *module, btl_ofi_buf_t *buf);

/** Send again the announces the provider refused, in order, until it refuses again. */
void btl_ofi_announce_retry(btl_ofi_module_t *module);
/** Post the tagged receive of `peer`'s announced payload; a refusal counts in num_unposted,
 *  for the next progress. */
void btl_ofi_payload_post(btl_ofi_module_t *module, btl_ofi_peer_t *peer);
/**
 * The tagged receive of an announced payload has ended (`status` CRMPI_OK with `len` bytes,
 * or an error, logged by the caller): tell the placer, or deliver header and payload to the
 * recv callback; then the sender's stream goes on.
 * @param deliver  false: finalize; the placer hears of an error, nothing is delivered
 * @return fragments delivered
 */
int btl_ofi_payload_complete(btl_ofi_module_t *module, btl_ofi_payload_t *pl, size_t len,
                             int status, bool deliver);

#endif /* CRMPI_BTL_OFI_H */
