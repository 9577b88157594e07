/*
 * persistent.c: persistent requests (MPI-3.1 section 3.9): MPI_Send_init and its modes,
 * MPI_Recv_init, MPI_Start and MPI_Startall (which also start MPI-4.0's persistent
 * collectives, made by coll/: crmpi_coll_init).
 *
 * The PML keeps the arguments and restarts the communication on each crmpi_pml_start;
 * a Bsend_init request is ours to start (bsend.c), since its message must be buffered anew
 * each time.
 */
#include <stdio.h>

#include "p2p_internal.h"

#pragma weak MPI_Send_init = PMPI_Send_init
#pragma weak MPI_Ssend_init = PMPI_Ssend_init
#pragma weak MPI_Rsend_init = PMPI_Rsend_init
#pragma weak MPI_Bsend_init = PMPI_Bsend_init
#pragma weak MPI_Recv_init = PMPI_Recv_init
#pragma weak MPI_Start = PMPI_Start
#pragma weak MPI_Startall = PMPI_Startall
#pragma weak MPI_Bsend_init_c = PMPI_Bsend_init_c
#pragma weak MPI_Recv_init_c = PMPI_Recv_init_c
#pragma weak MPI_Send_init_c = PMPI_Send_init_c
#pragma weak MPI_Ssend_init_c = PMPI_Ssend_init_c
#pragma weak MPI_Rsend_init_c = PMPI_Rsend_init_c

/* Checks of the *_init calls: the send's (or receive's) and the request pointer. */
static int persistent_check(const crmpi_p2p_args_t *args, const MPI_Request *request,
                            const char *func_name)
{
    bool ok = args->kind == CRMPI_P2P_ARGS_SEND
                  ? crmpi_p2p_send_args_ok(args->buf, args->count, args->type, args->peer,
                                           args->tag, args->comm)
                  : crmpi_p2p_recv_args_ok(args->buf, args->count, args->type, args->peer,
                                           args->tag, args->comm);

    if (!ok) {
        return crmpi_p2p_raise_args(func_name, args);
    }
    if (request == NULL) {
        return crmpi_p2p_raise_arg(args->comm, func_name, "request is NULL");
    }
    return MPI_SUCCESS;
}

/* The body of MPI_Send_init, MPI_Ssend_init and MPI_Rsend_init. */
static int persistent_send_init(const void *buf, MPI_Count count, MPI_Datatype type, int dest,
                                int tag, MPI_Comm comm, MPI_Request *request,
                                crmpi_pml_send_mode_t mode, const char *func_name)
{
    crmpi_request_t *req;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        rc = persistent_check(
            &(crmpi_p2p_args_t){CRMPI_P2P_ARGS_SEND, "", buf, count, type, dest, tag, comm},
            request, func_name);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    rc = crmpi_pml_isend_init(buf, (size_t)count, type, dest, tag, mode, comm->pml, &req);
    if (rc != CRMPI_OK) {
        return crmpi_p2p_raise_pml(comm, rc, func_name, "cannot make the send request to rank %d",
                                   dest);
    }
    *request = req;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    return persistent_send_init(buf, count, datatype, dest, tag, comm, request,
                                CRMPI_PML_SEND_STANDARD, "MPI_Send_init");
}

int PMPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request *request)
{
    return persistent_send_init(buf, count, datatype, dest, tag, comm, request,
                                CRMPI_PML_SEND_SYNCHRONOUS, "MPI_Ssend_init");
}

int PMPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request *request)
{
    return persistent_send_init(buf, count, datatype, dest, tag, comm, request,
                                CRMPI_PML_SEND_READY, "MPI_Rsend_init");
}

static int bsend_init_body(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                           int tag, MPI_Comm comm, MPI_Request *request, const char *func_name)
{
    crmpi_request_t *req;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        rc = persistent_check(
            &(crmpi_p2p_args_t){CRMPI_P2P_ARGS_SEND, "", buf, count, datatype, dest, tag, comm},
            request, func_name);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    rc = crmpi_p2p_bsend_init_create(buf, count, datatype, dest, tag, comm, &req);
    if (rc != CRMPI_OK) {
        return crmpi_p2p_raise_pml(comm, rc, func_name,
                                   "cannot make the buffered send request to rank %d", dest);
    }
    *request = req;
    crmpi_unlock();
    return MPI_SUCCESS;
}

static int recv_init_body(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                          MPI_Comm comm, MPI_Request *request, const char *func_name)
{
    crmpi_request_t *req;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        rc = persistent_check(
            &(crmpi_p2p_args_t){CRMPI_P2P_ARGS_RECV, "", buf, count, datatype, source, tag, comm},
            request, func_name);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    rc = crmpi_pml_irecv_init(buf, (size_t)count, datatype, source, tag, comm->pml, &req);
    if (rc != CRMPI_OK) {
        return crmpi_p2p_raise_pml(comm, rc, func_name,
                                   "cannot make the receive request (source %d, tag %d)", source,
                                   tag);
    }
    *request = req;
    crmpi_unlock();
    return MPI_SUCCESS;
}

/*
 * A handle MPI_Start may start: a live persistent request that is inactive (MPI-3.1 section
 * 3.9). @param index  position in array_of_requests, -1 for MPI_Start's one request.
 * @return MPI_SUCCESS (lock held) or the raised MPI_ERR_REQUEST (released).
 */
static int start_check(MPI_Request req, int index, const char *func_name)
{
    char label[48];
    char detail[256];

    if (index < 0) {
        snprintf(label, sizeof(label), "*request");
    } else {
        snprintf(label, sizeof(label), "array_of_requests[%d]", index);
    }
    if (req == MPI_REQUEST_NULL) {
        snprintf(detail, sizeof(detail), "%s is MPI_REQUEST_NULL", label);
    } else if (!crmpi_p2p_request_ok(req)) {
        return crmpi_p2p_raise_bad_request(func_name, index);
    } else if (!req->persistent) {
        snprintf(detail, sizeof(detail),
                 "%s is not persistent; only requests made by MPI_Send_init, MPI_Bsend_init, "
                 "MPI_Ssend_init, MPI_Rsend_init, MPI_Recv_init or a persistent collective "
                 "(MPI_..._init) can be started",
                 label);
    } else if (req->active) {
        snprintf(detail, sizeof(detail),
                 "%s is already active; complete it (MPI_Wait, MPI_Test...) before starting it "
                 "again",
                 label);
    } else {
        return MPI_SUCCESS;
    }
    return crmpi_mpi_errhandler_invoke(req != MPI_REQUEST_NULL ? req->owner : MPI_COMM_NULL,
                                       MPI_ERR_REQUEST, func_name, detail);
}

/* Start one checked request (index as for start_check). @return MPI_SUCCESS (lock held) or
 * the raised error (released). */
static int start_one(crmpi_request_t *req, int index, const char *func_name)
{
    int rc;

    if (crmpi_p2p_request_is_bsend_init(req)) {
        return crmpi_p2p_bsend_init_start(req, func_name);
    }
    /* A persistent collective (MPI-4.0): coll/ starts a run of its schedule. */
    rc = req->kind == CRMPI_REQUEST_COLL ? crmpi_coll_restart(req) : crmpi_pml_start(req);
    if (rc != CRMPI_OK) {
        if (index < 0) {
            return crmpi_p2p_raise_pml(req->owner, rc, func_name, "cannot start the request");
        }
        return crmpi_p2p_raise_pml(req->owner, rc, func_name, "cannot start array_of_requests[%d]",
                                   index);
    }
    return MPI_SUCCESS;
}

int PMPI_Start(MPI_Request *request)
{
    static const char func_name[] = "MPI_Start";
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (request == NULL) {
            return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name, "request is NULL");
        }
        rc = start_check(*request, -1, func_name);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    rc = start_one(*request, -1, func_name);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* Every request is checked before any is started; a failure to start one leaves those
 * before it started (the error says which could not be). */
int PMPI_Startall(int count, MPI_Request array_of_requests[])
{
    static const char func_name[] = "MPI_Startall";
    char detail[64];
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (count < 0) {
            snprintf(detail, sizeof(detail), "count %d is negative", count);
            return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name, detail);
        }
        if (count > 0 && array_of_requests == NULL) {
            return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name, "array_of_requests is NULL");
        }
        for (int i = 0; i < count; i++) {
            rc = start_check(array_of_requests[i], i, func_name);
            if (rc != MPI_SUCCESS) {
                return rc;
            }
        }
    }
    for (int i = 0; i < count; i++) {
        rc = start_one(array_of_requests[i], i, func_name);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request *request)
{
    return bsend_init_body(buf, count, datatype, dest, tag, comm, request, "MPI_Bsend_init");
}

int PMPI_Bsend_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm, MPI_Request *request)
{
    return bsend_init_body(buf, count, datatype, dest, tag, comm, request, "MPI_Bsend_init_c");
}

int PMPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
    return recv_init_body(buf, count, datatype, source, tag, comm, request, "MPI_Recv_init");
}

int PMPI_Recv_init_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                     MPI_Comm comm, MPI_Request *request)
{
    return recv_init_body(buf, count, datatype, source, tag, comm, request, "MPI_Recv_init_c");
}

/* The large-count forms (MPI-4.0): the same calls with MPI_Count counts. */
int PMPI_Send_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm, MPI_Request *request)
{
    return persistent_send_init(buf, count, datatype, dest, tag, comm, request,
                                CRMPI_PML_SEND_STANDARD, "MPI_Send_init_c");
}

int PMPI_Ssend_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm, MPI_Request *request)
{
    return persistent_send_init(buf, count, datatype, dest, tag, comm, request,
                                CRMPI_PML_SEND_SYNCHRONOUS, "MPI_Ssend_init_c");
}

int PMPI_Rsend_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm, MPI_Request *request)
{
    return persistent_send_init(buf, count, datatype, dest, tag, comm, request,
                                CRMPI_PML_SEND_READY, "MPI_Rsend_init_c");
}
