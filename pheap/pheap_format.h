/*
 * pheap_format.h: the two files of the persistent heap, as they are on disk.
 *
 *   heap file (mopen)                         backup file (backup; restore)
 *   0     pheap_heap_header_t                 0     pheap_backup_header_t
 *   page  the allocator (dlmalloc mspace):    4096  image: the heap file's first
 *         its state, then the blocks, the           image_size bytes as mapped (its
 *         copy of the PERM globals among them       header, the allocator, the blocks)
 *   owned_size  reserve: mapped, not yet            = what restore() copies back
 *         given to the allocator
 *   map_size    end of the file
 *
 * The heap file is mapped whole at map_address, so its header is in memory at that
 * address and the bytes of the file are the bytes of the heap. A backup is a header and a
 * copy of the heap's used part (everything below the allocator's free top chunk); restore
 * writes that copy back at the same address and the PERM globals from the copy inside it.
 *
 * Both headers carry a format name and a version; integers are in the machine's byte
 * order (a heap holds raw pointers, so it is only ever read on the machine type that wrote
 * it). A later version may add fields at the end, within header_size, and must not reuse a
 * field for another meaning.
 */
#ifndef PHEAP_FORMAT_H
#define PHEAP_FORMAT_H

#include <stdint.h>

/* Format names, NUL-padded to 16 bytes. */
#define PHEAP_HEAP_MAGIC     "crmpi-pheap-heap"
#define PHEAP_BACKUP_MAGIC   "crmpi-pheap-bkup"
#define PHEAP_MAGIC_LEN      16
#define PHEAP_FORMAT_VERSION 1

/* Offset of the image in a backup file (the header is padded to it). */
#define PHEAP_BACKUP_IMAGE_OFFSET 4096
/* Most PERM blocks a program may register with perm(). */
#define PHEAP_MAX_BLOCKS 16
/* Longest ELF build-id recorded (GNU ld writes 20 bytes, SHA-1, by default). */
#define PHEAP_BUILD_ID_MAX 64

/* Which program wrote a file, and the shape of its PERM globals. */
typedef struct pheap_identity {
    uint32_t build_id_len;                 /* bytes of build_id; 0: the program has none */
    uint32_t nblocks;                      /* PERM blocks registered with perm() */
    uint8_t build_id[PHEAP_BUILD_ID_MAX];  /* the main program's ELF NT_GNU_BUILD_ID */
    uint64_t block_size[PHEAP_MAX_BLOCKS]; /* size of each block, in registration order */
} pheap_identity_t;

/* The first bytes of a heap file, and so of the heap's mapping. */
typedef struct pheap_heap_header {
    char magic[PHEAP_MAGIC_LEN]; /* PHEAP_HEAP_MAGIC */
    uint32_t version;            /* PHEAP_FORMAT_VERSION */
    uint32_t header_size;        /* sizeof(pheap_heap_header_t) when written */
    uint64_t map_address;        /* where the file is mapped; fixed when it is created */
    uint64_t map_size;           /* bytes of the file, all mapped */
    uint64_t owned_size;         /* bytes from map_address the allocator owns */
    uint64_t mspace_offset;      /* the allocator's state (dlmalloc mspace), from map_address */
    uint64_t globals_offset;     /* copy of the PERM globals from map_address, or 0: none */
    uint64_t globals_size;       /* bytes of that copy (the sum of identity.block_size) */
    pheap_identity_t identity;   /* the program whose globals are in the copy */
} pheap_heap_header_t;

/* The header of a backup file, followed at PHEAP_BACKUP_IMAGE_OFFSET by the image. */
typedef struct pheap_backup_header {
    char magic[PHEAP_MAGIC_LEN]; /* PHEAP_BACKUP_MAGIC */
    uint32_t version;            /* PHEAP_FORMAT_VERSION */
    uint32_t header_size;        /* sizeof(pheap_backup_header_t) when written */
    uint64_t map_address;        /* the heap's address: restore needs the same one */
    uint64_t image_size;         /* bytes of the image (the heap's used part) */
    uint64_t owned_size;         /* the allocator's extent: restore maps at least this much */
    uint64_t backup_time_ns;     /* CLOCK_REALTIME when backup() wrote it, for people */
    pheap_identity_t identity;   /* the program that wrote it */
} pheap_backup_header_t;

#endif /* PHEAP_FORMAT_H */
