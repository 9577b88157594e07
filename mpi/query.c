/*
 * query.c: what MPI tells about its own state: MPI_Initialized, MPI_Finalized (MPI-3.1
 * section 8.7), MPI_Query_thread and MPI_Is_thread_main (section 12.4.3).
 */
#include "mpi_internal.h"

#pragma weak MPI_Initialized = PMPI_Initialized
#pragma weak MPI_Finalized = PMPI_Finalized
#pragma weak MPI_Query_thread = PMPI_Query_thread
#pragma weak MPI_Is_thread_main = PMPI_Is_thread_main

/* MPI_Initialized and MPI_Finalized may be called at any time, even before MPI_Init. */
int PMPI_Initialized(int *flag)
{
    crmpi_lock();
    if (crmpi_mpi_state.param_check && flag == NULL) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Initialized",
                                           "flag is NULL");
    }
    *flag = crmpi_mpi_state.initialized;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Finalized(int *flag)
{
    crmpi_lock();
    if (crmpi_mpi_state.param_check && flag == NULL) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Finalized",
                                           "flag is NULL");
    }
    *flag = crmpi_mpi_state.finalized;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Query_thread(int *provided)
{
    static const char func_name[] = "MPI_Query_thread";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check && provided == NULL) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "provided is NULL");
    }
    *provided = crmpi_mpi_state.thread_level;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Is_thread_main(int *flag)
{
    static const char func_name[] = "MPI_Is_thread_main";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check && flag == NULL) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name, "flag is NULL");
    }
    *flag = pthread_equal(crmpi_mpi_state.main_thread, pthread_self()) != 0;
    crmpi_unlock();
    return MPI_SUCCESS;
}
