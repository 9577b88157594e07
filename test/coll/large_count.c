/*
 * large_count.c: the large-count ("_c") forms of every collective (MPI-4.0 sections 6 and
 * 8.6), each blocking, non-blocking and persistent.
 *
 * Each _c call, in each of its three forms, must give what the int form gives on the same
 * data (the int forms are checked against computed values by collectives.c). Then what
 * only the _c forms can express:
 *   - displacements beyond INT_MAX: the v and w collectives place blocks more than 2 GiB
 *     into a buffer (a MAP_NORESERVE mapping, so only the pages touched cost memory), and
 *     the blocks must land there and nowhere else;
 *   - counts beyond INT_MAX: 3e9 elements of a type of size 0 move no data, and a count
 *     cut to 32 bits would be negative, an error.
 *
 * Where mpi.h has no MPI-4.0 calls (MPI_COMM_TYPE_HW_GUIDED undefined: Open MPI 4.1), the
 * program checks nothing and ends. Harness: test/comm/comm_common.h;
 * test/integration/test_coll.py runs it.
 */
#include "../comm/comm_common.h"

#include <limits.h>
#include <sys/mman.h>

#ifdef MPI_COMM_TYPE_HW_GUIDED

#define N         4                            /* elements per block */
#define MAX_RANKS 16                           /* arrays are sized for this many */
#define FAR       (((MPI_Aint)1 << 31) + 4096) /* a byte displacement past INT_MAX */

typedef enum { M_BLOCKING, M_NONBLOCKING, M_PERSISTENT, M_COUNT } mode_t_;

static const char *mode_names[M_COUNT] = {"blocking", "non-blocking", "persistent"};
static MPI_Request req;

/* Call the _c form `fb`, `fi` (MPI_I..._c) or `fp` (..._init_c) in `mode`, then complete it. */
#define COLL3(mode, fb, fi, fp, ...)                                                               \
    finish((mode), #fb,                                                                            \
           (mode) == M_BLOCKING      ? fb(__VA_ARGS__)                                             \
           : (mode) == M_NONBLOCKING ? fi(__VA_ARGS__, &req)                                       \
                                     : fp(__VA_ARGS__, MPI_INFO_NULL, &req))

static void finish(mode_t_ mode, const char *name, int rc)
{
    CHECK(rc == MPI_SUCCESS, "%s (%s) returned %d", name, mode_names[mode], rc);
    if (rc != MPI_SUCCESS || mode == M_BLOCKING)
        return;
    if (mode == M_PERSISTENT)
        MPI_Start(&req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (mode == M_PERSISTENT)
        MPI_Request_free(&req);
}

/* The int-form result `want` and the _c-form result `got`, n ints, must be equal. */
static void same(const char *what, mode_t_ mode, const int *want, const int *got, int n)
{
    for (int i = 0; i < n; i++) {
        if (want[i] != got[i]) {
            CHECK(0, "%s (%s): [%d] = %d, the int form gave %d", what, mode_names[mode], i, got[i],
                  want[i]);
            return;
        }
    }
    CHECK(1, "%s", what);
}

static void fill(int *buf, int n, int seed)
{
    for (int i = 0; i < n; i++)
        buf[i] = seed * 1000 + i;
}

static void clear(int *buf, int n)
{
    for (int i = 0; i < n; i++)
        buf[i] = -1;
}

/* Bcast, the reductions and the fixed-size gathers, scatters and alltoall. */
static void check_fixed(void)
{
    int p = comm_size, root = comm_size - 1;
    int in[N * MAX_RANKS], want[N * MAX_RANKS], got[N * MAX_RANKS];
    MPI_Count counts[MAX_RANKS];
    int icounts[MAX_RANKS];

    for (int r = 0; r < p; r++)
        icounts[r] = (int)(counts[r] = r % 3 + 1);
    for (mode_t_ m = 0; m < M_COUNT; m++) {
        comm_begin("bcast");
        fill(want, N, comm_rank == root ? 7 : 0);
        MPI_Bcast(want, N, MPI_INT, root, MPI_COMM_WORLD);
        fill(got, N, comm_rank == root ? 7 : 0);
        COLL3(m, MPI_Bcast_c, MPI_Ibcast_c, MPI_Bcast_init_c, got, N, MPI_INT, root,
              MPI_COMM_WORLD);
        same("bcast", m, want, got, N);

        comm_begin("reductions");
        fill(in, N * p, comm_rank);
        clear(want, N);
        clear(got, N);
        MPI_Reduce(in, want, N, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
        COLL3(m, MPI_Reduce_c, MPI_Ireduce_c, MPI_Reduce_init_c, in, got, N, MPI_INT, MPI_SUM, root,
              MPI_COMM_WORLD);
        same("reduce", m, want, got, N);
        MPI_Allreduce(in, want, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        COLL3(m, MPI_Allreduce_c, MPI_Iallreduce_c, MPI_Allreduce_init_c, in, got, N, MPI_INT,
              MPI_MAX, MPI_COMM_WORLD);
        same("allreduce", m, want, got, N);
        MPI_Scan(in, want, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        COLL3(m, MPI_Scan_c, MPI_Iscan_c, MPI_Scan_init_c, in, got, N, MPI_INT, MPI_SUM,
              MPI_COMM_WORLD);
        same("scan", m, want, got, N);
        clear(want, N);
        clear(got, N);
        MPI_Exscan(in, want, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        COLL3(m, MPI_Exscan_c, MPI_Iexscan_c, MPI_Exscan_init_c, in, got, N, MPI_INT, MPI_SUM,
              MPI_COMM_WORLD);
        if (comm_rank > 0) /* rank 0's Exscan result is undefined */
            same("exscan", m, want, got, N);
        MPI_Reduce_scatter_block(in, want, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        COLL3(m, MPI_Reduce_scatter_block_c, MPI_Ireduce_scatter_block_c,
              MPI_Reduce_scatter_block_init_c, in, got, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        same("reduce_scatter_block", m, want, got, N);
        MPI_Reduce_scatter(in, want, icounts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        COLL3(m, MPI_Reduce_scatter_c, MPI_Ireduce_scatter_c, MPI_Reduce_scatter_init_c, in, got,
              counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        same("reduce_scatter", m, want, got, icounts[comm_rank]);

        comm_begin("gathers");
        fill(in, N * p, comm_rank + 1);
        clear(want, N * p);
        clear(got, N * p);
        MPI_Gather(in, N, MPI_INT, want, N, MPI_INT, root, MPI_COMM_WORLD);
        COLL3(m, MPI_Gather_c, MPI_Igather_c, MPI_Gather_init_c, in, N, MPI_INT, got, N, MPI_INT,
              root, MPI_COMM_WORLD);
        same("gather", m, want, got, N * p);
        MPI_Scatter(in, N, MPI_INT, want, N, MPI_INT, root, MPI_COMM_WORLD);
        COLL3(m, MPI_Scatter_c, MPI_Iscatter_c, MPI_Scatter_init_c, in, N, MPI_INT, got, N, MPI_INT,
              root, MPI_COMM_WORLD);
        same("scatter", m, want, got, N);
        MPI_Allgather(in, N, MPI_INT, want, N, MPI_INT, MPI_COMM_WORLD);
        COLL3(m, MPI_Allgather_c, MPI_Iallgather_c, MPI_Allgather_init_c, in, N, MPI_INT, got, N,
              MPI_INT, MPI_COMM_WORLD);
        same("allgather", m, want, got, N * p);
        MPI_Alltoall(in, N, MPI_INT, want, N, MPI_INT, MPI_COMM_WORLD);
        COLL3(m, MPI_Alltoall_c, MPI_Ialltoall_c, MPI_Alltoall_init_c, in, N, MPI_INT, got, N,
              MPI_INT, MPI_COMM_WORLD);
        same("alltoall", m, want, got, N * p);
    }
}

/* The v and w forms with int-sized values: per-rank counts r % 3 + 1, blocks N apart. */
static void check_vector(void)
{
    int p = comm_size, root = 0;
    int in[N * MAX_RANKS], want[N * MAX_RANKS], got[N * MAX_RANKS];
    int icounts[MAX_RANKS], idispls[MAX_RANKS], ibytes[MAX_RANKS];
    MPI_Count counts[MAX_RANKS];
    MPI_Aint displs[MAX_RANKS], bytes[MAX_RANKS];
    MPI_Datatype types[MAX_RANKS];
    int mine = comm_rank % 3 + 1;

    for (int r = 0; r < p; r++) {
        icounts[r] = (int)(counts[r] = r % 3 + 1);
        idispls[r] = (int)(displs[r] = N * r);
        ibytes[r] = (int)(bytes[r] = (MPI_Aint)sizeof(int) * N * r);
        types[r] = MPI_INT;
    }
    fill(in, N * p, comm_rank + 2);
    for (mode_t_ m = 0; m < M_COUNT; m++) {
        comm_begin("v and w");
        clear(want, N * p);
        clear(got, N * p);
        MPI_Gatherv(in, mine, MPI_INT, want, icounts, idispls, MPI_INT, root, MPI_COMM_WORLD);
        COLL3(m, MPI_Gatherv_c, MPI_Igatherv_c, MPI_Gatherv_init_c, in, mine, MPI_INT, got, counts,
              displs, MPI_INT, root, MPI_COMM_WORLD);
        same("gatherv", m, want, got, N * p);
        MPI_Scatterv(in, icounts, idispls, MPI_INT, want, mine, MPI_INT, root, MPI_COMM_WORLD);
        COLL3(m, MPI_Scatterv_c, MPI_Iscatterv_c, MPI_Scatterv_init_c, in, counts, displs, MPI_INT,
              got, mine, MPI_INT, root, MPI_COMM_WORLD);
        same("scatterv", m, want, got, mine);
        MPI_Allgatherv(in, mine, MPI_INT, want, icounts, idispls, MPI_INT, MPI_COMM_WORLD);
        COLL3(m, MPI_Allgatherv_c, MPI_Iallgatherv_c, MPI_Allgatherv_init_c, in, mine, MPI_INT, got,
              counts, displs, MPI_INT, MPI_COMM_WORLD);
        same("allgatherv", m, want, got, N * p);
        /* Each rank sends (its rank % 3 + 1) elements to every rank: rank r's blocks
         * hold r % 3 + 1 elements at every receiver. */
        MPI_Count scounts[MAX_RANKS];
        int iscounts[MAX_RANKS];
        for (int r = 0; r < p; r++)
            iscounts[r] = (int)(scounts[r] = mine);
        clear(want, N * p);
        MPI_Alltoallv(in, iscounts, idispls, MPI_INT, want, icounts, idispls, MPI_INT,
                      MPI_COMM_WORLD);
        clear(got, N * p);
        COLL3(m, MPI_Alltoallv_c, MPI_Ialltoallv_c, MPI_Alltoallv_init_c, in, scounts, displs,
              MPI_INT, got, counts, displs, MPI_INT, MPI_COMM_WORLD);
        same("alltoallv", m, want, got, N * p);
        clear(want, N * p);
        MPI_Alltoallw(in, iscounts, ibytes, types, want, icounts, ibytes, types, MPI_COMM_WORLD);
        clear(got, N * p);
        COLL3(m, MPI_Alltoallw_c, MPI_Ialltoallw_c, MPI_Alltoallw_init_c, in, scounts, bytes, types,
              got, counts, bytes, types, MPI_COMM_WORLD);
        same("alltoallw", m, want, got, N * p);
    }
}

/* The neighbourhood collectives on a periodic ring (in- and out-neighbours: -1, then +1). */
static void check_neighbor(void)
{
    int dims[1] = {comm_size}, periods[1] = {1};
    int in[2 * N], want[2 * N], got[2 * N];
    int icounts[2] = {N, N}, idispls[2] = {0, N};
    MPI_Count counts[2] = {N, N};
    MPI_Aint displs[2] = {0, N}, bytes[2] = {0, N * sizeof(int)};
    MPI_Datatype types[2] = {MPI_INT, MPI_INT};
    MPI_Comm ring;

    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    fill(in, 2 * N, comm_rank + 3);
    for (mode_t_ m = 0; m < M_COUNT; m++) {
        comm_begin("neighbourhood");
        clear(want, 2 * N);
        clear(got, 2 * N);
        MPI_Neighbor_allgather(in, N, MPI_INT, want, N, MPI_INT, ring);
        COLL3(m, MPI_Neighbor_allgather_c, MPI_Ineighbor_allgather_c, MPI_Neighbor_allgather_init_c,
              in, N, MPI_INT, got, N, MPI_INT, ring);
        same("neighbor_allgather", m, want, got, 2 * N);
        MPI_Neighbor_allgatherv(in, N, MPI_INT, want, icounts, idispls, MPI_INT, ring);
        COLL3(m, MPI_Neighbor_allgatherv_c, MPI_Ineighbor_allgatherv_c,
              MPI_Neighbor_allgatherv_init_c, in, N, MPI_INT, got, counts, displs, MPI_INT, ring);
        same("neighbor_allgatherv", m, want, got, 2 * N);
        MPI_Neighbor_alltoall(in, N, MPI_INT, want, N, MPI_INT, ring);
        COLL3(m, MPI_Neighbor_alltoall_c, MPI_Ineighbor_alltoall_c, MPI_Neighbor_alltoall_init_c,
              in, N, MPI_INT, got, N, MPI_INT, ring);
        same("neighbor_alltoall", m, want, got, 2 * N);
        MPI_Neighbor_alltoallv(in, icounts, idispls, MPI_INT, want, icounts, idispls, MPI_INT,
                               ring);
        COLL3(m, MPI_Neighbor_alltoallv_c, MPI_Ineighbor_alltoallv_c, MPI_Neighbor_alltoallv_init_c,
              in, counts, displs, MPI_INT, got, counts, displs, MPI_INT, ring);
        same("neighbor_alltoallv", m, want, got, 2 * N);
        MPI_Neighbor_alltoallw(in, icounts, bytes, types, want, icounts, bytes, types, ring);
        COLL3(m, MPI_Neighbor_alltoallw_c, MPI_Ineighbor_alltoallw_c, MPI_Neighbor_alltoallw_init_c,
              in, counts, bytes, types, got, counts, bytes, types, ring);
        same("neighbor_alltoallw", m, want, got, 2 * N);
    }
    MPI_Comm_free(&ring);
}

/* Byte r * 16 + i past FAR in `far` must hold rank r's byte i (8 bytes per rank), and
 * nothing before FAR may have been written. */
static void check_far_blocks(const char *what, const unsigned char *far, int nranks)
{
    int bad = 0;

    for (int r = 0; r < nranks && !bad; r++)
        for (int i = 0; i < 8; i++)
            bad |= far[FAR + r * 16 + i] != (unsigned char)(r * 8 + i + 1);
    CHECK(!bad, "%s: the blocks are not at their displacements past INT_MAX", what);
    CHECK(far[0] == 0 && far[FAR - 1] == 0, "%s: bytes before the displacement were written", what);
}

/* Displacements past INT_MAX in the v and w forms. */
static void check_far_displacements(void)
{
    size_t len = (size_t)FAR + 16 * (size_t)comm_size + 4096;
    unsigned char *far =
        mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    unsigned char mine[8], back[8];
    MPI_Count counts[MAX_RANKS];
    MPI_Aint displs[MAX_RANKS], zero[MAX_RANKS];
    MPI_Datatype types[MAX_RANKS];
    MPI_Comm ring;
    int dims[1] = {comm_size}, periods[1] = {1};

    comm_begin("displacements past INT_MAX");
    CHECK(far != MAP_FAILED, "cannot map %zu bytes (MAP_NORESERVE)", len);
    if (far == MAP_FAILED)
        return;
    for (int i = 0; i < 8; i++)
        mine[i] = (unsigned char)(comm_rank * 8 + i + 1);
    for (int r = 0; r < MAX_RANKS; r++) { /* the ring below has 2 neighbours at 1 rank */
        counts[r] = 8;
        displs[r] = FAR + r * 16;
        zero[r] = 0;
        types[r] = MPI_BYTE;
    }
    MPI_Allgatherv_c(mine, 8, MPI_BYTE, far, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
    check_far_blocks("allgatherv_c", far, comm_size);

    /* Scatterv from the far blocks: each rank gets its own 8 bytes back. */
    MPI_Scatterv_c(far, counts, displs, MPI_BYTE, back, 8, MPI_BYTE, 0, MPI_COMM_WORLD);
    CHECK(memcmp(back, mine, 8) == 0, "scatterv_c from displacements past INT_MAX");

    /* Alltoallw: everyone sends its 8 bytes (displacement 0) to all, received far. */
    memset(far + FAR, 0, 16 * (size_t)comm_size);
    MPI_Alltoallw_c(mine, counts, zero, types, far, counts, displs, types, MPI_COMM_WORLD);
    check_far_blocks("alltoallw_c", far, comm_size);

    /* Neighbor_alltoallw on a ring: the blocks of -1 and +1 land far, at 0 and 16. */
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    memset(far + FAR, 0, 32);
    MPI_Neighbor_alltoallw_c(mine, counts, zero, types, far, counts, displs, types, ring);
    int left = (comm_rank - 1 + comm_size) % comm_size, right = (comm_rank + 1) % comm_size;
    CHECK(far[FAR] == (unsigned char)(left * 8 + 1) &&
              far[FAR + 16] == (unsigned char)(right * 8 + 1),
          "neighbor_alltoallw_c: got %d and %d from past INT_MAX", far[FAR], far[FAR + 16]);
    MPI_Comm_free(&ring);
    munmap(far, len);
}

/* Counts past INT_MAX: 3e9 elements of a type of size 0 are no data, and no error. */
static void check_far_counts(void)
{
    const MPI_Count huge = 3000000000LL;
    MPI_Count counts[MAX_RANKS];
    MPI_Aint displs[MAX_RANKS];
    MPI_Datatype empty;
    int buf[1] = {0};
    int rc;

    comm_begin("counts past INT_MAX");
    MPI_Type_contiguous(0, MPI_INT, &empty);
    MPI_Type_commit(&empty);
    for (int r = 0; r < comm_size; r++) {
        counts[r] = huge;
        displs[r] = 0;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Bcast_c(buf, huge, empty, 0, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "bcast_c of %lld empty elements returned %d", huge, rc);
    rc = MPI_Alltoallv_c(buf, counts, displs, empty, buf, counts, displs, empty, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "alltoallv_c of %lld empty elements each returned %d", huge, rc);
    rc = MPI_Allgatherv_c(buf, huge, empty, buf, counts, displs, empty, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "allgatherv_c of %lld empty elements each returned %d", huge, rc);
    /* And a negative count is still refused. */
    counts[0] = -1;
    rc = MPI_Alltoallv_c(buf, counts, displs, empty, buf, counts, displs, empty, MPI_COMM_WORLD);
    CHECK(rc != MPI_SUCCESS, "alltoallv_c with a negative count succeeded");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Type_free(&empty);
}

int main(int argc, char **argv)
{
    comm_init(&argc, &argv, "large_count");
    if (comm_size > MAX_RANKS) {
        printf("large_count: at most %d ranks\n", MAX_RANKS);
        return 1;
    }
    check_fixed();
    check_vector();
    check_neighbor();
    check_far_displacements();
    check_far_counts();
    return comm_finish();
}

#else

int main(int argc, char **argv)
{
    comm_init(&argc, &argv, "large_count");
    return comm_finish();
}

#endif
