/*
 * snapshot_entry.h: one rank's part of a sequence, its files with size and sha256: what
 * FileM's put reports (the agent sends it to mpirun as one line of JSON) and what the
 * manifest records for the rank (snapshot.h). Codec: snapshot_entry.c.
 */
#ifndef CRMPI_FILEM_SNAPSHOT_ENTRY_H
#define CRMPI_FILEM_SNAPSHOT_ENTRY_H

#include <stddef.h>
#include <stdint.h>

#include "snapshot.h"

/* One file of a rank's snapshot. */
typedef struct crmpi_filem_file {
    char *path;                                  /* relative to rank.<r>/ ("criu/pages-1.img") */
    uint64_t size;                               /* bytes */
    char sha256[CRMPI_FILEM_SHA256_HEX_LEN + 1]; /* lower-case hex of the content's sha256 */
    /* A file stored compressed (path ends in ".zst"): the size and sha256 of what it
     * decompresses to; raw_sha256[0] == '\0' for a file stored as it is. */
    uint64_t raw_size;
    char raw_sha256[CRMPI_FILEM_SHA256_HEX_LEN + 1];
} crmpi_filem_file_t;

/* One rank's part of a sequence: what FileM's put reports and the manifest records. */
typedef struct crmpi_filem_rank_entry {
    int rank;                  /* MPI rank in MPI_COMM_WORLD */
    char *host;                /* node the rank ran on when checkpointed (NULL: unknown) */
    char *partner;             /* node holding its partner-level copy (NULL: none) */
    crmpi_filem_file_t *files; /* every file under rank.<r>/, sorted by path */
    size_t num_files;          /* entries in files */
    uint64_t bytes;            /* sum of the files' sizes */
    unsigned parent;           /* an incremental image: the sequence whose images of this
                                * rank hold the pages it does not (CRIU's parent images),
                                * itself maybe incremental; 0: a full image */
    unsigned levels;           /* CRMPI_FILEM_LEVEL_* holding these files (0: global, as
                                * records without it mean) */
    double level_seconds[CRMPI_FILEM_NUM_LEVELS]; /* the agent's copy to each level (0: none) */
} crmpi_filem_rank_entry_t;

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

#endif /* CRMPI_FILEM_SNAPSHOT_ENTRY_H */
