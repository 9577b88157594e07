/*
 * mpi_job.c: one MPI program, many behaviours, for the launcher's integration tests.
 *
 *   mpi_job info              print this rank's facts (one line), finalize
 *   mpi_job exit R C          rank R exits with C after MPI_Finalize, others with 0
 *   mpi_job abort R C         rank R calls MPI_Abort(C); the others wait in MPI_Finalize
 *   mpi_job crash R           rank R dies of SIGSEGV; the others wait in MPI_Finalize
 *   mpi_job wait              print "ready", then sleep until a signal comes; report it
 *   mpi_job modex             publish, fence, look up every peer's value, check it
 *
 * Compiled with the installed mpicc by test_launch.py; modex mode also reaches the
 * runtime's rank-side API (rte.h), which libmpi exports for tests and tools.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rte.h"

static volatile sig_atomic_t caught;

static void on_signal(int sig)
{
    caught = sig;
}

static int mode_info(int rank, int size)
{
    char name[MPI_MAX_PROCESSOR_NAME], ns[64] = "?", cpus[256] = "";
    int len;
    cpu_set_t set;
    MPI_Get_processor_name(name, &len);
    ssize_t n = readlink("/proc/self/ns/pid", ns, sizeof(ns) - 1);
    ns[n > 0 ? n : 0] = '\0';
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        size_t off = 0;
        for (int cpu = 0; cpu < CPU_SETSIZE && off + 8 < sizeof(cpus); cpu++) {
            if (CPU_ISSET(cpu, &set)) {
                off +=
                    (size_t)snprintf(cpus + off, sizeof(cpus) - off, "%s%d", off ? "," : "", cpu);
            }
        }
    }
    double t0 = MPI_Wtime();
    printf("rank=%d size=%d pid=%d ppid=%d ns=%s host=%s cpus=%s wtime_ok=%d env_FOO=%s\n", rank,
           size, (int)getpid(), (int)getppid(), ns, name, cpus,
           MPI_Wtime() >= t0 && MPI_Wtick() > 0.0, getenv("FOO") ? getenv("FOO") : "");
    return 0;
}

static int mode_modex(int rank, int size)
{
    char value[64];
    snprintf(value, sizeof(value), "value-of-rank-%d", rank);
    if (crmpi_rte_modex_publish("test.key", value, strlen(value) + 1) != 0 ||
        crmpi_rte_fence(1) != 0) {
        fprintf(stderr, "rank %d: publish/fence failed\n", rank);
        return 1;
    }
    for (int peer = 0; peer < size; peer++) {
        void *data = NULL;
        size_t len = 0;
        char expected[64];
        snprintf(expected, sizeof(expected), "value-of-rank-%d", peer);
        if (crmpi_rte_modex_lookup((uint32_t)peer, "test.key", &data, &len) != 0 ||
            len != strlen(expected) + 1 || memcmp(data, expected, len) != 0) {
            fprintf(stderr, "rank %d: wrong modex value from rank %d\n", rank, peer);
            return 1;
        }
        free(data);
    }
    void *data = NULL;
    size_t len;
    if (crmpi_rte_modex_lookup(0, "test.never-published", &data, &len) == 0) {
        fprintf(stderr, "rank %d: found a key nobody published\n", rank);
        return 1;
    }
    printf("rank %d: modex ok (%d peers)\n", rank, size);
    return 0;
}

int main(int argc, char **argv)
{
    int rank, size, rc = 0;
    const char *mode = argc > 1 ? argv[1] : "info";
    int who = argc > 2 ? atoi(argv[2]) : 0;
    int code = argc > 3 ? atoi(argv[3]) : 0;

    if (strcmp(mode, "wait") == 0) {
        signal(SIGTERM, on_signal);
        signal(SIGINT, on_signal);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (strcmp(mode, "info") == 0) {
        rc = mode_info(rank, size);
    } else if (strcmp(mode, "exit") == 0) {
        rc = rank == who ? code : 0;
    } else if (strcmp(mode, "abort") == 0) {
        if (rank == who) {
            MPI_Abort(MPI_COMM_WORLD, code);
        }
    } else if (strcmp(mode, "crash") == 0) {
        if (rank == who) {
            signal(SIGSEGV, SIG_DFL);
            raise(SIGSEGV);
        }
    } else if (strcmp(mode, "wait") == 0) {
        printf("rank %d ready\n", rank);
        fflush(stdout);
        while (!caught) {
            pause();
        }
        printf("rank %d caught signal %d\n", rank, (int)caught);
        fflush(stdout);
        return 100 + (int)caught;
    } else if (strcmp(mode, "modex") == 0) {
        rc = mode_modex(rank, size);
    } else {
        fprintf(stderr, "mpi_job: unknown mode %s\n", mode);
        rc = 2;
    }
    fflush(stdout);
    MPI_Finalize();
    return rc;
}
