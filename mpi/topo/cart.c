/*
 * cart.c: Cartesian topologies (MPI-3.1 sections 7.5.1, 7.5.2, 7.5.5, 7.5.6): creation,
 * MPI_Dims_create, the coordinate arithmetic, shifts and sub-grids. Ranks are laid out in
 * row-major order (the last dimension varies fastest). `reorder` is ignored: ranks keep
 * their order of the old communicator, which MPI allows.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"

#pragma weak MPI_Dims_create = PMPI_Dims_create
#pragma weak MPI_Cart_create = PMPI_Cart_create
#pragma weak MPI_Cart_coords = PMPI_Cart_coords
#pragma weak MPI_Cart_rank = PMPI_Cart_rank
#pragma weak MPI_Cart_shift = PMPI_Cart_shift
#pragma weak MPI_Cart_sub = PMPI_Cart_sub
#pragma weak MPI_Cart_get = PMPI_Cart_get
#pragma weak MPI_Cartdim_get = PMPI_Cartdim_get
#pragma weak MPI_Cart_map = PMPI_Cart_map

void crmpi_topo_cart_coords(const struct crmpi_topo_s *topo, int rank, int coords[])
{
    for (int d = topo->ndims - 1; d >= 0; d--) {
        coords[d] = rank % topo->dims[d];
        rank /= topo->dims[d];
    }
}

int crmpi_topo_cart_rank(const struct crmpi_topo_s *topo, const int coords[])
{
    int rank = 0;

    for (int d = 0; d < topo->ndims; d++) {
        int c = coords[d], n = topo->dims[d];
        if (c < 0 || c >= n) {
            if (!topo->periods[d])
                return MPI_PROC_NULL;
            c = ((c % n) + n) % n;
        }
        rank = rank * n + c;
    }
    return rank;
}

/* The search of dims_fill: factors chosen so far (non-increasing) and the best found. */
typedef struct topo_dims_search {
    const int *divisors; /* every divisor of the number to split, largest first */
    int num_divisors;    /* entries in divisors */
    int *cur;            /* the factors chosen so far */
    int *best;           /* the best complete choice */
    int best_spread;     /* its largest minus smallest factor; INT_MAX before the first */
    int num_factors;     /* factors in a complete choice */
} topo_dims_search_t;

/*
 * Is the complete choice cur better than best? The smaller spread wins; between equal
 * spreads, the one whose factors after the first are closer to each other, and so on
 * (5616 in four dimensions: 13 x 9 x 8 x 6, not 13 x 12 x 6 x 6; both spread 7). Both are
 * non-increasing, so the spread of the factors from i on is f[i] - f[last].
 */
static bool topo_dims_better(const int *cur, const int *best, int num_factors)
{
    int last = num_factors - 1;

    for (int i = 0; i < last; i++) {
        int cur_spread = cur[i] - cur[last], best_spread = best[i] - best[last];

        if (cur_spread != best_spread)
            return cur_spread < best_spread;
    }
    return false;
}

/* Is d^k >= n? (d >= 1, without overflow.) */
static bool topo_pow_at_least(int d, int k, int n)
{
    long long p = 1;

    for (int i = 0; i < k; i++) {
        p *= d;
        if (p >= n)
            return true;
    }
    return p >= n;
}

/* Split `rem` into `k` factors, each at most `max_factor`, after `depth` chosen ones. */
static void topo_dims_search_run(topo_dims_search_t *s, int rem, int k, int max_factor, int depth)
{
    if (k == 1) {
        if (rem > max_factor)
            return;
        s->cur[depth] = rem;
        if (s->best_spread == INT_MAX || topo_dims_better(s->cur, s->best, s->num_factors)) {
            s->best_spread = s->cur[0] - rem;
            memcpy(s->best, s->cur, (size_t)(depth + 1) * sizeof(int));
        }
        return;
    }
    for (int i = 0; i < s->num_divisors; i++) {
        int d = s->divisors[i];

        if (d > max_factor || rem % d != 0)
            continue;
        /* The k factors are at most d each: d^k must reach rem, and smaller d won't. */
        if (!topo_pow_at_least(d, k, rem))
            break;
        /* Every later factor is at most d, so the spread is at least first - d (an equal
         * spread may still win on the factors after the first). */
        if (depth > 0 && s->cur[0] - d > s->best_spread)
            break;
        s->cur[depth] = d;
        topo_dims_search_run(s, rem / d, k - 1, d, depth + 1);
    }
}

/*
 * Dims_create's distribution: the factorization of what is left into the free dimensions
 * whose largest and smallest factors differ least (MPI-3.1 section 7.5.2: "as close to
 * each other as possible"; 72 in two dimensions is 9 x 8, not 12 x 6), in non-increasing
 * order; ties go to the choice whose other factors are closest (topo_dims_better), which
 * is MPICH's choice too in all but a few cases of its test table. An exact search over the
 * divisors: at most 1536 of them below 2^31.
 */
int crmpi_topo_dims_fill(int nnodes, int ndims, int dims[])
{
    int known = 1, nfree = 0, left, num_divisors = 0;
    int *divisors = NULL, *cur = NULL, *best = NULL;
    int rc = MPI_ERR_NO_MEM;

    for (int d = 0; d < ndims; d++) {
        if (dims[d] < 0)
            return MPI_ERR_DIMS;
        if (dims[d] > 0)
            known *= dims[d];
        else
            nfree++;
    }
    if (known == 0 || nnodes % known != 0)
        return MPI_ERR_DIMS;
    left = nnodes / known;
    if (nfree == 0)
        return left == 1 ? MPI_SUCCESS : MPI_ERR_DIMS;

    /* The divisors of left, largest first: the small ones in ascending order, then their
     * cofactors. */
    divisors = malloc(2 * 1536 * sizeof(int));
    cur = calloc((size_t)nfree, sizeof(int));
    best = calloc((size_t)nfree, sizeof(int));
    if (!divisors || !cur || !best)
        goto out_free;
    int small[1536], num_small = 0;
    for (int p = 1; (long)p * p <= left; p++) {
        if (left % p == 0)
            small[num_small++] = p;
    }
    for (int i = 0; i < num_small; i++)
        divisors[num_divisors++] = left / small[i];
    for (int i = num_small - 1; i >= 0; i--) {
        if (small[i] != left / small[i])
            divisors[num_divisors++] = small[i];
    }
    topo_dims_search_t search = {.divisors = divisors,
                                 .num_divisors = num_divisors,
                                 .cur = cur,
                                 .best = best,
                                 .best_spread = INT_MAX,
                                 .num_factors = nfree};
    topo_dims_search_run(&search, left, nfree, left, 0);
    for (int d = 0, i = 0; d < ndims; d++) {
        if (dims[d] == 0)
            dims[d] = best[i++];
    }
    rc = MPI_SUCCESS;

out_free:
    free(divisors);
    free(cur);
    free(best);
    return rc;
}

int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    static const char func_name[] = "MPI_Dims_create";
    int err;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (nnodes <= 0 || ndims < 0 || (ndims > 0 && dims == NULL))
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "nnodes must be positive, ndims not negative");
    err = crmpi_topo_dims_fill(nnodes, ndims, dims);
    if (err != MPI_SUCCESS)
        return crmpi_mpi_errhandler_invoke(
            MPI_COMM_NULL, err, func_name,
            "the non-zero entries of dims do not divide nnodes, or one is negative");
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* Attach a Cartesian topology of ndims dimensions to comm (a new communicator). */
static int cart_attach(MPI_Comm comm, int ndims, const int dims[], const int periods[])
{
    struct crmpi_topo_s *topo = crmpi_topo_new(MPI_CART);

    if (!topo)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    topo->ndims = ndims;
    topo->dims = malloc(((size_t)ndims + 1) * sizeof(int));
    topo->periods = malloc(((size_t)ndims + 1) * sizeof(int));
    if (!topo->dims || !topo->periods) {
        crmpi_topo_destroy(topo);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    for (int d = 0; d < ndims; d++) {
        topo->dims[d] = dims[d];
        topo->periods[d] = periods[d] != 0;
    }
    comm->topo = topo;
    return CRMPI_OK;
}

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                     int reorder, MPI_Comm *comm_cart)
{
    static const char func_name[] = "MPI_Cart_create";
    MPI_Comm created;
    long cells = 1;
    int rc;

    (void)reorder;
    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (!crmpi_mpi_comm_is_valid(comm_old))
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
    if (comm_old->inter)
        return crmpi_mpi_errhandler_invoke(comm_old, MPI_ERR_COMM, func_name, CRMPI_TOPO_NOT_INTER);
    if (ndims < 0 || comm_cart == NULL || (ndims > 0 && (dims == NULL || periods == NULL)))
        return crmpi_mpi_errhandler_invoke(comm_old, MPI_ERR_ARG, func_name,
                                           "ndims is negative or an array is NULL");
    if (ndims > 64)
        return crmpi_mpi_errhandler_invoke(comm_old, MPI_ERR_DIMS, func_name,
                                           "more than 64 dimensions");
    for (int d = 0; d < ndims; d++) {
        if (dims[d] <= 0)
            return crmpi_mpi_errhandler_invoke(comm_old, MPI_ERR_DIMS, func_name,
                                               "a dimension is not positive");
        cells *= dims[d];
        if (cells > comm_old->size) {
            char detail[96];
            snprintf(detail, sizeof(detail), "the grid has more cells than the %d processes",
                     comm_old->size);
            return crmpi_mpi_errhandler_invoke(comm_old, MPI_ERR_ARG, func_name, detail);
        }
    }
    /* The first `cells` ranks form the grid; the others get MPI_COMM_NULL (7.5.1). */
    rc = crmpi_comm_split_make(comm_old, comm_old->rank < cells ? 0 : MPI_UNDEFINED, comm_old->rank,
                               &created);
    if (rc == CRMPI_OK && created != MPI_COMM_NULL) {
        rc = cart_attach(created, ndims, dims, periods);
        if (rc != CRMPI_OK)
            crmpi_comm_destroy(created);
    }
    if (rc != CRMPI_OK)
        return crmpi_mpi_errhandler_invoke(comm_old, crmpi_comm_error_class(rc), func_name,
                                           "cannot make the Cartesian communicator");
    *comm_cart = created;
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* Start of the calls that need a Cartesian communicator. */
#define CART_ENTER(comm, func_name)                                                                \
    do {                                                                                           \
        crmpi_lock();                                                                              \
        crmpi_mpi_require_active(func_name);                                                       \
        if (!crmpi_mpi_comm_is_valid(comm))                                                        \
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);      \
        if (!(comm)->topo || (comm)->topo->kind != MPI_CART)                                       \
            return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_TOPOLOGY, func_name,                  \
                                               "the communicator has no Cartesian topology");      \
    } while (0)

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    static const char func_name[] = "MPI_Cart_coords";

    CART_ENTER(comm, func_name);
    if (rank < 0 || rank >= comm->size)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_RANK, func_name, NULL);
    if (maxdims < comm->topo->ndims || (comm->topo->ndims > 0 && coords == NULL))
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name,
                                           "maxdims is smaller than the dimensions");
    crmpi_topo_cart_coords(comm->topo, rank, coords);
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    static const char func_name[] = "MPI_Cart_rank";
    const struct crmpi_topo_s *topo;

    CART_ENTER(comm, func_name);
    topo = comm->topo;
    if (rank == NULL || (topo->ndims > 0 && coords == NULL))
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "coords or rank is NULL");
    for (int d = 0; d < topo->ndims; d++) {
        if (!topo->periods[d] && (coords[d] < 0 || coords[d] >= topo->dims[d]))
            return crmpi_mpi_errhandler_invoke(
                comm, MPI_ERR_ARG, func_name,
                "a coordinate is out of range in a non-periodic dimension");
    }
    *rank = crmpi_topo_cart_rank(topo, coords);
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    static const char func_name[] = "MPI_Cart_shift";
    const struct crmpi_topo_s *topo;
    int coords[64], c;

    CART_ENTER(comm, func_name);
    topo = comm->topo;
    if (direction < 0 || direction >= topo->ndims || rank_source == NULL || rank_dest == NULL)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name,
                                           "direction is not a dimension, or an output is NULL");
    if (topo->ndims > 64)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_DIMS, func_name,
                                           "more than 64 dimensions");
    crmpi_topo_cart_coords(topo, comm->rank, coords);
    c = coords[direction];
    coords[direction] = c + disp;
    *rank_dest = crmpi_topo_cart_rank(topo, coords);
    coords[direction] = c - disp;
    *rank_source = crmpi_topo_cart_rank(topo, coords);
    crmpi_unlock();
    return MPI_SUCCESS;
}

/*
 * MPI_Cart_sub (7.5.7): a split whose color is the position in the dropped dimensions and
 * whose key is the position in the kept ones, so each sub-grid is row-major too.
 */
int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    static const char func_name[] = "MPI_Cart_sub";
    const struct crmpi_topo_s *topo;
    int coords[64], dims[64], periods[64];
    int color = 0, key = 0, kept = 0, rc;
    MPI_Comm created;

    CART_ENTER(comm, func_name);
    topo = comm->topo;
    if (newcomm == NULL || (topo->ndims > 0 && remain_dims == NULL))
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name,
                                           "remain_dims or newcomm is NULL");
    if (topo->ndims > 64)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_DIMS, func_name,
                                           "more than 64 dimensions");
    crmpi_topo_cart_coords(topo, comm->rank, coords);
    for (int d = 0; d < topo->ndims; d++) {
        if (remain_dims[d]) {
            key = key * topo->dims[d] + coords[d];
            dims[kept] = topo->dims[d];
            periods[kept] = topo->periods[d];
            kept++;
        } else {
            color = color * topo->dims[d] + coords[d];
        }
    }
    rc = crmpi_comm_split_make(comm, color, key, &created);
    if (rc == CRMPI_OK) {
        rc = cart_attach(created, kept, dims, periods);
        if (rc != CRMPI_OK)
            crmpi_comm_destroy(created);
    }
    if (rc != CRMPI_OK)
        return crmpi_mpi_errhandler_invoke(comm, crmpi_comm_error_class(rc), func_name,
                                           "cannot make the sub-grid communicator");
    *newcomm = created;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    static const char func_name[] = "MPI_Cart_get";
    const struct crmpi_topo_s *topo;

    CART_ENTER(comm, func_name);
    topo = comm->topo;
    if (maxdims < topo->ndims ||
        (topo->ndims > 0 && (dims == NULL || periods == NULL || coords == NULL)))
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name,
                                           "maxdims is too small or an array is NULL");
    for (int d = 0; d < topo->ndims; d++) {
        dims[d] = topo->dims[d];
        periods[d] = topo->periods[d];
    }
    crmpi_topo_cart_coords(topo, comm->rank, coords);
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    static const char func_name[] = "MPI_Cartdim_get";

    CART_ENTER(comm, func_name);
    if (ndims == NULL)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "ndims is NULL");
    *ndims = comm->topo->ndims;
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* MPI_Cart_map (7.5.8): crmpi does not reorder, so a process keeps its rank if the grid has
 * room for it. */
int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    static const char func_name[] = "MPI_Cart_map";
    long cells = 1;

    (void)periods;
    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (!crmpi_mpi_comm_is_valid(comm))
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
    if (ndims < 0 || newrank == NULL || (ndims > 0 && dims == NULL))
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name,
                                           "ndims is negative or an argument is NULL");
    for (int d = 0; d < ndims; d++) {
        if (dims[d] <= 0)
            return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_DIMS, func_name,
                                               "a dimension is not positive");
        cells *= dims[d];
        if (cells > comm->size)
            return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name,
                                               "the grid has more cells than processes");
    }
    *newrank = comm->rank < cells ? comm->rank : MPI_UNDEFINED;
    crmpi_unlock();
    return MPI_SUCCESS;
}
