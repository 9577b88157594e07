/*
 * stencil.c: an application-like check: Jacobi iterations of the 2-D Laplace equation on an
 * N x N grid (fixed boundary: 1 on the top edge, 0 elsewhere), the grid split in blocks over
 * a 2-D Cartesian communicator (MPI_Dims_create, MPI_Cart_create, MPI_Cart_shift,
 * MPI_Cart_coords), with halo exchange by MPI_Sendrecv (rows contiguous, columns through a
 * vector datatype) and the residual by MPI_Allreduce every 10 iterations.
 *
 * Jacobi updates do not depend on the order of any reduction, so the field is bitwise the
 * same under any correct MPI and any process count; the program checks the grid's symmetry
 * (the problem is symmetric about the vertical middle line) and prints lines that
 * test_coll.py compares with Open MPI's: the iteration count and the sum of the field
 * rounded far above the rounding differences of the residual's reduction order.
 *
 *   stencil [N] [ITERATIONS]   (default 32 x 32, at most 4000 iterations)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* No libm: the test programs are built with plain mpicc. */
static double dabs(double x)
{
    return x < 0 ? -x : x;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 32, max_iter = argc > 2 ? atoi(argv[2]) : 4000;
    int rank, size, dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];
    int up, down, left, right, iter, bad = 0;
    MPI_Comm cart;
    MPI_Datatype column;

    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Dims_create(size, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Comm_rank(cart, &rank);
    MPI_Cart_coords(cart, rank, 2, coords);
    MPI_Cart_shift(cart, 0, 1, &up, &down);
    MPI_Cart_shift(cart, 1, 1, &left, &right);

    /* My block of interior points: rows [r0, r0 + nr), columns [c0, c0 + nc). */
    int nr = n / dims[0] + (coords[0] < n % dims[0]);
    int r0 = coords[0] * (n / dims[0]) + (coords[0] < n % dims[0] ? coords[0] : n % dims[0]);
    int nc = n / dims[1] + (coords[1] < n % dims[1]);
    int c0 = coords[1] * (n / dims[1]) + (coords[1] < n % dims[1] ? coords[1] : n % dims[1]);
    int w = nc + 2; /* row length with the halo columns */
    double *u = calloc((size_t)(nr + 2) * w, sizeof(double));
    double *v = calloc((size_t)(nr + 2) * w, sizeof(double));
#define AT(a, i, j) (a)[(size_t)(i)*w + (j)]

    MPI_Type_vector(nr, 1, w, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);
    /* The top boundary (global row -1) is 1: the halo row of the blocks on the top edge. */
    if (up == MPI_PROC_NULL)
        for (int j = 0; j < w; j++)
            AT(u, 0, j) = AT(v, 0, j) = 1.0;

    double residual = 1.0;
    for (iter = 0; iter < max_iter && residual > 1e-6; iter++) {
        MPI_Sendrecv(&AT(u, 1, 1), nc, MPI_DOUBLE, up, 1, &AT(u, nr + 1, 1), nc, MPI_DOUBLE, down,
                     1, cart, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&AT(u, nr, 1), nc, MPI_DOUBLE, down, 2, &AT(u, 0, 1), nc, MPI_DOUBLE, up, 2,
                     cart, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&AT(u, 1, 1), 1, column, left, 3, &AT(u, 1, nc + 1), 1, column, right, 3, cart,
                     MPI_STATUS_IGNORE);
        MPI_Sendrecv(&AT(u, 1, nc), 1, column, right, 4, &AT(u, 1, 0), 1, column, left, 4, cart,
                     MPI_STATUS_IGNORE);
        double local = 0.0;
        for (int i = 1; i <= nr; i++) {
            for (int j = 1; j <= nc; j++) {
                AT(v, i, j) =
                    0.25 * (AT(u, i - 1, j) + AT(u, i + 1, j) + AT(u, i, j - 1) + AT(u, i, j + 1));
                if (dabs(AT(v, i, j) - AT(u, i, j)) > local)
                    local = dabs(AT(v, i, j) - AT(u, i, j));
            }
        }
        double *t = u;
        u = v;
        v = t;
        if (iter % 10 == 9)
            MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_MAX, cart);
    }

    /* The whole grid on rank 0, to check symmetry and sum it in one fixed order. */
    double *grid = rank == 0 ? calloc((size_t)n * n, sizeof(double)) : NULL;
    double *block = malloc((size_t)nr * nc * sizeof(double));
    for (int i = 0; i < nr; i++)
        for (int j = 0; j < nc; j++)
            block[i * nc + j] = AT(u, i + 1, j + 1);
    if (rank == 0) {
        for (int src = 0; src < size; src++) {
            int c[2], bnr, br0, bnc, bc0;
            MPI_Cart_coords(cart, src, 2, c);
            bnr = n / dims[0] + (c[0] < n % dims[0]);
            br0 = c[0] * (n / dims[0]) + (c[0] < n % dims[0] ? c[0] : n % dims[0]);
            bnc = n / dims[1] + (c[1] < n % dims[1]);
            bc0 = c[1] * (n / dims[1]) + (c[1] < n % dims[1] ? c[1] : n % dims[1]);
            double *b = src == 0 ? block : malloc((size_t)bnr * bnc * sizeof(double));
            if (src != 0)
                MPI_Recv(b, bnr * bnc, MPI_DOUBLE, src, 5, cart, MPI_STATUS_IGNORE);
            for (int i = 0; i < bnr; i++)
                for (int j = 0; j < bnc; j++)
                    grid[(size_t)(br0 + i) * n + bc0 + j] = b[i * bnc + j];
            if (src != 0)
                free(b);
        }
        double sum = 0.0;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                sum += grid[(size_t)i * n + j];
                bad |= dabs(grid[(size_t)i * n + j] - grid[(size_t)i * n + n - 1 - j]) > 1e-12;
            }
        }
        if (bad)
            printf("FAIL stencil: the field is not symmetric\n");
        printf("stencil: %dx%d grid on %dx%d ranks, %d iterations, residual below 1e-6: %s\n", n, n,
               dims[0], dims[1], iter, residual <= 1e-6 ? "yes" : "no");
        printf("stencil: field sum %.6f\n", sum);
        free(grid);
    } else {
        MPI_Send(block, nr * nc, MPI_DOUBLE, 0, 5, cart);
    }
    (void)r0;
    (void)c0;
    free(block);
    free(u);
    free(v);
    MPI_Type_free(&column);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return bad;
}
