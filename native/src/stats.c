/*
 * stats.c - the cold parts of per-thread statistics: initialisation, error
 * accounting, merging the threads of a job, and the exact mean / sample
 * standard deviation of a latency accumulator.
 */
#include "stats.h"

#include <math.h>
#include <string.h>

void stats_init(struct thread_dir_stats *st)
{
    memset(st, 0, sizeof(*st));
    for (int k = 0; k < IOG_LAT_COUNT; k++)
        st->lat[k].min = UINT64_MAX;
}

void stats_record_error(struct thread_dir_stats *st, int err, uint64_t offset, uint64_t when_ns)
{
    if (st->errors == 0) {
        st->first_errno = err;
        st->first_error_offset = offset;
        st->first_error_ns = when_ns;
    }
    PUB_ADD(&st->errors, 1);
}

void stats_merge_init(struct merged_dir *m)
{
    memset(m, 0, sizeof(*m));
    for (int k = 0; k < IOG_LAT_COUNT; k++)
        m->lat[k].min = UINT64_MAX;
}

void stats_merge(struct merged_dir *m, const struct thread_dir_stats *st)
{
    m->ios += st->ios;
    m->bytes += st->bytes;
    if (st->errors > 0 && (m->errors == 0 || st->first_error_ns < m->first_error_ns)) {
        m->first_errno = st->first_errno;
        m->first_error_offset = st->first_error_offset;
        m->first_error_ns = st->first_error_ns;
    }
    m->errors += st->errors;
    for (int k = 0; k < IOG_LAT_COUNT; k++) {
        const struct lat_acc *a = &st->lat[k];
        struct lat_acc *b = &m->lat[k];
        b->count += a->count;
        b->sum += a->sum;
        b->sumsq += a->sumsq;
        if (a->count > 0 && a->min < b->min)
            b->min = a->min;
        if (a->count > 0 && a->max > b->max)
            b->max = a->max;
    }
}

void stats_summary(const struct lat_acc *a, struct iog_lat_summary *out)
{
    memset(out, 0, sizeof(*out));
    out->count = a->count;
    if (a->count == 0)
        return;
    out->min_ns = a->min;
    out->max_ns = a->max;
    out->mean_ns = (double)a->sum / (double)a->count;
    if (a->count < 2)
        return;
    /* n * sumsq - sum^2 = n (n - 1) * variance, exactly in 128 bits when it
     * fits; otherwise fall back to long double. */
    unsigned __int128 n = a->count, sum = a->sum, nsq, s2;
    long double var;
    if (!__builtin_mul_overflow(n, a->sumsq, &nsq) && !__builtin_mul_overflow(sum, sum, &s2)) {
        unsigned __int128 d = nsq >= s2 ? nsq - s2 : 0;
        var = (long double)d / ((long double)a->count * (long double)(a->count - 1));
    } else {
        long double mean = (long double)a->sum / (long double)a->count;
        long double m2 = (long double)a->sumsq - mean * (long double)a->sum;
        var = m2 > 0 ? m2 / (long double)(a->count - 1) : 0;
    }
    out->stdev_ns = (double)sqrtl(var);
}
