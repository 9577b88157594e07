/*
 * fake_rte.h: the rank-side rte (runtime/rte.h) for BTL unit tests, without mpirun: the
 * test forks its "ranks", and modex data and fences go through files in a directory.
 *
 * Usage: crmpi_btl_test_run_ranks() forks the ranks over a new directory; in each,
 * crmpi_btl_test_rte_setup(dir, rank, size, node_of_rank), then the component's init,
 * crmpi_rte_fence(1), add_procs, ... Link fake_rte.c instead of rte.c.
 */
#ifndef CRMPI_FAKE_RTE_H
#define CRMPI_FAKE_RTE_H

#include <stdint.h>

#include "datatype.h"
#include "rte.h"

/* A byte type built by hand, for tests whose payloads are plain contiguous bytes (the
 * datatype engine is not initialised in them). */
extern const struct crmpi_datatype_s crmpi_btl_test_byte_type;

/* A rank that exits with this skipped its scenario (said why on stderr). */
#define CRMPI_BTL_TEST_EXIT_SKIP 77

/* What each forked rank runs; `dir` is the job's modex directory. */
typedef void (*crmpi_btl_test_scenario_fn_t)(uint32_t rank, uint32_t size, const char *dir,
                                             void *arg);

/**
 * Run `scenario` in `size` forked ranks over a new modex directory under $TMPDIR (or /tmp)
 * named after `name`, and wait for every one. Each rank dies with the test process, gets the
 * default handlers of the crash signals (cmocka's would jump into the parent's runner) and
 * SIGALRM after timeout_s seconds (a deadlock); once one fails, the others are killed (they
 * could wait for it in a fence forever). The directory is removed at the end.
 * @param skipped_out  NULL, or the ranks that exited with CRMPI_BTL_TEST_EXIT_SKIP
 * @return the ranks that failed (a signal or a non-zero exit other than the skip code);
 *         -1 when the directory or a fork could not be made
 */
int crmpi_btl_test_run_ranks(const char *name, uint32_t size, unsigned timeout_s,
                             crmpi_btl_test_scenario_fn_t scenario, void *arg,
                             uint32_t *skipped_out);

/**
 * Become rank `rank` of a job of `size` ranks whose modex lives in `dir` (which must exist
 * and be empty at the start). node_of_rank: `size` node ids (NULL: all on node 0).
 * Fills *job_out for the component's init.
 */
void crmpi_btl_test_rte_setup(const char *dir, uint32_t rank, uint32_t size,
                              const uint32_t *node_of_rank, crmpi_rte_job_info_t *job_out);

#endif /* CRMPI_FAKE_RTE_H */
