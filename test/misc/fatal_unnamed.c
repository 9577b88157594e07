/*
 * fatal_unnamed.c: an error on a communicator the program made, with the default handler
 * MPI_ERRORS_ARE_FATAL: the job's one line must say which communicator, even unnamed.
 */
#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Comm dup;
    int size, value = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Send(&value, 1, MPI_INT, size + 5, 0, dup); /* no such rank: fatal */
    MPI_Finalize();
    return 0;
}
