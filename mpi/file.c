/*
 * file.c: MPI-IO (MPI-3.1 chapter 13) answered with "not supported".
 *
 * crmpi has no MPI-IO: a checkpoint of open files would need the file system's state saved
 * with the job's, which the C/R design does not cover yet. The calls a typical program
 * makes exist so that it compiles and links, and each returns MPI_ERR_UNSUPPORTED_OPERATION
 * at once, without touching the file system. No file can be opened, so every error belongs
 * to MPI_FILE_NULL, whose handler is MPI_ERRORS_RETURN by default (section 13.7): a program
 * that checks the code of MPI_File_open can fall back to POSIX I/O or skip its output.
 * MPI_File_set_errhandler on MPI_FILE_NULL can make the errors fatal instead.
 */
#include <stdio.h>

#include "mpi_internal.h"

#pragma weak MPI_File_open = PMPI_File_open
#pragma weak MPI_File_close = PMPI_File_close
#pragma weak MPI_File_delete = PMPI_File_delete
#pragma weak MPI_File_set_view = PMPI_File_set_view
#pragma weak MPI_File_get_size = PMPI_File_get_size
#pragma weak MPI_File_seek = PMPI_File_seek
#pragma weak MPI_File_read = PMPI_File_read
#pragma weak MPI_File_read_all = PMPI_File_read_all
#pragma weak MPI_File_read_at = PMPI_File_read_at
#pragma weak MPI_File_read_at_all = PMPI_File_read_at_all
#pragma weak MPI_File_write = PMPI_File_write
#pragma weak MPI_File_write_all = PMPI_File_write_all
#pragma weak MPI_File_write_at = PMPI_File_write_at
#pragma weak MPI_File_write_at_all = PMPI_File_write_at_all
#pragma weak MPI_File_sync = PMPI_File_sync
#pragma weak MPI_File_set_errhandler = PMPI_File_set_errhandler
#pragma weak MPI_File_get_errhandler = PMPI_File_get_errhandler

/* MPI_FILE_NULL's error handler: the one every MPI-IO error here goes to. */
static MPI_Errhandler file_null_errhandler = MPI_ERRORS_RETURN;

/*
 * Raise `errcode` on MPI_FILE_NULL: abort under MPI_ERRORS_ARE_FATAL, else return it.
 * Called with the library lock held; returns with it released.
 */
static int file_raise(int errcode, const char *func_name, const char *detail)
{
    if (file_null_errhandler->kind == CRMPI_ERRHANDLER_FATAL) {
        crmpi_rte_abort_job(errcode,
                            "%s: %s: %s (%s); the error handler of MPI_FILE_NULL is "
                            "MPI_ERRORS_ARE_FATAL, so the job aborts",
                            func_name, crmpi_mpi_error_text(errcode), detail,
                            crmpi_mpi_error_name(errcode));
    }
    crmpi_unlock();
    return errcode;
}

/* The one answer of every MPI-IO call. */
static int file_unsupported(const char *func_name)
{
    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    return file_raise(MPI_ERR_UNSUPPORTED_OPERATION, func_name,
                      "crmpi does not implement MPI-IO; use POSIX I/O instead");
}

int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    return file_unsupported("MPI_File_open");
}

int PMPI_File_close(MPI_File *fh)
{
    return file_unsupported("MPI_File_close");
}

int PMPI_File_delete(const char *filename, MPI_Info info)
{
    return file_unsupported("MPI_File_delete");
}

int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                       const char *datarep, MPI_Info info)
{
    return file_unsupported("MPI_File_set_view");
}

int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    return file_unsupported("MPI_File_get_size");
}

int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    return file_unsupported("MPI_File_seek");
}

int PMPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return file_unsupported("MPI_File_read");
}

int PMPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return file_unsupported("MPI_File_read_all");
}

int PMPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                      MPI_Status *status)
{
    return file_unsupported("MPI_File_read_at");
}

int PMPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
                          MPI_Datatype datatype, MPI_Status *status)
{
    return file_unsupported("MPI_File_read_at_all");
}

int PMPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                    MPI_Status *status)
{
    return file_unsupported("MPI_File_write");
}

int PMPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                        MPI_Status *status)
{
    return file_unsupported("MPI_File_write_all");
}

int PMPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                       MPI_Datatype datatype, MPI_Status *status)
{
    return file_unsupported("MPI_File_write_at");
}

int PMPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                           MPI_Datatype datatype, MPI_Status *status)
{
    return file_unsupported("MPI_File_write_at_all");
}

int PMPI_File_sync(MPI_File fh)
{
    return file_unsupported("MPI_File_sync");
}

/* MPI_FILE_NULL only (no other file exists), and only the predefined handlers: a user
 * handler for files would come from MPI_File_create_errhandler, which crmpi lacks. */
int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    static const char func_name[] = "MPI_File_set_errhandler";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (file != MPI_FILE_NULL) {
        return file_raise(MPI_ERR_FILE, func_name, "the only file is MPI_FILE_NULL");
    }
    if (errhandler != MPI_ERRORS_RETURN && errhandler != MPI_ERRORS_ARE_FATAL) {
        return file_raise(MPI_ERR_ARG, func_name,
                          "only MPI_ERRORS_RETURN and MPI_ERRORS_ARE_FATAL apply to files here");
    }
    file_null_errhandler = errhandler;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    static const char func_name[] = "MPI_File_get_errhandler";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (file != MPI_FILE_NULL) {
        return file_raise(MPI_ERR_FILE, func_name, "the only file is MPI_FILE_NULL");
    }
    if (errhandler == NULL) {
        return file_raise(MPI_ERR_ARG, func_name, "errhandler is NULL");
    }
    /* Predefined handlers are not reference counted: no MPI_Errhandler_free is needed. */
    *errhandler = file_null_errhandler;
    crmpi_unlock();
    return MPI_SUCCESS;
}
