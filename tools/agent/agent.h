/*
 * agent.h: what the files of crmpi-agent share (tools/agent only).
 *
 *   agent.c          main: options, start (or restore) the rank, the event loop, the end
 *   agent_serve.c    the rank's requests on its control socket
 *   agent_pmix.c     what the agent asks PMIx for the rank: job facts, modex, fences
 *   agent_restore.c  a rank restored from a snapshot instead of started
 *   agent_ns.c       the rank's pid namespace (agent_ns.h)
 *   agent_crs.c      the checkpointer's side (agent_crs.h)
 *
 * One thread serves everything (PMIx's own and the copy to stable storage aside: they
 * only hand results back through descriptors the loop polls).
 */
#ifndef AGENT_H
#define AGENT_H

#include <stdint.h>

#include <pmix.h>

#include "agent_ns.h"
#include "ctl.h"
#include "rte.h"
#include "snapc_local.h"

typedef struct agent_state {
    pmix_proc_t self;                    /* this rank's PMIx identity */
    crmpi_rte_job_info_t info;           /* job facts handed to the rank */
    int hnp_fd;                          /* control connection to mpirun */
    crmpi_agent_ns_child_t child;        /* the rank's namespace */
    int rank_status;                     /* raw wait status from the init */
    int have_rank_status;                /* rank_status is valid */
    int fence_efd;                       /* eventfd the PMIx thread writes when a fence completes */
    int fence_pending;                   /* a FENCE request awaits its reply */
    uint32_t fence_seq;                  /* that request's sequence number */
    pmix_info_t fence_info;              /* its PMIx attributes, valid until the callback */
    volatile pmix_status_t fence_status; /* set by the callback before the eventfd write */
    int signal_fd;                       /* SIGTERM, SIGINT, SIGHUP, blocked in every thread */
    int signals_received;                /* of those, since the start */
    int init_alive;                      /* the init has not been reaped: signals go to it */
    crmpi_snapc_local_t snapc;           /* the local checkpoint coordinator */
    uint32_t restart_seq;                /* restore mode: the sequence restored */
    char **restart_entries;              /* restore mode: more entries of the rank's restart
                                          * message (its memory policies, huge-page ranges:
                                          * mempolicy.h), NULL-terminated, or NULL */
    int output_ctl;                      /* --output ctl: the rank's output to mpirun */
} agent_state_t;

/* ---- agent.c ---------------------------------------------------------------------------- */

/** Send `buf` (consumed) to mpirun as a message of `type`. */
int agent_send_hnp(agent_state_t *st, crmpi_ctl_type_t type, crmpi_buf_t *buf);

/* ---- agent_serve.c ---------------------------------------------------------------------- */

/** The rank's environment: the agent's, without PMIx's variables, plus CRMPI_CTL_FD
 *  (malloc'ed array; its strings are the agent's own). */
char **agent_rank_env(void);
/** Reply to the rank's request `seq`. */
int agent_reply(agent_state_t *st, uint32_t seq, int status, const crmpi_buf_t *payload);
/** One message from the rank (or its init). @return CRMPI_ERR_PEER_GONE when the socket
 *  closed: the rank and its init are gone. */
int agent_serve_rank(agent_state_t *st);

/* ---- agent_pmix.c ----------------------------------------------------------------------- */

/** The job facts handed to the rank (st->info), from PMIx and mpirun's variables. */
int agent_job_facts(agent_state_t *st);
/** MODEX_PUT: publish the rank's key. */
int agent_modex_put(crmpi_buf_t *req);
/** MODEX_GET: a peer's key, from what the last fence collected, into `reply`. */
int agent_modex_get(agent_state_t *st, crmpi_buf_t *req, crmpi_buf_t *reply);
/** FENCE: start it; @return CRMPI_OK (the reply follows, agent_fence_reply) or an error to
 *  reply now. */
int agent_fence_start(agent_state_t *st, uint32_t seq, crmpi_buf_t *req);
/** fence_efd is readable: the fence finished; reply to the rank. */
void agent_fence_reply(agent_state_t *st);

/* ---- agent_restore.c -------------------------------------------------------------------- */

/** Restore mode: fetch this rank's images from sequence `seq_dir` and restore them. */
int agent_restore(agent_state_t *st, const char *seq_dir, const char *cpuset);
/** A restart of application checkpoints (snapc_base_app_restart = `seq_dir`): put this
 *  rank's backup file back where the program wrote it, checksums checked; the program is
 *  then started as at launch. @return CRMPI_OK or an error (logged, one line). */
int agent_app_restore(agent_state_t *st, const char *seq_dir);
/** Tell the restored rank where it is now: the restart's parameters and job facts. */
int agent_restart_rank(agent_state_t *st);

#endif /* AGENT_H */
