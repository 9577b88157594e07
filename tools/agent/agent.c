/*
 * agent.c: crmpi-agent, one per rank (agent.h says which file does what).
 *
 *   crmpi-agent [--cpuset LIST [--membind]] [--restore SEQDIR] [--output ctl] -- PROGRAM
 *   [ARG]...
 *
 *   PMIx_Init (client of the launcher's server: mpirun's own, or Open MPI's daemon)
 *     -> job facts from PMIx -> connect to mpirun (CRMPI_HNP_URI: a unix socket, or TCP
 *        from another node)
 *     -> bind (hwloc) -> start the rank in its own pid namespace (agent_ns.c), or restore
 *        it (agent_restore.c)
 *     -> AGENT_HELLO with the job's key (CRMPI_JOB_KEY): once the rank runs, or, when
 *        restoring, right after connecting
 *     -> serve the rank's control requests (job facts, modex, fence, abort),
 *        forward its stdout/stderr (to the agent's own, or to mpirun as AGENT_OUTPUT with
 *        --output ctl), forward signals to it (its own, or mpirun's AGENT_SIGNAL)
 *     -> AGENT_EXIT with the rank's wait status -> PMIx_Finalize -> exit
 *
 * The agent is started by a launcher, not by users; it is not installed as a user command
 * but beside mpirun.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <hwloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent.h"
#include "agent_crs.h"
#include "component.h"
#include "crmpi_status.h"
#include "fault.h"
#include "log.h"
#include "param.h"

/*
 * Ending signals come through a signalfd served by the main loop: they are blocked before
 * PMIx starts its thread, so none is delivered to a thread that cannot act on it (a signal
 * caught by PMIx's thread would leave the main loop asleep). While the rank lives, each one
 * goes to its init, which passes it to the rank (SIGHUP as SIGTERM, the batch-job meaning);
 * after the rank ended, one means that mpirun releases this agent.
 */
static void agent_signal(agent_state_t *st, int sig)
{
    st->signals_received++;
    if (sig == SIGKILL) {
        /* mpirun's last word to an agent that did not end: the rank's namespace dies with
         * its init, and the agent with nothing left to wait for. */
        if (st->init_alive)
            kill(st->child.init_pid, SIGKILL);
        _exit(128 + SIGKILL);
    }
    if (st->init_alive) {
        kill(st->child.init_pid, sig == SIGHUP ? SIGTERM : sig);
        crmpi_snapc_local_thaw(&st->snapc); /* stopped by --stop: let it act on it */
    }
}

static void agent_handle_signals(agent_state_t *st)
{
    struct signalfd_siginfo si;
    while (read(st->signal_fd, &si, sizeof(si)) == sizeof(si))
        agent_signal(st, (int)si.ssi_signo);
}

/* "tcp:ADDRESS:PORT" (an IPv6 address in brackets): a connected TCP socket, or -1. */
static int agent_connect_tcp(const char *spec)
{
    char host[256];
    const char *colon = strrchr(spec, ':');
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *found = NULL;
    size_t host_len;
    int fd = -1, one = 1, rc;

    if (!colon || colon == spec) {
        errno = EINVAL;
        return -1;
    }
    host_len = (size_t)(colon - spec);
    if (spec[0] == '[' && host_len >= 2 && spec[host_len - 1] == ']') {
        spec++;
        host_len -= 2;
    }
    if (host_len >= sizeof(host)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(host, spec, host_len);
    host[host_len] = '\0';
    rc = getaddrinfo(host, colon + 1, &hints, &found);
    if (rc != 0) {
        crmpi_log_error("mpirun's address %s: %s", host, gai_strerror(rc));
        errno = EINVAL;
        return -1;
    }
    fd = socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, found->ai_addr, found->ai_addrlen) < 0) {
        close(fd);
        fd = -1;
    }
    freeaddrinfo(found);
    /* Each step of a checkpoint is a small message that the next step waits for; and a
     * mpirun whose node vanished sends no end of file: keepalive finds it out. */
    if (fd >= 0) {
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        crmpi_ctl_tcp_keepalive(fd);
    }
    return fd;
}

static int agent_connect_hnp(agent_state_t *st)
{
    const char *uri = getenv("CRMPI_HNP_URI");
    struct sockaddr_un addr = {.sun_family = AF_UNIX};

    if (uri && strncmp(uri, "tcp:", 4) == 0) {
        st->hnp_fd = agent_connect_tcp(uri + 4);
        if (st->hnp_fd < 0) {
            crmpi_log_error("cannot connect to mpirun at %s: %s", uri + 4, strerror(errno));
            return CRMPI_ERR_IO;
        }
        return CRMPI_OK;
    }
    if (!uri || strncmp(uri, "unix:", 5) != 0 || strlen(uri + 5) >= sizeof(addr.sun_path)) {
        crmpi_log_error("CRMPI_HNP_URI is missing or neither a unix: nor a tcp: URI; the agent "
                        "is started by mpirun, not by hand");
        return CRMPI_ERR_BAD_PARAM;
    }
    strcpy(addr.sun_path, uri + 5);
    st->hnp_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (st->hnp_fd < 0 || connect(st->hnp_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
        crmpi_log_error("cannot connect to mpirun at %s: %s", addr.sun_path, strerror(errno));
        return CRMPI_ERR_IO;
    }
    return CRMPI_OK;
}

int agent_send_hnp(agent_state_t *st, crmpi_ctl_type_t type, crmpi_buf_t *buf)
{
    int rc = buf->failed ? CRMPI_ERR_OUT_OF_RESOURCE
                         : crmpi_ctl_send(st->hnp_fd, type, 0, CRMPI_OK, buf->data, buf->len);
    crmpi_buf_free(buf);
    return rc;
}

/* AGENT_HELLO: this agent's rank, its pid and its rank's (0 while a restore has not made
 * the rank yet), its node, and the job's key. */
static int agent_hello(agent_state_t *st)
{
    const char *key = getenv("CRMPI_JOB_KEY");
    crmpi_buf_t buf;

    crmpi_fault_pause("agent_hello_pause");
    crmpi_buf_init(&buf);
    crmpi_buf_put_u32(&buf, st->info.rank);
    crmpi_buf_put_u32(&buf, (uint32_t)getpid());
    crmpi_buf_put_u32(&buf, (uint32_t)st->child.rank_pid);
    crmpi_buf_put_str(&buf, st->info.nodename);
    crmpi_buf_put_str(&buf, key ? key : "");
    return agent_send_hnp(st, CRMPI_CTL_AGENT_HELLO, &buf);
}

static int agent_bind(const char *cpuset_list, int membind)
{
    hwloc_topology_t topo;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    int rc = CRMPI_OK;

    if (!set || hwloc_bitmap_list_sscanf(set, cpuset_list) < 0) {
        crmpi_log_error("--cpuset: '%s' is not a CPU list", cpuset_list);
        hwloc_bitmap_free(set);
        return CRMPI_ERR_BAD_PARAM;
    }
    if (hwloc_topology_init(&topo) < 0 || hwloc_topology_load(topo) < 0) {
        crmpi_log_error("hwloc cannot read this node's topology: %s", strerror(errno));
        hwloc_bitmap_free(set);
        return CRMPI_ERROR;
    }
    if (hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) < 0) {
        crmpi_log_error("cannot bind to CPUs %s: %s", cpuset_list, strerror(errno));
        rc = CRMPI_ERR_IO;
    } else if (membind &&
               hwloc_set_membind(topo, set, HWLOC_MEMBIND_BIND, HWLOC_MEMBIND_PROCESS) < 0 &&
               errno != ENOSYS) {
        crmpi_log_error("cannot bind memory near CPUs %s: %s", cpuset_list, strerror(errno));
        rc = CRMPI_ERR_IO;
    }
    hwloc_topology_destroy(topo);
    hwloc_bitmap_free(set);
    return rc;
}

/* What the rank wrote on `stream` (1 or 2): to the agent's own stdout or stderr, or to
 * mpirun with --output ctl. */
static void agent_forward_output(agent_state_t *st, int *fd, int stream)
{
    char data[8192];
    ssize_t n = read(*fd, data, sizeof(data));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
        return;
    }
    if (n <= 0) {
        close(*fd);
        *fd = -1;
        return;
    }
    if (st->output_ctl) {
        crmpi_buf_t buf;

        crmpi_buf_init(&buf);
        crmpi_buf_put_u32(&buf, (uint32_t)stream);
        crmpi_buf_put_bytes(&buf, data, (size_t)n);
        agent_send_hnp(st, CRMPI_CTL_AGENT_OUTPUT, &buf); /* a failure: hnp_fd says so */
        return;
    }
    for (ssize_t done = 0; done < n;) {
        ssize_t w = write(stream, data + done, (size_t)(n - done));
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w < 0) {
            return; /* mpirun is gone; hnp_fd tells us too */
        }
        done += w;
    }
}

/* A message from mpirun: a signal it passes on (plm.h), or a step of a checkpoint. */
static void agent_from_hnp(agent_state_t *st, crmpi_ctl_msg_t *msg)
{
    crmpi_buf_t buf;
    int32_t sig;

    if (msg->hdr.type != CRMPI_CTL_AGENT_SIGNAL) {
        crmpi_snapc_local_from_hnp(&st->snapc, msg);
        return;
    }
    crmpi_buf_init_read(&buf, msg->payload, msg->hdr.len);
    crmpi_buf_get_i32(&buf, &sig);
    if (crmpi_buf_get_done(&buf) == CRMPI_OK && sig > 0 && sig < NSIG) {
        agent_signal(st, sig);
        st->snapc.ending = true;
    }
}

static void agent_run(agent_state_t *st)
{
    int ctl_open = 1;
    /* After the rank's end, images of a checkpoint still wait for mpirun's CKPT_STORE and
     * their copy, unless the agent is told to end: a copy still running is then abandoned
     * (snapc_local.h). */
    while (ctl_open || st->child.out_fd >= 0 || st->child.err_fd >= 0 ||
           (st->snapc.images_pending && !st->snapc.ending)) {
        struct pollfd fds[7] = {
            {.fd = st->hnp_fd, .events = POLLIN},
            {.fd = ctl_open ? st->child.ctl_fd : -1, .events = POLLIN},
            {.fd = st->child.out_fd, .events = POLLIN},
            {.fd = st->child.err_fd, .events = POLLIN},
            {.fd = st->fence_efd, .events = POLLIN},
            {.fd = st->signal_fd, .events = POLLIN},
            {.fd = crmpi_snapc_local_copy_fd(&st->snapc), .events = POLLIN},
        };
        if (poll(fds, 7, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            crmpi_log_error("poll: %s", strerror(errno));
            break;
        }
        if (fds[0].revents) {
            crmpi_ctl_msg_t msg;

            if (crmpi_ctl_recv(st->hnp_fd, &msg) == CRMPI_OK) {
                agent_from_hnp(st, &msg);
                crmpi_ctl_msg_free(&msg);
            } else {
                /* mpirun closed its end: the job is over, whatever the rank is doing. */
                crmpi_log_error("lost the connection to mpirun; ending rank %u", st->info.rank);
                kill(st->child.init_pid, SIGKILL);
                break;
            }
        }
        if (fds[1].revents && agent_serve_rank(st) == CRMPI_ERR_PEER_GONE) {
            ctl_open = 0;
        }
        if (fds[2].revents) {
            agent_forward_output(st, &st->child.out_fd, 1);
        }
        if (fds[3].revents) {
            agent_forward_output(st, &st->child.err_fd, 2);
        }
        /* Signals first: a fence that fails because the job is being torn down must be
         * seen as such (see agent_fence_reply). */
        if (fds[5].revents) {
            agent_handle_signals(st);
            st->snapc.ending = st->signals_received > 0;
        }
        if (fds[4].revents) {
            agent_fence_reply(st);
        }
        if (fds[6].revents) {
            crmpi_snapc_local_copy_done(&st->snapc); /* the copy to stable storage is over */
        }
    }
}

static void agent_usage(FILE *out)
{
    fputs("Usage: crmpi-agent [--cpuset LIST [--membind]] [--restore SEQDIR] [--output ctl] --\n"
          "       PROGRAM [ARG]...\n"
          "Run one rank of a crmpi job in its own pid namespace. Started by mpirun (or by\n"
          "ompi-restart), never by hand: it needs the PMIx environment and CRMPI_HNP_URI.\n"
          "  --cpuset LIST    bind the rank to these CPUs (hwloc list syntax, e.g. 0-1)\n"
          "  --membind        also bind its memory near those CPUs\n"
          "  --restore SEQDIR restore the rank from sequence directory SEQDIR of a snapshot\n"
          "                   (its rank.<r>/) instead of starting PROGRAM\n"
          "  --output ctl     send the rank's output to mpirun over the control connection\n"
          "                   (an agent on another node than mpirun's)\n",
          out);
}

/* The agent's command line. */
typedef struct agent_options {
    const char *cpuset;      /* --cpuset LIST, or NULL */
    int membind;             /* --membind */
    const char *restore_dir; /* --restore SEQDIR, or NULL */
    int output_ctl;          /* --output ctl: the rank's output goes to mpirun as messages */
    char **program_argv;     /* PROGRAM [ARG]..., NULL-terminated (the rest of argv) */
} agent_options_t;

/* @return -1 to go on, or the exit code (usage printed) */
static int agent_options_parse(int argc, char **argv, agent_options_t *opts_out)
{
    agent_options_t opts = {0};
    int argi;

    for (argi = 1; argi < argc; argi++) {
        if (strcmp(argv[argi], "--") == 0) {
            argi++;
            break;
        } else if (strcmp(argv[argi], "--cpuset") == 0 && argi + 1 < argc) {
            opts.cpuset = argv[++argi];
        } else if (strcmp(argv[argi], "--membind") == 0) {
            opts.membind = 1;
        } else if (strcmp(argv[argi], "--restore") == 0 && argi + 1 < argc) {
            opts.restore_dir = argv[++argi];
        } else if (strcmp(argv[argi], "--output") == 0 && argi + 1 < argc &&
                   strcmp(argv[argi + 1], "ctl") == 0) {
            opts.output_ctl = 1;
            argi++;
        } else if (strcmp(argv[argi], "--help") == 0 || strcmp(argv[argi], "-h") == 0) {
            agent_usage(stdout);
            return 0;
        } else {
            crmpi_log_error("unknown option '%s'", argv[argi]);
            agent_usage(stderr);
            return 2;
        }
    }
    if (argi >= argc) {
        agent_usage(stderr);
        return 2;
    }
    opts.program_argv = argv + argi;
    *opts_out = opts;
    return -1;
}

/* The ending signals, blocked before PMIx_Init (its thread inherits the mask: see
 * agent_handle_signals) and read through a signalfd; and the fences' eventfd. */
static int agent_fds_open(agent_state_t *st)
{
    sigset_t ending;

    sigemptyset(&ending);
    sigaddset(&ending, SIGTERM);
    sigaddset(&ending, SIGINT);
    sigaddset(&ending, SIGHUP);
    sigprocmask(SIG_BLOCK, &ending, NULL);
    st->signal_fd = signalfd(-1, &ending, SFD_CLOEXEC | SFD_NONBLOCK);
    st->fence_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (st->fence_efd < 0 || st->signal_fd < 0) {
        crmpi_log_error("eventfd/signalfd: %s", strerror(errno));
        return CRMPI_ERR_IO;
    }
    return CRMPI_OK;
}

/* From the job facts to a running rank that mpirun knows about. */
static int agent_start(agent_state_t *st, const agent_options_t *opts)
{
    char **rank_env = NULL;
    int rc = agent_job_facts(st);

    if (rc == CRMPI_OK)
        rc = agent_connect_hnp(st);
    /* A restoring agent says who it is at once: a restore can take long (a large job's
     * restores share the node's cores), and mpirun keeps only a few connections that have
     * not spoken, for a limited time (MPIRUN_PENDING_MAX, MPIRUN_PENDING_S). mpirun counts
     * its rank as started once the rank's restart is done. */
    if (rc == CRMPI_OK && opts->restore_dir)
        rc = agent_hello(st);
    if (rc == CRMPI_OK && opts->cpuset)
        rc = agent_bind(opts->cpuset, opts->membind);
    if (rc == CRMPI_OK && !(rank_env = agent_rank_env()))
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
    if (rc != CRMPI_OK)
        return rc;
    signal(SIGPIPE, SIG_IGN);
    agent_crs_init(&st->snapc);
    /* The rank's pid inside its namespace: the agent's own pid, which no other rank of this
     * node has while the agent lives (rather than pid 2 in every namespace). A restored rank
     * keeps the pid it had. */
    const char *app_restart = NULL;
    crmpi_param_get_string("snapc_base_app_restart", &app_restart);
    if (opts->restore_dir) {
        crmpi_fault_pause("agent_restore_pause");
        rc = agent_restore(st, opts->restore_dir, opts->cpuset);
    } else if (app_restart && *app_restart)
        rc = agent_app_restore(st, app_restart); /* then started as at launch */
    if (rc == CRMPI_OK && !opts->restore_dir)
        rc = crmpi_agent_ns_start(opts->program_argv[0], opts->program_argv, rank_env, getpid(),
                                  &st->child);
    free(rank_env);
    if (rc != CRMPI_OK)
        return rc;
    st->init_alive = 1;
    st->snapc.hnp_fd = st->hnp_fd;
    st->snapc.rank_fd = st->child.ctl_fd;
    st->snapc.rank = (int)st->info.rank;
    st->snapc.init_pid = st->child.init_pid;
    st->snapc.local_base = st->info.session_dir;
    return opts->restore_dir ? agent_restart_rank(st) : agent_hello(st);
}

/* The rank is gone: report its wait status to mpirun, then, after a failure, stay until
 * mpirun's teardown. */
static void agent_report_exit(agent_state_t *st)
{
    int status, rank_status;
    crmpi_buf_t out;

    while (waitpid(st->child.init_pid, &status, 0) < 0 && errno == EINTR) {
    }
    st->init_alive = 0;
    /* Without a report from the init, the init itself was killed (SIGKILL from outside,
     * or its namespace torn down): the rank died the same way. */
    rank_status =
        st->have_rank_status ? st->rank_status : (WIFSIGNALED(status) ? WTERMSIG(status) : status);
    crmpi_buf_init(&out);
    crmpi_buf_put_u32(&out, st->info.rank);
    crmpi_buf_put_i32(&out, rank_status);
    agent_send_hnp(st, CRMPI_CTL_AGENT_EXIT, &out);
    if (rank_status == 0 || st->signals_received != 0)
        return;
    /* Stay in the job until mpirun's teardown signal (or its exit): leaving PMIx now would
     * fail the other ranks' pending fence before that signal reaches them, and each would
     * report an error of its own instead of mpirun's one line. */
    while (st->signals_received == 0) {
        struct pollfd fds[2] = {{.fd = st->hnp_fd, .events = POLLIN},
                                {.fd = st->signal_fd, .events = POLLIN}};

        if ((poll(fds, 2, -1) < 0 && errno != EINTR) || fds[0].revents)
            break; /* mpirun closed the connection, or is gone */
        if (fds[1].revents)
            agent_handle_signals(st);
    }
}

/*
 * The rank's shared-memory segment, when the rank ended before it removed the name (the
 * sm BTL names it "crmpi-<jobid>-sm-<rank>" and unlinks it once its peers have attached):
 * mpirun removes the leftovers of its own node (mpirun_session.c), and only the agent is
 * on the others.
 */
static void agent_shm_remove(const agent_state_t *st)
{
    char prefix[64], suffix[32];
    size_t prefix_len, suffix_len;
    struct dirent *entry;
    DIR *dir = opendir("/dev/shm");

    if (!dir)
        return;
    prefix_len =
        (size_t)snprintf(prefix, sizeof(prefix), "crmpi-%llu-", (unsigned long long)st->info.jobid);
    suffix_len = (size_t)snprintf(suffix, sizeof(suffix), "-%u", st->info.rank);
    while ((entry = readdir(dir)) != NULL) {
        size_t len = strlen(entry->d_name);

        if (len > prefix_len + suffix_len && strncmp(entry->d_name, prefix, prefix_len) == 0 &&
            strcmp(entry->d_name + len - suffix_len, suffix) == 0)
            unlinkat(dirfd(dir), entry->d_name, 0);
    }
    closedir(dir);
}

int main(int argc, char **argv)
{
    agent_state_t st;
    agent_options_t opts;
    pmix_status_t prc;
    char who[64];
    int rc;

    if (argc > 1 && strcmp(argv[1], "--ns-init") == 0)
        crmpi_agent_ns_init_run(argc, argv); /* the rank's init (agent_ns.h) */
    memset(&st, 0, sizeof(st));
    st.hnp_fd = -1;
    if (agent_fds_open(&st) != CRMPI_OK)
        return 1;
    crmpi_log_set_who("crmpi-agent");
    rc = agent_options_parse(argc, argv, &opts);
    if (rc >= 0)
        return rc;
    st.output_ctl = opts.output_ctl;
    if (crmpi_catalog_register_all() != CRMPI_OK)
        return 1;
    prc = PMIx_Init(&st.self, NULL, 0);
    if (prc != PMIX_SUCCESS) {
        crmpi_log_error("PMIx_Init: %s (is this agent started by mpirun?)", PMIx_Error_string(prc));
        return 1;
    }
    snprintf(who, sizeof(who), "crmpi-agent[%u]", st.self.rank);
    crmpi_log_set_who(who);

    if (agent_start(&st, &opts) != CRMPI_OK) {
        if (st.child.init_pid > 0) {
            kill(st.child.init_pid, SIGKILL);
            waitpid(st.child.init_pid, NULL, 0);
        }
        PMIx_Finalize(NULL, 0);
        return 1;
    }
    agent_run(&st);
    crmpi_snapc_local_close(&st.snapc);
    agent_report_exit(&st);
    agent_shm_remove(&st);
    close(st.hnp_fd);
    agent_crs_finalize();
    crmpi_rte_job_info_free(&st.info);
    PMIx_Finalize(NULL, 0);
    return 0;
}
