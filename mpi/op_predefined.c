/*
 * op_predefined.c: the predefined reduction operations (MPI-3.1 section 5.9.2) and the
 * accumulate-only MPI_REPLACE and MPI_NO_OP (section 11.3.4).
 */
#include <stdbool.h>

#include "mpi_internal.h"

#define OP_PREDEFINED(object, mpi_name, is_commutative)                                            \
    struct crmpi_op_s object = {                                                                   \
        .name = mpi_name,                                                                          \
        .commutative = is_commutative,                                                             \
        .user_fn = NULL,                                                                           \
    }

OP_PREDEFINED(crmpi_mpi_op_max, "MPI_MAX", true);
OP_PREDEFINED(crmpi_mpi_op_min, "MPI_MIN", true);
OP_PREDEFINED(crmpi_mpi_op_sum, "MPI_SUM", true);
OP_PREDEFINED(crmpi_mpi_op_prod, "MPI_PROD", true);
OP_PREDEFINED(crmpi_mpi_op_land, "MPI_LAND", true);
OP_PREDEFINED(crmpi_mpi_op_band, "MPI_BAND", true);
OP_PREDEFINED(crmpi_mpi_op_lor, "MPI_LOR", true);
OP_PREDEFINED(crmpi_mpi_op_bor, "MPI_BOR", true);
OP_PREDEFINED(crmpi_mpi_op_lxor, "MPI_LXOR", true);
OP_PREDEFINED(crmpi_mpi_op_bxor, "MPI_BXOR", true);
/* MINLOC and MAXLOC keep the lowest index among equal values, whatever the order. */
OP_PREDEFINED(crmpi_mpi_op_maxloc, "MPI_MAXLOC", true);
OP_PREDEFINED(crmpi_mpi_op_minloc, "MPI_MINLOC", true);
/* The result is one operand, ignoring the other: the order of operands matters. */
OP_PREDEFINED(crmpi_mpi_op_replace, "MPI_REPLACE", false);
OP_PREDEFINED(crmpi_mpi_op_no_op, "MPI_NO_OP", false);
