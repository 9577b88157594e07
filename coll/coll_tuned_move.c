/*
 * coll_tuned_move.c: the tuned component's data-movement algorithms (coll_tuned.c says
 * when each is used): dissemination barrier, binomial and scatter+allgather bcast, ring and
 * recursive-doubling allgather, pairwise and Bruck alltoall.
 */
#include "config.h"

#include <string.h>

#include "coll_tuned.h"

/*
 * Barrier: dissemination. In round k every rank signals rank + 2^k and waits for rank - 2^k;
 * after ceil(log2 n) rounds each has heard, indirectly, from all.
 */
int coll_tuned_barrier_dissemination(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                     crmpi_coll_sched_t *s)
{
    int n = comm->size, me = comm->rank;

    (void)a;
    for (int dist = 1; dist < n; dist *= 2) {
        COLL_TUNED_TRY(crmpi_coll_sched_recv(s, NULL, 0, MPI_BYTE, (me - dist + n) % n));
        COLL_TUNED_TRY(crmpi_coll_sched_send(s, NULL, 0, MPI_BYTE, (me + dist) % n));
        COLL_TUNED_TRY(crmpi_coll_sched_round(s));
    }
    return CRMPI_OK;
}

/* Bcast: binomial tree over ranks relative to the root. */
int coll_tuned_bcast_binomial(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                              crmpi_coll_sched_t *s)
{
    int n = comm->size;
    int vrank = (comm->rank - a->root + n) % n;
    int mask = 1;

    while (mask < n) {
        if (vrank & mask) {
            COLL_TUNED_TRY(crmpi_coll_sched_recv(s, a->rbuf, a->rcount, a->rtype,
                                                 (vrank - mask + a->root) % n));
            COLL_TUNED_TRY(crmpi_coll_sched_round(s));
            break;
        }
        mask *= 2;
    }
    for (mask /= 2; mask > 0; mask /= 2) {
        if (vrank + mask < n)
            COLL_TUNED_TRY(crmpi_coll_sched_send(s, a->rbuf, a->rcount, a->rtype,
                                                 (vrank + mask + a->root) % n));
    }
    return crmpi_coll_sched_round(s);
}

/*
 * Bcast of a large message: scatter + ring allgather (van de Geijn). The root sends each
 * rank its segment, then the segments circulate; the root sends about 2m instead of the
 * binomial tree's m log2 n.
 */
int coll_tuned_bcast_scatter_allgather(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                       crmpi_coll_sched_t *s)
{
    int n = comm->size;
    int vrank = (comm->rank - a->root + n) % n;
    MPI_Datatype type = a->rtype;
    size_t lo, len;

    if (a->rcount < (size_t)n)
        return coll_tuned_bcast_binomial(a, comm, s);
    if (vrank == 0) {
        for (int v = 1; v < n; v++) {
            coll_tuned_segment(a->rcount, n, v, &lo, &len);
            COLL_TUNED_TRY(crmpi_coll_sched_send(s, coll_tuned_elem_at(a->rbuf, (MPI_Aint)lo, type),
                                                 len, type, (v + a->root) % n));
        }
    } else {
        coll_tuned_segment(a->rcount, n, vrank, &lo, &len);
        COLL_TUNED_TRY(crmpi_coll_sched_recv(s, coll_tuned_elem_at(a->rbuf, (MPI_Aint)lo, type),
                                             len, type, a->root));
    }
    COLL_TUNED_TRY(crmpi_coll_sched_round(s));
    for (int k = 0; k < n - 1; k++) {
        int send_seg = (vrank - k + n) % n, recv_seg = (vrank - k - 1 + n) % n;

        coll_tuned_segment(a->rcount, n, recv_seg, &lo, &len);
        /* The root has every segment already: it only forwards. */
        if (vrank != 0)
            COLL_TUNED_TRY(crmpi_coll_sched_recv(s, coll_tuned_elem_at(a->rbuf, (MPI_Aint)lo, type),
                                                 len, type, (comm->rank - 1 + n) % n));
        coll_tuned_segment(a->rcount, n, send_seg, &lo, &len);
        /* Nobody needs to send the root anything. */
        if ((vrank + 1) % n != 0)
            COLL_TUNED_TRY(crmpi_coll_sched_send(s, coll_tuned_elem_at(a->rbuf, (MPI_Aint)lo, type),
                                                 len, type, (comm->rank + 1) % n));
        COLL_TUNED_TRY(crmpi_coll_sched_round(s));
    }
    return CRMPI_OK;
}

/* Allgather(v): ring; in step k each rank forwards the block it received in step k - 1. */
int coll_tuned_allgather_ring(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                              crmpi_coll_sched_t *s)
{
    int n = comm->size, me = comm->rank;
    size_t count;
    void *slot = coll_basic_allgather_slot(a, me, &count);

    if (!a->in_place)
        COLL_TUNED_TRY(
            crmpi_coll_sched_copy(s, a->sbuf, a->scount, a->stype, slot, count, a->rtype));
    COLL_TUNED_TRY(crmpi_coll_sched_round(s));
    for (int k = 0; k < n - 1; k++) {
        int send_block = (me - k + n) % n, recv_block = (me - k - 1 + n) % n;

        slot = coll_basic_allgather_slot(a, recv_block, &count);
        COLL_TUNED_TRY(crmpi_coll_sched_recv(s, slot, count, a->rtype, (me - 1 + n) % n));
        slot = coll_basic_allgather_slot(a, send_block, &count);
        COLL_TUNED_TRY(crmpi_coll_sched_send(s, slot, count, a->rtype, (me + 1) % n));
        COLL_TUNED_TRY(crmpi_coll_sched_round(s));
    }
    return CRMPI_OK;
}

/* Allgather: recursive doubling (power-of-two sizes): blocks of 2^k ranks are swapped. */
int coll_tuned_allgather_recdbl(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                crmpi_coll_sched_t *s)
{
    int n = comm->size, me = comm->rank;
    size_t count;
    void *slot = coll_basic_allgather_slot(a, me, &count);

    if (!coll_tuned_is_pow2(n))
        return coll_tuned_allgather_ring(a, comm, s);
    if (!a->in_place)
        COLL_TUNED_TRY(
            crmpi_coll_sched_copy(s, a->sbuf, a->scount, a->stype, slot, count, a->rtype));
    COLL_TUNED_TRY(crmpi_coll_sched_round(s));
    for (int mask = 1; mask < n; mask *= 2) {
        int peer = me ^ mask;
        int my_first = me & ~(mask - 1), peer_first = peer & ~(mask - 1);

        COLL_TUNED_TRY(crmpi_coll_sched_recv(s, coll_basic_allgather_slot(a, peer_first, &count),
                                             (size_t)mask * a->rcount, a->rtype, peer));
        COLL_TUNED_TRY(crmpi_coll_sched_send(s, coll_basic_allgather_slot(a, my_first, &count),
                                             (size_t)mask * a->rcount, a->rtype, peer));
        COLL_TUNED_TRY(crmpi_coll_sched_round(s));
    }
    return CRMPI_OK;
}

/* Alltoall(v): pairwise exchange, one peer per round (bounded memory and contention). */
int coll_tuned_alltoall_pairwise(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                 crmpi_coll_sched_t *s)
{
    int n = comm->size, me = comm->rank;

    /* In place, the basic algorithm copies each block aside first. */
    if (a->in_place)
        return coll_basic_alltoall(a, comm, s);
    for (int k = 0; k < n; k++) {
        int to = (me + k) % n, from = (me - k + n) % n;
        void *sslot, *rslot;
        size_t scount, rcount;
        MPI_Datatype stype, rtype;

        coll_basic_alltoall_slot(a, to, true, &sslot, &scount, &stype);
        coll_basic_alltoall_slot(a, from, false, &rslot, &rcount, &rtype);
        if (k == 0) {
            COLL_TUNED_TRY(crmpi_coll_sched_copy(s, sslot, scount, stype, rslot, rcount, rtype));
            continue;
        }
        COLL_TUNED_TRY(crmpi_coll_sched_recv(s, rslot, rcount, rtype, from));
        COLL_TUNED_TRY(crmpi_coll_sched_send(s, sslot, scount, stype, to));
        COLL_TUNED_TRY(crmpi_coll_sched_round(s));
    }
    return crmpi_coll_sched_round(s);
}

/*
 * Alltoall: Bruck's algorithm, ceil(log2 n) rounds for small blocks. The blocks, packed as
 * bytes, are first rotated so that block i is the one for rank me + i; in round k every
 * block whose index has bit k goes to rank me + k (packed together); at the end block i
 * holds the data of rank me - i.
 */
int coll_tuned_alltoall_bruck(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                              crmpi_coll_sched_t *s)
{
    int n = comm->size, me = comm->rank;
    size_t block = a->rcount * a->rtype->size; /* bytes of one block (type signatures match) */
    char *blocks, *out, *in;
    int num;

    if (a->in_place || n == 1)
        return coll_basic_alltoall(a, comm, s);
    blocks = crmpi_coll_sched_tmp(s, (size_t)n * block, MPI_BYTE);
    out = crmpi_coll_sched_tmp(s, (size_t)n * block, MPI_BYTE);
    in = crmpi_coll_sched_tmp(s, (size_t)n * block, MPI_BYTE);
    if (!blocks || !out || !in)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    for (int i = 0; i < n; i++)
        COLL_TUNED_TRY(crmpi_coll_sched_copy(
            s,
            coll_tuned_elem_at(a->sbuf, (MPI_Aint)((me + i) % n) * (MPI_Aint)a->scount, a->stype),
            a->scount, a->stype, blocks + (size_t)i * block, block, MPI_BYTE));
    for (int k = 1; k < n; k *= 2) {
        num = 0;
        for (int i = 0; i < n; i++) {
            if (i & k)
                COLL_TUNED_TRY(crmpi_coll_sched_copy(s, blocks + (size_t)i * block, block, MPI_BYTE,
                                                     out + (size_t)num++ * block, block, MPI_BYTE));
        }
        COLL_TUNED_TRY(
            crmpi_coll_sched_recv(s, in, (size_t)num * block, MPI_BYTE, (me - k + n) % n));
        COLL_TUNED_TRY(crmpi_coll_sched_send(s, out, (size_t)num * block, MPI_BYTE, (me + k) % n));
        COLL_TUNED_TRY(crmpi_coll_sched_round(s));
        num = 0;
        for (int i = 0; i < n; i++) {
            if (i & k)
                COLL_TUNED_TRY(crmpi_coll_sched_copy(s, in + (size_t)num++ * block, block, MPI_BYTE,
                                                     blocks + (size_t)i * block, block, MPI_BYTE));
        }
    }
    for (int i = 0; i < n; i++)
        COLL_TUNED_TRY(crmpi_coll_sched_copy(
            s, blocks + (size_t)i * block, block, MPI_BYTE,
            coll_tuned_elem_at(a->rbuf, (MPI_Aint)((me - i + n) % n) * (MPI_Aint)a->rcount,
                               a->rtype),
            a->rcount, a->rtype));
    return crmpi_coll_sched_round(s);
}
