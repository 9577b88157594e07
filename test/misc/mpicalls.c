/*
 * mpicalls.c: MPI calls that real programs and test suites use, between ranks:
 * MPI_Type_create_darray (each rank's piece of a block-cyclic 2-d array gathered by rank 0
 * with every rank's darray type, and every element found exactly once), external32 (a
 * struct packed on one rank, sent as bytes, unpacked on another), generalized requests
 * completed while a message is waited for, handle conversion, the Fortran datatypes in
 * messages and reductions, MPI-1's Type_struct with MPI_LB/MPI_UB, datatype attributes,
 * and, where mpi.h has them (MPI-4.0: MPI_COMM_TYPE_HW_GUIDED is defined), MPI_Isendrecv,
 * MPI_Isendrecv_replace, MPI_Comm_idup_with_info, MPI_COMM_TYPE_HW_GUIDED and large-count
 * calls (MPI_Send_c, Recv_c, Isend_c, Irecv_c, Sendrecv_c, Send_init_c, Recv_init_c,
 * Get_count_c, Allreduce_c, Bcast_c, Type_size_c).
 *
 * MPI-1's names are checked where mpi.h declares them (Open MPI 4.1 hides them unless built
 * with them).
 *
 * Usage: mpicalls [--crmpi]. --crmpi adds checks of crmpi's own choices (external32's
 * MPI_LONG of 4 bytes, as MPI-3.1 table 13.2 says; Open MPI 4.1 packs 8). Without it the
 * program also runs on Open MPI, which validates the rest of its checks.
 * test/integration/test_misc.py runs it; the harness is test/comm/comm_common.h.
 */
#include <stdint.h>

#include "../comm/comm_common.h"

#define TAG_DARRAY   21
#define TAG_EXTERNAL 22
#define TAG_FORTRAN  23
#define TAG_MPI1     24
#define TAG_RING     25

#define ROWS 9
#define COLS 10

static int crmpi_checks;

#ifdef MPI_MODE_RDONLY
/* A file read through a darray view whose pieces include partial cyclic blocks: 5 x 5
 * doubles, cyclic(3) over the ranks in the first dimension, so a rank past the first has
 * fewer than 3 rows of a block (ROMIO then builds a vector of no block, which its
 * flattening once read as one block). What each rank reads must be what MPI_Pack takes
 * with the same type from the array in memory. */
static void check_darray_file(void)
{
    int gsizes[2] = {5, 5}, distribs[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC};
    int dargs[2] = {3, 3}, psizes[2] = {comm_size, 1};
    double data[25], packed[25], read[25];
    char name[64];
    MPI_Datatype darray;
    MPI_File fh;
    MPI_Status status;
    int size, pos = 0, rc, pid = (int)getpid();

    comm_begin("darray file view");
    for (int i = 0; i < 25; i++)
        data[i] = i;
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(name, sizeof(name), "mpicalls-darray.%d", pid);
    MPI_Type_create_darray(comm_size, comm_rank, 2, gsizes, distribs, dargs, psizes,
                           MPI_ORDER_FORTRAN, MPI_DOUBLE, &darray);
    MPI_Type_commit(&darray);
    MPI_Type_size(darray, &size);
    MPI_Pack(data, 1, darray, packed, sizeof(packed), &pos, MPI_COMM_WORLD);
    if (comm_rank == 0) {
        MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
        MPI_File_write(fh, data, 25, MPI_DOUBLE, &status);
        MPI_File_close(&fh);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    rc = MPI_File_set_view(fh, 0, MPI_DOUBLE, darray, "native", MPI_INFO_NULL);
    CHECK(rc == MPI_SUCCESS, "MPI_File_set_view refused the darray (error %d)", rc);
    if (rc == MPI_SUCCESS) {
        MPI_File_read_all(fh, read, size / (int)sizeof(double), MPI_DOUBLE, &status);
        for (int i = 0; i < size / (int)sizeof(double); i++)
            CHECK(read[i] == packed[i], "element %d read %g, packed %g", i, read[i], packed[i]);
    }
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (comm_rank == 0)
        MPI_File_delete(name, MPI_INFO_NULL);
    MPI_Type_free(&darray);
}
#endif

/* Each rank's darray piece of a ROWS x COLS array on a grid of comm_size x 1 processes:
 * rows cyclic(2), columns whole (a grid of 1 column), and on a 2-d grid when the size
 * allows: rows block, columns cyclic. Rank 0 receives every piece with that rank's type. */
static void check_darray(void)
{
    int gsizes[2] = {ROWS, COLS};
    int distribs[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK};
    int dargs[2] = {2, MPI_DISTRIBUTE_DFLT_DARG};
    int psizes[2] = {comm_size, 1};
    MPI_Datatype mine;
    int global[ROWS * COLS], seen[ROWS * COLS];
    int size;

    comm_begin("darray");
    if (comm_size % 2 == 0) {
        /* A 2-d grid: rows in blocks, columns cyclic. */
        psizes[0] = comm_size / 2;
        psizes[1] = 2;
        distribs[0] = MPI_DISTRIBUTE_BLOCK;
        distribs[1] = MPI_DISTRIBUTE_CYCLIC;
        dargs[0] = MPI_DISTRIBUTE_DFLT_DARG;
        dargs[1] = MPI_DISTRIBUTE_DFLT_DARG;
    }
    for (int i = 0; i < ROWS * COLS; i++) {
        global[i] = i;
    }
    MPI_Type_create_darray(comm_size, comm_rank, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C,
                           MPI_INT, &mine);
    MPI_Type_commit(&mine);
    MPI_Type_size(mine, &size);
    if (comm_rank != 0) {
        MPI_Send(global, 1, mine, 0, TAG_DARRAY, MPI_COMM_WORLD);
    } else {
        memset(seen, 0, sizeof(seen));
        for (int r = 0; r < comm_size; r++) {
            MPI_Datatype theirs;
            int received[ROWS * COLS];

            MPI_Type_create_darray(comm_size, r, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C,
                                   MPI_INT, &theirs);
            MPI_Type_commit(&theirs);
            for (int i = 0; i < ROWS * COLS; i++) {
                received[i] = -1;
            }
            if (r == 0) {
                MPI_Sendrecv(global, 1, mine, 0, TAG_DARRAY, received, 1, theirs, 0, TAG_DARRAY,
                             MPI_COMM_SELF, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(received, 1, theirs, r, TAG_DARRAY, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            /* What arrived lands where the sender took it from. */
            for (int i = 0; i < ROWS * COLS; i++) {
                if (received[i] != -1) {
                    CHECK(received[i] == i, "rank %d's element %d arrived as %d", r, i,
                          received[i]);
                    seen[i]++;
                }
            }
            MPI_Type_free(&theirs);
        }
        for (int i = 0; i < ROWS * COLS; i++) {
            CHECK(seen[i] == 1, "element %d is held by %d ranks", i, seen[i]);
        }
    }
    MPI_Type_free(&mine);
}

struct sample {
    char tag;
    double value;
    int count[3];
    short small;
};

/* Rank 0 packs in external32, rank 1 unpacks: the same values arrive. */
static void check_external32(int crmpi)
{
    struct sample in = {'q', -2.5, {1, -2, 1 << 20}, -300}, out;
    int blocklengths[4] = {1, 1, 3, 1};
    MPI_Aint displs[4] = {offsetof(struct sample, tag), offsetof(struct sample, value),
                          offsetof(struct sample, count), offsetof(struct sample, small)};
    MPI_Datatype types[4] = {MPI_CHAR, MPI_DOUBLE, MPI_INT, MPI_SHORT};
    MPI_Datatype type;
    unsigned char packed[64];
    MPI_Aint size, position = 0;

    comm_begin("external32");
    MPI_Type_create_struct(4, blocklengths, displs, types, &type);
    MPI_Type_commit(&type);
    MPI_Pack_external_size("external32", 1, type, &size);
    CHECK(size == 1 + 8 + 12 + 2, "external32 size %ld, expected 23", (long)size);
    if (comm_rank == 0) {
        MPI_Pack_external("external32", &in, 1, type, packed, sizeof(packed), &position);
        CHECK(position == size, "packed %ld bytes", (long)position);
        /* Big-endian: the int 1 << 20 is 00 10 00 00. */
        CHECK(packed[1 + 8 + 8] == 0 && packed[1 + 8 + 8 + 1] == 0x10, "int not big-endian");
        if (comm_size > 1) {
            MPI_Send(packed, (int)position, MPI_BYTE, 1, TAG_EXTERNAL, MPI_COMM_WORLD);
        }
    } else if (comm_rank == 1) {
        MPI_Recv(packed, (int)size, MPI_BYTE, 0, TAG_EXTERNAL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        memset(&out, 0, sizeof(out));
        MPI_Unpack_external("external32", packed, size, &position, &out, 1, type);
        CHECK(out.tag == 'q' && out.value == -2.5 && out.count[0] == 1 && out.count[1] == -2 &&
                  out.count[2] == 1 << 20 && out.small == -300,
              "unpacked values differ");
    }
    if (crmpi) {
        MPI_Aint long_size;

        MPI_Pack_external_size("external32", 1, MPI_LONG, &long_size);
        CHECK(long_size == 4, "external32 MPI_LONG is %ld bytes; MPI-3.1 table 13.2 says 4",
              (long)long_size);
        crmpi_checks++;
    }
    MPI_Type_free(&type);
}

/* A generalized request: query_fn reports 4 ints, free_fn counts. */
static int grequest_frees;

static int grequest_query(void *extra, MPI_Status *status)
{
    (void)extra;
    MPI_Status_set_elements(status, MPI_INT, 4);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int grequest_free(void *extra)
{
    (void)extra;
    grequest_frees++;
    return MPI_SUCCESS;
}

static int grequest_cancel(void *extra, int complete)
{
    (void)extra, (void)complete;
    return MPI_SUCCESS;
}

/* A ring message and a generalized request waited for together; the request is completed
 * between the two. */
static void check_grequests(void)
{
    MPI_Request reqs[2];
    MPI_Status statuses[2];
    int token = comm_rank, got = -1, count;

    comm_begin("generalized requests");
    MPI_Grequest_start(grequest_query, grequest_free, grequest_cancel, NULL, &reqs[0]);
    MPI_Irecv(&got, 1, MPI_INT, (comm_rank + comm_size - 1) % comm_size, TAG_RING, MPI_COMM_WORLD,
              &reqs[1]);
    MPI_Send(&token, 1, MPI_INT, (comm_rank + 1) % comm_size, TAG_RING, MPI_COMM_WORLD);
    MPI_Grequest_complete(reqs[0]);
    MPI_Waitall(2, reqs, statuses);
    CHECK(got == (comm_rank + comm_size - 1) % comm_size, "ring got %d", got);
    MPI_Get_count(&statuses[0], MPI_INT, &count);
    CHECK(count == 4, "the generalized request's status counts %d ints", count);
    CHECK(grequest_frees == 1, "free_fn ran %d times", grequest_frees);
    CHECK(reqs[0] == MPI_REQUEST_NULL, "the generalized request was not freed");
}

static void check_handles(void)
{
    MPI_Comm dup;

    comm_begin("handle conversion");
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(dup)) == dup, "a communicator did not convert back");
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD,
          "MPI_COMM_WORLD did not convert back");
    CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE_PRECISION)) == MPI_DOUBLE_PRECISION,
          "MPI_DOUBLE_PRECISION did not convert back");
    CHECK(MPI_Op_f2c(MPI_Op_c2f(MPI_MAXLOC)) == MPI_MAXLOC, "MPI_MAXLOC did not convert back");
    CHECK(MPI_Comm_c2f(dup) != MPI_Comm_c2f(MPI_COMM_WORLD), "two communicators, one number");
    MPI_Comm_free(&dup);
}

/* Fortran types in messages and reductions. */
static void check_fortran_types(void)
{
    double dp[3] = {comm_rank + 0.5, 2.0, -1.0}, dp_in[3] = {0};
    int32_t integer = comm_rank + 1, total = 0;
    float pair[2] = {(float)(10 - comm_rank), (float)comm_rank}, best[2];
    int dp_size;

    comm_begin("Fortran datatypes");
    MPI_Type_size(MPI_DOUBLE_PRECISION, &dp_size);
    CHECK(dp_size == 8, "MPI_DOUBLE_PRECISION has %d bytes", dp_size);
    MPI_Sendrecv(dp, 3, MPI_DOUBLE_PRECISION, (comm_rank + 1) % comm_size, TAG_FORTRAN, dp_in, 3,
                 MPI_DOUBLE_PRECISION, (comm_rank + comm_size - 1) % comm_size, TAG_FORTRAN,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(dp_in[0] == (comm_rank + comm_size - 1) % comm_size + 0.5 && dp_in[2] == -1.0,
          "MPI_DOUBLE_PRECISION message wrong");
    MPI_Allreduce(&integer, &total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD);
    CHECK(total == comm_size * (comm_size + 1) / 2, "MPI_INTEGER sum %d", (int)total);
    /* MPI_2REAL: the lowest value is the last rank's. */
    MPI_Allreduce(pair, best, 1, MPI_2REAL, MPI_MINLOC, MPI_COMM_WORLD);
    CHECK(best[0] == (float)(10 - (comm_size - 1)) && best[1] == (float)(comm_size - 1),
          "MPI_2REAL MINLOC gave (%g, %g)", best[0], best[1]);
}

/* MPI-1's names: in crmpi; in Open MPI only when built with them (4.1 hides them by default). */
#if !defined(OPEN_MPI) || OMPI_ENABLE_MPI1_COMPAT
#define HAVE_MPI1_NAMES 1
/* MPI-1's Type_struct with MPI_UB strides ints 3 apart; MPI_Type_extent says 12. */
static void check_mpi1(void)
{
    int blocklengths[2] = {1, 1};
    MPI_Aint displs[2] = {0, 3 * sizeof(int)};
    MPI_Datatype types[2] = {MPI_INT, MPI_UB};
    MPI_Datatype strided;
    MPI_Aint extent;
    int data[12], got[12];

    comm_begin("MPI-1 names");
    MPI_Type_struct(2, blocklengths, displs, types, &strided);
    MPI_Type_commit(&strided);
    MPI_Type_extent(strided, &extent);
    CHECK(extent == 3 * sizeof(int), "extent %ld", (long)extent);
    for (int i = 0; i < 12; i++) {
        data[i] = comm_rank * 100 + i;
        got[i] = -1;
    }
    /* 4 elements: ints 0, 3, 6, 9 go, and land at 0, 3, 6, 9. */
    MPI_Sendrecv(data, 4, strided, (comm_rank + 1) % comm_size, TAG_MPI1, got, 4, strided,
                 (comm_rank + comm_size - 1) % comm_size, TAG_MPI1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    int from = (comm_rank + comm_size - 1) % comm_size;
    for (int i = 0; i < 12; i++) {
        int want = i % 3 == 0 ? from * 100 + i : -1;
        CHECK(got[i] == want, "element %d is %d, expected %d", i, got[i], want);
    }
    MPI_Type_free(&strided);
}
#endif

static int attr_copies;

static int attr_copy(MPI_Datatype type, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)type, (void)keyval, (void)extra;
    attr_copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static void check_type_attributes(void)
{
    static int payload = 42;
    int keyval, flag;
    MPI_Datatype type, dup;
    int *value;

    comm_begin("datatype attributes");
    MPI_Type_create_keyval(attr_copy, MPI_TYPE_NULL_DELETE_FN, &keyval, NULL);
    MPI_Type_contiguous(3, MPI_INT, &type);
    MPI_Type_set_attr(type, keyval, &payload);
    MPI_Type_dup(type, &dup);
    MPI_Type_get_attr(dup, keyval, &value, &flag);
    CHECK(flag && value == &payload && attr_copies == 1, "the attribute was not copied");
    MPI_Type_free(&dup);
    MPI_Type_free(&type);
    MPI_Type_free_keyval(&keyval);
}

#ifdef MPI_COMM_TYPE_HW_UNGUIDED
/* MPI-4.0's unguided split: a strict subset of MPI_COMM_WORLD named by the info's
 * mpi_hw_resource_type, the same on every rank of it, and the guided split by that name
 * gives the same group; one rank alone can be split no further. */
static void check_hw_unguided(void)
{
    char name[MPI_MAX_INFO_VAL], theirs[MPI_MAX_INFO_VAL];
    MPI_Comm hw, guided;
    MPI_Info info;
    int flag = 0, size = 0, result;

    comm_begin("hw_unguided");
    MPI_Info_create(&info);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, info, &hw);
    if (comm_size == 1)
        CHECK(hw == MPI_COMM_NULL, "one rank was split into a communicator");
    if (hw != MPI_COMM_NULL) {
        MPI_Comm_size(hw, &size);
        CHECK(size < comm_size, "the unguided split kept all %d ranks", size);
        MPI_Info_get(info, "mpi_hw_resource_type", sizeof(name) - 1, name, &flag);
        CHECK(flag && name[0], "no mpi_hw_resource_type in the info");
        if (flag) {
            strcpy(theirs, name);
            MPI_Bcast(theirs, sizeof(theirs), MPI_CHAR, 0, hw);
            CHECK(strcmp(theirs, name) == 0, "resource %s here, %s on rank 0", name, theirs);
            MPI_Info guided_info;
            MPI_Info_create(&guided_info);
            MPI_Info_set(guided_info, "mpi_hw_resource_type", name);
            MPI_Comm_split_type(hw, MPI_COMM_TYPE_HW_GUIDED, 0, guided_info, &guided);
            CHECK(guided != MPI_COMM_NULL, "the guided split by %s gave nothing", name);
            if (guided != MPI_COMM_NULL) {
                MPI_Comm_compare(hw, guided, &result);
                CHECK(result == MPI_CONGRUENT, "the guided split by %s differs (%d)", name, result);
                MPI_Comm_free(&guided);
            }
            MPI_Info_free(&guided_info);
        }
        MPI_Comm_free(&hw);
    }
    MPI_Info_free(&info);
}
#endif

#ifdef MPI_COMM_TYPE_HW_GUIDED
/* MPI-4.0: Isendrecv(_replace) around the ring, idup_with_info, HW_GUIDED. */
static void check_mpi4(void)
{
    int right = (comm_rank + 1) % comm_size, left = (comm_rank + comm_size - 1) % comm_size;
    int out = comm_rank, in = -1, buf[2] = {comm_rank, -comm_rank};
    MPI_Request req;
    MPI_Status status;
    MPI_Info info;
    MPI_Comm dup, hw;
    char value[MPI_MAX_INFO_VAL];
    int flag, size;

    comm_begin("MPI-4.0 calls");
    MPI_Isendrecv(&out, 1, MPI_INT, right, TAG_RING, &in, 1, MPI_INT, left, TAG_RING,
                  MPI_COMM_WORLD, &req);
    MPI_Wait(&req, &status);
    CHECK(in == left && status.MPI_SOURCE == left && status.MPI_TAG == TAG_RING,
          "Isendrecv got %d from %d", in, status.MPI_SOURCE);
    MPI_Isendrecv_replace(buf, 2, MPI_INT, right, TAG_RING, left, TAG_RING, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(buf[0] == left && buf[1] == -left, "Isendrecv_replace got %d %d", buf[0], buf[1]);

    MPI_Info_create(&info);
    MPI_Info_set(info, "crmpi_test_hint", "yes");
    MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &dup, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Comm_size(dup, &size);
    CHECK(size == comm_size, "the idup has %d ranks", size);
    MPI_Info_free(&info);
    MPI_Comm_get_info(dup, &info);
    MPI_Info_get(info, "crmpi_test_hint", MPI_MAX_INFO_VAL - 1, value, &flag);
    CHECK(flag && strcmp(value, "yes") == 0, "the idup lost its info");
    MPI_Info_free(&info);
    MPI_Comm_free(&dup);

    /* Every rank of this test runs on one node: shared memory groups them all. */
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory");
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &hw);
    CHECK(hw != MPI_COMM_NULL, "no communicator for mpi_shared_memory");
    if (hw != MPI_COMM_NULL) {
        MPI_Comm_size(hw, &size);
        CHECK(size == comm_size, "the shared-memory communicator has %d ranks", size);
        MPI_Comm_free(&hw);
    }
    /* The large-count forms: counts as MPI_Count. */
    MPI_Count big_count = 3, got_count = -1, type_size = 0;
    double ring_out[3] = {comm_rank, 1.5, -2.0}, ring_in[3] = {0};
    long long sum = 0, one = 1;
    MPI_Request reqs[2];
    MPI_Irecv_c(ring_in, big_count, MPI_DOUBLE, left, TAG_RING, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend_c(ring_out, big_count, MPI_DOUBLE, right, TAG_RING, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    CHECK(ring_in[0] == left && ring_in[2] == -2.0, "Isend_c/Irecv_c ring got %g", ring_in[0]);
    MPI_Send_c(ring_out, big_count, MPI_DOUBLE, right, TAG_RING, MPI_COMM_WORLD);
    MPI_Recv_c(ring_in, big_count, MPI_DOUBLE, left, TAG_RING, MPI_COMM_WORLD, &status);
    MPI_Get_count_c(&status, MPI_DOUBLE, &got_count);
    CHECK(got_count == 3, "MPI_Get_count_c says %lld", (long long)got_count);
    MPI_Allreduce_c(&one, &sum, (MPI_Count)1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == comm_size, "MPI_Allreduce_c summed %lld", sum);
    ring_out[1] = comm_rank == 0 ? 7.5 : 0;
    MPI_Bcast_c(&ring_out[1], (MPI_Count)1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    CHECK(ring_out[1] == 7.5, "MPI_Bcast_c gave %g", ring_out[1]);
    int pair_out[2] = {comm_rank, 1}, pair_in[2] = {-1, -1};
    MPI_Sendrecv_c(pair_out, (MPI_Count)2, MPI_INT, right, TAG_RING, pair_in, (MPI_Count)2, MPI_INT,
                   left, TAG_RING, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(pair_in[0] == left && pair_in[1] == 1, "MPI_Sendrecv_c got %d", pair_in[0]);
    MPI_Recv_init_c(pair_in, (MPI_Count)2, MPI_INT, left, TAG_RING, MPI_COMM_WORLD, &reqs[0]);
    MPI_Send_init_c(pair_out, (MPI_Count)2, MPI_INT, right, TAG_RING, MPI_COMM_WORLD, &reqs[1]);
    for (int round = 0; round < 2; round++) {
        pair_out[1] = round + 10;
        MPI_Startall(2, reqs);
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
        CHECK(pair_in[1] == round + 10, "MPI_Send_init_c round %d got %d", round, pair_in[1]);
    }
    MPI_Request_free(&reqs[0]);
    MPI_Request_free(&reqs[1]);
    MPI_Type_size_c(MPI_DOUBLE_COMPLEX, &type_size);
    CHECK(type_size == 16, "MPI_Type_size_c says %lld", (long long)type_size);

    MPI_Info_set(info, "mpi_hw_resource_type", "a_resource_nobody_has");
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &hw);
    CHECK(hw == MPI_COMM_NULL, "an unknown resource type gave a communicator");
    MPI_Info_free(&info);
#ifdef MPI_COMM_TYPE_HW_UNGUIDED
    check_hw_unguided();
#endif
}
#endif

int main(int argc, char **argv)
{
    int crmpi = argc > 1 && strcmp(argv[1], "--crmpi") == 0;

    comm_init(&argc, &argv, "mpicalls");
    check_darray();
#ifdef MPI_MODE_RDONLY
    check_darray_file();
#endif
    comm_barrier();
    check_external32(crmpi);
    comm_barrier();
    check_grequests();
    check_handles();
    check_fortran_types();
#ifdef HAVE_MPI1_NAMES
    check_mpi1();
#endif
    check_type_attributes();
#ifdef MPI_COMM_TYPE_HW_GUIDED
    check_mpi4();
#endif
    (void)crmpi_checks;
    return comm_finish();
}
