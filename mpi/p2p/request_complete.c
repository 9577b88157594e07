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

int crmpi_p2p_requests_find_complete(int count, const MPI_Request requests[], int indices_out[],
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

int crmpi_p2p_requests_finish_some(int done, const int indices[], MPI_Request requests[],
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
