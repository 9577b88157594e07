/*
 * mpi-ext.h: crmpi's extensions to MPI, declared apart from mpi.h as Open MPI declares
 * its own. Include it after mpi.h; test the feature macro before using a call, so that a
 * program builds with other MPI libraries too:
 *
 *   #include <mpi.h>
 *   #if __has_include(<mpi-ext.h>)
 *   #include <mpi-ext.h>
 *   #endif
 *   #ifdef CRMPI_HAVE_MPIX_CHECKPOINT
 *   ...
 *   #endif
 *
 * Application-level checkpoints (MPIX_Checkpoint(3), MPIX_Restart_status(3),
 * MPIX_CR_register_callback(3)): each rank saves its persistent heap (libcrmpi-pheap,
 * crmpi/pheap.h) with backup(), and the job's snapshot stores every rank's backup file,
 * with the checksums, atomic commit, sequence numbers and retention of any checkpoint of
 * the job. ompi-restart starts such a snapshot's program again, each rank finding its own
 * backup file where it wrote it; the rank count is the snapshot's, the layout may change.
 */
#ifndef CRMPI_MPI_EXT_H
#define CRMPI_MPI_EXT_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The calls below exist (application-level checkpoint/restart). */
#define CRMPI_HAVE_MPIX_CHECKPOINT 1

/* What MPIX_Checkpoint did. */
typedef struct MPIX_Checkpoint_info {
    int sequence;  /* the sequence of the job's snapshot this checkpoint wrote */
    int restarted; /* always 0: MPIX_Checkpoint returns only in the process that took the
                    * checkpoint. A restart starts the program again from main(); ask
                    * MPIX_Restart_status there. */
    int committed; /* 1: the snapshot was committed before the call returned
                    * (snapc_base_blocking); 0: every agent holds its rank's backup, and
                    * the copy to storage and the commit go on in the background */
} MPIX_Checkpoint_info;

/* When a callback is called (MPIX_CR_register_callback). */
enum {
    MPIX_CR_PRE_CHECKPOINT = 0, /* before the rank's state is taken */
    MPIX_CR_CONTINUE = 1,       /* after a checkpoint, in the process that took it */
    MPIX_CR_RESTART = 2,        /* in a process restored from a transparent checkpoint */
};

/* A checkpoint/restart callback: `kind` is the MPIX_CR_* it was registered for. */
typedef void MPIX_CR_callback_fn(int kind, void *arg);

/** A coordinated application checkpoint; collective over `comm`, which must hold every
 *  rank of the job. @param info  may be NULL. */
int MPIX_Checkpoint(MPI_Comm comm, MPIX_Checkpoint_info *info);
int PMPIX_Checkpoint(MPI_Comm comm, MPIX_Checkpoint_info *info);

/** Was this process restarted, and from which sequence? Either pointer may be NULL. */
int MPIX_Restart_status(int *restarted_out, int *sequence_out);
int PMPIX_Restart_status(int *restarted_out, int *sequence_out);

/** Call fn(kind, arg) at each checkpoint event of `kind`, in registration order. */
int MPIX_CR_register_callback(int kind, MPIX_CR_callback_fn *fn, void *arg);
int PMPIX_CR_register_callback(int kind, MPIX_CR_callback_fn *fn, void *arg);

#ifdef __cplusplus
}
#endif

#endif /* CRMPI_MPI_EXT_H */
