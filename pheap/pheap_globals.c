/*
 * pheap_globals.c: perm(), the PERM globals' copy inside the heap, and the identity that
 * says which program a heap or backup file belongs to.
 *
 * The identity is the main program's ELF build-id (GNU ld writes one by default; it
 * changes whenever the program's code or data change) and the sizes of the blocks given
 * to perm(). A backup restores raw bytes at raw addresses, so it is only meaningful for
 * the program that wrote it: both are compared before anything is overwritten. A program
 * linked without a build-id is identified by its blocks alone.
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "pheap_dlmalloc.h"
#include "pheap_internal.h"

#include <crmpi/pheap.h>

pthread_mutex_t pheap_lock = PTHREAD_MUTEX_INITIALIZER;
pheap_state_t pheap_state = {.heap_fd = -1, .backup_dirfd = -1};

int perm(void *ptr, size_t size)
{
    int rc = 0;

    /* Without PERM variables PERM_START is NULL and PERM_SIZE 0: nothing to register. */
    if (size == 0)
        return 0;
    if (!ptr) {
        pheap_error("perm: a block of %zu bytes at NULL", size);
        errno = EINVAL;
        return -1;
    }
    pthread_mutex_lock(&pheap_lock);
    for (unsigned i = 0; i < pheap_state.nblocks; i++) {
        pheap_block_t *b = &pheap_state.blocks[i];

        if (b->ptr == ptr) {
            b->size = size;
            goto out;
        }
        if ((char *)ptr < (char *)b->ptr + b->size && (char *)b->ptr < (char *)ptr + size) {
            pheap_error("perm: the block %p (%zu bytes) overlaps the block %p (%zu bytes) "
                        "registered before",
                        ptr, size, b->ptr, b->size);
            errno = EINVAL;
            rc = -1;
            goto out;
        }
    }
    if (pheap_state.nblocks == PHEAP_MAX_BLOCKS) {
        pheap_error("perm: already %d blocks registered, the most the library keeps",
                    PHEAP_MAX_BLOCKS);
        errno = ENOSPC;
        rc = -1;
        goto out;
    }
    pheap_state.blocks[pheap_state.nblocks++] = (pheap_block_t){.ptr = ptr, .size = size};
out:
    pthread_mutex_unlock(&pheap_lock);
    return rc;
}

/* dl_iterate_phdr() callback: the build-id note of the first object, the main program. */
static int pheap_identity_build_id(struct dl_phdr_info *info, size_t size, void *arg)
{
    pheap_identity_t *id = arg;

    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        const char *note = (const char *)(info->dlpi_addr + ph->p_vaddr);
        const char *end = note + ph->p_memsz;
        size_t align = ph->p_align == 8 ? 8 : 4;

        if (ph->p_type != PT_NOTE)
            continue;
        while (note + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)note;
            const char *name = note + sizeof(*nh);
            const char *desc = name + ((nh->n_namesz + align - 1) & ~(align - 1));

            if (desc + nh->n_descsz > end)
                break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
                nh->n_descsz <= PHEAP_BUILD_ID_MAX) {
                memcpy(id->build_id, desc, nh->n_descsz);
                id->build_id_len = nh->n_descsz;
                return 1;
            }
            note = desc + ((nh->n_descsz + align - 1) & ~(align - 1));
        }
    }
    return 1; /* only the first object: the main program */
}

void pheap_identity_of_program(pheap_identity_t *id_out)
{
    memset(id_out, 0, sizeof(*id_out));
    dl_iterate_phdr(pheap_identity_build_id, id_out);
    id_out->nblocks = pheap_state.nblocks;
    for (unsigned i = 0; i < pheap_state.nblocks; i++)
        id_out->block_size[i] = pheap_state.blocks[i].size;
}

/* "3 blocks: 24, 8, 4096 bytes" into `out`. */
static void pheap_identity_describe_blocks(const pheap_identity_t *id, char *out, size_t len)
{
    size_t used =
        (size_t)snprintf(out, len, "%u block%s", id->nblocks, id->nblocks == 1 ? "" : "s");

    for (unsigned i = 0; i < id->nblocks && i < PHEAP_MAX_BLOCKS && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%llu", i ? ", " : ": ",
                                 (unsigned long long)id->block_size[i]);
    if (id->nblocks && used < len)
        snprintf(out + used, len - used, " bytes");
}

int pheap_identity_check(const pheap_identity_t *file_id, bool check_layout, const char *what,
                         const char *consequence)
{
    pheap_identity_t mine;
    char file_text[2 * PHEAP_BUILD_ID_MAX + 200], my_text[2 * PHEAP_BUILD_ID_MAX + 200];

    pheap_identity_of_program(&mine);
    if (file_id->build_id_len > PHEAP_BUILD_ID_MAX || file_id->nblocks > PHEAP_MAX_BLOCKS) {
        pheap_error("%s: damaged: its header names an impossible program%s", what, consequence);
        errno = EINVAL;
        return -1;
    }
    if (file_id->build_id_len && mine.build_id_len &&
        (file_id->build_id_len != mine.build_id_len ||
         memcmp(file_id->build_id, mine.build_id, mine.build_id_len) != 0)) {
        pheap_hex(file_id->build_id, file_id->build_id_len, file_text);
        pheap_hex(mine.build_id, mine.build_id_len, my_text);
        pheap_error("%s: written by another program (build-id %s; this program's is %s); "
                    "a heap or backup is only valid for the program that wrote it%s",
                    what, file_text, my_text, consequence);
        errno = EINVAL;
        return -1;
    }
    if (!check_layout)
        return 0;
    if (file_id->nblocks != mine.nblocks ||
        memcmp(file_id->block_size, mine.block_size, mine.nblocks * sizeof(uint64_t)) != 0) {
        pheap_identity_describe_blocks(file_id, file_text, sizeof(file_text));
        pheap_identity_describe_blocks(&mine, my_text, sizeof(my_text));
        pheap_error("%s: its PERM globals (%s) do not match this program's, registered with "
                    "perm() (%s)%s",
                    what, file_text, my_text, consequence);
        errno = EINVAL;
        return -1;
    }
    return 0;
}

int pheap_globals_save(const char *who)
{
    pheap_heap_header_t *hdr = pheap_header();
    size_t total = 0;
    char *copy;

    for (unsigned i = 0; i < pheap_state.nblocks; i++)
        total += pheap_state.blocks[i].size;
    if (hdr->globals_offset && hdr->globals_size != total) {
        pheap_dlm_free(pheap_state.mspace, pheap_state.map + hdr->globals_offset);
        hdr->globals_offset = 0;
        hdr->globals_size = 0;
    }
    if (total && !hdr->globals_offset) {
        copy = pheap_dlm_malloc(pheap_state.mspace, total);
        if (!copy) {
            pheap_error("%s: %s: no room in the heap for the copy of the PERM globals "
                        "(%zu bytes)",
                        who, pheap_state.heap_path, total);
            errno = ENOMEM;
            return -1;
        }
        hdr->globals_offset = (uint64_t)(copy - pheap_state.map);
        hdr->globals_size = total;
    }
    copy = pheap_state.map + hdr->globals_offset;
    for (unsigned i = 0; i < pheap_state.nblocks; i++) {
        memcpy(copy, pheap_state.blocks[i].ptr, pheap_state.blocks[i].size);
        copy += pheap_state.blocks[i].size;
    }
    pheap_identity_of_program(&hdr->identity);
    return 0;
}

int pheap_globals_load(const char *what)
{
    const pheap_heap_header_t *hdr = pheap_header();
    const char *copy = pheap_state.map + hdr->globals_offset;
    size_t total = 0;

    if (!hdr->globals_offset)
        return 0;
    for (unsigned i = 0; i < pheap_state.nblocks; i++)
        total += pheap_state.blocks[i].size;
    if (hdr->globals_size != total || hdr->globals_offset > hdr->owned_size ||
        hdr->owned_size - hdr->globals_offset < total) {
        pheap_error("%s: damaged: the copy of the PERM globals (%llu bytes at offset %llu) "
                    "is not inside the heap or not their size (%zu bytes)",
                    what, (unsigned long long)hdr->globals_size,
                    (unsigned long long)hdr->globals_offset, total);
        errno = EINVAL;
        return -1;
    }
    for (unsigned i = 0; i < pheap_state.nblocks; i++) {
        memcpy(pheap_state.blocks[i].ptr, copy, pheap_state.blocks[i].size);
        copy += pheap_state.blocks[i].size;
    }
    return 0;
}
