/*
 * snapshot.h: the on-disk format of a global snapshot. A contract: every file below
 * carries a format name and version; readers ignore fields they do not know; a field, once
 * defined, never changes meaning.
 *
 *   <global dir>/<jobid>.ckpt/             the snapshot handle (what ompi-restart takes)
 *       snapshot.json                      commit record: the committed sequences, newest
 *                                          last; replaced atomically (temp, fsync, rename)
 *       <seq>/                             one committed (or abandoned) sequence
 *           manifest.json                  ranks, hosts, launch options, BTLs, CRS, timings,
 *                                          size and sha256 of every file, state "complete"
 *           rank.<r>/criu/...              the CRS's image directory (opaque here)
 *           rank.<r>/rank.json             the rank's facts, filled by the CRS and CRCP
 *                                          (rank.<r>/ only when the sequence is held at the
 *                                          global level; see the levels below)
 *       <seq>.partial/                     a sequence being written (or abandoned by a crash)
 *
 * A sequence is usable for restart only when snapshot.json lists it AND its manifest says
 * "complete" AND every file matches the manifest's size and sha256. A directory that
 * snapshot.json does not list is an abandoned attempt, removed by the next cleanup.
 *
 * Used by mpirun (the global coordinator), the agents, ompi-restart and crmpi_info; never
 * by libmpi. Writers: filem.h's commit. Readers: everything here. One header per record,
 * each with its codec in the .c file of the same name:
 *   snapshot_commit.h     snapshot.json, and the listing of a job's sequence directories
 *   snapshot_manifest.h   manifest.json, and the check of every file it lists
 *   snapshot_entry.h      one rank's files, in the manifest and in the agent's report
 *   snapshot_rank_info.h  rank.json
 *   filem_fs.h            the paths of this layout, durable writes, removal
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

/*
 * Storage levels a sequence's images may be held at (filem_levels): the node-local one
 * (<filem_local_dir>/<jobid>.ckpt/<seq>/rank.<r>/ on the node the rank ran on), the partner
 * one (the same directory on another node of the job, the rank entry's partner) and the
 * global one (the snapshot directory above). Masks of them are recorded per rank, per
 * sequence (manifest.json) and in the commit record; a record without them means global.
 * The manifest and the commit record themselves are always in the global directory.
 */
enum {
    CRMPI_FILEM_LEVEL_LOCAL = 1u << 0,
    CRMPI_FILEM_LEVEL_GLOBAL = 1u << 1,
    CRMPI_FILEM_LEVEL_PARTNER = 1u << 2,
};
#define CRMPI_FILEM_NUM_LEVELS 3
#define CRMPI_FILEM_LEVELS_ALL                                                                     \
    (CRMPI_FILEM_LEVEL_LOCAL | CRMPI_FILEM_LEVEL_GLOBAL | CRMPI_FILEM_LEVEL_PARTNER)

/** "local", "global" or "partner" for level index 0, 1 or 2 (bit 1 << index of a mask). */
const char *crmpi_filem_level_name(int index);
/** A mask as "local,global" ("none" for 0) into buf. */
void crmpi_filem_levels_str(unsigned mask, char *buf, size_t len);

#endif /* CRMPI_FILEM_SNAPSHOT_H */
