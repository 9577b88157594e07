/*
 * agent_crs_none.c: the agent without a checkpointer (configure found no libcriu): a
 * checkpoint then fails at the dump, saying so, and the job goes on (agent_crs.h).
 */
#include <stdio.h>

#include "agent_crs.h"
#include "crmpi_status.h"

void agent_crs_init(crmpi_snapc_local_t *local)
{
    local->dump = NULL;
    local->flatten = NULL;
    local->app_dump = NULL; /* crs pheap is part of the crs framework, built with CRIU */
}

void agent_crs_finalize(void)
{
}

int agent_crs_restore(const char *images_dir, const char *const *parents, const char *cpuset,
                      const char *keep_log_as, crmpi_agent_ns_child_t *child_out,
                      char ***rank_entries_out, char *err, size_t err_len)
{
    (void)images_dir;
    (void)parents;
    (void)cpuset;
    (void)keep_log_as;
    (void)child_out;
    (void)rank_entries_out;
    snprintf(err, err_len, "this agent was built without a checkpointer (CRIU)");
    return CRMPI_ERR_NOT_SUPPORTED;
}
