/*
 * mpix_cr.c: MPIX_Checkpoint, MPIX_Restart_status and MPIX_CR_register_callback
 * (include/mpi-ext.h; docs/design.md, "Application-level checkpoints").
 *
 * MPIX_Checkpoint is a collective over every rank of the job: each rank calls backup() of
 * libcrmpi-pheap, then asks for a checkpoint through its agent (snapc.h); mpirun begins
 * one once every rank asked, and each agent stores its rank's backup file where a CRIU
 * checkpoint would store the rank's images. It returns once every agent holds its rank's
 * backup: the copy to storage and the commit go on in the background, as after a
 * transparent dump, unless snapc_base_blocking asks to wait for the commit.
 *
 * libmpi does not link libcrmpi-pheap (a program without a persistent heap must not need
 * it): the calls are found in the process, which has them when the program is linked with
 * -lcrmpi-pheap.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "mpi-ext.h"
#include "mpi_internal.h"
#include "crmpi_status.h"
#include "progress.h"
#include "snapc.h"

#pragma weak MPIX_Checkpoint = PMPIX_Checkpoint
#pragma weak MPIX_Restart_status = PMPIX_Restart_status
#pragma weak MPIX_CR_register_callback = PMPIX_CR_register_callback

/* libcrmpi-pheap's calls, as the process has them. */
typedef struct mpix_pheap {
    int (*backup)(void);                     /* backup(3) */
    int (*backup_file)(char *buf, size_t n); /* pheap_backup_file, in crmpi/pheap.h */
} mpix_pheap_t;

/* Find libcrmpi-pheap in the process: by its own function's name (distinct, unlike
 * "backup", which a program may define for itself), then backup() in that same library. */
static int mpix_pheap_find(mpix_pheap_t *pheap_out)
{
    Dl_info where;
    void *lib, *backup_file = dlsym(RTLD_DEFAULT, "pheap_backup_file");

    if (!backup_file || !dladdr(backup_file, &where) || !where.dli_fname)
        return CRMPI_ERR_NOT_FOUND;
    lib = dlopen(where.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (!lib)
        return CRMPI_ERR_NOT_FOUND;
    pheap_out->backup = (int (*)(void))dlsym(lib, "backup");
    pheap_out->backup_file = (int (*)(char *, size_t))backup_file;
    dlclose(lib); /* RTLD_NOLOAD took a reference; the program's own keeps it loaded */
    return pheap_out->backup ? CRMPI_OK : CRMPI_ERR_NOT_FOUND;
}

/* This rank's part before the request: callbacks, backup(), the backup file's path.
 * @return CRMPI_OK, or an error with `why` saying why. */
static int mpix_checkpoint_local(char *backup_path, size_t len, char *why, size_t why_len)
{
    mpix_pheap_t pheap;

    if (!crmpi_snapc_app_enabled()) {
        snprintf(why, why_len,
                 "the job was not started with --with-ft cr, so it cannot be checkpointed");
        return CRMPI_ERR_NOT_SUPPORTED;
    }
    if (mpix_pheap_find(&pheap) != CRMPI_OK) {
        snprintf(why, why_len,
                 "the program has no persistent heap: link it with "
                 "-lcrmpi-pheap and open one (mopen, bopen)");
        return CRMPI_ERR_NOT_SUPPORTED;
    }
    if (pheap.backup_file(backup_path, len) != 0) {
        snprintf(why, why_len, "no backup file is open (call bopen first)");
        return CRMPI_ERR_BAD_PARAM;
    }
    crmpi_snapc_app_callbacks_run(CRMPI_SNAPC_CB_PRE_CHECKPOINT);
    if (pheap.backup() != 0) {
        snprintf(why, why_len, "backup() failed (libcrmpi-pheap said why above)");
        return CRMPI_ERR_IO;
    }
    return CRMPI_OK;
}

/* An error of MPIX_Checkpoint, through the communicator's error handler. */
static int mpix_checkpoint_error(MPI_Comm comm, int errcode, const char *why)
{
    crmpi_lock();
    return crmpi_mpi_errhandler_invoke(comm, errcode, "MPIX_Checkpoint", why);
}

int PMPIX_Checkpoint(MPI_Comm comm, MPIX_Checkpoint_info *info)
{
    char backup_path[PATH_MAX], why[512] = "";
    int comm_size = 0, world_size = 0, local_ok, all_ok = 0;
    uint64_t ticket = 0;
    uint32_t seq = 0;
    bool committed = false;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active("MPIX_Checkpoint");
    crmpi_unlock();
    if (PMPI_Comm_size(comm, &comm_size) != MPI_SUCCESS)
        return MPI_ERR_COMM; /* MPI_Comm_size raised it */
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (comm_size != world_size) {
        snprintf(why, sizeof(why),
                 "the communicator has %d of the job's %d ranks; a checkpoint of the job "
                 "needs every rank (MPI_COMM_WORLD)",
                 comm_size, world_size);
        return mpix_checkpoint_error(comm, MPI_ERR_COMM, why);
    }
    /* With crs pheap, a checkpoint is taken here only when ompi-checkpoint asked for one:
     * a rank may not have heard of it yet, so the ranks agree. */
    if (crmpi_snapc_app_enabled() && crmpi_snapc_app_on_demand()) {
        int wanted = crmpi_snapc_app_wanted(), any_wanted = 0;

        if (PMPI_Allreduce(&wanted, &any_wanted, 1, MPI_INT, MPI_LOR, comm) != MPI_SUCCESS)
            return MPI_ERR_OTHER;
        if (!any_wanted) {
            if (info)
                *info = (MPIX_Checkpoint_info){0};
            return MPI_SUCCESS;
        }
    }
    /* Every rank's backup is written, or none asks: a rank that cannot would leave the
     * others waiting for its request. */
    rc = mpix_checkpoint_local(backup_path, sizeof(backup_path), why, sizeof(why));
    local_ok = rc == CRMPI_OK;
    if (PMPI_Allreduce(&local_ok, &all_ok, 1, MPI_INT, MPI_LAND, comm) != MPI_SUCCESS)
        return MPI_ERR_OTHER;
    if (!all_ok) {
        if (local_ok)
            snprintf(why, sizeof(why), "another rank's part failed");
        int errcode = rc == CRMPI_ERR_BAD_PARAM       ? MPI_ERR_ARG
                      : rc == CRMPI_ERR_NOT_SUPPORTED ? MPI_ERR_UNSUPPORTED_OPERATION
                                                      : MPI_ERR_OTHER;
        return mpix_checkpoint_error(comm, errcode, why);
    }
    rc = crmpi_snapc_app_request(backup_path, &ticket);
    if (rc != CRMPI_OK) {
        snprintf(why, sizeof(why), "cannot ask the agent for the checkpoint (%s)",
                 crmpi_strerror(rc));
        return mpix_checkpoint_error(comm, MPI_ERR_OTHER, why);
    }
    /* The C/R thread runs the checkpoint, taking the library lock between our polls. */
    for (;;) {
        crmpi_lock();
        crmpi_progress();
        rc = crmpi_snapc_app_poll(ticket, &seq, &committed, why, sizeof(why));
        crmpi_unlock();
        if (rc != CRMPI_ERR_RESOURCE_BUSY)
            break;
        sched_yield();
    }
    if (rc != CRMPI_OK)
        return mpix_checkpoint_error(comm, MPI_ERR_OTHER, why);
    crmpi_snapc_app_callbacks_run(CRMPI_SNAPC_CB_CONTINUE);
    if (info)
        *info = (MPIX_Checkpoint_info){.sequence = (int)seq, .committed = committed};
    return MPI_SUCCESS;
}

int PMPIX_Restart_status(int *restarted_out, int *sequence_out)
{
    uint32_t seq = 0;
    bool app = false;
    bool restarted = crmpi_snapc_app_restarted(&seq, &app);

    if (restarted_out)
        *restarted_out = restarted;
    if (sequence_out)
        *sequence_out = restarted ? (int)seq : 0;
    return MPI_SUCCESS;
}

int PMPIX_CR_register_callback(int kind, MPIX_CR_callback_fn *fn, void *arg)
{
    static const crmpi_snapc_cb_kind_t kinds[] = {
        [MPIX_CR_PRE_CHECKPOINT] = CRMPI_SNAPC_CB_PRE_CHECKPOINT,
        [MPIX_CR_CONTINUE] = CRMPI_SNAPC_CB_CONTINUE,
        [MPIX_CR_RESTART] = CRMPI_SNAPC_CB_RESTART,
    };

    if (kind < 0 || kind > MPIX_CR_RESTART || !fn)
        return MPI_ERR_ARG;
    return crmpi_snapc_app_callback_add(kinds[kind], fn, arg) == CRMPI_OK ? MPI_SUCCESS
                                                                          : MPI_ERR_NO_MEM;
}
