/*
 * triad.c: a memory-bound, multi-threaded MPI rank for bench/affinity/run.sh. Each rank runs
 * THREADS threads; thread t pins itself to the t-th CPU of the rank's mask (the binding
 * mpirun gave it) and first-touches its own slice of three arrays, so its pages sit on its
 * CPU's NUMA node. An iteration is PASSES STREAM triads (a = b + s * c) by every thread,
 * timed across all ranks (the slowest rank's time), followed by the sum of the CPU
 * migrations of every thread of every rank since the start (/proc/self/task/N/sched,
 * nr_migrations).
 *
 *   triad MIB_PER_THREAD THREADS PASSES READY_FILE STOP_FILE
 *
 * Rank 0 prints "iter K ms T migrations M" per iteration, creates READY_FILE after 10
 * iterations, and all ranks stop after the iteration in which rank 0 saw STOP_FILE. The
 * program makes no C/R call: it is checkpointed and restarted from outside, and its
 * threads keep the binding it gave them only if the restart restores it. With TRIAD_THP=1
 * in its environment the arrays ask for transparent huge pages (MADV_HUGEPAGE).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

typedef struct triad_thread {
    pthread_t thread;  /* the worker */
    int index;         /* 0..threads-1 */
    int cpu;           /* the CPU it pins itself to, or -1 */
    size_t count;      /* doubles in each of its arrays */
    double *a, *b, *c; /* its slices, first-touched by itself */
} triad_thread_t;

static pthread_barrier_t triad_start, triad_done;
static int triad_passes, triad_stop;

static void triad_pass(triad_thread_t *t)
{
    const double scalar = 3.0;
    for (size_t i = 0; i < t->count; i++)
        t->a[i] = t->b[i] + scalar * t->c[i];
}

/* An array; in transparent huge pages asked for with MADV_HUGEPAGE when TRIAD_THP is set
 * (as an application tuned for TLB reach does). */
static double *triad_alloc(size_t count)
{
    const size_t huge = (size_t)2 << 20;
    size_t bytes = (count * sizeof(double) + huge - 1) & ~(huge - 1);
    const char *thp = getenv("TRIAD_THP");
    double *array;

    if (!thp || !*thp || *thp == '0')
        return malloc(count * sizeof(double));
    if (!(array = aligned_alloc(huge, bytes)))
        return NULL;
    madvise(array, bytes, MADV_HUGEPAGE);
    return array;
}

static void *triad_worker(void *arg)
{
    triad_thread_t *t = arg;

    if (t->cpu >= 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(t->cpu, &one);
        pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
    }
    /* First touch, by the thread that computes on it, where it runs. */
    t->a = triad_alloc(t->count);
    t->b = triad_alloc(t->count);
    t->c = triad_alloc(t->count);
    if (!t->a || !t->b || !t->c)
        abort();
    for (size_t i = 0; i < t->count; i++) {
        t->a[i] = 0.0;
        t->b[i] = 1.0;
        t->c[i] = 2.0;
    }
    for (;;) {
        pthread_barrier_wait(&triad_start);
        if (__atomic_load_n(&triad_stop, __ATOMIC_ACQUIRE))
            break;
        for (int p = 0; p < triad_passes; p++)
            triad_pass(t);
        pthread_barrier_wait(&triad_done);
    }
    return NULL;
}

/* Migrations of every thread of this process since it started. */
static long triad_migrations(void)
{
    DIR *dir = opendir("/proc/self/task");
    struct dirent *entry;
    long total = 0;

    while (dir && (entry = readdir(dir)) != NULL) {
        char path[300], line[256];
        FILE *f;

        if (entry->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/self/task/%s/sched", entry->d_name);
        if (!(f = fopen(path, "r")))
            continue;
        while (fgets(line, sizeof(line), f)) {
            long value;
            if (sscanf(line, "se.nr_migrations : %ld", &value) == 1 ||
                sscanf(line, "nr_migrations : %ld", &value) == 1)
                total += value;
        }
        fclose(f);
    }
    if (dir)
        closedir(dir);
    return total;
}

static double triad_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    int rank, threads, cpus[CPU_SETSIZE], num_cpus = 0;
    cpu_set_t mask;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 6) {
        if (rank == 0)
            fprintf(stderr, "usage: triad MIB_PER_THREAD THREADS PASSES READY_FILE STOP_FILE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t mib = strtoul(argv[1], NULL, 10);
    threads = atoi(argv[2]);
    triad_passes = atoi(argv[3]);
    const char *ready_file = argv[4], *stop_file = argv[5];
    sched_getaffinity(0, sizeof(mask), &mask);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &mask))
            cpus[num_cpus++] = cpu;

    triad_thread_t *team = calloc((size_t)threads, sizeof(*team));
    pthread_barrier_init(&triad_start, NULL, (unsigned)threads + 1);
    pthread_barrier_init(&triad_done, NULL, (unsigned)threads + 1);
    for (int t = 0; t < threads; t++) {
        team[t].index = t;
        team[t].cpu = num_cpus ? cpus[t % num_cpus] : -1;
        team[t].count = mib * 1024 * 1024 / 3 / sizeof(double);
        pthread_create(&team[t].thread, NULL, triad_worker, &team[t]);
    }
    for (int iter = 0;; iter++) {
        double start = triad_now(), mine, slowest;
        long migrations = triad_migrations(), all_migrations = 0;
        int stop = 0;

        pthread_barrier_wait(&triad_start);
        pthread_barrier_wait(&triad_done);
        mine = triad_now() - start;
        MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(&migrations, &all_migrations, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            printf("iter %d ms %.3f migrations %ld\n", iter, slowest * 1e3, all_migrations);
            fflush(stdout);
            if (iter == 10) {
                int fd = open(ready_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                if (fd >= 0)
                    close(fd);
            }
            stop = access(stop_file, F_OK) == 0;
        }
        MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (stop)
            break;
    }
    __atomic_store_n(&triad_stop, 1, __ATOMIC_RELEASE);
    pthread_barrier_wait(&triad_start);
    for (int t = 0; t < threads; t++)
        pthread_join(team[t].thread, NULL);
    MPI_Finalize();
    return 0;
}
