/*
 * rma: one-sided communication conformance (MPI-3.1 chapter 11): window creation and
 * queries, every communication call (with derived datatypes on both sides, every
 * predefined op, MPI_REPLACE and MPI_NO_OP), every synchronisation mode (fence, PSCW,
 * locks, flushes), request forms, dynamic windows, shared-memory windows and the window
 * error handlers.
 *
 * Uses the point-to-point suite's harness (test/p2p/p2p_common.h): one subtest per
 * RMA_TEST line, "ok NAME" per subtest; test/integration/test_rma.py reads the table.
 * Every subtest creates and frees its own windows, so they cannot disturb each other.
 * The checks follow the standard, and the program passes under Open MPI as well
 * (RMA_IMPL=openmpi).
 */
#include "../p2p/p2p_common.h"

#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#define RMA_N 64 /* ints in the windows of most subtests */

/* The value rank `owner` keeps at index i of its window before a subtest changes it. */
static int rma_init_value(int owner, int i)
{
    return owner * 1000 + i;
}

static MPI_Win rma_create_ints(int **mem_out, int n)
{
    MPI_Win win;
    int *mem = p2p_malloc((size_t)n * sizeof(int));

    for (int i = 0; i < n; i++)
        mem[i] = rma_init_value(p2p_rank, i);
    MPI_OK(MPI_Win_create(mem, (MPI_Aint)n * sizeof(int), sizeof(int), MPI_INFO_NULL,
                          MPI_COMM_WORLD, &win));
    *mem_out = mem;
    return win;
}

static void rma_free(MPI_Win *win, void *mem)
{
    MPI_OK(MPI_Win_free(win));
    CHECK(*win == MPI_WIN_NULL, "MPI_Win_free did not set MPI_WIN_NULL");
    free(mem);
}

/* Window attributes, group, name, flavours (sections 11.2.6, 11.2.7, 6.8). */
static void win_queries(void)
{
    int *mem, flag = 0, result, len;
    void *base = NULL;
    MPI_Aint *size = NULL;
    int *unit = NULL, *flavor = NULL, *model = NULL;
    MPI_Group wgroup, cgroup;
    char name[MPI_MAX_OBJECT_NAME];
    MPI_Win win = rma_create_ints(&mem, RMA_N);

    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
    CHECK(flag && base == mem, "MPI_WIN_BASE is %p, expected %p", base, (void *)mem);
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &flag));
    CHECK(flag && *size == RMA_N * (MPI_Aint)sizeof(int), "MPI_WIN_SIZE is wrong");
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag));
    CHECK(flag && *unit == (int)sizeof(int), "MPI_WIN_DISP_UNIT is wrong");
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_CREATE, "MPI_WIN_CREATE_FLAVOR is not CREATE");
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
    CHECK(flag && (*model == MPI_WIN_UNIFIED || *model == MPI_WIN_SEPARATE),
          "MPI_WIN_MODEL is neither UNIFIED nor SEPARATE");
    MPI_OK(MPI_Win_get_group(win, &wgroup));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &cgroup));
    MPI_OK(MPI_Group_compare(wgroup, cgroup, &result));
    CHECK(result == MPI_IDENT, "the window's group is not MPI_COMM_WORLD's (%d)", result);
    MPI_OK(MPI_Group_free(&wgroup));
    MPI_OK(MPI_Group_free(&cgroup));
    MPI_OK(MPI_Win_set_name(win, "rma window"));
    MPI_OK(MPI_Win_get_name(win, name, &len));
    CHECK(strcmp(name, "rma window") == 0 && len == 10, "MPI_Win_get_name gave '%s'", name);
    /* Info: a new object each time, freed by the application (section 11.2.7). */
    MPI_Info info, used;
    int nkeys = -1;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "accumulate_ordering", "rar,raw,war,waw"));
    MPI_OK(MPI_Win_set_info(win, info));
    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Win_get_info(win, &used));
    CHECK(used != MPI_INFO_NULL, "MPI_Win_get_info gave MPI_INFO_NULL");
    MPI_OK(MPI_Info_get_nkeys(used, &nkeys));
    CHECK(nkeys >= 0, "MPI_Info_get_nkeys of the window's info: %d", nkeys);
    /* The hints in use include the defaults (section 11.2.1). */
    char value[MPI_MAX_INFO_VAL + 1];
    MPI_OK(MPI_Info_get(used, "accumulate_ops", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && strcmp(value, "same_op_no_op") == 0, "accumulate_ops in use: %s",
          flag ? value : "(not set)");
    MPI_OK(MPI_Info_free(&used));
    /* Handle conversion (section 17.2.4). */
    CHECK(MPI_Win_f2c(MPI_Win_c2f(win)) == win, "MPI_Win_f2c(MPI_Win_c2f(win)) != win");
    CHECK(MPI_Win_f2c(MPI_Win_c2f(MPI_WIN_NULL)) == MPI_WIN_NULL, "MPI_WIN_NULL did not convert");
    rma_free(&win, mem);

    /* MPI_Win_allocate: memory of the size asked, flavour ALLOCATE. */
    int *amem = NULL;
    MPI_OK(MPI_Win_allocate(RMA_N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &amem,
                            &win));
    CHECK(amem != NULL, "MPI_Win_allocate gave no memory");
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
    CHECK(flag && base == amem, "MPI_WIN_BASE of an allocated window is not its memory");
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_ALLOCATE, "flavour is not ALLOCATE");
    for (int i = 0; i < RMA_N; i++)
        amem[i] = i;
    MPI_OK(MPI_Win_free(&win));

    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_DYNAMIC, "flavour is not DYNAMIC");
    MPI_OK(MPI_Win_free(&win));

    /* A zero-sized window is allowed (section 11.2.1). */
    MPI_OK(MPI_Win_create(NULL, 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Win_free(&win));
}

static int rma_deleted; /* calls of rma_delete_attr */
static int rma_delete_attr(MPI_Win win, int keyval, void *value, void *extra)
{
    (void)win, (void)keyval, (void)extra;
    if (value == (void *)&rma_deleted)
        rma_deleted++;
    return MPI_SUCCESS;
}

/* Window keyvals and attributes (sections 6.7.3, 11.2.6): set, get, replace, delete, and
 * the delete callback at MPI_Win_free. */
static void win_attributes(void)
{
    int *mem, keyval = MPI_KEYVAL_INVALID, other = MPI_KEYVAL_INVALID, flag = -1;
    void *value = NULL;
    MPI_Win win = rma_create_ints(&mem, RMA_N);

    rma_deleted = 0;
    MPI_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, rma_delete_attr, &keyval, NULL));
    MPI_OK(MPI_Win_create_keyval(MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN, &other, NULL));
    MPI_OK(MPI_Win_get_attr(win, keyval, &value, &flag));
    CHECK(flag == 0, "an attribute never set was found");
    MPI_OK(MPI_Win_set_attr(win, keyval, &rma_deleted));
    MPI_OK(MPI_Win_set_attr(win, other, &other));
    MPI_OK(MPI_Win_get_attr(win, keyval, &value, &flag));
    CHECK(flag == 1 && value == &rma_deleted, "the attribute read back is %p", value);
    MPI_OK(MPI_Win_set_attr(win, keyval, &rma_deleted)); /* replaces: deletes the old value */
    CHECK(rma_deleted == 1, "replacing a value called the delete callback %d times", rma_deleted);
    MPI_OK(MPI_Win_delete_attr(win, other));
    MPI_OK(MPI_Win_get_attr(win, other, &value, &flag));
    CHECK(flag == 0, "a deleted attribute was found");
    MPI_OK(MPI_Win_free_keyval(&other));
    CHECK(other == MPI_KEYVAL_INVALID, "MPI_Win_free_keyval did not reset the keyval");
    rma_free(&win, mem);
    CHECK(rma_deleted == 2, "MPI_Win_free called the delete callback %d times in all",
          rma_deleted - 1);
    MPI_OK(MPI_Win_free_keyval(&keyval));
}

/* Put to NEXT's window inside a fence epoch; a second epoch overwrites part of it. */
static void put_fence(void)
{
    int *mem, src[RMA_N];
    MPI_Win win = rma_create_ints(&mem, RMA_N);

    for (int i = 0; i < RMA_N; i++)
        src[i] = -(p2p_rank * 100 + i);
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put(src, RMA_N / 2, MPI_INT, NEXT, 0, RMA_N / 2, MPI_INT, win));
    MPI_OK(MPI_Put(&src[RMA_N / 2], RMA_N / 4, MPI_INT, NEXT, RMA_N / 2, RMA_N / 4, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    /* The last element is left out: PREV may already be in the next epoch, writing it. */
    for (int i = 0; i < RMA_N - 1; i++) {
        int want = i < 3 * RMA_N / 4 ? -(PREV * 100 + i) : rma_init_value(p2p_rank, i);
        CHECK(mem[i] == want, "after the first epoch, element %d is %d, expected %d", i, mem[i],
              want);
    }
    int one = 7;
    MPI_OK(MPI_Put(&one, 1, MPI_INT, NEXT, RMA_N - 1, 1, MPI_INT, win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK(mem[RMA_N - 1] == 7, "the second epoch's put is missing (%d)", mem[RMA_N - 1]);
    rma_free(&win, mem);
}

/* Get from NEXT and from this rank itself. */
static void get_fence(void)
{
    int *mem, got[RMA_N], self[4];
    MPI_Win win = rma_create_ints(&mem, RMA_N);

    memset(got, 0, sizeof(got));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    MPI_OK(MPI_Get(got, RMA_N, MPI_INT, NEXT, 0, RMA_N, MPI_INT, win));
    MPI_OK(MPI_Get(self, 4, MPI_INT, p2p_rank, 10, 4, MPI_INT, win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int i = 0; i < RMA_N; i++)
        CHECK(got[i] == rma_init_value(NEXT, i), "got[%d] = %d, expected %d", i, got[i],
              rma_init_value(NEXT, i));
    for (int i = 0; i < 4; i++)
        CHECK(self[i] == rma_init_value(p2p_rank, 10 + i), "get from self: %d", self[i]);
    rma_free(&win, mem);
}

/* Every rank adds to every rank's window: accumulates of several origins combine. */
static void accumulate_sum(void)
{
    int *mem, add[RMA_N];
    MPI_Win win = rma_create_ints(&mem, RMA_N);

    for (int i = 0; i < RMA_N; i++)
        add[i] = p2p_rank + 1 + i;
    MPI_OK(MPI_Win_fence(0, win));
    for (int round = 0; round < 3; round++) {
        for (int t = 0; t < p2p_size; t++)
            MPI_OK(MPI_Accumulate(add, RMA_N, MPI_INT, t, 0, RMA_N, MPI_INT, MPI_SUM, win));
    }
    MPI_OK(MPI_Win_fence(0, win));
    int ranks_sum = p2p_size * (p2p_size + 1) / 2;
    for (int i = 0; i < RMA_N; i++) {
        int want = rma_init_value(p2p_rank, i) + 3 * (ranks_sum + p2p_size * i);
        CHECK(mem[i] == want, "element %d is %d, expected %d", i, mem[i], want);
    }
    rma_free(&win, mem);
}

/* One accumulate of `op` on one element of a window of doubles/ints/..., checked. */
#define ACC_CASE(ctype, mpitype, opname, op, init, arg, expect)                                    \
    do {                                                                                           \
        ctype cell = (init), val = (arg);                                                          \
        MPI_Win w;                                                                                 \
        MPI_OK(                                                                                    \
            MPI_Win_create(&cell, sizeof(cell), sizeof(cell), MPI_INFO_NULL, MPI_COMM_WORLD, &w)); \
        MPI_OK(MPI_Win_fence(0, w));                                                               \
        if (p2p_rank == 0)                                                                         \
            MPI_OK(MPI_Accumulate(&val, 1, mpitype, p2p_size - 1, 0, 1, mpitype, op, w));          \
        MPI_OK(MPI_Win_fence(0, w));                                                               \
        if (p2p_rank == p2p_size - 1)                                                              \
            CHECK(cell == (expect), "%s on %s: got %g, expected %g", opname, #ctype, (double)cell, \
                  (double)(expect));                                                               \
        MPI_OK(MPI_Win_free(&w));                                                                  \
    } while (0)

/* Every predefined op on the types of its class (MPI-3.1 section 5.9.2), and MPI_REPLACE. */
static void accumulate_ops(void)
{
    ACC_CASE(int, MPI_INT, "MAX", MPI_MAX, 5, 9, 9);
    ACC_CASE(int, MPI_INT, "MIN", MPI_MIN, 5, 9, 5);
    ACC_CASE(int, MPI_INT, "SUM", MPI_SUM, 5, 9, 14);
    ACC_CASE(int, MPI_INT, "PROD", MPI_PROD, 5, 9, 45);
    ACC_CASE(int, MPI_INT, "BAND", MPI_BAND, 0xc, 0xa, 0x8);
    ACC_CASE(int, MPI_INT, "BOR", MPI_BOR, 0xc, 0xa, 0xe);
    ACC_CASE(int, MPI_INT, "BXOR", MPI_BXOR, 0xc, 0xa, 0x6);
    ACC_CASE(int, MPI_INT, "REPLACE", MPI_REPLACE, 5, 9, 9);
    ACC_CASE(double, MPI_DOUBLE, "SUM", MPI_SUM, 1.5, 2.25, 3.75);
    ACC_CASE(double, MPI_DOUBLE, "PROD", MPI_PROD, 1.5, 2.0, 3.0);
    ACC_CASE(double, MPI_DOUBLE, "MAX", MPI_MAX, 1.5, -2.0, 1.5);
    ACC_CASE(float, MPI_FLOAT, "MIN", MPI_MIN, 1.5f, -2.0f, -2.0f);
    ACC_CASE(long long, MPI_LONG_LONG, "SUM", MPI_SUM, 1LL << 40, 3, (1LL << 40) + 3);
    ACC_CASE(unsigned char, MPI_UNSIGNED_CHAR, "BOR", MPI_BOR, 0x0f, 0xf0, 0xff);
    ACC_CASE(unsigned char, MPI_BYTE, "BXOR", MPI_BXOR, 0x0f, 0xff, 0xf0);
    ACC_CASE(short, MPI_SHORT, "SUM", MPI_SUM, -3, 10, 7);

    /* MAXLOC and MINLOC on value-index pairs: ties take the smaller index. */
    struct {
        int value, index;
    } cell[2] = {{5, 3}, {5, 3}}, arg[2] = {{5, 1}, {9, 7}};
    MPI_Win w;
    MPI_OK(MPI_Win_create(cell, sizeof(cell), sizeof(cell[0]), MPI_INFO_NULL, MPI_COMM_WORLD, &w));
    MPI_OK(MPI_Win_fence(0, w));
    if (p2p_rank == 0) {
        MPI_OK(MPI_Accumulate(&arg[0], 1, MPI_2INT, p2p_size - 1, 0, 1, MPI_2INT, MPI_MAXLOC, w));
        MPI_OK(MPI_Accumulate(&arg[1], 1, MPI_2INT, p2p_size - 1, 1, 1, MPI_2INT, MPI_MINLOC, w));
    }
    MPI_OK(MPI_Win_fence(0, w));
    if (p2p_rank == p2p_size - 1) {
        CHECK(cell[0].value == 5 && cell[0].index == 1, "MAXLOC tie: (%d, %d)", cell[0].value,
              cell[0].index);
        CHECK(cell[1].value == 5 && cell[1].index == 3, "MINLOC: (%d, %d)", cell[1].value,
              cell[1].index);
    }
    MPI_OK(MPI_Win_free(&w));
}

/* The logical ops, and an unsigned 64-bit maximum beyond the signed range. */
static void accumulate_logical(void)
{
    ACC_CASE(int, MPI_INT, "LAND", MPI_LAND, 5, 0, 0);
    ACC_CASE(int, MPI_INT, "LAND", MPI_LAND, 5, 2, 1);
    ACC_CASE(int, MPI_INT, "LOR", MPI_LOR, 0, 3, 1);
    ACC_CASE(int, MPI_INT, "LXOR", MPI_LXOR, 1, 1, 0);
    ACC_CASE(int, MPI_INT, "LXOR", MPI_LXOR, 0, 4, 1);
    ACC_CASE(uint64_t, MPI_UINT64_T, "MAX", MPI_MAX, 7, 1ULL << 63, 1ULL << 63);
}

/* Fetch_and_op on a counter at rank 0 under lock_all: every ticket is taken exactly once. */
static void fetch_and_op(void)
{
    enum { TICKETS = 20 };
    int *mem, one = 1, ticket, *seen;
    MPI_Win win = rma_create_ints(&mem, RMA_N);
    int tickets[TICKETS];

    mem[0] = 0;
    MPI_OK(MPI_Win_fence(0, win)); /* the reset is seen before anyone counts */
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < TICKETS; i++) {
        MPI_OK(MPI_Fetch_and_op(&one, &ticket, MPI_INT, 0, 0, MPI_SUM, win));
        MPI_OK(MPI_Win_flush(0, win));
        tickets[i] = ticket;
    }
    /* MPI_NO_OP reads atomically. */
    int now = -1;
    MPI_OK(MPI_Fetch_and_op(NULL, &now, MPI_INT, 0, 0, MPI_NO_OP, win));
    MPI_OK(MPI_Win_unlock_all(win));
    CHECK(now >= TICKETS && now <= TICKETS * p2p_size, "MPI_NO_OP read %d", now);
    for (int i = 1; i < TICKETS; i++)
        CHECK(tickets[i] > tickets[i - 1], "tickets not increasing: %d then %d", tickets[i - 1],
              tickets[i]);
    MPI_Barrier(MPI_COMM_WORLD);
    if (p2p_rank == 0)
        CHECK(mem[0] == TICKETS * p2p_size, "the counter is %d, expected %d", mem[0],
              TICKETS * p2p_size);
    /* Every ticket 0 .. size * TICKETS - 1 once over all ranks. */
    seen = p2p_malloc((size_t)TICKETS * p2p_size * sizeof(int));
    MPI_Allgather(tickets, TICKETS, MPI_INT, seen, TICKETS, MPI_INT, MPI_COMM_WORLD);
    int *count = calloc((size_t)TICKETS * p2p_size, sizeof(int));
    for (int i = 0; i < TICKETS * p2p_size; i++) {
        if (seen[i] >= 0 && seen[i] < TICKETS * p2p_size)
            count[seen[i]]++;
    }
    for (int i = 0; i < TICKETS * p2p_size; i++)
        CHECK(count[i] == 1, "ticket %d was taken %d times", i, count[i]);
    free(count);
    free(seen);
    rma_free(&win, mem);
}

/* Get_accumulate returns the old data and applies the op; with derived result types. */
static void get_accumulate(void)
{
    int *mem, add[8], old[8];
    MPI_Win win = rma_create_ints(&mem, RMA_N);

    for (int i = 0; i < 8; i++)
        add[i] = 100 + i;
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, NEXT, 0, win));
    MPI_OK(MPI_Get_accumulate(add, 8, MPI_INT, old, 8, MPI_INT, NEXT, 8, 8, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Win_unlock(NEXT, win));
    for (int i = 0; i < 8; i++)
        CHECK(old[i] == rma_init_value(NEXT, 8 + i), "old[%d] = %d", i, old[i]);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, NEXT, 0, win));
    MPI_OK(
        MPI_Get_accumulate(NULL, 0, MPI_INT, old, 8, MPI_INT, NEXT, 8, 8, MPI_INT, MPI_NO_OP, win));
    MPI_OK(MPI_Win_unlock(NEXT, win));
    for (int i = 0; i < 8; i++)
        CHECK(old[i] == rma_init_value(NEXT, 8 + i) + 100 + i, "after SUM, [%d] = %d", i, old[i]);
    /* MPI_REPLACE swaps. */
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, NEXT, 0, win));
    MPI_OK(MPI_Get_accumulate(add, 1, MPI_INT, old, 1, MPI_INT, NEXT, 0, 1, MPI_INT, MPI_REPLACE,
                              win));
    MPI_OK(MPI_Win_unlock(NEXT, win));
    CHECK(old[0] == rma_init_value(NEXT, 0), "REPLACE returned %d", old[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(mem[0] == 100, "REPLACE stored %d", mem[0]);
    rma_free(&win, mem);
}

/* Compare_and_swap as a mutex: each rank takes it, bumps a counter, gives it back. */
static void compare_and_swap(void)
{
    enum { ROUNDS = 10 };
    int *mem;
    MPI_Win win = rma_create_ints(&mem, RMA_N);

    mem[0] = -1; /* the mutex: -1 free, else the holder's rank */
    mem[1] = 0;  /* the counter it protects */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int round = 0; round < ROUNDS; round++) {
        int free_value = -1, mine = p2p_rank, was = -2;
        do {
            MPI_OK(MPI_Compare_and_swap(&mine, &free_value, &was, MPI_INT, 0, 0, win));
            MPI_OK(MPI_Win_flush(0, win));
        } while (was != -1);
        int counter = 0, bumped;
        MPI_OK(MPI_Get(&counter, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
        MPI_OK(MPI_Win_flush(0, win));
        bumped = counter + 1;
        MPI_OK(MPI_Put(&bumped, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
        MPI_OK(MPI_Win_flush(0, win));
        MPI_OK(MPI_Compare_and_swap(&free_value, &mine, &was, MPI_INT, 0, 0, win));
        MPI_OK(MPI_Win_flush(0, win));
        CHECK(was == p2p_rank, "the mutex was %d while held by %d", was, p2p_rank);
    }
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (p2p_rank == 0)
        CHECK(mem[1] == ROUNDS * p2p_size, "counter %d, expected %d", mem[1], ROUNDS * p2p_size);
    rma_free(&win, mem);
}

/* Derived datatypes at the origin and the target: vector to indexed, struct, resized. */
static void derived_types(void)
{
    int *mem, src[RMA_N], got[RMA_N];
    MPI_Datatype vec, idx, every_third;
    int blens[3] = {2, 1, 3}, displs[3] = {1, 5, 9};
    MPI_Win win = rma_create_ints(&mem, RMA_N);

    for (int i = 0; i < RMA_N; i++)
        src[i] = 5000 + p2p_rank * 100 + i;
    MPI_OK(MPI_Type_vector(3, 2, 4, MPI_INT, &vec));           /* 0 1 . . 4 5 . . 8 9 */
    MPI_OK(MPI_Type_indexed(3, blens, displs, MPI_INT, &idx)); /* 1 2 5 9 10 11 */
    MPI_OK(MPI_Type_create_resized(MPI_INT, 0, 3 * sizeof(int), &every_third));
    MPI_OK(MPI_Type_commit(&vec));
    MPI_OK(MPI_Type_commit(&idx));
    MPI_OK(MPI_Type_commit(&every_third));
    MPI_OK(MPI_Win_fence(0, win));
    /* 6 ints picked by vec go to the places idx names, at displacement 20. */
    MPI_OK(MPI_Put(src, 1, vec, NEXT, 20, 1, idx, win));
    /* Accumulate into every third int from 40 (4 elements). */
    MPI_OK(MPI_Accumulate(src, 4, MPI_INT, NEXT, 40, 4, every_third, MPI_SUM, win));
    MPI_OK(MPI_Win_fence(0, win));
    int picked[6] = {0, 1, 4, 5, 8, 9}, placed[6] = {1, 2, 5, 9, 10, 11};
    for (int k = 0; k < 6; k++) {
        int i = 20 + placed[k], want = 5000 + PREV * 100 + picked[k];
        CHECK(mem[i] == want, "put through types: [%d] = %d, expected %d", i, mem[i], want);
    }
    CHECK(mem[20] == rma_init_value(p2p_rank, 20) && mem[23] == rma_init_value(p2p_rank, 23),
          "put through types wrote a gap");
    for (int k = 0; k < 4; k++) {
        int i = 40 + 3 * k, want = rma_init_value(p2p_rank, i) + 5000 + PREV * 100 + k;
        CHECK(mem[i] == want, "accumulate through types: [%d] = %d, expected %d", i, mem[i], want);
        CHECK(mem[i + 1] == rma_init_value(p2p_rank, i + 1), "accumulate wrote a gap at %d", i + 1);
    }
    /* Get the indexed places back into a vector layout. */
    memset(got, 0, sizeof(got));
    MPI_OK(MPI_Get(got, 1, vec, NEXT, 20, 1, idx, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int k = 0; k < 6; k++) {
        int want = 5000 + p2p_rank * 100 + picked[k]; /* NEXT holds what this rank put */
        CHECK(got[picked[k]] == want, "get through types: [%d] = %d, expected %d", picked[k],
              got[picked[k]], want);
    }
    CHECK(got[2] == 0 && got[3] == 0, "get through types wrote a gap of the origin");
    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Type_free(&idx));
    MPI_OK(MPI_Type_free(&every_third));
    rma_free(&win, mem);
}

/* Exclusive locks: read-modify-write with Get and Put (not atomic by itself) stays exact
 * because no two ranks hold the lock at once. */
static void lock_exclusive(void)
{
    enum { ROUNDS = 15 };
    int *mem;
    MPI_Win win = rma_create_ints(&mem, RMA_N);

    mem[0] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int round = 0; round < ROUNDS; round++) {
        int value = -1;
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MPI_OK(MPI_Get(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
        MPI_OK(MPI_Win_flush(0, win));
        value++;
        MPI_OK(MPI_Put(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
        MPI_OK(MPI_Win_unlock(0, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (p2p_rank == 0)
        CHECK(mem[0] == ROUNDS * p2p_size, "counter %d, expected %d", mem[0], ROUNDS * p2p_size);
    rma_free(&win, mem);
}

/* Shared locks by every rank at once on every target; MPI_MODE_NOCHECK. */
static void lock_shared(void)
{
    int *mem, got[RMA_N];
    MPI_Win win = rma_create_ints(&mem, RMA_N);

    MPI_Barrier(MPI_COMM_WORLD);
    for (int t = 0; t < p2p_size; t++) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        MPI_OK(MPI_Get(got, RMA_N, MPI_INT, t, 0, RMA_N, MPI_INT, win));
        MPI_OK(MPI_Win_unlock(t, win));
        for (int i = 0; i < RMA_N; i++)
            CHECK(got[i] == rma_init_value(t, i), "shared get from %d: [%d] = %d", t, i, got[i]);
    }
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, NEXT, MPI_MODE_NOCHECK, win));
    MPI_OK(MPI_Get(got, 4, MPI_INT, NEXT, 0, 4, MPI_INT, win));
    MPI_OK(MPI_Win_unlock(NEXT, win));
    CHECK(got[3] == rma_init_value(NEXT, 3), "get under MPI_MODE_NOCHECK: %d", got[3]);
    MPI_Barrier(MPI_COMM_WORLD);
    rma_free(&win, mem);
}

/* Flushes complete operations inside a lock_all epoch: a put then a get of the same place
 * sees the put (same origin, flushed between). */
static void flush(void)
{
    int *mem, val, got = 0;
    MPI_Win win = rma_create_ints(&mem, RMA_N);

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < 5; i++) {
        val = p2p_rank * 10 + i;
        MPI_OK(MPI_Put(&val, 1, MPI_INT, NEXT, 30, 1, MPI_INT, win));
        MPI_OK(MPI_Win_flush(NEXT, win));
        MPI_OK(MPI_Get(&got, 1, MPI_INT, NEXT, 30, 1, MPI_INT, win));
        MPI_OK(MPI_Win_flush_local(NEXT, win));
        CHECK(got == val, "round %d: read %d after flushing %d", i, got, val);
    }
    val = -5;
    MPI_OK(MPI_Put(&val, 1, MPI_INT, NEXT, 31, 1, MPI_INT, win));
    MPI_OK(MPI_Win_flush_all(win));
    MPI_OK(MPI_Win_flush_local_all(win));
    MPI_OK(MPI_Win_sync(win));
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(mem[30] == PREV * 10 + 4 && mem[31] == -5, "after the epoch: %d %d", mem[30], mem[31]);
    rma_free(&win, mem);
}

/* PSCW on a ring: each rank exposes its window to PREV and accesses NEXT's. */
static void pscw(void)
{
    int *mem, src[4] = {11, 22, 33, 44}, got[4] = {0};
    MPI_Group world, prev_group, next_group;
    int prev = PREV, next = NEXT, flag = 0;
    MPI_Win win = rma_create_ints(&mem, RMA_N);

    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_OK(MPI_Group_incl(world, 1, &prev, &prev_group));
    MPI_OK(MPI_Group_incl(world, 1, &next, &next_group));
    /* A fence followed by no RMA call opens no epoch (section 11.5.1): PSCW may follow. */
    MPI_OK(MPI_Win_fence(0, win));
    for (int epoch = 0; epoch < 3; epoch++) {
        MPI_OK(MPI_Win_post(prev_group, 0, win));
        MPI_OK(MPI_Win_start(next_group, 0, win));
        src[0] = 11 + epoch;
        MPI_OK(MPI_Put(src, 4, MPI_INT, NEXT, 4, 4, MPI_INT, win));
        MPI_OK(MPI_Get(got, 2, MPI_INT, NEXT, 50, 2, MPI_INT, win));
        MPI_OK(MPI_Win_complete(win));
        CHECK(got[0] == rma_init_value(NEXT, 50) && got[1] == rma_init_value(NEXT, 51),
              "epoch %d: get gave %d %d", epoch, got[0], got[1]);
        if (epoch == 2) {
            do
                MPI_OK(MPI_Win_test(win, &flag));
            while (!flag);
        } else {
            MPI_OK(MPI_Win_wait(win));
        }
        CHECK(mem[4] == 11 + epoch && mem[7] == 44, "epoch %d: window holds %d .. %d", epoch,
              mem[4], mem[7]);
    }
    MPI_OK(MPI_Group_free(&world));
    MPI_OK(MPI_Group_free(&prev_group));
    MPI_OK(MPI_Group_free(&next_group));
    rma_free(&win, mem);
}

/* Rput, Rget, Raccumulate, Rget_accumulate: their requests complete inside a lock epoch. */
static void request_forms(void)
{
    int *mem, val = 77, got = 0, add = 3, old = 0;
    MPI_Request reqs[4];
    MPI_Win win = rma_create_ints(&mem, RMA_N);

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, NEXT, 0, win));
    MPI_OK(MPI_Rput(&val, 1, MPI_INT, NEXT, 2, 1, MPI_INT, win, &reqs[0]));
    MPI_OK(MPI_Rget(&got, 1, MPI_INT, NEXT, 3, 1, MPI_INT, win, &reqs[1]));
    MPI_OK(MPI_Raccumulate(&add, 1, MPI_INT, NEXT, 4, 1, MPI_INT, MPI_SUM, win, &reqs[2]));
    MPI_OK(MPI_Rget_accumulate(&add, 1, MPI_INT, &old, 1, MPI_INT, NEXT, 5, 1, MPI_INT, MPI_SUM,
                               win, &reqs[3]));
    MPI_OK(MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE));
    CHECK(got == rma_init_value(NEXT, 3), "Rget gave %d", got);
    CHECK(old == rma_init_value(NEXT, 5), "Rget_accumulate gave %d", old);
    MPI_OK(MPI_Win_unlock(NEXT, win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(mem[2] == 77 && mem[4] == rma_init_value(p2p_rank, 4) + 3 &&
              mem[5] == rma_init_value(p2p_rank, 5) + 3,
          "window after the request forms: %d %d %d", mem[2], mem[4], mem[5]);
    rma_free(&win, mem);
}

/* A dynamic window: memory attached, its address shared, accessed, detached. */
static void dynamic_window(void)
{
    MPI_Win win;
    int *mem = p2p_malloc(RMA_N * sizeof(int)), val[2] = {-1, -2}, got[2] = {0, 0}, across[4];
    int half = RMA_N / 2;
    MPI_Aint mine, *addrs = p2p_malloc((size_t)p2p_size * sizeof(MPI_Aint));

    for (int i = 0; i < RMA_N; i++)
        mem[i] = rma_init_value(p2p_rank, i);
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    /* Two attachments, one after the other in memory (MPICH's win_dynamic_rma_flush_get
     * spans two this way). */
    MPI_OK(MPI_Win_attach(win, mem, (MPI_Aint)half * sizeof(int)));
    MPI_OK(MPI_Win_attach(win, mem + half, (MPI_Aint)half * sizeof(int)));
    MPI_OK(MPI_Get_address(mem, &mine));
    MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put(val, 2, MPI_INT, NEXT, MPI_Aint_add(addrs[NEXT], 8 * sizeof(int)), 2, MPI_INT,
                   win));
    MPI_OK(MPI_Get(got, 2, MPI_INT, NEXT, MPI_Aint_add(addrs[NEXT], 12 * sizeof(int)), 2, MPI_INT,
                   win));
    MPI_OK(MPI_Put(val, 2, MPI_INT, NEXT, MPI_Aint_add(addrs[NEXT], (half - 1) * sizeof(int)), 2,
                   MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    CHECK(mem[8] == -1 && mem[9] == -2, "put into attached memory: %d %d", mem[8], mem[9]);
    CHECK(got[0] == rma_init_value(NEXT, 12) && got[1] == rma_init_value(NEXT, 13),
          "get from attached memory: %d %d", got[0], got[1]);
    CHECK(mem[half - 1] == -1 && mem[half] == -2, "put across two attachments: %d %d",
          mem[half - 1], mem[half]);
    MPI_OK(MPI_Get(across, 4, MPI_INT, NEXT, MPI_Aint_add(addrs[NEXT], (half - 2) * sizeof(int)), 4,
                   MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    CHECK(across[0] == rma_init_value(NEXT, half - 2) && across[1] == -1 && across[2] == -2 &&
              across[3] == rma_init_value(NEXT, half + 1),
          "get across two attachments: %d %d %d %d", across[0], across[1], across[2], across[3]);
    MPI_OK(MPI_Win_detach(win, mem));
    MPI_OK(MPI_Win_detach(win, mem + half));
    MPI_OK(MPI_Win_free(&win));
    free(addrs);
    free(mem);
}

static int rma_handler_calls, rma_handler_code;
static void rma_handler(MPI_Win *win, int *code, ...)
{
    (void)win;
    rma_handler_calls++;
    rma_handler_code = *code;
}

/* Window error handlers (section 8.3.2) and the errors the calls must find. */
static void win_errors(void)
{
    int *mem, val = 1, cls = 0, rc;
    MPI_Errhandler handler, got;
    MPI_Win win = rma_create_ints(&mem, RMA_N);

    MPI_OK(MPI_Win_get_errhandler(win, &got));
    CHECK(got == MPI_ERRORS_ARE_FATAL, "a window's default handler is not ERRORS_ARE_FATAL");
    MPI_OK(MPI_Errhandler_free(&got));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    /* A lock type that does not exist. */
    rc = MPI_Win_lock(12345, NEXT, 0, win);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_LOCKTYPE, "bad lock type: %d (class %d)", rc, cls);
    /* Unlock of a target not locked. */
    rc = MPI_Win_unlock(NEXT, win);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_RMA_SYNC, "unlock without lock: class %d", cls);
    /* A user handler is called with the code. */
    MPI_OK(MPI_Win_create_errhandler(rma_handler, &handler));
    MPI_OK(MPI_Win_set_errhandler(win, handler));
    MPI_OK(MPI_Errhandler_free(&handler));
    MPI_OK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    CHECK(rma_handler_calls == 1 && rma_handler_code == MPI_ERR_OTHER,
          "the window's handler ran %d times, code %d", rma_handler_calls, rma_handler_code);
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put(&val, 1, MPI_INT, NEXT, 0, 1, MPI_INT, win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    rma_free(&win, mem);
}

/* Range and epoch errors are detected at the origin (crmpi; Open MPI's components differ
 * in what they check). */
static void win_errors_origin(void)
{
    int *mem, val = 1, cls = 0, rc;
    MPI_Win win = rma_create_ints(&mem, RMA_N);

    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    rc = MPI_Put(&val, 1, MPI_INT, NEXT, 0, 1, MPI_INT, win);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_RMA_SYNC, "put outside an epoch: class %d", cls);
    MPI_OK(MPI_Win_fence(0, win));
    rc = MPI_Put(&val, 1, MPI_INT, NEXT, RMA_N, 1, MPI_INT, win);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_RMA_RANGE, "put past the window: class %d", cls);
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    rma_free(&win, mem);
}

/* Large transfers (beyond every BTL's eager limit) both ways, and MPI_PROC_NULL. */
static void large(void)
{
    enum { BYTES = 1 << 20 };
    MPI_Win win;
    unsigned char *mem, *src = p2p_malloc(BYTES), *got = p2p_malloc(BYTES);

    MPI_OK(MPI_Win_allocate(2 * BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    p2p_fill(mem + BYTES, BYTES, p2p_seed(p2p_rank, 1, 0));
    p2p_fill(src, BYTES, p2p_seed(p2p_rank, 2, 0));
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put(src, BYTES, MPI_BYTE, NEXT, 0, BYTES, MPI_BYTE, win));
    MPI_OK(MPI_Get(got, BYTES, MPI_BYTE, NEXT, BYTES, BYTES, MPI_BYTE, win));
    MPI_OK(MPI_Put(src, 1, MPI_BYTE, MPI_PROC_NULL, 0, 1, MPI_BYTE, win));
    MPI_OK(MPI_Win_fence(0, win));
    p2p_check(mem, BYTES, p2p_seed(PREV, 2, 0), "large put");
    p2p_check(got, BYTES, p2p_seed(NEXT, 1, 0), "large get");
    MPI_OK(MPI_Win_free(&win));
    free(src);
    free(got);
}

/* MPI_MAXLOC and MPI_MINLOC on pair types whose size is below their extent (padding
 * between or after the pair: MPI_DOUBLE_INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT), in a
 * vector (MPICH's acc_pairtype). */
static void accumulate_pairs(void)
{
    enum { N = 15 };
    struct di {
        double v;
        int i;
    } dmem[N], dsrc[N];
    struct si {
        short v;
        int i;
    } smem[N], ssrc[N];
    struct ldi {
        long double v;
        int i;
    } lmem[N], lsrc[N];
    MPI_Datatype vec[3];
    MPI_Win win[3];

    for (int k = 0; k < N; k++) {
        dmem[k] = (struct di){-1.0, -1};
        smem[k] = (struct si){-1, -1};
        lmem[k] = (struct ldi){-1.0L, -1};
        dsrc[k] = (struct di){(double)(p2p_rank + k), p2p_rank};
        ssrc[k] = (struct si){(short)(p2p_rank + k), p2p_rank};
        lsrc[k] = (struct ldi){(long double)(p2p_rank + k), p2p_rank};
    }
    /* Elements 0-2, 5-7, 10-12: the others stay as they are. */
    MPI_OK(MPI_Type_vector(3, 3, 5, MPI_DOUBLE_INT, &vec[0]));
    MPI_OK(MPI_Type_vector(3, 3, 5, MPI_SHORT_INT, &vec[1]));
    MPI_OK(MPI_Type_vector(3, 3, 5, MPI_LONG_DOUBLE_INT, &vec[2]));
    for (int t = 0; t < 3; t++)
        MPI_OK(MPI_Type_commit(&vec[t]));
    MPI_OK(MPI_Win_create(dmem, sizeof(dmem), sizeof(dmem[0]), MPI_INFO_NULL, MPI_COMM_WORLD,
                          &win[0]));
    MPI_OK(MPI_Win_create(smem, sizeof(smem), sizeof(smem[0]), MPI_INFO_NULL, MPI_COMM_WORLD,
                          &win[1]));
    MPI_OK(MPI_Win_create(lmem, sizeof(lmem), sizeof(lmem[0]), MPI_INFO_NULL, MPI_COMM_WORLD,
                          &win[2]));
    for (int t = 0; t < 3; t++)
        MPI_OK(MPI_Win_fence(0, win[t]));
    MPI_OK(MPI_Accumulate(dsrc, 1, vec[0], NEXT, 0, 1, vec[0], MPI_MAXLOC, win[0]));
    MPI_OK(MPI_Accumulate(ssrc, 1, vec[1], NEXT, 0, 1, vec[1], MPI_MAXLOC, win[1]));
    MPI_OK(MPI_Accumulate(lsrc, 1, vec[2], NEXT, 0, 1, vec[2], MPI_MAXLOC, win[2]));
    for (int t = 0; t < 3; t++)
        MPI_OK(MPI_Win_fence(0, win[t]));
    for (int k = 0; k < N; k++) {
        bool hit = k % 5 < 3;
        int v = hit ? PREV + k : -1, i = hit ? PREV : -1;

        CHECK(dmem[k].v == v && dmem[k].i == i, "MPI_DOUBLE_INT [%d]: (%g, %d), expected (%d, %d)",
              k, dmem[k].v, dmem[k].i, v, i);
        CHECK(smem[k].v == v && smem[k].i == i, "MPI_SHORT_INT [%d]: (%d, %d), expected (%d, %d)",
              k, smem[k].v, smem[k].i, v, i);
        CHECK(lmem[k].v == v && lmem[k].i == i,
              "MPI_LONG_DOUBLE_INT [%d]: (%Lg, %d), expected (%d, %d)", k, lmem[k].v, lmem[k].i, v,
              i);
    }
    for (int t = 0; t < 3; t++) {
        MPI_OK(MPI_Win_free(&win[t]));
        MPI_OK(MPI_Type_free(&vec[t]));
    }
}

/* Every communication call with an MPI_PROC_NULL target does nothing and succeeds (section
 * 11.3), the request forms giving a request that completes (MPICH's rmanull, reqops). */
static void proc_null(void)
{
    int *mem, val = 1, res = -1, cmp = 0;
    MPI_Request reqs[4];
    MPI_Win win = rma_create_ints(&mem, RMA_N);

    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_OK(MPI_Put(&val, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
    MPI_OK(MPI_Get(&res, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
    MPI_OK(MPI_Accumulate(&val, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Get_accumulate(&val, 1, MPI_INT, &res, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT,
                              MPI_SUM, win));
    MPI_OK(MPI_Fetch_and_op(&val, &res, MPI_INT, MPI_PROC_NULL, 0, MPI_SUM, win));
    MPI_OK(MPI_Compare_and_swap(&val, &cmp, &res, MPI_INT, MPI_PROC_NULL, 0, win));
    MPI_OK(MPI_Rput(&val, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win, &reqs[0]));
    MPI_OK(MPI_Rget(&res, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win, &reqs[1]));
    MPI_OK(MPI_Raccumulate(&val, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, MPI_REPLACE, win,
                           &reqs[2]));
    MPI_OK(MPI_Rget_accumulate(&val, 1, MPI_INT, &res, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT,
                               MPI_REPLACE, win, &reqs[3]));
    MPI_OK(MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE));
    MPI_OK(MPI_Win_unlock_all(win));
    CHECK(res == -1, "a get from MPI_PROC_NULL wrote %d", res);
    rma_free(&win, mem);
}

/* Accesses of no bytes (count 0, or a type of size 0) have empty type signatures, which
 * match whatever types carry them (section 11.3.4): accepted, and nothing changes at the
 * target (MPICH's badrma). A non-empty origin against an empty target is still refused. */
static void empty_accesses(void)
{
    int *mem, val[2] = {5, 6}, res[2] = {-1, -1}, cls = 0, rc;
    double dval = 1.5;
    MPI_Datatype empty;
    MPI_Request req;
    MPI_Win win = rma_create_ints(&mem, RMA_N);

    MPI_OK(MPI_Type_contiguous(0, MPI_INT, &empty));
    MPI_OK(MPI_Type_commit(&empty));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_OK(MPI_Accumulate(&dval, 0, MPI_DOUBLE, NEXT, 0, 0, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Accumulate(val, 1, empty, NEXT, 0, 0, MPI_DOUBLE, MPI_SUM, win));
    MPI_OK(MPI_Accumulate(val, 2, empty, NEXT, 0, 1, empty, MPI_PROD, win));
    MPI_OK(
        MPI_Get_accumulate(&dval, 0, MPI_DOUBLE, res, 1, empty, NEXT, 0, 0, MPI_INT, MPI_SUM, win));
    MPI_OK(
        MPI_Get_accumulate(NULL, 1, empty, NULL, 0, MPI_DOUBLE, NEXT, 0, 3, empty, MPI_SUM, win));
    MPI_OK(MPI_Raccumulate(val, 0, MPI_INT, NEXT, 0, 1, empty, MPI_MAX, win, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Put(&dval, 0, MPI_DOUBLE, NEXT, 0, 1, empty, win));
    MPI_OK(MPI_Get(res, 1, empty, NEXT, 0, 0, MPI_DOUBLE, win));
    rc = MPI_Accumulate(val, 1, MPI_INT, NEXT, 0, 1, empty, MPI_SUM, win);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_TYPE,
          "an int accumulated into an empty target type: %d (class %d)", rc, cls);
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < RMA_N; i++)
        CHECK(mem[i] == rma_init_value(p2p_rank, i), "an empty access changed [%d]: %d", i, mem[i]);
    CHECK(res[0] == -1 && res[1] == -1, "an empty get wrote %d %d", res[0], res[1]);
    MPI_OK(MPI_Type_free(&empty));
    rma_free(&win, mem);
}

/* Several windows over one communicator at once. */
static void many_windows(void)
{
    int *a, *b, one = 1;
    MPI_Win wa = rma_create_ints(&a, RMA_N), wb = rma_create_ints(&b, RMA_N);

    MPI_OK(MPI_Win_fence(0, wa));
    MPI_OK(MPI_Win_fence(0, wb));
    MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, wa));
    MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, 0, 1, 1, MPI_INT, MPI_SUM, wb));
    MPI_OK(MPI_Win_fence(0, wb));
    MPI_OK(MPI_Win_fence(0, wa));
    if (p2p_rank == 0)
        CHECK(a[0] == p2p_size && b[1] == 1 + p2p_size, "two windows: %d %d", a[0], b[1]);
    rma_free(&wb, b);
    rma_free(&wa, a);
}

/* A window over each half of a split communicator (two windows of one context id space,
 * their ranks named in the halves). */
static void split_window(void)
{
    MPI_Comm half;
    int one = 1, *c;
    MPI_Win wc;
    int hrank, hsize;

    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, p2p_rank % 2, p2p_rank, &half));
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_size(half, &hsize);
    c = p2p_malloc(sizeof(int));
    *c = 0;
    MPI_OK(MPI_Win_create(c, sizeof(int), sizeof(int), MPI_INFO_NULL, half, &wc));
    MPI_OK(MPI_Win_fence(0, wc));
    MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, wc));
    MPI_OK(MPI_Win_fence(0, wc));
    if (hrank == 0)
        CHECK(*c == hsize, "window over a split: %d, expected %d", *c, hsize);
    rma_free(&wc, c);
    MPI_OK(MPI_Comm_free(&half));
}

/* The shared segment of MPI_Win_allocate_shared (sections 11.2.3, 11.2.4): rank r asks for
 * RMA_N + r ints. Attributes, MPI_Win_shared_query of every rank (contiguous by rank),
 * direct stores and loads of another rank's part ordered by MPI_Win_sync and a barrier,
 * and RMA operations into the segment: an accumulate under a lock and puts under fence,
 * seen by direct loads. */
static void shared_window(void)
{
    int n = RMA_N + p2p_rank, *mine = NULL, *flavor = NULL, *model = NULL, *unit = NULL;
    int flag = 0, qunit = 0, one = 1, got = -1;
    MPI_Aint *size = NULL, qsize = 0;
    void *base = NULL;
    int **parts = p2p_malloc((size_t)p2p_size * sizeof(int *));
    MPI_Win win;

    MPI_OK(MPI_Win_allocate_shared((MPI_Aint)n * sizeof(int), sizeof(int), MPI_INFO_NULL,
                                   MPI_COMM_WORLD, &mine, &win));
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_SHARED, "MPI_WIN_CREATE_FLAVOR is not SHARED");
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
    CHECK(flag && *model == MPI_WIN_UNIFIED, "MPI_WIN_MODEL is not MPI_WIN_UNIFIED");
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
    CHECK(flag && base == mine, "MPI_WIN_BASE is %p, baseptr %p", base, (void *)mine);
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &flag));
    CHECK(flag && *size == (MPI_Aint)n * (MPI_Aint)sizeof(int), "MPI_WIN_SIZE is wrong");
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag));
    CHECK(flag && *unit == sizeof(int), "MPI_WIN_DISP_UNIT is wrong");
    for (int r = 0; r < p2p_size; r++) {
        MPI_OK(MPI_Win_shared_query(win, r, &qsize, &qunit, &parts[r]));
        CHECK(qsize == (MPI_Aint)(RMA_N + r) * (MPI_Aint)sizeof(int) && qunit == sizeof(int),
              "rank %d's part: %td bytes, unit %d", r, qsize, qunit);
        CHECK(r > 0 || parts[0] != NULL, "rank 0's part is at NULL");
        CHECK(r == 0 || parts[r] == parts[r - 1] + RMA_N + r - 1,
              "rank %d's part does not follow rank %d's", r, r - 1);
    }
    CHECK(parts[p2p_rank] == mine, "the query of this rank is not its baseptr");
    MPI_OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &qsize, &qunit, &base));
    CHECK(base == parts[0] && qsize == RMA_N * (MPI_Aint)sizeof(int),
          "MPI_PROC_NULL's query is not rank 0's part");

    /* Stores into this rank's part, loads of the previous rank's. */
    MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    for (int i = 0; i < n; i++)
        mine[i] = rma_init_value(p2p_rank, i);
    MPI_OK(MPI_Win_sync(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_sync(win));
    for (int i = 0; i < RMA_N + PREV; i++) {
        if (parts[PREV][i] != rma_init_value(PREV, i)) {
            CHECK(0, "load of rank %d's [%d]: %d", PREV, i, parts[PREV][i]);
            break;
        }
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_unlock_all(win));

    /* An accumulate into rank 0's part, read by every rank with a load. */
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Win_unlock(0, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_sync(win));
    CHECK(parts[0][0] == rma_init_value(0, 0) + p2p_size, "accumulated: %d, expected %d",
          parts[0][0], rma_init_value(0, 0) + p2p_size);

    /* A put into the next rank's part, a get of it through the window, loads of it. */
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put(&p2p_rank, 1, MPI_INT, NEXT, 1, 1, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Get(&got, 1, MPI_INT, NEXT, 1, 1, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    CHECK(mine[1] == PREV, "put into this rank's part: %d, expected %d", mine[1], PREV);
    CHECK(parts[NEXT][1] == p2p_rank && got == p2p_rank, "next rank's part: load %d, get %d",
          parts[NEXT][1], got);
    MPI_OK(MPI_Win_free(&win));
    free(parts);
}

/* alloc_shared_noncontig: every part starts on a page of its own; zero-sized parts, and
 * MPI_PROC_NULL's query (the lowest rank with memory; section 11.2.3). */
static void shared_noncontig(void)
{
    MPI_Aint want = p2p_rank % 2 ? 0 : 100, qsize = -1;
    long page = sysconf(_SC_PAGESIZE);
    char *mine = NULL, *part = NULL;
    int qunit = 0;
    MPI_Info info;
    MPI_Win win;

    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
    MPI_OK(MPI_Win_allocate_shared(want, 1, info, MPI_COMM_WORLD, &mine, &win));
    MPI_OK(MPI_Info_free(&info));
    CHECK((mine != NULL) == (want > 0), "baseptr is %p for %td bytes", (void *)mine, want);
    for (int r = 0; r < p2p_size; r++) {
        MPI_OK(MPI_Win_shared_query(win, r, &qsize, &qunit, &part));
        CHECK(qsize == (r % 2 ? 0 : 100) && qunit == 1, "rank %d: %td bytes, unit %d", r, qsize,
              qunit);
        CHECK(r % 2 || (uintptr_t)part % (uintptr_t)page == 0,
              "rank %d's part %p is not on a page of its own", r, (void *)part);
        CHECK(r % 2 == 0 || part == NULL, "rank %d's empty part is at %p, not NULL", r,
              (void *)part);
        CHECK(r != p2p_rank || part == mine, "the query of this rank is not its baseptr");
        if (r % 2 == 0) {
            MPI_OK(MPI_Win_lock_all(0, win));
            if (r == p2p_rank)
                memset(mine, 'a' + r, 100);
            MPI_OK(MPI_Win_sync(win));
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            MPI_OK(MPI_Win_sync(win));
            CHECK(part[0] == 'a' + r && part[99] == 'a' + r, "load of rank %d's part", r);
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            MPI_OK(MPI_Win_unlock_all(win));
        }
    }
    MPI_OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &qsize, &qunit, &part));
    CHECK(qsize == 100, "MPI_PROC_NULL: %td bytes, expected rank 0's 100", qsize);
    MPI_OK(MPI_Win_free(&win));

    /* Every part empty: size 0 and an address. */
    MPI_OK(MPI_Win_allocate_shared(0, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win));
    MPI_OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &qsize, &qunit, &part));
    CHECK(qsize == 0 && part != NULL, "all empty: %td bytes at %p", qsize, (void *)part);
    MPI_OK(MPI_Win_free(&win));
}

/* MPI_Win_shared_query on a window of another flavor: MPI_ERR_RMA_FLAVOR (MPI-3.1 section
 * 11.2.3), and a rank out of range: MPI_ERR_RANK. */
static void shared_errors(void)
{
    int *mem, unit, cls = 0, rc;
    MPI_Aint size;
    void *base;
    MPI_Win win = rma_create_ints(&mem, RMA_N);

    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    rc = MPI_Win_shared_query(win, 0, &size, &unit, &base);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_RMA_FLAVOR, "query of a created window: class %d",
          cls);
    rma_free(&win, mem);
    MPI_OK(MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                                   &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    rc = MPI_Win_shared_query(win, p2p_size, &size, &unit, &base);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_RANK, "query of rank %d: class %d", p2p_size, cls);
    MPI_OK(MPI_Win_free(&win));
}

/* clang-format off */
static const p2p_test_t tests[] = {
    P2P_TEST(win_queries, 1),
    P2P_TEST(win_attributes, 1),
    P2P_TEST(put_fence, 1),
    P2P_TEST(get_fence, 1),
    P2P_TEST(accumulate_sum, 1),
    P2P_TEST(accumulate_ops, 1),
    P2P_TEST(accumulate_logical, 1),
    P2P_TEST(fetch_and_op, 1),
    P2P_TEST(get_accumulate, 1),
    P2P_TEST(compare_and_swap, 1),
    P2P_TEST(derived_types, 1),
    P2P_TEST(lock_exclusive, 1),
    P2P_TEST(lock_shared, 1),
    P2P_TEST(flush, 1),
    P2P_TEST(pscw, 1),
    P2P_TEST(request_forms, 1),
    P2P_TEST(dynamic_window, 1),
    P2P_TEST(win_errors, 1),
    P2P_TEST(win_errors_origin, 1),
    P2P_TEST(large, 1),
    P2P_TEST(proc_null, 1),
    P2P_TEST(empty_accesses, 1),
    P2P_TEST(accumulate_pairs, 1),
    P2P_TEST(many_windows, 1),
    P2P_TEST(split_window, 4),
    P2P_TEST(shared_window, 1),
    P2P_TEST(shared_noncontig, 1),
    P2P_TEST(shared_errors, 1),
};
/* clang-format on */

P2P_MAIN(tests)
