/*
 * pheap_backup.c: bopen(), bclose(), backup() and restore().
 *
 * backup() copies the PERM globals into the heap, then writes a header and the heap's used
 * part (pheap_format.h) to "<backup>.partial" beside the backup file, fsyncs it, renames it
 * over the backup file and fsyncs the directory. rename() replaces the name atomically, so
 * at every instant the name holds either the previous backup or the new one, complete: a
 * process killed anywhere in backup() leaves the previous backup for restore(), and a
 * leftover ".partial" is overwritten by the next backup(). The directory is opened once,
 * by bopen(), so that a later chdir() does not move the backups.
 *
 * restore() checks everything it can before it overwrites anything (the file's format, its
 * size, the program that wrote it, the heap's address, the image's own heap header); only
 * a read error in the middle of the copy leaves the heap half restored, and says so.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pheap_dlmalloc.h"
#include "pheap_internal.h"

#include <crmpi/pheap.h>

/* Suffix of the file a backup is written to before it replaces the previous one. */
#define PHEAP_PARTIAL_SUFFIX ".partial"
/* Bytes per write() or read() of the image. */
#define PHEAP_IO_CHUNK ((size_t)1 << 20)

/* Forget the backup file (lock held). */
static void pheap_backup_forget(void)
{
    if (pheap_state.backup_dirfd >= 0)
        close(pheap_state.backup_dirfd);
    free(pheap_state.backup_path);
    free(pheap_state.backup_name);
    pheap_state.backup_open = false;
    pheap_state.backup_dirfd = -1;
    pheap_state.backup_path = NULL;
    pheap_state.backup_name = NULL;
    pheap_state.backup_readable = false;
}

int bopen(const char *fname, const char *mode)
{
    const char *slash;
    char *dir = NULL;
    int dirfd, rc = -1;
    bool existing;

    if (!fname || !*fname || !mode || (strcmp(mode, "w+") != 0 && strcmp(mode, "r+") != 0)) {
        pheap_error("bopen: %s: mode \"%s\" is not one of \"w+\" (new backups) and \"r+\" (an "
                    "existing backup, to restore)",
                    fname ? fname : "(null)", mode ? mode : "(null)");
        errno = EINVAL;
        return -1;
    }
    existing = mode[0] == 'r';
    slash = strrchr(fname, '/');
    dir = slash ? strndup(fname, slash == fname ? 1 : (size_t)(slash - fname)) : strdup(".");
    if (!dir || (slash && !slash[1])) {
        pheap_error("bopen: %s: %s", fname,
                    dir ? "names a directory, not a file" : "out of memory");
        errno = dir ? EISDIR : ENOMEM;
        free(dir);
        return -1;
    }
    pthread_mutex_lock(&pheap_lock);
    dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0) {
        pheap_error("bopen: %s: cannot open its directory %s: %s", fname, dir, strerror(errno));
        goto out;
    }
    if (existing && faccessat(dirfd, slash ? slash + 1 : fname, R_OK, 0) != 0) {
        if (errno == ENOENT)
            pheap_error("bopen: %s: no such backup file (\"w+\" starts new backups)", fname);
        else
            pheap_error("bopen: %s: cannot read: %s", fname, strerror(errno));
        goto err_close;
    }
    if (!existing && faccessat(dirfd, ".", W_OK, 0) != 0) {
        pheap_error("bopen: %s: cannot write backups in %s: %s", fname, dir, strerror(errno));
        goto err_close;
    }
    /* A new bopen() replaces the backup file of the previous one, as bclose() would. */
    pheap_backup_forget();
    pheap_state.backup_path = strdup(fname);
    pheap_state.backup_name = strdup(slash ? slash + 1 : fname);
    if (!pheap_state.backup_path || !pheap_state.backup_name) {
        pheap_error("bopen: %s: out of memory", fname);
        errno = ENOMEM;
        pheap_backup_forget();
        goto err_close;
    }
    pheap_state.backup_dirfd = dirfd;
    pheap_state.backup_open = true;
    pheap_state.backup_readable = existing;
    rc = 0;
    goto out;

err_close:
    close(dirfd);
out:
    pthread_mutex_unlock(&pheap_lock);
    free(dir);
    return rc;
}

int pheap_backup_file(char *buf, size_t len)
{
    char dir[PATH_MAX];
    int rc = -1;

    pthread_mutex_lock(&pheap_lock);
    if (!pheap_state.backup_open) {
        errno = ENOENT;
        goto out;
    }
    /* The directory as bopen() opened it, whatever the working directory is now. */
    char link[64];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", pheap_state.backup_dirfd);
    ssize_t n = readlink(link, dir, sizeof(dir) - 1);
    if (n < 0)
        goto out;
    dir[n] = '\0';
    if ((size_t)snprintf(buf, len, "%s/%s", dir, pheap_state.backup_name) >= len) {
        errno = ERANGE;
        goto out;
    }
    rc = 0;
out:
    pthread_mutex_unlock(&pheap_lock);
    return rc;
}

int bclose(void)
{
    int rc = 0;

    pthread_mutex_lock(&pheap_lock);
    if (pheap_state.backup_open) {
        pheap_backup_forget();
    } else {
        pheap_error("bclose: no backup file is open");
        errno = EBADF;
        rc = -1;
    }
    pthread_mutex_unlock(&pheap_lock);
    return rc;
}

/* Are a heap and a backup file open? Says which is missing, for `who`. */
static int pheap_backup_ready(const char *who)
{
    if (!pheap_state.heap_open) {
        pheap_error("%s: no heap is open (call mopen() first)", who);
        errno = EBADF;
        return -1;
    }
    if (!pheap_state.backup_open) {
        pheap_error("%s: no backup file is open (call bopen() first)", who);
        errno = EBADF;
        return -1;
    }
    return 0;
}

/* Write all `len` bytes; a short write is an error (errno set). */
static int pheap_backup_write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t done = write(fd, buf, len < PHEAP_IO_CHUNK ? len : PHEAP_IO_CHUNK);

        if (done < 0 && errno == EINTR)
            continue;
        if (done <= 0) {
            if (done == 0)
                errno = EIO;
            return -1;
        }
        buf += done;
        len -= (size_t)done;
    }
    return 0;
}

/* Write the header and the image to `fd`; the mid-write fault point fires halfway. */
static int pheap_backup_write(int fd, const pheap_backup_header_t *hdr)
{
    static char page[PHEAP_BACKUP_IMAGE_OFFSET];
    size_t half = hdr->image_size / 2;

    memset(page, 0, sizeof(page));
    memcpy(page, hdr, sizeof(*hdr));
    if (pheap_backup_write_all(fd, page, sizeof(page)) != 0 ||
        pheap_backup_write_all(fd, pheap_state.map, half) != 0)
        return -1;
    pheap_fault_stop("pheap_backup_stop_mid_write");
    return pheap_backup_write_all(fd, pheap_state.map + half, hdr->image_size - half);
}

int backup(void)
{
    const char *path, *name;
    char partial[4096];
    pheap_backup_header_t hdr;
    struct timespec now;
    size_t image_size;
    int fd, rc = -1;

    pthread_mutex_lock(&pheap_lock);
    if (pheap_backup_ready("backup") != 0)
        goto out;
    path = pheap_state.backup_path;
    name = pheap_state.backup_name;
    if ((size_t)snprintf(partial, sizeof(partial), "%s%s", name, PHEAP_PARTIAL_SUFFIX) >=
        sizeof(partial)) {
        pheap_error("backup: %s: the name is too long", path);
        errno = ENAMETOOLONG;
        goto out;
    }
    if (pheap_globals_save("backup") != 0)
        goto out;
    /* The used part ends at the allocator's free top chunk: never past what it owns. */
    image_size =
        pheap_page_round((size_t)(pheap_dlm_used_end(pheap_state.mspace) - pheap_state.map));
    if (image_size > pheap_header()->owned_size)
        image_size = (size_t)pheap_header()->owned_size;

    memset(&hdr, 0, sizeof(hdr));
    memcpy(hdr.magic, PHEAP_BACKUP_MAGIC, PHEAP_MAGIC_LEN);
    hdr.version = PHEAP_FORMAT_VERSION;
    hdr.header_size = sizeof(hdr);
    hdr.map_address = (uint64_t)(uintptr_t)pheap_state.map;
    hdr.image_size = image_size;
    hdr.owned_size = pheap_header()->owned_size;
    clock_gettime(CLOCK_REALTIME, &now);
    hdr.backup_time_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
    pheap_identity_of_program(&hdr.identity);

    fd = openat(pheap_state.backup_dirfd, partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        pheap_error("backup: %s%s: cannot create: %s; the previous backup is untouched", path,
                    PHEAP_PARTIAL_SUFFIX, strerror(errno));
        goto out;
    }
    if (pheap_backup_write(fd, &hdr) != 0) {
        pheap_error("backup: %s%s: cannot write: %s; the previous backup is untouched", path,
                    PHEAP_PARTIAL_SUFFIX, strerror(errno));
        goto err_unlink;
    }
    if (fsync(fd) != 0) {
        pheap_error("backup: %s%s: cannot flush to disk: %s; the previous backup is untouched",
                    path, PHEAP_PARTIAL_SUFFIX, strerror(errno));
        goto err_unlink;
    }
    if (close(fd) != 0) {
        fd = -1;
        pheap_error("backup: %s%s: cannot write: %s; the previous backup is untouched", path,
                    PHEAP_PARTIAL_SUFFIX, strerror(errno));
        goto err_unlink;
    }
    fd = -1;
    pheap_fault_stop("pheap_backup_stop_before_rename");
    if (renameat(pheap_state.backup_dirfd, partial, pheap_state.backup_dirfd, name) != 0) {
        pheap_error("backup: %s: cannot replace it with the new backup: %s; the previous "
                    "backup is untouched",
                    path, strerror(errno));
        goto err_unlink;
    }
    pheap_state.backup_readable = true;
    /* The rename is done; only its durability across a power cut depends on this. */
    if (fsync(pheap_state.backup_dirfd) != 0) {
        pheap_error("backup: %s: written, but its directory cannot be flushed to disk: %s; a "
                    "power cut may bring back the previous backup",
                    path, strerror(errno));
        goto out;
    }
    rc = 0;
    goto out;

err_unlink:
    if (fd >= 0)
        close(fd);
    unlinkat(pheap_state.backup_dirfd, partial, 0);
out:
    pthread_mutex_unlock(&pheap_lock);
    return rc;
}

/* Read exactly `len` bytes at `offset`; a short read is an error (errno EIO). */
static int pheap_backup_read_all(int fd, char *buf, size_t len, off_t offset)
{
    while (len > 0) {
        ssize_t got = pread(fd, buf, len < PHEAP_IO_CHUNK ? len : PHEAP_IO_CHUNK, offset);

        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            if (got == 0)
                errno = EIO;
            return -1;
        }
        buf += got;
        len -= (size_t)got;
        offset += got;
    }
    return 0;
}

/* Check the backup in `fd` against this program and heap, before anything is changed. */
static int pheap_backup_check(int fd, const char *path, pheap_backup_header_t *hdr_out)
{
    pheap_heap_header_t image_hdr;
    pheap_backup_header_t hdr;
    struct stat st;
    char who[300];
    ssize_t got;

    snprintf(who, sizeof(who), "restore: %s", path);
    got = pread(fd, &hdr, sizeof(hdr), 0);
    if (got < 0) {
        pheap_error("%s: cannot read: %s; nothing was restored", who, strerror(errno));
        return -1;
    }
    if ((size_t)got < sizeof(hdr) || memcmp(hdr.magic, PHEAP_BACKUP_MAGIC, PHEAP_MAGIC_LEN)) {
        pheap_error("%s: not a persistent heap backup; nothing was restored", who);
        errno = EINVAL;
        return -1;
    }
    if (hdr.version != PHEAP_FORMAT_VERSION) {
        pheap_error("%s: a backup of format version %u; this library reads version %d; "
                    "nothing was restored",
                    who, hdr.version, PHEAP_FORMAT_VERSION);
        errno = EINVAL;
        return -1;
    }
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size != PHEAP_BACKUP_IMAGE_OFFSET + hdr.image_size ||
        hdr.image_size < sizeof(image_hdr) || hdr.image_size > hdr.owned_size) {
        pheap_error("%s: damaged: %lld bytes where its header announces %llu; nothing was "
                    "restored",
                    who, (long long)st.st_size,
                    (unsigned long long)(PHEAP_BACKUP_IMAGE_OFFSET + hdr.image_size));
        errno = EINVAL;
        return -1;
    }
    if (pheap_identity_check(&hdr.identity, true, who, "; nothing was restored") != 0)
        return -1;
    if (hdr.map_address != (uint64_t)(uintptr_t)pheap_state.map) {
        pheap_error("%s: made from a heap at 0x%llx, but the open heap %s is at %p; nothing was "
                    "restored (a heap created with CRMPI_PHEAP_ADDRESS=0x%llx can take it)",
                    who, (unsigned long long)hdr.map_address, pheap_state.heap_path,
                    (void *)pheap_state.map, (unsigned long long)hdr.map_address);
        errno = EINVAL;
        return -1;
    }
    /* The image starts with the heap's own header: it must describe the same heap. */
    if (pheap_backup_read_all(fd, (char *)&image_hdr, sizeof(image_hdr),
                              PHEAP_BACKUP_IMAGE_OFFSET) != 0 ||
        memcmp(image_hdr.magic, PHEAP_HEAP_MAGIC, PHEAP_MAGIC_LEN) != 0 ||
        image_hdr.version != PHEAP_FORMAT_VERSION || image_hdr.map_address != hdr.map_address ||
        image_hdr.owned_size != hdr.owned_size || image_hdr.mspace_offset >= hdr.image_size) {
        pheap_error("%s: damaged: its image does not start with the heap's header; nothing "
                    "was restored",
                    who);
        errno = EINVAL;
        return -1;
    }
    *hdr_out = hdr;
    return 0;
}

int restore(void)
{
    pheap_backup_header_t hdr;
    pheap_heap_header_t *heap_hdr;
    const char *path;
    char who[300];
    int fd, rc = -1;

    pthread_mutex_lock(&pheap_lock);
    if (pheap_backup_ready("restore") != 0)
        goto out;
    path = pheap_state.backup_path;
    snprintf(who, sizeof(who), "restore: %s", path);
    if (!pheap_state.backup_readable) {
        pheap_error("%s: no backup to restore yet: the file was opened with \"w+\" and backup() "
                    "was not called since; nothing was restored",
                    who);
        errno = ENOENT;
        goto out;
    }
    fd = openat(pheap_state.backup_dirfd, pheap_state.backup_name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        pheap_error("%s: cannot open: %s; nothing was restored", who, strerror(errno));
        goto out;
    }
    if (pheap_backup_check(fd, path, &hdr) != 0)
        goto out_close;
    /* The restored allocator may own more of the heap than is mapped now. */
    if (hdr.owned_size > pheap_state.map_size &&
        pheap_map_extend(pheap_page_round(hdr.owned_size), who, false) != 0)
        goto out_close; /* nothing was changed */
    if (pheap_backup_read_all(fd, pheap_state.map, hdr.image_size, PHEAP_BACKUP_IMAGE_OFFSET) !=
        0) {
        pheap_error("%s: cannot read: %s; the heap is now half restored: call restore() again, "
                    "or start a new heap",
                    who, strerror(errno));
        goto out_close;
    }
    /* The image's header describes the heap as it was mapped then; the mapping is now. */
    heap_hdr = pheap_header();
    heap_hdr->map_size = pheap_state.map_size;
    pheap_state.mspace = pheap_state.map + heap_hdr->mspace_offset;
    if (pheap_dlm_adopt(pheap_state.mspace, pheap_state.map,
                        pheap_state.map + heap_hdr->owned_size) != 0) {
        pheap_error("%s: damaged: the allocator's state points outside the heap; the heap is "
                    "now unusable: start a new heap",
                    who);
        errno = EINVAL;
        goto out_close;
    }
    if (pheap_globals_load(who) != 0)
        goto out_close;
    rc = 0;
out_close:
    close(fd);
out:
    pthread_mutex_unlock(&pheap_lock);
    return rc;
}
