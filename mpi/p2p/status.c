/*
 * status.c: what a status says (MPI-3.1 sections 3.2.5, 3.8.4 and 12.3): MPI_Get_count,
 * MPI_Get_elements(_x), MPI_Test_cancelled, and the setters generalized requests use,
 * MPI_Status_set_elements(_x) and MPI_Status_set_cancelled.
 *
 * A status counts bytes (_nbytes, the length of the received byte stream); counts of
 * elements are derived from it with the datatype given to each call.
 */
#include <limits.h>
#include <stdio.h>

#include "p2p_internal.h"

#pragma weak MPI_Get_count = PMPI_Get_count
#pragma weak MPI_Get_elements = PMPI_Get_elements
#pragma weak MPI_Get_elements_x = PMPI_Get_elements_x
#pragma weak MPI_Status_set_elements = PMPI_Status_set_elements
#pragma weak MPI_Status_set_elements_x = PMPI_Status_set_elements_x
#pragma weak MPI_Status_set_cancelled = PMPI_Status_set_cancelled
#pragma weak MPI_Test_cancelled = PMPI_Test_cancelled

/*
 * Checks shared by the calls that take a status and a datatype. No communication happens,
 * so the datatype need not be committed (MPI-3.1 section 4.1.9 asks it for communication
 * only). Errors have no communicator: MPI_COMM_WORLD's handler decides.
 * @return MPI_SUCCESS (lock held) or the raised error (released).
 */
static int status_check(const void *status, MPI_Datatype datatype, const void *out,
                        const char *out_name, const char *func_name)
{
    char detail[96];

    if (status == NULL) {
        return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name,
                                   "status is NULL (MPI_STATUS_IGNORE holds nothing to read)");
    }
    if (datatype == MPI_DATATYPE_NULL) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_TYPE, func_name,
                                           "datatype is MPI_DATATYPE_NULL");
    }
    if (out_name != NULL && out == NULL) {
        snprintf(detail, sizeof(detail), "%s is NULL", out_name);
        return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name, detail);
    }
    return MPI_SUCCESS;
}

/*
 * Whole elements of datatype in the status's bytes; MPI_UNDEFINED when the bytes are not a
 * whole number of elements or the number exceeds an int; 0 for a type of size 0 (MPI-3.1
 * section 3.2.5).
 */
int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    static const char func_name[] = "MPI_Get_count";
    MPI_Count nbytes, elements;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        rc = status_check(status, datatype, count, "count", func_name);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    nbytes = status->_nbytes;
    if (datatype->size == 0) {
        *count = 0;
    } else if (nbytes % (MPI_Count)datatype->size != 0) {
        *count = MPI_UNDEFINED;
    } else {
        elements = nbytes / (MPI_Count)datatype->size;
        *count = elements > INT_MAX ? MPI_UNDEFINED : (int)elements;
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* Basic elements in the status's bytes (the datatype engine counts them), or -1 when the
 * bytes end inside one. */
static MPI_Count status_basic_elements(const MPI_Status *status, MPI_Datatype datatype)
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
        rc = status_check(status, datatype, count, "count", func_name);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    elements = status_basic_elements(status, datatype);
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
        rc = status_check(status, datatype, count, "count", func_name);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    elements = status_basic_elements(status, datatype);
    *count = elements < 0 ? MPI_UNDEFINED : elements;
    crmpi_unlock();
    return MPI_SUCCESS;
}

/*
 * Bytes of the stream of `datatype` that hold its first `count` basic elements, the
 * inverse of crmpi_datatype_count_basic. Whole elements are size bytes each. The basic
 * elements of the last, partial element are size / basic_count bytes each when they all
 * have one size (every predefined type but some pairs of MPI_MAXLOC); otherwise
 * (MPI_DOUBLE_INT, struct types mixing sizes) the bytes are found by asking
 * the engine, byte by byte over that one element: slow, but MPI_Status_set_elements on such
 * a type with a partial element is rare.
 */
static MPI_Count status_bytes_of_elements(MPI_Datatype datatype, MPI_Count count)
{
    /* A type whose engine fields are not filled in counts as one basic element. */
    MPI_Count per_element = datatype->basic_count ? (MPI_Count)datatype->basic_count : 1;
    MPI_Count size = (MPI_Count)datatype->size;
    MPI_Count whole = count / per_element;
    MPI_Count partial = count % per_element;
    MPI_Count nbytes = whole * size;
    MPI_Count guess;

    if (size == 0) {
        return 0;
    }
    if (partial == 0) {
        return nbytes;
    }
    guess = nbytes + partial * (size / per_element);
    if (size % per_element == 0 && crmpi_datatype_count_basic(datatype, (size_t)guess) == count) {
        return guess;
    }
    for (MPI_Count extra = 1; extra < size; extra++) {
        if (crmpi_datatype_count_basic(datatype, (size_t)(nbytes + extra)) == count) {
            return nbytes + extra;
        }
    }
    return guess;
}

/* So that MPI_Get_elements(status, datatype) gives count and MPI_Get_count follows from
 * the same bytes (MPI-3.1 section 12.3). */
int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
    static const char func_name[] = "MPI_Status_set_elements";
    char detail[64];
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        rc = status_check(status, datatype, NULL, NULL, func_name);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        if (count < 0) {
            snprintf(detail, sizeof(detail), "count %d is negative", count);
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COUNT, func_name, detail);
        }
    }
    status->_nbytes = status_bytes_of_elements(datatype, count);
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* As MPI_Status_set_elements, with an MPI_Count (MPI-3.1 section 12.3). */
int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    static const char func_name[] = "MPI_Status_set_elements_x";
    char detail[96];
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        rc = status_check(status, datatype, NULL, NULL, func_name);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        if (count < 0) {
            snprintf(detail, sizeof(detail), "count %lld is negative", count);
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COUNT, func_name, detail);
        }
    }
    /* The bytes of `count` basic elements must fit the status's MPI_Count. */
    MPI_Count per_element = datatype->basic_count ? (MPI_Count)datatype->basic_count : 1;

    if (datatype->size > 0 && count / per_element >= LLONG_MAX / (MPI_Count)datatype->size) {
        snprintf(detail, sizeof(detail), "%lld elements of this type exceed an MPI_Count of bytes",
                 count);
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COUNT, func_name, detail);
    }
    status->_nbytes = status_bytes_of_elements(datatype, count);
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    static const char func_name[] = "MPI_Status_set_cancelled";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check && status == NULL) {
        return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name, "status is NULL");
    }
    status->_cancelled = flag != 0;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    static const char func_name[] = "MPI_Test_cancelled";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (status == NULL) {
            return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name,
                                       "status is NULL (MPI_STATUS_IGNORE holds nothing to read)");
        }
        if (flag == NULL) {
            return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name, "flag is NULL");
        }
    }
    *flag = status->_cancelled != 0;
    crmpi_unlock();
    return MPI_SUCCESS;
}
