/*
 * finalize.c: MPI_Finalize (MPI-3.1 section 8.7): the end of the World Model, and of the
 * library's instance unless a session still uses it (MPI-4.0 section 11.3).
 */
#include <stdio.h>

#include "crmpi_status.h"
#include "mpi_internal.h"
#include "comm_internal.h"
#include "pml.h"
#include "coll.h"
#include "snapc.h"

#pragma weak MPI_Finalize = PMPI_Finalize

int PMPI_Finalize(void)
{
    static const char func_name[] = "MPI_Finalize";

    crmpi_lock();
    /* The World Model's end: a process that only used sessions has none to finalize. */
    if (!crmpi_mpi_state.initialized || crmpi_mpi_state.finalized)
        crmpi_mpi_fail_inactive(func_name);
    /* First, as if MPI_COMM_SELF were freed, its attributes are deleted while MPI is still
     * usable: their delete callbacks run, last set first (MPI-3.1 section 8.7.1). */
    int err = crmpi_attr_delete_all(MPI_COMM_SELF);
    if (err != MPI_SUCCESS)
        return crmpi_mpi_errhandler_invoke(
            MPI_COMM_SELF, err, func_name,
            "a delete callback of MPI_COMM_SELF's attributes failed");
    crmpi_mpi_state.finalized = true;
    /* Open sessions keep the instance (MPI-4.0 section 11.3); the last of them ends it. */
    if (crmpi_mpi_state.sessions == 0) {
        int rc = crmpi_mpi_instance_end();
        if (rc != CRMPI_OK) {
            char detail[128];
            snprintf(detail, sizeof(detail), "leaving the job failed (%s)", crmpi_strerror(rc));
            return crmpi_mpi_errhandler_invoke(MPI_COMM_WORLD, MPI_ERR_OTHER, func_name, detail);
        }
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}
