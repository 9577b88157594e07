/*
 * error_class.c: names and messages of the MPI error classes; MPI_Error_string and
 * MPI_Error_class (MPI-3.1 section 8.4).
 *
 * Every predefined error code is its own class; codes added by MPI_Add_error_code have
 * the class they were added to (error_user.c).
 */
#include <stdio.h>

#include "mpi_internal.h"

#pragma weak MPI_Error_string = PMPI_Error_string
#pragma weak MPI_Error_class = PMPI_Error_class

typedef struct error_class_desc {
    const char *name; /* the constant's name, "MPI_ERR_COMM" */
    const char *text; /* what it means, lower case, no final period */
} error_class_desc_t;

#define ERROR_CLASS(errclass, message) [errclass] = {#errclass, message}

/* Indexed by class; test_mpi_env checks that no class between 0 and MPI_ERR_LASTCODE is
 * missing. */
static const error_class_desc_t error_classes[MPI_ERR_LASTCODE + 1] = {
    ERROR_CLASS(MPI_SUCCESS, "no errors"),
    ERROR_CLASS(MPI_ERR_BUFFER, "invalid buffer pointer"),
    ERROR_CLASS(MPI_ERR_COUNT, "invalid count argument"),
    ERROR_CLASS(MPI_ERR_TYPE, "invalid datatype"),
    ERROR_CLASS(MPI_ERR_TAG, "invalid tag"),
    ERROR_CLASS(MPI_ERR_COMM, "invalid communicator"),
    ERROR_CLASS(MPI_ERR_RANK, "invalid rank"),
    ERROR_CLASS(MPI_ERR_REQUEST, "invalid request"),
    ERROR_CLASS(MPI_ERR_ROOT, "invalid root"),
    ERROR_CLASS(MPI_ERR_GROUP, "invalid group"),
    ERROR_CLASS(MPI_ERR_OP, "invalid reduce operation"),
    ERROR_CLASS(MPI_ERR_TOPOLOGY, "invalid communicator topology"),
    ERROR_CLASS(MPI_ERR_DIMS, "invalid topology dimension argument"),
    ERROR_CLASS(MPI_ERR_ARG, "invalid argument"),
    ERROR_CLASS(MPI_ERR_UNKNOWN, "unknown error"),
    ERROR_CLASS(MPI_ERR_TRUNCATE, "message truncated: the receive buffer is too small"),
    ERROR_CLASS(MPI_ERR_OTHER, "known error not in this list"),
    ERROR_CLASS(MPI_ERR_INTERN, "internal error"),
    ERROR_CLASS(MPI_ERR_IN_STATUS, "error code is in status"),
    ERROR_CLASS(MPI_ERR_PENDING, "pending request"),
    ERROR_CLASS(MPI_ERR_ACCESS, "permission denied"),
    ERROR_CLASS(MPI_ERR_AMODE, "invalid or unsupported file access mode"),
    ERROR_CLASS(MPI_ERR_ASSERT, "invalid assert argument"),
    ERROR_CLASS(MPI_ERR_BAD_FILE, "invalid file name"),
    ERROR_CLASS(MPI_ERR_BASE, "invalid base address"),
    ERROR_CLASS(MPI_ERR_CONVERSION, "error in a user-supplied data conversion function"),
    ERROR_CLASS(MPI_ERR_DISP, "invalid displacement"),
    ERROR_CLASS(MPI_ERR_DUP_DATAREP, "data representation identifier already registered"),
    ERROR_CLASS(MPI_ERR_FILE_EXISTS, "file exists"),
    ERROR_CLASS(MPI_ERR_FILE_IN_USE, "file in use"),
    ERROR_CLASS(MPI_ERR_FILE, "invalid file handle"),
    ERROR_CLASS(MPI_ERR_INFO_KEY, "info key longer than MPI_MAX_INFO_KEY"),
    ERROR_CLASS(MPI_ERR_INFO_NOKEY, "info key not defined"),
    ERROR_CLASS(MPI_ERR_INFO_VALUE, "info value longer than MPI_MAX_INFO_VAL"),
    ERROR_CLASS(MPI_ERR_INFO, "invalid info object"),
    ERROR_CLASS(MPI_ERR_IO, "input/output error"),
    ERROR_CLASS(MPI_ERR_KEYVAL, "invalid attribute key"),
    ERROR_CLASS(MPI_ERR_LOCKTYPE, "invalid lock type"),
    ERROR_CLASS(MPI_ERR_NAME, "service name not published"),
    ERROR_CLASS(MPI_ERR_NO_MEM, "out of memory in MPI_Alloc_mem"),
    ERROR_CLASS(MPI_ERR_NOT_SAME, "collective arguments differ between processes, or "
                                  "collectives were called in a different order"),
    ERROR_CLASS(MPI_ERR_NO_SPACE, "not enough space"),
    ERROR_CLASS(MPI_ERR_NO_SUCH_FILE, "file does not exist"),
    ERROR_CLASS(MPI_ERR_PORT, "invalid port name"),
    ERROR_CLASS(MPI_ERR_QUOTA, "quota exceeded"),
    ERROR_CLASS(MPI_ERR_READ_ONLY, "read-only file or file system"),
    ERROR_CLASS(MPI_ERR_RMA_CONFLICT, "conflicting accesses to a window"),
    ERROR_CLASS(MPI_ERR_RMA_SYNC, "wrong synchronization of RMA calls"),
    ERROR_CLASS(MPI_ERR_SERVICE, "invalid service name"),
    ERROR_CLASS(MPI_ERR_SIZE, "invalid size"),
    ERROR_CLASS(MPI_ERR_SPAWN, "could not spawn processes"),
    ERROR_CLASS(MPI_ERR_UNSUPPORTED_DATAREP, "unsupported data representation"),
    ERROR_CLASS(MPI_ERR_UNSUPPORTED_OPERATION, "operation not supported"),
    ERROR_CLASS(MPI_ERR_WIN, "invalid window"),
    ERROR_CLASS(MPI_T_ERR_MEMORY, "tool interface: out of memory"),
    ERROR_CLASS(MPI_T_ERR_NOT_INITIALIZED, "tool interface: not initialized"),
    ERROR_CLASS(MPI_T_ERR_CANNOT_INIT, "tool interface: cannot be initialized now"),
    ERROR_CLASS(MPI_T_ERR_INVALID_INDEX, "tool interface: index out of range"),
    ERROR_CLASS(MPI_T_ERR_INVALID_ITEM, "tool interface: item index out of range"),
    ERROR_CLASS(MPI_T_ERR_INVALID_HANDLE, "tool interface: invalid handle"),
    ERROR_CLASS(MPI_T_ERR_OUT_OF_HANDLES, "tool interface: no more handles available"),
    ERROR_CLASS(MPI_T_ERR_OUT_OF_SESSIONS, "tool interface: no more sessions available"),
    ERROR_CLASS(MPI_T_ERR_INVALID_SESSION, "tool interface: invalid session"),
    ERROR_CLASS(MPI_T_ERR_CVAR_SET_NOT_NOW, "tool interface: control variable cannot be set now"),
    ERROR_CLASS(MPI_T_ERR_CVAR_SET_NEVER, "tool interface: control variable can never be set"),
    ERROR_CLASS(MPI_T_ERR_PVAR_NO_STARTSTOP,
                "tool interface: performance variable cannot be started or stopped"),
    ERROR_CLASS(MPI_T_ERR_PVAR_NO_WRITE,
                "tool interface: performance variable cannot be written or reset"),
    ERROR_CLASS(MPI_T_ERR_PVAR_NO_ATOMIC,
                "tool interface: performance variable cannot be read and reset atomically"),
    ERROR_CLASS(MPI_ERR_RMA_RANGE, "target memory is outside the window"),
    ERROR_CLASS(MPI_ERR_RMA_ATTACH, "memory cannot be attached to the window"),
    ERROR_CLASS(MPI_ERR_RMA_FLAVOR, "wrong window flavor for this operation"),
    ERROR_CLASS(MPI_ERR_RMA_SHARED, "memory cannot be shared"),
    ERROR_CLASS(MPI_T_ERR_INVALID, "tool interface: invalid or unsupported argument"),
    ERROR_CLASS(MPI_T_ERR_INVALID_NAME, "tool interface: no variable or category of that name"),
    ERROR_CLASS(MPI_ERR_SESSION, "invalid session"),
    ERROR_CLASS(MPI_ERR_LASTCODE, "last error code"),
};

const char *crmpi_mpi_error_name(int errclass)
{
    if (errclass < 0 || errclass > MPI_ERR_LASTCODE) {
        return NULL;
    }
    return error_classes[errclass].name;
}

const char *crmpi_mpi_error_text(int errclass)
{
    if (errclass < 0 || errclass > MPI_ERR_LASTCODE) {
        return NULL;
    }
    return error_classes[errclass].text;
}

/* Neither call requires an active MPI: they touch no job state, and MPI-4.0 lists them among
 * the calls allowed before MPI_Init and after MPI_Finalize. */
int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    static const char func_name[] = "MPI_Error_string";

    crmpi_lock();
    if (crmpi_mpi_state.param_check && (string == NULL || resultlen == NULL)) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           string ? "resultlen is NULL" : "string is NULL");
    }
    /* Checked even without mpi_param_check: the code indexes a table. */
    const char *name = crmpi_mpi_error_name(errorcode);
    if (name == NULL && crmpi_mpi_error_user_text(errorcode) != NULL) {
        /* An added code: the application's text alone (MPI-3.1 section 8.5). */
        int len =
            snprintf(string, MPI_MAX_ERROR_STRING, "%s", crmpi_mpi_error_user_text(errorcode));
        *resultlen = len < MPI_MAX_ERROR_STRING ? len : MPI_MAX_ERROR_STRING - 1;
        crmpi_unlock();
        return MPI_SUCCESS;
    }
    if (name == NULL) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "errorcode is not an MPI error code");
    }
    int len =
        snprintf(string, MPI_MAX_ERROR_STRING, "%s: %s", name, crmpi_mpi_error_text(errorcode));
    *resultlen = len < MPI_MAX_ERROR_STRING ? len : MPI_MAX_ERROR_STRING - 1;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Error_class(int errorcode, int *errorclass)
{
    static const char func_name[] = "MPI_Error_class";

    crmpi_lock();
    if (crmpi_mpi_state.param_check && errorclass == NULL) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "errorclass is NULL");
    }
    if (crmpi_mpi_error_user_class(errorcode) >= 0) {
        *errorclass = crmpi_mpi_error_user_class(errorcode);
        crmpi_unlock();
        return MPI_SUCCESS;
    }
    if (crmpi_mpi_error_name(errorcode) == NULL) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "errorcode is not an MPI error code");
    }
    *errorclass = errorcode;
    crmpi_unlock();
    return MPI_SUCCESS;
}
