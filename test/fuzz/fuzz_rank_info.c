/*
 * fuzz_rank_info.c: rank.json, the facts the checkpointer and CRCP recorded beside a rank's
 * images (filem/snapshot_rank_info.h), as crmpi_filem_rank_info_read reads it back (at
 * restart, and in crmpi_info --snapshot).
 *
 * Properties: every key the reader lists can be looked up in its section; the facts
 * written again (crmpi_filem_rank_info_write) read back with the same rank and keys.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "fuzz_common.h"
#include "snapshot_rank_info.h"

/* What crmpi_filem_rank_info_foreach showed, folded into a number, and how many keys. */
typedef struct fuzz_rank_info_seen {
    const crmpi_filem_rank_info_t *info; /* the facts being visited */
    uint64_t hash;                       /* of every section, key and value text */
    size_t keys;                         /* keys visited */
} fuzz_rank_info_seen_t;

static uint64_t fuzz_hash(uint64_t hash, const char *text)
{
    for (const char *c = text; *c; c++)
        hash = (hash ^ (unsigned char)*c) * 1099511628211u;
    return (hash ^ 0xff) * 1099511628211u;
}

static int fuzz_rank_info_visit(const char *section, const char *key, const char *value_text,
                                void *arg)
{
    fuzz_rank_info_seen_t *seen = arg;
    const char *text;
    int64_t number;
    int rc_string = crmpi_filem_rank_info_get_string(seen->info, section, key, &text);
    int rc_int = crmpi_filem_rank_info_get_int(seen->info, section, key, &number);

    /* Found, of one type or another (or neither: an object, a real, a boolean). */
    fuzz_check(rc_string != CRMPI_ERR_NOT_FOUND && rc_int != CRMPI_ERR_NOT_FOUND);
    fuzz_check(rc_string != CRMPI_OK || strcmp(text, value_text) == 0);
    seen->hash = fuzz_hash(fuzz_hash(fuzz_hash(seen->hash, section), key), value_text);
    seen->keys++;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *dir = fuzz_path("rank.0", 1);
    const char *copy_dir = fuzz_path("rank.0-copy", 1);
    char path[4200];
    crmpi_filem_rank_info_t *info, *again;
    fuzz_rank_info_seen_t first = {0}, second = {0};

    snprintf(path, sizeof(path), "%s/%s", dir, CRMPI_FILEM_RANK_INFO_FILE);
    fuzz_write_file(path, data, size);
    if (crmpi_filem_rank_info_read(dir, &info) != CRMPI_OK)
        return 0;
    first.info = info;
    fuzz_check(crmpi_filem_rank_info_foreach(info, fuzz_rank_info_visit, &first) == CRMPI_OK);
    if (crmpi_filem_rank_info_write(info, copy_dir) == CRMPI_OK) {
        fuzz_check(crmpi_filem_rank_info_read(copy_dir, &again) == CRMPI_OK);
        fuzz_check(crmpi_filem_rank_info_rank(again) == crmpi_filem_rank_info_rank(info));
        second.info = again;
        int rc = crmpi_filem_rank_info_foreach(again, fuzz_rank_info_visit, &second);
        fuzz_check(rc == CRMPI_OK);
        fuzz_check(first.keys == second.keys && first.hash == second.hash);
        crmpi_filem_rank_info_destroy(again);
    }
    /* A fact set after reading goes with the others (the CRS adds to a restored record). */
    fuzz_check(crmpi_filem_rank_info_set_int(info, "fuzz", "added", 1) == CRMPI_OK);
    crmpi_filem_rank_info_destroy(info);
    return 0;
}
