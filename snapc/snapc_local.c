/*
 * snapc_local.c: the local coordinator (snapc_local.h), in crmpi-agent: it passes the
 * protocol between mpirun and its rank, dumps the rank through the CRS into node-local
 * storage, and copies the images to the global snapshot through FileM, in a thread of
 * its own (see the header for the hand-off to the event loop).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "crmpi_status.h"
#include "fault.h"
#include "filem.h"
#include "filem_partner.h"
#include "fs.h"
#include "log.h"
#include "param.h"
#include "snapc.h"
#include "snapc_local.h"
#include "snapshot_entry.h"
#include "snapshot_rank_info.h"
#include "filem_fs.h"
#include "software.h"

/* The longest chain of deltas a flatten walks (crs_criu_incremental_chain is far less). */
#define SNAPC_LOCAL_CHAIN_MAX 64

/* One copy of a checkpoint's node-local images to stable storage. The loop fills it and
 * starts the thread; the thread sets `status` and `json` and writes done_fd last; the loop
 * reads them after pthread_join. */
struct crmpi_snapc_local_copy {
    pthread_t thread; /* runs snapc_local_copy_run */
    int done_fd;      /* eventfd: written by the thread when it is done */
    uint32_t seq;     /* the checkpoint */
    int rank;         /* whose images, for FileM's messages */
    const crmpi_filem_ops_t
        *ops;           /* FileM, opened by the loop (crmpi_filem_base_open is not thread-safe) */
    char src_dir[4096]; /* the node-local images; removed by the thread */
    bool in_place;      /* src_dir is the local level's rank.<r>.partial (the dump's own) */
    char *dest_dir;     /* the rank's directory of <seq>.partial ("": not due globally) */
    unsigned parent;    /* the images are a delta of this sequence's (0: full) */
    char parent_dir[4200];            /* those images, as the dump used them */
    crmpi_snapc_flatten_fn_t flatten; /* non-NULL: store the delta flattened (CKPT_DUMP) */
    unsigned levels;                  /* CRMPI_FILEM_LEVEL_* due */
    char jobdir[4096];                /* the snapshot's directory, which names the local level's */
    uint32_t *keep; /* sequences whose local copies stay (committed), num_keep of them */
    uint32_t num_keep;
    char partner_addr[64];   /* the partner node's receiver ("": the level is not due) */
    char partner_host[256];  /* that node's name, for the rank entry */
    uint8_t partner_key[32]; /* the job's partner key (local->partner_key) */
    size_t partner_key_len;
    bool aborted;  /* mpirun aborted the checkpoint (atomic: set by the loop) */
    int status;    /* the copy's result */
    char *json;    /* on success: the rank's files (crmpi_filem_rank_entry_encode) */
    char why[512]; /* a level that failed while another holds the images ("": none) */
};

static int snapc_local_send(int fd, crmpi_ctl_type_t type, uint32_t seq, int status,
                            const crmpi_buf_t *payload)
{
    return crmpi_ctl_send(fd, type, seq, status, payload ? payload->data : NULL,
                          payload ? payload->len : 0);
}

/* Answer mpirun for the rank: this step failed here, and why. */
static void snapc_local_refuse(crmpi_snapc_local_t *local, crmpi_ctl_type_t type, uint32_t seq,
                               int status, const char *why)
{
    crmpi_buf_t buf;

    crmpi_buf_init(&buf);
    crmpi_buf_put_str(&buf, why);
    snapc_local_send(local->hnp_fd, type, seq, status, &buf);
    crmpi_buf_free(&buf);
}

/*
 * Where checkpoint `seq`'s dump puts this rank's images (criu/ or pheap/, and rank.json):
 * when the local level is due, straight into it (<local seq dir>/rank.<r>.partial, renamed
 * once sealed: no copy); else <local_base>/ckpt/<seq>/rank.<r>, which the agents of a node
 * share, until the copies are done. @return whether it is the local level's.
 */
static bool snapc_local_dump_dir(const crmpi_snapc_local_t *local, uint32_t seq, char *buf,
                                 size_t len)
{
    char *seq_dir = NULL;

    if ((local->dump_levels & CRMPI_FILEM_LEVEL_LOCAL) &&
        crmpi_filem_local_seq_dir(local->jobdir, seq, &seq_dir) == CRMPI_OK) {
        snprintf(buf, len, "%s/rank.%d%s", seq_dir, local->rank, CRMPI_FILEM_PARTIAL_SUFFIX);
        free(seq_dir);
        return true;
    }
    snprintf(buf, len, "%s/ckpt/%u/rank.%d", local->local_base, seq, local->rank);
    return false;
}

/* The rank's host pid: the one child of its namespace's init. @return it, or -1. */
static pid_t snapc_local_rank_pid(const crmpi_snapc_local_t *local)
{
    char path[96];
    long pid = -1;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)local->init_pid,
             (int)local->init_pid);
    f = fopen(path, "re");
    if (!f)
        return -1;
    if (fscanf(f, "%ld", &pid) != 1)
        pid = -1;
    fclose(f);
    return (pid_t)pid;
}

/* rank.json beside the images: what the rank and the dump said about this checkpoint. */
static int snapc_local_rank_info(const crmpi_snapc_local_t *local, const char *dir, bool app,
                                 const crmpi_snapc_dump_result_t *result)
{
    crmpi_filem_rank_info_t *info;
    int rc = crmpi_filem_rank_info_create(local->rank, &info);

    if (rc != CRMPI_OK)
        return rc;
    crmpi_filem_rank_info_set_string(info, "versions", "crmpi", PACKAGE_VERSION);
    crmpi_filem_rank_info_set_string(info, "crs", "component", app ? "pheap" : "criu");
    if (app) {
        /* A restart puts the backup back where the program reads it (ompi-restart). */
        crmpi_filem_rank_info_set_string(info, "pheap", "backup", local->app_backup);
    }
    char seconds[32];
    snprintf(seconds, sizeof(seconds), "%.6f", result->dump_seconds);
    crmpi_filem_rank_info_set_json(info, "crs", "dump_seconds", seconds);
    crmpi_filem_rank_info_set_int(info, "crs", "image_bytes", (int64_t)result->image_bytes);
    crmpi_filem_rank_info_set_int(info, "crs", "pages_written", (int64_t)result->pages_written);
    if (local->tracking) {
        crmpi_filem_rank_info_set_int(info, "crs", "pages_dirty", (int64_t)result->pages_dirty);
        crmpi_filem_rank_info_set_int(info, "crs", "parent", (int64_t)local->dump_parent);
    }
    if (local->drain_stats[0])
        crmpi_filem_rank_info_set_json(info, "crcp", "drain", local->drain_stats);
    /* The rank is its init's one child; without the list, a restart is checked by CRIU only.
     * An application checkpoint's restart starts the program anew: nothing to check. */
    pid_t rank_pid = snapc_local_rank_pid(local);
    if (!app && (rank_pid <= 0 || crmpi_filem_software_record(info, rank_pid) != CRMPI_OK))
        crmpi_log_warn("snapc: cannot list the files rank %d maps; ompi-restart will not check "
                       "them",
                       local->rank);
    rc = crmpi_filem_rank_info_write(info, dir);
    crmpi_filem_rank_info_destroy(info);
    return rc;
}

/* SIGSTOP or SIGCONT to the rank's whole namespace: the init called setsid(), so its pid
 * is the process group of every process there (from outside, the init takes SIGSTOP). */
static void snapc_local_freeze(crmpi_snapc_local_t *local, bool frozen)
{
    if (local->rank_frozen == frozen)
        return;
    if (kill(-local->init_pid, frozen ? SIGSTOP : SIGCONT) < 0)
        crmpi_log_warn("snapc: cannot %s rank %d: %s", frozen ? "stop" : "continue", local->rank,
                       strerror(errno));
    local->rank_frozen = frozen;
}

void crmpi_snapc_local_thaw(crmpi_snapc_local_t *local)
{
    snapc_local_freeze(local, false);
}

void crmpi_snapc_local_track(crmpi_snapc_local_t *local, int uffd)
{
    pid_t rank_pid = snapc_local_rank_pid(local);

    local->tracking = false;
    local->track_base = 0;
    if (!local->track || rank_pid <= 0) {
        close(uffd);
        return;
    }
    local->tracking = local->track(rank_pid, uffd) == CRMPI_OK;
}

void crmpi_snapc_local_app_request(crmpi_snapc_local_t *local, crmpi_ctl_msg_t *msg)
{
    crmpi_buf_t req, up;
    const char *path = NULL;

    crmpi_buf_init_read(&req, msg->payload, msg->hdr.len);
    if (crmpi_buf_get_str(&req, &path) != CRMPI_OK || crmpi_buf_get_done(&req) != CRMPI_OK ||
        path[0] != '/' || strlen(path) >= sizeof(local->app_backup)) {
        crmpi_log_warn("snapc: rank %d asked for an application checkpoint with a malformed "
                       "request",
                       local->rank);
        path = "";
    }
    snprintf(local->app_backup, sizeof(local->app_backup), "%s", path);
    crmpi_buf_init(&up);
    crmpi_buf_put_u32(&up, (uint32_t)local->rank);
    if (snapc_local_send(local->hnp_fd, CRMPI_CTL_AGENT_APP_CKPT, 0, CRMPI_OK, &up) != CRMPI_OK)
        crmpi_log_error("snapc: cannot pass rank %d's application checkpoint to mpirun",
                        local->rank);
    crmpi_buf_free(&up);
}

/* Rank `rank`'s images of the committed sequence `seq` of job directory `jobdir`: this
 * node's local copy when there is one (the only one of a sequence held at the local level
 * alone), else the global one, in `seq_dir` (NULL: <jobdir>/<seq>). */
static void snapc_local_seq_images(const char *jobdir, int rank, uint32_t seq, const char *seq_dir,
                                   char *buf, size_t len)
{
    char *local_seq = NULL;

    if (crmpi_filem_local_seq_dir(jobdir, seq, &local_seq) == CRMPI_OK) {
        snprintf(buf, len, "%s/rank.%d/criu", local_seq, rank);
        free(local_seq);
        if (access(buf, F_OK) == 0)
            return;
    }
    if (seq_dir)
        snprintf(buf, len, "%s/rank.%d/criu", seq_dir, rank);
    else
        snprintf(buf, len, "%s/%u/rank.%d/criu", jobdir, seq, rank);
}

/*
 * The partner level's receiver of this agent, once: on the address this agent reaches
 * mpirun from (the node's address on the job's network), else on loopback. A failure is a
 * warning: the ranks whose partner this agent would be hold no copy there, and say why.
 */
static void snapc_local_partner_serve(crmpi_snapc_local_t *local)
{
    struct sockaddr_storage addr;
    socklen_t len = sizeof(addr);
    char host[INET_ADDRSTRLEN] = "127.0.0.1";

    if (local->partner || !local->partner_key_len)
        return;
    if (getsockname(local->hnp_fd, (struct sockaddr *)&addr, &len) == 0 &&
        addr.ss_family == AF_INET)
        inet_ntop(AF_INET, &((struct sockaddr_in *)&addr)->sin_addr, host, sizeof(host));
    if (crmpi_filem_partner_serve(host, local->partner_key, local->partner_key_len, &local->partner,
                                  local->partner_addr, sizeof(local->partner_addr)) != CRMPI_OK) {
        local->partner = NULL;
        local->partner_addr[0] = '\0';
    }
}

void crmpi_snapc_local_close(crmpi_snapc_local_t *local)
{
    crmpi_filem_partner_stop(local->partner);
    local->partner = NULL;
    local->partner_addr[0] = '\0';
}

static void snapc_local_dump(crmpi_snapc_local_t *local, uint32_t seq, uint32_t flags,
                             uint32_t parent, const char *parent_seq_dir)
{
    crmpi_snapc_dump_result_t result = {0};
    char dir[4096], images[4200];
    crmpi_buf_t reply;
    uint64_t start;
    int rc;

    bool app = flags & CRMPI_SNAPC_APP;

    if (app ? !local->app_dump : !local->dump) {
        /* Without CRIU in the build, or with a CRIU that cannot run (crs_criu_binary): the
         * agent's error at its start named the reason for every candidate. */
        snapc_local_refuse(local, CRMPI_CTL_CKPT_DUMPED, seq, CRMPI_ERR_NOT_SUPPORTED,
                           "no checkpointer can run in its agent (CRIU is not in this build or "
                           "cannot run here: the agent's error at its start says why; see "
                           "crs_criu_binary and crs_base_verbose)");
        return;
    }
    snapc_local_dump_dir(local, seq, dir, sizeof(dir));
    snprintf(images, sizeof(images), "%s/%s", dir, app ? "pheap" : "criu");
    crmpi_filem_tree_remove(dir); /* what an earlier, failed attempt may have left */
    if (crmpi_mkdirs(images, true) != CRMPI_OK) {
        snprintf(result.error, sizeof(result.error), "cannot create %.400s: %s", images,
                 strerror(errno));
        snapc_local_refuse(local, CRMPI_CTL_CKPT_DUMPED, seq, CRMPI_ERR_IO, result.error);
        return;
    }
    /* Fault points: a slow dump (the rank stays suspended), a dump that fails. */
    crmpi_fault_pause("snapc_dump_pause");
    start = crmpi_clock_ns();
    if (crmpi_fault_hit("snapc_dump_fail")) {
        snprintf(result.error, sizeof(result.error),
                 "the dump of rank %d failed (fault injected: snapc_dump_fail)", local->rank);
        rc = CRMPI_ERR_IO;
    } else if (app) {
        if (!local->app_backup[0]) {
            snprintf(result.error, sizeof(result.error),
                     "rank %d named no backup file (an application checkpoint is taken when "
                     "every rank calls MPIX_Checkpoint)",
                     local->rank);
            rc = CRMPI_ERR_NOT_FOUND;
        } else {
            rc = local->app_dump(local->app_backup, images, &result);
        }
        local->track_base = 0; /* the next CRIU dump is a full one */
        local->dump_parent = 0;
    } else {
        /* A delta only of the dump the tracking counts from; full otherwise. */
        if (!local->tracking || !parent || parent != local->track_base)
            parent = 0;
        if (parent)
            snapc_local_seq_images(local->jobdir, local->rank, parent, parent_seq_dir,
                                   local->dump_parent_dir, sizeof(local->dump_parent_dir));
        rc = local->dump(local->init_pid, images, parent ? local->dump_parent_dir : NULL, &result);
        /* Each tracked dump re-arms the tracking; a failed one leaves it unusable. */
        local->track_base = rc == CRMPI_OK && local->tracking ? seq : 0;
        local->dump_parent = rc == CRMPI_OK ? parent : 0;
    }
    local->dump_flatten = local->dump_parent && (flags & CRMPI_SNAPC_FLATTEN) && local->flatten;
    uint64_t dump_ns = crmpi_clock_ns() - start;
    if (rc == CRMPI_OK && snapc_local_rank_info(local, dir, app, &result) != CRMPI_OK) {
        snprintf(result.error, sizeof(result.error), "cannot write rank.json into %.400s", dir);
        rc = CRMPI_ERR_IO;
    }
    if (rc != CRMPI_OK) {
        siginfo_t ended = {0};

        /* A rank that died before or during its dump makes CRIU fail on a vanished process
         * ("the rank keeps running", says the CRS): say what happened instead. WNOWAIT: the
         * agent's loop reaps the init and reports the death to mpirun. */
        if (waitid(P_PID, (id_t)local->init_pid, &ended, WEXITED | WNOHANG | WNOWAIT) == 0 &&
            ended.si_pid == local->init_pid) {
            snprintf(result.error, sizeof(result.error), "the rank ended during its dump");
            rc = CRMPI_ERR_PEER_GONE; /* mpirun says what happens to the job */
        }
        crmpi_filem_tree_remove(dir);
        snapc_local_refuse(local, CRMPI_CTL_CKPT_DUMPED, seq, rc, result.error);
        return;
    }
    local->images_pending = true;
    if (flags & CRMPI_SNAPC_STOP)
        snapc_local_freeze(local, true); /* --stop: until mpirun's CKPT_CONTINUE */
    crmpi_buf_init(&reply);
    crmpi_buf_put_u64(&reply, result.image_bytes);
    crmpi_buf_put_u64(&reply, dump_ns);
    /* The receiver, and the node as the rank entry names it (FileM's put), by which mpirun
     * tells the job's nodes apart. */
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    crmpi_buf_put_str(&reply, local->partner_addr);
    crmpi_buf_put_str(&reply, host);
    snapc_local_send(local->hnp_fd, CRMPI_CTL_CKPT_DUMPED, seq, CRMPI_OK, &reply);
    crmpi_buf_free(&reply);
}

/* Why a copy failed, for the message to mpirun: a full disk said plainly. */
static const char *snapc_local_copy_error(int rc)
{
    return rc == CRMPI_ERR_OUT_OF_RESOURCE ? "the disk is full" : crmpi_strerror(rc);
}

/*
 * The local level: this node's <local>/<jobid>.ckpt/<seq>/rank.<r>, through
 * rank.<r>.partial renamed when complete. The dump wrote the images there (in_place): they
 * are checksummed and made durable where they are; else they are copied there
 * (checksummed, fsynced) from the session directory.
 * @param dir_out  that directory, for the other levels' copies to read
 */
static int snapc_local_copy_local(crmpi_snapc_local_copy_t *copy, crmpi_filem_rank_entry_t *entry,
                                  char *dir_out, size_t dir_len)
{
    char partial[4300];
    char *seq_dir = NULL;
    int rc = crmpi_filem_local_seq_dir(copy->jobdir, copy->seq, &seq_dir);

    if (rc == CRMPI_OK && crmpi_mkdirs(seq_dir, true) != CRMPI_OK) {
        snprintf(copy->why, sizeof(copy->why), "cannot create %.400s: %s", seq_dir,
                 strerror(errno));
        rc = CRMPI_ERR_IO;
    }
    if (rc == CRMPI_OK) {
        snprintf(dir_out, dir_len, "%s/rank.%d", seq_dir, copy->rank);
        snprintf(partial, sizeof(partial), "%s%s", dir_out, CRMPI_FILEM_PARTIAL_SUFFIX);
        if (!copy->in_place)
            crmpi_filem_tree_remove(partial);
        crmpi_filem_transfer_t transfer = {.rank = copy->rank,
                                           .src_dir = copy->in_place ? partial : copy->src_dir,
                                           .dest_dir = partial};
        rc = copy->in_place ? copy->ops->seal(&transfer, entry) : copy->ops->put(&transfer, entry);
        if (rc != CRMPI_OK)
            snprintf(copy->why, sizeof(copy->why), "the %s the local level (%.300s) failed (%s)",
                     copy->in_place ? "dump's sync in" : "copy to", seq_dir,
                     snapc_local_copy_error(rc));
    }
    if (rc == CRMPI_OK) {
        crmpi_filem_tree_remove(dir_out); /* an earlier job's, of the same jobid */
        if (rename(partial, dir_out) != 0 || crmpi_filem_dir_sync(seq_dir) != CRMPI_OK) {
            snprintf(copy->why, sizeof(copy->why), "cannot commit %.400s: %s", dir_out,
                     strerror(errno));
            crmpi_filem_tree_remove(partial);
            crmpi_filem_rank_entry_clear(entry);
            rc = CRMPI_ERR_IO;
        }
    }
    free(seq_dir);
    return rc;
}

/* The chain under a delta, newest first: `first` (the images it was dumped against), then
 * each one's own parent as its rank.json names it (this node's local copy, else the global
 * one). @return the number of dumps in dirs, or 0 with `why` filled */
static size_t snapc_local_chain(const crmpi_snapc_local_copy_t *copy, const char *first,
                                char (*dirs)[4200], size_t max, char *why, size_t why_len)
{
    size_t depth = 0;

    snprintf(dirs[depth++], sizeof(dirs[0]), "%s", first);
    for (;;) {
        char rank_dir[4200];
        crmpi_filem_rank_info_t *info;
        int64_t parent = 0;

        /* <seq>/rank.<r>/criu: rank.json is in <seq>/rank.<r>. */
        snprintf(rank_dir, sizeof(rank_dir), "%s", dirs[depth - 1]);
        char *slash = strrchr(rank_dir, '/');
        if (slash)
            *slash = '\0';
        if (crmpi_filem_rank_info_read(rank_dir, &info) != CRMPI_OK) {
            snprintf(why, why_len, "%.300s/rank.json cannot be read", rank_dir);
            return 0;
        }
        crmpi_filem_rank_info_get_int(info, "crs", "parent", &parent);
        crmpi_filem_rank_info_destroy(info);
        if (parent <= 0)
            return depth;
        if (depth == max) {
            snprintf(why, why_len, "its chain is longer than %zu dumps", max);
            return 0;
        }
        snapc_local_seq_images(copy->jobdir, copy->rank, (uint32_t)parent, NULL, dirs[depth++],
                               sizeof(dirs[0]));
    }
}

/*
 * CKPT_DUMP's FLATTEN: the delta in src_dir/criu and its chain become one full image there,
 * before any level gets it, so that the sequences under it can go (snapc_base_keep, the
 * chain's length); rank.json then names no parent and says which it was flattened from.
 * The rank runs meanwhile: its dump was the delta. When it cannot be done (a parent stored
 * compressed, say), the delta is stored as it is, with a warning.
 */
static void snapc_local_copy_flatten(crmpi_snapc_local_copy_t *copy)
{
    char(*dirs)[4200] = malloc(SNAPC_LOCAL_CHAIN_MAX * sizeof(*dirs));
    const char *chain[SNAPC_LOCAL_CHAIN_MAX + 1] = {NULL};
    char images[4200], flat[4210], delta[4210], why[512] = "out of memory";
    crmpi_filem_rank_info_t *info = NULL;
    size_t depth = 0;

    snprintf(images, sizeof(images), "%s/criu", copy->src_dir);
    snprintf(flat, sizeof(flat), "%s.flat", images);
    snprintf(delta, sizeof(delta), "%s.delta", images);
    if (dirs) {
        why[0] = '\0';
        depth = snapc_local_chain(copy, copy->parent_dir, dirs, SNAPC_LOCAL_CHAIN_MAX, why,
                                  sizeof(why));
    }
    for (size_t i = 0; i < depth; i++)
        chain[i] = dirs[i];
    crmpi_filem_tree_remove(flat);
    if (!depth || crmpi_fault_hit("snapc_flatten_fail")) {
        if (!why[0])
            snprintf(why, sizeof(why), "fault injected: snapc_flatten_fail");
        goto fail;
    }
    if (crmpi_mkdirs(flat, true) != CRMPI_OK) {
        snprintf(why, sizeof(why), "cannot create %.300s: %s", flat, strerror(errno));
        goto fail;
    }
    double start = crmpi_clock_s();
    if (copy->flatten(images, chain, flat, why, sizeof(why)) != CRMPI_OK)
        goto fail;
    char seconds[32];
    snprintf(seconds, sizeof(seconds), "%.6f", crmpi_clock_s() - start);
    if (crmpi_filem_rank_info_read(copy->src_dir, &info) != CRMPI_OK) {
        snprintf(why, sizeof(why), "%.300s/rank.json cannot be read", copy->src_dir);
        goto fail;
    }
    crmpi_filem_rank_info_set_int(info, "crs", "parent", 0);
    crmpi_filem_rank_info_set_int(info, "crs", "flattened_from", copy->parent);
    crmpi_filem_rank_info_set_json(info, "crs", "flatten_seconds", seconds);
    if (rename(images, delta) != 0 || rename(flat, images) != 0) {
        snprintf(why, sizeof(why), "cannot move %.300s into place: %s", flat, strerror(errno));
        rename(delta, images); /* back, if the first one was done */
        goto fail;
    }
    crmpi_filem_tree_remove(delta);
    if (crmpi_filem_rank_info_write(info, copy->src_dir) != CRMPI_OK) {
        /* The images are whole, and the manifest will say so; only a later flatten reads
         * the parent in rank.json, walks a chain it does not need, and may fail. */
        crmpi_log_warn("snapc: rank %d: checkpoint %u: rank.json not rewritten after the "
                       "flatten",
                       copy->rank, copy->seq);
    }
    crmpi_filem_rank_info_destroy(info);
    free(dirs);
    copy->parent = 0;
    return;
fail:
    free(dirs);
    crmpi_filem_rank_info_destroy(info);
    crmpi_filem_tree_remove(flat);
    crmpi_log_warn("snapc: rank %d: checkpoint %u stays a delta of checkpoint %u: flattening "
                   "it failed (%s)",
                   copy->rank, copy->seq, copy->parent, why);
}

/* The copy's thread: to each level due, the local one first (the global copy then reads
 * it). A level that fails while another holds the images is reported in `why`; the copy
 * fails when none does. Ending signals stay blocked here (the mask is inherited from the
 * loop's thread), so they reach the agent's signalfd. */
/*
 * The agent runs bound to its rank's CPUs (the rank inherits that binding). Its copies are
 * background work that should not take the rank's cores when the node has others: unless
 * filem_copy_cpus says rank, the copy thread may run on any CPU of the node (the kernel
 * keeps it within the agent's cpuset cgroup).
 */
static void snapc_local_copy_unbind(void)
{
    const char *where = NULL;
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    cpu_set_t all;

    if (crmpi_param_get_string("filem_copy_cpus", &where) == CRMPI_OK && where &&
        strcmp(where, "rank") == 0)
        return;
    CPU_ZERO(&all);
    for (long cpu = 0; cpu < cpus && cpu < CPU_SETSIZE; cpu++)
        CPU_SET((int)cpu, &all);
    if (sched_setaffinity(0, sizeof(all), &all) < 0)
        crmpi_log_warn("snapc: the checkpoint copies stay on the rank's CPUs: %s", strerror(errno));
}

static void *snapc_local_copy_run(void *arg)
{
    crmpi_snapc_local_copy_t *copy = arg;
    crmpi_filem_rank_entry_t entry = {0}, global_entry = {0};
    char local_dir[4200];
    const char *src = copy->src_dir;
    unsigned held = 0;
    uint64_t one = 1;
    double seconds[CRMPI_FILEM_NUM_LEVELS] = {0};
    int rc = CRMPI_OK;

    pthread_setname_np(pthread_self(), "crmpi-copy"); /* for ps, top and /proc */
    snapc_local_copy_unbind();
    /* Fault point: a slow copy, while the rank runs. */
    crmpi_fault_pause("filem_copy_pause");
    /* An aborted checkpoint's <seq>.partial is gone: nothing to copy into. */
    if (__atomic_load_n(&copy->aborted, __ATOMIC_ACQUIRE)) {
        copy->status = CRMPI_ERR_CKPT_ABORTED;
        goto out;
    }
    if (copy->flatten)
        snapc_local_copy_flatten(copy);
    if (copy->levels & CRMPI_FILEM_LEVEL_LOCAL) {
        double start = crmpi_clock_s();

        rc = snapc_local_copy_local(copy, &entry, local_dir, sizeof(local_dir));
        seconds[0] = crmpi_clock_s() - start;
        if (rc == CRMPI_OK) {
            held |= CRMPI_FILEM_LEVEL_LOCAL;
            src = local_dir;
        }
    }
    if (copy->levels & CRMPI_FILEM_LEVEL_PARTNER) {
        char why[400] = "";
        double start = crmpi_clock_s();
        int partner_rc = CRMPI_ERR_UNREACH;

        if (!copy->partner_addr[0])
            snprintf(why, sizeof(why),
                     "mpirun named no partner node (every rank of the job ran on one node)");
        else if (crmpi_fault_hit("filem_partner_copy_fail"))
            snprintf(why, sizeof(why), "fault injected: filem_partner_copy_fail");
        else
            partner_rc = crmpi_filem_partner_send(
                copy->partner_addr, copy->partner_key, copy->partner_key_len, copy->jobdir,
                copy->seq, copy->rank, src, copy->keep, copy->num_keep, why, sizeof(why));
        seconds[2] = crmpi_clock_s() - start;
        if (partner_rc == CRMPI_OK) {
            held |= CRMPI_FILEM_LEVEL_PARTNER;
        } else {
            rc = partner_rc;
            if (!copy->why[0])
                snprintf(copy->why, sizeof(copy->why), "the copy to the partner level failed: %s",
                         why);
        }
    }
    if ((copy->levels & CRMPI_FILEM_LEVEL_GLOBAL) && copy->dest_dir[0]) {
        uint64_t max_rate = 0;
        crmpi_param_get_size("filem_global_max_rate", &max_rate);
        crmpi_filem_transfer_t transfer = {.rank = copy->rank,
                                           .src_dir = src,
                                           .dest_dir = copy->dest_dir,
                                           .max_rate = (double)max_rate};
        double start = crmpi_clock_s();

        rc = crmpi_fault_hit("filem_global_copy_fail") ? CRMPI_ERR_IO
                                                       : copy->ops->put(&transfer, &global_entry);
        seconds[1] = crmpi_clock_s() - start;
        if (rc == CRMPI_OK) {
            held |= CRMPI_FILEM_LEVEL_GLOBAL;
            if (!entry.num_files)
                entry = global_entry;
            else
                crmpi_filem_rank_entry_clear(&global_entry);
        } else if (held && !copy->why[0]) {
            snprintf(copy->why, sizeof(copy->why), "copying the images to %.400s failed (%s)",
                     copy->dest_dir, snapc_local_copy_error(rc));
        }
    }
    copy->status = held ? CRMPI_OK : rc != CRMPI_OK ? rc : CRMPI_ERR_BAD_PARAM;
    entry.parent = copy->parent;
    entry.levels = held;
    memcpy(entry.level_seconds, seconds, sizeof(seconds));
    if ((held & CRMPI_FILEM_LEVEL_PARTNER) && !(entry.partner = strdup(copy->partner_host)))
        copy->status = CRMPI_ERR_OUT_OF_RESOURCE;
    if (copy->status == CRMPI_OK)
        copy->status = crmpi_filem_rank_entry_encode(&entry, &copy->json);
    crmpi_filem_rank_entry_clear(&entry);
    if (copy->levels & CRMPI_FILEM_LEVEL_LOCAL)
        crmpi_filem_local_prune(copy->jobdir, copy->seq, copy->rank, copy->keep, copy->num_keep);
out:
    crmpi_filem_tree_remove(copy->src_dir);
    while (write(copy->done_fd, &one, sizeof(one)) < 0 && errno == EINTR) {
    }
    return NULL;
}

/* CKPT_STORED for `seq`: the rank's files (json) and what failed of a level that does not
 * hold them (`why`, "" when none), or why the copy failed (`why`, else about `dest`). */
static void snapc_local_stored(crmpi_snapc_local_t *local, uint32_t seq, const char *dest, int rc,
                               const char *json, const char *why)
{
    char text[512];
    crmpi_buf_t reply;

    if (rc != CRMPI_OK) {
        if (why && why[0])
            snprintf(text, sizeof(text), "%s", why);
        else
            snprintf(text, sizeof(text), "copying the images to %.400s failed (%s)", dest,
                     snapc_local_copy_error(rc));
        snapc_local_refuse(local, CRMPI_CTL_CKPT_STORED, seq, rc, text);
        return;
    }
    crmpi_buf_init(&reply);
    crmpi_buf_put_str(&reply, json);
    crmpi_buf_put_str(&reply, why ? why : "");
    snapc_local_send(local->hnp_fd, CRMPI_CTL_CKPT_STORED, seq, CRMPI_OK, &reply);
    crmpi_buf_free(&reply);
}

/* Start copying the node-local images to the levels due: `dest` (the rank's directory of
 * the global snapshot; "" when not due there) and this node's local level, keeping there
 * the `num_keep` sequences of `keep` (the caller's array, copied); crmpi_snapc_local_copy_done
 * answers mpirun. */
static void snapc_local_store(crmpi_snapc_local_t *local, uint32_t seq, const char *dest,
                              const uint32_t *keep, uint32_t num_keep, const char *partner_addr,
                              const char *partner_host)
{
    crmpi_snapc_local_copy_t *copy = calloc(1, sizeof(*copy));
    char dir[4096];
    int rc;

    if (!copy) {
        crmpi_log_error("snapc: out of memory starting the copy of checkpoint %u", seq);
        rc = CRMPI_ERROR;
        goto err_refuse;
    }
    copy->seq = seq;
    copy->rank = local->rank;
    copy->parent = local->dump_parent;
    if (local->dump_flatten) {
        copy->flatten = local->flatten;
        snprintf(copy->parent_dir, sizeof(copy->parent_dir), "%s", local->dump_parent_dir);
    }
    copy->levels = local->dump_levels ? local->dump_levels : CRMPI_FILEM_LEVEL_GLOBAL;
    snprintf(copy->jobdir, sizeof(copy->jobdir), "%s", local->jobdir);
    snprintf(copy->partner_addr, sizeof(copy->partner_addr), "%s", partner_addr);
    snprintf(copy->partner_host, sizeof(copy->partner_host), "%s", partner_host);
    memcpy(copy->partner_key, local->partner_key, local->partner_key_len);
    copy->partner_key_len = local->partner_key_len;
    copy->in_place = snapc_local_dump_dir(local, seq, copy->src_dir, sizeof(copy->src_dir));
    copy->dest_dir = strdup(dest);
    copy->keep = malloc((num_keep ? num_keep : 1) * sizeof(*keep));
    if (copy->keep) {
        memcpy(copy->keep, keep, num_keep * sizeof(*keep));
        copy->num_keep = num_keep;
    }
    copy->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (!copy->dest_dir || !copy->keep || copy->done_fd < 0) {
        crmpi_log_error("snapc: cannot start the copy of checkpoint %u: %s", seq, strerror(errno));
        rc = CRMPI_ERROR;
        goto err_free_copy;
    }
    rc = crmpi_filem_base_open(&copy->ops);
    if (rc != CRMPI_OK)
        goto err_free_copy;
    rc = pthread_create(&copy->thread, NULL, snapc_local_copy_run, copy);
    if (rc != 0) {
        crmpi_log_error("snapc: cannot start the copy of checkpoint %u: %s", seq, strerror(rc));
        rc = CRMPI_ERROR;
        goto err_close_filem;
    }
    local->copy = copy;
    return;

err_close_filem:
    crmpi_filem_base_close();
err_free_copy:
    if (copy->done_fd >= 0)
        close(copy->done_fd);
    free(copy->dest_dir);
    free(copy->keep);
    free(copy);
err_refuse:
    snapc_local_dump_dir(local, seq, dir, sizeof(dir));
    crmpi_filem_tree_remove(dir);
    local->images_pending = false;
    snapc_local_stored(local, seq, dest, rc, NULL, NULL);
}

/* Is the copy that runs one of a checkpoint mpirun aborted (it ends at its next file)? */
static bool snapc_local_copy_aborted(const crmpi_snapc_local_t *local)
{
    return local->copy && __atomic_load_n(&local->copy->aborted, __ATOMIC_ACQUIRE);
}

/* The aborted checkpoint has ended here, in the rank and in the copy: the start held
 * meanwhile (CKPT_BEGIN) goes on now. */
static void snapc_local_begin_release(crmpi_snapc_local_t *local)
{
    crmpi_ctl_msg_t held = local->begin_held;

    if (!held.hdr.type || local->in_checkpoint || local->copy)
        return;
    local->begin_held = (crmpi_ctl_msg_t){0};
    crmpi_snapc_local_from_hnp(local, &held);
    crmpi_ctl_msg_free(&held);
}

int crmpi_snapc_local_copy_fd(const crmpi_snapc_local_t *local)
{
    return local->copy ? local->copy->done_fd : -1;
}

void crmpi_snapc_local_copy_done(crmpi_snapc_local_t *local)
{
    crmpi_snapc_local_copy_t *copy = local->copy;
    uint64_t count;

    if (!copy || read(copy->done_fd, &count, sizeof(count)) != sizeof(count))
        return; /* not over yet */
    pthread_join(copy->thread, NULL);
    crmpi_filem_base_close();
    local->copy = NULL;
    local->images_pending = false;
    /* An ending agent reports nothing: mpirun, tearing the job down, would still commit a
     * sequence whose every copy was reported. */
    if (!local->ending)
        snapc_local_stored(local, copy->seq, copy->dest_dir, copy->status, copy->json, copy->why);
    close(copy->done_fd);
    free(copy->dest_dir);
    free(copy->keep);
    free(copy->json);
    free(copy);
    snapc_local_begin_release(local);
}

/*
 * No new checkpoint, dump or copy while a copy runs (mpirun aborted the checkpoint being
 * copied, after a timeout, and went on): one copy at a time per agent, and a rank's images
 * are not taken again before the last ones are out of node-local storage.
 * @return true when the step was refused (answered with `answer`).
 */
static bool snapc_local_copy_busy(crmpi_snapc_local_t *local, crmpi_ctl_type_t answer, uint32_t seq)
{
    char why[160];

    if (!local->copy)
        return false;
    snprintf(why, sizeof(why),
             "its agent is still copying the images of checkpoint %u to stable storage",
             local->copy->seq);
    snapc_local_refuse(local, answer, seq, CRMPI_ERR_RESOURCE_BUSY, why);
    return true;
}

/* Pass a step to the rank; it answers mpirun itself. */
static void snapc_local_to_rank(crmpi_snapc_local_t *local, crmpi_ctl_msg_t *msg)
{
    if (!local->in_checkpoint || msg->hdr.seq != local->seq)
        return; /* nothing of it reached the rank: nothing to undo there */
    if (crmpi_ctl_send(local->rank_fd, (crmpi_ctl_type_t)msg->hdr.type, msg->hdr.seq,
                       msg->hdr.status, msg->payload, msg->hdr.len) != CRMPI_OK)
        snapc_local_refuse(local, CRMPI_CTL_CKPT_ABORT, msg->hdr.seq, CRMPI_ERR_PEER_GONE,
                           "the rank is gone");
}

/* The list of kept sequences in CKPT_STORE and CKPT_PRUNE (u32 n, n x u32): into `*keep`
 * (malloc'ed, the caller frees it, also on failure) and `*num_keep`. */
static bool snapc_local_get_kept(const crmpi_ctl_msg_t *msg, crmpi_buf_t *req, uint32_t **keep,
                                 uint32_t *num_keep)
{
    bool ok = crmpi_buf_get_u32(req, num_keep) == CRMPI_OK && *num_keep <= msg->hdr.len / 4 &&
              (*keep = calloc(*num_keep + 1, sizeof(**keep)));

    for (uint32_t i = 0; ok && i < *num_keep; i++)
        ok = crmpi_buf_get_u32(req, &(*keep)[i]) == CRMPI_OK;
    return ok;
}

/* CKPT_STORE: the global destination ("" when not due), the sequences to keep on the nodes'
 * own storage, and the partner node's receiver and name ("" when not due). */
static void snapc_local_store_request(crmpi_snapc_local_t *local, crmpi_ctl_msg_t *msg,
                                      crmpi_buf_t *req)
{
    const char *dest = NULL, *partner_addr = NULL, *partner_host = NULL;
    uint32_t num_keep = 0, *keep = NULL;
    bool ok = crmpi_buf_get_str(req, &dest) == CRMPI_OK &&
              snapc_local_get_kept(msg, req, &keep, &num_keep);

    ok = ok && crmpi_buf_get_str(req, &partner_addr) == CRMPI_OK &&
         crmpi_buf_get_str(req, &partner_host) == CRMPI_OK;
    if (!ok || crmpi_buf_get_done(req) != CRMPI_OK)
        snapc_local_refuse(local, CRMPI_CTL_CKPT_STORED, msg->hdr.seq, CRMPI_ERR_PROTO,
                           "malformed store request");
    else
        snapc_local_store(local, msg->hdr.seq, dest, keep, num_keep, partner_addr, partner_host);
    free(keep);
}

/*
 * CKPT_PRUNE: mpirun committed a sequence; `req` lists the committed sequences kept. Remove
 * this node's copies of the others: the rank's at the local level, and the partner copies
 * this agent's receiver took for other nodes' ranks. The sequence this agent is dumping or
 * copying stays (a newer checkpoint may be under way, or an aborted one's copy still runs),
 * so does everything of a job this agent never dumped for (no jobdir: nothing here). A
 * removal that fails is a warning (FileM's), and the next prune tries again.
 */
static void snapc_local_prune(crmpi_snapc_local_t *local, crmpi_ctl_msg_t *msg, crmpi_buf_t *req)
{
    uint32_t num_keep = 0, *keep = NULL, busy = 0;

    if (!snapc_local_get_kept(msg, req, &keep, &num_keep) || crmpi_buf_get_done(req) != CRMPI_OK) {
        crmpi_log_warn("snapc: mpirun sent a malformed %s for checkpoint %u; rank %d's node keeps "
                       "its copies until the next one",
                       crmpi_ctl_type_name(msg->hdr.type), msg->hdr.seq, local->rank);
        free(keep);
        return;
    }
    if (local->copy)
        busy = local->copy->seq;
    else if (local->in_checkpoint || local->images_pending)
        busy = local->seq;
    if (local->jobdir[0]) {
        crmpi_filem_local_prune(local->jobdir, busy, local->rank, keep, num_keep);
        crmpi_filem_partner_prune(local->partner, local->jobdir, keep, num_keep);
    }
    free(keep);
}

void crmpi_snapc_local_from_hnp(crmpi_snapc_local_t *local, crmpi_ctl_msg_t *msg)
{
    crmpi_buf_t req;
    char dir[4096];

    crmpi_buf_init_read(&req, msg->payload, msg->hdr.len);
    switch (msg->hdr.type) {
    case CRMPI_CTL_CKPT_BEGIN:
        if (!local->rank_ready) {
            snapc_local_refuse(local, CRMPI_CTL_CKPT_BOOKMARKS, msg->hdr.seq,
                               CRMPI_ERR_NOT_SUPPORTED,
                               local->rank_stopped ? "it is in MPI_Finalize or has ended"
                                                   : "it has not finished MPI_Init");
            break;
        }
        if (!snapc_local_copy_aborted(local) &&
            snapc_local_copy_busy(local, CRMPI_CTL_CKPT_BOOKMARKS, msg->hdr.seq))
            break;
        if (local->in_checkpoint || local->copy) {
            /* An earlier checkpoint, aborted at mpirun, has not ended here yet: in the rank
             * (its C/R thread would drop this one's messages), or in the copy of its images,
             * which stops at its next file. Held until the rank's answer to the abort, which
             * comes as soon as the rank has undone its part, and the copy's end. mpirun's
             * timeout bounds the wait; the other ranks wait in the bookmark exchange. */
            if (local->begin_held.hdr.type) {
                snapc_local_refuse(local, CRMPI_CTL_CKPT_BOOKMARKS, msg->hdr.seq,
                                   CRMPI_ERR_RESOURCE_BUSY, "it holds another checkpoint's start");
                break;
            }
            local->begin_held = *msg;
            msg->payload = NULL;
            break;
        }
        local->seq = msg->hdr.seq;
        local->in_checkpoint = true;
        local->drain_stats[0] = '\0';
        snapc_local_to_rank(local, msg);
        break;
    case CRMPI_CTL_CKPT_EXPECT:
    case CRMPI_CTL_CKPT_SUSPEND: snapc_local_to_rank(local, msg); break;
    case CRMPI_CTL_CKPT_CONTINUE:
        snapc_local_freeze(local, false);
        snapc_local_to_rank(local, msg);
        break;
    case CRMPI_CTL_CKPT_ABORT:
        if (local->begin_held.hdr.type && local->begin_held.hdr.seq == msg->hdr.seq) {
            /* Aborted before it reached the rank: nothing of it to undo. */
            crmpi_ctl_msg_free(&local->begin_held);
            local->begin_held = (crmpi_ctl_msg_t){0};
            break;
        }
        snapc_local_freeze(local, false);
        if (local->copy && local->copy->seq == msg->hdr.seq) {
            /* Its thread still uses the images, and removes them when done. */
            __atomic_store_n(&local->copy->aborted, true, __ATOMIC_RELEASE);
        } else {
            snapc_local_dump_dir(local, msg->hdr.seq, dir, sizeof(dir));
            crmpi_filem_tree_remove(dir);
            /* A copy of an earlier checkpoint may still run (this one was refused). */
            local->images_pending = local->copy != NULL;
        }
        snapc_local_to_rank(local, msg);
        break;
    case CRMPI_CTL_CKPT_DUMP: {
        uint32_t flags = 0, parent = 0, levels = 0;
        const char *parent_dir = "", *jobdir = "";

        if (crmpi_buf_get_u32(&req, &flags) != CRMPI_OK ||
            crmpi_buf_get_u32(&req, &parent) != CRMPI_OK ||
            crmpi_buf_get_str(&req, &parent_dir) != CRMPI_OK ||
            crmpi_buf_get_u32(&req, &levels) != CRMPI_OK ||
            crmpi_buf_get_str(&req, &jobdir) != CRMPI_OK || crmpi_buf_get_done(&req) != CRMPI_OK ||
            !(levels & CRMPI_FILEM_LEVELS_ALL) || strlen(jobdir) >= sizeof(local->jobdir)) {
            snapc_local_refuse(local, CRMPI_CTL_CKPT_DUMPED, msg->hdr.seq, CRMPI_ERR_PROTO,
                               "malformed dump request");
            break;
        }
        if (snapc_local_copy_busy(local, CRMPI_CTL_CKPT_DUMPED, msg->hdr.seq))
            break;
        local->dump_levels = levels & CRMPI_FILEM_LEVELS_ALL;
        snprintf(local->jobdir, sizeof(local->jobdir), "%s", jobdir);
        if (local->dump_levels & CRMPI_FILEM_LEVEL_PARTNER)
            snapc_local_partner_serve(local);
        snapc_local_dump(local, msg->hdr.seq, flags, parent, parent_dir);
        break;
    }
    case CRMPI_CTL_CKPT_APP_WANTED:
    case CRMPI_CTL_CKPT_APP_DONE:
        /* Outside a checkpoint's steps: the news that one waits for MPIX_Checkpoint, and
         * after its end (or instead of it) the answer to CR_APP_CKPT. Not to a rank that
         * left checkpoints (CR_STOP): it reads only the replies to its requests now, and
         * it may finalize while the copy of its last checkpoint goes on. */
        if (local->rank_stopped)
            break;
        if (crmpi_ctl_send(local->rank_fd, (crmpi_ctl_type_t)msg->hdr.type, msg->hdr.seq,
                           msg->hdr.status, msg->payload, msg->hdr.len) != CRMPI_OK)
            crmpi_log_warn("snapc: cannot pass %s to rank %d", crmpi_ctl_type_name(msg->hdr.type),
                           local->rank);
        break;
    case CRMPI_CTL_CKPT_STORE:
        if (snapc_local_copy_busy(local, CRMPI_CTL_CKPT_STORED, msg->hdr.seq))
            break;
        snapc_local_store_request(local, msg, &req);
        break;
    case CRMPI_CTL_CKPT_PRUNE:
        /* Whatever the rank does (even after its CR_STOP or its end, while the agent
         * stays for a copy): this concerns the node's storage, not the rank. */
        snapc_local_prune(local, msg, &req);
        break;
    default:
        crmpi_log_warn("snapc: mpirun sent an unexpected %s", crmpi_ctl_type_name(msg->hdr.type));
        break;
    }
}

void crmpi_snapc_local_from_rank(crmpi_snapc_local_t *local, crmpi_ctl_msg_t *msg)
{
    /* Only the end of the checkpoint the rank is in: an answer to an older one must not
     * make the agent drop the current one's steps (the rank would wait forever). */
    if ((msg->hdr.type == CRMPI_CTL_CKPT_CONTINUED || msg->hdr.type == CRMPI_CTL_CKPT_ABORT) &&
        msg->hdr.seq == local->seq)
        local->in_checkpoint = false;
    /* A restored rank answers its restart so; its C/R thread runs again. */
    if (msg->hdr.type == CRMPI_CTL_CKPT_CONTINUED)
        local->rank_ready = !local->rank_stopped;
    if (msg->hdr.type == CRMPI_CTL_CKPT_DRAINED && msg->hdr.status == CRMPI_OK) {
        crmpi_buf_t buf;
        uint64_t bookmark_ns = 0, drain_ns = 0, messages = 0, bytes = 0;

        crmpi_buf_init_read(&buf, msg->payload, msg->hdr.len);
        crmpi_buf_get_u64(&buf, &bookmark_ns);
        crmpi_buf_get_u64(&buf, &drain_ns);
        crmpi_buf_get_u64(&buf, &messages);
        crmpi_buf_get_u64(&buf, &bytes);
        snprintf(local->drain_stats, sizeof(local->drain_stats),
                 "{\"bookmark_ns\": %llu, \"drain_ns\": %llu, \"messages_drained\": %llu, "
                 "\"bytes_pulled\": %llu}",
                 (unsigned long long)bookmark_ns, (unsigned long long)drain_ns,
                 (unsigned long long)messages, (unsigned long long)bytes);
    }
    if (crmpi_ctl_send(local->hnp_fd, (crmpi_ctl_type_t)msg->hdr.type, msg->hdr.seq,
                       msg->hdr.status, msg->payload, msg->hdr.len) != CRMPI_OK)
        crmpi_log_error("snapc: cannot pass the rank's %s to mpirun",
                        crmpi_ctl_type_name(msg->hdr.type));
    snapc_local_begin_release(local);
}
