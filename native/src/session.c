/*
 * session.c - the session lifecycle behind the public API: creating a
 * session from checked job specs (validate.c), starting it (opening files
 * and setting up workers, then handing layout and the run to the background
 * thread), progress polls, cancel, wait and destroy. What a finished
 * session holds is read by query.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "abi.h"
#include "clock.h"
#include "engine.h"
#include "internal.h"
#include "verify.h"

#define MAX_JOBS            4096
#define MAX_THREADS         4096        /* worker threads of all jobs of a session */
#define MIN_WATCH_TICK_NS   10000000ull /* overdue requests are looked for at most every 10 ms */
#define DEFAULT_INTERVAL_NS 1000000000ull

#define INVALID(...)                                                                               \
    do {                                                                                           \
        SET_ERR(err, errlen, __VA_ARGS__);                                                         \
        return -EINVAL;                                                                            \
    } while (0)

/* The job's files and the geometry of its coverage bitmap. */
static void job_plan_files(struct iog_job *job)
{
    const struct iog_job_spec *spec = &job->spec;
    job->nfiles = 1;
    if (job->engine->flags & IOG_ENGINE_DOES_IO)
        job->nfiles = (uint32_t)job_file_names(spec, job->files);
    job->file_size = spec->size / job->nfiles;
    uint64_t total = job->file_size * job->nfiles;
    uint32_t shift = 9;
    while ((total >> shift) + 1 > (1u << 20))
        shift++;
    job->coverage_shift = shift;
    job->coverage_chunk = 1ull << shift;
    job->coverage_total = (total + job->coverage_chunk - 1) >> shift;
}

static void session_free(iog_session *s)
{
    if (!s)
        return;
    monitor_free(s);
    disk_free(s);
    for (uint32_t j = 0; j < s->njobs; j++) {
        struct iog_job *job = &s->jobs[j];
        for (uint32_t t = 0; job->workers && t < job->nworkers; t++) {
            if (job->workers[t]) {
                worker_teardown(job->workers[t]);
                data_writer_destroy(job->workers[t]->data);
                verify_destroy(job->workers[t]->verify);
                free(job->workers[t]->coverage);
                free(job->workers[t]->watch);
                free(job->workers[t]);
            }
        }
        free(job->workers);
    }
    free(s->jobs);
    free(s->flows);
    pthread_cond_destroy(&s->cond);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* The generation of a session's verified blocks: different for every session
 * (a block left by an earlier run is told apart from this run's), never 0
 * (what a block without a header reports). */
static uint64_t new_generation(uint64_t seed)
{
    uint64_t r = 0;
    if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
        r = 0; /* the clock and the pid still tell sessions apart */
    uint64_t x = seed ^ r ^ clock_now_ns() ^ ((uint64_t)getpid() << 40);
    uint64_t g;
    do
        g = splitmix64(&x);
    while (g == 0);
    return g;
}

IOG_API int iog_session_create(const struct iog_job_spec *jobs, uint32_t njobs, iog_session **out,
                               char *err, size_t errlen)
{
    if (err && errlen > 0)
        err[0] = '\0';
    if (!out)
        INVALID("out must not be NULL");
    *out = NULL;
    if (!jobs || njobs == 0)
        INVALID("at least one job is required");
    if (njobs > MAX_JOBS)
        INVALID("at most %u jobs per session", MAX_JOBS);
    uint64_t threads = 0;
    struct iog_job_spec *spec = malloc(sizeof(*spec));
    if (!spec) {
        SET_ERR(err, errlen, "out of memory creating the session");
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < njobs; i++) {
        int rc = job_spec_read(jobs, i, spec, err, errlen);
        if (rc < 0) {
            free(spec);
            return rc;
        }
        threads += spec->numjobs;
        if (threads > MAX_THREADS) {
            free(spec);
            INVALID("job %u: numjobs brings the session to more than %u threads", i, MAX_THREADS);
        }
    }
    free(spec);

    iog_session *s = calloc(1, sizeof(*s));
    if (!s)
        goto nomem;
    pthread_mutex_init(&s->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cond, &ca);
    pthread_condattr_destroy(&ca);

    s->jobs = calloc(njobs, sizeof(*s->jobs));
    if (!s->jobs)
        goto nomem;
    s->njobs = njobs;
    uint64_t expected = 0;
    int known = 1;
    for (uint32_t i = 0; i < njobs; i++) {
        struct iog_job *job = &s->jobs[i];
        job_spec_read(jobs, i, &job->spec, NULL, 0); /* checked above */
        const struct iog_job_spec *js = &job->spec;
        job->index = i;
        job->engine = engine_find(js->engine);
        job->interval_ns = js->interval_ns ? js->interval_ns : DEFAULT_INTERVAL_NS;
        job->nworkers = js->numjobs;
        for (uint32_t f = 0; f < IOG_FILES_MAX; f++)
            job->layout_fd[f] = -1;
        job_plan_files(job);
        if (job_uses_dir(js, IOG_DIR_WRITE))
            s->data_writers += job->nworkers;
        job->workers = calloc(job->nworkers, sizeof(*job->workers));
        if (!job->workers)
            goto nomem;
        for (uint32_t t = 0; t < job->nworkers; t++) {
            struct iog_worker *w = aligned_alloc(64, (sizeof(*w) + 63) & ~(size_t)63);
            if (!w)
                goto nomem;
            memset(w, 0, sizeof(*w));
            w->s = s;
            w->job = job;
            w->ops = &job->engine->ops;
            w->index = t;
            w->fd = -1;
            for (uint32_t f = 0; f < IOG_FILES_MAX; f++)
                w->fds[f] = -1;
            for (int d = 0; d < IOG_DIR_COUNT; d++)
                stats_init(&w->st[d]);
            job->workers[t] = w;
        }
        /* overdue requests are looked for every quarter of the shortest
         * timeout, so they are seen at most 25% late (10 ms at the least) */
        uint64_t tick = js->io_timeout_ns / 4;
        if (tick && tick < MIN_WATCH_TICK_NS)
            tick = MIN_WATCH_TICK_NS;
        if (tick && (!s->watch_tick_ns || tick < s->watch_tick_ns))
            s->watch_tick_ns = tick;
        if (js->runtime_ns == 0)
            known = 0;
        else if (js->start_delay_ns + js->ramp_ns + js->runtime_ns > expected)
            expected = js->start_delay_ns + js->ramp_ns + js->runtime_ns;
    }
    if (flows_create(s) < 0)
        goto nomem;
    s->run_expected_ns = known ? expected : 0;
    s->t_count_start = UINT64_MAX;
    s->generation = new_generation(s->jobs[0].spec.seed);
    *out = s;
    return 0;

nomem:
    session_free(s);
    SET_ERR(err, errlen, "out of memory creating the session");
    return -ENOMEM;
}

/* Joins the background thread, then the workers it started (by then they
 * have all finished); used by destroy. */
static void join_threads(iog_session *s)
{
    if (s->monitor_started) {
        pthread_join(s->monitor, NULL);
        s->monitor_started = 0;
    }
    for (uint32_t j = 0; j < s->njobs; j++) {
        struct iog_job *job = &s->jobs[j];
        for (uint32_t t = 0; t < job->nworkers; t++) {
            struct iog_worker *w = job->workers[t];
            if (w->thread_started) {
                pthread_join(w->thread, NULL);
                w->thread_started = 0;
            }
        }
    }
}

IOG_API int iog_session_start(iog_session *s, char *err, size_t errlen)
{
    if (err && errlen > 0)
        err[0] = '\0';
    if (!s)
        INVALID("session must not be NULL");
    if (__atomic_exchange_n(&s->starting, 1, __ATOMIC_ACQ_REL)) {
        SET_ERR(err, errlen, "session already started");
        return -EALREADY;
    }

    /* Everything that can fail with a message for the caller happens here;
     * the slow part (layout) and the run happen in the background thread. */
    PUB_STORE(&s->t_start_call, clock_now_ns());
    int rc = layout_prepare(s, err, errlen);
    if (rc < 0)
        goto fail;
    for (uint32_t j = 0; j < s->njobs; j++) {
        struct iog_job *job = &s->jobs[j];
        for (uint32_t t = 0; t < job->nworkers; t++) {
            rc = worker_setup(job->workers[t], err, errlen);
            if (rc < 0)
                goto fail;
        }
    }
    rc = monitor_prepare(s);
    if (rc < 0) {
        SET_ERR(err, errlen, "out of memory for the interval series");
        goto fail;
    }
    rc = analysis_start(s, err, errlen);
    if (rc < 0)
        goto fail;
    __atomic_store_n(&s->state, IOG_STATE_LAYOUT, __ATOMIC_RELEASE);
    rc = -pthread_create(&s->monitor, NULL, monitor_main, s);
    if (rc < 0) {
        SET_ERR(err, errlen, "cannot start the background thread: %s", strerror(-rc));
        analysis_finish(s);
        goto fail;
    }
    s->monitor_started = 1;
    __atomic_store_n(&s->started, 1, __ATOMIC_RELEASE);
    return 0;

fail:
    __atomic_store_n(&s->state, IOG_STATE_CREATED, __ATOMIC_RELEASE);
    layout_release(s);
    PUB_STORE(&s->layout_total, 0);
    for (uint32_t j = 0; j < s->njobs; j++) {
        struct iog_job *job = &s->jobs[j];
        for (uint32_t t = 0; t < job->nworkers; t++) {
            worker_teardown(job->workers[t]);
            for (int d = 0; d < IOG_DIR_COUNT; d++)
                stats_init(&job->workers[t]->st[d]);
        }
    }
    monitor_free(s);
    __atomic_store_n(&s->starting, 0, __ATOMIC_RELEASE);
    return rc;
}

/* The progress snapshot; the caller copies it out. The counts are read
 * before the count start and the clock: a job's clock starts (monitor.c,
 * run_gate) before its threads count anything, so a snapshot with counted
 * requests also has counting begun (RUNNING, counted_ns > 0). */
static void progress(iog_session *s, struct iog_progress *out)
{
    memset(out, 0, sizeof(*out));
    out->jobs = s->njobs;
    int state = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
    /* DONE exactly when iog_session_wait(s, 0) says finished: also in the moment
     * between the monitor's two stores (monitor.c: finished, then DONE) */
    if (state != IOG_STATE_DONE && __atomic_load_n(&s->monitor_done, __ATOMIC_ACQUIRE))
        state = IOG_STATE_DONE;
    if (state == IOG_STATE_CREATED)
        return;
    for (uint32_t j = 0; state != IOG_STATE_LAYOUT && j < s->njobs; j++) {
        struct iog_job *job = &s->jobs[j];
        for (uint32_t t = 0; t < job->nworkers; t++) {
            struct iog_worker *w = job->workers[t];
            for (int d = 0; d < IOG_DIR_COUNT; d++) {
                if (d < IOG_DATA_DIRS) {
                    /* acquire: the count start below is read after */
                    out->ios[d] += __atomic_load_n(&w->st[d].ios, __ATOMIC_ACQUIRE);
                    out->bytes[d] += PUB_LOAD(&w->st[d].bytes);
                } else if (d == IOG_DIR_TRIM) {
                    out->trim_ios += PUB_LOAD(&w->st[d].ios);
                    out->trim_bytes += PUB_LOAD(&w->st[d].bytes);
                }
                out->errors += PUB_LOAD(&w->st[d].errors);
            }
        }
        for (int d = 0; d < IOG_DIR_COUNT; d++)
            out->errors += PUB_LOAD(&job->timeouts[d].errors);
        if (PUB_LOAD(&job->threads_done) == job->nworkers)
            out->jobs_done++;
    }
    uint64_t cs = PUB_LOAD(&s->t_count_start);
    uint64_t now = clock_now_ns();
    if (state == IOG_STATE_DONE && __atomic_load_n(&s->monitor_done, __ATOMIC_ACQUIRE))
        now = s->t_done;
    uint64_t t_start = PUB_LOAD(&s->t_start_call);
    out->elapsed_ns = now - t_start;
    out->layout_total = PUB_LOAD(&s->layout_total);
    out->layout_bytes = PUB_LOAD(&s->layout_bytes);
    uint64_t run_start = PUB_LOAD(&s->t_run_start);
    if (state == IOG_STATE_LAYOUT)
        run_start = 0; /* as the state says, even when the run clock started since */
    if (s->run_expected_ns)
        out->expected_ns = (run_start ? run_start - t_start : out->elapsed_ns) + s->run_expected_ns;
    if (state == IOG_STATE_RAMP && now > cs)
        state = IOG_STATE_RUNNING; /* the background thread has not noticed yet */
    out->state = (uint32_t)state;
    if (state == IOG_STATE_LAYOUT)
        return;
    out->counted_ns = now > cs ? now - cs : 0;
}

IOG_API int iog_session_poll(iog_session *s, struct iog_progress *out)
{
    uint32_t size = abi_out_size(out, IOG_PROGRESS_SIZE_VER0);
    if (!s || !size)
        return -EINVAL;
    struct iog_progress p;
    progress(s, &p);
    abi_copy_out(out, size, &p, sizeof(p));
    return 0;
}

IOG_API int iog_session_cancel(iog_session *s)
{
    if (!s)
        return -EINVAL;
    session_cancel(s);
    return 0;
}

IOG_API int iog_session_wait(iog_session *s, uint64_t timeout_ns)
{
    if (!s || !__atomic_load_n(&s->started, __ATOMIC_ACQUIRE))
        return -EINVAL;
    if (__atomic_load_n(&s->monitor_done, __ATOMIC_ACQUIRE))
        return 0;
    if (timeout_ns == 0)
        return -ETIMEDOUT;
    uint64_t now = clock_now_ns();
    uint64_t deadline = timeout_ns > UINT64_MAX / 2 - now ? UINT64_MAX / 2 : now + timeout_ns;
    struct timespec ts = clock_to_timespec(deadline);
    int rc = 0;
    pthread_mutex_lock(&s->lock);
    while (!s->monitor_done) {
        if (pthread_cond_timedwait(&s->cond, &s->lock, &ts) == ETIMEDOUT) {
            rc = s->monitor_done ? 0 : -ETIMEDOUT;
            break;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

IOG_API void iog_session_destroy(iog_session *s)
{
    if (!s)
        return;
    session_cancel(s);
    join_threads(s);
    session_free(s);
}
