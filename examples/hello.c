/*
 * hello.c: every rank says hello with its rank, the size of MPI_COMM_WORLD and the node it
 * runs on; rank 0 first prints which MPI library it is.
 *
 *   mpicc hello.c -o hello
 *   mpirun -np 4 ./hello
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    char processor_name[MPI_MAX_PROCESSOR_NAME];
    char library_version[MPI_MAX_LIBRARY_VERSION_STRING];
    int rank, size, name_len, version_len;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(processor_name, &name_len);

    if (rank == 0) {
        MPI_Get_library_version(library_version, &version_len);
        printf("%s\n", library_version);
    }
    printf("Hello, world: rank %d of %d on %s\n", rank, size, processor_name);

    MPI_Finalize();
    return 0;
}
