/*
 * crs_criu_track.c: which pages of a rank were written since its last dump, for incremental
 * checkpoints (crs.h, "Incremental dumps").
 *
 * The kernel does it: the rank created a userfaultfd with asynchronous write-protect
 * (UFFD_FEATURE_WP_ASYNC) and handed it to its agent. Through it the agent registers every
 * private writable mapping of the rank and write-protects its pages; a write then clears
 * the page's protection in the page table without any fault reaching user space, and the
 * PAGEMAP_SCAN ioctl on /proc/<pid>/pagemap lists the pages that lost it (PAGE_IS_WRITTEN),
 * write-protecting them again in the same walk (PM_SCAN_WP_MATCHING).
 *
 * Only pages in memory or in swap are protected. A page never touched (or dropped) has
 * no page-table entry and nothing to dump; protecting it would create an entry for it,
 * and CRIU would then read it, as a fresh zero page, into the image. A write fills it
 * without protection, so the next scan lists it.
 *
 * Before each dump, crs_criu_track_collect() registers what was mapped since, and writes
 * the pages written since the last collect into the dirty map CRIU reads (--dirty-map,
 * scripts/criu-dirty-map.patch), re-protecting them. Pages written between that scan and
 * CRIU's freeze are unprotected again when CRIU looks, and CRIU counts them as written too.
 * So a page neither listed nor unprotected at the dump is unchanged since the previous
 * dump, and CRIU takes it from the parent images.
 *
 * Only the userfaultfd is held here: the registrations belong to it, and closing it
 * (crs_criu_track_close) ends the tracking. The rank itself keeps no copy, so CRIU never
 * sees one in the dumped tree (it could not dump it).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "crs_criu_int.h"
#include "log.h"
#include "uffd_wp.h"

/* Regions per PAGEMAP_SCAN call; the walk goes on from where a full batch stopped. */
#define CRS_CRIU_TRACK_BATCH 512

struct crmpi_crs_track {
    int uffd;       /* the rank's userfaultfd, registrations and all */
    pid_t pid;      /* the rank (host pid) */
    int pagemap_fd; /* /proc/<pid>/pagemap */
    uint64_t end;   /* end of the highest registered mapping: where scans stop */
};

/* Register (again: registering a registered range changes nothing) every private
 * writable mapping of the rank. Mappings the kernel refuses stay untracked: their pages
 * always count as written. */
static int crs_criu_track_register(crmpi_crs_track_t *track)
{
    char path[64], line[512];
    FILE *maps;

    snprintf(path, sizeof(path), "/proc/%d/maps", (int)track->pid);
    maps = fopen(path, "re");
    if (!maps)
        return CRMPI_ERR_NOT_FOUND;
    while (fgets(line, sizeof(line), maps)) {
        unsigned long long start, end;
        char perms[8];

        if (sscanf(line, "%llx-%llx %7s", &start, &end, perms) != 3 || perms[1] != 'w' ||
            perms[3] != 'p')
            continue;
        struct uffdio_register reg = {.range = {.start = start, .len = end - start},
                                      .mode = UFFDIO_REGISTER_MODE_WP};
        /* A new registration's pages carry no protection yet: the scan that follows lists
         * them as written and protects them. */
        if (ioctl(track->uffd, UFFDIO_REGISTER, &reg) == 0 && end > track->end)
            track->end = end;
    }
    fclose(maps);
    return CRMPI_OK;
}

int crs_criu_track_open(pid_t pid, int uffd, crmpi_crs_track_t **track_out)
{
    crmpi_crs_track_t *track = calloc(1, sizeof(*track));
    char path[64];

    if (!track)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
    track->pagemap_fd = open(path, O_RDONLY | O_CLOEXEC);
    if (track->pagemap_fd < 0) {
        free(track);
        return CRMPI_ERR_NOT_FOUND;
    }
    track->uffd = uffd;
    track->pid = pid;
    *track_out = track;
    return CRMPI_OK;
}

int crs_criu_track_collect(crmpi_crs_track_t *track, const char *map_path, uint64_t *pages_out)
{
    struct page_region regions[CRS_CRIU_TRACK_BATCH];
    uint64_t pages = 0, start = 0;
    long page_size = sysconf(_SC_PAGESIZE);
    int rc = crs_criu_track_register(track);
    FILE *map;

    if (rc != CRMPI_OK)
        return rc;
    map = fopen(map_path, "we");
    if (!map)
        return CRMPI_ERR_IO;
    while (start < track->end) {
        struct pm_scan_arg scan = {
            .size = sizeof(scan),
            .flags = PM_SCAN_WP_MATCHING,
            .start = start,
            .end = track->end,
            .vec = (uintptr_t)regions,
            .vec_len = CRS_CRIU_TRACK_BATCH,
            .category_mask = PAGE_IS_WRITTEN,
            /* Untouched pages stay unprotected (above): an AddressSanitizer build's
             * terabytes of shadow would otherwise take the machine's memory. */
            .category_anyof_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
            .return_mask = PAGE_IS_WRITTEN,
        };
        long n = ioctl(track->pagemap_fd, PAGEMAP_SCAN, &scan);

        if (n < 0) {
            crmpi_log_error("crs:criu: PAGEMAP_SCAN of process %d failed: %s", (int)track->pid,
                            strerror(errno));
            rc = errno == ESRCH ? CRMPI_ERR_NOT_FOUND : CRMPI_ERR_NOT_SUPPORTED;
            break;
        }
        for (long i = 0; i < n; i++) {
            uint64_t range[2] = {regions[i].start, regions[i].end};

            pages += (range[1] - range[0]) / (uint64_t)page_size;
            if (fwrite(range, sizeof(range), 1, map) != 1)
                rc = CRMPI_ERR_IO;
        }
        if (rc != CRMPI_OK || n < CRS_CRIU_TRACK_BATCH)
            break;
        start = scan.walk_end;
    }
    if (fclose(map) != 0 && rc == CRMPI_OK)
        rc = CRMPI_ERR_IO;
    if (rc == CRMPI_OK && pages_out)
        *pages_out = pages;
    return rc;
}

void crs_criu_track_close(crmpi_crs_track_t *track)
{
    if (!track)
        return;
    close(track->pagemap_fd);
    close(track->uffd);
    free(track);
}
