/*
 * coll_common.h: the harness of the collective conformance programs in test/coll/.
 *
 * Each program checks itself: every failed check prints one line "FAIL rank R: <what>"
 * (at most COLL_MAX_REPORTS per rank, the rest counted), and the program exits 1 when any
 * check failed on this rank. Rank 0 prints "ok <program>: N checks" when its checks all
 * passed. test/integration/test_coll.py runs the programs under mpirun and reads that.
 *
 * Buffers are typed (coll_kind_t): MPI_INT, MPI_DOUBLE, or a vector of ints with a gap
 * (2 ints at 0 and 2, stride 3 ints) whose gaps must never be written. Values are a
 * deterministic function of a seed and the position, so misplaced or lost data shows.
 */
#ifndef COLL_COMMON_H
#define COLL_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define COLL_MAX_REPORTS 20
#define COLL_GAP         0x5a5a5a5a /* the content of a vector type's gap */

static int coll_rank, coll_size;
static int coll_thread_level; /* what MPI_Init_thread provided */
static long coll_checks, coll_failures;

__attribute__((format(printf, 1, 2))) static void coll_fail(const char *fmt, ...)
{
    va_list args;

    if (coll_failures++ < COLL_MAX_REPORTS) {
        printf("FAIL rank %d: ", coll_rank);
        va_start(args, fmt);
        vprintf(fmt, args);
        va_end(args);
        printf("\n");
        fflush(stdout);
    }
}

#define COLL_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        coll_checks++;                                                                             \
        if (!(cond))                                                                               \
            coll_fail(__VA_ARGS__);                                                                \
    } while (0)

/* MPI calls must succeed (with the default MPI_ERRORS_ARE_FATAL a failure ends the job). */
#define COLL_MPI(call)                                                                             \
    do {                                                                                           \
        int coll_rc_ = (call);                                                                     \
        COLL_CHECK(coll_rc_ == MPI_SUCCESS, "%s returned %d (line %d)", #call, coll_rc_,           \
                   __LINE__);                                                                      \
    } while (0)

typedef enum { KIND_INT, KIND_DOUBLE, KIND_VEC, KIND_COUNT } coll_kind_t;
static const char *const coll_kind_names[KIND_COUNT] = {"int", "double", "vec"};
static MPI_Datatype coll_types[KIND_COUNT];

/* Bytes of one element's extent. */
static size_t coll_extent(coll_kind_t kind)
{
    return kind == KIND_INT ? sizeof(int) : kind == KIND_DOUBLE ? sizeof(double) : 3 * sizeof(int);
}

/* The value at data position p of a buffer made with `seed`. */
static long coll_value(int seed, size_t p)
{
    return (long)seed * 100003L + (long)(p % 1000003);
}

/* A buffer of `count` elements, filled with gaps and junk. */
static void *coll_alloc(coll_kind_t kind, size_t count)
{
    size_t bytes = coll_extent(kind) * count + sizeof(double);
    int *buf = malloc(bytes);

    for (size_t i = 0; i < bytes / sizeof(int); i++)
        buf[i] = kind == KIND_VEC ? COLL_GAP : -1;
    return buf;
}

static void coll_fill(coll_kind_t kind, void *buf, size_t count, int seed)
{
    for (size_t e = 0; e < count; e++) {
        switch (kind) {
        case KIND_INT: ((int *)buf)[e] = (int)coll_value(seed, e); break;
        case KIND_DOUBLE: ((double *)buf)[e] = (double)coll_value(seed, e); break;
        default:
            ((int *)buf)[3 * e] = (int)coll_value(seed, 2 * e);
            ((int *)buf)[3 * e + 2] = (int)coll_value(seed, 2 * e + 1);
            break;
        }
    }
}

/* Data position p of element e's k-th value: read as a long. */
static long coll_get(coll_kind_t kind, const void *buf, size_t e, int k)
{
    switch (kind) {
    case KIND_INT: return ((const int *)buf)[e];
    case KIND_DOUBLE: return (long)((const double *)buf)[e];
    default: return ((const int *)buf)[3 * e + 2 * k];
    }
}

/* Check `count` elements against seed; gaps of vectors untouched. @return 1 if ok. */
static int coll_verify(coll_kind_t kind, const void *buf, size_t count, int seed, const char *what)
{
    int per = kind == KIND_VEC ? 2 : 1;

    for (size_t e = 0; e < count; e++) {
        for (int k = 0; k < per; k++) {
            long got = coll_get(kind, buf, e, k), want = coll_value(seed, e * per + k);
            if (got != want) {
                coll_fail("%s (%s): element %zu: got %ld, want %ld (seed %d)", what,
                          coll_kind_names[kind], e, got, want, seed);
                coll_checks++;
                return 0;
            }
        }
        if (kind == KIND_VEC && ((const int *)buf)[3 * e + 1] != COLL_GAP) {
            coll_fail("%s (vec): the gap of element %zu was written", what, e);
            coll_checks++;
            return 0;
        }
    }
    coll_checks++;
    return 1;
}

static void coll_alarm(int sig)
{
    static const char msg[] = "FAIL: the program hung (alarm)\n";
    (void)sig;
    if (write(1, msg, sizeof(msg) - 1) < 0) {
    }
    _exit(2);
}

static void coll_init(int *argc, char ***argv, unsigned hang_seconds)
{
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &coll_thread_level);
    MPI_Comm_rank(MPI_COMM_WORLD, &coll_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &coll_size);
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGALRM, coll_alarm);
    alarm(hang_seconds);
    coll_types[KIND_INT] = MPI_INT;
    coll_types[KIND_DOUBLE] = MPI_DOUBLE;
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, 3 * sizeof(int), &coll_types[KIND_VEC]);
    MPI_Type_commit(&coll_types[KIND_VEC]);
    MPI_Type_free(&vec);
}

static int coll_finish(const char *program)
{
    MPI_Type_free(&coll_types[KIND_VEC]);
    if (coll_failures > COLL_MAX_REPORTS)
        printf("FAIL rank %d: %ld more failures not shown\n", coll_rank,
               coll_failures - COLL_MAX_REPORTS);
    if (coll_failures == 0 && coll_rank == 0)
        printf("ok %s: %ld checks on rank 0, %d ranks\n", program, coll_checks, coll_size);
    MPI_Finalize();
    return coll_failures ? 1 : 0;
}

#endif /* COLL_COMMON_H */
