/*
 * osc.h: one-sided communication (MPI-3.1 chapter 11), the contract between the window
 * calls of mpi/osc/ and the protocol that moves their data. Component "pt2pt", after Open
 * MPI's: every RMA operation is an active message carried by the PML, so the checkpoint's
 * bookmark exchange drains it like any other message (docs/design.md, "The checkpoint,
 * phase by phase").
 *
 *   MPI_Win_create/Put/Accumulate/Win_fence/Win_lock...  (mpi/osc/)  -- arguments, the
 *        |   crmpi_osc_*                                    MPI_Win object, its name,
 *        |                                                  attributes, error handler
 *   osc pt2pt: origin side                                -- packs the origin data and
 *        |      (requests, replies, epochs)                  the target type's runs into
 *        |                                                   one message per operation
 *        |   crmpi_pml_isend/irecv/improbe on the window's own (hidden) communicator
 *   pml ob1  ------------------------------------------->  osc pt2pt: target side, run by
 *                                                          the progress engine: applies
 *                                                          messages in arrival order,
 *                                                          replies, grants locks
 *
 * Lifecycle: crmpi_osc_win_create (collective over the window's communicator: exchanges
 * every rank's size and displacement unit) -> operations and synchronisation, any number ->
 * crmpi_osc_win_destroy (collective: waits until no rank has a message for it in flight).
 * The first create registers the target side's progress function, the last destroy
 * unregisters it.
 *
 * Messages (over the window's communicator, which nothing else uses): requests to the
 * target on OSC_TAG_AM (one message each: header, the target type's runs, the data);
 * replies to the origin on OSC_TAG_REPLY, in the order the target received the requests,
 * which is the order the origin posted their receives (the PML does not overtake), so a
 * reply needs no id; lock grants on OSC_TAG_LOCK; MPI_Win_post's notices on OSC_TAG_POST.
 * Completion at the target is a message too: a flush, unlock or complete request that the
 * target answers once it has applied everything that came before it from that origin.
 * Nothing lives outside process memory and PML messages, so a checkpoint taken in the
 * middle of an epoch drains the requests and replies in flight and the epoch continues
 * after it, in the same process or a restored one.
 *
 * Progress: the target side runs inside crmpi_progress(), that is while the target is in
 * any MPI call (or in a checkpoint's drain on the C/R thread). A target that computes
 * without calling MPI applies nothing and grants no lock until its next call: passive
 * target operations to it wait that long (there is no asynchronous progress thread).
 *
 * Atomicity: the target applies one message at a time under the library lock, so every
 * accumulate (and get_accumulate, fetch_and_op, compare_and_swap) is atomic per element
 * against every other accumulate to the same window, and those of one origin are applied
 * in the order it issued them (MPI-3.1 section 11.7.1, accumulate_ordering rar,raw,war,waw).
 *
 * Errors: CRMPI_ERR_* (negative); the MPI layer turns them into the class it raises.
 *
 * Threading: everything is called with the library lock held; calls that wait (fence,
 * lock, unlock, flush, start, complete, wait, destroy) drop it between progress turns
 * (crmpi_pml_wait_turn).
 */
#ifndef CRMPI_OSC_H
#define CRMPI_OSC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll.h"
#include "mpi.h"
#include "pml.h"

typedef struct crmpi_osc_win crmpi_osc_win_t;

/* What crmpi_osc_win_create needs to know of a window. */
typedef struct crmpi_osc_win_params {
    crmpi_pml_comm_t *pml;   /* the window's own communicator (the MPI layer's dup) */
    crmpi_coll_comm_t *coll; /* its collectives (fence and free are barriers on it) */
    int rank;                /* this process's rank in it */
    int size;                /* its number of ranks */
    void *base;              /* this process's window memory (unused when dynamic) */
    size_t nbytes;           /* its size in bytes */
    MPI_Aint disp_unit;      /* bytes per unit of a target displacement (> 0; an MPI_Aint
                                since MPI_Win_create_c, MPI-4.0 section 12.2.1) */
    bool dynamic;            /* MPI_Win_create_dynamic: displacements are addresses in
                                the memory attached with crmpi_osc_attach */
} crmpi_osc_win_params_t;

/** A window: exchanges sizes and units among its ranks (collective).
 *  @return CRMPI_OK with *win_out, CRMPI_ERR_OUT_OF_RESOURCE, or the PML's error */
int crmpi_osc_win_create(const crmpi_osc_win_params_t *params, crmpi_osc_win_t **win_out);
/** Free a window (collective: a barrier, so no rank frees it while another's messages to it
 *  are in flight; MPI-3.1 section 11.2.5 requires every epoch to be closed before). */
int crmpi_osc_win_destroy(crmpi_osc_win_t *win);

/** Size in bytes and displacement unit of rank `target`'s window (as it created it). */
void crmpi_osc_win_target(const crmpi_osc_win_t *win, int target, size_t *nbytes_out,
                          MPI_Aint *disp_unit_out);

/** Dynamic windows: memory the other ranks may access from now on / no longer. @return
 *  CRMPI_OK, CRMPI_ERR_OUT_OF_RESOURCE, CRMPI_ERR_NOT_FOUND (detach of unattached memory) */
int crmpi_osc_attach(crmpi_osc_win_t *win, void *base, size_t nbytes);
int crmpi_osc_detach(crmpi_osc_win_t *win, const void *base);

/*
 * Operations. Types must be committed; the MPI layer checked ranks, counts and that the
 * type signatures match. `target` may be MPI_PROC_NULL (nothing happens). The origin
 * buffer may be reused as soon as a call returns (its data are copied into the message),
 * except the result buffers of get and the get_accumulate family, which receive the reply
 * later: they are complete at the end of the epoch, at a flush, or when *req_out (when
 * req_out is not NULL: the request forms) completes. `basic` is the predefined type the
 * origin and target types of an accumulate are made of; `op` a predefined op, MPI_REPLACE
 * or MPI_NO_OP (MPI-3.1 section 11.3.4), never a user op.
 * Each returns CRMPI_OK, CRMPI_ERR_OUT_OF_RESOURCE, CRMPI_ERR_NOT_SUPPORTED (basic is no
 * predefined type the op applies to), or the PML's error.
 */
int crmpi_osc_put(crmpi_osc_win_t *win, const void *origin, size_t origin_count,
                  MPI_Datatype origin_type, int target, MPI_Aint target_disp, size_t target_count,
                  MPI_Datatype target_type, crmpi_request_t **req_out);
int crmpi_osc_get(crmpi_osc_win_t *win, void *origin, size_t origin_count, MPI_Datatype origin_type,
                  int target, MPI_Aint target_disp, size_t target_count, MPI_Datatype target_type,
                  crmpi_request_t **req_out);
int crmpi_osc_accumulate(crmpi_osc_win_t *win, const void *origin, size_t origin_count,
                         MPI_Datatype origin_type, void *result, size_t result_count,
                         MPI_Datatype result_type, int target, MPI_Aint target_disp,
                         size_t target_count, MPI_Datatype target_type, MPI_Datatype basic,
                         const crmpi_coll_op_t *op, bool fetch, crmpi_request_t **req_out);
/** Compare_and_swap: one element of the predefined `type`. */
int crmpi_osc_compare_and_swap(crmpi_osc_win_t *win, const void *origin, const void *compare,
                               void *result, MPI_Datatype type, int target, MPI_Aint target_disp);

/*
 * Synchronisation (MPI-3.1 section 11.5). The MPI layer checks the epochs' order; these
 * only do the work. `ranks` are ranks of the window's communicator.
 */
/** Complete every operation this rank issued (at origin and target), then a barrier. */
int crmpi_osc_fence(crmpi_osc_win_t *win);
/** MPI_LOCK_EXCLUSIVE or MPI_LOCK_SHARED on `target`: waits until granted. */
int crmpi_osc_lock(crmpi_osc_win_t *win, int lock_type, int target);
/** Complete the operations to target, release its lock. */
int crmpi_osc_unlock(crmpi_osc_win_t *win, int target);
/** Complete the operations to `target` (MPI_PROC_NULL: to every rank), at both ends. */
int crmpi_osc_flush(crmpi_osc_win_t *win, int target);
/** Post: the origins in `ranks` may start (no wait). */
int crmpi_osc_post(crmpi_osc_win_t *win, const int *ranks, int nranks);
/** Start: waits until each target in `ranks` posted. */
int crmpi_osc_start(crmpi_osc_win_t *win, const int *ranks, int nranks);
/** Complete: operations to the started targets are complete at the origin; tells them. */
int crmpi_osc_complete(crmpi_osc_win_t *win);
/** Wait (block) or test (*done_out) until every posted origin completed. */
int crmpi_osc_wait(crmpi_osc_win_t *win, bool block, bool *done_out);

#endif /* CRMPI_OSC_H */
