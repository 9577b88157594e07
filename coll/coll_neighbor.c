/*
 * coll_neighbor.c: the neighbourhood collectives (MPI-3.1 section 7.6) as one round of
 * messages: a receive of block i from in-neighbour i, a send of block i (allgather: the
 * whole send buffer) to out-neighbour i, MPI_PROC_NULL neighbours skipped. Both components
 * use this builder: there is no algorithm to choose, each rank talks to its neighbours only.
 *
 * Matching. Every message of one collective has its tag, so the k-th message from rank a
 * to rank b is taken by the k-th receive from a that b posts (the PML does not overtake).
 * Both sides must therefore list the messages between a pair in the same order:
 *   - a graph or distributed graph: each edge is listed in the same order at both ends
 *     (MPI_Graph_create's adjacency, MPI_Dist_graph's edges), so block order is right;
 *   - a Cartesian grid: the sends go to the rank at -1, then at +1, of each dimension; the
 *     message sent towards +1 is received by that rank as coming from its -1, and the other
 *     way round. When both neighbours of a dimension are one rank (a periodic dimension of
 *     1 or 2 processes), the receives must then be posted +1 first: the first message from
 *     that rank is the one it sent towards -1, which arrives here "from +1". So in each pair
 *     of receive blocks the second is posted first (cart_pairs).
 */
#include "config.h"

#include "coll_sched.h"
#include "crmpi_status.h"

/* Where block i of a side is, how many elements of which type. */
static void neighbor_block(const crmpi_coll_args_t *a, crmpi_coll_kind_t kind, int i, bool send,
                           void **buf_out, size_t *count_out, MPI_Datatype *type_out)
{
    char *buf = send ? (char *)(uintptr_t)a->sbuf : a->rbuf;
    MPI_Datatype type = send ? a->stype : a->rtype;
    size_t count = send ? a->scount : a->rcount;

    switch (kind) {
    case CRMPI_COLL_NEIGHBOR_ALLGATHER:
        /* Every out-neighbour gets the whole send buffer. */
        if (!send)
            buf += (MPI_Aint)i * (MPI_Aint)count * type->extent;
        break;
    case CRMPI_COLL_NEIGHBOR_ALLGATHERV:
        if (!send) {
            count = (size_t)crmpi_count_array_at(a->rcounts, i);
            buf += (MPI_Aint)crmpi_count_array_at(a->rdispls, i) * type->extent;
        }
        break;
    case CRMPI_COLL_NEIGHBOR_ALLTOALL: buf += (MPI_Aint)i * (MPI_Aint)count * type->extent; break;
    case CRMPI_COLL_NEIGHBOR_ALLTOALLV:
        count = (size_t)crmpi_count_array_at(send ? a->scounts : a->rcounts, i);
        buf += (MPI_Aint)crmpi_count_array_at(send ? a->sdispls : a->rdispls, i) * type->extent;
        break;
    default: /* CRMPI_COLL_NEIGHBOR_ALLTOALLW: a type each, byte displacements */
        type = send ? a->stypes[i] : a->rtypes[i];
        count = (size_t)crmpi_count_array_at(send ? a->scounts : a->rcounts, i);
        buf += crmpi_count_array_at(send ? a->sdispls : a->rdispls, i);
        break;
    }
    *buf_out = buf;
    *count_out = count;
    *type_out = type;
}

/* The round of neighbourhood collective `kind`. */
static int neighbor_build(crmpi_coll_kind_t kind, const crmpi_coll_args_t *a, crmpi_coll_sched_t *s)
{
    void *buf;
    size_t count;
    MPI_Datatype type;
    int rc;

    for (int k = 0; k < a->nsources; k++) {
        /* Cartesian: of each (-1, +1) pair, the +1 receive first (see the top). */
        int i = a->cart_pairs ? k ^ 1 : k;

        if (a->sources[i] == MPI_PROC_NULL)
            continue;
        neighbor_block(a, kind, i, false, &buf, &count, &type);
        rc = crmpi_coll_sched_recv(s, buf, count, type, a->sources[i]);
        if (rc != CRMPI_OK)
            return rc;
    }
    for (int i = 0; i < a->ndests; i++) {
        if (a->dests[i] == MPI_PROC_NULL)
            continue;
        neighbor_block(a, kind, i, true, &buf, &count, &type);
        rc = crmpi_coll_sched_send(s, buf, count, type, a->dests[i]);
        if (rc != CRMPI_OK)
            return rc;
    }
    return crmpi_coll_sched_round(s);
}

int coll_neighbor_allgather(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                            crmpi_coll_sched_t *s)
{
    (void)comm;
    return neighbor_build(CRMPI_COLL_NEIGHBOR_ALLGATHER, a, s);
}

int coll_neighbor_allgatherv(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                             crmpi_coll_sched_t *s)
{
    (void)comm;
    return neighbor_build(CRMPI_COLL_NEIGHBOR_ALLGATHERV, a, s);
}

int coll_neighbor_alltoall(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                           crmpi_coll_sched_t *s)
{
    (void)comm;
    return neighbor_build(CRMPI_COLL_NEIGHBOR_ALLTOALL, a, s);
}

int coll_neighbor_alltoallv(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                            crmpi_coll_sched_t *s)
{
    (void)comm;
    return neighbor_build(CRMPI_COLL_NEIGHBOR_ALLTOALLV, a, s);
}

int coll_neighbor_alltoallw(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                            crmpi_coll_sched_t *s)
{
    (void)comm;
    return neighbor_build(CRMPI_COLL_NEIGHBOR_ALLTOALLW, a, s);
}
