/*
 * bml.h: the BTL multiplexer: for every peer, which BTL module carries its fragments. It
 * is the PML's only way to the BTLs, and belongs to the PML's layer.
 *
 *   pml ob1 --- crmpi_bml_peers[world rank] -> {module, endpoint} --- btl self | sm | tcp
 *
 * Choice per peer: among the modules that reach it, the highest exclusivity (self for this
 * rank, sm for the node's ranks, tcp for the rest), then the highest priority. One module
 * per peer: fragments to a peer then leave in order, which the PML's sequence numbers
 * check. (Striping one peer's rendezvous fragments over several modules is not done.)
 * The selection list `--mca btl self,sm` / `^tcp` decides which components are opened.
 *
 * Lifecycle:
 *   crmpi_bml_init (MPI_Init) -> sends and progress -> crmpi_bml_finalize (MPI_Finalize)
 *   checkpoint: crmpi_bml_cr_release (before the dump) -> crmpi_bml_cr_rebuild (after it,
 *               the same processes go on); a restart finalizes and inits again instead,
 *               because the selection list and the locality may have changed.
 * Threading: library lock held, like every BTL slot.
 */
#ifndef CRMPI_BML_H
#define CRMPI_BML_H

#include <stdbool.h>
#include <stdint.h>

#include "btl.h"

/* How this rank reaches one peer. */
typedef struct crmpi_bml_peer {
    crmpi_btl_module_t *module;     /* the chosen module */
    crmpi_btl_endpoint_t *endpoint; /* the module's endpoint for the peer */
} crmpi_bml_peer_t;

/* Indexed by rank in MPI_COMM_WORLD; set by crmpi_bml_init. */
extern crmpi_bml_peer_t *crmpi_bml_peers;

/**
 * Open the allowed BTL components for the rte's job (crmpi_rte_job), create their modules,
 * exchange modex data (one collecting fence; none for a singleton, which has no peers), and
 * choose a module for every rank of the job.
 * @return CRMPI_OK; CRMPI_ERR_UNREACH when some rank cannot be reached (logged once with
 *         both ranks and the BTLs tried; *unreach_msg_out then holds that text, malloc'ed,
 *         for the job's abort reason); other errors logged.
 */
int crmpi_bml_init(char **unreach_msg_out);

/** Progress every module in use; returns the events. */
int crmpi_bml_progress(void);

/** Finalize every module. */
int crmpi_bml_finalize(void);

/**
 * Before a checkpoint's dump, every channel drained: finalize each module that is not
 * CRMPI_BTL_FLAG_CKPT_FRIENDLY (it holds fds, shared segments or threads CRIU cannot
 * take); a friendly module stays as it is, with its peers. Afterwards no peer served by a
 * released module may be sent to until crmpi_bml_cr_rebuild.
 * @return CRMPI_OK (finalize cannot fail in a way the checkpoint could act on)
 */
int crmpi_bml_cr_release(void);

/**
 * After the dump, in the same processes: open again the components whose modules
 * crmpi_bml_cr_release finalized (selection, modex, fence, as crmpi_bml_init), and give
 * each peer they served a module again. Collective over the job, like crmpi_bml_init.
 * @return as crmpi_bml_init
 */
int crmpi_bml_cr_rebuild(char **unreach_msg_out);

#endif /* CRMPI_BML_H */
