/*
 * snapc_local.h: the local coordinator (snapc.h), used by crmpi-agent's event loop.
 *
 *   mpirun --CKPT_*--> agent: crmpi_snapc_local_from_hnp  --> the rank (as is), or here:
 *                                                             CKPT_DUMP  (the CRS dumps the
 *                                                               rank into node-local storage)
 *                                                             CKPT_STORE (FileM copies that
 *                                                               to the global snapshot)
 *                                                             CKPT_PRUNE (after a commit: the
 *                                                               node's copies of sequences
 *                                                               no longer committed go)
 *                                                             --stop: SIGSTOP after the dump,
 *                                                               SIGCONT at CKPT_CONTINUE
 *   rank   --CKPT_*--> agent: crmpi_snapc_local_from_rank --> mpirun (as is)
 *
 * The rank can take part only between its CR_START and CR_STOP (the span of its C/R
 * thread); outside it, the agent answers CKPT_BEGIN itself with an error that says why.
 * Node-local images: <local_base>/ckpt/<seq>/rank.<r>/ (rank.json, criu/), removed once stored
 * or aborted.
 * Incremental checkpoints: the rank passes a userfaultfd (CR_TRACK) through which its writes
 * are tracked from each dump on. CKPT_DUMP names a parent sequence; the dump is a delta of it
 * when the tracking counts from that very dump (track_base), full otherwise, and the rank's
 * report (CKPT_STORED) says which.
 *
 * Threading: every function here runs on the agent's event loop, the only thread that writes
 * to mpirun or the rank. The dump blocks the loop (the rank is suspended meanwhile). The copy
 * does not, since the rank runs during it and needs its agent (output, fence, modex): CKPT_STORE
 * starts a thread that runs FileM's put and removes the node-local images, then makes
 * crmpi_snapc_local_copy_fd() readable; the loop polls that fd and calls
 * crmpi_snapc_local_copy_done(), which joins the thread and sends CKPT_STORED. While a copy
 * runs:
 *   - an ABORT of its checkpoint leaves the images to the thread (which skips the copy if it
 *     has not started it); CKPT_STORED still follows, and mpirun, for whom that checkpoint
 *     is over, only removes again what the copy may have written into the aborted sequence;
 *   - CKPT_BEGIN (and DUMP, STORE) are refused, saying the copy is not over;
 *   - images_pending stays true, so the agent outlives a rank that ends meanwhile.
 * CKPT_PRUNE removes, in the loop, the rank's copies on the node's own storage and the
 * partner copies its receiver took, of every sequence the commit record no longer lists but
 * the one being dumped or copied (the copy's, else the checkpoint's the rank is in or whose
 * images wait for CKPT_STORE); it takes no answer and is handled after CR_STOP too.
 * An agent that is ending (`ending`: mpirun's teardown) reports no copy, so that the sequence
 * is never committed; if it leaves before the copy is over, the thread ends with the process
 * and the sequence stays <seq>.partial.
 */
#ifndef CRMPI_SNAPC_LOCAL_H
#define CRMPI_SNAPC_LOCAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl.h"

/* What a dump reports back to mpirun. */
typedef struct crmpi_snapc_dump_result {
    uint64_t image_bytes;   /* bytes written */
    double dump_seconds;    /* the CRS's own measure */
    uint64_t pages_written; /* pages in the images (0: not known) */
    uint64_t pages_dirty;   /* tracked: pages written since the last dump */
    char error[512];        /* on failure: why, for the user (CRIU's own error lines) */
} crmpi_snapc_dump_result_t;

typedef struct crmpi_snapc_local crmpi_snapc_local_t;
/* A copy to stable storage in progress (snapc_local.c). */
typedef struct crmpi_snapc_local_copy crmpi_snapc_local_copy_t;

/**
 * Dump the rank's namespace (init `init_pid`) into the existing, empty directory `dir`,
 * leaving it running; with `parent_dir` (the rank's images of the checkpoint the tracking
 * counts from), only the pages written since. @return CRMPI_OK or an error, with
 * result->error filled.
 */
typedef int (*crmpi_snapc_dump_fn_t)(pid_t init_pid, const char *dir, const char *parent_dir,
                                     crmpi_snapc_dump_result_t *result);

/**
 * An application checkpoint's dump: store the rank's backup file `backup_path` into the
 * existing, empty directory `dir`. @return CRMPI_OK or an error, with result->error filled.
 */
typedef int (*crmpi_snapc_app_dump_fn_t)(const char *backup_path, const char *dir,
                                         crmpi_snapc_dump_result_t *result);

/**
 * Flatten the delta `images_dir` and its chain `parents` (newest first, NULL-terminated)
 * into the existing, empty directory `out_dir` (crs.h's flatten slot). @return CRMPI_OK or
 * an error, with `why` saying what.
 */
typedef int (*crmpi_snapc_flatten_fn_t)(const char *images_dir, const char *const *parents,
                                        const char *out_dir, char *why, size_t why_len);

/**
 * Start tracking the writes of the rank `rank_pid` through the userfaultfd it passed
 * (CR_TRACK), which the callee owns from here on. @return CRMPI_OK or an error (logged).
 */
typedef int (*crmpi_snapc_track_fn_t)(pid_t rank_pid, int uffd);

struct crmpi_snapc_local {
    int hnp_fd;                         /* to mpirun */
    int rank_fd;                        /* to the rank */
    int rank;                           /* MPI_COMM_WORLD rank */
    pid_t init_pid;                     /* the rank's namespace's init */
    const char *local_base;             /* node-local directory for images (the session dir) */
    bool rank_ready;                    /* the rank's C/R thread runs (CR_START seen) */
    bool rank_stopped;                  /* CR_STOP seen: no checkpoint any more */
    bool in_checkpoint;                 /* the rank is inside checkpoint `seq` */
    bool images_pending;                /* dumped, not yet stored or aborted: the agent must stay */
    bool rank_frozen;                   /* --stop: the rank's namespace is stopped (SIGSTOP) */
    bool ending;                        /* the agent is being torn down: a copy is not reported */
    uint32_t seq;                       /* the checkpoint in progress */
    crmpi_ctl_msg_t begin_held;         /* a CKPT_BEGIN that came while the rank still
                                         * finished an aborted checkpoint, taken up when it
                                         * has (hdr.type 0: none); its payload is taken
                                         * from the caller's message */
    crmpi_snapc_dump_fn_t dump;         /* NULL: no checkpointer (not built, or cannot run) */
    crmpi_snapc_app_dump_fn_t app_dump; /* application checkpoints (crs pheap's); NULL:
                                         * none in this build */
    crmpi_snapc_track_fn_t track;     /* NULL: no incremental checkpoints (crs_criu_incremental) */
    crmpi_snapc_flatten_fn_t flatten; /* NULL: a delta is always stored as one */
    uint32_t track_base;              /* the checkpoint whose dump the tracking counts writes
                                       * from; 0: none (no tracking, or it has not dumped yet) */
    bool tracking;                    /* the rank's writes are tracked */
    uint32_t dump_parent;             /* the last dump is a delta of this checkpoint (0: full) */
    char dump_parent_dir[4200];       /* and these are that checkpoint's images it was taken
                                       * against */
    bool dump_flatten;                /* CKPT_DUMP asked the delta stored flattened */
    uint32_t dump_levels;             /* CRMPI_FILEM_LEVEL_* the last dump goes to (CKPT_DUMP) */
    char jobdir[4096];                /* the job's snapshot directory (CKPT_DUMP): names the
                                       * local level's directory too */
    char drain_stats[256];            /* the rank's CKPT_DRAINED figures, as JSON, for rank.json */
    char app_backup[4096];            /* the rank's pheap backup file, from its last CR_APP_CKPT
                                       * (an application checkpoint stores it; "": none) */
    /* The copy to stable storage in progress (its thread runs), or NULL. */
    crmpi_snapc_local_copy_t *copy;
    /* The partner level: this node's storage takes other nodes' ranks' copies through a
     * receiver the agent starts at the first checkpoint due there (its address goes to
     * mpirun with CKPT_DUMPED); the key proves the sender is of the job. */
    uint8_t partner_key[32];                    /* set by the agent (0 bytes: no partner) */
    size_t partner_key_len;                     /* bytes of partner_key */
    struct crmpi_filem_partner_server *partner; /* the receiver, or NULL */
    char partner_addr[64];                      /* its "a.b.c.d:port" ("": not running) */
};

/** A CKPT_* message from mpirun (the caller frees it; a held CKPT_BEGIN keeps its payload
 *  and leaves NULL in its place). */
void crmpi_snapc_local_from_hnp(crmpi_snapc_local_t *local, crmpi_ctl_msg_t *msg);

/** Continue the rank's namespace if a --stop checkpoint stopped it (before an ending
 *  signal is passed to it, which a stopped process would not act on). */
void crmpi_snapc_local_thaw(crmpi_snapc_local_t *local);

/** The rank's CR_TRACK: its userfaultfd (the callee owns it). Without `track`, closed. */
void crmpi_snapc_local_track(crmpi_snapc_local_t *local, int uffd);

/** The rank's CR_APP_CKPT (MPIX_Checkpoint): remember its backup file, tell mpirun (the
 *  caller frees the message). */
void crmpi_snapc_local_app_request(crmpi_snapc_local_t *local, crmpi_ctl_msg_t *msg);

/** A CKPT_* message from the rank, passed up (the caller frees it). */
void crmpi_snapc_local_from_rank(crmpi_snapc_local_t *local, crmpi_ctl_msg_t *msg);

/** The fd to poll for the end of the copy in progress (readable then), or -1: none runs. */
int crmpi_snapc_local_copy_fd(const crmpi_snapc_local_t *local);

/** That fd is readable: join the copy's thread, clear images_pending and answer mpirun
 *  (CKPT_STORED: the rank's files, or why the copy failed), unless the agent is ending. */
void crmpi_snapc_local_copy_done(crmpi_snapc_local_t *local);

/** The agent ends: stop the partner receiver (a copy it takes is abandoned). */
void crmpi_snapc_local_close(crmpi_snapc_local_t *local);

#endif /* CRMPI_SNAPC_LOCAL_H */
