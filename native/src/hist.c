/*
 * hist.c - bucket bounds and percentiles of the log-linear latency histogram
 * (index computation lives inline in hist.h), and the public iog_hist_index /
 * iog_hist_bounds / iog_hist_percentiles entry points. The percentile rule is
 * here and nowhere else: the per-interval series (monitor.c) and the
 * whole-run figures of the bindings both call hist_percentiles.
 */
#include "hist.h"

#include <errno.h>
#include <math.h>

int hist_bounds(uint32_t idx, uint64_t *lo, uint64_t *hi)
{
    if (idx >= IOG_HIST_BUCKETS)
        return -EINVAL;
    if (idx < IOG_HIST_LINEAR) {
        *lo = idx;
        *hi = (uint64_t)idx + 1;
        return 0;
    }
    if (idx == HIST_OVERFLOW) {
        *lo = IOG_HIST_TOP_NS;
        *hi = UINT64_MAX;
        return 0;
    }
    uint32_t shift = (idx >> IOG_HIST_SUB_BITS) - 1; /* k - 7 */
    uint64_t sub = idx & (IOG_HIST_SUB_BUCKETS - 1);
    *lo = (IOG_HIST_SUB_BUCKETS + sub) << shift;
    *hi = *lo + (1ull << shift);
    return 0;
}

uint64_t hist_bucket_value(uint32_t idx)
{
    uint64_t lo = 0, hi = 0;
    if (hist_bounds(idx, &lo, &hi) < 0)
        return 0;
    if (idx == HIST_OVERFLOW || hi - lo == 1)
        return lo;
    return lo + (hi - lo) / 2;
}

/* ceil(p/100 * total), p read as a decimal to PCT_SCALE places, at least 1
 * and at most total. Integer arithmetic: 99.9 % of 1000 is rank 999, where a
 * double product would round up to 1000. */
#define PCT_SCALE 1000000000ull /* 9 decimal places of p */
static uint64_t percentile_rank(double p, uint64_t total)
{
    unsigned __int128 scaled = (unsigned __int128)llround(p * (double)PCT_SCALE);
    unsigned __int128 den = (unsigned __int128)100 * PCT_SCALE;
    unsigned __int128 rank = (scaled * total + den - 1) / den;
    if (rank < 1)
        rank = 1;
    return rank > total ? total : (uint64_t)rank;
}

static uint64_t representative(uint32_t idx, uint64_t min_ns, uint64_t max_ns)
{
    uint64_t v = idx == HIST_OVERFLOW && max_ns != UINT64_MAX ? max_ns : hist_bucket_value(idx);
    if (v > max_ns)
        v = max_ns;
    if (v < min_ns)
        v = min_ns;
    return v;
}

int hist_percentiles(const uint64_t *counts, uint32_t first, uint32_t n, const double *ps,
                     uint32_t np, uint64_t min_ns, uint64_t max_ns, uint64_t *out)
{
    if ((n && !counts) || (np && (!ps || !out)) || first > IOG_HIST_BUCKETS ||
        n > IOG_HIST_BUCKETS - first || min_ns > max_ns)
        return -EINVAL;
    for (uint32_t j = 0; j < np; j++)
        if (!(ps[j] >= 0.0 && ps[j] <= 100.0)) /* also refuses NaN */
            return -EINVAL;
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++)
        total += counts[i];
    if (total == 0)
        return 0;
    for (uint32_t j = 0; j < np; j++) {
        uint64_t rank = percentile_rank(ps[j], total), seen = 0;
        uint32_t i = 0;
        while (i + 1 < n && (seen += counts[i]) < rank)
            i++;
        out[j] = representative(first + i, min_ns, max_ns);
    }
    return 1;
}

uint64_t hist_percentile(const uint64_t *counts, double p)
{
    uint64_t v = 0;
    hist_percentiles(counts, 0, IOG_HIST_BUCKETS, &p, 1, 0, UINT64_MAX, &v);
    return v;
}

IOG_API int iog_hist_percentiles(const uint64_t *counts, uint32_t first, uint32_t n,
                                 const double *ps, uint32_t np, uint64_t min_ns, uint64_t max_ns,
                                 uint64_t *out)
{
    return hist_percentiles(counts, first, n, ps, np, min_ns, max_ns, out);
}

IOG_API uint32_t iog_hist_index(uint64_t value_ns)
{
    return hist_index(value_ns);
}

IOG_API int iog_hist_bounds(uint32_t index, uint64_t *lo, uint64_t *hi)
{
    if (!lo || !hi)
        return -EINVAL;
    return hist_bounds(index, lo, hi);
}
