/*
 * test_grequest.c: generalized requests (grequest.c, MPI-3.1 section 12.2) in a singleton,
 * with callbacks that record when they run: query_fn fills the status MPI_Wait returns and
 * its error is the call's; free_fn runs once, after query_fn, or at MPI_Request_free of a
 * complete request, or at MPI_Grequest_complete of one freed before; cancel_fn gets
 * whether the request is complete; MPI_Test and MPI_Waitall wait for MPI_Grequest_complete,
 * which another thread may call while MPI_Wait blocks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"
#include "test_capture.h"

/* What the callbacks saw, per request. */
typedef struct greq_state {
    int queries;      /* query_fn calls */
    int frees;        /* free_fn calls */
    int cancels;      /* cancel_fn calls */
    int cancel_done;  /* `complete` of the last cancel_fn call */
    int query_error;  /* what query_fn returns */
    int free_error;   /* what free_fn returns */
    int order;        /* 1 when free_fn ran after at least one query_fn */
    int elements;     /* MPI_INT elements query_fn reports */
    MPI_Request self; /* for a thread to complete */
} greq_state_t;

static int query_fn(void *extra, MPI_Status *status)
{
    greq_state_t *st = extra;

    st->queries++;
    /* MPI calls from inside the callback: the lock is not held. */
    MPI_Status_set_elements(status, MPI_INT, st->elements);
    MPI_Status_set_cancelled(status, st->cancels > 0);
    status->MPI_SOURCE = 3;
    status->MPI_TAG = 7;
    return st->query_error;
}

static int free_fn(void *extra)
{
    greq_state_t *st = extra;

    st->frees++;
    st->order = st->queries > 0;
    return st->free_error;
}

static int cancel_fn(void *extra, int complete)
{
    greq_state_t *st = extra;

    st->cancels++;
    st->cancel_done = complete;
    return MPI_SUCCESS;
}

static int group_setup(void **state)
{
    (void)state;
    unsetenv("CRMPI_CTL_FD");
    setenv("CRMPI_PARAM_FILE", "", 1);
    test_env_clear_mca();
    int provided;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        return -1;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    return MPI_Finalize() == MPI_SUCCESS ? 0 : -1;
}

static void test_wait_calls_query_then_free(void **state)
{
    greq_state_t st = {.elements = 5};
    MPI_Request req;
    MPI_Status status;
    int flag, count;

    (void)state;
    assert_int_equal(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &st, &req), MPI_SUCCESS);
    /* Not complete: Test says so and calls nothing. */
    assert_int_equal(MPI_Test(&req, &flag, &status), MPI_SUCCESS);
    assert_false(flag);
    assert_int_equal(st.queries + st.frees, 0);
    assert_int_equal(MPI_Grequest_complete(req), MPI_SUCCESS);
    /* Request_get_status queries but keeps the request. */
    assert_int_equal(MPI_Request_get_status(req, &flag, &status), MPI_SUCCESS);
    assert_true(flag);
    assert_int_equal(st.queries, 1);
    assert_int_equal(st.frees, 0);
    assert_int_equal(MPI_Wait(&req, &status), MPI_SUCCESS);
    assert_ptr_equal(req, MPI_REQUEST_NULL);
    assert_int_equal(st.queries, 2);
    assert_int_equal(st.frees, 1);
    assert_int_equal(st.order, 1);
    assert_int_equal(status.MPI_SOURCE, 3);
    assert_int_equal(status.MPI_TAG, 7);
    MPI_Get_count(&status, MPI_INT, &count);
    assert_int_equal(count, 5);
}

static void test_query_error_is_the_calls(void **state)
{
    greq_state_t a = {.query_error = MPI_ERR_OTHER}, b = {0};
    MPI_Request reqs[2];
    MPI_Status statuses[2];

    (void)state;
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &a, &reqs[0]);
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &b, &reqs[1]);
    MPI_Grequest_complete(reqs[0]);
    MPI_Grequest_complete(reqs[1]);
    assert_int_equal(MPI_Waitall(2, reqs, statuses), MPI_ERR_IN_STATUS);
    assert_int_equal(statuses[0].MPI_ERROR, MPI_ERR_OTHER);
    assert_int_equal(statuses[1].MPI_ERROR, MPI_SUCCESS);
    assert_int_equal(a.frees + b.frees, 2);
    assert_ptr_equal(reqs[0], MPI_REQUEST_NULL);

    /* A failing free_fn fails the call too. */
    greq_state_t c = {.free_error = MPI_ERR_INTERN};
    MPI_Request req;
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c, &req);
    MPI_Grequest_complete(req);
    assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_ERR_INTERN);
}

static void test_request_free_and_cancel(void **state)
{
    greq_state_t st = {0}, early = {0};
    MPI_Request req, copy;
    MPI_Status status;
    int cancelled;

    (void)state;
    /* Freed before completion: free_fn at MPI_Grequest_complete, and no query. */
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &early, &req);
    copy = req;
    assert_int_equal(MPI_Request_free(&req), MPI_SUCCESS);
    assert_int_equal(early.frees, 0);
    assert_int_equal(MPI_Grequest_complete(copy), MPI_SUCCESS);
    assert_int_equal(early.frees, 1);
    assert_int_equal(early.queries, 0);

    /* Cancel: cancel_fn told whether it is complete; the status says cancelled. */
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &st, &req);
    assert_int_equal(MPI_Cancel(&req), MPI_SUCCESS);
    assert_int_equal(st.cancels, 1);
    assert_int_equal(st.cancel_done, 0);
    MPI_Grequest_complete(req);
    MPI_Cancel(&req);
    assert_int_equal(st.cancel_done, 1);
    assert_int_equal(MPI_Wait(&req, &status), MPI_SUCCESS);
    MPI_Test_cancelled(&status, &cancelled);
    assert_true(cancelled);

    /* Freed when complete: free_fn at once. */
    greq_state_t done = {0};
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &done, &req);
    MPI_Grequest_complete(req);
    assert_int_equal(MPI_Request_free(&req), MPI_SUCCESS);
    assert_int_equal(done.frees, 1);

    /* Errors: completing twice, or a request that is not generalized. */
    assert_int_equal(MPI_Grequest_start(NULL, free_fn, cancel_fn, &done, &req), MPI_ERR_ARG);
    int value;
    MPI_Request recv;
    MPI_Irecv(&value, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &recv);
    assert_int_equal(MPI_Grequest_complete(recv), MPI_ERR_REQUEST);
    MPI_Wait(&recv, MPI_STATUS_IGNORE);
}

static void *complete_later(void *arg)
{
    greq_state_t *st = arg;

    usleep(20000);
    MPI_Grequest_complete(st->self);
    return NULL;
}

/* MPI_Wait blocks until another thread completes the request; the lock is not held
 * meanwhile, or MPI_Grequest_complete could not run. */
static void test_wait_for_another_thread(void **state)
{
    greq_state_t st = {.elements = 1};
    MPI_Request req;
    pthread_t thread;

    (void)state;
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &st, &req);
    st.self = req;
    pthread_create(&thread, NULL, complete_later, &st);
    assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    pthread_join(thread, NULL);
    assert_int_equal(st.frees, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wait_calls_query_then_free),
        cmocka_unit_test(test_query_error_is_the_calls),
        cmocka_unit_test(test_request_free_and_cancel),
        cmocka_unit_test(test_wait_for_another_thread),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
