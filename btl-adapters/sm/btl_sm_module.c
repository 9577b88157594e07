/*
 * btl_sm_module.c: the sm module (btl_sm.h): creation at init, peers, send, progress,
 * finalize.
 */
#include "config.h"

#include "btl_sm.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "log.h"
#include "param.h"

#define BTL_SM_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Verbosity levels of btl_base_verbose used here. */
enum {
    BTL_SM_VERBOSE_SELECT = 10, /* why sm is not used, for this rank or one peer */
    BTL_SM_VERBOSE_PEERS = 20,  /* segments created and mapped */
};

/* Parameters read at init (btl_sm_info.c declares them). */
typedef struct btl_sm_params {
    uint64_t fifo_size;     /* btl_sm_fifo_size */
    uint64_t max_send_size; /* btl_sm_max_send_size */
    uint64_t eager_limit;   /* btl_sm_eager_limit */
} btl_sm_params_t;

/* Index of the FIFO from the rank at local index `sender` in the segment of the rank at
 * local index `owner`: the owner has no FIFO for itself. */
static inline uint32_t btl_sm_region_of(uint32_t owner, uint32_t sender)
{
    return sender < owner ? sender : sender - 1;
}

/* Is world rank `rank` on our node? Sets its local index. local_ranks is sorted. */
static bool btl_sm_module_find_local(const btl_sm_module_t *module, uint32_t rank,
                                     uint32_t *index_out)
{
    uint32_t lo = 0;
    uint32_t hi = module->num_local;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;

        if (module->local_ranks[mid] == rank) {
            *index_out = mid;
            return true;
        }
        if (module->local_ranks[mid] < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* ---- peers ----------------------------------------------------------------------------- */

/*
 * Map our FIFO in the peer's segment, as its modex data describes it, and start polling the
 * peer's FIFO in ours.
 * @return CRMPI_OK; CRMPI_ERR_NOT_FOUND when the peer published nothing (its sm is not
 *         usable, so it will not use sm towards us either); any other error is logged.
 */
static int btl_sm_endpoint_connect(btl_sm_module_t *module, crmpi_btl_endpoint_t *ep,
                                   uint32_t peer_local)
{
    uint64_t min_ring = btl_sm_fifo_min_ring_size(module->super.max_send_size);
    btl_sm_modex_t *modex;
    const char *why;
    size_t modex_len;
    uint32_t region;
    void *map;
    int rc;

    rc = crmpi_rte_modex_lookup(ep->peer_rank, BTL_SM_MODEX_KEY, (void **)&modex, &modex_len);
    if (rc == CRMPI_ERR_NOT_FOUND) {
        /* Its init said "not usable" (or failed to create its segment, and warned). */
        crmpi_fw_verbose(&crmpi_btl_framework, BTL_SM_VERBOSE_SELECT,
                         "btl:sm: rank %u: rank %u published no sm segment; not reachable "
                         "through sm",
                         module->rank, ep->peer_rank);
        return rc;
    }
    if (rc != CRMPI_OK) {
        crmpi_log_error("btl:sm: rank %u: cannot look up rank %u's sm segment: %s", module->rank,
                        ep->peer_rank, crmpi_strerror(rc));
        return rc;
    }
    if (modex_len != sizeof(*modex) || modex->version != BTL_SM_MODEX_VERSION ||
        memchr(modex->name, '\0', sizeof(modex->name)) == NULL ||
        modex->region_size < BTL_SM_FIFO_RING_OFFSET + modex->ring_size) {
        crmpi_log_error("btl:sm: rank %u: rank %u's sm modex data (%zu bytes) is not version %u "
                        "of this build; is every rank running the same crmpi?",
                        module->rank, ep->peer_rank, modex_len, BTL_SM_MODEX_VERSION);
        rc = CRMPI_ERR_PROTO;
        goto err_free_modex;
    }
    if (modex->ring_size < min_ring) {
        crmpi_log_error("btl:sm: rank %u: rank %u's FIFOs have %" PRIu64 " bytes, too small for "
                        "fragments of %zu bytes (%" PRIu64 " needed); give every rank the same "
                        "btl_sm_fifo_size and btl_sm_max_send_size",
                        module->rank, ep->peer_rank, modex->ring_size, module->super.max_send_size,
                        min_ring);
        rc = CRMPI_ERR_PROTO;
        goto err_free_modex;
    }
    region = btl_sm_region_of(peer_local, module->local_index);
    if (region >= modex->num_regions) {
        crmpi_log_error("btl:sm: rank %u: rank %u's segment has %u FIFOs, none for us (FIFO %u); "
                        "the two ranks disagree on which ranks share the node",
                        module->rank, ep->peer_rank, modex->num_regions, region);
        rc = CRMPI_ERR_PROTO;
        goto err_free_modex;
    }
    rc = btl_sm_segment_map_peer(modex->name, (size_t)region * modex->region_size,
                                 modex->region_size, module->rank, ep->peer_rank, &map);
    if (rc != CRMPI_OK) {
        /* Published, then gone: an error, unlike the "published nothing" above. */
        if (rc == CRMPI_ERR_NOT_FOUND)
            rc = CRMPI_ERR_IO;
        goto err_free_modex;
    }
    rc = btl_sm_fifo_writer_init(&ep->send, map, modex->region_size, ep->peer_rank, module->rank,
                                 &why);
    if (rc != CRMPI_OK) {
        crmpi_log_error("btl:sm: rank %u: rank %u's segment /dev/shm%s: %s", module->rank,
                        ep->peer_rank, modex->name, why);
        goto err_unmap;
    }
    ep->peer_map = map;
    ep->peer_map_len = modex->region_size;
    ep->connected = true;
    module->polled[module->num_polled++] = ep;
    crmpi_fw_verbose(&crmpi_btl_framework, BTL_SM_VERBOSE_PEERS,
                     "btl:sm: rank %u -> rank %u: FIFO %u of /dev/shm%s (%" PRIu64 " bytes)",
                     module->rank, ep->peer_rank, region, modex->name, ep->send.ring_size);
    free(modex);
    return CRMPI_OK;

err_unmap:
    munmap(map, modex->region_size);
err_free_modex:
    free(modex);
    return rc;
}

/* Unmap our FIFO in the peer's segment and stop polling the peer. */
static void btl_sm_endpoint_disconnect(btl_sm_module_t *module, crmpi_btl_endpoint_t *ep)
{
    for (uint32_t i = 0; i < module->num_polled; i++) {
        if (module->polled[i] != ep)
            continue;
        /* Keep the others' order: it is the round-robin's. */
        memmove(&module->polled[i], &module->polled[i + 1],
                (module->num_polled - i - 1) * sizeof(module->polled[0]));
        module->num_polled--;
        break;
    }
    if (module->poll_start >= module->num_polled)
        module->poll_start = 0;
    munmap(ep->peer_map, ep->peer_map_len);
    ep->peer_map = NULL;
    ep->peer_map_len = 0;
    ep->connected = false;
    /* The send state goes with the mapping; counters are reread at the next connect. */
    memset(&ep->send, 0, sizeof(ep->send));
}

/*
 * A local peer that published a segment we cannot use is an error, not "unreachable": it
 * can still reach us and would send into our segment, while we would choose another BTL
 * towards it and might never poll sm at all. Failing MPI_Init with the cause beats a hang.
 */
static int btl_sm_module_add_procs(crmpi_btl_module_t *base, size_t nprocs,
                                   const uint32_t *peer_ranks, crmpi_btl_endpoint_t **endpoints_out)
{
    btl_sm_module_t *module = (btl_sm_module_t *)base;

    for (size_t i = 0; i < nprocs; i++) {
        crmpi_btl_endpoint_t *ep;
        uint32_t peer_local;
        int rc;

        endpoints_out[i] = NULL;
        /* Ourselves: the self BTL's. Another node: not ours. */
        if (peer_ranks[i] == module->rank ||
            !btl_sm_module_find_local(module, peer_ranks[i], &peer_local))
            continue;
        ep = &module->peers[btl_sm_region_of(module->local_index, peer_local)];
        if (!ep->connected) {
            rc = btl_sm_endpoint_connect(module, ep, peer_local);
            if (rc == CRMPI_ERR_NOT_FOUND)
                continue;
            if (rc != CRMPI_OK)
                return rc;
        }
        endpoints_out[i] = ep;
    }
    return CRMPI_OK;
}

static int btl_sm_module_del_procs(crmpi_btl_module_t *base, size_t nprocs,
                                   const uint32_t *peer_ranks, crmpi_btl_endpoint_t **endpoints)
{
    btl_sm_module_t *module = (btl_sm_module_t *)base;

    for (size_t i = 0; i < nprocs; i++) {
        uint32_t peer_local;
        crmpi_btl_endpoint_t *ep;

        if (peer_ranks[i] == module->rank ||
            !btl_sm_module_find_local(module, peer_ranks[i], &peer_local))
            continue;
        ep = &module->peers[btl_sm_region_of(module->local_index, peer_local)];
        if (ep->connected)
            btl_sm_endpoint_disconnect(module, ep);
    }
    return CRMPI_OK;
}

/* ---- send and progress ------------------------------------------------------------------ */

/* Why a send was refused before touching the FIFO (the caller broke a precondition). */
static int btl_sm_module_send_refuse(btl_sm_module_t *module, crmpi_btl_endpoint_t *ep, uint8_t tag,
                                     size_t len, crmpi_convertor_t *payload, size_t payload_len)
{
    if (!ep->connected) {
        crmpi_log_error("btl:sm: rank %u -> rank %u: send to a peer that is not connected "
                        "(add_procs did not reach it, or del_procs removed it)",
                        module->rank, ep->peer_rank);
        return CRMPI_ERR_UNREACH;
    }
    if (tag >= CRMPI_BTL_TAG_MAX)
        crmpi_log_error("btl:sm: rank %u -> rank %u: tag %u out of range (< %d)", module->rank,
                        ep->peer_rank, tag, CRMPI_BTL_TAG_MAX);
    else if (len > module->super.max_send_size)
        crmpi_log_error("btl:sm: rank %u -> rank %u: fragment of %zu bytes exceeds "
                        "max_send_size (%zu)",
                        module->rank, ep->peer_rank, len, module->super.max_send_size);
    else
        crmpi_log_error("btl:sm: rank %u -> rank %u: %zu payload bytes asked, the convertor has "
                        "%zu left",
                        module->rank, ep->peer_rank, payload_len,
                        payload ? payload->total - payload->position : 0);
    return CRMPI_ERR_BAD_PARAM;
}

static int btl_sm_module_send(crmpi_btl_module_t *base, crmpi_btl_endpoint_t *ep, uint8_t tag,
                              const void *hdr, size_t hdr_len, crmpi_convertor_t *payload,
                              size_t payload_len)
{
    size_t len = hdr_len + payload_len;
    char *dst;

    /* One predictable branch for every precondition; the slow path says which failed. */
    if (BTL_SM_UNLIKELY(
            !ep->connected || tag >= CRMPI_BTL_TAG_MAX || len > base->max_send_size ||
            (payload_len && (!payload || payload->total - payload->position < payload_len))))
        return btl_sm_module_send_refuse((btl_sm_module_t *)base, ep, tag, len, payload,
                                         payload_len);

    dst = btl_sm_fifo_reserve(&ep->send, (uint32_t)len, tag);
    if (!dst)
        return CRMPI_ERR_RESOURCE_BUSY;
    if (hdr_len)
        memcpy(dst, hdr, hdr_len);
    /* Straight into the ring: the only copy on the send side. */
    if (payload_len)
        crmpi_convertor_pack(payload, dst + hdr_len, payload_len);
    btl_sm_fifo_commit(&ep->send);
    return CRMPI_OK;
}

/* Control block of a FIFO found corrupted: always empty, never written. The reader of a
 * bad FIFO is pointed here, so progress keeps its branch-free loop and never reads the bad
 * ring again. */
static btl_sm_fifo_ctrl_t btl_sm_dead_fifo;

/* A record that cannot have been written by a sender of this build: say so once and stop
 * reading the FIFO (the peer's fragments are lost; the PML will notice the missing ones). */
static void btl_sm_endpoint_corrupt(btl_sm_module_t *module, crmpi_btl_endpoint_t *ep,
                                    const btl_sm_fifo_rec_t *rec, uint64_t head)
{
    btl_sm_fifo_reader_t *reader = &ep->recv;

    crmpi_log_error("btl:sm: rank %u <- rank %u: FIFO %u of /dev/shm%s is corrupted (record of "
                    "kind %u, %u bytes at offset %" PRIu64 ", %" PRIu64 " bytes published); no "
                    "longer reading from rank %u",
                    module->rank, ep->peer_rank, ep->region, module->seg_name, rec->kind, rec->len,
                    reader->offset, head - reader->tail, ep->peer_rank);
    reader->ctrl = &btl_sm_dead_fifo;
    reader->tail = 0;
}

/* Deliver every record the peer had published when we looked. */
static int btl_sm_endpoint_drain(btl_sm_module_t *module, crmpi_btl_endpoint_t *ep)
{
    btl_sm_fifo_reader_t *reader = &ep->recv;
    uint64_t head = btl_sm_fifo_published(reader);
    int delivered = 0;

    while (reader->tail != head) {
        const btl_sm_fifo_rec_t *rec = btl_sm_fifo_front(reader);
        uint32_t len = rec->len;
        uint8_t tag = rec->tag;
        crmpi_btl_recv_fn_t fn;

        /* Cheap checks on a line already loaded: a wild len would make us read past the
         * ring, a zero kind means the sender never wrote there. */
        if (BTL_SM_UNLIKELY(rec->kind != BTL_SM_REC_DATA ||
                            btl_sm_fifo_record_size(len) > head - reader->tail ||
                            reader->offset + sizeof(*rec) + len > reader->ring_size)) {
            btl_sm_endpoint_corrupt(module, ep, rec, head);
            break;
        }
        fn = tag < CRMPI_BTL_TAG_MAX ? crmpi_btl_recv_table[tag] : NULL;
        if (BTL_SM_UNLIKELY(!fn))
            crmpi_log_error("btl:sm: rank %u <- rank %u: fragment of %u bytes for tag %u, "
                            "which has no receive callback; dropped",
                            module->rank, ep->peer_rank, len, tag);
        else
            fn(&module->super, ep->peer_rank, rec + 1, len);
        btl_sm_fifo_release(reader, len);
        delivered++;
    }
    return delivered;
}

static int btl_sm_module_progress(crmpi_btl_module_t *base)
{
    btl_sm_module_t *module = (btl_sm_module_t *)base;
    uint32_t num_polled = module->num_polled;
    uint32_t start = module->poll_start;
    int delivered = 0;

    /* A receive callback may send but not progress (btl.h): the FIFO being drained is in
     * the middle of a record. */
    if (BTL_SM_UNLIKELY(module->in_progress) || num_polled == 0)
        return 0;
    module->in_progress = true;
    for (uint32_t i = 0, idx = start; i < num_polled; i++) {
        delivered += btl_sm_endpoint_drain(module, module->polled[idx]);
        if (++idx == num_polled)
            idx = 0;
    }
    /* Round-robin: the next call starts with the next peer, so one busy peer's records do
     * not always go first. */
    module->poll_start = start + 1 == num_polled ? 0 : start + 1;
    module->in_progress = false;
    return delivered;
}

/* ---- creation and finalize ------------------------------------------------------------- */

static void btl_sm_module_destroy(btl_sm_module_t *module)
{
    for (uint32_t i = 0; module->peers && i + 1 < module->num_local; i++) {
        if (module->peers[i].connected)
            btl_sm_endpoint_disconnect(module, &module->peers[i]);
    }
    if (module->seg_base) {
        munmap(module->seg_base, module->seg_size);
        if (!module->seg_unlinked)
            btl_sm_segment_unlink(module->seg_name, module->rank);
    }
    free(module->polled);
    free(module->peers);
    free(module->local_ranks);
    free(module);
}

/* Every local peer has mapped its region of our segment (btl.h): the name can go. The
 * mappings stay; a job killed from now on leaves nothing in /dev/shm. */
static void btl_sm_module_connected(crmpi_btl_module_t *base)
{
    btl_sm_module_t *module = (btl_sm_module_t *)base;

    btl_sm_segment_unlink(module->seg_name, module->rank);
    module->seg_unlinked = true;
}

static int btl_sm_module_finalize(crmpi_btl_module_t *base)
{
    btl_sm_module_destroy((btl_sm_module_t *)base);
    return CRMPI_OK;
}

static int btl_sm_params_read(uint32_t rank, btl_sm_params_t *params_out)
{
    btl_sm_params_t params;
    uint64_t min_ring;

    if (crmpi_param_get_size("btl_sm_fifo_size", &params.fifo_size) != CRMPI_OK ||
        crmpi_param_get_size("btl_sm_max_send_size", &params.max_send_size) != CRMPI_OK ||
        crmpi_param_get_size("btl_sm_eager_limit", &params.eager_limit) != CRMPI_OK) {
        crmpi_log_error("btl:sm: rank %u: cannot read the btl_sm_* parameters", rank);
        return CRMPI_ERR_BAD_PARAM;
    }
    /* The record length is 32 bits; a gigabyte fragment would defeat pipelining anyway. */
    if (params.max_send_size == 0 || params.max_send_size > (1u << 30)) {
        crmpi_log_error("btl:sm: rank %u: btl_sm_max_send_size must be between 1 byte and 1g, "
                        "not %" PRIu64,
                        rank, params.max_send_size);
        return CRMPI_ERR_BAD_PARAM;
    }
    params.fifo_size =
        (params.fifo_size + BTL_SM_FIFO_ALIGN - 1) & ~(uint64_t)(BTL_SM_FIFO_ALIGN - 1);
    min_ring = btl_sm_fifo_min_ring_size(params.max_send_size);
    if (params.fifo_size < min_ring) {
        crmpi_log_error("btl:sm: rank %u: btl_sm_fifo_size (%" PRIu64 ") must hold two fragments "
                        "of btl_sm_max_send_size (%" PRIu64 "), %" PRIu64 " bytes: raise "
                        "btl_sm_fifo_size or lower btl_sm_max_send_size",
                        rank, params.fifo_size, params.max_send_size, min_ring);
        return CRMPI_ERR_BAD_PARAM;
    }
    *params_out = params;
    return CRMPI_OK;
}

/* The world ranks on our node, ascending, and our index among them. */
static int btl_sm_module_find_peers(btl_sm_module_t *module, const crmpi_rte_job_info_t *job)
{
    uint32_t count = 0;

    for (uint32_t r = 0; r < job->size; r++)
        count += job->node_of_rank[r] == job->node_id;
    module->local_ranks = calloc(count, sizeof(module->local_ranks[0]));
    if (!module->local_ranks) {
        crmpi_log_error("btl:sm: rank %u: out of memory for %u local ranks", job->rank, count);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    count = 0;
    for (uint32_t r = 0; r < job->size; r++) {
        if (job->node_of_rank[r] != job->node_id)
            continue;
        if (r == job->rank)
            module->local_index = count;
        module->local_ranks[count++] = r;
    }
    module->num_local = count;
    return CRMPI_OK;
}

/* Create our segment, format a FIFO per local peer in it and say so in the modex. */
static int btl_sm_module_create_segment(btl_sm_module_t *module)
{
    uint32_t num_regions = module->num_local - 1;
    btl_sm_modex_t modex;
    void *base;
    int rc;

    snprintf(module->seg_name, sizeof(module->seg_name), "/crmpi-%" PRIu64 "-sm-%" PRIu32,
             module->jobid, module->rank);
    module->seg_size = (size_t)num_regions * module->region_size;
    rc = btl_sm_segment_create(module->seg_name, module->seg_size, module->rank, &base);
    if (rc != CRMPI_OK)
        return rc;
    module->seg_base = base;
    for (uint32_t region = 0; region < num_regions; region++) {
        char *at = module->seg_base + (size_t)region * module->region_size;
        uint32_t sender_local = region < module->local_index ? region : region + 1;
        crmpi_btl_endpoint_t *ep = &module->peers[region];

        btl_sm_fifo_format(at, module->ring_size, module->rank, module->local_ranks[sender_local]);
        btl_sm_fifo_reader_init(&ep->recv, at);
        ep->peer_rank = module->local_ranks[sender_local];
        ep->region = region;
    }

    memset(&modex, 0, sizeof(modex));
    modex.version = BTL_SM_MODEX_VERSION;
    modex.num_regions = num_regions;
    modex.ring_size = module->ring_size;
    modex.region_size = module->region_size;
    snprintf(modex.name, sizeof(modex.name), "%s", module->seg_name);
    rc = crmpi_rte_modex_publish(BTL_SM_MODEX_KEY, &modex, sizeof(modex));
    if (rc != CRMPI_OK) {
        crmpi_log_error("btl:sm: rank %u: cannot publish segment /dev/shm%s: %s", module->rank,
                        module->seg_name, crmpi_strerror(rc));
        return rc;
    }
    crmpi_fw_verbose(&crmpi_btl_framework, BTL_SM_VERBOSE_PEERS,
                     "btl:sm: rank %u: segment /dev/shm%s, %u FIFOs of %" PRIu64 " bytes",
                     module->rank, module->seg_name, num_regions, module->ring_size);
    return CRMPI_OK;
}

int btl_sm_module_create(const crmpi_rte_job_info_t *job, btl_sm_module_t **module_out)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    btl_sm_module_t *module;
    btl_sm_params_t params;
    int rc;

    if (job->local_size <= 1) {
        crmpi_fw_verbose(&crmpi_btl_framework, BTL_SM_VERBOSE_SELECT,
                         "btl:sm: rank %u: no other rank on node %s; sm not used", job->rank,
                         job->nodename);
        return CRMPI_ERR_NOT_SUPPORTED;
    }
    rc = btl_sm_params_read(job->rank, &params);
    if (rc != CRMPI_OK)
        return rc;

    module = calloc(1, sizeof(*module));
    if (!module) {
        crmpi_log_error("btl:sm: rank %u: out of memory for the module", job->rank);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    module->jobid = job->jobid;
    module->rank = job->rank;
    module->ring_size = params.fifo_size;
    module->region_size = (BTL_SM_FIFO_RING_OFFSET + params.fifo_size + page - 1) & ~(page - 1);
    rc = btl_sm_module_find_peers(module, job);
    if (rc != CRMPI_OK)
        goto err_destroy;
    if (module->num_local != job->local_size) {
        crmpi_log_error("btl:sm: rank %u: the job facts disagree: %u ranks on node %u by "
                        "node_of_rank, %u by local_size",
                        job->rank, module->num_local, job->node_id, job->local_size);
        rc = CRMPI_ERR_BAD_PARAM;
        goto err_destroy;
    }
    module->peers = calloc(module->num_local - 1, sizeof(module->peers[0]));
    module->polled = calloc(module->num_local - 1, sizeof(module->polled[0]));
    if (!module->peers || !module->polled) {
        crmpi_log_error("btl:sm: rank %u: out of memory for %u peers", job->rank,
                        module->num_local - 1);
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto err_destroy;
    }
    rc = btl_sm_module_create_segment(module);
    if (rc != CRMPI_OK) {
        /* No segment, nothing published: every peer finds sm unusable towards us too, and
         * the BML goes on without sm (the cause was warned about). */
        if (!module->seg_base)
            rc = CRMPI_ERR_NOT_SUPPORTED;
        goto err_destroy;
    }

    module->super = (crmpi_btl_module_t){
        .name = "sm",
        .exclusivity = BTL_SM_EXCLUSIVITY,
        .priority = 0,
        .flags = 0, /* not CKPT_FRIENDLY: btl_sm.h says why */
        .max_send_size = params.max_send_size,
        .eager_limit = params.eager_limit,
        .add_procs = btl_sm_module_add_procs,
        .del_procs = btl_sm_module_del_procs,
        .send = btl_sm_module_send,
        .progress = btl_sm_module_progress,
        .connected = btl_sm_module_connected,
        .finalize = btl_sm_module_finalize,
    };
    *module_out = module;
    return CRMPI_OK;

err_destroy:
    btl_sm_module_destroy(module);
    return rc;
}
