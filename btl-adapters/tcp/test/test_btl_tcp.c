/*
 * test_btl_tcp.c: the tcp BTL (btl-adapters/tcp) between forked "ranks" of one machine,
 * with the file-based rte (fake_rte.h) for the modex and fences.
 *
 * Each test forks its ranks; a rank runs a scenario and exits 0 when every check passed
 * (cmocka's assertions cannot cross fork, so ranks use RANK_CHECK, which prints the failed
 * condition on the test's stderr and exits 1). The parent asserts every rank's exit status.
 * An alarm bounds every rank, so a deadlock fails the test instead of hanging it.
 *
 * Datatypes are built by hand from the typemap fields of datatype.h (a byte type, and a
 * strided one for the pack path); the engine itself is tested with the datatypes.
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
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "btl.h"
#include "component.h"
#include "convertor.h"
#include "crmpi_status.h"
#include "fake_rte.h"
#include "place_check.h"
#include "log.h"
#include "param.h"
#include "tcp/btl_tcp.h"

extern const crmpi_component_t crmpi_btl_tcp_component;

/* btl_base.c's component table names self and sm too. This test never selects from it, so
 * inert stand-ins (their catalog descriptors, no query, no ops) replace their sources. */
extern const crmpi_component_info_t crmpi_btl_self_info;
extern const crmpi_component_info_t crmpi_btl_sm_info;
const crmpi_component_t crmpi_btl_self_component = {.info = &crmpi_btl_self_info};
const crmpi_component_t crmpi_btl_sm_component = {.info = &crmpi_btl_sm_info};
#if CRMPI_HAVE_LIBFABRIC
extern const crmpi_component_info_t crmpi_btl_ofi_info;
const crmpi_component_t crmpi_btl_ofi_component = {.info = &crmpi_btl_ofi_info};
#endif
#if CRMPI_HAVE_UCX
extern const crmpi_component_info_t crmpi_btl_ucx_info;
const crmpi_component_t crmpi_btl_ucx_component = {.info = &crmpi_btl_ucx_info};
#endif

/* The receive-callback tag the tests use. */
#define TEST_TAG 7
/* Seconds a rank may run before the alarm ends it (a deadlock). */
#define TEST_RANK_TIMEOUT 60
/* Largest number of ranks a test forks. */
#define TEST_MAX_RANKS 4

/* One test message's header: who sent it, its place in the sender's stream, its content. */
typedef struct test_hdr {
    uint32_t magic;       /* TEST_MAGIC: the bytes are a test message at all */
    uint32_t sender;      /* sending rank */
    uint32_t dest;        /* receiving rank */
    uint32_t seq;         /* per (sender, dest), from 0 */
    uint32_t payload_len; /* bytes after this header */
    uint32_t checksum;    /* FNV-1a of the payload */
} test_hdr_t;

#define TEST_MAGIC 0x7e57b71cu

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
    crmpi_btl_module_t *module;                /* the tcp module */
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

/* Sockets this process holds, from /proc/self/fd. */
static int test_count_sockets(void)
{
    DIR *dir = opendir("/proc/self/fd");
    struct dirent *entry;
    int sockets = 0;

    RANK_CHECK(dir != NULL, "opendir /proc/self/fd: %s", strerror(errno));
    while ((entry = readdir(dir)) != NULL) {
        char path[300];
        char target[64];
        ssize_t len;

        snprintf(path, sizeof(path), "/proc/self/fd/%s", entry->d_name);
        len = readlink(path, target, sizeof(target) - 1);
        if (len <= 0)
            continue;
        target[len] = '\0';
        sockets += strncmp(target, "socket:", 7) == 0;
    }
    closedir(dir);
    return sockets;
}

/* Redirect this rank's stderr to <dir>/<name>.<rank>, so its log lines can be checked. */
static void test_capture_begin(test_rank_t *t, const char *name)
{
    char path[600];
    int fd;

    snprintf(path, sizeof(path), "%s/%s.%u", t->dir, name, t->rank);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    RANK_CHECK(fd >= 0, "open %s: %s", path, strerror(errno));
    if (rank_report_fd == STDERR_FILENO)
        rank_report_fd = dup(STDERR_FILENO);
    RANK_CHECK(dup2(fd, STDERR_FILENO) >= 0, "dup2: %s", strerror(errno));
    close(fd);
}

/* Restore stderr and return what was captured (malloc'ed). */
static char *test_capture_end(test_rank_t *t, const char *name)
{
    char path[600];
    char *text;
    FILE *file;
    long size;

    snprintf(path, sizeof(path), "%s/%s.%u", t->dir, name, t->rank);
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

static int test_count_substr(const char *text, const char *needle)
{
    int count = 0;

    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        count++;
    return count;
}

/* The job's node map for the next test_rank_open; NULL: every rank on node 0. */
static const uint32_t *rank_node_map;

/* Become rank `rank` and create its tcp module (parameters must be set before). */
static int test_rank_open(test_rank_t *t, uint32_t rank, uint32_t size, const char *dir)
{
    const crmpi_btl_component_ops_t *ops = crmpi_btl_tcp_component.ops;
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
    crmpi_btl_test_rte_setup(dir, rank, size, rank_node_map, &job);
    RANK_CHECK(crmpi_btl_register_recv(TEST_TAG, test_recv_dispatch) == CRMPI_OK, "register");
    return ops->init(&job, &t->module);
}

/* Open the module, fence, and add every rank. */
static void test_rank_start(test_rank_t *t, uint32_t rank, uint32_t size, const char *dir)
{
    uint32_t ranks[TEST_MAX_RANKS];
    int rc = test_rank_open(t, rank, size, dir);

    RANK_CHECK(rc == CRMPI_OK, "init: %s", crmpi_strerror(rc));
    RANK_CHECK(t->module->exclusivity == BTL_TCP_EXCLUSIVITY, "exclusivity %u",
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

/* del_procs every peer, then finalize (which flushes what is still queued). */
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
        crmpi_btl_test_run_ranks("btl-tcp", size, TEST_RANK_TIMEOUT, scenario, arg, NULL), 0);
}

/* ---- ping-pong ---- */

/* Rank 1's echo: send the fragment back as it came, from inside the callback (the PML
 * answers rendezvous requests this way). */
static test_rank_t *echo_rank;
/* Rank 0's copy of the echo it waits for, and whether it came. */
static uint8_t *pong_buf;
static size_t pong_len;
static bool pong_arrived;

static void echo_on_recv(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data,
                         size_t len)
{
    const size_t hdr_len = len < sizeof(test_hdr_t) ? len : sizeof(test_hdr_t);
    int rc;

    RANK_CHECK(((uintptr_t)data & (BTL_TCP_ALIGN - 1)) == 0, "fragment at %p is not aligned", data);
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
    static const size_t sizes[] = {0,    1,    2,    3,     7,     8,     9,      100,    1000,
                                   4095, 4096, 8192, 65535, 65536, 65537, 100000, 131071, 131072};
    const char *include = arg;
    test_rank_t t;

    if (include)
        RANK_CHECK(crmpi_param_set_override("btl_tcp_if_include", include) == CRMPI_OK, "set");
    test_rank_start(&t, rank, size, dir);
    RANK_CHECK(t.module->max_send_size == 128 * 1024 && t.module->eager_limit == 64 * 1024,
               "max_send_size %zu, eager_limit %zu: not the documented defaults",
               t.module->max_send_size, t.module->eager_limit);
    if (include) {
        /* Only loopback was allowed: the peer's address must be a loopback one. */
        RANK_CHECK(strncmp(t.eps[1 - rank]->addr_text, "127.", 4) == 0, "peer address %s",
                   t.eps[1 - rank]->addr_text);
    }
    if (rank == 1) {
        echo_rank = &t;
        rank_on_recv = echo_on_recv;
        /* Until rank 0's connection closes at its finalize. */
        {
            btl_tcp_module_t *tcp = (btl_tcp_module_t *)t.module;
            bool seen_conn = false;

            while (!seen_conn || tcp->num_conns > 0) {
                t.module->progress(t.module);
                seen_conn |= tcp->num_conns > 0;
            }
        }
        test_rank_stop(&t);
        return;
    }
    rank_on_recv = pong_on_recv;
    pong_buf = malloc(t.module->max_send_size);
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        size_t len = sizes[s] < t.module->max_send_size ? sizes[s] : t.module->max_send_size;
        /* C11 7.22.3.1: the size must be a multiple of the alignment. */
        uint8_t *block = aligned_alloc(4096, (len + 8192 + 4095) & ~(size_t)4095);

        RANK_CHECK(block != NULL, "%s", "aligned_alloc");
        for (int iter = 0; iter < 20; iter++) {
            const size_t hdr_len = len < sizeof(test_hdr_t) ? len : sizeof(test_hdr_t);
            /* Page offsets 0 to 152: the sender's gap takes each of its values (btl_tcp.h,
             * "Copy alignment"), and the echo's too. */
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
    free(pong_buf);
    test_rank_stop(&t);
}

static void test_pingpong(void **state)
{
    test_run_ranks(2, scenario_pingpong, NULL);
}

static void test_if_include_lo(void **state)
{
    test_run_ranks(2, scenario_pingpong, "lo");
}

static void test_if_include_loopback_subnet(void **state)
{
    test_run_ranks(2, scenario_pingpong, "127.0.0.0/8");
}

/* ---- streams between every pair of ranks at once ---- */

typedef struct stream_params {
    uint32_t frags;            /* fragments from every rank to every other */
    const char *sndbuf;        /* btl_tcp_sndbuf / rcvbuf to force the busy path, or NULL */
    const char *max_send_size; /* btl_tcp_max_send_size, or NULL for the default */
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
               "fragment %u from rank %u: %zu bytes, "
               "header says %u + %zu",
               hdr.seq, peer_rank, len, hdr.payload_len, sizeof(hdr));
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

    if (params->sndbuf) {
        RANK_CHECK(crmpi_param_set_override("btl_tcp_sndbuf", params->sndbuf) == CRMPI_OK, "%s",
                   "set");
        RANK_CHECK(crmpi_param_set_override("btl_tcp_rcvbuf", params->sndbuf) == CRMPI_OK, "%s",
                   "set");
    }
    if (params->max_send_size)
        RANK_CHECK(crmpi_param_set_override("btl_tcp_max_send_size", params->max_send_size) ==
                       CRMPI_OK,
                   "%s", "set");
    test_rank_start(&t, rank, size, dir);
    rank_on_recv = stream_on_recv;
    max_payload = t.module->max_send_size - sizeof(test_hdr_t);
    payload = malloc(max_payload);
    RANK_CHECK(payload != NULL, "malloc");
    while (sending || stream_received < expected) {
        sending = false;
        /* One fragment to every peer in turn: all streams flow at once, both ways. */
        for (uint32_t dest = 0; dest < size; dest++) {
            test_hdr_t hdr = {.magic = TEST_MAGIC, .sender = rank, .dest = dest};
            int rc;

            if (dest == rank || next_seq[dest] == params->frags)
                continue;
            sending = true;
            hdr.seq = next_seq[dest];
            hdr.payload_len = (uint32_t)stream_payload_len(rank, dest, hdr.seq, max_payload);
            test_fill(payload, hdr.payload_len, test_msg_seed(rank, dest, hdr.seq));
            hdr.checksum = test_fnv1a(payload, hdr.payload_len);
            rc = test_send(&t, dest, &hdr, sizeof(hdr), payload, hdr.payload_len);
            if (rc == CRMPI_OK)
                next_seq[dest]++;
            else if (rc == CRMPI_ERR_RESOURCE_BUSY)
                busy++; /* no room: progress below, then the same fragment again */
            else
                RANK_CHECK(false, "send to rank %u: %s", dest, crmpi_strerror(rc));
        }
        t.module->progress(t.module);
    }
    for (uint32_t r = 0; r < size; r++)
        RANK_CHECK(r == rank || stream_expected[r] == params->frags, "%u fragments from rank %u",
                   stream_expected[r], r);
    if (params->expect_busy)
        RANK_CHECK(busy > 0, "the senders never filled the queue; the test is too gentle");
    free(payload);
    test_rank_stop(&t);
}

static void test_stream_2_small_buffers(void **state)
{
    stream_params_t params = {.frags = 3000, .sndbuf = "16k", .expect_busy = true};

    test_run_ranks(2, scenario_stream, &params);
}

static void test_stream_3(void **state)
{
    stream_params_t params = {.frags = 4000};

    test_run_ranks(3, scenario_stream, &params);
}

static void test_stream_4(void **state)
{
    /* Fragments of odd sizes up to an odd maximum: padding and the queue bound move. */
    stream_params_t params = {.frags = 3000, .max_send_size = "20001"};

    test_run_ranks(4, scenario_stream, &params);
}

/* ---- non-contiguous payloads (packed into the bounce buffer) ---- */

/* Every element: 3 runs of 5 bytes, 8 bytes apart, in an extent of 24, so fragments end in
 * the middle of runs and elements. */
#define STRIDED_RUN    5
#define STRIDED_GAP    8
#define STRIDED_RUNS   3
#define STRIDED_EXTENT 24
#define STRIDED_COUNT  200000

static crmpi_dt_run_t strided_runs[STRIDED_RUNS] = {
    {.disp = 0, .len = STRIDED_RUN, .basic_size = 1},
    {.disp = STRIDED_GAP, .len = STRIDED_RUN, .basic_size = 1},
    {.disp = 2 * STRIDED_GAP, .len = STRIDED_RUN, .basic_size = 1},
};
static struct crmpi_datatype_s strided_type = {
    .name = "test strided",
    .size = STRIDED_RUNS * STRIDED_RUN,
    .extent = STRIDED_EXTENT,
    .true_extent = 2 * STRIDED_GAP + STRIDED_RUN,
    .committed = true,
    .refcount = 1,
    .runs = strided_runs,
    .num_runs = STRIDED_RUNS,
    .basic_count = STRIDED_RUNS * STRIDED_RUN,
    .contiguous = false,
};

/* The byte of the user buffer at `offset`; the gaps hold other bytes, which must not travel. */
static uint8_t strided_byte(size_t offset)
{
    return (uint8_t)(offset * 7 + 3 + (offset >> 9));
}

/* Stream bytes rank 1 has checked. */
static size_t strided_received;

typedef struct strided_hdr {
    uint32_t magic;  /* TEST_MAGIC */
    uint32_t seq;    /* fragment number */
    uint64_t offset; /* stream position of the fragment's first payload byte */
} strided_hdr_t;

static void strided_on_recv(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data,
                            size_t len)
{
    strided_hdr_t hdr;
    const uint8_t *payload = (const uint8_t *)data + sizeof(hdr);

    RANK_CHECK(len >= sizeof(hdr), "fragment of %zu bytes", len);
    memcpy(&hdr, data, sizeof(hdr));
    RANK_CHECK(hdr.magic == TEST_MAGIC && hdr.offset == strided_received,
               "fragment %u at stream offset %llu, expected %zu", hdr.seq,
               (unsigned long long)hdr.offset, strided_received);
    for (size_t i = 0; i < len - sizeof(hdr); i++) {
        size_t pos = hdr.offset + i;
        size_t in_elem = pos % strided_type.size;
        size_t mem = pos / strided_type.size * STRIDED_EXTENT +
                     in_elem / STRIDED_RUN * STRIDED_GAP + in_elem % STRIDED_RUN;

        RANK_CHECK(payload[i] == strided_byte(mem), "stream byte %zu differs", pos);
    }
    strided_received += len - sizeof(hdr);
}

static void scenario_noncontig(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    const size_t total = (size_t)STRIDED_COUNT * strided_type.size;
    test_rank_t t;

    /* Small socket buffers, so packed fragments also go through the queue. */
    RANK_CHECK(crmpi_param_set_override("btl_tcp_sndbuf", "16k") == CRMPI_OK, "%s", "set");
    RANK_CHECK(crmpi_param_set_override("btl_tcp_rcvbuf", "16k") == CRMPI_OK, "%s", "set");
    test_rank_start(&t, rank, size, dir);
    rank_on_recv = strided_on_recv;
    if (rank == 0) {
        const size_t max_payload = t.module->max_send_size - sizeof(strided_hdr_t);
        const size_t chunks[] = {1, 7, 1000, max_payload, 4093, max_payload - 1, 65536};
        uint8_t *buf = malloc((size_t)STRIDED_COUNT * STRIDED_EXTENT);
        crmpi_convertor_t conv;
        uint32_t seq = 0;

        RANK_CHECK(buf != NULL, "%s", "malloc");
        for (size_t i = 0; i < (size_t)STRIDED_COUNT * STRIDED_EXTENT; i++)
            buf[i] = strided_byte(i);
        /* One convertor for the whole message, as the PML pipelines it. */
        crmpi_convertor_init(&conv, buf, STRIDED_COUNT, &strided_type);
        while (conv.position < total) {
            strided_hdr_t hdr = {.magic = TEST_MAGIC, .seq = seq, .offset = conv.position};
            size_t len = chunks[seq % (sizeof(chunks) / sizeof(chunks[0]))];
            int rc;

            if (len > total - conv.position)
                len = total - conv.position;
            /* Every other fragment finds the queue empty and is written straight away, with
             * the kernel taking only part of it. */
            while (seq % 2 == 0 && t.eps[1]->queue.tail != t.eps[1]->queue.head)
                t.module->progress(t.module);
            while ((rc = t.module->send(t.module, t.eps[1], TEST_TAG, &hdr, sizeof(hdr), &conv,
                                        len)) == CRMPI_ERR_RESOURCE_BUSY) {
                RANK_CHECK(conv.position == hdr.offset, "a busy send moved the convertor");
                t.module->progress(t.module);
            }
            RANK_CHECK(rc == CRMPI_OK, "send: %s", crmpi_strerror(rc));
            RANK_CHECK(conv.position == hdr.offset + len, "send consumed %zu of %zu bytes",
                       (size_t)(conv.position - hdr.offset), len);
            seq++;
        }
        free(buf);
    } else {
        while (strided_received < total)
            t.module->progress(t.module);
    }
    test_rank_stop(&t);
}

static void test_noncontiguous(void **state)
{
    test_run_ranks(2, scenario_noncontig, NULL);
}

/* ---- which address a peer is reached at ---- */

static btl_tcp_if_t test_if(const char *addr, uint8_t prefix_len, bool loopback)
{
    btl_tcp_if_t entry = {.prefix_len = prefix_len, .loopback = loopback};

    assert_int_equal(inet_pton(AF_INET, addr, &entry.addr), 1);
    return entry;
}

static void assert_chosen(const btl_tcp_if_t *mine, size_t num_mine, const btl_tcp_if_t *theirs,
                          size_t num_theirs, bool same_node, const char *expected)
{
    struct in_addr addr;
    char text[INET_ADDRSTRLEN];

    assert_int_equal(btl_tcp_if_choose_peer(mine, num_mine, theirs, num_theirs, same_node, &addr),
                     CRMPI_OK);
    inet_ntop(AF_INET, &addr, text, sizeof(text));
    assert_string_equal(text, expected);
}

static void test_choose_peer_address(void **state)
{
    const btl_tcp_if_t mine[] = {test_if("127.0.0.1", 8, true), test_if("10.0.0.2", 24, false),
                                 test_if("192.168.1.2", 24, false)};
    const btl_tcp_if_t theirs[] = {test_if("127.0.0.1", 8, true), test_if("172.16.0.5", 16, false),
                                   test_if("192.168.1.7", 24, false)};
    const btl_tcp_if_t only_lo[] = {test_if("127.0.0.1", 8, true)};
    struct in_addr addr;

    /* Same node: loopback. Another node: the address on a subnet we share. */
    assert_chosen(mine, 3, theirs, 3, true, "127.0.0.1");
    assert_chosen(mine, 3, theirs, 3, false, "192.168.1.7");
    /* No shared subnet: the first address that is not loopback. */
    assert_chosen(mine, 2, theirs, 2, false, "172.16.0.5");
    /* Same node, but we did not choose loopback ourselves: a routed address still works. */
    assert_chosen(mine + 1, 2, theirs, 3, true, "192.168.1.7");
    /* Another node's loopback would be our own. */
    assert_int_equal(btl_tcp_if_choose_peer(mine, 3, only_lo, 1, false, &addr), CRMPI_ERR_UNREACH);
}

static void test_modex_round_trip(void **state)
{
    btl_tcp_if_t mine[] = {test_if("127.0.0.1", 8, true), test_if("10.1.2.3", 20, false)};
    btl_tcp_module_t module = {.ifs = mine, .num_ifs = 2, .listen_port = 41234};
    uint8_t nonce[BTL_TCP_NONCE_LEN];
    btl_tcp_if_t *addrs;
    size_t num;
    uint16_t port;
    void *blob;
    size_t len;

    memset(module.listen_nonce, 0xa5, sizeof(module.listen_nonce));
    assert_int_equal(btl_tcp_modex_pack(&module, &blob, &len), CRMPI_OK);
    assert_int_equal(btl_tcp_modex_unpack(blob, len, &addrs, &num, &port, nonce), CRMPI_OK);
    assert_int_equal(num, 2);
    assert_int_equal(port, 41234);
    assert_memory_equal(nonce, module.listen_nonce, sizeof(nonce));
    assert_int_equal(addrs[1].addr.s_addr, mine[1].addr.s_addr);
    assert_int_equal(addrs[1].prefix_len, 20);
    assert_true(addrs[0].loopback && !addrs[1].loopback);
    free(addrs);
    /* Truncated, or from another protocol version: refused, not misread. */
    assert_int_equal(btl_tcp_modex_unpack(blob, len - 1, &addrs, &num, &port, nonce),
                     CRMPI_ERR_PROTO);
    ((btl_tcp_modex_hdr_t *)blob)->version++;
    assert_int_equal(btl_tcp_modex_unpack(blob, len, &addrs, &num, &port, nonce), CRMPI_ERR_PROTO);
    free(blob);
}

/* With only loopback allowed, ranks on different nodes cannot reach each other: add_procs
 * says so (NULL endpoints) instead of connecting each rank to itself. */
static void scenario_other_nodes(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    static const uint32_t nodes[] = {0, 1};
    uint32_t ranks[] = {0, 1};
    crmpi_btl_endpoint_t *eps[2];
    test_rank_t t;

    rank_node_map = nodes;
    RANK_CHECK(crmpi_param_set_override("btl_tcp_if_include", "lo") == CRMPI_OK, "%s", "set");
    RANK_CHECK(test_rank_open(&t, rank, size, dir) == CRMPI_OK, "%s", "init");
    RANK_CHECK(crmpi_rte_fence(1) == CRMPI_OK, "%s", "fence");
    RANK_CHECK(t.module->add_procs(t.module, 2, ranks, eps) == CRMPI_OK, "%s", "add_procs");
    RANK_CHECK(eps[0] == NULL && eps[1] == NULL, "%s", "a loopback address reached another node");
    RANK_CHECK(t.module->progress(t.module) == 0, "%s", "events without peers");
    RANK_CHECK(t.module->finalize(t.module) == CRMPI_OK, "%s", "finalize");
}

static void test_loopback_stays_on_node(void **state)
{
    test_run_ranks(2, scenario_other_nodes, NULL);
}

/* ---- interface selection errors ---- */

typedef struct if_error_params {
    const char *include;         /* btl_tcp_if_include, or NULL */
    const char *exclude;         /* btl_tcp_if_exclude, or NULL */
    const char *const *must_say; /* substrings the error must contain, NULL-terminated */
} if_error_params_t;

/* Each of two ranks (a job of one rank does not open tcp at all) must fail init with one
 * error line that says what is wrong. */
static void scenario_if_error(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    const if_error_params_t *params = arg;
    test_rank_t t;
    char *text;
    int rc;

    if (params->include)
        RANK_CHECK(crmpi_param_set_override("btl_tcp_if_include", params->include) == CRMPI_OK,
                   "set");
    if (params->exclude)
        RANK_CHECK(crmpi_param_set_override("btl_tcp_if_exclude", params->exclude) == CRMPI_OK,
                   "set");
    t.rank = rank;
    t.dir = dir;
    test_capture_begin(&t, "stderr");
    rc = test_rank_open(&t, rank, size, dir);
    text = test_capture_end(&t, "stderr");
    RANK_CHECK(rc != CRMPI_OK && rc != CRMPI_ERR_NOT_SUPPORTED,
               "init succeeded (or declined quietly): %s", crmpi_strerror(rc));
    for (const char *const *s = params->must_say; *s; s++)
        RANK_CHECK(strstr(text, *s), "the error does not say \"%s\": %s", *s, text);
    RANK_CHECK(test_count_substr(text, "error") == 1, "not exactly one error line: %s", text);
    free(text);
}

static void test_if_include_unknown(void **state)
{
    static const char *const must_say[] = {"nosuchif0", "btl_tcp_if_include", "lo", NULL};
    if_error_params_t params = {.include = "lo,nosuchif0", .must_say = must_say};

    test_run_ranks(2, scenario_if_error, &params);
}

static void test_if_include_and_exclude(void **state)
{
    static const char *const must_say[] = {"btl_tcp_if_include", "btl_tcp_if_exclude", NULL};
    if_error_params_t params = {.include = "lo", .exclude = "eth0", .must_say = must_say};

    test_run_ranks(2, scenario_if_error, &params);
}

static void test_if_bad_subnet(void **state)
{
    static const char *const must_say[] = {"127.0.0.0/33", NULL};
    if_error_params_t params = {.include = "127.0.0.0/33", .must_say = must_say};

    test_run_ranks(2, scenario_if_error, &params);
}

/* ---- connections are lazy and one-way ---- */

static int lazy_arrived;

static void lazy_on_recv(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data,
                         size_t len)
{
    lazy_arrived++;
}

static void scenario_lazy(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    const uint32_t peer = 1 - rank;
    const char ping[] = "ping";
    test_rank_t t;
    int sockets, listeners;

    test_rank_start(&t, rank, size, dir);
    rank_on_recv = lazy_on_recv;
    /* One listening socket per published address. */
    listeners = (int)((btl_tcp_module_t *)t.module)->num_ifs;
    /* add_procs knows the peer's address but must not have connected. */
    sockets = test_count_sockets();
    RANK_CHECK(sockets == listeners, "%d sockets after add_procs; only the %d listeners expected",
               sockets, listeners);
    RANK_CHECK(t.eps[peer]->fd < 0 && t.eps[peer]->state == BTL_TCP_EP_IDLE, "endpoint state %d",
               t.eps[peer]->state);
    for (int i = 0; i < 100; i++)
        t.module->progress(t.module);
    RANK_CHECK(test_count_sockets() == listeners, "progress alone opened a connection");
    RANK_CHECK(crmpi_rte_fence(0) == CRMPI_OK, "fence");

    if (rank == 0) {
        test_send_blocking(&t, peer, ping, sizeof(ping), NULL, 0);
        while (lazy_arrived == 0)
            t.module->progress(t.module);
        /* Listeners, our connection to 1, and 1's connection to us. */
        sockets = test_count_sockets();
        RANK_CHECK(sockets == listeners + 2, "%d sockets after a ping and its answer; %d expected",
                   sockets, listeners + 2);
    } else {
        while (lazy_arrived == 0)
            t.module->progress(t.module);
        /* Receiving opened nothing towards rank 0: connections are one-way. */
        sockets = test_count_sockets();
        RANK_CHECK(sockets == listeners + 1,
                   "%d sockets after receiving; listeners + accepted expected", sockets);
        RANK_CHECK(t.eps[peer]->fd < 0, "receiving connected back to the sender");
        test_send_blocking(&t, peer, ping, sizeof(ping), NULL, 0);
    }
    test_rank_stop(&t);
}

static void test_lazy_connect(void **state)
{
    test_run_ranks(2, scenario_lazy, NULL);
}

/* ---- finalize flushes what is queued ---- */

/* Fragments rank 1 has checked. */
static uint32_t flush_received;

static void flush_on_recv(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data,
                          size_t len)
{
    stream_on_recv(module, peer_rank, data, len);
    flush_received++;
}

static void scenario_finalize_flush(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    test_rank_t t;
    uint32_t count = 0;

    /* Small socket buffers: most of the burst must wait in the module's queue. */
    RANK_CHECK(crmpi_param_set_override("btl_tcp_sndbuf", "32k") == CRMPI_OK, "set");
    RANK_CHECK(crmpi_param_set_override("btl_tcp_rcvbuf", "32k") == CRMPI_OK, "set");
    test_rank_start(&t, rank, size, dir);
    rank_on_recv = flush_on_recv;
    if (rank == 0) {
        const size_t len = 60000;
        uint8_t *payload = malloc(len);
        int64_t start;
        struct timespec now;
        char *text;
        int rc;

        /* Without progress: the burst goes out until the queue is over its bound. */
        for (;;) {
            test_hdr_t hdr = {.magic = TEST_MAGIC,
                              .sender = 0,
                              .dest = 1,
                              .seq = count,
                              .payload_len = (uint32_t)len};

            test_fill(payload, len, test_msg_seed(0, 1, count));
            hdr.checksum = test_fnv1a(payload, len);
            rc = test_send(&t, 1, &hdr, sizeof(hdr), payload, len);
            if (rc == CRMPI_ERR_RESOURCE_BUSY)
                break;
            RANK_CHECK(rc == CRMPI_OK, "send: %s", crmpi_strerror(rc));
            count++;
        }
        RANK_CHECK(count >= BTL_TCP_QUEUE_LIMIT_FRAGS, "only %u fragments before busy", count);
        RANK_CHECK(crmpi_rte_modex_publish("test.count", &count, sizeof(count)) == CRMPI_OK, "%s",
                   "set");
        RANK_CHECK(crmpi_rte_fence(1) == CRMPI_OK, "fence");
        clock_gettime(CLOCK_MONOTONIC, &now);
        start = now.tv_sec * 1000 + now.tv_nsec / 1000000;
        test_capture_begin(&t, "stderr");
        test_rank_stop(&t); /* del_procs with a full queue, then finalize */
        text = test_capture_end(&t, "stderr");
        clock_gettime(CLOCK_MONOTONIC, &now);
        RANK_CHECK(text[0] == '\0', "finalize said: %s", text);
        RANK_CHECK(now.tv_sec * 1000 + now.tv_nsec / 1000000 - start < 8000,
                   "finalize took %lld ms",
                   (long long)(now.tv_sec * 1000 + now.tv_nsec / 1000000 - start));
        free(text);
        free(payload);
    } else {
        void *data;
        size_t len;
        char *text;

        RANK_CHECK(crmpi_rte_fence(1) == CRMPI_OK, "fence");
        RANK_CHECK(crmpi_rte_modex_lookup(0, "test.count", &data, &len) == CRMPI_OK, "lookup");
        memcpy(&count, data, sizeof(count));
        free(data);
        /* Let rank 0 be well inside finalize, its queue still full, before reading. */
        usleep(300 * 1000);
        test_capture_begin(&t, "stderr");
        while (flush_received < count)
            t.module->progress(t.module);
        /* Rank 0's close at a frame boundary is a normal shutdown: no message. */
        while (((btl_tcp_module_t *)t.module)->num_conns > 0)
            t.module->progress(t.module);
        text = test_capture_end(&t, "stderr");
        RANK_CHECK(text[0] == '\0', "the receiver said: %s", text);
        free(text);
        test_rank_stop(&t);
    }
}

static void test_finalize_flushes(void **state)
{
    test_run_ranks(2, scenario_finalize_flush, NULL);
}

/* ---- errors: refused connections, bad handshakes, torn frames ---- */

static void scenario_connect_refused(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    test_rank_t t;

    test_rank_start(&t, rank, size, dir);
    if (rank == 1) {
        /* Gone before rank 0 ever connects: its listening socket is closed. */
        test_rank_stop(&t);
        RANK_CHECK(crmpi_rte_fence(0) == CRMPI_OK, "fence");
        return;
    }
    RANK_CHECK(crmpi_rte_fence(0) == CRMPI_OK, "fence");
    {
        const char msg[] = "hello?";
        char expect[128];
        char *text;
        int rc;

        test_capture_begin(&t, "stderr");
        /* The refusal may be known at connect() or only at the next progress. */
        while ((rc = test_send(&t, 1, msg, sizeof(msg), NULL, 0)) == CRMPI_OK ||
               rc == CRMPI_ERR_RESOURCE_BUSY)
            t.module->progress(t.module);
        RANK_CHECK(rc == CRMPI_ERR_UNREACH, "send: %s", crmpi_strerror(rc));
        for (int i = 0; i < 10; i++) {
            t.module->progress(t.module);
            rc = test_send(&t, 1, msg, sizeof(msg), NULL, 0);
            RANK_CHECK(rc == CRMPI_ERR_UNREACH, "send after the failure: %s", crmpi_strerror(rc));
        }
        text = test_capture_end(&t, "stderr");
        snprintf(expect, sizeof(expect), "btl:tcp: rank 0 -> rank 1 (%s): connect: %s",
                 t.eps[1]->addr_text, strerror(ECONNREFUSED));
        RANK_CHECK(test_count_substr(text, expect) == 1, "expected once \"%s\", got: %s", expect,
                   text);
        RANK_CHECK(test_count_lines(text) == 1, "more than one line: %s", text);
        free(text);
    }
    test_rank_stop(&t);
}

static void test_connect_refused(void **state)
{
    test_run_ranks(2, scenario_connect_refused, NULL);
}

/* A raw client of a rank's listening socket; its listen nonce, for handshakes. */
static int raw_connect(uint32_t peer_rank, uint8_t *listen_nonce_out)
{
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    btl_tcp_if_t *addrs;
    size_t num_addrs;
    uint16_t port;
    void *blob;
    size_t len;
    int fd;

    RANK_CHECK(crmpi_rte_modex_lookup(peer_rank, BTL_TCP_MODEX_KEY, &blob, &len) == CRMPI_OK, "%s",
               "set");
    RANK_CHECK(btl_tcp_modex_unpack(blob, len, &addrs, &num_addrs, &port, listen_nonce_out) ==
                   CRMPI_OK,
               "unpack");
    free(blob);
    free(addrs);
    addr.sin_port = htons(port);
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    RANK_CHECK(fd >= 0, "socket: %s", strerror(errno));
    RANK_CHECK(connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0, "connect: %s",
               strerror(errno));
    return fd;
}

/* A handshake of rank 0 to rank 1, signed with `module`'s key (or not signed at all). */
static btl_tcp_handshake_t raw_handshake(btl_tcp_module_t *module, const uint8_t *listen_nonce,
                                         uint64_t jobid, bool sign)
{
    crmpi_btl_endpoint_t ep = {.module = module, .peer_rank = 1};
    btl_tcp_handshake_t hs = {.magic = BTL_TCP_MAGIC,
                              .version = BTL_TCP_VERSION,
                              .sender_rank = 0,
                              .receiver_rank = 1,
                              .jobid = jobid};

    memcpy(ep.listen_nonce, listen_nonce, sizeof(ep.listen_nonce));
    if (sign)
        RANK_CHECK(btl_tcp_auth_sign(&ep, &hs) == 0, "sign");
    else
        memset(hs.nonce, 7, sizeof(hs.nonce)); /* and a MAC of zeros */
    return hs;
}

/* Wait until the other end closes (it read what it wanted and judged it). */
static void raw_wait_closed(int fd)
{
    char byte;
    ssize_t got;

    while ((got = read(fd, &byte, 1)) < 0 && errno == EINTR)
        ;
    RANK_CHECK(got <= 0, "the BTL wrote to a connection it accepted");
    close(fd);
}

static void scenario_bad_peers(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    const char ping[] = "ping";
    test_rank_t t;

    test_rank_start(&t, rank, size, dir);
    rank_on_recv = lazy_on_recv;
    RANK_CHECK(crmpi_rte_fence(0) == CRMPI_OK, "fence");
    if (rank == 0) {
        btl_tcp_module_t *tcp = (btl_tcp_module_t *)t.module;
        char junk[sizeof(btl_tcp_handshake_t)] = "GET / HTTP/1.0\r\n\r\n";
        uint8_t nonce[BTL_TCP_NONCE_LEN];
        btl_tcp_handshake_t hs;
        btl_tcp_frame_hdr_t fh = {.length = 1000, .tag = TEST_TAG};
        char part[100] = {0};
        int fd;

        /* Not a crmpi peer at all: refused and closed. */
        fd = raw_connect(1, nonce);
        RANK_CHECK(send(fd, junk, sizeof(junk), MSG_NOSIGNAL) == sizeof(junk), "send");
        raw_wait_closed(fd);
        /* Someone who knows the jobid and the ranks (any user of the node does), not the key,
         * followed by a fragment: refused before the fragment is read. */
        fd = raw_connect(1, nonce);
        hs = raw_handshake(tcp, nonce, tcp->jobid, false);
        RANK_CHECK(send(fd, &hs, sizeof(hs), MSG_NOSIGNAL) == sizeof(hs), "send");
        RANK_CHECK(send(fd, &fh, sizeof(fh), MSG_NOSIGNAL) == sizeof(fh), "send");
        raw_wait_closed(fd);
        /* A rank of the same key meaning another job: refused. */
        fd = raw_connect(1, nonce);
        hs = raw_handshake(tcp, nonce, tcp->jobid + 1, true);
        RANK_CHECK(send(fd, &hs, sizeof(hs), MSG_NOSIGNAL) == sizeof(hs), "send");
        raw_wait_closed(fd);
        /* A rank that dies in the middle of a fragment. */
        fd = raw_connect(1, nonce);
        hs = raw_handshake(tcp, nonce, tcp->jobid, true);
        RANK_CHECK(send(fd, &hs, sizeof(hs), MSG_NOSIGNAL) == sizeof(hs), "send");
        RANK_CHECK(send(fd, &fh, sizeof(fh), MSG_NOSIGNAL) == sizeof(fh), "send");
        RANK_CHECK(send(fd, part, sizeof(part), MSG_NOSIGNAL) == sizeof(part), "send");
        shutdown(fd, SHUT_WR);
        raw_wait_closed(fd);
        /* That handshake again, as one who recorded it would send it: refused. */
        fd = raw_connect(1, nonce);
        RANK_CHECK(send(fd, &hs, sizeof(hs), MSG_NOSIGNAL) == sizeof(hs), "send");
        raw_wait_closed(fd);
        /* The module still works. */
        test_send_blocking(&t, 1, ping, sizeof(ping), NULL, 0);
    } else {
        btl_tcp_module_t *tcp = (btl_tcp_module_t *)t.module;
        char *text;

        /* It listens on its published addresses only, never on every address. */
        for (size_t i = 0; i < tcp->num_ifs; i++) {
            struct sockaddr_in sin;
            socklen_t sin_len = sizeof(sin);

            RANK_CHECK(getsockname(tcp->listeners[i].fd, (struct sockaddr *)&sin, &sin_len) == 0,
                       "getsockname");
            RANK_CHECK(sin.sin_addr.s_addr == tcp->ifs[i].addr.s_addr &&
                           ntohs(sin.sin_port) == tcp->listen_port,
                       "listener %zu is not on its published address", i);
        }
        test_capture_begin(&t, "stderr");
        while (lazy_arrived == 0)
            t.module->progress(t.module);
        text = test_capture_end(&t, "stderr");
        RANK_CHECK(strstr(text, "refused the connection from 127.0.0.1") &&
                       strstr(text, "not a crmpi tcp connection"),
                   "junk was not refused: %s", text);
        RANK_CHECK(strstr(text, "does not prove the job's key"),
                   "a handshake without the key was not refused: %s", text);
        RANK_CHECK(strstr(text, "it was meant for rank 1 of job"),
                   "another job was not refused: %s", text);
        RANK_CHECK(strstr(text, "rank 1 <- rank 0") &&
                       strstr(text, "closed in the middle of a fragment"),
                   "the torn fragment was not reported: %s", text);
        RANK_CHECK(strstr(text, "used before (a replay)"), "a replay was not refused: %s", text);
        RANK_CHECK(test_count_lines(text) == 5, "not exactly five lines: %s", text);
        free(text);
    }
    test_rank_stop(&t);
}

static void test_bad_peers(void **state)
{
    test_run_ranks(2, scenario_bad_peers, NULL);
}

/* ---- placement: payloads written straight into the receiver's buffer (btl.h) ---- */

/*
 * place_check.h's stream: a primer (declined: it takes the copy path), then only large
 * fragments, each placed. After a large fragment the module reads the next header alone,
 * so each placed payload is read straight into its destination: at most
 * BTL_TCP_CONN_HEAD_READ bytes of it pass through the connection's buffer. Without
 * placement every fragment reaches the recv callback.
 */
static void scenario_place(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    test_rank_t t;

    crmpi_btl_test_place_register();
    if (arg)
        RANK_CHECK(crmpi_param_set_override("btl_tcp_recv_place", "0") == CRMPI_OK, "set");
    test_rank_start(&t, rank, size, dir);
    RANK_CHECK(!!(t.module->flags & CRMPI_BTL_FLAG_RECV_PLACE) == !arg, "flags %#x",
               t.module->flags);
    if (rank == 0) {
        crmpi_btl_test_place_send(t.module, t.eps[1], false);
    } else {
        crmpi_btl_test_place_receive(t.module, false, !arg);
    }
    test_rank_stop(&t);
}

static void test_place(void **state)
{
    test_run_ranks(2, scenario_place, NULL);
}

static void test_place_off(void **state)
{
    test_run_ranks(2, scenario_place, "off");
}

/* A peer that dies in the middle of a placed payload: placed() runs once, with an error,
 * and the module goes on with the other connections. */
static void scenario_place_torn(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    const char ping[] = "ping";
    test_rank_t t;

    crmpi_btl_test_place_register();
    test_rank_start(&t, rank, size, dir);
    RANK_CHECK(crmpi_rte_fence(0) == CRMPI_OK, "fence");
    if (rank == 0) {
        btl_tcp_module_t *tcp = (btl_tcp_module_t *)t.module;
        uint8_t nonce[BTL_TCP_NONCE_LEN];
        const size_t len = 200000;
        crmpi_btl_test_place_hdr_t h = {.magic = CRMPI_BTL_TEST_PLACE_MAGIC,
                                        .kind = CRMPI_BTL_TEST_PLACE_WHOLE};
        btl_tcp_frame_hdr_t fh = {.length = sizeof(h) + len, .tag = CRMPI_BTL_TEST_PLACE_TAG};
        btl_tcp_handshake_t hs;
        static char part[50000];
        int fd;

        fd = raw_connect(1, nonce);
        hs = raw_handshake(tcp, nonce, tcp->jobid, true);
        RANK_CHECK(send(fd, &hs, sizeof(hs), MSG_NOSIGNAL) == sizeof(hs), "send");
        RANK_CHECK(send(fd, &fh, sizeof(fh), MSG_NOSIGNAL) == sizeof(fh), "send");
        RANK_CHECK(send(fd, &h, sizeof(h), MSG_NOSIGNAL) == sizeof(h), "send");
        RANK_CHECK(send(fd, part, sizeof(part), MSG_NOSIGNAL) == sizeof(part), "send");
        shutdown(fd, SHUT_WR);
        raw_wait_closed(fd);
        test_send_blocking(&t, 1, ping, sizeof(ping), NULL, 0);
    } else {
        crmpi_btl_test_place_result_t result;
        char *text;

        crmpi_btl_test_place_begin(200000);
        rank_on_recv = lazy_on_recv;
        test_capture_begin(&t, "stderr");
        while (lazy_arrived == 0)
            t.module->progress(t.module);
        text = test_capture_end(&t, "stderr");
        crmpi_btl_test_place_end(&result);
        RANK_CHECK(result.failed == 1 && result.placed == 0 && !result.pending,
                   "placed %u, failed %u, pending %d", result.placed, result.failed,
                   result.pending);
        RANK_CHECK(strstr(text, "closed in the middle of a fragment"), "not reported: %s", text);
        free(text);
    }
    test_rank_stop(&t);
}

static void test_place_torn(void **state)
{
    test_run_ranks(2, scenario_place_torn, NULL);
}

/* ---- a module no peer uses costs no syscall ---- */

/*
 * The check: with the module's epoll descriptor replaced by -1, a progress call that asks
 * epoll sets errno to EBADF; one that makes no syscall leaves errno alone. A module that
 * reads its one peer directly asks epoll only every few calls, hence the rounds.
 */
static bool idle_progress_made_syscall(test_rank_t *t)
{
    btl_tcp_module_t *tcp = (btl_tcp_module_t *)t->module;
    int epoll_fd = tcp->epoll_fd;
    bool syscall_seen = false;

    tcp->epoll_fd = -1;
    for (int round = 0; round < 64; round++) {
        errno = 0;
        t->module->progress(t->module);
        syscall_seen |= errno != 0;
    }
    tcp->epoll_fd = epoll_fd;
    return syscall_seen;
}

static void scenario_idle(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    uint32_t ranks[TEST_MAX_RANKS];
    crmpi_btl_endpoint_t *eps[TEST_MAX_RANKS];
    size_t num = 0;
    test_rank_t t;

    test_rank_start(&t, rank, size, dir);
    /* Control: peers in use, so progress polls. */
    RANK_CHECK(idle_progress_made_syscall(&t), "progress with peers made no syscall");
    /* The BML serves every peer by sm or self and deletes them here. */
    for (uint32_t r = 0; r < size; r++) {
        if (t.eps[r]) {
            ranks[num] = r;
            eps[num++] = t.eps[r];
            t.eps[r] = NULL;
        }
    }
    RANK_CHECK(t.module->del_procs(t.module, num, ranks, eps) == CRMPI_OK, "del_procs");
    RANK_CHECK(!idle_progress_made_syscall(&t), "progress of an unused module made a syscall");
    RANK_CHECK(t.module->progress(t.module) == 0, "events from an unused module");
    RANK_CHECK(t.module->finalize(t.module) == CRMPI_OK, "finalize");
}

static void test_idle_progress(void **state)
{
    test_run_ranks(2, scenario_idle, NULL);
}

static int test_group_setup(void **state)
{
    /* Only what each test sets: not the user's CRMPI_MCA_* nor a parameter file. */
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
    setenv("CRMPI_PARAM_FILE", "/dev/null", 1);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_choose_peer_address),
        cmocka_unit_test(test_modex_round_trip),
        cmocka_unit_test(test_pingpong),
        cmocka_unit_test(test_if_include_lo),
        cmocka_unit_test(test_if_include_loopback_subnet),
        cmocka_unit_test(test_loopback_stays_on_node),
        cmocka_unit_test(test_if_include_unknown),
        cmocka_unit_test(test_if_include_and_exclude),
        cmocka_unit_test(test_if_bad_subnet),
        cmocka_unit_test(test_lazy_connect),
        cmocka_unit_test(test_stream_2_small_buffers),
        cmocka_unit_test(test_stream_3),
        cmocka_unit_test(test_stream_4),
        cmocka_unit_test(test_noncontiguous),
        cmocka_unit_test(test_place),
        cmocka_unit_test(test_place_off),
        cmocka_unit_test(test_place_torn),
        cmocka_unit_test(test_finalize_flushes),
        cmocka_unit_test(test_connect_refused),
        cmocka_unit_test(test_bad_peers),
        cmocka_unit_test(test_idle_progress),
    };

    return cmocka_run_group_tests(tests, test_group_setup, NULL);
}
