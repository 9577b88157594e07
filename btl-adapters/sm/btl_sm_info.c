/*
 * btl_sm_info.c: catalog descriptor of the sm BTL and its parameters.
 */
#include "component.h"

static const crmpi_param_decl_t btl_sm_params[] = {
    {"btl_sm_eager_limit", CRMPI_PARAM_SIZE, "4096",
     "Largest message the PML sends through sm without a rendezvous.", CRMPI_PARAM_LEVEL_TUNER},
    {"btl_sm_fifo_size", CRMPI_PARAM_SIZE, "1048576",
     "Bytes of each shared-memory FIFO from one local peer to this rank; bounds the data in "
     "flight from that peer.",
     CRMPI_PARAM_LEVEL_TUNER},
    {"btl_sm_max_send_size", CRMPI_PARAM_SIZE, "32768",
     "Largest fragment (header and data) sent through a FIFO; longer messages are pipelined "
     "in fragments of this size.",
     CRMPI_PARAM_LEVEL_TUNER},
};

const crmpi_component_info_t crmpi_btl_sm_info = {
    .framework = "btl",
    .name = "sm",
    .description = "shared memory between the ranks of one node (FIFOs in /dev/shm)",
    .params = btl_sm_params,
    .num_params = sizeof(btl_sm_params) / sizeof(btl_sm_params[0]),
};
