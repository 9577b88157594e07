/*
 * comm_xchg.c: the small exchanges communicator creation needs, straight on the PML (the
 * collective layer sits above communicators, and must not be needed to make one). Each
 * runs among a set of ranks of a parent communicator with a reserved negative tag
 * (comm_internal.h), so the application's messages never match them.
 *
 * - allreduce of a bitmap with AND: a binomial tree up to member 0, then down again, in
 *   2 log2(n) steps; non-blocking (crmpi_comm_band_*) because MPI_Comm_idup runs it from
 *   the progress engine.
 *   When the set is bridged to another (an intercommunicator's two groups), the two
 *   roots swap their reduced bitmaps over the bridge and AND them before sending the
 *   result down, so both sets end with the AND of all their members.
 * - allgatherv: every member sends its block to every other one (n - 1 messages each).
 *   Used for a few ints per rank (MPI_Comm_split) and graph edges; quadratic in messages,
 *   which is fine for the job sizes crmpi runs, and has no root to wait for.
 * - bcast from member 0, and the leaders' swap over a bridge followed by a bcast in each
 *   set: linear, for group lists and flags of intercommunicators.
 */
#include <stdlib.h>
#include <string.h>

#include "comm_internal.h"
#include "crmpi_status.h"
#include "log.h"

crmpi_comm_xchg_set_t crmpi_comm_xchg_all(MPI_Comm comm, int tag)
{
    if (comm->inter)
        return (crmpi_comm_xchg_set_t){.comm = comm->local_comm,
                                       .size = comm->size,
                                       .me = comm->rank,
                                       .tag = tag,
                                       .bridge = comm,
                                       .bridge_peer = 0,
                                       .bridge_tag = tag};
    return (crmpi_comm_xchg_set_t){
        .comm = comm, .ranks = NULL, .size = comm->size, .me = comm->rank, .tag = tag};
}

/* The rank in the parent communicator of member `index`. */
static int xchg_peer(const crmpi_comm_xchg_set_t *set, int index)
{
    return set->ranks ? set->ranks[index] : index;
}

/* A finished PML request: its error, and the request is gone. */
static int xchg_finish(crmpi_request_t *req)
{
    MPI_Status status;

    crmpi_pml_request_finish(req, &status);
    return status.MPI_ERROR == MPI_SUCCESS ? CRMPI_OK : CRMPI_ERR_PROTO;
}

/* Lowest set bit of a member index; member 0 is the root, above every bit. */
static int xchg_lowbit(int index, int size)
{
    if (index == 0) {
        int all = 1;
        while (all < size)
            all <<= 1;
        return all;
    }
    return index & -index;
}

/*
 * Non-blocking AND-allreduce (crmpi_comm_band_t): states in order.
 */
enum {
    BAND_REDUCE,    /* receiving from children at `mask`, then sending to the parent */
    BAND_BRIDGE,    /* member 0 of a bridged set: swapping with the other set's root */
    BAND_RECV_DOWN, /* the result is coming from the parent into tmp */
    BAND_SEND_DOWN, /* the result goes to the children; waiting for those sends */
    BAND_DONE,
};

int crmpi_comm_band_start(const crmpi_comm_xchg_set_t *set, uint64_t *words, int nwords,
                          crmpi_comm_band_t *band)
{
    memset(band, 0, sizeof(*band));
    band->set = *set;
    band->words = words;
    band->nwords = nwords;
    band->mask = 1;
    band->tmp = malloc((size_t)nwords * sizeof(uint64_t));
    if (!band->tmp) {
        crmpi_log_error("comm: out of memory for a %d-word exchange", nwords);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    band->state = BAND_REDUCE;
    return CRMPI_OK;
}

/* Post a receive of nwords from member `index` into tmp. */
static int band_post_recv(crmpi_comm_band_t *band, int index)
{
    return crmpi_pml_irecv(band->tmp, (size_t)band->nwords * sizeof(uint64_t), MPI_BYTE,
                           xchg_peer(&band->set, index), band->set.tag, band->set.comm->pml,
                           &band->recv);
}

static int band_post_send(crmpi_comm_band_t *band, int index, crmpi_request_t **req_out)
{
    return crmpi_pml_isend(band->words, (size_t)band->nwords * sizeof(uint64_t), MPI_BYTE,
                           xchg_peer(&band->set, index), band->set.tag, CRMPI_PML_SEND_STANDARD,
                           band->set.comm->pml, req_out);
}

/* Never blocks: returns 0 at the first request that is not complete yet. */
int crmpi_comm_band_test(crmpi_comm_band_t *band, int *rc_out)
{
    int me = band->set.me, size = band->set.size, low = xchg_lowbit(me, size);
    int rc = CRMPI_OK;

    for (;;) {
        if (band->recv) {
            if (!band->recv->complete)
                return 0;
            rc = xchg_finish(band->recv);
            band->recv = NULL;
            if (rc != CRMPI_OK)
                goto done;
            if (band->state == BAND_REDUCE) {
                for (int w = 0; w < band->nwords; w++)
                    band->words[w] &= band->tmp[w];
                band->mask <<= 1;
            } else {
                band->have_result = true;
            }
        }
        if (band->send_up) {
            /* Our contribution must leave before the result overwrites words. */
            if (!band->send_up->complete)
                return 0;
            rc = xchg_finish(band->send_up);
            band->send_up = NULL;
            if (rc != CRMPI_OK)
                goto done;
        }
        switch (band->state) {
        case BAND_REDUCE:
            if (band->mask < low && me + band->mask < size) {
                rc = band_post_recv(band, me + band->mask);
            } else if (band->mask < low && band->mask < size) {
                band->mask <<= 1; /* no child at this distance */
            } else if (me != 0) {
                rc = band_post_send(band, me - low, &band->send_up);
                if (rc == CRMPI_OK) {
                    band->state = BAND_RECV_DOWN;
                    rc = band_post_recv(band, me - low);
                }
            } else if (band->set.bridge != MPI_COMM_NULL) {
                /* The other set's bits into tmp; ours leave from words, which the AND
                 * overwrites only once they are out. */
                band->state = BAND_BRIDGE;
                rc = crmpi_pml_isend(band->words, (size_t)band->nwords * sizeof(uint64_t), MPI_BYTE,
                                     band->set.bridge_peer, band->set.bridge_tag,
                                     CRMPI_PML_SEND_STANDARD, band->set.bridge->pml, &band->across);
                if (rc == CRMPI_OK)
                    rc = crmpi_pml_irecv(band->tmp, (size_t)band->nwords * sizeof(uint64_t),
                                         MPI_BYTE, band->set.bridge_peer, band->set.bridge_tag,
                                         band->set.bridge->pml, &band->recv);
            } else {
                band->state = BAND_SEND_DOWN;
            }
            break;
        case BAND_BRIDGE:
            if (!band->across->complete)
                return 0;
            rc = xchg_finish(band->across);
            band->across = NULL;
            if (rc == CRMPI_OK) {
                for (int w = 0; w < band->nwords; w++)
                    band->words[w] &= band->tmp[w];
                band->have_result = false;
                band->state = BAND_SEND_DOWN;
            }
            break;
        case BAND_RECV_DOWN:
            if (band->have_result) {
                memcpy(band->words, band->tmp, (size_t)band->nwords * sizeof(uint64_t));
                band->state = BAND_SEND_DOWN;
            }
            break;
        case BAND_SEND_DOWN:
            if (!band->sent_down) {
                band->sent_down = true;
                for (int m = 1; m < low && me + m < size && rc == CRMPI_OK; m <<= 1) {
                    rc = band_post_send(band, me + m, &band->down[band->num_down]);
                    band->num_down += rc == CRMPI_OK;
                }
            }
            while (rc == CRMPI_OK && band->num_down > 0) {
                crmpi_request_t *req = band->down[band->num_down - 1];
                if (!req->complete)
                    return 0;
                rc = xchg_finish(req);
                band->num_down--;
            }
            if (rc == CRMPI_OK)
                band->state = BAND_DONE;
            break;
        case BAND_DONE: goto done;
        }
        if (rc != CRMPI_OK)
            goto done;
    }

done:
    if (rc != CRMPI_OK) {
        crmpi_log_error("comm: an exchange among %d ranks of %s failed (%s)", size,
                        band->set.comm->name, crmpi_strerror(rc));
        /* Requests still out are left to complete on their own: free them when done. */
        if (band->recv)
            crmpi_pml_request_free(band->recv);
        if (band->send_up)
            crmpi_pml_request_free(band->send_up);
        if (band->across)
            crmpi_pml_request_free(band->across);
        for (int i = 0; i < band->num_down; i++)
            crmpi_pml_request_free(band->down[i]);
    }
    free(band->tmp);
    band->tmp = NULL;
    *rc_out = rc;
    return 1;
}

int crmpi_comm_xchg_allreduce_band(const crmpi_comm_xchg_set_t *set, uint64_t *words, int nwords)
{
    crmpi_comm_band_t band;
    int rc = crmpi_comm_band_start(set, words, nwords, &band);

    if (rc != CRMPI_OK)
        return rc;
    while (!crmpi_comm_band_test(&band, &rc))
        crmpi_pml_wait_turn();
    return rc;
}

int crmpi_comm_xchg_allgatherv(const crmpi_comm_xchg_set_t *set, const void *block,
                               const size_t sizes[], const size_t displs[], void *recv)
{
    int n = set->size, me = set->me, rc = CRMPI_OK, posted = 0;
    crmpi_request_t **reqs = calloc(2 * (size_t)n, sizeof(*reqs));

    if (!reqs) {
        crmpi_log_error("comm: out of memory for an exchange among %d ranks", n);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    memcpy((char *)recv + displs[me], block, sizes[me]);
    for (int i = 0; i < n && rc == CRMPI_OK; i++) {
        if (i == me)
            continue;
        rc = crmpi_pml_irecv((char *)recv + displs[i], sizes[i], MPI_BYTE, xchg_peer(set, i),
                             set->tag, set->comm->pml, &reqs[posted]);
        if (rc == CRMPI_OK)
            posted++;
    }
    for (int i = 0; i < n && rc == CRMPI_OK; i++) {
        if (i == me)
            continue;
        rc = crmpi_pml_isend(block, sizes[me], MPI_BYTE, xchg_peer(set, i), set->tag,
                             CRMPI_PML_SEND_STANDARD, set->comm->pml, &reqs[posted]);
        if (rc == CRMPI_OK)
            posted++;
    }
    for (int i = 0; i < posted; i++) {
        /* After a failure to post, what was posted still completes: the peers do their
         * part, and the error is returned after. */
        crmpi_pml_wait(reqs[i]);
        int done_rc = xchg_finish(reqs[i]);
        if (rc == CRMPI_OK)
            rc = done_rc;
    }
    free(reqs);
    if (rc != CRMPI_OK)
        crmpi_log_error("comm: an exchange among %d ranks of %s failed (%s)", n, set->comm->name,
                        crmpi_strerror(rc));
    return rc;
}

/* Wait for the posted requests, and return the first error (every one is waited for:
 * the peers do their part whatever happened here). */
static int xchg_wait_all(crmpi_request_t **reqs, int posted, int rc)
{
    for (int i = 0; i < posted; i++) {
        crmpi_pml_wait(reqs[i]);
        int done_rc = xchg_finish(reqs[i]);
        if (rc == CRMPI_OK)
            rc = done_rc;
    }
    return rc;
}

int crmpi_comm_xchg_bcast(const crmpi_comm_xchg_set_t *set, void *buf, size_t nbytes)
{
    int n = set->size, rc = CRMPI_OK, posted = 0;
    crmpi_request_t **reqs;

    if (n == 1)
        return CRMPI_OK;
    if (set->me != 0) {
        crmpi_request_t *req;

        rc = crmpi_pml_irecv(buf, nbytes, MPI_BYTE, xchg_peer(set, 0), set->tag, set->comm->pml,
                             &req);
        if (rc == CRMPI_OK)
            rc = xchg_wait_all(&req, 1, rc);
        goto out;
    }
    reqs = calloc((size_t)n, sizeof(*reqs));
    if (!reqs) {
        crmpi_log_error("comm: out of memory for an exchange among %d ranks", n);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    for (int i = 1; i < n && rc == CRMPI_OK; i++) {
        rc = crmpi_pml_isend(buf, nbytes, MPI_BYTE, xchg_peer(set, i), set->tag,
                             CRMPI_PML_SEND_STANDARD, set->comm->pml, &reqs[posted]);
        posted += rc == CRMPI_OK;
    }
    rc = xchg_wait_all(reqs, posted, rc);
    free(reqs);

out:
    if (rc != CRMPI_OK)
        crmpi_log_error("comm: a broadcast among %d ranks of %s failed (%s)", n, set->comm->name,
                        crmpi_strerror(rc));
    return rc;
}

int crmpi_comm_xchg_swap(const crmpi_comm_xchg_set_t *set, const void *mine, size_t mine_bytes,
                         void *theirs, size_t theirs_bytes)
{
    if (set->me == 0) {
        crmpi_request_t *reqs[2];
        int posted = 0;
        int rc = crmpi_pml_isend(mine, mine_bytes, MPI_BYTE, set->bridge_peer, set->bridge_tag,
                                 CRMPI_PML_SEND_STANDARD, set->bridge->pml, &reqs[0]);

        posted += rc == CRMPI_OK;
        if (rc == CRMPI_OK) {
            rc = crmpi_pml_irecv(theirs, theirs_bytes, MPI_BYTE, set->bridge_peer, set->bridge_tag,
                                 set->bridge->pml, &reqs[1]);
            posted += rc == CRMPI_OK;
        }
        rc = xchg_wait_all(reqs, posted, rc);
        if (rc != CRMPI_OK) {
            crmpi_log_error("comm: the leaders' exchange over %s failed (%s)", set->bridge->name,
                            crmpi_strerror(rc));
            /* The members wait for the leader's broadcast: they get it, with whatever
             * arrived, and the error is this leader's to raise. */
            crmpi_comm_xchg_bcast(set, theirs, theirs_bytes);
            return rc;
        }
    }
    return crmpi_comm_xchg_bcast(set, theirs, theirs_bytes);
}

int crmpi_comm_xchg_allgather(const crmpi_comm_xchg_set_t *set, const void *block,
                              size_t block_size, void *recv)
{
    size_t *sizes = malloc(2 * (size_t)set->size * sizeof(size_t));
    int rc;

    if (!sizes) {
        crmpi_log_error("comm: out of memory for an exchange among %d ranks", set->size);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    for (int i = 0; i < set->size; i++) {
        sizes[i] = block_size;
        sizes[set->size + i] = (size_t)i * block_size;
    }
    rc = crmpi_comm_xchg_allgatherv(set, block, sizes, sizes + set->size, recv);
    free(sizes);
    return rc;
}
