/*
 * osc_pt2pt.c: component pt2pt's windows and origin side (osc.h): each operation is one
 * request message (header, the target type's runs, the packed origin data) sent on the
 * window's communicator; a get posts the receive of its reply before the request goes, so
 * the reply lands straight in the origin buffer, unpacked by the PML with the origin type.
 * Completion at the target is asked for with a flush request, which the target answers
 * after everything the origin sent before it (osc.h).
 */
#include "osc_pt2pt.h"

#include <stdlib.h>
#include <string.h>

#include "convertor.h"
#include "crmpi_status.h"
#include "datatype.h"
#include "log.h"
#include "progress.h"

crmpi_osc_win_t *osc_pt2pt_windows;

/* What one rank tells the others at creation. */
typedef struct osc_pt2pt_win_info {
    uint64_t nbytes;   /* its window's size */
    int64_t disp_unit; /* its displacement unit */
} osc_pt2pt_win_info_t;

/* Wait until `done(win, arg)` holds, progressing (the lock is dropped between turns). */
static void osc_pt2pt_wait_until(crmpi_osc_win_t *win, bool (*done)(crmpi_osc_win_t *, int),
                                 int arg)
{
    while (!done(win, arg)) {
        crmpi_pml_wait_turn();
        osc_pt2pt_progress();
    }
}

static int osc_pt2pt_barrier(crmpi_osc_win_t *win)
{
    crmpi_coll_args_t args = {0};

    return crmpi_coll_run(win->params.coll, CRMPI_COLL_BARRIER, &args);
}

int crmpi_osc_win_create(const crmpi_osc_win_params_t *params, crmpi_osc_win_t **win_out)
{
    crmpi_osc_win_t *win = calloc(1, sizeof(*win));
    osc_pt2pt_win_info_t mine, *all = NULL;
    crmpi_coll_args_t args = {0};
    int size = params->size, rc = CRMPI_ERR_OUT_OF_RESOURCE;

    if (!win)
        goto err_log;
    win->params = *params;
    win->lock_exclusive = -1;
    win->sizes = calloc((size_t)size, sizeof(win->sizes[0]));
    win->units = calloc((size_t)size, sizeof(win->units[0]));
    win->dirty = calloc((size_t)size, sizeof(win->dirty[0]));
    win->replies = calloc((size_t)size, sizeof(win->replies[0]));
    win->sends = calloc((size_t)size, sizeof(win->sends[0]));
    win->completes = calloc((size_t)size, sizeof(win->completes[0]));
    win->post_group = calloc((size_t)size, sizeof(win->post_group[0]));
    win->start_group = calloc((size_t)size, sizeof(win->start_group[0]));
    all = calloc((size_t)size, sizeof(*all));
    if (!win->sizes || !win->units || !win->dirty || !win->replies || !win->sends ||
        !win->completes || !win->post_group || !win->start_group || !all)
        goto err_free_win;
    mine.nbytes = params->nbytes;
    mine.disp_unit = params->disp_unit;
    args.sbuf = &mine;
    args.rbuf = all;
    args.scount = args.rcount = sizeof(mine);
    args.stype = args.rtype = MPI_BYTE;
    rc = crmpi_coll_run(params->coll, CRMPI_COLL_ALLGATHER, &args);
    if (rc != CRMPI_OK)
        goto err_free_win;
    for (int r = 0; r < size; r++) {
        win->sizes[r] = (size_t)all[r].nbytes;
        win->units[r] = (MPI_Aint)all[r].disp_unit;
    }
    free(all);
    if (!osc_pt2pt_windows)
        crmpi_progress_register(osc_pt2pt_progress);
    win->next = osc_pt2pt_windows;
    osc_pt2pt_windows = win;
    *win_out = win;
    return CRMPI_OK;

err_free_win:
    free(all);
    free(win->sizes);
    free(win->units);
    free(win->dirty);
    free(win->replies);
    free(win->sends);
    free(win->completes);
    free(win->post_group);
    free(win->start_group);
    free(win);
err_log:
    if (rc == CRMPI_ERR_OUT_OF_RESOURCE)
        crmpi_log_error("osc: out of memory creating a window of %d ranks", size);
    return rc;
}

static bool osc_pt2pt_quiet(crmpi_osc_win_t *win, int unused)
{
    (void)unused;
    return !win->replies_pending && !win->sends_pending && !win->in_head;
}

int crmpi_osc_win_destroy(crmpi_osc_win_t *win)
{
    int rc;

    /* Every epoch is closed, so every request this rank sent was answered; after the
     * barrier no rank sends to this window any more, and what this rank still sends
     * (the last replies) finishes before the communicator goes. */
    osc_pt2pt_wait_until(win, osc_pt2pt_quiet, 0);
    rc = osc_pt2pt_barrier(win);
    osc_pt2pt_wait_until(win, osc_pt2pt_quiet, 0);
    for (crmpi_osc_win_t **link = &osc_pt2pt_windows; *link; link = &(*link)->next) {
        if (*link == win) {
            *link = win->next;
            break;
        }
    }
    if (!osc_pt2pt_windows)
        crmpi_progress_unregister(osc_pt2pt_progress);
    while (win->waiters) {
        osc_lock_waiter_t *waiter = win->waiters;
        win->waiters = waiter->next;
        free(waiter);
    }
    free(win->regions);
    free(win->sizes);
    free(win->units);
    free(win->dirty);
    free(win->replies);
    free(win->sends);
    free(win->completes);
    free(win->post_group);
    free(win->start_group);
    free(win);
    return rc;
}

void crmpi_osc_win_target(const crmpi_osc_win_t *win, int target, size_t *nbytes_out,
                          MPI_Aint *disp_unit_out)
{
    *nbytes_out = win->sizes[target];
    *disp_unit_out = win->units[target];
}

int crmpi_osc_attach(crmpi_osc_win_t *win, void *base, size_t nbytes)
{
    osc_region_t *grown = realloc(win->regions, (win->num_regions + 1) * sizeof(*grown));

    if (!grown) {
        crmpi_log_error("osc: out of memory attaching %zu bytes", nbytes);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    win->regions = grown;
    win->regions[win->num_regions].base = base;
    win->regions[win->num_regions].nbytes = nbytes;
    win->num_regions++;
    return CRMPI_OK;
}

int crmpi_osc_detach(crmpi_osc_win_t *win, const void *base)
{
    for (size_t i = 0; i < win->num_regions; i++) {
        if (win->regions[i].base == base) {
            win->regions[i] = win->regions[--win->num_regions];
            return CRMPI_OK;
        }
    }
    return CRMPI_ERR_NOT_FOUND;
}

/*
 * The request message: header, runs of target_type, then `extra` data bytes, which the
 * caller fills at *data_out. The message is malloc'd (osc_pt2pt_send frees it).
 */
static osc_am_hdr_t *osc_pt2pt_am_new(osc_am_kind_t kind, MPI_Aint target_disp, size_t target_count,
                                      MPI_Datatype target_type, size_t extra, size_t *nbytes_out,
                                      char **data_out)
{
    size_t num_runs = target_type && target_count ? target_type->num_runs : 0;
    size_t nbytes = sizeof(osc_am_hdr_t) + num_runs * sizeof(osc_run_t) + extra;
    osc_am_hdr_t *hdr = calloc(1, nbytes);
    osc_run_t *runs;

    if (!hdr) {
        crmpi_log_error("osc: out of memory for a request of %zu bytes", nbytes);
        return NULL;
    }
    hdr->kind = kind;
    hdr->disp = target_disp;
    hdr->count = num_runs ? target_count : 0;
    hdr->extent = target_type ? target_type->extent : 0;
    hdr->num_runs = num_runs;
    hdr->nbytes = extra;
    runs = (osc_run_t *)(hdr + 1);
    for (size_t r = 0; r < num_runs; r++) {
        runs[r].disp = target_type->runs[r].disp;
        runs[r].len = target_type->runs[r].len;
    }
    *nbytes_out = nbytes;
    *data_out = (char *)(runs + num_runs);
    return hdr;
}

/* Post the receive of a reply (before its request goes, so nothing else can take it). */
static int osc_pt2pt_expect_reply(crmpi_osc_win_t *win, void *buf, size_t count, MPI_Datatype type,
                                  int target, crmpi_request_t *user)
{
    osc_pending_t *reply = calloc(1, sizeof(*reply));
    int rc;

    if (!reply) {
        crmpi_log_error("osc: out of memory expecting a reply from rank %d", target);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    rc = crmpi_pml_irecv(buf, count, type, target, OSC_TAG_REPLY, win->params.pml, &reply->req);
    if (rc != CRMPI_OK) {
        free(reply);
        return rc;
    }
    reply->user = user;
    osc_queue_push(&win->replies[target], reply, &win->replies_pending);
    return CRMPI_OK;
}

/* A request form's request: complete at once (nothing to wait for locally), or completed
 * with the reply. */
static int osc_pt2pt_user_request(crmpi_osc_win_t *win, bool now, crmpi_request_t **req_out)
{
    int rc;

    if (!req_out)
        return CRMPI_OK;
    rc = crmpi_pml_request_create_generic(win->params.pml, req_out);
    if (rc == CRMPI_OK && now)
        crmpi_pml_request_set_complete(*req_out, MPI_SUCCESS);
    return rc;
}

/* The byte stream of (buf, count, type) into dst, which holds count * type->size bytes. */
static void osc_pt2pt_pack(void *dst, const void *buf, size_t count, MPI_Datatype type)
{
    crmpi_convertor_t conv;

    crmpi_convertor_init(&conv, buf, count, type);
    crmpi_convertor_pack(&conv, dst, conv.total);
}

int crmpi_osc_put(crmpi_osc_win_t *win, const void *origin, size_t origin_count,
                  MPI_Datatype origin_type, int target, MPI_Aint target_disp, size_t target_count,
                  MPI_Datatype target_type, crmpi_request_t **req_out)
{
    size_t data = origin_count * origin_type->size, nbytes;
    char *at;
    osc_am_hdr_t *hdr;
    int rc = osc_pt2pt_user_request(win, true, req_out);

    if (rc != CRMPI_OK || target == MPI_PROC_NULL)
        return rc;
    hdr = osc_pt2pt_am_new(OSC_AM_PUT, target_disp, target_count, target_type, data, &nbytes, &at);
    if (!hdr)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    osc_pt2pt_pack(at, origin, origin_count, origin_type);
    win->dirty[target] = true;
    return osc_pt2pt_send(win, hdr, nbytes, target, OSC_TAG_AM);
}

int crmpi_osc_get(crmpi_osc_win_t *win, void *origin, size_t origin_count, MPI_Datatype origin_type,
                  int target, MPI_Aint target_disp, size_t target_count, MPI_Datatype target_type,
                  crmpi_request_t **req_out)
{
    size_t nbytes;
    char *at;
    osc_am_hdr_t *hdr;
    crmpi_request_t *user = NULL;
    int rc = osc_pt2pt_user_request(win, target == MPI_PROC_NULL, req_out ? &user : NULL);

    if (rc != CRMPI_OK)
        return rc;
    if (req_out)
        *req_out = user;
    if (target == MPI_PROC_NULL)
        return CRMPI_OK;
    hdr = osc_pt2pt_am_new(OSC_AM_GET, target_disp, target_count, target_type, 0, &nbytes, &at);
    if (!hdr)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    rc = osc_pt2pt_expect_reply(win, origin, origin_count, origin_type, target, user);
    if (rc != CRMPI_OK) {
        free(hdr);
        return rc;
    }
    return osc_pt2pt_send(win, hdr, nbytes, target, OSC_TAG_AM);
}

int crmpi_osc_accumulate(crmpi_osc_win_t *win, const void *origin, size_t origin_count,
                         MPI_Datatype origin_type, void *result, size_t result_count,
                         MPI_Datatype result_type, int target, MPI_Aint target_disp,
                         size_t target_count, MPI_Datatype target_type, MPI_Datatype basic,
                         const crmpi_coll_op_t *op, bool fetch, crmpi_request_t **req_out)
{
    /* MPI_NO_OP ignores the origin buffer (MPI-3.1 section 11.3.4). */
    size_t data = op->kind == CRMPI_COLL_OP_NO_OP ? 0 : origin_count * origin_type->size;
    size_t nbytes;
    char *at;
    osc_am_hdr_t *hdr;
    crmpi_request_t *user = NULL;
    int basic_index = osc_pt2pt_basic_index(basic);
    int rc;

    /* No basic type for MPI_PROC_NULL: the MPI layer finds none for a target it skips. */
    if ((basic_index < 0 && target != MPI_PROC_NULL) || op->kind == CRMPI_COLL_OP_USER)
        return CRMPI_ERR_NOT_SUPPORTED;
    rc = osc_pt2pt_user_request(win, !fetch || target == MPI_PROC_NULL, req_out ? &user : NULL);
    if (rc != CRMPI_OK)
        return rc;
    if (req_out)
        *req_out = user;
    if (target == MPI_PROC_NULL)
        return CRMPI_OK;
    hdr = osc_pt2pt_am_new(OSC_AM_ACC, target_disp, target_count, target_type, data, &nbytes, &at);
    if (!hdr)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    hdr->op = op->kind;
    hdr->basic = basic_index;
    hdr->fetch = fetch;
    if (data)
        osc_pt2pt_pack(at, origin, origin_count, origin_type);
    if (fetch) {
        rc = osc_pt2pt_expect_reply(win, result, result_count, result_type, target, user);
        if (rc != CRMPI_OK) {
            free(hdr);
            return rc;
        }
    } else {
        win->dirty[target] = true;
    }
    return osc_pt2pt_send(win, hdr, nbytes, target, OSC_TAG_AM);
}

int crmpi_osc_compare_and_swap(crmpi_osc_win_t *win, const void *origin, const void *compare,
                               void *result, MPI_Datatype type, int target, MPI_Aint target_disp)
{
    size_t nbytes;
    char *at;
    osc_am_hdr_t *hdr;
    int rc;

    if (target == MPI_PROC_NULL)
        return CRMPI_OK;
    hdr = osc_pt2pt_am_new(OSC_AM_CAS, target_disp, 1, type, 2 * type->size, &nbytes, &at);
    if (!hdr)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    hdr->basic = osc_pt2pt_basic_index(type);
    osc_pt2pt_pack(at, origin, 1, type);
    osc_pt2pt_pack(at + type->size, compare, 1, type);
    rc = osc_pt2pt_expect_reply(win, result, 1, type, target, NULL);
    if (rc != CRMPI_OK) {
        free(hdr);
        return rc;
    }
    return osc_pt2pt_send(win, hdr, nbytes, target, OSC_TAG_AM);
}

/* A request without data (flush, lock, unlock, complete), with its reply expected or not. */
static int osc_pt2pt_control(crmpi_osc_win_t *win, osc_am_kind_t kind, int target, int lock_type,
                             bool reply)
{
    size_t nbytes;
    char *at;
    osc_am_hdr_t *hdr = osc_pt2pt_am_new(kind, 0, 0, NULL, 0, &nbytes, &at);
    int rc;

    if (!hdr)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    hdr->lock_type = lock_type;
    if (reply) {
        rc = osc_pt2pt_expect_reply(win, NULL, 0, MPI_BYTE, target, NULL);
        if (rc != CRMPI_OK) {
            free(hdr);
            return rc;
        }
    }
    return osc_pt2pt_send(win, hdr, nbytes, target, OSC_TAG_AM);
}

/* No reply from `target` (MPI_PROC_NULL: from anyone) is outstanding. */
static bool osc_pt2pt_answered(crmpi_osc_win_t *win, int target)
{
    return target == MPI_PROC_NULL ? win->replies_pending == 0 : win->replies[target].head == NULL;
}

int crmpi_osc_flush(crmpi_osc_win_t *win, int target)
{
    int first = target == MPI_PROC_NULL ? 0 : target;
    int last = target == MPI_PROC_NULL ? win->params.size - 1 : target;

    for (int r = first; r <= last; r++) {
        if (!win->dirty[r])
            continue;
        int rc = osc_pt2pt_control(win, OSC_AM_FLUSH, r, 0, true);
        if (rc != CRMPI_OK)
            return rc;
        win->dirty[r] = false;
    }
    osc_pt2pt_wait_until(win, osc_pt2pt_answered, target);
    return CRMPI_OK;
}

int crmpi_osc_fence(crmpi_osc_win_t *win)
{
    int rc = crmpi_osc_flush(win, MPI_PROC_NULL);

    if (rc != CRMPI_OK)
        return rc;
    return osc_pt2pt_barrier(win);
}

int crmpi_osc_lock(crmpi_osc_win_t *win, int lock_type, int target)
{
    crmpi_request_t *grant;
    int rc;

    rc = crmpi_pml_irecv(NULL, 0, MPI_BYTE, target, OSC_TAG_LOCK, win->params.pml, &grant);
    if (rc != CRMPI_OK)
        return rc;
    rc = osc_pt2pt_control(win, OSC_AM_LOCK, target, lock_type, false);
    if (rc != CRMPI_OK) {
        crmpi_pml_cancel(grant);
        crmpi_pml_wait(grant);
        crmpi_pml_request_finish(grant, NULL);
        return rc;
    }
    crmpi_pml_wait(grant);
    crmpi_pml_request_finish(grant, NULL);
    return CRMPI_OK;
}

int crmpi_osc_unlock(crmpi_osc_win_t *win, int target)
{
    /* The target answers the unlock after everything sent before it: a flush in one. */
    int rc = osc_pt2pt_control(win, OSC_AM_UNLOCK, target, 0, true);

    if (rc != CRMPI_OK)
        return rc;
    win->dirty[target] = false;
    osc_pt2pt_wait_until(win, osc_pt2pt_answered, target);
    return CRMPI_OK;
}

int crmpi_osc_post(crmpi_osc_win_t *win, const int *ranks, int nranks)
{
    memcpy(win->post_group, ranks, (size_t)nranks * sizeof(ranks[0]));
    win->post_n = nranks;
    for (int i = 0; i < nranks; i++) {
        int rc = osc_pt2pt_send(win, NULL, 0, ranks[i], OSC_TAG_POST);
        if (rc != CRMPI_OK)
            return rc;
    }
    return CRMPI_OK;
}

int crmpi_osc_start(crmpi_osc_win_t *win, const int *ranks, int nranks)
{
    memcpy(win->start_group, ranks, (size_t)nranks * sizeof(ranks[0]));
    win->start_n = nranks;
    for (int i = 0; i < nranks; i++) {
        crmpi_request_t *post;
        int rc = crmpi_pml_irecv(NULL, 0, MPI_BYTE, ranks[i], OSC_TAG_POST, win->params.pml, &post);
        if (rc != CRMPI_OK)
            return rc;
        crmpi_pml_wait(post);
        crmpi_pml_request_finish(post, NULL);
    }
    return CRMPI_OK;
}

int crmpi_osc_complete(crmpi_osc_win_t *win)
{
    for (int i = 0; i < win->start_n; i++) {
        int target = win->start_group[i];
        int rc = osc_pt2pt_control(win, OSC_AM_COMPLETE, target, 0, false);
        if (rc != CRMPI_OK)
            return rc;
        win->dirty[target] = false;
    }
    for (int i = 0; i < win->start_n; i++)
        osc_pt2pt_wait_until(win, osc_pt2pt_answered, win->start_group[i]);
    win->start_n = 0;
    return CRMPI_OK;
}

/* Every origin of the exposure epoch has sent its complete. */
static bool osc_pt2pt_all_completed(crmpi_osc_win_t *win, int unused)
{
    (void)unused;
    for (int i = 0; i < win->post_n; i++) {
        if (win->completes[win->post_group[i]] == 0)
            return false;
    }
    return true;
}

int crmpi_osc_wait(crmpi_osc_win_t *win, bool block, bool *done_out)
{
    if (block)
        osc_pt2pt_wait_until(win, osc_pt2pt_all_completed, 0);
    else
        osc_pt2pt_progress();
    if (!osc_pt2pt_all_completed(win, 0)) {
        *done_out = false;
        return CRMPI_OK;
    }
    for (int i = 0; i < win->post_n; i++)
        win->completes[win->post_group[i]]--;
    win->post_n = 0;
    *done_out = true;
    return CRMPI_OK;
}
