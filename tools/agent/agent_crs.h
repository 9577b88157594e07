/*
 * agent_crs.h: the agent's checkpointer (crs.h), when the build has one. agent_crs.c uses
 * the crs framework (CRIU); agent_crs_none.c stands in when configure found no libcriu,
 * so the agent's code is the same either way and a checkpoint says why it cannot run.
 */
#ifndef AGENT_CRS_H
#define AGENT_CRS_H

#include "snapc_local.h"

/** Open the checkpointer and set local->dump; without one (or when CRIU cannot run here),
 *  leave it NULL and log why at crs_base_verbose 10. */
void agent_crs_init(crmpi_snapc_local_t *local);
void agent_crs_finalize(void);

#endif /* AGENT_CRS_H */
