/*
 * p2p_common.h: the harness of the point-to-point conformance programs in test/p2p/.
 *
 * Each program is a table of subtests, P2P_TEST(name, min_ranks), run in order by
 * p2p_main(). After every subtest the ranks synchronise with point-to-point messages only
 * (collectives are not available to this suite) and add up their failures; rank 0 then
 * prints one line, "ok <name>" or "FAIL <name>: ...", and every rank that saw a failure
 * has printed "FAIL <name>: rank R: <what>" first. A subtest that needs more ranks than
 * the job has prints "skip <name>: needs N ranks". The last line of rank 0 is
 * "summary: N ok, N failed, N skipped"; the exit status is 1 when any subtest failed.
 * test/integration/test_p2p.py reads the table from the source (the P2P_TEST lines) and
 * checks that every subtest said ok.
 *
 * Rules every subtest follows, so that subtests cannot disturb each other:
 * - tags: only TAG(k), 0 <= k < P2P_TAGS_PER_TEST, unique to the subtest; the harness's
 *   own messages use tags above every TAG().
 * - every message sent in a subtest is received in it (a cancelled one is not sent).
 * - the harness's synchronisation sends to a rank other than 0 only from rank 0, and to
 *   rank 0 only after rank 0 asked for it. So a receive with MPI_ANY_SOURCE or
 *   MPI_ANY_TAG that could match a harness message (ANY_TAG from rank 0, or both
 *   wildcards) is allowed on rank 0 only, where no harness message arrives unasked.
 * - with one rank, "the peer" is the rank itself: subtests post their receives before
 *   their blocking sends, or send with non-blocking calls, so that they also run over
 *   the self BTL alone.
 *
 * Data are deterministic byte patterns (p2p_fill, p2p_check) that depend on each byte's
 * position in the message, so a lost, repeated or misplaced fragment shows as a mismatch.
 * A subtest that hangs is ended by an alarm naming it.
 */
#ifndef P2P_COMMON_H
#define P2P_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* nanosleep, alarm (include this header first) */
#endif
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define P2P_TAGS_PER_TEST 100
#define P2P_TAG_QUERY     32001 /* rank 0 -> r: are you done? */
#define P2P_TAG_ANSWER    32002 /* r -> rank 0: done, with this many failures */
#define P2P_TAG_RELEASE   32003 /* rank 0 -> r: total failures; go on */
#define P2P_MAX_REPORTS   5     /* FAIL lines per rank and subtest */
#define P2P_HANG_SECONDS  40    /* a subtest that takes longer is reported as hung */

typedef struct p2p_test {
    const char *name;
    void (*fn)(void);
    int min_ranks;
} p2p_test_t;

/* One table entry, one a line: test_p2p.py reads these lines. */
/* clang-format off */
#define P2P_TEST(fn, min_ranks) {#fn, fn, min_ranks}
/* clang-format on */

static int p2p_rank, p2p_size;
static const char *p2p_name = "(setup)"; /* the running subtest */
static int p2p_failures;                 /* this rank's failed checks in it */
static int p2p_tag_base;
static char p2p_hang_msg[256];

/* The peers of the ring pattern: messages go to NEXT and come from PREV. */
#define NEXT   ((p2p_rank + 1) % p2p_size)
#define PREV   ((p2p_rank + p2p_size - 1) % p2p_size)
#define TAG(k) (p2p_tag_base + (k))

static inline void p2p_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void p2p_fail(const char *fmt, ...)
{
    char what[512];
    va_list args;

    if (p2p_failures++ >= P2P_MAX_REPORTS)
        return;
    va_start(args, fmt);
    vsnprintf(what, sizeof(what), fmt, args);
    va_end(args);
    printf("FAIL %s: rank %d: %s\n", p2p_name, p2p_rank, what);
    fflush(stdout);
}

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond))                                                                               \
            p2p_fail(__VA_ARGS__);                                                                 \
    } while (0)

/* MPI calls return MPI_SUCCESS under the default handler; anything else is a failure. */
#define MPI_OK(call)                                                                               \
    do {                                                                                           \
        int p2p_rc_ = (call);                                                                      \
        if (p2p_rc_ != MPI_SUCCESS)                                                                \
            p2p_fail("%s returned %d (line %d)", #call, p2p_rc_, __LINE__);                        \
    } while (0)

/* The value of byte `i` of the pattern `seed`: every byte position differs. */
static inline unsigned char p2p_byte(uint32_t seed, size_t i)
{
    uint32_t x = (uint32_t)i * 2654435761u + seed * 0x9e3779b9u + (uint32_t)(i >> 32);
    x ^= x >> 15;
    x *= 0x85ebca6bu;
    x ^= x >> 13;
    return (unsigned char)x;
}

/* A seed from up to three small numbers (sender, message, test...). */
static inline uint32_t p2p_seed(uint32_t a, uint32_t b, uint32_t c)
{
    return a * 1000003u + b * 1009u + c + 17u;
}

static inline void p2p_fill(void *buf, size_t n, uint32_t seed)
{
    unsigned char *p = buf;
    for (size_t i = 0; i < n; i++)
        p[i] = p2p_byte(seed, i);
}

/* Compare n bytes with the pattern; report the first mismatch. @return 1 if equal. */
static inline int p2p_check(const void *buf, size_t n, uint32_t seed, const char *what)
{
    const unsigned char *p = buf;
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] != p2p_byte(seed, i) && bad++ == 0)
            first = i;
    }
    if (bad) {
        p2p_fail("%s: %zu of %zu bytes wrong, first at %zu (got 0x%02x, expected 0x%02x)", what,
                 bad, n, first, p[first], p2p_byte(seed, first));
    }
    return bad == 0;
}

/* Bytes that must be left alone (receive buffer beyond the message, gaps of a type). */
static inline int p2p_check_untouched(const void *buf, size_t n, unsigned char value,
                                      const char *what)
{
    const unsigned char *p = buf;
    for (size_t i = 0; i < n; i++) {
        if (p[i] != value) {
            p2p_fail("%s: byte %zu was written (0x%02x, expected 0x%02x)", what, i, p[i], value);
            return 0;
        }
    }
    return 1;
}

static inline void *p2p_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        printf("FAIL %s: rank %d: out of memory (%zu bytes)\n", p2p_name, p2p_rank, n);
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

static inline int p2p_count(const MPI_Status *status, MPI_Datatype type)
{
    int count = -12345;
    MPI_OK(MPI_Get_count(status, type, &count));
    return count;
}

/* The status of a completed receive: source, tag and element count. */
static inline void p2p_check_status(const MPI_Status *status, int source, int tag,
                                    MPI_Datatype type, int count, const char *what)
{
    int got = p2p_count(status, type);
    CHECK(status->MPI_SOURCE == source, "%s: MPI_SOURCE %d, expected %d", what, status->MPI_SOURCE,
          source);
    CHECK(status->MPI_TAG == tag, "%s: MPI_TAG %d, expected %d", what, status->MPI_TAG, tag);
    CHECK(got == count, "%s: MPI_Get_count %d, expected %d", what, got, count);
}

/* MPI-3.1 section 3.7.3: the empty status of a null or inactive request. */
static inline void p2p_check_empty_status(const MPI_Status *status, const char *what)
{
    int count = -1, elements = -1, cancelled = -1;
    MPI_OK(MPI_Get_count(status, MPI_BYTE, &count));
    MPI_OK(MPI_Get_elements(status, MPI_BYTE, &elements));
    MPI_OK(MPI_Test_cancelled(status, &cancelled));
    CHECK(status->MPI_SOURCE == MPI_ANY_SOURCE && status->MPI_TAG == MPI_ANY_TAG && count == 0 &&
              elements == 0 && cancelled == 0,
          "%s: not an empty status (source %d, tag %d, count %d, elements %d, cancelled %d)", what,
          status->MPI_SOURCE, status->MPI_TAG, count, elements, cancelled);
}

/* The status of a receive from MPI_PROC_NULL (MPI-3.1 section 3.11). */
static inline void p2p_check_proc_null_status(const MPI_Status *status, const char *what)
{
    p2p_check_status(status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_BYTE, 0, what);
}

static inline void p2p_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/*
 * A zero-byte message that never waits for its receiver: the send is completed at the end
 * of the subtest (p2p_sync), by which time the receiver has taken it. So a rank may signal
 * itself, and a standard send never relies on buffering.
 */
#define P2P_MAX_SIGNALS 256
static MPI_Request p2p_signals[P2P_MAX_SIGNALS];
static int p2p_num_signals;
static char p2p_signal_byte;

static inline void p2p_signal(int dest, int tag)
{
    if (p2p_num_signals == P2P_MAX_SIGNALS) {
        MPI_OK(MPI_Waitall(p2p_num_signals, p2p_signals, MPI_STATUSES_IGNORE));
        p2p_num_signals = 0;
    }
    MPI_OK(MPI_Isend(&p2p_signal_byte, 0, MPI_BYTE, dest, tag, MPI_COMM_WORLD,
                     &p2p_signals[p2p_num_signals++]));
}

static inline void p2p_wait_signal(int source, int tag)
{
    char dummy;
    MPI_OK(MPI_Recv(&dummy, 0, MPI_BYTE, source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

/* Signal `to` and wait for the signal of `from` (both on `tag`); `to` may be this rank. */
static inline void p2p_handshake(int to, int from, int tag)
{
    char out = 0, in;
    MPI_Request req;
    MPI_OK(MPI_Isend(&out, 0, MPI_BYTE, to, tag, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Recv(&in, 0, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
}

/*
 * Barrier and sum of the ranks' failure counts (p2p_failures), with point-to-point messages
 * only, after completing this rank's signals. Rank 0 asks each rank in turn once it is done
 * itself, then releases them all: no rank ever receives a harness message it did not wait
 * for, except rank 0's questions (see the rules above).
 */
static inline int p2p_sync(void)
{
    int total, mine, value = 0;

    MPI_OK(MPI_Waitall(p2p_num_signals, p2p_signals, MPI_STATUSES_IGNORE));
    p2p_num_signals = 0;
    total = mine = p2p_failures;
    if (p2p_rank == 0) {
        for (int r = 1; r < p2p_size; r++) {
            MPI_Send(&value, 1, MPI_INT, r, P2P_TAG_QUERY, MPI_COMM_WORLD);
            MPI_Recv(&value, 1, MPI_INT, r, P2P_TAG_ANSWER, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            total += value;
        }
        for (int r = 1; r < p2p_size; r++)
            MPI_Send(&total, 1, MPI_INT, r, P2P_TAG_RELEASE, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&value, 1, MPI_INT, 0, P2P_TAG_QUERY, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&mine, 1, MPI_INT, 0, P2P_TAG_ANSWER, MPI_COMM_WORLD);
        MPI_Recv(&total, 1, MPI_INT, 0, P2P_TAG_RELEASE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    return total;
}

static inline void p2p_on_alarm(int sig)
{
    ssize_t ignored = write(STDOUT_FILENO, p2p_hang_msg, strlen(p2p_hang_msg));
    (void)ignored;
    (void)sig;
    _exit(3);
}

/* `prog NAME...` runs only the subtests named, `prog ^NAME...` all but those. */
static inline int p2p_selected(int argc, char **argv, const char *name)
{
    int any_named = 0, named = 0;
    for (int a = 1; a < argc; a++) {
        if (argv[a][0] == '^') {
            if (strcmp(argv[a] + 1, name) == 0)
                return 0;
        } else {
            any_named = 1;
            named = named || strcmp(argv[a], name) == 0;
        }
    }
    return !any_named || named;
}

/*
 * Run the table, or the part of it the command line selects (p2p_selected).
 * @return the exit status: 0 when every subtest that ran passed.
 */
static inline int p2p_main(int argc, char **argv, const p2p_test_t *tests, size_t num_tests)
{
    int passed = 0, failed = 0, skipped = 0;

    setvbuf(stdout, NULL, _IOLBF, 0);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &p2p_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p2p_size);
    signal(SIGALRM, p2p_on_alarm);

    for (size_t i = 0; i < num_tests; i++) {
        const p2p_test_t *t = &tests[i];
        if (!p2p_selected(argc, argv, t->name))
            continue;
        if (p2p_size < t->min_ranks) {
            if (p2p_rank == 0)
                printf("skip %s: needs %d ranks\n", t->name, t->min_ranks);
            skipped++;
            continue;
        }
        p2p_name = t->name;
        p2p_failures = 0;
        p2p_tag_base = (int)(i + 1) * P2P_TAGS_PER_TEST;
        snprintf(p2p_hang_msg, sizeof(p2p_hang_msg),
                 "FAIL %s: rank %d: hung (not done after %d s)\n", t->name, p2p_rank,
                 P2P_HANG_SECONDS);
        alarm(P2P_HANG_SECONDS);
        t->fn();
        int total = p2p_sync();
        alarm(0);
        if (total == 0) {
            passed++;
            if (p2p_rank == 0)
                printf("ok %s\n", t->name);
        } else {
            failed++;
            if (p2p_rank == 0)
                printf("FAIL %s: %d failed check(s) over all ranks\n", t->name, total);
        }
    }
    if (p2p_rank == 0)
        printf("summary: %d ok, %d failed, %d skipped\n", passed, failed, skipped);
    fflush(stdout);
    MPI_Finalize();
    return failed ? 1 : 0;
}

#define P2P_MAIN(table)                                                                            \
    int main(int argc, char **argv)                                                                \
    {                                                                                              \
        return p2p_main(argc, argv, table, sizeof(table) / sizeof(table[0]));                      \
    }

#endif /* P2P_COMMON_H */
