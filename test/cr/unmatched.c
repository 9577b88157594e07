/*
 * unmatched: rendezvous sends whose receive is posted only after the checkpoint. Each
 * rank sends its right neighbour two rendezvous messages (256 KiB and 1 MiB, MPI_Isend)
 * and one synchronous eager message (MPI_Issend); the neighbour posts nothing before the
 * checkpoint. The drain must pull the rendezvous data whole so that the senders complete
 * (crcp.h); afterwards the receives are posted in reverse order and must find the data.
 */
#include "cr_common.h"

#define BIG (4 * CR_RNDV_BYTES)

int main(int argc, char **argv)
{
    cr_init(&argc, &argv, MPI_THREAD_SINGLE);
    int right = (cr_rank + 1) % cr_size, left = (cr_rank + cr_size - 1) % cr_size;
    size_t len[3] = {CR_RNDV_BYTES, BIG, CR_EAGER_BYTES};
    char *sbuf[3], *rbuf[3];
    MPI_Request req[3];

    for (int k = 0; k < 3; k++) {
        sbuf[k] = malloc(len[k]);
        rbuf[k] = malloc(len[k]);
        cr_fill(sbuf[k], len[k], cr_rank, right, k + 1, 0);
        if (k < 2)
            MPI_Isend(sbuf[k], (int)len[k], MPI_BYTE, right, k + 1, MPI_COMM_WORLD, &req[k]);
        else
            MPI_Issend(sbuf[k], (int)len[k], MPI_BYTE, right, k + 1, MPI_COMM_WORLD, &req[k]);
    }
    cr_ready();
    cr_wait_go();

    for (int k = 2; k >= 0; k--) {
        MPI_Status st;
        int count;

        MPI_Recv(rbuf[k], (int)len[k], MPI_BYTE, left, k + 1, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        if ((size_t)count != len[k])
            cr_fail("tag %d: %d bytes, %zu expected", k + 1, count, len[k]);
    }
    MPI_Waitall(3, req, MPI_STATUSES_IGNORE);
    for (int k = 0; k < 3; k++)
        cr_check(rbuf[k], len[k], left, cr_rank, k + 1, 0, "unmatched");
    return cr_finish("unmatched");
}
