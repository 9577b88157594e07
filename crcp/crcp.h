/*
 * crcp.h: the checkpoint/restart coordination protocol, component "bkmrk" (docs/design.md,
 * "The checkpoint, phase by phase", step 2): the bookmark exchange and the drain that empty every
 * channel before a checkpoint, without knowing which interconnect carries them.
 *
 *   snapc app coordinator (C/R thread, library lock held)
 *        |  crmpi_crcp_bookmarks / crmpi_crcp_drain / crmpi_crcp_release
 *   crcp bkmrk                      -- counts, the drain loop, statistics
 *        |  crmpi_pml_cr_* (pml.h)
 *   pml ob1                         -- per-peer sequence numbers, unexpected queue
 *        |
 *   bml -> btl                      (never seen by crcp)
 *
 * Bookmarks are the PML's per-peer sequence numbers. Every MPI message (and every message
 * the collectives and communicator code send, which all go through the PML) takes the
 * next sequence number to its destination, and a receiver advances its expected number
 * exactly when a message reaches matching, in order. So, with new sends held:
 *   sent(j -> i)    = j's next send sequence number towards i
 *   arrived(i <- j) = i's next expected sequence number from j
 * and no second counter has to be kept on the fast path: C/R costs nothing while no
 * checkpoint runs. The exchange goes through the coordinators (snapc.h), each rank
 * sending only the peers it has sent to, so its cost grows with the peers a rank talks
 * to, and no rank has to know who might have sent to it.
 *
 * Drain: until arrived(i <- j) == sent(j -> i) for every j, progress. Rendezvous
 * messages that reached matching but whose receive is not posted (the unexpected queue,
 * matched probes, messages for communicators not created yet) are pulled whole into the
 * PML's memory, so that their senders complete; receives already matched finish. The
 * drained messages stay exactly where the PML keeps unexpected messages, so later
 * receives, probes and matched probes see them with MPI's matching and ordering rules
 * unchanged, and receives the application posted before the checkpoint keep their
 * priority.
 *
 * The one corner MPI users can observe: a synchronous send whose receive was not posted
 * completes once it is drained, before the application posts the receive.
 *
 * Lifecycle (all with the library lock held, on the C/R thread):
 *   crmpi_crcp_bookmarks -> [exchange through snapc] -> crmpi_crcp_drain
 *   -> ... dump ... -> crmpi_crcp_release (continue, restart or abort)
 */
#ifndef CRMPI_CRCP_H
#define CRMPI_CRCP_H

#include <stddef.h>
#include <stdint.h>

#include "snapc.h"

/* What one checkpoint's protocol did in this rank, for the snapshot and bench/. */
typedef struct crmpi_crcp_stats {
    uint64_t bookmark_ns;      /* from hold to bookmarks sent */
    uint64_t drain_ns;         /* from the expected counts to drained */
    uint32_t peers_sent;       /* peers this rank has sent to */
    uint32_t peers_expected;   /* peers that have sent to this rank */
    uint64_t messages_drained; /* messages that arrived during the drain */
    uint64_t bytes_pulled;     /* rendezvous data pulled without a posted receive */
} crmpi_crcp_stats_t;

/**
 * Hold new sends and report this rank's bookmarks: one entry per peer it has sent to.
 * @param marks_out  malloc'ed array (caller frees), *count_out entries; set on CRMPI_OK
 */
int crmpi_crcp_bookmarks(crmpi_snapc_bookmark_t **marks_out, size_t *count_out);

/* Asked between drain turns: nonzero stops the drain (the coordinator aborted). */
typedef int (*crmpi_crcp_interrupt_fn_t)(void *arg);

/**
 * Drain until every expected message has arrived and every rendezvous in flight here has
 * finished moving its data, or until `timeout_ms` passes (negative: no limit), or until
 * `interrupt_fn` (may be NULL) says stop.
 * @param expected  one entry per peer that has sent to this rank (from the coordinator)
 * @return CRMPI_OK (drained), CRMPI_ERR_TIMEOUT, CRMPI_ERR_CKPT_ABORTED (interrupted),
 *         CRMPI_ERR_PROTO (more arrived from a peer than it says it sent)
 */
int crmpi_crcp_drain(const crmpi_snapc_bookmark_t *expected, size_t count, int timeout_ms,
                     crmpi_crcp_interrupt_fn_t interrupt_fn, void *interrupt_arg);

/** Let held sends go (continue, restart or abort). */
void crmpi_crcp_release(void);

/** Statistics of the last checkpoint. */
const crmpi_crcp_stats_t *crmpi_crcp_last_stats(void);

#endif /* CRMPI_CRCP_H */
