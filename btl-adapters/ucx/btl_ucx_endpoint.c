/*
 * btl_ucx_endpoint.c: fragments of the ucx BTL (btl_ucx.h): the modex blob, the send path,
 * and in-order delivery of what the AM handlers receive.
 */
#include "config.h"

#include "btl_ucx.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "log.h"

/* A placed fragment's AM header is the wire and the fragment's header, contiguous. */
_Static_assert(offsetof(btl_ucx_send_t, data) ==
                   offsetof(btl_ucx_send_t, wire) + sizeof(btl_ucx_wire_t),
               "the send's data must follow its wire");

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
    modex->takes_placed = module->recv_place;
    modex->addr_len = (uint32_t)module->addr_len;
    memcpy(modex->nonce, module->auth.nonce, sizeof(modex->nonce));
    memcpy(modex + 1, module->addr, module->addr_len);
    *blob_out = modex;
    *len_out = len;
    return CRMPI_OK;
}

int btl_ucx_modex_unpack(const void *blob, size_t len, const void **addr_out, size_t *addr_len_out,
                         const uint8_t **nonce_out, bool *takes_placed_out)
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
    if (takes_placed_out)
        *takes_placed_out = modex->takes_placed != 0;
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
    /* A payload the peer's placer may want goes by rendezvous, its header with the AM's
     * ("Placement"); the others eager, whole with the AM (btl_ucx.h, "Order"). */
    const bool placed = ep->place && payload_len >= CRMPI_BTL_PLACE_MIN &&
                        hdr_len <= BTL_UCX_PLACE_HDR_MAX &&
                        crmpi_btl_place_table[tag].hdr_len == hdr_len;
    ucp_request_param_t param = {
        .op_attr_mask =
            UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS,
        .cb.send = btl_ucx_endpoint_send_done,
        .flags = placed ? UCP_AM_SEND_FLAG_RNDV : UCP_AM_SEND_FLAG_EAGER,
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
    send->wire = (btl_ucx_wire_t){
        .sender_rank = module->my_rank, .seq = ep->send_seq, .hdr_len = placed ? hdr_len : 0};
    memcpy(send->wire.token, ep->token, sizeof(send->wire.token));
    send->len = len;
    memcpy(send->data, hdr, hdr_len);
    if (payload_len)
        crmpi_convertor_pack(payload, send->data + hdr_len, payload_len);
    param.user_data = send;
    if (placed)
        ptr = module->lib->am_send_nbx(ep->ucp_ep, tag, &send->wire, sizeof(send->wire) + hdr_len,
                                       send->data + hdr_len, payload_len, &param);
    else
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

/* Keep a fragment that came before its turn, in sequence order: a copy of its bytes, or of a
 * placed one's header with its rendezvous descriptor (`desc`, its payload `payload_len`). */
static void btl_ucx_endpoint_hold(btl_ucx_module_t *module, btl_ucx_peer_t *peer, uint32_t seq,
                                  uint8_t tag, const void *data, size_t len, void *desc,
                                  size_t payload_len)
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
    early->desc = desc;
    early->payload_len = payload_len;
    memcpy(early->data, data, len);
    while (*link && (int32_t)((*link)->seq - seq) < 0)
        link = &(*link)->next;
    early->next = *link;
    *link = early;
    module->num_early++;
}

/* A placed fragment's turn has come: its payload is asked for after the worker's progress
 * (btl_ucx_endpoint_payload_start), and the sender's stream waits for it. */
static void btl_ucx_endpoint_payload_due(btl_ucx_module_t *module, btl_ucx_peer_t *peer,
                                         uint8_t tag, const void *hdr, size_t hdr_len, void *desc,
                                         size_t payload_len)
{
    btl_ucx_payload_t *pl = &peer->payload;

    memset(pl, 0, sizeof(*pl));
    pl->desc = desc;
    pl->tag = tag;
    pl->hdr_len = hdr_len;
    pl->payload_len = payload_len;
    memcpy(pl->hdr, hdr, hdr_len);
    peer->receiving = true;
    module->num_to_start++;
}

/* Deliver the held fragments that follow without a gap, until a placed one's turn. */
static int btl_ucx_endpoint_deliver_held(btl_ucx_module_t *module, uint32_t sender_rank)
{
    btl_ucx_peer_t *peer = &module->peers[sender_rank];
    int delivered = 0;

    while (!peer->receiving && peer->early && peer->early->seq == peer->recv_seq) {
        btl_ucx_early_t *early = peer->early;

        peer->early = early->next;
        if (early->desc) {
            btl_ucx_endpoint_payload_due(module, peer, early->tag, early->data, early->len,
                                         early->desc, early->payload_len);
        } else {
            peer->recv_seq++;
            btl_ucx_endpoint_deliver(module, sender_rank, early->tag, early->data, early->len);
            delivered++;
        }
        free(early);
    }
    return delivered;
}

/* Where fragment `seq` of `sender_rank` stands: -1 arrived again (said; dropped), 0 its
 * turn, 1 ahead of its turn. The one whose payload is being received was delivered. */
static int btl_ucx_endpoint_turn(btl_ucx_module_t *module, uint32_t sender_rank, uint32_t seq)
{
    const btl_ucx_peer_t *peer = &module->peers[sender_rank];
    /* Sequence numbers wrap: compare by their difference. */
    int32_t ahead = (int32_t)(seq - peer->recv_seq);

    if (ahead < 0 || (ahead == 0 && peer->receiving)) {
        crmpi_log_error("btl:ucx: rank %u <- rank %u: fragment %u arrived again (%u expected); "
                        "dropped",
                        module->my_rank, sender_rank, seq, peer->recv_seq + peer->receiving);
        return -1;
    }
    return ahead > 0;
}

int btl_ucx_endpoint_recv(btl_ucx_module_t *module, uint32_t sender_rank, uint32_t seq, uint8_t tag,
                          const void *data, size_t len)
{
    btl_ucx_peer_t *peer = &module->peers[sender_rank];
    int turn = btl_ucx_endpoint_turn(module, sender_rank, seq);

    if (turn < 0)
        return 0;
    if (turn > 0) {
        btl_ucx_endpoint_hold(module, peer, seq, tag, data, len, NULL, 0);
        return 0;
    }
    /* Its turn: deliver it, then every held fragment that follows it without a gap. */
    peer->recv_seq++;
    btl_ucx_endpoint_deliver(module, sender_rank, tag, data, len);
    return 1 + btl_ucx_endpoint_deliver_held(module, sender_rank);
}

/* A placed fragment arrived (its header in hand, its payload a rendezvous descriptor).
 * @return UCS_INPROGRESS: the descriptor is kept; UCS_OK: dropped (UCX releases it) */
static ucs_status_t btl_ucx_endpoint_recv_placed(btl_ucx_module_t *module, uint32_t sender_rank,
                                                 uint32_t seq, uint8_t tag, const void *hdr,
                                                 size_t hdr_len, void *desc, size_t payload_len)
{
    btl_ucx_peer_t *peer = &module->peers[sender_rank];
    int turn = btl_ucx_endpoint_turn(module, sender_rank, seq);

    if (turn < 0)
        return UCS_OK;
    if (turn > 0)
        btl_ucx_endpoint_hold(module, peer, seq, tag, hdr, hdr_len, desc, payload_len);
    else
        btl_ucx_endpoint_payload_due(module, peer, tag, hdr, hdr_len, desc, payload_len);
    return UCS_INPROGRESS;
}

/* The end of a payload's receive (`status` UCS_OK: every byte is in): tell the placer, or
 * deliver the fragment whole; then the sender's stream goes on. @return fragments delivered */
static int btl_ucx_endpoint_payload_end(btl_ucx_module_t *module, uint32_t sender_rank,
                                        ucs_status_t status)
{
    btl_ucx_peer_t *peer = &module->peers[sender_rank];
    btl_ucx_payload_t *pl = &peer->payload;
    const crmpi_btl_placer_t *placer = &crmpi_btl_place_table[pl->tag];
    int rc = CRMPI_OK;
    int delivered = 1;

    if (status != UCS_OK) {
        if (!module->finalizing)
            crmpi_log_error("btl:ucx: rank %u <- rank %u: receiving a payload of %zu bytes "
                            "failed: %s; the fragment is lost",
                            module->my_rank, sender_rank, pl->payload_len,
                            module->lib->status_string(status));
        rc = CRMPI_ERR_IO;
        delivered = 0;
    } else {
        module->num_payloads++;
    }
    if (module->finalizing && rc == CRMPI_OK)
        rc = CRMPI_ERR_UNREACH; /* nobody listens any more */
    if (pl->placing) {
        if (rc == CRMPI_OK && pl->bounce) {
            crmpi_btl_place_copy(&pl->place, pl->bounce);
            module->place_copied_bytes += pl->payload_len;
        } else if (rc == CRMPI_OK) {
            module->placed_bytes += pl->payload_len;
        }
        placer->placed(&module->super, sender_rank, pl->place.cookie, rc);
    } else if (rc == CRMPI_OK) {
        btl_ucx_endpoint_deliver(module, sender_rank, pl->tag, pl->bounce,
                                 pl->hdr_len + pl->payload_len);
    }
    free(pl->bounce);
    pl->bounce = NULL;
    peer->receiving = false;
    if (module->finalizing)
        return 0;
    peer->recv_seq++;
    return delivered + btl_ucx_endpoint_deliver_held(module, sender_rank);
}

/* UCP's completion of a payload's receive that did not complete at once. */
static void btl_ucx_endpoint_payload_done(void *request, ucs_status_t status, size_t length,
                                          void *user_data)
{
    btl_ucx_peer_t *peer = user_data;
    btl_ucx_module_t *module = peer->payload.module;

    (void)length;
    module->lib->request_free(request);
    module->delivered +=
        btl_ucx_endpoint_payload_end(module, (uint32_t)(peer - module->peers), status);
}

/* Ask the placer, then UCX, for one payload whose turn came. @return fragments delivered */
static int btl_ucx_endpoint_payload_begin(btl_ucx_module_t *module, uint32_t sender_rank)
{
    btl_ucx_peer_t *peer = &module->peers[sender_rank];
    btl_ucx_payload_t *pl = &peer->payload;
    const crmpi_btl_placer_t *placer = &crmpi_btl_place_table[pl->tag];
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .cb.recv_am = btl_ucx_endpoint_payload_done,
        .user_data = peer,
    };
    bool direct = false;
    void *desc = pl->desc;
    ucs_status_ptr_t ptr;

    pl->desc = NULL;
    pl->module = module;
    if (placer->hdr_len == pl->hdr_len &&
        placer->place(&module->super, sender_rank, pl->hdr, pl->payload_len, &pl->place)) {
        pl->placing = true;
        /* Straight into the destination unless a tail is discarded or the answer is bad (an
         * error at the end then). */
        direct = crmpi_btl_place_valid(&pl->place, pl->payload_len) && !pl->place.discard &&
                 pl->place.iovcnt > 0;
        if (!direct)
            pl->bounce = malloc(pl->payload_len);
    } else {
        /* Declined (or no placer): the recv callback gets header and payload together. */
        pl->bounce = malloc(pl->hdr_len + pl->payload_len);
        if (pl->bounce)
            memcpy(pl->bounce, pl->hdr, pl->hdr_len);
    }
    if (!direct && !pl->bounce) {
        crmpi_log_error("btl:ucx: rank %u <- rank %u: out of memory for a payload of %zu "
                        "bytes; the fragment is lost",
                        module->my_rank, sender_rank, pl->payload_len);
        module->lib->am_data_release(module->worker, desc);
        return btl_ucx_endpoint_payload_end(module, sender_rank, UCS_ERR_NO_MEMORY);
    }
    if (direct) {
        for (int i = 0; i < pl->place.iovcnt; i++)
            pl->iov[i] = (ucp_dt_iov_t){.buffer = pl->place.iov[i].iov_base,
                                        .length = pl->place.iov[i].iov_len};
        param.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
        param.datatype = ucp_dt_make_iov();
        ptr = module->lib->am_recv_data_nbx(module->worker, desc, pl->iov, (size_t)pl->place.iovcnt,
                                            &param);
    } else {
        ptr = module->lib->am_recv_data_nbx(module->worker, desc,
                                            pl->bounce + (pl->placing ? 0 : pl->hdr_len),
                                            pl->payload_len, &param);
    }
    if (ptr == NULL)
        return btl_ucx_endpoint_payload_end(module, sender_rank, UCS_OK);
    if (UCS_PTR_IS_ERR(ptr))
        return btl_ucx_endpoint_payload_end(module, sender_rank, UCS_PTR_STATUS(ptr));
    return 0; /* btl_ucx_endpoint_payload_done ends it */
}

int btl_ucx_endpoint_payload_start(btl_ucx_module_t *module)
{
    int delivered = 0;

    /* A receive that completes at once may make the next payload of its sender due: passes
     * until none is left (every due payload holds its descriptor until it begins). */
    for (bool began = true; module->num_to_start > 0 && began;) {
        began = false;
        for (uint32_t r = 0; r < module->job_size; r++) {
            if (module->peers[r].receiving && module->peers[r].payload.desc) {
                module->num_to_start--;
                began = true;
                delivered += btl_ucx_endpoint_payload_begin(module, r);
            }
        }
    }
    return delivered;
}

void btl_ucx_endpoint_payload_abort(btl_ucx_module_t *module)
{
    for (uint32_t r = 0; module->peers && r < module->job_size; r++) {
        btl_ucx_peer_t *peer = &module->peers[r];

        for (btl_ucx_early_t *early = peer->early; early; early = early->next) {
            if (early->desc)
                module->lib->am_data_release(module->worker, early->desc);
            early->desc = NULL;
        }
        if (peer->receiving && peer->payload.desc) {
            module->lib->am_data_release(module->worker, peer->payload.desc);
            peer->payload.desc = NULL;
            peer->receiving = false; /* the placer was never asked */
        }
    }
    module->num_to_start = 0;
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
    if (header_length < sizeof(wire)) {
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
    if (header_length != sizeof(wire) + wire.hdr_len) {
        crmpi_btl_auth_refuse(&module->auth, wire.sender_rank,
                              "an active message header of another length than it says");
        return UCS_OK;
    }
    /* A placed fragment comes by rendezvous, to a module that takes them; every other is
     * sent eager, its data here whole (btl_ucx_endpoint_send). */
    if (!!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != (wire.hdr_len != 0) ||
        (wire.hdr_len && (!module->recv_place || wire.hdr_len > BTL_UCX_PLACE_HDR_MAX))) {
        crmpi_btl_auth_refuse(&module->auth, wire.sender_rank,
                              "a fragment by a protocol this module does not take from it");
        return UCS_OK;
    }
    if (wire.hdr_len)
        return btl_ucx_endpoint_recv_placed(module, wire.sender_rank, wire.seq, ctx->tag,
                                            (const char *)header + sizeof(wire), wire.hdr_len, data,
                                            length);
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
        free(module->peers[r].payload.bounce);
        module->peers[r].payload.bounce = NULL;
    }
}
