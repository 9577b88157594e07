/*
 * mpirun.h: what the files of mpirun share (tools/mpirun only).
 *
 *   mpirun.c          main: parse, prepare, launch through the plm (plm.h), teardown
 *   mpirun_loop.c     the event loop: agents' messages and connections, signals, reaping,
 *                     timeouts, teardown
 *   mpirun_io.c       the ranks' output, forwarded (and tagged with --tag-output)
 *   mpirun_session.c  the session directory, the control socket, leftovers of killed jobs
 *   mpirun_net.c      the TCP listener for agents on other nodes, the job's key
 *   mpirun_cr.c       checkpoint/restart: the global coordinator (snapc_global.h) wired to
 *                     the agents, and --restore's check of the snapshot
 *
 * One thread (the launcher's own aside, which never calls in here). Signals arrive through
 * a signalfd, so every exit path goes through the same teardown.
 */
#ifndef MPIRUN_H
#define MPIRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "mpirun_map.h"
#include "mpirun_options.h"
#include "plm.h"
#include "snapc_global.h"

/* mpirun's side of one rank's agent (the launcher's side, and the control connection, are
 * in crmpi_plm_agent_t). */
typedef struct mpirun_agent {
    bool exited;         /* AGENT_EXIT received or the agent was reaped */
    bool started;        /* its hello came, and (--restore) its rank finished its restart */
    char out_line[4096]; /* partial stdout line awaiting its newline (--tag-output) */
    size_t out_len;      /* bytes in out_line */
    char err_line[4096]; /* partial stderr line */
    size_t err_len;      /* bytes in err_line */
} mpirun_agent_t;

/* Connections accepted whose first message has not come yet, at most. */
#define MPIRUN_PENDING_MAX 64

/* A connection on the control socket or the TCP listener, before its first message (an
 * agent's hello, or a tool's request): watched by the loop like every other descriptor, so
 * that a peer slow to speak (an agent on a slow node, or a connection that never speaks)
 * holds nothing else up. */
typedef struct mpirun_pending {
    int fd;                /* the accepted connection */
    bool is_tcp;           /* on the TCP listener: only agents of other nodes may use it */
    struct timespec until; /* closed unheard after this */
} mpirun_pending_t;

/* Hex digits of the job's key: 32 random bytes. */
#define MPIRUN_KEY_HEX 64

/* Output for one of mpirun's own streams (stdout, stderr), waiting for it to be writable:
 * a reader that does not keep up must not stop mpirun's loop (mpirun_io.c). */
typedef struct mpirun_outq {
    char *data;   /* queued bytes, from `off` to `len` */
    size_t off;   /* written so far */
    size_t len;   /* queued in all */
    size_t cap;   /* allocated */
    bool dropped; /* the stream is gone (EPIPE...): output is discarded */
} mpirun_outq_t;

/* Output queued beyond this, mpirun stops reading its agents' pipes until it drains: the
 * ranks then wait in their own writes, as they would without mpirun. */
#define MPIRUN_OUTQ_HIGH (16u << 20)

typedef struct mpirun_state {
    const mpirun_options_t *opts;     /* the command line */
    mpirun_map_t map;                 /* placement and binding of each rank */
    crmpi_plm_job_t job;              /* the job as the launcher sees it */
    const crmpi_plm_ops_t *plm;       /* the selected launch component; NULL until selected */
    char session_dir[512];            /* private scratch directory, removed on every exit */
    char hnp_uri[600];                /* the agents' way to mpirun: "unix:<session_dir>/hnp.sock",
                                       * or "tcp:ADDRESS:PORT" (plm.h) */
    char job_key[MPIRUN_KEY_HEX + 1]; /* the job's secret, in hex (mpirun_net.c) */
    char hosts[4096];                 /* where the ranks run, "n1:2,n2:2" (node: ranks on it) */
    char *program;                    /* absolute path of the program, checked executable */
    char **env;                       /* -x settings as "NAME=value", NULL-terminated */
    char **env_names;                 /* every -x name (borrowed from opts), NULL-terminated */
    mpirun_agent_t *agents;           /* map.np entries, indexed by rank */
    int listen_fd;                    /* control socket: tools, and the agents of this node */
    int tcp_fd;                       /* TCP listener for the agents of other nodes, or -1 */
    mpirun_pending_t pending[MPIRUN_PENDING_MAX]; /* accepted, not heard from yet */
    int npending;                                 /* entries in pending */
    int signal_fd;                                /* SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGCONT */
    int exit_code;               /* what mpirun will return; set by the first failure */
    int failed;                  /* a failure was recorded (exit_code is final) */
    int tearing_down;            /* SIGTERM was sent to the agents */
    struct timespec kill_at;     /* when teardown escalates to SIGKILL */
    int killed;                  /* SIGKILL was sent */
    struct timespec timeout_at;  /* --timeout deadline */
    crmpi_snapc_global_t *snapc; /* the global checkpoint coordinator */
    mpirun_outq_t outq[2];       /* the ranks' output for fd 1 and fd 2 (mpirun_io.c) */
} mpirun_state_t;

/* ---- mpirun_loop.c ---------------------------------------------------------------------- */

/** Record the job's outcome; only the first failure decides the exit code. */
void mpirun_fail(mpirun_state_t *st, int exit_code);
/** Send `sig` to every agent (each passes it to its rank) and start the grace period. */
void mpirun_teardown(mpirun_state_t *st, int sig);
/** SIGKILL to every agent still there. */
void mpirun_kill_all(mpirun_state_t *st);
/** `ts_out` = now + `seconds` on the monotonic clock. */
void mpirun_ts_after(struct timespec *ts_out, double seconds);
/** Run until every agent is reaped and its output drained. */
void mpirun_event_loop(mpirun_state_t *st);

/* ---- mpirun_io.c ------------------------------------------------------------------------ */

/** Forward what rank `rank`'s agent wrote on stdout (or stderr when is_err): read its pipe. */
void mpirun_forward(mpirun_state_t *st, int rank, int is_err);
/** Forward what rank `rank` wrote, as it came (over the control connection). */
void mpirun_output(mpirun_state_t *st, int rank, int is_err, const char *data, size_t len);
/** The rank's output is over: a partial line (--tag-output) goes out with a newline. */
void mpirun_output_end(mpirun_state_t *st, int rank);
/** Write what is queued for fd 1 (is_err 0) or 2 as far as it goes without blocking. */
void mpirun_output_drain(mpirun_state_t *st, int is_err);
/** Bytes queued for fd 1 or 2 (watch it for POLLOUT while there are). */
size_t mpirun_output_queued(const mpirun_state_t *st, int is_err);
/** At the end: write everything still queued, waiting for the reader; then free the queues. */
void mpirun_output_finish(mpirun_state_t *st);

/* ---- mpirun_session.c ------------------------------------------------------------------- */

/** Create the session directory (after removing those of killed mpiruns). */
int mpirun_session_create(mpirun_state_t *st);
/** Listen on "<session_dir>/hnp.sock"; sets listen_fd and hnp_uri. */
int mpirun_listen(mpirun_state_t *st);
/** Remove the session directory and the job's leftover shared-memory segments. */
void mpirun_session_remove(mpirun_state_t *st);

/* ---- mpirun_net.c ----------------------------------------------------------------------- */

/** The job's key: MPIRUN_KEY_HEX hex digits of the kernel's randomness. */
int mpirun_key_create(mpirun_state_t *st);
/** `key` is the job's key, compared in constant time. */
bool mpirun_key_matches(const mpirun_state_t *st, const char *key);
/** Listen on TCP on the interface the job uses; sets tcp_fd and hnp_uri. */
int mpirun_listen_tcp(mpirun_state_t *st);

/* ---- mpirun_cr.c ------------------------------------------------------------------------ */

/** --restore: take the snapshot's rank count as the job's (a restart cannot change it). */
int mpirun_restore_check(mpirun_options_t *opts);
/** snapc_base_app_restart `seq_dir`: a snapshot of application checkpoints, with as many
 *  ranks as -np (set from it when not given). @return CRMPI_OK or an error (logged). */
int mpirun_app_restart_check(mpirun_options_t *opts, const char *seq_dir);
/** The global checkpoint coordinator; with --with-ft cr the ranks run their C/R thread. */
int mpirun_snapc_create(mpirun_state_t *st);

#endif /* MPIRUN_H */
