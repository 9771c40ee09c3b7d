/*
 * hist.c - bucket bounds and percentiles of the log-linear latency histogram
 * (index computation lives inline in hist.h), and the public iog_hist_index /
 * iog_hist_bounds entry points that expose the geometry to bindings.
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

uint64_t hist_percentile(const uint64_t *counts, double p)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < IOG_HIST_BUCKETS; i++)
        total += counts[i];
    if (total == 0)
        return 0;
    if (p > 100.0)
        p = 100.0;
    double want = ceil(p / 100.0 * (double)total);
    uint64_t rank = want < 1.0 ? 1 : (uint64_t)want;
    if (rank > total)
        rank = total;
    uint64_t seen = 0;
    for (uint32_t i = 0; i < IOG_HIST_BUCKETS; i++) {
        seen += counts[i];
        if (seen >= rank)
            return hist_bucket_value(i);
    }
    return hist_bucket_value(HIST_OVERFLOW);
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
