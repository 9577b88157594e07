/*
 * coll_mpi.c: the argument checks and the end of every collective MPI call (coll_mpi.h).
 */
#include <stdio.h>

#include "coll_mpi.h"

int crmpi_mpi_coll_check_buffer(const void *buf, MPI_Count count, MPI_Datatype type,
                                const char *which, const char **detail_out)
{
    static char detail[128];

    if (count < 0) {
        snprintf(detail, sizeof(detail), "%s count is negative (%lld)", which, (long long)count);
        *detail_out = detail;
        return MPI_ERR_COUNT;
    }
    if (!crmpi_mpi_coll_type_ok(type)) {
        snprintf(detail, sizeof(detail), "%s datatype is %s", which,
                 type == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "not committed");
        *detail_out = detail;
        return MPI_ERR_TYPE;
    }
    /* NULL is MPI_BOTTOM: wrong only when data would be at address 0 (see p2p_internal.h). */
    if (buf == NULL && count > 0 && type->size > 0 && type->true_lb == 0) {
        snprintf(detail, sizeof(detail), "%s buffer is NULL", which);
        *detail_out = detail;
        return MPI_ERR_BUFFER;
    }
    return MPI_SUCCESS;
}

int crmpi_mpi_coll_check_vector(const void *buf, crmpi_count_array_t counts,
                                crmpi_count_array_t displs, MPI_Datatype type, int size,
                                const char *which, const char **detail_out)
{
    static char detail[128];
    int rc;

    if (counts.base == NULL || displs.base == NULL) {
        snprintf(detail, sizeof(detail), "%s %s array is NULL", which,
                 counts.base == NULL ? "counts" : "displacements");
        *detail_out = detail;
        return MPI_ERR_ARG;
    }
    for (int r = 0; r < size; r++) {
        rc = crmpi_mpi_coll_check_buffer(buf, crmpi_count_array_at(counts, r), type, which,
                                         detail_out);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

int crmpi_mpi_coll_check_op(MPI_Op op, MPI_Datatype type, const char **detail_out)
{
    static char detail[256];

    if (op == MPI_OP_NULL) {
        *detail_out = "op is MPI_OP_NULL";
        return MPI_ERR_OP;
    }
    if (type != MPI_DATATYPE_NULL && !crmpi_coll_op_defined(&op->coll, type)) {
        snprintf(detail, sizeof(detail),
                 "%s is not defined on %s (MPI-3.1 section 5.9.2 lists the types of each "
                 "predefined op)",
                 op->name, type->name[0] ? type->name : "this derived datatype");
        *detail_out = detail;
        return MPI_ERR_OP;
    }
    return MPI_SUCCESS;
}

/* The MPI error class of a coll failure: CRMPI_ERR_* (< 0) or already a class (> 0). */
static int coll_mpi_error_class(int rc)
{
    if (rc > 0)
        return rc;
    switch (rc) {
    case CRMPI_ERR_OUT_OF_RESOURCE: return MPI_ERR_NO_MEM;
    case CRMPI_ERR_NOT_SUPPORTED: return MPI_ERR_OP;
    default: return MPI_ERR_OTHER;
    }
}

int crmpi_mpi_coll_call(MPI_Comm comm, crmpi_coll_kind_t kind, const crmpi_coll_args_t *args,
                        MPI_Request *request, const char *func_name)
{
    return crmpi_mpi_coll_call_mode(
        comm, kind, args, request,
        request == NULL ? CRMPI_MPI_COLL_BLOCKING : CRMPI_MPI_COLL_NONBLOCKING, func_name);
}

int crmpi_mpi_coll_call_mode(MPI_Comm comm, crmpi_coll_kind_t kind, const crmpi_coll_args_t *args,
                             MPI_Request *request, crmpi_mpi_coll_mode_t mode,
                             const char *func_name)
{
    crmpi_request_t *req;
    char detail[160];
    int rc;

    switch (mode) {
    case CRMPI_MPI_COLL_BLOCKING: rc = crmpi_coll_run(comm->coll, kind, args); break;
    case CRMPI_MPI_COLL_NONBLOCKING:
        rc = crmpi_coll_start(comm->coll, kind, args, &req);
        if (rc == CRMPI_OK)
            *request = req;
        break;
    default:
        rc = crmpi_coll_init(comm->coll, kind, args, &req);
        if (rc == CRMPI_OK)
            *request = req;
        break;
    }
    if (rc == CRMPI_OK) {
        crmpi_unlock();
        return MPI_SUCCESS;
    }
    snprintf(detail, sizeof(detail), "the collective failed (%s)",
             rc < 0 ? crmpi_strerror(rc) : crmpi_mpi_error_name(rc));
    return crmpi_mpi_errhandler_invoke(comm, coll_mpi_error_class(rc), func_name, detail);
}
