/*
 * btl.h: the byte transfer layer, the contract between the BML/PML above and the
 * transports (self, sm, tcp, ofi, ucx) below (docs/design.md, "Layers inside a rank").
 *
 *        PML (matching, protocols)      -- knows MPI; owns headers and their meaning
 *          |  send(tag, hdr, payload)       ^ recv callback by tag (hdr + payload, in order)
 *        BML (per-peer choice of module)    |
 *          |                                |
 *        btl module: self | sm | tcp | ofi | ucx
 *                                       -- knows bytes and peers' world ranks, nothing of MPI
 *
 * Lifecycle (the BML drives it, in MPI_Init, MPI_Finalize and the C/R phases):
 *   component query (btl framework selection, by `--mca btl` and priority)
 *   -> component init: create the module, publish its modex data (crmpi_rte_modex_publish)
 *   -> [the BML runs one collective fence for every component]
 *   -> add_procs(every rank): look up the peers' modex data, say who is reachable
 *   -> [the BML runs a fence] -> connected (every peer has attached)
 *   -> send / progress / recv callbacks ... -> del_procs -> finalize
 *   C/R (pml/bml.h, inc/inc.h): before the dump, with every channel drained, the BML
 *   finalizes every module without CRMPI_BTL_FLAG_CKPT_FRIENDLY and keeps the friendly
 *   ones as they are; after it, the BML opens the released components again through the
 *   same selection, modex and fence as MPI_Init, for the same peers (continue). A restart
 *   finalizes every module and selects them all again for the new locality.
 *
 * Delivery guarantees every module gives: fragments to one peer arrive whole, exactly once,
 * and in the order they were sent; a fragment is delivered to the receive callback
 * registered for its tag, from inside the receiver's progress.
 *
 * Threading: every slot is called with the library lock held, from one thread at a time.
 * A module starts no thread of its own. A receive callback may call `send` on any endpoint
 * of any module (the PML answers rendezvous requests from inside it), but never progress.
 */
#ifndef CRMPI_BTL_H
#define CRMPI_BTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "convertor.h"
#include "rte.h"

typedef struct crmpi_btl_module crmpi_btl_module_t;
/* A module's view of one peer; opaque outside the module that made it. */
typedef struct crmpi_btl_endpoint crmpi_btl_endpoint_t;

/* Tags: which upper-layer callback receives a fragment. The PML owns the first range. */
enum {
    CRMPI_BTL_TAG_PML = 0,  /* first PML tag; the PML uses CRMPI_BTL_TAG_PML + its types */
    CRMPI_BTL_TAG_MAX = 32, /* tags are < CRMPI_BTL_TAG_MAX */
};

/* Flags of a module (crmpi_btl_module_t.flags). */
enum {
    /* Nothing to release before CRIU dumps the process: the module's state is plain memory
     * CRIU restores as it was. Decided per module with the checkpoint stack; the header of
     * each adapter says why. Without it, quiesce must release every fd, thread and
     * mapping the module holds. */
    CRMPI_BTL_FLAG_CKPT_FRIENDLY = 1u << 0,
    /* The module places large payloads (see "Placement" below): for a tag with a place
     * callback, it asks where a payload goes before receiving it, and writes it there
     * instead of into a buffer of its own. */
    CRMPI_BTL_FLAG_RECV_PLACE = 1u << 1,
};

/**
 * Receive callback for one tag.
 * @param module     the module the fragment came through
 * @param peer_rank  the sender's rank in MPI_COMM_WORLD
 * @param data       header and payload, exactly the bytes the sender's send gave
 *                   (hdr_len bytes of header, then the packed payload), contiguous;
 *                   valid only until the callback returns (it may point into a shared
 *                   FIFO or a socket buffer): copy what must outlive it
 * @param len        bytes at data
 */
typedef void (*crmpi_btl_recv_fn_t)(crmpi_btl_module_t *module, uint32_t peer_rank,
                                    const void *data, size_t len);

/**
 * Register the callback of `tag` (one per tag, for every module). Done by the PML before
 * any module is initialised.
 * @return CRMPI_OK, CRMPI_ERR_BAD_PARAM (tag out of range), CRMPI_ERR_EXISTS (taken).
 */
int crmpi_btl_register_recv(uint8_t tag, crmpi_btl_recv_fn_t fn);

/** The callback of `tag`, or NULL. Modules call this on every arrival (an array lookup). */
extern crmpi_btl_recv_fn_t crmpi_btl_recv_table[CRMPI_BTL_TAG_MAX];

/*
 * Placement: the receiver names a payload's destination (the rendezvous data phase).
 *
 *   sender                        receiving module                      PML (place/done)
 *   FRAG{req, off} + payload -->  frame starts: header in hand  ------> place(hdr): checks
 *                                                                       req and off against
 *                                 <------ iov over the user's buffer -- its own request
 *                                 payload read straight into iov
 *                                 (readv; nothing in between)   ------> done(cookie, OK)
 *
 * The upper layer registers, per tag, the length of its header and a place callback; a
 * module with CRMPI_BTL_FLAG_RECV_PLACE calls it for every fragment of that tag whose
 * payload is at least CRMPI_BTL_PLACE_MIN bytes, as soon as it has the header (the payload
 * may not have arrived). The callback answers with where the payload's bytes go, in
 * stream order: the iov entries, then `discard` bytes to read and drop (a truncated
 * receive). The module then writes the payload there and calls done instead of the recv
 * callback. A callback that declines (the fragment names nothing it expects, or the
 * destination needs more than CRMPI_BTL_PLACE_IOV_MAX pieces) leaves the fragment to the
 * recv callback as before, so placement never changes what arrives, only where.
 *
 * Rules that keep it safe: the iov comes from the receiver's own request, never from the
 * wire (the header is only a key that the PML validates); done runs exactly once for each
 * accepted placement, from inside progress, with CRMPI_OK when every byte is in place, or
 * with an error when the connection died or the module was finalized first (the payload
 * is then incomplete: the upper layer forgets the placement as if the fragment had never
 * come). Until done, the destination must stay valid: the PML keeps the request active.
 *
 * How transports fill it: tcp reads the header, then readv()s the payload into the iov
 * (btl_tcp_conn.c); ofi has the payload sent as a tagged message behind the header, and
 * posts its tagged receive into the iov, done from the completion queue (btl_ofi.h); ucx
 * has it sent by UCP's rendezvous, the header in the active message's, and calls
 * ucp_am_recv_data_nbx() with the iov, done from its completion (btl_ucx.h).
 * Modules without the flag never call place: everything reaches the recv callback.
 */
enum {
    CRMPI_BTL_PLACE_IOV_MAX = 16,    /* destinations one placement may name */
    CRMPI_BTL_PLACE_MIN = 16 * 1024, /* smaller payloads are copied: the copy is cheaper
                                      * than the extra round of calls */
};

/* Where a payload goes; filled by a place callback. */
typedef struct crmpi_btl_place {
    struct iovec iov[CRMPI_BTL_PLACE_IOV_MAX]; /* destinations, in stream order */
    int iovcnt;                                /* entries used in iov (0 when all is dropped) */
    size_t discard;                            /* payload bytes after the iov: read, dropped */
    void *cookie;                              /* handed back to done */
} crmpi_btl_place_t;

/**
 * Place callback for one tag.
 * @param hdr          the fragment's first hdr_len bytes (the registered length): the
 *                     upper layer's header, valid only during the call
 * @param payload_len  bytes that follow the header
 * @param place_out    filled on true: iov lengths plus discard add up to payload_len
 * @return true: the module places the payload and calls done once; false: declined, the
 *         fragment goes to the recv callback whole (place_out unused)
 */
typedef bool (*crmpi_btl_place_fn_t)(crmpi_btl_module_t *module, uint32_t peer_rank,
                                     const void *hdr, size_t payload_len,
                                     crmpi_btl_place_t *place_out);

/**
 * A placement has ended.
 * @param cookie  place_out->cookie
 * @param status  CRMPI_OK: every payload byte is in place; an error: the payload did not
 *                all arrive (connection lost, module finalized), and will not
 */
typedef void (*crmpi_btl_placed_fn_t)(crmpi_btl_module_t *module, uint32_t peer_rank, void *cookie,
                                      int status);

typedef struct crmpi_btl_placer {
    size_t hdr_len;               /* bytes of header before the payload; 0: no placer */
    crmpi_btl_place_fn_t place;   /* where the payload goes */
    crmpi_btl_placed_fn_t placed; /* it is there (or will not be) */
} crmpi_btl_placer_t;

/**
 * Register the placer of `tag` (optional; a tag without one is always delivered whole).
 * Done by the PML before any module is initialised, after crmpi_btl_register_recv.
 * @return CRMPI_OK, CRMPI_ERR_BAD_PARAM (tag out of range, hdr_len 0, a NULL function),
 *         CRMPI_ERR_EXISTS (taken by another).
 */
int crmpi_btl_register_place(uint8_t tag, size_t hdr_len, crmpi_btl_place_fn_t place,
                             crmpi_btl_placed_fn_t placed);

/** The placers by tag (hdr_len 0: none). Modules read this on every large arrival. */
extern crmpi_btl_placer_t crmpi_btl_place_table[CRMPI_BTL_TAG_MAX];

/** Does a placer's answer describe exactly `payload_len` bytes, in at most
 *  CRMPI_BTL_PLACE_IOV_MAX pieces? (Modules check before they write.) */
bool crmpi_btl_place_valid(const crmpi_btl_place_t *place, size_t payload_len);

/** Copy a payload that `place` (valid) describes from `payload` into its iov, dropping the
 *  discarded tail: for a module that received it into a buffer of its own. */
void crmpi_btl_place_copy(const crmpi_btl_place_t *place, const void *payload);

/* Each module's slots. Optional slots may be NULL where the comment says so. */
struct crmpi_btl_module {
    const char *name;     /* the component's name: "sm"; for messages */
    uint32_t exclusivity; /* per peer, the BML uses only the reaching modules of the
                           * highest exclusivity (self > sm > tcp) */
    uint32_t priority;    /* among equal exclusivity, higher goes first */
    uint32_t flags;       /* CRMPI_BTL_FLAG_* */
    size_t max_send_size; /* largest hdr_len + payload_len one send accepts */
    size_t eager_limit;   /* largest message the PML sends without a rendezvous (payload
                           * bytes); its own default, btl_<name>_eager_limit */

    /**
     * Learn about peers: look up each one's modex data and decide whether this module can
     * reach it.
     * @param nprocs         entries in peer_ranks and endpoints_out
     * @param peer_ranks     ranks in MPI_COMM_WORLD (this rank may be among them)
     * @param endpoints_out  filled per peer: the endpoint, or NULL when unreachable
     * @return CRMPI_OK (even if nobody is reachable), or an error (the module is unusable)
     */
    int (*add_procs)(crmpi_btl_module_t *module, size_t nprocs, const uint32_t *peer_ranks,
                     crmpi_btl_endpoint_t **endpoints_out);

    /**
     * Forget peers the BML will not use through this module (or at finalize). The module
     * closes their connections and stops polling for them.
     */
    int (*del_procs)(crmpi_btl_module_t *module, size_t nprocs, const uint32_t *peer_ranks,
                     crmpi_btl_endpoint_t **endpoints);

    /**
     * Send one fragment: hdr_len bytes of header, then payload_len bytes packed from
     * `payload` (crmpi_convertor_pack, which advances it), delivered to the peer's callback
     * for `tag` as one contiguous block.
     * @param payload  NULL when payload_len is 0
     * @return CRMPI_OK: the fragment is on its way, and both hdr and the payload's buffer
     *         may be reused at once (the module copied what it still needs);
     *         CRMPI_ERR_RESOURCE_BUSY: no room now; nothing was consumed (the convertor did
     *         not move); try again after progress;
     *         any other error: the endpoint is unusable (peer gone), already logged.
     * Precondition: hdr_len + payload_len <= max_send_size.
     */
    int (*send)(crmpi_btl_module_t *module, crmpi_btl_endpoint_t *endpoint, uint8_t tag,
                const void *hdr, size_t hdr_len, crmpi_convertor_t *payload, size_t payload_len);

    /**
     * Deliver what arrived and push out what is queued.
     * @return the number of fragments delivered or sent (0: nothing happened)
     */
    int (*progress)(crmpi_btl_module_t *module);

    /**
     * Optional (NULL: nothing to do). Every rank of the job has run add_procs on its
     * modules (the BML calls this after a fence that follows them): whatever the module
     * published only so that peers could attach to it (a shared segment's name) can go
     * now, so that nothing of the job outlives it if it is killed.
     */
    void (*connected)(crmpi_btl_module_t *module);

    /**
     * Release everything: every fd, mapping, shared segment and thread the module holds;
     * the module is freed. Also how a module that is not CKPT_FRIENDLY is released before a
     * checkpoint's dump (every channel drained then), after which the component's init
     * creates it again.
     */
    int (*finalize)(crmpi_btl_module_t *module);
};

/*
 * A component: what the btl framework's selection returns in crmpi_component_t.ops.
 */
typedef struct crmpi_btl_component_ops {
    /**
     * Create this component's module for this rank and publish its modex data.
     * @return CRMPI_OK with *module_out set; CRMPI_ERR_NOT_SUPPORTED when the component
     *         cannot run here (it logs why at btl_base_verbose >= 10, and the BML goes on
     *         without it); any other error is fatal to MPI_Init and is logged.
     */
    int (*init)(const crmpi_rte_job_info_t *job, crmpi_btl_module_t **module_out);
} crmpi_btl_component_ops_t;

/* The btl framework (the BML opens it). */
#include "component.h"
extern crmpi_framework_t crmpi_btl_framework;

#endif /* CRMPI_BTL_H */
