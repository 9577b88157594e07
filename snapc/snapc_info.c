/*
 * snapc_info.c: catalog descriptors of the snapc framework and its one component, full
 * (snapc.h), after Open MPI 1.x's: a global, a local and an application coordinator.
 */
#include "component.h"

static const crmpi_param_decl_t snapc_full_params[] = {
    {"snapc_base_global_snapshot_dir", CRMPI_PARAM_STRING, "",
     "Directory that receives the global snapshots, <jobid>.ckpt/ per job (stable storage "
     "every node can reach); empty means $HOME/crmpi_snapshots.",
     CRMPI_PARAM_LEVEL_USER},
    {"snapc_base_timeout", CRMPI_PARAM_INT, "120",
     "Seconds the global coordinator waits for every rank at each step of a checkpoint "
     "(bookmarks, drain, suspend, dump, continue) before it aborts the checkpoint and lets "
     "the job go on.",
     CRMPI_PARAM_LEVEL_USER},
};

const crmpi_component_info_t crmpi_snapc_full_info = {
    .framework = "snapc",
    .name = "full",
    .description = "coordinated snapshots: global (mpirun), local (agent), application (rank)",
    .params = snapc_full_params,
    .num_params = sizeof(snapc_full_params) / sizeof(snapc_full_params[0]),
};

static const crmpi_component_info_t *const snapc_components[] = {&crmpi_snapc_full_info, NULL};

const crmpi_framework_info_t crmpi_snapc_framework_info = {
    .name = "snapc",
    .description = "snapshot coordination of checkpoints",
    .components = snapc_components,
};
