/*
 * intercomm.c: intercommunicators (MPI-3.1 section 6.6) and everything done on them:
 * MPI_Intercomm_create (leader 0, and a last-rank leader), the accessors, names,
 * attributes, compare, dup, dup_with_info, idup, split, split_type, create, merge (both
 * orders and a tie), free with a collective pending; point-to-point (ranks name the
 * remote group, MPI_ANY_SOURCE, probes and matched probes, persistent requests, sendrecv,
 * synchronous sends, MPI_PROC_NULL, an out-of-range rank); every collective defined on
 * intercommunicators (MPI-3.1 sections 5.2.2, 5.2.3), blocking and non-blocking, with
 * MPI_ROOT and MPI_PROC_NULL roots, a non-commutative user op, and the errors of the
 * undefined ones. Where mpi.h has MPI-4.0's calls, also the persistent collectives
 * (MPI_<coll>_init; the scans refused), MPI_Comm_idup_with_info, and the neighbourhood
 * collectives refused for want of a topology.
 *
 * The world is cut in two groups: A, the lower half of the ranks, and B, the rest (at 3
 * ranks, 1 and 2). Needs 2 ranks or more.
 */
#include "comm_common.h"

/* This process's view of the two groups of the current intercommunicator. */
static int my_group;      /* 0: A (low world ranks), 1: B */
static int group_size[2]; /* processes of A and B */
static int lrank, lsize, rsize;

/* The world rank of rank r of group g (both groups keep world order). */
static int world_of(int g, int r)
{
    return g == 0 ? r : group_size[0] + r;
}

/* The world rank of remote rank r. */
static int remote_world(int r)
{
    return world_of(1 - my_group, r);
}

/* The world ranks of a group's members, by translation to MPI_COMM_WORLD's group. */
static void group_world_ranks(MPI_Group group, int n, int *out)
{
    MPI_Group world;
    int ranks[64];

    MPI_Comm_group(MPI_COMM_WORLD, &world);
    for (int i = 0; i < n; i++)
        ranks[i] = i;
    MPI_Group_translate_ranks(group, n, ranks, world, out);
    MPI_Group_free(&world);
}

/* An intercommunicator of A and B whose members are in world order on each side. */
static void check_shape(MPI_Comm inter, const char *what)
{
    int flag = 0, size = -1, rank = -1, remote = -1, world[64];
    MPI_Group group;

    MPI_Comm_test_inter(inter, &flag);
    CHECK(flag, "%s: not an intercommunicator", what);
    MPI_Comm_size(inter, &size);
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_remote_size(inter, &remote);
    CHECK(size == lsize && rank == lrank && remote == rsize,
          "%s: size %d rank %d remote size %d, expected %d %d %d", what, size, rank, remote, lsize,
          lrank, rsize);
    if (remote != rsize || size != lsize)
        return;
    MPI_Comm_remote_group(inter, &group);
    group_world_ranks(group, rsize, world);
    for (int r = 0; r < rsize; r++)
        CHECK(world[r] == remote_world(r), "%s: remote rank %d is world rank %d, expected %d", what,
              r, world[r], remote_world(r));
    MPI_Group_free(&group);
    MPI_Comm_group(inter, &group);
    group_world_ranks(group, lsize, world);
    for (int r = 0; r < lsize; r++)
        CHECK(world[r] == world_of(my_group, r), "%s: local rank %d is world rank %d", what, r,
              world[r]);
    MPI_Group_free(&group);
}

/* The intercommunicator of A and B, with its leaders at local rank `leader_of[g]`. */
static MPI_Comm make_inter(MPI_Comm *local_out, const int leader_of[2], int tag)
{
    MPI_Comm local, inter;
    int remote_leader = world_of(1 - my_group, leader_of[1 - my_group]);

    MPI_Comm_split(MPI_COMM_WORLD, my_group, comm_rank, &local);
    MPI_Intercomm_create(local, leader_of[my_group], MPI_COMM_WORLD, remote_leader, tag, &inter);
    *local_out = local;
    return inter;
}

/*
 * Point-to-point
 */

static void test_p2p_each(MPI_Comm inter)
{
    int out[64], in[64];
    MPI_Request reqs[128];
    MPI_Status st[128];

    comm_begin("p2p: each to each");
    for (int r = 0; r < rsize; r++) {
        in[r] = -1;
        out[r] = comm_rank * 1000 + r;
        MPI_Irecv(&in[r], 1, MPI_INT, r, 5, inter, &reqs[r]);
    }
    for (int r = 0; r < rsize; r++)
        MPI_Isend(&out[r], 1, MPI_INT, r, 5, inter, &reqs[rsize + r]);
    MPI_Waitall(2 * rsize, reqs, st);
    for (int r = 0; r < rsize; r++) {
        CHECK(in[r] == remote_world(r) * 1000 + lrank, "from remote rank %d got %d", r, in[r]);
        CHECK(st[r].MPI_SOURCE == r && st[r].MPI_TAG == 5, "status source %d tag %d for rank %d",
              st[r].MPI_SOURCE, st[r].MPI_TAG, r);
    }
}

/* MPI_ANY_SOURCE takes each remote rank once; the status says which. */
static void test_p2p_any_source(MPI_Comm inter)
{
    int value = comm_rank, got, seen[64] = {0};
    MPI_Request reqs[64];
    MPI_Status st;

    comm_begin("p2p: any source");
    for (int r = 0; r < rsize; r++)
        MPI_Isend(&value, 1, MPI_INT, r, 6, inter, &reqs[r]);
    for (int i = 0; i < rsize; i++) {
        MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 6, inter, &st);
        CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize, "source %d", st.MPI_SOURCE);
        if (st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize) {
            seen[st.MPI_SOURCE]++;
            CHECK(got == remote_world(st.MPI_SOURCE), "from %d got %d", st.MPI_SOURCE, got);
        }
    }
    for (int r = 0; r < rsize; r++)
        CHECK(seen[r] == 1, "remote rank %d seen %d times", r, seen[r]);
    MPI_Waitall(rsize, reqs, MPI_STATUSES_IGNORE);
}

/* Probe, Iprobe, Mprobe, Improbe with a wildcard and a specific source. */
static void test_p2p_probes(MPI_Comm inter)
{
    int value[2] = {comm_rank, lrank}, got[2], count, flag;
    MPI_Request reqs[64];
    MPI_Message msg;
    MPI_Status st;

    comm_begin("p2p: probes");
    for (int tag = 7; tag <= 9; tag++) {
        for (int r = 0; r < rsize; r++)
            MPI_Isend(value, 2, MPI_INT, r, tag, inter, &reqs[r]);
        for (int i = 0; i < rsize; i++) {
            if (tag == 7) {
                MPI_Probe(MPI_ANY_SOURCE, tag, inter, &st);
                MPI_Get_count(&st, MPI_INT, &count);
                CHECK(count == 2, "probe count %d", count);
                MPI_Recv(got, 2, MPI_INT, st.MPI_SOURCE, tag, inter, MPI_STATUS_IGNORE);
            } else if (tag == 8) {
                MPI_Mprobe(MPI_ANY_SOURCE, tag, inter, &msg, &st);
                MPI_Mrecv(got, 2, MPI_INT, &msg, MPI_STATUS_IGNORE);
            } else {
                /* A specific source: remote rank i, found by polling. */
                do {
                    MPI_Iprobe(i, tag, inter, &flag, &st);
                } while (!flag);
                flag = 0;
                do {
                    MPI_Improbe(i, tag, inter, &flag, &msg, &st);
                } while (!flag);
                MPI_Mrecv(got, 2, MPI_INT, &msg, MPI_STATUS_IGNORE);
                CHECK(st.MPI_SOURCE == i, "improbe of %d found source %d", i, st.MPI_SOURCE);
            }
            CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize && got[1] == st.MPI_SOURCE &&
                      got[0] == remote_world(st.MPI_SOURCE),
                  "tag %d: source %d sent {%d, %d}", tag, st.MPI_SOURCE, got[0], got[1]);
        }
        MPI_Waitall(rsize, reqs, MPI_STATUSES_IGNORE);
    }
}

/* Persistent sends and receives to every remote rank, started twice. */
static void test_p2p_persistent(MPI_Comm inter)
{
    int out[64], in[64];
    MPI_Request reqs[128];

    comm_begin("p2p: persistent");
    for (int r = 0; r < rsize; r++) {
        MPI_Recv_init(&in[r], 1, MPI_INT, r, 10, inter, &reqs[r]);
        MPI_Send_init(&out[r], 1, MPI_INT, r, 10, inter, &reqs[rsize + r]);
    }
    for (int round = 0; round < 2; round++) {
        for (int r = 0; r < rsize; r++) {
            out[r] = round * 100000 + comm_rank * 100 + r;
            in[r] = -1;
        }
        MPI_Startall(2 * rsize, reqs);
        MPI_Waitall(2 * rsize, reqs, MPI_STATUSES_IGNORE);
        for (int r = 0; r < rsize; r++)
            CHECK(in[r] == round * 100000 + remote_world(r) * 100 + lrank,
                  "round %d: from %d got %d", round, r, in[r]);
    }
    for (int i = 0; i < 2 * rsize; i++)
        MPI_Request_free(&reqs[i]);
}

/* Sendrecv and synchronous sends in rank order, MPI_PROC_NULL, and a rank out of range. */
static void test_p2p_modes(MPI_Comm inter)
{
    int out = comm_rank, in, err;
    MPI_Request req;
    MPI_Status st;

    comm_begin("p2p: sendrecv, ssend, proc_null, errors");
    for (int r = 0; r < rsize; r++) {
        in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, r, 11, &in, 1, MPI_INT, r, 11, inter, &st);
        CHECK(in == remote_world(r) && st.MPI_SOURCE == r, "sendrecv with %d got %d from %d", r, in,
              st.MPI_SOURCE);
    }
    for (int r = 0; r < rsize; r++) {
        in = -1;
        MPI_Irecv(&in, 1, MPI_INT, r, 12, inter, &req);
        MPI_Ssend(&out, 1, MPI_INT, r, 12, inter);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        CHECK(in == remote_world(r), "ssend round with %d got %d", r, in);
    }
    MPI_Send(&out, 1, MPI_INT, MPI_PROC_NULL, 13, inter);
    MPI_Recv(&in, 1, MPI_INT, MPI_PROC_NULL, 13, inter, &st);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "receive from MPI_PROC_NULL: source %d", st.MPI_SOURCE);
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    err = MPI_Send(&out, 1, MPI_INT, rsize, 13, inter);
    MPI_Error_class(err, &err);
    CHECK(err == MPI_ERR_RANK, "a send to remote rank %d (out of range) gave class %d", rsize, err);
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_ARE_FATAL);
}

/*
 * Collectives
 */

/* A 2x2 integer matrix; their product does not commute, so a reduction must keep rank
 * order (MPI-3.1 section 5.9.1). */
typedef struct {
    long long m[4];
} mat_t;

static MPI_Datatype mat_type;
static MPI_Op mat_mul;

static void mat_mul_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    mat_t *a = in, *b = inout;

    (void)type;
    for (int i = 0; i < *len; i++) {
        mat_t r = {{a[i].m[0] * b[i].m[0] + a[i].m[1] * b[i].m[2],
                    a[i].m[0] * b[i].m[1] + a[i].m[1] * b[i].m[3],
                    a[i].m[2] * b[i].m[0] + a[i].m[3] * b[i].m[2],
                    a[i].m[2] * b[i].m[1] + a[i].m[3] * b[i].m[3]}};
        b[i] = r;
    }
}

/* The matrix of rank r of a group; the product over 0..n-1 in order. */
static mat_t mat_of(int r)
{
    return (mat_t){{r + 2, 1, 0, 1}};
}

static mat_t mat_product(int n)
{
    mat_t acc = mat_of(0);
    for (int r = 1; r < n; r++) {
        mat_t next = mat_of(r);
        int one = 1;
        mat_mul_fn(&acc, &next, &one, NULL);
        acc = next;
    }
    return acc;
}

static int sum_world(int g)
{
    int sum = 0;
    for (int r = 0; r < group_size[g]; r++)
        sum += world_of(g, r);
    return sum;
}

/* The root argument of a rooted collective whose root is rank `root` of group `root_g`. */
static int root_arg(int root_g, int root)
{
    if (my_group != root_g)
        return root;
    return lrank == root ? MPI_ROOT : MPI_PROC_NULL;
}

/* How the collectives of test_coll_rooted and test_coll_all are called. */
enum { COLL_BLOCKING, COLL_NONBLOCKING, COLL_PERSISTENT };

/* MPI-4.0's persistent form, where mpi.h has MPI-4.0's calls (not Open MPI 4.1's, which
 * lacks MPI_COMM_TYPE_HW_GUIDED too; the persistent mode is not run there). */
#ifdef MPI_COMM_TYPE_HW_GUIDED
#define COLL_INIT(Name, ...) MPI_##Name##_init(__VA_ARGS__, MPI_INFO_NULL, &req)
#else
#define COLL_INIT(Name, ...) MPI_ERR_OTHER
#endif

/*
 * Run MPI_<Name>(args) in `mode`: at once, as MPI_I<name> and a wait, or made once with
 * MPI_<Name>_init and started twice (the same data: the second start must complete with
 * the same result in the same buffers), then freed.
 */
#define COLL(Name, name, ...)                                                                      \
    do {                                                                                           \
        if (mode == COLL_NONBLOCKING) {                                                            \
            MPI_I##name(__VA_ARGS__, &req);                                                        \
            MPI_Wait(&req, MPI_STATUS_IGNORE);                                                     \
        } else if (mode == COLL_PERSISTENT) {                                                      \
            int init_err = COLL_INIT(Name, __VA_ARGS__);                                           \
            CHECK(init_err == MPI_SUCCESS, "MPI_%s_init failed", #Name);                           \
            if (init_err != MPI_SUCCESS)                                                           \
                break;                                                                             \
            for (int start = 0; start < 2; start++) {                                              \
                MPI_Start(&req);                                                                   \
                MPI_Wait(&req, MPI_STATUS_IGNORE);                                                 \
            }                                                                                      \
            MPI_Request_free(&req);                                                                \
        } else {                                                                                   \
            MPI_##Name(__VA_ARGS__);                                                               \
        }                                                                                          \
    } while (0)

static void test_coll_rooted(MPI_Comm inter, int mode)
{
    static const char *const steps[] = {"coll: rooted", "coll: rooted, non-blocking",
                                        "coll: rooted, persistent"};
    MPI_Request req;

    comm_begin(steps[mode]);
    for (int root_g = 0; root_g < 2; root_g++) {
        int root = group_size[root_g] - 1, arg = root_arg(root_g, root);
        int root_world = world_of(root_g, root);
        int is_root = arg == MPI_ROOT, idle = arg == MPI_PROC_NULL;
        int buf[3], blocks[128], counts[64], displs[64], mine[64];

        /* Bcast */
        for (int i = 0; i < 3; i++)
            buf[i] = is_root ? 500 + root_world + i : -7;
        COLL(Bcast, bcast, buf, 3, MPI_INT, arg, inter);
        for (int i = 0; i < 3; i++)
            CHECK(buf[i] == (idle ? -7 : 500 + root_world + i), "bcast from group %d: [%d] = %d",
                  root_g, i, buf[i]);

        /* Reduce: a sum, and the non-commutative product in rank order */
        int val[2] = {comm_rank + 1, 1}, res[2] = {-7, -7};
        COLL(Reduce, reduce, val, res, 2, MPI_INT, MPI_SUM, arg, inter);
        if (is_root)
            CHECK(res[0] == sum_world(1 - root_g) + rsize && res[1] == rsize,
                  "reduce at the root of group %d: {%d, %d}", root_g, res[0], res[1]);
        else
            CHECK(res[0] == -7, "reduce wrote %d outside the root", res[0]);
        mat_t m = mat_of(lrank), prod = {{0, 0, 0, 0}}, want = mat_product(rsize);
        COLL(Reduce, reduce, &m, &prod, 1, mat_type, mat_mul, arg, inter);
        if (is_root)
            CHECK(memcmp(&prod, &want, sizeof(want)) == 0,
                  "product at the root of group %d: {%lld %lld %lld %lld}", root_g, prod.m[0],
                  prod.m[1], prod.m[2], prod.m[3]);

        /* Gather: one block {world rank, local rank} from every process of the other group */
        int two[2] = {comm_rank, lrank};
        for (int i = 0; i < 2 * rsize; i++)
            blocks[i] = -1;
        COLL(Gather, gather, two, 2, MPI_INT, blocks, 2, MPI_INT, arg, inter);
        if (is_root)
            for (int r = 0; r < rsize; r++)
                CHECK(blocks[2 * r] == remote_world(r) && blocks[2 * r + 1] == r,
                      "gather block %d = {%d, %d}", r, blocks[2 * r], blocks[2 * r + 1]);

        /* Gatherv: r + 1 elements from remote rank r, one element apart */
        int total = 0;
        for (int r = 0; r < rsize; r++) {
            counts[r] = r + 1;
            displs[r] = total;
            total += r + 2;
        }
        for (int i = 0; i < lrank + 1; i++)
            mine[i] = comm_rank * 10 + i;
        for (int i = 0; i < total; i++)
            blocks[i] = -1;
        COLL(Gatherv, gatherv, mine, lrank + 1, MPI_INT, blocks, counts, displs, MPI_INT, arg,
             inter);
        if (is_root) {
            for (int r = 0; r < rsize; r++) {
                for (int i = 0; i < r + 1; i++)
                    CHECK(blocks[displs[r] + i] == remote_world(r) * 10 + i,
                          "gatherv block %d[%d] = %d", r, i, blocks[displs[r] + i]);
                CHECK(blocks[displs[r] + r + 1] == -1, "gatherv wrote in the gap after %d", r);
            }
        }

        /* Scatter: block r {root world * 100 + r, r} to remote rank r */
        if (is_root)
            for (int r = 0; r < rsize; r++) {
                blocks[2 * r] = root_world * 100 + r;
                blocks[2 * r + 1] = r;
            }
        two[0] = two[1] = -1;
        COLL(Scatter, scatter, blocks, 2, MPI_INT, two, 2, MPI_INT, arg, inter);
        if (!is_root && !idle)
            CHECK(two[0] == root_world * 100 + lrank && two[1] == lrank, "scatter got {%d, %d}",
                  two[0], two[1]);

        /* Scatterv: r + 1 elements to remote rank r */
        if (is_root)
            for (int r = 0; r < rsize; r++)
                for (int i = 0; i < r + 1; i++)
                    blocks[displs[r] + i] = root_world * 100 + r * 10 + i;
        for (int i = 0; i < 64; i++)
            mine[i] = -1;
        COLL(Scatterv, scatterv, blocks, counts, displs, MPI_INT, mine, lrank + 1, MPI_INT, arg,
             inter);
        if (!is_root && !idle)
            for (int i = 0; i < lrank + 1; i++)
                CHECK(mine[i] == root_world * 100 + lrank * 10 + i, "scatterv [%d] = %d", i,
                      mine[i]);
    }
}

static void test_coll_all(MPI_Comm inter, int mode)
{
    static const char *const steps[] = {"coll: all", "coll: all, non-blocking",
                                        "coll: all, persistent"};
    MPI_Request req;
    int blocks[256], mine[64], counts[64], displs[64], scounts[64], sdispls[64];
    int total, in[256];

    comm_begin(steps[mode]);

    /* Barrier */
    COLL(Barrier, barrier, inter);

    /* Allreduce: the sum, and the product in rank order, of the other group's values */
    int val[2] = {comm_rank + 1, 1}, res[2] = {-1, -1};
    COLL(Allreduce, allreduce, val, res, 2, MPI_INT, MPI_SUM, inter);
    CHECK(res[0] == sum_world(1 - my_group) + rsize && res[1] == rsize, "allreduce {%d, %d}",
          res[0], res[1]);
    mat_t m = mat_of(lrank), prod, want = mat_product(rsize);
    COLL(Allreduce, allreduce, &m, &prod, 1, mat_type, mat_mul, inter);
    CHECK(memcmp(&prod, &want, sizeof(want)) == 0, "allreduce product {%lld %lld %lld %lld}",
          prod.m[0], prod.m[1], prod.m[2], prod.m[3]);

    /* Allgather: {world rank, local rank} of every process of the other group */
    int two[2] = {comm_rank, lrank};
    COLL(Allgather, allgather, two, 2, MPI_INT, blocks, 2, MPI_INT, inter);
    for (int r = 0; r < rsize; r++)
        CHECK(blocks[2 * r] == remote_world(r) && blocks[2 * r + 1] == r,
              "allgather block %d = {%d, %d}", r, blocks[2 * r], blocks[2 * r + 1]);

    /* Allgatherv: r + 1 elements of remote rank r, one element apart */
    total = 0;
    for (int r = 0; r < rsize; r++) {
        counts[r] = r + 1;
        displs[r] = total;
        total += r + 2;
    }
    for (int i = 0; i < lrank + 1; i++)
        mine[i] = comm_rank * 10 + i;
    for (int i = 0; i < total; i++)
        blocks[i] = -1;
    COLL(Allgatherv, allgatherv, mine, lrank + 1, MPI_INT, blocks, counts, displs, MPI_INT, inter);
    for (int r = 0; r < rsize; r++) {
        for (int i = 0; i < r + 1; i++)
            CHECK(blocks[displs[r] + i] == remote_world(r) * 10 + i, "allgatherv block %d[%d] = %d",
                  r, i, blocks[displs[r] + i]);
        CHECK(blocks[displs[r] + r + 1] == -1, "allgatherv wrote in the gap after %d", r);
    }

    /* Alltoall: block r goes to remote rank r */
    for (int r = 0; r < rsize; r++)
        blocks[r] = comm_rank * 100 + r;
    COLL(Alltoall, alltoall, blocks, 1, MPI_INT, in, 1, MPI_INT, inter);
    for (int r = 0; r < rsize; r++)
        CHECK(in[r] == remote_world(r) * 100 + lrank, "alltoall from %d got %d", r, in[r]);

    /* Alltoallv: (sender's + receiver's local rank) % 3 + 1 elements each way */
    int stotal = 0;
    total = 0;
    for (int r = 0; r < rsize; r++) {
        scounts[r] = counts[r] = (lrank + r) % 3 + 1;
        sdispls[r] = stotal;
        displs[r] = total + 1; /* one element of gap before each block */
        for (int i = 0; i < scounts[r]; i++)
            blocks[stotal + i] = comm_rank * 100 + r * 10 + i;
        stotal += scounts[r];
        total += counts[r] + 1;
    }
    for (int i = 0; i < total; i++)
        in[i] = -1;
    COLL(Alltoallv, alltoallv, blocks, scounts, sdispls, MPI_INT, in, counts, displs, MPI_INT,
         inter);
    for (int r = 0; r < rsize; r++) {
        for (int i = 0; i < counts[r]; i++)
            CHECK(in[displs[r] + i] == remote_world(r) * 100 + lrank * 10 + i,
                  "alltoallv from %d [%d] = %d", r, i, in[displs[r] + i]);
        CHECK(in[displs[r] - 1] == -1, "alltoallv wrote in the gap before %d", r);
    }

    /* Alltoallw: two ints sent as 2 x MPI_INT, received as one pair type, byte displs */
    MPI_Datatype pair, stypes[64], rtypes[64];
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    for (int r = 0; r < rsize; r++) {
        scounts[r] = 2;
        counts[r] = 1;
        stypes[r] = MPI_INT;
        rtypes[r] = pair;
        sdispls[r] = (int)(2 * r * sizeof(int));
        displs[r] = (int)(2 * (rsize - 1 - r) * sizeof(int)); /* reversed */
        blocks[2 * r] = comm_rank;
        blocks[2 * r + 1] = r;
        in[2 * r] = in[2 * r + 1] = -1;
    }
    COLL(Alltoallw, alltoallw, blocks, scounts, sdispls, stypes, in, counts, displs, rtypes, inter);
    for (int r = 0; r < rsize; r++) {
        int at = 2 * (rsize - 1 - r);
        CHECK(in[at] == remote_world(r) && in[at + 1] == lrank, "alltoallw from %d = {%d, %d}", r,
              in[at], in[at + 1]);
    }
    MPI_Type_free(&pair);

    /*
     * Reduce_scatter_block: every process sends lsize * rsize elements (the same number on
     * both sides) and gets its block of rsize elements of the other group's sum.
     */
    int n = lsize * rsize;
    for (int k = 0; k < n; k++)
        blocks[k] = comm_rank * 1000 + k;
    for (int i = 0; i < rsize; i++)
        in[i] = -1;
    COLL(Reduce_scatter_block, reduce_scatter_block, blocks, in, rsize, MPI_INT, MPI_SUM, inter);
    for (int i = 0; i < rsize; i++) {
        int k = lrank * rsize + i;
        CHECK(in[i] == 1000 * sum_world(1 - my_group) + rsize * k, "reduce_scatter_block [%d] = %d",
              i, in[i]);
    }

    /* Reduce_scatter: the same vector in blocks of uneven sizes (local group's counts) */
    int first = 0;
    for (int r = 0; r < lsize; r++)
        counts[r] = rsize;
    if (lsize > 1) {
        counts[0] = 2 * rsize;
        counts[lsize - 1] = 0;
    }
    for (int r = 0; r < lrank; r++)
        first += counts[r];
    for (int i = 0; i <= 2 * rsize; i++)
        in[i] = -1;
    COLL(Reduce_scatter, reduce_scatter, blocks, in, counts, MPI_INT, MPI_SUM, inter);
    for (int i = 0; i < counts[lrank]; i++)
        CHECK(in[i] == 1000 * sum_world(1 - my_group) + rsize * (first + i),
              "reduce_scatter [%d] = %d", i, in[i]);
    CHECK(in[counts[lrank]] == -1, "reduce_scatter wrote past its block");
}

/* Several non-blocking collectives in flight at once, completed together. */
static void test_coll_overlap(MPI_Comm inter)
{
    MPI_Request reqs[4];
    int a = comm_rank, sum = -1, b[64], c[64], token = -1;
    int root = root_arg(0, 0);

    comm_begin("coll: overlapping non-blocking");
    if (root == MPI_ROOT)
        token = 77;
    MPI_Ibarrier(inter, &reqs[0]);
    MPI_Iallreduce(&a, &sum, 1, MPI_INT, MPI_SUM, inter, &reqs[1]);
    for (int r = 0; r < rsize; r++)
        b[r] = comm_rank;
    MPI_Ialltoall(b, 1, MPI_INT, c, 1, MPI_INT, inter, &reqs[2]);
    MPI_Ibcast(&token, 1, MPI_INT, root, inter, &reqs[3]);
    MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE);
    CHECK(sum == sum_world(1 - my_group), "iallreduce in the mix gave %d", sum);
    for (int r = 0; r < rsize; r++)
        CHECK(c[r] == remote_world(r), "ialltoall in the mix: from %d got %d", r, c[r]);
    if (my_group == 1)
        CHECK(token == 77, "ibcast in the mix gave %d", token);
#ifdef MPI_COMM_TYPE_HW_GUIDED
    /* Persistent ones started with MPI_Startall among non-blocking ones, twice. */
    MPI_Request persist[2], both[4];
    int psum = -1, pc[64];
    MPI_Allreduce_init(&a, &psum, 1, MPI_INT, MPI_SUM, inter, MPI_INFO_NULL, &persist[0]);
    MPI_Alltoall_init(b, 1, MPI_INT, pc, 1, MPI_INT, inter, MPI_INFO_NULL, &persist[1]);
    for (int round = 0; round < 2; round++) {
        a = comm_rank + round;
        sum = psum = -1;
        for (int r = 0; r < rsize; r++)
            pc[r] = -1;
        MPI_Ibarrier(inter, &both[0]);
        MPI_Startall(2, persist);
        MPI_Iallreduce(&a, &sum, 1, MPI_INT, MPI_SUM, inter, &both[1]);
        both[2] = persist[0];
        both[3] = persist[1];
        MPI_Waitall(4, both, MPI_STATUSES_IGNORE);
        CHECK(both[2] == persist[0] && both[3] == persist[1],
              "MPI_Waitall freed a persistent request");
        CHECK(psum == sum_world(1 - my_group) + round * rsize && psum == sum,
              "allreduce_init in the mix, start %d: %d (iallreduce %d)", round, psum, sum);
        for (int r = 0; r < rsize; r++)
            CHECK(pc[r] == remote_world(r), "alltoall_init in the mix: from %d got %d", r, pc[r]);
    }
    MPI_Request_free(&persist[0]);
    MPI_Request_free(&persist[1]);
#endif
}

/* What is not defined on an intercommunicator fails cleanly. */
static void test_coll_errors(MPI_Comm inter)
{
    int a = 1, b = 0, err, class;

    comm_begin("coll: errors");
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    err = MPI_Scan(&a, &b, 1, MPI_INT, MPI_SUM, inter);
    MPI_Error_class(err, &class);
    CHECK(class == MPI_ERR_COMM, "MPI_Scan gave class %d", class);
#ifndef OMPI_MAJOR_VERSION
    /* Open MPI 4.1, which validates this program, crashes in these on an intercommunicator
     * instead of raising the error. */
    MPI_Request req;
    err = MPI_Exscan(&a, &b, 1, MPI_INT, MPI_SUM, inter);
    MPI_Error_class(err, &class);
    CHECK(class == MPI_ERR_COMM, "MPI_Exscan gave class %d", class);
    err = MPI_Iscan(&a, &b, 1, MPI_INT, MPI_SUM, inter, &req);
    MPI_Error_class(err, &class);
    CHECK(class == MPI_ERR_COMM, "MPI_Iscan gave class %d", class);
    err = MPI_Iexscan(&a, &b, 1, MPI_INT, MPI_SUM, inter, &req);
    MPI_Error_class(err, &class);
    CHECK(class == MPI_ERR_COMM, "MPI_Iexscan gave class %d", class);
#ifdef MPI_COMM_TYPE_HW_GUIDED
    /* MPI-4.0's persistent scans are refused by their _init call, as the other forms are,
     * and make no request. */
    req = MPI_REQUEST_NULL;
    err = MPI_Scan_init(&a, &b, 1, MPI_INT, MPI_SUM, inter, MPI_INFO_NULL, &req);
    MPI_Error_class(err, &class);
    CHECK(class == MPI_ERR_COMM && req == MPI_REQUEST_NULL, "MPI_Scan_init gave class %d", class);
    err = MPI_Exscan_init(&a, &b, 1, MPI_INT, MPI_SUM, inter, MPI_INFO_NULL, &req);
    MPI_Error_class(err, &class);
    CHECK(class == MPI_ERR_COMM && req == MPI_REQUEST_NULL, "MPI_Exscan_init gave class %d", class);
#endif
    /* The neighbourhood collectives, in every form, need a topology, which an
     * intercommunicator cannot have (MPI-3.1 chapter 7). */
    int sends[64], recvs[64];
    err = MPI_Neighbor_allgather(&a, 1, MPI_INT, recvs, 1, MPI_INT, inter);
    MPI_Error_class(err, &class);
    CHECK(class == MPI_ERR_TOPOLOGY, "MPI_Neighbor_allgather on it gave class %d", class);
    err = MPI_Ineighbor_alltoall(sends, 1, MPI_INT, recvs, 1, MPI_INT, inter, &req);
    MPI_Error_class(err, &class);
    CHECK(class == MPI_ERR_TOPOLOGY, "MPI_Ineighbor_alltoall on it gave class %d", class);
#ifdef MPI_COMM_TYPE_HW_GUIDED
    req = MPI_REQUEST_NULL;
    err = MPI_Neighbor_alltoall_init(sends, 1, MPI_INT, recvs, 1, MPI_INT, inter, MPI_INFO_NULL,
                                     &req);
    MPI_Error_class(err, &class);
    CHECK(class == MPI_ERR_TOPOLOGY && req == MPI_REQUEST_NULL,
          "MPI_Neighbor_alltoall_init on it gave class %d", class);
#endif
#endif
    err = MPI_Bcast(&a, 1, MPI_INT, rsize, inter);
    MPI_Error_class(err, &class);
    CHECK(class == MPI_ERR_ROOT, "a bcast root out of the remote group gave class %d", class);
    /* -1 is neither MPI_ROOT, MPI_PROC_NULL nor a rank (crmpi took it for an allgather's). */
    int blocks[64];
    err = MPI_Gather(&a, 1, MPI_INT, blocks, 1, MPI_INT, -1, inter);
    MPI_Error_class(err, &class);
    CHECK(class == MPI_ERR_ROOT, "a gather root of -1 gave class %d", class);
    err = MPI_Scatter(blocks, 1, MPI_INT, &a, 1, MPI_INT, -1, inter);
    MPI_Error_class(err, &class);
    CHECK(class == MPI_ERR_ROOT, "a scatter root of -1 gave class %d", class);
    /* Open MPI raises the next ones on MPI_COMM_WORLD. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    err = MPI_Allreduce(MPI_IN_PLACE, &b, 1, MPI_INT, MPI_SUM, inter);
    CHECK(err != MPI_SUCCESS, "MPI_IN_PLACE was taken on an intercommunicator");

    MPI_Comm cart;
    int dims[1] = {lsize}, periods[1] = {0};
    err = MPI_Cart_create(inter, 1, dims, periods, 0, &cart);
    MPI_Error_class(err, &class);
    CHECK(class == MPI_ERR_COMM, "a Cartesian topology on it gave class %d", class);
#ifndef OMPI_MAJOR_VERSION
    /* Defined on intracommunicators only (Open MPI 4.1 tries, and crashes at 3 ranks). */
    MPI_Group group;
    MPI_Comm created;
    MPI_Comm_group(inter, &group);
    err = MPI_Comm_create_group(inter, group, 3, &created);
    MPI_Error_class(err, &class);
    CHECK(class == MPI_ERR_COMM, "MPI_Comm_create_group on it gave class %d", class);
    MPI_Group_free(&group);
#endif
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_ARE_FATAL);
}

/* Everything done on one intercommunicator. */
static void test_traffic(MPI_Comm inter)
{
    test_p2p_each(inter);
    test_p2p_any_source(inter);
    test_p2p_probes(inter);
    test_p2p_persistent(inter);
    test_p2p_modes(inter);
    test_coll_rooted(inter, COLL_BLOCKING);
    test_coll_rooted(inter, COLL_NONBLOCKING);
    test_coll_all(inter, COLL_BLOCKING);
    test_coll_all(inter, COLL_NONBLOCKING);
#ifdef MPI_COMM_TYPE_HW_GUIDED
    test_coll_rooted(inter, COLL_PERSISTENT);
    test_coll_all(inter, COLL_PERSISTENT);
#endif
    test_coll_overlap(inter);
}

/*
 * Management
 */

static int copies, deletes;

static int attr_copy(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm, (void)keyval, (void)extra;
    copies++;
    *(void **)out = (char *)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static int attr_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)value, (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

/* Names, attributes (copied by dup, deleted by free), compare. */
static void test_objects(MPI_Comm inter)
{
    static char base[4];
    char name[MPI_MAX_OBJECT_NAME];
    int len, keyval, flag, result;
    void *value;
    MPI_Comm dup;

    comm_begin("names, attributes, compare");
    MPI_Comm_set_name(inter, "the intercommunicator");
    MPI_Comm_get_name(inter, name, &len);
    CHECK(strcmp(name, "the intercommunicator") == 0, "name \"%s\"", name);
    MPI_Comm_create_keyval(attr_copy, attr_delete, &keyval, NULL);
    MPI_Comm_set_attr(inter, keyval, base);
    copies = deletes = 0;
    MPI_Comm_dup(inter, &dup);
    check_shape(dup, "dup");
    CHECK(copies == 1, "the copy callback ran %d times", copies);
    MPI_Comm_get_attr(dup, keyval, &value, &flag);
    CHECK(flag && value == base + 1, "the duplicate's attribute is %p (flag %d)", value, flag);
    MPI_Comm_compare(inter, dup, &result);
    CHECK(result == MPI_CONGRUENT, "compare with its duplicate gave %d", result);
    MPI_Comm_compare(inter, inter, &result);
    CHECK(result == MPI_IDENT, "compare with itself gave %d", result);
    MPI_Comm_compare(inter, MPI_COMM_WORLD, &result);
    CHECK(result == MPI_UNEQUAL, "compare with the world gave %d", result);
    MPI_Comm_free(&dup);
    CHECK(deletes == 1, "the delete callback ran %d times", deletes);
    MPI_Comm_delete_attr(inter, keyval);
    MPI_Comm_free_keyval(&keyval);

    /* Both groups in reverse order: the same members, another order. */
    MPI_Comm local_rev, rev;
    MPI_Comm_split(MPI_COMM_WORLD, my_group, -comm_rank, &local_rev);
    MPI_Intercomm_create(local_rev, 0, MPI_COMM_WORLD, world_of(1 - my_group, rsize - 1), 21, &rev);
    MPI_Comm_compare(inter, rev, &result);
    CHECK(result == (lsize > 1 || rsize > 1 ? MPI_SIMILAR : MPI_CONGRUENT),
          "compare with the reversed one gave %d", result);
    MPI_Comm_free(&rev);
    MPI_Comm_free(&local_rev);
}

/* dup_with_info, idup (and idup_with_info): new intercommunicators whose traffic does not
 * mix with the original's. */
static void test_dups(MPI_Comm inter)
{
    MPI_Comm dup, idup;
    MPI_Request req;
    MPI_Info info;
    int one = 1, two = 2, got = -1, got_dup = -1;

    comm_begin("dup_with_info, idup");
    MPI_Info_create(&info);
    MPI_Info_set(info, "crmpi_test_hint", "yes");
    MPI_Comm_dup_with_info(inter, info, &dup);
    MPI_Info_free(&info);
    check_shape(dup, "dup_with_info");
    MPI_Comm_idup(inter, &idup, &req);
    /* Traffic on the original while the idup runs. */
    test_p2p_each(inter);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check_shape(idup, "idup");
    /* Same source and tag on both: each receive gets its own communicator's message. */
    if (lrank == 0) {
        MPI_Send(&two, 1, MPI_INT, 0, 3, idup);
        MPI_Send(&one, 1, MPI_INT, 0, 3, dup);
        MPI_Recv(&got, 1, MPI_INT, 0, 3, dup, MPI_STATUS_IGNORE);
        MPI_Recv(&got_dup, 1, MPI_INT, 0, 3, idup, MPI_STATUS_IGNORE);
        CHECK(got == 1 && got_dup == 2, "messages mixed: %d on dup, %d on idup", got, got_dup);
    }
    test_coll_overlap(idup);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&idup);
#ifdef MPI_COMM_TYPE_HW_GUIDED
    /* MPI-4.0's idup_with_info: the same, with hints. */
    MPI_Comm idup_info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "crmpi_test_hint", "yes");
    MPI_Comm_idup_with_info(inter, info, &idup_info, &req);
    MPI_Info_free(&info);
    test_p2p_each(inter);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check_shape(idup_info, "idup_with_info");
    test_p2p_each(idup_info);
    MPI_Comm_free(&idup_info);
#endif
}

/* The members of `n` ranks of a group that split keeps for `color` (rank 1 leaves), in
 * order of key -rank: descending. */
static int split_members(int n, int color, int *out)
{
    int count = 0;
    for (int r = n - 1; r >= 0; r--)
        if (r != 1 && r % 2 == color)
            out[count++] = r;
    return count;
}

static void test_split_result(MPI_Comm split, int nl, int nr, const int *want_local,
                              const int *want_remote);

static void test_split(MPI_Comm inter)
{
    int color = lrank == 1 ? MPI_UNDEFINED : lrank % 2;
    int want_local[64], want_remote[64], nl, nr;
    MPI_Comm split;

    comm_begin("split");
    MPI_Comm_split(inter, color, -lrank, &split);
    nl = color == MPI_UNDEFINED ? 0 : split_members(lsize, color, want_local);
    nr = color == MPI_UNDEFINED ? 0 : split_members(rsize, color, want_remote);
    if (nr == 0)
        CHECK(split == MPI_COMM_NULL, "color %d got a communicator", color);
    else
        CHECK(split != MPI_COMM_NULL, "color %d: no communicator", color);
    if (split != MPI_COMM_NULL && nr > 0)
        test_split_result(split, nl, nr, want_local, want_remote);
    else if (split != MPI_COMM_NULL)
        MPI_Comm_free(&split);

#ifndef OMPI_MAJOR_VERSION
    /* Split_type: every process is on this node, so one intercommunicator, in key order.
     * (Open MPI 4.1 crashes in it on an intercommunicator.) */
    MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, lrank, MPI_INFO_NULL, &split);
    CHECK(split != MPI_COMM_NULL, "split_type: no communicator");
    if (split != MPI_COMM_NULL) {
        check_shape(split, "split_type");
        MPI_Comm_free(&split);
    }
#endif
}

/* A split's intercommunicator: its groups, and an allreduce over it. */
static void test_split_result(MPI_Comm split, int nl, int nr, const int *want_local,
                              const int *want_remote)
{
    int world[64], size, rank, rsz;
    MPI_Group group;

    int flag;
    MPI_Comm_test_inter(split, &flag);
    MPI_Comm_size(split, &size);
    MPI_Comm_rank(split, &rank);
    MPI_Comm_remote_size(split, &rsz);
    CHECK(flag && size == nl && rsz == nr, "inter %d size %d remote %d, expected %d %d", flag, size,
          rsz, nl, nr);
    CHECK(rank >= 0 && rank < nl && want_local[rank] == lrank, "rank %d", rank);
    if (rsz == nr) {
        MPI_Comm_remote_group(split, &group);
        group_world_ranks(group, nr, world);
        for (int r = 0; r < nr; r++)
            CHECK(world[r] == remote_world(want_remote[r]), "remote %d is world %d", r, world[r]);
        MPI_Group_free(&group);
    }
    /* Traffic on it: the remote group's ranks sum up. */
    int mine = comm_rank, sum = -1;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, split);
    int want = 0;
    for (int r = 0; r < nr; r++)
        want += remote_world(want_remote[r]);
    CHECK(sum == want, "allreduce on the split gave %d, expected %d", sum, want);
    MPI_Comm_free(&split);
}

/* MPI_Comm_create with the even local ranks of each group; then with one group empty. */
static void test_create(MPI_Comm inter)
{
    MPI_Group local, evens;
    MPI_Comm created;
    int ranges[1][3] = {{0, lsize - 1, 2}};
    int size, rsz, rank;

    comm_begin("create");
    MPI_Comm_group(inter, &local);
    MPI_Group_range_incl(local, 1, ranges, &evens);
    MPI_Comm_create(inter, evens, &created);
    if (lrank % 2) {
        CHECK(created == MPI_COMM_NULL, "an odd rank got a communicator");
    } else {
        CHECK(created != MPI_COMM_NULL, "an even rank got no communicator");
        if (created != MPI_COMM_NULL) {
            MPI_Comm_size(created, &size);
            MPI_Comm_rank(created, &rank);
            MPI_Comm_remote_size(created, &rsz);
            CHECK(size == (lsize + 1) / 2 && rank == lrank / 2 && rsz == (rsize + 1) / 2,
                  "size %d rank %d remote %d", size, rank, rsz);
            int mine = comm_rank, sum = -1, want = 0;
            MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, created);
            for (int r = 0; r < rsize; r += 2)
                want += remote_world(r);
            CHECK(sum == want, "allreduce on the created one gave %d, expected %d", sum, want);
            MPI_Comm_free(&created);
        }
    }
    /* Group A offers nobody: nobody gets a communicator. */
    MPI_Comm_create(inter, my_group == 0 ? MPI_GROUP_EMPTY : local, &created);
    CHECK(created == MPI_COMM_NULL, "a communicator with an empty group");
    MPI_Group_free(&evens);
    MPI_Group_free(&local);
}

/* Merge with A low, with B low, and with a tie (either order, but one group after the
 * other, each in its order). */
static void test_merge(MPI_Comm inter)
{
    MPI_Comm merged;
    int rank, size, order[64];

    comm_begin("merge");
    for (int way = 0; way < 3; way++) {
        int high = way == 0 ? my_group : way == 1 ? !my_group : 0;
        MPI_Intercomm_merge(inter, high, &merged);
        MPI_Comm_size(merged, &size);
        MPI_Comm_rank(merged, &rank);
        CHECK(size == comm_size, "merged size %d", size);
        if (size != comm_size) {
            MPI_Comm_free(&merged);
            continue;
        }
        MPI_Allgather(&comm_rank, 1, MPI_INT, order, 1, MPI_INT, merged);
        int a_first = order[0] == 0;
        if (way < 2)
            CHECK(a_first == (way == 0), "way %d: group %s came first", way, a_first ? "A" : "B");
        for (int i = 0; i < comm_size; i++) {
            int want = a_first ? i : (i + group_size[0]) % comm_size;
            CHECK(order[i] == want, "way %d: merged rank %d is world rank %d, expected %d", way, i,
                  order[i], want);
        }
        CHECK(order[rank] == comm_rank, "way %d: own rank %d", way, rank);
        MPI_Comm_free(&merged);
    }
}

/* MPI_Comm_free with a non-blocking collective pending: it completes, then the
 * communicator goes (MPI-3.1 section 6.4.3). */
__attribute__((unused)) static void test_free_pending(MPI_Comm inter)
{
    MPI_Comm dup;
    MPI_Request req;
    int value = comm_rank, sum = -1;

    comm_begin("free with a collective pending");
    MPI_Comm_dup(inter, &dup);
    MPI_Iallreduce(&value, &sum, 1, MPI_INT, MPI_SUM, dup, &req);
    MPI_Comm_free(&dup);
    CHECK(dup == MPI_COMM_NULL, "the handle was not reset");
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(sum == sum_world(1 - my_group), "the pending iallreduce gave %d", sum);
}

int main(int argc, char **argv)
{
    MPI_Comm local, inter;
    int leaders[2];

    comm_init(&argc, &argv, "intercomm");
    if (comm_size < 2) {
        CHECK(0, "needs 2 ranks or more");
        return comm_finish();
    }
    group_size[0] = comm_size / 2;
    group_size[1] = comm_size - group_size[0];
    my_group = comm_rank >= group_size[0];
    lrank = my_group ? comm_rank - group_size[0] : comm_rank;
    lsize = group_size[my_group];
    rsize = group_size[1 - my_group];
    MPI_Type_contiguous(4, MPI_LONG_LONG, &mat_type);
    MPI_Type_commit(&mat_type);
    MPI_Op_create(mat_mul_fn, 0, &mat_mul);

    /* Leaders at local rank 0. */
    comm_begin("intercomm_create, leaders 0");
    leaders[0] = leaders[1] = 0;
    inter = make_inter(&local, leaders, 17);
    check_shape(inter, "intercomm_create");
    int flag = 1;
    MPI_Comm_test_inter(local, &flag);
    CHECK(!flag, "the local communicator is an intercommunicator");
    test_objects(inter);
    test_traffic(inter);
    test_coll_errors(inter);
    test_dups(inter);
    test_split(inter);
    test_create(inter);
    test_merge(inter);
#ifndef OMPI_MAJOR_VERSION
    /* (Open MPI 4.1 crashes when the collective progresses after the free.) */
    test_free_pending(inter);
#endif
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);

    /* Leaders at the last local rank, over the world; the same traffic. */
    comm_begin("intercomm_create, last leaders");
    leaders[0] = group_size[0] - 1;
    leaders[1] = group_size[1] - 1;
    inter = make_inter(&local, leaders, 18);
    check_shape(inter, "intercomm_create (last leaders)");
    test_traffic(inter);
    test_merge(inter);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);

    MPI_Op_free(&mat_mul);
    MPI_Type_free(&mat_type);
    return comm_finish();
}
