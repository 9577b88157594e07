/*
 * errhandler.c: the predefined error handlers, the making of user ones (for communicators,
 * windows, files and sessions alike), how an MPI call raises an error (MPI-3.1 section 8.3),
 * and how a rank ends the whole job.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "log.h"
#include "crmpi_status.h"
#include "mpi_internal.h"

struct crmpi_errhandler_s crmpi_mpi_errors_are_fatal = {
    .kind = CRMPI_ERRHANDLER_FATAL,
    .name = "MPI_ERRORS_ARE_FATAL",
    .predefined = true,
};

struct crmpi_errhandler_s crmpi_mpi_errors_return = {
    .kind = CRMPI_ERRHANDLER_RETURN,
    .name = "MPI_ERRORS_RETURN",
    .predefined = true,
};

void crmpi_mpi_errors_are_fatal_abort(int errcode, const char *func_name, const char *detail,
                                      const char *handler_of)
{
    const char *name = crmpi_mpi_error_name(errcode);
    const char *text = crmpi_mpi_error_text(errcode);

    /* Codes beyond the predefined classes (MPI_Add_error_code) have no text of ours. */
    if (name == NULL) {
        name = "user-defined error code";
        text = "error";
    }
    crmpi_rte_abort_job(errcode,
                        "%s: %s%s%s (%s); the error handler%s%s is MPI_ERRORS_ARE_FATAL, so the "
                        "job aborts",
                        func_name, text, detail ? ": " : "", detail ? detail : "", name,
                        handler_of ? " of " : "", handler_of ? handler_of : "");
}

/* MPI_ERRORS_ARE_FATAL on a communicator: the message names it. */
__attribute__((noreturn)) static void errhandler_fatal(MPI_Comm comm, int errcode,
                                                       const char *func_name, const char *detail)
{
    /* A communicator made by the application has no name until MPI_Comm_set_name. */
    char who[MPI_MAX_OBJECT_NAME + 64];
    if (comm->name[0])
        snprintf(who, sizeof(who), "%s", comm->name);
    else
        snprintf(who, sizeof(who), "an unnamed communicator of %d ranks (context id %u)",
                 comm->size, comm->context_id);
    crmpi_mpi_errors_are_fatal_abort(errcode, func_name, detail, who);
}

MPI_Errhandler crmpi_errhandler_new_user(const struct crmpi_errhandler_s *slots)
{
    struct crmpi_errhandler_s *handler = malloc(sizeof(*handler));

    if (!handler)
        return NULL;
    *handler = *slots;
    handler->kind = CRMPI_ERRHANDLER_USER;
    handler->refcount = 1;
    handler->predefined = false;
    return handler;
}

int crmpi_mpi_errhandler_invoke(MPI_Comm comm, int errcode, const char *func_name,
                                const char *detail)
{
    if (!crmpi_mpi_comm_is_valid(comm)) {
        comm = MPI_COMM_WORLD;
    }
    MPI_Errhandler handler = comm->errhandler;

    switch (handler->kind) {
    case CRMPI_ERRHANDLER_FATAL: errhandler_fatal(comm, errcode, func_name, detail);
    case CRMPI_ERRHANDLER_RETURN: break;
    case CRMPI_ERRHANDLER_USER:
        /* Unlocked first: the handler may call MPI, and the lock is not recursive. MPI
         * passes both arguments by reference, and a handler may change the code. */
        crmpi_unlock();
        /* A window's handler set on a communicator is erroneous (MPI-3.1 8.3.1): ignored. */
        if (handler->comm_fn)
            handler->comm_fn(&comm, &errcode);
        return errcode;
    }
    crmpi_unlock();
    return errcode;
}

void crmpi_mpi_fail_inactive(const char *func_name)
{
    const char *when = crmpi_mpi_state.finalized        ? "after MPI_Finalize"
                       : crmpi_mpi_state.instance_ended ? "after the last MPI_Session_finalize"
                       : crmpi_mpi_state.instance_active
                           ? "outside MPI_Init .. MPI_Finalize (only sessions are open)"
                           : "before MPI_Init or MPI_Session_init";

    crmpi_rte_abort_job(1,
                        "%s was called %s; outside MPI_Init .. MPI_Finalize only MPI_Initialized, "
                        "MPI_Finalized, MPI_Get_version, MPI_Get_library_version, "
                        "MPI_Error_class, MPI_Error_string, MPI_Wtime, MPI_Wtick, the MPI_Info "
                        "calls and MPI_Session_init may be called; the program aborts",
                        func_name, when);
}
