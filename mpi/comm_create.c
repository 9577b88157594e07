/*
 * comm_create.c: the life of created communicators (MPI-3.1 section 6.4): made by
 * MPI_Comm_dup, dup_with_info, idup, create and create_group here, by split in
 * comm_split.c, by MPI_Intercomm_create and merge in comm_inter.c; freed by MPI_Comm_free.
 * Every one goes through crmpi_comm_alloc or crmpi_comm_alloc_inter (members, error
 * handler) then crmpi_comm_activate (context ids, crmpi_comm_attach_layers).
 *
 * Dup, idup, create and free apply to intercommunicators as well (6.4.2: dup and create
 * keep the two-group form, create taking a subset of each group; 6.4.3).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "comm_internal.h"
#include "crmpi_status.h"
#include "log.h"
#include "progress.h"

#pragma weak MPI_Comm_dup = PMPI_Comm_dup
#pragma weak MPI_Comm_dup_with_info = PMPI_Comm_dup_with_info
#pragma weak MPI_Comm_create = PMPI_Comm_create
#pragma weak MPI_Comm_create_group = PMPI_Comm_create_group
#pragma weak MPI_Comm_free = PMPI_Comm_free

/* context_id of a communicator that has none yet (allocated, not activated). */
#define COMM_NO_CID UINT32_MAX

int crmpi_comm_error_class(int rc)
{
    switch (rc) {
    case CRMPI_OK: return MPI_SUCCESS;
    case CRMPI_ERR_OUT_OF_RESOURCE: return MPI_ERR_NO_MEM;
    case CRMPI_ERR_NOT_SUPPORTED: return MPI_ERR_UNSUPPORTED_OPERATION;
    case CRMPI_ERR_BAD_PARAM: return MPI_ERR_ARG;
    default: return MPI_ERR_INTERN;
    }
}

int crmpi_comm_attach_layers(struct crmpi_comm_s *comm)
{
    crmpi_pml_comm_params_t params = {
        .context_id = comm->context_id,
        .rank = comm->rank,
        .size = comm->size,
        .world_ranks = comm->world_ranks,
        .remote_size = comm->inter ? comm->remote_size : 0,
        .remote_world_ranks = comm->inter ? comm->remote_world_ranks : NULL,
        .name = comm->name,
        .owner = comm,
    };
    int rc = crmpi_pml_add_comm(&params, &comm->pml);

    if (rc != CRMPI_OK)
        return rc;
    /* An intercommunicator's local steps go over its local communicator, attached first
     * (crmpi_comm_activate). */
    if (comm->inter)
        rc = crmpi_coll_comm_create_inter(comm->pml, comm->rank, comm->size, comm->remote_size,
                                          comm->local_comm->coll, &comm->coll);
    else
        rc = crmpi_coll_comm_create(comm->pml, comm->rank, comm->size, &comm->coll);
    if (rc != CRMPI_OK) {
        crmpi_pml_del_comm(comm->pml);
        comm->pml = NULL;
    }
    return rc;
}

void crmpi_comm_detach_layers(struct crmpi_comm_s *comm)
{
    crmpi_coll_comm_destroy(comm->coll);
    comm->coll = NULL;
    crmpi_pml_del_comm(comm->pml);
    comm->pml = NULL;
}

int crmpi_comm_alloc(MPI_Comm parent, int size, uint32_t *world_ranks, MPI_Comm *comm_out)
{
    struct crmpi_comm_s *comm = calloc(1, sizeof(*comm));
    uint32_t me = crmpi_rte_job()->rank;

    if (!comm) {
        crmpi_log_error("comm: out of memory for a communicator of %d ranks", size);
        free(world_ranks);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    comm->size = size;
    comm->world_ranks = world_ranks;
    comm->remote_size = size;
    comm->remote_world_ranks = world_ranks;
    comm->rank = MPI_UNDEFINED;
    for (int r = 0; r < size; r++) {
        if (world_ranks[r] == me) {
            comm->rank = r;
            break;
        }
    }
    comm->context_id = COMM_NO_CID;
    comm->errhandler = parent->errhandler;
    crmpi_errhandler_retain(comm->errhandler);
    *comm_out = comm;
    return CRMPI_OK;
}

int crmpi_comm_alloc_inter(MPI_Comm parent, int size, uint32_t *world_ranks, int remote_size,
                           uint32_t *remote_world_ranks, MPI_Comm *comm_out)
{
    uint32_t *local_ranks = crmpi_comm_copy_ranks(world_ranks, size);
    MPI_Comm comm, local;
    int rc;

    if (!local_ranks) {
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto err_free_ranks;
    }
    rc = crmpi_comm_alloc(parent, size, local_ranks, &local);
    if (rc != CRMPI_OK)
        goto err_free_ranks;
    rc = crmpi_comm_alloc(parent, size, world_ranks, &comm);
    if (rc != CRMPI_OK) {
        crmpi_comm_destroy(local);
        free(remote_world_ranks);
        return rc;
    }
    /* For log lines of the layers below; the application never sees it. */
    snprintf(local->name, sizeof(local->name), "(the local group of an intercommunicator)");
    comm->inter = true;
    comm->remote_size = remote_size;
    comm->remote_world_ranks = remote_world_ranks;
    comm->local_comm = local;
    *comm_out = comm;
    return CRMPI_OK;

err_free_ranks:
    free(world_ranks);
    free(remote_world_ranks);
    return rc;
}

int crmpi_comm_activate(MPI_Comm comm, const uint32_t cids[])
{
    int rc;

    if (comm->inter) {
        rc = crmpi_comm_activate(comm->local_comm, &cids[1]);
        if (rc != CRMPI_OK) {
            crmpi_comm_cid_release(cids[0]);
            return rc;
        }
    }
    comm->context_id = cids[0];
    rc = crmpi_comm_attach_layers(comm);
    if (rc != CRMPI_OK) {
        crmpi_comm_cid_release(cids[0]);
        comm->context_id = COMM_NO_CID;
    }
    return rc;
}

int crmpi_comm_destroy(MPI_Comm comm)
{
    int err = crmpi_attr_delete_all(comm);

    if (comm->context_id != COMM_NO_CID) {
        crmpi_comm_detach_layers(comm);
        crmpi_comm_cid_release(comm->context_id);
    }
    /* After the intercommunicator's collectives, which use it. */
    if (comm->local_comm)
        crmpi_comm_destroy(comm->local_comm);
    crmpi_topo_destroy(comm->topo);
    if (comm->info)
        crmpi_info_destroy(comm->info);
    crmpi_errhandler_release(comm->errhandler);
    if (comm->remote_world_ranks != comm->world_ranks)
        free(comm->remote_world_ranks);
    free(comm->world_ranks);
    free(comm);
    return err;
}

uint32_t *crmpi_comm_copy_ranks(const uint32_t *world_ranks, int size)
{
    uint32_t *ranks = malloc(((size_t)size + 1) * sizeof(uint32_t));

    if (ranks)
        memcpy(ranks, world_ranks, (size_t)size * sizeof(uint32_t));
    else
        crmpi_log_error("comm: out of memory for %d ranks", size);
    return ranks;
}

/* Raise a crmpi status on comm: "<what> (<why>)". Returns with the lock released. */
static int comm_raise(MPI_Comm comm, int rc, const char *func_name, const char *what)
{
    char detail[256];

    snprintf(detail, sizeof(detail), "%s (%s)", what, crmpi_strerror(rc));
    return crmpi_mpi_errhandler_invoke(comm, crmpi_comm_error_class(rc), func_name, detail);
}

/*
 * A duplicate of comm, not yet activated: members, attributes (copy callbacks),
 * topology, and `info` (or comm's hints). @return MPI_SUCCESS with *dup_out (lock held),
 * or an MPI error class (lock held; *dup_out untouched)
 */
int crmpi_comm_dup_prepare(MPI_Comm comm, MPI_Info info, bool use_info, MPI_Comm *dup_out)
{
    uint32_t *ranks = crmpi_comm_copy_ranks(comm->world_ranks, comm->size);
    MPI_Comm dup;
    int err, rc;

    if (!ranks)
        return MPI_ERR_NO_MEM;
    if (comm->inter) {
        uint32_t *remote = crmpi_comm_copy_ranks(comm->remote_world_ranks, comm->remote_size);

        if (!remote) {
            free(ranks);
            return MPI_ERR_NO_MEM;
        }
        rc = crmpi_comm_alloc_inter(comm, comm->size, ranks, comm->remote_size, remote, &dup);
    } else {
        rc = crmpi_comm_alloc(comm, comm->size, ranks, &dup);
    }
    if (rc != CRMPI_OK)
        return MPI_ERR_NO_MEM;
    if (comm->topo) {
        dup->topo = crmpi_topo_copy(comm->topo, &rc);
        if (rc != CRMPI_OK)
            goto err_destroy;
    }
    if (use_info ? info != MPI_INFO_NULL : comm->info != NULL) {
        dup->info = crmpi_info_copy(use_info ? info : comm->info);
        if (!dup->info)
            goto err_destroy;
    }
    err = crmpi_attr_copy_all(comm, dup);
    if (err != MPI_SUCCESS) {
        crmpi_comm_destroy(dup);
        return err;
    }
    *dup_out = dup;
    return MPI_SUCCESS;

err_destroy:
    crmpi_comm_destroy(dup);
    return MPI_ERR_NO_MEM;
}

/* The body of MPI_Comm_dup and MPI_Comm_dup_with_info. */
static int comm_dup(MPI_Comm comm, MPI_Info info, bool use_info, MPI_Comm *newcomm,
                    const char *func_name)
{
    crmpi_comm_xchg_set_t set;
    MPI_Comm dup;
    uint32_t cids[CRMPI_COMM_CID_MAX];
    int err, rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (!crmpi_mpi_comm_is_valid(comm))
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
        if (newcomm == NULL)
            return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "newcomm is NULL");
    }
    err = crmpi_comm_dup_prepare(comm, info, use_info, &dup);
    if (err != MPI_SUCCESS)
        return crmpi_mpi_errhandler_invoke(comm, err, func_name,
                                           "cannot copy the communicator's attributes");
    /* Over both groups of an intercommunicator (crmpi_comm_xchg_all). */
    set = crmpi_comm_xchg_all(comm, CRMPI_COMM_TAG_CID);
    rc = crmpi_comm_cid_agree(&set, crmpi_comm_num_cids(dup), cids);
    if (rc == CRMPI_OK)
        rc = crmpi_comm_activate(dup, cids);
    if (rc != CRMPI_OK) {
        crmpi_comm_destroy(dup);
        return comm_raise(comm, rc, func_name, "cannot make the new communicator");
    }
    *newcomm = dup;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    return comm_dup(comm, MPI_INFO_NULL, false, newcomm, "MPI_Comm_dup");
}

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    return comm_dup(comm, info, true, newcomm, "MPI_Comm_dup_with_info");
}

/* Is every member of group in comm? Sets detail when not. */
static bool comm_group_within(MPI_Comm comm, MPI_Group group, int *parent_ranks, char *detail,
                              size_t detail_size)
{
    for (int g = 0; g < group->size; g++) {
        int found = -1;
        for (int r = 0; r < comm->size; r++) {
            if (comm->world_ranks[r] == group->world_ranks[g]) {
                found = r;
                break;
            }
        }
        if (found < 0) {
            snprintf(detail, detail_size, "rank %d of the group is not in communicator %s", g,
                     comm->name);
            return false;
        }
        if (parent_ranks)
            parent_ranks[g] = found;
    }
    return true;
}

/* A communicator of group's members in group order, activated with cid; this process is
 * one of them. */
static int comm_from_group(MPI_Comm parent, MPI_Group group, uint32_t cid, MPI_Comm *comm_out)
{
    uint32_t *ranks = crmpi_comm_copy_ranks(group->world_ranks, group->size);
    MPI_Comm comm;
    int rc;

    if (!ranks) {
        crmpi_comm_cid_release(cid);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    rc = crmpi_comm_alloc(parent, group->size, ranks, &comm);
    if (rc != CRMPI_OK) {
        crmpi_comm_cid_release(cid);
        return rc;
    }
    rc = crmpi_comm_activate(comm, &cid);
    if (rc != CRMPI_OK) {
        crmpi_comm_destroy(comm);
        return rc;
    }
    *comm_out = comm;
    return CRMPI_OK;
}

/*
 * MPI_Comm_create on an intercommunicator (MPI-3.1 section 6.4.2): every process of a
 * group passes the same subset of that group; the leaders swap their group's subset, so
 * every process knows both, and the result is the intercommunicator between the two
 * subsets, or MPI_COMM_NULL where either is empty or this process is left out. Every
 * process of both groups takes part in the agreement, as for an intracommunicator.
 */
static int comm_create_inter(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm_out)
{
    crmpi_comm_xchg_set_t set = crmpi_comm_xchg_all(comm, CRMPI_COMM_TAG_INTER);
    uint32_t mine = (uint32_t)group->size, theirs = 0;
    uint32_t cids[CRMPI_COMM_CID_MAX];
    uint32_t *local = NULL, *remote = NULL;
    MPI_Comm created = MPI_COMM_NULL;
    int rc;

    rc = crmpi_comm_xchg_swap(&set, &mine, sizeof(mine), &theirs, sizeof(theirs));
    if (rc != CRMPI_OK)
        return rc;
    remote = malloc(((size_t)theirs + 1) * sizeof(uint32_t));
    if (!remote) {
        crmpi_log_error("comm: out of memory for a group of %u ranks", theirs);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    rc = crmpi_comm_xchg_swap(&set, group->world_ranks, mine * sizeof(uint32_t), remote,
                              theirs * sizeof(uint32_t));
    if (rc == CRMPI_OK) {
        set.tag = set.bridge_tag = CRMPI_COMM_TAG_CID;
        rc = crmpi_comm_cid_agree(&set, 2, cids);
    }
    if (rc != CRMPI_OK)
        goto out;
    if (group->rank == MPI_UNDEFINED || theirs == 0) {
        crmpi_comm_cid_release(cids[0]);
        crmpi_comm_cid_release(cids[1]);
        goto out;
    }
    local = crmpi_comm_copy_ranks(group->world_ranks, group->size);
    if (!local) {
        crmpi_comm_cid_release(cids[0]);
        crmpi_comm_cid_release(cids[1]);
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    rc = crmpi_comm_alloc_inter(comm, group->size, local, (int)theirs, remote, &created);
    remote = NULL; /* taken over, or freed */
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
    free(remote);
    if (rc == CRMPI_OK)
        *newcomm_out = created;
    return rc;
}

/*
 * MPI_Comm_create: every rank of comm takes part in the agreement, members or not, so
 * the id is free on all of them; each process may pass a different group, as long as the
 * groups are disjoint (MPI-3.1 section 6.4.2), and they then share the id.
 */
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    static const char func_name[] = "MPI_Comm_create";
    crmpi_comm_xchg_set_t set;
    MPI_Comm created = MPI_COMM_NULL;
    char detail[160];
    uint32_t cid;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (!crmpi_mpi_comm_is_valid(comm))
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
        if (group == MPI_GROUP_NULL)
            return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_GROUP, func_name,
                                               "group is MPI_GROUP_NULL");
        if (newcomm == NULL)
            return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "newcomm is NULL");
        if (!comm_group_within(comm, group, NULL, detail, sizeof(detail)))
            return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_GROUP, func_name, detail);
    }
    if (comm->inter) {
        rc = comm_create_inter(comm, group, &created);
        if (rc != CRMPI_OK)
            return comm_raise(comm, rc, func_name, "cannot make the new intercommunicator");
        *newcomm = created;
        crmpi_unlock();
        return MPI_SUCCESS;
    }
    set = crmpi_comm_xchg_all(comm, CRMPI_COMM_TAG_CID);
    rc = crmpi_comm_cid_agree(&set, 1, &cid);
    if (rc == CRMPI_OK) {
        if (group->rank != MPI_UNDEFINED)
            rc = comm_from_group(comm, group, cid, &created);
        else
            crmpi_comm_cid_release(cid);
    }
    if (rc != CRMPI_OK)
        return comm_raise(comm, rc, func_name, "cannot make the new communicator");
    *newcomm = created;
    crmpi_unlock();
    return MPI_SUCCESS;
}

/*
 * MPI_Comm_create_group (MPI-3.1 section 6.4.2): only the group's members call it, so
 * only they agree on the id, over comm, with a tag made from the user's so that
 * concurrent calls with different tags do not mix.
 */
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    static const char func_name[] = "MPI_Comm_create_group";
    MPI_Comm created = MPI_COMM_NULL;
    char detail[160];
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (!crmpi_mpi_comm_is_valid(comm))
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
        if (group == MPI_GROUP_NULL)
            return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_GROUP, func_name,
                                               "group is MPI_GROUP_NULL");
        if (newcomm == NULL)
            return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "newcomm is NULL");
        if (tag < 0)
            return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_TAG, func_name, "tag is negative");
    }
    /* Defined on intracommunicators only (MPI-3.1 section 6.4.2). */
    if (comm->inter)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_COMM, func_name,
                                           "comm is an intercommunicator");
    if (group->rank == MPI_UNDEFINED) {
        /* MPI_GROUP_EMPTY is allowed (the result is MPI_COMM_NULL); another group must
         * contain the caller. */
        if (group->size == 0) {
            *newcomm = MPI_COMM_NULL;
            crmpi_unlock();
            return MPI_SUCCESS;
        }
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_GROUP, func_name,
                                           "the calling process is not in the group");
    }
    if (!comm_group_within(comm, group, NULL, detail, sizeof(detail)))
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_GROUP, func_name, detail);
    rc = crmpi_comm_create_group_tagged(
        comm, group, CRMPI_COMM_TAG_CREATE_GROUP_BASE - (tag & CRMPI_COMM_TAG_CREATE_GROUP_MASK),
        &created);
    if (rc != CRMPI_OK)
        return comm_raise(comm, rc, func_name, "cannot make the new communicator");
    *newcomm = created;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int crmpi_comm_create_group_tagged(MPI_Comm parent, MPI_Group group, int tag, MPI_Comm *comm_out)
{
    int *parent_ranks = malloc(((size_t)group->size + 1) * sizeof(int));
    crmpi_comm_xchg_set_t set;
    char detail[160];
    uint32_t cid;
    int rc;

    if (!parent_ranks)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    comm_group_within(parent, group, parent_ranks, detail, sizeof(detail));
    set = (crmpi_comm_xchg_set_t){
        .comm = parent,
        .ranks = parent_ranks,
        .size = group->size,
        .me = group->rank,
        .tag = tag,
    };
    rc = crmpi_comm_cid_agree(&set, 1, &cid);
    free(parent_ranks);
    if (rc == CRMPI_OK)
        rc = comm_from_group(parent, group, cid, comm_out);
    return rc;
}

/*
 * MPI_Comm_free (MPI-3.1 section 6.4.3): the attributes' delete callbacks run first; when
 * one fails, the call fails with its error and the communicator stays. Operations still
 * pending on it complete normally: the communicator is destroyed when the last request on
 * it is released (crmpi_mpi_comm_bury), at once when there is none.
 */
int PMPI_Comm_free(MPI_Comm *comm)
{
    static const char func_name[] = "MPI_Comm_free";
    int err;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (comm == NULL)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name, "comm is NULL");
    if (!crmpi_mpi_comm_is_valid(*comm))
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
    if (crmpi_comm_is_predefined(*comm))
        return crmpi_mpi_errhandler_invoke(*comm, MPI_ERR_COMM, func_name,
                                           "a predefined communicator cannot be freed");
    err = crmpi_attr_delete_all(*comm);
    if (err != MPI_SUCCESS)
        return crmpi_mpi_errhandler_invoke(*comm, err, func_name,
                                           "an attribute's delete callback failed");
    /* With requests still live, the PML calls crmpi_mpi_comm_bury after the last. */
    if (crmpi_pml_comm_release((*comm)->pml))
        crmpi_comm_destroy(*comm);
    *comm = MPI_COMM_NULL;
    crmpi_unlock();
    return MPI_SUCCESS;
}

/*
 * Freed communicators whose last request was released. That release happens deep in the
 * PML (a request completing in a BTL callback), where the PML's state of the communicator
 * must not vanish; so they are destroyed from the progress engine, at its next turn. By
 * then a request may have started on one again (MPI_Mrecv of a message a matched probe
 * took from it before it was freed): the PML is asked again, and calls crmpi_mpi_comm_bury
 * again after that request.
 */
typedef struct comm_grave {
    struct comm_grave *next; /* the next to destroy */
    MPI_Comm comm;           /* freed, without requests */
} comm_grave_t;

static comm_grave_t *comm_graveyard;

static int comm_graveyard_progress(void)
{
    int events = 0;

    while (comm_graveyard) {
        comm_grave_t *grave = comm_graveyard;
        comm_graveyard = grave->next;
        if (crmpi_pml_comm_release(grave->comm->pml))
            crmpi_comm_destroy(grave->comm);
        free(grave);
        events++;
    }
    crmpi_progress_unregister(comm_graveyard_progress);
    return events;
}

void crmpi_mpi_comm_bury(MPI_Comm comm)
{
    comm_grave_t *grave = malloc(sizeof(*grave));

    if (!grave) {
        crmpi_log_error("comm: out of memory freeing %s; its memory is lost", comm->name);
        return;
    }
    grave->comm = comm;
    grave->next = comm_graveyard;
    comm_graveyard = grave;
    /* Already registered when another one is waiting. */
    crmpi_progress_register(comm_graveyard_progress);
}
