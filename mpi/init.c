/*
 * init.c: MPI_Init and MPI_Init_thread (MPI-3.1 sections 8.7 and 12.4.3), and the library's
 * global state.
 *
 *   declare every parameter -> connect to the agent (or become a singleton) -> name this
 *   process "rank N" in log lines -> read mpi_* parameters -> rank 0 reports unknown and
 *   non-default parameters -> fill MPI_COMM_WORLD and MPI_COMM_SELF -> the PML (BTLs,
 *   modex) -> both communicators' PML and collective state
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "component.h"
#include "crmpi_status.h"
#include "inc.h"
#include "log.h"
#include "mpi_internal.h"
#include "param.h"
#include "pml.h"
#include "coll.h"
#include "snapc.h"

#pragma weak MPI_Init = PMPI_Init
#pragma weak MPI_Init_thread = PMPI_Init_thread

crmpi_mpi_state_t crmpi_mpi_state = {
    .thread_level = MPI_THREAD_SINGLE,
    /* On until MPI_Init reads mpi_param_check, so that the calls allowed before it
     * (MPI_Error_string, ...) check their arguments too. */
    .param_check = true,
};

/* MPI_COMM_SELF's one rank, in MPI_COMM_WORLD. */
static uint32_t init_self_world_rank;

/* A bool parameter of this layer; `fallback` when it cannot be read. */
static bool init_param_bool(const char *name, bool fallback)
{
    bool value;
    int rc = crmpi_param_get_bool(name, &value);

    if (rc == CRMPI_OK) {
        return value;
    }
    /* A bad value was reported by the parameter system; a missing declaration is a bug of
     * the build that nothing else reports. */
    if (rc == CRMPI_ERR_NOT_FOUND) {
        crmpi_log_warn("MPI_Init: parameter %s is not declared (a bug of this crmpi build); "
                       "using %s",
                       name, fallback ? "true" : "false");
    }
    return fallback;
}

static const char *init_param_source_name(crmpi_param_source_t source)
{
    switch (source) {
    case CRMPI_PARAM_SOURCE_DEFAULT: return "default";
    case CRMPI_PARAM_SOURCE_FILE: return "parameter file";
    case CRMPI_PARAM_SOURCE_ENV: return "environment or mpirun --mca";
    case CRMPI_PARAM_SOURCE_OVERRIDE: return "command line";
    }
    return "unknown source";
}

/* crmpi_param_foreach callback of mpi_show_mca_params: one line per value set by the user. */
static int init_show_param(const crmpi_param_decl_t *decl, void *arg)
{
    const crmpi_param_decl_t *found;
    const char *value;
    crmpi_param_source_t source;

    (void)arg;
    if (crmpi_param_lookup(decl->name, &found, &value, &source) != CRMPI_OK ||
        source == CRMPI_PARAM_SOURCE_DEFAULT) {
        return 0;
    }
    crmpi_log_info("mca parameter %s = \"%s\" (%s)", decl->name, value,
                   init_param_source_name(source));
    return 0;
}

/* The MPI layer's part of a restart: the restart's parameters replace the image's. */
static int init_cr_hook(crmpi_inc_phase_t phase)
{
    if (phase == CRMPI_INC_PHASE_RESTART)
        crmpi_mpi_state.param_check = init_param_bool("mpi_param_check", true);
    return CRMPI_OK;
}

/* A predefined communicator's PML communicator (the PML logs a failure). */
static int init_pml_comm(struct crmpi_comm_s *comm)
{
    crmpi_pml_comm_params_t params = {
        .context_id = comm->context_id,
        .rank = comm->rank,
        .size = comm->size,
        .world_ranks = comm->world_ranks,
        .name = comm->name,
        .owner = comm,
    };

    return crmpi_pml_add_comm(&params, &comm->pml);
}

/*
 * Start the library's instance: everything MPI needs, for the World Model and for sessions
 * alike (MPI-4.0 section 11.3). Called with the lock held by the first of MPI_Init,
 * MPI_Init_thread and MPI_Session_init. Failures before the job facts are known have no
 * communicator to raise an error on and no job to abort: they print one line and exit.
 */
void crmpi_mpi_instance_start(const char *func_name)
{
    const crmpi_rte_job_info_t *job;
    char *unreach_msg = NULL;
    const char *held_error;
    char who[32];
    int rc;

    if (crmpi_mpi_state.instance_ended) {
        crmpi_rte_abort_job(MPI_ERR_OTHER,
                            "%s: MPI was already finalized in this process (MPI_Finalize or "
                            "its last MPI_Session_finalize), and crmpi cannot initialize it "
                            "again; the program aborts",
                            func_name);
    }
    rc = crmpi_catalog_register_all();
    if (rc != CRMPI_OK) {
        crmpi_log_error("%s: cannot declare crmpi's parameters (%s); the program exits", func_name,
                        crmpi_strerror(rc));
        goto err_unlock_exit;
    }
    rc = crmpi_rte_init();
    if (rc != CRMPI_OK) {
        crmpi_log_error("%s: cannot get the job facts from this rank's crmpi-agent (%s); check "
                        "that mpirun and the program use the same crmpi installation",
                        func_name, crmpi_strerror(rc));
        goto err_unlock_exit;
    }
    job = crmpi_rte_job();
    snprintf(who, sizeof(who), "rank %u", job->rank);
    crmpi_log_set_who(who);

    crmpi_mpi_state.param_check = init_param_bool("mpi_param_check", true);
    /* Every rank sees the same parameters (mpirun passes them on): one report is enough.
     * mpirun has already judged the names against the same catalog; only a singleton has
     * nobody else to warn about them. */
    if (job->rank == 0) {
        if (!crmpi_rte_connected()) {
            crmpi_param_warn_unknown(crmpi_log_who());
        }
        if (init_param_bool("mpi_show_mca_params", false)) {
            crmpi_param_foreach(init_show_param, NULL);
        }
    }

    crmpi_mpi_comm_world.comm.rank = (int)job->rank;
    crmpi_mpi_comm_world.comm.size = (int)job->size;
    crmpi_mpi_comm_self.comm.rank = 0;
    crmpi_mpi_comm_self.comm.size = 1;
    init_self_world_rank = job->rank;
    crmpi_mpi_comm_self.comm.world_ranks = &init_self_world_rank;
    crmpi_mpi_comm_world.comm.world_ranks = malloc(job->size * sizeof(uint32_t));
    if (!crmpi_mpi_comm_world.comm.world_ranks) {
        crmpi_log_error("%s: out of memory for %u ranks; the program exits", func_name, job->size);
        goto err_unlock_exit;
    }
    for (uint32_t r = 0; r < job->size; r++)
        crmpi_mpi_comm_world.comm.world_ranks[r] = r;
    /* Intracommunicators: the ranks of their calls name their own group. */
    crmpi_mpi_comm_world.comm.remote_size = crmpi_mpi_comm_world.comm.size;
    crmpi_mpi_comm_world.comm.remote_world_ranks = crmpi_mpi_comm_world.comm.world_ranks;
    crmpi_mpi_comm_self.comm.remote_size = crmpi_mpi_comm_self.comm.size;
    crmpi_mpi_comm_self.comm.remote_world_ranks = crmpi_mpi_comm_self.comm.world_ranks;

    /* The data path: BTLs and their modex. A peer no BTL reaches ends the job, naming both
     * ranks. */
    crmpi_pml_set_comm_idle_fn(crmpi_mpi_comm_bury);
    /* A BTL that cannot start (a transport list naming what does not exist) fails the same
     * way on every rank: its error, held back, becomes mpirun's one line for the job. */
    crmpi_log_hold_errors();
    rc = crmpi_pml_init(&unreach_msg);
    held_error = crmpi_log_release_errors(rc == CRMPI_OK || rc == CRMPI_ERR_UNREACH);
    if (rc == CRMPI_ERR_UNREACH) {
        crmpi_rte_abort_job(MPI_ERR_OTHER, "%s: %s", func_name,
                            unreach_msg ? unreach_msg : "a peer is unreachable");
    }
    if (rc != CRMPI_OK && held_error)
        crmpi_rte_abort_job(MPI_ERR_OTHER, "%s", held_error);
    /* Both communicators' matching state. */
    if (rc == CRMPI_OK)
        rc = init_pml_comm(&crmpi_mpi_comm_world.comm);
    if (rc == CRMPI_OK)
        rc = init_pml_comm(&crmpi_mpi_comm_self.comm);
    if (rc != CRMPI_OK) {
        crmpi_log_error("%s: cannot set up point-to-point communication (%s); the program exits",
                        func_name, crmpi_strerror(rc));
        goto err_unlock_exit;
    }
    /* The collectives of both communicators (coll.h): component choice, tag sequence. */
    rc = crmpi_coll_comm_create(crmpi_mpi_comm_world.comm.pml, crmpi_mpi_comm_world.comm.rank,
                                crmpi_mpi_comm_world.comm.size, &crmpi_mpi_comm_world.comm.coll);
    if (rc == CRMPI_OK)
        rc = crmpi_coll_comm_create(crmpi_mpi_comm_self.comm.pml, 0, 1,
                                    &crmpi_mpi_comm_self.comm.coll);
    if (rc != CRMPI_OK) {
        crmpi_log_error("%s: cannot set up collective communication (%s); the program exits",
                        func_name, crmpi_strerror(rc));
        goto err_unlock_exit;
    }

    crmpi_mpi_state.instance_active = true;
    /* Checkpoints are possible from here to the instance's end (mpirun --with-ft cr). */
    rc = crmpi_inc_register(init_cr_hook);
    if (rc == CRMPI_OK)
        rc = crmpi_inc_register_veto(crmpi_win_shared_refusal);
    if (rc == CRMPI_OK)
        rc = crmpi_snapc_app_init();
    if (rc != CRMPI_OK) {
        crmpi_log_error("%s: cannot start checkpoint/restart support (%s); the program exits",
                        func_name, crmpi_strerror(rc));
        goto err_unlock_exit;
    }
    return;

err_unlock_exit:
    /* Unlocked, so that an atexit handler calling MPI is told MPI is not initialised
     * instead of hanging. */
    crmpi_unlock();
    exit(1);
}

int crmpi_mpi_instance_end(void)
{
    int rc = CRMPI_OK;

    /* No checkpoint may start once the end has begun; one in progress ends first (it
     * needs the lock). Nothing may start the instance again meanwhile. */
    crmpi_mpi_state.instance_ended = true;
    crmpi_unlock();
    crmpi_snapc_app_finalize();
    crmpi_lock();
    crmpi_mpi_state.instance_active = false;
    crmpi_coll_comm_destroy(crmpi_mpi_comm_self.comm.coll);
    crmpi_coll_comm_destroy(crmpi_mpi_comm_world.comm.coll);
    crmpi_mpi_comm_self.comm.coll = crmpi_mpi_comm_world.comm.coll = NULL;
    /* Buffered and freed sends on them may still move data: the PML keeps what they need
     * until crmpi_pml_finalize has completed them. */
    crmpi_pml_del_comm(crmpi_mpi_comm_self.comm.pml);
    crmpi_pml_del_comm(crmpi_mpi_comm_world.comm.pml);
    crmpi_mpi_comm_self.comm.pml = crmpi_mpi_comm_world.comm.pml = NULL;
    crmpi_pml_finalize();
    if (crmpi_rte_connected())
        rc = crmpi_rte_finalize();
    return rc;
}

/* The body of MPI_Init and MPI_Init_thread: the World Model on the instance. */
static int init_run(int required, int *provided, const char *func_name)
{
    crmpi_lock();
    if (crmpi_mpi_state.initialized) {
        crmpi_rte_abort_job(MPI_ERR_OTHER,
                            "%s: MPI was already %s in this process, and can be initialised "
                            "only once (MPI-3.1 section 8.7); the program aborts",
                            func_name, crmpi_mpi_state.finalized ? "finalized" : "initialized");
    }
    if (crmpi_mpi_state.param_check && provided == NULL) {
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "provided is NULL");
    }
    if (!crmpi_mpi_state.instance_active)
        crmpi_mpi_instance_start(func_name);

    /* Every call takes the library lock, so every level is available; a level above
     * MPI_THREAD_MULTIPLE gets the highest one, as MPI-3.1 section 12.4.3 asks. */
    if (required < MPI_THREAD_SINGLE) {
        required = MPI_THREAD_SINGLE;
    } else if (required > MPI_THREAD_MULTIPLE) {
        required = MPI_THREAD_MULTIPLE;
    }
    crmpi_mpi_state.thread_level = required;
    crmpi_mpi_state.main_thread = pthread_self();
    crmpi_mpi_state.initialized = true;
    crmpi_unlock();
    *provided = required;
    return MPI_SUCCESS;
}

int PMPI_Init(int *argc, char ***argv)
{
    int provided;

    /* MPI needs nothing from the command line: mpirun passes everything through the
     * environment and the agent. */
    (void)argc;
    (void)argv;
    return init_run(MPI_THREAD_SINGLE, &provided, "MPI_Init");
}

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    (void)argc;
    (void)argv;
    return init_run(required, provided, "MPI_Init_thread");
}
