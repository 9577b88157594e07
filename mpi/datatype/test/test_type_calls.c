/*
 * test_type_calls.c: the MPI datatype calls in a singleton: sizes, bounds and true bounds
 * of every constructor (struct padding, resized markers, subarrays in C and Fortran order,
 * negative strides, out-of-order and overlapping displacements), MPI_Pack's stream of each
 * against a layout written out by hand, MPI_Unpack leaving every gap untouched, the
 * predefined types, MPI_Get_elements and MPI_Status_set_elements, and the error classes
 * under MPI_ERRORS_RETURN. The engine beneath (datatype/) has its own test, without MPI.
 *
 * Expected values come from MPI-3.1 chapter 4; where the standard leaves a choice, the
 * comment says which one crmpi makes (Open MPI 4.1 gives the same answers unless noted).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"
#include "test_capture.h"

/* Test memory: displacements are relative to the middle, so negative ones have room. */
#define MEMORY_BYTES 16384
#define ORIGIN       (MEMORY_BYTES / 2)
/* What unpacking must leave in every byte that is not data of the type. */
#define GAP_BYTE 0xA5

static unsigned char source_memory[MEMORY_BYTES];
static unsigned char target_memory[MEMORY_BYTES];
static unsigned char packed[MEMORY_BYTES];
static unsigned char expected[MEMORY_BYTES];

/* A block of bytes of one element of a type, relative to the element's address. */
typedef struct segment {
    MPI_Aint disp; /* first byte */
    size_t len;    /* bytes */
} segment_t;

/* What a test type must look like: its layout, written out from MPI-3.1, and its bounds. */
typedef struct layout {
    const segment_t *segments; /* the data of one element, in typemap order */
    size_t num_segments;       /* entries in segments */
    MPI_Aint lb;               /* MPI_Type_get_extent */
    MPI_Aint extent;           /* distance between elements */
    MPI_Aint true_lb;          /* MPI_Type_get_true_extent */
    MPI_Aint true_extent;      /* span of the data */
} layout_t;

#define LAYOUT(segs, lb_, extent_, true_lb_, true_extent_)                                         \
    ((layout_t){.segments = segs,                                                                  \
                .num_segments = sizeof(segs) / sizeof(segs[0]),                                    \
                .lb = lb_,                                                                         \
                .extent = extent_,                                                                 \
                .true_lb = true_lb_,                                                               \
                .true_extent = true_extent_})

static size_t layout_size(const layout_t *layout)
{
    size_t size = 0;

    for (size_t s = 0; s < layout->num_segments; s++) {
        size += layout->segments[s].len;
    }
    return size;
}

/* The stream of `count` elements at ORIGIN of source_memory, by the layout. */
static size_t layout_pack(const layout_t *layout, int count, unsigned char *out)
{
    size_t done = 0;

    for (int e = 0; e < count; e++) {
        for (size_t s = 0; s < layout->num_segments; s++) {
            const segment_t *seg = &layout->segments[s];

            memcpy(out + done, source_memory + ORIGIN + e * layout->extent + seg->disp, seg->len);
            done += seg->len;
        }
    }
    return done;
}

/* Whether byte `offset` (from ORIGIN) is data of one of `count` elements. */
static bool layout_covers(const layout_t *layout, int count, MPI_Aint offset)
{
    for (int e = 0; e < count; e++) {
        for (size_t s = 0; s < layout->num_segments; s++) {
            MPI_Aint first = e * layout->extent + layout->segments[s].disp;

            if (offset >= first && offset < first + (MPI_Aint)layout->segments[s].len) {
                return true;
            }
        }
    }
    return false;
}

static void memory_reset(void)
{
    for (size_t i = 0; i < MEMORY_BYTES; i++) {
        source_memory[i] = (unsigned char)(i * 131 + 7);
    }
    memset(target_memory, GAP_BYTE, sizeof(target_memory));
    memset(packed, 0, sizeof(packed));
}

/* The combiner MPI_Type_get_envelope reports. */
static int combiner_of(MPI_Datatype type)
{
    int num_integers, num_addresses, num_datatypes, combiner;

    assert_int_equal(
        MPI_Type_get_envelope(type, &num_integers, &num_addresses, &num_datatypes, &combiner),
        MPI_SUCCESS);
    return combiner;
}

static void expect_bounds(MPI_Datatype type, const layout_t *layout)
{
    MPI_Aint lb, extent, true_lb, true_extent;
    MPI_Count lb_x, extent_x, true_lb_x, true_extent_x, size_x;
    int size;

    assert_int_equal(MPI_Type_size(type, &size), MPI_SUCCESS);
    assert_int_equal(size, (int)layout_size(layout));
    assert_int_equal(MPI_Type_size_x(type, &size_x), MPI_SUCCESS);
    assert_int_equal(size_x, (MPI_Count)layout_size(layout));
    assert_int_equal(MPI_Type_get_extent(type, &lb, &extent), MPI_SUCCESS);
    assert_int_equal(lb, layout->lb);
    assert_int_equal(extent, layout->extent);
    assert_int_equal(MPI_Type_get_extent_x(type, &lb_x, &extent_x), MPI_SUCCESS);
    assert_int_equal(lb_x, layout->lb);
    assert_int_equal(extent_x, layout->extent);
    assert_int_equal(MPI_Type_get_true_extent(type, &true_lb, &true_extent), MPI_SUCCESS);
    assert_int_equal(true_lb, layout->true_lb);
    assert_int_equal(true_extent, layout->true_extent);
    assert_int_equal(MPI_Type_get_true_extent_x(type, &true_lb_x, &true_extent_x), MPI_SUCCESS);
    assert_int_equal(true_lb_x, layout->true_lb);
    assert_int_equal(true_extent_x, layout->true_extent);
}

/*
 * MPI_Pack of `count` elements gives the layout's stream; MPI_Unpack of it into fresh
 * memory stores exactly the data bytes and leaves every other byte as it was. Types whose
 * elements overlap cannot be unpacked (MPI-3.1 section 4.1.11): `unpack` false.
 */
static void expect_pack_roundtrip(MPI_Datatype type, const layout_t *layout, int count, bool unpack)
{
    size_t nbytes;
    int position = 0;
    int pack_size;

    memory_reset();
    nbytes = layout_pack(layout, count, expected);
    assert_int_equal(MPI_Pack_size(count, type, MPI_COMM_WORLD, &pack_size), MPI_SUCCESS);
    assert_int_equal(pack_size, (int)nbytes);
    assert_int_equal(MPI_Pack(source_memory + ORIGIN, count, type, packed, (int)sizeof(packed),
                              &position, MPI_COMM_WORLD),
                     MPI_SUCCESS);
    assert_int_equal(position, (int)nbytes);
    assert_memory_equal(packed, expected, nbytes);
    if (!unpack) {
        return;
    }
    position = 0;
    assert_int_equal(MPI_Unpack(packed, (int)nbytes, &position, target_memory + ORIGIN, count, type,
                                MPI_COMM_WORLD),
                     MPI_SUCCESS);
    assert_int_equal(position, (int)nbytes);
    for (MPI_Aint offset = -ORIGIN; offset < ORIGIN; offset++) {
        unsigned char want =
            layout_covers(layout, count, offset) ? source_memory[ORIGIN + offset] : GAP_BYTE;

        if (target_memory[ORIGIN + offset] != want) {
            print_error("byte %td after unpack: 0x%02x, expected 0x%02x\n", offset,
                        target_memory[ORIGIN + offset], want);
        }
        assert_int_equal(target_memory[ORIGIN + offset], want);
    }
}

/* Bounds, stream and round trip of a committed copy of `type`; frees `type`. */
static void expect_type(MPI_Datatype type, const layout_t *layout, bool unpack)
{
    expect_bounds(type, layout);
    assert_int_equal(MPI_Type_commit(&type), MPI_SUCCESS);
    expect_pack_roundtrip(type, layout, 1, unpack);
    expect_pack_roundtrip(type, layout, 3, unpack);
    assert_int_equal(MPI_Type_free(&type), MPI_SUCCESS);
    assert_null(type);
}

static int group_setup(void **state)
{
    (void)state;
    /* A singleton, judged only on the parameters a test sets. */
    unsetenv("CRMPI_CTL_FD");
    setenv("CRMPI_PARAM_FILE", "", 1);
    test_env_clear_mca();
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        return -1;
    }
    /* MPI_Comm_set_errhandler comes later; errors must come back to the tests. */
    crmpi_mpi_comm_world.comm.errhandler = MPI_ERRORS_RETURN;
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    crmpi_mpi_comm_world.comm.errhandler = MPI_ERRORS_ARE_FATAL;
    return MPI_Finalize() == MPI_SUCCESS ? 0 : -1;
}

static void test_predefined(void **state)
{
    static const segment_t one_double[] = {{0, 8}};
    static const segment_t double_int[] = {{0, 8}, {8, 4}};
    static const segment_t short_int[] = {{0, 2}, {4, 4}};
    static const segment_t long_double_int[] = {{0, 16}, {16, 4}};
    layout_t layout;
    char name[MPI_MAX_OBJECT_NAME];
    int len;

    (void)state;
    layout = LAYOUT(one_double, 0, 8, 0, 8);
    expect_bounds(MPI_DOUBLE, &layout);
    expect_pack_roundtrip(MPI_DOUBLE, &layout, 5, true);
    /* The pairs are laid out as struct { value; int; } with C's padding (section 5.9.4). */
    layout = LAYOUT(double_int, 0, 16, 0, 12);
    expect_bounds(MPI_DOUBLE_INT, &layout);
    expect_pack_roundtrip(MPI_DOUBLE_INT, &layout, 3, true);
    layout = LAYOUT(short_int, 0, 8, 0, 8);
    expect_bounds(MPI_SHORT_INT, &layout);
    expect_pack_roundtrip(MPI_SHORT_INT, &layout, 3, true);
    layout = LAYOUT(long_double_int, 0, 32, 0, 20);
    expect_bounds(MPI_LONG_DOUBLE_INT, &layout);

    /* Engine fields: one run per plain type, dense pairs merged into one. */
    assert_int_equal(MPI_INT->num_runs, 1);
    assert_true(MPI_INT->contiguous);
    assert_int_equal(MPI_INT->basic_count, 1);
    assert_true(MPI_INT->committed);
    assert_int_equal(combiner_of(MPI_INT), MPI_COMBINER_NAMED);
    assert_int_equal(MPI_DOUBLE_INT->num_runs, 2);
    assert_false(MPI_DOUBLE_INT->contiguous);
    assert_int_equal(MPI_DOUBLE_INT->basic_count, 2);
    assert_int_equal(MPI_DOUBLE_INT->runs[1].disp, 8);
    assert_int_equal(MPI_DOUBLE_INT->runs[1].basic_size, 4);
    assert_int_equal(MPI_2INT->num_runs, 1);
    assert_true(MPI_2INT->contiguous);
    assert_int_equal(MPI_2INT->runs[0].len, 8);
    assert_int_equal(MPI_2INT->runs[0].basic_size, 4);
    assert_int_equal(MPI_2INT->basic_count, 2);
    assert_true(MPI_FLOAT_INT->contiguous);
    assert_false(MPI_SHORT_INT->contiguous);
    assert_int_equal(MPI_C_DOUBLE_COMPLEX->size, 16);
    assert_int_equal(MPI_C_DOUBLE_COMPLEX->runs[0].basic_size, 16);

    assert_int_equal(MPI_Type_get_name(MPI_INT, name, &len), MPI_SUCCESS);
    assert_string_equal(name, "MPI_INT");
    assert_int_equal(len, 7);
    assert_int_equal(MPI_Type_get_name(MPI_LONG_LONG, name, &len), MPI_SUCCESS);
    assert_string_equal(name, "MPI_LONG_LONG_INT");
    /* Committing a predefined type is allowed and changes nothing. */
    MPI_Datatype type = MPI_INT;

    assert_int_equal(MPI_Type_commit(&type), MPI_SUCCESS);
    assert_ptr_equal(type, MPI_INT);
}

static void test_contiguous(void **state)
{
    static const segment_t ints[] = {{0, 16}};
    static const segment_t pairs[] = {{0, 8}, {8, 4}, {16, 8}, {24, 4}};
    static const segment_t structs[] = {{0, 5}, {8, 5}, {16, 5}};
    static const segment_t none[] = {{0, 0}};
    MPI_Datatype type, padded;
    layout_t layout;

    (void)state;
    assert_int_equal(MPI_Type_contiguous(4, MPI_INT, &type), MPI_SUCCESS);
    /* Four ints in a row are one run, so packing them is one memcpy. */
    assert_int_equal(type->num_runs, 1);
    assert_true(type->contiguous);
    assert_false(type->committed);
    assert_int_equal(combiner_of(type), MPI_COMBINER_CONTIGUOUS);
    layout = LAYOUT(ints, 0, 16, 0, 16);
    expect_type(type, &layout, true);

    assert_int_equal(MPI_Type_contiguous(2, MPI_DOUBLE_INT, &type), MPI_SUCCESS);
    assert_int_equal(type->num_runs, 4);
    assert_false(type->contiguous);
    layout = LAYOUT(pairs, 0, 32, 0, 28);
    expect_type(type, &layout, true);

    /* Copies of a padded struct sit at its padded extent. */
    int blocklengths[2] = {1, 1};
    MPI_Aint displacements[2] = {0, 4};
    MPI_Datatype types[2] = {MPI_INT, MPI_CHAR};

    assert_int_equal(MPI_Type_create_struct(2, blocklengths, displacements, types, &padded),
                     MPI_SUCCESS);
    assert_int_equal(MPI_Type_contiguous(3, padded, &type), MPI_SUCCESS);
    assert_int_equal(MPI_Type_free(&padded), MPI_SUCCESS);
    layout = LAYOUT(structs, 0, 24, 0, 21);
    expect_type(type, &layout, true);

    /* No elements: no data, and lb = extent = 0 as for every empty typemap. */
    assert_int_equal(MPI_Type_contiguous(0, MPI_INT, &type), MPI_SUCCESS);
    layout = LAYOUT(none, 0, 0, 0, 0);
    expect_type(type, &layout, true);
}

static void test_vector(void **state)
{
    static const segment_t blocks[] = {{0, 8}, {16, 8}, {32, 8}};
    static const segment_t backwards[] = {{0, 4}, {-8, 4}, {-16, 4}};
    static const segment_t hblocks[] = {{0, 4}, {20, 4}, {40, 4}};
    static const segment_t odd[] = {{0, 4}, {3, 4}};
    static const segment_t none[] = {{0, 0}};
    MPI_Datatype type;
    layout_t layout;

    (void)state;
    /* 3 blocks of 2 ints, 4 ints apart: extent ends with the last block (section 4.1.2). */
    assert_int_equal(MPI_Type_vector(3, 2, 4, MPI_INT, &type), MPI_SUCCESS);
    assert_int_equal(type->num_runs, 3);
    layout = LAYOUT(blocks, 0, 40, 0, 40);
    expect_type(type, &layout, true);

    /* A negative stride: the stream stays in typemap order (0, -8, -16), not address order,
     * and lb is the lowest block. */
    assert_int_equal(MPI_Type_vector(3, 1, -2, MPI_INT, &type), MPI_SUCCESS);
    layout = LAYOUT(backwards, -16, 20, -16, 20);
    expect_type(type, &layout, true);

    assert_int_equal(MPI_Type_create_hvector(3, 2, 20, MPI_SHORT, &type), MPI_SUCCESS);
    assert_int_equal(combiner_of(type), MPI_COMBINER_HVECTOR);
    layout = LAYOUT(hblocks, 0, 44, 0, 44);
    expect_type(type, &layout, true);

    /* Blocks 3 bytes apart: data spans 7 bytes, the extent is padded to int alignment
     * (section 4.1, epsilon). Elements overlap, so no unpack. */
    assert_int_equal(MPI_Type_create_hvector(2, 1, 3, MPI_INT, &type), MPI_SUCCESS);
    layout = LAYOUT(odd, 0, 8, 0, 7);
    expect_type(type, &layout, false);

    /* Blocks that touch are one run. */
    assert_int_equal(MPI_Type_vector(5, 2, 2, MPI_DOUBLE, &type), MPI_SUCCESS);
    assert_int_equal(type->num_runs, 1);
    assert_true(type->contiguous);
    assert_int_equal(MPI_Type_free(&type), MPI_SUCCESS);

    /* Zero-length blocks are no entries at all. */
    assert_int_equal(MPI_Type_vector(3, 0, 2, MPI_INT, &type), MPI_SUCCESS);
    layout = LAYOUT(none, 0, 0, 0, 0);
    expect_type(type, &layout, true);
}

static void test_indexed(void **state)
{
    static const segment_t indexed[] = {{20, 8}, {0, 4}, {36, 12}};
    static const segment_t overlapping[] = {{16, 8}, {0, 4}, {16, 4}};
    static const segment_t hindexed[] = {{24, 8}, {0, 16}};
    static const segment_t indexed_block[] = {{8, 4}, {0, 4}, {16, 4}};
    static const segment_t hindexed_block[] = {{-12, 12}, {12, 12}};
    MPI_Datatype type;
    layout_t layout;

    (void)state;
    /* Out of order: the stream follows the arguments, the bounds the addresses. */
    assert_int_equal(MPI_Type_indexed(3, (int[]){2, 1, 3}, (int[]){5, 0, 9}, MPI_INT, &type),
                     MPI_SUCCESS);
    assert_int_equal(type->num_runs, 3);
    layout = LAYOUT(indexed, 0, 48, 0, 48);
    expect_type(type, &layout, true);

    /* Overlapping blocks may be sent (packed), not received (section 4.1.11). */
    assert_int_equal(MPI_Type_indexed(3, (int[]){2, 1, 1}, (int[]){4, 0, 4}, MPI_INT, &type),
                     MPI_SUCCESS);
    layout = LAYOUT(overlapping, 0, 24, 0, 24);
    expect_type(type, &layout, false);

    /* Blocks that touch in memory but not in typemap order stay separate runs. */
    assert_int_equal(MPI_Type_indexed(3, (int[]){1, 1, 1}, (int[]){1, 0, 2}, MPI_INT, &type),
                     MPI_SUCCESS);
    assert_int_equal(type->num_runs, 3);
    assert_int_equal(MPI_Type_free(&type), MPI_SUCCESS);

    assert_int_equal(
        MPI_Type_create_hindexed(2, (int[]){1, 2}, (MPI_Aint[]){24, 0}, MPI_DOUBLE, &type),
        MPI_SUCCESS);
    layout = LAYOUT(hindexed, 0, 32, 0, 32);
    expect_type(type, &layout, true);

    assert_int_equal(MPI_Type_create_indexed_block(3, 2, (int[]){4, 0, 8}, MPI_SHORT, &type),
                     MPI_SUCCESS);
    layout = LAYOUT(indexed_block, 0, 20, 0, 20);
    expect_type(type, &layout, true);

    assert_int_equal(MPI_Type_create_hindexed_block(2, 3, (MPI_Aint[]){-12, 12}, MPI_INT, &type),
                     MPI_SUCCESS);
    layout = LAYOUT(hindexed_block, -12, 36, -12, 36);
    expect_type(type, &layout, true);
}

static void test_struct(void **state)
{
    static const segment_t mixed[] = {{0, 4}, {4, 1}, {8, 16}};
    static const segment_t char_double[] = {{1, 1}, {8, 8}};
    static const segment_t pair_char[] = {{0, 2}, {4, 4}, {8, 1}};
    static const segment_t shorts_int[] = {{0, 8}};
    MPI_Datatype type;
    layout_t layout;

    (void)state;
    /* { int; char; double[2]; }: 21 bytes of data, extent padded to 8 (section 4.1). */
    assert_int_equal(MPI_Type_create_struct(3, (int[]){1, 1, 2}, (MPI_Aint[]){0, 4, 8},
                                            (MPI_Datatype[]){MPI_INT, MPI_CHAR, MPI_DOUBLE}, &type),
                     MPI_SUCCESS);
    assert_int_equal(type->num_runs, 3);
    assert_int_equal(type->basic_count, 4);
    layout = LAYOUT(mixed, 0, 24, 0, 24);
    expect_type(type, &layout, true);

    /* lb is the first data byte; the padding rounds the extent (15) up to 16. */
    assert_int_equal(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){1, 8},
                                            (MPI_Datatype[]){MPI_CHAR, MPI_DOUBLE}, &type),
                     MPI_SUCCESS);
    layout = LAYOUT(char_double, 1, 16, 1, 15);
    expect_type(type, &layout, true);

    /* A member that is a pair type brings its alignment (int) and its own padded extent. */
    assert_int_equal(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 8},
                                            (MPI_Datatype[]){MPI_SHORT_INT, MPI_CHAR}, &type),
                     MPI_SUCCESS);
    layout = LAYOUT(pair_char, 0, 12, 0, 9);
    expect_type(type, &layout, true);

    /* Dense members of different basic sizes: two runs, yet one memcpy (contiguous). */
    assert_int_equal(MPI_Type_create_struct(2, (int[]){2, 1}, (MPI_Aint[]){0, 4},
                                            (MPI_Datatype[]){MPI_SHORT, MPI_INT}, &type),
                     MPI_SUCCESS);
    assert_int_equal(type->num_runs, 2);
    assert_true(type->contiguous);
    layout = LAYOUT(shorts_int, 0, 8, 0, 8);
    expect_type(type, &layout, true);
}

static void test_struct_markers(void **state)
{
    static const segment_t resized_member[] = {{0, 4}, {-100, 4}};
    static const segment_t after_empty[] = {{0, 4}};
    MPI_Datatype resized, empty, type;
    layout_t layout;

    (void)state;
    /* With a resized member, lb and ub come from its markers alone (section 4.1.6): the
     * int at -100 is data outside [lb, ub), and true bounds still see it. */
    assert_int_equal(MPI_Type_create_resized(MPI_INT, 4, 8, &resized), MPI_SUCCESS);
    assert_int_equal(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, -100},
                                            (MPI_Datatype[]){resized, MPI_INT}, &type),
                     MPI_SUCCESS);
    layout = LAYOUT(resized_member, 4, 8, -100, 104);
    expect_bounds(type, &layout);
    assert_int_equal(MPI_Type_commit(&type), MPI_SUCCESS);
    expect_pack_roundtrip(type, &layout, 1, true);
    assert_int_equal(MPI_Type_free(&type), MPI_SUCCESS);
    assert_int_equal(MPI_Type_free(&resized), MPI_SUCCESS);

    /* An empty member has no entries, so it moves no bound: lb is 0, not -100. (Open MPI
     * 4.1 counts the empty type's lb and says -100; MPI-3.1 section 4.1 defines lb over
     * the typemap's entries, and there are none.) */
    assert_int_equal(MPI_Type_contiguous(0, MPI_INT, &empty), MPI_SUCCESS);
    assert_int_equal(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){-100, 0},
                                            (MPI_Datatype[]){empty, MPI_INT}, &type),
                     MPI_SUCCESS);
    assert_int_equal(MPI_Type_free(&empty), MPI_SUCCESS);
    layout = LAYOUT(after_empty, 0, 4, 0, 4);
    expect_type(type, &layout, true);
}

static void test_subarray(void **state)
{
    /* A 4 x 5 array of int, the 2 x 3 block at (1, 2). C: rows 1 and 2, columns 2..4, so
     * elements 7..9 and 12..14. Fortran: the first index varies fastest, element (i, j) is
     * i + 4 j: 9, 10, 13, 14, 17, 18. */
    static const segment_t c_order[] = {{28, 12}, {48, 12}};
    static const segment_t fortran_order[] = {{36, 8}, {52, 8}, {68, 8}};
    /* 3 x 4 x 5 chars, the 2 x 2 x 2 block at (1, 1, 3): (i * 4 + j) * 5 + k. */
    static const segment_t cube[] = {{28, 2}, {33, 2}, {48, 2}, {53, 2}};
    MPI_Datatype type;
    layout_t layout;

    (void)state;
    assert_int_equal(MPI_Type_create_subarray(2, (int[]){4, 5}, (int[]){2, 3}, (int[]){1, 2},
                                              MPI_ORDER_C, MPI_INT, &type),
                     MPI_SUCCESS);
    assert_int_equal(combiner_of(type), MPI_COMBINER_SUBARRAY);
    /* The subarray's extent is the whole array's, from 0 (section 4.1.3). */
    layout = LAYOUT(c_order, 0, 80, 28, 32);
    expect_type(type, &layout, true);

    assert_int_equal(MPI_Type_create_subarray(2, (int[]){4, 5}, (int[]){2, 3}, (int[]){1, 2},
                                              MPI_ORDER_FORTRAN, MPI_INT, &type),
                     MPI_SUCCESS);
    layout = LAYOUT(fortran_order, 0, 80, 36, 40);
    expect_type(type, &layout, true);

    assert_int_equal(MPI_Type_create_subarray(3, (int[]){3, 4, 5}, (int[]){2, 2, 2},
                                              (int[]){1, 1, 3}, MPI_ORDER_C, MPI_CHAR, &type),
                     MPI_SUCCESS);
    layout = LAYOUT(cube, 0, 60, 28, 27);
    expect_type(type, &layout, true);
}

static void test_resized_and_dup(void **state)
{
    static const segment_t strided[] = {{0, 4}, {8, 4}};
    MPI_Datatype vector, resized, dup, contiguous;
    layout_t layout;
    char name[MPI_MAX_OBJECT_NAME];
    int len;

    (void)state;
    assert_int_equal(MPI_Type_vector(2, 1, 2, MPI_INT, &vector), MPI_SUCCESS);
    assert_int_equal(MPI_Type_create_resized(vector, -4, 20, &resized), MPI_SUCCESS);
    assert_int_equal(MPI_Type_free(&vector), MPI_SUCCESS);
    /* Resizing moves the bounds only; the true bounds still describe the data. */
    layout = LAYOUT(strided, -4, 20, 0, 12);
    expect_bounds(resized, &layout);

    /* Copies of a resized type follow its extent, and its markers bound the result. */
    assert_int_equal(MPI_Type_contiguous(3, resized, &contiguous), MPI_SUCCESS);
    MPI_Aint lb, extent;

    assert_int_equal(MPI_Type_get_extent(contiguous, &lb, &extent), MPI_SUCCESS);
    assert_int_equal(lb, -4);
    assert_int_equal(extent, 60);
    assert_int_equal(MPI_Type_get_true_extent(contiguous, &lb, &extent), MPI_SUCCESS);
    assert_int_equal(lb, 0);
    assert_int_equal(extent, 52);
    assert_int_equal(MPI_Type_free(&contiguous), MPI_SUCCESS);

    /* A dup has the same typemap and committed state, a name of its own. */
    assert_int_equal(MPI_Type_set_name(resized, "strided"), MPI_SUCCESS);
    assert_int_equal(MPI_Type_commit(&resized), MPI_SUCCESS);
    assert_int_equal(MPI_Type_dup(resized, &dup), MPI_SUCCESS);
    assert_true(dup->committed);
    assert_int_equal(combiner_of(dup), MPI_COMBINER_DUP);
    assert_int_equal(MPI_Type_get_name(dup, name, &len), MPI_SUCCESS);
    assert_string_equal(name, "");
    assert_int_equal(len, 0);
    expect_bounds(dup, &layout);
    expect_pack_roundtrip(dup, &layout, 3, true);
    assert_int_equal(MPI_Type_free(&resized), MPI_SUCCESS);
    expect_type(dup, &layout, true);

    /* A dup of a predefined type is derived: it can be freed. */
    assert_int_equal(MPI_Type_dup(MPI_DOUBLE, &dup), MPI_SUCCESS);
    assert_false(dup->predefined);
    assert_true(dup->committed);
    assert_int_equal(MPI_Type_free(&dup), MPI_SUCCESS);

    /* A negative extent is allowed (section 4.1.7). */
    assert_int_equal(MPI_Type_create_resized(MPI_INT, 0, -4, &resized), MPI_SUCCESS);
    assert_int_equal(MPI_Type_get_extent(resized, &lb, &extent), MPI_SUCCESS);
    assert_int_equal(extent, -4);
    assert_int_equal(MPI_Type_free(&resized), MPI_SUCCESS);
}

/* A derived type outlives the handles of the types it was built from. */
static void test_free_order(void **state)
{
    static const segment_t nested[] = {{0, 4}, {8, 4}, {32, 8}};
    MPI_Datatype vector, type;
    layout_t layout;

    (void)state;
    assert_int_equal(MPI_Type_vector(2, 1, 2, MPI_INT, &vector), MPI_SUCCESS);
    assert_int_equal(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 32},
                                            (MPI_Datatype[]){vector, MPI_DOUBLE}, &type),
                     MPI_SUCCESS);
    assert_int_equal(MPI_Type_free(&vector), MPI_SUCCESS);
    assert_null(vector);
    layout = LAYOUT(nested, 0, 40, 0, 40);
    expect_type(type, &layout, true);
}

/* Basic elements in a status's bytes: MPI_UNDEFINED when they end inside one. */
static void expect_elements(MPI_Datatype type, MPI_Count nbytes, int expected_count)
{
    MPI_Status status = {0};
    MPI_Count count_x;
    int count;

    status._nbytes = nbytes;
    assert_int_equal(MPI_Get_elements(&status, type, &count), MPI_SUCCESS);
    assert_int_equal(count, expected_count);
    assert_int_equal(MPI_Get_elements_x(&status, type, &count_x), MPI_SUCCESS);
    assert_int_equal(count_x, expected_count);
}

static void test_get_elements(void **state)
{
    MPI_Datatype vector, shorts_int, empty;
    MPI_Status status = {0};
    MPI_Count count_x;
    int count;

    (void)state;
    /* 2 blocks of 2 ints: 16 bytes, 4 basic elements. */
    assert_int_equal(MPI_Type_vector(2, 2, 3, MPI_INT, &vector), MPI_SUCCESS);
    expect_elements(vector, 0, 0);
    expect_elements(vector, 4, 1);
    expect_elements(vector, 12, 3);
    expect_elements(vector, 6, MPI_UNDEFINED);
    expect_elements(vector, 36, 9);
    assert_int_equal(MPI_Type_free(&vector), MPI_SUCCESS);

    /* { short[2]; int; }: one run of 2 shorts, one of an int. */
    assert_int_equal(MPI_Type_create_struct(2, (int[]){2, 1}, (MPI_Aint[]){0, 4},
                                            (MPI_Datatype[]){MPI_SHORT, MPI_INT}, &shorts_int),
                     MPI_SUCCESS);
    expect_elements(shorts_int, 4, 2);
    expect_elements(shorts_int, 6, MPI_UNDEFINED);
    expect_elements(shorts_int, 10, 4);
    /* Setting elements and getting them back agree, partial elements included. */
    for (int n = 0; n < 8; n++) {
        assert_int_equal(MPI_Status_set_elements(&status, shorts_int, n), MPI_SUCCESS);
        assert_int_equal(MPI_Get_elements(&status, shorts_int, &count), MPI_SUCCESS);
        assert_int_equal(count, n);
    }
    assert_int_equal(MPI_Type_free(&shorts_int), MPI_SUCCESS);

    expect_elements(MPI_DOUBLE_INT, 12, 2);
    expect_elements(MPI_DOUBLE_INT, 20, 3);
    expect_elements(MPI_DOUBLE_INT, 10, MPI_UNDEFINED);
    expect_elements(MPI_2INT, 12, 3);
    /* More than an int holds: only the _x form can say it. */
    status._nbytes = (MPI_Count)3 << 32;
    assert_int_equal(MPI_Get_elements(&status, MPI_BYTE, &count), MPI_SUCCESS);
    assert_int_equal(count, MPI_UNDEFINED);
    assert_int_equal(MPI_Get_elements_x(&status, MPI_BYTE, &count_x), MPI_SUCCESS);
    assert_int_equal(count_x, (MPI_Count)3 << 32);

    /* A type without data: 0 elements, whatever the bytes. */
    assert_int_equal(MPI_Type_contiguous(0, MPI_INT, &empty), MPI_SUCCESS);
    expect_elements(empty, 0, 0);
    expect_elements(empty, 8, 0);
    assert_int_equal(MPI_Type_free(&empty), MPI_SUCCESS);

    assert_int_equal(MPI_Get_elements(NULL, MPI_INT, &count), MPI_ERR_ARG);
    assert_int_equal(MPI_Get_elements(&status, MPI_DATATYPE_NULL, &count), MPI_ERR_TYPE);
    assert_int_equal(MPI_Get_elements_x(&status, MPI_INT, NULL), MPI_ERR_ARG);
    assert_int_equal(MPI_Status_set_elements(&status, MPI_INT, -1), MPI_ERR_COUNT);
}

/* Several types one after another in one packed buffer, as MPI-3.1 section 4.2 allows. */
static void test_pack_sequence(void **state)
{
    int ints[3] = {1, 2, 3};
    double values[4] = {0.5, 1.5, 2.5, 3.5};
    int ints_out[3] = {0};
    double values_out[4] = {0};
    unsigned char buffer[64];
    MPI_Datatype every_other;
    int position = 0;

    (void)state;
    assert_int_equal(MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &every_other), MPI_SUCCESS);
    assert_int_equal(MPI_Type_commit(&every_other), MPI_SUCCESS);
    assert_int_equal(MPI_Pack(ints, 3, MPI_INT, buffer, sizeof(buffer), &position, MPI_COMM_WORLD),
                     MPI_SUCCESS);
    assert_int_equal(position, 12);
    assert_int_equal(
        MPI_Pack(values, 1, every_other, buffer, sizeof(buffer), &position, MPI_COMM_WORLD),
        MPI_SUCCESS);
    assert_int_equal(position, 28);
    position = 0;
    assert_int_equal(MPI_Unpack(buffer, 28, &position, ints_out, 3, MPI_INT, MPI_COMM_WORLD),
                     MPI_SUCCESS);
    assert_int_equal(MPI_Unpack(buffer, 28, &position, values_out, 1, every_other, MPI_COMM_WORLD),
                     MPI_SUCCESS);
    assert_int_equal(position, 28);
    assert_memory_equal(ints_out, ints, sizeof(ints));
    assert_true(values_out[0] == 0.5 && values_out[1] == 0.0 && values_out[2] == 2.5 &&
                values_out[3] == 0.0);
    assert_int_equal(MPI_Type_free(&every_other), MPI_SUCCESS);
}

static void test_names_and_addresses(void **state)
{
    char long_name[100];
    char name[MPI_MAX_OBJECT_NAME];
    MPI_Datatype type;
    MPI_Aint address;
    int len;

    (void)state;
    assert_int_equal(MPI_Type_contiguous(2, MPI_INT, &type), MPI_SUCCESS);
    assert_int_equal(MPI_Type_get_name(type, name, &len), MPI_SUCCESS);
    assert_string_equal(name, "");
    memset(long_name, 'x', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = '\0';
    /* Longer names are truncated to MPI_MAX_OBJECT_NAME - 1 characters. */
    assert_int_equal(MPI_Type_set_name(type, long_name), MPI_SUCCESS);
    assert_int_equal(MPI_Type_get_name(type, name, &len), MPI_SUCCESS);
    assert_int_equal(len, MPI_MAX_OBJECT_NAME - 1);
    assert_int_equal(strlen(name), MPI_MAX_OBJECT_NAME - 1);
    assert_int_equal(MPI_Type_free(&type), MPI_SUCCESS);

    assert_int_equal(MPI_Get_address(&long_name[10], &address), MPI_SUCCESS);
    assert_int_equal(address, (MPI_Aint)(uintptr_t)&long_name[10]);
    assert_int_equal(MPI_Get_address(MPI_BOTTOM, &address), MPI_SUCCESS);
    assert_int_equal(address, 0);
}

/* Sizes an int cannot hold. */
static void test_large(void **state)
{
    MPI_Datatype chunk, huge;
    MPI_Count size_x;
    int size;

    (void)state;
    assert_int_equal(MPI_Type_contiguous(4, MPI_DOUBLE, &chunk), MPI_SUCCESS);
    assert_int_equal(MPI_Type_contiguous(1 << 30, chunk, &huge), MPI_SUCCESS);
    assert_int_equal(MPI_Type_free(&chunk), MPI_SUCCESS);
    /* 32 GiB in one run: building it costs nothing. */
    assert_int_equal(huge->num_runs, 1);
    assert_int_equal(MPI_Type_size(huge, &size), MPI_SUCCESS);
    assert_int_equal(size, MPI_UNDEFINED);
    assert_int_equal(MPI_Type_size_x(huge, &size_x), MPI_SUCCESS);
    assert_int_equal(size_x, (MPI_Count)32 << 30);
    assert_int_equal(MPI_Type_commit(&huge), MPI_SUCCESS);
    assert_int_equal(MPI_Pack_size(1, huge, MPI_COMM_WORLD, &size), MPI_ERR_COUNT);
    assert_int_equal(MPI_Type_free(&huge), MPI_SUCCESS);

    /* Displacements beyond MPI_Aint are refused, not wrapped. */
    assert_int_equal(MPI_Type_create_hvector(2, 1, PTRDIFF_MAX, MPI_INT, &huge), MPI_ERR_ARG);
}

static void test_errors(void **state)
{
    MPI_Datatype type = MPI_DATATYPE_NULL, uncommitted, predefined = MPI_INT;
    unsigned char buffer[64];
    int ints[16] = {0};
    int position = 0;
    int size;

    (void)state;
    assert_int_equal(MPI_Type_contiguous(-1, MPI_INT, &type), MPI_ERR_COUNT);
    assert_int_equal(MPI_Type_contiguous(1, MPI_DATATYPE_NULL, &type), MPI_ERR_TYPE);
    assert_int_equal(MPI_Type_contiguous(1, MPI_INT, NULL), MPI_ERR_ARG);
    assert_int_equal(MPI_Type_vector(-1, 1, 1, MPI_INT, &type), MPI_ERR_COUNT);
    assert_int_equal(MPI_Type_vector(1, -1, 1, MPI_INT, &type), MPI_ERR_ARG);
    assert_int_equal(MPI_Type_create_hvector(1, -1, 1, MPI_INT, &type), MPI_ERR_ARG);
    assert_int_equal(MPI_Type_indexed(2, (int[]){1, -1}, (int[]){0, 1}, MPI_INT, &type),
                     MPI_ERR_ARG);
    assert_int_equal(MPI_Type_indexed(2, NULL, (int[]){0, 1}, MPI_INT, &type), MPI_ERR_ARG);
    assert_int_equal(MPI_Type_indexed(2, (int[]){1, 1}, NULL, MPI_INT, &type), MPI_ERR_ARG);
    assert_int_equal(MPI_Type_create_hindexed(-2, NULL, NULL, MPI_INT, &type), MPI_ERR_COUNT);
    assert_int_equal(MPI_Type_create_indexed_block(2, -1, (int[]){0, 1}, MPI_INT, &type),
                     MPI_ERR_ARG);
    assert_int_equal(
        MPI_Type_create_hindexed_block(1, 1, (MPI_Aint[]){0}, MPI_DATATYPE_NULL, &type),
        MPI_ERR_TYPE);
    assert_int_equal(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 4},
                                            (MPI_Datatype[]){MPI_INT, MPI_DATATYPE_NULL}, &type),
                     MPI_ERR_TYPE);
    assert_int_equal(MPI_Type_create_struct(-1, NULL, NULL, NULL, &type), MPI_ERR_COUNT);
    assert_int_equal(MPI_Type_create_struct(1, NULL, NULL, NULL, &type), MPI_ERR_ARG);
    assert_int_equal(
        MPI_Type_create_subarray(2, (int[]){4, 5}, (int[]){2, 3}, (int[]){1, 2}, 7, MPI_INT, &type),
        MPI_ERR_ARG);
    assert_int_equal(MPI_Type_create_subarray(2, (int[]){4, 5}, (int[]){2, 6}, (int[]){1, 0},
                                              MPI_ORDER_C, MPI_INT, &type),
                     MPI_ERR_ARG);
    assert_int_equal(MPI_Type_create_subarray(2, (int[]){4, 5}, (int[]){2, 3}, (int[]){1, 3},
                                              MPI_ORDER_C, MPI_INT, &type),
                     MPI_ERR_ARG);
    assert_int_equal(MPI_Type_create_subarray(2, (int[]){4, 5}, (int[]){2, 0}, (int[]){1, 0},
                                              MPI_ORDER_C, MPI_INT, &type),
                     MPI_ERR_ARG);
    assert_int_equal(MPI_Type_create_subarray(0, NULL, NULL, NULL, MPI_ORDER_C, MPI_INT, &type),
                     MPI_ERR_ARG);
    assert_int_equal(MPI_Type_create_subarray(-1, NULL, NULL, NULL, MPI_ORDER_C, MPI_INT, &type),
                     MPI_ERR_COUNT);
    assert_int_equal(MPI_Type_create_resized(MPI_DATATYPE_NULL, 0, 4, &type), MPI_ERR_TYPE);
    assert_int_equal(MPI_Type_dup(MPI_DATATYPE_NULL, &type), MPI_ERR_TYPE);
    /* Nothing was created by the failed calls. */
    assert_null(type);

    assert_int_equal(MPI_Type_free(&predefined), MPI_ERR_TYPE);
    assert_ptr_equal(predefined, MPI_INT);
    assert_int_equal(MPI_Type_free(&type), MPI_ERR_TYPE);
    assert_int_equal(MPI_Type_commit(&type), MPI_ERR_TYPE);
    assert_int_equal(MPI_Type_commit(NULL), MPI_ERR_ARG);
    assert_int_equal(MPI_Type_size(MPI_DATATYPE_NULL, &size), MPI_ERR_TYPE);
    assert_int_equal(MPI_Type_size(MPI_INT, NULL), MPI_ERR_ARG);
    assert_int_equal(MPI_Type_set_name(MPI_INT, NULL), MPI_ERR_ARG);
    assert_int_equal(MPI_Type_get_name(MPI_INT, NULL, &size), MPI_ERR_ARG);

    /* Pack and Unpack need a committed type and room; on error nothing moves. */
    assert_int_equal(MPI_Type_vector(2, 1, 2, MPI_INT, &uncommitted), MPI_SUCCESS);
    assert_int_equal(
        MPI_Pack(ints, 1, uncommitted, buffer, sizeof(buffer), &position, MPI_COMM_WORLD),
        MPI_ERR_TYPE);
    assert_int_equal(
        MPI_Unpack(buffer, sizeof(buffer), &position, ints, 1, uncommitted, MPI_COMM_WORLD),
        MPI_ERR_TYPE);
    assert_int_equal(MPI_Type_free(&uncommitted), MPI_SUCCESS);
    assert_int_equal(MPI_Pack(ints, 16, MPI_INT, buffer, 63, &position, MPI_COMM_WORLD),
                     MPI_ERR_TRUNCATE);
    assert_int_equal(position, 0);
    position = 62;
    assert_int_equal(MPI_Pack(ints, 1, MPI_INT, buffer, 64, &position, MPI_COMM_WORLD),
                     MPI_ERR_TRUNCATE);
    assert_int_equal(position, 62);
    position = 0;
    assert_int_equal(MPI_Unpack(buffer, 63, &position, ints, 16, MPI_INT, MPI_COMM_WORLD),
                     MPI_ERR_TRUNCATE);
    assert_int_equal(position, 0);
    position = 65;
    assert_int_equal(MPI_Unpack(buffer, 64, &position, ints, 0, MPI_INT, MPI_COMM_WORLD),
                     MPI_ERR_TRUNCATE);
    position = -1;
    assert_int_equal(MPI_Pack(ints, 1, MPI_INT, buffer, 64, &position, MPI_COMM_WORLD),
                     MPI_ERR_ARG);
    position = 0;
    assert_int_equal(MPI_Pack(ints, 1, MPI_INT, buffer, -1, &position, MPI_COMM_WORLD),
                     MPI_ERR_ARG);
    assert_int_equal(MPI_Pack(ints, -1, MPI_INT, buffer, 64, &position, MPI_COMM_WORLD),
                     MPI_ERR_COUNT);
    assert_int_equal(MPI_Pack(ints, 1, MPI_INT, buffer, 64, NULL, MPI_COMM_WORLD), MPI_ERR_ARG);
    assert_int_equal(MPI_Pack(ints, 1, MPI_INT, buffer, 64, &position, MPI_COMM_NULL),
                     MPI_ERR_COMM);
    assert_int_equal(MPI_Pack(ints, 1, MPI_INT, NULL, 64, &position, MPI_COMM_WORLD),
                     MPI_ERR_BUFFER);
    /* Nothing to pack needs no buffer. */
    position = 0;
    assert_int_equal(MPI_Pack(NULL, 0, MPI_INT, NULL, 0, &position, MPI_COMM_WORLD), MPI_SUCCESS);
    assert_int_equal(MPI_Unpack(NULL, 0, &position, NULL, 0, MPI_INT, MPI_COMM_WORLD), MPI_SUCCESS);
    assert_int_equal(position, 0);
    assert_int_equal(MPI_Pack_size(-1, MPI_INT, MPI_COMM_WORLD, &size), MPI_ERR_COUNT);
    assert_int_equal(MPI_Pack_size(1, MPI_DATATYPE_NULL, MPI_COMM_WORLD, &size), MPI_ERR_TYPE);
    assert_int_equal(MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_predefined),    cmocka_unit_test(test_contiguous),
        cmocka_unit_test(test_vector),        cmocka_unit_test(test_indexed),
        cmocka_unit_test(test_struct),        cmocka_unit_test(test_struct_markers),
        cmocka_unit_test(test_subarray),      cmocka_unit_test(test_resized_and_dup),
        cmocka_unit_test(test_free_order),    cmocka_unit_test(test_get_elements),
        cmocka_unit_test(test_pack_sequence), cmocka_unit_test(test_names_and_addresses),
        cmocka_unit_test(test_large),         cmocka_unit_test(test_errors),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
