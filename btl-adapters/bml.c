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

/* Create a module for every allowed, available component. */
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

int crmpi_bml_init(const crmpi_rte_job_info_t *job, bool have_rte, char **unreach_msg_out)
{
    crmpi_btl_endpoint_t **endpoints;
    crmpi_btl_endpoint_t **all_endpoints[BML_MAX_MODULES] = {NULL};
    uint32_t *ranks;
    bool used[BML_MAX_MODULES] = {false};
    int rc;

    bml_num_peers = job->size;
    crmpi_bml_peers = calloc(job->size, sizeof(crmpi_bml_peers[0]));
    ranks = malloc(job->size * sizeof(ranks[0]));
    endpoints = malloc(job->size * sizeof(endpoints[0]));
    if (!crmpi_bml_peers || !ranks || !endpoints) {
        crmpi_log_error("bml: out of memory for %u peers", job->size);
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto out_free;
    }
    for (uint32_t r = 0; r < job->size; r++)
        ranks[r] = r;

    rc = bml_modules_open(job);
    if (rc != CRMPI_OK)
        goto out_free;
    /* Every module has published its address; one fence makes them all visible. */
    if (have_rte) {
        rc = crmpi_rte_fence(1);
        if (rc != CRMPI_OK) {
            crmpi_log_error("bml: modex fence failed: %s", crmpi_strerror(rc));
            goto out_free;
        }
    }

    for (size_t m = 0; m < bml_num_modules; m++) {
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
        memcpy(endpoints, all_endpoints[m], job->size * sizeof(endpoints[0]));
        for (uint32_t r = 0; r < job->size; r++) {
            crmpi_bml_peer_t *peer = &crmpi_bml_peers[r];

            if (!endpoints[r])
                continue;
            if (!peer->module || bml_module_better(module, peer->module)) {
                peer->module = module;
                peer->endpoint = endpoints[r];
            }
        }
    }

    /* Every peer reached? Then tell each module which peers it lost to a better one. */
    for (uint32_t r = 0; r < job->size; r++) {
        if (!crmpi_bml_peers[r].module) {
            char tried[128];
            char *msg;

            bml_module_names(tried, sizeof(tried));
            if (asprintf(&msg,
                         "rank %u (node %s) cannot reach rank %u (on %s) with the allowed "
                         "BTLs (tried: %s); allow a BTL that reaches it, e.g. --mca btl "
                         "self,sm,tcp",
                         job->rank, job->nodename, r,
                         job->node_of_rank[r] == job->node_id ? "the same node" : "another node",
                         tried) < 0)
                msg = NULL;
            *unreach_msg_out = msg;
            rc = CRMPI_ERR_UNREACH;
            goto out_free;
        }
    }
    for (size_t m = 0; m < bml_num_modules; m++) {
        crmpi_btl_module_t *module = bml_modules[m];
        size_t unused = 0;

        /* The peers this module reaches but another module serves. */
        for (uint32_t r = 0; r < job->size; r++) {
            if (crmpi_bml_peers[r].module == module) {
                used[m] = true;
            } else if (all_endpoints[m][r]) {
                ranks[unused] = r;
                endpoints[unused++] = all_endpoints[m][r];
            }
        }
        if (unused)
            module->del_procs(module, unused, ranks, endpoints);
        if (used[m])
            bml_active[bml_num_active++] = module;
    }
    /* Every rank has attached to its peers (mapped their segments) before any rank can go
     * on to MPI_Finalize and release its own: the BTLs close without a fence there. */
    if (have_rte) {
        rc = crmpi_rte_fence(0);
        if (rc != CRMPI_OK) {
            crmpi_log_error("bml: fence after connecting failed: %s", crmpi_strerror(rc));
            goto out_free;
        }
    }
    for (uint32_t r = 0; r < job->size; r++) {
        crmpi_fw_verbose(&crmpi_btl_framework, 20, "bml: rank %u -> rank %u through %s", job->rank,
                         r, crmpi_bml_peers[r].module->name);
    }
    rc = CRMPI_OK;

out_free:
    for (size_t m = 0; m < bml_num_modules; m++)
        free(all_endpoints[m]);
    free(ranks);
    free(endpoints);
    return rc;
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
    return CRMPI_OK;
}
