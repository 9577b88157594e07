/*
 * agent_pmix.c: what the agent asks PMIx on its rank's behalf (agent.h). The rank never
 * talks to PMIx itself (a PMIx client's connection could not be checkpointed): its job
 * facts, modex keys and fences go through the agent, which is the PMIx client of the
 * launcher's server.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nettle/hmac.h>

#include "agent.h"
#include "crmpi_status.h"
#include "log.h"

/* Prefix of every modex key this library puts into PMIx (keeps clear of "pmix." keys). */
#define AGENT_MODEX_PREFIX "crmpi."

static int agent_pmix_get_u32(const pmix_proc_t *proc, const char *key, uint32_t *value_out)
{
    pmix_value_t *val = NULL;
    pmix_status_t prc = PMIx_Get(proc, key, NULL, 0, &val);
    if (prc != PMIX_SUCCESS) {
        crmpi_log_error("PMIx has no %s: %s", key, PMIx_Error_string(prc));
        return CRMPI_ERR_NOT_FOUND;
    }
    int rc = CRMPI_OK;
    switch (val->type) {
    case PMIX_UINT32: *value_out = val->data.uint32; break;
    case PMIX_UINT16: *value_out = val->data.uint16; break;
    case PMIX_PROC_RANK: *value_out = val->data.rank; break;
    case PMIX_INT: *value_out = (uint32_t)val->data.integer; break;
    default:
        crmpi_log_error("PMIx gave %s with unexpected type %d", key, (int)val->type);
        rc = CRMPI_ERR_PROTO;
    }
    PMIX_VALUE_RELEASE(val);
    return rc;
}

/* Peer `rank`'s node name (PMIX_HOSTNAME), into name (len bytes). */
static int agent_pmix_peer_host(const agent_state_t *st, uint32_t rank, char *name, size_t len)
{
    pmix_proc_t peer;
    pmix_value_t *val = NULL;
    pmix_info_t optional;
    bool yes = true;
    int rc = CRMPI_ERR_NOT_FOUND;

    PMIX_LOAD_PROCID(&peer, st->self.nspace, rank);
    PMIX_INFO_LOAD(&optional, PMIX_OPTIONAL, &yes, PMIX_BOOL);
    if (PMIx_Get(&peer, PMIX_HOSTNAME, &optional, 1, &val) == PMIX_SUCCESS && val &&
        val->type == PMIX_STRING) {
        snprintf(name, len, "%s", val->data.string);
        rc = CRMPI_OK;
    }
    PMIX_INFO_DESTRUCT(&optional);
    if (val)
        PMIX_VALUE_RELEASE(val);
    return rc;
}

/*
 * Every rank's node, numbered 0.. in the order the ranks name them (the same numbering in
 * every agent), from each rank's PMIX_HOSTNAME. Launchers number their nodes their own way
 * (Open MPI 4.1 gives PMIX_NODEID as an index into all the nodes it knows, its own among
 * them, and only for the ranks of the asking node), so node ids are taken from the names,
 * which every launcher gives for every rank.
 */
static int agent_node_map(agent_state_t *st)
{
    crmpi_rte_job_info_t *info = &st->info;
    char(*names)[CRMPI_RTE_NAME_MAX] = calloc(info->size, sizeof(*names));
    uint32_t num_nodes = 0;
    int rc = CRMPI_OK;

    info->node_of_rank = calloc(info->size, sizeof(uint32_t));
    if (!names || !info->node_of_rank) {
        free(names);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t rank = 0; rank < info->size && rc == CRMPI_OK; rank++) {
        char name[CRMPI_RTE_NAME_MAX];
        uint32_t node = 0;

        rc = agent_pmix_peer_host(st, rank, name, sizeof(name));
        if (rc != CRMPI_OK) {
            crmpi_log_error("PMIx has no %s for rank %u: the launcher did not say where it runs",
                            PMIX_HOSTNAME, rank);
            break;
        }
        while (node < num_nodes && strcmp(names[node], name) != 0)
            node++;
        if (node == num_nodes)
            snprintf(names[num_nodes++], sizeof(names[0]), "%s", name);
        info->node_of_rank[rank] = node;
    }
    if (rc == CRMPI_OK) {
        info->num_nodes = num_nodes;
        info->node_id = info->node_of_rank[info->rank];
        snprintf(info->nodename, sizeof(info->nodename), "%s", names[info->node_id]);
    }
    free(names);
    return rc;
}

/*
 * The agent's node-local directory: mpirun's session directory when the agents run on its
 * node; else the directory the launcher made for the job on this node and removes at its
 * end, in the variable CRMPI_SESSION_DIR_VAR names (plm.h), with a crmpi/ of ours inside.
 */
static int agent_session_dir(crmpi_rte_job_info_t *info)
{
    const char *var = getenv("CRMPI_SESSION_DIR_VAR");
    const char *dir = getenv("CRMPI_SESSION_DIR");

    if (var && *var) {
        const char *node_dir = getenv(var);

        if (!node_dir || !*node_dir) {
            crmpi_log_error("the launcher gave no node-local directory in %s", var);
            return CRMPI_ERR_NOT_FOUND;
        }
        if ((size_t)snprintf(info->session_dir, sizeof(info->session_dir), "%s/crmpi", node_dir) >=
            sizeof(info->session_dir)) {
            crmpi_log_error("the node-local directory %s (%s) is too long", node_dir, var);
            return CRMPI_ERR_BAD_PARAM;
        }
        if (mkdir(info->session_dir, 0700) < 0 && errno != EEXIST) {
            crmpi_log_error("cannot create %s: %s", info->session_dir, strerror(errno));
            return CRMPI_ERR_IO;
        }
        return CRMPI_OK;
    }
    snprintf(info->session_dir, sizeof(info->session_dir), "%s", dir ? dir : "");
    return CRMPI_OK;
}

/*
 * A key derived from the one mpirun gave the agents (CRMPI_JOB_KEY, which the agents
 * present to mpirun) for one use, named by `label`: the rank's job key, so that a rank,
 * whose memory its checkpoint images hold, never holds the agents' own credential (a rank's
 * transports derive their keys from it in turn); and the partner level's, which proves to
 * an agent that a copy comes from an agent of the job.
 */
static int agent_derive_key(const char *label, uint8_t *key_out)
{
    const char *hex = getenv("CRMPI_JOB_KEY");
    uint8_t key[CRMPI_RTE_KEY_LEN];
    struct hmac_sha256_ctx ctx;
    size_t len = hex ? strlen(hex) : 0;

    if (len != 2 * sizeof(key)) {
        crmpi_log_error("the launcher gave no job key (CRMPI_JOB_KEY of %zu hex digits, "
                        "expected %zu)",
                        len, 2 * sizeof(key));
        return CRMPI_ERR_BAD_PARAM;
    }
    for (size_t i = 0; i < sizeof(key); i++) {
        unsigned byte;

        if (sscanf(hex + 2 * i, "%2x", &byte) != 1) {
            crmpi_log_error("the job key (CRMPI_JOB_KEY) is not hexadecimal");
            return CRMPI_ERR_BAD_PARAM;
        }
        key[i] = (uint8_t)byte;
    }
    hmac_sha256_set_key(&ctx, sizeof(key), key);
    hmac_sha256_update(&ctx, strlen(label), (const uint8_t *)label);
    hmac_sha256_digest(&ctx, CRMPI_RTE_KEY_LEN, key_out);
    return CRMPI_OK;
}

int agent_job_facts(agent_state_t *st)
{
    pmix_proc_t wildcard;
    crmpi_rte_job_info_t *info = &st->info;
    const char *jobid = getenv("CRMPI_JOBID");
    int rc;

    PMIX_LOAD_PROCID(&wildcard, st->self.nspace, PMIX_RANK_WILDCARD);
    info->rank = st->self.rank;
    if ((rc = agent_pmix_get_u32(&wildcard, PMIX_JOB_SIZE, &info->size)) != CRMPI_OK ||
        (rc = agent_pmix_get_u32(&st->self, PMIX_LOCAL_RANK, &info->local_rank)) != CRMPI_OK ||
        (rc = agent_pmix_get_u32(&wildcard, PMIX_LOCAL_SIZE, &info->local_size)) != CRMPI_OK ||
        (rc = agent_node_map(st)) != CRMPI_OK)
        return rc;
    info->jobid = jobid ? strtoull(jobid, NULL, 10) : 0;
    if ((rc = agent_derive_key("crmpi rank key", info->job_key)) != CRMPI_OK ||
        (rc = agent_derive_key("crmpi partner key", st->snapc.partner_key)) != CRMPI_OK)
        return rc;
    info->job_key_len = CRMPI_RTE_KEY_LEN;
    st->snapc.partner_key_len = CRMPI_RTE_KEY_LEN;
    return agent_session_dir(info);
}

static int agent_modex_key(const char *key, char *full, size_t full_len)
{
    if ((size_t)snprintf(full, full_len, AGENT_MODEX_PREFIX "%s", key) >= full_len ||
        full_len > PMIX_MAX_KEYLEN + 1) {
        return CRMPI_ERR_BAD_PARAM;
    }
    return CRMPI_OK;
}

int agent_modex_put(crmpi_buf_t *req)
{
    const char *key;
    const void *data;
    size_t len;
    char full[PMIX_MAX_KEYLEN + 1];
    pmix_value_t value;

    crmpi_buf_get_str(req, &key);
    crmpi_buf_get_bytes(req, &data, &len);
    if (crmpi_buf_get_done(req) != CRMPI_OK) {
        return CRMPI_ERR_PROTO;
    }
    if (agent_modex_key(key, full, sizeof(full)) != CRMPI_OK) {
        return CRMPI_ERR_BAD_PARAM;
    }
    PMIX_VALUE_CONSTRUCT(&value);
    value.type = PMIX_BYTE_OBJECT;
    value.data.bo.bytes = (char *)data;
    value.data.bo.size = len;
    /* PMIx_Put copies the value. */
    pmix_status_t prc = PMIx_Put(PMIX_GLOBAL, full, &value);
    if (prc != PMIX_SUCCESS) {
        crmpi_log_error("modex: PMIx_Put(%s): %s", key, PMIx_Error_string(prc));
        return CRMPI_ERROR;
    }
    return CRMPI_OK;
}

/* PMIx thread: the fence finished; the main loop sends the reply (agent_fence_reply). */
static void agent_fence_done(pmix_status_t status, void *cbdata)
{
    agent_state_t *st = cbdata;
    uint64_t one = 1;
    st->fence_status = status;
    ssize_t ignored = write(st->fence_efd, &one, sizeof(one));
    (void)ignored;
}

/*
 * Start a fence without blocking: the agent must keep serving while the job's ranks
 * gather (forward output, notice its rank's death, answer mpirun). A rank that died in a
 * fence must be reported, or no agent would ever leave it.
 */
int agent_fence_start(agent_state_t *st, uint32_t seq, crmpi_buf_t *req)
{
    uint32_t collect;
    bool flag;

    crmpi_buf_get_u32(req, &collect);
    if (crmpi_buf_get_done(req) != CRMPI_OK || st->fence_pending) {
        return CRMPI_ERR_PROTO;
    }
    if (collect) {
        pmix_status_t prc = PMIx_Commit();
        if (prc != PMIX_SUCCESS) {
            crmpi_log_error("modex: PMIx_Commit: %s", PMIx_Error_string(prc));
            return CRMPI_ERROR;
        }
    }
    flag = collect != 0;
    PMIX_INFO_LOAD(&st->fence_info, PMIX_COLLECT_DATA, &flag, PMIX_BOOL);
    st->fence_seq = seq;
    st->fence_pending = 1;
    /* NULL procs: every process of this job's namespace. */
    pmix_status_t prc = PMIx_Fence_nb(NULL, 0, &st->fence_info, 1, agent_fence_done, st);
    if (prc != PMIX_SUCCESS) {
        st->fence_pending = 0;
        crmpi_log_error("fence: %s", PMIx_Error_string(prc));
        return CRMPI_ERROR;
    }
    return CRMPI_OK;
}

void agent_fence_reply(agent_state_t *st)
{
    uint64_t count;
    if (read(st->fence_efd, &count, sizeof(count)) != sizeof(count) || !st->fence_pending) {
        return;
    }
    st->fence_pending = 0;
    PMIX_INFO_DESTRUCT(&st->fence_info);
    if (st->fence_status != PMIX_SUCCESS && st->signals_received) {
        /* The job is being torn down and the rank is being signalled: leave it waiting
         * rather than hand it an error it would report on its way out. */
        return;
    }
    if (st->fence_status != PMIX_SUCCESS) {
        crmpi_log_error("fence: %s", PMIx_Error_string(st->fence_status));
    }
    agent_reply(st, st->fence_seq,
                st->fence_status == PMIX_SUCCESS ? CRMPI_OK : CRMPI_ERR_PEER_GONE, NULL);
}

int agent_modex_get(agent_state_t *st, crmpi_buf_t *req, crmpi_buf_t *reply)
{
    uint32_t peer_rank;
    const char *key;
    char full[PMIX_MAX_KEYLEN + 1];
    pmix_proc_t peer;
    pmix_value_t *val = NULL;
    pmix_info_t optional;
    bool yes = true;

    crmpi_buf_get_u32(req, &peer_rank);
    crmpi_buf_get_str(req, &key);
    if (crmpi_buf_get_done(req) != CRMPI_OK) {
        return CRMPI_ERR_PROTO;
    }
    if (peer_rank >= st->info.size || agent_modex_key(key, full, sizeof(full)) != CRMPI_OK) {
        return CRMPI_ERR_BAD_PARAM;
    }
    PMIX_LOAD_PROCID(&peer, st->self.nspace, peer_rank);
    /* Optional: answer from what the fence collected, never wait for a key that was not
     * published. */
    PMIX_INFO_LOAD(&optional, PMIX_OPTIONAL, &yes, PMIX_BOOL);
    pmix_status_t prc = PMIx_Get(&peer, full, &optional, 1, &val);
    PMIX_INFO_DESTRUCT(&optional);
    if (prc != PMIX_SUCCESS || !val) {
        return CRMPI_ERR_NOT_FOUND;
    }
    int rc = CRMPI_OK;
    if (val->type == PMIX_BYTE_OBJECT) {
        crmpi_buf_put_bytes(reply, val->data.bo.bytes, val->data.bo.size);
    } else {
        crmpi_log_error("modex: rank %u's %s has unexpected type %d", peer_rank, key,
                        (int)val->type);
        rc = CRMPI_ERR_PROTO;
    }
    PMIX_VALUE_RELEASE(val);
    return rc;
}
