/*
 * mpirun_loop.c: mpirun's event loop (mpirun.h): the agents' connections and messages,
 * signals (through a signalfd), the launcher's descriptors and its reaping (plm.h),
 * --timeout, and the teardown (SIGTERM through the launcher, SIGKILL after its grace
 * period).
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "crmpi_status.h"
#include "ctl.h"
#include "log.h"
#include "mpirun.h"

static double mpirun_ts_seconds(const struct timespec *ts)
{
    return (double)ts->tv_sec + (double)ts->tv_nsec * 1e-9;
}

void mpirun_ts_after(struct timespec *ts_out, double seconds)
{
    double at = crmpi_clock_s() + seconds;
    ts_out->tv_sec = (time_t)at;
    ts_out->tv_nsec = (long)((at - (double)ts_out->tv_sec) * 1e9);
}

void mpirun_fail(mpirun_state_t *st, int exit_code)
{
    if (!st->failed) {
        st->failed = 1;
        st->exit_code = exit_code ? exit_code : 1;
    }
}

void mpirun_teardown(mpirun_state_t *st, int sig)
{
    if (st->tearing_down) {
        return;
    }
    st->tearing_down = 1;
    for (int rank = 0; rank < st->map.np; rank++)
        st->plm->signal(&st->job, rank, sig);
    mpirun_ts_after(&st->kill_at, (double)st->job.kill_grace_ms / 1000.0);
}

void mpirun_kill_all(mpirun_state_t *st)
{
    /* A launcher that does not end at once is asked again after another grace period. */
    st->killed++;
    mpirun_ts_after(&st->kill_at, (double)st->job.kill_grace_ms / 1000.0);
    for (int rank = 0; rank < st->map.np; rank++) {
        if (st->job.agents[rank].running && st->killed == 1)
            crmpi_log_warn("rank %d (%s) did not end within %s; killing it", rank,
                           st->agents[rank].exited ? "its agent" : "still running",
                           st->job.kill_grace_param ? st->job.kill_grace_param
                                                    : "the kill grace period");
        st->plm->signal(&st->job, rank, SIGKILL);
    }
}

/* The node rank `rank` runs on, for messages. */
static const char *mpirun_node_of(const mpirun_state_t *st, int rank)
{
    return st->map.nodes[st->map.placement[rank].node_id];
}

/* "exited with status 3" or "was killed by signal 11 (Segmentation fault)" */
static void mpirun_describe_status(int status, char *buf, size_t len)
{
    if (WIFSIGNALED(status)) {
        snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    } else {
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
    }
}

static int mpirun_status_exit_code(int status)
{
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

/* The rank's end as its agent reported it (or as inferred from the agent's death). */
static void mpirun_rank_ended(mpirun_state_t *st, int rank, int status)
{
    mpirun_agent_t *agent = &st->agents[rank];
    char what[256];

    if (agent->exited) {
        return;
    }
    agent->exited = true;
    crmpi_snapc_global_rank_gone(st->snapc, rank);
    if (status == 0 || st->tearing_down) {
        return;
    }
    mpirun_describe_status(status, what, sizeof(what));
    crmpi_log_error("rank %d %s; terminating the job", rank, what);
    mpirun_fail(st, mpirun_status_exit_code(status));
    mpirun_teardown(st, SIGTERM);
}

/* Rank `rank`'s agent is gone (plm.h's gone_fn, and a remote agent's closed connection). */
static void mpirun_agent_gone(void *arg, int rank, int status, bool explained);

/* The control connection of rank `rank`'s agent closed: it is exiting. A local agent's end
 * comes with SIGCHLD; a remote agent's end is this (plm.h). */
static void mpirun_agent_closed(mpirun_state_t *st, int rank)
{
    crmpi_plm_agent_t *agent = &st->job.agents[rank];

    close(agent->ctl_fd);
    agent->ctl_fd = -1;
    if (!(st->plm->flags & CRMPI_PLM_FLAG_REMOTE))
        return;
    mpirun_output_end(st, rank);
    if (agent->running) {
        agent->running = false;
        mpirun_agent_gone(st, rank, -1, false);
    }
}

static void mpirun_handle_agent_msg(mpirun_state_t *st, int rank)
{
    crmpi_plm_agent_t *plm_agent = &st->job.agents[rank];
    crmpi_ctl_msg_t msg;
    crmpi_buf_t buf;
    uint32_t msg_rank, stream;
    int32_t status, errcode;
    const char *text;
    const void *data;
    size_t len;

    int rc = crmpi_ctl_recv(plm_agent->ctl_fd, &msg);
    if (rc != CRMPI_OK) {
        mpirun_agent_closed(st, rank);
        return;
    }
    crmpi_buf_init_read(&buf, msg.payload, msg.hdr.len);
    switch (msg.hdr.type) {
    case CRMPI_CTL_AGENT_OUTPUT:
        crmpi_buf_get_u32(&buf, &stream);
        crmpi_buf_get_bytes(&buf, &data, &len);
        if (crmpi_buf_get_done(&buf) == CRMPI_OK)
            mpirun_output(st, rank, stream == 2, data, len);
        break;
    case CRMPI_CTL_AGENT_EXIT:
        crmpi_buf_get_u32(&buf, &msg_rank);
        crmpi_buf_get_i32(&buf, &status);
        if (crmpi_buf_get_done(&buf) == CRMPI_OK && msg_rank == (uint32_t)rank) {
            /* A remote agent sent its rank's output before: a partial line goes out now. */
            if (st->plm->flags & CRMPI_PLM_FLAG_REMOTE)
                mpirun_output_end(st, rank);
            mpirun_rank_ended(st, rank, status);
        }
        break;
    case CRMPI_CTL_AGENT_ABORT:
        crmpi_buf_get_u32(&buf, &msg_rank);
        crmpi_buf_get_i32(&buf, &errcode);
        crmpi_buf_get_str(&buf, &text);
        if (crmpi_buf_get_done(&buf) == CRMPI_OK && !st->tearing_down) {
            /* The rank's reason: MPI_Abort, or a fatal error handler and its cause. */
            crmpi_log_error("rank %d aborted the job with error code %d%s%s; terminating the "
                            "job",
                            rank, errcode, *text ? ": " : "", text);
            mpirun_fail(st, errcode);
            mpirun_teardown(st, SIGTERM);
        }
        break;
    case CRMPI_CTL_CKPT_CONTINUED:
        /* A restored rank's first CONTINUED ends its restart (outside any checkpoint: the
         * coordinator ignores it then). */
        if (st->opts->restore && !st->agents[rank].started && msg.hdr.status == CRMPI_OK &&
            crmpi_snapc_global_state(st->snapc) == CRMPI_SNAPC_IDLE)
            st->agents[rank].started = true;
        crmpi_snapc_global_agent_msg(st->snapc, rank, &msg);
        break;
    case CRMPI_CTL_AGENT_APP_CKPT: {
        uint32_t asking = 0;
        crmpi_buf_t req;

        crmpi_buf_init_read(&req, msg.payload, msg.hdr.len);
        if (crmpi_buf_get_u32(&req, &asking) == CRMPI_OK && asking == (uint32_t)rank)
            crmpi_snapc_global_app_request(st->snapc, rank);
        break;
    }
    case CRMPI_CTL_CKPT_BOOKMARKS:
    case CRMPI_CTL_CKPT_DRAINED:
    case CRMPI_CTL_CKPT_READY:
    case CRMPI_CTL_CKPT_DUMPED:
    case CRMPI_CTL_CKPT_STORED:
    case CRMPI_CTL_CKPT_ABORT: crmpi_snapc_global_agent_msg(st->snapc, rank, &msg); break;
    default:
        crmpi_log_warn("agent of rank %d sent an unexpected %s", rank,
                       crmpi_ctl_type_name(msg.hdr.type));
        break;
    }
    crmpi_ctl_msg_free(&msg);
}

/*
 * An agent's hello: its rank, pids, node and the job's key. A connection that is not one of
 * this job's agents (a wrong key, a rank already connected, a pid that is not the one the
 * launcher started) is refused and closed.
 */
static void mpirun_agent_hello(mpirun_state_t *st, int fd, crmpi_ctl_msg_t *msg)
{
    crmpi_buf_t buf;
    uint32_t rank, agent_pid, rank_pid;
    const char *node = "", *key = "";
    struct timeval none = {0};

    crmpi_buf_init_read(&buf, msg->payload, msg->hdr.len);
    crmpi_buf_get_u32(&buf, &rank);
    crmpi_buf_get_u32(&buf, &agent_pid);
    crmpi_buf_get_u32(&buf, &rank_pid);
    crmpi_buf_get_str(&buf, &node);
    crmpi_buf_get_str(&buf, &key);
    if (msg->hdr.type != CRMPI_CTL_AGENT_HELLO || crmpi_buf_get_done(&buf) != CRMPI_OK ||
        !mpirun_key_matches(st, key) || rank >= (uint32_t)st->map.np ||
        st->job.agents[rank].ctl_fd >= 0 || st->agents[rank].exited ||
        (st->job.agents[rank].pid > 0 && st->job.agents[rank].pid != (pid_t)agent_pid)) {
        crmpi_log_warn("refused a control connection that is not one of this job's agents");
        close(fd);
        return;
    }
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none));
    st->job.agents[rank].ctl_fd = fd;
    st->agents[rank].started = !st->opts->restore; /* a restored rank: once restarted */
    if (st->opts->verbose > 1 && st->opts->restore) {
        crmpi_log_info("rank %u is being restored on %s (agent pid %u)", rank, node, agent_pid);
    } else if (st->opts->verbose > 1) {
        crmpi_log_info("rank %u started on %s (agent pid %u, rank pid %u in its namespace)", rank,
                       node, agent_pid, rank_pid);
    }
    /* It connected after the teardown began: it has its signal now. */
    if (st->tearing_down)
        st->plm->signal(&st->job, (int)rank, SIGTERM);
}

/* How long an accepted connection may stay silent before its first message. */
#define MPIRUN_PENDING_S 60.0
/* How long the rest of a first message may take once its first bytes are there. */
#define MPIRUN_FIRST_MSG_S 2

static void mpirun_pending_drop(mpirun_state_t *st, int index)
{
    st->pending[index] = st->pending[--st->npending];
}

/* A connection on the control socket (`is_tcp`: on the TCP listener, where only agents of
 * other nodes may connect; tools come through the unix socket of the session directory):
 * kept until its first message, which the loop waits for with everything else. */
static void mpirun_accept(mpirun_state_t *st, int listen_fd, bool is_tcp)
{
    int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
    struct timeval tv = {.tv_sec = MPIRUN_FIRST_MSG_S};
    mpirun_pending_t *pending;

    if (fd < 0)
        return;
    if (is_tcp) {
        int one = 1;

        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        /* An agent whose node vanished sends no end of file: keepalive finds it out. */
        crmpi_ctl_tcp_keepalive(fd);
    }
    if (!is_tcp) {
        /* The socket's directory is this user's alone; the peer's credentials say so too. */
        struct ucred peer;
        socklen_t peer_len = sizeof(peer);

        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &peer_len) < 0 || peer.uid != getuid()) {
            crmpi_log_warn("refused a control connection of uid %d (only this user's tools and "
                           "agents may connect)",
                           peer_len ? (int)peer.uid : -1);
            close(fd);
            return;
        }
    }
    /* A message whose first bytes came and whose rest does not cannot stall mpirun long. */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (st->npending == MPIRUN_PENDING_MAX) {
        /* Full of connections that do not speak: the oldest makes room. */
        crmpi_log_warn("too many control connections waiting for their first message; "
                       "closing the oldest");
        close(st->pending[0].fd);
        mpirun_pending_drop(st, 0);
    }
    pending = &st->pending[st->npending++];
    pending->fd = fd;
    pending->is_tcp = is_tcp;
    mpirun_ts_after(&pending->until, MPIRUN_PENDING_S);
}

/* The first message of pending connection `index` is there (or its end): serve it. */
static void mpirun_pending_ready(mpirun_state_t *st, int index)
{
    int fd = st->pending[index].fd;
    bool is_tcp = st->pending[index].is_tcp;
    crmpi_ctl_msg_t msg;

    mpirun_pending_drop(st, index);
    if (crmpi_ctl_recv(fd, &msg) != CRMPI_OK) {
        close(fd);
        return;
    }
    if (!is_tcp && msg.hdr.type == CRMPI_CTL_TOOL_STATUS) {
        uint32_t running = 0;

        for (int rank = 0; rank < st->map.np; rank++)
            running += st->agents[rank].started && !st->agents[rank].exited;
        crmpi_snapc_global_status(st->snapc, fd, running, st->hosts);
        crmpi_ctl_msg_free(&msg);
        return;
    }
    if (!is_tcp && msg.hdr.type == CRMPI_CTL_TOOL_CKPT) {
        /* ompi-checkpoint: the coordinator keeps the connection until it answers. */
        struct timeval none = {0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none));
        crmpi_snapc_global_tool(st->snapc, fd, &msg);
        crmpi_ctl_msg_free(&msg);
        return;
    }
    mpirun_agent_hello(st, fd, &msg);
    crmpi_ctl_msg_free(&msg);
}

/* Close the pending connections that stayed silent too long (all of them when `all`). */
static void mpirun_pending_expire(mpirun_state_t *st, bool all)
{
    double now = crmpi_clock_s();

    for (int i = st->npending - 1; i >= 0; i--) {
        if (all || now >= mpirun_ts_seconds(&st->pending[i].until)) {
            close(st->pending[i].fd);
            mpirun_pending_drop(st, i);
        }
    }
}

static void mpirun_agent_gone(void *arg, int rank, int status, bool explained)
{
    mpirun_state_t *st = arg;
    mpirun_agent_t *agent = &st->agents[rank];
    crmpi_plm_agent_t *plm_agent = &st->job.agents[rank];

    /* Its last messages (AGENT_EXIT) may still be unread: the signalfd can be served before
     * the agent's socket. A dead peer's socket holds data or end-of-file; a remote agent's
     * (whose launcher ended) may not have closed yet, so only what is there is read. */
    while (plm_agent->ctl_fd >= 0) {
        struct pollfd pfd = {.fd = plm_agent->ctl_fd, .events = POLLIN};

        if (poll(&pfd, 1, 0) <= 0)
            break;
        mpirun_handle_agent_msg(st, rank);
    }
    /* Not exited yet: the agent died without reporting its rank's end. */
    if (!agent->exited && !st->tearing_down) {
        if (explained) {
            mpirun_fail(st, 1);
        } else if (status < 0) {
            crmpi_log_error("the connection to the agent of rank %d on %s ended before the "
                            "agent reported its rank's exit (the agent died, or its node is "
                            "unreachable); terminating the job",
                            rank, mpirun_node_of(st, rank));
            mpirun_fail(st, 1);
        } else {
            char what[256];
            mpirun_describe_status(status, what, sizeof(what));
            crmpi_log_error("the agent of rank %d %s before reporting its rank's exit; "
                            "terminating the job",
                            rank, what);
            mpirun_fail(st, 1);
        }
        mpirun_teardown(st, SIGTERM);
    }
    if (!agent->exited)
        crmpi_snapc_global_rank_gone(st->snapc, rank);
    agent->exited = true;
}

static void mpirun_handle_signal(mpirun_state_t *st)
{
    struct signalfd_siginfo si;
    while (read(st->signal_fd, &si, sizeof(si)) == sizeof(si)) {
        int sig = (int)si.ssi_signo;
        if (sig == SIGCHLD) {
            st->plm->reap(&st->job, mpirun_agent_gone, st);
            continue;
        }
        if (sig == SIGCONT) {
            /* kill -CONT <jobid>: a job stopped by ompi-checkpoint --stop goes on. */
            if (st->snapc)
                crmpi_snapc_global_resume(st->snapc);
            continue;
        }
        if (st->tearing_down) {
            /* A second interrupt: stop waiting for the ranks. */
            mpirun_kill_all(st);
            continue;
        }
        crmpi_log_error("received %s; forwarding it to the job and terminating", strsignal(sig));
        mpirun_fail(st, 128 + sig);
        mpirun_teardown(st, sig == SIGHUP ? SIGTERM : sig);
    }
}

/* The launcher's descriptors at most (plm.h's poll_fds). */
#define MPIRUN_PLM_FDS_MAX 8

static int mpirun_all_done(mpirun_state_t *st)
{
    struct pollfd ignored[MPIRUN_PLM_FDS_MAX];

    for (int rank = 0; rank < st->map.np; rank++) {
        const crmpi_plm_agent_t *agent = &st->job.agents[rank];
        if (agent->running || agent->out_fd >= 0 || agent->err_fd >= 0) {
            return 0;
        }
    }
    return st->plm->poll_fds(&st->job, ignored, MPIRUN_PLM_FDS_MAX) == 0;
}

/* What fds[i] of the loop belongs to. */
typedef enum {
    MPIRUN_FD_SIGNAL,
    MPIRUN_FD_LISTEN,
    MPIRUN_FD_LISTEN_TCP,
    MPIRUN_FD_PENDING,
    MPIRUN_FD_TOOL,
    MPIRUN_FD_PLM,
    MPIRUN_FD_CTL,
    MPIRUN_FD_OUT,
    MPIRUN_FD_ERR,
    MPIRUN_FD_WRITE, /* mpirun's own stdout (rank 0) or stderr (rank 1), output queued */
} mpirun_fd_kind_t;

typedef struct mpirun_fd_owner {
    mpirun_fd_kind_t kind; /* what the descriptor is */
    int rank;              /* whose, for CTL, OUT and ERR; the fd for PENDING */
} mpirun_fd_owner_t;

void mpirun_event_loop(mpirun_state_t *st)
{
    const int np = st->map.np;
    const int max_fds = 6 + MPIRUN_PENDING_MAX + MPIRUN_PLM_FDS_MAX + 3 * np;
    struct pollfd *fds = calloc((size_t)max_fds, sizeof(*fds));
    mpirun_fd_owner_t *owner = calloc((size_t)max_fds, sizeof(*owner));

    if (!fds || !owner) {
        crmpi_log_error("out of memory in the event loop; terminating the job");
        mpirun_fail(st, 1);
        mpirun_kill_all(st);
        free(fds);
        free(owner);
        return;
    }
    while (!mpirun_all_done(st)) {
        int nfds = 0;
#define MPIRUN_WATCH(fd_, kind_, rank_)                                                            \
    do {                                                                                           \
        owner[nfds] = (mpirun_fd_owner_t){.kind = (kind_), .rank = (rank_)};                       \
        fds[nfds++] = (struct pollfd){.fd = (fd_), .events = POLLIN};                              \
    } while (0)
        MPIRUN_WATCH(st->signal_fd, MPIRUN_FD_SIGNAL, -1);
        MPIRUN_WATCH(st->listen_fd, MPIRUN_FD_LISTEN, -1);
        MPIRUN_WATCH(st->tcp_fd, MPIRUN_FD_LISTEN_TCP, -1);
        for (int i = 0; i < st->npending; i++)
            MPIRUN_WATCH(st->pending[i].fd, MPIRUN_FD_PENDING, st->pending[i].fd);
        MPIRUN_WATCH(crmpi_snapc_global_tool_fd(st->snapc), MPIRUN_FD_TOOL, -1);
        int plm_fds = st->plm->poll_fds(&st->job, fds + nfds, MPIRUN_PLM_FDS_MAX);
        for (int i = 0; i < plm_fds; i++)
            owner[nfds + i] = (mpirun_fd_owner_t){.kind = MPIRUN_FD_PLM, .rank = -1};
        nfds += plm_fds;
        /* A reader far behind: the ranks' pipes wait (and the ranks in their writes). */
        bool reading = mpirun_output_queued(st, 0) + mpirun_output_queued(st, 1) < MPIRUN_OUTQ_HIGH;
        for (int rank = 0; rank < np; rank++) {
            const crmpi_plm_agent_t *agent = &st->job.agents[rank];
            if (agent->ctl_fd >= 0)
                MPIRUN_WATCH(agent->ctl_fd, MPIRUN_FD_CTL, rank);
            if (agent->out_fd >= 0 && reading)
                MPIRUN_WATCH(agent->out_fd, MPIRUN_FD_OUT, rank);
            if (agent->err_fd >= 0 && reading)
                MPIRUN_WATCH(agent->err_fd, MPIRUN_FD_ERR, rank);
        }
        for (int is_err = 0; is_err < 2; is_err++) {
            if (mpirun_output_queued(st, is_err)) {
                MPIRUN_WATCH(is_err ? 2 : 1, MPIRUN_FD_WRITE, is_err);
                fds[nfds - 1].events = POLLOUT;
            }
        }
#undef MPIRUN_WATCH
        double now = crmpi_clock_s(), wait_s = 1.0;
        if (st->tearing_down) {
            wait_s = mpirun_ts_seconds(&st->kill_at) - now;
        } else if (st->opts->timeout_s) {
            wait_s = mpirun_ts_seconds(&st->timeout_at) - now;
        }
        /* A periodic checkpoint due sooner than that wakes the loop for it. */
        double ckpt_s = crmpi_snapc_global_next_tick_s(st->snapc);
        if (ckpt_s >= 0 && ckpt_s < wait_s)
            wait_s = ckpt_s;
        int timeout_ms = wait_s <= 0 ? 0 : (wait_s > 1.0 ? 1000 : (int)(wait_s * 1000) + 1);
        int ready = poll(fds, (nfds_t)nfds, timeout_ms);
        if (ready < 0 && errno != EINTR) {
            crmpi_log_error("poll failed: %s; terminating the job", strerror(errno));
            mpirun_fail(st, 1);
            mpirun_kill_all(st);
            break;
        }
        for (int i = 0; ready > 0 && i < nfds; i++) {
            if (!fds[i].revents) {
                continue;
            }
            switch (owner[i].kind) {
            case MPIRUN_FD_SIGNAL: mpirun_handle_signal(st); break;
            case MPIRUN_FD_LISTEN: mpirun_accept(st, st->listen_fd, false); break;
            case MPIRUN_FD_LISTEN_TCP: mpirun_accept(st, st->tcp_fd, true); break;
            case MPIRUN_FD_PENDING:
                /* Looked up by descriptor: an accept this round may have moved the entries. */
                for (int p = 0; p < st->npending; p++) {
                    if (st->pending[p].fd == owner[i].rank) {
                        mpirun_pending_ready(st, p);
                        break;
                    }
                }
                break;
            case MPIRUN_FD_TOOL: crmpi_snapc_global_tool_event(st->snapc); break;
            case MPIRUN_FD_PLM: st->plm->poll_event(&st->job, &fds[i]); break;
            case MPIRUN_FD_CTL:
                /* Handled already when the agent was found gone in this same round. */
                if (st->job.agents[owner[i].rank].ctl_fd == fds[i].fd)
                    mpirun_handle_agent_msg(st, owner[i].rank);
                break;
            case MPIRUN_FD_OUT: mpirun_forward(st, owner[i].rank, 0); break;
            case MPIRUN_FD_ERR: mpirun_forward(st, owner[i].rank, 1); break;
            case MPIRUN_FD_WRITE: mpirun_output_drain(st, owner[i].rank); break;
            }
        }
        crmpi_snapc_global_tick(st->snapc);
        mpirun_pending_expire(st, false);
        now = crmpi_clock_s();
        if (st->opts->timeout_s && !st->tearing_down && now >= mpirun_ts_seconds(&st->timeout_at)) {
            crmpi_log_error("the job did not finish within --timeout %d s; terminating it",
                            st->opts->timeout_s);
            mpirun_fail(st, 1);
            mpirun_teardown(st, SIGTERM);
        }
        if (st->tearing_down && now >= mpirun_ts_seconds(&st->kill_at)) {
            mpirun_kill_all(st);
        }
    }
    mpirun_pending_expire(st, true);
    mpirun_output_finish(st);
    free(fds);
    free(owner);
}
