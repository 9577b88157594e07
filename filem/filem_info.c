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

static const crmpi_param_decl_t filem_base_params[] = {
    {"filem_levels", CRMPI_PARAM_STRING, "global",
     "Where each checkpoint's images are kept: a comma-separated list of levels, each with "
     "an optional :N to take every Nth checkpoint of the job there (the first checkpoint goes "
     "to every level). local: the node's own storage (filem_local_dir), where the images "
     "stay after the dump; partner: the same storage on another node of the job (the next "
     "node of the job, in the order of the map), sent over the network by the agents, so "
     "that a lost node's ranks can restart from there; global: the snapshot directory "
     "(snapc_base_global_snapshot_dir). "
     "The application is blocked only for the dump; the copies run while it goes on. A "
     "restart takes each rank's images from the fastest level that holds them intact. "
     "Example: local,partner:2,global:8.",
     CRMPI_PARAM_LEVEL_USER},
    {"filem_global_max_rate", CRMPI_PARAM_SIZE, "0",
     "Bytes per second each rank's copy to the global level reads at most (k, m, g: powers of "
     "1024), so that the checkpoints of a job leave the shared file system's bandwidth to "
     "others; 0: no cap. The copy runs while the application goes on (semi-blocking) or "
     "while it waits (snapc_base_blocking), so a cap lengthens only the former's background "
     "time and the latter's blocked time. Restarts read without a cap.",
     CRMPI_PARAM_LEVEL_USER},
    {"filem_copy_cpus", CRMPI_PARAM_STRING, "node",
     "Where each agent's background copies of its rank's images (checksums, compression, "
     "writes) run: node: on any CPU of the node, so that they can use cores no rank is bound "
     "to instead of taking the rank's; rank: on the CPUs the rank is bound to.",
     CRMPI_PARAM_LEVEL_TUNER},
    {"filem_local_dir", CRMPI_PARAM_STRING, "",
     "Directory on each node's own storage for the local and partner levels (filem_levels); a "
     "job's "
     "images go to <dir>/<jobid>.ckpt/<seq>/rank.<r>. Empty: local/ in the user's session "
     "directory parent (runtime_session_dir_base, else TMPDIR, else /tmp: crmpi-<uid>).",
     CRMPI_PARAM_LEVEL_USER},
};

const crmpi_framework_info_t crmpi_filem_framework_info = {
    .name = "filem",
    .description = "file management: moves snapshots between node-local and stable storage",
    .components = filem_components,
    .base_params = filem_base_params,
    .num_base_params = sizeof(filem_base_params) / sizeof(filem_base_params[0]),
};
