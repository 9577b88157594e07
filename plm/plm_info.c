/*
 * plm_info.c: catalog descriptors of the plm (process launch) framework (plm.h), used by
 * mpirun. Pure data, linked into every binary so crmpi_info and unknown-parameter checks
 * see it.
 */
#include "component.h"

static const crmpi_param_decl_t plm_base_params[] = {
    {"plm_base_if_include", CRMPI_PARAM_STRING, "",
     "Where mpirun listens for the agents of other nodes: an interface name (eth0) or a "
     "subnet (10.0.0.0/24); empty means the interface of the route to the job's first other "
     "node.",
     CRMPI_PARAM_LEVEL_USER},
};

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

static const crmpi_param_decl_t plm_ompi_params[] = {
    {"plm_ompi_mpirun", CRMPI_PARAM_STRING, CRMPI_OMPI_MPIRUN,
     "Open MPI 4.1's mpirun (orterun), which starts the agents on the job's hosts through its "
     "daemons.",
     CRMPI_PARAM_LEVEL_USER},
    {"plm_ompi_args", CRMPI_PARAM_STRING, "",
     "More arguments for Open MPI's mpirun, separated by blanks (--mca plm_rsh_agent ssh); "
     "its OMPI_MCA_* environment variables are passed on as well.",
     CRMPI_PARAM_LEVEL_USER},
    {"plm_ompi_agent", CRMPI_PARAM_STRING, "",
     "Path of the crmpi-agent program on every node; empty means the one installed beside "
     "mpirun (the nodes need the same installation at the same path).",
     CRMPI_PARAM_LEVEL_DEV},
    {"plm_ompi_kill_grace", CRMPI_PARAM_INT, "5000",
     "Milliseconds between SIGTERM and SIGKILL when mpirun tears a job down.",
     CRMPI_PARAM_LEVEL_TUNER},
};

const crmpi_component_info_t crmpi_plm_ompi_info = {
    .framework = "plm",
    .name = "ompi",
    .description = "start the agents on the job's hosts through Open MPI's mpirun and its "
                   "daemons (their PMIx servers)",
    .params = plm_ompi_params,
    .num_params = sizeof(plm_ompi_params) / sizeof(plm_ompi_params[0]),
};

static const crmpi_component_info_t *const plm_components[] = {&crmpi_plm_local_info,
                                                               &crmpi_plm_ompi_info, NULL};

const crmpi_framework_info_t crmpi_plm_framework_info = {
    .name = "plm",
    .description = "process launch: how mpirun starts the agents that run the ranks",
    .components = plm_components,
    .base_params = plm_base_params,
    .num_base_params = sizeof(plm_base_params) / sizeof(plm_base_params[0]),
};
