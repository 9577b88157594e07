/*
 * plm_local.c: the local launch component (plm.h): fork one crmpi-agent per rank on this
 * node; the ranks' job facts and fences come from a PMIx server embedded in mpirun
 * (plm_local_pmix.c).
 *
 * Each agent leads a process group of its own, so that a terminal's Ctrl-C reaches mpirun
 * alone (which forwards it), and dies with mpirun (PR_SET_PDEATHSIG), even when mpirun is
 * killed with SIGKILL; its rank's namespace dies with the agent.
 */
#include "config.h"

#include "plm_local.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "log.h"
#include "param.h"
#include "plm_base.h"

/* plm_local_kill_grace when it cannot be read or is negative. */
#define PLM_LOCAL_KILL_GRACE_DEFAULT_MS 2000

static int plm_local_init(crmpi_plm_job_t *job)
{
    plm_local_state_t *state = calloc(1, sizeof(*state));
    const char *configured = NULL;
    int rc;

    if (!state)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    job->state = state;
    if (crmpi_param_get_int("plm_local_kill_grace", &job->kill_grace_ms) != CRMPI_OK ||
        job->kill_grace_ms < 0)
        job->kill_grace_ms = PLM_LOCAL_KILL_GRACE_DEFAULT_MS;
    job->kill_grace_param = "plm_local_kill_grace";
    job->node_dir_var = NULL; /* every agent runs here: mpirun's session directory */
    crmpi_param_get_string("plm_local_agent", &configured);
    rc = plm_base_program_path("crmpi-agent", configured, "plm_local_agent", &state->agent_path);
    if (rc != CRMPI_OK)
        return rc;
    return plm_local_pmix_init(job, state);
}

static int plm_local_spawn(crmpi_plm_job_t *job, plm_local_state_t *state, int rank)
{
    crmpi_plm_agent_t *agent = &job->agents[rank];
    char **pmix_env = NULL, **env = NULL, **argv = NULL;
    pid_t pid;
    int rc;

    rc = plm_local_pmix_client(state, rank, &pmix_env);
    if (rc != CRMPI_OK)
        return rc;
    rc = plm_base_agent_env(job, pmix_env, &env);
    plm_base_env_free(pmix_env);
    if (rc == CRMPI_OK)
        rc = plm_base_agent_argv(job, rank, state->agent_path, 0, &argv);
    if (rc != CRMPI_OK) {
        crmpi_log_error("plm:local: out of memory preparing the agent of rank %d", rank);
        plm_base_env_free(env);
        return rc;
    }
    if (plm_base_spawn(state->agent_path, argv, env, &pid, &agent->out_fd, &agent->err_fd) !=
        CRMPI_OK) {
        crmpi_log_error("plm:local: cannot start the agent of rank %d: %s", rank, strerror(errno));
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
    } else {
        agent->pid = pid;
        agent->running = true;
    }
    free(argv);
    plm_base_env_free(env);
    return rc;
}

static int plm_local_launch(crmpi_plm_job_t *job)
{
    plm_local_state_t *state = job->state;

    for (int rank = 0; rank < job->np; rank++) {
        int rc = plm_local_spawn(job, state, rank);

        if (rc != CRMPI_OK)
            return rc;
    }
    return CRMPI_OK;
}

static int plm_local_signal(crmpi_plm_job_t *job, int rank, int sig)
{
    pid_t pid = job->agents[rank].pid;

    if (pid <= 0)
        return CRMPI_ERR_NOT_FOUND;
    /* SIGKILL goes to the agent's whole process group first (its rank's init dies with the
     * agent through PR_SET_PDEATHSIG, and with the init the rank's pid namespace). */
    if (sig == SIGKILL)
        kill(-pid, SIGKILL);
    return kill(pid, sig) == 0 || errno != ESRCH ? CRMPI_OK : CRMPI_ERR_NOT_FOUND;
}

/* The agents are mpirun's only children. */
static void plm_local_reap(crmpi_plm_job_t *job, crmpi_plm_gone_fn_t gone_fn, void *arg)
{
    int status;
    pid_t pid;

    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (int rank = 0; rank < job->np; rank++) {
            crmpi_plm_agent_t *agent = &job->agents[rank];

            if (agent->pid != pid)
                continue;
            agent->pid = 0;
            agent->running = false;
            gone_fn(arg, rank, status, false);
        }
    }
}

static void plm_local_finalize(crmpi_plm_job_t *job)
{
    plm_local_state_t *state = job->state;

    if (!state)
        return;
    plm_local_pmix_finalize(state);
    free(state->agent_path);
    free(state);
    job->state = NULL;
}

static const crmpi_plm_ops_t plm_local_ops = {
    .flags = 0,
    .init = plm_local_init,
    .launch = plm_local_launch,
    .reap = plm_local_reap,
    .signal = plm_local_signal,
    .finalize = plm_local_finalize,
};

extern const crmpi_component_info_t crmpi_plm_local_info;

const crmpi_component_t plm_local_component = {
    .info = &crmpi_plm_local_info,
    .query = NULL, /* always available: fork and an embedded PMIx server need nothing else */
    .ops = &plm_local_ops,
};
