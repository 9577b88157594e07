/*
 * wtime.c: MPI_Wtime and MPI_Wtick (MPI-3.1 section 8.6).
 *
 * CLOCK_MONOTONIC: elapsed time must not jump when NTP or an administrator sets the wall
 * clock. The clock is local (MPI_WTIME_IS_GLOBAL is false): compare times of one process.
 * Neither call touches library state, so they take no lock and, like in Open MPI and MPICH,
 * work before MPI_Init (applications time their own start-up that way).
 */
#include <time.h>

#include "mpi_internal.h"

#pragma weak MPI_Wtime = PMPI_Wtime
#pragma weak MPI_Wtick = PMPI_Wtick

double PMPI_Wtime(void)
{
    struct timespec now;

    /* Cannot fail for CLOCK_MONOTONIC with a valid pointer (clock_gettime(2)). */
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

double PMPI_Wtick(void)
{
    struct timespec resolution;

    clock_getres(CLOCK_MONOTONIC, &resolution);
    return (double)resolution.tv_sec + (double)resolution.tv_nsec * 1e-9;
}
