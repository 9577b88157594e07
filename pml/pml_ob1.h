/*
 * pml_ob1.h: internals of the ob1 PML (pml.h): wire headers, matching state, queues.
 *
 * Protocols (every fragment is one BTL send; the BTL tag says which header it starts with):
 *
 *   eager (standard/ready/buffered, length <= eager limit):
 *       MATCH{ctx, src, tag, seq} + data                      sender done at once
 *   rendezvous (longer, or any synchronous send):
 *       RNDV{match, length, send_req} + first data      -->
 *                                                       <--   ACK{send_req, recv_req}
 *       FRAG{recv_req, offset} + data ... (pipelined)   -->   sender done when all is out
 *
 * The receiver sends ACK only when the RNDV matched a receive, so a synchronous send
 * completes exactly when its receive has matched (MPI-3.1 section 3.4).
 *
 *   cancel of a send whose MATCH or RNDV has left (MPI_Cancel):
 *       CANCEL{send_req, match}                         -->   unmatched: dropped
 *                                                       <--   CANCEL_REPLY{send_req, cancelled}
 *
 * The receiver drops the message only while no receive, matched probe or checkpoint pull has
 * taken it, so "cancelled" means that it will never be received and "not cancelled" that
 * the send completes normally (MPI-3.1 section 3.8.4). A dropped message still counts as
 * sent and arrived (it used its sequence number on both sides): the bookmarks stay equal.
 *
 * Ordering: each sender numbers its MATCH and RNDV fragments per destination (all
 * communicators together); a receiver matches them strictly in that order, holding early
 * arrivals aside. Together with MPI's matching rules this gives non-overtaking per (source,
 * communicator) whatever the BTLs do (MPI-3.1 section 3.5).
 */
#ifndef CRMPI_PML_OB1_H
#define CRMPI_PML_OB1_H

#include <stdbool.h>
#include <stdint.h>

#include "bml.h"
#include "pml.h"

/* BTL tags of the PML's fragment types. */
enum {
    PML_OB1_TAG_MATCH = CRMPI_BTL_TAG_PML,
    PML_OB1_TAG_RNDV,
    PML_OB1_TAG_ACK,
    PML_OB1_TAG_FRAG,
    PML_OB1_TAG_CANCEL,
    PML_OB1_TAG_CANCEL_REPLY,
};

/* Matching part of MATCH and RNDV. */
typedef struct pml_ob1_match_hdr {
    uint32_t ctx; /* communicator's context id */
    int32_t src;  /* sender's rank in that communicator */
    int32_t tag;  /* MPI tag */
    uint32_t seq; /* per (sender, receiver) sequence number */
} pml_ob1_match_hdr_t;

typedef struct pml_ob1_rndv_hdr {
    pml_ob1_match_hdr_t match; /* as for eager */
    uint64_t msg_len;          /* bytes of the whole message */
    uint64_t send_req;         /* the sender's request, echoed in ACK */
} pml_ob1_rndv_hdr_t;

typedef struct pml_ob1_ack_hdr {
    uint64_t send_req; /* the sender's request */
    uint64_t recv_req; /* the receiver's request, named in every FRAG */
    uint64_t offset;   /* bytes the receiver already has (the RNDV's data) */
} pml_ob1_ack_hdr_t;

typedef struct pml_ob1_frag_hdr {
    uint64_t recv_req; /* the receiving request */
    uint64_t offset;   /* position of this data in the message */
} pml_ob1_frag_hdr_t;

typedef struct pml_ob1_cancel_hdr {
    uint64_t send_req;         /* the sender's request, echoed in CANCEL_REPLY */
    pml_ob1_match_hdr_t match; /* the message: its context, source and seq find it */
} pml_ob1_cancel_hdr_t;

typedef struct pml_ob1_cancel_reply_hdr {
    uint64_t send_req;  /* the sender's request */
    uint32_t cancelled; /* 1: the message was dropped; 0: it is (or will be) received */
    uint32_t pad;       /* zero */
} pml_ob1_cancel_reply_hdr_t;

/*
 * A message that arrived before its receive was posted (the unexpected queue), or that a
 * matched probe took out of matching (MPI_Message). For a rendezvous it holds the RNDV
 * header and the data that came with it; the rest stays with the sender until ACK.
 */
struct crmpi_message_s {
    struct crmpi_message_s *next; /* in its queue, arrival order */
    struct crmpi_message_s *prev; /* ditto */
    bool rndv;                    /* a rendezvous (send_req and msg_len are valid) */
    uint32_t src_world;           /* sender's rank in MPI_COMM_WORLD */
    pml_ob1_match_hdr_t match;    /* context, source, tag, seq */
    uint64_t arrival;             /* arrival order across sources (ANY_SOURCE) */
    uint64_t msg_len;             /* bytes of the whole message */
    uint64_t send_req;            /* rendezvous: the sender's request */
    size_t data_len;              /* bytes in data */
    char *pulled;                 /* C/R drain: the whole message, msg_len bytes, once pulled
                                     without a receive (pml_ob1_cr.c); NULL otherwise. While
                                     the pull receives (rndv still set), the message waits: */
    crmpi_request_t *taker;       /* the receive that took it meanwhile, or NULL */
    bool dropped;                 /* freed meanwhile (pml_ob1_msg_free): the pull frees it */
    bool cancelled;               /* early arrival whose sender cancelled it: dropped when
                                     its turn to match comes (its seq still counts) */
    char data[];                  /* the data that came with the header */
};
typedef struct crmpi_message_s pml_ob1_msg_t;

/* A doubly linked queue of messages. */
typedef struct pml_ob1_msg_queue {
    pml_ob1_msg_t *head; /* oldest */
    pml_ob1_msg_t *tail; /* newest */
} pml_ob1_msg_queue_t;

/* A doubly linked queue of requests (crmpi_request_s.next/prev). */
typedef struct pml_ob1_req_queue {
    crmpi_request_t *head; /* first in */
    crmpi_request_t *tail; /* last in */
} pml_ob1_req_queue_t;

/* Which queue a request is on (crmpi_request_s.queue). */
enum {
    PML_OB1_QUEUE_NONE = 0,
    PML_OB1_QUEUE_POSTED,     /* a receive waiting for a message */
    PML_OB1_QUEUE_SEND_START, /* a send whose first fragment the BTL refused (busy) */
    PML_OB1_QUEUE_SEND_FRAGS, /* an acknowledged rendezvous with data left to push */
    PML_OB1_QUEUE_HELD,       /* a send posted while a checkpoint holds new sends */
};

/* Where the cancel of a send stands (crmpi_request_s.cancel_state). */
enum {
    PML_OB1_CANCEL_NONE = 0,
    PML_OB1_CANCEL_ASKED,   /* asked while its first fragment waited for the BTL: CANCEL
                               goes right after that fragment, never before it */
    PML_OB1_CANCEL_WAITING, /* CANCEL sent: completion waits for CANCEL_REPLY */
};

/*
 * A communicator (crmpi_pml_comm_t of pml.h): what crmpi_pml_add_comm was told, its live
 * requests, and its matching state.
 */
struct crmpi_pml_comm {
    uint32_t ctx;                    /* context id */
    int rank;                        /* this process's rank in it (its local group): the
                                        source rank its messages carry */
    int size;                        /* ranks its sends and receives name: its own group's,
                                        or an intercommunicator's remote group's (pml.h) */
    uint32_t *world_ranks;           /* world rank of each of them (our copy), `size`
                                        entries */
    const char *name;                /* the caller's name for it, for log lines */
    MPI_Comm owner;                  /* the MPI layer's handle, copied into its requests */
    int live_requests;               /* allocated and not yet released (pml.h) */
    bool release_pending;            /* crmpi_pml_comm_release said no: call the idle
                                        function when live_requests drops to 0 */
    bool deleted;                    /* crmpi_pml_del_comm ran while sends were still live
                                        (MPI_Finalize): free it when the last is released */
    pml_ob1_req_queue_t posted_any;  /* posted MPI_ANY_SOURCE receives */
    pml_ob1_req_queue_t *posted;     /* posted receives per source rank */
    pml_ob1_msg_queue_t *unexpected; /* unexpected messages per source rank */
    size_t num_unexpected;           /* messages over all sources (fast empty test) */
};
typedef struct crmpi_pml_comm pml_ob1_comm_t;

/* A control fragment (ACK, CANCEL, CANCEL_REPLY) the BTL refused; sent again from
 * progress, in order. */
typedef struct pml_ob1_pending_ctl {
    struct pml_ob1_pending_ctl *next; /* FIFO */
    uint32_t peer_world;              /* destination */
    uint8_t tag;                      /* its BTL tag */
    size_t len;                       /* bytes of hdr */
    union {
        pml_ob1_ack_hdr_t ack;
        pml_ob1_cancel_hdr_t cancel;
        pml_ob1_cancel_reply_hdr_t reply;
    } hdr; /* the header to send */
} pml_ob1_pending_ctl_t;

/* Per peer (rank in MPI_COMM_WORLD). */
typedef struct pml_ob1_peer {
    uint32_t send_seq;              /* next sequence number to this peer */
    uint32_t recv_seq;              /* next sequence number expected from it */
    pml_ob1_msg_t *early;           /* arrivals ahead of recv_seq, sorted by seq */
    pml_ob1_req_queue_t send_start; /* sends waiting to hand their first fragment over */
    size_t eager_limit;             /* largest eager message to this peer */
    size_t max_payload_rndv;        /* data bytes that fit in a RNDV fragment */
    size_t max_payload_frag;        /* data bytes that fit in a FRAG fragment */
} pml_ob1_peer_t;

/*
 * A request another rank may name in a fragment (a rendezvous send awaiting its ACK, a
 * receive awaiting FRAGs). The wire carries its id, (generation << 32) | (slot + 1), never
 * its address: a fragment naming a slot that is free, reused or another peer's finds
 * nothing, and is dropped instead of being followed into memory.
 */
typedef struct pml_ob1_wire_slot {
    crmpi_request_t *req; /* NULL: free */
    uint32_t generation;  /* bumped whenever the slot is freed */
    uint32_t peer_world;  /* the only rank whose fragments may name it */
    uint32_t next_free;   /* free: the next free slot + 1, 0 at the end */
} pml_ob1_wire_slot_t;

/* Process-wide state. */
typedef struct pml_ob1_state {
    pml_ob1_peer_t *peers;            /* per world rank */
    uint32_t num_peers;               /* world size */
    pml_ob1_comm_t **comms;           /* by context id; NULL where none */
    uint32_t num_comms;               /* entries in comms */
    pml_ob1_msg_queue_t orphans;      /* messages for contexts not created here yet */
    pml_ob1_req_queue_t send_frags;   /* rendezvous sends with data left to push */
    pml_ob1_pending_ctl_t *ctl_head;  /* control fragments waiting for the BTL */
    pml_ob1_pending_ctl_t **ctl_tail; /* where the next one goes */
    size_t sends_waiting;             /* requests on send_start queues */
    size_t active_sends;              /* send requests not yet complete */
    uint64_t post_counter;            /* posting order of receives */
    uint64_t arrival_counter;         /* arrival order of unexpected messages */
    crmpi_request_t *free_requests;   /* recycled requests */
    pml_ob1_wire_slot_t *wire_slots;  /* requests the wire may name (pml_ob1_request.c) */
    uint32_t num_wire_slots;          /* entries in wire_slots */
    uint32_t free_wire_slot;          /* first free slot + 1, chained through `next_free` */
    bool yield_when_idle;             /* more ranks than cores here: yield while waiting */
    size_t rndv_recvs;                /* matched rendezvous receives still getting data */
    pml_ob1_msg_queue_t probed;       /* messages taken by matched probes, not received yet */
    /* Checkpoint (pml_ob1_cr.c) */
    bool cr_quiescing;             /* new sends are held; rendezvous arrivals are pulled */
    size_t cr_pulls;               /* pulls still receiving data */
    pml_ob1_req_queue_t cr_held;   /* sends posted while quiescing, in posting order */
    crmpi_pml_cr_stats_t cr_stats; /* what the current or last quiesce did */
} pml_ob1_state_t;

extern pml_ob1_state_t pml_ob1;

/* Communicators (pml_ob1.c) */
/** The last live request of a communicator released or deleted was released. */
void pml_ob1_comm_idle(pml_ob1_comm_t *pcomm);

/* A request on pcomm is released (pml.h: live requests). */
static inline void pml_ob1_comm_request_ended(pml_ob1_comm_t *pcomm)
{
    if (--pcomm->live_requests == 0 && (pcomm->release_pending || pcomm->deleted))
        pml_ob1_comm_idle(pcomm);
}

/* Requests (pml_ob1_request.c) */
/** A request on comm (NULL: the PML's own, owned by no communicator), live on it. */
crmpi_request_t *pml_ob1_request_alloc(crmpi_request_kind_t kind, pml_ob1_comm_t *comm);
void pml_ob1_request_release(crmpi_request_t *req);
/** Fill a request's arguments (a reference on the datatype is held until release). */
void pml_ob1_request_set_args(crmpi_request_t *req, const void *buf, size_t count,
                              MPI_Datatype type, int peer, int tag);
/** Mark complete; runs done_fn, frees it if free_when_complete. */
void pml_ob1_request_complete(crmpi_request_t *req);
/**
 * The id under which `peer_world` may name `req` in its fragments (the same one each time
 * until the request completes or is released). @return the id, or 0 when out of memory.
 */
uint64_t pml_ob1_request_wire_name(crmpi_request_t *req, uint32_t peer_world);
/** The request `id` names, if `peer_world` may name it and it is of `kind`; else NULL. */
crmpi_request_t *pml_ob1_request_wire_find(uint64_t id, uint32_t peer_world,
                                           crmpi_request_kind_t kind);

/* Queues (pml_ob1_recv.c) */
void pml_ob1_req_queue_append(pml_ob1_req_queue_t *q, crmpi_request_t *req, int which);
void pml_ob1_req_queue_remove(pml_ob1_req_queue_t *q, crmpi_request_t *req);

/* Sends (pml_ob1_send.c) */
int pml_ob1_send_start(crmpi_request_t *req);
/** Push queued sends and acknowledgements; returns the events. */
int pml_ob1_send_progress(void);
/** Send (or queue) the ACK of a matched rendezvous. */
void pml_ob1_send_ack(uint32_t peer_world, uint64_t send_req, uint64_t recv_req, uint64_t offset);
/** Send (or queue) a control fragment, after every control fragment queued before it. */
void pml_ob1_send_ctl(uint32_t peer_world, uint8_t tag, const void *hdr, size_t len);
/** Ask the receiver of a send whose first fragment has left to drop it (CANCEL). */
void pml_ob1_send_cancel(crmpi_request_t *req);
void pml_ob1_recv_cb_cancel(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data,
                            size_t len);
void pml_ob1_recv_cb_cancel_reply(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data,
                                  size_t len);

/* Receives (pml_ob1_recv.c) */
int pml_ob1_recv_start(crmpi_request_t *req);
/** Give a matched message to a receive request: data, ACK, completion. Frees msg. */
void pml_ob1_recv_take_message(crmpi_request_t *req, pml_ob1_msg_t *msg);
void pml_ob1_recv_cb_match(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data,
                           size_t len);
void pml_ob1_recv_cb_rndv(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data,
                          size_t len);
void pml_ob1_recv_cb_ack(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data,
                         size_t len);
void pml_ob1_recv_cb_frag(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data,
                          size_t len);
/* Placement of a non-contiguous receive: smallest average piece worth a scatter. */
#define PML_OB1_PLACE_MIN_PIECE 4096u
/** The FRAG placer (btl.h, "Placement"): where a FRAG's payload goes in its receive. */
bool pml_ob1_recv_place_frag(crmpi_btl_module_t *module, uint32_t peer_rank, const void *hdr,
                             size_t payload_len, crmpi_btl_place_t *place_out);
void pml_ob1_recv_placed_frag(crmpi_btl_module_t *module, uint32_t peer_rank, void *cookie,
                              int status);
/** Move orphans of a new communicator into its unexpected queues. */
void pml_ob1_recv_adopt_orphans(pml_ob1_comm_t *pcomm);
void pml_ob1_msg_queue_append(pml_ob1_msg_queue_t *q, pml_ob1_msg_t *msg);
void pml_ob1_msg_queue_remove(pml_ob1_msg_queue_t *q, pml_ob1_msg_t *msg);
/** Free a message that will never be received (and its pulled data). */
void pml_ob1_msg_free(pml_ob1_msg_t *msg);

/* Checkpoint (pml_ob1_cr.c) */
/** Quiescing: pull the whole of a rendezvous message that reached matching without a
 *  receive, so that its sender completes. */
void pml_ob1_cr_pull(pml_ob1_msg_t *msg);

/* The world rank of the process `rank` names in `comm` (a remote rank for an
 * intercommunicator). */
static inline uint32_t pml_ob1_world_rank(const pml_ob1_comm_t *comm, int rank)
{
    return comm->world_ranks[rank];
}

#endif /* CRMPI_PML_OB1_H */
