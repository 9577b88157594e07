/*
 * btl_ofi_endpoint.c: fragments of the ofi BTL (btl_ofi.h): the modex blob, the send path
 * through the send pool, and in-order delivery of the receive buffers' completions.
 */
#include "config.h"

#include "btl_ofi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

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

int btl_ofi_endpoint_send(crmpi_btl_module_t *base, crmpi_btl_endpoint_t *ep, uint8_t tag,
                          const void *hdr, size_t hdr_len, crmpi_convertor_t *payload,
                          size_t payload_len)
{
    btl_ofi_module_t *module = (btl_ofi_module_t *)base;
    const size_t wire_len = BTL_OFI_HDR_SIZE + hdr_len + payload_len;
    btl_ofi_buf_t *buf = module->send_free;
    btl_ofi_hdr_t wire = {.sender_rank = module->my_rank, .seq = ep->send_seq, .tag = tag};
    size_t start = payload ? payload->position : 0;
    ssize_t rc;

    if (ep->failed)
        return CRMPI_ERR_UNREACH;
    /* Every buffer is in flight: their completions come with progress. */
    if (!buf)
        return CRMPI_ERR_RESOURCE_BUSY;
    memcpy(wire.token, ep->token, sizeof(wire.token));
    memcpy(buf->data, &wire, sizeof(wire));
    memcpy(buf->data + BTL_OFI_HDR_SIZE, hdr, hdr_len);
    if (payload_len)
        crmpi_convertor_pack(payload, buf->data + BTL_OFI_HDR_SIZE + hdr_len, payload_len);
    rc = fi_send(module->ep, buf->data, wire_len, module->send_desc, ep->addr, &buf->ctx);
    if (rc == -FI_EAGAIN) {
        /* The provider's queue is full (or a connection is still being made): nothing was
         * consumed, so the convertor goes back to where it was. */
        if (payload_len)
            crmpi_convertor_set_position(payload, start);
        return CRMPI_ERR_RESOURCE_BUSY;
    }
    if (rc != 0) {
        crmpi_log_error("btl:ofi: rank %u -> rank %u: fi_send: %s (%zd); the peer is "
                        "unreachable from now on",
                        module->my_rank, ep->peer_rank, btl_ofi_strerror(module, (int)rc), rc);
        if (payload_len)
            crmpi_convertor_set_position(payload, start);
        ep->failed = true;
        return CRMPI_ERR_UNREACH;
    }
    module->send_free = buf->next;
    module->num_sending++;
    buf->next = NULL;
    buf->peer_rank = ep->peer_rank;
    buf->len = wire_len;
    ep->send_seq++;
    return CRMPI_OK;
}

void btl_ofi_send_complete(btl_ofi_module_t *module, btl_ofi_buf_t *buf, bool failed)
{
    crmpi_btl_endpoint_t *ep = module->endpoints[buf->peer_rank];

    if (failed && ep)
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
                 &buf->ctx);
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
static void btl_ofi_recv_deliver(btl_ofi_module_t *module, btl_ofi_buf_t *buf, uint8_t tag)
{
    crmpi_btl_recv_fn_t fn = crmpi_btl_recv_table[tag];

    if (fn)
        fn(&module->super, buf->peer_rank, buf->data + BTL_OFI_HDR_SIZE,
           buf->len - BTL_OFI_HDR_SIZE);
    else
        crmpi_log_error("btl:ofi: rank %u <- rank %u: a fragment for tag %u, which has no "
                        "receiver; dropped",
                        module->my_rank, buf->peer_rank, tag);
    btl_ofi_recv_post(module, buf);
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

int btl_ofi_recv_complete(btl_ofi_module_t *module, btl_ofi_buf_t *buf, size_t len, bool deliver)
{
    btl_ofi_hdr_t wire;
    btl_ofi_peer_t *peer;
    int32_t ahead;
    int delivered = 0;

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
    /* Sequence numbers wrap: compare by their difference. */
    ahead = (int32_t)(wire.seq - peer->recv_seq);
    if (ahead < 0) {
        crmpi_log_error("btl:ofi: rank %u <- rank %u: fragment %u arrived again (%u expected); "
                        "dropped",
                        module->my_rank, wire.sender_rank, wire.seq, peer->recv_seq);
        btl_ofi_recv_post(module, buf);
        return 0;
    }
    if (ahead > 0) {
        module->num_early++;
        btl_ofi_recv_hold(peer, buf);
        return 0;
    }
    /* Its turn: deliver it, then every held fragment that follows it without a gap. */
    for (;;) {
        peer->recv_seq++;
        memcpy(&wire, buf->data, sizeof(wire));
        btl_ofi_recv_deliver(module, buf, wire.tag);
        delivered++;
        buf = peer->early;
        if (!buf || buf->seq != peer->recv_seq)
            break;
        peer->early = buf->next;
    }
    return delivered;
}
