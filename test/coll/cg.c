/*
 * cg.c: an application-like check: the conjugate-gradient solution of a 1-D Poisson
 * Helmholtz-like problem (tridiagonal -1, 2.05, -1: well conditioned) distributed in uneven row
 * blocks, with halo exchange by MPI_Sendrecv and every dot product by MPI_Allreduce (one value, and
 * two fused). The right-hand side is made from a known solution, so the program checks itself; it
 * prints lines that must be the same under any correct MPI (test_coll.py compares them
 * with Open MPI's): convergence, and the solution rounded far above the rounding
 * differences of reduction orders (the iteration count itself may differ by one).
 *
 *   cg [N]   (default 3000 unknowns)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size;
static int n_local, first; /* my rows: first .. first + n_local - 1 */
static int n_global;

/* y = A x for my rows; x has one halo cell at each end (x[0], x[n_local + 1]). */
static void matvec(double *x, double *y)
{
    int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;

    x[0] = 0.0;
    x[n_local + 1] = 0.0;
    MPI_Sendrecv(&x[1], 1, MPI_DOUBLE, left, 1, &x[n_local + 1], 1, MPI_DOUBLE, right, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&x[n_local], 1, MPI_DOUBLE, right, 2, &x[0], 1, MPI_DOUBLE, left, 2,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 1; i <= n_local; i++)
        y[i] = 2.05 * x[i] - x[i - 1] - x[i + 1];
}

static double dot(const double *a, const double *b)
{
    double local = 0.0, global;

    for (int i = 1; i <= n_local; i++)
        local += a[i] * b[i];
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return global;
}

int main(int argc, char **argv)
{
    int iters = 0, failures = 0;
    double tol = 1e-10;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    n_global = argc > 1 ? atoi(argv[1]) : 3000;
    /* Uneven blocks: rank r gets a share proportional to r + 1. */
    {
        long weight_total = (long)size * (size + 1) / 2, before = 0;
        for (int r = 0; r < rank; r++)
            before += r + 1;
        first = (int)(n_global * before / weight_total);
        n_local = (int)(n_global * (before + rank + 1) / weight_total) - first;
    }
    double *x = calloc(n_local + 2, sizeof(double)), *b = calloc(n_local + 2, sizeof(double));
    double *r = calloc(n_local + 2, sizeof(double)), *p = calloc(n_local + 2, sizeof(double));
    double *ap = calloc(n_local + 2, sizeof(double)), *exact = calloc(n_local + 2, sizeof(double));

    /* b = A exact, exact a smooth function. */
    for (int i = 1; i <= n_local; i++) {
        double t = (double)(first + i) / (n_global + 1);
        exact[i] = t * (1.0 - t) * (3.0 + t) + 0.5 * t;
    }
    matvec(exact, b);
    for (int i = 1; i <= n_local; i++) {
        r[i] = b[i];
        p[i] = r[i];
    }
    double rr = dot(r, r), bb = rr;
    while (iters < 4 * n_global && rr > tol * tol * bb) {
        matvec(p, ap);
        double alpha = rr / dot(p, ap);
        for (int i = 1; i <= n_local; i++) {
            x[i] += alpha * p[i];
            r[i] -= alpha * ap[i];
        }
        /* The new residual norm and a second sum, fused into one Allreduce of two. */
        double local[2] = {0.0, 0.0}, global[2];
        for (int i = 1; i <= n_local; i++) {
            local[0] += r[i] * r[i];
            local[1] += (r[i] < 0 ? -r[i] : r[i]);
        }
        MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        double rr_new = global[0];
        for (int i = 1; i <= n_local; i++)
            p[i] = r[i] + rr_new / rr * p[i];
        rr = rr_new;
        iters++;
    }
    /* The error against the known solution, and the solution's sum, reduced at rank 0. */
    double local_err = 0.0, err, local_sum = 0.0, sum;
    for (int i = 1; i <= n_local; i++) {
        double e = x[i] > exact[i] ? x[i] - exact[i] : exact[i] - x[i];
        if (e > local_err)
            local_err = e;
        local_sum += x[i];
    }
    MPI_Reduce(&local_err, &err, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&local_sum, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Bcast(&err, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (err > 1e-5) {
        printf("FAIL rank %d: cg: max error %.3e against the known solution\n", rank, err);
        failures++;
    }
    if (rank == 0) {
        printf("cg: n %d, converged %s, in fewer than 200 iterations: %s\n", n_global,
               rr <= tol * tol * bb ? "yes" : "no", iters < 200 ? "yes" : "no");
        printf("cg: solution sum %.6f, error below 1e-5: %s\n", sum, err <= 1e-5 ? "yes" : "no");
    }
    free(x), free(b), free(r), free(p), free(ap), free(exact);
    MPI_Finalize();
    return failures ? 1 : 0;
}
