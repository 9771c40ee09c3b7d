/*
 * stats.h - per-thread counted statistics of one direction (counts, latency
 * accumulators, histograms) and how they are updated and merged. A worker is
 * the only writer of its own stats; it publishes every field that other
 * threads read (counters, sums, histogram buckets) with relaxed atomic stores,
 * and readers use relaxed atomic loads. min/max/sumsq are read only after the
 * worker finished.
 */
#ifndef IOGATE_STATS_H
#define IOGATE_STATS_H

#include <stdint.h>

#include "hist.h"
#include "iogate.h"

#define PUB_LOAD(p)     __atomic_load_n((p), __ATOMIC_RELAXED)
#define PUB_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
/* Single-writer increment: a plain read of our own value, a relaxed store. */
#define PUB_ADD(p, v) PUB_STORE((p), *(p) + (v))

struct lat_acc {
    uint64_t count;
    uint64_t sum; /* ns; wraps only after 584 years of summed latency */
    uint64_t min;
    uint64_t max;
    unsigned __int128 sumsq; /* exact, for the sample standard deviation */
};

struct thread_dir_stats {
    uint64_t ios;
    uint64_t bytes;
    uint64_t errors;
    int32_t first_errno;
    uint64_t first_error_offset;
    uint64_t first_error_ns; /* when, to find the earliest across threads */
    struct lat_acc lat[IOG_LAT_COUNT];
    uint64_t hist[IOG_LAT_COUNT][IOG_HIST_BUCKETS];
};

void stats_init(struct thread_dir_stats *st);

static inline void lat_record(struct lat_acc *a, uint64_t *hist, uint64_t v)
{
    uint32_t i = hist_index(v);
    PUB_ADD(&hist[i], 1);
    if (v < a->min)
        a->min = v;
    if (v > a->max)
        a->max = v;
    a->sumsq += (unsigned __int128)v * v;
    PUB_ADD(&a->sum, v);
    PUB_ADD(&a->count, 1);
}

/* Counts one successful I/O of `bytes` with its three latencies. */
static inline void stats_record_io(struct thread_dir_stats *st, uint64_t bytes, uint64_t slat,
                                   uint64_t clat, uint64_t lat)
{
    lat_record(&st->lat[IOG_LAT_SLAT], st->hist[IOG_LAT_SLAT], slat);
    lat_record(&st->lat[IOG_LAT_CLAT], st->hist[IOG_LAT_CLAT], clat);
    lat_record(&st->lat[IOG_LAT_LAT], st->hist[IOG_LAT_LAT], lat);
    PUB_ADD(&st->bytes, bytes);
    PUB_ADD(&st->ios, 1);
}

/* Counts one failed or short I/O; err is a positive errno. */
void stats_record_error(struct thread_dir_stats *st, int err, uint64_t offset, uint64_t when_ns);

/* Adds the final stats of one thread into a merged accumulator. */
struct merged_dir {
    uint64_t ios, bytes, errors;
    int32_t first_errno;
    uint64_t first_error_offset, first_error_ns;
    struct lat_acc lat[IOG_LAT_COUNT];
};
void stats_merge_init(struct merged_dir *m);
void stats_merge(struct merged_dir *m, const struct thread_dir_stats *st);

/* Converts an accumulator into the public summary (exact mean and sample
 * standard deviation). */
void stats_summary(const struct lat_acc *a, struct iog_lat_summary *out);

#endif
