/*
 * snapshot.h: the on-disk format of a global snapshot (DESIGN section 6). A contract: every
 * file below carries a format name and version; readers ignore fields they do not know;
 * a field, once defined, never changes meaning.
 *
 *   <global dir>/<jobid>.ckpt/             the snapshot handle (what ompi-restart takes)
 *       snapshot.json                      commit record: the committed sequences, newest
 *                                          last; replaced atomically (temp, fsync, rename)
 *       <seq>/                             one committed (or abandoned) sequence
 *           manifest.json                  ranks, hosts, launch options, BTLs, CRS, timings,
 *                                          size and sha256 of every file, state "complete"
 *           rank.<r>/criu/...              the CRS's image directory (opaque here)
 *           rank.<r>/rank.json             the rank's facts, filled by the CRS and CRCP
 *       <seq>.partial/                     a sequence being written (or abandoned by a crash)
 *
 * A sequence is usable for restart only when snapshot.json lists it AND its manifest says
 * "complete" AND every file matches the manifest's size and sha256. A directory that
 * snapshot.json does not list is an abandoned attempt, removed by the next cleanup.
 *
 * Used by mpirun (the global coordinator), the agents, ompi-restart and crmpi_info; never
 * by libmpi. Writers: filem.h's commit. Readers: everything here.
 *
 * Errors: every function returns a crmpi status; files that cannot be read or parsed are
 * reported with their path (logged once here); CRMPI_ERR_NOT_SUPPORTED means "written by a
 * newer crmpi" (the message says which version). Not thread-safe per object; distinct
 * objects may be used from distinct threads.
 */
#ifndef CRMPI_FILEM_SNAPSHOT_H
#define CRMPI_FILEM_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Format names and the newest version of each that this code writes and reads. */
#define CRMPI_FILEM_COMMIT_FORMAT     "crmpi-snapshot"
#define CRMPI_FILEM_COMMIT_VERSION    1
#define CRMPI_FILEM_MANIFEST_FORMAT   "crmpi-snapshot-manifest"
#define CRMPI_FILEM_MANIFEST_VERSION  1
#define CRMPI_FILEM_RANK_INFO_FORMAT  "crmpi-rank"
#define CRMPI_FILEM_RANK_INFO_VERSION 1
#define CRMPI_FILEM_COMMIT_FILE       "snapshot.json"
#define CRMPI_FILEM_MANIFEST_FILE     "manifest.json"
#define CRMPI_FILEM_RANK_INFO_FILE    "rank.json"
#define CRMPI_FILEM_PARTIAL_SUFFIX    ".partial"
#define CRMPI_FILEM_SHA256_HEX_LEN    64
/* Room for a problem description ("rank 3's image checksum does not match (...)"). */
#define CRMPI_FILEM_PROBLEM_MAX 1024

/* ---- small building blocks ------------------------------------------------------------ */

/* One file of a rank's snapshot. */
typedef struct crmpi_filem_file {
    char *path;                                  /* relative to rank.<r>/ ("criu/pages-1.img") */
    uint64_t size;                               /* bytes */
    char sha256[CRMPI_FILEM_SHA256_HEX_LEN + 1]; /* lower-case hex of the content's sha256 */
} crmpi_filem_file_t;

/* One rank's part of a sequence: what FileM's put reports and the manifest records. */
typedef struct crmpi_filem_rank_entry {
    int rank;                  /* MPI rank in MPI_COMM_WORLD */
    char *host;                /* node the rank ran on when checkpointed (NULL: unknown) */
    crmpi_filem_file_t *files; /* every file under rank.<r>/, sorted by path */
    size_t num_files;          /* entries in files */
    uint64_t bytes;            /* sum of the files' sizes */
} crmpi_filem_rank_entry_t;

/* An ordered list of key/value strings (launch options, --mca parameters). */
typedef struct crmpi_filem_kv {
    char *key;   /* e.g. "map-by" */
    char *value; /* e.g. "core" */
} crmpi_filem_kv_t;

typedef struct crmpi_filem_kv_list {
    crmpi_filem_kv_t *items; /* in insertion order */
    size_t count;            /* entries in items */
} crmpi_filem_kv_list_t;

/* How long one phase of the checkpoint took. */
typedef struct crmpi_filem_timing {
    char *phase;    /* "quiesce", "dump", "filem", "total", ... */
    double seconds; /* wall-clock time */
} crmpi_filem_timing_t;

/** Append a copy of key/value to `list`. @return CRMPI_OK or CRMPI_ERR_OUT_OF_RESOURCE */
int crmpi_filem_kv_list_add(crmpi_filem_kv_list_t *list, const char *key, const char *value);
void crmpi_filem_kv_list_clear(crmpi_filem_kv_list_t *list);

/** Deep copy of `src` into `*dst` (which is overwritten). */
int crmpi_filem_rank_entry_copy(const crmpi_filem_rank_entry_t *src, crmpi_filem_rank_entry_t *dst);
/** Free what `entry` owns and zero it. */
void crmpi_filem_rank_entry_clear(crmpi_filem_rank_entry_t *entry);

/**
 * A rank entry as one line of JSON (no newline), for the agent's report to mpirun, and back.
 * @param json_out  malloc'ed, caller frees
 * decode: CRMPI_ERR_PROTO when the text is not a valid entry (not logged: the caller knows
 * who sent it); the entry is set only on CRMPI_OK.
 */
int crmpi_filem_rank_entry_encode(const crmpi_filem_rank_entry_t *entry, char **json_out);
int crmpi_filem_rank_entry_decode(const char *json, crmpi_filem_rank_entry_t *entry_out);

/* ---- manifest.json -------------------------------------------------------------------- */

typedef enum {
    CRMPI_FILEM_STATE_COMPLETE, /* every rank's files are durable; the only state written today */
    CRMPI_FILEM_STATE_UNKNOWN,  /* a state word this version does not know (a newer writer) */
} crmpi_filem_state_t;

typedef struct crmpi_filem_manifest {
    int version;               /* format version read (CRMPI_FILEM_MANIFEST_VERSION when built) */
    uint64_t jobid;            /* mpirun's pid when the job was checkpointed */
    unsigned seq;              /* this sequence's number */
    crmpi_filem_state_t state; /* CRMPI_FILEM_STATE_COMPLETE */
    char *created;             /* ISO 8601 UTC; set by crmpi_filem_manifest_write when NULL */
    char *crs;                 /* checkpointer and version, "criu 4.1.1" (NULL: unknown) */
    char *btls;                /* BTLs the job used, "self,sm,tcp" (NULL: unknown) */
    char **argv;               /* the job's program and arguments (argc entries) */
    size_t argc;               /* entries in argv */
    crmpi_filem_kv_list_t launch;    /* launch options: "np", "map-by", "bind-to", "hosts", ... */
    crmpi_filem_kv_list_t mca;       /* the job's --mca parameters */
    crmpi_filem_timing_t *timings;   /* phases of the checkpoint, in order */
    size_t num_timings;              /* entries in timings */
    crmpi_filem_rank_entry_t *ranks; /* num_ranks entries; ranks[i].rank == i */
    size_t num_ranks;                /* the job's size */
} crmpi_filem_manifest_t;

/**
 * A manifest for sequence `seq` of job `jobid` with `num_ranks` empty rank entries.
 * @return CRMPI_OK or CRMPI_ERR_OUT_OF_RESOURCE
 */
int crmpi_filem_manifest_create(uint64_t jobid, unsigned seq, size_t num_ranks,
                                crmpi_filem_manifest_t **manifest_out);
void crmpi_filem_manifest_destroy(crmpi_filem_manifest_t *manifest);

/** Record rank `entry->rank`'s files (deep copy); CRMPI_ERR_BAD_PARAM if out of range. */
int crmpi_filem_manifest_rank_set(crmpi_filem_manifest_t *manifest,
                                  const crmpi_filem_rank_entry_t *entry);
/** Append a timing; the program's arguments and strings are set directly (strdup'ed). */
int crmpi_filem_manifest_timing_add(crmpi_filem_manifest_t *manifest, const char *phase,
                                    double seconds);
int crmpi_filem_manifest_argv_set(crmpi_filem_manifest_t *manifest, int argc, char *const *argv);
/** Total bytes of every rank's files. */
uint64_t crmpi_filem_manifest_bytes(const crmpi_filem_manifest_t *manifest);

/**
 * Write `seq_dir`/manifest.json durably: a temporary file, fsync, rename, fsync of seq_dir.
 * @return CRMPI_OK, CRMPI_ERR_IO (logged with the path and errno),
 *         CRMPI_ERR_OUT_OF_RESOURCE (ENOSPC too)
 */
int crmpi_filem_manifest_write(const char *seq_dir, crmpi_filem_manifest_t *manifest);

/**
 * Read `seq_dir`/manifest.json. Unknown fields are ignored.
 * @param quiet  do not log (the caller turns the problem into its own message)
 * @return CRMPI_OK, CRMPI_ERR_NOT_FOUND (no such file), CRMPI_ERR_PROTO (not a manifest,
 *         or a required field missing), CRMPI_ERR_NOT_SUPPORTED (newer format version),
 *         CRMPI_ERR_IO; with `problem` (CRMPI_FILEM_PROBLEM_MAX bytes, may be NULL) saying which.
 */
int crmpi_filem_manifest_read(const char *seq_dir, bool quiet,
                              crmpi_filem_manifest_t **manifest_out, char *problem);

/**
 * Check every file of every rank of `manifest` under `seq_dir`: present, of the recorded
 * size, with the recorded sha256. Stops at the first problem.
 * @param problem  CRMPI_FILEM_PROBLEM_MAX bytes: "rank 3's image checksum does not match
 *                 (rank.3/criu/pages-1.img)" on failure
 * @return CRMPI_OK, CRMPI_ERR_NOT_FOUND (a file is missing), CRMPI_ERR_IO (size or checksum
 *         mismatch, or unreadable). Not logged: the caller decides what it means.
 */
int crmpi_filem_manifest_verify(const char *seq_dir, const crmpi_filem_manifest_t *manifest,
                                char *problem);

/* ---- snapshot.json (the commit record) ------------------------------------------------ */

typedef struct crmpi_filem_commit {
    int version;     /* format version read */
    uint64_t jobid;  /* the job */
    unsigned *seqs;  /* committed sequences, oldest first; the last is the newest */
    size_t num_seqs; /* entries in seqs (at least 1 in a written record) */
    char *updated;   /* ISO 8601 UTC time of the last commit */
} crmpi_filem_commit_t;

/**
 * Read `jobdir`/snapshot.json.
 * @return CRMPI_OK, CRMPI_ERR_NOT_FOUND (no commit record: nothing was ever committed;
 *         not logged), CRMPI_ERR_PROTO / CRMPI_ERR_NOT_SUPPORTED / CRMPI_ERR_IO (logged)
 */
int crmpi_filem_commit_read(const char *jobdir, crmpi_filem_commit_t **commit_out);
/** Replace `jobdir`/snapshot.json atomically (temp, fsync, rename, fsync of jobdir). */
int crmpi_filem_commit_write(const char *jobdir, const crmpi_filem_commit_t *commit);
void crmpi_filem_commit_destroy(crmpi_filem_commit_t *commit);
/** Is `seq` one of the committed sequences? */
bool crmpi_filem_commit_has(const crmpi_filem_commit_t *commit, unsigned seq);

/* ---- listing a snapshot directory ----------------------------------------------------- */

typedef enum {
    CRMPI_FILEM_SEQ_COMMITTED,   /* listed by snapshot.json, manifest complete */
    CRMPI_FILEM_SEQ_UNCOMMITTED, /* complete manifest but not listed: the commit never happened */
    CRMPI_FILEM_SEQ_PARTIAL,     /* <seq>.partial: being written, or abandoned */
    CRMPI_FILEM_SEQ_BROKEN,      /* listed or not, its manifest is missing or unreadable */
} crmpi_filem_seq_state_t;

typedef struct crmpi_filem_seq_status {
    unsigned seq;                  /* the sequence number */
    crmpi_filem_seq_state_t state; /* see above */
    char *dir;                     /* its directory (absolute or as jobdir was given) */
} crmpi_filem_seq_status_t;

/**
 * Every sequence directory under `jobdir`, by increasing number (a committed sequence
 * whose directory is gone is listed as BROKEN).
 * @return CRMPI_OK (possibly zero entries), CRMPI_ERR_NOT_FOUND (no such directory; logged),
 *         CRMPI_ERR_IO, CRMPI_ERR_OUT_OF_RESOURCE
 */
int crmpi_filem_snapshot_list(const char *jobdir, const crmpi_filem_commit_t *commit,
                              crmpi_filem_seq_status_t **list_out, size_t *count_out);
void crmpi_filem_snapshot_list_free(crmpi_filem_seq_status_t *list, size_t count);
const char *crmpi_filem_seq_state_name(crmpi_filem_seq_state_t state);

/* ---- rank.json: facts of one rank, filled by the CRS and CRCP ------------------------- */

/*
 * Key/values grouped by the layer that owns them: section "crs" (affinity masks, NUMA
 * policy, the checkpointer's version), "crcp" (drained-message counts), "versions" (crmpi,
 * kernel). A key is set once per section (setting it again replaces the value).
 */
typedef struct crmpi_filem_rank_info crmpi_filem_rank_info_t;

int crmpi_filem_rank_info_create(int rank, crmpi_filem_rank_info_t **info_out);
void crmpi_filem_rank_info_destroy(crmpi_filem_rank_info_t *info);
int crmpi_filem_rank_info_set_string(crmpi_filem_rank_info_t *info, const char *section,
                                     const char *key, const char *value);
int crmpi_filem_rank_info_set_int(crmpi_filem_rank_info_t *info, const char *section,
                                  const char *key, int64_t value);
/** Any JSON value (an array of masks, an object of counts); CRMPI_ERR_BAD_PARAM if invalid. */
int crmpi_filem_rank_info_set_json(crmpi_filem_rank_info_t *info, const char *section,
                                   const char *key, const char *json_text);
/** CRMPI_ERR_NOT_FOUND when absent, CRMPI_ERR_BAD_PARAM when of another type. */
int crmpi_filem_rank_info_get_string(const crmpi_filem_rank_info_t *info, const char *section,
                                     const char *key, const char **value_out);
int crmpi_filem_rank_info_get_int(const crmpi_filem_rank_info_t *info, const char *section,
                                  const char *key, int64_t *value_out);
int crmpi_filem_rank_info_rank(const crmpi_filem_rank_info_t *info);
/**
 * Visit every key in section order; `value_text` is the value as compact JSON (strings
 * without their quotes). Stops when fn returns non-zero.
 */
int crmpi_filem_rank_info_foreach(const crmpi_filem_rank_info_t *info,
                                  int (*fn)(const char *section, const char *key,
                                            const char *value_text, void *arg),
                                  void *arg);
/** Write `dir`/rank.json durably (before FileM copies the directory). */
int crmpi_filem_rank_info_write(const crmpi_filem_rank_info_t *info, const char *dir);
/** Read `dir`/rank.json (same errors as crmpi_filem_manifest_read, logged). */
int crmpi_filem_rank_info_read(const char *dir, crmpi_filem_rank_info_t **info_out);

/* ---- helpers shared by FileM, the coordinators and the tools -------------------------- */

/** "<global_dir>/<jobid>.ckpt" (malloc'ed). */
int crmpi_filem_jobdir_path(const char *global_dir, uint64_t jobid, char **jobdir_out);
/** "<jobdir>/<seq>" or "<jobdir>/<seq>.partial" (malloc'ed). */
int crmpi_filem_seq_dir_path(const char *jobdir, unsigned seq, bool partial, char **dir_out);
/** "<seq_dir>/rank.<r>" (malloc'ed). */
int crmpi_filem_rank_dir_path(const char *seq_dir, int rank, char **dir_out);
/** The current UTC time as ISO 8601 ("2026-11-22T06:10:00Z") into `buf` (>= 21 bytes). */
void crmpi_filem_time_now(char *buf, size_t size);

/**
 * Write `text` to `dir`/`name` durably: `name`.tmp, fsync, rename, fsync of `dir`.
 * @return CRMPI_OK, CRMPI_ERR_OUT_OF_RESOURCE (ENOSPC, EDQUOT), CRMPI_ERR_IO (logged)
 */
int crmpi_filem_file_write_atomic(const char *dir, const char *name, const char *text);
/** fsync a directory (after creating, renaming or removing an entry in it). */
int crmpi_filem_dir_sync(const char *dir);
/** Remove `path` and everything under it; a missing path is success. */
int crmpi_filem_tree_remove(const char *path);

#endif /* CRMPI_FILEM_SNAPSHOT_H */
