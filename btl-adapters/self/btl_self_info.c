/*
 * btl_self_info.c: catalog descriptor of the self BTL (a rank's messages to itself).
 */
#include "component.h"

const crmpi_component_info_t crmpi_btl_self_info = {
    .framework = "btl",
    .name = "self",
    .description = "loopback: a rank's messages to itself, copied in process",
    .params = NULL,
    .num_params = 0,
};
