/*
 * elements.c: basic elements in a status (MPI-3.1 section 4.1.11): MPI_Get_elements(_x),
 * and their inverses for generalized requests (section 12.3), MPI_Status_set_elements(_x).
 *
 * A status counts bytes (_nbytes, the length of the received byte stream); the engine
 * counts the basic elements in a prefix of a type's stream, and the bytes that hold a
 * number of them (datatype.h: crmpi_datatype_count_basic, crmpi_datatype_basic_bytes).
 * No communication happens, so the datatype need not be committed (section 4.1.9 asks it
 * for communication only). Errors have no communicator: MPI_COMM_WORLD's handler decides.
 */
#include <limits.h>
#include <stdio.h>

#include "type_internal.h"

#pragma weak MPI_Get_elements = PMPI_Get_elements
#pragma weak MPI_Get_elements_x = PMPI_Get_elements_x
#pragma weak MPI_Status_set_elements = PMPI_Status_set_elements
#pragma weak MPI_Status_set_elements_x = PMPI_Status_set_elements_x
#pragma weak MPI_Get_elements_c = PMPI_Get_elements_c

/*
 * The checks of the four calls: a status, a datatype and, for the getters, where the count
 * goes (`out_name` NULL for the setters).
 * @return MPI_SUCCESS (lock held) or the raised error (released).
 */
static int elements_check(const void *status, MPI_Datatype datatype, const void *out,
                          const char *out_name, const char *func_name)
{
    char detail[96];

    if (status == NULL) {
        return crmpi_mpi_errhandler_invoke(
            MPI_COMM_NULL, MPI_ERR_ARG, func_name,
            "status is NULL (MPI_STATUS_IGNORE holds nothing to read)");
    }
    if (datatype == MPI_DATATYPE_NULL) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_TYPE, func_name,
                                           "datatype is MPI_DATATYPE_NULL");
    }
    if (out_name != NULL && out == NULL) {
        snprintf(detail, sizeof(detail), "%s is NULL", out_name);
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name, detail);
    }
    return MPI_SUCCESS;
}

/* Basic elements in the status's bytes, or -1 when the bytes end inside one. */
static MPI_Count elements_in_status(const MPI_Status *status, MPI_Datatype datatype)
{
    if (datatype->size == 0) {
        return 0;
    }
    return crmpi_datatype_count_basic(datatype, (size_t)status->_nbytes);
}

int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    static const char func_name[] = "MPI_Get_elements";
    MPI_Count elements;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        rc = elements_check(status, datatype, count, "count", func_name);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    elements = elements_in_status(status, datatype);
    *count = elements < 0 || elements > INT_MAX ? MPI_UNDEFINED : (int)elements;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    static const char func_name[] = "MPI_Get_elements_x";
    MPI_Count elements;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        rc = elements_check(status, datatype, count, "count", func_name);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    elements = elements_in_status(status, datatype);
    *count = elements < 0 ? MPI_UNDEFINED : elements;
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* So that MPI_Get_elements(status, datatype) gives count and MPI_Get_count follows from
 * the same bytes (MPI-3.1 section 12.3). An int count of basic elements always fits. */
int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
    static const char func_name[] = "MPI_Status_set_elements";
    char detail[64];
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        rc = elements_check(status, datatype, NULL, NULL, func_name);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        if (count < 0) {
            snprintf(detail, sizeof(detail), "count %d is negative", count);
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COUNT, func_name, detail);
        }
    }
    status->_nbytes = crmpi_datatype_basic_bytes(datatype, count);
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* As MPI_Status_set_elements, with an MPI_Count (MPI-3.1 section 12.3). */
int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    static const char func_name[] = "MPI_Status_set_elements_x";
    char detail[96];
    int64_t nbytes;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        rc = elements_check(status, datatype, NULL, NULL, func_name);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        if (count < 0) {
            snprintf(detail, sizeof(detail), "count %lld is negative", count);
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COUNT, func_name, detail);
        }
    }
    /* The bytes of `count` basic elements must fit the status's MPI_Count. */
    nbytes = crmpi_datatype_basic_bytes(datatype, count);
    if (nbytes < 0) {
        snprintf(detail, sizeof(detail), "%lld elements of this type exceed an MPI_Count of bytes",
                 count);
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COUNT, func_name, detail);
    }
    status->_nbytes = nbytes;
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* The large-count form (MPI-4.0): MPI_Get_elements_x under its MPI-4.0 name. */
int PMPI_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return PMPI_Get_elements_x(status, datatype, count);
}
