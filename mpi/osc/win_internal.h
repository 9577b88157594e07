/*
 * win_internal.h: what the window calls of mpi/osc/ share (MPI-3.1 chapter 11): the
 * MPI_Win object, its error handler, and the epoch bookkeeping that lets the calls raise
 * MPI_ERR_RMA_SYNC.
 *
 *   MPI_Win_create/free/get_attr/...  win.c       -- the object, its own communicator
 *   MPI_Win_allocate_shared/...       win_shared.c -- the shared segment, the query
 *   MPI_Put/Get/Accumulate/...        win_rma.c   -- arguments, ranges, the basic type
 *   MPI_Win_fence/lock/post/...       win_sync.c  -- which epochs are open
 *        |  crmpi_osc_*
 *   osc (osc/osc.h)                               -- the protocol over the PML
 *
 * Threading: library lock held; crmpi_win_raise releases it, as
 * crmpi_mpi_errhandler_invoke does.
 */
#ifndef CRMPI_WIN_INTERNAL_H
#define CRMPI_WIN_INTERNAL_H

#include <stdbool.h>

#include "mpi_internal.h"
#include "osc.h"

struct crmpi_win_s {
    MPI_Comm comm;                  /* the window's own communicator: a copy of the
                                       creator's group with a context id of its own */
    crmpi_osc_win_t *osc;           /* the protocol's state */
    char name[MPI_MAX_OBJECT_NAME]; /* MPI_Win_get_name; NUL-terminated */
    MPI_Errhandler errhandler;      /* MPI_ERRORS_ARE_FATAL by default (MPI-3.1 8.3) */
    int flavor;                     /* MPI_WIN_FLAVOR_CREATE, _ALLOCATE, _DYNAMIC, _SHARED */
    void *base;                     /* this process's memory (MPI_BOTTOM when dynamic) */
    MPI_Aint size;                  /* its bytes */
    MPI_Aint disp_unit;             /* its displacement unit (an MPI_Aint since
                                       MPI_Win_create_c, MPI-4.0 section 12.2.1) */
    int disp_unit_attr;             /* MPI_WIN_DISP_UNIT's value, an int in C (section
                                       12.2.6): disp_unit when it fits (win_attr.c) */
    bool owns_base;                 /* MPI_Win_allocate's memory: freed with the window */
    struct crmpi_win_shm_s *shm;    /* MPI_Win_allocate_shared's segment (win_shared.c),
                                       unmapped with the window; NULL for other flavors */
    struct crmpi_win_attr_s *attrs; /* cached attributes (win_attr.c), in the order set */
    struct crmpi_info_s *info;      /* hints of the creation or MPI_Win_set_info, as given
                                       (none changes what crmpi does); NULL: none */
    /* Epochs (MPI-3.1 section 11.5) */
    bool fence;    /* a fence opened an epoch that the next fence closes */
    bool lock_all; /* MPI_Win_lock_all holds every target */
    int *locks;    /* per target: the lock type held, 0 when none */
    bool *nocheck; /* per target: locked with MPI_MODE_NOCHECK (no lock
                      message went; unlock only flushes) */
    int num_locks; /* targets with a lock held */
    bool *started; /* per target: in the MPI_Win_start group */
    bool access;   /* an access epoch of MPI_Win_start is open */
    bool exposure; /* an exposure epoch of MPI_Win_post is open */
};

/**
 * Raise `errcode` on the window (its handler: fatal, return, or the application's
 * function, called with the lock released). @return errcode (or what a handler made it)
 */
int crmpi_win_raise(MPI_Win win, int errcode, const char *func_name, const char *detail);

/**
 * The body of the creation calls (win.c): collective over comm; `base` is unused for
 * MPI_WIN_FLAVOR_ALLOCATE and _SHARED, `shm_noncontig` used for _SHARED only (the info key
 * alloc_shared_noncontig). @return MPI_SUCCESS, or the error raised on comm
 */
int crmpi_win_create(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                     int flavor, bool shm_noncontig, MPI_Win *win_out, const char *func_name);

/**
 * MPI_Win_allocate_shared's memory (win_shared.c; collective over comm, which the caller
 * checked is on one node): the segment, each rank's part at its offset, mapped in every
 * rank. @return CRMPI_OK with *shm_out and this rank's part in *base_out;
 * CRMPI_ERR_OUT_OF_RESOURCE, CRMPI_ERR_IO or the PML's error (a rank's own failure is
 * logged; every rank fails when one does)
 */
int crmpi_win_shm_alloc(MPI_Comm comm, MPI_Aint size, MPI_Aint disp_unit, bool noncontig,
                        struct crmpi_win_shm_s **shm_out, void **base_out);
/** Unmap the segment (the memory goes with the last rank's mapping). */
void crmpi_win_shm_free(struct crmpi_win_shm_s *shm);

/** Delete every attribute of win through its delete callback (MPI_Win_free; callbacks
 *  run unlocked). @return MPI_SUCCESS or the first error a callback returned (the rest
 *  stay set) */
int crmpi_win_attr_delete_all(MPI_Win win);

/** The MPI error class of a CRMPI_ERR_* status of osc. */
int crmpi_win_error_class(int rc);

/** May an operation go to `target` (an access epoch covers it)? */
static inline bool crmpi_win_may_access(MPI_Win win, int target)
{
    return win->fence || win->lock_all || win->locks[target] != 0 ||
           (win->access && win->started[target]);
}

#endif /* CRMPI_WIN_INTERNAL_H */
