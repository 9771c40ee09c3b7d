/*
 * hist.h - the log-linear latency histogram: bucket index of a value, bucket
 * bounds, and percentiles from count arrays. The geometry is the one stated in
 * iogate.h; the index function is inline because workers call it per I/O.
 */
#ifndef IOGATE_HIST_H
#define IOGATE_HIST_H

#include <stddef.h>
#include <stdint.h>

#include "iogate.h"

#define HIST_OVERFLOW (IOG_HIST_BUCKETS - 1)

static inline uint32_t hist_index(uint64_t v)
{
    if (v < IOG_HIST_LINEAR)
        return (uint32_t)v;
    if (v >= IOG_HIST_TOP_NS)
        return HIST_OVERFLOW;
    /* v in [2^k, 2^(k+1)) with k >= 8. With shift = k - 7, v >> shift is in
     * [128, 256), so octave k occupies [shift * 128 + 128, shift * 128 + 256):
     * octave 8 starts right after the 256 exact buckets. */
    uint32_t k = 63u - (uint32_t)__builtin_clzll(v);
    uint32_t shift = k - IOG_HIST_SUB_BITS;
    return (shift << IOG_HIST_SUB_BITS) + (uint32_t)(v >> shift);
}

/* Bounds [lo, hi) of bucket idx; hi is UINT64_MAX for the overflow bucket.
 * Returns -EINVAL for an index out of range. */
int hist_bounds(uint32_t idx, uint64_t *lo, uint64_t *hi);

/* A representative value of a bucket: the value itself for exact buckets,
 * the midpoint otherwise, the lower bound for the overflow bucket. */
uint64_t hist_bucket_value(uint32_t idx);

/* Value at percentile p (0 < p <= 100) of a count array of IOG_HIST_BUCKETS
 * entries: the representative value of the first bucket whose cumulative
 * count reaches ceil(p/100 * total). 0 when the array is empty. */
uint64_t hist_percentile(const uint64_t *counts, double p);

#endif
