/*
 * filem_base.c: the framework's shared code (filem.h): component selection, the global
 * snapshot directory, the coordinator's begin/commit/abort/cleanup, and restart's choice
 * of an intact sequence.
 *
 * Crash safety rests on three facts: a sequence directory gets its final name (rename of
 * <seq>.partial, atomic) only once every file in it and its manifest are fsync'ed; the
 * commit record is replaced by rename only after that rename is fsync'ed in the job
 * directory; and nothing the commit record lists is removed or modified before a newer
 * record that no longer lists it is durable.
 */
#include "config.h"

#include "filem.h"
#include "filem_posix.h"
#include "snapshot.h"
#include "snapshot_entry.h"
#include "snapshot_manifest.h"
#include "snapshot_commit.h"
#include "snapshot_int.h"
#include "filem_fs.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "fault.h"
#include "log.h"
#include "param.h"

/* Snapshots hold a process's whole memory: only their owner may read them. */
#define FILEM_DIR_MODE 0700

static const crmpi_component_t *const filem_components[] = {&filem_posix_component, NULL};

static crmpi_framework_t filem_framework = {
    .info = &crmpi_filem_framework_info,
    .components = filem_components,
};

int crmpi_filem_base_open(const crmpi_filem_ops_t **ops_out)
{
    const crmpi_component_t *selected;
    int rc;

    rc = crmpi_framework_open(&filem_framework);
    if (rc != CRMPI_OK)
        return rc;
    rc = crmpi_framework_select_one(&filem_framework, &selected);
    if (rc != CRMPI_OK) {
        crmpi_framework_close(&filem_framework);
        return rc;
    }
    crmpi_fw_verbose(&filem_framework, 10, "selected component %s", selected->info->name);
    *ops_out = selected->ops;
    return CRMPI_OK;
}

void crmpi_filem_base_close(void)
{
    if (filem_framework.is_open)
        crmpi_framework_close(&filem_framework);
}

/* ---- the global directory --------------------------------------------------------------- */

int crmpi_filem_base_global_dir(char **dir_out)
{
    const char *value;
    const char *home = getenv("HOME");
    const char *rest = NULL;
    int rc;

    rc = crmpi_param_get_string("snapc_base_global_snapshot_dir", &value);
    if (rc != CRMPI_OK)
        return rc;
    if (strncmp(value, "$HOME", 5) == 0 && (value[5] == '\0' || value[5] == '/'))
        rest = value + 5;
    else if (value[0] == '~' && (value[1] == '\0' || value[1] == '/'))
        rest = value + 1;
    if (rest && (!home || !home[0])) {
        crmpi_log_error("snapc_base_global_snapshot_dir is '%s' but HOME is not set; set the "
                        "parameter to an absolute directory",
                        value);
        return CRMPI_ERR_BAD_PARAM;
    }
    if (value[0] == '\0') {
        crmpi_log_error("snapc_base_global_snapshot_dir is empty; set it to a directory every "
                        "node can reach");
        return CRMPI_ERR_BAD_PARAM;
    }
    if (rest ? asprintf(dir_out, "%s%s", home, rest) < 0 : !(*dir_out = strdup(value)))
        return CRMPI_ERR_OUT_OF_RESOURCE;
    return CRMPI_OK;
}

static bool filem_is_dir(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * May this user restart from `path` (a snapshot's directory or one of its sequences)? Only
 * its owner may, root included (a snapshot runs its program as whoever restarts it), and
 * only when nobody else could have changed it.
 */
static int filem_restart_trusted(const char *path)
{
    struct stat st;

    if (stat(path, &st) < 0) {
        crmpi_log_error("cannot read snapshot %s: %s", path, strerror(errno));
        return errno == EACCES ? CRMPI_ERR_ACCESS : CRMPI_ERR_IO;
    }
    if (st.st_uid != geteuid()) {
        crmpi_log_error("snapshot %s belongs to uid %u: only its owner may restart it", path,
                        (unsigned)st.st_uid);
        return CRMPI_ERR_ACCESS;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        crmpi_log_error("snapshot %s is writable by %s (mode %03o), so anyone could have "
                        "changed it: refusing to restart it (chmod go-w makes it yours only)",
                        path, st.st_mode & S_IWOTH ? "every user" : "its group",
                        (unsigned)(st.st_mode & 0777));
        return CRMPI_ERR_ACCESS;
    }
    return CRMPI_OK;
}

int crmpi_filem_handle_resolve(const char *handle, char **jobdir_out)
{
    char *global_dir = NULL;
    char *candidate = NULL;
    const char *value;

    if (access(handle, F_OK) < 0 && errno == EACCES) {
        crmpi_log_error("cannot read snapshot handle '%s': %s", handle, strerror(errno));
        return CRMPI_ERR_ACCESS;
    }
    if (filem_is_dir(handle)) {
        *jobdir_out = strdup(handle);
        return *jobdir_out ? CRMPI_OK : CRMPI_ERR_OUT_OF_RESOURCE;
    }
    /* A bare name ("4711", "4711.ckpt") is looked up where ompi-checkpoint puts snapshots. */
    if (!strchr(handle, '/') && handle[0] &&
        crmpi_param_get_string("snapc_base_global_snapshot_dir", &value) == CRMPI_OK &&
        crmpi_filem_base_global_dir(&global_dir) == CRMPI_OK) {
        bool digits = strspn(handle, "0123456789") == strlen(handle);

        if (asprintf(&candidate, "%s/%s%s", global_dir, handle, digits ? ".ckpt" : "") < 0)
            candidate = NULL;
        if (candidate && filem_is_dir(candidate)) {
            free(global_dir);
            *jobdir_out = candidate;
            return CRMPI_OK;
        }
    }
    if (candidate)
        crmpi_log_error("snapshot handle '%s' does not exist (neither a directory here nor %s); "
                        "ompi-checkpoint prints the handle as its last line",
                        handle, candidate);
    else
        crmpi_log_error("snapshot handle '%s' does not exist (no such directory); "
                        "ompi-checkpoint prints the handle as its last line",
                        handle);
    free(candidate);
    free(global_dir);
    return CRMPI_ERR_NOT_FOUND;
}

/* mkdir -p with FILEM_DIR_MODE for what it creates. */
static int filem_dir_create_parents(const char *dir)
{
    char *copy = strdup(dir);
    int rc = CRMPI_OK;

    if (!copy)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    for (char *slash = copy + 1;; slash++) {
        bool last = *slash == '\0';

        if (*slash != '/' && !last)
            continue;
        *slash = '\0';
        if (mkdir(copy, FILEM_DIR_MODE) != 0 && errno != EEXIST) {
            crmpi_log_error("filem: cannot create directory %s: %s", copy, strerror(errno));
            rc = errno == ENOSPC || errno == EDQUOT ? CRMPI_ERR_OUT_OF_RESOURCE : CRMPI_ERR_IO;
            break;
        }
        if (last)
            break;
        *slash = '/';
    }
    free(copy);
    if (rc == CRMPI_OK && !filem_is_dir(dir)) {
        crmpi_log_error("filem: %s exists and is not a directory", dir);
        rc = CRMPI_ERR_IO;
    }
    return rc;
}

/* ---- cleanup ---------------------------------------------------------------------------- */

/*
 * Remove every sequence directory of `jobdir` that `commit` does not list (commit == NULL:
 * nothing is committed, so none is kept).
 */
static int filem_unlisted_remove(const char *jobdir, const crmpi_filem_commit_t *commit)
{
    crmpi_filem_seq_status_t *list;
    size_t count;
    int rc;

    rc = crmpi_filem_snapshot_list(jobdir, commit, &list, &count);
    if (rc != CRMPI_OK)
        return rc;
    for (size_t i = 0; i < count; i++) {
        if (list[i].state != CRMPI_FILEM_SEQ_PARTIAL && crmpi_filem_commit_has(commit, list[i].seq))
            continue;
        if (access(list[i].dir, F_OK) != 0)
            continue;
        if (crmpi_filem_tree_remove(list[i].dir) != CRMPI_OK) {
            crmpi_log_warn("filem: could not remove the abandoned sequence directory %s",
                           list[i].dir);
            rc = CRMPI_ERR_IO;
        }
    }
    crmpi_filem_snapshot_list_free(list, count);
    return rc;
}

/*
 * Mark in `needed` (indexed like commit->seqs) every committed sequence the images of
 * `manifest` depend on: the parents of its incremental images, and theirs.
 * @return CRMPI_OK; CRMPI_ERR_NOT_FOUND or CRMPI_ERR_PROTO (`problem` says: a parent that
 *         is not committed or not older) or the error of reading a parent's manifest
 */
static int filem_chain_mark(const char *jobdir, const crmpi_filem_commit_t *commit,
                            const crmpi_filem_manifest_t *manifest, bool *needed, char *problem)
{
    int rc = CRMPI_OK;

    for (size_t r = 0; r < manifest->num_ranks && rc == CRMPI_OK; r++) {
        unsigned parent = manifest->ranks[r].parent;
        size_t j = 0;

        if (!parent)
            continue;
        while (j < commit->num_seqs && commit->seqs[j] != parent)
            j++;
        if (parent >= manifest->seq || j == commit->num_seqs)
            return filem_problem(problem,
                                 parent >= manifest->seq ? CRMPI_ERR_PROTO : CRMPI_ERR_NOT_FOUND,
                                 "rank %zu's images of sequence %u are a delta of sequence %u, "
                                 "which is not an older committed one",
                                 r, manifest->seq, parent);
        if (needed[j])
            continue;
        needed[j] = true;
        crmpi_filem_manifest_t *older;
        char *seq_dir;
        rc = crmpi_filem_seq_dir_path(jobdir, parent, false, &seq_dir);
        if (rc == CRMPI_OK)
            rc = crmpi_filem_manifest_read(seq_dir, true, &older, problem);
        free(seq_dir);
        if (rc == CRMPI_OK) {
            rc = filem_chain_mark(jobdir, commit, older, needed, problem);
            crmpi_filem_manifest_destroy(older);
        }
    }
    return rc;
}

/* Keep the newest `keep` sequences of `commit`, the newest one held at each level (so
 * that a level's previous sequence goes only once a newer one is complete there), and
 * every one they depend on (incremental images), in order. When a manifest cannot be
 * read, every sequence stays. */
static int filem_keep_with_chains(const char *jobdir, crmpi_filem_commit_t *commit, unsigned keep)
{
    char problem[CRMPI_FILEM_PROBLEM_MAX];
    bool *needed = calloc(commit->num_seqs, sizeof(bool));
    unsigned levels_seen = 0;
    size_t kept = 0;

    if (!needed)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    for (size_t i = commit->num_seqs; i-- > 0;) {
        needed[i] = i >= commit->num_seqs - keep || (commit->levels[i] & ~levels_seen);
        levels_seen |= commit->levels[i];
    }
    for (size_t i = commit->num_seqs; i-- > 0;) {
        crmpi_filem_manifest_t *manifest;
        char *seq_dir;
        int rc;

        if (!needed[i])
            continue;
        rc = crmpi_filem_seq_dir_path(jobdir, commit->seqs[i], false, &seq_dir);
        if (rc == CRMPI_OK)
            rc = crmpi_filem_manifest_read(seq_dir, true, &manifest, problem);
        free(seq_dir);
        if (rc == CRMPI_OK) {
            rc = filem_chain_mark(jobdir, commit, manifest, needed, problem);
            crmpi_filem_manifest_destroy(manifest);
        }
        if (rc != CRMPI_OK) {
            crmpi_log_warn("filem: keeping every sequence of %s: %s", jobdir, problem);
            free(needed);
            return CRMPI_OK;
        }
    }
    for (size_t i = 0; i < commit->num_seqs; i++) {
        if (!needed[i])
            continue;
        commit->seqs[kept] = commit->seqs[i];
        commit->levels[kept] = commit->levels[i];
        memmove(commit->sums[kept], commit->sums[i], sizeof(commit->sums[0]));
        kept++;
    }
    commit->num_seqs = kept;
    free(needed);
    return CRMPI_OK;
}

int crmpi_filem_seq_cleanup(const char *jobdir, unsigned keep)
{
    crmpi_filem_commit_t *commit;
    int rc;

    rc = crmpi_filem_commit_read(jobdir, &commit);
    if (rc == CRMPI_ERR_NOT_FOUND)
        return CRMPI_OK;
    if (rc != CRMPI_OK) {
        /* An unreadable commit record: removing "unlisted" sequences could remove them all. */
        crmpi_log_warn("filem: not cleaning %s: its commit record cannot be read", jobdir);
        return rc;
    }
    if (keep > 0 && commit->num_seqs > keep) {
        /* The newest `keep` stay, with the sequences their incremental images need; the
         * record that drops the others is durable before any of their files goes. */
        size_t before = commit->num_seqs;
        rc = filem_keep_with_chains(jobdir, commit, keep);
        if (rc == CRMPI_OK && commit->num_seqs != before)
            rc = crmpi_filem_commit_write(jobdir, commit);
        if (rc != CRMPI_OK) {
            crmpi_filem_commit_destroy(commit);
            return rc;
        }
    }
    rc = filem_unlisted_remove(jobdir, commit);
    crmpi_filem_commit_destroy(commit);
    if (rc == CRMPI_OK)
        rc = crmpi_filem_dir_sync(jobdir);
    return rc;
}

/* ---- the coordinator's side ------------------------------------------------------------- */

int crmpi_filem_base_keep(unsigned *keep_out)
{
    int64_t keep;
    int rc;

    rc = crmpi_param_get_int("snapc_base_keep", &keep);
    if (rc != CRMPI_OK)
        return rc;
    if (keep < 0 || keep > UINT32_MAX) {
        crmpi_log_error("snapc_base_keep is %" PRId64 "; it must be 0 (keep every sequence) "
                        "or a positive count",
                        keep);
        return CRMPI_ERR_BAD_PARAM;
    }
    *keep_out = (unsigned)keep;
    return CRMPI_OK;
}

int crmpi_filem_seq_begin(const char *jobdir, unsigned seq, char **seq_partial_dir_out)
{
    crmpi_filem_commit_t *commit = NULL;
    char *partial_dir;
    int rc;

    rc = filem_dir_create_parents(jobdir);
    if (rc != CRMPI_OK)
        return rc;
    rc = crmpi_filem_commit_read(jobdir, &commit);
    if (rc != CRMPI_OK && rc != CRMPI_ERR_NOT_FOUND)
        return rc;
    if (crmpi_filem_commit_has(commit, seq)) {
        crmpi_log_error("filem: sequence %u of %s is already committed", seq, jobdir);
        crmpi_filem_commit_destroy(commit);
        return CRMPI_ERR_EXISTS;
    }
    /* What crashed attempts left behind goes now, before new files compete for space. */
    rc = filem_unlisted_remove(jobdir, commit);
    crmpi_filem_commit_destroy(commit);
    if (rc == CRMPI_ERR_OUT_OF_RESOURCE)
        return rc;
    rc = crmpi_filem_seq_dir_path(jobdir, seq, true, &partial_dir);
    if (rc != CRMPI_OK)
        return rc;
    if (mkdir(partial_dir, FILEM_DIR_MODE) != 0) {
        int err = errno;

        crmpi_log_error("filem: cannot create %s: %s", partial_dir, strerror(err));
        free(partial_dir);
        return err == ENOSPC || err == EDQUOT ? CRMPI_ERR_OUT_OF_RESOURCE : CRMPI_ERR_IO;
    }
    rc = crmpi_filem_dir_sync(jobdir);
    if (rc != CRMPI_OK) {
        crmpi_filem_tree_remove(partial_dir);
        free(partial_dir);
        return rc;
    }
    *seq_partial_dir_out = partial_dir;
    return CRMPI_OK;
}

/* Bytes `path` and what it holds take on disk (allocated blocks). */
static uint64_t filem_tree_bytes(const char *path)
{
    struct stat st;
    uint64_t bytes;
    DIR *dir;
    struct dirent *entry;

    if (lstat(path, &st) != 0)
        return 0;
    bytes = (uint64_t)st.st_blocks * 512;
    if (!S_ISDIR(st.st_mode) || !(dir = opendir(path)))
        return bytes;
    while ((entry = readdir(dir))) {
        char *child;

        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        if (asprintf(&child, "%s/%s", path, entry->d_name) < 0)
            break;
        bytes += filem_tree_bytes(child);
        free(child);
    }
    closedir(dir);
    return bytes;
}

static uint64_t filem_free_bytes(const char *path)
{
    struct statvfs vfs;

    return statvfs(path, &vfs) == 0 ? (uint64_t)vfs.f_bavail * vfs.f_frsize : UINT64_MAX;
}

int crmpi_filem_seq_room(const char *jobdir, bool make_room, char *text, size_t text_len)
{
    crmpi_filem_commit_t *commit;
    unsigned removed = 0;
    char *newest_dir;

    text[0] = '\0';
    if (crmpi_filem_commit_read(jobdir, &commit) != CRMPI_OK)
        return CRMPI_OK; /* nothing committed: no estimate */
    size_t before = commit->num_seqs, newest = before - 1;
    /* The newest sequence whose images are here (one held only on the nodes' own storage
     * has its manifest here and nothing else). */
    while (newest > 0 && !(commit->levels[newest] & CRMPI_FILEM_LEVEL_GLOBAL))
        newest--;
    int rc = crmpi_filem_seq_dir_path(jobdir, commit->seqs[newest], false, &newest_dir);
    crmpi_filem_commit_destroy(commit);
    if (rc != CRMPI_OK)
        return CRMPI_OK;
    uint64_t need = filem_tree_bytes(newest_dir), room = filem_free_bytes(jobdir);
    free(newest_dir);
    /* One sequence less each time, so that the newest ones stay as long as they can. */
    for (size_t keep = before - 1; make_room && room < need && keep >= 1; keep--) {
        if (crmpi_filem_seq_cleanup(jobdir, (unsigned)keep) != CRMPI_OK ||
            crmpi_filem_commit_read(jobdir, &commit) != CRMPI_OK)
            break;
        removed = (unsigned)(before - commit->num_seqs);
        crmpi_filem_commit_destroy(commit);
        room = filem_free_bytes(jobdir);
    }
    if (room >= need) {
        if (removed)
            snprintf(text, text_len,
                     "removed the %u oldest committed sequence%s of %s to make room "
                     "(snapc_base_make_room)",
                     removed, removed == 1 ? "" : "s", jobdir);
        return CRMPI_OK;
    }
    snprintf(text, text_len,
             "%s has %.1f MiB free and the newest checkpoint took %.1f MiB%s: this one may not "
             "fit (free some space, lower snapc_base_keep%s)",
             jobdir, (double)room / (1 << 20), (double)need / (1 << 20),
             removed ? ", even after removing the oldest sequences" : "",
             make_room ? "" : ", or set snapc_base_make_room to remove the oldest first");
    return CRMPI_ERR_OUT_OF_RESOURCE;
}

int crmpi_filem_seq_abort(const char *jobdir, unsigned seq)
{
    char *partial_dir;
    int rc;

    rc = crmpi_filem_seq_dir_path(jobdir, seq, true, &partial_dir);
    if (rc != CRMPI_OK)
        return rc;
    rc = crmpi_filem_tree_remove(partial_dir);
    if (rc != CRMPI_OK)
        crmpi_log_warn("filem: could not remove the aborted sequence %s; the next checkpoint "
                       "removes it",
                       partial_dir);
    free(partial_dir);
    return rc;
}

/* The new commit record: the old one's sequences plus `seq` (in `seq_dir`, its manifest's
 * checksum with it), newest last. */
static int filem_commit_append(const char *jobdir, uint64_t jobid, unsigned seq, unsigned levels,
                               const char *seq_dir)
{
    crmpi_filem_commit_t *commit = NULL;
    crmpi_filem_manifest_sum_t *sums;
    unsigned *grown, *grown_levels;
    int rc;

    rc = crmpi_filem_commit_read(jobdir, &commit);
    if (rc == CRMPI_ERR_NOT_FOUND) {
        commit = calloc(1, sizeof(*commit));
        if (!commit)
            return CRMPI_ERR_OUT_OF_RESOURCE;
        commit->jobid = jobid;
    } else if (rc != CRMPI_OK) {
        return rc;
    }
    grown = realloc(commit->seqs, (commit->num_seqs + 1) * sizeof(*grown));
    if (!grown) {
        crmpi_filem_commit_destroy(commit);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    commit->seqs = grown;
    sums = realloc(commit->sums, (commit->num_seqs + 1) * sizeof(*sums));
    if (!sums) {
        crmpi_filem_commit_destroy(commit);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    commit->sums = sums;
    grown_levels = realloc(commit->levels, (commit->num_seqs + 1) * sizeof(*grown_levels));
    if (!grown_levels) {
        crmpi_filem_commit_destroy(commit);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    commit->levels = grown_levels;
    commit->levels[commit->num_seqs] = levels;
    rc = crmpi_filem_manifest_sum(seq_dir, commit->sums[commit->num_seqs]);
    if (rc != CRMPI_OK) {
        crmpi_log_error("filem: cannot read back %s/%s: %s", seq_dir, CRMPI_FILEM_MANIFEST_FILE,
                        crmpi_strerror(rc));
        crmpi_filem_commit_destroy(commit);
        return rc;
    }
    commit->seqs[commit->num_seqs++] = seq;
    commit->jobid = jobid;
    rc = crmpi_filem_commit_write(jobdir, commit);
    crmpi_filem_commit_destroy(commit);
    return rc;
}

/*
 * Is everything rank `entry` reported really in `partial_dir`, at its size? The agents
 * wrote it from other nodes: a global directory that is not shared storage shows here as
 * missing files, and must not be committed.
 */
static int filem_commit_rank_check(const char *partial_dir, const crmpi_filem_rank_entry_t *entry)
{
    if (entry->num_files == 0) {
        crmpi_log_error("filem: %s cannot be committed: rank %d reported no files", partial_dir,
                        entry->rank);
        return CRMPI_ERR_BAD_PARAM;
    }
    for (size_t f = 0; f < entry->num_files; f++) {
        struct stat st;
        const char *why = NULL;
        char *path;
        bool present;

        if (asprintf(&path, "%s/rank.%d/%s", partial_dir, entry->rank, entry->files[f].path) < 0)
            return CRMPI_ERR_OUT_OF_RESOURCE;
        if (stat(path, &st) != 0)
            why = strerror(errno);
        else if ((uint64_t)st.st_size != entry->files[f].size)
            why = "not of the reported size";
        present = why == NULL;
        if (!present)
            crmpi_log_error("filem: rank %d's %s is not in %s as reported (%s); is "
                            "snapc_base_global_snapshot_dir on storage every node shares?",
                            entry->rank, entry->files[f].path, partial_dir, why);
        free(path);
        if (!present)
            return CRMPI_ERR_NOT_FOUND;
    }
    return CRMPI_OK;
}

int crmpi_filem_seq_commit(const char *jobdir, crmpi_filem_manifest_t *manifest, unsigned keep)
{
    char *partial_dir = NULL;
    char *seq_dir = NULL;
    int rc;

    if ((rc = crmpi_filem_seq_dir_path(jobdir, manifest->seq, true, &partial_dir)) != CRMPI_OK ||
        (rc = crmpi_filem_seq_dir_path(jobdir, manifest->seq, false, &seq_dir)) != CRMPI_OK)
        goto out_free;
    for (size_t i = 0; i < manifest->num_ranks && rc == CRMPI_OK; i++) {
        if (manifest->levels & CRMPI_FILEM_LEVEL_GLOBAL) {
            rc = filem_commit_rank_check(partial_dir, &manifest->ranks[i]);
            continue;
        }
        /* Held elsewhere only: what some ranks copied here before others failed goes. */
        char *rank_dir;
        if ((rc = crmpi_filem_rank_dir_path(partial_dir, (int)i, &rank_dir)) == CRMPI_OK) {
            crmpi_filem_tree_remove(rank_dir);
            free(rank_dir);
        }
    }
    if (rc != CRMPI_OK)
        goto out_free;
    manifest->state = CRMPI_FILEM_STATE_COMPLETE;
    rc = crmpi_filem_manifest_write(partial_dir, manifest);
    if (rc != CRMPI_OK)
        goto out_free;
    if (rename(partial_dir, seq_dir) != 0) {
        crmpi_log_error("filem: cannot rename %s to %s: %s", partial_dir, seq_dir, strerror(errno));
        rc = CRMPI_ERR_IO;
        goto out_free;
    }
    rc = crmpi_filem_dir_sync(jobdir);
    if (rc != CRMPI_OK)
        goto out_free;
    /* The window the commit record closes: a complete sequence nobody has committed. */
    crmpi_fault_crash("snapc_commit_crash");
    rc = filem_commit_append(jobdir, manifest->jobid, manifest->seq, manifest->levels, seq_dir);
    if (rc != CRMPI_OK) {
        /* Whether the new record landed is unknown (the rename may be durable even if the
         * directory's fsync failed), so <seq> stays as it is: either committed, or unlisted
         * and removed by the next crmpi_filem_seq_begin. Renaming it back could break a commit. */
        goto out_free;
    }
    /* Committed. What follows only frees space; a failure there is a warning. */
    crmpi_filem_seq_cleanup(jobdir, keep);
out_free:
    free(partial_dir);
    free(seq_dir);
    return rc;
}

/* ---- restart ---------------------------------------------------------------------------- */

void crmpi_filem_restart_close(crmpi_filem_restart_t *restart)
{
    if (!restart)
        return;
    crmpi_filem_manifest_destroy(restart->manifest);
    free(restart->seq_dir);
    free(restart->jobdir);
    free(restart);
}

int crmpi_filem_seq_verify(const char *jobdir, const char *seq_dir,
                           const crmpi_filem_manifest_t *manifest, char *problem)
{
    char host[256] = "", *local_dir = NULL;
    int rc;

    if (manifest->levels & CRMPI_FILEM_LEVEL_GLOBAL)
        return crmpi_filem_manifest_verify(seq_dir, manifest, problem);
    rc = crmpi_filem_local_seq_dir(jobdir, manifest->seq, &local_dir);

    gethostname(host, sizeof(host) - 1);
    for (size_t r = 0; r < manifest->num_ranks && rc == CRMPI_OK; r++) {
        const crmpi_filem_rank_entry_t *entry = &manifest->ranks[r];

        bool here = (entry->host && strcmp(entry->host, host) == 0) ||
                    ((manifest->levels & CRMPI_FILEM_LEVEL_PARTNER) && entry->partner &&
                     strcmp(entry->partner, host) == 0);

        if (here && (rc = crmpi_filem_rank_verify(local_dir, entry, problem)) != CRMPI_OK) {
            char why[CRMPI_FILEM_PROBLEM_MAX];

            snprintf(why, sizeof(why), "%s", problem);
            filem_problem(problem, rc,
                          "sequence %u is held only on the nodes' own storage, and %.700s "
                          "there (%s)",
                          manifest->seq, why, local_dir);
        }
    }
    free(local_dir);
    return rc;
}

/* Read and check sequence `seq`, whose manifest's checksum is `sum` ("" or NULL: not
 * recorded); on failure `problem` says what is wrong. */
static int filem_restart_try(const char *jobdir, unsigned seq, const char *sum, unsigned flags,
                             crmpi_filem_restart_t *restart, char *problem)
{
    crmpi_filem_manifest_t *manifest = NULL;
    char *seq_dir;
    int rc;

    rc = crmpi_filem_seq_dir_path(jobdir, seq, false, &seq_dir);
    if (rc != CRMPI_OK)
        return rc;
    rc = filem_restart_trusted(seq_dir);
    if (rc == CRMPI_OK && sum && sum[0] && !(flags & CRMPI_FILEM_RESTART_NO_VERIFY)) {
        crmpi_filem_manifest_sum_t now;

        rc = crmpi_filem_manifest_sum(seq_dir, now);
        if (rc != CRMPI_OK || strcmp(now, sum) != 0) {
            snprintf(problem, CRMPI_FILEM_PROBLEM_MAX,
                     "sequence %u's %s %s the commit record's checksum", seq,
                     CRMPI_FILEM_MANIFEST_FILE,
                     rc != CRMPI_OK ? "cannot be read to check against" : "does not match");
            rc = CRMPI_ERR_IO;
        }
    }
    if (rc == CRMPI_OK)
        rc = crmpi_filem_manifest_read(seq_dir, true, &manifest, problem);
    if (rc == CRMPI_OK && (manifest->state != CRMPI_FILEM_STATE_COMPLETE || manifest->seq != seq)) {
        snprintf(problem, CRMPI_FILEM_PROBLEM_MAX,
                 "sequence %u's manifest does not describe a complete sequence %u", seq, seq);
        rc = CRMPI_ERR_PROTO;
    }
    if (rc == CRMPI_OK && !(flags & CRMPI_FILEM_RESTART_NO_VERIFY))
        rc = crmpi_filem_seq_verify(jobdir, seq_dir, manifest, problem);
    if (rc != CRMPI_OK) {
        crmpi_filem_manifest_destroy(manifest);
        free(seq_dir);
        return rc;
    }
    restart->seq = seq;
    restart->seq_dir = seq_dir;
    restart->manifest = manifest;
    return CRMPI_OK;
}

/* The sequences the chosen one's incremental images depend on, each read and checked like
 * it; on failure the chosen one is dropped from `restart` and `problem` says why. */
static int filem_restart_try_chain(crmpi_filem_restart_t *restart,
                                   const crmpi_filem_commit_t *commit, unsigned flags,
                                   char *problem)
{
    char why[CRMPI_FILEM_PROBLEM_MAX];
    bool *needed = calloc(commit->num_seqs, sizeof(bool));
    int rc = needed ? CRMPI_OK : CRMPI_ERR_OUT_OF_RESOURCE;

    if (rc == CRMPI_OK)
        rc = filem_chain_mark(restart->jobdir, commit, restart->manifest, needed, why);
    for (size_t j = 0; rc == CRMPI_OK && j < commit->num_seqs; j++) {
        crmpi_filem_restart_t older = {0};

        if (!needed[j])
            continue;
        rc = filem_restart_try(restart->jobdir, commit->seqs[j], commit->sums[j], flags, &older,
                               why);
        crmpi_filem_manifest_destroy(older.manifest);
        free(older.seq_dir);
    }
    free(needed);
    if (rc == CRMPI_OK)
        return CRMPI_OK;
    snprintf(problem, CRMPI_FILEM_PROBLEM_MAX, "sequence %u depends on an older one: %.900s",
             restart->seq, why);
    crmpi_filem_manifest_destroy(restart->manifest);
    free(restart->seq_dir);
    restart->manifest = NULL;
    restart->seq_dir = NULL;
    return rc;
}

/* No commit record in `jobdir`: say why that can be, and what to give instead (the
 * sequences whose manifest says they are complete, when the record itself was lost). */
static void filem_restart_explain_uncommitted(const char *jobdir)
{
    crmpi_filem_seq_status_t *list = NULL;
    char *manifest_path, complete[512] = "";
    size_t count = 0, used = 0;
    bool is_sequence = false;

    if (asprintf(&manifest_path, "%s/%s", jobdir, CRMPI_FILEM_MANIFEST_FILE) < 0)
        manifest_path = NULL;
    else
        is_sequence = access(manifest_path, F_OK) == 0;
    free(manifest_path);
    if (is_sequence) {
        crmpi_log_error("%s is one sequence of a snapshot, not a snapshot handle: give its "
                        "parent directory (the <jobid>.ckpt one), and --seq to choose this "
                        "sequence",
                        jobdir);
        return;
    }
    if (crmpi_filem_snapshot_list(jobdir, NULL, &list, &count) == CRMPI_OK) {
        for (size_t i = 0; i < count && used < sizeof(complete); i++)
            if (list[i].state == CRMPI_FILEM_SEQ_UNCOMMITTED)
                used += (size_t)snprintf(complete + used, sizeof(complete) - used, "%s%u",
                                         used ? ", " : "", list[i].seq);
        crmpi_filem_snapshot_list_free(list, count);
    }
    if (complete[0])
        crmpi_log_error("%s has no commit record (%s), but complete sequences: %s; one of "
                        "them may be the last one a checkpoint committed, or one whose commit "
                        "never happened: choose with --seq N (its checksums are verified)",
                        jobdir, CRMPI_FILEM_COMMIT_FILE, complete);
    else
        crmpi_log_error("%s has no committed snapshot (no %s: no checkpoint of this job "
                        "completed)",
                        jobdir, CRMPI_FILEM_COMMIT_FILE);
}

/* No commit record, and the user named sequence `seq`: restart from it if its manifest
 * says it is complete and every checksum holds. */
static int filem_restart_uncommitted(crmpi_filem_restart_t *restart, long seq, unsigned flags)
{
    char problem[CRMPI_FILEM_PROBLEM_MAX] = "";
    int rc = filem_restart_try(restart->jobdir, (unsigned)seq, NULL, flags, restart, problem);

    if (rc == CRMPI_OK)
        crmpi_log_warn("%s has no commit record (%s): restarting from sequence %ld as asked, "
                       "its manifest complete and its checksums verified",
                       restart->jobdir, CRMPI_FILEM_COMMIT_FILE, seq);
    else if (rc != CRMPI_ERR_ACCESS)
        crmpi_log_error("%s has no commit record (%s), and sequence %ld cannot be restarted: "
                        "%s",
                        restart->jobdir, CRMPI_FILEM_COMMIT_FILE, seq,
                        problem[0] ? problem : crmpi_strerror(rc));
    return rc;
}

int crmpi_filem_restart_open(const char *handle, long seq, unsigned flags,
                             crmpi_filem_restart_t **restart_out)
{
    char problem[CRMPI_FILEM_PROBLEM_MAX] = "";
    crmpi_filem_commit_t *commit = NULL;
    crmpi_filem_restart_t *restart;
    size_t first;
    int rc;

    restart = calloc(1, sizeof(*restart));
    if (!restart)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    rc = crmpi_filem_handle_resolve(handle, &restart->jobdir);
    if (rc == CRMPI_OK)
        rc = filem_restart_trusted(restart->jobdir);
    if (rc != CRMPI_OK)
        goto err_free;
    rc = crmpi_filem_commit_read(restart->jobdir, &commit);
    if (rc == CRMPI_ERR_NOT_FOUND && seq >= 0) {
        rc = filem_restart_uncommitted(restart, seq, flags);
        if (rc != CRMPI_OK)
            goto err_free;
        *restart_out = restart;
        return CRMPI_OK;
    }
    if (rc == CRMPI_ERR_NOT_FOUND)
        filem_restart_explain_uncommitted(restart->jobdir);
    if (rc != CRMPI_OK)
        goto err_free;
    /* Candidates: the asked-for sequence, or the newest, then each older committed one. */
    first = commit->num_seqs - 1;
    if (seq >= 0) {
        bool found = false;

        for (size_t i = 0; i < commit->num_seqs && !found; i++) {
            if (commit->seqs[i] == (unsigned long)seq) {
                first = i;
                found = true;
            }
        }
        if (!found) {
            char known[512] = "";
            size_t used = 0;

            for (size_t i = 0; i < commit->num_seqs && used < sizeof(known); i++)
                used += (size_t)snprintf(known + used, sizeof(known) - used, "%s%u", i ? ", " : "",
                                         commit->seqs[i]);
            crmpi_log_error("%s has no committed sequence %ld (committed: %s)", restart->jobdir,
                            seq, known);
            rc = CRMPI_ERR_NOT_FOUND;
            goto err_free;
        }
    }
    for (size_t i = first + 1; i-- > 0;) {
        rc = filem_restart_try(restart->jobdir, commit->seqs[i], commit->sums[i], flags, restart,
                               problem);
        if (rc == CRMPI_OK)
            rc = filem_restart_try_chain(restart, commit, flags, problem);
        if (rc == CRMPI_OK) {
            restart->fell_back = i != first;
            break;
        }
        if (rc == CRMPI_ERR_ACCESS) /* said; and no fallback past a sequence others own */
            goto err_free;
        if (rc == CRMPI_ERR_OUT_OF_RESOURCE || rc == CRMPI_ERR_NOT_SUPPORTED) {
            crmpi_log_error("%s", problem);
            goto err_free;
        }
        if (i > 0)
            crmpi_log_warn("%s; restarting from sequence %u instead", problem, commit->seqs[i - 1]);
        else
            crmpi_log_error("%s; no older committed sequence of %s is left to restart from",
                            problem, restart->jobdir);
    }
    if (rc != CRMPI_OK) {
        rc = CRMPI_ERR_IO;
        goto err_free;
    }
    crmpi_filem_commit_destroy(commit);
    *restart_out = restart;
    return CRMPI_OK;

err_free:
    crmpi_filem_commit_destroy(commit);
    crmpi_filem_restart_close(restart);
    return rc;
}
