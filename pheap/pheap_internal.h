/*
 * pheap_internal.h: what the files of libcrmpi-pheap share; nothing here is exported (the
 * library exports only the functions of crmpi/pheap.h).
 *
 *   pheap_globals.c   perm(), the program's identity, the copy of the PERM globals
 *   pheap_map.c       mopen/mclose/mflush: the heap file, its mapping and its growth
 *   pheap_backup.c    bopen/bclose/backup/restore
 *   pheap_alloc.c     perm_malloc and the other allocation functions
 *   pheap_dlmalloc.c  dlmalloc configured for the heap (pheap_dlmalloc.h)
 *   pheap_util.c      error messages, the environment the library reads, fault points
 *
 * Threading: one lock, pheap_lock, guards pheap_state and the allocator; every public
 * function takes it, and every function declared here expects it held (except the
 * pheap_util.c ones, which touch no state).
 */
#ifndef PHEAP_INTERNAL_H
#define PHEAP_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pheap_format.h"

/* The heap's address when CRMPI_PHEAP_ADDRESS does not say: 32 TiB, far from where Linux
 * puts programs (PIE near 0x55..., libraries and mmap() below the stack near 0x7f...) and
 * above the shadow memory of AddressSanitizer (which ends near 16 TiB). */
#define PHEAP_DEFAULT_ADDRESS ((uintptr_t)0x200000000000ULL)
/* Smallest heap mopen() creates: the header page, the allocator's state and some room. */
#define PHEAP_MIN_SIZE ((size_t)64 * 1024)

/* One block registered with perm(). */
typedef struct pheap_block {
    void *ptr;   /* its first byte (PERM_START) */
    size_t size; /* its bytes (PERM_SIZE) */
} pheap_block_t;

/* Everything the library knows; one heap and one backup file per process. */
typedef struct pheap_state {
    pheap_block_t blocks[PHEAP_MAX_BLOCKS]; /* registered with perm(), in order */
    unsigned nblocks;                       /* entries used in blocks */

    bool heap_open;  /* mopen() succeeded and mclose() was not called */
    int heap_fd;     /* the heap file, read-write, holding a write lock on it */
    char *heap_path; /* as given to mopen(), for messages */
    char *map;       /* the mapping, at the address in the header (which is map[0]) */
    size_t map_size; /* bytes mapped: the whole file */
    void *mspace;    /* the allocator's state, inside the mapping */

    bool backup_open;     /* bopen() succeeded and bclose() was not called */
    int backup_dirfd;     /* the directory of the backup file */
    char *backup_path;    /* as given to bopen(), for messages */
    char *backup_name;    /* its last component, inside backup_dirfd */
    bool backup_readable; /* may restore() read it: opened "r+", or a backup() since */
} pheap_state_t;

extern pthread_mutex_t pheap_lock;
extern pheap_state_t pheap_state;

/* The heap's header: the first bytes of the mapping. */
static inline pheap_heap_header_t *pheap_header(void)
{
    return (pheap_heap_header_t *)pheap_state.map;
}

/* ---- pheap_util.c ------------------------------------------------------------------- */

/** One line on stderr, "pheap: " and the message; errno is kept. */
void pheap_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * The heap address for a new heap: CRMPI_PHEAP_ADDRESS (a page-aligned number, 0x... for
 * hexadecimal) or PHEAP_DEFAULT_ADDRESS.
 * @return 0, or -1 (logged, errno EINVAL) when the variable is set and is not such a number
 */
int pheap_address_for_new_heap(uintptr_t *address_out);

/**
 * A fault point of backup() (named in CRMPI_FAULT, as in runtime/fault.h: "name" or
 * "name:N" for the N-th hit): when it fires the process says so and stops itself with
 * SIGSTOP, so that a test can kill it exactly there.
 */
void pheap_fault_stop(const char *name);

/** Round `nbytes` up to a multiple of the page size. */
size_t pheap_page_round(size_t nbytes);

/** Write `len` bytes at `buf` as hexadecimal into `out` (2 * len + 1 bytes). */
void pheap_hex(const uint8_t *buf, size_t len, char *out);

/* ---- pheap_globals.c ---------------------------------------------------------------- */

/** This program's identity: its build-id and the blocks registered with perm(). */
void pheap_identity_of_program(pheap_identity_t *id_out);

/**
 * Is the file whose identity is `file_id` from this program, with the same PERM blocks?
 * @param what      "mopen: app.mmap", "restore: app.back": the start of the message
 * @param check_layout  also compare the PERM blocks (false: the build-id only)
 * @param consequence  appended to the message ("; nothing was restored", or "")
 * @return 0, or -1 (logged, errno EINVAL)
 */
int pheap_identity_check(const pheap_identity_t *file_id, bool check_layout, const char *what,
                         const char *consequence);

/**
 * Copy the PERM globals into the heap (allocating the copy the first time, or again when
 * the blocks changed) and record this program's identity in the header.
 * @return 0, or -1 (logged, errno ENOMEM) when the heap has no room for the copy
 */
int pheap_globals_save(const char *who);

/**
 * Copy the PERM globals back from the heap's copy, if it has one; the identity must have
 * been checked (pheap_identity_check with check_layout).
 * @return 0, or -1 (logged, errno EINVAL) when the copy is not inside the heap
 */
int pheap_globals_load(const char *what);

/* ---- pheap_map.c -------------------------------------------------------------------- */

/**
 * Map more of the heap file: from pheap_state.map_size to `new_size`, right after the
 * current mapping, extending the file.
 * @param who  start of the message on failure ("perm_malloc", "restore: app.back")
 * @param quiet  say nothing on failure (a first, larger try)
 * @return 0, or -1 (logged unless quiet; errno EEXIST when the range is in use)
 */
int pheap_map_extend(size_t new_size, const char *who, bool quiet);

/**
 * dlmalloc's source of memory (its MMAP hook): the next `nbytes` of the heap after what the
 * allocator owns, mapping more of the file when needed.
 * @return the memory, or (void *)-1 (dlmalloc's MFAIL) when the heap cannot grow
 */
void *pheap_map_grow(size_t nbytes);

#endif /* PHEAP_INTERNAL_H */
