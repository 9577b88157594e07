/*
 * test_progress.c: the progress engine and the library lock (runtime/progress.h).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdbool.h>

#include "crmpi_status.h"
#include "progress.h"

/* The order in which the progress functions below ran, as a string of their letters. */
static char progress_trace[32];
/* Letters in progress_trace. */
static size_t progress_trace_len;

static void progress_trace_add(char letter)
{
    if (progress_trace_len + 1 < sizeof(progress_trace)) {
        progress_trace[progress_trace_len++] = letter;
        progress_trace[progress_trace_len] = '\0';
    }
}

static int progress_fn_a(void)
{
    progress_trace_add('a');
    return 1;
}

static int progress_fn_b(void)
{
    progress_trace_add('b');
    return 2;
}

static int progress_fn_self_removing(void)
{
    progress_trace_add('s');
    assert_int_equal(crmpi_progress_unregister(progress_fn_self_removing), CRMPI_OK);
    return 4;
}

static void progress_trace_reset(void)
{
    progress_trace_len = 0;
    progress_trace[0] = '\0';
}

static void test_register_and_progress(void **state)
{
    int events;

    progress_trace_reset();
    assert_int_equal(crmpi_progress(), 0);

    assert_int_equal(crmpi_progress_register(progress_fn_a), CRMPI_OK);
    assert_int_equal(crmpi_progress_register(progress_fn_b), CRMPI_OK);
    assert_int_equal(crmpi_progress_register(progress_fn_a), CRMPI_ERR_EXISTS);

    crmpi_lock();
    events = crmpi_progress();
    crmpi_unlock();
    assert_int_equal(events, 3);
    assert_string_equal(progress_trace, "ab");

    /* Removing one keeps the order of the others. */
    assert_int_equal(crmpi_progress_register(progress_fn_self_removing), CRMPI_OK);
    assert_int_equal(crmpi_progress_unregister(progress_fn_a), CRMPI_OK);
    assert_int_equal(crmpi_progress_unregister(progress_fn_a), CRMPI_ERR_NOT_FOUND);
    assert_int_equal(crmpi_progress_register(progress_fn_a), CRMPI_OK);
    progress_trace_reset();
    assert_int_equal(crmpi_progress(), 2 + 4);
    /* The function after the one that removed itself waits for the next call. */
    assert_string_equal(progress_trace, "bs");
    progress_trace_reset();
    assert_int_equal(crmpi_progress(), 2 + 1);
    assert_string_equal(progress_trace, "ba");

    assert_int_equal(crmpi_progress_unregister(progress_fn_a), CRMPI_OK);
    assert_int_equal(crmpi_progress_unregister(progress_fn_b), CRMPI_OK);
    assert_int_equal(crmpi_progress(), 0);
}

/* Shared by the two threads of test_lock_excludes; only touched with the library lock held. */
static long lock_counter;

static void *lock_worker(void *arg)
{
    for (int i = 0; i < 100000; i++) {
        crmpi_lock();
        /* A non-atomic read-modify-write: lost updates would show without mutual exclusion. */
        long seen = lock_counter;
        lock_counter = seen + 1;
        crmpi_unlock();
    }
    return arg;
}

static void test_lock_excludes(void **state)
{
    pthread_t threads[2];

    lock_counter = 0;
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, lock_worker, NULL), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(threads[i], NULL), 0);
    assert_int_equal(lock_counter, 200000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_register_and_progress),
        cmocka_unit_test(test_lock_excludes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
