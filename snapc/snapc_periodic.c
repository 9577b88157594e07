/*
 * snapc_periodic.c: the periodic checkpoint schedule and Daly's interval (snapc_periodic.h).
 */
#include "config.h"

#include <math.h>

#include "snapc_periodic.h"

double crmpi_snapc_daly_interval(double cost_s, double mtbf_s)
{
    double ratio = cost_s / (2.0 * mtbf_s);

    if (cost_s >= 2.0 * mtbf_s)
        return mtbf_s;
    return sqrt(2.0 * cost_s * mtbf_s) * (1.0 + sqrt(ratio) / 3.0 + ratio / 9.0) - cost_s;
}

/* The mean of the measured costs. */
static double periodic_mean_cost(const crmpi_snapc_periodic_t *periodic)
{
    double sum = 0.0;

    for (int i = 0; i < periodic->num_costs; i++)
        sum += periodic->costs_s[i];
    return sum / periodic->num_costs;
}

void crmpi_snapc_periodic_init(crmpi_snapc_periodic_t *periodic, double interval_s, double mtbf_s,
                               double initial_cost_s, double now_s)
{
    *periodic = (crmpi_snapc_periodic_t){0};
    if (interval_s > 0.0) {
        periodic->enabled = true;
        periodic->interval_s = interval_s;
    } else if (mtbf_s > 0.0) {
        periodic->enabled = true;
        periodic->automatic = true;
        periodic->mtbf_s = mtbf_s;
        periodic->interval_s = crmpi_snapc_daly_interval(initial_cost_s, mtbf_s);
    }
    periodic->due_s = now_s + periodic->interval_s;
}

void crmpi_snapc_periodic_done(crmpi_snapc_periodic_t *periodic, bool committed, double blocked_s,
                               double now_s)
{
    if (!periodic->enabled)
        return;
    if (periodic->automatic && committed && blocked_s > 0.0) {
        periodic->costs_s[periodic->next_cost] = blocked_s;
        periodic->next_cost = (periodic->next_cost + 1) % CRMPI_SNAPC_PERIODIC_COSTS;
        if (periodic->num_costs < CRMPI_SNAPC_PERIODIC_COSTS)
            periodic->num_costs++;
        periodic->interval_s =
            crmpi_snapc_daly_interval(periodic_mean_cost(periodic), periodic->mtbf_s);
    }
    periodic->due_s = now_s + periodic->interval_s;
}

bool crmpi_snapc_periodic_due(const crmpi_snapc_periodic_t *periodic, double now_s)
{
    return periodic->enabled && now_s >= periodic->due_s;
}
