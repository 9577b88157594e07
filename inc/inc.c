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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bml.h"
#include "crmpi_status.h"
#include "inc.h"
#include "log.h"
#include "component.h"
#include "mpi_internal.h"
#include "param.h"
#include "pml.h"

extern char **environ;

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

/* The image's CRMPI_MCA_* environment gives way to the restart's, and every parameter is
 * read again from it. */
static int inc_params_replace(char *const *mca_env)
{
    static const char prefix[] = "CRMPI_MCA_";
    char **stale = NULL;
    size_t count = 0;
    int rc;

    for (char **e = environ; *e; e++)
        count += strncmp(*e, prefix, sizeof(prefix) - 1) == 0;
    stale = calloc(count + 1, sizeof(char *));
    if (!stale)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    count = 0;
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, prefix, sizeof(prefix) - 1) == 0)
            stale[count++] = strndup(*e, strcspn(*e, "="));
    }
    for (size_t i = 0; i < count; i++) {
        if (stale[i])
            unsetenv(stale[i]);
        free(stale[i]);
    }
    free(stale);
    for (char *const *e = mca_env; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        char *name;

        if (strncmp(*e, prefix, sizeof(prefix) - 1) != 0 || !eq)
            continue;
        name = strndup(*e, (size_t)(eq - *e));
        if (!name)
            return CRMPI_ERR_OUT_OF_RESOURCE;
        setenv(name, eq + 1, 1);
        free(name);
    }
    crmpi_param_finalize();
    rc = crmpi_catalog_register_all();
    bool check = true;
    if (rc == CRMPI_OK && crmpi_param_get_bool("mpi_param_check", &check) == CRMPI_OK)
        crmpi_mpi_state.param_check = check;
    return rc;
}

int crmpi_inc_restart(const crmpi_rte_job_info_t *job, char *const *mca_env)
{
    char who[32];
    int rc;

    rc = inc_params_replace(mca_env);
    if (rc != CRMPI_OK) {
        crmpi_log_error("inc: cannot take the restart's parameters (%s)", crmpi_strerror(rc));
        return rc;
    }
    crmpi_mpi_state.job = *crmpi_rte_job_info_replace(job);
    snprintf(who, sizeof(who), "rank %u", job->rank);
    crmpi_log_set_who(who);
    /* Every rank drained before the dump, and every rank restarts: all agree from 0. */
    rc = crmpi_pml_cr_reset_sequences();
    if (rc == CRMPI_OK)
        rc = inc_transports_rebuild();
    return rc;
}
