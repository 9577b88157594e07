/*
 * pheap_map.c: the heap file and its mapping: mopen(), mclose(), mflush(), and the growth
 * of the heap when the allocator needs more memory.
 *
 * The file is mapped whole, MAP_SHARED (stores go to the file's pages) and MAP_NORESERVE
 * (no swap is reserved, so a heap may be larger than memory: the file's pages are its
 * backing store), at the address its header names. That address is fixed when the file
 * is created, so that the pointers stored in the heap mean the same thing in every run.
 * Mapping never replaces anything already there: MAP_FIXED_NOREPLACE fails with EEXIST
 * when any page of the range is in use, and the message names what occupies it (read
 * from /proc/self/maps). Kernels before 4.17 ignore the flag and may place the mapping
 * elsewhere; that is detected and treated the same way.
 *
 * A heap grows at its end: the file is extended and the new part mapped right after the
 * old one, again without replacing anything. The heap is locked (a POSIX write lock on
 * the file) while a process has it open, so two processes never map one heap.
 *
 * A child made by fork() does not inherit the heap: the mapping is shared, so a child that
 * allocated, or ran a PERM container's destructor at exit, would change its parent's heap
 * under it. A pthread_atfork() handler unmaps the heap in the child, which then has no
 * heap open (and no backup file).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pheap_dlmalloc.h"
#include "pheap_internal.h"

#include <crmpi/pheap.h>

/* The mmap() flags of every part of the heap. */
#define PHEAP_MAP_FLAGS (MAP_SHARED | MAP_NORESERVE | MAP_FIXED_NOREPLACE)

/* What occupies [addr, addr + len): "/path (0x...-0x...)" of the first mapping there. */
static void pheap_map_occupant(uintptr_t addr, size_t len, char *out, size_t out_len)
{
    FILE *maps = fopen("/proc/self/maps", "re");
    char line[4096];

    snprintf(out, out_len, "a mapping this process cannot identify");
    if (!maps)
        return;
    while (fgets(line, sizeof(line), maps)) {
        unsigned long start, end;
        int path_at = 0;
        char *path;

        if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &start, &end, &path_at) < 2)
            continue;
        if (end <= addr || start >= addr + len)
            continue;
        path = line + path_at;
        path[strcspn(path, "\n")] = '\0';
        snprintf(out, out_len, "%s (0x%lx-0x%lx)", *path ? path : "an anonymous mapping", start,
                 end);
        break;
    }
    fclose(maps);
}

/*
 * Map `len` bytes of the heap file from `offset` at exactly `addr`, never over an existing
 * mapping. On failure says why, starting with `who`, unless `quiet`.
 */
static int pheap_map_at(uintptr_t addr, size_t len, int fd, off_t offset, const char *who,
                        bool quiet)
{
    void *p = mmap((void *)addr, len, PROT_READ | PROT_WRITE, PHEAP_MAP_FLAGS, fd, offset);
    char occupant[4200];

    if (p != MAP_FAILED && p != (void *)addr) {
        munmap(p, len); /* an old kernel took the address as a hint */
        p = MAP_FAILED;
        errno = EEXIST;
    }
    if (p != MAP_FAILED)
        return 0;
    if (quiet)
        return -1;
    if (errno == EEXIST) {
        pheap_map_occupant(addr, len, occupant, sizeof(occupant));
        pheap_error("%s: cannot map %zu bytes at 0x%llx: the range is in use by %s; the "
                    "heap must be at this address and nothing there is replaced",
                    who, len, (unsigned long long)addr, occupant);
        errno = EEXIST;
    } else {
        pheap_error("%s: cannot map %zu bytes at 0x%llx: %s", who, len, (unsigned long long)addr,
                    strerror(errno));
    }
    return -1;
}

/* Lock the heap file for this process; says who holds it when another process does. */
static int pheap_map_lock_file(int fd, const char *path)
{
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};

    if (fcntl(fd, F_SETLK, &fl) == 0)
        return 0;
    if (errno == EACCES || errno == EAGAIN) {
        struct flock holder = fl;

        if (fcntl(fd, F_GETLK, &holder) == 0 && holder.l_type != F_UNLCK)
            pheap_error("mopen: %s: the heap is open in process %d; one process at a time may "
                        "open a heap",
                        path, (int)holder.l_pid);
        else
            pheap_error("mopen: %s: the heap is open in another process", path);
        errno = EBUSY;
        return -1;
    }
    pheap_error("mopen: %s: cannot lock the file: %s", path, strerror(errno));
    return -1;
}

/* mopen "w+": a new heap of `size` bytes in the (locked) file `fd`. */
static int pheap_map_create(int fd, const char *path, size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t map_size = pheap_page_round(size);
    pheap_heap_header_t *hdr;
    uintptr_t addr;
    char who[300];

    if (pheap_address_for_new_heap(&addr) != 0)
        return -1;
    snprintf(who, sizeof(who), "mopen: %s", path);
    /* Map before touching the file: a refused address leaves an old heap file intact. */
    if (pheap_map_at(addr, map_size, fd, 0, who, false) != 0)
        return -1;
    if (ftruncate(fd, 0) != 0 || ftruncate(fd, (off_t)map_size) != 0) {
        pheap_error("mopen: %s: cannot size the file to %zu bytes: %s", path, map_size,
                    strerror(errno));
        goto err_unmap;
    }
    pheap_state.map = (char *)addr;
    pheap_state.map_size = map_size;
    hdr = pheap_header();
    memcpy(hdr->magic, PHEAP_HEAP_MAGIC, PHEAP_MAGIC_LEN);
    hdr->version = PHEAP_FORMAT_VERSION;
    hdr->header_size = sizeof(*hdr);
    hdr->map_address = addr;
    hdr->map_size = map_size;
    hdr->owned_size = map_size;
    pheap_state.mspace = pheap_dlm_create(pheap_state.map + page, map_size - page);
    if (!pheap_state.mspace) {
        pheap_error("mopen: %s: the allocator cannot start in %zu bytes", path, map_size - page);
        errno = EINVAL;
        goto err_unmap;
    }
    hdr->mspace_offset = (uint64_t)((char *)pheap_state.mspace - pheap_state.map);
    pheap_identity_of_program(&hdr->identity);
    return 0;

err_unmap:
    munmap((void *)addr, map_size);
    pheap_state.map = NULL;
    pheap_state.map_size = 0;
    return -1;
}

/* mopen "r+": the heap in the (locked) file `fd`, mapped with at least `size` bytes. */
static int pheap_map_attach(int fd, const char *path, size_t size)
{
    pheap_heap_header_t disk, *hdr;
    struct stat st;
    size_t map_size;
    ssize_t got;
    char who[300];

    snprintf(who, sizeof(who), "mopen: %s", path);
    got = pread(fd, &disk, sizeof(disk), 0);
    if (got < 0) {
        pheap_error("%s: cannot read: %s", who, strerror(errno));
        return -1;
    }
    if ((size_t)got < sizeof(disk) || memcmp(disk.magic, PHEAP_HEAP_MAGIC, PHEAP_MAGIC_LEN)) {
        pheap_error("%s: not a persistent heap file (open it with \"w+\" to make a new heap "
                    "there)",
                    who);
        errno = EINVAL;
        return -1;
    }
    if (disk.version != PHEAP_FORMAT_VERSION) {
        pheap_error("%s: a heap file of format version %u; this library reads version %d", who,
                    disk.version, PHEAP_FORMAT_VERSION);
        errno = EINVAL;
        return -1;
    }
    if (fstat(fd, &st) != 0) {
        pheap_error("%s: cannot stat: %s", who, strerror(errno));
        return -1;
    }
    if ((uint64_t)st.st_size < disk.owned_size || disk.owned_size < PHEAP_MIN_SIZE ||
        disk.mspace_offset >= disk.owned_size) {
        pheap_error("%s: damaged: %lld bytes, but its header says the allocator owns %llu", who,
                    (long long)st.st_size, (unsigned long long)disk.owned_size);
        errno = EINVAL;
        return -1;
    }
    if (pheap_identity_check(&disk.identity, false, who, "") != 0)
        return -1;
    map_size = pheap_page_round((size_t)st.st_size);
    if (size > map_size)
        map_size = pheap_page_round(size);
    if (pheap_map_at((uintptr_t)disk.map_address, map_size, fd, 0, who, false) != 0)
        return -1;
    if ((uint64_t)st.st_size < map_size && ftruncate(fd, (off_t)map_size) != 0) {
        pheap_error("%s: cannot grow the file to %zu bytes: %s", who, map_size, strerror(errno));
        goto err_unmap;
    }
    pheap_state.map = (char *)(uintptr_t)disk.map_address;
    pheap_state.map_size = map_size;
    hdr = pheap_header();
    hdr->map_size = map_size;
    pheap_state.mspace = pheap_state.map + hdr->mspace_offset;
    if (pheap_dlm_adopt(pheap_state.mspace, pheap_state.map, pheap_state.map + hdr->owned_size) !=
        0) {
        pheap_error("%s: damaged: the allocator's state points outside the heap", who);
        errno = EINVAL;
        goto err_unmap;
    }
    /* The globals saved by the last mflush(), mclose() or backup(), when there are any. */
    if (hdr->globals_offset) {
        if (pheap_identity_check(&hdr->identity, true, who, "") != 0 ||
            pheap_globals_load(who) != 0)
            goto err_unmap;
    }
    return 0;

err_unmap:
    munmap(pheap_state.map ? pheap_state.map : (void *)(uintptr_t)disk.map_address, map_size);
    pheap_state.map = NULL;
    pheap_state.map_size = 0;
    pheap_state.mspace = NULL;
    return -1;
}

/* fork(): hold the lock across it, so that the child's copy of the state is consistent. */
static void pheap_map_fork_prepare(void)
{
    pthread_mutex_lock(&pheap_lock);
}

static void pheap_map_fork_parent(void)
{
    pthread_mutex_unlock(&pheap_lock);
}

/* The child forgets the heap and the backup file (see the top of this file). */
static void pheap_map_fork_child(void)
{
    if (pheap_state.heap_open) {
        munmap(pheap_state.map, pheap_state.map_size);
        close(pheap_state.heap_fd);
        free(pheap_state.heap_path);
        pheap_state.heap_open = false;
        pheap_state.heap_fd = -1;
        pheap_state.heap_path = NULL;
        pheap_state.map = NULL;
        pheap_state.map_size = 0;
        pheap_state.mspace = NULL;
    }
    if (pheap_state.backup_open) {
        close(pheap_state.backup_dirfd);
        free(pheap_state.backup_path);
        free(pheap_state.backup_name);
        pheap_state.backup_open = false;
        pheap_state.backup_dirfd = -1;
        pheap_state.backup_path = NULL;
        pheap_state.backup_name = NULL;
        pheap_state.backup_readable = false;
    }
    pthread_mutex_unlock(&pheap_lock);
}

static pthread_once_t pheap_map_fork_once = PTHREAD_ONCE_INIT;

static void pheap_map_fork_register(void)
{
    pthread_atfork(pheap_map_fork_prepare, pheap_map_fork_parent, pheap_map_fork_child);
}

int mopen(const char *fname, const char *mode, size_t size)
{
    bool create;
    int fd, rc = -1;

    if (!fname || !mode || (strcmp(mode, "w+") != 0 && strcmp(mode, "r+") != 0)) {
        pheap_error("mopen: %s: mode \"%s\" is not one of \"w+\" (a new heap) and \"r+\" (an "
                    "existing one)",
                    fname ? fname : "(null)", mode ? mode : "(null)");
        errno = EINVAL;
        return -1;
    }
    create = mode[0] == 'w';
    pthread_once(&pheap_map_fork_once, pheap_map_fork_register);
    if (create && size < PHEAP_MIN_SIZE) {
        pheap_error("mopen: %s: a heap of %zu bytes is too small (at least %zu)", fname, size,
                    PHEAP_MIN_SIZE);
        errno = EINVAL;
        return -1;
    }
    pthread_mutex_lock(&pheap_lock);
    if (pheap_state.heap_open) {
        pheap_error("mopen: %s: a heap is already open (%s); mclose() it first", fname,
                    pheap_state.heap_path);
        errno = EBUSY;
        goto out;
    }
    fd = open(fname, O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0644);
    if (fd < 0) {
        if (errno == ENOENT && !create)
            pheap_error("mopen: %s: no such heap file (\"w+\" creates one)", fname);
        else
            pheap_error("mopen: %s: cannot open: %s", fname, strerror(errno));
        goto out;
    }
    pheap_state.heap_path = strdup(fname);
    if (!pheap_state.heap_path) {
        pheap_error("mopen: %s: out of memory", fname);
        errno = ENOMEM;
        goto err_close;
    }
    if (pheap_map_lock_file(fd, fname) != 0)
        goto err_free;
    pheap_state.heap_fd = fd;
    if ((create ? pheap_map_create(fd, fname, size) : pheap_map_attach(fd, fname, size)) != 0)
        goto err_free;
    pheap_state.heap_open = true;
    rc = 0;
    goto out;

err_free:
    free(pheap_state.heap_path);
    pheap_state.heap_path = NULL;
    pheap_state.heap_fd = -1;
err_close:
    close(fd); /* also drops the lock */
out:
    pthread_mutex_unlock(&pheap_lock);
    return rc;
}

int mclose(void)
{
    int rc = 0;

    pthread_mutex_lock(&pheap_lock);
    if (!pheap_state.heap_open) {
        pheap_error("mclose: no heap is open");
        errno = EBADF;
        pthread_mutex_unlock(&pheap_lock);
        return -1;
    }
    /* The heap keeps the globals of its last state; the kernel writes the pages back. */
    if (pheap_globals_save("mclose") != 0)
        rc = -1;
    munmap(pheap_state.map, pheap_state.map_size);
    close(pheap_state.heap_fd);
    free(pheap_state.heap_path);
    pheap_state.heap_open = false;
    pheap_state.heap_fd = -1;
    pheap_state.heap_path = NULL;
    pheap_state.map = NULL;
    pheap_state.map_size = 0;
    pheap_state.mspace = NULL;
    pthread_mutex_unlock(&pheap_lock);
    return rc;
}

int mflush(void)
{
    int rc = -1;

    pthread_mutex_lock(&pheap_lock);
    if (!pheap_state.heap_open) {
        pheap_error("mflush: no heap is open (call mopen() first)");
        errno = EBADF;
        goto out;
    }
    if (pheap_globals_save("mflush") != 0)
        goto out;
    /* Only the pages written since they were last written back cost anything. */
    if (msync(pheap_state.map, pheap_state.map_size, MS_SYNC) != 0) {
        pheap_error("mflush: %s: cannot write the heap's pages to the file: %s",
                    pheap_state.heap_path, strerror(errno));
        goto out;
    }
    rc = 0;
out:
    pthread_mutex_unlock(&pheap_lock);
    return rc;
}

int pheap_map_extend(size_t new_size, const char *who, bool quiet)
{
    size_t old_size = pheap_state.map_size;
    uintptr_t at = (uintptr_t)pheap_state.map + old_size;

    if (new_size <= old_size)
        return 0;
    if (pheap_map_at(at, new_size - old_size, pheap_state.heap_fd, (off_t)old_size, who, quiet) !=
        0)
        return -1;
    if (ftruncate(pheap_state.heap_fd, (off_t)new_size) != 0) {
        if (!quiet)
            pheap_error("%s: %s: cannot grow the file to %zu bytes: %s", who, pheap_state.heap_path,
                        new_size, strerror(errno));
        munmap((void *)at, new_size - old_size);
        return -1;
    }
    pheap_state.map_size = new_size;
    pheap_header()->map_size = new_size;
    return 0;
}

void *pheap_map_grow(size_t nbytes)
{
    pheap_heap_header_t *hdr = pheap_header();
    size_t need = pheap_page_round((size_t)hdr->owned_size + nbytes);
    char *p;

    if (need > pheap_state.map_size) {
        /* Double the mapping when the address space allows, so that growing costs a few
         * calls in a heap's life; else take just what is needed. */
        size_t doubled = 2 * pheap_state.map_size;

        if ((doubled <= need || pheap_map_extend(doubled, "perm_malloc", true) != 0) &&
            pheap_map_extend(need, "perm_malloc: growing the heap", false) != 0)
            return (void *)~(uintptr_t)0;
    }
    p = pheap_state.map + hdr->owned_size;
    hdr->owned_size += nbytes;
    return p;
}
