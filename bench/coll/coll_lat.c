/*
 * coll_lat.c: latency of MPI_Allreduce, MPI_Bcast and MPI_Alltoall for message sizes from
 * 8 B to 1 MiB (per rank; Alltoall: per pair), compiled with each implementation's mpicc by
 * run.sh. Prints one line per (collective, size): "coll BYTES USEC", USEC being the
 * median over REPS of the slowest rank's time per call (each repetition starts after a
 * barrier, and its time is the maximum over ranks).
 *
 *   coll_lat [MAX_BYTES]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPS 9

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Iterations for a size: enough to time small messages, few for large ones. */
static int iterations(size_t bytes)
{
    return bytes <= 1024 ? 200 : bytes <= 65536 ? 50 : 10;
}

int main(int argc, char **argv)
{
    int rank, size;
    size_t max_bytes = argc > 1 ? (size_t)atol(argv[1]) : (size_t)1 << 20;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *a = malloc(max_bytes * (size_t)size), *b = malloc(max_bytes * (size_t)size);
    memset(a, 1, max_bytes * (size_t)size);
    memset(b, 0, max_bytes * (size_t)size);
    const char *names[3] = {"allreduce", "bcast", "alltoall"};
    for (int c = 0; c < 3; c++) {
        /* 8 B, x4 each step, and the largest size itself. */
        for (size_t bytes = 8; bytes <= max_bytes;
             bytes = bytes * 4 > max_bytes && bytes < max_bytes ? max_bytes : bytes * 4) {
            int iters = iterations(bytes), count = (int)(bytes / sizeof(double));
            double times[REPS];

            for (int rep = 0; rep < REPS; rep++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t = MPI_Wtime();
                for (int i = 0; i < iters; i++) {
                    if (c == 0)
                        MPI_Allreduce(a, b, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                    else if (c == 1)
                        MPI_Bcast(a, count, MPI_DOUBLE, i % size, MPI_COMM_WORLD);
                    else
                        MPI_Alltoall(a, count, MPI_DOUBLE, b, count, MPI_DOUBLE, MPI_COMM_WORLD);
                }
                t = (MPI_Wtime() - t) / iters;
                MPI_Allreduce(&t, &times[rep], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            }
            qsort(times, REPS, sizeof(double), cmp_double);
            if (rank == 0)
                printf("%s %zu %.2f\n", names[c], bytes, times[REPS / 2] * 1e6);
        }
    }
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
