/*
 * split.c: MPI_Comm_split and MPI_Comm_split_type, MPI_Comm_compare, groups of the
 * results, and messages on the new communicators.
 */
#include "comm_common.h"

/* Odd and even ranks apart, keys reversing the order within each color. */
static void test_split_parity(void)
{
    MPI_Comm half;
    int rank, size, expect_size, result;

    comm_begin("split_parity");
    MPI_Comm_split(MPI_COMM_WORLD, comm_rank % 2, -comm_rank, &half);
    CHECK(half != MPI_COMM_NULL, "got MPI_COMM_NULL");
    if (half == MPI_COMM_NULL)
        return;
    MPI_Comm_rank(half, &rank);
    MPI_Comm_size(half, &size);
    expect_size = (comm_size - comm_rank % 2 + 1) / 2;
    CHECK(size == expect_size, "size %d, expected %d", size, expect_size);
    /* Reversed keys: the highest world rank of the color is rank 0. */
    int highest = comm_size - 1 - ((comm_size - 1 - comm_rank % 2) % 2);
    CHECK(rank == (highest - comm_rank) / 2, "rank %d, expected %d", rank,
          (highest - comm_rank) / 2);

    /* A ring on the new communicator: the world rank of the previous rank comes in. */
    int prev_world = -1, me = comm_rank;
    MPI_Sendrecv(&me, 1, MPI_INT, (rank + 1) % size, 5, &prev_world, 1, MPI_INT,
                 (rank + size - 1) % size, 5, half, MPI_STATUS_IGNORE);
    int expect_prev =
        size == 1 ? comm_rank : (rank == 0 ? highest - 2 * (size - 1) : comm_rank + 2);
    CHECK(prev_world == expect_prev, "ring got world rank %d, expected %d", prev_world,
          expect_prev);

    /* The group of the new communicator, translated back to the world. */
    MPI_Group world_group, half_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Comm_group(half, &half_group);
    int ranks[64], translated[64];
    for (int i = 0; i < size && i < 64; i++)
        ranks[i] = i;
    MPI_Group_translate_ranks(half_group, size, ranks, world_group, translated);
    for (int i = 0; i < size && i < 64; i++)
        CHECK(translated[i] == highest - 2 * i, "member %d is world rank %d, expected %d", i,
              translated[i], highest - 2 * i);
    MPI_Group_free(&half_group);
    MPI_Group_free(&world_group);

    MPI_Comm_compare(half, MPI_COMM_WORLD, &result);
    CHECK(result == (comm_size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL), "compare with world gave %d",
          result);
    MPI_Comm_compare(half, half, &result);
    CHECK(result == MPI_IDENT, "compare with itself gave %d", result);
    MPI_Comm_free(&half);
    CHECK(half == MPI_COMM_NULL, "MPI_Comm_free left the handle");
}

/* MPI_UNDEFINED: those ranks get MPI_COMM_NULL; the others still get their communicator. */
static void test_split_undefined(void)
{
    MPI_Comm sub;
    int color = comm_rank % 3 == 2 ? MPI_UNDEFINED : comm_rank % 3;

    comm_begin("split_undefined");
    MPI_Comm_split(MPI_COMM_WORLD, color, comm_rank, &sub);
    if (color == MPI_UNDEFINED) {
        CHECK(sub == MPI_COMM_NULL, "an MPI_UNDEFINED rank got a communicator");
        return;
    }
    CHECK(sub != MPI_COMM_NULL, "got MPI_COMM_NULL");
    if (sub == MPI_COMM_NULL)
        return;
    int size, rank, expect = 0;
    for (int r = 0; r < comm_size; r++)
        expect += r % 3 == color;
    MPI_Comm_size(sub, &size);
    MPI_Comm_rank(sub, &rank);
    CHECK(size == expect, "size %d, expected %d", size, expect);
    CHECK(rank == comm_rank / 3, "rank %d, expected %d", rank, comm_rank / 3);
    long total = comm_sum_on(sub, comm_rank);
    long expect_total = 0;
    for (int r = 0; r < comm_size; r++)
        expect_total += r % 3 == color ? r : 0;
    CHECK(total == expect_total, "sum over the communicator %ld, expected %ld", total,
          expect_total);
    MPI_Comm_free(&sub);
}

/* Same color everywhere and keys that reorder: similar to the world, not congruent. */
static void test_split_compare(void)
{
    MPI_Comm same, reversed;
    int result;

    comm_begin("split_compare");
    MPI_Comm_split(MPI_COMM_WORLD, 7, 0, &same);
    MPI_Comm_compare(same, MPI_COMM_WORLD, &result);
    CHECK(result == MPI_CONGRUENT, "same color and key: compare gave %d, expected congruent",
          result);
    MPI_Comm_split(MPI_COMM_WORLD, 7, comm_size - comm_rank, &reversed);
    MPI_Comm_compare(reversed, MPI_COMM_WORLD, &result);
    CHECK(result == (comm_size == 1 ? MPI_CONGRUENT : MPI_SIMILAR),
          "reversed keys: compare gave %d", result);
    int rank;
    MPI_Comm_rank(reversed, &rank);
    CHECK(rank == comm_size - 1 - comm_rank, "reversed rank %d", rank);
    MPI_Comm_free(&same);
    MPI_Comm_free(&reversed);
}

/* All ranks of these jobs run on one node: MPI_COMM_TYPE_SHARED gives the whole world. */
static void test_split_type_shared(void)
{
    MPI_Comm node, none;
    int size, rank;

    comm_begin("split_type_shared");
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, comm_rank, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &size);
    MPI_Comm_rank(node, &rank);
    CHECK(size == comm_size, "node communicator of %d ranks, expected %d", size, comm_size);
    CHECK(rank == comm_rank, "node rank %d", rank);
    MPI_Comm_free(&node);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &none);
    CHECK(none == MPI_COMM_NULL, "MPI_UNDEFINED split type gave a communicator");
}

/* A split of a split: ranks of the halves split again by quarter. */
static void test_split_nested(void)
{
    MPI_Comm half, quarter;
    int hrank, qsize;

    comm_begin("split_nested");
    MPI_Comm_split(MPI_COMM_WORLD, comm_rank % 2, comm_rank, &half);
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_split(half, hrank % 2, hrank, &quarter);
    MPI_Comm_size(quarter, &qsize);
    int expect = 0;
    for (int r = 0; r < comm_size; r++)
        expect += r % 2 == comm_rank % 2 && (r / 2) % 2 == hrank % 2;
    CHECK(qsize == expect, "quarter of %d, expected %d", qsize, expect);
    long total = comm_sum_on(quarter, comm_rank);
    long want = 0;
    for (int r = 0; r < comm_size; r++)
        want += (r % 2 == comm_rank % 2 && (r / 2) % 2 == hrank % 2) ? r : 0;
    CHECK(total == want, "sum %ld, expected %ld", total, want);
    MPI_Comm_free(&quarter);
    MPI_Comm_free(&half);
}

int main(int argc, char **argv)
{
    comm_init(&argc, &argv, "split");
    test_split_parity();
    comm_barrier();
    test_split_undefined();
    comm_barrier();
    test_split_compare();
    comm_barrier();
    test_split_type_shared();
    comm_barrier();
    test_split_nested();
    return comm_finish();
}
