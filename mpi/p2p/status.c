/*
 * status.c: what a status says (MPI-3.1 sections 3.2.5, 3.8.4 and 12.3): MPI_Get_count,
 * MPI_Test_cancelled, and MPI_Status_set_cancelled, the setter generalized requests use.
 * The basic elements of a status (MPI_Get_elements, MPI_Status_set_elements) are
 * mpi/datatype/elements.c's.
 *
 * A status counts bytes (_nbytes, the length of the received byte stream); counts of
 * elements are derived from it with the datatype given to each call.
 */
#include <limits.h>
#include <stdio.h>

#include "p2p_internal.h"

#pragma weak MPI_Get_count = PMPI_Get_count
#pragma weak MPI_Status_set_cancelled = PMPI_Status_set_cancelled
#pragma weak MPI_Test_cancelled = PMPI_Test_cancelled
#pragma weak MPI_Get_count_c = PMPI_Get_count_c

/*
 * The checks of MPI_Get_count. No communication happens, so the datatype need not be
 * committed (MPI-3.1 section 4.1.9 asks it for communication only). Errors have no
 * communicator: MPI_COMM_WORLD's handler decides.
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

/* The large-count form (MPI-4.0): the count as an MPI_Count, never MPI_UNDEFINED for size. */
int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    static const char func_name[] = "MPI_Get_count_c";
    MPI_Count nbytes;
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
        *count = nbytes / (MPI_Count)datatype->size;
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}
