/*
 * particles.c: an application-like check: particles move on the periodic interval [0, 1)
 * cut into one slab per rank; after each step the particles that left a slab go to their
 * new owner with MPI_Alltoall (counts) and MPI_Alltoallv (the particles, as a struct
 * datatype). Each particle's trajectory depends only on its id, so the result is the same
 * under any correct MPI. The program checks itself (every particle in its owner's slab,
 * none lost or duplicated: MPI_Allreduce of counts and id sums, MPI_Gatherv of all of them
 * at the end) and prints lines test_coll.py compares with Open MPI's.
 *
 *   particles [PER_RANK [STEPS]]   (default 2000 particles per rank, 30 steps)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double x; /* position in [0, 1) */
    double v; /* velocity */
    long id;  /* unique */
    int hops; /* slabs changed so far */
} particle_t;

static int rank, size;

static int owner(double x)
{
    int o = (int)(x * size);
    return o >= size ? size - 1 : o;
}

/* x mod 1 for x >= 0 (no libm, so the programs build with any mpicc's defaults). */
static double wrap(double x)
{
    return x - (double)(long)x;
}

static int by_id(const void *a, const void *b)
{
    long x = ((const particle_t *)a)->id, y = ((const particle_t *)b)->id;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int failures = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int per_rank = argc > 1 ? atoi(argv[1]) : 2000;
    int steps = argc > 2 ? atoi(argv[2]) : 30;
    long total = (long)per_rank * size;

    /* The particle datatype: a struct of two doubles, a long and an int, resized to C's. */
    MPI_Datatype ptype, tmp;
    int lens[3] = {2, 1, 1};
    MPI_Aint displs[3] = {offsetof(particle_t, x), offsetof(particle_t, id),
                          offsetof(particle_t, hops)};
    MPI_Datatype types[3] = {MPI_DOUBLE, MPI_LONG, MPI_INT};
    MPI_Type_create_struct(3, lens, displs, types, &tmp);
    MPI_Type_create_resized(tmp, 0, sizeof(particle_t), &ptype);
    MPI_Type_commit(&ptype);
    MPI_Type_free(&tmp);

    /* Particle id i starts at a position spread by a hash, with a velocity from its id. */
    int cap = (int)total + 16, n = 0;
    particle_t *mine = malloc(cap * sizeof(particle_t));
    particle_t *out = malloc(cap * sizeof(particle_t));
    for (long id = 0; id < total; id++) {
        double x = wrap((double)((id * 2654435761u) % 1000003) / 1000003.0);
        if (owner(x) == rank) {
            mine[n].x = x;
            mine[n].v = ((double)((id * 40503) % 2001) - 1000.0) / 20000.0;
            mine[n].id = id;
            mine[n].hops = 0;
            n++;
        }
    }
    int *scount = calloc(size, sizeof(int)), *rcount = calloc(size, sizeof(int));
    int *sdispl = calloc(size, sizeof(int)), *rdispl = calloc(size, sizeof(int));
    for (int step = 0; step < steps; step++) {
        /* Move, then sort the particles by destination into `out`. */
        memset(scount, 0, size * sizeof(int));
        for (int i = 0; i < n; i++) {
            mine[i].x = wrap(mine[i].x + mine[i].v + 1.0);
            scount[owner(mine[i].x)]++;
        }
        for (int r = 0, pos = 0; r < size; r++) {
            sdispl[r] = pos;
            pos += scount[r];
        }
        int *fill = calloc(size, sizeof(int));
        for (int i = 0; i < n; i++) {
            int o = owner(mine[i].x);
            out[sdispl[o] + fill[o]] = mine[i];
            if (o != rank)
                out[sdispl[o] + fill[o]].hops++;
            fill[o]++;
        }
        free(fill);
        MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, MPI_COMM_WORLD);
        int incoming = 0;
        for (int r = 0; r < size; r++) {
            rdispl[r] = incoming;
            incoming += rcount[r];
        }
        MPI_Alltoallv(out, scount, sdispl, ptype, mine, rcount, rdispl, ptype, MPI_COMM_WORLD);
        n = incoming;
        for (int i = 0; i < n; i++) {
            if (owner(mine[i].x) != rank) {
                if (failures++ < 5)
                    printf("FAIL rank %d: step %d: particle %ld at %.6f is not in my slab\n", rank,
                           step, mine[i].id, mine[i].x);
            }
        }
        /* Conservation: the count and the id sum never change. */
        long local[2] = {n, 0}, global[2];
        for (int i = 0; i < n; i++)
            local[1] += mine[i].id;
        MPI_Allreduce(local, global, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (global[0] != total || global[1] != total * (total - 1) / 2) {
            if (failures++ < 5)
                printf("FAIL rank %d: step %d: %ld particles, id sum %ld (want %ld, %ld)\n", rank,
                       step, global[0], global[1], total, total * (total - 1) / 2);
        }
    }
    /* Everything to rank 0, in id order there, for a sum that does not depend on the MPI. */
    int *counts = malloc(size * sizeof(int)), *displs_all = malloc(size * sizeof(int));
    MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    particle_t *all = NULL;
    if (rank == 0) {
        int pos = 0;
        for (int r = 0; r < size; r++) {
            displs_all[r] = pos;
            pos += counts[r];
        }
        all = malloc((pos + 1) * sizeof(particle_t));
    }
    MPI_Gatherv(mine, n, ptype, all, counts, displs_all, ptype, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double xsum = 0.0;
        long hops = 0;
        qsort(all, total, sizeof(particle_t), by_id);
        for (long i = 0; i < total; i++) {
            if (all[i].id != i && failures++ < 5)
                printf("FAIL rank 0: particle %ld missing or duplicated\n", i);
            xsum += all[i].x;
            hops += all[i].hops;
        }
        printf("particles: %ld particles, %d ranks, %d steps\n", total, size, steps);
        printf("particles: position sum %.9f, slab changes %ld\n", xsum, hops);
        free(all);
    }
    MPI_Type_free(&ptype);
    free(mine), free(out), free(scount), free(rcount), free(sdispl), free(rdispl), free(counts);
    free(displs_all);
    MPI_Finalize();
    return failures ? 1 : 0;
}
