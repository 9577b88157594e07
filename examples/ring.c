/*
 * ring.c: the classic ring. Rank 0 starts a token that carries a lap counter and a block
 * of data; every rank passes it on to rank+1 (the last to rank 0), rank 0 counts one lap
 * off each time the token comes back, and when the counter reaches 0 it goes round one
 * last time so that every rank learns it may stop.
 *
 * On every hop the receiving rank checks the data (each element is its start value plus
 * the number of hops so far) and adds 1 to each element, so a lost, repeated or damaged
 * message is caught where it happens. Rank 0 prints one line at the end, with the number
 * of hops and a checksum of the data, and the program exits non-zero on any mismatch.
 *
 *   mpicc ring.c -o ring
 *   mpirun -np 4 ./ring [LAPS]      (default 10 laps)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define DATA_INTS 1000
#define TAG       201

/* The token: laps left, hops so far, then the data. Sent as DATA_INTS + 2 ints. */
typedef struct token {
    int laps;
    int hops;
    int data[DATA_INTS];
} token_t;

static int start_value(int i)
{
    return i * 7 + 1;
}

int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    int laps = argc > 1 ? atoi(argv[1]) : 10;
    /* Two tokens: one on its way out while the next comes in (a rank alone sends to
     * itself, so its send must not wait for its own receive). */
    token_t token[2];
    int cur = 0;
    MPI_Request send = MPI_REQUEST_NULL;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    const int count = (int)(sizeof(token_t) / sizeof(int));

    if (laps < 1) {
        laps = 1;
    }
    if (rank == 0) {
        token[cur].laps = laps;
        token[cur].hops = 0;
        for (int i = 0; i < DATA_INTS; i++) {
            token[cur].data[i] = start_value(i);
        }
        MPI_Isend(&token[cur], count, MPI_INT, next, TAG, MPI_COMM_WORLD, &send);
        cur = !cur;
    }

    for (;;) {
        token_t *t = &token[cur];
        MPI_Recv(t, count, MPI_INT, prev, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < DATA_INTS; i++) {
            bad += t->data[i] != start_value(i) + t->hops;
            t->data[i]++;
        }
        t->hops++;
        if (rank == 0) {
            if (t->laps == 0) {
                break; /* it went round once more with 0: everyone knows */
            }
            t->laps--; /* one lap done */
        }
        MPI_Wait(&send, MPI_STATUS_IGNORE); /* the other token is free again */
        MPI_Isend(t, count, MPI_INT, next, TAG, MPI_COMM_WORLD, &send);
        cur = !cur;
        if (rank != 0 && t->laps == 0) {
            break;
        }
    }
    MPI_Wait(&send, MPI_STATUS_IGNORE);

    if (rank != 0) {
        /* Each rank reports its own data errors to rank 0. */
        MPI_Send(&bad, 1, MPI_INT, 0, TAG + 1, MPI_COMM_WORLD);
    } else {
        token_t *t = &token[cur];
        int expected_hops = (laps + 1) * size;
        unsigned long checksum = 0, expected_checksum = 0;
        for (int r = 1; r < size; r++) {
            int theirs;
            MPI_Recv(&theirs, 1, MPI_INT, r, TAG + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            bad += theirs;
        }
        for (int i = 0; i < DATA_INTS; i++) {
            checksum += (unsigned long)t->data[i] * (unsigned long)(i + 1);
            expected_checksum +=
                (unsigned long)(start_value(i) + expected_hops) * (unsigned long)(i + 1);
        }
        bad += t->hops != expected_hops || checksum != expected_checksum;
        printf("ring: %d laps over %d ranks, %d hops (expected %d), checksum %lu (expected "
               "%lu): %s\n",
               laps, size, t->hops, expected_hops, checksum, expected_checksum,
               bad ? "FAILED" : "ok");
    }

    MPI_Finalize();
    return bad ? 1 : 0;
}
