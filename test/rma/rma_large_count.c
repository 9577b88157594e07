/*
 * rma_large_count: the MPI-4.0 large-count forms of the one-sided calls (MPI-4.0 section
 * 12.2 and 12.3): MPI_Win_create_c, MPI_Win_allocate_c, MPI_Win_allocate_shared_c,
 * MPI_Win_shared_query_c, MPI_Put_c ... MPI_Rget_accumulate_c, each mixed with the int forms
 * on one window, under fence, lock/unlock and lock_all; the request forms waited on; a
 * displacement unit and counts beyond an int.
 *
 * Uses the point-to-point suite's harness (test/p2p/p2p_common.h) like rma.c; run by
 * test/integration/test_rma.py (crmpi only: Open MPI 4.1.4 has no "_c" calls).
 */
#include "../p2p/p2p_common.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define LC_N 64 /* ints in the windows of most subtests */

/* A displacement unit beyond an int: cut to an int it would be sizeof(int). */
#define LC_WIDE_UNIT (((MPI_Aint)1 << 32) + (MPI_Aint)sizeof(int))

static int lc_init_value(int owner, int i)
{
    return owner * 1000 + i;
}

static int *lc_ints(int n)
{
    int *mem = p2p_malloc((size_t)n * sizeof(int));

    for (int i = 0; i < n; i++)
        mem[i] = lc_init_value(p2p_rank, i);
    return mem;
}

/* The error class of rc, which must not be MPI_SUCCESS. */
static int lc_class(int rc)
{
    int cls = MPI_SUCCESS;

    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

/* Win_create_c; Put_c, Get_c and the int Put and Get under fence. */
static void fence_c(void)
{
    int *mem = lc_ints(LC_N), *unit = NULL, flag = 0;
    int out[4] = {p2p_rank, p2p_rank + 1, p2p_rank + 2, p2p_rank + 3}, got[4] = {0}, got_int = 0;
    MPI_Aint *size = NULL;
    MPI_Win win;

    MPI_OK(MPI_Win_create_c(mem, (MPI_Aint)LC_N * sizeof(int), (MPI_Aint)sizeof(int), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag));
    CHECK(flag && *unit == (int)sizeof(int), "MPI_WIN_DISP_UNIT of Win_create_c is wrong");
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &flag));
    CHECK(flag && *size == LC_N * (MPI_Aint)sizeof(int), "MPI_WIN_SIZE of Win_create_c is wrong");
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put_c(out, (MPI_Count)4, MPI_INT, NEXT, 10, (MPI_Count)4, MPI_INT, win));
    MPI_OK(MPI_Put(&out[3], 1, MPI_INT, NEXT, 20, 1, MPI_INT, win));
    MPI_OK(MPI_Get_c(got, (MPI_Count)4, MPI_INT, NEXT, 30, (MPI_Count)4, MPI_INT, win));
    MPI_OK(MPI_Get(&got_int, 1, MPI_INT, NEXT, 40, 1, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < 4; i++) {
        CHECK(mem[10 + i] == PREV + i, "Put_c: [%d] is %d, expected %d", 10 + i, mem[10 + i],
              PREV + i);
        CHECK(got[i] == lc_init_value(NEXT, 30 + i), "Get_c: [%d] is %d, expected %d", i, got[i],
              lc_init_value(NEXT, 30 + i));
    }
    CHECK(mem[20] == PREV + 3, "int Put on a Win_create_c window: %d", mem[20]);
    CHECK(got_int == lc_init_value(NEXT, 40), "int Get on a Win_create_c window: %d", got_int);
    CHECK(mem[14] == lc_init_value(p2p_rank, 14), "Put_c wrote beyond its 4 elements");
    /* The int form's window takes the _c calls too. */
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Win_free(&win));
    MPI_OK(MPI_Win_create(mem, (MPI_Aint)LC_N * sizeof(int), sizeof(int), MPI_INFO_NULL,
                          MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put_c(&out[0], (MPI_Count)1, MPI_INT, NEXT, 50, (MPI_Count)1, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    CHECK(mem[50] == PREV, "Put_c on a Win_create window: %d, expected %d", mem[50], PREV);
    MPI_OK(MPI_Win_free(&win));
    free(mem);
}

/* Win_allocate_c; every rank adds to rank 0 with Accumulate_c and Accumulate under
 * exclusive locks, then reads with Get_accumulate_c and the int form under a shared one. */
static void lock_c(void)
{
    int *mem = NULL, one[2] = {1, 1}, two = 2, none = 0, old[2] = {-1, -1}, old_int = -1;
    MPI_Win win;

    MPI_OK(MPI_Win_allocate_c((MPI_Aint)LC_N * sizeof(int), (MPI_Aint)sizeof(int), MPI_INFO_NULL,
                              MPI_COMM_WORLD, &mem, &win));
    for (int i = 0; i < LC_N; i++)
        mem[i] = lc_init_value(p2p_rank, i);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    MPI_OK(MPI_Accumulate_c(one, (MPI_Count)2, MPI_INT, 0, 3, (MPI_Count)2, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Accumulate(&two, 1, MPI_INT, 0, 3, 1, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Win_unlock(0, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    MPI_OK(MPI_Get_accumulate_c(&none, (MPI_Count)0, MPI_INT, old, (MPI_Count)2, MPI_INT, 0, 3,
                                (MPI_Count)2, MPI_INT, MPI_NO_OP, win));
    MPI_OK(MPI_Get_accumulate(&none, 0, MPI_INT, &old_int, 1, MPI_INT, 0, 4, 1, MPI_INT, MPI_NO_OP,
                              win));
    MPI_OK(MPI_Win_unlock(0, win));
    CHECK(old[0] == lc_init_value(0, 3) + 3 * p2p_size && old[1] == lc_init_value(0, 4) + p2p_size,
          "Get_accumulate_c of rank 0's [3..4]: %d %d, expected %d %d", old[0], old[1],
          lc_init_value(0, 3) + 3 * p2p_size, lc_init_value(0, 4) + p2p_size);
    CHECK(old_int == old[1], "int Get_accumulate: %d, Get_accumulate_c: %d", old_int, old[1]);
    /* A fetching accumulate that changes the target, through lock_all. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_OK(MPI_Get_accumulate_c(&two, (MPI_Count)1, MPI_INT, &old_int, (MPI_Count)1, MPI_INT, NEXT,
                                7, (MPI_Count)1, MPI_INT, MPI_REPLACE, win));
    MPI_OK(MPI_Win_unlock_all(win));
    CHECK(old_int == lc_init_value(NEXT, 7), "Get_accumulate_c (MPI_REPLACE) fetched %d", old_int);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(mem[7] == 2, "Get_accumulate_c (MPI_REPLACE) left %d", mem[7]);
    MPI_OK(MPI_Win_free(&win));
}

/* The request forms, _c and int mixed on one window, completed by MPI_Waitall. */
static void requests_c(void)
{
    int *mem = lc_ints(LC_N), val[2] = {77, 78}, got[2] = {0}, add = 3, old = 0, got_int = 0;
    MPI_Request reqs[6];
    MPI_Win win;

    MPI_OK(MPI_Win_create_c(mem, (MPI_Aint)LC_N * sizeof(int), (MPI_Aint)sizeof(int), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, NEXT, 0, win));
    MPI_OK(MPI_Rput_c(val, (MPI_Count)2, MPI_INT, NEXT, 2, (MPI_Count)2, MPI_INT, win, &reqs[0]));
    MPI_OK(MPI_Rget_c(got, (MPI_Count)2, MPI_INT, NEXT, 8, (MPI_Count)2, MPI_INT, win, &reqs[1]));
    MPI_OK(MPI_Raccumulate_c(&add, (MPI_Count)1, MPI_INT, NEXT, 4, (MPI_Count)1, MPI_INT, MPI_SUM,
                             win, &reqs[2]));
    MPI_OK(MPI_Rget_accumulate_c(&add, (MPI_Count)1, MPI_INT, &old, (MPI_Count)1, MPI_INT, NEXT, 5,
                                 (MPI_Count)1, MPI_INT, MPI_SUM, win, &reqs[3]));
    MPI_OK(MPI_Rget(&got_int, 1, MPI_INT, NEXT, 10, 1, MPI_INT, win, &reqs[4]));
    MPI_OK(MPI_Raccumulate(&add, 1, MPI_INT, NEXT, 4, 1, MPI_INT, MPI_SUM, win, &reqs[5]));
    MPI_OK(MPI_Waitall(6, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 6; i++)
        CHECK(reqs[i] == MPI_REQUEST_NULL, "request %d is not MPI_REQUEST_NULL after Waitall", i);
    CHECK(got[0] == lc_init_value(NEXT, 8) && got[1] == lc_init_value(NEXT, 9), "Rget_c gave %d %d",
          got[0], got[1]);
    CHECK(old == lc_init_value(NEXT, 5), "Rget_accumulate_c gave %d", old);
    CHECK(got_int == lc_init_value(NEXT, 10), "int Rget gave %d", got_int);
    MPI_OK(MPI_Win_unlock(NEXT, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(mem[2] == 77 && mem[3] == 78, "Rput_c left %d %d", mem[2], mem[3]);
    CHECK(mem[4] == lc_init_value(p2p_rank, 4) + 6, "Raccumulate_c and Raccumulate left %d",
          mem[4]);
    CHECK(mem[5] == lc_init_value(p2p_rank, 5) + 3, "Rget_accumulate_c left %d", mem[5]);
    MPI_OK(MPI_Win_free(&win));
    free(mem);
}

/* Win_allocate_shared_c: every rank's part, queried with Win_shared_query_c (an MPI_Aint
 * unit) and the int form; a put through the window seen with a load. */
static void shared_c(void)
{
    const MPI_Aint unit = 2 * sizeof(int);
    MPI_Aint n = LC_N + p2p_rank, qsize = -1, qunit = -1;
    int *mine = NULL, *part = NULL, qunit_int = -1;
    MPI_Win win;

    MPI_OK(MPI_Win_allocate_shared_c(n * (MPI_Aint)sizeof(int), unit, MPI_INFO_NULL, MPI_COMM_WORLD,
                                     &mine, &win));
    for (int r = 0; r < p2p_size; r++) {
        MPI_OK(MPI_Win_shared_query_c(win, r, &qsize, &qunit, &part));
        CHECK(qsize == (LC_N + r) * (MPI_Aint)sizeof(int) && qunit == unit,
              "Win_shared_query_c of rank %d: %td bytes, unit %td", r, qsize, qunit);
        CHECK(r != p2p_rank || part == mine, "Win_shared_query_c of this rank is not its base");
        MPI_OK(MPI_Win_shared_query(win, r, &qsize, &qunit_int, &part));
        CHECK(qunit_int == (int)unit, "Win_shared_query of rank %d: unit %d", r, qunit_int);
    }
    MPI_OK(MPI_Win_shared_query_c(win, MPI_PROC_NULL, &qsize, &qunit, &part));
    CHECK(qsize == LC_N * (MPI_Aint)sizeof(int) && qunit == unit,
          "Win_shared_query_c of MPI_PROC_NULL: %td bytes, unit %td", qsize, qunit);
    MPI_OK(MPI_Win_fence(0, win));
    mine[1] = -1;
    MPI_OK(MPI_Win_fence(0, win));
    /* Displacement 1 is int 2 with a unit of two ints. */
    MPI_OK(MPI_Put_c(&p2p_rank, (MPI_Count)1, MPI_INT, NEXT, 1, (MPI_Count)1, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    CHECK(mine[2] == PREV && mine[1] == -1, "Put_c at displacement 1: [1] %d, [2] %d", mine[1],
          mine[2]);
    MPI_OK(MPI_Win_free(&win));
}

/* A displacement unit beyond an int, on a window of each creation call: kept whole (a unit
 * cut to an int would make displacement 1 the second int, in range), given by the _c query,
 * refused by the int outputs. */
static void wide_unit(void)
{
    int *mem = lc_ints(LC_N), val = 5, cls, *unit_attr = NULL, flag = 0, unit_int = 0;
    int *shared = NULL;
    MPI_Aint qsize = 0, qunit = 0;
    void *base = NULL;
    MPI_Win win;

    MPI_OK(MPI_Win_create_c(mem, (MPI_Aint)LC_N * sizeof(int), LC_WIDE_UNIT, MPI_INFO_NULL,
                            MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    cls = lc_class(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit_attr, &flag));
    CHECK(cls == MPI_ERR_ARG, "MPI_WIN_DISP_UNIT of a unit beyond an int: class %d", cls);
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put_c(&val, (MPI_Count)1, MPI_INT, NEXT, 0, (MPI_Count)1, MPI_INT, win));
    cls = lc_class(MPI_Put_c(&val, (MPI_Count)1, MPI_INT, NEXT, 1, (MPI_Count)1, MPI_INT, win));
    CHECK(cls == MPI_ERR_RMA_RANGE, "Put_c at displacement 1 of a %td-byte unit: class %d",
          LC_WIDE_UNIT, cls);
    /* disp * unit beyond an MPI_Aint. */
    cls = lc_class(MPI_Get_c(&val, (MPI_Count)1, MPI_INT, NEXT, (MPI_Aint)1 << 40, (MPI_Count)1,
                             MPI_INT, win));
    CHECK(cls == MPI_ERR_RMA_RANGE, "Get_c at displacement 2^40 of a %td-byte unit: class %d",
          LC_WIDE_UNIT, cls);
    MPI_OK(MPI_Win_fence(0, win));
    CHECK(mem[0] == 5 && mem[1] == lc_init_value(p2p_rank, 1),
          "after the puts of a wide unit: [0] %d, [1] %d", mem[0], mem[1]);
    MPI_OK(MPI_Win_free(&win));

    MPI_OK(MPI_Win_allocate_c(16, LC_WIDE_UNIT, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, NEXT, 0, win));
    cls = lc_class(MPI_Accumulate_c(&val, (MPI_Count)1, MPI_INT, NEXT, 1, (MPI_Count)1, MPI_INT,
                                    MPI_SUM, win));
    CHECK(cls == MPI_ERR_RMA_RANGE, "Accumulate_c at displacement 1 of a wide unit: class %d", cls);
    MPI_OK(MPI_Win_unlock(NEXT, win));
    MPI_OK(MPI_Win_free(&win));

    MPI_OK(
        MPI_Win_allocate_shared_c(16, LC_WIDE_UNIT, MPI_INFO_NULL, MPI_COMM_WORLD, &shared, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Win_shared_query_c(win, PREV, &qsize, &qunit, &base));
    CHECK(qsize == 16 && qunit == LC_WIDE_UNIT, "Win_shared_query_c: %td bytes, unit %td", qsize,
          qunit);
    cls = lc_class(MPI_Win_shared_query(win, PREV, &qsize, &unit_int, &base));
    CHECK(cls == MPI_ERR_ARG, "int Win_shared_query of a unit beyond an int: class %d", cls);
    MPI_OK(MPI_Win_free(&win));
    free(mem);
}

/* Counts beyond an int, checked before any byte moves; negative counts. */
static void wide_count(void)
{
    const MPI_Count big = ((MPI_Count)1 << 32) + 8; /* cut to an int: 8 */
    int *mem = lc_ints(LC_N), cls, val = 0;
    char bytes[8] = {0};
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Win win;

    MPI_OK(MPI_Win_create_c(mem, (MPI_Aint)LC_N * sizeof(int), 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                            &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Win_fence(0, win));
    cls = lc_class(MPI_Put_c(bytes, big, MPI_BYTE, NEXT, 0, big, MPI_BYTE, win));
    CHECK(cls == MPI_ERR_RMA_RANGE, "Put_c of 2^32 + 8 bytes into a %zu-byte window: class %d",
          LC_N * sizeof(int), cls);
    cls = lc_class(MPI_Rget_c(bytes, big, MPI_BYTE, NEXT, 0, big, MPI_BYTE, win, &req));
    CHECK(cls == MPI_ERR_RMA_RANGE && req == MPI_REQUEST_NULL,
          "Rget_c of 2^32 + 8 bytes from a %zu-byte window: class %d", LC_N * sizeof(int), cls);
    cls = lc_class(MPI_Accumulate_c(&val, (MPI_Count)-1, MPI_INT, NEXT, 0, (MPI_Count)1, MPI_INT,
                                    MPI_SUM, win));
    CHECK(cls == MPI_ERR_COUNT, "Accumulate_c of a negative count: class %d", cls);
    cls = lc_class(MPI_Get_c(&val, (MPI_Count)1, MPI_INT, NEXT, 0, (MPI_Count)-1, MPI_INT, win));
    CHECK(cls == MPI_ERR_COUNT, "Get_c of a negative target count: class %d", cls);
    /* The origin's bytes overflow a size_t (the target side is empty). */
    cls = lc_class(
        MPI_Put_c(bytes, (MPI_Count)1 << 62, MPI_INT, NEXT, 0, (MPI_Count)0, MPI_INT, win));
    CHECK(cls == MPI_ERR_COUNT, "Put_c of 2^62 ints: class %d", cls);
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Win_free(&win));
    free(mem);
}

/* clang-format off */
static const p2p_test_t tests[] = {
    P2P_TEST(fence_c, 1),
    P2P_TEST(lock_c, 1),
    P2P_TEST(requests_c, 1),
    P2P_TEST(shared_c, 1),
    P2P_TEST(wide_unit, 1),
    P2P_TEST(wide_count, 1),
};
/* clang-format on */

P2P_MAIN(tests)
