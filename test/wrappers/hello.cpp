// hello.cpp: a C++ program on MPI's C bindings, built with mpicxx: every rank sends its
// rank to rank 0 in a std::vector, rank 0 prints the sum.
#include <mpi.h>

#include <cstdio>
#include <numeric>
#include <vector>

int main(int argc, char **argv)
{
    int rank, size;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<int> ranks(size);
    MPI_Gather(&rank, 1, MPI_INT, ranks.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        std::printf("sum %d of %d ranks\n", std::accumulate(ranks.begin(), ranks.end(), 0), size);
    MPI_Finalize();
    return 0;
}
