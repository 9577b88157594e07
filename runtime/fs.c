/*
 * fs.c: file-system helpers any layer may use (fs.h).
 */
#include "fs.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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
