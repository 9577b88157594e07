/*
 * datatype_internal.h: how the MPI datatype constructors of datatype/ build a type. Not
 * installed; the engine's contract with the rest of libmpi is convertor.h.
 *
 *   MPI_Type_vector(...)                      one call of the constructor
 *     typemap_init(&map, combiner, ...)       -> constructor record, to fill in
 *     typemap_append(&map, disp, n, stride, old) for each block: n copies of old's runs
 *     typemap_set_bounds(&map, lb, extent)    resized and subarray only
 *     typemap_finish(&map, &newtype)          -> the new type, or the first error
 *
 * A type's data is flattened into runs when it is built, so a derived type needs nothing
 * of the types it was built from to move data. Its constructor record still holds a
 * reference on each derived old type, because MPI_Type_get_contents must return them
 * (MPI-3.1 section 4.1.13) even after the application has freed its handles.
 *
 * Errors are sticky: after the first failure (memory, or an MPI_Aint overflow) every
 * further call does nothing, and finish returns that failure with a message for the user.
 * Threading: all of it runs under the library lock.
 */
#ifndef CRMPI_DATATYPE_INTERNAL_H
#define CRMPI_DATATYPE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "convertor.h"
#include "mpi.h"

/* Types with more runs than this get a run_starts index, for set_position's bisection. */
#define CRMPI_DATATYPE_INDEX_MIN_RUNS 16

/*
 * How a type was built: the arguments MPI_Type_get_contents returns, in its layout
 * (MPI-3.1 section 4.1.13, table "combiner ... ni na nd"). One allocation, arrays after it.
 */
typedef struct crmpi_datatype_constructor {
    int combiner;            /* MPI_COMBINER_* of the constructor called */
    size_t num_integers;     /* entries in integers */
    size_t num_addresses;    /* entries in addresses */
    size_t num_datatypes;    /* entries in datatypes; each derived one holds a reference */
    int *integers;           /* counts, blocklengths, int displacements, sizes, order... */
    MPI_Aint *addresses;     /* byte displacements and strides, lb and extent */
    MPI_Datatype *datatypes; /* the old types, in argument order */
} crmpi_datatype_constructor_t;

/* A type being built: runs in typemap order and the bounds seen so far. */
typedef struct crmpi_datatype_typemap {
    crmpi_dt_run_t *runs;                      /* runs so far, typemap order, adjacent merged */
    size_t num_runs;                           /* entries used in runs */
    size_t capacity;                           /* entries allocated in runs */
    size_t size;                               /* bytes of data so far */
    size_t basic_count;                        /* basic elements so far */
    bool has_data;                             /* some copy had data: true_lb/true_ub are set */
    MPI_Aint true_lb;                          /* lowest byte of data */
    MPI_Aint true_ub;                          /* one past the highest byte of data */
    bool has_natural_bounds;                   /* a copy without markers had entries */
    MPI_Aint natural_lb;                       /* min over those copies of their lb */
    MPI_Aint natural_ub;                       /* max over those copies of their ub */
    bool explicit_bounds;                      /* a copy had resized markers, or set_bounds */
    MPI_Aint marker_lb;                        /* min over the markers' lb */
    MPI_Aint marker_ub;                        /* max over the markers' ub */
    uint32_t align;                            /* strictest alignment of the basic types seen */
    crmpi_datatype_constructor_t *constructor; /* goes to the new type; freed on failure */
    int status;                                /* CRMPI_OK, or the first failure */
    const char *error_detail;                  /* what failed, for the user; static string */
} crmpi_datatype_typemap_t;

/**
 * Start building a type made by `combiner`, whose MPI_Type_get_contents arguments have
 * the given lengths. @return the constructor record for the caller to fill (its arrays
 * have the lengths asked), or NULL when memory ran out (nothing to undo then).
 */
crmpi_datatype_constructor_t *crmpi_datatype_typemap_init(crmpi_datatype_typemap_t *map,
                                                          int combiner, size_t num_integers,
                                                          size_t num_addresses,
                                                          size_t num_datatypes);

/**
 * Append `ncopies` copies of `old` to the typemap, copy i at byte displacement
 * `disp + i * stride`: its runs in order, its bounds, its data span (MPI-3.1 section 4.1).
 * A copy of a type with an empty typemap adds nothing, not even bounds.
 */
void crmpi_datatype_typemap_append(crmpi_datatype_typemap_t *map, MPI_Aint disp, size_t ncopies,
                                   MPI_Aint stride, const struct crmpi_datatype_s *old);

/** `a * b`, or 0 with the map failed when it overflows MPI_Aint. */
MPI_Aint crmpi_datatype_typemap_mul(crmpi_datatype_typemap_t *map, MPI_Aint a, MPI_Aint b);
/** `a + b`, or 0 with the map failed when it overflows MPI_Aint. */
MPI_Aint crmpi_datatype_typemap_add(crmpi_datatype_typemap_t *map, MPI_Aint a, MPI_Aint b);

/** Fail the map with `status` unless it failed already; `detail` must be a static string. */
void crmpi_datatype_typemap_fail(crmpi_datatype_typemap_t *map, int status, const char *detail);

/** Give the type explicit bounds, whatever its copies had (resized, subarray). */
void crmpi_datatype_typemap_set_bounds(crmpi_datatype_typemap_t *map, MPI_Aint lb, MPI_Aint extent);

/**
 * Make the type: uncommitted, unnamed, refcount 1, holding the constructor record. On
 * failure everything the map holds is freed and map->error_detail says why.
 * @return CRMPI_OK, CRMPI_ERR_OUT_OF_RESOURCE, or CRMPI_ERR_BAD_PARAM (sizes or
 *         displacements overflow)
 */
int crmpi_datatype_typemap_finish(crmpi_datatype_typemap_t *map,
                                  struct crmpi_datatype_s **type_out);

/** The MPI error class of a typemap_finish failure. */
int crmpi_datatype_mpi_error(int status);

/*
 * An argument error found by a check of the datatype calls. Checks only find; the MPI call
 * raises (crmpi_mpi_errhandler_invoke releases the lock, and a user handler may even turn
 * the error into MPI_SUCCESS, so a check's return value cannot double as the call's).
 */
typedef struct crmpi_datatype_check {
    int errclass;       /* MPI error class to raise */
    const char *detail; /* what is wrong: a static string or `text` */
    char text[192];     /* room for a detail that names values */
} crmpi_datatype_check_t;

/** Record an error in `check`; returns true, for `return crmpi_datatype_check_fail(...)`. */
bool crmpi_datatype_check_fail(crmpi_datatype_check_t *check, int errclass, const char *detail);
/** As crmpi_datatype_check_fail, with a printf-formatted detail. */
__attribute__((format(printf, 3, 4))) bool
crmpi_datatype_check_failf(crmpi_datatype_check_t *check, int errclass, const char *fmt, ...);

#endif /* CRMPI_DATATYPE_INTERNAL_H */
