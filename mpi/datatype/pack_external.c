/*
 * pack_external.c: MPI_Pack_external, MPI_Unpack_external and MPI_Pack_external_size
 * (MPI-3.1 section 4.2.3) in the one data representation the standard defines, "external32"
 * (section 13.5.2): every basic value big-endian, integers two's complement, floating
 * point IEEE, each of the size table 13.2 gives it whatever the platform's.
 *
 * The type's runs say which basic type each byte belongs to (datatype.h: basic_kind, set
 * by predefined.c), so packing walks the runs of each element in typemap order and converts
 * each basic value by its kind (type_internal.h):
 *
 *   kind          native (x86_64)          external32
 *   PLAIN         n bytes, little-endian   the same n bytes, reversed
 *   COMPLEX       two floats of n/2        each reversed
 *   LONG, ULONG   8 bytes                  4 bytes (table 13.2: MPI_LONG is 4); a value
 *                                          that does not fit is MPI_ERR_CONVERSION
 *   LONG_DOUBLE   x87 extended in 16       IEEE binary128 (16 bytes)
 *   (complex)     two of those             two binary128
 *
 * Open MPI packs MPI_LONG in 8 bytes here; crmpi follows the standard's table.
 * Positions and sizes are MPI_Aint, MPI_Count in the "_c" forms of MPI-4.0 (as wide; both
 * forms share one body). A buffer too small is MPI_ERR_TRUNCATE, as for
 * MPI_Pack, and the position is then unchanged. Errors belong to no communicator.
 */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "type_internal.h"

#pragma weak MPI_Pack_external = PMPI_Pack_external
#pragma weak MPI_Unpack_external = PMPI_Unpack_external
#pragma weak MPI_Pack_external_size = PMPI_Pack_external_size
#pragma weak MPI_Pack_external_c = PMPI_Pack_external_c
#pragma weak MPI_Unpack_external_c = PMPI_Unpack_external_c
#pragma weak MPI_Pack_external_size_c = PMPI_Pack_external_size_c

/* The one data representation MPI defines for these calls. */
static const char external32_name[] = "external32";

/* Bytes of one basic element of `run` in external32. */
static size_t external32_basic_size(const crmpi_dt_run_t *run)
{
    switch (run->basic_kind) {
    case CRMPI_TYPE_KIND_LONG:
    case CRMPI_TYPE_KIND_ULONG: return 4;
    default: return run->basic_size;
    }
}

size_t crmpi_type_external32_size(const struct crmpi_datatype_s *type)
{
    size_t bytes = 0;

    for (size_t r = 0; r < type->num_runs; r++) {
        const crmpi_dt_run_t *run = &type->runs[r];

        bytes += run->len / run->basic_size * external32_basic_size(run);
    }
    return bytes;
}

/* `n` bytes from src to dst in the reverse order. */
static void external32_reverse(unsigned char *dst, const unsigned char *src, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        dst[i] = src[n - 1 - i];
    }
}

/* x87 extended (in a long double) to IEEE binary128, big-endian, and back. The compiler's
 * __float128 does the conversion; both have 15 exponent bits, so it is exact. */
static void external32_put_long_double(unsigned char *dst, const unsigned char *src)
{
    long double native;
    __float128 quad;

    memcpy(&native, src, sizeof(native));
    quad = (__float128)native;
    external32_reverse(dst, (const unsigned char *)&quad, 16);
}

static void external32_get_long_double(unsigned char *dst, const unsigned char *src)
{
    __float128 quad;
    long double native;

    external32_reverse((unsigned char *)&quad, src, 16);
    native = (long double)quad;
    memset(dst, 0, sizeof(long double));
    memcpy(dst, &native, sizeof(native));
}

/*
 * One basic element of `run` between native (mem) and external32 (ext) form, packing or
 * unpacking. @return false when a native value has no external32 form (a long beyond 32
 * bits).
 */
static bool external32_convert(const crmpi_dt_run_t *run, unsigned char *mem, unsigned char *ext,
                               bool pack)
{
    size_t n = run->basic_size;

    switch (run->basic_kind) {
    case CRMPI_TYPE_KIND_COMPLEX:
        if (pack) {
            external32_reverse(ext, mem, n / 2);
            external32_reverse(ext + n / 2, mem + n / 2, n / 2);
        } else {
            external32_reverse(mem, ext, n / 2);
            external32_reverse(mem + n / 2, ext + n / 2, n / 2);
        }
        return true;
    case CRMPI_TYPE_KIND_LONG: {
        long value;
        int32_t narrow;

        if (pack) {
            memcpy(&value, mem, sizeof(value));
            if (value < INT32_MIN || value > INT32_MAX) {
                return false;
            }
            narrow = (int32_t)value;
            external32_reverse(ext, (const unsigned char *)&narrow, 4);
        } else {
            external32_reverse((unsigned char *)&narrow, ext, 4);
            value = narrow;
            memcpy(mem, &value, sizeof(value));
        }
        return true;
    }
    case CRMPI_TYPE_KIND_ULONG: {
        unsigned long value;
        uint32_t narrow;

        if (pack) {
            memcpy(&value, mem, sizeof(value));
            if (value > UINT32_MAX) {
                return false;
            }
            narrow = (uint32_t)value;
            external32_reverse(ext, (const unsigned char *)&narrow, 4);
        } else {
            external32_reverse((unsigned char *)&narrow, ext, 4);
            value = narrow;
            memcpy(mem, &value, sizeof(value));
        }
        return true;
    }
    case CRMPI_TYPE_KIND_LONG_DOUBLE:
    case CRMPI_TYPE_KIND_LONG_DOUBLE_COMPLEX:
        for (size_t part = 0; part < n; part += sizeof(long double)) {
            if (pack) {
                external32_put_long_double(ext + part, mem + part);
            } else {
                external32_get_long_double(mem + part, ext + part);
            }
        }
        return true;
    default:
        /* PLAIN (and a run of no declared kind): the same bytes, big-endian. */
        if (pack) {
            external32_reverse(ext, mem, n);
        } else {
            external32_reverse(mem, ext, n);
        }
        return true;
    }
}

int crmpi_type_external32_pack(const void *buf, size_t count, const struct crmpi_datatype_s *type,
                               void *ext, bool pack)
{
    unsigned char *out = ext;

    for (size_t e = 0; e < count; e++) {
        unsigned char *elem = (unsigned char *)(uintptr_t)buf + (ptrdiff_t)e * type->extent;

        for (size_t r = 0; r < type->num_runs; r++) {
            const crmpi_dt_run_t *run = &type->runs[r];
            size_t ext_size = external32_basic_size(run);
            unsigned char *mem = elem + run->disp;

            for (size_t k = 0; k < run->len; k += run->basic_size) {
                if (!external32_convert(run, mem + k, out, pack)) {
                    return MPI_ERR_CONVERSION;
                }
                out += ext_size;
            }
        }
    }
    return MPI_SUCCESS;
}

/* The checks Pack_external and Unpack_external share (`packed`: outbuf, or inbuf). */
static bool pack_external_check(const char *datarep, MPI_Count count, MPI_Datatype datatype,
                                const void *packed, MPI_Count bufsize, const MPI_Count *position,
                                crmpi_type_check_t *check)
{
    if (datarep == NULL || strcmp(datarep, external32_name) != 0) {
        return crmpi_type_check_failf(check, MPI_ERR_ARG,
                                      "datarep is \"%s\"; the only one is \"external32\"",
                                      datarep ? datarep : "(null)");
    }
    if (count < 0) {
        return crmpi_type_check_fail(check, MPI_ERR_COUNT, "count is negative");
    }
    if (datatype == MPI_DATATYPE_NULL) {
        return crmpi_type_check_fail(check, MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
    }
    if (!datatype->committed && !datatype->predefined) {
        return crmpi_type_check_fail(check, MPI_ERR_TYPE,
                                     "datatype is not committed; call MPI_Type_commit");
    }
    if (position == NULL) {
        return crmpi_type_check_fail(check, MPI_ERR_ARG, "position is NULL");
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
 * The body of both calls and both their forms: checks, room, conversion. The int forms'
 * MPI_Aint sizes and positions are as wide as MPI_Count, so every form passes its values
 * through. Returns with the lock released.
 */
static int pack_external_run(const char *datarep, const void *mem, MPI_Count count,
                             MPI_Datatype datatype, void *packed, MPI_Count bufsize,
                             MPI_Count *position, bool pack, const char *func_name)
{
    crmpi_type_check_t check;
    size_t nbytes;
    int err;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    /* Checked always: the room check below reads them. */
    if (pack_external_check(datarep, count, datatype, packed, bufsize, position, &check)) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, check.errclass, func_name, check.detail);
    }
    if (__builtin_mul_overflow((size_t)count, crmpi_type_external32_size(datatype), &nbytes) ||
        *position > bufsize || nbytes > (size_t)(bufsize - *position)) {
        crmpi_type_check_failf(&check, MPI_ERR_TRUNCATE,
                               "%lld elements of %zu bytes in external32 do not fit in a buffer "
                               "of %lld bytes from position %lld",
                               count, crmpi_type_external32_size(datatype), bufsize, *position);
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, check.errclass, func_name, check.detail);
    }
    err =
        crmpi_type_external32_pack(mem, (size_t)count, datatype, (char *)packed + *position, pack);
    if (err != MPI_SUCCESS) {
        return crmpi_mpi_errhandler_invoke(
            MPI_COMM_NULL, err, func_name,
            "a C long or unsigned long does not fit the 4 bytes external32 gives it");
    }
    *position += (MPI_Count)nbytes;
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* An int form's MPI_Aint position, through an MPI_Count, written back only on success. */
static int pack_external_run_aint(const char *datarep, const void *mem, MPI_Count count,
                                  MPI_Datatype datatype, void *packed, MPI_Aint bufsize,
                                  MPI_Aint *position, bool pack, const char *func_name)
{
    MPI_Count wide_position = position ? *position : 0;
    int err = pack_external_run(datarep, mem, count, datatype, packed, bufsize,
                                position ? &wide_position : NULL, pack, func_name);

    if (err == MPI_SUCCESS) {
        *position = (MPI_Aint)wide_position;
    }
    return err;
}

int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype,
                       void *outbuf, MPI_Aint outsize, MPI_Aint *position)
{
    return pack_external_run_aint(datarep, inbuf, incount, datatype, outbuf, outsize, position,
                                  true, "MPI_Pack_external");
}

int PMPI_Pack_external_c(const char datarep[], const void *inbuf, MPI_Count incount,
                         MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                         MPI_Count *position)
{
    return pack_external_run(datarep, inbuf, incount, datatype, outbuf, outsize, position, true,
                             "MPI_Pack_external_c");
}

/* The packed side is read only; the conversion writes through `mem`, the user's buffer. */
int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                         MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype datatype)
{
    return pack_external_run_aint(datarep, outbuf, outcount, datatype, (void *)(uintptr_t)inbuf,
                                  insize, position, false, "MPI_Unpack_external");
}

int PMPI_Unpack_external_c(const char datarep[], const void *inbuf, MPI_Count insize,
                           MPI_Count *position, void *outbuf, MPI_Count outcount,
                           MPI_Datatype datatype)
{
    return pack_external_run(datarep, outbuf, outcount, datatype, (void *)(uintptr_t)inbuf, insize,
                             position, false, "MPI_Unpack_external_c");
}

/* The body of both forms of Pack_external_size. Returns with the lock released. */
static int pack_external_size_run(const char *datarep, MPI_Count incount, MPI_Datatype datatype,
                                  bool size_null, MPI_Count *size_out, const char *func_name)
{
    size_t nbytes;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (datarep == NULL || strcmp(datarep, external32_name) != 0) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                               "datarep is not \"external32\"");
        }
        if (incount < 0) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COUNT, func_name,
                                               "incount is negative");
        }
        if (datatype == MPI_DATATYPE_NULL) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_TYPE, func_name,
                                               "datatype is MPI_DATATYPE_NULL");
        }
        if (size_null) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                               "size is NULL");
        }
    }
    if (__builtin_mul_overflow((size_t)incount, crmpi_type_external32_size(datatype), &nbytes) ||
        nbytes > (size_t)PTRDIFF_MAX) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COUNT, func_name,
                                           "the packed size overflows MPI_Aint");
    }
    *size_out = (MPI_Count)nbytes;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                            MPI_Aint *size)
{
    MPI_Count wide_size;
    int err = pack_external_size_run(datarep, incount, datatype, size == NULL, &wide_size,
                                     "MPI_Pack_external_size");

    if (err == MPI_SUCCESS) {
        *size = (MPI_Aint)wide_size;
    }
    return err;
}

int PMPI_Pack_external_size_c(const char datarep[], MPI_Count incount, MPI_Datatype datatype,
                              MPI_Count *size)
{
    return pack_external_size_run(datarep, incount, datatype, size == NULL, size,
                                  "MPI_Pack_external_size_c");
}
