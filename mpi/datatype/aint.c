/*
 * aint.c: MPI_Aint_add and MPI_Aint_diff (MPI-3.1 section 4.1.5), the portable address
 * arithmetic for displacements of MPI_Get_address's results.
 *
 * An MPI_Aint here is a flat byte address as wide as a pointer, so both are the integer
 * sum and difference. They are computed modulo 2^N, as the hardware does with addresses,
 * because signed overflow would be undefined in C. Neither touches library state: they
 * take no lock and, like MPI_Wtime, work before MPI_Init and after MPI_Finalize.
 */
#include <stdint.h>

#include "mpi.h"

#pragma weak MPI_Aint_add = PMPI_Aint_add
#pragma weak MPI_Aint_diff = PMPI_Aint_diff

MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}
