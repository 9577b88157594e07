/*
 * storm: every rank exchanges with every other rank, round after round (MPI_Irecv from
 * each peer, MPI_Isend to each, MPI_Waitall; every third round rendezvous-sized, the
 * others eager), so that checkpoints land in the middle of all-to-all traffic. The rank
 * says it is ready after 10 rounds; while the go file is missing each round is followed
 * by a 2 ms sleep, so several checkpoints can fall among the 600 rounds.
 */
#include "cr_common.h"

#define STORM_ROUNDS 600
#define STORM_READY  10

int main(int argc, char **argv)
{
    cr_init(&argc, &argv, MPI_THREAD_SINGLE);
    const struct timespec tick = {0, 2 * 1000 * 1000};
    MPI_Request *req = calloc((size_t)(2 * cr_size), sizeof(MPI_Request));
    char **sbuf = calloc((size_t)cr_size, sizeof(char *));
    char **rbuf = calloc((size_t)cr_size, sizeof(char *));

    for (int p = 0; p < cr_size; p++) {
        sbuf[p] = malloc(CR_RNDV_BYTES);
        rbuf[p] = malloc(CR_RNDV_BYTES);
    }
    for (int round = 0; round < STORM_ROUNDS; round++) {
        size_t len = round % 3 == 0 ? CR_RNDV_BYTES : CR_EAGER_BYTES + (size_t)round % 7;
        int n = 0;

        if (round == STORM_READY)
            cr_ready();
        for (int p = 0; p < cr_size; p++) {
            if (p != cr_rank)
                MPI_Irecv(rbuf[p], (int)len, MPI_BYTE, p, round % 5, MPI_COMM_WORLD, &req[n++]);
        }
        for (int k = 1; k < cr_size; k++) {
            int p = (cr_rank + k) % cr_size;

            cr_fill(sbuf[p], len, cr_rank, p, round % 5, round);
            MPI_Isend(sbuf[p], (int)len, MPI_BYTE, p, round % 5, MPI_COMM_WORLD, &req[n++]);
        }
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
        for (int p = 0; p < cr_size; p++) {
            if (p != cr_rank)
                cr_check(rbuf[p], len, p, cr_rank, round % 5, round, "storm");
        }
        if (!cr_go_now())
            nanosleep(&tick, NULL);
    }
    return cr_finish("storm");
}
