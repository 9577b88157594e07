/*
 * nb_order.c: a non-blocking collective started before a blocking one on some ranks and
 * after it on the others, as a library does that starts its collectives from progress
 * (ROMIO's non-blocking collective I/O starts each phase's from its requests' poll
 * functions, which run inside whatever MPI call a rank is in). crmpi keeps the messages
 * of the two kinds apart, as MPICH does, so each gets its own data: even ranks start
 * MPI_Ibcast of 4 ints, then MPI_Bcast of 1; odd ranks the other way round. The same
 * with MPI_Iallreduce and MPI_Allreduce of different counts.
 *
 *   mpirun -np N nb_order       prints "done nb_order: rank R: C checks, F failed"
 */
#include <mpi.h>
#include <stdio.h>

static int checks, failed;

static void check(int rank, const char *what, int got, int want)
{
    checks++;
    if (got != want) {
        failed++;
        printf("FAIL nb_order: rank %d: %s is %d, not %d\n", rank, what, got, want);
    }
}

int main(int argc, char **argv)
{
    int rank, size;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int round = 0; round < 20; round++) {
        int big[4] = {0}, small = 0, sum4[4], one = rank + 1, total = 0;
        int mine[4] = {rank, rank, rank, rank};
        MPI_Request req[2];

        if (rank == 0) {
            for (int i = 0; i < 4; i++)
                big[i] = 100 * round + i;
            small = -round;
        }
        if (rank % 2 == 0) {
            MPI_Ibcast(big, 4, MPI_INT, 0, MPI_COMM_WORLD, &req[0]);
            MPI_Iallreduce(mine, sum4, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[1]);
            MPI_Bcast(&small, 1, MPI_INT, 0, MPI_COMM_WORLD);
            MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        } else {
            MPI_Bcast(&small, 1, MPI_INT, 0, MPI_COMM_WORLD);
            MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            MPI_Ibcast(big, 4, MPI_INT, 0, MPI_COMM_WORLD, &req[0]);
            MPI_Iallreduce(mine, sum4, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[1]);
        }
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 4; i++) {
            check(rank, "an MPI_Ibcast element", big[i], 100 * round + i);
            check(rank, "an MPI_Iallreduce element", sum4[i], size * (size - 1) / 2);
        }
        check(rank, "the MPI_Bcast value", small, -round);
        check(rank, "the MPI_Allreduce value", total, size * (size + 1) / 2);
    }
    printf("done nb_order: rank %d: %d checks, %d failed\n", rank, checks, failed);
    MPI_Finalize();
    return failed != 0;
}
