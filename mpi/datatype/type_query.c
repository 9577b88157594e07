/*
 * type_query.c: the life and the questions of a datatype: MPI_Type_commit and
 * MPI_Type_free (MPI-3.1 section 4.1.9), sizes (4.1.5), extents (4.1.7, 4.1.8), names (6.8),
 * MPI_Get_address (4.1.5), and MPI_Type_match_size (17.2.5).
 */
#include <limits.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "type_internal.h"

#pragma weak MPI_Type_commit = PMPI_Type_commit
#pragma weak MPI_Type_free = PMPI_Type_free
#pragma weak MPI_Type_get_extent = PMPI_Type_get_extent
#pragma weak MPI_Type_get_extent_x = PMPI_Type_get_extent_x
#pragma weak MPI_Type_get_true_extent = PMPI_Type_get_true_extent
#pragma weak MPI_Type_get_true_extent_x = PMPI_Type_get_true_extent_x
#pragma weak MPI_Type_size = PMPI_Type_size
#pragma weak MPI_Type_size_x = PMPI_Type_size_x
#pragma weak MPI_Type_get_name = PMPI_Type_get_name
#pragma weak MPI_Type_set_name = PMPI_Type_set_name
#pragma weak MPI_Get_address = PMPI_Get_address
#pragma weak MPI_Type_match_size = PMPI_Type_match_size
#pragma weak MPI_Type_size_c = PMPI_Type_size_c
#pragma weak MPI_Type_get_extent_c = PMPI_Type_get_extent_c
#pragma weak MPI_Type_get_true_extent_c = PMPI_Type_get_true_extent_c

/* The checks of the query calls: a type, and the two places the answer goes. */
static bool datatype_check_query(MPI_Datatype datatype, const void *out1, const void *out2,
                                 crmpi_type_check_t *check)
{
    if (datatype == MPI_DATATYPE_NULL) {
        return crmpi_type_check_fail(check, MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
    }
    if (out1 == NULL || out2 == NULL) {
        return crmpi_type_check_fail(check, MPI_ERR_ARG, "an output argument is NULL");
    }
    return false;
}

int PMPI_Type_commit(MPI_Datatype *datatype)
{
    static const char func_name[] = "MPI_Type_commit";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (datatype == NULL) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                               "datatype is NULL");
        }
        if (*datatype == MPI_DATATYPE_NULL) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_TYPE, func_name,
                                               "datatype is MPI_DATATYPE_NULL");
        }
    }
    /* The runs were flattened at construction; committing only allows communication.
     * Committing twice, or a predefined type, is allowed and does nothing more. */
    if (!(*datatype)->predefined) {
        (*datatype)->committed = true;
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Type_free(MPI_Datatype *datatype)
{
    static const char func_name[] = "MPI_Type_free";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (datatype == NULL) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                               "datatype is NULL");
        }
        if (*datatype == MPI_DATATYPE_NULL) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_TYPE, func_name,
                                               "datatype is MPI_DATATYPE_NULL");
        }
        if ((*datatype)->predefined) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_TYPE, func_name,
                                               "a predefined datatype cannot be freed");
        }
    }
    /* The attributes go with the handle (MPI-3.1 section 6.7.4); a delete callback that
     * fails makes the call fail, and the type stays. */
    int err = crmpi_type_attr_delete_all(*datatype);

    if (err != MPI_SUCCESS) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, err, func_name,
                                           "an attribute's delete callback failed");
    }
    /* Pending communication and derived types' records may still hold it; the object goes
     * with the last reference (MPI-3.1 section 4.1.9). The handle goes now. */
    crmpi_datatype_release(*datatype);
    *datatype = MPI_DATATYPE_NULL;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    static const char func_name[] = "MPI_Type_get_extent";
    crmpi_type_check_t check;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check && datatype_check_query(datatype, lb, extent, &check)) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, check.errclass, func_name, check.detail);
    }
    *lb = datatype->lb;
    *extent = datatype->extent;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    static const char func_name[] = "MPI_Type_get_extent_x";
    crmpi_type_check_t check;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check && datatype_check_query(datatype, lb, extent, &check)) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, check.errclass, func_name, check.detail);
    }
    *lb = datatype->lb;
    *extent = datatype->extent;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    static const char func_name[] = "MPI_Type_get_true_extent";
    crmpi_type_check_t check;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check &&
        datatype_check_query(datatype, true_lb, true_extent, &check)) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, check.errclass, func_name, check.detail);
    }
    *true_lb = datatype->true_lb;
    *true_extent = datatype->true_extent;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    static const char func_name[] = "MPI_Type_get_true_extent_x";
    crmpi_type_check_t check;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check &&
        datatype_check_query(datatype, true_lb, true_extent, &check)) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, check.errclass, func_name, check.detail);
    }
    *true_lb = datatype->true_lb;
    *true_extent = datatype->true_extent;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    static const char func_name[] = "MPI_Type_size";
    crmpi_type_check_t check;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check && datatype_check_query(datatype, size, size, &check)) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, check.errclass, func_name, check.detail);
    }
    /* A size an int cannot hold is reported as MPI_UNDEFINED (MPI-3.1 section 4.1.5);
     * MPI_Type_size_x gives it exactly. */
    *size = datatype->size > INT_MAX ? MPI_UNDEFINED : (int)datatype->size;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    static const char func_name[] = "MPI_Type_size_x";
    crmpi_type_check_t check;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check && datatype_check_query(datatype, size, size, &check)) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, check.errclass, func_name, check.detail);
    }
    *size = (MPI_Count)datatype->size;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    static const char func_name[] = "MPI_Type_get_name";
    crmpi_type_check_t check;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check &&
        datatype_check_query(datatype, type_name, resultlen, &check)) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, check.errclass, func_name, check.detail);
    }
    /* A derived type nobody named has the empty name (MPI-3.1 section 6.8). */
    size_t length = strlen(datatype->name);

    memcpy(type_name, datatype->name, length + 1);
    *resultlen = (int)length;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    static const char func_name[] = "MPI_Type_set_name";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (datatype == MPI_DATATYPE_NULL) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_TYPE, func_name,
                                               "datatype is MPI_DATATYPE_NULL");
        }
        if (type_name == NULL) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                               "type_name is NULL");
        }
    }
    /* Longer names are truncated (MPI-3.1 section 6.8). Predefined types may be renamed
     * too, as in Open MPI; the name is only ever shown to the user. */
    size_t length = strnlen(type_name, MPI_MAX_OBJECT_NAME - 1);

    memcpy(datatype->name, type_name, length);
    datatype->name[length] = '\0';
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    static const char func_name[] = "MPI_Get_address";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check && address == NULL) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "address is NULL");
    }
    /* Addresses are byte offsets from MPI_BOTTOM, which is address 0 (mpi.h). */
    *address = (MPI_Aint)(uintptr_t)location;
    crmpi_unlock();
    return MPI_SUCCESS;
}

/*
 * The predefined type of a class and a size (MPI-3.1 section 17.2.5): the Fortran types
 * with a size in their name, which is what the call serves (a Fortran KIND chosen by
 * SELECTED_REAL_KIND, say), and C's long double (complex) for the sizes no such type has.
 * A size no type of the class has is MPI_ERR_ARG.
 */
int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    static const char func_name[] = "MPI_Type_match_size";
    MPI_Datatype found = MPI_DATATYPE_NULL;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (datatype == NULL) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "datatype is NULL");
    }
    switch (typeclass) {
    case MPI_TYPECLASS_INTEGER:
        found = size == 1   ? MPI_INTEGER1
                : size == 2 ? MPI_INTEGER2
                : size == 4 ? MPI_INTEGER4
                : size == 8 ? MPI_INTEGER8
                            : MPI_DATATYPE_NULL;
        break;
    case MPI_TYPECLASS_REAL:
        /* Without REAL16, C's long double is the type of its size (as in MPICH). */
        found = size == 4                          ? MPI_REAL4
                : size == 8                        ? MPI_REAL8
                : size == (int)sizeof(long double) ? MPI_LONG_DOUBLE
                                                   : MPI_DATATYPE_NULL;
        break;
    case MPI_TYPECLASS_COMPLEX:
        found = size == 8                                ? MPI_COMPLEX8
                : size == 16                             ? MPI_COMPLEX16
                : size == (int)(2 * sizeof(long double)) ? MPI_C_LONG_DOUBLE_COMPLEX
                                                         : MPI_DATATYPE_NULL;
        break;
    default:
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "typeclass is not MPI_TYPECLASS_INTEGER, _REAL or "
                                           "_COMPLEX");
    }
    if (found == MPI_DATATYPE_NULL) {
        char detail[96];

        snprintf(detail, sizeof(detail), "no predefined type of this class has %d bytes", size);
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name, detail);
    }
    *datatype = found;
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* The large-count forms (MPI-4.0): MPI_Count results, as the _x calls of MPI-3.1 give them.
 * They call the PMPI_ names, so that a profiling library sees the application's call once. */
int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size)
{
    return PMPI_Type_size_x(datatype, size);
}

int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    return PMPI_Type_get_extent_x(datatype, lb, extent);
}

int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    return PMPI_Type_get_true_extent_x(datatype, true_lb, true_extent);
}
