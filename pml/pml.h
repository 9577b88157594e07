/*
 * pml.h: the point-to-point messaging layer, the contract between the MPI calls of mpi/
 * (and the collectives of coll/) and MPI matching, ordering and protocols. Component
 * "ob1", after Open MPI's.
 *
 *   MPI_Send/Recv/Probe/Wait... (mpi/)      -- arguments, error handlers, request arrays,
 *   collective schedules (coll/)               the MPI communicator (its PML communicator
 *        |   crmpi_pml_*                       and owner handle are all the PML sees)
 *        |                                  crcp: crmpi_pml_cr_* during a checkpoint
 *   pml ob1                                 -- communicators' matching state, sequence
 *        |                                     numbers, eager and rendezvous, requests and
 *        |                                     their completion, live requests per
 *        |                                     communicator
 *   bml -> btl self | sm | tcp
 *
 * The PML knows nothing of the MPI layer's objects: a communicator is a crmpi_pml_comm_t
 * that crmpi_pml_add_comm made from the facts the PML needs (context id, rank, size, the
 * map to ranks of MPI_COMM_WORLD, and for an intercommunicator its remote group), and the
 * MPI communicator it belongs to is an opaque owner handle that the PML stores and hands
 * back, never dereferences.
 *
 * Lifecycle: crmpi_pml_set_comm_idle_fn (once) -> crmpi_pml_init (in MPI_Init, after the
 * rte: opens the BML and BTLs, exchanges the modex) -> crmpi_pml_add_comm for every
 * communicator, MPI_COMM_WORLD and MPI_COMM_SELF first (the MPI layer adds them) ->
 * crmpi_pml_comm_release when MPI_Comm_free is called -> crmpi_pml_del_comm -> ...
 * crmpi_pml_del_comm of MPI_COMM_WORLD and MPI_COMM_SELF -> crmpi_pml_finalize (in
 * MPI_Finalize).
 *
 * Threading: every function here is called with the library lock held. Nothing blocks:
 * blocking MPI calls loop over crmpi_progress() until the request is complete, dropping
 * the lock between iterations (crmpi_pml_wait does exactly that).
 *
 * Requests: the PML allocates them (crmpi_pml_isend, ...) and frees them
 * (crmpi_pml_request_finish ...). A request is `complete` once its data has moved (or it
 * was cancelled); its status is final then. Each request counts as live on its
 * communicator from its allocation to its release, which is what lets MPI_Comm_free
 * leave pending operations to complete (MPI-3.1 section 6.4.3): see "Communicators".
 */
#ifndef CRMPI_PML_H
#define CRMPI_PML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "convertor.h"
#include "mpi.h"

/* A communicator as the PML knows it (made by crmpi_pml_add_comm; opaque above the PML). */
typedef struct crmpi_pml_comm crmpi_pml_comm_t;

/* Send modes (MPI-3.1 section 3.4). */
typedef enum {
    CRMPI_PML_SEND_STANDARD,    /* eager below the limit, rendezvous above */
    CRMPI_PML_SEND_SYNCHRONOUS, /* completes once the receive matched (always rendezvous) */
    CRMPI_PML_SEND_READY,       /* as standard: the receive is posted, so nothing is gained here */
    CRMPI_PML_SEND_BUFFERED,    /* from the mpi/ layer's attached buffer: as standard */
} crmpi_pml_send_mode_t;

typedef enum {
    CRMPI_REQUEST_SEND,
    CRMPI_REQUEST_RECV,
    CRMPI_REQUEST_COLL, /* a non-blocking collective: made, progressed and freed by coll/ */
} crmpi_request_kind_t;

/* Value of crmpi_request_s.magic while the request exists (catches a freed handle). */
#define CRMPI_REQUEST_MAGIC 0x52455155u /* "REQU" */

typedef struct crmpi_request_s crmpi_request_t;
/* Called once when a request completes (the mpi/ layer's bsend releases its buffer). */
typedef void (*crmpi_request_done_fn_t)(crmpi_request_t *req);

/*
 * A request. The fields above the line are read by mpi/ (and set by whoever makes the
 * request: the PML, or coll/ for its own kind); the rest belong to the PML.
 */
struct crmpi_request_s {
    uint32_t magic;                  /* CRMPI_REQUEST_MAGIC; 0 once freed */
    crmpi_request_kind_t kind;       /* send or receive */
    volatile bool complete;          /* data moved, or cancelled; status is final */
    bool persistent;                 /* made by *_init: inactive until started, then reusable */
    bool active;                     /* persistent: started and not yet completed by wait/test */
    bool free_when_complete;         /* MPI_Request_free on an active request: free it when done */
    MPI_Status status;               /* MPI_SOURCE, MPI_TAG, MPI_ERROR, cancelled, bytes */
    MPI_Comm owner;                  /* the MPI communicator its errors are raised on: the
                                        owner its PML communicator was added with, copied at
                                        allocation; MPI_COMM_NULL for the PML's own */
    crmpi_request_done_fn_t done_fn; /* NULL, or called at completion (before any free) */
    void *done_arg;                  /* for done_fn */
    crmpi_request_done_fn_t free_fn; /* NULL: the PML recycles it; else its maker frees it */
    /* ---- PML ---- */
    crmpi_pml_comm_t *comm;     /* its communicator (NULL: an internal request of the PML) */
    crmpi_pml_send_mode_t mode; /* sends */
    int peer;                   /* destination or source (may be MPI_ANY_SOURCE) in comm */
    int tag;                    /* tag (may be MPI_ANY_TAG for receives) */
    const void *user_buf;       /* arguments, kept for persistent restarts */
    size_t user_count;          /* elements */
    MPI_Datatype user_type;     /* datatype (a reference is held while the request lives) */
    crmpi_convertor_t conv;     /* position in the user's data */
    uint64_t post_order;        /* receives: posting order, for wildcard-vs-specific choice */
    uint32_t peer_world;        /* sends: destination's rank in MPI_COMM_WORLD */
    uint32_t seq;               /* sends: sequence number to that peer */
    uint64_t remote_req;        /* rendezvous: the other side's request id */
    uint64_t wire_id;           /* rendezvous: our id for the peer's fragments, 0: none */
    size_t bytes_total;         /* sends: message length; receives: announced length */
    size_t bytes_done;          /* bytes sent / received so far */
    size_t bytes_placing;       /* receives: bytes of a FRAG a BTL is writing into the
                                   buffer now (btl.h, "Placement"), 0: none */
    crmpi_request_t *next;      /* in the PML queue the request is on */
    crmpi_request_t *prev;      /* ditto */
    int queue;                  /* which PML queue (pml-private code), 0: none */
    int cancel_state;           /* sends: where an MPI_Cancel stands (pml-private code) */
    bool cancel_finished;       /* sends being cancelled: the data is out, only the answer
                                   to the cancel is missing */
    bool cancel_reopened;       /* sends: completed, then reopened by a cancel (done_fn has
                                   run once and does not run again) */
    crmpi_request_t *carrier;   /* a buffered send's request: the send moving its message
                                   (crmpi_pml_request_carry), NULL once released */
    crmpi_request_t *proxy;     /* that send: the request it is tied to, or NULL */
};

/* A matched probe's message (MPI_Mprobe): the PML's unexpected fragment, opaque to mpi/. */
struct crmpi_message_s;

/**
 * Open the BML and BTLs and exchange the modex. Communicators come after, with
 * crmpi_pml_add_comm (MPI_COMM_WORLD and MPI_COMM_SELF too: the MPI layer adds them).
 * @return CRMPI_OK; CRMPI_ERR_UNREACH when a peer is reached by no allowed BTL
 *         (*unreach_msg_out, malloc'ed, names both ranks and the BTLs tried: the caller
 *         ends the job with it); other errors are logged.
 */
int crmpi_pml_init(char **unreach_msg_out);
/** Finish every send still moving data (MPI-3.1: Finalize completes buffered sends), then
 *  close the BTLs. Every communicator has been deleted (crmpi_pml_del_comm) before. */
int crmpi_pml_finalize(void);

/*
 * Communicators.
 *
 *   add_comm --(requests come and go)--> comm_release --(last request released:
 *   idle_fn(owner), or at once)--> del_comm
 *
 * The PML counts the live requests of each communicator: a request is live from its
 * allocation (isend, irecv, *_init, imrecv, request_create_generic, or
 * crmpi_pml_comm_request_started for a request of another layer) until its release
 * (request_finish, request_free, free_when_complete, or crmpi_pml_comm_request_ended).
 * MPI_Comm_free calls crmpi_pml_comm_release: when requests are still live, the PML calls
 * the idle function the MPI layer registered once the last of them is released, and the
 * MPI layer deletes the communicator then. So pending operations complete first
 * (MPI-3.1 section 6.4.3).
 */

/*
 * What crmpi_pml_add_comm needs to know of a communicator.
 *
 * An intercommunicator (MPI-3.1 section 6.6) has two groups: the ranks of its sends,
 * receives and probes name the remote group, and MPI_ANY_SOURCE matches any rank of it,
 * while its messages carry as their source this process's rank in the local group, which
 * is how the other side names it. So `rank` is the local rank, and the remote group is
 * the one the PML maps ranks to world ranks with and keeps its matching queues for. Both
 * kinds of communicator then cost the same per message: the choice is made here, once.
 */
typedef struct crmpi_pml_comm_params {
    uint32_t context_id;         /* tells its messages apart from those of every other
                                    communicator; one communicator per id at a time */
    int rank;                    /* this process's rank in it (in its local group) */
    int size;                    /* its number of ranks (of its local group) */
    const uint32_t *world_ranks; /* rank in MPI_COMM_WORLD of each rank, `size` entries;
                                    copied for an intracommunicator, whose ranks name them */
    const char *name;            /* NUL-terminated, for log lines only; read (never freed)
                                    until crmpi_pml_del_comm, so a renamed communicator
                                    shows its new name */
    MPI_Comm owner;              /* the MPI layer's handle, copied into every request on it
                                    (crmpi_request_s.owner); never dereferenced */

    /* An intercommunicator's remote group; 0 and NULL for an intracommunicator. */
    int remote_size;                    /* its number of ranks */
    const uint32_t *remote_world_ranks; /* rank in MPI_COMM_WORLD of each, `remote_size`
                                           entries; copied */
} crmpi_pml_comm_params_t;

/**
 * Matching state for a new communicator. Messages that arrived for its context id before
 * (the sender had created it first) are matched from now on.
 * @return CRMPI_OK with *pcomm_out, or CRMPI_ERR_OUT_OF_RESOURCE (logged)
 */
int crmpi_pml_add_comm(const crmpi_pml_comm_params_t *params, crmpi_pml_comm_t **pcomm_out);
/**
 * Drop a communicator: its unexpected messages are freed, and messages that arrive for
 * its context id later wait for the next communicator added with it. No receive may be
 * pending on it. Sends that still move data (at MPI_Finalize only: buffered sends, and
 * sends freed by MPI_Request_free, which crmpi_pml_finalize completes) keep what they
 * need until they are released.
 */
void crmpi_pml_del_comm(crmpi_pml_comm_t *pcomm);

/**
 * The MPI layer's function for a communicator it released: called once, when the last
 * live request of a communicator crmpi_pml_comm_release returned false for is released.
 * @param owner  the owner the communicator was added with
 * Thread safety: lock held. It runs wherever that request is released: in
 * crmpi_pml_request_finish or _free, or deep inside progress (a BTL callback completing a
 * request freed earlier), where the communicator's state is still in use: it must not call
 * the PML, only note the communicator, to delete it later (from the progress engine).
 */
typedef void (*crmpi_pml_comm_idle_fn_t)(MPI_Comm owner);
/** Register the idle function: once, before crmpi_pml_init (MPI_Init does). */
void crmpi_pml_set_comm_idle_fn(crmpi_pml_comm_idle_fn_t fn);
/**
 * MPI_Comm_free: may the communicator go?
 * @return true when it has no live request: delete it now, nothing more happens;
 *         false: the idle function will be called with its owner once the last live
 *         request is released. Before deleting it then, ask again: a request may have
 *         started on it since (a non-blocking collective's next round).
 */
bool crmpi_pml_comm_release(crmpi_pml_comm_t *pcomm);
/**
 * A request of another layer on the communicator (a non-blocking collective of coll/,
 * which sends and receives through PML requests of its own, but between two rounds has
 * none): live from started to ended, as the PML's own requests are, so that the
 * communicator outlives it.
 */
void crmpi_pml_comm_request_started(crmpi_pml_comm_t *pcomm);
void crmpi_pml_comm_request_ended(crmpi_pml_comm_t *pcomm);
/** The owner the communicator was added with (for requests made by another layer). */
MPI_Comm crmpi_pml_comm_owner(const crmpi_pml_comm_t *pcomm);

/**
 * Start a send. `dest` may be MPI_PROC_NULL (the request is complete at once). The datatype
 * must be committed; arguments were checked by mpi/.
 * @return CRMPI_OK with *req_out, or CRMPI_ERR_OUT_OF_RESOURCE / CRMPI_ERR_UNREACH.
 */
int crmpi_pml_isend(const void *buf, size_t count, MPI_Datatype type, int dest, int tag,
                    crmpi_pml_send_mode_t mode, crmpi_pml_comm_t *comm, crmpi_request_t **req_out);
/** Blocking send: the same as isend + wait, faster for small eager messages. */
int crmpi_pml_send(const void *buf, size_t count, MPI_Datatype type, int dest, int tag,
                   crmpi_pml_send_mode_t mode, crmpi_pml_comm_t *comm);
/** Start a receive; `source` may be MPI_ANY_SOURCE or MPI_PROC_NULL, tag MPI_ANY_TAG. */
int crmpi_pml_irecv(void *buf, size_t count, MPI_Datatype type, int source, int tag,
                    crmpi_pml_comm_t *comm, crmpi_request_t **req_out);
/** Blocking receive; fills *status (unless NULL). @return CRMPI_OK or an error. The
 *  status's MPI_ERROR says MPI_ERR_TRUNCATE when the message was longer than the buffer. */
int crmpi_pml_recv(void *buf, size_t count, MPI_Datatype type, int source, int tag,
                   crmpi_pml_comm_t *comm, MPI_Status *status);

/** Persistent requests: made inactive; crmpi_pml_start starts them again each time. */
int crmpi_pml_isend_init(const void *buf, size_t count, MPI_Datatype type, int dest, int tag,
                         crmpi_pml_send_mode_t mode, crmpi_pml_comm_t *comm,
                         crmpi_request_t **req_out);
int crmpi_pml_irecv_init(void *buf, size_t count, MPI_Datatype type, int source, int tag,
                         crmpi_pml_comm_t *comm, crmpi_request_t **req_out);
/** Start an inactive persistent request. */
int crmpi_pml_start(crmpi_request_t *req);

/** Non-blocking probe: *flag_out = 1 and the status when a matching message arrived. */
int crmpi_pml_iprobe(int source, int tag, crmpi_pml_comm_t *comm, int *flag_out,
                     MPI_Status *status_out);
/** Matched probe: as iprobe, and the message is removed from matching into *message_out
 *  (MPI_MESSAGE_NO_PROC for MPI_PROC_NULL). */
int crmpi_pml_improbe(int source, int tag, crmpi_pml_comm_t *comm, int *flag_out,
                      struct crmpi_message_s **message_out, MPI_Status *status_out);
/** Receive a matched message; the message is consumed. */
int crmpi_pml_imrecv(void *buf, size_t count, MPI_Datatype type, struct crmpi_message_s *message,
                     crmpi_request_t **req_out);

/**
 * Cancel: a receive not yet matched completes as cancelled (status._cancelled = 1); a
 * matched receive completes normally. A send whose message no receive, matched probe or
 * checkpoint pull has taken yet completes as cancelled; otherwise it completes normally
 * (MPI-3.1 section 3.8.4). The receiver decides (pml_ob1.h, CANCEL), so the send completes
 * once the receiver's progress has answered: never later than a posted receive would.
 */
int crmpi_pml_cancel(crmpi_request_t *req);

/**
 * Tie `carrier`, the PML send that moves a buffered message from the attached buffer, to
 * `proxy`, the request MPI_Ibsend or MPI_Start of an MPI_Bsend_init request gives the
 * application (complete at once: the message is buffered). A cancel of the proxy cancels
 * the carrier, and the proxy completes again when the carrier has (cancelled or sent).
 * The carrier is freed (when complete) once the proxy is finished, freed or started again.
 */
void crmpi_pml_request_carry(crmpi_request_t *proxy, crmpi_request_t *carrier);

/**
 * Block until `req` is complete: loops of progress, dropping the library lock between two
 * iterations so that other threads and the C/R thread get it. Lock held on entry and exit.
 */
void crmpi_pml_wait(crmpi_request_t *req);

/**
 * One turn of a waiting loop: progress once; when nothing happened, drop the library lock
 * for a moment (other threads, the C/R thread) and, when this node has more ranks than
 * cores, yield the core. Lock held on entry and exit. crmpi_pml_wait loops over it.
 */
void crmpi_pml_wait_turn(void);

/**
 * The end of a completed request's life as MPI sees it (Wait/Test returned it): copy the
 * status out (status_out may be NULL), then free a non-persistent request or make a
 * persistent one inactive. @return the request's MPI_ERROR (MPI_SUCCESS normally).
 */
int crmpi_pml_request_finish(crmpi_request_t *req, MPI_Status *status_out);

/** MPI_Request_free: free now if complete or inactive, else when it completes. A request
 *  made by another layer (free_fn set, CRMPI_REQUEST_COLL) is freed through its free_fn;
 *  that layer honours free_when_complete itself. */
void crmpi_pml_request_free(crmpi_request_t *req);

/**
 * A request that no message backs, for an operation of mpi/ that completes in the
 * background (MPI_Comm_idup): not complete until crmpi_pml_request_set_complete. Wait,
 * Test and Request_free treat it as any other; it cannot be cancelled (a cancel does
 * nothing, as for a matched receive). Its status is empty; it is live on comm.
 * @return CRMPI_OK with *req_out, or CRMPI_ERR_OUT_OF_RESOURCE
 */
int crmpi_pml_request_create_generic(crmpi_pml_comm_t *comm, crmpi_request_t **req_out);
/** Complete a request of crmpi_pml_request_create_generic; `error` goes to MPI_ERROR. */
void crmpi_pml_request_set_complete(crmpi_request_t *req, int error);

/*
 * Checkpoint/restart (crcp.h uses these for the quiesce step of a checkpoint:
 * docs/design.md, "The checkpoint, phase by phase"). Called on the C/R thread with the
 * library lock held, so the application makes no MPI call meanwhile.
 *
 * The per-peer sequence numbers are the bookmarks: every message takes the next number to
 * its destination, and a receiver advances its expected number when a message reaches
 * matching, in order. So sent(j -> i) is j's next send number to i and arrived(i <- j)
 * is i's next expected number from j.
 *
 *   quiesce_begin -> (exchange bookmarks) -> progress until quiet and every expected
 *   message arrived -> ... checkpoint ... -> quiesce_end
 */

/* What a quiesce did, for the snapshot's statistics. */
typedef struct crmpi_pml_cr_stats {
    uint64_t pulled_messages; /* rendezvous messages pulled without a receive */
    uint64_t pulled_bytes;    /* their bytes that had stayed with the sender */
    uint64_t held_sends;      /* sends posted while quiescing */
} crmpi_pml_cr_stats_t;

/**
 * Start quiescing: new sends are held (they take no sequence number and move nothing
 * until quiesce_end), and every rendezvous message that reached matching without a
 * receive (unexpected, taken by a matched probe, or for a communicator not created yet)
 * is pulled whole into this process, now and when it arrives later, so that its sender
 * completes. Pulled messages stay where they were for later receives and probes.
 */
void crmpi_pml_cr_quiesce_begin(void);

/** This rank's bookmarks with world rank `peer`: messages sent to it, messages from it
 *  that reached matching. */
void crmpi_pml_cr_bookmark(uint32_t peer, uint32_t *sent_out, uint32_t *arrived_out);

/** True when nothing moves here: no send unfinished, no rendezvous receive or pull
 *  waiting for data, no fragment or ACK waiting for a BTL. */
bool crmpi_pml_cr_quiet(void);

/** Stop quiescing: start the held sends in the order they were posted. */
void crmpi_pml_cr_quiesce_end(void);

/** The BML has chosen BTLs again (after a checkpoint, or a restart's new locality): take
 *  each peer's protocol limits from its new module. */
void crmpi_pml_cr_transports_changed(void);

/** The statistics of the current or last quiesce. */
const crmpi_pml_cr_stats_t *crmpi_pml_cr_stats(void);

/**
 * Restart: forget every per-peer sequence number (every rank does, after a drained
 * checkpoint, so they agree again from 0). @return CRMPI_ERROR (logged) when a message is
 * still held out of order: the PML was not drained.
 */
int crmpi_pml_cr_reset_sequences(void);

#endif /* CRMPI_PML_H */
