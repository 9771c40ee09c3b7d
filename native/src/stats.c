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
    st->prio_clat.min = UINT64_MAX;
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

void stats_bs_slow(struct thread_dir_stats *st, uint64_t bytes)
{
    for (uint32_t i = 0; i < st->nbs; i++) {
        if (st->bs[i].bs == bytes) {
            st->bs[i].ios++;
            st->bs_last = i;
            return;
        }
    }
    if (st->nbs == IOG_BS_TABLE_MAX) {
        st->bs_other_ios++;
        return;
    }
    st->bs[st->nbs] = (struct bs_slot){.bs = bytes, .ios = 1};
    st->bs_last = st->nbs++;
}

/* Adds `ios` requests of size `bs` to a sorted table, or to its overflow. */
static void merge_bs(struct merged_dir *m, uint64_t bs, uint64_t ios)
{
    uint32_t i = 0;
    while (i < m->nbs && m->bs[i].bs < bs)
        i++;
    if (i < m->nbs && m->bs[i].bs == bs) {
        m->bs[i].ios += ios;
        return;
    }
    if (m->nbs == IOG_BS_TABLE_MAX) {
        m->bs_other_ios += ios;
        return;
    }
    memmove(&m->bs[i + 1], &m->bs[i], (m->nbs - i) * sizeof(m->bs[0]));
    m->bs[i] = (struct bs_slot){.bs = bs, .ios = ios};
    m->nbs++;
}

void stats_merge_init(struct merged_dir *m)
{
    memset(m, 0, sizeof(*m));
    for (int k = 0; k < IOG_LAT_COUNT; k++)
        m->lat[k].min = UINT64_MAX;
    m->prio_clat.min = UINT64_MAX;
}

static void merge_lat(struct lat_acc *b, const struct lat_acc *a)
{
    b->count += a->count;
    b->sum += a->sum;
    b->sumsq += a->sumsq;
    if (a->count > 0 && a->min < b->min)
        b->min = a->min;
    if (a->count > 0 && a->max > b->max)
        b->max = a->max;
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
    m->qd_sum += st->qd_sum;
    m->qd_samples += st->qd_samples;
    for (int b = 0; b < IOG_QD_BUCKETS; b++)
        m->qd_hist[b] += st->qd_hist[b];
    m->bs_other_ios += st->bs_other_ios;
    for (uint32_t i = 0; i < st->nbs; i++)
        merge_bs(m, st->bs[i].bs, st->bs[i].ios);
    for (int k = 0; k < IOG_LAT_COUNT; k++)
        merge_lat(&m->lat[k], &st->lat[k]);
    m->prio_ios += st->prio_ios;
    merge_lat(&m->prio_clat, &st->prio_clat);
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
