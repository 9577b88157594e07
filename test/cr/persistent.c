/*
 * persistent: persistent requests started before the checkpoint. Each rank has a
 * persistent eager and a persistent rendezvous send to its right neighbour and the two
 * persistent receives from its left one. Before the checkpoint both receives and the
 * eager send are started; the rendezvous send is started only after it (so a started
 * receive waits across the checkpoint for a send that does not exist yet). Then five more
 * rounds reuse every request.
 */
#include "cr_common.h"

#define ROUNDS 6

int main(int argc, char **argv)
{
    cr_init(&argc, &argv, MPI_THREAD_SINGLE);
    int right = (cr_rank + 1) % cr_size, left = (cr_rank + cr_size - 1) % cr_size;
    size_t len[2] = {CR_EAGER_BYTES, CR_RNDV_BYTES};
    char *sbuf[2], *rbuf[2];
    MPI_Request req[4]; /* send eager, send rndv, recv eager, recv rndv */

    for (int k = 0; k < 2; k++) {
        sbuf[k] = malloc(len[k]);
        rbuf[k] = malloc(len[k]);
        MPI_Send_init(sbuf[k], (int)len[k], MPI_BYTE, right, k + 1, MPI_COMM_WORLD, &req[k]);
        MPI_Recv_init(rbuf[k], (int)len[k], MPI_BYTE, left, k + 1, MPI_COMM_WORLD, &req[2 + k]);
    }
    for (int round = 0; round < ROUNDS; round++) {
        for (int k = 0; k < 2; k++)
            cr_fill(sbuf[k], len[k], cr_rank, right, k + 1, round);
        if (round == 0) {
            MPI_Start(&req[2]);
            MPI_Start(&req[3]);
            MPI_Start(&req[0]);
            cr_ready();
            cr_wait_go();
            MPI_Start(&req[1]);
        } else {
            MPI_Startall(4, req);
        }
        MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
        for (int k = 0; k < 2; k++)
            cr_check(rbuf[k], len[k], left, cr_rank, k + 1, round, "persistent");
    }
    for (int k = 0; k < 4; k++)
        MPI_Request_free(&req[k]);
    return cr_finish("persistent");
}
