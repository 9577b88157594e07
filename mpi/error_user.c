/*
 * error_user.c: error classes and codes added by the application (MPI-3.1 section 8.5):
 * MPI_Add_error_class, MPI_Add_error_code, MPI_Add_error_string. They are numbered after
 * MPI_ERR_LASTCODE, classes and codes in one sequence (a class is also a code), and
 * MPI_COMM_WORLD's MPI_LASTUSEDCODE attribute is the last number given.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

#pragma weak MPI_Add_error_class = PMPI_Add_error_class
#pragma weak MPI_Add_error_code = PMPI_Add_error_code
#pragma weak MPI_Add_error_string = PMPI_Add_error_string

typedef struct error_user {
    int errclass; /* the class of this code (itself for a class) */
    char *text;   /* MPI_Add_error_string's, malloc'd, or NULL (the empty string) */
} error_user_t;

static error_user_t *error_users; /* [code - MPI_ERR_LASTCODE - 1] */
static int error_num_users;       /* codes given */
static int error_cap_users;       /* entries allocated */

int crmpi_mpi_error_last_used(void)
{
    return MPI_ERR_LASTCODE + error_num_users;
}

int crmpi_mpi_error_user_class(int errorcode)
{
    int index = errorcode - MPI_ERR_LASTCODE - 1;

    return index >= 0 && index < error_num_users ? error_users[index].errclass : -1;
}

const char *crmpi_mpi_error_user_text(int errorcode)
{
    int index = errorcode - MPI_ERR_LASTCODE - 1;

    if (index < 0 || index >= error_num_users)
        return NULL;
    return error_users[index].text ? error_users[index].text : "";
}

/* A new code of class errclass (-1: a new class, its own). */
static int error_user_add(int errclass, int *code_out)
{
    if (error_num_users == error_cap_users) {
        int cap = error_cap_users ? 2 * error_cap_users : 16;
        error_user_t *grown = realloc(error_users, (size_t)cap * sizeof(*grown));
        if (!grown)
            return MPI_ERR_NO_MEM;
        error_users = grown;
        error_cap_users = cap;
    }
    int code = MPI_ERR_LASTCODE + 1 + error_num_users;
    error_users[error_num_users++] = (error_user_t){errclass < 0 ? code : errclass, NULL};
    *code_out = code;
    return MPI_SUCCESS;
}

int PMPI_Add_error_class(int *errorclass)
{
    static const char func_name[] = "MPI_Add_error_class";
    int err;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (errorclass == NULL)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "errorclass is NULL");
    err = error_user_add(-1, errorclass);
    if (err != MPI_SUCCESS)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, err, func_name, NULL);
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Add_error_code(int errorclass, int *errorcode)
{
    static const char func_name[] = "MPI_Add_error_code";
    int err;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (errorcode == NULL)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "errorcode is NULL");
    /* A class: predefined, or added and its own class. */
    if (!((errorclass >= 0 && errorclass <= MPI_ERR_LASTCODE) ||
          crmpi_mpi_error_user_class(errorclass) == errorclass))
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "errorclass is not an error class");
    err = error_user_add(errorclass, errorcode);
    if (err != MPI_SUCCESS)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, err, func_name, NULL);
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* Only for added codes and classes: the predefined ones keep their text (8.5). */
int PMPI_Add_error_string(int errorcode, const char *string)
{
    static const char func_name[] = "MPI_Add_error_string";
    int index = errorcode - MPI_ERR_LASTCODE - 1;
    char *copy;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (index < 0 || index >= error_num_users)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "errorcode was not added by MPI_Add_error_*");
    if (string == NULL || strlen(string) >= MPI_MAX_ERROR_STRING)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "string is NULL or longer than MPI_MAX_ERROR_STRING");
    copy = strdup(string);
    if (!copy)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_NO_MEM, func_name, NULL);
    free(error_users[index].text);
    error_users[index].text = copy;
    crmpi_unlock();
    return MPI_SUCCESS;
}
