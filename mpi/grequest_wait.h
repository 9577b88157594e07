/*
 * grequest_wait.h: what libmpi tells a library that progresses its own generalized requests
 * (libcrmpi-io: ROMIO's non-blocking I/O, mpi/io/io_grequest.c) about the application's
 * completion calls.
 *
 * Such a library advances its requests only while the application waits for or tests a
 * generalized request, as MPICH calls ROMIO's poll and wait functions: never from a
 * completion call on other requests, nor from the progress inside another MPI call. Its
 * requests' next steps start collectives on the file's communicator, and the ranks must
 * start those in the same order; the application's calls on the I/O requests happen at
 * the same points of the program on every rank, the progress of other calls does not.
 */
#ifndef CRMPI_GREQUEST_WAIT_H
#define CRMPI_GREQUEST_WAIT_H

#include "mpi.h"

/* The completion calls running now that were given a live generalized request (MPI_Wait,
 * MPI_Test and their forms, MPI_Request_get_status; mpi/p2p). Guarded by the library lock. */
extern int crmpi_grequest_waits;

/* Whether `request` has completed (MPI_Grequest_complete was called for a generalized one):
 * no progress, no status, no error raised. Call with the library lock held. */
int crmpi_grequest_is_complete(MPI_Request request);

#endif /* CRMPI_GREQUEST_WAIT_H */
