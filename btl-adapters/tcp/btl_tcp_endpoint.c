/*
 * btl_tcp_endpoint.c: the sending half of the tcp BTL (btl_tcp.h): the lazy connect, the
 * handshake, framing, and the per-endpoint send queue.
 *
 * Send path: when nothing is queued and the socket is connected, one sendmsg() writes the
 * frame header, the caller's hdr and the payload straight from the user's buffer (a
 * contiguous payload) or from the module's bounce buffer (a packed non-contiguous one);
 * whatever the kernel did not take is copied into the queue, and progress writes it when
 * epoll says the socket has room again. Once anything is queued, later fragments go behind
 * it, which keeps the per-peer order. The queue is bounded: above queue_limit bytes, send
 * answers CRMPI_ERR_RESOURCE_BUSY and consumes nothing, so a fast sender cannot make the
 * library buffer a whole message.
 */
#include "config.h"

#include "btl_tcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "log.h"

/* First allocation of a send queue; it doubles when a burst needs more. */
#define BTL_TCP_SENDQ_MIN_CAP (64 * 1024)

/* The gap before a fragment and the padding after it (btl_tcp.h, "Wire format"). */
static const char btl_tcp_endpoint_zeros[BTL_TCP_GAP_MAX];

static size_t btl_tcp_sendq_len(const btl_tcp_sendq_t *queue)
{
    return queue->tail - queue->head;
}

/* Append the bytes of iov[] after the first `skip` of them (those the kernel took). */
static int btl_tcp_sendq_append(btl_tcp_sendq_t *queue, const struct iovec *iov, int iovcnt,
                                size_t skip)
{
    size_t need = 0;
    bool was_empty = queue->head == queue->tail;

    for (int i = 0; i < iovcnt; i++)
        need += iov[i].iov_len;
    need -= skip;
    if (queue->cap - queue->tail < need) {
        size_t len = queue->tail - queue->head;

        if (queue->head != 0) {
            memmove(queue->buf, queue->buf + queue->head, len);
            queue->head = 0;
            queue->tail = len;
        }
        if (queue->cap - queue->tail < need) {
            size_t cap = queue->cap ? queue->cap : BTL_TCP_SENDQ_MIN_CAP;
            char *buf;

            while (cap < len + need)
                cap *= 2;
            buf = btl_tcp_page_alloc(cap);
            if (!buf)
                return CRMPI_ERR_OUT_OF_RESOURCE;
            if (len)
                memcpy(buf, queue->buf, len);
            free(queue->buf);
            queue->buf = buf;
            queue->cap = cap;
        }
    }
    /* Appended to an empty queue, these bytes are the rest of one unit (a handshake, or a
     * frame the kernel took part of); behind a non-empty queue, whole frames. */
    if (was_empty)
        queue->unit_left = need;
    for (int i = 0; i < iovcnt; i++) {
        size_t len = iov[i].iov_len;

        if (skip >= len) {
            skip -= len;
            continue;
        }
        memcpy(queue->buf + queue->tail, (const char *)iov[i].iov_base + skip, len - skip);
        queue->tail += len - skip;
        skip = 0;
    }
    return CRMPI_OK;
}

/* Drop `nbytes` the kernel took from the front. @return the frames that ended in them. */
static int btl_tcp_sendq_consume(btl_tcp_sendq_t *queue, size_t nbytes)
{
    int frames = 0;

    while (nbytes > 0) {
        size_t take = nbytes < queue->unit_left ? nbytes : queue->unit_left;

        queue->head += take;
        queue->unit_left -= take;
        nbytes -= take;
        if (queue->unit_left == 0) {
            frames++;
            if (queue->head < queue->tail) {
                btl_tcp_frame_hdr_t fh;

                memcpy(&fh, queue->buf + queue->head, sizeof(fh));
                queue->unit_left = btl_tcp_frame_size(&fh);
            }
        }
    }
    if (queue->head == queue->tail)
        queue->head = queue->tail = 0;
    return frames;
}

size_t btl_tcp_endpoint_queued_frames(const crmpi_btl_endpoint_t *ep)
{
    const btl_tcp_sendq_t *queue = &ep->queue;
    size_t frames = 0;
    size_t pos = queue->head;

    if (pos == queue->tail)
        return 0;
    pos += queue->unit_left;
    frames++;
    while (pos < queue->tail) {
        btl_tcp_frame_hdr_t fh;

        memcpy(&fh, queue->buf + pos, sizeof(fh));
        pos += btl_tcp_frame_size(&fh);
        frames++;
    }
    return frames;
}

int btl_tcp_endpoint_create(btl_tcp_module_t *module, uint32_t peer_rank,
                            const struct sockaddr_in *addr, const uint8_t *listen_nonce,
                            crmpi_btl_endpoint_t **ep_out)
{
    crmpi_btl_endpoint_t *ep = calloc(1, sizeof(*ep));
    char addr_text[INET_ADDRSTRLEN];

    if (!ep) {
        crmpi_log_error("btl:tcp: rank %u: out of memory for the endpoint of rank %u",
                        module->my_rank, peer_rank);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    ep->poll.kind = BTL_TCP_POLL_ENDPOINT;
    ep->module = module;
    ep->peer_rank = peer_rank;
    ep->addr = *addr;
    memcpy(ep->listen_nonce, listen_nonce, sizeof(ep->listen_nonce));
    ep->state = BTL_TCP_EP_IDLE;
    ep->fd = -1;
    inet_ntop(AF_INET, &addr->sin_addr, addr_text, sizeof(addr_text));
    snprintf(ep->addr_text, sizeof(ep->addr_text), "%s:%u", addr_text, ntohs(addr->sin_port));
    *ep_out = ep;
    return CRMPI_OK;
}

static void btl_tcp_endpoint_close(crmpi_btl_endpoint_t *ep)
{
    if (ep->fd < 0)
        return;
    /* Explicitly, because epoll forgets an fd only when every duplicate of it is closed, and
     * a fork()ing application holds duplicates for a while. */
    epoll_ctl(ep->module->epoll_fd, EPOLL_CTL_DEL, ep->fd, NULL);
    close(ep->fd);
    ep->fd = -1;
    if (ep->poll_events & EPOLLOUT)
        ep->module->num_writing--;
    ep->poll_events = 0;
}

void btl_tcp_endpoint_destroy(crmpi_btl_endpoint_t *ep)
{
    /* A plain close(): what the kernel already holds is still delivered, then FIN, which
     * the peer reads as a shutdown at a frame boundary. */
    btl_tcp_endpoint_close(ep);
    free(ep->queue.buf);
    free(ep);
}

/* The peer cannot be reached any more: say so once, with the cause, and drop everything. */
static void btl_tcp_endpoint_fail(crmpi_btl_endpoint_t *ep, const char *what, int err)
{
    size_t lost = btl_tcp_sendq_len(&ep->queue);
    char lost_text[96] = "";

    if (lost)
        snprintf(lost_text, sizeof(lost_text), " (%zu queued fragments, %zu bytes, dropped)",
                 btl_tcp_endpoint_queued_frames(ep), lost);
    crmpi_log_error("btl:tcp: rank %u -> rank %u (%s): %s: %s%s", ep->module->my_rank,
                    ep->peer_rank, ep->addr_text, what,
                    err ? strerror(err) : "connection closed by the peer", lost_text);
    btl_tcp_endpoint_close(ep);
    free(ep->queue.buf);
    memset(&ep->queue, 0, sizeof(ep->queue));
    ep->state = BTL_TCP_EP_FAILED;
}

/* Ask epoll for `events` on the socket (EPOLLOUT while bytes wait, nothing otherwise: errors
 * and hang-ups are always reported). @return false after failing the endpoint. */
static bool btl_tcp_endpoint_poll_set(crmpi_btl_endpoint_t *ep, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = &ep->poll};

    if (ep->poll_events == events)
        return true;
    if (epoll_ctl(ep->module->epoll_fd, EPOLL_CTL_MOD, ep->fd, &ev) != 0) {
        btl_tcp_endpoint_fail(ep, "epoll_ctl", errno);
        return false;
    }
    if ((events ^ ep->poll_events) & EPOLLOUT) {
        if (events & EPOLLOUT)
            ep->module->num_writing++;
        else
            ep->module->num_writing--;
    }
    ep->poll_events = events;
    return true;
}

/* Write as much of the queue as the socket takes. @return frames that left completely. */
static int btl_tcp_endpoint_flush(crmpi_btl_endpoint_t *ep)
{
    int frames = 0;

    while (btl_tcp_sendq_len(&ep->queue) > 0) {
        size_t len = btl_tcp_sendq_len(&ep->queue);
        /* MSG_NOSIGNAL: a peer that died must give EPIPE here, not kill us with SIGPIPE. */
        ssize_t sent = send(ep->fd, ep->queue.buf + ep->queue.head, len, MSG_NOSIGNAL);

        if (sent < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            btl_tcp_endpoint_fail(ep, "send", errno);
            return frames;
        }
        frames += btl_tcp_sendq_consume(&ep->queue, (size_t)sent);
        if ((size_t)sent < len)
            break; /* the socket buffer is full; epoll says when it has room */
    }
    if (btl_tcp_sendq_len(&ep->queue) == 0)
        btl_tcp_endpoint_poll_set(ep, 0);
    return frames;
}

/* First send to the peer: open the socket, start connecting, queue the handshake. */
static int btl_tcp_endpoint_connect(crmpi_btl_endpoint_t *ep)
{
    btl_tcp_module_t *module = ep->module;
    btl_tcp_handshake_t hs = {
        .magic = BTL_TCP_MAGIC,
        .version = BTL_TCP_VERSION,
        .sender_rank = module->my_rank,
        .receiver_rank = ep->peer_rank,
        .jobid = module->jobid,
    };
    struct iovec iov = {.iov_base = &hs, .iov_len = sizeof(hs)};
    struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = &ep->poll};

    if (btl_tcp_auth_sign(ep, &hs) != 0) {
        btl_tcp_endpoint_fail(ep, "getrandom", errno);
        return CRMPI_ERR_UNREACH;
    }
    ep->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (ep->fd < 0) {
        btl_tcp_endpoint_fail(ep, "socket", errno);
        return CRMPI_ERR_UNREACH;
    }
    /* Before connect(): SO_RCVBUF/SO_SNDBUF set later do not change the window scale
     * negotiated in the SYN (tcp(7)). */
    if (btl_tcp_socket_tune(module, ep->fd) != 0) {
        btl_tcp_endpoint_fail(ep, "setsockopt", errno);
        return CRMPI_ERR_UNREACH;
    }
    if (epoll_ctl(module->epoll_fd, EPOLL_CTL_ADD, ep->fd, &ev) != 0) {
        btl_tcp_endpoint_fail(ep, "epoll_ctl", errno);
        return CRMPI_ERR_UNREACH;
    }
    ep->poll_events = EPOLLOUT;
    module->num_writing++;
    if (btl_tcp_sendq_append(&ep->queue, &iov, 1, 0) != CRMPI_OK) {
        btl_tcp_endpoint_fail(ep, "send queue", ENOMEM);
        return CRMPI_ERR_UNREACH;
    }
    if (connect(ep->fd, (const struct sockaddr *)&ep->addr, sizeof(ep->addr)) == 0) {
        ep->state = BTL_TCP_EP_CONNECTED;
        btl_tcp_endpoint_flush(ep);
    } else if (errno == EINPROGRESS) {
        ep->state = BTL_TCP_EP_CONNECTING;
    } else {
        btl_tcp_endpoint_fail(ep, "connect", errno);
        return CRMPI_ERR_UNREACH;
    }
    crmpi_fw_verbose(&crmpi_btl_framework, 20, "tcp: rank %u -> rank %u (%s): %s", module->my_rank,
                     ep->peer_rank, ep->addr_text,
                     ep->state == BTL_TCP_EP_CONNECTED ? "connected" : "connecting");
    return ep->state == BTL_TCP_EP_FAILED ? CRMPI_ERR_UNREACH : CRMPI_OK;
}

/*
 * The gap that keeps a payload's copies out of the slow window (btl_tcp.h, "Copy
 * alignment"). `dst` is the page offset where the payload would land without a gap.
 */
static uint8_t btl_tcp_endpoint_gap(uintptr_t dst, const void *src)
{
    uintptr_t delta = (dst - (uintptr_t)src) & (BTL_TCP_PAGE - 1);

    /* 1 to 31 bytes ahead: 32 more puts it 33 to 63 ahead. */
    if (delta >= 1 && delta < 32)
        return 32;
    /* 1 to 31 bytes behind is fast here, but the receiver, copying back into a buffer
     * placed like ours, would be 1 to 31 ahead: 64 more puts us 33 to 63 ahead. */
    if (delta > BTL_TCP_PAGE - 32)
        return 64;
    return 0;
}

int btl_tcp_endpoint_send(crmpi_btl_module_t *base, crmpi_btl_endpoint_t *ep, uint8_t tag,
                          const void *hdr, size_t hdr_len, crmpi_convertor_t *payload,
                          size_t payload_len)
{
    btl_tcp_module_t *module = (btl_tcp_module_t *)base;
    const size_t length = hdr_len + payload_len;
    btl_tcp_frame_hdr_t fh = {.length = (uint32_t)length, .tag = tag};
    struct iovec iov[5];
    int iovcnt = 0;
    char *contiguous = NULL;
    const char *data = NULL;
    size_t start_pos = 0;
    size_t written = 0;
    size_t pad;
    bool was_empty;
    bool direct;

    if (ep->state == BTL_TCP_EP_FAILED)
        return CRMPI_ERR_UNREACH;
    if (length > base->max_send_size || tag >= CRMPI_BTL_TAG_MAX) {
        crmpi_log_error("btl:tcp: rank %u -> rank %u: fragment of %zu bytes with tag %u refused "
                        "(max_send_size %zu, tags below %d)",
                        module->my_rank, ep->peer_rank, length, tag, base->max_send_size,
                        CRMPI_BTL_TAG_MAX);
        return CRMPI_ERR_BAD_PARAM;
    }
    if (ep->state == BTL_TCP_EP_IDLE && btl_tcp_endpoint_connect(ep) != CRMPI_OK)
        return CRMPI_ERR_UNREACH;
    if (btl_tcp_sendq_len(&ep->queue) > module->queue_limit)
        return CRMPI_ERR_RESOURCE_BUSY;

    if (payload_len) {
        start_pos = payload->position;
        contiguous = crmpi_convertor_contiguous_ptr(payload);
        if (contiguous) {
            /* Straight from the user's buffer: the kernel copy is the only copy. */
            data = contiguous + start_pos;
        } else {
            size_t packed = crmpi_convertor_pack(payload, module->bounce, payload_len);

            if (packed != payload_len) {
                crmpi_log_error("btl:tcp: rank %u -> rank %u: payload of %zu bytes requested, "
                                "but only %zu are left in the datatype's stream",
                                module->my_rank, ep->peer_rank, payload_len, packed);
                crmpi_convertor_set_position(payload, start_pos);
                return CRMPI_ERR_BAD_PARAM;
            }
            data = module->bounce;
        }
    }

    was_empty = btl_tcp_sendq_len(&ep->queue) == 0;
    direct = ep->state == BTL_TCP_EP_CONNECTED && was_empty;
    if (payload_len >= BTL_TCP_GAP_MIN_PAYLOAD) {
        /* Written now, the frame starts a page of the socket (the kernel reuses a consumed
         * page from offset 0); queued, it starts at `tail` of a page-aligned buffer. */
        uintptr_t frame_start = direct ? 0 : ep->queue.tail;

        fh.gap = btl_tcp_endpoint_gap(frame_start + sizeof(fh) + hdr_len, data);
    }
    iov[iovcnt++] = (struct iovec){.iov_base = &fh, .iov_len = sizeof(fh)};
    if (fh.gap)
        iov[iovcnt++] =
            (struct iovec){.iov_base = (void *)btl_tcp_endpoint_zeros, .iov_len = fh.gap};
    if (hdr_len)
        iov[iovcnt++] = (struct iovec){.iov_base = (void *)hdr, .iov_len = hdr_len};
    if (payload_len)
        iov[iovcnt++] = (struct iovec){.iov_base = (void *)data, .iov_len = payload_len};
    pad = btl_tcp_frame_size(&fh) - sizeof(fh) - fh.gap - length;
    if (pad)
        iov[iovcnt++] = (struct iovec){.iov_base = (void *)btl_tcp_endpoint_zeros, .iov_len = pad};
    if (direct) {
        struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)iovcnt};

        for (;;) {
            ssize_t sent = sendmsg(ep->fd, &msg, MSG_NOSIGNAL);

            if (sent >= 0) {
                written = (size_t)sent;
                break;
            }
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            btl_tcp_endpoint_fail(ep, "send", errno);
            return CRMPI_ERR_UNREACH;
        }
    }
    module->stats.sent_direct += written;
    module->stats.sent_queued += btl_tcp_frame_size(&fh) - written;
    if (written < btl_tcp_frame_size(&fh)) {
        if (btl_tcp_sendq_append(&ep->queue, iov, iovcnt, written) != CRMPI_OK) {
            /* Part of the frame may be on the wire already: the stream cannot continue. */
            btl_tcp_endpoint_fail(ep, "send queue", ENOMEM);
            return CRMPI_ERR_OUT_OF_RESOURCE;
        }
        if (was_empty && ep->state == BTL_TCP_EP_CONNECTED &&
            !btl_tcp_endpoint_poll_set(ep, EPOLLOUT))
            return CRMPI_ERR_UNREACH;
    }
    if (contiguous)
        crmpi_convertor_set_position(payload, start_pos + payload_len);
    return CRMPI_OK;
}

int btl_tcp_endpoint_event(crmpi_btl_endpoint_t *ep, uint32_t events)
{
    if (ep->fd < 0)
        return 0; /* failed earlier in this round of events */
    if (ep->state == BTL_TCP_EP_CONNECTING) {
        int err = 0;
        socklen_t len = sizeof(err);

        /* A non-blocking connect reports its outcome as writability plus SO_ERROR
         * (connect(2), EINPROGRESS). */
        if (getsockopt(ep->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            err = errno;
        if (err) {
            btl_tcp_endpoint_fail(ep, "connect", err);
            return 0;
        }
        if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
            return 0;
        ep->state = BTL_TCP_EP_CONNECTED;
        crmpi_fw_verbose(&crmpi_btl_framework, 20, "tcp: rank %u -> rank %u (%s): connected",
                         ep->module->my_rank, ep->peer_rank, ep->addr_text);
    }
    if (btl_tcp_sendq_len(&ep->queue) > 0)
        return btl_tcp_endpoint_flush(ep); /* a broken socket fails here, with its errno */
    if (events & (EPOLLERR | EPOLLHUP)) {
        /* Idle, and the peer reset the connection: report it now rather than at the next
         * send, when the cause is gone. */
        int err = 0;
        socklen_t len = sizeof(err);

        if (getsockopt(ep->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            err = errno;
        btl_tcp_endpoint_fail(ep, "connection", err);
    }
    return 0;
}

bool btl_tcp_endpoint_busy(const crmpi_btl_endpoint_t *ep)
{
    return ep->fd >= 0 && (ep->state == BTL_TCP_EP_CONNECTING || btl_tcp_sendq_len(&ep->queue) > 0);
}
