/*
 * comm.c: the predefined communicators, MPI_Comm_rank and MPI_Comm_size (MPI-3.1 section
 * 6.4.1). MPI_Init fills in their ranks and sizes.
 */
#include "mpi_internal.h"

#pragma weak MPI_Comm_rank = PMPI_Comm_rank
#pragma weak MPI_Comm_size = PMPI_Comm_size

struct crmpi_predefined_comm_s crmpi_mpi_comm_world = {
    .comm =
        {
            .context_id = CRMPI_CONTEXT_ID_WORLD,
            .name = "MPI_COMM_WORLD",
            .errhandler = MPI_ERRORS_ARE_FATAL,
        },
};

struct crmpi_predefined_comm_s crmpi_mpi_comm_self = {
    .comm =
        {
            .context_id = CRMPI_CONTEXT_ID_SELF,
            .name = "MPI_COMM_SELF",
            .errhandler = MPI_ERRORS_ARE_FATAL,
        },
};

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    static const char func_name[] = "MPI_Comm_rank";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (!crmpi_mpi_comm_is_valid(comm)) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
        }
        if (rank == NULL) {
            return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "rank is NULL");
        }
    }
    *rank = comm->rank;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    static const char func_name[] = "MPI_Comm_size";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (!crmpi_mpi_comm_is_valid(comm)) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
        }
        if (size == NULL) {
            return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "size is NULL");
        }
    }
    *size = comm->size;
    crmpi_unlock();
    return MPI_SUCCESS;
}
