/*
 * snapc.h: snapshot coordination, the contract between the three coordinators of a
 * checkpoint and the protocol they speak (DESIGN sections 4 and 5).
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
 *   all stored: manifest, commit (filem/), tool gets the handle
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

#include <stdint.h>

/* Flags of CKPT_BEGIN (ompi-checkpoint's options). */
enum {
    CRMPI_SNAPC_TERM = 1u << 0,   /* --term: the job ends after the dump */
    CRMPI_SNAPC_NOWAIT = 1u << 2, /* --nowait: the tool leaves once the checkpoint started */
};

/* State of a job's checkpointing, as ompi-ps and ompi-checkpoint --status show it. */
typedef enum {
    CRMPI_SNAPC_IDLE,       /* no checkpoint in progress */
    CRMPI_SNAPC_DRAINING,   /* bookmarks exchanged, messages draining */
    CRMPI_SNAPC_SUSPENDING, /* transports being released */
    CRMPI_SNAPC_DUMPING,    /* CRIU writing images */
    CRMPI_SNAPC_STORING,    /* FileM moving images to stable storage; the job runs */
} crmpi_snapc_state_t;

/** "draining", ... for messages and ompi-ps. */
const char *crmpi_snapc_state_name(crmpi_snapc_state_t state);

/*
 * App coordinator (libmpi: snapc_app.c)
 */
/** At the end of MPI_Init: with ft_cr_enable and an agent, start the C/R thread. */
int crmpi_snapc_app_init(void);
/** At the start of MPI_Finalize, without the library lock (a checkpoint in progress needs
 *  it): no checkpoint can start from here on; returns once the C/R thread has ended. */
void crmpi_snapc_app_finalize(void);

#endif /* CRMPI_SNAPC_H */
