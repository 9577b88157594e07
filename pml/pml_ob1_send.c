/*
 * pml_ob1_send.c: the sending side of ob1: eager and rendezvous sends, the pipelined
 * fragments after an ACK, and the queues of what the BTLs could not take yet (pml_ob1.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "log.h"
#include "pml_ob1.h"

/* A BTL error other than "busy": the peer is gone; the request ends with an error (and
 * no CANCEL_REPLY is waited for: none may come). */
static void pml_ob1_send_fail(crmpi_request_t *req)
{
    req->status.MPI_ERROR = MPI_ERR_OTHER;
    req->cancel_state = PML_OB1_CANCEL_NONE;
    pml_ob1_request_complete(req);
}

static inline int pml_ob1_btl_send(uint32_t peer_world, uint8_t tag, const void *hdr,
                                   size_t hdr_len, crmpi_convertor_t *payload, size_t nbytes)
{
    crmpi_bml_peer_t *peer = &crmpi_bml_peers[peer_world];

    return peer->module->send(peer->module, peer->endpoint, tag, hdr, hdr_len, payload, nbytes);
}

/*
 * Hand the first fragment of `req` to the BTL: all of an eager message, or the RNDV with as
 * much data as fits. @return CRMPI_OK, CRMPI_ERR_RESOURCE_BUSY (nothing sent) or an error.
 */
static int pml_ob1_send_first(crmpi_request_t *req)
{
    pml_ob1_peer_t *peer = &pml_ob1.peers[req->peer_world];
    pml_ob1_match_hdr_t match = {
        .ctx = req->comm->ctx,
        .src = req->comm->rank,
        .tag = req->tag,
        .seq = req->seq,
    };
    int rc;

    if (req->mode != CRMPI_PML_SEND_SYNCHRONOUS && req->bytes_total <= peer->eager_limit) {
        rc = pml_ob1_btl_send(req->peer_world, PML_OB1_TAG_MATCH, &match, sizeof(match), &req->conv,
                              req->bytes_total);
        if (rc == CRMPI_OK) {
            req->bytes_done = req->bytes_total;
            pml_ob1_request_complete(req);
        }
        return rc;
    }

    pml_ob1_rndv_hdr_t rndv = {
        .match = match,
        .msg_len = req->bytes_total,
        .send_req = pml_ob1_request_wire_name(req, req->peer_world),
    };
    if (!rndv.send_req)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    size_t first =
        req->bytes_total < peer->max_payload_rndv ? req->bytes_total : peer->max_payload_rndv;

    rc =
        pml_ob1_btl_send(req->peer_world, PML_OB1_TAG_RNDV, &rndv, sizeof(rndv), &req->conv, first);
    if (rc == CRMPI_OK)
        req->bytes_done = first; /* the rest waits for the receiver's ACK */
    return rc;
}

int pml_ob1_send_start(crmpi_request_t *req)
{
    pml_ob1_peer_t *peer;
    int rc;

    req->peer_world = pml_ob1_world_rank(req->comm, req->peer);
    peer = &pml_ob1.peers[req->peer_world];
    if (pml_ob1.cr_quiescing) {
        /* A checkpoint has taken the bookmarks: this send waits for it, unnumbered. */
        pml_ob1_req_queue_append(&pml_ob1.cr_held, req, PML_OB1_QUEUE_HELD);
        return CRMPI_OK;
    }
    crmpi_convertor_init(&req->conv, req->user_buf, req->user_count, req->user_type);
    req->bytes_total = req->conv.total;
    req->bytes_done = 0;
    req->remote_req = 0; /* a persistent send's last receiver is not this one's */
    req->status.MPI_ERROR = MPI_SUCCESS;
    req->cancel_finished = req->cancel_reopened = false; /* nor its last cancel */
    /* Numbered now, in the order the application posted its sends: that is the order the
     * receiver matches them in. */
    req->seq = peer->send_seq++;
    pml_ob1.active_sends++;

    /* Earlier sends to this peer still wait for the BTL: this one must not pass them. */
    if (peer->send_start.head) {
        pml_ob1_req_queue_append(&peer->send_start, req, PML_OB1_QUEUE_SEND_START);
        pml_ob1.sends_waiting++;
        return CRMPI_OK;
    }
    rc = pml_ob1_send_first(req);
    if (rc == CRMPI_ERR_RESOURCE_BUSY) {
        pml_ob1_req_queue_append(&peer->send_start, req, PML_OB1_QUEUE_SEND_START);
        pml_ob1.sends_waiting++;
        return CRMPI_OK;
    }
    if (rc != CRMPI_OK)
        pml_ob1_send_fail(req);
    return CRMPI_OK;
}

/*
 * Push the data of an acknowledged rendezvous until it is all out or the BTL is busy.
 * @return fragments sent.
 */
static int pml_ob1_send_frags(crmpi_request_t *req)
{
    size_t max_payload = pml_ob1.peers[req->peer_world].max_payload_frag;
    int sent = 0;

    while (req->bytes_done < req->bytes_total) {
        size_t left = req->bytes_total - req->bytes_done;
        size_t nbytes = left < max_payload ? left : max_payload;
        pml_ob1_frag_hdr_t frag = {.recv_req = req->remote_req, .offset = req->bytes_done};
        int rc = pml_ob1_btl_send(req->peer_world, PML_OB1_TAG_FRAG, &frag, sizeof(frag),
                                  &req->conv, nbytes);

        if (rc == CRMPI_ERR_RESOURCE_BUSY) {
            if (req->queue != PML_OB1_QUEUE_SEND_FRAGS)
                pml_ob1_req_queue_append(&pml_ob1.send_frags, req, PML_OB1_QUEUE_SEND_FRAGS);
            return sent;
        }
        if (req->queue == PML_OB1_QUEUE_SEND_FRAGS && rc != CRMPI_OK)
            pml_ob1_req_queue_remove(&pml_ob1.send_frags, req);
        if (rc != CRMPI_OK) {
            pml_ob1_send_fail(req);
            return sent;
        }
        req->bytes_done += nbytes;
        sent++;
    }
    if (req->queue == PML_OB1_QUEUE_SEND_FRAGS)
        pml_ob1_req_queue_remove(&pml_ob1.send_frags, req);
    pml_ob1_request_complete(req);
    return sent;
}

void pml_ob1_recv_cb_ack(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data,
                         size_t len)
{
    pml_ob1_ack_hdr_t ack;
    crmpi_request_t *req;

    if (len < sizeof(ack)) {
        crmpi_log_error("pml: short ACK (%zu bytes) from rank %u; ignored", len, peer_rank);
        return;
    }
    memcpy(&ack, data, sizeof(ack));
    /* Only a rendezvous send of ours to that rank, still waiting, is followed. */
    req = pml_ob1_request_wire_find(ack.send_req, peer_rank, CRMPI_REQUEST_SEND);
    if (!req || req->remote_req) {
        crmpi_log_error("pml: ACK from rank %u names no rendezvous send waiting for it; ignored",
                        peer_rank);
        return;
    }
    if (ack.offset != req->bytes_done) {
        /* The receiver always keeps the RNDV's data: anything else is a protocol bug. */
        crmpi_log_error("pml: ACK from rank %u says %llu bytes received, %zu were sent; ignored",
                        peer_rank, (unsigned long long)ack.offset, req->bytes_done);
        return;
    }
    req->remote_req = ack.recv_req;
    pml_ob1_send_frags(req);
}

void pml_ob1_send_ctl(uint32_t peer_world, uint8_t tag, const void *hdr, size_t len)
{
    pml_ob1_pending_ctl_t *pending;

    if (!pml_ob1.ctl_head &&
        pml_ob1_btl_send(peer_world, tag, hdr, len, NULL, 0) != CRMPI_ERR_RESOURCE_BUSY)
        return;
    pending = malloc(sizeof(*pending));
    if (!pending || len > sizeof(pending->hdr)) {
        /* Without it the peer would wait forever (for an ACK or a CANCEL_REPLY): nothing
         * sensible is left. */
        crmpi_log_error("pml: out of memory queueing a control fragment to rank %u", peer_world);
        abort();
    }
    pending->next = NULL;
    pending->peer_world = peer_world;
    pending->tag = tag;
    pending->len = len;
    memcpy(&pending->hdr, hdr, len);
    *pml_ob1.ctl_tail = pending;
    pml_ob1.ctl_tail = &pending->next;
}

void pml_ob1_send_ack(uint32_t peer_world, uint64_t send_req, uint64_t recv_req, uint64_t offset)
{
    pml_ob1_ack_hdr_t hdr = {.send_req = send_req, .recv_req = recv_req, .offset = offset};

    pml_ob1_send_ctl(peer_world, PML_OB1_TAG_ACK, &hdr, sizeof(hdr));
}

void pml_ob1_send_cancel(crmpi_request_t *req)
{
    pml_ob1_cancel_hdr_t hdr = {
        .send_req = pml_ob1_request_wire_name(req, req->peer_world),
        .match = {.ctx = req->comm->ctx, .src = req->comm->rank, .tag = req->tag, .seq = req->seq},
    };

    if (!hdr.send_req) {
        /* No id for the reply (out of memory): the cancel fails, the send completes. */
        req->cancel_state = PML_OB1_CANCEL_NONE;
        if (req->cancel_finished)
            pml_ob1_request_complete(req);
        return;
    }
    req->cancel_state = PML_OB1_CANCEL_WAITING;
    /* Queued behind earlier control fragments, and the BTL delivers in order: the CANCEL
     * reaches the peer after the message it names. */
    pml_ob1_send_ctl(req->peer_world, PML_OB1_TAG_CANCEL, &hdr, sizeof(hdr));
}

void pml_ob1_recv_cb_cancel_reply(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data,
                                  size_t len)
{
    pml_ob1_cancel_reply_hdr_t reply;
    crmpi_request_t *req;

    if (len < sizeof(reply)) {
        crmpi_log_error("pml: short CANCEL_REPLY (%zu bytes) from rank %u; ignored", len,
                        peer_rank);
        return;
    }
    memcpy(&reply, data, sizeof(reply));
    req = pml_ob1_request_wire_find(reply.send_req, peer_rank, CRMPI_REQUEST_SEND);
    if (!req || req->cancel_state != PML_OB1_CANCEL_WAITING) {
        crmpi_log_error("pml: CANCEL_REPLY from rank %u names no send being cancelled; ignored",
                        peer_rank);
        return;
    }
    req->cancel_state = PML_OB1_CANCEL_NONE;
    if (reply.cancelled) {
        /* The receiver dropped it unmatched: no ACK came or will come for a rendezvous. */
        req->status._cancelled = 1;
        req->cancel_finished = true;
    }
    /* Not cancelled: the send completes normally, now if its data is all out, else when
     * the receiver's ACK has let the rest go. */
    if (req->cancel_finished)
        pml_ob1_request_complete(req);
}

int pml_ob1_send_progress(void)
{
    int events = 0;

    while (pml_ob1.ctl_head) {
        pml_ob1_pending_ctl_t *pending = pml_ob1.ctl_head;

        if (pml_ob1_btl_send(pending->peer_world, pending->tag, &pending->hdr, pending->len, NULL,
                             0) == CRMPI_ERR_RESOURCE_BUSY)
            break;
        pml_ob1.ctl_head = pending->next;
        if (!pml_ob1.ctl_head)
            pml_ob1.ctl_tail = &pml_ob1.ctl_head;
        free(pending);
        events++;
    }

    for (crmpi_request_t *req = pml_ob1.send_frags.head, *next; req; req = next) {
        next = req->next;
        events += pml_ob1_send_frags(req);
    }

    if (pml_ob1.sends_waiting == 0)
        return events;
    for (uint32_t p = 0; p < pml_ob1.num_peers; p++) {
        pml_ob1_req_queue_t *queue = &pml_ob1.peers[p].send_start;

        while (queue->head) {
            crmpi_request_t *req = queue->head;
            crmpi_request_t *next = req->next;
            int rc;

            bool cancel_asked = req->cancel_state == PML_OB1_CANCEL_ASKED;

            /* Unlinked first: send_first may complete an eager request, and a request freed
             * at completion (a buffered send's) is gone when it returns. One whose cancel
             * was asked is not completed (cancel_state defers it) until CANCEL_REPLY. */
            req->queue = PML_OB1_QUEUE_NONE;
            rc = pml_ob1_send_first(req);
            if (rc == CRMPI_ERR_RESOURCE_BUSY) {
                req->queue = PML_OB1_QUEUE_SEND_START;
                break;
            }
            queue->head = next;
            if (next)
                next->prev = NULL;
            else
                queue->tail = NULL;
            pml_ob1.sends_waiting--;
            events++;
            if (rc != CRMPI_OK)
                pml_ob1_send_fail(req);
            else if (cancel_asked)
                pml_ob1_send_cancel(req);
        }
    }
    return events;
}
