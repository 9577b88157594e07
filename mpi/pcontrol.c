/*
 * pcontrol.c: MPI_Pcontrol (MPI-3.1 section 14.2.4), the application's hint to a profiling
 * library (level 0: stop profiling, 1: normal, 2: flush, others the tool's).
 *
 * crmpi profiles nothing itself, so the call does nothing and returns MPI_SUCCESS, which
 * is what the standard asks of an MPI library without a profiling layer. A tool that
 * interposes MPI_Pcontrol sees the call; this definition is only the fallback. It touches
 * no library state, so it takes no lock and needs no MPI_Init.
 */
#include "mpi.h"

#pragma weak MPI_Pcontrol = PMPI_Pcontrol

int PMPI_Pcontrol(const int level, ...)
{
    (void)level;
    return MPI_SUCCESS;
}
