/*
 * snapshot_list.c: the sequence directories of a job's snapshot and the state of each
 * (snapshot_commit.h), for crmpi_info --snapshot and the cleanup after a commit.
 */
#include "config.h"

#include "snapshot_commit.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "filem_fs.h"
#include "log.h"
#include "snapshot_int.h"
#include "snapshot_manifest.h"

const char *crmpi_filem_seq_state_name(crmpi_filem_seq_state_t state)
{
    switch (state) {
    case CRMPI_FILEM_SEQ_COMMITTED: return "committed";
    case CRMPI_FILEM_SEQ_UNCOMMITTED: return "complete but never committed (abandoned)";
    case CRMPI_FILEM_SEQ_PARTIAL: return "partial (being written, or abandoned)";
    case CRMPI_FILEM_SEQ_BROKEN: return "broken (manifest missing or unreadable)";
    }
    return "?";
}

/* "123" -> 123, "123.partial" -> 123 with *partial; anything else is not a sequence. */
static bool filem_list_seq_name_parse(const char *name, unsigned *seq_out, bool *partial_out)
{
    char *end;
    unsigned long seq;

    if (name[0] < '0' || name[0] > '9')
        return false;
    errno = 0;
    seq = strtoul(name, &end, 10);
    if (errno || seq > UINT32_MAX)
        return false;
    if (*end == '\0')
        *partial_out = false;
    else if (strcmp(end, CRMPI_FILEM_PARTIAL_SUFFIX) == 0)
        *partial_out = true;
    else
        return false;
    *seq_out = (unsigned)seq;
    return true;
}

static int filem_list_compare(const void *a, const void *b)
{
    const crmpi_filem_seq_status_t *left = a;
    const crmpi_filem_seq_status_t *right = b;

    if (left->seq != right->seq)
        return left->seq < right->seq ? -1 : 1;
    return (int)left->state - (int)right->state;
}

void crmpi_filem_snapshot_list_free(crmpi_filem_seq_status_t *list, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(list[i].dir);
    free(list);
}

/* Append one entry; takes ownership of `dir`. */
static int filem_list_append(crmpi_filem_seq_status_t **list, size_t *count, unsigned seq,
                             crmpi_filem_seq_state_t state, char *dir)
{
    crmpi_filem_seq_status_t *grown = realloc(*list, (*count + 1) * sizeof(*grown));

    if (!grown || !dir) {
        free(dir);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    *list = grown;
    (*list)[(*count)++] = (crmpi_filem_seq_status_t){.seq = seq, .state = state, .dir = dir};
    return CRMPI_OK;
}

int crmpi_filem_snapshot_list(const char *jobdir, const crmpi_filem_commit_t *commit,
                              crmpi_filem_seq_status_t **list_out, size_t *count_out)
{
    crmpi_filem_seq_status_t *list = NULL;
    size_t count = 0;
    struct dirent *entry;
    DIR *dir = opendir(jobdir);
    int rc = CRMPI_OK;

    if (!dir) {
        crmpi_log_error("snapshot: cannot read %s: %s", jobdir, strerror(errno));
        return filem_errno_status(errno);
    }
    while (rc == CRMPI_OK && (entry = readdir(dir))) {
        crmpi_filem_manifest_t *manifest;
        crmpi_filem_seq_state_t state;
        unsigned seq;
        bool partial;
        char *path;

        if (!filem_list_seq_name_parse(entry->d_name, &seq, &partial))
            continue;
        if (asprintf(&path, "%s/%s", jobdir, entry->d_name) < 0) {
            rc = CRMPI_ERR_OUT_OF_RESOURCE;
            break;
        }
        if (partial) {
            state = CRMPI_FILEM_SEQ_PARTIAL;
        } else if (crmpi_filem_manifest_read(path, true, &manifest, NULL) == CRMPI_OK) {
            bool complete = manifest->state == CRMPI_FILEM_STATE_COMPLETE && manifest->seq == seq;

            crmpi_filem_manifest_destroy(manifest);
            state = !complete                             ? CRMPI_FILEM_SEQ_BROKEN
                    : crmpi_filem_commit_has(commit, seq) ? CRMPI_FILEM_SEQ_COMMITTED
                                                          : CRMPI_FILEM_SEQ_UNCOMMITTED;
        } else {
            state = CRMPI_FILEM_SEQ_BROKEN;
        }
        rc = filem_list_append(&list, &count, seq, state, path);
    }
    closedir(dir);
    /* A committed sequence whose directory is gone is the worst kind of broken: say so. */
    for (size_t i = 0; rc == CRMPI_OK && commit && i < commit->num_seqs; i++) {
        bool found = false;
        char *path;

        for (size_t j = 0; j < count; j++)
            found = found ||
                    (list[j].seq == commit->seqs[i] && list[j].state != CRMPI_FILEM_SEQ_PARTIAL);
        if (found)
            continue;
        rc = crmpi_filem_seq_dir_path(jobdir, commit->seqs[i], false, &path);
        if (rc == CRMPI_OK)
            rc = filem_list_append(&list, &count, commit->seqs[i], CRMPI_FILEM_SEQ_BROKEN, path);
    }
    if (rc != CRMPI_OK) {
        crmpi_log_error("snapshot: out of memory listing %s", jobdir);
        crmpi_filem_snapshot_list_free(list, count);
        return rc;
    }
    if (count > 0)
        qsort(list, count, sizeof(list[0]), filem_list_compare);
    *list_out = list;
    *count_out = count;
    return CRMPI_OK;
}
