/*
 * test_datatype.c: the datatype engine alone, without MPI: types built with the typemap
 * calls from static basic types, their sizes, bounds and true bounds (padding, markers,
 * negative strides, out-of-order and overlapping copies, empty copies), the stream of
 * each against a layout written out by hand, unpacking that leaves every gap untouched,
 * the convertor in pieces and from set positions, counting basic elements both ways, the
 * references a type's args record holds, and overflows refused with CRMPI_ERR_BAD_PARAM.
 *
 * The MPI datatype calls, built on these, are tested in mpi/datatype/test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "convertor.h"
#include "crmpi_status.h"
#include "datatype.h"

/* Test memory: displacements are relative to the middle, so negative ones have room. */
#define MEMORY_BYTES 16384
#define ORIGIN       (MEMORY_BYTES / 2)
/* What unpacking must leave in every byte that is not data of the type. */
#define GAP_BYTE 0xA5

static unsigned char source_memory[MEMORY_BYTES];
static unsigned char target_memory[MEMORY_BYTES];
static unsigned char packed[MEMORY_BYTES];
static unsigned char expected[MEMORY_BYTES];

/* ---- basic types: the static initializers of datatype.h -------------------------------- */

typedef struct crmpi_datatype_s type_t;

/* Basic kinds, as a maker codes them: the engine keeps runs of different kinds apart. */
enum { KIND_PLAIN = 1, KIND_OTHER = 2 };

static crmpi_dt_run_t char_runs[1] = {CRMPI_DATATYPE_BASIC_RUN(char, KIND_PLAIN)};
static type_t char_type = CRMPI_DATATYPE_STATIC_BASIC("char", char_runs, char);
static crmpi_dt_run_t short_runs[1] = {CRMPI_DATATYPE_BASIC_RUN(short, KIND_PLAIN)};
static type_t short_type = CRMPI_DATATYPE_STATIC_BASIC("short", short_runs, short);
static crmpi_dt_run_t int_runs[1] = {CRMPI_DATATYPE_BASIC_RUN(int, KIND_PLAIN)};
static type_t int_type = CRMPI_DATATYPE_STATIC_BASIC("int", int_runs, int);
static crmpi_dt_run_t double_runs[1] = {CRMPI_DATATYPE_BASIC_RUN(double, KIND_PLAIN)};
static type_t double_type = CRMPI_DATATYPE_STATIC_BASIC("double", double_runs, double);

struct double_int {
    double value;
    int index;
};
static crmpi_dt_run_t double_int_runs[2] =
    CRMPI_DATATYPE_PAIR_RUNS(struct double_int, double, KIND_PLAIN, index, int, KIND_PLAIN);
static type_t double_int_type = CRMPI_DATATYPE_STATIC_PAIR(
    "double_int", double_int_runs, struct double_int, double, KIND_PLAIN, index, int, KIND_PLAIN);

struct int_int {
    int value;
    int index;
};
static crmpi_dt_run_t int_int_runs[2] =
    CRMPI_DATATYPE_PAIR_RUNS(struct int_int, int, KIND_PLAIN, index, int, KIND_PLAIN);
static type_t int_int_type = CRMPI_DATATYPE_STATIC_PAIR("int_int", int_int_runs, struct int_int,
                                                        int, KIND_PLAIN, index, int, KIND_PLAIN);

/* Two members that touch, of one size but two kinds: two runs, and still dense. */
static crmpi_dt_run_t int_other_runs[2] =
    CRMPI_DATATYPE_PAIR_RUNS(struct int_int, int, KIND_PLAIN, index, int, KIND_OTHER);
static type_t int_other_type = CRMPI_DATATYPE_STATIC_PAIR(
    "int_other", int_other_runs, struct int_int, int, KIND_PLAIN, index, int, KIND_OTHER);
static crmpi_dt_run_t other_runs[1] = {CRMPI_DATATYPE_BASIC_RUN(int, KIND_OTHER)};
static type_t other_type = CRMPI_DATATYPE_STATIC_BASIC("other", other_runs, int);

/* MPI-1's bound markers. */
static type_t lb_type = CRMPI_DATATYPE_STATIC_MARKER("lb", true);
static type_t ub_type = CRMPI_DATATYPE_STATIC_MARKER("ub", false);

struct short_int {
    short value;
    int index;
};
static crmpi_dt_run_t short_int_runs[2] =
    CRMPI_DATATYPE_PAIR_RUNS(struct short_int, short, KIND_PLAIN, index, int, KIND_PLAIN);
static type_t short_int_type = CRMPI_DATATYPE_STATIC_PAIR(
    "short_int", short_int_runs, struct short_int, short, KIND_PLAIN, index, int, KIND_PLAIN);

/* ---- building: the shapes of the usual constructors, from the typemap calls ----------- */

/* Finish a map that must succeed. */
static type_t *finish(crmpi_datatype_typemap_t *map)
{
    type_t *type = NULL;

    assert_int_equal(crmpi_datatype_typemap_finish(map, &type), CRMPI_OK);
    assert_non_null(type);
    return type;
}

/* `count` copies of old in a row. */
static type_t *build_copies(size_t count, const type_t *old)
{
    crmpi_datatype_typemap_t map;

    crmpi_datatype_typemap_init(&map);
    crmpi_datatype_typemap_append(&map, 0, count, old->extent, old);
    return finish(&map);
}

/* `count` blocks of `blocklength` copies of old, block i at i * stride bytes. */
static type_t *build_hvector(size_t count, size_t blocklength, ptrdiff_t stride, const type_t *old)
{
    crmpi_datatype_typemap_t map;

    crmpi_datatype_typemap_init(&map);
    for (size_t i = 0; i < count; i++) {
        crmpi_datatype_typemap_append(&map, (ptrdiff_t)i * stride, blocklength, old->extent, old);
    }
    return finish(&map);
}

/* Blocks of blocklengths[i] copies of types[i] at disps[i] bytes, in argument order. */
static type_t *build_struct(size_t count, const size_t blocklengths[], const ptrdiff_t disps[],
                            type_t *const types[])
{
    crmpi_datatype_typemap_t map;

    crmpi_datatype_typemap_init(&map);
    for (size_t i = 0; i < count; i++) {
        crmpi_datatype_typemap_append(&map, disps[i], blocklengths[i], types[i]->extent, types[i]);
    }
    return finish(&map);
}

/* Blocks of blocklengths[i] copies of old at disps[i] bytes. */
static type_t *build_hindexed(size_t count, const size_t blocklengths[], const ptrdiff_t disps[],
                              type_t *old)
{
    type_t *types[64];

    assert_true(count <= 64);
    for (size_t i = 0; i < count; i++) {
        types[i] = old;
    }
    return build_struct(count, blocklengths, disps, types);
}

/* The data of old with the bounds lb, lb + extent (markers). */
static type_t *build_resized(const type_t *old, ptrdiff_t lb, ptrdiff_t extent)
{
    crmpi_datatype_typemap_t map;

    crmpi_datatype_typemap_init(&map);
    crmpi_datatype_typemap_append(&map, 0, 1, old->extent, old);
    crmpi_datatype_typemap_set_bounds(&map, lb, extent);
    return finish(&map);
}

/* ---- layouts written out by hand --------------------------------------------------------- */

/* A block of bytes of one element of a type, relative to the element's address. */
typedef struct segment {
    ptrdiff_t disp; /* first byte */
    size_t len;     /* bytes */
} segment_t;

/* What a test type must look like: its layout, written out from MPI-3.1, and its bounds. */
typedef struct layout {
    const segment_t *segments; /* the data of one element, in typemap order */
    size_t num_segments;       /* entries in segments */
    ptrdiff_t lb;              /* lower bound */
    ptrdiff_t extent;          /* distance between elements */
    ptrdiff_t true_lb;         /* first byte of data */
    ptrdiff_t true_extent;     /* span of the data */
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
static size_t layout_pack(const layout_t *layout, size_t count, unsigned char *out)
{
    size_t done = 0;

    for (size_t e = 0; e < count; e++) {
        for (size_t s = 0; s < layout->num_segments; s++) {
            const segment_t *seg = &layout->segments[s];

            memcpy(out + done, source_memory + ORIGIN + (ptrdiff_t)e * layout->extent + seg->disp,
                   seg->len);
            done += seg->len;
        }
    }
    return done;
}

/* Whether byte `offset` (from ORIGIN) is data of one of `count` elements. */
static bool layout_covers(const layout_t *layout, size_t count, ptrdiff_t offset)
{
    for (size_t e = 0; e < count; e++) {
        for (size_t s = 0; s < layout->num_segments; s++) {
            ptrdiff_t first = (ptrdiff_t)e * layout->extent + layout->segments[s].disp;

            if (offset >= first && offset < first + (ptrdiff_t)layout->segments[s].len) {
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

static void expect_bounds(const type_t *type, const layout_t *layout)
{
    assert_int_equal(type->size, layout_size(layout));
    assert_int_equal(type->lb, layout->lb);
    assert_int_equal(type->extent, layout->extent);
    assert_int_equal(type->true_lb, layout->true_lb);
    assert_int_equal(type->true_extent, layout->true_extent);
}

/*
 * Packing `count` elements gives the layout's stream; unpacking it into fresh memory
 * stores exactly the data bytes and leaves every other byte as it was. Types whose
 * elements overlap cannot be unpacked: `unpack` false.
 */
static void expect_stream(const type_t *type, const layout_t *layout, size_t count, bool unpack)
{
    crmpi_convertor_t conv;
    size_t nbytes;

    memory_reset();
    nbytes = layout_pack(layout, count, expected);
    crmpi_convertor_init(&conv, source_memory + ORIGIN, count, type);
    assert_int_equal(conv.total, nbytes);
    assert_int_equal(crmpi_convertor_pack(&conv, packed, sizeof(packed)), nbytes);
    assert_memory_equal(packed, expected, nbytes);
    if (!unpack) {
        return;
    }
    crmpi_convertor_init(&conv, target_memory + ORIGIN, count, type);
    assert_int_equal(crmpi_convertor_unpack(&conv, packed, nbytes), nbytes);
    for (ptrdiff_t offset = -ORIGIN; offset < ORIGIN; offset++) {
        unsigned char want =
            layout_covers(layout, count, offset) ? source_memory[ORIGIN + offset] : GAP_BYTE;

        if (target_memory[ORIGIN + offset] != want) {
            print_error("byte %td after unpack: 0x%02x, expected 0x%02x\n", offset,
                        target_memory[ORIGIN + offset], want);
        }
        assert_int_equal(target_memory[ORIGIN + offset], want);
    }
}

/* Bounds, stream of 1 and 3 elements, round trip; releases `type`. */
static void expect_type(type_t *type, const layout_t *layout, bool unpack)
{
    expect_bounds(type, layout);
    expect_stream(type, layout, 1, unpack);
    expect_stream(type, layout, 3, unpack);
    crmpi_datatype_release(type);
}

/* ---- tests -------------------------------------------------------------------------------- */

static void test_static_types(void **state)
{
    static const segment_t one_double[] = {{0, 8}};
    static const segment_t double_int[] = {{0, 8}, {8, 4}};
    static const segment_t short_int[] = {{0, 2}, {4, 4}};
    layout_t layout;

    (void)state;
    layout = LAYOUT(one_double, 0, 8, 0, 8);
    expect_bounds(&double_type, &layout);
    expect_stream(&double_type, &layout, 5, true);
    assert_int_equal(double_type.num_runs, 1);
    assert_true(double_type.contiguous);
    assert_true(double_type.predefined);
    assert_int_equal(double_type.basic_count, 1);
    assert_int_equal(double_type.align, _Alignof(double));

    /* A pair is laid out as its C struct, padding included in the extent. */
    layout = LAYOUT(double_int, 0, 16, 0, 12);
    expect_bounds(&double_int_type, &layout);
    expect_stream(&double_int_type, &layout, 3, true);
    assert_int_equal(double_int_type.num_runs, 2);
    assert_false(double_int_type.contiguous);
    assert_false(double_int_type.runs_regular);
    assert_int_equal(double_int_type.basic_count, 2);
    assert_int_equal(double_int_type.runs[1].disp, 8);
    assert_int_equal(double_int_type.runs[1].basic_size, 4);
    layout = LAYOUT(short_int, 0, 8, 0, 8);
    expect_bounds(&short_int_type, &layout);
    expect_stream(&short_int_type, &layout, 3, true);
    assert_false(short_int_type.contiguous);

    /* Members that touch and have one size are one run, and the pair is dense. */
    assert_int_equal(int_int_type.num_runs, 1);
    assert_int_equal(int_int_type.runs[0].len, 8);
    assert_int_equal(int_int_type.runs[0].basic_size, 4);
    assert_int_equal(int_int_type.run_len, 8);
    assert_true(int_int_type.runs_regular);
    assert_true(int_int_type.contiguous);

    /* Static types are never counted. */
    crmpi_datatype_retain(&int_type);
    assert_int_equal(int_type.refcount, 1);
    crmpi_datatype_release(&int_type);
    crmpi_datatype_release(&int_type);
    assert_int_equal(int_type.refcount, 1);
}

static void test_copies(void **state)
{
    static const segment_t ints[] = {{0, 16}};
    static const segment_t pairs[] = {{0, 8}, {8, 4}, {16, 8}, {24, 4}};
    static const segment_t structs[] = {{0, 5}, {8, 5}, {16, 5}};
    static const segment_t none[] = {{0, 0}};
    type_t *type, *padded;
    layout_t layout;

    (void)state;
    /* Four ints in a row are one run, so packing them is one memcpy. A new type is the
     * caller's one reference, not committed, unnamed, without args. */
    type = build_copies(4, &int_type);
    assert_int_equal(type->num_runs, 1);
    assert_true(type->contiguous);
    assert_int_equal(type->refcount, 1);
    assert_false(type->predefined);
    assert_false(type->committed);
    assert_string_equal(type->name, "");
    assert_null(type->args);
    layout = LAYOUT(ints, 0, 16, 0, 16);
    expect_type(type, &layout, true);

    type = build_copies(2, &double_int_type);
    assert_int_equal(type->num_runs, 4);
    assert_false(type->contiguous);
    layout = LAYOUT(pairs, 0, 32, 0, 28);
    expect_type(type, &layout, true);

    /* Copies of a padded struct { int; char; } sit at its padded extent. */
    padded =
        build_struct(2, (size_t[]){1, 1}, (ptrdiff_t[]){0, 4}, (type_t *[]){&int_type, &char_type});
    assert_int_equal(padded->extent, 8);
    type = build_copies(3, padded);
    crmpi_datatype_release(padded);
    layout = LAYOUT(structs, 0, 24, 0, 21);
    expect_type(type, &layout, true);

    /* No copies: no data, and lb = extent = 0 as for every empty typemap. */
    type = build_copies(0, &int_type);
    assert_int_equal(type->num_runs, 0);
    assert_null(type->runs);
    layout = LAYOUT(none, 0, 0, 0, 0);
    expect_type(type, &layout, true);
}

static void test_strided(void **state)
{
    static const segment_t blocks[] = {{0, 8}, {16, 8}, {32, 8}};
    static const segment_t backwards[] = {{0, 4}, {-8, 4}, {-16, 4}};
    static const segment_t odd[] = {{0, 4}, {3, 4}};
    static const segment_t none[] = {{0, 0}};
    type_t *type;
    layout_t layout;

    (void)state;
    /* 3 blocks of 2 ints, 16 bytes apart: the extent ends with the last block. */
    type = build_hvector(3, 2, 16, &int_type);
    assert_int_equal(type->num_runs, 3);
    assert_true(type->runs_regular);
    assert_int_equal(type->run_stride, 16);
    layout = LAYOUT(blocks, 0, 40, 0, 40);
    expect_type(type, &layout, true);

    /* A negative stride: the stream stays in typemap order (0, -8, -16), not address
     * order, and lb is the lowest block. */
    type = build_hvector(3, 1, -8, &int_type);
    layout = LAYOUT(backwards, -16, 20, -16, 20);
    expect_type(type, &layout, true);

    /* Blocks 3 bytes apart: data spans 7 bytes, the extent is padded to the int's
     * alignment (epsilon). Elements overlap, so no unpack. */
    type = build_hvector(2, 1, 3, &int_type);
    layout = LAYOUT(odd, 0, 8, 0, 7);
    expect_type(type, &layout, false);

    /* Blocks that touch are one run. */
    type = build_hvector(5, 2, 16, &double_type);
    assert_int_equal(type->num_runs, 1);
    assert_true(type->contiguous);
    crmpi_datatype_release(type);

    /* Zero-length blocks are no entries at all. */
    type = build_hvector(3, 0, 8, &int_type);
    layout = LAYOUT(none, 0, 0, 0, 0);
    expect_type(type, &layout, true);
}

static void test_indexed(void **state)
{
    static const segment_t indexed[] = {{20, 8}, {0, 4}, {36, 12}};
    static const segment_t overlapping[] = {{16, 8}, {0, 4}, {16, 4}};
    type_t *type;
    layout_t layout;

    (void)state;
    /* Out of order: the stream follows the appends, the bounds the addresses. */
    type = build_hindexed(3, (size_t[]){2, 1, 3}, (ptrdiff_t[]){20, 0, 36}, &int_type);
    assert_int_equal(type->num_runs, 3);
    assert_int_equal(type->run_len, 0);
    assert_false(type->runs_regular);
    layout = LAYOUT(indexed, 0, 48, 0, 48);
    expect_type(type, &layout, true);

    /* Overlapping blocks may be packed, not unpacked. */
    type = build_hindexed(3, (size_t[]){2, 1, 1}, (ptrdiff_t[]){16, 0, 16}, &int_type);
    layout = LAYOUT(overlapping, 0, 24, 0, 24);
    expect_type(type, &layout, false);

    /* Blocks that touch in memory but not in typemap order stay separate runs. */
    type = build_hindexed(3, (size_t[]){1, 1, 1}, (ptrdiff_t[]){4, 0, 8}, &int_type);
    assert_int_equal(type->num_runs, 3);
    crmpi_datatype_release(type);
}

static void test_struct(void **state)
{
    static const segment_t mixed[] = {{0, 4}, {4, 1}, {8, 16}};
    static const segment_t char_double[] = {{1, 1}, {8, 8}};
    static const segment_t pair_char[] = {{0, 2}, {4, 4}, {8, 1}};
    static const segment_t shorts_int[] = {{0, 8}};
    type_t *type;
    layout_t layout;

    (void)state;
    /* { int; char; double[2]; }: 21 bytes of data, extent padded to 8. */
    type = build_struct(3, (size_t[]){1, 1, 2}, (ptrdiff_t[]){0, 4, 8},
                        (type_t *[]){&int_type, &char_type, &double_type});
    assert_int_equal(type->num_runs, 3);
    assert_int_equal(type->basic_count, 4);
    assert_int_equal(type->align, _Alignof(double));
    layout = LAYOUT(mixed, 0, 24, 0, 24);
    expect_type(type, &layout, true);

    /* lb is the first data byte; the padding rounds the extent (15) up to 16. */
    type = build_struct(2, (size_t[]){1, 1}, (ptrdiff_t[]){1, 8},
                        (type_t *[]){&char_type, &double_type});
    layout = LAYOUT(char_double, 1, 16, 1, 15);
    expect_type(type, &layout, true);

    /* A pair member brings its alignment (int) and its own padded extent. */
    type = build_struct(2, (size_t[]){1, 1}, (ptrdiff_t[]){0, 8},
                        (type_t *[]){&short_int_type, &char_type});
    layout = LAYOUT(pair_char, 0, 12, 0, 9);
    expect_type(type, &layout, true);

    /* Dense members of different basic sizes: two runs, yet one memcpy (contiguous). */
    type = build_struct(2, (size_t[]){2, 1}, (ptrdiff_t[]){0, 4},
                        (type_t *[]){&short_type, &int_type});
    assert_int_equal(type->num_runs, 2);
    assert_true(type->contiguous);
    layout = LAYOUT(shorts_int, 0, 8, 0, 8);
    expect_type(type, &layout, true);
}

static void test_markers(void **state)
{
    static const segment_t strided[] = {{0, 4}, {8, 4}};
    static const segment_t resized_member[] = {{0, 4}, {-100, 4}};
    static const segment_t after_empty[] = {{0, 4}};
    type_t *vector, *resized, *empty, *type;
    layout_t layout;

    (void)state;
    /* Resizing moves the bounds only; the true bounds still describe the data. */
    vector = build_hvector(2, 1, 8, &int_type);
    resized = build_resized(vector, -4, 20);
    crmpi_datatype_release(vector);
    assert_true(resized->lb_marker && resized->ub_marker);
    layout = LAYOUT(strided, -4, 20, 0, 12);
    expect_bounds(resized, &layout);
    expect_stream(resized, &layout, 3, true);

    /* Copies of a resized type follow its extent, and its markers bound the result. */
    type = build_copies(3, resized);
    crmpi_datatype_release(resized);
    assert_int_equal(type->lb, -4);
    assert_int_equal(type->extent, 60);
    assert_int_equal(type->true_lb, 0);
    assert_int_equal(type->true_extent, 52);
    crmpi_datatype_release(type);

    /* With a resized member, lb and ub come from its markers alone: the int at -100 is
     * data outside [lb, ub), and the true bounds still see it. */
    resized = build_resized(&int_type, 4, 8);
    type =
        build_struct(2, (size_t[]){1, 1}, (ptrdiff_t[]){0, -100}, (type_t *[]){resized, &int_type});
    crmpi_datatype_release(resized);
    layout = LAYOUT(resized_member, 4, 8, -100, 104);
    expect_bounds(type, &layout);
    expect_stream(type, &layout, 1, true);
    crmpi_datatype_release(type);

    /* An empty member has no entries, so it moves no bound: lb is 0, not -100. */
    empty = build_copies(0, &int_type);
    type =
        build_struct(2, (size_t[]){1, 1}, (ptrdiff_t[]){-100, 0}, (type_t *[]){empty, &int_type});
    crmpi_datatype_release(empty);
    layout = LAYOUT(after_empty, 0, 4, 0, 4);
    expect_type(type, &layout, true);

    /* A negative extent is allowed (resized). */
    type = build_resized(&int_type, 0, -4);
    assert_int_equal(type->extent, -4);
    crmpi_datatype_release(type);
}

/* MPI-1's MPI_LB and MPI_UB: each sets its own bound; the other one stays the data's. */
static void test_lb_ub_markers(void **state)
{
    type_t *type, *copies;

    (void)state;
    /* An lb marker below the data: lb -8, ub the data's end (8), extent 16 (aligned). */
    type =
        build_struct(2, (size_t[]){1, 2}, (ptrdiff_t[]){-8, 0}, (type_t *[]){&lb_type, &int_type});
    assert_int_equal(type->lb, -8);
    assert_int_equal(type->extent, 16);
    assert_int_equal(type->true_lb, 0);
    assert_int_equal(type->true_extent, 8);
    assert_int_equal(type->size, 8);
    assert_true(type->lb_marker);
    assert_false(type->ub_marker);
    /* Copies of it: 3 elements 16 bytes apart, lb the first copy's marker. */
    copies = build_copies(3, type);
    assert_int_equal(copies->lb, -8);
    assert_int_equal(copies->extent, 48);
    assert_int_equal(copies->true_extent, 40);
    crmpi_datatype_release(copies);
    crmpi_datatype_release(type);

    /* A ub marker past the data, no padding added to it: lb 0, extent 21. */
    type =
        build_struct(2, (size_t[]){1, 1}, (ptrdiff_t[]){0, 21}, (type_t *[]){&int_type, &ub_type});
    assert_int_equal(type->lb, 0);
    assert_int_equal(type->extent, 21);
    assert_false(type->lb_marker);
    assert_true(type->ub_marker);
    crmpi_datatype_release(type);

    /* Both, and data outside them: the markers win (the classic MPI-1 way to resize). */
    type = build_struct(3, (size_t[]){1, 1, 1}, (ptrdiff_t[]){4, 0, 12},
                        (type_t *[]){&lb_type, &double_type, &ub_type});
    assert_int_equal(type->lb, 4);
    assert_int_equal(type->extent, 8);
    assert_int_equal(type->true_lb, 0);
    assert_int_equal(type->true_extent, 8);
    crmpi_datatype_release(type);

    /* Two lb markers: the lower one. */
    type = build_struct(3, (size_t[]){1, 1, 1}, (ptrdiff_t[]){-4, -12, 0},
                        (type_t *[]){&lb_type, &lb_type, &int_type});
    assert_int_equal(type->lb, -12);
    assert_int_equal(type->extent, 16);
    crmpi_datatype_release(type);
}

/* Runs of one size but different basic kinds stay apart, in memory order or not. */
static void test_basic_kinds(void **state)
{
    type_t *type;

    (void)state;
    assert_int_equal(int_other_type.num_runs, 2);
    assert_true(int_other_type.contiguous);
    assert_int_equal(int_other_type.runs[0].basic_kind, KIND_PLAIN);
    assert_int_equal(int_other_type.runs[1].basic_kind, KIND_OTHER);
    /* int, other, other, int in a row: three runs (the two others merge). */
    type = build_struct(4, (size_t[]){1, 1, 1, 1}, (ptrdiff_t[]){0, 4, 8, 12},
                        (type_t *[]){&int_type, &other_type, &other_type, &int_type});
    assert_int_equal(type->num_runs, 3);
    assert_int_equal(type->runs[1].len, 8);
    assert_int_equal(type->runs[1].basic_kind, KIND_OTHER);
    assert_true(type->contiguous);
    crmpi_datatype_release(type);
    /* Copies of a pair of two kinds keep both runs per copy. */
    type = build_copies(3, &int_other_type);
    assert_int_equal(type->num_runs, 6);
    assert_true(type->contiguous);
    crmpi_datatype_release(type);
}

/* The args record: kept as given, a reference on each derived type in it, none otherwise. */
static void test_args(void **state)
{
    static const segment_t nested[] = {{0, 4}, {8, 4}, {32, 8}};
    crmpi_datatype_typemap_t map;
    crmpi_datatype_args_t *args;
    type_t *vector, *type;
    layout_t layout;

    (void)state;
    vector = build_hvector(2, 1, 8, &int_type);
    /* Built from the vector without args: no reference on it. */
    type = build_copies(2, vector);
    assert_int_equal(vector->refcount, 1);
    crmpi_datatype_release(type);

    crmpi_datatype_typemap_init(&map);
    args = crmpi_datatype_typemap_keep_args(&map, 12, 3, 2, 2);
    assert_non_null(args);
    assert_int_equal(args->constructor, 12);
    assert_int_equal(args->num_ints, 3);
    assert_int_equal(args->num_disps, 2);
    assert_int_equal(args->num_types, 2);
    args->ints[0] = 2, args->ints[1] = 1, args->ints[2] = 1;
    args->disps[0] = 0, args->disps[1] = 32;
    args->types[0] = vector, args->types[1] = &double_type;
    crmpi_datatype_typemap_append(&map, 0, 1, vector->extent, vector);
    crmpi_datatype_typemap_append(&map, 32, 1, double_type.extent, &double_type);
    type = finish(&map);
    assert_ptr_equal(type->args, args);
    assert_int_equal(vector->refcount, 2);
    assert_int_equal(double_type.refcount, 1);

    /* The vector's own reference goes; the record's keeps it, and its layout. */
    crmpi_datatype_release(vector);
    assert_int_equal(vector->refcount, 1);
    assert_ptr_equal(type->args->types[0], vector);
    assert_int_equal(type->args->types[0]->size, 8);
    assert_int_equal(type->args->disps[1], 32);
    layout = LAYOUT(nested, 0, 40, 0, 40);
    /* Releasing the type releases the vector too (valgrind or ASan would see a leak). */
    expect_type(type, &layout, true);
}

/* Sizes and displacements beyond ptrdiff_t are refused, not wrapped; nothing is made. */
static void test_overflow(void **state)
{
    crmpi_datatype_typemap_t map;
    type_t *chunk, *huge, *type = NULL;

    (void)state;
    /* 32 GiB in one run: building it costs nothing. */
    chunk = build_copies(4, &double_type);
    huge = build_copies((size_t)1 << 30, chunk);
    crmpi_datatype_release(chunk);
    assert_int_equal(huge->num_runs, 1);
    assert_int_equal(huge->size, (size_t)32 << 30);

    crmpi_datatype_typemap_init(&map);
    crmpi_datatype_typemap_append(&map, 0, 1, 0, &int_type);
    crmpi_datatype_typemap_append(&map, PTRDIFF_MAX, 1, 0, &int_type);
    assert_int_equal(crmpi_datatype_typemap_finish(&map, &type), CRMPI_ERR_BAD_PARAM);
    assert_non_null(map.error_detail);
    assert_null(type);

    /* A failed map stays failed: later calls do nothing, finish frees the args. */
    crmpi_datatype_typemap_init(&map);
    assert_non_null(crmpi_datatype_typemap_keep_args(&map, 0, 1, 1, 1));
    map.args->types[0] = &int_type;
    assert_int_equal(crmpi_datatype_typemap_mul(&map, PTRDIFF_MAX, 2), 0);
    crmpi_datatype_typemap_append(&map, 0, 4, 4, &int_type);
    assert_int_equal(map.num_runs, 0);
    assert_int_equal(crmpi_datatype_typemap_finish(&map, &type), CRMPI_ERR_BAD_PARAM);
    assert_null(map.args);
    assert_null(type);

    /* Copies of the 32 GiB type reaching past PTRDIFF_MAX. */
    crmpi_datatype_typemap_init(&map);
    crmpi_datatype_typemap_append(&map, 0, (size_t)1 << 34, huge->extent, huge);
    assert_int_equal(crmpi_datatype_typemap_finish(&map, &type), CRMPI_ERR_BAD_PARAM);
    assert_null(type);
    crmpi_datatype_release(huge);
}

/* A type with many runs (the bisection of set_position) and gaps of every kind. */
static type_t *make_complex_type(void)
{
    size_t blocklengths[40];
    ptrdiff_t disps[40];
    type_t *vector, *indexed, *type;

    for (int i = 0; i < 40; i++) {
        blocklengths[i] = 1 + i % 3;
        disps[i] = 10 * i;
    }
    vector = build_hvector(3, 1, 24, &double_type);
    indexed = build_hindexed(40, blocklengths, disps, &short_type);
    type = build_struct(3, (size_t[]){1, 2, 1}, (ptrdiff_t[]){0, 72, 520},
                        (type_t *[]){vector, &char_type, indexed});
    crmpi_datatype_release(vector);
    crmpi_datatype_release(indexed);
    assert_true(type->num_runs > CRMPI_DATATYPE_INDEX_MIN_RUNS);
    assert_non_null(type->run_starts);
    return type;
}

/* Packing and unpacking in pieces of odd sizes give the one-shot stream and memory. */
static void expect_pieces(const type_t *type, size_t count)
{
    static const size_t chunk_sizes[] = {1, 7, 4096};
    static unsigned char oneshot[MEMORY_BYTES];
    crmpi_convertor_t conv;
    size_t total;

    memory_reset();
    crmpi_convertor_init(&conv, source_memory + ORIGIN, count, type);
    total = conv.total;
    assert_int_equal(total, count * type->size);
    assert_true(total < sizeof(expected));
    assert_int_equal(crmpi_convertor_pack(&conv, expected, SIZE_MAX), total);
    assert_int_equal(crmpi_convertor_pack(&conv, expected, 10), 0);
    memset(oneshot, GAP_BYTE, sizeof(oneshot));
    crmpi_convertor_init(&conv, oneshot + ORIGIN, count, type);
    assert_int_equal(crmpi_convertor_unpack(&conv, expected, total), total);

    for (size_t c = 0; c < sizeof(chunk_sizes) / sizeof(chunk_sizes[0]); c++) {
        size_t done = 0;

        memset(packed, 0, sizeof(packed));
        crmpi_convertor_init(&conv, source_memory + ORIGIN, count, type);
        while (done < total) {
            size_t n = crmpi_convertor_pack(&conv, packed + done, chunk_sizes[c]);

            assert_int_equal(n, total - done < chunk_sizes[c] ? total - done : chunk_sizes[c]);
            done += n;
            assert_int_equal(conv.position, done);
        }
        assert_memory_equal(packed, expected, total);

        memset(target_memory, GAP_BYTE, sizeof(target_memory));
        crmpi_convertor_init(&conv, target_memory + ORIGIN, count, type);
        for (done = 0; done < total;) {
            done += crmpi_convertor_unpack(&conv, expected + done, chunk_sizes[c]);
        }
        /* Bytes past the end are not stored. */
        assert_int_equal(crmpi_convertor_unpack(&conv, expected, 8), 0);
        assert_memory_equal(target_memory, oneshot, sizeof(oneshot));
    }
}

static void test_convertor_pieces(void **state)
{
    type_t *type;

    (void)state;
    /* Runs of many lengths, found by the general walk. */
    type = make_complex_type();
    assert_false(type->runs_regular);
    expect_pieces(type, 5);
    crmpi_datatype_release(type);

    /* Evenly spaced runs of one length, computed by the regular walk: doubles going
     * backwards, blocks of 12 bytes (no fixed-size copy for them), blocks of 32. */
    type = build_hvector(40, 1, -24, &double_type);
    assert_true(type->runs_regular);
    assert_int_equal(type->run_stride, -24);
    expect_pieces(type, 5);
    crmpi_datatype_release(type);
    type = build_hvector(40, 3, 16, &int_type);
    assert_true(type->runs_regular);
    assert_int_equal(type->run_len, 12);
    expect_pieces(type, 5);
    crmpi_datatype_release(type);
    type = build_hvector(20, 4, 40, &double_type);
    assert_int_equal(type->run_len, 32);
    expect_pieces(type, 3);
    crmpi_datatype_release(type);

    /* One run per element with gaps between elements. */
    type = build_resized(&int_type, 0, 12);
    assert_true(type->runs_regular);
    assert_false(type->contiguous);
    expect_pieces(type, 100);
    crmpi_datatype_release(type);

    /* The contiguous fast path, and where it says the stream lives. */
    crmpi_convertor_t conv;

    type = build_copies(6, &int_type);
    expect_pieces(type, 7);
    crmpi_convertor_init(&conv, source_memory + ORIGIN, 7, type);
    assert_ptr_equal(crmpi_convertor_contiguous_ptr(&conv), source_memory + ORIGIN);
    crmpi_datatype_release(type);
    type = build_hvector(2, 1, 8, &int_type);
    crmpi_convertor_init(&conv, source_memory + ORIGIN, 1, type);
    assert_null(crmpi_convertor_contiguous_ptr(&conv));
    crmpi_datatype_release(type);
}

static void test_convertor_set_position(void **state)
{
    type_t *types[3];
    const size_t count = 3;

    (void)state;
    /* set_position finds the run three ways: bisection of the index of a type with many
     * runs, division for runs of one length, a walk over a few runs of different lengths. */
    types[0] = make_complex_type();
    types[1] = build_hvector(30, 2, 20, &int_type);
    assert_int_equal(types[1]->run_len, 8);
    assert_true(types[1]->runs_regular);
    assert_null(types[1]->run_starts);
    types[2] = build_struct(3, (size_t[]){1, 1, 1}, (ptrdiff_t[]){0, 4, 8},
                            (type_t *[]){&int_type, &char_type, &double_type});
    assert_int_equal(types[2]->run_len, 0);
    assert_false(types[2]->runs_regular);
    assert_null(types[2]->run_starts);
    memory_reset();
    for (int t = 0; t < 3; t++) {
        crmpi_convertor_t conv;
        size_t total;

        crmpi_convertor_init(&conv, source_memory + ORIGIN, count, types[t]);
        total = conv.total;
        assert_int_equal(crmpi_convertor_pack(&conv, expected, total), total);
        assert_int_equal(crmpi_convertor_set_position(&conv, total + 1), CRMPI_ERR_BAD_PARAM);
        /* From every position, forwards and backwards, the rest of the stream. */
        for (size_t position = 0; position <= total; position++) {
            size_t back = position / 2;

            assert_int_equal(crmpi_convertor_set_position(&conv, position), CRMPI_OK);
            assert_int_equal(crmpi_convertor_pack(&conv, packed, 3),
                             total - position < 3 ? total - position : 3);
            assert_memory_equal(packed, expected + position,
                                total - position < 3 ? total - position : 3);
            assert_int_equal(crmpi_convertor_set_position(&conv, back), CRMPI_OK);
            assert_int_equal(crmpi_convertor_pack(&conv, packed, total), total - back);
            assert_memory_equal(packed, expected + back, total - back);
        }
        /* Unpack from the middle: only the second half's bytes change. */
        memset(target_memory, GAP_BYTE, sizeof(target_memory));
        crmpi_convertor_init(&conv, target_memory + ORIGIN, count, types[t]);
        assert_int_equal(crmpi_convertor_set_position(&conv, total / 2), CRMPI_OK);
        assert_int_equal(crmpi_convertor_unpack(&conv, expected + total / 2, total),
                         total - total / 2);
        crmpi_convertor_init(&conv, target_memory + ORIGIN, count, types[t]);
        assert_int_equal(crmpi_convertor_pack(&conv, packed, total), total);
        assert_memory_equal(packed + total / 2, expected + total / 2, total - total / 2);
        crmpi_datatype_release(types[t]);
    }
}

static void test_count_basic(void **state)
{
    type_t *vector, *shorts_int, *empty;

    (void)state;
    /* 2 blocks of 2 ints: 16 bytes, 4 basic elements. */
    vector = build_hvector(2, 2, 12, &int_type);
    assert_int_equal(crmpi_datatype_count_basic(vector, 0), 0);
    assert_int_equal(crmpi_datatype_count_basic(vector, 4), 1);
    assert_int_equal(crmpi_datatype_count_basic(vector, 12), 3);
    assert_int_equal(crmpi_datatype_count_basic(vector, 6), -1);
    assert_int_equal(crmpi_datatype_count_basic(vector, 16), 4);
    assert_int_equal(crmpi_datatype_count_basic(vector, 36), 9);
    crmpi_datatype_release(vector);

    /* { short[2]; int; }: one run of 2 shorts, one of an int. */
    shorts_int = build_struct(2, (size_t[]){2, 1}, (ptrdiff_t[]){0, 4},
                              (type_t *[]){&short_type, &int_type});
    assert_int_equal(crmpi_datatype_count_basic(shorts_int, 2), 1);
    assert_int_equal(crmpi_datatype_count_basic(shorts_int, 4), 2);
    assert_int_equal(crmpi_datatype_count_basic(shorts_int, 6), -1);
    assert_int_equal(crmpi_datatype_count_basic(shorts_int, 8), 3);
    assert_int_equal(crmpi_datatype_count_basic(shorts_int, 10), 4);
    crmpi_datatype_release(shorts_int);

    assert_int_equal(crmpi_datatype_count_basic(&double_int_type, 8), 1);
    assert_int_equal(crmpi_datatype_count_basic(&double_int_type, 12), 2);
    assert_int_equal(crmpi_datatype_count_basic(&double_int_type, 20), 3);
    assert_int_equal(crmpi_datatype_count_basic(&double_int_type, 10), -1);
    assert_int_equal(crmpi_datatype_count_basic(&int_int_type, 12), 3);

    /* A type without data holds no basic element, and no byte. */
    empty = build_copies(0, &int_type);
    assert_int_equal(crmpi_datatype_count_basic(empty, 0), 0);
    assert_int_equal(crmpi_datatype_count_basic(empty, 1), -1);
    crmpi_datatype_release(empty);
}

/* basic_bytes is count_basic's inverse, and says when the bytes exceed int64_t. */
static void test_basic_bytes(void **state)
{
    type_t *shorts_int, *empty;

    (void)state;
    assert_int_equal(crmpi_datatype_basic_bytes(&int_type, 0), 0);
    assert_int_equal(crmpi_datatype_basic_bytes(&int_type, 5), 20);
    assert_int_equal(crmpi_datatype_basic_bytes(&char_type, (int64_t)3 << 32), (int64_t)3 << 32);
    /* Pairs: a whole pair is 12 bytes; the double alone 8 (basic sizes differ). */
    assert_int_equal(crmpi_datatype_basic_bytes(&double_int_type, 3), 20);
    assert_int_equal(crmpi_datatype_basic_bytes(&double_int_type, 4), 24);
    assert_int_equal(crmpi_datatype_basic_bytes(&int_int_type, 3), 12);

    /* Every count round-trips through count_basic. */
    shorts_int = build_struct(2, (size_t[]){2, 1}, (ptrdiff_t[]){0, 4},
                              (type_t *[]){&short_type, &int_type});
    for (int64_t nbasic = 0; nbasic < 12; nbasic++) {
        int64_t nbytes = crmpi_datatype_basic_bytes(shorts_int, nbasic);

        assert_int_equal(crmpi_datatype_count_basic(shorts_int, (size_t)nbytes), nbasic);
    }
    crmpi_datatype_release(shorts_int);

    assert_int_equal(crmpi_datatype_basic_bytes(&double_type, (int64_t)1 << 61), -1);
    assert_int_equal(crmpi_datatype_basic_bytes(&double_type, ((int64_t)1 << 60) - 1),
                     (((int64_t)1 << 60) - 1) * 8);
    assert_int_equal(crmpi_datatype_basic_bytes(&double_int_type, INT64_MAX / 6), -1);

    empty = build_copies(0, &int_type);
    assert_int_equal(crmpi_datatype_basic_bytes(empty, 7), 0);
    crmpi_datatype_release(empty);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_static_types),
        cmocka_unit_test(test_copies),
        cmocka_unit_test(test_strided),
        cmocka_unit_test(test_indexed),
        cmocka_unit_test(test_struct),
        cmocka_unit_test(test_markers),
        cmocka_unit_test(test_lb_ub_markers),
        cmocka_unit_test(test_basic_kinds),
        cmocka_unit_test(test_args),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_convertor_pieces),
        cmocka_unit_test(test_convertor_set_position),
        cmocka_unit_test(test_count_basic),
        cmocka_unit_test(test_basic_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
