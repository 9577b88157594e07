/*
 * test_comm_objects.c: the local parts of mpi/'s objects in a singleton: group algebra
 * (on groups of made-up world ranks, so that a one-rank job can have big groups), info
 * objects, keyvals and attribute callbacks on duplicates of MPI_COMM_SELF, context ids
 * given back and reused, picked and agreed over a bridge (as an intercommunicator's two
 * groups agree), the intercommunicator calls a singleton can make, MPI_Dims_create, and
 * Cartesian arithmetic.
 *
 * MPI can be initialised once per process: the group setup does it and sets
 * MPI_ERRORS_RETURN on both predefined communicators, so errors come back as return values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "comm_internal.h"
#include "test_capture.h"
#include "topo/topo.h"

static int group_setup(void **state)
{
    (void)state;
    unsetenv("CRMPI_CTL_FD");
    setenv("CRMPI_PARAM_FILE", "", 1);
    test_env_clear_mca();
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        return -1;
    }
    crmpi_mpi_comm_world.comm.errhandler = MPI_ERRORS_RETURN;
    crmpi_mpi_comm_self.comm.errhandler = MPI_ERRORS_RETURN;
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    return MPI_Finalize() == MPI_SUCCESS ? 0 : -1;
}

/* A group of the given world ranks (this process is world rank 0). */
static MPI_Group make_group(int n, const int *world_ranks)
{
    uint32_t *ranks = malloc((size_t)(n + 1) * sizeof(uint32_t));

    assert_non_null(ranks);
    for (int i = 0; i < n; i++) {
        ranks[i] = (uint32_t)world_ranks[i];
    }
    MPI_Group group = crmpi_group_new(n, ranks);
    assert_non_null(group);
    return group;
}

static void assert_group(MPI_Group group, int n, const int *world_ranks)
{
    int size;

    assert_int_equal(MPI_Group_size(group, &size), MPI_SUCCESS);
    assert_int_equal(size, n);
    for (int i = 0; i < n; i++) {
        assert_int_equal(group->world_ranks[i], world_ranks[i]);
    }
}

static void test_group_algebra(void **state)
{
    (void)state;
    MPI_Group a = make_group(5, (int[]){0, 2, 4, 6, 8});
    MPI_Group b = make_group(4, (int[]){6, 3, 0, 9});
    MPI_Group g;
    int rank, result;

    assert_int_equal(MPI_Group_rank(a, &rank), MPI_SUCCESS);
    assert_int_equal(rank, 0);
    MPI_Group others = make_group(2, (int[]){5, 7});
    assert_int_equal(MPI_Group_rank(others, &rank), MPI_SUCCESS);
    assert_int_equal(rank, MPI_UNDEFINED);
    MPI_Group_free(&others);

    assert_int_equal(MPI_Group_union(a, b, &g), MPI_SUCCESS);
    assert_group(g, 7, (int[]){0, 2, 4, 6, 8, 3, 9});
    MPI_Group_free(&g);
    assert_null(g);
    assert_int_equal(MPI_Group_intersection(a, b, &g), MPI_SUCCESS);
    assert_group(g, 2, (int[]){0, 6});
    MPI_Group_free(&g);
    assert_int_equal(MPI_Group_difference(a, b, &g), MPI_SUCCESS);
    assert_group(g, 3, (int[]){2, 4, 8});
    MPI_Group_free(&g);
    assert_int_equal(MPI_Group_difference(a, a, &g), MPI_SUCCESS);
    assert_ptr_equal(g, MPI_GROUP_EMPTY);

    assert_int_equal(MPI_Group_incl(a, 3, (int[]){4, 0, 2}, &g), MPI_SUCCESS);
    assert_group(g, 3, (int[]){8, 0, 4});
    MPI_Group_free(&g);
    assert_int_equal(MPI_Group_excl(a, 2, (int[]){1, 3}, &g), MPI_SUCCESS);
    assert_group(g, 3, (int[]){0, 4, 8});
    MPI_Group_free(&g);
    int ranges[2][3] = {{4, 2, -1}, {0, 0, 5}};
    assert_int_equal(MPI_Group_range_incl(a, 2, ranges, &g), MPI_SUCCESS);
    assert_group(g, 4, (int[]){8, 6, 4, 0});
    MPI_Group_free(&g);
    int stride2[1][3] = {{0, 4, 2}};
    assert_int_equal(MPI_Group_range_excl(a, 1, stride2, &g), MPI_SUCCESS);
    assert_group(g, 2, (int[]){2, 6});
    MPI_Group_free(&g);

    /* Errors: a rank twice, a rank out of range. */
    assert_int_equal(MPI_Group_incl(a, 2, (int[]){1, 1}, &g), MPI_ERR_RANK);
    assert_int_equal(MPI_Group_excl(a, 1, (int[]){5}, &g), MPI_ERR_RANK);

    int in[3] = {0, 3, MPI_PROC_NULL}, out[3];
    assert_int_equal(MPI_Group_translate_ranks(a, 3, in, b, out), MPI_SUCCESS);
    assert_int_equal(out[0], 2);
    assert_int_equal(out[1], 0);
    assert_int_equal(out[2], MPI_PROC_NULL);

    assert_int_equal(MPI_Group_compare(a, a, &result), MPI_SUCCESS);
    assert_int_equal(result, MPI_IDENT);
    MPI_Group c = make_group(5, (int[]){8, 6, 4, 2, 0});
    assert_int_equal(MPI_Group_compare(a, c, &result), MPI_SUCCESS);
    assert_int_equal(result, MPI_SIMILAR);
    assert_int_equal(MPI_Group_compare(a, b, &result), MPI_SUCCESS);
    assert_int_equal(result, MPI_UNEQUAL);
    MPI_Group_free(&a);
    MPI_Group_free(&b);
    MPI_Group_free(&c);
}

static void test_info_objects(void **state)
{
    (void)state;
    MPI_Info info, dup;
    char key[MPI_MAX_INFO_KEY], value[8];
    int flag, nkeys, len;

    assert_int_equal(MPI_Info_create(&info), MPI_SUCCESS);
    assert_int_equal(MPI_Info_set(info, "k1", "v1"), MPI_SUCCESS);
    assert_int_equal(MPI_Info_set(info, "k2", "a longer value"), MPI_SUCCESS);
    assert_int_equal(MPI_Info_set(info, "k1", "v1bis"), MPI_SUCCESS);
    assert_int_equal(MPI_Info_get_nkeys(info, &nkeys), MPI_SUCCESS);
    assert_int_equal(nkeys, 2);
    assert_int_equal(MPI_Info_get_nthkey(info, 1, key), MPI_SUCCESS);
    assert_string_equal(key, "k2");
    assert_int_equal(MPI_Info_get_nthkey(info, 2, key), MPI_ERR_ARG);
    /* Truncated to valuelen characters. */
    assert_int_equal(MPI_Info_get(info, "k2", 4, value, &flag), MPI_SUCCESS);
    assert_true(flag);
    assert_string_equal(value, "a lo");
    assert_int_equal(MPI_Info_get_valuelen(info, "k2", &len, &flag), MPI_SUCCESS);
    assert_int_equal(len, 14);
    assert_int_equal(MPI_Info_get(info, "none", 4, value, &flag), MPI_SUCCESS);
    assert_false(flag);
    /* MPI_Info_get_string (MPI-4.0): the size with the null character, whatever fits. */
    len = 5;
    assert_int_equal(MPI_Info_get_string(info, "k2", &len, value, &flag), MPI_SUCCESS);
    assert_true(flag);
    assert_int_equal(len, 15);
    assert_string_equal(value, "a lo");
    len = 0;
    assert_int_equal(MPI_Info_get_string(info, "k2", &len, NULL, &flag), MPI_SUCCESS);
    assert_int_equal(len, 15);
    len = 3;
    assert_int_equal(MPI_Info_get_string(info, "none", &len, value, &flag), MPI_SUCCESS);
    assert_false(flag);
    assert_int_equal(len, 3);
    assert_int_equal(MPI_Info_delete(info, "none"), MPI_ERR_INFO_NOKEY);
    assert_int_equal(MPI_Info_set(info, "", "x"), MPI_ERR_INFO_KEY);
    assert_int_equal(MPI_Info_dup(info, &dup), MPI_SUCCESS);
    assert_int_equal(MPI_Info_delete(info, "k1"), MPI_SUCCESS);
    assert_int_equal(MPI_Info_get_nkeys(info, &nkeys), MPI_SUCCESS);
    assert_int_equal(nkeys, 1);
    assert_int_equal(MPI_Info_get_nkeys(dup, &nkeys), MPI_SUCCESS);
    assert_int_equal(nkeys, 2);
    assert_int_equal(MPI_Info_free(&info), MPI_SUCCESS);
    assert_ptr_equal(info, MPI_INFO_NULL);
    assert_int_equal(MPI_Info_free(&dup), MPI_SUCCESS);

    /* MPI_INFO_ENV: readable, not freeable. */
    assert_int_equal(MPI_Info_get(MPI_INFO_ENV, "maxprocs", 7, value, &flag), MPI_SUCCESS);
    assert_true(flag);
    assert_string_equal(value, "1");
    info = MPI_INFO_ENV;
    assert_int_equal(MPI_Info_free(&info), MPI_ERR_INFO);
}

/* Callbacks that count and record. */
static int copy_calls, delete_calls;

static int copy_plus_one(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)oldcomm, (void)keyval, (void)extra;
    copy_calls++;
    *(intptr_t *)out = (intptr_t)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_count(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)value;
    delete_calls++;
    /* extra, when set, points to a flag: refuse the deletion while it is non-zero. */
    return extra && *(const int *)extra ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static void test_attributes(void **state)
{
    (void)state;
    MPI_Comm a, b;
    int key, failing_key, flag, refuse_delete = 1;
    void *value;

    assert_int_equal(MPI_Comm_create_keyval(copy_plus_one, delete_count, &key, NULL), MPI_SUCCESS);
    assert_int_equal(MPI_Comm_dup(MPI_COMM_SELF, &a), MPI_SUCCESS);
    assert_int_equal(MPI_Comm_set_attr(a, key, (void *)10), MPI_SUCCESS);
    copy_calls = delete_calls = 0;
    assert_int_equal(MPI_Comm_dup(a, &b), MPI_SUCCESS);
    assert_int_equal(copy_calls, 1);
    assert_int_equal(MPI_Comm_get_attr(b, key, &value, &flag), MPI_SUCCESS);
    assert_true(flag);
    assert_ptr_equal(value, (void *)11);
    /* The keyval outlives its handle while attributes use it. */
    int handle = key;
    assert_int_equal(MPI_Comm_free_keyval(&handle), MPI_SUCCESS);
    assert_int_equal(handle, MPI_KEYVAL_INVALID);
    assert_int_equal(MPI_Comm_get_attr(b, key, &value, &flag), MPI_SUCCESS);
    assert_true(flag);
    /* Freeing it again through a copy of the integer is an error, and the attributes keep
     * their keyval (a second release used to drop the attributes' reference). */
    handle = key;
    assert_int_equal(MPI_Comm_free_keyval(&handle), MPI_ERR_KEYVAL);
    assert_int_equal(MPI_Comm_get_attr(b, key, &value, &flag), MPI_SUCCESS);
    assert_true(flag);
    assert_int_equal(MPI_Comm_free(&a), MPI_SUCCESS);
    assert_int_equal(MPI_Comm_free(&b), MPI_SUCCESS);
    assert_int_equal(delete_calls, 2);
    /* Now the keyval is gone. */
    assert_int_equal(MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL), MPI_ERR_KEYVAL);

    /* A delete callback that fails makes MPI_Comm_free fail and keeps the communicator. */
    assert_int_equal(
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_count, &failing_key, &refuse_delete),
        MPI_SUCCESS);
    assert_int_equal(MPI_Comm_dup(MPI_COMM_SELF, &a), MPI_SUCCESS);
    a->errhandler = MPI_ERRORS_RETURN;
    assert_int_equal(MPI_Comm_set_attr(a, failing_key, NULL), MPI_SUCCESS);
    assert_int_equal(MPI_Comm_free(&a), MPI_ERR_OTHER);
    assert_non_null(a);
    /* Kept whole: once the callback agrees, the communicator is freed like any other. */
    refuse_delete = 0;
    assert_int_equal(MPI_Comm_free(&a), MPI_SUCCESS);
    assert_ptr_equal(a, MPI_COMM_NULL);
    assert_int_equal(MPI_Comm_free_keyval(&failing_key), MPI_SUCCESS);

    /* Predefined attributes: readable on the world, not settable. */
    int *tag_ub;
    assert_int_equal(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag), MPI_SUCCESS);
    assert_true(flag);
    assert_int_equal(*tag_ub, 2147483647);
    assert_int_equal(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL), MPI_ERR_KEYVAL);
    assert_int_equal(MPI_Comm_get_attr(MPI_COMM_SELF, MPI_TAG_UB, &tag_ub, &flag), MPI_SUCCESS);
    assert_false(flag);
}

/* Ids are given back at free and the lowest free one is taken again. */
static void test_context_id_reuse(void **state)
{
    (void)state;
    MPI_Comm c[3];

    for (int i = 0; i < 3; i++) {
        assert_int_equal(MPI_Comm_dup(MPI_COMM_SELF, &c[i]), MPI_SUCCESS);
    }
    uint32_t first = c[0]->context_id, middle = c[1]->context_id;
    assert_true(first > CRMPI_CONTEXT_ID_SELF);
    assert_int_not_equal(first, middle);
    assert_int_not_equal(middle, c[2]->context_id);
    assert_int_equal(MPI_Comm_free(&c[1]), MPI_SUCCESS);
    assert_int_equal(MPI_Comm_dup(MPI_COMM_WORLD, &c[1]), MPI_SUCCESS);
    assert_int_equal(c[1]->context_id, middle);
    /* Beyond one window of ids. */
    MPI_Comm many[1100];
    for (int i = 0; i < 1100; i++) {
        assert_int_equal(MPI_Comm_dup(MPI_COMM_SELF, &many[i]), MPI_SUCCESS);
    }
    assert_true(many[1099]->context_id >= 1024);
    for (int i = 0; i < 1100; i++) {
        assert_int_equal(MPI_Comm_free(&many[i]), MPI_SUCCESS);
    }
    for (int i = 0; i < 3; i++) {
        assert_int_equal(MPI_Comm_free(&c[i]), MPI_SUCCESS);
    }
    MPI_Comm world = MPI_COMM_WORLD;
    assert_int_equal(MPI_Comm_free(&world), MPI_ERR_COMM);
}

/* MPI_Comm_free with requests pending: they complete, and the communicator (and its id)
 * goes only after the last one is released. */
static void test_free_with_pending_requests(void **state)
{
    (void)state;
    MPI_Comm comm, other;
    MPI_Request reqs[2];
    int out = 5, in = 0;

    assert_int_equal(MPI_Comm_dup(MPI_COMM_SELF, &comm), MPI_SUCCESS);
    uint32_t cid = comm->context_id;
    assert_int_equal(MPI_Irecv(&in, 1, MPI_INT, 0, 3, comm, &reqs[0]), MPI_SUCCESS);
    assert_int_equal(MPI_Comm_free(&comm), MPI_SUCCESS);
    assert_null(comm);
    /* The id is still taken: a message may still come for it. */
    assert_int_equal(MPI_Comm_dup(MPI_COMM_SELF, &other), MPI_SUCCESS);
    assert_int_not_equal(other->context_id, cid);
    assert_int_equal(MPI_Comm_free(&other), MPI_SUCCESS);
    /* The receive still matches a send on the freed communicator's id: from a duplicate
     * made before it was freed, nothing else can reach it, so complete it the other way. */
    assert_int_equal(MPI_Isend(&out, 1, MPI_INT, 0, 3, reqs[0]->owner, &reqs[1]), MPI_SUCCESS);
    assert_int_equal(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    assert_int_equal(in, 5);
    /* Released: buried at the next turn of progress, and its id free again. */
    crmpi_lock();
    crmpi_progress();
    crmpi_unlock();
    assert_int_equal(MPI_Comm_dup(MPI_COMM_SELF, &other), MPI_SUCCESS);
    assert_int_equal(other->context_id, cid);
    assert_int_equal(MPI_Comm_free(&other), MPI_SUCCESS);
}

/* The ids an agreement picks from a window's AND: the lowest `count`, or none. */
static void test_context_id_pick(void **state)
{
    uint64_t bits[2] = {(1ull << 5) | (1ull << 63), 1ull << 6};
    uint32_t cids[2] = {0, 0};

    (void)state;
    assert_true(crmpi_comm_cid_pick(bits, 2, 1024, 1, cids));
    assert_int_equal(cids[0], 1024 + 5);
    assert_true(crmpi_comm_cid_pick(bits, 2, 1024, 2, cids));
    assert_int_equal(cids[0], 1024 + 5);
    assert_int_equal(cids[1], 1024 + 63);
    bits[0] = 0;
    assert_true(crmpi_comm_cid_pick(bits, 2, 0, 1, cids));
    assert_int_equal(cids[0], 64 + 6);
    /* Fewer free than wanted: nothing is picked, everyone moves to the next window. */
    cids[0] = cids[1] = 7;
    assert_false(crmpi_comm_cid_pick(bits, 2, 0, 2, cids));
    assert_int_equal(cids[0], 7);
    bits[1] = 0;
    assert_false(crmpi_comm_cid_pick(bits, 2, 0, 1, cids));
}

/*
 * A bridged agreement, as an intercommunicator's two groups run it: here the one-member
 * set's leader is bridged to itself over MPI_COMM_SELF, so it gets its own bitmap back and
 * the agreement must end with two ids free here. Two agreements in flight at once
 * (bridged with their own tags) never pick the same id.
 */
static void test_context_id_bridged(void **state)
{
    crmpi_comm_xchg_set_t set;
    crmpi_comm_cid_op_t *ops[2];
    uint32_t cids[2][2];
    int rc[2], done[2] = {0, 0};

    (void)state;
    crmpi_lock();
    set = crmpi_comm_xchg_all(MPI_COMM_SELF, CRMPI_COMM_TAG_CID);
    set.bridge = MPI_COMM_SELF;
    set.bridge_peer = 0;
    set.bridge_tag = -1500;
    assert_int_equal(crmpi_comm_cid_agree(&set, 2, cids[0]), CRMPI_OK);
    assert_true(cids[0][0] > CRMPI_CONTEXT_ID_SELF);
    assert_true(cids[0][1] > cids[0][0]);
    crmpi_comm_cid_release(cids[0][0]);
    crmpi_comm_cid_release(cids[0][1]);

    for (int i = 0; i < 2; i++) {
        set.tag = -1510 - i;
        set.bridge_tag = -1520 - i;
        assert_int_equal(crmpi_comm_cid_start(&set, 2, &ops[i]), CRMPI_OK);
    }
    while (!done[0] || !done[1]) {
        for (int i = 0; i < 2; i++) {
            if (!done[i])
                done[i] = crmpi_comm_cid_test(ops[i], cids[i], &rc[i]);
        }
        crmpi_progress();
    }
    assert_int_equal(rc[0], CRMPI_OK);
    assert_int_equal(rc[1], CRMPI_OK);
    for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 2; j++) {
            assert_int_not_equal(cids[0][i], cids[1][j]);
            crmpi_comm_cid_release(cids[i][j]);
        }
    }
    crmpi_unlock();
}

/* The intercommunicator calls on a singleton: no intercommunicator can exist (its groups
 * would overlap), and the calls for one refuse intracommunicators. */
static void test_intercomm_refused(void **state)
{
    MPI_Comm inter = MPI_COMM_NULL, merged;
    MPI_Group group;
    int flag = 1, size;

    (void)state;
    assert_int_equal(MPI_Comm_test_inter(MPI_COMM_SELF, &flag), MPI_SUCCESS);
    assert_false(flag);
    assert_int_equal(MPI_Comm_remote_size(MPI_COMM_SELF, &size), MPI_ERR_COMM);
    assert_int_equal(MPI_Comm_remote_group(MPI_COMM_WORLD, &group), MPI_ERR_COMM);
    assert_int_equal(MPI_Intercomm_merge(MPI_COMM_SELF, 0, &merged), MPI_ERR_COMM);
    /* The leader meets itself over MPI_COMM_SELF: both groups are this process. */
    assert_int_equal(MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_SELF, 0, 5, &inter),
                     MPI_ERR_COMM);
    assert_ptr_equal(inter, MPI_COMM_NULL);
    assert_int_equal(MPI_Intercomm_create(MPI_COMM_SELF, 1, MPI_COMM_SELF, 0, 5, &inter),
                     MPI_ERR_RANK);
    assert_int_equal(MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_SELF, 0, -1, &inter),
                     MPI_ERR_TAG);
}

static void test_dims_create(void **state)
{
    (void)state;
    int dims[4];

    memset(dims, 0, sizeof(dims));
    assert_int_equal(crmpi_topo_dims_fill(24, 3, dims), MPI_SUCCESS);
    assert_int_equal(dims[0], 4);
    assert_int_equal(dims[1], 3);
    assert_int_equal(dims[2], 2);
    memset(dims, 0, sizeof(dims));
    assert_int_equal(MPI_Dims_create(7, 2, dims), MPI_SUCCESS);
    assert_int_equal(dims[0], 7);
    assert_int_equal(dims[1], 1);
    int fixed[3] = {0, 5, 0};
    assert_int_equal(MPI_Dims_create(60, 3, fixed), MPI_SUCCESS);
    assert_int_equal(fixed[0], 4);
    assert_int_equal(fixed[1], 5);
    assert_int_equal(fixed[2], 3);
    int bad[2] = {0, 7};
    assert_int_equal(MPI_Dims_create(12, 2, bad), MPI_ERR_DIMS);
    int full[2] = {3, 4};
    assert_int_equal(MPI_Dims_create(12, 2, full), MPI_SUCCESS);
    int one[3] = {0, 0, 0};
    assert_int_equal(MPI_Dims_create(1, 3, one), MPI_SUCCESS);
    assert_int_equal(one[0] * one[1] * one[2], 1);
    /* As close to each other as possible (MPI-3.1 section 7.5.2), the largest first; the
     * greedy split by prime factors gave 12 x 6 and 8 x 4 x 2. */
    static const struct {
        int nnodes, ndims, want[4];
    } balanced[] = {
        {72, 2, {9, 8}},
        {64, 3, {4, 4, 4}},
        {16, 3, {4, 2, 2}},
        {30, 2, {6, 5}},
        {36, 3, {4, 3, 3}},
        {1024, 2, {32, 32}},
        {2147483646, 2, {49981, 42966}},
        {97, 3, {97, 1, 1}},
        /* Equal spreads: the other factors closest (MPICH's test table; it gave 13 x 12 x
         * 6 x 6 and 23 x 12 x 6 x 6). */
        {5616, 4, {13, 9, 8, 6}},
        {9936, 4, {23, 9, 8, 6}},
    };
    for (size_t i = 0; i < sizeof(balanced) / sizeof(balanced[0]); i++) {
        int got[4] = {0, 0, 0, 0};
        assert_int_equal(MPI_Dims_create(balanced[i].nnodes, balanced[i].ndims, got), MPI_SUCCESS);
        for (int d = 0; d < balanced[i].ndims; d++)
            assert_int_equal(got[d], balanced[i].want[d]);
    }
    int mixed[4] = {0, 0, 0, 4};
    assert_int_equal(MPI_Dims_create(120, 4, mixed), MPI_SUCCESS);
    assert_int_equal(mixed[0], 5);
    assert_int_equal(mixed[1], 3);
    assert_int_equal(mixed[2], 2);
    assert_int_equal(mixed[3], 4);
}

static void test_cart_arithmetic(void **state)
{
    (void)state;
    int dims[3] = {2, 3, 4}, periods[3] = {0, 1, 0}, coords[3];
    struct crmpi_topo_s topo = {.kind = MPI_CART, .ndims = 3, .dims = dims, .periods = periods};

    crmpi_topo_cart_coords(&topo, 23, coords);
    assert_int_equal(coords[0], 1);
    assert_int_equal(coords[1], 2);
    assert_int_equal(coords[2], 3);
    for (int r = 0; r < 24; r++) {
        crmpi_topo_cart_coords(&topo, r, coords);
        assert_int_equal(crmpi_topo_cart_rank(&topo, coords), r);
    }
    /* Periodic dimension 1 wraps; the others give MPI_PROC_NULL. */
    assert_int_equal(crmpi_topo_cart_rank(&topo, (int[]){0, -1, 0}), 8);
    assert_int_equal(crmpi_topo_cart_rank(&topo, (int[]){0, 3, 1}), 1);
    assert_int_equal(crmpi_topo_cart_rank(&topo, (int[]){2, 0, 0}), MPI_PROC_NULL);
    assert_int_equal(crmpi_topo_cart_rank(&topo, (int[]){0, 0, -1}), MPI_PROC_NULL);

    /* A 1x1 periodic grid of the singleton: every shift comes back to itself. */
    MPI_Comm grid;
    int src, dst, d2[2] = {1, 1}, p2[2] = {1, 0};
    assert_int_equal(MPI_Cart_create(MPI_COMM_WORLD, 2, d2, p2, 0, &grid), MPI_SUCCESS);
    assert_int_equal(MPI_Cart_shift(grid, 0, 3, &src, &dst), MPI_SUCCESS);
    assert_int_equal(src, 0);
    assert_int_equal(dst, 0);
    assert_int_equal(MPI_Cart_shift(grid, 1, 1, &src, &dst), MPI_SUCCESS);
    assert_int_equal(src, MPI_PROC_NULL);
    assert_int_equal(dst, MPI_PROC_NULL);
    /* Neighbours: dimension 0 twice itself, dimension 1 none (blocks untouched). */
    int in[4] = {-1, -1, -1, -1}, out[4] = {10, 11, 12, 13};
    assert_int_equal(MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, grid), MPI_SUCCESS);
    assert_int_equal(in[0], 11); /* from -1: what was sent towards +1 */
    assert_int_equal(in[1], 10);
    assert_int_equal(in[2], -1);
    assert_int_equal(in[3], -1);
    grid->errhandler = MPI_ERRORS_RETURN;
    assert_int_equal(MPI_Cart_rank(grid, (int[]){0, 1}, &src), MPI_ERR_ARG);
    assert_int_equal(MPI_Cart_create(MPI_COMM_WORLD, 1, (int[]){2}, p2, 0, &grid), MPI_ERR_ARG);
    assert_int_equal(MPI_Graph_neighbors_count(grid, 0, &src), MPI_ERR_TOPOLOGY);
    assert_int_equal(MPI_Comm_free(&grid), MPI_SUCCESS);
    int newrank = -5;
    assert_int_equal(MPI_Cart_map(MPI_COMM_WORLD, 2, d2, p2, &newrank), MPI_SUCCESS);
    assert_int_equal(newrank, 0);
    assert_int_equal(MPI_Graph_map(MPI_COMM_WORLD, 0, NULL, NULL, &newrank), MPI_SUCCESS);
    assert_int_equal(newrank, MPI_UNDEFINED);
}

/* MPI_Add_error_class/code/string: numbered after MPI_ERR_LASTCODE, classes kept. */
static void test_added_errors(void **state)
{
    (void)state;
    int errclass, code, got, len, flag, *last;
    char text[MPI_MAX_ERROR_STRING];

    assert_int_equal(MPI_Add_error_class(&errclass), MPI_SUCCESS);
    assert_true(errclass > MPI_ERR_LASTCODE);
    assert_int_equal(MPI_Add_error_code(errclass, &code), MPI_SUCCESS);
    assert_int_equal(code, errclass + 1);
    assert_int_equal(MPI_Error_class(code, &got), MPI_SUCCESS);
    assert_int_equal(got, errclass);
    assert_int_equal(MPI_Error_string(code, text, &len), MPI_SUCCESS);
    assert_int_equal(len, 0);
    assert_int_equal(MPI_Add_error_string(code, "the widget broke"), MPI_SUCCESS);
    assert_int_equal(MPI_Error_string(code, text, &len), MPI_SUCCESS);
    assert_string_equal(text, "the widget broke");
    assert_int_equal(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag),
                     MPI_SUCCESS);
    assert_true(flag);
    assert_int_equal(*last, code);
    /* A code is not a class; predefined texts stay. */
    assert_int_equal(MPI_Add_error_code(code, &got), MPI_ERR_ARG);
    assert_int_equal(MPI_Add_error_string(MPI_ERR_RANK, "mine"), MPI_ERR_ARG);
    assert_int_equal(MPI_Add_error_code(MPI_ERR_RANK, &got), MPI_SUCCESS);
    assert_int_equal(MPI_Error_class(got, &errclass), MPI_SUCCESS);
    assert_int_equal(errclass, MPI_ERR_RANK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_group_algebra),
        cmocka_unit_test(test_info_objects),
        cmocka_unit_test(test_attributes),
        cmocka_unit_test(test_context_id_reuse),
        cmocka_unit_test(test_free_with_pending_requests),
        cmocka_unit_test(test_context_id_pick),
        cmocka_unit_test(test_context_id_bridged),
        cmocka_unit_test(test_intercomm_refused),
        cmocka_unit_test(test_dims_create),
        cmocka_unit_test(test_cart_arithmetic),
        cmocka_unit_test(test_added_errors),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
