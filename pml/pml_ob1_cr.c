/*
 * pml_ob1_cr.c: what ob1 does for a checkpoint (pml.h, "Checkpoint/restart"): hold new
 * sends, pull rendezvous messages that have no receive yet, say when nothing moves, and
 * forget sequence numbers after a restart.
 *
 * Pulling: a rendezvous message that reached matching without a receive keeps most of its
 * data at the sender, whose request waits for an ACK. To empty the channel, the receiver
 * acknowledges it to an internal request that receives the rest into msg->pulled; the
 * message stays in its queue (unexpected, matched probe or orphan), and the receive that
 * later takes it copies from msg->pulled as from an eager message (once the pull has every
 * byte: a receive that takes it before waits for the pull's end).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "log.h"
#include "pml_ob1.h"
#include "progress.h"

/* The internal request that received a pulled message's data has finished: the message
 * is whole. A receive that took it meanwhile gets it now; one freed meanwhile goes. */
static void pml_ob1_cr_pull_done(crmpi_request_t *req)
{
    pml_ob1_msg_t *msg = req->done_arg;

    msg->rndv = false;
    pml_ob1.cr_pulls--;
    if (msg->dropped)
        pml_ob1_msg_free(msg);
    else if (msg->taker)
        pml_ob1_recv_take_message(msg->taker, msg);
}

void pml_ob1_cr_pull(pml_ob1_msg_t *msg)
{
    crmpi_request_t *req;

    if (!msg->rndv || msg->pulled)
        return;
    msg->pulled = malloc(msg->msg_len ? msg->msg_len : 1);
    req = pml_ob1_request_alloc(CRMPI_REQUEST_RECV, NULL);
    if (!msg->pulled || !req) {
        /* The sender cannot finish without it, and the checkpoint cannot either. */
        crmpi_log_error("pml: out of memory pulling a %llu-byte message from rank %u for a "
                        "checkpoint",
                        (unsigned long long)msg->msg_len, msg->src_world);
        abort();
    }
    memcpy(msg->pulled, msg->data, msg->data_len);
    pml_ob1.cr_stats.pulled_messages++;
    pml_ob1.cr_stats.pulled_bytes += msg->msg_len - msg->data_len;

    /* The ACK names the request the FRAGs go to; with nothing left, no FRAG comes. */
    pml_ob1_request_set_args(req, msg->pulled, msg->msg_len, MPI_BYTE, (int)msg->src_world, 0);
    crmpi_convertor_init(&req->conv, msg->pulled, msg->msg_len, MPI_BYTE);
    crmpi_convertor_set_position(&req->conv, msg->data_len);
    req->bytes_total = msg->msg_len;
    req->bytes_done = msg->data_len;
    req->done_fn = pml_ob1_cr_pull_done;
    req->done_arg = msg;
    req->free_when_complete = true;
    pml_ob1.cr_pulls++;
    pml_ob1_send_ack(msg->src_world, msg->send_req, pml_ob1_request_wire_name(req, msg->src_world),
                     msg->data_len);
    if (req->bytes_done == req->bytes_total)
        pml_ob1_request_complete(req);
    else
        pml_ob1.rndv_recvs++; /* until its last FRAG, as for a matched receive */
}

static void pml_ob1_cr_pull_queue(pml_ob1_msg_queue_t *queue)
{
    for (pml_ob1_msg_t *msg = queue->head; msg; msg = msg->next)
        pml_ob1_cr_pull(msg);
}

void crmpi_pml_cr_quiesce_begin(void)
{
    memset(&pml_ob1.cr_stats, 0, sizeof(pml_ob1.cr_stats));
    pml_ob1.cr_quiescing = true;
    for (uint32_t ctx = 0; ctx < pml_ob1.num_comms; ctx++) {
        pml_ob1_comm_t *pcomm = pml_ob1.comms[ctx];

        for (int src = 0; pcomm && pcomm->num_unexpected && src < pcomm->size; src++)
            pml_ob1_cr_pull_queue(&pcomm->unexpected[src]);
    }
    pml_ob1_cr_pull_queue(&pml_ob1.probed);
    pml_ob1_cr_pull_queue(&pml_ob1.orphans);
}

void crmpi_pml_cr_bookmark(uint32_t peer, uint32_t *sent_out, uint32_t *arrived_out)
{
    *sent_out = pml_ob1.peers[peer].send_seq;
    *arrived_out = pml_ob1.peers[peer].recv_seq;
}

bool crmpi_pml_cr_quiet(void)
{
    return pml_ob1.active_sends == 0 && pml_ob1.rndv_recvs == 0 && !pml_ob1.ctl_head &&
           !pml_ob1.send_frags.head && pml_ob1.sends_waiting == 0;
}

void crmpi_pml_cr_quiesce_end(void)
{
    /* After an aborted drain a pull may still be receiving; no receive may take its
     * message before it has all of it. Its sender is not held, so this ends. */
    while (pml_ob1.cr_pulls > 0)
        crmpi_progress();
    pml_ob1.cr_quiescing = false;
    while (pml_ob1.cr_held.head) {
        crmpi_request_t *req = pml_ob1.cr_held.head;

        pml_ob1_req_queue_remove(&pml_ob1.cr_held, req);
        pml_ob1.cr_stats.held_sends++;
        pml_ob1_send_start(req);
    }
}

const crmpi_pml_cr_stats_t *crmpi_pml_cr_stats(void)
{
    return &pml_ob1.cr_stats;
}

int crmpi_pml_cr_reset_sequences(void)
{
    for (uint32_t p = 0; p < pml_ob1.num_peers; p++) {
        if (pml_ob1.peers[p].early) {
            crmpi_log_error("pml: restart with messages from rank %u still out of order; the "
                            "checkpoint was not drained",
                            p);
            return CRMPI_ERROR;
        }
    }
    for (uint32_t p = 0; p < pml_ob1.num_peers; p++)
        pml_ob1.peers[p].send_seq = pml_ob1.peers[p].recv_seq = 0;
    return CRMPI_OK;
}
