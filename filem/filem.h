/*
 * filem.h: file management, moving snapshots between node-local and stable storage. The
 * on-disk format itself is snapshot.h.
 *
 *   checkpoint, sequence N of job J (jobdir = <snapc_base_global_snapshot_dir>/J.ckpt):
 *
 *   mpirun (global coordinator)          crmpi-agent (local coordinator), one per rank
 *   crmpi_filem_seq_begin(jobdir, N) -->  CRS dumps into a node-local dir; rank.json written
 *     creates <N>.partial/                ops->put(local dir -> <N>.partial/rank.<r>/)
 *                                           sha256 while copying, fsync, per-file report
 *                                   <--   the rank's crmpi_filem_rank_entry_t (as JSON)
 *   crmpi_filem_manifest_rank_set() per rank
 *   crmpi_filem_seq_commit(jobdir, manifest, keep)
 *     manifest.json in <N>.partial, fsync; rename <N>.partial -> <N>, fsync jobdir;
 *     snapshot.json replaced (temp, fsync, rename, fsync): THE commit point;
 *     then sequences beyond `keep` and abandoned attempts are removed
 *   on any failure: crmpi_filem_seq_abort(jobdir, N) (the committed snapshot is untouched)
 *
 *   restart:
 *   ompi-restart: crmpi_filem_restart_open(handle, seq or -1) verifies every checksum of
 *     the chosen sequence; on a damaged or missing file falls back to the previous
 *     committed sequence, saying which file; fails clearly when none is intact
 *   crmpi-agent:  ops->get(<seq>/rank.<r>/ -> node-local dir), checked again while copying
 *
 * Invariant: the committed snapshot (what snapshot.json names) is never modified; a crash
 * at any point leaves either the old commit record or the new one, each naming complete,
 * durable sequences.
 *
 * Lifecycle: crmpi_filem_base_open() (selects the component by the `filem` parameter) ->
 * ops->put / ops->get, any number of times -> crmpi_filem_base_close(). The coordinator
 * functions (crmpi_filem_seq_*) and crmpi_filem_restart_* need no open: they only touch the
 * global directory.
 *
 * Threading: put and get block until the copy is durable; they may run in a thread of
 * their own (the agent copies while its rank runs), one copy per thread. Nothing here is
 * called by a rank: the CRS and FileM run in the agent and never link libmpi.
 */
#ifndef CRMPI_FILEM_H
#define CRMPI_FILEM_H

#include <stdbool.h>
#include <stdint.h>

#include "component.h"
#include "snapshot_entry.h"
#include "snapshot_manifest.h"

/**
 * Progress of a copy: `done` of `total` bytes of `rank`'s files have been copied.
 * Called after each chunk and once at the end (done == total); never after an error.
 * Runs in the copying thread; must not call back into FileM.
 */
typedef void (*crmpi_filem_progress_fn_t)(void *arg, int rank, uint64_t done, uint64_t total);

/* One rank's copy, in either direction. */
typedef struct crmpi_filem_transfer {
    int rank;                           /* whose files (for messages and the report) */
    const char *src_dir;                /* directory to copy from */
    const char *dest_dir;               /* directory to create and fill; must not exist */
    crmpi_filem_progress_fn_t progress; /* NULL: no progress reports */
    void *progress_arg;                 /* passed to progress */
    double max_rate;                    /* bytes per second read at most (0: no cap) */
} crmpi_filem_transfer_t;

/**
 * Copy every regular file under src_dir (recursively) into dest_dir, computing each file's
 * sha256 from the bytes read while copying, then fsync every file and directory created.
 * @param entry_out  on CRMPI_OK: rank, host (this node), files sorted by path, bytes
 * @return CRMPI_OK; CRMPI_ERR_OUT_OF_RESOURCE (the disk is full: ENOSPC or EDQUOT);
 *         CRMPI_ERR_EXISTS (dest_dir exists); CRMPI_ERR_NOT_SUPPORTED (src_dir holds
 *         something other than files and directories); CRMPI_ERR_IO. Every error is logged
 *         once, naming the file, and dest_dir is removed with whatever was copied.
 * Thread safety: any thread; distinct transfers may run at the same time.
 */
typedef int (*crmpi_filem_put_fn_t)(const crmpi_filem_transfer_t *transfer,
                                    crmpi_filem_rank_entry_t *entry_out);

/**
 * Copy the files that `entry` lists from src_dir (a committed rank.<r>/) into dest_dir
 * (created, must not exist), checking each file's size and sha256 while copying.
 * @return CRMPI_OK; CRMPI_ERR_IO (a checksum or size does not match: logged with the
 *         file, dest_dir removed); the other errors of put.
 */
typedef int (*crmpi_filem_get_fn_t)(const crmpi_filem_transfer_t *transfer,
                                    const crmpi_filem_rank_entry_t *entry);

/**
 * The files under src_dir where they are (a dump wrote them into the storage that keeps
 * them): each file's sha256 read back, every file and directory fsynced; dest_dir is not
 * used. Gives the entry a put of src_dir would give, without compression.
 * @return as put's (CRMPI_ERR_EXISTS aside); src_dir is left as it is on error.
 */
typedef int (*crmpi_filem_seal_fn_t)(const crmpi_filem_transfer_t *transfer,
                                     crmpi_filem_rank_entry_t *entry_out);

typedef struct crmpi_filem_ops {
    crmpi_filem_put_fn_t put;   /* node-local -> stable storage, after the dump */
    crmpi_filem_get_fn_t get;   /* stable storage -> node-local, before the restore */
    crmpi_filem_seal_fn_t seal; /* a dump into the storage that keeps it, made durable */
} crmpi_filem_ops_t;

/** The framework's descriptor (filem_info.c), for the catalog. */
extern const crmpi_framework_info_t crmpi_filem_framework_info;

/**
 * Open the filem framework and select a component (parameter `filem`).
 * Parameters must be declared (crmpi_catalog_register_all).
 * @return CRMPI_OK with *ops_out, or CRMPI_ERR_NOT_FOUND (logged: no usable component)
 */
int crmpi_filem_base_open(const crmpi_filem_ops_t **ops_out);
void crmpi_filem_base_close(void);

/* ---- the global directory --------------------------------------------------------------- */

/**
 * snapc_base_global_snapshot_dir with a leading "$HOME" or "~" expanded (malloc'ed).
 * Parameters must be declared. @return CRMPI_OK, CRMPI_ERR_BAD_PARAM (logged: no HOME)
 */
int crmpi_filem_base_global_dir(char **dir_out);

/**
 * snapc_base_keep, checked: how many committed sequences crmpi_filem_seq_commit keeps (0: all).
 * @return CRMPI_OK, CRMPI_ERR_BAD_PARAM (logged: negative)
 */
int crmpi_filem_base_keep(unsigned *keep_out);

/**
 * What a user typed as a snapshot handle -> the <jobid>.ckpt directory (malloc'ed):
 * an existing directory is taken as it is; a bare jobid ("4711") or "4711.ckpt" is looked
 * up in the global snapshot directory when parameters are declared.
 * @return CRMPI_OK, CRMPI_ERR_NOT_FOUND (logged: "snapshot handle X does not exist ...")
 */
int crmpi_filem_handle_resolve(const char *handle, char **jobdir_out);

/* ---- levels (filem_levels; snapshot.h names them) ---------------------------------------- */

/* The levels a job's checkpoints go to, and how often. */
typedef struct crmpi_filem_levels {
    unsigned mask;                             /* CRMPI_FILEM_LEVEL_* */
    unsigned interval[CRMPI_FILEM_NUM_LEVELS]; /* every Nth checkpoint, per level in mask */
} crmpi_filem_levels_t;

/**
 * Parse "local,global:4" (each level once, an optional :N >= 1 each).
 * @return CRMPI_OK, CRMPI_ERR_BAD_PARAM (`problem` says why; not logged)
 */
int crmpi_filem_levels_parse(const char *text, crmpi_filem_levels_t *levels_out, char *problem,
                             size_t problem_len);
/** filem_levels, parsed. @return CRMPI_OK, CRMPI_ERR_BAD_PARAM (logged in one line) */
int crmpi_filem_base_levels(crmpi_filem_levels_t *levels_out);
/** The levels the job's `ordinal`th checkpoint (1, 2, ...) goes to: the first goes to every
 *  level, then each level every interval-th one. */
unsigned crmpi_filem_levels_due(const crmpi_filem_levels_t *levels, unsigned ordinal);
/**
 * This node's local-level directory of sequence `seq` of the snapshot `jobdir`:
 * <filem_local_dir>/<basename of jobdir>/<seq> (malloc'ed); rank.<r>/ in it as in the
 * global layout. Parameters must be declared.
 * @return CRMPI_OK, CRMPI_ERR_BAD_PARAM (no session directory parent), OUT_OF_RESOURCE
 */
int crmpi_filem_local_seq_dir(const char *jobdir, unsigned seq, char **dir_out);
/**
 * Remove rank `rank`'s copies of the sequences of snapshot `jobdir` on this node's own
 * storage (local and partner levels) but `seq` and the `num_keep` sequences of `keep`
 * (mpirun's committed list), and its unfinished ones (rank.<r>.partial) but `seq`'s; a
 * sequence's directory goes with its last rank. `seq` is the one being written (0: none).
 * A removal that fails is logged as a warning (a file: crmpi_filem_tree_remove's), and left
 * for a later call.
 */
void crmpi_filem_local_prune(const char *jobdir, unsigned seq, int rank, const uint32_t *keep,
                             uint32_t num_keep);

/**
 * Check every file of sequence `seq_dir` of `jobdir` that can be seen from here: the
 * global copies when the sequence is held at the global level; else (held only on the
 * nodes' own storage) the local copies of the ranks that ran on this node, the others
 * being checked by their agents at restart. `problem` as crmpi_filem_manifest_verify's.
 */
int crmpi_filem_seq_verify(const char *jobdir, const char *seq_dir,
                           const crmpi_filem_manifest_t *manifest, char *problem);

/* ---- the coordinator's side of a checkpoint ----------------------------------------------- */

/**
 * Prepare sequence `seq` of the job in `jobdir`: create jobdir (and its parents) if needed,
 * remove what earlier crashed attempts left (directories snapshot.json does not list), and
 * create <seq>.partial/ for the agents' puts.
 * @param seq_partial_dir_out  "<jobdir>/<seq>.partial" (malloc'ed), where rank.<r>/ go
 * @return CRMPI_OK; CRMPI_ERR_EXISTS (logged: <seq> is already committed);
 *         CRMPI_ERR_OUT_OF_RESOURCE / CRMPI_ERR_IO (logged)
 */
int crmpi_filem_seq_begin(const char *jobdir, unsigned seq, char **seq_partial_dir_out);

/**
 * Commit `manifest` (every rank filled): the sequence becomes the newest committed one.
 * @param keep  committed sequences to keep (snapc_base_keep; 0 keeps all); older ones are
 *              removed after the commit, never the one just committed
 * @return CRMPI_OK (committed; a failed removal of old sequences is only a warning);
 *         CRMPI_ERR_BAD_PARAM (logged: a rank has no entry); CRMPI_ERR_NOT_FOUND (logged:
 *         a reported file is missing or of another size); the errors of the writes, in
 *         which case the previous commit record still stands and the caller should call
 *         crmpi_filem_seq_abort().
 * Fault point: snapc_commit_crash, after the sequence's rename and before the commit record.
 */
int crmpi_filem_seq_commit(const char *jobdir, crmpi_filem_manifest_t *manifest, unsigned keep);

/**
 * Is there room in `jobdir`'s file system for one more sequence, estimated as the bytes the
 * newest committed one held there (at the global level) takes on disk? With `make_room`, the oldest
 * committed sequences go first (crmpi_filem_seq_cleanup, so never the newest nor one it depends on)
 * until there is. `text` gets one line for the user when something was removed or room is short, ""
 * otherwise. @return CRMPI_OK (room, or nothing committed to estimate from),
 *         CRMPI_ERR_OUT_OF_RESOURCE (short of room, even after what make_room removed)
 */
int crmpi_filem_seq_room(const char *jobdir, bool make_room, char *text, size_t text_len);

/** Remove <seq>.partial (an aborted checkpoint). Never touches committed sequences. */
int crmpi_filem_seq_abort(const char *jobdir, unsigned seq);

/**
 * Remove the committed sequences beyond the newest `keep` (0: none) and every sequence
 * directory that snapshot.json does not list (abandoned .partial and never-committed ones),
 * then rewrite snapshot.json if it listed more than `keep`. Without a commit record it
 * removes nothing. @return CRMPI_OK, or an I/O error (logged as a warning)
 */
int crmpi_filem_seq_cleanup(const char *jobdir, unsigned keep);

/* ---- restart ---------------------------------------------------------------------------- */

/* An opened snapshot, one verified sequence chosen for restart. */
typedef struct crmpi_filem_restart {
    char *jobdir;                     /* the <jobid>.ckpt directory */
    unsigned seq;                     /* the sequence restarted from */
    char *seq_dir;                    /* "<jobdir>/<seq>" */
    crmpi_filem_manifest_t *manifest; /* its manifest */
    bool fell_back;                   /* seq is older than the one asked for (or the newest) */
} crmpi_filem_restart_t;

/* Flags of crmpi_filem_restart_open. */
enum {
    CRMPI_FILEM_RESTART_NO_VERIFY = 1 << 0, /* trust the files: read the manifest, check nothing */
};

/**
 * Open `handle` (see crmpi_filem_handle_resolve) for restart and choose a sequence: `seq`, or the
 * newest committed one when seq < 0. Every file of the chosen sequence is verified; when one
 * is missing or damaged, a warning names it and the previous committed sequence is tried
 * ("rank 3's image checksum does not match (rank.3/criu/pages-1.img); restarting from
 * sequence 4 instead"), down to the oldest kept one.
 * @return CRMPI_OK with *restart_out; CRMPI_ERR_NOT_FOUND (the handle does not exist, has no
 *         commit record, or seq is not committed); CRMPI_ERR_IO (no committed sequence is
 *         intact); CRMPI_ERR_NOT_SUPPORTED (a newer format). Every error is logged once.
 */
int crmpi_filem_restart_open(const char *handle, long seq, unsigned flags,
                             crmpi_filem_restart_t **restart_out);
void crmpi_filem_restart_close(crmpi_filem_restart_t *restart);

#endif /* CRMPI_FILEM_H */
