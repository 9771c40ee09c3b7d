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

struct bs_slot {
    uint64_t bs;
    uint64_t ios;
};

struct thread_dir_stats {
    uint64_t ios;
    uint64_t bytes;
    uint64_t errors;
    int32_t first_errno;
    uint64_t first_error_offset;
    uint64_t first_error_ns; /* when, to find the earliest across threads */
    struct lat_acc lat[IOG_LAT_COUNT];
    /* realized workload, read only after the worker finished */
    uint64_t qd_sum, qd_samples;
    uint64_t qd_hist[IOG_QD_BUCKETS];
    uint32_t nbs;     /* used entries of bs */
    uint32_t bs_last; /* entry of the previous request: sizes repeat */
    uint64_t bs_other_ios;
    struct bs_slot bs[IOG_BS_TABLE_MAX];
    uint64_t hist[IOG_LAT_COUNT][IOG_HIST_BUCKETS];
    /* requests that carried a command priority (iog_job_spec.cmdprio): their
     * count and clat; read only after the worker finished */
    uint64_t prio_ios;
    struct lat_acc prio_clat;
    uint64_t prio_hist[IOG_HIST_BUCKETS];
};

void stats_init(struct thread_dir_stats *st);

/* lat_record with the bucket and the square already known, for a value
 * that several latency kinds share. */
static inline void lat_record_known(struct lat_acc *a, uint64_t *bucket, uint64_t v,
                                    unsigned __int128 sq)
{
    PUB_ADD(bucket, 1);
    if (v < a->min)
        a->min = v;
    if (v > a->max)
        a->max = v;
    a->sumsq += sq;
    PUB_ADD(&a->sum, v);
    PUB_ADD(&a->count, 1);
}

static inline void lat_record(struct lat_acc *a, uint64_t *hist, uint64_t v)
{
    lat_record_known(a, &hist[hist_index(v)], v, (unsigned __int128)v * v);
}

void stats_bs_slow(struct thread_dir_stats *st, uint64_t bytes);

/* Counts one request of `bytes` in the table of distinct sizes. */
static inline void stats_record_bs(struct thread_dir_stats *st, uint64_t bytes)
{
    if (st->bs_last < st->nbs && st->bs[st->bs_last].bs == bytes)
        st->bs[st->bs_last].ios++;
    else
        stats_bs_slow(st, bytes);
}

/* A latency kind that is 0 by construction (slat of a synchronous engine,
 * lag without a rate limit): bucket 0, the count, the minimum. */
static inline void lat_record_zero(struct thread_dir_stats *st, uint32_t kind)
{
    PUB_ADD(&st->hist[kind][0], 1);
    st->lat[kind].min = 0;
    PUB_ADD(&st->lat[kind].count, 1);
}

/* The request itself: its size, bytes and count. */
static inline void record_done(struct thread_dir_stats *st, uint64_t bytes)
{
    stats_record_bs(st, bytes);
    PUB_ADD(&st->bytes, bytes);
    PUB_ADD(&st->ios, 1);
}

/* Counts one successful I/O of `bytes` with its latencies (lag = resp - lat). */
static inline void stats_record_io(struct thread_dir_stats *st, uint64_t bytes, uint64_t slat,
                                   uint64_t clat, uint64_t lat, uint64_t resp)
{
    lat_record(&st->lat[IOG_LAT_SLAT], st->hist[IOG_LAT_SLAT], slat);
    lat_record(&st->lat[IOG_LAT_CLAT], st->hist[IOG_LAT_CLAT], clat);
    lat_record(&st->lat[IOG_LAT_LAT], st->hist[IOG_LAT_LAT], lat);
    lat_record(&st->lat[IOG_LAT_RESP], st->hist[IOG_LAT_RESP], resp);
    lat_record(&st->lat[IOG_LAT_LAG], st->hist[IOG_LAT_LAG], resp - lat);
    record_done(st, bytes);
}

/* Same as stats_record_io with resp = lat (lag 0), the case without a rate
 * limit: the histogram index and square of lat serve resp too. */
static inline void stats_record_io_unpaced(struct thread_dir_stats *st, uint64_t bytes,
                                           uint64_t slat, uint64_t clat, uint64_t lat)
{
    lat_record(&st->lat[IOG_LAT_SLAT], st->hist[IOG_LAT_SLAT], slat);
    lat_record(&st->lat[IOG_LAT_CLAT], st->hist[IOG_LAT_CLAT], clat);
    uint32_t i = hist_index(lat);
    unsigned __int128 sq = (unsigned __int128)lat * lat;
    lat_record_known(&st->lat[IOG_LAT_LAT], &st->hist[IOG_LAT_LAT][i], lat, sq);
    lat_record_known(&st->lat[IOG_LAT_RESP], &st->hist[IOG_LAT_RESP][i], lat, sq);
    lat_record_zero(st, IOG_LAT_LAG);
    record_done(st, bytes);
}

/* Same as stats_record_io_unpaced with slat 0 and clat = lat, the case of
 * the synchronous engines: one histogram index and one square serve clat,
 * lat and resp. */
static inline void stats_record_io_sync(struct thread_dir_stats *st, uint64_t bytes, uint64_t lat)
{
    lat_record_zero(st, IOG_LAT_SLAT);
    uint32_t i = hist_index(lat);
    unsigned __int128 sq = (unsigned __int128)lat * lat;
    lat_record_known(&st->lat[IOG_LAT_CLAT], &st->hist[IOG_LAT_CLAT][i], lat, sq);
    lat_record_known(&st->lat[IOG_LAT_LAT], &st->hist[IOG_LAT_LAT][i], lat, sq);
    lat_record_known(&st->lat[IOG_LAT_RESP], &st->hist[IOG_LAT_RESP][i], lat, sq);
    lat_record_zero(st, IOG_LAT_LAG);
    record_done(st, bytes);
}

/* A request complete in full that carried a command priority: counted
 * again apart, with its clat. */
static inline void stats_record_prio(struct thread_dir_stats *st, uint64_t clat)
{
    st->prio_ios++;
    lat_record(&st->prio_clat, st->prio_hist, clat);
}

/* Counts one submission at queue depth `depth` (including the request). */
static inline void stats_record_qd(struct thread_dir_stats *st, uint32_t depth)
{
    st->qd_sum += depth;
    st->qd_samples++;
    uint32_t b = 31u - (uint32_t)__builtin_clz(depth);
    st->qd_hist[b < IOG_QD_BUCKETS ? b : IOG_QD_BUCKETS - 1]++;
}

/* Counts one failed or short I/O; err is a positive errno. */
void stats_record_error(struct thread_dir_stats *st, int err, uint64_t offset, uint64_t when_ns);

/* Adds the final stats of one thread into a merged accumulator. */
struct merged_dir {
    uint64_t ios, bytes, errors;
    int32_t first_errno;
    uint64_t first_error_offset, first_error_ns;
    struct lat_acc lat[IOG_LAT_COUNT];
    uint64_t qd_sum, qd_samples;
    uint64_t qd_hist[IOG_QD_BUCKETS];
    uint32_t nbs; /* distinct sizes in bs, sorted by size */
    uint64_t bs_other_ios;
    struct bs_slot bs[IOG_BS_TABLE_MAX];
    uint64_t prio_ios;
    struct lat_acc prio_clat;
};
void stats_merge_init(struct merged_dir *m);
void stats_merge(struct merged_dir *m, const struct thread_dir_stats *st);

/* Converts an accumulator into the public summary (exact mean and sample
 * standard deviation). */
void stats_summary(const struct lat_acc *a, struct iog_lat_summary *out);

#endif
