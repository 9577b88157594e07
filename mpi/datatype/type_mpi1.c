/*
 * type_mpi1.c: the datatype calls of MPI-1 that MPI-3.0 removed (MPI-3.1 section 17.1.2
 * lists them) and that old programs still call: MPI_Type_struct, MPI_Type_hvector,
 * MPI_Type_hindexed, MPI_Type_extent, MPI_Type_lb, MPI_Type_ub and MPI_Address. Open MPI
 * still provides them, so crmpi does too. Each is its MPI-2 successor under the old name
 * (the C signatures are the same but for the name); errors name the old call.
 *
 * MPI_Type_lb and MPI_Type_ub are MPI-1's bounds: lb, and lb + extent, markers (MPI_LB,
 * MPI_UB, predefined.c) included, as MPI_Type_get_extent gives them.
 */
#include <stdint.h>

#include "type_internal.h"

#pragma weak MPI_Type_struct = PMPI_Type_struct
#pragma weak MPI_Type_hvector = PMPI_Type_hvector
#pragma weak MPI_Type_hindexed = PMPI_Type_hindexed
#pragma weak MPI_Type_extent = PMPI_Type_extent
#pragma weak MPI_Type_lb = PMPI_Type_lb
#pragma weak MPI_Type_ub = PMPI_Type_ub
#pragma weak MPI_Address = PMPI_Address

int PMPI_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                     MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    return crmpi_type_create_struct(count, crmpi_count_array_int(array_of_blocklengths),
                                    crmpi_count_array_aint(array_of_displacements), array_of_types,
                                    newtype, "MPI_Type_struct");
}

int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    return crmpi_type_create_hvector(count, blocklength, stride, oldtype, newtype,
                                     "MPI_Type_hvector");
}

int PMPI_Type_hindexed(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return crmpi_type_create_hindexed(count, crmpi_count_array_int(array_of_blocklengths),
                                      crmpi_count_array_aint(array_of_displacements), oldtype,
                                      newtype, "MPI_Type_hindexed");
}

/* Which bound of MPI_Type_extent, _lb and _ub. */
typedef enum { TYPE_MPI1_EXTENT, TYPE_MPI1_LB, TYPE_MPI1_UB } type_mpi1_bound_t;

static int type_mpi1_bound(MPI_Datatype datatype, MPI_Aint *value, type_mpi1_bound_t which,
                           const char *func_name)
{
    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (datatype == MPI_DATATYPE_NULL) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_TYPE, func_name,
                                               "datatype is MPI_DATATYPE_NULL");
        }
        if (value == NULL) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                               "the output argument is NULL");
        }
    }
    switch (which) {
    case TYPE_MPI1_EXTENT: *value = datatype->extent; break;
    case TYPE_MPI1_LB: *value = datatype->lb; break;
    case TYPE_MPI1_UB: *value = datatype->lb + datatype->extent; break;
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
    return type_mpi1_bound(datatype, extent, TYPE_MPI1_EXTENT, "MPI_Type_extent");
}

int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
    return type_mpi1_bound(datatype, displacement, TYPE_MPI1_LB, "MPI_Type_lb");
}

int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
    return type_mpi1_bound(datatype, displacement, TYPE_MPI1_UB, "MPI_Type_ub");
}

int PMPI_Address(void *location, MPI_Aint *address)
{
    static const char func_name[] = "MPI_Address";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check && address == NULL) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "address is NULL");
    }
    /* As MPI_Get_address: a byte offset from MPI_BOTTOM, which is address 0. */
    *address = (MPI_Aint)(uintptr_t)location;
    crmpi_unlock();
    return MPI_SUCCESS;
}
