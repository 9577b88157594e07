/*
 * test_btl_ucx.c: the ucx BTL (btl-adapters/ucx) between forked "ranks" of one machine, over
 * UCX's tcp and its shared memory, with the file-based rte (fake_rte.h).
 *
 * Each test forks its ranks; a rank runs a scenario and exits 0 when every check passed
 * (cmocka's assertions cannot cross fork, so ranks use RANK_CHECK, which prints the failed
 * condition on the test's stderr and exits 1). An alarm bounds every rank, so a deadlock
 * fails the test instead of hanging it. Ranks wait for each other only in
 * test_barrier_progress, which progresses the module while it waits: a peer's last
 * fragments, wireup or close may need this rank's progress (a barrier that does not progress
 * UCX hangs both sides).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "btl.h"
#include "component.h"
#include "convertor.h"
#include "crmpi_status.h"
#include "fake_rte.h"
#include "place_check.h"
#include "log.h"
#include "param.h"
#include "ucx/btl_ucx.h"

extern const crmpi_component_t crmpi_btl_ucx_component;

/* btl_base.c's component table names every BTL; this test links only ucx and never opens
 * the framework's other components, so they are inert stand-ins with their descriptors. */
extern const crmpi_component_info_t crmpi_btl_self_info;
extern const crmpi_component_info_t crmpi_btl_sm_info;
extern const crmpi_component_info_t crmpi_btl_tcp_info;
const crmpi_component_t crmpi_btl_self_component = {.info = &crmpi_btl_self_info};
const crmpi_component_t crmpi_btl_sm_component = {.info = &crmpi_btl_sm_info};
const crmpi_component_t crmpi_btl_tcp_component = {.info = &crmpi_btl_tcp_info};
#if CRMPI_HAVE_LIBFABRIC
extern const crmpi_component_info_t crmpi_btl_ofi_info;
const crmpi_component_t crmpi_btl_ofi_component = {.info = &crmpi_btl_ofi_info};
#endif

/* The receive-callback tag the tests use. */
#define TEST_TAG 7
/* Seconds a rank may run before the alarm ends it (a deadlock). */
#define TEST_RANK_TIMEOUT 90
/* Largest number of ranks a test forks. */
#define TEST_MAX_RANKS 4

/* One test message's header: who sent it, its place in the sender's stream, its content. */
typedef struct test_hdr {
    uint32_t magic;       /* TEST_MAGIC, or TEST_DONE: the sender has sent everything */
    uint32_t sender;      /* sending rank */
    uint32_t dest;        /* receiving rank */
    uint32_t seq;         /* per (sender, dest), from 0 */
    uint32_t payload_len; /* bytes after this header */
    uint32_t checksum;    /* FNV-1a of the payload */
} test_hdr_t;

#define TEST_MAGIC 0x7e57b71cu
#define TEST_DONE  0xd0d0d0d0u

/* ---- per-rank state (each forked rank has its own copy) ---- */

/* This process's rank, for messages. */
static uint32_t rank_me;
/* The test's stderr, kept while a scenario captures fd 2. */
static int rank_report_fd = STDERR_FILENO;
/* The scenario's handler for TEST_TAG arrivals. */
static void (*rank_on_recv)(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data,
                            size_t len);

#define RANK_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            dprintf(rank_report_fd, "rank %u: %s:%d: check failed: %s: ", rank_me, __FILE__,       \
                    __LINE__, #cond);                                                              \
            dprintf(rank_report_fd, __VA_ARGS__);                                                  \
            dprintf(rank_report_fd, "\n");                                                         \
            _exit(1);                                                                              \
        }                                                                                          \
    } while (0)

/* What a rank's scenario works with. */
typedef struct test_rank {
    uint32_t rank;                             /* this rank */
    uint32_t size;                             /* ranks in the test */
    const char *dir;                           /* the fake modex directory */
    unsigned barriers;                         /* test_barrier_progress calls so far */
    crmpi_btl_module_t *module;                /* the ucx module */
    crmpi_btl_endpoint_t *eps[TEST_MAX_RANKS]; /* from add_procs, by rank */
} test_rank_t;

static void test_recv_dispatch(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data,
                               size_t len)
{
    RANK_CHECK(rank_on_recv != NULL, "fragment of %zu bytes from rank %u with no handler", len,
               peer_rank);
    rank_on_recv(module, peer_rank, data, len);
}

static uint64_t test_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t test_msg_seed(uint32_t sender, uint32_t dest, uint32_t seq)
{
    return test_mix(((uint64_t)sender << 48) ^ ((uint64_t)dest << 32) ^ seq);
}

static void test_fill(uint8_t *buf, size_t len, uint64_t seed)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = (uint8_t)(seed + i * 131 + (i >> 8));
}

static uint32_t test_fnv1a(const uint8_t *buf, size_t len)
{
    uint32_t hash = 2166136261u;

    for (size_t i = 0; i < len; i++)
        hash = (hash ^ buf[i]) * 16777619u;
    return hash;
}

/* Send hdr + payload through the module. Checks the convertor contract on the way. */
static int test_send(test_rank_t *t, uint32_t dest, const void *hdr, size_t hdr_len,
                     const void *payload, size_t payload_len)
{
    crmpi_convertor_t conv;
    int rc;

    crmpi_convertor_init(&conv, payload, payload_len, &crmpi_btl_test_byte_type);
    rc = t->module->send(t->module, t->eps[dest], TEST_TAG, hdr, hdr_len,
                         payload_len ? &conv : NULL, payload_len);
    if (rc == CRMPI_OK)
        RANK_CHECK(conv.position == payload_len, "send consumed %zu of %zu payload bytes",
                   conv.position, payload_len);
    else if (rc == CRMPI_ERR_RESOURCE_BUSY)
        RANK_CHECK(conv.position == 0, "a busy send moved the convertor to %zu", conv.position);
    return rc;
}

/* Send, calling progress while the module says it is busy. */
static void test_send_blocking(test_rank_t *t, uint32_t dest, const void *hdr, size_t hdr_len,
                               const void *payload, size_t payload_len)
{
    int rc;

    while ((rc = test_send(t, dest, hdr, hdr_len, payload, payload_len)) == CRMPI_ERR_RESOURCE_BUSY)
        t->module->progress(t->module);
    RANK_CHECK(rc == CRMPI_OK, "send to rank %u: %s", dest, crmpi_strerror(rc));
}

/* A barrier of every rank that progresses the module while it waits (see the top). */
static void test_barrier_progress(test_rank_t *t)
{
    char path[600];
    struct stat st;
    int fd;

    snprintf(path, sizeof(path), "%s/barrier.%u.%u", t->dir, t->barriers, t->rank);
    fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    RANK_CHECK(fd >= 0, "open %s: %s", path, strerror(errno));
    close(fd);
    for (uint32_t r = 0; r < t->size; r++) {
        snprintf(path, sizeof(path), "%s/barrier.%u.%u", t->dir, t->barriers, r);
        while (stat(path, &st) != 0)
            t->module->progress(t->module);
    }
    t->barriers++;
}

/* Redirect this rank's stderr to <dir>/<name>.<rank>, so its log lines can be checked. */
static void test_capture_begin(const char *dir, const char *name)
{
    char path[600];
    int fd;

    snprintf(path, sizeof(path), "%s/%s.%u", dir, name, rank_me);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    RANK_CHECK(fd >= 0, "open %s: %s", path, strerror(errno));
    if (rank_report_fd == STDERR_FILENO)
        rank_report_fd = dup(STDERR_FILENO);
    RANK_CHECK(dup2(fd, STDERR_FILENO) >= 0, "dup2: %s", strerror(errno));
    close(fd);
}

/* Restore stderr and return what was captured (malloc'ed). */
static char *test_capture_end(const char *dir, const char *name)
{
    char path[600];
    char *text;
    FILE *file;
    long size;

    snprintf(path, sizeof(path), "%s/%s.%u", dir, name, rank_me);
    dup2(rank_report_fd, STDERR_FILENO);
    file = fopen(path, "r");
    RANK_CHECK(file != NULL, "fopen %s", path);
    fseek(file, 0, SEEK_END);
    size = ftell(file);
    rewind(file);
    text = calloc(1, (size_t)size + 1);
    RANK_CHECK(text && fread(text, 1, (size_t)size, file) == (size_t)size, "read %s", path);
    fclose(file);
    return text;
}

static int test_count_lines(const char *text)
{
    int lines = 0;

    for (; *text; text++)
        lines += *text == '\n';
    return lines;
}

/* Use UCX's transports `tls` (btl_ucx_tls; "" for UCX's own choice). */
static void test_use_tls(const char *tls)
{
    RANK_CHECK(crmpi_param_set_override("btl_ucx_tls", tls) == CRMPI_OK, "set");
    /* UCX's tcp on the loopback interface only: another interface of a shared machine (a
     * container's bridge) may come and go during the test. */
    RANK_CHECK(crmpi_param_set_override("btl_ucx_net_devices", "lo") == CRMPI_OK, "set");
}

/* The next test_rank_open gives its module another job's key (an intruder's). */
static bool rank_other_key;

/* Become rank `rank` and create its ucx module (parameters must be set before). */
static int test_rank_open(test_rank_t *t, uint32_t rank, uint32_t size, const char *dir)
{
    const crmpi_btl_component_ops_t *ops = crmpi_btl_ucx_component.ops;
    crmpi_rte_job_info_t job;
    char who[32];

    memset(t, 0, sizeof(*t));
    t->rank = rank;
    t->size = size;
    t->dir = dir;
    rank_me = rank;
    snprintf(who, sizeof(who), "rank %u", rank);
    crmpi_log_set_who(who);
    RANK_CHECK(crmpi_catalog_register_all() == CRMPI_OK, "catalog");
    RANK_CHECK(crmpi_framework_open(&crmpi_btl_framework) == CRMPI_OK, "btl framework");
    crmpi_btl_test_rte_setup(dir, rank, size, NULL, &job);
    if (rank_other_key)
        job.job_key[0] ^= 1;
    RANK_CHECK(crmpi_btl_register_recv(TEST_TAG, test_recv_dispatch) == CRMPI_OK, "register");
    return ops->init(&job, &t->module);
}

/* Open the module, fence, and add every rank. */
static void test_rank_start(test_rank_t *t, uint32_t rank, uint32_t size, const char *dir)
{
    uint32_t ranks[TEST_MAX_RANKS];
    int rc;

    rc = test_rank_open(t, rank, size, dir);
    RANK_CHECK(rc == CRMPI_OK, "init: %s", crmpi_strerror(rc));
    RANK_CHECK(t->module->exclusivity == BTL_UCX_EXCLUSIVITY, "exclusivity %u",
               t->module->exclusivity);
    RANK_CHECK(!(t->module->flags & CRMPI_BTL_FLAG_CKPT_FRIENDLY), "flags %#x", t->module->flags);
    RANK_CHECK(crmpi_rte_fence(1) == CRMPI_OK, "fence");
    for (uint32_t r = 0; r < size; r++)
        ranks[r] = r;
    rc = t->module->add_procs(t->module, size, ranks, t->eps);
    RANK_CHECK(rc == CRMPI_OK, "add_procs: %s", crmpi_strerror(rc));
    for (uint32_t r = 0; r < size; r++)
        RANK_CHECK((t->eps[r] != NULL) == (r != rank), "endpoint of rank %u: %p", r,
                   (void *)t->eps[r]);
}

/* del_procs every peer, then finalize (which flushes what is in flight). */
static void test_rank_stop(test_rank_t *t)
{
    uint32_t ranks[TEST_MAX_RANKS];
    crmpi_btl_endpoint_t *eps[TEST_MAX_RANKS];
    size_t num = 0;

    for (uint32_t r = 0; r < t->size; r++) {
        if (!t->eps[r])
            continue;
        ranks[num] = r;
        eps[num++] = t->eps[r];
        t->eps[r] = NULL;
    }
    RANK_CHECK(t->module->del_procs(t->module, num, ranks, eps) == CRMPI_OK, "del_procs");
    RANK_CHECK(t->module->finalize(t->module) == CRMPI_OK, "finalize");
    t->module = NULL;
}

/* ---- the parent: fork the ranks, collect their verdicts ---- */

static void test_run_ranks(uint32_t size, crmpi_btl_test_scenario_fn_t scenario, void *arg)
{
    assert_int_equal(
        crmpi_btl_test_run_ranks("btl-ucx", size, TEST_RANK_TIMEOUT, scenario, arg, NULL), 0);
}

/* ---- ping-pong ---- */

/* Rank 1's echo: send the fragment back as it came, from inside the callback (the PML
 * answers rendezvous requests this way). */
static test_rank_t *echo_rank;
/* Rank 1 saw rank 0's last message. */
static bool echo_done;
/* Rank 0's copy of the echo it waits for, and whether it came. */
static uint8_t *pong_buf;
static size_t pong_len;
static bool pong_arrived;

static void echo_on_recv(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data,
                         size_t len)
{
    const size_t hdr_len = len < sizeof(test_hdr_t) ? len : sizeof(test_hdr_t);
    test_hdr_t hdr = {0};
    int rc;

    memcpy(&hdr, data, hdr_len);
    if (len == sizeof(hdr) && hdr.magic == TEST_DONE) {
        echo_done = true;
        return;
    }
    rc =
        test_send(echo_rank, peer_rank, data, hdr_len, (const char *)data + hdr_len, len - hdr_len);
    RANK_CHECK(rc == CRMPI_OK, "echo of %zu bytes: %s", len, crmpi_strerror(rc));
}

static void pong_on_recv(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data,
                         size_t len)
{
    RANK_CHECK(!pong_arrived, "two answers to one ping");
    memcpy(pong_buf, data, len);
    pong_len = len;
    pong_arrived = true;
}

/* Rank 0 sends every size from 0 to max_send_size, rank 1 echoes, rank 0 compares. */
static void scenario_pingpong(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    /* Around UCX's short, bcopy and zcopy thresholds and its segment sizes, up to the
     * largest fragment (256 KiB). */
    static const size_t sizes[] = {0,     1,     2,      7,      8,      9,     100,
                                   1000,  4095,  4096,   8192,   8193,   16384, 65535,
                                   65536, 65537, 131072, 200000, 262143, 262144};
    const test_hdr_t done = {.magic = TEST_DONE};
    test_rank_t t;

    test_use_tls(arg);
    test_rank_start(&t, rank, size, dir);
    if (rank == 1) {
        echo_rank = &t;
        rank_on_recv = echo_on_recv;
        while (!echo_done)
            t.module->progress(t.module);
        test_barrier_progress(&t);
        test_rank_stop(&t);
        return;
    }
    RANK_CHECK(t.module->max_send_size == 256 * 1024 && t.module->eager_limit == 64 * 1024,
               "max_send_size %zu, eager_limit %zu: not the documented defaults",
               t.module->max_send_size, t.module->eager_limit);
    rank_on_recv = pong_on_recv;
    pong_buf = malloc(t.module->max_send_size);
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        size_t len = sizes[s];
        /* C11 7.22.3.1: the size must be a multiple of the alignment. */
        uint8_t *block = aligned_alloc(4096, (len + 8192 + 4095) & ~(size_t)4095);

        RANK_CHECK(block != NULL, "%s", "aligned_alloc");
        for (int iter = 0; iter < 5; iter++) {
            const size_t hdr_len = len < sizeof(test_hdr_t) ? len : sizeof(test_hdr_t);
            uint8_t *msg = block + iter * 8;

            test_fill(msg, len, test_msg_seed(0, 1, (uint32_t)(s * 100 + iter)));
            pong_arrived = false;
            test_send_blocking(&t, 1, msg, hdr_len, msg + hdr_len, len - hdr_len);
            while (!pong_arrived)
                t.module->progress(t.module);
            RANK_CHECK(pong_len == len, "echo of %zu bytes came back with %zu", len, pong_len);
            RANK_CHECK(memcmp(pong_buf, msg, len) == 0, "echo of %zu bytes differs", len);
        }
        free(block);
    }
    test_send_blocking(&t, 1, &done, sizeof(done), NULL, 0);
    free(pong_buf);
    test_barrier_progress(&t);
    test_rank_stop(&t);
}

static void test_pingpong_tcp(void **state)
{
    test_run_ranks(2, scenario_pingpong, "tcp");
}

static void test_pingpong_sm(void **state)
{
    test_run_ranks(2, scenario_pingpong, "sm");
}

/* ---- streams between every pair of ranks at once ---- */

typedef struct stream_params {
    const char *tls;           /* btl_ucx_tls */
    uint32_t frags;            /* fragments from every rank to every other */
    const char *max_send_size; /* btl_ucx_max_send_size, or NULL for the default */
    const char *max_sends;     /* btl_ucx_max_sends, or NULL */
    bool expect_busy;          /* the senders must have met CRMPI_ERR_RESOURCE_BUSY */
} stream_params_t;

/* Per sender: the next sequence number expected, and fragments received. */
static uint32_t stream_expected[TEST_MAX_RANKS];
static uint64_t stream_received;

static void stream_on_recv(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data,
                           size_t len)
{
    test_hdr_t hdr;
    const uint8_t *payload = (const uint8_t *)data + sizeof(hdr);
    uint64_t seed;

    RANK_CHECK(len >= sizeof(hdr), "fragment of %zu bytes from rank %u", len, peer_rank);
    memcpy(&hdr, data, sizeof(hdr));
    RANK_CHECK(hdr.magic == TEST_MAGIC && hdr.sender == peer_rank && hdr.dest == rank_me,
               "header from rank %u: magic %#x sender %u dest %u", peer_rank, hdr.magic, hdr.sender,
               hdr.dest);
    RANK_CHECK(hdr.seq == stream_expected[peer_rank],
               "from rank %u: fragment %u arrived when %u was expected (order, exactly once)",
               peer_rank, hdr.seq, stream_expected[peer_rank]);
    RANK_CHECK(len == sizeof(hdr) + hdr.payload_len,
               "fragment %u from rank %u: %zu bytes, header says %u + %zu", hdr.seq, peer_rank, len,
               hdr.payload_len, sizeof(hdr));
    RANK_CHECK(test_fnv1a(payload, hdr.payload_len) == hdr.checksum,
               "fragment %u from rank %u: checksum mismatch", hdr.seq, peer_rank);
    seed = test_msg_seed(peer_rank, rank_me, hdr.seq);
    for (size_t i = 0; i < hdr.payload_len; i++)
        RANK_CHECK(payload[i] == (uint8_t)(seed + i * 131 + (i >> 8)),
                   "fragment %u from rank %u: byte %zu differs", hdr.seq, peer_rank, i);
    stream_expected[peer_rank]++;
    stream_received++;
}

/* Mostly small fragments, some medium, some up to the largest. */
static size_t stream_payload_len(uint32_t sender, uint32_t dest, uint32_t seq, size_t max)
{
    uint64_t h = test_mix(test_msg_seed(sender, dest, seq));
    unsigned kind = h % 16;

    h >>= 8;
    if (kind < 10)
        return h % 256;
    if (kind < 14)
        return h % 8192;
    return h % (max + 1);
}

/* Fragment *next_seq of `len` bytes from `rank` to `dest`: sent (*next_seq advances), or no
 * room (*busy counts it; the caller sends the same fragment again). @return test_send's */
static int stream_send(test_rank_t *t, uint32_t rank, uint32_t dest, uint32_t *next_seq, size_t len,
                       uint8_t *payload, uint64_t *busy)
{
    test_hdr_t hdr = {.magic = TEST_MAGIC,
                      .sender = rank,
                      .dest = dest,
                      .seq = *next_seq,
                      .payload_len = (uint32_t)len};
    int rc;

    test_fill(payload, hdr.payload_len, test_msg_seed(rank, dest, hdr.seq));
    hdr.checksum = test_fnv1a(payload, hdr.payload_len);
    rc = test_send(t, dest, &hdr, sizeof(hdr), payload, hdr.payload_len);
    if (rc == CRMPI_OK)
        (*next_seq)++;
    else if (rc == CRMPI_ERR_RESOURCE_BUSY)
        (*busy)++;
    else
        RANK_CHECK(false, "send to rank %u: %s", dest, crmpi_strerror(rc));
    return rc;
}

static void scenario_stream(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    const stream_params_t *params = arg;
    uint32_t next_seq[TEST_MAX_RANKS] = {0};
    uint64_t busy = 0;
    uint64_t expected = (uint64_t)params->frags * (size - 1);
    uint8_t *payload;
    size_t max_payload;
    test_rank_t t;
    bool sending = true;

    test_use_tls(params->tls);
    if (params->max_send_size)
        RANK_CHECK(crmpi_param_set_override("btl_ucx_max_send_size", params->max_send_size) ==
                       CRMPI_OK,
                   "%s", "set");
    if (params->max_sends)
        RANK_CHECK(crmpi_param_set_override("btl_ucx_max_sends", params->max_sends) == CRMPI_OK,
                   "%s", "set");
    test_rank_start(&t, rank, size, dir);
    rank_on_recv = stream_on_recv;
    max_payload = t.module->max_send_size - sizeof(test_hdr_t);
    payload = malloc(max_payload);
    RANK_CHECK(payload != NULL, "malloc");
    /* expect_busy: the first fragments to each peer are the largest, sent back to back
     * before any progress. Rendezvous sends cannot complete until the sender progresses, so
     * the one after the last of max_sends slots meets CRMPI_ERR_RESOURCE_BUSY whatever the
     * machine's speed (slots freed by the peer's quick answers once made this depend on it). */
    for (uint32_t dest = 0; params->expect_busy && dest < size; dest++) {
        for (int rc = CRMPI_OK; dest != rank && rc == CRMPI_OK && next_seq[dest] < params->frags;)
            rc = stream_send(&t, rank, dest, &next_seq[dest], max_payload, payload, &busy);
    }
    while (sending || stream_received < expected) {
        sending = false;
        /* One fragment to every peer in turn: all streams flow at once, both ways. */
        for (uint32_t dest = 0; dest < size; dest++) {
            if (dest == rank || next_seq[dest] == params->frags)
                continue;
            sending = true;
            /* No room: progress below, then the same fragment again. */
            stream_send(&t, rank, dest, &next_seq[dest],
                        stream_payload_len(rank, dest, next_seq[dest], max_payload), payload,
                        &busy);
        }
        t.module->progress(t.module);
    }
    for (uint32_t r = 0; r < size; r++)
        RANK_CHECK(r == rank || stream_expected[r] == params->frags, "%u fragments from rank %u",
                   stream_expected[r], r);
    if (params->expect_busy)
        RANK_CHECK(busy > 0, "the senders never ran out of send slots; the test is too gentle");
    free(payload);
    test_barrier_progress(&t);
    test_rank_stop(&t);
}

static void test_stream_3_tcp(void **state)
{
    stream_params_t params = {.tls = "tcp", .frags = 2000};

    test_run_ranks(3, scenario_stream, &params);
}

static void test_stream_3_sm(void **state)
{
    stream_params_t params = {.tls = "sm", .frags = 2000};

    test_run_ranks(3, scenario_stream, &params);
}

static void test_stream_2_few_sends(void **state)
{
    stream_params_t params = {.tls = "tcp",
                              .frags = 2000,
                              .max_sends = "2",
                              .max_send_size = "1000001",
                              .expect_busy = true};

    test_run_ranks(2, scenario_stream, &params);
}

static void test_stream_4_large_fragments(void **state)
{
    /* Fragments of odd sizes up to 1 MB, far above every UCX segment. */
    stream_params_t params = {.tls = "", .frags = 200, .max_send_size = "1000001"};

    test_run_ranks(4, scenario_stream, &params);
}

/* ---- fragments that arrive out of turn are delivered in turn ---- */

/* What the reorder scenario's callback saw, in delivery order. */
static uint32_t reorder_seen[16];
static size_t reorder_num_seen;

static void reorder_on_recv(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data,
                            size_t len)
{
    uint32_t value;

    RANK_CHECK(peer_rank == 1 && len == sizeof(value), "fragment of %zu bytes from rank %u", len,
               peer_rank);
    memcpy(&value, data, sizeof(value));
    reorder_seen[reorder_num_seen++] = value;
}

/* UCX delivers in order on a quiet machine, so the early arrivals are made by hand: rank 1's
 * fragments 2, 0, 3, 1 (and a duplicate of 0) go straight to btl_ucx_endpoint_recv. */
static void scenario_reorder(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    static const uint32_t order[] = {2, 0, 3, 1, 0};
    static const int delivered[] = {0, 1, 0, 3, 0};
    btl_ucx_module_t *module;
    char *capture;
    test_rank_t t;

    test_use_tls("");
    RANK_CHECK(test_rank_open(&t, 0, 2, dir) == CRMPI_OK, "init");
    module = (btl_ucx_module_t *)t.module;
    rank_on_recv = reorder_on_recv;
    test_capture_begin(dir, "reorder");
    for (size_t i = 0; i < 5; i++) {
        uint32_t value = 100 + order[i];
        int count = btl_ucx_endpoint_recv(module, 1, order[i], TEST_TAG, &value, sizeof(value));

        RANK_CHECK(count == delivered[i], "arrival of fragment %u delivered %d, not %d", order[i],
                   count, delivered[i]);
    }
    capture = test_capture_end(dir, "reorder");
    RANK_CHECK(reorder_num_seen == 4, "%zu fragments delivered", reorder_num_seen);
    for (uint32_t seq = 0; seq < 4; seq++)
        RANK_CHECK(reorder_seen[seq] == 100 + seq, "delivery %u carried %u", seq,
                   reorder_seen[seq]);
    RANK_CHECK(test_count_lines(capture) == 1 && strstr(capture, "fragment 0 arrived again"),
               "the duplicate was not reported once: %s", capture);
    free(capture);
    RANK_CHECK(module->peers[1].early == NULL && module->peers[1].recv_seq == 4,
               "fragments left waiting");
    RANK_CHECK(t.module->finalize(t.module) == CRMPI_OK, "finalize");
}

static void test_reorder(void **state)
{
    test_run_ranks(1, scenario_reorder, NULL);
}

/* ---- who may send: forged fragments are refused, and the module goes on ---- */

/* Forged fragments of each kind the intruder sends: one line each is logged all the same. */
#define AUTH_REPEAT 5
/* Fragments the real peer sends afterwards. */
#define AUTH_LEGIT 300
/* What the intruder's fragments carry: delivered, they would fail stream_on_recv. */
#define AUTH_FORGED_MAGIC 0xbadbadbau

static int test_count_substr(const char *text, const char *what)
{
    int count = 0;

    for (const char *at = text; (at = strstr(at, what)) != NULL; at += strlen(what))
        count++;
    return count;
}

/* A file of the test's directory, written whole or read whole. */
static void test_file_put(const char *dir, const char *name, const void *data, size_t len)
{
    char path[600];
    FILE *file;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    file = fopen(path, "w");
    RANK_CHECK(file && fwrite(data, 1, len, file) == len && fclose(file) == 0, "write %s", path);
}

static void test_file_get(const char *dir, const char *name, void *data, size_t len)
{
    char path[600];
    FILE *file;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    file = fopen(path, "r");
    RANK_CHECK(file && fread(data, 1, len, file) == len, "read %s", path);
    fclose(file);
}

/* The intruder's send: through its own module and endpoint to the victim, claiming to be
 * `claimed_rank` and carrying `token`; the module's own rank and token are put back. */
static void auth_send_forged(test_rank_t *t, uint32_t victim, uint32_t claimed_rank,
                             const uint8_t *token)
{
    btl_ucx_module_t *module = (btl_ucx_module_t *)t->module;
    crmpi_btl_endpoint_t *ep = t->eps[victim];
    uint8_t own_token[CRMPI_BTL_AUTH_TOKEN_LEN];
    const uint32_t own_rank = module->my_rank;
    test_hdr_t hdr = {.magic = AUTH_FORGED_MAGIC, .sender = claimed_rank, .dest = victim};

    memcpy(own_token, ep->token, sizeof(own_token));
    module->my_rank = claimed_rank;
    memcpy(ep->token, token, sizeof(own_token));
    for (int i = 0; i < AUTH_REPEAT; i++)
        test_send_blocking(t, victim, &hdr, sizeof(hdr), NULL, 0);
    module->my_rank = own_rank;
    memcpy(ep->token, own_token, sizeof(own_token));
}

/*
 * Rank 1 is the victim, rank 0 its real peer, rank 3 a rank that only exists, and rank 2
 * an intruder whose module has another job's key. Every rank builds its module twice, as
 * around a checkpoint; in the second round the intruder sends the victim fragments with
 * (a) a zero token, claiming rank 3; (b) the token its own key makes, as itself; (c) rank
 * 0's token to the victim's first module, claiming rank 0 (a replay across the rebuild);
 * (d) a token made with the job's key for rank 9, which the job does not have. Each kind is
 * refused and logged once, nothing reaches the callback, and then rank 0's stream arrives
 * whole and in order.
 */
static void scenario_forged(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    const uint32_t victim = 1;
    const uint32_t unknown_rank = 9;
    char subdir[2][600];
    test_rank_t t;

    test_use_tls(arg);
    for (int round = 0; round < 2; round++) {
        snprintf(subdir[round], sizeof(subdir[round]), "%s/r%d", dir, round);
        mkdir(subdir[round], 0700);
    }
    /* The first module of every rank; rank 0 keeps its token to the victim where the
     * intruder finds it. */
    test_rank_start(&t, rank, size, subdir[0]);
    if (rank == 0)
        test_file_put(dir, "token0", t.eps[victim]->token, CRMPI_BTL_AUTH_TOKEN_LEN);
    test_barrier_progress(&t);
    test_rank_stop(&t);
    crmpi_framework_close(&crmpi_btl_framework);

    /* The second: new nonces. */
    rank_other_key = rank == 2;
    test_rank_start(&t, rank, size, subdir[1]);
    rank_other_key = false;
    rank_on_recv = stream_on_recv;
    if (rank == victim) {
        btl_ucx_module_t *module = (btl_ucx_module_t *)t.module;
        char *text;

        test_capture_begin(dir, "forged");
        while (module->auth.num_refused < 4 * AUTH_REPEAT)
            t.module->progress(t.module);
        test_barrier_progress(&t);
        while (stream_received < AUTH_LEGIT)
            t.module->progress(t.module);
        text = test_capture_end(dir, "forged");
        RANK_CHECK(stream_received == AUTH_LEGIT && stream_expected[0] == AUTH_LEGIT,
                   "%llu fragments delivered, %u from rank 0", (unsigned long long)stream_received,
                   stream_expected[0]);
        RANK_CHECK(module->auth.num_refused == 4 * AUTH_REPEAT, "%llu fragments refused",
                   (unsigned long long)module->auth.num_refused);
        for (uint32_t claimed = 0; claimed <= unknown_rank; claimed++) {
            char expect[128];

            if (claimed == victim || (claimed > 3 && claimed != unknown_rank))
                continue;
            snprintf(
                expect, sizeof(expect),
                "btl:ucx: rank 1: refused a fragment claiming to come from rank %u: ", claimed);
            RANK_CHECK(test_count_substr(text, expect) == 1, "not once \"%s\": %s", expect, text);
        }
        RANK_CHECK(test_count_substr(text, "does not prove the job's key") == 3,
                   "not three bad tokens: %s", text);
        RANK_CHECK(test_count_substr(text, "no such rank in this job") == 1,
                   "rank %u not refused as such: %s", unknown_rank, text);
        RANK_CHECK(test_count_lines(text) == 4, "not exactly four lines: %s", text);
        free(text);
    } else if (rank == 2) {
        const crmpi_rte_job_info_t *job = crmpi_rte_job();
        uint8_t token[CRMPI_BTL_AUTH_TOKEN_LEN] = {0};
        const uint8_t *nonce;
        crmpi_btl_auth_t real;
        const void *addr;
        size_t addr_len;
        void *blob;
        size_t len;

        /* (a) No token at all. */
        auth_send_forged(&t, victim, 3, token);
        /* (b) Its own, made with another job's key for the victim's present module. */
        auth_send_forged(&t, victim, 2, t.eps[victim]->token);
        /* (c) A token that was good for the victim's module before the rebuild. */
        test_file_get(dir, "token0", token, sizeof(token));
        auth_send_forged(&t, victim, 0, token);
        /* (d) The job's key and the victim's present nonce, for a rank the job lacks. */
        RANK_CHECK(crmpi_rte_modex_lookup(victim, BTL_UCX_MODEX_KEY, &blob, &len) == CRMPI_OK &&
                       btl_ucx_modex_unpack(blob, len, &addr, &addr_len, &nonce, NULL) == CRMPI_OK,
                   "the victim's modex");
        RANK_CHECK(crmpi_btl_auth_init(&real, "ucx", job) == CRMPI_OK, "auth");
        crmpi_btl_auth_token(&real, unknown_rank, victim, nonce, token);
        crmpi_btl_auth_fini(&real);
        free(blob);
        auth_send_forged(&t, victim, unknown_rank, token);
        test_barrier_progress(&t);
    } else if (rank == 0) {
        uint8_t payload[2000];

        test_barrier_progress(&t);
        for (uint32_t seq = 0; seq < AUTH_LEGIT; seq++) {
            test_hdr_t hdr = {.magic = TEST_MAGIC, .sender = 0, .dest = victim, .seq = seq};

            hdr.payload_len = (seq * 37) % sizeof(payload);
            test_fill(payload, hdr.payload_len, test_msg_seed(0, victim, seq));
            hdr.checksum = test_fnv1a(payload, hdr.payload_len);
            test_send_blocking(&t, victim, &hdr, sizeof(hdr), payload, hdr.payload_len);
        }
    } else {
        test_barrier_progress(&t);
    }
    test_barrier_progress(&t);
    test_rank_stop(&t);
}

static void test_forged_fragments_tcp(void **state)
{
    test_run_ranks(4, scenario_forged, "tcp");
}

static void test_forged_fragments_sm(void **state)
{
    test_run_ranks(4, scenario_forged, "sm");
}

/* ---- placement: payloads received by rendezvous straight into the receiver's buffer ---- */

/* Who takes placed payloads: btl_ucx_recv_place of each rank, and UCX's transports. */
typedef struct place_params {
    const char *tls;     /* btl_ucx_tls */
    bool sender_place;   /* rank 0's btl_ucx_recv_place */
    bool receiver_place; /* rank 1's */
} place_params_t;

/*
 * place_check.h's stream with small fragments in between, rank 0 to rank 1. When rank 1
 * takes placed payloads, every large fragment after the primer goes by UCX's rendezvous
 * and is placed: one or three pieces straight into the destination, a discarded tail
 * through a buffer and a copy; the declined primer reaches the recv callback with its
 * payload. Otherwise every fragment goes eager, as before.
 */
static void scenario_place(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    const place_params_t *params = arg;
    const bool mine = rank == 0 ? params->sender_place : params->receiver_place;
    btl_ucx_module_t *module;
    test_rank_t t;

    crmpi_btl_test_place_register();
    test_use_tls(params->tls);
    RANK_CHECK(crmpi_param_set_override("btl_ucx_recv_place", mine ? "1" : "0") == CRMPI_OK, "%s",
               "set");
    test_rank_start(&t, rank, size, dir);
    module = (btl_ucx_module_t *)t.module;
    RANK_CHECK(!!(t.module->flags & CRMPI_BTL_FLAG_RECV_PLACE) == mine, "flags %#x",
               t.module->flags);
    if (rank == 0) {
        RANK_CHECK(t.eps[1]->place == params->receiver_place, "place %d", t.eps[1]->place);
        crmpi_btl_test_place_send(t.module, t.eps[1], true);
    } else {
        crmpi_btl_test_place_receive(t.module, true, params->receiver_place);
        RANK_CHECK((module->placed_bytes > 0) == params->receiver_place &&
                       (module->place_copied_bytes > 0) == params->receiver_place,
                   "%llu bytes placed, %llu copied", (unsigned long long)module->placed_bytes,
                   (unsigned long long)module->place_copied_bytes);
    }
    /* Rank 0's finalize progresses until rank 1 has taken every send. */
    test_rank_stop(&t);
}

static void test_place_tcp(void **state)
{
    place_params_t params = {.tls = "tcp", .sender_place = true, .receiver_place = true};

    test_run_ranks(2, scenario_place, &params);
}

static void test_place_sm(void **state)
{
    place_params_t params = {.tls = "sm", .sender_place = true, .receiver_place = true};

    test_run_ranks(2, scenario_place, &params);
}

/* Ranks may differ: a sender places towards a rank that takes it, whatever its own
 * setting; a rank that does not take it is sent whole fragments. */
static void test_place_receiver_off(void **state)
{
    place_params_t params = {.tls = "tcp", .sender_place = true, .receiver_place = false};

    test_run_ranks(2, scenario_place, &params);
}

static void test_place_sender_off(void **state)
{
    place_params_t params = {.tls = "tcp", .sender_place = false, .receiver_place = true};

    test_run_ranks(2, scenario_place, &params);
}

/* ---- finalize flushes what UCX still holds ---- */

/*
 * Rank 0 sends a burst ending in large fragments while rank 1 does not read, then finalizes
 * at once: the tail (more than the socket or the shared FIFO holds) is still in UCX's
 * buffers and pending queue. Rank 1 starts reading once rank 0 has sent everything, as a
 * peer inside MPI would, and only then finalizes: every fragment must arrive whole.
 * Without the flush, finalize would destroy the worker with the tail unsent.
 */
static void scenario_finalize_flush(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    const uint32_t frags = 300;
    char sent_path[600];
    struct stat st;
    test_rank_t t;

    snprintf(sent_path, sizeof(sent_path), "%s/rank0.sent", dir);
    test_use_tls(arg);
    /* Room for every send at once: rank 0 must not need rank 1's reading to send. */
    RANK_CHECK(crmpi_param_set_override("btl_ucx_max_sends", "1000") == CRMPI_OK, "set");
    test_rank_start(&t, rank, size, dir);
    if (rank == 0) {
        uint8_t *payload = malloc(t.module->max_send_size);
        btl_ucx_module_t *module = (btl_ucx_module_t *)t.module;

        RANK_CHECK(payload != NULL, "malloc");
        for (uint32_t seq = 0; seq < frags; seq++) {
            test_hdr_t hdr = {.magic = TEST_MAGIC, .sender = 0, .dest = 1, .seq = seq};

            /* The last ones the largest: their tails are what is left at finalize. */
            hdr.payload_len = seq >= frags - 40
                                  ? (uint32_t)(t.module->max_send_size - sizeof(hdr))
                                  : (uint32_t)stream_payload_len(
                                        0, 1, seq, t.module->max_send_size - sizeof(hdr));
            test_fill(payload, hdr.payload_len, test_msg_seed(0, 1, seq));
            hdr.checksum = test_fnv1a(payload, hdr.payload_len);
            test_send_blocking(&t, 1, &hdr, sizeof(hdr), payload, hdr.payload_len);
        }
        free(payload);
        RANK_CHECK(module->num_sending > 0, "nothing in flight at finalize: the test is vacuous");
        close(open(sent_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        test_rank_stop(&t);
    } else {
        while (stat(sent_path, &st) != 0)
            usleep(1000);
        rank_on_recv = stream_on_recv;
        while (stream_received < frags)
            t.module->progress(t.module);
        test_rank_stop(&t);
    }
}

static void test_finalize_flushes_tcp(void **state)
{
    test_run_ranks(2, scenario_finalize_flush, "tcp");
}

static void test_finalize_flushes_sm(void **state)
{
    test_run_ranks(2, scenario_finalize_flush, "sm");
}

/* ---- a peer that stops progressing: finalize's wait is bounded ---- */

/* Rank 0 sends to rank 1, which never progresses and only exits once rank 0 is done; rank
 * 0's finalize must come back (after its bounded wait), saying what it dropped. */
static void scenario_finalize_stuck_peer(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    char done_path[600];
    struct stat st;
    test_rank_t t;

    snprintf(done_path, sizeof(done_path), "%s/rank0.done", dir);
    test_use_tls("tcp");
    /* Short waits: the test is about their bound, not their length. */
    RANK_CHECK(crmpi_param_set_override("btl_ucx_finalize_timeout", "1000") == CRMPI_OK, "set");
    test_rank_start(&t, rank, size, dir);
    if (rank == 1) {
        /* Never progresses: rank 0's fragments pile up in the socket, then in UCX. */
        while (stat(done_path, &st) != 0)
            usleep(10000);
        return; /* exits without finalize, as a killed peer would */
    }
    {
        uint8_t *payload = calloc(1, t.module->max_send_size);
        btl_ucx_module_t *module = (btl_ucx_module_t *)t.module;
        char *capture;

        RANK_CHECK(payload != NULL, "calloc");
        for (uint32_t seq = 0; seq < 64; seq++) {
            test_hdr_t hdr = {.magic = TEST_MAGIC, .seq = seq};

            if (test_send(&t, 1, &hdr, sizeof(hdr), payload,
                          t.module->max_send_size - sizeof(hdr)) != CRMPI_OK)
                break;
            t.module->progress(t.module);
        }
        free(payload);
        RANK_CHECK(module->num_sending > 0, "everything completed: the peer read it all");
        test_capture_begin(dir, "stuck");
        test_rank_stop(&t);
        capture = test_capture_end(dir, "stuck");
        RANK_CHECK(strstr(capture, "not flushed") && strstr(capture, "stopped progressing"),
                   "finalize did not say what it dropped: %s", capture);
        free(capture);
        close(open(done_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
    }
}

static void test_finalize_bounded(void **state)
{
    test_run_ranks(2, scenario_finalize_stuck_peer, NULL);
}

/* ---- what a module holds, and that finalize gives all of it back ---- */

typedef struct test_holdings {
    int fds;         /* entries of /proc/self/fd */
    int threads;     /* entries of /proc/self/task */
    char *maps;      /* /proc/self/maps' paths, without anonymous mappings (malloc'ed) */
    int shared;      /* mappings of /dev/shm, SYSV segments, memfds or deleted files */
    char sigcgt[64]; /* /proc/self/status's SigCgt: the signals with a handler */
} test_holdings_t;

/* Entries of a /proc directory, but "." and "..". */
static int test_count_dir(const char *path)
{
    DIR *dir = opendir(path);
    struct dirent *entry;
    int count = 0;

    RANK_CHECK(dir != NULL, "opendir %s: %s", path, strerror(errno));
    while ((entry = readdir(dir)) != NULL)
        count += entry->d_name[0] != '.';
    closedir(dir);
    return count;
}

static test_holdings_t test_holdings(void)
{
    test_holdings_t h = {0};
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[1024];
    size_t used = 0;
    size_t cap = 65536;

    h.fds = test_count_dir("/proc/self/fd") - 1; /* opendir's own descriptor */
    h.threads = test_count_dir("/proc/self/task");
    h.maps = calloc(1, cap);
    RANK_CHECK(maps != NULL && h.maps != NULL, "maps");
    while (fgets(line, sizeof(line), maps)) {
        char *path = strchr(line, '/');

        if (!path)
            path = strchr(line, '[');
        /* [heap] is malloc's, and may come back split in two by a change of protection. */
        if (!path || strncmp(path, "[heap]", 6) == 0)
            continue;
        if (strncmp(path, "/dev/shm", 8) == 0 || strncmp(path, "/SYSV", 5) == 0 ||
            strncmp(path, "/memfd:", 7) == 0 || strstr(path, "(deleted)"))
            h.shared++;
        RANK_CHECK(used + strlen(path) + 2 < cap, "maps too long");
        used += (size_t)sprintf(h.maps + used, "%s", path);
    }
    fclose(maps);
    maps = fopen("/proc/self/status", "r");
    RANK_CHECK(maps != NULL, "status");
    while (fgets(line, sizeof(line), maps)) {
        if (strncmp(line, "SigCgt:", 7) == 0)
            sscanf(line + 7, "%63s", h.sigcgt);
    }
    fclose(maps);
    return h;
}

/* A thread that does nothing, so that glibc caches a stack before the baseline. */
static void *test_idle_thread(void *arg)
{
    return arg;
}

/*
 * Three cycles of init, traffic both ways, finalize, each with a new modex, as around a
 * checkpoint: after each, this rank holds exactly the descriptors and threads it had before
 * the first, no shared-memory mapping, and (from the second on) the same file mappings
 * as after the first (libucp stays loaded: btl_ucx.h says why); no signal handler changed.
 */
static void scenario_cycles(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    test_holdings_t base;
    test_holdings_t during = {0};
    char *maps_after_first = NULL;
    pthread_t threads[4];

    for (int i = 0; i < 4; i++)
        RANK_CHECK(pthread_create(&threads[i], NULL, test_idle_thread, NULL) == 0, "thread");
    for (int i = 0; i < 4; i++)
        pthread_join(threads[i], NULL);
    test_use_tls(arg);
    RANK_CHECK(crmpi_catalog_register_all() == CRMPI_OK, "catalog");
    base = test_holdings();
    for (int cycle = 0; cycle < 3; cycle++) {
        test_holdings_t after;
        char subdir[600];
        test_rank_t t;

        snprintf(subdir, sizeof(subdir), "%s/c%d", dir, cycle);
        mkdir(subdir, 0700);
        stream_received = 0;
        memset(stream_expected, 0, sizeof(stream_expected));
        test_rank_start(&t, rank, size, subdir);
        rank_on_recv = stream_on_recv;
        for (uint32_t seq = 0; seq < 50; seq++) {
            test_hdr_t hdr = {.magic = TEST_MAGIC, .sender = rank, .dest = 1 - rank, .seq = seq};
            uint8_t payload[3000];

            hdr.payload_len = seq * 50;
            test_fill(payload, hdr.payload_len, test_msg_seed(rank, 1 - rank, seq));
            hdr.checksum = test_fnv1a(payload, hdr.payload_len);
            test_send_blocking(&t, 1 - rank, &hdr, sizeof(hdr), payload, hdr.payload_len);
        }
        while (stream_received < 50)
            t.module->progress(t.module);
        if (cycle == 0)
            during = test_holdings();
        test_barrier_progress(&t);
        test_rank_stop(&t);
        crmpi_framework_close(&crmpi_btl_framework);
        after = test_holdings();
        RANK_CHECK(after.fds == base.fds, "cycle %d: %d descriptors, %d before", cycle, after.fds,
                   base.fds);
        RANK_CHECK(after.threads == base.threads, "cycle %d: %d threads, %d before", cycle,
                   after.threads, base.threads);
        RANK_CHECK(after.shared == 0, "cycle %d: %d shared-memory mappings left:\n%s", cycle,
                   after.shared, after.maps);
        RANK_CHECK(strcmp(after.sigcgt, base.sigcgt) == 0,
                   "cycle %d: signal handlers %s, %s before", cycle, after.sigcgt, base.sigcgt);
        if (cycle == 0) {
            maps_after_first = after.maps;
            continue;
        }
        RANK_CHECK(strcmp(after.maps, maps_after_first) == 0,
                   "cycle %d: file mappings differ:\n--- after the first\n%s--- now\n%s", cycle,
                   maps_after_first, after.maps);
        free(after.maps);
    }
    /* Loading UCX left the signal handlers alone (btl_ucx_lib.c). */
    RANK_CHECK(strcmp(during.sigcgt, base.sigcgt) == 0,
               "signals with a handler while the module was open: %s, before: %s", during.sigcgt,
               base.sigcgt);
    /* The check is not vacuous: the module held descriptors and UCX's async thread. */
    RANK_CHECK(during.fds > base.fds && during.threads > base.threads,
               "the module held nothing (%d descriptors, %d threads)", during.fds, during.threads);
    free(maps_after_first);
    free(during.maps);
    free(base.maps);
}

static void test_cycles_release_everything_tcp(void **state)
{
    test_run_ranks(2, scenario_cycles, "tcp");
}

static void test_cycles_release_everything_sm(void **state)
{
    test_run_ranks(2, scenario_cycles, "sm");
}

/* ---- bad input: one line, nothing left behind ---- */

typedef struct bad_params {
    const char *tls;      /* btl_ucx_tls, or NULL */
    const char *env_tls;  /* UCX_TLS in the environment, or NULL */
    const char *library;  /* btl_ucx_library, or NULL */
    const char *btl;      /* the btl selection list, or NULL */
    int rc;               /* what init must return */
    const char *words[3]; /* what its one line must say (NULL: no line at all) */
} bad_params_t;

static void scenario_bad_input(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    const bad_params_t *params = arg;
    test_holdings_t base;
    test_holdings_t after;
    char *text;
    test_rank_t t;
    int rc;

    if (params->tls)
        test_use_tls(params->tls);
    if (params->env_tls)
        setenv("UCX_TLS", params->env_tls, 1);
    if (params->library)
        RANK_CHECK(crmpi_param_set_override("btl_ucx_library", params->library) == CRMPI_OK, "set");
    if (params->btl)
        RANK_CHECK(crmpi_param_set_override("btl", params->btl) == CRMPI_OK, "set");
    RANK_CHECK(crmpi_catalog_register_all() == CRMPI_OK, "catalog");
    rank_me = rank;
    test_capture_begin(dir, "bad");
    base = test_holdings();
    rc = test_rank_open(&t, rank, size, dir);
    text = test_capture_end(dir, "bad");
    after = test_holdings();
    RANK_CHECK(rc == params->rc, "init returned %s, not %s", crmpi_strerror(rc),
               crmpi_strerror(params->rc));
    if (params->words[0]) {
        RANK_CHECK(test_count_lines(text) == 1, "not exactly one line: %s", text);
        for (int i = 0; i < 3 && params->words[i]; i++)
            RANK_CHECK(strstr(text, params->words[i]), "the line does not say '%s': %s",
                       params->words[i], text);
    } else {
        RANK_CHECK(text[0] == '\0', "something was said: %s", text);
    }
    RANK_CHECK(after.fds == base.fds && after.threads == base.threads && after.shared == 0,
               "init left something behind: %d descriptors (%d before), %d threads (%d), %d "
               "shared mappings",
               after.fds, base.fds, after.threads, base.threads, after.shared);
    free(text);
    free(base.maps);
    free(after.maps);
}

static void test_bogus_tls(void **state)
{
    bad_params_t params = {
        .tls = "bogus",
        .btl = "self,ucx",
        .rc = CRMPI_ERR_BAD_PARAM,
        .words = {"btl_ucx_tls=bogus", "'bogus' is not available", "tcp"},
    };

    test_run_ranks(2, scenario_bad_input, &params);
}

static void test_bogus_tls_among_good(void **state)
{
    /* UCX alone would warn and go on with tcp. */
    bad_params_t params = {
        .tls = "tcp,bogus",
        .btl = "self,ucx",
        .rc = CRMPI_ERR_BAD_PARAM,
        .words = {"btl_ucx_tls=tcp,bogus", "'bogus' is not available", "sysv"},
    };

    test_run_ranks(2, scenario_bad_input, &params);
}

static void test_bogus_env_tls(void **state)
{
    bad_params_t params = {
        .env_tls = "nosuchtl",
        .btl = "self,ucx",
        .rc = CRMPI_ERR_BAD_PARAM,
        .words = {"UCX_TLS=nosuchtl", "'nosuchtl' is not available", "posix"},
    };

    test_run_ranks(2, scenario_bad_input, &params);
}

static void test_library_missing_quiet(void **state)
{
    /* Not asked for by name: ucx steps aside, and says so only at btl_base_verbose 10. */
    bad_params_t params = {
        .library = "/nonexistent/libucp.so.0",
        .rc = CRMPI_ERR_NOT_SUPPORTED,
    };

    test_run_ranks(2, scenario_bad_input, &params);
}

static void test_library_missing_requested(void **state)
{
    bad_params_t params = {
        .library = "/nonexistent/libucp.so.0",
        .btl = "self,ucx",
        .rc = CRMPI_ERR_NOT_FOUND,
        .words = {"cannot load UCX", "/nonexistent/libucp.so.0", "btl_ucx_library"},
    };

    test_run_ranks(2, scenario_bad_input, &params);
}

static void test_library_not_ucx(void **state)
{
    bad_params_t params = {
        .library = "libm.so.6",
        .btl = "self,ucx",
        .rc = CRMPI_ERR_NOT_FOUND,
        .words = {"libm.so.6 has no ucp_get_version", "not UCX's libucp"},
    };

    test_run_ranks(2, scenario_bad_input, &params);
}

/* ---- when the component offers itself ---- */

static void scenario_query(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    crmpi_rte_job_info_t job;
    const char *reason = NULL;
    int priority = -1;

    RANK_CHECK(crmpi_catalog_register_all() == CRMPI_OK, "catalog");
    RANK_CHECK(crmpi_framework_open(&crmpi_btl_framework) == CRMPI_OK, "btl framework");
    crmpi_btl_test_rte_setup(dir, rank, 2, NULL, &job);
    RANK_CHECK(crmpi_btl_ucx_component.query(&crmpi_btl_ucx_component, &priority, &reason) ==
                       CRMPI_ERR_NOT_SUPPORTED &&
                   reason && strstr(reason, "name ucx in the btl list"),
               "one node, default list: offered (%s)", reason ? reason : "no reason");
    RANK_CHECK(crmpi_param_set_override("btl", "self,ucx") == CRMPI_OK, "set");
    RANK_CHECK(crmpi_btl_ucx_component.query(&crmpi_btl_ucx_component, &priority, &reason) ==
                   CRMPI_OK,
               "named: declined");
}

static void test_query_offers(void **state)
{
    test_run_ranks(1, scenario_query, NULL);
}

/* ---- the pieces without UCX ---- */

static void test_modex_round_trip(void **state)
{
    uint8_t addr[40];
    btl_ucx_module_t module = {.addr = (ucp_address_t *)addr, .addr_len = sizeof(addr)};
    const uint8_t *nonce;
    const void *addr_out;
    size_t addr_len;
    uint8_t *blob;
    size_t len;

    for (size_t i = 0; i < sizeof(addr); i++)
        addr[i] = (uint8_t)(i * 3);
    memset(module.auth.nonce, 0xa5, sizeof(module.auth.nonce));
    assert_int_equal(btl_ucx_modex_pack(&module, (void **)&blob, &len), CRMPI_OK);
    assert_int_equal(len, sizeof(btl_ucx_modex_t) + sizeof(addr));
    assert_int_equal(btl_ucx_modex_unpack(blob, len, &addr_out, &addr_len, &nonce, NULL), CRMPI_OK);
    assert_int_equal(addr_len, sizeof(addr));
    assert_memory_equal(addr_out, addr, sizeof(addr));
    assert_memory_equal(nonce, module.auth.nonce, sizeof(module.auth.nonce));
    /* Truncated, too long, another version, another magic: refused. */
    assert_int_equal(btl_ucx_modex_unpack(blob, len - 1, &addr_out, &addr_len, &nonce, NULL),
                     CRMPI_ERR_PROTO);
    assert_int_equal(
        btl_ucx_modex_unpack(blob, sizeof(btl_ucx_modex_t) - 1, &addr_out, &addr_len, &nonce, NULL),
        CRMPI_ERR_PROTO);
    ((btl_ucx_modex_t *)blob)->version++;
    assert_int_equal(btl_ucx_modex_unpack(blob, len, &addr_out, &addr_len, &nonce, NULL),
                     CRMPI_ERR_PROTO);
    ((btl_ucx_modex_t *)blob)->version--;
    ((btl_ucx_modex_t *)blob)->magic ^= 1;
    assert_int_equal(btl_ucx_modex_unpack(blob, len, &addr_out, &addr_len, &nonce, NULL),
                     CRMPI_ERR_PROTO);
    free(blob);
}

static int test_group_setup(void **state)
{
    /* Only what each test sets: not the user's CRMPI_MCA_* or UCX_TLS, nor a parameter
     * file. */
    for (bool removed = true; removed;) {
        removed = false;
        for (char **env = environ; *env; env++) {
            if (strncmp(*env, "CRMPI_MCA_", 10) == 0) {
                char name[256];

                snprintf(name, sizeof(name), "%.*s", (int)strcspn(*env, "="), *env);
                unsetenv(name);
                removed = true;
                break;
            }
        }
    }
    unsetenv("UCX_TLS");
    setenv("CRMPI_PARAM_FILE", "/dev/null", 1);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_modex_round_trip),
        cmocka_unit_test(test_query_offers),
        cmocka_unit_test(test_pingpong_tcp),
        cmocka_unit_test(test_pingpong_sm),
        cmocka_unit_test(test_stream_3_tcp),
        cmocka_unit_test(test_stream_3_sm),
        cmocka_unit_test(test_stream_2_few_sends),
        cmocka_unit_test(test_stream_4_large_fragments),
        cmocka_unit_test(test_reorder),
        cmocka_unit_test(test_place_tcp),
        cmocka_unit_test(test_place_sm),
        cmocka_unit_test(test_place_receiver_off),
        cmocka_unit_test(test_place_sender_off),
        cmocka_unit_test(test_finalize_flushes_tcp),
        cmocka_unit_test(test_finalize_flushes_sm),
        cmocka_unit_test(test_forged_fragments_tcp),
        cmocka_unit_test(test_forged_fragments_sm),
        cmocka_unit_test(test_finalize_bounded),
        cmocka_unit_test(test_cycles_release_everything_tcp),
        cmocka_unit_test(test_cycles_release_everything_sm),
        cmocka_unit_test(test_bogus_tls),
        cmocka_unit_test(test_bogus_tls_among_good),
        cmocka_unit_test(test_bogus_env_tls),
        cmocka_unit_test(test_library_missing_quiet),
        cmocka_unit_test(test_library_missing_requested),
        cmocka_unit_test(test_library_not_ucx),
    };

    /* TEST_FILTER=test_stream_* runs only some of them, while working on one. */
    if (getenv("TEST_FILTER"))
        cmocka_set_test_filter(getenv("TEST_FILTER"));
    return cmocka_run_group_tests(tests, test_group_setup, NULL);
}
