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
    {"filem_posix_compress", CRMPI_PARAM_STRING, "off",
     "Compress the ranks' memory images with zstd on their way to stable storage: off, on, "
     "or auto (when a sample of each image shows that compressing is faster than writing "
     "what it saves, by the write bandwidth measured on earlier copies). Restarts read "
     "either kind.",
     CRMPI_PARAM_LEVEL_USER},
    {"filem_posix_compress_level", CRMPI_PARAM_INT, "3",
     "zstd's compression level for filem_posix_compress (1 fastest ... 19).",
     CRMPI_PARAM_LEVEL_TUNER},
    {"filem_posix_compress_threads", CRMPI_PARAM_INT, "2",
     "zstd's worker threads per copy for filem_posix_compress (0 or 1: none).",
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
