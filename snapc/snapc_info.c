/*
 * snapc_info.c: catalog descriptors of the snapc (snapshot coordination) framework, its
 * base parameters (where global snapshots go, how many are kept, how long a step may
 * take) and its one component, full, after Open MPI 1.x's: a
 * global (mpirun), a local (agent) and an application (rank) coordinator. Pure data,
 * linked into every binary so crmpi_info and unknown-parameter checks see it.
 */
#include "component.h"

static const crmpi_param_decl_t snapc_base_params[] = {
    {"snapc_base_global_snapshot_dir", CRMPI_PARAM_STRING, "$HOME/crmpi_snapshots",
     "Directory of global snapshots, on storage every node can reach; a job's snapshots go "
     "to <dir>/<jobid>.ckpt. A leading $HOME or ~ is replaced by the home directory.",
     CRMPI_PARAM_LEVEL_USER},
    {"snapc_base_keep", CRMPI_PARAM_INT, "2",
     "How many committed sequences of a job's snapshot to keep (the newest ones); older ones "
     "are removed after each commit, from the snapshot directory and from the nodes' own "
     "storage (filem_levels local and partner). The newest committed sequence is never "
     "removed; 0 keeps every sequence. Keep at least 2 so that a restart can fall back to "
     "the previous sequence when the newest one is damaged.",
     CRMPI_PARAM_LEVEL_USER},
    {"snapc_base_make_room", CRMPI_PARAM_BOOL, "false",
     "When the snapshot directory's file system has less room than the newest committed "
     "sequence takes, remove the oldest committed sequences (never the newest, nor one it "
     "depends on) before a checkpoint starts, until it has. Off: the checkpoint starts "
     "anyway, with a warning that it may not fit (it then fails cleanly if it does not).",
     CRMPI_PARAM_LEVEL_USER},
    {"snapc_base_blocking", CRMPI_PARAM_BOOL, "false",
     "Hold the application suspended until each checkpoint is committed (the copies to "
     "every level included), as a blocking checkpoint does. Off (the default), it goes on "
     "once its ranks are dumped and the copies run meanwhile. For measuring what that "
     "saves (bench/multilevel).",
     CRMPI_PARAM_LEVEL_TUNER},
    {"snapc_base_timeout", CRMPI_PARAM_INT, "120",
     "Seconds the global coordinator waits for every rank at each step of a checkpoint "
     "(bookmarks, drain, suspend, dump, continue, store) before it aborts the checkpoint "
     "and lets the job go on.",
     CRMPI_PARAM_LEVEL_USER},
    {"snapc_base_periodic_initial_cost", CRMPI_PARAM_INT, "1",
     "With mpirun --ckpt-interval auto: the seconds a checkpoint is assumed to block the "
     "application before the first one is measured; Daly's interval for the first "
     "checkpoint comes from it, later ones from the measured costs.",
     CRMPI_PARAM_LEVEL_TUNER},
    {"snapc_base_app_restart", CRMPI_PARAM_STRING, "",
     "Set by ompi-restart for a snapshot of application checkpoints (MPIX_Checkpoint): the "
     "sequence directory the job restarts from. Each agent puts its rank's backup file back "
     "where the program wrote it before it starts the program, and MPIX_Restart_status "
     "reports the restart. Empty: a fresh start.",
     CRMPI_PARAM_LEVEL_DEV},
};

const crmpi_component_info_t crmpi_snapc_full_info = {
    .framework = "snapc",
    .name = "full",
    .description = "coordinated snapshots: global (mpirun), local (agent), application (rank)",
};

static const crmpi_component_info_t *const snapc_components[] = {&crmpi_snapc_full_info, NULL};

const crmpi_framework_info_t crmpi_snapc_framework_info = {
    .name = "snapc",
    .description = "snapshot coordination: the checkpoint protocol across mpirun, agents and ranks",
    .components = snapc_components,
    .base_params = snapc_base_params,
    .num_base_params = sizeof(snapc_base_params) / sizeof(snapc_base_params[0]),
};
