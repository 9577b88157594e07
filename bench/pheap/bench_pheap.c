/*
 * bench_pheap.c: the persistent heap's costs (libcrmpi-pheap), printed as two tables.
 *
 *   1. The allocator: an allocation-heavy loop (free a random slot of a working set,
 *      allocate a block of a random size there, touch it) with glibc's malloc/free and with
 *      perm_malloc/perm_free; nanoseconds per free+malloc pair, best of the rounds.
 *   2. Checkpoint time for 16 and 256 MiB of data in 1 MiB blocks: backup() (which always
 *      fsyncs) against a hand-written fwrite() of the same blocks to one file, without and
 *      with fsync; median of the rounds, and the size of each file.
 *
 * Build: make -C build bench/pheap/bench_pheap (or, against an installation:
 *        mpicc -O2 bench_pheap.c -o bench_pheap -lcrmpi-pheap)
 * Run:   build/bench/pheap/bench_pheap [-d DIR] [-H HEAPDIR] [-r ROUNDS] [-n OPS]
 *        DIR holds the files written (default: the current directory); it should be on
 *        the file system checkpoints would go to. HEAPDIR holds the heap file (default:
 *        DIR); /dev/shm keeps the kernel from writing the heap's pages back to a disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <crmpi/pheap.h>

/* Live blocks of the allocation loop. */
#define BENCH_SLOTS (1 << 15)
/* Block size of the checkpointed data. */
#define BENCH_BLOCK ((size_t)1 << 20)

static double bench_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A small deterministic generator, the same sequence for both allocators. */
static uint64_t bench_rand_state;
static uint32_t bench_rand(void)
{
    bench_rand_state = bench_rand_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(bench_rand_state >> 33);
}

/* Mostly small blocks (16..1024 bytes), one in 64 larger (up to 64 KiB). */
static size_t bench_size(void)
{
    uint32_t r = bench_rand();

    return (r & 63) == 0 ? 1024 + (r >> 8) % (63 * 1024) : 16 + (r >> 8) % 1009;
}

/* `ops` free+malloc pairs over the working set; seconds taken. */
static double bench_alloc_loop(void *(*alloc)(size_t), void (*release)(void *), long ops)
{
    static void *slots[BENCH_SLOTS];
    double start;

    bench_rand_state = 42;
    memset(slots, 0, sizeof(slots));
    start = bench_now();
    for (long i = 0; i < ops; i++) {
        uint32_t slot = bench_rand() % BENCH_SLOTS;
        size_t size = bench_size();

        release(slots[slot]);
        slots[slot] = alloc(size);
        if (!slots[slot]) {
            fprintf(stderr, "bench_pheap: allocation of %zu bytes failed\n", size);
            exit(1);
        }
        ((volatile char *)slots[slot])[0] = (char)i;
        ((volatile char *)slots[slot])[size - 1] = (char)i;
    }
    for (uint32_t s = 0; s < BENCH_SLOTS; s++)
        release(slots[s]);
    return bench_now() - start;
}

static int bench_compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), bench_compare_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Write the blocks to `path` with stdio, as a hand-written checkpoint would. */
static double bench_fwrite(const char *path, char **blocks, size_t nblocks, int do_fsync)
{
    double start = bench_now();
    FILE *f = fopen(path, "w");

    if (!f) {
        fprintf(stderr, "bench_pheap: %s: %s\n", path, strerror(errno));
        exit(1);
    }
    for (size_t i = 0; i < nblocks; i++)
        if (fwrite(blocks[i], 1, BENCH_BLOCK, f) != BENCH_BLOCK) {
            fprintf(stderr, "bench_pheap: %s: %s\n", path, strerror(errno));
            exit(1);
        }
    if (fflush(f) != 0 || (do_fsync && fsync(fileno(f)) != 0) || fclose(f) != 0) {
        fprintf(stderr, "bench_pheap: %s: %s\n", path, strerror(errno));
        exit(1);
    }
    return bench_now() - start;
}

static long long bench_file_size(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

int main(int argc, char **argv)
{
    const char *dir = ".", *heap_dir = NULL;
    int rounds = 3, opt;
    long ops = 4000000;
    char heap[4096], back[4096], manual[4096];
    static const size_t data_mib[] = {16, 256};

    while ((opt = getopt(argc, argv, "d:H:r:n:")) != -1) {
        switch (opt) {
        case 'd': dir = optarg; break;
        case 'H': heap_dir = optarg; break;
        case 'r': rounds = atoi(optarg); break;
        case 'n': ops = atol(optarg); break;
        default:
            fprintf(stderr, "usage: %s [-d DIR] [-H HEAPDIR] [-r ROUNDS] [-n OPS]\n", argv[0]);
            return 2;
        }
    }
    if (rounds < 1 || rounds > 99 || ops < 1) {
        fprintf(stderr, "bench_pheap: -r takes 1..99 rounds, -n a positive count\n");
        return 2;
    }
    snprintf(heap, sizeof(heap), "%s/bench_pheap.mmap", heap_dir ? heap_dir : dir);
    snprintf(back, sizeof(back), "%s/bench_pheap.back", dir);
    snprintf(manual, sizeof(manual), "%s/bench_pheap.fwrite", dir);
    if (perm(PERM_START, PERM_SIZE) != 0 || mopen(heap, "w+", (size_t)1 << 30) != 0 ||
        bopen(back, "w+") != 0)
        return 1;

    /* 1. The allocator. */
    double best_glibc = 1e30, best_perm = 1e30;
    for (int r = 0; r < rounds; r++) {
        double t = bench_alloc_loop(malloc, free, ops);

        best_glibc = t < best_glibc ? t : best_glibc;
        t = bench_alloc_loop(perm_malloc, perm_free, ops);
        best_perm = t < best_perm ? t : best_perm;
    }
    printf("allocation loop: %ld free+malloc pairs, %d live blocks of 16 B..64 KiB, best of %d\n",
           ops, BENCH_SLOTS, rounds);
    printf("%-22s %12s %10s\n", "allocator", "ns per pair", "relative");
    printf("%-22s %12.1f %10.2f\n", "glibc malloc/free", best_glibc * 1e9 / (double)ops, 1.0);
    printf("%-22s %12.1f %10.2f\n\n", "perm_malloc/perm_free", best_perm * 1e9 / (double)ops,
           best_perm / best_glibc);

    /* 2. Checkpoints. */
    printf("checkpoint of N MiB in 1 MiB blocks, heap in %s, files to %s, median of %d\n",
           heap_dir ? heap_dir : dir, dir, rounds);
    printf("%-8s %-24s %10s %10s %12s\n", "data", "method", "seconds", "MiB/s", "file MiB");
    for (size_t d = 0; d < sizeof(data_mib) / sizeof(data_mib[0]); d++) {
        size_t nblocks = data_mib[d];
        char **blocks = calloc(nblocks, sizeof(char *));
        double t_backup[99], t_fwrite[99], t_fsync[99];

        for (size_t i = 0; i < nblocks; i++) {
            blocks[i] = perm_malloc(BENCH_BLOCK);
            if (!blocks[i])
                return 1;
            for (size_t j = 0; j < BENCH_BLOCK; j += 64)
                blocks[i][j] = (char)(i + j);
        }
        for (int r = 0; r < rounds; r++) {
            double start = bench_now();

            if (backup() != 0)
                return 1;
            t_backup[r] = bench_now() - start;
            t_fwrite[r] = bench_fwrite(manual, blocks, nblocks, 0);
            t_fsync[r] = bench_fwrite(manual, blocks, nblocks, 1);
        }
        struct {
            const char *name;
            double seconds;
            long long bytes;
        } rows[] = {
            {"backup() (fsync)", bench_median(t_backup, rounds), bench_file_size(back)},
            {"fwrite", bench_median(t_fwrite, rounds), bench_file_size(manual)},
            {"fwrite + fsync", bench_median(t_fsync, rounds), bench_file_size(manual)},
        };
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
            printf("%-8s %-24s %10.3f %10.0f %12.1f\n", d == 0 ? "16 MiB" : "256 MiB", rows[i].name,
                   rows[i].seconds, (double)nblocks / rows[i].seconds,
                   (double)rows[i].bytes / (1 << 20));
        for (size_t i = 0; i < nblocks; i++)
            perm_free(blocks[i]);
        free(blocks);
    }
    bclose();
    mclose();
    unlink(heap);
    unlink(back);
    unlink(manual);
    return 0;
}
