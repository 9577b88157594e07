/*
 * mpirun_cr.c: mpirun's part in checkpoint/restart (mpirun.h). mpirun hosts the global
 * coordinator (snapc_global.h): this file gives it the way to the agents, the launch facts
 * each snapshot's manifest records (what a restart needs to launch the job again), and
 * the end of a --term checkpoint; and checks, for --restore, the snapshot it restores.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "ctl.h"
#include "filem.h"
#include "filem_fs.h"
#include "log.h"
#include "mpirun.h"
#include "component.h"
#include "param.h"
#include "snapshot.h"
#include "snapshot_manifest.h"

static int mpirun_snapc_send(void *arg, int rank, crmpi_ctl_type_t type, uint32_t seq,
                             const crmpi_buf_t *payload)
{
    mpirun_state_t *st = arg;
    int fd = st->job.agents[rank].ctl_fd;

    /* A restoring agent is connected before its rank exists: no checkpoint begins then. */
    if (fd < 0 || (type == CRMPI_CTL_CKPT_BEGIN && !st->agents[rank].started))
        return CRMPI_ERR_PEER_GONE;
    return crmpi_ctl_send(fd, type, seq, CRMPI_OK, payload ? payload->data : NULL,
                          payload ? payload->len : 0);
}

/* ompi-checkpoint --term: the images are written; the job ends, successfully. */
static void mpirun_snapc_terminate(void *arg)
{
    mpirun_state_t *st = arg;

    crmpi_log_info("job %llu checkpointed; ending it as ompi-checkpoint --term asked",
                   (unsigned long long)st->job.jobid);
    mpirun_teardown(st, SIGTERM);
}

/* What a restart needs to launch the job again, for each snapshot's manifest. */
static void mpirun_snapc_manifest(void *arg, crmpi_filem_manifest_t *manifest)
{
    mpirun_state_t *st = arg;
    const mpirun_options_t *opts = st->opts;
    char np[16], map_by[64];

    crmpi_filem_manifest_argv_set(manifest, opts->argc, opts->argv);
    crmpi_filem_kv_list_add(&manifest->launch, "program", st->program);
    snprintf(np, sizeof(np), "%d", st->map.np);
    crmpi_filem_kv_list_add(&manifest->launch, "np", np);
    crmpi_filem_kv_list_add(&manifest->launch, "map-by",
                            mpirun_options_map_by_text(opts, map_by, sizeof(map_by)));
    crmpi_filem_kv_list_add(&manifest->launch, "bind-to",
                            mpirun_options_bind_to_text(opts->bind_to));
    /* Where the ranks ran, for the record. */
    crmpi_filem_kv_list_add(&manifest->launch, "hosts", st->hosts);
    if (crmpi_plm_base_selected())
        crmpi_filem_kv_list_add(&manifest->launch, "launcher", crmpi_plm_base_selected());
    /* Periodic checkpoints go on after a restart, as the job was launched. */
    if (opts->ckpt_interval_s > 0 || opts->ckpt_auto) {
        char value[32];

        if (opts->ckpt_auto)
            snprintf(value, sizeof(value), "auto");
        else
            snprintf(value, sizeof(value), "%g", opts->ckpt_interval_s);
        crmpi_filem_kv_list_add(&manifest->launch, "ckpt-interval", value);
        if (opts->ckpt_auto) {
            snprintf(value, sizeof(value), "%g", opts->mtbf_s);
            crmpi_filem_kv_list_add(&manifest->launch, "mtbf", value);
        }
    }
    for (size_t m = 0; m < opts->num_mca; m++)
        crmpi_filem_kv_list_add(&manifest->mca, opts->mca_names[m], opts->mca_values[m]);
}

int mpirun_snapc_create(mpirun_state_t *st)
{
    const mpirun_options_t *opts = st->opts;
    crmpi_snapc_global_params_t params = {
        .np = st->map.np,
        .jobid = st->job.jobid,
        .program = st->program,
        .enabled = opts->with_ft_cr,
        .send_fn = mpirun_snapc_send,
        .terminate_fn = mpirun_snapc_terminate,
        .manifest_fn = mpirun_snapc_manifest,
        .arg = st,
    };
    char *global_dir = NULL, *jobdir = NULL;
    int64_t timeout_s = 0, initial_cost_s = 1;
    int rc;

    if (opts->with_ft_cr) {
        /* The ranks learn it through the environment, like every --mca override. */
        if (crmpi_param_set_override("ft_cr_enable", "true") != CRMPI_OK ||
            crmpi_filem_base_global_dir(&global_dir) != CRMPI_OK ||
            crmpi_filem_base_keep(&params.keep) != CRMPI_OK ||
            crmpi_param_get_bool("snapc_base_make_room", &params.make_room) != CRMPI_OK ||
            crmpi_param_get_bool("snapc_base_blocking", &params.blocking) != CRMPI_OK ||
            crmpi_filem_base_levels(&params.levels) != CRMPI_OK ||
            crmpi_filem_jobdir_path(global_dir, st->job.jobid, &jobdir) != CRMPI_OK) {
            free(global_dir);
            return CRMPI_ERR_BAD_PARAM;
        }
    }
    if ((params.levels.mask & CRMPI_FILEM_LEVEL_PARTNER) && st->map.num_nodes < 2) {
        if (!opts->restore) {
            crmpi_log_error("filem_levels: the partner level keeps each rank's images on "
                            "another node of the job, and this job has one node (give its "
                            "nodes with --host or --hostfile)");
            free(global_dir);
            free(jobdir);
            return CRMPI_ERR_BAD_PARAM;
        }
        /* A restart on what is left of the nodes (one, after a node was lost) goes on;
         * its checkpoints go to the other levels. */
        params.levels.mask &= ~(unsigned)CRMPI_FILEM_LEVEL_PARTNER;
        if (!params.levels.mask) {
            params.levels.mask = CRMPI_FILEM_LEVEL_GLOBAL;
            params.levels.interval[1] = 1;
        }
        crmpi_log_warn("filem_levels: this restart runs on one node, so its checkpoints have no "
                       "partner level (they go to the others)");
    }
    bool incremental = false;
    int64_t chain = 0;
    crmpi_param_get_bool("crs_criu_incremental", &incremental);
    crmpi_param_get_int("crs_criu_incremental_chain", &chain);
    params.incremental_chain = incremental && chain > 0 ? (unsigned)chain : 0;
    crmpi_param_get_int("snapc_base_timeout", &timeout_s);
    crmpi_param_get_int("snapc_base_periodic_initial_cost", &initial_cost_s);
    const char *crs = NULL;
    params.app_only =
        crmpi_param_get_string("crs", &crs) == CRMPI_OK && crmpi_component_named(crs, "pheap");
    params.jobdir = jobdir;
    params.timeout_s = (int)timeout_s;
    params.ckpt_interval_s = opts->ckpt_interval_s;
    params.mtbf_s = opts->ckpt_auto ? opts->mtbf_s : 0.0;
    params.initial_cost_s = initial_cost_s > 0 ? (double)initial_cost_s : 1.0;
    rc = crmpi_snapc_global_create(&params, &st->snapc);
    if (rc != CRMPI_OK)
        crmpi_log_error("out of memory for the checkpoint coordinator");
    free(global_dir);
    free(jobdir);
    return rc;
}

/* A sequence held only on the nodes' own storage: where each rank's copies are, for the
 * map (a rank is placed where one of them is when the hosts allow it). */
static int mpirun_restore_copies(mpirun_options_t *opts, const crmpi_filem_manifest_t *manifest)
{
    const unsigned on_nodes = CRMPI_FILEM_LEVEL_LOCAL | CRMPI_FILEM_LEVEL_PARTNER;

    if ((manifest->levels & CRMPI_FILEM_LEVEL_GLOBAL) || !(manifest->levels & on_nodes))
        return CRMPI_OK;
    opts->restore_copies = calloc(manifest->num_ranks, sizeof(*opts->restore_copies));
    if (!opts->restore_copies)
        goto err_no_memory;
    for (size_t r = 0; r < manifest->num_ranks; r++) {
        const crmpi_filem_rank_entry_t *entry = &manifest->ranks[r];
        mpirun_copy_nodes_t *copies = &opts->restore_copies[r];

        if (((manifest->levels & CRMPI_FILEM_LEVEL_LOCAL) && entry->host &&
             !(copies->host = strdup(entry->host))) ||
            ((manifest->levels & CRMPI_FILEM_LEVEL_PARTNER) && entry->partner &&
             !(copies->partner = strdup(entry->partner))))
            goto err_no_memory;
    }
    return CRMPI_OK;

err_no_memory:
    crmpi_log_error("out of memory reading where the snapshot's copies are");
    return CRMPI_ERR_OUT_OF_RESOURCE;
}

int mpirun_restore_check(mpirun_options_t *opts)
{
    char problem[CRMPI_FILEM_PROBLEM_MAX];
    crmpi_filem_manifest_t *manifest;
    int rc = crmpi_filem_manifest_read(opts->restore, false, &manifest, problem);

    if (rc != CRMPI_OK) {
        crmpi_log_error("--restore %s: %s", opts->restore, problem);
        return rc;
    }
    if (opts->np && (size_t)opts->np != manifest->num_ranks) {
        crmpi_log_error("--restore %s: the snapshot has %zu ranks and a restart keeps them all; "
                        "-np %d cannot take them",
                        opts->restore, manifest->num_ranks, opts->np);
        rc = CRMPI_ERR_BAD_PARAM;
    } else {
        opts->np = (int)manifest->num_ranks;
        rc = mpirun_restore_copies(opts, manifest);
    }
    crmpi_filem_manifest_destroy(manifest);
    return rc;
}

int mpirun_app_restart_check(mpirun_options_t *opts, const char *seq_dir)
{
    char problem[CRMPI_FILEM_PROBLEM_MAX];
    crmpi_filem_manifest_t *manifest;
    int rc = crmpi_filem_manifest_read(seq_dir, false, &manifest, problem);

    if (rc != CRMPI_OK) {
        crmpi_log_error("snapc_base_app_restart %s: %s", seq_dir, problem);
        return rc;
    }
    if (!manifest->crs || strncmp(manifest->crs, "pheap", 5) != 0) {
        crmpi_log_error("snapc_base_app_restart %s: not a snapshot of application checkpoints "
                        "(MPIX_Checkpoint); restart it with ompi-restart",
                        seq_dir);
        rc = CRMPI_ERR_BAD_PARAM;
    } else if (opts->np && (size_t)opts->np != manifest->num_ranks) {
        crmpi_log_error("snapc_base_app_restart %s: the snapshot has %zu ranks, each with its "
                        "own backup, and a restart keeps them all; -np %d cannot take them",
                        seq_dir, manifest->num_ranks, opts->np);
        rc = CRMPI_ERR_BAD_PARAM;
    } else {
        opts->np = (int)manifest->num_ranks;
        opts->with_ft_cr = true; /* the restarted job can be checkpointed again */
    }
    crmpi_filem_manifest_destroy(manifest);
    return rc;
}
