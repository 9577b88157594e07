/*
 * pml_info.c: catalog descriptors of the pml framework and its one component, ob1 (pml.h).
 */
#include "component.h"

static const crmpi_param_decl_t pml_ob1_params[] = {
    {"pml_ob1_eager_limit", CRMPI_PARAM_SIZE, "0",
     "Largest message sent eagerly, without waiting for the receiver to match it; longer "
     "messages use the rendezvous protocol. 0 means each BTL's own limit "
     "(btl_<name>_eager_limit).",
     CRMPI_PARAM_LEVEL_TUNER},
};

const crmpi_component_info_t crmpi_pml_ob1_info = {
    .framework = "pml",
    .name = "ob1",
    .description = "MPI matching and ordering, eager and rendezvous protocols over the BML",
    .params = pml_ob1_params,
    .num_params = sizeof(pml_ob1_params) / sizeof(pml_ob1_params[0]),
};

static const crmpi_component_info_t *const pml_components[] = {&crmpi_pml_ob1_info, NULL};

const crmpi_framework_info_t crmpi_pml_framework_info = {
    .name = "pml",
    .description = "point-to-point messaging: MPI matching and protocols",
    .components = pml_components,
};
