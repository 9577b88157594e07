/*
 * agent_crs.c: the agent's checkpointer through the crs framework (agent_crs.h).
 */
#include "config.h"

#include <stdio.h>

#include "agent_crs.h"
#include "crmpi_status.h"
#include "crs.h"

static const crs_ops_t *agent_crs_ops;

static int agent_crs_dump(pid_t init_pid, const char *dir, crmpi_snapc_dump_result_t *result)
{
    crs_ckpt_result_t ckpt = {0};
    crs_ckpt_opts_t opts = {
        .init_pid = init_pid,
        .images_dir = dir,
        .terminate = 0, /* --term ends the job after the commit, not here */
        .errbuf = result->error,
        .errbuf_len = sizeof(result->error),
    };
    int rc = agent_crs_ops->checkpoint(&opts, &ckpt);

    if (rc == CRMPI_OK) {
        result->image_bytes = ckpt.image_bytes;
        result->dump_seconds = ckpt.dump_seconds;
    }
    return rc;
}

void agent_crs_init(crmpi_snapc_local_t *local)
{
    const crmpi_component_t *component;

    if (crmpi_framework_open(&crmpi_crs_framework) != CRMPI_OK)
        return;
    if (crmpi_framework_select_one(&crmpi_crs_framework, &component) != CRMPI_OK) {
        crmpi_framework_close(&crmpi_crs_framework);
        return; /* the component said why */
    }
    agent_crs_ops = component->ops;
    local->dump = agent_crs_dump;
}

void agent_crs_finalize(void)
{
    if (agent_crs_ops)
        crmpi_framework_close(&crmpi_crs_framework);
    agent_crs_ops = NULL;
}
