/*
 * comm_hw.c: the hardware resources of MPI_Comm_split_type (MPI-4.0 section 7.4.2), from
 * hwloc: which object of each level (package, NUMA node, caches, core, hardware thread) holds
 * the CPUs this process is bound to. Built as its own convenience library, the one part of
 * libmpi that includes hwloc's header.
 *
 * The topology is loaded at each call, never kept: a restart may bring the process to
 * other hardware, and MPI_Comm_split_type is not a call programs make often.
 */
#include <hwloc.h>

#include "comm_hw.h"

const char *const crmpi_comm_hw_level_names[CRMPI_COMM_HW_LEVELS] = {
    "Package", "NUMANode", "L3Cache", "L2Cache", "L1Cache", "Core", "PU"};

static const hwloc_obj_type_t hw_types[CRMPI_COMM_HW_LEVELS] = {
    HWLOC_OBJ_PACKAGE, HWLOC_OBJ_NUMANODE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE,
    HWLOC_OBJ_L1CACHE, HWLOC_OBJ_CORE,     HWLOC_OBJ_PU};

int crmpi_comm_hw_objects(int objects[CRMPI_COMM_HW_LEVELS])
{
    hwloc_topology_t topo;
    hwloc_bitmap_t bound;
    int rc = -1;

    for (int l = 0; l < CRMPI_COMM_HW_LEVELS; l++)
        objects[l] = -1;
    if (hwloc_topology_init(&topo) != 0)
        return -1;
    bound = hwloc_bitmap_alloc();
    if (bound && hwloc_topology_load(topo) == 0 &&
        hwloc_get_cpubind(topo, bound, HWLOC_CPUBIND_PROCESS) == 0) {
        for (int l = 0; l < CRMPI_COMM_HW_LEVELS; l++) {
            int n = hwloc_get_nbobjs_by_type(topo, hw_types[l]);

            /* The object whose CPUs include every CPU of the binding, if there is one:
             * NUMA nodes are not in the tree of CPUs, so the objects are searched. */
            for (int i = 0; i < n; i++) {
                hwloc_obj_t obj = hwloc_get_obj_by_type(topo, hw_types[l], (unsigned)i);

                if (obj && obj->cpuset && hwloc_bitmap_isincluded(bound, obj->cpuset)) {
                    objects[l] = i;
                    break;
                }
            }
        }
        rc = 0;
    }
    hwloc_bitmap_free(bound);
    hwloc_topology_destroy(topo);
    return rc;
}
