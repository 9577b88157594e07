/*
 * agent_crs_none.c: the agent without a checkpointer (configure found no libcriu): a
 * checkpoint then fails at the dump, saying so, and the job goes on (agent_crs.h).
 */
#include "agent_crs.h"

void agent_crs_init(crmpi_snapc_local_t *local)
{
    local->dump = NULL;
}

void agent_crs_finalize(void)
{
}
