/*
 * win.c: windows as objects (MPI-3.1 sections 11.2 and 11.6, 8.3.2 for their error
 * handlers): creation, the window's own communicator, its group, predefined attributes,
 * name, error handler, and MPI_Win_free.
 *
 * Every window gets a communicator of its own (the creator's group, a fresh context id,
 * no attributes): its RMA messages can then never meet the application's, nor those of
 * another window over the same group.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm_internal.h"
#include "crmpi_status.h"
#include "log.h"
#include "win_internal.h"

#pragma weak MPI_Win_create = PMPI_Win_create
#pragma weak MPI_Win_create_c = PMPI_Win_create_c
#pragma weak MPI_Win_allocate = PMPI_Win_allocate
#pragma weak MPI_Win_allocate_c = PMPI_Win_allocate_c
#pragma weak MPI_Win_create_dynamic = PMPI_Win_create_dynamic
#pragma weak MPI_Win_attach = PMPI_Win_attach
#pragma weak MPI_Win_detach = PMPI_Win_detach
#pragma weak MPI_Win_free = PMPI_Win_free
#pragma weak MPI_Win_get_group = PMPI_Win_get_group
#pragma weak MPI_Win_set_name = PMPI_Win_set_name
#pragma weak MPI_Win_get_name = PMPI_Win_get_name
#pragma weak MPI_Win_create_errhandler = PMPI_Win_create_errhandler
#pragma weak MPI_Win_set_errhandler = PMPI_Win_set_errhandler
#pragma weak MPI_Win_get_errhandler = PMPI_Win_get_errhandler
#pragma weak MPI_Win_call_errhandler = PMPI_Win_call_errhandler
#pragma weak MPI_Win_set_info = PMPI_Win_set_info
#pragma weak MPI_Win_get_info = PMPI_Win_get_info

int crmpi_win_raise(MPI_Win win, int errcode, const char *func_name, const char *detail)
{
    MPI_Errhandler handler = win == MPI_WIN_NULL ? MPI_ERRORS_ARE_FATAL : win->errhandler;

    /* An error of no window: MPI_COMM_WORLD's handler decides (MPI-3.1 section 8.3). */
    if (win == MPI_WIN_NULL)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, errcode, func_name, detail);
    switch (handler->kind) {
    case CRMPI_ERRHANDLER_FATAL:
        /* The window's communicator is fatal: its handler says so, naming the window. */
        return crmpi_mpi_errhandler_invoke(win->comm, errcode, func_name, detail);
    case CRMPI_ERRHANDLER_RETURN: break;
    case CRMPI_ERRHANDLER_USER:
        crmpi_unlock();
        if (handler->win_fn)
            handler->win_fn(&win, &errcode);
        return errcode;
    }
    crmpi_unlock();
    return errcode;
}

int crmpi_win_error_class(int rc)
{
    switch (rc) {
    case CRMPI_OK: return MPI_SUCCESS;
    case CRMPI_ERR_OUT_OF_RESOURCE: return MPI_ERR_NO_MEM;
    case CRMPI_ERR_NOT_SUPPORTED: return MPI_ERR_OP;
    case CRMPI_ERR_NOT_FOUND: return MPI_ERR_RMA_ATTACH;
    default: return MPI_ERR_INTERN;
    }
}

/* The window's communicator: comm's group, a new context id, always fatal (its errors are
 * raised on the window instead). */
static int win_comm_make(MPI_Comm comm, MPI_Comm *out)
{
    crmpi_comm_xchg_set_t set = crmpi_comm_xchg_all(comm, CRMPI_COMM_TAG_CID);
    uint32_t *ranks = crmpi_comm_copy_ranks(comm->world_ranks, comm->size);
    uint32_t cid;
    MPI_Comm dup;
    int rc;

    if (!ranks)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    rc = crmpi_comm_alloc(comm, comm->size, ranks, &dup);
    if (rc != CRMPI_OK)
        return rc;
    crmpi_errhandler_retain(MPI_ERRORS_ARE_FATAL);
    crmpi_errhandler_release(dup->errhandler);
    dup->errhandler = MPI_ERRORS_ARE_FATAL;
    rc = crmpi_comm_cid_agree(&set, 1, &cid);
    if (rc == CRMPI_OK)
        rc = crmpi_comm_activate(dup, &cid);
    if (rc != CRMPI_OK) {
        crmpi_comm_destroy(dup);
        return rc;
    }
    snprintf(dup->name, sizeof(dup->name), "a window's communicator");
    *out = dup;
    return CRMPI_OK;
}

static void win_comm_free(MPI_Comm comm)
{
    /* With requests still live (a request form the application has not waited for), the
     * PML calls crmpi_mpi_comm_bury after the last. */
    if (crmpi_pml_comm_release(comm->pml))
        crmpi_comm_destroy(comm);
}

int crmpi_win_create(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                     int flavor, bool shm_noncontig, MPI_Win *win_out, const char *func_name)
{
    struct crmpi_win_s *win;
    crmpi_osc_win_params_t params;
    int rc;

    if (!crmpi_mpi_comm_is_valid(comm) || comm->inter)
        return crmpi_mpi_errhandler_invoke(comm->inter ? comm : MPI_COMM_NULL, MPI_ERR_COMM,
                                           func_name, "windows need an intracommunicator");
    if (win_out == NULL)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "win is NULL");
    if (size < 0)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_SIZE, func_name, "size is negative");
    if (disp_unit <= 0)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_DISP, func_name,
                                           "disp_unit must be positive");
    win = calloc(1, sizeof(*win));
    if (win) {
        win->locks = calloc((size_t)comm->size, sizeof(win->locks[0]));
        win->nocheck = calloc((size_t)comm->size, sizeof(win->nocheck[0]));
        win->started = calloc((size_t)comm->size, sizeof(win->started[0]));
    }
    if (win && info != MPI_INFO_NULL)
        win->info = crmpi_info_copy(info);
    if (!win || !win->locks || !win->nocheck || !win->started ||
        (info != MPI_INFO_NULL && !win->info)) {
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto err_free_win;
    }
    if (flavor == MPI_WIN_FLAVOR_ALLOCATE) {
        /* Aligned for any basic type, and never NULL (MPI_Win_get_attr gives it). */
        if (posix_memalign(&base, 64, size ? (size_t)size : 1) != 0) {
            crmpi_log_error("%s: out of memory allocating %td bytes", func_name, size);
            rc = CRMPI_ERR_OUT_OF_RESOURCE;
            goto err_free_win;
        }
        win->owns_base = true;
    } else if (flavor == MPI_WIN_FLAVOR_SHARED) {
        rc = crmpi_win_shm_alloc(comm, size, disp_unit, shm_noncontig, &win->shm, &base);
        if (rc != CRMPI_OK)
            goto err_free_win;
    }
    win->base = base;
    win->size = size;
    win->disp_unit = disp_unit;
    win->disp_unit_attr = disp_unit <= INT_MAX ? (int)disp_unit : 0;
    win->flavor = flavor;
    win->errhandler = MPI_ERRORS_ARE_FATAL;
    rc = win_comm_make(comm, &win->comm);
    if (rc != CRMPI_OK)
        goto err_free_base;
    params = (crmpi_osc_win_params_t){
        .pml = win->comm->pml,
        .coll = win->comm->coll,
        .rank = win->comm->rank,
        .size = win->comm->size,
        .base = base,
        .nbytes = (size_t)size,
        .disp_unit = disp_unit,
        .dynamic = flavor == MPI_WIN_FLAVOR_DYNAMIC,
    };
    rc = crmpi_osc_win_create(&params, &win->osc);
    if (rc != CRMPI_OK)
        goto err_free_comm;
    *win_out = win;
    crmpi_unlock();
    return MPI_SUCCESS;

err_free_comm:
    win_comm_free(win->comm);
err_free_base:
    if (win->owns_base)
        free(win->base);
    if (win->shm)
        crmpi_win_shm_free(win->shm);
err_free_win:
    if (win) {
        if (win->info)
            crmpi_info_destroy(win->info);
        free(win->locks);
        free(win->nocheck);
        free(win->started);
    }
    free(win);
    return crmpi_mpi_errhandler_invoke(comm, crmpi_win_error_class(rc), func_name,
                                       "cannot make the window");
}

/* MPI_Win_create and MPI_Win_create_c: the int form widens its disp_unit. */
static int win_create_user(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                           MPI_Comm comm, MPI_Win *win, const char *func_name)
{
    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    return crmpi_win_create(base, size, disp_unit, info, comm, MPI_WIN_FLAVOR_CREATE, false, win,
                            func_name);
}

int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                    MPI_Win *win)
{
    return win_create_user(base, size, disp_unit, info, comm, win, "MPI_Win_create");
}

int PMPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                      MPI_Win *win)
{
    return win_create_user(base, size, disp_unit, info, comm, win, "MPI_Win_create_c");
}

/* MPI_Win_allocate and MPI_Win_allocate_c. */
static int win_allocate(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                        void *baseptr, MPI_Win *win, const char *func_name)
{
    int err;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (baseptr == NULL)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "baseptr is NULL");
    err = crmpi_win_create(NULL, size, disp_unit, info, comm, MPI_WIN_FLAVOR_ALLOCATE, false, win,
                           func_name);
    if (err == MPI_SUCCESS)
        *(void **)baseptr = (*win)->base;
    return err;
}

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                      MPI_Win *win)
{
    return win_allocate(size, disp_unit, info, comm, baseptr, win, "MPI_Win_allocate");
}

int PMPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                        void *baseptr, MPI_Win *win)
{
    return win_allocate(size, disp_unit, info, comm, baseptr, win, "MPI_Win_allocate_c");
}

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    crmpi_lock();
    crmpi_mpi_require_active("MPI_Win_create_dynamic");
    return crmpi_win_create(MPI_BOTTOM, 0, 1, info, comm, MPI_WIN_FLAVOR_DYNAMIC, false, win,
                            "MPI_Win_create_dynamic");
}

int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    static const char func_name[] = "MPI_Win_attach";
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (win == MPI_WIN_NULL)
        return crmpi_win_raise(MPI_WIN_NULL, MPI_ERR_WIN, func_name, NULL);
    if (win->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return crmpi_win_raise(win, MPI_ERR_RMA_FLAVOR, func_name, "the window is not dynamic");
    if (size < 0)
        return crmpi_win_raise(win, MPI_ERR_SIZE, func_name, "size is negative");
    rc = crmpi_osc_attach(win->osc, base, (size_t)size);
    if (rc != CRMPI_OK)
        return crmpi_win_raise(win, crmpi_win_error_class(rc), func_name, NULL);
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Win_detach(MPI_Win win, const void *base)
{
    static const char func_name[] = "MPI_Win_detach";
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (win == MPI_WIN_NULL)
        return crmpi_win_raise(MPI_WIN_NULL, MPI_ERR_WIN, func_name, NULL);
    if (win->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return crmpi_win_raise(win, MPI_ERR_RMA_FLAVOR, func_name, "the window is not dynamic");
    rc = crmpi_osc_detach(win->osc, base);
    if (rc != CRMPI_OK)
        return crmpi_win_raise(win, MPI_ERR_RMA_ATTACH, func_name,
                               "no memory was attached at that address");
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Win_free(MPI_Win *win)
{
    static const char func_name[] = "MPI_Win_free";
    struct crmpi_win_s *w;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (win == NULL || *win == MPI_WIN_NULL)
        return crmpi_win_raise(MPI_WIN_NULL, MPI_ERR_WIN, func_name, "win is NULL");
    w = *win;
    if (w->num_locks || w->lock_all || w->access || w->exposure)
        return crmpi_win_raise(w, MPI_ERR_RMA_SYNC, func_name,
                               "an epoch is still open (MPI-3.1 section 11.2.5)");
    /* Delete callbacks first, while the window is still whole (MPI-3.1 section 6.7.3). */
    rc = crmpi_win_attr_delete_all(w);
    if (rc != MPI_SUCCESS)
        return crmpi_win_raise(w, rc, func_name, "an attribute's delete callback failed");
    rc = crmpi_osc_win_destroy(w->osc);
    win_comm_free(w->comm);
    if (w->owns_base)
        free(w->base);
    if (w->shm)
        crmpi_win_shm_free(w->shm); /* after the barrier of destroy: no rank uses it any more */
    crmpi_errhandler_release(w->errhandler);
    if (w->info)
        crmpi_info_destroy(w->info);
    free(w->locks);
    free(w->nocheck);
    free(w->started);
    free(w);
    *win = MPI_WIN_NULL;
    if (rc != CRMPI_OK)
        return crmpi_win_raise(MPI_WIN_NULL, crmpi_win_error_class(rc), func_name, NULL);
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    static const char func_name[] = "MPI_Win_get_group";
    uint32_t *ranks;
    MPI_Group made;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (win == MPI_WIN_NULL)
        return crmpi_win_raise(MPI_WIN_NULL, MPI_ERR_WIN, func_name, NULL);
    if (group == NULL)
        return crmpi_win_raise(win, MPI_ERR_ARG, func_name, "group is NULL");
    ranks = crmpi_comm_copy_ranks(win->comm->world_ranks, win->comm->size);
    made = ranks ? crmpi_group_new(win->comm->size, ranks) : NULL;
    if (!made)
        return crmpi_win_raise(win, MPI_ERR_NO_MEM, func_name, NULL);
    *group = made;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Win_set_name(MPI_Win win, const char *win_name)
{
    static const char func_name[] = "MPI_Win_set_name";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (win == MPI_WIN_NULL)
        return crmpi_win_raise(MPI_WIN_NULL, MPI_ERR_WIN, func_name, NULL);
    if (win_name == NULL)
        return crmpi_win_raise(win, MPI_ERR_ARG, func_name, "win_name is NULL");
    snprintf(win->name, sizeof(win->name), "%s", win_name);
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    static const char func_name[] = "MPI_Win_get_name";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (win == MPI_WIN_NULL)
        return crmpi_win_raise(MPI_WIN_NULL, MPI_ERR_WIN, func_name, NULL);
    if (win_name == NULL || resultlen == NULL)
        return crmpi_win_raise(win, MPI_ERR_ARG, func_name, "win_name or resultlen is NULL");
    snprintf(win_name, MPI_MAX_OBJECT_NAME, "%s", win->name);
    *resultlen = (int)strlen(win_name);
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *win_errhandler_fn,
                               MPI_Errhandler *errhandler)
{
    static const char func_name[] = "MPI_Win_create_errhandler";
    MPI_Errhandler handler;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (win_errhandler_fn == NULL || errhandler == NULL)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "win_errhandler_fn or errhandler is NULL");
    handler = crmpi_errhandler_new_user(&(struct crmpi_errhandler_s){
        .win_fn = win_errhandler_fn, .name = "a user window error handler"});
    if (!handler)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_NO_MEM, func_name, NULL);
    *errhandler = handler;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    static const char func_name[] = "MPI_Win_set_errhandler";
    MPI_Errhandler old;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (win == MPI_WIN_NULL)
        return crmpi_win_raise(MPI_WIN_NULL, MPI_ERR_WIN, func_name, NULL);
    if (errhandler == MPI_ERRHANDLER_NULL ||
        (errhandler->kind == CRMPI_ERRHANDLER_USER && !errhandler->win_fn))
        return crmpi_win_raise(win, MPI_ERR_ARG, func_name,
                               "not a window's error handler (MPI-3.1 section 8.3.2)");
    old = win->errhandler;
    crmpi_errhandler_retain(errhandler);
    win->errhandler = errhandler;
    crmpi_errhandler_release(old);
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    static const char func_name[] = "MPI_Win_get_errhandler";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (win == MPI_WIN_NULL)
        return crmpi_win_raise(MPI_WIN_NULL, MPI_ERR_WIN, func_name, NULL);
    if (errhandler == NULL)
        return crmpi_win_raise(win, MPI_ERR_ARG, func_name, "errhandler is NULL");
    crmpi_errhandler_retain(win->errhandler);
    *errhandler = win->errhandler;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    static const char func_name[] = "MPI_Win_call_errhandler";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (win == MPI_WIN_NULL)
        return crmpi_win_raise(MPI_WIN_NULL, MPI_ERR_WIN, func_name, NULL);
    crmpi_win_raise(win, errorcode, func_name, "raised by the application");
    return MPI_SUCCESS;
}

int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    static const char func_name[] = "MPI_Win_set_info";
    struct crmpi_info_s *copy;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (win == MPI_WIN_NULL)
        return crmpi_win_raise(MPI_WIN_NULL, MPI_ERR_WIN, func_name, NULL);
    if (info == MPI_INFO_NULL)
        return crmpi_win_raise(win, MPI_ERR_INFO, func_name, "info is MPI_INFO_NULL");
    copy = crmpi_info_copy(info);
    if (!copy)
        return crmpi_win_raise(win, MPI_ERR_NO_MEM, func_name, NULL);
    if (win->info)
        crmpi_info_destroy(win->info);
    win->info = copy;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    static const char func_name[] = "MPI_Win_get_info";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (win == MPI_WIN_NULL)
        return crmpi_win_raise(MPI_WIN_NULL, MPI_ERR_WIN, func_name, NULL);
    if (info_used == NULL)
        return crmpi_win_raise(win, MPI_ERR_ARG, func_name, "info_used is NULL");
    /* Always a new object, which the application frees (MPI-3.1 section 11.2.7), with the
     * hints in use: those given, and the defaults of the two with one (section 11.2.1),
     * which are what osc does (accumulates applied in order, any op). */
    *info_used = crmpi_info_copy(win->info);
    if (*info_used &&
        (crmpi_info_set_default(*info_used, "accumulate_ordering", "rar,raw,war,waw") !=
             MPI_SUCCESS ||
         crmpi_info_set_default(*info_used, "accumulate_ops", "same_op_no_op") != MPI_SUCCESS)) {
        crmpi_info_destroy(*info_used);
        *info_used = NULL;
    }
    if (!*info_used)
        return crmpi_win_raise(win, MPI_ERR_NO_MEM, func_name, NULL);
    crmpi_unlock();
    return MPI_SUCCESS;
}
