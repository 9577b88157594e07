/*
 * btl_sm_segment.c: the /dev/shm files behind the sm FIFOs (btl_sm.h). Every function
 * closes its fd before returning: a mapping outlives its fd, and fewer fds means less for
 * the checkpoint stack to account for.
 */
#include "config.h"

#include "btl_sm.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "log.h"

int btl_sm_segment_create(const char *name, size_t size, uint32_t rank, void **base_out)
{
    const int flags = O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC;
    void *base;
    int fd;
    int rc;

    fd = shm_open(name, flags, 0600);
    if (fd < 0 && errno == EEXIST) {
        /* A crashed job whose mpirun had the same pid left it. Peers of that job may still
         * have it mapped, so it is replaced (new inode), never reused in place. */
        crmpi_fw_verbose(&crmpi_btl_framework, 10,
                         "btl:sm: rank %u: replacing leftover segment /dev/shm%s", rank, name);
        if (shm_unlink(name) != 0 && errno != ENOENT) {
            crmpi_log_warn("btl:sm: rank %u: cannot remove leftover segment /dev/shm%s: %s", rank,
                           name, strerror(errno));
            return CRMPI_ERR_IO;
        }
        fd = shm_open(name, flags, 0600);
    }
    if (fd < 0) {
        crmpi_log_warn("btl:sm: rank %u: cannot create segment /dev/shm%s: %s", rank, name,
                       strerror(errno));
        return errno == EMFILE || errno == ENFILE || errno == ENOSPC ? CRMPI_ERR_OUT_OF_RESOURCE
                                                                     : CRMPI_ERR_IO;
    }
    /* Allocate every page now. With ftruncate alone, tmpfs allocates on first touch, and a
     * full /dev/shm would then kill a sender with SIGBUS in the middle of the run instead of
     * failing here; the first lap of every ring would also take page faults. */
    rc = posix_fallocate(fd, 0, (off_t)size);
    if (rc != 0) {
        crmpi_log_warn("btl:sm: rank %u: cannot allocate %zu bytes for segment /dev/shm%s: %s; "
                       "lower btl_sm_fifo_size or make room in /dev/shm",
                       rank, size, name, strerror(rc));
        rc = rc == ENOSPC || rc == ENOMEM ? CRMPI_ERR_OUT_OF_RESOURCE : CRMPI_ERR_IO;
        goto err_unlink;
    }
    /* MAP_POPULATE: the page tables too, so that no fault lands on the receive path. */
    base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (base == MAP_FAILED) {
        crmpi_log_warn("btl:sm: rank %u: cannot map segment /dev/shm%s (%zu bytes): %s", rank, name,
                       size, strerror(errno));
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto err_unlink;
    }
    close(fd);
    *base_out = base;
    return CRMPI_OK;

err_unlink:
    shm_unlink(name);
    close(fd);
    return rc;
}

int btl_sm_segment_map_peer(const char *name, size_t offset, size_t len, uint32_t rank,
                            uint32_t peer_rank, void **base_out)
{
    struct stat st;
    void *base;
    int rc;
    int fd;

    fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) {
        crmpi_log_error("btl:sm: rank %u: cannot map rank %u's segment /dev/shm%s: %s", rank,
                        peer_rank, name, strerror(errno));
        return errno == ENOENT ? CRMPI_ERR_NOT_FOUND : CRMPI_ERR_IO;
    }
    if (fstat(fd, &st) != 0) {
        crmpi_log_error("btl:sm: rank %u: cannot stat rank %u's segment /dev/shm%s: %s", rank,
                        peer_rank, name, strerror(errno));
        rc = CRMPI_ERR_IO;
        goto err_close;
    }
    /* Mapping past the end would only fail at the first touch, with SIGBUS. */
    if ((uint64_t)st.st_size < (uint64_t)offset + len) {
        crmpi_log_error("btl:sm: rank %u: rank %u's segment /dev/shm%s has %lld bytes, not the "
                        "%zu its modex data describes",
                        rank, peer_rank, name, (long long)st.st_size, offset + len);
        rc = CRMPI_ERR_PROTO;
        goto err_close;
    }
    /* MAP_POPULATE: no page fault on the send path. */
    base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, (off_t)offset);
    if (base == MAP_FAILED) {
        crmpi_log_error("btl:sm: rank %u: cannot map rank %u's segment /dev/shm%s: %s", rank,
                        peer_rank, name, strerror(errno));
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto err_close;
    }
    close(fd);
    *base_out = base;
    return CRMPI_OK;

err_close:
    close(fd);
    return rc;
}

void btl_sm_segment_unlink(const char *name, uint32_t rank)
{
    if (shm_unlink(name) != 0 && errno != ENOENT)
        crmpi_log_warn("btl:sm: rank %u: cannot remove segment /dev/shm%s: %s", rank, name,
                       strerror(errno));
}
