/*
 * cr_common.h: what every C/R scenario of test/cr/ shares (docs/design.md, "Tests", in the style
 * of CRIU's zdtm): a program builds a state, says it is ready to be checkpointed, waits
 * until the test lets it go (the checkpoint, and maybe a restart, happen meanwhile), then
 * finishes its communication and checks every byte it received.
 *
 *   CR_READY_DIR  directory where each rank creates ready.<rank> once its state exists
 *   CR_GO         file whose existence lets the ranks go on (created before the launch for
 *                 an uninterrupted run, after the checkpoint or before the restart otherwise)
 *   CR_FAULT, CR_FAULT_RANK
 *                 arm fault points (runtime/fault.h) in one rank only: that rank gets
 *                 CRMPI_FAULT=$CR_FAULT, every other rank none
 *
 * Rank 0 prints one line: "cr NAME np=N checksum=HEX: ok", or "cr NAME np=N: FAIL (...)"
 * with the number of errors; every error is also printed as "FAIL rank R: ...". The
 * checksum covers everything every rank received, in the order it received it, so an
 * interrupted run must print the same line as an uninterrupted one. Exit status 1 on
 * failure.
 */
#ifndef CR_COMMON_H
#define CR_COMMON_H

#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#define CR_EAGER_BYTES 64           /* below every BTL's eager limit */
#define CR_RNDV_BYTES  (256 * 1024) /* above every BTL's eager limit (tcp: 64 KiB) */

static int cr_rank, cr_size, cr_errors;
static uint64_t cr_sum = 1469598103934665603ull; /* FNV-1a over everything received */

/* CR_FAULT armed in rank CR_FAULT_RANK only (after MPI_Init: the rank is known then, and
 * libmpi reads CRMPI_FAULT at its first fault point, which no rank reaches before a
 * checkpoint). */
static inline void cr_fault_setup(void)
{
    const char *fault = getenv("CR_FAULT"), *who = getenv("CR_FAULT_RANK");

    if (!fault)
        return;
    if (who && atoi(who) == cr_rank)
        setenv("CRMPI_FAULT", fault, 1);
    else
        unsetenv("CRMPI_FAULT");
}

static inline void cr_fail(const char *fmt, ...)
{
    va_list ap;

    printf("FAIL rank %d: ", cr_rank);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    cr_errors++;
}

static inline void cr_sum_bytes(const void *data, size_t len)
{
    const unsigned char *p = data;

    for (size_t i = 0; i < len; i++) {
        cr_sum ^= p[i];
        cr_sum *= 1099511628211ull;
    }
}

/* Fill `buf` with bytes determined by (src, dst, tag, index). */
static inline void cr_fill(void *buf, size_t len, int src, int dst, int tag, int index)
{
    unsigned char *p = buf;
    /* In unsigned arithmetic, which wraps: a large index times the prime overflows an int. */
    uint32_t x = (uint32_t)src * 7919u + (uint32_t)dst * 104729u + (uint32_t)tag * 1299709u +
                 (uint32_t)index * 15485863u;

    x |= 1u; /* xorshift never leaves 0 */
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (unsigned char)x;
    }
}

/* Check a received buffer against cr_fill's, and add it to the checksum. */
static inline void cr_check(const void *buf, size_t len, int src, int dst, int tag, int index,
                            const char *what)
{
    unsigned char *want = malloc(len ? len : 1);

    cr_fill(want, len, src, dst, tag, index);
    if (memcmp(want, buf, len) != 0)
        cr_fail("%s: message %d from %d (tag %d, %zu bytes) is damaged", what, index, src, tag,
                len);
    free(want);
    cr_sum_bytes(buf, len);
}

/* ready.<rank> in CR_READY_DIR: this rank's state exists. */
static inline void cr_ready(void)
{
    const char *dir = getenv("CR_READY_DIR");
    char path[4096];
    int fd;

    if (!dir)
        return;
    snprintf(path, sizeof(path), "%s/ready.%d", dir, cr_rank);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0)
        close(fd);
}

static inline int cr_go_now(void)
{
    const char *go = getenv("CR_GO");

    return !go || access(go, F_OK) == 0;
}

/* Sleep until CR_GO exists; no MPI call meanwhile. */
static inline void cr_wait_go(void)
{
    const struct timespec tick = {0, 10 * 1000 * 1000};

    while (!cr_go_now())
        nanosleep(&tick, NULL);
}

static inline void cr_init(int *argc, char ***argv, int thread_level)
{
    int provided;

    if (thread_level == MPI_THREAD_SINGLE)
        MPI_Init(argc, argv);
    else {
        MPI_Init_thread(argc, argv, thread_level, &provided);
        if (provided < thread_level) {
            printf("cr: MPI_Init_thread gave level %d, %d needed\n", provided, thread_level);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &cr_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &cr_size);
    cr_fault_setup();
}

/* Gather every rank's errors and checksum at rank 0, print the line, finalize.
 * @return the exit status */
static inline int cr_finish(const char *name)
{
    uint64_t mine[2] = {(uint64_t)cr_errors, cr_sum};
    int status = 0;

    if (cr_rank == 0) {
        uint64_t total = cr_sum, errors = (uint64_t)cr_errors;

        for (int peer = 1; peer < cr_size; peer++) {
            uint64_t theirs[2];

            MPI_Recv(theirs, 2, MPI_UINT64_T, peer, 999999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            errors += theirs[0];
            total = (total ^ theirs[1]) * 1099511628211ull;
        }
        if (errors)
            printf("cr %s np=%d: FAIL (%llu errors)\n", name, cr_size, (unsigned long long)errors);
        else
            printf("cr %s np=%d checksum=%016llx: ok\n", name, cr_size, (unsigned long long)total);
        fflush(stdout);
        status = errors ? 1 : 0;
    } else {
        MPI_Send(mine, 2, MPI_UINT64_T, 0, 999999, MPI_COMM_WORLD);
        status = cr_errors ? 1 : 0;
    }
    MPI_Finalize();
    return status;
}

#endif /* CR_COMMON_H */
