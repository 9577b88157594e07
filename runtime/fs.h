/*
 * fs.h: file-system helpers any layer may use (FileM has those of the snapshot's layout,
 * filem/filem_fs.h). Implemented in fs.c.
 */
#ifndef CRMPI_FS_H
#define CRMPI_FS_H

#include <stdbool.h>

/**
 * Make the missing directories of `path` (mode 0700): each one above its last component,
 * and the last one too when `whole`. One that exists is left as it is.
 * @return CRMPI_OK, or CRMPI_ERR_IO with errno saying why
 */
int crmpi_mkdirs(const char *path, bool whole);

#endif /* CRMPI_FS_H */
