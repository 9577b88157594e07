/*
 * test_map.c: rank placement on hosts and binding (mpirun_map.c), on a synthetic topology
 * of 2 sockets x 2 cores x 2 hardware threads (PUs 0-7, core c of socket s has PUs
 * 4s+2c and 4s+2c+1), so the answers do not depend on the machine.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "crmpi_status.h"
#include "mpirun_map.h"
#include "mpirun_options.h"

static hwloc_topology_t test_topo;

static int test_setup(void **state)
{
    (void)state;
    if (hwloc_topology_init(&test_topo) < 0 ||
        hwloc_topology_set_synthetic(test_topo, "pack:2 core:2 pu:2") < 0 ||
        hwloc_topology_load(test_topo) < 0)
        return -1;
    return 0;
}

static int test_teardown(void **state)
{
    (void)state;
    hwloc_topology_destroy(test_topo);
    return 0;
}

/* Map the words given after "mpirun" (a program is added) on node "me". */
static int test_map(mpirun_map_t *map, bool remote_allowed, char *err, size_t err_len, ...)
{
    static char *argv[64];
    mpirun_options_t opts;
    int argc = 0, rc;
    va_list ap;

    argv[argc++] = "mpirun";
    va_start(ap, err_len);
    for (char *word; (word = va_arg(ap, char *));)
        argv[argc++] = word;
    va_end(ap);
    argv[argc++] = "prog";
    argv[argc] = NULL;
    err[0] = '\0';
    rc = mpirun_options_parse(argc, argv, &opts, err, err_len);
    assert_int_equal(rc, CRMPI_OK);
    rc = mpirun_map_compute(&opts, test_topo, "me", remote_allowed, map, err, err_len);
    mpirun_options_free(&opts);
    return rc;
}

/* The node of each rank, as "a a b b". */
static void test_nodes_are(const mpirun_map_t *map, const char *expected)
{
    char text[256] = "";
    size_t len = 0;

    for (int rank = 0; rank < map->np; rank++)
        len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s", rank ? " " : "",
                                map->nodes[map->placement[rank].node_id]);
    assert_string_equal(text, expected);
}

static void test_cpusets_are(const mpirun_map_t *map, const char *const *expected)
{
    for (int rank = 0; rank < map->np; rank++)
        assert_string_equal(map->placement[rank].cpuset, expected[rank]);
}

static void test_default_one_node(void **state)
{
    mpirun_map_t map;
    char err[256];

    (void)state;
    assert_int_equal(test_map(&map, false, err, sizeof(err), NULL), CRMPI_OK);
    assert_int_equal(map.np, 4); /* one per core */
    assert_int_equal(map.num_nodes, 1);
    assert_false(map.remote);
    assert_null(map.placement[0].cpuset);
    mpirun_map_free(&map);
    /* Without hosts any rank count goes. */
    assert_int_equal(test_map(&map, false, err, sizeof(err), "-np", "9", NULL), CRMPI_OK);
    assert_int_equal(map.np, 9);
    mpirun_map_free(&map);
}

/* A restart of a sequence held only on the nodes' own storage: each rank on its own node,
 * a lost node's (b's) on their partner's, as the hosts' slots allow; --map-by node keeps
 * its own order. */
static void test_restore_near_copies(void **state)
{
    static char *argv[] = {"mpirun", "-H", "c:2,a:1", "-np", "3", "prog", NULL};
    char a[] = "a", b[] = "b", c[] = "c", err[256];
    mpirun_copy_nodes_t copies[] = {{a, b}, {b, c}, {c, a}};
    mpirun_options_t opts;
    mpirun_map_t map;

    (void)state;
    assert_int_equal(mpirun_options_parse(6, argv, &opts, err, sizeof(err)), CRMPI_OK);
    assert_int_equal(mpirun_map_compute(&opts, test_topo, "me", true, &map, err, sizeof(err)),
                     CRMPI_OK);
    test_nodes_are(&map, "c c a"); /* by slot */
    mpirun_map_free(&map);
    opts.restore_copies = copies;
    assert_int_equal(mpirun_map_compute(&opts, test_topo, "me", true, &map, err, sizeof(err)),
                     CRMPI_OK);
    test_nodes_are(&map, "a c c");
    mpirun_map_free(&map);
    opts.map_by = MPIRUN_MAP_BY_NODE;
    assert_int_equal(mpirun_map_compute(&opts, test_topo, "me", true, &map, err, sizeof(err)),
                     CRMPI_OK);
    test_nodes_are(&map, "c a c");
    mpirun_map_free(&map);
    opts.restore_copies = NULL; /* the test's own */
    mpirun_options_free(&opts);
}

static void test_slot_and_node(void **state)
{
    mpirun_map_t map;
    char err[256];

    (void)state;
    assert_int_equal(test_map(&map, true, err, sizeof(err), "-H", "a:2,b:2", NULL), CRMPI_OK);
    assert_true(map.remote);
    test_nodes_are(&map, "a a b b");
    mpirun_map_free(&map);
    assert_int_equal(
        test_map(&map, true, err, sizeof(err), "-H", "a:2,b:2", "--map-by", "node", NULL),
        CRMPI_OK);
    test_nodes_are(&map, "a b a b");
    mpirun_map_free(&map);
    /* A host named twice is one host with both slot counts; map-by node skips full hosts. */
    assert_int_equal(test_map(&map, true, err, sizeof(err), "-H", "a:1,b:3,a:1", "--map-by", "node",
                              "-np", "5", NULL),
                     CRMPI_OK);
    assert_int_equal(map.num_nodes, 2);
    test_nodes_are(&map, "a b a b b");
    mpirun_map_free(&map);
    /* Oversubscribed: the slots first, then one more per host in turn. */
    assert_int_equal(test_map(&map, true, err, sizeof(err), "-H", "a:1,b:1", "-np", "4",
                              "--oversubscribe", NULL),
                     CRMPI_OK);
    test_nodes_are(&map, "a b a b");
    mpirun_map_free(&map);
}

static void test_ppr(void **state)
{
    mpirun_map_t map;
    char err[256];

    (void)state;
    /* -N without -np: N on each host (a host without a count has the cores' slots). */
    assert_int_equal(test_map(&map, true, err, sizeof(err), "-N", "1", "-H", "a,b,c", NULL),
                     CRMPI_OK);
    test_nodes_are(&map, "a b c");
    mpirun_map_free(&map);
    assert_int_equal(
        test_map(&map, true, err, sizeof(err), "-N", "2", "-np", "3", "-H", "a,b", NULL), CRMPI_OK);
    test_nodes_are(&map, "a a b");
    mpirun_map_free(&map);
    /* One per socket, bound to a core of it. */
    static const char *const per_socket[] = {"0-1", "4-5", "0-1", "4-5"};
    assert_int_equal(test_map(&map, true, err, sizeof(err), "--map-by", "ppr:1:socket", "-H", "a,b",
                              "--bind-to", "core", NULL),
                     CRMPI_OK);
    test_nodes_are(&map, "a a b b");
    test_cpusets_are(&map, per_socket);
    mpirun_map_free(&map);
}

static void test_binding_per_node(void **state)
{
    mpirun_map_t map;
    char err[256], text[256];

    (void)state;
    /* Each host's ranks take its cores from the first. */
    static const char *const cores[] = {"0-1", "2-3", "0-1", "2-3"};
    assert_int_equal(
        test_map(&map, true, err, sizeof(err), "-H", "a:2,b:2", "--bind-to", "core", NULL),
        CRMPI_OK);
    test_cpusets_are(&map, cores);
    mpirun_map_binding_text(test_topo, map.placement[1].cpuset, text, sizeof(text));
    assert_string_equal(text, "socket 0[core 1[hwt 0-1]]: [../BB][../..]");
    mpirun_map_free(&map);
    /* Mapped by core (the slot policy), bound to the first thread of it, as Open MPI does. */
    static const char *const hwthreads[] = {"0", "2", "4"};
    assert_int_equal(
        test_map(&map, false, err, sizeof(err), "-np", "3", "--bind-to", "hwthread", NULL),
        CRMPI_OK);
    test_cpusets_are(&map, hwthreads);
    mpirun_map_binding_text(test_topo, map.placement[1].cpuset, text, sizeof(text));
    assert_string_equal(text, "socket 0[core 1[hwt 0]]: [../B.][../..]");
    mpirun_map_binding_text(test_topo, NULL, text, sizeof(text));
    assert_string_equal(text, "");
    mpirun_map_free(&map);
}

static void test_refusals(void **state)
{
    mpirun_map_t map;
    char err[256];

    (void)state;
    assert_int_equal(test_map(&map, false, err, sizeof(err), "-H", "a", NULL), CRMPI_ERR_BAD_PARAM);
    assert_non_null(strstr(err, "host 'a' is not this node (me)"));
    assert_int_equal(test_map(&map, true, err, sizeof(err), "-H", "a:1,b:1", "-np", "3", NULL),
                     CRMPI_ERR_BAD_PARAM);
    assert_non_null(strstr(err, "only 2 slots"));
    assert_int_equal(test_map(&map, true, err, sizeof(err), "-N", "3", "-H", "a:2", NULL),
                     CRMPI_ERR_BAD_PARAM);
    assert_non_null(strstr(err, "puts 3 ranks on host a, which has 2 slots"));
    assert_int_equal(
        test_map(&map, true, err, sizeof(err), "-N", "1", "-np", "3", "-H", "a,b", NULL),
        CRMPI_ERR_BAD_PARAM);
    assert_non_null(strstr(err, "at most 2 ranks on 2 hosts"));
    assert_int_equal(test_map(&map, true, err, sizeof(err), "-H", "a:5", "--bind-to", "core", NULL),
                     CRMPI_ERR_BAD_PARAM);
    assert_non_null(strstr(err, "5 ranks on a but a node has 4 cores"));
}

/* This node's names are one node, named as the machine names itself. */
/* --map-by and --bind-to numa, socket and core on a machine with NUMA nodes (2 packages x 2
 * nodes x 2 cores, one PU each: core c of node n of package p is PU 4p+2n+c). */
static void test_numa_nodes(void **state)
{
    (void)state;
    static const struct {
        const char *map_by, *bind_to, *np;
        const char *cpusets[4];
    } cases[] = {
        {"numa", "numa", "4", {"0-1", "2-3", "4-5", "6-7"}},
        {"numa", "core", "4", {"0", "2", "4", "6"}},
        {"socket", "numa", "2", {"0-1", "4-5"}},
        {"core", "numa", "4", {"0-1", "0-1", "2-3", "2-3"}},
        {"core", "socket", "2", {"0-3", "0-3"}},
    };
    hwloc_topology_t flat = test_topo;
    mpirun_map_t map;
    char err[256];

    assert_int_equal(hwloc_topology_init(&test_topo), 0);
    assert_int_equal(hwloc_topology_set_synthetic(test_topo, "pack:2 numa:2 core:2 pu:1"), 0);
    assert_int_equal(hwloc_topology_load(test_topo), 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(test_map(&map, false, err, sizeof(err), "-np", cases[i].np, "--map-by",
                                  cases[i].map_by, "--bind-to", cases[i].bind_to, NULL),
                         CRMPI_OK);
        test_cpusets_are(&map, cases[i].cpusets);
        mpirun_map_free(&map);
    }
    hwloc_topology_destroy(test_topo);
    test_topo = flat;
}

static void test_local_aliases(void **state)
{
    mpirun_map_t map;
    char err[256];

    (void)state;
    assert_int_equal(
        test_map(&map, false, err, sizeof(err), "-H", "localhost:1,me:1,127.0.0.1:1", NULL),
        CRMPI_OK);
    assert_int_equal(map.num_nodes, 1);
    assert_int_equal(map.np, 3);
    assert_string_equal(map.nodes[0], "me");
    assert_false(map.remote);
    mpirun_map_free(&map);
    assert_true(mpirun_map_host_is_local("me", "me.example.org"));
    assert_false(mpirun_map_host_is_local("mx1", "me"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_one_node),
        cmocka_unit_test(test_slot_and_node),
        cmocka_unit_test(test_ppr),
        cmocka_unit_test(test_binding_per_node),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_local_aliases),
        cmocka_unit_test(test_numa_nodes),
        cmocka_unit_test(test_restore_near_copies),
    };
    return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
