/*
 * pack.c: MPI_Pack, MPI_Unpack and MPI_Pack_size (MPI-3.1 section 4.2). Packed data is
 * the convertor's stream, the type's native bytes in typemap order: every rank of a job
 * has one architecture, so nothing is converted and MPI_Pack_size is exact.
 *
 * MPI-3.1 gives no error class for a packed buffer too small; crmpi raises MPI_ERR_TRUNCATE
 * for both directions (outsize too small to pack, insize too small to unpack), as Open MPI
 * does, and copies nothing then. A negative outsize, insize or position is MPI_ERR_ARG.
 *
 * MPI_Pack_c, MPI_Unpack_c and MPI_Pack_size_c (MPI-4.0 section 5.2) are the same calls
 * with MPI_Count counts, sizes and positions; both forms share one body.
 */
#include <limits.h>
#include <stdint.h>

#include "type_internal.h"

#pragma weak MPI_Pack = PMPI_Pack
#pragma weak MPI_Unpack = PMPI_Unpack
#pragma weak MPI_Pack_size = PMPI_Pack_size
#pragma weak MPI_Pack_c = PMPI_Pack_c
#pragma weak MPI_Unpack_c = PMPI_Unpack_c
#pragma weak MPI_Pack_size_c = PMPI_Pack_size_c

/* The checks Pack and Unpack share (`packed` is outbuf of Pack, inbuf of Unpack). */
static bool pack_check(MPI_Count count, MPI_Datatype datatype, const void *packed,
                       MPI_Count bufsize, const MPI_Count *position, crmpi_type_check_t *check)
{
    if (count < 0) {
        return crmpi_type_check_fail(check, MPI_ERR_COUNT, "count is negative");
    }
    if (datatype == MPI_DATATYPE_NULL) {
        return crmpi_type_check_fail(check, MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
    }
    /* Packing moves data: the type must be committed, as for communication (4.1.9). */
    if (!datatype->committed) {
        return crmpi_type_check_fail(check, MPI_ERR_TYPE,
                                     "datatype is not committed; call MPI_Type_commit");
    }
    if (bufsize < 0 || *position < 0) {
        return crmpi_type_check_failf(check, MPI_ERR_ARG,
                                      "the buffer size (%lld) or position (%lld) is negative",
                                      bufsize, *position);
    }
    if (packed == NULL && bufsize > 0) {
        return crmpi_type_check_fail(check, MPI_ERR_BUFFER, "the packed buffer is NULL");
    }
    return false;
}

/*
 * The bytes of `count` elements of `datatype` must fit between `position` and `bufsize`.
 * Checked even without mpi_param_check: it is what keeps Pack and Unpack inside the
 * application's buffer. Sets *nbytes_out when they fit.
 */
static bool pack_check_room(MPI_Count count, MPI_Datatype datatype, MPI_Count bufsize,
                            MPI_Count position, size_t *nbytes_out, crmpi_type_check_t *check)
{
    size_t nbytes;

    if (__builtin_mul_overflow((size_t)count, datatype->size, &nbytes) || position > bufsize ||
        nbytes > (size_t)(bufsize - position)) {
        return crmpi_type_check_failf(check, MPI_ERR_TRUNCATE,
                                      "%lld elements of %zu bytes do not fit in a buffer of %lld "
                                      "bytes from position %lld",
                                      count, datatype->size, bufsize, position);
    }
    *nbytes_out = nbytes;
    return false;
}

/*
 * The body of both forms of Pack (`pack`) and Unpack: `mem` is the application's data,
 * `packed` the packed buffer of `bufsize` bytes. Both forms pass MPI_Count values: the
 * int form's fit, and its position after the call is at most its int bufsize. Returns
 * with the lock released.
 */
static int pack_run(const void *mem, MPI_Count count, MPI_Datatype datatype, void *packed,
                    MPI_Count bufsize, MPI_Count *position, MPI_Comm comm, bool pack,
                    const char *func_name)
{
    crmpi_type_check_t check;
    crmpi_convertor_t conv;
    size_t nbytes = 0;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (!crmpi_mpi_comm_is_valid(comm)) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
        }
        if (pack_check(count, datatype, packed, bufsize, position, &check)) {
            return crmpi_mpi_errhandler_invoke(comm, check.errclass, func_name, check.detail);
        }
    }
    if (pack_check_room(count, datatype, bufsize, *position, &nbytes, &check)) {
        return crmpi_mpi_errhandler_invoke(comm, check.errclass, func_name, check.detail);
    }
    /* Nothing to pack may come with no buffer at all: memcpy must not see NULL. */
    if (nbytes > 0) {
        crmpi_convertor_init(&conv, mem, (size_t)count, datatype);
        if (pack) {
            crmpi_convertor_pack(&conv, (char *)packed + *position, nbytes);
        } else {
            crmpi_convertor_unpack(&conv, (const char *)packed + *position, nbytes);
        }
        *position += (MPI_Count)nbytes;
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* An int form's position: read into an MPI_Count, written back only on success. */
static int pack_run_int(const void *mem, int count, MPI_Datatype datatype, void *packed,
                        int bufsize, int *position, MPI_Comm comm, bool pack, const char *func_name)
{
    MPI_Count wide_position;
    int err;

    if (position == NULL) {
        crmpi_lock();
        crmpi_mpi_require_active(func_name);
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "position is NULL");
    }
    wide_position = *position;
    err = pack_run(mem, count, datatype, packed, bufsize, &wide_position, comm, pack, func_name);
    if (err == MPI_SUCCESS) {
        *position = (int)wide_position;
    }
    return err;
}

int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
              int *position, MPI_Comm comm)
{
    return pack_run_int(inbuf, incount, datatype, outbuf, outsize, position, comm, true,
                        "MPI_Pack");
}

int PMPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf,
                MPI_Count outsize, MPI_Count *position, MPI_Comm comm)
{
    static const char func_name[] = "MPI_Pack_c";

    if (position == NULL) {
        crmpi_lock();
        crmpi_mpi_require_active(func_name);
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "position is NULL");
    }
    return pack_run(inbuf, incount, datatype, outbuf, outsize, position, comm, true, func_name);
}

/* The packed side is read only; the convertor writes through `mem`, the user's buffer. */
int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                MPI_Datatype datatype, MPI_Comm comm)
{
    return pack_run_int(outbuf, outcount, datatype, (void *)(uintptr_t)inbuf, insize, position,
                        comm, false, "MPI_Unpack");
}

int PMPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                  MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm)
{
    static const char func_name[] = "MPI_Unpack_c";

    if (position == NULL) {
        crmpi_lock();
        crmpi_mpi_require_active(func_name);
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "position is NULL");
    }
    return pack_run(outbuf, outcount, datatype, (void *)(uintptr_t)inbuf, insize, position, comm,
                    false, func_name);
}

/*
 * The body of both forms of Pack_size: the bytes of `incount` elements, at most `max`
 * (INT_MAX for the int form, whose int cannot say how big the buffer must be: better an
 * error than a wrong size the application would allocate). Returns with the lock released.
 */
static int pack_size_run(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, bool size_null,
                         MPI_Count max, MPI_Count *size_out, const char *func_name)
{
    crmpi_type_check_t check;
    size_t nbytes;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (!crmpi_mpi_comm_is_valid(comm)) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
        }
        if (incount < 0) {
            return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_COUNT, func_name,
                                               "incount is negative");
        }
        if (datatype == MPI_DATATYPE_NULL) {
            return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_TYPE, func_name,
                                               "datatype is MPI_DATATYPE_NULL");
        }
        if (size_null) {
            return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "size is NULL");
        }
    }
    if (__builtin_mul_overflow((size_t)incount, datatype->size, &nbytes) || nbytes > (size_t)max) {
        crmpi_type_check_failf(&check, MPI_ERR_COUNT,
                               "%lld elements of %zu bytes need more than %lld bytes; pack fewer "
                               "at a time%s",
                               incount, datatype->size, max,
                               max == INT_MAX ? " or call MPI_Pack_size_c" : "");
        return crmpi_mpi_errhandler_invoke(comm, check.errclass, func_name, check.detail);
    }
    *size_out = (MPI_Count)nbytes;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    MPI_Count wide_size;
    int err =
        pack_size_run(incount, datatype, comm, size == NULL, INT_MAX, &wide_size, "MPI_Pack_size");

    if (err == MPI_SUCCESS) {
        *size = (int)wide_size;
    }
    return err;
}

int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size)
{
    return pack_size_run(incount, datatype, comm, size == NULL, LLONG_MAX, size, "MPI_Pack_size_c");
}
