/*
 * win_sync.c: synchronisation calls (MPI-3.1 section 11.5): fence; post, start, complete,
 * wait, test (PSCW); lock, unlock, lock_all, unlock_all, the flushes and sync (passive
 * target). Each checks which epochs are open, so that a call out of order raises
 * MPI_ERR_RMA_SYNC, and lets osc do the work.
 *
 * A fence opens an epoch only if RMA calls follow it before another synchronisation
 * (MPI-3.1 section 11.5.1): so `fence` says a fence may have opened one, and the first
 * call of another mode ends that possibility.
 *
 * Assertions (section 11.5.5) are hints that change nothing here, but MPI_MODE_NOCHECK on
 * a lock (no lock message: the application promises no conflicting lock) and
 * MPI_MODE_NOSUCCEED on a fence (no epoch follows it).
 */
#include <stdlib.h>

#include "comm_internal.h"
#include "crmpi_status.h"
#include "win_internal.h"

#pragma weak MPI_Win_fence = PMPI_Win_fence
#pragma weak MPI_Win_post = PMPI_Win_post
#pragma weak MPI_Win_start = PMPI_Win_start
#pragma weak MPI_Win_complete = PMPI_Win_complete
#pragma weak MPI_Win_wait = PMPI_Win_wait
#pragma weak MPI_Win_test = PMPI_Win_test
#pragma weak MPI_Win_lock = PMPI_Win_lock
#pragma weak MPI_Win_unlock = PMPI_Win_unlock
#pragma weak MPI_Win_lock_all = PMPI_Win_lock_all
#pragma weak MPI_Win_unlock_all = PMPI_Win_unlock_all
#pragma weak MPI_Win_flush = PMPI_Win_flush
#pragma weak MPI_Win_flush_all = PMPI_Win_flush_all
#pragma weak MPI_Win_flush_local = PMPI_Win_flush_local
#pragma weak MPI_Win_flush_local_all = PMPI_Win_flush_local_all
#pragma weak MPI_Win_sync = PMPI_Win_sync

/* Every call starts alike. */
#define WIN_ENTER(win, func_name)                                                                  \
    do {                                                                                           \
        crmpi_lock();                                                                              \
        crmpi_mpi_require_active(func_name);                                                       \
        if ((win) == MPI_WIN_NULL)                                                                 \
            return crmpi_win_raise(MPI_WIN_NULL, MPI_ERR_WIN, func_name, NULL);                    \
    } while (0)

/* The end of a call after osc returned rc. */
static int win_leave(MPI_Win win, int rc, const char *func_name)
{
    if (rc != CRMPI_OK)
        return crmpi_win_raise(win, crmpi_win_error_class(rc), func_name, NULL);
    crmpi_unlock();
    return MPI_SUCCESS;
}

static bool win_passive(MPI_Win win)
{
    return win->num_locks > 0 || win->lock_all;
}

int PMPI_Win_fence(int assertions, MPI_Win win)
{
    static const char func_name[] = "MPI_Win_fence";
    int rc;

    WIN_ENTER(win, func_name);
    if (win_passive(win) || win->access || win->exposure)
        return crmpi_win_raise(win, MPI_ERR_RMA_SYNC, func_name,
                               "a lock or PSCW epoch is open on the window");
    /* MPI_MODE_NOPRECEDE promises nothing to complete; completing anyway costs nothing
     * when it holds (osc only flushes targets it sent to). */
    rc = crmpi_osc_fence(win->osc);
    win->fence = !(assertions & MPI_MODE_NOSUCCEED);
    return win_leave(win, rc, func_name);
}

/* The ranks in the window's group of the members of `group`. @return a malloc'd array
 * (NULL when out of memory) and *n_out, or MPI_ERR_GROUP in *err_out */
static int *win_group_ranks(MPI_Win win, MPI_Group group, int *n_out, int *err_out)
{
    int *ranks = malloc((size_t)(group->size ? group->size : 1) * sizeof(int));

    *err_out = ranks ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    for (int i = 0; ranks && i < group->size; i++) {
        ranks[i] = -1;
        for (int r = 0; r < win->comm->size; r++) {
            if (win->comm->world_ranks[r] == group->world_ranks[i])
                ranks[i] = r;
        }
        if (ranks[i] < 0) {
            free(ranks);
            *err_out = MPI_ERR_GROUP;
            return NULL;
        }
    }
    *n_out = group->size;
    return ranks;
}

int PMPI_Win_post(MPI_Group group, int assertions, MPI_Win win)
{
    static const char func_name[] = "MPI_Win_post";
    int *ranks, n = 0, err, rc;

    (void)assertions;
    WIN_ENTER(win, func_name);
    if (group == MPI_GROUP_NULL)
        return crmpi_win_raise(win, MPI_ERR_GROUP, func_name, NULL);
    if (win->exposure)
        return crmpi_win_raise(win, MPI_ERR_RMA_SYNC, func_name,
                               "an exposure epoch is open already");
    ranks = win_group_ranks(win, group, &n, &err);
    if (!ranks)
        return crmpi_win_raise(win, err, func_name, "a member is not in the window's group");
    win->fence = false;
    rc = crmpi_osc_post(win->osc, ranks, n);
    free(ranks);
    win->exposure = rc == CRMPI_OK;
    return win_leave(win, rc, func_name);
}

int PMPI_Win_start(MPI_Group group, int assertions, MPI_Win win)
{
    static const char func_name[] = "MPI_Win_start";
    int *ranks, n = 0, err, rc;

    (void)assertions;
    WIN_ENTER(win, func_name);
    if (group == MPI_GROUP_NULL)
        return crmpi_win_raise(win, MPI_ERR_GROUP, func_name, NULL);
    if (win->access || win->fence || win_passive(win))
        return crmpi_win_raise(win, MPI_ERR_RMA_SYNC, func_name, "an access epoch is open already");
    ranks = win_group_ranks(win, group, &n, &err);
    if (!ranks)
        return crmpi_win_raise(win, err, func_name, "a member is not in the window's group");
    win->fence = false;
    for (int i = 0; i < n; i++)
        win->started[ranks[i]] = true;
    rc = crmpi_osc_start(win->osc, ranks, n);
    free(ranks);
    win->access = true;
    return win_leave(win, rc, func_name);
}

int PMPI_Win_complete(MPI_Win win)
{
    static const char func_name[] = "MPI_Win_complete";
    int rc;

    WIN_ENTER(win, func_name);
    if (!win->access)
        return crmpi_win_raise(win, MPI_ERR_RMA_SYNC, func_name, "MPI_Win_start was not called");
    rc = crmpi_osc_complete(win->osc);
    win->access = false;
    for (int r = 0; r < win->comm->size; r++)
        win->started[r] = false;
    return win_leave(win, rc, func_name);
}

static int win_wait(MPI_Win win, bool test, int *flag, const char *func_name)
{
    bool done = false;
    int rc;

    WIN_ENTER(win, func_name);
    if (!win->exposure)
        return crmpi_win_raise(win, MPI_ERR_RMA_SYNC, func_name, "MPI_Win_post was not called");
    if (test && flag == NULL)
        return crmpi_win_raise(win, MPI_ERR_ARG, func_name, "flag is NULL");
    rc = crmpi_osc_wait(win->osc, !test, &done);
    if (rc == CRMPI_OK && done)
        win->exposure = false;
    if (flag)
        *flag = done;
    return win_leave(win, rc, func_name);
}

int PMPI_Win_wait(MPI_Win win)
{
    return win_wait(win, false, NULL, "MPI_Win_wait");
}

int PMPI_Win_test(MPI_Win win, int *flag)
{
    return win_wait(win, true, flag, "MPI_Win_test");
}

int PMPI_Win_lock(int lock_type, int rank, int assertions, MPI_Win win)
{
    static const char func_name[] = "MPI_Win_lock";
    int rc = CRMPI_OK;

    WIN_ENTER(win, func_name);
    if (lock_type != MPI_LOCK_EXCLUSIVE && lock_type != MPI_LOCK_SHARED)
        return crmpi_win_raise(win, MPI_ERR_LOCKTYPE, func_name, NULL);
    if (rank == MPI_PROC_NULL) {
        crmpi_unlock();
        return MPI_SUCCESS;
    }
    if (rank < 0 || rank >= win->comm->size)
        return crmpi_win_raise(win, MPI_ERR_RANK, func_name, NULL);
    if (win->locks[rank] || win->lock_all || win->access)
        return crmpi_win_raise(win, MPI_ERR_RMA_SYNC, func_name,
                               "the target is locked already, or a PSCW access epoch is open");
    win->fence = false;
    win->nocheck[rank] = (assertions & MPI_MODE_NOCHECK) != 0;
    if (!win->nocheck[rank])
        rc = crmpi_osc_lock(win->osc, lock_type, rank);
    if (rc == CRMPI_OK) {
        win->locks[rank] = lock_type;
        win->num_locks++;
    }
    return win_leave(win, rc, func_name);
}

int PMPI_Win_unlock(int rank, MPI_Win win)
{
    static const char func_name[] = "MPI_Win_unlock";
    int rc;

    WIN_ENTER(win, func_name);
    if (rank == MPI_PROC_NULL) {
        crmpi_unlock();
        return MPI_SUCCESS;
    }
    if (rank < 0 || rank >= win->comm->size)
        return crmpi_win_raise(win, MPI_ERR_RANK, func_name, NULL);
    if (!win->locks[rank])
        return crmpi_win_raise(win, MPI_ERR_RMA_SYNC, func_name, "the target is not locked");
    rc = win->nocheck[rank] ? crmpi_osc_flush(win->osc, rank) : crmpi_osc_unlock(win->osc, rank);
    win->locks[rank] = 0;
    win->num_locks--;
    return win_leave(win, rc, func_name);
}

int PMPI_Win_lock_all(int assertions, MPI_Win win)
{
    static const char func_name[] = "MPI_Win_lock_all";
    int rc = CRMPI_OK;

    WIN_ENTER(win, func_name);
    if (win_passive(win) || win->access)
        return crmpi_win_raise(win, MPI_ERR_RMA_SYNC, func_name,
                               "a lock or PSCW access epoch is open already");
    win->fence = false;
    for (int r = 0; r < win->comm->size && rc == CRMPI_OK; r++) {
        win->nocheck[r] = (assertions & MPI_MODE_NOCHECK) != 0;
        if (!win->nocheck[r])
            rc = crmpi_osc_lock(win->osc, MPI_LOCK_SHARED, r);
    }
    win->lock_all = true;
    return win_leave(win, rc, func_name);
}

int PMPI_Win_unlock_all(MPI_Win win)
{
    static const char func_name[] = "MPI_Win_unlock_all";
    int rc = CRMPI_OK;

    WIN_ENTER(win, func_name);
    if (!win->lock_all)
        return crmpi_win_raise(win, MPI_ERR_RMA_SYNC, func_name, "MPI_Win_lock_all was not called");
    for (int r = 0; r < win->comm->size && rc == CRMPI_OK; r++)
        rc = win->nocheck[r] ? crmpi_osc_flush(win->osc, r) : crmpi_osc_unlock(win->osc, r);
    win->lock_all = false;
    return win_leave(win, rc, func_name);
}

/* The body of the flushes: rank MPI_PROC_NULL for the _all forms. The local forms complete
 * at the target too, which is more than they must. */
static int win_flush(MPI_Win win, int rank, bool all, const char *func_name)
{
    WIN_ENTER(win, func_name);
    if (!all && rank == MPI_PROC_NULL) {
        crmpi_unlock();
        return MPI_SUCCESS;
    }
    if (!all && (rank < 0 || rank >= win->comm->size))
        return crmpi_win_raise(win, MPI_ERR_RANK, func_name, NULL);
    if (!win_passive(win) || (!all && !win->lock_all && !win->locks[rank]))
        return crmpi_win_raise(win, MPI_ERR_RMA_SYNC, func_name,
                               "no passive target epoch is open to the target");
    return win_leave(win, crmpi_osc_flush(win->osc, all ? MPI_PROC_NULL : rank), func_name);
}

int PMPI_Win_flush(int rank, MPI_Win win)
{
    return win_flush(win, rank, false, "MPI_Win_flush");
}

int PMPI_Win_flush_all(MPI_Win win)
{
    return win_flush(win, MPI_PROC_NULL, true, "MPI_Win_flush_all");
}

int PMPI_Win_flush_local(int rank, MPI_Win win)
{
    return win_flush(win, rank, false, "MPI_Win_flush_local");
}

int PMPI_Win_flush_local_all(MPI_Win win)
{
    return win_flush(win, MPI_PROC_NULL, true, "MPI_Win_flush_local_all");
}

/* The unified model has one copy of the memory: a full barrier orders the process's own
 * loads and stores around the call (MPI-3.1 section 11.5.4). */
int PMPI_Win_sync(MPI_Win win)
{
    WIN_ENTER(win, "MPI_Win_sync");
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    crmpi_unlock();
    return MPI_SUCCESS;
}
