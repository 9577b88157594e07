/*
 * core_params.c: parameters that belong to no framework (component.h). The catalog
 * declares them first, so every binary judges --mca names against them.
 */
#include "config.h"

#include "component.h"

const crmpi_param_decl_t crmpi_core_params[] = {
    {"runtime_session_dir_base", CRMPI_PARAM_STRING, "",
     "Directory under which mpirun and the agents create a job's session directory "
     "(sockets, PMIx rendezvous files); empty means $TMPDIR, or /tmp when that is unset.",
     CRMPI_PARAM_LEVEL_USER},
    {"mpi_param_check", CRMPI_PARAM_BOOL, "true",
     "Check the arguments of every MPI call and raise MPI_ERR_ARG and friends on bad ones; "
     "turning it off saves a few nanoseconds per call in debugged applications.",
     CRMPI_PARAM_LEVEL_TUNER},
    {"mpi_yield_when_idle", CRMPI_PARAM_INT, "-1",
     "A rank waiting for a message gives its core away between two polls (sched_yield): 1 "
     "always, 0 never, -1 when the node's ranks outnumber its online CPUs (a spinning rank "
     "would steal the core of the rank it waits for).",
     CRMPI_PARAM_LEVEL_TUNER},
    {"ft_cr_enable", CRMPI_PARAM_BOOL, "false",
     "Checkpoint/restart support in the ranks (mpirun --with-ft cr sets it): a C/R thread "
     "in each rank answers ompi-checkpoint; off, nothing of it runs and it costs nothing.",
     CRMPI_PARAM_LEVEL_USER},
    {"mpi_show_mca_params", CRMPI_PARAM_BOOL, "false",
     "At MPI_Init, rank 0 prints every parameter whose value is not its default, with "
     "where the value came from.",
     CRMPI_PARAM_LEVEL_USER},
    {"runtime_fault_inject", CRMPI_PARAM_STRING, "",
     "Fault points to fire, for tests: 'name[:N],...' (N: fire only on the N-th hit). Adds to "
     "the CRMPI_FAULT environment variable; runtime/fault.h lists the points.",
     CRMPI_PARAM_LEVEL_DEV},
};

const size_t crmpi_core_num_params = sizeof(crmpi_core_params) / sizeof(crmpi_core_params[0]);
