/*
 * pheap_stencil.c: a 1-D heat equation (Jacobi stencil) over MPI ranks, whose state lives
 * in each rank's persistent heap and is checkpointed with MPIX_Checkpoint.
 *
 *   mpicc pheap_stencil.c -o pheap_stencil -lcrmpi-pheap
 *   mpirun --with-ft cr -np 4 ./pheap_stencil -n 200 -c 50 -d DIR
 *   ompi-restart JOBID          (after the job was killed: it goes on from its last checkpoint)
 *
 * Each rank owns CELLS cells of a rod whose ends are held at fixed temperatures; a step
 * exchanges the boundary cells with both neighbours (MPI_Sendrecv) and averages each cell
 * with its neighbours. Every -c steps the ranks take a coordinated checkpoint: each backs up
 * its heap (the cells and the step count), and the job's snapshot stores every rank's backup.
 * A restarted run finds MPIX_Restart_status true, creates a new heap, restores the backup
 * that ompi-restart put back at the rank's backup file, and goes on from that step. The last
 * line, "steps N checksum X", is the same whether or not the run was interrupted.
 *
 * Options: -n STEPS, -c STEPS between checkpoints (0: none), -d DIR for the files
 * (stencil.<rank>.heap and stencil.<rank>.back; default "."). For tests, which wait for
 * states: -s STEP prints "running" at the start and, after the first checkpoint taken at or
 * after step STEP, "stopped", then waits to be killed (a restarted run does not stop);
 * -w USEC sleeps that long each step, so that a running job can be checkpointed.
 *
 * Under --mca crs pheap, MPIX_Checkpoint checkpoints only when ompi-checkpoint asked for
 * it (info.sequence is 0 otherwise): run with -c 1 and each step is such an opportunity.
 */
#include <mpi.h>
#include <mpi-ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <crmpi/pheap.h>

#define CELLS 256

/* Everything a rank needs to go on, in its heap. */
typedef struct stencil_state {
    long step;          /* steps completed */
    double *cells;      /* CELLS + 2 values: a ghost cell at each end, then the owned cells */
    double *next_cells; /* the next step's values, same layout */
} stencil_state_t;

PERM stencil_state_t *state; /* persistent: saved and restored with the heap */

/* One Jacobi step: halos from both neighbours, then the average of each cell's neighbours. */
static void stencil_step(int rank, int size)
{
    int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    double *cells = state->cells;

    MPI_Sendrecv(&cells[1], 1, MPI_DOUBLE, left, 1, &cells[CELLS + 1], 1, MPI_DOUBLE, right, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&cells[CELLS], 1, MPI_DOUBLE, right, 2, &cells[0], 1, MPI_DOUBLE, left, 2,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rank == 0)
        cells[0] = 100.0; /* the hot end */
    if (rank == size - 1)
        cells[CELLS + 1] = 0.0; /* the cold end */
    for (int i = 1; i <= CELLS; i++)
        state->next_cells[i] = (cells[i - 1] + cells[i] + cells[i + 1]) / 3.0;
    state->cells = state->next_cells;
    state->next_cells = cells;
    state->step++;
}

int main(int argc, char **argv)
{
    long steps = 100, every = 0, stop_at = -1, pause_us = 0;
    const char *dir = ".";
    char heap[4096], back[4096];
    int rank, size, restarted = 0, seq = 0, opt;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    while ((opt = getopt(argc, argv, "n:c:d:s:w:")) != -1) {
        switch (opt) {
        case 'n': steps = atol(optarg); break;
        case 'c': every = atol(optarg); break;
        case 'd': dir = optarg; break;
        case 's': stop_at = atol(optarg); break;
        case 'w': pause_us = atol(optarg); break;
        default:
            if (rank == 0)
                fprintf(stderr, "usage: %s [-n STEPS] [-c EVERY] [-d DIR] [-s STEP] [-w USEC]\n",
                        argv[0]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    mkdir(dir, 0700); /* each node's own directory may not exist yet: EEXIST is fine */
    snprintf(heap, sizeof(heap), "%s/stencil.%d.heap", dir, rank);
    snprintf(back, sizeof(back), "%s/stencil.%d.back", dir, rank);
    MPIX_Restart_status(&restarted, &seq);

    /* The heap is new in every run; after a restart the backup brings its content back. */
    if (perm(PERM_START, PERM_SIZE) != 0 || mopen(heap, "w+", (size_t)1 << 24) != 0 ||
        bopen(back, restarted ? "r+" : "w+") != 0)
        MPI_Abort(MPI_COMM_WORLD, 1); /* the library said why */
    if (restarted) {
        if (restore() != 0)
            MPI_Abort(MPI_COMM_WORLD, 1);
        if (rank == 0)
            printf("restarted from sequence %d at step %ld\n", seq, state->step);
    } else {
        state = perm_malloc(sizeof(*state));
        double *a = perm_calloc(CELLS + 2, sizeof(double));
        double *b = perm_calloc(CELLS + 2, sizeof(double));
        if (!state || !a || !b)
            MPI_Abort(MPI_COMM_WORLD, 1);
        *state = (stencil_state_t){.step = 0, .cells = a, .next_cells = b};
    }

    if (stop_at >= 0 && rank == 0) {
        printf("running\n");
        fflush(stdout);
    }
    while (state->step < steps) {
        stencil_step(rank, size);
        if (pause_us > 0)
            usleep((useconds_t)pause_us);
        if (every > 0 && state->step % every == 0 && state->step < steps) {
            MPIX_Checkpoint_info info;

            if (MPIX_Checkpoint(MPI_COMM_WORLD, &info) != MPI_SUCCESS)
                MPI_Abort(MPI_COMM_WORLD, 1);
            if (info.sequence == 0)
                continue; /* crs pheap, and no checkpoint was asked for */
            if (rank == 0) {
                printf("checkpoint %d at step %ld\n", info.sequence, state->step);
                fflush(stdout);
            }
            if (stop_at >= 0 && state->step >= stop_at && !restarted) {
                if (rank == 0) {
                    printf("stopped\n");
                    fflush(stdout);
                }
                for (;;)
                    pause(); /* until the job is killed */
            }
        }
    }

    /* A checksum of the whole rod: squares (the plain first moment is conserved by the
     * stencil, so it would not tell one step from another), weighted by position. */
    double local = 0.0, total = 0.0;
    for (int i = 1; i <= CELLS; i++)
        local += state->cells[i] * state->cells[i] * (double)(rank * CELLS + i);
    MPI_Reduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("steps %ld checksum %.9g\n", state->step, total);

    bclose();
    mclose();
    MPI_Finalize();
    return 0;
}
