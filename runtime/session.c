/*
 * session.c: session directory and control socket paths (session.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "param.h"
#include "session.h"

int crmpi_session_parent(char *buf, size_t len)
{
    const char *base = NULL;

    if (crmpi_param_get_string("runtime_session_dir_base", &base) != CRMPI_OK || !base || !*base)
        base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    if ((size_t)snprintf(buf, len, "%s/crmpi-%u", base, (unsigned)getuid()) >= len)
        return CRMPI_ERR_BAD_PARAM;
    return CRMPI_OK;
}

int crmpi_session_job_socket(uint64_t jobid, char *buf, size_t len)
{
    char parent[4096];

    if (crmpi_session_parent(parent, sizeof(parent)) != CRMPI_OK ||
        (size_t)snprintf(buf, len, "%s/%llu/hnp.sock", parent, (unsigned long long)jobid) >= len)
        return CRMPI_ERR_BAD_PARAM;
    return CRMPI_OK;
}
