/*
 * persistent.c: MPI-4.0's persistent collectives (section 6.13): MPI_Barrier_init,
 * Bcast_init, Reduce_init, Allreduce_init, Gather_init, Scatterv_init, Allgather_init,
 * Alltoallv_init, Reduce_scatter_block_init, Scan_init and Exscan_init, each made once and
 * started three times with new data in the same buffers (MPI_Start, then MPI_Wait or
 * MPI_Test until done), several at once with MPI_Startall and MPI_Waitall, interleaved
 * with non-persistent collectives on the same communicator, and freed inactive or while
 * running (MPI_Request_free of a started one: it completes, then goes).
 *
 * Where mpi.h has no MPI-4.0 calls (MPI_COMM_TYPE_HW_GUIDED undefined: Open MPI 4.1), the
 * program checks nothing and ends. Harness: test/comm/comm_common.h.
 */
#include "../comm/comm_common.h"

#ifdef MPI_COMM_TYPE_HW_GUIDED

#define N 4

/* A start, then completion with MPI_Test (round 1) or MPI_Wait (rounds 0 and 2). */
static void start_and_complete(MPI_Request *req, int round)
{
    int flag = 0;

    MPI_Start(req);
    if (round == 1) {
        while (!flag)
            MPI_Test(req, &flag, MPI_STATUS_IGNORE);
    } else {
        MPI_Wait(req, MPI_STATUS_IGNORE);
    }
    CHECK(*req != MPI_REQUEST_NULL, "a persistent request was freed by its completion");
}

static void check_rooted(void)
{
    int root = comm_size - 1;
    int value[N], sum[N], gathered[N * 64], scattered[N], counts[64], displs[64];
    MPI_Request bcast, reduce, gather, scatterv, barrier;

    comm_begin("rooted");
    MPI_Bcast_init(value, N, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &bcast);
    MPI_Reduce_init(value, sum, N, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &reduce);
    MPI_Gather_init(value, N, MPI_INT, gathered, N, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL,
                    &gather);
    for (int r = 0; r < comm_size; r++) {
        counts[r] = r % N + 1;
        displs[r] = r * N;
    }
    MPI_Scatterv_init(gathered, counts, displs, MPI_INT, scattered, comm_rank % N + 1, MPI_INT,
                      root, MPI_COMM_WORLD, MPI_INFO_NULL, &scatterv);
    MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &barrier);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++)
            value[i] = comm_rank == root ? round * 100 + i : -1;
        start_and_complete(&bcast, round);
        for (int i = 0; i < N; i++)
            CHECK(value[i] == round * 100 + i, "bcast round %d: [%d] = %d", round, i, value[i]);
        /* A non-persistent collective between two starts takes its own tag. */
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < N; i++)
            value[i] = comm_rank + round + i;
        start_and_complete(&reduce, round);
        if (comm_rank == 0) {
            for (int i = 0; i < N; i++) {
                int want = comm_size * (comm_size - 1) / 2 + comm_size * (round + i);
                CHECK(sum[i] == want, "reduce round %d: [%d] = %d, expected %d", round, i, sum[i],
                      want);
            }
        }
        start_and_complete(&gather, round);
        if (comm_rank == root) {
            for (int r = 0; r < comm_size; r++)
                for (int i = 0; i < N; i++)
                    CHECK(gathered[r * N + i] == r + round + i, "gather round %d: rank %d [%d]",
                          round, r, i);
        }
        start_and_complete(&scatterv, round);
        for (int i = 0; i <= comm_rank % N; i++)
            CHECK(scattered[i] == comm_rank + round + i, "scatterv round %d: [%d] = %d", round, i,
                  scattered[i]);
        start_and_complete(&barrier, round);
    }
    MPI_Request_free(&bcast);
    MPI_Request_free(&reduce);
    MPI_Request_free(&gather);
    MPI_Request_free(&scatterv);
    MPI_Request_free(&barrier);
    CHECK(bcast == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
}

/* Several at once: MPI_Startall, MPI_Waitall. */
static void check_startall(void)
{
    int mine[N] = {0}, all[N], gathered[N * 64], to[64], from[64], counts[64], displs[64];
    /* Static: the freed reduce_scatter_block may complete after this function returns. */
    static int block[N], contrib[64 * N];
    int prefix[N], before[N];
    MPI_Request reqs[5];

    comm_begin("startall");
    MPI_Allreduce_init(mine, all, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[0]);
    MPI_Allgather_init(mine, N, MPI_INT, gathered, N, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL,
                       &reqs[1]);
    for (int r = 0; r < comm_size; r++) {
        counts[r] = 1;
        displs[r] = r;
    }
    MPI_Alltoallv_init(to, counts, displs, MPI_INT, from, counts, displs, MPI_INT, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &reqs[2]);
    MPI_Scan_init(mine, prefix, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[3]);
    MPI_Exscan_init(mine, before, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[4]);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++)
            mine[i] = comm_rank * 10 + round + i;
        for (int r = 0; r < comm_size; r++)
            to[r] = comm_rank * 1000 + r * 10 + round;
        MPI_Startall(5, reqs);
        MPI_Waitall(5, reqs, MPI_STATUSES_IGNORE);
        for (int i = 0; i < N; i++) {
            CHECK(all[i] == (comm_size - 1) * 10 + round + i, "allreduce round %d [%d] = %d", round,
                  i, all[i]);
            int want_prefix = 10 * comm_rank * (comm_rank + 1) / 2 + (comm_rank + 1) * (round + i);
            CHECK(prefix[i] == want_prefix, "scan round %d [%d] = %d, expected %d", round, i,
                  prefix[i], want_prefix);
            if (comm_rank > 0)
                CHECK(before[i] == want_prefix - mine[i], "exscan round %d [%d] = %d", round, i,
                      before[i]);
        }
        for (int r = 0; r < comm_size; r++) {
            CHECK(gathered[r * N] == r * 10 + round, "allgather round %d rank %d", round, r);
            CHECK(from[r] == r * 1000 + comm_rank * 10 + round, "alltoallv round %d from %d = %d",
                  round, r, from[r]);
        }
    }
    for (int k = 0; k < 5; k++)
        MPI_Request_free(&reqs[k]);

    /* Reduce_scatter_block, freed while running: it completes, then goes. */
    MPI_Request rsb;
    for (int r = 0; r < comm_size; r++)
        for (int i = 0; i < N; i++)
            contrib[r * N + i] = r + i;
    MPI_Reduce_scatter_block_init(contrib, block, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                  MPI_INFO_NULL, &rsb);
    MPI_Start(&rsb);
    MPI_Request_free(&rsb);
    /* Another collective completes only after every rank's part of the freed one. */
    MPI_Barrier(MPI_COMM_WORLD);
    int total = 0;
    MPI_Allreduce(&comm_rank, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(total == comm_size * (comm_size - 1) / 2, "allreduce after a freed start: %d", total);
}

int main(int argc, char **argv)
{
    comm_init(&argc, &argv, "persistent");
    if (comm_size > 64) {
        printf("persistent: at most 64 ranks\n");
        return 1;
    }
    check_rooted();
    check_startall();
    return comm_finish();
}

#else

int main(int argc, char **argv)
{
    comm_init(&argc, &argv, "persistent");
    return comm_finish();
}

#endif
