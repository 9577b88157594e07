/*
 * coll_tuned.c: component "tuned": algorithms chosen by message size and process count,
 * each one forcible with coll_tuned_<collective>_algorithm (coll_info.c lists the numbers;
 * 0 lets the decision below choose, 1 is always the basic algorithm).
 *
 *   barrier    2 dissemination (ceil(log2 n) rounds of one message)
 *   bcast      2 binomial tree  3 scatter + ring allgather (large messages)
 *   reduce     2 binomial tree (rooted at 0 and forwarded for non-commutative ops, so the
 *                combination stays in rank order)
 *   allreduce  2 recursive doubling  3 ring  4 Rabenseifner (recursive-halving
 *                reduce-scatter + recursive-doubling allgather); 3 and 4 need a commutative
 *                op and fall back to 2 otherwise
 *   allgather  2 ring  3 recursive doubling (power-of-two counts; ring otherwise)
 *   allgatherv 2 ring
 *   alltoall   2 pairwise exchange (one peer per round)  3 Bruck (log2 n rounds, small blocks)
 *   alltoallv  2 pairwise exchange
 *   reduce_scatter(_block) 2 ring (commutative ops; basic otherwise)
 *   scan, exscan 2 recursive doubling
 * Non-power-of-two counts in recursive doubling and Rabenseifner: the first 2*rem ranks
 * pair up (the even one hands its data to the odd one and waits for the result), so the
 * rest is a power of two; blocks stay contiguous in rank order.
 */
#include "config.h"

#include "coll_sched.h"
#include "crmpi_status.h"
#include "param.h"

#define TRY(call)                                                                                  \
    do {                                                                                           \
        int try_rc_ = (call);                                                                      \
        if (try_rc_ != CRMPI_OK)                                                                   \
            return try_rc_;                                                                        \
    } while (0)

/* Decision thresholds (bytes), from bench/coll on shared memory with 2 to 8 ranks on 2
 * cores (so oversubscribed at 8: fewer dependent rounds pay off more than they would on
 * dedicated cores). They never affect correctness. */
#define TUNED_ALLREDUCE_LARGE      16384  /* from here: ring or Rabenseifner */
#define TUNED_ALLREDUCE_RING       524288 /* from here: ring even on powers of two */
#define TUNED_ALLGATHER_SMALL      8192
#define TUNED_REDUCE_SCATTER_RING  16384  /* from here: ring (commutative ops) */
#define TUNED_BCAST_LARGE          32768  /* from here (4+ ranks): scatter + allgather */
#define TUNED_ALLTOALL_SMALL       262144 /* below: every message posted at once */
#define TUNED_ALLTOALL_BRUCK       256    /* Bruck for blocks up to this size ... */
#define TUNED_ALLTOALL_BRUCK_RANKS 32     /* ... on this many ranks or more */

coll_tuned_params_t coll_tuned_params;

/* The parameter name of each collective's forced algorithm. */
static const char *const tuned_param_names[CRMPI_COLL_COUNT] = {
    [CRMPI_COLL_BARRIER] = "coll_tuned_barrier_algorithm",
    [CRMPI_COLL_BCAST] = "coll_tuned_bcast_algorithm",
    [CRMPI_COLL_REDUCE] = "coll_tuned_reduce_algorithm",
    [CRMPI_COLL_ALLREDUCE] = "coll_tuned_allreduce_algorithm",
    [CRMPI_COLL_ALLGATHER] = "coll_tuned_allgather_algorithm",
    [CRMPI_COLL_ALLGATHERV] = "coll_tuned_allgatherv_algorithm",
    [CRMPI_COLL_ALLTOALL] = "coll_tuned_alltoall_algorithm",
    [CRMPI_COLL_ALLTOALLV] = "coll_tuned_alltoallv_algorithm",
    [CRMPI_COLL_REDUCE_SCATTER] = "coll_tuned_reduce_scatter_algorithm",
    [CRMPI_COLL_SCAN] = "coll_tuned_scan_algorithm",
    [CRMPI_COLL_EXSCAN] = "coll_tuned_exscan_algorithm",
};

void coll_tuned_read_params(void)
{
    for (int k = 0; k < CRMPI_COLL_COUNT; k++) {
        coll_tuned_params.forced[k] = 0;
        if (tuned_param_names[k])
            crmpi_param_get_int(tuned_param_names[k], &coll_tuned_params.forced[k]);
    }
}

static inline void *elem_at(const void *buf, MPI_Aint index, MPI_Datatype type)
{
    return (char *)buf + index * type->extent;
}

static inline bool is_pow2(int n)
{
    return (n & (n - 1)) == 0;
}

/* The largest power of two <= n (n >= 1). */
static inline int pow2_floor(int n)
{
    int p = 1;

    while (p * 2 <= n)
        p *= 2;
    return p;
}

/*
 * Barrier: dissemination. In round k every rank signals rank + 2^k and waits for rank - 2^k;
 * after ceil(log2 n) rounds each has heard, indirectly, from all.
 */
static int tuned_barrier_dissemination(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                       crmpi_coll_sched_t *s)
{
    int n = comm->size, me = comm->rank;

    (void)a;
    for (int dist = 1; dist < n; dist *= 2) {
        TRY(crmpi_coll_sched_recv(s, NULL, 0, MPI_BYTE, (me - dist + n) % n));
        TRY(crmpi_coll_sched_send(s, NULL, 0, MPI_BYTE, (me + dist) % n));
        TRY(crmpi_coll_sched_round(s));
    }
    return CRMPI_OK;
}

/* Bcast: binomial tree over ranks relative to the root. */
static int tuned_bcast_binomial(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                crmpi_coll_sched_t *s)
{
    int n = comm->size;
    int vrank = (comm->rank - a->root + n) % n;
    int mask = 1;

    while (mask < n) {
        if (vrank & mask) {
            TRY(crmpi_coll_sched_recv(s, a->rbuf, a->rcount, a->rtype,
                                      (vrank - mask + a->root) % n));
            TRY(crmpi_coll_sched_round(s));
            break;
        }
        mask *= 2;
    }
    for (mask /= 2; mask > 0; mask /= 2) {
        if (vrank + mask < n)
            TRY(crmpi_coll_sched_send(s, a->rbuf, a->rcount, a->rtype,
                                      (vrank + mask + a->root) % n));
    }
    return crmpi_coll_sched_round(s);
}

/*
 * Reduce: binomial tree. The subtree of vrank v at level `mask` is ranks [v, v + mask), so
 * acc = acc op child keeps rank order when vrank is rank (tree rooted at 0); a commutative
 * op may root the tree at the root itself. The accumulator moves to the received buffer
 * (reduce writes into its right operand), so the send buffer is never written.
 */
static int tuned_reduce_binomial(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
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
        TRY(crmpi_coll_sched_copy(s, a->rbuf, count, type, copy, count, type));
        acc = copy;
    }
    for (int mask = 1; mask < n; mask *= 2) {
        if (vrank & mask) {
            TRY(crmpi_coll_sched_send(s, acc, count, type, (vrank - mask + tree_root) % n));
            TRY(crmpi_coll_sched_round(s));
            break;
        }
        if (vrank + mask < n) {
            void *child = crmpi_coll_sched_tmp(s, count, type);

            if (!child)
                return CRMPI_ERR_OUT_OF_RESOURCE;
            TRY(crmpi_coll_sched_recv(s, child, count, type, (vrank + mask + tree_root) % n));
            TRY(crmpi_coll_sched_round(s));
            TRY(crmpi_coll_sched_reduce(s, acc, child, count, type, a->op));
            acc = child;
        }
    }
    if (me == tree_root && tree_root != a->root) {
        TRY(crmpi_coll_sched_send(s, acc, count, type, a->root));
    } else if (me == a->root && tree_root != a->root) {
        TRY(crmpi_coll_sched_recv(s, a->rbuf, count, type, tree_root));
    } else if (me == a->root) {
        TRY(crmpi_coll_sched_copy(s, acc, count, type, a->rbuf, count, type));
    }
    return crmpi_coll_sched_round(s);
}

/* Put our data into rbuf (the accumulator of the allreduce algorithms). */
static int allreduce_init_acc(const crmpi_coll_args_t *a, crmpi_coll_sched_t *s)
{
    if (!a->in_place)
        TRY(crmpi_coll_sched_copy(s, a->sbuf, a->rcount, a->rtype, a->rbuf, a->rcount, a->rtype));
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
        TRY(crmpi_coll_sched_send(s, a->rbuf, a->rcount, a->rtype, me + 1));
        TRY(crmpi_coll_sched_round(s));
        return -1;
    }
    void *tmp = crmpi_coll_sched_tmp(s, a->rcount, a->rtype);
    if (!tmp)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    TRY(crmpi_coll_sched_recv(s, tmp, a->rcount, a->rtype, me - 1));
    TRY(crmpi_coll_sched_round(s));
    /* The even rank is the lower one: its data on the left. */
    TRY(crmpi_coll_sched_reduce(s, tmp, a->rbuf, a->rcount, a->rtype, a->op));
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
            TRY(crmpi_coll_sched_recv(s, a->rbuf, a->rcount, a->rtype, me + 1));
        else
            TRY(crmpi_coll_sched_send(s, a->rbuf, a->rcount, a->rtype, me - 1));
    }
    return crmpi_coll_sched_round(s);
}

/*
 * Allreduce: recursive doubling. Partners exchange whole vectors; the lower one's data goes
 * on the left, so the order of any op is rank order (the blocks are contiguous ranges).
 */
static int tuned_allreduce_recdbl(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                  crmpi_coll_sched_t *s)
{
    int p2 = pow2_floor(comm->size), rem = comm->size - p2;
    size_t count = a->rcount;
    MPI_Datatype type = a->rtype;
    int vrank;

    TRY(allreduce_init_acc(a, s));
    vrank = fold_in(a, comm, s, p2);
    if (vrank < -1)
        return vrank;
    if (vrank >= 0) {
        for (int mask = 1; mask < p2; mask *= 2) {
            int vpeer = vrank ^ mask, peer = fold_real_rank(vpeer, rem);
            void *tmp = crmpi_coll_sched_tmp(s, count, type);

            if (!tmp)
                return CRMPI_ERR_OUT_OF_RESOURCE;
            TRY(crmpi_coll_sched_recv(s, tmp, count, type, peer));
            TRY(crmpi_coll_sched_send(s, a->rbuf, count, type, peer));
            TRY(crmpi_coll_sched_round(s));
            if (vpeer < vrank) {
                TRY(crmpi_coll_sched_reduce(s, tmp, a->rbuf, count, type, a->op));
            } else {
                TRY(crmpi_coll_sched_reduce(s, a->rbuf, tmp, count, type, a->op));
                TRY(crmpi_coll_sched_copy(s, tmp, count, type, a->rbuf, count, type));
            }
        }
    }
    return fold_out(a, comm, s, p2);
}

/* Segment `index` of `count` elements cut into `parts` nearly equal pieces. */
static void segment(size_t count, int parts, int index, size_t *lo_out, size_t *len_out)
{
    size_t base = count / (size_t)parts, extra = count % (size_t)parts;
    size_t i = (size_t)index;

    *lo_out = i * base + (i < extra ? i : extra);
    *len_out = base + (i < extra ? 1 : 0);
}

/*
 * Bcast of a large message: scatter + ring allgather (van de Geijn). The root sends each
 * rank its segment, then the segments circulate; the root sends about 2m instead of the
 * binomial tree's m log2 n.
 */
static int tuned_bcast_scatter_allgather(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                         crmpi_coll_sched_t *s)
{
    int n = comm->size;
    int vrank = (comm->rank - a->root + n) % n;
    MPI_Datatype type = a->rtype;
    size_t lo, len;

    if (a->rcount < (size_t)n)
        return tuned_bcast_binomial(a, comm, s);
    if (vrank == 0) {
        for (int v = 1; v < n; v++) {
            segment(a->rcount, n, v, &lo, &len);
            TRY(crmpi_coll_sched_send(s, elem_at(a->rbuf, (MPI_Aint)lo, type), len, type,
                                      (v + a->root) % n));
        }
    } else {
        segment(a->rcount, n, vrank, &lo, &len);
        TRY(crmpi_coll_sched_recv(s, elem_at(a->rbuf, (MPI_Aint)lo, type), len, type, a->root));
    }
    TRY(crmpi_coll_sched_round(s));
    for (int k = 0; k < n - 1; k++) {
        int send_seg = (vrank - k + n) % n, recv_seg = (vrank - k - 1 + n) % n;

        segment(a->rcount, n, recv_seg, &lo, &len);
        /* The root has every segment already: it only forwards. */
        if (vrank != 0)
            TRY(crmpi_coll_sched_recv(s, elem_at(a->rbuf, (MPI_Aint)lo, type), len, type,
                                      (comm->rank - 1 + n) % n));
        segment(a->rcount, n, send_seg, &lo, &len);
        /* Nobody needs to send the root anything. */
        if ((vrank + 1) % n != 0)
            TRY(crmpi_coll_sched_send(s, elem_at(a->rbuf, (MPI_Aint)lo, type), len, type,
                                      (comm->rank + 1) % n));
        TRY(crmpi_coll_sched_round(s));
    }
    return CRMPI_OK;
}

/*
 * Allreduce: ring. n - 1 steps of reduce-scatter (segment s finishes at rank s - 1) and
 * n - 1 steps of allgather; each rank sends 2 (n - 1) / n of the vector. Commutative ops.
 */
static int tuned_allreduce_ring(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                crmpi_coll_sched_t *s)
{
    int n = comm->size, me = comm->rank;
    int right = (me + 1) % n, left = (me - 1 + n) % n;
    MPI_Datatype type = a->rtype;
    size_t lo, len, max_len;
    void *tmp;

    TRY(allreduce_init_acc(a, s));
    segment(a->rcount, n, 0, &lo, &max_len);
    tmp = crmpi_coll_sched_tmp(s, max_len, type);
    if (!tmp)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    for (int k = 0; k < n - 1; k++) {
        int send_seg = (me - k + n) % n, recv_seg = (me - k - 1 + n) % n;

        segment(a->rcount, n, recv_seg, &lo, &len);
        TRY(crmpi_coll_sched_recv(s, tmp, len, type, left));
        segment(a->rcount, n, send_seg, &lo, &len);
        TRY(crmpi_coll_sched_send(s, elem_at(a->rbuf, (MPI_Aint)lo, type), len, type, right));
        TRY(crmpi_coll_sched_round(s));
        segment(a->rcount, n, recv_seg, &lo, &len);
        TRY(crmpi_coll_sched_reduce(s, tmp, elem_at(a->rbuf, (MPI_Aint)lo, type), len, type,
                                    a->op));
    }
    for (int k = 0; k < n - 1; k++) {
        int send_seg = (me + 1 - k + n) % n, recv_seg = (me - k + n) % n;

        segment(a->rcount, n, recv_seg, &lo, &len);
        TRY(crmpi_coll_sched_recv(s, elem_at(a->rbuf, (MPI_Aint)lo, type), len, type, left));
        segment(a->rcount, n, send_seg, &lo, &len);
        TRY(crmpi_coll_sched_send(s, elem_at(a->rbuf, (MPI_Aint)lo, type), len, type, right));
        TRY(crmpi_coll_sched_round(s));
    }
    return CRMPI_OK;
}

/*
 * Allreduce: Rabenseifner. Recursive halving leaves each of the p2 ranks with its share
 * of the reduced vector, recursive doubling gathers the shares. Commutative ops.
 */
static int tuned_allreduce_rabenseifner(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                        crmpi_coll_sched_t *s)
{
    int p2 = pow2_floor(comm->size), rem = comm->size - p2;
    MPI_Datatype type = a->rtype;
    size_t keep_lo[32], keep_hi[32], give_lo[32], give_hi[32];
    size_t lo = 0, hi = a->rcount;
    int steps = 0, vrank;
    void *tmp;

    TRY(allreduce_init_acc(a, s));
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
            TRY(crmpi_coll_sched_recv(s, tmp, keep_hi[steps] - keep_lo[steps], type, peer));
            TRY(crmpi_coll_sched_send(s, elem_at(a->rbuf, (MPI_Aint)give_lo[steps], type),
                                      give_hi[steps] - give_lo[steps], type, peer));
            TRY(crmpi_coll_sched_round(s));
            TRY(crmpi_coll_sched_reduce(s, tmp, elem_at(a->rbuf, (MPI_Aint)keep_lo[steps], type),
                                        keep_hi[steps] - keep_lo[steps], type, a->op));
            lo = keep_lo[steps];
            hi = keep_hi[steps];
        }
        for (int step = steps - 1, mask = 1; step >= 0; step--, mask *= 2) {
            int peer = fold_real_rank(vrank ^ mask, rem);

            TRY(crmpi_coll_sched_recv(s, elem_at(a->rbuf, (MPI_Aint)give_lo[step], type),
                                      give_hi[step] - give_lo[step], type, peer));
            TRY(crmpi_coll_sched_send(s, elem_at(a->rbuf, (MPI_Aint)keep_lo[step], type),
                                      keep_hi[step] - keep_lo[step], type, peer));
            TRY(crmpi_coll_sched_round(s));
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
static int tuned_reduce_scatter_ring(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
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
        size_t count = a->rcounts ? (size_t)a->rcounts[r] : a->rcount;

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
    TRY(crmpi_coll_sched_copy(s, a->in_place ? a->rbuf : a->sbuf, total, type, acc, total, type));
    for (int k = 0; k < n - 1; k++) {
        int send_block = (me - k - 1 + 2 * n) % n, recv_block = (me - k - 2 + 2 * n) % n;

        TRY(crmpi_coll_sched_recv(s, tmp, first[recv_block + 1] - first[recv_block], type, left));
        TRY(crmpi_coll_sched_send(s, elem_at(acc, (MPI_Aint)first[send_block], type),
                                  first[send_block + 1] - first[send_block], type, right));
        TRY(crmpi_coll_sched_round(s));
        TRY(crmpi_coll_sched_reduce(s, tmp, elem_at(acc, (MPI_Aint)first[recv_block], type),
                                    first[recv_block + 1] - first[recv_block], type, a->op));
    }
    TRY(crmpi_coll_sched_copy(s, elem_at(acc, (MPI_Aint)first[me], type), first[me + 1] - first[me],
                              type, a->rbuf, first[me + 1] - first[me], type));
    return crmpi_coll_sched_round(s);
}

/* The block of rank r in an allgather(v) receive buffer. */
static void *allgather_slot(const crmpi_coll_args_t *a, int r, size_t *count_out)
{
    MPI_Aint displ = a->rdispls ? (MPI_Aint)a->rdispls[r] : (MPI_Aint)r * (MPI_Aint)a->rcount;

    *count_out = a->rcounts ? (size_t)a->rcounts[r] : a->rcount;
    return (char *)a->rbuf + displ * a->rtype->extent;
}

/* Allgather(v): ring; in step k each rank forwards the block it received in step k - 1. */
static int tuned_allgather_ring(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                crmpi_coll_sched_t *s)
{
    int n = comm->size, me = comm->rank;
    size_t count;
    void *slot = allgather_slot(a, me, &count);

    if (!a->in_place)
        TRY(crmpi_coll_sched_copy(s, a->sbuf, a->scount, a->stype, slot, count, a->rtype));
    TRY(crmpi_coll_sched_round(s));
    for (int k = 0; k < n - 1; k++) {
        int send_block = (me - k + n) % n, recv_block = (me - k - 1 + n) % n;

        slot = allgather_slot(a, recv_block, &count);
        TRY(crmpi_coll_sched_recv(s, slot, count, a->rtype, (me - 1 + n) % n));
        slot = allgather_slot(a, send_block, &count);
        TRY(crmpi_coll_sched_send(s, slot, count, a->rtype, (me + 1) % n));
        TRY(crmpi_coll_sched_round(s));
    }
    return CRMPI_OK;
}

/* Allgather: recursive doubling (power-of-two sizes): blocks of 2^k ranks are swapped. */
static int tuned_allgather_recdbl(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                  crmpi_coll_sched_t *s)
{
    int n = comm->size, me = comm->rank;
    size_t count;
    void *slot = allgather_slot(a, me, &count);

    if (!is_pow2(n))
        return tuned_allgather_ring(a, comm, s);
    if (!a->in_place)
        TRY(crmpi_coll_sched_copy(s, a->sbuf, a->scount, a->stype, slot, count, a->rtype));
    TRY(crmpi_coll_sched_round(s));
    for (int mask = 1; mask < n; mask *= 2) {
        int peer = me ^ mask;
        int my_first = me & ~(mask - 1), peer_first = peer & ~(mask - 1);

        TRY(crmpi_coll_sched_recv(s, allgather_slot(a, peer_first, &count),
                                  (size_t)mask * a->rcount, a->rtype, peer));
        TRY(crmpi_coll_sched_send(s, allgather_slot(a, my_first, &count), (size_t)mask * a->rcount,
                                  a->rtype, peer));
        TRY(crmpi_coll_sched_round(s));
    }
    return CRMPI_OK;
}

/* Alltoall(v): pairwise exchange, one peer per round (bounded memory and contention). */
static int tuned_alltoall_pairwise(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                   crmpi_coll_sched_t *s)
{
    int n = comm->size, me = comm->rank;

    /* In place, the basic algorithm copies each block aside first. */
    if (a->in_place)
        return coll_basic_alltoall(a, comm, s);
    for (int k = 0; k < n; k++) {
        int to = (me + k) % n, from = (me - k + n) % n;
        size_t scount = a->scounts ? (size_t)a->scounts[to] : a->scount;
        size_t rcount = a->rcounts ? (size_t)a->rcounts[from] : a->rcount;
        MPI_Aint sdispl = a->sdispls ? a->sdispls[to] : (MPI_Aint)to * (MPI_Aint)a->scount;
        MPI_Aint rdispl = a->rdispls ? a->rdispls[from] : (MPI_Aint)from * (MPI_Aint)a->rcount;
        void *sslot = elem_at(a->sbuf, sdispl, a->stype);
        void *rslot = elem_at(a->rbuf, rdispl, a->rtype);

        if (k == 0) {
            TRY(crmpi_coll_sched_copy(s, sslot, scount, a->stype, rslot, rcount, a->rtype));
            continue;
        }
        TRY(crmpi_coll_sched_recv(s, rslot, rcount, a->rtype, from));
        TRY(crmpi_coll_sched_send(s, sslot, scount, a->stype, to));
        TRY(crmpi_coll_sched_round(s));
    }
    return crmpi_coll_sched_round(s);
}

/*
 * Alltoall: Bruck's algorithm, ceil(log2 n) rounds for small blocks. The blocks, packed as
 * bytes, are first rotated so that block i is the one for rank me + i; in round k every
 * block whose index has bit k goes to rank me + k (packed together); at the end block i
 * holds the data of rank me - i.
 */
static int tuned_alltoall_bruck(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
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
        TRY(crmpi_coll_sched_copy(
            s, elem_at(a->sbuf, (MPI_Aint)((me + i) % n) * (MPI_Aint)a->scount, a->stype),
            a->scount, a->stype, blocks + (size_t)i * block, block, MPI_BYTE));
    for (int k = 1; k < n; k *= 2) {
        num = 0;
        for (int i = 0; i < n; i++) {
            if (i & k)
                TRY(crmpi_coll_sched_copy(s, blocks + (size_t)i * block, block, MPI_BYTE,
                                          out + (size_t)num++ * block, block, MPI_BYTE));
        }
        TRY(crmpi_coll_sched_recv(s, in, (size_t)num * block, MPI_BYTE, (me - k + n) % n));
        TRY(crmpi_coll_sched_send(s, out, (size_t)num * block, MPI_BYTE, (me + k) % n));
        TRY(crmpi_coll_sched_round(s));
        num = 0;
        for (int i = 0; i < n; i++) {
            if (i & k)
                TRY(crmpi_coll_sched_copy(s, in + (size_t)num++ * block, block, MPI_BYTE,
                                          blocks + (size_t)i * block, block, MPI_BYTE));
        }
    }
    for (int i = 0; i < n; i++)
        TRY(crmpi_coll_sched_copy(
            s, blocks + (size_t)i * block, block, MPI_BYTE,
            elem_at(a->rbuf, (MPI_Aint)((me - i + n) % n) * (MPI_Aint)a->rcount, a->rtype),
            a->rcount, a->rtype));
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
    TRY(crmpi_coll_sched_copy(s, a->in_place ? a->rbuf : a->sbuf, count, type, partial, count,
                              type));
    if (!exclusive && !a->in_place)
        TRY(crmpi_coll_sched_copy(s, a->sbuf, count, type, a->rbuf, count, type));
    TRY(crmpi_coll_sched_round(s));
    for (int mask = 1; mask < n; mask *= 2) {
        int peer = me ^ mask;
        void *tmp;

        if (peer >= n)
            continue;
        tmp = crmpi_coll_sched_tmp(s, count, type);
        if (!tmp)
            return CRMPI_ERR_OUT_OF_RESOURCE;
        TRY(crmpi_coll_sched_recv(s, tmp, count, type, peer));
        TRY(crmpi_coll_sched_send(s, partial, count, type, peer));
        TRY(crmpi_coll_sched_round(s));
        if (peer < me) {
            if (have_result) {
                TRY(crmpi_coll_sched_reduce(s, tmp, a->rbuf, count, type, a->op));
            } else {
                TRY(crmpi_coll_sched_copy(s, tmp, count, type, a->rbuf, count, type));
                have_result = true;
            }
            TRY(crmpi_coll_sched_reduce(s, tmp, partial, count, type, a->op));
        } else {
            TRY(crmpi_coll_sched_reduce(s, partial, tmp, count, type, a->op));
            TRY(crmpi_coll_sched_copy(s, tmp, count, type, partial, count, type));
        }
        TRY(crmpi_coll_sched_round(s));
    }
    return CRMPI_OK;
}

static int tuned_scan_recdbl(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                             crmpi_coll_sched_t *s)
{
    return tuned_scan_recdbl_common(a, comm, s, false);
}

static int tuned_exscan_recdbl(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                               crmpi_coll_sched_t *s)
{
    return tuned_scan_recdbl_common(a, comm, s, true);
}

/* Bytes of a message of `count` elements of `type`. */
static inline size_t msg_bytes(size_t count, MPI_Datatype type)
{
    return count * type->size;
}

/*
 * The per-collective decisions. forced[k] = 1 is the basic algorithm; an algorithm number
 * the collective does not have is treated as 0 (decide).
 */
static int tuned_barrier(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s)
{
    if (coll_tuned_params.forced[CRMPI_COLL_BARRIER] == 1)
        return coll_basic_barrier(a, comm, s);
    return tuned_barrier_dissemination(a, comm, s);
}

int coll_tuned_bcast_decide(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm)
{
    int64_t alg = coll_tuned_params.forced[CRMPI_COLL_BCAST];

    (void)a;
    (void)comm;
    /* Scatter + allgather (3) lost to the binomial tree at every size in bench/coll here
     * (its n - 1 dependent ring steps suffer most from oversubscription); it is only
     * chosen when forced until it is measured on dedicated cores. */
    if (alg >= 1 && alg <= 3)
        return (int)alg;
    return 2;
}

static int tuned_bcast(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s)
{
    switch (coll_tuned_bcast_decide(a, comm)) {
    case 1: return coll_basic_bcast(a, comm, s);
    case 3: return tuned_bcast_scatter_allgather(a, comm, s);
    default: return tuned_bcast_binomial(a, comm, s);
    }
}

static int tuned_reduce(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s)
{
    if (coll_tuned_params.forced[CRMPI_COLL_REDUCE] == 1)
        return coll_basic_reduce(a, comm, s);
    return tuned_reduce_binomial(a, comm, s);
}

static int tuned_allreduce(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                           crmpi_coll_sched_t *s)
{
    int64_t alg = coll_tuned_params.forced[CRMPI_COLL_ALLREDUCE];
    bool commutative = a->op->commutative;
    int n = comm->size;

    if (alg == 0) {
        if (msg_bytes(a->rcount, a->rtype) < TUNED_ALLREDUCE_LARGE || a->rcount < (size_t)n ||
            !commutative)
            alg = 2;
        else
            alg = is_pow2(n) && msg_bytes(a->rcount, a->rtype) < TUNED_ALLREDUCE_RING ? 4 : 3;
    }
    switch (alg) {
    case 1: return coll_basic_allreduce(a, comm, s);
    case 3:
        if (commutative)
            return tuned_allreduce_ring(a, comm, s);
        break;
    case 4:
        if (commutative)
            return tuned_allreduce_rabenseifner(a, comm, s);
        break;
    default: break;
    }
    return tuned_allreduce_recdbl(a, comm, s);
}

static int tuned_allgather(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                           crmpi_coll_sched_t *s)
{
    int64_t alg = coll_tuned_params.forced[CRMPI_COLL_ALLGATHER];

    if (alg == 0)
        alg = msg_bytes(a->rcount * (size_t)comm->size, a->rtype) < TUNED_ALLGATHER_SMALL &&
                      is_pow2(comm->size)
                  ? 3
                  : 2;
    switch (alg) {
    case 1: return coll_basic_allgather(a, comm, s);
    case 3: return tuned_allgather_recdbl(a, comm, s);
    default: return tuned_allgather_ring(a, comm, s);
    }
}

static int tuned_allgatherv(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                            crmpi_coll_sched_t *s)
{
    if (coll_tuned_params.forced[CRMPI_COLL_ALLGATHERV] == 1)
        return coll_basic_allgatherv(a, comm, s);
    return tuned_allgather_ring(a, comm, s);
}

int coll_tuned_alltoall_decide(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm)
{
    int64_t alg = coll_tuned_params.forced[CRMPI_COLL_ALLTOALL];

    if (alg == 0) {
        if (msg_bytes(a->rcount, a->rtype) <= TUNED_ALLTOALL_BRUCK &&
            comm->size >= TUNED_ALLTOALL_BRUCK_RANKS)
            alg = 3;
        else
            alg = msg_bytes(a->rcount, a->rtype) < TUNED_ALLTOALL_SMALL ? 1 : 2;
    }
    return alg >= 1 && alg <= 3 ? (int)alg : 1;
}

static int tuned_alltoall(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                          crmpi_coll_sched_t *s)
{
    switch (coll_tuned_alltoall_decide(a, comm)) {
    case 2: return tuned_alltoall_pairwise(a, comm, s);
    case 3: return tuned_alltoall_bruck(a, comm, s);
    default: return coll_basic_alltoall(a, comm, s);
    }
}

static int tuned_alltoallv(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                           crmpi_coll_sched_t *s)
{
    if (coll_tuned_params.forced[CRMPI_COLL_ALLTOALLV] == 2)
        return tuned_alltoall_pairwise(a, comm, s);
    return coll_basic_alltoall(a, comm, s);
}

static int tuned_reduce_scatter(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                crmpi_coll_sched_t *s)
{
    /* One parameter for both forms: they are the same algorithms. */
    int64_t alg = coll_tuned_params.forced[CRMPI_COLL_REDUCE_SCATTER];
    size_t total = a->rcount * (size_t)comm->size;

    if (a->rcounts) {
        total = 0;
        for (int r = 0; r < comm->size; r++)
            total += (size_t)a->rcounts[r];
    }
    if (alg == 0)
        alg = msg_bytes(total, a->rtype) >= TUNED_REDUCE_SCATTER_RING ? 2 : 1;
    return alg == 2 ? tuned_reduce_scatter_ring(a, comm, s) : coll_basic_reduce_scatter(a, comm, s);
}

static int tuned_scan(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s)
{
    if (coll_tuned_params.forced[CRMPI_COLL_SCAN] == 1)
        return coll_basic_scan(a, comm, s);
    return tuned_scan_recdbl(a, comm, s);
}

static int tuned_exscan(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s)
{
    if (coll_tuned_params.forced[CRMPI_COLL_EXSCAN] == 1)
        return crmpi_coll_basic_ops.build[CRMPI_COLL_EXSCAN](a, comm, s);
    return tuned_exscan_recdbl(a, comm, s);
}

const crmpi_coll_ops_t crmpi_coll_tuned_ops = {
    .component = "tuned",
    .build =
        {
            [CRMPI_COLL_BARRIER] = tuned_barrier,
            [CRMPI_COLL_BCAST] = tuned_bcast,
            [CRMPI_COLL_REDUCE] = tuned_reduce,
            [CRMPI_COLL_ALLREDUCE] = tuned_allreduce,
            [CRMPI_COLL_GATHER] = coll_basic_gather,
            [CRMPI_COLL_GATHERV] = coll_basic_gather,
            [CRMPI_COLL_SCATTER] = coll_basic_scatter,
            [CRMPI_COLL_SCATTERV] = coll_basic_scatter,
            [CRMPI_COLL_ALLGATHER] = tuned_allgather,
            [CRMPI_COLL_ALLGATHERV] = tuned_allgatherv,
            [CRMPI_COLL_ALLTOALL] = tuned_alltoall,
            [CRMPI_COLL_ALLTOALLV] = tuned_alltoallv,
            [CRMPI_COLL_ALLTOALLW] = coll_basic_alltoall,
            [CRMPI_COLL_REDUCE_SCATTER] = tuned_reduce_scatter,
            [CRMPI_COLL_REDUCE_SCATTER_BLOCK] = tuned_reduce_scatter,
            [CRMPI_COLL_SCAN] = tuned_scan,
            [CRMPI_COLL_EXSCAN] = tuned_exscan,
        },
    .direct =
        {
            [CRMPI_COLL_BARRIER] = coll_tuned_direct_barrier,
            [CRMPI_COLL_BCAST] = coll_tuned_direct_bcast,
            [CRMPI_COLL_ALLREDUCE] = coll_tuned_direct_allreduce,
            [CRMPI_COLL_ALLTOALL] = coll_tuned_direct_alltoall,
        },
};
