/*
 * btl_tcp_info.c: catalog descriptor of the tcp BTL and its parameters.
 */
#include "component.h"

static const crmpi_param_decl_t btl_tcp_params[] = {
    {"btl_tcp_eager_limit", CRMPI_PARAM_SIZE, "65536",
     "Largest message the PML sends through tcp without a rendezvous.", CRMPI_PARAM_LEVEL_TUNER},
    {"btl_tcp_if_include", CRMPI_PARAM_STRING, "",
     "Comma-separated interface names or CIDR subnets to use (eth0,10.0.0.0/24); empty means "
     "every interface that is up. Exclusive with btl_tcp_if_exclude.",
     CRMPI_PARAM_LEVEL_USER},
    {"btl_tcp_if_exclude", CRMPI_PARAM_STRING, "",
     "Comma-separated interface names or CIDR subnets not to use.", CRMPI_PARAM_LEVEL_USER},
    {"btl_tcp_max_send_size", CRMPI_PARAM_SIZE, "131072",
     "Largest fragment (header and data) one send writes; longer messages are pipelined.",
     CRMPI_PARAM_LEVEL_TUNER},
    {"btl_tcp_recv_place", CRMPI_PARAM_BOOL, "1",
     "Receive large rendezvous fragments straight into the receive buffer (the PML names it "
     "when the fragment's header arrives) instead of into the connection's buffer first; 0 "
     "copies every payload once more, as a point of comparison.",
     CRMPI_PARAM_LEVEL_TUNER},
    {"btl_tcp_sndbuf", CRMPI_PARAM_SIZE, "0",
     "SO_SNDBUF of each connection in bytes; 0 keeps the kernel's autotuning.",
     CRMPI_PARAM_LEVEL_TUNER},
    {"btl_tcp_rcvbuf", CRMPI_PARAM_SIZE, "0",
     "SO_RCVBUF of each connection in bytes; 0 keeps the kernel's autotuning.",
     CRMPI_PARAM_LEVEL_TUNER},
};

const crmpi_component_info_t crmpi_btl_tcp_info = {
    .framework = "btl",
    .name = "tcp",
    .description = "TCP sockets between any two ranks (connected on first use)",
    .params = btl_tcp_params,
    .num_params = sizeof(btl_tcp_params) / sizeof(btl_tcp_params[0]),
};
