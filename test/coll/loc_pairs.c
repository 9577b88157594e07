/*
 * loc_pairs.c: MPI_MINLOC and MPI_MAXLOC on the padded pair types MPI_DOUBLE_INT and
 * MPI_LONG_DOUBLE_INT (a double and an int take 12 bytes of a 16-byte pair; a long double
 * and an int 20 of 32), through every reduction that keeps partial results in buffers of
 * the library's own: Reduce at every root, Allreduce, Reduce_scatter_block, Scan, Exscan,
 * blocking and not, at counts 1, 2, 3 and 7.
 *
 * Run under valgrind at 3 and 5 ranks (test/integration/test_coll.py): a reduction that
 * wrote a pair's padding past the end of a temporary buffer corrupted the heap there
 * ("free(): invalid pointer"), and valgrind names the write even when malloc's rounding
 * hides it. The results are checked too: rank r contributes, for element k, the value
 * (r * 7 + k * 3) % 5 with index r, so there are ties, which the lower index wins.
 *
 * Harness: test/comm/comm_common.h (FAIL lines, a done line per rank).
 */
#include "../comm/comm_common.h"

#define MAX_COUNT 7

struct double_int {
    double value;
    int index;
};

struct long_double_int {
    long double value;
    int index;
};

/* Rank r's value of element k. */
static int contribution(int r, int k)
{
    return (r * 7 + k * 3) % 5;
}

/* The MINLOC (minloc != 0) or MAXLOC of element k over ranks first..last. */
static void expected(int first, int last, int k, int minloc, int *value_out, int *index_out)
{
    int best = contribution(first, k), at = first;

    for (int r = first + 1; r <= last; r++) {
        int v = contribution(r, k);

        if (minloc ? v < best : v > best) {
            best = v;
            at = r;
        }
    }
    *value_out = best;
    *index_out = at;
}

/* Pairs of either type seen through one interface: fill, and read back element k. */
typedef struct pair_kind {
    const char *name;
    MPI_Datatype type;
    size_t size;
    void (*set)(void *buf, int k, int value, int index);
    void (*get)(const void *buf, int k, int *value_out, int *index_out);
} pair_kind_t;

static void set_dint(void *buf, int k, int value, int index)
{
    ((struct double_int *)buf)[k] = (struct double_int){value, index};
}

static void get_dint(const void *buf, int k, int *value_out, int *index_out)
{
    *value_out = (int)((const struct double_int *)buf)[k].value;
    *index_out = ((const struct double_int *)buf)[k].index;
}

static void set_ldint(void *buf, int k, int value, int index)
{
    ((struct long_double_int *)buf)[k] = (struct long_double_int){value, index};
}

static void get_ldint(const void *buf, int k, int *value_out, int *index_out)
{
    *value_out = (int)((const struct long_double_int *)buf)[k].value;
    *index_out = ((const struct long_double_int *)buf)[k].index;
}

/* Check element k of `buf` against the reduction over ranks first..last. */
static void check_pairs(const pair_kind_t *kind, const void *buf, int count, int first, int last,
                        int minloc, const char *what)
{
    for (int k = 0; k < count; k++) {
        int want_value, want_index, value, index;

        expected(first, last, k, minloc, &want_value, &want_index);
        kind->get(buf, k, &value, &index);
        CHECK(value == want_value && index == want_index,
              "%s %s %s count %d element %d: got (%d, %d), expected (%d, %d)", what, kind->name,
              minloc ? "MINLOC" : "MAXLOC", count, k, value, index, want_value, want_index);
    }
}

/* Fill `count` pairs of this rank's contribution; `scratch` gets pairs of -1 (the receive
 * buffers are checked to be overwritten). */
static void fill(const pair_kind_t *kind, void *send, void *recv, int count)
{
    for (int k = 0; k < count; k++) {
        kind->set(send, k, contribution(comm_rank, k), comm_rank);
    }
    for (int k = 0; k < count * comm_size; k++) {
        kind->set(recv, k, -1, -1);
    }
}

/* Complete a non-blocking collective (or nothing when the call was blocking). */
static void complete(MPI_Request *request)
{
    if (*request != MPI_REQUEST_NULL) {
        MPI_Wait(request, MPI_STATUS_IGNORE);
    }
}

static void run_kind(const pair_kind_t *kind, int nonblocking)
{
    void *send = malloc(kind->size * MAX_COUNT * (size_t)comm_size);
    void *recv = malloc(kind->size * MAX_COUNT * (size_t)comm_size);
    static const int counts[] = {1, 2, 3, MAX_COUNT};
    MPI_Op ops[2] = {MPI_MAXLOC, MPI_MINLOC};
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Request *req = nonblocking ? &request : NULL;

    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        int count = counts[c];

        for (int minloc = 0; minloc < 2; minloc++) {
            MPI_Op op = ops[minloc];

            for (int root = 0; root < comm_size; root++) {
                fill(kind, send, recv, count);
                if (req) {
                    MPI_Ireduce(send, recv, count, kind->type, op, root, MPI_COMM_WORLD, req);
                } else {
                    MPI_Reduce(send, recv, count, kind->type, op, root, MPI_COMM_WORLD);
                }
                complete(&request);
                if (comm_rank == root) {
                    check_pairs(kind, recv, count, 0, comm_size - 1, minloc, "reduce");
                }
            }
            fill(kind, send, recv, count);
            if (req) {
                MPI_Iallreduce(send, recv, count, kind->type, op, MPI_COMM_WORLD, req);
            } else {
                MPI_Allreduce(send, recv, count, kind->type, op, MPI_COMM_WORLD);
            }
            complete(&request);
            check_pairs(kind, recv, count, 0, comm_size - 1, minloc, "allreduce");

            /* In place: the contribution starts in the receive buffer. */
            fill(kind, recv, send, count);
            if (req) {
                MPI_Iallreduce(MPI_IN_PLACE, recv, count, kind->type, op, MPI_COMM_WORLD, req);
            } else {
                MPI_Allreduce(MPI_IN_PLACE, recv, count, kind->type, op, MPI_COMM_WORLD);
            }
            complete(&request);
            check_pairs(kind, recv, count, 0, comm_size - 1, minloc, "allreduce in place");

            fill(kind, send, recv, count);
            if (req) {
                MPI_Iscan(send, recv, count, kind->type, op, MPI_COMM_WORLD, req);
            } else {
                MPI_Scan(send, recv, count, kind->type, op, MPI_COMM_WORLD);
            }
            complete(&request);
            check_pairs(kind, recv, count, 0, comm_rank, minloc, "scan");

            fill(kind, send, recv, count);
            if (req) {
                MPI_Iexscan(send, recv, count, kind->type, op, MPI_COMM_WORLD, req);
            } else {
                MPI_Exscan(send, recv, count, kind->type, op, MPI_COMM_WORLD);
            }
            complete(&request);
            if (comm_rank > 0) {
                check_pairs(kind, recv, count, 0, comm_rank - 1, minloc, "exscan");
            }

            /* Reduce_scatter_block: every rank sends count pairs per rank, block r of the
             * element-wise reduction goes to rank r; element k of every block holds the
             * same contributions, so each block equals the first count elements. */
            for (int b = 0; b < comm_size; b++) {
                for (int k = 0; k < count; k++) {
                    kind->set((char *)send + kind->size * (size_t)(b * count), k,
                              contribution(comm_rank, k), comm_rank);
                }
            }
            for (int k = 0; k < count; k++) {
                kind->set(recv, k, -1, -1);
            }
            if (req) {
                MPI_Ireduce_scatter_block(send, recv, count, kind->type, op, MPI_COMM_WORLD, req);
            } else {
                MPI_Reduce_scatter_block(send, recv, count, kind->type, op, MPI_COMM_WORLD);
            }
            complete(&request);
            check_pairs(kind, recv, count, 0, comm_size - 1, minloc, "reduce_scatter_block");
        }
    }
    free(send);
    free(recv);
}

int main(int argc, char **argv)
{
    const pair_kind_t kinds[] = {
        {"MPI_DOUBLE_INT", MPI_DOUBLE_INT, sizeof(struct double_int), set_dint, get_dint},
        {"MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT, sizeof(struct long_double_int), set_ldint,
         get_ldint},
    };

    comm_init(&argc, &argv, "loc_pairs");
    for (int nonblocking = 0; nonblocking < 2; nonblocking++) {
        for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
            comm_begin(nonblocking ? "non-blocking reductions" : "blocking reductions");
            run_kind(&kinds[k], nonblocking);
        }
    }
    return comm_finish();
}
