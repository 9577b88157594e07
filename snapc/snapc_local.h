/*
 * snapc_local.h: the local coordinator (snapc.h), used by crmpi-agent's event loop.
 *
 *   mpirun --CKPT_*--> agent: crmpi_snapc_local_from_hnp  --> the rank (as is), or here:
 *                                                             CKPT_DUMP  (the CRS dumps the
 *                                                               rank into node-local storage)
 *                                                             CKPT_STORE (FileM copies that
 *                                                               to the global snapshot)
 *                                                             --stop: SIGSTOP after the dump,
 *                                                               SIGCONT at CKPT_CONTINUE
 *   rank   --CKPT_*--> agent: crmpi_snapc_local_from_rank --> mpirun (as is)
 *
 * The rank can take part only between its CR_START and CR_STOP (the span of its C/R
 * thread); outside it, the agent answers CKPT_BEGIN itself with an error that says why.
 * Node-local images: <local_base>/ckpt/<seq>/rank.<r>/ (rank.json, criu/), removed once stored
 * or aborted. Single-threaded: called from the agent's event loop; the dump and the copy
 * block it (the rank is frozen during the dump; it runs during the copy).
 */
#ifndef CRMPI_SNAPC_LOCAL_H
#define CRMPI_SNAPC_LOCAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl.h"

/* What a dump reports back to mpirun. */
typedef struct crmpi_snapc_dump_result {
    uint64_t image_bytes; /* bytes written */
    double dump_seconds;  /* the CRS's own measure */
    char error[512];      /* on failure: why, for the user (CRIU's own error lines) */
} crmpi_snapc_dump_result_t;

typedef struct crmpi_snapc_local crmpi_snapc_local_t;

/**
 * Dump the rank's namespace (init `init_pid`) into the existing, empty directory `dir`,
 * leaving it running. @return CRMPI_OK or an error, with result->error filled.
 */
typedef int (*crmpi_snapc_dump_fn_t)(pid_t init_pid, const char *dir,
                                     crmpi_snapc_dump_result_t *result);

struct crmpi_snapc_local {
    int hnp_fd;                 /* to mpirun */
    int rank_fd;                /* to the rank */
    int rank;                   /* MPI_COMM_WORLD rank */
    pid_t init_pid;             /* the rank's namespace's init */
    const char *local_base;     /* node-local directory for images (the session dir) */
    bool rank_ready;            /* the rank's C/R thread runs (CR_START seen) */
    bool rank_stopped;          /* CR_STOP seen: no checkpoint any more */
    bool in_checkpoint;         /* the rank is inside checkpoint `seq` */
    bool images_pending;        /* dumped, not yet stored or aborted: the agent must stay */
    bool rank_frozen;           /* --stop: the rank's namespace is stopped (SIGSTOP) */
    uint32_t seq;               /* the checkpoint in progress */
    crmpi_snapc_dump_fn_t dump; /* NULL: no checkpointer (not built, or cannot run) */
    char drain_stats[256];      /* the rank's CKPT_DRAINED figures, as JSON, for rank.json */
};

/** A CKPT_* message from mpirun (the caller frees it). */
void crmpi_snapc_local_from_hnp(crmpi_snapc_local_t *local, crmpi_ctl_msg_t *msg);

/** Continue the rank's namespace if a --stop checkpoint stopped it (before an ending
 *  signal is passed to it, which a stopped process would not act on). */
void crmpi_snapc_local_thaw(crmpi_snapc_local_t *local);

/** A CKPT_* message from the rank, passed up (the caller frees it). */
void crmpi_snapc_local_from_rank(crmpi_snapc_local_t *local, crmpi_ctl_msg_t *msg);

#endif /* CRMPI_SNAPC_LOCAL_H */
