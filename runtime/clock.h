/*
 * clock.h: the monotonic clock every layer times its phases and deadlines with.
 */
#ifndef CRMPI_CLOCK_H
#define CRMPI_CLOCK_H

#include <stdint.h>
#include <time.h>

/** Nanoseconds of CLOCK_MONOTONIC. */
static inline uint64_t crmpi_clock_ns(void)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/** Seconds of CLOCK_MONOTONIC. */
static inline double crmpi_clock_s(void)
{
    return (double)crmpi_clock_ns() * 1e-9;
}

#endif /* CRMPI_CLOCK_H */
