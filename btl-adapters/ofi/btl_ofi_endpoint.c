/*
 * btl_ofi_endpoint.c: fragments of the ofi BTL (btl_ofi.h): the modex blob, the send path
 * through the send pool, and in-order delivery of the receive buffers' completions.
 */
#include "config.h"

#include "btl_ofi.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "crmpi_status.h"
#include "log.h"

int btl_ofi_modex_pack(const btl_ofi_module_t *module, void **blob_out, size_t *len_out)
{
    const size_t len = sizeof(btl_ofi_modex_t) + module->addr_len;
    btl_ofi_modex_t *modex = calloc(1, len);

    if (!modex) {
        crmpi_log_error("btl:ofi: rank %u: out of memory for its modex data", module->my_rank);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    modex->magic = BTL_OFI_MAGIC;
    modex->version = BTL_OFI_VERSION;
    modex->addr_len = (uint16_t)module->addr_len;
    modex->node_local = module->node_local;
    modex->takes_placed = module->recv_place;
    snprintf(modex->provider, sizeof(modex->provider), "%s", module->info->fabric_attr->prov_name);
    memcpy(modex->nonce, module->auth.nonce, sizeof(modex->nonce));
    memcpy(modex + 1, module->addr, module->addr_len);
    *blob_out = modex;
    *len_out = len;
    return CRMPI_OK;
}

int btl_ofi_modex_unpack(const void *blob, size_t len, const btl_ofi_modex_t **modex_out,
                         const void **addr_out)
{
    const btl_ofi_modex_t *modex = blob;

    /* The rte hands back malloc'ed blobs: aligned for the header's fields. */
    if (len < sizeof(*modex) || modex->magic != BTL_OFI_MAGIC ||
        modex->version != BTL_OFI_VERSION || modex->addr_len == 0 ||
        modex->addr_len > BTL_OFI_ADDR_MAX || len != sizeof(*modex) + modex->addr_len ||
        !memchr(modex->provider, '\0', sizeof(modex->provider)))
        return CRMPI_ERR_PROTO;
    *modex_out = modex;
    *addr_out = modex + 1;
    return CRMPI_OK;
}

/* The tag the payload of fragment `seq` on the pair whose token is `token` travels under
 * (btl_ofi.h, "Placement"): both ends know the token and nobody else does, so no other
 * process can have a message of its own matched to the receive. */
static uint64_t btl_ofi_payload_tag(const uint8_t *token, uint32_t seq)
{
    uint64_t bits;

    memcpy(&bits, token, sizeof(bits));
    return (bits ^ seq) & BTL_OFI_TAG_MASK;
}

/* Send an announce (a fragment's header whose payload went by tag). The address stays in the
 * vector when the peer is deleted meanwhile (del_procs). */
static ssize_t btl_ofi_announce_send(btl_ofi_module_t *module, btl_ofi_buf_t *buf)
{
    return fi_send(module->ep, buf->data, buf->len, module->send_desc, buf->addr, &buf->op.ctx);
}

void btl_ofi_announce_retry(btl_ofi_module_t *module)
{
    while (module->announce_retry) {
        btl_ofi_buf_t *buf = module->announce_retry;
        ssize_t rc = btl_ofi_announce_send(module, buf);

        if (rc == -FI_EAGAIN)
            return;
        module->announce_retry = buf->next;
        buf->next = NULL;
        if (rc != 0) {
            crmpi_log_error("btl:ofi: rank %u -> rank %u: fi_send of an announce: %s (%zd); "
                            "the peer is unreachable from now on",
                            module->my_rank, buf->peer_rank, btl_ofi_strerror(module, (int)rc), rc);
            btl_ofi_send_complete(module, buf, true);
        }
    }
}

int btl_ofi_endpoint_send(crmpi_btl_module_t *base, crmpi_btl_endpoint_t *ep, uint8_t tag,
                          const void *hdr, size_t hdr_len, crmpi_convertor_t *payload,
                          size_t payload_len)
{
    btl_ofi_module_t *module = (btl_ofi_module_t *)base;
    const size_t wire_len = BTL_OFI_HDR_SIZE + hdr_len + payload_len;
    /* A payload the peer's placer may want goes by tag, after an announce ("Placement"). */
    const bool announce = ep->announce && payload_len >= CRMPI_BTL_PLACE_MIN &&
                          crmpi_btl_place_table[tag].hdr_len == hdr_len;
    btl_ofi_buf_t *buf = module->send_free;
    btl_ofi_hdr_t wire = {.sender_rank = module->my_rank, .seq = ep->send_seq, .tag = tag};
    size_t start = payload ? payload->position : 0;
    ssize_t rc;

    if (ep->failed)
        return CRMPI_ERR_UNREACH;
    /* Every buffer is in flight: their completions come with progress. */
    if (!buf)
        return CRMPI_ERR_RESOURCE_BUSY;
    if (announce) {
        wire.flags = BTL_OFI_HDR_ANNOUNCE;
        wire.payload_len = (uint32_t)payload_len;
    }
    memcpy(wire.token, ep->token, sizeof(wire.token));
    memcpy(buf->data, &wire, sizeof(wire));
    memcpy(buf->data + BTL_OFI_HDR_SIZE, hdr, hdr_len);
    if (payload_len)
        crmpi_convertor_pack(payload, buf->data + BTL_OFI_HDR_SIZE + hdr_len, payload_len);
    buf->peer_rank = ep->peer_rank;
    buf->addr = ep->addr;
    buf->len = announce ? BTL_OFI_HDR_SIZE + hdr_len : wire_len;
    buf->failed = false;
    /* The payload first: once it is out, the announce must follow (announce_retry). */
    if (announce)
        rc = fi_tsend(module->ep, buf->data + buf->len, payload_len, module->send_desc, ep->addr,
                      btl_ofi_payload_tag(ep->token, wire.seq), &buf->tsend.ctx);
    else
        rc = fi_send(module->ep, buf->data, buf->len, module->send_desc, ep->addr, &buf->op.ctx);
    if (rc == -FI_EAGAIN) {
        /* The provider's queue is full (or a connection is still being made): nothing was
         * consumed, so the convertor goes back to where it was. */
        if (payload_len)
            crmpi_convertor_set_position(payload, start);
        return CRMPI_ERR_RESOURCE_BUSY;
    }
    if (rc != 0) {
        crmpi_log_error("btl:ofi: rank %u -> rank %u: %s: %s (%zd); the peer is "
                        "unreachable from now on",
                        module->my_rank, ep->peer_rank, announce ? "fi_tsend" : "fi_send",
                        btl_ofi_strerror(module, (int)rc), rc);
        if (payload_len)
            crmpi_convertor_set_position(payload, start);
        ep->failed = true;
        return CRMPI_ERR_UNREACH;
    }
    module->send_free = buf->next;
    module->num_sending++;
    buf->next = NULL;
    buf->pending = announce ? 2 : 1;
    ep->send_seq++;
    if (announce) {
        /* Behind announces still waiting, so that the receiver gets them in order sooner. */
        if (!module->announce_retry)
            rc = btl_ofi_announce_send(module, buf);
        if (module->announce_retry || rc == -FI_EAGAIN) {
            btl_ofi_buf_t **tail = &module->announce_retry;

            while (*tail)
                tail = &(*tail)->next;
            *tail = buf;
        } else if (rc != 0) {
            crmpi_log_error("btl:ofi: rank %u -> rank %u: fi_send of an announce: %s (%zd); "
                            "the peer is unreachable from now on",
                            module->my_rank, ep->peer_rank, btl_ofi_strerror(module, (int)rc), rc);
            btl_ofi_send_complete(module, buf, true);
        }
    }
    return CRMPI_OK;
}

void btl_ofi_send_complete(btl_ofi_module_t *module, btl_ofi_buf_t *buf, bool failed)
{
    crmpi_btl_endpoint_t *ep = module->endpoints[buf->peer_rank];

    buf->failed |= failed;
    if (--buf->pending > 0)
        return;
    if (buf->failed && ep)
        ep->failed = true;
    buf->next = module->send_free;
    module->send_free = buf;
    module->num_sending--;
}

void btl_ofi_recv_post(btl_ofi_module_t *module, btl_ofi_buf_t *buf)
{
    ssize_t rc;

    /* The sender is any rank: FI_DIRECTED_RECV is not asked for, so the address is not
     * looked at. */
    rc = fi_recv(module->ep, buf->data, module->buf_size, module->recv_desc, FI_ADDR_UNSPEC,
                 &buf->op.ctx);
    if (rc == 0)
        return;
    if (rc != -FI_EAGAIN)
        crmpi_log_error("btl:ofi: rank %u: fi_recv: %s (%zd); trying again at the next "
                        "progress",
                        module->my_rank, btl_ofi_strerror(module, (int)rc), rc);
    buf->next = module->repost;
    module->repost = buf;
}

/* Hand one fragment to its callback, then give the buffer back to the provider. */
static void btl_ofi_recv_deliver(btl_ofi_module_t *module, uint32_t sender_rank, uint8_t tag,
                                 const void *data, size_t len)
{
    crmpi_btl_recv_fn_t fn = crmpi_btl_recv_table[tag];

    if (fn)
        fn(&module->super, sender_rank, data, len);
    else
        crmpi_log_error("btl:ofi: rank %u <- rank %u: a fragment for tag %u, which has no "
                        "receiver; dropped",
                        module->my_rank, sender_rank, tag);
}

/* Keep a fragment that completed before its turn, in sequence order. */
static void btl_ofi_recv_hold(btl_ofi_peer_t *peer, btl_ofi_buf_t *buf)
{
    btl_ofi_buf_t **link = &peer->early;

    while (*link && (int32_t)((*link)->seq - buf->seq) < 0)
        link = &(*link)->next;
    buf->next = *link;
    *link = buf;
}

/* Post the tagged receive of the sender's announced payload: into the placer's iov when it
 * can take the payload whole, else into the bounce buffer. */
void btl_ofi_payload_post(btl_ofi_module_t *module, btl_ofi_peer_t *peer)
{
    btl_ofi_payload_t *pl = &peer->payload;
    const uint64_t tag = btl_ofi_payload_tag(peer->token, peer->recv_seq);
    ssize_t rc;

    if (pl->bounce)
        rc = fi_trecv(module->ep, pl->bounce + (pl->placing ? 0 : pl->hdr_len), pl->payload_len,
                      NULL, FI_ADDR_UNSPEC, tag, 0, &pl->op.ctx);
    else
        rc = fi_trecvv(module->ep, pl->place.iov, NULL, (size_t)pl->place.iovcnt, FI_ADDR_UNSPEC,
                       tag, 0, &pl->op.ctx);
    pl->posted = rc == 0;
    if (rc != 0 && rc != -FI_EAGAIN)
        crmpi_log_error("btl:ofi: rank %u <- rank %u: fi_trecv: %s (%zd); trying again at the "
                        "next progress",
                        module->my_rank, (uint32_t)(peer - module->peers),
                        btl_ofi_strerror(module, (int)rc), rc);
    if (!pl->posted)
        module->num_unposted++;
}

/*
 * An announce's turn has come: ask the placer where its payload goes, and post the payload's
 * tagged receive; the sender's stream waits for it (btl_ofi_payload_complete). `buf` goes
 * back to the provider.
 * @return true when the payload's receive is on its way; false when the announce was dropped
 *         (logged)
 */
static bool btl_ofi_recv_announce(btl_ofi_module_t *module, btl_ofi_peer_t *peer,
                                  btl_ofi_buf_t *buf, const btl_ofi_hdr_t *wire)
{
    const crmpi_btl_placer_t *placer = &crmpi_btl_place_table[wire->tag];
    btl_ofi_payload_t *pl = &peer->payload;
    const size_t hdr_len = buf->len - BTL_OFI_HDR_SIZE;
    const char *hdr = buf->data + BTL_OFI_HDR_SIZE;
    bool direct = false;

    if (!module->recv_place || wire->payload_len == 0 ||
        wire->payload_len > module->super.max_send_size) {
        crmpi_log_error("btl:ofi: rank %u <- rank %u: an announced payload of %u bytes, which "
                        "this module does not take; dropped",
                        module->my_rank, wire->sender_rank, wire->payload_len);
        btl_ofi_recv_post(module, buf);
        return false;
    }
    memset(pl, 0, sizeof(*pl));
    pl->op.kind = BTL_OFI_OP_PAYLOAD;
    pl->tag = wire->tag;
    pl->hdr_len = hdr_len;
    pl->payload_len = wire->payload_len;
    if (placer->hdr_len && placer->hdr_len == hdr_len && pl->payload_len >= CRMPI_BTL_PLACE_MIN &&
        placer->place(&module->super, wire->sender_rank, hdr, pl->payload_len, &pl->place)) {
        pl->placing = true;
        /* Straight into the destination when the provider takes it as it is; a discarded
         * tail, more pieces than a receive takes, or a placer's bad answer go through a
         * buffer of ours (the last then ends with an error). */
        direct = crmpi_btl_place_valid(&pl->place, pl->payload_len) && !pl->place.discard &&
                 pl->place.iovcnt > 0 && (size_t)pl->place.iovcnt <= module->iov_limit;
        if (!direct)
            pl->bounce = malloc(pl->payload_len);
    } else {
        /* Declined: the recv callback gets header and payload together. */
        pl->bounce = malloc(hdr_len + pl->payload_len);
        if (pl->bounce)
            memcpy(pl->bounce, hdr, hdr_len);
    }
    btl_ofi_recv_post(module, buf);
    if (!direct && !pl->bounce) {
        crmpi_log_error("btl:ofi: rank %u <- rank %u: out of memory for a payload of %zu "
                        "bytes; the fragment is lost",
                        module->my_rank, wire->sender_rank, pl->payload_len);
        if (pl->placing)
            placer->placed(&module->super, wire->sender_rank, pl->place.cookie,
                           CRMPI_ERR_OUT_OF_RESOURCE);
        return false;
    }
    peer->receiving = true;
    btl_ofi_payload_post(module, peer);
    return true;
}

/*
 * Deliver `buf`, whose turn has come, and every held fragment that follows it without a gap,
 * until an announced payload must be waited for.
 * @return fragments delivered
 */
static int btl_ofi_recv_stream(btl_ofi_module_t *module, btl_ofi_peer_t *peer, btl_ofi_buf_t *buf)
{
    int delivered = 0;

    for (;;) {
        btl_ofi_hdr_t wire;

        memcpy(&wire, buf->data, sizeof(wire));
        if (wire.flags & BTL_OFI_HDR_ANNOUNCE) {
            if (btl_ofi_recv_announce(module, peer, buf, &wire))
                return delivered;
        } else {
            btl_ofi_recv_deliver(module, buf->peer_rank, wire.tag, buf->data + BTL_OFI_HDR_SIZE,
                                 buf->len - BTL_OFI_HDR_SIZE);
            btl_ofi_recv_post(module, buf);
            delivered++;
        }
        peer->recv_seq++;
        buf = peer->early;
        if (!buf || buf->seq != peer->recv_seq)
            return delivered;
        peer->early = buf->next;
    }
}

int btl_ofi_payload_complete(btl_ofi_module_t *module, btl_ofi_payload_t *pl, size_t len,
                             int status, bool deliver)
{
    btl_ofi_peer_t *peer = (btl_ofi_peer_t *)((char *)pl - offsetof(btl_ofi_peer_t, payload));
    const uint32_t sender_rank = (uint32_t)(peer - module->peers);
    const crmpi_btl_placer_t *placer = &crmpi_btl_place_table[pl->tag];
    int delivered = 0;

    if (status == CRMPI_OK && len != pl->payload_len) {
        crmpi_log_error("btl:ofi: rank %u <- rank %u: a payload of %zu bytes where %zu were "
                        "announced; the fragment is lost",
                        module->my_rank, sender_rank, len, pl->payload_len);
        status = CRMPI_ERR_PROTO;
    }
    if (!deliver && status == CRMPI_OK)
        status = CRMPI_ERR_UNREACH; /* finalize: nobody listens */
    if (status == CRMPI_OK)
        module->num_payloads++;
    if (pl->placing) {
        if (status == CRMPI_OK && pl->bounce &&
            !crmpi_btl_place_valid(&pl->place, pl->payload_len)) {
            crmpi_log_error("btl:ofi: rank %u <- rank %u: the placer answered with %d pieces "
                            "that do not add up to the payload's %zu bytes; dropped",
                            module->my_rank, sender_rank, pl->place.iovcnt, pl->payload_len);
            status = CRMPI_ERR_BAD_PARAM;
        } else if (status == CRMPI_OK && pl->bounce) {
            crmpi_btl_place_copy(&pl->place, pl->bounce);
            module->place_copied_bytes += pl->payload_len;
        } else if (status == CRMPI_OK) {
            module->placed_bytes += pl->payload_len;
        }
        placer->placed(&module->super, sender_rank, pl->place.cookie, status);
        delivered++;
    } else if (status == CRMPI_OK) {
        btl_ofi_recv_deliver(module, sender_rank, pl->tag, pl->bounce,
                             pl->hdr_len + pl->payload_len);
        delivered++;
    }
    free(pl->bounce);
    pl->bounce = NULL;
    peer->receiving = false;
    if (!deliver)
        return 0;
    /* The stream goes on: the fragments held behind this one. */
    peer->recv_seq++;
    if (peer->early && peer->early->seq == peer->recv_seq) {
        btl_ofi_buf_t *buf = peer->early;

        peer->early = buf->next;
        delivered += btl_ofi_recv_stream(module, peer, buf);
    }
    return delivered;
}

int btl_ofi_recv_complete(btl_ofi_module_t *module, btl_ofi_buf_t *buf, size_t len, bool deliver)
{
    btl_ofi_hdr_t wire;
    btl_ofi_peer_t *peer;
    int32_t ahead;

    if (!deliver)
        return 0; /* finalize: nobody listens, and the buffers are about to be freed */
    /* Who sent it, before anything of the claimed sender's state is touched (btl_ofi.h,
     * "Who may send"); the token first, as nothing else in the header means anything
     * before it. */
    if (len < BTL_OFI_HDR_SIZE) {
        crmpi_btl_auth_refuse(&module->auth, CRMPI_BTL_AUTH_NO_RANK,
                              "a message shorter than a header");
        btl_ofi_recv_post(module, buf);
        return 0;
    }
    memcpy(&wire, buf->data, sizeof(wire));
    if (wire.sender_rank >= module->job_size || !module->peers[wire.sender_rank].known) {
        crmpi_btl_auth_refuse(&module->auth, wire.sender_rank,
                              wire.sender_rank >= module->job_size ? "no such rank in this job"
                                                                   : "not a peer of this module");
        btl_ofi_recv_post(module, buf);
        return 0;
    }
    if (!crmpi_btl_auth_match(wire.token, module->peers[wire.sender_rank].token)) {
        crmpi_btl_auth_refuse(&module->auth, wire.sender_rank,
                              "its token does not prove the job's key to this module (a "
                              "process of another job or user, or a token of an earlier module)");
        btl_ofi_recv_post(module, buf);
        return 0;
    }
    if (wire.tag >= CRMPI_BTL_TAG_MAX) {
        crmpi_btl_auth_refuse(&module->auth, wire.sender_rank, "a tag out of range");
        btl_ofi_recv_post(module, buf);
        return 0;
    }
    buf->peer_rank = wire.sender_rank;
    buf->seq = wire.seq;
    buf->len = len;
    peer = &module->peers[wire.sender_rank];
    /* Sequence numbers wrap: compare by their difference. The one whose payload is being
     * received is delivered already. */
    ahead = (int32_t)(wire.seq - peer->recv_seq);
    if (ahead < 0 || (ahead == 0 && peer->receiving)) {
        crmpi_log_error("btl:ofi: rank %u <- rank %u: fragment %u arrived again (%u expected); "
                        "dropped",
                        module->my_rank, wire.sender_rank, wire.seq,
                        peer->recv_seq + peer->receiving);
        btl_ofi_recv_post(module, buf);
        return 0;
    }
    if (ahead > 0) {
        module->num_early++;
        btl_ofi_recv_hold(peer, buf);
        return 0;
    }
    return btl_ofi_recv_stream(module, peer, buf);
}
