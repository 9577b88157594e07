/*
 * rte.c: the rank's connection to its agent (see rte.h).
 *
 * The agent starts the rank with the control socket on an inherited descriptor whose
 * number is in CRMPI_CTL_FD (an interface between agent and rank, not a tunable, hence not
 * an MCA parameter). Every call here is one request and its reply; a mutex keeps a
 * request and its reply together when several threads call MPI at once.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

#include "crmpi_status.h"
#include "ctl.h"
#include "log.h"
#include "rte.h"

#define CRMPI_RTE_CTL_FD_ENV "CRMPI_CTL_FD"

typedef struct crmpi_rte_state {
    int ctl_fd;                /* control socket to the agent; -1 when not connected */
    uint32_t next_seq;         /* sequence number of the next request */
    pthread_mutex_t lock;      /* one request/reply exchange at a time */
    crmpi_rte_job_info_t info; /* facts from the agent's JOB_INFO */
    int have_info;             /* info is valid */
} crmpi_rte_state_t;

static crmpi_rte_state_t crmpi_rte = {
    .ctl_fd = -1,
    .next_seq = 1,
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

/*
 * Send a request and wait for its reply. The reply's payload is returned in *reply_out
 * (caller frees it with crmpi_ctl_msg_free) when reply_out is not NULL.
 * @return the reply's status, or a transport error.
 */
static int crmpi_rte_request(crmpi_ctl_type_t type, const crmpi_buf_t *request,
                             crmpi_ctl_msg_t *reply_out)
{
    crmpi_ctl_msg_t reply;
    int rc;

    if (crmpi_rte.ctl_fd < 0) {
        return CRMPI_ERR_NOT_FOUND;
    }
    if (request && request->failed) {
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    pthread_mutex_lock(&crmpi_rte.lock);
    uint32_t seq = crmpi_rte.next_seq++;
    rc = crmpi_ctl_send(crmpi_rte.ctl_fd, type, seq, CRMPI_OK, request ? request->data : NULL,
                        request ? request->len : 0);
    if (rc == CRMPI_OK) {
        rc = crmpi_ctl_recv(crmpi_rte.ctl_fd, &reply);
    }
    pthread_mutex_unlock(&crmpi_rte.lock);
    if (rc != CRMPI_OK) {
        crmpi_log_error("control connection to the agent failed during %s: %s",
                        crmpi_ctl_type_name(type), crmpi_strerror(rc));
        return rc;
    }
    if (reply.hdr.type != CRMPI_CTL_REPLY || reply.hdr.seq != seq) {
        crmpi_log_error("agent answered %s with %s (seq %u, expected %u)",
                        crmpi_ctl_type_name(type), crmpi_ctl_type_name(reply.hdr.type),
                        reply.hdr.seq, seq);
        crmpi_ctl_msg_free(&reply);
        return CRMPI_ERR_PROTO;
    }
    rc = reply.hdr.status;
    if (reply_out && rc == CRMPI_OK) {
        *reply_out = reply;
    } else {
        crmpi_ctl_msg_free(&reply);
    }
    return rc;
}

int crmpi_rte_init(crmpi_rte_job_info_t *info_out)
{
    const char *fd_text = getenv(CRMPI_RTE_CTL_FD_ENV);
    crmpi_ctl_msg_t reply;
    crmpi_buf_t request, payload;
    char *end;
    int rc;

    if (!fd_text || !*fd_text) {
        return CRMPI_ERR_NOT_FOUND;
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
    *info_out = crmpi_rte.info;
    return CRMPI_OK;

err_forget_fd:
    crmpi_rte.ctl_fd = -1;
    return rc;
}

const crmpi_rte_job_info_t *crmpi_rte_job_info(void)
{
    return crmpi_rte.have_info ? &crmpi_rte.info : NULL;
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
