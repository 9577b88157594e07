/*
 * plm_local.h: the local component's files (plm_local.c: the agents; plm_local_pmix.c: the
 * PMIx server embedded in mpirun) and what they share, inside plm/ only.
 */
#ifndef PLM_LOCAL_H
#define PLM_LOCAL_H

#include <pmix_common.h>

#include "plm.h"

/* The component, for plm_base.c's table. */
extern const crmpi_component_t plm_local_component;

/* The component's state, from init to finalize (job->state). */
typedef struct plm_local_state {
    char *agent_path;                /* crmpi-agent to start (plm_local_agent) */
    char nspace[PMIX_MAX_NSLEN + 1]; /* the job's PMIx namespace, "crmpi.<jobid>" */
    int server_up;                   /* PMIx_server_init succeeded */
} plm_local_state_t;

/**
 * Start the PMIx server (its rendezvous in the session directory) and register the job's
 * namespace: sizes, the node, every rank's local rank.
 * @return CRMPI_OK or CRMPI_ERROR (logged with PMIx's reason)
 */
int plm_local_pmix_init(crmpi_plm_job_t *job, plm_local_state_t *state);

/**
 * Register rank `rank` as a client of the server and get the variables its agent needs to
 * connect (PMIx_server_setup_fork).
 * @param env_out  NULL-terminated, malloc'ed (plm_base_env_free), on CRMPI_OK
 * @return CRMPI_OK or CRMPI_ERROR (logged)
 */
int plm_local_pmix_client(plm_local_state_t *state, int rank, char ***env_out);

/** Stop the server if it runs. */
void plm_local_pmix_finalize(plm_local_state_t *state);

#endif /* PLM_LOCAL_H */
