/*
 * sendrecv.c: MPI_Sendrecv and MPI_Sendrecv_replace (MPI-3.1 section 3.10), and their
 * non-blocking forms MPI_Isendrecv and MPI_Isendrecv_replace (MPI-4.0 section 3.10).
 *
 * All post the receive first and then start the send, and only then wait for the two, so
 * that two ranks exchanging with each other never wait on each other's send (the point of
 * these calls), whatever protocol the messages take. The non-blocking forms return one
 * request (the PML's generic request, live on the communicator) that completes when both
 * messages have: each of the two PML requests counts down on completion (done_fn), and the
 * last one completes it with the receive's status and the first error.
 */
#include <stdlib.h>

#include "p2p_internal.h"

#pragma weak MPI_Sendrecv = PMPI_Sendrecv
#pragma weak MPI_Sendrecv_replace = PMPI_Sendrecv_replace
#pragma weak MPI_Isendrecv = PMPI_Isendrecv
#pragma weak MPI_Isendrecv_replace = PMPI_Isendrecv_replace
#pragma weak MPI_Sendrecv_c = PMPI_Sendrecv_c
#pragma weak MPI_Sendrecv_replace_c = PMPI_Sendrecv_replace_c
#pragma weak MPI_Isendrecv_c = PMPI_Isendrecv_c
#pragma weak MPI_Isendrecv_replace_c = PMPI_Isendrecv_replace_c

/* Take back a posted receive whose send could not start: cancel it (it completes either
 * cancelled or, if a message matched meanwhile, received), then free it. */
static void sendrecv_abandon_recv(crmpi_request_t *recv_req)
{
    crmpi_pml_cancel(recv_req);
    crmpi_pml_wait(recv_req);
    crmpi_pml_request_finish(recv_req, NULL);
}

/*
 * The exchange of both calls, arguments checked: receive (recvbuf, recvcount, recvtype) from
 * source while sending (sendbuf, sendcount, sendtype) to dest. Returns with the lock
 * released: MPI_SUCCESS, or the raised error of the receive (MPI_ERR_TRUNCATE...), of the
 * send, or of the PML.
 */
static int sendrecv_exchange(const void *sendbuf, size_t sendcount, MPI_Datatype sendtype, int dest,
                             int sendtag, void *recvbuf, size_t recvcount, MPI_Datatype recvtype,
                             int source, int recvtag, MPI_Comm comm, MPI_Status *status,
                             const char *func_name)
{
    crmpi_request_t *recv_req, *send_req;
    MPI_Status recv_status, send_status;
    int rc;

    rc = crmpi_pml_irecv(recvbuf, recvcount, recvtype, source, recvtag, comm->pml, &recv_req);
    if (rc != CRMPI_OK) {
        return crmpi_p2p_raise_pml(comm, rc, func_name,
                                   "cannot post the receive (source %d, tag %d)", source, recvtag);
    }
    rc = crmpi_pml_isend(sendbuf, sendcount, sendtype, dest, sendtag, CRMPI_PML_SEND_STANDARD,
                         comm->pml, &send_req);
    if (rc != CRMPI_OK) {
        sendrecv_abandon_recv(recv_req);
        return crmpi_p2p_raise_pml(comm, rc, func_name, "cannot start the send to rank %d", dest);
    }
    crmpi_pml_wait(recv_req);
    crmpi_pml_wait(send_req);
    crmpi_pml_request_finish(send_req, &send_status);
    crmpi_pml_request_finish(recv_req, &recv_status);
    crmpi_p2p_status_copy_out(status, &recv_status);
    if (recv_status.MPI_ERROR != MPI_SUCCESS) {
        return crmpi_p2p_raise_status(comm, &recv_status, func_name);
    }
    if (send_status.MPI_ERROR != MPI_SUCCESS) {
        return crmpi_p2p_raise_status(comm, &send_status, func_name);
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}

static int sendrecv_body(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                         int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status,
                         const char *func_name)
{

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (!crmpi_p2p_send_args_ok(sendbuf, sendcount, sendtype, dest, sendtag, comm)) {
            return crmpi_p2p_raise_args(func_name, &(crmpi_p2p_args_t){CRMPI_P2P_ARGS_SEND, "send ",
                                                                       sendbuf, sendcount, sendtype,
                                                                       dest, sendtag, comm});
        }
        if (!crmpi_p2p_recv_args_ok(recvbuf, recvcount, recvtype, source, recvtag, comm)) {
            return crmpi_p2p_raise_args(
                func_name, &(crmpi_p2p_args_t){CRMPI_P2P_ARGS_RECV, "receive ", recvbuf, recvcount,
                                               recvtype, source, recvtag, comm});
        }
    }
    return sendrecv_exchange(sendbuf, (size_t)sendcount, sendtype, dest, sendtag, recvbuf,
                             (size_t)recvcount, recvtype, source, recvtag, comm, status, func_name);
}

static int sendrecv_replace_body(void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                                 int sendtag, int source, int recvtag, MPI_Comm comm,
                                 MPI_Status *status, const char *func_name)
{
    crmpi_convertor_t conv;
    void *packed = NULL;
    size_t nbytes = 0;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (!crmpi_p2p_send_args_ok(buf, count, datatype, dest, sendtag, comm)) {
            return crmpi_p2p_raise_args(func_name,
                                        &(crmpi_p2p_args_t){CRMPI_P2P_ARGS_SEND, "", buf, count,
                                                            datatype, dest, sendtag, comm});
        }
        if (!crmpi_p2p_recv_args_ok(buf, count, datatype, source, recvtag, comm)) {
            return crmpi_p2p_raise_args(func_name,
                                        &(crmpi_p2p_args_t){CRMPI_P2P_ARGS_RECV, "", buf, count,
                                                            datatype, source, recvtag, comm});
        }
    }
    /* The outgoing message is copied out first, as a packed byte stream (the convertor's,
     * which is also what MPI_BYTE carries), so the receive may overwrite buf at once. */
    if (dest != MPI_PROC_NULL) {
        nbytes = (size_t)count * datatype->size;
        if (nbytes > 0) {
            packed = malloc(nbytes);
            if (packed == NULL) {
                return crmpi_p2p_raise_pml(comm, CRMPI_ERR_OUT_OF_RESOURCE, func_name,
                                           "cannot allocate %zu bytes to hold the outgoing "
                                           "message while buf is replaced",
                                           nbytes);
            }
            crmpi_convertor_init(&conv, buf, (size_t)count, datatype);
            crmpi_convertor_pack(&conv, packed, nbytes);
        }
    }
    rc = sendrecv_exchange(packed, nbytes, MPI_BYTE, dest, sendtag, buf, (size_t)count, datatype,
                           source, recvtag, comm, status, func_name);
    /* Both requests are finished, even when an error was raised; free() needs no lock. */
    free(packed);
    return rc;
}

/* An MPI_Isendrecv in progress: the request the application holds and its two halves. */
typedef struct isendrecv {
    crmpi_request_t *req; /* the application's (generic) request */
    int pending;          /* halves not complete yet */
    MPI_Status status;    /* the receive's status, once it completed */
    int error;            /* the first error of either half */
    void *packed;         /* Isendrecv_replace: the outgoing message's copy, or NULL */
} isendrecv_t;

/* A half completed (its done_fn, inside progress, lock held): note its status and error;
 * the last one completes the application's request. The half itself is freed by the PML
 * (free_when_complete) right after this returns. */
static void isendrecv_half_done(crmpi_request_t *half)
{
    isendrecv_t *op = half->done_arg;

    if (half->kind == CRMPI_REQUEST_RECV) {
        op->status = half->status;
    }
    if (op->error == MPI_SUCCESS && half->status.MPI_ERROR != MPI_SUCCESS) {
        op->error = half->status.MPI_ERROR;
    }
    if (--op->pending > 0) {
        return;
    }
    op->req->status.MPI_SOURCE = op->status.MPI_SOURCE;
    op->req->status.MPI_TAG = op->status.MPI_TAG;
    op->req->status._cancelled = 0;
    op->req->status._nbytes = op->status._nbytes;
    crmpi_pml_request_set_complete(op->req, op->error);
    free(op->packed);
    free(op);
}

/* Hand a started half to the operation: its completion counts down, and the PML frees it. */
static void isendrecv_adopt(isendrecv_t *op, crmpi_request_t *half)
{
    half->done_fn = isendrecv_half_done;
    half->done_arg = op;
    /* Complete already (MPI_PROC_NULL, a message that was waiting): count it now. */
    if (half->complete) {
        isendrecv_half_done(half);
        crmpi_pml_request_free(half);
        return;
    }
    crmpi_pml_request_free(half);
}

/*
 * The body of both non-blocking calls, arguments checked: as sendrecv_exchange, with one
 * request. `packed` (Isendrecv_replace's copy, or NULL) is freed when the request
 * completes, or here on failure. Returns with the lock released.
 */
static int isendrecv_start(const void *sendbuf, size_t sendcount, MPI_Datatype sendtype, int dest,
                           int sendtag, void *recvbuf, size_t recvcount, MPI_Datatype recvtype,
                           int source, int recvtag, MPI_Comm comm, void *packed,
                           MPI_Request *request, const char *func_name)
{
    crmpi_request_t *recv_req, *send_req;
    isendrecv_t *op = calloc(1, sizeof(*op));
    int rc;

    if (op == NULL) {
        free(packed);
        return crmpi_p2p_raise_pml(comm, CRMPI_ERR_OUT_OF_RESOURCE, func_name,
                                   "cannot allocate the operation");
    }
    op->pending = 2;
    op->packed = packed;
    rc = crmpi_pml_request_create_generic(comm->pml, &op->req);
    if (rc != CRMPI_OK) {
        free(op);
        free(packed);
        return crmpi_p2p_raise_pml(comm, rc, func_name, "cannot make the request");
    }
    rc = crmpi_pml_irecv(recvbuf, recvcount, recvtype, source, recvtag, comm->pml, &recv_req);
    if (rc != CRMPI_OK) {
        goto err_free_request;
    }
    rc = crmpi_pml_isend(sendbuf, sendcount, sendtype, dest, sendtag, CRMPI_PML_SEND_STANDARD,
                         comm->pml, &send_req);
    if (rc != CRMPI_OK) {
        sendrecv_abandon_recv(recv_req);
        goto err_free_request;
    }
    *request = op->req;
    /* The send first: the receive's done_fn may complete the whole operation. */
    isendrecv_adopt(op, send_req);
    isendrecv_adopt(op, recv_req);
    crmpi_unlock();
    return MPI_SUCCESS;

err_free_request:
    crmpi_pml_request_set_complete(op->req, MPI_SUCCESS);
    crmpi_pml_request_free(op->req);
    free(op);
    free(packed);
    return crmpi_p2p_raise_pml(comm, rc, func_name,
                               "cannot start the exchange (dest %d, source %d)", dest, source);
}

static int isendrecv_body(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                          int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                          int source, int recvtag, MPI_Comm comm, MPI_Request *request,
                          const char *func_name)
{

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (!crmpi_p2p_send_args_ok(sendbuf, sendcount, sendtype, dest, sendtag, comm)) {
            return crmpi_p2p_raise_args(func_name, &(crmpi_p2p_args_t){CRMPI_P2P_ARGS_SEND, "send ",
                                                                       sendbuf, sendcount, sendtype,
                                                                       dest, sendtag, comm});
        }
        if (!crmpi_p2p_recv_args_ok(recvbuf, recvcount, recvtype, source, recvtag, comm)) {
            return crmpi_p2p_raise_args(
                func_name, &(crmpi_p2p_args_t){CRMPI_P2P_ARGS_RECV, "receive ", recvbuf, recvcount,
                                               recvtype, source, recvtag, comm});
        }
        if (request == NULL) {
            return crmpi_p2p_raise_arg(comm, func_name, "request is NULL");
        }
    }
    return isendrecv_start(sendbuf, (size_t)sendcount, sendtype, dest, sendtag, recvbuf,
                           (size_t)recvcount, recvtype, source, recvtag, comm, NULL, request,
                           func_name);
}

static int isendrecv_replace_body(void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                                  int sendtag, int source, int recvtag, MPI_Comm comm,
                                  MPI_Request *request, const char *func_name)
{
    crmpi_convertor_t conv;
    void *packed = NULL;
    size_t nbytes = 0;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (!crmpi_p2p_send_args_ok(buf, count, datatype, dest, sendtag, comm)) {
            return crmpi_p2p_raise_args(func_name,
                                        &(crmpi_p2p_args_t){CRMPI_P2P_ARGS_SEND, "", buf, count,
                                                            datatype, dest, sendtag, comm});
        }
        if (!crmpi_p2p_recv_args_ok(buf, count, datatype, source, recvtag, comm)) {
            return crmpi_p2p_raise_args(func_name,
                                        &(crmpi_p2p_args_t){CRMPI_P2P_ARGS_RECV, "", buf, count,
                                                            datatype, source, recvtag, comm});
        }
        if (request == NULL) {
            return crmpi_p2p_raise_arg(comm, func_name, "request is NULL");
        }
    }
    /* As MPI_Sendrecv_replace: the outgoing message is copied out first, and the copy
     * lives until the request completes. */
    if (dest != MPI_PROC_NULL) {
        nbytes = (size_t)count * datatype->size;
        if (nbytes > 0) {
            packed = malloc(nbytes);
            if (packed == NULL) {
                return crmpi_p2p_raise_pml(comm, CRMPI_ERR_OUT_OF_RESOURCE, func_name,
                                           "cannot allocate %zu bytes to hold the outgoing "
                                           "message while buf is replaced",
                                           nbytes);
            }
            crmpi_convertor_init(&conv, buf, (size_t)count, datatype);
            crmpi_convertor_pack(&conv, packed, nbytes);
        }
    }
    return isendrecv_start(packed, nbytes, MPI_BYTE, dest, sendtag, buf, (size_t)count, datatype,
                           source, recvtag, comm, packed, request, func_name);
}

int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status *status)
{
    return sendrecv_body(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                         source, recvtag, comm, status, "MPI_Sendrecv");
}

int PMPI_Sendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                    int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                    int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    return sendrecv_body(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                         source, recvtag, comm, status, "MPI_Sendrecv_c");
}

int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    return sendrecv_replace_body(buf, count, datatype, dest, sendtag, source, recvtag, comm, status,
                                 "MPI_Sendrecv_replace");
}

int PMPI_Sendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                            int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    return sendrecv_replace_body(buf, count, datatype, dest, sendtag, source, recvtag, comm, status,
                                 "MPI_Sendrecv_replace_c");
}

int PMPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                   void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                   MPI_Comm comm, MPI_Request *request)
{
    return isendrecv_body(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                          source, recvtag, comm, request, "MPI_Isendrecv");
}

int PMPI_Isendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                     int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                     int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    return isendrecv_body(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                          source, recvtag, comm, request, "MPI_Isendrecv_c");
}

int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                           int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    return isendrecv_replace_body(buf, count, datatype, dest, sendtag, source, recvtag, comm,
                                  request, "MPI_Isendrecv_replace");
}

int PMPI_Isendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                             int sendtag, int source, int recvtag, MPI_Comm comm,
                             MPI_Request *request)
{
    return isendrecv_replace_body(buf, count, datatype, dest, sendtag, source, recvtag, comm,
                                  request, "MPI_Isendrecv_replace_c");
}
