/*
 * p2p_check.c: the cold half of the point-to-point argument checks and error reports
 * (p2p_internal.h): once an inline predicate has found something wrong, say exactly what
 * and raise it on the right communicator (MPI-3.1 section 8.3).
 */
#include <stdarg.h>
#include <stdio.h>

#include "p2p_internal.h"

/* Room for one error detail: names of objects are at most MPI_MAX_OBJECT_NAME. */
#define P2P_DETAIL_MAX 384

/* A communicator's name for messages; created communicators may have none yet. */
static const char *p2p_comm_label(MPI_Comm comm)
{
    return comm->name[0] ? comm->name : "the communicator (unnamed)";
}

static const char *p2p_type_label(MPI_Datatype type)
{
    return type->name[0] ? type->name : "(an unnamed derived datatype)";
}

/* The raising of crmpi_p2p_raise_args for a receive's or a send's peer. */
CRMPI_P2P_COLD static int p2p_raise_rank(const char *func_name, const crmpi_p2p_args_t *args)
{
    /* An intercommunicator's ranks name its remote group (MPI-3.1 section 6.6). */
    const char *group = args->comm->inter ? "the remote group of " : "";
    char detail[P2P_DETAIL_MAX];

    if (args->kind == CRMPI_P2P_ARGS_SEND) {
        snprintf(detail, sizeof(detail),
                 "%sdest %d is not a rank of %s%s (size %d) nor MPI_PROC_NULL", args->side,
                 args->peer, group, p2p_comm_label(args->comm), args->comm->remote_size);
    } else {
        snprintf(detail, sizeof(detail),
                 "%ssource %d is not a rank of %s%s (size %d), nor MPI_ANY_SOURCE or "
                 "MPI_PROC_NULL",
                 args->side, args->peer, group, p2p_comm_label(args->comm),
                 args->comm->remote_size);
    }
    return crmpi_mpi_errhandler_invoke(args->comm, MPI_ERR_RANK, func_name, detail);
}

CRMPI_P2P_COLD static int p2p_raise_tag(const char *func_name, const crmpi_p2p_args_t *args)
{
    char detail[P2P_DETAIL_MAX];

    if (args->kind != CRMPI_P2P_ARGS_SEND) {
        snprintf(detail, sizeof(detail),
                 "%stag %d is neither MPI_ANY_TAG nor in 0..%d (MPI_TAG_UB)", args->side, args->tag,
                 CRMPI_P2P_TAG_UB);
    } else if (args->tag == MPI_ANY_TAG) {
        /* The likeliest mistake: a wildcard belongs to receives only (MPI-3.1 3.2.4). */
        snprintf(detail, sizeof(detail),
                 "%stag is MPI_ANY_TAG, which only receives and probes accept; a send's tag is in "
                 "0..%d (MPI_TAG_UB)",
                 args->side, CRMPI_P2P_TAG_UB);
    } else {
        snprintf(detail, sizeof(detail), "%stag %d is outside 0..%d (MPI_TAG_UB)", args->side,
                 args->tag, CRMPI_P2P_TAG_UB);
    }
    return crmpi_mpi_errhandler_invoke(args->comm, MPI_ERR_TAG, func_name, detail);
}

int crmpi_p2p_raise_args(const char *func_name, const crmpi_p2p_args_t *args)
{
    char detail[P2P_DETAIL_MAX];
    /* MPI_Mrecv has no communicator: its errors go to MPI_COMM_WORLD's handler. */
    MPI_Comm comm = args->kind == CRMPI_P2P_ARGS_BUFFER ? MPI_COMM_NULL : args->comm;
    bool has_buffer = args->kind != CRMPI_P2P_ARGS_PROBE;

    if (args->kind != CRMPI_P2P_ARGS_BUFFER && !crmpi_mpi_comm_is_valid(comm)) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name,
                                           "comm is MPI_COMM_NULL");
    }
    if (has_buffer && args->count < 0) {
        snprintf(detail, sizeof(detail), "%scount %lld is negative", args->side,
                 (long long)args->count);
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_COUNT, func_name, detail);
    }
    if (has_buffer && args->type == MPI_DATATYPE_NULL) {
        snprintf(detail, sizeof(detail), "%sdatatype is MPI_DATATYPE_NULL", args->side);
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_TYPE, func_name, detail);
    }
    if (has_buffer && !crmpi_p2p_type_ok(args->type)) {
        snprintf(detail, sizeof(detail),
                 "%sdatatype %s is not committed; call MPI_Type_commit before communicating with "
                 "it (MPI-3.1 section 4.1.9)",
                 args->side, p2p_type_label(args->type));
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_TYPE, func_name, detail);
    }
    if (has_buffer && !crmpi_p2p_buffer_ok(args->buf, args->count, args->type)) {
        snprintf(detail, sizeof(detail),
                 "%sbuffer is NULL, but count %lld of %s (%zu bytes each) would be stored there",
                 args->side, (long long)args->count, p2p_type_label(args->type), args->type->size);
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_BUFFER, func_name, detail);
    }
    if (args->kind == CRMPI_P2P_ARGS_SEND && !crmpi_p2p_dest_ok(args->peer, comm)) {
        return p2p_raise_rank(func_name, args);
    }
    if ((args->kind == CRMPI_P2P_ARGS_RECV || args->kind == CRMPI_P2P_ARGS_PROBE) &&
        !crmpi_p2p_source_ok(args->peer, comm)) {
        return p2p_raise_rank(func_name, args);
    }
    if (args->kind == CRMPI_P2P_ARGS_SEND && !crmpi_p2p_send_tag_ok(args->tag)) {
        return p2p_raise_tag(func_name, args);
    }
    if ((args->kind == CRMPI_P2P_ARGS_RECV || args->kind == CRMPI_P2P_ARGS_PROBE) &&
        !crmpi_p2p_recv_tag_ok(args->tag)) {
        return p2p_raise_tag(func_name, args);
    }
    /* Only reached if a predicate of p2p_internal.h and these checks disagree. */
    return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_INTERN, func_name,
                                       "an argument check failed without a reason (a bug of "
                                       "crmpi's mpi/p2p)");
}

int crmpi_p2p_raise_bad_request(const char *func_name, int index)
{
    static const char why[] =
        "is not a request: it was freed (by MPI_Wait, MPI_Test or MPI_Request_free) or never made";
    char detail[P2P_DETAIL_MAX];

    if (index < 0) {
        snprintf(detail, sizeof(detail), "*request %s", why);
    } else {
        snprintf(detail, sizeof(detail), "array_of_requests[%d] %s", index, why);
    }
    /* A freed request has no communicator left: MPI_COMM_WORLD's handler decides. */
    return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_REQUEST, func_name, detail);
}

int crmpi_p2p_check_request_array(const char *func_name, int count, const MPI_Request requests[])
{
    char detail[P2P_DETAIL_MAX];

    if (count < 0) {
        snprintf(detail, sizeof(detail), "count %d is negative", count);
        return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name, detail);
    }
    if (count > 0 && requests == NULL) {
        snprintf(detail, sizeof(detail), "array_of_requests is NULL with count %d", count);
        return crmpi_p2p_raise_arg(MPI_COMM_NULL, func_name, detail);
    }
    for (int i = 0; i < count; i++) {
        if (!crmpi_p2p_request_ok(requests[i])) {
            return crmpi_p2p_raise_bad_request(func_name, i);
        }
    }
    return MPI_SUCCESS;
}

/* The MPI error class of a PML status (crmpi_status.h). */
static int p2p_pml_error_class(int rc)
{
    switch (rc) {
    case CRMPI_ERR_OUT_OF_RESOURCE: return MPI_ERR_NO_MEM;
    case CRMPI_ERR_BAD_PARAM: return MPI_ERR_ARG;
    case CRMPI_ERR_NOT_SUPPORTED: return MPI_ERR_UNSUPPORTED_OPERATION;
    default: return MPI_ERR_OTHER;
    }
}

int crmpi_p2p_raise_pml(MPI_Comm comm, int rc, const char *func_name, const char *what_fmt, ...)
{
    char what[P2P_DETAIL_MAX / 2];
    char detail[P2P_DETAIL_MAX];
    va_list args;

    va_start(args, what_fmt);
    vsnprintf(what, sizeof(what), what_fmt, args);
    va_end(args);
    snprintf(detail, sizeof(detail), "%s: %s", what, crmpi_strerror(rc));
    return crmpi_mpi_errhandler_invoke(comm, p2p_pml_error_class(rc), func_name, detail);
}

int crmpi_p2p_raise_status(MPI_Comm comm, const MPI_Status *status, const char *func_name)
{
    char detail[P2P_DETAIL_MAX];

    if (status->MPI_ERROR == MPI_ERR_TRUNCATE) {
        snprintf(detail, sizeof(detail),
                 "the message from rank %d with tag %d is longer than the receive buffer; the "
                 "buffer holds its first %lld bytes (MPI-3.1 section 3.2.4)",
                 status->MPI_SOURCE, status->MPI_TAG, (long long)status->_nbytes);
    } else {
        snprintf(detail, sizeof(detail), "the communication with rank %d (tag %d) failed",
                 status->MPI_SOURCE, status->MPI_TAG);
    }
    return crmpi_mpi_errhandler_invoke(comm, status->MPI_ERROR, func_name, detail);
}

int crmpi_p2p_raise_in_status(MPI_Comm comm, const char *func_name, int index, int error)
{
    char detail[P2P_DETAIL_MAX];
    char code[32];
    const char *name = crmpi_mpi_error_name(error);

    if (name == NULL) {
        snprintf(code, sizeof(code), "error code %d", error);
        name = code;
    }
    snprintf(detail, sizeof(detail),
             "array_of_requests[%d] failed with %s; the MPI_ERROR of each status says how its "
             "request ended (MPI-3.1 section 3.7.5)",
             index, name);
    return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_IN_STATUS, func_name, detail);
}
