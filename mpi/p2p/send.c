/*
 * send.c: the standard, synchronous and ready sends, blocking and immediate (MPI-3.1
 * sections 3.2.1, 3.4 and 3.7.2). The buffered ones are in bsend.c.
 *
 * MPI_Send is on the latency path: lock, a few inline compares, crmpi_pml_send, unlock.
 */
#include "p2p_internal.h"

#pragma weak MPI_Send = PMPI_Send
#pragma weak MPI_Ssend = PMPI_Ssend
#pragma weak MPI_Rsend = PMPI_Rsend
#pragma weak MPI_Isend = PMPI_Isend
#pragma weak MPI_Issend = PMPI_Issend
#pragma weak MPI_Irsend = PMPI_Irsend
#pragma weak MPI_Send_c = PMPI_Send_c
#pragma weak MPI_Ssend_c = PMPI_Ssend_c
#pragma weak MPI_Rsend_c = PMPI_Rsend_c
#pragma weak MPI_Isend_c = PMPI_Isend_c
#pragma weak MPI_Issend_c = PMPI_Issend_c
#pragma weak MPI_Irsend_c = PMPI_Irsend_c

/* The body of MPI_Send, MPI_Ssend and MPI_Rsend; inlined into each with its mode. */
static inline int send_blocking(const void *buf, MPI_Count count, MPI_Datatype type, int dest,
                                int tag, MPI_Comm comm, crmpi_pml_send_mode_t mode,
                                const char *func_name)
{
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check && !crmpi_p2p_send_args_ok(buf, count, type, dest, tag, comm)) {
        return crmpi_p2p_raise_args(func_name, &(crmpi_p2p_args_t){CRMPI_P2P_ARGS_SEND, "", buf,
                                                                   count, type, dest, tag, comm});
    }
    rc = crmpi_pml_send(buf, (size_t)count, type, dest, tag, mode, comm->pml);
    if (rc != CRMPI_OK) {
        return crmpi_p2p_raise_pml(comm, rc, func_name, "cannot send to rank %d", dest);
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* The body of MPI_Isend, MPI_Issend and MPI_Irsend. */
static inline int send_immediate(const void *buf, MPI_Count count, MPI_Datatype type, int dest,
                                 int tag, MPI_Comm comm, MPI_Request *request,
                                 crmpi_pml_send_mode_t mode, const char *func_name)
{
    crmpi_request_t *req;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (!crmpi_p2p_send_args_ok(buf, count, type, dest, tag, comm)) {
            return crmpi_p2p_raise_args(
                func_name,
                &(crmpi_p2p_args_t){CRMPI_P2P_ARGS_SEND, "", buf, count, type, dest, tag, comm});
        }
        if (request == NULL) {
            return crmpi_p2p_raise_arg(comm, func_name, "request is NULL");
        }
    }
    rc = crmpi_pml_isend(buf, (size_t)count, type, dest, tag, mode, comm->pml, &req);
    if (rc != CRMPI_OK) {
        return crmpi_p2p_raise_pml(comm, rc, func_name, "cannot start the send to rank %d", dest);
    }
    *request = req;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    return send_blocking(buf, count, datatype, dest, tag, comm, CRMPI_PML_SEND_STANDARD,
                         "MPI_Send");
}

int PMPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    return send_blocking(buf, count, datatype, dest, tag, comm, CRMPI_PML_SEND_SYNCHRONOUS,
                         "MPI_Ssend");
}

/* A ready send whose receive is not posted is erroneous (MPI-3.1 section 3.4); crmpi does
 * not detect it: the message is delivered as a standard send's would be. */
int PMPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    return send_blocking(buf, count, datatype, dest, tag, comm, CRMPI_PML_SEND_READY, "MPI_Rsend");
}

int PMPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    return send_immediate(buf, count, datatype, dest, tag, comm, request, CRMPI_PML_SEND_STANDARD,
                          "MPI_Isend");
}

int PMPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request *request)
{
    return send_immediate(buf, count, datatype, dest, tag, comm, request,
                          CRMPI_PML_SEND_SYNCHRONOUS, "MPI_Issend");
}

int PMPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request *request)
{
    return send_immediate(buf, count, datatype, dest, tag, comm, request, CRMPI_PML_SEND_READY,
                          "MPI_Irsend");
}

/* The large-count forms (MPI-4.0 section 3.2): the same calls with an MPI_Count count. */
int PMPI_Send_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm)
{
    return send_blocking(buf, count, datatype, dest, tag, comm, CRMPI_PML_SEND_STANDARD,
                         "MPI_Send_c");
}

int PMPI_Ssend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm)
{
    return send_blocking(buf, count, datatype, dest, tag, comm, CRMPI_PML_SEND_SYNCHRONOUS,
                         "MPI_Ssend_c");
}

int PMPI_Rsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm)
{
    return send_blocking(buf, count, datatype, dest, tag, comm, CRMPI_PML_SEND_READY,
                         "MPI_Rsend_c");
}

int PMPI_Isend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, MPI_Request *request)
{
    return send_immediate(buf, count, datatype, dest, tag, comm, request, CRMPI_PML_SEND_STANDARD,
                          "MPI_Isend_c");
}

int PMPI_Issend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
    return send_immediate(buf, count, datatype, dest, tag, comm, request,
                          CRMPI_PML_SEND_SYNCHRONOUS, "MPI_Issend_c");
}

int PMPI_Irsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
    return send_immediate(buf, count, datatype, dest, tag, comm, request, CRMPI_PML_SEND_READY,
                          "MPI_Irsend_c");
}
