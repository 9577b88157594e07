/*
 * session.c: MPI-4.0 sessions (section 11.3): MPI_Session_init and _finalize, the process
 * sets, groups made from them, communicators made from groups without a parent, and the
 * error handlers of sessions.
 *
 * One instance of the library serves the World Model and every session of a process
 * (crmpi_mpi_instance_start/end, init.c): the first of MPI_Init and MPI_Session_init starts
 * it (the agent, the PML and its modex, the C/R thread), the last of MPI_Finalize and
 * MPI_Session_finalize ends it, and a process whose instance ended cannot start it again
 * (crmpi leaves the job when its instance ends). Starting the instance takes part in the
 * job's modex, which every rank joins: every rank must initialize MPI in one of the two
 * ways, as every rank of a crmpi job does with MPI_Init.
 *
 * Process sets: "mpi://WORLD" (every rank of the job) and "mpi://SELF", matched without
 * regard to case as MPICH does. A session's thread level is what its info's "thread_level"
 * asks for, MPI_THREAD_MULTIPLE when it asks nothing: every call takes the library lock,
 * so every level is provided.
 *
 * Communicators from groups: the group's members agree on a context id over MPI_COMM_WORLD
 * (which exists inside every instance), with a reserved tag made from a hash of the string
 * tag, as MPI_Comm_create_group does with its integer tag. Two calls in progress at once
 * over overlapping groups must have different string tags (MPI-4.0 section 7.4.2); two
 * different string tags whose hashes collide in the tag range would mix their messages,
 * so with 2^27 tags such calls should stay few.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "comm_internal.h"
#include "crmpi_status.h"
#include "log.h"
#include "pml.h"

#pragma weak MPI_Session_init = PMPI_Session_init
#pragma weak MPI_Session_finalize = PMPI_Session_finalize
#pragma weak MPI_Session_get_info = PMPI_Session_get_info
#pragma weak MPI_Session_get_num_psets = PMPI_Session_get_num_psets
#pragma weak MPI_Session_get_nth_pset = PMPI_Session_get_nth_pset
#pragma weak MPI_Session_get_pset_info = PMPI_Session_get_pset_info
#pragma weak MPI_Group_from_session_pset = PMPI_Group_from_session_pset
#pragma weak MPI_Comm_create_from_group = PMPI_Comm_create_from_group
#pragma weak MPI_Intercomm_create_from_groups = PMPI_Intercomm_create_from_groups
#pragma weak MPI_Session_create_errhandler = PMPI_Session_create_errhandler
#pragma weak MPI_Session_set_errhandler = PMPI_Session_set_errhandler
#pragma weak MPI_Session_get_errhandler = PMPI_Session_get_errhandler
#pragma weak MPI_Session_call_errhandler = PMPI_Session_call_errhandler

struct crmpi_session_s {
    MPI_Errhandler errhandler; /* errors of calls on the session */
    int thread_level;          /* what its info asked for */
};

static const char *const session_psets[] = {"mpi://WORLD", "mpi://SELF"};
#define SESSION_NUM_PSETS ((int)(sizeof(session_psets) / sizeof(session_psets[0])))

static const char *const session_thread_levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                                    "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};

/*
 * Raise errcode through `handler` (a session's, or the one a call was given), for
 * `session` (MPI_SESSION_NULL when there is none yet). MPI_ERRORS_ARE_FATAL ends the job;
 * MPI_ERRORS_RETURN returns errcode; a session handler is called, and a communicator's
 * handler (given to MPI_Comm_create_from_group) is called with MPI_COMM_NULL. Returns with
 * the lock released.
 */
static int session_raise_with(MPI_Errhandler handler, MPI_Session session, int errcode,
                              const char *func_name, const char *detail)
{
    switch (handler ? handler->kind : CRMPI_ERRHANDLER_FATAL) {
    case CRMPI_ERRHANDLER_FATAL: crmpi_mpi_errors_are_fatal_abort(errcode, func_name, detail, NULL);
    case CRMPI_ERRHANDLER_RETURN: break;
    case CRMPI_ERRHANDLER_USER:
        /* Unlocked first: the handler may call MPI. */
        crmpi_unlock();
        if (handler->session_fn) {
            handler->session_fn(&session, &errcode);
        } else if (handler->comm_fn) {
            MPI_Comm none = MPI_COMM_NULL;
            handler->comm_fn(&none, &errcode);
        }
        return errcode;
    }
    crmpi_unlock();
    return errcode;
}

static int session_raise(MPI_Session session, int errcode, const char *func_name,
                         const char *detail)
{
    return session_raise_with(session ? session->errhandler : MPI_ERRORS_ARE_FATAL, session,
                              errcode, func_name, detail);
}

/* Start of the calls on a session: the lock, an instance, the handle not null. */
static int session_enter(MPI_Session session, const char *func_name)
{
    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (session == MPI_SESSION_NULL)
        return session_raise(MPI_SESSION_NULL, MPI_ERR_SESSION, func_name,
                             "session is MPI_SESSION_NULL");
    return MPI_SUCCESS;
}

/* The index of a process set's name in session_psets, or -1. */
static int session_pset_find(const char *pset_name)
{
    for (int i = 0; pset_name && i < SESSION_NUM_PSETS; i++) {
        if (strcasecmp(pset_name, session_psets[i]) == 0)
            return i;
    }
    return -1;
}

int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    static const char func_name[] = "MPI_Session_init";
    int level = MPI_THREAD_MULTIPLE;
    struct crmpi_session_s *created;

    crmpi_lock();
    if (session == NULL)
        return session_raise_with(errhandler, MPI_SESSION_NULL, MPI_ERR_ARG, func_name,
                                  "session is NULL");
    if (errhandler == MPI_ERRHANDLER_NULL ||
        (errhandler->kind == CRMPI_ERRHANDLER_USER && !errhandler->session_fn))
        return session_raise_with(MPI_ERRORS_ARE_FATAL, MPI_SESSION_NULL, MPI_ERR_ARG, func_name,
                                  "not a session's error handler (MPI-4.0 section 9.3.4)");
    if (info != MPI_INFO_NULL) {
        char value[MPI_MAX_INFO_VAL];
        int flag = 0;

        /* PMPI_Info_get takes the lock itself. */
        crmpi_unlock();
        PMPI_Info_get(info, "thread_level", sizeof(value) - 1, value, &flag);
        crmpi_lock();
        for (int l = 0; flag && l <= MPI_THREAD_MULTIPLE; l++) {
            if (strcasecmp(value, session_thread_levels[l]) == 0)
                level = l;
        }
    }
    created = calloc(1, sizeof(*created));
    if (!created)
        return session_raise_with(errhandler, MPI_SESSION_NULL, MPI_ERR_NO_MEM, func_name, NULL);
    if (!crmpi_mpi_state.instance_active)
        crmpi_mpi_instance_start(func_name);
    created->errhandler = errhandler;
    crmpi_errhandler_retain(errhandler);
    created->thread_level = level;
    crmpi_mpi_state.sessions++;
    *session = created;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Session_finalize(MPI_Session *session)
{
    static const char func_name[] = "MPI_Session_finalize";
    struct crmpi_session_s *ending;
    int err = session_enter(session ? *session : MPI_SESSION_NULL, func_name);
    int rc = CRMPI_OK;

    if (err != MPI_SUCCESS)
        return err;
    ending = *session;
    crmpi_mpi_state.sessions--;
    /* The last user of the instance ends it: no World Model, or one already finalized. */
    if (crmpi_mpi_state.sessions == 0 &&
        (!crmpi_mpi_state.initialized || crmpi_mpi_state.finalized))
        rc = crmpi_mpi_instance_end();
    if (rc != CRMPI_OK) {
        char detail[128];

        snprintf(detail, sizeof(detail), "leaving the job failed (%s)", crmpi_strerror(rc));
        return session_raise(ending, MPI_ERR_OTHER, func_name, detail);
    }
    crmpi_errhandler_release(ending->errhandler);
    free(ending);
    *session = MPI_SESSION_NULL;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    static const char func_name[] = "MPI_Session_get_info";
    int err = session_enter(session, func_name);
    int level;

    if (err != MPI_SUCCESS)
        return err;
    if (info_used == NULL)
        return session_raise(session, MPI_ERR_ARG, func_name, "info_used is NULL");
    level = session->thread_level;
    crmpi_unlock();
    err = PMPI_Info_create(info_used);
    if (err == MPI_SUCCESS)
        err = PMPI_Info_set(*info_used, "thread_level", session_thread_levels[level]);
    return err;
}

int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names)
{
    static const char func_name[] = "MPI_Session_get_num_psets";
    int err = session_enter(session, func_name);

    (void)info;
    if (err != MPI_SUCCESS)
        return err;
    if (npset_names == NULL)
        return session_raise(session, MPI_ERR_ARG, func_name, "npset_names is NULL");
    *npset_names = SESSION_NUM_PSETS;
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* MPI-4.0 section 11.3.2: *pset_len 0 asks for the length (the NUL included); otherwise
 * at most *pset_len - 1 characters and a NUL are written, and *pset_len becomes the whole
 * name's length plus one. */
int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len,
                              char *pset_name)
{
    static const char func_name[] = "MPI_Session_get_nth_pset";
    int err = session_enter(session, func_name);
    const char *name;

    (void)info;
    if (err != MPI_SUCCESS)
        return err;
    if (pset_len == NULL || *pset_len < 0 || (*pset_len > 0 && pset_name == NULL))
        return session_raise(session, MPI_ERR_ARG, func_name,
                             "pset_len is NULL or negative, or pset_name is NULL");
    if (n < 0 || n >= SESSION_NUM_PSETS)
        return session_raise(session, MPI_ERR_ARG, func_name,
                             "n is not between 0 and the number of process sets - 1");
    name = session_psets[n];
    if (*pset_len > 0)
        snprintf(pset_name, (size_t)*pset_len, "%s", name);
    *pset_len = (int)strlen(name) + 1;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    static const char func_name[] = "MPI_Session_get_pset_info";
    int err = session_enter(session, func_name);
    char size[16];
    int pset;

    if (err != MPI_SUCCESS)
        return err;
    if (info == NULL)
        return session_raise(session, MPI_ERR_ARG, func_name, "info is NULL");
    pset = session_pset_find(pset_name);
    if (pset < 0)
        return session_raise(session, MPI_ERR_ARG, func_name,
                             "no such process set: crmpi has mpi://WORLD and mpi://SELF");
    snprintf(size, sizeof(size), "%d", pset == 0 ? crmpi_mpi_comm_world.comm.size : 1);
    crmpi_unlock();
    err = PMPI_Info_create(info);
    if (err == MPI_SUCCESS)
        err = PMPI_Info_set(*info, "mpi_size", size);
    return err;
}

int PMPI_Group_from_session_pset(MPI_Session session, const char *pset_name, MPI_Group *newgroup)
{
    static const char func_name[] = "MPI_Group_from_session_pset";
    int err = session_enter(session, func_name);
    int pset;

    if (err != MPI_SUCCESS)
        return err;
    if (newgroup == NULL)
        return session_raise(session, MPI_ERR_ARG, func_name, "newgroup is NULL");
    pset = session_pset_find(pset_name);
    if (pset < 0)
        return session_raise(session, MPI_ERR_ARG, func_name,
                             "no such process set: crmpi has mpi://WORLD and mpi://SELF");
    crmpi_unlock();
    return PMPI_Comm_group(pset == 0 ? MPI_COMM_WORLD : MPI_COMM_SELF, newgroup);
}

/* FNV-1a of the string tag, folded into the reserved range; `salt` tells apart the
 * exchanges of one call. */
static int session_tag(const char *stringtag, uint32_t salt)
{
    uint32_t h = 2166136261u ^ salt;

    for (const char *c = stringtag; *c; c++)
        h = (h ^ (unsigned char)*c) * 16777619u;
    return CRMPI_COMM_TAG_FROM_GROUP_BASE - (int)(h & CRMPI_COMM_TAG_FROM_GROUP_MASK);
}

/* The new communicator raises its errors through `errhandler` (MPI-4.0 section 7.4.2). */
static void session_comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    crmpi_errhandler_retain(errhandler);
    crmpi_errhandler_release(comm->errhandler);
    comm->errhandler = errhandler;
}

/* Free a communicator made here that nothing else uses yet (no attribute, no request). */
static void session_comm_free(MPI_Comm comm)
{
    if (crmpi_pml_comm_release(comm->pml))
        crmpi_comm_destroy(comm);
}

/* The checks both calls make of a string tag and an error handler. */
static const char *session_check_tag_handler(const char *stringtag, MPI_Errhandler errhandler)
{
    if (stringtag == NULL || strlen(stringtag) >= MPI_MAX_STRINGTAG_LEN)
        return "stringtag is NULL or longer than MPI_MAX_STRINGTAG_LEN - 1";
    if (errhandler == MPI_ERRHANDLER_NULL)
        return "errhandler is MPI_ERRHANDLER_NULL";
    return NULL;
}

int PMPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                                MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
    static const char func_name[] = "MPI_Comm_create_from_group";
    const char *bad = session_check_tag_handler(stringtag, errhandler);
    MPI_Comm created = MPI_COMM_NULL;
    char detail[160];
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (bad)
        return session_raise_with(errhandler, MPI_SESSION_NULL, MPI_ERR_ARG, func_name, bad);
    if (group == MPI_GROUP_NULL || newcomm == NULL)
        return session_raise_with(errhandler, MPI_SESSION_NULL, MPI_ERR_ARG, func_name,
                                  "group is MPI_GROUP_NULL or newcomm is NULL");
    if (group->rank == MPI_UNDEFINED) {
        /* MPI_GROUP_EMPTY gives MPI_COMM_NULL; another group must contain the caller. */
        if (group->size == 0) {
            *newcomm = MPI_COMM_NULL;
            crmpi_unlock();
            return MPI_SUCCESS;
        }
        return session_raise_with(errhandler, MPI_SESSION_NULL, MPI_ERR_GROUP, func_name,
                                  "the calling process is not in the group");
    }
    rc = crmpi_comm_create_group_tagged(MPI_COMM_WORLD, group, session_tag(stringtag, 0), &created);
    if (rc == CRMPI_OK && info != MPI_INFO_NULL) {
        created->info = crmpi_info_copy(info);
        if (!created->info) {
            session_comm_free(created);
            rc = CRMPI_ERR_OUT_OF_RESOURCE;
        }
    }
    if (rc != CRMPI_OK) {
        snprintf(detail, sizeof(detail), "cannot make the new communicator (%s)",
                 crmpi_strerror(rc));
        return session_raise_with(errhandler, MPI_SESSION_NULL, crmpi_comm_error_class(rc),
                                  func_name, detail);
    }
    session_comm_set_errhandler(created, errhandler);
    *newcomm = created;
    crmpi_unlock();
    return MPI_SUCCESS;
}

/*
 * The local group's communicator first (as MPI_Comm_create_from_group), then the two
 * leaders swap their groups over MPI_COMM_WORLD, as MPI_Intercomm_create does over its
 * peer communicator; the local communicator is freed again.
 */
int PMPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader,
                                      MPI_Group remote_group, int remote_leader,
                                      const char *stringtag, MPI_Info info,
                                      MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    static const char func_name[] = "MPI_Intercomm_create_from_groups";
    const char *bad = session_check_tag_handler(stringtag, errhandler);
    MPI_Comm local = MPI_COMM_NULL, inter = MPI_COMM_NULL;
    const char *detail = NULL;
    int err, rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (bad)
        return session_raise_with(errhandler, MPI_SESSION_NULL, MPI_ERR_ARG, func_name, bad);
    if (local_group == MPI_GROUP_NULL || remote_group == MPI_GROUP_NULL || newintercomm == NULL)
        return session_raise_with(errhandler, MPI_SESSION_NULL, MPI_ERR_ARG, func_name,
                                  "a group is MPI_GROUP_NULL or newintercomm is NULL");
    if (local_group->rank == MPI_UNDEFINED)
        return session_raise_with(errhandler, MPI_SESSION_NULL, MPI_ERR_GROUP, func_name,
                                  "the calling process is not in local_group");
    if (local_leader < 0 || local_leader >= local_group->size || remote_leader < 0 ||
        remote_leader >= remote_group->size)
        return session_raise_with(errhandler, MPI_SESSION_NULL, MPI_ERR_RANK, func_name,
                                  "local_leader or remote_leader is not a rank of its group");
    rc = crmpi_comm_create_group_tagged(MPI_COMM_WORLD, local_group, session_tag(stringtag, 0),
                                        &local);
    if (rc != CRMPI_OK)
        return session_raise_with(errhandler, MPI_SESSION_NULL, crmpi_comm_error_class(rc),
                                  func_name, "cannot make the local group's communicator");
    /* In MPI_COMM_WORLD, a rank is its world rank. */
    err = crmpi_comm_inter_create(local, local_leader, MPI_COMM_WORLD,
                                  (int)remote_group->world_ranks[remote_leader],
                                  session_tag(stringtag, 1), &inter, &detail);
    session_comm_free(local);
    if (err == MPI_SUCCESS && info != MPI_INFO_NULL) {
        inter->info = crmpi_info_copy(info);
        if (!inter->info) {
            session_comm_free(inter);
            err = MPI_ERR_NO_MEM;
            detail = NULL;
        }
    }
    if (err != MPI_SUCCESS)
        return session_raise_with(errhandler, MPI_SESSION_NULL, err, func_name, detail);
    session_comm_set_errhandler(inter, errhandler);
    *newintercomm = inter;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Session_create_errhandler(MPI_Session_errhandler_function *session_errhandler_fn,
                                   MPI_Errhandler *errhandler)
{
    static const char func_name[] = "MPI_Session_create_errhandler";
    MPI_Errhandler handler;

    /* MPI-4.0 section 11.4.1 allows it before MPI is initialized. */
    crmpi_lock();
    if (session_errhandler_fn == NULL || errhandler == NULL)
        return session_raise(MPI_SESSION_NULL, MPI_ERR_ARG, func_name,
                             "session_errhandler_fn or errhandler is NULL");
    handler = crmpi_errhandler_new_user(&(struct crmpi_errhandler_s){
        .session_fn = session_errhandler_fn, .name = "a user session error handler"});
    if (!handler)
        return session_raise(MPI_SESSION_NULL, MPI_ERR_NO_MEM, func_name, NULL);
    *errhandler = handler;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    static const char func_name[] = "MPI_Session_set_errhandler";
    int err = session_enter(session, func_name);
    MPI_Errhandler old;

    if (err != MPI_SUCCESS)
        return err;
    if (errhandler == MPI_ERRHANDLER_NULL ||
        (errhandler->kind == CRMPI_ERRHANDLER_USER && !errhandler->session_fn))
        return session_raise(session, MPI_ERR_ARG, func_name,
                             "not a session's error handler (MPI-4.0 section 9.3.4)");
    old = session->errhandler;
    crmpi_errhandler_retain(errhandler);
    session->errhandler = errhandler;
    crmpi_errhandler_release(old);
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler)
{
    static const char func_name[] = "MPI_Session_get_errhandler";
    int err = session_enter(session, func_name);

    if (err != MPI_SUCCESS)
        return err;
    if (errhandler == NULL)
        return session_raise(session, MPI_ERR_ARG, func_name, "errhandler is NULL");
    crmpi_errhandler_retain(session->errhandler);
    *errhandler = session->errhandler;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Session_call_errhandler(MPI_Session session, int errorcode)
{
    static const char func_name[] = "MPI_Session_call_errhandler";
    int err = session_enter(session, func_name);

    if (err != MPI_SUCCESS)
        return err;
    session_raise(session, errorcode, func_name, "raised by MPI_Session_call_errhandler");
    /* The call succeeded when the handler returned (MPI-4.0 section 9.3.5). */
    return MPI_SUCCESS;
}
