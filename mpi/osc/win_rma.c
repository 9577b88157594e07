/*
 * win_rma.c: the communication calls (MPI-3.1 section 11.3): Put, Get, Accumulate,
 * Get_accumulate, Fetch_and_op, Compare_and_swap and the request forms. Arguments, the
 * epoch that must cover the target (MPI_ERR_RMA_SYNC), the target's window bounds
 * (MPI_ERR_RMA_RANGE) and, for accumulates, the one predefined type both sides are made
 * of (section 11.3.4); osc does the rest.
 *
 * The large-count forms (MPI_Put_c ..., MPI-4.0 section 12.3) share each body with their
 * int form, which widens its counts: counts are MPI_Count here and size_t in osc and on
 * the wire (64 bits, osc_pt2pt.h), so the only limit is the address space; a count whose
 * bytes, or an access whose span, overflow it is refused (MPI_ERR_COUNT, MPI_ERR_RMA_RANGE).
 */
#include <stdint.h>
#include <stdlib.h>

#include "crmpi_status.h"
#include "datatype.h"
#include "win_internal.h"

#pragma weak MPI_Put = PMPI_Put
#pragma weak MPI_Get = PMPI_Get
#pragma weak MPI_Accumulate = PMPI_Accumulate
#pragma weak MPI_Get_accumulate = PMPI_Get_accumulate
#pragma weak MPI_Fetch_and_op = PMPI_Fetch_and_op
#pragma weak MPI_Compare_and_swap = PMPI_Compare_and_swap
#pragma weak MPI_Rput = PMPI_Rput
#pragma weak MPI_Rget = PMPI_Rget
#pragma weak MPI_Raccumulate = PMPI_Raccumulate
#pragma weak MPI_Rget_accumulate = PMPI_Rget_accumulate
#pragma weak MPI_Put_c = PMPI_Put_c
#pragma weak MPI_Get_c = PMPI_Get_c
#pragma weak MPI_Accumulate_c = PMPI_Accumulate_c
#pragma weak MPI_Get_accumulate_c = PMPI_Get_accumulate_c
#pragma weak MPI_Rput_c = PMPI_Rput_c
#pragma weak MPI_Rget_c = PMPI_Rget_c
#pragma weak MPI_Raccumulate_c = PMPI_Raccumulate_c
#pragma weak MPI_Rget_accumulate_c = PMPI_Rget_accumulate_c

/* The predefined type `type` is made of, or NULL when it mixes several (the markers MPI_LB
 * and MPI_UB hold no data and do not count). */
static MPI_Datatype rma_basic_type(MPI_Datatype type)
{
    MPI_Datatype found = NULL;

    if (type->predefined)
        return type == MPI_LB || type == MPI_UB ? NULL : type;
    if (!type->args)
        return NULL;
    for (size_t i = 0; i < type->args->num_types; i++) {
        MPI_Datatype part = rma_basic_type(type->args->types[i]);
        if (!part)
            continue;
        if (found && part != found)
            return NULL;
        found = part;
    }
    return found;
}

/* The bytes [lo, hi) an access of count > 0 elements of type at displacement disp (in units
 * of unit) touches, relative to the target's window base. @return false when they do not
 * fit in an MPI_Aint (no window holds them) */
static bool rma_target_span(MPI_Aint disp, MPI_Aint unit, MPI_Count count, MPI_Datatype type,
                            MPI_Aint *lo_out, MPI_Aint *hi_out)
{
    MPI_Aint start, span, lo, hi;

    if (__builtin_mul_overflow(disp, unit, &start) ||
        __builtin_add_overflow(start, type->true_lb, &start) ||
        __builtin_mul_overflow((MPI_Aint)(count - 1), type->extent, &span) ||
        __builtin_add_overflow(start, span < 0 ? span : 0, &lo) ||
        __builtin_add_overflow(start, span > 0 ? span : 0, &hi) ||
        __builtin_add_overflow(hi, type->true_extent, &hi))
        return false;
    *lo_out = lo;
    *hi_out = hi;
    return true;
}

/* What every communication call checks. @return MPI_SUCCESS, or the class with *detail */
static int rma_check_target(MPI_Win win, int target, MPI_Aint target_disp, MPI_Count target_count,
                            MPI_Datatype target_type, const char **detail)
{
    size_t nbytes;
    MPI_Aint unit, lo, hi;

    if (target == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (target < 0 || target >= win->comm->size) {
        *detail = "target_rank is not a rank of the window's group";
        return MPI_ERR_RANK;
    }
    if (target_count < 0) {
        *detail = "target_count is negative";
        return MPI_ERR_COUNT;
    }
    if (target_type == MPI_DATATYPE_NULL || !target_type->committed) {
        *detail = "the target datatype is null or not committed";
        return MPI_ERR_TYPE;
    }
    if (!crmpi_win_may_access(win, target)) {
        *detail = "no access epoch is open to the target (MPI-3.1 section 11.5)";
        return MPI_ERR_RMA_SYNC;
    }
    if (win->flavor == MPI_WIN_FLAVOR_DYNAMIC || target_count == 0 || target_type->size == 0)
        return MPI_SUCCESS;
    crmpi_osc_win_target(win->osc, target, &nbytes, &unit);
    if (!rma_target_span(target_disp, unit, target_count, target_type, &lo, &hi) || lo < 0 ||
        hi > (MPI_Aint)nbytes) {
        *detail = "the access lies outside the target's window";
        return MPI_ERR_RMA_RANGE;
    }
    return MPI_SUCCESS;
}

static int rma_check_origin(const void *buf, MPI_Count count, MPI_Datatype type,
                            const char **detail)
{
    (void)buf;
    if (count < 0) {
        *detail = "an origin or result count is negative";
        return MPI_ERR_COUNT;
    }
    if (type == MPI_DATATYPE_NULL || !type->committed) {
        *detail = "an origin or result datatype is null or not committed";
        return MPI_ERR_TYPE;
    }
    return MPI_SUCCESS;
}

/* Both sides carry the same number of bytes (the type signatures must match), which fits
 * in memory. */
static int rma_check_match(MPI_Count count, MPI_Datatype type, MPI_Count target_count,
                           MPI_Datatype target_type, const char **detail)
{
    size_t nbytes, target_nbytes;

    if (__builtin_mul_overflow((size_t)count, type->size, &nbytes) ||
        __builtin_mul_overflow((size_t)target_count, target_type->size, &target_nbytes) ||
        nbytes > PTRDIFF_MAX) {
        *detail = "the count's bytes exceed the address space";
        return MPI_ERR_COUNT;
    }
    if (nbytes != target_nbytes) {
        *detail = "the origin and target type signatures differ in size";
        return MPI_ERR_TYPE;
    }
    return MPI_SUCCESS;
}

/* The arguments of a put or a get (and of their request forms). */
static int rma_check_transfer(const void *origin_addr, MPI_Count origin_count,
                              MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                              MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
                              const MPI_Request *request, bool request_form, const char **detail)
{
    int err = rma_check_origin(origin_addr, origin_count, origin_datatype, detail);

    if (err == MPI_SUCCESS)
        err =
            rma_check_target(win, target_rank, target_disp, target_count, target_datatype, detail);
    if (err == MPI_SUCCESS && target_rank != MPI_PROC_NULL)
        err = rma_check_match(origin_count, origin_datatype, target_count, target_datatype, detail);
    if (err == MPI_SUCCESS && request_form && request == NULL) {
        err = MPI_ERR_REQUEST;
        *detail = "request is NULL";
    }
    return err;
}

static int rma_put(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                   MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request,
                   bool request_form, const char *func_name)
{
    const char *detail = NULL;
    int err, rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (win == MPI_WIN_NULL)
        return crmpi_win_raise(MPI_WIN_NULL, MPI_ERR_WIN, func_name, NULL);
    err = rma_check_transfer(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                             target_count, target_datatype, win, request, request_form, &detail);
    if (err != MPI_SUCCESS)
        return crmpi_win_raise(win, err, func_name, detail);
    rc = crmpi_osc_put(win->osc, origin_addr, (size_t)origin_count, origin_datatype, target_rank,
                       target_disp, (size_t)target_count, target_datatype, request);
    if (rc != CRMPI_OK)
        return crmpi_win_raise(win, crmpi_win_error_class(rc), func_name, NULL);
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Win win)
{
    return rma_put(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win, NULL, false, "MPI_Put");
}

int PMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
              MPI_Win win, MPI_Request *request)
{
    return rma_put(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win, request, true, "MPI_Rput");
}

int PMPI_Put_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win)
{
    return rma_put(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win, NULL, false, "MPI_Put_c");
}

int PMPI_Rput_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    return rma_put(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win, request, true, "MPI_Rput_c");
}

static int rma_get(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                   MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request,
                   bool request_form, const char *func_name)
{
    const char *detail = NULL;
    int err, rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (win == MPI_WIN_NULL)
        return crmpi_win_raise(MPI_WIN_NULL, MPI_ERR_WIN, func_name, NULL);
    err = rma_check_transfer(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                             target_count, target_datatype, win, request, request_form, &detail);
    if (err != MPI_SUCCESS)
        return crmpi_win_raise(win, err, func_name, detail);
    rc = crmpi_osc_get(win->osc, origin_addr, (size_t)origin_count, origin_datatype, target_rank,
                       target_disp, (size_t)target_count, target_datatype, request);
    if (rc != CRMPI_OK)
        return crmpi_win_raise(win, crmpi_win_error_class(rc), func_name, NULL);
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    return rma_get(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win, NULL, false, "MPI_Get");
}

int PMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request *request)
{
    return rma_get(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win, request, true, "MPI_Rget");
}

int PMPI_Get_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win)
{
    return rma_get(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win, NULL, false, "MPI_Get_c");
}

int PMPI_Rget_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    return rma_get(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win, request, true, "MPI_Rget_c");
}

/* The body of the accumulate family; result_addr is NULL for Accumulate/Raccumulate. */
static int rma_accumulate(const void *origin_addr, MPI_Count origin_count,
                          MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count,
                          MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                          bool fetch, MPI_Win win, MPI_Request *request, bool request_form,
                          const char *func_name)
{
    const char *detail = NULL;
    MPI_Datatype basic = NULL;
    int err = MPI_SUCCESS, rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (win == MPI_WIN_NULL)
        return crmpi_win_raise(MPI_WIN_NULL, MPI_ERR_WIN, func_name, NULL);
    if (op == MPI_OP_NULL || op->coll.kind == CRMPI_COLL_OP_USER) {
        err = MPI_ERR_OP;
        detail = "accumulate takes a predefined op, MPI_REPLACE or MPI_NO_OP (MPI-3.1 11.3.4)";
    } else if (!fetch && op == MPI_NO_OP) {
        err = MPI_ERR_OP;
        detail = "MPI_NO_OP is for the get_accumulate family only";
    }
    if (err == MPI_SUCCESS && op != MPI_NO_OP)
        err = rma_check_origin(origin_addr, origin_count, origin_datatype, &detail);
    if (err == MPI_SUCCESS && fetch)
        err = rma_check_origin(result_addr, result_count, result_datatype, &detail);
    if (err == MPI_SUCCESS)
        err =
            rma_check_target(win, target_rank, target_disp, target_count, target_datatype, &detail);
    if (err == MPI_SUCCESS && target_rank != MPI_PROC_NULL) {
        /* An access of no bytes has an empty type signature, which matches the other sides'
         * empty signatures whatever types carry them (MPI-3.1 section 11.3.4): only the
         * sizes are checked then, and the op is applied to nothing. */
        bool empty = target_count == 0 || target_datatype->size == 0;

        basic = rma_basic_type(target_datatype);
        if (empty) {
            basic = basic ? basic : MPI_BYTE;
        } else if (!basic) {
            err = MPI_ERR_TYPE;
            detail = "the target datatype is not made of one predefined type";
        } else if (op != MPI_NO_OP && rma_basic_type(origin_datatype) != basic) {
            err = MPI_ERR_TYPE;
            detail = "the origin and target datatypes are made of different predefined types";
        }
        if (err == MPI_SUCCESS && op != MPI_NO_OP)
            err = rma_check_match(origin_count, origin_datatype, target_count, target_datatype,
                                  &detail);
        if (err == MPI_SUCCESS && fetch)
            err = rma_check_match(result_count, result_datatype, target_count, target_datatype,
                                  &detail);
        if (err == MPI_SUCCESS && !empty && op != MPI_REPLACE && op != MPI_NO_OP &&
            !crmpi_coll_op_defined(&op->coll, basic)) {
            err = MPI_ERR_OP;
            detail = "the op is not defined on the datatype";
        }
    }
    if (err == MPI_SUCCESS && request_form && request == NULL) {
        err = MPI_ERR_REQUEST;
        detail = "request is NULL";
    }
    if (err != MPI_SUCCESS)
        return crmpi_win_raise(win, err, func_name, detail);
    rc = crmpi_osc_accumulate(win->osc, origin_addr, (size_t)origin_count, origin_datatype,
                              result_addr, (size_t)result_count, result_datatype, target_rank,
                              target_disp, (size_t)target_count, target_datatype, basic, &op->coll,
                              fetch, request_form ? request : NULL);
    if (rc != CRMPI_OK)
        return crmpi_win_raise(win, crmpi_win_error_class(rc), func_name, NULL);
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return rma_accumulate(origin_addr, origin_count, origin_datatype, NULL, 0, MPI_BYTE,
                          target_rank, target_disp, target_count, target_datatype, op, false, win,
                          NULL, false, "MPI_Accumulate");
}

int PMPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    return rma_accumulate(origin_addr, origin_count, origin_datatype, NULL, 0, MPI_BYTE,
                          target_rank, target_disp, target_count, target_datatype, op, false, win,
                          request, true, "MPI_Raccumulate");
}

int PMPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void *result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return rma_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                          result_datatype, target_rank, target_disp, target_count, target_datatype,
                          op, true, win, NULL, false, "MPI_Get_accumulate");
}

int PMPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         void *result_addr, int result_count, MPI_Datatype result_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    return rma_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                          result_datatype, target_rank, target_disp, target_count, target_datatype,
                          op, true, win, request, true, "MPI_Rget_accumulate");
}

int PMPI_Accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                      MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return rma_accumulate(origin_addr, origin_count, origin_datatype, NULL, 0, MPI_BYTE,
                          target_rank, target_disp, target_count, target_datatype, op, false, win,
                          NULL, false, "MPI_Accumulate_c");
}

int PMPI_Raccumulate_c(const void *origin_addr, MPI_Count origin_count,
                       MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                       MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                       MPI_Request *request)
{
    return rma_accumulate(origin_addr, origin_count, origin_datatype, NULL, 0, MPI_BYTE,
                          target_rank, target_disp, target_count, target_datatype, op, false, win,
                          request, true, "MPI_Raccumulate_c");
}

int PMPI_Get_accumulate_c(const void *origin_addr, MPI_Count origin_count,
                          MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count,
                          MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                          MPI_Win win)
{
    return rma_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                          result_datatype, target_rank, target_disp, target_count, target_datatype,
                          op, true, win, NULL, false, "MPI_Get_accumulate_c");
}

int PMPI_Rget_accumulate_c(const void *origin_addr, MPI_Count origin_count,
                           MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count,
                           MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                           MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                           MPI_Win win, MPI_Request *request)
{
    return rma_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                          result_datatype, target_rank, target_disp, target_count, target_datatype,
                          op, true, win, request, true, "MPI_Rget_accumulate_c");
}

int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    return rma_accumulate(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank,
                          target_disp, 1, datatype, op, true, win, NULL, false, "MPI_Fetch_and_op");
}

int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    static const char func_name[] = "MPI_Compare_and_swap";
    const char *detail = NULL;
    int err, rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (win == MPI_WIN_NULL)
        return crmpi_win_raise(MPI_WIN_NULL, MPI_ERR_WIN, func_name, NULL);
    /* One element of a predefined integer, logical or byte type (MPI-3.1 11.3.4); any
     * predefined type of one basic element is accepted here. */
    if (datatype == MPI_DATATYPE_NULL || !datatype->predefined) {
        err = MPI_ERR_TYPE;
        detail = "compare_and_swap takes a predefined datatype";
    } else {
        err = rma_check_target(win, target_rank, target_disp, 1, datatype, &detail);
    }
    if (err != MPI_SUCCESS)
        return crmpi_win_raise(win, err, func_name, detail);
    rc = crmpi_osc_compare_and_swap(win->osc, origin_addr, compare_addr, result_addr, datatype,
                                    target_rank, target_disp);
    if (rc != CRMPI_OK)
        return crmpi_win_raise(win, crmpi_win_error_class(rc), func_name, NULL);
    crmpi_unlock();
    return MPI_SUCCESS;
}
