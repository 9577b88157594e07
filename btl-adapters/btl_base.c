/*
 * btl_base.c: the btl framework's shared code (btl.h): the receive-callback table and the
 * framework object the BML selects components from.
 */
#include "config.h"

#include "btl.h"

#include <string.h>

#include "crmpi_status.h"

crmpi_btl_recv_fn_t crmpi_btl_recv_table[CRMPI_BTL_TAG_MAX];

int crmpi_btl_register_recv(uint8_t tag, crmpi_btl_recv_fn_t fn)
{
    if (tag >= CRMPI_BTL_TAG_MAX)
        return CRMPI_ERR_BAD_PARAM;
    if (crmpi_btl_recv_table[tag] && crmpi_btl_recv_table[tag] != fn)
        return CRMPI_ERR_EXISTS;
    crmpi_btl_recv_table[tag] = fn;
    return CRMPI_OK;
}

crmpi_btl_placer_t crmpi_btl_place_table[CRMPI_BTL_TAG_MAX];

int crmpi_btl_register_place(uint8_t tag, size_t hdr_len, crmpi_btl_place_fn_t place,
                             crmpi_btl_placed_fn_t placed)
{
    crmpi_btl_placer_t *slot;

    if (tag >= CRMPI_BTL_TAG_MAX || hdr_len == 0 || !place || !placed)
        return CRMPI_ERR_BAD_PARAM;
    slot = &crmpi_btl_place_table[tag];
    if (slot->hdr_len && (slot->place != place || slot->placed != placed))
        return CRMPI_ERR_EXISTS;
    *slot = (crmpi_btl_placer_t){.hdr_len = hdr_len, .place = place, .placed = placed};
    return CRMPI_OK;
}

bool crmpi_btl_place_valid(const crmpi_btl_place_t *place, size_t payload_len)
{
    size_t total = place->discard;

    if (place->iovcnt < 0 || place->iovcnt > CRMPI_BTL_PLACE_IOV_MAX)
        return false;
    for (int i = 0; i < place->iovcnt; i++)
        total += place->iov[i].iov_len;
    return total == payload_len;
}

void crmpi_btl_place_copy(const crmpi_btl_place_t *place, const void *payload)
{
    const char *src = payload;

    for (int i = 0; i < place->iovcnt; i++) {
        memcpy(place->iov[i].iov_base, src, place->iov[i].iov_len);
        src += place->iov[i].iov_len;
    }
}

extern const crmpi_framework_info_t crmpi_btl_framework_info;
extern const crmpi_component_t crmpi_btl_self_component;
extern const crmpi_component_t crmpi_btl_sm_component;
extern const crmpi_component_t crmpi_btl_tcp_component;
#if CRMPI_HAVE_LIBFABRIC /* the adapters built only with their library */
extern const crmpi_component_t crmpi_btl_ofi_component;
#endif
#if CRMPI_HAVE_UCX
extern const crmpi_component_t crmpi_btl_ucx_component;
#endif

/* In preference order (the catalog's order): a peer reachable by several goes to the
 * highest exclusivity anyway; this order only decides the order of initialisation. */
/* clang-format off */
static const crmpi_component_t *const btl_base_components[] = {
    &crmpi_btl_self_component,
    &crmpi_btl_sm_component,
#if CRMPI_HAVE_LIBFABRIC
    &crmpi_btl_ofi_component,
#endif
#if CRMPI_HAVE_UCX
    &crmpi_btl_ucx_component,
#endif
    &crmpi_btl_tcp_component,
    NULL,
};
/* clang-format on */

crmpi_framework_t crmpi_btl_framework = {
    .info = &crmpi_btl_framework_info,
    .components = btl_base_components,
};
