/*
 * ml_app.c: a fixed amount of work for bench/multilevel. Each rank owns MIB mebibytes and,
 * for STEPS steps, rewrites all of it (a stencil-like sweep) and joins an allreduce of a
 * checksum; rank 0 prints the wall time of the steps and the final checksum, so a run
 * checkpointed any number of times can be compared with one that was not.
 *
 *   mpirun -np N ml_app MIB STEPS
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank;

    MPI_Init(&argc, &argv);
    if (argc < 3) {
        fprintf(stderr, "usage: ml_app MIB STEPS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    size_t words = (size_t)atol(argv[1]) * 1024 * 1024 / sizeof(uint64_t);
    long steps = atol(argv[2]);
    uint64_t *mem = malloc(words * sizeof(uint64_t)), sum = 0, total = 0;
    if (!mem)
        MPI_Abort(MPI_COMM_WORLD, 3);
    for (size_t i = 0; i < words; i++)
        mem[i] = i + (uint64_t)rank;
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (long step = 0; step < steps; step++) {
        uint64_t prev = mem[words - 1];
        for (size_t i = 0; i < words; i++) {
            uint64_t here = mem[i];
            mem[i] = here * 6364136223846793005ull + prev + (uint64_t)step;
            prev = here;
        }
        sum = mem[(size_t)step % words];
        MPI_Allreduce(&sum, &total, 1, MPI_UINT64_T, MPI_BXOR, MPI_COMM_WORLD);
    }
    double seconds = MPI_Wtime() - start;
    if (rank == 0)
        printf("ml_app: %ld steps in %.3f s, checksum %016llx\n", steps, seconds,
               (unsigned long long)total);
    free(mem);
    MPI_Finalize();
    return 0;
}
