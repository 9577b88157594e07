/*
 * inc.c: the checkpoint phases across the layers (inc.h).
 *
 * Every BTL here holds something CRIU cannot carry to another node or process (sm: a
 * shared segment mapped by other ranks' processes; tcp: sockets to other ranks), so the
 * BML releases every module before the dump and opens them again afterwards: the same
 * selection, modex and fence as in MPI_Init, for the same peers (continue) or for the new
 * locality (restart). The PML then takes each peer's limits from its new module.
 */
#include "config.h"

#include <stdlib.h>

#include "bml.h"
#include "crmpi_status.h"
#include "inc.h"
#include "log.h"
#include "mpi_internal.h"
#include "pml.h"

int crmpi_inc_pre_checkpoint(void)
{
    return crmpi_bml_finalize();
}

static int inc_transports_rebuild(void)
{
    char *unreach_msg = NULL;
    int rc = crmpi_bml_init(&crmpi_mpi_state.job, crmpi_mpi_state.rte_connected, &unreach_msg);

    if (rc == CRMPI_ERR_UNREACH)
        crmpi_log_error("inc: %s", unreach_msg ? unreach_msg : "a peer is unreachable");
    free(unreach_msg);
    if (rc == CRMPI_OK)
        crmpi_pml_cr_transports_changed();
    return rc;
}

int crmpi_inc_continue(void)
{
    return inc_transports_rebuild();
}
