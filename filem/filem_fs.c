/*
 * filem_fs.c: the file-system helpers of FileM, the coordinators and the tools
 * (filem_fs.h): the snapshot's paths, durable writes, directory syncs and removal.
 */
#include "config.h"

#include "filem_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "log.h"
#include "snapshot.h"
#include "snapshot_int.h"

/* Open file descriptors nftw may use while removing a tree. */
#define FILEM_NFTW_FDS 16

int filem_errno_status(int err)
{
    if (err == ENOSPC || err == EDQUOT)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    if (err == ENOENT)
        return CRMPI_ERR_NOT_FOUND;
    return CRMPI_ERR_IO;
}

void crmpi_filem_time_now(char *buf, size_t size)
{
    time_t now = time(NULL);
    struct tm utc;

    gmtime_r(&now, &utc);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &utc);
}

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
        return filem_errno_status(err);
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
    /* The owner's only, as everything of a snapshot (ompi-restart refuses what others
     * could change). */
    fd = open(tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
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
    return filem_errno_status(err) == CRMPI_ERR_NOT_FOUND ? CRMPI_ERR_IO : filem_errno_status(err);
}

static int filem_tree_remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
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
    return nftw(path, filem_tree_remove_one, FILEM_NFTW_FDS, FTW_DEPTH | FTW_PHYS) == 0
               ? CRMPI_OK
               : CRMPI_ERR_IO;
}
