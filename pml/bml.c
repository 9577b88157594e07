/*
 * bml.c: per-peer choice of BTL modules (bml.h).
 */
#include "config.h"

#include "bml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "log.h"
#include "param.h"

/* Upper bound on BTL components (self, sm, tcp, ofi, ucx). */
enum { BML_MAX_MODULES = 8 };

crmpi_bml_peer_t *crmpi_bml_peers;

/* Modules created at init. */
static crmpi_btl_module_t *bml_modules[BML_MAX_MODULES];
static size_t bml_num_modules;
/* Modules some peer uses, polled by crmpi_bml_progress. */
static crmpi_btl_module_t *bml_active[BML_MAX_MODULES];
static size_t bml_num_active;
/* Ranks in the job (entries in crmpi_bml_peers). */
static uint32_t bml_num_peers;

int crmpi_bml_progress(void)
{
    int events = 0;

    for (size_t i = 0; i < bml_num_active; i++)
        events += bml_active[i]->progress(bml_active[i]);
    return events;
}

/* Does `a` beat `b` for a peer both reach? */
static bool bml_module_better(const crmpi_btl_module_t *a, const crmpi_btl_module_t *b)
{
    if (a->exclusivity != b->exclusivity)
        return a->exclusivity > b->exclusivity;
    return a->priority > b->priority;
}

/* "self, sm" from the opened modules, for messages. */
static void bml_module_names(char *buf, size_t size)
{
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < bml_num_modules && used < size; i++) {
        int len = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", bml_modules[i]->name);
        if (len < 0)
            break;
        used += (size_t)len;
    }
    if (bml_num_modules == 0)
        snprintf(buf, size, "none");
}

/* The module already open for component `name` (kept across a checkpoint), or NULL. */
static crmpi_btl_module_t *bml_module_find(const char *name)
{
    for (size_t m = 0; m < bml_num_modules; m++) {
        if (strcmp(bml_modules[m]->name, name) == 0)
            return bml_modules[m];
    }
    return NULL;
}

/* Create a module for every allowed, available component that has none yet. */
static int bml_modules_open(const crmpi_rte_job_info_t *job)
{
    const crmpi_component_t *selected[BML_MAX_MODULES];
    size_t count = 0;
    int rc;

    rc = crmpi_framework_open(&crmpi_btl_framework);
    if (rc != CRMPI_OK)
        return rc;
    rc = crmpi_framework_select_all(&crmpi_btl_framework, selected, BML_MAX_MODULES, &count);
    if (rc != CRMPI_OK)
        return rc;
    for (size_t i = 0; i < count; i++) {
        const crmpi_btl_component_ops_t *ops = selected[i]->ops;
        crmpi_btl_module_t *module;

        if (bml_module_find(selected[i]->info->name))
            continue;
        rc = ops->init(job, &module);
        if (rc == CRMPI_ERR_NOT_SUPPORTED) {
            crmpi_fw_verbose(&crmpi_btl_framework, 10, "btl %s: not usable here; skipped",
                             selected[i]->info->name);
            continue;
        }
        if (rc != CRMPI_OK)
            return rc;
        bml_modules[bml_num_modules++] = module;
        crmpi_fw_verbose(&crmpi_btl_framework, 10,
                         "btl %s: opened (exclusivity %u, eager limit %zu, max send %zu)",
                         module->name, module->exclusivity, module->eager_limit,
                         module->max_send_size);
    }
    return CRMPI_OK;
}

/* "rank 0 (node n1) cannot reach rank 3 ...": the reason MPI_Init aborts the job. */
static char *bml_unreach_message(const crmpi_rte_job_info_t *job, uint32_t peer_rank)
{
    char tried[128];
    char *msg;

    bml_module_names(tried, sizeof(tried));
    if (asprintf(&msg,
                 "rank %u (node %s) cannot reach rank %u (on %s) with the allowed BTLs (tried: "
                 "%s); allow a BTL that reaches it, e.g. --mca btl self,sm,tcp",
                 job->rank, job->nodename, peer_rank,
                 job->node_of_rank[peer_rank] == job->node_id ? "the same node" : "another node",
                 tried) < 0)
        return NULL;
    return msg;
}

/*
 * Learn the peers of the modules from `first` on (the ones just opened; the modex fence
 * has run), give every peer the best module that reaches it, tell each new module which
 * peers it lost to a better one, and list the modules in use.
 */
static int bml_peers_choose(const crmpi_rte_job_info_t *job, size_t first, char **unreach_msg_out)
{
    crmpi_btl_endpoint_t **all_endpoints[BML_MAX_MODULES] = {NULL};
    crmpi_btl_endpoint_t **endpoints;
    uint32_t *ranks;
    int rc;

    ranks = malloc(job->size * sizeof(ranks[0]));
    endpoints = malloc(job->size * sizeof(endpoints[0]));
    if (!ranks || !endpoints) {
        crmpi_log_error("bml: out of memory for %u peers", job->size);
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto out_free;
    }
    for (uint32_t r = 0; r < job->size; r++)
        ranks[r] = r;

    for (size_t m = first; m < bml_num_modules; m++) {
        crmpi_btl_module_t *module = bml_modules[m];

        all_endpoints[m] = calloc(job->size, sizeof(endpoints[0]));
        if (!all_endpoints[m]) {
            crmpi_log_error("bml: out of memory for %u peers", job->size);
            rc = CRMPI_ERR_OUT_OF_RESOURCE;
            goto out_free;
        }
        rc = module->add_procs(module, job->size, ranks, all_endpoints[m]);
        if (rc != CRMPI_OK)
            goto out_free;
        for (uint32_t r = 0; r < job->size; r++) {
            crmpi_bml_peer_t *peer = &crmpi_bml_peers[r];

            if (!all_endpoints[m][r])
                continue;
            if (!peer->module || bml_module_better(module, peer->module)) {
                peer->module = module;
                peer->endpoint = all_endpoints[m][r];
            }
        }
    }

    for (uint32_t r = 0; r < job->size; r++) {
        if (!crmpi_bml_peers[r].module) {
            *unreach_msg_out = bml_unreach_message(job, r);
            rc = CRMPI_ERR_UNREACH;
            goto out_free;
        }
    }
    bml_num_active = 0;
    for (size_t m = 0; m < bml_num_modules; m++) {
        crmpi_btl_module_t *module = bml_modules[m];
        size_t unused = 0;
        bool used = false;

        /* The peers a new module reaches but another module serves. */
        for (uint32_t r = 0; r < job->size; r++) {
            if (crmpi_bml_peers[r].module == module) {
                used = true;
            } else if (m >= first && all_endpoints[m][r]) {
                ranks[unused] = r;
                endpoints[unused++] = all_endpoints[m][r];
            }
        }
        if (unused)
            module->del_procs(module, unused, ranks, endpoints);
        if (used)
            bml_active[bml_num_active++] = module;
    }
    for (uint32_t r = 0; r < job->size; r++) {
        crmpi_fw_verbose(&crmpi_btl_framework, 20, "bml: rank %u -> rank %u through %s", job->rank,
                         r, crmpi_bml_peers[r].module->name);
    }
    rc = CRMPI_OK;

out_free:
    for (size_t m = first; m < bml_num_modules; m++)
        free(all_endpoints[m]);
    free(ranks);
    free(endpoints);
    return rc;
}

/* Open the components without a module, run the modex, and choose modules for the peers
 * without one: crmpi_bml_init and crmpi_bml_cr_rebuild. */
static int bml_open_and_choose(char **unreach_msg_out)
{
    const crmpi_rte_job_info_t *job = crmpi_rte_job();
    size_t first = bml_num_modules;
    int rc;

    rc = bml_modules_open(job);
    if (rc != CRMPI_OK)
        return rc;
    /* Every module has published its address; one fence makes them all visible. */
    if (crmpi_rte_connected()) {
        rc = crmpi_rte_fence(1);
        if (rc != CRMPI_OK) {
            crmpi_log_error("bml: modex fence failed: %s", crmpi_strerror(rc));
            return rc;
        }
    }
    rc = bml_peers_choose(job, first, unreach_msg_out);
    if (rc != CRMPI_OK)
        return rc;
    /* Every rank has attached to its peers (mapped their segments) before any rank can go
     * on to MPI_Finalize and release its own: the BTLs close without a fence there. */
    if (crmpi_rte_connected()) {
        rc = crmpi_rte_fence(0);
        if (rc != CRMPI_OK) {
            crmpi_log_error("bml: fence after connecting failed: %s", crmpi_strerror(rc));
            return rc;
        }
    }
    for (size_t m = first; m < bml_num_modules; m++) {
        if (bml_modules[m]->connected)
            bml_modules[m]->connected(bml_modules[m]);
    }
    return CRMPI_OK;
}

int crmpi_bml_init(char **unreach_msg_out)
{
    const crmpi_rte_job_info_t *job = crmpi_rte_job();

    bml_num_peers = job->size;
    crmpi_bml_peers = calloc(job->size, sizeof(crmpi_bml_peers[0]));
    if (!crmpi_bml_peers) {
        crmpi_log_error("bml: out of memory for %u peers", job->size);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    return bml_open_and_choose(unreach_msg_out);
}

int crmpi_bml_cr_release(void)
{
    size_t kept = 0;

    for (size_t m = 0; m < bml_num_modules; m++) {
        crmpi_btl_module_t *module = bml_modules[m];

        if (module->flags & CRMPI_BTL_FLAG_CKPT_FRIENDLY) {
            bml_modules[kept++] = module;
            continue;
        }
        for (uint32_t r = 0; r < bml_num_peers; r++) {
            if (crmpi_bml_peers[r].module == module)
                crmpi_bml_peers[r] = (crmpi_bml_peer_t){NULL, NULL};
        }
        crmpi_fw_verbose(&crmpi_btl_framework, 10, "btl %s: released for the checkpoint",
                         module->name);
        module->finalize(module);
    }
    bml_num_modules = kept;
    bml_num_active = 0;
    for (size_t m = 0; m < bml_num_modules; m++) {
        for (uint32_t r = 0; r < bml_num_peers; r++) {
            if (crmpi_bml_peers[r].module == bml_modules[m]) {
                bml_active[bml_num_active++] = bml_modules[m];
                break;
            }
        }
    }
    return CRMPI_OK;
}

int crmpi_bml_cr_rebuild(char **unreach_msg_out)
{
    return bml_open_and_choose(unreach_msg_out);
}

int crmpi_bml_finalize(void)
{
    for (size_t m = 0; m < bml_num_modules; m++)
        bml_modules[m]->finalize(bml_modules[m]);
    bml_num_modules = 0;
    bml_num_active = 0;
    free(crmpi_bml_peers);
    crmpi_bml_peers = NULL;
    bml_num_peers = 0;
    /* The next crmpi_bml_init (a restart's) opens it again with the parameters of then:
     * btl_base_verbose is read at the open. */
    crmpi_framework_close(&crmpi_btl_framework);
    return CRMPI_OK;
}
