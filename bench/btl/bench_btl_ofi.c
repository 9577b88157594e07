/*
 * bench_btl_ofi.c: the ofi BTL alone (no PML), between two forked ranks of one node set up
 * with the file-based rte of btl-adapters/test/fake_rte.h. A benchmark, not a test
 * (docs/design.md, "Tests"): it prints a table and exits 0 unless something fails.
 *
 *   cycle      what a checkpoint costs the module, in the same processes: finalize (the
 *              release before the dump) and init + modex + add_procs + the first round
 *              trip (the rebuild after it, connection included), with init split into
 *              loading libfabric (dlopen), choosing the provider (fi_getinfo) and opening
 *              the endpoint and pools
 *   latency    one-way time of a 1-byte record: half the round trip of a ping-pong whose
 *              pong is sent from inside the receive callback (as the PML's acks are)
 *   bandwidth  records of max_send_size bytes streamed one way; the receiver copies each
 *              payload out into a user buffer, as the PML does with fragments
 *
 * Build with bash from inside the source tree, after ./bootstrap.sh build (not part of
 * `make check`):
 *   M=$(git rev-parse --show-toplevel)
 *   gcc -std=gnu11 -O2 -g -include $M/build/config.h -I$M/include \
 *     -I$M/runtime -I$M/datatype -I$M/btl-adapters -I$M/btl-adapters/test -I$M/build \
 *     -o bench_btl_ofi $M/bench/btl/bench_btl_ofi.c $M/btl-adapters/test/fake_rte.c \
 *     $M/btl-adapters/ofi/btl_ofi_{component,lib,provider,module,endpoint}.c \
 *     $M/btl-adapters/btl_base.c $M/btl-adapters/btl_auth.c \
 *     $M/build/.libs/libcrmpi_datatype.a $M/build/.libs/libcrmpi_rt.a \
 *     -lnettle -ljansson -lpthread -ldl -lm
 * Run: ./bench_btl_ofi [iterations-scale] [all|cycles|traffic]; parameters as in a job,
 * through the environment:
 *   CRMPI_MCA_btl_ofi_domain=lo CRMPI_MCA_btl_ofi_max_send_size=256k ./bench_btl_ofi
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "btl.h"
#include "component.h"
#include "crmpi_status.h"
#include "fake_rte.h"
#include "log.h"
#include "ofi/btl_ofi.h"

#define BENCH_TAG    (CRMPI_BTL_TAG_PML + 1)
#define BENCH_HDR    32 /* bytes of header per fragment, about what a PML puts in front */
#define BENCH_REPS   9  /* repetitions of each measurement */
#define BENCH_CYCLES 9  /* finalize + init cycles */

extern const crmpi_component_t crmpi_btl_ofi_component;

/* btl_base.c's table names every BTL; only ofi is linked here (the framework is never
 * opened), so the others are inert stand-ins. */
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

/* One rank of the benchmark. */
static struct {
    uint32_t rank;              /* 0 measures, 1 answers */
    crmpi_btl_module_t *module; /* the ofi module */
    crmpi_btl_endpoint_t *peer; /* the other rank */
    volatile uint64_t received; /* records delivered to the callback */
    int echo;                   /* the callback answers every record with one byte */
    char *sink;                 /* copy-out destination, or NULL */
    size_t sink_size;           /* bytes at sink */
    size_t sink_at;             /* where the next payload goes */
} bench;

static const crmpi_dt_run_t bench_byte_run = {.disp = 0, .len = 1, .basic_size = 1};
static const struct crmpi_datatype_s bench_byte = {
    .name = "byte",
    .size = 1,
    .extent = 1,
    .true_extent = 1,
    .predefined = true,
    .committed = true,
    .refcount = 1,
    .runs = (crmpi_dt_run_t *)&bench_byte_run,
    .num_runs = 1,
    .basic_count = 1,
    .contiguous = true,
};

static double bench_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void bench_fail(const char *what, int rc)
{
    fprintf(stderr, "bench_btl_ofi: rank %u: %s: %s\n", bench.rank, what, crmpi_strerror(rc));
    _exit(1);
}

static void bench_send(const void *hdr, size_t hdr_len, crmpi_convertor_t *payload,
                       size_t payload_len)
{
    int rc;

    while ((rc = bench.module->send(bench.module, bench.peer, BENCH_TAG, hdr, hdr_len, payload,
                                    payload_len)) == CRMPI_ERR_RESOURCE_BUSY)
        bench.module->progress(bench.module);
    if (rc != CRMPI_OK)
        bench_fail("send", rc);
}

static void bench_recv(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data, size_t len)
{
    if (bench.sink && len > BENCH_HDR) {
        size_t n = len - BENCH_HDR;

        /* The next message goes to the start of the same buffer, as in NetPIPE. */
        if (bench.sink_at + n > bench.sink_size)
            bench.sink_at = 0;
        memcpy(bench.sink + bench.sink_at, (const char *)data + BENCH_HDR, n);
        bench.sink_at += n;
    }
    bench.received++;
    if (bench.echo)
        bench_send(data, 1, NULL, 0);
}

static void bench_wait(uint64_t count)
{
    while (bench.received < count)
        bench.module->progress(bench.module);
}

/* Until every send has completed: the fence that follows does not progress the module. */
static void bench_drain(void)
{
    while (((btl_ofi_module_t *)bench.module)->num_sending > 0)
        bench.module->progress(bench.module);
}

/* Both ranks: `iters` round trips of 1-byte records. @return one-way microseconds. */
static double bench_latency(uint64_t iters)
{
    const char byte = 'x';
    uint64_t base = bench.received;
    double start;

    bench.echo = bench.rank == 1;
    if (bench.rank == 1) {
        bench_wait(base + iters);
        return 0;
    }
    start = bench_now();
    for (uint64_t i = 1; i <= iters; i++) {
        bench_send(&byte, 1, NULL, 0);
        bench_wait(base + i);
    }
    return (bench_now() - start) * 1e6 / (double)iters / 2;
}

/* Rank 0 streams `count` messages of `msg_size` bytes in fragments; rank 1 copies them out
 * and answers once at the end. @return GB/s (1e9 bytes per second). */
static double bench_bandwidth(size_t msg_size, uint64_t count, char *src)
{
    size_t frag_payload = bench.module->max_send_size - BENCH_HDR;
    uint64_t frags_per_msg = (msg_size + frag_payload - 1) / frag_payload;
    uint64_t base = bench.received;
    char hdr[BENCH_HDR] = {0};
    double start;

    bench.echo = 0;
    bench.sink_size = msg_size;
    bench.sink_at = 0;
    if (bench.rank == 1) {
        bench_wait(base + count * frags_per_msg);
        bench_send(hdr, 1, NULL, 0);
        return 0;
    }
    start = bench_now();
    for (uint64_t m = 0; m < count; m++) {
        crmpi_convertor_t conv;

        crmpi_convertor_init(&conv, src, msg_size, &bench_byte);
        while (conv.position < conv.total) {
            size_t n = conv.total - conv.position < frag_payload ? conv.total - conv.position
                                                                 : frag_payload;
            bench_send(hdr, BENCH_HDR, &conv, n);
        }
    }
    bench_wait(base + 1);
    return (double)msg_size * (double)count / (bench_now() - start) / 1e9;
}

static int bench_cmp(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Best and median of `n` values, sorted in place. */
static void bench_print(const char *what, double *values, int n, const char *unit)
{
    qsort(values, (size_t)n, sizeof(values[0]), bench_cmp);
    printf("%-34s %9.3f %s (median %.3f)\n", what, values[0], unit, values[n / 2]);
}

/* Open the module, fence, add the peer. */
static void bench_open(const crmpi_rte_job_info_t *job)
{
    const crmpi_btl_component_ops_t *ops = crmpi_btl_ofi_component.ops;
    uint32_t ranks[2] = {0, 1};
    crmpi_btl_endpoint_t *eps[2];
    int rc;

    rc = ops->init(job, &bench.module);
    if (rc != CRMPI_OK)
        bench_fail("init", rc);
    crmpi_rte_fence(1);
    rc = bench.module->add_procs(bench.module, 2, ranks, eps);
    if (rc != CRMPI_OK || !eps[1 - bench.rank])
        bench_fail("add_procs", rc != CRMPI_OK ? rc : CRMPI_ERR_UNREACH);
    bench.peer = eps[1 - bench.rank];
}

static void bench_close(void)
{
    uint32_t ranks[2] = {0, 1};
    crmpi_btl_endpoint_t *eps[2] = {NULL, NULL};

    eps[1 - bench.rank] = bench.peer;
    bench.module->del_procs(bench.module, 2, ranks, eps);
    bench.module->finalize(bench.module);
    bench.module = NULL;
}

/* The pieces of init, timed the way the component runs them. */
static void bench_init_parts(uint32_t rank, double *load_ms, double *choose_ms)
{
    btl_ofi_settings_t settings = {.library = "libfabric.so.1", .provider = "", .domain = ""};
    struct fi_info *info;
    btl_ofi_lib_t lib;
    double t0 = bench_now();

    crmpi_param_get_string("btl_ofi_library", &settings.library);
    crmpi_param_get_string("btl_ofi_provider", &settings.provider);
    crmpi_param_get_string("btl_ofi_domain", &settings.domain);
    if (btl_ofi_lib_open(settings.library, true, &lib) != CRMPI_OK)
        bench_fail("loading libfabric", CRMPI_ERR_NOT_FOUND);
    *load_ms = (bench_now() - t0) * 1e3;
    t0 = bench_now();
    if (btl_ofi_provider_choose(&lib, &settings, rank, &info) != CRMPI_OK)
        bench_fail("choosing the provider", CRMPI_ERR_NOT_FOUND);
    *choose_ms = (bench_now() - t0) * 1e3;
    lib.freeinfo(info);
    btl_ofi_lib_close(&lib);
}

/* Release and rebuild, as around a checkpoint's dump; rank 0 reports. */
static void bench_cycles(const char *dir, uint32_t rank)
{
    double finalize_ms[BENCH_CYCLES], rebuild_ms[BENCH_CYCLES];
    double load_ms[BENCH_CYCLES], choose_ms[BENCH_CYCLES];
    const char byte = 'x';

    for (int c = 0; c < BENCH_CYCLES; c++) {
        crmpi_rte_job_info_t job;
        char subdir[600];
        double t0;

        /* Quiet, as after a checkpoint's drain. */
        bench_drain();
        crmpi_rte_fence(0);
        t0 = bench_now();
        bench_close();
        finalize_ms[c] = (bench_now() - t0) * 1e3;
        bench_init_parts(rank, &load_ms[c], &choose_ms[c]);
        /* Each rebuild is a new modex, as after a checkpoint. */
        snprintf(subdir, sizeof(subdir), "%s/cycle%d", dir, c);
        mkdir(subdir, 0700);
        crmpi_rte_fence(0);
        crmpi_btl_test_rte_setup(subdir, rank, 2, NULL, &job);
        t0 = bench_now();
        bench_open(&job);
        bench.echo = rank == 1;
        if (rank == 0) {
            uint64_t base = bench.received;

            bench_send(&byte, 1, NULL, 0);
            bench_wait(base + 1);
        } else {
            bench_wait(bench.received + 1);
        }
        rebuild_ms[c] = (bench_now() - t0) * 1e3;
    }
    bench.echo = 0;
    if (rank == 0) {
        bench_print("cycle: finalize", finalize_ms, BENCH_CYCLES, "ms");
        bench_print("cycle: init..first round trip", rebuild_ms, BENCH_CYCLES, "ms");
        bench_print("  of which: load libfabric", load_ms, BENCH_CYCLES, "ms");
        bench_print("  of which: choose the provider", choose_ms, BENCH_CYCLES, "ms");
    }
}

static void bench_rank(const char *dir, uint32_t rank, double scale, const char *what)
{
    static const size_t sizes[] = {4096, 32768, 262144, 1048576, 4194304};
    double results[BENCH_REPS];
    crmpi_rte_job_info_t job;
    char *src;

    bench.rank = rank;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    crmpi_btl_test_rte_setup(dir, rank, 2, NULL, &job);
    crmpi_btl_register_recv(BENCH_TAG, bench_recv);
    bench_open(&job);
    if (rank == 0)
        printf("provider %s, fragments of %zu bytes\n",
               ((btl_ofi_module_t *)bench.module)->info->fabric_attr->prov_name,
               bench.module->max_send_size);
    if (strcmp(what, "traffic") != 0)
        bench_cycles(dir, rank);
    if (strcmp(what, "cycles") == 0) {
        bench_drain();
        crmpi_rte_fence(0);
        bench_close();
        return;
    }
    bench.sink = rank == 1 ? malloc(4194304) : NULL;
    src = malloc(4194304);
    memset(src, 7, 4194304);
    if (bench.sink)
        memset(bench.sink, 0, 4194304);

    /* Short repetitions, best and median: the machine is shared, and a burst of someone
     * else's work spoils one repetition, not the result. */
    bench_latency((uint64_t)(20000 * scale)); /* warm-up */
    for (int rep = 0; rep < BENCH_REPS; rep++)
        results[rep] = bench_latency((uint64_t)(20000 * scale));
    if (rank == 0)
        bench_print("latency 1 B, one-way", results, BENCH_REPS, "us");
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        uint64_t count = (uint64_t)(1e8 * scale / (double)sizes[s]) + 1;
        char what[64];

        bench_bandwidth(sizes[s], count, src); /* warm-up */
        for (int rep = 0; rep < BENCH_REPS; rep++)
            results[rep] = bench_bandwidth(sizes[s], count, src);
        if (rank == 0) {
            /* Best is the largest here: print the sorted list's end. */
            qsort(results, BENCH_REPS, sizeof(results[0]), bench_cmp);
            snprintf(what, sizeof(what), "bandwidth %zu B", sizes[s]);
            printf("%-34s %9.3f GB/s (median %.3f)\n", what, results[BENCH_REPS - 1],
                   results[BENCH_REPS / 2]);
        }
    }
    fflush(stdout);
    bench_drain();
    crmpi_rte_fence(0);
    bench_close();
    free(src);
    free(bench.sink);
}

/* The fake rte's files and directories, then the directory itself. */
static void bench_dir_remove(const char *path)
{
    DIR *dir = opendir(path);
    struct dirent *entry;
    char file[600];

    if (!dir)
        return;
    while ((entry = readdir(dir)) != NULL) {
        struct stat st;

        if (entry->d_name[0] == '.')
            continue;
        snprintf(file, sizeof(file), "%s/%s", path, entry->d_name);
        if (stat(file, &st) == 0 && S_ISDIR(st.st_mode))
            bench_dir_remove(file);
        else
            unlink(file);
    }
    closedir(dir);
    rmdir(path);
}

int main(int argc, char **argv)
{
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    const char *what = argc > 2 ? argv[2] : "all";
    char dir[] = "/tmp/bench_btl_ofi.XXXXXX";
    pid_t pids[2];
    int failed = 0;

    if (scale <= 0 || (strcmp(what, "all") && strcmp(what, "cycles") && strcmp(what, "traffic")) ||
        !mkdtemp(dir) || crmpi_catalog_register_all() != CRMPI_OK) {
        fprintf(stderr, "usage: bench_btl_ofi [iterations-scale > 0] [all|cycles|traffic]\n");
        return 1;
    }
    fflush(NULL);
    for (uint32_t r = 0; r < 2; r++) {
        pids[r] = fork();
        if (pids[r] == 0) {
            bench_rank(dir, r, scale, what);
            _exit(0);
        }
    }
    for (int r = 0; r < 2; r++) {
        int status;

        if (waitpid(pids[r], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            failed = 1;
    }
    bench_dir_remove(dir);
    return failed;
}
