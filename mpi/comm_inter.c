/*
 * comm_inter.c: intercommunicators (MPI-3.1 section 6.6): MPI_Intercomm_create,
 * MPI_Intercomm_merge, MPI_Comm_remote_size and MPI_Comm_remote_group. Dup, idup, split,
 * create, free, compare, attributes and names of intercommunicators are the calls of
 * intracommunicators (comm_create.c, comm_idup.c, comm_split.c, comm_query.c).
 *
 * An intercommunicator (mpi_internal.h) has its local group as rank, size and
 * world_ranks, its remote group as remote_size and remote_world_ranks, and a local
 * communicator of its own over the local group, hidden from the application: its
 * collectives' local steps and the exchanges that make new communicators from it run
 * there, and the leaders (local rank 0 of each group) talk over the intercommunicator
 * itself. It takes two context ids, agreed by both groups at once (comm_cid.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm_internal.h"
#include "crmpi_status.h"
#include "log.h"

#pragma weak MPI_Intercomm_create = PMPI_Intercomm_create
#pragma weak MPI_Intercomm_merge = PMPI_Intercomm_merge
#pragma weak MPI_Comm_remote_size = PMPI_Comm_remote_size
#pragma weak MPI_Comm_remote_group = PMPI_Comm_remote_group

/* Raise a crmpi status on comm: "<what> (<why>)". Returns with the lock released. */
static int inter_raise(MPI_Comm comm, int rc, const char *func_name, const char *what)
{
    char detail[256];

    snprintf(detail, sizeof(detail), "%s (%s)", what, crmpi_strerror(rc));
    return crmpi_mpi_errhandler_invoke(comm, crmpi_comm_error_class(rc), func_name, detail);
}

/* Does any world rank of `a` appear in `b`? */
static bool inter_groups_overlap(const uint32_t *a, int na, const uint32_t *b, int nb)
{
    for (int i = 0; i < na; i++) {
        for (int j = 0; j < nb; j++) {
            if (a[i] == b[j])
                return true;
        }
    }
    return false;
}

/*
 * The body of MPI_Intercomm_create after the argument checks: the leaders swap their
 * group's size and members over peer_comm with the application's tag, each broadcasts
 * the other group in its own; both groups agree on the two ids, bridged the same way.
 * @return MPI_SUCCESS with *inter_out, or an MPI error class with *detail_out (lock held)
 */
int crmpi_comm_inter_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                            int remote_leader, int tag, MPI_Comm *inter_out,
                            const char **detail_out)
{
    int size = local_comm->size;
    int *rotated = malloc((size_t)size * sizeof(int));
    crmpi_comm_xchg_set_t set;
    uint32_t mine = (uint32_t)size, theirs = 0;
    uint32_t cids[CRMPI_COMM_CID_MAX];
    uint32_t *local = NULL, *remote = NULL;
    MPI_Comm inter;
    int rc;

    *detail_out = "cannot make the intercommunicator";
    if (!rotated)
        return MPI_ERR_NO_MEM;
    /* The leader is member 0 of the exchanges, the one that talks over the bridge. */
    for (int i = 0; i < size; i++)
        rotated[i] = (local_leader + i) % size;
    set = (crmpi_comm_xchg_set_t){
        .comm = local_comm,
        .ranks = rotated,
        .size = size,
        .me = (local_comm->rank - local_leader + size) % size,
        .tag = CRMPI_COMM_TAG_INTER,
        .bridge = local_comm->rank == local_leader ? peer_comm : MPI_COMM_NULL,
        .bridge_peer = remote_leader,
        .bridge_tag = tag,
    };
    rc = crmpi_comm_xchg_swap(&set, &mine, sizeof(mine), &theirs, sizeof(theirs));
    if (rc != CRMPI_OK)
        goto out;
    remote = malloc(((size_t)theirs + 1) * sizeof(uint32_t));
    if (!remote) {
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    rc = crmpi_comm_xchg_swap(&set, local_comm->world_ranks, mine * sizeof(uint32_t), remote,
                              theirs * sizeof(uint32_t));
    if (rc != CRMPI_OK)
        goto out;
    /* Both groups see both lists, so both refuse alike, before agreeing on anything. */
    if (theirs == 0 || inter_groups_overlap(local_comm->world_ranks, size, remote, (int)theirs)) {
        free(rotated);
        free(remote);
        *detail_out = "the local and remote groups overlap: an intercommunicator joins two "
                      "disjoint groups (MPI-3.1 section 6.6.2)";
        return MPI_ERR_COMM;
    }
    set.tag = CRMPI_COMM_TAG_CID;
    rc = crmpi_comm_cid_agree(&set, 2, cids);
    if (rc != CRMPI_OK)
        goto out;
    local = crmpi_comm_copy_ranks(local_comm->world_ranks, size);
    if (!local) {
        crmpi_comm_cid_release(cids[0]);
        crmpi_comm_cid_release(cids[1]);
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    /* Its error handler is local_comm's, as for any communicator made from another. */
    rc = crmpi_comm_alloc_inter(local_comm, size, local, (int)theirs, remote, &inter);
    remote = NULL; /* taken over, or freed */
    if (rc != CRMPI_OK) {
        crmpi_comm_cid_release(cids[0]);
        crmpi_comm_cid_release(cids[1]);
        goto out;
    }
    rc = crmpi_comm_activate(inter, cids);
    if (rc != CRMPI_OK) {
        crmpi_comm_destroy(inter);
        goto out;
    }
    *inter_out = inter;

out:
    free(rotated);
    free(remote);
    return crmpi_comm_error_class(rc);
}

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                          int remote_leader, int tag, MPI_Comm *newintercomm)
{
    static const char func_name[] = "MPI_Intercomm_create";
    const char *detail;
    char why[160];
    MPI_Comm inter = MPI_COMM_NULL;
    int err;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (!crmpi_mpi_comm_is_valid(local_comm))
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name,
                                               "local_comm is MPI_COMM_NULL");
        if (local_comm->inter)
            return crmpi_mpi_errhandler_invoke(local_comm, MPI_ERR_COMM, func_name,
                                               "local_comm is an intercommunicator");
        if (newintercomm == NULL)
            return crmpi_mpi_errhandler_invoke(local_comm, MPI_ERR_ARG, func_name,
                                               "newintercomm is NULL");
        if (local_leader < 0 || local_leader >= local_comm->size) {
            snprintf(why, sizeof(why), "local_leader %d is not a rank of local_comm (size %d)",
                     local_leader, local_comm->size);
            return crmpi_mpi_errhandler_invoke(local_comm, MPI_ERR_RANK, func_name, why);
        }
        if (tag < 0)
            return crmpi_mpi_errhandler_invoke(local_comm, MPI_ERR_TAG, func_name,
                                               "tag is negative");
        /* peer_comm and remote_leader are significant at the local leader only. */
        if (local_comm->rank == local_leader) {
            if (!crmpi_mpi_comm_is_valid(peer_comm))
                return crmpi_mpi_errhandler_invoke(local_comm, MPI_ERR_COMM, func_name,
                                                   "peer_comm is MPI_COMM_NULL at the leader");
            if (remote_leader < 0 || remote_leader >= peer_comm->remote_size) {
                snprintf(why, sizeof(why), "remote_leader %d is not a rank of peer_comm (size %d)",
                         remote_leader, peer_comm->remote_size);
                return crmpi_mpi_errhandler_invoke(local_comm, MPI_ERR_RANK, func_name, why);
            }
        }
    }
    err = crmpi_comm_inter_create(local_comm, local_leader, peer_comm, remote_leader, tag, &inter,
                                  &detail);
    if (err != MPI_SUCCESS)
        return crmpi_mpi_errhandler_invoke(local_comm, err, func_name, detail);
    *newintercomm = inter;
    crmpi_unlock();
    return MPI_SUCCESS;
}

/*
 * MPI_Intercomm_merge (MPI-3.1 section 6.6.2): the intracommunicator of both groups, the
 * group that passed high = false first, each group in its own order. When both groups
 * passed the same value the order is the implementation's: here the group whose rank 0
 * has the lower rank in MPI_COMM_WORLD comes first. Each side learns the other's value
 * from the leaders' swap.
 */
int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    static const char func_name[] = "MPI_Intercomm_merge";
    crmpi_comm_xchg_set_t set;
    int32_t mine = high ? 1 : 0, theirs = 0;
    uint32_t *ranks, *first, *second;
    int nfirst, nsecond;
    MPI_Comm merged;
    uint32_t cid;
    bool local_first;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (!crmpi_mpi_comm_is_valid(intercomm))
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name,
                                           "intercomm is MPI_COMM_NULL");
    if (!intercomm->inter)
        return crmpi_mpi_errhandler_invoke(intercomm, MPI_ERR_COMM, func_name,
                                           "intercomm is an intracommunicator");
    if (newintracomm == NULL)
        return crmpi_mpi_errhandler_invoke(intercomm, MPI_ERR_ARG, func_name,
                                           "newintracomm is NULL");
    set = crmpi_comm_xchg_all(intercomm, CRMPI_COMM_TAG_INTER);
    rc = crmpi_comm_xchg_swap(&set, &mine, sizeof(mine), &theirs, sizeof(theirs));
    if (rc != CRMPI_OK)
        return inter_raise(intercomm, rc, func_name, "cannot learn the other group's order");
    if (mine != theirs)
        local_first = !mine;
    else
        local_first = intercomm->world_ranks[0] < intercomm->remote_world_ranks[0];
    first = local_first ? intercomm->world_ranks : intercomm->remote_world_ranks;
    nfirst = local_first ? intercomm->size : intercomm->remote_size;
    second = local_first ? intercomm->remote_world_ranks : intercomm->world_ranks;
    nsecond = local_first ? intercomm->remote_size : intercomm->size;
    ranks = malloc(((size_t)nfirst + (size_t)nsecond) * sizeof(uint32_t));
    if (!ranks)
        return crmpi_mpi_errhandler_invoke(intercomm, MPI_ERR_NO_MEM, func_name, NULL);
    memcpy(ranks, first, (size_t)nfirst * sizeof(uint32_t));
    memcpy(ranks + nfirst, second, (size_t)nsecond * sizeof(uint32_t));
    set.tag = set.bridge_tag = CRMPI_COMM_TAG_CID;
    rc = crmpi_comm_cid_agree(&set, 1, &cid);
    if (rc != CRMPI_OK) {
        free(ranks);
        return inter_raise(intercomm, rc, func_name, "cannot make the merged communicator");
    }
    rc = crmpi_comm_alloc(intercomm, nfirst + nsecond, ranks, &merged);
    if (rc != CRMPI_OK) {
        crmpi_comm_cid_release(cid);
        return inter_raise(intercomm, rc, func_name, "cannot make the merged communicator");
    }
    rc = crmpi_comm_activate(merged, &cid);
    if (rc != CRMPI_OK) {
        crmpi_comm_destroy(merged);
        return inter_raise(intercomm, rc, func_name, "cannot make the merged communicator");
    }
    *newintracomm = merged;
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* Start of the remote group's queries: active, comm an intercommunicator (MPI-3.1
 * section 6.6.1: erroneous on an intracommunicator). */
#define REMOTE_ENTER(comm, func_name)                                                              \
    do {                                                                                           \
        crmpi_lock();                                                                              \
        crmpi_mpi_require_active(func_name);                                                       \
        if (!crmpi_mpi_comm_is_valid(comm))                                                        \
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);      \
        if (!(comm)->inter)                                                                        \
            return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_COMM, func_name,                      \
                                               "comm is an intracommunicator");                    \
    } while (0)

int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    static const char func_name[] = "MPI_Comm_remote_size";

    REMOTE_ENTER(comm, func_name);
    if (size == NULL)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "size is NULL");
    *size = comm->remote_size;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    static const char func_name[] = "MPI_Comm_remote_group";
    MPI_Group made;
    uint32_t *ranks;

    REMOTE_ENTER(comm, func_name);
    if (group == NULL)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "group is NULL");
    ranks = crmpi_comm_copy_ranks(comm->remote_world_ranks, comm->remote_size);
    if (!ranks)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_NO_MEM, func_name, NULL);
    made = crmpi_group_new(comm->remote_size, ranks);
    if (!made)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_NO_MEM, func_name, NULL);
    *group = made;
    crmpi_unlock();
    return MPI_SUCCESS;
}
