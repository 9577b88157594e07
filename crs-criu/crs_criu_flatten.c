/*
 * crs_criu_flatten.c: one full image directory made of an incremental dump and the chain
 * of dumps under it (crs_criu_int.h), so that the older dumps of a chain can be deleted.
 *
 * CRIU's memory images come in pairs. pagemap-ID.img (pagemap-shmem-ID.img for a shared
 * memory segment) lists page ranges in address order; pages-N.img, N given by the pagemap's
 * head, holds the bytes of the ranges flagged PE_PRESENT, one after the other in pagemap
 * order. A range flagged PE_PARENT holds no bytes here: they are in the parent dump's
 * pagemap of the same name, which may send them on to its own parent. The flattened
 * directory has every other file of the dump unchanged (hard-linked, or copied when the
 * link cannot be made) and each pagemap rewritten with its ranges unchanged but every one
 * present, its bytes taken from the dump of the chain that holds them.
 *
 * A pagemap is a CRIU image: two 32-bit magics, then entries, each a 32-bit length and a
 * protobuf message (CRIU's images/pagemap.proto: the head {pages_id = 1}, then one entry
 * per range {vaddr = 1, nr_pages = 2, in_parent = 3, flags = 4}). Those four scalar fields
 * are decoded and encoded here rather than through protobuf-c, whose generated code would
 * need CRIU's .proto files at build time for two messages of integers.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "crs_criu_int.h"

/* CRIU's image magics (criu/include/magic.h): every image, then the pagemap's own. */
#define CRS_CRIU_FLAT_IMG_COMMON_MAGIC 0x54564319u
#define CRS_CRIU_FLAT_PAGEMAP_MAGIC    0x56084025u
/* pagemap_entry.flags (criu/include/pagemap.h). */
#define CRS_CRIU_FLAT_PE_PARENT  (1u << 0)
#define CRS_CRIU_FLAT_PE_LAZY    (1u << 1)
#define CRS_CRIU_FLAT_PE_PRESENT (1u << 2)
/* What CRIU names the link to the parent images in an images directory. */
#define CRS_CRIU_FLAT_PARENT_LINK "parent"
/* Longest pagemap image accepted: a pagemap entry is at most 30 bytes with its length, so
 * this is millions of ranges. */
#define CRS_CRIU_FLAT_PAGEMAP_MAX (256u << 20)

/* One range of a pagemap. */
typedef struct crs_criu_flat_range {
    uint64_t vaddr;    /* its first page's address */
    uint64_t nr_pages; /* pages in it */
    uint32_t flags;    /* CRS_CRIU_FLAT_PE_* (an old image's in_parent folded into PE_PARENT) */
    off_t offset;      /* PE_PRESENT: where its bytes start in the pages image */
} crs_criu_flat_range_t;

/* One dump's pagemap of a given name. */
typedef struct crs_criu_flat_map {
    uint32_t pages_id;             /* its pages image is pages-<pages_id>.img */
    crs_criu_flat_range_t *ranges; /* in address order */
    size_t num_ranges;             /* entries in ranges */
    int pages_fd;                  /* the pages image, -1 when no range is present */
    const char *dir;               /* the dump's directory (for messages) */
} crs_criu_flat_map_t;

/* What one flatten call works with. */
typedef struct crs_criu_flat_ctx {
    const char *name;            /* the pagemap's file name */
    crs_criu_flat_map_t *levels; /* [0]: the dump, [i]: its i-th parent, read when first needed */
    bool *loaded;                /* per level: read */
    size_t num_levels;           /* 1 + parents */
    const char *const *dirs;     /* per level: its directory */
    long page_size;              /* the host's (CRIU's images use it) */
    int out_fd;                  /* the flattened pages image being written */
    uint64_t bytes_copied;       /* bytes written to the flattened pages images */
    char *errbuf;                /* the caller's */
    size_t errbuf_len;
} crs_criu_flat_ctx_t;

/* ---- the protobuf subset ------------------------------------------------------------ */

static int crs_criu_flat_varint_get(const uint8_t **at, const uint8_t *end, uint64_t *value_out)
{
    uint64_t value = 0;

    for (unsigned shift = 0; shift < 64 && *at < end; shift += 7) {
        uint8_t byte = *(*at)++;

        value |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *value_out = value;
            return CRMPI_OK;
        }
    }
    return CRMPI_ERR_PROTO;
}

static size_t crs_criu_flat_varint_put(uint8_t *at, uint64_t value)
{
    size_t len = 0;

    do {
        at[len++] = (uint8_t)((value & 0x7f) | (value > 0x7f ? 0x80 : 0));
        value >>= 7;
    } while (value);
    return len;
}

/* Decode one message: varint fields 1 to 4 into fields[], present[]; other fields are
 * skipped by their wire type, as protobuf requires of unknown ones. */
static int crs_criu_flat_message_decode(const uint8_t *at, const uint8_t *end, uint64_t fields[5],
                                        bool present[5])
{
    while (at < end) {
        uint64_t key, value;

        if (crs_criu_flat_varint_get(&at, end, &key) != CRMPI_OK)
            return CRMPI_ERR_PROTO;
        switch (key & 7) {
        case 0: /* varint */
            if (crs_criu_flat_varint_get(&at, end, &value) != CRMPI_OK)
                return CRMPI_ERR_PROTO;
            if ((key >> 3) >= 1 && (key >> 3) <= 4) {
                fields[key >> 3] = value;
                present[key >> 3] = true;
            }
            break;
        case 1: /* 64-bit */
            if (end - at < 8)
                return CRMPI_ERR_PROTO;
            at += 8;
            break;
        case 2: /* length-delimited */
            if (crs_criu_flat_varint_get(&at, end, &value) != CRMPI_OK ||
                value > (uint64_t)(end - at))
                return CRMPI_ERR_PROTO;
            at += value;
            break;
        case 5: /* 32-bit */
            if (end - at < 4)
                return CRMPI_ERR_PROTO;
            at += 4;
            break;
        default: return CRMPI_ERR_PROTO;
        }
    }
    return CRMPI_OK;
}

/* ---- reading a pagemap -------------------------------------------------------------- */

static int crs_criu_flat_read_all(int fd, uint8_t **data_out, size_t *len_out)
{
    struct stat st;
    uint8_t *data;
    size_t done = 0;

    if (fstat(fd, &st) < 0 || st.st_size < 0 || (uint64_t)st.st_size > CRS_CRIU_FLAT_PAGEMAP_MAX) {
        errno = errno ? errno : EFBIG;
        return CRMPI_ERR_IO;
    }
    data = malloc((size_t)st.st_size + 1);
    if (!data)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    while (done < (size_t)st.st_size) {
        ssize_t got = read(fd, data + done, (size_t)st.st_size - done);

        if (got <= 0) {
            if (got < 0 && errno == EINTR)
                continue;
            free(data);
            errno = got < 0 ? errno : EIO;
            return CRMPI_ERR_IO;
        }
        done += (size_t)got;
    }
    *data_out = data;
    *len_out = done;
    return CRMPI_OK;
}

/* Decode the pagemap image `data`: its head's pages id and its ranges, with the offset of
 * each present one in the pages image. */
static int crs_criu_flat_pagemap_decode(const uint8_t *data, size_t len, long page_size,
                                        crs_criu_flat_map_t *map)
{
    const uint8_t *at = data, *end = data + len;
    uint32_t magic[2], entry_len;
    uint64_t offset = 0; /* of the next present range in the pages image */
    size_t cap = 0;

    if (len < sizeof(magic))
        return CRMPI_ERR_PROTO;
    memcpy(magic, at, sizeof(magic));
    at += sizeof(magic);
    if (magic[0] != CRS_CRIU_FLAT_IMG_COMMON_MAGIC || magic[1] != CRS_CRIU_FLAT_PAGEMAP_MAGIC)
        return CRMPI_ERR_PROTO;
    for (bool head = true; at < end; head = false) {
        uint64_t fields[5] = {0};
        bool present[5] = {false};

        if ((size_t)(end - at) < sizeof(entry_len))
            return CRMPI_ERR_PROTO;
        memcpy(&entry_len, at, sizeof(entry_len));
        at += sizeof(entry_len);
        if (entry_len > (size_t)(end - at) ||
            crs_criu_flat_message_decode(at, at + entry_len, fields, present) != CRMPI_OK)
            return CRMPI_ERR_PROTO;
        at += entry_len;
        if (head) {
            if (!present[1] || fields[1] > UINT32_MAX)
                return CRMPI_ERR_PROTO;
            map->pages_id = (uint32_t)fields[1];
            continue;
        }
        if (!present[1] || !present[2] || fields[2] == 0 ||
            fields[2] > UINT64_MAX / 2 / (uint64_t)page_size || fields[1] % (uint64_t)page_size ||
            fields[1] + fields[2] * (uint64_t)page_size < fields[1] || fields[4] > UINT32_MAX)
            return CRMPI_ERR_PROTO;
        crs_criu_flat_range_t range = {
            .vaddr = fields[1],
            .nr_pages = fields[2],
            .flags = (uint32_t)fields[4] | (present[3] && fields[3] ? CRS_CRIU_FLAT_PE_PARENT : 0),
            .offset = (off_t)offset};
        /* An image older than the flags field: a range not in the parent is present. */
        if (!present[4] && !(range.flags & CRS_CRIU_FLAT_PE_PARENT))
            range.flags |= CRS_CRIU_FLAT_PE_PRESENT;
        if (map->num_ranges &&
            range.vaddr < map->ranges[map->num_ranges - 1].vaddr +
                              map->ranges[map->num_ranges - 1].nr_pages * (uint64_t)page_size)
            return CRMPI_ERR_PROTO; /* out of order or overlapping: not a pagemap we know */
        if (range.flags & CRS_CRIU_FLAT_PE_PRESENT) {
            uint64_t bytes = range.nr_pages * (uint64_t)page_size;

            if (bytes > (uint64_t)INT64_MAX - offset)
                return CRMPI_ERR_PROTO; /* more bytes than a file can hold */
            offset += bytes;
        }
        if (map->num_ranges == cap) {
            size_t grown_cap = cap ? cap * 2 : 64;
            crs_criu_flat_range_t *grown = realloc(map->ranges, grown_cap * sizeof(*grown));

            if (!grown)
                return CRMPI_ERR_OUT_OF_RESOURCE;
            map->ranges = grown;
            cap = grown_cap;
        }
        map->ranges[map->num_ranges++] = range;
    }
    return CRMPI_OK;
}

static void crs_criu_flat_map_clear(crs_criu_flat_map_t *map)
{
    free(map->ranges);
    if (map->pages_fd >= 0)
        close(map->pages_fd);
    *map = (crs_criu_flat_map_t){.pages_fd = -1};
}

/* Read dump `level`'s pagemap of the context's name, and open its pages image. */
static int crs_criu_flat_level_load(crs_criu_flat_ctx_t *ctx, size_t level)
{
    crs_criu_flat_map_t *map = &ctx->levels[level];
    const char *dir = ctx->dirs[level];
    char path[4200];
    uint8_t *data = NULL;
    size_t len = 0;
    int fd, rc;

    if (ctx->loaded[level])
        return CRMPI_OK;
    *map = (crs_criu_flat_map_t){.pages_fd = -1, .dir = dir};
    snprintf(path, sizeof(path), "%s/%s", dir, ctx->name);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return crs_criu_fail(ctx->errbuf, ctx->errbuf_len,
                             errno == ENOENT ? CRMPI_ERR_NOT_FOUND : CRMPI_ERR_IO,
                             "crs:criu: flatten: cannot open %s: %s", path, strerror(errno));
    rc = crs_criu_flat_read_all(fd, &data, &len);
    close(fd);
    if (rc == CRMPI_OK)
        rc = crs_criu_flat_pagemap_decode(data, len, ctx->page_size, map);
    free(data);
    if (rc != CRMPI_OK) {
        crs_criu_flat_map_clear(map);
        return crs_criu_fail(ctx->errbuf, ctx->errbuf_len, rc,
                             "crs:criu: flatten: %s is not a pagemap image this version reads",
                             path);
    }
    for (size_t i = 0; i < map->num_ranges; i++) {
        if (!(map->ranges[i].flags & CRS_CRIU_FLAT_PE_PRESENT))
            continue;
        snprintf(path, sizeof(path), "%s/pages-%" PRIu32 ".img", dir, map->pages_id);
        map->pages_fd = open(path, O_RDONLY | O_CLOEXEC);
        if (map->pages_fd < 0) {
            rc = crs_criu_fail(ctx->errbuf, ctx->errbuf_len, CRMPI_ERR_IO,
                               "crs:criu: flatten: cannot open %s: %s", path, strerror(errno));
            crs_criu_flat_map_clear(map);
            return rc;
        }
        break;
    }
    ctx->loaded[level] = true;
    return CRMPI_OK;
}

/* ---- writing ------------------------------------------------------------------------ */

static int crs_criu_flat_write_all(int fd, const void *buf, size_t len)
{
    const char *at = buf;

    while (len) {
        ssize_t put = write(fd, at, len);

        if (put < 0) {
            if (errno == EINTR)
                continue;
            return CRMPI_ERR_IO;
        }
        at += put;
        len -= (size_t)put;
    }
    return CRMPI_OK;
}

/* Append `len` bytes of `from`'s pages image from `offset` to the context's pages image. */
static int crs_criu_flat_copy(crs_criu_flat_ctx_t *ctx, const crs_criu_flat_map_t *from,
                              off_t offset, size_t len)
{
    char buf[1 << 16];

    while (len) {
        ssize_t got = copy_file_range(from->pages_fd, &offset, ctx->out_fd, NULL, len, 0);

        if (got < 0 &&
            (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
            got = pread(from->pages_fd, buf, len < sizeof(buf) ? len : sizeof(buf), offset);
            if (got > 0 && crs_criu_flat_write_all(ctx->out_fd, buf, (size_t)got) != CRMPI_OK)
                got = -1;
            else if (got > 0)
                offset += got;
        }
        if (got <= 0)
            return crs_criu_fail(ctx->errbuf, ctx->errbuf_len, CRMPI_ERR_IO,
                                 "crs:criu: flatten: reading pages-%" PRIu32 ".img in %s: %s",
                                 from->pages_id, from->dir,
                                 got < 0 ? strerror(errno) : "shorter than its pagemap says");
        len -= (size_t)got;
        ctx->bytes_copied += (uint64_t)got;
    }
    return CRMPI_OK;
}

/* Append the bytes of `nr_pages` pages from `vaddr` on as dump `level` holds them, going
 * down the chain for the ranges it leaves to its parent. */
static int crs_criu_flat_resolve(crs_criu_flat_ctx_t *ctx, size_t level, uint64_t vaddr,
                                 uint64_t nr_pages)
{
    const uint64_t page = (uint64_t)ctx->page_size;

    if (level >= ctx->num_levels)
        return crs_criu_fail(ctx->errbuf, ctx->errbuf_len, CRMPI_ERR_NOT_FOUND,
                             "crs:criu: flatten: %s/%s leaves the page at %#" PRIx64
                             " to a parent, and the chain has no more dumps",
                             ctx->dirs[level - 1], ctx->name, vaddr);
    int rc = crs_criu_flat_level_load(ctx, level);
    if (rc != CRMPI_OK)
        return rc;
    const crs_criu_flat_map_t *map = &ctx->levels[level];

    while (nr_pages) {
        /* The last range that starts at or below vaddr. */
        size_t lo = 0, hi = map->num_ranges;

        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;

            if (map->ranges[mid].vaddr <= vaddr)
                lo = mid + 1;
            else
                hi = mid;
        }
        const crs_criu_flat_range_t *range = lo ? &map->ranges[lo - 1] : NULL;
        if (!range || vaddr >= range->vaddr + range->nr_pages * page)
            return crs_criu_fail(ctx->errbuf, ctx->errbuf_len, CRMPI_ERR_NOT_FOUND,
                                 "crs:criu: flatten: %s/%s has no page at %#" PRIx64
                                 ", which the dump above it leaves to it",
                                 map->dir, ctx->name, vaddr);
        uint64_t skip = (vaddr - range->vaddr) / page;
        uint64_t take = range->nr_pages - skip < nr_pages ? range->nr_pages - skip : nr_pages;

        if (range->flags & CRS_CRIU_FLAT_PE_PRESENT)
            rc = crs_criu_flat_copy(ctx, map, range->offset + (off_t)(skip * page), take * page);
        else if (range->flags & CRS_CRIU_FLAT_PE_PARENT)
            rc = crs_criu_flat_resolve(ctx, level + 1, vaddr, take);
        else
            rc = crs_criu_fail(ctx->errbuf, ctx->errbuf_len, CRMPI_ERR_NOT_SUPPORTED,
                               "crs:criu: flatten: %s/%s: the range at %#" PRIx64
                               " is neither present nor in a parent (flags %#x)",
                               map->dir, ctx->name, range->vaddr, range->flags);
        if (rc != CRMPI_OK)
            return rc;
        vaddr += take * page;
        nr_pages -= take;
    }
    return CRMPI_OK;
}

static int crs_criu_flat_entry_put(int fd, const uint8_t *message, size_t len)
{
    uint32_t len32 = (uint32_t)len;

    if (crs_criu_flat_write_all(fd, &len32, sizeof(len32)) != CRMPI_OK ||
        crs_criu_flat_write_all(fd, message, len) != CRMPI_OK)
        return CRMPI_ERR_IO;
    return CRMPI_OK;
}

/* Write `map` (the dump's own pagemap) as a flattened pagemap image into `fd`: the same
 * head and ranges, each present; the lazy flag is kept. */
static int crs_criu_flat_pagemap_write(const crs_criu_flat_map_t *map, int fd)
{
    uint32_t magic[2] = {CRS_CRIU_FLAT_IMG_COMMON_MAGIC, CRS_CRIU_FLAT_PAGEMAP_MAGIC};
    uint8_t message[32];
    size_t len;

    if (crs_criu_flat_write_all(fd, magic, sizeof(magic)) != CRMPI_OK)
        return CRMPI_ERR_IO;
    message[0] = 1 << 3;
    len = 1 + crs_criu_flat_varint_put(message + 1, map->pages_id);
    if (crs_criu_flat_entry_put(fd, message, len) != CRMPI_OK)
        return CRMPI_ERR_IO;
    for (size_t i = 0; i < map->num_ranges; i++) {
        const crs_criu_flat_range_t *range = &map->ranges[i];
        uint32_t flags = (range->flags & CRS_CRIU_FLAT_PE_LAZY) |
                         (range->flags & (CRS_CRIU_FLAT_PE_PRESENT | CRS_CRIU_FLAT_PE_PARENT)
                              ? CRS_CRIU_FLAT_PE_PRESENT
                              : 0);

        len = 0;
        message[len++] = 1 << 3;
        len += crs_criu_flat_varint_put(message + len, range->vaddr);
        message[len++] = 2 << 3;
        len += crs_criu_flat_varint_put(message + len, range->nr_pages);
        message[len++] = 4 << 3;
        len += crs_criu_flat_varint_put(message + len, flags);
        if (crs_criu_flat_entry_put(fd, message, len) != CRMPI_OK)
            return CRMPI_ERR_IO;
    }
    return CRMPI_OK;
}

/* ---- the directory ------------------------------------------------------------------ */

static void crs_criu_flat_levels_clear(crs_criu_flat_ctx_t *ctx)
{
    for (size_t i = 0; i < ctx->num_levels; i++)
        if (ctx->loaded[i])
            crs_criu_flat_map_clear(&ctx->levels[i]);
    memset(ctx->loaded, 0, ctx->num_levels * sizeof(*ctx->loaded));
}

/* Is `name` PREFIX...img, an image of that kind? */
static bool crs_criu_flat_name_is(const char *name, const char *prefix)
{
    size_t len = strlen(name), prefix_len = strlen(prefix);

    return len > prefix_len + 4 && !strncmp(name, prefix, prefix_len) &&
           !strcmp(name + len - 4, ".img");
}

static int crs_criu_flat_create(int dir_fd, const char *name)
{
    return openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
}

/* Flatten pagemap `name` of the dump into out_fd's directory: its pages image, then it. */
static int crs_criu_flat_pagemap(crs_criu_flat_ctx_t *ctx, int out_dir_fd, const char *out_dir)
{
    char pages_name[64];
    int map_fd = -1, rc;

    rc = crs_criu_flat_level_load(ctx, 0);
    if (rc != CRMPI_OK)
        return rc;
    const crs_criu_flat_map_t *map = &ctx->levels[0];
    snprintf(pages_name, sizeof(pages_name), "pages-%" PRIu32 ".img", map->pages_id);
    ctx->out_fd = crs_criu_flat_create(out_dir_fd, pages_name);
    if (ctx->out_fd < 0)
        return crs_criu_fail(ctx->errbuf, ctx->errbuf_len, CRMPI_ERR_IO,
                             "crs:criu: flatten: cannot create %s/%s: %s", out_dir, pages_name,
                             strerror(errno));
    for (size_t i = 0; i < map->num_ranges && rc == CRMPI_OK; i++) {
        const crs_criu_flat_range_t *range = &map->ranges[i];

        if (range->flags & CRS_CRIU_FLAT_PE_PRESENT)
            rc = crs_criu_flat_copy(ctx, map, range->offset,
                                    (size_t)(range->nr_pages * (uint64_t)ctx->page_size));
        else if (range->flags & CRS_CRIU_FLAT_PE_PARENT)
            rc = crs_criu_flat_resolve(ctx, 1, range->vaddr, range->nr_pages);
    }
    if (rc == CRMPI_OK && fsync(ctx->out_fd) < 0)
        rc = crs_criu_fail(ctx->errbuf, ctx->errbuf_len, CRMPI_ERR_IO,
                           "crs:criu: flatten: writing %s/%s: %s", out_dir, pages_name,
                           strerror(errno));
    close(ctx->out_fd);
    ctx->out_fd = -1;
    if (rc != CRMPI_OK)
        return rc;
    map_fd = crs_criu_flat_create(out_dir_fd, ctx->name);
    if (map_fd < 0 || crs_criu_flat_pagemap_write(map, map_fd) != CRMPI_OK || fsync(map_fd) < 0)
        rc = crs_criu_fail(ctx->errbuf, ctx->errbuf_len, CRMPI_ERR_IO,
                           "crs:criu: flatten: writing %s/%s: %s", out_dir, ctx->name,
                           strerror(errno));
    if (map_fd >= 0)
        close(map_fd);
    return rc;
}

/* Give out_dir the dump's file `name` unchanged: a hard link, or a copy across file
 * systems; a symbolic link is made again. */
static int crs_criu_flat_take(int dir_fd, int out_dir_fd, const char *name, const char *out_dir,
                              char *errbuf, size_t errbuf_len)
{
    struct stat st;
    char target[4096];
    int in_fd = -1, out_fd = -1, rc = CRMPI_OK;

    if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        goto fail;
    if (S_ISLNK(st.st_mode)) {
        ssize_t len = readlinkat(dir_fd, name, target, sizeof(target) - 1);

        if (len < 0)
            goto fail;
        target[len] = '\0';
        if (symlinkat(target, out_dir_fd, name) < 0)
            goto fail;
        return CRMPI_OK;
    }
    if (!S_ISREG(st.st_mode))
        return crs_criu_fail(errbuf, errbuf_len, CRMPI_ERR_NOT_SUPPORTED,
                             "crs:criu: flatten: %s is neither a file nor a link", name);
    if (linkat(dir_fd, name, out_dir_fd, name, 0) == 0)
        return CRMPI_OK;
    if (errno != EXDEV && errno != EPERM && errno != EMLINK)
        goto fail;
    in_fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC);
    out_fd = crs_criu_flat_create(out_dir_fd, name);
    if (in_fd < 0 || out_fd < 0)
        goto fail;
    for (off_t left = st.st_size; left > 0;) {
        ssize_t got = copy_file_range(in_fd, NULL, out_fd, NULL, (size_t)left, 0);

        if (got <= 0)
            goto fail;
        left -= got;
    }
    if (fsync(out_fd) < 0)
        goto fail;
    goto out;
fail:
    rc = crs_criu_fail(errbuf, errbuf_len, CRMPI_ERR_IO, "crs:criu: flatten: %s into %s: %s", name,
                       out_dir, strerror(errno));
out:
    if (in_fd >= 0)
        close(in_fd);
    if (out_fd >= 0)
        close(out_fd);
    return rc;
}

int crs_criu_flatten(const char *images_dir, const char *const *parents, const char *out_dir,
                     uint64_t *bytes_out, char *errbuf, size_t errbuf_len)
{
    size_t num_parents = 0;
    DIR *dir = NULL;
    int out_dir_fd = -1, rc = CRMPI_OK;

    while (parents && parents[num_parents])
        num_parents++;
    const char **dirs = calloc(num_parents + 1, sizeof(*dirs));
    crs_criu_flat_map_t *levels = calloc(num_parents + 1, sizeof(*levels));
    bool *loaded = calloc(num_parents + 1, sizeof(*loaded));
    crs_criu_flat_ctx_t ctx = {.levels = levels,
                               .loaded = loaded,
                               .num_levels = num_parents + 1,
                               .dirs = dirs,
                               .page_size = sysconf(_SC_PAGESIZE),
                               .out_fd = -1,
                               .errbuf = errbuf,
                               .errbuf_len = errbuf_len};

    if (!dirs || !levels || !loaded) {
        rc = crs_criu_fail(errbuf, errbuf_len, CRMPI_ERR_OUT_OF_RESOURCE,
                           "crs:criu: flatten: out of memory");
        goto out;
    }
    dirs[0] = images_dir;
    for (size_t i = 0; i < num_parents; i++)
        dirs[i + 1] = parents[i];
    dir = opendir(images_dir);
    out_dir_fd = open(out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (!dir || out_dir_fd < 0) {
        rc =
            crs_criu_fail(errbuf, errbuf_len, CRMPI_ERR_IO, "crs:criu: flatten: cannot open %s: %s",
                          !dir ? images_dir : out_dir, strerror(errno));
        goto out;
    }
    for (struct dirent *entry; rc == CRMPI_OK && (entry = readdir(dir));) {
        const char *name = entry->d_name;

        if (!strcmp(name, ".") || !strcmp(name, "..") || !strcmp(name, CRS_CRIU_FLAT_PARENT_LINK))
            continue;
        if (crs_criu_flat_name_is(name, "pages-"))
            continue; /* written again with its pagemap */
        if (crs_criu_flat_name_is(name, "pagemap-")) {
            ctx.name = name;
            rc = crs_criu_flat_pagemap(&ctx, out_dir_fd, out_dir);
            crs_criu_flat_levels_clear(&ctx);
            continue;
        }
        rc = crs_criu_flat_take(dirfd(dir), out_dir_fd, name, out_dir, errbuf, errbuf_len);
    }
    if (rc == CRMPI_OK && fsync(out_dir_fd) < 0)
        rc = crs_criu_fail(errbuf, errbuf_len, CRMPI_ERR_IO, "crs:criu: flatten: %s: %s", out_dir,
                           strerror(errno));
    if (rc == CRMPI_OK && bytes_out)
        *bytes_out = ctx.bytes_copied;
out:
    if (dir)
        closedir(dir);
    if (out_dir_fd >= 0)
        close(out_dir_fd);
    free(dirs);
    free(levels);
    free(loaded);
    return rc;
}
