/*
 * rma_fence: a fence epoch open when the checkpoint lands, with its operations in flight.
 * After the opening fence every rank puts an eager and a rendezvous block into NEXT's
 * window, adds to rank 0's counters with MPI_Accumulate, and asks PREV for a block with
 * MPI_Get; then it makes no MPI call until the go, so the requests sit in the BTLs (the
 * drain moves them, and the targets apply them from the C/R thread's progress or after)
 * and the get's reply comes back after the checkpoint. The closing fence completes all;
 * a second epoch (lock_all, MPI_Fetch_and_op) follows, to run over the new transports.
 */
#include "cr_common.h"

enum {
    EAGER_INTS = CR_EAGER_BYTES / sizeof(int), /* a block below every eager limit */
    RNDV_INTS = CR_RNDV_BYTES / sizeof(int),   /* a block above them */
    NCOUNT = 16,                               /* rank 0's accumulated counters */
};
/* Window layout, in ints: the eager block, the rendezvous block, PREV's get source, the
 * counters. */
#define OFF_EAGER 0
#define OFF_RNDV  (OFF_EAGER + EAGER_INTS)
#define OFF_SRC   (OFF_RNDV + RNDV_INTS)
#define OFF_COUNT (OFF_SRC + EAGER_INTS)
#define WIN_INTS  (OFF_COUNT + NCOUNT)

int main(int argc, char **argv)
{
    cr_init(&argc, &argv, MPI_THREAD_SINGLE);
    int next = (cr_rank + 1) % cr_size, prev = (cr_rank + cr_size - 1) % cr_size;
    int *win_mem, *eager = malloc(CR_EAGER_BYTES), *rndv = malloc(CR_RNDV_BYTES);
    int *got = malloc(CR_EAGER_BYTES), add[NCOUNT];
    MPI_Win win;

    MPI_Win_allocate(WIN_INTS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win_mem,
                     &win);
    memset(win_mem, 0, WIN_INTS * sizeof(int));
    cr_fill(&win_mem[OFF_SRC], CR_EAGER_BYTES, cr_rank, -1, 3, 0);
    cr_fill(eager, CR_EAGER_BYTES, cr_rank, next, 1, 0);
    cr_fill(rndv, CR_RNDV_BYTES, cr_rank, next, 2, 0);
    for (int i = 0; i < NCOUNT; i++)
        add[i] = cr_rank + i;
    MPI_Win_fence(0, win);
    MPI_Put(eager, EAGER_INTS, MPI_INT, next, OFF_EAGER, EAGER_INTS, MPI_INT, win);
    MPI_Put(rndv, RNDV_INTS, MPI_INT, next, OFF_RNDV, RNDV_INTS, MPI_INT, win);
    MPI_Accumulate(add, NCOUNT, MPI_INT, 0, OFF_COUNT, NCOUNT, MPI_INT, MPI_SUM, win);
    MPI_Get(got, EAGER_INTS, MPI_INT, prev, OFF_SRC, EAGER_INTS, MPI_INT, win);
    cr_ready();
    cr_wait_go();
    MPI_Win_fence(0, win);

    cr_check(&win_mem[OFF_EAGER], CR_EAGER_BYTES, prev, cr_rank, 1, 0, "eager put");
    cr_check(&win_mem[OFF_RNDV], CR_RNDV_BYTES, prev, cr_rank, 2, 0, "rendezvous put");
    cr_check(got, CR_EAGER_BYTES, prev, -1, 3, 0, "get");
    if (cr_rank == 0) {
        for (int i = 0; i < NCOUNT; i++) {
            int want = cr_size * (cr_size - 1) / 2 + cr_size * i;
            if (win_mem[OFF_COUNT + i] != want)
                cr_fail("accumulated counter %d is %d, expected %d", i, win_mem[OFF_COUNT + i],
                        want);
        }
        cr_sum_bytes(&win_mem[OFF_COUNT], NCOUNT * sizeof(int));
    }

    /* A passive target epoch after the checkpoint: every rank takes a ticket from rank 0. */
    int one = 1, ticket = -1;
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    MPI_Win_lock_all(0, win);
    MPI_Fetch_and_op(&one, &ticket, MPI_INT, 0, OFF_COUNT, MPI_SUM, win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    int base = cr_size * (cr_size - 1) / 2;
    if (ticket < base || ticket >= base + cr_size)
        cr_fail("ticket %d outside %d..%d", ticket, base, base + cr_size - 1);
    if (cr_rank == 0) {
        if (win_mem[OFF_COUNT] != base + cr_size)
            cr_fail("the ticket counter is %d, expected %d", win_mem[OFF_COUNT], base + cr_size);
        cr_sum_bytes(&win_mem[OFF_COUNT], sizeof(int));
    }
    MPI_Win_free(&win);
    free(eager);
    free(rndv);
    free(got);
    return cr_finish("rma_fence");
}
