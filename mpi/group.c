/*
 * group.c: process groups and their algebra (MPI-3.1 section 6.3). A group is an ordered
 * list of world ranks; every call here is local.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm_internal.h"
#include "log.h"

#pragma weak MPI_Group_size = PMPI_Group_size
#pragma weak MPI_Group_rank = PMPI_Group_rank
#pragma weak MPI_Group_translate_ranks = PMPI_Group_translate_ranks
#pragma weak MPI_Group_compare = PMPI_Group_compare
#pragma weak MPI_Comm_group = PMPI_Comm_group
#pragma weak MPI_Group_union = PMPI_Group_union
#pragma weak MPI_Group_intersection = PMPI_Group_intersection
#pragma weak MPI_Group_difference = PMPI_Group_difference
#pragma weak MPI_Group_incl = PMPI_Group_incl
#pragma weak MPI_Group_excl = PMPI_Group_excl
#pragma weak MPI_Group_range_incl = PMPI_Group_range_incl
#pragma weak MPI_Group_range_excl = PMPI_Group_range_excl
#pragma weak MPI_Group_free = PMPI_Group_free

struct crmpi_group_s crmpi_mpi_group_empty = {
    .size = 0,
    .rank = MPI_UNDEFINED,
    .refcount = 1,
};

MPI_Group crmpi_group_new(int size, uint32_t *world_ranks)
{
    MPI_Group group;

    if (size == 0) {
        free(world_ranks);
        return MPI_GROUP_EMPTY;
    }
    group = malloc(sizeof(*group));
    if (!group) {
        crmpi_log_error("group: out of memory for a group of %d", size);
        free(world_ranks);
        return NULL;
    }
    group->size = size;
    group->world_ranks = world_ranks;
    group->refcount = 1;
    group->rank = crmpi_group_find(group, crmpi_rte_job()->rank);
    return group;
}

void crmpi_group_release(MPI_Group group)
{
    if (group == MPI_GROUP_EMPTY)
        return;
    if (--group->refcount == 0) {
        free(group->world_ranks);
        free(group);
    }
}

int crmpi_group_find(MPI_Group group, uint32_t world_rank)
{
    for (int i = 0; i < group->size; i++) {
        if (group->world_ranks[i] == world_rank)
            return i;
    }
    return MPI_UNDEFINED;
}

/* Raise on MPI_COMM_WORLD's handler (a group belongs to no communicator, 8.3). */
static int group_raise(int errclass, const char *func_name, const char *detail)
{
    return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, errclass, func_name, detail);
}

/* Shared start of every group call: active, and each group handle not null. */
#define GROUP_ENTER(func_name, group_ok)                                                           \
    do {                                                                                           \
        crmpi_lock();                                                                              \
        crmpi_mpi_require_active(func_name);                                                       \
        if (!(group_ok))                                                                           \
            return group_raise(MPI_ERR_GROUP, func_name, "group is MPI_GROUP_NULL");               \
    } while (0)

/* Hand a new group (or NULL: out of memory) to the application. */
static int group_return(MPI_Group group, MPI_Group *newgroup, const char *func_name)
{
    if (!group)
        return group_raise(MPI_ERR_NO_MEM, func_name, NULL);
    *newgroup = group;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Group_size(MPI_Group group, int *size)
{
    GROUP_ENTER("MPI_Group_size", group != MPI_GROUP_NULL);
    if (size == NULL)
        return group_raise(MPI_ERR_ARG, "MPI_Group_size", "size is NULL");
    *size = group->size;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Group_rank(MPI_Group group, int *rank)
{
    GROUP_ENTER("MPI_Group_rank", group != MPI_GROUP_NULL);
    if (rank == NULL)
        return group_raise(MPI_ERR_ARG, "MPI_Group_rank", "rank is NULL");
    *rank = group->rank;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                               int ranks2[])
{
    static const char func_name[] = "MPI_Group_translate_ranks";

    GROUP_ENTER(func_name, group1 != MPI_GROUP_NULL && group2 != MPI_GROUP_NULL);
    if (n < 0 || (n > 0 && (ranks1 == NULL || ranks2 == NULL)))
        return group_raise(MPI_ERR_ARG, func_name, "n is negative or an array is NULL");
    for (int i = 0; i < n; i++) {
        if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= group1->size)) {
            char detail[96];
            snprintf(detail, sizeof(detail), "ranks1[%d] = %d is not in group1 (size %d)", i,
                     ranks1[i], group1->size);
            return group_raise(MPI_ERR_RANK, func_name, detail);
        }
    }
    for (int i = 0; i < n; i++) {
        ranks2[i] = ranks1[i] == MPI_PROC_NULL
                        ? MPI_PROC_NULL
                        : crmpi_group_find(group2, group1->world_ranks[ranks1[i]]);
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    static const char func_name[] = "MPI_Group_compare";
    bool same_order = true;

    GROUP_ENTER(func_name, group1 != MPI_GROUP_NULL && group2 != MPI_GROUP_NULL);
    if (result == NULL)
        return group_raise(MPI_ERR_ARG, func_name, "result is NULL");
    if (group1->size != group2->size) {
        *result = MPI_UNEQUAL;
        crmpi_unlock();
        return MPI_SUCCESS;
    }
    for (int i = 0; i < group1->size; i++) {
        if (group1->world_ranks[i] != group2->world_ranks[i])
            same_order = false;
        if (crmpi_group_find(group2, group1->world_ranks[i]) == MPI_UNDEFINED) {
            *result = MPI_UNEQUAL;
            crmpi_unlock();
            return MPI_SUCCESS;
        }
    }
    *result = same_order ? MPI_IDENT : MPI_SIMILAR;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    static const char func_name[] = "MPI_Comm_group";
    uint32_t *ranks;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (!crmpi_mpi_comm_is_valid(comm))
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
    if (group == NULL)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "group is NULL");
    ranks = malloc((size_t)comm->size * sizeof(uint32_t));
    if (!ranks)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_NO_MEM, func_name, NULL);
    memcpy(ranks, comm->world_ranks, (size_t)comm->size * sizeof(uint32_t));
    return group_return(crmpi_group_new(comm->size, ranks), group, func_name);
}

/* The set operations (6.3.2): which members of group1, then of group2, are kept. */
typedef enum { GROUP_UNION, GROUP_INTERSECTION, GROUP_DIFFERENCE } group_setop_t;

static int group_setop(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup, group_setop_t op,
                       const char *func_name)
{
    uint32_t *ranks;
    int n = 0;

    GROUP_ENTER(func_name, group1 != MPI_GROUP_NULL && group2 != MPI_GROUP_NULL);
    if (newgroup == NULL)
        return group_raise(MPI_ERR_ARG, func_name, "newgroup is NULL");
    ranks = malloc(((size_t)group1->size + (size_t)group2->size + 1) * sizeof(uint32_t));
    if (!ranks)
        return group_raise(MPI_ERR_NO_MEM, func_name, NULL);
    /* Members of group1 in group1's order... */
    for (int i = 0; i < group1->size; i++) {
        bool in2 = crmpi_group_find(group2, group1->world_ranks[i]) != MPI_UNDEFINED;
        if (op == GROUP_UNION || (op == GROUP_INTERSECTION) == in2)
            ranks[n++] = group1->world_ranks[i];
    }
    /* ...then, for a union, those of group2 not in group1, in group2's order. */
    if (op == GROUP_UNION) {
        for (int i = 0; i < group2->size; i++) {
            if (crmpi_group_find(group1, group2->world_ranks[i]) == MPI_UNDEFINED)
                ranks[n++] = group2->world_ranks[i];
        }
    }
    return group_return(crmpi_group_new(n, ranks), newgroup, func_name);
}

int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return group_setop(group1, group2, newgroup, GROUP_UNION, "MPI_Group_union");
}

int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return group_setop(group1, group2, newgroup, GROUP_INTERSECTION, "MPI_Group_intersection");
}

int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return group_setop(group1, group2, newgroup, GROUP_DIFFERENCE, "MPI_Group_difference");
}

/*
 * incl/excl and their range forms: `chosen` marks the group's ranks named by the call
 * (each at most once, else MPI_ERR_RANK), `order` lists them in the call's order.
 */
static int group_mark(MPI_Group group, int rank, char *chosen, int *order, int *count,
                      const char *func_name)
{
    char detail[96];

    if (rank < 0 || rank >= group->size) {
        snprintf(detail, sizeof(detail), "rank %d is not in the group (size %d)", rank,
                 group->size);
        return group_raise(MPI_ERR_RANK, func_name, detail);
    }
    if (chosen[rank]) {
        snprintf(detail, sizeof(detail), "rank %d is named twice", rank);
        return group_raise(MPI_ERR_RANK, func_name, detail);
    }
    chosen[rank] = 1;
    order[(*count)++] = rank;
    return MPI_SUCCESS;
}

/* Members named by `ranks` (n of them) or by `ranges` (n triplets); then kept or left. */
static int group_select(MPI_Group group, int n, const int ranks[], int ranges[][3], bool include,
                        MPI_Group *newgroup, const char *func_name)
{
    char *chosen;
    int *order;
    uint32_t *out;
    int count = 0, err = MPI_SUCCESS, kept = 0;

    GROUP_ENTER(func_name, group != MPI_GROUP_NULL);
    if (n < 0 || newgroup == NULL || (n > 0 && ranks == NULL && ranges == NULL))
        return group_raise(MPI_ERR_ARG, func_name, "n is negative or an array is NULL");
    chosen = calloc((size_t)group->size + 1, 1);
    order = malloc(((size_t)group->size + 1) * sizeof(int));
    if (!chosen || !order) {
        free(chosen);
        free(order);
        return group_raise(MPI_ERR_NO_MEM, func_name, NULL);
    }
    for (int i = 0; i < n && err == MPI_SUCCESS; i++) {
        if (ranks) {
            err = group_mark(group, ranks[i], chosen, order, &count, func_name);
            continue;
        }
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0 || (stride > 0 && first > last) || (stride < 0 && first < last)) {
            /* A range with no member is erroneous unless first == last (6.3.2). */
            if (stride == 0 || first != last) {
                err = group_raise(MPI_ERR_ARG, func_name, "a range has stride 0 or no member");
                break;
            }
        }
        for (int r = first; stride > 0 ? r <= last : r >= last; r += stride) {
            err = group_mark(group, r, chosen, order, &count, func_name);
            if (err != MPI_SUCCESS)
                break;
        }
    }
    if (err != MPI_SUCCESS) {
        free(chosen);
        free(order);
        return err; /* raised, lock released */
    }
    out = malloc(((size_t)group->size + 1) * sizeof(uint32_t));
    if (out) {
        if (include) {
            for (int i = 0; i < count; i++)
                out[kept++] = group->world_ranks[order[i]];
        } else {
            for (int r = 0; r < group->size; r++) {
                if (!chosen[r])
                    out[kept++] = group->world_ranks[r];
            }
        }
    }
    free(chosen);
    free(order);
    if (!out)
        return group_raise(MPI_ERR_NO_MEM, func_name, NULL);
    return group_return(crmpi_group_new(kept, out), newgroup, func_name);
}

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return group_select(group, n, n > 0 ? ranks : (const int[]){0}, NULL, true, newgroup,
                        "MPI_Group_incl");
}

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return group_select(group, n, n > 0 ? ranks : (const int[]){0}, NULL, false, newgroup,
                        "MPI_Group_excl");
}

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return group_select(group, n, NULL, ranges, true, newgroup, "MPI_Group_range_incl");
}

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return group_select(group, n, NULL, ranges, false, newgroup, "MPI_Group_range_excl");
}

int PMPI_Group_free(MPI_Group *group)
{
    static const char func_name[] = "MPI_Group_free";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (group == NULL || *group == MPI_GROUP_NULL)
        return group_raise(MPI_ERR_GROUP, func_name, "group is NULL or MPI_GROUP_NULL");
    crmpi_group_release(*group);
    *group = MPI_GROUP_NULL;
    crmpi_unlock();
    return MPI_SUCCESS;
}
