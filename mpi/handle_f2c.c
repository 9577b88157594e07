/*
 * handle_f2c.c: the handle conversion calls MPI_<Object>_c2f and MPI_<Object>_f2c
 * (MPI-3.1 section 17.2.4) for communicators, datatypes, groups, requests, ops, info
 * objects, error handlers, messages, windows and sessions.
 *
 * crmpi has no Fortran bindings, but C programs and libraries convert handles to MPI_Fint
 * to store them in integer fields or hand them to Fortran code built elsewhere. A C handle
 * is a pointer, a Fortran handle an int, so each kind of object has a table: index -> handle
 * (an array) and handle -> index (an open-addressing hash). Index 0 is the null handle of
 * every kind, so MPI_Comm_c2f(MPI_COMM_NULL) is 0 and MPI_Comm_f2c(0) is MPI_COMM_NULL; a
 * handle gets the next index the first time it is converted, and keeps it for the life of
 * the process. A freed object's index then names its address: converting an index whose
 * object was freed is erroneous, as it would be in Fortran. An index that was never given
 * converts to the null handle (the standard asks for "an invalid handle").
 *
 * The conversions may be called at any time, also outside MPI_Init .. MPI_Finalize (a
 * library converting its handles at load time): they only take the library lock.
 */
#include <stdint.h>
#include <stdlib.h>

#include "log.h"
#include "mpi_internal.h"

#pragma weak MPI_Comm_c2f = PMPI_Comm_c2f
#pragma weak MPI_Comm_f2c = PMPI_Comm_f2c
#pragma weak MPI_Type_c2f = PMPI_Type_c2f
#pragma weak MPI_Type_f2c = PMPI_Type_f2c
#pragma weak MPI_Group_c2f = PMPI_Group_c2f
#pragma weak MPI_Group_f2c = PMPI_Group_f2c
#pragma weak MPI_Request_c2f = PMPI_Request_c2f
#pragma weak MPI_Request_f2c = PMPI_Request_f2c
#pragma weak MPI_Op_c2f = PMPI_Op_c2f
#pragma weak MPI_Op_f2c = PMPI_Op_f2c
#pragma weak MPI_Info_c2f = PMPI_Info_c2f
#pragma weak MPI_Info_f2c = PMPI_Info_f2c
#pragma weak MPI_Errhandler_c2f = PMPI_Errhandler_c2f
#pragma weak MPI_Errhandler_f2c = PMPI_Errhandler_f2c
#pragma weak MPI_Message_c2f = PMPI_Message_c2f
#pragma weak MPI_Message_f2c = PMPI_Message_f2c
#pragma weak MPI_Win_c2f = PMPI_Win_c2f
#pragma weak MPI_Win_f2c = PMPI_Win_f2c
#pragma weak MPI_Session_c2f = PMPI_Session_c2f
#pragma weak MPI_Session_f2c = PMPI_Session_f2c

/* The handles of one kind of object that were converted so far. */
typedef struct f2c_table {
    const void **handles; /* index -> handle; handles[0] is the null handle */
    int count;            /* indices given out, 0 included */
    int capacity;         /* entries of handles */
    int *slots;           /* hash of handle -> index, 0 meaning empty (index 0 is not hashed) */
    int num_slots;        /* a power of two, more than twice count */
} f2c_table_t;

static f2c_table_t f2c_comms, f2c_types, f2c_groups, f2c_requests, f2c_ops, f2c_infos,
    f2c_errhandlers, f2c_messages, f2c_wins, f2c_sessions;

static size_t f2c_hash(const void *handle, int num_slots)
{
    uintptr_t key = (uintptr_t)handle;

    /* Objects are at least 8-byte aligned: the low bits say nothing. */
    key ^= key >> 17;
    key *= UINT64_C(0x9e3779b97f4a7c15);
    return (size_t)(key >> 32) & (size_t)(num_slots - 1);
}

/* The slot that holds `handle`, or the empty one where it would go. */
static int *f2c_slot(const f2c_table_t *table, const void *handle)
{
    size_t slot = f2c_hash(handle, table->num_slots);

    while (table->slots[slot] != 0 && table->handles[table->slots[slot]] != handle) {
        slot = (slot + 1) & (size_t)(table->num_slots - 1);
    }
    return &table->slots[slot];
}

/* Double the hash and rehash every index. @return false when out of memory. */
static bool f2c_grow_slots(f2c_table_t *table)
{
    int num_slots = table->num_slots ? 2 * table->num_slots : 64;
    int *slots = calloc((size_t)num_slots, sizeof(*slots));
    int *old = table->slots;

    if (slots == NULL) {
        return false;
    }
    table->slots = slots;
    table->num_slots = num_slots;
    for (int index = 1; index < table->count; index++) {
        *f2c_slot(table, table->handles[index]) = index;
    }
    free(old);
    return true;
}

/* The index of `handle`, given now if it has none. -1 when out of memory. */
static int f2c_index(f2c_table_t *table, const void *handle)
{
    int *slot;

    if (handle == NULL) {
        return 0;
    }
    if (table->num_slots == 0 || 2 * (table->count + 1) > table->num_slots) {
        if (!f2c_grow_slots(table)) {
            return -1;
        }
    }
    slot = f2c_slot(table, handle);
    if (*slot != 0) {
        return *slot;
    }
    if (table->count == 0) {
        table->count = 1; /* index 0: the null handle, never hashed */
    }
    if (table->count >= table->capacity) {
        int capacity = table->capacity ? 2 * table->capacity : 64;
        const void **handles = realloc(table->handles, (size_t)capacity * sizeof(*handles));

        if (handles == NULL) {
            return -1;
        }
        handles[0] = NULL;
        table->handles = handles;
        table->capacity = capacity;
    }
    table->handles[table->count] = handle;
    *slot = table->count;
    return table->count++;
}

static MPI_Fint f2c_to_fint(f2c_table_t *table, const void *handle, const char *what)
{
    int index;

    crmpi_lock();
    index = f2c_index(table, handle);
    crmpi_unlock();
    if (index < 0) {
        /* No handler to raise it on: c2f has no error return. Say so, and give the
         * null handle's index. */
        crmpi_log_error("MPI_%s_c2f: out of memory for the table of handles", what);
        return 0;
    }
    return (MPI_Fint)index;
}

static const void *f2c_to_handle(f2c_table_t *table, MPI_Fint index)
{
    const void *handle = NULL;

    crmpi_lock();
    if (index > 0 && index < table->count) {
        handle = table->handles[index];
    }
    crmpi_unlock();
    return handle;
}

MPI_Fint PMPI_Comm_c2f(MPI_Comm comm)
{
    return f2c_to_fint(&f2c_comms, comm, "Comm");
}

MPI_Comm PMPI_Comm_f2c(MPI_Fint comm)
{
    return (MPI_Comm)(uintptr_t)f2c_to_handle(&f2c_comms, comm);
}

MPI_Fint PMPI_Type_c2f(MPI_Datatype datatype)
{
    return f2c_to_fint(&f2c_types, datatype, "Type");
}

MPI_Datatype PMPI_Type_f2c(MPI_Fint datatype)
{
    return (MPI_Datatype)(uintptr_t)f2c_to_handle(&f2c_types, datatype);
}

MPI_Fint PMPI_Group_c2f(MPI_Group group)
{
    return f2c_to_fint(&f2c_groups, group, "Group");
}

MPI_Group PMPI_Group_f2c(MPI_Fint group)
{
    return (MPI_Group)(uintptr_t)f2c_to_handle(&f2c_groups, group);
}

MPI_Fint PMPI_Request_c2f(MPI_Request request)
{
    return f2c_to_fint(&f2c_requests, request, "Request");
}

MPI_Request PMPI_Request_f2c(MPI_Fint request)
{
    return (MPI_Request)(uintptr_t)f2c_to_handle(&f2c_requests, request);
}

MPI_Fint PMPI_Op_c2f(MPI_Op op)
{
    return f2c_to_fint(&f2c_ops, op, "Op");
}

MPI_Op PMPI_Op_f2c(MPI_Fint op)
{
    return (MPI_Op)(uintptr_t)f2c_to_handle(&f2c_ops, op);
}

MPI_Fint PMPI_Info_c2f(MPI_Info info)
{
    return f2c_to_fint(&f2c_infos, info, "Info");
}

MPI_Info PMPI_Info_f2c(MPI_Fint info)
{
    return (MPI_Info)(uintptr_t)f2c_to_handle(&f2c_infos, info);
}

MPI_Fint PMPI_Errhandler_c2f(MPI_Errhandler errhandler)
{
    return f2c_to_fint(&f2c_errhandlers, errhandler, "Errhandler");
}

MPI_Errhandler PMPI_Errhandler_f2c(MPI_Fint errhandler)
{
    return (MPI_Errhandler)(uintptr_t)f2c_to_handle(&f2c_errhandlers, errhandler);
}

MPI_Fint PMPI_Message_c2f(MPI_Message message)
{
    return f2c_to_fint(&f2c_messages, message, "Message");
}

MPI_Message PMPI_Message_f2c(MPI_Fint message)
{
    return (MPI_Message)(uintptr_t)f2c_to_handle(&f2c_messages, message);
}

MPI_Fint PMPI_Win_c2f(MPI_Win win)
{
    return f2c_to_fint(&f2c_wins, win, "Win");
}

MPI_Win PMPI_Win_f2c(MPI_Fint win)
{
    return (MPI_Win)(uintptr_t)f2c_to_handle(&f2c_wins, win);
}

MPI_Fint PMPI_Session_c2f(MPI_Session session)
{
    return f2c_to_fint(&f2c_sessions, session, "Session");
}

MPI_Session PMPI_Session_f2c(MPI_Fint session)
{
    return (MPI_Session)(uintptr_t)f2c_to_handle(&f2c_sessions, session);
}
