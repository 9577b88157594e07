/*
 * filem_posix.c: the posix FileM component (filem.h): copies with read(2)/write(2) between
 * two directories this node can open, the global one being on storage every node mounts.
 *
 * The checksum is computed from the bytes read from the source, in the same pass as the
 * copy, so that each byte is read once; restart verifies it against what is on stable
 * storage, which is what catches a damaged write. A copy is durable when every file and
 * every directory it created has been fsync'ed, parents after children (fsync(2): syncing
 * a file does not make its directory entry durable).
 */
#include "config.h"

#include "filem.h"
#include "filem_posix.h"
#include "snapshot.h"
#include "snapshot_entry.h"
#include "filem_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "crmpi_status.h"
#include "fault.h"
#include "log.h"
#include "param.h"

/* Used when filem_posix_buffer_size is not declared in this process (unit tests). */
#define FILEM_POSIX_BUFFER_DEFAULT (1u << 20)
/* Snapshots hold a process's whole memory: only their owner may read them. */
#define FILEM_POSIX_FILE_MODE 0600
#define FILEM_POSIX_DIR_MODE  0700

/* One copy in progress. */
typedef struct filem_posix_copy {
    const crmpi_filem_transfer_t *transfer; /* what the caller asked for */
    uint8_t *buf;                           /* the chunk buffer */
    size_t buf_size;                        /* its size */
    uint64_t done;                          /* bytes copied so far, all files */
    uint64_t total;                         /* bytes to copy, all files */
    uint64_t started_ns;                    /* CLOCK_MONOTONIC at the start (max_rate) */
    char **dirs;                            /* directories created under dest_dir, to fsync */
    size_t num_dirs;                        /* entries in dirs */
} filem_posix_copy_t;

/* A file found under the source directory. */
typedef struct filem_posix_found {
    char *path;    /* relative to src_dir */
    uint64_t size; /* bytes, from stat */
} filem_posix_found_t;

static int filem_posix_errno_status(int err)
{
    return err == ENOSPC || err == EDQUOT ? CRMPI_ERR_OUT_OF_RESOURCE : CRMPI_ERR_IO;
}

static size_t filem_posix_buffer_size(void)
{
    uint64_t size;

    if (crmpi_param_get_size("filem_posix_buffer_size", &size) != CRMPI_OK || size < 4096 ||
        size > (1u << 30))
        return FILEM_POSIX_BUFFER_DEFAULT;
    return (size_t)size;
}

/* ---- walking the source --------------------------------------------------------------- */

static int filem_posix_found_compare(const void *a, const void *b)
{
    return strcmp(((const filem_posix_found_t *)a)->path, ((const filem_posix_found_t *)b)->path);
}

static void filem_posix_found_free(filem_posix_found_t *found, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(found[i].path);
    free(found);
}

/* Collect every regular file under src_dir/rel (rel "" for the top). */
static int filem_posix_walk(const crmpi_filem_transfer_t *transfer, const char *rel,
                            filem_posix_found_t **found, size_t *count)
{
    struct dirent *entry;
    char *dir_path;
    DIR *dir;
    int rc = CRMPI_OK;

    if (asprintf(&dir_path, "%s%s%s", transfer->src_dir, rel[0] ? "/" : "", rel) < 0)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    dir = opendir(dir_path);
    if (!dir) {
        crmpi_log_error("filem:posix: rank %d: cannot read %s: %s", transfer->rank, dir_path,
                        strerror(errno));
        free(dir_path);
        return errno == ENOENT ? CRMPI_ERR_NOT_FOUND : CRMPI_ERR_IO;
    }
    while (rc == CRMPI_OK && (entry = readdir(dir))) {
        filem_posix_found_t *grown;
        struct stat st;
        char *child_rel;
        char *child_path;

        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        if (asprintf(&child_rel, "%s%s%s", rel, rel[0] ? "/" : "", entry->d_name) < 0) {
            rc = CRMPI_ERR_OUT_OF_RESOURCE;
            break;
        }
        if (asprintf(&child_path, "%s/%s", dir_path, entry->d_name) < 0) {
            free(child_rel);
            rc = CRMPI_ERR_OUT_OF_RESOURCE;
            break;
        }
        if (lstat(child_path, &st) != 0) {
            crmpi_log_error("filem:posix: rank %d: cannot stat %s: %s", transfer->rank, child_path,
                            strerror(errno));
            rc = CRMPI_ERR_IO;
        } else if (S_ISDIR(st.st_mode)) {
            rc = filem_posix_walk(transfer, child_rel, found, count);
        } else if (!S_ISREG(st.st_mode)) {
            /* CRIU writes plain files; anything else would not survive a copy anyway. */
            crmpi_log_error("filem:posix: rank %d: %s is neither a file nor a directory; a "
                            "snapshot holds only those",
                            transfer->rank, child_path);
            rc = CRMPI_ERR_NOT_SUPPORTED;
        } else if (!(grown = realloc(*found, (*count + 1) * sizeof(*grown)))) {
            rc = CRMPI_ERR_OUT_OF_RESOURCE;
        } else {
            *found = grown;
            grown[(*count)++] = (filem_posix_found_t){.path = child_rel, .size = st.st_size};
            child_rel = NULL;
        }
        free(child_rel);
        free(child_path);
    }
    closedir(dir);
    free(dir_path);
    return rc;
}

/* ---- copying -------------------------------------------------------------------------- */

/* Create dest_dir/<each directory of rel_file's path>, remembering them for fsync. */
static int filem_posix_parents_create(filem_posix_copy_t *copy, const char *rel_file)
{
    const char *slash = rel_file;

    while ((slash = strchr(slash, '/'))) {
        char *dir;
        char **grown;

        if (asprintf(&dir, "%s/%.*s", copy->transfer->dest_dir, (int)(slash - rel_file), rel_file) <
            0)
            return CRMPI_ERR_OUT_OF_RESOURCE;
        slash++;
        if (mkdir(dir, FILEM_POSIX_DIR_MODE) != 0) {
            int err = errno;

            free(dir);
            if (err == EEXIST)
                continue;
            crmpi_log_error("filem:posix: rank %d: cannot create a directory in %s: %s",
                            copy->transfer->rank, copy->transfer->dest_dir, strerror(err));
            return filem_posix_errno_status(err);
        }
        grown = realloc(copy->dirs, (copy->num_dirs + 1) * sizeof(*grown));
        if (!grown) {
            free(dir);
            return CRMPI_ERR_OUT_OF_RESOURCE;
        }
        copy->dirs = grown;
        copy->dirs[copy->num_dirs++] = dir;
    }
    return CRMPI_OK;
}

static void filem_posix_sha256_hex(struct sha256_ctx *ctx, char *hex)
{
    uint8_t digest[SHA256_DIGEST_SIZE];

    sha256_digest(ctx, SHA256_DIGEST_SIZE, digest);
    for (size_t i = 0; i < SHA256_DIGEST_SIZE; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
}

/* Write all of `len` bytes. @return 0, or an errno value */
static int filem_posix_write_all(int fd, const uint8_t *data, size_t len)
{
    while (len > 0) {
        ssize_t written = write(fd, data, len);

        if (written < 0 && errno == EINTR)
            continue;
        if (written < 0)
            return errno;
        data += written;
        len -= (size_t)written;
    }
    return 0;
}

/* How one file is copied. */
typedef enum {
    FILEM_POSIX_AS_IS,      /* byte for byte */
    FILEM_POSIX_COMPRESS,   /* put: stored as <name>.zst */
    FILEM_POSIX_DECOMPRESS, /* get: a <name>.zst restored as <name> */
} filem_posix_how_t;

/* The destination file of a copy, and what went into it. */
typedef struct filem_posix_sink {
    int fd;                /* open for writing */
    struct sha256_ctx ctx; /* of the bytes written */
    uint64_t size;         /* bytes written */
    int err;               /* errno of a failed write, 0 */
} filem_posix_sink_t;

/* Write bandwidth this process measured on earlier copies (compress=auto decides with it). */
static double filem_posix_written_bytes, filem_posix_write_seconds;

static double filem_posix_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int filem_posix_sink_emit(void *arg, const uint8_t *data, size_t len)
{
    filem_posix_sink_t *sink = arg;
    double start = filem_posix_now();

    sha256_update(&sink->ctx, len, data);
    sink->err = filem_posix_write_all(sink->fd, data, len);
    if (sink->err)
        return CRMPI_ERR_IO;
    filem_posix_write_seconds += filem_posix_now() - start;
    filem_posix_written_bytes += (double)len;
    sink->size += len;
    return CRMPI_OK;
}

/* Hash `len` zero bytes into `ctx`: what a hole reads as. */
static void filem_posix_sha256_zeros(struct sha256_ctx *ctx, uint64_t len)
{
    static const uint8_t zeros[65536];

    while (len > 0) {
        size_t chunk = len < sizeof(zeros) ? (size_t)len : sizeof(zeros);
        sha256_update(ctx, chunk, zeros);
        len -= chunk;
    }
}

/* A hole of `len` bytes: hashed as zeros, and left a hole in the copy (the file's size is
 * set once the copy is done). */
static int filem_posix_sink_skip(filem_posix_sink_t *sink, uint64_t len)
{
    filem_posix_sha256_zeros(&sink->ctx, len);
    if (lseek(sink->fd, (off_t)len, SEEK_CUR) < 0) {
        sink->err = errno;
        return CRMPI_ERR_IO;
    }
    sink->size += len;
    return CRMPI_OK;
}

/*
 * Where the data at or after offset `at` of a file of `size` bytes starts, and where it
 * ends (*end_out: the next hole, or the end), from SEEK_DATA/SEEK_HOLE. A file system that
 * knows no holes reports the whole file as data. @return the data's start (`at` when there
 * is no hole there), `size` for a hole to the end.
 */
static uint64_t filem_posix_data_at(int fd, uint64_t at, uint64_t size, uint64_t *end_out)
{
    off_t data = lseek(fd, (off_t)at, SEEK_DATA);
    off_t hole = data < 0 ? -1 : lseek(fd, data, SEEK_HOLE);

    if (data < 0 || hole < 0 || (uint64_t)data >= size) {
        /* ENXIO: a hole to the end; any other error: read the rest as data. */
        *end_out = size;
        return data < 0 && errno == ENXIO ? size : at;
    }
    *end_out = (uint64_t)hole < size ? (uint64_t)hole : size;
    return (uint64_t)data;
}

/*
 * put: whether src_dir/rel goes to stable storage compressed (filem_posix_compress). Only
 * the memory images (criu/pages-*.img) are candidates: the other files are small. With
 * auto, a sample of the file's first chunk decides: compressing pays when zstd is faster
 * than the storage by the ratio's margin (C > W * r / (r - 1), W measured on this process's
 * earlier copies); before any was measured, when the sample shrinks by a third (r >= 1.5).
 */
static filem_posix_how_t filem_posix_put_how(filem_posix_copy_t *copy, const char *rel, int src_fd)
{
    const char *mode = NULL, *base = strrchr(rel, '/');
    int64_t level = 3;
    double seconds = 0, ratio;
    ssize_t got;

    base = base ? base + 1 : rel;
    if (crmpi_param_get_string("filem_posix_compress", &mode) != CRMPI_OK || !mode ||
        strcmp(mode, "off") == 0 || strncmp(rel, "criu/", 5) != 0 ||
        strncmp(base, "pages-", 6) != 0)
        return FILEM_POSIX_AS_IS;
    if (strcmp(mode, "auto") != 0)
        return FILEM_POSIX_COMPRESS;
    crmpi_param_get_int("filem_posix_compress_level", &level);
    got = pread(src_fd, copy->buf, copy->buf_size, 0);
    if (got <= 0)
        return FILEM_POSIX_AS_IS;
    ratio = filem_posix_zstd_ratio(copy->buf, (size_t)got, (int)level, &seconds);
    if (ratio <= 1.05)
        return FILEM_POSIX_AS_IS;
    if (filem_posix_write_seconds <= 0 || seconds <= 0)
        return ratio >= 1.5 ? FILEM_POSIX_COMPRESS : FILEM_POSIX_AS_IS;
    double zstd_rate = (double)got / seconds;
    double write_rate = filem_posix_written_bytes / filem_posix_write_seconds;
    return zstd_rate > write_rate * ratio / (ratio - 1.0) ? FILEM_POSIX_COMPRESS
                                                          : FILEM_POSIX_AS_IS;
}

/* With a rate cap: sleep until the bytes copied so far are within it. */
static void filem_posix_pace(const filem_posix_copy_t *copy)
{
    double rate = copy->transfer->max_rate;

    if (rate <= 0)
        return;
    uint64_t due_ns = copy->started_ns + (uint64_t)((double)copy->done / rate * 1e9);
    struct timespec until = {.tv_sec = (time_t)(due_ns / 1000000000u),
                             .tv_nsec = (long)(due_ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR) {
    }
}

/*
 * Copy src_dir/rel to dest_dir (compressing or decompressing it on the way, see
 * filem_posix_how_t), hashing what is read and what is written; fsync the copy.
 * @param expected  NULL (put: fill `file`), or the entry the copy must match (get)
 */
static int filem_posix_file_copy(filem_posix_copy_t *copy, const char *rel,
                                 const crmpi_filem_file_t *expected, crmpi_filem_file_t *file)
{
    const crmpi_filem_transfer_t *transfer = copy->transfer;
    const size_t suffix_len = strlen(FILEM_POSIX_ZSTD_SUFFIX);
    filem_posix_sink_t sink = {.fd = -1};
    filem_posix_how_t how = FILEM_POSIX_AS_IS;
    filem_posix_zstd_t *zstd = NULL;
    struct sha256_ctx ctx;
    char hex[CRMPI_FILEM_SHA256_HEX_LEN + 1], out_hex[CRMPI_FILEM_SHA256_HEX_LEN + 1];
    char *src_path = NULL;
    char *dest_path = NULL;
    uint64_t size = 0;
    int src_fd = -1;
    int err = 0;
    int rc = CRMPI_OK;

    if (asprintf(&src_path, "%s/%s", transfer->src_dir, rel) < 0) {
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto out_free;
    }
    src_fd = open(src_path, O_RDONLY | O_CLOEXEC);
    if (src_fd < 0) {
        crmpi_log_error("filem:posix: rank %d: cannot open %s: %s", transfer->rank, src_path,
                        strerror(errno));
        rc = errno == ENOENT ? CRMPI_ERR_NOT_FOUND : CRMPI_ERR_IO;
        goto out_free;
    }
    if (expected && expected->raw_sha256[0])
        how = FILEM_POSIX_DECOMPRESS;
    else if (!expected)
        how = filem_posix_put_how(copy, rel, src_fd);
    if (how == FILEM_POSIX_DECOMPRESS && strlen(rel) > suffix_len) {
        if (asprintf(&dest_path, "%s/%.*s", transfer->dest_dir, (int)(strlen(rel) - suffix_len),
                     rel) < 0)
            dest_path = NULL;
    } else if (asprintf(&dest_path, "%s/%s%s", transfer->dest_dir, rel,
                        how == FILEM_POSIX_COMPRESS ? FILEM_POSIX_ZSTD_SUFFIX : "") < 0) {
        dest_path = NULL;
    }
    if (!dest_path) {
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto out_close;
    }
    if (how != FILEM_POSIX_AS_IS) {
        int64_t level = 3, threads = 2;

        crmpi_param_get_int("filem_posix_compress_level", &level);
        crmpi_param_get_int("filem_posix_compress_threads", &threads);
        rc = filem_posix_zstd_open(how == FILEM_POSIX_COMPRESS, (int)level, (int)threads, &zstd);
        if (rc != CRMPI_OK)
            goto out_close;
    }
    sink.fd = open(dest_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, FILEM_POSIX_FILE_MODE);
    if (sink.fd < 0) {
        err = errno;
        goto err_write;
    }
    sha256_init(&ctx);
    sha256_init(&sink.ctx);
    /* The simulated full disk strikes before a file's first byte lands. */
    if (crmpi_fault_hit("filem_copy_enospc")) {
        err = ENOSPC;
        goto err_write;
    }
    /* A file copied as it is keeps its holes (a persistent heap's file is mostly hole). */
    struct stat src_st;
    uint64_t src_size = 0, data_end = 0;
    bool holes = how == FILEM_POSIX_AS_IS && fstat(src_fd, &src_st) == 0;
    if (holes)
        src_size = (uint64_t)src_st.st_size;
    for (;;) {
        if (holes && size >= data_end && size < src_size) {
            uint64_t data = filem_posix_data_at(src_fd, size, src_size, &data_end);
            if (data > size) {
                uint64_t hole = data - size;
                filem_posix_sha256_zeros(&ctx, hole);
                if (filem_posix_sink_skip(&sink, hole) != CRMPI_OK) {
                    err = sink.err;
                    goto err_write;
                }
                size += hole;
                copy->done += hole;
            }
        }
        size_t want = copy->buf_size;
        if (holes && data_end > size && data_end - size < want)
            want = (size_t)(data_end - size);
        ssize_t got = holes && size >= src_size ? 0 : pread(src_fd, copy->buf, want, (off_t)size);

        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            crmpi_log_error("filem:posix: rank %d: cannot read %s: %s", transfer->rank, src_path,
                            strerror(errno));
            rc = CRMPI_ERR_IO;
            goto out_close;
        }
        sha256_update(&ctx, (size_t)got, copy->buf);
        rc = zstd ? filem_posix_zstd_feed(zstd, copy->buf, (size_t)got, got == 0,
                                          filem_posix_sink_emit, &sink)
                  : filem_posix_sink_emit(&sink, copy->buf, (size_t)got);
        if (sink.err) {
            err = sink.err;
            goto err_write;
        }
        if (rc != CRMPI_OK)
            goto err_damaged; /* zstd said why */
        if (got == 0)
            break;
        size += (uint64_t)got;
        copy->done += (uint64_t)got;
        filem_posix_pace(copy);
        if (transfer->progress)
            transfer->progress(transfer->progress_arg, transfer->rank, copy->done, copy->total);
    }
    /* A hole at the end: the copy gets its size. */
    if (holes && ftruncate(sink.fd, (off_t)sink.size) != 0) {
        err = errno;
        goto err_write;
    }
    filem_posix_sha256_hex(&ctx, hex);
    filem_posix_sha256_hex(&sink.ctx, out_hex);
    /* Damage on the medium after the checksum was taken: only restart's check can see it. */
    if (sink.size > 0 && crmpi_fault_hit("filem_copy_corrupt")) {
        uint8_t byte = 0;

        if (pread(sink.fd, &byte, 1, 0) != 1 || pwrite(sink.fd, &(uint8_t){byte ^ 0xff}, 1, 0) != 1)
            crmpi_log_warn("filem:posix: could not damage %s for the fault point", dest_path);
    }
    if (fsync(sink.fd) != 0) {
        err = errno;
        goto err_write;
    }
    if (close(sink.fd) != 0) {
        sink.fd = -1;
        err = errno;
        goto err_write;
    }
    sink.fd = -1;
    if (expected && (size != expected->size || strcmp(hex, expected->sha256) != 0 ||
                     (how == FILEM_POSIX_DECOMPRESS &&
                      (sink.size != expected->raw_size || strcmp(out_hex, expected->raw_sha256)))))
        goto err_damaged;
    if (file) {
        /* Stored as written: a compressed file also records what it decompresses to. */
        if (asprintf(&file->path, "%s%s", rel,
                     how == FILEM_POSIX_COMPRESS ? FILEM_POSIX_ZSTD_SUFFIX : "") < 0) {
            file->path = NULL;
            rc = CRMPI_ERR_OUT_OF_RESOURCE;
            goto out_close;
        }
        file->size = sink.size;
        memcpy(file->sha256, out_hex, sizeof(out_hex));
        if (how == FILEM_POSIX_COMPRESS) {
            file->raw_size = size;
            memcpy(file->raw_sha256, hex, sizeof(hex));
        }
    }
    goto out_close;

err_damaged:
    crmpi_log_error("rank %d's %s checksum does not match (rank.%d/%s)", transfer->rank,
                    strncmp(rel, "criu/", 5) == 0 ? "image" : "snapshot file", transfer->rank, rel);
    rc = CRMPI_ERR_IO;
    goto out_close;
err_write:
    if (err == ENOSPC || err == EDQUOT)
        crmpi_log_error("filem:posix: rank %d: no space left on the device of %s (writing %s); "
                        "free space there or set snapc_base_global_snapshot_dir elsewhere",
                        transfer->rank, transfer->dest_dir, dest_path);
    else
        crmpi_log_error("filem:posix: rank %d: cannot write %s: %s", transfer->rank, dest_path,
                        strerror(err));
    rc = filem_posix_errno_status(err);
out_close:
    filem_posix_zstd_close(zstd);
    if (sink.fd >= 0)
        close(sink.fd);
    if (src_fd >= 0)
        close(src_fd);
out_free:
    free(src_path);
    free(dest_path);
    return rc;
}

/* fsync what the copy created: subdirectories deepest first, dest_dir, and its parent. */
static int filem_posix_dirs_sync(filem_posix_copy_t *copy)
{
    char *parent = strdup(copy->transfer->dest_dir);
    char *slash;
    int rc = CRMPI_OK;

    for (size_t i = copy->num_dirs; i-- > 0 && rc == CRMPI_OK;)
        rc = crmpi_filem_dir_sync(copy->dirs[i]);
    if (rc == CRMPI_OK)
        rc = crmpi_filem_dir_sync(copy->transfer->dest_dir);
    if (!parent)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    slash = strrchr(parent, '/');
    if (rc == CRMPI_OK && slash) {
        *slash = '\0';
        rc = crmpi_filem_dir_sync(parent[0] ? parent : "/");
    }
    free(parent);
    return rc;
}

static void filem_posix_copy_free(filem_posix_copy_t *copy)
{
    for (size_t i = 0; i < copy->num_dirs; i++)
        free(copy->dirs[i]);
    free(copy->dirs);
    free(copy->buf);
}

/* Create dest_dir and set up `copy`. */
static int filem_posix_copy_start(const crmpi_filem_transfer_t *transfer, filem_posix_copy_t *copy)
{
    *copy = (filem_posix_copy_t){.transfer = transfer,
                                 .buf_size = filem_posix_buffer_size(),
                                 .started_ns = crmpi_clock_ns()};
    copy->buf = malloc(copy->buf_size);
    if (!copy->buf)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    if (mkdir(transfer->dest_dir, FILEM_POSIX_DIR_MODE) != 0) {
        int err = errno;

        crmpi_log_error("filem:posix: rank %d: cannot create %s: %s", transfer->rank,
                        transfer->dest_dir, strerror(err));
        free(copy->buf);
        copy->buf = NULL;
        return err == EEXIST ? CRMPI_ERR_EXISTS : filem_posix_errno_status(err);
    }
    return CRMPI_OK;
}

/* After a failed copy: nothing of it may stay. */
static void filem_posix_copy_undo(filem_posix_copy_t *copy)
{
    if (crmpi_filem_tree_remove(copy->transfer->dest_dir) != CRMPI_OK)
        crmpi_log_warn("filem:posix: rank %d: could not remove the partial copy %s",
                       copy->transfer->rank, copy->transfer->dest_dir);
}

static int filem_posix_put(const crmpi_filem_transfer_t *transfer,
                           crmpi_filem_rank_entry_t *entry_out)
{
    crmpi_filem_rank_entry_t entry = {.rank = transfer->rank};
    filem_posix_found_t *found = NULL;
    filem_posix_copy_t copy;
    char host[256];
    size_t count = 0;
    int rc;

    rc = filem_posix_walk(transfer, "", &found, &count);
    if (rc != CRMPI_OK)
        goto err_free_found;
    if (count > 0)
        qsort(found, count, sizeof(found[0]), filem_posix_found_compare);
    rc = filem_posix_copy_start(transfer, &copy);
    if (rc != CRMPI_OK)
        goto err_free_found;
    for (size_t i = 0; i < count; i++)
        copy.total += found[i].size;
    entry.files = calloc(count + 1, sizeof(entry.files[0]));
    if (!entry.files) {
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto err_undo;
    }
    for (size_t i = 0; i < count; i++) {
        rc = filem_posix_parents_create(&copy, found[i].path);
        if (rc == CRMPI_OK)
            rc = filem_posix_file_copy(&copy, found[i].path, NULL, &entry.files[i]);
        if (rc != CRMPI_OK)
            goto err_undo;
        entry.num_files++;
        entry.bytes += entry.files[i].size;
    }
    rc = filem_posix_dirs_sync(&copy);
    if (rc != CRMPI_OK)
        goto err_undo;
    if (transfer->progress && count == 0)
        transfer->progress(transfer->progress_arg, transfer->rank, 0, 0);
    if (gethostname(host, sizeof(host)) == 0) {
        host[sizeof(host) - 1] = '\0';
        entry.host = strdup(host);
    }
    filem_posix_copy_free(&copy);
    filem_posix_found_free(found, count);
    *entry_out = entry;
    return CRMPI_OK;

err_undo:
    filem_posix_copy_undo(&copy);
    filem_posix_copy_free(&copy);
    crmpi_filem_rank_entry_clear(&entry);
err_free_found:
    filem_posix_found_free(found, count);
    return rc;
}

static int filem_posix_get(const crmpi_filem_transfer_t *transfer,
                           const crmpi_filem_rank_entry_t *entry)
{
    filem_posix_copy_t copy;
    int rc;

    rc = filem_posix_copy_start(transfer, &copy);
    if (rc != CRMPI_OK)
        return rc;
    copy.total = entry->bytes;
    for (size_t i = 0; i < entry->num_files; i++) {
        rc = filem_posix_parents_create(&copy, entry->files[i].path);
        if (rc == CRMPI_OK)
            rc = filem_posix_file_copy(&copy, entry->files[i].path, &entry->files[i], NULL);
        if (rc != CRMPI_OK)
            goto err_undo;
    }
    rc = filem_posix_dirs_sync(&copy);
    if (rc != CRMPI_OK)
        goto err_undo;
    filem_posix_copy_free(&copy);
    return CRMPI_OK;

err_undo:
    filem_posix_copy_undo(&copy);
    filem_posix_copy_free(&copy);
    return rc;
}

/* One file of a seal: its sha256 read back, the file fsynced. */
static int filem_posix_file_seal(filem_posix_copy_t *copy, const char *rel,
                                 crmpi_filem_file_t *file)
{
    const crmpi_filem_transfer_t *transfer = copy->transfer;
    struct sha256_ctx ctx;
    char *path = NULL;
    uint64_t size = 0;
    int fd = -1, rc = CRMPI_OK;

    if (asprintf(&path, "%s/%s", transfer->src_dir, rel) < 0)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        rc = errno == ENOENT ? CRMPI_ERR_NOT_FOUND : CRMPI_ERR_IO;
        goto err_log;
    }
    sha256_init(&ctx);
    for (;;) {
        ssize_t got = read(fd, copy->buf, copy->buf_size);

        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            rc = CRMPI_ERR_IO;
            goto err_log;
        }
        if (got == 0)
            break;
        sha256_update(&ctx, (size_t)got, copy->buf);
        size += (uint64_t)got;
    }
    if (fsync(fd) != 0) {
        rc = filem_posix_errno_status(errno);
        goto err_log;
    }
    *file = (crmpi_filem_file_t){.path = strdup(rel), .size = size};
    filem_posix_sha256_hex(&ctx, file->sha256);
    if (!file->path)
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
    goto out;

err_log:
    crmpi_log_error("filem:posix: rank %d: cannot checksum %s: %s", transfer->rank, path,
                    strerror(errno));
out:
    if (fd >= 0)
        close(fd);
    free(path);
    return rc;
}

/* fsync a directory under src_dir ("": src_dir itself). */
static int filem_posix_dir_seal(const crmpi_filem_transfer_t *transfer, const char *rel, size_t len)
{
    char *path;
    int rc;

    if (asprintf(&path, "%s%s%.*s", transfer->src_dir, len ? "/" : "", (int)len, rel) < 0)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    rc = crmpi_filem_dir_sync(path);
    free(path);
    return rc;
}

static int filem_posix_seal(const crmpi_filem_transfer_t *transfer,
                            crmpi_filem_rank_entry_t *entry_out)
{
    crmpi_filem_rank_entry_t entry = {.rank = transfer->rank};
    filem_posix_found_t *found = NULL;
    filem_posix_copy_t copy;
    char host[256];
    size_t count = 0;
    int rc;

    /* A buffer, no destination. */
    copy = (filem_posix_copy_t){.transfer = transfer, .buf_size = filem_posix_buffer_size()};
    rc = filem_posix_walk(transfer, "", &found, &count);
    if (rc == CRMPI_OK && !(copy.buf = malloc(copy.buf_size)))
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
    if (rc != CRMPI_OK)
        goto out_free_found;
    if (count > 0)
        qsort(found, count, sizeof(found[0]), filem_posix_found_compare);
    entry.files = calloc(count + 1, sizeof(entry.files[0]));
    rc = entry.files ? filem_posix_dir_seal(transfer, "", 0) : CRMPI_ERR_OUT_OF_RESOURCE;
    for (size_t i = 0; i < count && rc == CRMPI_OK; i++) {
        const char *slash = strrchr(found[i].path, '/');
        size_t dir_len = slash ? (size_t)(slash - found[i].path) : 0;
        const char *prev_slash = i ? strrchr(found[i - 1].path, '/') : NULL;
        size_t prev_len = prev_slash ? (size_t)(prev_slash - found[i - 1].path) : 0;

        rc = filem_posix_file_seal(&copy, found[i].path, &entry.files[i]);
        if (rc != CRMPI_OK)
            break;
        entry.num_files++;
        entry.bytes += entry.files[i].size;
        /* Sorted: a file's directory is new when it differs from the one before. */
        if (dir_len && (i == 0 || dir_len != prev_len ||
                        strncmp(found[i].path, found[i - 1].path, dir_len) != 0))
            rc = filem_posix_dir_seal(transfer, found[i].path, dir_len);
    }
    free(copy.buf);
    if (rc == CRMPI_OK && gethostname(host, sizeof(host)) == 0) {
        host[sizeof(host) - 1] = '\0';
        entry.host = strdup(host);
    }
    if (rc == CRMPI_OK)
        *entry_out = entry;
    else
        crmpi_filem_rank_entry_clear(&entry);
out_free_found:
    filem_posix_found_free(found, count);
    return rc;
}

static const crmpi_filem_ops_t filem_posix_ops = {
    .put = filem_posix_put,
    .get = filem_posix_get,
    .seal = filem_posix_seal,
};

extern const crmpi_component_info_t crmpi_filem_posix_info;

const crmpi_component_t filem_posix_component = {
    .info = &crmpi_filem_posix_info,
    .query = NULL,
    .ops = &filem_posix_ops,
};
