/*
 * type_contents.c: MPI_Type_get_envelope and MPI_Type_get_contents (MPI-3.1 section
 * 4.1.13): how a datatype was built, so that a tool or a library can decode or rebuild it.
 *
 * Every constructor of type_create.c has the engine keep its arguments with the type
 * (datatype.h: crmpi_datatype_args_t), in the layout of the table of section 4.1.13 and
 * with its MPI_COMBINER_* as the constructor code, so both calls only copy that record
 * out. A predefined type is MPI_COMBINER_NAMED, and get_contents on it is erroneous
 * (MPI_ERR_ARG). Each derived datatype get_contents returns is a new reference,
 * which the caller frees with MPI_Type_free; a predefined one is returned as itself and
 * must not be freed (section 4.1.13).
 *
 * Errors belong to no communicator, so MPI_COMM_WORLD's handler decides (section 8.3).
 */
#include <stdio.h>

#include "type_internal.h"

#pragma weak MPI_Type_get_envelope = PMPI_Type_get_envelope
#pragma weak MPI_Type_get_contents = PMPI_Type_get_contents

int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                           int *num_datatypes, int *combiner)
{
    static const char func_name[] = "MPI_Type_get_envelope";
    const crmpi_datatype_args_t *record;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (datatype == MPI_DATATYPE_NULL) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_TYPE, func_name,
                                               "datatype is MPI_DATATYPE_NULL");
        }
        if (num_integers == NULL || num_addresses == NULL || num_datatypes == NULL ||
            combiner == NULL) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                               "an output argument is NULL");
        }
    }
    record = datatype->args;
    if (datatype->predefined || record == NULL) {
        *num_integers = 0;
        *num_addresses = 0;
        *num_datatypes = 0;
        *combiner = MPI_COMBINER_NAMED;
    } else {
        /* The constructors took their lengths from int arguments: they fit an int. */
        *num_integers = (int)record->num_ints;
        *num_addresses = (int)record->num_disps;
        *num_datatypes = (int)record->num_types;
        *combiner = record->constructor;
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* The first array get_contents has no room for, as "max_integers is 2 but ..." text. */
static bool type_contents_too_small(const crmpi_datatype_args_t *record, int max_integers,
                                    int max_addresses, int max_datatypes, char *detail,
                                    size_t detail_len)
{
    const char *name = NULL;
    int max = 0;
    size_t needed = 0;

    if (max_integers < 0 || (size_t)max_integers < record->num_ints) {
        name = "max_integers", max = max_integers, needed = record->num_ints;
    } else if (max_addresses < 0 || (size_t)max_addresses < record->num_disps) {
        name = "max_addresses", max = max_addresses, needed = record->num_disps;
    } else if (max_datatypes < 0 || (size_t)max_datatypes < record->num_types) {
        name = "max_datatypes", max = max_datatypes, needed = record->num_types;
    }
    if (name == NULL) {
        return false;
    }
    snprintf(detail, detail_len, "%s is %d but the type has %zu; ask MPI_Type_get_envelope", name,
             max, needed);
    return true;
}

int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                           int max_datatypes, int array_of_integers[],
                           MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    static const char func_name[] = "MPI_Type_get_contents";
    const crmpi_datatype_args_t *record;
    char detail[160];

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (datatype == MPI_DATATYPE_NULL) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_TYPE, func_name,
                                           "datatype is MPI_DATATYPE_NULL");
    }
    record = datatype->args;
    /* Checked always: the record's arrays are copied through these bounds. */
    if (datatype->predefined || record == NULL) {
        snprintf(detail, sizeof(detail),
                 "%s is a predefined type (MPI_COMBINER_NAMED), which has no contents",
                 datatype->name[0] ? datatype->name : "datatype");
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name, detail);
    }
    if (type_contents_too_small(record, max_integers, max_addresses, max_datatypes, detail,
                                sizeof(detail))) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name, detail);
    }
    if ((record->num_ints > 0 && array_of_integers == NULL) ||
        (record->num_disps > 0 && array_of_addresses == NULL) ||
        (record->num_types > 0 && array_of_datatypes == NULL)) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "an output array the type has entries for is NULL");
    }
    for (size_t i = 0; i < record->num_ints; i++) {
        array_of_integers[i] = record->ints[i];
    }
    for (size_t i = 0; i < record->num_disps; i++) {
        array_of_addresses[i] = record->disps[i];
    }
    for (size_t i = 0; i < record->num_types; i++) {
        /* A handle of its own for the caller (not counted for a predefined type). */
        crmpi_datatype_retain(record->types[i]);
        array_of_datatypes[i] = record->types[i];
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}
