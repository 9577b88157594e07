/*
 * inc_mem.c: a rank with MIB mebibytes of its own memory that rewrites PERCENT of its pages
 * in each step, for bench/incremental. The driver runs the steps and checkpoints between
 * them:
 *
 *   DIR/go.<k>      (driver) step k may run
 *   DIR/done.<k>.<rank> (rank) step k is over; its first line is the step's rewrite time
 *                   in seconds, which shows what the dirty-page tracking costs the writes
 *   DIR/stop        (driver) check every byte and exit (1 on a mismatch)
 *
 * Step k writes the value k into the first 8 bytes of each chosen page: the pages are
 * spread evenly over the area (every (100 / PERCENT)-th page), the same ones each step.
 * Ranks exchange a message in a ring after each step, so that a checkpoint finds MPI
 * traffic too.
 *
 *   mpirun -np N inc_mem MIB PERCENT DIR
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define INC_PAGE 4096

static double inc_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Wait for DIR/name to exist; rank 0 looks and tells the others. @return 1: it does. */
static int inc_wait_file(const char *dir, const char *name, const char *or_name)
{
    char path[4096], other[4096];
    int state = 0;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    snprintf(other, sizeof(other), "%s/%s", dir, or_name);
    for (;;) {
        int rank;

        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0)
            state = access(path, F_OK) == 0 ? 1 : access(other, F_OK) == 0 ? 2 : 0;
        MPI_Bcast(&state, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (state)
            return state == 1;
        usleep(2000);
    }
}

int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    char path[4096], name[64];

    MPI_Init(&argc, &argv);
    if (argc < 4) {
        fprintf(stderr, "usage: inc_mem MIB PERCENT DIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t pages = (size_t)atol(argv[1]) * 1024 * 1024 / INC_PAGE;
    long percent = atol(argv[2]);
    size_t stride = percent > 0 && percent <= 100 ? (size_t)(100 / percent) : 1;
    uint8_t *mem = aligned_alloc(INC_PAGE, pages * INC_PAGE);
    if (!mem)
        MPI_Abort(MPI_COMM_WORLD, 3);
    for (size_t i = 0; i < pages * INC_PAGE; i++)
        mem[i] = (uint8_t)(i * 131u + (unsigned)rank);
    uint64_t last = 0;
    for (uint64_t step = 1;; step++) {
        snprintf(name, sizeof(name), "go.%llu", (unsigned long long)step);
        if (!inc_wait_file(argv[3], name, "stop"))
            break;
        double start = inc_now();
        for (size_t page = 0; page < pages; page += stride)
            memcpy(mem + page * INC_PAGE, &step, sizeof(step));
        double seconds = inc_now() - start;
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        uint64_t got = 0;
        MPI_Sendrecv(&step, 1, MPI_UINT64_T, next, 0, &got, 1, MPI_UINT64_T, prev, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad |= got != step;
        last = step;
        snprintf(path, sizeof(path), "%s/done.%llu.%d", argv[3], (unsigned long long)step, rank);
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "%.6f\n", seconds);
            fclose(f);
        }
    }
    for (size_t page = 0; page < pages; page++) {
        for (size_t off = 0; off < INC_PAGE; off++) {
            size_t i = page * INC_PAGE + off;
            uint8_t want = (uint8_t)(i * 131u + (unsigned)rank);
            if (page % stride == 0 && last && off < sizeof(last))
                want = ((uint8_t *)&last)[off];
            bad |= mem[i] != want;
        }
    }
    if (bad)
        fprintf(stderr, "inc_mem: rank %d: memory or messages damaged\n", rank);
    free(mem);
    MPI_Finalize();
    return bad;
}
