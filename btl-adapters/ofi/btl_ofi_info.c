/*
 * btl_ofi_info.c: catalog descriptor of the ofi BTL and its parameters (btl_ofi.h).
 */
#include "component.h"

static const crmpi_param_decl_t btl_ofi_params[] = {
    {"btl_ofi_provider", CRMPI_PARAM_STRING, "",
     "libfabric provider to use, as libfabric names it (tcp;ofi_rxm, sockets, udp;ofi_rxd, "
     "shm, or a NIC's: verbs;ofi_rxm, psm3...). Empty: the first usable of tcp;ofi_rxm and "
     "sockets. shm reaches only the ranks of the same node.",
     CRMPI_PARAM_LEVEL_USER},
    {"btl_ofi_domain", CRMPI_PARAM_STRING, "",
     "The provider's domain, as libfabric names it; for tcp;ofi_rxm, sockets and udp;ofi_rxd "
     "a network interface (eth0, lo). Empty: the provider's first domain.",
     CRMPI_PARAM_LEVEL_USER},
    {"btl_ofi_library", CRMPI_PARAM_STRING, "libfabric.so.1",
     "The libfabric shared library loaded at run time: a name the dynamic loader finds, or "
     "a path.",
     CRMPI_PARAM_LEVEL_USER},
    {"btl_ofi_eager_limit", CRMPI_PARAM_SIZE, "65536",
     "Largest message the PML sends through ofi without a rendezvous.", CRMPI_PARAM_LEVEL_TUNER},
    {"btl_ofi_max_send_size", CRMPI_PARAM_SIZE, "262144",
     "Largest fragment (header and data) of one send, and the size of every send and receive "
     "buffer; longer messages are pipelined. Every rank must use the same value.",
     CRMPI_PARAM_LEVEL_TUNER},
    {"btl_ofi_send_buffers", CRMPI_PARAM_INT, "16",
     "Send buffers in the pool, each of btl_ofi_max_send_size; when all are in flight, "
     "sends wait for completions. At most the provider's transmit queue.",
     CRMPI_PARAM_LEVEL_TUNER},
    {"btl_ofi_recv_buffers", CRMPI_PARAM_INT, "32",
     "Receive buffers kept posted, each of btl_ofi_max_send_size, shared by every sender. "
     "At most the provider's receive queue.",
     CRMPI_PARAM_LEVEL_TUNER},
    {"btl_ofi_recv_place", CRMPI_PARAM_BOOL, "0",
     "Take large rendezvous fragments as a header, then their payload as a tagged message "
     "received straight into the receive buffer (the PML names it when the header arrives), "
     "instead of through a receive buffer and a copy. Needs a provider with tagged messages "
     "and without FI_MR_LOCAL; ranks may differ (a sender uses it towards a rank that takes "
     "it).",
     CRMPI_PARAM_LEVEL_TUNER},
};

const crmpi_component_info_t crmpi_btl_ofi_info = {
    .framework = "btl",
    .name = "ofi",
    .description = "libfabric: a provider's reliable datagram endpoint (tcp;ofi_rxm, sockets, "
                   "a NIC's)",
    .params = btl_ofi_params,
    .num_params = sizeof(btl_ofi_params) / sizeof(btl_ofi_params[0]),
};
