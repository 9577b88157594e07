/*
 * info_snapshot.c: crmpi_info --snapshot HANDLE [--verify] (info.h): a snapshot in human
 * form, decoded with snapshot.h's readers: every snapshot file can be printed.
 *
 * Every sequence directory is shown, committed or not, because a user who asks is often
 * looking for what went wrong; --verify reads every file of every committed sequence and
 * says which sequence a restart would use.
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "crs.h"
#include "filem.h"
#include "info.h"
#include "log.h"
#include "snapshot.h"
#include "snapshot_entry.h"
#include "snapshot_manifest.h"
#include "snapshot_commit.h"
#include "snapshot_rank_info.h"
#include "filem_fs.h"

/* What one sequence's verification found, for the closing lines. */
typedef struct info_snapshot_tally {
    bool verify;        /* --verify was given */
    long restart_seq;   /* newest committed sequence that passed, or -1 */
    size_t num_damaged; /* committed sequences that failed verification */
} info_snapshot_tally_t;

static void info_snapshot_line(const char *label, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void info_snapshot_line(const char *label, const char *fmt, ...)
{
    va_list args;

    printf("%*s: ", INFO_LABEL_WIDTH, label);
    va_start(args, fmt);
    vprintf(fmt, args);
    va_end(args);
    putchar('\n');
}

/* "12.3 MiB (12897484 bytes)" */
static void info_snapshot_size(uint64_t bytes, char *buf, size_t size)
{
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    double value = (double)bytes;
    size_t unit = 0;

    while (value >= 1024 && unit + 1 < sizeof(units) / sizeof(units[0])) {
        value /= 1024;
        unit++;
    }
    if (unit == 0)
        snprintf(buf, size, "%" PRIu64 " bytes", bytes);
    else
        snprintf(buf, size, "%.1f %s (%" PRIu64 " bytes)", value, units[unit], bytes);
}

static void info_snapshot_kv_print(const char *label, const crmpi_filem_kv_list_t *list)
{
    char text[2048] = "";
    size_t used = 0;

    if (list->count == 0)
        return;
    for (size_t i = 0; i < list->count && used < sizeof(text); i++)
        used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%s=%s", i ? ", " : "",
                                 list->items[i].key, list->items[i].value);
    info_snapshot_line(label, "%s", text);
}

static int info_snapshot_rank_info_visit(const char *section, const char *key,
                                         const char *value_text, void *arg)
{
    printf("%*s%s.%s = %s\n", INFO_LABEL_WIDTH + 4, "", section, key, value_text);
    return 0;
}

/* One rank: host, files, size, and its rank.json when the directory has one. */
static void info_snapshot_rank_print(const char *seq_dir, const crmpi_filem_rank_entry_t *entry,
                                     bool show_files)
{
    crmpi_filem_rank_info_t *info;
    char label[32];
    char size[64];
    char *rank_dir;

    char raw[96] = "", delta[48] = "";
    uint64_t raw_bytes = 0;

    for (size_t i = 0; i < entry->num_files; i++)
        raw_bytes +=
            entry->files[i].raw_sha256[0] ? entry->files[i].raw_size : entry->files[i].size;
    if (raw_bytes != entry->bytes) {
        char raw_size[48];

        info_snapshot_size(raw_bytes, raw_size, sizeof(raw_size));
        snprintf(raw, sizeof(raw), " (%s before compression)", raw_size);
    }
    if (entry->parent)
        snprintf(delta, sizeof(delta), ", a delta of sequence %u", entry->parent);
    snprintf(label, sizeof(label), "Rank %d", entry->rank);
    info_snapshot_size(entry->bytes, size, sizeof(size));
    char copies[128] = "";
    size_t used = 0;
    for (int i = 0; i < CRMPI_FILEM_NUM_LEVELS && used < sizeof(copies); i++)
        if (entry->levels & (1u << i))
            used += (size_t)snprintf(copies + used, sizeof(copies) - used, "%s%s %.3f s",
                                     used ? ", " : "; copied to ", crmpi_filem_level_name(i),
                                     entry->level_seconds[i]);
    char partner[300] = "";
    if (entry->partner)
        snprintf(partner, sizeof(partner), " (partner %s)", entry->partner);
    info_snapshot_line(label, "host %s%s, %zu file%s, %s%s%s%s",
                       entry->host ? entry->host : "(unknown)", partner, entry->num_files,
                       entry->num_files == 1 ? "" : "s", size, raw, delta, copies);
    if (show_files)
        for (size_t i = 0; i < entry->num_files; i++)
            printf("%*s%s  %" PRIu64 "  %s\n", INFO_LABEL_WIDTH + 4, "", entry->files[i].sha256,
                   entry->files[i].size, entry->files[i].path);
    if (crmpi_filem_rank_dir_path(seq_dir, entry->rank, &rank_dir) != CRMPI_OK)
        return;
    for (size_t i = 0; i < entry->num_files; i++) {
        char images[4200], indent[INFO_LABEL_WIDTH + 8];

        if (strcmp(entry->files[i].path, "criu/crs-criu.meta") != 0)
            continue;
        snprintf(images, sizeof(images), "%s/criu", rank_dir);
        snprintf(indent, sizeof(indent), "%*s", INFO_LABEL_WIDTH + 4, "");
        crmpi_crs_criu_placement_print(images, indent, stdout);
    }
    for (size_t i = 0; i < entry->num_files; i++) {
        if (strcmp(entry->files[i].path, CRMPI_FILEM_RANK_INFO_FILE) != 0)
            continue;
        if (crmpi_filem_rank_info_read(rank_dir, &info) == CRMPI_OK) {
            crmpi_filem_rank_info_foreach(info, info_snapshot_rank_info_visit, NULL);
            crmpi_filem_rank_info_destroy(info);
        }
    }
    free(rank_dir);
}

/* Everything about one sequence directory. */
static void info_snapshot_seq_print(const char *jobdir, const crmpi_filem_seq_status_t *status,
                                    bool newest, bool show_files, info_snapshot_tally_t *tally)
{
    char problem[CRMPI_FILEM_PROBLEM_MAX];
    crmpi_filem_manifest_t *manifest;
    char label[48];
    char size[64];
    int rc;

    snprintf(label, sizeof(label), "Sequence %u", status->seq);
    info_snapshot_line(label, "%s%s", crmpi_filem_seq_state_name(status->state),
                       newest ? " (newest)" : "");
    info_snapshot_line("Directory", "%s", status->dir);
    if (status->state == CRMPI_FILEM_SEQ_PARTIAL)
        return;
    rc = crmpi_filem_manifest_read(status->dir, true, &manifest, problem);
    if (rc != CRMPI_OK) {
        info_snapshot_line("Manifest", "%s", problem);
        if (status->state == CRMPI_FILEM_SEQ_COMMITTED || status->state == CRMPI_FILEM_SEQ_BROKEN)
            tally->num_damaged += tally->verify;
        return;
    }
    if (manifest->created)
        info_snapshot_line("Created", "%s", manifest->created);
    info_snapshot_line("Manifest", "format version %d, job %" PRIu64, manifest->version,
                       manifest->jobid);
    info_snapshot_size(crmpi_filem_manifest_bytes(manifest), size, sizeof(size));
    info_snapshot_line("Ranks", "%zu, %s in all", manifest->num_ranks, size);
    if (manifest->argc > 0) {
        char text[2048] = "";
        size_t used = 0;

        for (size_t i = 0; i < manifest->argc && used < sizeof(text); i++)
            used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%s", i ? " " : "",
                                     manifest->argv[i]);
        info_snapshot_line("Program", "%s", text);
    }
    info_snapshot_kv_print("Launch options", &manifest->launch);
    info_snapshot_kv_print("MCA parameters", &manifest->mca);
    if (manifest->btls)
        info_snapshot_line("BTLs", "%s", manifest->btls);
    if (manifest->crs)
        info_snapshot_line("CRS", "%s", manifest->crs);
    char levels[64];
    crmpi_filem_levels_str(manifest->levels, levels, sizeof(levels));
    info_snapshot_line("Levels", "%s%s", levels,
                       manifest->levels & (CRMPI_FILEM_LEVEL_LOCAL | CRMPI_FILEM_LEVEL_PARTNER)
                           ? " (local, partner: each node's filem_local_dir, where its ranks "
                             "ran and on their partner's node)"
                           : "");
    if (manifest->num_timings > 0) {
        char text[1024] = "";
        size_t used = 0;

        for (size_t i = 0; i < manifest->num_timings && used < sizeof(text); i++)
            used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%s %.3f s", i ? ", " : "",
                                     manifest->timings[i].phase, manifest->timings[i].seconds);
        info_snapshot_line("Timings", "%s", text);
    }
    if (!tally->verify) {
        info_snapshot_line("Checksums", "not verified (add --verify to read every file)");
    } else if (crmpi_filem_seq_verify(jobdir, status->dir, manifest, problem) == CRMPI_OK) {
        size_t files = 0;

        for (size_t i = 0; i < manifest->num_ranks; i++)
            files += manifest->ranks[i].num_files;
        info_snapshot_line("Checksums", "verified: all %zu files %sintact", files,
                           manifest->levels & CRMPI_FILEM_LEVEL_GLOBAL
                               ? ""
                               : "of the ranks whose copies this node holds (local and "
                                 "partner levels) ");
        if (status->state == CRMPI_FILEM_SEQ_COMMITTED && tally->restart_seq < 0)
            tally->restart_seq = status->seq;
    } else {
        info_snapshot_line("Checksums", "DAMAGED: %s", problem);
        tally->num_damaged += status->state == CRMPI_FILEM_SEQ_COMMITTED;
    }
    for (size_t i = 0; i < manifest->num_ranks; i++)
        info_snapshot_rank_print(status->dir, &manifest->ranks[i], show_files);
    crmpi_filem_manifest_destroy(manifest);
}

int info_snapshot_print(const char *handle, bool verify, bool show_files)
{
    info_snapshot_tally_t tally = {.verify = verify, .restart_seq = -1};
    crmpi_filem_commit_t *commit = NULL;
    bool committed;
    crmpi_filem_seq_status_t *list;
    size_t count;
    char *jobdir;
    int rc;

    if (crmpi_filem_handle_resolve(handle, &jobdir) != CRMPI_OK)
        return INFO_EXIT_ERROR;
    rc = crmpi_filem_commit_read(jobdir, &commit);
    if (rc != CRMPI_OK && rc != CRMPI_ERR_NOT_FOUND) {
        free(jobdir);
        return INFO_EXIT_ERROR;
    }
    if (crmpi_filem_snapshot_list(jobdir, commit, &list, &count) != CRMPI_OK) {
        crmpi_filem_commit_destroy(commit);
        free(jobdir);
        return INFO_EXIT_ERROR;
    }
    info_snapshot_line("Snapshot", "%s", jobdir);
    if (commit) {
        char text[512] = "";
        size_t used = 0;

        for (size_t i = 0; i < commit->num_seqs && used < sizeof(text); i++)
            used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%u", i ? ", " : "",
                                     commit->seqs[i]);
        info_snapshot_line("Job", "%" PRIu64, commit->jobid);
        info_snapshot_line("Commit record", "format version %d, updated %s", commit->version,
                           commit->updated ? commit->updated : "(unknown)");
        info_snapshot_line("Committed sequences", "%s (newest %u)", text,
                           commit->seqs[commit->num_seqs - 1]);
    } else {
        info_snapshot_line("Committed sequences",
                           "none (no %s: no checkpoint of this job completed)",
                           CRMPI_FILEM_COMMIT_FILE);
    }
    /* Newest first: that is the one a restart tries first. */
    for (size_t i = count; i-- > 0;) {
        putchar('\n');
        info_snapshot_seq_print(jobdir, &list[i],
                                commit && list[i].state == CRMPI_FILEM_SEQ_COMMITTED &&
                                    list[i].seq == commit->seqs[commit->num_seqs - 1],
                                show_files, &tally);
    }
    if (verify) {
        putchar('\n');
        if (tally.restart_seq >= 0)
            info_snapshot_line("Restart would use", "sequence %ld", tally.restart_seq);
        else
            info_snapshot_line("Restart would use", "nothing: no committed sequence is intact");
    }
    committed = commit != NULL;
    crmpi_filem_snapshot_list_free(list, count);
    crmpi_filem_commit_destroy(commit);
    free(jobdir);
    if (!committed || (verify && (tally.num_damaged > 0 || tally.restart_seq < 0)))
        return INFO_EXIT_ERROR;
    return INFO_EXIT_OK;
}
