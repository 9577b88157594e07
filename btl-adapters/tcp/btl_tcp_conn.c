/*
 * btl_tcp_conn.c: the receiving half of the tcp BTL (btl_tcp.h): accepted sockets, the
 * handshake check, and the delivery of frames to the receive callbacks.
 *
 * Each accepted socket has one page-aligned receive buffer. A read takes as much as the
 * buffer has room for, and every complete frame in it is handed to its callback in place
 * (no copy); a partial frame stays for the next read. When a large frame is half-read, the
 * next read stops exactly at its end, so that the buffer empties after it and the next
 * frame starts at offset 0 again: large fragments cost one copy out of the kernel, at the
 * page offsets they were sent from (btl_tcp.h, "Copy alignment"). A partial frame is moved
 * to the front only when it does not fit, or while little of a large one has arrived.
 * A frame whose tag has a placer is not read into the buffer at all beyond its header: its
 * payload goes straight into the destination the placer names (btl_tcp.h, "Placement").
 */
#include "config.h"

#include "btl_tcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "log.h"

/* First allocation of a receive buffer: plenty for latency-bound traffic. A connection
 * that streams grows to module->recv_cap. */
#define BTL_TCP_CONN_MIN_CAP (64 * 1024)
/* Smallest read worth a syscall when no frame size is known yet. */
#define BTL_TCP_CONN_MIN_READ (16 * 1024)
/* A half-read frame at least this long is finished by a read that stops at its end. */
#define BTL_TCP_CONN_BIG_FRAME (32 * 1024)
/* Reads per event, so that one flooding peer does not starve the other sockets. */
#define BTL_TCP_CONN_READS_PER_EVENT 4
/* After a large frame, the next read takes at most this much, so that a placed payload
 * (btl.h, "Placement") is read into its destination, not into buf: the frame header, the
 * largest gap and the upper layer's header (a longer one only makes placement rarer). */
#define BTL_TCP_CONN_HEAD_READ 128

/*
 * Placement (btl.h, "Placement"). The frame at `start` names a tag with a placer and its
 * payload is large: once its header is here, the placer says where the payload goes, the
 * bytes already in buf are copied there (at most BTL_TCP_CONN_HEAD_READ of them when the
 * peer streams large frames), and the rest is read with readv() straight into place.
 */

/* `len` bytes of the placed frame arrived: at src (copied into the iov), or already read
 * into the iov (src NULL). Bytes past the iov are the discard and the padding. */
static void btl_tcp_conn_place_advance(btl_tcp_conn_t *conn, const char *src, size_t len)
{
    crmpi_btl_place_t *place = &conn->place;

    conn->place_left -= len;
    while (len > 0 && conn->place_iov < place->iovcnt) {
        struct iovec *iov = &place->iov[conn->place_iov];
        size_t take = len < iov->iov_len ? len : iov->iov_len;

        if (src)
            conn->module->stats.recv_place_copy += take;
        else
            conn->module->stats.recv_placed += take;
        if (src) {
            memcpy(iov->iov_base, src, take);
            src += take;
        }
        iov->iov_base = (char *)iov->iov_base + take;
        iov->iov_len -= take;
        len -= take;
        if (iov->iov_len == 0)
            conn->place_iov++;
    }
}

/* The placement ends: tell the placer once (an abort already did). */
static void btl_tcp_conn_place_end(btl_tcp_conn_t *conn, int status)
{
    const crmpi_btl_placer_t *placer = &crmpi_btl_place_table[conn->place_tag];

    conn->placing = false;
    if (!conn->place_reported)
        placer->placed(&conn->module->super, conn->peer_rank, conn->place.cookie, status);
    conn->place_reported = false;
}

/* Stop writing into the placement now (finalize drops what arrives): the placer hears
 * of it at once, and the rest of the frame is read and dropped to keep the stream whole. */
static void btl_tcp_conn_place_abort(btl_tcp_conn_t *conn)
{
    const crmpi_btl_placer_t *placer = &crmpi_btl_place_table[conn->place_tag];

    if (conn->place_reported)
        return;
    conn->place_reported = true;
    conn->place_iov = conn->place.iovcnt;
    placer->placed(&conn->module->super, conn->peer_rank, conn->place.cookie, CRMPI_ERR_UNREACH);
}

/* Start placing the incomplete frame `fh` at `start`, if its tag's placer takes it.
 * @return true when placing (buf is then empty), false to deliver the frame whole. */
static bool btl_tcp_conn_place_begin(btl_tcp_conn_t *conn, const btl_tcp_frame_hdr_t *fh)
{
    btl_tcp_module_t *module = conn->module;
    const crmpi_btl_placer_t *placer = &crmpi_btl_place_table[fh->tag];
    size_t avail = conn->fill - conn->start;
    size_t hdr_end = sizeof(*fh) + fh->gap + placer->hdr_len;
    size_t payload_len;

    if (!(module->super.flags & CRMPI_BTL_FLAG_RECV_PLACE) || !placer->hdr_len ||
        fh->length < placer->hdr_len + CRMPI_BTL_PLACE_MIN || avail < hdr_end)
        return false;
    payload_len = fh->length - placer->hdr_len;
    if (!placer->place(&module->super, conn->peer_rank, (const char *)(fh + 1) + fh->gap,
                       payload_len, &conn->place))
        return false;
    conn->placing = true;
    conn->place_reported = false;
    conn->place_tag = fh->tag;
    conn->place_iov = 0;
    conn->place_left = btl_tcp_frame_size(fh) - hdr_end;
    if (!crmpi_btl_place_valid(&conn->place, payload_len)) {
        /* A placer bug, not the peer's: the payload cannot go anywhere sensible. */
        crmpi_log_error("btl:tcp: rank %u <- rank %u: the placer of tag %u described a "
                        "destination that is not the %zu-byte payload; fragment dropped",
                        module->my_rank, conn->peer_rank, fh->tag, payload_len);
        btl_tcp_conn_place_abort(conn);
    }
    /* The frame is incomplete, so everything in buf after its header is its own. */
    btl_tcp_conn_place_advance(conn, conn->buf + conn->start + hdr_end, avail - hdr_end);
    conn->start = conn->fill = 0;
    return true;
}

/* Read the rest of the placed frame: into the iov, then the discard and padding into buf
 * (empty meanwhile), never past the frame's end.
 * @return 1 when the frame is complete, 0 when the socket has nothing more for now,
 *         -1 when the connection was closed (conn is freed; the placer heard of it) */
static int btl_tcp_conn_place_read(btl_tcp_conn_t *conn)
{
    btl_tcp_module_t *module = conn->module;

    while (conn->place_left > 0) {
        size_t want;
        ssize_t got;

        if (conn->place_iov < conn->place.iovcnt) {
            want = 0;
            for (int i = conn->place_iov; i < conn->place.iovcnt; i++)
                want += conn->place.iov[i].iov_len;
            got = readv(conn->fd, &conn->place.iov[conn->place_iov],
                        conn->place.iovcnt - conn->place_iov);
        } else {
            want = conn->place_left < conn->cap ? conn->place_left : conn->cap;
            got = read(conn->fd, conn->buf, want);
        }
        if (got < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            crmpi_log_error("btl:tcp: rank %u <- rank %u (%s): read: %s (in the middle of a "
                            "fragment)",
                            module->my_rank, conn->peer_rank, conn->addr_text, strerror(errno));
            btl_tcp_conn_destroy(conn);
            return -1;
        }
        if (got == 0) {
            crmpi_log_error("btl:tcp: rank %u <- rank %u (%s): connection closed in the middle "
                            "of a fragment (%zu bytes of it still missing); the peer died or "
                            "reset",
                            module->my_rank, conn->peer_rank, conn->addr_text, conn->place_left);
            btl_tcp_conn_destroy(conn);
            return -1;
        }
        btl_tcp_conn_place_advance(conn, NULL, (size_t)got);
        if (conn->place_left > 0 && (size_t)got < want)
            return 0; /* drained what the kernel had */
    }
    btl_tcp_conn_place_end(conn, CRMPI_OK);
    return 1;
}

void btl_tcp_conn_destroy(btl_tcp_conn_t *conn)
{
    btl_tcp_module_t *module = conn->module;

    if (conn->placing)
        btl_tcp_conn_place_end(conn, CRMPI_ERR_UNREACH); /* the caller logged why */

    if (conn->prev)
        conn->prev->next = conn->next;
    else
        module->conns = conn->next;
    if (conn->next)
        conn->next->prev = conn->prev;
    module->num_conns--;
    epoll_ctl(module->epoll_fd, EPOLL_CTL_DEL, conn->fd, NULL);
    close(conn->fd);
    free(conn->buf);
    free(conn);
}

void btl_tcp_conn_accept_all(btl_tcp_module_t *module, btl_tcp_listener_t *listener)
{
    for (;;) {
        struct sockaddr_in addr;
        socklen_t addr_len = sizeof(addr);
        struct epoll_event ev = {.events = EPOLLIN};
        char addr_text[INET_ADDRSTRLEN];
        btl_tcp_conn_t *conn;
        int fd;

        fd = accept4(listener->fd, (struct sockaddr *)&addr, &addr_len,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;
            /* EMFILE and friends persist, and the listening socket stays readable: say it
             * once, not at every progress call. */
            if (module->accept_errno != errno)
                crmpi_log_error("btl:tcp: rank %u: accept: %s (peers that connect now wait "
                                "until it succeeds)",
                                module->my_rank, strerror(errno));
            module->accept_errno = errno;
            return;
        }
        module->accept_errno = 0;
        if (btl_tcp_socket_tune(module, fd) != 0)
            crmpi_log_warn("btl:tcp: rank %u: setsockopt on an accepted socket: %s",
                           module->my_rank, strerror(errno));
        conn = calloc(1, sizeof(*conn));
        if (!conn || !(conn->buf = btl_tcp_page_alloc(BTL_TCP_CONN_MIN_CAP))) {
            crmpi_log_error("btl:tcp: rank %u: out of memory for an accepted connection; "
                            "closed",
                            module->my_rank);
            free(conn);
            close(fd);
            continue;
        }
        conn->poll.kind = BTL_TCP_POLL_CONN;
        conn->module = module;
        conn->fd = fd;
        conn->cap = BTL_TCP_CONN_MIN_CAP;
        inet_ntop(AF_INET, &addr.sin_addr, addr_text, sizeof(addr_text));
        snprintf(conn->addr_text, sizeof(conn->addr_text), "%s:%u", addr_text,
                 ntohs(addr.sin_port));
        ev.data.ptr = &conn->poll;
        if (epoll_ctl(module->epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
            crmpi_log_error("btl:tcp: rank %u: epoll_ctl for the connection from %s: %s; "
                            "closed",
                            module->my_rank, conn->addr_text, strerror(errno));
            free(conn->buf);
            free(conn);
            close(fd);
            continue;
        }
        conn->next = module->conns;
        if (module->conns)
            module->conns->prev = conn;
        module->conns = conn;
        module->num_conns++;
    }
}

/*
 * Let the kernel delay this connection's acknowledgements. Connections are one-way, so an
 * ACK can never ride on data going back: in quick-ack mode every fragment costs a pure ACK
 * segment, which the receiver sends and, on loopback, the sender's TCP processes on the
 * receiver's CPU, in its critical path. Delayed, ACKs still go out for every second segment
 * (and at once when the window needs it), which is all TCP's flow control needs. Measured
 * on loopback, 1-byte one-way latency: 7.5 us quick-ack, 6.1 us delayed. The kernel leaves
 * this mode again after a delayed-ACK timeout (tcp(7), TCP_QUICKACK: "not permanent"),
 * hence after every read; the setsockopt costs less than the ACK it saves.
 */
static void btl_tcp_conn_delay_acks(btl_tcp_conn_t *conn)
{
    int zero = 0;

    setsockopt(conn->fd, IPPROTO_TCP, TCP_QUICKACK, &zero, sizeof(zero));
}

/* Check the first bytes of a connection. @return false (logged) to close it. */
static bool btl_tcp_conn_handshake(btl_tcp_conn_t *conn)
{
    btl_tcp_module_t *module = conn->module;
    btl_tcp_handshake_t hs;
    char why[128];

    memcpy(&hs, conn->buf + conn->start, sizeof(hs));
    if (hs.magic != BTL_TCP_MAGIC)
        snprintf(why, sizeof(why), "not a crmpi tcp connection (first word 0x%08x)", hs.magic);
    else if (hs.version != BTL_TCP_VERSION)
        snprintf(why, sizeof(why), "protocol version %u, this rank speaks %u", hs.version,
                 BTL_TCP_VERSION);
    else if (btl_tcp_auth_check(module, &hs, why, sizeof(why))) {
        conn->identified = true;
        conn->peer_rank = hs.sender_rank;
        conn->start += sizeof(hs);
        crmpi_fw_verbose(&crmpi_btl_framework, 20, "tcp: rank %u <- rank %u (%s): accepted",
                         module->my_rank, conn->peer_rank, conn->addr_text);
        return true;
    }
    crmpi_log_warn("btl:tcp: rank %u: refused the connection from %s: %s", module->my_rank,
                   conn->addr_text, why);
    return false;
}

/* Hand every complete frame in [start, fill) to its callback (or drop it: finalize).
 * @return frames, or -1 when the stream is corrupt (logged; the caller closes). */
static int btl_tcp_conn_parse(btl_tcp_conn_t *conn, bool deliver)
{
    btl_tcp_module_t *module = conn->module;
    int frames = 0;

    if (!conn->identified) {
        if (conn->fill - conn->start < sizeof(btl_tcp_handshake_t))
            return 0;
        if (!btl_tcp_conn_handshake(conn))
            return -1;
    }
    while (conn->fill - conn->start >= sizeof(btl_tcp_frame_hdr_t)) {
        const btl_tcp_frame_hdr_t *fh = (const btl_tcp_frame_hdr_t *)(conn->buf + conn->start);
        size_t size;

        if (fh->length > BTL_TCP_FRAME_MAX || fh->tag >= CRMPI_BTL_TAG_MAX) {
            crmpi_log_error("btl:tcp: rank %u <- rank %u (%s): corrupt stream (fragment of %u "
                            "bytes with tag %u); connection closed",
                            module->my_rank, conn->peer_rank, conn->addr_text, fh->length, fh->tag);
            return -1;
        }
        size = btl_tcp_frame_size(fh);
        if (conn->fill - conn->start < size) {
            if (deliver && btl_tcp_conn_place_begin(conn, fh)) {
                conn->large_last = true;
                return frames;
            }
            break;
        }
        /* Longer than any eager message: part of a rendezvous, whose next frames are the
         * FRAGs a placer takes. An eager stream keeps its one read per frame. */
        conn->large_last = fh->length > module->super.eager_limit + BTL_TCP_CONN_HEAD_READ;
        if (deliver) {
            crmpi_btl_recv_fn_t fn = crmpi_btl_recv_table[fh->tag];

            module->stats.recv_delivered += size;

            if (fn)
                fn(&module->super, conn->peer_rank, (const char *)(fh + 1) + fh->gap, fh->length);
            else
                crmpi_log_error("btl:tcp: rank %u <- rank %u: no receive callback for tag %u; "
                                "fragment of %u bytes dropped",
                                module->my_rank, conn->peer_rank, fh->tag, fh->length);
        }
        conn->start += size;
        frames++;
    }
    if (conn->start == conn->fill)
        conn->start = conn->fill = 0;
    return frames;
}

/* Move the undelivered bytes to a new page-aligned buffer of `cap` bytes, at offset 0.
 * @return false when out of memory (the old buffer stays). */
static bool btl_tcp_conn_resize(btl_tcp_conn_t *conn, size_t cap)
{
    size_t pending = conn->fill - conn->start;
    char *buf = btl_tcp_page_alloc(cap);

    if (!buf)
        return false;
    memcpy(buf, conn->buf + conn->start, pending);
    free(conn->buf);
    conn->buf = buf;
    conn->cap = cap;
    conn->start = 0;
    conn->fill = pending;
    return true;
}

/* Make room after `fill` for the next read. @return the bytes to read, 0 when out of memory. */
static size_t btl_tcp_conn_make_room(btl_tcp_conn_t *conn)
{
    size_t pending = conn->fill - conn->start;
    size_t frame = 0;
    size_t want;
    size_t len;

    if (conn->identified && pending >= sizeof(btl_tcp_frame_hdr_t))
        frame = btl_tcp_frame_size((const btl_tcp_frame_hdr_t *)(conn->buf + conn->start));
    /* Room needed from `start`: the whole pending frame, or a useful read. */
    want = frame > pending ? frame : pending + BTL_TCP_CONN_MIN_READ;
    /* Move when the room is not there, and also when a big frame has only begun: the rest
     * of it then lands at the page offsets it was sent from (btl_tcp.h, copy alignment). */
    if (conn->start > 0 && (conn->cap - conn->start < want || (frame >= BTL_TCP_CONN_BIG_FRAME &&
                                                               pending <= BTL_TCP_CONN_MIN_READ))) {
        memmove(conn->buf, conn->buf + conn->start, pending);
        conn->start = 0;
        conn->fill = pending;
    }
    if (conn->cap < want &&
        !btl_tcp_conn_resize(conn, want > conn->module->recv_cap ? want : conn->module->recv_cap))
        return 0;
    len = conn->cap - conn->fill;
    /* After a large frame, the next header alone: its payload may be placed. */
    if (conn->large_last && pending == 0 && len > BTL_TCP_CONN_HEAD_READ &&
        (conn->module->super.flags & CRMPI_BTL_FLAG_RECV_PLACE))
        len = BTL_TCP_CONN_HEAD_READ;
    /* Stop at the end of a big frame: the buffer then empties, and the next frame starts at
     * offset 0 instead of being moved there. */
    if (frame >= BTL_TCP_CONN_BIG_FRAME && conn->start + frame - conn->fill < len)
        len = conn->start + frame - conn->fill;
    return len;
}

/* The peer closed its end. At a frame boundary that is its normal shutdown. */
static void btl_tcp_conn_eof(btl_tcp_conn_t *conn)
{
    btl_tcp_module_t *module = conn->module;
    size_t pending = conn->fill - conn->start;

    if (!conn->identified && pending > 0)
        crmpi_log_warn("btl:tcp: rank %u: the connection from %s closed before its handshake "
                       "was complete",
                       module->my_rank, conn->addr_text);
    else if (pending > 0)
        crmpi_log_error("btl:tcp: rank %u <- rank %u (%s): connection closed in the middle of "
                        "a fragment (%zu bytes of it arrived); the peer died or reset",
                        module->my_rank, conn->peer_rank, conn->addr_text, pending);
    else
        crmpi_fw_verbose(&crmpi_btl_framework, 20, "tcp: rank %u <- rank %u (%s): closed",
                         module->my_rank, conn->peer_rank, conn->addr_text);
    btl_tcp_conn_destroy(conn);
}

int btl_tcp_conn_event(btl_tcp_conn_t *conn, uint32_t events, bool deliver)
{
    btl_tcp_module_t *module = conn->module;
    int frames = 0;

    for (int round = 0; round < BTL_TCP_CONN_READS_PER_EVENT; round++) {
        size_t room;
        ssize_t got;
        int parsed;

        if (conn->placing) {
            if (!deliver)
                btl_tcp_conn_place_abort(conn); /* finalize: nobody receives any more */
            parsed = btl_tcp_conn_place_read(conn);
            if (parsed < 0)
                return frames;
            frames += parsed;
            if (conn->placing)
                break; /* the rest of the payload is not here yet */
            btl_tcp_conn_delay_acks(conn);
            continue;
        }
        room = btl_tcp_conn_make_room(conn);
        if (room == 0) {
            crmpi_log_error("btl:tcp: rank %u <- rank %u (%s): out of memory for the receive "
                            "buffer; connection closed",
                            module->my_rank, conn->peer_rank, conn->addr_text);
            btl_tcp_conn_destroy(conn);
            return frames;
        }
        got = read(conn->fd, conn->buf + conn->fill, room);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            crmpi_log_error("btl:tcp: rank %u <- rank %u (%s): read: %s%s", module->my_rank,
                            conn->peer_rank, conn->addr_text, strerror(errno),
                            conn->fill > conn->start ? " (in the middle of a fragment)" : "");
            btl_tcp_conn_destroy(conn);
            return frames;
        }
        if (got == 0) {
            btl_tcp_conn_eof(conn);
            return frames;
        }
        conn->fill += (size_t)got;
        parsed = btl_tcp_conn_parse(conn, deliver);
        if (parsed < 0) {
            btl_tcp_conn_destroy(conn);
            return frames;
        }
        frames += parsed;
        /* After the callbacks, which may answer at once: not in the way of the answer. */
        btl_tcp_conn_delay_acks(conn);
        if ((size_t)got < room)
            break; /* drained what the kernel had */
        /* The peer streams: grow now so the next reads are large (if memory is short, the
         * small buffer still works). */
        if (conn->cap < module->recv_cap)
            btl_tcp_conn_resize(conn, module->recv_cap);
    }
    return frames;
}
