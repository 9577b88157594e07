/*
 * io_grequest.c: generalized request classes with a poll function (io_grequest.h), on
 * crmpi's standard generalized requests and its progress engine.
 *
 * A request of a class is an MPI_Grequest_start request whose extra state is an
 * io_grequest_t here. While the application waits for or tests a generalized request
 * (grequest_wait.h), poll_fn is called at every turn of crmpi's progress for the oldest
 * request of each class that has not completed: the requests of a class advance one after
 * the other, in the order they were started, as MPICH's wait_fn makes them (ROMIO's polls
 * in a loop, request by request). Both rules keep the ranks in step: a non-blocking
 * collective I/O request's poll_fn starts the non-blocking collectives of its next phase
 * on the file's communicator, and every rank must start those in the same order. Polled
 * from any progress (another collective's, MPI_File_set_view's), or several at a time,
 * each rank would start them wherever its messages happened to take it. Progress functions run
 * with the library lock held, and poll_fn calls MPI (ROMIO's state machine tests its own
 * requests, then calls MPI_Grequest_complete): the lock is released around it, and a turn
 * of progress started inside a poll_fn polls nothing.
 */
#include <stdbool.h>
#include <stdlib.h>

#include "grequest_wait.h"
#include "io_grequest.h"
#include "progress.h"

#pragma weak MPIX_Grequest_class_create = PMPIX_Grequest_class_create
#pragma weak MPIX_Grequest_class_allocate = PMPIX_Grequest_class_allocate

struct io_grequest_class {
    MPI_Grequest_query_function *query_fn;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel_fn;
    MPIX_Grequest_poll_function *poll_fn;
};

/* One live request: in the list, in the order started, from allocation until its free_fn. */
typedef struct io_grequest {
    struct io_grequest_class *greq_class;
    void *extra_state;   /* ROMIO's */
    MPI_Request request; /* its request, to see it complete */
    bool done;           /* complete: not polled any more */
    struct io_grequest *next;
} io_grequest_t;

static io_grequest_t *io_grequest_live; /* guarded by the library lock */
static bool io_grequest_polling;        /* a poll_fn is running (lock released) */

/* Is an older request of greq's class still to complete? */
static bool io_grequest_waits(const io_grequest_t *greq)
{
    for (const io_grequest_t *older = io_grequest_live; older != greq; older = older->next)
        if (older->greq_class == greq->greq_class && !older->done)
            return true;
    return false;
}

static int io_grequest_progress(void)
{
    int events = 0;

    if (io_grequest_polling || !crmpi_grequest_waits)
        return 0;
    io_grequest_polling = true;
    for (io_grequest_t *greq = io_grequest_live; greq; greq = greq->next) {
        MPIX_Grequest_poll_function *poll_fn = greq->greq_class->poll_fn;
        void *extra_state = greq->extra_state;

        if (greq->done || io_grequest_waits(greq))
            continue;
        /* The list only loses entries in free_fn, which runs from an MPI completion call
         * of the application: not from a poll_fn, so greq->next stays valid. */
        crmpi_unlock();
        poll_fn(extra_state, MPI_STATUS_IGNORE);
        crmpi_lock();
        greq->done = crmpi_grequest_is_complete(greq->request);
        events++;
    }
    io_grequest_polling = false;
    return events;
}

static int io_grequest_query(void *state, MPI_Status *status)
{
    io_grequest_t *greq = state;

    return greq->greq_class->query_fn(greq->extra_state, status);
}

static int io_grequest_free(void *state)
{
    io_grequest_t *greq = state;
    int err;

    crmpi_lock();
    for (io_grequest_t **link = &io_grequest_live; *link; link = &(*link)->next) {
        if (*link == greq) {
            *link = greq->next;
            break;
        }
    }
    if (io_grequest_live == NULL)
        crmpi_progress_unregister(io_grequest_progress);
    crmpi_unlock();
    err = greq->greq_class->free_fn(greq->extra_state);
    free(greq);
    return err;
}

static int io_grequest_cancel(void *state, int complete)
{
    io_grequest_t *greq = state;

    return greq->greq_class->cancel_fn(greq->extra_state, complete);
}

int PMPIX_Grequest_class_create(MPI_Grequest_query_function *query_fn,
                                MPI_Grequest_free_function *free_fn,
                                MPI_Grequest_cancel_function *cancel_fn,
                                MPIX_Grequest_poll_function *poll_fn,
                                MPIX_Grequest_wait_function *wait_fn,
                                MPIX_Grequest_class *greq_class)
{
    struct io_grequest_class *created = calloc(1, sizeof(*created));

    if (created == NULL)
        return MPI_ERR_NO_MEM;
    created->query_fn = query_fn;
    created->free_fn = free_fn;
    created->cancel_fn = cancel_fn;
    created->poll_fn = poll_fn;
    *greq_class = created;
    return MPI_SUCCESS;
}

int PMPIX_Grequest_class_allocate(MPIX_Grequest_class greq_class, void *extra_state,
                                  MPI_Request *request)
{
    io_grequest_t *greq = calloc(1, sizeof(*greq));
    int rc;

    if (greq == NULL)
        return MPI_ERR_NO_MEM;
    greq->greq_class = greq_class;
    greq->extra_state = extra_state;
    rc = MPI_Grequest_start(io_grequest_query, io_grequest_free, io_grequest_cancel, greq, request);
    if (rc != MPI_SUCCESS) {
        free(greq);
        return rc;
    }
    greq->request = *request;
    crmpi_lock();
    if (io_grequest_live == NULL)
        crmpi_progress_register(io_grequest_progress);
    io_grequest_t **tail = &io_grequest_live;
    while (*tail)
        tail = &(*tail)->next;
    *tail = greq;
    crmpi_unlock();
    return MPI_SUCCESS;
}
