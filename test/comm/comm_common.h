/*
 * comm_common.h: the harness of the communicator programs in test/comm/.
 *
 * A program calls CHECK(cond, fmt, ...) for each thing it verifies; a failed check prints
 * one line, "FAIL <program>: rank R: <what>", on stdout. comm_finish() prints
 * "done <program>: rank R: N checks, M failed" and returns the exit status (1 when a check
 * failed). test/integration/test_comm.py runs each program at several rank counts and
 * wants exit status 0, no FAIL line and one done line per rank.
 *
 * Collectives are not used (they are another layer's, and may not be there): ranks
 * synchronise with comm_barrier(), a dissemination barrier on point-to-point messages.
 * An alarm ends a program that hangs, naming the step it was in.
 */
#ifndef COMM_COMMON_H
#define COMM_COMMON_H

#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define COMM_HANG_SECONDS 60
#define COMM_TAG_BARRIER  32700 /* the harness's own messages; programs use lower tags */

static const char *comm_program = "?";
static const char *comm_step = "(setup)";
static int comm_rank, comm_size, comm_checks, comm_failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        comm_checks++;                                                                             \
        if (!(cond)) {                                                                             \
            comm_failures++;                                                                       \
            printf("FAIL %s: rank %d: %s: ", comm_program, comm_rank, comm_step);                  \
            printf(__VA_ARGS__);                                                                   \
            printf(" (line %d)\n", __LINE__);                                                      \
            fflush(stdout);                                                                        \
        }                                                                                          \
    } while (0)

static void comm_on_alarm(int sig)
{
    char msg[256];
    int n = snprintf(msg, sizeof(msg), "FAIL %s: rank %d: %s: hung for %d s\n", comm_program,
                     comm_rank, comm_step, COMM_HANG_SECONDS);
    (void)sig;
    if (write(1, msg, (size_t)n) < 0) {
        /* nothing to do */
    }
    _exit(2);
}

__attribute__((unused)) static void comm_init(int *argc, char ***argv, const char *program)
{
    comm_program = program;
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &comm_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &comm_size);
    signal(SIGALRM, comm_on_alarm);
    alarm(COMM_HANG_SECONDS);
}

/* Name the step being run (for FAIL and hang lines). */
static void comm_begin(const char *step)
{
    comm_step = step;
}

/* A dissemination barrier over comm with point-to-point messages only. */
static void comm_barrier_on(MPI_Comm comm)
{
    int rank, size, token = 0;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int dist = 1; dist < size; dist *= 2) {
        MPI_Sendrecv(&token, 1, MPI_INT, (rank + dist) % size, COMM_TAG_BARRIER, &token, 1, MPI_INT,
                     (rank - dist + size) % size, COMM_TAG_BARRIER, comm, MPI_STATUS_IGNORE);
    }
}

static void comm_barrier(void)
{
    comm_barrier_on(MPI_COMM_WORLD);
}

/* The sum of `value` over comm (point-to-point: everyone sends to everyone). */
__attribute__((unused)) static long comm_sum_on(MPI_Comm comm, long value)
{
    int rank, size;
    long total = value, got;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int peer = 0; peer < size; peer++) {
        if (peer == rank)
            continue;
        MPI_Sendrecv(&value, 1, MPI_LONG, peer, COMM_TAG_BARRIER - 1, &got, 1, MPI_LONG, peer,
                     COMM_TAG_BARRIER - 1, comm, MPI_STATUS_IGNORE);
        total += got;
    }
    return total;
}

__attribute__((unused)) static int comm_finish(void)
{
    comm_step = "(finalize)";
    comm_barrier();
    MPI_Finalize();
    printf("done %s: rank %d: %d checks, %d failed\n", comm_program, comm_rank, comm_checks,
           comm_failures);
    return comm_failures ? 1 : 0;
}

#endif /* COMM_COMMON_H */
