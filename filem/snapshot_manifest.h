/*
 * snapshot_manifest.h: manifest.json, the record of one sequence: the job's ranks, hosts,
 * launch options and MCA parameters, the checkpointer, timings, and the size and sha256
 * of every file (snapshot.h). Codec: snapshot_manifest.c; verification: snapshot_verify.c.
 */
#ifndef CRMPI_FILEM_SNAPSHOT_MANIFEST_H
#define CRMPI_FILEM_SNAPSHOT_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshot.h"
#include "snapshot_entry.h"

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
    unsigned levels;                 /* CRMPI_FILEM_LEVEL_* holding every rank's files
                                        (read as global from a manifest without it) */
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

/** Append a copy of key/value to `list`. @return CRMPI_OK or CRMPI_ERR_OUT_OF_RESOURCE */
int crmpi_filem_kv_list_add(crmpi_filem_kv_list_t *list, const char *key, const char *value);
void crmpi_filem_kv_list_clear(crmpi_filem_kv_list_t *list);

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
/** The same check for one rank's files under `seq_dir` (a local level's sequence directory
 *  has the global one's layout). */
int crmpi_filem_rank_verify(const char *seq_dir, const crmpi_filem_rank_entry_t *entry,
                            char *problem);

#endif /* CRMPI_FILEM_SNAPSHOT_MANIFEST_H */
