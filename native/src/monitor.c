/*
 * monitor.c - the background thread of a session. It first lays out the
 * files (layout.c) and drops their cache when asked, then starts the run clock and the worker
 * threads, then sleeps until the next interval boundary of any job (or until a worker finishes),
 * builds interval series by diffing the workers' published cumulative counters and histograms
 * against what it saw last time, emits a final, possibly short, interval when a job's threads are
 * all done or reading back what they wrote (verify; state VERIFY once no run is left), has the
 * analysis thread finish measuring the written data, and marks the session done. Series storage is
 * owned and grown here only. Each job's own clock (ramp, runtime, rate schedules, its series)
 * starts at its start gate (run_gate), when the threads of the jobs with its start delay are all
 * ready to issue, as fio starts a job's runtime when its threads start: a thread the scheduler runs
 * late never finds its runtime spent before it began. For jobs with io_timeout_ns it also wakes
 * every watch tick to look for overdue requests (watch_scan), without any lock a worker could hold,
 * so a worker stuck in the kernel does not stop it. It also reads the watched devices' statistics
 * (diskstat.c) when counting starts, at every interval boundary and when the last job's run ends.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "internal.h"

#define HIST_KINDS 3 /* clat, lat, resp */
static const uint32_t hist_kind_lat[HIST_KINDS] = {IOG_LAT_CLAT, IOG_LAT_LAT, IOG_LAT_RESP};

static uint64_t *prev_hist_of(struct iog_job *job, uint32_t dir, int kind)
{
    return job->prev_hist + ((size_t)dir * HIST_KINDS + (size_t)kind) * IOG_HIST_BUCKETS;
}

int monitor_prepare(struct iog_session *s)
{
    s->scratch_hist = calloc(IOG_HIST_BUCKETS, sizeof(uint64_t));
    if (!s->scratch_hist)
        return -ENOMEM;
    for (uint32_t j = 0; j < s->njobs; j++) {
        struct iog_job *job = &s->jobs[j];
        job->prev_hist =
            calloc((size_t)IOG_DIR_COUNT * HIST_KINDS * IOG_HIST_BUCKETS, sizeof(uint64_t));
        if (!job->prev_hist)
            return -ENOMEM;
    }
    return 0;
}

void monitor_free(struct iog_session *s)
{
    free(s->scratch_hist);
    s->scratch_hist = NULL;
    for (uint32_t j = 0; j < s->njobs; j++) {
        free(s->jobs[j].prev_hist);
        s->jobs[j].prev_hist = NULL;
        for (int d = 0; d < IOG_DIR_COUNT; d++) {
            free(s->jobs[j].series[d].v);
            memset(&s->jobs[j].series[d], 0, sizeof(s->jobs[j].series[d]));
        }
    }
}

static int series_push(struct iog_series *se, const struct iog_interval *iv)
{
    if (se->n == se->cap) {
        size_t cap = se->cap ? se->cap * 2 : 64;
        struct iog_interval *v = realloc(se->v, cap * sizeof(*v));
        if (!v)
            return -ENOMEM; /* the interval is dropped; the run goes on */
        se->v = v;
        se->cap = cap;
    }
    se->v[se->n++] = *iv;
    return 0;
}

/* Percentile p99 of the histogram growth since the last interval; updates the
 * remembered cumulative histogram. */
static uint64_t interval_p99(struct iog_session *s, struct iog_job *job, uint32_t dir, int kind)
{
    uint32_t lat = hist_kind_lat[kind];
    uint64_t *cur = s->scratch_hist;
    uint64_t *prev = prev_hist_of(job, dir, kind);
    memset(cur, 0, IOG_HIST_BUCKETS * sizeof(uint64_t));
    for (uint32_t t = 0; t < job->nworkers; t++) {
        const uint64_t *h = job->workers[t]->st[dir].hist[lat];
        for (uint32_t b = 0; b < IOG_HIST_BUCKETS; b++)
            cur[b] += PUB_LOAD(&h[b]);
    }
    for (uint32_t b = 0; b < IOG_HIST_BUCKETS; b++) {
        uint64_t c = cur[b];
        cur[b] = c >= prev[b] ? c - prev[b] : 0;
        prev[b] = c;
    }
    return hist_percentile(cur, 99.0);
}

static void emit_interval(struct iog_session *s, struct iog_job *job, uint64_t end_ns)
{
    uint64_t dt = end_ns - job->last_end_ns;
    for (uint32_t dir = 0; dir < IOG_DIR_COUNT; dir++) {
        struct mon_snap cur = {0};
        for (uint32_t t = 0; t < job->nworkers; t++) {
            struct thread_dir_stats *st = &job->workers[t]->st[dir];
            cur.ios += PUB_LOAD(&st->ios);
            cur.bytes += PUB_LOAD(&st->bytes);
            cur.clat_sum += PUB_LOAD(&st->lat[IOG_LAT_CLAT].sum);
            cur.clat_count += PUB_LOAD(&st->lat[IOG_LAT_CLAT].count);
            cur.lat_sum += PUB_LOAD(&st->lat[IOG_LAT_LAT].sum);
            cur.lat_count += PUB_LOAD(&st->lat[IOG_LAT_LAT].count);
            cur.resp_sum += PUB_LOAD(&st->lat[IOG_LAT_RESP].sum);
            cur.resp_count += PUB_LOAD(&st->lat[IOG_LAT_RESP].count);
        }
        struct mon_snap *prev = &job->prev[dir];
        struct iog_interval iv = {0};
        iv.end_ns = end_ns;
        iv.ios = cur.ios - prev->ios;
        iv.bytes = cur.bytes - prev->bytes;
        if (dt > 0) {
            iv.iops = (double)iv.ios * 1e9 / (double)dt;
            iv.bw_bytes = (double)iv.bytes * 1e9 / (double)dt;
        }
        uint64_t n = cur.clat_count - prev->clat_count;
        if (n > 0)
            iv.clat_mean_ns = (double)(cur.clat_sum - prev->clat_sum) / (double)n;
        n = cur.lat_count - prev->lat_count;
        if (n > 0)
            iv.lat_mean_ns = (double)(cur.lat_sum - prev->lat_sum) / (double)n;
        n = cur.resp_count - prev->resp_count;
        if (n > 0)
            iv.resp_mean_ns = (double)(cur.resp_sum - prev->resp_sum) / (double)n;
        iv.clat_p99_ns = interval_p99(s, job, dir, 0);
        iv.lat_p99_ns = interval_p99(s, job, dir, 1);
        iv.resp_p99_ns = interval_p99(s, job, dir, 2);
        *prev = cur;
        series_push(&job->series[dir], &iv);
    }
    job->last_end_ns = end_ns;
    disk_sample(s, job->count_start + end_ns);
}

static int job_has_news(struct iog_job *job)
{
    for (uint32_t dir = 0; dir < IOG_DIR_COUNT; dir++) {
        uint64_t ios = 0;
        for (uint32_t t = 0; t < job->nworkers; t++)
            ios += PUB_LOAD(&job->workers[t]->st[dir].ios);
        if (ios != job->prev[dir].ios)
            return 1;
    }
    return 0;
}

static void emit_final(struct iog_session *s, struct iog_job *job)
{
    uint64_t end = 0;
    for (uint32_t t = 0; t < job->nworkers; t++) {
        uint64_t r = PUB_LOAD(&job->workers[t]->runtime_ns);
        if (r > end)
            end = r;
    }
    if (end < job->last_end_ns)
        end = job->last_end_ns;
    if (end > job->last_end_ns || job_has_news(job))
        emit_interval(s, job, end);
    job->finished = 1;
}

/* io_timeout_ns: claims every request outstanding longer than its job's
 * timeout, counts it as an ETIMEDOUT error of its job (if it was counted),
 * records the first one of the session as its fault and cancels the
 * session. A claimed request is dropped by its worker if it ever completes. */
static void watch_scan(struct iog_session *s)
{
    uint64_t now = clock_now_ns();
    for (uint32_t j = 0; j < s->njobs; j++) {
        struct iog_job *job = &s->jobs[j];
        uint64_t limit = job->spec.io_timeout_ns;
        if (!limit || job->finished)
            continue;
        for (uint32_t t = 0; t < job->nworkers; t++) {
            struct iog_worker *w = job->workers[t];
            for (uint32_t i = 0; w->watch && i < job->spec.iodepth; i++) {
                struct io_watch *x = &w->watch[i];
                uint64_t issued = __atomic_load_n(&x->issued_ns, __ATOMIC_ACQUIRE);
                if (issued == 0 || issued == WATCH_CLAIMED || now <= issued ||
                    now - issued <= limit)
                    continue;
                struct iog_fault f = {
                    .struct_size = sizeof(f),
                    .kind = IOG_FAULT_IO_TIMEOUT,
                    .job = j,
                    .thread = t,
                    .dir = PUB_LOAD(&x->dir),
                    .file = PUB_LOAD(&x->file),
                    .offset = PUB_LOAD(&x->offset),
                    .len = PUB_LOAD(&x->len),
                    .outstanding_ns = now - issued,
                    .timeout_ns = limit,
                };
                /* fails when the request completed meanwhile: then the
                 * fields read above may belong to the next one */
                if (!__atomic_compare_exchange_n(&x->issued_ns, &issued, WATCH_CLAIMED, 0,
                                                 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
                    continue;
                if (issued >= w->count_start && f.dir < IOG_DIR_COUNT) {
                    struct timeout_errors *te = &job->timeouts[f.dir];
                    if (te->errors == 0) {
                        PUB_STORE(&te->first_offset, f.offset);
                        PUB_STORE(&te->first_ns, issued + limit);
                    }
                    PUB_STORE(&te->errors, te->errors + 1);
                }
                if (!s->fault_set) {
                    s->fault = f;
                    __atomic_store_n(&s->fault_set, 1, __ATOMIC_RELEASE);
                }
                session_cancel(s);
            }
        }
    }
}

/* Workers that will never run count as done, so that completion (and
 * iog_session_wait) does not wait for them. */
static void abandon_workers(struct iog_session *s, struct iog_job *job, uint32_t from)
{
    pthread_mutex_lock(&s->lock);
    PUB_STORE(&job->threads_done, job->threads_done + (job->nworkers - from));
    pthread_mutex_unlock(&s->lock);
}

#define GATE_SLICE_NS 20000000ull /* a thread at the gate looks at its stop word this often */

/* Once the session's count start has passed: the devices are read as of then
 * (once) and RAMP becomes RUNNING. Under the session lock. */
static void count_begun(struct iog_session *s)
{
    if (s->counting)
        return;
    s->counting = 1;
    disk_sample(s, s->t_count_start);
    if (__atomic_load_n(&s->state, __ATOMIC_RELAXED) == IOG_STATE_RAMP)
        __atomic_store_n(&s->state, IOG_STATE_RUNNING, __ATOMIC_RELEASE);
}

/* Starts the clocks of the cohort led by job `lead` (see run_gate) at `now`:
 * each job's run, its count start after its ramp, and the session's count
 * start when this one is earlier. Counting that starts now reads the devices
 * first, before any thread of the cohort issues. Under the session lock. */
static void start_cohort(struct iog_session *s, uint32_t lead, uint64_t now)
{
    uint64_t first = s->t_count_start;
    for (uint32_t j = lead; j < s->njobs; j++) {
        struct iog_job *job = &s->jobs[j];
        if (job->cohort != lead)
            continue;
        job->run_start = now;
        job->count_start = now + job->spec.ramp_ns;
        job->started = 1;
        if (job->count_start < first)
            first = job->count_start;
    }
    PUB_STORE(&s->t_count_start, first);
    if (first <= now)
        count_begun(s);
    pthread_cond_broadcast(&s->cond); /* the cohort's threads, and the monitor's boundaries */
}

int run_gate(struct iog_worker *w)
{
    struct iog_session *s = w->s;
    struct iog_job *job = w->job;
    struct iog_job *lead = &s->jobs[job->cohort];
    pthread_mutex_lock(&s->lock);
    if (++lead->cohort_ready == lead->cohort_threads)
        start_cohort(s, job->cohort, clock_now_ns());
    while (!job->started && !PUB_LOAD(&job->stop)) {
        struct timespec ts = clock_to_timespec(clock_now_ns() + GATE_SLICE_NS);
        pthread_cond_timedwait(&s->cond, &s->lock, &ts);
    }
    int go = job->started && !PUB_LOAD(&job->stop);
    if (go) {
        w->run_start = job->run_start;
        w->count_start = job->count_start;
        w->stop_at = job->spec.runtime_ns ? job->count_start + job->spec.runtime_ns : 0;
    }
    pthread_mutex_unlock(&s->lock);
    return go;
}

/* Starts the run clock and every worker thread. A job's own clock starts at
 * its start gate (run_gate): the jobs with the same start_delay_ns form a
 * cohort whose threads all get ready first. A thread that cannot be created
 * is an error of its job and cancels the session. */
static void begin_run(struct iog_session *s)
{
    uint64_t t0 = clock_now_ns();
    int ramp = 1; /* no job counts from its start */
    for (uint32_t j = 0; j < s->njobs; j++) {
        struct iog_job *job = &s->jobs[j];
        if (job->spec.start_delay_ns == 0 && job->spec.ramp_ns == 0)
            ramp = 0;
        job->cohort = j;
        job->cohort_threads = job->cohort_ready = 0;
        for (uint32_t k = 0; k < j; k++) {
            if (s->jobs[k].cohort == k &&
                s->jobs[k].spec.start_delay_ns == job->spec.start_delay_ns) {
                job->cohort = k;
                break;
            }
        }
        s->jobs[job->cohort].cohort_threads += job->nworkers;
        job->run_start = job->count_start = UINT64_MAX;
        job->next_end_ns = job->interval_ns;
        for (uint32_t t = 0; t < job->nworkers; t++) {
            struct iog_worker *w = job->workers[t];
            w->run_start = t0 + job->spec.start_delay_ns; /* the end of its start delay */
            w->count_start = UINT64_MAX;
            w->stop_at = 0;
        }
    }
    PUB_STORE(&s->t_run_start, t0);
    __atomic_store_n(&s->state, ramp ? IOG_STATE_RAMP : IOG_STATE_RUNNING, __ATOMIC_RELEASE);

    for (uint32_t j = 0; j < s->njobs; j++) {
        struct iog_job *job = &s->jobs[j];
        for (uint32_t t = 0; t < job->nworkers; t++) {
            struct iog_worker *w = job->workers[t];
            int rc =
                PUB_LOAD(&s->cancel) ? ECANCELED : pthread_create(&w->thread, NULL, worker_main, w);
            if (rc != 0) {
                if (rc != ECANCELED)
                    stats_record_error(&w->st[job_fixed_dir(&job->spec)], rc, w->region_start,
                                       clock_now_ns());
                session_cancel(s);
                abandon_workers(s, job, t);
                break;
            }
            w->thread_started = 1;
        }
    }
}

void *monitor_main(void *arg)
{
    struct iog_session *s = arg;
    if (layout_run(s) == 0 && !PUB_LOAD(&s->cancel)) {
        layout_invalidate(s);
        begin_run(s);
    } else {
        for (uint32_t j = 0; j < s->njobs; j++)
            abandon_workers(s, &s->jobs[j], 0);
    }
    pthread_mutex_lock(&s->lock);
    for (;;) {
        uint64_t now = clock_now_ns();
        uint64_t wake = UINT64_MAX;
        int running = 0;
        if (!s->counting) {
            if (now >= s->t_count_start)
                count_begun(s); /* the end of a ramp: the devices read when woken */
            else
                wake = s->t_count_start;
        }
        uint32_t threads = 0, run_over = 0, verifying = 0;
        for (uint32_t j = 0; j < s->njobs; j++) {
            struct iog_job *job = &s->jobs[j];
            /* threads past their run: done, or reading back what they wrote */
            uint32_t over = job->threads_done + job->threads_verifying;
            threads += job->nworkers;
            run_over += over;
            verifying += job->threads_verifying;
            if (job->threads_done < job->nworkers)
                running = 1;
            if (job->finished)
                continue;
            if (over == job->nworkers) {
                emit_final(s, job); /* reading back is not part of the series */
                continue;
            }
            if (job->boundaries_over || !job->started)
                continue; /* not started: its gate wakes this thread when it is */
            if (now >= job->count_start + job->next_end_ns) {
                /* Late wake-ups fold the missed boundaries into one interval. */
                uint64_t k = (now - job->count_start) / job->interval_ns;
                uint64_t end = k * job->interval_ns;
                if (job->spec.runtime_ns && end >= job->spec.runtime_ns) {
                    /* Issuing stops at runtime_ns: the final interval will
                     * run to the real end instead of leaving a sliver. */
                    job->boundaries_over = 1;
                    continue;
                }
                emit_interval(s, job, end);
                job->next_end_ns = end + job->interval_ns;
            }
            uint64_t due = job->count_start + job->next_end_ns;
            if (due < wake)
                wake = due;
        }
        if (verifying > 0 && run_over == threads &&
            __atomic_load_n(&s->state, __ATOMIC_RELAXED) == IOG_STATE_RUNNING)
            __atomic_store_n(&s->state, IOG_STATE_VERIFY, __ATOMIC_RELEASE);
        if (!running)
            break;
        if (s->watch_tick_ns) {
            watch_scan(s);
            if (now + s->watch_tick_ns < wake)
                wake = now + s->watch_tick_ns;
        }
        struct timespec ts = clock_to_timespec(wake);
        pthread_cond_timedwait(&s->cond, &s->lock, &ts);
    }
    /* every worker is done: what they captured of their writes is measured
     * before the results can be read */
    pthread_mutex_unlock(&s->lock);
    analysis_finish(s);
    pthread_mutex_lock(&s->lock);
    s->t_done = clock_now_ns();
    /* finished before DONE is shown: a poll that reads DONE finds iog_session_wait(s, 0)
     * returning 0 and the results readable (session.c's progress() reads them in the
     * other order) */
    __atomic_store_n(&s->monitor_done, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&s->state, IOG_STATE_DONE, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    return NULL;
}
