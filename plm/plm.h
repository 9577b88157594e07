/*
 * plm.h: process launch (PLM), how mpirun starts the crmpi-agents that run the ranks.
 *
 *   mpirun (tools/mpirun): map ranks to nodes and CPUs, session directory, control sockets
 *     |
 *     |  crmpi_plm_base_open()    select a component by the `plm` parameter
 *     |  ops->init(job)           bring up what the launch needs; set kill_grace_ms
 *     |  ops->launch(job)         one crmpi-agent per rank, job->agents[r] filled
 *     v
 *   component "local": fork + exec on this node, a PMIx server embedded in mpirun
 *   component "ompi":  Open MPI 4.1's mpirun (orterun) and its daemons (orted) start the
 *                      agents on the job's hosts; each orted is its node's PMIx server
 *     |
 *     v
 *   crmpi-agent (one per rank) --connects to job->hnp_uri, AGENT_HELLO{rank, key}--> mpirun
 *     |  its rank in a pid namespace of its own (tools/agent)
 *     v
 *   rank: talks to its agent only; the agent is the PMIx client (job facts, fences)
 *
 *   mpirun then owns the job: output forwarding, the agents' control connections, exit
 *   codes, checkpoints; while it runs, its event loop
 *     polls ops->poll_fds(job) and calls ops->poll_event(job, fd)   the launcher's own
 *                                                                    descriptors
 *     calls ops->reap(job, gone_fn, arg) on SIGCHLD                  agents known gone
 *   and for the teardown it asks
 *     ops->signal(job, rank, sig)  SIGTERM, and SIGKILL after kill_grace_ms
 *     ops->finalize(job)           once every agent is gone
 *     crmpi_plm_base_close()
 *
 * Lifecycle: crmpi_catalog_register_all() -> crmpi_plm_base_open() -> init -> launch
 * (once) -> poll_event, reap, signal (any number of times) -> finalize ->
 * crmpi_plm_base_close(). finalize is called after a failed init or launch too, and must
 * undo whatever part was done.
 *
 * Threading: every slot is called from mpirun's main thread. A component may run threads
 * of its own (the local component's PMIx server has its progress thread) but never calls
 * back into mpirun from them.
 *
 * Agents on other nodes (components with CRMPI_PLM_FLAG_REMOTE, "ompi" today):
 *   - job->hnp_uri is "tcp:ADDRESS:PORT", mpirun's listener on the one interface the job
 *     uses (plm_base_if_include, else the one that routes to the job's first other node);
 *     it refuses a hello without the job's key. The key (job->job_key) reaches the agents
 *     in their environment only (CRMPI_JOB_KEY), never on a command line or in a file.
 *   - The agents are not mpirun's children: reap() tells mpirun of the launcher's end,
 *     which is the end of every agent it started; an agent's own end is its control
 *     connection closing (after AGENT_EXIT when it reported its rank's end).
 *   - Their ranks' output comes over the control connection (AGENT_OUTPUT; the agents
 *     are started with --output ctl); job->agents[r].out_fd and err_fd stay -1. What
 *     reaches the launcher's own stdout and stderr is the agents' own messages and the
 *     launcher's; the component forwards the first and says the second only when the
 *     launch fails (or at plm_base_verbose 10).
 *   - signal() reaches a connected agent over its control connection (AGENT_SIGNAL); an
 *     agent that never connected is ended through the launcher, which ends its whole job.
 *   - Each agent's node-local directory (images of a checkpoint, a restore's copy) is one
 *     the launcher makes on the node and removes at the job's end, named by the variable
 *     job->node_dir_var of the agent's environment (the local component: none, the agents
 *     use mpirun's session directory).
 *
 * Adding component "slurm" (the file set plm_slurm*.c beside plm_ompi*.c, an entry in
 * plm_base.c's table, a descriptor in plm_info.c): the agents started with
 * `srun --mpi=pmix --nodelist=... --distribution=arbitrary` (SLURM_HOSTFILE naming each
 * rank's node, in rank order) inside an allocation; slurmstepd is each node's PMIx server,
 * and gives PMIX_HOSTNAME for every rank (the agents' job facts need nothing else) and
 * PMIX_NSDIR, the node-local directory the agent would take (node_dir_var cannot name a
 * PMIx attribute today: the agent would read PMIX_NSDIR when the variable is empty).
 * query() refuses outside an allocation (no SLURM_JOB_ID); init() checks the job's hosts
 * against SLURM_JOB_NODELIST. The slots are the ompi component's: launch() forks srun
 * (environment through --export=ALL, never argv), reap() waits for srun, poll_fds() and
 * poll_event() read srun's own output, signal() uses the control connection and
 * `scancel --signal` for agents that never connected. srun gives one rank per task, and
 * per-task CPU lists need --cpu-bind=map_cpu, or the agents' own --cpuset as today.
 */
#ifndef CRMPI_PLM_H
#define CRMPI_PLM_H

#include <stdbool.h>
#include <stdint.h>
#include <poll.h>
#include <sys/types.h>

#include "component.h"

/* Where one rank runs. */
typedef struct crmpi_plm_placement {
    uint32_t node_id; /* index into the job's nodes */
    char *cpuset;     /* hwloc list string ("0-1") to bind to; NULL when not bound */
} crmpi_plm_placement_t;

/* One rank's agent, as launch() leaves it. mpirun owns the fields afterwards, except where
 * a field says otherwise. */
typedef struct crmpi_plm_agent {
    pid_t pid;    /* the agent process when it is mpirun's child (local); 0 when it was
                   * never started, is reaped, or is not mpirun's child */
    int out_fd;   /* read end of the agent's stdout (its rank's), -1 when none; mpirun
                   * closes it at end of file */
    int err_fd;   /* read end of the agent's stderr, -1 when none */
    int ctl_fd;   /* mpirun's control connection from this agent: -1 until its hello and
                   * once it closed; components may send AGENT_SIGNAL on it */
    bool running; /* started and not known to be gone: set by launch, cleared by reap (or
                   * by mpirun when a remote agent's control connection closes) */
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
    char *const *env_names;  /* names of every -x variable (with a value or mpirun's own),
                              * NULL-terminated; or NULL: what a remote launcher forwards */
    const char *restore;     /* --restore: the snapshot sequence to restore; NULL: launch */
    const char *session_dir; /* mpirun's scratch directory on this node */
    const char *hnp_uri;     /* mpirun's listener for the agents: "unix:PATH", "tcp:A:P" */
    const char *job_key;     /* the secret each agent presents in its hello (hex) */
    /* Set by the component. */
    int64_t kill_grace_ms;        /* init: SIGTERM to SIGKILL, when mpirun tears the job down */
    const char *kill_grace_param; /* init: the parameter that sets it, for messages */
    const char *node_dir_var;     /* init: the agents' variable naming their node-local
                                   * directory; NULL: session_dir (this node) */
    crmpi_plm_agent_t *agents;    /* np entries, allocated by mpirun (pid 0, fds -1), launch
                                   * fills them */
    void *state;                  /* the component's own, from init to finalize */
} crmpi_plm_job_t;

/* What a component can do (crmpi_plm_ops_t.flags). */
enum {
    /* Agents may run on other nodes: see "Agents on other nodes" above. mpirun then maps
     * ranks onto any host, listens on TCP, and takes a closed control connection for the
     * agent's end. */
    CRMPI_PLM_FLAG_REMOTE = 1u << 0,
};

/**
 * Bring up what the launch needs (the local component: resolve the agent program, start
 * the PMIx server, register the job's namespace) and set job->kill_grace_ms,
 * kill_grace_param and node_dir_var.
 * @return CRMPI_OK, or an error logged once with its cause; finalize still follows.
 */
typedef int (*crmpi_plm_init_fn_t)(crmpi_plm_job_t *job);

/**
 * Start one crmpi-agent per rank, in rank order, each with
 *   crmpi-agent [--cpuset LIST [--membind]] [--restore SEQDIR] [--output ctl] -- PROGRAM
 *   [ARG]...
 * (plm_base_agent_argv) and the environment of plm_base_agent_env, with its stdin on
 * /dev/null, and its stdout and stderr on pipes whose read ends go to job->agents[r] (or,
 * with CRMPI_PLM_FLAG_REMOTE, over the control connection: --output ctl). Sets running.
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

/**
 * An agent is gone, told by reap().
 * @param status     its raw wait status, or the launcher's when the launcher's end ended it
 * @param explained  the component already said why, in one line: mpirun adds none
 */
typedef void (*crmpi_plm_gone_fn_t)(void *arg, int rank, int status, bool explained);

/**
 * Collect the component's children that ended (mpirun calls it on every SIGCHLD; it must
 * not block) and, for each agent now known to be gone, clear its `running` and pid and
 * call gone_fn once.
 */
typedef void (*crmpi_plm_reap_fn_t)(crmpi_plm_job_t *job, crmpi_plm_gone_fn_t gone_fn, void *arg);

/**
 * Optional: the component's own descriptors for mpirun's event loop to poll (a launcher's
 * output), at most `max`; mpirun's loop runs until this returns 0 and every agent is gone.
 * @return the number filled (fd and events of each)
 */
typedef int (*crmpi_plm_poll_fds_fn_t)(crmpi_plm_job_t *job, struct pollfd *fds, int max);

/** Optional: one of them has events (`pfd` as poll left it). */
typedef void (*crmpi_plm_poll_event_fn_t)(crmpi_plm_job_t *job, const struct pollfd *pfd);

/** Tear down what init built (the PMIx server, the launcher), after every agent is gone. */
typedef void (*crmpi_plm_finalize_fn_t)(crmpi_plm_job_t *job);

/* A component's operations. Every slot is required except poll_fds and poll_event, which
 * crmpi_plm_base_open fills with "none" when left NULL. */
typedef struct crmpi_plm_ops {
    unsigned flags;                       /* CRMPI_PLM_FLAG_* */
    crmpi_plm_init_fn_t init;             /* before the launch */
    crmpi_plm_launch_fn_t launch;         /* start the agents */
    crmpi_plm_reap_fn_t reap;             /* on SIGCHLD */
    crmpi_plm_poll_fds_fn_t poll_fds;     /* the launcher's descriptors, or NULL */
    crmpi_plm_poll_event_fn_t poll_event; /* their events, or NULL */
    crmpi_plm_signal_fn_t signal;         /* teardown */
    crmpi_plm_finalize_fn_t finalize;     /* after the agents are gone */
} crmpi_plm_ops_t;

/** The framework's descriptor (plm_info.c), for the catalog. */
extern const crmpi_framework_info_t crmpi_plm_framework_info;

/**
 * Open the plm framework and select a component (parameter `plm`). Parameters must be
 * declared (crmpi_catalog_register_all).
 * @param ops_out  the component's slots, optional ones defaulted; valid until close
 * @return CRMPI_OK with *ops_out, or CRMPI_ERR_NOT_FOUND (logged: no usable component)
 */
int crmpi_plm_base_open(const crmpi_plm_ops_t **ops_out);
void crmpi_plm_base_close(void);

/**
 * The name of the component selected by crmpi_plm_base_open ("local", "ompi"), for
 * messages and the snapshot's manifest; NULL when none is.
 */
const char *crmpi_plm_base_selected(void);

#endif /* CRMPI_PLM_H */
