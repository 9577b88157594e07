/*
 * type_create.c: the datatype constructors of MPI-3.1 sections 4.1.2 and 4.1.3 (contiguous,
 * vector, hvector, indexed, hindexed, indexed_block, hindexed_block, struct, subarray),
 * MPI_Type_create_resized (4.1.7) and MPI_Type_dup (4.1.10).
 *
 * Each one checks its arguments, has the engine keep them for MPI_Type_get_contents (in
 * the layout of section 4.1.13, type_contents.c), and lists the copies of its old type(s)
 * in typemap order; the engine (datatype/datatype.h) turns those into runs and bounds.
 * Errors belong to no communicator, so MPI_COMM_WORLD's handler decides (section 8.3).
 * Error classes follow Open MPI: a negative count is MPI_ERR_COUNT, a negative blocklength
 * or a bad array MPI_ERR_ARG, a null old type MPI_ERR_TYPE.
 */
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

/* The checks every constructor makes of its count, old type and result argument. */
static bool datatype_create_check(int count, MPI_Datatype oldtype, MPI_Datatype *newtype,
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
static bool datatype_check_blocklength(int blocklength, crmpi_type_check_t *check)
{
    if (blocklength < 0) {
        return crmpi_type_check_failf(check, MPI_ERR_ARG,
                                      "blocklength is %d; it must not be negative", blocklength);
    }
    return false;
}

/* The `count` blocklengths of the indexed and struct constructors: there, none negative. */
static bool datatype_check_blocklengths(int count, const int blocklengths[],
                                        crmpi_type_check_t *check)
{
    if (count > 0 && blocklengths == NULL) {
        return crmpi_type_check_fail(check, MPI_ERR_ARG, "array_of_blocklengths is NULL");
    }
    for (int i = 0; i < count; i++) {
        if (blocklengths[i] < 0) {
            return crmpi_type_check_failf(
                check, MPI_ERR_ARG, "array_of_blocklengths[%d] is %d; it must not be negative", i,
                blocklengths[i]);
        }
    }
    return false;
}

/*
 * Start the typemap of a new type made by `combiner`, with room for the arguments
 * MPI_Type_get_contents returns (MPI-3.1 section 4.1.13: integers, addresses, datatypes).
 * @return the record to fill, or NULL when memory ran out (nothing to undo then).
 */
static crmpi_datatype_args_t *datatype_create_start(crmpi_datatype_typemap_t *map, int combiner,
                                                    size_t num_integers, size_t num_addresses,
                                                    size_t num_datatypes)
{
    crmpi_datatype_typemap_init(map);
    return crmpi_datatype_typemap_keep_args(map, combiner, num_integers, num_addresses,
                                            num_datatypes);
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

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char func_name[] = "MPI_Type_contiguous";
    crmpi_datatype_typemap_t map;
    crmpi_datatype_args_t *record;
    crmpi_type_check_t check;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check && datatype_create_check(count, oldtype, newtype, &check)) {
        return datatype_create_raise(&check, func_name);
    }
    record = datatype_create_start(&map, MPI_COMBINER_CONTIGUOUS, 1, 0, 1);
    if (record == NULL) {
        return datatype_create_fail_record(func_name);
    }
    record->ints[0] = count;
    record->types[0] = oldtype;
    crmpi_datatype_typemap_append(&map, 0, (size_t)count, oldtype->extent, oldtype);
    return datatype_create_finish(&map, newtype, func_name);
}

/* Blocks of `blocklength` old elements, block i at i * stride_bytes (vector, hvector). */
static void datatype_append_strided(crmpi_datatype_typemap_t *map, int count, int blocklength,
                                    MPI_Aint stride_bytes, MPI_Datatype oldtype)
{
    for (int i = 0; i < count; i++) {
        MPI_Aint disp = crmpi_datatype_typemap_mul(map, i, stride_bytes);

        crmpi_datatype_typemap_append(map, disp, (size_t)blocklength, oldtype->extent, oldtype);
    }
}

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    static const char func_name[] = "MPI_Type_vector";
    crmpi_datatype_typemap_t map;
    crmpi_datatype_args_t *record;
    crmpi_type_check_t check;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check && (datatype_create_check(count, oldtype, newtype, &check) ||
                                        datatype_check_blocklength(blocklength, &check))) {
        return datatype_create_raise(&check, func_name);
    }
    record = datatype_create_start(&map, MPI_COMBINER_VECTOR, 3, 0, 1);
    if (record == NULL) {
        return datatype_create_fail_record(func_name);
    }
    record->ints[0] = count;
    record->ints[1] = blocklength;
    record->ints[2] = stride;
    record->types[0] = oldtype;
    /* The stride counts elements of oldtype, that is extents (MPI-3.1 section 4.1.2). */
    datatype_append_strided(&map, count, blocklength,
                            crmpi_datatype_typemap_mul(&map, stride, oldtype->extent), oldtype);
    return datatype_create_finish(&map, newtype, func_name);
}

int crmpi_type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                              MPI_Datatype *newtype, const char *func_name)
{
    crmpi_datatype_typemap_t map;
    crmpi_datatype_args_t *record;
    crmpi_type_check_t check;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check && (datatype_create_check(count, oldtype, newtype, &check) ||
                                        datatype_check_blocklength(blocklength, &check))) {
        return datatype_create_raise(&check, func_name);
    }
    record = datatype_create_start(&map, MPI_COMBINER_HVECTOR, 2, 1, 1);
    if (record == NULL) {
        return datatype_create_fail_record(func_name);
    }
    record->ints[0] = count;
    record->ints[1] = blocklength;
    record->disps[0] = stride;
    record->types[0] = oldtype;
    datatype_append_strided(&map, count, blocklength, stride, oldtype);
    return datatype_create_finish(&map, newtype, func_name);
}

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    return crmpi_type_create_hvector(count, blocklength, stride, oldtype, newtype,
                                     "MPI_Type_create_hvector");
}

/* The checks of the indexed family but their blocklengths: the displacements may be NULL
 * only when there are none. */
static bool datatype_check_indexed(int count, const void *displacements, MPI_Datatype oldtype,
                                   MPI_Datatype *newtype, crmpi_type_check_t *check)
{
    if (datatype_create_check(count, oldtype, newtype, check)) {
        return true;
    }
    if (count > 0 && displacements == NULL) {
        return crmpi_type_check_fail(check, MPI_ERR_ARG, "array_of_displacements is NULL");
    }
    return false;
}

int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                      const int array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    static const char func_name[] = "MPI_Type_indexed";
    crmpi_datatype_typemap_t map;
    crmpi_datatype_args_t *record;
    crmpi_type_check_t check;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check &&
        (datatype_check_indexed(count, array_of_displacements, oldtype, newtype, &check) ||
         datatype_check_blocklengths(count, array_of_blocklengths, &check))) {
        return datatype_create_raise(&check, func_name);
    }
    record = datatype_create_start(&map, MPI_COMBINER_INDEXED, 2 * (size_t)count + 1, 0, 1);
    if (record == NULL) {
        return datatype_create_fail_record(func_name);
    }
    record->ints[0] = count;
    record->types[0] = oldtype;
    for (int i = 0; i < count; i++) {
        record->ints[1 + i] = array_of_blocklengths[i];
        record->ints[1 + count + i] = array_of_displacements[i];
        /* Displacements count extents of oldtype (MPI-3.1 section 4.1.2). */
        MPI_Aint disp =
            crmpi_datatype_typemap_mul(&map, array_of_displacements[i], oldtype->extent);

        crmpi_datatype_typemap_append(&map, disp, (size_t)array_of_blocklengths[i], oldtype->extent,
                                      oldtype);
    }
    return datatype_create_finish(&map, newtype, func_name);
}

int crmpi_type_create_hindexed(int count, const int array_of_blocklengths[],
                               const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                               MPI_Datatype *newtype, const char *func_name)
{
    crmpi_datatype_typemap_t map;
    crmpi_datatype_args_t *record;
    crmpi_type_check_t check;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check &&
        (datatype_check_indexed(count, array_of_displacements, oldtype, newtype, &check) ||
         datatype_check_blocklengths(count, array_of_blocklengths, &check))) {
        return datatype_create_raise(&check, func_name);
    }
    record =
        datatype_create_start(&map, MPI_COMBINER_HINDEXED, (size_t)count + 1, (size_t)count, 1);
    if (record == NULL) {
        return datatype_create_fail_record(func_name);
    }
    record->ints[0] = count;
    record->types[0] = oldtype;
    for (int i = 0; i < count; i++) {
        record->ints[1 + i] = array_of_blocklengths[i];
        record->disps[i] = array_of_displacements[i];
        crmpi_datatype_typemap_append(&map, array_of_displacements[i],
                                      (size_t)array_of_blocklengths[i], oldtype->extent, oldtype);
    }
    return datatype_create_finish(&map, newtype, func_name);
}

int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    return crmpi_type_create_hindexed(count, array_of_blocklengths, array_of_displacements, oldtype,
                                      newtype, "MPI_Type_create_hindexed");
}

int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char func_name[] = "MPI_Type_create_indexed_block";
    crmpi_datatype_typemap_t map;
    crmpi_datatype_args_t *record;
    crmpi_type_check_t check;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check &&
        (datatype_check_indexed(count, array_of_displacements, oldtype, newtype, &check) ||
         datatype_check_blocklength(blocklength, &check))) {
        return datatype_create_raise(&check, func_name);
    }
    record = datatype_create_start(&map, MPI_COMBINER_INDEXED_BLOCK, (size_t)count + 2, 0, 1);
    if (record == NULL) {
        return datatype_create_fail_record(func_name);
    }
    record->ints[0] = count;
    record->ints[1] = blocklength;
    record->types[0] = oldtype;
    for (int i = 0; i < count; i++) {
        record->ints[2 + i] = array_of_displacements[i];
        MPI_Aint disp =
            crmpi_datatype_typemap_mul(&map, array_of_displacements[i], oldtype->extent);

        crmpi_datatype_typemap_append(&map, disp, (size_t)blocklength, oldtype->extent, oldtype);
    }
    return datatype_create_finish(&map, newtype, func_name);
}

int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                    MPI_Datatype *newtype)
{
    static const char func_name[] = "MPI_Type_create_hindexed_block";
    crmpi_datatype_typemap_t map;
    crmpi_datatype_args_t *record;
    crmpi_type_check_t check;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check &&
        (datatype_check_indexed(count, array_of_displacements, oldtype, newtype, &check) ||
         datatype_check_blocklength(blocklength, &check))) {
        return datatype_create_raise(&check, func_name);
    }
    record = datatype_create_start(&map, MPI_COMBINER_HINDEXED_BLOCK, 2, (size_t)count, 1);
    if (record == NULL) {
        return datatype_create_fail_record(func_name);
    }
    record->ints[0] = count;
    record->ints[1] = blocklength;
    record->types[0] = oldtype;
    for (int i = 0; i < count; i++) {
        record->disps[i] = array_of_displacements[i];
        crmpi_datatype_typemap_append(&map, array_of_displacements[i], (size_t)blocklength,
                                      oldtype->extent, oldtype);
    }
    return datatype_create_finish(&map, newtype, func_name);
}

/* The checks of MPI_Type_create_struct. */
static bool datatype_check_struct(int count, const int blocklengths[], const MPI_Aint displs[],
                                  const MPI_Datatype types[], MPI_Datatype *newtype,
                                  crmpi_type_check_t *check)
{
    if (count < 0) {
        return crmpi_type_check_fail(check, MPI_ERR_COUNT, "count is negative");
    }
    if (count > 0 && (displs == NULL || types == NULL)) {
        return crmpi_type_check_fail(check, MPI_ERR_ARG,
                                     "array_of_displacements or array_of_types is NULL");
    }
    if (newtype == NULL) {
        return crmpi_type_check_fail(check, MPI_ERR_ARG, "newtype is NULL");
    }
    for (int i = 0; i < count; i++) {
        if (types[i] == MPI_DATATYPE_NULL) {
            return crmpi_type_check_failf(check, MPI_ERR_TYPE,
                                          "array_of_types[%d] is MPI_DATATYPE_NULL", i);
        }
    }
    return datatype_check_blocklengths(count, blocklengths, check);
}

int crmpi_type_create_struct(int count, const int array_of_blocklengths[],
                             const MPI_Aint array_of_displacements[],
                             const MPI_Datatype array_of_types[], MPI_Datatype *newtype,
                             const char *func_name)
{
    crmpi_datatype_typemap_t map;
    crmpi_datatype_args_t *record;
    crmpi_type_check_t check;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check &&
        datatype_check_struct(count, array_of_blocklengths, array_of_displacements, array_of_types,
                              newtype, &check)) {
        return datatype_create_raise(&check, func_name);
    }
    record = datatype_create_start(&map, MPI_COMBINER_STRUCT, (size_t)count + 1, (size_t)count,
                                   (size_t)count);
    if (record == NULL) {
        return datatype_create_fail_record(func_name);
    }
    record->ints[0] = count;
    for (int i = 0; i < count; i++) {
        MPI_Datatype member = array_of_types[i];

        record->ints[1 + i] = array_of_blocklengths[i];
        record->disps[i] = array_of_displacements[i];
        record->types[i] = member;
        crmpi_datatype_typemap_append(&map, array_of_displacements[i],
                                      (size_t)array_of_blocklengths[i], member->extent, member);
    }
    return datatype_create_finish(&map, newtype, func_name);
}

int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                            const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    return crmpi_type_create_struct(count, array_of_blocklengths, array_of_displacements,
                                    array_of_types, newtype, "MPI_Type_create_struct");
}

/* The checks of MPI_Type_create_subarray (MPI-3.1 section 4.1.3). */
static bool datatype_check_subarray(int ndims, const int sizes[], const int subsizes[],
                                    const int starts[], int order, MPI_Datatype oldtype,
                                    MPI_Datatype *newtype, crmpi_type_check_t *check)
{
    if (datatype_create_check(ndims, oldtype, newtype, check)) {
        return true;
    }
    if (ndims == 0) {
        return crmpi_type_check_fail(check, MPI_ERR_ARG,
                                     "ndims is 0; an array has at least one dimension");
    }
    if (sizes == NULL || subsizes == NULL || starts == NULL) {
        return crmpi_type_check_fail(
            check, MPI_ERR_ARG, "array_of_sizes, array_of_subsizes or array_of_starts is NULL");
    }
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN) {
        return crmpi_type_check_failf(
            check, MPI_ERR_ARG, "order is %d; it must be MPI_ORDER_C or MPI_ORDER_FORTRAN", order);
    }
    for (int d = 0; d < ndims; d++) {
        /* Section 4.1.3: sizes >= 1, 1 <= subsizes <= sizes, and the subarray inside the
         * array: 0 <= starts <= sizes - subsizes. */
        if (sizes[d] < 1 || subsizes[d] < 1 || subsizes[d] > sizes[d] || starts[d] < 0 ||
            starts[d] > sizes[d] - subsizes[d]) {
            return crmpi_type_check_failf(
                check, MPI_ERR_ARG,
                "dimension %d has size %d, subsize %d, start %d; it needs 1 <= subsize <= size "
                "and 0 <= start <= size - subsize",
                d, sizes[d], subsizes[d], starts[d]);
        }
    }
    return false;
}

/* The array dimension at `level` of the subarray's nesting, level 0 the slowest varying. */
static int datatype_subarray_dim(int level, int ndims, int order)
{
    return order == MPI_ORDER_C ? level : ndims - 1 - level;
}

/*
 * The subarray's typemap: rows of subsizes[fastest] old elements, in the array's order
 * (C: the last dimension varies fastest; Fortran: the first), as the nested vectors of
 * MPI-3.1 section 4.1.3 list them. `level` 0 is the slowest dimension.
 */
static void datatype_append_subarray(crmpi_datatype_typemap_t *map, int ndims, const int sizes[],
                                     const int subsizes[], const int starts[], int order,
                                     MPI_Datatype oldtype)
{
    /* Per level: bytes between consecutive indices, and the odometer over the subarray. */
    MPI_Aint *strides = malloc(2 * (size_t)ndims * sizeof(MPI_Aint));
    MPI_Aint *index = strides + ndims;
    MPI_Aint base = 0;
    int fastest = datatype_subarray_dim(ndims - 1, ndims, order);

    if (strides == NULL) {
        crmpi_datatype_typemap_fail(map, CRMPI_ERR_OUT_OF_RESOURCE,
                                    "out of memory while building the subarray");
        return;
    }
    strides[ndims - 1] = oldtype->extent;
    for (int level = ndims - 2; level >= 0; level--) {
        strides[level] = crmpi_datatype_typemap_mul(
            map, strides[level + 1], sizes[datatype_subarray_dim(level + 1, ndims, order)]);
    }
    for (int level = 0; level < ndims; level++) {
        base = crmpi_datatype_typemap_add(
            map, base,
            crmpi_datatype_typemap_mul(map, starts[datatype_subarray_dim(level, ndims, order)],
                                       strides[level]));
        index[level] = 0;
    }
    /* The whole array's extent bounds every displacement below: no overflow past this. */
    MPI_Aint extent =
        crmpi_datatype_typemap_mul(map, strides[0], sizes[datatype_subarray_dim(0, ndims, order)]);

    while (map->status == CRMPI_OK) {
        MPI_Aint disp = base;
        int level;

        for (level = 0; level < ndims - 1; level++) {
            disp += index[level] * strides[level];
        }
        crmpi_datatype_typemap_append(map, disp, (size_t)subsizes[fastest], oldtype->extent,
                                      oldtype);
        /* Next row: advance the odometer over the slower levels. */
        for (level = ndims - 2; level >= 0; level--) {
            if (++index[level] < subsizes[datatype_subarray_dim(level, ndims, order)]) {
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

int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                              const int array_of_starts[], int order, MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    static const char func_name[] = "MPI_Type_create_subarray";
    crmpi_datatype_typemap_t map;
    crmpi_datatype_args_t *record;
    crmpi_type_check_t check;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check &&
        datatype_check_subarray(ndims, array_of_sizes, array_of_subsizes, array_of_starts, order,
                                oldtype, newtype, &check)) {
        return datatype_create_raise(&check, func_name);
    }
    record = datatype_create_start(&map, MPI_COMBINER_SUBARRAY, 3 * (size_t)ndims + 2, 0, 1);
    if (record == NULL) {
        return datatype_create_fail_record(func_name);
    }
    record->ints[0] = ndims;
    for (int d = 0; d < ndims; d++) {
        record->ints[1 + d] = array_of_sizes[d];
        record->ints[1 + ndims + d] = array_of_subsizes[d];
        record->ints[1 + 2 * ndims + d] = array_of_starts[d];
    }
    record->ints[1 + 3 * ndims] = order;
    record->types[0] = oldtype;
    datatype_append_subarray(&map, ndims, array_of_sizes, array_of_subsizes, array_of_starts, order,
                             oldtype);
    return datatype_create_finish(&map, newtype, func_name);
}

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype *newtype)
{
    static const char func_name[] = "MPI_Type_create_resized";
    crmpi_datatype_typemap_t map;
    crmpi_datatype_args_t *record;
    crmpi_type_check_t check;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check && datatype_create_check(0, oldtype, newtype, &check)) {
        return datatype_create_raise(&check, func_name);
    }
    record = datatype_create_start(&map, MPI_COMBINER_RESIZED, 0, 2, 1);
    if (record == NULL) {
        return datatype_create_fail_record(func_name);
    }
    record->disps[0] = lb;
    record->disps[1] = extent;
    record->types[0] = oldtype;
    /* Same data; the new lb and ub markers replace every bound (MPI-3.1 section 4.1.7). */
    crmpi_datatype_typemap_append(&map, 0, 1, oldtype->extent, oldtype);
    crmpi_datatype_typemap_set_bounds(&map, lb, extent);
    return datatype_create_finish(&map, newtype, func_name);
}

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char func_name[] = "MPI_Type_dup";
    crmpi_datatype_typemap_t map;
    crmpi_datatype_args_t *record;
    MPI_Datatype type;
    crmpi_type_check_t check;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check && datatype_create_check(0, oldtype, newtype, &check)) {
        return datatype_create_raise(&check, func_name);
    }
    record = datatype_create_start(&map, MPI_COMBINER_DUP, 0, 0, 1);
    if (record == NULL) {
        return datatype_create_fail_record(func_name);
    }
    record->types[0] = oldtype;
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
