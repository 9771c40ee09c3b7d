/*
 * clock.h - the time source of the engine: CLOCK_MONOTONIC in nanoseconds.
 * Workers call it at most twice per I/O on the synchronous engines.
 */
#ifndef IOGATE_CLOCK_H
#define IOGATE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline struct timespec clock_to_timespec(uint64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ull),
                          .tv_nsec = (long)(ns % 1000000000ull)};
    return ts;
}

#endif
