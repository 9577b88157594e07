/*
 * large_count_types.c: the large-count "_c" forms of MPI-4.0's datatype constructors,
 * MPI_Type_get_envelope_c/get_contents_c, the pack calls, MPI_Op_create_c and the buffer
 * calls, between ranks.
 *
 * Each "_c" constructor is compared with its int form given the same values: same size,
 * extent, packed bytes of two elements, and the same record through the int
 * MPI_Type_get_envelope/get_contents (a "_c" type whose values fit keeps the int layout,
 * so ROMIO can decode it). Types with a value beyond INT_MAX (3,000,000,000 bytes: only
 * sizes and extents, no such buffer is touched) report it in large counts through the
 * "_c" calls, rebuild from them, and make the int calls fail with MPI_ERR_TYPE. A user
 * reduction made by MPI_Op_create_c ("a op b = a + b + 1", so that MPI_SUM could not pass
 * for it) runs in MPI_Reduce_local, MPI_Reduce and MPI_Allreduce. MPI_Buffer_attach_c
 * lends MPI_Bsend its buffer and MPI_Buffer_detach_c gives it back with its size. Where
 * mpi.h has MPI-IO, ROMIO writes a file through a view made by MPI_Type_vector_c.
 *
 * Usage: large_count_types [DIR] (any number of ranks; the file goes into DIR, default the
 * current directory). test/integration/test_misc.py runs it; the harness is
 * test/comm/comm_common.h.
 */
#include <stdint.h>

#include "../comm/comm_common.h"

#define BIG       3000000000LL /* beyond INT_MAX */
#define TAG_BSEND 31

/* Elements of the source data; types are laid over data + DATA_BASE (resized has lb < 0). */
#define DATA_LEN  512
#define DATA_BASE 16

static int data[DATA_LEN];

/* The int envelopes and contents of two types are equal (old types are predefined). */
static void check_same_record(MPI_Datatype from_int, MPI_Datatype from_c, const char *what)
{
    int ni[2], na[2], nd[2], combiner[2];
    MPI_Datatype types[2] = {from_int, from_c};
    int ints[2][64];
    MPI_Aint addrs[2][64];
    MPI_Datatype olds[2][64];
    MPI_Count cni, cna, cnc, cnd;
    int ccombiner;

    for (int t = 0; t < 2; t++) {
        int rc = MPI_Type_get_envelope(types[t], &ni[t], &na[t], &nd[t], &combiner[t]);

        CHECK(rc == MPI_SUCCESS, "%s: MPI_Type_get_envelope of form %d returned %d", what, t, rc);
        if (rc != MPI_SUCCESS || ni[t] > 64 || na[t] > 64 || nd[t] > 64)
            return;
        rc = MPI_Type_get_contents(types[t], ni[t], na[t], nd[t], ints[t], addrs[t], olds[t]);
        CHECK(rc == MPI_SUCCESS, "%s: MPI_Type_get_contents of form %d returned %d", what, t, rc);
    }
    CHECK(ni[0] == ni[1] && na[0] == na[1] && nd[0] == nd[1] && combiner[0] == combiner[1],
          "%s: envelopes differ: (%d, %d, %d, %d) and (%d, %d, %d, %d)", what, ni[0], na[0], nd[0],
          combiner[0], ni[1], na[1], nd[1], combiner[1]);
    if (ni[0] != ni[1] || na[0] != na[1] || nd[0] != nd[1])
        return;
    CHECK(memcmp(ints[0], ints[1], (size_t)ni[0] * sizeof(int)) == 0, "%s: integers differ", what);
    CHECK(memcmp(addrs[0], addrs[1], (size_t)na[0] * sizeof(MPI_Aint)) == 0, "%s: addresses differ",
          what);
    CHECK(memcmp(olds[0], olds[1], (size_t)nd[0] * sizeof(MPI_Datatype)) == 0,
          "%s: datatypes differ", what);
    /* The "_c" envelope of such a type has no large counts and the same lengths. */
    CHECK(MPI_Type_get_envelope_c(from_c, &cni, &cna, &cnc, &cnd, &ccombiner) == MPI_SUCCESS &&
              cni == ni[1] && cna == na[1] && cnc == 0 && cnd == nd[1] && ccombiner == combiner[1],
          "%s: MPI_Type_get_envelope_c gives (%lld, %lld, %lld, %lld, %d)", what, cni, cna, cnc,
          cnd, ccombiner);
}

/* Same size, extent and packed bytes of two elements; the same record; then free both. */
static void check_same_type(MPI_Datatype from_int, MPI_Datatype from_c, const char *what)
{
    MPI_Count size_int, size_c, lb_int, lb_c, extent_int, extent_c;
    char packed_int[4096], packed_c[4096];
    int pos_int = 0, pack_size = 0;
    MPI_Count pos_c = 0;

    MPI_Type_commit(&from_int);
    MPI_Type_commit(&from_c);
    MPI_Type_size_c(from_int, &size_int);
    MPI_Type_size_c(from_c, &size_c);
    MPI_Type_get_extent_c(from_int, &lb_int, &extent_int);
    MPI_Type_get_extent_c(from_c, &lb_c, &extent_c);
    CHECK(size_int == size_c && size_int > 0, "%s: sizes %lld and %lld", what, size_int, size_c);
    CHECK(lb_int == lb_c && extent_int == extent_c, "%s: bounds (%lld, %lld) and (%lld, %lld)",
          what, lb_int, extent_int, lb_c, extent_c);
    MPI_Pack_size(2, from_int, MPI_COMM_WORLD, &pack_size);
    if (pack_size <= (int)sizeof(packed_int)) {
        memset(packed_int, 0, sizeof(packed_int));
        memset(packed_c, 1, sizeof(packed_c));
        MPI_Pack(data + DATA_BASE, 2, from_int, packed_int, (int)sizeof(packed_int), &pos_int,
                 MPI_COMM_WORLD);
        MPI_Pack_c(data + DATA_BASE, 2, from_c, packed_c, (MPI_Count)sizeof(packed_c), &pos_c,
                   MPI_COMM_WORLD);
        CHECK(pos_int == pack_size && pos_c == pos_int, "%s: packed %d and %lld bytes", what,
              pos_int, pos_c);
        CHECK(memcmp(packed_int, packed_c, (size_t)pos_int) == 0, "%s: packed bytes differ", what);
    } else {
        CHECK(0, "%s: %d packed bytes do not fit the test's buffer", what, pack_size);
    }
    check_same_record(from_int, from_c, what);
    MPI_Type_free(&from_int);
    MPI_Type_free(&from_c);
}

static void check_constructors(void)
{
    MPI_Datatype a, b;
    int blocklens[3] = {2, 1, 3}, disps[3] = {0, 5, 9};
    MPI_Count cblocklens[3] = {2, 1, 3}, cdisps[3] = {0, 5, 9};
    MPI_Aint hdisps[3] = {0, 20, 36};
    MPI_Count chdisps[3] = {0, 20, 36};
    MPI_Datatype struct_types[3] = {MPI_INT, MPI_SHORT, MPI_INT};
    int sizes[2] = {6, 8}, subsizes[2] = {2, 3}, starts[2] = {1, 2};
    MPI_Count csizes[2] = {6, 8}, csubsizes[2] = {2, 3}, cstarts[2] = {1, 2};
    int gsizes[2] = {6, 8}, distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, psizes[2] = {comm_size, 1};
    MPI_Count cgsizes[2] = {6, 8};

    comm_begin("constructors: _c against int");
    MPI_Type_contiguous(5, MPI_INT, &a);
    MPI_Type_contiguous_c(5, MPI_INT, &b);
    check_same_type(a, b, "contiguous");
    MPI_Type_vector(3, 2, 4, MPI_INT, &a);
    MPI_Type_vector_c(3, 2, 4, MPI_INT, &b);
    check_same_type(a, b, "vector");
    MPI_Type_vector(3, 2, -4, MPI_INT, &a);
    MPI_Type_vector_c(3, 2, -4, MPI_INT, &b);
    check_same_type(a, b, "vector with a negative stride");
    MPI_Type_create_hvector(3, 2, 16, MPI_INT, &a);
    MPI_Type_create_hvector_c(3, 2, 16, MPI_INT, &b);
    check_same_type(a, b, "hvector");
    MPI_Type_indexed(3, blocklens, disps, MPI_INT, &a);
    MPI_Type_indexed_c(3, cblocklens, cdisps, MPI_INT, &b);
    check_same_type(a, b, "indexed");
    MPI_Type_create_hindexed(3, blocklens, hdisps, MPI_INT, &a);
    MPI_Type_create_hindexed_c(3, cblocklens, chdisps, MPI_INT, &b);
    check_same_type(a, b, "hindexed");
    MPI_Type_create_indexed_block(3, 2, disps, MPI_INT, &a);
    MPI_Type_create_indexed_block_c(3, 2, cdisps, MPI_INT, &b);
    check_same_type(a, b, "indexed_block");
    MPI_Type_create_hindexed_block(3, 2, hdisps, MPI_INT, &a);
    MPI_Type_create_hindexed_block_c(3, 2, chdisps, MPI_INT, &b);
    check_same_type(a, b, "hindexed_block");
    MPI_Type_create_struct(3, blocklens, hdisps, struct_types, &a);
    MPI_Type_create_struct_c(3, cblocklens, chdisps, struct_types, &b);
    check_same_type(a, b, "struct");
    MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &a);
    MPI_Type_create_subarray_c(2, csizes, csubsizes, cstarts, MPI_ORDER_C, MPI_INT, &b);
    check_same_type(a, b, "subarray C");
    MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_INT, &a);
    MPI_Type_create_subarray_c(2, csizes, csubsizes, cstarts, MPI_ORDER_FORTRAN, MPI_INT, &b);
    check_same_type(a, b, "subarray Fortran");
    MPI_Type_create_darray(comm_size, comm_rank, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C,
                           MPI_INT, &a);
    MPI_Type_create_darray_c(comm_size, comm_rank, 2, cgsizes, distribs, dargs, psizes, MPI_ORDER_C,
                             MPI_INT, &b);
    check_same_type(a, b, "darray");
    MPI_Type_create_resized(MPI_INT, -4, 16, &a);
    MPI_Type_create_resized_c(MPI_INT, -4, 16, &b);
    check_same_type(a, b, "resized");
}

/* A type's "_c" envelope and contents are `nc` large counts equal to `counts`, `ni`
 * integers equal to `ints`, no addresses and `nd` predefined old types `old`. */
static void check_large_record(MPI_Datatype type, int combiner, MPI_Count ni, const int *ints,
                               MPI_Count nc, const MPI_Count *counts, MPI_Count nd,
                               MPI_Datatype old, const char *what)
{
    MPI_Count got_ni, got_na, got_nc, got_nd;
    int got_combiner, got_ints[16], nd_int, na_int, ni_int, c_int, rc;
    MPI_Aint got_addrs[1];
    MPI_Count got_counts[16];
    MPI_Datatype got_types[4];

    rc = MPI_Type_get_envelope_c(type, &got_ni, &got_na, &got_nc, &got_nd, &got_combiner);
    CHECK(rc == MPI_SUCCESS && got_ni == ni && got_na == 0 && got_nc == nc && got_nd == nd &&
              got_combiner == combiner,
          "%s: MPI_Type_get_envelope_c gives (%lld, %lld, %lld, %lld, %d)", what, got_ni, got_na,
          got_nc, got_nd, got_combiner);
    if (rc != MPI_SUCCESS || got_ni > 16 || got_nc > 16 || got_nd > 4)
        return;
    rc = MPI_Type_get_contents_c(type, got_ni, got_na, got_nc, got_nd, got_ints, got_addrs,
                                 got_counts, got_types);
    CHECK(rc == MPI_SUCCESS, "%s: MPI_Type_get_contents_c returned %d", what, rc);
    for (MPI_Count i = 0; rc == MPI_SUCCESS && i < ni; i++)
        CHECK(got_ints[i] == ints[i], "%s: integer %lld is %d, not %d", what, i, got_ints[i],
              ints[i]);
    for (MPI_Count i = 0; rc == MPI_SUCCESS && i < nc; i++)
        CHECK(got_counts[i] == counts[i], "%s: large count %lld is %lld, not %lld", what, i,
              got_counts[i], counts[i]);
    for (MPI_Count i = 0; rc == MPI_SUCCESS && i < nd; i++)
        CHECK(got_types[i] == old, "%s: datatype %lld is not the old type", what, i);
    /* Too little room for the large counts is an error, not a short copy. */
    rc = MPI_Type_get_contents_c(type, got_ni, got_na, got_nc - 1, got_nd, got_ints, got_addrs,
                                 got_counts, got_types);
    CHECK(rc != MPI_SUCCESS, "%s: MPI_Type_get_contents_c with max_large_counts %lld succeeded",
          what, got_nc - 1);
    /* MPI-4.0 section 5.1.13: the int calls cannot describe it. */
    rc = MPI_Type_get_envelope(type, &ni_int, &na_int, &nd_int, &c_int);
    CHECK(rc != MPI_SUCCESS, "%s: MPI_Type_get_envelope succeeded", what);
    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &c_int);
        CHECK(c_int == MPI_ERR_TYPE, "%s: MPI_Type_get_envelope's error class is %d", what, c_int);
    }
    rc = MPI_Type_get_contents(type, 16, 1, 4, got_ints, got_addrs, got_types);
    CHECK(rc != MPI_SUCCESS, "%s: MPI_Type_get_contents succeeded", what);
    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &c_int);
        CHECK(c_int == MPI_ERR_TYPE, "%s: MPI_Type_get_contents's error class is %d", what, c_int);
    }
}

static void check_size_extent(MPI_Datatype type, MPI_Count size, MPI_Count lb, MPI_Count extent,
                              const char *what)
{
    MPI_Count got_size = -1, got_lb = -1, got_extent = -1;

    MPI_Type_size_c(type, &got_size);
    MPI_Type_get_extent_c(type, &got_lb, &got_extent);
    CHECK(got_size == size && got_lb == lb && got_extent == extent,
          "%s: size %lld, lb %lld, extent %lld; expected %lld, %lld, %lld", what, got_size, got_lb,
          got_extent, size, lb, extent);
}

static void check_large_types(void)
{
    MPI_Datatype type, rebuilt;
    int size_int, rc, cls;
    MPI_Count size_c = 0;

    comm_begin("large counts: contiguous");
    MPI_Type_contiguous_c(BIG, MPI_BYTE, &type);
    check_size_extent(type, BIG, 0, BIG, "contiguous_c(3e9, MPI_BYTE)");
    check_large_record(type, MPI_COMBINER_CONTIGUOUS, 0, NULL, 1, (MPI_Count[]){BIG}, 1, MPI_BYTE,
                       "contiguous_c(3e9, MPI_BYTE)");
    MPI_Type_commit(&type);
    MPI_Pack_size_c(2, type, MPI_COMM_WORLD, &size_c);
    CHECK(size_c == 2 * BIG, "MPI_Pack_size_c of two 3e9-byte elements is %lld", size_c);
    rc = MPI_Pack_size(1, type, MPI_COMM_WORLD, &size_int);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_COUNT,
          "MPI_Pack_size of 3e9 bytes: rc %d class %d, not MPI_ERR_COUNT", rc, cls);
    MPI_Pack_external_size_c("external32", 2, type, &size_c);
    CHECK(size_c == 2 * BIG, "MPI_Pack_external_size_c of two 3e9-byte elements is %lld", size_c);
    MPI_Type_free(&type);

    comm_begin("large counts: vector with a large stride");
    MPI_Type_vector_c(2, 3, BIG, MPI_BYTE, &type);
    check_size_extent(type, 6, 0, BIG + 3, "vector_c(2, 3, 3e9)");
    check_large_record(type, MPI_COMBINER_VECTOR, 0, NULL, 3, (MPI_Count[]){2, 3, BIG}, 1, MPI_BYTE,
                       "vector_c(2, 3, 3e9)");
    /* Rebuilt from its contents, it is the same type. */
    MPI_Type_vector_c(2, 3, BIG, MPI_BYTE, &rebuilt);
    check_size_extent(rebuilt, 6, 0, BIG + 3, "vector_c rebuilt");
    MPI_Type_free(&rebuilt);
    MPI_Type_free(&type);

    comm_begin("large counts: hvector");
    MPI_Type_create_hvector_c(2, BIG, 4 * BIG, MPI_BYTE, &type);
    check_size_extent(type, 2 * BIG, 0, 5 * BIG, "hvector_c(2, 3e9, 1.2e10)");
    check_large_record(type, MPI_COMBINER_HVECTOR, 0, NULL, 3, (MPI_Count[]){2, BIG, 4 * BIG}, 1,
                       MPI_BYTE, "hvector_c");
    MPI_Type_free(&type);

    comm_begin("large counts: indexed");
    MPI_Type_indexed_c(2, (MPI_Count[]){1, 2}, (MPI_Count[]){0, BIG}, MPI_SHORT, &type);
    check_size_extent(type, 6, 0, 2 * BIG + 4, "indexed_c({1, 2}, {0, 3e9})");
    check_large_record(type, MPI_COMBINER_INDEXED, 0, NULL, 5, (MPI_Count[]){2, 1, 2, 0, BIG}, 1,
                       MPI_SHORT, "indexed_c");
    MPI_Type_free(&type);

    comm_begin("large counts: hindexed");
    MPI_Type_create_hindexed_c(2, (MPI_Count[]){BIG, 1}, (MPI_Count[]){0, BIG}, MPI_BYTE, &type);
    check_size_extent(type, BIG + 1, 0, BIG + 1, "hindexed_c({3e9, 1}, {0, 3e9})");
    check_large_record(type, MPI_COMBINER_HINDEXED, 0, NULL, 5, (MPI_Count[]){2, BIG, 1, 0, BIG}, 1,
                       MPI_BYTE, "hindexed_c");
    MPI_Type_free(&type);

    comm_begin("large counts: indexed_block");
    MPI_Type_create_indexed_block_c(2, 1, (MPI_Count[]){BIG, 0}, MPI_INT, &type);
    check_size_extent(type, 8, 0, 4 * BIG + 4, "indexed_block_c(1, {3e9, 0})");
    check_large_record(type, MPI_COMBINER_INDEXED_BLOCK, 0, NULL, 4, (MPI_Count[]){2, 1, BIG, 0}, 1,
                       MPI_INT, "indexed_block_c");
    MPI_Type_free(&type);

    comm_begin("large counts: hindexed_block");
    MPI_Type_create_hindexed_block_c(2, BIG, (MPI_Count[]){0, BIG}, MPI_BYTE, &type);
    check_size_extent(type, 2 * BIG, 0, 2 * BIG, "hindexed_block_c(3e9, {0, 3e9})");
    check_large_record(type, MPI_COMBINER_HINDEXED_BLOCK, 0, NULL, 4, (MPI_Count[]){2, BIG, 0, BIG},
                       1, MPI_BYTE, "hindexed_block_c");
    MPI_Type_free(&type);

    comm_begin("large counts: struct");
    MPI_Type_create_struct_c(2, (MPI_Count[]){BIG, 1}, (MPI_Count[]){0, BIG},
                             (MPI_Datatype[]){MPI_BYTE, MPI_BYTE}, &type);
    check_size_extent(type, BIG + 1, 0, BIG + 1, "struct_c({3e9, 1}, {0, 3e9})");
    check_large_record(type, MPI_COMBINER_STRUCT, 0, NULL, 5, (MPI_Count[]){2, BIG, 1, 0, BIG}, 2,
                       MPI_BYTE, "struct_c");
    MPI_Type_free(&type);

    comm_begin("large counts: subarray");
    MPI_Type_create_subarray_c(1, (MPI_Count[]){BIG}, (MPI_Count[]){2}, (MPI_Count[]){5},
                               MPI_ORDER_C, MPI_BYTE, &type);
    check_size_extent(type, 2, 0, BIG, "subarray_c({3e9}, {2}, {5})");
    check_large_record(type, MPI_COMBINER_SUBARRAY, 2, (int[]){1, MPI_ORDER_C}, 3,
                       (MPI_Count[]){BIG, 2, 5}, 1, MPI_BYTE, "subarray_c");
    MPI_Type_free(&type);

    comm_begin("large counts: darray");
    MPI_Type_create_darray_c(1, 0, 1, (MPI_Count[]){BIG}, (int[]){MPI_DISTRIBUTE_NONE},
                             (int[]){MPI_DISTRIBUTE_DFLT_DARG}, (int[]){1}, MPI_ORDER_C, MPI_BYTE,
                             &type);
    check_size_extent(type, BIG, 0, BIG, "darray_c({3e9})");
    check_large_record(
        type, MPI_COMBINER_DARRAY, 7,
        (int[]){1, 0, 1, MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_DFLT_DARG, 1, MPI_ORDER_C}, 1,
        (MPI_Count[]){BIG}, 1, MPI_BYTE, "darray_c");
    MPI_Type_free(&type);

    comm_begin("large counts: resized");
    /* lb and extent are MPI_Aint in the int form: a "_c" resized type always fits it. */
    MPI_Type_create_resized_c(MPI_BYTE, -BIG, 2 * BIG, &type);
    check_size_extent(type, 1, -BIG, 2 * BIG, "resized_c(-3e9, 6e9)");
    {
        int ni, na, nd, combiner;
        MPI_Aint addrs[2] = {0, 0};
        MPI_Datatype old;

        rc = MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
        CHECK(rc == MPI_SUCCESS && ni == 0 && na == 2 && nd == 1 &&
                  combiner == MPI_COMBINER_RESIZED,
              "resized_c: MPI_Type_get_envelope rc %d gives (%d, %d, %d, %d)", rc, ni, na, nd,
              combiner);
        MPI_Type_get_contents(type, 0, 2, 1, NULL, addrs, &old);
        CHECK(addrs[0] == -BIG && addrs[1] == 2 * BIG && old == MPI_BYTE,
              "resized_c: contents (%ld, %ld)", (long)addrs[0], (long)addrs[1]);
    }
    MPI_Type_free(&type);
}

static void check_pack(void)
{
    MPI_Datatype vec;
    int out_int[64], unpacked[DATA_LEN];
    char packed[1024], packed_int[1024];
    MPI_Count size = 0, pos = 0, upos = 0;
    int pos_int = 0, rc, cls;

    comm_begin("MPI_Pack_c, MPI_Unpack_c, MPI_Pack_size_c");
    MPI_Type_vector_c(4, 3, 5, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Pack_size_c(3, vec, MPI_COMM_WORLD, &size);
    CHECK(size == 3 * 12 * (MPI_Count)sizeof(int), "MPI_Pack_size_c is %lld", size);
    rc = MPI_Pack_c(data, 3, vec, packed, (MPI_Count)sizeof(packed), &pos, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS && pos == size, "MPI_Pack_c: rc %d, position %lld", rc, pos);
    MPI_Pack(data, 3, vec, packed_int, (int)sizeof(packed_int), &pos_int, MPI_COMM_WORLD);
    CHECK(pos_int == pos && memcmp(packed, packed_int, (size_t)pos) == 0,
          "MPI_Pack_c and MPI_Pack differ");
    /* Element e's block b starts at int e * 18 + b * 5 (the extent is 3 * 5 + 3 ints). */
    memcpy(out_int, packed, sizeof(int) * 4);
    CHECK(out_int[0] == data[0] && out_int[3] == data[5], "packed ints %d %d", out_int[0],
          out_int[3]);
    memset(unpacked, 0xff, sizeof(unpacked));
    rc = MPI_Unpack_c(packed, pos, &upos, unpacked, 3, vec, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS && upos == pos, "MPI_Unpack_c: rc %d, position %lld", rc, upos);
    for (int e = 0; e < 3; e++) {
        for (int b = 0; b < 4; b++) {
            for (int i = 0; i < 3; i++) {
                int at = e * 18 + b * 5 + i;

                CHECK(unpacked[at] == data[at], "unpacked[%d] is %d, not %d", at, unpacked[at],
                      data[at]);
            }
        }
    }
    CHECK(unpacked[3] == -1 && unpacked[4] == -1, "MPI_Unpack_c wrote into the gaps");
    /* Too small a buffer: MPI_ERR_TRUNCATE, position unchanged. */
    pos = 8;
    rc = MPI_Pack_c(data, 3, vec, packed, 16, &pos, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_TRUNCATE && pos == 8,
          "MPI_Pack_c into 16 bytes: class %d, position %lld", cls, pos);
    MPI_Type_free(&vec);

    comm_begin("MPI_Pack_external_c, MPI_Unpack_external_c, MPI_Pack_external_size_c");
    {
        int values[4] = {1, -2, 0x01020304, 7}, back[4] = {0, 0, 0, 0};
        unsigned char ext[64], ext_int[64];
        MPI_Aint pos_aint = 0;

        size = 0;
        MPI_Pack_external_size_c("external32", 4, MPI_INT, &size);
        CHECK(size == 16, "MPI_Pack_external_size_c of 4 MPI_INT is %lld", size);
        pos = 0;
        rc = MPI_Pack_external_c("external32", values, 4, MPI_INT, ext, (MPI_Count)sizeof(ext),
                                 &pos);
        CHECK(rc == MPI_SUCCESS && pos == 16, "MPI_Pack_external_c: rc %d, position %lld", rc, pos);
        /* external32 is big-endian. */
        CHECK(ext[8] == 1 && ext[9] == 2 && ext[10] == 3 && ext[11] == 4,
              "external32 bytes %02x %02x %02x %02x", ext[8], ext[9], ext[10], ext[11]);
        MPI_Pack_external("external32", values, 4, MPI_INT, ext_int, (MPI_Aint)sizeof(ext_int),
                          &pos_aint);
        CHECK(pos_aint == 16 && memcmp(ext, ext_int, 16) == 0,
              "MPI_Pack_external_c and MPI_Pack_external differ");
        upos = 0;
        rc = MPI_Unpack_external_c("external32", ext, pos, &upos, back, 4, MPI_INT);
        CHECK(rc == MPI_SUCCESS && upos == 16 && memcmp(back, values, sizeof(values)) == 0,
              "MPI_Unpack_external_c: rc %d, position %lld, %d %d %d %d", rc, upos, back[0],
              back[1], back[2], back[3]);
    }
}

/* "a op b = a + b + 1": commutative and associative, and not MPI_SUM. */
static MPI_Count op_last_len = -1;
static int op_calls;

static void op_plus_one(void *invec, void *inoutvec, MPI_Count *len, MPI_Datatype *datatype)
{
    const int *in = invec;
    int *inout = inoutvec;

    op_calls++;
    op_last_len = *len;
    if (*datatype != MPI_INT) {
        op_last_len = -2;
        return;
    }
    for (MPI_Count i = 0; i < *len; i++)
        inout[i] = in[i] + inout[i] + 1;
}

static void check_op(void)
{
    MPI_Op op;
    int in[7], inout[7], result[7], sum_ranks = comm_size * (comm_size - 1) / 2;

    comm_begin("MPI_Op_create_c");
    CHECK(MPI_Op_create_c(op_plus_one, 1, &op) == MPI_SUCCESS, "MPI_Op_create_c failed");
    for (int i = 0; i < 7; i++) {
        in[i] = i;
        inout[i] = 10 * i;
    }
    MPI_Reduce_local(in, inout, 7, MPI_INT, op);
    CHECK(op_calls > 0 && op_last_len == 7, "MPI_Reduce_local: %d calls, last len %lld", op_calls,
          op_last_len);
    for (int i = 0; i < 7; i++)
        CHECK(inout[i] == 11 * i + 1, "MPI_Reduce_local: inout[%d] is %d", i, inout[i]);
    MPI_Reduce_local_c(in, inout, 7, MPI_INT, op);
    CHECK(inout[6] == 11 * 6 + 1 + 6 + 1, "MPI_Reduce_local_c: inout[6] is %d", inout[6]);

    for (int i = 0; i < 7; i++)
        in[i] = comm_rank + i;
    memset(result, 0, sizeof(result));
    MPI_Allreduce(in, result, 7, MPI_INT, op, MPI_COMM_WORLD);
    for (int i = 0; i < 7; i++)
        CHECK(result[i] == sum_ranks + comm_size * i + comm_size - 1,
              "MPI_Allreduce: result[%d] is %d", i, result[i]);
    memset(result, 0, sizeof(result));
    MPI_Allreduce_c(in, result, 7, MPI_INT, op, MPI_COMM_WORLD);
    CHECK(result[6] == sum_ranks + comm_size * 6 + comm_size - 1, "MPI_Allreduce_c: %d", result[6]);
    memset(result, 0, sizeof(result));
    MPI_Reduce(in, result, 7, MPI_INT, op, comm_size - 1, MPI_COMM_WORLD);
    if (comm_rank == comm_size - 1) {
        for (int i = 0; i < 7; i++)
            CHECK(result[i] == sum_ranks + comm_size * i + comm_size - 1,
                  "MPI_Reduce: result[%d] is %d", i, result[i]);
    }
    MPI_Op_free(&op);
}

static void check_buffer(void)
{
    MPI_Count size = -1, attached_size = 4 * (MPI_Count)sizeof(int) + MPI_BSEND_OVERHEAD;
    void *attached = malloc((size_t)attached_size), *detached = NULL;
    int message[4] = {comm_rank, 1, 2, 3}, got[4] = {-1, -1, -1, -1}, int_size = -1, rc, cls;
    int to = (comm_rank + 1) % comm_size, from = (comm_rank + comm_size - 1) % comm_size;
    char *huge;

    comm_begin("MPI_Buffer_attach_c, MPI_Bsend, MPI_Buffer_detach_c");
    CHECK(MPI_Buffer_attach_c(attached, attached_size) == MPI_SUCCESS,
          "MPI_Buffer_attach_c failed");
    CHECK(MPI_Bsend(message, 4, MPI_INT, to, TAG_BSEND, MPI_COMM_WORLD) == MPI_SUCCESS,
          "MPI_Bsend failed");
    MPI_Recv(got, 4, MPI_INT, from, TAG_BSEND, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(got[0] == from && got[3] == 3, "received %d ... %d", got[0], got[3]);
    CHECK(MPI_Buffer_detach_c(&detached, &size) == MPI_SUCCESS, "MPI_Buffer_detach_c failed");
    CHECK(detached == attached && size == attached_size,
          "MPI_Buffer_detach_c gave %p, %lld; attached %p, %lld", detached, size, attached,
          attached_size);
    free(attached);

    /* A buffer beyond INT_MAX: only its first bytes are written, so malloc's untouched
     * pages do; the int MPI_Buffer_detach cannot say its size and leaves it attached. */
    huge = malloc((size_t)BIG);
    if (huge == NULL)
        return;
    MPI_Buffer_attach_c(huge, BIG);
    rc = MPI_Buffer_detach(&detached, &int_size);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_COUNT,
          "MPI_Buffer_detach of 3e9 bytes: rc %d class %d, not MPI_ERR_COUNT", rc, cls);
    size = 0;
    CHECK(MPI_Buffer_detach_c(&detached, &size) == MPI_SUCCESS && detached == huge && size == BIG,
          "MPI_Buffer_detach_c of 3e9 bytes gave %lld", size);
    free(huge);
}

#ifdef MPI_MODE_RDONLY
/* A file view made by a "_c" constructor with small values: ROMIO decodes it with the int
 * MPI_Type_get_envelope/get_contents, which a large-count record would make fail. Rank r
 * writes blocks of 2 ints every 2 * size ints from int 2 * r, then reads the whole file. */
static void check_file_view(const char *dir)
{
    char path[512];
    int mine[6], all[6 * 64], pid = (int)getpid(), rc;
    MPI_Datatype filetype;
    MPI_File fh;

    comm_begin("file view of a _c type (ROMIO)");
    if (comm_size > 64)
        return;
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof(path), "%s/large_count_types.%d", dir, pid);
    for (int i = 0; i < 6; i++)
        mine[i] = 100 * comm_rank + i;
    MPI_Type_vector_c(3, 2, 2 * (MPI_Count)comm_size, MPI_INT, &filetype);
    MPI_Type_commit(&filetype);
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    CHECK(rc == MPI_SUCCESS, "MPI_File_open of %s returned %d", path, rc);
    if (rc != MPI_SUCCESS)
        return;
    rc = MPI_File_set_view(fh, (MPI_Offset)(2 * comm_rank * sizeof(int)), MPI_INT, filetype,
                           "native", MPI_INFO_NULL);
    CHECK(rc == MPI_SUCCESS, "MPI_File_set_view with the vector_c type returned %d", rc);
    rc = MPI_File_write_all(fh, mine, 6, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS, "MPI_File_write_all returned %d", rc);
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    memset(all, 0xff, sizeof(all));
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    if (rc == MPI_SUCCESS) {
        MPI_File_read_at(fh, 0, all, 6 * comm_size, MPI_INT, MPI_STATUS_IGNORE);
        MPI_File_close(&fh);
    }
    for (int at = 0; at < 6 * comm_size; at++) {
        int block = at / (2 * comm_size), owner = at % (2 * comm_size) / 2;
        int expected = 100 * owner + 2 * block + at % 2;

        CHECK(all[at] == expected, "file int %d is %d, not %d", at, all[at], expected);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (comm_rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    MPI_Type_free(&filetype);
}
#endif

int main(int argc, char **argv)
{
    comm_init(&argc, &argv, "large_count_types");
    /* Datatype errors go to MPI_COMM_WORLD's handler, those of no communicator to
     * MPI_COMM_SELF's in MPI-4.0: the checks read the codes. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    for (int i = 0; i < DATA_LEN; i++)
        data[i] = 1000 * comm_rank + i;
    check_constructors();
    check_large_types();
    check_pack();
    check_op();
    check_buffer();
#ifdef MPI_MODE_RDONLY
    check_file_view(argc > 1 ? argv[1] : ".");
#endif
    return comm_finish();
}
