/*
 * neighbor.c: the blocking neighbourhood collectives MPI_Neighbor_allgather and
 * MPI_Neighbor_alltoall (MPI-3.1 section 7.6), straight on the PML: one receive per
 * in-neighbour and one send per out-neighbour, all posted, then all waited for.
 *
 * Neighbour order (7.6): Cartesian, per dimension the rank at -1 then the one at +1 (both
 * for sends and receives; MPI_PROC_NULL at a non-periodic border, whose block is left
 * alone); graph, MPI_Graph_neighbors' order; distributed graph, sources and destinations.
 *
 * Pairing: on a Cartesian grid the message sent towards +1 in dimension d carries its own
 * tag, different from the one sent towards -1, because both may go to the same rank (a
 * periodic dimension of 1 or 2); the receive from -1 takes the "+1" tag. In a graph the
 * k-th message from i to j is the k-th receive at j from i (non-overtaking), as both
 * sides list their edges in the same order.
 */
#include <stdlib.h>

#include "topo.h"

#pragma weak MPI_Neighbor_allgather = PMPI_Neighbor_allgather
#pragma weak MPI_Neighbor_alltoall = PMPI_Neighbor_alltoall

/* This process's neighbours and the tag of each message. */
typedef struct neighbor_plan {
    int nin, nout; /* receives, sends */
    int *in, *out; /* ranks (or MPI_PROC_NULL) */
    int *in_tag;   /* tag of each receive */
    int *out_tag;  /* tag of each send */
} neighbor_plan_t;

static void neighbor_plan_free(neighbor_plan_t *plan)
{
    free(plan->in);
    free(plan->out);
    free(plan->in_tag);
    free(plan->out_tag);
}

/* tag_base - 0 .. : Cartesian tags, two per dimension. */
static int neighbor_plan_make(MPI_Comm comm, int tag_base, neighbor_plan_t *plan)
{
    const struct crmpi_topo_s *topo = comm->topo;
    int nin, nout;

    switch (topo->kind) {
    case MPI_CART: nin = nout = 2 * topo->ndims; break;
    case MPI_GRAPH:
        nin = nout = topo->index[comm->rank] - (comm->rank > 0 ? topo->index[comm->rank - 1] : 0);
        break;
    default:
        nin = topo->indegree;
        nout = topo->outdegree;
        break;
    }
    plan->nin = nin;
    plan->nout = nout;
    plan->in = malloc(((size_t)nin + 1) * sizeof(int));
    plan->out = malloc(((size_t)nout + 1) * sizeof(int));
    plan->in_tag = malloc(((size_t)nin + 1) * sizeof(int));
    plan->out_tag = malloc(((size_t)nout + 1) * sizeof(int));
    if (!plan->in || !plan->out || !plan->in_tag || !plan->out_tag) {
        neighbor_plan_free(plan);
        return MPI_ERR_NO_MEM;
    }
    if (topo->kind == MPI_CART) {
        int *coords = malloc(((size_t)topo->ndims + 1) * sizeof(int));
        if (!coords) {
            neighbor_plan_free(plan);
            return MPI_ERR_NO_MEM;
        }
        for (int d = 0; d < topo->ndims; d++) {
            crmpi_topo_cart_coords(topo, comm->rank, coords);
            coords[d]--;
            plan->in[2 * d] = plan->out[2 * d] = crmpi_topo_cart_rank(topo, coords);
            coords[d] += 2;
            plan->in[2 * d + 1] = plan->out[2 * d + 1] = crmpi_topo_cart_rank(topo, coords);
            /* Sent towards -1: tag base-2d-1; towards +1: base-2d. */
            plan->out_tag[2 * d] = tag_base - 2 * d - 1;
            plan->out_tag[2 * d + 1] = tag_base - 2 * d;
            plan->in_tag[2 * d] = tag_base - 2 * d;         /* from -1: its "+1" send */
            plan->in_tag[2 * d + 1] = tag_base - 2 * d - 1; /* from +1: its "-1" send */
        }
        free(coords);
        return MPI_SUCCESS;
    }
    for (int i = 0; i < nin; i++) {
        plan->in[i] = topo->kind == MPI_GRAPH
                          ? topo->edges[(comm->rank > 0 ? topo->index[comm->rank - 1] : 0) + i]
                          : topo->sources[i];
        plan->in_tag[i] = tag_base;
    }
    for (int i = 0; i < nout; i++) {
        plan->out[i] = topo->kind == MPI_GRAPH ? plan->in[i] : topo->destinations[i];
        plan->out_tag[i] = tag_base;
    }
    return MPI_SUCCESS;
}

/* The body of both calls: send block i (or the whole sendbuf when !per_neighbor_send) to
 * out-neighbour i, receive block i from in-neighbour i. */
static int neighbor_exchange(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             bool per_neighbor_send, int tag_base, const char *func_name)
{
    neighbor_plan_t plan;
    crmpi_request_t **reqs;
    int err, rc = CRMPI_OK, posted = 0;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (!crmpi_mpi_comm_is_valid(comm))
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
    if (!comm->topo)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_TOPOLOGY, func_name,
                                           "the communicator has no topology");
    if (sendcount < 0 || recvcount < 0)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_COUNT, func_name, NULL);
    if (sendtype == MPI_DATATYPE_NULL || recvtype == MPI_DATATYPE_NULL ||
        !(sendtype->committed || sendtype->predefined) ||
        !(recvtype->committed || recvtype->predefined))
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_TYPE, func_name,
                                           "a datatype is null or not committed");
    err = neighbor_plan_make(comm, tag_base, &plan);
    if (err != MPI_SUCCESS)
        return crmpi_mpi_errhandler_invoke(comm, err, func_name, NULL);
    reqs = malloc(((size_t)plan.nin + (size_t)plan.nout + 1) * sizeof(*reqs));
    if (!reqs) {
        neighbor_plan_free(&plan);
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_NO_MEM, func_name, NULL);
    }
    for (int i = 0; i < plan.nin && rc == CRMPI_OK; i++) {
        if (plan.in[i] == MPI_PROC_NULL)
            continue;
        rc = crmpi_pml_irecv((char *)recvbuf + (MPI_Aint)i * recvcount * recvtype->extent,
                             (size_t)recvcount, recvtype, plan.in[i], plan.in_tag[i], comm->pml,
                             &reqs[posted]);
        posted += rc == CRMPI_OK;
    }
    for (int i = 0; i < plan.nout && rc == CRMPI_OK; i++) {
        const char *block = (const char *)sendbuf;
        if (plan.out[i] == MPI_PROC_NULL)
            continue;
        if (per_neighbor_send)
            block += (MPI_Aint)i * sendcount * sendtype->extent;
        rc = crmpi_pml_isend(block, (size_t)sendcount, sendtype, plan.out[i], plan.out_tag[i],
                             CRMPI_PML_SEND_STANDARD, comm->pml, &reqs[posted]);
        posted += rc == CRMPI_OK;
    }
    err = MPI_SUCCESS;
    for (int i = 0; i < posted; i++) {
        MPI_Status status;
        crmpi_pml_wait(reqs[i]);
        crmpi_pml_request_finish(reqs[i], &status);
        if (err == MPI_SUCCESS)
            err = status.MPI_ERROR;
    }
    free(reqs);
    neighbor_plan_free(&plan);
    if (rc != CRMPI_OK)
        return crmpi_mpi_errhandler_invoke(comm, crmpi_comm_error_class(rc), func_name,
                                           "cannot start a transfer to a neighbour");
    if (err != MPI_SUCCESS)
        return crmpi_mpi_errhandler_invoke(comm, err, func_name,
                                           "a message from a neighbour did not fit");
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor_exchange(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                             false, CRMPI_COMM_TAG_NEIGHBOR_AG, "MPI_Neighbor_allgather");
}

int PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor_exchange(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, true,
                             CRMPI_COMM_TAG_NEIGHBOR_A2A, "MPI_Neighbor_alltoall");
}
