/*
 * grequest.c: generalized requests (MPI-3.1 section 12.2): MPI_Grequest_start and
 * MPI_Grequest_complete, for operations the application (or a library on MPI, ROMIO's
 * non-blocking I/O) progresses itself and completes through MPI's requests.
 *
 * A generalized request is a crmpi_request_t whose free_fn is grequest_release, so every
 * completion call treats it as any other; the calls that must run the application's
 * functions recognise it (crmpi_p2p_request_is_grequest) and call, as section 12.2 says:
 *
 *   query_fn(extra, status)   by the call that returns its status (MPI_Wait, Test, the
 *                             multiple forms, MPI_Request_get_status), once it is
 *                             complete; its return value is the request's error
 *   free_fn(extra)            once, when the request is both complete and released: by the
 *                             call that returned it (after query_fn), by MPI_Request_free
 *                             of a complete request, or by MPI_Grequest_complete of one
 *                             MPI_Request_free was called on
 *   cancel_fn(extra, done)    by MPI_Cancel; `done` says whether MPI_Grequest_complete
 *                             was called already
 *
 * The functions are the application's and may call MPI (query_fn typically calls
 * MPI_Status_set_elements): each runs with the library lock released. Such a request
 * belongs to no communicator: its errors go to MPI_COMM_WORLD's handler (section 8.3).
 */
#include <stdlib.h>

#include "p2p_internal.h"

#pragma weak MPI_Grequest_start = PMPI_Grequest_start
#pragma weak MPI_Grequest_complete = PMPI_Grequest_complete

int crmpi_grequest_waits;

int crmpi_grequest_is_complete(MPI_Request request)
{
    return request != MPI_REQUEST_NULL && request->complete;
}

typedef struct p2p_grequest {
    crmpi_request_t req;                     /* first: the handle is its address */
    MPI_Grequest_query_function *query_fn;   /* fills the status at completion */
    MPI_Grequest_free_function *free_fn;     /* frees the application's state */
    MPI_Grequest_cancel_function *cancel_fn; /* asked to cancel the operation */
    void *extra_state;                       /* passed to the three */
    bool user_freed;                         /* free_fn was called */
} p2p_grequest_t;

/* The request's free_fn (pml.h): the PML released it; the memory goes. */
void crmpi_p2p_grequest_release(crmpi_request_t *req)
{
    free(req);
}

/* Call the application's free_fn, unlocked, once. @return its error */
static int grequest_call_free(p2p_grequest_t *greq)
{
    int err;

    if (greq->user_freed) {
        return MPI_SUCCESS;
    }
    greq->user_freed = true;
    crmpi_unlock();
    err = greq->free_fn(greq->extra_state);
    crmpi_lock();
    return err;
}

/* Call query_fn into the request's status (unlocked). @return its error */
static int grequest_call_query(p2p_grequest_t *greq)
{
    MPI_Status status = {.MPI_SOURCE = MPI_UNDEFINED, .MPI_TAG = MPI_UNDEFINED};
    int err;

    crmpi_unlock();
    err = greq->query_fn(greq->extra_state, &status);
    crmpi_lock();
    greq->req.status.MPI_SOURCE = status.MPI_SOURCE;
    greq->req.status.MPI_TAG = status.MPI_TAG;
    greq->req.status._cancelled = status._cancelled;
    greq->req.status._nbytes = status._nbytes;
    greq->req.status.MPI_ERROR = err;
    return err;
}

void crmpi_p2p_grequest_conclude(crmpi_request_t *req)
{
    p2p_grequest_t *greq = (p2p_grequest_t *)req;
    int err = grequest_call_query(greq);
    int free_err = grequest_call_free(greq);

    /* The query's error first; a failing free_fn still fails the call. */
    if (err == MPI_SUCCESS && free_err != MPI_SUCCESS) {
        greq->req.status.MPI_ERROR = free_err;
    }
}

int crmpi_p2p_grequest_status(crmpi_request_t *req)
{
    return grequest_call_query((p2p_grequest_t *)req);
}

int crmpi_p2p_grequest_free(crmpi_request_t *req)
{
    /* Not complete yet: MPI_Grequest_complete calls free_fn. */
    if (!req->complete) {
        return MPI_SUCCESS;
    }
    return grequest_call_free((p2p_grequest_t *)req);
}

int crmpi_p2p_grequest_cancel(crmpi_request_t *req)
{
    p2p_grequest_t *greq = (p2p_grequest_t *)req;
    int err;

    crmpi_unlock();
    err = greq->cancel_fn(greq->extra_state, req->complete);
    crmpi_lock();
    return err;
}

int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                        MPI_Request *request)
{
    static const char func_name[] = "MPI_Grequest_start";
    p2p_grequest_t *greq;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (query_fn == NULL || free_fn == NULL || cancel_fn == NULL) {
        return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name,
                                   "query_fn, free_fn or cancel_fn is NULL");
    }
    if (request == NULL) {
        return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name, "request is NULL");
    }
    greq = calloc(1, sizeof(*greq));
    if (greq == NULL) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_NO_MEM, func_name, NULL);
    }
    greq->req.magic = CRMPI_REQUEST_MAGIC;
    /* On no PML queue and no communicator: the PML's cancel and accounting leave it alone. */
    greq->req.kind = CRMPI_REQUEST_RECV;
    greq->req.owner = MPI_COMM_NULL;
    greq->req.free_fn = crmpi_p2p_grequest_release;
    greq->req.status.MPI_SOURCE = MPI_UNDEFINED;
    greq->req.status.MPI_TAG = MPI_UNDEFINED;
    greq->query_fn = query_fn;
    greq->free_fn = free_fn;
    greq->cancel_fn = cancel_fn;
    greq->extra_state = extra_state;
    *request = &greq->req;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Grequest_complete(MPI_Request request)
{
    static const char func_name[] = "MPI_Grequest_complete";
    p2p_grequest_t *greq = (p2p_grequest_t *)request;
    int err = MPI_SUCCESS;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (request == MPI_REQUEST_NULL || !crmpi_p2p_request_ok(request) ||
        !crmpi_p2p_request_is_grequest(request)) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_REQUEST, func_name,
                                           "request is not a live generalized request");
    }
    if (request->complete) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_REQUEST, func_name,
                                           "the request was completed already");
    }
    request->complete = true;
    /* MPI_Request_free came first: the request is released now, free_fn called first. */
    if (request->free_when_complete) {
        err = grequest_call_free(greq);
        crmpi_pml_request_free(request);
    }
    if (err != MPI_SUCCESS) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, err, func_name,
                                           "the request's free_fn failed");
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}
