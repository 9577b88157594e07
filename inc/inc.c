/*
 * inc.c: the checkpoint phases across the layers (inc.h).
 *
 * A BTL module that is not checkpoint-friendly holds something CRIU cannot carry to
 * another node or process (sm: a shared segment mapped by other ranks' processes; tcp:
 * sockets to other ranks), so the BML releases it before the dump and opens it again
 * afterwards with the same selection, modex and fence as in MPI_Init; a friendly module
 * (self) stays as it is. A restart closes every module and selects them again for the new
 * locality and parameters. The PML then takes each peer's limits from its new module.
 */
#include "config.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bml.h"
#include "crmpi_status.h"
#include "inc.h"
#include "log.h"
#include "component.h"
#include "param.h"
#include "pml.h"

extern char **environ;

/* Upper bound on hooks: the MPI layer's, and a few for applications' callbacks. */
enum { INC_MAX_HOOKS = 8 };

static crmpi_inc_hook_fn_t inc_hooks[INC_MAX_HOOKS];
static size_t inc_num_hooks;
static crmpi_inc_veto_fn_t inc_vetoes[INC_MAX_HOOKS];
static size_t inc_num_vetoes;

int crmpi_inc_register(crmpi_inc_hook_fn_t hook)
{
    if (inc_num_hooks == INC_MAX_HOOKS)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    inc_hooks[inc_num_hooks++] = hook;
    return CRMPI_OK;
}

int crmpi_inc_register_veto(crmpi_inc_veto_fn_t veto)
{
    if (inc_num_vetoes == INC_MAX_HOOKS)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    inc_vetoes[inc_num_vetoes++] = veto;
    return CRMPI_OK;
}

const char *crmpi_inc_refusal(void)
{
    for (size_t i = 0; i < inc_num_vetoes; i++) {
        const char *why = inc_vetoes[i]();

        if (why)
            return why;
    }
    return NULL;
}

/* The hooks of the layers above, after INC's own work of `phase` succeeded. */
static int inc_hooks_run(crmpi_inc_phase_t phase, int rc)
{
    for (size_t i = 0; i < inc_num_hooks && rc == CRMPI_OK; i++)
        rc = inc_hooks[i](phase);
    return rc;
}

int crmpi_inc_pre_checkpoint(void)
{
    int rc = crmpi_bml_cr_release();

#ifdef __GLIBC__
    /* Give what the released transports freed back to the kernel before CRIU dumps the
     * rank. Freeing a large mapped block raises glibc's mmap threshold (mallopt(3),
     * M_MMAP_THRESHOLD), so the buffers a transport allocates when it is built again
     * (libfabric's: about 90 MB a rank) come from the heap instead, and once freed at the
     * next checkpoint they stay resident and are dumped with it, and with every later one.
     * malloc_trim(3) releases the free pages of every arena. */
    if (rc == CRMPI_OK)
        malloc_trim(0);
#endif
    return inc_hooks_run(CRMPI_INC_PHASE_PRE_CHECKPOINT, rc);
}

/* The BML has opened modules again (`rc` says how that went): the PML takes the peers'
 * limits from them. */
static int inc_transports_changed(int rc, char *unreach_msg)
{
    if (rc == CRMPI_ERR_UNREACH)
        crmpi_log_error("inc: %s", unreach_msg ? unreach_msg : "a peer is unreachable");
    free(unreach_msg);
    if (rc == CRMPI_OK)
        crmpi_pml_cr_transports_changed();
    return rc;
}

int crmpi_inc_continue(void)
{
    char *unreach_msg = NULL;
    int rc = crmpi_bml_cr_rebuild(&unreach_msg);

    return inc_hooks_run(CRMPI_INC_PHASE_CONTINUE, inc_transports_changed(rc, unreach_msg));
}

/* The image's CRMPI_MCA_* environment gives way to the restart's, and every parameter is
 * read again from it. */
static int inc_params_replace(char *const *mca_env)
{
    static const char prefix[] = "CRMPI_MCA_";
    char **stale = NULL;
    size_t count = 0;

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
    return crmpi_catalog_register_all();
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
    crmpi_rte_job_info_replace(job);
    snprintf(who, sizeof(who), "rank %u", job->rank);
    crmpi_log_set_who(who);
    /* Every rank drained before the dump, and every rank restarts: all agree from 0. */
    rc = crmpi_pml_cr_reset_sequences();
    if (rc == CRMPI_OK) {
        char *unreach_msg = NULL;

        /* New locality and parameters: every module is selected again, friendly or not. */
        crmpi_bml_finalize();
        rc = inc_transports_changed(crmpi_bml_init(&unreach_msg), unreach_msg);
    }
    return inc_hooks_run(CRMPI_INC_PHASE_RESTART, rc);
}
