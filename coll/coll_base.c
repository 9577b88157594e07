/*
 * coll_base.c: the collective framework (coll.h): component choice per communicator,
 * tags, blocking runs, non-blocking and persistent requests and their progress.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "coll_sched.h"
#include "component.h"
#include "crmpi_status.h"
#include "log.h"
#include "param.h"
#include "progress.h"

/* Tags of collectives (coll.h): blocking ones -2 - (sequence mod COLL_TAGS), so -2..-500;
 * non-blocking and persistent ones -501 - (nb_sequence mod COLL_TAGS), so -501..-999. */
#define COLL_TAG_FIRST    (-2)
#define COLL_TAG_FIRST_NB (-501)
#define COLL_TAGS         499

/* The framework's state in this process. */
static struct {
    int num_comms;                    /* communicators with collective state */
    crmpi_coll_sched_t *active;       /* non-blocking schedules still running */
    const crmpi_coll_ops_t *selected; /* the component chosen at the first init */
} coll_base;

/* Advance every running non-blocking collective; complete the finished ones. */
static int coll_base_progress(void);

extern const crmpi_component_info_t crmpi_coll_basic_info;
extern const crmpi_component_info_t crmpi_coll_tuned_info;
extern const crmpi_framework_info_t crmpi_coll_framework_info;

/* tuned is preferred; basic is the reference, chosen with --mca coll basic (or ^tuned). */
static int coll_base_query_tuned(const crmpi_component_t *component, int *priority_out,
                                 const char **reason_out)
{
    (void)component;
    (void)reason_out;
    *priority_out = 30;
    return CRMPI_OK;
}

static int coll_base_query_basic(const crmpi_component_t *component, int *priority_out,
                                 const char **reason_out)
{
    (void)component;
    (void)reason_out;
    *priority_out = 10;
    return CRMPI_OK;
}

static const crmpi_component_t coll_base_tuned_component = {
    .info = &crmpi_coll_tuned_info,
    .query = coll_base_query_tuned,
    .ops = &crmpi_coll_tuned_ops,
};

static const crmpi_component_t coll_base_basic_component = {
    .info = &crmpi_coll_basic_info,
    .query = coll_base_query_basic,
    .ops = &crmpi_coll_basic_ops,
};

static const crmpi_component_t *const coll_base_components[] = {
    &coll_base_tuned_component,
    &coll_base_basic_component,
    NULL,
};

crmpi_framework_t crmpi_coll_framework = {
    .info = &crmpi_coll_framework_info,
    .components = coll_base_components,
};

/* Open the framework (coll_base_verbose, the `coll` selection list) and choose the
 * component; every communicator gets its table. Errors are logged by the framework. */
static int coll_base_choose(const crmpi_coll_ops_t **ops_out)
{
    const crmpi_component_t *selected;
    int rc;

    /* Chosen once per process: the parameters do not change, and every rank of every
     * communicator must use the same algorithms. */
    if (coll_base.selected) {
        *ops_out = coll_base.selected;
        return CRMPI_OK;
    }
    if (!crmpi_coll_framework.is_open) {
        rc = crmpi_framework_open(&crmpi_coll_framework);
        if (rc != CRMPI_OK)
            return rc;
    }
    rc = crmpi_framework_select_one(&crmpi_coll_framework, &selected);
    if (rc != CRMPI_OK)
        return rc;
    coll_base.selected = selected->ops;
    *ops_out = coll_base.selected;
    return CRMPI_OK;
}

int crmpi_coll_comm_create(crmpi_pml_comm_t *pml, int rank, int size, crmpi_coll_comm_t **comm_out)
{
    crmpi_coll_comm_t *comm;
    int rc;

    if (coll_base.num_comms == 0) {
        coll_tuned_read_params();
        rc = crmpi_progress_register(coll_base_progress);
        if (rc != CRMPI_OK && rc != CRMPI_ERR_EXISTS)
            return rc;
    }
    comm = calloc(1, sizeof(*comm));
    if (!comm) {
        crmpi_log_error("coll: out of memory for a communicator's collective state");
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto err_unregister;
    }
    rc = coll_base_choose(&comm->ops);
    if (rc != CRMPI_OK)
        goto err_free_comm;
    comm->rank = rank;
    comm->size = size;
    comm->pml = pml;
    coll_base.num_comms++;
    crmpi_fw_verbose(&crmpi_coll_framework, 10,
                     "communicator of %d ranks (rank %d here): component %s", size, rank,
                     comm->ops->component);
    *comm_out = comm;
    return CRMPI_OK;

err_free_comm:
    free(comm);
err_unregister:
    if (coll_base.num_comms == 0)
        crmpi_progress_unregister(coll_base_progress);
    return rc;
}

int crmpi_coll_comm_create_inter(crmpi_pml_comm_t *pml, int rank, int size, int remote_size,
                                 crmpi_coll_comm_t *local, crmpi_coll_comm_t **comm_out)
{
    crmpi_coll_comm_t *comm;
    int rc = crmpi_coll_comm_create(pml, rank, size, &comm);

    if (rc != CRMPI_OK)
        return rc;
    /* Neither component has intercommunicator algorithms of its own but basic. */
    comm->ops = &crmpi_coll_basic_inter_ops;
    comm->remote_size = remote_size;
    comm->local = local;
    crmpi_fw_verbose(&crmpi_coll_framework, 10,
                     "intercommunicator of %d and %d ranks (rank %d here): component basic's "
                     "intercommunicator algorithms",
                     size, remote_size, rank);
    *comm_out = comm;
    return CRMPI_OK;
}

void crmpi_coll_comm_destroy(crmpi_coll_comm_t *comm)
{
    if (!comm)
        return;
    free(comm);
    if (--coll_base.num_comms == 0) {
        crmpi_progress_unregister(coll_base_progress);
        crmpi_framework_close(&crmpi_coll_framework);
        coll_base.selected = NULL;
    }
}

/* The tag of the communicator's next blocking collective, or non-blocking one (coll.h). */
static inline int coll_base_next_tag(crmpi_coll_comm_t *comm)
{
    return COLL_TAG_FIRST - (int)(comm->sequence++ % COLL_TAGS);
}

static inline int coll_base_next_nb_tag(crmpi_coll_comm_t *comm)
{
    return COLL_TAG_FIRST_NB - (int)(comm->nb_sequence++ % COLL_TAGS);
}

/* Build the schedule of a collective with its tag. */
static int coll_base_build(crmpi_coll_comm_t *comm, crmpi_coll_kind_t kind,
                           const crmpi_coll_args_t *args, int tag, crmpi_coll_sched_t **sched_out)
{
    crmpi_coll_sched_t *sched;
    int rc;

    /* Scan and Exscan on an intercommunicator (the MPI layer refuses them first). */
    if (!comm->ops->build[kind])
        return CRMPI_ERR_NOT_SUPPORTED;
    sched = crmpi_coll_sched_create(comm, tag);
    if (!sched)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    rc = comm->ops->build[kind](args, comm, sched);
    if (rc != CRMPI_OK) {
        crmpi_coll_sched_free(sched);
        return rc;
    }
    *sched_out = sched;
    return CRMPI_OK;
}

int crmpi_coll_run(crmpi_coll_comm_t *comm, crmpi_coll_kind_t kind, const crmpi_coll_args_t *args)
{
    int tag = coll_base_next_tag(comm);
    crmpi_coll_sched_t *sched;
    int rc;

    if (comm->ops->direct[kind]) {
        rc = comm->ops->direct[kind](args, comm, tag);
        if (rc != CRMPI_ERR_NOT_SUPPORTED)
            return rc;
    }
    rc = coll_base_build(comm, kind, args, tag, &sched);
    if (rc != CRMPI_OK)
        return rc;
    /* Run here, not through the progress list: the schedule lives only for this call. */
    for (;;) {
        crmpi_coll_sched_progress(sched);
        if (sched->done)
            break;
        crmpi_pml_wait_turn();
    }
    rc = sched->error;
    crmpi_coll_sched_free(sched);
    return rc;
}

/* The end of a non-blocking collective's request: the communicator may go now. */
static void coll_base_request_release(crmpi_coll_sched_t *sched)
{
    crmpi_pml_comm_t *pml = sched->comm->pml;

    sched->req.magic = 0;
    crmpi_coll_sched_free(sched);
    crmpi_pml_comm_request_ended(pml);
}

/* The request's free_fn: MPI_Wait/Test finished it, or it was freed and completed. */
static void coll_base_request_free(crmpi_request_t *req)
{
    coll_base_request_release((crmpi_coll_sched_t *)req);
}

static void coll_base_list_remove(crmpi_coll_sched_t *sched)
{
    if (sched->prev)
        sched->prev->next = sched->next;
    else
        coll_base.active = sched->next;
    if (sched->next)
        sched->next->prev = sched->prev;
    sched->listed = false;
}

/* A persistent collective (crmpi_coll_init): its arguments, its neighbour lists copied. */
typedef struct coll_persistent {
    crmpi_request_t req;     /* first: the application's handle */
    crmpi_coll_comm_t *comm; /* the communicator */
    crmpi_coll_kind_t kind;  /* which collective */
    crmpi_coll_args_t args;  /* as given, sources and dests pointing below */
    int *neighbors;          /* the copies of args.sources then args.dests, or NULL */
} coll_persistent_t;

static void coll_persistent_release(coll_persistent_t *pc)
{
    crmpi_pml_comm_t *pml = pc->comm->pml;

    pc->req.magic = 0;
    free(pc->neighbors);
    free(pc);
    crmpi_pml_comm_request_ended(pml);
}

/* The request's free_fn: MPI_Request_free of an inactive one, or of one that since
 * completed. */
static void coll_persistent_free(crmpi_request_t *req)
{
    coll_persistent_release((coll_persistent_t *)req);
}

/* A non-blocking collective's schedule ran to its end: complete its request (a persistent
 * collective's when the schedule was one start of it). */
static void coll_base_complete(crmpi_coll_sched_t *sched)
{
    crmpi_request_t *req = sched->persist ? sched->persist : &sched->req;

    coll_base_list_remove(sched);
    req->status.MPI_SOURCE = MPI_ANY_SOURCE;
    req->status.MPI_TAG = MPI_ANY_TAG;
    req->status._cancelled = 0;
    req->status._nbytes = 0;
    if (sched->error > 0)
        req->status.MPI_ERROR = sched->error;
    else if (sched->error < 0)
        req->status.MPI_ERROR =
            sched->error == CRMPI_ERR_OUT_OF_RESOURCE ? MPI_ERR_NO_MEM : MPI_ERR_OTHER;
    else
        req->status.MPI_ERROR = MPI_SUCCESS;
    req->complete = true;
    if (sched->persist) {
        /* This start is over; the request stays for the next one. */
        crmpi_coll_sched_free(sched);
        if (req->free_when_complete)
            coll_persistent_release((coll_persistent_t *)req);
        return;
    }
    if (req->free_when_complete)
        coll_base_request_release(sched);
}

/* Put a started schedule on the progress list and run its first round. */
static void coll_base_list_add(crmpi_coll_sched_t *sched)
{
    sched->next = coll_base.active;
    sched->prev = NULL;
    if (coll_base.active)
        coll_base.active->prev = sched;
    coll_base.active = sched;
    sched->listed = true;
    /* Start the first round now, so its messages go out before the application computes.
     * A failure completes the request with its error (MPI-3.1 section 5.12: the error of
     * a non-blocking collective is reported at its completion). */
    crmpi_coll_sched_progress(sched);
    if (sched->done)
        coll_base_complete(sched);
}

int crmpi_coll_init(crmpi_coll_comm_t *comm, crmpi_coll_kind_t kind, const crmpi_coll_args_t *args,
                    crmpi_request_t **req_out)
{
    coll_persistent_t *pc = calloc(1, sizeof(*pc));
    size_t nneighbors = (size_t)args->nsources + (size_t)args->ndests;

    if (!pc) {
        crmpi_log_error("coll: out of memory for a persistent collective");
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    pc->comm = comm;
    pc->kind = kind;
    pc->args = *args;
    if (nneighbors > 0) {
        pc->neighbors = malloc(nneighbors * sizeof(int));
        if (!pc->neighbors) {
            free(pc);
            crmpi_log_error("coll: out of memory for a persistent collective");
            return CRMPI_ERR_OUT_OF_RESOURCE;
        }
        memcpy(pc->neighbors, args->sources, (size_t)args->nsources * sizeof(int));
        memcpy(pc->neighbors + args->nsources, args->dests, (size_t)args->ndests * sizeof(int));
        pc->args.sources = pc->neighbors;
        pc->args.dests = pc->neighbors + args->nsources;
    }
    pc->req.magic = CRMPI_REQUEST_MAGIC;
    pc->req.kind = CRMPI_REQUEST_COLL;
    pc->req.persistent = true;
    pc->req.owner = crmpi_pml_comm_owner(comm->pml);
    pc->req.free_fn = coll_persistent_free;
    /* Live on the PML communicator until freed, as a non-blocking collective's. */
    crmpi_pml_comm_request_started(comm->pml);
    *req_out = &pc->req;
    return CRMPI_OK;
}

int crmpi_coll_restart(crmpi_request_t *req)
{
    coll_persistent_t *pc = (coll_persistent_t *)req;
    crmpi_coll_sched_t *sched;
    int rc =
        coll_base_build(pc->comm, pc->kind, &pc->args, coll_base_next_nb_tag(pc->comm), &sched);

    if (rc != CRMPI_OK)
        return rc;
    sched->persist = req;
    req->active = true;
    req->complete = false;
    coll_base_list_add(sched);
    return CRMPI_OK;
}

int crmpi_coll_start(crmpi_coll_comm_t *comm, crmpi_coll_kind_t kind, const crmpi_coll_args_t *args,
                     crmpi_request_t **req_out)
{
    crmpi_coll_sched_t *sched;
    crmpi_request_t *req;
    int rc = coll_base_build(comm, kind, args, coll_base_next_nb_tag(comm), &sched);

    if (rc != CRMPI_OK)
        return rc;
    req = &sched->req;
    req->magic = CRMPI_REQUEST_MAGIC;
    req->kind = CRMPI_REQUEST_COLL;
    req->owner = crmpi_pml_comm_owner(comm->pml);
    req->free_fn = coll_base_request_free;
    /* Live on the PML communicator until freed: between two rounds no PML request of the
     * schedule is, and MPI_Comm_free must not take the communicator away then. */
    crmpi_pml_comm_request_started(comm->pml);
    *req_out = req;
    coll_base_list_add(sched);
    return CRMPI_OK;
}

static int coll_base_progress(void)
{
    int events = 0;
    crmpi_coll_sched_t *next;

    for (crmpi_coll_sched_t *sched = coll_base.active; sched; sched = next) {
        if (sched->busy) {
            next = sched->next;
            continue;
        }
        events += crmpi_coll_sched_progress(sched);
        /* Read after progress: a user op runs unlocked, and the list may have changed; this
         * schedule itself stays (it is complete only once we say so below). */
        next = sched->next;
        if (sched->done)
            coll_base_complete(sched);
    }
    return events;
}
