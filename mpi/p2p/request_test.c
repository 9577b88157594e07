/*
 * request_test.c: the non-blocking completion calls (MPI-3.1 sections 3.7.3, 3.7.5 and
 * 3.7.6). Each looks at the requests, and if it finds nothing to return, makes one turn of
 * progress and looks again, so that an application polling with MPI_Test moves its
 * communication forward (section 3.7.4).
 *
 * MPI_Test is on the latency path: a complete request costs one test.
 */
#include "p2p_internal.h"

#pragma weak MPI_Test = PMPI_Test
#pragma weak MPI_Testall = PMPI_Testall
#pragma weak MPI_Testany = PMPI_Testany
#pragma weak MPI_Testsome = PMPI_Testsome
#pragma weak MPI_Request_get_status = PMPI_Request_get_status

int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    static const char func_name[] = "MPI_Test";
    crmpi_request_t *req;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (request == NULL) {
            return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name, "request is NULL");
        }
        if (flag == NULL) {
            return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name, "flag is NULL");
        }
        if (!crmpi_p2p_request_ok(*request)) {
            return crmpi_p2p_raise_bad_request(func_name, -1);
        }
    }
    req = *request;
    if (!crmpi_p2p_request_is_live(req)) {
        *flag = 1;
        crmpi_p2p_status_set_empty(status);
        crmpi_unlock();
        return MPI_SUCCESS;
    }
    if (!req->complete) {
        bool counted = crmpi_p2p_grequest_wait_begin(1, request);
        crmpi_progress();
        crmpi_p2p_grequest_wait_end(counted);
        if (!req->complete) {
            *flag = 0;
            crmpi_unlock();
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    return crmpi_p2p_request_return(request, status, func_name);
}

/* Every live request of the array is complete. */
static bool test_all_complete(int count, const MPI_Request requests[])
{
    for (int i = 0; i < count; i++) {
        if (crmpi_p2p_request_is_live(requests[i]) && !requests[i]->complete) {
            return false;
        }
    }
    return true;
}

int PMPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                 MPI_Status array_of_statuses[])
{
    static const char func_name[] = "MPI_Testall";
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        rc = crmpi_p2p_check_request_array(func_name, count, array_of_requests);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        if (flag == NULL) {
            return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name, "flag is NULL");
        }
    }
    if (!test_all_complete(count, array_of_requests)) {
        bool counted = crmpi_p2p_grequest_wait_begin(count, array_of_requests);
        crmpi_progress();
        crmpi_p2p_grequest_wait_end(counted);
        /* All or nothing: with one still pending, no request is finished or changed. */
        if (!test_all_complete(count, array_of_requests)) {
            *flag = 0;
            crmpi_unlock();
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    return crmpi_p2p_requests_finish_all(count, array_of_requests, array_of_statuses, func_name);
}

int PMPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
                 MPI_Status *status)
{
    static const char func_name[] = "MPI_Testany";
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
        if (flag == NULL) {
            return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name, "flag is NULL");
        }
    }
    for (int look = 0; look < 2; look++) {
        live = 0;
        for (int i = 0; i < count; i++) {
            crmpi_request_t *req = array_of_requests[i];

            if (!crmpi_p2p_request_is_live(req)) {
                continue;
            }
            if (req->complete) {
                *flag = 1;
                *index = i;
                return crmpi_p2p_request_return(&array_of_requests[i], status, func_name);
            }
            live++;
        }
        /* Nothing to wait for: true, with MPI_UNDEFINED and the empty status (3.7.5). */
        if (live == 0) {
            *flag = 1;
            *index = MPI_UNDEFINED;
            crmpi_p2p_status_set_empty(status);
            crmpi_unlock();
            return MPI_SUCCESS;
        }
        if (look == 0) {
            bool counted = crmpi_p2p_grequest_wait_begin(count, array_of_requests);
            crmpi_progress();
            crmpi_p2p_grequest_wait_end(counted);
        }
    }
    *flag = 0;
    *index = MPI_UNDEFINED;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                  int array_of_indices[], MPI_Status array_of_statuses[])
{
    return crmpi_p2p_requests_some(incount, array_of_requests, outcount, array_of_indices,
                                   array_of_statuses, false, "MPI_Testsome");
}

/* As MPI_Test, but the request stays as it is: not freed, not made inactive (3.7.6). */
int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    static const char func_name[] = "MPI_Request_get_status";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (flag == NULL) {
            return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name, "flag is NULL");
        }
        if (!crmpi_p2p_request_ok(request)) {
            return crmpi_p2p_raise_bad_request(func_name, -1);
        }
    }
    if (!crmpi_p2p_request_is_live(request)) {
        *flag = 1;
        crmpi_p2p_status_set_empty(status);
        crmpi_unlock();
        return MPI_SUCCESS;
    }
    if (!request->complete) {
        bool counted = crmpi_p2p_grequest_wait_begin(1, &request);
        crmpi_progress();
        crmpi_p2p_grequest_wait_end(counted);
        if (!request->complete) {
            *flag = 0;
            crmpi_unlock();
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    if (crmpi_p2p_request_is_grequest(request)) {
        crmpi_p2p_grequest_status(request);
    }
    crmpi_p2p_status_copy_out(status, &request->status);
    /* Reported as MPI_Test would; the Wait or Test that finishes it reports it again. */
    if (request->status.MPI_ERROR != MPI_SUCCESS) {
        return crmpi_p2p_raise_status(request->owner, &request->status, func_name);
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}
