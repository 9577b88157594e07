/*
 * snapshot_json.c: the JSON side shared by the snapshot's record codecs (snapshot_int.h).
 *
 * JSON through jansson (objects keep their insertion order, so files read in the order
 * they were built). Readers look up the fields they know and ignore the rest, which is
 * what lets an older crmpi read a newer file of the same version.
 */
#include "config.h"

#include "snapshot_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "filem_fs.h"
#include "log.h"

int filem_problem(char *problem, int status, const char *fmt, ...)
{
    va_list args;

    if (problem) {
        va_start(args, fmt);
        vsnprintf(problem, CRMPI_FILEM_PROBLEM_MAX, fmt, args);
        va_end(args);
    }
    return status;
}

/* A path inside a rank directory: relative, no "." or ".." component, no empty one. A
 * manifest is read from storage other people can write; it must not lead outside. */
bool filem_path_is_safe(const char *path)
{
    const char *part = path;

    if (!path[0] || path[0] == '/')
        return false;
    while (*part) {
        size_t len = strcspn(part, "/");

        if (len == 0 || (len == 1 && part[0] == '.') ||
            (len == 2 && part[0] == '.' && part[1] == '.'))
            return false;
        part += len;
        if (*part == '/')
            part++;
        if (part[-1] == '/' && *part == '\0')
            return false;
    }
    return true;
}

bool filem_sha256_is_valid(const char *hex)
{
    if (strlen(hex) != CRMPI_FILEM_SHA256_HEX_LEN)
        return false;
    for (const char *c = hex; *c; c++)
        if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
            return false;
    return true;
}

/* Optional string field: NULL when absent; CRMPI_ERR_PROTO when not a string. */
int filem_json_string(json_t *obj, const char *key, bool required, char **value_out)
{
    json_t *value = json_object_get(obj, key);

    if (!value || json_is_null(value)) {
        if (required)
            return CRMPI_ERR_PROTO;
        *value_out = NULL;
        return CRMPI_OK;
    }
    if (!json_is_string(value))
        return CRMPI_ERR_PROTO;
    *value_out = strdup(json_string_value(value));
    return *value_out ? CRMPI_OK : CRMPI_ERR_OUT_OF_RESOURCE;
}

int filem_json_uint(json_t *obj, const char *key, uint64_t *value_out)
{
    json_t *value = json_object_get(obj, key);

    if (!json_is_integer(value) || json_integer_value(value) < 0)
        return CRMPI_ERR_PROTO;
    *value_out = (uint64_t)json_integer_value(value);
    return CRMPI_OK;
}

/* Set `key` of `obj` to a new reference; NULL values are skipped. */
int filem_json_set(json_t *obj, const char *key, json_t *value)
{
    if (!value)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    return json_object_set_new(obj, key, value) == 0 ? CRMPI_OK : CRMPI_ERR_OUT_OF_RESOURCE;
}

int filem_json_set_string(json_t *obj, const char *key, const char *text)
{
    if (!text)
        return CRMPI_OK;
    return filem_json_set(obj, key, json_string(text));
}

/*
 * Load `path` and check its format name and version.
 * @return CRMPI_OK with *root_out (caller decrefs), or an error with `problem` filled.
 */
int filem_json_load(const char *path, const char *format, int max_version, json_t **root_out,
                    int *version_out, char *problem)
{
    json_error_t error;
    json_t *root;
    json_t *format_value;
    json_t *version_value;
    int fd;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return filem_problem(problem, filem_errno_status(errno), "cannot open %s: %s", path,
                             strerror(errno));
    root = json_loadfd(fd, 0, &error);
    close(fd);
    if (!root)
        return filem_problem(problem, CRMPI_ERR_PROTO, "%s is not valid JSON (line %d: %s)", path,
                             error.line, error.text);
    format_value = json_object_get(root, "format");
    version_value = json_object_get(root, "version");
    if (!json_is_object(root) || !json_is_string(format_value) ||
        strcmp(json_string_value(format_value), format) != 0) {
        json_decref(root);
        return filem_problem(problem, CRMPI_ERR_PROTO, "%s is not a %s file", path, format);
    }
    if (!json_is_integer(version_value) || json_integer_value(version_value) < 1) {
        json_decref(root);
        return filem_problem(problem, CRMPI_ERR_PROTO, "%s has no valid format version", path);
    }
    if (json_integer_value(version_value) > max_version) {
        int version = (int)json_integer_value(version_value);

        json_decref(root);
        return filem_problem(problem, CRMPI_ERR_NOT_SUPPORTED,
                             "%s has format version %d; this crmpi reads %s up to version "
                             "%d (it was written by a newer crmpi: use that one)",
                             path, version, format, max_version);
    }
    *version_out = (int)json_integer_value(version_value);
    *root_out = root;
    return CRMPI_OK;
}

/* A new object with "format" and "version". */
json_t *filem_json_header(const char *format, int version)
{
    json_t *root = json_object();

    if (!root)
        return NULL;
    if (filem_json_set_string(root, "format", format) != CRMPI_OK ||
        filem_json_set(root, "version", json_integer(version)) != CRMPI_OK) {
        json_decref(root);
        return NULL;
    }
    return root;
}

/* Write `root` durably as dir/name (pretty-printed: these files are read by people too). */
int filem_json_write(const char *dir, const char *name, json_t *root)
{
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    int rc;

    if (!text) {
        crmpi_log_error("snapshot: out of memory encoding %s/%s", dir, name);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    rc = crmpi_filem_file_write_atomic(dir, name, text);
    free(text);
    return rc;
}

static const char *const filem_level_names[CRMPI_FILEM_NUM_LEVELS] = {"local", "global", "partner"};

const char *crmpi_filem_level_name(int index)
{
    return index >= 0 && index < CRMPI_FILEM_NUM_LEVELS ? filem_level_names[index] : "?";
}

void crmpi_filem_levels_str(unsigned mask, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (int i = 0; i < CRMPI_FILEM_NUM_LEVELS && used < len; i++)
        if (mask & (1u << i))
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "",
                                     filem_level_names[i]);
    if (!used)
        snprintf(buf, len, "none");
}

json_t *filem_levels_to_json(unsigned mask)
{
    json_t *array = json_array();

    for (int i = 0; array && i < CRMPI_FILEM_NUM_LEVELS; i++) {
        if ((mask & (1u << i)) &&
            json_array_append_new(array, json_string(filem_level_names[i])) != 0) {
            json_decref(array);
            return NULL;
        }
    }
    return array;
}

int filem_levels_from_json(json_t *array, unsigned *mask_out)
{
    unsigned mask = 0;

    if (!json_is_array(array))
        return CRMPI_ERR_PROTO;
    for (size_t i = 0; i < json_array_size(array); i++) {
        json_t *name = json_array_get(array, i);

        if (!json_is_string(name))
            return CRMPI_ERR_PROTO;
        for (int level = 0; level < CRMPI_FILEM_NUM_LEVELS; level++)
            if (strcmp(json_string_value(name), filem_level_names[level]) == 0)
                mask |= 1u << level;
    }
    *mask_out = mask;
    return CRMPI_OK;
}
