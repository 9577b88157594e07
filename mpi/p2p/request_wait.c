/*
 * request_wait.c: the blocking completion calls (MPI-3.1 sections 3.7.3 and 3.7.5).
 *
 * MPI_Wait is on the latency path: a request that is already complete costs one test.
 * Waiting on one request is the PML's loop (crmpi_pml_wait); waiting on any of several is
 * ours, the same loop of progress that drops the library lock when idle (docs/design.md, "Layers
 * inside a rank").
 */
#include "p2p_internal.h"

#pragma weak MPI_Wait = PMPI_Wait
#pragma weak MPI_Waitall = PMPI_Waitall
#pragma weak MPI_Waitany = PMPI_Waitany
#pragma weak MPI_Waitsome = PMPI_Waitsome

int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    static const char func_name[] = "MPI_Wait";
    crmpi_request_t *req;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (request == NULL) {
            return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name, "request is NULL");
        }
        if (!crmpi_p2p_request_ok(*request)) {
            return crmpi_p2p_raise_bad_request(func_name, -1);
        }
    }
    req = *request;
    if (!crmpi_p2p_request_is_live(req)) {
        crmpi_p2p_status_set_empty(status);
        crmpi_unlock();
        return MPI_SUCCESS;
    }
    bool counted = crmpi_p2p_grequest_wait_begin(1, request);
    crmpi_pml_wait(req);
    crmpi_p2p_grequest_wait_end(counted);
    return crmpi_p2p_request_return(request, status, func_name);
}

int PMPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    static const char func_name[] = "MPI_Waitall";
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        rc = crmpi_p2p_check_request_array(func_name, count, array_of_requests);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    /* Every request must complete, so waiting for each in turn waits no longer than waiting
     * for all at once: progress moves all of them. A failed request is complete too, so
     * every status says MPI_SUCCESS or the request's error, never MPI_ERR_PENDING. */
    bool counted = crmpi_p2p_grequest_wait_begin(count, array_of_requests);
    for (int i = 0; i < count; i++) {
        if (crmpi_p2p_request_is_live(array_of_requests[i])) {
            crmpi_pml_wait(array_of_requests[i]);
        }
    }
    crmpi_p2p_grequest_wait_end(counted);
    return crmpi_p2p_requests_finish_all(count, array_of_requests, array_of_statuses, func_name);
}

int PMPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    static const char func_name[] = "MPI_Waitany";
    crmpi_request_t *last_live = NULL;
    int live;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        rc = crmpi_p2p_check_request_array(func_name, count, array_of_requests);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        if (index == NULL) {
            return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name, "index is NULL");
        }
    }
    bool counted = crmpi_p2p_grequest_wait_begin(count, array_of_requests);
    for (;;) {
        live = 0;
        for (int i = 0; i < count; i++) {
            crmpi_request_t *req = array_of_requests[i];

            if (!crmpi_p2p_request_is_live(req)) {
                continue;
            }
            /* The first complete one: MPI-3.1 section 3.7.5 lets the choice be arbitrary. */
            if (req->complete) {
                *index = i;
                crmpi_p2p_grequest_wait_end(counted);
                return crmpi_p2p_request_return(&array_of_requests[i], status, func_name);
            }
            live++;
            last_live = req;
        }
        if (live == 0) {
            crmpi_p2p_grequest_wait_end(counted);
            *index = MPI_UNDEFINED;
            crmpi_p2p_status_set_empty(status);
            crmpi_unlock();
            return MPI_SUCCESS;
        }
        if (live == 1) {
            /* One left: the PML's own wait (it knows when to yield the core). */
            crmpi_pml_wait(last_live);
        } else {
            crmpi_p2p_wait_turn();
        }
    }
}

int PMPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                  int array_of_indices[], MPI_Status array_of_statuses[])
{
    return crmpi_p2p_requests_some(incount, array_of_requests, outcount, array_of_indices,
                                   array_of_statuses, true, "MPI_Waitsome");
}
