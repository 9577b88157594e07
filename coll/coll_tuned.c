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

#include "coll_tuned.h"
#include "param.h"

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
    return coll_tuned_barrier_dissemination(a, comm, s);
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
    case 3: return coll_tuned_bcast_scatter_allgather(a, comm, s);
    default: return coll_tuned_bcast_binomial(a, comm, s);
    }
}

static int tuned_reduce(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s)
{
    if (coll_tuned_params.forced[CRMPI_COLL_REDUCE] == 1)
        return coll_basic_reduce(a, comm, s);
    return coll_tuned_reduce_binomial(a, comm, s);
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
            alg = coll_tuned_is_pow2(n) && msg_bytes(a->rcount, a->rtype) < TUNED_ALLREDUCE_RING
                      ? 4
                      : 3;
    }
    switch (alg) {
    case 1: return coll_basic_allreduce(a, comm, s);
    case 3:
        if (commutative)
            return coll_tuned_allreduce_ring(a, comm, s);
        break;
    case 4:
        if (commutative)
            return coll_tuned_allreduce_rabenseifner(a, comm, s);
        break;
    default: break;
    }
    return coll_tuned_allreduce_recdbl(a, comm, s);
}

static int tuned_allgather(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                           crmpi_coll_sched_t *s)
{
    int64_t alg = coll_tuned_params.forced[CRMPI_COLL_ALLGATHER];

    if (alg == 0)
        alg = msg_bytes(a->rcount * (size_t)comm->size, a->rtype) < TUNED_ALLGATHER_SMALL &&
                      coll_tuned_is_pow2(comm->size)
                  ? 3
                  : 2;
    switch (alg) {
    case 1: return coll_basic_allgather(a, comm, s);
    case 3: return coll_tuned_allgather_recdbl(a, comm, s);
    default: return coll_tuned_allgather_ring(a, comm, s);
    }
}

static int tuned_allgatherv(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                            crmpi_coll_sched_t *s)
{
    if (coll_tuned_params.forced[CRMPI_COLL_ALLGATHERV] == 1)
        return coll_basic_allgatherv(a, comm, s);
    return coll_tuned_allgather_ring(a, comm, s);
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
    case 2: return coll_tuned_alltoall_pairwise(a, comm, s);
    case 3: return coll_tuned_alltoall_bruck(a, comm, s);
    default: return coll_basic_alltoall(a, comm, s);
    }
}

static int tuned_alltoallv(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                           crmpi_coll_sched_t *s)
{
    if (coll_tuned_params.forced[CRMPI_COLL_ALLTOALLV] == 2)
        return coll_tuned_alltoall_pairwise(a, comm, s);
    return coll_basic_alltoall(a, comm, s);
}

static int tuned_reduce_scatter(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                crmpi_coll_sched_t *s)
{
    /* One parameter for both forms: they are the same algorithms. */
    int64_t alg = coll_tuned_params.forced[CRMPI_COLL_REDUCE_SCATTER];
    size_t total = a->rcount * (size_t)comm->size;

    if (a->rcounts.base) {
        total = 0;
        for (int r = 0; r < comm->size; r++)
            total += (size_t)crmpi_count_array_at(a->rcounts, r);
    }
    if (alg == 0)
        alg = msg_bytes(total, a->rtype) >= TUNED_REDUCE_SCATTER_RING ? 2 : 1;
    return alg == 2 ? coll_tuned_reduce_scatter_ring(a, comm, s)
                    : coll_basic_reduce_scatter(a, comm, s);
}

static int tuned_scan(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s)
{
    if (coll_tuned_params.forced[CRMPI_COLL_SCAN] == 1)
        return coll_basic_scan(a, comm, s);
    return coll_tuned_scan_recdbl(a, comm, s);
}

static int tuned_exscan(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s)
{
    if (coll_tuned_params.forced[CRMPI_COLL_EXSCAN] == 1)
        return crmpi_coll_basic_ops.build[CRMPI_COLL_EXSCAN](a, comm, s);
    return coll_tuned_exscan_recdbl(a, comm, s);
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
            [CRMPI_COLL_NEIGHBOR_ALLGATHER] = coll_neighbor_allgather,
            [CRMPI_COLL_NEIGHBOR_ALLGATHERV] = coll_neighbor_allgatherv,
            [CRMPI_COLL_NEIGHBOR_ALLTOALL] = coll_neighbor_alltoall,
            [CRMPI_COLL_NEIGHBOR_ALLTOALLV] = coll_neighbor_alltoallv,
            [CRMPI_COLL_NEIGHBOR_ALLTOALLW] = coll_neighbor_alltoallw,
        },
    .direct =
        {
            [CRMPI_COLL_BARRIER] = coll_tuned_direct_barrier,
            [CRMPI_COLL_BCAST] = coll_tuned_direct_bcast,
            [CRMPI_COLL_ALLREDUCE] = coll_tuned_direct_allreduce,
            [CRMPI_COLL_ALLTOALL] = coll_tuned_direct_alltoall,
        },
};
