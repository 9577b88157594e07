/*
 * test_btl_sm.c: the sm BTL (btl-adapters/sm) between forked "ranks" of one process tree,
 * with the file-based rte of fake_rte.h.
 *
 * Each test forks 2, 3 or 4 children; each child becomes one rank (crmpi_btl_test_rte_setup),
 * registers the test's receive callbacks, runs the component's init, a fence and add_procs
 * of every rank, then the test's traffic, then del_procs, finalize and a check that its
 * segment is gone from /dev/shm. A child reports a failed check by its exit status (and a
 * line on stderr); the parent kills the others and fails the test.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "btl.h"
#include "component.h"
#include "crmpi_status.h"
#include "fake_rte.h"
#include "log.h"
#include "param.h"

#define TEST_MAX_RANKS 4
#define TEST_TAG_DATA  (CRMPI_BTL_TAG_PML + 5) /* stream and ping-pong records */
#define TEST_TAG_ACK   (CRMPI_BTL_TAG_PML + 6) /* acknowledgements sent from a callback */
/* A child stuck in a deadlock is killed by SIGALRM after this many seconds. */
#define TEST_CHILD_TIMEOUT 120
/* Records every rank streams to every other rank. */
#define TEST_STREAM_RECORDS 100000
/* The receiver acknowledges every TEST_ACK_EVERY-th record, from inside its callback. */
#define TEST_ACK_EVERY 100
/* Bytes of the deterministic pattern payloads are taken from. */
#define TEST_PATTERN_SIZE 65536

extern const crmpi_component_t crmpi_btl_sm_component;

/* btl_base.c's component table names every BTL; this test links only sm, and never opens
 * the framework, so the others are inert stand-ins with their catalog descriptors. */
extern const crmpi_component_info_t crmpi_btl_self_info;
extern const crmpi_component_info_t crmpi_btl_tcp_info;
const crmpi_component_t crmpi_btl_self_component = {.info = &crmpi_btl_self_info};
const crmpi_component_t crmpi_btl_tcp_component = {.info = &crmpi_btl_tcp_info};
#if CRMPI_HAVE_LIBFABRIC
extern const crmpi_component_info_t crmpi_btl_ofi_info;
const crmpi_component_t crmpi_btl_ofi_component = {.info = &crmpi_btl_ofi_info};
#endif
#if CRMPI_HAVE_UCX
extern const crmpi_component_info_t crmpi_btl_ucx_info;
const crmpi_component_t crmpi_btl_ucx_component = {.info = &crmpi_btl_ucx_info};
#endif

/* ---- the child's side ------------------------------------------------------------------ */

/* One forked rank. */
typedef struct test_rank {
    uint32_t rank;                             /* ours */
    uint32_t size;                             /* ranks in the test job */
    crmpi_rte_job_info_t job;                  /* from crmpi_btl_test_rte_setup */
    crmpi_btl_module_t *module;                /* NULL when init said "not usable" */
    crmpi_btl_endpoint_t *eps[TEST_MAX_RANKS]; /* add_procs' answer, per world rank */
    void (*on_data)(uint32_t peer, const uint8_t *data, size_t len); /* TEST_TAG_DATA */
    void (*on_ack)(uint32_t peer, const uint8_t *data, size_t len);  /* TEST_TAG_ACK */
} test_rank_t;

/* This process's rank (one per child). */
static test_rank_t test_me;

#define CHILD_CHECK(cond, ...)                                                                     \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "rank %u: %s:%d: check failed: %s: ", test_me.rank, __FILE__,          \
                    __LINE__, #cond);                                                              \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            _exit(1);                                                                              \
        }                                                                                          \
    } while (0)

static void test_recv_data(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data,
                           size_t len)
{
    CHILD_CHECK(module == test_me.module, "callback for another module");
    CHILD_CHECK(peer_rank < test_me.size && peer_rank != test_me.rank, "peer %u", peer_rank);
    CHILD_CHECK(test_me.on_data != NULL, "unexpected data record from rank %u", peer_rank);
    test_me.on_data(peer_rank, data, len);
}

static void test_recv_ack(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data,
                          size_t len)
{
    CHILD_CHECK(module == test_me.module, "callback for another module");
    CHILD_CHECK(test_me.on_ack != NULL, "unexpected ack from rank %u", peer_rank);
    test_me.on_ack(peer_rank, data, len);
}

static int test_count_fds(void)
{
    DIR *dir = opendir("/proc/self/fd");
    struct dirent *entry;
    int count = 0;

    CHILD_CHECK(dir != NULL, "opendir /proc/self/fd: %s", strerror(errno));
    while ((entry = readdir(dir)) != NULL)
        count += entry->d_name[0] != '.';
    closedir(dir);
    return count - 1; /* the directory's own fd */
}

static void test_segment_path(uint32_t rank, char *path, size_t size)
{
    snprintf(path, size, "/dev/shm/crmpi-%" PRIu64 "-sm-%u", (uint64_t)getppid(), rank);
}

/* Send hdr + payload (contiguous bytes) and check the convertor moved only on success. */
static int test_send(uint32_t peer, uint8_t tag, const void *hdr, size_t hdr_len,
                     const void *payload, size_t payload_len)
{
    crmpi_convertor_t conv;
    int rc;

    crmpi_convertor_init(&conv, payload, payload_len, &crmpi_btl_test_byte_type);
    rc = test_me.module->send(test_me.module, test_me.eps[peer], tag, hdr, hdr_len,
                              payload_len ? &conv : NULL, payload_len);
    CHILD_CHECK(rc == CRMPI_OK || rc == CRMPI_ERR_RESOURCE_BUSY, "send to %u: %d", peer, rc);
    CHILD_CHECK(conv.position == (rc == CRMPI_OK ? payload_len : 0),
                "convertor at %zu after send returned %d", conv.position, rc);
    return rc;
}

/* Send, progressing while the peer's FIFO is full. */
static void test_send_blocking(uint32_t peer, uint8_t tag, const void *hdr, size_t hdr_len,
                               const void *payload, size_t payload_len)
{
    while (test_send(peer, tag, hdr, hdr_len, payload, payload_len) == CRMPI_ERR_RESOURCE_BUSY) {
        if (test_me.module->progress(test_me.module) == 0)
            sched_yield();
    }
}

/* Progress until *counter reaches target. */
static void test_progress_until(const volatile uint64_t *counter, uint64_t target)
{
    while (*counter < target) {
        if (test_me.module->progress(test_me.module) == 0)
            sched_yield();
    }
}

/* init, fence, add_procs of every rank. @return init's status. */
static int test_rank_start(void)
{
    const crmpi_btl_component_ops_t *ops = crmpi_btl_sm_component.ops;
    uint32_t all[TEST_MAX_RANKS];
    int fds_before = test_count_fds();
    int rc;

    CHILD_CHECK(crmpi_btl_register_recv(TEST_TAG_DATA, test_recv_data) == CRMPI_OK, "register");
    CHILD_CHECK(crmpi_btl_register_recv(TEST_TAG_ACK, test_recv_ack) == CRMPI_OK, "register");
    rc = ops->init(&test_me.job, &test_me.module);
    if (rc != CRMPI_OK)
        test_me.module = NULL;
    CHILD_CHECK(crmpi_rte_fence(1) == CRMPI_OK, "fence");
    if (!test_me.module)
        return rc;
    for (uint32_t r = 0; r < test_me.size; r++)
        all[r] = r;
    CHILD_CHECK(test_me.module->add_procs(test_me.module, test_me.size, all, test_me.eps) ==
                    CRMPI_OK,
                "add_procs");
    /* The segments were mapped and their fds closed: nothing held. */
    CHILD_CHECK(test_count_fds() == fds_before, "%d fds after add_procs, %d before",
                test_count_fds(), fds_before);
    return CRMPI_OK;
}

/* fence, del_procs, finalize; then our segment must be gone. */
static void test_rank_stop(void)
{
    uint32_t all[TEST_MAX_RANKS];
    char path[128];

    CHILD_CHECK(crmpi_rte_fence(1) == CRMPI_OK, "fence");
    if (test_me.module) {
        for (uint32_t r = 0; r < test_me.size; r++)
            all[r] = r;
        CHILD_CHECK(test_me.module->del_procs(test_me.module, test_me.size, all, test_me.eps) ==
                        CRMPI_OK,
                    "del_procs");
        CHILD_CHECK(test_me.module->finalize(test_me.module) == CRMPI_OK, "finalize");
        test_me.module = NULL;
    }
    test_segment_path(test_me.rank, path, sizeof(path));
    CHILD_CHECK(access(path, F_OK) != 0 && errno == ENOENT, "%s still exists", path);
}

/* ---- the parent's side ------------------------------------------------------------------ */

/* One forked job. */
typedef struct test_job {
    uint32_t size;                /* ranks */
    const uint32_t *node_of_rank; /* NULL: all on node 0 */
    const char *const *overrides; /* NULL or "name", "value", ..., NULL */
    void (*child)(void);          /* runs in each child, test_me set up */
} test_job_t;

/* A child of test_run: become rank `rank` of `arg` (a test_job_t), then run its child. */
static void test_rank(uint32_t rank, uint32_t size, const char *dir, void *arg)
{
    const test_job_t *job = arg;
    char who[32];

    snprintf(who, sizeof(who), "rank %u", rank);
    crmpi_log_set_who(who);
    for (const char *const *o = job->overrides; o && o[0]; o += 2)
        crmpi_param_set_override(o[0], o[1]);
    memset(&test_me, 0, sizeof(test_me));
    test_me.rank = rank;
    test_me.size = size;
    crmpi_btl_test_rte_setup(dir, rank, size, job->node_of_rank, &test_me.job);
    job->child();
}

static void test_run(const test_job_t *job)
{
    int failed;

    assert_true(job->size <= TEST_MAX_RANKS);
    failed = crmpi_btl_test_run_ranks("btl-sm", job->size, TEST_CHILD_TIMEOUT, test_rank,
                                      (void *)job, NULL);
    for (uint32_t r = 0; failed && r < job->size; r++) {
        char path[128];

        snprintf(path, sizeof(path), "/dev/shm/crmpi-%" PRIu64 "-sm-%u", (uint64_t)getpid(), r);
        unlink(path); /* a killed child could not clean up */
    }
    assert_int_equal(failed, 0);
}

/* ---- payloads ---------------------------------------------------------------------------- */

/* Every rank builds the same pattern; payloads are slices of it. */
static uint8_t test_pattern[TEST_PATTERN_SIZE];

static uint64_t test_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static void test_pattern_build(void)
{
    for (size_t i = 0; i < sizeof(test_pattern); i += 8) {
        uint64_t v = test_mix(i + 1);
        memcpy(&test_pattern[i], &v, 8);
    }
}

static uint64_t test_checksum(const uint8_t *data, size_t len)
{
    uint64_t sum = 0x9e3779b97f4a7c15ull ^ len;
    size_t i = 0;

    for (; i + 8 <= len; i += 8) {
        uint64_t word;

        memcpy(&word, data + i, 8);
        sum = (sum ^ word) * 0x100000001b3ull + (sum >> 29);
    }
    for (; i < len; i++)
        sum = (sum ^ data[i]) * 0x100000001b3ull;
    return sum;
}

/* ---- ping-pong ---------------------------------------------------------------------------- */

/* Record lengths (header + payload) the ping-pong goes through, around the 64-byte record
 * granule and up to max_send_size. */
static const size_t test_pingpong_lens[] = {0,    1,    2,     7,     8,     9,    55,   56,
                                            57,   63,   64,    65,    100,   1000, 4095, 4096,
                                            4097, 8192, 16384, 32000, 32767, 32768};
/* Rounds per length: enough for the 32 KiB ones to wrap the 1 MiB ring several times. */
#define TEST_PINGPONG_ROUNDS 80

/* What the ping-pong's current round expects back. */
static struct {
    uint64_t pings;     /* pings answered (responder) */
    uint64_t pongs;     /* pongs received (initiator) */
    const uint8_t *exp; /* the ping's bytes */
    size_t exp_len;     /* its length */
} test_pp;

static void test_pingpong_on_ping(uint32_t peer, const uint8_t *data, size_t len)
{
    /* Echo from inside the callback, as the PML acks from there: header = the whole
     * record's first half, payload = the rest, packed from the ring into the peer's ring. */
    size_t hdr_len = len / 2;

    /* A callback must not progress: the module refuses re-entry. */
    CHILD_CHECK(test_me.module->progress(test_me.module) == 0, "progress re-entered");
    CHILD_CHECK(len <= test_me.module->max_send_size, "ping of %zu bytes", len);
    CHILD_CHECK(memcmp(data, test_pattern + len % 4096, len) == 0, "ping of %zu bytes corrupted",
                len);
    CHILD_CHECK(test_send(peer, TEST_TAG_DATA, data, hdr_len, data + hdr_len, len - hdr_len) ==
                    CRMPI_OK,
                "echo of %zu bytes refused with one record in flight", len);
    test_pp.pings++;
}

static void test_pingpong_on_pong(uint32_t peer, const uint8_t *data, size_t len)
{
    CHILD_CHECK(len == test_pp.exp_len, "pong of %zu bytes, ping had %zu", len, test_pp.exp_len);
    CHILD_CHECK(memcmp(data, test_pp.exp, len) == 0, "pong of %zu bytes differs", len);
    test_pp.pongs++;
}

static void test_pingpong_child(void)
{
    const size_t num_lens = sizeof(test_pingpong_lens) / sizeof(test_pingpong_lens[0]);
    const crmpi_btl_module_t *module;

    test_pattern_build();
    CHILD_CHECK(test_rank_start() == CRMPI_OK, "init");
    module = test_me.module;
    CHILD_CHECK(module->exclusivity == 32768 && module->priority == 0, "exclusivity %u",
                module->exclusivity);
    CHILD_CHECK(module->max_send_size == 32768 && module->eager_limit == 4096,
                "max_send_size %zu eager_limit %zu", module->max_send_size, module->eager_limit);
    CHILD_CHECK((module->flags & CRMPI_BTL_FLAG_CKPT_FRIENDLY) == 0,
                "sm holds a shared segment: not checkpoint-friendly");
    for (uint32_t r = 0; r < test_me.size; r++)
        CHILD_CHECK((test_me.eps[r] == NULL) == (r == test_me.rank), "endpoint of rank %u", r);

    if (test_me.rank == 0) {
        test_me.on_data = test_pingpong_on_pong;
        for (uint32_t peer = 1; peer < test_me.size; peer++) {
            for (size_t l = 0; l < num_lens; l++) {
                size_t len = test_pingpong_lens[l];
                const uint8_t *bytes = test_pattern + len % 4096;
                size_t hdr_len = len < 8 ? len : 8;

                test_pp.exp = bytes;
                test_pp.exp_len = len;
                for (int round = 0; round < TEST_PINGPONG_ROUNDS; round++) {
                    test_send_blocking(peer, TEST_TAG_DATA, bytes, hdr_len, bytes + hdr_len,
                                       len - hdr_len);
                    test_progress_until(&test_pp.pongs, test_pp.pongs + 1);
                }
            }
        }
    } else {
        test_me.on_data = test_pingpong_on_ping;
        test_progress_until(&test_pp.pings, num_lens * TEST_PINGPONG_ROUNDS);
    }
    test_rank_stop();
}

static void test_sm_pingpong(void **state)
{
    for (uint32_t size = 2; size <= 4; size++) {
        test_job_t job = {.size = size, .child = test_pingpong_child};

        test_run(&job);
    }
}

/* ---- streams: every rank to every other rank at once --------------------------------- */

/* Header of a stream record. */
typedef struct test_stream_hdr {
    uint32_t seq;      /* per (sender, receiver), from 0 */
    uint32_t sender;   /* the sender's rank */
    uint32_t len;      /* payload bytes after this header */
    uint32_t reserved; /* zero */
    uint64_t checksum; /* test_checksum of the payload */
} test_stream_hdr_t;

/* The stream state of this rank. */
static struct {
    uint32_t records;                       /* per pair */
    uint32_t sent[TEST_MAX_RANKS];          /* records sent to each peer */
    uint32_t received[TEST_MAX_RANKS];      /* records received from each peer, in order */
    uint32_t acks_due[TEST_MAX_RANKS];      /* acks owed to each peer, not yet sent */
    uint32_t acks_sent[TEST_MAX_RANKS];     /* acks sent to each peer */
    uint32_t acks_received[TEST_MAX_RANKS]; /* acks received from each peer */
    uint64_t bytes;                         /* payload bytes received */
} test_stream;

/* Payload bytes of record `seq` from `sender` to `receiver`: mostly small, some up to the
 * largest fragment, so records of every size wrap the ring at every offset. */
static uint32_t test_stream_len(uint32_t sender, uint32_t receiver, uint32_t seq)
{
    uint32_t max = (uint32_t)(test_me.module->max_send_size - sizeof(test_stream_hdr_t));
    uint64_t h = test_mix(((uint64_t)sender << 48) ^ ((uint64_t)receiver << 40) ^ seq);

    if (h % 32 == 0)
        return (uint32_t)((h >> 8) % (max + 1));
    return (uint32_t)((h >> 8) % 512);
}

static const uint8_t *test_stream_bytes(uint32_t sender, uint32_t receiver, uint32_t seq)
{
    return test_pattern + (seq * 97u + sender * 13u + receiver) % 32768u;
}

/* Ack number `index` acknowledges record (index + 1) * TEST_ACK_EVERY - 1. */
static int test_stream_send_ack(uint32_t peer)
{
    uint32_t acked = (test_stream.acks_sent[peer] + 1) * TEST_ACK_EVERY - 1;
    int rc = test_send(peer, TEST_TAG_ACK, &acked, sizeof(acked), NULL, 0);

    if (rc == CRMPI_OK)
        test_stream.acks_sent[peer]++;
    return rc;
}

static void test_stream_on_data(uint32_t peer, const uint8_t *data, size_t len)
{
    uint32_t seq = test_stream.received[peer];
    test_stream_hdr_t hdr;
    uint32_t exp_len;

    CHILD_CHECK(len >= sizeof(hdr), "record of %zu bytes from %u", len, peer);
    memcpy(&hdr, data, sizeof(hdr));
    CHILD_CHECK(hdr.sender == peer, "record of rank %u came from %u", hdr.sender, peer);
    CHILD_CHECK(hdr.seq == seq, "from %u: record %u where %u was due", peer, hdr.seq, seq);
    CHILD_CHECK(seq < test_stream.records, "from %u: record %u beyond the stream", peer, seq);
    exp_len = test_stream_len(peer, test_me.rank, seq);
    CHILD_CHECK(hdr.len == exp_len && len == sizeof(hdr) + exp_len,
                "from %u: record %u has %zu bytes, not %zu", peer, seq, len, sizeof(hdr) + exp_len);
    CHILD_CHECK(test_checksum(data + sizeof(hdr), hdr.len) == hdr.checksum,
                "from %u: record %u: checksum mismatch", peer, seq);
    CHILD_CHECK(memcmp(data + sizeof(hdr), test_stream_bytes(peer, test_me.rank, seq), hdr.len) ==
                    0,
                "from %u: record %u: content differs", peer, seq);
    test_stream.received[peer]++;
    test_stream.bytes += hdr.len;
    if (seq % TEST_ACK_EVERY == TEST_ACK_EVERY - 1) {
        /* In order: an ack that had to wait goes first. */
        test_stream.acks_due[peer]++;
        while (test_stream.acks_due[peer] > 0 && test_stream_send_ack(peer) == CRMPI_OK)
            test_stream.acks_due[peer]--;
    }
}

static void test_stream_on_ack(uint32_t peer, const uint8_t *data, size_t len)
{
    uint32_t acked;

    CHILD_CHECK(len == sizeof(acked), "ack of %zu bytes", len);
    memcpy(&acked, data, sizeof(acked));
    CHILD_CHECK(acked == (test_stream.acks_received[peer] + 1) * TEST_ACK_EVERY - 1,
                "from %u: ack of %u out of order", peer, acked);
    CHILD_CHECK(acked < test_stream.sent[peer], "from %u: ack of %u, only %u sent", peer, acked,
                test_stream.sent[peer]);
    test_stream.acks_received[peer]++;
}

static bool test_stream_done(void)
{
    for (uint32_t p = 0; p < test_me.size; p++) {
        if (p == test_me.rank || !test_me.eps[p])
            continue;
        if (test_stream.sent[p] < test_stream.records ||
            test_stream.received[p] < test_stream.records || test_stream.acks_due[p] > 0 ||
            test_stream.acks_received[p] < test_stream.records / TEST_ACK_EVERY)
            return false;
    }
    return true;
}

/* Stream test_stream.records more records to every reachable peer while receiving theirs. */
static void test_stream_run(uint32_t records)
{
    uint32_t start = 0;

    test_me.on_data = test_stream_on_data;
    test_me.on_ack = test_stream_on_ack;
    test_stream.records += records;
    while (!test_stream_done()) {
        int work = 0;

        for (uint32_t i = 0; i < test_me.size; i++) {
            uint32_t p = (start + i) % test_me.size;
            test_stream_hdr_t hdr;
            const uint8_t *bytes;

            if (p == test_me.rank || !test_me.eps[p])
                continue;
            while (test_stream.acks_due[p] > 0 && test_stream_send_ack(p) == CRMPI_OK) {
                test_stream.acks_due[p]--;
                work++;
            }
            if (test_stream.sent[p] == test_stream.records)
                continue;
            hdr = (test_stream_hdr_t){.seq = test_stream.sent[p], .sender = test_me.rank};
            hdr.len = test_stream_len(test_me.rank, p, hdr.seq);
            bytes = test_stream_bytes(test_me.rank, p, hdr.seq);
            hdr.checksum = test_checksum(bytes, hdr.len);
            if (test_send(p, TEST_TAG_DATA, &hdr, sizeof(hdr), bytes, hdr.len) == CRMPI_OK) {
                test_stream.sent[p]++;
                work++;
            }
        }
        start++;
        work += test_me.module->progress(test_me.module);
        /* Two cores, up to four spinning ranks: let a descheduled receiver run. */
        if (work == 0)
            sched_yield();
    }
}

static void test_stream_child(void)
{
    test_pattern_build();
    CHILD_CHECK(test_rank_start() == CRMPI_OK, "init");
    test_stream_run(TEST_STREAM_RECORDS);
    test_rank_stop();
}

static void test_sm_stream(void **state)
{
    for (uint32_t size = 2; size <= 4; size++) {
        test_job_t job = {.size = size, .child = test_stream_child};

        test_run(&job);
    }
}

/* ---- back-pressure ------------------------------------------------------------------------ */

/* Small FIFOs: 64 KiB rings, fragments of up to 16 KiB. */
static const char *const test_small_fifo[] = {
    "btl_sm_fifo_size", "64k", "btl_sm_max_send_size", "16k", NULL,
};

static uint64_t test_bp_received;

static void test_bp_on_data(uint32_t peer, const uint8_t *data, size_t len)
{
    CHILD_CHECK(peer == 0 && len == 1000, "record of %zu bytes from %u", len, peer);
    CHILD_CHECK(memcmp(data, test_pattern + test_bp_received % 512, len) == 0,
                "record %" PRIu64 " corrupted", test_bp_received);
    test_bp_received++;
}

static void test_backpressure_child(void)
{
    uint64_t accepted = 0;
    uint64_t filled;

    test_pattern_build();
    CHILD_CHECK(test_rank_start() == CRMPI_OK, "init");
    test_me.on_data = test_bp_on_data;

    /* Phase 1: rank 0 fills its FIFO in rank 1's segment; rank 1 does not progress. */
    if (test_me.rank == 0) {
        while (test_send(1, TEST_TAG_DATA, NULL, 0, test_pattern + accepted % 512, 1000) ==
               CRMPI_OK)
            accepted++;
        /* 1000 bytes + header take 1024: at most 64 in 64 KiB, and no fewer than fit. */
        CHILD_CHECK(accepted == 64, "%" PRIu64 " records before RESOURCE_BUSY", accepted);
        /* Still full: nobody has released anything. */
        CHILD_CHECK(test_send(1, TEST_TAG_DATA, NULL, 0, test_pattern, 1000) ==
                        CRMPI_ERR_RESOURCE_BUSY,
                    "room appeared without the receiver");
    }
    CHILD_CHECK(crmpi_rte_fence(1) == CRMPI_OK, "fence");

    /* Phase 2: one progress call of rank 1 delivers everything published before the fence;
     * then rank 0 can send again and tells how many it had queued. */
    if (test_me.rank == 1) {
        int delivered = test_me.module->progress(test_me.module);

        CHILD_CHECK(delivered == 64 && test_bp_received == 64, "delivered %d", delivered);
        CHILD_CHECK(test_me.module->progress(test_me.module) == 0, "more than was sent");
    }
    CHILD_CHECK(crmpi_rte_fence(1) == CRMPI_OK, "fence");
    if (test_me.rank == 0) {
        /* The receiver released everything: the whole ring is free again. */
        for (filled = 0; test_send(1, TEST_TAG_DATA, NULL, 0,
                                   test_pattern + (accepted + filled) % 512, 1000) == CRMPI_OK;)
            filled++;
        CHILD_CHECK(filled == 64, "%" PRIu64 " records fit after the drain", filled);
    }
    CHILD_CHECK(crmpi_rte_fence(1) == CRMPI_OK, "fence");
    if (test_me.rank == 1)
        test_progress_until(&test_bp_received, 128);
    CHILD_CHECK(crmpi_rte_fence(1) == CRMPI_OK, "fence");

    /* Phase 3: everybody floods everybody through the small FIFOs, acking from callbacks. */
    test_stream_run(20000);
    test_rank_stop();
}

static void test_sm_backpressure(void **state)
{
    for (uint32_t size = 2; size <= 4; size++) {
        test_job_t job = {
            .size = size, .overrides = test_small_fifo, .child = test_backpressure_child};

        test_run(&job);
    }
}

/* ---- non-contiguous payloads --------------------------------------------------------------- */

/* Two shapes of 20 data bytes per 40-byte element: three runs of different lengths (the
 * engine's listed walk), and a vector of four 5-byte runs 8 bytes apart (its regular walk). */
static const crmpi_dt_run_t test_listed_runs[] = {
    {.disp = 0, .len = 5, .basic_size = 1},
    {.disp = 8, .len = 3, .basic_size = 1},
    {.disp = 20, .len = 12, .basic_size = 4},
};
static const crmpi_dt_run_t test_regular_runs[] = {
    {.disp = 2, .len = 5, .basic_size = 1},
    {.disp = 10, .len = 5, .basic_size = 1},
    {.disp = 18, .len = 5, .basic_size = 1},
    {.disp = 26, .len = 5, .basic_size = 1},
};
static const struct crmpi_datatype_s test_noncontig_types[] = {
    {
        .name = "test listed",
        .size = 20,
        .extent = 40,
        .true_extent = 32,
        .committed = true,
        .refcount = 1,
        .runs = (crmpi_dt_run_t *)test_listed_runs,
        .num_runs = 3,
        .basic_count = 11,
        .contiguous = false,
        .align = 4,
    },
    {
        .name = "test regular",
        .size = 20,
        .extent = 40,
        .true_lb = 2,
        .true_extent = 29,
        .committed = true,
        .refcount = 1,
        .runs = (crmpi_dt_run_t *)test_regular_runs,
        .num_runs = 4,
        .basic_count = 20,
        .contiguous = false,
        .run_len = 5,
        .runs_regular = true,
        .run_stride = 8,
        .align = 1,
    },
};
#define TEST_NONCONTIG_COUNT 3000 /* 60000 stream bytes per type: several fragments */

/* The stream the receiver expects (gathered by hand) and how much of it arrived. */
static uint8_t test_nc_stream[TEST_NONCONTIG_COUNT * 20];
static uint64_t test_nc_received;

static void test_nc_on_data(uint32_t peer, const uint8_t *data, size_t len)
{
    uint64_t at;

    CHILD_CHECK(len >= sizeof(at), "fragment of %zu bytes", len);
    memcpy(&at, data, sizeof(at));
    CHILD_CHECK(at == test_nc_received % sizeof(test_nc_stream),
                "fragment at %" PRIu64 ", %" PRIu64 " expected", at, test_nc_received);
    CHILD_CHECK(at + len - sizeof(at) <= sizeof(test_nc_stream), "fragment past the end");
    CHILD_CHECK(memcmp(data + sizeof(at), test_nc_stream + at, len - sizeof(at)) == 0,
                "fragment at %" PRIu64 " differs from the packed stream", at);
    test_nc_received += len - sizeof(at);
}

/* Rank 0 sends (buf, count, type) to rank 1 in odd-sized fragments packed by the engine
 * straight into the FIFO; rank 1 compares each with the stream gathered by hand. */
static void test_noncontig_child(void)
{
    static uint8_t buf[TEST_NONCONTIG_COUNT * 40];
    /* Fragments end in the middle of runs and elements; the last fills max_send_size. */
    static const size_t pieces[] = {1, 7, 777, 4093, 16376, 32760};
    const size_t num_types = sizeof(test_noncontig_types) / sizeof(test_noncontig_types[0]);

    test_pattern_build();
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = test_pattern[i % sizeof(test_pattern)] ^ (uint8_t)(i >> 16);
    CHILD_CHECK(test_rank_start() == CRMPI_OK, "init");
    test_me.on_data = test_nc_on_data;
    for (size_t t = 0; t < num_types; t++) {
        const struct crmpi_datatype_s *type = &test_noncontig_types[t];
        size_t out = 0;

        for (size_t e = 0; e < TEST_NONCONTIG_COUNT; e++) {
            for (size_t r = 0; r < type->num_runs; r++) {
                memcpy(test_nc_stream + out, buf + e * 40 + type->runs[r].disp, type->runs[r].len);
                out += type->runs[r].len;
            }
        }
        if (test_me.rank == 0) {
            crmpi_convertor_t conv;
            size_t piece = 0;

            crmpi_convertor_init(&conv, buf, TEST_NONCONTIG_COUNT, type);
            CHILD_CHECK(conv.total == sizeof(test_nc_stream), "stream of %zu bytes", conv.total);
            while (conv.position < conv.total) {
                size_t want = pieces[piece++ % (sizeof(pieces) / sizeof(pieces[0]))];
                size_t n = want < conv.total - conv.position ? want : conv.total - conv.position;
                uint64_t at = conv.position;
                int rc;

                while ((rc = test_me.module->send(test_me.module, test_me.eps[1], TEST_TAG_DATA,
                                                  &at, sizeof(at), &conv, n)) ==
                       CRMPI_ERR_RESOURCE_BUSY) {
                    CHILD_CHECK(conv.position == at, "busy send moved the convertor");
                    sched_yield();
                }
                CHILD_CHECK(rc == CRMPI_OK && conv.position == at + n, "%s: send: %d", type->name,
                            rc);
            }
        } else if (test_me.rank == 1) {
            test_progress_until(&test_nc_received, (t + 1) * sizeof(test_nc_stream));
        }
        /* The next type's stream replaces this one's: nothing of it may be in flight. */
        CHILD_CHECK(crmpi_rte_fence(1) == CRMPI_OK, "fence");
    }
    test_rank_stop();
}

static void test_sm_noncontig(void **state)
{
    test_job_t job = {.size = 2, .child = test_noncontig_child};

    test_run(&job);
}

/* ---- reachability ---------------------------------------------------------------------- */

static const uint32_t test_two_nodes[] = {0, 0, 1, 1};
static const uint32_t test_lonely_middle[] = {0, 1, 0};

/* Ranks on a node with a peer stream to it; everybody else is unreachable. */
static void test_reach_child(void)
{
    const uint32_t *nodes = test_me.size == 4 ? test_two_nodes : test_lonely_middle;
    uint32_t local_peers = 0;
    int priority = -1;
    const char *reason = NULL;
    int query_rc;
    int rc;

    test_pattern_build();
    for (uint32_t r = 0; r < test_me.size; r++)
        local_peers += r != test_me.rank && nodes[r] == nodes[test_me.rank];
    query_rc = crmpi_btl_sm_component.query(&crmpi_btl_sm_component, &priority, &reason);
    rc = test_rank_start();
    if (local_peers == 0) {
        CHILD_CHECK(query_rc == CRMPI_ERR_NOT_SUPPORTED && reason != NULL, "query: %d", query_rc);
        CHILD_CHECK(rc == CRMPI_ERR_NOT_SUPPORTED, "init with no local peer: %d", rc);
        test_rank_stop();
        return;
    }
    CHILD_CHECK(query_rc == CRMPI_OK && priority == 0, "query: %d", query_rc);
    CHILD_CHECK(rc == CRMPI_OK, "init: %d", rc);
    for (uint32_t r = 0; r < test_me.size; r++) {
        bool reachable = r != test_me.rank && nodes[r] == nodes[test_me.rank];

        CHILD_CHECK((test_me.eps[r] != NULL) == reachable, "rank %u %s", r,
                    reachable ? "unreachable" : "reachable");
    }
    test_stream_run(2000);
    test_rank_stop();
}

static void test_sm_reachability(void **state)
{
    test_job_t four = {.size = 4, .node_of_rank = test_two_nodes, .child = test_reach_child};
    test_job_t three = {.size = 3, .node_of_rank = test_lonely_middle, .child = test_reach_child};

    test_run(&four);
    test_run(&three);
}

/* ---- segments: leftovers, reconnection, bad parameters ----------------------------------------
 */

static void test_reconnect_child(void)
{
    uint32_t all[TEST_MAX_RANKS];
    crmpi_btl_endpoint_t *before[TEST_MAX_RANKS];

    test_pattern_build();
    CHILD_CHECK(test_rank_start() == CRMPI_OK, "init");
    test_stream_run(1500);
    /* Everybody is done with everybody: forget the peers, then find them again. Each FIFO
     * must continue where it stood (its offsets derive from the shared counters). */
    CHILD_CHECK(crmpi_rte_fence(1) == CRMPI_OK, "fence");
    for (uint32_t r = 0; r < test_me.size; r++)
        all[r] = r;
    memcpy(before, test_me.eps, sizeof(before));
    CHILD_CHECK(test_me.module->del_procs(test_me.module, test_me.size, all, test_me.eps) ==
                    CRMPI_OK,
                "del_procs");
    CHILD_CHECK(test_me.module->progress(test_me.module) == 0, "progress without peers");
    CHILD_CHECK(crmpi_rte_fence(1) == CRMPI_OK, "fence");
    CHILD_CHECK(test_me.module->add_procs(test_me.module, test_me.size, all, test_me.eps) ==
                    CRMPI_OK,
                "add_procs");
    CHILD_CHECK(memcmp(before, test_me.eps, sizeof(before)) == 0, "endpoints changed");
    test_stream_run(1500);
    test_rank_stop();
}

static void test_sm_reconnect(void **state)
{
    test_job_t job = {.size = 3, .child = test_reconnect_child};

    test_run(&job);
}

static void test_sm_leftover_segment(void **state)
{
    test_job_t job = {.size = 2, .child = test_stream_child};
    char path[128];
    FILE *f;

    /* What a crashed job with the same jobid (mpirun pid) would have left. */
    snprintf(path, sizeof(path), "/dev/shm/crmpi-%" PRIu64 "-sm-1", (uint64_t)getpid());
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("stale", f);
    fclose(f);
    test_run(&job);
    assert_int_not_equal(access(path, F_OK), 0);
}

static const char *const test_tiny_fifo[] = {
    "btl_sm_fifo_size", "32k", "btl_sm_max_send_size", "32k", NULL,
};

static void test_bad_params_child(void)
{
    char path[128];

    CHILD_CHECK(test_rank_start() == CRMPI_ERR_BAD_PARAM, "a FIFO smaller than two fragments");
    test_segment_path(test_me.rank, path, sizeof(path));
    CHILD_CHECK(access(path, F_OK) != 0, "%s created anyway", path);
    test_rank_stop();
}

static void test_sm_bad_params(void **state)
{
    test_job_t job = {.size = 2, .overrides = test_tiny_fifo, .child = test_bad_params_child};

    test_run(&job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sm_pingpong),         cmocka_unit_test(test_sm_stream),
        cmocka_unit_test(test_sm_backpressure),     cmocka_unit_test(test_sm_noncontig),
        cmocka_unit_test(test_sm_reachability),     cmocka_unit_test(test_sm_reconnect),
        cmocka_unit_test(test_sm_leftover_segment), cmocka_unit_test(test_sm_bad_params),
    };

    if (crmpi_catalog_register_all() != CRMPI_OK)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
