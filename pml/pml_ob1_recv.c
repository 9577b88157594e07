/*
 * pml_ob1_recv.c: the receiving side of ob1: sequence order, MPI matching against posted
 * receives, the unexpected queue, probes and matched probes (pml_ob1.h).
 *
 * Matching rule (MPI-3.1 section 3.5): an arriving message goes to the earliest-posted
 * receive that matches it; a posted receive takes the earliest-arrived message that matches
 * it. Receives wait per source rank plus one MPI_ANY_SOURCE queue, and their posting order
 * decides between the two; unexpected messages wait per source rank, and their arrival
 * order decides for an MPI_ANY_SOURCE receive.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "crmpi_status.h"
#include "log.h"
#include "pml_ob1.h"
#include "progress.h"

void pml_ob1_req_queue_append(pml_ob1_req_queue_t *q, crmpi_request_t *req, int which)
{
    req->next = NULL;
    req->prev = q->tail;
    if (q->tail)
        q->tail->next = req;
    else
        q->head = req;
    q->tail = req;
    req->queue = which;
}

void pml_ob1_req_queue_remove(pml_ob1_req_queue_t *q, crmpi_request_t *req)
{
    if (req->prev)
        req->prev->next = req->next;
    else
        q->head = req->next;
    if (req->next)
        req->next->prev = req->prev;
    else
        q->tail = req->prev;
    req->next = req->prev = NULL;
    req->queue = PML_OB1_QUEUE_NONE;
}

void pml_ob1_msg_queue_append(pml_ob1_msg_queue_t *q, pml_ob1_msg_t *msg)
{
    msg->next = NULL;
    msg->prev = q->tail;
    if (q->tail)
        q->tail->next = msg;
    else
        q->head = msg;
    q->tail = msg;
}

void pml_ob1_msg_queue_remove(pml_ob1_msg_queue_t *q, pml_ob1_msg_t *msg)
{
    if (msg->prev)
        msg->prev->next = msg->next;
    else
        q->head = msg->next;
    if (msg->next)
        msg->next->prev = msg->prev;
    else
        q->tail = msg->prev;
    msg->next = msg->prev = NULL;
}

/* Does a receive for `want_tag` take a message with `tag`? MPI_ANY_TAG takes the
 * application's tags (>= 0), never the library's own negative ones. */
static inline bool pml_ob1_tag_matches(int want_tag, int tag)
{
    return want_tag == tag || (want_tag == MPI_ANY_TAG && tag >= 0);
}

static crmpi_request_t *pml_ob1_queue_first_match(pml_ob1_req_queue_t *q, int tag)
{
    for (crmpi_request_t *req = q->head; req; req = req->next) {
        if (pml_ob1_tag_matches(req->tag, tag))
            return req;
    }
    return NULL;
}

/* The posted receive an arriving (src, tag) goes to, taken off its queue; or NULL. */
static crmpi_request_t *pml_ob1_match_posted(pml_ob1_comm_t *pcomm, int src, int tag)
{
    crmpi_request_t *specific = pml_ob1_queue_first_match(&pcomm->posted[src], tag);
    crmpi_request_t *any =
        pcomm->posted_any.head ? pml_ob1_queue_first_match(&pcomm->posted_any, tag) : NULL;

    if (specific && (!any || specific->post_order < any->post_order)) {
        pml_ob1_req_queue_remove(&pcomm->posted[src], specific);
        return specific;
    }
    if (any)
        pml_ob1_req_queue_remove(&pcomm->posted_any, any);
    return any;
}

/* The earliest unexpected message a receive for (src, tag) takes; left in its queue. */
static pml_ob1_msg_t *pml_ob1_find_unexpected(pml_ob1_comm_t *pcomm, int src, int tag)
{
    pml_ob1_msg_t *best = NULL;

    if (pcomm->num_unexpected == 0)
        return NULL;
    if (src != MPI_ANY_SOURCE) {
        for (pml_ob1_msg_t *msg = pcomm->unexpected[src].head; msg; msg = msg->next) {
            if (pml_ob1_tag_matches(tag, msg->match.tag))
                return msg;
        }
        return NULL;
    }
    for (int s = 0; s < pcomm->size; s++) {
        for (pml_ob1_msg_t *msg = pcomm->unexpected[s].head; msg; msg = msg->next) {
            if (!pml_ob1_tag_matches(tag, msg->match.tag))
                continue;
            if (!best || msg->arrival < best->arrival)
                best = msg;
            break; /* later ones from this source arrived later */
        }
    }
    return best;
}

static void pml_ob1_unexpected_remove(pml_ob1_comm_t *pcomm, pml_ob1_msg_t *msg)
{
    pml_ob1_msg_queue_remove(&pcomm->unexpected[msg->match.src], msg);
    pcomm->num_unexpected--;
}

/*
 * Give the message (src, tag, msg_len) whose first `nbytes` bytes are at `data` to receive
 * `req`: unpack, then complete it (eager) or acknowledge the rendezvous.
 */
static void pml_ob1_recv_deliver(crmpi_request_t *req, const pml_ob1_match_hdr_t *match,
                                 uint32_t src_world, bool rndv, uint64_t msg_len, uint64_t send_req,
                                 const void *data, size_t nbytes)
{
    crmpi_convertor_init(&req->conv, req->user_buf, req->user_count, req->user_type);
    req->status.MPI_SOURCE = match->src;
    req->status.MPI_TAG = match->tag;
    req->status._cancelled = 0;
    if (msg_len > req->conv.total) {
        /* The excess is received and dropped (MPI-3.1 section 3.2.4). */
        req->status.MPI_ERROR = MPI_ERR_TRUNCATE;
        req->status._nbytes = (MPI_Count)req->conv.total;
    } else {
        req->status.MPI_ERROR = MPI_SUCCESS;
        req->status._nbytes = (MPI_Count)msg_len;
    }
    req->bytes_total = msg_len;
    if (nbytes)
        crmpi_convertor_unpack(&req->conv, data, nbytes);
    req->bytes_done = nbytes;
    if (rndv)
        pml_ob1_send_ack(src_world, send_req, pml_ob1_request_wire_name(req, src_world), nbytes);
    if (req->bytes_done == req->bytes_total)
        pml_ob1_request_complete(req);
    else
        pml_ob1.rndv_recvs++; /* until its last FRAG */
}

/* Is a checkpoint's pull still receiving this message's data into msg->pulled? */
static bool pml_ob1_msg_pulling(const pml_ob1_msg_t *msg)
{
    return msg->pulled && msg->rndv;
}

void pml_ob1_msg_free(pml_ob1_msg_t *msg)
{
    if (pml_ob1_msg_pulling(msg)) {
        msg->dropped = true; /* the pull writes into it until its end (pml_ob1_cr.c) */
        return;
    }
    free(msg->pulled);
    free(msg);
}

void pml_ob1_recv_take_message(crmpi_request_t *req, pml_ob1_msg_t *msg)
{
    if (pml_ob1_msg_pulling(msg)) {
        /* Not all here yet: the receive gets it when the pull ends (pml_ob1_cr.c). */
        msg->taker = req;
        return;
    }
    if (msg->pulled) /* drained for a checkpoint: all here, and the sender is done */
        pml_ob1_recv_deliver(req, &msg->match, msg->src_world, false, msg->msg_len, 0, msg->pulled,
                             msg->msg_len);
    else
        pml_ob1_recv_deliver(req, &msg->match, msg->src_world, msg->rndv, msg->msg_len,
                             msg->send_req, msg->data, msg->data_len);
    pml_ob1_msg_free(msg);
}

/* A copy of an arrival, for the unexpected, early or orphan queues. */
static pml_ob1_msg_t *pml_ob1_msg_copy(const pml_ob1_match_hdr_t *match, uint32_t src_world,
                                       bool rndv, uint64_t msg_len, uint64_t send_req,
                                       const void *data, size_t nbytes)
{
    pml_ob1_msg_t *msg = malloc(sizeof(*msg) + nbytes);

    if (!msg) {
        /* A message that cannot be kept is lost, and MPI has no way to report it. */
        crmpi_log_error("pml: out of memory keeping a %zu-byte message from rank %u", nbytes,
                        src_world);
        abort();
    }
    msg->next = msg->prev = NULL;
    msg->rndv = rndv;
    msg->src_world = src_world;
    msg->match = *match;
    msg->arrival = 0;
    msg->msg_len = msg_len;
    msg->send_req = send_req;
    msg->data_len = nbytes;
    msg->pulled = NULL;
    msg->taker = NULL;
    msg->dropped = false;
    msg->cancelled = false;
    memcpy(msg->data, data, nbytes);
    return msg;
}

static void pml_ob1_unexpected_append(pml_ob1_comm_t *pcomm, pml_ob1_msg_t *msg)
{
    if (msg->match.src < 0 || msg->match.src >= pcomm->size) {
        crmpi_log_error("pml: message from rank %u names source %d, outside communicator %s "
                        "(context %u, size %d); dropped",
                        msg->src_world, msg->match.src, pcomm->name ? pcomm->name : "", pcomm->ctx,
                        pcomm->size);
        free(msg);
        return;
    }
    msg->arrival = ++pml_ob1.arrival_counter;
    pml_ob1_msg_queue_append(&pcomm->unexpected[msg->match.src], msg);
    pcomm->num_unexpected++;
    if (pml_ob1.cr_quiescing && msg->rndv)
        pml_ob1_cr_pull(msg);
}

/* Match an in-order arrival; `data` is only valid during this call. */
static void pml_ob1_recv_match(const pml_ob1_match_hdr_t *match, uint32_t src_world, bool rndv,
                               uint64_t msg_len, uint64_t send_req, const void *data, size_t nbytes)
{
    pml_ob1_comm_t *pcomm = match->ctx < pml_ob1.num_comms ? pml_ob1.comms[match->ctx] : NULL;
    crmpi_request_t *req;

    if (!pcomm) {
        /* The sender has created a communicator this rank has not created yet. */
        pml_ob1_msg_t *msg =
            pml_ob1_msg_copy(match, src_world, rndv, msg_len, send_req, data, nbytes);

        pml_ob1_msg_queue_append(&pml_ob1.orphans, msg);
        if (pml_ob1.cr_quiescing && rndv)
            pml_ob1_cr_pull(msg);
        return;
    }
    if (match->src >= 0 && match->src < pcomm->size &&
        (req = pml_ob1_match_posted(pcomm, match->src, match->tag)) != NULL) {
        pml_ob1_recv_deliver(req, match, src_world, rndv, msg_len, send_req, data, nbytes);
        return;
    }
    pml_ob1_unexpected_append(
        pcomm, pml_ob1_msg_copy(match, src_world, rndv, msg_len, send_req, data, nbytes));
}

/* An arrival from `src_world`: matched now if it is the next in sequence, else kept. */
static void pml_ob1_recv_arrival(uint32_t src_world, const pml_ob1_match_hdr_t *match, bool rndv,
                                 uint64_t msg_len, uint64_t send_req, const void *data,
                                 size_t nbytes)
{
    pml_ob1_peer_t *peer = &pml_ob1.peers[src_world];

    if (match->seq != peer->recv_seq) {
        pml_ob1_msg_t *msg =
            pml_ob1_msg_copy(match, src_world, rndv, msg_len, send_req, data, nbytes);
        pml_ob1_msg_t **pos = &peer->early;

        /* Sequence numbers wrap: compare by signed distance. */
        while (*pos && (int32_t)((*pos)->match.seq - match->seq) < 0)
            pos = &(*pos)->next;
        msg->next = *pos;
        *pos = msg;
        return;
    }
    pml_ob1_recv_match(match, src_world, rndv, msg_len, send_req, data, nbytes);
    peer->recv_seq++;
    while (peer->early && peer->early->match.seq == peer->recv_seq) {
        pml_ob1_msg_t *msg = peer->early;

        peer->early = msg->next;
        /* A cancelled one uses its turn, unmatched: it arrived, for the bookmarks. */
        if (!msg->cancelled)
            pml_ob1_recv_match(&msg->match, msg->src_world, msg->rndv, msg->msg_len, msg->send_req,
                               msg->data, msg->data_len);
        free(msg); /* an early arrival is never pulled: it has not reached matching */
        peer->recv_seq++;
    }
}

/*
 * Drop the message `match` names from `src_world` if nothing has taken it: still early,
 * or waiting in an unexpected or orphan queue without a pull. @return whether it was.
 */
static bool pml_ob1_recv_cancel_message(uint32_t src_world, const pml_ob1_match_hdr_t *match)
{
    pml_ob1_peer_t *peer = &pml_ob1.peers[src_world];
    pml_ob1_comm_t *pcomm = match->ctx < pml_ob1.num_comms ? pml_ob1.comms[match->ctx] : NULL;
    pml_ob1_msg_queue_t *queue;

    if ((int32_t)(match->seq - peer->recv_seq) >= 0) {
        /* Not matched yet: it waits among the early arrivals (the BTL delivered it before
         * the CANCEL), and its turn must still come for later ones to match. */
        for (pml_ob1_msg_t *msg = peer->early; msg; msg = msg->next) {
            if (msg->match.seq == match->seq && !msg->cancelled) {
                msg->cancelled = true;
                return true;
            }
        }
        return false;
    }
    if (pcomm)
        queue = match->src >= 0 && match->src < pcomm->size ? &pcomm->unexpected[match->src] : NULL;
    else
        queue = &pml_ob1.orphans;
    for (pml_ob1_msg_t *msg = queue ? queue->head : NULL; msg; msg = msg->next) {
        if (msg->src_world != src_world || msg->match.seq != match->seq ||
            msg->match.ctx != match->ctx)
            continue;
        /* Pulled for a checkpoint: its sender has been acknowledged and completes. */
        if (msg->pulled)
            return false;
        if (pcomm)
            pml_ob1_unexpected_remove(pcomm, msg);
        else
            pml_ob1_msg_queue_remove(queue, msg);
        pml_ob1_msg_free(msg);
        return true;
    }
    /* Matched (a receive or a matched probe has it): the send completes normally. */
    return false;
}

void pml_ob1_recv_cb_cancel(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data,
                            size_t len)
{
    pml_ob1_cancel_hdr_t cancel;
    pml_ob1_cancel_reply_hdr_t reply = {0};

    if (len < sizeof(cancel)) {
        crmpi_log_error("pml: short CANCEL (%zu bytes) from rank %u; ignored", len, peer_rank);
        return;
    }
    memcpy(&cancel, data, sizeof(cancel));
    reply.send_req = cancel.send_req;
    reply.cancelled = pml_ob1_recv_cancel_message(peer_rank, &cancel.match);
    pml_ob1_send_ctl(peer_rank, PML_OB1_TAG_CANCEL_REPLY, &reply, sizeof(reply));
}

void pml_ob1_recv_cb_match(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data,
                           size_t len)
{
    pml_ob1_match_hdr_t match;

    if (len < sizeof(match)) {
        crmpi_log_error("pml: short MATCH (%zu bytes) from rank %u; ignored", len, peer_rank);
        return;
    }
    memcpy(&match, data, sizeof(match));
    pml_ob1_recv_arrival(peer_rank, &match, false, len - sizeof(match), 0,
                         (const char *)data + sizeof(match), len - sizeof(match));
}

void pml_ob1_recv_cb_rndv(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data,
                          size_t len)
{
    pml_ob1_rndv_hdr_t rndv;

    if (len < sizeof(rndv)) {
        crmpi_log_error("pml: short RNDV (%zu bytes) from rank %u; ignored", len, peer_rank);
        return;
    }
    memcpy(&rndv, data, sizeof(rndv));
    pml_ob1_recv_arrival(peer_rank, &rndv.match, true, rndv.msg_len, rndv.send_req,
                         (const char *)data + sizeof(rndv), len - sizeof(rndv));
}

/* The receive a FRAG from `peer_rank` with `nbytes` of data may write to, or NULL (logged). */
static crmpi_request_t *pml_ob1_recv_frag_target(const pml_ob1_frag_hdr_t *frag, uint32_t peer_rank,
                                                 size_t nbytes)
{
    /* Only a receive of ours that acknowledged this rank's rendezvous is written to, and
     * only where its data goes next. */
    crmpi_request_t *req = pml_ob1_request_wire_find(frag->recv_req, peer_rank, CRMPI_REQUEST_RECV);

    if (!req || req->bytes_placing || frag->offset != req->bytes_done ||
        nbytes > req->bytes_total - req->bytes_done) {
        crmpi_log_error("pml: FRAG from rank %u (%zu bytes at offset %llu) fits no receive "
                        "waiting for its data; ignored",
                        peer_rank, nbytes, (unsigned long long)frag->offset);
        return NULL;
    }
    return req;
}

/* `nbytes` more of a rendezvous receive's data are in its buffer. */
static void pml_ob1_recv_frag_arrived(crmpi_request_t *req, size_t nbytes)
{
    req->bytes_done += nbytes;
    if (req->bytes_done == req->bytes_total) {
        pml_ob1.rndv_recvs--;
        pml_ob1_request_complete(req);
    }
}

void pml_ob1_recv_cb_frag(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data,
                          size_t len)
{
    pml_ob1_frag_hdr_t frag;
    crmpi_request_t *req;
    size_t nbytes = len - sizeof(frag);

    if (len < sizeof(frag)) {
        crmpi_log_error("pml: short FRAG (%zu bytes) from rank %u; ignored", len, peer_rank);
        return;
    }
    memcpy(&frag, data, sizeof(frag));
    req = pml_ob1_recv_frag_target(&frag, peer_rank, nbytes);
    if (!req)
        return;
    crmpi_convertor_unpack(&req->conv, (const char *)data + sizeof(frag), nbytes);
    pml_ob1_recv_frag_arrived(req, nbytes);
}

/*
 * The pieces of the receive buffer that stream bytes [position, position + nbytes) of a
 * non-contiguous type go to, from the convertor's cursor (convertor.h: element, run and
 * bytes of that run done) over the type's runs; adjacent pieces are merged.
 * @return the pieces, or -1 when more than `max` are needed (the fragment is unpacked)
 */
static int pml_ob1_recv_place_runs(const crmpi_convertor_t *conv, size_t nbytes, struct iovec *iov,
                                   int max)
{
    const struct crmpi_datatype_s *type = conv->type;
    size_t elem = conv->elem;
    size_t run = conv->run;
    size_t run_offset = conv->run_offset;
    int num = 0;

    while (nbytes > 0) {
        const crmpi_dt_run_t *r;
        size_t take;
        char *mem;

        if (run < type->num_runs && run_offset == type->runs[run].len) {
            run++;
            run_offset = 0;
        }
        if (run == type->num_runs) {
            elem++;
            run = 0;
            run_offset = 0;
        }
        r = &type->runs[run];
        take = r->len - run_offset < nbytes ? r->len - run_offset : nbytes;
        mem = conv->buf + (ptrdiff_t)elem * type->extent + r->disp + (ptrdiff_t)run_offset;
        if (num > 0 && (char *)iov[num - 1].iov_base + iov[num - 1].iov_len == mem) {
            iov[num - 1].iov_len += take;
        } else {
            if (num == max)
                return -1;
            iov[num++] = (struct iovec){.iov_base = mem, .iov_len = take};
        }
        nbytes -= take;
        run_offset += take;
    }
    return num;
}

/*
 * Placement (btl.h): the payload of a large FRAG goes straight into the receive's buffer.
 * The header is validated exactly as for a delivered FRAG; the destination comes from the
 * request's own convertor, never from the wire. While the BTL writes, bytes_placing holds
 * the fragment's length: no other FRAG may name the request until placed() runs (on one
 * connection none can come; the check keeps a corrupt peer from racing the BTL).
 */
bool pml_ob1_recv_place_frag(crmpi_btl_module_t *module, uint32_t peer_rank, const void *hdr,
                             size_t payload_len, crmpi_btl_place_t *place_out)
{
    pml_ob1_frag_hdr_t frag;
    crmpi_request_t *req;
    char *contiguous;
    size_t room;
    size_t store;

    memcpy(&frag, hdr, sizeof(frag));
    req = pml_ob1_request_wire_find(frag.recv_req, peer_rank, CRMPI_REQUEST_RECV);
    if (!req || req->bytes_placing || frag.offset != req->bytes_done || payload_len == 0 ||
        payload_len > req->bytes_total - req->bytes_done)
        return false; /* the recv callback reports it and drops it */
    /* A truncated receive stores up to its buffer's end and drops the rest (MPI-3.1
     * section 3.2.4); the convertor's position is what it stored so far. */
    room = req->conv.total - req->conv.position;
    store = payload_len < room ? payload_len : room;
    place_out->iovcnt = 0;
    contiguous = crmpi_convertor_contiguous_ptr(&req->conv);
    if (contiguous && store) {
        place_out->iov[place_out->iovcnt++] =
            (struct iovec){.iov_base = contiguous + req->conv.position, .iov_len = store};
    } else if (store) {
        /* A non-contiguous type is placed when its runs in this fragment are few and
         * long (a vector of large blocks); small runs are unpacked from the BTL's
         * buffer, which costs less than a scatter into many small pieces. */
        int num =
            pml_ob1_recv_place_runs(&req->conv, store, place_out->iov, CRMPI_BTL_PLACE_IOV_MAX);

        if (num < 0 || store / (size_t)num < PML_OB1_PLACE_MIN_PIECE)
            return false;
        place_out->iovcnt = num;
    }
    place_out->discard = payload_len - store;
    place_out->cookie = req;
    req->bytes_placing = payload_len;
    return true;
}

void pml_ob1_recv_placed_frag(crmpi_btl_module_t *module, uint32_t peer_rank, void *cookie,
                              int status)
{
    /* The request place_frag gave: active until its last byte arrives, so still here. */
    crmpi_request_t *req = cookie;
    size_t nbytes = req->bytes_placing;
    size_t room = req->conv.total - req->conv.position;

    req->bytes_placing = 0;
    if (status != CRMPI_OK) {
        /* The BTL has logged why; the fragment counts as never arrived. */
        return;
    }
    crmpi_convertor_set_position(&req->conv, req->conv.position + (nbytes < room ? nbytes : room));
    pml_ob1_recv_frag_arrived(req, nbytes);
}

int pml_ob1_recv_start(crmpi_request_t *req)
{
    pml_ob1_comm_t *pcomm = req->comm;
    pml_ob1_msg_t *msg;

    req->status.MPI_ERROR = MPI_SUCCESS;
    req->post_order = ++pml_ob1.post_counter;
    msg = pml_ob1_find_unexpected(pcomm, req->peer, req->tag);
    if (msg) {
        pml_ob1_unexpected_remove(pcomm, msg);
        pml_ob1_recv_take_message(req, msg);
        return CRMPI_OK;
    }
    if (req->peer == MPI_ANY_SOURCE)
        pml_ob1_req_queue_append(&pcomm->posted_any, req, PML_OB1_QUEUE_POSTED);
    else
        pml_ob1_req_queue_append(&pcomm->posted[req->peer], req, PML_OB1_QUEUE_POSTED);
    return CRMPI_OK;
}

/* The status a probe reports for `msg`. */
static void pml_ob1_probe_status(const pml_ob1_msg_t *msg, MPI_Status *status_out)
{
    if (!status_out)
        return;
    status_out->MPI_SOURCE = msg->match.src;
    status_out->MPI_TAG = msg->match.tag;
    status_out->MPI_ERROR = MPI_SUCCESS;
    status_out->_cancelled = 0;
    status_out->_nbytes = (MPI_Count)msg->msg_len;
}

static void pml_ob1_proc_null_status(MPI_Status *status_out)
{
    if (!status_out)
        return;
    status_out->MPI_SOURCE = MPI_PROC_NULL;
    status_out->MPI_TAG = MPI_ANY_TAG;
    status_out->MPI_ERROR = MPI_SUCCESS;
    status_out->_cancelled = 0;
    status_out->_nbytes = 0;
}

int crmpi_pml_iprobe(int source, int tag, crmpi_pml_comm_t *comm, int *flag_out,
                     MPI_Status *status_out)
{
    pml_ob1_msg_t *msg;

    if (source == MPI_PROC_NULL) {
        *flag_out = 1;
        pml_ob1_proc_null_status(status_out);
        return CRMPI_OK;
    }
    crmpi_progress();
    msg = pml_ob1_find_unexpected(comm, source, tag);
    *flag_out = msg != NULL;
    if (msg)
        pml_ob1_probe_status(msg, status_out);
    return CRMPI_OK;
}

int crmpi_pml_improbe(int source, int tag, crmpi_pml_comm_t *comm, int *flag_out,
                      struct crmpi_message_s **message_out, MPI_Status *status_out)
{
    pml_ob1_comm_t *pcomm = comm;
    pml_ob1_msg_t *msg;

    if (source == MPI_PROC_NULL) {
        *flag_out = 1;
        *message_out = MPI_MESSAGE_NO_PROC;
        pml_ob1_proc_null_status(status_out);
        return CRMPI_OK;
    }
    crmpi_progress();
    msg = pml_ob1_find_unexpected(pcomm, source, tag);
    *flag_out = msg != NULL;
    if (!msg)
        return CRMPI_OK;
    /* Out of matching for good: no later receive or probe can see it (MPI-3.1 3.8.2). */
    pml_ob1_unexpected_remove(pcomm, msg);
    pml_ob1_msg_queue_append(&pml_ob1.probed, msg); /* a checkpoint may have to pull it */
    pml_ob1_probe_status(msg, status_out);
    *message_out = msg;
    return CRMPI_OK;
}

int crmpi_pml_imrecv(void *buf, size_t count, MPI_Datatype type, struct crmpi_message_s *message,
                     crmpi_request_t **req_out)
{
    crmpi_request_t *req;

    if (message == MPI_MESSAGE_NO_PROC)
        return crmpi_pml_irecv(buf, count, type, MPI_PROC_NULL, MPI_ANY_TAG, NULL, req_out);
    req = pml_ob1_request_alloc(CRMPI_REQUEST_RECV, pml_ob1.comms[message->match.ctx]);
    if (!req)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    pml_ob1_request_set_args(req, buf, count, type, message->match.src, message->match.tag);
    pml_ob1_msg_queue_remove(&pml_ob1.probed, message);
    pml_ob1_recv_take_message(req, message);
    *req_out = req;
    return CRMPI_OK;
}

void pml_ob1_recv_adopt_orphans(pml_ob1_comm_t *pcomm)
{
    pml_ob1_msg_t *next;

    for (pml_ob1_msg_t *msg = pml_ob1.orphans.head; msg; msg = next) {
        next = msg->next;
        if (msg->match.ctx != pcomm->ctx)
            continue;
        pml_ob1_msg_queue_remove(&pml_ob1.orphans, msg);
        pml_ob1_unexpected_append(pcomm, msg);
    }
}
