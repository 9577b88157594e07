/*
 * reductions.h: the reductions the conformance programs check, each with its own C model
 * of the operation, so that the expected results do not come from the library under test.
 *
 *   sum_int     MPI_SUM on MPI_INT
 *   max_double  MPI_MAX on MPI_DOUBLE (the maximum moves between ranks with the position)
 *   minloc_2int MPI_MINLOC on MPI_2INT (many ties: the lowest index must win)
 *   maxloc_dint MPI_MAXLOC on MPI_DOUBLE_INT
 *   band_byte   MPI_BXOR on MPI_BYTE... and MPI_BAND on MPI_UNSIGNED (bitwise)
 *   matmul      a user op, NOT commutative: 2x2 unsigned matrices, inout = in * inout
 *   vec_add     a user op, commutative, on a derived type with gaps (coll_common.h's vec)
 */
#ifndef COLL_REDUCTIONS_H
#define COLL_REDUCTIONS_H

#include "coll_common.h"

typedef struct red {
    const char *name;
    MPI_Datatype type; /* set by red_init for the derived ones */
    MPI_Op op;         /* set by red_init for the user ops */
    size_t elem;       /* bytes of one element (the type's extent) */
    /* rank r's element at data position p */
    void (*value)(int r, size_t p, void *elem);
    /* right = left op right */
    void (*combine)(const void *left, void *right);
    /* equal data (gaps are checked too, where the type has them) */
    int (*equal)(const void *got, const void *want);
    int large; /* checked at the large size too */
} red_t;

static void sum_int_value(int r, size_t p, void *e)
{
    *(int *)e = (int)coll_value(r + 1, p);
}
static void sum_int_combine(const void *l, void *r)
{
    *(int *)r = *(const int *)l + *(int *)r;
}
static int int_equal(const void *a, const void *b)
{
    return *(const int *)a == *(const int *)b;
}

static void max_double_value(int r, size_t p, void *e)
{
    *(double *)e = (double)((r * 37 + (int)p * 11) % 101) + 0.5 * r;
}
static void max_double_combine(const void *l, void *r)
{
    if (*(const double *)l > *(double *)r)
        *(double *)r = *(const double *)l;
}
static int double_equal(const void *a, const void *b)
{
    return *(const double *)a == *(const double *)b;
}

typedef struct {
    int value, index;
} pair_int_t;
typedef struct {
    double value;
    int index;
} pair_double_t;

static void minloc_value(int r, size_t p, void *e)
{
    pair_int_t *x = e;
    x->value = (int)((p + (size_t)r) % 3); /* many ties */
    x->index = (r * 5 + 3) % 8;            /* not in rank order */
}
static void minloc_combine(const void *l, void *r)
{
    const pair_int_t *a = l;
    pair_int_t *b = r;
    if (a->value < b->value || (a->value == b->value && a->index < b->index))
        *b = *a;
}
static int pair_int_equal(const void *a, const void *b)
{
    return memcmp(a, b, sizeof(pair_int_t)) == 0;
}

static void maxloc_value(int r, size_t p, void *e)
{
    pair_double_t *x = e;
    memset(x, 0, sizeof(*x));
    x->value = (double)((p * 3 + (size_t)r) % 4);
    x->index = 100 - r;
}
static void maxloc_combine(const void *l, void *r)
{
    const pair_double_t *a = l;
    pair_double_t *b = r;
    if (a->value > b->value || (a->value == b->value && a->index < b->index))
        *b = *a;
}
static int pair_double_equal(const void *a, const void *b)
{
    const pair_double_t *x = a, *y = b;
    return x->value == y->value && x->index == y->index;
}

static void band_value(int r, size_t p, void *e)
{
    *(unsigned *)e = ~(1u << ((unsigned)(r + p) % 32)) & (0xffff0000u | (unsigned)p);
}
static void band_combine(const void *l, void *r)
{
    *(unsigned *)r = *(const unsigned *)l & *(unsigned *)r;
}
static int uint_equal(const void *a, const void *b)
{
    return *(const unsigned *)a == *(const unsigned *)b;
}

/* 2x2 matrices of unsigned (wrapping) arithmetic. */
static void matmul_value(int r, size_t p, void *e)
{
    unsigned *m = e;
    m[0] = 1;
    m[1] = (unsigned)(r + 1 + (int)(p % 5));
    m[2] = (unsigned)((r * (int)(p % 7)) % 3);
    m[3] = 1 + (unsigned)(p % 2);
}
static void matmul_combine(const void *l, void *r)
{
    const unsigned *a = l;
    unsigned *b = r;
    unsigned c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                     a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
    memcpy(b, c, sizeof(c));
}
static int matmul_equal(const void *a, const void *b)
{
    return memcmp(a, b, 4 * sizeof(unsigned)) == 0;
}
static void matmul_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    for (int k = 0; k < *len; k++)
        matmul_combine((unsigned *)in + 4 * k, (unsigned *)inout + 4 * k);
}

/* vec: ints at 0 and 2 of 3, a gap at 1. */
static void vec_value(int r, size_t p, void *e)
{
    int *v = e;
    v[0] = (int)coll_value(r + 1, 2 * p);
    v[1] = COLL_GAP;
    v[2] = (int)coll_value(r + 1, 2 * p + 1);
}
static void vec_combine(const void *l, void *r)
{
    const int *a = l;
    int *b = r;
    b[0] += a[0];
    b[2] += a[2];
}
static int vec_equal(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return x[0] == y[0] && x[2] == y[2] && x[1] == COLL_GAP;
}
static void vec_add_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    MPI_Aint lb, extent;

    /* Through the type, as a user function on derived types is written. */
    MPI_Type_get_extent(*type, &lb, &extent);
    for (int k = 0; k < *len; k++)
        vec_combine((char *)in + k * extent, (char *)inout + k * extent);
}

static red_t reds[] = {
    {"sum_int", MPI_DATATYPE_NULL, MPI_OP_NULL, sizeof(int), sum_int_value, sum_int_combine,
     int_equal, 1},
    {"max_double", MPI_DATATYPE_NULL, MPI_OP_NULL, sizeof(double), max_double_value,
     max_double_combine, double_equal, 1},
    {"minloc_2int", MPI_DATATYPE_NULL, MPI_OP_NULL, sizeof(pair_int_t), minloc_value,
     minloc_combine, pair_int_equal, 0},
    {"maxloc_double_int", MPI_DATATYPE_NULL, MPI_OP_NULL, sizeof(pair_double_t), maxloc_value,
     maxloc_combine, pair_double_equal, 0},
    {"band_unsigned", MPI_DATATYPE_NULL, MPI_OP_NULL, sizeof(unsigned), band_value, band_combine,
     uint_equal, 0},
    {"matmul_user_noncommutative", MPI_DATATYPE_NULL, MPI_OP_NULL, 4 * sizeof(unsigned),
     matmul_value, matmul_combine, matmul_equal, 0},
    {"vec_add_user_derived", MPI_DATATYPE_NULL, MPI_OP_NULL, 3 * sizeof(int), vec_value,
     vec_combine, vec_equal, 0},
};
#define NUM_REDS ((int)(sizeof(reds) / sizeof(reds[0])))

static void red_init(void)
{
    MPI_Datatype mat;

    reds[0].type = MPI_INT, reds[0].op = MPI_SUM;
    reds[1].type = MPI_DOUBLE, reds[1].op = MPI_MAX;
    reds[2].type = MPI_2INT, reds[2].op = MPI_MINLOC;
    reds[3].type = MPI_DOUBLE_INT, reds[3].op = MPI_MAXLOC;
    reds[4].type = MPI_UNSIGNED, reds[4].op = MPI_BAND;
    MPI_Type_contiguous(4, MPI_UNSIGNED, &mat);
    MPI_Type_commit(&mat);
    reds[5].type = mat;
    MPI_Op_create(matmul_fn, 0, &reds[5].op);
    reds[6].type = coll_types[KIND_VEC];
    MPI_Op_create(vec_add_fn, 1, &reds[6].op);
}

static void red_fini(void)
{
    MPI_Type_free(&reds[5].type);
    MPI_Op_free(&reds[5].op);
    MPI_Op_free(&reds[6].op);
}

/* Rank r's `count` elements from data position `off`. */
static void red_fill(const red_t *rd, void *buf, size_t count, size_t off, int r)
{
    for (size_t e = 0; e < count; e++)
        rd->value(r, off + e, (char *)buf + e * rd->elem);
}

/* Check `count` elements from position `off` against ranks lo..hi reduced in order. */
static void red_verify(const red_t *rd, const void *buf, size_t count, size_t off, int lo, int hi,
                       const char *what)
{
    char acc[64], val[64];

    for (size_t e = 0; e < count; e++) {
        rd->value(hi, off + e, acc);
        for (int r = hi - 1; r >= lo; r--) {
            rd->value(r, off + e, val);
            rd->combine(val, acc);
        }
        if (!rd->equal((const char *)buf + e * rd->elem, acc)) {
            coll_checks++;
            coll_fail("%s %s: element %zu of %zu (ranks %d..%d) is wrong", what, rd->name, e, count,
                      lo, hi);
            return;
        }
    }
    coll_checks++;
}

#endif /* COLL_REDUCTIONS_H */
