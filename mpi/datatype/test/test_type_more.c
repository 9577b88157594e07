/*
 * test_type_more.c: the datatype calls beyond MPI-3.1's core constructors, in a singleton:
 * external32 packing (every kind of basic value against its big-endian bytes written out
 * by hand, the standard's sizes, round trips, MPI_LONG's range), MPI_Type_create_darray
 * against layouts computed by hand (block, cyclic, cyclic(k), none, C and Fortran order,
 * a process holding nothing) and its get_contents record, MPI_Type_match_size and the
 * Fortran types, datatype attributes (copy and delete callbacks, MPI_TYPE_DUP_FN,
 * keyvals), and the MPI-1 names (MPI_Type_struct with MPI_LB/MPI_UB, Type_extent/lb/ub,
 * Address, Errhandler_create/set/get).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"
#include "test_capture.h"

static int group_setup(void **state)
{
    (void)state;
    unsetenv("CRMPI_CTL_FD");
    setenv("CRMPI_PARAM_FILE", "", 1);
    test_env_clear_mca();
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        return -1;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    return MPI_Finalize() == MPI_SUCCESS ? 0 : -1;
}

/* Pack `count` of `type` at buf in external32; the bytes must be `want` (nbytes). */
static void expect_external(const void *buf, int count, MPI_Datatype type,
                            const unsigned char *want, size_t nbytes)
{
    unsigned char out[256];
    MPI_Aint position = 0;
    MPI_Aint size = -1;

    assert_true(nbytes <= sizeof(out));
    memset(out, 0xee, sizeof(out));
    assert_int_equal(MPI_Pack_external_size("external32", count, type, &size), MPI_SUCCESS);
    assert_int_equal(size, (MPI_Aint)nbytes);
    assert_int_equal(MPI_Pack_external("external32", buf, count, type, out, sizeof(out), &position),
                     MPI_SUCCESS);
    assert_int_equal(position, (MPI_Aint)nbytes);
    assert_memory_equal(out, want, nbytes);
    assert_int_equal(out[nbytes], 0xee);
}

static void test_external32_basic_values(void **state)
{
    (void)state;
    int ints[2] = {0x01020304, -2};
    static const unsigned char ints_want[] = {1, 2, 3, 4, 0xff, 0xff, 0xff, 0xfe};
    expect_external(ints, 2, MPI_INT, ints_want, sizeof(ints_want));

    short s = 0x0102;
    static const unsigned char short_want[] = {1, 2};
    expect_external(&s, 1, MPI_SHORT, short_want, sizeof(short_want));

    /* MPI_LONG is 4 bytes in external32 (MPI-3.1 table 13.2). */
    long l = -3;
    static const unsigned char long_want[] = {0xff, 0xff, 0xff, 0xfd};
    expect_external(&l, 1, MPI_LONG, long_want, sizeof(long_want));
    unsigned long ul = 0x80000001UL;
    static const unsigned char ulong_want[] = {0x80, 0, 0, 1};
    expect_external(&ul, 1, MPI_UNSIGNED_LONG, ulong_want, sizeof(ulong_want));

    long long ll = 0x0102030405060708LL;
    static const unsigned char ll_want[] = {1, 2, 3, 4, 5, 6, 7, 8};
    expect_external(&ll, 1, MPI_LONG_LONG, ll_want, sizeof(ll_want));

    /* 1.5 in binary32 and binary64. */
    float f = 1.5f;
    static const unsigned char float_want[] = {0x3f, 0xc0, 0, 0};
    expect_external(&f, 1, MPI_FLOAT, float_want, sizeof(float_want));
    double d = 1.5;
    static const unsigned char double_want[] = {0x3f, 0xf8, 0, 0, 0, 0, 0, 0};
    expect_external(&d, 1, MPI_DOUBLE, double_want, sizeof(double_want));

    /* long double: IEEE binary128, 16 bytes: -1.5 is sign 1, exponent 0x3fff, fraction .1 */
    long double ld = -1.5L;
    static const unsigned char ld_want[16] = {0xbf, 0xff, 0x80};
    expect_external(&ld, 1, MPI_LONG_DOUBLE, ld_want, sizeof(ld_want));

    /* A complex is two floats, each big-endian. */
    float cf[2] = {1.5f, -2.0f};
    static const unsigned char cf_want[] = {0x3f, 0xc0, 0, 0, 0xc0, 0, 0, 0};
    expect_external(cf, 1, MPI_C_FLOAT_COMPLEX, cf_want, sizeof(cf_want));

    /* Bytes and chars are themselves. */
    char chars[3] = {'a', 'b', 'c'};
    expect_external(chars, 3, MPI_CHAR, (const unsigned char *)"abc", 3);

    /* Fortran INTEGER and the pair types: data only, no padding. */
    int32_t integer = 7;
    static const unsigned char integer_want[] = {0, 0, 0, 7};
    expect_external(&integer, 1, MPI_INTEGER, integer_want, sizeof(integer_want));
    struct {
        double value;
        int index;
    } di = {1.5, 9};
    static const unsigned char di_want[] = {0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9};
    expect_external(&di, 1, MPI_DOUBLE_INT, di_want, sizeof(di_want));
}

/* The sizes of table 13.2, whatever the native ones. */
static void test_external32_sizes(void **state)
{
    static const struct {
        MPI_Datatype type;
        MPI_Aint size;
    } cases[] = {
        {MPI_CHAR, 1},
        {MPI_WCHAR, 4},
        {MPI_SHORT, 2},
        {MPI_INT, 4},
        {MPI_LONG, 4},
        {MPI_UNSIGNED_LONG, 4},
        {MPI_LONG_LONG, 8},
        {MPI_FLOAT, 4},
        {MPI_DOUBLE, 8},
        {MPI_LONG_DOUBLE, 16},
        {MPI_C_BOOL, 1},
        {MPI_INT64_T, 8},
        {MPI_AINT, 8},
        {MPI_OFFSET, 8},
        {MPI_COUNT, 8},
        {MPI_C_COMPLEX, 8},
        {MPI_C_DOUBLE_COMPLEX, 16},
        {MPI_C_LONG_DOUBLE_COMPLEX, 32},
        {MPI_FLOAT_INT, 8},
        {MPI_DOUBLE_INT, 12},
        {MPI_LONG_INT, 8},
        {MPI_SHORT_INT, 6},
        {MPI_2INT, 8},
        {MPI_LONG_DOUBLE_INT, 20},
        {MPI_INTEGER, 4},
        {MPI_REAL, 4},
        {MPI_DOUBLE_PRECISION, 8},
        {MPI_LOGICAL, 4},
        {MPI_CHARACTER, 1},
        {MPI_COMPLEX, 8},
        {MPI_DOUBLE_COMPLEX, 16},
        {MPI_INTEGER8, 8},
        {MPI_2REAL, 8},
        {MPI_BYTE, 1},
        {MPI_PACKED, 1},
    };
    (void)state;
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        MPI_Aint size = -1;

        assert_int_equal(MPI_Pack_external_size("external32", 3, cases[c].type, &size),
                         MPI_SUCCESS);
        assert_int_equal(size, 3 * cases[c].size);
    }
}

/* A struct with padding and a long: packed dense, and unpacked back into the struct. */
static void test_external32_struct_round_trip(void **state)
{
    struct record {
        char tag;
        double value;
        long id;
        long double big;
    } in[2] = {{'x', 2.25, -7, 3.0L}, {'y', -0.5, 1L << 30, -1e300L}}, out[2];
    int blocklengths[4] = {1, 1, 1, 1};
    MPI_Aint displs[4] = {offsetof(struct record, tag), offsetof(struct record, value),
                          offsetof(struct record, id), offsetof(struct record, big)};
    MPI_Datatype types[4] = {MPI_CHAR, MPI_DOUBLE, MPI_LONG, MPI_LONG_DOUBLE};
    MPI_Datatype type;
    unsigned char packed[128];
    MPI_Aint position = 3, size;

    (void)state;
    assert_int_equal(MPI_Type_create_struct(4, blocklengths, displs, types, &type), MPI_SUCCESS);
    assert_int_equal(MPI_Type_commit(&type), MPI_SUCCESS);
    assert_int_equal(MPI_Pack_external_size("external32", 2, type, &size), MPI_SUCCESS);
    assert_int_equal(size, 2 * (1 + 8 + 4 + 16));
    assert_int_equal(
        MPI_Pack_external("external32", in, 2, type, packed, sizeof(packed), &position),
        MPI_SUCCESS);
    assert_int_equal(position, 3 + size);
    /* The second record's tag follows the first's 29 bytes; its id is 2^30, big-endian. */
    assert_int_equal(packed[3 + 29], 'y');
    static const unsigned char id_want[] = {0x40, 0, 0, 0};
    assert_memory_equal(packed + 3 + 29 + 1 + 8, id_want, 4);
    memset(out, 0, sizeof(out));
    position = 3;
    assert_int_equal(
        MPI_Unpack_external("external32", packed, sizeof(packed), &position, out, 2, type),
        MPI_SUCCESS);
    assert_int_equal(position, 3 + size);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(out[i].tag, in[i].tag);
        assert_true(out[i].value == in[i].value);
        assert_int_equal(out[i].id, in[i].id);
        assert_true(out[i].big == in[i].big);
    }
    MPI_Type_free(&type);
}

static void test_external32_errors(void **state)
{
    long too_big = 1L << 40;
    int value = 1;
    unsigned char packed[16];
    MPI_Aint position = 0, size;

    (void)state;
    /* A long beyond 32 bits has no external32 form. */
    assert_int_equal(
        MPI_Pack_external("external32", &too_big, 1, MPI_LONG, packed, sizeof(packed), &position),
        MPI_ERR_CONVERSION);
    assert_int_equal(position, 0);
    /* Another representation, a buffer too small, a negative count. */
    assert_int_equal(
        MPI_Pack_external("native", &value, 1, MPI_INT, packed, sizeof(packed), &position),
        MPI_ERR_ARG);
    assert_int_equal(MPI_Pack_external_size("internal", 1, MPI_INT, &size), MPI_ERR_ARG);
    position = 14;
    assert_int_equal(
        MPI_Pack_external("external32", &value, 1, MPI_INT, packed, sizeof(packed), &position),
        MPI_ERR_TRUNCATE);
    assert_int_equal(position, 14);
    assert_int_equal(MPI_Unpack_external("external32", packed, 16, &position, &value, 1, MPI_INT),
                     MPI_ERR_TRUNCATE);
    assert_int_equal(
        MPI_Pack_external("external32", &value, -1, MPI_INT, packed, sizeof(packed), &position),
        MPI_ERR_COUNT);
}

/* The elements of `type` as ints: pack the array a[i] = i and read the packed ints. */
static int darray_elements(MPI_Datatype type, int *out, int max)
{
    int array[1024];
    int packed_size, position = 0, size;

    for (int i = 0; i < 1024; i++) {
        array[i] = i;
    }
    assert_int_equal(MPI_Type_commit(&type), MPI_SUCCESS);
    MPI_Type_size(type, &size);
    assert_true(size / 4 <= max);
    MPI_Pack_size(1, type, MPI_COMM_WORLD, &packed_size);
    assert_int_equal(MPI_Pack(array, 1, type, out, max * 4, &position, MPI_COMM_WORLD),
                     MPI_SUCCESS);
    return size / 4;
}

/* MPI_Type_create_darray of ints, checked against the global indices written out by hand. */
static void expect_darray(int size, int rank, int ndims, const int gsizes[], const int distribs[],
                          const int dargs[], const int psizes[], int order, const int *want,
                          int num_want)
{
    MPI_Datatype type;
    MPI_Aint lb, extent;
    int got[1024];
    int n, total = 1;

    assert_int_equal(MPI_Type_create_darray(size, rank, ndims, gsizes, distribs, dargs, psizes,
                                            order, MPI_INT, &type),
                     MPI_SUCCESS);
    for (int d = 0; d < ndims; d++) {
        total *= gsizes[d];
    }
    MPI_Type_get_extent(type, &lb, &extent);
    assert_int_equal(lb, 0);
    assert_int_equal(extent, total * (MPI_Aint)sizeof(int));
    n = darray_elements(type, got, 1024);
    assert_int_equal(n, num_want);
    for (int i = 0; i < n; i++) {
        if (got[i] != want[i]) {
            fail_msg("darray rank %d element %d: global index %d, expected %d", rank, i, got[i],
                     want[i]);
        }
    }
    MPI_Type_free(&type);
}

static void test_darray_layouts(void **state)
{
    (void)state;
    /* 1-d, 10 elements over 3 processes. BLOCK: blocks of 4 (ceil 10/3): 0-3, 4-7, 8-9. */
    {
        int gsizes[] = {10}, distribs[] = {MPI_DISTRIBUTE_BLOCK};
        int dargs[] = {MPI_DISTRIBUTE_DFLT_DARG}, psizes[] = {3};
        static const int r2[] = {8, 9};
        static const int r1[] = {4, 5, 6, 7};
        expect_darray(3, 2, 1, gsizes, distribs, dargs, psizes, MPI_ORDER_C, r2, 2);
        expect_darray(3, 1, 1, gsizes, distribs, dargs, psizes, MPI_ORDER_C, r1, 4);
    }
    /* CYCLIC (default 1): rank 1 of 3 holds 1, 4, 7. CYCLIC(2): 2, 3, 8, 9. */
    {
        int gsizes[] = {10}, distribs[] = {MPI_DISTRIBUTE_CYCLIC}, psizes[] = {3};
        int dflt[] = {MPI_DISTRIBUTE_DFLT_DARG}, two[] = {2};
        static const int c1[] = {1, 4, 7};
        static const int c2[] = {2, 3, 8, 9};
        expect_darray(3, 1, 1, gsizes, distribs, dflt, psizes, MPI_ORDER_C, c1, 3);
        expect_darray(3, 1, 1, gsizes, distribs, two, psizes, MPI_ORDER_C, c2, 4);
    }
    /* BLOCK with darg 5 over 3 processes of 10 elements: the third holds nothing. */
    {
        int gsizes[] = {10}, distribs[] = {MPI_DISTRIBUTE_BLOCK}, dargs[] = {5}, psizes[] = {3};
        expect_darray(3, 2, 1, gsizes, distribs, dargs, psizes, MPI_ORDER_C, NULL, 0);
    }
    /* 2-d 4 x 6 array in C order (element (i, j) is i * 6 + j) on a 2 x 3 grid, rank 4 is
     * grid (1, 1). BLOCK x BLOCK: rows 2-3, columns 2-3. */
    {
        int gsizes[] = {4, 6}, distribs[] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
        int dargs[] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, psizes[] = {2, 3};
        static const int want[] = {14, 15, 20, 21};
        expect_darray(6, 4, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C, want, 4);
    }
    /* CYCLIC x CYCLIC(2) on the same grid, rank 4 = (1, 1): rows 1, 3; columns 2, 3. */
    {
        int gsizes[] = {4, 6}, distribs[] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC};
        int dargs[] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, psizes[] = {2, 3};
        static const int want[] = {8, 9, 20, 21};
        expect_darray(6, 4, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C, want, 4);
    }
    /* Fortran order: element (i, j) of a 4 x 6 array is at i + 4 * j, the first index
     * varies fastest. Same grid, rank 5 = (1, 2), BLOCK x NONE impossible (psize 3), so
     * NONE x BLOCK on a 1 x 3 grid, rank 2 = (0, 2): all rows, columns 4-5. */
    {
        int gsizes[] = {4, 6}, distribs[] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK};
        int dargs[] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, psizes[] = {1, 3};
        static const int want[] = {16, 17, 18, 19, 20, 21, 22, 23};
        expect_darray(3, 2, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_FORTRAN, want, 8);
    }
    /* Fortran order, CYCLIC x BLOCK on a 2 x 3 grid, rank 5 = (1, 2): rows 1, 3 (cyclic),
     * columns 4-5; the row index varies fastest: (1,4) (3,4) (1,5) (3,5). */
    {
        int gsizes[] = {4, 6}, distribs[] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK};
        int dargs[] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, psizes[] = {2, 3};
        static const int want[] = {17, 19, 21, 23};
        expect_darray(6, 5, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_FORTRAN, want, 4);
    }
    /* 3-d 2 x 3 x 4 in C order on a 1 x 1 x 2 grid, BLOCK: rank 1 holds k = 2, 3. */
    {
        int gsizes[] = {2, 3, 4};
        int distribs[] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
        int dargs[] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG,
                       MPI_DISTRIBUTE_DFLT_DARG};
        int psizes[] = {1, 1, 2};
        static const int want[] = {2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23};
        expect_darray(2, 1, 3, gsizes, distribs, dargs, psizes, MPI_ORDER_C, want, 12);
    }
}

static void test_darray_contents_and_errors(void **state)
{
    int gsizes[] = {4, 6}, distribs[] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK};
    int dargs[] = {2, MPI_DISTRIBUTE_DFLT_DARG}, psizes[] = {2, 3};
    int ints[12], ni, na, nd, combiner;
    MPI_Aint addrs[1];
    MPI_Datatype type, types[1];

    (void)state;
    assert_int_equal(MPI_Type_create_darray(6, 3, 2, gsizes, distribs, dargs, psizes,
                                            MPI_ORDER_FORTRAN, MPI_DOUBLE, &type),
                     MPI_SUCCESS);
    assert_int_equal(MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner), MPI_SUCCESS);
    assert_int_equal(combiner, MPI_COMBINER_DARRAY);
    assert_int_equal(ni, 4 * 2 + 4);
    assert_int_equal(na, 0);
    assert_int_equal(nd, 1);
    assert_int_equal(MPI_Type_get_contents(type, ni, na, nd, ints, addrs, types), MPI_SUCCESS);
    static const int want[] = {6,
                               3,
                               2,
                               4,
                               6,
                               MPI_DISTRIBUTE_CYCLIC,
                               MPI_DISTRIBUTE_BLOCK,
                               2,
                               MPI_DISTRIBUTE_DFLT_DARG,
                               2,
                               3,
                               MPI_ORDER_FORTRAN};
    assert_memory_equal(ints, want, sizeof(want));
    assert_ptr_equal(types[0], MPI_DOUBLE);
    MPI_Type_free(&type);

    /* Errors: a grid of another size, NONE over several processes, blocks too small. */
    int five[] = {2, 2};
    assert_int_equal(
        MPI_Type_create_darray(6, 0, 2, gsizes, distribs, dargs, five, MPI_ORDER_C, MPI_INT, &type),
        MPI_ERR_ARG);
    int none[] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK};
    assert_int_equal(
        MPI_Type_create_darray(6, 0, 2, gsizes, none, dargs, psizes, MPI_ORDER_C, MPI_INT, &type),
        MPI_ERR_ARG);
    int small[] = {1, 1}, block[] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
    assert_int_equal(
        MPI_Type_create_darray(6, 0, 2, gsizes, block, small, psizes, MPI_ORDER_C, MPI_INT, &type),
        MPI_ERR_ARG);
    assert_int_equal(MPI_Type_create_darray(6, 6, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C,
                                            MPI_INT, &type),
                     MPI_ERR_ARG);
}

static void test_fortran_types_and_match_size(void **state)
{
    static const struct {
        MPI_Datatype type;
        int size;
    } sizes[] = {
        {MPI_INTEGER, 4},
        {MPI_REAL, 4},
        {MPI_DOUBLE_PRECISION, 8},
        {MPI_COMPLEX, 8},
        {MPI_DOUBLE_COMPLEX, 16},
        {MPI_LOGICAL, 4},
        {MPI_CHARACTER, 1},
        {MPI_INTEGER1, 1},
        {MPI_INTEGER2, 2},
        {MPI_INTEGER4, 4},
        {MPI_INTEGER8, 8},
        {MPI_REAL4, 4},
        {MPI_REAL8, 8},
        {MPI_COMPLEX8, 8},
        {MPI_COMPLEX16, 16},
        {MPI_2INTEGER, 8},
        {MPI_2REAL, 8},
        {MPI_2DOUBLE_PRECISION, 16},
    };
    MPI_Datatype type;
    int size;
    char name[MPI_MAX_OBJECT_NAME];
    int len;

    (void)state;
    for (size_t c = 0; c < sizeof(sizes) / sizeof(sizes[0]); c++) {
        assert_int_equal(MPI_Type_size(sizes[c].type, &size), MPI_SUCCESS);
        assert_int_equal(size, sizes[c].size);
    }
    MPI_Type_get_name(MPI_DOUBLE_PRECISION, name, &len);
    assert_string_equal(name, "MPI_DOUBLE_PRECISION");
    assert_int_equal(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &type), MPI_SUCCESS);
    assert_ptr_equal(type, MPI_REAL8);
    assert_int_equal(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 2, &type), MPI_SUCCESS);
    assert_ptr_equal(type, MPI_INTEGER2);
    assert_int_equal(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &type), MPI_SUCCESS);
    assert_ptr_equal(type, MPI_COMPLEX16);
    /* C's long double and its complex: MPI-3.1 section 17.2.5 asks for a type "matching a
     * local variable of type (typeclass, size)", which for REAL of sizeof(long double)
     * bytes is MPI_LONG_DOUBLE (crmpi has no MPI_REAL16); this was MPI_ERR_ARG. */
    assert_int_equal(MPI_Type_match_size(MPI_TYPECLASS_REAL, (int)sizeof(long double), &type),
                     MPI_SUCCESS);
    assert_ptr_equal(type, MPI_LONG_DOUBLE);
    assert_int_equal(
        MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, (int)(2 * sizeof(long double)), &type),
        MPI_SUCCESS);
    assert_ptr_equal(type, MPI_C_LONG_DOUBLE_COMPLEX);
    assert_int_equal(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &type), MPI_ERR_ARG);
    assert_int_equal(MPI_Type_match_size(99, 4, &type), MPI_ERR_ARG);

    /* The reductions of their classes (MPI-3.1 section 5.9.2). */
    int32_t a[2] = {3, 5}, b[2] = {4, 1};
    assert_int_equal(MPI_Reduce_local(a, b, 2, MPI_INTEGER, MPI_SUM), MPI_SUCCESS);
    assert_true(b[0] == 7 && b[1] == 6);
    assert_int_equal(MPI_Reduce_local(a, b, 2, MPI_INTEGER, MPI_LAND), MPI_ERR_OP);
    int32_t t[2] = {1, 0}, u[2] = {1, 1};
    assert_int_equal(MPI_Reduce_local(t, u, 2, MPI_LOGICAL, MPI_LAND), MPI_SUCCESS);
    assert_true(u[0] == 1 && u[1] == 0);
    float rin[2] = {2.0f, 7.0f}, rio[2] = {5.0f, 1.0f}; /* one (value, index) pair of REALs */
    assert_int_equal(MPI_Reduce_local(rin, rio, 1, MPI_2REAL, MPI_MINLOC), MPI_SUCCESS);
    assert_true(rio[0] == 2.0f && rio[1] == 7.0f);
    double din = 1.5, dio = 2.5;
    assert_int_equal(MPI_Reduce_local(&din, &dio, 1, MPI_DOUBLE_PRECISION, MPI_MAX), MPI_SUCCESS);
    assert_true(dio == 2.5);
}

/* Attribute callbacks that count what they were called with. */
static int copies_made, deletes_done, delete_fail;

static int count_copy(MPI_Datatype oldtype, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)oldtype, (void)keyval, (void)extra;
    copies_made++;
    *(void **)out = (char *)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Datatype type, int keyval, void *value, void *extra)
{
    (void)type, (void)keyval, (void)value;
    deletes_done += *(int *)extra;
    return delete_fail ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static void test_type_attributes(void **state)
{
    static char base[4];
    int weight = 1;
    int counted, dupped, plain, comm_keyval, flag;
    MPI_Datatype type, dup;
    void *value;

    (void)state;
    copies_made = deletes_done = delete_fail = 0;
    assert_int_equal(MPI_Type_create_keyval(count_copy, count_delete, &counted, &weight),
                     MPI_SUCCESS);
    assert_int_equal(
        MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &dupped, NULL),
        MPI_SUCCESS);
    assert_int_equal(
        MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &plain, NULL),
        MPI_SUCCESS);
    MPI_Type_contiguous(2, MPI_INT, &type);
    assert_int_equal(MPI_Type_set_attr(type, counted, base), MPI_SUCCESS);
    assert_int_equal(MPI_Type_set_attr(type, dupped, base + 2), MPI_SUCCESS);
    assert_int_equal(MPI_Type_set_attr(type, plain, base + 3), MPI_SUCCESS);
    /* Replacing a value deletes the old one. */
    assert_int_equal(MPI_Type_set_attr(type, counted, base), MPI_SUCCESS);
    assert_int_equal(deletes_done, 1);
    assert_int_equal(MPI_Type_get_attr(type, counted, &value, &flag), MPI_SUCCESS);
    assert_true(flag && value == base);

    /* Type_dup: counted through its callback, dupped as is, plain not at all. */
    assert_int_equal(MPI_Type_dup(type, &dup), MPI_SUCCESS);
    assert_int_equal(copies_made, 1);
    MPI_Type_get_attr(dup, counted, &value, &flag);
    assert_true(flag && value == base + 1);
    MPI_Type_get_attr(dup, dupped, &value, &flag);
    assert_true(flag && value == base + 2);
    MPI_Type_get_attr(dup, plain, &value, &flag);
    assert_false(flag);

    /* Type_free deletes; a failing delete callback makes it fail and the type stays. */
    delete_fail = 1;
    assert_int_equal(MPI_Type_free(&dup), MPI_ERR_OTHER);
    assert_true(dup != MPI_DATATYPE_NULL);
    delete_fail = 0;
    assert_int_equal(MPI_Type_free(&dup), MPI_SUCCESS);
    assert_int_equal(deletes_done, 3);
    assert_int_equal(MPI_Type_delete_attr(type, counted), MPI_SUCCESS);
    assert_int_equal(deletes_done, 4);
    assert_int_equal(MPI_Type_delete_attr(type, counted), MPI_ERR_KEYVAL);

    /* Predefined types take attributes too. */
    assert_int_equal(MPI_Type_set_attr(MPI_INT, plain, base), MPI_SUCCESS);
    assert_int_equal(MPI_Type_get_attr(MPI_INT, plain, &value, &flag), MPI_SUCCESS);
    assert_true(flag && value == base);
    assert_int_equal(MPI_Type_delete_attr(MPI_INT, plain), MPI_SUCCESS);

    /* A freed keyval lives on in the attributes that use it; its handle is gone. */
    int kept = dupped;
    assert_int_equal(MPI_Type_free_keyval(&dupped), MPI_SUCCESS);
    assert_int_equal(dupped, MPI_KEYVAL_INVALID);
    assert_int_equal(MPI_Type_get_attr(type, kept, &value, &flag), MPI_SUCCESS);
    assert_true(flag);
    assert_int_equal(MPI_Type_free_keyval(&kept), MPI_ERR_KEYVAL);

    /* A communicator's keyval is not a datatype's. */
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &comm_keyval, NULL);
    assert_int_equal(MPI_Type_set_attr(type, comm_keyval, base), MPI_ERR_KEYVAL);
    MPI_Comm_free_keyval(&comm_keyval);
    assert_int_equal(MPI_Type_free(&type), MPI_SUCCESS);
    assert_int_equal(MPI_Type_free_keyval(&counted), MPI_SUCCESS);
    assert_int_equal(MPI_Type_free_keyval(&plain), MPI_SUCCESS);
}

/* MPI_Type_struct with MPI_LB and MPI_UB, and the MPI-1 bound queries. */
static void test_mpi1_names_and_markers(void **state)
{
    int blocklengths[3] = {1, 2, 1};
    MPI_Aint displs[3] = {-8, 0, 24};
    MPI_Datatype types[3] = {MPI_LB, MPI_INT, MPI_UB};
    MPI_Datatype type, hv, hi, lb_only;
    MPI_Aint extent, lb, ub, address;
    int size;

    (void)state;
    assert_int_equal(MPI_Type_struct(3, blocklengths, displs, types, &type), MPI_SUCCESS);
    MPI_Type_extent(type, &extent);
    MPI_Type_lb(type, &lb);
    MPI_Type_ub(type, &ub);
    MPI_Type_size(type, &size);
    assert_int_equal(lb, -8);
    assert_int_equal(ub, 24);
    assert_int_equal(extent, 32);
    assert_int_equal(size, 8);

    /* An lb marker alone: ub is the data's end. */
    assert_int_equal(MPI_Type_struct(2, blocklengths, displs, types, &lb_only), MPI_SUCCESS);
    MPI_Type_lb(lb_only, &lb);
    MPI_Type_ub(lb_only, &ub);
    assert_int_equal(lb, -8);
    assert_int_equal(ub, 8);
    MPI_Type_free(&lb_only);

    /* The markers carry no data and have no extent. */
    MPI_Type_size(MPI_LB, &size);
    MPI_Type_extent(MPI_UB, &extent);
    assert_int_equal(size, 0);
    assert_int_equal(extent, 0);

    /* hvector and hindexed under their MPI-1 names: copies at byte strides. */
    assert_int_equal(MPI_Type_hvector(2, 1, 40, type, &hv), MPI_SUCCESS);
    MPI_Type_extent(hv, &extent);
    assert_int_equal(extent, 40 + 32);
    int hblocks[2] = {1, 1};
    MPI_Aint hdispls[2] = {96, 0};
    assert_int_equal(MPI_Type_hindexed(2, hblocks, hdispls, MPI_DOUBLE, &hi), MPI_SUCCESS);
    MPI_Type_lb(hi, &lb);
    MPI_Type_ub(hi, &ub);
    assert_int_equal(lb, 0);
    assert_int_equal(ub, 104);
    MPI_Type_free(&hv);
    MPI_Type_free(&hi);
    MPI_Type_free(&type);

    assert_int_equal(MPI_Address(&address, &address), MPI_SUCCESS);
    assert_true(address != 0);
    assert_int_equal(MPI_Type_extent(MPI_DATATYPE_NULL, &extent), MPI_ERR_TYPE);
}

static int handler_calls;

static void count_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm, (void)code;
    handler_calls++;
}

static void test_mpi1_errhandlers(void **state)
{
    MPI_Errhandler handler, got;
    MPI_Comm dup;

    (void)state;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    assert_int_equal(MPI_Errhandler_create(count_handler, &handler), MPI_SUCCESS);
    assert_int_equal(MPI_Errhandler_set(dup, handler), MPI_SUCCESS);
    assert_int_equal(MPI_Errhandler_get(dup, &got), MPI_SUCCESS);
    assert_ptr_equal(got, handler);
    MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER);
    assert_int_equal(handler_calls, 1);
    MPI_Errhandler_free(&got);
    MPI_Errhandler_free(&handler);
    MPI_Comm_free(&dup);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_external32_basic_values),
        cmocka_unit_test(test_external32_sizes),
        cmocka_unit_test(test_external32_struct_round_trip),
        cmocka_unit_test(test_external32_errors),
        cmocka_unit_test(test_darray_layouts),
        cmocka_unit_test(test_darray_contents_and_errors),
        cmocka_unit_test(test_fortran_types_and_match_size),
        cmocka_unit_test(test_type_attributes),
        cmocka_unit_test(test_mpi1_names_and_markers),
        cmocka_unit_test(test_mpi1_errhandlers),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
