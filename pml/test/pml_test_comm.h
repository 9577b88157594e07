/*
 * pml_test_comm.h: the fixture the PML's unit tests share: MPI initialised in this
 * process, the library lock held, and a one-rank communicator (pml_comm) over the rank
 * itself. Included by one test program each (its functions are static).
 */
#ifndef PML_TEST_COMM_H
#define PML_TEST_COMM_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "crmpi_status.h"
#include "mpi.h"
#include "pml.h"
#include "progress.h"

/* The rank itself, in pml_comm (a singleton). */
static const uint32_t self_world_rank[1] = {0};

/* The communicator most tests use: one rank, a context id MPI_Init's communicators
 * (0 and 1) do not take. */
static crmpi_pml_comm_t *pml_comm;

/* A one-rank communicator with context id `ctx`, its errors raised on `owner`. */
static crmpi_pml_comm_t *comm_add(uint32_t ctx, MPI_Comm owner)
{
    crmpi_pml_comm_params_t params = {
        .context_id = ctx,
        .rank = 0,
        .size = 1,
        .world_ranks = self_world_rank,
        .name = "test comm",
        .owner = owner,
    };
    crmpi_pml_comm_t *pcomm = NULL;

    assert_int_equal(crmpi_pml_add_comm(&params, &pcomm), CRMPI_OK);
    return pcomm;
}

static int setup(void **state)
{
    int provided;

    (void)state;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return -1;
    crmpi_lock();
    pml_comm = comm_add(5, MPI_COMM_NULL);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    crmpi_pml_del_comm(pml_comm);
    crmpi_unlock();
    return MPI_Finalize() == MPI_SUCCESS ? 0 : -1;
}

#endif /* PML_TEST_COMM_H */
