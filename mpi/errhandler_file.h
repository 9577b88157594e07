/*
 * errhandler_file.h: what libmpi gives libcrmpi-io (mpi/io/, ROMIO's glue) for the error
 * handlers of files (MPI-3.1 section 8.3.3).
 *
 * libmpi knows no MPI_File: ROMIO defines the type, and libcrmpi-io is built after libmpi
 * (docs/design.md, "MPI-IO"). A file handle crosses this interface as void *, the file
 * error handler function as crmpi_file_errhandler_fn_t, which is
 * MPI_File_errhandler_function with the file handle's pointer as void ** (MPI_File is a
 * pointer, so both have the same representation).
 *
 * The handlers themselves are libmpi's struct crmpi_errhandler_s, reference-counted like
 * those of communicators and windows: MPI_Errhandler_free, MPI_Comm_set_errhandler and the
 * rest work on them unchanged. Every function here takes the library lock itself.
 */
#ifndef CRMPI_ERRHANDLER_FILE_H
#define CRMPI_ERRHANDLER_FILE_H

#include "mpi.h"

typedef void crmpi_file_errhandler_fn_t(void **file, int *errcode, ...);

/* MPI_File_create_errhandler: a new handler calling file_fn, in *errhandler_out. */
int crmpi_mpi_file_errhandler_create(crmpi_file_errhandler_fn_t *file_fn,
                                     MPI_Errhandler *errhandler_out);

/* One more holder of handler (a file, a handle MPI_File_get_errhandler returned). */
void crmpi_mpi_file_errhandler_retain(MPI_Errhandler handler);

/* One holder fewer; the last one frees it. */
void crmpi_mpi_file_errhandler_release(MPI_Errhandler handler);

/*
 * Raise errcode on a file whose handler is `handler` (file is the MPI_File, NULL for
 * MPI_FILE_NULL). MPI_ERRORS_ARE_FATAL ends the job, saying func_name and detail (may be
 * NULL); MPI_ERRORS_RETURN returns errcode; a file handler made by
 * MPI_File_create_errhandler is called, and the code it leaves is returned; a handler
 * made for communicators or windows is ignored (setting it on a file is erroneous).
 * Called without the library lock.
 */
int crmpi_mpi_file_errhandler_invoke(MPI_Errhandler handler, void *file, int errcode,
                                     const char *func_name, const char *detail);

#endif /* CRMPI_ERRHANDLER_FILE_H */
