/*
 * snapshot_verify.c: every file a manifest lists, checked against its size and sha256
 * (nettle), so that restart never feeds CRIU a damaged image (snapshot_manifest.h).
 */
#include "config.h"

#include "snapshot_manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "snapshot_commit.h"
#include "snapshot_int.h"

/* Bytes read at a time when a file's checksum is verified. */
#define FILEM_VERIFY_CHUNK (1u << 20)

/* "image" for the CRS's files, "rank.json" for the rank's facts, "file" otherwise. */
static const char *filem_verify_file_noun(const char *path)
{
    if (strncmp(path, "criu/", 5) == 0)
        return "image";
    if (strcmp(path, CRMPI_FILEM_RANK_INFO_FILE) == 0)
        return CRMPI_FILEM_RANK_INFO_FILE;
    return "snapshot file";
}

/* The sha256 of what is left to read on `fd`, in hex, read through `buf`
 * (FILEM_VERIFY_CHUNK bytes); *total_out counts the bytes. @return 0, or errno. */
static int filem_sha256_fd(int fd, uint8_t *buf, char *hex, uint64_t *total_out)
{
    struct sha256_ctx ctx;
    uint8_t digest[SHA256_DIGEST_SIZE];

    *total_out = 0;
    sha256_init(&ctx);
    for (;;) {
        ssize_t got = read(fd, buf, FILEM_VERIFY_CHUNK);

        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return errno;
        if (got == 0)
            break;
        sha256_update(&ctx, (size_t)got, buf);
        *total_out += (uint64_t)got;
    }
    sha256_digest(&ctx, SHA256_DIGEST_SIZE, digest);
    for (size_t i = 0; i < SHA256_DIGEST_SIZE; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    return 0;
}

int crmpi_filem_manifest_sum(const char *seq_dir, crmpi_filem_manifest_sum_t sum_out)
{
    uint8_t *buf = malloc(FILEM_VERIFY_CHUNK);
    uint64_t total;
    char *path = NULL;
    int fd = -1, err = ENOMEM;

    if (buf && asprintf(&path, "%s/%s", seq_dir, CRMPI_FILEM_MANIFEST_FILE) >= 0) {
        fd = open(path, O_RDONLY | O_CLOEXEC);
        err = fd < 0 ? errno : filem_sha256_fd(fd, buf, sum_out, &total);
    } else {
        path = NULL;
    }
    if (fd >= 0)
        close(fd);
    free(path);
    free(buf);
    return err ? filem_errno_status(err) : CRMPI_OK;
}

/* Check one file against its entry. */
static int filem_verify_file(const char *seq_dir, int rank, const crmpi_filem_file_t *file,
                             uint8_t *buf, char *problem)
{
    char hex[CRMPI_FILEM_SHA256_HEX_LEN + 1];
    const char *noun = filem_verify_file_noun(file->path);
    char *path;
    struct stat st;
    uint64_t total = 0;
    int fd;
    int rc = CRMPI_OK;

    if (asprintf(&path, "%s/rank.%d/%s", seq_dir, rank, file->path) < 0)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        rc = filem_problem(problem, filem_errno_status(errno),
                           errno == ENOENT ? "rank %d's %s is missing (rank.%d/%s)"
                                           : "rank %d's %s cannot be opened (rank.%d/%s: %s)",
                           rank, noun, rank, file->path, strerror(errno));
        goto out_free_path;
    }
    if (fstat(fd, &st) == 0 && (uint64_t)st.st_size != file->size) {
        rc = filem_problem(problem, CRMPI_ERR_IO,
                           "rank %d's %s has %" PRIu64 " bytes, the manifest says %" PRIu64
                           " (rank.%d/%s)",
                           rank, noun, (uint64_t)st.st_size, file->size, rank, file->path);
        goto out_close;
    }
    int err = filem_sha256_fd(fd, buf, hex, &total);
    if (err) {
        rc = filem_problem(problem, CRMPI_ERR_IO, "rank %d's %s cannot be read (rank.%d/%s: %s)",
                           rank, noun, rank, file->path, strerror(err));
        goto out_close;
    }
    if (total != file->size || strcmp(hex, file->sha256) != 0)
        rc = filem_problem(problem, CRMPI_ERR_IO,
                           "rank %d's %s checksum does not match (rank.%d/%s)", rank, noun, rank,
                           file->path);
out_close:
    close(fd);
out_free_path:
    free(path);
    return rc;
}

int crmpi_filem_manifest_verify(const char *seq_dir, const crmpi_filem_manifest_t *manifest,
                                char *problem)
{
    int rc = CRMPI_OK;

    for (size_t r = 0; r < manifest->num_ranks && rc == CRMPI_OK; r++)
        rc = crmpi_filem_rank_verify(seq_dir, &manifest->ranks[r], problem);
    return rc;
}

int crmpi_filem_rank_verify(const char *seq_dir, const crmpi_filem_rank_entry_t *entry,
                            char *problem)
{
    uint8_t *buf = malloc(FILEM_VERIFY_CHUNK);
    int rc = CRMPI_OK;

    if (!buf)
        return filem_problem(problem, CRMPI_ERR_OUT_OF_RESOURCE,
                             "out of memory verifying checksums");
    for (size_t f = 0; f < entry->num_files && rc == CRMPI_OK; f++)
        rc = filem_verify_file(seq_dir, entry->rank, &entry->files[f], buf, problem);
    free(buf);
    return rc;
}
