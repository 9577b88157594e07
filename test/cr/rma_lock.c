/*
 * rma_lock: an exclusive lock held across the checkpoint, and ranks waiting for it. The
 * last rank locks rank 0's window exclusively, increments its counter (MPI_Get, flush,
 * MPI_Put), and holds the lock until the go. Every other rank (rank 0 too, locking its
 * own window) meanwhile enters MPI_Win_lock on rank 0 and waits there, its request queued
 * at rank 0, while the checkpoint is taken. Afterwards the holder increments once more and
 * unlocks; then each rank increments ROUNDS times under the lock. The counter must count
 * every increment exactly once: no lock was lost or granted twice across the checkpoint.
 */
#include "cr_common.h"

#define ROUNDS 10

static void increment(MPI_Win win)
{
    int value = -1;

    MPI_Get(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Win_flush(0, win);
    value++;
    MPI_Put(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
}

int main(int argc, char **argv)
{
    cr_init(&argc, &argv, MPI_THREAD_SINGLE);
    int holder = cr_size - 1, *counter;
    MPI_Win win;

    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &counter, &win);
    *counter = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (cr_rank == holder) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        increment(win);
        MPI_Barrier(MPI_COMM_WORLD); /* the others ask for the lock only now */
        cr_ready();
        cr_wait_go();
        increment(win);
        MPI_Win_unlock(0, win);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        cr_ready();
    }
    for (int round = 0; round < ROUNDS; round++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        increment(win);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (cr_rank == 0) {
        int want = cr_size * ROUNDS + 2;
        if (*counter != want)
            cr_fail("the counter is %d, expected %d", *counter, want);
        cr_sum_bytes(counter, sizeof(int));
    }
    /* A shared lock on every rank after the checkpoint, each reading the counter. */
    int seen = -1;
    MPI_Win_lock_all(0, win);
    MPI_Get(&seen, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Win_unlock_all(win);
    if (seen != cr_size * ROUNDS + 2)
        cr_fail("read the counter as %d after the epochs", seen);
    MPI_Win_free(&win);
    return cr_finish("rma_lock");
}
