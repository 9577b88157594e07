/*
 * collectives.c: every collective of MPI-3.1 chapter 5 checked on MPI_COMM_WORLD (or on a
 * communicator made by split or dup), over
 * sizes (0, 1, small, around the eager limit, and large with -l), every root, MPI_IN_PLACE
 * where allowed, three datatypes (int, double, a vector with gaps) and the reductions of
 * reductions.h (predefined ops, MINLOC/MAXLOC ties, non-commutative and derived-type user
 * ops).
 *
 *   collectives [-n] [-l] [-o ONLY] [-c split|dup]
 *     -n   use the non-blocking forms (Ibcast ...), completed by MPI_Wait or an MPI_Test loop;
 *          adds several at once, many in flight, and some pending on a freed communicator
 *     -l   add the large size (1 MiB of ints)
 *     -o   run only the collectives whose name contains ONLY
 *     -c   on MPI_Comm_split (odd and even ranks, reversed) or MPI_Comm_dup of WORLD
 *
 * Output: see coll_common.h.
 */
#include "coll_common.h"
#include "reductions.h"

#include <pthread.h>
#include <sched.h>

static int nonblocking;
static int completions;

/* Complete a request: alternately MPI_Wait and a loop of MPI_Test. */
static void complete(MPI_Request *req)
{
    if (completions++ % 2 == 0) {
        COLL_MPI(MPI_Wait(req, MPI_STATUS_IGNORE));
    } else {
        int flag = 0;
        for (;;) {
            COLL_MPI(MPI_Test(req, &flag, MPI_STATUS_IGNORE));
            if (flag)
                break;
            sched_yield(); /* as an application computing between polls: let peers run */
        }
    }
    COLL_CHECK(*req == MPI_REQUEST_NULL, "request not reset after completion");
}

/* Run a collective in the chosen form: MPI_X(args) or MPI_Ix(args, &req) + complete. */
#define RUN(name, iname, ...)                                                                      \
    do {                                                                                           \
        if (nonblocking) {                                                                         \
            MPI_Request req_;                                                                      \
            COLL_MPI(MPI_##iname(__VA_ARGS__, &req_));                                             \
            complete(&req_);                                                                       \
        } else {                                                                                   \
            COLL_MPI(MPI_##name(__VA_ARGS__));                                                     \
        }                                                                                          \
    } while (0)

/* The communicator under test: MPI_COMM_WORLD, or one made by -c split|dup. */
static MPI_Comm W;

static size_t sizes[8];
static int num_sizes;
static size_t large_count = 262144; /* 1 MiB of ints */

/* Roots to try for a size: all ranks for small messages, first and last for large ones. */
static int root_list(size_t count, int roots[])
{
    int n = 0;

    if (count >= 100000) {
        roots[n++] = 0;
        if (coll_size > 1)
            roots[n++] = coll_size - 1;
        return n;
    }
    for (int r = 0; r < coll_size; r++)
        roots[n++] = r;
    return n;
}

static int kind_ok(coll_kind_t kind, size_t count)
{
    return count < 100000 || kind != KIND_VEC;
}

static void test_barrier(void)
{
    for (int i = 0; i < 20; i++) {
        if (nonblocking) {
            MPI_Request req;
            COLL_MPI(MPI_Ibarrier(W, &req));
            complete(&req);
        } else {
            COLL_MPI(MPI_Barrier(W));
        }
    }
    /* Causal: nobody leaves the barrier before rank 0, which sleeps first, enters it. The
     * ranks share this node's monotonic clock, so each compares the time it left with the
     * time rank 0 entered, whatever the load of the machine. */
    double entered = 0.0, left;
    if (coll_rank == 0) {
        usleep(300000);
        entered = MPI_Wtime();
    }
    if (nonblocking) {
        MPI_Request req;
        COLL_MPI(MPI_Ibarrier(W, &req));
        complete(&req);
    } else {
        COLL_MPI(MPI_Barrier(W));
    }
    left = MPI_Wtime();
    COLL_MPI(MPI_Bcast(&entered, 1, MPI_DOUBLE, 0, W));
    COLL_CHECK(left >= entered, "left the barrier %.6f s before rank 0 entered it", entered - left);
}

static void test_bcast(void)
{
    int roots[64];

    for (int k = 0; k < KIND_COUNT; k++) {
        for (int s = 0; s < num_sizes; s++) {
            size_t count = sizes[s];
            int nroots = root_list(count, roots);

            if (!kind_ok(k, count))
                continue;
            for (int i = 0; i < nroots; i++) {
                void *buf = coll_alloc(k, count);
                char what[64];

                if (coll_rank == roots[i])
                    coll_fill(k, buf, count, roots[i] + 7);
                RUN(Bcast, Ibcast, buf, (int)count, coll_types[k], roots[i], W);
                snprintf(what, sizeof(what), "bcast count %zu root %d", count, roots[i]);
                coll_verify(k, buf, count, roots[i] + 7, what);
                free(buf);
            }
        }
    }
}

static void *red_alloc(const red_t *rd, size_t count)
{
    size_t bytes = rd->elem * count + 16;
    void *buf = malloc(bytes);

    memset(buf, 0x5a, bytes);
    return buf;
}

static void test_reduce(void)
{
    int roots[64];

    for (int d = 0; d < NUM_REDS; d++) {
        const red_t *rd = &reds[d];

        for (int s = 0; s < num_sizes; s++) {
            size_t count = sizes[s];
            int nroots = root_list(count, roots);

            if (count >= 100000 && !rd->large)
                continue;
            for (int i = 0; i < nroots; i++) {
                for (int in_place = 0; in_place < 2; in_place++) {
                    int root = roots[i];
                    void *sbuf = red_alloc(rd, count), *rbuf = red_alloc(rd, count);
                    char what[80];

                    if (in_place && coll_rank == root) {
                        red_fill(rd, rbuf, count, 0, coll_rank);
                        RUN(Reduce, Ireduce, MPI_IN_PLACE, rbuf, (int)count, rd->type, rd->op, root,
                            W);
                    } else {
                        red_fill(rd, sbuf, count, 0, coll_rank);
                        RUN(Reduce, Ireduce, sbuf, rbuf, (int)count, rd->type, rd->op, root, W);
                    }
                    if (coll_rank == root) {
                        snprintf(what, sizeof(what), "reduce%s count %zu root %d",
                                 in_place ? " in place" : "", count, root);
                        red_verify(rd, rbuf, count, 0, 0, coll_size - 1, what);
                    }
                    free(sbuf);
                    free(rbuf);
                }
            }
        }
    }
}

static void test_allreduce(void)
{
    for (int d = 0; d < NUM_REDS; d++) {
        const red_t *rd = &reds[d];

        for (int s = 0; s < num_sizes; s++) {
            size_t count = sizes[s];

            if (count >= 100000 && !rd->large)
                continue;
            for (int in_place = 0; in_place < 2; in_place++) {
                void *sbuf = red_alloc(rd, count), *rbuf = red_alloc(rd, count);
                char what[80];

                if (in_place) {
                    red_fill(rd, rbuf, count, 0, coll_rank);
                    RUN(Allreduce, Iallreduce, MPI_IN_PLACE, rbuf, (int)count, rd->type, rd->op, W);
                } else {
                    red_fill(rd, sbuf, count, 0, coll_rank);
                    RUN(Allreduce, Iallreduce, sbuf, rbuf, (int)count, rd->type, rd->op, W);
                }
                snprintf(what, sizeof(what), "allreduce%s count %zu", in_place ? " in place" : "",
                         count);
                red_verify(rd, rbuf, count, 0, 0, coll_size - 1, what);
                free(sbuf);
                free(rbuf);
            }
        }
    }
}

/* Reduce_scatter(_block): rank r's block is positions [displ r, + count r) of the vector. */
static void test_reduce_scatter(int block)
{
    int *counts = malloc(coll_size * sizeof(int));

    for (int d = 0; d < NUM_REDS; d++) {
        const red_t *rd = &reds[d];

        for (int s = 0; s < num_sizes; s++) {
            size_t count = sizes[s] / (size_t)coll_size + (sizes[s] > 0);
            size_t total = 0, off = 0;

            if (sizes[s] >= 100000 && !rd->large)
                continue;
            for (int r = 0; r < coll_size; r++) {
                counts[r] = block ? (int)count : (int)((count * (size_t)(r % 3)) / 2);
                if (r < coll_rank)
                    off += (size_t)counts[r];
                total += (size_t)counts[r];
            }
            for (int in_place = 0; in_place < 2; in_place++) {
                void *sbuf = red_alloc(rd, total), *rbuf = red_alloc(rd, total);
                char what[96];

                red_fill(rd, in_place ? rbuf : sbuf, total, 0, coll_rank);
                if (block)
                    RUN(Reduce_scatter_block, Ireduce_scatter_block, in_place ? MPI_IN_PLACE : sbuf,
                        rbuf, (int)count, rd->type, rd->op, W);
                else
                    RUN(Reduce_scatter, Ireduce_scatter, in_place ? MPI_IN_PLACE : sbuf, rbuf,
                        counts, rd->type, rd->op, W);
                snprintf(what, sizeof(what), "reduce_scatter%s%s count %d", block ? "_block" : "",
                         in_place ? " in place" : "", counts[coll_rank]);
                red_verify(rd, rbuf, (size_t)counts[coll_rank], off, 0, coll_size - 1, what);
                free(sbuf);
                free(rbuf);
            }
        }
    }
    free(counts);
}

static void test_scan(int exclusive)
{
    for (int d = 0; d < NUM_REDS; d++) {
        const red_t *rd = &reds[d];

        for (int s = 0; s < num_sizes; s++) {
            size_t count = sizes[s];

            if (count >= 100000 && !rd->large)
                continue;
            for (int in_place = 0; in_place < 2; in_place++) {
                void *sbuf = red_alloc(rd, count), *rbuf = red_alloc(rd, count);
                char what[80];

                red_fill(rd, in_place ? rbuf : sbuf, count, 0, coll_rank);
                if (exclusive)
                    RUN(Exscan, Iexscan, in_place ? MPI_IN_PLACE : sbuf, rbuf, (int)count, rd->type,
                        rd->op, W);
                else
                    RUN(Scan, Iscan, in_place ? MPI_IN_PLACE : sbuf, rbuf, (int)count, rd->type,
                        rd->op, W);
                snprintf(what, sizeof(what), "%s%s count %zu", exclusive ? "exscan" : "scan",
                         in_place ? " in place" : "", count);
                /* Exscan's result on rank 0 is undefined. */
                if (!exclusive)
                    red_verify(rd, rbuf, count, 0, 0, coll_rank, what);
                else if (coll_rank > 0)
                    red_verify(rd, rbuf, count, 0, 0, coll_rank - 1, what);
                free(sbuf);
                free(rbuf);
            }
        }
    }
}

/* Per-rank counts and displacements of the v variants: uneven, with gaps, reversed. */
static void v_layout(size_t count, int counts[], int displs[], size_t *span_out)
{
    size_t pos = 0;

    for (int r = coll_size - 1; r >= 0; r--) {
        counts[r] = (int)(count > 0 ? count + (size_t)(r % 3) : (size_t)(r % 2));
        displs[r] = (int)pos;
        pos += (size_t)counts[r] + 1; /* one element of gap */
    }
    *span_out = pos;
}

static void test_gather(int vector)
{
    int roots[64], *counts = malloc(coll_size * sizeof(int)), *displs = malloc(coll_size * 4);

    for (int k = 0; k < KIND_COUNT; k++) {
        for (int s = 0; s < num_sizes; s++) {
            size_t count = sizes[s] / (size_t)coll_size, span;
            int nroots = root_list(sizes[s], roots);

            if (!kind_ok(k, sizes[s]))
                continue;
            if (vector) {
                v_layout(count, counts, displs, &span);
            } else {
                for (int r = 0; r < coll_size; r++)
                    counts[r] = (int)count, displs[r] = (int)(count * (size_t)r);
                span = count * (size_t)coll_size;
            }
            for (int i = 0; i < nroots; i++) {
                for (int in_place = 0; in_place < 2; in_place++) {
                    int root = roots[i], me = coll_rank;
                    void *sbuf = coll_alloc(k, (size_t)counts[me]);
                    char *rbuf = coll_alloc(k, span);
                    char *mine = rbuf + (size_t)displs[me] * coll_extent(k);
                    const void *send = sbuf;
                    char what[80];

                    coll_fill(k, sbuf, (size_t)counts[me], me + 1);
                    if (in_place && me == root) {
                        coll_fill(k, mine, (size_t)counts[me], me + 1);
                        send = MPI_IN_PLACE;
                    }
                    if (vector)
                        RUN(Gatherv, Igatherv, send, counts[me], coll_types[k], rbuf, counts,
                            displs, coll_types[k], root, W);
                    else
                        RUN(Gather, Igather, send, counts[me], coll_types[k], rbuf, (int)count,
                            coll_types[k], root, W);
                    if (me == root) {
                        for (int r = 0; r < coll_size; r++) {
                            snprintf(what, sizeof(what), "gather%s%s count %d root %d block %d",
                                     vector ? "v" : "", in_place ? " in place" : "", counts[r],
                                     root, r);
                            coll_verify(k, rbuf + (size_t)displs[r] * coll_extent(k),
                                        (size_t)counts[r], r + 1, what);
                        }
                    }
                    free(sbuf);
                    free(rbuf);
                }
            }
        }
    }
    free(counts);
    free(displs);
}

static void test_scatter(int vector)
{
    int roots[64], *counts = malloc(coll_size * sizeof(int)), *displs = malloc(coll_size * 4);

    for (int k = 0; k < KIND_COUNT; k++) {
        for (int s = 0; s < num_sizes; s++) {
            size_t count = sizes[s] / (size_t)coll_size, span;
            int nroots = root_list(sizes[s], roots);

            if (!kind_ok(k, sizes[s]))
                continue;
            if (vector) {
                v_layout(count, counts, displs, &span);
            } else {
                for (int r = 0; r < coll_size; r++)
                    counts[r] = (int)count, displs[r] = (int)(count * (size_t)r);
                span = count * (size_t)coll_size;
            }
            for (int i = 0; i < nroots; i++) {
                for (int in_place = 0; in_place < 2; in_place++) {
                    int root = roots[i], me = coll_rank;
                    char *sbuf = coll_alloc(k, span);
                    void *rbuf = coll_alloc(k, (size_t)counts[me]);
                    void *recv = rbuf;
                    char what[80];

                    if (me == root) {
                        for (int r = 0; r < coll_size; r++)
                            coll_fill(k, sbuf + (size_t)displs[r] * coll_extent(k),
                                      (size_t)counts[r], r + 11);
                        if (in_place)
                            recv = MPI_IN_PLACE;
                    }
                    if (vector)
                        RUN(Scatterv, Iscatterv, sbuf, counts, displs, coll_types[k], recv,
                            counts[me], coll_types[k], root, W);
                    else
                        RUN(Scatter, Iscatter, sbuf, (int)count, coll_types[k], recv, (int)count,
                            coll_types[k], root, W);
                    snprintf(what, sizeof(what), "scatter%s%s count %d root %d", vector ? "v" : "",
                             in_place ? " in place" : "", counts[me], root);
                    if (recv == MPI_IN_PLACE)
                        coll_verify(k, sbuf + (size_t)displs[me] * coll_extent(k),
                                    (size_t)counts[me], me + 11, what);
                    else
                        coll_verify(k, rbuf, (size_t)counts[me], me + 11, what);
                    free(sbuf);
                    free(rbuf);
                }
            }
        }
    }
    free(counts);
    free(displs);
}

static void test_allgather(int vector)
{
    int *counts = malloc(coll_size * sizeof(int)), *displs = malloc(coll_size * 4);

    for (int k = 0; k < KIND_COUNT; k++) {
        for (int s = 0; s < num_sizes; s++) {
            size_t count = sizes[s] / (size_t)coll_size, span;

            if (!kind_ok(k, sizes[s]))
                continue;
            if (vector) {
                v_layout(count, counts, displs, &span);
            } else {
                for (int r = 0; r < coll_size; r++)
                    counts[r] = (int)count, displs[r] = (int)(count * (size_t)r);
                span = count * (size_t)coll_size;
            }
            for (int in_place = 0; in_place < 2; in_place++) {
                int me = coll_rank;
                void *sbuf = coll_alloc(k, (size_t)counts[me]);
                char *rbuf = coll_alloc(k, span);
                const void *send = sbuf;
                char what[80];

                coll_fill(k, sbuf, (size_t)counts[me], me + 3);
                if (in_place) {
                    coll_fill(k, rbuf + (size_t)displs[me] * coll_extent(k), (size_t)counts[me],
                              me + 3);
                    send = MPI_IN_PLACE;
                }
                if (vector)
                    RUN(Allgatherv, Iallgatherv, send, counts[me], coll_types[k], rbuf, counts,
                        displs, coll_types[k], W);
                else
                    RUN(Allgather, Iallgather, send, (int)count, coll_types[k], rbuf, (int)count,
                        coll_types[k], W);
                for (int r = 0; r < coll_size; r++) {
                    snprintf(what, sizeof(what), "allgather%s%s count %d block %d",
                             vector ? "v" : "", in_place ? " in place" : "", counts[r], r);
                    coll_verify(k, rbuf + (size_t)displs[r] * coll_extent(k), (size_t)counts[r],
                                r + 3, what);
                }
                free(sbuf);
                free(rbuf);
            }
        }
    }
    free(counts);
    free(displs);
}

/* The seed of the block rank `from` sends to rank `to`. */
static int a2a_seed(int from, int to)
{
    return from * 16 + to + 1;
}

/* Elements rank `from` sends to rank `to` in the v and w variants: uneven; symmetric in
 * place, where what goes to j must fit where what comes from j was. */
static size_t a2a_count(int variant, int in_place, size_t base, int from, int to)
{
    if (variant == 0)
        return base;
    return base + (size_t)(in_place ? (from + to) % 3 : (from + 2 * to) % 3);
}

/* The kind of the pair's blocks: alltoallw mixes int and vec (a vec is two ints). */
static coll_kind_t a2a_kind(int variant, coll_kind_t k, int a, int b)
{
    return variant == 2 && (a + b) % 2 ? KIND_VEC : k;
}

/* Alltoall (variant 0), Alltoallv (1), Alltoallw (2). */
static void test_alltoall(int variant)
{
    int n = coll_size, me = coll_rank;
    int *sc = malloc(n * 4), *sd = malloc(n * 4), *rc = malloc(n * 4), *rd = malloc(n * 4);
    MPI_Datatype *st = malloc(n * sizeof(MPI_Datatype)), *rt = malloc(n * sizeof(MPI_Datatype));

    for (int k = 0; k < KIND_COUNT; k++) {
        for (int s = 0; s < num_sizes; s++) {
            size_t base = sizes[s] / (size_t)n;

            if (!kind_ok(k, sizes[s]) || (variant == 2 && k != KIND_INT))
                continue;
            for (int in_place = 0; in_place < 2; in_place++) {
                size_t sbytes[64], rbytes[64], spos = 0, rpos = 0;
                char what[80];

                /* Layout: blocks in rank order, one element of gap after each (none for the
                 * plain alltoall); displacements in elements (v) or bytes (w). */
                for (int j = 0; j < n; j++) {
                    coll_kind_t kj = a2a_kind(variant, k, me, j);
                    size_t gap = variant ? 1 : 0;

                    sc[j] = (int)a2a_count(variant, in_place, base, me, j);
                    rc[j] = (int)a2a_count(variant, in_place, base, j, me);
                    st[j] = rt[j] = coll_types[kj];
                    sbytes[j] = spos;
                    rbytes[j] = rpos;
                    sd[j] = variant == 2 ? (int)spos : (int)(spos / coll_extent(k));
                    rd[j] = variant == 2 ? (int)rpos : (int)(rpos / coll_extent(k));
                    spos += ((size_t)sc[j] + gap) * coll_extent(kj);
                    rpos += ((size_t)rc[j] + gap) * coll_extent(kj);
                }
                char *sbuf = coll_alloc(KIND_VEC, spos / (3 * sizeof(int)) + 1);
                char *rbuf = coll_alloc(KIND_VEC, rpos / (3 * sizeof(int)) + 1);

                for (int j = 0; j < n; j++) {
                    coll_kind_t kj = a2a_kind(variant, k, me, j);

                    if (in_place) /* the outgoing blocks sit in rbuf, laid out as the receive */
                        coll_fill(kj, rbuf + rbytes[j], (size_t)rc[j], a2a_seed(me, j));
                    else
                        coll_fill(kj, sbuf + sbytes[j], (size_t)sc[j], a2a_seed(me, j));
                }
                const void *send = in_place ? MPI_IN_PLACE : sbuf;
                if (variant == 0)
                    RUN(Alltoall, Ialltoall, send, (int)base, coll_types[k], rbuf, (int)base,
                        coll_types[k], W);
                else if (variant == 1)
                    RUN(Alltoallv, Ialltoallv, send, sc, sd, coll_types[k], rbuf, rc, rd,
                        coll_types[k], W);
                else
                    RUN(Alltoallw, Ialltoallw, send, sc, sd, st, rbuf, rc, rd, rt, W);
                for (int j = 0; j < n; j++) {
                    snprintf(what, sizeof(what), "alltoall%s%s count %d from %d",
                             variant == 1   ? "v"
                             : variant == 2 ? "w"
                                            : "",
                             in_place ? " in place" : "", rc[j], j);
                    coll_verify(a2a_kind(variant, k, me, j), rbuf + rbytes[j], (size_t)rc[j],
                                a2a_seed(j, me), what);
                }
                free(sbuf);
                free(rbuf);
            }
        }
    }
    free(sc), free(sd), free(rc), free(rd), free(st), free(rt);
}

/*
 * Several non-blocking collectives in flight on one communicator at once, completed in
 * another order than started, with a blocking one in between: their messages must not mix.
 */
static void test_concurrent(void)
{
    enum { COUNT = 5000 };
    int *a = malloc(COUNT * sizeof(int)), *b = malloc(COUNT * sizeof(int));
    int *c = malloc(COUNT * sizeof(int)), *d = malloc(COUNT * sizeof(int));
    int *e = malloc(COUNT * sizeof(int)), *x = malloc((size_t)coll_size * 4 * sizeof(int));
    int *y = malloc((size_t)coll_size * 4 * sizeof(int));
    MPI_Request reqs[5];

    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < COUNT; i++) {
            a[i] = coll_rank + i;
            c[i] = coll_rank == 0 ? 3 * i + round : -1;
            e[i] = coll_rank * 2 + i;
        }
        for (int i = 0; i < coll_size * 4; i++)
            x[i] = coll_rank * 1000 + i;
        COLL_MPI(MPI_Iallreduce(a, b, COUNT, MPI_INT, MPI_SUM, W, &reqs[0]));
        COLL_MPI(MPI_Ibcast(c, COUNT, MPI_INT, 0, W, &reqs[1]));
        COLL_MPI(MPI_Ialltoall(x, 4, MPI_INT, y, 4, MPI_INT, W, &reqs[2]));
        COLL_MPI(MPI_Ibarrier(W, &reqs[3]));
        COLL_MPI(MPI_Iallreduce(e, d, COUNT, MPI_INT, MPI_MAX, W, &reqs[4]));
        int s = coll_rank, total = 0;
        COLL_MPI(MPI_Allreduce(&s, &total, 1, MPI_INT, MPI_SUM, W));
        COLL_CHECK(total == coll_size * (coll_size - 1) / 2,
                   "blocking allreduce among pending "
                   "ones: %d",
                   total);
        /* Each round completes them with other calls of the Wait/Test family. */
        if (round == 1) {
            COLL_MPI(MPI_Waitall(5, reqs, MPI_STATUSES_IGNORE));
        } else if (round == 2) {
            for (int left = 5; left > 0; left--) {
                int index = -1;
                COLL_MPI(MPI_Waitany(5, reqs, &index, MPI_STATUS_IGNORE));
                COLL_CHECK(index >= 0 && index < 5, "MPI_Waitany gave index %d", index);
            }
        } else if (round == 3) {
            int done = 0, outcount, indices[5];
            while (done < 5) {
                COLL_MPI(MPI_Testsome(5, reqs, &outcount, indices, MPI_STATUSES_IGNORE));
                if (outcount == MPI_UNDEFINED)
                    break;
                done += outcount;
                if (outcount == 0)
                    sched_yield();
            }
            COLL_CHECK(done == 5, "MPI_Testsome completed %d of 5", done);
        } else {
            for (int i = 4; i >= 0; i--)
                COLL_MPI(MPI_Wait(&reqs[i], MPI_STATUS_IGNORE));
        }
        int bad_b = 0, bad_c = 0, bad_d = 0, bad_y = 0;
        for (int i = 0; i < COUNT; i++) {
            bad_b += b[i] != coll_size * (coll_size - 1) / 2 + coll_size * i;
            bad_c += c[i] != 3 * i + round;
            bad_d += d[i] != (coll_size - 1) * 2 + i;
        }
        for (int j = 0; j < coll_size; j++)
            for (int i = 0; i < 4; i++)
                bad_y += y[j * 4 + i] != j * 1000 + coll_rank * 4 + i;
        COLL_CHECK(!bad_b && !bad_c && !bad_d && !bad_y,
                   "concurrent round %d: wrong elements: iallreduce sum %d, ibcast %d, "
                   "iallreduce max %d, ialltoall %d",
                   round, bad_b, bad_c, bad_d, bad_y);
    }
    free(a), free(b), free(c), free(d), free(e), free(x), free(y);
}

/* Many non-blocking collectives in flight at once (more than fit one tag each would not
 * be allowed to mix): each carries its own data. */
static void test_many_pending(void)
{
    enum { PENDING = 200, COUNT = 3 };
    int(*data)[COUNT] = malloc(sizeof(int[PENDING][COUNT]));
    MPI_Request *reqs = malloc(PENDING * sizeof(MPI_Request));
    int bad = 0;

    for (int i = 0; i < PENDING; i++) {
        int root = i % coll_size;
        for (int j = 0; j < COUNT; j++)
            data[i][j] = coll_rank == root ? i * 10 + j : -1;
        COLL_MPI(MPI_Ibcast(data[i], COUNT, MPI_INT, root, W, &reqs[i]));
    }
    COLL_MPI(MPI_Waitall(PENDING, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < PENDING; i++)
        for (int j = 0; j < COUNT; j++)
            bad += data[i][j] != i * 10 + j;
    COLL_CHECK(bad == 0, "%d pending ibcasts: %d wrong elements", PENDING, bad);
    free(data);
    free(reqs);
}

/*
 * Non-blocking collectives still pending when their communicator is freed complete
 * normally (MPI-3.1 section 6.4.3): the communicator goes only after them. Barriers and
 * allreduces of several rounds, so that a collective sits between two rounds with no
 * message pending when the communicator's earlier messages are done.
 */
static void test_freed_pending(void)
{
    enum { ROUNDS = 20, COUNT = 300 };
    int *in = malloc(COUNT * sizeof(int)), *out = malloc(ROUNDS * COUNT * sizeof(int));
    MPI_Request reqs[2 * ROUNDS];
    int bad = 0;

    for (int i = 0; i < COUNT; i++)
        in[i] = coll_rank + i;
    for (int round = 0; round < ROUNDS; round++) {
        MPI_Comm dup;

        COLL_MPI(MPI_Comm_dup(W, &dup));
        COLL_MPI(MPI_Ibarrier(dup, &reqs[2 * round]));
        COLL_MPI(MPI_Iallreduce(in, out + round * COUNT, COUNT, MPI_INT, MPI_SUM, dup,
                                &reqs[2 * round + 1]));
        COLL_MPI(MPI_Comm_free(&dup));
        COLL_CHECK(dup == MPI_COMM_NULL, "the freed handle was not reset");
    }
    COLL_MPI(MPI_Waitall(2 * ROUNDS, reqs, MPI_STATUSES_IGNORE));
    for (int round = 0; round < ROUNDS; round++)
        for (int i = 0; i < COUNT; i++)
            bad += out[round * COUNT + i] != coll_size * (coll_size - 1) / 2 + coll_size * i;
    COLL_CHECK(bad == 0, "allreduces on freed communicators: %d wrong elements", bad);
    free(in);
    free(out);
}

/* While the main thread waits in a collective, another thread's MPI calls go through:
 * the waiting collective drops the library lock between progress turns. Shown by a
 * dependency, not by counting calls in a time: rank 1 contributes to the allreduce only
 * after rank 0's other thread, started as rank 0's main thread enters it, has made 50 MPI
 * calls and sent it a message. A collective that held the lock while waiting would leave
 * that thread, and so the job, stuck. */
#define LOCK_TEST_TAG 4242
static volatile int lock_test_entering;

static void *lock_test_thread(void *arg)
{
    int token = 1;

    (void)arg;
    while (!lock_test_entering)
        sched_yield();
    for (int i = 0; i < 50; i++) {
        int r;
        MPI_Comm_rank(W, &r);
    }
    MPI_Send(&token, 1, MPI_INT, 1, LOCK_TEST_TAG, W);
    return NULL;
}

static void test_threads(void)
{
    pthread_t thread;
    int value = coll_rank, sum = 0, token = 0;

    if (coll_thread_level < MPI_THREAD_MULTIPLE || coll_size < 2) {
        COLL_CHECK(1, "skipped");
        return;
    }
    lock_test_entering = 0;
    if (coll_rank == 0)
        pthread_create(&thread, NULL, lock_test_thread, NULL);
    if (coll_rank == 1)
        COLL_MPI(MPI_Recv(&token, 1, MPI_INT, 0, LOCK_TEST_TAG, W, MPI_STATUS_IGNORE));
    if (coll_rank == 0)
        lock_test_entering = 1;
    COLL_MPI(MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, W));
    if (coll_rank == 0)
        pthread_join(thread, NULL);
    COLL_CHECK(coll_rank != 1 || token == 1, "threads: rank 1 received %d", token);
    COLL_CHECK(sum == coll_size * (coll_size - 1) / 2, "threads: allreduce gave %d", sum);
}

int main(int argc, char **argv)
{
    const char *only = "", *comm_kind = "world";
    int large = 0;
    static const struct {
        const char *name;
        void (*fn)(int);
        int arg;
    } tests[] = {
        {"barrier", (void (*)(int))test_barrier, 0},
        {"bcast", (void (*)(int))test_bcast, 0},
        {"reduce", (void (*)(int))test_reduce, 0},
        {"allreduce", (void (*)(int))test_allreduce, 0},
        {"reduce_scatter_block", test_reduce_scatter, 1},
        {"reduce_scatter", test_reduce_scatter, 0},
        {"scan", test_scan, 0},
        {"exscan", test_scan, 1},
        {"gather", test_gather, 0},
        {"gatherv", test_gather, 1},
        {"scatter", test_scatter, 0},
        {"scatterv", test_scatter, 1},
        {"allgather", test_allgather, 0},
        {"allgatherv", test_allgather, 1},
        {"alltoall", test_alltoall, 0},
        {"alltoallv", test_alltoall, 1},
        {"alltoallw", test_alltoall, 2},
        {"concurrent", (void (*)(int))test_concurrent, 0},
        {"many_pending", (void (*)(int))test_many_pending, 0},
        {"freed_pending", (void (*)(int))test_freed_pending, 0},
        {"threads", (void (*)(int))test_threads, 0},
    };

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-n") == 0)
            nonblocking = 1;
        else if (strcmp(argv[i], "-l") == 0)
            large = 1;
        else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "-c") == 0 && i + 1 < argc)
            comm_kind = argv[++i];
    }
    coll_init(&argc, &argv, 150);
    W = MPI_COMM_WORLD;
    if (strcmp(comm_kind, "split") == 0) {
        /* Odd and even world ranks apart, each half in reverse order of world rank. */
        MPI_Comm_split(MPI_COMM_WORLD, coll_rank % 2, -coll_rank, &W);
    } else if (strcmp(comm_kind, "dup") == 0) {
        MPI_Comm_dup(MPI_COMM_WORLD, &W);
    }
    MPI_Comm_rank(W, &coll_rank);
    MPI_Comm_size(W, &coll_size);
    red_init();
    /* 0, 1, small, around 4 KiB (the sm eager limit) in ints, and 1 MiB of ints. */
    sizes[num_sizes++] = 0;
    sizes[num_sizes++] = 1;
    sizes[num_sizes++] = 7;
    sizes[num_sizes++] = 1023;
    sizes[num_sizes++] = 1100;
    if (large)
        sizes[num_sizes++] = large_count;
    for (size_t t = 0; t < sizeof(tests) / sizeof(tests[0]); t++) {
        if (strstr(tests[t].name, only) == NULL)
            continue;
        /* The non-blocking-only subtests run with -n; "threads" with the blocking run. */
        if ((strcmp(tests[t].name, "concurrent") == 0 ||
             strcmp(tests[t].name, "many_pending") == 0 ||
             strcmp(tests[t].name, "freed_pending") == 0) &&
            !nonblocking)
            continue;
        if (strcmp(tests[t].name, "threads") == 0 && nonblocking)
            continue;
        long before = coll_failures;
        tests[t].fn(tests[t].arg);
        if (coll_rank == 0 && coll_failures == before)
            printf("ok %s\n", tests[t].name);
    }
    red_fini();
    if (W != MPI_COMM_WORLD)
        MPI_Comm_free(&W);
    return coll_finish(nonblocking ? "collectives -n" : "collectives");
}
