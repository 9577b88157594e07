/*
 * tool.c: the tool information interface, MPI_T (MPI-3.1 section 14.3).
 *
 * crmpi's parameters live in its own catalog (crmpi_info lists them) and it keeps no
 * performance counters a tool could read, so MPI_T exposes no variables: MPI_T_init_thread
 * succeeds and the MPI_T_*_get_num calls report 0. That is a complete, valid answer (the
 * standard leaves which variables exist, if any, to the implementation), and a tool that
 * enumerates variables works unchanged: it finds nothing to show.
 *
 * As the standard asks, MPI_T may be used before MPI_Init and after MPI_Finalize, from any
 * thread, and its calls return error codes without raising MPI errors (section 14.3.9).
 * Initialisations are counted; each MPI_T_finalize undoes one (section 14.3.4).
 */
#include <pthread.h>
#include <stddef.h>

#include "mpi.h"

#pragma weak MPI_T_init_thread = PMPI_T_init_thread
#pragma weak MPI_T_finalize = PMPI_T_finalize
#pragma weak MPI_T_cvar_get_num = PMPI_T_cvar_get_num
#pragma weak MPI_T_pvar_get_num = PMPI_T_pvar_get_num
#pragma weak MPI_T_category_get_num = PMPI_T_category_get_num

/* Its own lock, not the library's: MPI_T works outside MPI_Init .. MPI_Finalize. */
static pthread_mutex_t tool_lock = PTHREAD_MUTEX_INITIALIZER;
/* MPI_T_init_thread calls not yet matched by an MPI_T_finalize. */
static int tool_init_count;

int PMPI_T_init_thread(int required, int *provided)
{
    if (provided == NULL || required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE) {
        return MPI_T_ERR_INVALID;
    }
    pthread_mutex_lock(&tool_lock);
    tool_init_count++;
    pthread_mutex_unlock(&tool_lock);
    /* With no variables there is no state to protect: any level is honoured. */
    *provided = required;
    return MPI_SUCCESS;
}

int PMPI_T_finalize(void)
{
    int rc = MPI_SUCCESS;

    pthread_mutex_lock(&tool_lock);
    if (tool_init_count == 0) {
        rc = MPI_T_ERR_NOT_INITIALIZED;
    } else {
        tool_init_count--;
    }
    pthread_mutex_unlock(&tool_lock);
    return rc;
}

/* The number of variables of a kind: none, once MPI_T is initialised. */
static int tool_get_num(int *num_out)
{
    int initialized;

    pthread_mutex_lock(&tool_lock);
    initialized = tool_init_count > 0;
    pthread_mutex_unlock(&tool_lock);
    if (!initialized) {
        return MPI_T_ERR_NOT_INITIALIZED;
    }
    if (num_out == NULL) {
        return MPI_T_ERR_INVALID;
    }
    *num_out = 0;
    return MPI_SUCCESS;
}

int PMPI_T_cvar_get_num(int *num_cvar)
{
    return tool_get_num(num_cvar);
}

int PMPI_T_pvar_get_num(int *num_pvar)
{
    return tool_get_num(num_pvar);
}

int PMPI_T_category_get_num(int *num_cat)
{
    return tool_get_num(num_cat);
}
