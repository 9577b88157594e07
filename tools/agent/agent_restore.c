/*
 * agent_restore.c: a rank restored from a snapshot instead of started (agent.h): its images
 * copied from stable storage with every checksum checked (FileM), restored by the CRS, then
 * told where it runs now.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
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
#include "fs.h"
#include "log.h"
#include "mempolicy.h"
#include "session.h"
#include "snapshot.h"

/*
 * Is the job being ended? An ending signal waits in the agent's signalfd, or mpirun closed
 * its connection. The teardown of a restart stopped while CRIU restores can make CRIU fail
 * a moment before either shows, so a failed restore waits for them up to a second.
 */
static bool agent_restore_ended(agent_state_t *st)
{
    struct pollfd fds[2] = {{.fd = st->signal_fd, .events = POLLIN},
                            {.fd = st->hnp_fd, .events = POLLIN | POLLRDHUP}};

    for (int waited_ms = 0; waited_ms <= 1000; waited_ms += 50) {
        sigset_t pending;
        if (sigpending(&pending) == 0 &&
            (sigismember(&pending, SIGTERM) || sigismember(&pending, SIGHUP) ||
             sigismember(&pending, SIGINT)))
            return true;
        if (poll(fds, 2, 50) > 0 &&
            ((fds[0].revents & POLLIN) || (fds[1].revents & (POLLHUP | POLLRDHUP | POLLERR))))
            return true;
    }
    return false;
}
#include "snapshot_manifest.h"
#include "snapshot_rank_info.h"

extern char **environ;

/* The longest chain of incremental images a restore follows. */
#define AGENT_RESTORE_CHAIN_MAX 256

/* Copy this rank's images from `src` into `local`, checking every checksum (FileM). */
static int agent_restore_copy(agent_state_t *st, const char *src,
                              const crmpi_filem_manifest_t *manifest, const char *local)
{
    const crmpi_filem_ops_t *ops;
    int rc = crmpi_filem_base_open(&ops);

    if (rc == CRMPI_OK) {
        crmpi_filem_transfer_t transfer = {
            .rank = (int)st->info.rank, .src_dir = src, .dest_dir = local};

        crmpi_filem_tree_remove(local);
        rc = ops->get(&transfer, &manifest->ranks[st->info.rank]);
        crmpi_filem_base_close();
    }
    return rc; /* FileM said which file */
}

/*
 * Copy this rank's images of the sequence `seq_dir` (its manifest read) into `local` from
 * the fastest level that holds them intact: this node's own storage when it has them (the
 * rank's local copy when it ran here, its partner copy when this is its partner's node),
 * else the global level. Says which it used when the snapshot has copies on the nodes.
 */
static int agent_restore_get(agent_state_t *st, const char *seq_dir,
                             const crmpi_filem_manifest_t *manifest, const char *local)
{
    const crmpi_filem_rank_entry_t *entry = &manifest->ranks[st->info.rank];
    char jobdir[4096], host[256] = "", *local_seq = NULL, *src = NULL;
    bool global = manifest->levels & CRMPI_FILEM_LEVEL_GLOBAL;
    int rc = CRMPI_ERR_NOT_FOUND;

    snprintf(jobdir, sizeof(jobdir), "%s", seq_dir);
    char *slash = strrchr(jobdir, '/');
    if (slash)
        *slash = '\0';
    gethostname(host, sizeof(host) - 1);
    if ((manifest->levels & (CRMPI_FILEM_LEVEL_LOCAL | CRMPI_FILEM_LEVEL_PARTNER)) &&
        crmpi_filem_local_seq_dir(jobdir, manifest->seq, &local_seq) == CRMPI_OK &&
        crmpi_filem_rank_dir_path(local_seq, (int)st->info.rank, &src) == CRMPI_OK) {
        bool own = entry->host && strcmp(entry->host, host) == 0;

        if (access(src, F_OK) == 0)
            rc = agent_restore_copy(st, src, manifest, local);
        if (rc == CRMPI_OK && own)
            crmpi_log_info("rank %u: sequence %u read from the local level (%s)", st->info.rank,
                           manifest->seq, src);
        else if (rc == CRMPI_OK)
            crmpi_log_info("rank %u: sequence %u read from its partner copy (%s; the rank ran "
                           "on %s)",
                           st->info.rank, manifest->seq, src, entry->host ? entry->host : "?");
        else if (global)
            crmpi_log_info("rank %u: sequence %u %s on this node's own storage; reading the "
                           "global level",
                           st->info.rank, manifest->seq,
                           rc == CRMPI_ERR_NOT_FOUND ? "is not" : "is damaged (see above)");
        else
            crmpi_log_error("cannot restore rank %u: sequence %u is held only on the nodes' own "
                            "storage (%s%s%s), and %s on this node (%s); restart the rank on "
                            "one of those nodes, or from an older sequence held globally (--seq)",
                            st->info.rank, manifest->seq, entry->host ? entry->host : "?",
                            entry->partner ? ", partner " : "",
                            entry->partner ? entry->partner : "",
                            rc == CRMPI_ERR_NOT_FOUND ? "is not" : "is damaged", src);
        free(src);
        src = NULL;
    }
    free(local_seq);
    if (rc != CRMPI_OK && global) {
        rc = crmpi_filem_rank_dir_path(seq_dir, (int)st->info.rank, &src);
        if (rc == CRMPI_OK)
            rc = agent_restore_copy(st, src, manifest, local);
        free(src);
    }
    return rc;
}

/* The manifest of `seq_dir`, checked against this job. */
static int agent_restore_manifest(agent_state_t *st, const char *seq_dir,
                                  crmpi_filem_manifest_t **manifest_out)
{
    char problem[CRMPI_FILEM_PROBLEM_MAX];
    int rc = crmpi_filem_manifest_read(seq_dir, false, manifest_out, problem);

    if (rc != CRMPI_OK) {
        crmpi_log_error("cannot restore rank %u: %s", st->info.rank, problem);
        return rc;
    }
    if ((*manifest_out)->num_ranks != st->info.size) {
        crmpi_log_error("cannot restore: the snapshot %s has %zu ranks, this job %u", seq_dir,
                        (*manifest_out)->num_ranks, st->info.size);
        crmpi_filem_manifest_destroy(*manifest_out);
        return CRMPI_ERR_BAD_PARAM;
    }
    return CRMPI_OK;
}

/*
 * Restore mode: copy this rank's images from the snapshot to node-local storage, checking
 * every checksum, and restore them as the rank (agent_crs.h). Incremental images bring the
 * images of their parent sequences along, down to a full one: <session>/restore/<seq>/ each.
 */
int agent_restore(agent_state_t *st, const char *seq_dir, const char *cpuset)
{
    char *parents[AGENT_RESTORE_CHAIN_MAX + 1] = {NULL};
    char restore_dir[4096], local[4200], images[4300], err[1024], jobdir[4096];
    crmpi_filem_manifest_t *manifest = NULL;
    size_t depth = 0;
    int rc;

    if ((rc = agent_restore_manifest(st, seq_dir, &manifest)) != CRMPI_OK)
        return rc;
    st->restart_seq = manifest->seq;
    /* The agents of a node share the session directory: restore/rank.<r>/ is this one's. */
    snprintf(restore_dir, sizeof(restore_dir), "%s/restore", st->info.session_dir);
    mkdir(restore_dir, 0700);
    snprintf(restore_dir, sizeof(restore_dir), "%s/restore/rank.%u", st->info.session_dir,
             st->info.rank);
    crmpi_filem_tree_remove(restore_dir);
    if (mkdir(restore_dir, 0700) < 0) {
        crmpi_log_error("cannot create %s: %s", restore_dir, strerror(errno));
        crmpi_filem_manifest_destroy(manifest);
        return CRMPI_ERR_IO;
    }
    snprintf(local, sizeof(local), "%s/%u", restore_dir, manifest->seq);
    snprintf(images, sizeof(images), "%s/criu", local);
    rc = agent_restore_get(st, seq_dir, manifest, local);
    /* The chain: each parent is an older sequence of the same snapshot (<jobdir>/<seq>). */
    snprintf(jobdir, sizeof(jobdir), "%s", seq_dir);
    char *slash = strrchr(jobdir, '/');
    if (slash)
        *slash = '\0';
    while (rc == CRMPI_OK && manifest->ranks[st->info.rank].parent) {
        unsigned parent = manifest->ranks[st->info.rank].parent;
        char parent_seq_dir[4300], parent_local[4300];

        if (parent >= manifest->seq || depth == AGENT_RESTORE_CHAIN_MAX) {
            crmpi_log_error("cannot restore rank %u: the images of sequence %u name a bad "
                            "parent sequence (%u)",
                            st->info.rank, manifest->seq, parent);
            rc = CRMPI_ERR_PROTO;
            break;
        }
        snprintf(parent_seq_dir, sizeof(parent_seq_dir), "%s/%u", jobdir, parent);
        snprintf(parent_local, sizeof(parent_local), "%s/%u", restore_dir, parent);
        crmpi_filem_manifest_destroy(manifest);
        manifest = NULL;
        if ((rc = agent_restore_manifest(st, parent_seq_dir, &manifest)) != CRMPI_OK)
            break;
        rc = agent_restore_get(st, parent_seq_dir, manifest, parent_local);
        if (!(parents[depth] = malloc(strlen(parent_local) + sizeof("/criu")))) {
            rc = CRMPI_ERR_OUT_OF_RESOURCE;
            break;
        }
        sprintf(parents[depth++], "%s/criu", parent_local);
    }
    crmpi_filem_manifest_destroy(manifest);
    if (rc == CRMPI_OK) {
        /* A failed restore's CRIU log is kept where it outlives the job (the session
         * directory does not): the message names it, and it must still be there to be read. */
        char keep_log[4200], parent[4096];
        bool keep = crmpi_session_parent(parent, sizeof(parent)) == CRMPI_OK;
        if (keep)
            snprintf(keep_log, sizeof(keep_log), "%s/restore.%llu.rank%u.log", parent,
                     (unsigned long long)st->info.jobid, st->info.rank);
        rc = agent_crs_restore(images, (const char *const *)parents, cpuset, keep ? keep_log : NULL,
                               &st->child, &st->restart_entries, err, sizeof(err));
        /* Ended meanwhile (mpirun's --timeout, a signal to the job; the agent's ending
         * signals wait in its signalfd, and mpirun may already have closed its end): CRIU
         * failed because the job is being torn down, and nothing of the job may outlive
         * it, its log included. */
        if (rc != CRMPI_OK && keep && agent_restore_ended(st)) {
            unlink(keep_log);
            rmdir(parent); /* made for the log; the node's other jobs may still use it */
            crmpi_log_error("cannot restore rank %u: the job was ended during its restore",
                            st->info.rank);
        } else if (rc != CRMPI_OK) {
            crmpi_log_error("cannot restore rank %u: %s", st->info.rank, err);
        }
    }
    crmpi_filem_tree_remove(restore_dir);
    for (size_t i = 0; i < depth; i++)
        free(parents[i]);
    return rc;
}

/* Copy `src` to `dest` through "<dest>.restart", fsynced and renamed into place. */
static int agent_app_copy(const char *src, const char *dest)
{
    char tmp[4200];
    struct stat st;
    int in, out = -1, rc = CRMPI_ERR_IO;

    /* A rank restarted on another node may find none of its files' directories there. */
    crmpi_mkdirs(dest, false); /* or the copy below says what failed */
    snprintf(tmp, sizeof(tmp), "%s.restart", dest);
    in = open(src, O_RDONLY | O_CLOEXEC);
    if (in >= 0 && fstat(in, &st) == 0 &&
        (out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)) >= 0)
        rc = crmpi_fd_copy(in, out, (uint64_t)st.st_size);
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0)
        rc = CRMPI_ERR_IO;
    if (rc == CRMPI_OK && rename(tmp, dest) != 0)
        rc = CRMPI_ERR_IO;
    if (rc != CRMPI_OK && out >= 0)
        unlink(tmp);
    return rc;
}

int agent_app_restore(agent_state_t *st, const char *seq_dir)
{
    crmpi_filem_manifest_t *manifest = NULL;
    crmpi_filem_rank_info_t *info = NULL;
    char local[4200], backup[4300];
    const char *dest = NULL;
    int rc;

    if ((rc = agent_restore_manifest(st, seq_dir, &manifest)) != CRMPI_OK)
        return rc;
    if (!manifest->crs || strncmp(manifest->crs, "pheap", 5) != 0) {
        crmpi_log_error("cannot start rank %u from %s: it is not a snapshot of application "
                        "checkpoints (restart it with ompi-restart)",
                        st->info.rank, seq_dir);
        crmpi_filem_manifest_destroy(manifest);
        return CRMPI_ERR_BAD_PARAM;
    }
    snprintf(local, sizeof(local), "%s/restore", st->info.session_dir);
    mkdir(local, 0700);
    snprintf(local, sizeof(local), "%s/restore/app.%u", st->info.session_dir, st->info.rank);
    rc = agent_restore_get(st, seq_dir, manifest, local); /* every checksum checked */
    crmpi_filem_manifest_destroy(manifest);
    if (rc != CRMPI_OK) {
        crmpi_log_error("cannot start rank %u: its files of %s cannot be read (see above)",
                        st->info.rank, seq_dir);
        goto out_remove;
    }
    rc = crmpi_filem_rank_info_read(local, &info);
    if (rc == CRMPI_OK)
        rc = crmpi_filem_rank_info_get_string(info, "pheap", "backup", &dest);
    if (rc != CRMPI_OK || !dest || dest[0] != '/') {
        crmpi_log_error("cannot start rank %u: %s does not say where its backup file goes "
                        "(rank.json, \"pheap\")",
                        st->info.rank, seq_dir);
        rc = CRMPI_ERR_PROTO;
        goto out_destroy;
    }
    snprintf(backup, sizeof(backup), "%s/pheap/backup", local);
    if (access(backup, R_OK) != 0) {
        crmpi_log_error("cannot start rank %u: sequence %s holds no backup file for it",
                        st->info.rank, seq_dir);
        rc = CRMPI_ERR_NOT_FOUND;
        goto out_destroy;
    }
    rc = agent_app_copy(backup, dest);
    if (rc != CRMPI_OK)
        crmpi_log_error("cannot start rank %u: cannot put its backup back as %s: %s", st->info.rank,
                        dest, strerror(errno));
out_destroy:
    crmpi_filem_rank_info_destroy(info);
out_remove:
    crmpi_filem_tree_remove(local);
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
    /* The memory policies and huge-page ranges ride as more entries: ranks that do not know
     * them skip them. */
    for (char **e = st->restart_entries; e && *e; e++)
        count++;
    crmpi_buf_init(&buf);
    crmpi_buf_put_u32(&buf, count);
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, prefix, sizeof(prefix) - 1) == 0)
            crmpi_buf_put_str(&buf, *e);
    }
    for (char **e = st->restart_entries; e && *e; e++)
        crmpi_buf_put_str(&buf, *e);
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
