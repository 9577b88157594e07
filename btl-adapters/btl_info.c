/*
 * btl_info.c: catalog descriptors of the btl framework and its components (btl.h). Pure
 * data, linked into every binary so crmpi_info and unknown-parameter checks see them.
 * Each component declares its parameters beside its code (btl_<name>_info.c).
 */
#include "component.h"

extern const crmpi_component_info_t crmpi_btl_self_info;
extern const crmpi_component_info_t crmpi_btl_sm_info;
extern const crmpi_component_info_t crmpi_btl_tcp_info;
#if CRMPI_HAVE_LIBFABRIC /* the adapters built only with their library */
extern const crmpi_component_info_t crmpi_btl_ofi_info;
#endif
#if CRMPI_HAVE_UCX
extern const crmpi_component_info_t crmpi_btl_ucx_info;
#endif

/* clang-format off */
static const crmpi_component_info_t *const btl_components[] = {
    &crmpi_btl_self_info,
    &crmpi_btl_sm_info,
#if CRMPI_HAVE_LIBFABRIC
    &crmpi_btl_ofi_info,
#endif
#if CRMPI_HAVE_UCX
    &crmpi_btl_ucx_info,
#endif
    &crmpi_btl_tcp_info,
    NULL,
};
/* clang-format on */

const crmpi_framework_info_t crmpi_btl_framework_info = {
    .name = "btl",
    .description = "byte transfer: how a rank's messages reach its peers",
    .components = btl_components,
};
