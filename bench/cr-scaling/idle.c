/*
 * idle.c: an idle job for bench/cr-scaling. Each rank exchanges one message with both its
 * ring neighbours and joins a barrier (so that its transports hold connections, as a real
 * job's do), creates READY_DIR/ready.<rank>, then sleeps in a loop, looking every
 * POLL_MS milliseconds for READY_DIR/stop (and calling MPI_Iprobe, for progress); when that
 * file is there it joins a last barrier and exits. Sleeping rather than waiting in MPI
 * keeps 128 ranks on two cores idle.
 *
 *   mpirun -np N idle READY_DIR [POLL_MS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, got = -1;
    char path[4096];

    MPI_Init(&argc, &argv);
    if (argc < 2) {
        fprintf(stderr, "usage: idle READY_DIR [POLL_MS]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int poll_ms = argc > 2 ? atoi(argv[2]) : 100;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT,
                 (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + size - 1) % size, 1, &got, 1, MPI_INT,
                 (rank + 1) % size, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    snprintf(path, sizeof(path), "%s/ready.%d", argv[1], rank);
    FILE *ready = fopen(path, "w");
    if (!ready) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    fclose(ready);
    snprintf(path, sizeof(path), "%s/stop", argv[1]);
    while (access(path, F_OK) != 0) {
        int flag;

        /* A rank can leave a barrier with its last message still queued in a transport (a
         * tcp connection still being made): only a call into MPI moves it on, and its peers
         * wait for it until then. */
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        usleep((useconds_t)poll_ms * 1000);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("idle: %d ranks done\n", size);
    MPI_Finalize();
    return 0;
}
