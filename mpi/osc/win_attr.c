/*
 * win_attr.c: attributes cached on windows (MPI-3.1 section 6.7.3) and the predefined
 * ones (section 11.2.6): keyvals made by MPI_Win_create_keyval, values set, read and
 * deleted on any window, deleted by MPI_Win_free through the delete callbacks. Windows are
 * never duplicated, so the copy callbacks are kept and never called.
 *
 * The attributes of a window are a list in the window, in the order they were set.
 * Window keyvals are numbered from WIN_ATTR_KEYVAL_BASE, far above the communicators' and
 * the datatypes' keyvals, so that another object's keyval given to a window call is
 * MPI_ERR_KEYVAL rather than somebody else's attribute. A keyval lives while its handle or
 * any attribute uses it (MPI_Win_free_keyval drops the handle's reference).
 *
 * Callbacks are the application's code and may call MPI: they run with the lock released.
 * Errors of the keyval calls belong to no window: MPI_COMM_WORLD's handler decides.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "win_internal.h"

#pragma weak MPI_Win_create_keyval = PMPI_Win_create_keyval
#pragma weak MPI_Win_free_keyval = PMPI_Win_free_keyval
#pragma weak MPI_Win_set_attr = PMPI_Win_set_attr
#pragma weak MPI_Win_get_attr = PMPI_Win_get_attr
#pragma weak MPI_Win_delete_attr = PMPI_Win_delete_attr

/* The first window keyval: above the communicators' (small) and the datatypes' (1 << 20). */
#define WIN_ATTR_KEYVAL_BASE (1 << 21)

struct crmpi_win_attr_s {
    int keyval;                    /* whose callbacks apply */
    void *value;                   /* the application's value */
    struct crmpi_win_attr_s *next; /* the window's next attribute, in the order set */
};

typedef struct win_keyval {
    bool in_use;                             /* a keyval lives at this index */
    bool handle_freed;                       /* MPI_Win_free_keyval was called on it */
    int refcount;                            /* its handle (until freed) + attributes */
    MPI_Win_copy_attr_function *copy_fn;     /* NULL: never copied */
    MPI_Win_delete_attr_function *delete_fn; /* NULL: nothing to do */
    void *extra_state;                       /* passed to both */
} win_keyval_t;

static win_keyval_t *win_keyvals; /* index keyval - WIN_ATTR_KEYVAL_BASE */
static int win_num_keyvals;       /* entries allocated */

int crmpi_mpi_win_null_copy_fn(MPI_Win oldwin, int win_keyval, void *extra_state,
                               void *attribute_val_in, void *attribute_val_out, int *flag)
{
    (void)oldwin, (void)win_keyval, (void)extra_state, (void)attribute_val_in;
    (void)attribute_val_out;
    *flag = 0;
    return MPI_SUCCESS;
}

int crmpi_mpi_win_dup_fn(MPI_Win oldwin, int win_keyval, void *extra_state, void *attribute_val_in,
                         void *attribute_val_out, int *flag)
{
    (void)oldwin, (void)win_keyval, (void)extra_state;
    *(void **)attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

int crmpi_mpi_win_null_delete_fn(MPI_Win win, int win_keyval, void *attribute_val,
                                 void *extra_state)
{
    (void)win, (void)win_keyval, (void)attribute_val, (void)extra_state;
    return MPI_SUCCESS;
}

/* The live keyval, or NULL. */
static win_keyval_t *win_keyval_find(int keyval)
{
    if (keyval < WIN_ATTR_KEYVAL_BASE || keyval - WIN_ATTR_KEYVAL_BASE >= win_num_keyvals) {
        return NULL;
    }
    win_keyval_t *kv = &win_keyvals[keyval - WIN_ATTR_KEYVAL_BASE];

    return kv->in_use ? kv : NULL;
}

static void win_keyval_release(int keyval)
{
    win_keyval_t *kv = &win_keyvals[keyval - WIN_ATTR_KEYVAL_BASE];

    if (--kv->refcount == 0) {
        memset(kv, 0, sizeof(*kv));
    }
}

/* Call an attribute's delete callback, unlocked. @return its error */
static int win_attr_call_delete(MPI_Win win, const struct crmpi_win_attr_s *attr)
{
    win_keyval_t *kv = win_keyval_find(attr->keyval);
    int err;

    if (kv->delete_fn == NULL) {
        return MPI_SUCCESS;
    }
    crmpi_unlock();
    err = kv->delete_fn(win, attr->keyval, attr->value, kv->extra_state);
    crmpi_lock();
    return err;
}

int crmpi_win_attr_delete_all(MPI_Win win)
{
    /* In the order set (section 6.7.3 names no order). */
    while (win->attrs != NULL) {
        struct crmpi_win_attr_s *attr = win->attrs;
        int err = win_attr_call_delete(win, attr);

        if (err != MPI_SUCCESS) {
            return err;
        }
        win->attrs = attr->next;
        win_keyval_release(attr->keyval);
        free(attr);
    }
    return MPI_SUCCESS;
}

int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                           MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval,
                           void *extra_state)
{
    static const char func_name[] = "MPI_Win_create_keyval";
    int index;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (win_keyval == NULL) {
        return crmpi_win_raise(MPI_WIN_NULL, MPI_ERR_ARG, func_name, "win_keyval is NULL");
    }
    for (index = 0; index < win_num_keyvals; index++) {
        if (!win_keyvals[index].in_use) {
            break;
        }
    }
    if (index == win_num_keyvals) {
        int grown_num = win_num_keyvals ? 2 * win_num_keyvals : 16;
        win_keyval_t *grown = realloc(win_keyvals, (size_t)grown_num * sizeof(*grown));

        if (grown == NULL) {
            return crmpi_win_raise(MPI_WIN_NULL, MPI_ERR_NO_MEM, func_name, NULL);
        }
        memset(grown + win_num_keyvals, 0, (size_t)(grown_num - win_num_keyvals) * sizeof(*grown));
        win_keyvals = grown;
        win_num_keyvals = grown_num;
    }
    win_keyvals[index] = (win_keyval_t){
        .in_use = true,
        .refcount = 1,
        .copy_fn = win_copy_attr_fn,
        .delete_fn = win_delete_attr_fn,
        .extra_state = extra_state,
    };
    *win_keyval = WIN_ATTR_KEYVAL_BASE + index;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Win_free_keyval(int *win_keyval)
{
    static const char func_name[] = "MPI_Win_free_keyval";
    win_keyval_t *kv;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (win_keyval == NULL) {
        return crmpi_win_raise(MPI_WIN_NULL, MPI_ERR_ARG, func_name, "win_keyval is NULL");
    }
    kv = win_keyval_find(*win_keyval);
    /* Attributes may keep a freed handle's keyval alive: freeing it again is an error. */
    if (kv == NULL || kv->handle_freed) {
        return crmpi_win_raise(MPI_WIN_NULL, MPI_ERR_KEYVAL, func_name,
                               "no such window keyval (freed or never made)");
    }
    kv->handle_freed = true;
    win_keyval_release(*win_keyval);
    *win_keyval = MPI_KEYVAL_INVALID;
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* The checks of set, get and delete. @return MPI_SUCCESS (lock held) or the raised error. */
static int win_attr_check(MPI_Win win, int keyval, const char *func_name)
{
    if (win == MPI_WIN_NULL) {
        return crmpi_win_raise(MPI_WIN_NULL, MPI_ERR_WIN, func_name, "win is MPI_WIN_NULL");
    }
    if (win_keyval_find(keyval) == NULL) {
        return crmpi_win_raise(win, MPI_ERR_KEYVAL, func_name,
                               "no such window keyval (freed, never made, or a communicator's)");
    }
    return MPI_SUCCESS;
}

static struct crmpi_win_attr_s **win_attr_find(MPI_Win win, int keyval)
{
    struct crmpi_win_attr_s **pos = &win->attrs;

    while (*pos != NULL && (*pos)->keyval != keyval) {
        pos = &(*pos)->next;
    }
    return pos;
}

int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val)
{
    static const char func_name[] = "MPI_Win_set_attr";
    struct crmpi_win_attr_s **pos;
    struct crmpi_win_attr_s *attr;
    int err;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    err = win_attr_check(win, win_keyval, func_name);
    if (err != MPI_SUCCESS) {
        return err;
    }
    pos = win_attr_find(win, win_keyval);
    if (*pos != NULL) {
        /* A new value replaces the old one, which is deleted first (6.7.2). */
        err = win_attr_call_delete(win, *pos);
        if (err != MPI_SUCCESS) {
            return crmpi_win_raise(win, err, func_name,
                                   "the delete callback of the old value failed");
        }
        attr = *win_attr_find(win, win_keyval);
        if (attr != NULL) {
            attr->value = attribute_val;
            crmpi_unlock();
            return MPI_SUCCESS;
        }
        /* The callback deleted the attribute itself: set it anew. */
    }
    attr = malloc(sizeof(*attr));
    if (attr == NULL) {
        return crmpi_win_raise(win, MPI_ERR_NO_MEM, func_name, NULL);
    }
    *attr = (struct crmpi_win_attr_s){.keyval = win_keyval, .value = attribute_val};
    *win_attr_find(win, win_keyval) = attr;
    win_keyval_find(win_keyval)->refcount++;
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* MPI-3.1 section 11.2.6: the predefined attributes' values are pointers to values the
 * window keeps, but for MPI_WIN_BASE, whose value is the base address itself. */
int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag)
{
    static const char func_name[] = "MPI_Win_get_attr";
    static const int model = MPI_WIN_UNIFIED;
    struct crmpi_win_attr_s *attr;
    void *value = NULL;
    int err;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (win == MPI_WIN_NULL)
        return crmpi_win_raise(MPI_WIN_NULL, MPI_ERR_WIN, func_name, NULL);
    if (attribute_val == NULL || flag == NULL)
        return crmpi_win_raise(win, MPI_ERR_ARG, func_name, "attribute_val or flag is NULL");
    switch (win_keyval) {
    case MPI_WIN_BASE: value = win->base; break;
    case MPI_WIN_SIZE: value = &win->size; break;
    case MPI_WIN_DISP_UNIT:
        /* An int in C: a unit of MPI_Win_create_c beyond INT_MAX cannot be given. */
        if (win->disp_unit > INT_MAX)
            return crmpi_win_raise(win, MPI_ERR_ARG, func_name,
                                   "the window's disp_unit does not fit MPI_WIN_DISP_UNIT's int");
        value = &win->disp_unit_attr;
        break;
    case MPI_WIN_CREATE_FLAVOR: value = &win->flavor; break;
    /* Unified: a put lands in the window's one copy of the memory, which the target's
     * loads see once the put is complete (there is no separate public copy). */
    case MPI_WIN_MODEL: value = (void *)&model; break;
    default:
        err = win_attr_check(win, win_keyval, func_name);
        if (err != MPI_SUCCESS)
            return err;
        attr = *win_attr_find(win, win_keyval);
        *flag = attr != NULL;
        if (attr != NULL)
            *(void **)attribute_val = attr->value;
        crmpi_unlock();
        return MPI_SUCCESS;
    }
    *(void **)attribute_val = value;
    *flag = 1;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Win_delete_attr(MPI_Win win, int win_keyval)
{
    static const char func_name[] = "MPI_Win_delete_attr";
    struct crmpi_win_attr_s **pos;
    struct crmpi_win_attr_s *attr;
    int err;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    err = win_attr_check(win, win_keyval, func_name);
    if (err != MPI_SUCCESS) {
        return err;
    }
    attr = *win_attr_find(win, win_keyval);
    if (attr == NULL) {
        return crmpi_win_raise(win, MPI_ERR_KEYVAL, func_name,
                               "the attribute is not set on this window");
    }
    err = win_attr_call_delete(win, attr);
    if (err != MPI_SUCCESS) {
        return crmpi_win_raise(win, err, func_name, "the delete callback failed");
    }
    pos = win_attr_find(win, win_keyval);
    if (*pos == attr) {
        *pos = attr->next;
        win_keyval_release(win_keyval);
        free(attr);
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}
