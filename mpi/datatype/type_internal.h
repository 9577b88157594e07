/*
 * type_internal.h: what the MPI datatype calls of mpi/datatype/ share (MPI-3.1 chapter 4):
 * argument checks, and the MPI error class of an engine status.
 *
 *   MPI_Type_*, MPI_Pack/Unpack, MPI_Get_elements   mpi/datatype/: arguments, error
 *        |                                                         handlers, MPI's records
 *        |  crmpi_datatype_*, crmpi_convertor_*     datatype/ (the engine): layouts,
 *   datatype engine                                               streams, references
 *
 * The engine speaks ptrdiff_t, size_t and CRMPI_ statuses; the calls here check MPI's
 * arguments, translate, and raise MPI error classes through the error handlers. Errors of
 * the datatype calls belong to no communicator, so MPI_COMM_WORLD's handler decides
 * (section 8.3), except those of Pack, Unpack and Pack_size, which have one.
 *
 * Threading: everything here runs under the library lock.
 */
#ifndef CRMPI_TYPE_INTERNAL_H
#define CRMPI_TYPE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "convertor.h"
#include "datatype.h"
#include "mpi_internal.h"

/* MPI's displacements are the engine's, and its names fit the engine's name field. */
_Static_assert(_Generic((MPI_Aint)0, ptrdiff_t : 1, default : 0), "MPI_Aint is not ptrdiff_t");
_Static_assert(MPI_MAX_OBJECT_NAME == CRMPI_DATATYPE_NAME_MAX,
               "a datatype's name field does not hold MPI_MAX_OBJECT_NAME bytes");

/*
 * The basic kinds of the predefined types (datatype.h: crmpi_dt_run_t.basic_kind): what a
 * basic element's native bytes are, as far as converting them to the external32
 * representation (MPI-3.1 section 13.5.2: big-endian, IEEE formats, fixed sizes) needs to
 * know. Types that convert alike share a kind, so their runs still merge.
 */
enum {
    CRMPI_TYPE_KIND_PLAIN = 1,           /* an integer or IEEE float of basic_size bytes:
                                            byte order reversed, size kept */
    CRMPI_TYPE_KIND_COMPLEX,             /* two IEEE floats of basic_size / 2 bytes each */
    CRMPI_TYPE_KIND_LONG,                /* C long (8 bytes here): 4 bytes in external32 */
    CRMPI_TYPE_KIND_ULONG,               /* C unsigned long: likewise, unsigned */
    CRMPI_TYPE_KIND_LONG_DOUBLE,         /* x87 extended in 16 bytes: IEEE binary128 */
    CRMPI_TYPE_KIND_LONG_DOUBLE_COMPLEX, /* two of those */
};

/*
 * An argument error found by a check of the datatype calls. Checks only find; the MPI call
 * raises (crmpi_mpi_errhandler_invoke releases the lock, and a user handler may even turn
 * the error into MPI_SUCCESS, so a check's return value cannot double as the call's).
 */
typedef struct crmpi_type_check {
    int errclass;       /* MPI error class to raise */
    const char *detail; /* what is wrong: a static string or `text` */
    char text[192];     /* room for a detail that names values */
} crmpi_type_check_t;

/** Record an error in `check`; returns true, for `return crmpi_type_check_fail(...)`. */
bool crmpi_type_check_fail(crmpi_type_check_t *check, int errclass, const char *detail);
/** As crmpi_type_check_fail, with a printf-formatted detail. */
__attribute__((format(printf, 3, 4))) bool
crmpi_type_check_failf(crmpi_type_check_t *check, int errclass, const char *fmt, ...);

/** Every one of the first `n` entries fits an int (always true of an int array). */
bool crmpi_count_array_fits_int(crmpi_count_array_t values, MPI_Count n);

/*
 * The record MPI_Type_get_envelope(_c) and MPI_Type_get_contents(_c) answer from, in one of
 * the two layouts of MPI-4.0 section 5.1.13's table. The int layout is the int form's
 * (counts are integers, byte displacements addresses); the large layout, for a type a
 * "_c" constructor made with a value an int cannot hold, puts both into large counts.
 * Integers that are never counts (ndims, order, size, rank, distribs...) stay integers in
 * both. The constructor writes its arguments in the order of its parameter list; each
 * array keeps that order, which is the table's in both layouts.
 */
typedef struct crmpi_type_record {
    crmpi_datatype_args_t *args; /* the engine's record being filled */
    bool large;                  /* the large layout */
    size_t next_int;             /* next free entry of args->ints */
    size_t next_disp;            /* next free entry of args->disps */
    size_t next_count;           /* next free entry of args->counts */
} crmpi_type_record_t;

/**
 * Start the typemap of a type made by `combiner` with a record for `num_ints` plain
 * integers, `num_counts` count arguments (integers or large counts), `num_disps` byte
 * displacements (addresses or large counts) and `num_types` old types.
 * @return false when memory ran out: the map is failed then and holds nothing
 */
bool crmpi_type_record_start(crmpi_datatype_typemap_t *map, int combiner, bool large,
                             size_t num_ints, size_t num_counts, size_t num_disps, size_t num_types,
                             crmpi_type_record_t *rec_out);

/** Record an integer that is never a count (ndims, order, size, rank, a distribution). */
static inline void crmpi_type_record_int(crmpi_type_record_t *rec, int value)
{
    rec->args->ints[rec->next_int++] = value;
}

/** Record a count (in elements): an integer, or a large count in the large layout. */
static inline void crmpi_type_record_count(crmpi_type_record_t *rec, MPI_Count value)
{
    if (rec->large) {
        rec->args->counts[rec->next_count++] = value;
    } else {
        rec->args->ints[rec->next_int++] = (int)value;
    }
}

/** Record a byte displacement: an address, or a large count in the large layout. */
static inline void crmpi_type_record_disp(crmpi_type_record_t *rec, MPI_Count value)
{
    if (rec->large) {
        rec->args->counts[rec->next_count++] = value;
    } else {
        rec->args->disps[rec->next_disp++] = (MPI_Aint)value;
    }
}

/*
 * The bodies of the constructors both forms share (the int form, MPI-1's names of
 * type_mpi1.c, and the "_c" form): the same call, errors raised in the name of
 * `func_name`. The record takes the large layout when a count does not fit an int, which
 * only a "_c" form can pass. Each takes the library lock and returns with it released, as
 * an MPI call.
 */
int crmpi_type_create_hvector(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                              MPI_Datatype oldtype, MPI_Datatype *newtype, const char *func_name);
int crmpi_type_create_hindexed(MPI_Count count, crmpi_count_array_t array_of_blocklengths,
                               crmpi_count_array_t array_of_displacements, MPI_Datatype oldtype,
                               MPI_Datatype *newtype, const char *func_name);
int crmpi_type_create_struct(MPI_Count count, crmpi_count_array_t array_of_blocklengths,
                             crmpi_count_array_t array_of_displacements,
                             const MPI_Datatype array_of_types[], MPI_Datatype *newtype,
                             const char *func_name);

/*
 * Attributes of datatypes (type_attr.c). Both run the application's callbacks with the
 * lock released and hold it again on return.
 */
/** Copy oldtype's attributes to newtype through their copy callbacks (MPI_Type_dup).
 *  @return MPI_SUCCESS or the error a callback returned (newtype keeps what was copied) */
int crmpi_type_attr_copy_all(MPI_Datatype oldtype, MPI_Datatype newtype);
/** Delete every attribute of type through its delete callback (MPI_Type_free).
 *  @return MPI_SUCCESS or the first error a callback returned (the rest stay set) */
int crmpi_type_attr_delete_all(MPI_Datatype type);

/*
 * external32 (pack_external.c)
 */
/** Bytes of one element of `type` in external32. */
size_t crmpi_type_external32_size(const struct crmpi_datatype_s *type);
/**
 * Convert `count` elements of `type` at buf to their external32 form at ext (pack), or
 * from it back to buf (!pack); ext holds count * crmpi_type_external32_size(type) bytes.
 * @return MPI_SUCCESS, or MPI_ERR_CONVERSION when a value has no external32 form (a C
 *         long beyond 32 bits); ext is then partly written
 */
int crmpi_type_external32_pack(const void *buf, size_t count, const struct crmpi_datatype_s *type,
                               void *ext, bool pack);

/**
 * The MPI error class of an engine status (crmpi_datatype_typemap_finish): an overflow of
 * the arguments' displacements is MPI_ERR_ARG, running out of memory MPI_ERR_INTERN.
 */
int crmpi_type_error_class(int status);

#endif /* CRMPI_TYPE_INTERNAL_H */
