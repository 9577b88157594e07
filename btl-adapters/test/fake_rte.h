/*
 * fake_rte.h: the rank-side rte (runtime/rte.h) for BTL unit tests, without mpirun: the
 * test forks its "ranks", and modex data and fences go through files in a directory.
 *
 * Usage, in each forked child: crmpi_btl_test_rte_setup(dir, rank, size, node_of_rank), then the
 * component's init, crmpi_rte_fence(1), add_procs, ... Link fake_rte.c instead of rte.c.
 */
#ifndef CRMPI_FAKE_RTE_H
#define CRMPI_FAKE_RTE_H

#include <stdint.h>

#include "rte.h"

/**
 * Become rank `rank` of a job of `size` ranks whose modex lives in `dir` (which must exist
 * and be empty at the start). node_of_rank: `size` node ids (NULL: all on node 0).
 * Fills *job_out for the component's init.
 */
void crmpi_btl_test_rte_setup(const char *dir, uint32_t rank, uint32_t size,
                              const uint32_t *node_of_rank, crmpi_rte_job_info_t *job_out);

#endif /* CRMPI_FAKE_RTE_H */
