/*
 * snapc_app.c: the application coordinator (snapc.h), in libmpi. It runs on the rank's
 * C/R thread, the reader thread of the control socket (rte.h), and drives one checkpoint
 * at a time through crcp and inc with the library lock held, so that the application's
 * threads make no MPI call meanwhile (they wait for the lock inside their blocking calls).
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crcp.h"
#include "clock.h"
#include "component.h"
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

/* One registered callback. */
typedef struct snapc_app_cb {
    crmpi_snapc_callback_fn_t fn; /* what to call */
    void *arg;                    /* its argument */
} snapc_app_cb_t;

/* Callbacks and the outcome of application checkpoints, shared by the application's
 * threads (registration, MPIX_Checkpoint's polls) and the C/R thread (the checkpoints). */
static struct {
    pthread_mutex_t lock;                          /* guards everything below */
    snapc_app_cb_t *cbs[CRMPI_SNAPC_CB_NUM_KINDS]; /* per kind, in registration order */
    size_t num_cbs[CRMPI_SNAPC_CB_NUM_KINDS];      /* entries of cbs[kind] */
    uint64_t app_answers;   /* answers to this rank's MPIX_Checkpoint requests so far */
    int app_status;         /* the last one: CRMPI_OK (the rank's part done), or why not */
    uint32_t app_seq;       /* its sequence (0: refused before it began) */
    bool app_committed;     /* CRMPI_OK: committed before the rank went on */
    char app_why[256];      /* on failure, why */
    uint32_t app_continued; /* the last application checkpoint this rank went on from */
    bool app_wanted; /* crs pheap: a checkpoint waits for MPIX_Checkpoint (CKPT_APP_WANTED) */
} snapc_app_shared = {.lock = PTHREAD_MUTEX_INITIALIZER};

int crmpi_snapc_app_callback_add(crmpi_snapc_cb_kind_t kind, crmpi_snapc_callback_fn_t fn,
                                 void *arg)
{
    snapc_app_cb_t *grown;

    if ((unsigned)kind >= CRMPI_SNAPC_CB_NUM_KINDS || !fn)
        return CRMPI_ERR_BAD_PARAM;
    pthread_mutex_lock(&snapc_app_shared.lock);
    grown =
        realloc(snapc_app_shared.cbs[kind], (snapc_app_shared.num_cbs[kind] + 1) * sizeof(*grown));
    if (grown) {
        grown[snapc_app_shared.num_cbs[kind]++] = (snapc_app_cb_t){.fn = fn, .arg = arg};
        snapc_app_shared.cbs[kind] = grown;
    }
    pthread_mutex_unlock(&snapc_app_shared.lock);
    return grown ? CRMPI_OK : CRMPI_ERR_OUT_OF_RESOURCE;
}

void crmpi_snapc_app_callbacks_run(crmpi_snapc_cb_kind_t kind)
{
    /* Without the mutex while calling: a callback may register another one (which runs
     * from the next checkpoint on). Entries are only ever appended. */
    pthread_mutex_lock(&snapc_app_shared.lock);
    size_t count = snapc_app_shared.num_cbs[kind];
    pthread_mutex_unlock(&snapc_app_shared.lock);
    for (size_t i = 0; i < count; i++) {
        pthread_mutex_lock(&snapc_app_shared.lock);
        snapc_app_cb_t cb = snapc_app_shared.cbs[kind][i];
        pthread_mutex_unlock(&snapc_app_shared.lock);
        cb.fn((int)kind, cb.arg);
    }
}

/* The answer to this rank's MPIX_Checkpoint (seq 0: refused before it began). */
static void snapc_app_answered(uint32_t seq, int status, bool committed, const char *why)
{
    pthread_mutex_lock(&snapc_app_shared.lock);
    snapc_app_shared.app_status = status;
    snapc_app_shared.app_seq = seq;
    snapc_app_shared.app_committed = committed;
    snprintf(snapc_app_shared.app_why, sizeof(snapc_app_shared.app_why), "%s", why ? why : "");
    snapc_app_shared.app_answers++;
    snapc_app_shared.app_wanted = false;
    pthread_mutex_unlock(&snapc_app_shared.lock);
}

/* CKPT_APP_DONE: an application checkpoint ended at mpirun. For one this rank already went
 * on from, it is no answer: its MPIX_Checkpoint has returned (mpirun reports the end). */
static void snapc_app_ended(uint32_t seq, int status, const char *why)
{
    pthread_mutex_lock(&snapc_app_shared.lock);
    bool answered = seq != 0 && seq == snapc_app_shared.app_continued;
    pthread_mutex_unlock(&snapc_app_shared.lock);
    if (!answered)
        snapc_app_answered(seq, status, status == CRMPI_OK, why);
}

/* The sequence a transparent restart restored this process from (0: none). */
static uint32_t snapc_app_restored_seq;

bool crmpi_snapc_app_restarted(uint32_t *seq_out, bool *app_out)
{
    const char *dir = NULL;
    const char *last;
    bool restarted = false;

    pthread_mutex_lock(&snapc_app_shared.lock);
    uint32_t restored = snapc_app_restored_seq;
    pthread_mutex_unlock(&snapc_app_shared.lock);
    if (restored) {
        *seq_out = restored;
        *app_out = false;
        return true;
    }
    if (crmpi_param_get_string("snapc_base_app_restart", &dir) == CRMPI_OK && dir && *dir) {
        /* <jobdir>/<seq>: the sequence is the directory's name. */
        last = strrchr(dir, '/');
        unsigned long seq = strtoul(last ? last + 1 : dir, NULL, 10);
        *seq_out = (uint32_t)seq;
        *app_out = true;
        restarted = true;
    }
    return restarted;
}

bool crmpi_snapc_app_on_demand(void)
{
    const char *crs = NULL;

    return crmpi_param_get_string("crs", &crs) == CRMPI_OK && crmpi_component_named(crs, "pheap");
}

bool crmpi_snapc_app_wanted(void)
{
    pthread_mutex_lock(&snapc_app_shared.lock);
    bool wanted = snapc_app_shared.app_wanted;
    pthread_mutex_unlock(&snapc_app_shared.lock);
    return wanted;
}

bool crmpi_snapc_app_enabled(void)
{
    return snapc_app_running;
}

int crmpi_snapc_app_request(const char *backup_path, uint64_t *ticket_out)
{
    crmpi_buf_t buf;
    uint64_t ticket;
    int rc;

    if (!snapc_app_running)
        return CRMPI_ERR_NOT_SUPPORTED;
    pthread_mutex_lock(&snapc_app_shared.lock);
    ticket = snapc_app_shared.app_answers;
    pthread_mutex_unlock(&snapc_app_shared.lock);
    crmpi_buf_init(&buf);
    crmpi_buf_put_str(&buf, backup_path);
    rc = crmpi_rte_command_send(CRMPI_CTL_CR_APP_CKPT, 0, CRMPI_OK, &buf);
    crmpi_buf_free(&buf);
    if (rc == CRMPI_OK)
        *ticket_out = ticket;
    return rc;
}

int crmpi_snapc_app_poll(uint64_t ticket, uint32_t *seq_out, bool *committed_out, char *why,
                         size_t why_len)
{
    int rc = CRMPI_ERR_RESOURCE_BUSY;

    pthread_mutex_lock(&snapc_app_shared.lock);
    if (snapc_app_shared.app_answers > ticket) {
        rc = snapc_app_shared.app_status;
        if (rc == CRMPI_OK) {
            *seq_out = snapc_app_shared.app_seq;
            *committed_out = snapc_app_shared.app_committed;
        } else
            snprintf(why, why_len, "%s", snapc_app_shared.app_why);
    }
    pthread_mutex_unlock(&snapc_app_shared.lock);
    return rc;
}

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
    const char *refusal;
    int rc;

    /* Something the dump cannot capture consistently (a layer's veto): refused before
     * anything is held; the answer's text is the reason mpirun and ompi-checkpoint show. */
    refusal = crmpi_inc_refusal();
    if (refusal) {
        crmpi_buf_init(&buf);
        crmpi_buf_put_str(&buf, refusal);
        snapc_app_answer(CRMPI_CTL_CKPT_BOOKMARKS, seq, CRMPI_ERR_NOT_SUPPORTED, &buf);
        crmpi_buf_free(&buf);
        return CRMPI_ERR_NOT_SUPPORTED;
    }
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

/* The value of entry `name` of the restart message, or NULL. */
static const char *snapc_app_entry(char *const *env, const char *name)
{
    size_t len = strlen(name);

    for (char *const *e = env; e && *e; e++)
        if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
            return *e + len + 1;
    return NULL;
}

/* Entry `name` of the restart message, a list of this process's areas (mempolicy.h), given
 * to `fn` (which says which it could not take); `malformed` says what stays as CRIU left it
 * when the list cannot be read. */
static void snapc_app_areas(char *const *env, const char *name,
                            int (*fn)(const crmpi_mempolicy_area_t *, size_t, size_t *),
                            const char *malformed)
{
    const char *text = snapc_app_entry(env, name);
    crmpi_mempolicy_area_t *areas = NULL;
    size_t num = 0, done;

    if (text && crmpi_mempolicy_parse(text, &areas, &num) != CRMPI_OK)
        crmpi_log_warn("snapc: the restart's %s entry is malformed; %s", name, malformed);
    else if (text)
        fn(areas, num, &done);
    free(areas);
}

/*
 * The memory policies the agent recorded for this process and its threads (mempolicy.h):
 * CRIU restores none, and only the process itself may set an area's, only a thread its
 * own. Done before anything else runs here, so that what the restart allocates already
 * follows them. Then the ranges that were transparent huge pages become huge pages again
 * (CRIU fills memory page by page, and gives the areas their MADV_HUGEPAGE only after),
 * allocated as the policies say.
 */
static void snapc_app_restore_mempolicy(char *const *env)
{
    const char *text = snapc_app_entry(env, CRMPI_TASKPOLICY_ENV);
    crmpi_mempolicy_thread_t *threads = NULL;
    size_t num = 0, applied;
    int signo;

    snapc_app_areas(env, CRMPI_MEMPOLICY_ENV, crmpi_mempolicy_apply,
                    "every area keeps the default policy");
    if (text && crmpi_mempolicy_threads_parse(text, &signo, &threads, &num) != CRMPI_OK)
        crmpi_log_warn("snapc: the restart's thread memory policies are malformed; every "
                       "thread keeps the policy it has");
    else if (text)
        crmpi_mempolicy_threads_apply(signo, threads, num, &applied); /* says which not */
    free(threads);
    snapc_app_areas(env, CRMPI_HUGEPAGES_ENV, crmpi_mempolicy_collapse,
                    "the memory stays in small pages");
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

/* One checkpoint, from CKPT_BEGIN to the answer that lets the job go on. An application
 * checkpoint's callbacks are MPIX_Checkpoint's to run, in the application's thread. */
static void snapc_app_checkpoint(uint32_t seq, uint32_t flags)
{
    static const crmpi_ctl_type_t want_suspend[] = {CRMPI_CTL_CKPT_SUSPEND, 0};
    static const crmpi_ctl_type_t want_end[] = {CRMPI_CTL_CKPT_CONTINUE, CRMPI_CTL_CKPT_RESTART, 0};
    bool suspended = false;
    crmpi_ctl_msg_t msg;
    crmpi_buf_t buf;
    uint64_t start;
    bool app = flags & CRMPI_SNAPC_APP;
    int rc;

    if (!app)
        crmpi_snapc_app_callbacks_run(CRMPI_SNAPC_CB_PRE_CHECKPOINT);
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
    /* With the lock still held, so that the application's next MPI call comes after them
     * (a restored process's threads run from the moment CRIU let them go). An application
     * checkpoint's are MPIX_Checkpoint's to run. */
    if (restart && end_rc == CRMPI_OK) {
        pthread_mutex_lock(&snapc_app_shared.lock);
        snapc_app_restored_seq = seq;
        pthread_mutex_unlock(&snapc_app_shared.lock);
    }
    if (!app && rc == CRMPI_OK && end_rc == CRMPI_OK)
        crmpi_snapc_app_callbacks_run(restart ? CRMPI_SNAPC_CB_RESTART : CRMPI_SNAPC_CB_CONTINUE);
    if (app && rc == CRMPI_OK && end_rc == CRMPI_OK) {
        /* This rank's part is done: its MPIX_Checkpoint returns (snapc.h). */
        pthread_mutex_lock(&snapc_app_shared.lock);
        snapc_app_shared.app_continued = seq;
        pthread_mutex_unlock(&snapc_app_shared.lock);
        snapc_app_answered(seq, CRMPI_OK, flags & CRMPI_SNAPC_BLOCKING, NULL);
    }
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
    crmpi_buf_t buf;
    uint32_t flags = 0;
    const char *why = NULL;

    crmpi_buf_init_read(&buf, msg->payload, msg->hdr.len);
    switch (msg->hdr.type) {
    case CRMPI_CTL_CKPT_BEGIN:
        crmpi_buf_get_u32(&buf, &flags);
        snapc_app_checkpoint(msg->hdr.seq, flags);
        break;
    case CRMPI_CTL_CKPT_APP_WANTED:
        pthread_mutex_lock(&snapc_app_shared.lock);
        snapc_app_shared.app_wanted = true;
        pthread_mutex_unlock(&snapc_app_shared.lock);
        break;
    case CRMPI_CTL_CKPT_APP_DONE: {
        int32_t status = CRMPI_ERR_PROTO;

        if (crmpi_buf_get_i32(&buf, &status) != CRMPI_OK ||
            crmpi_buf_get_str(&buf, &why) != CRMPI_OK) {
            status = CRMPI_ERR_PROTO;
            why = "mpirun's answer is malformed";
        }
        snapc_app_ended(msg->hdr.seq, status, why);
        break;
    }
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
