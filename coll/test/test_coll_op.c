/*
 * test_coll_op.c: the reduction kernels (coll_op.c) through MPI_Reduce_local in a
 * singleton: every predefined op on a representative of every type class, and on every
 * C integer and floating type for SUM and MAX; MINLOC/MAXLOC on every pair type with ties;
 * the ops a type has not (MPI_ERR_OP); user ops (commutative or not) on a derived
 * datatype; every collective on a one-rank communicator, blocking and not; and, on a
 * communicator of coll's own over a PML communicator of the test's, the schedule engine
 * itself (rounds, local steps, errors) and a non-blocking collective's request (its owner,
 * and the communicator kept while it lives).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <complex.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "coll.h"
#include "coll_sched.h"
#include "crmpi_status.h"
#include "pml.h"
#include "progress.h"
#include "test_capture.h"

static int group_setup(void **state)
{
    (void)state;
    unsetenv("CRMPI_CTL_FD");
    setenv("CRMPI_PARAM_FILE", "", 1);
    test_env_clear_mca();
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
        return -1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    return MPI_Finalize() == MPI_SUCCESS ? 0 : -1;
}

/* in = {5, -3, 0, 7}, inout = {2, -3, 4, 9} for a signed integer type; every op checked. */
#define CHECK_INT_OPS(ctype, mpi_type)                                                             \
    do {                                                                                           \
        const ctype a[4] = {5, -3, 0, 7};                                                          \
        const ctype b[4] = {2, -3, 4, 9};                                                          \
        struct {                                                                                   \
            MPI_Op op;                                                                             \
            ctype want[4];                                                                         \
        } cases[] = {                                                                              \
            {MPI_MAX, {5, -3, 4, 9}},         {MPI_MIN, {2, -3, 0, 7}},                            \
            {MPI_SUM, {7, -6, 4, 16}},        {MPI_PROD, {10, 9, 0, 63}},                          \
            {MPI_LAND, {1, 1, 0, 1}},         {MPI_LOR, {1, 1, 1, 1}},                             \
            {MPI_LXOR, {0, 0, 1, 0}},         {MPI_BAND, {5 & 2, -3 & -3, 0, 7 & 9}},              \
            {MPI_BOR, {5 | 2, -3, 4, 7 | 9}}, {MPI_BXOR, {5 ^ 2, 0, 4, 7 ^ 9}},                    \
        };                                                                                         \
        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {                            \
            ctype io[4];                                                                           \
            memcpy(io, b, sizeof(io));                                                             \
            assert_int_equal(MPI_Reduce_local(a, io, 4, mpi_type, cases[c].op), MPI_SUCCESS);      \
            for (int i = 0; i < 4; i++)                                                            \
                assert_true(io[i] == cases[c].want[i]);                                            \
        }                                                                                          \
    } while (0)

static void test_signed_integers(void **state)
{
    (void)state;
    CHECK_INT_OPS(signed char, MPI_SIGNED_CHAR);
    CHECK_INT_OPS(short, MPI_SHORT);
    CHECK_INT_OPS(int, MPI_INT);
    CHECK_INT_OPS(long, MPI_LONG);
    CHECK_INT_OPS(long long, MPI_LONG_LONG);
    CHECK_INT_OPS(int8_t, MPI_INT8_T);
    CHECK_INT_OPS(int16_t, MPI_INT16_T);
    CHECK_INT_OPS(int32_t, MPI_INT32_T);
    CHECK_INT_OPS(int64_t, MPI_INT64_T);
}

/* Unsigned types: max, min, sum, prod, bitwise, logical on {200, 0, 3} x {100, 0, 5}. */
#define CHECK_UINT_OPS(ctype, mpi_type)                                                            \
    do {                                                                                           \
        const ctype a[3] = {200, 0, 3};                                                            \
        const ctype b[3] = {100, 0, 5};                                                            \
        struct {                                                                                   \
            MPI_Op op;                                                                             \
            ctype want[3];                                                                         \
        } cases[] = {                                                                              \
            {MPI_MAX, {200, 0, 5}},        {MPI_MIN, {100, 0, 3}},                                 \
            {MPI_SUM, {(ctype)300, 0, 8}}, {MPI_PROD, {(ctype)20000, 0, 15}},                      \
            {MPI_BAND, {200 & 100, 0, 1}}, {MPI_BOR, {200 | 100, 0, 7}},                           \
            {MPI_BXOR, {200 ^ 100, 0, 6}}, {MPI_LAND, {1, 0, 1}},                                  \
            {MPI_LOR, {1, 0, 1}},          {MPI_LXOR, {0, 0, 0}},                                  \
        };                                                                                         \
        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {                            \
            ctype io[3];                                                                           \
            memcpy(io, b, sizeof(io));                                                             \
            assert_int_equal(MPI_Reduce_local(a, io, 3, mpi_type, cases[c].op), MPI_SUCCESS);      \
            for (int i = 0; i < 3; i++)                                                            \
                assert_true(io[i] == cases[c].want[i]);                                            \
        }                                                                                          \
    } while (0)

static void test_unsigned_integers(void **state)
{
    (void)state;
    CHECK_UINT_OPS(unsigned char, MPI_UNSIGNED_CHAR);
    CHECK_UINT_OPS(unsigned short, MPI_UNSIGNED_SHORT);
    CHECK_UINT_OPS(unsigned, MPI_UNSIGNED);
    CHECK_UINT_OPS(unsigned long, MPI_UNSIGNED_LONG);
    CHECK_UINT_OPS(unsigned long long, MPI_UNSIGNED_LONG_LONG);
    CHECK_UINT_OPS(uint8_t, MPI_UINT8_T);
    CHECK_UINT_OPS(uint16_t, MPI_UINT16_T);
    CHECK_UINT_OPS(uint32_t, MPI_UINT32_T);
    CHECK_UINT_OPS(uint64_t, MPI_UINT64_T);
}

#define CHECK_FLOAT_OPS(ctype, mpi_type)                                                           \
    do {                                                                                           \
        const ctype a[3] = {1.5, -2.0, 0.25};                                                      \
        const ctype b[3] = {2.5, -3.0, 4.0};                                                       \
        struct {                                                                                   \
            MPI_Op op;                                                                             \
            ctype want[3];                                                                         \
        } cases[] = {                                                                              \
            {MPI_MAX, {2.5, -2.0, 4.0}},                                                           \
            {MPI_MIN, {1.5, -3.0, 0.25}},                                                          \
            {MPI_SUM, {4.0, -5.0, 4.25}},                                                          \
            {MPI_PROD, {3.75, 6.0, 1.0}},                                                          \
        };                                                                                         \
        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {                            \
            ctype io[3];                                                                           \
            memcpy(io, b, sizeof(io));                                                             \
            assert_int_equal(MPI_Reduce_local(a, io, 3, mpi_type, cases[c].op), MPI_SUCCESS);      \
            for (int i = 0; i < 3; i++)                                                            \
                assert_true(io[i] == cases[c].want[i]);                                            \
        }                                                                                          \
        ctype io[3];                                                                               \
        assert_int_equal(MPI_Reduce_local(a, io, 3, mpi_type, MPI_BAND), MPI_ERR_OP);              \
        assert_int_equal(MPI_Reduce_local(a, io, 3, mpi_type, MPI_LAND), MPI_ERR_OP);              \
    } while (0)

static void test_floating(void **state)
{
    (void)state;
    CHECK_FLOAT_OPS(float, MPI_FLOAT);
    CHECK_FLOAT_OPS(double, MPI_DOUBLE);
    CHECK_FLOAT_OPS(long double, MPI_LONG_DOUBLE);
}

static void test_multi_language(void **state)
{
    const MPI_Aint a[2] = {10, -4};
    MPI_Aint io[2] = {3, 6};
    MPI_Offset oa[1] = {1LL << 40}, oio[1] = {5};
    MPI_Count ca[1] = {7}, cio[1] = {9};

    (void)state;
    assert_int_equal(MPI_Reduce_local(a, io, 2, MPI_AINT, MPI_SUM), MPI_SUCCESS);
    assert_true(io[0] == 13 && io[1] == 2);
    assert_int_equal(MPI_Reduce_local(oa, oio, 1, MPI_OFFSET, MPI_MAX), MPI_SUCCESS);
    assert_true(oio[0] == (1LL << 40));
    assert_int_equal(MPI_Reduce_local(ca, cio, 1, MPI_COUNT, MPI_BXOR), MPI_SUCCESS);
    assert_true(cio[0] == (7 ^ 9));
    /* Logical ops, which MPI-3.1 leaves undefined on the multi-language types, work as on
     * C integers (MPICH and Open MPI accept them). */
    const MPI_Aint la[3] = {0, 5, 0};
    MPI_Aint lio[3] = {0, 0, 3};
    assert_int_equal(MPI_Reduce_local(la, lio, 3, MPI_AINT, MPI_LOR), MPI_SUCCESS);
    assert_true(lio[0] == 0 && lio[1] == 1 && lio[2] == 1);
    assert_int_equal(MPI_Reduce_local(la, lio, 3, MPI_AINT, MPI_LAND), MPI_SUCCESS);
    assert_true(lio[0] == 0 && lio[1] == 1 && lio[2] == 0);
}

static void test_complex(void **state)
{
    const double _Complex a[2] = {1.0 + 2.0 * I, -1.0};
    double _Complex io[2] = {3.0 - 1.0 * I, 2.0 * I};
    const float _Complex fa[1] = {2.0f * I};
    float _Complex fio[1] = {2.0f * I};
    const long double _Complex la[1] = {1.0L};
    long double _Complex lio[1] = {2.0L + 1.0L * I};

    (void)state;
    assert_int_equal(MPI_Reduce_local(a, io, 2, MPI_C_DOUBLE_COMPLEX, MPI_SUM), MPI_SUCCESS);
    assert_true(io[0] == 4.0 + 1.0 * I && io[1] == -1.0 + 2.0 * I);
    assert_int_equal(MPI_Reduce_local(fa, fio, 1, MPI_C_FLOAT_COMPLEX, MPI_PROD), MPI_SUCCESS);
    assert_true(fio[0] == -4.0f);
    assert_int_equal(MPI_Reduce_local(la, lio, 1, MPI_C_LONG_DOUBLE_COMPLEX, MPI_SUM), MPI_SUCCESS);
    assert_true(lio[0] == 3.0L + 1.0L * I);
    assert_int_equal(MPI_Reduce_local(a, io, 2, MPI_CXX_DOUBLE_COMPLEX, MPI_SUM), MPI_SUCCESS);
    /* Complex numbers have no order. */
    assert_int_equal(MPI_Reduce_local(a, io, 2, MPI_C_DOUBLE_COMPLEX, MPI_MAX), MPI_ERR_OP);
}

static void test_logical_and_byte(void **state)
{
    const _Bool a[4] = {1, 1, 0, 0};
    const _Bool b[4] = {1, 0, 1, 0};
    _Bool io[4];
    const unsigned char ba[2] = {0xf0, 0x0f};
    unsigned char bio[2] = {0x3c, 0xff};

    (void)state;
    memcpy(io, b, sizeof(io));
    assert_int_equal(MPI_Reduce_local(a, io, 4, MPI_C_BOOL, MPI_LAND), MPI_SUCCESS);
    assert_true(io[0] == 1 && io[1] == 0 && io[2] == 0 && io[3] == 0);
    memcpy(io, b, sizeof(io));
    assert_int_equal(MPI_Reduce_local(a, io, 4, MPI_C_BOOL, MPI_LOR), MPI_SUCCESS);
    assert_true(io[0] == 1 && io[1] == 1 && io[2] == 1 && io[3] == 0);
    memcpy(io, b, sizeof(io));
    assert_int_equal(MPI_Reduce_local(a, io, 4, MPI_CXX_BOOL, MPI_LXOR), MPI_SUCCESS);
    assert_true(io[0] == 0 && io[1] == 1 && io[2] == 1 && io[3] == 0);
    assert_int_equal(MPI_Reduce_local(a, io, 4, MPI_C_BOOL, MPI_SUM), MPI_ERR_OP);
    assert_int_equal(MPI_Reduce_local(ba, bio, 2, MPI_BYTE, MPI_BAND), MPI_SUCCESS);
    assert_true(bio[0] == 0x30 && bio[1] == 0x0f);
    assert_int_equal(MPI_Reduce_local(ba, bio, 2, MPI_BYTE, MPI_BXOR), MPI_SUCCESS);
    assert_true(bio[0] == 0xc0 && bio[1] == 0x00);
    assert_int_equal(MPI_Reduce_local(ba, bio, 2, MPI_BYTE, MPI_SUM), MPI_ERR_OP);
    /* MPI_CHAR is in no class (MPI-3.1 section 5.9.2); crmpi reduces it as the C type char,
     * as MPICH and Open MPI do. */
    const char ca[2] = {'a', 3};
    char cio[2] = {'b', 4};
    assert_int_equal(MPI_Reduce_local(ca, cio, 2, MPI_CHAR, MPI_MAX), MPI_SUCCESS);
    assert_true(cio[0] == 'b' && cio[1] == 4);
    assert_int_equal(MPI_Reduce_local(ca, cio, 2, MPI_CHAR, MPI_SUM), MPI_SUCCESS);
    assert_true(cio[0] == (char)('a' + 'b') && cio[1] == 7);
    assert_int_equal(MPI_Reduce_local(ba, bio, 2, MPI_WCHAR, MPI_MAX), MPI_ERR_OP);
}

/* MAXLOC/MINLOC: better values win, equal values keep the lower index. */
#define CHECK_LOC(vtype, mpi_type)                                                                 \
    do {                                                                                           \
        struct {                                                                                   \
            vtype v;                                                                               \
            int i;                                                                                 \
        } a[3] = {{5, 3}, {2, 7}, {4, 1}}, b[3] = {{5, 1}, {9, 2}, {4, 6}}, io[3];                 \
        memcpy(io, b, sizeof(io));                                                                 \
        assert_int_equal(MPI_Reduce_local(a, io, 3, mpi_type, MPI_MAXLOC), MPI_SUCCESS);           \
        assert_true(io[0].v == 5 && io[0].i == 1);                                                 \
        assert_true(io[1].v == 9 && io[1].i == 2);                                                 \
        assert_true(io[2].v == 4 && io[2].i == 1);                                                 \
        memcpy(io, b, sizeof(io));                                                                 \
        assert_int_equal(MPI_Reduce_local(a, io, 3, mpi_type, MPI_MINLOC), MPI_SUCCESS);           \
        assert_true(io[0].v == 5 && io[0].i == 1);                                                 \
        assert_true(io[1].v == 2 && io[1].i == 7);                                                 \
        assert_true(io[2].v == 4 && io[2].i == 1);                                                 \
        assert_int_equal(MPI_Reduce_local(a, io, 3, mpi_type, MPI_SUM), MPI_ERR_OP);               \
    } while (0)

static void test_loc_pairs(void **state)
{
    (void)state;
    CHECK_LOC(float, MPI_FLOAT_INT);
    CHECK_LOC(double, MPI_DOUBLE_INT);
    CHECK_LOC(long, MPI_LONG_INT);
    CHECK_LOC(int, MPI_2INT);
    CHECK_LOC(short, MPI_SHORT_INT);
    CHECK_LOC(long double, MPI_LONG_DOUBLE_INT);
    /* MINLOC on a plain type is undefined. */
    int x = 1, y = 2;
    assert_int_equal(MPI_Reduce_local(&x, &y, 1, MPI_INT, MPI_MINLOC), MPI_ERR_OP);
    /* The large-count form. */
    assert_int_equal(MPI_Reduce_local_c(&x, &y, (MPI_Count)1, MPI_INT, MPI_SUM), MPI_SUCCESS);
    assert_int_equal(y, 3);
    assert_int_equal(MPI_Reduce_local_c(&x, &y, (MPI_Count)-1, MPI_INT, MPI_SUM), MPI_ERR_COUNT);
}

/* What guard_alloc fills its memory with, so that a stray write shows. */
#define GUARD_FILL 0xa5

/*
 * `nbytes` of memory aligned to `align` (a C object's address must be: UBSan checks it) that
 * end as near as that allows to where an inaccessible page begins: a write past them faults
 * at once, where malloc's rounding would hide it, or lands in the fewer than `align` bytes
 * between, which keep GUARD_FILL (guard_slack_intact). Freed with guard_free.
 */
static void *guard_alloc(size_t nbytes, size_t align, void **map_out, size_t *map_len_out)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t span = (nbytes + align - 1) / align * align;
    size_t data_pages = (span + page - 1) / page;
    size_t len = (data_pages + 1) * page;
    char *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    assert_true(map != MAP_FAILED);
    assert_int_equal(mprotect(map + data_pages * page, page, PROT_NONE), 0);
    memset(map + data_pages * page - span, GUARD_FILL, span);
    *map_out = map;
    *map_len_out = len;
    return map + data_pages * page - span;
}

/* The bytes between guard_alloc's `nbytes` and its inaccessible page are untouched. */
static bool guard_slack_intact(const char *data, size_t nbytes, size_t align)
{
    size_t span = (nbytes + align - 1) / align * align;

    for (size_t i = nbytes; i < span; i++)
        if ((unsigned char)data[i] != GUARD_FILL)
            return false;
    return true;
}

static void guard_free(void *map, size_t len)
{
    munmap(map, len);
}

/*
 * MINLOC/MAXLOC write the value and the index of a pair, never its padding: the last pair
 * of a buffer may end at the pair type's true extent (the data), short of its extent, as
 * the collectives' temporary buffers do. The kernels assigned whole C structs, padding
 * included, and wrote past such a buffer (heap corruption in MPI_Reduce on 3 ranks).
 */
#define CHECK_LOC_GUARDED(vtype, mpi_type)                                                         \
    do {                                                                                           \
        struct pair {                                                                              \
            vtype v;                                                                               \
            int i;                                                                                 \
        } in[3] = {{1, 0}, {9, 1}, {3, 2}};                                                        \
        MPI_Aint lb, extent, true_lb, true_extent;                                                 \
        size_t nbytes;                                                                             \
        void *map;                                                                                 \
        size_t map_len;                                                                            \
        MPI_Op ops[2] = {MPI_MINLOC, MPI_MAXLOC};                                                  \
        MPI_Type_get_extent(mpi_type, &lb, &extent);                                               \
        MPI_Type_get_true_extent(mpi_type, &true_lb, &true_extent);                                \
        assert_true(extent == (MPI_Aint)sizeof(struct pair));                                      \
        nbytes = (size_t)(2 * extent + true_extent);                                               \
        for (int o = 0; o < 2; o++) {                                                              \
            char *io = guard_alloc(nbytes, _Alignof(struct pair), &map, &map_len);                 \
            for (int k = 0; k < 3; k++) {                                                          \
                struct pair p = {5, 7};                                                            \
                memcpy(io + k * extent, &p, (size_t)true_extent);                                  \
            }                                                                                      \
            assert_int_equal(MPI_Reduce_local(in, io, 3, mpi_type, ops[o]), MPI_SUCCESS);          \
            for (int k = 0; k < 3; k++) {                                                          \
                struct pair p;                                                                     \
                memcpy(&p, io + k * extent, (size_t)true_extent);                                  \
                bool in_wins = o == 0 ? in[k].v < 5 : in[k].v > 5;                                 \
                assert_true(p.v == (in_wins ? in[k].v : 5));                                       \
                assert_int_equal(p.i, in_wins ? in[k].i : 7);                                      \
            }                                                                                      \
            assert_true(guard_slack_intact(io, nbytes, _Alignof(struct pair)));                    \
            guard_free(map, map_len);                                                              \
        }                                                                                          \
    } while (0)

static void test_loc_pairs_write_no_padding(void **state)
{
    (void)state;
    CHECK_LOC_GUARDED(float, MPI_FLOAT_INT);
    CHECK_LOC_GUARDED(double, MPI_DOUBLE_INT);
    CHECK_LOC_GUARDED(long, MPI_LONG_INT);
    CHECK_LOC_GUARDED(int, MPI_2INT);
    CHECK_LOC_GUARDED(short, MPI_SHORT_INT);
    CHECK_LOC_GUARDED(long double, MPI_LONG_DOUBLE_INT);
}

static void test_bad_ops(void **state)
{
    int x = 1, y = 2;

    (void)state;
    assert_int_equal(MPI_Reduce_local(&x, &y, 1, MPI_INT, MPI_OP_NULL), MPI_ERR_OP);
    assert_int_equal(MPI_Reduce_local(&x, &y, 1, MPI_INT, MPI_REPLACE), MPI_ERR_OP);
    assert_int_equal(MPI_Reduce_local(&x, &y, 1, MPI_INT, MPI_NO_OP), MPI_ERR_OP);
    assert_int_equal(MPI_Reduce_local(&x, &y, -1, MPI_INT, MPI_SUM), MPI_ERR_COUNT);
    assert_int_equal(MPI_Reduce_local(&x, &y, 1, MPI_DATATYPE_NULL, MPI_SUM), MPI_ERR_TYPE);
    assert_int_equal(y, 2);
    MPI_Op op = MPI_SUM;
    assert_int_equal(MPI_Op_free(&op), MPI_ERR_OP);
}

/* A non-commutative op on 2x2 matrices (row-major ints): inout = in * inout. */
static void matmul_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int *a = in, *b = inout;

    (void)type;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        int c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                    a[2] * b[1] + a[3] * b[3]};
        memcpy(b, c, sizeof(c));
    }
}

/* A user op on a strided type: adds the first int of each element, seen through the type. */
static void strided_add_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    MPI_Aint lb, extent;
    char *a = in, *b = inout;

    MPI_Type_get_extent(*type, &lb, &extent);
    for (int k = 0; k < *len; k++) {
        ((int *)(b + k * extent))[0] += ((int *)(a + k * extent))[0];
        ((int *)(b + k * extent))[2] += ((int *)(a + k * extent))[2];
    }
}

static void test_user_ops(void **state)
{
    MPI_Op matmul, add;
    MPI_Datatype strided;
    int commute = -1;
    int a[4] = {1, 2, 3, 4}, b[4] = {0, 1, 1, 0};
    int s_in[8] = {1, -1, 2, -1, 10, -1, 20, -1}, s_io[8] = {5, 7, 6, 7, 50, 7, 60, 7};

    (void)state;
    assert_int_equal(MPI_Op_create(matmul_fn, 0, &matmul), MPI_SUCCESS);
    assert_int_equal(MPI_Op_commutative(matmul, &commute), MPI_SUCCESS);
    assert_int_equal(commute, 0);
    assert_int_equal(MPI_Op_commutative(MPI_SUM, &commute), MPI_SUCCESS);
    assert_int_equal(commute, 1);
    /* b = a * b: [[1,2],[3,4]] * [[0,1],[1,0]] = [[2,1],[4,3]] */
    MPI_Datatype mat;
    assert_int_equal(MPI_Type_contiguous(4, MPI_INT, &mat), MPI_SUCCESS);
    assert_int_equal(MPI_Type_commit(&mat), MPI_SUCCESS);
    assert_int_equal(MPI_Reduce_local(a, b, 1, mat, matmul), MPI_SUCCESS);
    assert_true(b[0] == 2 && b[1] == 1 && b[2] == 4 && b[3] == 3);
    /* Predefined ops are not defined on derived types. */
    assert_int_equal(MPI_Reduce_local(a, b, 1, mat, MPI_SUM), MPI_ERR_OP);

    /* A vector of 2 blocks of 1 int, stride 2: the user op sees the strided layout. */
    assert_int_equal(MPI_Type_vector(2, 1, 2, MPI_INT, &strided), MPI_SUCCESS);
    assert_int_equal(MPI_Type_commit(&strided), MPI_SUCCESS);
    assert_int_equal(MPI_Op_create(strided_add_fn, 1, &add), MPI_SUCCESS);
    MPI_Datatype resized;
    assert_int_equal(MPI_Type_create_resized(strided, 0, 4 * sizeof(int), &resized), MPI_SUCCESS);
    assert_int_equal(MPI_Type_commit(&resized), MPI_SUCCESS);
    assert_int_equal(MPI_Reduce_local(s_in, s_io, 2, resized, add), MPI_SUCCESS);
    assert_true(s_io[0] == 6 && s_io[2] == 8 && s_io[4] == 60 && s_io[6] == 80);
    assert_true(s_io[1] == 7 && s_io[3] == 7 && s_io[5] == 7 && s_io[7] == 7);

    assert_int_equal(MPI_Op_free(&matmul), MPI_SUCCESS);
    assert_true(matmul == MPI_OP_NULL);
    assert_int_equal(MPI_Op_free(&add), MPI_SUCCESS);
    MPI_Type_free(&mat);
    MPI_Type_free(&strided);
    MPI_Type_free(&resized);
}

/* Every collective on a one-rank communicator gives the obvious answer. */
static void test_singleton_collectives(void **state)
{
    int in[3] = {4, 5, 6}, out[3] = {0}, counts[1] = {3}, displs[1] = {0};
    MPI_Datatype types[1] = {MPI_INT};
    MPI_Request req;
    MPI_Comm comms[2] = {MPI_COMM_WORLD, MPI_COMM_SELF};

    (void)state;
    for (int c = 0; c < 2; c++) {
        MPI_Comm comm = comms[c];

        assert_int_equal(MPI_Barrier(comm), MPI_SUCCESS);
        assert_int_equal(MPI_Bcast(in, 3, MPI_INT, 0, comm), MPI_SUCCESS);
#define EXPECT_IN()                                                                                \
    do {                                                                                           \
        assert_true(out[0] == 4 && out[1] == 5 && out[2] == 6);                                    \
        memset(out, 0, sizeof(out));                                                               \
    } while (0)
        assert_int_equal(MPI_Reduce(in, out, 3, MPI_INT, MPI_SUM, 0, comm), MPI_SUCCESS);
        EXPECT_IN();
        assert_int_equal(MPI_Allreduce(in, out, 3, MPI_INT, MPI_MAX, comm), MPI_SUCCESS);
        EXPECT_IN();
        assert_int_equal(MPI_Gather(in, 3, MPI_INT, out, 3, MPI_INT, 0, comm), MPI_SUCCESS);
        EXPECT_IN();
        assert_int_equal(MPI_Gatherv(in, 3, MPI_INT, out, counts, displs, MPI_INT, 0, comm),
                         MPI_SUCCESS);
        EXPECT_IN();
        assert_int_equal(MPI_Scatter(in, 3, MPI_INT, out, 3, MPI_INT, 0, comm), MPI_SUCCESS);
        EXPECT_IN();
        assert_int_equal(MPI_Scatterv(in, counts, displs, MPI_INT, out, 3, MPI_INT, 0, comm),
                         MPI_SUCCESS);
        EXPECT_IN();
        assert_int_equal(MPI_Allgather(in, 3, MPI_INT, out, 3, MPI_INT, comm), MPI_SUCCESS);
        EXPECT_IN();
        assert_int_equal(MPI_Allgatherv(in, 3, MPI_INT, out, counts, displs, MPI_INT, comm),
                         MPI_SUCCESS);
        EXPECT_IN();
        assert_int_equal(MPI_Alltoall(in, 3, MPI_INT, out, 3, MPI_INT, comm), MPI_SUCCESS);
        EXPECT_IN();
        assert_int_equal(
            MPI_Alltoallv(in, counts, displs, MPI_INT, out, counts, displs, MPI_INT, comm),
            MPI_SUCCESS);
        EXPECT_IN();
        assert_int_equal(MPI_Alltoallw(in, counts, displs, types, out, counts, displs, types, comm),
                         MPI_SUCCESS);
        EXPECT_IN();
        assert_int_equal(MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, comm), MPI_SUCCESS);
        EXPECT_IN();
        assert_int_equal(MPI_Reduce_scatter_block(in, out, 3, MPI_INT, MPI_SUM, comm), MPI_SUCCESS);
        EXPECT_IN();
        assert_int_equal(MPI_Scan(in, out, 3, MPI_INT, MPI_SUM, comm), MPI_SUCCESS);
        EXPECT_IN();
        out[0] = 77;
        assert_int_equal(MPI_Exscan(in, out, 3, MPI_INT, MPI_SUM, comm), MPI_SUCCESS);
        assert_int_equal(out[0], 77); /* rank 0's result is undefined: left alone */
        memset(out, 0, sizeof(out));
        assert_int_equal(MPI_Iallreduce(in, out, 3, MPI_INT, MPI_SUM, comm, &req), MPI_SUCCESS);
        assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
        assert_true(req == MPI_REQUEST_NULL);
        EXPECT_IN();
        assert_int_equal(MPI_Ibarrier(comm, &req), MPI_SUCCESS);
        int flag = 0;
        while (!flag)
            assert_int_equal(MPI_Test(&req, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
        /* Freed while active: completes and goes away by itself. */
        assert_int_equal(MPI_Ibcast(in, 3, MPI_INT, 0, comm, &req), MPI_SUCCESS);
        assert_int_equal(MPI_Request_free(&req), MPI_SUCCESS);
        /* In place. */
        memcpy(out, in, sizeof(out));
        assert_int_equal(MPI_Allreduce(MPI_IN_PLACE, out, 3, MPI_INT, MPI_SUM, comm), MPI_SUCCESS);
        EXPECT_IN();
    }
}

static void test_collective_arg_errors(void **state)
{
    int in[2] = {1, 2}, out[2];
    MPI_Request req;

    (void)state;
    assert_int_equal(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
    assert_int_equal(MPI_Bcast(in, -1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    assert_int_equal(MPI_Bcast(in, 1, MPI_INT, 1, MPI_COMM_WORLD), MPI_ERR_ROOT);
    assert_int_equal(MPI_Bcast(in, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    assert_int_equal(MPI_Bcast(NULL, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    assert_int_equal(MPI_Allreduce(in, out, 2, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    assert_int_equal(MPI_Allreduce(in, out, 2, MPI_WCHAR, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
    assert_int_equal(MPI_Allreduce(in, in, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    assert_int_equal(MPI_Allreduce(in, MPI_IN_PLACE, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
                     MPI_ERR_BUFFER);
    assert_int_equal(MPI_Reduce(in, out, 2, MPI_INT, MPI_SUM, -1, MPI_COMM_WORLD), MPI_ERR_ROOT);
    assert_int_equal(MPI_Iallreduce(in, out, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, NULL),
                     MPI_ERR_ARG);
    assert_int_equal(MPI_Gatherv(in, 1, MPI_INT, out, NULL, NULL, MPI_INT, 0, MPI_COMM_WORLD),
                     MPI_ERR_ARG);
    assert_int_equal(MPI_Ibarrier(MPI_COMM_NULL, &req), MPI_ERR_COMM);
    /* On an intracommunicator a negative root is no rank, whatever its value: MPI_ROOT and
     * MPI_PROC_NULL are roots of intercommunicators only (MPI-3.1 section 5.2.3). */
    static const int bad_roots[] = {-1, MPI_PROC_NULL, MPI_ROOT, -5, 1};
    for (size_t i = 0; i < sizeof(bad_roots) / sizeof(bad_roots[0]); i++) {
        int root = bad_roots[i];

        assert_int_equal(MPI_Gather(in, 1, MPI_INT, out, 1, MPI_INT, root, MPI_COMM_WORLD),
                         MPI_ERR_ROOT);
        assert_int_equal(MPI_Scatter(in, 1, MPI_INT, out, 1, MPI_INT, root, MPI_COMM_WORLD),
                         MPI_ERR_ROOT);
        assert_int_equal(
            MPI_Igatherv(in, 1, MPI_INT, out, in, in, MPI_INT, root, MPI_COMM_WORLD, &req),
            MPI_ERR_ROOT);
        assert_int_equal(MPI_Bcast(in, 1, MPI_INT, root, MPI_COMM_WORLD), MPI_ERR_ROOT);
        assert_int_equal(MPI_Reduce(in, out, 1, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD),
                         MPI_ERR_ROOT);
    }
}

/* A one-rank communicator of coll's over a PML communicator whose owner is `owner`, with
 * context id `ctx` (one that MPI_Init's communicators, 0 and 1, do not take). */
static crmpi_coll_comm_t *coll_comm_add(uint32_t ctx, MPI_Comm owner)
{
    static const uint32_t self_world_rank[1] = {0};
    crmpi_pml_comm_params_t params = {
        .context_id = ctx,
        .rank = 0,
        .size = 1,
        .world_ranks = self_world_rank,
        .name = "test comm",
        .owner = owner,
    };
    crmpi_pml_comm_t *pml = NULL;
    crmpi_coll_comm_t *coll = NULL;

    assert_int_equal(crmpi_pml_add_comm(&params, &pml), CRMPI_OK);
    assert_int_equal(crmpi_coll_comm_create(pml, 0, 1, &coll), CRMPI_OK);
    assert_int_equal(coll->rank, 0);
    assert_int_equal(coll->size, 1);
    assert_ptr_equal(coll->pml, pml);
    return coll;
}

static void coll_comm_del(crmpi_coll_comm_t *coll)
{
    crmpi_pml_comm_t *pml = coll->pml;

    crmpi_coll_comm_destroy(coll);
    crmpi_pml_del_comm(pml);
}

/* The schedule engine on a one-rank communicator (messages to itself): rounds run in
 * order, local steps see the data received in the round before, and a message error
 * (truncation) completes the schedule with it, starting no further round. */
static void run_sched(crmpi_coll_sched_t *s)
{
    crmpi_lock();
    for (int turns = 0; turns < 100000 && !s->done; turns++) {
        crmpi_coll_sched_progress(s);
        if (!s->done)
            crmpi_pml_wait_turn();
    }
    crmpi_unlock();
}

static void test_sched_engine(void **state)
{
    static const crmpi_coll_op_t sum = {.kind = CRMPI_COLL_OP_SUM, .commutative = true};
    static const crmpi_coll_op_t minloc = {.kind = CRMPI_COLL_OP_MINLOC, .commutative = true};
    int a[4] = {1, 2, 3, 4}, b[4] = {0}, c[4] = {10, 20, 30, 40}, d[2] = {0};
    crmpi_coll_comm_t *comm;
    crmpi_coll_sched_t *s;

    (void)state;
    crmpi_lock();
    comm = coll_comm_add(5, MPI_COMM_NULL);
    s = crmpi_coll_sched_create(comm, -500);
    assert_non_null(s);
    /* round 0: a -> b by message; round 1: c = b + c, then c -> a by copy */
    assert_int_equal(crmpi_coll_sched_recv(s, b, 4, MPI_INT, 0), CRMPI_OK);
    assert_int_equal(crmpi_coll_sched_send(s, a, 4, MPI_INT, 0), CRMPI_OK);
    assert_int_equal(crmpi_coll_sched_round(s), CRMPI_OK);
    assert_int_equal(crmpi_coll_sched_round(s), CRMPI_OK); /* an empty round is dropped */
    assert_int_equal(crmpi_coll_sched_reduce(s, b, c, 4, MPI_INT, &sum), CRMPI_OK);
    assert_int_equal(crmpi_coll_sched_copy(s, c, 4, MPI_INT, a, 4, MPI_INT), CRMPI_OK);
    assert_int_equal(crmpi_coll_sched_round(s), CRMPI_OK);
    crmpi_unlock();
    run_sched(s);
    assert_true(s->done);
    assert_int_equal(s->error, 0);
    assert_true(b[0] == 1 && b[3] == 4);
    assert_true(c[0] == 11 && c[3] == 44);
    assert_true(a[0] == 11 && a[3] == 44);
    crmpi_lock();
    crmpi_coll_sched_free(s);

    /* Truncation: 4 ints into a buffer of 2; the round after it never starts. */
    s = crmpi_coll_sched_create(comm, -501);
    assert_non_null(s);
    assert_int_equal(crmpi_coll_sched_recv(s, d, 2, MPI_INT, 0), CRMPI_OK);
    assert_int_equal(crmpi_coll_sched_send(s, a, 4, MPI_INT, 0), CRMPI_OK);
    assert_int_equal(crmpi_coll_sched_round(s), CRMPI_OK);
    assert_int_equal(crmpi_coll_sched_copy(s, c, 4, MPI_INT, b, 4, MPI_INT), CRMPI_OK);
    b[0] = -1;
    crmpi_unlock();
    run_sched(s);
    assert_true(s->done);
    assert_int_equal(s->error, MPI_ERR_TRUNCATE);
    assert_int_equal(b[0], -1);
    crmpi_lock();
    crmpi_coll_sched_free(s);
    /* A predefined op on a type it is not defined on fails the reduce step: MPI_ERR_OP. */
    s = crmpi_coll_sched_create(comm, -502);
    assert_int_equal(crmpi_coll_sched_reduce(s, a, b, 4, MPI_INT, &minloc), CRMPI_OK);
    crmpi_unlock();
    run_sched(s);
    assert_int_equal(s->error, MPI_ERR_OP);
    crmpi_lock();
    crmpi_coll_sched_free(s);
    coll_comm_del(comm);
    crmpi_unlock();
}

/* The owners the PML's idle function was called with. */
static MPI_Comm idle_owners[4];
static int idle_calls;

static void record_idle(MPI_Comm owner)
{
    assert_true(idle_calls < 4);
    idle_owners[idle_calls++] = owner;
}

/* A non-blocking collective's request carries the owner of its communicator, and keeps
 * the communicator from going until it is freed, even once its schedule has run: a
 * released communicator is idle only then. The MPI layer's idle function stays replaced
 * afterwards: this test runs last. */
static void test_nonblocking_request_keeps_comm(void **state)
{
    static char marker; /* stands for an MPI communicator: only its address is used */
    MPI_Comm owner = (MPI_Comm)(void *)&marker;
    crmpi_coll_args_t args = {0};
    crmpi_coll_comm_t *comm;
    crmpi_request_t *req;

    (void)state;
    crmpi_lock();
    crmpi_pml_set_comm_idle_fn(record_idle);
    comm = coll_comm_add(6, owner);
    assert_int_equal(crmpi_coll_start(comm, CRMPI_COLL_BARRIER, &args, &req), CRMPI_OK);
    assert_int_equal(req->kind, CRMPI_REQUEST_COLL);
    assert_ptr_equal(req->owner, owner);
    crmpi_pml_wait(req);
    assert_false(crmpi_pml_comm_release(comm->pml));
    assert_int_equal(idle_calls, 0);
    assert_int_equal(crmpi_pml_request_finish(req, NULL), MPI_SUCCESS);
    assert_int_equal(idle_calls, 1);
    assert_ptr_equal(idle_owners[0], owner);
    assert_true(crmpi_pml_comm_release(comm->pml));
    coll_comm_del(comm);
    crmpi_pml_set_comm_idle_fn(NULL);
    crmpi_unlock();
}

/*
 * Persistent collectives in a singleton (coll_base.c: crmpi_coll_init/restart through
 * MPI_..._init and MPI_Start): inactive until started, complete after each start, reusable,
 * freed inactive or while a start runs; MPI_Wait on an inactive one returns at once.
 */
static void test_persistent_singleton(void **state)
{
    int in[3] = {1, 2, 3}, out[3] = {0};
    MPI_Request req;
    MPI_Status status;
    int flag;

    (void)state;
    assert_int_equal(
        MPI_Allreduce_init(in, out, 3, MPI_INT, MPI_SUM, MPI_COMM_SELF, MPI_INFO_NULL, &req),
        MPI_SUCCESS);
    /* Inactive: Wait and Test say done with an empty status; nothing moved. */
    assert_int_equal(MPI_Wait(&req, &status), MPI_SUCCESS);
    assert_true(req != MPI_REQUEST_NULL);
    assert_int_equal(out[0], 0);
    for (int round = 1; round <= 3; round++) {
        in[0] = round * 10;
        assert_int_equal(MPI_Start(&req), MPI_SUCCESS);
        /* Started twice without completion is an error. */
        assert_int_equal(MPI_Start(&req), MPI_ERR_REQUEST);
        flag = 0;
        while (!flag)
            assert_int_equal(MPI_Test(&req, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
        assert_true(req != MPI_REQUEST_NULL);
        assert_int_equal(out[0], round * 10);
        assert_int_equal(out[2], 3);
    }
    assert_int_equal(MPI_Request_free(&req), MPI_SUCCESS);
    assert_ptr_equal(req, MPI_REQUEST_NULL);

    /* Freed while a start runs: it completes, then goes. */
    assert_int_equal(MPI_Barrier_init(MPI_COMM_SELF, MPI_INFO_NULL, &req), MPI_SUCCESS);
    assert_int_equal(MPI_Start(&req), MPI_SUCCESS);
    assert_int_equal(MPI_Request_free(&req), MPI_SUCCESS);
    assert_int_equal(MPI_Barrier(MPI_COMM_SELF), MPI_SUCCESS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_signed_integers),
        cmocka_unit_test(test_unsigned_integers),
        cmocka_unit_test(test_floating),
        cmocka_unit_test(test_multi_language),
        cmocka_unit_test(test_complex),
        cmocka_unit_test(test_logical_and_byte),
        cmocka_unit_test(test_loc_pairs),
        cmocka_unit_test(test_loc_pairs_write_no_padding),
        cmocka_unit_test(test_bad_ops),
        cmocka_unit_test(test_user_ops),
        cmocka_unit_test(test_singleton_collectives),
        cmocka_unit_test(test_collective_arg_errors),
        cmocka_unit_test(test_sched_engine),
        cmocka_unit_test(test_persistent_singleton),
        cmocka_unit_test(test_nonblocking_request_keeps_comm),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
