/*
 * filem_fs.h: file-system helpers shared by FileM, the coordinators and the tools: the
 * paths of the snapshot's layout (snapshot.h), durable writes, directory syncs and removal.
 * Implemented in filem_fs.c.
 */
#ifndef CRMPI_FILEM_FS_H
#define CRMPI_FILEM_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** "<global_dir>/<jobid>.ckpt" (malloc'ed). */
int crmpi_filem_jobdir_path(const char *global_dir, uint64_t jobid, char **jobdir_out);
/** "<jobdir>/<seq>" or "<jobdir>/<seq>.partial" (malloc'ed). */
int crmpi_filem_seq_dir_path(const char *jobdir, unsigned seq, bool partial, char **dir_out);
/** "<seq_dir>/rank.<r>" (malloc'ed). */
int crmpi_filem_rank_dir_path(const char *seq_dir, int rank, char **dir_out);
/** The current UTC time as ISO 8601 ("2026-11-22T06:10:00Z") into `buf` (>= 21 bytes). */
void crmpi_filem_time_now(char *buf, size_t size);

/**
 * Write `text` to `dir`/`name` durably: `name`.tmp, fsync, rename, fsync of `dir`.
 * @return CRMPI_OK, CRMPI_ERR_OUT_OF_RESOURCE (ENOSPC, EDQUOT), CRMPI_ERR_IO (logged)
 */
int crmpi_filem_file_write_atomic(const char *dir, const char *name, const char *text);
/** fsync a directory (after creating, renaming or removing an entry in it). */
int crmpi_filem_dir_sync(const char *dir);
/** Remove `path` and everything under it; a missing path is success. */
int crmpi_filem_tree_remove(const char *path);

#endif /* CRMPI_FILEM_FS_H */
