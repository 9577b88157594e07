/*
 * agent_crs.h: the agent's checkpointer (crs.h), when the build has one. agent_crs.c uses
 * the crs framework (CRIU); agent_crs_none.c stands in when configure found no libcriu,
 * so the agent's code is the same either way and a checkpoint says why it cannot run.
 */
#ifndef AGENT_CRS_H
#define AGENT_CRS_H

#include "agent_ns.h"
#include "snapc_local.h"

/** Open the checkpointer and set local->dump; without one (or when CRIU cannot run here),
 *  leave it NULL and log why at crs_base_verbose 10. */
void agent_crs_init(crmpi_snapc_local_t *local);
void agent_crs_finalize(void);

/**
 * Restore the rank from `images_dir` (an incremental image: with `parents`, the images it
 * is a delta of, newest first, NULL-terminated) as the agent's child, with new stdio pipes and a
 * new control socket in place of the old ones (stdin reads end-of-file, as at launch), its threads'
 * affinity remapped onto `cpuset` (NULL: as recorded); after a failure, CRIU's log is kept as
 * `keep_log_as` (NULL: beside the images, which go).
 * @param child_out      init_pid, ctl_fd, out_fd, err_fd (rank_pid unknown: 0)
 * @param rank_entries_out  what the rank must set on itself, as "NAME=text" entries for its
 *                          restart message (mempolicy.h; NULL-terminated, malloc'ed) or
 *                          NULL; set on success
 * @return CRMPI_OK, CRMPI_ERR_NOT_SUPPORTED (no checkpointer), or the CRS's error, with
 *         `err` saying why
 */
int agent_crs_restore(const char *images_dir, const char *const *parents, const char *cpuset,
                      const char *keep_log_as, crmpi_agent_ns_child_t *child_out,
                      char ***rank_entries_out, char *err, size_t err_len);

#endif /* AGENT_CRS_H */
