/*
 * request_complete.c: what the calls completing several requests share (MPI-3.1 section
 * 3.7.5): finding the complete ones, finishing them into the status array, and reporting
 * failures as MPI_ERR_IN_STATUS.
 */
#include "p2p_internal.h"

int crmpi_p2p_requests_finish_all(int count, MPI_Request requests[], MPI_Status statuses[],
                                  const char *func_name)
{
    crmpi_p2p_first_error_t first = {.index = -1};

    for (int i = 0; i < count; i++) {
        MPI_Status *status = statuses == MPI_STATUSES_IGNORE ? NULL : &statuses[i];

        if (!crmpi_p2p_request_is_live(requests[i])) {
            crmpi_p2p_status_set_empty(status);
            continue;
        }
        crmpi_p2p_request_finish_slot(&requests[i], i, status, &first);
    }
    if (first.index >= 0) {
        return crmpi_p2p_raise_in_status(first.comm, func_name, first.index, first.error);
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* The live requests that are complete: positions to indices_out, in increasing order.
 * @return how many; *live_out: how many are live. */
static int requests_find_complete(int count, const MPI_Request requests[], int indices_out[],
                                  int *live_out)
{
    int done = 0;
    int live = 0;

    for (int i = 0; i < count; i++) {
        if (!crmpi_p2p_request_is_live(requests[i])) {
            continue;
        }
        live++;
        if (requests[i]->complete) {
            indices_out[done++] = i;
        }
    }
    *live_out = live;
    return done;
}

/* Finish the `done` requests at `indices`: statuses[k] for indices[k]. Returns with the lock
 * released: MPI_SUCCESS or MPI_ERR_IN_STATUS raised. */
static int requests_finish_some(int done, const int indices[], MPI_Request requests[],
                                MPI_Status statuses[], const char *func_name)
{
    crmpi_p2p_first_error_t first = {.index = -1};

    for (int k = 0; k < done; k++) {
        MPI_Status *status = statuses == MPI_STATUSES_IGNORE ? NULL : &statuses[k];

        crmpi_p2p_request_finish_slot(&requests[indices[k]], indices[k], status, &first);
    }
    if (first.index >= 0) {
        return crmpi_p2p_raise_in_status(first.comm, func_name, first.index, first.error);
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}

int crmpi_p2p_requests_some(int incount, MPI_Request requests[], int *outcount, int indices[],
                            MPI_Status statuses[], bool blocking, const char *func_name)
{
    bool progressed = false;
    int done, live;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        rc = crmpi_p2p_check_request_array(func_name, incount, requests);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        if (outcount == NULL) {
            return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name, "outcount is NULL");
        }
        if (incount > 0 && indices == NULL) {
            return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name, "array_of_indices is NULL");
        }
    }
    for (;;) {
        done = requests_find_complete(incount, requests, indices, &live);
        if (live == 0) {
            *outcount = MPI_UNDEFINED;
            crmpi_unlock();
            return MPI_SUCCESS;
        }
        /* Testsome looks again after one turn of progress; Waitsome until one is done. */
        if (done > 0 || (!blocking && progressed)) {
            break;
        }
        bool counted = crmpi_p2p_grequest_wait_begin(incount, requests);
        if (blocking) {
            crmpi_p2p_wait_turn();
        } else {
            crmpi_progress();
            progressed = true;
        }
        crmpi_p2p_grequest_wait_end(counted);
    }
    *outcount = done;
    return requests_finish_some(done, indices, requests, statuses, func_name);
}
