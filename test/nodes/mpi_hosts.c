/*
 * mpi_hosts.c: the self-test's MPI program. Every rank adds its rank into an allreduce (so
 * ranks on different nodes talk) and prints "rank R of N on HOST sum S", HOST being its
 * hostname: the node it runs on.
 */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    char host[256] = "";
    int rank, size, sum = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    gethostname(host, sizeof(host) - 1);
    printf("rank %d of %d on %s sum %d\n", rank, size, host, sum);
    MPI_Finalize();
    return 0;
}
