/*
 * alloc_mem.c: MPI_Alloc_mem and MPI_Free_mem (MPI-3.1 section 8.2).
 *
 * No transport of crmpi needs registered or special memory, so the memory is the C
 * library's, aligned to a cache line. Each allocation is remembered in a hash set, so that
 * MPI_Free_mem can tell a pointer that MPI_Alloc_mem returned from any other: freeing one
 * that did not come from MPI_Alloc_mem (or was freed already) raises MPI_ERR_BASE, the class
 * section 8.2 gives for an invalid base, and frees nothing; free() on it could corrupt the
 * heap. MPI_Free_mem(NULL) does nothing, as free(NULL) does.
 *
 * The info argument may be MPI_INFO_NULL or any info object; crmpi knows no hints for it.
 * Errors belong to no communicator, so MPI_COMM_WORLD's handler decides (section 8.3).
 * Threading: the set is touched with the library lock held.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

#pragma weak MPI_Alloc_mem = PMPI_Alloc_mem
#pragma weak MPI_Free_mem = PMPI_Free_mem

/* Alignment of every allocation: a cache line, so that buffers never share one. */
#define ALLOC_MEM_ALIGN 64

/* A slot of the open-addressing set: empty, a live pointer, or a freed one's tombstone. */
#define ALLOC_MEM_EMPTY     ((void *)0)
#define ALLOC_MEM_TOMBSTONE ((void *)1)

/* The set of pointers MPI_Alloc_mem returned and MPI_Free_mem has not freed yet. */
static struct {
    void **slots;    /* capacity entries: EMPTY, TOMBSTONE or a live pointer */
    size_t capacity; /* a power of two, or 0 before the first allocation */
    size_t used;     /* live pointers plus tombstones: what slows a lookup */
    size_t live;     /* live pointers */
} alloc_mem_set;

/* Where `ptr` starts its probe: its address with the alignment bits mixed in. */
static size_t alloc_mem_hash(const void *ptr, size_t capacity)
{
    uint64_t key = (uint64_t)(uintptr_t)ptr;

    key ^= key >> 29;
    key *= UINT64_C(0x9e3779b97f4a7c15);
    key ^= key >> 32;
    return (size_t)key & (capacity - 1);
}

/* The slot of `ptr` in the set, or NULL when it is not there. */
static void **alloc_mem_find(const void *ptr)
{
    if (alloc_mem_set.capacity == 0) {
        return NULL;
    }
    for (size_t i = alloc_mem_hash(ptr, alloc_mem_set.capacity), n = 0; n < alloc_mem_set.capacity;
         i = (i + 1) & (alloc_mem_set.capacity - 1), n++) {
        if (alloc_mem_set.slots[i] == ALLOC_MEM_EMPTY) {
            return NULL;
        }
        if (alloc_mem_set.slots[i] == ptr) {
            return &alloc_mem_set.slots[i];
        }
    }
    return NULL;
}

/* Put a pointer known to be absent into a set with a free slot. */
static void alloc_mem_place(void **slots, size_t capacity, void *ptr)
{
    size_t i = alloc_mem_hash(ptr, capacity);

    while (slots[i] != ALLOC_MEM_EMPTY && slots[i] != ALLOC_MEM_TOMBSTONE) {
        i = (i + 1) & (capacity - 1);
    }
    slots[i] = ptr;
}

/* Make room for one more entry: at most half the slots used, tombstones dropped on regrow. */
static bool alloc_mem_reserve(void)
{
    if (2 * (alloc_mem_set.used + 1) <= alloc_mem_set.capacity) {
        return true;
    }
    size_t capacity = alloc_mem_set.capacity ? alloc_mem_set.capacity : 64;

    while (2 * (alloc_mem_set.live + 1) > capacity / 2) {
        capacity *= 2;
    }
    void **slots = calloc(capacity, sizeof(*slots));

    if (slots == NULL) {
        return false;
    }
    for (size_t i = 0; i < alloc_mem_set.capacity; i++) {
        void *ptr = alloc_mem_set.slots[i];

        if (ptr != ALLOC_MEM_EMPTY && ptr != ALLOC_MEM_TOMBSTONE) {
            alloc_mem_place(slots, capacity, ptr);
        }
    }
    free(alloc_mem_set.slots);
    alloc_mem_set.slots = slots;
    alloc_mem_set.capacity = capacity;
    alloc_mem_set.used = alloc_mem_set.live;
    return true;
}

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    static const char func_name[] = "MPI_Alloc_mem";
    char detail[160];
    void *memory = NULL;
    int rc;

    (void)info; /* no hint applies: every buffer is ordinary memory */
    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (size < 0) {
            snprintf(detail, sizeof(detail), "size is %td; it must not be negative", size);
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name, detail);
        }
        if (baseptr == NULL) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                               "baseptr is NULL");
        }
    }
    /* Size 0 still gets a distinct pointer, which MPI_Free_mem accepts. */
    rc = posix_memalign(&memory, ALLOC_MEM_ALIGN, size > 0 ? (size_t)size : 1);
    if (rc != 0) {
        snprintf(detail, sizeof(detail), "cannot allocate %td bytes (%s)", size, strerror(rc));
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_NO_MEM, func_name, detail);
    }
    if (!alloc_mem_reserve()) {
        free(memory);
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_NO_MEM, func_name,
                                           "out of memory for the table of allocations");
    }
    alloc_mem_place(alloc_mem_set.slots, alloc_mem_set.capacity, memory);
    alloc_mem_set.used++;
    alloc_mem_set.live++;
    /* baseptr is a void * only so that C accepts &pointer of any type (section 8.2). */
    memcpy(baseptr, &memory, sizeof(memory));
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Free_mem(void *base)
{
    static const char func_name[] = "MPI_Free_mem";
    char detail[160];
    void **slot;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (base == NULL) {
        crmpi_unlock();
        return MPI_SUCCESS;
    }
    slot = alloc_mem_find(base);
    if (slot == NULL) {
        /* Checked even without mpi_param_check: free() of a foreign pointer corrupts the
         * heap far from the mistake, and the lookup costs little next to free(). */
        snprintf(detail, sizeof(detail),
                 "%p did not come from MPI_Alloc_mem, or was freed already; nothing was freed",
                 base);
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_BASE, func_name, detail);
    }
    *slot = ALLOC_MEM_TOMBSTONE;
    alloc_mem_set.live--;
    free(base);
    crmpi_unlock();
    return MPI_SUCCESS;
}
