/*
 * fs.c: file-system helpers any layer may use (fs.h).
 */
#include "fs.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crmpi_status.h"

int crmpi_mkdirs(const char *path, bool whole)
{
    char dir[PATH_MAX];

    if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir)) {
        errno = ENAMETOOLONG;
        return CRMPI_ERR_IO;
    }
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
            return CRMPI_ERR_IO;
        *p = '/';
    }
    if (whole && mkdir(dir, 0700) < 0 && errno != EEXIST)
        return CRMPI_ERR_IO;
    return CRMPI_OK;
}

int crmpi_fd_copy(int src_fd, int dst_fd, uint64_t size)
{
    const size_t buf_size = (size_t)1 << 20;
    char *buf = malloc(buf_size);
    off_t at = 0;
    int rc = CRMPI_ERR_IO;

    if (!buf)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    while ((uint64_t)at < size) {
        off_t data = lseek(src_fd, at, SEEK_DATA);
        if (data < 0 && errno == ENXIO)
            break; /* a hole to the end */
        off_t hole = data < 0 ? -1 : lseek(src_fd, data, SEEK_HOLE);
        if (data < 0 || hole < 0)
            goto out;
        if ((uint64_t)hole > size)
            hole = (off_t)size;
        for (at = data; at < hole;) {
            size_t want = (size_t)(hole - at) < buf_size ? (size_t)(hole - at) : buf_size;
            ssize_t got = pread(src_fd, buf, want, at);

            if (got < 0 && errno == EINTR)
                continue;
            if (got == 0)
                errno = EIO; /* the file shrank under the copy */
            if (got <= 0 || pwrite(dst_fd, buf, (size_t)got, at) != got)
                goto out;
            at += got;
        }
    }
    if (ftruncate(dst_fd, (off_t)size) == 0 && fsync(dst_fd) == 0)
        rc = CRMPI_OK;
out:
    free(buf);
    return rc;
}
