/*
 * plm_local.c: the local launch component: fork one crmpi-agent per rank on this node and
 * serve them job facts and fences from a PMIx server embedded in mpirun (DESIGN section 9
 * lists the PMIx calls verified with Debian's PMIx 4.2).
 *
 * The PMIx server runs its own progress thread; fence_nb is called there once every local
 * client has entered the fence, and since every rank of the job is local, the collected
 * data is the whole job's: it goes straight back through the callback.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <unistd.h>

#include <pmix.h>
#include <pmix_server.h>

#include "crmpi_status.h"
#include "log.h"
#include "param.h"
#include "plm.h"

extern char **environ;

/* Completion of one PMIx operation that reports through a pmix_op_cbfunc_t. */
typedef struct plm_local_wait {
    pthread_mutex_t lock; /* guards done and status */
    pthread_cond_t cond;  /* signalled when done */
    int done;             /* the callback ran */
    pmix_status_t status; /* what it reported */
} plm_local_wait_t;

static void plm_local_wait_init(plm_local_wait_t *wait)
{
    pthread_mutex_init(&wait->lock, NULL);
    pthread_cond_init(&wait->cond, NULL);
    wait->done = 0;
    wait->status = PMIX_SUCCESS;
}

static void plm_local_op_done(pmix_status_t status, void *cbdata)
{
    plm_local_wait_t *wait = cbdata;
    pthread_mutex_lock(&wait->lock);
    wait->status = status;
    wait->done = 1;
    pthread_cond_signal(&wait->cond);
    pthread_mutex_unlock(&wait->lock);
}

/* Wait for the callback when the call was accepted; the call's own status otherwise. */
static pmix_status_t plm_local_wait_for(plm_local_wait_t *wait, pmix_status_t call_status)
{
    if (call_status == PMIX_OPERATION_SUCCEEDED) {
        return PMIX_SUCCESS;
    }
    if (call_status != PMIX_SUCCESS) {
        return call_status;
    }
    pthread_mutex_lock(&wait->lock);
    while (!wait->done) {
        pthread_cond_wait(&wait->cond, &wait->lock);
    }
    pthread_mutex_unlock(&wait->lock);
    return wait->status;
}

static pmix_status_t plm_local_client_connected(const pmix_proc_t *proc, void *server_object,
                                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t plm_local_client_finalized(const pmix_proc_t *proc, void *server_object,
                                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return PMIX_OPERATION_SUCCEEDED;
}

static void plm_local_release_blob(void *cbdata)
{
    free(cbdata);
}

static pmix_status_t plm_local_fence_nb(const pmix_proc_t procs[], size_t nprocs,
                                        const pmix_info_t info[], size_t ninfo, char *data,
                                        size_t ndata, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    /* The server frees `data` when we return; the callback's copy lives until released. */
    char *copy = NULL;
    if (ndata) {
        copy = malloc(ndata);
        if (!copy) {
            return PMIX_ERR_NOMEM;
        }
        memcpy(copy, data, ndata);
    }
    cbfunc(PMIX_SUCCESS, copy, ndata, cbdata, plm_local_release_blob, copy);
    return PMIX_SUCCESS;
}

static pmix_server_module_t plm_local_pmix_module = {
    .client_connected = plm_local_client_connected,
    .client_finalized = plm_local_client_finalized,
    .fence_nb = plm_local_fence_nb,
};

typedef struct plm_local_state {
    char nspace[PMIX_MAX_NSLEN + 1]; /* the job's PMIx namespace, "crmpi.<jobid>" */
    int server_up;                   /* PMIx_server_init succeeded */
} plm_local_state_t;

/* "0,1,2,...,n-1" */
static char *plm_local_rank_list(int np)
{
    size_t cap = (size_t)np * 8 + 1;
    char *list = malloc(cap);
    size_t len = 0;
    if (!list) {
        return NULL;
    }
    list[0] = '\0';
    for (int rank = 0; rank < np; rank++) {
        len += (size_t)snprintf(list + len, cap - len, rank ? ",%d" : "%d", rank);
    }
    return list;
}

static int plm_local_register_nspace(mpirun_job_t *job, plm_local_state_t *state)
{
    const int np = job->map.np;
    const char *host = job->map.nodes[0];
    uint32_t size = (uint32_t)np, num_nodes = 1, node_id = 0;
    char jobid[32];
    char *peers = plm_local_rank_list(np);
    char *node_regex = NULL, *proc_regex = NULL;
    pmix_info_t *info = NULL;
    size_t ninfo = 10 + (size_t)np, n = 0;
    plm_local_wait_t wait;
    pmix_status_t prc;
    int rc = CRMPI_ERR_OUT_OF_RESOURCE;

    if (!peers) {
        return rc;
    }
    if (PMIx_generate_regex(host, &node_regex) != PMIX_SUCCESS ||
        PMIx_generate_ppn(peers, &proc_regex) != PMIX_SUCCESS) {
        crmpi_log_error("plm:local: PMIx cannot encode the node and process maps");
        rc = CRMPI_ERROR;
        goto out_free;
    }
    snprintf(jobid, sizeof(jobid), "%llu", (unsigned long long)job->jobid);
    PMIX_INFO_CREATE(info, ninfo);
    PMIX_INFO_LOAD(&info[n++], PMIX_UNIV_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[n++], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[n++], PMIX_LOCAL_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[n++], PMIX_MAX_PROCS, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[n++], PMIX_JOBID, jobid, PMIX_STRING);
    PMIX_INFO_LOAD(&info[n++], PMIX_NUM_NODES, &num_nodes, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[n++], PMIX_NODE_MAP, node_regex, PMIX_REGEX);
    PMIX_INFO_LOAD(&info[n++], PMIX_PROC_MAP, proc_regex, PMIX_REGEX);
    PMIX_INFO_LOAD(&info[n++], PMIX_LOCAL_PEERS, peers, PMIX_STRING);
    PMIX_INFO_LOAD(&info[n++], PMIX_HOSTNAME, host, PMIX_STRING);
    for (int rank = 0; rank < np; rank++) {
        pmix_data_array_t *array;
        pmix_rank_t prank = (pmix_rank_t)rank;
        uint16_t local_rank = (uint16_t)rank;
        PMIX_DATA_ARRAY_CREATE(array, 5, PMIX_INFO);
        pmix_info_t *proc_info = array->array;
        PMIX_INFO_LOAD(&proc_info[0], PMIX_RANK, &prank, PMIX_PROC_RANK);
        PMIX_INFO_LOAD(&proc_info[1], PMIX_LOCAL_RANK, &local_rank, PMIX_UINT16);
        PMIX_INFO_LOAD(&proc_info[2], PMIX_NODE_RANK, &local_rank, PMIX_UINT16);
        PMIX_INFO_LOAD(&proc_info[3], PMIX_NODEID, &node_id, PMIX_UINT32);
        PMIX_INFO_LOAD(&proc_info[4], PMIX_HOSTNAME, host, PMIX_STRING);
        PMIX_INFO_LOAD(&info[n++], PMIX_PROC_DATA, array, PMIX_DATA_ARRAY);
        PMIX_DATA_ARRAY_FREE(array);
    }
    plm_local_wait_init(&wait);
    prc = plm_local_wait_for(
        &wait, PMIx_server_register_nspace(state->nspace, np, info, n, plm_local_op_done, &wait));
    if (prc != PMIX_SUCCESS) {
        crmpi_log_error("plm:local: PMIx cannot register the job's namespace: %s",
                        PMIx_Error_string(prc));
        rc = CRMPI_ERROR;
        goto out_free;
    }
    rc = CRMPI_OK;
out_free:
    if (info) {
        PMIX_INFO_FREE(info, ninfo);
    }
    free(node_regex);
    free(proc_regex);
    free(peers);
    return rc;
}

static int plm_local_init(mpirun_job_t *job)
{
    plm_local_state_t *state = calloc(1, sizeof(*state));
    pmix_info_t info[4];
    pmix_status_t prc;
    bool no = false;

    if (!state) {
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    job->plm_state = state;
    snprintf(state->nspace, sizeof(state->nspace), "crmpi.%llu", (unsigned long long)job->jobid);
    /* A private rendezvous directory: PMIx puts its listener socket there, and mpirun
     * removes the whole session directory on every exit path. */
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, job->session_dir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_SYSTEM_TMPDIR, job->session_dir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[2], PMIX_SERVER_TOOL_SUPPORT, &no, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[3], PMIX_SERVER_SYSTEM_SUPPORT, &no, PMIX_BOOL);
    prc = PMIx_server_init(&plm_local_pmix_module, info, 4);
    for (int i = 0; i < 4; i++) {
        PMIX_INFO_DESTRUCT(&info[i]);
    }
    if (prc != PMIX_SUCCESS) {
        crmpi_log_error("plm:local: cannot start the PMIx server: %s", PMIx_Error_string(prc));
        return CRMPI_ERROR;
    }
    state->server_up = 1;
    return plm_local_register_nspace(job, state);
}

static void plm_local_free_env(char **env)
{
    for (char **e = env; e && *e; e++) {
        free(*e);
    }
    free(env);
}

/* Put "NAME=value" (owned by env afterwards) into env[0..*count), replacing an entry of
 * the same name: later sources win. */
static void plm_local_env_set(char **env, size_t *count, char *entry)
{
    size_t name_len = strcspn(entry, "=") + 1;
    for (size_t i = 0; i < *count; i++) {
        if (env[i] && strncmp(env[i], entry, name_len) == 0) {
            free(env[i]);
            env[i] = entry;
            return;
        }
    }
    env[(*count)++] = entry;
}

/* Environment of one agent: mpirun's own, --mca overrides, PMIx's, -x settings, and the
 * control URI. Built before fork() so the child only calls async-signal-safe functions. */
static char **plm_local_agent_env(const mpirun_job_t *job, char **pmix_env)
{
    char **overrides = crmpi_param_overrides_as_env();
    size_t cap = job->opts->num_env + 4, n = 0;
    char **env;
    int failed = 0;

    for (char **e = environ; *e; e++) {
        cap++;
    }
    for (char **e = overrides; e && *e; e++) {
        cap++;
    }
    for (char **e = pmix_env; e && *e; e++) {
        cap++;
    }
    env = calloc(cap, sizeof(char *));
    if (!env) {
        crmpi_param_free_env(overrides);
        return NULL;
    }
    char **sources[] = {environ, overrides, pmix_env};
    for (size_t s = 0; s < 3; s++) {
        for (char **e = sources[s]; e && *e; e++) {
            char *entry = strdup(*e);
            failed |= !entry;
            if (entry) {
                plm_local_env_set(env, &n, entry);
            }
        }
    }
    for (size_t v = 0; v < job->opts->num_env; v++) {
        const mpirun_env_var_t *var = &job->opts->env[v];
        char *entry;
        if (!var->value) {
            continue; /* "-x VAR": mpirun's own value is already in the environment */
        }
        if (asprintf(&entry, "%s=%s", var->name, var->value) < 0) {
            failed = 1;
            continue;
        }
        plm_local_env_set(env, &n, entry);
    }
    /* How an agent finds mpirun, its job and its node-local scratch directory. */
    char *facts[3] = {NULL, NULL, NULL};
    if (asprintf(&facts[0], "CRMPI_HNP_URI=%s", job->hnp_uri) < 0 ||
        asprintf(&facts[1], "CRMPI_JOBID=%llu", (unsigned long long)job->jobid) < 0 ||
        asprintf(&facts[2], "CRMPI_SESSION_DIR=%s", job->session_dir) < 0) {
        failed = 1;
    }
    for (size_t f = 0; f < 3; f++) {
        if (facts[f]) {
            plm_local_env_set(env, &n, facts[f]);
        }
    }
    crmpi_param_free_env(overrides);
    if (failed) {
        plm_local_free_env(env);
        return NULL;
    }
    return env;
}

static int plm_local_spawn(mpirun_job_t *job, plm_local_state_t *state, int rank)
{
    mpirun_agent_t *agent = &job->agents[rank];
    const char *cpuset = job->map.placement[rank].cpuset;
    pmix_proc_t proc;
    char **pmix_env = NULL, **env = NULL;
    char *argv[10 + 1];
    int argc = 0, out_pipe[2], err_pipe[2];
    plm_local_wait_t wait;
    pmix_status_t prc;

    PMIX_LOAD_PROCID(&proc, state->nspace, (pmix_rank_t)rank);
    plm_local_wait_init(&wait);
    prc = plm_local_wait_for(&wait, PMIx_server_register_client(&proc, getuid(), getgid(), agent,
                                                                plm_local_op_done, &wait));
    if (prc == PMIX_SUCCESS) {
        prc = PMIx_server_setup_fork(&proc, &pmix_env);
    }
    if (prc != PMIX_SUCCESS) {
        crmpi_log_error("plm:local: PMIx cannot register rank %d: %s", rank,
                        PMIx_Error_string(prc));
        return CRMPI_ERROR;
    }
    env = plm_local_agent_env(job, pmix_env);
    plm_local_free_env(pmix_env);
    if (!env) {
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    argv[argc++] = job->agent_path;
    if (cpuset) {
        argv[argc++] = "--cpuset";
        argv[argc++] = (char *)cpuset;
        if (job->opts->bind_to == MPIRUN_BIND_TO_NUMA) {
            argv[argc++] = "--membind";
        }
    }
    if (job->opts->restore) {
        argv[argc++] = "--restore";
        argv[argc++] = job->opts->restore;
    }
    argv[argc++] = "--";
    argv[argc++] = job->program;
    argv[argc] = NULL;

    if (pipe2(out_pipe, O_CLOEXEC) < 0) {
        goto err_free_env;
    }
    if (pipe2(err_pipe, O_CLOEXEC) < 0) {
        goto err_close_out;
    }
    pid_t pid = fork();
    if (pid < 0) {
        goto err_close_err;
    }
    if (pid == 0) {
        /* Child: only async-signal-safe calls from here to exec. */
        int null_fd = open("/dev/null", O_RDONLY);
        if (null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(out_pipe[1], 1) < 0 ||
            dup2(err_pipe[1], 2) < 0) {
            _exit(127);
        }
        /* Own process group: a terminal's Ctrl-C reaches mpirun only, which forwards it. */
        setpgid(0, 0);
        /* The agent dies with mpirun, even when mpirun is killed with SIGKILL. */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() == 1) {
            _exit(127);
        }
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        /* The program's arguments follow the agent's own. */
        char **full = alloca(sizeof(char *) * (size_t)(argc + job->opts->argc));
        int k = 0;
        for (int a = 0; a < argc; a++) {
            full[k++] = argv[a];
        }
        for (int a = 1; a < job->opts->argc; a++) {
            full[k++] = job->opts->argv[a];
        }
        full[k] = NULL;
        execve(job->agent_path, full, env);
        static const char msg[] = "mpirun: cannot start crmpi-agent\n";
        ssize_t ignored = write(2, msg, sizeof(msg) - 1);
        (void)ignored;
        _exit(127);
    }
    close(out_pipe[1]);
    close(err_pipe[1]);
    agent->pid = pid;
    agent->out_fd = out_pipe[0];
    agent->err_fd = err_pipe[0];
    plm_local_free_env(env);
    return CRMPI_OK;

err_close_err:
    close(err_pipe[0]);
    close(err_pipe[1]);
err_close_out:
    close(out_pipe[0]);
    close(out_pipe[1]);
err_free_env:
    crmpi_log_error("plm:local: cannot start the agent of rank %d: %s", rank, strerror(errno));
    plm_local_free_env(env);
    return CRMPI_ERR_OUT_OF_RESOURCE;
}

static int plm_local_launch(mpirun_job_t *job)
{
    plm_local_state_t *state = job->plm_state;
    for (int rank = 0; rank < job->map.np; rank++) {
        int rc = plm_local_spawn(job, state, rank);
        if (rc != CRMPI_OK) {
            return rc;
        }
    }
    return CRMPI_OK;
}

static void plm_local_finalize(mpirun_job_t *job)
{
    plm_local_state_t *state = job->plm_state;
    if (!state) {
        return;
    }
    if (state->server_up) {
        PMIx_server_finalize();
    }
    free(state);
    job->plm_state = NULL;
}

static const plm_ops_t plm_local_ops = {
    .init = plm_local_init,
    .launch = plm_local_launch,
    .finalize = plm_local_finalize,
};

extern const crmpi_component_info_t crmpi_plm_local_info;

const crmpi_component_t plm_local_component = {
    .info = &crmpi_plm_local_info,
    .query = NULL, /* always available: fork and an embedded PMIx server need nothing else */
    .ops = &plm_local_ops,
};
