/*
 * type_darray.c: MPI_Type_create_darray (MPI-3.1 section 4.1.4), the part of a global
 * array that one process of a process grid holds under an HPF-style distribution.
 *
 * The process grid has ndims dimensions of psizes[] processes, numbered in row-major (C)
 * order whatever the array's order. In each dimension the process at grid coordinate c
 * holds these global indices of the gsize ones:
 *
 *   MPI_DISTRIBUTE_BLOCK, darg b (default ceil(gsize / psize); b * psize >= gsize):
 *       [c * b, min((c + 1) * b, gsize))                        (possibly none)
 *   MPI_DISTRIBUTE_CYCLIC, darg b (default 1):
 *       blocks of b at c * b, c * b + psize * b, ... (the last one cut at gsize)
 *   MPI_DISTRIBUTE_NONE (psize 1): all of them
 *
 * The type's typemap is the held elements in the array's order (MPI_ORDER_C: the last
 * dimension varies fastest; MPI_ORDER_FORTRAN: the first), each dimension's indices in
 * increasing order, as the standard's construction from cyclic(k) types lists them; its
 * lb is 0 and its extent the whole array's, so that consecutive darrays tile a file or a
 * buffer. The record for MPI_Type_get_contents is the table's: size, rank, ndims, gsizes,
 * distribs, dargs, psizes, order (4 * ndims + 4 integers) and oldtype; for
 * MPI_Type_create_darray_c (MPI-4.0), whose gsizes are MPI_Count, the same but the gsizes
 * in ndims large counts when one does not fit an int (type_create.c says why).
 */
#include <stdlib.h>

#include "crmpi_status.h"
#include "type_internal.h"

#pragma weak MPI_Type_create_darray = PMPI_Type_create_darray
#pragma weak MPI_Type_create_darray_c = PMPI_Type_create_darray_c

/* One dimension's held indices, as runs of consecutive ones. */
typedef struct darray_dim {
    MPI_Count num_blocks; /* runs */
    MPI_Count *starts;    /* first global index of each run */
    MPI_Count *lengths;   /* indices in each run */
} darray_dim_t;

/* The checks of MPI_Type_create_darray (section 4.1.4). */
static bool darray_check(int size, int rank, int ndims, crmpi_count_array_t gsizes,
                         const int distribs[], const int dargs[], const int psizes[], int order,
                         MPI_Datatype oldtype, MPI_Datatype *newtype, crmpi_type_check_t *check)
{
    long grid = 1;

    if (size < 1 || rank < 0 || rank >= size) {
        return crmpi_type_check_failf(check, MPI_ERR_ARG,
                                      "rank %d of size %d: need 0 <= rank < size", rank, size);
    }
    if (ndims < 1) {
        return crmpi_type_check_failf(check, MPI_ERR_ARG, "ndims is %d; it must be positive",
                                      ndims);
    }
    if ((gsizes).base == NULL || distribs == NULL || dargs == NULL || psizes == NULL) {
        return crmpi_type_check_fail(check, MPI_ERR_ARG,
                                     "array_of_gsizes, _distribs, _dargs or _psizes is NULL");
    }
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN) {
        return crmpi_type_check_failf(
            check, MPI_ERR_ARG, "order is %d; it must be MPI_ORDER_C or MPI_ORDER_FORTRAN", order);
    }
    if (oldtype == MPI_DATATYPE_NULL) {
        return crmpi_type_check_fail(check, MPI_ERR_TYPE, "oldtype is MPI_DATATYPE_NULL");
    }
    if (newtype == NULL) {
        return crmpi_type_check_fail(check, MPI_ERR_ARG, "newtype is NULL");
    }
    for (int d = 0; d < ndims; d++) {
        MPI_Count gsize = crmpi_count_array_at(gsizes, d);

        if (gsize < 1 || psizes[d] < 1) {
            return crmpi_type_check_failf(check, MPI_ERR_ARG,
                                          "dimension %d has gsize %lld and psize %d; both must be "
                                          "positive",
                                          d, gsize, psizes[d]);
        }
        grid *= psizes[d];
        if (grid > size) {
            break;
        }
        switch (distribs[d]) {
        case MPI_DISTRIBUTE_NONE:
            if (psizes[d] != 1) {
                return crmpi_type_check_failf(
                    check, MPI_ERR_ARG,
                    "dimension %d is MPI_DISTRIBUTE_NONE over %d processes; it needs psize 1", d,
                    psizes[d]);
            }
            break;
        case MPI_DISTRIBUTE_BLOCK:
            if (dargs[d] != MPI_DISTRIBUTE_DFLT_DARG &&
                (dargs[d] < 1 || (MPI_Count)dargs[d] * psizes[d] < gsize)) {
                return crmpi_type_check_failf(
                    check, MPI_ERR_ARG,
                    "dimension %d: blocks of %d over %d processes cannot hold %lld elements", d,
                    dargs[d], psizes[d], gsize);
            }
            break;
        case MPI_DISTRIBUTE_CYCLIC:
            if (dargs[d] != MPI_DISTRIBUTE_DFLT_DARG && dargs[d] < 1) {
                return crmpi_type_check_failf(
                    check, MPI_ERR_ARG, "dimension %d: darg %d must be positive", d, dargs[d]);
            }
            break;
        default:
            return crmpi_type_check_failf(check, MPI_ERR_ARG,
                                          "array_of_distribs[%d] is %d; it must be "
                                          "MPI_DISTRIBUTE_BLOCK, _CYCLIC or _NONE",
                                          d, distribs[d]);
        }
    }
    if (grid != size) {
        return crmpi_type_check_failf(check, MPI_ERR_ARG,
                                      "the process grid has a size other than %d (the product "
                                      "of array_of_psizes must equal size)",
                                      size);
    }
    return false;
}

static void darray_dim_free(darray_dim_t *dim)
{
    free(dim->starts);
    free(dim->lengths);
}

/* The indices grid coordinate `coord` holds in one dimension. @return false: no memory. */
static bool darray_dim_make(MPI_Count gsize, int distrib, int darg, int psize, int coord,
                            darray_dim_t *dim)
{
    MPI_Count block = darg;
    MPI_Count max_blocks;

    if (distrib == MPI_DISTRIBUTE_NONE) {
        block = gsize;
    } else if (distrib == MPI_DISTRIBUTE_BLOCK && darg == MPI_DISTRIBUTE_DFLT_DARG) {
        block = (gsize + psize - 1) / psize;
    } else if (distrib == MPI_DISTRIBUTE_CYCLIC && darg == MPI_DISTRIBUTE_DFLT_DARG) {
        block = 1;
    }
    /* A block distribution is a cyclic one whose first round covers the array. */
    max_blocks = gsize / block + 1;
    dim->num_blocks = 0;
    dim->starts = malloc((size_t)max_blocks * sizeof(MPI_Count));
    dim->lengths = malloc((size_t)max_blocks * sizeof(MPI_Count));
    if (dim->starts == NULL || dim->lengths == NULL) {
        darray_dim_free(dim);
        return false;
    }
    for (MPI_Count start = coord * block; start < gsize; start += psize * block) {
        MPI_Count end = start + block < gsize ? start + block : gsize;

        dim->starts[dim->num_blocks] = start;
        dim->lengths[dim->num_blocks] = end - start;
        dim->num_blocks++;
        if (distrib != MPI_DISTRIBUTE_CYCLIC) {
            break;
        }
    }
    return true;
}

/* The array dimension at `level` of the nesting, level 0 the slowest varying. */
static int darray_level_dim(int level, int ndims, int order)
{
    return order == MPI_ORDER_C ? level : ndims - 1 - level;
}

/* Append the held elements in the array's order, then the array's bounds. */
static void darray_append(crmpi_datatype_typemap_t *map, int ndims, crmpi_count_array_t gsizes,
                          const darray_dim_t dims[], int order, MPI_Datatype oldtype)
{
    /* Per level: bytes between consecutive indices, and the odometer over held indices
     * (block and index within it) of the slower levels. */
    MPI_Aint *strides = malloc((size_t)ndims * sizeof(MPI_Aint));
    MPI_Count *block = calloc((size_t)ndims, sizeof(MPI_Count));
    MPI_Count *within = calloc((size_t)ndims, sizeof(MPI_Count));
    int fastest = darray_level_dim(ndims - 1, ndims, order);
    MPI_Aint extent;

    if (strides == NULL || block == NULL || within == NULL) {
        crmpi_datatype_typemap_fail(map, CRMPI_ERR_OUT_OF_RESOURCE,
                                    "out of memory while building the darray");
        goto out;
    }
    strides[ndims - 1] = oldtype->extent;
    for (int level = ndims - 2; level >= 0; level--) {
        strides[level] = crmpi_datatype_typemap_mul(
            map, strides[level + 1],
            (MPI_Aint)crmpi_count_array_at(gsizes, darray_level_dim(level + 1, ndims, order)));
    }
    extent = crmpi_datatype_typemap_mul(
        map, strides[0], (MPI_Aint)crmpi_count_array_at(gsizes, darray_level_dim(0, ndims, order)));
    for (int level = 0; level < ndims; level++) {
        if (dims[darray_level_dim(level, ndims, order)].num_blocks == 0) {
            goto bounds; /* nothing held in some dimension: no data */
        }
    }
    while (map->status == CRMPI_OK) {
        MPI_Aint base = 0;
        int level;

        for (level = 0; level < ndims - 1; level++) {
            const darray_dim_t *dim = &dims[darray_level_dim(level, ndims, order)];

            base += (MPI_Aint)(dim->starts[block[level]] + within[level]) * strides[level];
        }
        for (MPI_Count b = 0; b < dims[fastest].num_blocks; b++) {
            crmpi_datatype_typemap_append(
                map, base + (MPI_Aint)dims[fastest].starts[b] * strides[ndims - 1],
                (size_t)dims[fastest].lengths[b], oldtype->extent, oldtype);
        }
        /* Next held index of the slower levels, the fastest of them first. */
        for (level = ndims - 2; level >= 0; level--) {
            const darray_dim_t *dim = &dims[darray_level_dim(level, ndims, order)];

            if (++within[level] < dim->lengths[block[level]]) {
                break;
            }
            within[level] = 0;
            if (++block[level] < dim->num_blocks) {
                break;
            }
            block[level] = 0;
        }
        if (level < 0) {
            break;
        }
    }
bounds:
    /* The whole array: lb 0 and its extent (section 4.1.4, as for a subarray). */
    crmpi_datatype_typemap_set_bounds(map, 0, extent);
out:
    free(strides);
    free(block);
    free(within);
}

static int darray_create(int size, int rank, int ndims, crmpi_count_array_t array_of_gsizes,
                         const int array_of_distribs[], const int array_of_dargs[],
                         const int array_of_psizes[], int order, MPI_Datatype oldtype,
                         MPI_Datatype *newtype, const char *func_name)
{
    crmpi_datatype_typemap_t map;
    crmpi_type_record_t rec;
    crmpi_type_check_t check;
    darray_dim_t *dims;
    MPI_Datatype type;
    int coord_rest = rank;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    /* Checked always: the layout is computed from these arrays. */
    if (darray_check(size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs,
                     array_of_psizes, order, oldtype, newtype, &check)) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, check.errclass, func_name, check.detail);
    }
    dims = calloc((size_t)ndims, sizeof(*dims));
    if (dims == NULL) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_INTERN, func_name,
                                           "out of memory for the new type");
    }
    /* The grid coordinates of rank, row-major: the last dimension varies fastest. */
    for (int d = ndims - 1; d >= 0; d--) {
        int coord = coord_rest % array_of_psizes[d];

        coord_rest /= array_of_psizes[d];
        if (!darray_dim_make(crmpi_count_array_at(array_of_gsizes, d), array_of_distribs[d],
                             array_of_dargs[d], array_of_psizes[d], coord, &dims[d])) {
            for (int done = ndims - 1; done > d; done--) {
                darray_dim_free(&dims[done]);
            }
            free(dims);
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_INTERN, func_name,
                                               "out of memory for the new type");
        }
    }
    if (crmpi_type_record_start(&map, MPI_COMBINER_DARRAY,
                                !crmpi_count_array_fits_int(array_of_gsizes, ndims),
                                3 * (size_t)ndims + 4, (size_t)ndims, 0, 1, &rec)) {
        crmpi_type_record_int(&rec, size);
        crmpi_type_record_int(&rec, rank);
        crmpi_type_record_int(&rec, ndims);
        for (int d = 0; d < ndims; d++) {
            crmpi_type_record_count(&rec, crmpi_count_array_at(array_of_gsizes, d));
        }
        for (int d = 0; d < ndims; d++) {
            crmpi_type_record_int(&rec, array_of_distribs[d]);
        }
        for (int d = 0; d < ndims; d++) {
            crmpi_type_record_int(&rec, array_of_dargs[d]);
        }
        for (int d = 0; d < ndims; d++) {
            crmpi_type_record_int(&rec, array_of_psizes[d]);
        }
        crmpi_type_record_int(&rec, order);
        rec.args->types[0] = oldtype;
        darray_append(&map, ndims, array_of_gsizes, dims, order, oldtype);
    }
    for (int d = 0; d < ndims; d++) {
        darray_dim_free(&dims[d]);
    }
    free(dims);
    rc = crmpi_datatype_typemap_finish(&map, &type);
    if (rc != CRMPI_OK) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, crmpi_type_error_class(rc), func_name,
                                           map.error_detail);
    }
    *newtype = type;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                            const int array_of_distribs[], const int array_of_dargs[],
                            const int array_of_psizes[], int order, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
    return darray_create(size, rank, ndims, crmpi_count_array_int(array_of_gsizes),
                         array_of_distribs, array_of_dargs, array_of_psizes, order, oldtype,
                         newtype, "MPI_Type_create_darray");
}

int PMPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                              const int array_of_distribs[], const int array_of_dargs[],
                              const int array_of_psizes[], int order, MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    return darray_create(size, rank, ndims, crmpi_count_array_count(array_of_gsizes),
                         array_of_distribs, array_of_dargs, array_of_psizes, order, oldtype,
                         newtype, "MPI_Type_create_darray_c");
}
