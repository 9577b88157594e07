/*
 * test_crs_numa.c: memory placement across a checkpoint (crs_criu_numa.c, mempolicy.h):
 * policies as numa_maps shows them, the record's numanode and vma lines, the node map onto
 * another binding (hwloc synthetic topologies standing in for NUMA machines), pages put back
 * with move_pages, and the policies a restored rank and its threads give themselves. Needs
 * neither root nor
 * CRIU; the machine may have a single NUMA node (everything real happens on node 0).
 */
#include <fcntl.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "component.h"
#include "crmpi_status.h"
#include "crs_criu_int.h"
#include "mempolicy.h"
#include "param.h"

#define TST_PAGE 4096

static cpu_set_t tst_set(const char *list)
{
    cpu_set_t set;
    assert_int_equal(crs_criu_cpulist_parse(list, &set), CRMPI_OK);
    return set;
}

static void tst_policy_expect(const char *text, int mode, unsigned flags, uint64_t nodes,
                              const char *record)
{
    int got_mode;
    unsigned got_flags;
    uint64_t got_nodes;
    char back[64];

    assert_int_equal(crs_criu_numa_policy_parse(text, &got_mode, &got_flags, &got_nodes), CRMPI_OK);
    assert_int_equal(got_mode, mode);
    assert_int_equal(got_flags, flags);
    assert_int_equal(got_nodes, nodes);
    crs_criu_numa_policy_format(got_mode, got_flags, got_nodes, back, sizeof(back));
    assert_string_equal(back, record);
}

/* Every form the kernel's numa_maps writes, and the record's own. */
static void test_policy_parse(void **state)
{
    (void)state;
    int mode;
    unsigned flags;
    uint64_t nodes;

    tst_policy_expect("default", MPOL_DEFAULT, 0, 0, "default");
    tst_policy_expect("bind:0", MPOL_BIND, 0, 1, "bind:0");
    tst_policy_expect("interleave:0-1,3", MPOL_INTERLEAVE, 0, 0xb, "interleave:0-1,3");
    tst_policy_expect("prefer:1", MPOL_PREFERRED, 0, 2, "prefer:1");
    tst_policy_expect("prefer (many):0-1", MPOL_PREFERRED_MANY, 0, 3, "prefer-many:0-1");
    tst_policy_expect("prefer-many:2", MPOL_PREFERRED_MANY, 0, 4, "prefer-many:2");
    tst_policy_expect("local", MPOL_LOCAL, 0, 0, "local");
    tst_policy_expect("bind=static:0", MPOL_BIND, MPOL_F_STATIC_NODES, 1, "bind=static:0");
    tst_policy_expect("interleave=relative:0-1", MPOL_INTERLEAVE, MPOL_F_RELATIVE_NODES, 3,
                      "interleave=relative:0-1");
    tst_policy_expect("bind=balancing:1", MPOL_BIND, 0, 2, "bind:1");
    tst_policy_expect("bind=static|balancing:1", MPOL_BIND, MPOL_F_STATIC_NODES, 2,
                      "bind=static:1");
    assert_int_equal(crs_criu_numa_policy_parse("weighted interleave:0-1", &mode, &flags, &nodes),
                     CRMPI_ERR_NOT_SUPPORTED);
    const char *bad[] = {"", ":0", "bind:", "bind:x", "bind:64", "bind=odd:0", "7", "Bind:0"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(crs_criu_numa_policy_parse(bad[i], &mode, &flags, &nodes),
                         CRMPI_ERR_BAD_PARAM);
}

static int tst_tmpdir(char *path, size_t len)
{
    snprintf(path, len, "/tmp/test_crs_numa.XXXXXX");
    assert_non_null(mkdtemp(path));
    int dirfd = open(path, O_DIRECTORY | O_RDONLY);
    assert_true(dirfd >= 0);
    return dirfd;
}

static void tst_rmdir(int dirfd, const char *path)
{
    unlinkat(dirfd, CRS_CRIU_META_FILE, 0);
    close(dirfd);
    rmdir(path);
}

static void tst_write_text(int dirfd, const char *text)
{
    int fd = openat(dirfd, CRS_CRIU_META_FILE, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

/* numanode and vma lines round-trip; malformed ones make the record unreadable. */
static void test_record_round_trip(void **state)
{
    (void)state;
    char path[256];
    int dirfd = tst_tmpdir(path, sizeof(path));
    crs_criu_node_rec_t nodes[2] = {{.os_index = 0, .logical = 0, .local = 0},
                                    {.os_index = 3, .logical = 1, .local = 1}};
    crs_criu_vma_rec_t vmas[2];
    crs_criu_meta_t meta, back;

    memset(&meta, 0, sizeof(meta));
    memset(vmas, 0, sizeof(vmas));
    meta.cpuset = tst_set("2-3");
    vmas[0] = (crs_criu_vma_rec_t){.ns_pid = 2,
                                   .start = 0x7f0000000000,
                                   .end = 0x7f0000100000,
                                   .mode = MPOL_INTERLEAVE,
                                   .policy_nodes = 9};
    vmas[0].pages[0] = 100;
    vmas[0].pages[3] = 28;
    vmas[1] =
        (crs_criu_vma_rec_t){.ns_pid = 2, .start = 0x1000, .end = 0x3000, .mode = MPOL_DEFAULT};
    meta.nodes = nodes;
    meta.num_nodes = 2;
    meta.vmas = vmas;
    meta.num_vmas = 2;
    crs_criu_thread_rec_t threads[3] = {
        {.ns_pid = 2, .ns_tid = 2, .mems = "0,3", .policy_mode = MPOL_LOCAL},
        {.ns_pid = 2,
         .ns_tid = 5,
         .mems = "0,3",
         .policy_mode = MPOL_BIND,
         .policy_flags = MPOL_F_STATIC_NODES,
         .policy_nodes = 8},
        {.ns_pid = 2, .ns_tid = 6, .mems = "0,3", .policy_mode = CRS_CRIU_NO_POLICY},
    };
    for (int i = 0; i < 3; i++)
        threads[i].cpus = tst_set("2");
    meta.threads = threads;
    meta.num_threads = 3;
    assert_int_equal(crs_criu_meta_write(dirfd, &meta), CRMPI_OK);
    assert_int_equal(crs_criu_meta_read(dirfd, &back), CRMPI_OK);
    assert_int_equal(back.num_threads, 3);
    for (int i = 0; i < 3; i++)
        assert_memory_equal(&back.threads[i], &threads[i], sizeof(threads[i]));
    assert_int_equal(back.num_nodes, 2);
    assert_int_equal(back.nodes[1].os_index, 3);
    assert_int_equal(back.nodes[1].logical, 1);
    assert_int_equal(back.nodes[1].local, 1);
    assert_int_equal(back.num_vmas, 2);
    assert_memory_equal(&back.vmas[0], &vmas[0], sizeof(vmas[0]));
    assert_memory_equal(&back.vmas[1], &vmas[1], sizeof(vmas[1]));
    crs_criu_meta_free(&back);

    /* A policy of a later kernel is kept, not understood. */
    tst_write_text(dirfd, "crmpi-crs-criu 1\nvma 2 1000 2000 weighted-interleave:0-1 N0=1\n"
                          "thread 2 2 0 0 weighted-interleave:0-1\n");
    assert_int_equal(crs_criu_meta_read(dirfd, &back), CRMPI_OK);
    assert_int_equal(back.num_vmas, 1);
    assert_int_equal(back.vmas[0].mode, -1);
    assert_int_equal(back.num_threads, 1);
    assert_int_equal(back.threads[0].policy_mode, -1);
    crs_criu_meta_free(&back);

    const char *bad[] = {
        "crmpi-crs-criu 1\nnumanode 64 0 1\n",
        "crmpi-crs-criu 1\nnumanode 1 0 2\n",
        "crmpi-crs-criu 1\nnumanode 1 0 1\nnumanode 1 1 0\n",
        "crmpi-crs-criu 1\nvma 2 2000 1000 bind:0 -\n",
        "crmpi-crs-criu 1\nvma 2 1000 2000 bind:0 N64=1\n",
        "crmpi-crs-criu 1\nvma 2 1000 2000 bind:0 N0=1,N0=2\n",
        "crmpi-crs-criu 1\nvma 2 1000 2000 bind:0 N0=1,\n",
        "crmpi-crs-criu 1\nvma 2 1000 2000 bind:0 N0=0\n",
        "crmpi-crs-criu 1\nvma 0 1000 2000 bind:0 -\n",
        "crmpi-crs-criu 1\nvma 2 1000 2000 bind: -\n",
        "crmpi-crs-criu 1\nthread 2 2 0 0 bind:\n",
        "crmpi-crs-criu 1\nthread 2 2 0 0 bind:64\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        tst_write_text(dirfd, bad[i]);
        assert_int_equal(crs_criu_meta_read(dirfd, &back), CRMPI_ERR_PROTO);
    }
    tst_rmdir(dirfd, path);
}

/* A record for the checkpoint's nodes on a synthetic topology, bound to `cpus`. */
static void tst_nodes_of(const char *synthetic, const char *cpus, crs_criu_meta_t *meta)
{
    cpu_set_t binding = tst_set(cpus);
    char value[128];

    snprintf(value, sizeof(value), "synthetic:%s", synthetic);
    assert_int_equal(crmpi_param_set_override("crs_criu_topology", value), CRMPI_OK);
    memset(meta, 0, sizeof(*meta));
    meta->cpuset = binding;
    assert_int_equal(crs_criu_numa_collect_nodes(&binding, meta), CRMPI_OK);
}

/* The same relative node of the binding, on synthetic machines. */
static void test_map_synthetic(void **state)
{
    (void)state;
    crs_criu_meta_t old, now;
    crs_criu_numa_plan_t plan;
    cpu_set_t binding;

    /* Two nodes of two cores; the rank was bound to node 1's cores. */
    tst_nodes_of("numa:2 core:2 pu:1", "2-3", &old);
    assert_int_equal(old.num_nodes, 2);
    assert_int_equal(old.nodes[0].local, 0);
    assert_int_equal(old.nodes[1].local, 1);
    assert_int_equal(old.nodes[1].os_index, 1);
    assert_int_equal(old.nodes[1].logical, 1);
    old.vmas = calloc(1, sizeof(*old.vmas));
    old.num_vmas = 1;
    old.vmas[0].pages[1] = 50; /* its data on its own node */
    old.vmas[0].pages[0] = 2;

    /* Same layout: nothing moves. */
    binding = tst_set("2-3");
    assert_int_equal(crs_criu_numa_plan(&old, &binding, &plan), CRMPI_OK);
    assert_int_equal(plan.changed, 0);
    assert_int_equal(plan.to_os[0], 0);
    assert_int_equal(plan.to_os[1], 1);
    assert_int_equal(plan.home, 1);

    /* Restarted bound to node 0's cores: its node becomes 0, the other node becomes 1. */
    binding = tst_set("0-1");
    assert_int_equal(crs_criu_numa_plan(&old, &binding, &plan), CRMPI_OK);
    assert_int_equal(plan.changed, 1);
    assert_int_equal(plan.to_os[1], 0);
    assert_int_equal(plan.to_os[0], 1);
    assert_int_equal(plan.home, 0);
    assert_int_equal(crs_criu_numa_map_mask(&plan, 0x2), 0x1);
    assert_int_equal(crs_criu_numa_map_mask(&plan, 0x3), 0x3);

    /* Four nodes of one core, bound to the third: node 1 -> node 2, node 0 -> the first
     * node outside the binding (0). */
    assert_int_equal(crmpi_param_set_override("crs_criu_topology", "synthetic:numa:4 core:1 pu:1"),
                     CRMPI_OK);
    binding = tst_set("2");
    assert_int_equal(crs_criu_numa_plan(&old, &binding, &plan), CRMPI_OK);
    assert_int_equal(plan.to_os[1], 2);
    assert_int_equal(plan.to_os[0], 0);
    assert_int_equal(plan.home, 2);

    /* A binding over two nodes keeps positions: the old one's 2nd node is the new one's 2nd. */
    tst_nodes_of("numa:4 core:1 pu:1", "0-1", &now);
    now.vmas = NULL;
    binding = tst_set("2-3");
    assert_int_equal(crs_criu_numa_plan(&now, &binding, &plan), CRMPI_OK);
    assert_int_equal(plan.to_os[0], 2);
    assert_int_equal(plan.to_os[1], 3);
    assert_int_equal(plan.to_os[2], 0);
    assert_int_equal(plan.to_os[3], 1);
    crs_criu_meta_free(&now);

    /* A machine with one node: every node of the checkpoint goes to it (said in a warning). */
    assert_int_equal(crmpi_param_set_override("crs_criu_topology", "synthetic:numa:1 core:2 pu:1"),
                     CRMPI_OK);
    binding = tst_set("0-1");
    assert_int_equal(crs_criu_numa_plan(&old, &binding, &plan), CRMPI_OK);
    assert_int_equal(plan.changed, 1);
    assert_int_equal(plan.to_os[0], 0);
    assert_int_equal(plan.to_os[1], 0);
    assert_int_equal(plan.home, 0);
    crs_criu_meta_free(&old);
    assert_int_equal(crmpi_param_set_override("crs_criu_topology", ""), CRMPI_OK);
}

/* The map itself, on node lists given by hand: locals first by position, then the rest. */
static void test_map_positions(void **state)
{
    (void)state;
    crs_criu_node_rec_t old_nodes[3] = {{0, 0, 1}, {1, 1, 1}, {2, 2, 0}};
    crs_criu_node_rec_t new_nodes[3] = {{4, 0, 0}, {5, 1, 1}, {6, 2, 0}};
    crs_criu_node_rec_t all_local[1] = {{7, 0, 1}};
    int map[3];

    crs_criu_numa_map(old_nodes, 3, new_nodes, 3, map);
    assert_int_equal(map[0], 1); /* old local 0 -> new local 0 (OS 5) */
    assert_int_equal(map[1], 1); /* old local 1 -> new local 1 mod 1 */
    assert_int_equal(map[2], 0); /* old other 0 -> new other 0 (OS 4) */
    crs_criu_numa_map(old_nodes, 3, all_local, 1, map);
    assert_int_equal(map[0], 0);
    assert_int_equal(map[1], 0);
    assert_int_equal(map[2], 0);
    crs_criu_numa_map(old_nodes, 3, NULL, 0, map);
    assert_int_equal(map[2], -1);
}

/* The restorer needs no preference when the binding reaches the home node alone. */
static void test_plan_home_only(void **state)
{
    (void)state;
    crs_criu_node_rec_t recorded[2] = {{0, 0, 1}, {1, 1, 0}};
    crs_criu_node_rec_t one_bound[2] = {{0, 0, 1}, {1, 1, 0}};
    crs_criu_node_rec_t both_bound[2] = {{0, 0, 1}, {1, 1, 1}};
    crs_criu_node_rec_t other_bound[2] = {{0, 0, 0}, {1, 1, 1}};
    crs_criu_vma_rec_t vma;
    crs_criu_meta_t meta;
    crs_criu_numa_plan_t plan;

    memset(&meta, 0, sizeof(meta));
    memset(&vma, 0, sizeof(vma));
    vma.pages[0] = 10; /* home: node 0 */
    meta.nodes = recorded;
    meta.num_nodes = 2;
    meta.vmas = &vma;
    meta.num_vmas = 1;
    crs_criu_numa_plan_nodes(&meta, one_bound, 2, &plan);
    assert_int_equal(plan.home, 0);
    assert_int_equal(plan.home_only, 1);
    crs_criu_numa_plan_nodes(&meta, both_bound, 2, &plan);
    assert_int_equal(plan.home, 0);
    assert_int_equal(plan.home_only, 0);
    /* Bound to node 1 alone: node 0 of the record maps there, and so does home. */
    crs_criu_numa_plan_nodes(&meta, other_bound, 2, &plan);
    assert_int_equal(plan.home, 1);
    assert_int_equal(plan.home_only, 1);
}

static int tst_policy_of(void *addr, unsigned long *nodes_out)
{
    int mode = -1;
    unsigned long nodes = 0;
    assert_int_equal(
        syscall(SYS_get_mempolicy, &mode, &nodes, 65UL, addr, (unsigned long)MPOL_F_ADDR), 0);
    *nodes_out = nodes;
    return mode;
}

/* This process's areas with policies on node 0 are recorded from numa_maps, handed back in
 * mempolicy.h's text, and re-applied to fresh areas at the same addresses. */
static void test_policies_collect_apply(void **state)
{
    (void)state;
    static const int modes[3] = {MPOL_BIND, MPOL_INTERLEAVE, MPOL_PREFERRED};
    unsigned long node0 = 1, nodes;
    char *areas[3], *text = NULL;
    crs_criu_meta_t meta;
    crs_criu_numa_plan_t plan;
    cpu_set_t binding;

    assert_int_equal(crmpi_param_set_override("crs_criu_topology", ""), CRMPI_OK);
    for (int i = 0; i < 3; i++) {
        areas[i] =
            mmap(NULL, 8 * TST_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        assert_true(areas[i] != MAP_FAILED);
        assert_int_equal(syscall(SYS_mbind, areas[i], 8 * TST_PAGE, modes[i], &node0, 65UL, 0U), 0);
        memset(areas[i], i + 1, 8 * TST_PAGE); /* resident, on node 0 */
    }
    assert_int_equal(crs_criu_meta_collect(getpid(), &meta), CRMPI_OK);
    assert_true(meta.num_nodes >= 1);
    for (int i = 0; i < 3; i++) {
        const crs_criu_vma_rec_t *found = NULL;
        for (size_t v = 0; v < meta.num_vmas; v++)
            if (meta.vmas[v].start == (uintptr_t)areas[i])
                found = &meta.vmas[v];
        assert_non_null(found);
        assert_int_equal(found->end, (uintptr_t)areas[i] + 8 * TST_PAGE);
        assert_int_equal(found->mode, modes[i]);
        assert_int_equal(found->policy_nodes, 1);
        assert_int_equal(found->pages[0], 8);
        assert_int_equal(found->ns_pid, getpid());
    }
    assert_int_equal(sched_getaffinity(0, sizeof(binding), &binding), 0);
    assert_int_equal(crs_criu_numa_plan(&meta, &binding, &plan), CRMPI_OK);
    assert_int_equal(plan.to_os[0], 0);
    assert_int_equal(crs_criu_numa_policies(&meta, &plan, &text), CRMPI_OK);
    assert_non_null(text);

    /* As after a restore: the same areas, default policy. */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(syscall(SYS_mbind, areas[i], 8 * TST_PAGE, MPOL_DEFAULT, NULL, 0UL, 0U),
                         0);
        assert_int_equal(tst_policy_of(areas[i], &nodes), MPOL_DEFAULT);
    }
    crmpi_mempolicy_area_t *parsed = NULL;
    size_t num = 0, applied = 0;
    assert_int_equal(crmpi_mempolicy_parse(text, &parsed, &num), CRMPI_OK);
    assert_true(num >= 3);
    assert_int_equal(crmpi_mempolicy_apply(parsed, num, &applied), CRMPI_OK);
    assert_true(applied >= 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(tst_policy_of(areas[i], &nodes), modes[i]);
        assert_int_equal(nodes, 1);
    }
    free(parsed);
    free(text);

    /* Pages of one-node areas go back to that node; here they are there already. */
    uint64_t moved = 99, refused = 99;
    assert_int_equal(crs_criu_numa_pages_restore(&meta, &plan, getpid(), &moved, &refused),
                     CRMPI_OK);
    assert_int_equal(moved, 0);
    assert_int_equal(refused, 0);
    void *page = areas[0];
    int status = -1;
    assert_int_equal(syscall(SYS_move_pages, 0, 1UL, &page, NULL, &status, 0), 0);
    assert_int_equal(status, 0);
    crs_criu_meta_free(&meta);
    for (int i = 0; i < 3; i++)
        munmap(areas[i], 8 * TST_PAGE);
}

/* The text form: round trip, and malformed text refused whole. */
static void test_mempolicy_text(void **state)
{
    (void)state;
    crmpi_mempolicy_area_t areas[2] = {
        {.pid = 7, .start = 0x1000, .end = 0x5000, .mode = MPOL_BIND, .nodes = 0x3},
        {.pid = 8,
         .start = 0x7f0000000000,
         .end = 0x7f0000001000,
         .mode = MPOL_INTERLEAVE,
         .flags = MPOL_F_STATIC_NODES,
         .nodes = 1ULL << 63},
    };
    crmpi_mempolicy_area_t *back = NULL;
    size_t num = 0;
    char *text = NULL;

    assert_int_equal(crmpi_mempolicy_format(areas, 2, &text), CRMPI_OK);
    assert_int_equal(crmpi_mempolicy_parse(text, &back, &num), CRMPI_OK);
    assert_int_equal(num, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(back[i].pid, areas[i].pid);
        assert_int_equal(back[i].start, areas[i].start);
        assert_int_equal(back[i].end, areas[i].end);
        assert_int_equal(back[i].mode, areas[i].mode);
        assert_int_equal(back[i].flags, areas[i].flags);
        assert_int_equal(back[i].nodes, areas[i].nodes);
    }
    free(back);
    free(text);
    assert_int_equal(crmpi_mempolicy_parse("", &back, &num), CRMPI_OK);
    assert_int_equal(num, 0);
    const char *bad[] = {"7:1000-5000:2:0:3,", "7:5000-1000:2:0:3", "0:1000-5000:2:0:3",
                         "7:1000-5000:99:0:3", "7:1000-5000:2:1:3", "7:1000-5000:2:0",
                         "7:1000-5000:2:0:3;"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(crmpi_mempolicy_parse(bad[i], &back, &num), CRMPI_ERR_PROTO);
}

/* A worker thread with a policy of its own, told what to do through a pipe. */
typedef struct tst_worker {
    pthread_t thread;
    int ask[2];    /* 'b': bind to node 0; 'd': back to default; '?': say the policy */
    int answer[2]; /* its mode after each request */
    pid_t tid;     /* its tid */
} tst_worker_t;

static void *tst_worker_main(void *arg)
{
    tst_worker_t *w = arg;
    unsigned long node0 = 1, nodes;
    char ask;

    w->tid = (pid_t)syscall(SYS_gettid);
    while (read(w->ask[0], &ask, 1) == 1) {
        int mode = -1;
        if (ask == 'b')
            syscall(SYS_set_mempolicy, MPOL_BIND, &node0, 65UL);
        else if (ask == 'd')
            syscall(SYS_set_mempolicy, MPOL_DEFAULT, NULL, 0UL);
        syscall(SYS_get_mempolicy, &mode, &nodes, 65UL, NULL, 0UL);
        if (write(w->answer[1], &mode, sizeof(mode)) != sizeof(mode))
            break;
    }
    return NULL;
}

static int tst_worker_do(tst_worker_t *w, char ask)
{
    int mode = -1;
    assert_int_equal(write(w->ask[1], &ask, 1), 1);
    assert_int_equal(read(w->answer[0], &mode, sizeof(mode)), sizeof(mode));
    return mode;
}

/* Threads' own policies: recorded from each thread's numa_maps (and not mistaken for the
 * areas'), listed for a restart only where a thread lacks its recorded one, and set by each
 * thread itself from the signal; the text refuses what is malformed. */
static void test_thread_policies(void **state)
{
    (void)state;
    tst_worker_t w;
    crs_criu_meta_t meta;
    crs_criu_numa_plan_t plan;
    cpu_set_t binding;
    char *text = NULL;
    int signo = SIGRTMAX - 1;

    assert_int_equal(crmpi_param_set_override("crs_criu_topology", ""), CRMPI_OK);
    assert_int_equal(pipe(w.ask), 0);
    assert_int_equal(pipe(w.answer), 0);
    assert_int_equal(pthread_create(&w.thread, NULL, tst_worker_main, &w), 0);
    assert_int_equal(tst_worker_do(&w, 'b'), MPOL_BIND);
    /* The main thread's own policy shows through every area without one. */
    unsigned long node0 = 1;
    assert_int_equal(syscall(SYS_set_mempolicy, MPOL_PREFERRED, &node0, 65UL), 0);
    assert_int_equal(crs_criu_meta_collect(getpid(), &meta), CRMPI_OK);
    assert_int_equal(syscall(SYS_set_mempolicy, MPOL_DEFAULT, NULL, 0UL), 0);
    const crs_criu_thread_rec_t *main_rec = NULL, *worker_rec = NULL;
    for (size_t i = 0; i < meta.num_threads; i++) {
        if (meta.threads[i].ns_tid == getpid())
            main_rec = &meta.threads[i];
        if (meta.threads[i].ns_tid == w.tid)
            worker_rec = &meta.threads[i];
    }
    assert_non_null(main_rec);
    assert_non_null(worker_rec);
    assert_int_equal(main_rec->policy_mode, MPOL_PREFERRED);
    assert_int_equal(main_rec->policy_nodes, 1);
    assert_int_equal(worker_rec->policy_mode, MPOL_BIND);
    assert_int_equal(worker_rec->policy_nodes, 1);
    for (size_t v = 0; v < meta.num_vmas; v++)
        assert_int_not_equal(meta.vmas[v].mode, MPOL_PREFERRED);

    assert_int_equal(sched_getaffinity(0, sizeof(binding), &binding), 0);
    assert_int_equal(crs_criu_numa_plan(&meta, &binding, &plan), CRMPI_OK);
    /* As after a restore, every thread has the restorer's (default) policy: both listed. */
    assert_int_equal(tst_worker_do(&w, 'd'), MPOL_DEFAULT);
    assert_int_equal(crs_criu_numa_thread_policies(&meta, &plan, getpid(), signo, &text), CRMPI_OK);
    assert_non_null(text);
    crmpi_mempolicy_thread_t *threads = NULL;
    size_t num = 0, applied = 0;
    int parsed_signo = 0;
    assert_int_equal(crmpi_mempolicy_threads_parse(text, &parsed_signo, &threads, &num), CRMPI_OK);
    assert_int_equal(parsed_signo, signo);
    assert_int_equal(num, 2);
    free(text);
    struct sigaction before, after;
    assert_int_equal(sigaction(signo, NULL, &before), 0);
    assert_int_equal(crmpi_mempolicy_threads_apply(signo, threads, num, &applied), CRMPI_OK);
    assert_int_equal(applied, 2);
    assert_int_equal(sigaction(signo, NULL, &after), 0);
    assert_ptr_equal(after.sa_handler, before.sa_handler); /* the disposition is back */
    assert_int_equal(tst_worker_do(&w, '?'), MPOL_BIND);
    int mode = -1;
    unsigned long nodes = 0;
    assert_int_equal(syscall(SYS_get_mempolicy, &mode, &nodes, 65UL, NULL, 0UL), 0);
    assert_int_equal(mode, MPOL_PREFERRED);
    free(threads);
    /* Every thread has its policy now: nothing to list. */
    assert_int_equal(crs_criu_numa_thread_policies(&meta, &plan, getpid(), signo, &text), CRMPI_OK);
    assert_null(text);
    assert_int_equal(syscall(SYS_set_mempolicy, MPOL_DEFAULT, NULL, 0UL), 0);
    crs_criu_meta_free(&meta);
    close(w.ask[1]);
    pthread_join(w.thread, NULL);
    close(w.ask[0]);
    close(w.answer[0]);
    close(w.answer[1]);

    /* The text: round trip done above; malformed text refused whole. */
    const char *bad[] = {"",
                         "5/7:8:2:0:1",
                         "40/7:8:2:0:1,",
                         "40/0:8:2:0:1",
                         "40/7:8:99:0:1",
                         "40/7:8:2:1:1",
                         "40/7:8:2:0",
                         "x/7:8:2:0:1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(crmpi_mempolicy_threads_parse(bad[i], &parsed_signo, &threads, &num),
                         CRMPI_ERR_PROTO);
}

/* crs_criu_numa 0: nothing of memory is recorded. */
static void test_switch_off(void **state)
{
    (void)state;
    crs_criu_meta_t meta;

    assert_int_equal(crmpi_param_set_override("crs_criu_numa", "0"), CRMPI_OK);
    assert_int_equal(crs_criu_meta_collect(getpid(), &meta), CRMPI_OK);
    assert_int_equal(meta.num_nodes, 0);
    assert_int_equal(meta.num_vmas, 0);
    crs_criu_meta_free(&meta);
    assert_int_equal(crmpi_param_set_override("crs_criu_numa", "1"), CRMPI_OK);
    assert_int_equal(crs_criu_meta_collect(getpid(), &meta), CRMPI_OK);
    assert_true(meta.num_nodes >= 1);
    assert_true(meta.num_vmas >= 1);
    crs_criu_meta_free(&meta);
}

/* A reservation of terabytes with two pages in memory (an AddressSanitizer shadow, a
 * runtime's arena): its runs and its pages' placement ask only the pages in memory, found
 * with PAGEMAP_SCAN; asking all of its billion pages would take the restart hours. */
static void test_sparse_reservation(void **state)
{
    (void)state;
    const size_t size = (size_t)4 << 40;
    crs_criu_node_rec_t nodes[2] = {{0, 0, 1}, {1, 1, 1}};
    crs_criu_meta_t meta;
    crs_criu_numa_plan_t plan;
    uint64_t moved = 9, refused = 9;
    char *area = mmap(NULL, size, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

    if (area == MAP_FAILED)
        skip(); /* no room for 4 TiB of address space here */
    area[TST_PAGE] = 1;
    area[size - TST_PAGE] = 1;
    memset(&meta, 0, sizeof(meta));
    meta.nodes = nodes;
    meta.num_nodes = 2;
    meta.vmas = calloc(1, sizeof(*meta.vmas));
    meta.num_vmas = 1;
    meta.vmas[0] = (crs_criu_vma_rec_t){.ns_pid = getpid(),
                                        .start = (uintptr_t)area,
                                        .end = (uintptr_t)area + size,
                                        .mode = MPOL_DEFAULT};
    meta.vmas[0].pages[0] = 1;
    meta.vmas[0].pages[1] = 1; /* declared spread, so that its pages are asked one by one */
    assert_int_equal(crs_criu_numa_collect_runs(getpid(), &meta, 0), CRMPI_OK);
    uint64_t in_memory = 0, asked = 0;
    for (size_t r = 0; r < meta.vmas[0].num_runs; r++) {
        asked += meta.vmas[0].runs[r].count;
        in_memory += meta.vmas[0].runs[r].node >= 0 ? meta.vmas[0].runs[r].count : 0;
    }
    assert_int_equal(in_memory, 2);
    assert_int_equal(asked, size / TST_PAGE); /* up to the last page */
    assert_int_equal(meta.vmas[0].runs[0].node, -1);
    assert_int_equal(meta.vmas[0].runs[0].count, 1);
    assert_int_equal(meta.vmas[0].runs[1].node, 0);
    crs_criu_numa_plan_nodes(&meta, nodes, 1, &plan);
    assert_int_equal(crs_criu_numa_pages_restore(&meta, &plan, getpid(), &moved, &refused),
                     CRMPI_OK);
    assert_int_equal(moved + refused, 0);
    meta.nodes = NULL; /* on the stack */
    meta.num_nodes = 0;
    crs_criu_meta_free(&meta);
    munmap(area, size);
}

/* Transparent huge pages, which CRIU restores as small pages: the ranges that were huge at
 * the checkpoint are found (PAGEMAP_SCAN), recorded ("thp" lines), listed for the rank, and
 * collapsed by it (crmpi_mempolicy_collapse). The area is touched as small pages first;
 * its two middle huge-page blocks are then collapsed, as the rank would. */
static void test_huge_pages(void **state)
{
    (void)state;
    const size_t huge = (size_t)2 << 20, size = 4 * huge;
    char path[256],
        *text = NULL,
        *map = mmap(NULL, size + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *area = (char *)(((uintptr_t)map + huge - 1) & ~(uintptr_t)(huge - 1));
    crs_criu_meta_t meta, back;
    crmpi_mempolicy_area_t *listed = NULL;
    size_t collapsed = 9, num = 0;

    assert_true(map != MAP_FAILED);
    assert_int_equal(madvise(area, size, MADV_NOHUGEPAGE), 0);
    memset(area, 1, size);
    /* The middle blocks may become huge (khugepaged could also collapse them); the outer
     * ones stay small. */
    assert_int_equal(madvise(area + huge, 2 * huge, MADV_HUGEPAGE), 0);
    memset(&meta, 0, sizeof(meta));
    meta.vmas = calloc(1, sizeof(*meta.vmas));
    meta.num_vmas = 1;
    meta.vmas[0] = (crs_criu_vma_rec_t){
        .ns_pid = getpid(), .start = (uintptr_t)area, .end = (uintptr_t)area + size};

    crmpi_mempolicy_area_t middle = {
        .pid = getpid(), .start = (uintptr_t)area + huge, .end = (uintptr_t)area + 3 * huge};
    assert_int_equal(crs_criu_numa_collect_thp(getpid(), &meta, 0), CRMPI_OK);
    assert_true(meta.vmas[0].num_thp <= 1); /* small pages, or what khugepaged made huge */
    free(meta.vmas[0].thp);
    meta.vmas[0].thp = NULL;
    meta.vmas[0].num_thp = 0;
    assert_int_equal(crmpi_mempolicy_collapse(&middle, 1, &collapsed), CRMPI_OK);
    if (collapsed == 0) {
        crs_criu_meta_free(&meta);
        munmap(map, size + huge);
        skip(); /* transparent huge pages are off here, or none is free */
    }
    assert_int_equal(crs_criu_numa_collect_thp(getpid(), &meta, 0), CRMPI_OK);
    assert_int_equal(meta.vmas[0].num_thp, 1);
    assert_int_equal(meta.vmas[0].thp[0], middle.start);
    assert_int_equal(meta.vmas[0].thp[1], middle.end);
    assert_int_equal(area[huge + 5], 1); /* the bytes stay */

    int dirfd = tst_tmpdir(path, sizeof(path));
    assert_int_equal(crs_criu_meta_write(dirfd, &meta), CRMPI_OK);
    assert_int_equal(crs_criu_meta_read(dirfd, &back), CRMPI_OK);
    assert_int_equal(back.num_vmas, 1);
    assert_int_equal(back.vmas[0].num_thp, 1);
    assert_memory_equal(back.vmas[0].thp, meta.vmas[0].thp, 2 * sizeof(uint64_t));
    assert_int_equal(crs_criu_numa_hugepages(&back, &text), CRMPI_OK);
    assert_non_null(text);
    assert_int_equal(crmpi_mempolicy_parse(text, &listed, &num), CRMPI_OK);
    assert_int_equal(num, 1);
    assert_int_equal(listed[0].pid, getpid());
    assert_int_equal(listed[0].start, middle.start);
    assert_int_equal(listed[0].end, middle.end);
    free(listed);
    free(text);
    crs_criu_meta_free(&back);

    /* Ranges outside their area, out of order, overlapping or empty are refused. */
    const char *bad[] = {
        "crmpi-crs-criu 1\nvma 2 200000 600000 default -\nthp 2 200000 100000-400000\n",
        "crmpi-crs-criu 1\nvma 2 200000 600000 default -\nthp 2 200000 400000-800000\n",
        "crmpi-crs-criu 1\nvma 2 200000 600000 default -\nthp 2 200000 400000-600000,"
        "200000-400000\n",
        "crmpi-crs-criu 1\nvma 2 200000 600000 default -\nthp 2 200000 200000-400000,"
        "300000-500000\n",
        "crmpi-crs-criu 1\nvma 2 200000 600000 default -\nthp 2 200000 400000-400000\n",
        "crmpi-crs-criu 1\nvma 2 200000 600000 default -\nthp 2 200000 200000-400000,\n",
        "crmpi-crs-criu 1\nvma 2 200000 600000 default -\nthp 3 200000 200000-400000\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        tst_write_text(dirfd, bad[i]);
        assert_int_equal(crs_criu_meta_read(dirfd, &back), CRMPI_ERR_PROTO);
    }
    tst_rmdir(dirfd, path);
    crs_criu_meta_free(&meta);
    munmap(map, size + huge);
}

/* Per-page runs: asked with move_pages for an area on several nodes, written as a "pages"
 * line, read back, and followed when pages are put back. Only node 0 is real here, so the
 * area is declared two-node by hand; half its pages are resident. */
static void test_page_runs(void **state)
{
    (void)state;
    char path[256];
    int dirfd = tst_tmpdir(path, sizeof(path));
    crs_criu_node_rec_t nodes[2] = {{0, 0, 1}, {1, 1, 1}};
    crs_criu_meta_t meta, back;
    crs_criu_numa_plan_t plan;
    uint64_t moved = 9, refused = 9;
    char *area =
        mmap(NULL, 8 * TST_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    assert_true(area != MAP_FAILED);
    memset(area, 1, 4 * TST_PAGE);
    memset(&meta, 0, sizeof(meta));
    meta.nodes = nodes;
    meta.num_nodes = 2;
    meta.vmas = calloc(1, sizeof(*meta.vmas));
    meta.num_vmas = 1;
    meta.vmas[0] = (crs_criu_vma_rec_t){.ns_pid = getpid(),
                                        .start = (uintptr_t)area,
                                        .end = (uintptr_t)area + 8 * TST_PAGE,
                                        .mode = MPOL_DEFAULT};
    meta.vmas[0].pages[0] = 3;
    meta.vmas[0].pages[1] = 1;
    memset(area + 6 * TST_PAGE, 1, TST_PAGE);
    assert_int_equal(crs_criu_numa_collect_runs(getpid(), &meta, 0), CRMPI_OK);
    /* Runs up to the last page in memory; the pages after it are not asked. */
    assert_int_equal(meta.vmas[0].num_runs, 3);
    assert_int_equal(meta.vmas[0].runs[0].node, 0);
    assert_int_equal(meta.vmas[0].runs[0].count, 4);
    assert_int_equal(meta.vmas[0].runs[1].node, -1);
    assert_int_equal(meta.vmas[0].runs[1].count, 2);
    assert_int_equal(meta.vmas[0].runs[2].node, 0);
    assert_int_equal(meta.vmas[0].runs[2].count, 1);
    assert_int_equal(crs_criu_meta_write(dirfd, &meta), CRMPI_OK);
    assert_int_equal(crs_criu_meta_read(dirfd, &back), CRMPI_OK);
    assert_int_equal(back.num_vmas, 1);
    assert_int_equal(back.vmas[0].num_runs, 3);
    assert_memory_equal(back.vmas[0].runs, meta.vmas[0].runs, 3 * sizeof(crs_criu_page_run_t));
    /* Same machine: every page is where the runs say. */
    crs_criu_numa_plan_nodes(&back, nodes, 1, &plan);
    assert_int_equal(crs_criu_numa_pages_restore(&back, &plan, getpid(), &moved, &refused),
                     CRMPI_OK);
    assert_int_equal(moved, 0);
    assert_int_equal(refused, 0);
    crs_criu_meta_free(&back);

    /* An interleaved area's pages follow its (mapped) nodes, none elsewhere here. */
    meta.vmas[0].mode = MPOL_INTERLEAVE;
    meta.vmas[0].policy_nodes = 1;
    crs_criu_numa_plan_nodes(&meta, nodes, 1, &plan);
    assert_int_equal(crs_criu_numa_pages_restore(&meta, &plan, getpid(), &moved, &refused),
                     CRMPI_OK);
    assert_int_equal(moved + refused, 0);

    char vma_line[128], bad_line[256];
    snprintf(vma_line, sizeof(vma_line), "crmpi-crs-criu 1\nvma 5 1000 5000 default N0=1,N1=1\n");
    const char *bad_runs[] = {"0x5", "0x2,0x2,-x1", "0x1,", "64x1", "x1", "0x0", "-1x1"};
    for (size_t i = 0; i < sizeof(bad_runs) / sizeof(bad_runs[0]); i++) {
        snprintf(bad_line, sizeof(bad_line), "%spages 5 1000 %s\n", vma_line, bad_runs[i]);
        tst_write_text(dirfd, bad_line);
        assert_int_equal(crs_criu_meta_read(dirfd, &back), CRMPI_ERR_PROTO);
    }
    tst_write_text(dirfd, "crmpi-crs-criu 1\npages 5 1000 0x1\n"); /* no such area */
    assert_int_equal(crs_criu_meta_read(dirfd, &back), CRMPI_ERR_PROTO);
    snprintf(bad_line, sizeof(bad_line), "%spages 5 1000 0x1\npages 5 1000 0x1\n", vma_line);
    tst_write_text(dirfd, bad_line);
    assert_int_equal(crs_criu_meta_read(dirfd, &back), CRMPI_ERR_PROTO);
    snprintf(bad_line, sizeof(bad_line), "%spages 5 1000 0x1,0x1,-x2\n", vma_line);
    tst_write_text(dirfd, bad_line);
    assert_int_equal(crs_criu_meta_read(dirfd, &back), CRMPI_OK);
    assert_int_equal(back.vmas[0].num_runs, 2); /* adjacent runs of one node merge */
    assert_int_equal(back.vmas[0].runs[0].count, 2);
    crs_criu_meta_free(&back);
    meta.nodes = NULL;
    meta.num_nodes = 0;
    crs_criu_meta_free(&meta);
    munmap(area, 8 * TST_PAGE);
    tst_rmdir(dirfd, path);
}

/* A mapped file whose path is longer than any fixed line buffer: its numa_maps line (path
 * first, page counts after) is read whole, so the counts are not lost. */
static void test_long_path(void **state)
{
    (void)state;
    char dir[4096], file[4200];
    crs_criu_meta_t meta;
    size_t len;

    snprintf(dir, sizeof(dir), "/tmp/test_crs_numa.XXXXXX");
    assert_non_null(mkdtemp(dir));
    len = strlen(dir);
    for (int level = 0; level < 6; level++) {
        dir[len++] = '/';
        memset(dir + len, 'a' + level, 200);
        len += 200;
        dir[len] = '\0';
        assert_int_equal(mkdir(dir, 0700), 0);
    }
    snprintf(file, sizeof(file), "%s/deadbeef", dir);
    int fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, 4 * TST_PAGE), 0);
    char *area = mmap(NULL, 4 * TST_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    assert_true(area != MAP_FAILED);
    memset(area, 7, 4 * TST_PAGE); /* private copies, on node 0 */
    assert_int_equal(crs_criu_meta_collect(getpid(), &meta), CRMPI_OK);
    const crs_criu_vma_rec_t *found = NULL;
    for (size_t v = 0; v < meta.num_vmas; v++)
        if (meta.vmas[v].start == (uintptr_t)area)
            found = &meta.vmas[v];
    assert_non_null(found);
    assert_int_equal(found->end, (uintptr_t)area + 4 * TST_PAGE);
    assert_int_equal(found->pages[0], 4);
    crs_criu_meta_free(&meta);
    munmap(area, 4 * TST_PAGE);
    close(fd);
    unlink(file);
    for (int level = 0; level < 6; level++) {
        rmdir(dir);
        *strrchr(dir, '/') = '\0';
    }
    rmdir(dir);
}

/* A topology hwloc cannot load does not fail the checkpoint: it records no memory
 * placement, the rest as usual. */
static void test_no_topology(void **state)
{
    (void)state;
    crs_criu_meta_t meta;

    assert_int_equal(crmpi_param_set_override("crs_criu_topology", "/nonexistent/topo.xml"),
                     CRMPI_OK);
    assert_int_equal(crs_criu_meta_collect(getpid(), &meta), CRMPI_OK);
    assert_int_equal(meta.num_nodes, 0);
    assert_int_equal(meta.num_vmas, 0);
    assert_true(meta.num_threads >= 1);
    crs_criu_meta_free(&meta);
    assert_int_equal(crmpi_param_set_override("crs_criu_topology", ""), CRMPI_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_parse),       cmocka_unit_test(test_record_round_trip),
        cmocka_unit_test(test_map_synthetic),      cmocka_unit_test(test_map_positions),
        cmocka_unit_test(test_mempolicy_text),     cmocka_unit_test(test_policies_collect_apply),
        cmocka_unit_test(test_switch_off),         cmocka_unit_test(test_no_topology),
        cmocka_unit_test(test_page_runs),          cmocka_unit_test(test_long_path),
        cmocka_unit_test(test_plan_home_only),     cmocka_unit_test(test_thread_policies),
        cmocka_unit_test(test_sparse_reservation), cmocka_unit_test(test_huge_pages),
    };
    if (crmpi_catalog_register_all() != CRMPI_OK)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
