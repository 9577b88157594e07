/*
 * mpirun_map.h: on which host each rank runs and what it is bound to.
 *
 * Hosts come from --host and --hostfile (one host named twice is one host with the slots
 * of both); without any, the job runs on this node. With the local launcher every host
 * must be this node (its hostname, "localhost" or a loopback address), and the slots of
 * all of them count for it. Binding is computed on this node's topology: a job's nodes are
 * assumed alike, as Open MPI's mpirun assumes by default.
 */
#ifndef MPIRUN_MAP_H
#define MPIRUN_MAP_H

#include <hwloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mpirun_options.h"
#include "plm.h"

typedef struct mpirun_map {
    int np;                           /* ranks in the job */
    crmpi_plm_placement_t *placement; /* np entries */
    char **nodes;                     /* node names, num_nodes entries */
    int *node_slots;                  /* each node's slots (0: no host was given) */
    uint32_t num_nodes;               /* entries in nodes and node_slots */
    bool remote;                      /* some node is not this one */
} mpirun_map_t;

/**
 * Decide the rank count, each rank's node and binding.
 * @param local_name      this node's hostname
 * @param remote_allowed  the launcher starts agents on other nodes (CRMPI_PLM_FLAG_REMOTE)
 * @return CRMPI_OK (map_out filled; free with mpirun_map_free) or CRMPI_ERR_BAD_PARAM with
 *         a one-line reason in err_out.
 */
int mpirun_map_compute(const mpirun_options_t *opts, hwloc_topology_t topo, const char *local_name,
                       bool remote_allowed, mpirun_map_t *map_out, char *err_out, size_t err_len);

void mpirun_map_free(mpirun_map_t *map);

/** `host` names this node: "localhost", a loopback address, or its (short) hostname. */
bool mpirun_map_host_is_local(const char *host, const char *local_name);

/** Some host of the command line is another node (so the job needs the ompi launcher). */
bool mpirun_map_names_remote(const mpirun_options_t *opts, const char *local_name);

/**
 * A rank's binding in Open MPI's words and picture, into `buf`:
 *   "socket 0[core 1[hwt 0]]: [./B]", or "" when the rank is not bound.
 */
void mpirun_map_binding_text(hwloc_topology_t topo, const char *cpuset, char *buf, size_t len);

/** --display-map: the job's map on `out`, laid out as Open MPI's. */
void mpirun_map_display(const mpirun_map_t *map, hwloc_topology_t topo, uint64_t jobid, FILE *out);

#endif /* MPIRUN_MAP_H */
