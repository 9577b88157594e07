/*
 * snapshot_manifest.c: manifest.json, the record of one sequence (snapshot_manifest.h):
 * building it, writing it durably and reading it back. Checking the files it lists is
 * snapshot_verify.c.
 */
#include "config.h"

#include "snapshot_manifest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "filem_fs.h"
#include "log.h"
#include "snapshot_int.h"

int crmpi_filem_kv_list_add(crmpi_filem_kv_list_t *list, const char *key, const char *value)
{
    crmpi_filem_kv_t *grown = realloc(list->items, (list->count + 1) * sizeof(*grown));
    char *key_copy = strdup(key);
    char *value_copy = strdup(value);

    if (grown)
        list->items = grown;
    if (!grown || !key_copy || !value_copy) {
        free(key_copy);
        free(value_copy);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    list->items[list->count++] = (crmpi_filem_kv_t){.key = key_copy, .value = value_copy};
    return CRMPI_OK;
}

void crmpi_filem_kv_list_clear(crmpi_filem_kv_list_t *list)
{
    for (size_t i = 0; i < list->count; i++) {
        free(list->items[i].key);
        free(list->items[i].value);
    }
    free(list->items);
    *list = (crmpi_filem_kv_list_t){0};
}

int crmpi_filem_manifest_create(uint64_t jobid, unsigned seq, size_t num_ranks,
                                crmpi_filem_manifest_t **manifest_out)
{
    crmpi_filem_manifest_t *manifest = calloc(1, sizeof(*manifest));

    if (!manifest)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    manifest->ranks = calloc(num_ranks + 1, sizeof(manifest->ranks[0]));
    if (!manifest->ranks) {
        free(manifest);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    manifest->version = CRMPI_FILEM_MANIFEST_VERSION;
    manifest->jobid = jobid;
    manifest->seq = seq;
    manifest->state = CRMPI_FILEM_STATE_COMPLETE;
    manifest->levels = CRMPI_FILEM_LEVEL_GLOBAL;
    manifest->num_ranks = num_ranks;
    for (size_t i = 0; i < num_ranks; i++)
        manifest->ranks[i].rank = (int)i;
    *manifest_out = manifest;
    return CRMPI_OK;
}

void crmpi_filem_manifest_destroy(crmpi_filem_manifest_t *manifest)
{
    if (!manifest)
        return;
    free(manifest->created);
    free(manifest->crs);
    free(manifest->btls);
    for (size_t i = 0; i < manifest->argc; i++)
        free(manifest->argv[i]);
    free(manifest->argv);
    crmpi_filem_kv_list_clear(&manifest->launch);
    crmpi_filem_kv_list_clear(&manifest->mca);
    for (size_t i = 0; i < manifest->num_timings; i++)
        free(manifest->timings[i].phase);
    free(manifest->timings);
    for (size_t i = 0; i < manifest->num_ranks; i++)
        crmpi_filem_rank_entry_clear(&manifest->ranks[i]);
    free(manifest->ranks);
    free(manifest);
}

int crmpi_filem_manifest_rank_set(crmpi_filem_manifest_t *manifest,
                                  const crmpi_filem_rank_entry_t *entry)
{
    crmpi_filem_rank_entry_t copy;
    int rc;

    if (entry->rank < 0 || (size_t)entry->rank >= manifest->num_ranks)
        return CRMPI_ERR_BAD_PARAM;
    rc = crmpi_filem_rank_entry_copy(entry, &copy);
    if (rc != CRMPI_OK)
        return rc;
    crmpi_filem_rank_entry_clear(&manifest->ranks[entry->rank]);
    manifest->ranks[entry->rank] = copy;
    return CRMPI_OK;
}

int crmpi_filem_manifest_timing_add(crmpi_filem_manifest_t *manifest, const char *phase,
                                    double seconds)
{
    crmpi_filem_timing_t *grown =
        realloc(manifest->timings, (manifest->num_timings + 1) * sizeof(*grown));
    char *copy = strdup(phase);

    if (grown)
        manifest->timings = grown;
    if (!grown || !copy) {
        free(copy);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    manifest->timings[manifest->num_timings++] = (crmpi_filem_timing_t){copy, seconds};
    return CRMPI_OK;
}

int crmpi_filem_manifest_argv_set(crmpi_filem_manifest_t *manifest, int argc, char *const *argv)
{
    char **copy = calloc((size_t)argc + 1, sizeof(*copy));

    if (!copy)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    for (int i = 0; i < argc; i++) {
        copy[i] = strdup(argv[i]);
        if (!copy[i]) {
            for (int j = 0; j < i; j++)
                free(copy[j]);
            free(copy);
            return CRMPI_ERR_OUT_OF_RESOURCE;
        }
    }
    for (size_t i = 0; i < manifest->argc; i++)
        free(manifest->argv[i]);
    free(manifest->argv);
    manifest->argv = copy;
    manifest->argc = (size_t)argc;
    return CRMPI_OK;
}

uint64_t crmpi_filem_manifest_bytes(const crmpi_filem_manifest_t *manifest)
{
    uint64_t total = 0;

    for (size_t i = 0; i < manifest->num_ranks; i++)
        total += manifest->ranks[i].bytes;
    return total;
}

static json_t *filem_kv_to_json(const crmpi_filem_kv_list_t *list)
{
    json_t *obj = json_object();

    for (size_t i = 0; obj && i < list->count; i++) {
        if (json_object_set_new(obj, list->items[i].key, json_string(list->items[i].value))) {
            json_decref(obj);
            return NULL;
        }
    }
    return obj;
}

/* Strings of an optional object (non-string values are shown as JSON text). */
static int filem_kv_from_json(json_t *obj, crmpi_filem_kv_list_t *list)
{
    const char *key;
    json_t *value;

    if (!obj)
        return CRMPI_OK;
    if (!json_is_object(obj))
        return CRMPI_ERR_PROTO;
    json_object_foreach(obj, key, value)
    {
        char *text = json_is_string(value) ? strdup(json_string_value(value))
                                           : json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
        int rc;

        if (!text)
            return CRMPI_ERR_OUT_OF_RESOURCE;
        rc = crmpi_filem_kv_list_add(list, key, text);
        free(text);
        if (rc != CRMPI_OK)
            return rc;
    }
    return CRMPI_OK;
}

static json_t *filem_manifest_to_json(const crmpi_filem_manifest_t *manifest)
{
    json_t *root = filem_json_header(CRMPI_FILEM_MANIFEST_FORMAT, CRMPI_FILEM_MANIFEST_VERSION);
    json_t *argv = json_array();
    json_t *timings = json_object();
    json_t *ranks = json_array();
    int rc = CRMPI_OK;

    if (!root || !argv || !timings || !ranks)
        goto err_free;
    for (size_t i = 0; i < manifest->argc; i++)
        if (json_array_append_new(argv, json_string(manifest->argv[i])) != 0)
            goto err_free;
    for (size_t i = 0; i < manifest->num_timings; i++)
        if (json_object_set_new(timings, manifest->timings[i].phase,
                                json_real(manifest->timings[i].seconds)) != 0)
            goto err_free;
    for (size_t i = 0; i < manifest->num_ranks; i++)
        if (json_array_append_new(ranks, filem_rank_entry_to_json(&manifest->ranks[i])) != 0)
            goto err_free;
    rc |= filem_json_set(root, "jobid", json_integer((json_int_t)manifest->jobid));
    rc |= filem_json_set(root, "seq", json_integer(manifest->seq));
    rc |= filem_json_set_string(root, "state", "complete");
    rc |= filem_json_set_string(root, "created", manifest->created);
    rc |= filem_json_set(root, "nranks", json_integer((json_int_t)manifest->num_ranks));
    rc |= filem_json_set(root, "bytes",
                         json_integer((json_int_t)crmpi_filem_manifest_bytes(manifest)));
    rc |= filem_json_set_string(root, "crs", manifest->crs);
    rc |= filem_json_set_string(root, "btls", manifest->btls);
    rc |= filem_json_set(root, "argv", json_incref(argv));
    rc |= filem_json_set(root, "launch", filem_kv_to_json(&manifest->launch));
    rc |= filem_json_set(root, "mca", filem_kv_to_json(&manifest->mca));
    rc |= filem_json_set(root, "timings", json_incref(timings));
    if (manifest->levels)
        rc |= filem_json_set(root, "levels", filem_levels_to_json(manifest->levels));
    rc |= filem_json_set(root, "ranks", json_incref(ranks));
    if (rc != CRMPI_OK)
        goto err_free;
    json_decref(argv);
    json_decref(timings);
    json_decref(ranks);
    return root;

err_free:
    json_decref(argv);
    json_decref(timings);
    json_decref(ranks);
    json_decref(root);
    return NULL;
}

int crmpi_filem_manifest_write(const char *seq_dir, crmpi_filem_manifest_t *manifest)
{
    json_t *root;
    int rc;

    if (!manifest->created) {
        char now[32];

        crmpi_filem_time_now(now, sizeof(now));
        manifest->created = strdup(now);
        if (!manifest->created)
            return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    root = filem_manifest_to_json(manifest);
    if (!root) {
        crmpi_log_error("snapshot: out of memory encoding the manifest of sequence %u",
                        manifest->seq);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    rc = filem_json_write(seq_dir, CRMPI_FILEM_MANIFEST_FILE, root);
    json_decref(root);
    return rc;
}

static int filem_manifest_from_json(json_t *root, const char *path,
                                    crmpi_filem_manifest_t *manifest, char *problem)
{
    json_t *argv = json_object_get(root, "argv");
    json_t *timings = json_object_get(root, "timings");
    json_t *ranks = json_object_get(root, "ranks");
    uint64_t seq;
    uint64_t nranks;
    char *state = NULL;
    const char *key;
    json_t *value;
    int rc;

    /* The state last: once it is copied, nothing can fail before it is freed. */
    if (filem_json_uint(root, "jobid", &manifest->jobid) != CRMPI_OK ||
        filem_json_uint(root, "seq", &seq) != CRMPI_OK || seq > UINT32_MAX ||
        filem_json_uint(root, "nranks", &nranks) != CRMPI_OK || !json_is_array(ranks) ||
        json_array_size(ranks) != nranks ||
        filem_json_string(root, "state", true, &state) != CRMPI_OK)
        return filem_problem(problem, CRMPI_ERR_PROTO,
                             "%s lacks a required field (jobid, seq, state, nranks, ranks)", path);
    manifest->seq = (unsigned)seq;
    manifest->state =
        strcmp(state, "complete") == 0 ? CRMPI_FILEM_STATE_COMPLETE : CRMPI_FILEM_STATE_UNKNOWN;
    free(state);
    if ((rc = filem_json_string(root, "created", false, &manifest->created)) != CRMPI_OK ||
        (rc = filem_json_string(root, "crs", false, &manifest->crs)) != CRMPI_OK ||
        (rc = filem_json_string(root, "btls", false, &manifest->btls)) != CRMPI_OK ||
        (rc = filem_kv_from_json(json_object_get(root, "launch"), &manifest->launch)) != CRMPI_OK ||
        (rc = filem_kv_from_json(json_object_get(root, "mca"), &manifest->mca)) != CRMPI_OK)
        return filem_problem(problem, rc, "%s: a field has the wrong type", path);
    manifest->levels = CRMPI_FILEM_LEVEL_GLOBAL;
    json_t *levels = json_object_get(root, "levels");
    if (levels &&
        (filem_levels_from_json(levels, &manifest->levels) != CRMPI_OK || !manifest->levels))
        return filem_problem(problem, CRMPI_ERR_PROTO, "%s: \"levels\" names no known level", path);
    if (json_is_array(argv)) {
        manifest->argv = calloc(json_array_size(argv) + 1, sizeof(char *));
        if (!manifest->argv)
            return CRMPI_ERR_OUT_OF_RESOURCE;
        for (size_t i = 0; i < json_array_size(argv); i++) {
            const char *arg = json_string_value(json_array_get(argv, i));

            manifest->argv[manifest->argc] = strdup(arg ? arg : "");
            if (!manifest->argv[manifest->argc])
                return CRMPI_ERR_OUT_OF_RESOURCE;
            manifest->argc++;
        }
    }
    if (json_is_object(timings)) {
        json_object_foreach(timings, key, value)
        {
            if (json_is_number(value) && crmpi_filem_manifest_timing_add(
                                             manifest, key, json_number_value(value)) != CRMPI_OK)
                return CRMPI_ERR_OUT_OF_RESOURCE;
        }
    }
    manifest->ranks = calloc(nranks + 1, sizeof(manifest->ranks[0]));
    if (!manifest->ranks)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    for (size_t i = 0; i < nranks; i++) {
        char entry_problem[CRMPI_FILEM_PROBLEM_MAX];

        rc = filem_rank_entry_from_json(json_array_get(ranks, i), &manifest->ranks[i],
                                        entry_problem);
        if (rc != CRMPI_OK)
            return filem_problem(problem, rc, "%s: %s", path, entry_problem);
        manifest->num_ranks++;
        if (manifest->ranks[i].rank != (int)i)
            return filem_problem(problem, CRMPI_ERR_PROTO,
                                 "%s: entry %zu of ranks is rank %d (expected in rank order)", path,
                                 i, manifest->ranks[i].rank);
    }
    return CRMPI_OK;
}

int crmpi_filem_manifest_read(const char *seq_dir, bool quiet,
                              crmpi_filem_manifest_t **manifest_out, char *problem)
{
    char local_problem[CRMPI_FILEM_PROBLEM_MAX];
    char *path;
    json_t *root;
    crmpi_filem_manifest_t *manifest;
    int version;
    int rc;

    if (!problem)
        problem = local_problem;
    if (asprintf(&path, "%s/%s", seq_dir, CRMPI_FILEM_MANIFEST_FILE) < 0)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    rc = filem_json_load(path, CRMPI_FILEM_MANIFEST_FORMAT, CRMPI_FILEM_MANIFEST_VERSION, &root,
                         &version, problem);
    if (rc != CRMPI_OK)
        goto err_free_path;
    manifest = calloc(1, sizeof(*manifest));
    if (!manifest) {
        rc = filem_problem(problem, CRMPI_ERR_OUT_OF_RESOURCE, "out of memory reading %s", path);
        goto err_decref;
    }
    manifest->version = version;
    rc = filem_manifest_from_json(root, path, manifest, problem);
    if (rc != CRMPI_OK) {
        if (rc == CRMPI_ERR_OUT_OF_RESOURCE)
            filem_problem(problem, rc, "out of memory reading %s", path);
        crmpi_filem_manifest_destroy(manifest);
        goto err_decref;
    }
    json_decref(root);
    free(path);
    *manifest_out = manifest;
    return CRMPI_OK;

err_decref:
    json_decref(root);
err_free_path:
    if (!quiet)
        crmpi_log_error("snapshot: %s", problem);
    free(path);
    return rc;
}
