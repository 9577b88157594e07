/*
 * test_snapc_periodic.c: Daly's interval against the values Daly published, and the
 * periodic schedule (fixed and automatic) on times given by the test, without waiting.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>

#include <cmocka.h>

#include "snapc_periodic.h"

#define MINUTE 60.0
#define HOUR   3600.0

/* Daly (2006), figures 3 to 5: a 5-minute dump with M = 24 h, 6 h and 15 min gives
 * optimum intervals of 117 min, 57 min and 9.1 min. */
static void test_daly_published_values(void **state)
{
    (void)state;
    assert_true(fabs(crmpi_snapc_daly_interval(5 * MINUTE, 24 * HOUR) / MINUTE - 117.0) < 0.5);
    assert_true(fabs(crmpi_snapc_daly_interval(5 * MINUTE, 6 * HOUR) / MINUTE - 57.0) < 0.5);
    assert_true(fabs(crmpi_snapc_daly_interval(5 * MINUTE, 15 * MINUTE) / MINUTE - 9.1) < 0.05);
    /* A dump of at least 2M: checkpoint once every M. */
    assert_true(crmpi_snapc_daly_interval(40 * MINUTE, 15 * MINUTE) == 15 * MINUTE);
    /* Cheaper checkpoints, more often; more reliable machines, less often. */
    assert_true(crmpi_snapc_daly_interval(1, HOUR) < crmpi_snapc_daly_interval(10, HOUR));
    assert_true(crmpi_snapc_daly_interval(10, HOUR) < crmpi_snapc_daly_interval(10, 10 * HOUR));
}

static void test_fixed_interval(void **state)
{
    crmpi_snapc_periodic_t p;

    (void)state;
    crmpi_snapc_periodic_init(&p, 30.0, 0.0, 1.0, 100.0);
    assert_true(p.enabled);
    assert_false(crmpi_snapc_periodic_due(&p, 129.9));
    assert_true(crmpi_snapc_periodic_due(&p, 130.0));
    /* The next is due an interval after the end of this one, committed or not. */
    crmpi_snapc_periodic_done(&p, true, 5.0, 140.0);
    assert_false(crmpi_snapc_periodic_due(&p, 169.0));
    assert_true(crmpi_snapc_periodic_due(&p, 170.0));
    crmpi_snapc_periodic_done(&p, false, 0.0, 175.0);
    assert_true(p.interval_s == 30.0);
    assert_true(crmpi_snapc_periodic_due(&p, 205.0));
}

static void test_disabled(void **state)
{
    crmpi_snapc_periodic_t p;

    (void)state;
    crmpi_snapc_periodic_init(&p, 0.0, 0.0, 1.0, 0.0);
    assert_false(p.enabled);
    assert_false(crmpi_snapc_periodic_due(&p, 1e9));
    crmpi_snapc_periodic_done(&p, true, 1.0, 10.0);
    assert_false(crmpi_snapc_periodic_due(&p, 1e9));
}

static void test_automatic_interval(void **state)
{
    crmpi_snapc_periodic_t p;
    double first;

    (void)state;
    crmpi_snapc_periodic_init(&p, 0.0, 6 * HOUR, 5 * MINUTE, 0.0);
    assert_true(p.enabled && p.automatic);
    first = p.interval_s;
    assert_true(fabs(first / MINUTE - 57.0) < 0.5);
    /* Measured costs replace the first estimate, averaged over the last three. */
    crmpi_snapc_periodic_done(&p, true, 10.0, 4000.0);
    assert_true(fabs(p.interval_s - crmpi_snapc_daly_interval(10.0, 6 * HOUR)) < 1e-9);
    crmpi_snapc_periodic_done(&p, true, 20.0, 8000.0);
    assert_true(fabs(p.interval_s - crmpi_snapc_daly_interval(15.0, 6 * HOUR)) < 1e-9);
    crmpi_snapc_periodic_done(&p, true, 30.0, 9000.0);
    crmpi_snapc_periodic_done(&p, true, 40.0, 10000.0);
    assert_true(fabs(p.interval_s - crmpi_snapc_daly_interval(30.0, 6 * HOUR)) < 1e-9);
    assert_true(crmpi_snapc_periodic_due(&p, 10000.0 + p.interval_s));
    assert_false(crmpi_snapc_periodic_due(&p, 10000.0 + p.interval_s - 1.0));
    /* An aborted checkpoint measures nothing. */
    double before = p.interval_s;
    crmpi_snapc_periodic_done(&p, false, 1000.0, 20000.0);
    assert_true(p.interval_s == before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_daly_published_values),
        cmocka_unit_test(test_fixed_interval),
        cmocka_unit_test(test_disabled),
        cmocka_unit_test(test_automatic_interval),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
