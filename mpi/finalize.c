/*
 * finalize.c: MPI_Finalize (MPI-3.1 section 8.7).
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
    crmpi_mpi_require_active(func_name);
    /* First, as if MPI_COMM_SELF were freed, its attributes are deleted while MPI is still
     * usable: their delete callbacks run, last set first (MPI-3.1 section 8.7.1). */
    int err = crmpi_attr_delete_all(MPI_COMM_SELF);
    if (err != MPI_SUCCESS)
        return crmpi_mpi_errhandler_invoke(
            MPI_COMM_SELF, err, func_name,
            "a delete callback of MPI_COMM_SELF's attributes failed");
    /* No checkpoint may start once Finalize has begun; one in progress ends first (it
     * needs the lock). */
    crmpi_unlock();
    crmpi_snapc_app_finalize();
    crmpi_lock();
    /* Finalized even if leaving the job fails: MPI cannot be used afterwards either way,
     * and the agent connection is gone. */
    crmpi_mpi_state.finalized = true;
    crmpi_coll_comm_destroy(crmpi_mpi_comm_self.comm.coll);
    crmpi_coll_comm_destroy(crmpi_mpi_comm_world.comm.coll);
    crmpi_mpi_comm_self.comm.coll = crmpi_mpi_comm_world.comm.coll = NULL;
    /* Buffered and freed sends on them may still move data: the PML keeps what they need
     * until crmpi_pml_finalize has completed them. */
    crmpi_pml_del_comm(crmpi_mpi_comm_self.comm.pml);
    crmpi_pml_del_comm(crmpi_mpi_comm_world.comm.pml);
    crmpi_mpi_comm_self.comm.pml = crmpi_mpi_comm_world.comm.pml = NULL;
    crmpi_pml_finalize();
    if (crmpi_rte_connected()) {
        int rc = crmpi_rte_finalize();
        if (rc != CRMPI_OK) {
            char detail[128];
            snprintf(detail, sizeof(detail), "leaving the job failed (%s)", crmpi_strerror(rc));
            return crmpi_mpi_errhandler_invoke(MPI_COMM_WORLD, MPI_ERR_OTHER, func_name, detail);
        }
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}
