/*
 * plm.h: the process launch framework (mpirun side).
 *
 *   mpirun --(select by `plm` parameter and query)--> component
 *      init(job)      bring up what the launch needs (the local component: a PMIx server
 *                     with the job's namespace registered)
 *      launch(job)    start one crmpi-agent per rank; fill each agent's pid and the read
 *                     ends of its stdout/stderr pipes
 *      finalize(job)  after every agent is gone: tear down what init built
 *
 * mpirun owns everything after launch: I/O forwarding, the agents' control connections,
 * exit codes, signals and teardown. The agents connect back to mpirun's control socket
 * (job->hnp_uri, passed as CRMPI_HNP_URI) and introduce themselves by rank.
 *
 * Threading: called from mpirun's main thread only.
 */
#ifndef PLM_H
#define PLM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "component.h"
#include "mpirun_map.h"
#include "mpirun_options.h"

typedef struct mpirun_agent {
    pid_t pid;           /* the agent process (mpirun's child); 0 once reaped */
    int out_fd;          /* read end of the agent's stdout; -1 when closed */
    int err_fd;          /* read end of the agent's stderr; -1 when closed */
    int ctl_fd;          /* control connection from the agent; -1 until it says hello */
    bool exited;         /* AGENT_EXIT received or the agent was reaped */
    char out_line[4096]; /* partial stdout line awaiting its newline (--tag-output) */
    size_t out_len;
    char err_line[4096]; /* partial stderr line */
    size_t err_len;
} mpirun_agent_t;

typedef struct mpirun_job {
    const mpirun_options_t *opts; /* the command line */
    mpirun_map_t map;             /* placement and binding of each rank */
    uint64_t jobid;               /* mpirun's pid */
    char session_dir[512];        /* private scratch directory, removed on every exit */
    char hnp_uri[600];            /* "unix:<session_dir>/hnp.sock" */
    char *program;                /* absolute path of the program, checked executable */
    char *agent_path;             /* crmpi-agent to start */
    mpirun_agent_t *agents;       /* map.np entries, indexed by rank */
    void *plm_state;              /* the launch component's private state */
} mpirun_job_t;

typedef struct plm_ops {
    int (*init)(mpirun_job_t *job);
    int (*launch)(mpirun_job_t *job);
    void (*finalize)(mpirun_job_t *job);
} plm_ops_t;

extern const crmpi_framework_info_t crmpi_plm_framework_info;
extern const crmpi_component_t plm_local_component;

#endif /* PLM_H */
