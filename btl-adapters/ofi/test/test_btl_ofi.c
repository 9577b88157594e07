/*
 * test_btl_ofi.c: the ofi BTL (btl-adapters/ofi) between forked "ranks" of one machine,
 * over the libfabric providers found here, with the file-based rte (fake_rte.h).
 *
 * Each test forks its ranks; a rank runs a scenario and exits 0 when every check passed
 * (cmocka's assertions cannot cross fork, so ranks use RANK_CHECK, which prints the failed
 * condition on the test's stderr and exits 1). An alarm bounds every rank, so a deadlock
 * fails the test instead of hanging it. A provider this machine's libfabric lacks makes
 * its tests skip, saying so.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
#include "ofi/btl_ofi.h"
#include "param.h"

extern const crmpi_component_t crmpi_btl_ofi_component;

/* btl_base.c's component table names every BTL; this test links only ofi and never opens
 * the framework, so the others are inert stand-ins with their catalog descriptors. */
extern const crmpi_component_info_t crmpi_btl_self_info;
extern const crmpi_component_info_t crmpi_btl_sm_info;
extern const crmpi_component_info_t crmpi_btl_tcp_info;
const crmpi_component_t crmpi_btl_self_component = {.info = &crmpi_btl_self_info};
const crmpi_component_t crmpi_btl_sm_component = {.info = &crmpi_btl_sm_info};
const crmpi_component_t crmpi_btl_tcp_component = {.info = &crmpi_btl_tcp_info};
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
    crmpi_btl_module_t *module;                /* the ofi module */
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

/* The job's node map for the next test_rank_open; NULL: every rank on node 0. */
static const uint32_t *rank_node_map;
/* The next test_rank_open gives its module another job's key (an intruder's). */
static bool rank_other_key;

/* Become rank `rank` and create its ofi module (parameters must be set before). */
static int test_rank_open(test_rank_t *t, uint32_t rank, uint32_t size, const char *dir)
{
    const crmpi_btl_component_ops_t *ops = crmpi_btl_ofi_component.ops;
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
    if (rank_other_key)
        job.job_key[0] ^= 1;
    RANK_CHECK(crmpi_btl_register_recv(TEST_TAG, test_recv_dispatch) == CRMPI_OK, "register");
    return ops->init(&job, &t->module);
}

/*
 * Use `provider` ("" for the automatic choice); a provider missing here skips the test.
 * The IP providers use the loopback interface: libfabric's first one may be a bridge that
 * another user of the machine deletes and creates again (TCP then waits for its address,
 * retransmitting with backoff, for tens of seconds).
 */
static void test_use_provider(const char *provider)
{
    RANK_CHECK(crmpi_param_set_override("btl_ofi_provider", provider) == CRMPI_OK, "set");
    RANK_CHECK(crmpi_param_set_override("btl_ofi_domain", strcmp(provider, "shm") ? "lo" : "") ==
                   CRMPI_OK,
               "set");
}

/* Open the module, fence, and add every rank. */
static void test_rank_start(test_rank_t *t, uint32_t rank, uint32_t size, const char *dir)
{
    uint32_t ranks[TEST_MAX_RANKS];
    const char *provider = "";
    int rc;

    rc = test_rank_open(t, rank, size, dir);
    crmpi_param_get_string("btl_ofi_provider", &provider);
    if (rc == CRMPI_ERR_BAD_PARAM && provider[0])
        _exit(CRMPI_BTL_TEST_EXIT_SKIP); /* said why on stderr: no such provider here */
    RANK_CHECK(rc == CRMPI_OK, "init: %s", crmpi_strerror(rc));
    RANK_CHECK(t->module->exclusivity == BTL_OFI_EXCLUSIVITY, "exclusivity %u",
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

/* del_procs every peer, then finalize (which waits for the sends in flight). */
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
    uint32_t skipped;

    assert_int_equal(
        crmpi_btl_test_run_ranks("btl-ofi", size, TEST_RANK_TIMEOUT, scenario, arg, &skipped), 0);
    if (skipped == size)
        skip();
    assert_int_equal(skipped, 0);
}

/* ---- ping-pong, over each provider ---- */

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

    /* Fragments reach the callback 16-byte aligned (btl_ofi.h, btl_ofi_hdr_t). */
    RANK_CHECK(((uintptr_t)data & 15) == 0, "fragment at %p is not aligned", data);
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
    /* Around ofi_rxm's eager (16 KiB) and segmentation (128 KiB) limits, up to the largest
     * fragment (256 KiB). */
    static const size_t sizes[] = {0,     1,     2,      3,      7,      8,      9,      100,
                                   1000,  4095,  4096,   8192,   16383,  16384,  16385,  65535,
                                   65536, 65537, 131071, 131072, 131073, 200000, 262143, 262144};
    const test_hdr_t done = {.magic = TEST_DONE};
    test_rank_t t;

    test_use_provider(arg);
    test_rank_start(&t, rank, size, dir);
    if (rank == 1) {
        echo_rank = &t;
        rank_on_recv = echo_on_recv;
        while (!echo_done)
            t.module->progress(t.module);
        test_rank_stop(&t);
        return;
    }
    RANK_CHECK(t.module->max_send_size == 256 * 1024 && t.module->eager_limit == 64 * 1024,
               "max_send_size %zu, eager_limit %zu: not the documented defaults",
               t.module->max_send_size, t.module->eager_limit);
    rank_on_recv = pong_on_recv;
    pong_buf = malloc(t.module->max_send_size);
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        size_t len = sizes[s] < t.module->max_send_size ? sizes[s] : t.module->max_send_size;
        /* C11 7.22.3.1: the size must be a multiple of the alignment. */
        uint8_t *block = aligned_alloc(4096, (len + 8192 + 4095) & ~(size_t)4095);

        RANK_CHECK(block != NULL, "%s", "aligned_alloc");
        for (int iter = 0; iter < 10; iter++) {
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
    test_rank_stop(&t);
}

static void test_pingpong_auto(void **state)
{
    test_run_ranks(2, scenario_pingpong, "");
}

static void test_pingpong_sockets(void **state)
{
    test_run_ranks(2, scenario_pingpong, "sockets");
}

static void test_pingpong_udp(void **state)
{
    test_run_ranks(2, scenario_pingpong, "udp;ofi_rxd");
}

static void test_pingpong_shm(void **state)
{
    test_run_ranks(2, scenario_pingpong, "shm");
}

/* ---- streams between every pair of ranks at once ---- */

typedef struct stream_params {
    const char *provider;      /* btl_ofi_provider */
    uint32_t frags;            /* fragments from every rank to every other */
    const char *max_send_size; /* btl_ofi_max_send_size, or NULL for the default */
    const char *buffers;       /* btl_ofi_send_buffers and recv_buffers, or NULL */
    bool expect_busy;          /* the senders must have met CRMPI_ERR_RESOURCE_BUSY */
    bool expect_early;         /* some fragments must have completed before their turn */
    bool announced;            /* large payloads go by tag (btl_ofi_recv_place), declined */
} stream_params_t;

/* The stream's placer when payloads are announced: it declines every one, so that each goes
 * through the announce, its tagged receive and the recv callback, in turn with the others. */
static bool stream_decline(crmpi_btl_module_t *module, uint32_t peer_rank, const void *hdr,
                           size_t payload_len, crmpi_btl_place_t *place_out)
{
    return false;
}

static void stream_placed(crmpi_btl_module_t *module, uint32_t peer_rank, void *cookie, int status)
{
    RANK_CHECK(false, "%s", "placed() after every placement was declined");
}

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

    test_use_provider(params->provider);
    if (params->max_send_size)
        RANK_CHECK(crmpi_param_set_override("btl_ofi_max_send_size", params->max_send_size) ==
                       CRMPI_OK,
                   "%s", "set");
    if (params->buffers) {
        RANK_CHECK(crmpi_param_set_override("btl_ofi_send_buffers", params->buffers) == CRMPI_OK,
                   "%s", "set");
        RANK_CHECK(crmpi_param_set_override("btl_ofi_recv_buffers", params->buffers) == CRMPI_OK,
                   "%s", "set");
    }
    if (params->announced) {
        RANK_CHECK(crmpi_param_set_override("btl_ofi_recv_place", "1") == CRMPI_OK, "%s", "set");
        RANK_CHECK(crmpi_btl_register_place(TEST_TAG, sizeof(test_hdr_t), stream_decline,
                                            stream_placed) == CRMPI_OK,
                   "%s", "register place");
    }
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
        RANK_CHECK(busy > 0, "the senders never ran out of buffers; the test is too gentle");
    if (params->expect_early)
        RANK_CHECK(((btl_ofi_module_t *)t.module)->num_early > 0,
                   "no fragment completed before its turn: the order was never at stake");
    if (params->announced)
        RANK_CHECK(((btl_ofi_module_t *)t.module)->num_payloads > 0, "%s",
                   "no payload was announced");
    free(payload);
    test_rank_stop(&t);
}

static void test_stream_2_few_buffers(void **state)
{
    stream_params_t params = {.provider = "", .frags = 3000, .buffers = "4", .expect_busy = true};

    test_run_ranks(2, scenario_stream, &params);
}

static void test_stream_3(void **state)
{
    /* ofi_rxm completes the fragments it segments (above 16 KiB) after smaller ones sent
     * behind them: thousands of times here, all of them delivered in turn. */
    stream_params_t params = {.provider = "", .frags = 3000, .expect_early = true};

    test_run_ranks(3, scenario_stream, &params);
}

static void test_stream_4_large_fragments(void **state)
{
    /* Fragments of odd sizes up to 1 MB: ofi_rxm's rendezvous (above 128 KiB) too. */
    stream_params_t params = {.provider = "",
                              .frags = 400,
                              .max_send_size = "1000001",
                              .buffers = "8",
                              .expect_early = true};

    test_run_ranks(4, scenario_stream, &params);
}

static void test_stream_3_announced(void **state)
{
    /* Every payload of 16 KiB or more announced, received by tag behind its header and held
     * up the sender's later fragments; few buffers, so that sends and announces meet a full
     * queue. */
    stream_params_t params = {
        .provider = "", .frags = 2000, .buffers = "4", .expect_busy = true, .announced = true};

    test_run_ranks(3, scenario_stream, &params);
}

static void test_stream_3_sockets(void **state)
{
    stream_params_t params = {.provider = "sockets", .frags = 2000};

    test_run_ranks(3, scenario_stream, &params);
}

/* ---- non-contiguous payloads (packed into the send buffer) ---- */

/* Every element: 3 runs of 5 bytes, 8 bytes apart, in an extent of 24, so fragments end in
 * the middle of runs and elements. */
#define STRIDED_RUN    5
#define STRIDED_GAP    8
#define STRIDED_RUNS   3
#define STRIDED_EXTENT 24
#define STRIDED_COUNT  100000

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

/*
 * Rank 0 packs a strided buffer fragment by fragment with two send buffers and no progress
 * in between, so the pool runs dry in the middle of the stream: a busy send must leave the
 * convertor where it was, and the next one must go on from there.
 */
static void scenario_noncontig(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    const size_t total = (size_t)STRIDED_COUNT * strided_type.size;
    test_rank_t t;

    test_use_provider("");
    RANK_CHECK(crmpi_param_set_override("btl_ofi_send_buffers", "2") == CRMPI_OK, "set");
    test_rank_start(&t, rank, size, dir);
    if (rank == 1) {
        rank_on_recv = strided_on_recv;
        while (strided_received < total)
            t.module->progress(t.module);
    } else {
        uint8_t *buf = malloc((size_t)STRIDED_COUNT * STRIDED_EXTENT);
        crmpi_convertor_t conv;
        uint32_t seq = 0;
        unsigned busy = 0;

        RANK_CHECK(buf != NULL, "malloc");
        for (size_t i = 0; i < (size_t)STRIDED_COUNT * STRIDED_EXTENT; i++)
            buf[i] = strided_byte(i);
        crmpi_convertor_init(&conv, buf, STRIDED_COUNT, &strided_type);
        while (conv.position < total) {
            /* Odd fragment sizes: the pack stops inside runs and elements. */
            size_t chunk =
                1000 + (seq * 7919) % (t.module->max_send_size - 1000 - sizeof(strided_hdr_t));
            strided_hdr_t hdr = {.magic = TEST_MAGIC, .seq = seq, .offset = conv.position};
            size_t before = conv.position;
            int rc;

            if (chunk > total - conv.position)
                chunk = total - conv.position;
            rc = t.module->send(t.module, t.eps[1], TEST_TAG, &hdr, sizeof(hdr), &conv, chunk);
            if (rc == CRMPI_ERR_RESOURCE_BUSY) {
                RANK_CHECK(conv.position == before, "a busy send moved the convertor");
                busy++;
                t.module->progress(t.module);
                continue;
            }
            RANK_CHECK(rc == CRMPI_OK, "send: %s", crmpi_strerror(rc));
            RANK_CHECK(conv.position == before + chunk, "the send packed %zu of %zu bytes",
                       conv.position - before, chunk);
            seq++;
        }
        RANK_CHECK(busy > 0, "two send buffers never ran out; the test is too gentle");
        free(buf);
    }
    test_rank_stop(&t);
}

static void test_noncontiguous(void **state)
{
    test_run_ranks(2, scenario_noncontig, NULL);
}

/* ---- fragments completed out of turn are delivered in turn ---- */

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

/*
 * The providers here complete in order on a quiet machine, so the early arrivals are made
 * by hand: receive completions of rank 1's fragments 2, 0, 3, 1 (and a duplicate of 0) go
 * straight to btl_ofi_recv_complete, with buffers of the test's own; the module posts them
 * to its endpoint after delivery, and finalize closes them with it.
 */
static void scenario_reorder(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    static const uint32_t order[] = {2, 0, 3, 1, 0};
    static const int delivered[] = {0, 1, 0, 3, 0};
    btl_ofi_module_t *module;
    btl_ofi_buf_t *bufs;
    char *capture;
    test_rank_t t;

    test_use_provider("");
    RANK_CHECK(test_rank_open(&t, 0, 2, dir) == CRMPI_OK, "init");
    module = (btl_ofi_module_t *)t.module;
    /* Rank 1 published nothing, so it is unreachable, but its fragments' token is known. */
    RANK_CHECK(t.module->add_procs(t.module, 1, &(uint32_t){1}, t.eps) == CRMPI_OK &&
                   t.eps[0] == NULL && module->peers[1].known,
               "add_procs");
    rank_on_recv = reorder_on_recv;
    bufs = calloc(5, sizeof(*bufs));
    RANK_CHECK(bufs != NULL, "calloc");
    test_capture_begin(dir, "reorder");
    for (size_t i = 0; i < 5; i++) {
        btl_ofi_hdr_t wire = {.sender_rank = 1, .seq = order[i], .tag = TEST_TAG};
        uint32_t value = 100 + order[i];
        int count;

        memcpy(wire.token, module->peers[1].token, sizeof(wire.token));
        bufs[i].op.kind = BTL_OFI_OP_RECV;
        /* C11 7.22.3.1: the size must be a multiple of the alignment. */
        bufs[i].data = aligned_alloc(BTL_OFI_PAGE, (module->buf_size + BTL_OFI_PAGE - 1) &
                                                       ~(size_t)(BTL_OFI_PAGE - 1));
        RANK_CHECK(bufs[i].data != NULL, "aligned_alloc");
        memcpy(bufs[i].data, &wire, sizeof(wire));
        memcpy(bufs[i].data + BTL_OFI_HDR_SIZE, &value, sizeof(value));
        count = btl_ofi_recv_complete(module, &bufs[i], BTL_OFI_HDR_SIZE + sizeof(value), true);
        RANK_CHECK(count == delivered[i], "completion of fragment %u delivered %d, not %d",
                   order[i], count, delivered[i]);
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
    for (size_t i = 0; i < 5; i++)
        free(bufs[i].data);
    free(bufs);
}

static void test_reorder(void **state)
{
    test_run_ranks(1, scenario_reorder, NULL);
}

/* ---- placement: payloads received by tag straight into the receiver's buffer ---- */

/* Who takes placed payloads: btl_ofi_recv_place of each rank, and the provider. */
typedef struct place_params {
    const char *provider; /* "": the automatic choice */
    bool sender_place;    /* rank 0's btl_ofi_recv_place */
    bool receiver_place;  /* rank 1's */
} place_params_t;

/*
 * place_check.h's stream with small fragments in between, rank 0 to rank 1. When rank 1
 * takes placed payloads and rank 0 can send by tag, every large fragment is announced and
 * placed: one piece straight into the destination, the others (three pieces where the
 * provider takes fewer, a discarded tail) through a buffer and a copy; the declined primer
 * reaches the recv callback with its payload. Otherwise nothing is announced.
 */
static void scenario_place(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    const place_params_t *params = arg;
    const bool mine = rank == 0 ? params->sender_place : params->receiver_place;
    const bool placing = params->sender_place && params->receiver_place;
    btl_ofi_module_t *module;
    test_rank_t t;

    crmpi_btl_test_place_register();
    test_use_provider(params->provider);
    RANK_CHECK(crmpi_param_set_override("btl_ofi_recv_place", mine ? "1" : "0") == CRMPI_OK, "set");
    test_rank_start(&t, rank, size, dir);
    module = (btl_ofi_module_t *)t.module;
    RANK_CHECK(!!(t.module->flags & CRMPI_BTL_FLAG_RECV_PLACE) == mine, "flags %#x",
               t.module->flags);
    if (rank == 0) {
        RANK_CHECK(t.eps[1]->announce == placing, "announce %d", t.eps[1]->announce);
        crmpi_btl_test_place_send(t.module, t.eps[1], true);
    } else {
        crmpi_btl_test_place_receive(t.module, true, placing);
        RANK_CHECK((module->placed_bytes > 0) == placing &&
                       (module->place_copied_bytes > 0) == placing,
                   "%llu bytes placed, %llu copied", (unsigned long long)module->placed_bytes,
                   (unsigned long long)module->place_copied_bytes);
    }
    /* Rank 0's finalize progresses until rank 1 has taken every send. */
    test_rank_stop(&t);
}

static void test_place(void **state)
{
    place_params_t params = {.provider = "", .sender_place = true, .receiver_place = true};

    test_run_ranks(2, scenario_place, &params);
}

static void test_place_sockets(void **state)
{
    place_params_t params = {.provider = "sockets", .sender_place = true, .receiver_place = true};

    test_run_ranks(2, scenario_place, &params);
}

static void test_place_shm(void **state)
{
    place_params_t params = {.provider = "shm", .sender_place = true, .receiver_place = true};

    test_run_ranks(2, scenario_place, &params);
}

/* Ranks may differ: a receiver that does not take placed payloads is sent whole fragments,
 * and so is every receiver of a sender that does not send by tag. */
static void test_place_receiver_off(void **state)
{
    place_params_t params = {.provider = "", .sender_place = true, .receiver_place = false};

    test_run_ranks(2, scenario_place, &params);
}

static void test_place_sender_off(void **state)
{
    place_params_t params = {.provider = "", .sender_place = false, .receiver_place = true};

    test_run_ranks(2, scenario_place, &params);
}

/* ---- finalize waits for the sends in flight ---- */

/* Rank 0 sends a burst and finalizes at once, with up to a pool of fragments still in
 * flight; rank 1 keeps reading, as a peer inside MPI does: every fragment must arrive. */
static void scenario_finalize_flush(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    const uint32_t frags = 400;
    test_rank_t t;

    test_use_provider(arg);
    test_rank_start(&t, rank, size, dir);
    if (rank == 0) {
        uint8_t *payload = malloc(t.module->max_send_size);
        btl_ofi_module_t *module = (btl_ofi_module_t *)t.module;

        RANK_CHECK(payload != NULL, "malloc");
        for (uint32_t seq = 0; seq < frags; seq++) {
            test_hdr_t hdr = {.magic = TEST_MAGIC, .sender = 0, .dest = 1, .seq = seq};

            hdr.payload_len =
                (uint32_t)stream_payload_len(0, 1, seq, t.module->max_send_size - sizeof(hdr));
            test_fill(payload, hdr.payload_len, test_msg_seed(0, 1, seq));
            hdr.checksum = test_fnv1a(payload, hdr.payload_len);
            test_send_blocking(&t, 1, &hdr, sizeof(hdr), payload, hdr.payload_len);
        }
        free(payload);
        RANK_CHECK(module->num_sending > 0, "nothing in flight at finalize: the test is vacuous");
        test_rank_stop(&t);
    } else {
        rank_on_recv = stream_on_recv;
        while (stream_received < frags)
            t.module->progress(t.module);
        test_rank_stop(&t);
    }
}

static void test_finalize_flushes(void **state)
{
    test_run_ranks(2, scenario_finalize_flush, "");
}

static void test_finalize_flushes_sockets(void **state)
{
    test_run_ranks(2, scenario_finalize_flush, "sockets");
}

/* ---- who may send: forged fragments are refused, and the module goes on ---- */

/* Forged fragments of each kind the intruder sends: one line each is logged all the same. */
#define AUTH_REPEAT 5
/* Fragments the real peer sends afterwards. */
#define AUTH_LEGIT 300
/* What the intruder's fragments carry: delivered, they would fail stream_on_recv. */
#define AUTH_FORGED_MAGIC 0xbadbadbau

/* A barrier of every rank that progresses the module while it waits: a provider that needs
 * the peer's progress to complete a send (a connection being made) still gets it. */
static void test_barrier_progress(test_rank_t *t, const char *name)
{
    char path[600];
    struct stat st;
    int fd;

    snprintf(path, sizeof(path), "%s/%s.%u", t->dir, name, t->rank);
    fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    RANK_CHECK(fd >= 0, "open %s: %s", path, strerror(errno));
    close(fd);
    for (uint32_t r = 0; r < t->size; r++) {
        snprintf(path, sizeof(path), "%s/%s.%u", t->dir, name, r);
        while (stat(path, &st) != 0)
            t->module->progress(t->module);
    }
}

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
    btl_ofi_module_t *module = (btl_ofi_module_t *)t->module;
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

    test_use_provider(arg);
    for (int round = 0; round < 2; round++) {
        snprintf(subdir[round], sizeof(subdir[round]), "%s/r%d", dir, round);
        mkdir(subdir[round], 0700);
    }
    /* The first module of every rank; rank 0 keeps its token to the victim where the
     * intruder finds it. */
    test_rank_start(&t, rank, size, subdir[0]);
    if (rank == 0)
        test_file_put(dir, "token0", t.eps[victim]->token, CRMPI_BTL_AUTH_TOKEN_LEN);
    test_barrier_progress(&t, "built");
    test_rank_stop(&t);
    crmpi_framework_close(&crmpi_btl_framework);

    /* The second: new nonces. */
    rank_other_key = rank == 2;
    test_rank_start(&t, rank, size, subdir[1]);
    rank_other_key = false;
    rank_on_recv = stream_on_recv;
    if (rank == victim) {
        btl_ofi_module_t *module = (btl_ofi_module_t *)t.module;
        char *text;

        test_capture_begin(dir, "forged");
        while (module->auth.num_refused < 4 * AUTH_REPEAT)
            t.module->progress(t.module);
        test_barrier_progress(&t, "forged");
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
                "btl:ofi: rank 1: refused a fragment claiming to come from rank %u: ", claimed);
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
        const btl_ofi_modex_t *modex;
        crmpi_btl_auth_t real;
        const void *addr;
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
        RANK_CHECK(crmpi_rte_modex_lookup(victim, BTL_OFI_MODEX_KEY, &blob, &len) == CRMPI_OK &&
                       btl_ofi_modex_unpack(blob, len, &modex, &addr) == CRMPI_OK,
                   "the victim's modex");
        RANK_CHECK(crmpi_btl_auth_init(&real, "ofi", job) == CRMPI_OK, "auth");
        crmpi_btl_auth_token(&real, unknown_rank, victim, modex->nonce, token);
        crmpi_btl_auth_fini(&real);
        free(blob);
        auth_send_forged(&t, victim, unknown_rank, token);
        while (((btl_ofi_module_t *)t.module)->num_sending > 0)
            t.module->progress(t.module);
        test_barrier_progress(&t, "forged");
    } else if (rank == 0) {
        uint8_t payload[2000];

        test_barrier_progress(&t, "forged");
        for (uint32_t seq = 0; seq < AUTH_LEGIT; seq++) {
            test_hdr_t hdr = {.magic = TEST_MAGIC, .sender = 0, .dest = victim, .seq = seq};

            hdr.payload_len = (seq * 37) % sizeof(payload);
            test_fill(payload, hdr.payload_len, test_msg_seed(0, victim, seq));
            hdr.checksum = test_fnv1a(payload, hdr.payload_len);
            test_send_blocking(&t, victim, &hdr, sizeof(hdr), payload, hdr.payload_len);
        }
    } else {
        test_barrier_progress(&t, "forged");
    }
    test_barrier_progress(&t, "done");
    test_rank_stop(&t);
}

static void test_forged_fragments(void **state)
{
    test_run_ranks(4, scenario_forged, "");
}

static void test_forged_fragments_sockets(void **state)
{
    test_run_ranks(4, scenario_forged, "sockets");
}

/* ---- what a module holds, and that finalize gives all of it back ---- */

typedef struct test_holdings {
    int fds;         /* entries of /proc/self/fd */
    int threads;     /* entries of /proc/self/task */
    char *maps;      /* /proc/self/maps' paths, without anonymous mappings (malloc'ed) */
    int anon_maps;   /* anonymous mappings, the heap's among them */
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
        char *path = NULL;
        int fields = 0;

        /* address perms offset dev inode [path] */
        for (char *p = strtok(line, " \n"); p; p = strtok(NULL, " \n"))
            if (++fields == 6)
                path = p;
        /* [heap] is malloc's, and may come back split in two by a change of protection. */
        if (!path || strcmp(path, "[heap]") == 0) {
            h.anon_maps++;
            continue;
        }
        RANK_CHECK(used + strlen(path) + 2 < cap, "maps too long");
        used += (size_t)sprintf(h.maps + used, "%s\n", path);
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

/* A thread that does nothing, so that glibc caches a stack before the baseline (a cached
 * stack is a mapping glibc keeps for the next thread, not something libfabric holds). */
static void *test_idle_thread(void *arg)
{
    return arg;
}

/*
 * Three cycles of init, traffic both ways, finalize: after each, this rank holds exactly
 * the descriptors, threads and file mappings it had before the first, and no more
 * anonymous mappings than after the first (glibc keeps freed thread stacks for reuse).
 * Under AddressSanitizer the heap maps new memory while freed blocks wait in its
 * quarantine: there the count of anonymous mappings says nothing about the module.
 */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_COUNT_ANON_MAPS 0
#else
#define TEST_COUNT_ANON_MAPS 1
#endif
static void scenario_cycles(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    test_holdings_t base;
    test_holdings_t during = {0};
    pthread_t threads[4];
    int anon_after_first = 0;

    for (int i = 0; i < 4; i++)
        RANK_CHECK(pthread_create(&threads[i], NULL, test_idle_thread, NULL) == 0, "thread");
    for (int i = 0; i < 4; i++)
        pthread_join(threads[i], NULL);
    test_use_provider(arg);
    RANK_CHECK(crmpi_catalog_register_all() == CRMPI_OK, "catalog");
    base = test_holdings();
    for (int cycle = 0; cycle < 3; cycle++) {
        test_holdings_t after;
        char subdir[600];
        test_rank_t t;

        /* Each cycle is a new modex, as after a checkpoint. */
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
        /* Until both directions are through: the fence below does not progress the module,
         * and the peer needs this rank's progress to get the last fragments. */
        while (stream_received < 50 || ((btl_ofi_module_t *)t.module)->num_sending > 0)
            t.module->progress(t.module);
        if (cycle == 0)
            during = test_holdings();
        /* Both have everything before either closes (a checkpoint drains first, too). */
        RANK_CHECK(crmpi_rte_fence(0) == CRMPI_OK, "fence");
        test_rank_stop(&t);
        crmpi_framework_close(&crmpi_btl_framework);
        after = test_holdings();
        RANK_CHECK(after.fds == base.fds, "cycle %d: %d descriptors, %d before", cycle, after.fds,
                   base.fds);
        RANK_CHECK(after.threads == base.threads, "cycle %d: %d threads, %d before", cycle,
                   after.threads, base.threads);
        RANK_CHECK(strcmp(after.sigcgt, base.sigcgt) == 0,
                   "cycle %d: signal handlers %s, %s before", cycle, after.sigcgt, base.sigcgt);
        RANK_CHECK(strcmp(after.maps, base.maps) == 0,
                   "cycle %d: file mappings differ:\n--- before\n%s--- after\n%s", cycle, base.maps,
                   after.maps);
        if (cycle == 0)
            anon_after_first = after.anon_maps;
        RANK_CHECK(!TEST_COUNT_ANON_MAPS || after.anon_maps <= anon_after_first,
                   "cycle %d: %d anonymous mappings, %d "
                   "after the first",
                   cycle, after.anon_maps, anon_after_first);
        free(after.maps);
    }
    /* Loading libfabric left the signal handlers alone (btl_ofi_lib.c). */
    RANK_CHECK(strcmp(during.sigcgt, base.sigcgt) == 0,
               "signals with a handler while the module was open: %s, before: %s", during.sigcgt,
               base.sigcgt);
    /* The check is not vacuous: the module held descriptors and libfabric's mappings. */
    RANK_CHECK(during.fds > base.fds && strcmp(during.maps, base.maps) != 0,
               "the module held nothing (%d descriptors)", during.fds);
    free(during.maps);
    free(base.maps);
}

static void test_cycles_release_everything(void **state)
{
    test_run_ranks(2, scenario_cycles, "");
}

static void test_cycles_release_everything_sockets(void **state)
{
    /* The sockets provider runs two threads of its own per endpoint. */
    test_run_ranks(2, scenario_cycles, "sockets");
}

/* ---- reachability ---- */

typedef struct reach_params {
    const char *provider; /* btl_ofi_provider */
} reach_params_t;

/* Ranks on different nodes with node-local addresses: add_procs reaches nobody. */
static void scenario_other_nodes(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    static const uint32_t nodes[2] = {0, 1};
    const reach_params_t *params = arg;
    uint32_t ranks[2] = {0, 1};
    crmpi_btl_endpoint_t *eps[2];
    test_rank_t t;
    int rc;

    test_use_provider(params->provider);
    rank_node_map = nodes;
    rc = test_rank_open(&t, rank, size, dir);
    if (rc == CRMPI_ERR_BAD_PARAM)
        _exit(CRMPI_BTL_TEST_EXIT_SKIP);
    RANK_CHECK(rc == CRMPI_OK, "init: %s", crmpi_strerror(rc));
    RANK_CHECK(((btl_ofi_module_t *)t.module)->node_local, "the address is not node-local");
    RANK_CHECK(crmpi_rte_fence(1) == CRMPI_OK, "fence");
    RANK_CHECK(t.module->add_procs(t.module, 2, ranks, eps) == CRMPI_OK, "add_procs");
    RANK_CHECK(eps[0] == NULL && eps[1] == NULL, "a rank of another node is reachable");
    RANK_CHECK(t.module->finalize(t.module) == CRMPI_OK, "finalize");
}

static void test_shm_stays_on_node(void **state)
{
    reach_params_t params = {.provider = "shm"};

    test_run_ranks(2, scenario_other_nodes, &params);
}

static void test_loopback_stays_on_node(void **state)
{
    /* test_use_provider chooses the loopback interface. */
    reach_params_t params = {.provider = "tcp;ofi_rxm"};

    test_run_ranks(2, scenario_other_nodes, &params);
}

/* A peer whose ofi module uses another provider is not reachable, and no error. */
static void scenario_provider_mismatch(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    uint32_t ranks[2] = {0, 1};
    crmpi_btl_endpoint_t *eps[2];
    test_rank_t t;
    int rc;

    test_use_provider(rank == 0 ? "tcp;ofi_rxm" : "sockets");
    rc = test_rank_open(&t, rank, size, dir);
    if (rc == CRMPI_ERR_BAD_PARAM)
        _exit(CRMPI_BTL_TEST_EXIT_SKIP);
    RANK_CHECK(rc == CRMPI_OK, "init: %s", crmpi_strerror(rc));
    RANK_CHECK(crmpi_rte_fence(1) == CRMPI_OK, "fence");
    RANK_CHECK(t.module->add_procs(t.module, 2, ranks, eps) == CRMPI_OK, "add_procs");
    RANK_CHECK(eps[0] == NULL && eps[1] == NULL, "a rank of another provider is reachable");
    RANK_CHECK(t.module->finalize(t.module) == CRMPI_OK, "finalize");
}

static void test_provider_mismatch(void **state)
{
    test_run_ranks(2, scenario_provider_mismatch, NULL);
}

/* ---- bad input: one line, nothing left behind ---- */

typedef struct bad_params {
    const char *provider;    /* btl_ofi_provider */
    const char *domain;      /* btl_ofi_domain, or NULL for the loopback interface */
    const char *library;     /* btl_ofi_library, or NULL */
    const char *btl;         /* the btl selection list, or NULL */
    const char *fi_provider; /* libfabric's FI_PROVIDER filter, or NULL */
    int rc;                  /* what init must return */
    const char *words[3];    /* what its one line must say (NULL: no line at all) */
} bad_params_t;

static void scenario_bad_input(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    const bad_params_t *params = arg;
    test_holdings_t base;
    test_holdings_t after;
    char *text;
    test_rank_t t;
    int rc;

    test_use_provider(params->provider);
    if (params->domain)
        RANK_CHECK(crmpi_param_set_override("btl_ofi_domain", params->domain) == CRMPI_OK, "set");
    if (params->library)
        RANK_CHECK(crmpi_param_set_override("btl_ofi_library", params->library) == CRMPI_OK, "set");
    if (params->btl)
        RANK_CHECK(crmpi_param_set_override("btl", params->btl) == CRMPI_OK, "set");
    if (params->fi_provider)
        setenv("FI_PROVIDER", params->fi_provider, 1);
    RANK_CHECK(crmpi_catalog_register_all() == CRMPI_OK, "catalog");
    rank_me = rank;
    test_capture_begin(dir, "bad");
    base = test_holdings();
    rc = test_rank_open(&t, rank, size, dir);
    after = test_holdings();
    text = test_capture_end(dir, "bad");
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
    RANK_CHECK(after.fds == base.fds && after.threads == base.threads &&
                   strcmp(after.maps, base.maps) == 0,
               "init left something behind: %d descriptors (%d before), %d threads (%d)", after.fds,
               base.fds, after.threads, base.threads);
    free(text);
    free(base.maps);
    free(after.maps);
}

static void test_bogus_provider(void **state)
{
    bad_params_t params = {
        .provider = "bogus",
        .rc = CRMPI_ERR_BAD_PARAM,
        .words = {"btl_ofi_provider=bogus", "no such provider", "tcp;ofi_rxm"},
    };

    test_run_ranks(2, scenario_bad_input, &params);
}

static void test_bogus_domain(void **state)
{
    bad_params_t params = {
        .provider = "",
        .domain = "bogus0",
        .rc = CRMPI_ERR_BAD_PARAM,
        .words = {"btl_ofi_domain=bogus0", "tcp;ofi_rxm has no such domain", "lo"},
    };

    test_run_ranks(2, scenario_bad_input, &params);
}

static void test_no_automatic_provider(void **state)
{
    /* Only udp;ofi_rxd left by libfabric's own filter; a domain is set, so ofi is required
     * although the btl list does not name it: an error, with one line. */
    bad_params_t params = {
        .provider = "",
        .fi_provider = "udp,ofi_rxd",
        .rc = CRMPI_ERR_NOT_FOUND,
        .words = {"none of the providers chosen automatically", "udp;ofi_rxd"},
    };

    test_run_ranks(2, scenario_bad_input, &params);
}

static void test_library_missing_quiet(void **state)
{
    /* Neither asked for by name nor configured: ofi steps aside, and says so only at
     * btl_base_verbose 10. */
    bad_params_t params = {
        .provider = "",
        .domain = "",
        .library = "/nonexistent/libfabric.so.1",
        .rc = CRMPI_ERR_NOT_SUPPORTED,
    };

    test_run_ranks(2, scenario_bad_input, &params);
}

static void test_library_missing_requested(void **state)
{
    bad_params_t params = {
        .provider = "",
        .library = "/nonexistent/libfabric.so.1",
        .btl = "self,ofi",
        .rc = CRMPI_ERR_NOT_FOUND,
        .words = {"cannot load libfabric", "/nonexistent/libfabric.so.1", "btl_ofi_library"},
    };

    test_run_ranks(2, scenario_bad_input, &params);
}

static void test_library_not_libfabric(void **state)
{
    /* A library that loads but is something else. */
    bad_params_t params = {
        .provider = "",
        .library = "libm.so.6",
        .btl = "self,ofi",
        .rc = CRMPI_ERR_NOT_FOUND,
        .words = {"libm.so.6 has no fi_getinfo", "not libfabric"},
    };

    test_run_ranks(2, scenario_bad_input, &params);
}

/* ---- a module no peer uses does not call into the provider ---- */

static void scenario_idle(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    uint32_t ranks[TEST_MAX_RANKS];
    crmpi_btl_endpoint_t *eps[TEST_MAX_RANKS];
    btl_ofi_module_t *module;
    struct fid_cq *cq;
    size_t num = 0;
    test_rank_t t;

    test_use_provider("");
    test_rank_start(&t, rank, size, dir);
    module = (btl_ofi_module_t *)t.module;
    /* The BML serves every peer by sm or self and deletes them here. */
    for (uint32_t r = 0; r < size; r++) {
        if (t.eps[r]) {
            ranks[num] = r;
            eps[num++] = t.eps[r];
            t.eps[r] = NULL;
        }
    }
    RANK_CHECK(t.module->del_procs(t.module, num, ranks, eps) == CRMPI_OK, "del_procs");
    /* A call into the provider would now read through a null completion queue. */
    cq = module->cq;
    module->cq = NULL;
    for (int i = 0; i < 100; i++)
        RANK_CHECK(t.module->progress(t.module) == 0, "events from an unused module");
    module->cq = cq;
    RANK_CHECK(crmpi_rte_fence(0) == CRMPI_OK, "fence");
    RANK_CHECK(t.module->finalize(t.module) == CRMPI_OK, "finalize");
}

static void test_idle_progress(void **state)
{
    test_run_ranks(2, scenario_idle, NULL);
}

/* ---- when the component offers itself ---- */

/* Query: declined on one node unless the btl list names ofi; offered across nodes. */
static void scenario_query(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    static const uint32_t two_nodes[2] = {0, 1};
    crmpi_rte_job_info_t job;
    const char *reason = NULL;
    int priority = -1;

    RANK_CHECK(crmpi_catalog_register_all() == CRMPI_OK, "catalog");
    RANK_CHECK(crmpi_framework_open(&crmpi_btl_framework) == CRMPI_OK, "btl framework");
    crmpi_btl_test_rte_setup(dir, rank, 2, NULL, &job);
    RANK_CHECK(crmpi_btl_ofi_component.query(&crmpi_btl_ofi_component, &priority, &reason) ==
                       CRMPI_ERR_NOT_SUPPORTED &&
                   reason && strstr(reason, "name ofi in the btl list"),
               "one node, default list: offered (%s)", reason ? reason : "no reason");
    RANK_CHECK(crmpi_param_set_override("btl", "self,ofi") == CRMPI_OK, "set");
    RANK_CHECK(crmpi_btl_ofi_component.query(&crmpi_btl_ofi_component, &priority, &reason) ==
                   CRMPI_OK,
               "one node, named: declined");
    /* Across nodes too, ofi opens only when the list names it (btl_ofi_component.c says
     * why); named, it is offered there as well. */
    RANK_CHECK(crmpi_param_set_override("btl", "^tcp") == CRMPI_OK, "set");
    crmpi_btl_test_rte_setup(dir, rank, 2, two_nodes, &job);
    RANK_CHECK(crmpi_btl_ofi_component.query(&crmpi_btl_ofi_component, &priority, &reason) ==
                       CRMPI_ERR_NOT_SUPPORTED &&
                   reason && strstr(reason, "not named in the btl list"),
               "two nodes, default list: offered (%s)", reason ? reason : "no reason");
    RANK_CHECK(crmpi_param_set_override("btl", "self,ofi") == CRMPI_OK, "set");
    RANK_CHECK(crmpi_btl_ofi_component.query(&crmpi_btl_ofi_component, &priority, &reason) ==
                   CRMPI_OK,
               "two nodes, named: declined");
}

static void test_query_offers(void **state)
{
    test_run_ranks(1, scenario_query, NULL);
}

/* ---- the pieces without a provider ---- */

static void test_modex_round_trip(void **state)
{
    struct fi_fabric_attr fabric_attr = {.prov_name = "tcp;ofi_rxm"};
    struct fi_info info = {.fabric_attr = &fabric_attr};
    btl_ofi_module_t module = {.info = &info, .addr_len = 16, .node_local = true};
    const btl_ofi_modex_t *modex;
    const void *addr;
    uint8_t *blob;
    size_t len;

    for (int i = 0; i < 16; i++)
        module.addr[i] = (char)(i * 3);
    memset(module.auth.nonce, 0xa5, sizeof(module.auth.nonce));
    assert_int_equal(btl_ofi_modex_pack(&module, (void **)&blob, &len), CRMPI_OK);
    assert_int_equal(len, sizeof(btl_ofi_modex_t) + 16);
    assert_int_equal(btl_ofi_modex_unpack(blob, len, &modex, &addr), CRMPI_OK);
    assert_string_equal(modex->provider, "tcp;ofi_rxm");
    assert_int_equal(modex->addr_len, 16);
    assert_true(modex->node_local);
    assert_memory_equal(addr, module.addr, 16);
    assert_memory_equal(modex->nonce, module.auth.nonce, sizeof(modex->nonce));
    /* Truncated, too long, another version, another magic: refused. */
    assert_int_equal(btl_ofi_modex_unpack(blob, len - 1, &modex, &addr), CRMPI_ERR_PROTO);
    assert_int_equal(btl_ofi_modex_unpack(blob, sizeof(btl_ofi_modex_t) - 1, &modex, &addr),
                     CRMPI_ERR_PROTO);
    ((btl_ofi_modex_t *)blob)->version++;
    assert_int_equal(btl_ofi_modex_unpack(blob, len, &modex, &addr), CRMPI_ERR_PROTO);
    ((btl_ofi_modex_t *)blob)->version--;
    ((btl_ofi_modex_t *)blob)->magic ^= 1;
    assert_int_equal(btl_ofi_modex_unpack(blob, len, &modex, &addr), CRMPI_ERR_PROTO);
    ((btl_ofi_modex_t *)blob)->magic ^= 1;
    /* A provider name without its terminator. */
    memset(((btl_ofi_modex_t *)blob)->provider, 'x', BTL_OFI_PROVIDER_MAX);
    assert_int_equal(btl_ofi_modex_unpack(blob, len, &modex, &addr), CRMPI_ERR_PROTO);
    free(blob);
}

static void test_node_local_addresses(void **state)
{
    struct fi_fabric_attr tcp_attr = {.prov_name = "tcp;ofi_rxm"};
    struct fi_fabric_attr shm_attr = {.prov_name = "shm"};
    struct fi_info in4 = {.fabric_attr = &tcp_attr, .addr_format = FI_SOCKADDR_IN};
    struct fi_info in6 = {.fabric_attr = &tcp_attr, .addr_format = FI_SOCKADDR_IN6};
    struct fi_info shm = {.fabric_attr = &shm_attr, .addr_format = FI_ADDR_STR};
    struct sockaddr_in sin = {.sin_family = AF_INET};
    struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6};
    /* Misaligned on purpose: names come from the modex as bytes. */
    char bytes[sizeof(sin6) + 1];

    inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
    assert_true(btl_ofi_provider_node_local(&in4, &sin, sizeof(sin)));
    inet_pton(AF_INET, "127.3.2.1", &sin.sin_addr);
    memcpy(bytes + 1, &sin, sizeof(sin));
    assert_true(btl_ofi_provider_node_local(&in4, bytes + 1, sizeof(sin)));
    inet_pton(AF_INET, "10.1.2.3", &sin.sin_addr);
    assert_false(btl_ofi_provider_node_local(&in4, &sin, sizeof(sin)));
    sin6.sin6_addr = in6addr_loopback;
    assert_true(btl_ofi_provider_node_local(&in6, &sin6, sizeof(sin6)));
    inet_pton(AF_INET6, "fd00::2", &sin6.sin6_addr);
    assert_false(btl_ofi_provider_node_local(&in6, &sin6, sizeof(sin6)));
    /* Too short to be what the format says. */
    assert_false(btl_ofi_provider_node_local(&in4, &sin, 2));
    assert_true(btl_ofi_provider_node_local(&shm, "fi_shm://1234", 14));
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
        cmocka_unit_test(test_modex_round_trip),
        cmocka_unit_test(test_node_local_addresses),
        cmocka_unit_test(test_pingpong_auto),
        cmocka_unit_test(test_pingpong_sockets),
        cmocka_unit_test(test_pingpong_udp),
        cmocka_unit_test(test_pingpong_shm),
        cmocka_unit_test(test_stream_2_few_buffers),
        cmocka_unit_test(test_stream_3),
        cmocka_unit_test(test_stream_4_large_fragments),
        cmocka_unit_test(test_stream_3_sockets),
        cmocka_unit_test(test_stream_3_announced),
        cmocka_unit_test(test_noncontiguous),
        cmocka_unit_test(test_reorder),
        cmocka_unit_test(test_place),
        cmocka_unit_test(test_place_sockets),
        cmocka_unit_test(test_place_shm),
        cmocka_unit_test(test_place_receiver_off),
        cmocka_unit_test(test_place_sender_off),
        cmocka_unit_test(test_finalize_flushes),
        cmocka_unit_test(test_finalize_flushes_sockets),
        cmocka_unit_test(test_forged_fragments),
        cmocka_unit_test(test_forged_fragments_sockets),
        cmocka_unit_test(test_cycles_release_everything),
        cmocka_unit_test(test_cycles_release_everything_sockets),
        cmocka_unit_test(test_shm_stays_on_node),
        cmocka_unit_test(test_loopback_stays_on_node),
        cmocka_unit_test(test_provider_mismatch),
        cmocka_unit_test(test_bogus_provider),
        cmocka_unit_test(test_bogus_domain),
        cmocka_unit_test(test_no_automatic_provider),
        cmocka_unit_test(test_library_missing_quiet),
        cmocka_unit_test(test_library_missing_requested),
        cmocka_unit_test(test_library_not_libfabric),
        cmocka_unit_test(test_idle_progress),
        cmocka_unit_test(test_query_offers),
    };

    /* TEST_FILTER=test_stream_* runs only some of them, while working on one. */
    if (getenv("TEST_FILTER"))
        cmocka_set_test_filter(getenv("TEST_FILTER"));
    return cmocka_run_group_tests(tests, test_group_setup, NULL);
}
