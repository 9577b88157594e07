/*
 * session.h: where a job's session directory and control socket are, for mpirun (which
 * creates them) and the tools (which find a job by its jobid).
 *
 *   <runtime_session_dir_base, else $TMPDIR, else /tmp>/crmpi-<uid>/<jobid>/hnp.sock
 */
#ifndef CRMPI_SESSION_H
#define CRMPI_SESSION_H

#include <stddef.h>
#include <stdint.h>

/** The directory that holds this user's session directories. @return CRMPI_OK or
 *  CRMPI_ERR_BAD_PARAM (too long for `len`). */
int crmpi_session_parent(char *buf, size_t len);

/** mpirun's control socket of job `jobid`. @return CRMPI_OK or CRMPI_ERR_BAD_PARAM. */
int crmpi_session_job_socket(uint64_t jobid, char *buf, size_t len);

#endif /* CRMPI_SESSION_H */
