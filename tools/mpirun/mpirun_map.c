/*
 * mpirun_map.c: rank placement and binding (see mpirun_map.h).
 *
 * Mapping assigns rank i, round-robin, to the i-th object of the --map-by type (cores for
 * slot, core and node mapping). Binding then picks, for that rank, an object of the
 * --bind-to type: the one that contains the mapped object when binding is coarser, or the
 * next core inside it when binding is finer (map-by socket, bind-to core), as Open MPI does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "mpirun_map.h"

static int mpirun_map_is_local(const char *host, const char *local_name)
{
    size_t short_len = strcspn(local_name, ".");
    return strcmp(host, "localhost") == 0 || strcmp(host, "127.0.0.1") == 0 ||
           strcmp(host, "::1") == 0 || strcmp(host, local_name) == 0 ||
           (strlen(host) == short_len && strncmp(host, local_name, short_len) == 0);
}

static hwloc_obj_type_t mpirun_map_obj_type(mpirun_map_by_t map_by)
{
    switch (map_by) {
    case MPIRUN_MAP_BY_SOCKET: return HWLOC_OBJ_PACKAGE;
    case MPIRUN_MAP_BY_NUMA: return HWLOC_OBJ_NUMANODE;
    default: return HWLOC_OBJ_CORE;
    }
}

static hwloc_obj_type_t mpirun_bind_obj_type(mpirun_bind_to_t bind_to)
{
    switch (bind_to) {
    case MPIRUN_BIND_TO_SOCKET: return HWLOC_OBJ_PACKAGE;
    case MPIRUN_BIND_TO_NUMA: return HWLOC_OBJ_NUMANODE;
    default: return HWLOC_OBJ_CORE;
    }
}

/* The object rank `rank` is bound to, given the object it is mapped to. */
static hwloc_obj_t mpirun_map_bind_target(hwloc_topology_t topo, hwloc_obj_t mapped,
                                          hwloc_obj_type_t bind_type, int round)
{
    /* Finer binding: the round-th object of bind_type inside the mapped object. */
    int inside = hwloc_get_nbobjs_inside_cpuset_by_type(topo, mapped->cpuset, bind_type);
    if (inside > 1 || (inside == 1 && mapped->type != bind_type)) {
        hwloc_obj_t obj =
            hwloc_get_obj_inside_cpuset_by_type(topo, mapped->cpuset, bind_type, round % inside);
        if (obj && !hwloc_bitmap_isequal(obj->cpuset, mapped->cpuset)) {
            return obj;
        }
    }
    /* Same or coarser: the first object of bind_type that covers the mapped one. */
    int count = hwloc_get_nbobjs_by_type(topo, bind_type);
    for (int i = 0; i < count; i++) {
        hwloc_obj_t obj = hwloc_get_obj_by_type(topo, bind_type, (unsigned)i);
        if (hwloc_bitmap_intersects(obj->cpuset, mapped->cpuset)) {
            return obj;
        }
    }
    return mapped;
}

int mpirun_map_compute(const mpirun_options_t *opts, hwloc_topology_t topo, const char *local_name,
                       mpirun_map_t *map_out, char *err_out, size_t err_len)
{
    int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    long slots = 0;
    mpirun_map_t map;

    if (ncores <= 0) {
        ncores = 1;
    }
    for (size_t h = 0; h < opts->num_hosts; h++) {
        if (!mpirun_map_is_local(opts->hosts[h].name, local_name)) {
            return mpirun_options_fail(err_out, err_len,
                                       "host '%s' is not this node (%s); the local launcher starts "
                                       "ranks only here",
                                       opts->hosts[h].name, local_name);
        }
        slots += opts->hosts[h].slots ? opts->hosts[h].slots : ncores;
    }
    memset(&map, 0, sizeof(map));
    map.np = opts->np;
    if (opts->num_hosts == 0) {
        /* No host list: this node, one slot per core for a default rank count, and any
         * -np allowed (a laptop or a 2-core VM runs -np 4 as MPICH does). */
        if (map.np == 0) {
            map.np = ncores;
        }
    } else {
        if (map.np == 0) {
            map.np = (int)slots;
        }
        if (map.np > slots && !opts->oversubscribe) {
            return mpirun_options_fail(err_out, err_len,
                                       "%d ranks requested but the hosts given have only %ld slots "
                                       "(add --oversubscribe to allow it)",
                                       map.np, slots);
        }
    }
    hwloc_obj_type_t map_type = mpirun_map_obj_type(opts->map_by);
    hwloc_obj_type_t bind_type = mpirun_bind_obj_type(opts->bind_to);
    int nmap = hwloc_get_nbobjs_by_type(topo, map_type);
    if (opts->bind_to != MPIRUN_BIND_TO_NONE) {
        int nbind = hwloc_get_nbobjs_by_type(topo, bind_type);
        if (nmap <= 0 || nbind <= 0) {
            return mpirun_options_fail(err_out, err_len,
                                       "this node has no %s objects to map or bind to",
                                       hwloc_obj_type_string(nmap <= 0 ? map_type : bind_type));
        }
        if (opts->bind_to == MPIRUN_BIND_TO_CORE && map.np > ncores && !opts->oversubscribe) {
            return mpirun_options_fail(err_out, err_len,
                                       "--bind-to core: %d ranks but this node has %d cores (use "
                                       "--bind-to none, or --oversubscribe to share cores)",
                                       map.np, ncores);
        }
    }
    map.placement = calloc((size_t)map.np, sizeof(*map.placement));
    map.nodes = calloc(1, sizeof(char *));
    if (!map.placement || !map.nodes || !(map.nodes[0] = strdup(local_name))) {
        goto err_free_map;
    }
    map.num_nodes = 1;
    for (int rank = 0; rank < map.np; rank++) {
        crmpi_plm_placement_t *place = &map.placement[rank];
        place->node_id = 0;
        if (opts->bind_to == MPIRUN_BIND_TO_NONE) {
            continue;
        }
        hwloc_obj_t mapped = hwloc_get_obj_by_type(topo, map_type, (unsigned)(rank % nmap));
        hwloc_obj_t target = mpirun_map_bind_target(topo, mapped, bind_type, rank / nmap);
        if (hwloc_bitmap_list_asprintf(&place->cpuset, target->cpuset) < 0) {
            goto err_free_map;
        }
    }
    *map_out = map;
    return CRMPI_OK;

err_free_map:
    mpirun_map_free(&map);
    return mpirun_options_fail(err_out, err_len, "out of memory while mapping ranks");
}

void mpirun_map_free(mpirun_map_t *map)
{
    for (int rank = 0; map->placement && rank < map->np; rank++) {
        free(map->placement[rank].cpuset);
    }
    free(map->placement);
    for (uint32_t n = 0; map->nodes && n < map->num_nodes; n++) {
        free(map->nodes[n]);
    }
    free(map->nodes);
    memset(map, 0, sizeof(*map));
}
