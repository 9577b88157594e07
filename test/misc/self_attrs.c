/*
 * self_attrs.c: MPI_Finalize deletes MPI_COMM_SELF's attributes first, as if the
 * communicator were freed, while MPI is still usable, last set first (MPI-3.1 section
 * 8.7.1). Three attributes are set; each delete callback records its key and calls MPI.
 * After MPI_Finalize the program prints the order it saw: "order 3 2 1" and "done".
 */
#include <mpi.h>
#include <stdio.h>

static int order[3];
static int num_deleted;
static int mpi_usable = 1;

static int delete_fn(MPI_Comm comm, int keyval, void *value, void *extra_state)
{
    int rank = -1, finalized = 1;

    (void)comm, (void)keyval, (void)extra_state;
    /* Still inside MPI: MPI_Finalized says no, and a communicator query works. */
    MPI_Finalized(&finalized);
    if (finalized || MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS || rank < 0)
        mpi_usable = 0;
    if (num_deleted < 3)
        order[num_deleted] = (int)(long)value;
    num_deleted++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int keys[3];

    MPI_Init(&argc, &argv);
    for (int i = 0; i < 3; i++) {
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &keys[i], NULL);
        MPI_Comm_set_attr(MPI_COMM_SELF, keys[i], (void *)(long)(i + 1));
    }
    MPI_Finalize();
    printf("deleted %d, mpi usable %d, order %d %d %d\n", num_deleted, mpi_usable, order[0],
           order[1], order[2]);
    printf("done\n");
    return 0;
}
