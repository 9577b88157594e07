/*
 * type_check.c: the argument-error record the datatype calls' checks fill, and the MPI
 * error class of an engine status (type_internal.h).
 */
#include <stdarg.h>
#include <stdio.h>

#include "crmpi_status.h"
#include "type_internal.h"

bool crmpi_type_check_fail(crmpi_type_check_t *check, int errclass, const char *detail)
{
    check->errclass = errclass;
    check->detail = detail;
    return true;
}

bool crmpi_type_check_failf(crmpi_type_check_t *check, int errclass, const char *fmt, ...)
{
    va_list args;

    va_start(args, fmt);
    vsnprintf(check->text, sizeof(check->text), fmt, args);
    va_end(args);
    return crmpi_type_check_fail(check, errclass, check->text);
}

int crmpi_type_error_class(int status)
{
    switch (status) {
    case CRMPI_ERR_BAD_PARAM: return MPI_ERR_ARG;
    default: return MPI_ERR_INTERN;
    }
}
