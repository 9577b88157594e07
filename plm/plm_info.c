/*
 * plm_info.c: catalog descriptors of the plm (process launch) framework (plm.h), used by
 * mpirun. Pure data, linked into every binary so crmpi_info and unknown-parameter checks
 * see it.
 */
#include "component.h"

static const crmpi_param_decl_t plm_local_params[] = {
    {"plm_local_agent", CRMPI_PARAM_STRING, "",
     "Path of the crmpi-agent program to start for each rank; empty means the one installed "
     "beside mpirun.",
     CRMPI_PARAM_LEVEL_DEV},
    {"plm_local_kill_grace", CRMPI_PARAM_INT, "2000",
     "Milliseconds between SIGTERM and SIGKILL when mpirun tears a job down.",
     CRMPI_PARAM_LEVEL_TUNER},
};

const crmpi_component_info_t crmpi_plm_local_info = {
    .framework = "plm",
    .name = "local",
    .description = "fork one crmpi-agent per rank on this node; embedded PMIx server",
    .params = plm_local_params,
    .num_params = sizeof(plm_local_params) / sizeof(plm_local_params[0]),
};

static const crmpi_component_info_t *const plm_components[] = {&crmpi_plm_local_info, NULL};

const crmpi_framework_info_t crmpi_plm_framework_info = {
    .name = "plm",
    .description = "process launch: how mpirun starts the agents that run the ranks",
    .components = plm_components,
};
