/*
 * io_errhandler.c: error handlers on files (MPI-3.1 section 8.3.3), the calls ROMIO leaves
 * to the MPI library: MPI_File_create_errhandler, MPI_File_set_errhandler,
 * MPI_File_get_errhandler and MPI_File_call_errhandler. The handler objects are libmpi's
 * (errhandler_file.h); a file keeps its handler in ROMIO's file object (err_handler), and
 * MPI_FILE_NULL's, the default of files opened afterwards (MPI_ERRORS_RETURN until set),
 * in ROMIO's ADIOI_DFLT_ERR_HANDLER.
 *
 * A handler set on a file or as the default is retained and never released: ROMIO frees a
 * file without telling the MPI library, and a file opened under a default holds it
 * without a reference of its own. The cost is one handler object per handler ever set.
 */
/* ROMIO's: mpioimpl.h first, the others need its types. */
#include "mpioimpl.h"

#include "adio_extern.h"
#include "errhandler_file.h"

#pragma weak MPI_File_create_errhandler = PMPI_File_create_errhandler
#pragma weak MPI_File_set_errhandler = PMPI_File_set_errhandler
#pragma weak MPI_File_get_errhandler = PMPI_File_get_errhandler
#pragma weak MPI_File_call_errhandler = PMPI_File_call_errhandler

/* The file behind a handle, or NULL when the handle names no open file. */
static ADIO_File io_errhandler_file_resolve(MPI_File mpi_fh)
{
    ADIO_File fh = MPIO_File_resolve(mpi_fh);

    if (fh == NULL || fh->cookie != ADIOI_FILE_COOKIE)
        return NULL;
    return fh;
}

int PMPI_File_create_errhandler(MPI_File_errhandler_function *file_errhandler_fn,
                                MPI_Errhandler *errhandler)
{
    int rc;

    if (file_errhandler_fn == NULL || errhandler == NULL)
        return crmpi_mpi_file_errhandler_invoke(ADIOI_DFLT_ERR_HANDLER, NULL, MPI_ERR_ARG,
                                                "MPI_File_create_errhandler",
                                                "file_errhandler_fn or errhandler is NULL");
    rc = crmpi_mpi_file_errhandler_create((crmpi_file_errhandler_fn_t *)file_errhandler_fn,
                                          errhandler);
    if (rc != MPI_SUCCESS)
        return crmpi_mpi_file_errhandler_invoke(ADIOI_DFLT_ERR_HANDLER, NULL, rc,
                                                "MPI_File_create_errhandler", NULL);
    return MPI_SUCCESS;
}

int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    static const char func_name[] = "MPI_File_set_errhandler";
    ADIO_File fh = NULL;

    if (file != MPI_FILE_NULL && (fh = io_errhandler_file_resolve(file)) == NULL)
        return crmpi_mpi_file_errhandler_invoke(ADIOI_DFLT_ERR_HANDLER, NULL, MPI_ERR_FILE,
                                                func_name, "file is not an open file");
    if (errhandler == MPI_ERRHANDLER_NULL)
        return crmpi_mpi_file_errhandler_invoke(fh ? fh->err_handler : ADIOI_DFLT_ERR_HANDLER, file,
                                                MPI_ERR_ARG, func_name,
                                                "errhandler is MPI_ERRHANDLER_NULL");
    crmpi_mpi_file_errhandler_retain(errhandler);
    if (fh)
        fh->err_handler = errhandler;
    else
        ADIOI_DFLT_ERR_HANDLER = errhandler;
    return MPI_SUCCESS;
}

int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    static const char func_name[] = "MPI_File_get_errhandler";
    ADIO_File fh = NULL;

    if (file != MPI_FILE_NULL && (fh = io_errhandler_file_resolve(file)) == NULL)
        return crmpi_mpi_file_errhandler_invoke(ADIOI_DFLT_ERR_HANDLER, NULL, MPI_ERR_FILE,
                                                func_name, "file is not an open file");
    if (errhandler == NULL)
        return crmpi_mpi_file_errhandler_invoke(fh ? fh->err_handler : ADIOI_DFLT_ERR_HANDLER, file,
                                                MPI_ERR_ARG, func_name, "errhandler is NULL");
    /* A new reference: the application frees it with MPI_Errhandler_free (8.3.1). */
    *errhandler = fh ? fh->err_handler : ADIOI_DFLT_ERR_HANDLER;
    crmpi_mpi_file_errhandler_retain(*errhandler);
    return MPI_SUCCESS;
}

/* MPI-3.1 section 8.3.6: MPI_SUCCESS once the handler was called and returned. */
int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    static const char func_name[] = "MPI_File_call_errhandler";
    ADIO_File adio_fh = NULL;

    if (fh != MPI_FILE_NULL && (adio_fh = io_errhandler_file_resolve(fh)) == NULL)
        return crmpi_mpi_file_errhandler_invoke(ADIOI_DFLT_ERR_HANDLER, NULL, MPI_ERR_FILE,
                                                func_name, "fh is not an open file");
    crmpi_mpi_file_errhandler_invoke(adio_fh ? adio_fh->err_handler : ADIOI_DFLT_ERR_HANDLER, fh,
                                     errorcode, func_name, "raised by the application");
    return MPI_SUCCESS;
}
