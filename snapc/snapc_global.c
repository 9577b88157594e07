/*
 * snapc_global.c: the global coordinator (snapc_global.h): one checkpoint at a time, each
 * step sent to every agent and finished when every rank has answered it; the bookmarks
 * transposed into each rank's expected counts; any failure or timeout aborts the
 * checkpoint everywhere and the job goes on.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "clock.h"
#include "fault.h"
#include "filem.h"
#include "log.h"
#include "snapc_global.h"
#include "snapc_periodic.h"
#include "snapshot_entry.h"
#include "snapshot_manifest.h"
#include "snapshot_commit.h"
#include "filem_fs.h"

/* The "tool" of an application checkpoint: every rank, told through its agent. */
#define SNAPC_GLOBAL_APP_FD (-2)

/* What the coordinator waits for. */
typedef enum {
    SNAPC_STEP_IDLE,
    SNAPC_STEP_BOOKMARKS, /* CKPT_BEGIN sent */
    SNAPC_STEP_DRAINED,   /* CKPT_EXPECT sent */
    SNAPC_STEP_READY,     /* CKPT_SUSPEND sent */
    SNAPC_STEP_DUMPED,    /* CKPT_DUMP sent */
    SNAPC_STEP_CONTINUED, /* CKPT_CONTINUE sent */
    SNAPC_STEP_STORED,    /* CKPT_STORE sent */
    SNAPC_STEP_STOPPED,   /* --stop: committed; the ranks stay stopped until SIGCONT */
    SNAPC_NUM_STEPS
} snapc_step_t;

/* One rank's bookmarks: messages it sent to each peer. */
typedef struct snapc_marks {
    size_t count;
    crmpi_snapc_bookmark_t *marks;
} snapc_marks_t;

/* Where a rank's agent runs, and its partner level receiver there. */
typedef struct snapc_node {
    char name[256];    /* the node ("": not told) */
    char receiver[64]; /* "a.b.c.d:port" ("": none) */
} snapc_node_t;

struct crmpi_snapc_global {
    crmpi_snapc_global_params_t params;
    char *jobdir;                     /* owned copy of params.jobdir */
    snapc_step_t step;                /* IDLE or what is awaited */
    uint32_t seq;                     /* current (or last) checkpoint */
    uint32_t committed;               /* checkpoints of this job committed (not aborted) */
    uint32_t last_committed;          /* the newest of them (0: none) */
    unsigned chain;                   /* deltas in a row up to it (0: it is full) */
    uint32_t flags;                   /* its CRMPI_SNAPC_* flags */
    int tool_fd;                      /* the tool that asked, -1 when gone */
    bool *answered;                   /* per rank: answered the current step */
    int num_answered;                 /* of np */
    snapc_marks_t *marks;             /* per rank, from CKPT_BOOKMARKS */
    char *partial_dir;                /* <jobdir>/<seq>.partial while a checkpoint runs */
    crmpi_filem_manifest_t *manifest; /* the sequence being written */
    double step_started;              /* CLOCK_MONOTONIC seconds */
    double started;                   /* the checkpoint's start */
    double phase_s[SNAPC_NUM_STEPS];  /* wall time of each step, by snapc_step_t */
    uint64_t image_bytes;             /* sum of CKPT_DUMPED */
    unsigned levels_due;              /* CRMPI_FILEM_LEVEL_* the current checkpoint goes to */
    unsigned levels_held;             /* of them, those every rank's CKPT_STORED so far holds */
    double level_s[CRMPI_FILEM_NUM_LEVELS]; /* the slowest rank's copy to each level */
    char level_why[512];             /* the first rank's reason for a level it does not hold */
    snapc_node_t *nodes;             /* per rank, from CKPT_DUMPED: its node and the
                                        partner receiver its agent runs there */
    crmpi_snapc_periodic_t periodic; /* --ckpt-interval's schedule */
    bool periodic_running;           /* the current checkpoint is a periodic one */
    bool *app_asked;                 /* per rank: asked for an application checkpoint */
    int num_app_asked;               /* ranks that did, since the last one began */
    bool app_beginning;              /* an application checkpoint is being begun */
    bool went_on;                    /* every rank answered the current checkpoint's
                                        CKPT_CONTINUE: MPIX_Checkpoint has returned */
    bool app_deferred;               /* every rank asked while another checkpoint ran: it
                                        begins when that one has ended (tick) */
    bool pending;                    /* app_only: a tool's checkpoint waits for the ranks */
    int pending_fd;                  /* its tool (-1: gone, or left with --nowait) */
    uint32_t pending_flags;          /* its flags */
};

static const char *snapc_global_step_name(snapc_step_t step)
{
    switch (step) {
    case SNAPC_STEP_IDLE: return "idle";
    case SNAPC_STEP_BOOKMARKS: return "bookmark exchange";
    case SNAPC_STEP_DRAINED: return "drain";
    case SNAPC_STEP_READY: return "suspend";
    case SNAPC_STEP_DUMPED: return "dump";
    case SNAPC_STEP_CONTINUED: return "continue";
    case SNAPC_STEP_STORED: return "copy to stable storage";
    case SNAPC_STEP_STOPPED: return "stop";
    case SNAPC_NUM_STEPS: break;
    }
    return "?";
}

int crmpi_snapc_global_create(const crmpi_snapc_global_params_t *params,
                              crmpi_snapc_global_t **global_out)
{
    crmpi_snapc_global_t *global = calloc(1, sizeof(*global));
    crmpi_filem_commit_t *commit;

    if (!global)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    global->params = *params;
    if (!global->params.levels.mask)
        global->params.levels =
            (crmpi_filem_levels_t){.mask = CRMPI_FILEM_LEVEL_GLOBAL, .interval = {1, 1}};
    global->jobdir = strdup(params->jobdir ? params->jobdir : "");
    global->answered = calloc((size_t)params->np, sizeof(bool));
    global->marks = calloc((size_t)params->np, sizeof(snapc_marks_t));
    global->app_asked = calloc((size_t)params->np, sizeof(bool));
    global->nodes = calloc((size_t)params->np, sizeof(snapc_node_t));
    global->tool_fd = -1;
    global->pending_fd = -1;
    if (!global->jobdir || !global->answered || !global->marks || !global->app_asked ||
        !global->nodes) {
        crmpi_snapc_global_destroy(global);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    crmpi_snapc_periodic_init(&global->periodic, params->ckpt_interval_s, params->mtbf_s,
                              params->initial_cost_s, crmpi_clock_s());
    if (params->app_only && global->periodic.enabled) {
        /* A checkpoint waits for the ranks' MPIX_Checkpoint: the program sets the pace. */
        crmpi_log_warn("--ckpt-interval is ignored with crs pheap: the job is checkpointed "
                       "at its MPIX_Checkpoint calls");
        global->periodic.enabled = false;
    }
    /* A jobid is a pid, and pids come back: number after what an earlier job committed. */
    if (params->enabled && crmpi_filem_commit_read(global->jobdir, &commit) == CRMPI_OK) {
        global->seq = commit->seqs[commit->num_seqs - 1];
        crmpi_filem_commit_destroy(commit);
    }
    *global_out = global;
    return CRMPI_OK;
}

static void snapc_global_marks_free(crmpi_snapc_global_t *global)
{
    for (int rank = 0; rank < global->params.np; rank++) {
        free(global->marks[rank].marks);
        global->marks[rank] = (snapc_marks_t){0};
    }
}

/*
 * CKPT_DUMP's flags and parent: the sequence whose images each rank's may be a delta of
 * (u32, 0: none) and its directory. The parent is the last sequence this job committed,
 * since the agents track writes from their own dumps (an agent whose tracking does not
 * start there dumps in full anyway). The dump stays a delta, and the chain is compacted
 * when the agents store it flattened (CRMPI_SNAPC_FLATTEN): once incremental_chain deltas
 * are in a row, and when the sequence the chain starts from would fall out of the `keep`
 * newest at the next commit (the disk then holds at most 2 * keep - 1 sequences: the keep
 * newest, and the chain the oldest of them needs). A chain that grew past
 * incremental_chain (a flatten failed) gets a full dump.
 */
static void snapc_global_put_dump(const crmpi_snapc_global_t *global, crmpi_buf_t *buf)
{
    uint32_t parent = 0, flags = global->flags;
    unsigned keep = global->params.keep;
    char dir[4200] = "";

    if (global->params.incremental_chain && global->last_committed &&
        global->chain <= global->params.incremental_chain) {
        parent = global->last_committed;
        snprintf(dir, sizeof(dir), "%s/%u", global->jobdir, parent);
        if (global->chain == global->params.incremental_chain ||
            (keep && global->chain + 1 >= keep))
            flags |= CRMPI_SNAPC_FLATTEN;
    }
    crmpi_buf_put_u32(buf, flags);
    crmpi_buf_put_u32(buf, parent);
    crmpi_buf_put_str(buf, dir);
}

/* Whether some rank's images of this sequence are a delta. */
static bool snapc_global_is_delta(const crmpi_filem_manifest_t *manifest)
{
    for (size_t i = 0; i < manifest->num_ranks; i++)
        if (manifest->ranks[i].parent)
            return true;
    return false;
}

/* The time the application was blocked by the current checkpoint: from the start of the
 * drain to the end of the continue (the copy to stable storage runs in the background,
 * unless the checkpoint is a blocking one). */
static double snapc_global_blocked_s(const crmpi_snapc_global_t *global)
{
    double blocked = 0.0;

    for (int step = SNAPC_STEP_BOOKMARKS; step <= SNAPC_STEP_CONTINUED; step++)
        blocked += global->phase_s[step];
    if (global->flags & CRMPI_SNAPC_BLOCKING)
        blocked += global->phase_s[SNAPC_STEP_STORED];
    return blocked;
}

/* The checkpoint is over (committed or aborted): the next periodic one is scheduled. */
static void snapc_global_end_periodic(crmpi_snapc_global_t *global, bool committed)
{
    crmpi_snapc_periodic_done(&global->periodic, committed, snapc_global_blocked_s(global),
                              crmpi_clock_s());
    if (global->periodic.automatic && committed)
        crmpi_log_info("periodic checkpoints: the next in %.1f s (Daly's interval for a cost of "
                       "%.3f s and an MTBF of %.0f s)",
                       global->periodic.interval_s, snapc_global_blocked_s(global),
                       global->periodic.mtbf_s);
    global->periodic_running = false;
}

/* The checkpoint is over (committed or aborted). */
static void snapc_global_end(crmpi_snapc_global_t *global)
{
    snapc_global_marks_free(global);
    crmpi_filem_manifest_destroy(global->manifest);
    global->manifest = NULL;
    free(global->partial_dir);
    global->partial_dir = NULL;
    global->step = SNAPC_STEP_IDLE;
}

void crmpi_snapc_global_destroy(crmpi_snapc_global_t *global)
{
    if (!global)
        return;
    if (global->tool_fd >= 0)
        close(global->tool_fd);
    if (global->marks)
        snapc_global_end(global);
    free(global->marks);
    free(global->answered);
    free(global->app_asked);
    free(global->nodes);
    free(global->jobdir);
    free(global);
}

crmpi_snapc_state_t crmpi_snapc_global_state(const crmpi_snapc_global_t *global)
{
    switch (global->step) {
    case SNAPC_STEP_IDLE: return CRMPI_SNAPC_IDLE;
    case SNAPC_STEP_BOOKMARKS:
    case SNAPC_STEP_DRAINED: return CRMPI_SNAPC_DRAINING;
    case SNAPC_STEP_READY: return CRMPI_SNAPC_SUSPENDING;
    case SNAPC_STEP_DUMPED:
    case SNAPC_STEP_CONTINUED: return CRMPI_SNAPC_DUMPING;
    case SNAPC_STEP_STORED:
    case SNAPC_NUM_STEPS: return CRMPI_SNAPC_STORING;
    case SNAPC_STEP_STOPPED: return CRMPI_SNAPC_STOPPED;
    }
    return CRMPI_SNAPC_IDLE;
}

int crmpi_snapc_global_tool_fd(const crmpi_snapc_global_t *global)
{
    return global->tool_fd;
}

/* A line for the tool: progress (CRMPI_OK), or a warning it always shows (any error
 * status); a tool that is gone is not an error here. */
static void snapc_global_tool_line(crmpi_snapc_global_t *global, int status, const char *fmt,
                                   va_list ap)
{
    char line[512];
    crmpi_buf_t buf;

    if (global->tool_fd < 0)
        return;
    vsnprintf(line, sizeof(line), fmt, ap);
    crmpi_buf_init(&buf);
    crmpi_buf_put_str(&buf, line);
    crmpi_ctl_send(global->tool_fd, CRMPI_CTL_TOOL_PROGRESS, global->seq, status, buf.data,
                   buf.len);
    crmpi_buf_free(&buf);
}

__attribute__((format(printf, 2, 3))) static void
snapc_global_progress(crmpi_snapc_global_t *global, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    snapc_global_tool_line(global, CRMPI_OK, fmt, ap);
    va_end(ap);
}

__attribute__((format(printf, 2, 3))) static void
snapc_global_tool_warn(crmpi_snapc_global_t *global, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    snapc_global_tool_line(global, CRMPI_ERR_IO, fmt, ap);
    va_end(ap);
}

/* The tool's answer: the handle (status OK) or why not; then the tool's part is over. */
static void snapc_global_tool_reply(crmpi_snapc_global_t *global, int fd, uint32_t seq, int status,
                                    const char *text)
{
    crmpi_buf_t buf;

    crmpi_buf_init(&buf);
    crmpi_buf_put_str(&buf, text);
    crmpi_ctl_send(fd, CRMPI_CTL_REPLY, seq, status, buf.data, buf.len);
    crmpi_buf_free(&buf);
    if (fd == global->tool_fd)
        global->tool_fd = -1;
    close(fd);
}

/* The current step is over (its wall time recorded); `step` begins, nobody answered yet. */
static void snapc_global_enter(crmpi_snapc_global_t *global, snapc_step_t step)
{
    double now = crmpi_clock_s();

    global->phase_s[global->step] = now - global->step_started;
    global->step = step;
    global->step_started = now;
    global->num_answered = 0;
    memset(global->answered, 0, (size_t)global->params.np * sizeof(bool));
}

/* Send one step to every agent and wait for all of them. @return the first rank whose
 * agent could not be sent it (said at warning level), or -1. */
static int snapc_global_step_all(crmpi_snapc_global_t *global, snapc_step_t step,
                                 crmpi_ctl_type_t type, const crmpi_buf_t *payload)
{
    int unreached = -1;

    snapc_global_enter(global, step);
    for (int rank = 0; rank < global->params.np; rank++) {
        if (global->params.send_fn(global->params.arg, rank, type, global->seq, payload) ==
            CRMPI_OK)
            continue;
        if (unreached < 0)
            unreached = rank;
        if (type != CRMPI_CTL_CKPT_BEGIN)
            crmpi_log_warn("snapc: cannot send %s of checkpoint %u to rank %d's agent",
                           crmpi_ctl_type_name(type), global->seq, rank);
    }
    return unreached;
}

/* The end of an application checkpoint, for every rank waiting in MPIX_Checkpoint: `seq`
 * committed (status CRMPI_OK), or refused or aborted, `text` saying why. */
static void snapc_global_app_done(crmpi_snapc_global_t *global, uint32_t seq, int status,
                                  const char *text)
{
    crmpi_buf_t buf;

    crmpi_buf_init(&buf);
    crmpi_buf_put_i32(&buf, status);
    crmpi_buf_put_str(&buf, text);
    for (int rank = 0; rank < global->params.np; rank++) {
        if (global->params.send_fn(global->params.arg, rank, CRMPI_CTL_CKPT_APP_DONE, seq, &buf) !=
            CRMPI_OK)
            crmpi_log_warn("snapc: cannot tell rank %d's agent how checkpoint %u ended", rank, seq);
    }
    crmpi_buf_free(&buf);
}

/* Stop the checkpoint everywhere; the ranks undo what they did. `outcome` says what
 * happens to the job. */
static void snapc_global_abort_job(crmpi_snapc_global_t *global, const char *why,
                                   const char *outcome)
{
    char text[768];

    snprintf(text, sizeof(text),
             "checkpoint %u of job %llu aborted during the %s: %s; %s and the last committed "
             "snapshot is unchanged",
             global->seq, (unsigned long long)global->params.jobid,
             snapc_global_step_name(global->step), why, outcome);
    crmpi_log_warn("%s", text);
    for (int rank = 0; rank < global->params.np; rank++)
        global->params.send_fn(global->params.arg, rank, CRMPI_CTL_CKPT_ABORT, global->seq, NULL);
    if (global->tool_fd >= 0)
        snapc_global_tool_reply(global, global->tool_fd, global->seq, CRMPI_ERR_CKPT_ABORTED, text);
    if ((global->flags & CRMPI_SNAPC_APP) && !global->went_on)
        snapc_global_app_done(global, global->seq, CRMPI_ERR_CKPT_ABORTED, text);
    crmpi_filem_seq_abort(global->jobdir, global->seq);
    snapc_global_end_periodic(global, false);
    snapc_global_end(global);
}

/* What an abort caused by a rank's death says of the job. */
#define SNAPC_GLOBAL_RANK_DEATH "mpirun ends the job, as for any rank's death,"

/* The usual abort: the ranks undo what they did and the job goes on. */
static void snapc_global_abort(crmpi_snapc_global_t *global, const char *why)
{
    snapc_global_abort_job(global, why, "the job goes on");
}

void crmpi_snapc_global_status(crmpi_snapc_global_t *global, int fd, uint32_t ranks_running,
                               const char *hosts)
{
    crmpi_buf_t buf;

    crmpi_buf_init(&buf);
    crmpi_buf_put_u64(&buf, global->params.jobid);
    crmpi_buf_put_u32(&buf, (uint32_t)global->params.np);
    crmpi_buf_put_u32(&buf, global->params.enabled);
    crmpi_buf_put_u32(&buf, crmpi_snapc_global_state(global));
    crmpi_buf_put_u32(&buf, global->seq);
    crmpi_buf_put_str(&buf, global->jobdir);
    crmpi_buf_put_str(&buf, global->params.program);
    /* Periodic checkpoints: the interval in milliseconds (0: none), and whether it is
     * Daly's (then also the MTBF in seconds). */
    crmpi_buf_put_u64(&buf,
                      global->periodic.enabled ? (uint64_t)(global->periodic.interval_s * 1e3) : 0);
    crmpi_buf_put_u32(&buf, global->periodic.automatic);
    crmpi_buf_put_u64(&buf, (uint64_t)global->periodic.mtbf_s);
    crmpi_buf_put_u32(&buf, ranks_running);
    crmpi_buf_put_str(&buf, hosts);
    crmpi_buf_put_u32(&buf, global->committed);
    crmpi_ctl_send(fd, CRMPI_CTL_REPLY, 0, buf.failed ? CRMPI_ERR_OUT_OF_RESOURCE : CRMPI_OK,
                   buf.data, buf.len);
    crmpi_buf_free(&buf);
    close(fd);
}

/* A checkpoint cannot start: the tool that asked is told why, the ranks for an application
 * checkpoint, or, for a periodic one, mpirun's log. */
static void snapc_global_refuse(crmpi_snapc_global_t *global, int fd, uint32_t seq, int status,
                                const char *text)
{
    if (global->app_beginning) {
        crmpi_log_warn("application checkpoint: %s", text);
        snapc_global_app_done(global, 0, status, text);
    }
    if (fd >= 0)
        snapc_global_tool_reply(global, fd, seq, status, text);
    else if (fd == -1)
        crmpi_log_warn("periodic checkpoint: %s", text);
}

/* Start checkpoint global->seq + 1 with `flags`, for the tool on `fd` (-1: a periodic one;
 * SNAPC_GLOBAL_APP_FD: the ranks' MPIX_Checkpoint). @return true when it started */
static bool snapc_global_begin(crmpi_snapc_global_t *global, int fd, uint32_t flags)
{
    if (global->step == SNAPC_STEP_STOPPED) {
        char text[256];

        snprintf(text, sizeof(text),
                 "the job is stopped after checkpoint %u (--stop); resume it first with "
                 "kill -CONT %llu",
                 global->seq, (unsigned long long)global->params.jobid);
        snapc_global_refuse(global, fd, global->seq, CRMPI_ERR_RESOURCE_BUSY, text);
        return false;
    }
    if (global->step != SNAPC_STEP_IDLE) {
        char text[256];

        snprintf(text, sizeof(text),
                 "%scheckpoint %u is in progress (%s); one checkpoint at a time: try again "
                 "when it has ended",
                 global->periodic_running ? "periodic " : "", global->seq,
                 snapc_global_step_name(global->step));
        snapc_global_refuse(global, fd, global->seq, CRMPI_ERR_RESOURCE_BUSY, text);
        return false;
    }
    global->seq++;
    /* Room for it, estimated from the newest committed sequence: said before it starts,
     * or made by removing the oldest ones (snapc_base_make_room). */
    char room[800];
    if (crmpi_filem_seq_room(global->jobdir, global->params.make_room, room, sizeof(room)) !=
        CRMPI_OK)
        crmpi_log_warn("checkpoint %u: %s", global->seq, room);
    else if (room[0])
        crmpi_log_info("checkpoint %u: %s", global->seq, room);
    if (crmpi_filem_seq_begin(global->jobdir, global->seq, &global->partial_dir) != CRMPI_OK ||
        crmpi_filem_manifest_create(global->params.jobid, global->seq, (size_t)global->params.np,
                                    &global->manifest) != CRMPI_OK) {
        char text[600];

        snprintf(text, sizeof(text),
                 "cannot prepare checkpoint %u in %s (mpirun says why); the job goes on",
                 global->seq, global->jobdir);
        snapc_global_refuse(global, fd, global->seq, CRMPI_ERR_IO, text);
        snapc_global_end_periodic(global, false);
        snapc_global_end(global);
        return false;
    }
    global->params.manifest_fn(global->params.arg, global->manifest);
    if (global->params.blocking && !(flags & (CRMPI_SNAPC_TERM | CRMPI_SNAPC_STOP)))
        flags |= CRMPI_SNAPC_BLOCKING;
    if (flags & CRMPI_SNAPC_APP) {
        /* What ompi-restart reads to choose how to restart: the program, started again. */
        free(global->manifest->crs);
        global->manifest->crs = strdup("pheap (application checkpoint)");
    }
    global->flags = flags;
    global->went_on = false;
    global->tool_fd = fd >= 0 ? fd : -1;
    global->periodic_running = fd == -1;
    snapc_global_progress(global, "checkpoint %u of job %llu started", global->seq,
                          (unsigned long long)global->params.jobid);
    if (room[0])
        snapc_global_progress(global, "checkpoint %u: %s", global->seq, room);
    if (fd >= 0 && (flags & CRMPI_SNAPC_NOWAIT)) {
        /* The tool leaves now, with the handle; its going away aborts nothing. */
        snapc_global_tool_reply(global, fd, global->seq, CRMPI_OK, global->jobdir);
    }
    global->started = crmpi_clock_s();
    global->step_started = global->started;
    global->image_bytes = 0;
    memset(global->phase_s, 0, sizeof(global->phase_s));
    global->levels_due = crmpi_filem_levels_due(&global->params.levels, global->committed + 1);
    global->levels_held = global->levels_due;
    memset(global->level_s, 0, sizeof(global->level_s));
    global->level_why[0] = '\0';
    crmpi_buf_t buf;
    crmpi_buf_init(&buf);
    crmpi_buf_put_u32(&buf, flags);
    int unreached = snapc_global_step_all(global, SNAPC_STEP_BOOKMARKS, CRMPI_CTL_CKPT_BEGIN, &buf);
    crmpi_buf_free(&buf);
    if (unreached >= 0) {
        /* A job being started (or restarted) whose agents are not all connected yet: the
         * others would wait for that one until snapc_base_timeout. */
        char why[160];

        snprintf(why, sizeof(why),
                 "rank %d's agent is not ready (the job is still starting or being "
                 "restarted, or the agent is gone)",
                 unreached);
        snapc_global_abort(global, why);
        return false;
    }
    return true;
}

void crmpi_snapc_global_tool(crmpi_snapc_global_t *global, int fd, crmpi_ctl_msg_t *msg)
{
    crmpi_buf_t req;
    uint32_t flags = 0;

    crmpi_buf_init_read(&req, msg->payload, msg->hdr.len);
    crmpi_buf_get_u32(&req, &flags);
    if (msg->hdr.type != CRMPI_CTL_TOOL_CKPT || crmpi_buf_get_done(&req) != CRMPI_OK) {
        snapc_global_tool_reply(global, fd, 0, CRMPI_ERR_PROTO, "malformed request");
        return;
    }
    if (!global->params.enabled) {
        snapc_global_tool_reply(global, fd, 0, CRMPI_ERR_NOT_SUPPORTED,
                                "the job was not started with --with-ft cr, so it cannot be "
                                "checkpointed");
        return;
    }
    if ((flags & CRMPI_SNAPC_TERM) && (flags & CRMPI_SNAPC_STOP)) {
        snapc_global_tool_reply(global, fd, 0, CRMPI_ERR_BAD_PARAM,
                                "a checkpoint cannot both terminate and stop the job");
        return;
    }
    if (global->params.app_only) {
        /* crs pheap: the ranks back up at their next MPIX_Checkpoint, which begins it. */
        if (global->pending || global->step != SNAPC_STEP_IDLE) {
            snapc_global_tool_reply(global, fd, global->seq, CRMPI_ERR_RESOURCE_BUSY,
                                    "a checkpoint is already in progress or waiting for the "
                                    "ranks' MPIX_Checkpoint; try again when it has ended");
            return;
        }
        global->pending = true;
        global->pending_fd = fd;
        global->pending_flags = flags;
        char line[200];
        snprintf(line, sizeof(line),
                 "checkpoint of job %llu: waiting for every rank's next MPIX_Checkpoint "
                 "(crs pheap)",
                 (unsigned long long)global->params.jobid);
        crmpi_buf_t buf;
        crmpi_buf_init(&buf);
        crmpi_buf_put_str(&buf, line);
        crmpi_ctl_send(fd, CRMPI_CTL_TOOL_PROGRESS, 0, CRMPI_OK, buf.data, buf.len);
        crmpi_buf_free(&buf);
        for (int rank = 0; rank < global->params.np; rank++)
            global->params.send_fn(global->params.arg, rank, CRMPI_CTL_CKPT_APP_WANTED, 0, NULL);
        if (flags & CRMPI_SNAPC_NOWAIT) {
            snapc_global_tool_reply(global, fd, 0, CRMPI_OK, global->jobdir);
            global->pending_fd = -1;
        }
        return;
    }
    snapc_global_begin(global, fd, flags);
}

static void snapc_global_app_begin(crmpi_snapc_global_t *global);

void crmpi_snapc_global_app_request(crmpi_snapc_global_t *global, int rank)
{
    if (rank < 0 || rank >= global->params.np || global->app_asked[rank])
        return;
    global->app_asked[rank] = true;
    if (++global->num_app_asked < global->params.np)
        return;
    memset(global->app_asked, 0, (size_t)global->params.np * sizeof(bool));
    global->num_app_asked = 0;
    if (global->step != SNAPC_STEP_IDLE && global->step != SNAPC_STEP_STOPPED) {
        /* An ompi-checkpoint or a periodic one is running: the ranks wait for its end. */
        global->app_deferred = true;
        return;
    }
    snapc_global_app_begin(global);
}

/* Every rank is in MPIX_Checkpoint, its backup written: begin. */
static void snapc_global_app_begin(crmpi_snapc_global_t *global)
{
    /* A tool's checkpoint waiting for this moment (crs pheap) is this one. */
    int fd = global->pending ? global->pending_fd : SNAPC_GLOBAL_APP_FD;
    uint32_t flags = CRMPI_SNAPC_APP | (global->pending ? global->pending_flags : 0);
    global->app_deferred = false;
    global->pending = false;
    global->pending_fd = -1;
    global->app_beginning = true;
    if (!global->params.enabled)
        snapc_global_refuse(global, fd, 0, CRMPI_ERR_NOT_SUPPORTED,
                            "the job was not started with --with-ft cr");
    else
        snapc_global_begin(global, fd, flags & ~(uint32_t)CRMPI_SNAPC_NOWAIT);
    global->app_beginning = false;
}

/*
 * The bookmarks transposed: every rank gets (sender, messages) for each sender whose
 * bookmarks name it. One pass over all bookmarks, so the work grows with the pairs of
 * ranks that talk, not with the square of the job. @return CRMPI_OK or
 * CRMPI_ERR_OUT_OF_RESOURCE.
 */
static int snapc_global_send_expected(crmpi_snapc_global_t *global)
{
    int np = global->params.np;
    size_t *first = calloc((size_t)np + 1, sizeof(size_t)), total;
    crmpi_snapc_bookmark_t *expected = NULL;
    size_t *next = NULL;

    if (!first)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    for (int sender = 0; sender < np; sender++) {
        for (size_t i = 0; i < global->marks[sender].count; i++)
            first[global->marks[sender].marks[i].peer + 1]++; /* peer < np: marks_get */
    }
    for (int rank = 0; rank < np; rank++)
        first[rank + 1] += first[rank];
    total = first[np];
    expected = malloc((total ? total : 1) * sizeof(*expected));
    next = malloc((size_t)np * sizeof(size_t));
    if (!expected || !next) {
        free(first);
        free(expected);
        free(next);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    memcpy(next, first, (size_t)np * sizeof(size_t));
    for (int sender = 0; sender < np; sender++) {
        const snapc_marks_t *sent = &global->marks[sender];

        for (size_t i = 0; i < sent->count; i++)
            expected[next[sent->marks[i].peer]++] =
                (crmpi_snapc_bookmark_t){.peer = (uint32_t)sender, .count = sent->marks[i].count};
    }
    for (int rank = 0; rank < np; rank++) {
        crmpi_buf_t buf;

        crmpi_buf_init(&buf);
        crmpi_snapc_marks_put(&buf, expected + first[rank], first[rank + 1] - first[rank]);
        global->params.send_fn(global->params.arg, rank, CRMPI_CTL_CKPT_EXPECT, global->seq, &buf);
        crmpi_buf_free(&buf);
    }
    free(first);
    free(expected);
    free(next);
    return CRMPI_OK;
}

static void snapc_global_done(crmpi_snapc_global_t *global, uint32_t seq);
static void snapc_global_put_kept(crmpi_buf_t *buf, const crmpi_filem_commit_t *commit);

/* Sequence `seq` is committed and the global level pruned: every agent removes its node's
 * copies of the sequences the commit record no longer lists (CKPT_PRUNE), now rather than
 * at its next copy, which may never come. An agent that is gone keeps what its node holds;
 * nothing of this can fail the checkpoint. */
static void snapc_global_prune(crmpi_snapc_global_t *global, uint32_t seq)
{
    crmpi_filem_commit_t *commit;
    crmpi_buf_t buf;

    if (!(global->params.levels.mask & (CRMPI_FILEM_LEVEL_LOCAL | CRMPI_FILEM_LEVEL_PARTNER)))
        return; /* nothing on the nodes' own storage */
    if (crmpi_filem_commit_read(global->jobdir, &commit) != CRMPI_OK) {
        crmpi_log_warn("snapc: the nodes keep their copies of older sequences until the next "
                       "checkpoint: the commit record of %s cannot be read back",
                       global->jobdir);
        return;
    }
    crmpi_buf_init(&buf);
    snapc_global_put_kept(&buf, commit);
    for (int rank = 0; rank < global->params.np; rank++)
        global->params.send_fn(global->params.arg, rank, CRMPI_CTL_CKPT_PRUNE, seq, &buf);
    crmpi_buf_free(&buf);
    crmpi_filem_commit_destroy(commit);
}

/* Every rank's files are durable: the manifest, then the commit record. */
static void snapc_global_commit(crmpi_snapc_global_t *global)
{
    static const char *const phases[SNAPC_NUM_STEPS] = {
        [SNAPC_STEP_BOOKMARKS] = "bookmarks", [SNAPC_STEP_DRAINED] = "drain",
        [SNAPC_STEP_READY] = "suspend",       [SNAPC_STEP_DUMPED] = "dump",
        [SNAPC_STEP_CONTINUED] = "continue",  [SNAPC_STEP_STORED] = "filem",
    };
    uint32_t seq = global->seq;
    int rc;

    global->phase_s[SNAPC_STEP_STORED] = crmpi_clock_s() - global->step_started;
    for (int step = SNAPC_STEP_BOOKMARKS; step < SNAPC_NUM_STEPS; step++) {
        if (global->phase_s[step] > 0)
            crmpi_filem_manifest_timing_add(global->manifest, phases[step], global->phase_s[step]);
    }
    crmpi_filem_manifest_timing_add(global->manifest, "total", crmpi_clock_s() - global->started);
    /* What the application lost, and what ran while it went on (the copy). */
    crmpi_filem_manifest_timing_add(global->manifest, "blocked", snapc_global_blocked_s(global));
    crmpi_filem_manifest_timing_add(global->manifest, "background",
                                    global->phase_s[SNAPC_STEP_STORED]);
    for (int i = 0; i < CRMPI_FILEM_NUM_LEVELS; i++) {
        char phase[32];

        snprintf(phase, sizeof(phase), "copy_%s", crmpi_filem_level_name(i));
        if (global->levels_held & (1u << i))
            crmpi_filem_manifest_timing_add(global->manifest, phase, global->level_s[i]);
    }
    if (!global->levels_held) {
        /* Every rank holds its images somewhere, but no level holds every rank's. */
        snapc_global_abort(global, global->level_why[0] ? global->level_why
                                                        : "no level holds every rank's images");
        return;
    }
    global->manifest->levels = global->levels_held;
    if (global->levels_due & ~global->levels_held) {
        char due[64], held[64];

        crmpi_filem_levels_str(global->levels_due & ~global->levels_held, due, sizeof(due));
        crmpi_filem_levels_str(global->levels_held, held, sizeof(held));
        crmpi_log_warn("checkpoint %u is committed at the %s level only, not at the %s one (%s); "
                       "the previous sequence there stays",
                       seq, held, due, global->level_why);
        snapc_global_tool_warn(global, "checkpoint %u is not stored at the %s level (%s)", seq, due,
                               global->level_why);
    }
    crmpi_fault_pause("snapc_commit_pause");
    rc = crmpi_filem_seq_commit(global->jobdir, global->manifest, global->params.keep);
    if (rc != CRMPI_OK) {
        snapc_global_abort(global, "the snapshot could not be committed (mpirun says why)");
        return;
    }
    crmpi_log_info("checkpoint %u of job %llu committed in %.3f s: drain %.1f ms, suspend "
                   "%.1f ms, dump %.3f s, continue %.1f ms, copy %.3f s, %llu bytes",
                   seq, (unsigned long long)global->params.jobid, crmpi_clock_s() - global->started,
                   (global->phase_s[SNAPC_STEP_BOOKMARKS] + global->phase_s[SNAPC_STEP_DRAINED]) *
                       1e3,
                   global->phase_s[SNAPC_STEP_READY] * 1e3, global->phase_s[SNAPC_STEP_DUMPED],
                   global->phase_s[SNAPC_STEP_CONTINUED] * 1e3, global->phase_s[SNAPC_STEP_STORED],
                   (unsigned long long)global->image_bytes);
    global->committed++;
    global->chain = snapc_global_is_delta(global->manifest) ? global->chain + 1 : 0;
    global->last_committed = seq;
    snapc_global_prune(global, seq);
    snapc_global_end_periodic(global, true);
    snapc_global_end(global);
    if (global->flags & CRMPI_SNAPC_STOP) {
        global->step = SNAPC_STEP_STOPPED;
        snapc_global_progress(global,
                              "checkpoint %u: the job is stopped; resume it with kill -CONT %llu",
                              seq, (unsigned long long)global->params.jobid);
        crmpi_log_info("job %llu is stopped after checkpoint %u; kill -CONT %llu resumes it",
                       (unsigned long long)global->params.jobid, seq,
                       (unsigned long long)global->params.jobid);
    }
    if (global->flags & CRMPI_SNAPC_BLOCKING) {
        /* The ranks go on now; the checkpoint is over once they have (snapc_global_done). */
        snapc_global_step_all(global, SNAPC_STEP_CONTINUED, CRMPI_CTL_CKPT_CONTINUE, NULL);
        return;
    }
    snapc_global_done(global, seq);
}

/* A committed checkpoint is over: the tool and --term told. (The ranks' MPIX_Checkpoint
 * returned at their CKPT_CONTINUE.) */
static void snapc_global_done(crmpi_snapc_global_t *global, uint32_t seq)
{
    if (global->tool_fd >= 0)
        snapc_global_tool_reply(global, global->tool_fd, seq, CRMPI_OK, global->jobdir);
    if (global->flags & CRMPI_SNAPC_TERM)
        global->params.terminate_fn(global->params.arg);
}

bool crmpi_snapc_global_resume(crmpi_snapc_global_t *global)
{
    if (global->step != SNAPC_STEP_STOPPED)
        return false;
    crmpi_log_info("resuming job %llu, stopped after checkpoint %u",
                   (unsigned long long)global->params.jobid, global->seq);
    snapc_global_step_all(global, SNAPC_STEP_CONTINUED, CRMPI_CTL_CKPT_CONTINUE, NULL);
    return true;
}

int crmpi_snapc_global_partners(const char *const *node_of_rank, int np, int *partner_out)
{
    /* Each rank's node by its first rank's order, and its position among the node's. */
    int *node = malloc((size_t)np * sizeof(int)), *position = malloc((size_t)np * sizeof(int));
    int *first = malloc((size_t)np * sizeof(int)), *count = calloc((size_t)np, sizeof(int));
    int num_nodes = 0, rc = CRMPI_OK;

    if (!node || !position || !first || !count) {
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    for (int r = 0; r < np; r++) {
        int n = 0;

        while (n < num_nodes && strcmp(node_of_rank[first[n]], node_of_rank[r]) != 0)
            n++;
        if (n == num_nodes)
            first[num_nodes++] = r;
        node[r] = n;
        position[r] = count[n]++;
    }
    /* The partner: on the next node, the rank at the same position modulo its count. */
    for (int r = 0; r < np; r++) {
        int next = (node[r] + 1) % num_nodes, want = position[r] % count[next];

        partner_out[r] = -1;
        for (int q = first[next]; num_nodes > 1 && q < np && partner_out[r] < 0; q++)
            if (node[q] == next && position[q] == want)
                partner_out[r] = q;
    }
out:
    free(node);
    free(position);
    free(first);
    free(count);
    return rc;
}

/* The committed sequences the nodes' own storage keeps, as CKPT_STORE and CKPT_PRUNE carry
 * them: u32 n, n x u32, from the commit record (NULL: none), which already holds what
 * snapc_base_keep leaves (the newest ones, the newest of each level, and the sequences
 * their incremental images depend on). */
static void snapc_global_put_kept(crmpi_buf_t *buf, const crmpi_filem_commit_t *commit)
{
    crmpi_buf_put_u32(buf, commit ? (uint32_t)commit->num_seqs : 0);
    for (size_t i = 0; commit && i < commit->num_seqs; i++)
        crmpi_buf_put_u32(buf, commit->seqs[i]);
}

/* Each agent copies its rank's images to the levels due: into <seq>.partial/rank.<r> for
 * the global one, into its node's local one, and to its partner's node, where it keeps
 * the committed sequences (the newest ones, and what they depend on: the commit record's
 * list) and no others. */
static void snapc_global_store(crmpi_snapc_global_t *global)
{
    crmpi_filem_commit_t *commit = NULL;

    snapc_global_enter(global, SNAPC_STEP_STORED);
    if (crmpi_filem_commit_read(global->jobdir, &commit) != CRMPI_OK)
        commit = NULL;
    const char **names = calloc((size_t)global->params.np, sizeof(*names));
    int *partners = calloc((size_t)global->params.np, sizeof(*partners));
    for (int rank = 0; names && rank < global->params.np; rank++)
        names[rank] = global->nodes[rank].name;
    bool partnered = (global->levels_due & CRMPI_FILEM_LEVEL_PARTNER) && names && partners &&
                     crmpi_snapc_global_partners(names, global->params.np, partners) == CRMPI_OK;
    for (int rank = 0; rank < global->params.np; rank++) {
        crmpi_buf_t buf;
        char *dir = NULL;

        crmpi_buf_init(&buf);
        if (!(global->levels_due & CRMPI_FILEM_LEVEL_GLOBAL))
            crmpi_buf_put_str(&buf, "");
        else if (crmpi_filem_rank_dir_path(global->partial_dir, rank, &dir) == CRMPI_OK)
            crmpi_buf_put_str(&buf, dir);
        snapc_global_put_kept(&buf, commit);
        int partner = partnered ? partners[rank] : -1;
        crmpi_buf_put_str(&buf, partner >= 0 ? global->nodes[partner].receiver : "");
        crmpi_buf_put_str(&buf, partner >= 0 ? global->nodes[partner].name : "");
        global->params.send_fn(global->params.arg, rank, CRMPI_CTL_CKPT_STORE, global->seq, &buf);
        crmpi_buf_free(&buf);
        free(dir);
    }
    free(names);
    free(partners);
    crmpi_filem_commit_destroy(commit);
}

/* The whole job answered the current step: the next one. */
static void snapc_global_advance(crmpi_snapc_global_t *global)
{
    crmpi_buf_t buf;

    switch (global->step) {
    case SNAPC_STEP_BOOKMARKS:
        snapc_global_enter(global, SNAPC_STEP_DRAINED);
        if (snapc_global_send_expected(global) != CRMPI_OK) {
            snapc_global_abort(global, "mpirun ran out of memory transposing the bookmarks");
            break;
        }
        snapc_global_marks_free(global);
        break;
    case SNAPC_STEP_DRAINED:
        snapc_global_progress(global, "checkpoint %u: every channel drained (%.1f ms)", global->seq,
                              (crmpi_clock_s() - global->started) * 1e3);
        snapc_global_step_all(global, SNAPC_STEP_READY, CRMPI_CTL_CKPT_SUSPEND, NULL);
        break;
    case SNAPC_STEP_READY:
        snapc_global_progress(global, "checkpoint %u: transports released; dumping the ranks",
                              global->seq);
        crmpi_buf_init(&buf);
        snapc_global_put_dump(global, &buf);
        crmpi_buf_put_u32(&buf, global->levels_due);
        crmpi_buf_put_str(&buf, global->jobdir);
        snapc_global_step_all(global, SNAPC_STEP_DUMPED, CRMPI_CTL_CKPT_DUMP, &buf);
        crmpi_buf_free(&buf);
        break;
    case SNAPC_STEP_DUMPED:
        snapc_global_progress(global, "checkpoint %u: %llu bytes of images written (%.1f s)",
                              global->seq, (unsigned long long)global->image_bytes,
                              crmpi_clock_s() - global->step_started);
        /* --term, --stop and blocking ones: the ranks stay suspended (--stop: stopped)
         * until the commit. */
        if (global->flags & (CRMPI_SNAPC_TERM | CRMPI_SNAPC_STOP | CRMPI_SNAPC_BLOCKING))
            snapc_global_store(global);
        else
            snapc_global_step_all(global, SNAPC_STEP_CONTINUED, CRMPI_CTL_CKPT_CONTINUE, NULL);
        break;
    case SNAPC_STEP_CONTINUED:
        global->went_on = true;
        if (global->flags & CRMPI_SNAPC_BLOCKING) {
            snapc_global_end(global); /* continued after the commit */
            snapc_global_done(global, global->seq);
            break;
        }
        if (global->flags & CRMPI_SNAPC_STOP) {
            /* Resumed after --stop: the snapshot was committed before the stop. */
            crmpi_log_info("job %llu resumed", (unsigned long long)global->params.jobid);
            snapc_global_end(global);
            break;
        }
        snapc_global_progress(global, "checkpoint %u: the job goes on; copying the images to %s",
                              global->seq, global->jobdir);
        snapc_global_store(global);
        break;
    case SNAPC_STEP_STORED: snapc_global_commit(global); break;
    case SNAPC_STEP_STOPPED:
    case SNAPC_STEP_IDLE:
    case SNAPC_NUM_STEPS: break;
    }
}

/* The reason an agent or rank gave with a failed answer, when it sent one. */
static void snapc_global_reason(const crmpi_ctl_msg_t *msg, char *why, size_t len)
{
    crmpi_buf_t buf;
    const char *text = NULL;

    crmpi_buf_init_read(&buf, msg->payload, msg->hdr.len);
    if (crmpi_buf_get_str(&buf, &text) == CRMPI_OK && crmpi_buf_get_done(&buf) == CRMPI_OK && *text)
        snprintf(why, len, "%s", text);
    else
        snprintf(why, len, "%s", crmpi_strerror(msg->hdr.status));
}

static int snapc_global_keep_marks(crmpi_snapc_global_t *global, int rank,
                                   const crmpi_ctl_msg_t *msg)
{
    snapc_marks_t *sent = &global->marks[rank];
    crmpi_buf_t buf;

    crmpi_buf_init_read(&buf, msg->payload, msg->hdr.len);
    return crmpi_snapc_marks_get(&buf, (uint32_t)global->params.np, &sent->marks, &sent->count);
}

/* CKPT_STORED: the rank's files, sizes and checksums, for the manifest. */
static int snapc_global_keep_entry(crmpi_snapc_global_t *global, int rank,
                                   const crmpi_ctl_msg_t *msg)
{
    crmpi_filem_rank_entry_t entry = {0};
    const char *json = NULL;
    crmpi_buf_t buf;
    int rc;

    const char *why = NULL;

    crmpi_buf_init_read(&buf, msg->payload, msg->hdr.len);
    if (crmpi_buf_get_str(&buf, &json) != CRMPI_OK || crmpi_buf_get_str(&buf, &why) != CRMPI_OK ||
        crmpi_buf_get_done(&buf) != CRMPI_OK ||
        crmpi_filem_rank_entry_decode(json, &entry) != CRMPI_OK || entry.rank != rank ||
        !(entry.levels & global->levels_due) || (entry.levels & ~global->levels_due))
        rc = CRMPI_ERR_PROTO;
    else
        rc = crmpi_filem_manifest_rank_set(global->manifest, &entry);
    if (rc == CRMPI_OK) {
        global->levels_held &= entry.levels;
        for (int i = 0; i < CRMPI_FILEM_NUM_LEVELS; i++)
            if (entry.level_seconds[i] > global->level_s[i])
                global->level_s[i] = entry.level_seconds[i];
        if (why[0] && !global->level_why[0])
            snprintf(global->level_why, sizeof(global->level_why), "rank %d: %.480s", rank, why);
    }
    crmpi_filem_rank_entry_clear(&entry);
    return rc;
}

void crmpi_snapc_global_agent_msg(crmpi_snapc_global_t *global, int rank, crmpi_ctl_msg_t *msg)
{
    static const crmpi_ctl_type_t expected_type[SNAPC_NUM_STEPS] = {
        [SNAPC_STEP_BOOKMARKS] = CRMPI_CTL_CKPT_BOOKMARKS,
        [SNAPC_STEP_DRAINED] = CRMPI_CTL_CKPT_DRAINED,
        [SNAPC_STEP_READY] = CRMPI_CTL_CKPT_READY,
        [SNAPC_STEP_DUMPED] = CRMPI_CTL_CKPT_DUMPED,
        [SNAPC_STEP_CONTINUED] = CRMPI_CTL_CKPT_CONTINUED,
        [SNAPC_STEP_STORED] = CRMPI_CTL_CKPT_STORED,
    };
    char why[600];

    /* Answers to an aborted or finished checkpoint (CKPT_ABORT included) end here. */
    if (global->step == SNAPC_STEP_IDLE || msg->hdr.seq != global->seq) {
        /* An agent still copying when its checkpoint was aborted (another rank's copy failed:
         * a full disk) has now filled rank.<r>/ of the partial sequence the abort removed:
         * remove it again, or its files hold the space until the next checkpoint. */
        if (msg->hdr.type == CRMPI_CTL_CKPT_STORED)
            crmpi_filem_seq_abort(global->jobdir, msg->hdr.seq);
        return;
    }
    /* CKPT_ABORT is an agent's refusal at whatever step (its rank is gone: it cannot pass
     * CKPT_CONTINUE on, and the rank will never answer it). */
    bool refused = msg->hdr.type == CRMPI_CTL_CKPT_ABORT;
    if (!refused && (msg->hdr.type != expected_type[global->step] || global->answered[rank])) {
        crmpi_log_warn("snapc: rank %d sent %s during the %s of checkpoint %u", rank,
                       crmpi_ctl_type_name(msg->hdr.type), snapc_global_step_name(global->step),
                       global->seq);
        return;
    }
    if (refused || msg->hdr.status != CRMPI_OK) {
        char reason[512];

        snapc_global_reason(msg, reason, sizeof(reason));
        snprintf(why, sizeof(why), "rank %d: %s", rank, reason);
        if (msg->hdr.status == CRMPI_ERR_PEER_GONE) /* the rank died: the job ends */
            snapc_global_abort_job(global, why, SNAPC_GLOBAL_RANK_DEATH);
        else
            snapc_global_abort(global, why);
        return;
    }
    if (global->step == SNAPC_STEP_BOOKMARKS && snapc_global_keep_marks(global, rank, msg)) {
        snprintf(why, sizeof(why), "rank %d sent malformed bookmarks", rank);
        snapc_global_abort(global, why);
        return;
    }
    if (global->step == SNAPC_STEP_DUMPED) {
        crmpi_buf_t buf;
        uint64_t bytes = 0;

        const char *receiver = "", *node = "";
        uint64_t dump_ns = 0;

        crmpi_buf_init_read(&buf, msg->payload, msg->hdr.len);
        if (crmpi_buf_get_u64(&buf, &bytes) == CRMPI_OK)
            global->image_bytes += bytes;
        if (crmpi_buf_get_u64(&buf, &dump_ns) != CRMPI_OK ||
            crmpi_buf_get_str(&buf, &receiver) != CRMPI_OK ||
            crmpi_buf_get_str(&buf, &node) != CRMPI_OK)
            receiver = node = "";
        snprintf(global->nodes[rank].receiver, sizeof(global->nodes[rank].receiver), "%s",
                 receiver);
        snprintf(global->nodes[rank].name, sizeof(global->nodes[rank].name), "%s", node);
    }
    if (global->step == SNAPC_STEP_STORED && snapc_global_keep_entry(global, rank, msg)) {
        snprintf(why, sizeof(why), "rank %d's agent sent a malformed list of files", rank);
        snapc_global_abort(global, why);
        return;
    }
    global->answered[rank] = true;
    if (++global->num_answered == global->params.np)
        snapc_global_advance(global);
}

void crmpi_snapc_global_tick(crmpi_snapc_global_t *global)
{
    char why[256];

    if (global->app_deferred && global->step == SNAPC_STEP_IDLE) {
        snapc_global_app_begin(global);
        return;
    }
    if (global->step == SNAPC_STEP_IDLE && global->params.enabled &&
        crmpi_snapc_periodic_due(&global->periodic, crmpi_clock_s())) {
        if (snapc_global_begin(global, -1, 0))
            crmpi_log_info("periodic checkpoint %u of job %llu started", global->seq,
                           (unsigned long long)global->params.jobid);
        return;
    }
    if (global->step == SNAPC_STEP_IDLE || global->step == SNAPC_STEP_STOPPED ||
        global->params.timeout_s <= 0 ||
        crmpi_clock_s() - global->step_started < global->params.timeout_s)
        return;
    for (int rank = 0; rank < global->params.np; rank++) {
        if (!global->answered[rank]) {
            snprintf(why, sizeof(why),
                     "rank %d (and %d more) did not answer within snapc_base_timeout (%d s)", rank,
                     global->params.np - global->num_answered - 1, global->params.timeout_s);
            break;
        }
    }
    snapc_global_abort(global, why);
}

void crmpi_snapc_global_rank_gone(crmpi_snapc_global_t *global, int rank)
{
    char why[128];

    /* Once dumped and continued, a rank may end normally: its agent still stores its
     * images (an agent that dies instead is caught by the timeout). */
    if (global->step == SNAPC_STEP_IDLE || global->step == SNAPC_STEP_STORED)
        return;
    if (global->step == SNAPC_STEP_STOPPED) {
        /* Killed while stopped: the snapshot is committed; mpirun ends the job as for any
         * rank's death. */
        global->step = SNAPC_STEP_IDLE;
        return;
    }
    snprintf(why, sizeof(why), "rank %d ended", rank);
    snapc_global_abort_job(global, why, SNAPC_GLOBAL_RANK_DEATH);
}

void crmpi_snapc_global_tool_event(crmpi_snapc_global_t *global)
{
    if (global->tool_fd < 0)
        return;
    /* A tool only waits; anything readable is its end (Ctrl-C) or garbage. */
    close(global->tool_fd);
    global->tool_fd = -1;
    if (global->step != SNAPC_STEP_IDLE && global->step != SNAPC_STEP_CONTINUED &&
        global->step != SNAPC_STEP_STORED)
        snapc_global_abort(global, "ompi-checkpoint was interrupted");
}

double crmpi_snapc_global_next_tick_s(const crmpi_snapc_global_t *global)
{
    double now = crmpi_clock_s();

    if (global->app_deferred && global->step == SNAPC_STEP_IDLE)
        return 0.0; /* the ranks wait in MPIX_Checkpoint */
    if (global->step == SNAPC_STEP_IDLE && global->params.enabled && global->periodic.enabled)
        return global->periodic.due_s > now ? global->periodic.due_s - now : 0.0;
    return -1.0;
}
