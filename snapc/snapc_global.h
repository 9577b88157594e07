/*
 * snapc_global.h: the global coordinator (snapc.h), used by mpirun's event loop.
 *
 *   ompi-checkpoint --TOOL_CKPT--> mpirun: crmpi_snapc_global_tool  (one at a time)
 *   agents --CKPT_* answers------> mpirun: crmpi_snapc_global_agent_msg
 *   every loop turn                        crmpi_snapc_global_tick     (timeouts, periodic
 *                                                                         checkpoints)
 *   an agent or rank gone                  crmpi_snapc_global_rank_gone
 *   SIGCONT (after --stop)                 crmpi_snapc_global_resume
 *
 * It sends to the agents through `send_fn`, reports to the tool over the tool's socket
 * (TOOL_PROGRESS lines, then one REPLY whose payload is the snapshot handle or the reason
 * of the failure), and tells mpirun through `terminate_fn` when a --term checkpoint is
 * committed. The snapshot on disk is FileM's (filem.h): a sequence is prepared at
 * CKPT_BEGIN, filled by the agents' CKPT_STORE, and committed when every rank's files are
 * durable; an aborted checkpoint removes its partial sequence. Single-threaded: mpirun's
 * event loop.
 */
#ifndef CRMPI_SNAPC_GLOBAL_H
#define CRMPI_SNAPC_GLOBAL_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl.h"
#include "filem.h"
#include "snapc.h"

typedef struct crmpi_snapc_global crmpi_snapc_global_t;

/** Send a message to rank `rank`'s agent. @return CRMPI_OK or an error. */
typedef int (*crmpi_snapc_send_fn_t)(void *arg, int rank, crmpi_ctl_type_t type, uint32_t seq,
                                     const crmpi_buf_t *payload);
/** A --term checkpoint is committed: end the job, successfully. */
typedef void (*crmpi_snapc_terminate_fn_t)(void *arg);
struct crmpi_filem_manifest;
/** Fill a new sequence's manifest with the job's launch facts (argv, options, MCA). */
typedef void (*crmpi_snapc_manifest_fn_t)(void *arg, struct crmpi_filem_manifest *manifest);

typedef struct crmpi_snapc_global_params {
    int np;                                  /* ranks */
    uint64_t jobid;                          /* mpirun's pid */
    const char *program;                     /* the job's program, for ompi-ps */
    bool enabled;                            /* the job runs with --with-ft cr */
    bool app_only;                           /* crs pheap: every checkpoint is an application
                                                one, taken at the ranks' next MPIX_Checkpoint */
    const char *jobdir;                      /* the job's snapshot: <global dir>/<jobid>.ckpt */
    unsigned keep;                           /* committed sequences kept (snapc_base_keep) */
    bool make_room;                          /* snapc_base_make_room */
    bool blocking;                           /* snapc_base_blocking */
    crmpi_filem_levels_t levels;             /* filem_levels (mask 0: global only) */
    unsigned incremental_chain;              /* crs_criu_incremental: deltas in a row before
                                                one is stored flattened (full); 0: every
                                                checkpoint full */
    int timeout_s;                           /* each step's limit (snapc_base_timeout) */
    double ckpt_interval_s;                  /* --ckpt-interval: every so often; 0: none */
    double mtbf_s;                           /* --ckpt-interval auto: Daly's interval for it */
    double initial_cost_s;                   /* auto: a checkpoint's cost before one is measured */
    crmpi_snapc_send_fn_t send_fn;           /* to the agents */
    crmpi_snapc_terminate_fn_t terminate_fn; /* after a --term checkpoint */
    crmpi_snapc_manifest_fn_t manifest_fn;   /* the launch facts of each manifest */
    void *arg;                               /* for the three */
} crmpi_snapc_global_params_t;

/** @return CRMPI_OK (*global_out to destroy), CRMPI_ERR_OUT_OF_RESOURCE. */
int crmpi_snapc_global_create(const crmpi_snapc_global_params_t *params,
                              crmpi_snapc_global_t **global_out);
void crmpi_snapc_global_destroy(crmpi_snapc_global_t *global);

/** A tool connected with its first message `msg` (TOOL_CKPT); the global takes `fd`. With
 *  app_only, the checkpoint waits for every rank's next MPIX_Checkpoint. */
void crmpi_snapc_global_tool(crmpi_snapc_global_t *global, int fd, crmpi_ctl_msg_t *msg);

/**
 * A tool asked for the job's state (TOOL_STATUS): answered at once; `fd` is closed.
 * @param ranks_running  ranks started (or restored) and running, as mpirun counts them
 * @param hosts          where the ranks run, "n1:2,n2:2" (node and ranks on it)
 */
void crmpi_snapc_global_status(crmpi_snapc_global_t *global, int fd, uint32_t ranks_running,
                               const char *hosts);

/** The tool's socket, to poll for its going away (-1 when none). */
int crmpi_snapc_global_tool_fd(const crmpi_snapc_global_t *global);
/** It became readable or hung up: a tool that leaves before the images are written
 *  aborts the checkpoint (ompi-checkpoint interrupted by Ctrl-C). */
void crmpi_snapc_global_tool_event(crmpi_snapc_global_t *global);

/** Rank `rank`'s agent passed on its MPIX_Checkpoint (AGENT_APP_CKPT): once every rank
 *  has, an application checkpoint begins, or every rank is told why not (CKPT_APP_DONE). */
void crmpi_snapc_global_app_request(crmpi_snapc_global_t *global, int rank);

/**
 * The partner level's choice: for each rank, the rank whose agent takes its copy. It is on
 * the next node of the job (nodes in the order of their first rank, cyclically), in the
 * same position among that node's ranks as the rank among its own (modulo their count), so
 * that a node's copies spread over the next node's agents.
 * @param node_of_rank  each rank's node name, np entries
 * @param partner_out   np entries: the partner, or -1 when every rank is on one node
 * @return CRMPI_OK, CRMPI_ERR_OUT_OF_RESOURCE
 */
int crmpi_snapc_global_partners(const char *const *node_of_rank, int np, int *partner_out);

/** A CKPT_* message from rank `rank`'s agent (the caller frees it). */
void crmpi_snapc_global_agent_msg(crmpi_snapc_global_t *global, int rank, crmpi_ctl_msg_t *msg);

/** mpirun received SIGCONT: a job stopped by a --stop checkpoint continues (CKPT_CONTINUE
 *  to every agent). @return true when the job was stopped so. */
bool crmpi_snapc_global_resume(crmpi_snapc_global_t *global);

/** Check the current step's deadline, and start a periodic checkpoint that is due (a
 *  periodic one is refused like a tool's while another runs, and logged). */
void crmpi_snapc_global_tick(crmpi_snapc_global_t *global);

/** Seconds until tick has something to do on its own (a periodic checkpoint due), or -1
 *  when nothing is scheduled: the event loop waits no longer than that. */
double crmpi_snapc_global_next_tick_s(const crmpi_snapc_global_t *global);

/** Rank `rank` (or its agent) ended: a checkpoint in progress is aborted. */
void crmpi_snapc_global_rank_gone(crmpi_snapc_global_t *global, int rank);

/** IDLE, or the step the current checkpoint is in. */
crmpi_snapc_state_t crmpi_snapc_global_state(const crmpi_snapc_global_t *global);

#endif /* CRMPI_SNAPC_GLOBAL_H */
