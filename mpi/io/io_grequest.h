/*
 * io_grequest.h: the generalized request classes ROMIO's non-blocking collective I/O
 * needs (MPICH's MPIX_Grequest_class extension: a request with poll and wait functions
 * that MPI's completion calls drive), provided to ROMIO's build only: make passes this
 * header to every ROMIO compile (mpi/io/Makefile.inc). libcrmpi-io keeps these symbols
 * hidden (libcrmpi-io.map), and no application sees them: MPI_File_iwrite_all and the
 * other non-blocking collectives are what they serve. io_grequest.c implements them.
 */
#ifndef CRMPI_IO_GREQUEST_H
#define CRMPI_IO_GREQUEST_H

#include "mpi.h"

typedef int MPIX_Grequest_poll_function(void *extra_state, MPI_Status *status);
typedef int MPIX_Grequest_wait_function(int count, void **array_of_states, double timeout,
                                        MPI_Status *status);
typedef struct io_grequest_class *MPIX_Grequest_class;

/* A class: the functions every request of it calls. */
int PMPIX_Grequest_class_create(MPI_Grequest_query_function *query_fn,
                                MPI_Grequest_free_function *free_fn,
                                MPI_Grequest_cancel_function *cancel_fn,
                                MPIX_Grequest_poll_function *poll_fn,
                                MPIX_Grequest_wait_function *wait_fn,
                                MPIX_Grequest_class *greq_class);
/* A request of the class: poll_fn runs at each turn of crmpi's progress until the request
 * completes (MPI_Grequest_complete, which poll_fn calls). */
int PMPIX_Grequest_class_allocate(MPIX_Grequest_class greq_class, void *extra_state,
                                  MPI_Request *request);
int MPIX_Grequest_class_create(MPI_Grequest_query_function *query_fn,
                               MPI_Grequest_free_function *free_fn,
                               MPI_Grequest_cancel_function *cancel_fn,
                               MPIX_Grequest_poll_function *poll_fn,
                               MPIX_Grequest_wait_function *wait_fn,
                               MPIX_Grequest_class *greq_class);
int MPIX_Grequest_class_allocate(MPIX_Grequest_class greq_class, void *extra_state,
                                 MPI_Request *request);

#endif /* CRMPI_IO_GREQUEST_H */
