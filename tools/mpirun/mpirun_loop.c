/*
 * mpirun_loop.c: mpirun's event loop (mpirun.h): the agents' connections and messages,
 * signals (through a signalfd), reaping, --timeout, and the teardown (SIGTERM through the
 * launcher, SIGKILL after its grace period).
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
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
    st->killed = 1;
    for (int rank = 0; rank < st->map.np; rank++) {
        if (st->job.agents[rank].pid > 0) {
            crmpi_log_warn("rank %d (%s) did not end within plm_local_kill_grace; killing it", rank,
                           st->agents[rank].exited ? "its agent" : "still running");
            st->plm->signal(&st->job, rank, SIGKILL);
        }
    }
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

static void mpirun_handle_agent_msg(mpirun_state_t *st, int rank)
{
    mpirun_agent_t *agent = &st->agents[rank];
    crmpi_ctl_msg_t msg;
    crmpi_buf_t buf;
    uint32_t msg_rank;
    int32_t status, errcode;
    const char *text;

    int rc = crmpi_ctl_recv(agent->ctl_fd, &msg);
    if (rc != CRMPI_OK) {
        /* The agent closed its connection: it is exiting; SIGCHLD tells the rest. */
        close(agent->ctl_fd);
        agent->ctl_fd = -1;
        return;
    }
    crmpi_buf_init_read(&buf, msg.payload, msg.hdr.len);
    switch (msg.hdr.type) {
    case CRMPI_CTL_AGENT_EXIT:
        crmpi_buf_get_u32(&buf, &msg_rank);
        crmpi_buf_get_i32(&buf, &status);
        if (crmpi_buf_get_done(&buf) == CRMPI_OK && msg_rank == (uint32_t)rank) {
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
    case CRMPI_CTL_CKPT_BOOKMARKS:
    case CRMPI_CTL_CKPT_DRAINED:
    case CRMPI_CTL_CKPT_READY:
    case CRMPI_CTL_CKPT_DUMPED:
    case CRMPI_CTL_CKPT_CONTINUED:
    case CRMPI_CTL_CKPT_STORED:
    case CRMPI_CTL_CKPT_ABORT: crmpi_snapc_global_agent_msg(st->snapc, rank, &msg); break;
    default:
        crmpi_log_warn("agent of rank %d sent an unexpected %s", rank,
                       crmpi_ctl_type_name(msg.hdr.type));
        break;
    }
    crmpi_ctl_msg_free(&msg);
}

static void mpirun_accept_agent(mpirun_state_t *st)
{
    int fd = accept4(st->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    crmpi_ctl_msg_t msg;
    crmpi_buf_t buf;
    uint32_t rank, agent_pid, rank_pid;

    if (fd < 0) {
        return;
    }
    /* The hello follows the connect at once; do not let a stuck peer stall mpirun. */
    struct timeval tv = {.tv_sec = 5};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (crmpi_ctl_recv(fd, &msg) != CRMPI_OK) {
        close(fd);
        return;
    }
    if (msg.hdr.type == CRMPI_CTL_TOOL_STATUS) {
        crmpi_snapc_global_status(st->snapc, fd);
        crmpi_ctl_msg_free(&msg);
        return;
    }
    if (msg.hdr.type == CRMPI_CTL_TOOL_CKPT) {
        /* ompi-checkpoint: the coordinator keeps the connection until it answers. */
        struct timeval none = {0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none));
        crmpi_snapc_global_tool(st->snapc, fd, &msg);
        crmpi_ctl_msg_free(&msg);
        return;
    }
    crmpi_buf_init_read(&buf, msg.payload, msg.hdr.len);
    crmpi_buf_get_u32(&buf, &rank);
    crmpi_buf_get_u32(&buf, &agent_pid);
    crmpi_buf_get_u32(&buf, &rank_pid);
    if (msg.hdr.type != CRMPI_CTL_AGENT_HELLO || crmpi_buf_get_done(&buf) != CRMPI_OK ||
        rank >= (uint32_t)st->map.np || st->agents[rank].ctl_fd >= 0 ||
        st->job.agents[rank].pid != (pid_t)agent_pid) {
        crmpi_log_warn("refused a control connection that is not one of this job's agents");
        crmpi_ctl_msg_free(&msg);
        close(fd);
        return;
    }
    crmpi_ctl_msg_free(&msg);
    struct timeval none = {0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none));
    st->agents[rank].ctl_fd = fd;
    if (st->opts->verbose > 1) {
        crmpi_log_info("rank %u started (agent pid %u, rank pid %u in its namespace)", rank,
                       agent_pid, rank_pid);
    }
}

static void mpirun_reap(mpirun_state_t *st)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (int rank = 0; rank < st->map.np; rank++) {
            mpirun_agent_t *agent = &st->agents[rank];
            if (st->job.agents[rank].pid != pid) {
                continue;
            }
            st->job.agents[rank].pid = 0;
            /* Its last messages (AGENT_EXIT) may still be unread: the signalfd can be served
             * before the agent's socket. A dead peer's socket holds data or end-of-file, so
             * this cannot block. */
            while (agent->ctl_fd >= 0) {
                mpirun_handle_agent_msg(st, rank);
            }
            /* Not exited yet: the agent died without reporting its rank's end. */
            if (!agent->exited && !st->tearing_down) {
                char what[256];
                mpirun_describe_status(status, what, sizeof(what));
                crmpi_log_error("the agent of rank %d %s before reporting its rank's exit; "
                                "terminating the job",
                                rank, what);
                mpirun_fail(st, 1);
                mpirun_teardown(st, SIGTERM);
            }
            agent->exited = true;
        }
    }
}

static void mpirun_handle_signal(mpirun_state_t *st)
{
    struct signalfd_siginfo si;
    while (read(st->signal_fd, &si, sizeof(si)) == sizeof(si)) {
        int sig = (int)si.ssi_signo;
        if (sig == SIGCHLD) {
            mpirun_reap(st);
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

static int mpirun_all_done(const mpirun_state_t *st)
{
    for (int rank = 0; rank < st->map.np; rank++) {
        const crmpi_plm_agent_t *agent = &st->job.agents[rank];
        if (agent->pid > 0 || agent->out_fd >= 0 || agent->err_fd >= 0) {
            return 0;
        }
    }
    return 1;
}

void mpirun_event_loop(mpirun_state_t *st)
{
    const int np = st->map.np;
    struct pollfd *fds = calloc((size_t)(3 + 3 * np), sizeof(*fds));
    int *owner = calloc((size_t)(3 + 3 * np), sizeof(int));

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
        fds[nfds++] = (struct pollfd){.fd = st->signal_fd, .events = POLLIN};
        fds[nfds++] = (struct pollfd){.fd = st->listen_fd, .events = POLLIN};
        fds[nfds++] =
            (struct pollfd){.fd = crmpi_snapc_global_tool_fd(st->snapc), .events = POLLIN};
        for (int rank = 0; rank < np; rank++) {
            const crmpi_plm_agent_t *agent = &st->job.agents[rank];
            /* owner: rank * 3 + (0 ctl, 1 out, 2 err) */
            if (st->agents[rank].ctl_fd >= 0) {
                owner[nfds] = rank * 3;
                fds[nfds++] = (struct pollfd){.fd = st->agents[rank].ctl_fd, .events = POLLIN};
            }
            if (agent->out_fd >= 0) {
                owner[nfds] = rank * 3 + 1;
                fds[nfds++] = (struct pollfd){.fd = agent->out_fd, .events = POLLIN};
            }
            if (agent->err_fd >= 0) {
                owner[nfds] = rank * 3 + 2;
                fds[nfds++] = (struct pollfd){.fd = agent->err_fd, .events = POLLIN};
            }
        }
        double now = crmpi_clock_s(), wait_s = 1.0;
        if (st->tearing_down && !st->killed) {
            wait_s = mpirun_ts_seconds(&st->kill_at) - now;
        } else if (st->opts->timeout_s && !st->tearing_down) {
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
            if (i == 0) {
                mpirun_handle_signal(st);
            } else if (i == 1) {
                mpirun_accept_agent(st);
            } else if (i == 2) {
                crmpi_snapc_global_tool_event(st->snapc);
            } else if (owner[i] % 3 == 0) {
                mpirun_handle_agent_msg(st, owner[i] / 3);
            } else {
                mpirun_forward(st, owner[i] / 3, owner[i] % 3 == 2);
            }
        }
        crmpi_snapc_global_tick(st->snapc);
        now = crmpi_clock_s();
        if (st->opts->timeout_s && !st->tearing_down && now >= mpirun_ts_seconds(&st->timeout_at)) {
            crmpi_log_error("the job did not finish within --timeout %d s; terminating it",
                            st->opts->timeout_s);
            mpirun_fail(st, 1);
            mpirun_teardown(st, SIGTERM);
        }
        if (st->tearing_down && !st->killed && now >= mpirun_ts_seconds(&st->kill_at)) {
            mpirun_kill_all(st);
        }
    }
    free(fds);
    free(owner);
}
