/*
 * snapc_app.c: the application coordinator (snapc.h), in libmpi. It runs on the rank's
 * C/R thread, the reader thread of the control socket (rte.h), and drives one checkpoint
 * at a time through crcp and inc with the library lock held, so that the application's
 * threads make no MPI call meanwhile (they wait for the lock inside their blocking calls).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "crcp.h"
#include "clock.h"
#include "crmpi_status.h"
#include "ctl.h"
#include "fault.h"
#include "inc.h"
#include "log.h"
#include "mempolicy.h"
#include "param.h"
#include "progress.h"
#include "rte.h"
#include "snapc.h"

static bool snapc_app_running; /* the reader thread was started */

/* Answer the coordinator: message `type` of checkpoint `seq`. */
static void snapc_app_answer(crmpi_ctl_type_t type, uint32_t seq, int status, crmpi_buf_t *payload)
{
    int rc = crmpi_rte_command_send(type, seq, status, payload);

    if (rc != CRMPI_OK)
        crmpi_log_error("snapc: cannot send %s of checkpoint %u to the agent: %s",
                        crmpi_ctl_type_name(type), seq, crmpi_strerror(rc));
}

/*
 * Wait for the coordinator's next step of checkpoint `seq`, one of `want` (a zero-ended
 * list). With `progress`, the PML keeps moving meanwhile: peers may still be draining
 * messages from this rank. @return CRMPI_OK with *msg_out (the caller frees it),
 * CRMPI_ERR_CKPT_ABORTED (the coordinator aborted the checkpoint), or the error that
 * ended the control connection.
 */
static int snapc_app_wait(uint32_t seq, const crmpi_ctl_type_t *want, bool progress,
                          crmpi_ctl_msg_t *msg_out)
{
    for (;;) {
        crmpi_ctl_msg_t msg;
        int rc = crmpi_rte_command_wait(progress ? 0 : -1, &msg);

        if (rc == CRMPI_ERR_TIMEOUT || rc == CRMPI_ERR_RESOURCE_BUSY) {
            if (progress)
                crmpi_progress();
            continue;
        }
        if (rc != CRMPI_OK)
            return rc;
        if (msg.hdr.seq == seq && msg.hdr.type == CRMPI_CTL_CKPT_ABORT) {
            crmpi_ctl_msg_free(&msg);
            return CRMPI_ERR_CKPT_ABORTED;
        }
        for (const crmpi_ctl_type_t *type = want; *type; type++) {
            if (msg.hdr.seq == seq && msg.hdr.type == *type) {
                *msg_out = msg;
                return CRMPI_OK;
            }
        }
        crmpi_log_warn("snapc: ignored %s (checkpoint %u) during checkpoint %u",
                       crmpi_ctl_type_name(msg.hdr.type), msg.hdr.seq, seq);
        crmpi_ctl_msg_free(&msg);
    }
}

/* The drain's interrupt: has the coordinator aborted checkpoint *arg (or gone away)? */
static int snapc_app_aborted(void *arg)
{
    uint32_t seq = *(uint32_t *)arg;
    crmpi_ctl_msg_t msg;
    int rc = crmpi_rte_command_wait(0, &msg);

    if (rc == CRMPI_ERR_TIMEOUT || rc == CRMPI_ERR_RESOURCE_BUSY)
        return 0;
    if (rc != CRMPI_OK)
        return 1; /* the agent is gone: nothing to drain for */
    bool aborted = msg.hdr.type == CRMPI_CTL_CKPT_ABORT && msg.hdr.seq == seq;
    if (!aborted)
        crmpi_log_warn("snapc: ignored %s (checkpoint %u) during the drain of checkpoint %u",
                       crmpi_ctl_type_name(msg.hdr.type), msg.hdr.seq, seq);
    crmpi_ctl_msg_free(&msg);
    return aborted;
}

/* Bookmarks up, expected counts down, then the drain. */
static int snapc_app_quiesce(uint32_t seq)
{
    static const crmpi_ctl_type_t want_expect[] = {CRMPI_CTL_CKPT_EXPECT, 0};
    crmpi_snapc_bookmark_t *marks = NULL;
    const crmpi_crcp_stats_t *stats;
    crmpi_ctl_msg_t msg;
    crmpi_buf_t buf;
    size_t count = 0;
    int rc;

    rc = crmpi_crcp_bookmarks(&marks, &count);
    crmpi_buf_init(&buf);
    if (rc == CRMPI_OK)
        crmpi_snapc_marks_put(&buf, marks, count);
    free(marks);
    snapc_app_answer(CRMPI_CTL_CKPT_BOOKMARKS, seq, rc, &buf);
    crmpi_buf_free(&buf);
    if (rc != CRMPI_OK)
        return rc;
    crmpi_fault_crash("snapc_quiesce_crash"); /* a rank that dies during the protocol */

    rc = snapc_app_wait(seq, want_expect, true, &msg);
    if (rc != CRMPI_OK)
        return rc;
    crmpi_buf_init_read(&buf, msg.payload, msg.hdr.len);
    rc = crmpi_snapc_marks_get(&buf, crmpi_rte_job()->size, &marks, &count);
    crmpi_ctl_msg_free(&msg);
    if (rc == CRMPI_OK) {
        crmpi_fault_pause("snapc_drain_pause");
        /* The coordinator aborts everyone when a rank's drain fails: no deadline here. */
        rc = crmpi_crcp_drain(marks, count, -1, snapc_app_aborted, &seq);
        free(marks);
    }
    stats = crmpi_crcp_last_stats();
    crmpi_buf_init(&buf);
    crmpi_buf_put_u64(&buf, stats->bookmark_ns);
    crmpi_buf_put_u64(&buf, stats->drain_ns);
    crmpi_buf_put_u64(&buf, stats->messages_drained);
    crmpi_buf_put_u64(&buf, stats->bytes_pulled);
    snapc_app_answer(CRMPI_CTL_CKPT_DRAINED, seq, rc, &buf);
    crmpi_buf_free(&buf);
    return rc;
}

/*
 * The memory policies the agent recorded for this process (mempolicy.h): CRIU restores
 * none, and only the process itself may set them. Done before anything else runs here, so
 * that what the restart allocates already follows them.
 */
static void snapc_app_restore_mempolicy(char *const *env)
{
    static const char prefix[] = CRMPI_MEMPOLICY_ENV "=";
    crmpi_mempolicy_area_t *areas = NULL;
    size_t num = 0, applied;

    for (char *const *e = env; e && *e; e++) {
        if (strncmp(*e, prefix, sizeof(prefix) - 1) != 0)
            continue;
        if (crmpi_mempolicy_parse(*e + sizeof(prefix) - 1, &areas, &num) != CRMPI_OK) {
            crmpi_log_warn("snapc: the restart's memory policies are malformed; every area "
                           "keeps the default policy");
            return;
        }
        crmpi_mempolicy_apply(areas, num, &applied); /* says which it could not */
        free(areas);
        return;
    }
}

/* CKPT_RESTART: the new agent's parameters and job facts, then INC's restart phase. */
static int snapc_app_restart(crmpi_ctl_msg_t *msg)
{
    crmpi_rte_job_info_t job;
    crmpi_buf_t buf;
    uint32_t count = 0;
    char **env = NULL;
    int rc = CRMPI_ERR_PROTO;

    crmpi_buf_init_read(&buf, msg->payload, msg->hdr.len);
    if (crmpi_buf_get_u32(&buf, &count) != CRMPI_OK || count > 65536 ||
        !(env = calloc(count + 1, sizeof(char *))))
        goto out;
    for (uint32_t i = 0; i < count; i++) {
        const char *entry;

        if (crmpi_buf_get_str(&buf, &entry) != CRMPI_OK)
            goto out;
        env[i] = (char *)entry; /* points into the message, which outlives this call */
    }
    if (crmpi_rte_job_info_unpack(&buf, &job) != CRMPI_OK)
        goto out;
    snapc_app_restore_mempolicy(env);
    rc = crmpi_inc_restart(&job, env);
out:
    if (rc == CRMPI_ERR_PROTO)
        crmpi_log_error("snapc: the new agent's restart message is malformed");
    free(env);
    return rc;
}

/* One checkpoint, from CKPT_BEGIN to the answer that lets the job go on. */
static void snapc_app_checkpoint(uint32_t seq)
{
    static const crmpi_ctl_type_t want_suspend[] = {CRMPI_CTL_CKPT_SUSPEND, 0};
    static const crmpi_ctl_type_t want_end[] = {CRMPI_CTL_CKPT_CONTINUE, CRMPI_CTL_CKPT_RESTART, 0};
    bool suspended = false;
    crmpi_ctl_msg_t msg;
    crmpi_buf_t buf;
    uint64_t start;
    int rc;

    crmpi_lock();
    rc = snapc_app_quiesce(seq);
    if (rc == CRMPI_OK)
        rc = snapc_app_wait(seq, want_suspend, true, &msg);
    if (rc == CRMPI_OK) {
        crmpi_ctl_msg_free(&msg);
        start = crmpi_clock_ns();
        rc = crmpi_inc_pre_checkpoint();
        suspended = true; /* even after a failure: continue rebuilds what was released */
        crmpi_fault_pause("snapc_suspend_pause");
        crmpi_buf_init(&buf);
        crmpi_buf_put_u64(&buf, crmpi_clock_ns() - start);
        snapc_app_answer(CRMPI_CTL_CKPT_READY, seq, rc, &buf);
        crmpi_buf_free(&buf);
    }
    /* Now the dump happens (the agent runs CRIU), or the checkpoint was aborted. */
    if (rc == CRMPI_OK)
        rc = snapc_app_wait(seq, want_end, false, &msg);
    else if (rc != CRMPI_ERR_CKPT_ABORTED && rc != CRMPI_ERR_PEER_GONE && rc != CRMPI_ERR_IO)
        rc = snapc_app_wait(seq, want_end, false, &msg); /* the abort that must follow */
    bool restart = rc == CRMPI_OK && msg.hdr.type == CRMPI_CTL_CKPT_RESTART;

    /* Continue, or, in a process restored from the image, restart. */
    start = crmpi_clock_ns();
    int end_rc = restart ? snapc_app_restart(&msg) : suspended ? crmpi_inc_continue() : CRMPI_OK;
    if (rc == CRMPI_OK)
        crmpi_ctl_msg_free(&msg);
    crmpi_crcp_release();
    crmpi_unlock();
    crmpi_buf_init(&buf);
    crmpi_buf_put_u64(&buf, crmpi_clock_ns() - start);
    snapc_app_answer(rc == CRMPI_OK ? CRMPI_CTL_CKPT_CONTINUED : CRMPI_CTL_CKPT_ABORT, seq, end_rc,
                     &buf);
    crmpi_buf_free(&buf);
    if (restart && end_rc == CRMPI_OK)
        crmpi_rte_track_offer(); /* the restored process has no tracking: its new agent's */
    if (end_rc != CRMPI_OK) {
        /* The transports could not be rebuilt: this rank cannot communicate any more. */
        crmpi_rte_abort_job(1,
                            "checkpoint %u: the transports could not be rebuilt after the %s (%s)",
                            seq, restart ? "restart" : "checkpoint", crmpi_strerror(end_rc));
    }
}

static void snapc_app_command(crmpi_ctl_msg_t *msg)
{
    switch (msg->hdr.type) {
    case CRMPI_CTL_CKPT_BEGIN: snapc_app_checkpoint(msg->hdr.seq); break;
    case CRMPI_CTL_CKPT_ABORT:
        /* For a checkpoint this rank has already left (or never joined): nothing to undo. */
        break;
    default:
        crmpi_log_warn("snapc: the agent sent an unexpected %s",
                       crmpi_ctl_type_name(msg->hdr.type));
        break;
    }
    crmpi_ctl_msg_free(msg);
}

int crmpi_snapc_app_init(void)
{
    bool enabled = false;
    int rc;

    crmpi_param_get_bool("ft_cr_enable", &enabled);
    if (!enabled || !crmpi_rte_connected())
        return CRMPI_OK;
    rc = crmpi_rte_reader_start(snapc_app_command);
    if (rc == CRMPI_OK)
        snapc_app_running = true;
    return rc;
}

void crmpi_snapc_app_finalize(void)
{
    if (!snapc_app_running)
        return;
    crmpi_rte_reader_stop();
    snapc_app_running = false;
}
