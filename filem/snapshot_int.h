/*
 * snapshot_int.h: what the codecs of the snapshot's records share, inside filem/ only:
 * the problem text a reader fills, errno as a crmpi status, the checks of untrusted fields,
 * the JSON helpers (jansson) and a rank entry's JSON form (in a manifest and in the agent's
 * report). snapshot_json.c, snapshot_entry.c and filem_fs.c implement them.
 */
#ifndef FILEM_SNAPSHOT_INT_H
#define FILEM_SNAPSHOT_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "snapshot_entry.h"

/** Fill `problem` (CRMPI_FILEM_PROBLEM_MAX bytes, may be NULL) and return `status`. */
int filem_problem(char *problem, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** errno -> CRMPI_ERR_OUT_OF_RESOURCE (ENOSPC, EDQUOT), CRMPI_ERR_NOT_FOUND, CRMPI_ERR_IO. */
int filem_errno_status(int err);

/** A path inside a rank directory: relative, with no ".", ".." or empty component. */
bool filem_path_is_safe(const char *path);
/** 64 lower-case hex digits. */
bool filem_sha256_is_valid(const char *hex);

/** String field into *value_out (strdup'ed; NULL when absent and not required).
 *  @return CRMPI_OK, CRMPI_ERR_PROTO (absent and required, or not a string), or
 *  CRMPI_ERR_OUT_OF_RESOURCE */
int filem_json_string(json_t *obj, const char *key, bool required, char **value_out);
/** Non-negative integer field. @return CRMPI_OK or CRMPI_ERR_PROTO */
int filem_json_uint(json_t *obj, const char *key, uint64_t *value_out);
/** Set `key` to `value` (a new reference, consumed); a NULL value is out of memory. */
int filem_json_set(json_t *obj, const char *key, json_t *value);
/** Set `key` to a string; a NULL text sets nothing. */
int filem_json_set_string(json_t *obj, const char *key, const char *text);
/**
 * Load `path` and check its format name and version.
 * @return CRMPI_OK with *root_out (caller decrefs), or an error with `problem` filled.
 */
int filem_json_load(const char *path, const char *format, int max_version, json_t **root_out,
                    int *version_out, char *problem);
/** A new object with "format" and "version" (NULL: out of memory). */
json_t *filem_json_header(const char *format, int version);
/** Write `root` durably as dir/name, pretty-printed (people read these files too). */
int filem_json_write(const char *dir, const char *name, json_t *root);

/** A mask of levels as ["local", "global"] (NULL: out of memory). */
json_t *filem_levels_to_json(unsigned mask);
/** ["local", "global"] -> mask; names not known here are ignored (a newer writer's level).
 *  @return CRMPI_OK or CRMPI_ERR_PROTO (not an array of strings) */
int filem_levels_from_json(json_t *array, unsigned *mask_out);

/** A rank entry as a JSON object (NULL: out of memory). */
json_t *filem_rank_entry_to_json(const crmpi_filem_rank_entry_t *entry);
/** Parse one rank entry; on failure `problem` (may be NULL) says what is wrong. */
int filem_rank_entry_from_json(json_t *obj, crmpi_filem_rank_entry_t *entry_out, char *problem);

#endif /* FILEM_SNAPSHOT_INT_H */
