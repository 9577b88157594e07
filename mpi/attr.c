/*
 * attr.c: keyvals and attributes cached on communicators (MPI-3.1 section 6.7), the
 * deprecated MPI-1 names of the same calls, and the predefined attributes of
 * MPI_COMM_WORLD (section 8.1.2).
 *
 * A keyval is an index into a table of callbacks; it lives while its handle or any
 * attribute uses it (MPI_Comm_free_keyval only drops the handle's reference, 6.7.2).
 * Attributes are a short list per communicator. Callbacks are the application's code and
 * may call MPI: they run with the library lock released.
 */
#include <stdlib.h>
#include <string.h>

#include "comm_internal.h"
#include "log.h"
#include "p2p/p2p_internal.h"

#pragma weak MPI_Comm_create_keyval = PMPI_Comm_create_keyval
#pragma weak MPI_Comm_free_keyval = PMPI_Comm_free_keyval
#pragma weak MPI_Comm_set_attr = PMPI_Comm_set_attr
#pragma weak MPI_Comm_get_attr = PMPI_Comm_get_attr
#pragma weak MPI_Comm_delete_attr = PMPI_Comm_delete_attr
#pragma weak MPI_Keyval_create = PMPI_Keyval_create
#pragma weak MPI_Keyval_free = PMPI_Keyval_free
#pragma weak MPI_Attr_put = PMPI_Attr_put
#pragma weak MPI_Attr_get = PMPI_Attr_get
#pragma weak MPI_Attr_delete = PMPI_Attr_delete

/* Keyvals below this are the predefined attribute keys of mpi.h (MPI_TAG_UB...). */
#define ATTR_FIRST_USER_KEYVAL 16

struct crmpi_attr_s {
    int keyval;                /* whose callbacks apply */
    void *value;               /* the application's value */
    struct crmpi_attr_s *next; /* the communicator's next attribute */
};

typedef struct attr_keyval {
    bool in_use;                              /* a keyval lives at this index */
    bool handle_freed;                        /* MPI_Comm_free_keyval was called on it */
    int refcount;                             /* its handle (until freed) + attributes */
    MPI_Comm_copy_attr_function *copy_fn;     /* NULL: never copied */
    MPI_Comm_delete_attr_function *delete_fn; /* NULL: nothing to do */
    void *extra_state;                        /* passed to both */
} attr_keyval_t;

static attr_keyval_t *attr_keyvals; /* indexed by keyval */
static int attr_num_keyvals;        /* entries allocated */

/* Values of the predefined attributes (section 8.1.2), set from the job facts. */
static int attr_tag_ub = CRMPI_P2P_TAG_UB;
static int attr_host = MPI_PROC_NULL; /* no process is "the host" */
static int attr_io = MPI_ANY_SOURCE;  /* every process can do I/O */
static int attr_wtime_is_global = 0;  /* clocks of different nodes are not synchronised */
static int attr_appnum = 0;           /* one application (no MPMD launch) */
static int attr_universe_size;        /* the job's size: nothing can be spawned */
static int attr_lastusedcode;         /* crmpi_mpi_error_last_used(), when read */

int crmpi_mpi_comm_null_copy_fn(MPI_Comm oldcomm, int comm_keyval, void *extra_state,
                                void *attribute_val_in, void *attribute_val_out, int *flag)
{
    (void)oldcomm, (void)comm_keyval, (void)extra_state, (void)attribute_val_in;
    (void)attribute_val_out;
    *flag = 0;
    return MPI_SUCCESS;
}

int crmpi_mpi_comm_dup_fn(MPI_Comm oldcomm, int comm_keyval, void *extra_state,
                          void *attribute_val_in, void *attribute_val_out, int *flag)
{
    (void)oldcomm, (void)comm_keyval, (void)extra_state;
    *(void **)attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

int crmpi_mpi_comm_null_delete_fn(MPI_Comm comm, int comm_keyval, void *attribute_val,
                                  void *extra_state)
{
    (void)comm, (void)comm_keyval, (void)attribute_val, (void)extra_state;
    return MPI_SUCCESS;
}

/* The live keyval, or NULL. */
static attr_keyval_t *attr_keyval_find(int keyval)
{
    if (keyval < ATTR_FIRST_USER_KEYVAL || keyval >= attr_num_keyvals ||
        !attr_keyvals[keyval].in_use)
        return NULL;
    return &attr_keyvals[keyval];
}

static void attr_keyval_release(int keyval)
{
    attr_keyval_t *kv = &attr_keyvals[keyval];

    if (--kv->refcount == 0)
        memset(kv, 0, sizeof(*kv));
}

/* A predefined key of MPI_COMM_WORLD: its value's address, else NULL. */
static int *attr_predefined(MPI_Comm comm, int keyval)
{
    if (comm != MPI_COMM_WORLD)
        return NULL;
    attr_universe_size = (int)crmpi_rte_job()->size;
    attr_lastusedcode = crmpi_mpi_error_last_used();
    switch (keyval) {
    case MPI_TAG_UB: return &attr_tag_ub;
    case MPI_HOST: return &attr_host;
    case MPI_IO: return &attr_io;
    case MPI_WTIME_IS_GLOBAL: return &attr_wtime_is_global;
    case MPI_APPNUM: return &attr_appnum;
    case MPI_UNIVERSE_SIZE: return &attr_universe_size;
    case MPI_LASTUSEDCODE: return &attr_lastusedcode;
    default: return NULL;
    }
}

/* Call a delete callback, unlocked. */
static int attr_call_delete(MPI_Comm comm, const struct crmpi_attr_s *attr)
{
    attr_keyval_t *kv = &attr_keyvals[attr->keyval];
    int err;

    if (!kv->delete_fn)
        return MPI_SUCCESS;
    crmpi_unlock();
    err = kv->delete_fn(comm, attr->keyval, attr->value, kv->extra_state);
    crmpi_lock();
    return err;
}

int crmpi_attr_copy_all(MPI_Comm oldcomm, MPI_Comm newcomm)
{
    struct crmpi_attr_s **tail = &newcomm->attrs;

    for (struct crmpi_attr_s *attr = oldcomm->attrs; attr; attr = attr->next) {
        attr_keyval_t *kv = &attr_keyvals[attr->keyval];
        void *value_out = NULL;
        int flag = 0, err;

        if (!kv->copy_fn)
            continue;
        crmpi_unlock();
        err = kv->copy_fn(oldcomm, attr->keyval, kv->extra_state, attr->value, &value_out, &flag);
        crmpi_lock();
        if (err != MPI_SUCCESS)
            return err;
        if (!flag)
            continue;
        struct crmpi_attr_s *copy = malloc(sizeof(*copy));
        if (!copy)
            return MPI_ERR_NO_MEM;
        /* Kept in the old one's order, so that Comm_free deletes in the same order. */
        copy->keyval = attr->keyval;
        copy->value = value_out;
        copy->next = NULL;
        *tail = copy;
        tail = &copy->next;
        kv->refcount++;
    }
    return MPI_SUCCESS;
}

/* Reverse a list of attributes in place. */
static struct crmpi_attr_s *attr_list_reverse(struct crmpi_attr_s *head)
{
    struct crmpi_attr_s *reversed = NULL;

    while (head) {
        struct crmpi_attr_s *next = head->next;
        head->next = reversed;
        reversed = head;
        head = next;
    }
    return reversed;
}

/* Last set, first deleted: MPI-2.2 made that order a requirement for MPI_COMM_SELF at
 * MPI_Finalize (tools use it as an atexit), and it is as good as any for MPI_Comm_free. */
int crmpi_attr_delete_all(MPI_Comm comm)
{
    comm->attrs = attr_list_reverse(comm->attrs);
    while (comm->attrs) {
        struct crmpi_attr_s *attr = comm->attrs;
        int err = attr_call_delete(comm, attr);

        if (err != MPI_SUCCESS) {
            /* The communicator stays, with its remaining attributes in their order. */
            comm->attrs = attr_list_reverse(comm->attrs);
            return err;
        }
        comm->attrs = attr->next;
        attr_keyval_release(attr->keyval);
        free(attr);
    }
    return MPI_SUCCESS;
}

/* The body of MPI_Comm_create_keyval and MPI_Keyval_create. */
static int attr_create_keyval(MPI_Comm_copy_attr_function *copy_fn,
                              MPI_Comm_delete_attr_function *delete_fn, int *keyval,
                              void *extra_state, const char *func_name)
{
    int index;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (keyval == NULL)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name, "keyval is NULL");
    for (index = ATTR_FIRST_USER_KEYVAL; index < attr_num_keyvals; index++) {
        if (!attr_keyvals[index].in_use)
            break;
    }
    if (index >= attr_num_keyvals) {
        int new_num = attr_num_keyvals ? 2 * attr_num_keyvals : 64;
        attr_keyval_t *grown = realloc(attr_keyvals, (size_t)new_num * sizeof(*grown));
        if (!grown)
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_NO_MEM, func_name, NULL);
        memset(grown + attr_num_keyvals, 0, (size_t)(new_num - attr_num_keyvals) * sizeof(*grown));
        attr_keyvals = grown;
        index =
            attr_num_keyvals > ATTR_FIRST_USER_KEYVAL ? attr_num_keyvals : ATTR_FIRST_USER_KEYVAL;
        attr_num_keyvals = new_num;
    }
    attr_keyvals[index] = (attr_keyval_t){
        .in_use = true,
        .refcount = 1,
        .copy_fn = copy_fn,
        .delete_fn = delete_fn,
        .extra_state = extra_state,
    };
    *keyval = index;
    crmpi_unlock();
    return MPI_SUCCESS;
}

static int attr_free_keyval(int *keyval, const char *func_name)
{
    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (keyval == NULL)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name, "keyval is NULL");
    /* A keyval whose handle was freed may live on while attributes hold it: freeing the
     * handle again (through a copy of the integer) is an error, not another release. */
    if (!attr_keyval_find(*keyval) || attr_keyvals[*keyval].handle_freed)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_KEYVAL, func_name,
                                           "no such keyval (predefined, freed or never made)");
    attr_keyvals[*keyval].handle_freed = true;
    attr_keyval_release(*keyval);
    *keyval = MPI_KEYVAL_INVALID;
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* Checks shared by set, get and delete: comm valid, keyval live. */
static int attr_check(MPI_Comm comm, int keyval, bool predefined_ok, const char *func_name)
{
    if (!crmpi_mpi_comm_is_valid(comm))
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
    if (attr_keyval_find(keyval) == NULL && !(predefined_ok && attr_predefined(comm, keyval)))
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_KEYVAL, func_name,
                                           keyval >= 0 && keyval < ATTR_FIRST_USER_KEYVAL
                                               ? "a predefined keyval cannot be set or deleted"
                                               : "no such keyval (freed or never made)");
    return MPI_SUCCESS;
}

static struct crmpi_attr_s **attr_find(MPI_Comm comm, int keyval)
{
    struct crmpi_attr_s **pos = &comm->attrs;

    while (*pos && (*pos)->keyval != keyval)
        pos = &(*pos)->next;
    return pos;
}

static int attr_set(MPI_Comm comm, int keyval, void *value, const char *func_name)
{
    struct crmpi_attr_s **pos, *attr;
    int err;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    err = attr_check(comm, keyval, false, func_name);
    if (err != MPI_SUCCESS)
        return err;
    pos = attr_find(comm, keyval);
    if (*pos) {
        /* A new value replaces the old one, which is deleted first (6.7.2). */
        err = attr_call_delete(comm, *pos);
        if (err != MPI_SUCCESS)
            return crmpi_mpi_errhandler_invoke(comm, err, func_name,
                                               "the delete callback of the old value failed");
        (*attr_find(comm, keyval))->value = value;
        crmpi_unlock();
        return MPI_SUCCESS;
    }
    attr = malloc(sizeof(*attr));
    if (!attr)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_NO_MEM, func_name, NULL);
    attr->keyval = keyval;
    attr->value = value;
    attr->next = NULL;
    *pos = attr; /* appended: copies go in the order of setting, deletes in reverse */
    attr_keyvals[keyval].refcount++;
    crmpi_unlock();
    return MPI_SUCCESS;
}

static int attr_get(MPI_Comm comm, int keyval, void *value_out, int *flag, const char *func_name)
{
    struct crmpi_attr_s *attr;
    int *predefined;
    int err;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (value_out == NULL || flag == NULL)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name,
                                           "attribute_val or flag is NULL");
    predefined = attr_predefined(comm, keyval);
    if (predefined) {
        *(void **)value_out = predefined;
        *flag = 1;
        crmpi_unlock();
        return MPI_SUCCESS;
    }
    /* A predefined key on another communicator is simply not set there. */
    if (keyval >= 0 && keyval < ATTR_FIRST_USER_KEYVAL && crmpi_mpi_comm_is_valid(comm)) {
        *flag = 0;
        crmpi_unlock();
        return MPI_SUCCESS;
    }
    err = attr_check(comm, keyval, false, func_name);
    if (err != MPI_SUCCESS)
        return err;
    attr = *attr_find(comm, keyval);
    *flag = attr != NULL;
    if (attr)
        *(void **)value_out = attr->value;
    crmpi_unlock();
    return MPI_SUCCESS;
}

static int attr_delete(MPI_Comm comm, int keyval, const char *func_name)
{
    struct crmpi_attr_s **pos, *attr;
    int err;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    err = attr_check(comm, keyval, false, func_name);
    if (err != MPI_SUCCESS)
        return err;
    attr = *attr_find(comm, keyval);
    if (!attr)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_KEYVAL, func_name,
                                           "the attribute is not set on this communicator");
    err = attr_call_delete(comm, attr);
    if (err != MPI_SUCCESS)
        return crmpi_mpi_errhandler_invoke(comm, err, func_name, "the delete callback failed");
    pos = attr_find(comm, keyval);
    if (*pos == attr) {
        *pos = attr->next;
        attr_keyval_release(keyval);
        free(attr);
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                            void *extra_state)
{
    return attr_create_keyval(comm_copy_attr_fn, comm_delete_attr_fn, comm_keyval, extra_state,
                              "MPI_Comm_create_keyval");
}

int PMPI_Comm_free_keyval(int *comm_keyval)
{
    return attr_free_keyval(comm_keyval, "MPI_Comm_free_keyval");
}

int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
    return attr_set(comm, comm_keyval, attribute_val, "MPI_Comm_set_attr");
}

int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag)
{
    return attr_get(comm, comm_keyval, attribute_val, flag, "MPI_Comm_get_attr");
}

int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
    return attr_delete(comm, comm_keyval, "MPI_Comm_delete_attr");
}

/* The MPI-1 callbacks have the same C signatures as the MPI-2 ones. */
int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                       void *extra_state)
{
    return attr_create_keyval(copy_fn, delete_fn, keyval, extra_state, "MPI_Keyval_create");
}

int PMPI_Keyval_free(int *keyval)
{
    return attr_free_keyval(keyval, "MPI_Keyval_free");
}

int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    return attr_set(comm, keyval, attribute_val, "MPI_Attr_put");
}

int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    return attr_get(comm, keyval, attribute_val, flag, "MPI_Attr_get");
}

int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
    return attr_delete(comm, keyval, "MPI_Attr_delete");
}
