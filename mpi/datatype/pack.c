/*
 * pack.c: MPI_Pack, MPI_Unpack and MPI_Pack_size (MPI-3.1 section 4.2). Packed data is
 * the convertor's stream, the type's native bytes in typemap order: every rank of a job
 * has one architecture, so nothing is converted and MPI_Pack_size is exact.
 *
 * MPI-3.1 gives no error class for a packed buffer too small; crmpi raises MPI_ERR_TRUNCATE
 * for both directions (outsize too small to pack, insize too small to unpack), as Open MPI
 * does, and copies nothing then. A negative outsize, insize or position is MPI_ERR_ARG.
 */
#include <limits.h>

#include "type_internal.h"

#pragma weak MPI_Pack = PMPI_Pack
#pragma weak MPI_Unpack = PMPI_Unpack
#pragma weak MPI_Pack_size = PMPI_Pack_size

/* The checks Pack and Unpack share (`packed` is outbuf of Pack, inbuf of Unpack). */
static bool pack_check(int count, MPI_Datatype datatype, const void *packed, int bufsize,
                       const int *position, crmpi_type_check_t *check)
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
    if (position == NULL) {
        return crmpi_type_check_fail(check, MPI_ERR_ARG, "position is NULL");
    }
    if (bufsize < 0 || *position < 0) {
        return crmpi_type_check_failf(check, MPI_ERR_ARG,
                                      "the buffer size (%d) or position (%d) is negative", bufsize,
                                      *position);
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
static bool pack_check_room(int count, MPI_Datatype datatype, int bufsize, int position,
                            size_t *nbytes_out, crmpi_type_check_t *check)
{
    size_t nbytes;

    if (__builtin_mul_overflow((size_t)count, datatype->size, &nbytes) || position > bufsize ||
        nbytes > (size_t)(bufsize - position)) {
        return crmpi_type_check_failf(
            check, MPI_ERR_TRUNCATE,
            "%d elements of %zu bytes do not fit in a buffer of %d bytes from position %d", count,
            datatype->size, bufsize, position);
    }
    *nbytes_out = nbytes;
    return false;
}

int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
              int *position, MPI_Comm comm)
{
    static const char func_name[] = "MPI_Pack";
    crmpi_type_check_t check;
    crmpi_convertor_t conv;
    size_t nbytes = 0;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (!crmpi_mpi_comm_is_valid(comm)) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
        }
        if (pack_check(incount, datatype, outbuf, outsize, position, &check)) {
            return crmpi_mpi_errhandler_invoke(comm, check.errclass, func_name, check.detail);
        }
    }
    if (pack_check_room(incount, datatype, outsize, *position, &nbytes, &check)) {
        return crmpi_mpi_errhandler_invoke(comm, check.errclass, func_name, check.detail);
    }
    /* Nothing to pack may come with no buffer at all: memcpy must not see NULL. */
    if (nbytes > 0) {
        crmpi_convertor_init(&conv, inbuf, (size_t)incount, datatype);
        crmpi_convertor_pack(&conv, (char *)outbuf + *position, nbytes);
        *position += (int)nbytes;
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                MPI_Datatype datatype, MPI_Comm comm)
{
    static const char func_name[] = "MPI_Unpack";
    crmpi_type_check_t check;
    crmpi_convertor_t conv;
    size_t nbytes = 0;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (!crmpi_mpi_comm_is_valid(comm)) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
        }
        if (pack_check(outcount, datatype, inbuf, insize, position, &check)) {
            return crmpi_mpi_errhandler_invoke(comm, check.errclass, func_name, check.detail);
        }
    }
    if (pack_check_room(outcount, datatype, insize, *position, &nbytes, &check)) {
        return crmpi_mpi_errhandler_invoke(comm, check.errclass, func_name, check.detail);
    }
    if (nbytes > 0) {
        crmpi_convertor_init(&conv, outbuf, (size_t)outcount, datatype);
        crmpi_convertor_unpack(&conv, (const char *)inbuf + *position, nbytes);
        *position += (int)nbytes;
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    static const char func_name[] = "MPI_Pack_size";
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
        if (size == NULL) {
            return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "size is NULL");
        }
    }
    /* An int cannot say how big the buffer must be: better an error than a wrong size the
     * application would allocate. */
    if (__builtin_mul_overflow((size_t)incount, datatype->size, &nbytes) || nbytes > INT_MAX) {
        crmpi_type_check_failf(
            &check, MPI_ERR_COUNT,
            "%d elements of %zu bytes need more than INT_MAX bytes; pack fewer at a time", incount,
            datatype->size);
        return crmpi_mpi_errhandler_invoke(comm, check.errclass, func_name, check.detail);
    }
    *size = (int)nbytes;
    crmpi_unlock();
    return MPI_SUCCESS;
}
