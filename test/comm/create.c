/*
 * create.c: MPI_Comm_dup (messages on the duplicate and the original never mix),
 * MPI_Comm_idup, MPI_Comm_create and MPI_Comm_create_group with subsets, many
 * communicators made and freed in a loop (context ids are reused), names, info hints.
 */
#include "comm_common.h"

/* The same tags on the world and its duplicate: every receive gets its own communicator's
 * message, whichever was sent first. */
static void test_dup_isolation(void)
{
    MPI_Comm dup;
    int next = (comm_rank + 1) % comm_size, prev = (comm_rank + comm_size - 1) % comm_size;
    int on_world = 1000 + comm_rank, on_dup = 2000 + comm_rank, got_world = -1, got_dup = -1;
    MPI_Request reqs[2];

    comm_begin("dup_isolation");
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int result;
    MPI_Comm_compare(dup, MPI_COMM_WORLD, &result);
    CHECK(result == MPI_CONGRUENT, "compare with the original gave %d", result);
    /* The duplicate's message is sent first, the receive on the world posted first. */
    MPI_Irecv(&got_world, 1, MPI_INT, prev, 3, MPI_COMM_WORLD, &reqs[0]);
    MPI_Send(&on_dup, 1, MPI_INT, next, 3, dup);
    MPI_Send(&on_world, 1, MPI_INT, next, 3, MPI_COMM_WORLD);
    MPI_Irecv(&got_dup, 1, MPI_INT, prev, 3, dup, &reqs[1]);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    CHECK(got_world == 1000 + prev, "world receive got %d, expected %d", got_world, 1000 + prev);
    CHECK(got_dup == 2000 + prev, "dup receive got %d, expected %d", got_dup, 2000 + prev);

    /* MPI_ANY_TAG on the duplicate sees nothing of the world's traffic. */
    int flag = 1;
    MPI_Send(&on_world, 1, MPI_INT, next, 4, MPI_COMM_WORLD);
    comm_barrier();
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag, "a probe on the duplicate saw a message of the world");
    MPI_Recv(&got_world, 1, MPI_INT, prev, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Comm_free(&dup);
}

/* An idup that other ranks start only after a message this rank sends after its own
 * idup call: the call must not wait for them. */
static void test_idup(void)
{
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Request req;
    int token = 7, size = -1;

    comm_begin("idup");
    if (comm_rank == 0) {
        MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req);
        for (int r = 1; r < comm_size; r++)
            MPI_Send(&token, 1, MPI_INT, r, 6, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&token, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req);
    }
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(req == MPI_REQUEST_NULL, "the request was not freed by MPI_Wait");
    CHECK(dup != MPI_COMM_NULL, "no communicator after the wait");
    if (dup == MPI_COMM_NULL)
        return;
    MPI_Comm_size(dup, &size);
    CHECK(size == comm_size, "size %d", size);
    long total = comm_sum_on(dup, 1);
    CHECK(total == comm_size, "sum over the duplicate %ld", total);
    MPI_Comm_free(&dup);
}

/* Two idups in flight, and a blocking dup made while they are: three distinct
 * communicators whose messages do not mix. */
static void test_idup_overlap(void)
{
    MPI_Comm comms[3];
    MPI_Request reqs[2];
    int next = (comm_rank + 1) % comm_size, prev = (comm_rank + comm_size - 1) % comm_size;
    int sent[3], got[3] = {-1, -1, -1};

    comm_begin("idup_overlap");
    MPI_Comm_idup(MPI_COMM_WORLD, &comms[0], &reqs[0]);
    MPI_Comm_idup(MPI_COMM_WORLD, &comms[1], &reqs[1]);
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[2]);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    for (int i = 0; i < 3; i++) {
        int result;
        MPI_Comm_compare(comms[i], MPI_COMM_WORLD, &result);
        CHECK(result == MPI_CONGRUENT, "communicator %d: compare gave %d", i, result);
    }
    /* Sent in one order on the three, received in the reverse order with the same tag. */
    MPI_Request rreqs[3];
    for (int i = 2; i >= 0; i--)
        MPI_Irecv(&got[i], 1, MPI_INT, prev, 9, comms[i], &rreqs[i]);
    for (int i = 0; i < 3; i++) {
        sent[i] = comm_rank * 10 + i;
        MPI_Send(&sent[i], 1, MPI_INT, next, 9, comms[i]);
    }
    MPI_Waitall(3, rreqs, MPI_STATUSES_IGNORE);
    for (int i = 0; i < 3; i++)
        CHECK(got[i] == prev * 10 + i, "communicator %d got %d, expected %d", i, got[i],
              prev * 10 + i);
    for (int i = 0; i < 3; i++)
        MPI_Comm_free(&comms[i]);
}

/* MPI_Comm_free with operations still pending on the communicator: they complete
 * normally (MPI-3.1 6.4.3), small (eager) and large (rendezvous) messages alike. */
static void test_free_pending(void)
{
    enum { BIG = 1 << 20 };
    int next = (comm_rank + 1) % comm_size, prev = (comm_rank + comm_size - 1) % comm_size;
    int small_out = comm_rank, small_in = -1;
    char *big_out = malloc(BIG), *big_in = malloc(BIG);
    MPI_Request reqs[4];
    MPI_Comm dup;

    comm_begin("free_pending");
    memset(big_out, 'a' + comm_rank % 26, BIG);
    memset(big_in, 0, BIG);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Irecv(&small_in, 1, MPI_INT, prev, 1, dup, &reqs[0]);
    MPI_Irecv(big_in, BIG, MPI_CHAR, prev, 2, dup, &reqs[1]);
    MPI_Isend(&small_out, 1, MPI_INT, next, 1, dup, &reqs[2]);
    MPI_Isend(big_out, BIG, MPI_CHAR, next, 2, dup, &reqs[3]);
    MPI_Comm_free(&dup);
    CHECK(dup == MPI_COMM_NULL, "the handle was not reset");
    MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE);
    CHECK(small_in == prev, "small message %d, expected %d", small_in, prev);
    CHECK(big_in[0] == 'a' + prev % 26 && big_in[BIG - 1] == 'a' + prev % 26,
          "large message holds %c..%c", big_in[0], big_in[BIG - 1]);
    free(big_out);
    free(big_in);
    /* Communicators made after still work (the freed one's id is reused or not). */
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    CHECK(comm_sum_on(dup, 1) == comm_size, "a later duplicate does not work");
    MPI_Comm_free(&dup);
}

/* MPI_Comm_create with the upper half of the world (the others get MPI_COMM_NULL). */
static void test_create(void)
{
    MPI_Group world_group, upper;
    MPI_Comm comm;
    int range[1][3] = {{comm_size / 2, comm_size - 1, 1}};

    comm_begin("create");
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Group_range_incl(world_group, 1, range, &upper);
    MPI_Comm_create(MPI_COMM_WORLD, upper, &comm);
    if (comm_rank < comm_size / 2) {
        CHECK(comm == MPI_COMM_NULL, "a rank outside the group got a communicator");
    } else {
        CHECK(comm != MPI_COMM_NULL, "a member got MPI_COMM_NULL");
        if (comm != MPI_COMM_NULL) {
            int rank, size;
            MPI_Comm_rank(comm, &rank);
            MPI_Comm_size(comm, &size);
            CHECK(rank == comm_rank - comm_size / 2, "rank %d", rank);
            CHECK(size == comm_size - comm_size / 2, "size %d", size);
            long total = comm_sum_on(comm, comm_rank);
            long want = 0;
            for (int r = comm_size / 2; r < comm_size; r++)
                want += r;
            CHECK(total == want, "sum %ld, expected %ld", total, want);
            MPI_Comm_free(&comm);
        }
    }
    MPI_Group_free(&upper);
    MPI_Group_free(&world_group);
}

/* MPI_Comm_create_group called by the even ranks only, in reverse order; the odd ranks
 * meanwhile make their own with another tag. */
static void test_create_group(void)
{
    MPI_Group world_group, mine;
    MPI_Comm comm;
    int ranks[64], n = 0;

    comm_begin("create_group");
    for (int r = comm_size - 1; r >= 0; r--) {
        if (r % 2 == comm_rank % 2 && n < 64)
            ranks[n++] = r;
    }
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Group_incl(world_group, n, ranks, &mine);
    MPI_Comm_create_group(MPI_COMM_WORLD, mine, 10 + comm_rank % 2, &comm);
    CHECK(comm != MPI_COMM_NULL, "got MPI_COMM_NULL");
    if (comm != MPI_COMM_NULL) {
        int rank, size;
        MPI_Comm_rank(comm, &rank);
        MPI_Comm_size(comm, &size);
        CHECK(size == n, "size %d, expected %d", size, n);
        CHECK(ranks[rank] == comm_rank, "rank %d is world rank %d, not %d", rank, ranks[rank],
              comm_rank);
        long total = comm_sum_on(comm, comm_rank);
        long want = 0;
        for (int i = 0; i < n; i++)
            want += ranks[i];
        CHECK(total == want, "sum %ld, expected %ld", total, want);
        MPI_Comm_free(&comm);
    }
    MPI_Group_free(&mine);
    MPI_Group_free(&world_group);
}

/* Only rank 0 and the last rank make a communicator, while the others are busy: the id
 * they agree on must not disturb the rest later. */
static void test_create_group_pair(void)
{
    MPI_Group world_group, pair;
    MPI_Comm comm = MPI_COMM_NULL, dup;
    int ends[2] = {0, comm_size - 1};

    comm_begin("create_group_pair");
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Group_incl(world_group, comm_size > 1 ? 2 : 1, ends, &pair);
    if (comm_rank == 0 || comm_rank == comm_size - 1)
        MPI_Comm_create_group(MPI_COMM_WORLD, pair, 0, &comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    long total = comm_sum_on(dup, 1);
    CHECK(total == comm_size, "sum over a duplicate made after: %ld", total);
    if (comm != MPI_COMM_NULL) {
        long pair_total = comm_sum_on(comm, comm_rank);
        CHECK(pair_total == (comm_size > 1 ? comm_size - 1 : 0), "pair sum %ld", pair_total);
        MPI_Comm_free(&comm);
    }
    MPI_Comm_free(&dup);
    MPI_Group_free(&pair);
    MPI_Group_free(&world_group);
}

/* Many communicators made and freed: ids are given back and used again. */
static void test_many(void)
{
    enum { ROUNDS = 300, LIVE = 20 };
    MPI_Comm live[LIVE];

    comm_begin("many");
    for (int i = 0; i < ROUNDS; i++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        if (i % 50 == 0) {
            long total = comm_sum_on(c, i);
            CHECK(total == (long)i * comm_size, "round %d: sum %ld", i, total);
        }
        MPI_Comm_free(&c);
    }
    for (int i = 0; i < LIVE; i++)
        MPI_Comm_split(MPI_COMM_WORLD, (comm_rank + i) % 2, comm_rank, &live[i]);
    for (int i = 0; i < LIVE; i++) {
        int size, expect = 0;
        MPI_Comm_size(live[i], &size);
        for (int r = 0; r < comm_size; r++)
            expect += (r + i) % 2 == (comm_rank + i) % 2;
        CHECK(size == expect, "live %d: size %d, expected %d", i, size, expect);
        long total = comm_sum_on(live[i], comm_rank);
        long want = 0;
        for (int r = 0; r < comm_size; r++)
            want += (r + i) % 2 == (comm_rank + i) % 2 ? r : 0;
        CHECK(total == want, "live %d: sum %ld, expected %ld", i, total, want);
    }
    for (int i = 0; i < LIVE; i += 2)
        MPI_Comm_free(&live[i]);
    for (int i = 0; i < LIVE; i += 2)
        MPI_Comm_dup(live[i + 1], &live[i]);
    for (int i = 0; i < LIVE; i++) {
        long total = comm_sum_on(live[i], 1);
        int size;
        MPI_Comm_size(live[i], &size);
        CHECK(total == size, "after reuse, live %d: sum %ld, expected %d", i, total, size);
    }
    for (int i = 0; i < LIVE; i++)
        MPI_Comm_free(&live[i]);
}

static void test_names_and_info(void)
{
    char name[MPI_MAX_OBJECT_NAME], value[MPI_MAX_INFO_VAL];
    int len, flag, nkeys;
    MPI_Comm dup;
    MPI_Info info, used;

    comm_begin("names_and_info");
    MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14, "world is named \"%s\"", name);
    MPI_Info_create(&info);
    MPI_Info_set(info, "crmpi_test_hint", "yes");
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dup);
    MPI_Info_free(&info);
    MPI_Comm_get_name(dup, name, &len);
    CHECK(len == 0, "a duplicate is named \"%s\"", name);
    MPI_Comm_set_name(dup, "my duplicate");
    MPI_Comm_get_name(dup, name, &len);
    CHECK(strcmp(name, "my duplicate") == 0, "name \"%s\"", name);
    MPI_Comm_get_info(dup, &used);
    MPI_Info_get_nkeys(used, &nkeys);
    MPI_Info_get(used, "crmpi_test_hint", MPI_MAX_INFO_VAL - 1, value, &flag);
    /* An implementation may drop hints it does not use (MPI-3.1 6.4.4); if kept, intact. */
    CHECK(!flag || strcmp(value, "yes") == 0, "hint value \"%s\"", value);
    MPI_Info_free(&used);
    int inter = 1;
    MPI_Comm_test_inter(dup, &inter);
    CHECK(!inter, "a duplicate of the world is an intercommunicator");
    MPI_Comm_free(&dup);
}

int main(int argc, char **argv)
{
    comm_init(&argc, &argv, "create");
    test_dup_isolation();
    comm_barrier();
    test_idup();
    comm_barrier();
    test_idup_overlap();
    comm_barrier();
    test_free_pending();
    comm_barrier();
    test_create();
    comm_barrier();
    test_create_group();
    comm_barrier();
    test_create_group_pair();
    comm_barrier();
    test_many();
    comm_barrier();
    test_names_and_info();
    return comm_finish();
}
