/*
 * crs_criu_int.h: internals shared by the files of the criu component (crs.h): the record
 * written beside the image (crs_criu_meta.c) and the walk over a namespace's threads.
 */
#ifndef CRS_CRIU_INT_H
#define CRS_CRIU_INT_H

#include <sched.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#include "crs.h"

/* The component's operations (crs.h documents them as crmpi_crs_ops_t slots). */
int crs_criu_checkpoint(const crmpi_crs_ckpt_opts_t *opts, crmpi_crs_ckpt_result_t *result_out);
int crs_criu_restart(const crmpi_crs_restart_opts_t *opts, pid_t *init_pid_out);
int crs_criu_recorded_key(const char *images_dir, int rank_fd, char *key_out, size_t key_len);

/**
 * Log `fmt` once as an error and copy it into errbuf (when not NULL). @return rc
 */
int crs_criu_fail(char *errbuf, size_t errbuf_len, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* crs_criu_flatten.c: the flatten slot (crs.h). */
int crs_criu_flatten(const char *images_dir, const char *const *parents, const char *out_dir,
                     uint64_t *bytes_out, char *errbuf, size_t errbuf_len);

/**
 * Whether a hardware breakpoint set through ptrace stops a task on this machine
 * (crs_criu_breakpoints.c). @return 1 (it does, or this is not x86), 0 (it does not: CRIU
 * would hang), CRMPI_ERR_OUT_OF_RESOURCE (no child could be made).
 */
/* crs_criu_track.c: dirty-page tracking (crs.h's track slots). collect() registers what
 * was mapped since the last call, writes the ranges written since then into `map_path`
 * (CRIU's --dirty-map format: u64 start, end pairs) and write-protects them again. */
/* crs_criu_watch.c: while CRIU dumps, a process of the namespace that ends gets CRIU
 * killed (it would wait for it forever). */
typedef struct crs_criu_watch crs_criu_watch_t;
/** Watch init_pid and its descendants. @return CRMPI_OK, CRMPI_ERR_NOT_FOUND (no such
 * process), CRMPI_ERR_OUT_OF_RESOURCE */
int crs_criu_watch_start(pid_t init_pid, crs_criu_watch_t **watch_out);
/** End the watch (NULL is ignored). @return whether a watched process ended meanwhile */
bool crs_criu_watch_stop(crs_criu_watch_t *watch);

int crs_criu_track_open(pid_t pid, int uffd, crmpi_crs_track_t **track_out);
int crs_criu_track_collect(crmpi_crs_track_t *track, const char *map_path, uint64_t *pages_out);
void crs_criu_track_close(crmpi_crs_track_t *track);

int crs_criu_breakpoints_fire(void);

/**
 * Once per process, before the first run of criu: following crs_criu_breakpoints, tell CRIU
 * not to use hardware breakpoints when they do not fire here (CRIU_FAULT in the environment
 * criu inherits). Leaves a CRIU_FAULT the user set alone.
 */
void crs_criu_breakpoints_setup(void);

/**
 * CRIU's log at `log_path` says that its parasite found "proc.crtools" in the init's working
 * directory: another dump was there at the same moment (crs_criu.c). @return 1 or 0.
 */
int crs_criu_log_says_collision(const char *log_path);

/* Name of the record this component writes beside the image, inside the images dir. */
#define CRS_CRIU_META_FILE "crs-criu.meta"
/* First line of crs-criu.meta: format name and version. Unknown later lines are ignored. */
#define CRS_CRIU_META_MAGIC   "crmpi-crs-criu"
#define CRS_CRIU_META_VERSION 1

/* One thread's recorded placement. */
typedef struct crs_criu_thread_rec {
    pid_t ns_pid;          /* its process's pid inside the rank's namespace */
    pid_t ns_tid;          /* its tid inside the rank's namespace */
    cpu_set_t cpus;        /* sched_getaffinity at checkpoint */
    char mems[64];         /* Mems_allowed_list at checkpoint (informational) */
    int policy_mode;       /* its own policy's MPOL_*; -1: one we do not know; -2: none
                            * recorded (crs_criu_numa 0, or an older record) */
    unsigned policy_flags; /* MPOL_F_STATIC_NODES / MPOL_F_RELATIVE_NODES */
    uint64_t policy_nodes; /* the policy's nodes (OS indices) */
} crs_criu_thread_rec_t;

/* policy_mode of a thread whose record has no policy. */
#define CRS_CRIU_NO_POLICY (-2)

/* The whole record. */
/* A regular file the rank's tree had open for writing at the checkpoint: CRIU's restore
 * refuses a file whose size changed, and the application expects it as it was then. A
 * file mapped shared and writable is more: its bytes are the process's memory, which CRIU
 * does not dump (it maps the file again by name), so the dump keeps a copy of the file
 * ("mapped.<index>" in the images directory) and the restart puts it back. So does a file
 * open for writing when crs_criu_file_content is on. */
typedef enum {
    CRS_CRIU_FILE_SIZE,    /* open for writing: its size is brought back ("wfile") */
    CRS_CRIU_FILE_CONTENT, /* open for writing, crs_criu_file_content: copied ("cfile") */
    CRS_CRIU_FILE_MAPPED,  /* mapped shared and writable: copied ("mfile") */
} crs_criu_file_kind_t;

typedef struct crs_criu_file_rec {
    uint64_t size;             /* its size at the checkpoint */
    char *path;                /* absolute, as /proc/<pid>/fd/<n> or /proc/<pid>/maps named it
                                * (malloc'ed) */
    crs_criu_file_kind_t kind; /* the most it is kept as (a mapped file may be written too) */
} crs_criu_file_rec_t;

/* The copy of file `index` (kind CONTENT or MAPPED) in the images directory. */
#define CRS_CRIU_MAPPED_FMT "mapped.%zu"

/* Nodes a record can name (OS indices below this): the mempolicy.h limit. */
#define CRS_CRIU_NUMA_MAX_NODES 64

/* A NUMA node of the checkpoint's machine ("numanode" line). */
typedef struct crs_criu_node_rec {
    int os_index; /* the kernel's node number (numa_maps, mbind) */
    int logical;  /* hwloc's logical index */
    int local;    /* 1: its CPUs intersect the rank's binding ("cpuset") */
} crs_criu_node_rec_t;

/* Consecutive pages of an area on one node ("pages" line). */
typedef struct crs_criu_page_run {
    int32_t node;   /* OS node, -1: not resident */
    uint32_t count; /* pages, from where the previous run ended */
} crs_criu_page_run_t;

/* Most runs recorded for one area; an area more fragmented than this gets none. */
#define CRS_CRIU_NUMA_MAX_RUNS 65536

/* A memory area of a process of the rank ("vma" line): from /proc/<pid>/numa_maps, for
 * every private writable mapping and every mapping with a policy of its own. */
typedef struct crs_criu_vma_rec {
    pid_t ns_pid;                            /* its process, by pid inside the namespace */
    uint64_t start;                          /* first byte */
    uint64_t end;                            /* one past the last byte */
    int mode;                                /* MPOL_* of its policy; -1: one we do not know */
    unsigned flags;                          /* MPOL_F_STATIC_NODES / MPOL_F_RELATIVE_NODES */
    uint64_t policy_nodes;                   /* the policy's nodes (OS indices) */
    uint64_t pages[CRS_CRIU_NUMA_MAX_NODES]; /* resident pages on each OS node */
    crs_criu_page_run_t *runs;               /* each page's node from start (malloc'ed), for
                                              * an area whose pages were on several nodes
                                              * and that has no interleave policy; else NULL */
    size_t num_runs;                         /* entries in runs */
    uint64_t *thp;  /* ranges in transparent huge pages ("thp" line): start, end, start,
                     * end... (malloc'ed), which CRIU restores as small pages; or NULL */
    size_t num_thp; /* ranges in thp (2 numbers each) */
    int hugetlb;    /* a hugetlbfs mapping (collection only, not recorded) */
} crs_criu_vma_rec_t;

typedef struct crs_criu_meta {
    cpu_set_t cpuset;                               /* the init's mask: what positions refer to */
    int have_fd[CRMPI_CRS_NUM_FDS];                 /* an "fd" line exists for this number */
    char key[CRMPI_CRS_NUM_FDS][CRMPI_CRS_KEY_MAX]; /* its inherit key */
    crs_criu_thread_rec_t *threads;                 /* malloc'ed, num_threads entries */
    size_t num_threads;                             /* entries in threads */
    crs_criu_file_rec_t *files;                     /* malloc'ed, num_files entries */
    size_t num_files;                               /* entries in files */
    crs_criu_node_rec_t *nodes;                     /* malloc'ed, num_nodes entries */
    size_t num_nodes;                               /* entries in nodes (0: none recorded) */
    crs_criu_vma_rec_t *vmas;                       /* malloc'ed, num_vmas entries */
    size_t num_vmas;                                /* entries in vmas */
    bool copy_written;                              /* collect: crs_criu_file_content */
} crs_criu_meta_t;

/**
 * Read the init's descriptors and every thread's placement from /proc into meta_out.
 * The meta functions do not log: their callers report, with errno kept.
 * @return CRMPI_OK, CRMPI_ERR_NOT_FOUND (the init is gone), CRMPI_ERR_OUT_OF_RESOURCE.
 */
int crs_criu_meta_collect(pid_t init_pid, crs_criu_meta_t *meta_out);
/** Write meta into dirfd/crs-criu.meta (temporary name, fsync, rename). */
int crs_criu_meta_write(int dirfd, const crs_criu_meta_t *meta);
/** Parse dirfd/crs-criu.meta. @return CRMPI_OK, CRMPI_ERR_IO, CRMPI_ERR_PROTO. */
int crs_criu_meta_read(int dirfd, crs_criu_meta_t *meta_out);
void crs_criu_meta_free(crs_criu_meta_t *meta);

/**
 * Bring every file the record lists back to its size at the checkpoint, before CRIU checks
 * them: one that grew since is cut back (what was written after the checkpoint will be
 * written again by the restarted rank; said in a warning); one that is gone or shorter
 * cannot be, and the restart is refused.
 * @return CRMPI_OK, or CRMPI_ERR_NOT_FOUND / CRMPI_ERR_IO with `errbuf` saying which file
 */
int crs_criu_files_restore(const crs_criu_meta_t *meta, char *errbuf, size_t errbuf_len);

/**
 * Copy every mapped file of the record into the images directory (dirfd), holes kept, each
 * fsynced. Called while CRIU holds the rank's tasks frozen, so that the copy is the memory
 * of the dump. @return CRMPI_OK, or CRMPI_ERR_IO with `errbuf` saying which file
 */
int crs_criu_mapped_save(const crs_criu_meta_t *meta, int dirfd, char *errbuf, size_t errbuf_len);

/**
 * Put every mapped file of the record back at its path from the images directory (dirfd):
 * a new file renamed over the name, its directory made if it is gone.
 * @return CRMPI_OK, or CRMPI_ERR_IO / CRMPI_ERR_NOT_FOUND with `errbuf` saying which file
 */
int crs_criu_mapped_restore(const crs_criu_meta_t *meta, int dirfd, char *errbuf,
                            size_t errbuf_len);

/**
 * Give every thread under the (restored, stopped) init its recorded mask, remapped onto
 * `new_cpuset` when that is not NULL. Threads without a record keep their mask (logged).
 * @return CRMPI_OK or CRMPI_ERR_IO (a sched_setaffinity failed; logged).
 */
int crs_criu_affinity_apply(const crs_criu_meta_t *meta, pid_t init_pid,
                            const cpu_set_t *new_cpuset);

/**
 * Position-preserving remap (crs.h, "Affinity"): each CPU of `cpus` that is the i-th CPU of
 * `old_set` becomes the (i mod |new_set|)-th CPU of `new_set`; when none of `cpus` is in
 * `old_set`, the result is the whole new set.
 */
void crs_criu_remap(const cpu_set_t *cpus, const cpu_set_t *old_set, const cpu_set_t *new_set,
                    cpu_set_t *out);

/* Called for each thread found by crs_criu_tree_walk (host ids). */
typedef int (*crs_criu_thread_fn_t)(pid_t host_pid, pid_t host_tid, void *arg);
/** Visit every thread of `host_pid` and, through /proc's children lists, of its descendants. */
int crs_criu_tree_walk(pid_t host_pid, crs_criu_thread_fn_t fn, void *arg, int depth);
/** The last number of a status line ("NStgid:") of a thread, or -1. */
long crs_criu_status_last(pid_t host_pid, pid_t host_tid, const char *field, char *text,
                          size_t text_len);
/** The record of restored thread `host_tid` of `host_pid`, found by its ids inside the
 * namespace (`*ns_pid`, `*ns_tid`, set either way), or NULL. */
const crs_criu_thread_rec_t *crs_criu_meta_thread_of(const crs_criu_meta_t *meta, pid_t host_pid,
                                                     pid_t host_tid, pid_t *ns_pid, pid_t *ns_tid);

/*
 * Memory placement (crs_criu_numa.c; docs/design.md, "Memory placement"). At checkpoint,
 * the machine's NUMA nodes and every process's areas (policy, pages per node) go into the
 * record; at restart, recorded nodes are mapped onto the new binding's, the restorer
 * prefers the node that held most pages, pages are moved back at pre-resume, and the
 * policies go to the rank, which alone can set them.
 */

/** Record the NUMA nodes of this machine (crs_criu_topology) and which `binding` reaches. */
int crs_criu_numa_collect_nodes(const cpu_set_t *binding, crs_criu_meta_t *meta);
/**
 * Record the areas of process `host_pid` (`ns_pid` inside the namespace). `leader` is the
 * record of its main thread, with its own policy: numa_maps shows that policy for every area
 * that has none of its own, so an area showing it is recorded without one.
 */
int crs_criu_numa_collect_process(pid_t host_pid, pid_t ns_pid, const crs_criu_thread_rec_t *leader,
                                  crs_criu_meta_t *meta);
/**
 * Record thread `host_tid`'s own policy into `rec` (policy_mode stays CRS_CRIU_NO_POLICY when
 * it cannot be read): the policy its numa_maps shows for the process's first mapping, the
 * program's own first page, which nothing binds.
 */
void crs_criu_numa_collect_thread(pid_t host_pid, pid_t host_tid, crs_criu_thread_rec_t *rec);

/**
 * Record "pages" runs for every area of `meta` from `first` on whose pages are on several
 * nodes without an interleave policy (move_pages(2) asked for each page's node). Areas of
 * more than CRS_CRIU_NUMA_MAX_RUNS runs get none.
 */
int crs_criu_numa_collect_runs(pid_t host_pid, crs_criu_meta_t *meta, size_t first);
/** Add the runs of a "pages" line (text "<node>x<count>,...", node "-" for none). */
int crs_criu_numa_runs_parse(const char *text, crs_criu_vma_rec_t *vma);
/**
 * Record, for every area of `meta` from `first` on (but hugetlbfs ones), the ranges its
 * transparent huge pages cover (PAGEMAP_SCAN's PAGE_IS_HUGE). CRIU restores them as small
 * pages: a memory-bound rank then loses to TLB misses what it had before the checkpoint.
 */
int crs_criu_numa_collect_thp(pid_t host_pid, crs_criu_meta_t *meta, size_t first);
/** Add the ranges of a "thp" line ("<start hex>-<end hex>,...") to its area. */
int crs_criu_numa_thp_parse(const char *text, crs_criu_vma_rec_t *vma);

/**
 * Parse a policy as numa_maps shows it ("bind:0-1", "prefer (many):1", "interleave=static:0")
 * or as the record writes it (the same, "prefer-many" for "prefer (many)").
 * @return CRMPI_OK, CRMPI_ERR_BAD_PARAM (not a policy), CRMPI_ERR_NOT_SUPPORTED (a mode this
 *         code does not know: recorded as such, never re-applied)
 */
int crs_criu_numa_policy_parse(const char *text, int *mode_out, unsigned *flags_out,
                               uint64_t *nodes_out);
/** The record's form of a policy: no spaces ("bind=static:0-1", "default"). */
void crs_criu_numa_policy_format(int mode, unsigned flags, uint64_t nodes, char *text, size_t len);

/** Where a restart puts what the checkpoint had on each node. */
typedef struct crs_criu_numa_plan {
    int to_os[CRS_CRIU_NUMA_MAX_NODES]; /* recorded OS node -> OS node here (-1: unknown) */
    int home;                           /* the node here for the restorer (most pages), or -1 */
    int changed;                        /* some node maps to another number */
    int home_only;                      /* the binding's CPUs are on home alone: the
                                         * restorer's first touch lands there anyway */
} crs_criu_numa_plan_t;

/**
 * Position-preserving node map: the i-th recorded node local to the old binding becomes the
 * i-th (modulo their count) local to the new one; the j-th of the others the j-th of the
 * new others (or of the new local ones when there are none). `map_out[i]` is an index into
 * `new_nodes` for old_nodes[i]. Nodes are in hwloc's logical order.
 */
void crs_criu_numa_map(const crs_criu_node_rec_t *old_nodes, size_t num_old,
                       const crs_criu_node_rec_t *new_nodes, size_t num_new, int *map_out);

/**
 * The plan for restoring `meta` with the rank bound to `binding` on this machine
 * (crs_criu_topology); each node that changes number is said once in the log (a warning when
 * this machine has no node of that number).
 */
int crs_criu_numa_plan(const crs_criu_meta_t *meta, const cpu_set_t *binding,
                       crs_criu_numa_plan_t *plan_out);
/** As crs_criu_numa_plan, with this machine's nodes given (for tests). */
void crs_criu_numa_plan_nodes(const crs_criu_meta_t *meta, const crs_criu_node_rec_t *nodes,
                              size_t num_nodes, crs_criu_numa_plan_t *plan_out);
/** A recorded node mask mapped through the plan. */
uint64_t crs_criu_numa_map_mask(const crs_criu_numa_plan_t *plan, uint64_t nodes);

/**
 * Move every page of each area whose pages were all on one node to that node's image in
 * the plan (move_pages(2) on the restored, stopped processes under `init_pid`); resident
 * pages already there stay.
 * @param moved_out    pages moved
 * @param refused_out  pages the kernel would not move (they stay where they are)
 * @return CRMPI_OK, CRMPI_ERR_NOT_FOUND (the tree is gone)
 */
int crs_criu_numa_pages_restore(const crs_criu_meta_t *meta, const crs_criu_numa_plan_t *plan,
                                pid_t init_pid, uint64_t *moved_out, uint64_t *refused_out);

/**
 * The policies of the recorded areas that had one, mapped through the plan, in
 * mempolicy.h's text form (malloc'ed), or NULL when there are none.
 */
int crs_criu_numa_policies(const crs_criu_meta_t *meta, const crs_criu_numa_plan_t *plan,
                           char **text_out);

/**
 * The ranges that were transparent huge pages, in mempolicy.h's text form (malloc'ed; the
 * areas' mode, flags and nodes 0), for the rank to collapse (crmpi_mempolicy_collapse), or
 * NULL when there are none.
 */
int crs_criu_numa_hugepages(const crs_criu_meta_t *meta, char **text_out);

/**
 * The own policies of the restored threads under `init_pid` that differ from their recorded
 * ones (mapped through the plan), in mempolicy.h's threads' text form with signal `signo`
 * (malloc'ed), or NULL when every thread has its policy already. A thread starts with the
 * policy of the process that restored it; only the thread itself can change it.
 */
int crs_criu_numa_thread_policies(const crs_criu_meta_t *meta, const crs_criu_numa_plan_t *plan,
                                  pid_t init_pid, int signo, char **text_out);

/* Room for the longest list crs_criu_cpulist_format makes of a cpu_set_t: every CPU in it
 * takes at most 4 digits and a separator (every other CPU set: thousands of characters). */
#define CRS_CRIU_CPULIST_MAX (CPU_SETSIZE * 5 + 1)

/** Parse "0-3,6" into set_out. @return CRMPI_OK or CRMPI_ERR_BAD_PARAM. */
int crs_criu_cpulist_parse(const char *text, cpu_set_t *set_out);
/** Format a set as "0-3,6" (empty set: "none"). */
void crs_criu_cpulist_format(const cpu_set_t *set, char *text, size_t len);

#endif /* CRS_CRIU_INT_H */
