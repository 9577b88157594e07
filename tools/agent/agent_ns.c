/*
 * agent_ns.c: the rank's pid namespace and its init (see agent_ns.h).
 *
 * The agent has threads (PMIx's progress thread), so the children are created with raw
 * clone system calls and do nothing but system calls until exec: no malloc, no stdio, no
 * locks that another thread might have held at the time of the clone.
 *
 * The init execs the agent's own program again ("--ns-init") before it creates the rank:
 * a clone of the agent would keep the agent's memory, PMIx's shared segments of this job
 * among it, and CRIU would dump those mappings with the init and fail to restore them
 * once the job and its files are gone. After the exec the init maps only the program and
 * its libraries, which a restart node has at the same paths.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_ns.h"
#include "crmpi_status.h"
#include "ctl.h"
#include "log.h"

extern char **environ;

/* The rank's pid inside the namespace, for the init's signal forwarder. */
static volatile pid_t agent_ns_rank_pid;

static void agent_ns_init_forward(int sig)
{
    if (agent_ns_rank_pid > 0) {
        kill(agent_ns_rank_pid, sig);
    }
}

static void agent_ns_write_str(int fd, const char *text)
{
    ssize_t ignored = write(fd, text, strlen(text));
    (void)ignored;
}

/* The rank, between clone3 and exec. */
static void agent_ns_rank_exec(const char *program, char *const argv[], char *const envp[])
{
    sigset_t none;
    /* Without a namespace of its own, nothing else ends the rank with its init. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (int sig = 1; sig < NSIG; sig++) {
        signal(sig, SIG_DFL);
    }
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(program, argv, envp);
    /* One write, so that lines of several ranks failing at once do not interleave. */
    char line[512];
    const char *parts[] = {"crmpi-agent: cannot execute ", program, ": ", strerror(errno), "\n"};
    size_t len = 0;
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        size_t part_len = strlen(parts[i]);
        if (len + part_len >= sizeof(line)) {
            part_len = sizeof(line) - 1 - len;
        }
        memcpy(line + len, parts[i], part_len);
        len += part_len;
    }
    ssize_t ignored = write(2, line, len);
    (void)ignored;
    _exit(127);
}

/* Create the rank with a chosen pid in this (new) namespace, or any pid if refused; any
 * pid at once when `wanted_pid` is 0 (a shared namespace). */
static pid_t agent_ns_clone_rank(pid_t wanted_pid, int *pid_refused_out)
{
    pid_t set_tid[1] = {wanted_pid};
    struct clone_args args;

    *pid_refused_out = 0;
    if (wanted_pid == 0)
        return (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
    memset(&args, 0, sizeof(args));
    args.exit_signal = SIGCHLD;
    args.set_tid = (uint64_t)(uintptr_t)set_tid;
    args.set_tid_size = 1;
    long pid = syscall(SYS_clone3, &args, sizeof(args));
    if (pid >= 0) {
        *pid_refused_out = 0;
        return (pid_t)pid;
    }
    /* Kernels without clone3 or set_tid (or without the privilege for it): any pid. */
    *pid_refused_out = 1;
    return (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
}

/* Move fd to `target` without FD_CLOEXEC, whatever number fd has now. */
static int agent_ns_place_fd(int fd, int target)
{
    int high = fcntl(fd, F_DUPFD, 64);
    return high < 0 || dup2(high, target) < 0 ? -1 : 0;
}

/* The init, between clone and exec: its session, its descriptors, then the exec. */
static __attribute__((noreturn)) void agent_ns_init_exec(const char *self_exe,
                                                         char *const init_argv[],
                                                         char *const envp[], int in_fd, int out_fd,
                                                         int err_fd, int ctl_fd)
{
    setsid();
    /* The namespace must not outlive its agent, whoever kills the agent and how. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (agent_ns_place_fd(in_fd, 0) < 0 || agent_ns_place_fd(out_fd, 1) < 0 ||
        agent_ns_place_fd(err_fd, 2) < 0 || agent_ns_place_fd(ctl_fd, CRMPI_AGENT_NS_CTL_FD) < 0) {
        _exit(126);
    }
    syscall(SYS_close_range, CRMPI_AGENT_NS_CTL_FD + 1, ~0U, 0);
    execve(self_exe, init_argv, envp);
    agent_ns_write_str(2, "crmpi-agent: cannot execute the rank's init\n");
    _exit(126);
}

void crmpi_agent_ns_init_run(int argc, char **argv)
{
    struct sigaction forward = {.sa_handler = agent_ns_init_forward};
    sigset_t none;
    int status = 0, pid_refused;
    pid_t rank, wanted_pid;

    /* argv: crmpi-agent --ns-init PID -- PROGRAM [ARG]... */
    if (argc < 5 || strcmp(argv[3], "--") != 0) {
        agent_ns_write_str(2, "crmpi-agent: --ns-init is for the agent itself\n");
        _exit(126);
    }
    wanted_pid = (pid_t)strtol(argv[2], NULL, 10);
    if (getpid() != 1) {
        /* The node's pid namespace (an ordinary user may not make one): the rank's children
         * are still reaped here, and no new privilege comes into the tree, which is what
         * lets an unprivileged CRIU restore it (it cannot trim capability bounding sets). */
        prctl(PR_SET_CHILD_SUBREAPER, 1);
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        wanted_pid = 0;
    }
    sigemptyset(&forward.sa_mask);
    forward.sa_flags = SA_RESTART;
    /* The forwarded signals stay blocked until the rank exists and its pid is recorded: one
     * that arrived earlier would run the forwarder with nowhere to send it, and be lost
     * (an MPI_Abort of one rank can end the job while a peer rank is still being created).
     * The rank resets them to their default action before unblocking them. */
    int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGQUIT, SIGCONT};
    sigset_t blocked;
    sigemptyset(&blocked);
    for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++) {
        sigaddset(&blocked, forwarded[i]);
    }
    sigprocmask(SIG_BLOCK, &blocked, NULL);
    for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++) {
        sigaction(forwarded[i], &forward, NULL);
    }

    rank = agent_ns_clone_rank(wanted_pid, &pid_refused);
    if (rank == 0) {
        agent_ns_rank_exec(argv[4], argv + 4, environ);
    }
    if (rank < 0) {
        agent_ns_write_str(2, "crmpi-agent: cannot create the rank process\n");
        _exit(126);
    }
    agent_ns_rank_pid = rank;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (pid_refused) {
        agent_ns_write_str(2, "crmpi-agent: warning: the kernel refused the rank's chosen pid; "
                              "it has the next free pid of its namespace\n");
    }
    /* Reap everything (the rank's own children are reparented here) until the rank ends. */
    for (;;) {
        int child_status;
        pid_t pid = wait4(-1, &child_status, 0, NULL);
        if (pid < 0 && errno == EINTR) {
            continue;
        }
        if (pid < 0) {
            break;
        }
        if (pid == rank) {
            status = child_status;
            break;
        }
    }
    int32_t raw = status;
    crmpi_ctl_send(CRMPI_AGENT_NS_CTL_FD, CRMPI_CTL_INIT_EXIT, 0, CRMPI_OK, &raw, sizeof(raw));
    _exit(0);
}

int crmpi_agent_ns_fds_open(crmpi_agent_ns_fds_t *fds)
{
    int in_pipe[2], out_pipe[2], err_pipe[2], ctl[2];

    if (pipe2(in_pipe, O_CLOEXEC) < 0) {
        goto err_report;
    }
    if (pipe2(out_pipe, O_CLOEXEC) < 0) {
        goto err_close_in;
    }
    if (pipe2(err_pipe, O_CLOEXEC) < 0) {
        goto err_close_out;
    }
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) < 0) {
        goto err_close_err;
    }
    *fds = (crmpi_agent_ns_fds_t){
        .rank_end = {in_pipe[0], out_pipe[1], err_pipe[1], ctl[1]},
        .stdin_write = in_pipe[1],
        .out_fd = out_pipe[0],
        .err_fd = err_pipe[0],
        .ctl_fd = ctl[0],
    };
    return CRMPI_OK;

err_close_err:
    close(err_pipe[0]);
    close(err_pipe[1]);
err_close_out:
    close(out_pipe[0]);
    close(out_pipe[1]);
err_close_in:
    close(in_pipe[0]);
    close(in_pipe[1]);
err_report:
    crmpi_log_error("cannot create the rank's pipes and control socket: %s", strerror(errno));
    return errno == ENOMEM || errno == EMFILE ? CRMPI_ERR_OUT_OF_RESOURCE : CRMPI_ERR_IO;
}

void crmpi_agent_ns_fds_handover(crmpi_agent_ns_fds_t *fds, crmpi_agent_ns_child_t *child)
{
    for (int i = 0; i < 4; i++) {
        close(fds->rank_end[i]);
    }
    close(fds->stdin_write);
    child->ctl_fd = fds->ctl_fd;
    child->out_fd = fds->out_fd;
    child->err_fd = fds->err_fd;
}

void crmpi_agent_ns_fds_close(crmpi_agent_ns_fds_t *fds)
{
    crmpi_agent_ns_child_t unused;

    crmpi_agent_ns_fds_handover(fds, &unused);
    close(fds->ctl_fd);
    close(fds->out_fd);
    close(fds->err_fd);
}

int crmpi_agent_ns_start(const char *program, char *const argv[], char *const envp[],
                         pid_t wanted_pid, crmpi_agent_ns_child_t *child_out)
{
    char self_exe[4096], pid_text[16];
    crmpi_agent_ns_fds_t fds;
    char **init_argv;
    size_t argc = 0;
    int rc;

    /* Everything the init needs is prepared here: it may not allocate before its exec. */
    ssize_t len = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
    if (len < 0) {
        crmpi_log_error("cannot find the agent's own program: %s", strerror(errno));
        return CRMPI_ERR_IO;
    }
    self_exe[len] = '\0';
    while (argv[argc]) {
        argc++;
    }
    init_argv = calloc(argc + 5, sizeof(char *));
    if (!init_argv) {
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    snprintf(pid_text, sizeof(pid_text), "%d", (int)wanted_pid);
    init_argv[0] = self_exe;
    init_argv[1] = "--ns-init";
    init_argv[2] = pid_text;
    init_argv[3] = "--";
    init_argv[4] = (char *)program;
    for (size_t a = 1; a < argc; a++) {
        init_argv[4 + a] = argv[a];
    }
    rc = crmpi_agent_ns_fds_open(&fds);
    if (rc != CRMPI_OK) {
        free(init_argv);
        return rc;
    }
    long pid = syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, 0, 0, 0, 0);
    if (pid < 0 && errno == EPERM) {
        /* An ordinary user: the rank and its init live in the node's pid namespace. */
        pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
        wanted_pid = 0;
    }
    if (pid == 0) {
        agent_ns_init_exec(self_exe, init_argv, envp, fds.rank_end[0], fds.rank_end[1],
                           fds.rank_end[2], fds.rank_end[3]);
    }
    free(init_argv);
    if (pid < 0) {
        crmpi_log_error("cannot start the rank's namespace: %s", strerror(errno));
        rc = errno == ENOMEM ? CRMPI_ERR_OUT_OF_RESOURCE : CRMPI_ERR_IO;
        crmpi_agent_ns_fds_close(&fds);
        return rc;
    }
    child_out->init_pid = (pid_t)pid;
    child_out->rank_pid = wanted_pid;
    crmpi_agent_ns_fds_handover(&fds, child_out);
    return CRMPI_OK;
}
