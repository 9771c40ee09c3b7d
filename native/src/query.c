/*
 * query.c - what a session holds, read through the public API: the
 * statistics, block size counts, job totals, histograms and interval series
 * of each job with its threads merged (and the timeouts the monitor
 * counted), its verification results and the session's fault.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "abi.h"
#include "internal.h"
#include "verify.h"

IOG_API uint32_t iog_session_jobs(const iog_session *s)
{
    return s ? s->njobs : 0;
}

/* Common checks of the accessors: valid job/dir and a finished session. */
static int check_done(const iog_session *s, uint32_t job, uint32_t dir)
{
    if (!s || job >= s->njobs || dir >= IOG_DIR_COUNT)
        return -EINVAL;
    if (!__atomic_load_n(&s->started, __ATOMIC_ACQUIRE))
        return -EINVAL;
    if (!__atomic_load_n(&s->monitor_done, __ATOMIC_ACQUIRE))
        return -EBUSY;
    return 0;
}

/* The ETIMEDOUT errors the monitor counted join the workers' errors. */
static void merge_timeouts(struct merged_dir *m, const struct timeout_errors *te)
{
    uint64_t n = PUB_LOAD(&te->errors);
    if (n == 0)
        return;
    uint64_t when = PUB_LOAD(&te->first_ns);
    if (m->errors == 0 || when < m->first_error_ns) {
        m->first_errno = ETIMEDOUT;
        m->first_error_offset = PUB_LOAD(&te->first_offset);
        m->first_error_ns = when;
    }
    m->errors += n;
}

/* The statistics of one job in one direction; the caller copies them out. */
static void dir_stats(const iog_session *s, uint32_t job, uint32_t dir, struct iog_dir_stats *out)
{
    const struct iog_job *jb = &s->jobs[job];
    struct merged_dir m;
    stats_merge_init(&m);
    uint64_t runtime = 0;
    for (uint32_t t = 0; t < jb->nworkers; t++) {
        stats_merge(&m, &jb->workers[t]->st[dir]);
        if (jb->workers[t]->runtime_ns > runtime)
            runtime = jb->workers[t]->runtime_ns;
    }
    merge_timeouts(&m, &jb->timeouts[dir]);
    memset(out, 0, sizeof(*out));
    out->dir = dir;
    out->ios = m.ios;
    out->bytes = m.bytes;
    out->runtime_ns = runtime;
    if (runtime > 0) {
        out->iops = (double)m.ios * 1e9 / (double)runtime;
        out->bw_bytes = (double)m.bytes * 1e9 / (double)runtime;
    }
    for (int k = 0; k < IOG_LAT_COUNT; k++)
        stats_summary(&m.lat[k], &out->lat[k]);
    out->errors = m.errors;
    out->first_errno = m.first_errno;
    out->first_error_offset = m.first_error_offset;
    uint64_t t_start = PUB_LOAD(&s->t_start_call);
    if (m.errors && m.first_error_ns > t_start)
        out->first_error_ns = m.first_error_ns - t_start;
    out->qd_sum = m.qd_sum;
    out->qd_samples = m.qd_samples;
    memcpy(out->qd_hist, m.qd_hist, sizeof(out->qd_hist));
    out->bs_other_ios = m.bs_other_ios;
    out->prio_ios = m.prio_ios;
    stats_summary(&m.prio_clat, &out->prio_clat);
}

IOG_API int iog_session_dir_stats(const iog_session *s, uint32_t job, uint32_t dir,
                                  struct iog_dir_stats *out)
{
    uint32_t size = abi_out_size(out, IOG_DIR_STATS_SIZE_VER0);
    if (!size)
        return -EINVAL;
    int rc = check_done(s, job, dir);
    if (rc < 0)
        return rc;
    struct iog_dir_stats st;
    dir_stats(s, job, dir, &st);
    abi_copy_out(out, size, &st, sizeof(st));
    return 0;
}

static void merge_job_dir(const struct iog_job *jb, uint32_t dir, struct merged_dir *m)
{
    stats_merge_init(m);
    for (uint32_t t = 0; t < jb->nworkers; t++)
        stats_merge(m, &jb->workers[t]->st[dir]);
}

IOG_API int iog_session_bs_counts(const iog_session *s, uint32_t job, uint32_t dir,
                                  struct iog_bs_count *out, size_t cap)
{
    int rc = check_done(s, job, dir);
    if (rc < 0)
        return rc;
    if (dir == IOG_DIR_SYNC || (!out && cap > 0))
        return -EINVAL;
    struct merged_dir *m = malloc(sizeof(*m));
    if (!m)
        return -ENOMEM;
    merge_job_dir(&s->jobs[job], dir, m);
    for (uint32_t i = 0; i < m->nbs && i < cap; i++)
        out[i] = (struct iog_bs_count){.bs = m->bs[i].bs, .ios = m->bs[i].ios};
    rc = (int)m->nbs;
    free(m);
    return rc;
}

/* Chunks touched by any thread of the job: their bitmaps OR-ed word by word. */
static uint64_t coverage_touched(const struct iog_job *jb)
{
    uint64_t words = (jb->coverage_total + 63) / 64, touched = 0;
    for (uint64_t i = 0; i < words; i++) {
        uint64_t v = 0;
        for (uint32_t t = 0; t < jb->nworkers; t++)
            if (jb->workers[t]->coverage)
                v |= jb->workers[t]->coverage[i];
        touched += (uint64_t)__builtin_popcountll(v);
    }
    return touched;
}

IOG_API int iog_session_job_stats(const iog_session *s, uint32_t job, struct iog_job_stats *user)
{
    uint32_t size = abi_out_size(user, IOG_JOB_STATS_SIZE_VER0);
    if (!size)
        return -EINVAL;
    int rc = check_done(s, job, 0);
    if (rc < 0)
        return rc;
    const struct iog_job *jb = &s->jobs[job];
    struct iog_job_stats js, *out = &js;
    memset(out, 0, sizeof(*out));
    out->nfiles = jb->nfiles;
    out->coverage_chunk = jb->coverage_chunk;
    out->coverage_total = jb->coverage_total;
    out->coverage_touched = coverage_touched(jb);
    for (uint32_t t = 0; t < jb->nworkers; t++) {
        out->submits += jb->workers[t]->nsubmits;
        out->reaps += jb->workers[t]->nreaps;
    }
    out->ioprio = jb->nworkers ? PUB_LOAD(&jb->workers[0]->ioprio_seen) : 0;

    const uint64_t **hashes = calloc(jb->nworkers, sizeof(*hashes));
    size_t *counts = calloc(jb->nworkers, sizeof(*counts));
    rc = -ENOMEM;
    if (!hashes || !counts)
        goto out;
    for (uint32_t t = 0; t < jb->nworkers; t++) {
        const struct data_writer *dw = jb->workers[t]->data;
        if (!dw)
            continue;
        struct data_totals tot;
        data_writer_totals(dw, &tot);
        out->data_sampled_bytes += tot.sampled_bytes;
        out->data_compressed_bytes += tot.compressed_bytes;
        out->data_blocks += tot.blocks;
        out->data_samples_skipped += tot.samples_skipped;
        counts[t] = data_writer_hashes(dw, &hashes[t]);
    }
    rc = data_count_duplicates(hashes, counts, jb->nworkers, &out->data_duplicate_blocks);
out:
    free(hashes);
    free(counts);
    if (rc == 0)
        abi_copy_out(user, size, out, sizeof(*out));
    return rc;
}

IOG_API int iog_session_histogram(const iog_session *s, uint32_t job, uint32_t dir, uint32_t lat,
                                  uint64_t *counts, size_t ncounts)
{
    if (!counts || ncounts < IOG_HIST_BUCKETS ||
        (lat >= IOG_LAT_COUNT && lat != IOG_HIST_PRIO_CLAT))
        return -EINVAL;
    int rc = check_done(s, job, dir);
    if (rc < 0)
        return rc;
    const struct iog_job *jb = &s->jobs[job];
    memset(counts, 0, ncounts * sizeof(*counts));
    for (uint32_t t = 0; t < jb->nworkers; t++) {
        const struct thread_dir_stats *st = &jb->workers[t]->st[dir];
        const uint64_t *h = lat == IOG_HIST_PRIO_CLAT ? st->prio_hist : st->hist[lat];
        for (uint32_t b = 0; b < IOG_HIST_BUCKETS; b++)
            counts[b] += h[b];
    }
    return 0;
}

IOG_API int iog_session_series(const iog_session *s, uint32_t job, uint32_t dir,
                               struct iog_interval *out, size_t cap)
{
    if (!s || job >= s->njobs || dir >= IOG_DIR_COUNT || (!out && cap > 0))
        return -EINVAL;
    if (!__atomic_load_n(&s->started, __ATOMIC_ACQUIRE))
        return -EINVAL;
    /* While the session runs, the monitor appends intervals holding the
     * session lock; taking it gives a consistent copy of those so far. */
    pthread_mutex_t *lock = (pthread_mutex_t *)&s->lock;
    pthread_mutex_lock(lock);
    const struct iog_series *se = &s->jobs[job].series[dir];
    size_t n = se->n < cap ? se->n : cap;
    if (n > 0)
        memcpy(out, se->v, n * sizeof(*out));
    int total = se->n > INT32_MAX ? INT32_MAX : (int)se->n;
    pthread_mutex_unlock(lock);
    return total;
}

IOG_API int iog_session_fault(iog_session *s, struct iog_fault *out)
{
    uint32_t size = abi_out_size(out, IOG_FAULT_SIZE_VER0);
    if (!s || !size)
        return -EINVAL;
    /* written once by the background thread, then published: no lock, so
     * that a stuck worker cannot keep the caller from reading it */
    if (!__atomic_load_n(&s->fault_set, __ATOMIC_ACQUIRE))
        return 0;
    abi_copy_out(out, size, &s->fault, sizeof(s->fault));
    return 1;
}

IOG_API int iog_session_verify(const iog_session *s, uint32_t job, struct iog_verify_stats *user,
                               struct iog_verify_failure *failures, size_t cap)
{
    uint32_t size = abi_out_size(user, IOG_VERIFY_STATS_SIZE_VER0);
    if (!size || (!failures && cap > 0))
        return -EINVAL;
    int rc = check_done(s, job, 0);
    if (rc < 0)
        return rc;
    const struct iog_job *jb = &s->jobs[job];
    struct iog_verify_failure recs[IOG_VERIFY_RECORDS];
    uint32_t n = 0;
    struct iog_verify_stats vs, *out = &vs;
    memset(out, 0, sizeof(*out));
    out->generation = s->generation;
    for (uint32_t t = 0; t < jb->nworkers; t++)
        if (jb->workers[t]->verify)
            verify_merge(jb->workers[t]->verify, out, recs, &n);
    out->nrecords = n;
    for (uint32_t i = 0; i < n && i < cap; i++)
        failures[i] = recs[i];
    abi_copy_out(user, size, out, sizeof(*out));
    return (int)n;
}
