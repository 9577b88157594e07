/*
 * datatype.c: derived datatypes in messages (MPI-3.1 chapter 4): every constructor on the
 * sending side and on the receiving side, the peer using a different type of the same type
 * signature (vector against contiguous, one shape against another); gaps of a type left
 * untouched on receive; MPI_Get_elements and MPI_Get_count on a message that fills a
 * derived type only partly; MPI_PACKED against typed data.
 *
 * The expected layout of each type is written out by hand (offsets in ints), not computed
 * with MPI, so that a wrong type map in the library cannot hide itself.
 *
 * Every rank sends to NEXT and receives from PREV (itself with one rank).
 *   mpicc -O2 datatype.c -o datatype && mpirun -np 2 ./datatype
 */
#include "p2p_common.h"

#define SENTINEL (-7777777)

/* The int at index i of rank r's send array. */
static int value(int r, long i)
{
    return r * 10000000 + (int)i;
}

/* A type over ints and its hand-written map: the int offsets of one element, in order. */
typedef struct layout {
    const char *name;
    MPI_Datatype type;
    int n;           /* ints in one element */
    int offsets[16]; /* their offsets, in type-map order */
    int extent;      /* in ints */
} layout_t;

static MPI_Datatype committed(MPI_Datatype t)
{
    MPI_OK(MPI_Type_commit(&t));
    return t;
}

/* Every constructor, over MPI_INT, with the layout each must have. */
static int make_layouts(layout_t *l)
{
    const int isz = (int)sizeof(int);
    MPI_Datatype t, inner;
    int n = 0;

    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &t));
    l[n++] = (layout_t){"contiguous", committed(t), 3, {0, 1, 2}, 3};

    MPI_OK(MPI_Type_vector(3, 2, 5, MPI_INT, &t));
    l[n++] = (layout_t){"vector", committed(t), 6, {0, 1, 5, 6, 10, 11}, 12};

    MPI_OK(MPI_Type_create_hvector(3, 2, 5 * isz, MPI_INT, &t));
    l[n++] = (layout_t){"hvector", committed(t), 6, {0, 1, 5, 6, 10, 11}, 12};

    {
        int bl[] = {2, 1, 3}, dl[] = {4, 0, 8};
        MPI_Aint hdl[] = {4 * isz, 0, 8 * isz};
        MPI_OK(MPI_Type_indexed(3, bl, dl, MPI_INT, &t));
        l[n++] = (layout_t){"indexed", committed(t), 6, {4, 5, 0, 8, 9, 10}, 11};
        MPI_OK(MPI_Type_create_hindexed(3, bl, hdl, MPI_INT, &t));
        l[n++] = (layout_t){"hindexed", committed(t), 6, {4, 5, 0, 8, 9, 10}, 11};
    }
    {
        int dl[] = {6, 0, 3};
        MPI_Aint hdl[] = {6 * isz, 0, 3 * isz};
        MPI_OK(MPI_Type_create_indexed_block(3, 2, dl, MPI_INT, &t));
        l[n++] = (layout_t){"indexed_block", committed(t), 6, {6, 7, 0, 1, 3, 4}, 8};
        MPI_OK(MPI_Type_create_hindexed_block(3, 2, hdl, MPI_INT, &t));
        l[n++] = (layout_t){"hindexed_block", committed(t), 6, {6, 7, 0, 1, 3, 4}, 8};
    }
    {
        int bl[] = {2, 1};
        MPI_Aint dl[] = {0, 7 * isz};
        MPI_Datatype types[] = {MPI_INT, MPI_INT};
        MPI_OK(MPI_Type_create_struct(2, bl, dl, types, &t));
        l[n++] = (layout_t){"struct", committed(t), 3, {0, 1, 7}, 8};
    }
    MPI_OK(MPI_Type_vector(2, 1, 3, MPI_INT, &inner));
    MPI_OK(MPI_Type_create_resized(inner, 0, 7 * isz, &t));
    l[n++] = (layout_t){"resized", committed(t), 2, {0, 3}, 7};
    MPI_OK(MPI_Type_dup(inner, &t));
    l[n++] = (layout_t){"dup", committed(t), 2, {0, 3}, 4};
    /* A vector of vectors: blocks of `inner` (extent 4 ints) every 2 extents. */
    MPI_OK(MPI_Type_vector(2, 1, 2, inner, &t));
    l[n++] = (layout_t){"nested vector", committed(t), 4, {0, 3, 8, 11}, 12};
    MPI_OK(MPI_Type_free(&inner));
    {
        int sizes[] = {4, 5}, sub[] = {2, 3}, starts[] = {1, 1};
        MPI_OK(MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &t));
        l[n++] = (layout_t){"subarray C", committed(t), 6, {6, 7, 8, 11, 12, 13}, 20};
        MPI_OK(MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_FORTRAN, MPI_INT, &t));
        l[n++] = (layout_t){"subarray Fortran", committed(t), 6, {5, 6, 9, 10, 13, 14}, 20};
    }
    {
        int sizes[] = {3, 4, 5}, sub[] = {2, 2, 2}, starts[] = {1, 2, 3};
        /* (i, j, k) at 20 i + 5 j + k, k fastest */
        MPI_OK(MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &t));
        l[n++] = (layout_t){"subarray 3d", committed(t), 8, {33, 34, 38, 39, 53, 54, 58, 59}, 60};
    }
    return n;
}

static void free_layouts(layout_t *l, int n)
{
    for (int i = 0; i < n; i++)
        MPI_OK(MPI_Type_free(&l[i].type));
}

/* The extent and size MPI reports agree with the hand-written layout. */
static void check_layout(const layout_t *l)
{
    MPI_Aint lb, extent;
    int size;
    MPI_OK(MPI_Type_get_extent(l->type, &lb, &extent));
    MPI_OK(MPI_Type_size(l->type, &size));
    CHECK(lb == 0 && extent == (MPI_Aint)(l->extent * sizeof(int)) &&
              size == l->n * (int)sizeof(int),
          "%s: lb %td extent %td size %d, expected 0, %zu, %zu", l->name, lb, extent, size,
          l->extent * sizeof(int), l->n * sizeof(int));
}

/*
 * `count` elements of the layout's type to NEXT, received as contiguous ints (and, when
 * `both_sides`, the other way too: contiguous ints received into the type).
 */
static void exchange_layout(const layout_t *l, int count)
{
    long span = (long)count * l->extent, total = (long)count * l->n;
    int *sbuf = p2p_malloc(sizeof(int) * (size_t)span);
    int *packed = p2p_malloc(sizeof(int) * (size_t)(total + 1));
    int *scontig = p2p_malloc(sizeof(int) * (size_t)total);
    int *rtyped = p2p_malloc(sizeof(int) * (size_t)span);
    MPI_Request req[4];
    MPI_Status st[4];
    long bad = 0, first = -1;

    for (long i = 0; i < span; i++) {
        sbuf[i] = value(p2p_rank, i);
        rtyped[i] = SENTINEL;
    }
    for (long i = 0; i < total; i++)
        scontig[i] = value(p2p_rank, i);
    packed[total] = SENTINEL;
    MPI_OK(MPI_Irecv(packed, (int)total + 1, MPI_INT, PREV, TAG(0), MPI_COMM_WORLD, &req[0]));
    MPI_OK(MPI_Irecv(rtyped, count, l->type, PREV, TAG(1), MPI_COMM_WORLD, &req[1]));
    MPI_OK(MPI_Isend(sbuf, count, l->type, NEXT, TAG(0), MPI_COMM_WORLD, &req[2]));
    MPI_OK(MPI_Isend(scontig, (int)total, MPI_INT, NEXT, TAG(1), MPI_COMM_WORLD, &req[3]));
    MPI_OK(MPI_Waitall(4, req, st));

    /* typed -> contiguous: the ints arrive in type-map order. */
    p2p_check_status(&st[0], PREV, TAG(0), MPI_INT, (int)total, l->name);
    for (long e = 0, k = 0; e < count; e++) {
        for (int j = 0; j < l->n; j++, k++) {
            long at = e * l->extent + l->offsets[j];
            if (packed[k] != value(PREV, at) && bad++ == 0)
                first = k;
        }
    }
    CHECK(bad == 0, "%s x %d sent, contiguous received: %ld ints wrong, first %ld", l->name, count,
          bad, first);
    CHECK(packed[total] == SENTINEL, "%s: int after the message written", l->name);

    /* contiguous -> typed: int k lands at its type-map place, nothing else is written. */
    int count_typed = p2p_count(&st[1], l->type);
    CHECK(st[1].MPI_SOURCE == PREV && count_typed == count, "%s received: source %d count %d",
          l->name, st[1].MPI_SOURCE, count_typed);
    bad = 0;
    for (long e = 0, k = 0; e < count; e++) {
        for (int j = 0; j < l->n; j++, k++) {
            long at = e * l->extent + l->offsets[j];
            if (rtyped[at] != value(PREV, k) && bad++ == 0)
                first = at;
            rtyped[at] = SENTINEL; /* checked: the rest must be untouched */
        }
    }
    CHECK(bad == 0, "contiguous sent, %s x %d received: %ld ints wrong, first at %ld", l->name,
          count, bad, first);
    bad = 0;
    for (long i = 0; i < span; i++)
        bad += rtyped[i] != SENTINEL;
    CHECK(bad == 0, "%s x %d received: %ld ints outside the type map written", l->name, count, bad);
    free(sbuf);
    free(packed);
    free(scontig);
    free(rtyped);
}

static void every_constructor_small(void)
{
    layout_t l[20];
    int n = make_layouts(l);
    for (int i = 0; i < n; i++) {
        check_layout(&l[i]);
        exchange_layout(&l[i], 1);
        exchange_layout(&l[i], 3);
    }
    free_layouts(l, n);
}

/* Counts large enough for rendezvous and several fragments on every BTL. */
static void every_constructor_large(void)
{
    layout_t l[20];
    int n = make_layouts(l);
    for (int i = 0; i < n; i++)
        exchange_layout(&l[i], 200000 / l[i].n);
    free_layouts(l, n);
}

/*
 * Two different non-contiguous shapes of chars with one signature, 2.1 MB: 7-byte blocks
 * every 13 bytes sent, 10-byte blocks every 11 bytes received. Blocks straddle every
 * fragment boundary.
 */
static void vector_to_other_vector(void)
{
    const int scount = 300000, sblock = 7, sstride = 13;
    const int rcount = 210000, rblock = 10, rstride = 11;
    size_t sspan = (size_t)scount * sstride, rspan = (size_t)rcount * rstride;
    unsigned char *sbuf = p2p_malloc(sspan), *rbuf = p2p_malloc(rspan);
    MPI_Datatype stype, rtype;
    MPI_Request req;
    MPI_Status st;
    size_t bad = 0, first = 0, gaps = 0;

    MPI_OK(MPI_Type_vector(scount, sblock, sstride, MPI_CHAR, &stype));
    MPI_OK(MPI_Type_vector(rcount, rblock, rstride, MPI_CHAR, &rtype));
    MPI_OK(MPI_Type_commit(&stype));
    MPI_OK(MPI_Type_commit(&rtype));
    p2p_fill(sbuf, sspan, p2p_seed((uint32_t)p2p_rank, 0, 20));
    memset(rbuf, 0xa5, rspan);
    MPI_OK(MPI_Irecv(rbuf, 1, rtype, PREV, TAG(0), MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Send(sbuf, 1, stype, NEXT, TAG(0), MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&req, &st));
    p2p_check_status(&st, PREV, TAG(0), MPI_CHAR, scount * sblock, "vector to vector");
    for (size_t k = 0; k < (size_t)scount * sblock; k++) {
        size_t from = k / sblock * sstride + k % sblock, to = k / rblock * rstride + k % rblock;
        if (rbuf[to] != p2p_byte(p2p_seed((uint32_t)PREV, 0, 20), from) && bad++ == 0)
            first = k;
    }
    for (size_t to = 0; to < rspan; to++)
        gaps += to % rstride >= (size_t)rblock && rbuf[to] != 0xa5;
    CHECK(bad == 0, "vector to vector: %zu of %d chars wrong, first %zu", bad, scount * sblock,
          first);
    CHECK(gaps == 0, "vector to vector: %zu bytes of the gaps written", gaps);
    MPI_OK(MPI_Type_free(&stype));
    MPI_OK(MPI_Type_free(&rtype));
    free(sbuf);
    free(rbuf);
}

/* A C struct with padding: the type skips the padding, and a receive leaves it alone. */
typedef struct record {
    char c;     /* then padding */
    double d;   /* */
    short s[3]; /* then padding */
    int i;      /* then padding to 8 */
    long long l;
} record_t;

static MPI_Datatype record_type(void)
{
    int bl[] = {1, 1, 3, 1, 1};
    MPI_Aint dl[] = {offsetof(record_t, c), offsetof(record_t, d), offsetof(record_t, s),
                     offsetof(record_t, i), offsetof(record_t, l)};
    MPI_Datatype types[] = {MPI_CHAR, MPI_DOUBLE, MPI_SHORT, MPI_INT, MPI_LONG_LONG};
    MPI_Datatype t, resized;
    MPI_OK(MPI_Type_create_struct(5, bl, dl, types, &t));
    MPI_OK(MPI_Type_create_resized(t, 0, sizeof(record_t), &resized));
    MPI_OK(MPI_Type_free(&t));
    MPI_OK(MPI_Type_commit(&resized));
    return resized;
}

static void fill_record(record_t *r, int rank, int k)
{
    r->c = (char)('a' + (k + rank) % 26);
    r->d = rank * 1000.0 + k * 0.125;
    r->s[0] = (short)(k % 30000);
    r->s[1] = (short)(-rank);
    r->s[2] = (short)(k % 7);
    r->i = value(rank, k);
    r->l = (long long)k * 1000003LL + rank;
}

static int record_ok(const record_t *r, int rank, int k)
{
    record_t e;
    fill_record(&e, rank, k);
    return r->c == e.c && r->d == e.d && r->s[0] == e.s[0] && r->s[1] == e.s[1] &&
           r->s[2] == e.s[2] && r->i == e.i && r->l == e.l;
}

/*
 * Records with gaps both sides (small and large counts), then received into a packed
 * layout of the same signature (a struct type without gaps).
 */
static void struct_with_gaps(void)
{
    MPI_Datatype rec = record_type();
    static const int counts[] = {1, 10, 20000};
    const size_t packed_size = 1 + 8 + 6 + 4 + 8;

    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        int n = counts[c];
        record_t *out = p2p_malloc(sizeof(record_t) * (size_t)n);
        record_t *in = p2p_malloc(sizeof(record_t) * (size_t)n);
        unsigned char *flat = p2p_malloc(packed_size * (size_t)n);
        MPI_Datatype flat_type;
        MPI_Request req[3];
        MPI_Status st[3];
        int bad = 0, gaps = 0;

        {
            /* Fields back to back; resized, as a struct's extent is rounded up to the
             * alignment of its largest member (MPI-3.1 section 4.1.6). */
            int bl[] = {1, 1, 3, 1, 1};
            MPI_Aint dl[] = {0, 1, 9, 15, 19};
            MPI_Datatype types[] = {MPI_CHAR, MPI_DOUBLE, MPI_SHORT, MPI_INT, MPI_LONG_LONG};
            MPI_Datatype t;
            MPI_OK(MPI_Type_create_struct(5, bl, dl, types, &t));
            MPI_OK(MPI_Type_create_resized(t, 0, (MPI_Aint)packed_size, &flat_type));
            MPI_OK(MPI_Type_free(&t));
            MPI_OK(MPI_Type_commit(&flat_type));
        }
        memset(out, 0, sizeof(record_t) * (size_t)n);
        for (int k = 0; k < n; k++)
            fill_record(&out[k], p2p_rank, k);
        memset(in, 0xa5, sizeof(record_t) * (size_t)n);
        MPI_OK(MPI_Irecv(in, n, rec, PREV, TAG(0), MPI_COMM_WORLD, &req[0]));
        MPI_OK(MPI_Irecv(flat, n, flat_type, PREV, TAG(1), MPI_COMM_WORLD, &req[1]));
        MPI_OK(MPI_Isend(out, n, rec, NEXT, TAG(0), MPI_COMM_WORLD, &req[2]));
        MPI_OK(MPI_Send(out, n, rec, NEXT, TAG(1), MPI_COMM_WORLD));
        MPI_OK(MPI_Waitall(3, req, st));
        p2p_check_status(&st[0], PREV, TAG(0), rec, n, "records");
        p2p_check_status(&st[1], PREV, TAG(1), flat_type, n, "flat records");
        for (int k = 0; k < n; k++) {
            const unsigned char *p = (const unsigned char *)&in[k];
            bad += !record_ok(&in[k], PREV, k);
            /* padding: after c, after s, after i */
            for (size_t b = 1; b < offsetof(record_t, d); b++)
                gaps += p[b] != 0xa5;
            for (size_t b = offsetof(record_t, s) + sizeof(in[k].s); b < offsetof(record_t, i); b++)
                gaps += p[b] != 0xa5;
            for (size_t b = offsetof(record_t, i) + sizeof(int); b < offsetof(record_t, l); b++)
                gaps += p[b] != 0xa5;
        }
        CHECK(bad == 0, "%d of %d records wrong", bad, n);
        CHECK(gaps == 0, "%d padding bytes written in %d records", gaps, n);
        bad = 0;
        for (int k = 0; k < n; k++) {
            record_t r;
            const unsigned char *p = flat + (size_t)k * packed_size;
            memcpy(&r.c, p, 1);
            memcpy(&r.d, p + 1, 8);
            memcpy(r.s, p + 9, 6);
            memcpy(&r.i, p + 15, 4);
            memcpy(&r.l, p + 19, 8);
            bad += !record_ok(&r, PREV, k);
        }
        CHECK(bad == 0, "%d of %d records wrong in the layout without gaps", bad, n);
        MPI_OK(MPI_Type_free(&flat_type));
        free(out);
        free(in);
        free(flat);
    }
    MPI_OK(MPI_Type_free(&rec));
}

/*
 * A message that fills a derived type only partly (MPI-3.1 section 3.3 and 4.1.11):
 * 7 ints received as triples give count MPI_UNDEFINED and 7 elements; "int, double, int"
 * received as pairs (int, double) gives MPI_UNDEFINED and 3 elements, in place.
 */
static void get_elements_partial(void)
{
    MPI_Datatype triple, pair, tri_struct;
    MPI_Request req[3];
    MPI_Status st[3];
    int ints[7], rints[12], count, elements;
    MPI_Count elements_x;
    struct pair_s {
        int i;
        double d;
    } rpairs[2];
    struct tri_s {
        int a;
        double d;
        int b;
    } tri = {value(p2p_rank, 1), p2p_rank + 0.5, value(p2p_rank, 2)};

    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &triple));
    MPI_OK(MPI_Type_commit(&triple));
    {
        int bl[] = {1, 1};
        MPI_Aint dl[] = {offsetof(struct pair_s, i), offsetof(struct pair_s, d)};
        MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE};
        MPI_Datatype t;
        MPI_OK(MPI_Type_create_struct(2, bl, dl, types, &t));
        MPI_OK(MPI_Type_create_resized(t, 0, sizeof(struct pair_s), &pair));
        MPI_OK(MPI_Type_free(&t));
        MPI_OK(MPI_Type_commit(&pair));
    }
    {
        int bl[] = {1, 1, 1};
        MPI_Aint dl[] = {offsetof(struct tri_s, a), offsetof(struct tri_s, d),
                         offsetof(struct tri_s, b)};
        MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE, MPI_INT};
        MPI_OK(MPI_Type_create_struct(3, bl, dl, types, &tri_struct));
        MPI_OK(MPI_Type_commit(&tri_struct));
    }
    for (int k = 0; k < 7; k++)
        ints[k] = value(p2p_rank, 100 + k);
    for (int k = 0; k < 12; k++)
        rints[k] = SENTINEL;
    memset(rpairs, 0xa5, sizeof(rpairs));

    MPI_OK(MPI_Irecv(rints, 4, triple, PREV, TAG(0), MPI_COMM_WORLD, &req[0]));
    MPI_OK(MPI_Irecv(rpairs, 2, pair, PREV, TAG(1), MPI_COMM_WORLD, &req[1]));
    MPI_OK(MPI_Isend(ints, 7, MPI_INT, NEXT, TAG(0), MPI_COMM_WORLD, &req[2]));
    MPI_OK(MPI_Send(&tri, 1, tri_struct, NEXT, TAG(1), MPI_COMM_WORLD));
    MPI_OK(MPI_Waitall(3, req, st));

    MPI_OK(MPI_Get_count(&st[0], triple, &count));
    MPI_OK(MPI_Get_elements(&st[0], triple, &elements));
    MPI_OK(MPI_Get_elements_x(&st[0], triple, &elements_x));
    CHECK(count == MPI_UNDEFINED && elements == 7 && elements_x == 7,
          "7 ints as triples: count %d (expected MPI_UNDEFINED), elements %d, elements_x %lld",
          count, elements, (long long)elements_x);
    int bad = 0;
    for (int k = 0; k < 12; k++)
        bad += rints[k] != (k < 7 ? value(PREV, 100 + k) : SENTINEL);
    CHECK(bad == 0, "7 ints as triples: %d of 12 ints wrong", bad);

    MPI_OK(MPI_Get_count(&st[1], pair, &count));
    MPI_OK(MPI_Get_elements(&st[1], pair, &elements));
    MPI_OK(MPI_Get_elements_x(&st[1], pair, &elements_x));
    CHECK(count == MPI_UNDEFINED && elements == 3 && elements_x == 3,
          "(int, double, int) as pairs: count %d (expected MPI_UNDEFINED), elements %d, "
          "elements_x %lld",
          count, elements, (long long)elements_x);
    unsigned char untouched[sizeof(double)];
    memset(untouched, 0xa5, sizeof(untouched));
    CHECK(rpairs[0].i == value(PREV, 1) && rpairs[0].d == PREV + 0.5 &&
              rpairs[1].i == value(PREV, 2) && memcmp(&rpairs[1].d, untouched, sizeof(double)) == 0,
          "(int, double, int) as pairs: got %d %g %d, second double %s", rpairs[0].i, rpairs[0].d,
          rpairs[1].i, memcmp(&rpairs[1].d, untouched, sizeof(double)) ? "written" : "untouched");

    MPI_OK(MPI_Type_free(&triple));
    MPI_OK(MPI_Type_free(&pair));
    MPI_OK(MPI_Type_free(&tri_struct));
}

/*
 * MPI_PACKED: packed by MPI_Pack and sent as MPI_PACKED, received as MPI_PACKED and as the
 * typed data it holds; typed data received as MPI_PACKED and unpacked.
 */
static void packed_and_typed(void)
{
    enum { N = 3000 };
    double *d = p2p_malloc(sizeof(double) * N), *rd = p2p_malloc(sizeof(double) * N);
    int header[2] = {p2p_rank, N}, rheader[2];
    int size_h, size_d, pos = 0, rpos = 0;
    MPI_Request req[3];
    MPI_Status st[3];

    for (int k = 0; k < N; k++)
        d[k] = p2p_rank * 1e6 + k / 4.0;
    MPI_OK(MPI_Pack_size(2, MPI_INT, MPI_COMM_WORLD, &size_h));
    MPI_OK(MPI_Pack_size(N, MPI_DOUBLE, MPI_COMM_WORLD, &size_d));
    int cap = size_h + size_d;
    unsigned char *pk = p2p_malloc((size_t)cap), *rpk = p2p_malloc((size_t)cap);
    unsigned char *rpk2 = p2p_malloc((size_t)size_d);
    MPI_OK(MPI_Pack(header, 2, MPI_INT, pk, cap, &pos, MPI_COMM_WORLD));
    MPI_OK(MPI_Pack(d, N, MPI_DOUBLE, pk, cap, &pos, MPI_COMM_WORLD));

    /* packed -> packed, then unpacked */
    MPI_OK(MPI_Irecv(rpk, cap, MPI_PACKED, PREV, TAG(0), MPI_COMM_WORLD, &req[0]));
    /* typed doubles -> packed */
    MPI_OK(MPI_Irecv(rpk2, size_d, MPI_PACKED, PREV, TAG(1), MPI_COMM_WORLD, &req[1]));
    MPI_OK(MPI_Isend(d, N, MPI_DOUBLE, NEXT, TAG(1), MPI_COMM_WORLD, &req[2]));
    MPI_OK(MPI_Send(pk, pos, MPI_PACKED, NEXT, TAG(0), MPI_COMM_WORLD));
    MPI_OK(MPI_Waitall(3, req, st));
    int got = p2p_count(&st[0], MPI_PACKED);
    CHECK(got == pos, "packed message: %d bytes, sent %d", got, pos);
    MPI_OK(MPI_Unpack(rpk, got, &rpos, rheader, 2, MPI_INT, MPI_COMM_WORLD));
    MPI_OK(MPI_Unpack(rpk, got, &rpos, rd, N, MPI_DOUBLE, MPI_COMM_WORLD));
    int bad = 0;
    for (int k = 0; k < N; k++)
        bad += rd[k] != PREV * 1e6 + k / 4.0;
    CHECK(rheader[0] == PREV && rheader[1] == N && bad == 0 && rpos == got,
          "packed -> unpacked: header %d %d, %d doubles wrong, position %d of %d", rheader[0],
          rheader[1], bad, rpos, got);
    rpos = 0;
    MPI_OK(
        MPI_Unpack(rpk2, p2p_count(&st[1], MPI_PACKED), &rpos, rd, N, MPI_DOUBLE, MPI_COMM_WORLD));
    bad = 0;
    for (int k = 0; k < N; k++)
        bad += rd[k] != PREV * 1e6 + k / 4.0;
    CHECK(bad == 0, "doubles received as MPI_PACKED: %d wrong after MPI_Unpack", bad);

    /* packed doubles -> typed doubles (a homogeneous job: the packed form is the data) */
    pos = 0;
    MPI_OK(MPI_Pack(d, N, MPI_DOUBLE, pk, cap, &pos, MPI_COMM_WORLD));
    for (int k = 0; k < N; k++)
        rd[k] = -1;
    MPI_OK(MPI_Irecv(rd, N, MPI_DOUBLE, PREV, TAG(2), MPI_COMM_WORLD, &req[0]));
    MPI_OK(MPI_Send(pk, pos, MPI_PACKED, NEXT, TAG(2), MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&req[0], &st[0]));
    bad = 0;
    for (int k = 0; k < N; k++)
        bad += rd[k] != PREV * 1e6 + k / 4.0;
    CHECK(p2p_count(&st[0], MPI_DOUBLE) == N && bad == 0,
          "MPI_PACKED received as doubles: count %d, %d wrong", p2p_count(&st[0], MPI_DOUBLE), bad);
    free(d);
    free(rd);
    free(pk);
    free(rpk);
    free(rpk2);
}

/* Zero elements of a derived type, and a type that holds no data, move nothing. */
static void zero_size(void)
{
    MPI_Datatype vec, empty;
    int buf[4] = {1, 2, 3, 4}, rbuf[4] = {9, 9, 9, 9};
    MPI_Request req[2];
    MPI_Status st[2];

    MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    MPI_OK(MPI_Type_contiguous(0, MPI_INT, &empty));
    MPI_OK(MPI_Type_commit(&empty));
    MPI_OK(MPI_Irecv(rbuf, 2, vec, PREV, TAG(0), MPI_COMM_WORLD, &req[0]));
    MPI_OK(MPI_Irecv(rbuf, 5, empty, PREV, TAG(1), MPI_COMM_WORLD, &req[1]));
    MPI_OK(MPI_Send(buf, 0, vec, NEXT, TAG(0), MPI_COMM_WORLD));
    MPI_OK(MPI_Send(buf, 3, empty, NEXT, TAG(1), MPI_COMM_WORLD));
    MPI_OK(MPI_Waitall(2, req, st));
    p2p_check_status(&st[0], PREV, TAG(0), vec, 0, "zero vectors");
    int elements = -1;
    MPI_OK(MPI_Get_elements(&st[0], vec, &elements));
    CHECK(elements == 0, "zero vectors: %d elements", elements);
    CHECK(st[1].MPI_SOURCE == PREV && st[1].MPI_TAG == TAG(1), "empty type: source %d tag %d",
          st[1].MPI_SOURCE, st[1].MPI_TAG);
    /* MPI-3.1 section 3.2.5: a datatype of size zero gives a count of zero. */
    CHECK(p2p_count(&st[1], empty) == 0, "empty type: count %d", p2p_count(&st[1], empty));
    CHECK(rbuf[0] == 9 && rbuf[1] == 9 && rbuf[2] == 9 && rbuf[3] == 9,
          "zero-size messages wrote data");
    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Type_free(&empty));
}

/* One subtest a line, as test_p2p.py reads them. */
/* clang-format off */
static const p2p_test_t tests[] = {
    P2P_TEST(every_constructor_small, 1),
    P2P_TEST(every_constructor_large, 1),
    P2P_TEST(vector_to_other_vector, 1),
    P2P_TEST(struct_with_gaps, 1),
    P2P_TEST(get_elements_partial, 1),
    P2P_TEST(packed_and_typed, 1),
    P2P_TEST(zero_size, 1),
};
/* clang-format on */

P2P_MAIN(tests)
