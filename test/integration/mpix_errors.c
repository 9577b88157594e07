/*
 * mpix_errors.c: MPIX_Checkpoint's errors go through the communicator's error handler, for
 * test_mpix.py. With MPI_ERRORS_RETURN on MPI_COMM_WORLD and MPI_COMM_SELF, each rank
 * checks the code it gets back:
 *   1. MPI_COMM_SELF of a 2-rank job: MPI_ERR_COMM (the job's checkpoint needs every rank);
 *   2. rank 1 without a backup file: MPI_ERR_ARG there, MPI_ERR_OTHER on rank 0;
 *   3. every rank ready: MPI_SUCCESS, sequence 1.
 * Each rank prints "rank R: <what went wrong>" for a wrong code; rank 0 prints "errors ok"
 * when every rank got what it should.
 */
#include <mpi.h>
#include <mpi-ext.h>
#include <stdio.h>
#include <stdlib.h>

#include <crmpi/pheap.h>

static int rank, failures;

static void expect(const char *what, int got, int want)
{
    if (got != want) {
        printf("rank %d: %s returned %d, not %d\n", rank, what, got, want);
        failures++;
    }
}

static void open_heap(void)
{
    char heap[4096], back[4096];
    const char *dir = getenv("MPIX_DIR");

    snprintf(heap, sizeof(heap), "%s/heap.%d", dir ? dir : ".", rank);
    snprintf(back, sizeof(back), "%s/back.%d", dir ? dir : ".", rank);
    if (mopen(heap, "w+", (size_t)1 << 22) != 0 || bopen(back, "w+") != 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    MPIX_Checkpoint_info info = {0};
    int all = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    expect("MPIX_Checkpoint(MPI_COMM_SELF)", MPIX_Checkpoint(MPI_COMM_SELF, &info), MPI_ERR_COMM);

    if (rank == 0)
        open_heap();
    expect("MPIX_Checkpoint without rank 1's backup file", MPIX_Checkpoint(MPI_COMM_WORLD, &info),
           rank == 1 ? MPI_ERR_ARG : MPI_ERR_OTHER);

    if (rank == 1)
        open_heap();
    expect("MPIX_Checkpoint", MPIX_Checkpoint(MPI_COMM_WORLD, &info), MPI_SUCCESS);
    expect("its sequence", info.sequence, 1);

    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf("errors ok\n");
    bclose();
    mclose();
    MPI_Finalize();
    return 0;
}
