/*
 * p2p_internal.h: what the point-to-point MPI calls of mpi/p2p/ share (MPI-3.1 chapter 3):
 * argument checks, statuses, the completion of requests, and the buffered-send allocator.
 *
 *   MPI_Send/Recv/Isend/Wait/Test/...   mpi/p2p/: arguments, error handlers, request arrays,
 *        |                                        the attached buffer of MPI_Bsend
 *        |  crmpi_pml_*                 pml/pml.h: matching, protocols, requests
 *   pml ob1
 *
 * The hot path (MPI_Send, MPI_Recv, MPI_Isend, MPI_Irecv, MPI_Wait, MPI_Test) checks its
 * arguments with the inline predicates below, a handful of compares. Only when one fails
 * does a cold function of p2p_check.c work out which argument is wrong, say exactly what is
 * wrong with it, and raise the error; so each error is raised in one place.
 *
 * Threading: everything here is called with the library lock held. The crmpi_p2p_raise_*
 * functions, like crmpi_mpi_errhandler_invoke, return with it released, so that an error
 * path is a single `return crmpi_p2p_raise_...(...)`.
 */
#ifndef CRMPI_P2P_INTERNAL_H
#define CRMPI_P2P_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "crmpi_status.h"
#include "grequest_wait.h"
#include "mpi_internal.h"
#include "pml.h"

/*
 * The largest tag: the value of MPI_COMM_WORLD's MPI_TAG_UB attribute (MPI-3.1 section
 * 8.1.2 requires at least 32767). 2^31 - 1, so every non-negative int is a valid tag.
 */
#define CRMPI_P2P_TAG_UB 2147483647

/* Error paths: out of line, so the hot path stays a few compares and falls through. */
#define CRMPI_P2P_COLD __attribute__((cold, noinline))

/*
 * Argument checks
 */

/* Which arguments a call has, so one cold function can explain any of them. */
typedef enum {
    CRMPI_P2P_ARGS_SEND,   /* buffer, count, type, dest (or MPI_PROC_NULL), tag, comm */
    CRMPI_P2P_ARGS_RECV,   /* buffer, count, type, source (also MPI_ANY_SOURCE), tag (also
                              MPI_ANY_TAG), comm */
    CRMPI_P2P_ARGS_PROBE,  /* source and tag as a receive's, comm; no buffer */
    CRMPI_P2P_ARGS_BUFFER, /* buffer, count, type only (MPI_Mrecv: the message knows the rest) */
} crmpi_p2p_args_kind_t;

/* The arguments of one side of a communication, for crmpi_p2p_raise_args. */
typedef struct crmpi_p2p_args {
    crmpi_p2p_args_kind_t kind; /* which of the fields below the call has */
    const char *side;           /* "" or a prefix naming the side: "send " in MPI_Sendrecv */
    const void *buf;            /* buffer (NULL is MPI_BOTTOM) */
    MPI_Count count;            /* elements of type (MPI_Count: the _c calls too) */
    MPI_Datatype type;          /* element type */
    int peer;                   /* dest or source */
    int tag;                    /* tag */
    MPI_Comm comm;              /* communicator */
} crmpi_p2p_args_t;

/* Datatypes must be committed before communication (MPI-3.1 section 4.1.9); the predefined
 * ones always are, whether or not their `committed` is set. */
static inline bool crmpi_p2p_type_ok(MPI_Datatype type)
{
    return type != MPI_DATATYPE_NULL && (type->committed || type->predefined);
}

/*
 * A NULL buffer is MPI_BOTTOM (address 0, mpi.h), which is right with a datatype whose
 * displacements are absolute addresses (MPI-3.1 sections 4.1.5, 4.1.12). It is wrong only if data
 * would be at address 0: count > 0 elements of a type with data starting at true_lb == 0.
 */
static inline bool crmpi_p2p_buffer_ok(const void *buf, MPI_Count count, MPI_Datatype type)
{
    return buf != NULL || count == 0 || type->size == 0 || type->true_lb != 0;
}

/* dest of a send: a rank of comm, or MPI_PROC_NULL (MPI-3.1 section 3.11); of the remote
 * group for an intercommunicator (6.6), which remote_size is for both kinds. */
static inline bool crmpi_p2p_dest_ok(int dest, MPI_Comm comm)
{
    return (unsigned)dest < (unsigned)comm->remote_size || dest == MPI_PROC_NULL;
}

/* source of a receive or probe: also MPI_ANY_SOURCE (MPI-3.1 section 3.2.4). */
static inline bool crmpi_p2p_source_ok(int source, MPI_Comm comm)
{
    return (unsigned)source < (unsigned)comm->remote_size || source == MPI_PROC_NULL ||
           source == MPI_ANY_SOURCE;
}

/* A send's tag is in 0..MPI_TAG_UB (MPI-3.1 section 3.2.3); one unsigned compare. */
static inline bool crmpi_p2p_send_tag_ok(int tag)
{
    return (unsigned)tag <= (unsigned)CRMPI_P2P_TAG_UB;
}

/* A receive's or probe's tag may also be MPI_ANY_TAG. */
static inline bool crmpi_p2p_recv_tag_ok(int tag)
{
    return crmpi_p2p_send_tag_ok(tag) || tag == MPI_ANY_TAG;
}

static inline bool crmpi_p2p_send_args_ok(const void *buf, MPI_Count count, MPI_Datatype type,
                                          int dest, int tag, MPI_Comm comm)
{
    return crmpi_mpi_comm_is_valid(comm) && count >= 0 && crmpi_p2p_type_ok(type) &&
           crmpi_p2p_buffer_ok(buf, count, type) && crmpi_p2p_dest_ok(dest, comm) &&
           crmpi_p2p_send_tag_ok(tag);
}

static inline bool crmpi_p2p_recv_args_ok(const void *buf, MPI_Count count, MPI_Datatype type,
                                          int source, int tag, MPI_Comm comm)
{
    return crmpi_mpi_comm_is_valid(comm) && count >= 0 && crmpi_p2p_type_ok(type) &&
           crmpi_p2p_buffer_ok(buf, count, type) && crmpi_p2p_source_ok(source, comm) &&
           crmpi_p2p_recv_tag_ok(tag);
}

static inline bool crmpi_p2p_probe_args_ok(int source, int tag, MPI_Comm comm)
{
    return crmpi_mpi_comm_is_valid(comm) && crmpi_p2p_source_ok(source, comm) &&
           crmpi_p2p_recv_tag_ok(tag);
}

static inline bool crmpi_p2p_buffer_args_ok(const void *buf, MPI_Count count, MPI_Datatype type)
{
    return count >= 0 && crmpi_p2p_type_ok(type) && crmpi_p2p_buffer_ok(buf, count, type);
}

/**
 * Raise the error of the first wrong argument in `args` (MPI_ERR_COMM, _COUNT, _TYPE,
 * _BUFFER, _RANK or _TAG, in that order), saying which and why. Called only after the
 * matching predicate above said false. Returns with the lock released.
 */
CRMPI_P2P_COLD int crmpi_p2p_raise_args(const char *func_name, const crmpi_p2p_args_t *args);

/* A request handle an MPI call may be given: MPI_REQUEST_NULL or a live request. */
static inline bool crmpi_p2p_request_ok(MPI_Request request)
{
    return request == MPI_REQUEST_NULL || request->magic == CRMPI_REQUEST_MAGIC;
}

/* Every handle of an array is MPI_REQUEST_NULL or a live request. */
static inline bool crmpi_p2p_requests_ok(int count, const MPI_Request requests[])
{
    for (int i = 0; i < count; i++) {
        if (!crmpi_p2p_request_ok(requests[i])) {
            return false;
        }
    }
    return true;
}

/**
 * Raise MPI_ERR_REQUEST for a handle that is no live request (freed, or never made).
 * @param index  its position in array_of_requests, or -1 for a call with one request
 */
CRMPI_P2P_COLD int crmpi_p2p_raise_bad_request(const char *func_name, int index);

/**
 * Check the array arguments of Waitall/any/some and Testall/any/some: count >= 0
 * (MPI_ERR_ARG), the array non-NULL when count > 0 (MPI_ERR_ARG), every handle null or live
 * (MPI_ERR_REQUEST). @return MPI_SUCCESS with the lock held, or the raised error (released).
 */
int crmpi_p2p_check_request_array(const char *func_name, int count, const MPI_Request requests[]);

/** Raise MPI_ERR_ARG on comm: `detail` says which argument ("flag is NULL"). Released. */
static inline int crmpi_p2p_raise_arg(MPI_Comm comm, const char *func_name, const char *detail)
{
    return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, detail);
}

/**
 * Raise the MPI error class of a PML failure `rc` (a CRMPI_ERR_*) on comm:
 * "<what>: <why>". `what_fmt` says what could not be done ("cannot start the send to rank
 * 3"). Returns with the lock released.
 */
__attribute__((format(printf, 4, 5))) int
crmpi_p2p_raise_pml(MPI_Comm comm, int rc, const char *func_name, const char *what_fmt, ...);

/**
 * Raise the error a completed request carries in status->MPI_ERROR (MPI_ERR_TRUNCATE, ...)
 * on comm, the request's communicator. Returns with the lock released.
 */
CRMPI_P2P_COLD int crmpi_p2p_raise_status(MPI_Comm comm, const MPI_Status *status,
                                          const char *func_name);

/**
 * Raise MPI_ERR_IN_STATUS (MPI-3.1 section 3.7.5) on the communicator of the first failed
 * request, `error` being that request's error and `index` its position in the array.
 */
CRMPI_P2P_COLD int crmpi_p2p_raise_in_status(MPI_Comm comm, const char *func_name, int index,
                                             int error);

/*
 * Statuses
 */

/*
 * The empty status (MPI-3.1 section 3.7.3) of a null or inactive request: any source, any
 * tag, no error, count 0, not cancelled.
 */
static inline void crmpi_p2p_status_set_empty(MPI_Status *status)
{
    if (status != MPI_STATUS_IGNORE) {
        status->MPI_SOURCE = MPI_ANY_SOURCE;
        status->MPI_TAG = MPI_ANY_TAG;
        status->MPI_ERROR = MPI_SUCCESS;
        status->_cancelled = 0;
        status->_nbytes = 0;
    }
}

/*
 * A status for a call that returns one status (Recv, Wait, Test, Probe...). MPI_ERROR is
 * left alone: only calls that return several statuses set it (MPI-3.1 section 3.2.5); the
 * error itself is the call's return value.
 */
static inline void crmpi_p2p_status_copy_out(MPI_Status *status, const MPI_Status *from)
{
    if (status != MPI_STATUS_IGNORE) {
        status->MPI_SOURCE = from->MPI_SOURCE;
        status->MPI_TAG = from->MPI_TAG;
        status->_cancelled = from->_cancelled;
        status->_nbytes = from->_nbytes;
    }
}

/* The status of a communication with MPI_PROC_NULL (MPI-3.1 section 3.11), for probes. */
static inline void crmpi_p2p_status_set_proc_null(MPI_Status *status)
{
    if (status != MPI_STATUS_IGNORE) {
        status->MPI_SOURCE = MPI_PROC_NULL;
        status->MPI_TAG = MPI_ANY_TAG;
        status->_cancelled = 0;
        status->_nbytes = 0;
    }
}

/*
 * Requests
 */

/* Made by *_init and not started, or completed since its last start: Wait and Test treat it
 * as MPI_REQUEST_NULL (MPI-3.1 section 3.9). */
static inline bool crmpi_p2p_request_is_inactive(const crmpi_request_t *req)
{
    return req->persistent && !req->active;
}

/* Neither null nor inactive: Wait/Test have something to wait for. */
static inline bool crmpi_p2p_request_is_live(const crmpi_request_t *req)
{
    return req != MPI_REQUEST_NULL && !crmpi_p2p_request_is_inactive(req);
}

/*
 * Generalized requests (grequest.c, MPI-3.1 section 12.2): requests whose operation the
 * application completes, recognised by their free_fn. The functions below run the
 * application's callbacks with the lock released and hold it again on return.
 */
/** A generalized request's free_fn (pml.h): frees its memory, nothing else. */
void crmpi_p2p_grequest_release(crmpi_request_t *req);

static inline bool crmpi_p2p_request_is_grequest(const crmpi_request_t *req)
{
    return req->free_fn == crmpi_p2p_grequest_release;
}

/** A completion call given `count` requests begins to wait or test: when one of them is a
 *  live generalized request, count it in crmpi_grequest_waits (grequest_wait.h) until
 *  crmpi_p2p_grequest_wait_end. @return whether it was counted */
static inline bool crmpi_p2p_grequest_wait_begin(int count, const MPI_Request requests[])
{
    for (int i = 0; i < count; i++) {
        if (crmpi_p2p_request_is_live(requests[i]) && crmpi_p2p_request_is_grequest(requests[i])) {
            crmpi_grequest_waits++;
            return true;
        }
    }
    return false;
}

static inline void crmpi_p2p_grequest_wait_end(bool counted)
{
    if (counted) {
        crmpi_grequest_waits--;
    }
}

/** A complete generalized request is returned: query_fn into its status (MPI_ERROR its
 *  error), then free_fn; crmpi_pml_request_finish follows. */
void crmpi_p2p_grequest_conclude(crmpi_request_t *req);
/** MPI_Request_get_status of a complete one: query_fn into its status. @return its error */
int crmpi_p2p_grequest_status(crmpi_request_t *req);
/** MPI_Request_free: free_fn now when complete (else MPI_Grequest_complete calls it).
 *  @return free_fn's error */
int crmpi_p2p_grequest_free(crmpi_request_t *req);
/** MPI_Cancel: cancel_fn with whether it is complete. @return cancel_fn's error */
int crmpi_p2p_grequest_cancel(crmpi_request_t *req);

/*
 * Give a complete request back to the application, for calls that return one status
 * (Wait, Test, Waitany, Testany, Mrecv): its status, the handle set to MPI_REQUEST_NULL
 * unless persistent (a persistent one becomes inactive), and its error raised on its
 * communicator. Returns with the lock released.
 */
static inline int crmpi_p2p_request_return(MPI_Request *request, MPI_Status *status,
                                           const char *func_name)
{
    crmpi_request_t *req = *request;
    MPI_Comm comm = req->owner;
    MPI_Status req_status;
    int error;

    if (crmpi_p2p_request_is_grequest(req)) {
        crmpi_p2p_grequest_conclude(req);
    }
    /* Read before finish: a non-persistent request is freed by it. */
    if (!req->persistent) {
        *request = MPI_REQUEST_NULL;
    }
    error = crmpi_pml_request_finish(req, &req_status);
    crmpi_p2p_status_copy_out(status, &req_status);
    if (error != MPI_SUCCESS) {
        return crmpi_p2p_raise_status(comm, &req_status, func_name);
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* The first failure among the requests a multiple-completion call finished. */
typedef struct crmpi_p2p_first_error {
    int index;     /* position in array_of_requests; -1 while none failed */
    int error;     /* that request's MPI_ERROR */
    MPI_Comm comm; /* its communicator, whose error handler is raised */
} crmpi_p2p_first_error_t;

/*
 * Finish the complete, live request at *slot for a multiple-completion call: its whole
 * status, MPI_ERROR included (MPI-3.1 section 3.7.5), into *status unless NULL, the handle
 * reset unless persistent, and the first failure recorded in *first.
 */
static inline void crmpi_p2p_request_finish_slot(MPI_Request *slot, int index, MPI_Status *status,
                                                 crmpi_p2p_first_error_t *first)
{
    crmpi_request_t *req = *slot;
    MPI_Comm comm = req->owner;
    int error;

    if (crmpi_p2p_request_is_grequest(req)) {
        crmpi_p2p_grequest_conclude(req);
    }
    if (!req->persistent) {
        *slot = MPI_REQUEST_NULL;
    }
    error = crmpi_pml_request_finish(req, status);
    if (error != MPI_SUCCESS && first->index < 0) {
        first->index = index;
        first->error = error;
        first->comm = comm;
    }
}

/**
 * Finish every request of the array, all of them complete or not live (Waitall, Testall):
 * statuses of null and inactive ones are empty. Returns with the lock released:
 * MPI_SUCCESS, or MPI_ERR_IN_STATUS raised when a request failed.
 */
int crmpi_p2p_requests_finish_all(int count, MPI_Request requests[], MPI_Status statuses[],
                                  const char *func_name);

/**
 * The body of MPI_Waitsome (blocking) and MPI_Testsome: check the arguments, find the
 * complete live requests (Testsome after at most one turn of progress, Waitsome until at
 * least one), finish them into indices and statuses. *outcount is MPI_UNDEFINED when no
 * request is live. Takes the library lock; returns with it released: MPI_SUCCESS or
 * MPI_ERR_IN_STATUS raised.
 */
int crmpi_p2p_requests_some(int incount, MPI_Request requests[], int *outcount, int indices[],
                            MPI_Status statuses[], bool blocking, const char *func_name);

/*
 * One turn of a blocking loop over several requests: progress, and when nothing happened
 * let the other threads, the C/R thread among them, take the library lock (a blocking
 * call never holds it while it waits).
 */
static inline void crmpi_p2p_wait_turn(void)
{
    crmpi_pml_wait_turn();
}

/*
 * Buffered sends (bsend.c)
 */

/**
 * The buffered send of MPI_Bsend, MPI_Ibsend and a started MPI_Bsend_init (MPI-3.1 section
 * 3.6): pack the message into a block of the attached buffer and send it from there, the
 * block going back to the buffer when the PML has sent it. The caller's buffer is free again
 * at return. Arguments were checked. With `proxy`, the application's request of an
 * MPI_Ibsend or MPI_Bsend_init, the PML's send is tied to it (crmpi_pml_request_carry), so
 * that MPI_Cancel of the proxy reaches the message.
 * @return MPI_SUCCESS with the lock held, or the raised error (MPI_ERR_BUFFER when no buffer
 *         is attached or it has no room) with the lock released
 */
int crmpi_p2p_bsend_start(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                          MPI_Comm comm, crmpi_request_t *proxy, const char *func_name);

/** Marks a request made by MPI_Bsend_init (its done_fn); does nothing when called. */
void crmpi_p2p_bsend_init_done(crmpi_request_t *req);

/** A request made by MPI_Bsend_init: MPI_Start must buffer its message first. */
static inline bool crmpi_p2p_request_is_bsend_init(const crmpi_request_t *req)
{
    return req->done_fn == crmpi_p2p_bsend_init_done;
}

/**
 * MPI_Bsend_init: a persistent request whose every start buffers the message (arguments
 * checked). @return CRMPI_OK with *req_out, or CRMPI_ERR_OUT_OF_RESOURCE.
 */
int crmpi_p2p_bsend_init_create(const void *buf, MPI_Count count, MPI_Datatype type, int dest,
                                int tag, MPI_Comm comm, crmpi_request_t **req_out);

/**
 * MPI_Start of a Bsend_init request: buffer the message, then start the request, which
 * completes at once. @return as crmpi_p2p_bsend_start.
 */
int crmpi_p2p_bsend_init_start(crmpi_request_t *req, const char *func_name);

/** MPI_Request_free of a Bsend_init request: drop its arguments (before the PML frees it). */
void crmpi_p2p_bsend_init_release(crmpi_request_t *req);

#endif /* CRMPI_P2P_INTERNAL_H */
