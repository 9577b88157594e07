/*
 * osc_pt2pt_target.c: the target side of component pt2pt (osc.h), run by the progress
 * engine. Each turn takes every request that reached matching on each window's
 * communicator (a matched probe removes it from matching, so the order is the arrival
 * order, per origin the order it was sent: MPI-3.1 section 3.5), receives it whole, and
 * applies the oldest ones whose data are in. One message is applied at a time, under the
 * library lock: that is what makes accumulates atomic per element.
 */
#include "osc_pt2pt.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "datatype.h"
#include "log.h"

/* Set while the progress function runs: the PML calls it again from inside improbe and
 * isend, where it must do nothing. */
static bool osc_pt2pt_progress_busy;

/* The basic types of accumulates, by their index on the wire (a pointer would differ
 * between processes that load libmpi at different addresses). */
static const MPI_Datatype *osc_pt2pt_basic_table(size_t *count_out)
{
    static MPI_Datatype table[64];
    static size_t count;

    if (count == 0) {
        const MPI_Datatype all[] = {
            MPI_CHAR,
            MPI_SIGNED_CHAR,
            MPI_UNSIGNED_CHAR,
            MPI_BYTE,
            MPI_WCHAR,
            MPI_SHORT,
            MPI_UNSIGNED_SHORT,
            MPI_INT,
            MPI_UNSIGNED,
            MPI_LONG,
            MPI_UNSIGNED_LONG,
            MPI_LONG_LONG_INT,
            MPI_UNSIGNED_LONG_LONG,
            MPI_FLOAT,
            MPI_DOUBLE,
            MPI_LONG_DOUBLE,
            MPI_C_BOOL,
            MPI_INT8_T,
            MPI_INT16_T,
            MPI_INT32_T,
            MPI_INT64_T,
            MPI_UINT8_T,
            MPI_UINT16_T,
            MPI_UINT32_T,
            MPI_UINT64_T,
            MPI_AINT,
            MPI_OFFSET,
            MPI_COUNT,
            MPI_C_FLOAT_COMPLEX,
            MPI_C_DOUBLE_COMPLEX,
            MPI_C_LONG_DOUBLE_COMPLEX,
            MPI_CXX_BOOL,
            MPI_CXX_FLOAT_COMPLEX,
            MPI_CXX_DOUBLE_COMPLEX,
            MPI_CXX_LONG_DOUBLE_COMPLEX,
            MPI_FLOAT_INT,
            MPI_DOUBLE_INT,
            MPI_LONG_INT,
            MPI_2INT,
            MPI_SHORT_INT,
            MPI_LONG_DOUBLE_INT,
            MPI_INTEGER,
            MPI_REAL,
            MPI_DOUBLE_PRECISION,
            MPI_COMPLEX,
            MPI_DOUBLE_COMPLEX,
            MPI_LOGICAL,
            MPI_CHARACTER,
            MPI_INTEGER1,
            MPI_INTEGER2,
            MPI_INTEGER4,
            MPI_INTEGER8,
            MPI_REAL4,
            MPI_REAL8,
            MPI_COMPLEX8,
            MPI_COMPLEX16,
            MPI_2INTEGER,
            MPI_2REAL,
            MPI_2DOUBLE_PRECISION,
        };
        _Static_assert(sizeof(all) / sizeof(all[0]) <= sizeof(table) / sizeof(table[0]),
                       "the basic type table is too small");
        memcpy(table, all, sizeof(all));
        count = sizeof(all) / sizeof(all[0]);
    }
    *count_out = count;
    return table;
}

int osc_pt2pt_basic_index(MPI_Datatype type)
{
    size_t count;
    const MPI_Datatype *table = osc_pt2pt_basic_table(&count);

    for (size_t i = 0; i < count; i++) {
        if (table[i] == type)
            return (int)i;
    }
    return -1;
}

static MPI_Datatype osc_pt2pt_basic_type(int index)
{
    size_t count;
    const MPI_Datatype *table = osc_pt2pt_basic_table(&count);

    return index >= 0 && (size_t)index < count ? table[index] : NULL;
}

/*
 * Finish the completed requests of each peer's queue in posting order, up to the first not
 * complete: one that completed behind it (a small reply behind a large one) is finished
 * with those, which the peer sent first and are on their way. A scan of every request at
 * every progress turn would cost as much as the requests in flight, and a window can have
 * a hundred thousand (MPICH's manyget). @return how many were finished
 */
static int osc_queue_drain(osc_queue_t *queues, int npeers, size_t *count)
{
    int events = 0;

    for (int peer = 0; *count && peer < npeers; peer++) {
        osc_queue_t *queue = &queues[peer];

        while (queue->head && queue->head->req->complete) {
            osc_pending_t *done = queue->head;

            queue->head = done->next;
            if (!queue->head)
                queue->tail = NULL;
            (*count)--;
            crmpi_pml_request_finish(done->req, NULL);
            if (done->user)
                crmpi_pml_request_set_complete(done->user, MPI_SUCCESS);
            free(done->buf);
            free(done);
            events++;
        }
    }
    return events;
}

int osc_pt2pt_send(crmpi_osc_win_t *win, void *buf, size_t nbytes, int dest, int tag)
{
    osc_pending_t *sent = calloc(1, sizeof(*sent));
    int rc;

    if (!sent) {
        crmpi_log_error("osc: out of memory sending to rank %d", dest);
        free(buf);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    rc = crmpi_pml_isend(buf, nbytes, MPI_BYTE, dest, tag, CRMPI_PML_SEND_STANDARD, win->params.pml,
                         &sent->req);
    if (rc != CRMPI_OK) {
        free(buf);
        free(sent);
        return rc;
    }
    sent->buf = buf;
    osc_queue_push(&win->sends[dest], sent, &win->sends_pending);
    return CRMPI_OK;
}

/* Whether every byte of [start, end) is attached memory: an access may span regions
 * attached one after the other (MPI asks only that it touch no memory that is not
 * attached, MPI-3.1 section 11.2.4). */
static bool osc_pt2pt_attached(const crmpi_osc_win_t *win, const char *start, const char *end)
{
    const char *cursor = start;

    while (cursor < end) {
        const char *next = cursor;

        for (size_t i = 0; i < win->num_regions; i++) {
            const osc_region_t *region = &win->regions[i];
            const char *region_end = (const char *)region->base + region->nbytes;

            if (cursor >= (const char *)region->base && cursor < region_end && region_end > next)
                next = region_end;
        }
        if (next == cursor)
            return false;
        cursor = next;
    }
    return true;
}

/* The target memory of a request: base + disp * unit, or the address itself in a dynamic
 * window, which must lie in attached memory with the whole span the type covers. */
static char *osc_pt2pt_target_addr(crmpi_osc_win_t *win, const osc_am_hdr_t *hdr,
                                   const osc_run_t *runs, int source)
{
    ptrdiff_t lo = 0, hi = 0;
    int64_t offset;
    char *addr;

    for (uint64_t r = 0; r < hdr->num_runs; r++) {
        ptrdiff_t first = runs[r].disp, last = runs[r].disp + (ptrdiff_t)runs[r].len;
        if (hdr->count > 1) {
            ptrdiff_t shift = (ptrdiff_t)(hdr->count - 1) * hdr->extent;
            if (shift < 0)
                first += shift;
            else
                last += shift;
        }
        if (r == 0 || first < lo)
            lo = first;
        if (r == 0 || last > hi)
            hi = last;
    }
    if (win->params.dynamic) {
        addr = (char *)(intptr_t)hdr->disp;
        if (hdr->num_runs == 0 || osc_pt2pt_attached(win, addr + lo, addr + hi))
            return addr;
        crmpi_log_error("osc: rank %d accessed address %p (bytes %td..%td), which is not "
                        "attached to the dynamic window here; ignored",
                        source, (void *)addr, lo, hi);
        return NULL;
    }
    /* The origin checked the range of every access that moves data; an empty one may carry
     * any displacement, which a unit wider than an int can overflow with. */
    if (__builtin_mul_overflow(hdr->disp, (int64_t)win->params.disp_unit, &offset)) {
        if (hdr->num_runs)
            crmpi_log_error("osc: rank %d's displacement %" PRId64 " overflows in units of %td "
                            "bytes; ignored",
                            source, hdr->disp, win->params.disp_unit);
        return hdr->num_runs ? NULL : win->params.base;
    }
    addr = (char *)win->params.base + offset;
    if (hdr->num_runs && (addr + lo < (char *)win->params.base ||
                          addr + hi > (char *)win->params.base + win->params.nbytes)) {
        crmpi_log_error("osc: rank %d accessed bytes %td..%td of a %zu-byte window; ignored",
                        source, addr + lo - (char *)win->params.base,
                        addr + hi - (char *)win->params.base, win->params.nbytes);
        return NULL;
    }
    return addr;
}

/* Copy between the target memory the runs describe and a stream (to_stream: gather). */
static void osc_pt2pt_runs_copy(char *addr, const osc_am_hdr_t *hdr, const osc_run_t *runs,
                                char *stream, bool to_stream)
{
    for (uint64_t e = 0; e < hdr->count; e++) {
        char *elem = addr + (ptrdiff_t)e * hdr->extent;
        for (uint64_t r = 0; r < hdr->num_runs; r++) {
            if (to_stream)
                memcpy(stream, elem + runs[r].disp, runs[r].len);
            else
                memcpy(elem + runs[r].disp, stream, runs[r].len);
            stream += runs[r].len;
        }
    }
}

/* The bytes of the target region as one stream. */
static size_t osc_pt2pt_stream_bytes(const osc_am_hdr_t *hdr, const osc_run_t *runs)
{
    size_t per_elem = 0;

    for (uint64_t r = 0; r < hdr->num_runs; r++)
        per_elem += runs[r].len;
    return per_elem * hdr->count;
}

static void osc_pt2pt_grant(crmpi_osc_win_t *win, int origin, int lock_type)
{
    if (lock_type == MPI_LOCK_EXCLUSIVE)
        win->lock_exclusive = origin;
    else
        win->lock_shared++;
    osc_pt2pt_send(win, NULL, 0, origin, OSC_TAG_LOCK);
}

static bool osc_pt2pt_grantable(const crmpi_osc_win_t *win, int lock_type)
{
    if (win->lock_exclusive >= 0)
        return false;
    return lock_type == MPI_LOCK_SHARED || win->lock_shared == 0;
}

/* Grant the waiting requests that can go now, in arrival order (a shared request does not
 * overtake an exclusive one that waits before it, so writers are not starved). */
static void osc_pt2pt_grant_waiters(crmpi_osc_win_t *win)
{
    while (win->waiters && osc_pt2pt_grantable(win, win->waiters->lock_type)) {
        osc_lock_waiter_t *waiter = win->waiters;
        win->waiters = waiter->next;
        osc_pt2pt_grant(win, waiter->origin, waiter->lock_type);
        free(waiter);
    }
}

static void osc_pt2pt_lock_request(crmpi_osc_win_t *win, int origin, int lock_type)
{
    osc_lock_waiter_t *waiter, **tail;

    if (!win->waiters && osc_pt2pt_grantable(win, lock_type)) {
        osc_pt2pt_grant(win, origin, lock_type);
        return;
    }
    waiter = malloc(sizeof(*waiter));
    if (!waiter) {
        crmpi_log_error("osc: out of memory queueing rank %d's lock request; it is lost", origin);
        return;
    }
    waiter->origin = origin;
    waiter->lock_type = lock_type;
    waiter->next = NULL;
    for (tail = &win->waiters; *tail; tail = &(*tail)->next) {
    }
    *tail = waiter;
}

/* Apply an accumulate: target = origin op target, element by element of the basic type;
 * the old values go back when fetch. */
/*
 * inout = in op inout, both packed streams of `count` elements of `basic`. The reduction
 * kernels take elements laid out as in memory: a pair type with padding (MPI_DOUBLE_INT,
 * MPI_SHORT_INT, MPI_LONG_DOUBLE_INT...: size below extent) is unpacked into that layout
 * first and packed back after. @return CRMPI_OK, CRMPI_ERR_OUT_OF_RESOURCE, or
 * CRMPI_ERR_NOT_SUPPORTED (op not defined on basic)
 */
static int osc_pt2pt_reduce_packed(const crmpi_coll_op_t *op, const char *in, char *inout,
                                   size_t count, MPI_Datatype basic)
{
    crmpi_convertor_t conv;
    char *a, *b;
    int rc;

    if ((MPI_Aint)basic->size == basic->extent)
        return crmpi_coll_op_reduce(op, in, inout, count, basic);
    a = malloc(count * (size_t)basic->extent + 1);
    b = malloc(count * (size_t)basic->extent + 1);
    if (!a || !b) {
        free(a);
        free(b);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    crmpi_convertor_init(&conv, a, count, basic);
    crmpi_convertor_unpack(&conv, in, conv.total);
    crmpi_convertor_init(&conv, b, count, basic);
    crmpi_convertor_unpack(&conv, inout, conv.total);
    rc = crmpi_coll_op_reduce(op, a, b, count, basic);
    if (rc == CRMPI_OK) {
        crmpi_convertor_init(&conv, b, count, basic);
        crmpi_convertor_pack(&conv, inout, conv.total);
    }
    free(a);
    free(b);
    return rc;
}

static void osc_pt2pt_accumulate(crmpi_osc_win_t *win, const osc_am_hdr_t *hdr,
                                 const osc_run_t *runs, const char *data, int source)
{
    MPI_Datatype basic = osc_pt2pt_basic_type(hdr->basic);
    char *addr = osc_pt2pt_target_addr(win, hdr, runs, source);
    size_t nbytes = osc_pt2pt_stream_bytes(hdr, runs);
    char *old = malloc(nbytes ? nbytes : 1), *fresh = malloc(nbytes ? nbytes : 1);
    crmpi_coll_op_t op = {.kind = (crmpi_coll_op_kind_t)hdr->op, .commutative = true};

    if (!old || !fresh || !basic) {
        crmpi_log_error("osc: rank %d's accumulate: %s; ignored", source,
                        basic ? "out of memory" : "unknown basic type");
        free(old);
        free(fresh);
        if (hdr->fetch)
            osc_pt2pt_send(win, NULL, 0, source, OSC_TAG_REPLY);
        return;
    }
    if (!addr)
        nbytes = 0;
    if (addr)
        osc_pt2pt_runs_copy(addr, hdr, runs, old, true);
    if (addr && op.kind != CRMPI_COLL_OP_NO_OP) {
        if (op.kind == CRMPI_COLL_OP_REPLACE) {
            memcpy(fresh, data, nbytes);
        } else {
            memcpy(fresh, old, nbytes);
            if (osc_pt2pt_reduce_packed(&op, data, fresh, nbytes / basic->size, basic) !=
                CRMPI_OK) {
                crmpi_log_error("osc: rank %d's accumulate: the op is not defined on %s; "
                                "ignored",
                                source, basic->name);
                memcpy(fresh, old, nbytes);
            }
        }
        osc_pt2pt_runs_copy(addr, hdr, runs, fresh, false);
    }
    free(fresh);
    if (hdr->fetch)
        osc_pt2pt_send(win, old, nbytes, source, OSC_TAG_REPLY);
    else
        free(old);
}

static void osc_pt2pt_compare_and_swap(crmpi_osc_win_t *win, const osc_am_hdr_t *hdr,
                                       const osc_run_t *runs, const char *data, int source)
{
    char *addr = osc_pt2pt_target_addr(win, hdr, runs, source);
    size_t nbytes = hdr->nbytes / 2;
    char *old = malloc(nbytes ? nbytes : 1);

    if (!old || !addr) {
        free(old);
        osc_pt2pt_send(win, NULL, 0, source, OSC_TAG_REPLY);
        return;
    }
    osc_pt2pt_runs_copy(addr, hdr, runs, old, true);
    if (memcmp(old, data + nbytes, nbytes) == 0)
        osc_pt2pt_runs_copy(addr, hdr, runs, (char *)data, false);
    osc_pt2pt_send(win, old, nbytes, source, OSC_TAG_REPLY);
}

/* Apply one request (its data are in). */
static void osc_pt2pt_apply(crmpi_osc_win_t *win, osc_incoming_t *in)
{
    const osc_am_hdr_t *hdr = in->buf;
    const osc_run_t *runs = (const osc_run_t *)(hdr + 1);
    const char *data = (const char *)(runs + hdr->num_runs);
    char *addr, *out;
    size_t nbytes;

    if (in->nbytes < sizeof(*hdr) ||
        in->nbytes != sizeof(*hdr) + hdr->num_runs * sizeof(osc_run_t) + hdr->nbytes) {
        crmpi_log_error("osc: a request of %zu bytes from rank %d is malformed; ignored",
                        in->nbytes, in->source);
        return;
    }
    switch ((osc_am_kind_t)hdr->kind) {
    case OSC_AM_PUT:
        addr = osc_pt2pt_target_addr(win, hdr, runs, in->source);
        if (addr && osc_pt2pt_stream_bytes(hdr, runs) == hdr->nbytes)
            osc_pt2pt_runs_copy(addr, hdr, runs, (char *)data, false);
        break;
    case OSC_AM_GET:
        addr = osc_pt2pt_target_addr(win, hdr, runs, in->source);
        nbytes = addr ? osc_pt2pt_stream_bytes(hdr, runs) : 0;
        out = nbytes ? malloc(nbytes) : NULL;
        if (nbytes && !out) {
            crmpi_log_error("osc: out of memory answering rank %d's get", in->source);
            nbytes = 0;
        }
        if (out)
            osc_pt2pt_runs_copy(addr, hdr, runs, out, true);
        osc_pt2pt_send(win, out, nbytes, in->source, OSC_TAG_REPLY);
        break;
    case OSC_AM_ACC: osc_pt2pt_accumulate(win, hdr, runs, data, in->source); break;
    case OSC_AM_CAS: osc_pt2pt_compare_and_swap(win, hdr, runs, data, in->source); break;
    case OSC_AM_FLUSH: osc_pt2pt_send(win, NULL, 0, in->source, OSC_TAG_REPLY); break;
    case OSC_AM_LOCK: osc_pt2pt_lock_request(win, in->source, hdr->lock_type); break;
    case OSC_AM_UNLOCK:
        if (win->lock_exclusive == in->source)
            win->lock_exclusive = -1;
        else if (win->lock_shared > 0)
            win->lock_shared--;
        osc_pt2pt_send(win, NULL, 0, in->source, OSC_TAG_REPLY);
        osc_pt2pt_grant_waiters(win);
        break;
    case OSC_AM_COMPLETE: win->completes[in->source]++; break;
    default:
        crmpi_log_error("osc: unknown request %u from rank %d; ignored", hdr->kind, in->source);
        break;
    }
}

/* Take every request that reached matching; apply those that are in, oldest first. */
static int osc_pt2pt_win_progress(crmpi_osc_win_t *win)
{
    int events = 0;

    for (;;) {
        struct crmpi_message_s *msg;
        MPI_Status status;
        int flag = 0;
        osc_incoming_t *in;

        if (crmpi_pml_improbe(MPI_ANY_SOURCE, OSC_TAG_AM, win->params.pml, &flag, &msg, &status) !=
                CRMPI_OK ||
            !flag)
            break;
        in = calloc(1, sizeof(*in));
        if (in)
            in->buf = malloc(status._nbytes ? (size_t)status._nbytes : 1);
        if (!in || !in->buf) {
            /* The message is out of matching already: nothing can take it any more. */
            crmpi_log_error("osc: out of memory receiving a request of rank %d; the job "
                            "cannot go on",
                            status.MPI_SOURCE);
            abort();
        }
        in->nbytes = (size_t)status._nbytes;
        in->source = status.MPI_SOURCE;
        if (crmpi_pml_imrecv(in->buf, in->nbytes, MPI_BYTE, msg, &in->recv) != CRMPI_OK) {
            crmpi_log_error("osc: cannot receive a request of rank %d; the job cannot go on",
                            in->source);
            abort();
        }
        if (win->in_tail)
            win->in_tail->next = in;
        else
            win->in_head = in;
        win->in_tail = in;
        events++;
    }
    while (win->in_head && win->in_head->recv->complete) {
        osc_incoming_t *in = win->in_head;
        win->in_head = in->next;
        if (!win->in_head)
            win->in_tail = NULL;
        crmpi_pml_request_finish(in->recv, NULL);
        osc_pt2pt_apply(win, in);
        free(in->buf);
        free(in);
        events++;
    }
    events += osc_queue_drain(win->replies, win->params.size, &win->replies_pending);
    events += osc_queue_drain(win->sends, win->params.size, &win->sends_pending);
    return events;
}

int osc_pt2pt_progress(void)
{
    int events = 0;

    if (osc_pt2pt_progress_busy)
        return 0;
    osc_pt2pt_progress_busy = true;
    for (crmpi_osc_win_t *win = osc_pt2pt_windows; win; win = win->next)
        events += osc_pt2pt_win_progress(win);
    osc_pt2pt_progress_busy = false;
    return events;
}
