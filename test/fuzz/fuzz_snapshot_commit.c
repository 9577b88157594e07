/*
 * fuzz_snapshot_commit.c: snapshot.json, the commit record of a job's snapshot
 * (filem/snapshot_commit.h), as crmpi_filem_commit_read reads it from storage other people
 * may write; then the listing of the job's directory with that record.
 *
 * Properties: a record read successfully lists at least one sequence, with valid manifest
 * checksums; written again (crmpi_filem_commit_write), it reads back the same.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "fuzz_common.h"
#include "snapshot_commit.h"
#include "snapshot_int.h"

static void fuzz_commit_same(const crmpi_filem_commit_t *a, const crmpi_filem_commit_t *b)
{
    fuzz_check(a->jobid == b->jobid && a->num_seqs == b->num_seqs);
    for (size_t i = 0; i < a->num_seqs; i++) {
        fuzz_check(a->seqs[i] == b->seqs[i]);
        fuzz_check(strcmp(a->sums[i], b->sums[i]) == 0);
        fuzz_check(a->levels[i] == b->levels[i]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *jobdir = fuzz_path("job.ckpt", 1);
    const char *copy_dir = fuzz_path("copy.ckpt", 1);
    char path[4200];
    crmpi_filem_commit_t *commit, *again;
    crmpi_filem_seq_status_t *list;
    size_t count;

    snprintf(path, sizeof(path), "%s/%s", jobdir, CRMPI_FILEM_COMMIT_FILE);
    fuzz_write_file(path, data, size);
    if (crmpi_filem_commit_read(jobdir, &commit) != CRMPI_OK)
        return 0;
    fuzz_check(commit->num_seqs >= 1);
    for (size_t i = 0; i < commit->num_seqs; i++) {
        fuzz_check(crmpi_filem_commit_has(commit, commit->seqs[i]));
        fuzz_check(commit->sums[i][0] == '\0' || filem_sha256_is_valid(commit->sums[i]));
        fuzz_check(commit->levels[i] != 0);
    }
    /* Every listed sequence's directory is missing here: each is reported, none is read. */
    if (crmpi_filem_snapshot_list(jobdir, commit, &list, &count) == CRMPI_OK)
        crmpi_filem_snapshot_list_free(list, count);
    if (crmpi_filem_commit_write(copy_dir, commit) == CRMPI_OK) {
        fuzz_check(crmpi_filem_commit_read(copy_dir, &again) == CRMPI_OK);
        fuzz_commit_same(commit, again);
        crmpi_filem_commit_destroy(again);
    }
    crmpi_filem_commit_destroy(commit);
    return 0;
}
