/*
 * recv.c: receives, blocking and immediate (MPI-3.1 sections 3.2.4 and 3.7.2), and the
 * receives of messages taken out of matching by MPI_Mprobe/MPI_Improbe (section 3.8.3).
 *
 * MPI_Recv is on the latency path: lock, a few inline compares, crmpi_pml_recv, unlock.
 */
#include "p2p_internal.h"

#pragma weak MPI_Recv = PMPI_Recv
#pragma weak MPI_Irecv = PMPI_Irecv
#pragma weak MPI_Mrecv = PMPI_Mrecv
#pragma weak MPI_Imrecv = PMPI_Imrecv
#pragma weak MPI_Recv_c = PMPI_Recv_c
#pragma weak MPI_Irecv_c = PMPI_Irecv_c
#pragma weak MPI_Mrecv_c = PMPI_Mrecv_c
#pragma weak MPI_Imrecv_c = PMPI_Imrecv_c

static inline int recv_body(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                            MPI_Comm comm, MPI_Status *status, const char *func_name)
{
    /* Always asked for, even under MPI_STATUS_IGNORE: it carries MPI_ERR_TRUNCATE. */
    MPI_Status recv_status;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check &&
        !crmpi_p2p_recv_args_ok(buf, count, datatype, source, tag, comm)) {
        return crmpi_p2p_raise_args(
            func_name,
            &(crmpi_p2p_args_t){CRMPI_P2P_ARGS_RECV, "", buf, count, datatype, source, tag, comm});
    }
    rc = crmpi_pml_recv(buf, (size_t)count, datatype, source, tag, comm->pml, &recv_status);
    if (rc != CRMPI_OK) {
        return crmpi_p2p_raise_pml(comm, rc, func_name, "cannot receive (source %d, tag %d)",
                                   source, tag);
    }
    crmpi_p2p_status_copy_out(status, &recv_status);
    if (recv_status.MPI_ERROR != MPI_SUCCESS) {
        return crmpi_p2p_raise_status(comm, &recv_status, func_name);
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}

static inline int irecv_body(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                             MPI_Comm comm, MPI_Request *request, const char *func_name)
{
    crmpi_request_t *req;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (!crmpi_p2p_recv_args_ok(buf, count, datatype, source, tag, comm)) {
            return crmpi_p2p_raise_args(func_name,
                                        &(crmpi_p2p_args_t){CRMPI_P2P_ARGS_RECV, "", buf, count,
                                                            datatype, source, tag, comm});
        }
        if (request == NULL) {
            return crmpi_p2p_raise_arg(comm, func_name, "request is NULL");
        }
    }
    rc = crmpi_pml_irecv(buf, (size_t)count, datatype, source, tag, comm->pml, &req);
    if (rc != CRMPI_OK) {
        return crmpi_p2p_raise_pml(comm, rc, func_name,
                                   "cannot post the receive (source %d, tag %d)", source, tag);
    }
    *request = req;
    crmpi_unlock();
    return MPI_SUCCESS;
}

/*
 * Checks shared by MPI_Mrecv and MPI_Imrecv. A message has no communicator the caller could
 * name, so these errors go to MPI_COMM_WORLD's handler. @return MPI_SUCCESS (lock held) or
 * the raised error (lock released).
 */
static int mrecv_check(void *buf, MPI_Count count, MPI_Datatype datatype,
                       const MPI_Message *message, const char *func_name)
{
    if (!crmpi_p2p_buffer_args_ok(buf, count, datatype)) {
        return crmpi_p2p_raise_args(func_name,
                                    &(crmpi_p2p_args_t){CRMPI_P2P_ARGS_BUFFER, "", buf, count,
                                                        datatype, 0, 0, MPI_COMM_NULL});
    }
    if (message == NULL) {
        return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name, "message is NULL");
    }
    /* MPI has no error class for messages; a spent message is most like a freed request. */
    if (*message == MPI_MESSAGE_NULL) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_REQUEST, func_name,
                                           "*message is MPI_MESSAGE_NULL: a message from "
                                           "MPI_Mprobe or MPI_Improbe can be received only once");
    }
    return MPI_SUCCESS;
}

static inline int mrecv_body(void *buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Message *message, MPI_Status *status, const char *func_name)
{
    MPI_Request request;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        rc = mrecv_check(buf, count, datatype, message, func_name);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    /* The message of a probe of MPI_PROC_NULL: nothing to receive (MPI-3.1 section 3.8.2). */
    if (*message == MPI_MESSAGE_NO_PROC) {
        *message = MPI_MESSAGE_NULL;
        crmpi_p2p_status_set_proc_null(status);
        crmpi_unlock();
        return MPI_SUCCESS;
    }
    rc = crmpi_pml_imrecv(buf, (size_t)count, datatype, *message, &request);
    if (rc != CRMPI_OK) {
        return crmpi_p2p_raise_pml(MPI_COMM_NULL, rc, func_name,
                                   "cannot receive the matched message");
    }
    *message = MPI_MESSAGE_NULL;
    crmpi_pml_wait(request);
    return crmpi_p2p_request_return(&request, status, func_name);
}

static inline int imrecv_body(void *buf, MPI_Count count, MPI_Datatype datatype,
                              MPI_Message *message, MPI_Request *request, const char *func_name)
{
    crmpi_request_t *req;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        rc = mrecv_check(buf, count, datatype, message, func_name);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        if (request == NULL) {
            return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name, "request is NULL");
        }
    }
    if (*message == MPI_MESSAGE_NO_PROC) {
        /* A receive from MPI_PROC_NULL is complete at once with the status MPI-3.1 section
         * 3.8.3 asks for; any communicator does. */
        rc = crmpi_pml_irecv(buf, (size_t)count, datatype, MPI_PROC_NULL, MPI_ANY_TAG,
                             MPI_COMM_SELF->pml, &req);
    } else {
        rc = crmpi_pml_imrecv(buf, (size_t)count, datatype, *message, &req);
    }
    if (rc != CRMPI_OK) {
        return crmpi_p2p_raise_pml(MPI_COMM_NULL, rc, func_name,
                                   "cannot receive the matched message");
    }
    *message = MPI_MESSAGE_NULL;
    *request = req;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Status *status)
{
    return recv_body(buf, count, datatype, source, tag, comm, status, "MPI_Recv");
}

int PMPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                MPI_Comm comm, MPI_Status *status)
{
    return recv_body(buf, count, datatype, source, tag, comm, status, "MPI_Recv_c");
}

int PMPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    return irecv_body(buf, count, datatype, source, tag, comm, request, "MPI_Irecv");
}

int PMPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                 MPI_Comm comm, MPI_Request *request)
{
    return irecv_body(buf, count, datatype, source, tag, comm, request, "MPI_Irecv_c");
}

int PMPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
               MPI_Status *status)
{
    return mrecv_body(buf, count, datatype, message, status, "MPI_Mrecv");
}

int PMPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                 MPI_Status *status)
{
    return mrecv_body(buf, count, datatype, message, status, "MPI_Mrecv_c");
}

int PMPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                MPI_Request *request)
{
    return imrecv_body(buf, count, datatype, message, request, "MPI_Imrecv");
}

int PMPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                  MPI_Request *request)
{
    return imrecv_body(buf, count, datatype, message, request, "MPI_Imrecv_c");
}
