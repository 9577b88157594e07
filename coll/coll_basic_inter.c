/*
 * coll_basic_inter.c: component basic's collectives on intercommunicators (MPI-3.1
 * sections 5.2.2 and 5.2.3). An intercommunicator joins two disjoint groups, A and B: what the
 * processes of A contribute ends up in B, and the other way round; ranks in the arguments
 * (roots, per-rank blocks) name the remote group. Rooted collectives name the root by
 * MPI_ROOT in the root itself, MPI_PROC_NULL in the rest of its group (which take no part)
 * and the root's rank in the other group.
 *
 * Two patterns, both built as schedules like every other collective:
 * - Bcast, Gather(v), Scatter(v), Allgatherv and Alltoall(v,w) move each block straight
 *   between the two processes concerned, as basic does on an intracommunicator.
 * - Barrier, the reductions and Allgather first combine each group's contributions at its
 *   leader (local rank 0) over the group's own communicator (comm->local), then the two
 *   leaders exchange the combined data over the intercommunicator, and each leader hands
 *   what came from the other group to its own group (a broadcast, or a scatter of blocks).
 *   The local steps reuse basic's intracommunicator builders on comm->local; a reduction
 *   combines in rank order, so non-commutative ops are right.
 *
 * Scan and Exscan are not defined on intercommunicators: their slots stay NULL.
 */
#include "config.h"

#include "coll_sched.h"
#include "crmpi_status.h"

#define TRY(call)                                                                                  \
    do {                                                                                           \
        int try_rc_ = (call);                                                                      \
        if (try_rc_ != CRMPI_OK)                                                                   \
            return try_rc_;                                                                        \
    } while (0)

/* The group leader, which exchanges with the other group's (local rank 0 of each side). */
#define INTER_LEADER 0

/* Element `index` of a buffer of `type` (extent-spaced). */
static inline void *elem_at(const void *buf, size_t index, MPI_Datatype type)
{
    return (char *)buf + (MPI_Aint)index * type->extent;
}

/*
 * Barrier: every member tells its leader it arrived; the leaders tell each other once
 * their whole group did; each then releases its group. So no process leaves before every
 * process of the other group has entered (MPI-3.1 section 5.3).
 */
static int inter_barrier(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s)
{
    crmpi_coll_comm_t *local = comm->local;

    (void)a;
    crmpi_coll_sched_target(s, local);
    if (local->rank != INTER_LEADER) {
        TRY(crmpi_coll_sched_send(s, NULL, 0, MPI_BYTE, INTER_LEADER));
        TRY(crmpi_coll_sched_round(s));
        TRY(crmpi_coll_sched_recv(s, NULL, 0, MPI_BYTE, INTER_LEADER));
        return crmpi_coll_sched_round(s);
    }
    for (int r = 1; r < local->size; r++)
        TRY(crmpi_coll_sched_recv(s, NULL, 0, MPI_BYTE, r));
    TRY(crmpi_coll_sched_round(s));
    crmpi_coll_sched_target(s, comm);
    TRY(crmpi_coll_sched_send(s, NULL, 0, MPI_BYTE, INTER_LEADER));
    TRY(crmpi_coll_sched_recv(s, NULL, 0, MPI_BYTE, INTER_LEADER));
    TRY(crmpi_coll_sched_round(s));
    crmpi_coll_sched_target(s, local);
    for (int r = 1; r < local->size; r++)
        TRY(crmpi_coll_sched_send(s, NULL, 0, MPI_BYTE, r));
    return crmpi_coll_sched_round(s);
}

/* Bcast: the root sends the buffer to every process of the other group. */
static int inter_bcast(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s)
{
    if (a->root == MPI_PROC_NULL)
        return CRMPI_OK;
    if (a->root == MPI_ROOT) {
        for (int r = 0; r < comm->remote_size; r++)
            TRY(crmpi_coll_sched_send(s, a->rbuf, a->rcount, a->rtype, r));
    } else {
        TRY(crmpi_coll_sched_recv(s, a->rbuf, a->rcount, a->rtype, a->root));
    }
    return crmpi_coll_sched_round(s);
}

/*
 * The local part of the reductions: this group's `count` elements at sbuf reduced, in
 * rank order, into *result_out at the leader (a temporary buffer of the schedule; NULL
 * elsewhere). Leaves the schedule's target on the local group.
 */
static int inter_reduce_local(const crmpi_coll_args_t *a, const void *sbuf, size_t count,
                              crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s, void **result_out)
{
    crmpi_coll_comm_t *local = comm->local;
    crmpi_coll_args_t reduce = {0};

    *result_out = NULL;
    if (local->rank == INTER_LEADER) {
        *result_out = crmpi_coll_sched_tmp(s, count, a->rtype);
        if (!*result_out)
            return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    reduce.sbuf = sbuf;
    reduce.rbuf = *result_out;
    reduce.rcount = count;
    reduce.rtype = a->rtype;
    reduce.op = a->op;
    reduce.root = INTER_LEADER;
    crmpi_coll_sched_target(s, local);
    return coll_basic_reduce(&reduce, local, s);
}

/* Reduce: the other group reduces at its leader, which sends the result to the root. */
static int inter_reduce(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s)
{
    void *result;

    if (a->root == MPI_PROC_NULL)
        return CRMPI_OK;
    if (a->root == MPI_ROOT) {
        TRY(crmpi_coll_sched_recv(s, a->rbuf, a->rcount, a->rtype, INTER_LEADER));
        return crmpi_coll_sched_round(s);
    }
    TRY(inter_reduce_local(a, a->sbuf, a->rcount, comm, s, &result));
    if (comm->local->rank != INTER_LEADER)
        return CRMPI_OK;
    crmpi_coll_sched_target(s, comm);
    TRY(crmpi_coll_sched_send(s, result, a->rcount, a->rtype, a->root));
    return crmpi_coll_sched_round(s);
}

/* Allreduce: each group reduces at its leader; the leaders swap their results; each
 * broadcasts the other group's result in its group (MPI-3.1 section 5.9.6). */
static int inter_allreduce(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                           crmpi_coll_sched_t *s)
{
    crmpi_coll_args_t bcast = {0};
    void *result;

    TRY(inter_reduce_local(a, a->sbuf, a->rcount, comm, s, &result));
    if (comm->local->rank == INTER_LEADER) {
        crmpi_coll_sched_target(s, comm);
        TRY(crmpi_coll_sched_send(s, result, a->rcount, a->rtype, INTER_LEADER));
        TRY(crmpi_coll_sched_recv(s, a->rbuf, a->rcount, a->rtype, INTER_LEADER));
        TRY(crmpi_coll_sched_round(s));
        crmpi_coll_sched_target(s, comm->local);
    }
    bcast.rbuf = a->rbuf;
    bcast.rcount = a->rcount;
    bcast.rtype = a->rtype;
    bcast.root = INTER_LEADER;
    return coll_basic_bcast(&bcast, comm->local, s);
}

/* Gather and Gatherv (rcounts/rdispls set): the root receives every block of the other
 * group, each straight from its process. */
static int inter_gather(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s)
{
    if (a->root == MPI_PROC_NULL)
        return CRMPI_OK;
    if (a->root != MPI_ROOT) {
        TRY(crmpi_coll_sched_send(s, a->sbuf, a->scount, a->stype, a->root));
        return crmpi_coll_sched_round(s);
    }
    for (int r = 0; r < comm->remote_size; r++) {
        size_t count = (size_t)crmpi_count_array_or(a->rcounts, r, (MPI_Count)a->rcount);
        size_t displ =
            (size_t)crmpi_count_array_or(a->rdispls, r, (MPI_Count)r * (MPI_Count)a->rcount);

        TRY(crmpi_coll_sched_recv(s, elem_at(a->rbuf, displ, a->rtype), count, a->rtype, r));
    }
    return crmpi_coll_sched_round(s);
}

/* Scatter and Scatterv (scounts/sdispls set): the root sends each process of the other
 * group its block. */
static int inter_scatter(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s)
{
    if (a->root == MPI_PROC_NULL)
        return CRMPI_OK;
    if (a->root != MPI_ROOT) {
        TRY(crmpi_coll_sched_recv(s, a->rbuf, a->rcount, a->rtype, a->root));
        return crmpi_coll_sched_round(s);
    }
    for (int r = 0; r < comm->remote_size; r++) {
        size_t count = (size_t)crmpi_count_array_or(a->scounts, r, (MPI_Count)a->scount);
        size_t displ =
            (size_t)crmpi_count_array_or(a->sdispls, r, (MPI_Count)r * (MPI_Count)a->scount);

        TRY(crmpi_coll_sched_send(s, elem_at(a->sbuf, displ, a->stype), count, a->stype, r));
    }
    return crmpi_coll_sched_round(s);
}

/*
 * Allgather: each group gathers its blocks at its leader; the leaders swap the gathered
 * vectors (this group's size * scount elements of stype for the other group's remote_size
 * * rcount of rtype, the same type signature by MPI's rules); each leader broadcasts what
 * it got in its group (MPI-3.1 section 5.7).
 */
static int inter_allgather(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                           crmpi_coll_sched_t *s)
{
    crmpi_coll_comm_t *local = comm->local;
    size_t mine = (size_t)local->size * a->scount, theirs = (size_t)comm->remote_size * a->rcount;
    crmpi_coll_args_t gather = {0}, bcast = {0};
    void *gathered = NULL;

    if (local->rank == INTER_LEADER) {
        gathered = crmpi_coll_sched_tmp(s, mine, a->stype);
        if (!gathered)
            return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    gather.sbuf = a->sbuf;
    gather.scount = a->scount;
    gather.stype = a->stype;
    gather.rbuf = gathered;
    gather.rcount = a->scount;
    gather.rtype = a->stype;
    gather.root = INTER_LEADER;
    crmpi_coll_sched_target(s, local);
    TRY(coll_basic_gather(&gather, local, s));
    if (local->rank == INTER_LEADER) {
        crmpi_coll_sched_target(s, comm);
        TRY(crmpi_coll_sched_send(s, gathered, mine, a->stype, INTER_LEADER));
        TRY(crmpi_coll_sched_recv(s, a->rbuf, theirs, a->rtype, INTER_LEADER));
        TRY(crmpi_coll_sched_round(s));
        crmpi_coll_sched_target(s, local);
    }
    bcast.rbuf = a->rbuf;
    bcast.rcount = theirs;
    bcast.rtype = a->rtype;
    bcast.root = INTER_LEADER;
    return coll_basic_bcast(&bcast, local, s);
}

/* Allgatherv: every process sends its block to every process of the other group, which
 * places it by its rcounts and rdispls. (The leader of a group could not gather its
 * group's blocks first: only the other group knows their sizes.) */
static int inter_allgatherv(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                            crmpi_coll_sched_t *s)
{
    for (int r = 0; r < comm->remote_size; r++) {
        TRY(crmpi_coll_sched_recv(
            s, elem_at(a->rbuf, (size_t)crmpi_count_array_at(a->rdispls, r), a->rtype),
            (size_t)crmpi_count_array_at(a->rcounts, r), a->rtype, r));
        TRY(crmpi_coll_sched_send(s, a->sbuf, a->scount, a->stype, r));
    }
    return crmpi_coll_sched_round(s);
}

/* Alltoall, Alltoallv and Alltoallw: block r of the send buffer goes to remote rank r,
 * whose block comes into block r of the receive buffer. */
static int inter_alltoall(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                          crmpi_coll_sched_t *s)
{
    for (int r = 0; r < comm->remote_size; r++) {
        void *sslot, *rslot;
        size_t scount, rcount;
        MPI_Datatype stype, rtype;

        coll_basic_alltoall_slot(a, r, false, &rslot, &rcount, &rtype);
        coll_basic_alltoall_slot(a, r, true, &sslot, &scount, &stype);
        TRY(crmpi_coll_sched_recv(s, rslot, rcount, rtype, r));
        TRY(crmpi_coll_sched_send(s, sslot, scount, stype, r));
    }
    return crmpi_coll_sched_round(s);
}

/*
 * Reduce_scatter (rcounts: one count per rank of this group) and Reduce_scatter_block
 * (rcount each): each group reduces its vectors at its leader; the leaders swap the
 * reduced vectors (both hold the same number of elements, MPI-3.1 section 5.10); each
 * leader scatters the other group's vector in its group, rcounts[r] elements to rank r.
 */
static int inter_reduce_scatter(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                crmpi_coll_sched_t *s)
{
    crmpi_coll_comm_t *local = comm->local;
    int n = local->size;
    size_t total;
    MPI_Count *counts, *displs;
    void *result, *theirs = NULL;
    crmpi_coll_args_t scatter = {0};

    TRY(coll_basic_reduce_scatter_blocks(a, n, s, &counts, &displs, &total));
    TRY(inter_reduce_local(a, a->sbuf, total, comm, s, &result));
    if (local->rank == INTER_LEADER) {
        theirs = crmpi_coll_sched_tmp(s, total, a->rtype);
        if (!theirs)
            return CRMPI_ERR_OUT_OF_RESOURCE;
        crmpi_coll_sched_target(s, comm);
        TRY(crmpi_coll_sched_send(s, result, total, a->rtype, INTER_LEADER));
        TRY(crmpi_coll_sched_recv(s, theirs, total, a->rtype, INTER_LEADER));
        TRY(crmpi_coll_sched_round(s));
        crmpi_coll_sched_target(s, local);
    }
    scatter.sbuf = theirs;
    scatter.scounts = crmpi_count_array_count(counts);
    scatter.sdispls = crmpi_count_array_count(displs);
    scatter.stype = a->rtype;
    scatter.rbuf = a->rbuf;
    scatter.rcount = (size_t)counts[local->rank];
    scatter.rtype = a->rtype;
    scatter.root = INTER_LEADER;
    return coll_basic_scatter(&scatter, local, s);
}

const crmpi_coll_ops_t crmpi_coll_basic_inter_ops = {
    .component = "basic",
    .build =
        {
            [CRMPI_COLL_BARRIER] = inter_barrier,
            [CRMPI_COLL_BCAST] = inter_bcast,
            [CRMPI_COLL_REDUCE] = inter_reduce,
            [CRMPI_COLL_ALLREDUCE] = inter_allreduce,
            [CRMPI_COLL_GATHER] = inter_gather,
            [CRMPI_COLL_GATHERV] = inter_gather,
            [CRMPI_COLL_SCATTER] = inter_scatter,
            [CRMPI_COLL_SCATTERV] = inter_scatter,
            [CRMPI_COLL_ALLGATHER] = inter_allgather,
            [CRMPI_COLL_ALLGATHERV] = inter_allgatherv,
            [CRMPI_COLL_ALLTOALL] = inter_alltoall,
            [CRMPI_COLL_ALLTOALLV] = inter_alltoall,
            [CRMPI_COLL_ALLTOALLW] = inter_alltoall,
            [CRMPI_COLL_REDUCE_SCATTER] = inter_reduce_scatter,
            [CRMPI_COLL_REDUCE_SCATTER_BLOCK] = inter_reduce_scatter,
            /* Scan and Exscan: not defined on intercommunicators (MPI-3.1 5.11). */
        },
};
