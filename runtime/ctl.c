/*
 * ctl.c: framing and field encoding of the control protocol (see ctl.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "ctl.h"
#include "log.h"

void crmpi_buf_init(crmpi_buf_t *buf)
{
    memset(buf, 0, sizeof(*buf));
}

void crmpi_buf_init_read(crmpi_buf_t *buf, const void *data, size_t len)
{
    memset(buf, 0, sizeof(*buf));
    /* Read-only use: the put functions are never called on such a buffer. */
    buf->data = (uint8_t *)data;
    buf->len = len;
}

void crmpi_buf_free(crmpi_buf_t *buf)
{
    free(buf->data);
    memset(buf, 0, sizeof(*buf));
}

static void crmpi_buf_put_raw(crmpi_buf_t *buf, const void *data, size_t len)
{
    if (buf->failed) {
        return;
    }
    if (buf->len + len > buf->cap) {
        size_t cap = buf->cap ? buf->cap : 64;
        while (cap < buf->len + len) {
            cap *= 2;
        }
        uint8_t *grown = realloc(buf->data, cap);
        if (!grown) {
            buf->failed = 1;
            return;
        }
        buf->data = grown;
        buf->cap = cap;
    }
    if (len) {
        memcpy(buf->data + buf->len, data, len);
    }
    buf->len += len;
}

void crmpi_buf_put_u32(crmpi_buf_t *buf, uint32_t value)
{
    crmpi_buf_put_raw(buf, &value, sizeof(value));
}

void crmpi_buf_put_i32(crmpi_buf_t *buf, int32_t value)
{
    crmpi_buf_put_raw(buf, &value, sizeof(value));
}

void crmpi_buf_put_u64(crmpi_buf_t *buf, uint64_t value)
{
    crmpi_buf_put_raw(buf, &value, sizeof(value));
}

void crmpi_buf_put_bytes(crmpi_buf_t *buf, const void *data, size_t len)
{
    if (len > CRMPI_CTL_MAX_PAYLOAD) {
        buf->failed = 1;
        return;
    }
    crmpi_buf_put_u32(buf, (uint32_t)len);
    crmpi_buf_put_raw(buf, data, len);
}

void crmpi_buf_put_str(crmpi_buf_t *buf, const char *value)
{
    /* Strings travel with their NUL so a reader can point into the buffer. */
    const char *text = value ? value : "";
    crmpi_buf_put_bytes(buf, text, strlen(text) + 1);
}

static int crmpi_buf_get_raw(crmpi_buf_t *buf, void *out, size_t len)
{
    if (buf->failed || buf->len - buf->pos < len) {
        buf->failed = 1;
        return CRMPI_ERR_PROTO;
    }
    memcpy(out, buf->data + buf->pos, len);
    buf->pos += len;
    return CRMPI_OK;
}

int crmpi_buf_get_u32(crmpi_buf_t *buf, uint32_t *value_out)
{
    return crmpi_buf_get_raw(buf, value_out, sizeof(*value_out));
}

int crmpi_buf_get_i32(crmpi_buf_t *buf, int32_t *value_out)
{
    return crmpi_buf_get_raw(buf, value_out, sizeof(*value_out));
}

int crmpi_buf_get_u64(crmpi_buf_t *buf, uint64_t *value_out)
{
    return crmpi_buf_get_raw(buf, value_out, sizeof(*value_out));
}

int crmpi_buf_get_bytes(crmpi_buf_t *buf, const void **data_out, size_t *len_out)
{
    uint32_t len;
    int rc = crmpi_buf_get_u32(buf, &len);
    if (rc != CRMPI_OK) {
        return rc;
    }
    if (buf->len - buf->pos < len) {
        buf->failed = 1;
        return CRMPI_ERR_PROTO;
    }
    *data_out = buf->data + buf->pos;
    *len_out = len;
    buf->pos += len;
    return CRMPI_OK;
}

int crmpi_buf_get_str(crmpi_buf_t *buf, const char **value_out)
{
    const void *data;
    size_t len;
    int rc = crmpi_buf_get_bytes(buf, &data, &len);
    if (rc != CRMPI_OK) {
        return rc;
    }
    /* A string must be exactly one NUL-terminated run, or the peer is broken. */
    if (len == 0 || ((const char *)data)[len - 1] != '\0' ||
        memchr(data, '\0', len) != (const char *)data + len - 1) {
        buf->failed = 1;
        return CRMPI_ERR_PROTO;
    }
    *value_out = data;
    return CRMPI_OK;
}

int crmpi_buf_get_done(const crmpi_buf_t *buf)
{
    return (!buf->failed && buf->pos == buf->len) ? CRMPI_OK : CRMPI_ERR_PROTO;
}

static int crmpi_ctl_write_all(int fd, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len > 0) {
        /* MSG_NOSIGNAL: a vanished peer is a status, not a SIGPIPE. Fall back to write()
         * for pipes and other non-sockets. */
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == ENOTSOCK) {
            n = write(fd, p, len);
        }
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return (errno == EPIPE || errno == ECONNRESET) ? CRMPI_ERR_PEER_GONE : CRMPI_ERR_IO;
        }
        p += n;
        len -= (size_t)n;
    }
    return CRMPI_OK;
}

/* @return bytes read (== len), 0 on EOF before any byte, or a negative status. */
static ssize_t crmpi_ctl_read_all(int fd, void *data, size_t len)
{
    uint8_t *p = data;
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, p + got, len - got);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errno == ECONNRESET ? CRMPI_ERR_PEER_GONE : CRMPI_ERR_IO;
        }
        if (n == 0) {
            return got == 0 ? 0 : CRMPI_ERR_PROTO;
        }
        got += (size_t)n;
    }
    return (ssize_t)got;
}

int crmpi_ctl_send(int fd, crmpi_ctl_type_t type, uint32_t seq, int32_t status, const void *payload,
                   size_t len)
{
    if (len > CRMPI_CTL_MAX_PAYLOAD) {
        return CRMPI_ERR_BAD_PARAM;
    }
    crmpi_ctl_hdr_t hdr = {
        .magic = CRMPI_CTL_MAGIC,
        .version = CRMPI_CTL_VERSION,
        .type = (uint16_t)type,
        .seq = seq,
        .status = status,
        .len = (uint32_t)len,
    };
    /* One buffer, one write, for small messages: a reader never sees a header alone. */
    uint8_t small[512];
    if (sizeof(hdr) + len <= sizeof(small)) {
        memcpy(small, &hdr, sizeof(hdr));
        if (len) {
            memcpy(small + sizeof(hdr), payload, len);
        }
        return crmpi_ctl_write_all(fd, small, sizeof(hdr) + len);
    }
    int rc = crmpi_ctl_write_all(fd, &hdr, sizeof(hdr));
    if (rc == CRMPI_OK && len) {
        rc = crmpi_ctl_write_all(fd, payload, len);
    }
    return rc;
}

int crmpi_ctl_recv(int fd, crmpi_ctl_msg_t *msg_out)
{
    crmpi_ctl_hdr_t hdr;
    ssize_t n = crmpi_ctl_read_all(fd, &hdr, sizeof(hdr));
    if (n == 0) {
        return CRMPI_ERR_PEER_GONE;
    }
    if (n < 0) {
        return (int)n;
    }
    if (hdr.magic != CRMPI_CTL_MAGIC || hdr.version != CRMPI_CTL_VERSION ||
        hdr.len > CRMPI_CTL_MAX_PAYLOAD) {
        return CRMPI_ERR_PROTO;
    }
    uint8_t *payload = NULL;
    if (hdr.len) {
        payload = malloc(hdr.len);
        if (!payload) {
            return CRMPI_ERR_OUT_OF_RESOURCE;
        }
        n = crmpi_ctl_read_all(fd, payload, hdr.len);
        if (n != (ssize_t)hdr.len) {
            free(payload);
            return n < 0 ? (int)n : CRMPI_ERR_PROTO;
        }
    }
    msg_out->hdr = hdr;
    msg_out->payload = payload;
    return CRMPI_OK;
}

void crmpi_ctl_tcp_keepalive(int fd)
{
    /* Idle 10 s, then a probe every 5 s; 4 unanswered probes: gone. */
    int on = 1, idle = 10, interval = 5, count = (CRMPI_CTL_KEEPALIVE_S - 10) / 5;

    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
}

void crmpi_ctl_msg_free(crmpi_ctl_msg_t *msg)
{
    free(msg->payload);
    msg->payload = NULL;
}

const char *crmpi_ctl_type_name(uint16_t type)
{
    switch (type) {
    case CRMPI_CTL_HELLO: return "HELLO";
    case CRMPI_CTL_JOB_INFO: return "JOB_INFO";
    case CRMPI_CTL_MODEX_PUT: return "MODEX_PUT";
    case CRMPI_CTL_FENCE: return "FENCE";
    case CRMPI_CTL_MODEX_GET: return "MODEX_GET";
    case CRMPI_CTL_ABORT: return "ABORT";
    case CRMPI_CTL_FINALIZE: return "FINALIZE";
    case CRMPI_CTL_REPLY: return "REPLY";
    case CRMPI_CTL_INIT_EXIT: return "INIT_EXIT";
    case CRMPI_CTL_CR_STOP: return "CR_STOP";
    case CRMPI_CTL_CR_START: return "CR_START";
    case CRMPI_CTL_CR_TRACK: return "CR_TRACK";
    case CRMPI_CTL_CR_APP_CKPT: return "CR_APP_CKPT";
    case CRMPI_CTL_AGENT_HELLO: return "AGENT_HELLO";
    case CRMPI_CTL_AGENT_EXIT: return "AGENT_EXIT";
    case CRMPI_CTL_AGENT_ABORT: return "AGENT_ABORT";
    case CRMPI_CTL_AGENT_OUTPUT: return "AGENT_OUTPUT";
    case CRMPI_CTL_AGENT_SIGNAL: return "AGENT_SIGNAL";
    case CRMPI_CTL_AGENT_APP_CKPT: return "AGENT_APP_CKPT";
    case CRMPI_CTL_CKPT_BEGIN: return "CKPT_BEGIN";
    case CRMPI_CTL_CKPT_BOOKMARKS: return "CKPT_BOOKMARKS";
    case CRMPI_CTL_CKPT_EXPECT: return "CKPT_EXPECT";
    case CRMPI_CTL_CKPT_DRAINED: return "CKPT_DRAINED";
    case CRMPI_CTL_CKPT_SUSPEND: return "CKPT_SUSPEND";
    case CRMPI_CTL_CKPT_READY: return "CKPT_READY";
    case CRMPI_CTL_CKPT_DUMP: return "CKPT_DUMP";
    case CRMPI_CTL_CKPT_DUMPED: return "CKPT_DUMPED";
    case CRMPI_CTL_CKPT_CONTINUE: return "CKPT_CONTINUE";
    case CRMPI_CTL_CKPT_CONTINUED: return "CKPT_CONTINUED";
    case CRMPI_CTL_CKPT_ABORT: return "CKPT_ABORT";
    case CRMPI_CTL_CKPT_STORE: return "CKPT_STORE";
    case CRMPI_CTL_CKPT_STORED: return "CKPT_STORED";
    case CRMPI_CTL_CKPT_RESTART: return "CKPT_RESTART";
    case CRMPI_CTL_CKPT_APP_WANTED: return "CKPT_APP_WANTED";
    case CRMPI_CTL_CKPT_APP_DONE: return "CKPT_APP_DONE";
    case CRMPI_CTL_CKPT_PRUNE: return "CKPT_PRUNE";
    case CRMPI_CTL_TOOL_CKPT: return "TOOL_CKPT";
    case CRMPI_CTL_TOOL_PROGRESS: return "TOOL_PROGRESS";
    case CRMPI_CTL_TOOL_STATUS: return "TOOL_STATUS";
    default: return "?";
    }
}

int crmpi_ctl_send_fd(int sock, int fd)
{
    char byte = 0, control[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    struct msghdr msg = {.msg_iov = &iov,
                         .msg_iovlen = 1,
                         .msg_control = control,
                         .msg_controllen = sizeof(control)};
    struct cmsghdr *cmsg;
    ssize_t sent;

    memset(control, 0, sizeof(control));
    cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
    do {
        sent = sendmsg(sock, &msg, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    if (sent == 1)
        return CRMPI_OK;
    return errno == EPIPE || errno == ECONNRESET ? CRMPI_ERR_PEER_GONE : CRMPI_ERR_IO;
}

int crmpi_ctl_recv_fd(int sock, int *fd_out)
{
    char byte, control[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    struct msghdr msg = {.msg_iov = &iov,
                         .msg_iovlen = 1,
                         .msg_control = control,
                         .msg_controllen = sizeof(control)};
    struct cmsghdr *cmsg;
    ssize_t got;

    do {
        got = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    } while (got < 0 && errno == EINTR);
    if (got == 0)
        return CRMPI_ERR_PEER_GONE;
    if (got < 0)
        return CRMPI_ERR_IO;
    cmsg = CMSG_FIRSTHDR(&msg);
    if (!cmsg || cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS ||
        cmsg->cmsg_len != CMSG_LEN(sizeof(int)))
        return CRMPI_ERR_PROTO;
    memcpy(fd_out, CMSG_DATA(cmsg), sizeof(int));
    return CRMPI_OK;
}
