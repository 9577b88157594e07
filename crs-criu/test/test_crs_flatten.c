/*
 * test_crs_flatten.c: crs_criu_flatten on chains of hand-made images (no root, no CRIU):
 * ranges split differently at each level, a range sent down two levels, an image older than
 * the flags field, and the broken chains it must refuse. test_crs_criu flattens a chain CRIU
 * itself wrote and restores the result.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "crmpi_status.h"
#include "crs_criu_int.h"

#define PARENT           1u
#define PRESENT          4u
#define LEGACY_IN_PARENT 0x100u /* tst_range: written as the old in_parent field, no flags */
#define LEGACY_PRESENT   0x200u /* tst_range: written with neither in_parent nor flags */

static long tst_page;
static char tst_base[] = "/tmp/crmpi-flatten-XXXXXX";

typedef struct tst_range {
    unsigned first;    /* its first page, in pages from address 0x10000000 */
    unsigned nr_pages; /* pages */
    unsigned flags;    /* PARENT, PRESENT, or a LEGACY_* */
    char fill;         /* PRESENT: each page's bytes are fill + its page number */
} tst_range_t;

static uint64_t tst_vaddr(unsigned page)
{
    return 0x10000000u + (uint64_t)page * (uint64_t)tst_page;
}

static size_t tst_varint(uint8_t *at, uint64_t value)
{
    size_t len = 0;
    while (value > 0x7f) {
        at[len++] = (uint8_t)(value | 0x80);
        value >>= 7;
    }
    at[len++] = (uint8_t)value;
    return len;
}

static void tst_entry(FILE *f, const uint8_t *message, size_t len)
{
    uint32_t len32 = (uint32_t)len;
    assert_int_equal(fwrite(&len32, sizeof(len32), 1, f), 1);
    assert_int_equal(fwrite(message, 1, len, f), len);
}

/* Open `path` as a pagemap image: the magics and the head naming pages id `pages_id`. */
static FILE *tst_pagemap_open(const char *path, unsigned pages_id)
{
    FILE *map = fopen(path, "w");
    uint32_t magic[2] = {0x54564319u, 0x56084025u};
    uint8_t message[16];
    size_t len = 0;

    assert_non_null(map);
    assert_int_equal(fwrite(magic, sizeof(magic), 1, map), 1);
    message[len++] = 0x08;
    len += tst_varint(message + len, pages_id);
    tst_entry(map, message, len);
    return map;
}

/* Directory `name` under the base, holding pagemap-7.img (pages id `pages_id`) with
 * `ranges`, its pages image, a core image, and a parent link when `parent` is given. */
static void tst_dump(const char *name, unsigned pages_id, const tst_range_t *ranges, size_t count,
                     const char *parent)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", tst_base, name);
    assert_int_equal(mkdir(path, 0700), 0);

    snprintf(path, sizeof(path), "%s/%s/pagemap-7.img", tst_base, name);
    FILE *map = tst_pagemap_open(path, pages_id);
    snprintf(path, sizeof(path), "%s/%s/pages-%u.img", tst_base, name, pages_id);
    FILE *pages = fopen(path, "w");
    assert_non_null(pages);
    uint8_t message[64];
    for (size_t i = 0; i < count; i++) {
        size_t len = 0;
        message[len++] = 0x08;
        len += tst_varint(message + len, tst_vaddr(ranges[i].first));
        message[len++] = 0x10;
        len += tst_varint(message + len, ranges[i].nr_pages);
        if (ranges[i].flags == LEGACY_IN_PARENT) {
            message[len++] = 0x18;
            message[len++] = 1;
        } else if (ranges[i].flags != LEGACY_PRESENT) {
            message[len++] = 0x20;
            len += tst_varint(message + len, ranges[i].flags);
        }
        tst_entry(map, message, len);
        if (!(ranges[i].flags & (PRESENT | LEGACY_PRESENT)))
            continue;
        char *bytes = malloc((size_t)tst_page);
        for (unsigned p = 0; p < ranges[i].nr_pages; p++) {
            memset(bytes, ranges[i].fill + (char)(ranges[i].first + p), (size_t)tst_page);
            assert_int_equal(fwrite(bytes, 1, (size_t)tst_page, pages), (size_t)tst_page);
        }
        free(bytes);
    }
    fclose(map);
    fclose(pages);

    snprintf(path, sizeof(path), "%s/%s/core-7.img", tst_base, name);
    FILE *core = fopen(path, "w");
    assert_non_null(core);
    fprintf(core, "core of %s\n", name);
    fclose(core);
    if (parent) {
        char target[512];
        snprintf(path, sizeof(path), "%s/%s/parent", tst_base, name);
        snprintf(target, sizeof(target), "%s/%s", tst_base, parent);
        assert_int_equal(symlink(target, path), 0);
    }
}

static char *tst_path(const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", tst_base, name);
    return buf;
}

/* Flatten `name` (parents given newest first) into `out`. */
static int tst_flatten(const char *name, const char *const *parent_names, const char *out,
                       uint64_t *bytes_out, char *errbuf, size_t errlen)
{
    char dir[512], out_dir[512], parent_dirs[4][512];
    const char *parents[5] = {NULL};
    for (size_t i = 0; parent_names && parent_names[i]; i++)
        parents[i] = tst_path(parent_names[i], parent_dirs[i], sizeof(parent_dirs[i]));
    tst_path(out, out_dir, sizeof(out_dir));
    assert_int_equal(mkdir(out_dir, 0700), 0);
    return crs_criu_flatten(tst_path(name, dir, sizeof(dir)), parents, out_dir, bytes_out, errbuf,
                            errlen);
}

/* Read the flattened pagemap back: every range present, as many as `expect`, same places. */
static void tst_check_pagemap(const char *out, unsigned pages_id, const tst_range_t *expect,
                              size_t count)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s/pagemap-7.img", tst_base, out);
    FILE *map = fopen(path, "r");
    assert_non_null(map);
    uint32_t magic[2], len;
    uint8_t message[64];
    assert_int_equal(fread(magic, sizeof(magic), 1, map), 1);
    assert_int_equal(magic[0], 0x54564319u);
    assert_int_equal(magic[1], 0x56084025u);
    uint8_t head[8];
    size_t head_len = 0;
    head[head_len++] = 0x08;
    head_len += tst_varint(head + head_len, pages_id);
    assert_int_equal(fread(&len, sizeof(len), 1, map), 1);
    assert_int_equal(len, head_len);
    assert_int_equal(fread(message, 1, len, map), len);
    assert_memory_equal(message, head, head_len);
    for (size_t i = 0; i < count; i++) {
        uint8_t want[64];
        size_t want_len = 0;
        want[want_len++] = 0x08;
        want_len += tst_varint(want + want_len, tst_vaddr(expect[i].first));
        want[want_len++] = 0x10;
        want_len += tst_varint(want + want_len, expect[i].nr_pages);
        want[want_len++] = 0x20;
        want[want_len++] = PRESENT;
        assert_int_equal(fread(&len, sizeof(len), 1, map), 1);
        assert_int_equal(len, want_len);
        assert_int_equal(fread(message, 1, len, map), len);
        assert_memory_equal(message, want, want_len);
    }
    assert_int_equal(fread(&len, 1, 1, map), 0); /* nothing more */
    fclose(map);
}

/* The flattened pages image holds, page after page, the bytes `fills` say (fill + page). */
static void tst_check_pages(const char *out, unsigned pages_id, const unsigned *pages,
                            const char *fills, size_t count)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s/pages-%u.img", tst_base, out, pages_id);
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    char *bytes = malloc((size_t)tst_page), *want = malloc((size_t)tst_page);
    for (size_t i = 0; i < count; i++) {
        assert_int_equal(read(fd, bytes, (size_t)tst_page), tst_page);
        memset(want, fills[i] + (char)pages[i], (size_t)tst_page);
        if (memcmp(bytes, want, (size_t)tst_page))
            fail_msg("page %zu of the flattened image (address page %u) is not from the dump "
                     "that holds it (%d, expected %d)",
                     i, pages[i], bytes[0], want[0]);
    }
    assert_int_equal(read(fd, bytes, 1), 0);
    free(bytes);
    free(want);
    close(fd);
}

static int tst_setup(void **state)
{
    (void)state;
    tst_page = sysconf(_SC_PAGESIZE);
    return mkdtemp(tst_base) ? 0 : -1;
}

static int tst_teardown(void **state)
{
    (void)state;
    char command[600];
    snprintf(command, sizeof(command), "rm -rf '%s'", tst_base);
    return system(command) == 0 ? 0 : -1;
}

/*
 * Three dumps: d0 full; d1 rewrote page 0 of the first area, added area C (page 40);
 * d2 rewrote pages 2-3 and page 41 of C. d2's ranges split the first area differently
 * from d1's, its area B comes from d0 through d1, and d1's range for page 0 is an old
 * image's in_parent-free entry.
 */
static void test_flatten_chain(void **state)
{
    (void)state;
    const tst_range_t d0[] = {{0, 4, PRESENT, 'a'}, {10, 2, PRESENT, 'b'}};
    const tst_range_t d1[] = {{0, 1, LEGACY_PRESENT, 'c'},
                              {1, 3, LEGACY_IN_PARENT, 0},
                              {10, 2, PARENT, 0},
                              {40, 2, PRESENT, 'd'}};
    const tst_range_t d2[] = {{0, 2, PARENT, 0},
                              {2, 2, PRESENT, 'e'},
                              {10, 2, PARENT, 0},
                              {40, 1, PARENT, 0},
                              {41, 1, PRESENT, 'f'}};
    tst_dump("d0", 1, d0, 2, NULL);
    tst_dump("d1", 2, d1, 4, "d0");
    tst_dump("d2", 3, d2, 5, "d1");

    const char *parents[] = {"d1", "d0", NULL};
    char errbuf[512] = "";
    uint64_t bytes = 0;
    if (tst_flatten("d2", parents, "flat", &bytes, errbuf, sizeof(errbuf)) != CRMPI_OK)
        fail_msg("flatten: %s", errbuf);
    tst_check_pagemap("flat", 3, d2, 5);
    const unsigned pages[] = {0, 1, 2, 3, 10, 11, 40, 41};
    const char fills[] = {'c', 'a', 'e', 'e', 'b', 'b', 'd', 'f'};
    tst_check_pages("flat", 3, pages, fills, 8);
    assert_int_equal(bytes, 8 * (uint64_t)tst_page);

    /* Other images are the dump's own (the same file), and no parent link is left. */
    char path[512], original[512];
    struct stat st, st_original;
    snprintf(path, sizeof(path), "%s/flat/core-7.img", tst_base);
    snprintf(original, sizeof(original), "%s/d2/core-7.img", tst_base);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(stat(original, &st_original), 0);
    assert_int_equal(st.st_ino, st_original.st_ino);
    snprintf(path, sizeof(path), "%s/flat/parent", tst_base);
    assert_int_equal(lstat(path, &st), -1);
    snprintf(path, sizeof(path), "%s/flat/pages-1.img", tst_base);
    assert_int_equal(lstat(path, &st), -1);

    /* Flattening the flattened dump changes nothing: it needs no parent. */
    if (tst_flatten("flat", NULL, "flat-again", NULL, errbuf, sizeof(errbuf)) != CRMPI_OK)
        fail_msg("flatten of a full dump: %s", errbuf);
    tst_check_pagemap("flat-again", 3, d2, 5);
    tst_check_pages("flat-again", 3, pages, fills, 8);
}

/* Chains it must refuse, each with a message naming the problem; what it wrote is left for
 * the caller to remove with the directory. */
static void test_flatten_broken(void **state)
{
    (void)state;
    char errbuf[512] = "";
    const char *only_d1[] = {"d1", NULL};
    const char *d0_only[] = {"d0", NULL};

    /* d2 sends area B to d1, which sends it to d0: not given. */
    assert_int_equal(tst_flatten("d2", only_d1, "short", NULL, errbuf, sizeof(errbuf)),
                     CRMPI_ERR_NOT_FOUND);
    assert_non_null(strstr(errbuf, "the chain has no more dumps"));
    /* d1 skipped: d0 has no page 41. */
    assert_int_equal(tst_flatten("d2", d0_only, "gap", NULL, errbuf, sizeof(errbuf)),
                     CRMPI_ERR_NOT_FOUND);
    assert_non_null(strstr(errbuf, "has no page at"));
    /* A pagemap whose magic is not CRIU's. */
    const tst_range_t bad[] = {{0, 1, PRESENT, 'x'}};
    tst_dump("bad", 9, bad, 1, NULL);
    char path[512];
    snprintf(path, sizeof(path), "%s/bad/pagemap-7.img", tst_base);
    int fd = open(path, O_WRONLY);
    assert_int_equal(pwrite(fd, "XXXX", 4, 0), 4);
    close(fd);
    assert_int_equal(tst_flatten("bad", NULL, "bad-out", NULL, errbuf, sizeof(errbuf)),
                     CRMPI_ERR_PROTO);
    assert_non_null(strstr(errbuf, "is not a pagemap image"));
    /* Present ranges whose bytes add up to more than a file can hold (each range fits in
     * the address space, and they do not overlap). */
    snprintf(path, sizeof(path), "%s/bad/pagemap-7.img", tst_base);
    FILE *map = tst_pagemap_open(path, 9);
    uint8_t message[64];
    for (uint64_t quarter = 0; quarter < 3; quarter++) {
        size_t len = 0;
        message[len++] = 0x08;
        len += tst_varint(message + len, quarter << 62);
        message[len++] = 0x10;
        len += tst_varint(message + len, (1ull << 62) / (uint64_t)tst_page);
        message[len++] = 0x20;
        len += tst_varint(message + len, PRESENT);
        tst_entry(map, message, len);
    }
    fclose(map);
    assert_int_equal(tst_flatten("bad", NULL, "huge-out", NULL, errbuf, sizeof(errbuf)),
                     CRMPI_ERR_PROTO);
    assert_non_null(strstr(errbuf, "is not a pagemap image"));
    /* A pages image shorter than its pagemap. */
    tst_dump("short-pages", 9, bad, 1, NULL);
    snprintf(path, sizeof(path), "%s/short-pages/pages-9.img", tst_base);
    assert_int_equal(truncate(path, tst_page / 2), 0);
    assert_int_equal(tst_flatten("short-pages", NULL, "short-out", NULL, errbuf, sizeof(errbuf)),
                     CRMPI_ERR_IO);
    assert_non_null(strstr(errbuf, "shorter than its pagemap says"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flatten_chain),
        cmocka_unit_test(test_flatten_broken),
    };
    return cmocka_run_group_tests(tests, tst_setup, tst_teardown);
}
