/*
 * snapc.h: snapshot coordination, the contract between the three coordinators of a
 * checkpoint and the protocol they speak (docs/design.md, "The checkpoint, phase by phase" and
 * "Interfaces").
 *
 *   ompi-checkpoint --TOOL_CKPT--> mpirun: GLOBAL coordinator (snapc_global.c)
 *                                    |  one checkpoint at a time, sequence numbers, the
 *                                    |  global cut, the commit (filem/), timeouts
 *                  CKPT_* messages   |  (over the agents' stream sockets)
 *                                    v
 *                            crmpi-agent: LOCAL coordinator (snapc_local.c), one per rank
 *                                    |  forwards to its rank, runs the CRS (CRIU) dump and
 *                                    |  FileM's copy to stable storage
 *                  CKPT_* messages   |  (over the rank's control socket)
 *                                    v
 *                            rank: APP coordinator (snapc_app.c), the C/R thread of
 *                                  libmpi: runs INC's phases (inc.h) under the library lock
 *
 * One checkpoint, as messages (-> down towards the ranks, <- up towards mpirun). Every
 * message carries the checkpoint's sequence number; every "<-" carries a status.
 *
 *   global                     local (agent)               app (rank's C/R thread)
 *   CKPT_BEGIN{seq,flags} ->   CKPT_BEGIN ->               take the library lock,
 *                                                          hold new sends (pml.h)
 *                          <-  CKPT_BOOKMARKS <-           {peer, sent} for each peer it
 *                                                          ever sent to (sparse)
 *   transpose all bookmarks
 *   CKPT_EXPECT{peer,count} -> CKPT_EXPECT ->              drain until every count has
 *                                                          arrived (crcp.h)
 *                          <-  CKPT_DRAINED <-
 *   all drained: the cut
 *   CKPT_SUSPEND ->            CKPT_SUSPEND ->             INC pre-checkpoint: BTLs
 *                                                          release what CRIU cannot take
 *                          <-  CKPT_READY <-               then waits, lock held
 *                              CRS dump of the rank's
 *                              namespace (leave running
 *                              unless --term)
 *                          <-  CKPT_DUMPED{bytes,times}
 *   all dumped
 *   CKPT_CONTINUE ->           CKPT_CONTINUE ->            INC continue: BTLs rebuilt,
 *     (or CKPT_TERMINATE                                   re-modex (fence through the
 *      with --term)                                        agents), sends released,
 *                          <-  CKPT_CONTINUED <-           lock dropped
 *                              FileM: local -> global
 *                          <-  CKPT_STORED{files,sha256}
 *   all stored: manifest, commit (filem/)
 *   CKPT_PRUNE{kept seqs} ->   its node's copies of the
 *                              sequences not kept go
 *                              (no answer)
 *   the tool gets the handle
 *
 *   --term: no CKPT_CONTINUE; the ranks wait (suspended, lock held) until the commit, then
 *   mpirun ends the job. --stop: no CKPT_CONTINUE either; each agent stops its rank's
 *   namespace (SIGSTOP) once dumped, and after the commit the job stays stopped until
 *   mpirun receives SIGCONT (`kill -CONT <jobid>`): the agents continue their ranks
 *   (SIGCONT) and pass CKPT_CONTINUE, which the ranks answer as above.
 *
 *   Restart: the restored rank's C/R thread is still waiting after CKPT_READY; its new
 *   agent sends CKPT_RESTART{job facts, MCA parameters} instead of CKPT_CONTINUE, and INC
 *   runs the restart phase (new locality, BTLs selected again, PML sequence state reset).
 *
 * Failure anywhere (a status < 0, a timeout, a rank or agent gone, the tool gone before
 * the cut): the global coordinator sends CKPT_ABORT{seq} to every agent still there; each
 * rank undoes what it did (resumes suspended BTLs, releases held sends, drops the lock)
 * and the job keeps running; nothing is committed, the previous snapshot stays.
 *
 * Timeouts: parameter snapc_base_timeout (seconds) bounds each step at the global
 * coordinator; the dump and the copy to stable storage are bounded by their own
 * parameters, since they grow with image size.
 *
 * Threading: the global and local coordinators run in the single-threaded event loops of
 * mpirun and the agent (whose copy to stable storage runs in a thread of its own, handed
 * back to the loop through an fd: snapc_local.h). The app coordinator runs on the rank's
 * C/R thread, which reads every message of the control socket (replies to the rank's own
 * requests are handed to the thread that asked).
 */
#ifndef CRMPI_SNAPC_H
#define CRMPI_SNAPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl.h"

/* One bookmark: messages sent to (or expected from) one peer, by world rank. The rank's
 * crcp counts them; the coordinators carry them (CKPT_BOOKMARKS, CKPT_EXPECT). */
typedef struct crmpi_snapc_bookmark {
    uint32_t peer;  /* rank in MPI_COMM_WORLD */
    uint32_t count; /* messages */
} crmpi_snapc_bookmark_t;

/* Flags of CKPT_BEGIN (ompi-checkpoint's options). */
enum {
    CRMPI_SNAPC_TERM = 1u << 0,     /* --term: the job ends once the snapshot is committed */
    CRMPI_SNAPC_STOP = 1u << 1,     /* --stop: the ranks are stopped (SIGSTOP) after their
                                     * dump and stay so, after the commit, until mpirun gets
                                     * SIGCONT; then they continue as after any checkpoint */
    CRMPI_SNAPC_NOWAIT = 1u << 2,   /* --nowait: the tool leaves once the checkpoint started */
    CRMPI_SNAPC_APP = 1u << 3,      /* an application checkpoint (MPIX_Checkpoint): each agent
                                     * stores its rank's pheap backup file, not a CRIU image */
    CRMPI_SNAPC_BLOCKING = 1u << 4, /* snapc_base_blocking: the ranks stay suspended until the
                                     * snapshot is committed (the blocking scheme) */
    CRMPI_SNAPC_FLATTEN = 1u << 5,  /* CKPT_DUMP only: a delta is stored flattened with its
                                     * chain into a full image, so that the chain can go */
};

/* State of a job's checkpointing, as ompi-ps and ompi-checkpoint --status show it. */
typedef enum {
    CRMPI_SNAPC_IDLE,       /* no checkpoint in progress */
    CRMPI_SNAPC_DRAINING,   /* bookmarks exchanged, messages draining */
    CRMPI_SNAPC_SUSPENDING, /* transports being released */
    CRMPI_SNAPC_DUMPING,    /* CRIU writing images */
    CRMPI_SNAPC_STORING,    /* FileM moving images to stable storage; the job runs */
    CRMPI_SNAPC_STOPPED,    /* --stop: committed, the ranks stopped until SIGCONT */
} crmpi_snapc_state_t;

/** "draining", ... for messages and ompi-ps. */
const char *crmpi_snapc_state_name(crmpi_snapc_state_t state);

/*
 * Bookmarks on the wire (CKPT_BOOKMARKS up, CKPT_EXPECT down): u32 n, then n x (u32 peer,
 * u32 messages), the same for both directions.
 */
/** Append `count` bookmarks to `buf`. */
void crmpi_snapc_marks_put(crmpi_buf_t *buf, const crmpi_snapc_bookmark_t *marks, size_t count);
/**
 * Read the bookmarks that make up the rest of `buf`. Every peer must be below `np`.
 * @param marks_out  malloc'ed array (caller frees), *count_out entries; set on CRMPI_OK
 * @return CRMPI_OK, CRMPI_ERR_PROTO (malformed, or a peer outside the job) or
 *         CRMPI_ERR_OUT_OF_RESOURCE
 */
int crmpi_snapc_marks_get(crmpi_buf_t *buf, uint32_t np, crmpi_snapc_bookmark_t **marks_out,
                          size_t *count_out);

/*
 * App coordinator (libmpi: snapc_app.c)
 */
/** At the end of MPI_Init: with ft_cr_enable and an agent, start the C/R thread. */
int crmpi_snapc_app_init(void);
/** At the start of MPI_Finalize, without the library lock (a checkpoint in progress needs
 *  it): no checkpoint can start from here on; returns once the C/R thread has ended. */
void crmpi_snapc_app_finalize(void);

/*
 * Application checkpoints and callbacks (the MPI layer's MPIX_* calls, mpi-ext.h).
 *
 *   MPIX_Checkpoint (application thread)          C/R thread
 *   callbacks(PRE), backup()
 *   crmpi_snapc_app_request(backup file) --CR_APP_CKPT--> agent --> mpirun: once every
 *                                                   rank asked, CKPT_BEGIN{APP}
 *   crmpi_snapc_app_poll() (library lock           the checkpoint, as any other; the agent
 *   dropped between polls) until this rank's       stores the backup file, not an image.
 *   part is done                                    The rank's part is done at its
 *                                                   CKPT_CONTINUE: after the dumps, the copy
 *                                                   to storage going on in the background,
 *                                                   or after the commit (snapc_base_blocking).
 *                                                   A refusal, or an abort before every rank
 *                                                   went on, comes as CKPT_APP_DONE{status,
 *                                                   text} (a rank that already went on
 *   callbacks(CONTINUE)                             ignores it).
 *
 * Around a transparent checkpoint the C/R thread itself runs the PRE callbacks before it
 * takes the library lock, and CONTINUE or RESTART ones after it dropped it.
 */
typedef enum {
    CRMPI_SNAPC_CB_PRE_CHECKPOINT, /* before the rank's state is taken */
    CRMPI_SNAPC_CB_CONTINUE,       /* after a checkpoint, in the same process */
    CRMPI_SNAPC_CB_RESTART,        /* in a process restored from a transparent checkpoint */
    CRMPI_SNAPC_CB_NUM_KINDS
} crmpi_snapc_cb_kind_t;

/** A callback; `kind` says which of its registrations called it. */
typedef void (*crmpi_snapc_callback_fn_t)(int kind, void *arg);

/** Add `fn(kind, arg)` to the callbacks of `kind`, called in the order of registration.
 *  @return CRMPI_OK, CRMPI_ERR_BAD_PARAM, CRMPI_ERR_OUT_OF_RESOURCE */
int crmpi_snapc_app_callback_add(crmpi_snapc_cb_kind_t kind, crmpi_snapc_callback_fn_t fn,
                                 void *arg);
/** Call every callback of `kind`, in registration order. */
void crmpi_snapc_app_callbacks_run(crmpi_snapc_cb_kind_t kind);

/**
 * Was this process restarted: restored from a transparent checkpoint, or started again
 * from an application checkpoint (snapc_base_app_restart)?
 * @param seq_out  the sequence it was restarted from (set when true)
 * @param app_out  true for an application checkpoint's restart (set when true)
 */
bool crmpi_snapc_app_restarted(uint32_t *seq_out, bool *app_out);

/** Does the job run with --mca crs pheap? Then MPIX_Checkpoint checkpoints only when
 *  ompi-checkpoint asked for it (crmpi_snapc_app_wanted), and every checkpoint is one. */
bool crmpi_snapc_app_on_demand(void);
/** crs pheap: has mpirun said that a checkpoint waits for MPIX_Checkpoint (CKPT_APP_WANTED)?
 *  Cleared when an application checkpoint ends. */
bool crmpi_snapc_app_wanted(void);

/** Is the C/R thread running (the job runs with --with-ft cr)? */
bool crmpi_snapc_app_enabled(void);

/**
 * Ask for an application checkpoint of the whole job, this rank's part being the backup
 * file `backup_path` (absolute). Every rank must ask; the checkpoint starts once all have.
 * @param ticket_out  for crmpi_snapc_app_poll
 * @return CRMPI_OK, CRMPI_ERR_NOT_SUPPORTED (no C/R thread), or the send's error
 */
int crmpi_snapc_app_request(const char *backup_path, uint64_t *ticket_out);

/**
 * Is this rank's part of the checkpoint asked for with `ticket` done?
 * @param committed_out  true when the snapshot was committed before the rank went on,
 *                       false when its copy to storage goes on in the background
 * @return CRMPI_ERR_RESOURCE_BUSY (not yet), CRMPI_OK (*seq_out is its sequence), or its
 *         error, with `why` (one line) saying why
 */
int crmpi_snapc_app_poll(uint64_t ticket, uint32_t *seq_out, bool *committed_out, char *why,
                         size_t why_len);

#endif /* CRMPI_SNAPC_H */
