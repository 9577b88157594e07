/*
 * pheap_alloc.c: perm_malloc(), perm_calloc(), perm_realloc(), perm_free() and
 * perm_memalign(): malloc's functions in the persistent heap.
 *
 * Each takes pheap_lock around one call of the allocator (pheap_dlmalloc.h). Without an
 * open heap they fail like an exhausted malloc (NULL, ENOMEM) and say why once per call.
 * A pointer given back that is not inside the heap ends the process with a message, as
 * glibc's free() does for a pointer it never gave out: continuing would damage the heap.
 * perm_free() with no heap open does nothing: the block belongs to a heap that was closed,
 * and stays in it. That is what the destructor of a PERM C++ container does when it runs
 * at exit, after mclose().
 */
#include <errno.h>
#include <stdlib.h>

#include "pheap_dlmalloc.h"
#include "pheap_internal.h"

#include <crmpi/pheap.h>

/* Is there a heap to allocate in? Says why not, for `who`. */
static bool pheap_alloc_ready(const char *who)
{
    if (pheap_state.heap_open)
        return true;
    pheap_error("%s: no persistent heap is open (call mopen() first)", who);
    errno = ENOMEM;
    return false;
}

/* End the process when `ptr` is not inside the heap's allocated part. */
static void pheap_alloc_check_pointer(const char *who, void *ptr)
{
    char *p = ptr;

    if (pheap_state.heap_open && p > pheap_state.map &&
        p < pheap_state.map + pheap_header()->owned_size)
        return;
    pheap_error("%s: %p is not a block of the persistent heap%s; aborting", who, ptr,
                pheap_state.heap_open ? "" : " (no heap is open)");
    abort();
}

void *perm_malloc(size_t size)
{
    void *p = NULL;

    pthread_mutex_lock(&pheap_lock);
    if (pheap_alloc_ready("perm_malloc"))
        p = pheap_dlm_malloc(pheap_state.mspace, size);
    pthread_mutex_unlock(&pheap_lock);
    return p;
}

void *perm_calloc(size_t nmemb, size_t size)
{
    void *p = NULL;

    pthread_mutex_lock(&pheap_lock);
    if (pheap_alloc_ready("perm_calloc"))
        p = pheap_dlm_calloc(pheap_state.mspace, nmemb, size);
    pthread_mutex_unlock(&pheap_lock);
    return p;
}

void *perm_realloc(void *ptr, size_t size)
{
    void *p = NULL;

    pthread_mutex_lock(&pheap_lock);
    if (ptr)
        pheap_alloc_check_pointer("perm_realloc", ptr);
    if (pheap_alloc_ready("perm_realloc"))
        p = pheap_dlm_realloc(pheap_state.mspace, ptr, size);
    pthread_mutex_unlock(&pheap_lock);
    return p;
}

void *perm_memalign(size_t alignment, size_t size)
{
    void *p = NULL;

    if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
        errno = EINVAL;
        return NULL;
    }
    pthread_mutex_lock(&pheap_lock);
    if (pheap_alloc_ready("perm_memalign"))
        p = pheap_dlm_memalign(pheap_state.mspace, alignment, size);
    pthread_mutex_unlock(&pheap_lock);
    return p;
}

void perm_free(void *ptr)
{
    if (!ptr)
        return;
    pthread_mutex_lock(&pheap_lock);
    if (pheap_state.heap_open) {
        pheap_alloc_check_pointer("perm_free", ptr);
        pheap_dlm_free(pheap_state.mspace, ptr);
    }
    pthread_mutex_unlock(&pheap_lock);
}
