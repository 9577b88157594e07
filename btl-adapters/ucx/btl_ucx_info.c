/*
 * btl_ucx_info.c: catalog descriptor of the ucx BTL and its parameters (btl_ucx.h).
 */
#include "component.h"

static const crmpi_param_decl_t btl_ucx_params[] = {
    {"btl_ucx_tls", CRMPI_PARAM_STRING, "",
     "UCX transports to use, as UCX_TLS names them (tcp, sm, posix, sysv, cma, self, a NIC's: "
     "rc, ud...). Replaces UCX_TLS; empty: UCX_TLS if set, else UCX's own choice. Given to "
     "ompi-restart, it changes the transports of a restarted job (whose environment is the "
     "checkpointed one's).",
     CRMPI_PARAM_LEVEL_USER},
    {"btl_ucx_net_devices", CRMPI_PARAM_STRING, "",
     "Network devices UCX may use, as UCX_NET_DEVICES names them (lo, eth0, mlx5_0:1). "
     "Replaces UCX_NET_DEVICES; empty: UCX_NET_DEVICES if set, else every device.",
     CRMPI_PARAM_LEVEL_USER},
    {"btl_ucx_library", CRMPI_PARAM_STRING, "libucp.so.0",
     "UCX's libucp, loaded at run time: a name the dynamic loader finds, or a path.",
     CRMPI_PARAM_LEVEL_USER},
    {"btl_ucx_priority", CRMPI_PARAM_INT, "10",
     "Order among BTLs of the same exclusivity (ucx and ofi): higher is used first.",
     CRMPI_PARAM_LEVEL_TUNER},
    {"btl_ucx_eager_limit", CRMPI_PARAM_SIZE, "65536",
     "Largest message the PML sends through ucx without a rendezvous.", CRMPI_PARAM_LEVEL_TUNER},
    {"btl_ucx_max_send_size", CRMPI_PARAM_SIZE, "262144",
     "Largest fragment (header and data) of one send; longer messages are pipelined.",
     CRMPI_PARAM_LEVEL_TUNER},
    {"btl_ucx_max_sends", CRMPI_PARAM_INT, "64",
     "Sends in flight (not yet completed by UCX) before sends wait for progress; each holds "
     "a copy of its fragment.",
     CRMPI_PARAM_LEVEL_TUNER},
    {"btl_ucx_finalize_timeout", CRMPI_PARAM_INT, "10000",
     "Milliseconds finalize (also before a checkpoint's dump) waits for UCX to flush what is "
     "in flight, and again for the endpoints to close, while a peer does not progress; what "
     "is left then is dropped and said.",
     CRMPI_PARAM_LEVEL_TUNER},
    {"btl_ucx_recv_place", CRMPI_PARAM_BOOL, "0",
     "Take large rendezvous fragments by UCX's rendezvous, their payload received straight "
     "into the receive buffer (the PML names it when the header arrives), instead of eager "
     "through UCX's buffers and a copy. Ranks may differ (a sender uses it towards a rank "
     "that takes it).",
     CRMPI_PARAM_LEVEL_TUNER},
};

const crmpi_component_info_t crmpi_btl_ucx_info = {
    .framework = "btl",
    .name = "ucx",
    .description = "UCX: UCP active messages over the transports UCX selects (tcp, shared "
                   "memory, a NIC's)",
    .params = btl_ucx_params,
    .num_params = sizeof(btl_ucx_params) / sizeof(btl_ucx_params[0]),
};
