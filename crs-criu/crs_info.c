/*
 * crs_info.c: catalog descriptors of the crs framework (checkpoint/restart service, run by
 * crmpi-agent) and its components criu and pheap (crs.h). Pure data, linked into every binary so
 * crmpi_info lists the parameters even in a build without libcriu.
 */
#include "config.h"

#include "component.h"

static const crmpi_param_decl_t crs_criu_params[] = {
    {"crs_criu_binary", CRMPI_PARAM_STRING, CRMPI_CRIU_INSTALLED,
     "The criu program libcriu runs (as \"criu swrk\") for every dump and restore; CRIU 4.x. "
     "The default is crmpi's installed copy of the one configure found, which make install "
     "run as root gives CAP_CHECKPOINT_RESTORE so that ordinary users can checkpoint.",
     CRMPI_PARAM_LEVEL_USER},
    {"crs_criu_breakpoints", CRMPI_PARAM_STRING, "auto",
     "Whether CRIU stops tasks with x86 hardware breakpoints: auto (find out once per "
     "process whether they fire here), yes, no. Some virtual machines accept breakpoints and "
     "never raise them, and CRIU then waits forever; with no, CRIU stops tasks at syscalls.",
     CRMPI_PARAM_LEVEL_TUNER},
    {"crs_criu_incremental", CRMPI_PARAM_BOOL, "0",
     "Incremental checkpoints: after a job's first checkpoint, each rank's images hold only "
     "the pages written since the previous one, found with userfaultfd write-protect "
     "(Linux 6.7 or later; elsewhere checkpoints stay full), and a restart reads the chain.",
     CRMPI_PARAM_LEVEL_USER},
    {"crs_criu_incremental_chain", CRMPI_PARAM_INT, "8",
     "With crs_criu_incremental: a full checkpoint after this many incremental ones, so "
     "that a restart reads at most this many deltas and older sequences can be removed.",
     CRMPI_PARAM_LEVEL_TUNER},
};

const crmpi_component_info_t crmpi_crs_criu_info = {
    .framework = "crs",
    .name = "criu",
    .description = "dump and restore a rank's pid namespace with CRIU (libcriu)",
    .params = crs_criu_params,
    .num_params = sizeof(crs_criu_params) / sizeof(crs_criu_params[0]),
};

const crmpi_component_info_t crmpi_crs_pheap_info = {
    .framework = "crs",
    .name = "pheap",
    .description = "application checkpoints only: each rank's persistent heap backup, taken "
                   "at its next MPIX_Checkpoint (chosen only by name: --mca crs pheap)",
};

static const crmpi_component_info_t *const crs_components[] = {&crmpi_crs_criu_info,
                                                               &crmpi_crs_pheap_info, NULL};

const crmpi_framework_info_t crmpi_crs_framework_info = {
    .name = "crs",
    .description = "checkpoint/restart service: saves and restores one rank's processes",
    .components = crs_components,
};
