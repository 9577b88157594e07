/*
 * rma_pscw: PSCW epochs open when the checkpoint lands. On a ring, every rank exposes its
 * window to PREV (MPI_Win_post) and accesses NEXT's (MPI_Win_start), puts an eager and a
 * rendezvous block there and starts an MPI_Rget of NEXT's source block. Even ranks then
 * complete their access epoch and wait inside MPI_Win_wait for their odd PREV, which
 * makes no MPI call until the go: the checkpoint finds ranks blocked in MPI_Win_wait,
 * requests in flight and an Rget pending. Afterwards the odd ranks wait for the Rget,
 * complete and wait; everyone checks what landed, then runs a second epoch.
 */
#include "cr_common.h"

enum {
    EAGER_INTS = CR_EAGER_BYTES / sizeof(int),
    RNDV_INTS = CR_RNDV_BYTES / sizeof(int),
};
#define OFF_EAGER 0
#define OFF_RNDV  (OFF_EAGER + EAGER_INTS)
#define OFF_SRC   (OFF_RNDV + RNDV_INTS)
#define WIN_INTS  (OFF_SRC + EAGER_INTS)

int main(int argc, char **argv)
{
    cr_init(&argc, &argv, MPI_THREAD_SINGLE);
    int next = (cr_rank + 1) % cr_size, prev = (cr_rank + cr_size - 1) % cr_size;
    int *win_mem, *eager = malloc(CR_EAGER_BYTES), *rndv = malloc(CR_RNDV_BYTES);
    int *got = malloc(CR_EAGER_BYTES);
    MPI_Group world, prev_group, next_group;
    MPI_Request rget;
    MPI_Win win;

    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &prev, &prev_group);
    MPI_Group_incl(world, 1, &next, &next_group);
    MPI_Win_allocate(WIN_INTS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win_mem,
                     &win);
    memset(win_mem, 0, WIN_INTS * sizeof(int));
    cr_fill(&win_mem[OFF_SRC], CR_EAGER_BYTES, cr_rank, -1, 3, 0);
    cr_fill(eager, CR_EAGER_BYTES, cr_rank, next, 1, 0);
    cr_fill(rndv, CR_RNDV_BYTES, cr_rank, next, 2, 0);
    MPI_Barrier(MPI_COMM_WORLD); /* every source block is filled before anyone reads it */

    MPI_Win_post(prev_group, 0, win);
    MPI_Win_start(next_group, 0, win);
    MPI_Put(eager, EAGER_INTS, MPI_INT, next, OFF_EAGER, EAGER_INTS, MPI_INT, win);
    MPI_Put(rndv, RNDV_INTS, MPI_INT, next, OFF_RNDV, RNDV_INTS, MPI_INT, win);
    MPI_Rget(got, EAGER_INTS, MPI_INT, next, OFF_SRC, EAGER_INTS, MPI_INT, win, &rget);
    cr_ready();
    if (cr_rank % 2 == 1 || cr_rank == cr_size - 1)
        cr_wait_go();
    MPI_Wait(&rget, MPI_STATUS_IGNORE);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    cr_check(&win_mem[OFF_EAGER], CR_EAGER_BYTES, prev, cr_rank, 1, 0, "eager put");
    cr_check(&win_mem[OFF_RNDV], CR_RNDV_BYTES, prev, cr_rank, 2, 0, "rendezvous put");
    cr_check(got, CR_EAGER_BYTES, next, -1, 3, 0, "Rget");

    /* A second epoch after the checkpoint: NEXT's eager block comes back. */
    MPI_Win_post(prev_group, 0, win);
    MPI_Win_start(next_group, 0, win);
    MPI_Get(got, EAGER_INTS, MPI_INT, next, OFF_EAGER, EAGER_INTS, MPI_INT, win);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    cr_check(got, CR_EAGER_BYTES, cr_rank, next, 1, 0, "get of the second epoch");

    MPI_Win_free(&win);
    MPI_Group_free(&world);
    MPI_Group_free(&prev_group);
    MPI_Group_free(&next_group);
    free(eager);
    free(rndv);
    free(got);
    return cr_finish("rma_pscw");
}
