/*
 * rma_shared: checkpoints around a shared-memory window (MPI_Win_allocate_shared), which
 * crmpi refuses to checkpoint while it lives (docs/design.md, "One-sided communication").
 * Three pauses, each announced by <name>.<rank> in CR_READY_DIR and ended by the file
 * CR_GO.<name> (no MPI call while paused), so test_rma.py can checkpoint at each:
 *   before   no window yet                    (a checkpoint succeeds)
 *   shared   the window lives, its parts full  (a checkpoint is refused; the job goes on)
 *   freed    the window was freed              (a checkpoint succeeds again)
 * Every rank checks, by direct loads, what the others stored into their parts, and an
 * accumulate into rank 0's part; rank 0 prints the cr_common.h result line.
 */
#include "cr_common.h"

enum { N = 4096 }; /* ints per rank's part */

static void pause_at(const char *name)
{
    const struct timespec tick = {0, 10 * 1000 * 1000};
    const char *dir = getenv("CR_READY_DIR"), *go = getenv("CR_GO");
    char path[4096];
    int fd;

    if (!dir || !go)
        return;
    snprintf(path, sizeof(path), "%s/%s.%d", dir, name, cr_rank);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0)
        close(fd);
    snprintf(path, sizeof(path), "%s.%s", go, name);
    while (access(path, F_OK) != 0)
        nanosleep(&tick, NULL);
}

int main(int argc, char **argv)
{
    int *mine, **parts, one = 1, unit;
    MPI_Aint size;
    MPI_Win win;

    cr_init(&argc, &argv, MPI_THREAD_SINGLE);
    MPI_Barrier(MPI_COMM_WORLD);
    pause_at("before");

    parts = malloc((size_t)cr_size * sizeof(*parts));
    MPI_Win_allocate_shared(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mine,
                            &win);
    for (int r = 0; r < cr_size; r++)
        MPI_Win_shared_query(win, r, &size, &unit, &parts[r]);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    for (int i = 0; i < N; i++)
        mine[i] = cr_rank * N + i;
    MPI_Win_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
    MPI_Win_unlock_all(win);
    pause_at("shared");

    for (int r = 0; r < cr_size; r++) {
        for (int i = 0; i < N; i++) {
            if (parts[r][i] != r * N + i) {
                cr_fail("rank %d's part [%d] is %d", r, i, parts[r][i]);
                break;
            }
        }
        cr_sum_bytes(parts[r], N * sizeof(int));
    }
    MPI_Barrier(MPI_COMM_WORLD); /* every rank has read rank 0's [0] before it changes */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_unlock(0, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
    if (parts[0][0] != cr_size)
        cr_fail("the accumulate into rank 0's part gave %d, expected %d", parts[0][0], cr_size);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    free(parts);
    pause_at("freed");

    return cr_finish("rma_shared");
}
