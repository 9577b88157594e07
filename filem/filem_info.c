/*
 * filem_info.c: catalog descriptors of the filem (file management) framework and its one
 * component, posix (filem.h). Pure data, linked into every binary.
 */
#include "component.h"

static const crmpi_param_decl_t filem_posix_params[] = {
    {"filem_posix_buffer_size", CRMPI_PARAM_SIZE, "1m",
     "Size of each read and write when a rank's snapshot files are copied to or from stable "
     "storage.",
     CRMPI_PARAM_LEVEL_TUNER},
};

const crmpi_component_info_t crmpi_filem_posix_info = {
    .framework = "filem",
    .name = "posix",
    .description = "copy with read/write, sha256 on the fly and fsync, to storage every node "
                   "mounts (a shared or local file system)",
    .params = filem_posix_params,
    .num_params = sizeof(filem_posix_params) / sizeof(filem_posix_params[0]),
};

static const crmpi_component_info_t *const filem_components[] = {&crmpi_filem_posix_info, NULL};

const crmpi_framework_info_t crmpi_filem_framework_info = {
    .name = "filem",
    .description = "file management: moves snapshots between node-local and stable storage",
    .components = filem_components,
};
