/*
 * agent_crs.c: the agent's checkpointer through the crs framework (agent_crs.h).
 */
#include "config.h"

#include <stdio.h>
#include <unistd.h>

#include "agent_crs.h"
#include "crmpi_status.h"
#include "crs.h"
#include "log.h"
#include "param.h"

static const crmpi_crs_ops_t *agent_crs_ops;
static crmpi_crs_track_t *agent_crs_track; /* the rank's write tracking, or NULL */

/*
 * The agents of a node dump their ranks at the same time. CRIU's parasite, finding the
 * rank's /proc to be of another pid namespace, mounts a proc of its own on a fixed
 * directory name in the init's working directory, which the ranks of a job share; a dump
 * that meets another there fails before it dumped anything, and the CRS runs it again
 * after a random pause (crs-criu/README.md).
 */
static int agent_crs_dump(pid_t init_pid, const char *dir, const char *parent_dir,
                          crmpi_snapc_dump_result_t *result)
{
    crmpi_crs_ckpt_result_t ckpt = {0};
    crmpi_crs_ckpt_opts_t opts = {
        .init_pid = init_pid,
        .images_dir = dir,
        .track = agent_crs_track,
        .parent_dir = agent_crs_track ? parent_dir : NULL,
        .terminate = 0, /* --term ends the job after the commit, not here */
        .errbuf = result->error,
        .errbuf_len = sizeof(result->error),
    };
    int rc = agent_crs_ops->checkpoint(&opts, &ckpt);

    if (rc == CRMPI_OK) {
        result->image_bytes = ckpt.image_bytes;
        result->dump_seconds = ckpt.dump_seconds;
        result->pages_written = ckpt.pages_written;
        result->pages_dirty = ckpt.pages_dirty;
    }
    return rc;
}

/* An application checkpoint, whichever component was selected: crs pheap's dump. */
static int agent_crs_app_dump(const char *backup_path, const char *dir,
                              crmpi_snapc_dump_result_t *result)
{
    crmpi_crs_ckpt_result_t ckpt = {0};
    crmpi_crs_ckpt_opts_t opts = {
        .images_dir = dir,
        .backup_path = backup_path,
        .errbuf = result->error,
        .errbuf_len = sizeof(result->error),
    };
    int rc = crmpi_crs_pheap_ops.checkpoint(&opts, &ckpt);

    if (rc == CRMPI_OK) {
        result->image_bytes = ckpt.image_bytes;
        result->dump_seconds = ckpt.dump_seconds;
    }
    return rc;
}

static int agent_crs_track_open(pid_t rank_pid, int uffd)
{
    int rc;

    agent_crs_ops->track_close(agent_crs_track);
    agent_crs_track = NULL;
    rc = agent_crs_ops->track_open(rank_pid, uffd, &agent_crs_track);
    if (rc != CRMPI_OK)
        crmpi_log_warn("cannot track the writes of rank process %d (%s): its checkpoints "
                       "will be full ones",
                       (int)rank_pid, crmpi_strerror(rc));
    return rc;
}

static int agent_crs_flatten(const char *images_dir, const char *const *parents,
                             const char *out_dir, char *why, size_t why_len)
{
    return agent_crs_ops->flatten(images_dir, parents, out_dir, NULL, why, why_len);
}

void agent_crs_init(crmpi_snapc_local_t *local)
{
    const crmpi_component_t *component;

    local->app_dump = agent_crs_app_dump; /* needs no selection: a copy of a file */
    if (crmpi_framework_open(&crmpi_crs_framework) != CRMPI_OK)
        return;
    if (crmpi_framework_select_one(&crmpi_crs_framework, &component) != CRMPI_OK) {
        crmpi_framework_close(&crmpi_crs_framework);
        return; /* the component said why */
    }
    agent_crs_ops = component->ops;
    local->dump = agent_crs_dump;
    bool incremental = false;
    crmpi_param_get_bool("crs_criu_incremental", &incremental);
    if (incremental) {
        local->track = agent_crs_track_open;
        local->flatten = agent_crs_flatten;
    }
}

int agent_crs_restore(const char *images_dir, const char *const *parents, const char *cpuset,
                      const char *keep_log_as, crmpi_agent_ns_child_t *child_out,
                      char ***rank_entries_out, char *err, size_t err_len)
{
    crmpi_agent_ns_fds_t fds;
    pid_t init_pid;
    int rc;

    if (!agent_crs_ops) {
        snprintf(err, err_len, "CRIU cannot run here (crs_base_verbose 10 says why)");
        return CRMPI_ERR_NOT_SUPPORTED;
    }
    rc = crmpi_agent_ns_fds_open(&fds);
    if (rc != CRMPI_OK) {
        snprintf(err, err_len, "cannot create the rank's pipes and socket");
        return rc;
    }
    crmpi_crs_inherit_t inherit[CRMPI_CRS_NUM_FDS];
    for (int fd = 0; fd < CRMPI_CRS_NUM_FDS; fd++)
        inherit[fd] = (crmpi_crs_inherit_t){.rank_fd = fd, .fd = fds.rank_end[fd]};
    crmpi_crs_restart_opts_t opts = {
        .images_dir = images_dir,
        .parents = parents,
        .inherit = inherit,
        .num_inherit = CRMPI_CRS_NUM_FDS,
        .cpuset = cpuset,
        .keep_log_as = keep_log_as,
        .rank_entries_out = rank_entries_out,
        .errbuf = err,
        .errbuf_len = err_len,
    };
    rc = agent_crs_ops->restart(&opts, &init_pid);
    if (rc != CRMPI_OK) {
        crmpi_agent_ns_fds_close(&fds);
        return rc;
    }
    /* The rank's ends are the restored tree's now (crs passed copies). */
    *child_out = (crmpi_agent_ns_child_t){.init_pid = init_pid};
    crmpi_agent_ns_fds_handover(&fds, child_out);
    return CRMPI_OK;
}

void agent_crs_finalize(void)
{
    if (agent_crs_ops)
        agent_crs_ops->track_close(agent_crs_track);
    agent_crs_track = NULL;
    if (agent_crs_ops)
        crmpi_framework_close(&crmpi_crs_framework);
    agent_crs_ops = NULL;
}
