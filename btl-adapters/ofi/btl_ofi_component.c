/*
 * btl_ofi_component.c: the ofi component (btl.h): when it offers itself, its parameters,
 * loading libfabric, the provider's choice, the module, and the address it publishes
 * (btl_ofi.h).
 */
#include "config.h"

#include "btl_ofi.h"

#include <stdint.h>
#include <stdlib.h>

#include "crmpi_status.h"
#include "log.h"
#include "param.h"

extern const crmpi_component_info_t crmpi_btl_ofi_info;

/* Smallest btl_ofi_max_send_size: room for the PML's headers and some data. */
#define BTL_OFI_MAX_SEND_SIZE_MIN 1024
/* Largest: one buffer's size must fit the provider's messages and a modest memory budget. */
#define BTL_OFI_MAX_SEND_SIZE_MAX (64u * 1024 * 1024)
/* Largest pool of either kind. */
#define BTL_OFI_BUFFERS_MAX 65536

/* Read a size parameter and check its range. */
static int btl_ofi_component_param_size(const char *name, uint64_t min, uint64_t max,
                                        size_t *value_out)
{
    uint64_t value;
    int rc = crmpi_param_get_size(name, &value);

    if (rc == CRMPI_ERR_NOT_FOUND) {
        crmpi_log_error("btl:ofi: parameter %s is not declared (the catalog was not "
                        "registered)",
                        name);
        return rc;
    }
    if (rc != CRMPI_OK)
        return rc; /* param.c said which source does not parse */
    if (value < min || value > max) {
        crmpi_log_error("btl:ofi: %s=%llu is out of range (%llu to %llu)", name,
                        (unsigned long long)value, (unsigned long long)min,
                        (unsigned long long)max);
        return CRMPI_ERR_BAD_PARAM;
    }
    *value_out = (size_t)value;
    return CRMPI_OK;
}

/* Read a count parameter and check its range. */
static int btl_ofi_component_param_count(const char *name, int64_t min, int64_t max,
                                         size_t *value_out)
{
    int64_t value;
    int rc = crmpi_param_get_int(name, &value);

    if (rc == CRMPI_ERR_NOT_FOUND) {
        crmpi_log_error("btl:ofi: parameter %s is not declared (the catalog was not "
                        "registered)",
                        name);
        return rc;
    }
    if (rc != CRMPI_OK)
        return rc;
    if (value < min || value > max) {
        crmpi_log_error("btl:ofi: %s=%lld is out of range (%lld to %lld)", name, (long long)value,
                        (long long)min, (long long)max);
        return CRMPI_ERR_BAD_PARAM;
    }
    *value_out = (size_t)value;
    return CRMPI_OK;
}

static int btl_ofi_component_param_string(const char *name, const char **value_out)
{
    int rc = crmpi_param_get_string(name, value_out);

    if (rc == CRMPI_ERR_NOT_FOUND)
        crmpi_log_error("btl:ofi: parameter %s is not declared (the catalog was not "
                        "registered)",
                        name);
    return rc;
}

static int btl_ofi_component_settings(btl_ofi_settings_t *settings)
{
    int rc;

    if ((rc = btl_ofi_component_param_string("btl_ofi_library", &settings->library)) ||
        (rc = btl_ofi_component_param_string("btl_ofi_provider", &settings->provider)) ||
        (rc = btl_ofi_component_param_string("btl_ofi_domain", &settings->domain)) ||
        (rc = btl_ofi_component_param_size("btl_ofi_max_send_size", BTL_OFI_MAX_SEND_SIZE_MIN,
                                           BTL_OFI_MAX_SEND_SIZE_MAX, &settings->max_send_size)) ||
        (rc = btl_ofi_component_param_size("btl_ofi_eager_limit", 0, SIZE_MAX,
                                           &settings->eager_limit)) ||
        (rc = btl_ofi_component_param_count("btl_ofi_send_buffers", 1, BTL_OFI_BUFFERS_MAX,
                                            &settings->send_buffers)) ||
        (rc = btl_ofi_component_param_count("btl_ofi_recv_buffers", 1, BTL_OFI_BUFFERS_MAX,
                                            &settings->recv_buffers)))
        return rc;
    rc = crmpi_param_get_bool("btl_ofi_recv_place", &settings->recv_place);
    if (rc != CRMPI_OK)
        return rc;
    /* Asked for by name, or configured. */
    settings->required = crmpi_framework_requested(&crmpi_btl_framework, "ofi") ||
                         settings->provider[0] || settings->domain[0];
    return CRMPI_OK;
}

static int btl_ofi_component_init(const crmpi_rte_job_info_t *job, crmpi_btl_module_t **module_out)
{
    btl_ofi_settings_t settings;
    btl_ofi_module_t *module;
    struct fi_info *info;
    btl_ofi_lib_t lib;
    void *blob;
    size_t blob_len;
    int rc;

    /* A job of one rank has no peer to reach (and a singleton no modex to publish in). */
    if (job->size == 1)
        return CRMPI_ERR_NOT_SUPPORTED;
    rc = btl_ofi_component_settings(&settings);
    if (rc != CRMPI_OK)
        return rc;
    /* Required: what keeps ofi from running is an error of MPI_Init, said by the callee. */
    rc = btl_ofi_lib_open(settings.library, settings.required, &lib);
    if (rc != CRMPI_OK)
        return settings.required ? CRMPI_ERR_NOT_FOUND : rc;
    rc = btl_ofi_provider_choose(&lib, &settings, job->rank, &info);
    if (rc != CRMPI_OK)
        goto err_close_lib;
    rc = btl_ofi_module_create(job, &settings, &lib, info, &module);
    if (rc != CRMPI_OK)
        goto err_free_info;
    /* The module owns the library and info from here on: its finalize releases them. */
    rc = btl_ofi_modex_pack(module, &blob, &blob_len);
    if (rc != CRMPI_OK)
        goto err_finalize;
    rc = crmpi_rte_modex_publish(BTL_OFI_MODEX_KEY, blob, blob_len);
    free(blob);
    if (rc != CRMPI_OK) {
        crmpi_log_error("btl:ofi: rank %u: cannot publish its address: %s", job->rank,
                        crmpi_strerror(rc));
        goto err_finalize;
    }
    crmpi_fw_verbose(&crmpi_btl_framework, 10,
                     "ofi: rank %u: endpoint of %s open (%zu-byte name%s), %zu send and %zu "
                     "receive buffers of %zu bytes",
                     job->rank, module->info->fabric_attr->prov_name, module->addr_len,
                     module->node_local ? ", reaches this node only" : "", module->num_send,
                     module->num_recv, module->buf_size);
    *module_out = &module->super;
    return CRMPI_OK;

err_finalize:
    module->super.finalize(&module->super);
    return rc;
err_free_info:
    lib.freeinfo(info);
err_close_lib:
    btl_ofi_lib_close(&lib);
    /* Nothing usable under the automatic choice is not an error of the job. */
    return rc == CRMPI_ERR_NOT_SUPPORTED && settings.required ? CRMPI_ERR_NOT_FOUND : rc;
}

/*
 * Offered when some rank is on another node, or when the btl list names ofi (btl_ofi.h,
 * "Selection"): on one node sm and self reach every rank, and a fabric opened for nobody
 * would cost every MPI_Init and every checkpoint.
 */
static int btl_ofi_component_query(const crmpi_component_t *component, int *priority_out,
                                   const char **reason_out)
{
    const crmpi_rte_job_info_t *job = crmpi_rte_job();

    if (!job || job->size <= 1) {
        *reason_out = "a job of one rank has no peer to reach";
        return CRMPI_ERR_NOT_SUPPORTED;
    }
    /* Opened only when the btl list names it: loading libfabric costs about a second per
     * job and per checkpoint, and its default interface is the first one up, which may not
     * reach the peers (tcp chooses by btl_tcp_if_include and reachability). */
    if (!crmpi_framework_requested(&crmpi_btl_framework, "ofi")) {
        *reason_out = job->num_nodes <= 1
                          ? "every rank is on this node, where sm and self reach them (name ofi "
                            "in the btl list to use it anyway)"
                          : "not named in the btl list (--mca btl self,sm,ofi uses it)";
        return CRMPI_ERR_NOT_SUPPORTED;
    }
    *priority_out = 5;
    return CRMPI_OK;
}

static const crmpi_btl_component_ops_t btl_ofi_component_ops = {
    .init = btl_ofi_component_init,
};

const crmpi_component_t crmpi_btl_ofi_component = {
    .info = &crmpi_btl_ofi_info,
    .query = btl_ofi_component_query,
    .ops = &btl_ofi_component_ops,
};
