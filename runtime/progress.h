/*
 * progress.h: the progress engine and the library lock (libmpi side).
 *
 * One lock guards every internal structure of libmpi. Blocking MPI
 * calls are loops of (lock, progress, test, unlock), so the C/R thread can take the lock
 * between two iterations while the application computes or waits.
 *
 * Progress functions are registered by layers (PML, BTLs) and called in registration
 * order by crmpi_progress(), always with the library lock held.
 */
#ifndef CRMPI_PROGRESS_H
#define CRMPI_PROGRESS_H

/** A layer's progress function: returns the number of events it completed (>= 0). */
typedef int (*crmpi_progress_fn_t)(void);

/** @return CRMPI_OK, CRMPI_ERR_EXISTS (already registered), CRMPI_ERR_OUT_OF_RESOURCE. */
int crmpi_progress_register(crmpi_progress_fn_t fn);
/** @return CRMPI_OK or CRMPI_ERR_NOT_FOUND. */
int crmpi_progress_unregister(crmpi_progress_fn_t fn);

/** Call every registered function once; returns the total events. Lock must be held. */
int crmpi_progress(void);

/** The library lock. Not recursive: an MPI call takes it once at entry. */
void crmpi_lock(void);
void crmpi_unlock(void);

#endif /* CRMPI_PROGRESS_H */
