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
 * MPI_Type_get_envelope_c and MPI_Type_get_contents_c (MPI-4.0 section 5.1.13) add the
 * large counts of a type a "_c" constructor made with a value beyond int (type_create.c
 * says when); the int forms raise MPI_ERR_TYPE on such a type.
 *
 * Errors belong to no communicator, so MPI_COMM_WORLD's handler decides (section 8.3).
 */
#include <stdio.h>

#include "type_internal.h"

#pragma weak MPI_Type_get_envelope = PMPI_Type_get_envelope
#pragma weak MPI_Type_get_contents = PMPI_Type_get_contents
#pragma weak MPI_Type_get_envelope_c = PMPI_Type_get_envelope_c
#pragma weak MPI_Type_get_contents_c = PMPI_Type_get_contents_c

/* The lengths of a type's record (0, 0, 0, 0 for a predefined type), and its combiner. */
typedef struct type_envelope {
    MPI_Count num_integers;     /* integers */
    MPI_Count num_addresses;    /* addresses */
    MPI_Count num_large_counts; /* large counts: only a "_c" constructor's, MPI-4.0 */
    MPI_Count num_datatypes;    /* datatypes */
    int combiner;               /* MPI_COMBINER_* */
} type_envelope_t;

/*
 * The envelope of `datatype`, for the int form (`large_form` false) or the "_c" form.
 * MPI-4.0 section 5.1.13: the int form cannot describe a type whose record has large
 * counts (one a "_c" constructor made with a value beyond int), and raises MPI_ERR_TYPE
 * for it, as MPICH does. Returns with the lock released; sets *envelope_out on success.
 */
static int type_envelope_get(MPI_Datatype datatype, bool large_form, bool output_null,
                             type_envelope_t *envelope_out, const char *func_name)
{
    const crmpi_datatype_args_t *record;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (datatype == MPI_DATATYPE_NULL) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_TYPE, func_name,
                                               "datatype is MPI_DATATYPE_NULL");
        }
        if (output_null) {
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                               "an output argument is NULL");
        }
    }
    record = datatype->args;
    if (datatype->predefined || record == NULL) {
        *envelope_out = (type_envelope_t){.combiner = MPI_COMBINER_NAMED};
        crmpi_unlock();
        return MPI_SUCCESS;
    }
    if (!large_form && record->num_counts > 0) {
        return crmpi_mpi_errhandler_invoke(
            MPI_COMM_NULL, MPI_ERR_TYPE, func_name,
            "the type was made by a large-count constructor with a value beyond int; describe "
            "it with MPI_Type_get_envelope_c and MPI_Type_get_contents_c");
    }
    *envelope_out = (type_envelope_t){
        .num_integers = (MPI_Count)record->num_ints,
        .num_addresses = (MPI_Count)record->num_disps,
        .num_large_counts = (MPI_Count)record->num_counts,
        .num_datatypes = (MPI_Count)record->num_types,
        .combiner = record->constructor,
    };
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                           int *num_datatypes, int *combiner)
{
    static const char func_name[] = "MPI_Type_get_envelope";
    type_envelope_t envelope;
    int err;

    err = type_envelope_get(datatype, false,
                            num_integers == NULL || num_addresses == NULL ||
                                num_datatypes == NULL || combiner == NULL,
                            &envelope, func_name);
    if (err != MPI_SUCCESS) {
        return err;
    }
    /* The int constructors took their lengths from int arguments: they fit an int. */
    *num_integers = (int)envelope.num_integers;
    *num_addresses = (int)envelope.num_addresses;
    *num_datatypes = (int)envelope.num_datatypes;
    *combiner = envelope.combiner;
    return MPI_SUCCESS;
}

int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers,
                             MPI_Count *num_addresses, MPI_Count *num_large_counts,
                             MPI_Count *num_datatypes, int *combiner)
{
    static const char func_name[] = "MPI_Type_get_envelope_c";
    type_envelope_t envelope;
    int err;

    err =
        type_envelope_get(datatype, true,
                          num_integers == NULL || num_addresses == NULL ||
                              num_large_counts == NULL || num_datatypes == NULL || combiner == NULL,
                          &envelope, func_name);
    if (err != MPI_SUCCESS) {
        return err;
    }
    *num_integers = envelope.num_integers;
    *num_addresses = envelope.num_addresses;
    *num_large_counts = envelope.num_large_counts;
    *num_datatypes = envelope.num_datatypes;
    *combiner = envelope.combiner;
    return MPI_SUCCESS;
}

/* The room get_contents was given, and where to put the record. */
typedef struct type_contents_out {
    bool large_form;            /* MPI_Type_get_contents_c, which has large counts */
    MPI_Count max_integers;     /* entries of integers */
    MPI_Count max_addresses;    /* entries of addresses */
    MPI_Count max_large_counts; /* entries of large_counts (0 for the int form) */
    MPI_Count max_datatypes;    /* entries of datatypes */
    int *integers;              /* array_of_integers */
    MPI_Aint *addresses;        /* array_of_addresses */
    MPI_Count *large_counts;    /* array_of_large_counts; NULL for the int form */
    MPI_Datatype *datatypes;    /* array_of_datatypes */
} type_contents_out_t;

/* The first array get_contents has no room for, as "max_integers is 2 but ..." text. */
static bool type_contents_too_small(const crmpi_datatype_args_t *record,
                                    const type_contents_out_t *out, char *detail, size_t detail_len)
{
    const char *name = NULL;
    MPI_Count max = 0;
    size_t needed = 0;

    if (out->max_integers < 0 || (size_t)out->max_integers < record->num_ints) {
        name = "max_integers", max = out->max_integers, needed = record->num_ints;
    } else if (out->max_addresses < 0 || (size_t)out->max_addresses < record->num_disps) {
        name = "max_addresses", max = out->max_addresses, needed = record->num_disps;
    } else if (out->max_large_counts < 0 || (size_t)out->max_large_counts < record->num_counts) {
        name = "max_large_counts", max = out->max_large_counts, needed = record->num_counts;
    } else if (out->max_datatypes < 0 || (size_t)out->max_datatypes < record->num_types) {
        name = "max_datatypes", max = out->max_datatypes, needed = record->num_types;
    }
    if (name == NULL) {
        return false;
    }
    snprintf(detail, detail_len, "%s is %lld but the type has %zu; ask MPI_Type_get_envelope", name,
             max, needed);
    return true;
}

/* The body of both forms of get_contents (the int form cannot return large counts: see
 * type_envelope_get). Returns with the lock released. */
static int type_contents_get(MPI_Datatype datatype, const type_contents_out_t *out,
                             const char *func_name)
{
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
    if (!out->large_form && record->num_counts > 0) {
        return crmpi_mpi_errhandler_invoke(
            MPI_COMM_NULL, MPI_ERR_TYPE, func_name,
            "the type was made by a large-count constructor with a value beyond int; describe "
            "it with MPI_Type_get_envelope_c and MPI_Type_get_contents_c");
    }
    if (type_contents_too_small(record, out, detail, sizeof(detail))) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name, detail);
    }
    if ((record->num_ints > 0 && out->integers == NULL) ||
        (record->num_disps > 0 && out->addresses == NULL) ||
        (record->num_counts > 0 && out->large_counts == NULL) ||
        (record->num_types > 0 && out->datatypes == NULL)) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "an output array the type has entries for is NULL");
    }
    for (size_t i = 0; i < record->num_ints; i++) {
        out->integers[i] = record->ints[i];
    }
    for (size_t i = 0; i < record->num_disps; i++) {
        out->addresses[i] = record->disps[i];
    }
    for (size_t i = 0; i < record->num_counts; i++) {
        out->large_counts[i] = record->counts[i];
    }
    for (size_t i = 0; i < record->num_types; i++) {
        /* A handle of its own for the caller (not counted for a predefined type). */
        crmpi_datatype_retain(record->types[i]);
        out->datatypes[i] = record->types[i];
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                           int max_datatypes, int array_of_integers[],
                           MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    type_contents_out_t out = {
        .max_integers = max_integers,
        .max_addresses = max_addresses,
        .max_datatypes = max_datatypes,
        .integers = array_of_integers,
        .addresses = array_of_addresses,
        .datatypes = array_of_datatypes,
    };

    return type_contents_get(datatype, &out, "MPI_Type_get_contents");
}

int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                             MPI_Count max_large_counts, MPI_Count max_datatypes,
                             int array_of_integers[], MPI_Aint array_of_addresses[],
                             MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[])
{
    type_contents_out_t out = {
        .large_form = true,
        .max_integers = max_integers,
        .max_addresses = max_addresses,
        .max_large_counts = max_large_counts,
        .max_datatypes = max_datatypes,
        .integers = array_of_integers,
        .addresses = array_of_addresses,
        .large_counts = array_of_large_counts,
        .datatypes = array_of_datatypes,
    };

    return type_contents_get(datatype, &out, "MPI_Type_get_contents_c");
}
