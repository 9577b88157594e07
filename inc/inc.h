/*
 * inc.h: interlayer notification, the one place that knows every layer of libmpi below
 * the MPI calls and runs the checkpoint phases across them in order (docs/design.md, "The
 * checkpoint, phase by phase"). It only calls the layers' hooks; it owns no transport
 * state. Layers above it (the MPI layer) register a hook of their own.
 *
 *   snapc app coordinator (C/R thread)
 *        |  crmpi_inc_pre_checkpoint / crmpi_inc_continue / crmpi_inc_restart
 *   inc  ------> crcp (release held sends)
 *        ------> pml  (per-peer sequence state after a restart)
 *        ------> bml  (per-peer BTL choice again after a restart: new locality)
 *        ------> bml  release / rebuild the modules that are not checkpoint-friendly
 *        ------> rte  (re-modex through the agent: publish, fence, lookup)
 *        ------> registered hooks of the layers above (crmpi_inc_register)
 *        ------> registered vetoes of the layers above (crmpi_inc_register_veto): may
 *                this process be checkpointed at all now?
 *
 * Order of the phases (the checkpoint has drained every channel before they run):
 *   pre-checkpoint: every BTL that is not checkpoint-friendly under CRIU releases what it
 *                   holds (fds, shared segments, threads), keeping each peer's identity;
 *                   afterwards the process holds its stdio, the control socket and what
 *                   friendly BTLs keep (a test lists /proc/self/fd and /proc/self/task)
 *   continue:       the same processes go on: released BTLs rebuild against the same
 *                   peers (new modex, one fence through the agents), held sends go
 *   restart:        the image runs elsewhere: every BTL forgets its stale resources, the
 *                   job facts and MCA parameters are the restart's, the BML selects BTLs
 *                   again for the new locality, the modex runs again, the PML forgets its
 *                   per-peer sequence numbers (safe: everything was drained), held sends go
 *
 * Every phase runs on the C/R thread with the library lock held. A failure in
 * pre-checkpoint is undone by continue (the checkpoint is aborted, the job goes on).
 */
#ifndef CRMPI_INC_H
#define CRMPI_INC_H

#include "rte.h"

/* The phases a layer above INC may follow. */
typedef enum {
    CRMPI_INC_PHASE_PRE_CHECKPOINT, /* before the dump, after INC's own work */
    CRMPI_INC_PHASE_CONTINUE,       /* the same processes go on, transports rebuilt */
    CRMPI_INC_PHASE_RESTART,        /* restored elsewhere: new job facts and parameters */
} crmpi_inc_phase_t;

/** A layer's hook: called on the C/R thread with the library lock held, after INC's own
 *  work of the phase succeeded. @return CRMPI_OK, or an error (the phase fails with it). */
typedef int (*crmpi_inc_hook_fn_t)(crmpi_inc_phase_t phase);

/**
 * Have `hook` called at every phase, in registration order (the MPI layer registers one at
 * MPI_Init, to take the restart's parameters). At most a few hooks; not thread-safe.
 * @return CRMPI_OK, CRMPI_ERR_OUT_OF_RESOURCE (too many hooks)
 */
int crmpi_inc_register(crmpi_inc_hook_fn_t hook);

/** A layer's objection to a checkpoint now: NULL when it has none, or why (one line, in
 *  storage that outlives the call). Called on the C/R thread with the library lock held. */
typedef const char *(*crmpi_inc_veto_fn_t)(void);

/** Have `veto` asked before every checkpoint (the MPI layer registers one at MPI_Init: a
 *  live shared-memory window). At most a few; not thread-safe.
 *  @return CRMPI_OK, CRMPI_ERR_OUT_OF_RESOURCE (too many vetoes) */
int crmpi_inc_register_veto(crmpi_inc_veto_fn_t veto);

/** Before a checkpoint's first step: NULL when this process may be checkpointed, or the
 *  first registered veto's reason (the checkpoint is then refused: nothing to undo). */
const char *crmpi_inc_refusal(void);

/** Release what CRIU cannot checkpoint. @return CRMPI_OK, or an error (then continue). */
int crmpi_inc_pre_checkpoint(void);

/** Rebuild what pre-checkpoint released; same job, same peers. */
int crmpi_inc_continue(void);

/**
 * The process was restored from an image by a new agent.
 * @param job       the restart's job facts (same size and rank; new jobid, nodes, local
 *                  ranks); the rte takes them over (node_of_rank included)
 * @param mca_env   the restart's "CRMPI_MCA_name=value" entries, NULL-terminated: they
 *                  replace the image's (the environment inside the image is the old one)
 */
int crmpi_inc_restart(const crmpi_rte_job_info_t *job, char *const *mca_env);

#endif /* CRMPI_INC_H */
