/*
 * type_attr.c: attributes cached on datatypes (MPI-3.1 section 6.7.4): keyvals made by
 * MPI_Type_create_keyval, values set, read and deleted on any datatype (predefined ones
 * too), copied by MPI_Type_dup through the copy callbacks and deleted by MPI_Type_free
 * through the delete callbacks.
 *
 * The attributes of a type are a list in the maker's part of the engine's object
 * (datatype.h: attrs), in the order they were set. MPI_Type_free deletes them before it
 * drops the handle's reference: the object may outlive the handle (a pending request, a
 * derived type's record), the attributes do not (6.7.4: they are deleted when the type is
 * freed).
 *
 * Type keyvals are numbered from TYPE_ATTR_KEYVAL_BASE, far above the communicators' keyvals
 * (attr.c), so that a communicator's keyval given to a datatype call, or the reverse, is
 * MPI_ERR_KEYVAL rather than somebody else's attribute. A keyval lives while its handle or
 * any attribute uses it (MPI_Type_free_keyval drops the handle's reference).
 *
 * Callbacks are the application's code and may call MPI: they run with the lock released.
 * Errors belong to no communicator: MPI_COMM_WORLD's handler decides (section 8.3).
 */
#include <stdlib.h>
#include <string.h>

#include "type_internal.h"

#pragma weak MPI_Type_create_keyval = PMPI_Type_create_keyval
#pragma weak MPI_Type_free_keyval = PMPI_Type_free_keyval
#pragma weak MPI_Type_set_attr = PMPI_Type_set_attr
#pragma weak MPI_Type_get_attr = PMPI_Type_get_attr
#pragma weak MPI_Type_delete_attr = PMPI_Type_delete_attr

/* The first type keyval; communicators' keyvals are small integers (attr.c). */
#define TYPE_ATTR_KEYVAL_BASE (1 << 20)

struct crmpi_type_attr_s {
    int keyval;                     /* whose callbacks apply */
    void *value;                    /* the application's value */
    struct crmpi_type_attr_s *next; /* the type's next attribute, in the order set */
};

typedef struct type_keyval {
    bool in_use;                              /* a keyval lives at this index */
    bool handle_freed;                        /* MPI_Type_free_keyval was called on it */
    int refcount;                             /* its handle (until freed) + attributes */
    MPI_Type_copy_attr_function *copy_fn;     /* NULL: never copied */
    MPI_Type_delete_attr_function *delete_fn; /* NULL: nothing to do */
    void *extra_state;                        /* passed to both */
} type_keyval_t;

static type_keyval_t *type_keyvals; /* index keyval - TYPE_ATTR_KEYVAL_BASE */
static int type_num_keyvals;        /* entries allocated */

int crmpi_mpi_type_null_copy_fn(MPI_Datatype oldtype, int type_keyval, void *extra_state,
                                void *attribute_val_in, void *attribute_val_out, int *flag)
{
    (void)oldtype, (void)type_keyval, (void)extra_state, (void)attribute_val_in;
    (void)attribute_val_out;
    *flag = 0;
    return MPI_SUCCESS;
}

int crmpi_mpi_type_dup_fn(MPI_Datatype oldtype, int type_keyval, void *extra_state,
                          void *attribute_val_in, void *attribute_val_out, int *flag)
{
    (void)oldtype, (void)type_keyval, (void)extra_state;
    *(void **)attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

int crmpi_mpi_type_null_delete_fn(MPI_Datatype datatype, int type_keyval, void *attribute_val,
                                  void *extra_state)
{
    (void)datatype, (void)type_keyval, (void)attribute_val, (void)extra_state;
    return MPI_SUCCESS;
}

/* The live keyval, or NULL. */
static type_keyval_t *type_keyval_find(int keyval)
{
    if (keyval < TYPE_ATTR_KEYVAL_BASE || keyval - TYPE_ATTR_KEYVAL_BASE >= type_num_keyvals) {
        return NULL;
    }
    type_keyval_t *kv = &type_keyvals[keyval - TYPE_ATTR_KEYVAL_BASE];

    return kv->in_use ? kv : NULL;
}

static void type_keyval_release(int keyval)
{
    type_keyval_t *kv = &type_keyvals[keyval - TYPE_ATTR_KEYVAL_BASE];

    if (--kv->refcount == 0) {
        memset(kv, 0, sizeof(*kv));
    }
}

/* Call an attribute's delete callback, unlocked. @return its error */
static int type_attr_call_delete(MPI_Datatype type, const struct crmpi_type_attr_s *attr)
{
    type_keyval_t *kv = type_keyval_find(attr->keyval);
    int err;

    if (kv->delete_fn == NULL) {
        return MPI_SUCCESS;
    }
    crmpi_unlock();
    err = kv->delete_fn(type, attr->keyval, attr->value, kv->extra_state);
    crmpi_lock();
    return err;
}

int crmpi_type_attr_copy_all(MPI_Datatype oldtype, MPI_Datatype newtype)
{
    struct crmpi_type_attr_s **tail = &newtype->attrs;

    for (struct crmpi_type_attr_s *attr = oldtype->attrs; attr != NULL; attr = attr->next) {
        type_keyval_t *kv = type_keyval_find(attr->keyval);
        void *value_out = NULL;
        int flag = 0;
        int err;

        if (kv->copy_fn == NULL) {
            continue;
        }
        crmpi_unlock();
        err = kv->copy_fn(oldtype, attr->keyval, kv->extra_state, attr->value, &value_out, &flag);
        crmpi_lock();
        if (err != MPI_SUCCESS) {
            return err;
        }
        if (!flag) {
            continue;
        }
        struct crmpi_type_attr_s *copy = malloc(sizeof(*copy));

        if (copy == NULL) {
            return MPI_ERR_NO_MEM;
        }
        *copy = (struct crmpi_type_attr_s){.keyval = attr->keyval, .value = value_out};
        *tail = copy;
        tail = &copy->next;
        type_keyval_find(attr->keyval)->refcount++;
    }
    return MPI_SUCCESS;
}

int crmpi_type_attr_delete_all(MPI_Datatype type)
{
    /* In the order set, as MPI_Comm_free's are not required to be: 6.7.4 names no order. */
    while (type->attrs != NULL) {
        struct crmpi_type_attr_s *attr = type->attrs;
        int err = type_attr_call_delete(type, attr);

        if (err != MPI_SUCCESS) {
            return err;
        }
        type->attrs = attr->next;
        type_keyval_release(attr->keyval);
        free(attr);
    }
    return MPI_SUCCESS;
}

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                            MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
                            void *extra_state)
{
    static const char func_name[] = "MPI_Type_create_keyval";
    int index;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (type_keyval == NULL) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "type_keyval is NULL");
    }
    for (index = 0; index < type_num_keyvals; index++) {
        if (!type_keyvals[index].in_use) {
            break;
        }
    }
    if (index == type_num_keyvals) {
        int grown_num = type_num_keyvals ? 2 * type_num_keyvals : 16;
        type_keyval_t *grown = realloc(type_keyvals, (size_t)grown_num * sizeof(*grown));

        if (grown == NULL) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_NO_MEM, func_name, NULL);
        }
        memset(grown + type_num_keyvals, 0,
               (size_t)(grown_num - type_num_keyvals) * sizeof(*grown));
        type_keyvals = grown;
        type_num_keyvals = grown_num;
    }
    type_keyvals[index] = (type_keyval_t){
        .in_use = true,
        .refcount = 1,
        .copy_fn = type_copy_attr_fn,
        .delete_fn = type_delete_attr_fn,
        .extra_state = extra_state,
    };
    *type_keyval = TYPE_ATTR_KEYVAL_BASE + index;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Type_free_keyval(int *type_keyval)
{
    static const char func_name[] = "MPI_Type_free_keyval";
    type_keyval_t *kv;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (type_keyval == NULL) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "type_keyval is NULL");
    }
    kv = type_keyval_find(*type_keyval);
    /* Attributes may keep a freed handle's keyval alive: freeing it again is an error. */
    if (kv == NULL || kv->handle_freed) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_KEYVAL, func_name,
                                           "no such datatype keyval (freed or never made)");
    }
    kv->handle_freed = true;
    type_keyval_release(*type_keyval);
    *type_keyval = MPI_KEYVAL_INVALID;
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* The checks of set, get and delete. @return MPI_SUCCESS (lock held) or the raised error. */
static int type_attr_check(MPI_Datatype type, int keyval, const char *func_name)
{
    if (type == MPI_DATATYPE_NULL) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_TYPE, func_name,
                                           "datatype is MPI_DATATYPE_NULL");
    }
    if (type_keyval_find(keyval) == NULL) {
        return crmpi_mpi_errhandler_invoke(
            MPI_COMM_NULL, MPI_ERR_KEYVAL, func_name,
            "no such datatype keyval (freed, never made, or a communicator's)");
    }
    return MPI_SUCCESS;
}

static struct crmpi_type_attr_s **type_attr_find(MPI_Datatype type, int keyval)
{
    struct crmpi_type_attr_s **pos = &type->attrs;

    while (*pos != NULL && (*pos)->keyval != keyval) {
        pos = &(*pos)->next;
    }
    return pos;
}

int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val)
{
    static const char func_name[] = "MPI_Type_set_attr";
    struct crmpi_type_attr_s **pos;
    struct crmpi_type_attr_s *attr;
    int err;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    err = type_attr_check(datatype, type_keyval, func_name);
    if (err != MPI_SUCCESS) {
        return err;
    }
    pos = type_attr_find(datatype, type_keyval);
    if (*pos != NULL) {
        /* A new value replaces the old one, which is deleted first (6.7.2). */
        err = type_attr_call_delete(datatype, *pos);
        if (err != MPI_SUCCESS) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, err, func_name,
                                               "the delete callback of the old value failed");
        }
        attr = *type_attr_find(datatype, type_keyval);
        if (attr != NULL) {
            attr->value = attribute_val;
            crmpi_unlock();
            return MPI_SUCCESS;
        }
        /* The callback deleted the attribute itself: set it anew. */
    }
    attr = malloc(sizeof(*attr));
    if (attr == NULL) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_NO_MEM, func_name, NULL);
    }
    *attr = (struct crmpi_type_attr_s){.keyval = type_keyval, .value = attribute_val};
    *type_attr_find(datatype, type_keyval) = attr;
    type_keyval_find(type_keyval)->refcount++;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag)
{
    static const char func_name[] = "MPI_Type_get_attr";
    struct crmpi_type_attr_s *attr;
    int err;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (attribute_val == NULL || flag == NULL) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "attribute_val or flag is NULL");
    }
    err = type_attr_check(datatype, type_keyval, func_name);
    if (err != MPI_SUCCESS) {
        return err;
    }
    attr = *type_attr_find(datatype, type_keyval);
    *flag = attr != NULL;
    if (attr != NULL) {
        *(void **)attribute_val = attr->value;
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval)
{
    static const char func_name[] = "MPI_Type_delete_attr";
    struct crmpi_type_attr_s **pos;
    struct crmpi_type_attr_s *attr;
    int err;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    err = type_attr_check(datatype, type_keyval, func_name);
    if (err != MPI_SUCCESS) {
        return err;
    }
    attr = *type_attr_find(datatype, type_keyval);
    if (attr == NULL) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_KEYVAL, func_name,
                                           "the attribute is not set on this datatype");
    }
    err = type_attr_call_delete(datatype, attr);
    if (err != MPI_SUCCESS) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, err, func_name,
                                           "the delete callback failed");
    }
    pos = type_attr_find(datatype, type_keyval);
    if (*pos == attr) {
        *pos = attr->next;
        type_keyval_release(type_keyval);
        free(attr);
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}
