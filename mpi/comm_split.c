/*
 * comm_split.c: MPI_Comm_split and MPI_Comm_split_type (MPI-3.1 section 6.4.2).
 *
 * Every rank of the parent learns every rank's (color, key) through an allgather on the
 * PML (comm_xchg.c), then all of them agree on one context id: the new communicators are
 * disjoint, so they may all share it. Each rank builds its own communicator from the
 * ranks of its color, ordered by key, ties broken by rank in the parent.
 *
 * On an intercommunicator each group gathers its own (color, key) pairs, the leaders swap
 * their group's table, and each process makes the intercommunicator between the processes
 * of its color in its group and those of its color in the other group, each side ordered
 * by key then rank; MPI_COMM_NULL when its color is MPI_UNDEFINED or has no process on the
 * other side. Split_type does the same with the node as the color.
 */
#include <stdlib.h>
#include <string.h>

#include "comm_hw.h"
#include "comm_internal.h"
#include "crmpi_status.h"
#include "log.h"

#pragma weak MPI_Comm_split = PMPI_Comm_split
#pragma weak MPI_Comm_split_type = PMPI_Comm_split_type

/* One rank's choice, as exchanged. */
typedef struct split_entry {
    int color;       /* its color, or MPI_UNDEFINED */
    int key;         /* its key */
    int parent_rank; /* its rank in the parent (filled after the exchange) */
} split_entry_t;

static int split_entry_cmp(const void *a, const void *b)
{
    const split_entry_t *x = a, *y = b;

    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->parent_rank - y->parent_rank;
}

int crmpi_comm_split_make(MPI_Comm comm, int color, int key, MPI_Comm *newcomm_out)
{
    split_entry_t mine = {color, key, comm->rank};
    split_entry_t *all = malloc((size_t)comm->size * sizeof(*all));
    crmpi_comm_xchg_set_t set;
    MPI_Comm created = MPI_COMM_NULL;
    uint32_t *ranks;
    uint32_t cid;
    int rc, n = 0;

    if (!all) {
        crmpi_log_error("comm: out of memory splitting %s", comm->name);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    set = crmpi_comm_xchg_all(comm, CRMPI_COMM_TAG_SPLIT);
    rc = crmpi_comm_xchg_allgather(&set, &mine, sizeof(mine), all);
    if (rc == CRMPI_OK) {
        set.tag = CRMPI_COMM_TAG_CID;
        rc = crmpi_comm_cid_agree(&set, 1, &cid);
    }
    if (rc != CRMPI_OK)
        goto out;
    if (color == MPI_UNDEFINED) {
        crmpi_comm_cid_release(cid);
        goto out;
    }
    /* Those of my color, sorted by (key, parent rank). */
    for (int r = 0; r < comm->size; r++) {
        if (all[r].color == color) {
            all[n] = all[r];
            all[n].parent_rank = r;
            n++;
        }
    }
    qsort(all, (size_t)n, sizeof(*all), split_entry_cmp);
    ranks = malloc((size_t)n * sizeof(uint32_t));
    if (!ranks) {
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        crmpi_comm_cid_release(cid);
        goto out;
    }
    for (int i = 0; i < n; i++)
        ranks[i] = comm->world_ranks[all[i].parent_rank];
    rc = crmpi_comm_alloc(comm, n, ranks, &created);
    if (rc != CRMPI_OK) {
        crmpi_comm_cid_release(cid);
        goto out;
    }
    rc = crmpi_comm_activate(created, &cid);
    if (rc != CRMPI_OK) {
        crmpi_comm_destroy(created);
        created = MPI_COMM_NULL;
    }

out:
    free(all);
    if (rc == CRMPI_OK)
        *newcomm_out = created;
    return rc;
}

/* The world ranks of the `n` entries of `table` (ranks of `group_ranks`) of `color`, in
 * the order of their keys, then ranks. @return NULL when out of memory; *count_out */
static uint32_t *split_select(const split_entry_t *table, int n, const uint32_t *group_ranks,
                              int color, int *count_out)
{
    split_entry_t *chosen = malloc(((size_t)n + 1) * sizeof(*chosen));
    uint32_t *ranks = malloc(((size_t)n + 1) * sizeof(uint32_t));
    int count = 0;

    if (!chosen || !ranks) {
        crmpi_log_error("comm: out of memory splitting a group of %d ranks", n);
        free(chosen);
        free(ranks);
        return NULL;
    }
    for (int r = 0; r < n; r++) {
        if (table[r].color == color) {
            chosen[count] = table[r];
            chosen[count].parent_rank = r;
            count++;
        }
    }
    qsort(chosen, (size_t)count, sizeof(*chosen), split_entry_cmp);
    for (int i = 0; i < count; i++)
        ranks[i] = group_ranks[chosen[i].parent_rank];
    free(chosen);
    *count_out = count;
    return ranks;
}

/* The work of MPI_Comm_split and MPI_Comm_split_type on an intercommunicator. */
static int split_make_inter(MPI_Comm comm, int color, int key, MPI_Comm *newcomm_out)
{
    split_entry_t mine = {color, key, comm->rank};
    split_entry_t *local = malloc(((size_t)comm->size + 1) * sizeof(*local));
    split_entry_t *remote = malloc(((size_t)comm->remote_size + 1) * sizeof(*remote));
    crmpi_comm_xchg_set_t set = crmpi_comm_xchg_all(comm, CRMPI_COMM_TAG_SPLIT);
    MPI_Comm created = MPI_COMM_NULL;
    uint32_t cids[CRMPI_COMM_CID_MAX];
    uint32_t *local_ranks = NULL, *remote_ranks = NULL;
    int rc, nlocal = 0, nremote = 0;

    if (!local || !remote) {
        crmpi_log_error("comm: out of memory splitting %s", comm->name);
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    rc = crmpi_comm_xchg_allgather(&set, &mine, sizeof(mine), local);
    if (rc == CRMPI_OK) {
        set.tag = set.bridge_tag = CRMPI_COMM_TAG_INTER;
        rc = crmpi_comm_xchg_swap(&set, local, (size_t)comm->size * sizeof(*local), remote,
                                  (size_t)comm->remote_size * sizeof(*remote));
    }
    if (rc == CRMPI_OK) {
        set.tag = set.bridge_tag = CRMPI_COMM_TAG_CID;
        rc = crmpi_comm_cid_agree(&set, 2, cids);
    }
    if (rc != CRMPI_OK)
        goto out;
    if (color != MPI_UNDEFINED) {
        local_ranks = split_select(local, comm->size, comm->world_ranks, color, &nlocal);
        remote_ranks =
            split_select(remote, comm->remote_size, comm->remote_world_ranks, color, &nremote);
        if (!local_ranks || !remote_ranks)
            rc = CRMPI_ERR_OUT_OF_RESOURCE;
    }
    if (rc != CRMPI_OK || color == MPI_UNDEFINED || nremote == 0) {
        crmpi_comm_cid_release(cids[0]);
        crmpi_comm_cid_release(cids[1]);
        free(local_ranks);
        free(remote_ranks);
        goto out;
    }
    rc = crmpi_comm_alloc_inter(comm, nlocal, local_ranks, nremote, remote_ranks, &created);
    if (rc != CRMPI_OK) {
        crmpi_comm_cid_release(cids[0]);
        crmpi_comm_cid_release(cids[1]);
        goto out;
    }
    rc = crmpi_comm_activate(created, cids);
    if (rc != CRMPI_OK) {
        crmpi_comm_destroy(created);
        created = MPI_COMM_NULL;
    }

out:
    free(local);
    free(remote);
    if (rc == CRMPI_OK)
        *newcomm_out = created;
    return rc;
}

/* The body of both calls, after the argument checks; lock held, released on return. */
static int split_run(MPI_Comm comm, int color, int key, MPI_Comm *newcomm, const char *func_name)
{
    MPI_Comm created;
    int rc = comm->inter ? split_make_inter(comm, color, key, &created)
                         : crmpi_comm_split_make(comm, color, key, &created);

    if (rc != CRMPI_OK)
        return crmpi_mpi_errhandler_invoke(comm, crmpi_comm_error_class(rc), func_name,
                                           "cannot make the new communicators");
    *newcomm = created;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    static const char func_name[] = "MPI_Comm_split";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (!crmpi_mpi_comm_is_valid(comm))
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
        if (newcomm == NULL)
            return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "newcomm is NULL");
        if (color < 0 && color != MPI_UNDEFINED)
            return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name,
                                               "color is negative and not MPI_UNDEFINED");
    }
    return split_run(comm, color, key, newcomm, func_name);
}

/* The info key of the hardware splits, and the standard's name of the node's resource. */
static const char split_hw_key[] = "mpi_hw_resource_type";
static const char split_hw_shared[] = "mpi_shared_memory";

/* Levels of the hardware splits: the node, then comm_hw.h's, from the largest. */
#define SPLIT_HW_LEVELS (1 + CRMPI_COMM_HW_LEVELS)

static const char *split_hw_name(int level)
{
    return level == 0 ? split_hw_shared : crmpi_comm_hw_level_names[level - 1];
}

/* This process's color at every level: the node, then (node, object) for the others;
 * MPI_UNDEFINED where its binding spans several objects. */
static void split_hw_colors(int colors[SPLIT_HW_LEVELS])
{
    int objects[CRMPI_COMM_HW_LEVELS];
    int node = (int)crmpi_rte_job()->node_of_rank[crmpi_rte_job()->rank];

    crmpi_comm_hw_objects(objects);
    colors[0] = node;
    for (int l = 0; l < CRMPI_COMM_HW_LEVELS; l++)
        colors[1 + l] = objects[l] < 0 ? MPI_UNDEFINED : node * 65536 + objects[l];
}

/*
 * MPI_COMM_TYPE_HW_UNGUIDED (MPI-4.0 section 7.4.2): the largest resource whose split gives
 * every process a strict subset of comm. Every rank's colors at every level are gathered, so
 * all of them pick the same level; a level where some rank has no object of its own still
 * splits, that rank getting MPI_COMM_NULL. @return the level, or -1 when no level splits
 * comm (the result is MPI_COMM_NULL everywhere)
 */
static int split_hw_unguided(MPI_Comm comm, int colors[SPLIT_HW_LEVELS], int *rc_out)
{
    int *all = malloc((size_t)comm->size * SPLIT_HW_LEVELS * sizeof(int));
    crmpi_comm_xchg_set_t set = crmpi_comm_xchg_all(comm, CRMPI_COMM_TAG_SPLIT);
    int chosen = -1;

    split_hw_colors(colors);
    *rc_out = all ? crmpi_comm_xchg_allgather(&set, colors, SPLIT_HW_LEVELS * sizeof(int), all)
                  : CRMPI_ERR_OUT_OF_RESOURCE;
    for (int l = 0; *rc_out == CRMPI_OK && l < SPLIT_HW_LEVELS && chosen < 0; l++) {
        int first = all[l];
        bool whole = first != MPI_UNDEFINED, any = false;

        /* Some rank has an object here, and no object holds every rank. */
        for (int r = 0; r < comm->size; r++) {
            int c = all[r * SPLIT_HW_LEVELS + l];

            whole &= c == first;
            any |= c != MPI_UNDEFINED;
        }
        if (any && !whole)
            chosen = l;
    }
    free(all);
    return chosen;
}

/*
 * MPI_COMM_TYPE_SHARED: the ranks of one node (they can share memory); the color is the
 * node's id from the job facts. MPI_COMM_TYPE_HW_GUIDED (MPI-4.0 section 7.4.2): the ranks
 * that share the hardware resource the info key mpi_hw_resource_type names:
 * "mpi_shared_memory" (the standard's name for what MPI_COMM_TYPE_SHARED groups) or one of
 * hwloc's levels (Package, NUMANode, L3Cache, L2Cache, L1Cache, Core, PU; comm_hw.c); for
 * any other value, or none, every rank gets MPI_COMM_NULL, as the standard requires for a
 * resource type the implementation does not recognise (the value must be the same on
 * every rank, so all of them agree), and so does a rank whose binding spans several objects
 * of the level. MPI_COMM_TYPE_HW_UNGUIDED: the largest of those levels that splits comm
 * (split_hw_unguided), named in the info's mpi_hw_resource_type. Other info keys are hints
 * crmpi does not use.
 */
int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    static const char func_name[] = "MPI_Comm_split_type";
    char resource[MPI_MAX_INFO_VAL + 1] = "";
    int colors[SPLIT_HW_LEVELS];
    int color, level = -1, err, rc;

    /* Read before the lock: MPI_Info_get takes it. */
    if (split_type == MPI_COMM_TYPE_HW_GUIDED && info != MPI_INFO_NULL) {
        int flag = 0;

        if (PMPI_Info_get(info, split_hw_key, MPI_MAX_INFO_VAL, resource, &flag) != MPI_SUCCESS ||
            !flag) {
            resource[0] = '\0';
        }
    }
    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (!crmpi_mpi_comm_is_valid(comm))
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
        if (newcomm == NULL)
            return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "newcomm is NULL");
        if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_COMM_TYPE_HW_GUIDED &&
            split_type != MPI_COMM_TYPE_HW_UNGUIDED && split_type != MPI_UNDEFINED)
            return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name,
                                               "split_type is not MPI_COMM_TYPE_SHARED, "
                                               "MPI_COMM_TYPE_HW_GUIDED, "
                                               "MPI_COMM_TYPE_HW_UNGUIDED or MPI_UNDEFINED");
    }
    switch (split_type) {
    case MPI_COMM_TYPE_SHARED:
        color = (int)crmpi_rte_job()->node_of_rank[crmpi_rte_job()->rank];
        break;
    case MPI_COMM_TYPE_HW_GUIDED:
        for (int l = 0; l < SPLIT_HW_LEVELS; l++) {
            if (strcmp(resource, split_hw_name(l)) == 0)
                level = l;
        }
        if (level > 0)
            split_hw_colors(colors);
        color = level < 0    ? MPI_UNDEFINED
                : level == 0 ? (int)crmpi_rte_job()->node_of_rank[crmpi_rte_job()->rank]
                             : colors[level];
        break;
    case MPI_COMM_TYPE_HW_UNGUIDED:
        if (comm->inter)
            return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_COMM, func_name,
                                               "MPI_COMM_TYPE_HW_UNGUIDED splits an "
                                               "intracommunicator, comm is an "
                                               "intercommunicator");
        level = split_hw_unguided(comm, colors, &rc);
        if (rc != CRMPI_OK)
            return crmpi_mpi_errhandler_invoke(comm, crmpi_comm_error_class(rc), func_name,
                                               "cannot gather the ranks' hardware resources");
        if (level < 0) {
            *newcomm = MPI_COMM_NULL;
            crmpi_unlock();
            return MPI_SUCCESS;
        }
        color = colors[level];
        break;
    default: color = MPI_UNDEFINED; break;
    }
    err = split_run(comm, color, key, newcomm, func_name);
    /* The resource found is given back through the info (MPI-4.0 section 7.4.2). */
    if (err == MPI_SUCCESS && split_type == MPI_COMM_TYPE_HW_UNGUIDED &&
        *newcomm != MPI_COMM_NULL && info != MPI_INFO_NULL)
        err = PMPI_Info_set(info, split_hw_key, split_hw_name(level));
    return err;
}
