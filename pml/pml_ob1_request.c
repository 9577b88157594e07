/*
 * pml_ob1_request.c: requests of the ob1 PML: allocation, completion, waiting,
 * persistence, cancellation (pml.h).
 */
#include "config.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "log.h"
#include "pml_ob1.h"
#include "progress.h"

crmpi_request_t *pml_ob1_request_alloc(crmpi_request_kind_t kind, pml_ob1_comm_t *comm)
{
    crmpi_request_t *req = pml_ob1.free_requests;

    if (req) {
        pml_ob1.free_requests = req->next;
    } else {
        req = malloc(sizeof(*req));
        if (!req) {
            crmpi_log_error("pml: out of memory for a request");
            return NULL;
        }
    }
    memset(req, 0, sizeof(*req));
    req->magic = CRMPI_REQUEST_MAGIC;
    req->kind = kind;
    req->comm = comm;
    /* Live on its communicator until released, so that MPI_Comm_free waits for it. */
    if (comm) {
        req->owner = comm->owner;
        comm->live_requests++;
    }
    return req;
}

/* Forget the request's wire id: fragments naming it from now on find nothing. */
static void pml_ob1_request_wire_forget(crmpi_request_t *req)
{
    uint32_t slot = (uint32_t)req->wire_id - 1;

    if (!req->wire_id || slot >= pml_ob1.num_wire_slots || pml_ob1.wire_slots[slot].req != req)
        return;
    pml_ob1.wire_slots[slot].req = NULL;
    pml_ob1.wire_slots[slot].generation++;
    pml_ob1.wire_slots[slot].next_free = pml_ob1.free_wire_slot;
    pml_ob1.free_wire_slot = slot + 1;
    req->wire_id = 0;
}

uint64_t pml_ob1_request_wire_name(crmpi_request_t *req, uint32_t peer_world)
{
    pml_ob1_wire_slot_t *slot;

    if (req->wire_id)
        return req->wire_id;
    if (!pml_ob1.free_wire_slot) {
        uint32_t old = pml_ob1.num_wire_slots, grown = old ? 2 * old : 64;
        pml_ob1_wire_slot_t *slots = realloc(pml_ob1.wire_slots, grown * sizeof(*slots));

        if (!slots || grown <= old) {
            crmpi_log_error("pml: out of memory naming a rendezvous request");
            return 0;
        }
        for (uint32_t i = old; i < grown; i++)
            slots[i] =
                (pml_ob1_wire_slot_t){.generation = 1, .next_free = i + 1 < grown ? i + 2 : 0};
        pml_ob1.wire_slots = slots;
        pml_ob1.num_wire_slots = grown;
        pml_ob1.free_wire_slot = old + 1;
    }
    slot = &pml_ob1.wire_slots[pml_ob1.free_wire_slot - 1];
    req->wire_id = (uint64_t)slot->generation << 32 | pml_ob1.free_wire_slot;
    pml_ob1.free_wire_slot = slot->next_free;
    slot->req = req;
    slot->peer_world = peer_world;
    return req->wire_id;
}

crmpi_request_t *pml_ob1_request_wire_find(uint64_t id, uint32_t peer_world,
                                           crmpi_request_kind_t kind)
{
    uint32_t index = (uint32_t)id;
    const pml_ob1_wire_slot_t *slot;

    if (index == 0 || index > pml_ob1.num_wire_slots)
        return NULL;
    slot = &pml_ob1.wire_slots[index - 1];
    if (!slot->req || slot->generation != (uint32_t)(id >> 32) || slot->peer_world != peer_world ||
        slot->req->kind != kind)
        return NULL;
    return slot->req;
}

void crmpi_pml_request_carry(crmpi_request_t *proxy, crmpi_request_t *carrier)
{
    proxy->carrier = carrier;
    carrier->proxy = proxy;
}

/* The application is done with a buffered send's request: its carrier goes when complete. */
static void pml_ob1_request_drop_carrier(crmpi_request_t *proxy)
{
    crmpi_request_t *carrier = proxy->carrier;

    if (!carrier)
        return;
    proxy->carrier = NULL;
    carrier->proxy = NULL;
    crmpi_pml_request_free(carrier);
}

void pml_ob1_request_release(crmpi_request_t *req)
{
    pml_ob1_request_drop_carrier(req);
    pml_ob1_request_wire_forget(req);
    /* Recycled, never unmapped: a stale handle then fails the magic check (MPI_ERR_REQUEST)
     * instead of reading freed memory. */
    req->magic = 0;
    /* Not ours (a non-blocking collective's, coll.h): its maker frees it. */
    if (req->free_fn) {
        req->free_fn(req);
        return;
    }
    if (req->user_type)
        crmpi_datatype_release(req->user_type);
    if (req->comm)
        pml_ob1_comm_request_ended(req->comm);
    req->next = pml_ob1.free_requests;
    pml_ob1.free_requests = req;
}

void pml_ob1_request_complete(crmpi_request_t *req)
{
    /* A send being cancelled completes when the receiver has said whether it dropped the
     * message (CANCEL_REPLY), even once its data is out: only then is its status final,
     * and until then it keeps its wire id and counts as active (the drain waits for it). */
    if (req->kind == CRMPI_REQUEST_SEND && req->cancel_state != PML_OB1_CANCEL_NONE) {
        req->cancel_finished = true;
        return;
    }
    if (req->kind == CRMPI_REQUEST_SEND)
        pml_ob1.active_sends--;
    req->complete = true;
    pml_ob1_request_wire_forget(req);
    if (req->done_fn && !req->cancel_reopened)
        req->done_fn(req);
    if (req->free_when_complete) {
        pml_ob1_request_release(req);
        return;
    }
    if (req->proxy && !req->proxy->complete) {
        /* The carrier of a buffered send whose request a cancel reopened: that request
         * completes now, cancelled or not as its message. */
        crmpi_request_t *proxy = req->proxy;

        proxy->status._cancelled = req->status._cancelled;
        proxy->complete = true;
        if (proxy->free_when_complete)
            pml_ob1_request_release(proxy);
    }
}

void crmpi_pml_wait_turn(void)
{
    if (crmpi_progress() > 0)
        return;
    /* Let other threads (and the C/R thread) take the lock between two polls. */
    crmpi_unlock();
    /* With more ranks than cores, spinning steals the core of the rank we wait for. */
    if (pml_ob1.yield_when_idle)
        sched_yield();
    crmpi_lock();
}

void crmpi_pml_wait(crmpi_request_t *req)
{
    while (!req->complete)
        crmpi_pml_wait_turn();
}

int crmpi_pml_request_finish(crmpi_request_t *req, MPI_Status *status_out)
{
    int error = req->status.MPI_ERROR;

    if (status_out)
        *status_out = req->status;
    if (req->persistent) {
        req->active = false;
        pml_ob1_request_drop_carrier(req); /* the next start ties another */
    } else {
        pml_ob1_request_release(req);
    }
    return error;
}

void crmpi_pml_request_free(crmpi_request_t *req)
{
    if (req->complete || (req->persistent && !req->active)) {
        pml_ob1_request_release(req);
        return;
    }
    req->free_when_complete = true;
}

int crmpi_pml_request_create_generic(crmpi_pml_comm_t *comm, crmpi_request_t **req_out)
{
    /* A receive on no queue: cancel leaves it alone, and completing it counts no send. */
    crmpi_request_t *req = pml_ob1_request_alloc(CRMPI_REQUEST_RECV, comm);

    if (!req)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    req->peer = MPI_ANY_SOURCE;
    req->status.MPI_SOURCE = MPI_ANY_SOURCE;
    req->status.MPI_TAG = MPI_ANY_TAG;
    *req_out = req;
    return CRMPI_OK;
}

void crmpi_pml_request_set_complete(crmpi_request_t *req, int error)
{
    req->status.MPI_ERROR = error;
    pml_ob1_request_complete(req);
}

/*
 * Cancel a send (MPI-3.1 section 3.8.4): either it is not received (cancelled) or it
 * completes normally, and waiting for it never depends on a receive being posted.
 */
static void pml_ob1_cancel_send(crmpi_request_t *req)
{
    crmpi_request_t *carrier = req->carrier;

    if (carrier) {
        /* A buffered send's request: the message is its carrier's. The request is open
         * again until the carrier completes (pml_ob1_request_complete). */
        if (!req->complete || carrier->status._cancelled ||
            carrier->cancel_state != PML_OB1_CANCEL_NONE)
            return;
        req->complete = false;
        pml_ob1_cancel_send(carrier);
        return;
    }
    if (req->status._cancelled || req->cancel_state != PML_OB1_CANCEL_NONE ||
        req->peer == MPI_PROC_NULL || !req->comm)
        return;
    if (req->queue == PML_OB1_QUEUE_HELD) {
        /* Held by a checkpoint before it was numbered or counted active: nothing of it
         * exists elsewhere. */
        pml_ob1_req_queue_remove(&pml_ob1.cr_held, req);
        req->status._cancelled = 1;
        pml_ob1.active_sends++; /* as if started: completion counts it down */
        pml_ob1_request_complete(req);
        return;
    }
    if (req->queue == PML_OB1_QUEUE_SEND_START) {
        /* Numbered but not handed to the BTL: the CANCEL must not pass its message. */
        req->cancel_state = PML_OB1_CANCEL_ASKED;
        return;
    }
    if (req->complete) {
        /* An eager send whose data is out: the receiver may still hold it unmatched. Active
         * again until the answer (the drain waits for it); done_fn has run already. */
        req->complete = false;
        req->cancel_reopened = true;
        req->cancel_finished = true;
        pml_ob1.active_sends++;
    }
    pml_ob1_send_cancel(req);
}

int crmpi_pml_cancel(crmpi_request_t *req)
{
    pml_ob1_comm_t *pcomm;

    if (req->kind == CRMPI_REQUEST_SEND) {
        pml_ob1_cancel_send(req);
        return CRMPI_OK;
    }
    /* Only a receive still waiting in a posted queue can be taken back; anything else has
     * a message committed to it and completes normally (MPI-3.1 section 3.8.4). */
    if (req->kind != CRMPI_REQUEST_RECV || req->complete || req->queue != PML_OB1_QUEUE_POSTED)
        return CRMPI_OK;
    pcomm = req->comm;
    if (req->peer == MPI_ANY_SOURCE)
        pml_ob1_req_queue_remove(&pcomm->posted_any, req);
    else
        pml_ob1_req_queue_remove(&pcomm->posted[req->peer], req);
    req->status.MPI_SOURCE = MPI_ANY_SOURCE;
    req->status.MPI_TAG = MPI_ANY_TAG;
    req->status.MPI_ERROR = MPI_SUCCESS;
    req->status._cancelled = 1;
    req->status._nbytes = 0;
    pml_ob1_request_complete(req);
    return CRMPI_OK;
}

void pml_ob1_request_set_args(crmpi_request_t *req, const void *buf, size_t count,
                              MPI_Datatype type, int peer, int tag)
{
    /* The application may free the type while the request lives (MPI-3.1 4.1.9). */
    if (type)
        crmpi_datatype_retain(type);
    req->user_buf = buf;
    req->user_count = count;
    req->user_type = type;
    req->peer = peer;
    req->tag = tag;
}

/* The status of a communication with MPI_PROC_NULL (MPI-3.1 section 3.11). */
static void pml_ob1_request_proc_null(crmpi_request_t *req)
{
    req->status.MPI_SOURCE = MPI_PROC_NULL;
    req->status.MPI_TAG = MPI_ANY_TAG;
    req->status.MPI_ERROR = MPI_SUCCESS;
    req->status._cancelled = 0;
    req->status._nbytes = 0;
    req->complete = true;
}

int crmpi_pml_start(crmpi_request_t *req)
{
    req->complete = false;
    req->active = true;
    req->status = (MPI_Status){0};
    req->bytes_done = 0;
    if (req->peer == MPI_PROC_NULL) {
        pml_ob1_request_proc_null(req);
        return CRMPI_OK;
    }
    return req->kind == CRMPI_REQUEST_SEND ? pml_ob1_send_start(req) : pml_ob1_recv_start(req);
}

int crmpi_pml_isend_init(const void *buf, size_t count, MPI_Datatype type, int dest, int tag,
                         crmpi_pml_send_mode_t mode, crmpi_pml_comm_t *comm,
                         crmpi_request_t **req_out)
{
    crmpi_request_t *req = pml_ob1_request_alloc(CRMPI_REQUEST_SEND, comm);

    if (!req)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    pml_ob1_request_set_args(req, buf, count, type, dest, tag);
    req->mode = mode;
    req->persistent = true;
    req->complete = true; /* inactive: MPI_Wait returns at once (MPI-3.1 section 3.9) */
    req->status.MPI_SOURCE = MPI_ANY_SOURCE;
    req->status.MPI_TAG = MPI_ANY_TAG;
    *req_out = req;
    return CRMPI_OK;
}

int crmpi_pml_irecv_init(void *buf, size_t count, MPI_Datatype type, int source, int tag,
                         crmpi_pml_comm_t *comm, crmpi_request_t **req_out)
{
    crmpi_request_t *req = pml_ob1_request_alloc(CRMPI_REQUEST_RECV, comm);

    if (!req)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    pml_ob1_request_set_args(req, buf, count, type, source, tag);
    req->persistent = true;
    req->complete = true;
    req->status.MPI_SOURCE = MPI_ANY_SOURCE;
    req->status.MPI_TAG = MPI_ANY_TAG;
    *req_out = req;
    return CRMPI_OK;
}

int crmpi_pml_isend(const void *buf, size_t count, MPI_Datatype type, int dest, int tag,
                    crmpi_pml_send_mode_t mode, crmpi_pml_comm_t *comm, crmpi_request_t **req_out)
{
    crmpi_request_t *req = pml_ob1_request_alloc(CRMPI_REQUEST_SEND, comm);
    int rc;

    if (!req)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    pml_ob1_request_set_args(req, buf, count, type, dest, tag);
    req->mode = mode;
    if (dest == MPI_PROC_NULL) {
        pml_ob1_request_proc_null(req);
        *req_out = req;
        return CRMPI_OK;
    }
    rc = pml_ob1_send_start(req);
    if (rc != CRMPI_OK) {
        pml_ob1_request_release(req);
        return rc;
    }
    *req_out = req;
    return CRMPI_OK;
}

int crmpi_pml_irecv(void *buf, size_t count, MPI_Datatype type, int source, int tag,
                    crmpi_pml_comm_t *comm, crmpi_request_t **req_out)
{
    crmpi_request_t *req = pml_ob1_request_alloc(CRMPI_REQUEST_RECV, comm);
    int rc;

    if (!req)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    pml_ob1_request_set_args(req, buf, count, type, source, tag);
    if (source == MPI_PROC_NULL) {
        pml_ob1_request_proc_null(req);
        *req_out = req;
        return CRMPI_OK;
    }
    rc = pml_ob1_recv_start(req);
    if (rc != CRMPI_OK) {
        pml_ob1_request_release(req);
        return rc;
    }
    *req_out = req;
    return CRMPI_OK;
}

int crmpi_pml_recv(void *buf, size_t count, MPI_Datatype type, int source, int tag,
                   crmpi_pml_comm_t *comm, MPI_Status *status)
{
    crmpi_request_t *req;
    int rc = crmpi_pml_irecv(buf, count, type, source, tag, comm, &req);

    if (rc != CRMPI_OK)
        return rc;
    crmpi_pml_wait(req);
    crmpi_pml_request_finish(req, status);
    return CRMPI_OK;
}

int crmpi_pml_send(const void *buf, size_t count, MPI_Datatype type, int dest, int tag,
                   crmpi_pml_send_mode_t mode, crmpi_pml_comm_t *comm)
{
    crmpi_request_t *req;
    int rc = crmpi_pml_isend(buf, count, type, dest, tag, mode, comm, &req);

    if (rc != CRMPI_OK)
        return rc;
    crmpi_pml_wait(req);
    crmpi_pml_request_finish(req, NULL);
    return CRMPI_OK;
}
