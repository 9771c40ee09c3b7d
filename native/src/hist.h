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

/* The percentile rule, for the per-interval series and the bindings alike
 * (see iog_hist_percentiles in iogate.h): counts[i] is bucket first + i. */
int hist_percentiles(const uint64_t *counts, uint32_t first, uint32_t n, const double *ps,
                     uint32_t np, uint64_t min_ns, uint64_t max_ns, uint64_t *out);

/* One percentile of a whole count array (IOG_HIST_BUCKETS entries) with no
 * known extremes; 0 when the array is empty. */
uint64_t hist_percentile(const uint64_t *counts, double p);

#endif
