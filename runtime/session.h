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

/**
 * Is `dir` (the session parent) this user's alone: a directory, not a link, owned by this
 * user, closed to group and others? Another user's or an open one would let them put their
 * own control socket where the tools look. Says why not, in one error line.
 * @return CRMPI_OK, CRMPI_ERR_NOT_FOUND (absent; nothing said), CRMPI_ERR_ACCESS, CRMPI_ERR_IO
 */
int crmpi_session_parent_check(const char *dir);

/** mpirun's control socket of job `jobid`. @return CRMPI_OK or CRMPI_ERR_BAD_PARAM. */
int crmpi_session_job_socket(uint64_t jobid, char *buf, size_t len);

/**
 * Connect to job `jobid`'s mpirun (the tools' side).
 * @return CRMPI_OK with *fd_out; CRMPI_ERR_NOT_FOUND (no such process: errno ESRCH),
 *         CRMPI_ERR_PEER_GONE (a process, but no crmpi mpirun of this user listening),
 *         CRMPI_ERR_BAD_PARAM (path too long). Nothing is logged: the tool says it; except
 *         CRMPI_ERR_ACCESS, said here: the session parent is not this user's alone
 *         (crmpi_session_parent_check), or another user serves the socket (SO_PEERCRED).
 */
int crmpi_session_job_connect(uint64_t jobid, int *fd_out);

/* What mpirun says of its job (TOOL_STATUS). */
typedef struct crmpi_job_status {
    uint64_t jobid;            /* mpirun's pid */
    uint32_t np;               /* ranks */
    uint32_t cr;               /* started with --with-ft cr */
    uint32_t state;            /* crmpi_snapc_state_t */
    uint32_t last_seq;         /* the last checkpoint's sequence number (0: none yet) */
    char jobdir[4096];         /* its snapshot directory (<dir>/<jobid>.ckpt) */
    char program[4096];        /* its program */
    uint64_t ckpt_interval_ms; /* periodic checkpoints: the interval now (0: none) */
    uint32_t ckpt_auto;        /* the interval is Daly's for mtbf_s */
    uint64_t mtbf_s;           /* --mtbf, with --ckpt-interval auto */
    uint32_t running;          /* ranks started (or restored: their restart done) and running */
    char hosts[4096];          /* where they run: "n1:2,n2:2", node and ranks on it */
} crmpi_job_status_t;

/** Ask job `jobid`'s mpirun for its state. @return as crmpi_session_job_connect, or
 *  CRMPI_ERR_PROTO. */
int crmpi_session_job_status(uint64_t jobid, crmpi_job_status_t *status_out);

#endif /* CRMPI_SESSION_H */
