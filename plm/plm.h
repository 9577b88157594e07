/*
 * plm.h: process launch (PLM), how mpirun starts the crmpi-agents that run the ranks.
 *
 *   mpirun (tools/mpirun): map ranks to nodes and CPUs, session directory, control socket
 *     |
 *     |  crmpi_plm_base_open()    select a component by the `plm` parameter
 *     |  ops->init(job)           bring up what the launch needs; set kill_grace_ms
 *     |  ops->launch(job)         one crmpi-agent per rank, job->agents[r] filled
 *     v
 *   component "local": fork + exec on this node, a PMIx server embedded in mpirun
 *     |
 *     v
 *   crmpi-agent (one per rank) --connects to job->hnp_uri, AGENT_HELLO{rank}--> mpirun
 *     |  its rank in a pid namespace of its own (tools/agent)
 *     v
 *   rank: PMIx client of the launcher's server (job facts, fences), libmpi
 *
 *   mpirun then owns the job: output forwarding, the agents' control connections, exit
 *   codes, checkpoints; for the teardown it asks
 *     ops->signal(job, rank, sig)  SIGTERM, and SIGKILL after kill_grace_ms
 *     ops->finalize(job)           once every agent is gone
 *     crmpi_plm_base_close()
 *
 * Lifecycle: crmpi_catalog_register_all() -> crmpi_plm_base_open() -> init -> launch
 * (once) -> signal (any number of times) -> finalize -> crmpi_plm_base_close(). finalize is
 * called after a failed init or launch too, and must undo whatever part was done.
 *
 * Threading: every slot is called from mpirun's main thread. A component may run threads
 * of its own (the local component's PMIx server has its progress thread) but never calls
 * back into mpirun from them.
 *
 * Adding a component (the file set plm_<name>*.c beside plm_local*.c, an entry in
 * plm_base.c's table, a descriptor in plm_info.c):
 *   - "ompi": the agents started through Open MPI's mpirun (prterun) and its daemons on
 *     the job's hosts. launch() runs one prterun with the agent as its program (argv and
 *     environment from plm_base.h, one app context per rank for the cpusets); the daemons
 *     are the ranks' PMIx servers, so init() starts no server of its own.
 *   - "slurm": the agents started with `srun --mpi=pmix` inside an allocation; slurmstepd
 *     is the PMIx server. query() refuses outside an allocation (no SLURM_JOB_ID).
 *   Both start agents on other hosts, which changes three things mpirun assumes today:
 *   job->hnp_uri must be reachable from there (a TCP address, where the local component
 *   uses a unix socket in the session directory); the agents are not mpirun's children
 *   (mpirun reaps job->agents[r].pid itself), so their end must come through the
 *   component; and their output arrives through the launcher, not through one pipe pair
 *   per agent. Those are the slots to add with the first such component.
 */
#ifndef CRMPI_PLM_H
#define CRMPI_PLM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "component.h"

/* Where one rank runs. */
typedef struct crmpi_plm_placement {
    uint32_t node_id; /* index into the job's nodes */
    char *cpuset;     /* hwloc list string ("0-1") to bind to; NULL when not bound */
} crmpi_plm_placement_t;

/* One rank's agent, as launch() leaves it. mpirun owns the fields afterwards: it closes
 * the descriptors at end of file and clears pid once the agent is reaped. */
typedef struct crmpi_plm_agent {
    pid_t pid;  /* the agent process; 0 when it was never started or is reaped */
    int out_fd; /* read end of the agent's stdout (its rank's), -1 when none */
    int err_fd; /* read end of the agent's stderr, -1 when none */
} crmpi_plm_agent_t;

/* The job as the launcher sees it. mpirun fills the first part before init. */
typedef struct crmpi_plm_job {
    uint64_t jobid;                         /* mpirun's pid */
    int np;                                 /* ranks, one agent each */
    const char *const *nodes;               /* node names, num_nodes entries */
    uint32_t num_nodes;                     /* entries in nodes */
    const crmpi_plm_placement_t *placement; /* np entries */
    bool membind;                           /* bind memory near each rank's cpuset too */
    const char *program;                    /* absolute path of the program, executable */
    char *const *args;                      /* its arguments (what follows argv[0]) */
    int num_args;                           /* entries in args */
    char *const *env;        /* "NAME=value" for every agent (-x), NULL-terminated; or NULL */
    const char *restore;     /* --restore: the snapshot sequence to restore; NULL: launch */
    const char *session_dir; /* mpirun's scratch directory on this node */
    const char *hnp_uri;     /* mpirun's control socket, given to the agents */
    /* Set by the component. */
    int64_t kill_grace_ms;     /* init: SIGTERM to SIGKILL, when mpirun tears the job down */
    crmpi_plm_agent_t *agents; /* np entries, allocated by mpirun (pid 0, fds -1), launch
                                * fills them */
    void *state;               /* the component's own, from init to finalize */
} crmpi_plm_job_t;

/**
 * Bring up what the launch needs (the local component: resolve the agent program, start
 * the PMIx server, register the job's namespace) and set job->kill_grace_ms.
 * @return CRMPI_OK, or an error logged once with its cause; finalize still follows.
 */
typedef int (*crmpi_plm_init_fn_t)(crmpi_plm_job_t *job);

/**
 * Start one crmpi-agent per rank, in rank order, each with
 *   crmpi-agent [--cpuset LIST [--membind]] [--restore SEQDIR] -- PROGRAM [ARG]...
 * (plm_base_agent_argv) and the environment of plm_base_agent_env, with its stdin on
 * /dev/null and its stdout and stderr on pipes whose read ends go to job->agents[r].
 * @return CRMPI_OK; an error (logged) leaves the agents started so far in job->agents,
 *         for mpirun to tear down and reap.
 */
typedef int (*crmpi_plm_launch_fn_t)(crmpi_plm_job_t *job);

/**
 * Deliver `sig` to rank `rank`'s agent, which passes SIGTERM, SIGINT and SIGHUP on to its
 * rank. SIGKILL ends the agent and everything it started at once.
 * @return CRMPI_OK, or CRMPI_ERR_NOT_FOUND (the agent is gone or never started)
 */
typedef int (*crmpi_plm_signal_fn_t)(crmpi_plm_job_t *job, int rank, int sig);

/** Tear down what init built (the PMIx server), after every agent is gone. */
typedef void (*crmpi_plm_finalize_fn_t)(crmpi_plm_job_t *job);

/* A component's operations (every slot is required). */
typedef struct crmpi_plm_ops {
    crmpi_plm_init_fn_t init;         /* before the launch */
    crmpi_plm_launch_fn_t launch;     /* start the agents */
    crmpi_plm_signal_fn_t signal;     /* teardown */
    crmpi_plm_finalize_fn_t finalize; /* after the agents are gone */
} crmpi_plm_ops_t;

/** The framework's descriptor (plm_info.c), for the catalog. */
extern const crmpi_framework_info_t crmpi_plm_framework_info;

/**
 * Open the plm framework and select a component (parameter `plm`). Parameters must be
 * declared (crmpi_catalog_register_all).
 * @return CRMPI_OK with *ops_out, or CRMPI_ERR_NOT_FOUND (logged: no usable component)
 */
int crmpi_plm_base_open(const crmpi_plm_ops_t **ops_out);
void crmpi_plm_base_close(void);

#endif /* CRMPI_PLM_H */
