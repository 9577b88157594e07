/*
 * btl_sm_fifo.h: one single-producer single-consumer FIFO of variable-size records in
 * shared memory. The producer is one local peer (the sender); the consumer is the rank
 * whose segment holds the FIFO (the receiver). Layout of one FIFO region:
 *
 *   region start (page-aligned; the sender maps just this region of the peer's segment)
 *   +0     head line  -- written by the sender only: bytes published so far
 *   +128   tail line  -- written by the receiver only: bytes released so far
 *   +256   info line  -- written once by the receiver at init, checked by the sender
 *   +4096  ring       -- ring_size bytes of records
 *
 *   record:  | len | tag | kind | pad |  len bytes (the send's header, then its payload)  |..|
 *            '------- 8 bytes --------'                       padded to a 64-byte multiple -'
 *
 * head and tail are free-running 64-bit byte counters (they never wrap: 2^64 bytes), so
 * used = head - tail and free = ring_size - used. A record that does not fit before the
 * ring's end is preceded by a wrap marker (kind BTL_SM_REC_WRAP) and goes at offset 0; the
 * skipped bytes count in head and tail. Each side keeps its own ring offset privately, so
 * neither ever divides, and any ring_size that is a multiple of 64 works.
 *
 * Memory order (C11): the sender writes the record, then stores head (release); the
 * receiver loads head (acquire), reads the records up to it, runs the callback, then
 * stores tail (release); the sender loads tail (acquire) before reusing the space.
 *
 * Cache-line traffic: head and tail are 128 bytes apart, since the adjacent-line
 * prefetchers of x86 cores pull lines in pairs and would otherwise make them false-share.
 * Records are 64-byte aligned, so the receiver reading one record never steals the line
 * the sender is filling with the next. The sender keeps the tail it last read and reads
 * the shared tail again only when that cached value says "full": a stream of sends does
 * not pull the receiver's tail line across at every record.
 *
 * Threading: one writer state per (sender, FIFO) and one reader state per (receiver, FIFO),
 * each used by one thread (the library lock's holder). Nothing here blocks, allocates or
 * makes a system call.
 */
#ifndef CRMPI_BTL_SM_FIFO_H
#define CRMPI_BTL_SM_FIFO_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Two cache lines: the unit that x86 adjacent-line prefetchers move. */
#define BTL_SM_FIFO_LINE_PAIR 128
/* Records start on cache-line boundaries. */
#define BTL_SM_FIFO_ALIGN 64
/* The ring starts one page into its region (page-aligned data; control lines before it). */
#define BTL_SM_FIFO_RING_OFFSET 4096
/* "crmpisf0" in the info line of a region formatted by an sm receiver. */
#define BTL_SM_FIFO_MAGIC 0x63726d7069736630ull
/* Layout of the region and of records; a sender refuses a region of another version. */
#define BTL_SM_FIFO_VERSION 1u

/* Kinds of record. 0 is never written, so a stray zero header is recognisably bad. */
enum {
    BTL_SM_REC_DATA = 1, /* a fragment for the callback of `tag` */
    BTL_SM_REC_WRAP = 2, /* skip to the ring's start: the next record did not fit here */
};

/* Header of every record in the ring. */
typedef struct btl_sm_fifo_rec {
    uint32_t len;      /* bytes after this header: the send's hdr_len + payload_len */
    uint8_t tag;       /* the receive callback (crmpi_btl_recv_table index) */
    uint8_t kind;      /* BTL_SM_REC_DATA or BTL_SM_REC_WRAP */
    uint16_t reserved; /* zero; room for flags without a version change */
} btl_sm_fifo_rec_t;

/* Constants of a region, written by the receiver before it publishes its segment. */
typedef struct btl_sm_fifo_info {
    uint64_t magic;       /* BTL_SM_FIFO_MAGIC */
    uint32_t version;     /* BTL_SM_FIFO_VERSION */
    uint32_t owner_rank;  /* the receiver (the segment's owner), rank in MPI_COMM_WORLD */
    uint32_t sender_rank; /* the one rank allowed to write this FIFO */
    uint32_t reserved;    /* zero */
    uint64_t ring_size;   /* bytes in the ring; a multiple of BTL_SM_FIFO_ALIGN */
} btl_sm_fifo_info_t;

/* The control block at the start of a region; shared by the two ranks. */
typedef struct btl_sm_fifo_ctrl {
    _Alignas(BTL_SM_FIFO_LINE_PAIR) _Atomic uint64_t head;   /* bytes published (sender) */
    _Alignas(BTL_SM_FIFO_LINE_PAIR) _Atomic uint64_t tail;   /* bytes released (receiver) */
    _Alignas(BTL_SM_FIFO_LINE_PAIR) btl_sm_fifo_info_t info; /* constant after init */
} btl_sm_fifo_ctrl_t;

_Static_assert(sizeof(btl_sm_fifo_ctrl_t) <= BTL_SM_FIFO_RING_OFFSET,
               "the control block must fit before the ring");
_Static_assert(sizeof(btl_sm_fifo_rec_t) == 8, "a record header is 8 bytes");
/* The two processes share the counters: they must not hide a lock inside the process. */
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "64-bit atomics must be lock-free");

/* The sender's private view of one FIFO in a peer's segment. */
typedef struct btl_sm_fifo_writer {
    btl_sm_fifo_ctrl_t *ctrl; /* the region's control block (peer's segment, mapped here) */
    char *ring;               /* the region's ring */
    uint64_t ring_size;       /* bytes in the ring (from the region's info) */
    uint64_t head;            /* our copy of ctrl->head: nobody else writes it */
    uint64_t cached_tail;     /* ctrl->tail when last read; re-read only when it says full */
    uint64_t offset;          /* ring offset of the next record */
    uint64_t next_head;       /* between reserve and commit: head after the record */
    uint64_t next_offset;     /* between reserve and commit: offset after the record */
} btl_sm_fifo_writer_t;

/* The receiver's private view of one FIFO of its own segment. */
typedef struct btl_sm_fifo_reader {
    btl_sm_fifo_ctrl_t *ctrl; /* the region's control block (our segment) */
    char *ring;               /* the region's ring */
    uint64_t ring_size;       /* bytes in the ring */
    uint64_t tail;            /* our copy of ctrl->tail: nobody else writes it */
    uint64_t offset;          /* ring offset of the next record */
} btl_sm_fifo_reader_t;

/** Bytes a record of `len` bytes (after its header) occupies in the ring. */
static inline uint64_t btl_sm_fifo_record_size(uint64_t len)
{
    return (sizeof(btl_sm_fifo_rec_t) + len + BTL_SM_FIFO_ALIGN - 1) &
           ~(uint64_t)(BTL_SM_FIFO_ALIGN - 1);
}

/** Smallest ring that takes records of up to `max_len` bytes: a record that wraps can
 *  waste up to one record's size at the ring's end, so the ring holds two. */
static inline uint64_t btl_sm_fifo_min_ring_size(uint64_t max_len)
{
    return 2 * btl_sm_fifo_record_size(max_len);
}

/**
 * Format a region (the receiver, before publishing its segment): info, zero counters.
 * @param region  BTL_SM_FIFO_RING_OFFSET + ring_size bytes, zero-filled
 */
void btl_sm_fifo_format(void *region, uint64_t ring_size, uint32_t owner_rank,
                        uint32_t sender_rank);

/** Start reading a region this rank formatted. */
void btl_sm_fifo_reader_init(btl_sm_fifo_reader_t *reader, void *region);

/**
 * Start writing a region of a peer's segment, after checking that the peer formatted it
 * for this pair of ranks with a layout this build understands.
 * @param region_len  bytes mapped at region
 * @param why_out     on failure, a static string saying what does not match
 * @return CRMPI_OK, or CRMPI_ERR_PROTO (the region is not what was expected)
 */
int btl_sm_fifo_writer_init(btl_sm_fifo_writer_t *writer, void *region, size_t region_len,
                            uint32_t owner_rank, uint32_t sender_rank, const char **why_out);

/**
 * Make room for a record of `len` bytes with `tag` and write its header.
 * @return where to write the len bytes; NULL when the ring has no room now (nothing
 *         changed, nothing visible). Publish with btl_sm_fifo_commit().
 */
static inline void *btl_sm_fifo_reserve(btl_sm_fifo_writer_t *writer, uint32_t len, uint8_t tag)
{
    uint64_t rec_size = btl_sm_fifo_record_size(len);
    uint64_t offset = writer->offset;
    uint64_t consumed = rec_size;
    btl_sm_fifo_rec_t *rec;

    /* Not enough room before the end: the bytes up to the end are skipped. */
    if (offset + rec_size > writer->ring_size)
        consumed += writer->ring_size - offset;
    if (writer->head + consumed - writer->cached_tail > writer->ring_size) {
        writer->cached_tail = atomic_load_explicit(&writer->ctrl->tail, memory_order_acquire);
        if (writer->head + consumed - writer->cached_tail > writer->ring_size)
            return NULL;
    }
    if (consumed != rec_size) {
        /* Beyond head, so invisible to the receiver until the commit. */
        rec = (btl_sm_fifo_rec_t *)(writer->ring + offset);
        *rec = (btl_sm_fifo_rec_t){.len = 0, .tag = 0, .kind = BTL_SM_REC_WRAP};
        offset = 0;
    }
    rec = (btl_sm_fifo_rec_t *)(writer->ring + offset);
    *rec = (btl_sm_fifo_rec_t){.len = len, .tag = tag, .kind = BTL_SM_REC_DATA};
    offset += rec_size;
    writer->next_offset = offset == writer->ring_size ? 0 : offset;
    writer->next_head = writer->head + consumed;
    return rec + 1;
}

/** Publish the record of the last successful btl_sm_fifo_reserve(). */
static inline void btl_sm_fifo_commit(btl_sm_fifo_writer_t *writer)
{
    writer->head = writer->next_head;
    writer->offset = writer->next_offset;
    atomic_store_explicit(&writer->ctrl->head, writer->head, memory_order_release);
}

/** Bytes published up to now (acquire: the records before it are readable). */
static inline uint64_t btl_sm_fifo_published(const btl_sm_fifo_reader_t *reader)
{
    return atomic_load_explicit(&reader->ctrl->head, memory_order_acquire);
}

/**
 * The next record, skipping a wrap marker. Call only while reader->tail differs from a
 * value btl_sm_fifo_published() returned: a wrap marker is always published together with
 * the record after it.
 */
static inline const btl_sm_fifo_rec_t *btl_sm_fifo_front(btl_sm_fifo_reader_t *reader)
{
    const btl_sm_fifo_rec_t *rec = (const btl_sm_fifo_rec_t *)(reader->ring + reader->offset);

    if (rec->kind == BTL_SM_REC_WRAP) {
        reader->tail += reader->ring_size - reader->offset;
        reader->offset = 0;
        rec = (const btl_sm_fifo_rec_t *)reader->ring;
    }
    return rec;
}

/** Give the front record's space (of `len` bytes after its header) back to the sender. */
static inline void btl_sm_fifo_release(btl_sm_fifo_reader_t *reader, uint32_t len)
{
    uint64_t rec_size = btl_sm_fifo_record_size(len);

    reader->offset += rec_size;
    if (reader->offset == reader->ring_size)
        reader->offset = 0;
    reader->tail += rec_size;
    atomic_store_explicit(&reader->ctrl->tail, reader->tail, memory_order_release);
}

#endif /* CRMPI_BTL_SM_FIFO_H */
