/*
 * inflight: eager and rendezvous messages in flight when the checkpoint lands. Every rank
 * sends every other rank four eager and four rendezvous messages (MPI_Isend); for half of
 * them the receiver has posted its receive before the checkpoint, for the other half it
 * posts it only afterwards (in another tag order). No rank calls MPI between posting and
 * the checkpoint, so the bytes sit in the BTLs and the drain must move them.
 */
#include "cr_common.h"

#define NMSG 4

int main(int argc, char **argv)
{
    cr_init(&argc, &argv, MPI_THREAD_SINGLE);
    int npeers = cr_size - 1;
    MPI_Request *sends = calloc((size_t)(2 * NMSG * npeers + 1), sizeof(MPI_Request));
    MPI_Request *early = calloc((size_t)(2 * 2 * npeers + 1), sizeof(MPI_Request));
    char **sbuf = calloc((size_t)(2 * NMSG * cr_size), sizeof(char *));
    char **rbuf = calloc((size_t)(2 * NMSG * cr_size), sizeof(char *));
    int ns = 0, ne = 0;

    /* Tags 0..3: eager; 10..13: rendezvous. Receives of tags 0, 1, 10, 11 come first. */
    for (int p = 0; p < cr_size; p++) {
        if (p == cr_rank)
            continue;
        for (int k = 0; k < 2 * NMSG; k++) {
            int tag = k < NMSG ? k : 10 + k - NMSG;
            size_t len = k < NMSG ? CR_EAGER_BYTES : CR_RNDV_BYTES;
            int slot = p * 2 * NMSG + k;

            rbuf[slot] = malloc(len);
            if (tag == 0 || tag == 1 || tag == 10 || tag == 11)
                MPI_Irecv(rbuf[slot], (int)len, MPI_BYTE, p, tag, MPI_COMM_WORLD, &early[ne++]);
        }
    }
    for (int p = 0; p < cr_size; p++) {
        if (p == cr_rank)
            continue;
        for (int k = 0; k < 2 * NMSG; k++) {
            int tag = k < NMSG ? k : 10 + k - NMSG;
            size_t len = k < NMSG ? CR_EAGER_BYTES : CR_RNDV_BYTES;
            int slot = p * 2 * NMSG + k;

            sbuf[slot] = malloc(len);
            cr_fill(sbuf[slot], len, cr_rank, p, tag, 0);
            MPI_Isend(sbuf[slot], (int)len, MPI_BYTE, p, tag, MPI_COMM_WORLD, &sends[ns++]);
        }
    }
    cr_ready();
    cr_wait_go();

    MPI_Waitall(ne, early, MPI_STATUSES_IGNORE);
    /* The late receives, tags in reverse order. */
    for (int p = 0; p < cr_size; p++) {
        if (p == cr_rank)
            continue;
        for (int k = 2 * NMSG - 1; k >= 0; k--) {
            int tag = k < NMSG ? k : 10 + k - NMSG;
            size_t len = k < NMSG ? CR_EAGER_BYTES : CR_RNDV_BYTES;
            MPI_Status st;
            int count;

            if (tag == 0 || tag == 1 || tag == 10 || tag == 11)
                continue;
            MPI_Recv(rbuf[p * 2 * NMSG + k], (int)len, MPI_BYTE, p, tag, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &count);
            if ((size_t)count != len)
                cr_fail("late receive from %d tag %d: %d bytes, %zu expected", p, tag, count, len);
        }
    }
    MPI_Waitall(ns, sends, MPI_STATUSES_IGNORE);
    for (int p = 0; p < cr_size; p++) {
        if (p == cr_rank)
            continue;
        for (int k = 0; k < 2 * NMSG; k++) {
            int tag = k < NMSG ? k : 10 + k - NMSG;
            size_t len = k < NMSG ? CR_EAGER_BYTES : CR_RNDV_BYTES;

            cr_check(rbuf[p * 2 * NMSG + k], len, p, cr_rank, tag, 0, "inflight");
        }
    }
    return cr_finish("inflight");
}
