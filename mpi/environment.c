/*
 * environment.c: inquiry calls of MPI-3.1 section 8.1: MPI_Get_version,
 * MPI_Get_library_version and MPI_Get_processor_name.
 */
#include <stdio.h>

#include "mpi_internal.h"

#pragma weak MPI_Get_version = PMPI_Get_version
#pragma weak MPI_Get_library_version = PMPI_Get_library_version
#pragma weak MPI_Get_processor_name = PMPI_Get_processor_name

/* MPI_Get_version and MPI_Get_library_version may be called at any time, even before
 * MPI_Init and after MPI_Finalize (MPI-3.1 section 8.1.1). */
int PMPI_Get_version(int *version, int *subversion)
{
    crmpi_lock();
    if (crmpi_mpi_state.param_check && (version == NULL || subversion == NULL)) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Get_version",
                                           version ? "subversion is NULL" : "version is NULL");
    }
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Get_library_version(char *version, int *resultlen)
{
    crmpi_lock();
    if (crmpi_mpi_state.param_check && (version == NULL || resultlen == NULL)) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Get_library_version",
                                           version ? "resultlen is NULL" : "version is NULL");
    }
    int len = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                       "crmpi %s (MPI %d.%d, Open MPI-style, checkpoint/restart with CRIU)",
                       PACKAGE_VERSION, MPI_VERSION, MPI_SUBVERSION);
    *resultlen = len < MPI_MAX_LIBRARY_VERSION_STRING ? len : MPI_MAX_LIBRARY_VERSION_STRING - 1;
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* The node's name as the launcher knows it (the one hostfiles use), not gethostname(),
 * so that names match mpirun's mapping output; a singleton uses gethostname(). */
int PMPI_Get_processor_name(char *name, int *resultlen)
{
    static const char func_name[] = "MPI_Get_processor_name";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check && (name == NULL || resultlen == NULL)) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           name ? "resultlen is NULL" : "name is NULL");
    }
    int len = snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", crmpi_rte_job()->nodename);
    *resultlen = len < MPI_MAX_PROCESSOR_NAME ? len : MPI_MAX_PROCESSOR_NAME - 1;
    crmpi_unlock();
    return MPI_SUCCESS;
}
