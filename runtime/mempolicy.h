/*
 * mempolicy.h: memory policies of address ranges (mbind(2)), as a restart hands them to a
 * restored rank (docs/design.md, "Memory placement").
 *
 *   agent (crs: numa_maps recorded at checkpoint, nodes mapped onto the new layout)
 *      |  CKPT_RESTART: one entry "CRMPI_MEMPOLICY=<areas>" among the CRMPI_MCA_ entries
 *      v
 *      |  and "CRMPI_TASKPOLICY=<threads>" for threads whose own policy differs,
 *      |  and "CRMPI_HUGEPAGES=<areas>" for the ranges that were transparent huge pages
 *      v
 *   rank (snapc app, before INC's restart): mbind() over each of its own areas, and
 *        set_mempolicy() run by each listed thread (a signal makes it do so)
 *
 * Only the process an area belongs to can set its policy, and only a thread its own: Linux
 * has no call that changes another process's mappings' or another thread's policy, and
 * CRIU restores none. So the agent records them from /proc (numa_maps, per process and per
 * thread) and the restored rank sets them on itself.
 *
 * Text form (one line, areas separated by ','):
 *   <pid>:<start hex>-<end hex>:<mode>:<flags hex>:<node mask hex>
 * pid is the process's pid as it sees itself (getpid() in the rank's namespace), mode an
 * MPOL_* value of linux/mempolicy.h, flags its MPOL_F_STATIC_NODES/RELATIVE_NODES, and the
 * mask OS node numbers below CRMPI_MEMPOLICY_MAX_NODES. Ranks that know no such entry skip it:
 * it does not start with CRMPI_MCA_.
 *
 * Threads' text form: the signal that makes a thread set its policy, '/', then one entry per
 * thread, separated by ',':
 *   <pid>:<tid>:<mode>:<flags hex>:<node mask hex>
 * pid and tid as the rank sees them (getpid(), gettid()). The signal is one the rank's own
 * code does not otherwise use (crs_criu_numa_signal); while the threads take it, the rank's
 * handler replaces the application's, whose disposition is put back afterwards.
 *
 * Thread safety: the functions keep no state.
 */
#ifndef CRMPI_MEMPOLICY_H
#define CRMPI_MEMPOLICY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Names of the entries in the restart message. */
#define CRMPI_MEMPOLICY_ENV  "CRMPI_MEMPOLICY"
#define CRMPI_TASKPOLICY_ENV "CRMPI_TASKPOLICY"
#define CRMPI_HUGEPAGES_ENV  "CRMPI_HUGEPAGES"
/* Node numbers a mask can name. */
#define CRMPI_MEMPOLICY_MAX_NODES 64

/* One address range's policy. */
typedef struct crmpi_mempolicy_area {
    pid_t pid;      /* the process it belongs to, as that process sees its own pid */
    uint64_t start; /* first byte, page aligned */
    uint64_t end;   /* one past the last byte */
    int mode;       /* MPOL_DEFAULT, MPOL_BIND, ... */
    unsigned flags; /* MPOL_F_STATIC_NODES, MPOL_F_RELATIVE_NODES */
    uint64_t nodes; /* bit n: OS node n */
} crmpi_mempolicy_area_t;

/* One thread's own policy (set_mempolicy(2)). */
typedef struct crmpi_mempolicy_thread {
    pid_t pid;      /* its process, as that process sees its own pid */
    pid_t tid;      /* the thread, as its process sees it (gettid()) */
    int mode;       /* MPOL_DEFAULT, MPOL_BIND, ... */
    unsigned flags; /* MPOL_F_STATIC_NODES, MPOL_F_RELATIVE_NODES */
    uint64_t nodes; /* bit n: OS node n */
} crmpi_mempolicy_thread_t;

/**
 * The text form of `areas` (malloc'ed into *text_out; the caller frees).
 * @return CRMPI_OK or CRMPI_ERR_OUT_OF_RESOURCE
 */
int crmpi_mempolicy_format(const crmpi_mempolicy_area_t *areas, size_t num_areas, char **text_out);

/**
 * Parse the text form. @return CRMPI_OK (*areas_out malloc'ed, NULL when empty),
 * CRMPI_ERR_PROTO (malformed), CRMPI_ERR_OUT_OF_RESOURCE.
 */
int crmpi_mempolicy_parse(const char *text, crmpi_mempolicy_area_t **areas_out,
                          size_t *num_areas_out);

/**
 * Give each area of this process (pid == getpid()) its policy with mbind(2), without
 * moving pages (the agent placed them already). An area that cannot be given its policy
 * (gone since, a node not allowed here) is logged once as a warning and skipped.
 * @param applied_out  how many areas got their policy
 * @return CRMPI_OK (also when some were skipped)
 */
int crmpi_mempolicy_apply(const crmpi_mempolicy_area_t *areas, size_t num_areas,
                          size_t *applied_out);

/**
 * Make each area of this process (pid == getpid()) transparent huge pages again, with
 * madvise(MADV_COLLAPSE): the ranges that were huge pages at the checkpoint, which CRIU
 * restores as small pages (the areas' mode, flags and nodes are not used). An area the
 * kernel cannot collapse (no huge page free, THP disabled) is logged as a warning and keeps
 * its small pages.
 * @param collapsed_out  how many areas were collapsed
 * @return CRMPI_OK (also when some were skipped)
 */
int crmpi_mempolicy_collapse(const crmpi_mempolicy_area_t *areas, size_t num_areas,
                             size_t *collapsed_out);

/**
 * The threads' text form of `threads`, with `signo` (malloc'ed into *text_out).
 * @return CRMPI_OK or CRMPI_ERR_OUT_OF_RESOURCE
 */
int crmpi_mempolicy_threads_format(int signo, const crmpi_mempolicy_thread_t *threads,
                                   size_t num_threads, char **text_out);

/**
 * Parse the threads' text form. @return CRMPI_OK (*threads_out malloc'ed, NULL when none),
 * CRMPI_ERR_PROTO (malformed, or a signal that is not a real-time one),
 * CRMPI_ERR_OUT_OF_RESOURCE.
 */
int crmpi_mempolicy_threads_parse(const char *text, int *signo_out,
                                  crmpi_mempolicy_thread_t **threads_out, size_t *num_threads_out);

/**
 * Make each listed thread of this process (pid == getpid()) set its own policy: the
 * calling thread directly, every other one from a handler of `signo` sent to it alone
 * (tgkill). Waits up to a second for them; a thread that has the signal blocked, or whose
 * policy the kernel refuses, is logged as a warning and keeps the policy it has. The
 * signal's disposition is put back afterwards (a signal not taken by then is discarded).
 * @param applied_out  how many threads got their policy
 * @return CRMPI_OK (also when some were skipped), CRMPI_ERR_OUT_OF_RESOURCE
 */
int crmpi_mempolicy_threads_apply(int signo, const crmpi_mempolicy_thread_t *threads,
                                  size_t num_threads, size_t *applied_out);

#endif /* CRMPI_MEMPOLICY_H */
