/*
 * btl_self.c: the self BTL, a rank's messages to itself (btl.h).
 *
 * send() copies the fragment into a queue and progress() delivers it, never send() itself:
 * delivering from inside send would re-enter the PML in the middle of its own send.
 * Exclusivity 65536, the highest: nothing else should carry a rank's messages to itself.
 * Checkpoint-friendly: the module is plain heap memory, which CRIU restores as it was.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "btl.h"
#include "crmpi_status.h"
#include "log.h"

enum {
    BTL_SELF_EXCLUSIVITY = 65536,
    BTL_SELF_MAX_SEND_SIZE = 128 * 1024,
    BTL_SELF_EAGER_LIMIT = 64 * 1024,
};

/* A queued fragment. */
typedef struct btl_self_frag {
    struct btl_self_frag *next; /* next in the queue, in send order */
    uint8_t tag;                /* receive callback to deliver to */
    size_t len;                 /* bytes in data */
    char data[];                /* header, then payload */
} btl_self_frag_t;

typedef struct btl_self_module {
    crmpi_btl_module_t base; /* the slots; first, so the module pointer converts */
    uint32_t rank;           /* this rank, the only peer */
    btl_self_frag_t *head;   /* oldest queued fragment */
    btl_self_frag_t **tail;  /* where the next one is linked */
    bool delivering;         /* in progress(): a callback's sends wait for the next call */
} btl_self_module_t;

/* The one endpoint: any non-NULL value; it is never dereferenced. */
static char btl_self_endpoint_token;

static int btl_self_add_procs(crmpi_btl_module_t *module, size_t nprocs, const uint32_t *peer_ranks,
                              crmpi_btl_endpoint_t **endpoints_out)
{
    btl_self_module_t *self = (btl_self_module_t *)module;

    for (size_t i = 0; i < nprocs; i++) {
        endpoints_out[i] =
            peer_ranks[i] == self->rank ? (crmpi_btl_endpoint_t *)&btl_self_endpoint_token : NULL;
    }
    return CRMPI_OK;
}

static int btl_self_del_procs(crmpi_btl_module_t *module, size_t nprocs, const uint32_t *peer_ranks,
                              crmpi_btl_endpoint_t **endpoints)
{
    return CRMPI_OK;
}

static int btl_self_send(crmpi_btl_module_t *module, crmpi_btl_endpoint_t *endpoint, uint8_t tag,
                         const void *hdr, size_t hdr_len, crmpi_convertor_t *payload,
                         size_t payload_len)
{
    btl_self_module_t *self = (btl_self_module_t *)module;
    btl_self_frag_t *frag = malloc(sizeof(*frag) + hdr_len + payload_len);

    if (!frag)
        return CRMPI_ERR_RESOURCE_BUSY;
    frag->next = NULL;
    frag->tag = tag;
    frag->len = hdr_len + payload_len;
    memcpy(frag->data, hdr, hdr_len);
    if (payload_len)
        crmpi_convertor_pack(payload, frag->data + hdr_len, payload_len);
    *self->tail = frag;
    self->tail = &frag->next;
    return CRMPI_OK;
}

static int btl_self_progress(crmpi_btl_module_t *module)
{
    btl_self_module_t *self = (btl_self_module_t *)module;
    btl_self_frag_t *batch = self->head;
    int delivered = 0;

    if (!batch || self->delivering)
        return 0;
    /* Deliver only what was queued before this call: fragments a callback sends go to the
     * next call, so a callback that always answers cannot keep progress() here forever. */
    self->head = NULL;
    self->tail = &self->head;
    self->delivering = true;
    while (batch) {
        btl_self_frag_t *next = batch->next;
        crmpi_btl_recv_fn_t fn = crmpi_btl_recv_table[batch->tag];

        if (fn)
            fn(module, self->rank, batch->data, batch->len);
        else
            crmpi_log_error("btl:self: fragment with tag %u has no receiver; dropped", batch->tag);
        free(batch);
        batch = next;
        delivered++;
    }
    self->delivering = false;
    return delivered;
}

static int btl_self_finalize(crmpi_btl_module_t *module)
{
    btl_self_module_t *self = (btl_self_module_t *)module;

    while (self->head) {
        btl_self_frag_t *next = self->head->next;
        free(self->head);
        self->head = next;
    }
    free(self);
    return CRMPI_OK;
}

static int btl_self_init(const crmpi_rte_job_info_t *job, crmpi_btl_module_t **module_out)
{
    btl_self_module_t *self = calloc(1, sizeof(*self));

    if (!self) {
        crmpi_log_error("btl:self: out of memory");
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    self->base = (crmpi_btl_module_t){
        .name = "self",
        .exclusivity = BTL_SELF_EXCLUSIVITY,
        .flags = CRMPI_BTL_FLAG_CKPT_FRIENDLY,
        .max_send_size = BTL_SELF_MAX_SEND_SIZE,
        .eager_limit = BTL_SELF_EAGER_LIMIT,
        .add_procs = btl_self_add_procs,
        .del_procs = btl_self_del_procs,
        .send = btl_self_send,
        .progress = btl_self_progress,
        .finalize = btl_self_finalize,
    };
    self->rank = job->rank;
    self->tail = &self->head;
    *module_out = &self->base;
    return CRMPI_OK;
}

static const crmpi_btl_component_ops_t btl_self_ops = {.init = btl_self_init};

extern const crmpi_component_info_t crmpi_btl_self_info;

const crmpi_component_t crmpi_btl_self_component = {
    .info = &crmpi_btl_self_info,
    .query = NULL,
    .ops = &btl_self_ops,
};
