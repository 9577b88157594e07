/*
 * plm_local_pmix.c: the PMIx server the local component embeds in mpirun (plm_local.h): it
 * serves the ranks' job facts and fences (Debian's PMIx 4.2).
 *
 * The server runs its own progress thread; fence_nb is called there once every local
 * client has entered the fence, and since every rank of the job is local, the collected
 * data is the whole job's: it goes straight back through the callback.
 */
#include "config.h"

#include "plm_local.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pmix.h>
#include <pmix_server.h>

#include "crmpi_status.h"
#include "log.h"

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

static int plm_local_pmix_register_nspace(crmpi_plm_job_t *job, plm_local_state_t *state)
{
    const int np = job->np;
    const char *host = job->nodes[0];
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

int plm_local_pmix_init(crmpi_plm_job_t *job, plm_local_state_t *state)
{
    pmix_info_t info[4];
    pmix_status_t prc;
    bool no = false;

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
    return plm_local_pmix_register_nspace(job, state);
}

int plm_local_pmix_client(plm_local_state_t *state, int rank, char ***env_out)
{
    pmix_proc_t proc;
    plm_local_wait_t wait;
    pmix_status_t prc;
    char **env = NULL;

    PMIX_LOAD_PROCID(&proc, state->nspace, (pmix_rank_t)rank);
    plm_local_wait_init(&wait);
    prc = plm_local_wait_for(&wait, PMIx_server_register_client(&proc, getuid(), getgid(), NULL,
                                                                plm_local_op_done, &wait));
    if (prc == PMIX_SUCCESS)
        prc = PMIx_server_setup_fork(&proc, &env);
    if (prc != PMIX_SUCCESS) {
        crmpi_log_error("plm:local: PMIx cannot register rank %d: %s", rank,
                        PMIx_Error_string(prc));
        return CRMPI_ERROR;
    }
    *env_out = env;
    return CRMPI_OK;
}

void plm_local_pmix_finalize(plm_local_state_t *state)
{
    if (state->server_up)
        PMIx_server_finalize();
    state->server_up = 0;
}
