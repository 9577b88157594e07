/*
 * btl_sm_fifo.c: formatting and attaching FIFO regions (btl_sm_fifo.h). The send and
 * receive paths are inline in the header.
 */
#include "config.h"

#include "btl_sm_fifo.h"

#include <string.h>

#include "crmpi_status.h"

void btl_sm_fifo_format(void *region, uint64_t ring_size, uint32_t owner_rank, uint32_t sender_rank)
{
    btl_sm_fifo_ctrl_t *ctrl = region;

    atomic_store_explicit(&ctrl->head, 0, memory_order_relaxed);
    atomic_store_explicit(&ctrl->tail, 0, memory_order_relaxed);
    ctrl->info = (btl_sm_fifo_info_t){
        .magic = BTL_SM_FIFO_MAGIC,
        .version = BTL_SM_FIFO_VERSION,
        .owner_rank = owner_rank,
        .sender_rank = sender_rank,
        .ring_size = ring_size,
    };
}

/*
 * Attaching derives the ring offset from the counter: every byte the counters move, the
 * offset moves too (wrap padding runs exactly to the ring's end), so offset is always
 * counter % ring_size. Re-attaching (del_procs then add_procs, or after a restore) thus
 * continues where the FIFO stands.
 */
void btl_sm_fifo_reader_init(btl_sm_fifo_reader_t *reader, void *region)
{
    btl_sm_fifo_ctrl_t *ctrl = region;
    uint64_t tail = atomic_load_explicit(&ctrl->tail, memory_order_relaxed);

    *reader = (btl_sm_fifo_reader_t){
        .ctrl = ctrl,
        .ring = (char *)region + BTL_SM_FIFO_RING_OFFSET,
        .ring_size = ctrl->info.ring_size,
        .tail = tail,
        .offset = tail % ctrl->info.ring_size,
    };
}

int btl_sm_fifo_writer_init(btl_sm_fifo_writer_t *writer, void *region, size_t region_len,
                            uint32_t owner_rank, uint32_t sender_rank, const char **why_out)
{
    const btl_sm_fifo_ctrl_t *ctrl = region;
    const btl_sm_fifo_info_t *info = &ctrl->info;
    uint64_t head;

    if (info->magic != BTL_SM_FIFO_MAGIC) {
        *why_out = "no FIFO at the expected place (bad magic)";
        return CRMPI_ERR_PROTO;
    }
    if (info->version != BTL_SM_FIFO_VERSION) {
        *why_out = "FIFO layout of another crmpi version";
        return CRMPI_ERR_PROTO;
    }
    if (info->owner_rank != owner_rank || info->sender_rank != sender_rank) {
        *why_out = "the FIFO there belongs to another pair of ranks";
        return CRMPI_ERR_PROTO;
    }
    if (info->ring_size == 0 || info->ring_size % BTL_SM_FIFO_ALIGN != 0 ||
        info->ring_size > region_len - BTL_SM_FIFO_RING_OFFSET) {
        *why_out = "the FIFO's ring size does not fit its region";
        return CRMPI_ERR_PROTO;
    }
    /* head is ours: the value there is the one we stored last (or 0). */
    head = atomic_load_explicit(&ctrl->head, memory_order_relaxed);
    *writer = (btl_sm_fifo_writer_t){
        .ctrl = region,
        .ring = (char *)region + BTL_SM_FIFO_RING_OFFSET,
        .ring_size = info->ring_size,
        .head = head,
        .cached_tail = atomic_load_explicit(&ctrl->tail, memory_order_acquire),
        .offset = head % info->ring_size,
    };
    return CRMPI_OK;
}
