/*
 * mpirun_map.c: rank placement and binding (see mpirun_map.h).
 *
 * Placement first decides each rank's host, as Open MPI does:
 *   slot, core, socket, numa  fill each host's slots in order, then (--oversubscribe) one
 *                             more rank per host, round-robin
 *   node                      one rank per host, round-robin, skipping full hosts
 *   ppr:N:OBJECT, -N N        N ranks per OBJECT of each host, host after host
 * Binding then works inside each host, with the rank's index among that host's ranks: the
 * i-th rank is mapped to the i-th object of the --map-by type (cores for slot, node and
 * ppr:N:node; the socket or NUMA node of ppr:N:socket|numa, N ranks each), and bound to an
 * object of the --bind-to type: the one that contains the mapped object when binding is
 * coarser, or the next one inside it when binding is finer (map-by socket, bind-to core).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "log.h"
#include "mpirun_map.h"

bool mpirun_map_host_is_local(const char *host, const char *local_name)
{
    size_t short_len = strcspn(local_name, ".");
    return strcmp(host, "localhost") == 0 || strcmp(host, "127.0.0.1") == 0 ||
           strcmp(host, "::1") == 0 || strcmp(host, local_name) == 0 ||
           (strlen(host) == short_len && strncmp(host, local_name, short_len) == 0);
}

bool mpirun_map_names_remote(const mpirun_options_t *opts, const char *local_name)
{
    for (size_t h = 0; h < opts->num_hosts; h++) {
        if (!mpirun_map_host_is_local(opts->hosts[h].name, local_name))
            return true;
    }
    return false;
}

static hwloc_obj_type_t mpirun_map_obj_type(const mpirun_options_t *opts)
{
    switch (opts->map_by) {
    case MPIRUN_MAP_BY_SOCKET: return HWLOC_OBJ_PACKAGE;
    case MPIRUN_MAP_BY_NUMA: return HWLOC_OBJ_NUMANODE;
    case MPIRUN_MAP_BY_PPR:
        return opts->ppr_object == MPIRUN_PPR_SOCKET ? HWLOC_OBJ_PACKAGE
               : opts->ppr_object == MPIRUN_PPR_NUMA ? HWLOC_OBJ_NUMANODE
                                                     : HWLOC_OBJ_CORE;
    default: return HWLOC_OBJ_CORE;
    }
}

static hwloc_obj_type_t mpirun_bind_obj_type(mpirun_bind_to_t bind_to)
{
    switch (bind_to) {
    case MPIRUN_BIND_TO_SOCKET: return HWLOC_OBJ_PACKAGE;
    case MPIRUN_BIND_TO_NUMA: return HWLOC_OBJ_NUMANODE;
    case MPIRUN_BIND_TO_HWTHREAD: return HWLOC_OBJ_PU;
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

/* The job's hosts: each name once, with the slots of every mention (0 slots: the cores of
 * a node). With the local launcher, one node: this one. */
static int mpirun_map_nodes(const mpirun_options_t *opts, const char *local_name,
                            bool remote_allowed, int ncores, mpirun_map_t *map, char *err_out,
                            size_t err_len)
{
    size_t count = opts->num_hosts ? opts->num_hosts : 1;

    map->nodes = calloc(count, sizeof(*map->nodes));
    map->node_slots = calloc(count, sizeof(*map->node_slots));
    if (!map->nodes || !map->node_slots)
        return mpirun_options_fail(err_out, err_len, "out of memory while mapping ranks");
    for (size_t h = 0; h < opts->num_hosts; h++) {
        const mpirun_host_t *host = &opts->hosts[h];
        bool local = mpirun_map_host_is_local(host->name, local_name);
        const char *name = local ? local_name : host->name;
        uint32_t node = 0;

        if (!local && !remote_allowed)
            return mpirun_options_fail(err_out, err_len,
                                       "host '%s' is not this node (%s); the local launcher "
                                       "starts ranks only here (--launcher ompi starts them on "
                                       "other nodes)",
                                       host->name, local_name);
        while (node < map->num_nodes && strcmp(map->nodes[node], name) != 0)
            node++;
        if (node == map->num_nodes) {
            map->nodes[node] = strdup(name);
            if (!map->nodes[node])
                return mpirun_options_fail(err_out, err_len, "out of memory while mapping ranks");
            map->num_nodes++;
        }
        map->node_slots[node] += host->slots ? host->slots : ncores;
        map->remote = map->remote || !local;
    }
    if (map->num_nodes == 0) {
        map->nodes[0] = strdup(local_name);
        if (!map->nodes[0])
            return mpirun_options_fail(err_out, err_len, "out of memory while mapping ranks");
        map->node_slots[0] = ncores; /* what is shown; no limit without hosts */
        map->num_nodes = 1;
    }
    return CRMPI_OK;
}

/* How many ranks ppr:N:OBJECT puts on one host. */
static int mpirun_map_ppr_per_node(const mpirun_options_t *opts, hwloc_topology_t topo)
{
    int objects = 1;

    if (opts->ppr_object != MPIRUN_PPR_NODE) {
        objects = hwloc_get_nbobjs_by_type(topo, mpirun_map_obj_type(opts));
        if (objects <= 0)
            objects = 1;
    }
    return opts->ppr_count * objects;
}

/*
 * A restart of a sequence held only on the nodes' own storage: each rank goes first to its
 * own node, then to its partner's, when the hosts name it and it has a free slot, so that
 * a lost node's ranks land where their partner copies are.
 */
static void mpirun_map_near_copies(const mpirun_options_t *opts, mpirun_map_t *map, int *used,
                                   bool *placed)
{
    for (int pass = 0; pass < 2; pass++) {
        for (int rank = 0; rank < map->np; rank++) {
            const mpirun_copy_nodes_t *copies = &opts->restore_copies[rank];
            const char *want = pass == 0 ? copies->host : copies->partner;
            uint32_t node = 0;

            if (placed[rank] || !want)
                continue;
            while (node < map->num_nodes && strcmp(map->nodes[node], want) != 0)
                node++;
            if (node == map->num_nodes || used[node] >= map->node_slots[node])
                continue;
            used[node]++;
            placed[rank] = true;
            map->placement[rank].node_id = node;
            if (pass == 1)
                crmpi_log_info("rank %d placed on %s, which holds its partner copy (it ran on "
                               "%s)",
                               rank, want, copies->host ? copies->host : "another node");
        }
    }
}

/* Each rank's node, and the rank count when it was not given. */
static int mpirun_map_place(const mpirun_options_t *opts, hwloc_topology_t topo, mpirun_map_t *map,
                            char *err_out, size_t err_len)
{
    const bool hosts_given = opts->num_hosts > 0;
    const uint32_t num_nodes = map->num_nodes;
    long total_slots = 0;
    int *used = calloc(num_nodes, sizeof(int));
    bool *placed = NULL; /* ranks placed near their copies */
    int rc = CRMPI_OK;

    if (!used)
        return mpirun_options_fail(err_out, err_len, "out of memory while mapping ranks");
    for (uint32_t n = 0; n < num_nodes; n++)
        total_slots += map->node_slots[n];
    if (opts->map_by == MPIRUN_MAP_BY_PPR) {
        int per_node = mpirun_map_ppr_per_node(opts, topo);
        char text[64];

        mpirun_options_map_by_text(opts, text, sizeof(text));
        if (map->np == 0)
            map->np = per_node * (int)num_nodes;
        if ((long)map->np > (long)per_node * num_nodes) {
            rc = mpirun_options_fail(err_out, err_len,
                                     "--map-by %s places at most %ld ranks on %u host%s; -np %d "
                                     "asks for more",
                                     text, (long)per_node * num_nodes, num_nodes,
                                     num_nodes == 1 ? "" : "s", map->np);
            goto out;
        }
        for (uint32_t n = 0; hosts_given && !opts->oversubscribe && n < num_nodes; n++) {
            int on_node = map->np - (int)n * per_node;

            on_node = on_node < 0 ? 0 : on_node > per_node ? per_node : on_node;
            if (on_node > map->node_slots[n]) {
                rc = mpirun_options_fail(err_out, err_len,
                                         "--map-by %s puts %d ranks on host %s, which has %d "
                                         "slots (add --oversubscribe to allow it)",
                                         text, on_node, map->nodes[n], map->node_slots[n]);
                goto out;
            }
        }
    } else {
        if (map->np == 0)
            map->np = (int)total_slots;
        if (hosts_given && map->np > total_slots && !opts->oversubscribe) {
            rc = mpirun_options_fail(err_out, err_len,
                                     "%d ranks requested but the hosts given have only %ld slots "
                                     "(add --oversubscribe to allow it)",
                                     map->np, total_slots);
            goto out;
        }
    }
    map->placement = calloc((size_t)map->np, sizeof(*map->placement));
    if (!map->placement) {
        rc = mpirun_options_fail(err_out, err_len, "out of memory while mapping ranks");
        goto out;
    }
    /* By slot (and core, socket, numa: the same hosts), a restart goes where the copies are. */
    if (opts->restore_copies && hosts_given && num_nodes > 1 &&
        opts->map_by != MPIRUN_MAP_BY_NODE && opts->map_by != MPIRUN_MAP_BY_PPR) {
        placed = calloc((size_t)map->np, sizeof(*placed));
        if (!placed) {
            rc = mpirun_options_fail(err_out, err_len, "out of memory while mapping ranks");
            goto out;
        }
        mpirun_map_near_copies(opts, map, used, placed);
    }
    uint32_t next = 0; /* round-robin position */
    for (int rank = 0; rank < map->np; rank++) {
        uint32_t node = 0;

        if (placed && placed[rank])
            continue;
        if (opts->map_by == MPIRUN_MAP_BY_PPR) {
            node = (uint32_t)(rank / mpirun_map_ppr_per_node(opts, topo));
        } else if (!hosts_given || num_nodes == 1) {
            node = 0;
        } else if (opts->map_by == MPIRUN_MAP_BY_NODE) {
            /* The next host with a free slot; every host once full (oversubscribed). */
            uint32_t tries = 0;

            while (tries < num_nodes && used[next] >= map->node_slots[next]) {
                next = (next + 1) % num_nodes;
                tries++;
            }
            node = next;
            next = (next + 1) % num_nodes;
        } else {
            /* The first host with a free slot; once all are full, round-robin. */
            while (node < num_nodes && used[node] >= map->node_slots[node])
                node++;
            if (node == num_nodes) {
                node = next;
                next = (next + 1) % num_nodes;
            }
        }
        used[node]++;
        map->placement[rank].node_id = node;
    }
out:
    free(placed);
    free(used);
    return rc;
}

/* Each rank's cpuset, from its index among the ranks of its node. */
static int mpirun_map_bind(const mpirun_options_t *opts, hwloc_topology_t topo, mpirun_map_t *map,
                           char *err_out, size_t err_len)
{
    hwloc_obj_type_t map_type = mpirun_map_obj_type(opts);
    hwloc_obj_type_t bind_type = mpirun_bind_obj_type(opts->bind_to);
    int nmap = hwloc_get_nbobjs_by_type(topo, map_type);
    int nbind = hwloc_get_nbobjs_by_type(topo, bind_type);
    int *on_node = calloc(map->num_nodes, sizeof(int));
    int rc = CRMPI_OK;

    if (!on_node)
        return mpirun_options_fail(err_out, err_len, "out of memory while mapping ranks");
    if (nmap <= 0 || nbind <= 0) {
        rc = mpirun_options_fail(err_out, err_len, "this node has no %s objects to map or bind to",
                                 hwloc_obj_type_string(nmap <= 0 ? map_type : bind_type));
        goto out;
    }
    for (int rank = 0; rank < map->np; rank++)
        on_node[map->placement[rank].node_id]++;
    for (uint32_t n = 0; n < map->num_nodes && !opts->oversubscribe; n++) {
        bool per_core =
            opts->bind_to == MPIRUN_BIND_TO_CORE || opts->bind_to == MPIRUN_BIND_TO_HWTHREAD;

        if (per_core && on_node[n] > nbind) {
            rc = mpirun_options_fail(err_out, err_len,
                                     "--bind-to %s: %d ranks on %s but a node has %d %ss (use "
                                     "--bind-to none, or --oversubscribe to share them)",
                                     mpirun_options_bind_to_text(opts->bind_to), on_node[n],
                                     map->nodes[n], nbind,
                                     opts->bind_to == MPIRUN_BIND_TO_CORE ? "core" : "hwthread");
            goto out;
        }
    }
    memset(on_node, 0, map->num_nodes * sizeof(int));
    for (int rank = 0; rank < map->np; rank++) {
        crmpi_plm_placement_t *place = &map->placement[rank];
        int local = on_node[place->node_id]++;
        int index = local % nmap, round = local / nmap;

        if (opts->map_by == MPIRUN_MAP_BY_PPR && opts->ppr_object != MPIRUN_PPR_NODE) {
            /* N ranks on each socket (NUMA node) in turn. */
            index = (local / opts->ppr_count) % nmap;
            round = local % opts->ppr_count;
        }
        hwloc_obj_t mapped = hwloc_get_obj_by_type(topo, map_type, (unsigned)index);
        hwloc_obj_t target = mpirun_map_bind_target(topo, mapped, bind_type, round);
        if (hwloc_bitmap_list_asprintf(&place->cpuset, target->cpuset) < 0) {
            rc = mpirun_options_fail(err_out, err_len, "out of memory while mapping ranks");
            goto out;
        }
    }
out:
    free(on_node);
    return rc;
}

int mpirun_map_compute(const mpirun_options_t *opts, hwloc_topology_t topo, const char *local_name,
                       bool remote_allowed, mpirun_map_t *map_out, char *err_out, size_t err_len)
{
    int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    mpirun_map_t map;
    int rc;

    if (ncores <= 0)
        ncores = 1;
    memset(&map, 0, sizeof(map));
    /* Without hosts, any -np is allowed (a laptop or a 2-core VM runs -np 4 as MPICH does);
     * the default is one rank per core. */
    map.np = opts->np;
    rc = mpirun_map_nodes(opts, local_name, remote_allowed, ncores, &map, err_out, err_len);
    if (rc == CRMPI_OK)
        rc = mpirun_map_place(opts, topo, &map, err_out, err_len);
    if (rc == CRMPI_OK && opts->bind_to != MPIRUN_BIND_TO_NONE)
        rc = mpirun_map_bind(opts, topo, &map, err_out, err_len);
    if (rc != CRMPI_OK) {
        mpirun_map_free(&map);
        return rc;
    }
    *map_out = map;
    return CRMPI_OK;
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
    free(map->node_slots);
    memset(map, 0, sizeof(*map));
}

void mpirun_map_binding_text(hwloc_topology_t topo, const char *cpuset, char *buf, size_t len)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    int npackages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    size_t used = 0, pic_used = 0;
    char picture[1024];

    buf[0] = '\0';
    if (!cpuset || !set || hwloc_bitmap_list_sscanf(set, cpuset) < 0) {
        hwloc_bitmap_free(set);
        return;
    }
    picture[0] = '\0';
#define MPIRUN_MAP_APPEND(b, u, l, ...)                                                            \
    do {                                                                                           \
        if ((u) < (l))                                                                             \
            (u) += (size_t)snprintf((b) + (u), (l) - (u), __VA_ARGS__);                            \
    } while (0)
    for (int p = 0; p < (npackages > 0 ? npackages : 1); p++) {
        hwloc_obj_t package = npackages > 0
                                  ? hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, (unsigned)p)
                                  : hwloc_get_root_obj(topo);
        int ncores = hwloc_get_nbobjs_inside_cpuset_by_type(topo, package->cpuset, HWLOC_OBJ_CORE);

        MPIRUN_MAP_APPEND(picture, pic_used, sizeof(picture), "[");
        for (int c = 0; c < ncores; c++) {
            hwloc_obj_t core = hwloc_get_obj_inside_cpuset_by_type(topo, package->cpuset,
                                                                   HWLOC_OBJ_CORE, (unsigned)c);
            int npus = hwloc_get_nbobjs_inside_cpuset_by_type(topo, core->cpuset, HWLOC_OBJ_PU);
            int first = -1, last = -1;

            MPIRUN_MAP_APPEND(picture, pic_used, sizeof(picture), "%s", c ? "/" : "");
            for (int h = 0; h < npus; h++) {
                hwloc_obj_t pu = hwloc_get_obj_inside_cpuset_by_type(topo, core->cpuset,
                                                                     HWLOC_OBJ_PU, (unsigned)h);
                bool in = hwloc_bitmap_isset(set, pu->os_index);

                MPIRUN_MAP_APPEND(picture, pic_used, sizeof(picture), "%c", in ? 'B' : '.');
                if (in) {
                    first = first < 0 ? h : first;
                    last = h;
                }
            }
            if (first < 0)
                continue;
            MPIRUN_MAP_APPEND(buf, used, len, "%ssocket %d[core %d[hwt %d", used ? ", " : "", p, c,
                              first);
            if (last > first)
                MPIRUN_MAP_APPEND(buf, used, len, "-%d", last);
            MPIRUN_MAP_APPEND(buf, used, len, "]]");
        }
        MPIRUN_MAP_APPEND(picture, pic_used, sizeof(picture), "]");
    }
    MPIRUN_MAP_APPEND(buf, used, len, ": %s", picture);
#undef MPIRUN_MAP_APPEND
    hwloc_bitmap_free(set);
}

void mpirun_map_display(const mpirun_map_t *map, hwloc_topology_t topo, uint64_t jobid, FILE *out)
{
    long total_slots = 0;

    for (uint32_t n = 0; n < map->num_nodes; n++)
        total_slots += map->node_slots[n];
    fprintf(out, " Data for JOB [%llu] offset 0 Total slots allocated %ld\n\n",
            (unsigned long long)jobid, total_slots);
    fprintf(out, " ========================   JOB MAP   ========================\n");
    for (uint32_t n = 0; n < map->num_nodes; n++) {
        int procs = 0;

        for (int rank = 0; rank < map->np; rank++)
            procs += map->placement[rank].node_id == n;
        fprintf(out, "\n Data for node: %s\tNum slots: %d\tMax slots: 0\tNum procs: %d\n",
                map->nodes[n], map->node_slots[n], procs);
        for (int rank = 0; rank < map->np; rank++) {
            char binding[512];

            if (map->placement[rank].node_id != n)
                continue;
            mpirun_map_binding_text(topo, map->placement[rank].cpuset, binding, sizeof(binding));
            fprintf(out, " \tProcess jobid: [%llu] App: 0 Process rank: %d Bound: %s\n",
                    (unsigned long long)jobid, rank, *binding ? binding : "N/A");
        }
    }
    fprintf(out, "\n =============================================================\n");
    fflush(out);
}
