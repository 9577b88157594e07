/*
 * plm_base.h: what the plm components share (plm_base.c), inside plm/ only: the agent's
 * program, command line and environment, which are the same whichever way it is started.
 */
#ifndef PLM_BASE_H
#define PLM_BASE_H

#include "plm.h"

/**
 * One of crmpi's programs (crmpi-agent, crmpi-orted): `configured` (a component's parameter)
 * when not empty, else program `name` installed beside mpirun. Checked executable.
 * @param param_name  the parameter that sets it, or NULL when there is none
 * @param path_out    malloc'ed, on CRMPI_OK
 * @return CRMPI_OK, CRMPI_ERR_NOT_FOUND (logged, naming `param_name` to set),
 *         CRMPI_ERR_OUT_OF_RESOURCE
 */
int plm_base_program_path(const char *name, const char *configured, const char *param_name,
                          char **path_out);

/* plm_base_agent_argv's flags. */
enum {
    PLM_BASE_AGENT_OUTPUT_CTL = 1u << 0, /* --output ctl: the rank's output to mpirun over
                                          * the control connection (remote agents) */
};

/**
 * Rank `rank`'s agent command line:
 *   AGENT [--cpuset LIST [--membind]] [--restore SEQDIR] [--output ctl] -- PROGRAM [ARG]...
 * @param flags     PLM_BASE_AGENT_*
 * @param argv_out  malloc'ed, NULL-terminated; its strings are borrowed from `job` and
 *                  `agent_path` (free the array only)
 * @return CRMPI_OK or CRMPI_ERR_OUT_OF_RESOURCE
 */
int plm_base_agent_argv(const crmpi_plm_job_t *job, int rank, const char *agent_path,
                        unsigned flags, char ***argv_out);

/**
 * An agent's environment: mpirun's own, the --mca overrides, the launcher's own variables
 * (`launcher_env`, may be NULL: PMIx's for the local component), the job's -x settings,
 * and how the agent finds mpirun (CRMPI_HNP_URI, CRMPI_JOBID, CRMPI_SESSION_DIR,
 * CRMPI_JOB_KEY, CRMPI_SESSION_DIR_VAR); a later source wins over an earlier one for the
 * same name.
 * @param env_out  malloc'ed NULL-terminated array of malloc'ed "NAME=value"; free it with
 *                 plm_base_env_free
 * @return CRMPI_OK or CRMPI_ERR_OUT_OF_RESOURCE
 */
int plm_base_agent_env(const crmpi_plm_job_t *job, char *const *launcher_env, char ***env_out);
void plm_base_env_free(char **env);

/**
 * Start `path` with `argv` and `env` as a child of mpirun, as every component starts its
 * processes: stdin on /dev/null, stdout and stderr on new pipes, in a process group of its
 * own, killed (SIGTERM) if mpirun dies, with no signal blocked (mpirun blocks the ones its
 * signalfd reads). A child that cannot exec says so on its stderr and exits 127.
 * @param out_fd_out, err_fd_out  the pipes' read ends (close-on-exec), on CRMPI_OK
 * @return CRMPI_OK with *pid_out; CRMPI_ERR_OUT_OF_RESOURCE (no pipe or fork; errno says
 *         why, nothing is left open). Nothing is logged.
 */
int plm_base_spawn(const char *path, char **argv, char **env, pid_t *pid_out, int *out_fd_out,
                   int *err_fd_out);

/** plm_base_verbose, as the framework read it at open. */
int plm_base_verbose(void);

#endif /* PLM_BASE_H */
