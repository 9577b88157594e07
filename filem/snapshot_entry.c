/*
 * snapshot_entry.c: one rank's part of a sequence (snapshot_entry.h): its files with size
 * and sha256, as the manifest records it and as the agent reports it to mpirun.
 */
#include "config.h"

#include "snapshot_entry.h"

#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "snapshot_int.h"

void crmpi_filem_rank_entry_clear(crmpi_filem_rank_entry_t *entry)
{
    for (size_t i = 0; i < entry->num_files; i++)
        free(entry->files[i].path);
    free(entry->files);
    free(entry->host);
    free(entry->partner);
    *entry = (crmpi_filem_rank_entry_t){0};
}

int crmpi_filem_rank_entry_copy(const crmpi_filem_rank_entry_t *src, crmpi_filem_rank_entry_t *dst)
{
    crmpi_filem_rank_entry_t copy = {
        .rank = src->rank, .bytes = src->bytes, .parent = src->parent, .levels = src->levels};

    memcpy(copy.level_seconds, src->level_seconds, sizeof(copy.level_seconds));

    if ((src->host && !(copy.host = strdup(src->host))) ||
        (src->partner && !(copy.partner = strdup(src->partner))))
        goto err_no_memory;
    if (src->num_files > 0) {
        copy.files = calloc(src->num_files, sizeof(copy.files[0]));
        if (!copy.files)
            goto err_no_memory;
    }
    for (size_t i = 0; i < src->num_files; i++) {
        copy.files[i] = src->files[i];
        copy.files[i].path = strdup(src->files[i].path);
        if (!copy.files[i].path)
            goto err_no_memory;
        copy.num_files++;
    }
    *dst = copy;
    return CRMPI_OK;

err_no_memory:
    crmpi_filem_rank_entry_clear(&copy);
    return CRMPI_ERR_OUT_OF_RESOURCE;
}

json_t *filem_rank_entry_to_json(const crmpi_filem_rank_entry_t *entry)
{
    json_t *obj = json_object();
    json_t *files = json_array();

    if (!obj || !files)
        goto err_free;
    if (filem_json_set(obj, "rank", json_integer(entry->rank)) != CRMPI_OK ||
        filem_json_set_string(obj, "host", entry->host) != CRMPI_OK ||
        (entry->partner && filem_json_set_string(obj, "partner", entry->partner) != CRMPI_OK) ||
        filem_json_set(obj, "bytes", json_integer((json_int_t)entry->bytes)) != CRMPI_OK ||
        (entry->parent && filem_json_set(obj, "parent", json_integer(entry->parent)) != CRMPI_OK))
        goto err_free;
    if (entry->levels) {
        json_t *seconds = json_object();

        if (filem_json_set(obj, "levels", filem_levels_to_json(entry->levels)) != CRMPI_OK ||
            filem_json_set(obj, "level_seconds", seconds) != CRMPI_OK)
            goto err_free;
        for (int i = 0; i < CRMPI_FILEM_NUM_LEVELS; i++)
            if ((entry->levels & (1u << i)) &&
                filem_json_set(seconds, crmpi_filem_level_name(i),
                               json_real(entry->level_seconds[i])) != CRMPI_OK)
                goto err_free;
    }
    for (size_t i = 0; i < entry->num_files; i++) {
        const crmpi_filem_file_t *file = &entry->files[i];
        json_t *item = json_pack("{s:s, s:I, s:s}", "path", file->path, "size",
                                 (json_int_t)file->size, "sha256", file->sha256);
        if (item && file->raw_sha256[0] &&
            (filem_json_set(item, "raw_size", json_integer((json_int_t)file->raw_size)) !=
                 CRMPI_OK ||
             filem_json_set_string(item, "raw_sha256", file->raw_sha256) != CRMPI_OK)) {
            json_decref(item);
            goto err_free;
        }
        if (!item || json_array_append_new(files, item) != 0)
            goto err_free;
    }
    if (json_object_set(obj, "files", files) != 0)
        goto err_free;
    json_decref(files);
    return obj;

err_free:
    json_decref(files);
    json_decref(obj);
    return NULL;
}

/* Parse one rank entry; `problem` says what is wrong. */
int filem_rank_entry_from_json(json_t *obj, crmpi_filem_rank_entry_t *entry_out, char *problem)
{
    crmpi_filem_rank_entry_t entry = {0};
    json_t *rank = json_object_get(obj, "rank");
    json_t *files = json_object_get(obj, "files");
    uint64_t total = 0;
    int rc;

    if (!json_is_object(obj) || !json_is_integer(rank) || json_integer_value(rank) < 0 ||
        json_integer_value(rank) > INT32_MAX || !json_is_array(files))
        return filem_problem(problem, CRMPI_ERR_PROTO,
                             "a rank entry lacks its rank number or file list");
    json_t *parent = json_object_get(obj, "parent");
    entry.rank = (int)json_integer_value(rank);
    rc = filem_json_string(obj, "host", false, &entry.host);
    if (rc == CRMPI_OK)
        rc = filem_json_string(obj, "partner", false, &entry.partner);
    if (rc != CRMPI_OK)
        goto err_bad;
    if (parent) {
        if (!json_is_integer(parent) || json_integer_value(parent) < 1 ||
            json_integer_value(parent) > UINT32_MAX) {
            rc = CRMPI_ERR_PROTO;
            goto err_bad;
        }
        entry.parent = (unsigned)json_integer_value(parent);
    }
    json_t *levels = json_object_get(obj, "levels");
    if (levels && filem_levels_from_json(levels, &entry.levels) != CRMPI_OK) {
        rc = CRMPI_ERR_PROTO;
        goto err_bad;
    }
    json_t *seconds = json_object_get(obj, "level_seconds");
    for (int i = 0; json_is_object(seconds) && i < CRMPI_FILEM_NUM_LEVELS; i++) {
        json_t *value = json_object_get(seconds, crmpi_filem_level_name(i));
        if (json_is_number(value) && json_number_value(value) >= 0)
            entry.level_seconds[i] = json_number_value(value);
    }
    entry.files = calloc(json_array_size(files) + 1, sizeof(entry.files[0]));
    if (!entry.files) {
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto err_bad;
    }
    for (size_t i = 0; i < json_array_size(files); i++) {
        json_t *item = json_array_get(files, i);
        crmpi_filem_file_t *file = &entry.files[i];
        char *sha = NULL;

        if (!json_is_object(item) || filem_json_string(item, "path", true, &file->path) != CRMPI_OK)
            goto err_bad_file;
        entry.num_files++;
        if (filem_json_uint(item, "size", &file->size) != CRMPI_OK ||
            filem_json_string(item, "sha256", true, &sha) != CRMPI_OK)
            goto err_bad_file;
        if (!filem_path_is_safe(file->path) || !filem_sha256_is_valid(sha)) {
            free(sha);
            goto err_bad_file;
        }
        memcpy(file->sha256, sha, CRMPI_FILEM_SHA256_HEX_LEN + 1);
        free(sha);
        if (json_object_get(item, "raw_sha256")) {
            if (filem_json_uint(item, "raw_size", &file->raw_size) != CRMPI_OK ||
                filem_json_string(item, "raw_sha256", true, &sha) != CRMPI_OK)
                goto err_bad_file;
            if (!filem_sha256_is_valid(sha)) {
                free(sha);
                goto err_bad_file;
            }
            memcpy(file->raw_sha256, sha, CRMPI_FILEM_SHA256_HEX_LEN + 1);
            free(sha);
            size_t len = strlen(file->path);
            if (len <= 4 || strcmp(file->path + len - 4, ".zst") != 0)
                goto err_bad_file; /* a compressed file is named so */
        }
        total += file->size;
    }
    entry.bytes = total;
    *entry_out = entry;
    return CRMPI_OK;

err_bad_file:
    rc = CRMPI_ERR_PROTO;
    crmpi_filem_rank_entry_clear(&entry);
    return filem_problem(problem, rc,
                         "rank %d's file list has a bad entry (a path outside the rank "
                         "directory, or no size or sha256)",
                         (int)json_integer_value(rank));
err_bad:
    crmpi_filem_rank_entry_clear(&entry);
    return filem_problem(problem, rc, "rank %d's entry is malformed",
                         (int)json_integer_value(rank));
}

int crmpi_filem_rank_entry_encode(const crmpi_filem_rank_entry_t *entry, char **json_out)
{
    json_t *obj = filem_rank_entry_to_json(entry);
    char *text;

    if (!obj)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    text = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(obj);
    if (!text)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    *json_out = text;
    return CRMPI_OK;
}

int crmpi_filem_rank_entry_decode(const char *json, crmpi_filem_rank_entry_t *entry_out)
{
    json_error_t error;
    json_t *obj = json_loads(json, 0, &error);
    int rc;

    if (!obj)
        return CRMPI_ERR_PROTO;
    rc = filem_rank_entry_from_json(obj, entry_out, NULL);
    json_decref(obj);
    return rc;
}
