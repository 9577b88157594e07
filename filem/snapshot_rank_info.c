/*
 * snapshot_rank_info.c: rank.json, the facts of one rank that the CRS and CRCP record
 * beside its images (snapshot_rank_info.h). The sections are kept as one JSON tree, in the
 * order they were set.
 */
#include "config.h"

#include "snapshot_rank_info.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "log.h"
#include "snapshot_int.h"

struct crmpi_filem_rank_info {
    int rank;     /* the rank these facts are about */
    int version;  /* format version read (CRMPI_FILEM_RANK_INFO_VERSION when created) */
    json_t *root; /* the whole file: format, version, rank, then one object per section */
};

/* Top-level names that are not sections. */
static bool filem_rank_info_is_header(const char *key)
{
    return strcmp(key, "format") == 0 || strcmp(key, "version") == 0 || strcmp(key, "rank") == 0;
}

int crmpi_filem_rank_info_create(int rank, crmpi_filem_rank_info_t **info_out)
{
    crmpi_filem_rank_info_t *info = calloc(1, sizeof(*info));

    if (!info)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    info->rank = rank;
    info->version = CRMPI_FILEM_RANK_INFO_VERSION;
    info->root = filem_json_header(CRMPI_FILEM_RANK_INFO_FORMAT, CRMPI_FILEM_RANK_INFO_VERSION);
    if (!info->root || filem_json_set(info->root, "rank", json_integer(rank)) != CRMPI_OK) {
        crmpi_filem_rank_info_destroy(info);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    *info_out = info;
    return CRMPI_OK;
}

void crmpi_filem_rank_info_destroy(crmpi_filem_rank_info_t *info)
{
    if (!info)
        return;
    json_decref(info->root);
    free(info);
}

int crmpi_filem_rank_info_rank(const crmpi_filem_rank_info_t *info)
{
    return info->rank;
}

/* Set section.key to `value` (a new reference, consumed). */
static int filem_rank_info_set(crmpi_filem_rank_info_t *info, const char *section, const char *key,
                               json_t *value)
{
    json_t *obj;

    if (!value)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    if (filem_rank_info_is_header(section)) {
        json_decref(value);
        return CRMPI_ERR_BAD_PARAM;
    }
    obj = json_object_get(info->root, section);
    if (!json_is_object(obj)) {
        obj = json_object();
        if (!obj || json_object_set_new(info->root, section, obj) != 0) {
            json_decref(value);
            return CRMPI_ERR_OUT_OF_RESOURCE;
        }
    }
    return json_object_set_new(obj, key, value) == 0 ? CRMPI_OK : CRMPI_ERR_OUT_OF_RESOURCE;
}

int crmpi_filem_rank_info_set_string(crmpi_filem_rank_info_t *info, const char *section,
                                     const char *key, const char *value)
{
    return filem_rank_info_set(info, section, key, json_string(value));
}

int crmpi_filem_rank_info_set_int(crmpi_filem_rank_info_t *info, const char *section,
                                  const char *key, int64_t value)
{
    return filem_rank_info_set(info, section, key, json_integer(value));
}

int crmpi_filem_rank_info_set_json(crmpi_filem_rank_info_t *info, const char *section,
                                   const char *key, const char *json_text)
{
    json_error_t error;
    json_t *value = json_loads(json_text, JSON_DECODE_ANY, &error);

    if (!value)
        return CRMPI_ERR_BAD_PARAM;
    return filem_rank_info_set(info, section, key, value);
}

static json_t *filem_rank_info_get(const crmpi_filem_rank_info_t *info, const char *section,
                                   const char *key)
{
    json_t *obj = json_object_get(info->root, section);

    return json_is_object(obj) ? json_object_get(obj, key) : NULL;
}

int crmpi_filem_rank_info_get_string(const crmpi_filem_rank_info_t *info, const char *section,
                                     const char *key, const char **value_out)
{
    json_t *value = filem_rank_info_get(info, section, key);

    if (!value)
        return CRMPI_ERR_NOT_FOUND;
    if (!json_is_string(value))
        return CRMPI_ERR_BAD_PARAM;
    *value_out = json_string_value(value);
    return CRMPI_OK;
}

int crmpi_filem_rank_info_get_int(const crmpi_filem_rank_info_t *info, const char *section,
                                  const char *key, int64_t *value_out)
{
    json_t *value = filem_rank_info_get(info, section, key);

    if (!value)
        return CRMPI_ERR_NOT_FOUND;
    if (!json_is_integer(value))
        return CRMPI_ERR_BAD_PARAM;
    *value_out = json_integer_value(value);
    return CRMPI_OK;
}

int crmpi_filem_rank_info_foreach(const crmpi_filem_rank_info_t *info,
                                  int (*fn)(const char *section, const char *key,
                                            const char *value_text, void *arg),
                                  void *arg)
{
    const char *section;
    json_t *obj;

    json_object_foreach(info->root, section, obj)
    {
        const char *key;
        json_t *value;

        if (filem_rank_info_is_header(section) || !json_is_object(obj))
            continue;
        json_object_foreach(obj, key, value)
        {
            char *text = json_is_string(value) ? strdup(json_string_value(value))
                                               : json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
            int stop;

            if (!text)
                return CRMPI_ERR_OUT_OF_RESOURCE;
            stop = fn(section, key, text, arg);
            free(text);
            if (stop)
                return CRMPI_OK;
        }
    }
    return CRMPI_OK;
}

int crmpi_filem_rank_info_write(const crmpi_filem_rank_info_t *info, const char *dir)
{
    return filem_json_write(dir, CRMPI_FILEM_RANK_INFO_FILE, info->root);
}

int crmpi_filem_rank_info_read(const char *dir, crmpi_filem_rank_info_t **info_out)
{
    char problem[CRMPI_FILEM_PROBLEM_MAX];
    crmpi_filem_rank_info_t *info;
    json_t *root;
    json_t *rank;
    char *path;
    int version;
    int rc;

    if (asprintf(&path, "%s/%s", dir, CRMPI_FILEM_RANK_INFO_FILE) < 0)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    rc = filem_json_load(path, CRMPI_FILEM_RANK_INFO_FORMAT, CRMPI_FILEM_RANK_INFO_VERSION, &root,
                         &version, problem);
    if (rc == CRMPI_OK) {
        rank = json_object_get(root, "rank");
        if (!json_is_integer(rank)) {
            json_decref(root);
            rc = filem_problem(problem, CRMPI_ERR_PROTO, "%s has no rank number", path);
        }
    }
    if (rc != CRMPI_OK) {
        crmpi_log_error("snapshot: %s", problem);
        free(path);
        return rc;
    }
    free(path);
    info = calloc(1, sizeof(*info));
    if (!info) {
        json_decref(root);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    info->rank = (int)json_integer_value(rank);
    info->version = version;
    info->root = root;
    *info_out = info;
    return CRMPI_OK;
}
