/*
 * snapshot.c: reading, writing and checking the files of a global snapshot (snapshot.h).
 *
 * JSON through jansson (objects keep their insertion order, so files read in the order
 * they were built); sha256 through nettle. Readers look up the fields they know and ignore
 * the rest, which is what lets an older crmpi read a newer file of the same version.
 */
#include "config.h"

#include "snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <jansson.h>
#include <nettle/sha2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "log.h"

/* Bytes read at a time when a file's checksum is verified. */
#define SNAPSHOT_VERIFY_CHUNK (1u << 20)
/* Open file descriptors nftw may use while removing a tree. */
#define SNAPSHOT_NFTW_FDS 16

/* Fill `problem` (CRMPI_FILEM_PROBLEM_MAX bytes, may be NULL) and return `status`. */
static int snapshot_problem(char *problem, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int snapshot_problem(char *problem, int status, const char *fmt, ...)
{
    va_list args;

    if (problem) {
        va_start(args, fmt);
        vsnprintf(problem, CRMPI_FILEM_PROBLEM_MAX, fmt, args);
        va_end(args);
    }
    return status;
}

static int snapshot_errno_status(int err)
{
    if (err == ENOSPC || err == EDQUOT)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    if (err == ENOENT)
        return CRMPI_ERR_NOT_FOUND;
    return CRMPI_ERR_IO;
}

/* ---- small building blocks ------------------------------------------------------------ */

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

void crmpi_filem_rank_entry_clear(crmpi_filem_rank_entry_t *entry)
{
    for (size_t i = 0; i < entry->num_files; i++)
        free(entry->files[i].path);
    free(entry->files);
    free(entry->host);
    *entry = (crmpi_filem_rank_entry_t){0};
}

int crmpi_filem_rank_entry_copy(const crmpi_filem_rank_entry_t *src, crmpi_filem_rank_entry_t *dst)
{
    crmpi_filem_rank_entry_t copy = {.rank = src->rank, .bytes = src->bytes};

    if (src->host && !(copy.host = strdup(src->host)))
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

/* A path inside a rank directory: relative, no "." or ".." component, no empty one. A
 * manifest is read from storage other people can write; it must not lead outside. */
static bool snapshot_path_is_safe(const char *path)
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

static bool snapshot_sha256_is_valid(const char *hex)
{
    if (strlen(hex) != CRMPI_FILEM_SHA256_HEX_LEN)
        return false;
    for (const char *c = hex; *c; c++)
        if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
            return false;
    return true;
}

/* ---- JSON helpers --------------------------------------------------------------------- */

/* Optional string field: NULL when absent; CRMPI_ERR_PROTO when not a string. */
static int snapshot_json_string(json_t *obj, const char *key, bool required, char **value_out)
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

static int snapshot_json_uint(json_t *obj, const char *key, uint64_t *value_out)
{
    json_t *value = json_object_get(obj, key);

    if (!json_is_integer(value) || json_integer_value(value) < 0)
        return CRMPI_ERR_PROTO;
    *value_out = (uint64_t)json_integer_value(value);
    return CRMPI_OK;
}

/* Set `key` of `obj` to a new reference; NULL values are skipped. */
static int snapshot_json_set(json_t *obj, const char *key, json_t *value)
{
    if (!value)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    return json_object_set_new(obj, key, value) == 0 ? CRMPI_OK : CRMPI_ERR_OUT_OF_RESOURCE;
}

static int snapshot_json_set_string(json_t *obj, const char *key, const char *text)
{
    if (!text)
        return CRMPI_OK;
    return snapshot_json_set(obj, key, json_string(text));
}

/*
 * Load `path` and check its format name and version.
 * @return CRMPI_OK with *root_out (caller decrefs), or an error with `problem` filled.
 */
static int snapshot_json_load(const char *path, const char *format, int max_version,
                              json_t **root_out, int *version_out, char *problem)
{
    json_error_t error;
    json_t *root;
    json_t *format_value;
    json_t *version_value;
    int fd;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return snapshot_problem(problem, snapshot_errno_status(errno), "cannot open %s: %s", path,
                                strerror(errno));
    root = json_loadfd(fd, 0, &error);
    close(fd);
    if (!root)
        return snapshot_problem(problem, CRMPI_ERR_PROTO, "%s is not valid JSON (line %d: %s)",
                                path, error.line, error.text);
    format_value = json_object_get(root, "format");
    version_value = json_object_get(root, "version");
    if (!json_is_object(root) || !json_is_string(format_value) ||
        strcmp(json_string_value(format_value), format) != 0) {
        json_decref(root);
        return snapshot_problem(problem, CRMPI_ERR_PROTO, "%s is not a %s file", path, format);
    }
    if (!json_is_integer(version_value) || json_integer_value(version_value) < 1) {
        json_decref(root);
        return snapshot_problem(problem, CRMPI_ERR_PROTO, "%s has no valid format version", path);
    }
    if (json_integer_value(version_value) > max_version) {
        int version = (int)json_integer_value(version_value);

        json_decref(root);
        return snapshot_problem(problem, CRMPI_ERR_NOT_SUPPORTED,
                                "%s has format version %d; this crmpi reads %s up to version "
                                "%d (it was written by a newer crmpi: use that one)",
                                path, version, format, max_version);
    }
    *version_out = (int)json_integer_value(version_value);
    *root_out = root;
    return CRMPI_OK;
}

/* A new object with "format" and "version". */
static json_t *snapshot_json_header(const char *format, int version)
{
    json_t *root = json_object();

    if (!root)
        return NULL;
    if (snapshot_json_set_string(root, "format", format) != CRMPI_OK ||
        snapshot_json_set(root, "version", json_integer(version)) != CRMPI_OK) {
        json_decref(root);
        return NULL;
    }
    return root;
}

/* Write `root` durably as dir/name (pretty-printed: these files are read by people too). */
static int snapshot_json_write(const char *dir, const char *name, json_t *root)
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

/* ---- rank entries --------------------------------------------------------------------- */

static json_t *snapshot_rank_entry_to_json(const crmpi_filem_rank_entry_t *entry)
{
    json_t *obj = json_object();
    json_t *files = json_array();

    if (!obj || !files)
        goto err_free;
    if (snapshot_json_set(obj, "rank", json_integer(entry->rank)) != CRMPI_OK ||
        snapshot_json_set_string(obj, "host", entry->host) != CRMPI_OK ||
        snapshot_json_set(obj, "bytes", json_integer((json_int_t)entry->bytes)) != CRMPI_OK)
        goto err_free;
    for (size_t i = 0; i < entry->num_files; i++) {
        const crmpi_filem_file_t *file = &entry->files[i];
        json_t *item = json_pack("{s:s, s:I, s:s}", "path", file->path, "size",
                                 (json_int_t)file->size, "sha256", file->sha256);
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
static int snapshot_rank_entry_from_json(json_t *obj, crmpi_filem_rank_entry_t *entry_out,
                                         char *problem)
{
    crmpi_filem_rank_entry_t entry = {0};
    json_t *rank = json_object_get(obj, "rank");
    json_t *files = json_object_get(obj, "files");
    uint64_t total = 0;
    int rc;

    if (!json_is_object(obj) || !json_is_integer(rank) || json_integer_value(rank) < 0 ||
        json_integer_value(rank) > INT32_MAX || !json_is_array(files))
        return snapshot_problem(problem, CRMPI_ERR_PROTO,
                                "a rank entry lacks its rank number or file list");
    entry.rank = (int)json_integer_value(rank);
    rc = snapshot_json_string(obj, "host", false, &entry.host);
    if (rc != CRMPI_OK)
        goto err_bad;
    entry.files = calloc(json_array_size(files) + 1, sizeof(entry.files[0]));
    if (!entry.files) {
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto err_bad;
    }
    for (size_t i = 0; i < json_array_size(files); i++) {
        json_t *item = json_array_get(files, i);
        crmpi_filem_file_t *file = &entry.files[i];
        char *sha = NULL;

        if (!json_is_object(item) ||
            snapshot_json_string(item, "path", true, &file->path) != CRMPI_OK)
            goto err_bad_file;
        entry.num_files++;
        if (snapshot_json_uint(item, "size", &file->size) != CRMPI_OK ||
            snapshot_json_string(item, "sha256", true, &sha) != CRMPI_OK)
            goto err_bad_file;
        if (!snapshot_path_is_safe(file->path) || !snapshot_sha256_is_valid(sha)) {
            free(sha);
            goto err_bad_file;
        }
        memcpy(file->sha256, sha, CRMPI_FILEM_SHA256_HEX_LEN + 1);
        free(sha);
        total += file->size;
    }
    entry.bytes = total;
    *entry_out = entry;
    return CRMPI_OK;

err_bad_file:
    rc = CRMPI_ERR_PROTO;
    crmpi_filem_rank_entry_clear(&entry);
    return snapshot_problem(problem, rc,
                            "rank %d's file list has a bad entry (a path outside the rank "
                            "directory, or no size or sha256)",
                            (int)json_integer_value(rank));
err_bad:
    crmpi_filem_rank_entry_clear(&entry);
    return snapshot_problem(problem, rc, "rank %d's entry is malformed",
                            (int)json_integer_value(rank));
}

int crmpi_filem_rank_entry_encode(const crmpi_filem_rank_entry_t *entry, char **json_out)
{
    json_t *obj = snapshot_rank_entry_to_json(entry);
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
    rc = snapshot_rank_entry_from_json(obj, entry_out, NULL);
    json_decref(obj);
    return rc;
}

/* ---- manifest.json -------------------------------------------------------------------- */

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

static json_t *snapshot_kv_to_json(const crmpi_filem_kv_list_t *list)
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
static int snapshot_kv_from_json(json_t *obj, crmpi_filem_kv_list_t *list)
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

static json_t *snapshot_manifest_to_json(const crmpi_filem_manifest_t *manifest)
{
    json_t *root = snapshot_json_header(CRMPI_FILEM_MANIFEST_FORMAT, CRMPI_FILEM_MANIFEST_VERSION);
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
        if (json_array_append_new(ranks, snapshot_rank_entry_to_json(&manifest->ranks[i])) != 0)
            goto err_free;
    rc |= snapshot_json_set(root, "jobid", json_integer((json_int_t)manifest->jobid));
    rc |= snapshot_json_set(root, "seq", json_integer(manifest->seq));
    rc |= snapshot_json_set_string(root, "state", "complete");
    rc |= snapshot_json_set_string(root, "created", manifest->created);
    rc |= snapshot_json_set(root, "nranks", json_integer((json_int_t)manifest->num_ranks));
    rc |= snapshot_json_set(root, "bytes",
                            json_integer((json_int_t)crmpi_filem_manifest_bytes(manifest)));
    rc |= snapshot_json_set_string(root, "crs", manifest->crs);
    rc |= snapshot_json_set_string(root, "btls", manifest->btls);
    rc |= snapshot_json_set(root, "argv", json_incref(argv));
    rc |= snapshot_json_set(root, "launch", snapshot_kv_to_json(&manifest->launch));
    rc |= snapshot_json_set(root, "mca", snapshot_kv_to_json(&manifest->mca));
    rc |= snapshot_json_set(root, "timings", json_incref(timings));
    rc |= snapshot_json_set(root, "ranks", json_incref(ranks));
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

void crmpi_filem_time_now(char *buf, size_t size)
{
    time_t now = time(NULL);
    struct tm utc;

    gmtime_r(&now, &utc);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &utc);
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
    root = snapshot_manifest_to_json(manifest);
    if (!root) {
        crmpi_log_error("snapshot: out of memory encoding the manifest of sequence %u",
                        manifest->seq);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    rc = snapshot_json_write(seq_dir, CRMPI_FILEM_MANIFEST_FILE, root);
    json_decref(root);
    return rc;
}

static int snapshot_manifest_from_json(json_t *root, const char *path,
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

    if (snapshot_json_uint(root, "jobid", &manifest->jobid) != CRMPI_OK ||
        snapshot_json_uint(root, "seq", &seq) != CRMPI_OK || seq > UINT32_MAX ||
        snapshot_json_uint(root, "nranks", &nranks) != CRMPI_OK ||
        snapshot_json_string(root, "state", true, &state) != CRMPI_OK || !json_is_array(ranks) ||
        json_array_size(ranks) != nranks)
        return snapshot_problem(problem, CRMPI_ERR_PROTO,
                                "%s lacks a required field (jobid, seq, state, nranks, ranks)",
                                path);
    manifest->seq = (unsigned)seq;
    manifest->state =
        strcmp(state, "complete") == 0 ? CRMPI_FILEM_STATE_COMPLETE : CRMPI_FILEM_STATE_UNKNOWN;
    free(state);
    if ((rc = snapshot_json_string(root, "created", false, &manifest->created)) != CRMPI_OK ||
        (rc = snapshot_json_string(root, "crs", false, &manifest->crs)) != CRMPI_OK ||
        (rc = snapshot_json_string(root, "btls", false, &manifest->btls)) != CRMPI_OK ||
        (rc = snapshot_kv_from_json(json_object_get(root, "launch"), &manifest->launch)) !=
            CRMPI_OK ||
        (rc = snapshot_kv_from_json(json_object_get(root, "mca"), &manifest->mca)) != CRMPI_OK)
        return snapshot_problem(problem, rc, "%s: a field has the wrong type", path);
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

        rc = snapshot_rank_entry_from_json(json_array_get(ranks, i), &manifest->ranks[i],
                                           entry_problem);
        if (rc != CRMPI_OK)
            return snapshot_problem(problem, rc, "%s: %s", path, entry_problem);
        manifest->num_ranks++;
        if (manifest->ranks[i].rank != (int)i)
            return snapshot_problem(problem, CRMPI_ERR_PROTO,
                                    "%s: entry %zu of ranks is rank %d (expected in rank order)",
                                    path, i, manifest->ranks[i].rank);
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
    rc = snapshot_json_load(path, CRMPI_FILEM_MANIFEST_FORMAT, CRMPI_FILEM_MANIFEST_VERSION, &root,
                            &version, problem);
    if (rc != CRMPI_OK)
        goto err_free_path;
    manifest = calloc(1, sizeof(*manifest));
    if (!manifest) {
        rc = snapshot_problem(problem, CRMPI_ERR_OUT_OF_RESOURCE, "out of memory reading %s", path);
        goto err_decref;
    }
    manifest->version = version;
    rc = snapshot_manifest_from_json(root, path, manifest, problem);
    if (rc != CRMPI_OK) {
        if (rc == CRMPI_ERR_OUT_OF_RESOURCE)
            snapshot_problem(problem, rc, "out of memory reading %s", path);
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

/* "image" for the CRS's files, "rank.json" for the rank's facts, "file" otherwise. */
static const char *snapshot_file_noun(const char *path)
{
    if (strncmp(path, "criu/", 5) == 0)
        return "image";
    if (strcmp(path, CRMPI_FILEM_RANK_INFO_FILE) == 0)
        return CRMPI_FILEM_RANK_INFO_FILE;
    return "snapshot file";
}

/* Check one file against its entry. */
static int snapshot_file_verify(const char *seq_dir, int rank, const crmpi_filem_file_t *file,
                                uint8_t *buf, char *problem)
{
    struct sha256_ctx ctx;
    uint8_t digest[SHA256_DIGEST_SIZE];
    char hex[CRMPI_FILEM_SHA256_HEX_LEN + 1];
    const char *noun = snapshot_file_noun(file->path);
    char *path;
    struct stat st;
    uint64_t total = 0;
    int fd;
    int rc = CRMPI_OK;

    if (asprintf(&path, "%s/rank.%d/%s", seq_dir, rank, file->path) < 0)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        rc = snapshot_problem(problem, snapshot_errno_status(errno),
                              errno == ENOENT ? "rank %d's %s is missing (rank.%d/%s)"
                                              : "rank %d's %s cannot be opened (rank.%d/%s: %s)",
                              rank, noun, rank, file->path, strerror(errno));
        goto out_free_path;
    }
    if (fstat(fd, &st) == 0 && (uint64_t)st.st_size != file->size) {
        rc = snapshot_problem(problem, CRMPI_ERR_IO,
                              "rank %d's %s has %" PRIu64 " bytes, the manifest says %" PRIu64
                              " (rank.%d/%s)",
                              rank, noun, (uint64_t)st.st_size, file->size, rank, file->path);
        goto out_close;
    }
    sha256_init(&ctx);
    for (;;) {
        ssize_t got = read(fd, buf, SNAPSHOT_VERIFY_CHUNK);

        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            rc = snapshot_problem(problem, CRMPI_ERR_IO,
                                  "rank %d's %s cannot be read (rank.%d/%s: %s)", rank, noun, rank,
                                  file->path, strerror(errno));
            goto out_close;
        }
        if (got == 0)
            break;
        sha256_update(&ctx, (size_t)got, buf);
        total += (uint64_t)got;
    }
    sha256_digest(&ctx, SHA256_DIGEST_SIZE, digest);
    for (size_t i = 0; i < SHA256_DIGEST_SIZE; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    if (total != file->size || strcmp(hex, file->sha256) != 0)
        rc = snapshot_problem(problem, CRMPI_ERR_IO,
                              "rank %d's %s checksum does not match (rank.%d/%s)", rank, noun, rank,
                              file->path);
out_close:
    close(fd);
out_free_path:
    free(path);
    return rc;
}

int crmpi_filem_manifest_verify(const char *seq_dir, const crmpi_filem_manifest_t *manifest,
                                char *problem)
{
    uint8_t *buf = malloc(SNAPSHOT_VERIFY_CHUNK);
    int rc = CRMPI_OK;

    if (!buf)
        return snapshot_problem(problem, CRMPI_ERR_OUT_OF_RESOURCE,
                                "out of memory verifying checksums");
    for (size_t r = 0; r < manifest->num_ranks && rc == CRMPI_OK; r++) {
        const crmpi_filem_rank_entry_t *entry = &manifest->ranks[r];

        for (size_t f = 0; f < entry->num_files && rc == CRMPI_OK; f++)
            rc = snapshot_file_verify(seq_dir, entry->rank, &entry->files[f], buf, problem);
    }
    free(buf);
    return rc;
}

/* ---- snapshot.json -------------------------------------------------------------------- */

void crmpi_filem_commit_destroy(crmpi_filem_commit_t *commit)
{
    if (!commit)
        return;
    free(commit->seqs);
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
    json_t *seqs;
    char *path;
    int version;
    int rc;

    if (asprintf(&path, "%s/%s", jobdir, CRMPI_FILEM_COMMIT_FILE) < 0)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    rc = snapshot_json_load(path, CRMPI_FILEM_COMMIT_FORMAT, CRMPI_FILEM_COMMIT_VERSION, &root,
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
        snapshot_json_uint(root, "jobid", &commit->jobid) != CRMPI_OK)
        goto err_malformed;
    commit->version = version;
    commit->seqs = calloc(json_array_size(seqs), sizeof(commit->seqs[0]));
    if (!commit->seqs)
        goto err_malformed;
    for (size_t i = 0; i < json_array_size(seqs); i++) {
        json_t *seq = json_array_get(seqs, i);

        if (!json_is_integer(seq) || json_integer_value(seq) < 0 ||
            json_integer_value(seq) > UINT32_MAX)
            goto err_malformed;
        commit->seqs[commit->num_seqs++] = (unsigned)json_integer_value(seq);
    }
    if (snapshot_json_string(root, "updated", false, &commit->updated) != CRMPI_OK)
        goto err_malformed;
    json_decref(root);
    free(path);
    *commit_out = commit;
    return CRMPI_OK;

err_malformed:
    crmpi_log_error("snapshot: %s lacks a valid jobid or list of committed sequences", path);
    crmpi_filem_commit_destroy(commit);
    json_decref(root);
    free(path);
    return CRMPI_ERR_PROTO;
}

int crmpi_filem_commit_write(const char *jobdir, const crmpi_filem_commit_t *commit)
{
    json_t *root = snapshot_json_header(CRMPI_FILEM_COMMIT_FORMAT, CRMPI_FILEM_COMMIT_VERSION);
    json_t *seqs = json_array();
    char now[32];
    int rc = CRMPI_OK;

    crmpi_filem_time_now(now, sizeof(now));
    if (!root || !seqs)
        goto err_no_memory;
    for (size_t i = 0; i < commit->num_seqs; i++)
        if (json_array_append_new(seqs, json_integer(commit->seqs[i])) != 0)
            goto err_no_memory;
    rc |= snapshot_json_set(root, "jobid", json_integer((json_int_t)commit->jobid));
    rc |= snapshot_json_set(
        root, "latest", json_integer(commit->num_seqs ? commit->seqs[commit->num_seqs - 1] : 0));
    rc |= snapshot_json_set(root, "sequences", json_incref(seqs));
    rc |= snapshot_json_set_string(root, "updated", now);
    if (rc != CRMPI_OK)
        goto err_no_memory;
    rc = snapshot_json_write(jobdir, CRMPI_FILEM_COMMIT_FILE, root);
    json_decref(seqs);
    json_decref(root);
    return rc;

err_no_memory:
    json_decref(seqs);
    json_decref(root);
    crmpi_log_error("snapshot: out of memory encoding %s/%s", jobdir, CRMPI_FILEM_COMMIT_FILE);
    return CRMPI_ERR_OUT_OF_RESOURCE;
}

/* ---- listing -------------------------------------------------------------------------- */

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
static bool snapshot_seq_name_parse(const char *name, unsigned *seq_out, bool *partial_out)
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

static int snapshot_seq_status_compare(const void *a, const void *b)
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
static int snapshot_list_append(crmpi_filem_seq_status_t **list, size_t *count, unsigned seq,
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
        return snapshot_errno_status(errno);
    }
    while (rc == CRMPI_OK && (entry = readdir(dir))) {
        crmpi_filem_manifest_t *manifest;
        crmpi_filem_seq_state_t state;
        unsigned seq;
        bool partial;
        char *path;

        if (!snapshot_seq_name_parse(entry->d_name, &seq, &partial))
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
        rc = snapshot_list_append(&list, &count, seq, state, path);
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
            rc = snapshot_list_append(&list, &count, commit->seqs[i], CRMPI_FILEM_SEQ_BROKEN, path);
    }
    if (rc != CRMPI_OK) {
        crmpi_log_error("snapshot: out of memory listing %s", jobdir);
        crmpi_filem_snapshot_list_free(list, count);
        return rc;
    }
    if (count > 0)
        qsort(list, count, sizeof(list[0]), snapshot_seq_status_compare);
    *list_out = list;
    *count_out = count;
    return CRMPI_OK;
}

/* ---- rank.json ------------------------------------------------------------------------ */

struct crmpi_filem_rank_info {
    int rank;     /* the rank these facts are about */
    int version;  /* format version read (CRMPI_FILEM_RANK_INFO_VERSION when created) */
    json_t *root; /* the whole file: format, version, rank, then one object per section */
};

/* Top-level names that are not sections. */
static bool snapshot_rank_info_is_header(const char *key)
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
    info->root = snapshot_json_header(CRMPI_FILEM_RANK_INFO_FORMAT, CRMPI_FILEM_RANK_INFO_VERSION);
    if (!info->root || snapshot_json_set(info->root, "rank", json_integer(rank)) != CRMPI_OK) {
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
static int snapshot_rank_info_set(crmpi_filem_rank_info_t *info, const char *section,
                                  const char *key, json_t *value)
{
    json_t *obj;

    if (!value)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    if (snapshot_rank_info_is_header(section)) {
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
    return snapshot_rank_info_set(info, section, key, json_string(value));
}

int crmpi_filem_rank_info_set_int(crmpi_filem_rank_info_t *info, const char *section,
                                  const char *key, int64_t value)
{
    return snapshot_rank_info_set(info, section, key, json_integer(value));
}

int crmpi_filem_rank_info_set_json(crmpi_filem_rank_info_t *info, const char *section,
                                   const char *key, const char *json_text)
{
    json_error_t error;
    json_t *value = json_loads(json_text, JSON_DECODE_ANY, &error);

    if (!value)
        return CRMPI_ERR_BAD_PARAM;
    return snapshot_rank_info_set(info, section, key, value);
}

static json_t *snapshot_rank_info_get(const crmpi_filem_rank_info_t *info, const char *section,
                                      const char *key)
{
    json_t *obj = json_object_get(info->root, section);

    return json_is_object(obj) ? json_object_get(obj, key) : NULL;
}

int crmpi_filem_rank_info_get_string(const crmpi_filem_rank_info_t *info, const char *section,
                                     const char *key, const char **value_out)
{
    json_t *value = snapshot_rank_info_get(info, section, key);

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
    json_t *value = snapshot_rank_info_get(info, section, key);

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

        if (snapshot_rank_info_is_header(section) || !json_is_object(obj))
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
    return snapshot_json_write(dir, CRMPI_FILEM_RANK_INFO_FILE, info->root);
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
    rc = snapshot_json_load(path, CRMPI_FILEM_RANK_INFO_FORMAT, CRMPI_FILEM_RANK_INFO_VERSION,
                            &root, &version, problem);
    if (rc == CRMPI_OK) {
        rank = json_object_get(root, "rank");
        if (!json_is_integer(rank)) {
            json_decref(root);
            rc = snapshot_problem(problem, CRMPI_ERR_PROTO, "%s has no rank number", path);
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

/* ---- helpers -------------------------------------------------------------------------- */

int crmpi_filem_jobdir_path(const char *global_dir, uint64_t jobid, char **jobdir_out)
{
    return asprintf(jobdir_out, "%s/%" PRIu64 ".ckpt", global_dir, jobid) < 0
               ? CRMPI_ERR_OUT_OF_RESOURCE
               : CRMPI_OK;
}

int crmpi_filem_seq_dir_path(const char *jobdir, unsigned seq, bool partial, char **dir_out)
{
    return asprintf(dir_out, "%s/%u%s", jobdir, seq, partial ? CRMPI_FILEM_PARTIAL_SUFFIX : "") < 0
               ? CRMPI_ERR_OUT_OF_RESOURCE
               : CRMPI_OK;
}

int crmpi_filem_rank_dir_path(const char *seq_dir, int rank, char **dir_out)
{
    return asprintf(dir_out, "%s/rank.%d", seq_dir, rank) < 0 ? CRMPI_ERR_OUT_OF_RESOURCE
                                                              : CRMPI_OK;
}

int crmpi_filem_dir_sync(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (fd < 0 || fsync(fd) != 0) {
        int err = errno;

        crmpi_log_error("snapshot: cannot sync directory %s: %s", dir, strerror(err));
        if (fd >= 0)
            close(fd);
        return snapshot_errno_status(err);
    }
    close(fd);
    return CRMPI_OK;
}

int crmpi_filem_file_write_atomic(const char *dir, const char *name, const char *text)
{
    size_t left = strlen(text);
    char *tmp_path;
    char *path;
    int fd;
    int err = 0;

    if (asprintf(&tmp_path, "%s/%s.tmp", dir, name) < 0)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    if (asprintf(&path, "%s/%s", dir, name) < 0) {
        free(tmp_path);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    fd = open(tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        err = errno;
        goto err_free;
    }
    while (left > 0) {
        ssize_t written = write(fd, text, left);

        if (written < 0 && errno == EINTR)
            continue;
        if (written < 0) {
            err = errno;
            goto err_unlink;
        }
        text += written;
        left -= (size_t)written;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        err = errno;
        fd = -1;
        goto err_unlink;
    }
    fd = -1;
    if (rename(tmp_path, path) != 0) {
        err = errno;
        goto err_unlink;
    }
    free(tmp_path);
    free(path);
    return crmpi_filem_dir_sync(dir);

err_unlink:
    if (fd >= 0)
        close(fd);
    unlink(tmp_path);
err_free:
    crmpi_log_error("snapshot: cannot write %s: %s", path, strerror(err));
    free(tmp_path);
    free(path);
    return snapshot_errno_status(err) == CRMPI_ERR_NOT_FOUND ? CRMPI_ERR_IO
                                                             : snapshot_errno_status(err);
}

static int snapshot_tree_remove_one(const char *path, const struct stat *st, int type,
                                    struct FTW *ftw)
{
    if (remove(path) != 0 && errno != ENOENT) {
        crmpi_log_warn("snapshot: cannot remove %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int crmpi_filem_tree_remove(const char *path)
{
    struct stat st;

    if (lstat(path, &st) != 0)
        return errno == ENOENT ? CRMPI_OK : CRMPI_ERR_IO;
    return nftw(path, snapshot_tree_remove_one, SNAPSHOT_NFTW_FDS, FTW_DEPTH | FTW_PHYS) == 0
               ? CRMPI_OK
               : CRMPI_ERR_IO;
}
