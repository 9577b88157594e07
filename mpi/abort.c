/*
 * abort.c: MPI_Abort (MPI-3.1 section 8.7).
 */
#include "mpi_internal.h"

#pragma weak MPI_Abort = PMPI_Abort

int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    crmpi_lock();
    crmpi_mpi_require_active("MPI_Abort");
    /* The caller wants the job to end: an unusable communicator is no reason to refuse,
     * and like Open MPI every process of the job ends, not only those in comm (MPI-3.1
     * allows this). */
    if (!crmpi_mpi_comm_is_valid(comm)) {
        comm = MPI_COMM_WORLD;
    }
    /* No job message: mpirun's own line names the rank and the code already. */
    crmpi_rte_abort_job(errorcode, "MPI_Abort was called on communicator %s", comm->name);
}
