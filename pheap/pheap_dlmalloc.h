/*
 * pheap_dlmalloc.h: the persistent heap's allocator, dlmalloc's mspace (pheap/README.md
 * says why this allocator). Every function expects pheap_lock held: the mspace is built
 * without locks of its own, so that no lock word is ever saved in a backup.
 *
 * An mspace keeps all its state inside the memory it manages: a byte copy of that memory,
 * put back at the same address, is the same allocator. The heap's memory comes from
 * pheap_map_grow() when the first region is full; it is never given back.
 */
#ifndef PHEAP_DLMALLOC_H
#define PHEAP_DLMALLOC_H

#include <stddef.h>

/**
 * A new allocator managing `capacity` bytes at `base` (its state at the start of them).
 * @return the allocator (a pointer into [base, base + capacity)), or NULL: too small
 */
void *pheap_dlm_create(void *base, size_t capacity);

/**
 * Take over an allocator found in memory (a heap file opened again, or a restored backup).
 * @param lo, hi  the memory it may use; its state must lie inside
 * @return 0, or -1 when its state points outside [lo, hi) (the heap is damaged)
 */
int pheap_dlm_adopt(void *ms, char *lo, char *hi);

/** End of the bytes the allocator uses: its state, every block, free or not, below the
 * free space at the top. A copy of [heap start, this) is all a backup needs. */
char *pheap_dlm_used_end(void *ms);

/* malloc's functions, in the mspace; NULL with errno ENOMEM when there is no room. A
 * pointer that is not a live block of the mspace ends the process (pheap_dlm_fatal). */
void *pheap_dlm_malloc(void *ms, size_t nbytes);
void *pheap_dlm_calloc(void *ms, size_t nmemb, size_t nbytes);
void *pheap_dlm_realloc(void *ms, void *ptr, size_t nbytes);
void *pheap_dlm_memalign(void *ms, size_t alignment, size_t nbytes);
void pheap_dlm_free(void *ms, void *ptr);

#endif /* PHEAP_DLMALLOC_H */
