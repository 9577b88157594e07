/*
 * comm_errhandler.c: error handlers as objects (MPI-3.1 section 8.3): made by
 * MPI_Comm_create_errhandler, attached to communicators, freed by MPI_Errhandler_free.
 * How a raised error reaches its handler is errhandler.c's crmpi_mpi_errhandler_invoke.
 *
 * A handler is reference-counted: each communicator using it and each handle the
 * application got (create, MPI_Comm_get_errhandler) holds one, so MPI_Errhandler_free
 * only drops the handle's and the handler lives while a communicator uses it (8.3.4).
 */
#include <stdlib.h>

#include "comm_internal.h"
#include "log.h"

#pragma weak MPI_Comm_create_errhandler = PMPI_Comm_create_errhandler
#pragma weak MPI_Comm_set_errhandler = PMPI_Comm_set_errhandler
#pragma weak MPI_Comm_get_errhandler = PMPI_Comm_get_errhandler
#pragma weak MPI_Errhandler_free = PMPI_Errhandler_free
#pragma weak MPI_Comm_call_errhandler = PMPI_Comm_call_errhandler

void crmpi_errhandler_retain(MPI_Errhandler handler)
{
    if (!handler->predefined)
        handler->refcount++;
}

void crmpi_errhandler_release(MPI_Errhandler handler)
{
    if (!handler->predefined && --handler->refcount == 0)
        free(handler);
}

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *comm_errhandler_fn,
                                MPI_Errhandler *errhandler)
{
    static const char func_name[] = "MPI_Comm_create_errhandler";
    MPI_Errhandler handler;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (comm_errhandler_fn == NULL || errhandler == NULL)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "comm_errhandler_fn or errhandler is NULL");
    handler = crmpi_errhandler_new_user(&(struct crmpi_errhandler_s){
        .comm_fn = comm_errhandler_fn, .name = "a user error handler"});
    if (!handler)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_NO_MEM, func_name, NULL);
    *errhandler = handler;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    static const char func_name[] = "MPI_Comm_set_errhandler";
    MPI_Errhandler old;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (!crmpi_mpi_comm_is_valid(comm))
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
    if (errhandler == MPI_ERRHANDLER_NULL)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name,
                                           "errhandler is MPI_ERRHANDLER_NULL");
    old = comm->errhandler;
    crmpi_errhandler_retain(errhandler);
    comm->errhandler = errhandler;
    crmpi_errhandler_release(old);
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    static const char func_name[] = "MPI_Comm_get_errhandler";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (!crmpi_mpi_comm_is_valid(comm))
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
    if (errhandler == NULL)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "errhandler is NULL");
    /* A new reference: the application frees it with MPI_Errhandler_free (8.3.1). */
    crmpi_errhandler_retain(comm->errhandler);
    *errhandler = comm->errhandler;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    static const char func_name[] = "MPI_Errhandler_free";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (errhandler == NULL || *errhandler == MPI_ERRHANDLER_NULL)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "errhandler is NULL or MPI_ERRHANDLER_NULL");
    crmpi_errhandler_release(*errhandler);
    *errhandler = MPI_ERRHANDLER_NULL;
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* MPI-3.1 section 8.3.6: MPI_SUCCESS once the handler was called and returned. */
int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    static const char func_name[] = "MPI_Comm_call_errhandler";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (!crmpi_mpi_comm_is_valid(comm))
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
    crmpi_mpi_errhandler_invoke(comm, errorcode, func_name, "raised by the application");
    return MPI_SUCCESS;
}
