/*
 * op.c: user-defined reductions and local reduction (MPI-3.1 sections 5.9.5 to 5.9.7):
 * MPI_Op_create, MPI_Op_free, MPI_Op_commutative, MPI_Reduce_local, and the large-count
 * forms MPI_Op_create_c and MPI_Reduce_local_c (MPI-4.0).
 */
#include <stdlib.h>
#include <string.h>

#include "coll_mpi.h"
#include "log.h"

#pragma weak MPI_Op_create = PMPI_Op_create
#pragma weak MPI_Op_create_c = PMPI_Op_create_c
#pragma weak MPI_Op_free = PMPI_Op_free
#pragma weak MPI_Op_commutative = PMPI_Op_commutative
#pragma weak MPI_Reduce_local = PMPI_Reduce_local
#pragma weak MPI_Reduce_local_c = PMPI_Reduce_local_c

/* The body of both forms of MPI_Op_create: exactly one of user_fn and user_fn_c is set. */
static int op_create(MPI_User_function *user_fn, MPI_User_function_c *user_fn_c, int commute,
                     MPI_Op *op, const char *func_name)
{
    struct crmpi_op_s *created;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (user_fn == NULL && user_fn_c == NULL)
            COLL_FAIL(MPI_COMM_NULL, MPI_ERR_ARG, "user_fn is NULL");
        if (op == NULL)
            COLL_FAIL(MPI_COMM_NULL, MPI_ERR_ARG, "op is NULL");
    }
    created = calloc(1, sizeof(*created));
    if (!created)
        COLL_FAIL(MPI_COMM_NULL, MPI_ERR_NO_MEM, "out of memory for the op");
    strcpy(created->name, "user-defined op");
    created->coll.kind = CRMPI_COLL_OP_USER;
    created->coll.commutative = commute != 0;
    created->coll.user_fn = user_fn;
    created->coll.user_fn_c = user_fn_c;
    *op = created;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    return op_create(user_fn, NULL, commute, op, "MPI_Op_create");
}

/* MPI-4.0 section 6.9.5: the function gets an MPI_Count length, so a reduction calls it
 * once for any count (coll_op.c). */
int PMPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    return op_create(NULL, user_fn, commute, op, "MPI_Op_create_c");
}

/* MPI-3.1 section 5.9.5 lets MPI_Op_free only mark an op that pending operations still use;
 * crmpi frees it at once, so an op must outlive the non-blocking reductions that use it
 * (a known limitation: ops have no reference count yet). */
int PMPI_Op_free(MPI_Op *op)
{
    static const char func_name[] = "MPI_Op_free";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (op == NULL || *op == MPI_OP_NULL)
        COLL_FAIL(MPI_COMM_NULL, MPI_ERR_OP, "op is NULL or MPI_OP_NULL");
    if ((*op)->coll.kind != CRMPI_COLL_OP_USER)
        COLL_FAIL(MPI_COMM_NULL, MPI_ERR_OP, "a predefined op cannot be freed");
    free(*op);
    *op = MPI_OP_NULL;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Op_commutative(MPI_Op op, int *commute)
{
    static const char func_name[] = "MPI_Op_commutative";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (op == MPI_OP_NULL)
        COLL_FAIL(MPI_COMM_NULL, MPI_ERR_OP, "op is MPI_OP_NULL");
    if (commute == NULL)
        COLL_FAIL(MPI_COMM_NULL, MPI_ERR_ARG, "commute is NULL");
    *commute = op->coll.commutative;
    crmpi_unlock();
    return MPI_SUCCESS;
}

static inline int reduce_local_body(const void *inbuf, void *inoutbuf, MPI_Count count,
                                    MPI_Datatype datatype, MPI_Op op, const char *func_name)
{
    const char *detail;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        rc = crmpi_mpi_coll_check_buffer(inbuf, count, datatype, "the input", &detail);
        if (rc == MPI_SUCCESS)
            rc = crmpi_mpi_coll_check_buffer(inoutbuf, count, datatype, "the inout", &detail);
        if (rc == MPI_SUCCESS && (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE)) {
            rc = MPI_ERR_BUFFER;
            detail = "MPI_IN_PLACE is not allowed in MPI_Reduce_local";
        }
        if (rc == MPI_SUCCESS)
            rc = crmpi_mpi_coll_check_op(op, datatype, &detail);
        if (rc != MPI_SUCCESS)
            COLL_FAIL(MPI_COMM_NULL, rc, detail);
    }
    rc = crmpi_coll_op_reduce(&op->coll, inbuf, inoutbuf, (size_t)count, datatype);
    if (rc != CRMPI_OK)
        COLL_FAIL(MPI_COMM_NULL, MPI_ERR_OP, "the op is not defined on this datatype");
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
                      MPI_Op op)
{
    return reduce_local_body(inbuf, inoutbuf, count, datatype, op, "MPI_Reduce_local");
}

int PMPI_Reduce_local_c(const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Op op)
{
    return reduce_local_body(inbuf, inoutbuf, count, datatype, op, "MPI_Reduce_local_c");
}
