/*
 * errhandler_mpi1.c: the error handler calls of MPI-1 that MPI-3.0 removed (MPI-3.1
 * section 17.1.2), still called by old programs and still provided by Open MPI:
 * MPI_Errhandler_create, MPI_Errhandler_set and MPI_Errhandler_get are
 * MPI_Comm_create_errhandler, MPI_Comm_set_errhandler and MPI_Comm_get_errhandler under
 * their old names (comm_errhandler.c). They call the PMPI_ names, so that a profiling
 * library sees the call the application made, once.
 */
#include "mpi_internal.h"

#pragma weak MPI_Errhandler_create = PMPI_Errhandler_create
#pragma weak MPI_Errhandler_set = PMPI_Errhandler_set
#pragma weak MPI_Errhandler_get = PMPI_Errhandler_get

int PMPI_Errhandler_create(MPI_Handler_function *function, MPI_Errhandler *errhandler)
{
    return PMPI_Comm_create_errhandler(function, errhandler);
}

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    return PMPI_Comm_set_errhandler(comm, errhandler);
}

int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    return PMPI_Comm_get_errhandler(comm, errhandler);
}
