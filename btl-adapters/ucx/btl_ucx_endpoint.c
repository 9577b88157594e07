/*
 * btl_ucx_endpoint.c: fragments of the ucx BTL (btl_ucx.h): the modex blob, the send path,
 * and in-order delivery of what the AM handlers receive.
 */
#include "config.h"

#include "btl_ucx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "log.h"

int btl_ucx_modex_pack(const btl_ucx_module_t *module, void **blob_out, size_t *len_out)
{
    const size_t len = sizeof(btl_ucx_modex_t) + module->addr_len;
    btl_ucx_modex_t *modex = calloc(1, len);

    if (!modex) {
        crmpi_log_error("btl:ucx: rank %u: out of memory for its modex data", module->my_rank);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    modex->magic = BTL_UCX_MAGIC;
    modex->version = BTL_UCX_VERSION;
    modex->addr_len = (uint32_t)module->addr_len;
    memcpy(modex->nonce, module->auth.nonce, sizeof(modex->nonce));
    memcpy(modex + 1, module->addr, module->addr_len);
    *blob_out = modex;
    *len_out = len;
    return CRMPI_OK;
}

int btl_ucx_modex_unpack(const void *blob, size_t len, const void **addr_out, size_t *addr_len_out,
                         const uint8_t **nonce_out)
{
    const btl_ucx_modex_t *modex = blob;

    /* The rte hands back malloc'ed blobs: aligned for the header's fields. */
    if (len < sizeof(*modex) || modex->magic != BTL_UCX_MAGIC ||
        modex->version != BTL_UCX_VERSION || modex->addr_len == 0 ||
        modex->addr_len > BTL_UCX_ADDR_MAX || len != sizeof(*modex) + modex->addr_len)
        return CRMPI_ERR_PROTO;
    *addr_out = modex + 1;
    *addr_len_out = modex->addr_len;
    *nonce_out = modex->nonce;
    return CRMPI_OK;
}

/* UCP's completion of a send that did not complete at once: the buffer goes. */
static void btl_ucx_endpoint_send_done(void *request, ucs_status_t status, void *user_data)
{
    btl_ucx_send_t *send = user_data;
    btl_ucx_module_t *module = send->module;
    crmpi_btl_endpoint_t *ep = module->endpoints[send->peer_rank];

    if (status != UCS_OK && !module->finalizing) {
        crmpi_log_error("btl:ucx: rank %u -> rank %u: a send failed: %s; the fragment is lost, "
                        "and the peer is unreachable from now on",
                        module->my_rank, send->peer_rank, module->lib->status_string(status));
        if (ep)
            ep->failed = true;
    }
    module->num_sending--;
    module->delivered++;
    free(send);
    module->lib->request_free(request);
}

int btl_ucx_endpoint_send(crmpi_btl_module_t *base, crmpi_btl_endpoint_t *ep, uint8_t tag,
                          const void *hdr, size_t hdr_len, crmpi_convertor_t *payload,
                          size_t payload_len)
{
    btl_ucx_module_t *module = (btl_ucx_module_t *)base;
    const size_t len = hdr_len + payload_len;
    ucp_request_param_t param = {
        .op_attr_mask =
            UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS,
        .cb.send = btl_ucx_endpoint_send_done,
        /* Eager only: the fragment arrives whole with the AM (btl_ucx.h, "Order"). */
        .flags = UCP_AM_SEND_FLAG_EAGER,
    };
    size_t start = payload ? payload->position : 0;
    btl_ucx_send_t *send;
    ucs_status_ptr_t ptr;

    if (ep->failed)
        return CRMPI_ERR_UNREACH;
    if (module->num_sending >= module->max_sends)
        return CRMPI_ERR_RESOURCE_BUSY;
    send = malloc(sizeof(*send) + len);
    if (!send)
        return CRMPI_ERR_RESOURCE_BUSY; /* memory may come back with completions */
    send->module = module;
    send->peer_rank = ep->peer_rank;
    send->wire = (btl_ucx_wire_t){.sender_rank = module->my_rank, .seq = ep->send_seq};
    memcpy(send->wire.token, ep->token, sizeof(send->wire.token));
    send->len = len;
    memcpy(send->data, hdr, hdr_len);
    if (payload_len)
        crmpi_convertor_pack(payload, send->data + hdr_len, payload_len);
    param.user_data = send;
    ptr = module->lib->am_send_nbx(ep->ucp_ep, tag, &send->wire, sizeof(send->wire), send->data,
                                   len, &param);
    if (UCS_PTR_IS_ERR(ptr)) {
        crmpi_log_error("btl:ucx: rank %u -> rank %u: ucp_am_send_nbx: %s; the peer is "
                        "unreachable from now on",
                        module->my_rank, ep->peer_rank,
                        module->lib->status_string(UCS_PTR_STATUS(ptr)));
        if (payload_len)
            crmpi_convertor_set_position(payload, start);
        free(send);
        ep->failed = true;
        return CRMPI_ERR_UNREACH;
    }
    ep->send_seq++;
    if (ptr == NULL) {
        free(send); /* complete at once: UCX copied it */
        return CRMPI_OK;
    }
    module->num_sending++;
    return CRMPI_OK;
}

/* Hand one fragment to its callback. */
static void btl_ucx_endpoint_deliver(btl_ucx_module_t *module, uint32_t sender_rank, uint8_t tag,
                                     const void *data, size_t len)
{
    crmpi_btl_recv_fn_t fn = crmpi_btl_recv_table[tag];

    if (fn)
        fn(&module->super, sender_rank, data, len);
    else
        crmpi_log_error("btl:ucx: rank %u <- rank %u: a fragment for tag %u, which has no "
                        "receiver; dropped",
                        module->my_rank, sender_rank, tag);
}

/* Keep a copy of a fragment that came before its turn, in sequence order. */
static void btl_ucx_endpoint_hold(btl_ucx_module_t *module, btl_ucx_peer_t *peer, uint32_t seq,
                                  uint8_t tag, const void *data, size_t len)
{
    btl_ucx_early_t *early = malloc(sizeof(*early) + len);
    btl_ucx_early_t **link = &peer->early;

    if (!early) {
        crmpi_log_error("btl:ucx: rank %u: out of memory for a fragment of %zu bytes that "
                        "arrived before its turn; the stream cannot go on",
                        module->my_rank, len);
        abort();
    }
    early->seq = seq;
    early->tag = tag;
    early->len = len;
    memcpy(early->data, data, len);
    while (*link && (int32_t)((*link)->seq - seq) < 0)
        link = &(*link)->next;
    early->next = *link;
    *link = early;
    module->num_early++;
}

int btl_ucx_endpoint_recv(btl_ucx_module_t *module, uint32_t sender_rank, uint32_t seq, uint8_t tag,
                          const void *data, size_t len)
{
    btl_ucx_peer_t *peer = &module->peers[sender_rank];
    /* Sequence numbers wrap: compare by their difference. */
    int32_t ahead = (int32_t)(seq - peer->recv_seq);
    int delivered = 1;

    if (ahead < 0) {
        crmpi_log_error("btl:ucx: rank %u <- rank %u: fragment %u arrived again (%u expected); "
                        "dropped",
                        module->my_rank, sender_rank, seq, peer->recv_seq);
        return 0;
    }
    if (ahead > 0) {
        btl_ucx_endpoint_hold(module, peer, seq, tag, data, len);
        return 0;
    }
    /* Its turn: deliver it, then every held fragment that follows it without a gap. */
    peer->recv_seq++;
    btl_ucx_endpoint_deliver(module, sender_rank, tag, data, len);
    while (peer->early && peer->early->seq == peer->recv_seq) {
        btl_ucx_early_t *early = peer->early;

        peer->early = early->next;
        peer->recv_seq++;
        btl_ucx_endpoint_deliver(module, sender_rank, early->tag, early->data, early->len);
        free(early);
        delivered++;
    }
    return delivered;
}

ucs_status_t btl_ucx_endpoint_am_recv(void *arg, const void *header, size_t header_length,
                                      void *data, size_t length, const ucp_am_recv_param_t *param)
{
    const btl_ucx_am_ctx_t *ctx = arg;
    btl_ucx_module_t *module = ctx->module;
    btl_ucx_wire_t wire;

    /* Finalize: nobody listens any more (btl_ucx_module_flush_close). */
    if (module->finalizing)
        return UCS_OK;
    /* Who sent it, before anything of the claimed sender's state is touched (btl_ucx.h,
     * "Who may send"); the token first, as nothing else in the header means anything
     * before it. */
    if (header_length != sizeof(wire)) {
        crmpi_btl_auth_refuse(&module->auth, CRMPI_BTL_AUTH_NO_RANK,
                              "an active message whose header is not a fragment's");
        return UCS_OK;
    }
    memcpy(&wire, header, sizeof(wire));
    if (wire.sender_rank >= module->job_size || !module->peers[wire.sender_rank].known) {
        crmpi_btl_auth_refuse(&module->auth, wire.sender_rank,
                              wire.sender_rank >= module->job_size ? "no such rank in this job"
                                                                   : "not a peer of this module");
        return UCS_OK;
    }
    if (!crmpi_btl_auth_match(wire.token, module->peers[wire.sender_rank].token)) {
        crmpi_btl_auth_refuse(&module->auth, wire.sender_rank,
                              "its token does not prove the job's key to this module (a "
                              "process of another job or user, or a token of an earlier module)");
        return UCS_OK;
    }
    /* Every sender asks for eager (btl_ucx_endpoint_send); data is here, whole. */
    if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
        crmpi_btl_auth_refuse(&module->auth, wire.sender_rank,
                              "a fragment by rendezvous, which this crmpi never sends");
        return UCS_OK;
    }
    module->delivered +=
        btl_ucx_endpoint_recv(module, wire.sender_rank, wire.seq, ctx->tag, data, length);
    return UCS_OK;
}

void btl_ucx_endpoint_early_free(btl_ucx_module_t *module)
{
    for (uint32_t r = 0; module->peers && r < module->job_size; r++) {
        while (module->peers[r].early) {
            btl_ucx_early_t *early = module->peers[r].early;

            module->peers[r].early = early->next;
            free(early);
        }
    }
}
