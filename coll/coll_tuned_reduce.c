/*
 * coll_tuned_reduce.c: the tuned component's reduction algorithms (coll_tuned.c says when
 * each is used): binomial reduce, recursive-doubling, ring and Rabenseifner allreduce, ring
 * reduce_scatter, recursive-doubling scan and exscan.
 */
#include "config.h"

#include <string.h>

#include "coll_tuned.h"

/*
 * Reduce: binomial tree. The subtree of vrank v at level `mask` is ranks [v, v + mask), so
 * acc = acc op child keeps rank order when vrank is rank (tree rooted at 0); a commutative
 * op may root the tree at the root itself. The accumulator moves to the received buffer
 * (reduce writes into its right operand), so the send buffer is never written.
 */
int coll_tuned_reduce_binomial(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                               crmpi_coll_sched_t *s)
{
    int n = comm->size, me = comm->rank;
    int tree_root = a->op->commutative ? a->root : 0;
    int vrank = (me - tree_root + n) % n;
    size_t count = a->rcount;
    MPI_Datatype type = a->rtype;
    const void *acc = a->in_place ? a->rbuf : a->sbuf;

    if (a->in_place && n > 1) {
        /* rbuf is written at the end; the data it holds is copied out first. */
        void *copy = crmpi_coll_sched_tmp(s, count, type);
        if (!copy)
            return CRMPI_ERR_OUT_OF_RESOURCE;
        COLL_TUNED_TRY(crmpi_coll_sched_copy(s, a->rbuf, count, type, copy, count, type));
        acc = copy;
    }
    for (int mask = 1; mask < n; mask *= 2) {
        if (vrank & mask) {
            COLL_TUNED_TRY(
                crmpi_coll_sched_send(s, acc, count, type, (vrank - mask + tree_root) % n));
            COLL_TUNED_TRY(crmpi_coll_sched_round(s));
            break;
        }
        if (vrank + mask < n) {
            void *child = crmpi_coll_sched_tmp(s, count, type);

            if (!child)
                return CRMPI_ERR_OUT_OF_RESOURCE;
            COLL_TUNED_TRY(
                crmpi_coll_sched_recv(s, child, count, type, (vrank + mask + tree_root) % n));
            COLL_TUNED_TRY(crmpi_coll_sched_round(s));
            COLL_TUNED_TRY(crmpi_coll_sched_reduce(s, acc, child, count, type, a->op));
            acc = child;
        }
    }
    if (me == tree_root && tree_root != a->root) {
        COLL_TUNED_TRY(crmpi_coll_sched_send(s, acc, count, type, a->root));
    } else if (me == a->root && tree_root != a->root) {
        COLL_TUNED_TRY(crmpi_coll_sched_recv(s, a->rbuf, count, type, tree_root));
    } else if (me == a->root) {
        COLL_TUNED_TRY(crmpi_coll_sched_copy(s, acc, count, type, a->rbuf, count, type));
    }
    return crmpi_coll_sched_round(s);
}

/* Put our data into rbuf (the accumulator of the allreduce algorithms). */
static int allreduce_init_acc(const crmpi_coll_args_t *a, crmpi_coll_sched_t *s)
{
    if (!a->in_place)
        COLL_TUNED_TRY(
            crmpi_coll_sched_copy(s, a->sbuf, a->rcount, a->rtype, a->rbuf, a->rcount, a->rtype));
    return crmpi_coll_sched_round(s);
}

/*
 * The non-power-of-two fold shared by recursive doubling and Rabenseifner: of the first
 * 2*rem ranks, each even one sends its vector to the odd one above and sits out. Returns
 * our virtual rank among the p2 remaining, or -1 when we sit out.
 */
static int fold_in(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s,
                   int p2)
{
    int me = comm->rank, rem = comm->size - p2;

    if (me >= 2 * rem)
        return me - rem;
    if (me % 2 == 0) {
        COLL_TUNED_TRY(crmpi_coll_sched_send(s, a->rbuf, a->rcount, a->rtype, me + 1));
        COLL_TUNED_TRY(crmpi_coll_sched_round(s));
        return -1;
    }
    void *tmp = crmpi_coll_sched_tmp(s, a->rcount, a->rtype);
    if (!tmp)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    COLL_TUNED_TRY(crmpi_coll_sched_recv(s, tmp, a->rcount, a->rtype, me - 1));
    COLL_TUNED_TRY(crmpi_coll_sched_round(s));
    /* The even rank is the lower one: its data on the left. */
    COLL_TUNED_TRY(crmpi_coll_sched_reduce(s, tmp, a->rbuf, a->rcount, a->rtype, a->op));
    return me / 2;
}

static inline int fold_real_rank(int vrank, int rem)
{
    return vrank < rem ? 2 * vrank + 1 : vrank + rem;
}

/* Give the result to the ranks that sat out. */
static int fold_out(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s,
                    int p2)
{
    int me = comm->rank, rem = comm->size - p2;

    if (me < 2 * rem) {
        if (me % 2 == 0)
            COLL_TUNED_TRY(crmpi_coll_sched_recv(s, a->rbuf, a->rcount, a->rtype, me + 1));
        else
            COLL_TUNED_TRY(crmpi_coll_sched_send(s, a->rbuf, a->rcount, a->rtype, me - 1));
    }
    return crmpi_coll_sched_round(s);
}

/*
 * Allreduce: recursive doubling. Partners exchange whole vectors; the lower one's data goes
 * on the left, so the order of any op is rank order (the blocks are contiguous ranges).
 */
int coll_tuned_allreduce_recdbl(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                crmpi_coll_sched_t *s)
{
    int p2 = coll_tuned_pow2_floor(comm->size), rem = comm->size - p2;
    size_t count = a->rcount;
    MPI_Datatype type = a->rtype;
    int vrank;

    COLL_TUNED_TRY(allreduce_init_acc(a, s));
    vrank = fold_in(a, comm, s, p2);
    if (vrank < -1)
        return vrank;
    if (vrank >= 0) {
        for (int mask = 1; mask < p2; mask *= 2) {
            int vpeer = vrank ^ mask, peer = fold_real_rank(vpeer, rem);
            void *tmp = crmpi_coll_sched_tmp(s, count, type);

            if (!tmp)
                return CRMPI_ERR_OUT_OF_RESOURCE;
            COLL_TUNED_TRY(crmpi_coll_sched_recv(s, tmp, count, type, peer));
            COLL_TUNED_TRY(crmpi_coll_sched_send(s, a->rbuf, count, type, peer));
            COLL_TUNED_TRY(crmpi_coll_sched_round(s));
            if (vpeer < vrank) {
                COLL_TUNED_TRY(crmpi_coll_sched_reduce(s, tmp, a->rbuf, count, type, a->op));
            } else {
                COLL_TUNED_TRY(crmpi_coll_sched_reduce(s, a->rbuf, tmp, count, type, a->op));
                COLL_TUNED_TRY(crmpi_coll_sched_copy(s, tmp, count, type, a->rbuf, count, type));
            }
        }
    }
    return fold_out(a, comm, s, p2);
}

/*
 * Allreduce: ring. n - 1 steps of reduce-scatter (segment s finishes at rank s - 1) and
 * n - 1 steps of allgather; each rank sends 2 (n - 1) / n of the vector. Commutative ops.
 */
int coll_tuned_allreduce_ring(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                              crmpi_coll_sched_t *s)
{
    int n = comm->size, me = comm->rank;
    int right = (me + 1) % n, left = (me - 1 + n) % n;
    MPI_Datatype type = a->rtype;
    size_t lo, len, max_len;
    void *tmp;

    COLL_TUNED_TRY(allreduce_init_acc(a, s));
    coll_tuned_segment(a->rcount, n, 0, &lo, &max_len);
    tmp = crmpi_coll_sched_tmp(s, max_len, type);
    if (!tmp)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    for (int k = 0; k < n - 1; k++) {
        int send_seg = (me - k + n) % n, recv_seg = (me - k - 1 + n) % n;

        coll_tuned_segment(a->rcount, n, recv_seg, &lo, &len);
        COLL_TUNED_TRY(crmpi_coll_sched_recv(s, tmp, len, type, left));
        coll_tuned_segment(a->rcount, n, send_seg, &lo, &len);
        COLL_TUNED_TRY(crmpi_coll_sched_send(s, coll_tuned_elem_at(a->rbuf, (MPI_Aint)lo, type),
                                             len, type, right));
        COLL_TUNED_TRY(crmpi_coll_sched_round(s));
        coll_tuned_segment(a->rcount, n, recv_seg, &lo, &len);
        COLL_TUNED_TRY(crmpi_coll_sched_reduce(
            s, tmp, coll_tuned_elem_at(a->rbuf, (MPI_Aint)lo, type), len, type, a->op));
    }
    for (int k = 0; k < n - 1; k++) {
        int send_seg = (me + 1 - k + n) % n, recv_seg = (me - k + n) % n;

        coll_tuned_segment(a->rcount, n, recv_seg, &lo, &len);
        COLL_TUNED_TRY(crmpi_coll_sched_recv(s, coll_tuned_elem_at(a->rbuf, (MPI_Aint)lo, type),
                                             len, type, left));
        coll_tuned_segment(a->rcount, n, send_seg, &lo, &len);
        COLL_TUNED_TRY(crmpi_coll_sched_send(s, coll_tuned_elem_at(a->rbuf, (MPI_Aint)lo, type),
                                             len, type, right));
        COLL_TUNED_TRY(crmpi_coll_sched_round(s));
    }
    return CRMPI_OK;
}

/*
 * Allreduce: Rabenseifner. Recursive halving leaves each of the p2 ranks with its share
 * of the reduced vector, recursive doubling gathers the shares. Commutative ops.
 */
int coll_tuned_allreduce_rabenseifner(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                      crmpi_coll_sched_t *s)
{
    int p2 = coll_tuned_pow2_floor(comm->size), rem = comm->size - p2;
    MPI_Datatype type = a->rtype;
    size_t keep_lo[32], keep_hi[32], give_lo[32], give_hi[32];
    size_t lo = 0, hi = a->rcount;
    int steps = 0, vrank;
    void *tmp;

    COLL_TUNED_TRY(allreduce_init_acc(a, s));
    vrank = fold_in(a, comm, s, p2);
    if (vrank < -1)
        return vrank;
    if (vrank >= 0) {
        tmp = crmpi_coll_sched_tmp(s, (a->rcount + 1) / 2, type);
        if (!tmp)
            return CRMPI_ERR_OUT_OF_RESOURCE;
        for (int mask = p2 / 2; mask > 0; mask /= 2, steps++) {
            int vpeer = vrank ^ mask, peer = fold_real_rank(vpeer, rem);
            size_t mid = lo + (hi - lo) / 2;

            if (vrank < vpeer) {
                keep_lo[steps] = lo, keep_hi[steps] = mid, give_lo[steps] = mid,
                give_hi[steps] = hi;
            } else {
                keep_lo[steps] = mid, keep_hi[steps] = hi, give_lo[steps] = lo,
                give_hi[steps] = mid;
            }
            COLL_TUNED_TRY(
                crmpi_coll_sched_recv(s, tmp, keep_hi[steps] - keep_lo[steps], type, peer));
            COLL_TUNED_TRY(crmpi_coll_sched_send(
                s, coll_tuned_elem_at(a->rbuf, (MPI_Aint)give_lo[steps], type),
                give_hi[steps] - give_lo[steps], type, peer));
            COLL_TUNED_TRY(crmpi_coll_sched_round(s));
            COLL_TUNED_TRY(crmpi_coll_sched_reduce(
                s, tmp, coll_tuned_elem_at(a->rbuf, (MPI_Aint)keep_lo[steps], type),
                keep_hi[steps] - keep_lo[steps], type, a->op));
            lo = keep_lo[steps];
            hi = keep_hi[steps];
        }
        for (int step = steps - 1, mask = 1; step >= 0; step--, mask *= 2) {
            int peer = fold_real_rank(vrank ^ mask, rem);

            COLL_TUNED_TRY(
                crmpi_coll_sched_recv(s, coll_tuned_elem_at(a->rbuf, (MPI_Aint)give_lo[step], type),
                                      give_hi[step] - give_lo[step], type, peer));
            COLL_TUNED_TRY(
                crmpi_coll_sched_send(s, coll_tuned_elem_at(a->rbuf, (MPI_Aint)keep_lo[step], type),
                                      keep_hi[step] - keep_lo[step], type, peer));
            COLL_TUNED_TRY(crmpi_coll_sched_round(s));
        }
    }
    return fold_out(a, comm, s, p2);
}

/*
 * Reduce_scatter(_block): ring, for commutative ops. In step k every rank sends the partial
 * block (rank - k - 1) to its right neighbour and adds the one it receives from its left
 * to block (rank - k - 2); after n - 1 steps block `rank` holds everyone's contribution.
 * Each rank sends (n - 1) / n of the vector instead of gathering it at one rank.
 */
int coll_tuned_reduce_scatter_ring(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                   crmpi_coll_sched_t *s)
{
    int n = comm->size, me = comm->rank;
    int right = (me + 1) % n, left = (me - 1 + n) % n;
    MPI_Datatype type = a->rtype;
    size_t total = 0, max_count = 0, *first;
    char *acc, *tmp;

    if (!a->op->commutative || n == 1)
        return coll_basic_reduce_scatter(a, comm, s);
    first = crmpi_coll_sched_tmp(s, (size_t)n + 1, MPI_AINT);
    if (!first)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    for (int r = 0; r < n; r++) {
        size_t count = (size_t)crmpi_count_array_or(a->rcounts, r, (MPI_Count)a->rcount);

        first[r] = total;
        total += count;
        if (count > max_count)
            max_count = count;
    }
    first[n] = total;
    acc = crmpi_coll_sched_tmp(s, total, type);
    tmp = crmpi_coll_sched_tmp(s, max_count, type);
    if (!acc || !tmp)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    COLL_TUNED_TRY(
        crmpi_coll_sched_copy(s, a->in_place ? a->rbuf : a->sbuf, total, type, acc, total, type));
    for (int k = 0; k < n - 1; k++) {
        int send_block = (me - k - 1 + 2 * n) % n, recv_block = (me - k - 2 + 2 * n) % n;

        COLL_TUNED_TRY(
            crmpi_coll_sched_recv(s, tmp, first[recv_block + 1] - first[recv_block], type, left));
        COLL_TUNED_TRY(
            crmpi_coll_sched_send(s, coll_tuned_elem_at(acc, (MPI_Aint)first[send_block], type),
                                  first[send_block + 1] - first[send_block], type, right));
        COLL_TUNED_TRY(crmpi_coll_sched_round(s));
        COLL_TUNED_TRY(crmpi_coll_sched_reduce(
            s, tmp, coll_tuned_elem_at(acc, (MPI_Aint)first[recv_block], type),
            first[recv_block + 1] - first[recv_block], type, a->op));
    }
    COLL_TUNED_TRY(crmpi_coll_sched_copy(s, coll_tuned_elem_at(acc, (MPI_Aint)first[me], type),
                                         first[me + 1] - first[me], type, a->rbuf,
                                         first[me + 1] - first[me], type));
    return crmpi_coll_sched_round(s);
}

/*
 * Scan and Exscan: recursive doubling. `partial` is the reduction of the block of ranks
 * exchanged so far; a lower partner's partial goes on the left of ours and into the result.
 */
static int tuned_scan_recdbl_common(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                    crmpi_coll_sched_t *s, bool exclusive)
{
    int n = comm->size, me = comm->rank;
    size_t count = a->rcount;
    MPI_Datatype type = a->rtype;
    void *partial = crmpi_coll_sched_tmp(s, count, type);
    bool have_result = !exclusive;

    if (!partial)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    COLL_TUNED_TRY(crmpi_coll_sched_copy(s, a->in_place ? a->rbuf : a->sbuf, count, type, partial,
                                         count, type));
    if (!exclusive && !a->in_place)
        COLL_TUNED_TRY(crmpi_coll_sched_copy(s, a->sbuf, count, type, a->rbuf, count, type));
    COLL_TUNED_TRY(crmpi_coll_sched_round(s));
    for (int mask = 1; mask < n; mask *= 2) {
        int peer = me ^ mask;
        void *tmp;

        if (peer >= n)
            continue;
        tmp = crmpi_coll_sched_tmp(s, count, type);
        if (!tmp)
            return CRMPI_ERR_OUT_OF_RESOURCE;
        COLL_TUNED_TRY(crmpi_coll_sched_recv(s, tmp, count, type, peer));
        COLL_TUNED_TRY(crmpi_coll_sched_send(s, partial, count, type, peer));
        COLL_TUNED_TRY(crmpi_coll_sched_round(s));
        if (peer < me) {
            if (have_result) {
                COLL_TUNED_TRY(crmpi_coll_sched_reduce(s, tmp, a->rbuf, count, type, a->op));
            } else {
                COLL_TUNED_TRY(crmpi_coll_sched_copy(s, tmp, count, type, a->rbuf, count, type));
                have_result = true;
            }
            COLL_TUNED_TRY(crmpi_coll_sched_reduce(s, tmp, partial, count, type, a->op));
        } else {
            COLL_TUNED_TRY(crmpi_coll_sched_reduce(s, partial, tmp, count, type, a->op));
            COLL_TUNED_TRY(crmpi_coll_sched_copy(s, tmp, count, type, partial, count, type));
        }
        COLL_TUNED_TRY(crmpi_coll_sched_round(s));
    }
    return CRMPI_OK;
}

int coll_tuned_scan_recdbl(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                           crmpi_coll_sched_t *s)
{
    return tuned_scan_recdbl_common(a, comm, s, false);
}

int coll_tuned_exscan_recdbl(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                             crmpi_coll_sched_t *s)
{
    return tuned_scan_recdbl_common(a, comm, s, true);
}
