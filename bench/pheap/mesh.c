/*
 * mesh.c: a hydrodynamics-like proxy (a 2-D stencil over a mesh of cells, in the spirit of
 * LULESH) checkpointed three ways, for bench/pheap/run.sh.
 *
 * Each rank owns a band of rows of a 2-D mesh of cells (density, energy, two momenta: 32
 * bytes a cell, 1024 cells a row), MIB mebibytes in all. A step exchanges the band's edge
 * rows with both neighbours (MPI_Sendrecv), agrees on the time step (MPI_Allreduce, as a
 * Courant condition does) and updates every cell from its four neighbours in place (a
 * diffusion plus a pressure-gradient term). The mesh is allocated with malloc or, with -a
 * perm, with perm_malloc in the rank's persistent heap; every -c steps it is checkpointed
 * one of these ways (-w):
 *
 *   hand   each rank fwrite()s its step count and band to DIR/mesh.<rank>.ckpt.partial,
 *          fsyncs it, renames it over DIR/mesh.<rank>.ckpt, fsyncs DIR, then waits for
 *          the others (MPI_Barrier: the job's checkpoint is whole only once every rank's
 *          file is); a run with -r reads the files back
 *   pheap  MPIX_Checkpoint: each rank backs up its heap (DIR/mesh.<rank>.back) and the
 *          job's snapshot stores the backups; needs -a perm; a run that ompi-restart
 *          started restores the heap
 *   none   no checkpoint code; with -s SYNC, rank 0 creates SYNC/at.<j> when step j*EVERY
 *          is done, for a driver that runs ompi-checkpoint (a transparent CRIU checkpoint)
 *          meanwhile, and the ranks wait for SYNC/stop before they end
 *
 * The checkpoint code of each way sits between "ckpt:<way>" and "end" comments, so that
 * run.sh counts the lines each way adds to the application.
 *
 *   mpirun --with-ft cr -np N mesh -m MIB -n STEPS [-c EVERY] [-w hand|pheap|none]
 *                                  [-a malloc|perm] [-d DIR] [-H HEAPDIR] [-s SYNC] [-r]
 *
 * Rank 0 prints, at the end:
 *   ckpt <j> step <s> blocked <seconds>   per checkpoint of -w hand or pheap: the longest
 *                                         time a rank spent in the checkpoint code
 *   steps <n> seconds <t> steps/s <r> checkpoint-seconds <c> checksum <x>
 * where t is the whole step loop (checkpoints included) and r excludes the checkpoints.
 */
#include <mpi.h>
#include <mpi-ext.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <crmpi/pheap.h>

#define MESH_ROW_CELLS 1024

/* One cell of the mesh: what a hydro code carries per zone. */
typedef struct mesh_cell {
    double rho;    /* density */
    double energy; /* specific internal energy */
    double mom_x;  /* momentum, x component */
    double mom_y;  /* momentum, y component */
} mesh_cell_t;

/* Everything a rank needs to go on; in the persistent heap with -a perm. */
typedef struct mesh_state {
    long step;          /* steps completed */
    long rows;          /* rows owned by the rank */
    double dt;          /* the time step the next step uses */
    mesh_cell_t *cells; /* (rows + 2) * MESH_ROW_CELLS: a ghost row above and below */
} mesh_state_t;

PERM mesh_state_t *state; /* persistent: saved and restored with the heap */

static double mesh_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double mesh_pressure(const mesh_cell_t *c)
{
    return 0.4 * c->rho * c->energy;
}

/* A blob of dense, hot gas in the middle of the whole mesh, at rest. */
static void mesh_init(int rank, int size)
{
    long global_rows = state->rows * size;

    for (long r = 0; r < state->rows + 2; r++) {
        mesh_cell_t *row = &state->cells[r * MESH_ROW_CELLS];
        double y = (double)(rank * state->rows + r - 1) / (double)global_rows - 0.5;

        for (long x = 0; x < MESH_ROW_CELLS; x++) {
            double dx = (double)x / MESH_ROW_CELLS - 0.5;
            int inside = dx * dx + y * y < 0.04;

            row[x] = (mesh_cell_t){.rho = inside ? 2.0 : 1.0, .energy = inside ? 2.5 : 1.0};
        }
    }
}

/*
 * One step: halo rows, the time step, then an in-place sweep. Row r is computed from the
 * old rows r-1 (kept in `above`), r (copied to `here` before it is overwritten) and r+1
 * (not yet updated), so the state is the mesh alone and the scratch is two rows.
 */
static void mesh_step(int rank, int size, mesh_cell_t *above, mesh_cell_t *here)
{
    const long n = MESH_ROW_CELLS, rows = state->rows;
    const int count = (int)(n * sizeof(mesh_cell_t) / sizeof(double));
    int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    mesh_cell_t *cells = state->cells;
    double speed = 0.0, dt = state->dt;

    MPI_Sendrecv(&cells[n], count, MPI_DOUBLE, up, 1, &cells[(rows + 1) * n], count, MPI_DOUBLE,
                 down, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&cells[rows * n], count, MPI_DOUBLE, down, 2, &cells[0], count, MPI_DOUBLE, up, 2,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (up == MPI_PROC_NULL) /* reflecting walls at the top and bottom of the mesh */
        memcpy(&cells[0], &cells[n], n * sizeof(mesh_cell_t));
    if (down == MPI_PROC_NULL)
        memcpy(&cells[(rows + 1) * n], &cells[rows * n], n * sizeof(mesh_cell_t));

    memcpy(above, &cells[0], n * sizeof(mesh_cell_t));
    for (long r = 1; r <= rows; r++) {
        mesh_cell_t *row = &cells[r * n], *below = &cells[(r + 1) * n], *swap;

        memcpy(here, row, n * sizeof(mesh_cell_t));
        for (long x = 0; x < n; x++) {
            const mesh_cell_t *c = &here[x], *no = &above[x], *so = &below[x];
            const mesh_cell_t *we = &here[x > 0 ? x - 1 : x], *ea = &here[x < n - 1 ? x + 1 : x];
            double div = (ea->mom_x - we->mom_x) + (so->mom_y - no->mom_y);
            mesh_cell_t *out = &row[x];

            out->rho = c->rho + 0.2 * (no->rho + so->rho + we->rho + ea->rho - 4 * c->rho) -
                       0.25 * dt * div;
            out->energy =
                c->energy +
                0.2 * (no->energy + so->energy + we->energy + ea->energy - 4 * c->energy) -
                0.25 * dt * mesh_pressure(c) * div / c->rho;
            out->mom_x = c->mom_x +
                         0.2 * (no->mom_x + so->mom_x + we->mom_x + ea->mom_x - 4 * c->mom_x) -
                         0.25 * dt * (mesh_pressure(ea) - mesh_pressure(we));
            out->mom_y = c->mom_y +
                         0.2 * (no->mom_y + so->mom_y + we->mom_y + ea->mom_y - 4 * c->mom_y) -
                         0.25 * dt * (mesh_pressure(so) - mesh_pressure(no));
            double v = (fabs(out->mom_x) + fabs(out->mom_y)) / out->rho;
            if (v > speed)
                speed = v;
        }
        swap = above;
        above = here;
        here = swap;
    }
    double local_dt = 0.5 / (1.0 + speed);
    MPI_Allreduce(&local_dt, &state->dt, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    state->step++;
}

/* Rank 0 creates SYNC/name (an empty file) for the driver. */
static void mesh_signal(int rank, const char *sync, const char *name)
{
    char path[4096];

    if (rank != 0)
        return;
    snprintf(path, sizeof(path), "%s/%s", sync, name);
    int fd = open(path, O_WRONLY | O_CREAT, 0600);
    if (fd < 0 || close(fd) != 0) {
        fprintf(stderr, "mesh: %s: %s\n", path, strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Until the driver creates SYNC/stop; rank 0 looks and tells the others. */
static void mesh_wait_stop(int rank, const char *sync)
{
    char path[4096];
    int stop = 0;

    snprintf(path, sizeof(path), "%s/stop", sync);
    for (;;) {
        if (rank == 0)
            stop = access(path, F_OK) == 0;
        MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (stop)
            return;
        usleep(2000);
    }
}

static void mesh_usage(int rank, const char *prog)
{
    if (rank == 0)
        fprintf(stderr,
                "usage: %s -m MIB -n STEPS [-c EVERY] [-w hand|pheap|none] [-a malloc|perm] "
                "[-d DIR] [-H HEAPDIR] [-s SYNC] [-r]\n",
                prog);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv)
{
    long mib = 4, steps = 10, every = 0;
    const char *way = "none", *alloc = "malloc", *dir = ".", *heap_dir = NULL, *sync = NULL;
    int rank, size, opt, hand_restart = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    while ((opt = getopt(argc, argv, "m:n:c:w:a:d:H:s:r")) != -1) {
        switch (opt) {
        case 'm': mib = atol(optarg); break;
        case 'n': steps = atol(optarg); break;
        case 'c': every = atol(optarg); break;
        case 'w': way = optarg; break;
        case 'a': alloc = optarg; break;
        case 'd': dir = optarg; break;
        case 'H': heap_dir = optarg; break;
        case 's': sync = optarg; break;
        case 'r': hand_restart = 1; break;
        default: mesh_usage(rank, argv[0]);
        }
    }
    int use_hand = strcmp(way, "hand") == 0, use_pheap = strcmp(way, "pheap") == 0;
    int use_perm = strcmp(alloc, "perm") == 0;
    if (mib <= 0 || steps <= 0 || every < 0 || (!use_hand && !use_pheap && strcmp(way, "none")) ||
        (!use_perm && strcmp(alloc, "malloc")) || (use_pheap && !use_perm))
        mesh_usage(rank, argv[0]);
    long rows = mib * 1024 * 1024 / (MESH_ROW_CELLS * (long)sizeof(mesh_cell_t));
    size_t mesh_bytes = (size_t)(rows + 2) * MESH_ROW_CELLS * sizeof(mesh_cell_t);
    int restarted = 0;

    if (use_perm) {
        /* ckpt:pheap */
        char heap[4096], back[4096];
        int seq;
        snprintf(heap, sizeof(heap), "%s/mesh.%d.heap", heap_dir ? heap_dir : dir, rank);
        snprintf(back, sizeof(back), "%s/mesh.%d.back", dir, rank);
        MPIX_Restart_status(&restarted, &seq);
        if (perm(PERM_START, PERM_SIZE) != 0 || mopen(heap, "w+", mesh_bytes + (4 << 20)) != 0)
            MPI_Abort(MPI_COMM_WORLD, 1); /* the library said why */
        if (use_pheap && bopen(back, restarted ? "r+" : "w+") != 0)
            MPI_Abort(MPI_COMM_WORLD, 1);
        if (restarted && restore() != 0)
            MPI_Abort(MPI_COMM_WORLD, 1);
        /* end */
    }
    if (!restarted) {
        state = use_perm ? perm_malloc(sizeof(*state)) : malloc(sizeof(*state));
        mesh_cell_t *cells = use_perm ? perm_malloc(mesh_bytes) : malloc(mesh_bytes);
        if (!state || !cells) {
            fprintf(stderr, "mesh: rank %d: no memory for %zu bytes\n", rank, mesh_bytes);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        *state = (mesh_state_t){.step = 0, .rows = rows, .dt = 0.1, .cells = cells};
        mesh_init(rank, size);
    }
    /* ckpt:hand */
    char ckpt_path[4096], partial_path[4096];
    snprintf(ckpt_path, sizeof(ckpt_path), "%s/mesh.%d.ckpt", dir, rank);
    snprintf(partial_path, sizeof(partial_path), "%s/mesh.%d.ckpt.partial", dir, rank);
    /* end */
    if (use_hand && hand_restart) {
        /* ckpt:hand */
        FILE *in = fopen(ckpt_path, "r");
        mesh_state_t header;
        long first, last;
        if (!in || fread(&header, sizeof(header), 1, in) != 1 || header.rows != state->rows ||
            fread(state->cells, mesh_bytes, 1, in) != 1) {
            fprintf(stderr, "mesh: rank %d: cannot read %s (%s)\n", rank, ckpt_path,
                    in && !ferror(in) ? "short or of another size" : strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        fclose(in);
        MPI_Allreduce(&header.step, &first, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(&header.step, &last, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
        if (first != last) { /* a rank died between the others' renames and its own */
            if (rank == 0)
                fprintf(stderr, "mesh: the checkpoint files hold steps %ld to %ld\n", first, last);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        state->step = header.step;
        state->dt = header.dt;
        /* end */
        if (rank == 0)
            printf("restarted at step %ld\n", state->step);
    } else if (restarted && rank == 0) {
        printf("restarted at step %ld\n", state->step);
    }

    mesh_cell_t *above = malloc(MESH_ROW_CELLS * sizeof(mesh_cell_t));
    mesh_cell_t *here = malloc(MESH_ROW_CELLS * sizeof(mesh_cell_t));
    if (!above || !here)
        MPI_Abort(MPI_COMM_WORLD, 1);
    double ckpt_total = 0.0;
    int ckpts = 0;

    long first_step = state->step;
    MPI_Barrier(MPI_COMM_WORLD);
    double start = mesh_now();
    while (state->step < steps) {
        mesh_step(rank, size, above, here);
        if (every == 0 || state->step % every != 0 || state->step >= steps)
            continue;
        double ckpt_start = mesh_now(), blocked, longest;
        if (use_hand) {
            /* ckpt:hand */
            FILE *out = fopen(partial_path, "w");
            if (!out || fwrite(state, sizeof(*state), 1, out) != 1 ||
                fwrite(state->cells, mesh_bytes, 1, out) != 1 || fflush(out) != 0 ||
                fsync(fileno(out)) != 0 || fclose(out) != 0 || rename(partial_path, ckpt_path)) {
                fprintf(stderr, "mesh: rank %d: %s: %s\n", rank, partial_path, strerror(errno));
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            int dir_fd = open(dir, O_RDONLY | O_DIRECTORY);
            if (dir_fd < 0 || fsync(dir_fd) != 0 || close(dir_fd) != 0) {
                fprintf(stderr, "mesh: rank %d: fsync %s: %s\n", rank, dir, strerror(errno));
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            /* end */
        } else if (use_pheap) {
            /* ckpt:pheap */
            MPIX_Checkpoint_info info;
            if (MPIX_Checkpoint(MPI_COMM_WORLD, &info) != MPI_SUCCESS)
                MPI_Abort(MPI_COMM_WORLD, 1);
            /* end */
        } else {
            char name[64];

            snprintf(name, sizeof(name), "at.%ld", state->step / every);
            if (sync)
                mesh_signal(rank, sync, name);
            continue;
        }
        blocked = mesh_now() - ckpt_start;
        MPI_Reduce(&blocked, &longest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        ckpt_total += blocked;
        ckpts++;
        if (rank == 0)
            printf("ckpt %d step %ld blocked %.4f\n", ckpts, state->step, longest);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double seconds = mesh_now() - start;
    if (sync)
        mesh_wait_stop(rank, sync);

    /* Checksum: density weighted by position, and the energy (the proxy need not conserve). */
    double local = 0.0, total = 0.0, ckpt_longest = 0.0;
    for (long r = 1; r <= state->rows; r++)
        for (long x = 0; x < MESH_ROW_CELLS; x++) {
            const mesh_cell_t *c = &state->cells[r * MESH_ROW_CELLS + x];
            local += c->rho * (double)((rank * state->rows + r) % 97 + x % 89) + c->energy;
        }
    MPI_Reduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&ckpt_total, &ckpt_longest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("steps %ld seconds %.4f steps/s %.3f checkpoint-seconds %.4f checksum %.12g\n",
               state->step, seconds, (double)(state->step - first_step) / (seconds - ckpt_longest),
               ckpt_longest, total);
    free(here);
    free(above);
    if (use_perm) {
        if (use_pheap)
            bclose();
        mclose();
    } else {
        free(state->cells);
        free(state);
    }
    MPI_Finalize();
    return 0;
}
