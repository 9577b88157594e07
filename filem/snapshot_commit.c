/*
 * snapshot_commit.c: snapshot.json, the commit record of a job's snapshot
 * (snapshot_commit.h): which sequences are committed. Replacing it is the commit point.
 */
#include "config.h"

#include "snapshot_commit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "filem_fs.h"
#include "log.h"
#include "snapshot_int.h"

void crmpi_filem_commit_destroy(crmpi_filem_commit_t *commit)
{
    if (!commit)
        return;
    free(commit->seqs);
    free(commit->sums);
    free(commit->levels);
    free(commit->updated);
    free(commit);
}

bool crmpi_filem_commit_has(const crmpi_filem_commit_t *commit, unsigned seq)
{
    for (size_t i = 0; commit && i < commit->num_seqs; i++)
        if (commit->seqs[i] == seq)
            return true;
    return false;
}

int crmpi_filem_commit_read(const char *jobdir, crmpi_filem_commit_t **commit_out)
{
    char problem[CRMPI_FILEM_PROBLEM_MAX];
    crmpi_filem_commit_t *commit;
    json_t *root;
    json_t *seqs, *sums, *levels;
    char *path;
    int version;
    int rc;

    if (asprintf(&path, "%s/%s", jobdir, CRMPI_FILEM_COMMIT_FILE) < 0)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    rc = filem_json_load(path, CRMPI_FILEM_COMMIT_FORMAT, CRMPI_FILEM_COMMIT_VERSION, &root,
                         &version, problem);
    if (rc != CRMPI_OK) {
        if (rc != CRMPI_ERR_NOT_FOUND)
            crmpi_log_error("snapshot: %s", problem);
        free(path);
        return rc;
    }
    commit = calloc(1, sizeof(*commit));
    seqs = json_object_get(root, "sequences");
    if (!commit || !json_is_array(seqs) || json_array_size(seqs) == 0 ||
        filem_json_uint(root, "jobid", &commit->jobid) != CRMPI_OK)
        goto err_malformed;
    commit->version = version;
    commit->seqs = calloc(json_array_size(seqs), sizeof(commit->seqs[0]));
    commit->sums = calloc(json_array_size(seqs), sizeof(commit->sums[0]));
    commit->levels = calloc(json_array_size(seqs), sizeof(commit->levels[0]));
    if (!commit->seqs || !commit->sums || !commit->levels)
        goto err_malformed;
    /* Optional: {"<seq>": "<sha256 of its manifest.json>"}; older records lack it. So does
     * {"<seq>": ["local", "global"]}, the levels holding it (global when absent). */
    sums = json_object_get(root, "manifest_sha256");
    levels = json_object_get(root, "levels");
    if ((sums && !json_is_object(sums)) || (levels && !json_is_object(levels)))
        goto err_malformed;
    for (size_t i = 0; i < json_array_size(seqs); i++) {
        json_t *seq = json_array_get(seqs, i), *sum;
        char key[16];

        if (!json_is_integer(seq) || json_integer_value(seq) < 0 ||
            json_integer_value(seq) > UINT32_MAX)
            goto err_malformed;
        snprintf(key, sizeof(key), "%u", (unsigned)json_integer_value(seq));
        sum = sums ? json_object_get(sums, key) : NULL;
        if (sum && (!json_is_string(sum) || !filem_sha256_is_valid(json_string_value(sum))))
            goto err_malformed;
        if (sum)
            memcpy(commit->sums[commit->num_seqs], json_string_value(sum),
                   CRMPI_FILEM_SHA256_HEX_LEN + 1);
        json_t *held = levels ? json_object_get(levels, key) : NULL;
        commit->levels[commit->num_seqs] = CRMPI_FILEM_LEVEL_GLOBAL;
        if (held && (filem_levels_from_json(held, &commit->levels[commit->num_seqs]) != CRMPI_OK ||
                     !commit->levels[commit->num_seqs]))
            goto err_malformed;
        commit->seqs[commit->num_seqs++] = (unsigned)json_integer_value(seq);
    }
    if (filem_json_string(root, "updated", false, &commit->updated) != CRMPI_OK)
        goto err_malformed;
    json_decref(root);
    free(path);
    *commit_out = commit;
    return CRMPI_OK;

err_malformed:
    crmpi_log_error("snapshot: %s lacks a valid jobid or list of committed sequences, or "
                    "names a manifest checksum that is not one",
                    path);
    crmpi_filem_commit_destroy(commit);
    json_decref(root);
    free(path);
    return CRMPI_ERR_PROTO;
}

int crmpi_filem_commit_write(const char *jobdir, const crmpi_filem_commit_t *commit)
{
    json_t *root = filem_json_header(CRMPI_FILEM_COMMIT_FORMAT, CRMPI_FILEM_COMMIT_VERSION);
    json_t *seqs = json_array(), *sums = json_object(), *levels = json_object();
    char now[32];
    int rc = CRMPI_OK;

    crmpi_filem_time_now(now, sizeof(now));
    if (!root || !seqs || !sums || !levels)
        goto err_no_memory;
    for (size_t i = 0; i < commit->num_seqs; i++) {
        char key[16];

        if (json_array_append_new(seqs, json_integer(commit->seqs[i])) != 0)
            goto err_no_memory;
        snprintf(key, sizeof(key), "%u", commit->seqs[i]);
        if (commit->sums && commit->sums[i][0] &&
            json_object_set_new(sums, key, json_string(commit->sums[i])) != 0)
            goto err_no_memory;
        if (commit->levels && commit->levels[i] &&
            filem_json_set(levels, key, filem_levels_to_json(commit->levels[i])) != CRMPI_OK)
            goto err_no_memory;
    }
    rc |= filem_json_set(root, "jobid", json_integer((json_int_t)commit->jobid));
    rc |= filem_json_set(root, "latest",
                         json_integer(commit->num_seqs ? commit->seqs[commit->num_seqs - 1] : 0));
    rc |= filem_json_set(root, "sequences", json_incref(seqs));
    rc |= filem_json_set(root, "manifest_sha256", json_incref(sums));
    rc |= filem_json_set(root, "levels", json_incref(levels));
    rc |= filem_json_set_string(root, "updated", now);
    if (rc != CRMPI_OK)
        goto err_no_memory;
    rc = filem_json_write(jobdir, CRMPI_FILEM_COMMIT_FILE, root);
    json_decref(seqs);
    json_decref(sums);
    json_decref(levels);
    json_decref(root);
    return rc;

err_no_memory:
    json_decref(seqs);
    json_decref(sums);
    json_decref(levels);
    json_decref(root);
    crmpi_log_error("snapshot: out of memory encoding %s/%s", jobdir, CRMPI_FILEM_COMMIT_FILE);
    return CRMPI_ERR_OUT_OF_RESOURCE;
}
