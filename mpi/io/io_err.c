/*
 * io_err.c: how ROMIO raises an error, crmpi's replacement of ROMIO's default glue
 * (mpi-io/glue/default/mpio_err.c, left out of libcrmpi-io: mpi/io/Makefile.inc). ROMIO's
 * calls return MPIO_Err_return_file(fh, MPIO_Err_create_code(...)); here the code is the
 * error class, and raising it calls the file's handler (io_errhandler.c) as MPI-3.1
 * section 8.3.3 says, where ROMIO's default glue printed every error and aborted on any
 * handler but MPI_ERRORS_RETURN.
 */
/* ROMIO's: mpioimpl.h first, the others need its types. */
#include "mpioimpl.h"

#include "adio_extern.h"
#include "errhandler_file.h"

/*
 * ROMIO's message ids ("**iobadfh") are not shown: crmpi has no table of them, and
 * MPI_Error_string of the class says what kind of error it is. The function and line
 * reach a fatal handler's message through MPIO_Err_return_file's func_name.
 */
int MPIO_Err_create_code(int lastcode, int fatal, const char fcname[], int line, int error_class,
                         const char generic_msg[], const char specific_msg[], ...)
{
    return error_class;
}

int MPIO_Err_return_file(MPI_File mpi_fh, int error_code)
{
    ADIO_File fh = mpi_fh == MPI_FILE_NULL ? NULL : MPIO_File_resolve(mpi_fh);
    MPI_Errhandler handler;

    if (fh == NULL || fh->cookie != ADIOI_FILE_COOKIE) {
        handler = ADIOI_DFLT_ERR_HANDLER;
        fh = NULL;
    } else {
        handler = fh->err_handler;
    }
    return crmpi_mpi_file_errhandler_invoke(handler, fh ? mpi_fh : NULL, error_code,
                                            "an MPI-IO call", NULL);
}

/* Errors of MPI_File_open and MPI_File_delete before a file exists: the communicator's
 * handler. */
int MPIO_Err_return_comm(MPI_Comm mpi_comm, int error_code)
{
    MPI_Comm_call_errhandler(mpi_comm == MPI_COMM_NULL ? MPI_COMM_SELF : mpi_comm, error_code);
    return error_code;
}
