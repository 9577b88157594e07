/*
 * btl_tcp_module.c: the tcp module's slots (btl.h): creation with its listening socket,
 * add_procs / del_procs, progress and finalize (btl_tcp.h).
 */
#include "config.h"

#include "btl_tcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "log.h"

/* Events taken from epoll per progress call; more wait for the next call. */
#define BTL_TCP_EVENTS_MAX 64
/* Accepted sockets read directly, without epoll, when no outgoing socket waits to write
 * (see btl_tcp_module_progress). */
#define BTL_TCP_DIRECT_READ_MAX 1
/* On the direct-read path, one progress call in this many still asks epoll (new
 * connections, errors on idle outgoing sockets). */
#define BTL_TCP_EPOLL_EVERY 16

void *btl_tcp_page_alloc(size_t size)
{
    void *mem;

    return posix_memalign(&mem, BTL_TCP_PAGE, size) == 0 ? mem : NULL;
}

int btl_tcp_socket_tune(const btl_tcp_module_t *module, int fd)
{
    int one = 1;

    /* Every fragment is one complete message for the PML: Nagle would hold small ones back
     * waiting for an acknowledgement, which is pure latency here. */
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
        return -1;
    if (module->sndbuf) {
        int size = (int)module->sndbuf;

        if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size)) != 0)
            return -1;
    }
    if (module->rcvbuf) {
        int size = (int)module->rcvbuf;

        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)) != 0)
            return -1;
    }
    return 0;
}

/* Tries at a port every published address can take (see btl_tcp_module_listen). */
#define BTL_TCP_LISTEN_TRIES 16

/* A listening socket on addr:port (port 0: the kernel picks). @return the fd, or -1 with
 * errno and *what_out naming the call that failed. */
static int btl_tcp_module_listen_on(btl_tcp_module_t *module, struct in_addr addr, uint16_t port,
                                    const char **what_out)
{
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr = addr, .sin_port = htons(port)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int saved;

    if (fd < 0) {
        *what_out = "socket";
        return -1;
    }
    /* Accepted sockets inherit SO_RCVBUF, which must be set before the connection is made
     * to size the TCP window (tcp(7)). */
    if (btl_tcp_socket_tune(module, fd) != 0)
        *what_out = "setsockopt";
    else if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0)
        *what_out = "bind";
    else if (listen(fd, SOMAXCONN) != 0)
        *what_out = "listen";
    else
        return fd;
    saved = errno;
    close(fd);
    errno = saved;
    return -1;
}

static void btl_tcp_module_listen_close(btl_tcp_module_t *module)
{
    for (size_t i = 0; module->listeners && i < module->num_ifs; i++) {
        if (module->listeners[i].fd >= 0)
            close(module->listeners[i].fd);
        module->listeners[i].fd = -1;
    }
}

/*
 * One listening socket per published address, never on INADDR_ANY: a rank is reachable
 * only where it says it is. The modex carries one port for all of them, so the kernel
 * picks it for the first address and the others bind it too; when another process holds
 * it on one of them, every socket is closed and the kernel picks again.
 */
static int btl_tcp_module_listen(btl_tcp_module_t *module)
{
    const char *what = "listen";
    int saved_errno = 0;

    module->listeners = calloc(module->num_ifs, sizeof(module->listeners[0]));
    if (!module->listeners) {
        crmpi_log_error("btl:tcp: rank %u: out of memory for the listening sockets",
                        module->my_rank);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < module->num_ifs; i++) {
        module->listeners[i].poll.kind = BTL_TCP_POLL_LISTEN;
        module->listeners[i].fd = -1;
    }
    for (int attempt = 0; attempt < BTL_TCP_LISTEN_TRIES; attempt++) {
        uint16_t port = 0;
        size_t i;

        for (i = 0; i < module->num_ifs; i++) {
            int fd = btl_tcp_module_listen_on(module, module->ifs[i].addr, port, &what);

            if (fd < 0)
                break;
            module->listeners[i].fd = fd;
            if (i == 0) {
                struct sockaddr_in sin;
                socklen_t len = sizeof(sin);

                if (getsockname(fd, (struct sockaddr *)&sin, &len) != 0) {
                    what = "getsockname";
                    break;
                }
                port = ntohs(sin.sin_port);
            }
        }
        saved_errno = errno;
        if (i == module->num_ifs) {
            module->listen_port = port;
            for (i = 0; i < module->num_ifs; i++) {
                struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &module->listeners[i].poll};

                if (epoll_ctl(module->epoll_fd, EPOLL_CTL_ADD, module->listeners[i].fd, &ev) != 0) {
                    what = "epoll_ctl";
                    saved_errno = errno;
                    goto err_close;
                }
            }
            return CRMPI_OK;
        }
        btl_tcp_module_listen_close(module);
        if (!(saved_errno == EADDRINUSE && i > 0))
            break;
    }
err_close:
    btl_tcp_module_listen_close(module);
    crmpi_log_error("btl:tcp: rank %u: cannot listen on its %zu address(es): %s: %s",
                    module->my_rank, module->num_ifs, what, strerror(saved_errno));
    return CRMPI_ERR_IO;
}

/* Find the peer's published addresses and pick the one to connect to; its listen nonce.
 * @return CRMPI_OK with *addr_out, CRMPI_ERR_UNREACH (not an error: the peer has no tcp
 *         or no usable address; said at verbose level), other errors (logged). */
static int btl_tcp_module_peer_addr(btl_tcp_module_t *module, uint32_t peer_rank,
                                    struct sockaddr_in *addr_out, uint8_t *listen_nonce_out)
{
    bool same_node = module->node_of_rank[peer_rank] == module->my_node;
    btl_tcp_if_t *addrs;
    size_t num_addrs;
    uint16_t port;
    struct in_addr addr;
    void *blob;
    size_t len;
    int rc;

    rc = crmpi_rte_modex_lookup(peer_rank, BTL_TCP_MODEX_KEY, &blob, &len);
    if (rc == CRMPI_ERR_NOT_FOUND) {
        crmpi_fw_verbose(&crmpi_btl_framework, 10,
                         "tcp: rank %u published no tcp address (its tcp BTL is not in use)",
                         peer_rank);
        return CRMPI_ERR_UNREACH;
    }
    if (rc != CRMPI_OK) {
        crmpi_log_error("btl:tcp: rank %u: modex lookup of rank %u's addresses failed: %s",
                        module->my_rank, peer_rank, crmpi_strerror(rc));
        return rc;
    }
    rc = btl_tcp_modex_unpack(blob, len, &addrs, &num_addrs, &port, listen_nonce_out);
    free(blob);
    if (rc != CRMPI_OK) {
        crmpi_log_error("btl:tcp: rank %u: rank %u published tcp addresses this rank cannot "
                        "read (%zu bytes; another crmpi version?)",
                        module->my_rank, peer_rank, len);
        return rc == CRMPI_ERR_PROTO ? rc : CRMPI_ERR_OUT_OF_RESOURCE;
    }
    rc = btl_tcp_if_choose_peer(module->ifs, module->num_ifs, addrs, num_addrs, same_node, &addr);
    free(addrs);
    if (rc != CRMPI_OK) {
        crmpi_fw_verbose(&crmpi_btl_framework, 10,
                         "tcp: rank %u -> rank %u: none of its %zu addresses can be reached "
                         "from %s (loopback addresses reach only the same node)",
                         module->my_rank, peer_rank, num_addrs,
                         same_node ? "this node" : "another node");
        return CRMPI_ERR_UNREACH;
    }
    *addr_out =
        (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons(port), .sin_addr = addr};
    return CRMPI_OK;
}

static int btl_tcp_module_add_procs(crmpi_btl_module_t *base, size_t nprocs,
                                    const uint32_t *peer_ranks,
                                    crmpi_btl_endpoint_t **endpoints_out)
{
    btl_tcp_module_t *module = (btl_tcp_module_t *)base;

    for (size_t i = 0; i < nprocs; i++) {
        uint32_t peer_rank = peer_ranks[i];
        uint8_t listen_nonce[BTL_TCP_NONCE_LEN];
        struct sockaddr_in addr;
        crmpi_btl_endpoint_t *ep;
        int rc;

        endpoints_out[i] = NULL;
        /* This rank is the self BTL's. */
        if (peer_rank == module->my_rank || peer_rank >= module->job_size)
            continue;
        if (module->endpoints[peer_rank]) {
            endpoints_out[i] = module->endpoints[peer_rank];
            continue;
        }
        rc = btl_tcp_module_peer_addr(module, peer_rank, &addr, listen_nonce);
        if (rc == CRMPI_ERR_UNREACH)
            continue;
        if (rc != CRMPI_OK)
            return rc;
        /* No connection yet: most peers of a large job never exchange a message. */
        rc = btl_tcp_endpoint_create(module, peer_rank, &addr, listen_nonce, &ep);
        if (rc != CRMPI_OK)
            return rc;
        module->endpoints[peer_rank] = ep;
        module->num_live++;
        endpoints_out[i] = ep;
        crmpi_fw_verbose(&crmpi_btl_framework, 20, "tcp: rank %u -> rank %u: will connect to %s",
                         module->my_rank, peer_rank, ep->addr_text);
    }
    return CRMPI_OK;
}

static void btl_tcp_module_draining_remove(btl_tcp_module_t *module, crmpi_btl_endpoint_t *ep)
{
    for (crmpi_btl_endpoint_t **link = &module->draining; *link; link = &(*link)->next_draining) {
        if (*link == ep) {
            *link = ep->next_draining;
            module->num_draining--;
            return;
        }
    }
}

static int btl_tcp_module_del_procs(crmpi_btl_module_t *base, size_t nprocs,
                                    const uint32_t *peer_ranks, crmpi_btl_endpoint_t **endpoints)
{
    btl_tcp_module_t *module = (btl_tcp_module_t *)base;

    for (size_t i = 0; i < nprocs; i++) {
        crmpi_btl_endpoint_t *ep = endpoints[i];

        if (!ep || ep->deleted)
            continue;
        if (module->endpoints[ep->peer_rank] == ep)
            module->endpoints[ep->peer_rank] = NULL;
        module->num_live--;
        /* Fragments already accepted by send must still arrive: progress and finalize keep
         * flushing them, then close. */
        if (btl_tcp_endpoint_busy(ep)) {
            ep->deleted = true;
            ep->next_draining = module->draining;
            module->draining = ep;
            module->num_draining++;
        } else {
            btl_tcp_endpoint_destroy(ep);
        }
    }
    return CRMPI_OK;
}

static int btl_tcp_module_progress(crmpi_btl_module_t *base)
{
    btl_tcp_module_t *module = (btl_tcp_module_t *)base;
    struct epoll_event events[BTL_TCP_EVENTS_MAX];
    int count = 0;
    int num_events;

    /* No peer uses this module (the BML gave them all to sm or self): not even one
     * syscall, so tcp costs the other BTLs' latency nothing. */
    if (!btl_tcp_module_active(module) || module->in_progress)
        return 0;
    module->in_progress = true;
    /* One peer sending to us and nothing to write (a ping-pong, a 2-rank job): a read finds
     * its data in one syscall where epoll_wait then read take two, about 0.9 us of the
     * one-way latency on loopback. epoll still gets its turn, for accepts and errors. */
    if (module->num_conns <= BTL_TCP_DIRECT_READ_MAX && module->num_writing == 0 &&
        ++module->poll_tick % BTL_TCP_EPOLL_EVERY != 0) {
        btl_tcp_conn_t *next;

        for (btl_tcp_conn_t *conn = module->conns; conn; conn = next) {
            next = conn->next; /* the event may close and free conn */
            count += btl_tcp_conn_event(conn, EPOLLIN, true);
        }
        module->in_progress = false;
        return count;
    }
    num_events = epoll_wait(module->epoll_fd, events, BTL_TCP_EVENTS_MAX, 0);
    for (int i = 0; i < num_events; i++) {
        btl_tcp_pollable_t *poll = events[i].data.ptr;

        switch (poll->kind) {
        case BTL_TCP_POLL_LISTEN:
            btl_tcp_conn_accept_all(module, (btl_tcp_listener_t *)poll);
            break;
        case BTL_TCP_POLL_CONN:
            count += btl_tcp_conn_event((btl_tcp_conn_t *)poll, events[i].events, true);
            break;
        case BTL_TCP_POLL_ENDPOINT: {
            crmpi_btl_endpoint_t *ep = (crmpi_btl_endpoint_t *)poll;

            count += btl_tcp_endpoint_event(ep, events[i].events);
            if (ep->deleted && !btl_tcp_endpoint_busy(ep)) {
                btl_tcp_module_draining_remove(module, ep);
                btl_tcp_endpoint_destroy(ep);
            }
            break;
        }
        }
    }
    module->in_progress = false;
    return count;
}

static int64_t btl_tcp_module_now_ms(void)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* Every endpoint the module still has, live or draining. @return the count. */
static size_t btl_tcp_module_all_endpoints(btl_tcp_module_t *module, crmpi_btl_endpoint_t **all)
{
    size_t num = 0;

    for (uint32_t r = 0; r < module->job_size; r++) {
        if (module->endpoints[r])
            all[num++] = module->endpoints[r];
    }
    for (crmpi_btl_endpoint_t *ep = module->draining; ep; ep = ep->next_draining)
        all[num++] = ep;
    return num;
}

/*
 * Finalize's flush: block (poll) until every queue is out or the deadline passes. Accepted
 * sockets are read too, and their frames dropped: a peer that is flushing towards us while
 * we flush towards it must not wait for a reader that is gone (this rank is done with MPI,
 * so nothing it could still receive has a receiver).
 */
static void btl_tcp_module_flush_all(btl_tcp_module_t *module, crmpi_btl_endpoint_t **all,
                                     size_t num_all)
{
    const int64_t deadline = btl_tcp_module_now_ms() + BTL_TCP_FINALIZE_TIMEOUT_MS;
    struct pollfd *pfds = NULL;
    void **owners = NULL;

    for (;;) {
        size_t num_busy = 0;
        size_t nfds = 0;
        int64_t left;
        size_t i = 0;

        for (size_t e = 0; e < num_all; e++)
            num_busy += btl_tcp_endpoint_busy(all[e]);
        left = deadline - btl_tcp_module_now_ms();
        if (num_busy == 0 || left <= 0)
            break;
        free(pfds);
        free(owners);
        pfds = calloc(num_busy + module->num_conns, sizeof(pfds[0]));
        owners = calloc(num_busy + module->num_conns, sizeof(owners[0]));
        if (!pfds || !owners) {
            crmpi_log_error("btl:tcp: rank %u: out of memory flushing at finalize",
                            module->my_rank);
            break;
        }
        for (size_t e = 0; e < num_all; e++) {
            if (!btl_tcp_endpoint_busy(all[e]))
                continue;
            pfds[nfds] = (struct pollfd){.fd = all[e]->fd, .events = POLLOUT};
            owners[nfds++] = all[e];
        }
        for (btl_tcp_conn_t *conn = module->conns; conn; conn = conn->next) {
            pfds[nfds] = (struct pollfd){.fd = conn->fd, .events = POLLIN};
            owners[nfds++] = conn;
        }
        if (poll(pfds, nfds, (int)left) < 0 && errno != EINTR) {
            crmpi_log_error("btl:tcp: rank %u: poll at finalize: %s", module->my_rank,
                            strerror(errno));
            break;
        }
        for (; i < num_busy; i++) {
            uint32_t events = (pfds[i].revents & POLLOUT ? EPOLLOUT : 0) |
                              (pfds[i].revents & POLLERR ? EPOLLERR : 0) |
                              (pfds[i].revents & POLLHUP ? EPOLLHUP : 0);
            if (events)
                btl_tcp_endpoint_event(owners[i], events);
        }
        for (; i < nfds; i++) {
            if (pfds[i].revents)
                btl_tcp_conn_event(owners[i], EPOLLIN, false); /* may free the conn */
        }
    }
    free(pfds);
    free(owners);
    for (size_t e = 0; e < num_all; e++) {
        crmpi_btl_endpoint_t *ep = all[e];

        if (btl_tcp_endpoint_busy(ep))
            crmpi_log_error("btl:tcp: rank %u -> rank %u (%s): finalize: %zu fragments (%zu "
                            "bytes) still queued after %d s were dropped; the peer stopped "
                            "reading",
                            module->my_rank, ep->peer_rank, ep->addr_text,
                            btl_tcp_endpoint_queued_frames(ep), ep->queue.tail - ep->queue.head,
                            BTL_TCP_FINALIZE_TIMEOUT_MS / 1000);
    }
}

/* Close and free everything the module holds; used by finalize and by a failed create. */
static void btl_tcp_module_destroy(btl_tcp_module_t *module)
{
    for (uint32_t r = 0; module->endpoints && r < module->job_size; r++) {
        if (module->endpoints[r])
            btl_tcp_endpoint_destroy(module->endpoints[r]);
    }
    while (module->draining) {
        crmpi_btl_endpoint_t *ep = module->draining;

        module->draining = ep->next_draining;
        btl_tcp_endpoint_destroy(ep);
    }
    while (module->conns)
        btl_tcp_conn_destroy(module->conns);
    btl_tcp_module_listen_close(module);
    free(module->listeners);
    free(module->seen_nonces);
    if (module->epoll_fd >= 0)
        close(module->epoll_fd);
    free(module->endpoints);
    free(module->node_of_rank);
    free(module->ifs);
    free(module->bounce);
    free(module);
}

static int btl_tcp_module_finalize(crmpi_btl_module_t *base)
{
    btl_tcp_module_t *module = (btl_tcp_module_t *)base;
    const btl_tcp_stats_t *stats = &module->stats;
    crmpi_btl_endpoint_t **all;

    crmpi_fw_verbose(&crmpi_btl_framework, 10,
                     "tcp: rank %u: sent %llu bytes from the caller's memory, %llu through the "
                     "send queue; received %llu bytes through the connection buffers, %llu "
                     "placed straight into receive buffers (%llu of them copied from a buffer)",
                     module->my_rank, (unsigned long long)stats->sent_direct,
                     (unsigned long long)stats->sent_queued,
                     (unsigned long long)stats->recv_delivered,
                     (unsigned long long)stats->recv_placed + stats->recv_place_copy,
                     (unsigned long long)stats->recv_place_copy);

    all = malloc((module->num_live + module->num_draining + 1) * sizeof(all[0]));
    if (all) {
        size_t num_all = btl_tcp_module_all_endpoints(module, all);

        btl_tcp_module_flush_all(module, all, num_all);
        free(all);
    } else {
        crmpi_log_error("btl:tcp: rank %u: out of memory at finalize; queued fragments are "
                        "dropped",
                        module->my_rank);
    }
    btl_tcp_module_destroy(module);
    return CRMPI_OK;
}

int btl_tcp_module_create(const crmpi_rte_job_info_t *job, const btl_tcp_settings_t *settings,
                          btl_tcp_if_t *ifs, size_t num_ifs, btl_tcp_module_t **module_out)
{
    btl_tcp_module_t *module = calloc(1, sizeof(*module));
    int rc;

    if (!module) {
        crmpi_log_error("btl:tcp: out of memory for the module");
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    module->super = (crmpi_btl_module_t){
        .name = "tcp",
        .exclusivity = BTL_TCP_EXCLUSIVITY,
        .priority = 0,
        /* not CKPT_FRIENDLY: btl_tcp.h says why */
        .flags = settings->recv_place ? CRMPI_BTL_FLAG_RECV_PLACE : 0,
        .max_send_size = settings->max_send_size,
        .eager_limit = settings->eager_limit,
        .add_procs = btl_tcp_module_add_procs,
        .del_procs = btl_tcp_module_del_procs,
        .send = btl_tcp_endpoint_send,
        .progress = btl_tcp_module_progress,
        .finalize = btl_tcp_module_finalize,
    };
    module->jobid = job->jobid;
    module->my_rank = job->rank;
    module->job_size = job->size;
    module->my_node = job->node_id;
    module->queue_limit = BTL_TCP_QUEUE_LIMIT_FRAGS * settings->max_send_size;
    module->recv_cap = 2 * (sizeof(btl_tcp_frame_hdr_t) + BTL_TCP_GAP_MAX +
                            settings->max_send_size + BTL_TCP_ALIGN);
    module->sndbuf = settings->sndbuf;
    module->rcvbuf = settings->rcvbuf;
    module->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    module->node_of_rank = calloc(job->size, sizeof(module->node_of_rank[0]));
    module->endpoints = calloc(job->size, sizeof(module->endpoints[0]));
    module->bounce = btl_tcp_page_alloc(settings->max_send_size);
    if (module->epoll_fd < 0) {
        crmpi_log_error("btl:tcp: rank %u: epoll_create1: %s", job->rank, strerror(errno));
        rc = CRMPI_ERR_IO;
        goto err_destroy;
    }
    if (!module->node_of_rank || !module->endpoints || !module->bounce) {
        crmpi_log_error("btl:tcp: rank %u: out of memory for the module of a job of %u ranks",
                        job->rank, job->size);
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto err_destroy;
    }
    for (uint32_t r = 0; r < job->size; r++)
        module->node_of_rank[r] = job->node_of_rank ? job->node_of_rank[r] : job->node_id;
    module->ifs = ifs;
    module->num_ifs = num_ifs;
    if ((rc = btl_tcp_auth_init(module, job)) != CRMPI_OK ||
        (rc = btl_tcp_module_listen(module)) != CRMPI_OK)
        goto err_destroy;
    *module_out = module;
    return CRMPI_OK;

err_destroy:
    module->ifs = NULL; /* the caller's until success */
    btl_tcp_module_destroy(module);
    return rc;
}
