/*
 * coll_sched.c: the schedule engine (coll_sched.h): building steps, running rounds.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "coll_sched.h"
#include "crmpi_status.h"
#include "log.h"

crmpi_coll_sched_t *crmpi_coll_sched_create(crmpi_coll_comm_t *comm, int tag)
{
    crmpi_coll_sched_t *sched = calloc(1, sizeof(*sched));

    if (!sched) {
        crmpi_log_error("coll: out of memory for a collective's schedule");
        return NULL;
    }
    sched->comm = comm;
    sched->target = comm;
    sched->tag = tag;
    return sched;
}

void crmpi_coll_sched_free(crmpi_coll_sched_t *sched)
{
    for (size_t i = 0; i < sched->num_steps; i++) {
        coll_step_t *step = &sched->steps[i];

        if (step->type)
            crmpi_datatype_release(step->type);
        if (step->dtype)
            crmpi_datatype_release(step->dtype);
    }
    for (size_t i = 0; i < sched->num_tmps; i++)
        free(sched->tmps[i]);
    free(sched->tmps);
    free(sched->steps);
    free(sched);
}

static coll_step_t *sched_append(crmpi_coll_sched_t *sched, coll_step_kind_t kind)
{
    if (sched->num_steps == sched->max_steps) {
        size_t max = sched->max_steps ? 2 * sched->max_steps : 16;
        coll_step_t *steps = realloc(sched->steps, max * sizeof(*steps));

        if (!steps) {
            crmpi_log_error("coll: out of memory for %zu schedule steps", max);
            return NULL;
        }
        sched->steps = steps;
        sched->max_steps = max;
    }
    coll_step_t *step = &sched->steps[sched->num_steps++];
    memset(step, 0, sizeof(*step));
    step->kind = kind;
    return step;
}

/* Datatypes are held by the schedule: the application may free a derived type while a
 * non-blocking collective that uses it is pending (MPI-3.1 section 4.1.9). */
static void sched_hold(MPI_Datatype type)
{
    if (type)
        crmpi_datatype_retain(type);
}

int crmpi_coll_sched_send(crmpi_coll_sched_t *sched, const void *buf, size_t count,
                          MPI_Datatype type, int peer)
{
    coll_step_t *step = sched_append(sched, COLL_STEP_SEND);

    if (!step)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    step->src = buf;
    step->count = count;
    step->type = type;
    step->peer = peer;
    step->pml = sched->target->pml;
    sched_hold(type);
    return CRMPI_OK;
}

int crmpi_coll_sched_recv(crmpi_coll_sched_t *sched, void *buf, size_t count, MPI_Datatype type,
                          int peer)
{
    coll_step_t *step = sched_append(sched, COLL_STEP_RECV);

    if (!step)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    step->dst = buf;
    step->count = count;
    step->type = type;
    step->peer = peer;
    step->pml = sched->target->pml;
    sched_hold(type);
    return CRMPI_OK;
}

int crmpi_coll_sched_copy(crmpi_coll_sched_t *sched, const void *src, size_t scount,
                          MPI_Datatype stype, void *dst, size_t dcount, MPI_Datatype dtype)
{
    coll_step_t *step;

    if (src == dst && stype == dtype && scount == dcount)
        return CRMPI_OK;
    step = sched_append(sched, COLL_STEP_COPY);
    if (!step)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    step->src = src;
    step->count = scount;
    step->type = stype;
    step->dst = dst;
    step->dcount = dcount;
    step->dtype = dtype;
    sched_hold(stype);
    sched_hold(dtype);
    return CRMPI_OK;
}

int crmpi_coll_sched_reduce(crmpi_coll_sched_t *sched, const void *src, void *dst, size_t count,
                            MPI_Datatype type, const crmpi_coll_op_t *op)
{
    coll_step_t *step;

    if (count == 0)
        return CRMPI_OK;
    step = sched_append(sched, COLL_STEP_REDUCE);
    if (!step)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    step->src = src;
    step->dst = dst;
    step->count = count;
    step->type = type;
    step->op = op;
    sched_hold(type);
    return CRMPI_OK;
}

int crmpi_coll_sched_round(crmpi_coll_sched_t *sched)
{
    if (sched->num_steps == 0 || sched->steps[sched->num_steps - 1].kind == COLL_STEP_ROUND)
        return CRMPI_OK;
    return sched_append(sched, COLL_STEP_ROUND) ? CRMPI_OK : CRMPI_ERR_OUT_OF_RESOURCE;
}

void crmpi_coll_sched_target(crmpi_coll_sched_t *sched, crmpi_coll_comm_t *target)
{
    sched->target = target;
}

void *crmpi_coll_sched_tmp(crmpi_coll_sched_t *sched, size_t count, MPI_Datatype type)
{
    /* From the lowest byte to the highest of either view of the buffer: the data (true
     * bounds) and the elements (lb, extent). A pair type's padding follows its data, so a
     * buffer sized by the data alone ends inside the last element (coll_op.c). */
    ptrdiff_t low = type->true_lb;
    ptrdiff_t high =
        count == 0 ? low
                   : type->true_lb + type->true_extent + (ptrdiff_t)(count - 1) * type->extent;
    char *mem;

    if (count > 0 && type->extent > 0) {
        if (type->lb < low)
            low = type->lb;
        if (type->lb + (ptrdiff_t)count * type->extent > high)
            high = type->lb + (ptrdiff_t)count * type->extent;
    }
    size_t span = high > low ? (size_t)(high - low) : 0;
    void **tmps = realloc(sched->tmps, (sched->num_tmps + 1) * sizeof(*tmps));

    if (!tmps) {
        crmpi_log_error("coll: out of memory for a temporary buffer");
        return NULL;
    }
    sched->tmps = tmps;
    /* At least one byte, so that an empty buffer still has a distinct, non-NULL address. */
    mem = malloc(span ? span : 1);
    if (!mem) {
        crmpi_log_error("coll: out of memory for a temporary buffer of %zu bytes", span);
        return NULL;
    }
    sched->tmps[sched->num_tmps++] = mem;
    return mem - low;
}

void crmpi_coll_copy(const void *src, size_t scount, MPI_Datatype stype, void *dst, size_t dcount,
                     MPI_Datatype dtype)
{
    crmpi_convertor_t in, out;
    char chunk[4096];

    crmpi_convertor_init(&in, src, scount, stype);
    crmpi_convertor_init(&out, dst, dcount, dtype);
    if (stype->contiguous && dtype->contiguous) {
        size_t n = in.total < out.total ? in.total : out.total;

        memmove((char *)dst + dtype->true_lb, (const char *)src + stype->true_lb, n);
        return;
    }
    if (dtype->contiguous) {
        crmpi_convertor_pack(&in, (char *)dst + dtype->true_lb, out.total);
        return;
    }
    if (stype->contiguous) {
        crmpi_convertor_unpack(&out, (const char *)src + stype->true_lb, in.total);
        return;
    }
    while (in.position < in.total && out.position < out.total) {
        size_t n = crmpi_convertor_pack(&in, chunk, sizeof(chunk));

        crmpi_convertor_unpack(&out, chunk, n);
    }
}

/* Record the first error of the collective. */
static void sched_fail(crmpi_coll_sched_t *sched, int error)
{
    if (sched->error == 0)
        sched->error = error;
}

/* Execute or start the steps of the round at round_start. */
static void sched_round_start(crmpi_coll_sched_t *sched)
{
    size_t i;
    int rc;

    for (i = sched->round_start; i < sched->num_steps; i++) {
        coll_step_t *step = &sched->steps[i];

        if (step->kind == COLL_STEP_ROUND)
            break;
        switch (step->kind) {
        case COLL_STEP_SEND:
            rc = crmpi_pml_isend(step->src, step->count, step->type, step->peer, sched->tag,
                                 CRMPI_PML_SEND_STANDARD, step->pml, &step->req);
            if (rc != CRMPI_OK) {
                step->req = NULL;
                sched_fail(sched, rc);
            }
            break;
        case COLL_STEP_RECV:
            rc = crmpi_pml_irecv(step->dst, step->count, step->type, step->peer, sched->tag,
                                 step->pml, &step->req);
            if (rc != CRMPI_OK) {
                step->req = NULL;
                sched_fail(sched, rc);
            }
            break;
        case COLL_STEP_COPY:
            crmpi_coll_copy(step->src, step->count, step->type, step->dst, step->dcount,
                            step->dtype);
            break;
        case COLL_STEP_REDUCE:
            rc = crmpi_coll_op_reduce(step->op, step->src, step->dst, step->count, step->type);
            if (rc != CRMPI_OK)
                sched_fail(sched, MPI_ERR_OP);
            break;
        case COLL_STEP_ROUND: break;
        }
    }
    sched->round_end = i;
    sched->running = true;
}

/* Finish the completed messages of the running round. @return true when none is left. */
static bool sched_round_test(crmpi_coll_sched_t *sched, int *events)
{
    bool all = true;

    for (size_t i = sched->round_start; i < sched->round_end; i++) {
        coll_step_t *step = &sched->steps[i];
        MPI_Status status;

        if (!step->req)
            continue;
        if (!step->req->complete) {
            all = false;
            continue;
        }
        if (crmpi_pml_request_finish(step->req, &status) != MPI_SUCCESS)
            sched_fail(sched, status.MPI_ERROR);
        step->req = NULL;
        (*events)++;
    }
    return all;
}

int crmpi_coll_sched_progress(crmpi_coll_sched_t *sched)
{
    int events = 0;

    /* Another thread may progress while a user op of this schedule runs unlocked. */
    if (sched->busy)
        return 0;
    sched->busy = true;
    while (!sched->done) {
        if (sched->running) {
            if (!sched_round_test(sched, &events))
                break;
            sched->running = false;
            /* Past the round's end marker. */
            sched->round_start = sched->round_end + 1;
        }
        /* After an error, no new round starts: the collective completes with the error
         * once the messages already started are done. */
        if (sched->round_start >= sched->num_steps || sched->error != 0) {
            sched->done = true;
            events++;
            break;
        }
        sched_round_start(sched);
    }
    sched->busy = false;
    return events;
}
