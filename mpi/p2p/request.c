/*
 * request.c: MPI_Request_free (MPI-3.1 section 3.7.3) and MPI_Cancel (section 3.8.4).
 */
#include "p2p_internal.h"

#pragma weak MPI_Request_free = PMPI_Request_free
#pragma weak MPI_Cancel = PMPI_Cancel

/*
 * Checks of the calls that need a request, not MPI_REQUEST_NULL: the handle pointer, the
 * handle, a live request. @return MPI_SUCCESS (lock held) or the raised error (released).
 */
static int request_check_handle(const MPI_Request *request, const char *func_name)
{
    if (request == NULL) {
        return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name, "request is NULL");
    }
    if (*request == MPI_REQUEST_NULL) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_REQUEST, func_name,
                                           "*request is MPI_REQUEST_NULL");
    }
    if (!crmpi_p2p_request_ok(*request)) {
        return crmpi_p2p_raise_bad_request(func_name, -1);
    }
    return MPI_SUCCESS;
}

/* An active request is freed by the PML once complete; the application just cannot see
 * its completion any more (MPI-3.1 section 3.7.3). */
int PMPI_Request_free(MPI_Request *request)
{
    static const char func_name[] = "MPI_Request_free";
    crmpi_request_t *req;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        rc = request_check_handle(request, func_name);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    req = *request;
    if (crmpi_p2p_request_is_bsend_init(req)) {
        crmpi_p2p_bsend_init_release(req);
    }
    if (crmpi_p2p_request_is_grequest(req)) {
        rc = crmpi_p2p_grequest_free(req);
        if (rc != MPI_SUCCESS) {
            /* The request goes anyway: free_fn ran, nothing of it is left to free. */
            crmpi_pml_request_free(req);
            *request = MPI_REQUEST_NULL;
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, rc, func_name,
                                               "the generalized request's free_fn failed");
        }
    }
    crmpi_pml_request_free(req);
    *request = MPI_REQUEST_NULL;
    crmpi_unlock();
    return MPI_SUCCESS;
}

/*
 * Mark for cancellation; the request is still completed by Wait or Test, whose status says
 * whether it was cancelled (MPI_Test_cancelled). The PML cancels a receive not yet matched;
 * sends and matched receives complete normally, as MPI-3.1 section 3.8.4 allows.
 */
int PMPI_Cancel(MPI_Request *request)
{
    static const char func_name[] = "MPI_Cancel";
    crmpi_request_t *req;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        rc = request_check_handle(request, func_name);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    req = *request;
    /* A generalized request's operation is the application's: its cancel_fn decides. */
    if (crmpi_p2p_request_is_grequest(req)) {
        rc = crmpi_p2p_grequest_cancel(req);
        if (rc != MPI_SUCCESS) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, rc, func_name,
                                               "the generalized request's cancel_fn failed");
        }
        crmpi_unlock();
        return MPI_SUCCESS;
    }
    /* An inactive persistent request has no communication to cancel. */
    if (crmpi_p2p_request_is_inactive(req)) {
        crmpi_unlock();
        return MPI_SUCCESS;
    }
    rc = crmpi_pml_cancel(req);
    if (rc != CRMPI_OK) {
        return crmpi_p2p_raise_pml(req->owner, rc, func_name, "cannot cancel the request");
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}
