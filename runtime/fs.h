/*
 * fs.h: file-system helpers any layer may use (FileM has those of the snapshot's layout,
 * filem/filem_fs.h). Implemented in fs.c.
 */
#ifndef CRMPI_FS_H
#define CRMPI_FS_H

#include <stdbool.h>
#include <stdint.h>

/**
 * Make the missing directories of `path` (mode 0700): each one above its last component,
 * and the last one too when `whole`. One that exists is left as it is.
 * @return CRMPI_OK, or CRMPI_ERR_IO with errno saying why
 */
int crmpi_mkdirs(const char *path, bool whole);

/**
 * Copy the first `size` bytes of src_fd into dst_fd at the same offsets, its holes left
 * holes (SEEK_DATA/SEEK_HOLE), then cut dst_fd to `size` and fsync it.
 * @return CRMPI_OK, CRMPI_ERR_OUT_OF_RESOURCE (no buffer), or CRMPI_ERR_IO with errno
 *         saying why (EIO: the source shrank under the copy)
 */
int crmpi_fd_copy(int src_fd, int dst_fd, uint64_t size);

#endif /* CRMPI_FS_H */
