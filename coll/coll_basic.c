/*
 * coll_basic.c: component "basic": simple algorithms that are right for every process
 * count, message size, datatype and operation (the reference the tuned ones are checked
 * against, and their fallback). Linear exchanges with the root or with every peer;
 * reductions combine in rank order, so non-commutative operations are right.
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

/* Element `index` of a buffer of `type` (extent-spaced). */
static inline void *elem_at(const void *buf, size_t index, MPI_Datatype type)
{
    return (char *)buf + (MPI_Aint)index * type->extent;
}

int coll_basic_barrier(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s)
{
    (void)a;
    if (comm->size == 1)
        return CRMPI_OK;
    /* Everyone tells rank 0 it arrived; rank 0 releases everyone once all did. */
    if (comm->rank == 0) {
        for (int r = 1; r < comm->size; r++)
            TRY(crmpi_coll_sched_recv(s, NULL, 0, MPI_BYTE, r));
        TRY(crmpi_coll_sched_round(s));
        for (int r = 1; r < comm->size; r++)
            TRY(crmpi_coll_sched_send(s, NULL, 0, MPI_BYTE, r));
    } else {
        TRY(crmpi_coll_sched_send(s, NULL, 0, MPI_BYTE, 0));
        TRY(crmpi_coll_sched_round(s));
        TRY(crmpi_coll_sched_recv(s, NULL, 0, MPI_BYTE, 0));
    }
    return crmpi_coll_sched_round(s);
}

int coll_basic_bcast(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s)
{
    if (comm->rank == a->root) {
        for (int r = 0; r < comm->size; r++) {
            if (r != a->root)
                TRY(crmpi_coll_sched_send(s, a->rbuf, a->rcount, a->rtype, r));
        }
    } else {
        TRY(crmpi_coll_sched_recv(s, a->rbuf, a->rcount, a->rtype, a->root));
    }
    return crmpi_coll_sched_round(s);
}

/*
 * Reduce: the root receives every contribution, then folds them from the highest rank
 * down, acc = s_r op acc, so the result is s_0 op s_1 op ... op s_{n-1} whatever the root
 * (MPI-3.1 section 5.9.1: the order of a non-commutative operation is rank order).
 */
int coll_basic_reduce(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s)
{
    int n = comm->size, me = comm->rank;
    size_t count = a->rcount;
    MPI_Datatype type = a->rtype;
    const void *mine = a->in_place ? a->rbuf : a->sbuf;
    const void **from;

    if (me != a->root) {
        TRY(crmpi_coll_sched_send(s, mine, count, type, a->root));
        return crmpi_coll_sched_round(s);
    }
    from = crmpi_coll_sched_tmp(s, (size_t)n, MPI_AINT);
    if (!from)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    for (int r = 0; r < n; r++) {
        void *tmp;

        if (r == me && !a->in_place) {
            from[r] = mine;
            continue;
        }
        tmp = crmpi_coll_sched_tmp(s, count, type);
        if (!tmp)
            return CRMPI_ERR_OUT_OF_RESOURCE;
        if (r == me) /* in place: keep our data before rbuf becomes the accumulator */
            TRY(crmpi_coll_sched_copy(s, a->rbuf, count, type, tmp, count, type));
        else
            TRY(crmpi_coll_sched_recv(s, tmp, count, type, r));
        from[r] = tmp;
    }
    TRY(crmpi_coll_sched_round(s));
    TRY(crmpi_coll_sched_copy(s, from[n - 1], count, type, a->rbuf, count, type));
    for (int r = n - 2; r >= 0; r--)
        TRY(crmpi_coll_sched_reduce(s, from[r], a->rbuf, count, type, a->op));
    return crmpi_coll_sched_round(s);
}

int coll_basic_allreduce(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s)
{
    crmpi_coll_args_t reduce = *a;

    reduce.root = 0;
    if (a->in_place && comm->rank != 0) {
        /* Only the root may reduce in place: elsewhere our data is simply sent from rbuf. */
        reduce.in_place = false;
        reduce.sbuf = a->rbuf;
    }
    TRY(coll_basic_reduce(&reduce, comm, s));
    reduce.root = 0;
    return coll_basic_bcast(&reduce, comm, s);
}

/* Gather and Gatherv (rcounts/rdispls set): the root receives each rank's block. */
int coll_basic_gather(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s)
{
    int me = comm->rank;

    if (me != a->root) {
        TRY(crmpi_coll_sched_send(s, a->sbuf, a->scount, a->stype, a->root));
        return crmpi_coll_sched_round(s);
    }
    for (int r = 0; r < comm->size; r++) {
        size_t count = (size_t)crmpi_count_array_or(a->rcounts, r, (MPI_Count)a->rcount);
        MPI_Aint displ =
            (MPI_Aint)crmpi_count_array_or(a->rdispls, r, (MPI_Count)r * (MPI_Count)a->rcount);
        void *slot = (char *)a->rbuf + displ * a->rtype->extent;

        if (r == me) {
            if (!a->in_place)
                TRY(crmpi_coll_sched_copy(s, a->sbuf, a->scount, a->stype, slot, count, a->rtype));
        } else {
            TRY(crmpi_coll_sched_recv(s, slot, count, a->rtype, r));
        }
    }
    return crmpi_coll_sched_round(s);
}

/* Scatter and Scatterv (scounts/sdispls set): the root sends each rank its block. */
int coll_basic_scatter(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s)
{
    int me = comm->rank;

    if (me != a->root) {
        TRY(crmpi_coll_sched_recv(s, a->rbuf, a->rcount, a->rtype, a->root));
        return crmpi_coll_sched_round(s);
    }
    for (int r = 0; r < comm->size; r++) {
        size_t count = (size_t)crmpi_count_array_or(a->scounts, r, (MPI_Count)a->scount);
        MPI_Aint displ =
            (MPI_Aint)crmpi_count_array_or(a->sdispls, r, (MPI_Count)r * (MPI_Count)a->scount);
        const void *slot = (const char *)a->sbuf + displ * a->stype->extent;

        if (r == me) {
            if (!a->in_place)
                TRY(crmpi_coll_sched_copy(s, slot, count, a->stype, a->rbuf, a->rcount, a->rtype));
        } else {
            TRY(crmpi_coll_sched_send(s, slot, count, a->stype, r));
        }
    }
    return crmpi_coll_sched_round(s);
}

void *coll_basic_allgather_slot(const crmpi_coll_args_t *a, int r, size_t *count_out)
{
    MPI_Aint displ =
        (MPI_Aint)crmpi_count_array_or(a->rdispls, r, (MPI_Count)r * (MPI_Count)a->rcount);

    *count_out = (size_t)crmpi_count_array_or(a->rcounts, r, (MPI_Count)a->rcount);
    return (char *)a->rbuf + displ * a->rtype->extent;
}

/* Allgather and Allgatherv: every rank sends its block to every other one. */
int coll_basic_allgatherv(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                          crmpi_coll_sched_t *s)
{
    int me = comm->rank;
    size_t my_count;
    void *my_slot = coll_basic_allgather_slot(a, me, &my_count);
    const void *mine = a->in_place ? my_slot : a->sbuf;
    size_t mine_count = a->in_place ? my_count : a->scount;
    MPI_Datatype mine_type = a->in_place ? a->rtype : a->stype;

    if (!a->in_place)
        TRY(crmpi_coll_sched_copy(s, a->sbuf, a->scount, a->stype, my_slot, my_count, a->rtype));
    for (int k = 1; k < comm->size; k++) {
        int to = (me + k) % comm->size;
        int from = (me - k + comm->size) % comm->size;
        size_t count;
        void *slot = coll_basic_allgather_slot(a, from, &count);

        TRY(crmpi_coll_sched_recv(s, slot, count, a->rtype, from));
        TRY(crmpi_coll_sched_send(s, mine, mine_count, mine_type, to));
    }
    return crmpi_coll_sched_round(s);
}

int coll_basic_allgather(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s)
{
    return coll_basic_allgatherv(a, comm, s);
}

void coll_basic_alltoall_slot(const crmpi_coll_args_t *a, int r, bool is_send, void **buf_out,
                              size_t *count_out, MPI_Datatype *type_out)
{
    const void *buf = is_send ? a->sbuf : a->rbuf;
    crmpi_count_array_t counts = is_send ? a->scounts : a->rcounts;
    crmpi_count_array_t displs = is_send ? a->sdispls : a->rdispls;
    const MPI_Datatype *types = is_send ? a->stypes : a->rtypes;
    MPI_Datatype type = is_send ? a->stype : a->rtype;
    size_t count = is_send ? a->scount : a->rcount;

    if (types) { /* alltoallw: byte displacements, a type per peer */
        *type_out = types[r];
        *count_out = (size_t)crmpi_count_array_at(counts, r);
        *buf_out = (char *)buf + crmpi_count_array_at(displs, r);
    } else if (counts.base) {
        *type_out = type;
        *count_out = (size_t)crmpi_count_array_at(counts, r);
        *buf_out = (char *)buf + (MPI_Aint)crmpi_count_array_at(displs, r) * type->extent;
    } else {
        *type_out = type;
        *count_out = count;
        *buf_out = (char *)buf + (MPI_Aint)r * (MPI_Aint)count * type->extent;
    }
}

/*
 * Alltoall, Alltoallv and Alltoallw: every receive and send posted at once. In place
 * (MPI-3.1 section 5.8: the data to send are in rbuf and are replaced), each outgoing
 * block is first copied aside.
 */
int coll_basic_alltoall(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s)
{
    int n = comm->size, me = comm->rank;
    void **out = NULL;

    if (a->in_place) {
        out = crmpi_coll_sched_tmp(s, (size_t)n, MPI_AINT);
        if (!out)
            return CRMPI_ERR_OUT_OF_RESOURCE;
        for (int r = 0; r < n; r++) {
            void *slot;
            size_t count;
            MPI_Datatype type;

            if (r == me)
                continue;
            coll_basic_alltoall_slot(a, r, false, &slot, &count, &type);
            out[r] = crmpi_coll_sched_tmp(s, count, type);
            if (!out[r])
                return CRMPI_ERR_OUT_OF_RESOURCE;
            TRY(crmpi_coll_sched_copy(s, slot, count, type, out[r], count, type));
        }
    }
    for (int k = 0; k < n; k++) {
        int to = (me + k) % n, from = (me - k + n) % n;
        void *sslot, *rslot;
        size_t scount, rcount;
        MPI_Datatype stype, rtype;

        coll_basic_alltoall_slot(a, from, false, &rslot, &rcount, &rtype);
        if (k == 0) {
            if (!a->in_place) {
                coll_basic_alltoall_slot(a, me, true, &sslot, &scount, &stype);
                TRY(crmpi_coll_sched_copy(s, sslot, scount, stype, rslot, rcount, rtype));
            }
            continue;
        }
        if (a->in_place) {
            coll_basic_alltoall_slot(a, to, false, &sslot, &scount, &stype);
            sslot = out[to];
        } else {
            coll_basic_alltoall_slot(a, to, true, &sslot, &scount, &stype);
        }
        TRY(crmpi_coll_sched_recv(s, rslot, rcount, rtype, from));
        TRY(crmpi_coll_sched_send(s, sslot, scount, stype, to));
    }
    return crmpi_coll_sched_round(s);
}

int coll_basic_reduce_scatter_blocks(const crmpi_coll_args_t *a, int n, crmpi_coll_sched_t *s,
                                     MPI_Count **counts_out, MPI_Count **displs_out,
                                     size_t *total_out)
{
    MPI_Count *counts = crmpi_coll_sched_tmp(s, (size_t)n, MPI_COUNT);
    MPI_Count *displs = crmpi_coll_sched_tmp(s, (size_t)n, MPI_COUNT);
    MPI_Count total = 0;

    if (!counts || !displs)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    for (int r = 0; r < n; r++) {
        /* Reduce_scatter_block: the same count everywhere. */
        counts[r] = crmpi_count_array_or(a->rcounts, r, (MPI_Count)a->rcount);
        displs[r] = total;
        total += counts[r];
    }
    *counts_out = counts;
    *displs_out = displs;
    *total_out = (size_t)total;
    return CRMPI_OK;
}

/*
 * Reduce_scatter (rcounts: every rank's count) and Reduce_scatter_block (rcounts NULL,
 * rcount the count of every rank): the whole
 * vector is reduced at rank 0, which scatters the blocks.
 */
int coll_basic_reduce_scatter(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                              crmpi_coll_sched_t *s)
{
    size_t total;
    MPI_Count *displs, *counts;
    void *result = NULL;
    crmpi_coll_args_t reduce = {0}, scatter = {0};

    TRY(coll_basic_reduce_scatter_blocks(a, comm->size, s, &counts, &displs, &total));
    if (comm->rank == 0) {
        result = crmpi_coll_sched_tmp(s, total, a->rtype);
        if (!result)
            return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    reduce.sbuf = a->in_place ? a->rbuf : a->sbuf;
    reduce.rbuf = result;
    reduce.rcount = total;
    reduce.rtype = a->rtype;
    reduce.op = a->op;
    reduce.root = 0;
    TRY(coll_basic_reduce(&reduce, comm, s));
    scatter.sbuf = result;
    scatter.scounts = crmpi_count_array_count(counts);
    scatter.sdispls = crmpi_count_array_count(displs);
    scatter.stype = a->rtype;
    scatter.rbuf = a->rbuf;
    scatter.rcount = (size_t)counts[comm->rank];
    scatter.rtype = a->rtype;
    scatter.root = 0;
    return coll_basic_scatter(&scatter, comm, s);
}

/*
 * Scan (Exscan when `exclusive`): a chain. Rank r receives the prefix of ranks 0..r-1,
 * combines its own data on the right, and passes the new prefix to r + 1.
 */
static int basic_scan_chain(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                            crmpi_coll_sched_t *s, bool exclusive)
{
    int n = comm->size, me = comm->rank;
    size_t count = a->rcount;
    MPI_Datatype type = a->rtype;
    const void *mine = a->sbuf;

    if (a->in_place) {
        void *copy = crmpi_coll_sched_tmp(s, count, type);

        if (!copy)
            return CRMPI_ERR_OUT_OF_RESOURCE;
        TRY(crmpi_coll_sched_copy(s, a->rbuf, count, type, copy, count, type));
        TRY(crmpi_coll_sched_round(s));
        mine = copy;
    }
    if (me == 0) {
        if (!exclusive)
            TRY(crmpi_coll_sched_copy(s, mine, count, type, a->rbuf, count, type));
        if (n > 1)
            TRY(crmpi_coll_sched_send(s, mine, count, type, 1));
        return crmpi_coll_sched_round(s);
    }
    /* The prefix of the lower ranks. */
    void *prefix = exclusive ? a->rbuf : crmpi_coll_sched_tmp(s, count, type);
    if (!prefix)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    TRY(crmpi_coll_sched_recv(s, prefix, count, type, me - 1));
    TRY(crmpi_coll_sched_round(s));
    if (exclusive) {
        if (me < n - 1) {
            void *next = crmpi_coll_sched_tmp(s, count, type);

            if (!next)
                return CRMPI_ERR_OUT_OF_RESOURCE;
            TRY(crmpi_coll_sched_copy(s, mine, count, type, next, count, type));
            TRY(crmpi_coll_sched_reduce(s, prefix, next, count, type, a->op));
            TRY(crmpi_coll_sched_send(s, next, count, type, me + 1));
        }
    } else {
        TRY(crmpi_coll_sched_copy(s, mine, count, type, a->rbuf, count, type));
        TRY(crmpi_coll_sched_reduce(s, prefix, a->rbuf, count, type, a->op));
        if (me < n - 1)
            TRY(crmpi_coll_sched_send(s, a->rbuf, count, type, me + 1));
    }
    return crmpi_coll_sched_round(s);
}

int coll_basic_scan(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s)
{
    return basic_scan_chain(a, comm, s, false);
}

static int coll_basic_exscan(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                             crmpi_coll_sched_t *s)
{
    return basic_scan_chain(a, comm, s, true);
}

const crmpi_coll_ops_t crmpi_coll_basic_ops = {
    .component = "basic",
    .build =
        {
            [CRMPI_COLL_BARRIER] = coll_basic_barrier,
            [CRMPI_COLL_BCAST] = coll_basic_bcast,
            [CRMPI_COLL_REDUCE] = coll_basic_reduce,
            [CRMPI_COLL_ALLREDUCE] = coll_basic_allreduce,
            [CRMPI_COLL_GATHER] = coll_basic_gather,
            [CRMPI_COLL_GATHERV] = coll_basic_gather,
            [CRMPI_COLL_SCATTER] = coll_basic_scatter,
            [CRMPI_COLL_SCATTERV] = coll_basic_scatter,
            [CRMPI_COLL_ALLGATHER] = coll_basic_allgather,
            [CRMPI_COLL_ALLGATHERV] = coll_basic_allgatherv,
            [CRMPI_COLL_ALLTOALL] = coll_basic_alltoall,
            [CRMPI_COLL_ALLTOALLV] = coll_basic_alltoall,
            [CRMPI_COLL_ALLTOALLW] = coll_basic_alltoall,
            [CRMPI_COLL_REDUCE_SCATTER] = coll_basic_reduce_scatter,
            [CRMPI_COLL_REDUCE_SCATTER_BLOCK] = coll_basic_reduce_scatter,
            [CRMPI_COLL_SCAN] = coll_basic_scan,
            [CRMPI_COLL_EXSCAN] = coll_basic_exscan,
            [CRMPI_COLL_NEIGHBOR_ALLGATHER] = coll_neighbor_allgather,
            [CRMPI_COLL_NEIGHBOR_ALLGATHERV] = coll_neighbor_allgatherv,
            [CRMPI_COLL_NEIGHBOR_ALLTOALL] = coll_neighbor_alltoall,
            [CRMPI_COLL_NEIGHBOR_ALLTOALLV] = coll_neighbor_alltoallv,
            [CRMPI_COLL_NEIGHBOR_ALLTOALLW] = coll_neighbor_alltoallw,
        },
};
