/*
 * fuzz_snapshot_manifest.c: manifest.json, the record of one sequence of a snapshot
 * (filem/snapshot_manifest.h), as crmpi_filem_manifest_read reads it from storage other
 * people may write; then the check of the files it lists (none exists here).
 *
 * Properties: rank entries come in rank order with safe paths and valid checksums (of
 * what is stored, and of what a compressed file decompresses to); a manifest written again
 * (crmpi_filem_manifest_write) reads back the same.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "fuzz_common.h"
#include "snapshot_int.h"
#include "snapshot_manifest.h"

static int fuzz_str_same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void fuzz_kv_same(const crmpi_filem_kv_list_t *a, const crmpi_filem_kv_list_t *b)
{
    fuzz_check(a->count == b->count);
    for (size_t i = 0; i < a->count; i++) {
        fuzz_check(strcmp(a->items[i].key, b->items[i].key) == 0);
        fuzz_check(strcmp(a->items[i].value, b->items[i].value) == 0);
    }
}

static void fuzz_manifest_same(const crmpi_filem_manifest_t *a, const crmpi_filem_manifest_t *b)
{
    fuzz_check(a->jobid == b->jobid && a->seq == b->seq && a->num_ranks == b->num_ranks);
    fuzz_check(fuzz_str_same(a->created, b->created) && fuzz_str_same(a->crs, b->crs) &&
               fuzz_str_same(a->btls, b->btls));
    fuzz_check(a->argc == b->argc);
    for (size_t i = 0; i < a->argc; i++)
        fuzz_check(strcmp(a->argv[i], b->argv[i]) == 0);
    fuzz_kv_same(&a->launch, &b->launch);
    fuzz_kv_same(&a->mca, &b->mca);
    fuzz_check(a->num_timings == b->num_timings);
    for (size_t i = 0; i < a->num_timings; i++) {
        fuzz_check(strcmp(a->timings[i].phase, b->timings[i].phase) == 0);
        fuzz_check(a->timings[i].seconds == b->timings[i].seconds);
    }
    for (size_t r = 0; r < a->num_ranks; r++) {
        const crmpi_filem_rank_entry_t *x = &a->ranks[r], *y = &b->ranks[r];

        fuzz_check(x->rank == y->rank && fuzz_str_same(x->host, y->host));
        fuzz_check(x->num_files == y->num_files && x->bytes == y->bytes);
        fuzz_check(x->parent == y->parent);
        for (size_t i = 0; i < x->num_files; i++) {
            fuzz_check(strcmp(x->files[i].path, y->files[i].path) == 0);
            fuzz_check(x->files[i].size == y->files[i].size);
            fuzz_check(strcmp(x->files[i].sha256, y->files[i].sha256) == 0);
            fuzz_check(x->files[i].raw_size == y->files[i].raw_size);
            fuzz_check(strcmp(x->files[i].raw_sha256, y->files[i].raw_sha256) == 0);
        }
    }
}

/* A file of a rank entry: a safe path, a checksum, and for a compressed one (".zst") the
 * checksum of what it decompresses to. */
static void fuzz_file_check(const crmpi_filem_file_t *file)
{
    size_t len = strlen(file->path);

    fuzz_check(filem_path_is_safe(file->path));
    fuzz_check(filem_sha256_is_valid(file->sha256));
    fuzz_check(!file->raw_sha256[0] || (filem_sha256_is_valid(file->raw_sha256) && len > 4 &&
                                        strcmp(file->path + len - 4, ".zst") == 0));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *seq_dir = fuzz_path("seq", 1);
    const char *copy_dir = fuzz_path("seq-copy", 1);
    char path[4200], problem[CRMPI_FILEM_PROBLEM_MAX];
    crmpi_filem_manifest_t *manifest, *again;

    snprintf(path, sizeof(path), "%s/%s", seq_dir, CRMPI_FILEM_MANIFEST_FILE);
    fuzz_write_file(path, data, size);
    if (crmpi_filem_manifest_read(seq_dir, true, &manifest, problem) != CRMPI_OK) {
        fuzz_check(memchr(problem, '\0', sizeof(problem)) != NULL);
        return 0;
    }
    for (size_t r = 0; r < manifest->num_ranks; r++) {
        const crmpi_filem_rank_entry_t *entry = &manifest->ranks[r];

        fuzz_check(entry->rank == (int)r);
        for (size_t i = 0; i < entry->num_files; i++)
            fuzz_file_check(&entry->files[i]);
    }
    (void)crmpi_filem_manifest_bytes(manifest);
    /* No file it lists exists here: the check stops at the first, or passes when none. */
    (void)crmpi_filem_manifest_verify(seq_dir, manifest, problem);
    if (crmpi_filem_manifest_write(copy_dir, manifest) == CRMPI_OK) {
        fuzz_check(crmpi_filem_manifest_read(copy_dir, true, &again, problem) == CRMPI_OK);
        fuzz_manifest_same(manifest, again);
        crmpi_filem_manifest_destroy(again);
    }
    crmpi_filem_manifest_destroy(manifest);
    return 0;
}
