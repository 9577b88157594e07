/*
 * crs_pheap.c: component "pheap" of the crs framework (crs.h): a rank's application
 * checkpoint, which is the backup file its program wrote with libcrmpi-pheap's backup()
 * (MPIX_Checkpoint), copied into the images directory. Nothing of the process is taken: a
 * restart starts the program again (ompi-restart, docs/design.md "Coordinated application
 * checkpoints"), so this component restores nothing and tracks nothing.
 *
 * Selected only by name (--mca crs pheap), since it changes what a checkpoint of the job
 * is: ompi-checkpoint then waits for the ranks' next MPIX_Checkpoint. The agent also uses
 * its checkpoint for every application checkpoint of a job run with criu.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "crmpi_status.h"
#include "crs.h"
#include "fs.h"
#include "param.h"

/* A failure: its one line into the caller's buffer. */
#define CRS_PHEAP_FAIL(opts, ...)                                                                  \
    do {                                                                                           \
        if ((opts)->errbuf)                                                                        \
            snprintf((opts)->errbuf, (opts)->errbuf_len, __VA_ARGS__);                             \
    } while (0)

/*
 * The rank wrote its backup before it asked for the checkpoint, and backup() never writes
 * into that file again: the next backup is a new file renamed over its name. So a second
 * name for the file, in the images directory, holds this backup for good, at no cost; a
 * copy is made only when the images are on another file system (or links are refused).
 */
static int crs_pheap_link(const crmpi_crs_ckpt_opts_t *opts, const char *dest, uint64_t *bytes_out)
{
    struct stat st;

    if (link(opts->backup_path, dest) != 0)
        return CRMPI_ERR_NOT_SUPPORTED;
    if (stat(dest, &st) != 0) {
        unlink(dest);
        return CRMPI_ERR_NOT_SUPPORTED;
    }
    *bytes_out = (uint64_t)st.st_size;
    return CRMPI_OK;
}

static int crs_pheap_checkpoint(const crmpi_crs_ckpt_opts_t *opts,
                                crmpi_crs_ckpt_result_t *result_out)
{
    char dest[4200];
    uint64_t linked = 0, start = crmpi_clock_ns();
    int src_fd, dest_fd, rc = CRMPI_OK;
    struct stat st;

    if (!opts->backup_path || !*opts->backup_path) {
        CRS_PHEAP_FAIL(opts, "the rank named no backup file: with crs pheap a checkpoint is "
                             "taken at the ranks' MPIX_Checkpoint");
        return CRMPI_ERR_NOT_FOUND;
    }
    snprintf(dest, sizeof(dest), "%s/backup", opts->images_dir);
    if (crs_pheap_link(opts, dest, &linked) == CRMPI_OK) {
        *result_out = (crmpi_crs_ckpt_result_t){
            .dump_seconds = (double)(crmpi_clock_ns() - start) / 1e9, .image_bytes = linked};
        return CRMPI_OK;
    }
    src_fd = open(opts->backup_path, O_RDONLY | O_CLOEXEC);
    if (src_fd < 0 || fstat(src_fd, &st) != 0) {
        CRS_PHEAP_FAIL(opts, "cannot read the backup file %.300s: %s", opts->backup_path,
                       strerror(errno));
        if (src_fd >= 0)
            close(src_fd);
        return CRMPI_ERR_IO;
    }
    dest_fd = open(dest, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (dest_fd < 0) {
        CRS_PHEAP_FAIL(opts, "cannot create %.300s: %s", dest, strerror(errno));
        rc = CRMPI_ERR_IO;
    } else if ((rc = crmpi_fd_copy(src_fd, dest_fd, (uint64_t)st.st_size)) != CRMPI_OK) {
        CRS_PHEAP_FAIL(opts, "cannot copy %.300s to %.300s: %s", opts->backup_path, dest,
                       strerror(errno));
    }
    if (dest_fd >= 0)
        close(dest_fd);
    if (rc == CRMPI_OK)
        *result_out =
            (crmpi_crs_ckpt_result_t){.dump_seconds = (double)(crmpi_clock_ns() - start) / 1e9,
                                      .image_bytes = (uint64_t)st.st_size};
    close(src_fd);
    return rc;
}

static int crs_pheap_restart(const crmpi_crs_restart_opts_t *opts, pid_t *init_pid_out)
{
    (void)init_pid_out;
    if (opts->errbuf)
        snprintf(opts->errbuf, opts->errbuf_len,
                 "an application checkpoint holds no process to restore: ompi-restart starts "
                 "its program again");
    return CRMPI_ERR_NOT_SUPPORTED;
}

static int crs_pheap_recorded_key(const char *images_dir, int rank_fd, char *key_out,
                                  size_t key_len)
{
    (void)images_dir;
    (void)rank_fd;
    (void)key_out;
    (void)key_len;
    return CRMPI_ERR_NOT_FOUND; /* no descriptor is inherited by a program started anew */
}

static int crs_pheap_track_open(pid_t pid, int uffd, crmpi_crs_track_t **track_out)
{
    (void)pid;
    (void)track_out;
    close(uffd); /* the track owns it, also on failure */
    return CRMPI_ERR_NOT_SUPPORTED;
}

static int crs_pheap_flatten(const char *images_dir, const char *const *parents,
                             const char *out_dir, uint64_t *bytes_out, char *errbuf,
                             size_t errbuf_len)
{
    (void)images_dir;
    (void)parents;
    (void)out_dir;
    (void)bytes_out;
    if (errbuf && errbuf_len)
        snprintf(errbuf, errbuf_len, "crs:pheap: an application checkpoint has no chain");
    return CRMPI_ERR_NOT_SUPPORTED;
}

static void crs_pheap_track_close(crmpi_crs_track_t *track)
{
    (void)track; /* track_open never makes one */
}

const crmpi_crs_ops_t crmpi_crs_pheap_ops = {
    .checkpoint = crs_pheap_checkpoint,
    .restart = crs_pheap_restart,
    .recorded_key = crs_pheap_recorded_key,
    .track_open = crs_pheap_track_open,
    .track_close = crs_pheap_track_close,
    .flatten = crs_pheap_flatten,
};

/* Only when named: an empty selection (the default) must keep criu. */
static int crs_pheap_query(const crmpi_component_t *component, int *priority_out,
                           const char **reason_out)
{
    const char *list = NULL;

    (void)component;
    if (crmpi_param_get_string("crs", &list) != CRMPI_OK || !list ||
        !crmpi_component_named(list, "pheap")) {
        *reason_out = "chosen only by name (--mca crs pheap)";
        return CRMPI_ERR_NOT_SUPPORTED;
    }
    *priority_out = 20;
    return CRMPI_OK;
}

const crmpi_component_t crmpi_crs_pheap_component = {
    .info = &crmpi_crs_pheap_info,
    .query = crs_pheap_query,
    .ops = &crmpi_crs_pheap_ops,
};
