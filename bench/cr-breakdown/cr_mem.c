/*
 * cr_mem.c: a rank with MIB mebibytes of its own memory, for bench/cr-breakdown. Each rank
 * fills its memory with a pattern, exchanges a message with its neighbours in a ring now
 * and then, and, once READY_DIR/stop exists, checks every byte and exits (1 on a
 * mismatch; rank 0 looks for the file and tells the others). It creates
 * READY_DIR/ready.<rank> once its memory is written.
 *
 *   mpirun -np N cr_mem MIB READY_DIR
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    char path[4096];

    MPI_Init(&argc, &argv);
    if (argc < 3) {
        fprintf(stderr, "usage: cr_mem MIB READY_DIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t words = (size_t)atol(argv[1]) * 1024 * 1024 / sizeof(uint64_t);
    uint64_t *mem = malloc(words * sizeof(uint64_t));
    if (!mem)
        MPI_Abort(MPI_COMM_WORLD, 3);
    for (size_t i = 0; i < words; i++)
        mem[i] = i * 0x9e3779b97f4a7c15ull + (uint64_t)rank;
    snprintf(path, sizeof(path), "%s/ready.%d", argv[2], rank);
    fclose(fopen(path, "w"));
    snprintf(path, sizeof(path), "%s/stop", argv[2]);
    for (int round = 0;; round++) {
        int next = (rank + 1) % size, prev = (rank + size - 1) % size, got = -1;
        int stop = rank == 0 && access(path, F_OK) == 0;

        /* Rank 0 decides for everyone: a rank that saw the file alone would leave its
         * neighbour waiting for the next round's message. */
        MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (stop)
            break;

        MPI_Sendrecv(&round, 1, MPI_INT, next, 0, &got, 1, MPI_INT, prev, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        bad |= got != round;
        usleep(20000);
    }
    for (size_t i = 0; i < words; i++)
        bad |= mem[i] != i * 0x9e3779b97f4a7c15ull + (uint64_t)rank;
    if (bad)
        fprintf(stderr, "cr_mem: rank %d: memory or messages damaged\n", rank);
    free(mem);
    MPI_Finalize();
    return bad;
}
