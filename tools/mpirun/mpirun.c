/*
 * mpirun.c: the head node process (HNP) of a crmpi job.
 *
 *   parse and validate -> map and bind -> session directory + control socket
 *     -> plm init/launch (one crmpi-agent per rank)
 *     -> event loop: forward output, read agent reports, signals, timeout
 *     -> teardown (SIGTERM, grace, SIGKILL) -> remove the session directory -> exit code
 *
 * One thread (the PMIx server's own progress thread aside). Signals arrive through a
 * signalfd, so every exit path goes through the same teardown.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "clock.h"
#include "crmpi_status.h"
#include "ctl.h"
#include "filem.h"
#include "snapshot.h"
#include "snapshot_manifest.h"
#include "filem_fs.h"
#include "snapc_global.h"
#include "log.h"
#include "param.h"
#include "plm.h"
#include "session.h"

static const crmpi_component_t *const mpirun_plm_components[] = {&plm_local_component, NULL};

static crmpi_framework_t mpirun_plm_framework = {
    .info = &crmpi_plm_framework_info,
    .components = mpirun_plm_components,
};

typedef struct mpirun_state {
    mpirun_job_t job;            /* the job being run */
    const plm_ops_t *plm;        /* the selected launch component */
    int listen_fd;               /* control socket the agents connect to */
    int signal_fd;               /* SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGCONT */
    int exit_code;               /* what mpirun will return; set by the first failure */
    int failed;                  /* a failure was recorded (exit_code is final) */
    int tearing_down;            /* SIGTERM was sent to the agents */
    struct timespec kill_at;     /* when teardown escalates to SIGKILL */
    int killed;                  /* SIGKILL was sent */
    struct timespec timeout_at;  /* --timeout deadline */
    int64_t kill_grace_ms;       /* plm_local_kill_grace */
    crmpi_snapc_global_t *snapc; /* the global checkpoint coordinator */
} mpirun_state_t;

static double mpirun_ts_seconds(const struct timespec *ts)
{
    return (double)ts->tv_sec + (double)ts->tv_nsec * 1e-9;
}

static void mpirun_ts_after(struct timespec *ts_out, double seconds)
{
    double at = crmpi_clock_s() + seconds;
    ts_out->tv_sec = (time_t)at;
    ts_out->tv_nsec = (long)((at - (double)ts_out->tv_sec) * 1e9);
}

/* Record the job's outcome; only the first failure decides the exit code. */
static void mpirun_fail(mpirun_state_t *st, int exit_code)
{
    if (!st->failed) {
        st->failed = 1;
        st->exit_code = exit_code ? exit_code : 1;
    }
}

/* Send `sig` to every agent (each passes it to its rank) and start the grace period. */
static void mpirun_teardown(mpirun_state_t *st, int sig)
{
    if (st->tearing_down) {
        return;
    }
    st->tearing_down = 1;
    for (int rank = 0; rank < st->job.map.np; rank++) {
        if (st->job.agents[rank].pid > 0) {
            kill(st->job.agents[rank].pid, sig);
        }
    }
    mpirun_ts_after(&st->kill_at, (double)st->kill_grace_ms / 1000.0);
}

static void mpirun_kill_all(mpirun_state_t *st)
{
    st->killed = 1;
    for (int rank = 0; rank < st->job.map.np; rank++) {
        if (st->job.agents[rank].pid > 0) {
            crmpi_log_warn("rank %d (%s) did not end within plm_local_kill_grace; killing it", rank,
                           st->job.agents[rank].exited ? "its agent" : "still running");
            /* The agent leads its own process group; its rank's init dies with it
             * (PR_SET_PDEATHSIG), and with the init the rank's whole pid namespace. */
            kill(-st->job.agents[rank].pid, SIGKILL);
            kill(st->job.agents[rank].pid, SIGKILL);
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
    mpirun_agent_t *agent = &st->job.agents[rank];
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
    mpirun_agent_t *agent = &st->job.agents[rank];
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
        rank >= (uint32_t)st->job.map.np || st->job.agents[rank].ctl_fd >= 0 ||
        st->job.agents[rank].pid != (pid_t)agent_pid) {
        crmpi_log_warn("refused a control connection that is not one of this job's agents");
        crmpi_ctl_msg_free(&msg);
        close(fd);
        return;
    }
    crmpi_ctl_msg_free(&msg);
    struct timeval none = {0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none));
    st->job.agents[rank].ctl_fd = fd;
    if (st->job.opts->verbose > 1) {
        crmpi_log_info("rank %u started (agent pid %u, rank pid %u in its namespace)", rank,
                       agent_pid, rank_pid);
    }
}

static void mpirun_write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return; /* our own stdout is gone; nothing useful to do with the output */
        }
        data += n;
        len -= (size_t)n;
    }
}

static void mpirun_emit_line(mpirun_state_t *st, int rank, int out_fd, const char *stream,
                             const char *line, size_t len)
{
    char prefix[64];
    int plen = snprintf(prefix, sizeof(prefix), "[%llu,%d]<%s>:", (unsigned long long)st->job.jobid,
                        rank, stream);
    mpirun_write_all(out_fd, prefix, (size_t)plen);
    mpirun_write_all(out_fd, line, len);
}

/* Forward what an agent wrote; with --tag-output, whole lines only, each tagged. */
static void mpirun_forward(mpirun_state_t *st, int rank, int is_err)
{
    mpirun_agent_t *agent = &st->job.agents[rank];
    int *fd = is_err ? &agent->err_fd : &agent->out_fd;
    char *line = is_err ? agent->err_line : agent->out_line;
    size_t *line_len = is_err ? &agent->err_len : &agent->out_len;
    size_t cap = is_err ? sizeof(agent->err_line) : sizeof(agent->out_line);
    int out_fd = is_err ? 2 : 1;
    const char *stream = is_err ? "stderr" : "stdout";
    char data[8192];

    ssize_t n = read(*fd, data, sizeof(data));
    if (n < 0 && errno == EINTR) {
        return;
    }
    if (n <= 0) {
        if (st->job.opts->tag_output && *line_len) {
            mpirun_emit_line(st, rank, out_fd, stream, line, *line_len);
            mpirun_write_all(out_fd, "\n", 1);
            *line_len = 0;
        }
        close(*fd);
        *fd = -1;
        return;
    }
    if (!st->job.opts->tag_output) {
        mpirun_write_all(out_fd, data, (size_t)n);
        return;
    }
    for (ssize_t i = 0; i < n; i++) {
        line[(*line_len)++] = data[i];
        if (data[i] == '\n' || *line_len == cap) {
            mpirun_emit_line(st, rank, out_fd, stream, line, *line_len);
            *line_len = 0;
        }
    }
}

static void mpirun_reap(mpirun_state_t *st)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (int rank = 0; rank < st->job.map.np; rank++) {
            mpirun_agent_t *agent = &st->job.agents[rank];
            if (agent->pid != pid) {
                continue;
            }
            agent->pid = 0;
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
    for (int rank = 0; rank < st->job.map.np; rank++) {
        const mpirun_agent_t *agent = &st->job.agents[rank];
        if (agent->pid > 0 || agent->out_fd >= 0 || agent->err_fd >= 0) {
            return 0;
        }
    }
    return 1;
}

static void mpirun_event_loop(mpirun_state_t *st)
{
    const int np = st->job.map.np;
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
            const mpirun_agent_t *agent = &st->job.agents[rank];
            /* owner: rank * 3 + (0 ctl, 1 out, 2 err) */
            if (agent->ctl_fd >= 0) {
                owner[nfds] = rank * 3;
                fds[nfds++] = (struct pollfd){.fd = agent->ctl_fd, .events = POLLIN};
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
        } else if (st->job.opts->timeout_s && !st->tearing_down) {
            wait_s = mpirun_ts_seconds(&st->timeout_at) - now;
        }
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
        if (st->job.opts->timeout_s && !st->tearing_down &&
            now >= mpirun_ts_seconds(&st->timeout_at)) {
            crmpi_log_error("the job did not finish within --timeout %d s; terminating it",
                            st->job.opts->timeout_s);
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

static void mpirun_tree_remove(const char *path)
{
    if (crmpi_filem_tree_remove(path) != CRMPI_OK)
        crmpi_log_warn("cannot remove the session directory %s: %s", path, strerror(errno));
}

static void mpirun_session_remove(const mpirun_job_t *job)
{
    if (!job->session_dir[0]) {
        return;
    }
    mpirun_tree_remove(job->session_dir);
    /* The per-user parent stays: other jobs of the same user may be using it. */
}

/*
 * Session directories of mpiruns that were killed before they could remove them (SIGKILL,
 * a crash): a directory is named after its mpirun's pid, so one whose pid no process has
 * any more, or that has this mpirun's pid, is left over.
 */
static void mpirun_session_sweep(const char *parent, uint64_t own_jobid)
{
    struct dirent *entry;
    DIR *dir = opendir(parent);

    while (dir && (entry = readdir(dir)) != NULL) {
        char *end, path[PATH_MAX];
        unsigned long long jobid = strtoull(entry->d_name, &end, 10);

        if (*end || jobid == 0 || jobid > INT_MAX ||
            (jobid != own_jobid && (kill((pid_t)jobid, 0) == 0 || errno != ESRCH)))
            continue;
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", parent, entry->d_name) < sizeof(path))
            mpirun_tree_remove(path);
    }
    if (dir)
        closedir(dir);
}

/*
 * Shared-memory segments of the job's ranks live in /dev/shm as "crmpi-<jobid>-*" (the sm
 * BTL's naming). Ranks unlink their own at MPI_Finalize; a rank that crashed or was killed
 * cannot, and nobody else would.
 */
static void mpirun_shm_remove(const mpirun_job_t *job)
{
    char prefix[64];
    size_t prefix_len;
    struct dirent *entry;
    DIR *dir = opendir("/dev/shm");

    if (!dir)
        return;
    prefix_len =
        (size_t)snprintf(prefix, sizeof(prefix), "crmpi-%llu-", (unsigned long long)job->jobid);
    while ((entry = readdir(dir)) != NULL) {
        if (strncmp(entry->d_name, prefix, prefix_len) != 0)
            continue;
        if (unlinkat(dirfd(dir), entry->d_name, 0) < 0 && errno != ENOENT)
            crmpi_log_warn("cannot remove the shared-memory segment /dev/shm/%s: %s", entry->d_name,
                           strerror(errno));
    }
    closedir(dir);
}

static int mpirun_session_create(mpirun_job_t *job)
{
    char parent[PATH_MAX];

    if (crmpi_session_parent(parent, sizeof(parent)) != CRMPI_OK) {
        crmpi_log_error("runtime_session_dir_base is too long");
        return CRMPI_ERR_BAD_PARAM;
    }
    if (mkdir(parent, 0700) < 0 && errno != EEXIST) {
        crmpi_log_error("cannot create %s: %s", parent, strerror(errno));
        return CRMPI_ERR_IO;
    }
    mpirun_session_sweep(parent, job->jobid);
    if ((size_t)snprintf(job->session_dir, sizeof(job->session_dir), "%s/%llu", parent,
                         (unsigned long long)job->jobid) >= sizeof(job->session_dir)) {
        crmpi_log_error("session directory path under %s is too long", parent);
        job->session_dir[0] = '\0';
        return CRMPI_ERR_BAD_PARAM;
    }
    if (mkdir(job->session_dir, 0700) < 0) {
        crmpi_log_error("cannot create the session directory %s: %s", job->session_dir,
                        strerror(errno));
        job->session_dir[0] = '\0';
        return CRMPI_ERR_IO;
    }
    return CRMPI_OK;
}

static int mpirun_listen(mpirun_state_t *st)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int fd;

    if ((size_t)snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/hnp.sock",
                         st->job.session_dir) >= sizeof(addr.sun_path)) {
        crmpi_log_error("session directory %s is too long for a socket path", st->job.session_dir);
        return CRMPI_ERR_BAD_PARAM;
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(fd, 128) < 0) {
        crmpi_log_error("cannot listen on %s: %s", addr.sun_path, strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return CRMPI_ERR_IO;
    }
    st->listen_fd = fd;
    snprintf(st->job.hnp_uri, sizeof(st->job.hnp_uri), "unix:%s", addr.sun_path);
    return CRMPI_OK;
}

/* The program as the agents will exec it: an absolute path, checked executable here so
 * that a typo is one clear line, not N failing ranks. */
static int mpirun_resolve_program(const char *name, char **path_out)
{
    char candidate[PATH_MAX];
    struct stat sb;

    if (strchr(name, '/')) {
        if (!realpath(name, candidate)) {
            crmpi_log_error("cannot run '%s': %s", name, strerror(errno));
            return CRMPI_ERR_NOT_FOUND;
        }
    } else {
        const char *path = getenv("PATH");
        const char *dir = path ? path : "/usr/local/bin:/usr/bin:/bin";
        int found = 0;
        while (!found && *dir) {
            size_t len = strcspn(dir, ":");
            snprintf(candidate, sizeof(candidate), "%.*s/%s", (int)len, len ? dir : ".", name);
            found =
                access(candidate, X_OK) == 0 && stat(candidate, &sb) == 0 && S_ISREG(sb.st_mode);
            dir += len + (dir[len] == ':');
        }
        if (!found) {
            crmpi_log_error("cannot find '%s' in PATH", name);
            return CRMPI_ERR_NOT_FOUND;
        }
        char resolved[PATH_MAX];
        if (realpath(candidate, resolved)) {
            snprintf(candidate, sizeof(candidate), "%s", resolved);
        }
    }
    if (stat(candidate, &sb) < 0 || !S_ISREG(sb.st_mode)) {
        crmpi_log_error("cannot run '%s': not a regular file", name);
        return CRMPI_ERR_NOT_FOUND;
    }
    if (access(candidate, X_OK) < 0) {
        crmpi_log_error("cannot run '%s': %s", name, strerror(errno));
        return CRMPI_ERR_NOT_FOUND;
    }
    *path_out = strdup(candidate);
    return *path_out ? CRMPI_OK : CRMPI_ERR_OUT_OF_RESOURCE;
}

/* crmpi-agent: the plm_local_agent parameter, else the one installed beside mpirun. */
static int mpirun_find_agent(char **path_out)
{
    const char *configured = NULL;
    char self[PATH_MAX], path[PATH_MAX];

    if (crmpi_param_get_string("plm_local_agent", &configured) == CRMPI_OK && configured &&
        *configured) {
        snprintf(path, sizeof(path), "%s", configured);
    } else {
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n < 0) {
            crmpi_log_error("cannot find mpirun's own path: %s", strerror(errno));
            return CRMPI_ERR_NOT_FOUND;
        }
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        *slash = '\0';
        if ((size_t)snprintf(path, sizeof(path), "%s/crmpi-agent", self) >= sizeof(path)) {
            crmpi_log_error("mpirun's directory %s is too long", self);
            return CRMPI_ERR_NOT_FOUND;
        }
    }
    if (access(path, X_OK) < 0) {
        crmpi_log_error("cannot run the agent %s: %s (set plm_local_agent)", path, strerror(errno));
        return CRMPI_ERR_NOT_FOUND;
    }
    *path_out = strdup(path);
    return *path_out ? CRMPI_OK : CRMPI_ERR_OUT_OF_RESOURCE;
}

static int mpirun_report_pid(const mpirun_options_t *opts, uint64_t jobid)
{
    if (opts->verbose) {
        crmpi_log_info("jobid %llu", (unsigned long long)jobid);
    }
    if (!opts->report_pid) {
        return CRMPI_OK;
    }
    if (strcmp(opts->report_pid, "-") == 0 || strcmp(opts->report_pid, "+") == 0) {
        FILE *out = opts->report_pid[0] == '-' ? stdout : stderr;
        fprintf(out, "jobid %llu\n", (unsigned long long)jobid);
        fflush(out);
        return CRMPI_OK;
    }
    FILE *file = fopen(opts->report_pid, "w");
    if (!file || fprintf(file, "%llu\n", (unsigned long long)jobid) < 0 || fclose(file) != 0) {
        crmpi_log_error("--report-pid: cannot write %s: %s", opts->report_pid, strerror(errno));
        return CRMPI_ERR_IO;
    }
    return CRMPI_OK;
}

static int mpirun_snapc_send(void *arg, int rank, crmpi_ctl_type_t type, uint32_t seq,
                             const crmpi_buf_t *payload)
{
    mpirun_state_t *st = arg;
    int fd = st->job.agents[rank].ctl_fd;

    if (fd < 0)
        return CRMPI_ERR_PEER_GONE;
    return crmpi_ctl_send(fd, type, seq, CRMPI_OK, payload ? payload->data : NULL,
                          payload ? payload->len : 0);
}

/* ompi-checkpoint --term: the images are written; the job ends, successfully. */
static void mpirun_snapc_terminate(void *arg)
{
    mpirun_state_t *st = arg;

    crmpi_log_info("job %llu checkpointed; ending it as ompi-checkpoint --term asked",
                   (unsigned long long)st->job.jobid);
    mpirun_teardown(st, SIGTERM);
}

/* What a restart needs to launch the job again, for each snapshot's manifest. */
static void mpirun_snapc_manifest(void *arg, crmpi_filem_manifest_t *manifest)
{
    mpirun_state_t *st = arg;
    const mpirun_options_t *opts = st->job.opts;
    static const char *const map_by[] = {"slot", "core", "socket", "numa", "node"};
    static const char *const bind_to[] = {"none", "core", "socket", "numa"};
    char np[16];

    crmpi_filem_manifest_argv_set(manifest, opts->argc, opts->argv);
    crmpi_filem_kv_list_add(&manifest->launch, "program", st->job.program);
    snprintf(np, sizeof(np), "%d", st->job.map.np);
    crmpi_filem_kv_list_add(&manifest->launch, "np", np);
    crmpi_filem_kv_list_add(&manifest->launch, "map-by", map_by[opts->map_by]);
    crmpi_filem_kv_list_add(&manifest->launch, "bind-to", bind_to[opts->bind_to]);
    for (size_t m = 0; m < opts->num_mca; m++)
        crmpi_filem_kv_list_add(&manifest->mca, opts->mca_names[m], opts->mca_values[m]);
}

/* The global checkpoint coordinator; with --with-ft cr the ranks run their C/R thread. */
static int mpirun_snapc_create(mpirun_state_t *st, const mpirun_options_t *opts)
{
    crmpi_snapc_global_params_t params = {
        .np = st->job.map.np,
        .jobid = st->job.jobid,
        .program = st->job.program,
        .enabled = opts->with_ft_cr,
        .send_fn = mpirun_snapc_send,
        .terminate_fn = mpirun_snapc_terminate,
        .manifest_fn = mpirun_snapc_manifest,
        .arg = st,
    };
    char *global_dir = NULL, *jobdir = NULL;
    int64_t timeout_s = 0;
    int rc;

    if (opts->with_ft_cr) {
        /* The ranks learn it through the environment, like every --mca override. */
        if (crmpi_param_set_override("ft_cr_enable", "true") != CRMPI_OK ||
            crmpi_filem_base_global_dir(&global_dir) != CRMPI_OK ||
            crmpi_filem_base_keep(&params.keep) != CRMPI_OK ||
            crmpi_filem_jobdir_path(global_dir, st->job.jobid, &jobdir) != CRMPI_OK) {
            free(global_dir);
            return CRMPI_ERR_BAD_PARAM;
        }
    }
    crmpi_param_get_int("snapc_base_timeout", &timeout_s);
    params.jobdir = jobdir;
    params.timeout_s = (int)timeout_s;
    rc = crmpi_snapc_global_create(&params, &st->snapc);
    if (rc != CRMPI_OK)
        crmpi_log_error("out of memory for the checkpoint coordinator");
    free(global_dir);
    free(jobdir);
    return rc;
}

/* --restore: the snapshot's rank count is the job's (a restart cannot change it). */
static int mpirun_restore_check(mpirun_options_t *opts)
{
    char problem[CRMPI_FILEM_PROBLEM_MAX];
    crmpi_filem_manifest_t *manifest;
    int rc = crmpi_filem_manifest_read(opts->restore, false, &manifest, problem);

    if (rc != CRMPI_OK) {
        crmpi_log_error("--restore %s: %s", opts->restore, problem);
        return rc;
    }
    if (opts->np && (size_t)opts->np != manifest->num_ranks) {
        crmpi_log_error("--restore %s: the snapshot has %zu ranks and a restart keeps them all; "
                        "-np %d asks for %d",
                        opts->restore, manifest->num_ranks, opts->np, opts->np);
        rc = CRMPI_ERR_BAD_PARAM;
    } else {
        opts->np = (int)manifest->num_ranks;
    }
    crmpi_filem_manifest_destroy(manifest);
    return rc;
}

static int mpirun_prepare(mpirun_state_t *st, mpirun_options_t *opts)
{
    char err[512], hostname[256];
    hwloc_topology_t topo;
    int rc;

    for (size_t m = 0; m < opts->num_mca; m++) {
        crmpi_param_set_override(opts->mca_names[m], opts->mca_values[m]);
    }
    crmpi_param_warn_unknown("mpirun");
    if (crmpi_param_get_int("plm_local_kill_grace", &st->kill_grace_ms) != CRMPI_OK ||
        st->kill_grace_ms < 0) {
        st->kill_grace_ms = 2000;
    }
    if (opts->hostfile && mpirun_hostfile_read(opts, opts->hostfile, err, sizeof(err))) {
        crmpi_log_error("%s", err);
        return CRMPI_ERR_BAD_PARAM;
    }
    if (opts->restore && (rc = mpirun_restore_check(opts)) != CRMPI_OK) {
        return rc;
    }
    if ((rc = mpirun_resolve_program(opts->argv[0], &st->job.program)) != CRMPI_OK ||
        (rc = mpirun_find_agent(&st->job.agent_path)) != CRMPI_OK) {
        return rc;
    }
    if (gethostname(hostname, sizeof(hostname)) < 0) {
        snprintf(hostname, sizeof(hostname), "localhost");
    }
    hostname[sizeof(hostname) - 1] = '\0';
    if (hwloc_topology_init(&topo) < 0 || hwloc_topology_load(topo) < 0) {
        crmpi_log_error("hwloc cannot read this node's topology: %s", strerror(errno));
        return CRMPI_ERROR;
    }
    rc = mpirun_map_compute(opts, topo, hostname, &st->job.map, err, sizeof(err));
    hwloc_topology_destroy(topo);
    if (rc != CRMPI_OK) {
        crmpi_log_error("%s", err);
        return rc;
    }
    st->job.agents = calloc((size_t)st->job.map.np, sizeof(*st->job.agents));
    if (!st->job.agents) {
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    for (int rank = 0; rank < st->job.map.np; rank++) {
        st->job.agents[rank].out_fd = st->job.agents[rank].err_fd = -1;
        st->job.agents[rank].ctl_fd = -1;
    }
    return mpirun_snapc_create(st, opts);
}

int main(int argc, char **argv)
{
    mpirun_state_t st;
    mpirun_options_t opts;
    const crmpi_component_t *plm_component;
    char err[512];
    sigset_t mask;
    int rc;

    memset(&st, 0, sizeof(st));
    st.listen_fd = st.signal_fd = -1;
    crmpi_log_set_who("mpirun");
    if (crmpi_catalog_register_all() != CRMPI_OK) {
        return 1;
    }
    if (mpirun_options_parse(argc, argv, &opts, err, sizeof(err)) != CRMPI_OK) {
        crmpi_log_error("%s", err);
        return 1;
    }
    if (opts.help) {
        fputs(mpirun_options_usage, stdout);
        mpirun_options_free(&opts);
        return 0;
    }
    if (opts.version) {
        printf("mpirun (crmpi) %s\n", PACKAGE_VERSION);
        mpirun_options_free(&opts);
        return 0;
    }
    st.job.opts = &opts;
    st.job.jobid = (uint64_t)getpid();
    st.exit_code = 0;

    /* Block the signals before any thread exists (PMIx starts one), so that only the
     * signalfd sees them. */
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGCONT);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);
    st.signal_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

    rc = mpirun_prepare(&st, &opts);
    if (rc == CRMPI_OK && st.signal_fd < 0) {
        crmpi_log_error("signalfd: %s", strerror(errno));
        rc = CRMPI_ERROR;
    }
    if (rc == CRMPI_OK) {
        rc = mpirun_session_create(&st.job);
    }
    if (rc == CRMPI_OK) {
        rc = mpirun_listen(&st);
    }
    if (rc == CRMPI_OK && (rc = crmpi_framework_open(&mpirun_plm_framework)) == CRMPI_OK) {
        rc = crmpi_framework_select_one(&mpirun_plm_framework, &plm_component);
        if (rc == CRMPI_OK) {
            st.plm = plm_component->ops;
            crmpi_fw_verbose(&mpirun_plm_framework, 10, "selected component %s",
                             plm_component->info->name);
        }
    }
    if (rc == CRMPI_OK) {
        rc = st.plm->init(&st.job);
    }
    if (rc == CRMPI_OK) {
        rc = mpirun_report_pid(&opts, st.job.jobid);
    }
    if (rc == CRMPI_OK) {
        if (opts.timeout_s) {
            mpirun_ts_after(&st.timeout_at, opts.timeout_s);
        }
        if (opts.verbose) {
            crmpi_log_info("starting %d ranks of %s", st.job.map.np, st.job.program);
        }
        rc = st.plm->launch(&st.job);
        if (rc != CRMPI_OK) {
            mpirun_fail(&st, 1);
            mpirun_teardown(&st, SIGTERM);
        }
        /* Run the loop even after a partial launch, to reap what did start. */
        mpirun_event_loop(&st);
    } else {
        mpirun_fail(&st, 1);
    }
    if (st.plm) {
        st.plm->finalize(&st.job);
    }
    if (st.listen_fd >= 0) {
        close(st.listen_fd);
    }
    mpirun_session_remove(&st.job);
    mpirun_shm_remove(&st.job);
    if (mpirun_plm_framework.is_open) {
        crmpi_framework_close(&mpirun_plm_framework);
    }
    crmpi_snapc_global_destroy(st.snapc);
    mpirun_map_free(&st.job.map);
    free(st.job.agents);
    free(st.job.program);
    free(st.job.agent_path);
    mpirun_options_free(&opts);
    crmpi_param_finalize();
    return st.failed ? st.exit_code : 0;
}
