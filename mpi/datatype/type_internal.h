/*
 * type_internal.h: what the MPI datatype calls of mpi/datatype/ share (MPI-3.1 chapter 4):
 * argument checks, and the MPI error class of an engine status.
 *
 *   MPI_Type_*, MPI_Pack/Unpack, MPI_Get_elements   mpi/datatype/: arguments, error
 *        |                                                         handlers, MPI's records
 *        |  crmpi_datatype_*, crmpi_convertor_*     datatype/ (the engine): layouts,
 *   datatype engine                                               streams, references
 *
 * The engine speaks ptrdiff_t, size_t and CRMPI_ statuses; the calls here check MPI's
 * arguments, translate, and raise MPI error classes through the error handlers. Errors of
 * the datatype calls belong to no communicator, so MPI_COMM_WORLD's handler decides
 * (section 8.3), except those of Pack, Unpack and Pack_size, which have one.
 *
 * Threading: everything here runs under the library lock.
 */
#ifndef CRMPI_TYPE_INTERNAL_H
#define CRMPI_TYPE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "convertor.h"
#include "datatype.h"
#include "mpi_internal.h"

/* MPI's displacements are the engine's, and its names fit the engine's name field. */
_Static_assert(_Generic((MPI_Aint)0, ptrdiff_t : 1, default : 0), "MPI_Aint is not ptrdiff_t");
_Static_assert(MPI_MAX_OBJECT_NAME == CRMPI_DATATYPE_NAME_MAX,
               "a datatype's name field does not hold MPI_MAX_OBJECT_NAME bytes");

/*
 * An argument error found by a check of the datatype calls. Checks only find; the MPI call
 * raises (crmpi_mpi_errhandler_invoke releases the lock, and a user handler may even turn
 * the error into MPI_SUCCESS, so a check's return value cannot double as the call's).
 */
typedef struct crmpi_type_check {
    int errclass;       /* MPI error class to raise */
    const char *detail; /* what is wrong: a static string or `text` */
    char text[192];     /* room for a detail that names values */
} crmpi_type_check_t;

/** Record an error in `check`; returns true, for `return crmpi_type_check_fail(...)`. */
bool crmpi_type_check_fail(crmpi_type_check_t *check, int errclass, const char *detail);
/** As crmpi_type_check_fail, with a printf-formatted detail. */
__attribute__((format(printf, 3, 4))) bool
crmpi_type_check_failf(crmpi_type_check_t *check, int errclass, const char *fmt, ...);

/**
 * The MPI error class of an engine status (crmpi_datatype_typemap_finish): an overflow of
 * the arguments' displacements is MPI_ERR_ARG, running out of memory MPI_ERR_INTERN.
 */
int crmpi_type_error_class(int status);

#endif /* CRMPI_TYPE_INTERNAL_H */
