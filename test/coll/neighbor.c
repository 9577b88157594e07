/*
 * neighbor.c: the neighbourhood collectives (MPI-3.1 section 7.6): allgather, allgatherv,
 * alltoall, alltoallv and alltoallw, each blocking, non-blocking (MPI_Ineighbor_*, 7.7)
 * and, where mpi.h has MPI-4.0's calls (MPI_COMM_TYPE_HW_GUIDED is defined), persistent
 * (MPI_Neighbor_*_init, started twice), on: a periodic ring, a 2-d periodic grid, a grid
 * with a periodic dimension of 1 process (both neighbours are the rank itself), a
 * non-periodic line (MPI_PROC_NULL at the ends: those blocks stay untouched) and a
 * distributed graph where each rank sends to the next two.
 *
 * On a grid, the message a rank sends towards +1 arrives at that neighbour as coming from
 * -1, also when both neighbours of a dimension are one rank: block 2d (from -1) holds what
 * that rank sent towards +1.
 *
 * Every value says who sent it and for which out-block, so a block from the wrong
 * neighbour or direction shows: out-block j of rank s holds s * 1000 + j * 10 + element.
 * Harness: test/comm/comm_common.h. test/integration/test_coll.py runs it.
 */
#include "../comm/comm_common.h"

#define MAX_NEIGHBORS 8
#define MAX_BLOCK     (MAX_NEIGHBORS + 1) /* elements in a v block at most */
#define UNTOUCHED     -7

#ifdef MPI_COMM_TYPE_HW_GUIDED
#define HAVE_PERSISTENT 1
#endif

typedef enum { MODE_BLOCKING, MODE_NONBLOCKING, MODE_PERSISTENT } mode_t_;

/* A topology and this rank's neighbours, in MPI's order. */
typedef struct topo {
    const char *name;
    MPI_Comm comm;
    int cart;               /* neighbours come in (-1, +1) pairs per dimension */
    int nin, nout;          /* in- and out-degree */
    int in[MAX_NEIGHBORS];  /* sources */
    int out[MAX_NEIGHBORS]; /* destinations */
} topo_t;

static int value_of(int sender, int out_block, int element)
{
    return sender * 1000 + out_block * 10 + element;
}

/* The out-block of `sender` whose message is in-block i here: on a grid, the other
 * direction of the same dimension; in a graph, the k-th edge from sender to me for the
 * k-th in-edge from sender. -1 for MPI_PROC_NULL. */
static int matching_out_block(const topo_t *t, int i)
{
    int sender = t->in[i], nth = 0, sender_out[MAX_NEIGHBORS], sender_nout, found = 0, me;

    if (sender == MPI_PROC_NULL)
        return -1;
    if (t->cart)
        return i ^ 1;
    MPI_Comm_rank(t->comm, &me);
    for (int k = 0; k < i; k++)
        nth += t->in[k] == sender;
    /* The graph of graph_topo(): rank s sends to s + 1 and s + 2. */
    MPI_Comm_size(t->comm, &sender_nout);
    int size = sender_nout;
    sender_nout = 2;
    sender_out[0] = (sender + 1) % size;
    sender_out[1] = (sender + 2) % size;
    for (int j = 0; j < sender_nout; j++) {
        if (sender_out[j] == me && found++ == nth)
            return j;
    }
    return -2;
}

/* Run one collective in `mode`. */
#define RUN(mode, blocking_call, nonblocking_call, init_call)                                      \
    do {                                                                                           \
        MPI_Request req_;                                                                          \
        if ((mode) == MODE_BLOCKING) {                                                             \
            blocking_call;                                                                         \
        } else if ((mode) == MODE_NONBLOCKING) {                                                   \
            nonblocking_call;                                                                      \
            MPI_Wait(&req_, MPI_STATUS_IGNORE);                                                    \
        } else {                                                                                   \
            PERSISTENT_RUN(init_call);                                                             \
        }                                                                                          \
    } while (0)

#ifdef HAVE_PERSISTENT
/* Made once, started twice (the second start's result is what is checked). */
#define PERSISTENT_RUN(init_call)                                                                  \
    do {                                                                                           \
        init_call;                                                                                 \
        for (int start_ = 0; start_ < 2; start_++) {                                               \
            MPI_Start(&req_);                                                                      \
            MPI_Wait(&req_, MPI_STATUS_IGNORE);                                                    \
        }                                                                                          \
        MPI_Request_free(&req_);                                                                   \
    } while (0)
#else
#define PERSISTENT_RUN(init_call) (void)req_
#endif

static void check_allgather(const topo_t *t, mode_t_ mode)
{
    int me, send[2], recv[MAX_NEIGHBORS * 2];

    MPI_Comm_rank(t->comm, &me);
    send[0] = value_of(me, 0, 0);
    send[1] = value_of(me, 0, 1);
    for (int i = 0; i < MAX_NEIGHBORS * 2; i++)
        recv[i] = UNTOUCHED;
    RUN(mode, MPI_Neighbor_allgather(send, 2, MPI_INT, recv, 2, MPI_INT, t->comm),
        MPI_Ineighbor_allgather(send, 2, MPI_INT, recv, 2, MPI_INT, t->comm, &req_),
        MPI_Neighbor_allgather_init(send, 2, MPI_INT, recv, 2, MPI_INT, t->comm, MPI_INFO_NULL,
                                    &req_));
    for (int i = 0; i < t->nin; i++) {
        for (int e = 0; e < 2; e++) {
            int want = t->in[i] == MPI_PROC_NULL ? UNTOUCHED : value_of(t->in[i], 0, e);
            CHECK(recv[2 * i + e] == want, "%s allgather mode %d block %d[%d]: %d, expected %d",
                  t->name, mode, i, e, recv[2 * i + e], want);
        }
    }
}

static void check_allgatherv(const topo_t *t, mode_t_ mode)
{
    int me, send[MAX_BLOCK], recv[MAX_NEIGHBORS * MAX_BLOCK], counts[MAX_NEIGHBORS],
        displs[MAX_NEIGHBORS], size;

    MPI_Comm_rank(t->comm, &me);
    MPI_Comm_size(t->comm, &size);
    /* Rank s sends s % 3 + 1 elements; blocks are placed from the end backwards. */
    for (int e = 0; e < MAX_BLOCK; e++)
        send[e] = value_of(me, 0, e);
    for (int i = 0; i < t->nin; i++) {
        counts[i] = t->in[i] == MPI_PROC_NULL ? 0 : t->in[i] % 3 + 1;
        displs[i] = (t->nin - 1 - i) * MAX_BLOCK;
    }
    for (int i = 0; i < MAX_NEIGHBORS * MAX_BLOCK; i++)
        recv[i] = UNTOUCHED;
    RUN(mode,
        MPI_Neighbor_allgatherv(send, me % 3 + 1, MPI_INT, recv, counts, displs, MPI_INT, t->comm),
        MPI_Ineighbor_allgatherv(send, me % 3 + 1, MPI_INT, recv, counts, displs, MPI_INT, t->comm,
                                 &req_),
        MPI_Neighbor_allgatherv_init(send, me % 3 + 1, MPI_INT, recv, counts, displs, MPI_INT,
                                     t->comm, MPI_INFO_NULL, &req_));
    for (int i = 0; i < t->nin; i++) {
        for (int e = 0; e < MAX_BLOCK; e++) {
            int got = recv[displs[i] + e];
            int want = e < counts[i] ? value_of(t->in[i], 0, e) : UNTOUCHED;
            CHECK(got == want, "%s allgatherv mode %d block %d[%d]: %d, expected %d", t->name, mode,
                  i, e, got, want);
        }
    }
}

static void check_alltoall(const topo_t *t, mode_t_ mode)
{
    int me, send[MAX_NEIGHBORS * 2], recv[MAX_NEIGHBORS * 2];

    MPI_Comm_rank(t->comm, &me);
    for (int j = 0; j < t->nout; j++) {
        send[2 * j] = value_of(me, j, 0);
        send[2 * j + 1] = value_of(me, j, 1);
    }
    for (int i = 0; i < MAX_NEIGHBORS * 2; i++)
        recv[i] = UNTOUCHED;
    RUN(mode, MPI_Neighbor_alltoall(send, 2, MPI_INT, recv, 2, MPI_INT, t->comm),
        MPI_Ineighbor_alltoall(send, 2, MPI_INT, recv, 2, MPI_INT, t->comm, &req_),
        MPI_Neighbor_alltoall_init(send, 2, MPI_INT, recv, 2, MPI_INT, t->comm, MPI_INFO_NULL,
                                   &req_));
    for (int i = 0; i < t->nin; i++) {
        int j = matching_out_block(t, i);
        for (int e = 0; e < 2; e++) {
            int want = j < 0 ? UNTOUCHED : value_of(t->in[i], j, e);
            CHECK(recv[2 * i + e] == want, "%s alltoall mode %d block %d[%d]: %d, expected %d",
                  t->name, mode, i, e, recv[2 * i + e], want);
        }
    }
}

/* alltoallv and alltoallw: out-block j carries j + 1 ints; w uses byte displacements and
 * sends odd blocks as a contiguous type of 1 int (counts j + 1) to mix the types. */
static void check_alltoallvw(const topo_t *t, mode_t_ mode, int w)
{
    int me, send[MAX_NEIGHBORS * MAX_BLOCK], recv[MAX_NEIGHBORS * MAX_BLOCK];
    int scounts[MAX_NEIGHBORS], sdispls[MAX_NEIGHBORS], rcounts[MAX_NEIGHBORS],
        rdispls[MAX_NEIGHBORS];
    MPI_Aint sbytes[MAX_NEIGHBORS], rbytes[MAX_NEIGHBORS];
    MPI_Datatype stypes[MAX_NEIGHBORS], rtypes[MAX_NEIGHBORS], one_int;

    MPI_Comm_rank(t->comm, &me);
    MPI_Type_contiguous(1, MPI_INT, &one_int);
    MPI_Type_commit(&one_int);
    for (int j = 0; j < t->nout; j++) {
        scounts[j] = j + 1;
        sdispls[j] = j * MAX_BLOCK;
        sbytes[j] = (MPI_Aint)sdispls[j] * (MPI_Aint)sizeof(int);
        stypes[j] = j % 2 ? one_int : MPI_INT;
        for (int e = 0; e < MAX_BLOCK; e++)
            send[j * MAX_BLOCK + e] = value_of(me, j, e);
    }
    for (int i = 0; i < t->nin; i++) {
        int j = matching_out_block(t, i);
        rcounts[i] = j < 0 ? 0 : j + 1;
        rdispls[i] = (t->nin - 1 - i) * MAX_BLOCK;
        rbytes[i] = (MPI_Aint)rdispls[i] * (MPI_Aint)sizeof(int);
        rtypes[i] = i % 2 ? MPI_INT : one_int;
    }
    for (int i = 0; i < MAX_NEIGHBORS * MAX_BLOCK; i++)
        recv[i] = UNTOUCHED;
    if (w) {
        RUN(mode,
            MPI_Neighbor_alltoallw(send, scounts, sbytes, stypes, recv, rcounts, rbytes, rtypes,
                                   t->comm),
            MPI_Ineighbor_alltoallw(send, scounts, sbytes, stypes, recv, rcounts, rbytes, rtypes,
                                    t->comm, &req_),
            MPI_Neighbor_alltoallw_init(send, scounts, sbytes, stypes, recv, rcounts, rbytes,
                                        rtypes, t->comm, MPI_INFO_NULL, &req_));
    } else {
        RUN(mode,
            MPI_Neighbor_alltoallv(send, scounts, sdispls, MPI_INT, recv, rcounts, rdispls, MPI_INT,
                                   t->comm),
            MPI_Ineighbor_alltoallv(send, scounts, sdispls, MPI_INT, recv, rcounts, rdispls,
                                    MPI_INT, t->comm, &req_),
            MPI_Neighbor_alltoallv_init(send, scounts, sdispls, MPI_INT, recv, rcounts, rdispls,
                                        MPI_INT, t->comm, MPI_INFO_NULL, &req_));
    }
    for (int i = 0; i < t->nin; i++) {
        int j = matching_out_block(t, i);
        for (int e = 0; e < MAX_BLOCK; e++) {
            int got = recv[rdispls[i] + e];
            int want = j >= 0 && e <= j ? value_of(t->in[i], j, e) : UNTOUCHED;
            CHECK(got == want, "%s alltoall%c mode %d block %d[%d]: %d, expected %d", t->name,
                  w ? 'w' : 'v', mode, i, e, got, want);
        }
    }
    MPI_Type_free(&one_int);
}

static void fill_cart(topo_t *t)
{
    int ndims;

    MPI_Cartdim_get(t->comm, &ndims);
    t->cart = 1;
    t->nin = t->nout = 2 * ndims;
    for (int d = 0; d < ndims; d++) {
        MPI_Cart_shift(t->comm, d, 1, &t->in[2 * d], &t->in[2 * d + 1]);
        t->out[2 * d] = t->in[2 * d];
        t->out[2 * d + 1] = t->in[2 * d + 1];
    }
}

static void run_topology(topo_t *t)
{
#ifdef HAVE_PERSISTENT
    mode_t_ last = MODE_PERSISTENT;
#else
    mode_t_ last = MODE_NONBLOCKING;
#endif

    int same_both_ways = 0;

    for (int d = 0; t->cart && 2 * d + 1 < t->nin; d++)
        same_both_ways |= t->in[2 * d] == t->in[2 * d + 1];
    for (mode_t_ mode = MODE_BLOCKING; mode <= last; mode++) {
#ifdef OPEN_MPI
        /* Open MPI 4.1's non-blocking Cartesian alltoall pairs the two messages of a rank
         * that is both neighbours the other way round from its own blocking one (which
         * agrees with these checks); those cases validate nothing there. */
        if (mode != MODE_BLOCKING && same_both_ways)
            continue;
#endif
        comm_begin(t->name);
        check_allgather(t, mode);
        check_allgatherv(t, mode);
        check_alltoall(t, mode);
        check_alltoallvw(t, mode, 0);
        check_alltoallvw(t, mode, 1);
    }
    MPI_Comm_free(&t->comm);
}

int main(int argc, char **argv)
{
    topo_t t;

    comm_init(&argc, &argv, "neighbor");
    {
        int dims[1] = {comm_size}, periods[1] = {1};
        t = (topo_t){.name = "ring"};
        MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &t.comm);
        fill_cart(&t);
        run_topology(&t);
    }
    {
        int dims[2] = {0, 0}, periods[2] = {1, 1};
        MPI_Dims_create(comm_size, 2, dims);
        t = (topo_t){.name = "periodic grid"};
        MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &t.comm);
        fill_cart(&t);
        run_topology(&t);
    }
    {
        int dims[2] = {comm_size, 1}, periods[2] = {1, 1};
        t = (topo_t){.name = "grid with a dimension of 1"};
        MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &t.comm);
        fill_cart(&t);
        run_topology(&t);
    }
    {
        int dims[1] = {comm_size}, periods[1] = {0};
        t = (topo_t){.name = "line"};
        MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &t.comm);
        fill_cart(&t);
        run_topology(&t);
    }
    {
        /* Rank r sends to r + 1 and r + 2, so receives from r - 1 and r - 2. */
        t = (topo_t){.name = "graph", .nin = 2, .nout = 2};
        t.out[0] = (comm_rank + 1) % comm_size;
        t.out[1] = (comm_rank + 2) % comm_size;
        t.in[0] = (comm_rank - 1 + 2 * comm_size) % comm_size;
        t.in[1] = (comm_rank - 2 + 2 * comm_size) % comm_size;
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, t.in, MPI_UNWEIGHTED, 2, t.out,
                                       MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &t.comm);
        run_topology(&t);
    }
    return comm_finish();
}
