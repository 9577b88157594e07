/*
 * coll_mpi.h: what the collective MPI calls of mpi/coll/ share (MPI-3.1 chapter 5):
 * argument checks with their error classes, and the end of a call (errors raised on the
 * communicator). The work is coll/'s (coll.h).
 *
 *   MPI_Allreduce / MPI_Iallreduce ...   mpi/coll/: checks, MPI_IN_PLACE, error handlers
 *        |  crmpi_coll_run / crmpi_coll_start
 *   coll                                 algorithms and schedules over the PML
 *
 * Each call has one body for its blocking, non-blocking and persistent forms (the mode,
 * crmpi_mpi_coll_mode_t), on intra- and intercommunicators alike. Threading: called with
 * the library lock held; the crmpi_mpi_coll_* functions that end a call return with it
 * released.
 */
#ifndef CRMPI_MPI_COLL_H
#define CRMPI_MPI_COLL_H

#include <stdbool.h>
#include <stddef.h>

#include "coll.h"
#include "crmpi_status.h"
#include "mpi_internal.h"
#include "pml.h"

/* Raise `errclass` with `detail` on comm and return from the calling MPI function. */
#define COLL_FAIL(comm, errclass, detail)                                                          \
    return crmpi_mpi_errhandler_invoke((comm), (errclass), func_name, (detail))

/* A datatype usable for communication (committed, or predefined). */
static inline bool crmpi_mpi_coll_type_ok(MPI_Datatype type)
{
    return type != MPI_DATATYPE_NULL && (type->committed || type->predefined);
}

/*
 * Intercommunicators (MPI-3.1 sections 5.2.2, 5.2.3): the per-rank blocks and arrays of a call are
 * the remote group's (comm->remote_size, which is comm->size on an intracommunicator), a
 * root is MPI_ROOT in the root itself, MPI_PROC_NULL in the rest of its group and the
 * root's rank in the other group, MPI_IN_PLACE is not allowed, and Scan and Exscan are
 * not defined.
 */
static inline bool crmpi_mpi_coll_root_ok(MPI_Comm comm, int root)
{
    if (comm->inter)
        return root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < comm->remote_size);
    return root >= 0 && root < comm->size;
}

/* The detail of MPI_ERR_ROOT for a root crmpi_mpi_coll_root_ok refused. */
static inline const char *crmpi_mpi_coll_root_detail(MPI_Comm comm)
{
    return comm->inter ? "root is neither MPI_ROOT, MPI_PROC_NULL nor a rank of the remote group"
                       : "root is not a rank of the communicator";
}

#define CRMPI_MPI_COLL_INTER_IN_PLACE                                                              \
    "MPI_IN_PLACE is not allowed on an intercommunicator (MPI-3.1 section 5.2.3)"

/*
 * The checks every collective call makes, each a function returning MPI_SUCCESS or the
 * error class with *detail_out saying what is wrong (the caller raises it).
 */
/** A buffer of count elements of type: count >= 0, the type usable, no data at address 0. */
int crmpi_mpi_coll_check_buffer(const void *buf, MPI_Count count, MPI_Datatype type,
                                const char *which, const char **detail_out);
/** A v-variant's counts and displacements: non-NULL arrays, counts >= 0, buffers. */
int crmpi_mpi_coll_check_vector(const void *buf, crmpi_count_array_t counts,
                                crmpi_count_array_t displs, MPI_Datatype type, int size,
                                const char *which, const char **detail_out);
/** A reduction: op non-null and defined on type (MPI_ERR_OP). */
int crmpi_mpi_coll_check_op(MPI_Op op, MPI_Datatype type, const char **detail_out);

/* How a collective call runs: at once, started (MPI_I...), or made to start later
 * (MPI-4.0's persistent MPI_..._init). */
typedef enum {
    CRMPI_MPI_COLL_BLOCKING,
    CRMPI_MPI_COLL_NONBLOCKING,
    CRMPI_MPI_COLL_PERSISTENT,
} crmpi_mpi_coll_mode_t;

/**
 * End a collective call in `mode`: run it, start it, or make its inactive persistent
 * request (*request set for the last two), then release the lock. Failures are raised as
 * by crmpi_mpi_coll_call. @return what the MPI call returns
 */
int crmpi_mpi_coll_call_mode(MPI_Comm comm, crmpi_coll_kind_t kind, const crmpi_coll_args_t *args,
                             MPI_Request *request, crmpi_mpi_coll_mode_t mode,
                             const char *func_name);

/**
 * End a collective call: run it (request == NULL) or start it (*request set), then release
 * the lock. Failures are raised on comm: a PML failure with its class, a message's error
 * (MPI_ERR_TRUNCATE...) as itself, an undefined op on a type as MPI_ERR_OP.
 * @return what the MPI call returns
 */
int crmpi_mpi_coll_call(MPI_Comm comm, crmpi_coll_kind_t kind, const crmpi_coll_args_t *args,
                        MPI_Request *request, const char *func_name);

#endif /* CRMPI_MPI_COLL_H */
