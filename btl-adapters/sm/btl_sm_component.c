/*
 * btl_sm_component.c: the sm component: availability and module creation (btl_sm.h).
 */
#include "config.h"

#include "btl_sm.h"

#include "crmpi_status.h"

extern const crmpi_component_info_t crmpi_btl_sm_info;

static int btl_sm_component_query(const crmpi_component_t *component, int *priority_out,
                                  const char **reason_out)
{
    const crmpi_rte_job_info_t *job = crmpi_rte_job();

    /* A singleton has no job facts, and no local peer either. */
    if (!job || job->local_size <= 1) {
        *reason_out = "no other rank on this node";
        return CRMPI_ERR_NOT_SUPPORTED;
    }
    *priority_out = 0;
    return CRMPI_OK;
}

static int btl_sm_component_init(const crmpi_rte_job_info_t *job, crmpi_btl_module_t **module_out)
{
    btl_sm_module_t *module;
    int rc;

    rc = btl_sm_module_create(job, &module);
    if (rc != CRMPI_OK)
        return rc;
    *module_out = &module->super;
    return CRMPI_OK;
}

static const crmpi_btl_component_ops_t btl_sm_component_ops = {
    .init = btl_sm_component_init,
};

const crmpi_component_t crmpi_btl_sm_component = {
    .info = &crmpi_btl_sm_info,
    .query = btl_sm_component_query,
    .ops = &btl_sm_component_ops,
};
