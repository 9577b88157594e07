/*
 * btl_ucx_component.c: the ucx component (btl.h): when it offers itself, its parameters,
 * loading libucp, the module, and the address it publishes (btl_ucx.h).
 */
#include "config.h"

#include "btl_ucx.h"

#include <stdint.h>
#include <stdlib.h>

#include "crmpi_status.h"
#include "log.h"
#include "param.h"

/* Smallest btl_ucx_max_send_size: room for the PML's headers and some data. */
#define BTL_UCX_MAX_SEND_SIZE_MIN 1024
/* Largest: every fragment is copied once into a buffer of its own. */
#define BTL_UCX_MAX_SEND_SIZE_MAX (64u * 1024 * 1024)
/* Largest btl_ucx_finalize_timeout: an hour. */
#define BTL_UCX_FINALIZE_TIMEOUT_MAX 3600000
/* Largest btl_ucx_max_sends. */
#define BTL_UCX_MAX_SENDS_MAX 65536

/* Read an integer parameter (int or size) and check its range. */
static int btl_ucx_component_param_uint(const char *name, bool is_size, uint64_t min, uint64_t max,
                                        uint64_t *value_out)
{
    uint64_t value;
    int64_t ivalue;
    int rc;

    if (is_size) {
        rc = crmpi_param_get_size(name, &value);
    } else {
        rc = crmpi_param_get_int(name, &ivalue);
        value = ivalue < 0 ? UINT64_MAX : (uint64_t)ivalue;
    }
    if (rc == CRMPI_ERR_NOT_FOUND) {
        crmpi_log_error("btl:ucx: parameter %s is not declared (the catalog was not "
                        "registered)",
                        name);
        return rc;
    }
    if (rc != CRMPI_OK)
        return rc; /* param.c said which source does not parse */
    if (value < min || value > max) {
        crmpi_log_error("btl:ucx: %s is out of range (%llu to %llu)", name, (unsigned long long)min,
                        (unsigned long long)max);
        return CRMPI_ERR_BAD_PARAM;
    }
    *value_out = value;
    return CRMPI_OK;
}

static int btl_ucx_component_param_string(const char *name, const char **value_out)
{
    int rc = crmpi_param_get_string(name, value_out);

    if (rc == CRMPI_ERR_NOT_FOUND)
        crmpi_log_error("btl:ucx: parameter %s is not declared (the catalog was not "
                        "registered)",
                        name);
    return rc;
}

static int btl_ucx_component_settings(btl_ucx_settings_t *settings)
{
    uint64_t max_send_size, eager_limit, max_sends, priority, timeout;
    int rc;

    if ((rc = btl_ucx_component_param_string("btl_ucx_library", &settings->library)) ||
        (rc = btl_ucx_component_param_string("btl_ucx_tls", &settings->tls)) ||
        (rc = btl_ucx_component_param_string("btl_ucx_net_devices", &settings->net_devices)) ||
        (rc = btl_ucx_component_param_uint("btl_ucx_max_send_size", true, BTL_UCX_MAX_SEND_SIZE_MIN,
                                           BTL_UCX_MAX_SEND_SIZE_MAX, &max_send_size)) ||
        (rc = btl_ucx_component_param_uint("btl_ucx_eager_limit", true, 0, SIZE_MAX,
                                           &eager_limit)) ||
        (rc = btl_ucx_component_param_uint("btl_ucx_max_sends", false, 1, BTL_UCX_MAX_SENDS_MAX,
                                           &max_sends)) ||
        (rc = btl_ucx_component_param_uint("btl_ucx_priority", false, 0, 1000, &priority)) ||
        (rc = btl_ucx_component_param_uint("btl_ucx_finalize_timeout", false, 0,
                                           BTL_UCX_FINALIZE_TIMEOUT_MAX, &timeout)))
        return rc;
    rc = crmpi_param_get_bool("btl_ucx_recv_place", &settings->recv_place);
    if (rc != CRMPI_OK)
        return rc;
    settings->finalize_timeout_ms = (int64_t)timeout;
    settings->max_send_size = (size_t)max_send_size;
    settings->eager_limit = (size_t)eager_limit;
    settings->max_sends = (size_t)max_sends;
    settings->priority = (uint32_t)priority;
    settings->required = crmpi_framework_requested(&crmpi_btl_framework, "ucx") || settings->tls[0];
    return CRMPI_OK;
}

static int btl_ucx_component_init(const crmpi_rte_job_info_t *job, crmpi_btl_module_t **module_out)
{
    btl_ucx_settings_t settings;
    const btl_ucx_lib_t *lib;
    btl_ucx_module_t *module;
    void *blob;
    size_t blob_len;
    int rc;

    /* A job of one rank has no peer to reach (and a singleton no modex to publish in). */
    if (job->size == 1)
        return CRMPI_ERR_NOT_SUPPORTED;
    rc = btl_ucx_component_settings(&settings);
    if (rc != CRMPI_OK)
        return rc;
    /* Required: what keeps ucx from running is an error of MPI_Init, said by the callee. */
    rc = btl_ucx_lib_open(settings.library, settings.required, &lib);
    if (rc != CRMPI_OK)
        return settings.required ? CRMPI_ERR_NOT_FOUND : rc;
    rc = btl_ucx_module_create(job, &settings, lib, &module);
    if (rc != CRMPI_OK)
        return rc == CRMPI_ERR_NOT_SUPPORTED && settings.required ? CRMPI_ERR_NOT_FOUND : rc;
    rc = btl_ucx_modex_pack(module, &blob, &blob_len);
    if (rc != CRMPI_OK)
        goto err_finalize;
    rc = crmpi_rte_modex_publish(BTL_UCX_MODEX_KEY, blob, blob_len);
    free(blob);
    if (rc != CRMPI_OK) {
        crmpi_log_error("btl:ucx: rank %u: cannot publish its address: %s", job->rank,
                        crmpi_strerror(rc));
        goto err_finalize;
    }
    crmpi_fw_verbose(&crmpi_btl_framework, 10, "ucx: rank %u: worker open (%zu-byte address)",
                     job->rank, module->addr_len);
    *module_out = &module->super;
    return CRMPI_OK;

err_finalize:
    module->super.finalize(&module->super);
    return rc;
}

/* Offered only when the btl list names ucx (btl_ucx.h, "Selection"). */
static int btl_ucx_component_query(const crmpi_component_t *component, int *priority_out,
                                   const char **reason_out)
{
    const crmpi_rte_job_info_t *job = crmpi_rte_job();

    if (!job || job->size <= 1) {
        *reason_out = "a job of one rank has no peer to reach";
        return CRMPI_ERR_NOT_SUPPORTED;
    }
    if (!crmpi_framework_requested(&crmpi_btl_framework, "ucx")) {
        *reason_out = job->num_nodes <= 1
                          ? "every rank is on this node, where sm and self reach them (name ucx "
                            "in the btl list to use it anyway)"
                          : "not named in the btl list (--mca btl self,sm,ucx uses it)";
        return CRMPI_ERR_NOT_SUPPORTED;
    }
    *priority_out = 5;
    return CRMPI_OK;
}

static const crmpi_btl_component_ops_t btl_ucx_component_ops = {
    .init = btl_ucx_component_init,
};

extern const crmpi_component_info_t crmpi_btl_ucx_info;

const crmpi_component_t crmpi_btl_ucx_component = {
    .info = &crmpi_btl_ucx_info,
    .query = btl_ucx_component_query,
    .ops = &btl_ucx_component_ops,
};
