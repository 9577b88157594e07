/*
 * type_create.c: the datatype constructors of MPI-3.1 sections 4.1.2 and 4.1.3 (contiguous,
 * vector, hvector, indexed, hindexed, indexed_block, hindexed_block, struct, subarray),
 * MPI_Type_create_resized (4.1.7) and MPI_Type_dup (4.1.10), and their large-count "_c"
 * forms of MPI-4.0 (sections 5.1.2, 5.1.3, 5.1.7), which take MPI_Count counts and
 * displacements.
 *
 * Both forms of a constructor share one body, which reads its arrays through
 * crmpi_count_array_t and builds the typemap from MPI_Count values: the engine's counts
 * are size_t and its displacements ptrdiff_t, so a "_c" form takes every value the address
 * space can hold, and an overflowing displacement is the engine's MPI_ERR_ARG as before.
 *
 * Which record (MPI-4.0 section 5.1.13) a "_c" form keeps: the int form's layout when all
 * of its counts fit an int, the large-count layout only when one does not. MPI-4.0 lets
 * MPI_Type_get_envelope fail on a type whose description needs large counts, and ROMIO
 * (mpi/io) decodes file views with the int calls: a type made by a "_c" constructor with
 * small values must stay decodable there, as it would be in a program that called the
 * int form. MPICH records the large layout for every "_c" type; crmpi differs only for
 * types whose values fit, where both layouts describe the same call.
 *
 * Each one checks its arguments, has the engine keep them for MPI_Type_get_contents (in
 * the layout of section 4.1.13, type_contents.c), and lists the copies of its old type(s)
 * in typemap order; the engine (datatype/datatype.h) turns those into runs and bounds.
 * Errors belong to no communicator, so MPI_COMM_WORLD's handler decides (section 8.3).
 * Error classes follow Open MPI: a negative count is MPI_ERR_COUNT, a negative blocklength
 * or a bad array MPI_ERR_ARG, a null old type MPI_ERR_TYPE.
 */
#include <limits.h>
#include <stdlib.h>

#include "crmpi_status.h"
#include "type_internal.h"

#pragma weak MPI_Type_contiguous = PMPI_Type_contiguous
#pragma weak MPI_Type_vector = PMPI_Type_vector
#pragma weak MPI_Type_create_hvector = PMPI_Type_create_hvector
#pragma weak MPI_Type_indexed = PMPI_Type_indexed
#pragma weak MPI_Type_create_hindexed = PMPI_Type_create_hindexed
#pragma weak MPI_Type_create_indexed_block = PMPI_Type_create_indexed_block
#pragma weak MPI_Type_create_hindexed_block = PMPI_Type_create_hindexed_block
#pragma weak MPI_Type_create_struct = PMPI_Type_create_struct
#pragma weak MPI_Type_create_subarray = PMPI_Type_create_subarray
#pragma weak MPI_Type_create_resized = PMPI_Type_create_resized
#pragma weak MPI_Type_dup = PMPI_Type_dup
#pragma weak MPI_Type_contiguous_c = PMPI_Type_contiguous_c
#pragma weak MPI_Type_vector_c = PMPI_Type_vector_c
#pragma weak MPI_Type_create_hvector_c = PMPI_Type_create_hvector_c
#pragma weak MPI_Type_indexed_c = PMPI_Type_indexed_c
#pragma weak MPI_Type_create_hindexed_c = PMPI_Type_create_hindexed_c
#pragma weak MPI_Type_create_indexed_block_c = PMPI_Type_create_indexed_block_c
#pragma weak MPI_Type_create_hindexed_block_c = PMPI_Type_create_hindexed_block_c
#pragma weak MPI_Type_create_struct_c = PMPI_Type_create_struct_c
#pragma weak MPI_Type_create_subarray_c = PMPI_Type_create_subarray_c
#pragma weak MPI_Type_create_resized_c = PMPI_Type_create_resized_c

/* A "_c" form's byte displacements are MPI_Count, the engine's ptrdiff_t: no value is lost. */
_Static_assert(sizeof(MPI_Count) == sizeof(MPI_Aint), "MPI_Count and MPI_Aint differ in width");

/* The checks every constructor makes of its count, old type and result argument. */
static bool datatype_create_check(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype,
                                  crmpi_type_check_t *check)
{
    if (count < 0) {
        return crmpi_type_check_fail(check, MPI_ERR_COUNT, "count is negative");
    }
    if (oldtype == MPI_DATATYPE_NULL) {
        return crmpi_type_check_fail(check, MPI_ERR_TYPE, "oldtype is MPI_DATATYPE_NULL");
    }
    if (newtype == NULL) {
        return crmpi_type_check_fail(check, MPI_ERR_ARG, "newtype is NULL");
    }
    return false;
}

/* A block of negative length is an error (MPI_ERR_ARG, as in Open MPI). */
static bool datatype_check_blocklength(MPI_Count blocklength, crmpi_type_check_t *check)
{
    if (blocklength < 0) {
        return crmpi_type_check_failf(check, MPI_ERR_ARG,
                                      "blocklength is %lld; it must not be negative", blocklength);
    }
    return false;
}

/* The `count` blocklengths of the indexed and struct constructors: there, none negative. */
static bool datatype_check_blocklengths(MPI_Count count, crmpi_count_array_t blocklengths,
                                        crmpi_type_check_t *check)
{
    if (count > 0 && (blocklengths).base == NULL) {
        return crmpi_type_check_fail(check, MPI_ERR_ARG, "array_of_blocklengths is NULL");
    }
    for (MPI_Count i = 0; i < count; i++) {
        MPI_Count blocklength = crmpi_count_array_at(blocklengths, i);

        if (blocklength < 0) {
            return crmpi_type_check_failf(
                check, MPI_ERR_ARG, "array_of_blocklengths[%lld] is %lld; it must not be negative",
                i, blocklength);
        }
    }
    return false;
}

bool crmpi_count_array_fits_int(crmpi_count_array_t values, MPI_Count n)
{
    if (values.width == CRMPI_COUNT_ARRAY_INT) {
        return true;
    }
    for (MPI_Count i = 0; i < n; i++) {
        MPI_Count value = crmpi_count_array_at(values, i);

        if (value < INT_MIN || value > INT_MAX) {
            return false;
        }
    }
    return true;
}

/* The value fits an int. */
static bool datatype_fits_int(MPI_Count value)
{
    return value >= INT_MIN && value <= INT_MAX;
}

bool crmpi_type_record_start(crmpi_datatype_typemap_t *map, int combiner, bool large,
                             size_t num_ints, size_t num_counts, size_t num_disps, size_t num_types,
                             crmpi_type_record_t *rec_out)
{
    crmpi_datatype_args_t *args;

    crmpi_datatype_typemap_init(map);
    if (large) {
        args = crmpi_datatype_typemap_keep_args_counts(map, combiner, num_ints, 0,
                                                       num_counts + num_disps, num_types);
    } else {
        args = crmpi_datatype_typemap_keep_args(map, combiner, num_ints + num_counts, num_disps,
                                                num_types);
    }
    if (args == NULL) {
        return false;
    }
    *rec_out = (crmpi_type_record_t){.args = args, .large = large};
    return true;
}

/* Raise the error a check found, on no communicator (MPI-3.1 section 8.3). */
static int datatype_create_raise(const crmpi_type_check_t *check, const char *func_name)
{
    return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, check->errclass, func_name, check->detail);
}

/* The error of a constructor whose record could not be allocated. */
static int datatype_create_fail_record(const char *func_name)
{
    return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_INTERN, func_name,
                                       "out of memory for the new type");
}

/* Make the type the map describes, hand it out, and end the call. */
static int datatype_create_finish(crmpi_datatype_typemap_t *map, MPI_Datatype *newtype,
                                  const char *func_name)
{
    MPI_Datatype type;
    int rc = crmpi_datatype_typemap_finish(map, &type);

    if (rc != CRMPI_OK) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, crmpi_type_error_class(rc), func_name,
                                           map->error_detail);
    }
    *newtype = type;
    crmpi_unlock();
    return MPI_SUCCESS;
}

static int datatype_create_contiguous(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype,
                                      const char *func_name)
{
    crmpi_datatype_typemap_t map;
    crmpi_type_record_t rec;
    crmpi_type_check_t check;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check && datatype_create_check(count, oldtype, newtype, &check)) {
        return datatype_create_raise(&check, func_name);
    }
    if (!crmpi_type_record_start(&map, MPI_COMBINER_CONTIGUOUS, !datatype_fits_int(count), 0, 1, 0,
                                 1, &rec)) {
        return datatype_create_fail_record(func_name);
    }
    crmpi_type_record_count(&rec, count);
    rec.args->types[0] = oldtype;
    crmpi_datatype_typemap_append(&map, 0, (size_t)count, oldtype->extent, oldtype);
    return datatype_create_finish(&map, newtype, func_name);
}

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return datatype_create_contiguous(count, oldtype, newtype, "MPI_Type_contiguous");
}

int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return datatype_create_contiguous(count, oldtype, newtype, "MPI_Type_contiguous_c");
}

/* Blocks of `blocklength` old elements, block i at i * stride_bytes (vector, hvector). */
static void datatype_append_strided(crmpi_datatype_typemap_t *map, MPI_Count count,
                                    MPI_Count blocklength, MPI_Aint stride_bytes,
                                    MPI_Datatype oldtype)
{
    for (MPI_Count i = 0; i < count && map->status == CRMPI_OK; i++) {
        MPI_Aint disp = crmpi_datatype_typemap_mul(map, i, stride_bytes);

        crmpi_datatype_typemap_append(map, disp, (size_t)blocklength, oldtype->extent, oldtype);
    }
}

static int datatype_create_vector(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                                  MPI_Datatype oldtype, MPI_Datatype *newtype,
                                  const char *func_name)
{
    crmpi_datatype_typemap_t map;
    crmpi_type_record_t rec;
    crmpi_type_check_t check;
    bool large =
        !datatype_fits_int(count) || !datatype_fits_int(blocklength) || !datatype_fits_int(stride);

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check && (datatype_create_check(count, oldtype, newtype, &check) ||
                                        datatype_check_blocklength(blocklength, &check))) {
        return datatype_create_raise(&check, func_name);
    }
    if (!crmpi_type_record_start(&map, MPI_COMBINER_VECTOR, large, 0, 3, 0, 1, &rec)) {
        return datatype_create_fail_record(func_name);
    }
    crmpi_type_record_count(&rec, count);
    crmpi_type_record_count(&rec, blocklength);
    crmpi_type_record_count(&rec, stride);
    rec.args->types[0] = oldtype;
    /* The stride counts elements of oldtype, that is extents (MPI-3.1 section 4.1.2). */
    datatype_append_strided(&map, count, blocklength,
                            crmpi_datatype_typemap_mul(&map, stride, oldtype->extent), oldtype);
    return datatype_create_finish(&map, newtype, func_name);
}

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    return datatype_create_vector(count, blocklength, stride, oldtype, newtype, "MPI_Type_vector");
}

int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return datatype_create_vector(count, blocklength, stride, oldtype, newtype,
                                  "MPI_Type_vector_c");
}

int crmpi_type_create_hvector(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                              MPI_Datatype oldtype, MPI_Datatype *newtype, const char *func_name)
{
    crmpi_datatype_typemap_t map;
    crmpi_type_record_t rec;
    crmpi_type_check_t check;
    bool large = !datatype_fits_int(count) || !datatype_fits_int(blocklength);

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check && (datatype_create_check(count, oldtype, newtype, &check) ||
                                        datatype_check_blocklength(blocklength, &check))) {
        return datatype_create_raise(&check, func_name);
    }
    if (!crmpi_type_record_start(&map, MPI_COMBINER_HVECTOR, large, 0, 2, 1, 1, &rec)) {
        return datatype_create_fail_record(func_name);
    }
    crmpi_type_record_count(&rec, count);
    crmpi_type_record_count(&rec, blocklength);
    crmpi_type_record_disp(&rec, stride);
    rec.args->types[0] = oldtype;
    datatype_append_strided(&map, count, blocklength, (MPI_Aint)stride, oldtype);
    return datatype_create_finish(&map, newtype, func_name);
}

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    return crmpi_type_create_hvector(count, blocklength, stride, oldtype, newtype,
                                     "MPI_Type_create_hvector");
}

int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                               MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return crmpi_type_create_hvector(count, blocklength, stride, oldtype, newtype,
                                     "MPI_Type_create_hvector_c");
}

/* The checks of the indexed family but their blocklengths: the displacements may be NULL
 * only when there are none. */
static bool datatype_check_indexed(MPI_Count count, crmpi_count_array_t displacements,
                                   MPI_Datatype oldtype, MPI_Datatype *newtype,
                                   crmpi_type_check_t *check)
{
    if (datatype_create_check(count, oldtype, newtype, check)) {
        return true;
    }
    if (count > 0 && (displacements).base == NULL) {
        return crmpi_type_check_fail(check, MPI_ERR_ARG, "array_of_displacements is NULL");
    }
    return false;
}

/* Record count, then the count entries of each array, in the int or the large layout. */
static void datatype_record_arrays(crmpi_type_record_t *rec, MPI_Count count,
                                   crmpi_count_array_t blocklengths,
                                   crmpi_count_array_t displacements, bool disps_in_bytes)
{
    crmpi_type_record_count(rec, count);
    for (MPI_Count i = 0; i < count; i++) {
        crmpi_type_record_count(rec, crmpi_count_array_at(blocklengths, i));
    }
    for (MPI_Count i = 0; i < count; i++) {
        if (disps_in_bytes) {
            crmpi_type_record_disp(rec, crmpi_count_array_at(displacements, i));
        } else {
            crmpi_type_record_count(rec, crmpi_count_array_at(displacements, i));
        }
    }
}

static int datatype_create_indexed(MPI_Count count, crmpi_count_array_t blocklengths,
                                   crmpi_count_array_t displacements, MPI_Datatype oldtype,
                                   MPI_Datatype *newtype, const char *func_name)
{
    crmpi_datatype_typemap_t map;
    crmpi_type_record_t rec;
    crmpi_type_check_t check;
    bool large;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check &&
        (datatype_check_indexed(count, displacements, oldtype, newtype, &check) ||
         datatype_check_blocklengths(count, blocklengths, &check))) {
        return datatype_create_raise(&check, func_name);
    }
    large = !datatype_fits_int(count) || !crmpi_count_array_fits_int(blocklengths, count) ||
            !crmpi_count_array_fits_int(displacements, count);
    if (!crmpi_type_record_start(&map, MPI_COMBINER_INDEXED, large, 0, 2 * (size_t)count + 1, 0, 1,
                                 &rec)) {
        return datatype_create_fail_record(func_name);
    }
    datatype_record_arrays(&rec, count, blocklengths, displacements, false);
    rec.args->types[0] = oldtype;
    for (MPI_Count i = 0; i < count; i++) {
        /* Displacements count extents of oldtype (MPI-3.1 section 4.1.2). */
        MPI_Aint disp = crmpi_datatype_typemap_mul(
            &map, (MPI_Aint)crmpi_count_array_at(displacements, i), oldtype->extent);

        crmpi_datatype_typemap_append(&map, disp, (size_t)crmpi_count_array_at(blocklengths, i),
                                      oldtype->extent, oldtype);
    }
    return datatype_create_finish(&map, newtype, func_name);
}

int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                      const int array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    return datatype_create_indexed(count, crmpi_count_array_int(array_of_blocklengths),
                                   crmpi_count_array_int(array_of_displacements), oldtype, newtype,
                                   "MPI_Type_indexed");
}

int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                        const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                        MPI_Datatype *newtype)
{
    return datatype_create_indexed(count, crmpi_count_array_count(array_of_blocklengths),
                                   crmpi_count_array_count(array_of_displacements), oldtype,
                                   newtype, "MPI_Type_indexed_c");
}

int crmpi_type_create_hindexed(MPI_Count count, crmpi_count_array_t array_of_blocklengths,
                               crmpi_count_array_t array_of_displacements, MPI_Datatype oldtype,
                               MPI_Datatype *newtype, const char *func_name)
{
    crmpi_datatype_typemap_t map;
    crmpi_type_record_t rec;
    crmpi_type_check_t check;
    bool large;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check &&
        (datatype_check_indexed(count, array_of_displacements, oldtype, newtype, &check) ||
         datatype_check_blocklengths(count, array_of_blocklengths, &check))) {
        return datatype_create_raise(&check, func_name);
    }
    large = !datatype_fits_int(count) || !crmpi_count_array_fits_int(array_of_blocklengths, count);
    if (!crmpi_type_record_start(&map, MPI_COMBINER_HINDEXED, large, 0, (size_t)count + 1,
                                 (size_t)count, 1, &rec)) {
        return datatype_create_fail_record(func_name);
    }
    datatype_record_arrays(&rec, count, array_of_blocklengths, array_of_displacements, true);
    rec.args->types[0] = oldtype;
    for (MPI_Count i = 0; i < count; i++) {
        crmpi_datatype_typemap_append(
            &map, (MPI_Aint)crmpi_count_array_at(array_of_displacements, i),
            (size_t)crmpi_count_array_at(array_of_blocklengths, i), oldtype->extent, oldtype);
    }
    return datatype_create_finish(&map, newtype, func_name);
}

int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    return crmpi_type_create_hindexed(count, crmpi_count_array_int(array_of_blocklengths),
                                      crmpi_count_array_aint(array_of_displacements), oldtype,
                                      newtype, "MPI_Type_create_hindexed");
}

int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                MPI_Datatype *newtype)
{
    return crmpi_type_create_hindexed(count, crmpi_count_array_count(array_of_blocklengths),
                                      crmpi_count_array_count(array_of_displacements), oldtype,
                                      newtype, "MPI_Type_create_hindexed_c");
}

/* The body of indexed_block and hindexed_block: displacements in extents or in bytes. */
static int datatype_create_indexed_block(MPI_Count count, MPI_Count blocklength,
                                         crmpi_count_array_t displacements, bool in_bytes,
                                         MPI_Datatype oldtype, MPI_Datatype *newtype,
                                         const char *func_name)
{
    crmpi_datatype_typemap_t map;
    crmpi_type_record_t rec;
    crmpi_type_check_t check;
    int combiner = in_bytes ? MPI_COMBINER_HINDEXED_BLOCK : MPI_COMBINER_INDEXED_BLOCK;
    bool large;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check &&
        (datatype_check_indexed(count, displacements, oldtype, newtype, &check) ||
         datatype_check_blocklength(blocklength, &check))) {
        return datatype_create_raise(&check, func_name);
    }
    large = !datatype_fits_int(count) || !datatype_fits_int(blocklength) ||
            (!in_bytes && !crmpi_count_array_fits_int(displacements, count));
    if (!crmpi_type_record_start(&map, combiner, large, 0, in_bytes ? 2 : (size_t)count + 2,
                                 in_bytes ? (size_t)count : 0, 1, &rec)) {
        return datatype_create_fail_record(func_name);
    }
    crmpi_type_record_count(&rec, count);
    crmpi_type_record_count(&rec, blocklength);
    for (MPI_Count i = 0; i < count; i++) {
        if (in_bytes) {
            crmpi_type_record_disp(&rec, crmpi_count_array_at(displacements, i));
        } else {
            crmpi_type_record_count(&rec, crmpi_count_array_at(displacements, i));
        }
    }
    rec.args->types[0] = oldtype;
    for (MPI_Count i = 0; i < count; i++) {
        MPI_Aint disp = (MPI_Aint)crmpi_count_array_at(displacements, i);

        if (!in_bytes) {
            disp = crmpi_datatype_typemap_mul(&map, disp, oldtype->extent);
        }
        crmpi_datatype_typemap_append(&map, disp, (size_t)blocklength, oldtype->extent, oldtype);
    }
    return datatype_create_finish(&map, newtype, func_name);
}
int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return datatype_create_indexed_block(count, blocklength,
                                         crmpi_count_array_int(array_of_displacements), false,
                                         oldtype, newtype, "MPI_Type_create_indexed_block");
}

int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
                                     const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                     MPI_Datatype *newtype)
{
    return datatype_create_indexed_block(count, blocklength,
                                         crmpi_count_array_count(array_of_displacements), false,
                                         oldtype, newtype, "MPI_Type_create_indexed_block_c");
}

int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                    MPI_Datatype *newtype)
{
    return datatype_create_indexed_block(count, blocklength,
                                         crmpi_count_array_aint(array_of_displacements), true,
                                         oldtype, newtype, "MPI_Type_create_hindexed_block");
}

int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
                                      const MPI_Count array_of_displacements[],
                                      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return datatype_create_indexed_block(count, blocklength,
                                         crmpi_count_array_count(array_of_displacements), true,
                                         oldtype, newtype, "MPI_Type_create_hindexed_block_c");
}

/* The checks of MPI_Type_create_struct. */
static bool datatype_check_struct(MPI_Count count, crmpi_count_array_t blocklengths,
                                  crmpi_count_array_t displs, const MPI_Datatype types[],
                                  MPI_Datatype *newtype, crmpi_type_check_t *check)
{
    if (count < 0) {
        return crmpi_type_check_fail(check, MPI_ERR_COUNT, "count is negative");
    }
    if (count > 0 && ((displs).base == NULL || types == NULL)) {
        return crmpi_type_check_fail(check, MPI_ERR_ARG,
                                     "array_of_displacements or array_of_types is NULL");
    }
    if (newtype == NULL) {
        return crmpi_type_check_fail(check, MPI_ERR_ARG, "newtype is NULL");
    }
    for (MPI_Count i = 0; i < count; i++) {
        if (types[i] == MPI_DATATYPE_NULL) {
            return crmpi_type_check_failf(check, MPI_ERR_TYPE,
                                          "array_of_types[%lld] is MPI_DATATYPE_NULL", i);
        }
    }
    return datatype_check_blocklengths(count, blocklengths, check);
}

int crmpi_type_create_struct(MPI_Count count, crmpi_count_array_t array_of_blocklengths,
                             crmpi_count_array_t array_of_displacements,
                             const MPI_Datatype array_of_types[], MPI_Datatype *newtype,
                             const char *func_name)
{
    crmpi_datatype_typemap_t map;
    crmpi_type_record_t rec;
    crmpi_type_check_t check;
    bool large;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check &&
        datatype_check_struct(count, array_of_blocklengths, array_of_displacements, array_of_types,
                              newtype, &check)) {
        return datatype_create_raise(&check, func_name);
    }
    large = !datatype_fits_int(count) || !crmpi_count_array_fits_int(array_of_blocklengths, count);
    if (!crmpi_type_record_start(&map, MPI_COMBINER_STRUCT, large, 0, (size_t)count + 1,
                                 (size_t)count, (size_t)count, &rec)) {
        return datatype_create_fail_record(func_name);
    }
    datatype_record_arrays(&rec, count, array_of_blocklengths, array_of_displacements, true);
    for (MPI_Count i = 0; i < count; i++) {
        MPI_Datatype member = array_of_types[i];

        rec.args->types[i] = member;
        crmpi_datatype_typemap_append(
            &map, (MPI_Aint)crmpi_count_array_at(array_of_displacements, i),
            (size_t)crmpi_count_array_at(array_of_blocklengths, i), member->extent, member);
    }
    return datatype_create_finish(&map, newtype, func_name);
}

int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                            const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    return crmpi_type_create_struct(count, crmpi_count_array_int(array_of_blocklengths),
                                    crmpi_count_array_aint(array_of_displacements), array_of_types,
                                    newtype, "MPI_Type_create_struct");
}

int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                              const MPI_Count array_of_displacements[],
                              const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    return crmpi_type_create_struct(count, crmpi_count_array_count(array_of_blocklengths),
                                    crmpi_count_array_count(array_of_displacements), array_of_types,
                                    newtype, "MPI_Type_create_struct_c");
}

/* The arrays of a subarray, as either form passes them. */
typedef struct datatype_subarray {
    int ndims;                    /* dimensions */
    crmpi_count_array_t sizes;    /* the array's size in each dimension */
    crmpi_count_array_t subsizes; /* the subarray's size in each dimension */
    crmpi_count_array_t starts;   /* the subarray's first index in each dimension */
    int order;                    /* MPI_ORDER_C or MPI_ORDER_FORTRAN */
} datatype_subarray_t;

/* The checks of MPI_Type_create_subarray (MPI-3.1 section 4.1.3). */
static bool datatype_check_subarray(const datatype_subarray_t *sub, MPI_Datatype oldtype,
                                    MPI_Datatype *newtype, crmpi_type_check_t *check)
{
    if (datatype_create_check(sub->ndims, oldtype, newtype, check)) {
        return true;
    }
    if (sub->ndims == 0) {
        return crmpi_type_check_fail(check, MPI_ERR_ARG,
                                     "ndims is 0; an array has at least one dimension");
    }
    if ((sub->sizes).base == NULL || (sub->subsizes).base == NULL || (sub->starts).base == NULL) {
        return crmpi_type_check_fail(
            check, MPI_ERR_ARG, "array_of_sizes, array_of_subsizes or array_of_starts is NULL");
    }
    if (sub->order != MPI_ORDER_C && sub->order != MPI_ORDER_FORTRAN) {
        return crmpi_type_check_failf(check, MPI_ERR_ARG,
                                      "order is %d; it must be MPI_ORDER_C or MPI_ORDER_FORTRAN",
                                      sub->order);
    }
    for (int d = 0; d < sub->ndims; d++) {
        MPI_Count size = crmpi_count_array_at(sub->sizes, d);
        MPI_Count subsize = crmpi_count_array_at(sub->subsizes, d);
        MPI_Count start = crmpi_count_array_at(sub->starts, d);

        /* Section 4.1.3: sizes >= 1, 1 <= subsizes <= sizes, and the subarray inside the
         * array: 0 <= starts <= sizes - subsizes. */
        if (size < 1 || subsize < 1 || subsize > size || start < 0 || start > size - subsize) {
            return crmpi_type_check_failf(
                check, MPI_ERR_ARG,
                "dimension %d has size %lld, subsize %lld, start %lld; it needs 1 <= subsize <= "
                "size and 0 <= start <= size - subsize",
                d, size, subsize, start);
        }
    }
    return false;
}

/* The array dimension at `level` of the subarray's nesting, level 0 the slowest varying. */
static int datatype_subarray_dim(int level, int ndims, int order)
{
    return order == MPI_ORDER_C ? level : ndims - 1 - level;
}

/* Entry of `values` for the dimension at `level`. */
static MPI_Aint datatype_subarray_at(const datatype_subarray_t *sub, crmpi_count_array_t values,
                                     int level)
{
    return (MPI_Aint)crmpi_count_array_at(values,
                                          datatype_subarray_dim(level, sub->ndims, sub->order));
}

/*
 * The subarray's typemap: rows of subsizes[fastest] old elements, in the array's order
 * (C: the last dimension varies fastest; Fortran: the first), as the nested vectors of
 * MPI-3.1 section 4.1.3 list them. `level` 0 is the slowest dimension.
 */
static void datatype_append_subarray(crmpi_datatype_typemap_t *map, const datatype_subarray_t *sub,
                                     MPI_Datatype oldtype)
{
    int ndims = sub->ndims;
    /* Per level: bytes between consecutive indices, and the odometer over the subarray. */
    MPI_Aint *strides = malloc(2 * (size_t)ndims * sizeof(MPI_Aint));
    MPI_Aint *index = strides + ndims;
    MPI_Aint base = 0;

    if (strides == NULL) {
        crmpi_datatype_typemap_fail(map, CRMPI_ERR_OUT_OF_RESOURCE,
                                    "out of memory while building the subarray");
        return;
    }
    strides[ndims - 1] = oldtype->extent;
    for (int level = ndims - 2; level >= 0; level--) {
        strides[level] = crmpi_datatype_typemap_mul(
            map, strides[level + 1], datatype_subarray_at(sub, sub->sizes, level + 1));
    }
    for (int level = 0; level < ndims; level++) {
        base = crmpi_datatype_typemap_add(
            map, base,
            crmpi_datatype_typemap_mul(map, datatype_subarray_at(sub, sub->starts, level),
                                       strides[level]));
        index[level] = 0;
    }
    /* The whole array's extent bounds every displacement below: no overflow past this. */
    MPI_Aint extent =
        crmpi_datatype_typemap_mul(map, strides[0], datatype_subarray_at(sub, sub->sizes, 0));

    while (map->status == CRMPI_OK) {
        MPI_Aint disp = base;
        int level;

        for (level = 0; level < ndims - 1; level++) {
            disp += index[level] * strides[level];
        }
        crmpi_datatype_typemap_append(map, disp,
                                      (size_t)datatype_subarray_at(sub, sub->subsizes, ndims - 1),
                                      oldtype->extent, oldtype);
        /* Next row: advance the odometer over the slower levels. */
        for (level = ndims - 2; level >= 0; level--) {
            if (++index[level] < datatype_subarray_at(sub, sub->subsizes, level)) {
                break;
            }
            index[level] = 0;
        }
        if (level < 0) {
            break;
        }
    }
    /* The subarray spans the whole array: lb 0, extent of all of it (section 4.1.3). */
    crmpi_datatype_typemap_set_bounds(map, 0, extent);
    free(strides);
}

static int datatype_create_subarray(const datatype_subarray_t *sub, MPI_Datatype oldtype,
                                    MPI_Datatype *newtype, const char *func_name)
{
    crmpi_datatype_typemap_t map;
    crmpi_type_record_t rec;
    crmpi_type_check_t check;
    int ndims = sub->ndims;
    bool large;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check && datatype_check_subarray(sub, oldtype, newtype, &check)) {
        return datatype_create_raise(&check, func_name);
    }
    large = !crmpi_count_array_fits_int(sub->sizes, ndims) ||
            !crmpi_count_array_fits_int(sub->subsizes, ndims) ||
            !crmpi_count_array_fits_int(sub->starts, ndims);
    if (!crmpi_type_record_start(&map, MPI_COMBINER_SUBARRAY, large, 2, 3 * (size_t)ndims, 0, 1,
                                 &rec)) {
        return datatype_create_fail_record(func_name);
    }
    crmpi_type_record_int(&rec, ndims);
    for (int d = 0; d < ndims; d++) {
        crmpi_type_record_count(&rec, crmpi_count_array_at(sub->sizes, d));
    }
    for (int d = 0; d < ndims; d++) {
        crmpi_type_record_count(&rec, crmpi_count_array_at(sub->subsizes, d));
    }
    for (int d = 0; d < ndims; d++) {
        crmpi_type_record_count(&rec, crmpi_count_array_at(sub->starts, d));
    }
    crmpi_type_record_int(&rec, sub->order);
    rec.args->types[0] = oldtype;
    datatype_append_subarray(&map, sub, oldtype);
    return datatype_create_finish(&map, newtype, func_name);
}

int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                              const int array_of_starts[], int order, MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    datatype_subarray_t sub = {ndims, crmpi_count_array_int(array_of_sizes),
                               crmpi_count_array_int(array_of_subsizes),
                               crmpi_count_array_int(array_of_starts), order};

    return datatype_create_subarray(&sub, oldtype, newtype, "MPI_Type_create_subarray");
}

int PMPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[],
                                const MPI_Count array_of_subsizes[],
                                const MPI_Count array_of_starts[], int order, MPI_Datatype oldtype,
                                MPI_Datatype *newtype)
{
    datatype_subarray_t sub = {ndims, crmpi_count_array_count(array_of_sizes),
                               crmpi_count_array_count(array_of_subsizes),
                               crmpi_count_array_count(array_of_starts), order};

    return datatype_create_subarray(&sub, oldtype, newtype, "MPI_Type_create_subarray_c");
}

/* lb and extent are MPI_Aint in the int form, MPI_Count (as wide) in the "_c" form: both
 * always fit the int layout, which a "_c" type therefore keeps. */
static int datatype_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                                   MPI_Datatype *newtype, const char *func_name)
{
    crmpi_datatype_typemap_t map;
    crmpi_type_record_t rec;
    crmpi_type_check_t check;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check && datatype_create_check(0, oldtype, newtype, &check)) {
        return datatype_create_raise(&check, func_name);
    }
    if (!crmpi_type_record_start(&map, MPI_COMBINER_RESIZED, false, 0, 0, 2, 1, &rec)) {
        return datatype_create_fail_record(func_name);
    }
    crmpi_type_record_disp(&rec, lb);
    crmpi_type_record_disp(&rec, extent);
    rec.args->types[0] = oldtype;
    /* Same data; the new lb and ub markers replace every bound (MPI-3.1 section 4.1.7). */
    crmpi_datatype_typemap_append(&map, 0, 1, oldtype->extent, oldtype);
    crmpi_datatype_typemap_set_bounds(&map, lb, extent);
    return datatype_create_finish(&map, newtype, func_name);
}

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype *newtype)
{
    return datatype_create_resized(oldtype, lb, extent, newtype, "MPI_Type_create_resized");
}

int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
                               MPI_Datatype *newtype)
{
    return datatype_create_resized(oldtype, (MPI_Aint)lb, (MPI_Aint)extent, newtype,
                                   "MPI_Type_create_resized_c");
}

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char func_name[] = "MPI_Type_dup";
    crmpi_datatype_typemap_t map;
    crmpi_type_record_t rec;
    MPI_Datatype type;
    crmpi_type_check_t check;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check && datatype_create_check(0, oldtype, newtype, &check)) {
        return datatype_create_raise(&check, func_name);
    }
    if (!crmpi_type_record_start(&map, MPI_COMBINER_DUP, false, 0, 0, 0, 1, &rec)) {
        return datatype_create_fail_record(func_name);
    }
    rec.args->types[0] = oldtype;
    /* One copy at 0 reproduces the runs and the bounds (markers stay markers). */
    crmpi_datatype_typemap_append(&map, 0, 1, oldtype->extent, oldtype);
    rc = crmpi_datatype_typemap_finish(&map, &type);
    if (rc != CRMPI_OK) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, crmpi_type_error_class(rc), func_name,
                                           map.error_detail);
    }
    /* "The new type has the same committed state as the old" (MPI-3.1 section 4.1.10).
     * Like a duplicated communicator's (section 6.8), the name is not copied; the
     * attributes are, through their copy callbacks (section 6.7.4). */
    type->committed = oldtype->committed;
    int err = crmpi_type_attr_copy_all(oldtype, type);

    if (err != MPI_SUCCESS) {
        /* What was copied is deleted again; the new type never reaches the application. */
        crmpi_type_attr_delete_all(type);
        crmpi_datatype_release(type);
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, err, func_name,
                                           "an attribute's copy callback failed");
    }
    *newtype = type;
    crmpi_unlock();
    return MPI_SUCCESS;
}
