/*
 * pml_ob1.c: the ob1 PML's life cycle, communicators and progress (pml.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "log.h"
#include "param.h"
#include "pml_ob1.h"
#include "progress.h"

pml_ob1_state_t pml_ob1;

/* The MPI layer's function for released communicators (pml.h). */
static crmpi_pml_comm_idle_fn_t pml_ob1_comm_idle_fn;

static int pml_ob1_progress(void)
{
    int events = crmpi_bml_progress();

    if (pml_ob1.ctl_head || pml_ob1.send_frags.head || pml_ob1.sends_waiting)
        events += pml_ob1_send_progress();
    return events;
}

/* Per-peer protocol limits from the chosen BTL module and pml_ob1_eager_limit. */
static void pml_ob1_peer_limits(pml_ob1_peer_t *peer, const crmpi_btl_module_t *module,
                                uint64_t eager_param)
{
    size_t eager = eager_param ? (size_t)eager_param : module->eager_limit;
    size_t max_eager = module->max_send_size - sizeof(pml_ob1_match_hdr_t);

    peer->eager_limit = eager < max_eager ? eager : max_eager;
    peer->max_payload_rndv = module->max_send_size - sizeof(pml_ob1_rndv_hdr_t);
    peer->max_payload_frag = module->max_send_size - sizeof(pml_ob1_frag_hdr_t);
}

void crmpi_pml_cr_transports_changed(void)
{
    const crmpi_rte_job_info_t *job = crmpi_rte_job();
    uint64_t eager_param = 0;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);

    crmpi_param_get_size("pml_ob1_eager_limit", &eager_param);
    for (uint32_t p = 0; p < pml_ob1.num_peers; p++)
        pml_ob1_peer_limits(&pml_ob1.peers[p], crmpi_bml_peers[p].module, eager_param);
    int64_t yield = -1;

    crmpi_param_get_int("mpi_yield_when_idle", &yield);
    pml_ob1.yield_when_idle =
        yield >= 0 ? yield > 0 : cores > 0 && job->local_size > (uint32_t)cores;
}

int crmpi_pml_init(char **unreach_msg_out)
{
    const crmpi_rte_job_info_t *job = crmpi_rte_job();
    int rc;

    memset(&pml_ob1, 0, sizeof(pml_ob1));
    pml_ob1.ctl_tail = &pml_ob1.ctl_head;
    crmpi_btl_register_recv(PML_OB1_TAG_MATCH, pml_ob1_recv_cb_match);
    crmpi_btl_register_recv(PML_OB1_TAG_RNDV, pml_ob1_recv_cb_rndv);
    crmpi_btl_register_recv(PML_OB1_TAG_ACK, pml_ob1_recv_cb_ack);
    crmpi_btl_register_recv(PML_OB1_TAG_FRAG, pml_ob1_recv_cb_frag);
    crmpi_btl_register_recv(PML_OB1_TAG_CANCEL, pml_ob1_recv_cb_cancel);
    crmpi_btl_register_recv(PML_OB1_TAG_CANCEL_REPLY, pml_ob1_recv_cb_cancel_reply);
    crmpi_btl_register_place(PML_OB1_TAG_FRAG, sizeof(pml_ob1_frag_hdr_t), pml_ob1_recv_place_frag,
                             pml_ob1_recv_placed_frag);

    rc = crmpi_bml_init(unreach_msg_out);
    if (rc != CRMPI_OK)
        return rc;

    pml_ob1.num_peers = job->size;
    pml_ob1.peers = calloc(job->size, sizeof(pml_ob1.peers[0]));
    if (!pml_ob1.peers) {
        crmpi_log_error("pml: out of memory for %u peers", job->size);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    crmpi_pml_cr_transports_changed();
    return crmpi_progress_register(pml_ob1_progress);
}

static void pml_ob1_comm_free(pml_ob1_comm_t *pcomm)
{
    free(pcomm->posted);
    free(pcomm->unexpected);
    free(pcomm->world_ranks);
    free(pcomm);
}

int crmpi_pml_add_comm(const crmpi_pml_comm_params_t *params, crmpi_pml_comm_t **pcomm_out)
{
    /* The group ranks name (pml.h): an intercommunicator's remote group. Matching and
     * sending then work the same for both kinds. */
    bool inter = params->remote_size > 0;
    size_t size = (size_t)(inter ? params->remote_size : params->size);
    const uint32_t *peer_world_ranks = inter ? params->remote_world_ranks : params->world_ranks;
    pml_ob1_comm_t *pcomm;

    if (params->context_id >= pml_ob1.num_comms) {
        uint32_t new_num = pml_ob1.num_comms ? pml_ob1.num_comms : 16;
        pml_ob1_comm_t **grown;

        while (new_num <= params->context_id)
            new_num *= 2;
        grown = realloc(pml_ob1.comms, new_num * sizeof(grown[0]));
        if (!grown)
            goto err_no_memory;
        memset(grown + pml_ob1.num_comms, 0, (new_num - pml_ob1.num_comms) * sizeof(grown[0]));
        pml_ob1.comms = grown;
        pml_ob1.num_comms = new_num;
    }
    pcomm = calloc(1, sizeof(*pcomm));
    if (!pcomm)
        goto err_no_memory;
    pcomm->ctx = params->context_id;
    pcomm->rank = params->rank;
    pcomm->size = (int)size;
    pcomm->name = params->name;
    pcomm->owner = params->owner;
    pcomm->world_ranks = malloc(size * sizeof(pcomm->world_ranks[0]));
    pcomm->posted = calloc(size, sizeof(pcomm->posted[0]));
    pcomm->unexpected = calloc(size, sizeof(pcomm->unexpected[0]));
    if (!pcomm->world_ranks || !pcomm->posted || !pcomm->unexpected) {
        pml_ob1_comm_free(pcomm);
        goto err_no_memory;
    }
    memcpy(pcomm->world_ranks, peer_world_ranks, size * sizeof(pcomm->world_ranks[0]));
    pml_ob1.comms[pcomm->ctx] = pcomm;
    pml_ob1_recv_adopt_orphans(pcomm);
    *pcomm_out = pcomm;
    return CRMPI_OK;

err_no_memory:
    crmpi_log_error("pml: out of memory for communicator %s (context %u, %d ranks)", params->name,
                    params->context_id, params->size);
    return CRMPI_ERR_OUT_OF_RESOURCE;
}

void crmpi_pml_del_comm(crmpi_pml_comm_t *pcomm)
{
    for (int s = 0; s < pcomm->size; s++) {
        while (pcomm->unexpected[s].head) {
            pml_ob1_msg_t *msg = pcomm->unexpected[s].head;
            pcomm->unexpected[s].head = msg->next;
            pml_ob1_msg_free(msg);
        }
    }
    pcomm->num_unexpected = 0;
    pml_ob1.comms[pcomm->ctx] = NULL;
    pcomm->name = NULL; /* the caller's, valid until now only */
    /* At MPI_Finalize a buffered or freed send may still be moving data: it reads the
     * context id, rank and world ranks until crmpi_pml_finalize completes it. */
    if (pcomm->live_requests > 0) {
        pcomm->deleted = true;
        return;
    }
    pml_ob1_comm_free(pcomm);
}

void crmpi_pml_set_comm_idle_fn(crmpi_pml_comm_idle_fn_t fn)
{
    pml_ob1_comm_idle_fn = fn;
}

bool crmpi_pml_comm_release(crmpi_pml_comm_t *pcomm)
{
    pcomm->release_pending = pcomm->live_requests > 0;
    return !pcomm->release_pending;
}

void pml_ob1_comm_idle(pml_ob1_comm_t *pcomm)
{
    if (pcomm->deleted) {
        pml_ob1_comm_free(pcomm);
        return;
    }
    /* Once: the MPI layer asks again before it deletes the communicator (pml.h). */
    pcomm->release_pending = false;
    if (pml_ob1_comm_idle_fn)
        pml_ob1_comm_idle_fn(pcomm->owner);
}

void crmpi_pml_comm_request_started(crmpi_pml_comm_t *pcomm)
{
    pcomm->live_requests++;
}

void crmpi_pml_comm_request_ended(crmpi_pml_comm_t *pcomm)
{
    pml_ob1_comm_request_ended(pcomm);
}

MPI_Comm crmpi_pml_comm_owner(const crmpi_pml_comm_t *pcomm)
{
    return pcomm->owner;
}

/* Free the messages of a queue that no receive will take any more. */
static void pml_ob1_msg_queue_drop(pml_ob1_msg_queue_t *queue)
{
    while (queue->head) {
        pml_ob1_msg_t *msg = queue->head;
        queue->head = msg->next;
        pml_ob1_msg_free(msg);
    }
    queue->tail = NULL;
}

int crmpi_pml_finalize(void)
{
    /* Buffered and freed sends may still be moving data (MPI-3.1 section 8.7). */
    while (pml_ob1.active_sends > 0) {
        if (crmpi_progress() == 0) {
            crmpi_unlock();
            crmpi_lock();
        }
    }
    /* No fence before the BTLs close: a send the BTL accepted may still sit in its queue
     * (tcp, waiting for a lazy connection), and only this rank's BTL can push it out, which
     * it does in its finalize. A fence first would leave the receiver waiting for it. */
    crmpi_progress_unregister(pml_ob1_progress);
    crmpi_bml_finalize();
    /* Arrivals for communicators already deleted, and messages of matched probes never
     * received. */
    pml_ob1_msg_queue_drop(&pml_ob1.orphans);
    pml_ob1_msg_queue_drop(&pml_ob1.probed);
    for (uint32_t p = 0; p < pml_ob1.num_peers; p++) {
        while (pml_ob1.peers[p].early) {
            pml_ob1_msg_t *msg = pml_ob1.peers[p].early;
            pml_ob1.peers[p].early = msg->next;
            free(msg);
        }
    }
    while (pml_ob1.free_requests) {
        crmpi_request_t *req = pml_ob1.free_requests;
        pml_ob1.free_requests = req->next;
        free(req);
    }
    free(pml_ob1.peers);
    free(pml_ob1.comms);
    free(pml_ob1.wire_slots);
    memset(&pml_ob1, 0, sizeof(pml_ob1));
    return CRMPI_OK;
}
