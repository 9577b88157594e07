/*
 * errhandler_file.c: the error handlers of files (MPI-3.1 section 8.3.3), for libcrmpi-io
 * (errhandler_file.h says why they cross as void *). The calls themselves,
 * MPI_File_create_errhandler and the rest, are libcrmpi-io's (mpi/io/io_errhandler.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "comm_internal.h"
#include "errhandler_file.h"

int crmpi_mpi_file_errhandler_create(crmpi_file_errhandler_fn_t *file_fn,
                                     MPI_Errhandler *errhandler_out)
{
    MPI_Errhandler handler = crmpi_errhandler_new_user(
        &(struct crmpi_errhandler_s){.file_fn = file_fn, .name = "a user file error handler"});

    if (!handler)
        return MPI_ERR_NO_MEM;
    *errhandler_out = handler;
    return MPI_SUCCESS;
}

void crmpi_mpi_file_errhandler_retain(MPI_Errhandler handler)
{
    crmpi_lock();
    crmpi_errhandler_retain(handler);
    crmpi_unlock();
}

void crmpi_mpi_file_errhandler_release(MPI_Errhandler handler)
{
    crmpi_lock();
    crmpi_errhandler_release(handler);
    crmpi_unlock();
}

int crmpi_mpi_file_errhandler_invoke(MPI_Errhandler handler, void *file, int errcode,
                                     const char *func_name, const char *detail)
{
    switch (handler->kind) {
    case CRMPI_ERRHANDLER_FATAL:
        crmpi_mpi_errors_are_fatal_abort(errcode, func_name, detail, "the file");
    case CRMPI_ERRHANDLER_RETURN: return errcode;
    case CRMPI_ERRHANDLER_USER:
        /* MPI passes both by reference; the handler may change the code. */
        if (handler->file_fn)
            handler->file_fn(&file, &errcode);
        return errcode;
    }
    return errcode;
}
