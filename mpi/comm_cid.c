/*
 * comm_cid.c: context ids of new communicators. The PML tells communicators apart by the
 * context id in every message header, so an id must be
 *   - the same on every member of the new communicator, and
 *   - in use by no other live communicator of any member (a member's messages on one
 *     would be matched on the other).
 * Disjoint communicators may share an id (MPI_Comm_split gives every color the same one):
 * no process belongs to both, so no message can be mistaken.
 *
 * Agreement: the members take part in rounds over windows of CID_WINDOW ids, starting at
 * 0. In a round each member contributes the bitmap of the window's ids free here; an
 * AND-allreduce (comm_xchg.c) gives the ids free on every member, and everyone takes the
 * lowest of them, the same one (the `count` lowest, when it wants more than one). A
 * window with too few free on all sends everyone to the next window. One round is the
 * usual case: ids are given back at MPI_Comm_free and reused.
 *
 * Intercommunicators: the processes of both groups must agree on one id, though each
 * group talks only among itself and through its leader. The allreduce of each group is
 * bridged to the other's (comm_xchg.c): the two leaders swap their group's AND and both
 * take the AND of the two before handing it down, so every process of both groups ends
 * each round with the same bitmap, picks the same ids and moves on to the same window.
 * An intercommunicator takes two ids: its own, and its local group's communicator's (the
 * two local communicators are disjoint, so both groups may use the same one).
 *
 * Several agreements may run at once in one process (threads, MPI_Comm_idup): each
 * reserves the ids it offered until its round ends, so two of them never offer, and thus
 * never pick, the same id. A concurrent round finds those ids taken and may move on to the
 * next window; nothing waits for anything.
 */
#include <stdlib.h>
#include <string.h>

#include "comm_internal.h"
#include "crmpi_status.h"
#include "log.h"

/* Ids per round: 1024 bits, 128 bytes per message. */
#define CID_WINDOW_WORDS 16
#define CID_WINDOW       (CID_WINDOW_WORDS * 64)

/* Ids in use in this process (bit set), and ids offered by rounds in progress. */
static uint64_t *cid_used;
static uint64_t *cid_reserved;
static size_t cid_num_words; /* words in both bitmaps */

struct crmpi_comm_cid_op {
    crmpi_comm_xchg_set_t set;          /* the members */
    int count;                          /* ids wanted */
    uint32_t base;                      /* first id of the current window */
    uint64_t bits[CID_WINDOW_WORDS];    /* offered by this member; then the AND */
    uint64_t offered[CID_WINDOW_WORDS]; /* what this member reserved in the window */
    crmpi_comm_band_t band;             /* the round in progress */
};

/* Both bitmaps cover at least `words` words; WORLD's and SELF's ids are taken. */
static int cid_grow(size_t words)
{
    uint64_t *used, *reserved;

    if (words <= cid_num_words)
        return CRMPI_OK;
    used = realloc(cid_used, words * sizeof(uint64_t));
    if (!used)
        goto err_no_memory;
    cid_used = used;
    reserved = realloc(cid_reserved, words * sizeof(uint64_t));
    if (!reserved)
        goto err_no_memory;
    cid_reserved = reserved;
    memset(cid_used + cid_num_words, 0, (words - cid_num_words) * sizeof(uint64_t));
    memset(cid_reserved + cid_num_words, 0, (words - cid_num_words) * sizeof(uint64_t));
    if (cid_num_words == 0)
        cid_used[0] = (1u << CRMPI_CONTEXT_ID_WORLD) | (1u << CRMPI_CONTEXT_ID_SELF);
    cid_num_words = words;
    return CRMPI_OK;

err_no_memory:
    crmpi_log_error("comm: out of memory for %zu context ids", words * 64);
    return CRMPI_ERR_OUT_OF_RESOURCE;
}

/* Offer every id of the window that is free here, and reserve them. */
static int cid_round_start(crmpi_comm_cid_op_t *op)
{
    size_t first = op->base / 64;
    int rc = cid_grow(first + CID_WINDOW_WORDS);

    if (rc != CRMPI_OK)
        return rc;
    for (int w = 0; w < CID_WINDOW_WORDS; w++) {
        op->offered[w] = ~(cid_used[first + w] | cid_reserved[first + w]);
        cid_reserved[first + w] |= op->offered[w];
        op->bits[w] = op->offered[w];
    }
    rc = crmpi_comm_band_start(&op->set, op->bits, CID_WINDOW_WORDS, &op->band);
    if (rc != CRMPI_OK) {
        for (int w = 0; w < CID_WINDOW_WORDS; w++)
            cid_reserved[first + w] &= ~op->offered[w];
    }
    return rc;
}

bool crmpi_comm_cid_pick(const uint64_t *bits, int nwords, uint32_t base, int count,
                         uint32_t cids_out[])
{
    uint32_t found[CRMPI_COMM_CID_MAX];
    int n = 0;

    for (int w = 0; w < nwords && n < count; w++) {
        uint64_t word = bits[w];

        while (word && n < count) {
            int bit = __builtin_ctzll(word);
            found[n++] = base + (uint32_t)(w * 64 + bit);
            word &= word - 1;
        }
    }
    if (n < count)
        return false;
    memcpy(cids_out, found, (size_t)count * sizeof(uint32_t));
    return true;
}

int crmpi_comm_cid_start(const crmpi_comm_xchg_set_t *set, int count, crmpi_comm_cid_op_t **op_out)
{
    crmpi_comm_cid_op_t *op = calloc(1, sizeof(*op));
    int rc;

    if (!op) {
        crmpi_log_error("comm: out of memory for a context id agreement");
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    op->set = *set;
    op->count = count;
    rc = cid_round_start(op);
    if (rc != CRMPI_OK) {
        free(op);
        return rc;
    }
    *op_out = op;
    return CRMPI_OK;
}

int crmpi_comm_cid_test(crmpi_comm_cid_op_t *op, uint32_t cids_out[], int *rc_out)
{
    int rc;

    for (;;) {
        size_t first = op->base / 64;

        if (!crmpi_comm_band_test(&op->band, &rc))
            return 0;
        for (int w = 0; w < CID_WINDOW_WORDS; w++)
            cid_reserved[first + w] &= ~op->offered[w];
        if (rc != CRMPI_OK)
            break;
        if (crmpi_comm_cid_pick(op->bits, CID_WINDOW_WORDS, op->base, op->count, cids_out)) {
            for (int i = 0; i < op->count; i++)
                cid_used[cids_out[i] / 64] |= 1ull << (cids_out[i] % 64);
            free(op);
            *rc_out = CRMPI_OK;
            return 1;
        }
        /* Too few free on every member here: all of them move on together, since all
         * got the same AND. */
        op->base += CID_WINDOW;
        rc = cid_round_start(op);
        if (rc != CRMPI_OK)
            break;
    }
    free(op);
    *rc_out = rc;
    return 1;
}

int crmpi_comm_cid_agree(const crmpi_comm_xchg_set_t *set, int count, uint32_t cids_out[])
{
    crmpi_comm_cid_op_t *op;
    int rc = crmpi_comm_cid_start(set, count, &op);

    if (rc != CRMPI_OK)
        return rc;
    while (!crmpi_comm_cid_test(op, cids_out, &rc))
        crmpi_pml_wait_turn();
    return rc;
}

void crmpi_comm_cid_release(uint32_t cid)
{
    if (cid / 64 < cid_num_words)
        cid_used[cid / 64] &= ~(1ull << (cid % 64));
}
