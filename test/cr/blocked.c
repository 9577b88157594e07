/*
 * blocked: ranks blocked in MPI_Recv when the checkpoint lands (docs/design.md, "Layers inside a
 * rank": the C/R thread takes the library lock between the turns of the blocking loop). Rank 0
 * waits for the go; rank 1 waits in MPI_Recv for a rendezvous message from it, rank 2 for an eager
 * one, every other rank in MPI_Recv(ANY_SOURCE, ANY_TAG). Each then answers rank 0, which receives
 * the answers in rank order.
 */
#include "cr_common.h"

int main(int argc, char **argv)
{
    cr_init(&argc, &argv, MPI_THREAD_SINGLE);
    MPI_Status st;

    if (cr_rank == 0) {
        cr_ready();
        cr_wait_go();
        for (int peer = 1; peer < cr_size; peer++) {
            size_t len = peer == 1 ? CR_RNDV_BYTES : CR_EAGER_BYTES;
            char *buf = malloc(len);

            cr_fill(buf, len, 0, peer, peer, 0);
            MPI_Send(buf, (int)len, MPI_BYTE, peer, peer, MPI_COMM_WORLD);
            free(buf);
        }
        for (int peer = 1; peer < cr_size; peer++) {
            char buf[CR_EAGER_BYTES];

            MPI_Recv(buf, CR_EAGER_BYTES, MPI_BYTE, peer, 100, MPI_COMM_WORLD, &st);
            cr_check(buf, CR_EAGER_BYTES, peer, 0, 100, 1, "blocked: answer");
        }
    } else {
        size_t len = cr_rank == 1 ? CR_RNDV_BYTES : CR_EAGER_BYTES;
        char *buf = malloc(len), answer[CR_EAGER_BYTES];
        int count;

        cr_ready(); /* the test gives the rank time to enter MPI_Recv */
        if (cr_rank <= 2)
            MPI_Recv(buf, (int)len, MPI_BYTE, 0, cr_rank, MPI_COMM_WORLD, &st);
        else
            MPI_Recv(buf, (int)len, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        if (st.MPI_SOURCE != 0 || st.MPI_TAG != cr_rank || (size_t)count != len)
            cr_fail("blocked MPI_Recv got (%d, %d, %d bytes)", st.MPI_SOURCE, st.MPI_TAG, count);
        cr_check(buf, len, 0, cr_rank, cr_rank, 0, "blocked");
        cr_fill(answer, sizeof(answer), cr_rank, 0, 100, 1);
        MPI_Send(answer, sizeof(answer), MPI_BYTE, 0, 100, MPI_COMM_WORLD);
        free(buf);
    }
    return cr_finish("blocked");
}
