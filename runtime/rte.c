/*
 * rte.c: the rank's connection to its agent (see rte.h).
 *
 * The agent starts the rank with the control socket on an inherited descriptor whose
 * number is in CRMPI_CTL_FD (an interface between agent and rank, not a tunable, hence not
 * an MCA parameter). Every call here is one request and its reply; a mutex keeps a
 * request and its reply together when several threads call MPI at once.
 *
 * With a reader thread (checkpoint/restart), that thread alone reads the socket: a reply
 * it reads for another thread goes to the mailbox, where the asking thread waits for its
 * sequence number; a command from the agent waits in `pending` until the reader takes
 * it. Writes are whole messages under `send_lock`.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "crmpi_status.h"
#include "ctl.h"
#include "log.h"
#include "rte.h"
#include "uffd_wp.h"

#define CRMPI_RTE_CTL_FD_ENV "CRMPI_CTL_FD"

/* A received message waiting for its reader: a reply in the mailbox, or a command. */
typedef struct crmpi_rte_queued {
    struct crmpi_rte_queued *next;
    crmpi_ctl_msg_t msg;
} crmpi_rte_queued_t;

typedef struct crmpi_rte_state {
    int ctl_fd;                /* control socket to the agent; -1 when not connected */
    uint32_t next_seq;         /* sequence number of the next request */
    pthread_mutex_t lock;      /* one request/reply exchange at a time (no reader thread) */
    crmpi_rte_job_info_t info; /* facts from the agent's JOB_INFO */
    int have_info;             /* info is valid */
    bool singleton;            /* info is a singleton's (its node_of_rank is static) */
    /* The reader thread */
    bool reader_active;                /* started and not yet stopped */
    pthread_t reader;                  /* the thread */
    crmpi_rte_command_fn_t command_fn; /* where commands go */
    uint32_t stop_seq;                 /* the CR_STOP request whose reply ends the reader */
    bool stop_seen;                    /* the reader read that reply: it ends after this command */
    pthread_mutex_t send_lock;         /* one message written at a time */
    pthread_mutex_t box_lock;          /* guards mailbox and pending */
    pthread_cond_t box_cond;           /* a reply arrived in the mailbox */
    crmpi_rte_queued_t *mailbox;       /* replies for threads other than the reader */
    crmpi_rte_queued_t *pending;       /* commands read while the reader waited for a reply */
    crmpi_rte_queued_t **pending_tail;
} crmpi_rte_state_t;

static crmpi_rte_state_t crmpi_rte = {
    .ctl_fd = -1,
    .next_seq = 1,
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .send_lock = PTHREAD_MUTEX_INITIALIZER,
    .box_lock = PTHREAD_MUTEX_INITIALIZER,
    .box_cond = PTHREAD_COND_INITIALIZER,
    .pending_tail = &crmpi_rte.pending,
};

static bool crmpi_rte_on_reader(void)
{
    return crmpi_rte.reader_active && pthread_equal(pthread_self(), crmpi_rte.reader);
}

static int crmpi_rte_send_locked(crmpi_ctl_type_t type, uint32_t seq, int32_t status,
                                 const crmpi_buf_t *payload)
{
    pthread_mutex_lock(&crmpi_rte.send_lock);
    int rc = crmpi_ctl_send(crmpi_rte.ctl_fd, type, seq, status, payload ? payload->data : NULL,
                            payload ? payload->len : 0);
    pthread_mutex_unlock(&crmpi_rte.send_lock);
    return rc;
}

static void crmpi_rte_queue(crmpi_rte_queued_t *item, bool reply)
{
    pthread_mutex_lock(&crmpi_rte.box_lock);
    if (reply) {
        item->next = crmpi_rte.mailbox;
        crmpi_rte.mailbox = item;
        pthread_cond_broadcast(&crmpi_rte.box_cond);
    } else {
        item->next = NULL;
        *crmpi_rte.pending_tail = item;
        crmpi_rte.pending_tail = &item->next;
    }
    pthread_mutex_unlock(&crmpi_rte.box_lock);
}

/*
 * Reader thread only: read one message. The reply to `want_seq` (0: none) is returned, and
 * a command when `want_command`; any other reply goes to the mailbox, any other command to
 * `pending`, and the reply to CR_STOP marks the reader's end.
 * @return CRMPI_OK with *msg_out, CRMPI_ERR_RESOURCE_BUSY (what was read is filed), or a
 *         transport error.
 */
static int crmpi_rte_read_one(uint32_t want_seq, bool want_command, crmpi_ctl_msg_t *msg_out)
{
    crmpi_rte_queued_t *item;
    crmpi_ctl_msg_t msg;
    int rc = crmpi_ctl_recv(crmpi_rte.ctl_fd, &msg);

    if (rc != CRMPI_OK)
        return rc;
    bool reply = msg.hdr.type == CRMPI_CTL_REPLY;
    if ((reply && want_seq && msg.hdr.seq == want_seq) || (!reply && want_command)) {
        *msg_out = msg;
        return CRMPI_OK;
    }
    if (reply && msg.hdr.seq == __atomic_load_n(&crmpi_rte.stop_seq, __ATOMIC_ACQUIRE)) {
        crmpi_rte.stop_seen = true;
        crmpi_ctl_msg_free(&msg);
        return CRMPI_ERR_RESOURCE_BUSY;
    }
    item = malloc(sizeof(*item));
    if (!item) {
        crmpi_log_error("out of memory keeping a %s from the agent",
                        crmpi_ctl_type_name(msg.hdr.type));
        crmpi_ctl_msg_free(&msg);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    item->msg = msg;
    crmpi_rte_queue(item, reply);
    return CRMPI_ERR_RESOURCE_BUSY;
}

/* Another thread's request while the reader runs: wait for the reader to file the reply. */
static int crmpi_rte_await_reply(uint32_t seq, crmpi_ctl_msg_t *reply_out)
{
    pthread_mutex_lock(&crmpi_rte.box_lock);
    for (;;) {
        for (crmpi_rte_queued_t **pos = &crmpi_rte.mailbox; *pos; pos = &(*pos)->next) {
            crmpi_rte_queued_t *item = *pos;

            if (item->msg.hdr.seq != seq)
                continue;
            *pos = item->next;
            pthread_mutex_unlock(&crmpi_rte.box_lock);
            *reply_out = item->msg;
            free(item);
            return CRMPI_OK;
        }
        if (!crmpi_rte.reader_active) {
            pthread_mutex_unlock(&crmpi_rte.box_lock);
            return CRMPI_ERR_PEER_GONE;
        }
        pthread_cond_wait(&crmpi_rte.box_cond, &crmpi_rte.box_lock);
    }
}

/* The end of every request: transport errors logged, the reply's type and seq checked. */
static int crmpi_rte_check_reply(crmpi_ctl_type_t type, uint32_t seq, int rc,
                                 crmpi_ctl_msg_t *reply, crmpi_ctl_msg_t *reply_out)
{
    if (rc != CRMPI_OK) {
        crmpi_log_error("control connection to the agent failed during %s: %s",
                        crmpi_ctl_type_name(type), crmpi_strerror(rc));
        return rc;
    }
    if (reply->hdr.type != CRMPI_CTL_REPLY || reply->hdr.seq != seq) {
        crmpi_log_error("agent answered %s with %s (seq %u, expected %u)",
                        crmpi_ctl_type_name(type), crmpi_ctl_type_name(reply->hdr.type),
                        reply->hdr.seq, seq);
        crmpi_ctl_msg_free(reply);
        return CRMPI_ERR_PROTO;
    }
    rc = reply->hdr.status;
    if (reply_out && rc == CRMPI_OK) {
        *reply_out = *reply;
    } else {
        crmpi_ctl_msg_free(reply);
    }
    return rc;
}

/*
 * Send a request and wait for its reply. The reply's payload is returned in *reply_out
 * (caller frees it with crmpi_ctl_msg_free) when reply_out is not NULL.
 * @return the reply's status, or a transport error.
 */
static int crmpi_rte_request(crmpi_ctl_type_t type, const crmpi_buf_t *request,
                             crmpi_ctl_msg_t *reply_out)
{
    crmpi_ctl_msg_t reply;
    uint32_t seq;
    int rc;

    if (crmpi_rte.ctl_fd < 0) {
        return CRMPI_ERR_NOT_FOUND;
    }
    if (request && request->failed) {
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    if (crmpi_rte.reader_active) {
        seq = __atomic_fetch_add(&crmpi_rte.next_seq, 1, __ATOMIC_RELAXED);
        rc = crmpi_rte_send_locked(type, seq, CRMPI_OK, request);
        if (rc == CRMPI_OK && crmpi_rte_on_reader()) {
            do {
                rc = crmpi_rte_read_one(seq, false, &reply);
            } while (rc == CRMPI_ERR_RESOURCE_BUSY);
        } else if (rc == CRMPI_OK) {
            rc = crmpi_rte_await_reply(seq, &reply);
        }
        return crmpi_rte_check_reply(type, seq, rc, &reply, reply_out);
    }
    pthread_mutex_lock(&crmpi_rte.lock);
    seq = __atomic_fetch_add(&crmpi_rte.next_seq, 1, __ATOMIC_RELAXED);
    rc = crmpi_rte_send_locked(type, seq, CRMPI_OK, request);
    if (rc == CRMPI_OK) {
        rc = crmpi_ctl_recv(crmpi_rte.ctl_fd, &reply);
    }
    pthread_mutex_unlock(&crmpi_rte.lock);
    return crmpi_rte_check_reply(type, seq, rc, &reply, reply_out);
}

static void *crmpi_rte_reader_main(void *arg)
{
    (void)arg;
    while (!crmpi_rte.stop_seen) {
        crmpi_ctl_msg_t msg;
        int rc = crmpi_rte_command_wait(-1, &msg);

        if (rc == CRMPI_ERR_RESOURCE_BUSY)
            continue;
        if (rc != CRMPI_OK) {
            if (!crmpi_rte.stop_seen)
                crmpi_log_error("control connection to the agent lost (%s); checkpoints of "
                                "this rank are no longer possible",
                                crmpi_strerror(rc));
            break;
        }
        crmpi_rte.command_fn(&msg);
    }
    pthread_mutex_lock(&crmpi_rte.box_lock);
    crmpi_rte.reader_active = false; /* waiters on the mailbox get CRMPI_ERR_PEER_GONE */
    pthread_cond_broadcast(&crmpi_rte.box_cond);
    pthread_mutex_unlock(&crmpi_rte.box_lock);
    return NULL;
}

int crmpi_rte_reader_start(crmpi_rte_command_fn_t command_fn)
{
    int err;

    if (crmpi_rte.ctl_fd < 0)
        return CRMPI_ERR_NOT_FOUND;
    crmpi_rte.command_fn = command_fn;
    crmpi_rte.stop_seq = 0;
    crmpi_rte.stop_seen = false;
    crmpi_rte.reader_active = true;
    err = pthread_create(&crmpi_rte.reader, NULL, crmpi_rte_reader_main, NULL);
    if (err != 0) {
        crmpi_rte.reader_active = false;
        crmpi_log_error("cannot start the checkpoint/restart thread: %s", strerror(err));
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    /* From the reply on, the agent may send commands: the reader takes them. */
    int rc = crmpi_rte_request(CRMPI_CTL_CR_START, NULL, NULL);
    if (rc == CRMPI_OK)
        crmpi_rte_track_offer();
    return rc;
}

void crmpi_rte_track_offer(void)
{
    struct uffdio_api api = {.api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC};
    int uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
    int rc;

    /* Without it the agent takes full checkpoints, and says so when asked for others. */
    if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) < 0) {
        if (uffd >= 0)
            close(uffd);
        return;
    }
    pthread_mutex_lock(&crmpi_rte.send_lock);
    rc = crmpi_ctl_send(crmpi_rte.ctl_fd, CRMPI_CTL_CR_TRACK, 0, CRMPI_OK, NULL, 0);
    if (rc == CRMPI_OK)
        rc = crmpi_ctl_send_fd(crmpi_rte.ctl_fd, uffd);
    pthread_mutex_unlock(&crmpi_rte.send_lock);
    (void)rc;    /* an agent that is gone: the reader finds out and says so */
    close(uffd); /* the agent's copy keeps the tracking; the rank must hold none */
}

int crmpi_rte_reader_stop(void)
{
    pthread_t reader = crmpi_rte.reader;
    int rc = CRMPI_OK;

    if (!crmpi_rte.reader_active)
        return CRMPI_OK;
    uint32_t seq = __atomic_fetch_add(&crmpi_rte.next_seq, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&crmpi_rte.stop_seq, seq, __ATOMIC_RELEASE);
    rc = crmpi_rte_send_locked(CRMPI_CTL_CR_STOP, seq, CRMPI_OK, NULL);
    if (rc != CRMPI_OK) {
        /* The agent is gone: the reader sees the end of the socket and ends too. */
        crmpi_log_error("cannot tell the agent that checkpoints end here: %s", crmpi_strerror(rc));
    }
    pthread_join(reader, NULL);
    return rc;
}

int crmpi_rte_command_wait(int timeout_ms, crmpi_ctl_msg_t *msg_out)
{
    crmpi_rte_queued_t *item;
    struct pollfd pfd = {.fd = crmpi_rte.ctl_fd, .events = POLLIN};

    pthread_mutex_lock(&crmpi_rte.box_lock);
    item = crmpi_rte.pending;
    if (item) {
        crmpi_rte.pending = item->next;
        if (!crmpi_rte.pending)
            crmpi_rte.pending_tail = &crmpi_rte.pending;
    }
    pthread_mutex_unlock(&crmpi_rte.box_lock);
    if (item) {
        *msg_out = item->msg;
        free(item);
        return CRMPI_OK;
    }
    int ready = poll(&pfd, 1, timeout_ms);
    if (ready < 0)
        return errno == EINTR ? CRMPI_ERR_RESOURCE_BUSY : CRMPI_ERR_IO;
    if (ready == 0)
        return CRMPI_ERR_TIMEOUT;
    return crmpi_rte_read_one(0, true, msg_out);
}

int crmpi_rte_command_send(int type, uint32_t seq, int32_t status, const crmpi_buf_t *payload)
{
    if (crmpi_rte.ctl_fd < 0)
        return CRMPI_ERR_NOT_FOUND;
    if (payload && payload->failed)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    return crmpi_rte_send_locked(type, seq, status, payload);
}

/* A singleton runs on node 0, the only node of its job. */
static uint32_t crmpi_rte_singleton_node_of_rank[1];

/* The facts of a program started without mpirun: rank 0 of 1. The session directory stays
 * empty: with one rank no transport needs a shared one. */
static void crmpi_rte_singleton_init(void)
{
    crmpi_rte_job_info_t *job = &crmpi_rte.info;

    memset(job, 0, sizeof(*job));
    job->jobid = (uint64_t)getpid();
    job->size = 1;
    job->local_size = 1;
    job->num_nodes = 1;
    job->node_of_rank = crmpi_rte_singleton_node_of_rank;
    if (gethostname(job->nodename, sizeof(job->nodename)) != 0) {
        crmpi_log_warn("rte: gethostname failed (%s); calling this node \"localhost\"",
                       strerror(errno));
        snprintf(job->nodename, sizeof(job->nodename), "localhost");
    }
    /* POSIX leaves a truncated name unterminated. */
    job->nodename[sizeof(job->nodename) - 1] = '\0';
    crmpi_rte.have_info = 1;
    crmpi_rte.singleton = true;
}

int crmpi_rte_init(void)
{
    const char *fd_text = getenv(CRMPI_RTE_CTL_FD_ENV);
    crmpi_ctl_msg_t reply;
    crmpi_buf_t request, payload;
    char *end;
    int rc;

    if (!fd_text || !*fd_text) {
        crmpi_rte_singleton_init();
        return CRMPI_OK;
    }
    errno = 0;
    long fd = strtol(fd_text, &end, 10);
    if (errno || *end || fd < 0 || fd > 65535 || fcntl((int)fd, F_GETFD) < 0) {
        crmpi_log_error("%s=%s does not name an open descriptor; was this program started by "
                        "crmpi's mpirun?",
                        CRMPI_RTE_CTL_FD_ENV, fd_text);
        return CRMPI_ERR_BAD_PARAM;
    }
    crmpi_rte.ctl_fd = (int)fd;

    crmpi_buf_init(&request);
    crmpi_buf_put_u32(&request, (uint32_t)getpid());
    rc = crmpi_rte_request(CRMPI_CTL_HELLO, &request, &reply);
    crmpi_buf_free(&request);
    if (rc != CRMPI_OK) {
        goto err_forget_fd;
    }
    crmpi_buf_init_read(&payload, reply.payload, reply.hdr.len);
    rc = crmpi_rte_job_info_unpack(&payload, &crmpi_rte.info);
    crmpi_ctl_msg_free(&reply);
    if (rc != CRMPI_OK) {
        crmpi_log_error("the agent's job facts are malformed");
        goto err_forget_fd;
    }
    crmpi_rte.have_info = 1;
    return CRMPI_OK;

err_forget_fd:
    crmpi_rte.ctl_fd = -1;
    return rc;
}

const crmpi_rte_job_info_t *crmpi_rte_job(void)
{
    return crmpi_rte.have_info ? &crmpi_rte.info : NULL;
}

bool crmpi_rte_connected(void)
{
    return crmpi_rte.ctl_fd >= 0;
}

const crmpi_rte_job_info_t *crmpi_rte_job_info_replace(const crmpi_rte_job_info_t *info)
{
    if (crmpi_rte.have_info && !crmpi_rte.singleton)
        crmpi_rte_job_info_free(&crmpi_rte.info);
    crmpi_rte.info = *info;
    crmpi_rte.have_info = 1;
    crmpi_rte.singleton = false;
    return &crmpi_rte.info;
}

int crmpi_rte_modex_publish(const char *key, const void *data, size_t len)
{
    crmpi_buf_t request;
    crmpi_buf_init(&request);
    crmpi_buf_put_str(&request, key);
    crmpi_buf_put_bytes(&request, data, len);
    int rc = crmpi_rte_request(CRMPI_CTL_MODEX_PUT, &request, NULL);
    crmpi_buf_free(&request);
    return rc;
}

int crmpi_rte_fence(int collect)
{
    crmpi_buf_t request;
    crmpi_buf_init(&request);
    crmpi_buf_put_u32(&request, collect ? 1 : 0);
    int rc = crmpi_rte_request(CRMPI_CTL_FENCE, &request, NULL);
    crmpi_buf_free(&request);
    return rc;
}

int crmpi_rte_modex_lookup(uint32_t peer_rank, const char *key, void **data_out, size_t *len_out)
{
    crmpi_ctl_msg_t reply;
    crmpi_buf_t request, payload;
    const void *value;
    size_t value_len;

    crmpi_buf_init(&request);
    crmpi_buf_put_u32(&request, peer_rank);
    crmpi_buf_put_str(&request, key);
    int rc = crmpi_rte_request(CRMPI_CTL_MODEX_GET, &request, &reply);
    crmpi_buf_free(&request);
    if (rc != CRMPI_OK) {
        return rc;
    }
    crmpi_buf_init_read(&payload, reply.payload, reply.hdr.len);
    crmpi_buf_get_bytes(&payload, &value, &value_len);
    if (crmpi_buf_get_done(&payload) != CRMPI_OK) {
        rc = CRMPI_ERR_PROTO;
        goto out_free_reply;
    }
    /* malloc(0) may return NULL; keep "found, empty" distinct from "out of memory". */
    void *copy = malloc(value_len ? value_len : 1);
    if (!copy) {
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto out_free_reply;
    }
    memcpy(copy, value, value_len);
    *data_out = copy;
    *len_out = value_len;
out_free_reply:
    crmpi_ctl_msg_free(&reply);
    return rc;
}

int crmpi_rte_abort(int errcode, const char *message)
{
    crmpi_buf_t request;
    crmpi_buf_init(&request);
    crmpi_buf_put_i32(&request, errcode);
    crmpi_buf_put_str(&request, message);
    int rc = crmpi_rte_request(CRMPI_CTL_ABORT, &request, NULL);
    crmpi_buf_free(&request);
    return rc;
}

void crmpi_rte_abort_job(int errcode, const char *reason_fmt, ...)
{
    char reason[1024];
    va_list args;

    /* _exit() does not flush stdio, and what the application printed last often explains
     * the failure. */
    fflush(NULL);
    va_start(args, reason_fmt);
    vsnprintf(reason, sizeof(reason), reason_fmt, args);
    va_end(args);
    /* One line for the user: mpirun's. Only without mpirun does the rank say it itself. */
    if (!crmpi_rte_connected() || crmpi_rte_abort(errcode, reason) != CRMPI_OK)
        crmpi_log_error("%s", reason);
    /* _exit(), not exit(): atexit handlers of the application may call MPI, whose lock
     * this thread holds, or block; the job is being torn down either way. */
    _exit(errcode);
}

int crmpi_rte_finalize(void)
{
    int rc = crmpi_rte_fence(0);
    if (rc == CRMPI_OK) {
        rc = crmpi_rte_request(CRMPI_CTL_FINALIZE, NULL, NULL);
    }
    /* The descriptor stays open: the rank's init shares it to report the exit status,
     * and the agent sees the close when the process exits. */
    crmpi_rte.ctl_fd = -1;
    return rc;
}
