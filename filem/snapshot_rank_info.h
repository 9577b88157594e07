/*
 * snapshot_rank_info.h: rank.json, the facts of one rank written beside its images before
 * FileM copies them (snapshot.h). Codec: snapshot_rank_info.c.
 */
#ifndef CRMPI_FILEM_SNAPSHOT_RANK_INFO_H
#define CRMPI_FILEM_SNAPSHOT_RANK_INFO_H

#include <stdint.h>

#include "snapshot.h"

/*
 * Key/values grouped by the layer that owns them: section "crs" (affinity masks, NUMA
 * policy, the checkpointer's version), "crcp" (drained-message counts), "versions" (crmpi,
 * kernel). A key is set once per section (setting it again replaces the value).
 */
typedef struct crmpi_filem_rank_info crmpi_filem_rank_info_t;

int crmpi_filem_rank_info_create(int rank, crmpi_filem_rank_info_t **info_out);
void crmpi_filem_rank_info_destroy(crmpi_filem_rank_info_t *info);
int crmpi_filem_rank_info_set_string(crmpi_filem_rank_info_t *info, const char *section,
                                     const char *key, const char *value);
int crmpi_filem_rank_info_set_int(crmpi_filem_rank_info_t *info, const char *section,
                                  const char *key, int64_t value);
/** Any JSON value (an array of masks, an object of counts); CRMPI_ERR_BAD_PARAM if invalid. */
int crmpi_filem_rank_info_set_json(crmpi_filem_rank_info_t *info, const char *section,
                                   const char *key, const char *json_text);
/** CRMPI_ERR_NOT_FOUND when absent, CRMPI_ERR_BAD_PARAM when of another type. */
int crmpi_filem_rank_info_get_string(const crmpi_filem_rank_info_t *info, const char *section,
                                     const char *key, const char **value_out);
int crmpi_filem_rank_info_get_int(const crmpi_filem_rank_info_t *info, const char *section,
                                  const char *key, int64_t *value_out);
int crmpi_filem_rank_info_rank(const crmpi_filem_rank_info_t *info);
/**
 * Visit every key in section order; `value_text` is the value as compact JSON (strings
 * without their quotes). Stops when fn returns non-zero.
 */
int crmpi_filem_rank_info_foreach(const crmpi_filem_rank_info_t *info,
                                  int (*fn)(const char *section, const char *key,
                                            const char *value_text, void *arg),
                                  void *arg);
/** Write `dir`/rank.json durably (before FileM copies the directory). */
int crmpi_filem_rank_info_write(const crmpi_filem_rank_info_t *info, const char *dir);
/** Read `dir`/rank.json (same errors as crmpi_filem_manifest_read, logged). */
int crmpi_filem_rank_info_read(const char *dir, crmpi_filem_rank_info_t **info_out);

#endif /* CRMPI_FILEM_SNAPSHOT_RANK_INFO_H */
