/*
 * collective: ranks inside collectives when the checkpoint lands. A non-blocking
 * MPI_Ibcast of rendezvous size is started before the checkpoint and completed after it.
 * Every rank but 0 enters MPI_Allreduce (rendezvous size), MPI_Neighbor_allgather on a
 * periodic ring and MPI_Comm_dup at once; rank 0 enters them only after the go, so the
 * others wait inside the collectives (their data partly sent) while the checkpoint is
 * taken. Then the new communicator carries a ring exchange.
 */
#include "cr_common.h"

int main(int argc, char **argv)
{
    cr_init(&argc, &argv, MPI_THREAD_SINGLE);
    int dims[1] = {cr_size}, periods[1] = {1};
    MPI_Comm ring, dup;
    int left, right;

    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    MPI_Cart_shift(ring, 0, 1, &left, &right);
    char *mine = malloc(CR_RNDV_BYTES), *theirs = malloc(2 * CR_RNDV_BYTES);
    cr_fill(mine, CR_RNDV_BYTES, cr_rank, -1, 1, 0);
    enum { NINTS = CR_RNDV_BYTES / sizeof(int) };
    int *bcast = malloc(NINTS * sizeof(int)), *vals = malloc(NINTS * sizeof(int));
    int *sums = malloc(NINTS * sizeof(int));
    for (int i = 0; i < NINTS; i++) {
        bcast[i] = cr_rank == 0 ? 7 * i + 3 : -1;
        vals[i] = cr_rank + i;
    }
    MPI_Request bcast_req;
    MPI_Ibcast(bcast, NINTS, MPI_INT, 0, MPI_COMM_WORLD, &bcast_req);
    cr_ready();
    if (cr_rank == 0)
        cr_wait_go();
    MPI_Allreduce(vals, sums, NINTS, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Wait(&bcast_req, MPI_STATUS_IGNORE);
    for (int i = 0; i < NINTS; i++) {
        if (sums[i] != cr_size * (cr_size - 1) / 2 + cr_size * i) {
            cr_fail("Allreduce: element %d is %d", i, sums[i]);
            break;
        }
        if (bcast[i] != 7 * i + 3) {
            cr_fail("Ibcast: element %d is %d", i, bcast[i]);
            break;
        }
    }
    free(bcast);
    free(vals);
    free(sums);
    MPI_Neighbor_allgather(mine, CR_RNDV_BYTES, MPI_BYTE, theirs, CR_RNDV_BYTES, MPI_BYTE, ring);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    /* Neighbours of a periodic 1-D Cartesian communicator: the source (left), then the
     * destination (right) (MPI-3.1 section 7.6). */
    cr_check(theirs, CR_RNDV_BYTES, left, -1, 1, 0, "Neighbor_allgather (left)");
    cr_check(theirs + CR_RNDV_BYTES, CR_RNDV_BYTES, right, -1, 1, 0, "Neighbor_allgather (right)");

    int dright = (cr_rank + 1) % cr_size, dleft = (cr_rank + cr_size - 1) % cr_size;
    char out[CR_EAGER_BYTES], in[CR_EAGER_BYTES];
    cr_fill(out, sizeof(out), cr_rank, dright, 2, 0);
    MPI_Sendrecv(out, sizeof(out), MPI_BYTE, dright, 2, in, sizeof(in), MPI_BYTE, dleft, 2, dup,
                 MPI_STATUS_IGNORE);
    cr_check(in, sizeof(in), dleft, cr_rank, 2, 0, "ring on the duplicate");
    MPI_Comm_free(&dup);
    MPI_Comm_free(&ring);
    return cr_finish("collective");
}
