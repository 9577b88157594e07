/*
 * mpirun_map.h: where each rank runs and what it is bound to.
 *
 * The local launcher runs every rank on this node, so --host and --hostfile may only name
 * this node (its hostname, "localhost" or a loopback address); their slot counts still
 * count. The multi-node launch backend lifts that restriction.
 */
#ifndef MPIRUN_MAP_H
#define MPIRUN_MAP_H

#include <hwloc.h>
#include <stdint.h>

#include "mpirun_options.h"
#include "plm.h"

typedef struct mpirun_map {
    int np;                           /* ranks in the job */
    crmpi_plm_placement_t *placement; /* np entries (node_id is 0 with the local launcher) */
    char **nodes;                     /* node names, num_nodes entries */
    uint32_t num_nodes;               /* entries in nodes */
} mpirun_map_t;

/**
 * Decide the rank count, each rank's node and binding.
 * @param local_name  this node's hostname
 * @return CRMPI_OK (map_out filled; free with mpirun_map_free) or CRMPI_ERR_BAD_PARAM with
 *         a one-line reason in err_out.
 */
int mpirun_map_compute(const mpirun_options_t *opts, hwloc_topology_t topo, const char *local_name,
                       mpirun_map_t *map_out, char *err_out, size_t err_len);

void mpirun_map_free(mpirun_map_t *map);

#endif /* MPIRUN_MAP_H */
