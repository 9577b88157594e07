/*
 * snapshot_commit.h: snapshot.json, the commit record of a job's snapshot (which sequences
 * are committed, newest last), and the listing of the job's sequence directories with the
 * state of each, which only the commit record can tell (snapshot.h). Codecs:
 * snapshot_commit.c and snapshot_list.c.
 */
#ifndef CRMPI_FILEM_SNAPSHOT_COMMIT_H
#define CRMPI_FILEM_SNAPSHOT_COMMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshot.h"

/* ---- snapshot.json (the commit record) ------------------------------------------------ */

/* A sequence's manifest.json checksum in the commit record: hex, or "" when not recorded
 * (records written before it was). */
typedef char crmpi_filem_manifest_sum_t[CRMPI_FILEM_SHA256_HEX_LEN + 1];

typedef struct crmpi_filem_commit {
    int version;                      /* format version read */
    uint64_t jobid;                   /* the job */
    unsigned *seqs;                   /* committed sequences, oldest first; the last is newest */
    crmpi_filem_manifest_sum_t *sums; /* per entry of seqs: its manifest's sha256 */
    unsigned *levels;                 /* per entry of seqs: CRMPI_FILEM_LEVEL_* holding it
                                         ("levels" in the record; global when absent) */
    size_t num_seqs;                  /* entries in seqs (at least 1 in a written record) */
    char *updated;                    /* ISO 8601 UTC time of the last commit */
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
/** The sha256 of `seq_dir`/manifest.json, for the commit record (snapshot_verify.c).
 *  @return CRMPI_OK, CRMPI_ERR_NOT_FOUND, CRMPI_ERR_IO, CRMPI_ERR_OUT_OF_RESOURCE */
int crmpi_filem_manifest_sum(const char *seq_dir, crmpi_filem_manifest_sum_t sum_out);
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

#endif /* CRMPI_FILEM_SNAPSHOT_COMMIT_H */
