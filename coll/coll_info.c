/*
 * coll_info.c: catalog descriptors of the coll framework and its components, basic and
 * tuned (coll.h). The framework's own parameter `coll` chooses the component.
 */
#include "component.h"

static const crmpi_param_decl_t coll_tuned_params_decl[] = {
    {"coll_tuned_barrier_algorithm", CRMPI_PARAM_INT, "0",
     "Barrier algorithm: 0 decide, 1 linear (basic), 2 dissemination.", CRMPI_PARAM_LEVEL_TUNER},
    {"coll_tuned_bcast_algorithm", CRMPI_PARAM_INT, "0",
     "Bcast algorithm: 0 decide, 1 linear (basic), 2 binomial tree, 3 scatter + ring "
     "allgather (large messages; binomial when the count is below the process count).",
     CRMPI_PARAM_LEVEL_TUNER},
    {"coll_tuned_reduce_algorithm", CRMPI_PARAM_INT, "0",
     "Reduce algorithm: 0 decide, 1 linear (basic), 2 binomial tree.", CRMPI_PARAM_LEVEL_TUNER},
    {"coll_tuned_allreduce_algorithm", CRMPI_PARAM_INT, "0",
     "Allreduce algorithm: 0 decide, 1 reduce + bcast (basic), 2 recursive doubling, 3 ring, "
     "4 Rabenseifner (reduce-scatter + allgather). 3 and 4 need a commutative op and use 2 "
     "otherwise.",
     CRMPI_PARAM_LEVEL_TUNER},
    {"coll_tuned_allgather_algorithm", CRMPI_PARAM_INT, "0",
     "Allgather algorithm: 0 decide, 1 linear (basic), 2 ring, 3 recursive doubling (power-of-"
     "two process counts; ring otherwise).",
     CRMPI_PARAM_LEVEL_TUNER},
    {"coll_tuned_allgatherv_algorithm", CRMPI_PARAM_INT, "0",
     "Allgatherv algorithm: 0 decide, 1 linear (basic), 2 ring.", CRMPI_PARAM_LEVEL_TUNER},
    {"coll_tuned_alltoall_algorithm", CRMPI_PARAM_INT, "0",
     "Alltoall algorithm: 0 decide, 1 linear (basic: every message posted at once), 2 pairwise "
     "exchange, 3 Bruck (ceil(log2 n) rounds; for small blocks).",
     CRMPI_PARAM_LEVEL_TUNER},
    {"coll_tuned_alltoallv_algorithm", CRMPI_PARAM_INT, "0",
     "Alltoallv algorithm: 0 decide (linear), 1 linear (basic), 2 pairwise exchange.",
     CRMPI_PARAM_LEVEL_TUNER},
    {"coll_tuned_reduce_scatter_algorithm", CRMPI_PARAM_INT, "0",
     "Reduce_scatter and Reduce_scatter_block algorithm: 0 decide, 1 reduce + scatterv "
     "(basic), 2 ring (commutative ops; basic otherwise).",
     CRMPI_PARAM_LEVEL_TUNER},
    {"coll_tuned_scan_algorithm", CRMPI_PARAM_INT, "0",
     "Scan algorithm: 0 decide, 1 linear chain (basic), 2 recursive doubling.",
     CRMPI_PARAM_LEVEL_TUNER},
    {"coll_tuned_exscan_algorithm", CRMPI_PARAM_INT, "0",
     "Exscan algorithm: 0 decide, 1 linear chain (basic), 2 recursive doubling.",
     CRMPI_PARAM_LEVEL_TUNER},
};

const crmpi_component_info_t crmpi_coll_basic_info = {
    .framework = "coll",
    .name = "basic",
    .description = "linear collectives, right for every case (the reference)",
};

const crmpi_component_info_t crmpi_coll_tuned_info = {
    .framework = "coll",
    .name = "tuned",
    .description = "collective algorithms chosen by message size and process count",
    .params = coll_tuned_params_decl,
    .num_params = sizeof(coll_tuned_params_decl) / sizeof(coll_tuned_params_decl[0]),
};

static const crmpi_component_info_t *const coll_components[] = {&crmpi_coll_tuned_info,
                                                                &crmpi_coll_basic_info, NULL};

const crmpi_framework_info_t crmpi_coll_framework_info = {
    .name = "coll",
    .description = "collective operations over point-to-point messages",
    .components = coll_components,
};
