/*
 * btl_sm.h: the sm BTL's internals: shared memory between the ranks of one node
 * (docs/design.md, "Layers inside a rank" and "Platform facts the code relies on"). The contract it
 * implements is btl.h.
 *
 *   rank A's segment /dev/shm/crmpi-<jobid>-sm-<A>          (A maps all of it, reads)
 *   +----------------------+----------------------+----
 *   | FIFO B -> A          | FIFO C -> A          | ...   one region per local peer, in
 *   | (B maps this region) | (C maps this region) |       the order of their world ranks
 *   +----------------------+----------------------+----
 *
 * Each rank creates one receive segment in init, holding one single-producer
 * single-consumer FIFO (btl_sm_fifo.h) per local peer, and publishes its name and geometry
 * under the modex key "btl.sm". In add_procs each local peer's segment is opened and only
 * our region of it is mapped (writable: we write records and head); the fd is closed at
 * once, so the module holds no fd after add_procs. Once every local peer has mapped its
 * region (the BML's `connected`), the owner unlinks the segment's name: the memory lives
 * on in the mappings, and a job killed from then on leaves nothing in /dev/shm. Ranks live in
 * separate pid namespaces, so no single-copy mechanism (CMA, process_vm_readv) exists between them:
 * every byte goes through a FIFO, copy-in by the sender (the convertor packs straight into the
 * ring) and copy-out by the receiver's callback (which gets a pointer into the ring). Messages
 * above max_send_size are pipelined by the PML in fragments of that size.
 *
 * Memory: a rank's segment is (local ranks - 1) * (btl_sm_fifo_size + 4 KiB), allocated
 * in full at init (posix_fallocate: a full /dev/shm fails init with a warning, never a
 * SIGBUS later), so a node holds local_ranks^2 FIFOs: 4 ranks with 1 MiB FIFOs take 12 MiB,
 * 64 ranks 4 GiB. Lower btl_sm_fifo_size for many ranks per node.
 *
 * Selection: a peer goes to the module with the highest exclusivity that reaches it:
 * self 65536 > sm 32768 > tcp 1024. sm is not usable (CRMPI_ERR_NOT_SUPPORTED) on a rank
 * that has no other rank on its node, or whose segment cannot be created (warned); its
 * local peers then find nothing published and use another BTL towards it, as it does
 * towards them. A local peer that did publish a segment we cannot use fails add_procs
 * (and MPI_Init): it would still send to us through sm.
 *
 * Checkpoint/restart: not CKPT_FRIENDLY, decided by testing CRIU 4.1.1 here
 * (crs-criu/README.md): CRIU dumps a MAP_SHARED /dev/shm mapping by its path, not its
 * bytes, and restores it only if the same file exists with the same size, shared with
 * whatever process maps it then; a restart on another node or with other local peers has
 * neither. So INC finalizes the module before the dump (every segment unmapped, our own
 * unlinked) and the BML creates it again after, with new segments.
 *
 * Threading: as btl.h. Send and progress make no system call, take no lock and allocate
 * nothing; a receive callback may call send (on any module) but progress refuses to run
 * inside itself.
 */
#ifndef CRMPI_BTL_SM_H
#define CRMPI_BTL_SM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "btl.h"
#include "btl_sm_fifo.h"

/* Exclusivity of sm: below self (65536), above tcp (1024). */
#define BTL_SM_EXCLUSIVITY 32768u
/* Modex key of the published segment description. */
#define BTL_SM_MODEX_KEY "btl.sm"
/* Version of btl_sm_modex_t; a local peer of another version fails add_procs. */
#define BTL_SM_MODEX_VERSION 1u
/* Room for a shm_open name ("/crmpi-<jobid>-sm-<rank>"). */
#define BTL_SM_NAME_MAX 64

/* What a rank publishes about its receive segment. */
typedef struct btl_sm_modex {
    uint32_t version;           /* BTL_SM_MODEX_VERSION */
    uint32_t num_regions;       /* FIFO regions in the segment: the owner's local peers */
    uint64_t ring_size;         /* bytes in each region's ring */
    uint64_t region_size;       /* bytes from one region to the next (a page multiple) */
    char name[BTL_SM_NAME_MAX]; /* shm_open name of the segment (under /dev/shm) */
} btl_sm_modex_t;

/* One local peer. The BML holds pointers to these (add_procs' endpoints_out). */
struct crmpi_btl_endpoint {
    btl_sm_fifo_writer_t send; /* our FIFO in the peer's segment (valid while connected) */
    btl_sm_fifo_reader_t recv; /* the peer's FIFO in our segment (valid from init on) */
    uint32_t peer_rank;        /* the peer's rank in MPI_COMM_WORLD */
    uint32_t region;           /* index of the peer's FIFO in our segment */
    void *peer_map;            /* our region of the peer's segment, mapped; NULL if not */
    size_t peer_map_len;       /* bytes mapped at peer_map */
    bool connected;            /* add_procs reached it; del_procs has not removed it */
};

/* The module; `super` first, since the BML sees only that. */
typedef struct btl_sm_module {
    crmpi_btl_module_t super;       /* slots and limits the BML uses */
    uint64_t jobid;                 /* names the segments */
    uint32_t rank;                  /* ours, in MPI_COMM_WORLD */
    uint32_t num_local;             /* ranks on this node, this one included */
    uint32_t *local_ranks;          /* their world ranks, ascending (num_local) */
    uint32_t local_index;           /* our index in local_ranks */
    char seg_name[BTL_SM_NAME_MAX]; /* shm_open name of our segment */
    bool seg_unlinked;              /* the name is gone: every local peer had mapped it */
    char *seg_base;                 /* our segment, mapped (all regions) */
    size_t seg_size;                /* bytes mapped at seg_base */
    uint64_t ring_size;             /* bytes in each ring of our segment */
    uint64_t region_size;           /* bytes per region of our segment */
    crmpi_btl_endpoint_t *peers;    /* one per local peer, in region order */
    crmpi_btl_endpoint_t **polled;  /* connected peers, polled by progress */
    uint32_t num_polled;            /* entries in polled */
    uint32_t poll_start;            /* where the next progress starts (round-robin) */
    bool in_progress;               /* progress is running: a callback re-entered it */
} btl_sm_module_t;

/**
 * Create this rank's module: segment, FIFOs, modex publication (component init).
 * @return CRMPI_OK; CRMPI_ERR_NOT_SUPPORTED (no local peer; logged at verbose 10); any
 *         other error is logged.
 */
int btl_sm_module_create(const crmpi_rte_job_info_t *job, btl_sm_module_t **module_out);

/* The segment file (btl_sm_segment.c). */

/**
 * Create and map a segment of `size` bytes named `name`, replacing a leftover of the same
 * name (a previous job whose jobid was the same pid). The fd is closed before returning.
 * @return CRMPI_OK, or CRMPI_ERR_OUT_OF_RESOURCE / CRMPI_ERR_IO (logged)
 */
int btl_sm_segment_create(const char *name, size_t size, uint32_t rank, void **base_out);

/**
 * Map `len` bytes at `offset` of a peer's segment, read-write. The fd is closed before
 * returning.
 * @return CRMPI_OK, or CRMPI_ERR_NOT_FOUND / CRMPI_ERR_IO / CRMPI_ERR_PROTO (logged)
 */
int btl_sm_segment_map_peer(const char *name, size_t offset, size_t len, uint32_t rank,
                            uint32_t peer_rank, void **base_out);

/** Remove a segment's name (mappings stay valid until unmapped). Logs a failure. */
void btl_sm_segment_unlink(const char *name, uint32_t rank);

#endif /* CRMPI_BTL_SM_H */
