/*
 * probe.c: probes (MPI-3.1 section 3.8.1) and matched probes (section 3.8.2), blocking and
 * not. A probe of MPI_PROC_NULL finds at once a message of no data from MPI_PROC_NULL
 * (section 3.11); a matched one returns MPI_MESSAGE_NO_PROC for it.
 */
#include "p2p_internal.h"

#pragma weak MPI_Probe = PMPI_Probe
#pragma weak MPI_Iprobe = PMPI_Iprobe
#pragma weak MPI_Mprobe = PMPI_Mprobe
#pragma weak MPI_Improbe = PMPI_Improbe

/* Checks shared by the four probes. @return MPI_SUCCESS (lock held) or the raised error. */
static int probe_check(int source, int tag, MPI_Comm comm, const void *flag,
                       const MPI_Message *message, bool has_flag, bool has_message,
                       const char *func_name)
{
    if (!crmpi_p2p_probe_args_ok(source, tag, comm)) {
        return crmpi_p2p_raise_args(func_name,
                                    &(crmpi_p2p_args_t){CRMPI_P2P_ARGS_PROBE, "", NULL, 0,
                                                        MPI_DATATYPE_NULL, source, tag, comm});
    }
    if (has_flag && flag == NULL) {
        return crmpi_p2p_raise_arg(comm, func_name, "flag is NULL");
    }
    if (has_message && message == NULL) {
        return crmpi_p2p_raise_arg(comm, func_name, "message is NULL");
    }
    return MPI_SUCCESS;
}

/*
 * One look for a matching message: the PML's, then, if nothing is there yet, one turn of
 * progress so that repeated calls see new arrivals even if the PML's probe did not progress.
 * @return CRMPI_OK with *flag_out, or the PML's error.
 */
static int probe_once(int source, int tag, MPI_Comm comm, int *flag_out,
                      struct crmpi_message_s **message_out, MPI_Status *status_out)
{
    int rc;

    if (message_out != NULL) {
        rc = crmpi_pml_improbe(source, tag, comm->pml, flag_out, message_out, status_out);
    } else {
        rc = crmpi_pml_iprobe(source, tag, comm->pml, flag_out, status_out);
    }
    if (rc == CRMPI_OK && !*flag_out) {
        crmpi_progress();
    }
    return rc;
}

/*
 * The body of the four probes, arguments checked: look once (blocking == false) or until a
 * message matches. message_out is NULL for the unmatched probes. Returns with the lock
 * released.
 */
static int probe_run(int source, int tag, MPI_Comm comm, bool blocking, int *flag,
                     MPI_Message *message_out, MPI_Status *status, const char *func_name)
{
    MPI_Status found_status;
    MPI_Message message = MPI_MESSAGE_NULL;
    int found = 0;
    int rc;

    if (source == MPI_PROC_NULL) {
        found = 1;
        message = MPI_MESSAGE_NO_PROC;
        crmpi_p2p_status_set_proc_null(&found_status);
    } else {
        for (;;) {
            rc =
                probe_once(source, tag, comm, &found, message_out ? &message : NULL, &found_status);
            if (rc != CRMPI_OK) {
                return crmpi_p2p_raise_pml(comm, rc, func_name, "cannot probe (source %d, tag %d)",
                                           source, tag);
            }
            if (found || !blocking) {
                break;
            }
            /* Let other threads, the C/R thread among them, take the library lock. */
            crmpi_pml_wait_turn();
        }
    }
    if (flag != NULL) {
        *flag = found;
    }
    if (found) {
        if (message_out != NULL) {
            *message_out = message;
        }
        crmpi_p2p_status_copy_out(status, &found_status);
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    static const char func_name[] = "MPI_Probe";
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        rc = probe_check(source, tag, comm, NULL, NULL, false, false, func_name);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    return probe_run(source, tag, comm, true, NULL, NULL, status, func_name);
}

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    static const char func_name[] = "MPI_Iprobe";
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        rc = probe_check(source, tag, comm, flag, NULL, true, false, func_name);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    return probe_run(source, tag, comm, false, flag, NULL, status, func_name);
}

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    static const char func_name[] = "MPI_Mprobe";
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        rc = probe_check(source, tag, comm, NULL, message, false, true, func_name);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    return probe_run(source, tag, comm, true, NULL, message, status, func_name);
}

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                 MPI_Status *status)
{
    static const char func_name[] = "MPI_Improbe";
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        rc = probe_check(source, tag, comm, flag, message, true, true, func_name);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    return probe_run(source, tag, comm, false, flag, message, status, func_name);
}
