/*
 * comm_query.c: local questions and settings of a communicator (MPI-3.1 sections 6.4.1,
 * 6.6.1, 6.8, 6.4.4): compare, test_inter, names, info hints. They mean the same on
 * intercommunicators, but compare, which compares both groups of two intercommunicators.
 */
#include <stdio.h>
#include <string.h>

#include "comm_internal.h"

#pragma weak MPI_Comm_compare = PMPI_Comm_compare
#pragma weak MPI_Comm_test_inter = PMPI_Comm_test_inter
#pragma weak MPI_Comm_set_name = PMPI_Comm_set_name
#pragma weak MPI_Comm_get_name = PMPI_Comm_get_name
#pragma weak MPI_Comm_set_info = PMPI_Comm_set_info
#pragma weak MPI_Comm_get_info = PMPI_Comm_get_info

/* Start of the calls on one communicator: active and comm not null. */
#define COMM_ENTER(comm, func_name)                                                                \
    do {                                                                                           \
        crmpi_lock();                                                                              \
        crmpi_mpi_require_active(func_name);                                                       \
        if (!crmpi_mpi_comm_is_valid(comm))                                                        \
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);      \
    } while (0)

/* How two groups compare (as MPI_Group_compare): MPI_IDENT (same members, same order),
 * MPI_SIMILAR (same members) or MPI_UNEQUAL. */
static int comm_compare_groups(const uint32_t *a, int na, const uint32_t *b, int nb)
{
    bool same_order = true;

    if (na != nb)
        return MPI_UNEQUAL;
    for (int i = 0; i < na; i++) {
        bool found = false;
        if (a[i] != b[i])
            same_order = false;
        for (int j = 0; j < nb && !found; j++)
            found = b[j] == a[i];
        if (!found)
            return MPI_UNEQUAL;
    }
    return same_order ? MPI_IDENT : MPI_SIMILAR;
}

/* MPI_IDENT: one object; CONGRUENT: same members in the same order; SIMILAR: same
 * members; UNEQUAL otherwise (6.4.1). Two intercommunicators compare by both their local
 * and their remote groups; an intercommunicator and an intracommunicator are unequal. */
int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    static const char func_name[] = "MPI_Comm_compare";
    int local, remote;

    COMM_ENTER(comm1, func_name);
    if (!crmpi_mpi_comm_is_valid(comm2))
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name,
                                           "comm2 is MPI_COMM_NULL");
    if (result == NULL)
        return crmpi_mpi_errhandler_invoke(comm1, MPI_ERR_ARG, func_name, "result is NULL");
    if (comm1 == comm2) {
        *result = MPI_IDENT;
        crmpi_unlock();
        return MPI_SUCCESS;
    }
    local = comm_compare_groups(comm1->world_ranks, comm1->size, comm2->world_ranks, comm2->size);
    remote = MPI_IDENT;
    if (comm1->inter != comm2->inter)
        remote = MPI_UNEQUAL;
    else if (comm1->inter)
        remote = comm_compare_groups(comm1->remote_world_ranks, comm1->remote_size,
                                     comm2->remote_world_ranks, comm2->remote_size);
    if (local == MPI_UNEQUAL || remote == MPI_UNEQUAL)
        *result = MPI_UNEQUAL;
    else if (local == MPI_IDENT && remote == MPI_IDENT)
        *result = MPI_CONGRUENT;
    else
        *result = MPI_SIMILAR;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    static const char func_name[] = "MPI_Comm_test_inter";

    COMM_ENTER(comm, func_name);
    if (flag == NULL)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "flag is NULL");
    *flag = comm->inter;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    static const char func_name[] = "MPI_Comm_set_name";

    COMM_ENTER(comm, func_name);
    if (comm_name == NULL)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "comm_name is NULL");
    /* Longer names are truncated (6.8). */
    snprintf(comm->name, sizeof(comm->name), "%s", comm_name);
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
    static const char func_name[] = "MPI_Comm_get_name";

    COMM_ENTER(comm, func_name);
    if (comm_name == NULL || resultlen == NULL)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name,
                                           "comm_name or resultlen is NULL");
    snprintf(comm_name, MPI_MAX_OBJECT_NAME, "%s", comm->name);
    *resultlen = (int)strlen(comm_name);
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* crmpi uses no hint; the ones set are kept and given back by MPI_Comm_get_info. */
int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    static const char func_name[] = "MPI_Comm_set_info";
    struct crmpi_info_s *copy;

    COMM_ENTER(comm, func_name);
    if (info == MPI_INFO_NULL)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_INFO, func_name, "info is MPI_INFO_NULL");
    copy = crmpi_info_copy(info);
    if (!copy)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_NO_MEM, func_name, NULL);
    if (comm->info)
        crmpi_info_destroy(comm->info);
    comm->info = copy;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    static const char func_name[] = "MPI_Comm_get_info";

    COMM_ENTER(comm, func_name);
    if (info_used == NULL)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "info_used is NULL");
    /* Always a new object, which the application frees (6.4.4). */
    *info_used = crmpi_info_copy(comm->info);
    if (!*info_used)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_NO_MEM, func_name, NULL);
    crmpi_unlock();
    return MPI_SUCCESS;
}
