/*
 * crs.h: checkpoint/restart service (CRS) of one rank, used by crmpi-agent (crmpi_info uses
 * crmpi_crs_criu_placement_print only).
 * Component "criu": CRIU 4.x through libcriu (the default).
 * Component "pheap" (crs_pheap.c): an application checkpoint, the backup file the rank's
 * program wrote with libcrmpi-pheap (MPIX_Checkpoint), copied into the images directory;
 * it restores nothing (a restart starts the program again) and tracks nothing. Chosen only
 * by name (--mca crs pheap: ompi-checkpoint then waits for the ranks' next
 * MPIX_Checkpoint); the agent also uses its checkpoint op, through crmpi_crs_pheap_ops, for
 * the application checkpoints of a job that runs with criu.
 *
 *   crmpi-agent (host pid namespace)
 *      |  crmpi_agent_ns_start(): stdio pipes + control socket (fd 3)
 *      v
 *   [pid namespace]  init (pid 1, setsid) --> rank (application + libmpi)
 *
 *   checkpoint:  agent --ops->checkpoint(init pid, dir)--> criu swrk (child of agent)
 *                  dir/  CRIU image files + dump.log + crs-criu.meta
 *                        (meta: the inherit keys of the init's fds 0..3, every thread's
 *                         CPU affinity and allowed memory nodes, the memory areas'
 *                         policies and pages per NUMA node)
 *   restart:     agent --ops->restart(dir, new fds)--> criu swrk
 *                  --> restored init is the agent's child (criu_local_restore_child)
 *                  --> "pre-resume": affinity re-applied, pages moved back to their
 *                      nodes, caller's hook runs,
 *                      while every restored task is still stopped
 *                  --> tasks run; the agent owns the new stdio pipes and control socket
 *
 * Lifecycle: crmpi_catalog_register_all() (declares crs_criu_binary)
 *   -> crmpi_framework_open(&crmpi_crs_framework) -> crmpi_framework_select_one()
 *   -> any number of ops->checkpoint() / ops->restart() calls, in any order
 *   -> crmpi_framework_close(). No state is kept between calls; everything a restart
 * needs is in the images directory.
 *
 * Threading: calls are blocking (a dump takes as long as writing the rank's memory) and
 * must not run concurrently in one process: libcriu's notify callback has no user
 * argument, so the restart's context is a process-wide variable. The caller keeps SIGCHLD
 * at its default disposition (not ignored); restart() blocks it in the calling
 * thread while CRIU runs, as libcriu requires.
 *
 * Inherit keys (how a restart matches new descriptors to the old ones). CRIU names every
 * pipe and socket by its kernel inode at dump time: "pipe:[1234]", "socket:[5678]"; on
 * restore, `--inherit-fd fd[N]:<key>` makes every file of the image with that key use
 * descriptor N of criu instead. At checkpoint this component reads the init's descriptors
 * 0, 1, 2 and 3 (stdin, stdout, stderr, control socket: the only descriptors agent_ns.c
 * leaves it, and the rank inherits them) from /proc/<init>/fd and records
 * "fd <number> <key>" lines in crs-criu.meta. A restart is given, per descriptor number of
 * the init, the agent's new descriptor (a pipe end or socket end) and passes it with the
 * recorded key. Every unix socket among them is declared external at dump
 * ("unix[<inode>]"), because its peer (the agent's end) is outside the dumped tree.
 * The keys are those of the last checkpoint: a restored rank holds the new agent's pipes
 * and socket, whose inodes the next checkpoint records anew.
 *
 * Affinity (CRIU restores neither affinity nor memory policy): at
 * checkpoint, for every thread of every process in the namespace, crs-criu.meta gets
 * "thread <ns pid> <ns tid> <cpus> <mems>" (namespace ids, CPU list of
 * sched_getaffinity, Mems_allowed_list of /proc/.../status), plus "cpuset <cpus>", the
 * init's mask (the agent's binding). Mems are informational: a thread cannot be given
 * another thread's Mems_allowed (that is a cgroup cpuset property).
 * Re-applying, at pre-resume (crs_criu_affinity): without a new cpuset, each thread gets
 * its recorded mask. With a new cpuset (the agent's binding on the restart node), each
 * recorded CPU is replaced by the CPU of the same position in the new set (position in the
 * recorded "cpuset", modulo the new set's size), so a thread pinned to the 2nd CPU of its
 * rank's old CPUs is pinned to the 2nd CPU of the new ones.
 *
 * Memory placement (docs/design.md, "Memory placement"; crs_criu_numa.c): at checkpoint
 * (crs_criu_numa), "numanode" lines (hwloc logical and OS index of every NUMA node, and
 * whether the binding reaches it) and "vma" lines (per private writable area or area with a
 * policy of its own: its policy and resident pages per node, from /proc/<pid>/numa_maps).
 * At restart the recorded nodes are mapped onto the new binding's by position; CRIU's
 * restorer prefers the node that held most pages, and at pre-resume pages are moved back
 * (crs_criu_numa_pages): an area's to its one node, an interleaved one's by its policy, a
 * spread one's page by page ("pages" lines, asked with move_pages at checkpoint). The areas'
 * policies cannot be set from outside: restart() hands them to the caller
 * (`rank_entries_out`) for the rank's restart message, and the rank sets them itself
 * (crs_criu_numa_policy); so are the threads' own set_mempolicy policies, which each thread
 * of the rank sets on itself, and the ranges that were transparent huge pages, which the
 * rank collapses again (crs_criu_numa_hugepages).
 *
 * TCP: sockets are closed before the dump, by INC in the rank;
 * this component sets neither --tcp-established nor --tcp-close. With CRIU 4.1.1 on
 * kernels from 6.16 no AF_INET socket can be dumped at all (README.md), so a rank that
 * still holds one fails the checkpoint with CRIU's own message quoted, and keeps running.
 *
 * Incremental dumps: track_open() starts tracking the rank's writes through a userfaultfd
 * the rank created and passed (crs_criu_track.c); a checkpoint given that track and the
 * previous dump's images as `parent_dir` writes only the pages written since (CRIU's parent
 * images), and its restart needs that chain (`parents`). Every tracked dump, full or not,
 * re-arms the tracking: the next delta may only be taken against it.
 *
 * Failures: every error is logged once here, and its one-line text is also copied into
 * the caller's `errbuf` (for SnapC to forward to the user); when CRIU itself failed, the
 * text quotes the lines of CRIU's log that contain "Error" (at most three) and names the
 * log file, which is kept. A failed checkpoint leaves the rank running: CRIU resumes
 * every task it froze, whatever went wrong.
 */
#ifndef CRMPI_CRS_H
#define CRMPI_CRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "component.h"

/* Descriptors of the init recorded as inherit keys: stdin, stdout, stderr, control. */
#define CRMPI_CRS_NUM_FDS 4
/* Longest inherit key ("socket:[4294967295]" and the like). */
#define CRMPI_CRS_KEY_MAX 48

/* What a checkpoint measured (set only on success). */
typedef struct crmpi_crs_ckpt_result {
    double dump_seconds;    /* wall time of criu's dump, freeze to last image byte */
    uint64_t image_bytes;   /* bytes of every file in the images dir after the dump */
    unsigned num_threads;   /* threads whose affinity was recorded */
    int have_stats;         /* the fields below were read from CRIU's stats-dump */
    uint64_t frozen_us;     /* CRIU: time the tasks were frozen */
    uint64_t memdump_us;    /* CRIU: time spent collecting memory pages */
    uint64_t memwrite_us;   /* CRIU: time spent writing memory pages */
    uint64_t pages_written; /* CRIU: pages written to the image */
    uint64_t pages_dirty;   /* with a track: pages its scan found written since the last */
} crmpi_crs_ckpt_result_t;

/* Dirty-page tracking of one rank, for incremental dumps (crs_criu_track.c). */
typedef struct crmpi_crs_track crmpi_crs_track_t;

typedef struct crmpi_crs_ckpt_opts {
    pid_t init_pid; /* the namespace's init as the caller sees it (crmpi_agent_ns_child_t) */
    const char *images_dir;   /* existing directory, empty or to be overwritten */
    const char *log_path;     /* CRIU's log; NULL means "<images_dir>/dump.log" */
    int terminate;            /* 0: leave the rank running; 1: CRIU kills it after the dump */
    crmpi_crs_track_t *track; /* the rank's tracking, or NULL: every page is dumped */
    const char *parent_dir;   /* with track: the images of the previous dump of this rank,
                               * taken with the same track; pages unchanged since then are
                               * left to them (CRIU's parent images). NULL: a full dump */
    const char *backup_path;  /* pheap: the rank's backup file, absolute (criu: unused) */
    char *errbuf;             /* on failure, the one-line message (may be NULL) */
    size_t errbuf_len;        /* bytes at errbuf */
} crmpi_crs_ckpt_opts_t;

/**
 * Dump the rank's whole pid namespace (the init and everything under it).
 * @return CRMPI_OK (result_out filled; with terminate, the tree is gone and the caller
 *         reaps the init), CRMPI_ERR_NOT_FOUND (no such init), CRMPI_ERR_IO (images dir or
 *         meta file), CRMPI_ERR_NOT_SUPPORTED (the criu binary cannot run), CRMPI_ERROR
 *         (CRIU failed: its Error lines are quoted). On every error the rank keeps running.
 */
typedef int (*crmpi_crs_checkpoint_fn_t)(const crmpi_crs_ckpt_opts_t *opts,
                                         crmpi_crs_ckpt_result_t *result_out);

/** One descriptor to hand to the restored tree. */
typedef struct crmpi_crs_inherit {
    int rank_fd; /* descriptor number in the init at checkpoint: 0, 1, 2 or 3 */
    int fd;      /* the caller's new descriptor for it; stays the caller's (crs dups it) */
} crmpi_crs_inherit_t;

/**
 * Called at CRIU's "pre-resume", after affinity was re-applied, while every restored task
 * is stopped. Return CRMPI_OK, or an error to abort: the restored tree is then killed.
 */
typedef int (*crmpi_crs_pre_resume_fn_t)(pid_t init_pid, void *arg);

typedef struct crmpi_crs_restart_opts {
    const char *images_dir;               /* a directory written by checkpoint */
    const char *log_path;                 /* NULL means "<images_dir>/restore.log" */
    const char *keep_log_as;              /* after a failed restore, CRIU's log is moved
                                           * there (its directory made, mode 0700) and the
                                           * message names it; NULL: left in place */
    const crmpi_crs_inherit_t *inherit;   /* one entry per "fd" line of the meta file */
    size_t num_inherit;                   /* entries in inherit */
    const char *cpuset;                   /* CPU list to remap onto ("0-1"); NULL: as recorded */
    const char *const *parents;           /* an incremental dump's parent images, newest
                                           * first, NULL-terminated (each the directory of
                                           * the dump the one before it was taken against);
                                           * NULL: a full dump */
    char ***rank_entries_out;             /* on success, what the restored rank must set
                                           * on itself, as entries "NAME=text" for its
                                           * restart message (mempolicy.h: the areas' and
                                           * threads' policies, the huge-page ranges);
                                           * NULL-terminated, malloc'ed as its strings,
                                           * the caller frees; NULL when none. NULL: not
                                           * wanted */
    crmpi_crs_pre_resume_fn_t pre_resume; /* may be NULL */
    void *pre_resume_arg;                 /* passed to pre_resume */
    char *errbuf;                         /* on failure, the one-line message (may be NULL) */
    size_t errbuf_len;                    /* bytes at errbuf */
} crmpi_crs_restart_opts_t;

/**
 * Restore the images as a new pid namespace whose init becomes the caller's child.
 * @param init_pid_out  the restored init's pid (caller's namespace); the caller reaps it
 * @return CRMPI_OK, CRMPI_ERR_BAD_PARAM (an fd of the meta file has no inherit entry, or a
 *         bad cpuset), CRMPI_ERR_IO (meta file), CRMPI_ERR_NOT_SUPPORTED (criu cannot
 *         run), CRMPI_ERROR (CRIU failed, Error lines quoted; nothing was left running),
 *         or the pre_resume hook's error (the restored tree was killed and reaped).
 */
typedef int (*crmpi_crs_restart_fn_t)(const crmpi_crs_restart_opts_t *opts, pid_t *init_pid_out);

/**
 * The inherit key recorded for descriptor `rank_fd` of the init ("pipe:[1234]").
 * @return CRMPI_OK, CRMPI_ERR_NOT_FOUND (no such line), CRMPI_ERR_IO (meta file).
 */
typedef int (*crmpi_crs_recorded_key_fn_t)(const char *images_dir, int rank_fd, char *key_out,
                                           size_t key_len);

/**
 * Start tracking which pages of the rank `pid` are written, through `uffd`: a userfaultfd
 * the rank created with UFFD_FEATURE_WP_ASYNC and passed to the caller (the rank must keep no copy:
 * CRIU cannot dump one). The track owns uffd from here on, also on failure. Pass it to every
 * checkpoint of that rank.
 * @return CRMPI_OK, CRMPI_ERR_NOT_FOUND (no such process), CRMPI_ERR_OUT_OF_RESOURCE
 */
typedef int (*crmpi_crs_track_open_fn_t)(pid_t pid, int uffd, crmpi_crs_track_t **track_out);
/** End the tracking (NULL is ignored). */
typedef void (*crmpi_crs_track_close_fn_t)(crmpi_crs_track_t *track);

/**
 * One full image directory from an incremental dump and its chain (crs_criu_flatten.c):
 * `out_dir` (existing, empty; best on the same file system) gets the dump's files, its
 * memory images rewritten so that every page is in them, each page's bytes taken from the
 * dump of the chain that holds them. A restore of `out_dir` needs no parents. Its files and
 * out_dir are fsync'ed; moving it into place is the caller's.
 * @param parents    the dump's parent images, newest first, NULL-terminated (as restart's)
 * @param bytes_out  on CRMPI_OK, the bytes of pages written (may be NULL)
 * @return CRMPI_OK; CRMPI_ERR_NOT_FOUND (a page the chain does not hold, a missing image),
 *         CRMPI_ERR_PROTO (an image this version cannot read), CRMPI_ERR_IO,
 *         CRMPI_ERR_NOT_SUPPORTED (this component has no chains), CRMPI_ERR_OUT_OF_RESOURCE;
 *         logged and in errbuf. What was written into out_dir is the caller's to remove.
 */
typedef int (*crmpi_crs_flatten_fn_t)(const char *images_dir, const char *const *parents,
                                      const char *out_dir, uint64_t *bytes_out, char *errbuf,
                                      size_t errbuf_len);

/* A component's operations (every slot is required). */
typedef struct crmpi_crs_ops {
    crmpi_crs_checkpoint_fn_t checkpoint;     /* dump a rank */
    crmpi_crs_restart_fn_t restart;           /* restore one */
    crmpi_crs_recorded_key_fn_t recorded_key; /* read back an inherit key */
    crmpi_crs_track_open_fn_t track_open;     /* start dirty-page tracking of a rank */
    crmpi_crs_track_close_fn_t track_close;   /* end it */
    crmpi_crs_flatten_fn_t flatten;           /* merge an incremental dump's chain */
} crmpi_crs_ops_t;

/** Component pheap's operations (crs_pheap.c): checkpoint copies opts->backup_path into
 *  the images directory; restart, track_open and flatten return CRMPI_ERR_NOT_SUPPORTED. */
extern const crmpi_crs_ops_t crmpi_crs_pheap_ops;
extern const crmpi_component_t crmpi_crs_pheap_component;

/**
 * The crs framework as linked into crmpi-agent (components: criu, pheap). Use it like any other:
 * crmpi_framework_open(&crmpi_crs_framework), crmpi_framework_select_one() (criu's query
 * fails, saying why, when the crs_criu_binary program cannot be run), then the selected
 * component's `ops` is a `const crmpi_crs_ops_t *`.
 */
extern crmpi_framework_t crmpi_crs_framework;

/**
 * crmpi_info --snapshot: print, each line starting with `indent`, what the record beside the
 * images in `images_dir` says of the rank's placement (binding, NUMA nodes by hwloc logical
 * and OS index, areas with a policy of their own, pages per node) and what a restart on
 * this machine bound as at the checkpoint would map each node onto (crs_criu_numa.c; needs
 * no CRIU). @return CRMPI_OK, CRMPI_ERR_IO (no record), CRMPI_ERR_PROTO (a damaged one)
 */
int crmpi_crs_criu_placement_print(const char *images_dir, const char *indent, FILE *out);

/** Catalog descriptors (crs_info.c): framework "crs", components "criu" and "pheap". */
extern const crmpi_framework_info_t crmpi_crs_framework_info;
extern const crmpi_component_info_t crmpi_crs_criu_info;
extern const crmpi_component_info_t crmpi_crs_pheap_info;

#endif /* CRMPI_CRS_H */
