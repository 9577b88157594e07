/*
 * pheap_dlmalloc.c: dlmalloc 2.8.6 (dlmalloc/malloc.c, unmodified) configured as the
 * persistent heap's allocator, and the few functions that need its internals.
 *
 * The configuration makes an mspace that depends on nothing outside the heap:
 *   - mspaces only (no global malloc), built with create_mspace_with_base() on the heap;
 *   - no locks (USE_LOCKS 0): pheap_lock serialises every call, and no lock word is ever
 *     copied into a backup in a taken state;
 *   - no separate mappings for large blocks (mspace_track_large_chunks): every block is
 *     inside the heap, so a backup holds them all;
 *   - more memory comes from pheap_map_grow() (dlmalloc's MMAP hook), contiguous with the
 *     heap, and is never unmapped (MUNMAP fails): the heap's extent only grows;
 *   - FOOTERS stays 0, so no chunk carries the per-process random "magic" value;
 *   - errors call pheap_dlm_fatal() with a message, instead of a bare abort().
 * What is left in process memory (dlmalloc's mparams: page size, granularity, thresholds)
 * is computed again in each process and saved nowhere.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "pheap_dlmalloc.h"
#include "pheap_internal.h"

static void pheap_dlm_fatal(const char *what, const void *ptr) __attribute__((noreturn));

/* Compile upstream's code at each of wasi-libc's marked changes (dlmalloc/README.md). */
#define __wasilibc_unmodified_upstream 1
#define ONLY_MSPACES                   1
#define USE_LOCKS                      0
#define HAVE_MORECORE                  0
#define HAVE_MMAP                      1
#define HAVE_MREMAP                    0
#define MMAP(nbytes)                   pheap_map_grow(nbytes)
#define DIRECT_MMAP(nbytes)            ((void *)~(size_t)0)
#define MUNMAP(addr, nbytes)           (-1)
#define NO_MALLOC_STATS                1
#define MALLOC_FAILURE_ACTION          errno = ENOMEM;
#define USAGE_ERROR_ACTION(m, p)                                                                   \
    pheap_dlm_fatal("perm_free/perm_realloc: a pointer that is not a live block", p)
#define CORRUPTION_ERROR_ACTION(m)                                                                 \
    pheap_dlm_fatal("the allocator's state in the heap is damaged", NULL)
/* Everything of dlmalloc stays inside this file; the functions below are the interface. */
#define DLMALLOC_EXPORT static

/* Third-party code: its own style, and warnings that are not ours to fix. The functions of
 * dlmalloc this file does not call are unused: that is reported at the end of the file. */
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#include "malloc.c" /* dlmalloc 2.8.6, from $(DLMALLOC_DIR): pheap/README.md */
#pragma GCC diagnostic pop

static void pheap_dlm_fatal(const char *what, const void *ptr)
{
    if (ptr)
        pheap_error("%s (%p); aborting", what, ptr);
    else
        pheap_error("%s; aborting", what);
    abort();
}

void *pheap_dlm_create(void *base, size_t capacity)
{
    mspace ms = create_mspace_with_base(base, capacity, 0);

    if (ms)
        mspace_track_large_chunks(ms, 1);
    return ms;
}

int pheap_dlm_adopt(void *ms, char *lo, char *hi)
{
    mstate m = (mstate)ms;
    char *top = (char *)m->top;

    ensure_initialization();
    if ((char *)m < lo || (char *)m + sizeof(*m) > hi || top < lo || top > hi ||
        m->topsize > (size_t)(hi - top) || (size_t)(hi - top) - m->topsize < TOP_FOOT_SIZE)
        return -1;
    /* The fake chunk after the top chunk, as init_top() writes it: a backup ends at the top
     * chunk's header, so after a restore over a heap that had grown since, the bytes there
     * are whatever the later growth left. */
    chunk_plus_offset(m->top, m->topsize)->head = TOP_FOOT_SIZE;
    return 0;
}

char *pheap_dlm_used_end(void *ms)
{
    mstate m = (mstate)ms;

    return (char *)chunk2mem(m->top);
}

void *pheap_dlm_malloc(void *ms, size_t nbytes)
{
    return mspace_malloc(ms, nbytes);
}

void *pheap_dlm_calloc(void *ms, size_t nmemb, size_t nbytes)
{
    return mspace_calloc(ms, nmemb, nbytes);
}

void *pheap_dlm_realloc(void *ms, void *ptr, size_t nbytes)
{
    return mspace_realloc(ms, ptr, nbytes);
}

void *pheap_dlm_memalign(void *ms, size_t alignment, size_t nbytes)
{
    return mspace_memalign(ms, alignment, nbytes);
}

void pheap_dlm_free(void *ms, void *ptr)
{
    mspace_free(ms, ptr);
}
