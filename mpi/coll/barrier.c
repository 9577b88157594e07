/*
 * barrier.c: MPI_Barrier and MPI_Ibarrier (MPI-3.1 sections 5.3 and 5.12.1).
 */
#include "coll_mpi.h"

#pragma weak MPI_Barrier = PMPI_Barrier
#pragma weak MPI_Ibarrier = PMPI_Ibarrier
#pragma weak MPI_Barrier_init = PMPI_Barrier_init

static int barrier_body(MPI_Comm comm, MPI_Request *request, crmpi_mpi_coll_mode_t mode,
                        const char *func_name)
{
    crmpi_coll_args_t args = {0};

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (!crmpi_mpi_comm_is_valid(comm))
            COLL_FAIL(MPI_COMM_NULL, MPI_ERR_COMM, "comm is MPI_COMM_NULL");
        if (mode != CRMPI_MPI_COLL_BLOCKING && request == NULL)
            COLL_FAIL(comm, MPI_ERR_ARG, "request is NULL");
    }
    return crmpi_mpi_coll_call_mode(comm, CRMPI_COLL_BARRIER, &args, request, mode, func_name);
}

int PMPI_Barrier(MPI_Comm comm)
{
    return barrier_body(comm, NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Barrier");
}

int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    return barrier_body(comm, request, CRMPI_MPI_COLL_NONBLOCKING, "MPI_Ibarrier");
}

int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return barrier_body(comm, request, CRMPI_MPI_COLL_PERSISTENT, "MPI_Barrier_init");
}
