/*
 * btl_ofi_module.c: the ofi module's slots (btl.h): creation of the provider's objects and
 * the buffer pools, add_procs / del_procs, progress and finalize (btl_ofi.h).
 */
#include "config.h"

#include "btl_ofi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "crmpi_status.h"
#include "log.h"

/* Completion queue entries beyond the buffers: room for error entries. */
#define BTL_OFI_CQ_SLACK 64
/* Finalize's pause between polls when nothing completed (nanoseconds). */
#define BTL_OFI_FINALIZE_PAUSE_NS 100000

const char *btl_ofi_strerror(const btl_ofi_module_t *module, int fi_status)
{
    return module->lib.strerror(fi_status < 0 ? -fi_status : fi_status);
}

/* `count` buffers of module->buf_size in one page-aligned slab, registered for `access`. */
static int btl_ofi_module_pool_create(btl_ofi_module_t *module, size_t count, uint64_t access,
                                      uint64_t key, btl_ofi_op_kind_t kind, char **slab_out,
                                      btl_ofi_buf_t **bufs_out, struct fid_mr **mr_out)
{
    const size_t bytes = count * module->buf_size;
    void *slab;
    int rc;

    if (posix_memalign(&slab, BTL_OFI_PAGE, bytes) != 0) {
        crmpi_log_error("btl:ofi: rank %u: out of memory for %zu buffers of %zu bytes",
                        module->my_rank, count, module->buf_size);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    *slab_out = slab;
    *bufs_out = calloc(count, sizeof(btl_ofi_buf_t));
    if (!*bufs_out) {
        crmpi_log_error("btl:ofi: rank %u: out of memory for %zu buffer descriptors",
                        module->my_rank, count);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < count; i++) {
        (*bufs_out)[i].op.kind = kind;
        (*bufs_out)[i].tsend.kind = BTL_OFI_OP_TSEND;
        (*bufs_out)[i].data = (char *)slab + i * module->buf_size;
    }
    /* Keys matter only without FI_MR_PROV_KEY, where they must differ per domain. */
    rc = fi_mr_reg(module->domain, slab, bytes, access, 0, key, 0, mr_out, NULL);
    if (rc != 0) {
        crmpi_log_error("btl:ofi: rank %u: fi_mr_reg of %zu bytes: %s (%d)", module->my_rank, bytes,
                        btl_ofi_strerror(module, rc), rc);
        return CRMPI_ERR_IO;
    }
    return CRMPI_OK;
}

/* Close a libfabric object if it is open. */
static void btl_ofi_module_close_fid(btl_ofi_module_t *module, struct fid *fid, const char *what)
{
    int rc = fi_close(fid);

    if (rc != 0)
        crmpi_log_error("btl:ofi: rank %u: closing the %s: %s (%d)", module->my_rank, what,
                        btl_ofi_strerror(module, rc), rc);
}

/* Close and free everything the module holds but the library and `info` (finalize's and a
 * failed create's common part); the objects close before the domain that made them. */
static void btl_ofi_module_destroy(btl_ofi_module_t *module)
{
    if (module->ep)
        btl_ofi_module_close_fid(module, &module->ep->fid, "endpoint");
    /* Payloads still being received: closing the endpoint ended their receives, so their
     * destinations are no longer written, and their placers hear of it now. */
    for (uint32_t r = 0; module->peers && r < module->job_size; r++) {
        if (module->peers[r].receiving)
            btl_ofi_payload_complete(module, &module->peers[r].payload, 0, CRMPI_ERR_UNREACH,
                                     false);
    }
    if (module->av)
        btl_ofi_module_close_fid(module, &module->av->fid, "address vector");
    if (module->cq)
        btl_ofi_module_close_fid(module, &module->cq->fid, "completion queue");
    if (module->send_mr)
        btl_ofi_module_close_fid(module, &module->send_mr->fid, "send buffers' registration");
    if (module->recv_mr)
        btl_ofi_module_close_fid(module, &module->recv_mr->fid, "receive buffers' registration");
    if (module->domain)
        btl_ofi_module_close_fid(module, &module->domain->fid, "domain");
    if (module->fabric)
        btl_ofi_module_close_fid(module, &module->fabric->fid, "fabric");
    for (uint32_t r = 0; module->endpoints && r < module->job_size; r++)
        free(module->endpoints[r]);
    free(module->endpoints);
    free(module->peers);
    crmpi_btl_auth_fini(&module->auth);
    free(module->node_of_rank);
    free(module->send_bufs);
    free(module->recv_bufs);
    free(module->send_slab);
    free(module->recv_slab);
    free(module);
}

/* Find the peer's endpoint name and decide whether it can be reached (btl_ofi.h,
 * "Reachability"); insert it into the address vector, and make the token of fragments to it.
 * @return CRMPI_OK with *addr_out, token_out and *announce_out (its large payloads go by tag,
 *         "Placement"), CRMPI_ERR_UNREACH (said at verbose level), other errors (logged). */
static int btl_ofi_module_peer_addr(btl_ofi_module_t *module, uint32_t peer_rank,
                                    fi_addr_t *addr_out, uint8_t *token_out, bool *announce_out)
{
    const btl_ofi_modex_t *modex;
    const void *addr;
    bool same_node = module->node_of_rank[peer_rank] == module->my_node;
    void *blob;
    size_t len;
    int rc;

    rc = crmpi_rte_modex_lookup(peer_rank, BTL_OFI_MODEX_KEY, &blob, &len);
    if (rc == CRMPI_ERR_NOT_FOUND) {
        crmpi_fw_verbose(&crmpi_btl_framework, 10,
                         "ofi: rank %u published no ofi address (its ofi BTL is not in use)",
                         peer_rank);
        return CRMPI_ERR_UNREACH;
    }
    if (rc != CRMPI_OK) {
        crmpi_log_error("btl:ofi: rank %u: modex lookup of rank %u's address failed: %s",
                        module->my_rank, peer_rank, crmpi_strerror(rc));
        return rc;
    }
    rc = btl_ofi_modex_unpack(blob, len, &modex, &addr);
    if (rc != CRMPI_OK) {
        crmpi_log_error("btl:ofi: rank %u: rank %u published an ofi address this rank cannot "
                        "read (%zu bytes; another crmpi version?)",
                        module->my_rank, peer_rank, len);
        free(blob);
        return rc;
    }
    if (strcmp(modex->provider, module->info->fabric_attr->prov_name) != 0) {
        crmpi_fw_verbose(
            &crmpi_btl_framework, 10, "ofi: rank %u -> rank %u: it uses provider %s, this rank %s",
            module->my_rank, peer_rank, modex->provider, module->info->fabric_attr->prov_name);
        rc = CRMPI_ERR_UNREACH;
    } else if (!same_node && (modex->node_local || module->node_local)) {
        crmpi_fw_verbose(&crmpi_btl_framework, 10,
                         "ofi: rank %u -> rank %u: on another node, and %s address reaches "
                         "only its own node",
                         module->my_rank, peer_rank, modex->node_local ? "its" : "this rank's");
        rc = CRMPI_ERR_UNREACH;
    } else {
        int inserted = fi_av_insert(module->av, addr, 1, addr_out, 0, NULL);

        if (inserted != 1) {
            crmpi_log_error("btl:ofi: rank %u: fi_av_insert of rank %u's address: %s (%d)",
                            module->my_rank, peer_rank,
                            inserted < 0 ? btl_ofi_strerror(module, inserted) : "not inserted",
                            inserted);
            rc = CRMPI_ERR_IO;
        } else {
            crmpi_btl_auth_token(&module->auth, module->my_rank, peer_rank, modex->nonce,
                                 token_out);
            *announce_out = module->tagged && modex->takes_placed;
        }
    }
    free(blob);
    return rc;
}

static int btl_ofi_module_add_procs(crmpi_btl_module_t *base, size_t nprocs,
                                    const uint32_t *peer_ranks,
                                    crmpi_btl_endpoint_t **endpoints_out)
{
    btl_ofi_module_t *module = (btl_ofi_module_t *)base;

    for (size_t i = 0; i < nprocs; i++) {
        uint32_t peer_rank = peer_ranks[i];
        uint8_t token[CRMPI_BTL_AUTH_TOKEN_LEN];
        crmpi_btl_endpoint_t *ep;
        fi_addr_t addr;
        bool announce;
        int rc;

        endpoints_out[i] = NULL;
        /* This rank is the self BTL's. */
        if (peer_rank == module->my_rank || peer_rank >= module->job_size)
            continue;
        /* What its fragments must carry (btl_ofi.h, "Who may send"), whether or not this
         * rank reaches it: it depends on this module's nonce only, and stays when the BML
         * deletes the peer (fragments it sent before may still complete). */
        if (!module->peers[peer_rank].known) {
            crmpi_btl_auth_token(&module->auth, peer_rank, module->my_rank, module->auth.nonce,
                                 module->peers[peer_rank].token);
            module->peers[peer_rank].known = true;
        }
        if (module->endpoints[peer_rank]) {
            endpoints_out[i] = module->endpoints[peer_rank];
            continue;
        }
        rc = btl_ofi_module_peer_addr(module, peer_rank, &addr, token, &announce);
        if (rc == CRMPI_ERR_UNREACH)
            continue;
        if (rc != CRMPI_OK)
            return rc;
        ep = calloc(1, sizeof(*ep));
        if (!ep) {
            crmpi_log_error("btl:ofi: rank %u: out of memory for the endpoint of rank %u",
                            module->my_rank, peer_rank);
            return CRMPI_ERR_OUT_OF_RESOURCE;
        }
        ep->module = module;
        ep->peer_rank = peer_rank;
        ep->addr = addr;
        ep->announce = announce;
        memcpy(ep->token, token, sizeof(ep->token));
        module->endpoints[peer_rank] = ep;
        module->num_live++;
        endpoints_out[i] = ep;
        crmpi_fw_verbose(&crmpi_btl_framework, 20, "ofi: rank %u -> rank %u: reachable",
                         module->my_rank, peer_rank);
    }
    return CRMPI_OK;
}

/* Sends already accepted to a deleted peer still complete: their buffers name only its
 * rank, and the address vector keeps its entry. */
static int btl_ofi_module_del_procs(crmpi_btl_module_t *base, size_t nprocs,
                                    const uint32_t *peer_ranks, crmpi_btl_endpoint_t **endpoints)
{
    btl_ofi_module_t *module = (btl_ofi_module_t *)base;

    for (size_t i = 0; i < nprocs; i++) {
        crmpi_btl_endpoint_t *ep = endpoints[i];

        if (!ep || module->endpoints[ep->peer_rank] != ep)
            continue;
        module->endpoints[ep->peer_rank] = NULL;
        module->num_live--;
        free(ep);
    }
    return CRMPI_OK;
}

/* An error completion: whose operation failed, and why, said once here. */
static int btl_ofi_module_cq_error(btl_ofi_module_t *module, bool deliver)
{
    struct fi_cq_err_entry err = {0};
    char text[256];
    const char *why;
    btl_ofi_op_t *op;
    btl_ofi_buf_t *buf;
    ssize_t rc;

    rc = fi_cq_readerr(module->cq, &err, 0);
    if (rc < 0) {
        if (rc != -FI_EAGAIN)
            crmpi_log_error("btl:ofi: rank %u: fi_cq_readerr: %s (%zd)", module->my_rank,
                            btl_ofi_strerror(module, (int)rc), rc);
        return 0;
    }
    op = err.op_context;
    why = fi_cq_strerror(module->cq, err.prov_errno, err.err_data, text, sizeof(text));
    if (!op) {
        crmpi_log_error("btl:ofi: rank %u: an operation without context failed: %s (%s)",
                        module->my_rank, btl_ofi_strerror(module, err.err), why ? why : "");
        return 0;
    }
    switch (op->kind) {
    case BTL_OFI_OP_SEND:
    case BTL_OFI_OP_TSEND:
        buf = btl_ofi_op_buf(op);
        crmpi_log_error("btl:ofi: rank %u -> rank %u: a send failed: %s (%s); the fragment is "
                        "lost, and the peer is unreachable from now on",
                        module->my_rank, buf->peer_rank, btl_ofi_strerror(module, err.err),
                        why ? why : "");
        btl_ofi_send_complete(module, buf, true);
        return 0;
    case BTL_OFI_OP_PAYLOAD:
        if (err.err != FI_ECANCELED)
            crmpi_log_error("btl:ofi: rank %u: receiving an announced payload failed: %s (%s); "
                            "the fragment is lost",
                            module->my_rank, btl_ofi_strerror(module, err.err), why ? why : "");
        return btl_ofi_payload_complete(module, (btl_ofi_payload_t *)op, 0, CRMPI_ERR_IO, deliver);
    case BTL_OFI_OP_RECV: break;
    }
    /* A receive buffer. Cancelled ones only come from a closing endpoint. */
    buf = btl_ofi_op_buf(op);
    if (err.err != FI_ECANCELED)
        crmpi_log_error("btl:ofi: rank %u: a receive failed: %s (%s)%s; its buffer is posted "
                        "again",
                        module->my_rank, btl_ofi_strerror(module, err.err), why ? why : "",
                        err.err == FI_ETRUNC ? ": a peer sent a fragment longer than this "
                                               "rank's btl_ofi_max_send_size (every rank "
                                               "must use the same value)"
                                             : "");
    if (deliver)
        btl_ofi_recv_post(module, buf);
    return 0;
}

/*
 * Take one batch of completions. `deliver` false (finalize) drops arrived fragments.
 * @return fragments delivered or sent
 */
static int btl_ofi_module_poll(btl_ofi_module_t *module, bool deliver)
{
    struct fi_cq_msg_entry entries[BTL_OFI_CQ_BATCH];
    int count = 0;
    ssize_t num;

    /* Buffers the provider refused earlier (its receive queue was full). */
    if (deliver && module->repost) {
        btl_ofi_buf_t *list = module->repost;

        module->repost = NULL;
        while (list) {
            btl_ofi_buf_t *buf = list;

            list = buf->next;
            btl_ofi_recv_post(module, buf);
        }
    }
    /* Also in finalize: an announce not sent would keep its payload's send from completing. */
    if (module->announce_retry)
        btl_ofi_announce_retry(module);
    for (uint32_t r = 0; deliver && module->num_unposted && r < module->job_size; r++) {
        if (module->peers[r].receiving && !module->peers[r].payload.posted) {
            module->num_unposted--;
            btl_ofi_payload_post(module, &module->peers[r]);
        }
    }
    num = fi_cq_read(module->cq, entries, BTL_OFI_CQ_BATCH);
    if (num == -FI_EAVAIL)
        return btl_ofi_module_cq_error(module, deliver);
    if (num < 0) {
        if (num != -FI_EAGAIN)
            crmpi_log_error("btl:ofi: rank %u: fi_cq_read: %s (%zd)", module->my_rank,
                            btl_ofi_strerror(module, (int)num), num);
        return 0;
    }
    for (ssize_t i = 0; i < num; i++) {
        btl_ofi_op_t *op = entries[i].op_context;

        switch (op->kind) {
        case BTL_OFI_OP_SEND:
        case BTL_OFI_OP_TSEND:
            btl_ofi_send_complete(module, btl_ofi_op_buf(op), false);
            count++;
            break;
        case BTL_OFI_OP_RECV:
            count += btl_ofi_recv_complete(module, btl_ofi_op_buf(op), entries[i].len, deliver);
            break;
        case BTL_OFI_OP_PAYLOAD:
            count += btl_ofi_payload_complete(module, (btl_ofi_payload_t *)op, entries[i].len,
                                              CRMPI_OK, deliver);
            break;
        }
    }
    return count;
}

static int btl_ofi_module_progress(crmpi_btl_module_t *base)
{
    btl_ofi_module_t *module = (btl_ofi_module_t *)base;
    int count;

    /* No peer uses this module and nothing is in flight: not even a call into the
     * provider, so ofi costs the other BTLs nothing. */
    if (!btl_ofi_module_active(module) || module->in_progress)
        return 0;
    module->in_progress = true;
    count = btl_ofi_module_poll(module, true);
    module->in_progress = false;
    return count;
}

static int64_t btl_ofi_module_now_ms(void)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/*
 * Wait for every send in flight to complete: closing the endpoint would drop what the
 * provider still holds. Arrived fragments are dropped meanwhile (this rank is done: in
 * MPI_Finalize nothing is left to receive, and before a checkpoint every channel was
 * drained). Bounded, in case a peer stopped reading.
 */
static void btl_ofi_module_flush(btl_ofi_module_t *module)
{
    const int64_t deadline = btl_ofi_module_now_ms() + BTL_OFI_FINALIZE_TIMEOUT_MS;
    const struct timespec pause = {0, BTL_OFI_FINALIZE_PAUSE_NS};

    while (module->num_sending > 0 && btl_ofi_module_now_ms() < deadline) {
        size_t before = module->num_sending;

        btl_ofi_module_poll(module, false);
        if (module->num_sending == before)
            nanosleep(&pause, NULL);
    }
    if (module->num_sending > 0)
        crmpi_log_error("btl:ofi: rank %u: finalize: %zu fragments still in flight after %d s "
                        "were dropped; a peer stopped reading",
                        module->my_rank, module->num_sending, BTL_OFI_FINALIZE_TIMEOUT_MS / 1000);
}

static int btl_ofi_module_finalize(crmpi_btl_module_t *base)
{
    btl_ofi_module_t *module = (btl_ofi_module_t *)base;
    btl_ofi_lib_t lib = module->lib;
    struct fi_info *info = module->info;

    btl_ofi_module_flush(module);
    crmpi_fw_verbose(
        &crmpi_btl_framework, 20,
        "ofi: rank %u: finalize; %llu fragments completed before their turn, %llu "
        "refused; %llu payloads received by tag, bytes: %llu placed, %llu copied",
        module->my_rank, (unsigned long long)module->num_early,
        (unsigned long long)module->auth.num_refused, (unsigned long long)module->num_payloads,
        (unsigned long long)module->placed_bytes, (unsigned long long)module->place_copied_bytes);
    btl_ofi_module_destroy(module);
    /* After every object is closed: the sockets provider's threads are joined by then. */
    lib.freeinfo(info);
    btl_ofi_lib_close(&lib);
    return CRMPI_OK;
}

/* Open fabric, domain, completion queue, address vector and endpoint, and name it. */
static int btl_ofi_module_open_endpoint(btl_ofi_module_t *module)
{
    struct fi_cq_attr cq_attr = {
        .format = FI_CQ_FORMAT_MSG,
        .wait_obj = FI_WAIT_NONE, /* polled by progress; no fd to wait on */
        .size = module->num_send + module->num_recv + BTL_OFI_CQ_SLACK,
    };
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE, .count = module->job_size};
    const char *what;
    int rc;

    what = "fi_fabric";
    rc = module->lib.fabric(module->info->fabric_attr, &module->fabric, NULL);
    if (rc == 0) {
        what = "fi_domain";
        rc = fi_domain(module->fabric, module->info, &module->domain, NULL);
    }
    if (rc == 0) {
        what = "fi_cq_open";
        rc = fi_cq_open(module->domain, &cq_attr, &module->cq, NULL);
    }
    if (rc == 0) {
        what = "fi_av_open";
        rc = fi_av_open(module->domain, &av_attr, &module->av, NULL);
    }
    if (rc == 0) {
        what = "fi_endpoint";
        rc = fi_endpoint(module->domain, module->info, &module->ep, NULL);
    }
    if (rc == 0) {
        what = "fi_ep_bind (completion queue)";
        rc = fi_ep_bind(module->ep, &module->cq->fid, FI_TRANSMIT | FI_RECV);
    }
    if (rc == 0) {
        what = "fi_ep_bind (address vector)";
        rc = fi_ep_bind(module->ep, &module->av->fid, 0);
    }
    if (rc == 0) {
        what = "fi_enable";
        rc = fi_enable(module->ep);
    }
    if (rc == 0) {
        what = "fi_getname";
        module->addr_len = sizeof(module->addr);
        rc = fi_getname(&module->ep->fid, module->addr, &module->addr_len);
    }
    if (rc != 0) {
        crmpi_log_error("btl:ofi: rank %u: %s (provider %s): %s (%d)", module->my_rank, what,
                        module->info->fabric_attr->prov_name, btl_ofi_strerror(module, rc), rc);
        return CRMPI_ERR_IO;
    }
    module->node_local = btl_ofi_provider_node_local(module->info, module->addr, module->addr_len);
    return CRMPI_OK;
}

/* Pool sizes within the provider's queues, and fragments within its largest message. */
static void btl_ofi_module_limits(btl_ofi_module_t *module, const btl_ofi_settings_t *settings)
{
    const struct fi_info *info = module->info;

    module->num_send = settings->send_buffers;
    module->num_recv = settings->recv_buffers;
    if (info->tx_attr->size && module->num_send > info->tx_attr->size) {
        crmpi_fw_verbose(&crmpi_btl_framework, 10,
                         "ofi: btl_ofi_send_buffers=%zu lowered to %zu, the provider's "
                         "transmit queue",
                         module->num_send, info->tx_attr->size);
        module->num_send = info->tx_attr->size;
    }
    if (info->rx_attr->size && module->num_recv > info->rx_attr->size) {
        crmpi_fw_verbose(&crmpi_btl_framework, 10,
                         "ofi: btl_ofi_recv_buffers=%zu lowered to %zu, the provider's "
                         "receive queue",
                         module->num_recv, info->rx_attr->size);
        module->num_recv = info->rx_attr->size;
    }
    module->super.max_send_size = settings->max_send_size;
    if (info->ep_attr->max_msg_size &&
        BTL_OFI_HDR_SIZE + module->super.max_send_size > info->ep_attr->max_msg_size) {
        module->super.max_send_size = info->ep_attr->max_msg_size - BTL_OFI_HDR_SIZE;
        crmpi_fw_verbose(&crmpi_btl_framework, 10,
                         "ofi: btl_ofi_max_send_size lowered to %zu, the provider's largest "
                         "message",
                         module->super.max_send_size);
    }
    module->buf_size = BTL_OFI_HDR_SIZE + module->super.max_send_size;
    /* Every buffer starts on a cache line. */
    module->buf_size = (module->buf_size + 63) & ~(size_t)63;
}

int btl_ofi_module_create(const crmpi_rte_job_info_t *job, const btl_ofi_settings_t *settings,
                          btl_ofi_lib_t *lib, struct fi_info *info, btl_ofi_module_t **module_out)
{
    btl_ofi_module_t *module = calloc(1, sizeof(*module));
    int rc;

    if (!module) {
        crmpi_log_error("btl:ofi: out of memory for the module");
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    module->super = (crmpi_btl_module_t){
        .name = "ofi",
        .exclusivity = BTL_OFI_EXCLUSIVITY,
        .priority = 0,
        .flags = 0, /* not CKPT_FRIENDLY: btl_ofi.h says why */
        .eager_limit = settings->eager_limit,
        .add_procs = btl_ofi_module_add_procs,
        .del_procs = btl_ofi_module_del_procs,
        .send = btl_ofi_endpoint_send,
        .progress = btl_ofi_module_progress,
        .finalize = btl_ofi_module_finalize,
    };
    module->my_rank = job->rank;
    module->job_size = job->size;
    module->my_node = job->node_id;
    module->lib = *lib;
    module->info = info;
    btl_ofi_module_limits(module, settings);
    /* Placement takes the payload into memory the provider has not seen: with FI_MR_LOCAL
     * each would have to be registered first. */
    module->tagged = (info->caps & FI_TAGGED) != 0;
    module->recv_place =
        settings->recv_place && module->tagged && !(info->domain_attr->mr_mode & FI_MR_LOCAL);
    module->iov_limit = info->rx_attr->iov_limit ? info->rx_attr->iov_limit : 1;
    if (module->recv_place)
        module->super.flags |= CRMPI_BTL_FLAG_RECV_PLACE;
    else if (settings->recv_place)
        crmpi_fw_verbose(
            &crmpi_btl_framework, 10, "ofi: rank %u: provider %s %s: large payloads are not placed",
            job->rank, info->fabric_attr->prov_name,
            module->tagged ? "needs local registrations (FI_MR_LOCAL)" : "has no tagged messages");
    module->node_of_rank = calloc(job->size, sizeof(module->node_of_rank[0]));
    module->endpoints = calloc(job->size, sizeof(module->endpoints[0]));
    module->peers = calloc(job->size, sizeof(module->peers[0]));
    if (!module->node_of_rank || !module->endpoints || !module->peers) {
        crmpi_log_error("btl:ofi: rank %u: out of memory for the module of a job of %u ranks",
                        job->rank, job->size);
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto err_destroy;
    }
    for (uint32_t r = 0; r < job->size; r++)
        module->node_of_rank[r] = job->node_of_rank ? job->node_of_rank[r] : job->node_id;
    /* A new nonce with every module: tokens made for an earlier one are refused. */
    rc = crmpi_btl_auth_init(&module->auth, "ofi", job);
    if (rc != CRMPI_OK)
        goto err_destroy;
    rc = btl_ofi_module_open_endpoint(module);
    if (rc != CRMPI_OK)
        goto err_destroy;
    rc = btl_ofi_module_pool_create(module, module->num_send, FI_SEND, 1, BTL_OFI_OP_SEND,
                                    &module->send_slab, &module->send_bufs, &module->send_mr);
    if (rc != CRMPI_OK)
        goto err_destroy;
    rc = btl_ofi_module_pool_create(module, module->num_recv, FI_RECV, 2, BTL_OFI_OP_RECV,
                                    &module->recv_slab, &module->recv_bufs, &module->recv_mr);
    if (rc != CRMPI_OK)
        goto err_destroy;
    module->send_desc = fi_mr_desc(module->send_mr);
    module->recv_desc = fi_mr_desc(module->recv_mr);
    for (size_t i = module->num_send; i-- > 0;) {
        module->send_bufs[i].next = module->send_free;
        module->send_free = &module->send_bufs[i];
    }
    for (size_t i = 0; i < module->num_recv; i++)
        btl_ofi_recv_post(module, &module->recv_bufs[i]);
    *module_out = module;
    return CRMPI_OK;

err_destroy:
    /* The caller still owns the library and info on failure. */
    btl_ofi_module_destroy(module);
    return rc;
}
