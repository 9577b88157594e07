/*
 * op_predefined.c: the predefined reduction operations (MPI-3.1 section 5.9.2) and the
 * accumulate-only MPI_REPLACE and MPI_NO_OP (section 11.3.4).
 */
#include <stdbool.h>

#include "mpi_internal.h"

#define OP_PREDEFINED(object, mpi_name, op_kind, is_commutative)                                   \
    struct crmpi_predefined_op_s object = {                                                        \
        .op =                                                                                      \
            {                                                                                      \
                .coll = {.kind = op_kind, .commutative = is_commutative, .user_fn = NULL},         \
                .name = mpi_name,                                                                  \
            },                                                                                     \
    }

OP_PREDEFINED(crmpi_mpi_op_max, "MPI_MAX", CRMPI_COLL_OP_MAX, true);
OP_PREDEFINED(crmpi_mpi_op_min, "MPI_MIN", CRMPI_COLL_OP_MIN, true);
OP_PREDEFINED(crmpi_mpi_op_sum, "MPI_SUM", CRMPI_COLL_OP_SUM, true);
OP_PREDEFINED(crmpi_mpi_op_prod, "MPI_PROD", CRMPI_COLL_OP_PROD, true);
OP_PREDEFINED(crmpi_mpi_op_land, "MPI_LAND", CRMPI_COLL_OP_LAND, true);
OP_PREDEFINED(crmpi_mpi_op_band, "MPI_BAND", CRMPI_COLL_OP_BAND, true);
OP_PREDEFINED(crmpi_mpi_op_lor, "MPI_LOR", CRMPI_COLL_OP_LOR, true);
OP_PREDEFINED(crmpi_mpi_op_bor, "MPI_BOR", CRMPI_COLL_OP_BOR, true);
OP_PREDEFINED(crmpi_mpi_op_lxor, "MPI_LXOR", CRMPI_COLL_OP_LXOR, true);
OP_PREDEFINED(crmpi_mpi_op_bxor, "MPI_BXOR", CRMPI_COLL_OP_BXOR, true);
/* MINLOC and MAXLOC keep the lowest index among equal values, whatever the order. */
OP_PREDEFINED(crmpi_mpi_op_maxloc, "MPI_MAXLOC", CRMPI_COLL_OP_MAXLOC, true);
OP_PREDEFINED(crmpi_mpi_op_minloc, "MPI_MINLOC", CRMPI_COLL_OP_MINLOC, true);
/* The result is one operand, ignoring the other: the order of operands matters. */
OP_PREDEFINED(crmpi_mpi_op_replace, "MPI_REPLACE", CRMPI_COLL_OP_REPLACE, false);
OP_PREDEFINED(crmpi_mpi_op_no_op, "MPI_NO_OP", CRMPI_COLL_OP_NO_OP, false);
