/*
 * crmpi/pheap.h: a persistent heap for application-level checkpoints (libcrmpi-pheap).
 *
 * The interface of the memory-mapped checkpointing paper (Wong, Lloyd and Gokhale, "A
 * Memory-mapped Approach to Checkpointing"), so that programs written for it build as they
 * are. It needs no MPI: link with -lcrmpi-pheap (mpicc adds the directories).
 *
 *   process memory                      heap file (mopen)            backup file (bopen)
 *   +-------------------+   mflush    +---------------------+ backup +------------------+
 *   | PERM globals      | ----------> | header | globals copy| -----> | header           |
 *   | (section          | <---------- | allocator state     | <----- | the heap's used  |
 *   |  "persistent")    |   restore   | perm_malloc'ed data | restore| bytes, as mapped |
 *   +-------------------+             +---------------------+        +------------------+
 *                                       mapped MAP_SHARED at a fixed address
 *
 * Lifecycle: perm(PERM_START, PERM_SIZE) -> mopen(heap, "w+" | "r+", size) ->
 * bopen(backup, "w+" | "r+") -> [restore()] -> { perm_malloc ... backup() }* -> bclose() ->
 * mclose(). perm() comes before mopen(); mopen() and bopen() before any allocation.
 *
 * The heap lives in a file mapped at one fixed address, recorded in the file, so pointers
 * stored in the heap or in PERM globals stay valid in a later run: restore() copies the
 * last backup into the heap and the PERM globals back in place. The allocator's own state
 * is inside the heap, so blocks allocated before a restore can be freed or reallocated
 * after it, in the same process or in a new one.
 *
 * Errors: a function returning int returns 0 on success and -1 on failure, with errno set
 * and one line on stderr saying what failed, why and what to do ("pheap: restore: ...").
 * The allocation functions return NULL with errno ENOMEM, as malloc does. A failed call
 * changes nothing, except where its page says otherwise.
 *
 * Threads: every function may be called from any thread; they are serialised by one lock.
 * backup() and restore() copy what the other threads' stores have left in memory: call
 * them at a point where no thread modifies persistent data. A child made by fork() has no
 * heap open: the parent's is unmapped in it.
 *
 * See pheap(3) and the pages of each function.
 */
#ifndef CRMPI_PHEAP_H
#define CRMPI_PHEAP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * PERM marks a global (or static) variable persistent: the linker gathers every such
 * variable into the section "persistent", which backup() saves and restore() brings back.
 * PERM_START and PERM_SIZE give that section to perm(); without any PERM variable, they
 * are NULL and 0. A PERM variable must not be const.
 */
#define PERM __attribute__((section("persistent")))

/* The linker's bounds of the section; weak, so that a program without PERM links. */
extern char __start_persistent[] __attribute__((weak));
extern char __stop_persistent[] __attribute__((weak));

#define PERM_START ((void *)__start_persistent)
#define PERM_SIZE  ((size_t)(__stop_persistent - __start_persistent))

/** Register `size` bytes at `ptr` (the PERM section) as persistent; see perm(3). */
int perm(void *ptr, size_t size);

/** Open the heap file `fname` ("w+" new, "r+" existing) and map it; see mopen(3). */
int mopen(const char *fname, const char *mode, size_t size);

/** Save the PERM globals into the heap and unmap it; see mopen(3). */
int mclose(void);

/** Save the PERM globals into the heap and write its changed pages to the file. */
int mflush(void);

/** Name the backup file `fname` ("w+" new, "r+" existing); see bopen(3). */
int bopen(const char *fname, const char *mode);

/** Forget the backup file; see bopen(3). */
int bclose(void);

/** The backup file bopen() named, as an absolute path, into `buf` (`len` bytes); not in the
 *  paper: MPIX_Checkpoint uses it to store the backup in the job's snapshot. @return 0, or
 *  -1 with errno ENOENT (no backup file open) or ERANGE (`len` too small). */
int pheap_backup_file(char *buf, size_t len);

/** Save the PERM globals and the heap into the backup file, atomically; see backup(3). */
int backup(void);

/** Bring back the heap and the PERM globals from the backup file; see backup(3). */
int restore(void);

/* The allocator of the persistent heap (see perm_malloc(3)): malloc's semantics, in the
 * heap; the blocks are 16-byte aligned. perm_free() aborts, with a message, on a pointer
 * that is not in the open heap, and does nothing when no heap is open (after mclose(), a
 * PERM C++ container's destructor at exit frees into a heap that is gone). */
void *perm_malloc(size_t size);
void *perm_calloc(size_t nmemb, size_t size);
void *perm_realloc(void *ptr, size_t size);
void perm_free(void *ptr);
/** A block aligned to `alignment` (a power of two); not in the paper, used by the C++
 * allocator for over-aligned types. */
void *perm_memalign(size_t alignment, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* CRMPI_PHEAP_H */
