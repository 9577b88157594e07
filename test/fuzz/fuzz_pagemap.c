/*
 * fuzz_pagemap.c: CRIU's pagemap images as crs_criu_flatten reads them from a snapshot's
 * storage (crs-criu/crs_criu_flatten.c), when it merges an incremental dump with its chain.
 *
 * The input is two pagemap images, the dump's and its parent's: its first two bytes say
 * where the first ends. Each dump directory also has the pages images pages-1.img and
 * pages-2.img (16 pages each, every page filled with its own byte), which the seeds' heads
 * name. Properties: a flatten that succeeds gives a directory that flattens again, with no
 * parent, into the same pagemap and the same pages.
 */
#include "config.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "crs_criu_int.h"
#include "fuzz_common.h"

/* crs_criu.c, whose crs_criu_fail the flatten reports through, needs libcriu: the same
 * here, without the log (fuzzing closes stderr anyway). */
int crs_criu_fail(char *errbuf, size_t errbuf_len, int rc, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    if (errbuf && errbuf_len)
        vsnprintf(errbuf, errbuf_len, fmt, ap);
    va_end(ap);
    return rc;
}

#define FUZZ_PAGES 16

static void fuzz_pagemap_empty(const char *dir)
{
    DIR *d = opendir(dir);
    char path[4200];

    for (struct dirent *entry; d && (entry = readdir(d));) {
        if (entry->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, entry->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
}

static void fuzz_pagemap_pages(const char *dir)
{
    long page = sysconf(_SC_PAGESIZE);
    char path[4200];
    uint8_t *bytes = malloc((size_t)page * FUZZ_PAGES);

    for (int id = 1; id <= 2; id++) {
        for (int p = 0; p < FUZZ_PAGES; p++)
            memset(bytes + (size_t)p * (size_t)page, id * 32 + p, (size_t)page);
        snprintf(path, sizeof(path), "%s/pages-%d.img", dir, id);
        fuzz_write_file(path, bytes, (size_t)page * FUZZ_PAGES);
    }
    free(bytes);
}

/* The bytes of dir/name, malloc'ed (NULL when it cannot be read). */
static uint8_t *fuzz_pagemap_read(const char *dir, const char *name, size_t *len_out)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    uint8_t *data = NULL;
    size_t len = 0, cap = 0, got;

    if (!f)
        return NULL;
    do {
        if (len == cap && !(data = realloc(data, cap = cap ? cap * 2 : 4096)))
            abort();
        got = fread(data + len, 1, cap - len, f);
        len += got;
    } while (got);
    fclose(f);
    *len_out = len;
    return data;
}

static void fuzz_pagemap_same_file(const char *a, const char *b, const char *name)
{
    size_t a_len = 0, b_len = 0;
    uint8_t *a_data = fuzz_pagemap_read(a, name, &a_len);
    uint8_t *b_data = fuzz_pagemap_read(b, name, &b_len);

    fuzz_check(a_data && b_data && a_len == b_len && memcmp(a_data, b_data, a_len) == 0);
    free(a_data);
    free(b_data);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *dump = fuzz_path("dump", 1), *parent = fuzz_path("parent", 1);
    const char *out = fuzz_path("out", 1), *again = fuzz_path("again", 1);
    char err[512];

    if (size < 2)
        return 0;
    size_t cut = ((size_t)data[0] << 8 | data[1]) % (size - 1);
    for (const char *dir = dump; dir; dir = dir == dump ? parent : NULL) {
        fuzz_pagemap_empty(dir);
        fuzz_pagemap_pages(dir);
    }
    fuzz_pagemap_empty(out);
    fuzz_pagemap_empty(again);
    char path[4200];
    snprintf(path, sizeof(path), "%s/pagemap-1.img", dump);
    fuzz_write_file(path, data + 2, cut);
    snprintf(path, sizeof(path), "%s/pagemap-1.img", parent);
    fuzz_write_file(path, data + 2 + cut, size - 2 - cut);

    const char *parents[] = {parent, NULL};
    if (crs_criu_flatten(dump, parents, out, NULL, err, sizeof(err)) != CRMPI_OK)
        return 0;
    fuzz_check(crs_criu_flatten(out, NULL, again, NULL, err, sizeof(err)) == CRMPI_OK);
    fuzz_pagemap_same_file(out, again, "pagemap-1.img");
    DIR *d = opendir(out);
    for (struct dirent *entry; d && (entry = readdir(d));)
        if (!strncmp(entry->d_name, "pages-", 6))
            fuzz_pagemap_same_file(out, again, entry->d_name);
    if (d)
        closedir(d);
    return 0;
}
