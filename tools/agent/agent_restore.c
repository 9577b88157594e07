/*
 * agent_restore.c: a rank restored from a snapshot instead of started (agent.h): its images
 * copied from stable storage with every checksum checked (FileM), restored by the CRS, then
 * told where it runs now.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "agent_crs.h"
#include "crmpi_status.h"
#include "filem.h"
#include "filem_fs.h"
#include "log.h"
#include "session.h"
#include "snapshot.h"
#include "snapshot_manifest.h"

extern char **environ;

/*
 * Restore mode: copy this rank's images from the snapshot to node-local storage, checking
 * every checksum, and restore them as the rank (agent_crs.h).
 */
int agent_restore(agent_state_t *st, const char *seq_dir, const char *cpuset)
{
    char problem[CRMPI_FILEM_PROBLEM_MAX], local[4096], images[4200], err[1024];
    crmpi_filem_manifest_t *manifest = NULL;
    const crmpi_filem_ops_t *ops;
    char *src = NULL;
    int rc;

    rc = crmpi_filem_manifest_read(seq_dir, false, &manifest, problem);
    if (rc != CRMPI_OK) {
        crmpi_log_error("cannot restore rank %u: %s", st->info.rank, problem);
        return rc;
    }
    if (manifest->num_ranks != st->info.size) {
        crmpi_log_error("cannot restore: the snapshot %s has %zu ranks, this job %u", seq_dir,
                        manifest->num_ranks, st->info.size);
        crmpi_filem_manifest_destroy(manifest);
        return CRMPI_ERR_BAD_PARAM;
    }
    st->restart_seq = manifest->seq;
    snprintf(local, sizeof(local), "%s/restore", st->info.session_dir);
    if (mkdir(local, 0700) < 0 && errno != EEXIST) {
        crmpi_log_error("cannot create %s: %s", local, strerror(errno));
        crmpi_filem_manifest_destroy(manifest);
        return CRMPI_ERR_IO;
    }
    snprintf(local, sizeof(local), "%s/restore/rank.%u", st->info.session_dir, st->info.rank);
    snprintf(images, sizeof(images), "%s/criu", local);
    rc = crmpi_filem_rank_dir_path(seq_dir, (int)st->info.rank, &src);
    if (rc == CRMPI_OK)
        rc = crmpi_filem_base_open(&ops);
    if (rc == CRMPI_OK) {
        crmpi_filem_transfer_t transfer = {
            .rank = (int)st->info.rank, .src_dir = src, .dest_dir = local};

        crmpi_filem_tree_remove(local);
        rc = ops->get(&transfer, &manifest->ranks[st->info.rank]);
        crmpi_filem_base_close();
    }
    free(src);
    crmpi_filem_manifest_destroy(manifest);
    if (rc != CRMPI_OK)
        return rc; /* FileM said which file */
    /* A failed restore's CRIU log is kept where it outlives the job (the session directory
     * does not): the message names it, and it must still be there to be read. */
    char keep_log[4200], parent[4096];
    bool keep = crmpi_session_parent(parent, sizeof(parent)) == CRMPI_OK;
    if (keep)
        snprintf(keep_log, sizeof(keep_log), "%s/restore.%llu.rank%u.log", parent,
                 (unsigned long long)st->info.jobid, st->info.rank);
    rc = agent_crs_restore(images, cpuset, keep ? keep_log : NULL, &st->child, err, sizeof(err));
    crmpi_filem_tree_remove(local);
    if (rc != CRMPI_OK)
        crmpi_log_error("cannot restore rank %u: %s", st->info.rank, err);
    return rc;
}

/* Tell the restored rank where it is now: the restart's parameters and job facts. */
int agent_restart_rank(agent_state_t *st)
{
    static const char prefix[] = "CRMPI_MCA_";
    crmpi_buf_t buf;
    uint32_t count = 0;
    int rc;

    for (char **e = environ; *e; e++)
        count += strncmp(*e, prefix, sizeof(prefix) - 1) == 0;
    crmpi_buf_init(&buf);
    crmpi_buf_put_u32(&buf, count);
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, prefix, sizeof(prefix) - 1) == 0)
            crmpi_buf_put_str(&buf, *e);
    }
    crmpi_rte_job_info_pack(&st->info, &buf);
    st->snapc.seq = st->restart_seq;
    st->snapc.in_checkpoint = true; /* until the rank's CKPT_CONTINUED */
    rc = buf.failed ? CRMPI_ERR_OUT_OF_RESOURCE
                    : crmpi_ctl_send(st->child.ctl_fd, CRMPI_CTL_CKPT_RESTART, st->restart_seq,
                                     CRMPI_OK, buf.data, buf.len);
    crmpi_buf_free(&buf);
    if (rc != CRMPI_OK)
        crmpi_log_error("cannot send the restored rank its new job facts: %s", crmpi_strerror(rc));
    return rc;
}
