/*
 * comm_idup.c: MPI_Comm_idup (MPI-3.1 section 6.4.2), a non-blocking duplicate, and
 * MPI_Comm_idup_with_info (MPI-4.0 section 7.4.2), the same with the new communicator's
 * hints taken from an info object instead of comm's.
 *
 * Completing it inside the call would not be correct: the call must return without
 * waiting for the other ranks (a rank may call it, then send to a rank that calls it only
 * after receiving). So the call copies the attributes (the copy callbacks run here, in
 * the caller's thread), starts the context id agreement and returns a request; the
 * progress engine advances the agreement (idup_progress) and, once it ends, attaches the
 * layers, stores the new handle in *newcomm and completes the request. *newcomm must not
 * be read before then (6.4.2).
 */
#include <stdlib.h>

#include "comm_internal.h"
#include "crmpi_status.h"
#include "log.h"
#include "progress.h"

#pragma weak MPI_Comm_idup = PMPI_Comm_idup
#pragma weak MPI_Comm_idup_with_info = PMPI_Comm_idup_with_info

/* An idup in progress. */
typedef struct idup_pending {
    struct idup_pending *next; /* in idup_list, in order of the calls */
    crmpi_comm_cid_op_t *op;   /* the agreement */
    MPI_Comm dup;              /* the duplicate, activated when the agreement ends */
    MPI_Comm *newcomm;         /* the application's handle, set at the end */
    crmpi_request_t *req;      /* the application's request */
} idup_pending_t;

static idup_pending_t *idup_list;

static int idup_progress(void)
{
    idup_pending_t **pos = &idup_list;
    int events = 0;

    while (*pos) {
        idup_pending_t *p = *pos;
        uint32_t cids[CRMPI_COMM_CID_MAX];
        int rc;

        if (!crmpi_comm_cid_test(p->op, cids, &rc)) {
            pos = &p->next;
            continue;
        }
        *pos = p->next;
        if (rc == CRMPI_OK)
            rc = crmpi_comm_activate(p->dup, cids);
        if (rc == CRMPI_OK) {
            *p->newcomm = p->dup;
            crmpi_pml_request_set_complete(p->req, MPI_SUCCESS);
        } else {
            crmpi_log_error("MPI_Comm_idup: cannot make the duplicate (%s)", crmpi_strerror(rc));
            crmpi_comm_destroy(p->dup);
            crmpi_pml_request_set_complete(p->req, crmpi_comm_error_class(rc));
        }
        free(p);
        events++;
    }
    if (!idup_list)
        crmpi_progress_unregister(idup_progress);
    return events;
}

/* The body of both calls; `use_info`: the hints are `info`'s, not comm's. */
static int idup_start(MPI_Comm comm, MPI_Info info, bool use_info, MPI_Comm *newcomm,
                      MPI_Request *request, const char *func_name)
{
    crmpi_comm_xchg_set_t set;
    idup_pending_t *p;
    int err, rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (!crmpi_mpi_comm_is_valid(comm))
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
        if (newcomm == NULL || request == NULL)
            return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name,
                                               "newcomm or request is NULL");
    }
    p = calloc(1, sizeof(*p));
    if (!p)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_NO_MEM, func_name, NULL);
    err = crmpi_comm_dup_prepare(comm, info, use_info, &p->dup);
    if (err != MPI_SUCCESS) {
        free(p);
        return crmpi_mpi_errhandler_invoke(comm, err, func_name,
                                           "cannot copy the communicator's attributes");
    }
    /* Over both groups of an intercommunicator (crmpi_comm_xchg_all). */
    set = crmpi_comm_xchg_all(comm, CRMPI_COMM_TAG_IDUP_BASE -
                                        (int)(comm->idup_count++ & CRMPI_COMM_TAG_IDUP_MASK));
    rc = crmpi_progress_register(idup_progress);
    if (rc == CRMPI_ERR_EXISTS)
        rc = CRMPI_OK;
    if (rc == CRMPI_OK)
        rc = crmpi_pml_request_create_generic(comm->pml, &p->req);
    if (rc == CRMPI_OK) {
        rc = crmpi_comm_cid_start(&set, crmpi_comm_num_cids(p->dup), &p->op);
        if (rc != CRMPI_OK)
            crmpi_pml_request_free(p->req);
    }
    if (rc != CRMPI_OK) {
        crmpi_comm_destroy(p->dup);
        free(p);
        return crmpi_mpi_errhandler_invoke(comm, crmpi_comm_error_class(rc), func_name,
                                           "cannot start the duplication");
    }
    p->newcomm = newcomm;
    /* Appended: the agreements are advanced in the order of the calls. */
    idup_pending_t **tail = &idup_list;
    while (*tail)
        tail = &(*tail)->next;
    *tail = p;
    *request = p->req;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    return idup_start(comm, MPI_INFO_NULL, false, newcomm, request, "MPI_Comm_idup");
}

int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    return idup_start(comm, info, true, newcomm, request, "MPI_Comm_idup_with_info");
}
