/*
 * snapc_periodic.h: when mpirun takes the next periodic checkpoint (mpirun --ckpt-interval).
 *
 *   fixed:  --ckpt-interval DURATION: the next checkpoint is due DURATION after the
 *           previous one ended (committed or aborted), the first DURATION after the start
 *   auto:   --ckpt-interval auto --mtbf M: the interval is Daly's higher-order optimum for
 *           the measured cost of a checkpoint (the time the application is blocked: from
 *           the start of the drain to the end of the continue, the mean of the last few
 *           checkpoints) and the given mean time between failures; re-estimated after
 *           every committed checkpoint. Before the first one is measured the cost is
 *           snapc_periodic_initial_cost.
 *
 * Daly (A higher order estimate of the optimum checkpoint interval for restart dumps,
 * Future Generation Computer Systems 22(3), 2006): for a checkpoint cost d below 2M,
 *   T = sqrt(2 d M) * (1 + sqrt(d / 2M) / 3 + (d / 2M) / 9) - d,
 * and T = M otherwise. The restart time does not appear at this order.
 *
 * Pure arithmetic on times the caller gives (CLOCK_MONOTONIC seconds): no clock, no I/O,
 * so that it is tested without waiting.
 */
#ifndef CRMPI_SNAPC_PERIODIC_H
#define CRMPI_SNAPC_PERIODIC_H

#include <stdbool.h>

/* Checkpoints whose cost the auto interval averages. */
#define CRMPI_SNAPC_PERIODIC_COSTS 3

typedef struct crmpi_snapc_periodic {
    bool enabled;                               /* --ckpt-interval was given */
    bool automatic;                             /* auto: Daly's interval from the costs */
    double interval_s;                          /* fixed: the interval; auto: the current one */
    double mtbf_s;                              /* auto: the mean time between failures */
    double costs_s[CRMPI_SNAPC_PERIODIC_COSTS]; /* auto: the last blocked times, a ring */
    int num_costs;                              /* measured so far (at most the ring's size) */
    int next_cost;                              /* where the next one goes in the ring */
    double due_s;                               /* when the next checkpoint is due */
} crmpi_snapc_periodic_t;

/**
 * Daly's higher-order optimum interval between checkpoints (the computing time between
 * the end of one and the start of the next) for a checkpoint that costs `cost_s` and a
 * mean time between failures `mtbf_s`. Both must be positive.
 */
double crmpi_snapc_daly_interval(double cost_s, double mtbf_s);

/**
 * Set up the schedule at time `now_s`. interval_s > 0: a fixed interval; interval_s == 0
 * with mtbf_s > 0: automatic, starting from the cost `initial_cost_s`; both 0: disabled.
 */
void crmpi_snapc_periodic_init(crmpi_snapc_periodic_t *periodic, double interval_s, double mtbf_s,
                               double initial_cost_s, double now_s);

/** A checkpoint ended at `now_s`: committed, having blocked the application `blocked_s`,
 *  or aborted (committed false, blocked_s ignored). Schedules the next one. */
void crmpi_snapc_periodic_done(crmpi_snapc_periodic_t *periodic, bool committed, double blocked_s,
                               double now_s);

/** Is a checkpoint due at `now_s`? */
bool crmpi_snapc_periodic_due(const crmpi_snapc_periodic_t *periodic, double now_s);

#endif /* CRMPI_SNAPC_PERIODIC_H */
