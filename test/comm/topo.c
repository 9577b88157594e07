/*
 * topo.c: virtual topologies: MPI_Dims_create, a 2-D periodic Cartesian grid (shifts,
 * coordinates, sub-grids), a graph, distributed graphs, and the neighbourhood
 * collectives MPI_Neighbor_allgather and MPI_Neighbor_alltoall on a grid and a graph.
 */
#include "comm_common.h"

static void test_dims(void)
{
    int dims[3];

    comm_begin("dims_create");
    dims[0] = dims[1] = 0;
    MPI_Dims_create(12, 2, dims);
    CHECK(dims[0] == 4 && dims[1] == 3, "12 in 2: %d x %d", dims[0], dims[1]);
    dims[0] = dims[1] = dims[2] = 0;
    MPI_Dims_create(8, 3, dims);
    CHECK(dims[0] == 2 && dims[1] == 2 && dims[2] == 2, "8 in 3: %d %d %d", dims[0], dims[1],
          dims[2]);
    dims[0] = 0, dims[1] = 3, dims[2] = 0;
    MPI_Dims_create(30, 3, dims);
    CHECK(dims[0] * dims[2] == 10 && dims[1] == 3 && dims[0] >= dims[2],
          "30 in 3 with 3 fixed: %d %d %d", dims[0], dims[1], dims[2]);
}

/* A periodic 2-D grid over every rank: shifts wrap, sub-grids are rows and columns. */
static void test_cart(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 1}, coords[2], rank, src, dst;
    MPI_Comm grid, row, col;

    comm_begin("cart");
    MPI_Dims_create(comm_size, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
    CHECK(grid != MPI_COMM_NULL, "no grid");
    if (grid == MPI_COMM_NULL)
        return;
    int status, ndims;
    MPI_Topo_test(grid, &status);
    CHECK(status == MPI_CART, "Topo_test gave %d", status);
    MPI_Cartdim_get(grid, &ndims);
    CHECK(ndims == 2, "Cartdim_get gave %d", ndims);
    MPI_Comm_rank(grid, &rank);
    MPI_Cart_coords(grid, rank, 2, coords);
    CHECK(coords[0] == rank / dims[1] && coords[1] == rank % dims[1], "coords (%d,%d) of %d",
          coords[0], coords[1], rank);
    int back;
    MPI_Cart_rank(grid, coords, &back);
    CHECK(back == rank, "Cart_rank gave %d for %d", back, rank);
    /* Periodic: coordinates out of range wrap. */
    int wrapped[2] = {coords[0] + dims[0], coords[1] - dims[1]};
    MPI_Cart_rank(grid, wrapped, &back);
    CHECK(back == rank, "wrapped coordinates gave %d", back);

    MPI_Cart_shift(grid, 1, 1, &src, &dst);
    int expect_dst = coords[0] * dims[1] + (coords[1] + 1) % dims[1];
    int expect_src = coords[0] * dims[1] + (coords[1] + dims[1] - 1) % dims[1];
    CHECK(dst == expect_dst && src == expect_src, "shift in dim 1: %d -> %d, expected %d -> %d",
          src, dst, expect_src, expect_dst);
    /* The shift moves data one step along the row. */
    int mine = rank, got = -1;
    MPI_Sendrecv(&mine, 1, MPI_INT, dst, 8, &got, 1, MPI_INT, src, 8, grid, MPI_STATUS_IGNORE);
    CHECK(got == expect_src, "shifted value %d, expected %d", got, expect_src);

    int keep_row[2] = {0, 1}, keep_col[2] = {1, 0};
    MPI_Cart_sub(grid, keep_row, &row);
    MPI_Cart_sub(grid, keep_col, &col);
    int row_size, col_size, row_rank, sub_dims[1], sub_periods[1], sub_coords[1];
    MPI_Comm_size(row, &row_size);
    MPI_Comm_size(col, &col_size);
    MPI_Comm_rank(row, &row_rank);
    CHECK(row_size == dims[1] && col_size == dims[0], "row %d, column %d ranks", row_size,
          col_size);
    CHECK(row_rank == coords[1], "row rank %d, expected %d", row_rank, coords[1]);
    MPI_Cart_get(row, 1, sub_dims, sub_periods, sub_coords);
    CHECK(sub_dims[0] == dims[1] && sub_periods[0] == 1 && sub_coords[0] == coords[1],
          "row grid %d periodic %d at %d", sub_dims[0], sub_periods[0], sub_coords[0]);
    long row_sum = comm_sum_on(row, rank), want = 0;
    for (int c = 0; c < dims[1]; c++)
        want += coords[0] * dims[1] + c;
    CHECK(row_sum == want, "row sum %ld, expected %ld", row_sum, want);
    MPI_Comm_free(&row);
    MPI_Comm_free(&col);

    /* Neighbours on the grid: order -1, +1 per dimension. */
    int nbrs = 4, out[4], in[4] = {-1, -1, -1, -1};
    int expect[4];
    for (int d = 0; d < 2; d++) {
        MPI_Cart_shift(grid, d, 1, &src, &dst);
        expect[2 * d] = src;
        expect[2 * d + 1] = dst;
    }
    MPI_Neighbor_allgather(&rank, 1, MPI_INT, in, 1, MPI_INT, grid);
    for (int i = 0; i < nbrs; i++)
        CHECK(in[i] == expect[i], "allgather block %d from %d, expected %d", i, in[i], expect[i]);
    /* Alltoall: block i goes to neighbour i; what comes from the -1 side was sent to +1. */
    for (int i = 0; i < nbrs; i++)
        out[i] = rank * 10 + i;
    MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, grid);
    for (int d = 0; d < 2; d++) {
        CHECK(in[2 * d] == expect[2 * d] * 10 + 2 * d + 1, "alltoall from -1 in dim %d: %d", d,
              in[2 * d]);
        CHECK(in[2 * d + 1] == expect[2 * d + 1] * 10 + 2 * d, "alltoall from +1 in dim %d: %d", d,
              in[2 * d + 1]);
    }
    MPI_Comm dup;
    MPI_Comm_dup(grid, &dup);
    MPI_Topo_test(dup, &status);
    CHECK(status == MPI_CART, "a duplicate lost the topology (%d)", status);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&grid);
}

/* A non-periodic line: the ends have MPI_PROC_NULL neighbours. */
static void test_cart_line(void)
{
    int dims[1] = {comm_size}, periods[1] = {0}, src, dst;
    MPI_Comm line;

    comm_begin("cart_line");
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 1, &line);
    MPI_Cart_shift(line, 0, 1, &src, &dst);
    CHECK(src == (comm_rank == 0 ? MPI_PROC_NULL : comm_rank - 1), "source %d", src);
    CHECK(dst == (comm_rank == comm_size - 1 ? MPI_PROC_NULL : comm_rank + 1), "dest %d", dst);
    int in[2] = {-7, -7};
    MPI_Neighbor_allgather(&comm_rank, 1, MPI_INT, in, 1, MPI_INT, line);
    CHECK(in[0] == (src == MPI_PROC_NULL ? -7 : src) && in[1] == (dst == MPI_PROC_NULL ? -7 : dst),
          "line allgather got %d %d", in[0], in[1]);
    MPI_Comm_free(&line);
    /* A grid smaller than the world: the other ranks get MPI_COMM_NULL. */
    MPI_Comm small;
    dims[0] = 1;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &small);
    CHECK((comm_rank == 0) == (small != MPI_COMM_NULL), "grid of 1: handle %p", (void *)small);
    if (small != MPI_COMM_NULL)
        MPI_Comm_free(&small);
}

/* A ring as a graph: each node's neighbours are its predecessor and successor. */
static void test_graph(void)
{
    int index[64], edges[128], n = comm_size < 64 ? comm_size : 64;
    MPI_Comm ring;

    comm_begin("graph");
    for (int i = 0; i < n; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i + n - 1) % n;
        edges[2 * i + 1] = (i + 1) % n;
    }
    MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &ring);
    int status, nnodes, nedges, count, nbrs[2];
    MPI_Topo_test(ring, &status);
    CHECK(status == MPI_GRAPH, "Topo_test gave %d", status);
    MPI_Graphdims_get(ring, &nnodes, &nedges);
    CHECK(nnodes == n && nedges == 2 * n, "graph of %d nodes, %d edges", nnodes, nedges);
    MPI_Graph_neighbors_count(ring, comm_rank, &count);
    MPI_Graph_neighbors(ring, comm_rank, 2, nbrs);
    CHECK(count == 2 && nbrs[0] == (comm_rank + n - 1) % n && nbrs[1] == (comm_rank + 1) % n,
          "neighbours %d: %d %d", count, nbrs[0], nbrs[1]);
    int in[2] = {-1, -1};
    MPI_Neighbor_allgather(&comm_rank, 1, MPI_INT, in, 1, MPI_INT, ring);
    CHECK(in[0] == nbrs[0] && in[1] == nbrs[1], "graph allgather got %d %d", in[0], in[1]);
    MPI_Comm_free(&ring);
}

/* Distributed graphs: each rank sends to the next two (adjacent form), and a star made
 * with the general form where rank 0 gives every edge. */
static void test_dist_graph(void)
{
    MPI_Comm g, star;
    int next = (comm_rank + 1) % comm_size, next2 = (comm_rank + 2) % comm_size;
    int prev = (comm_rank + comm_size - 1) % comm_size,
        prev2 = (comm_rank + comm_size - 2) % comm_size;
    int sources[2] = {prev, prev2}, dests[2] = {next, next2}, w[2] = {5, 6};

    comm_begin("dist_graph");
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, sources, w, 2, dests, w, MPI_INFO_NULL, 0,
                                   &g);
    int indeg, outdeg, weighted, s[2], sw[2], d[2], dw[2];
    MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted);
    CHECK(indeg == 2 && outdeg == 2 && weighted, "degrees %d %d weighted %d", indeg, outdeg,
          weighted);
    MPI_Dist_graph_neighbors(g, 2, s, sw, 2, d, dw);
    CHECK(s[0] == prev && s[1] == prev2 && d[0] == next && dw[1] == 6, "neighbours");
    int got[2] = {-1, -1};
    MPI_Neighbor_allgather(&comm_rank, 1, MPI_INT, got, 1, MPI_INT, g);
    CHECK(got[0] == prev && got[1] == prev2, "dist allgather got %d %d, expected %d %d", got[0],
          got[1], prev, prev2);
    int out[2] = {comm_rank * 100 + 1, comm_rank * 100 + 2};
    MPI_Neighbor_alltoall(out, 1, MPI_INT, got, 1, MPI_INT, g);
    CHECK(got[0] == prev * 100 + 1 && got[1] == prev2 * 100 + 2, "dist alltoall got %d %d", got[0],
          got[1]);
    MPI_Comm_free(&g);

    /* Rank 0 declares edges 0 -> r and r -> 0 for every other rank. */
    int n = 0, srcs[130], degs[130], dsts[130];
    if (comm_rank == 0) {
        for (int r = 1; r < comm_size && r < 64; r++) {
            srcs[n] = 0, degs[n] = 1, dsts[n] = r, n++;
            srcs[n] = r, degs[n] = 1, dsts[n] = 0, n++;
        }
    }
    /* MPI_UNWEIGHTED is a special address, which GCC takes for an empty array. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
    MPI_Dist_graph_create(MPI_COMM_WORLD, n, srcs, degs, dsts, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                          &star);
#pragma GCC diagnostic pop
    MPI_Dist_graph_neighbors_count(star, &indeg, &outdeg, &weighted);
    int expect = comm_rank == 0 ? comm_size - 1 : 1;
    CHECK(indeg == expect && outdeg == expect && !weighted, "star degrees %d %d weighted %d", indeg,
          outdeg, weighted);
    int value = comm_rank + 1000, all[64];
    MPI_Neighbor_allgather(&value, 1, MPI_INT, all, 1, MPI_INT, star);
    if (comm_rank == 0) {
        long sum = 0;
        for (int i = 0; i < indeg; i++)
            sum += all[i];
        long want = 0;
        for (int r = 1; r < comm_size; r++)
            want += r + 1000;
        CHECK(sum == want, "star centre got sum %ld, expected %ld", sum, want);
    } else {
        CHECK(all[0] == 1000, "a leaf got %d from the centre", all[0]);
    }
    MPI_Comm_free(&star);
}

int main(int argc, char **argv)
{
    comm_init(&argc, &argv, "topo");
    test_dims();
    comm_barrier();
    test_cart();
    comm_barrier();
    test_cart_line();
    comm_barrier();
    test_graph();
    comm_barrier();
    test_dist_graph();
    return comm_finish();
}
