/*
 * fault.h: named fault-injection points, so that error paths run in
 * tests and CI, not only in production.
 *
 *   code:   if (crmpi_fault_hit("filem_copy_enospc")) { errno = ENOSPC; goto err_write; }
 *   arming: CRMPI_FAULT=filem_copy_enospc,snapc_commit_crash:2   (environment), or the
 *           parameter runtime_fault_inject (--mca runtime_fault_inject ..., which mpirun
 *           passes to agents and ranks as CRMPI_MCA_runtime_fault_inject); both lists apply.
 *
 * Each entry of the list is "name" (the point fires every time it is reached) or "name:N"
 * (it fires only the N-th time this process reaches it, counting from 1). A point that
 * fires writes one warning line ("fault injected: <name>"), so a test log shows it.
 *
 * Adding a point (any layer): add one line {name, description} to fault_points[] in
 * fault.c, named "<framework>_<what>" (e.g. "crs_dump_fail"), and call crmpi_fault_hit()
 * with that name where the fault should happen; then write the test that arms it. Naming
 * a point that is not in the table is a programming error: crmpi_fault_hit() logs it and
 * returns false, and an armed name that is not in the table is warned about once, so that
 * a typo in CRMPI_FAULT cannot make a fault test pass vacuously.
 *
 * Thread safety: every function may be called from any thread; the list is read once, on
 * the first crmpi_fault_hit() (or by crmpi_fault_configure()).
 */
#ifndef CRMPI_FAULT_H
#define CRMPI_FAULT_H

#include <stdbool.h>
#include <stddef.h>

/* Exit status of a process ended by a "crash" fault point (crmpi_fault_crash). */
#define CRMPI_FAULT_EXIT_STATUS 86

/* One known fault point. */
typedef struct crmpi_fault_point {
    const char *name;        /* "filem_copy_enospc" */
    const char *description; /* what firing it simulates, for crmpi_info and the docs */
} crmpi_fault_point_t;

/** Every known fault point, terminated by an entry whose name is NULL. */
extern const crmpi_fault_point_t crmpi_fault_points[];

/**
 * Should the fault named `name` happen now? Counts this hit of the point.
 * @return true when the point is armed and this hit is the one to fire (logged as a warning)
 */
bool crmpi_fault_hit(const char *name);

/**
 * A crash point: when `name` fires, end the process at once with _exit(2) and
 * CRMPI_FAULT_EXIT_STATUS, as a power cut or kill -9 would (no atexit handler, no flush).
 */
void crmpi_fault_crash(const char *name);

/**
 * A pause point: when `name` fires, hold the calling thread, as a slow step would. The hold
 * lasts until the file named by CRMPI_FAULT_RELEASE exists when that variable is set (a
 * test creates the file once it has seen what it waits for: a state, not a time), and
 * CRMPI_FAULT_PAUSE_S seconds otherwise.
 * @return true when the point fired (and the hold is over)
 */
bool crmpi_fault_pause(const char *name);

/* How long a pause point holds when no release file is named. */
#define CRMPI_FAULT_PAUSE_S 3

/**
 * Replace the armed list by `spec` (same syntax as CRMPI_FAULT; NULL or "" disarms every
 * point) and reset every hit count. For tests; the environment and parameter are not read.
 * @return CRMPI_OK, CRMPI_ERR_BAD_PARAM (logged: a malformed entry; nothing is armed),
 *         CRMPI_ERR_OUT_OF_RESOURCE
 */
int crmpi_fault_configure(const char *spec);

/** Forget the armed list and the counts; the next hit reads the environment again. */
void crmpi_fault_reset(void);

#endif /* CRMPI_FAULT_H */
