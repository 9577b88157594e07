/*
 * agent.c: crmpi-agent, one per rank (DESIGN section 2).
 *
 *   crmpi-agent [--cpuset LIST [--membind]] -- PROGRAM [ARG]...
 *
 *   PMIx_Init (client of mpirun's server, or of Open MPI's daemons later)
 *     -> job facts from PMIx -> connect to mpirun (CRMPI_HNP_URI), AGENT_HELLO
 *     -> bind (hwloc) -> start the rank in its own pid namespace (agent_ns.c)
 *     -> serve the rank's control requests (job facts, modex, fence, abort),
 *        forward its stdout/stderr, forward signals to it
 *     -> AGENT_EXIT with the rank's wait status -> PMIx_Finalize -> exit
 *
 * The agent is started by a launcher, not by users; it is not installed as a user command
 * but beside mpirun.
 */
#include <errno.h>
#include <hwloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pmix.h>

#include "agent_crs.h"
#include "agent_ns.h"
#include "component.h"
#include "crmpi_status.h"
#include "ctl.h"
#include "log.h"
#include "rte.h"
#include "filem.h"
#include "snapc_local.h"
#include "snapshot.h"
#include "snapshot_manifest.h"
#include "filem_fs.h"

extern char **environ;

/* Prefix of every modex key this library puts into PMIx (keeps clear of "pmix." keys). */
#define AGENT_MODEX_PREFIX "crmpi."

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
} agent_state_t;

/*
 * Ending signals come through a signalfd served by the main loop: they are blocked before
 * PMIx starts its thread, so none is delivered to a thread that cannot act on it (a signal
 * caught by PMIx's thread would leave the main loop asleep). While the rank lives, each one
 * goes to its init, which passes it to the rank (SIGHUP as SIGTERM, the batch-job meaning);
 * after the rank ended, one means that mpirun releases this agent.
 */
static void agent_handle_signals(agent_state_t *st)
{
    struct signalfd_siginfo si;
    while (read(st->signal_fd, &si, sizeof(si)) == sizeof(si)) {
        int sig = (int)si.ssi_signo;
        st->signals_received++;
        if (st->init_alive) {
            kill(st->child.init_pid, sig == SIGHUP ? SIGTERM : sig);
            crmpi_snapc_local_thaw(&st->snapc); /* stopped by --stop: let it act on it */
        }
    }
}

static int agent_pmix_get_u32(const pmix_proc_t *proc, const char *key, uint32_t *value_out)
{
    pmix_value_t *val = NULL;
    pmix_status_t prc = PMIx_Get(proc, key, NULL, 0, &val);
    if (prc != PMIX_SUCCESS) {
        crmpi_log_error("PMIx has no %s: %s", key, PMIx_Error_string(prc));
        return CRMPI_ERR_NOT_FOUND;
    }
    int rc = CRMPI_OK;
    switch (val->type) {
    case PMIX_UINT32: *value_out = val->data.uint32; break;
    case PMIX_UINT16: *value_out = val->data.uint16; break;
    case PMIX_PROC_RANK: *value_out = val->data.rank; break;
    case PMIX_INT: *value_out = (uint32_t)val->data.integer; break;
    default:
        crmpi_log_error("PMIx gave %s with unexpected type %d", key, (int)val->type);
        rc = CRMPI_ERR_PROTO;
    }
    PMIX_VALUE_RELEASE(val);
    return rc;
}

static int agent_job_facts(agent_state_t *st)
{
    pmix_proc_t wildcard;
    pmix_value_t *val = NULL;
    crmpi_rte_job_info_t *info = &st->info;
    const char *session_dir = getenv("CRMPI_SESSION_DIR");
    int rc;

    PMIX_LOAD_PROCID(&wildcard, st->self.nspace, PMIX_RANK_WILDCARD);
    info->rank = st->self.rank;
    if ((rc = agent_pmix_get_u32(&wildcard, PMIX_JOB_SIZE, &info->size)) != CRMPI_OK ||
        (rc = agent_pmix_get_u32(&st->self, PMIX_LOCAL_RANK, &info->local_rank)) != CRMPI_OK ||
        (rc = agent_pmix_get_u32(&wildcard, PMIX_LOCAL_SIZE, &info->local_size)) != CRMPI_OK ||
        (rc = agent_pmix_get_u32(&st->self, PMIX_NODEID, &info->node_id)) != CRMPI_OK ||
        (rc = agent_pmix_get_u32(&wildcard, PMIX_NUM_NODES, &info->num_nodes)) != CRMPI_OK) {
        return rc;
    }
    if (PMIx_Get(&st->self, PMIX_HOSTNAME, NULL, 0, &val) == PMIX_SUCCESS &&
        val->type == PMIX_STRING) {
        snprintf(info->nodename, sizeof(info->nodename), "%s", val->data.string);
    } else if (gethostname(info->nodename, sizeof(info->nodename)) < 0) {
        snprintf(info->nodename, sizeof(info->nodename), "localhost");
    }
    if (val) {
        PMIX_VALUE_RELEASE(val);
    }
    info->node_of_rank = calloc(info->size, sizeof(uint32_t));
    if (!info->node_of_rank) {
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t rank = 0; rank < info->size; rank++) {
        pmix_proc_t peer;
        PMIX_LOAD_PROCID(&peer, st->self.nspace, rank);
        if ((rc = agent_pmix_get_u32(&peer, PMIX_NODEID, &info->node_of_rank[rank])) != CRMPI_OK) {
            return rc;
        }
    }
    const char *jobid = getenv("CRMPI_JOBID");
    info->jobid = jobid ? strtoull(jobid, NULL, 10) : 0;
    snprintf(info->session_dir, sizeof(info->session_dir), "%s", session_dir ? session_dir : "");
    return CRMPI_OK;
}

static int agent_connect_hnp(agent_state_t *st)
{
    const char *uri = getenv("CRMPI_HNP_URI");
    struct sockaddr_un addr = {.sun_family = AF_UNIX};

    if (!uri || strncmp(uri, "unix:", 5) != 0 || strlen(uri + 5) >= sizeof(addr.sun_path)) {
        crmpi_log_error("CRMPI_HNP_URI is missing or not a unix: URI; the agent is started by "
                        "mpirun, not by hand");
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

/* Send `buf` (consumed) to mpirun as a message of `type`. */
static int agent_send_hnp(agent_state_t *st, crmpi_ctl_type_t type, crmpi_buf_t *buf)
{
    int rc = buf->failed ? CRMPI_ERR_OUT_OF_RESOURCE
                         : crmpi_ctl_send(st->hnp_fd, type, 0, CRMPI_OK, buf->data, buf->len);
    crmpi_buf_free(buf);
    return rc;
}

static int agent_hello_hnp(agent_state_t *st)
{
    crmpi_buf_t buf;
    crmpi_buf_init(&buf);
    crmpi_buf_put_u32(&buf, st->info.rank);
    crmpi_buf_put_u32(&buf, (uint32_t)getpid());
    crmpi_buf_put_u32(&buf, (uint32_t)st->child.rank_pid);
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

/* The rank's environment: the agent's, without what belongs to the agent alone (PMIx's
 * variables: the rank never talks to PMIx), plus the control socket's descriptor. */
static char **agent_rank_env(void)
{
    size_t count = 0, n = 0;
    for (char **e = environ; *e; e++) {
        count++;
    }
    char **env = calloc(count + 2, sizeof(char *));
    if (!env) {
        return NULL;
    }
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "PMIX_", 5) == 0 || strncmp(*e, "PMI_", 4) == 0 ||
            strncmp(*e, "CRMPI_HNP_URI=", 14) == 0 || strncmp(*e, "CRMPI_CTL_FD=", 13) == 0) {
            continue;
        }
        env[n++] = *e;
    }
    env[n++] = "CRMPI_CTL_FD=3";
    env[n] = NULL;
    return env;
}

static int agent_reply(agent_state_t *st, uint32_t seq, int status, const crmpi_buf_t *payload)
{
    return crmpi_ctl_send(st->child.ctl_fd, CRMPI_CTL_REPLY, seq, status,
                          payload ? payload->data : NULL, payload ? payload->len : 0);
}

static int agent_modex_key(const char *key, char *full, size_t full_len)
{
    if ((size_t)snprintf(full, full_len, AGENT_MODEX_PREFIX "%s", key) >= full_len ||
        full_len > PMIX_MAX_KEYLEN + 1) {
        return CRMPI_ERR_BAD_PARAM;
    }
    return CRMPI_OK;
}

static int agent_modex_put(crmpi_buf_t *req)
{
    const char *key;
    const void *data;
    size_t len;
    char full[PMIX_MAX_KEYLEN + 1];
    pmix_value_t value;

    crmpi_buf_get_str(req, &key);
    crmpi_buf_get_bytes(req, &data, &len);
    if (crmpi_buf_get_done(req) != CRMPI_OK) {
        return CRMPI_ERR_PROTO;
    }
    if (agent_modex_key(key, full, sizeof(full)) != CRMPI_OK) {
        return CRMPI_ERR_BAD_PARAM;
    }
    PMIX_VALUE_CONSTRUCT(&value);
    value.type = PMIX_BYTE_OBJECT;
    value.data.bo.bytes = (char *)data;
    value.data.bo.size = len;
    /* PMIx_Put copies the value. */
    pmix_status_t prc = PMIx_Put(PMIX_GLOBAL, full, &value);
    if (prc != PMIX_SUCCESS) {
        crmpi_log_error("modex: PMIx_Put(%s): %s", key, PMIx_Error_string(prc));
        return CRMPI_ERROR;
    }
    return CRMPI_OK;
}

/* PMIx thread: the fence finished; the main loop sends the reply (agent_fence_reply). */
static void agent_fence_done(pmix_status_t status, void *cbdata)
{
    agent_state_t *st = cbdata;
    uint64_t one = 1;
    st->fence_status = status;
    ssize_t ignored = write(st->fence_efd, &one, sizeof(one));
    (void)ignored;
}

/*
 * Start a fence without blocking: the agent must keep serving while the job's ranks
 * gather (forward output, notice its rank's death, answer mpirun). A rank that died in a
 * fence must be reported, or no agent would ever leave it.
 * @return CRMPI_OK (the reply comes later) or an error to reply now.
 */
static int agent_fence_start(agent_state_t *st, uint32_t seq, crmpi_buf_t *req)
{
    uint32_t collect;
    bool flag;

    crmpi_buf_get_u32(req, &collect);
    if (crmpi_buf_get_done(req) != CRMPI_OK || st->fence_pending) {
        return CRMPI_ERR_PROTO;
    }
    if (collect) {
        pmix_status_t prc = PMIx_Commit();
        if (prc != PMIX_SUCCESS) {
            crmpi_log_error("modex: PMIx_Commit: %s", PMIx_Error_string(prc));
            return CRMPI_ERROR;
        }
    }
    flag = collect != 0;
    PMIX_INFO_LOAD(&st->fence_info, PMIX_COLLECT_DATA, &flag, PMIX_BOOL);
    st->fence_seq = seq;
    st->fence_pending = 1;
    /* NULL procs: every process of this job's namespace. */
    pmix_status_t prc = PMIx_Fence_nb(NULL, 0, &st->fence_info, 1, agent_fence_done, st);
    if (prc != PMIX_SUCCESS) {
        st->fence_pending = 0;
        crmpi_log_error("fence: %s", PMIx_Error_string(prc));
        return CRMPI_ERROR;
    }
    return CRMPI_OK;
}

static void agent_fence_reply(agent_state_t *st)
{
    uint64_t count;
    if (read(st->fence_efd, &count, sizeof(count)) != sizeof(count) || !st->fence_pending) {
        return;
    }
    st->fence_pending = 0;
    PMIX_INFO_DESTRUCT(&st->fence_info);
    if (st->fence_status != PMIX_SUCCESS && st->signals_received) {
        /* The job is being torn down and the rank is being signalled: leave it waiting
         * rather than hand it an error it would report on its way out. */
        return;
    }
    if (st->fence_status != PMIX_SUCCESS) {
        crmpi_log_error("fence: %s", PMIx_Error_string(st->fence_status));
    }
    agent_reply(st, st->fence_seq,
                st->fence_status == PMIX_SUCCESS ? CRMPI_OK : CRMPI_ERR_PEER_GONE, NULL);
}

static int agent_modex_get(agent_state_t *st, crmpi_buf_t *req, crmpi_buf_t *reply)
{
    uint32_t peer_rank;
    const char *key;
    char full[PMIX_MAX_KEYLEN + 1];
    pmix_proc_t peer;
    pmix_value_t *val = NULL;
    pmix_info_t optional;
    bool yes = true;

    crmpi_buf_get_u32(req, &peer_rank);
    crmpi_buf_get_str(req, &key);
    if (crmpi_buf_get_done(req) != CRMPI_OK) {
        return CRMPI_ERR_PROTO;
    }
    if (peer_rank >= st->info.size || agent_modex_key(key, full, sizeof(full)) != CRMPI_OK) {
        return CRMPI_ERR_BAD_PARAM;
    }
    PMIX_LOAD_PROCID(&peer, st->self.nspace, peer_rank);
    /* Optional: answer from what the fence collected, never wait for a key that was not
     * published. */
    PMIX_INFO_LOAD(&optional, PMIX_OPTIONAL, &yes, PMIX_BOOL);
    pmix_status_t prc = PMIx_Get(&peer, full, &optional, 1, &val);
    PMIX_INFO_DESTRUCT(&optional);
    if (prc != PMIX_SUCCESS || !val) {
        return CRMPI_ERR_NOT_FOUND;
    }
    int rc = CRMPI_OK;
    if (val->type == PMIX_BYTE_OBJECT) {
        crmpi_buf_put_bytes(reply, val->data.bo.bytes, val->data.bo.size);
    } else {
        crmpi_log_error("modex: rank %u's %s has unexpected type %d", peer_rank, key,
                        (int)val->type);
        rc = CRMPI_ERR_PROTO;
    }
    PMIX_VALUE_RELEASE(val);
    return rc;
}

static int agent_forward_abort(agent_state_t *st, crmpi_buf_t *req)
{
    int32_t errcode;
    const char *message;
    crmpi_buf_t out;

    crmpi_buf_get_i32(req, &errcode);
    crmpi_buf_get_str(req, &message);
    if (crmpi_buf_get_done(req) != CRMPI_OK) {
        return CRMPI_ERR_PROTO;
    }
    crmpi_buf_init(&out);
    crmpi_buf_put_u32(&out, st->info.rank);
    crmpi_buf_put_i32(&out, errcode);
    crmpi_buf_put_str(&out, message);
    return agent_send_hnp(st, CRMPI_CTL_AGENT_ABORT, &out);
}

/* One message from the rank (or its init). @return CRMPI_ERR_PEER_GONE when the socket
 * closed: the rank and its init are gone. */
static int agent_serve_rank(agent_state_t *st)
{
    crmpi_ctl_msg_t msg;
    crmpi_buf_t req, reply;
    int rc, status;

    rc = crmpi_ctl_recv(st->child.ctl_fd, &msg);
    if (rc != CRMPI_OK) {
        return CRMPI_ERR_PEER_GONE;
    }
    crmpi_buf_init_read(&req, msg.payload, msg.hdr.len);
    crmpi_buf_init(&reply);
    switch (msg.hdr.type) {
    case CRMPI_CTL_HELLO:
        crmpi_rte_job_info_pack(&st->info, &reply);
        status = reply.failed ? CRMPI_ERR_OUT_OF_RESOURCE : CRMPI_OK;
        break;
    case CRMPI_CTL_MODEX_PUT: status = agent_modex_put(&req); break;
    case CRMPI_CTL_FENCE:
        status = agent_fence_start(st, msg.hdr.seq, &req);
        if (status == CRMPI_OK) {
            crmpi_buf_free(&reply);
            crmpi_ctl_msg_free(&msg);
            return CRMPI_OK; /* the reply comes when the fence completes */
        }
        break;
    case CRMPI_CTL_MODEX_GET: status = agent_modex_get(st, &req, &reply); break;
    case CRMPI_CTL_ABORT: status = agent_forward_abort(st, &req); break;
    case CRMPI_CTL_FINALIZE: status = CRMPI_OK; break;
    case CRMPI_CTL_CR_START:
        st->snapc.rank_ready = !st->snapc.rank_stopped;
        status = CRMPI_OK;
        break;
    case CRMPI_CTL_CR_STOP:
        st->snapc.rank_ready = false; /* checkpoints refused from now on */
        st->snapc.rank_stopped = true;
        status = CRMPI_OK;
        break;
    case CRMPI_CTL_CKPT_BOOKMARKS:
    case CRMPI_CTL_CKPT_DRAINED:
    case CRMPI_CTL_CKPT_READY:
    case CRMPI_CTL_CKPT_CONTINUED:
    case CRMPI_CTL_CKPT_ABORT:
        /* Not requests: the rank's steps of a checkpoint, for mpirun. */
        crmpi_snapc_local_from_rank(&st->snapc, &msg);
        crmpi_buf_free(&reply);
        crmpi_ctl_msg_free(&msg);
        return CRMPI_OK;
    case CRMPI_CTL_INIT_EXIT: {
        int32_t raw;
        if (crmpi_buf_get_i32(&req, &raw) == CRMPI_OK) {
            st->rank_status = raw;
            st->have_rank_status = 1;
        }
        crmpi_ctl_msg_free(&msg);
        return CRMPI_OK; /* no reply: the init is exiting */
    }
    default:
        crmpi_log_warn("the rank sent an unexpected %s", crmpi_ctl_type_name(msg.hdr.type));
        status = CRMPI_ERR_PROTO;
        break;
    }
    if (status != CRMPI_OK) {
        crmpi_buf_free(&reply);
    }
    rc = agent_reply(st, msg.hdr.seq, status, status == CRMPI_OK ? &reply : NULL);
    crmpi_buf_free(&reply);
    crmpi_ctl_msg_free(&msg);
    /* A reply the rank cannot receive means it died; the init reports that, and the
     * socket's end-of-file ends the loop. Nothing else to do here. */
    (void)rc;
    return CRMPI_OK;
}

static void agent_forward_output(int *fd, int out_fd)
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
    for (ssize_t done = 0; done < n;) {
        ssize_t w = write(out_fd, data + done, (size_t)(n - done));
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w < 0) {
            return; /* mpirun is gone; hnp_fd tells us too */
        }
        done += w;
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
                crmpi_snapc_local_from_hnp(&st->snapc, &msg); /* checkpoints only */
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
            agent_forward_output(&st->child.out_fd, 1);
        }
        if (fds[3].revents) {
            agent_forward_output(&st->child.err_fd, 2);
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
    fputs("Usage: crmpi-agent [--cpuset LIST [--membind]] [--restore SEQDIR] -- PROGRAM [ARG]...\n"
          "Run one rank of a crmpi job in its own pid namespace. Started by mpirun (or by\n"
          "ompi-restart), never by hand: it needs the PMIx environment and CRMPI_HNP_URI.\n"
          "  --cpuset LIST    bind the rank to these CPUs (hwloc list syntax, e.g. 0-1)\n"
          "  --membind        also bind its memory near those CPUs\n"
          "  --restore SEQDIR restore the rank from sequence directory SEQDIR of a snapshot\n"
          "                   (its rank.<r>/) instead of starting PROGRAM\n",
          out);
}

/*
 * Restore mode: copy this rank's images from the snapshot to node-local storage, checking
 * every checksum, and restore them as the rank (agent_crs.h).
 */
static int agent_restore(agent_state_t *st, const char *seq_dir, const char *cpuset)
{
    char problem[CRMPI_FILEM_PROBLEM_MAX], local[4096], images[4200], err[1024];
    crmpi_filem_manifest_t *manifest = NULL;
    const crmpi_filem_ops_t *ops;
    char *src = NULL;
    int rc;

    rc = crmpi_filem_manifest_read(seq_dir, false, &manifest, problem);
    if (rc != CRMPI_OK) {
        crmpi_log_error("cannot restore rank %u: %s", st->info.rank, problem);
        return rc;
    }
    if (manifest->num_ranks != st->info.size) {
        crmpi_log_error("cannot restore: the snapshot %s has %zu ranks, this job %u", seq_dir,
                        manifest->num_ranks, st->info.size);
        crmpi_filem_manifest_destroy(manifest);
        return CRMPI_ERR_BAD_PARAM;
    }
    st->restart_seq = manifest->seq;
    snprintf(local, sizeof(local), "%s/restore", st->info.session_dir);
    if (mkdir(local, 0700) < 0 && errno != EEXIST) {
        crmpi_log_error("cannot create %s: %s", local, strerror(errno));
        crmpi_filem_manifest_destroy(manifest);
        return CRMPI_ERR_IO;
    }
    snprintf(local, sizeof(local), "%s/restore/rank.%u", st->info.session_dir, st->info.rank);
    snprintf(images, sizeof(images), "%s/criu", local);
    rc = crmpi_filem_rank_dir_path(seq_dir, (int)st->info.rank, &src);
    if (rc == CRMPI_OK)
        rc = crmpi_filem_base_open(&ops);
    if (rc == CRMPI_OK) {
        crmpi_filem_transfer_t transfer = {
            .rank = (int)st->info.rank, .src_dir = src, .dest_dir = local};

        crmpi_filem_tree_remove(local);
        rc = ops->get(&transfer, &manifest->ranks[st->info.rank]);
        crmpi_filem_base_close();
    }
    free(src);
    crmpi_filem_manifest_destroy(manifest);
    if (rc != CRMPI_OK)
        return rc; /* FileM said which file */
    rc = agent_crs_restore(images, cpuset, &st->child, err, sizeof(err));
    crmpi_filem_tree_remove(local);
    if (rc != CRMPI_OK)
        crmpi_log_error("cannot restore rank %u: %s", st->info.rank, err);
    return rc;
}

/* Tell the restored rank where it is now: the restart's parameters and job facts. */
static int agent_restart_rank(agent_state_t *st)
{
    static const char prefix[] = "CRMPI_MCA_";
    crmpi_buf_t buf;
    uint32_t count = 0;
    int rc;

    for (char **e = environ; *e; e++)
        count += strncmp(*e, prefix, sizeof(prefix) - 1) == 0;
    crmpi_buf_init(&buf);
    crmpi_buf_put_u32(&buf, count);
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, prefix, sizeof(prefix) - 1) == 0)
            crmpi_buf_put_str(&buf, *e);
    }
    crmpi_rte_job_info_pack(&st->info, &buf);
    st->snapc.seq = st->restart_seq;
    st->snapc.in_checkpoint = true; /* until the rank's CKPT_CONTINUED */
    rc = buf.failed ? CRMPI_ERR_OUT_OF_RESOURCE
                    : crmpi_ctl_send(st->child.ctl_fd, CRMPI_CTL_CKPT_RESTART, st->restart_seq,
                                     CRMPI_OK, buf.data, buf.len);
    crmpi_buf_free(&buf);
    if (rc != CRMPI_OK)
        crmpi_log_error("cannot send the restored rank its new job facts: %s", crmpi_strerror(rc));
    return rc;
}

int main(int argc, char **argv)
{
    agent_state_t st;
    const char *cpuset = NULL, *restore_dir = NULL;
    int membind = 0, argi, status;
    pmix_status_t prc;

    if (argc > 1 && strcmp(argv[1], "--ns-init") == 0) {
        crmpi_agent_ns_init_run(argc, argv); /* the rank's init (agent_ns.h) */
    }
    memset(&st, 0, sizeof(st));
    st.hnp_fd = -1;
    sigset_t ending;
    sigemptyset(&ending);
    sigaddset(&ending, SIGTERM);
    sigaddset(&ending, SIGINT);
    sigaddset(&ending, SIGHUP);
    /* Before PMIx_Init: its thread inherits the mask (see agent_handle_signals). */
    sigprocmask(SIG_BLOCK, &ending, NULL);
    st.signal_fd = signalfd(-1, &ending, SFD_CLOEXEC | SFD_NONBLOCK);
    st.fence_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (st.fence_efd < 0 || st.signal_fd < 0) {
        crmpi_log_error("eventfd/signalfd: %s", strerror(errno));
        return 1;
    }
    crmpi_log_set_who("crmpi-agent");
    for (argi = 1; argi < argc; argi++) {
        if (strcmp(argv[argi], "--") == 0) {
            argi++;
            break;
        } else if (strcmp(argv[argi], "--cpuset") == 0 && argi + 1 < argc) {
            cpuset = argv[++argi];
        } else if (strcmp(argv[argi], "--membind") == 0) {
            membind = 1;
        } else if (strcmp(argv[argi], "--restore") == 0 && argi + 1 < argc) {
            restore_dir = argv[++argi];
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
    if (crmpi_catalog_register_all() != CRMPI_OK) {
        return 1;
    }
    prc = PMIx_Init(&st.self, NULL, 0);
    if (prc != PMIX_SUCCESS) {
        crmpi_log_error("PMIx_Init: %s (is this agent started by mpirun?)", PMIx_Error_string(prc));
        return 1;
    }
    char who[64];
    snprintf(who, sizeof(who), "crmpi-agent[%u]", st.self.rank);
    crmpi_log_set_who(who);

    char **rank_env = NULL;
    int rc = agent_job_facts(&st);
    if (rc == CRMPI_OK) {
        rc = agent_connect_hnp(&st);
    }
    if (rc == CRMPI_OK && cpuset) {
        rc = agent_bind(cpuset, membind);
    }
    if (rc == CRMPI_OK && !(rank_env = agent_rank_env())) {
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
    }
    if (rc == CRMPI_OK) {
        signal(SIGPIPE, SIG_IGN);
        agent_crs_init(&st.snapc);
        /* The rank's pid inside its namespace: the agent's own pid, unique on this node
         * while the agent lives (DESIGN section 9: not every rank pid 2). A restored rank
         * keeps the pid it had. */
        if (restore_dir)
            rc = agent_restore(&st, restore_dir, cpuset);
        else
            rc = crmpi_agent_ns_start(argv[argi], argv + argi, rank_env, getpid(), &st.child);
        if (rc == CRMPI_OK) {
            st.init_alive = 1;
            st.snapc.hnp_fd = st.hnp_fd;
            st.snapc.rank_fd = st.child.ctl_fd;
            st.snapc.rank = (int)st.info.rank;
            st.snapc.init_pid = st.child.init_pid;
            st.snapc.local_base = st.info.session_dir;
            rc = agent_hello_hnp(&st);
        }
        if (rc == CRMPI_OK && restore_dir)
            rc = agent_restart_rank(&st);
    }
    free(rank_env);
    if (rc != CRMPI_OK) {
        if (st.child.init_pid > 0) {
            kill(st.child.init_pid, SIGKILL);
            waitpid(st.child.init_pid, NULL, 0);
        }
        PMIx_Finalize(NULL, 0);
        return 1;
    }

    agent_run(&st);

    while (waitpid(st.child.init_pid, &status, 0) < 0 && errno == EINTR) {
    }
    st.init_alive = 0;
    /* Without a report from the init, the init itself was killed (SIGKILL from outside,
     * or its namespace torn down): the rank died the same way. */
    int rank_status =
        st.have_rank_status ? st.rank_status : (WIFSIGNALED(status) ? WTERMSIG(status) : status);
    crmpi_buf_t out;
    crmpi_buf_init(&out);
    crmpi_buf_put_u32(&out, st.info.rank);
    crmpi_buf_put_i32(&out, rank_status);
    agent_send_hnp(&st, CRMPI_CTL_AGENT_EXIT, &out);
    if (rank_status != 0 && st.signals_received == 0) {
        /* Stay in the job until mpirun's teardown signal (or its exit): leaving PMIx now
         * would fail the other ranks' pending fence before that signal reaches them, and
         * each would report an error of its own instead of mpirun's one line. */
        while (st.signals_received == 0) {
            struct pollfd fds[2] = {{.fd = st.hnp_fd, .events = POLLIN},
                                    {.fd = st.signal_fd, .events = POLLIN}};
            if ((poll(fds, 2, -1) < 0 && errno != EINTR) || fds[0].revents) {
                break; /* mpirun closed the connection, or is gone */
            }
            if (fds[1].revents) {
                agent_handle_signals(&st);
            }
        }
    }
    close(st.hnp_fd);
    agent_crs_finalize();
    crmpi_rte_job_info_free(&st.info);
    PMIx_Finalize(NULL, 0);
    return 0;
}
