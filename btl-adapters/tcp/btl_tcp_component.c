/*
 * btl_tcp_component.c: the tcp component (btl.h): reads its parameters, chooses the
 * interfaces, creates the module and publishes where it listens (btl_tcp.h).
 */
#include "config.h"

#include "btl_tcp.h"

#include <limits.h>
#include <stdlib.h>

#include "crmpi_status.h"
#include "log.h"
#include "param.h"

extern const crmpi_component_info_t crmpi_btl_tcp_info;

/* Smallest btl_tcp_max_send_size: room for the PML's headers and some data. */
#define BTL_TCP_MAX_SEND_SIZE_MIN 1024

/* Read a size parameter and check its range. `what` is the parameter's name. */
static int btl_tcp_component_param_size(const char *what, uint64_t min, uint64_t max,
                                        size_t *value_out)
{
    uint64_t value;
    int rc = crmpi_param_get_size(what, &value);

    if (rc == CRMPI_ERR_NOT_FOUND) {
        crmpi_log_error("btl:tcp: parameter %s is not declared (the catalog was not "
                        "registered)",
                        what);
        return rc;
    }
    if (rc != CRMPI_OK)
        return rc; /* param.c said which source does not parse */
    if (value < min || value > max) {
        crmpi_log_error("btl:tcp: %s=%llu is out of range (%llu to %llu)", what,
                        (unsigned long long)value, (unsigned long long)min,
                        (unsigned long long)max);
        return CRMPI_ERR_BAD_PARAM;
    }
    *value_out = (size_t)value;
    return CRMPI_OK;
}

static int btl_tcp_component_param_string(const char *what, const char **value_out)
{
    int rc = crmpi_param_get_string(what, value_out);

    if (rc == CRMPI_ERR_NOT_FOUND)
        crmpi_log_error("btl:tcp: parameter %s is not declared (the catalog was not "
                        "registered)",
                        what);
    return rc;
}

static int btl_tcp_component_init(const crmpi_rte_job_info_t *job, crmpi_btl_module_t **module_out)
{
    btl_tcp_settings_t settings;
    const char *include;
    const char *exclude;
    btl_tcp_if_t *ifs;
    size_t num_ifs;
    btl_tcp_module_t *module;
    void *blob;
    size_t blob_len;
    int rc;

    /* A job of one rank has no peer to reach (and a singleton no modex to publish in). */
    if (job->size == 1)
        return CRMPI_ERR_NOT_SUPPORTED;
    if ((rc = btl_tcp_component_param_size("btl_tcp_max_send_size", BTL_TCP_MAX_SEND_SIZE_MIN,
                                           BTL_TCP_FRAME_MAX, &settings.max_send_size)) ||
        (rc = btl_tcp_component_param_size("btl_tcp_eager_limit", 0, SIZE_MAX,
                                           &settings.eager_limit)) ||
        (rc = btl_tcp_component_param_size("btl_tcp_sndbuf", 0, INT_MAX, &settings.sndbuf)) ||
        (rc = btl_tcp_component_param_size("btl_tcp_rcvbuf", 0, INT_MAX, &settings.rcvbuf)) ||
        (rc = crmpi_param_get_bool("btl_tcp_recv_place", &settings.recv_place)) ||
        (rc = btl_tcp_component_param_string("btl_tcp_if_include", &include)) ||
        (rc = btl_tcp_component_param_string("btl_tcp_if_exclude", &exclude)))
        return rc;

    rc = btl_tcp_if_select(include, exclude, &ifs, &num_ifs);
    if (rc != CRMPI_OK)
        return rc;
    rc = btl_tcp_module_create(job, &settings, ifs, num_ifs, &module);
    if (rc != CRMPI_OK) {
        free(ifs);
        return rc;
    }
    rc = btl_tcp_modex_pack(module, &blob, &blob_len);
    if (rc != CRMPI_OK)
        goto err_finalize;
    rc = crmpi_rte_modex_publish(BTL_TCP_MODEX_KEY, blob, blob_len);
    free(blob);
    if (rc != CRMPI_OK) {
        crmpi_log_error("btl:tcp: rank %u: cannot publish its addresses: %s", job->rank,
                        crmpi_strerror(rc));
        goto err_finalize;
    }
    crmpi_fw_verbose(&crmpi_btl_framework, 10, "tcp: rank %u listens on port %u of %zu address(es)",
                     job->rank, module->listen_port, module->num_ifs);
    *module_out = &module->super;
    return CRMPI_OK;

err_finalize:
    module->super.finalize(&module->super);
    return rc;
}

/* Sockets exist everywhere; what can go wrong (no interface, a bad include list) depends on
 * the parameters and is reported by init, with the parameter's name. */
static int btl_tcp_component_query(const crmpi_component_t *component, int *priority_out,
                                   const char **reason_out)
{
    *priority_out = 10;
    return CRMPI_OK;
}

static const crmpi_btl_component_ops_t btl_tcp_component_ops = {
    .init = btl_tcp_component_init,
};

const crmpi_component_t crmpi_btl_tcp_component = {
    .info = &crmpi_btl_tcp_info,
    .query = btl_tcp_component_query,
    .ops = &btl_tcp_component_ops,
};
