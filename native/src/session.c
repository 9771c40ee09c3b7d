/*
 * session.c - the session lifecycle behind the public API: validating job
 * specs, creating the session, starting it (opening files and setting up
 * workers, then handing layout and the run to the background thread),
 * progress polls, cancel, wait, the statistics / histogram / series
 * accessors that merge a job's threads (with the timeouts the monitor
 * counted), the fault record, and destroy.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "clock.h"
#include "session.h"
#include "verify.h"

#define MAX_JOBS            4096
#define MAX_NUMJOBS         1024
#define MAX_THREADS         4096 /* worker threads of all jobs of a session */
#define MAX_IODEPTH         4096
#define MIN_INTERVAL_NS     1000000ull
#define MIN_IO_TIMEOUT_NS   1000000ull  /* io_timeout_ns: 0 or at least 1 ms */
#define MIN_WATCH_TICK_NS   10000000ull /* overdue requests are looked for at most every 10 ms */
#define DEFAULT_INTERVAL_NS 1000000000ull

static const struct iog_engine_ops *engine_ops(uint32_t engine)
{
    switch (engine) {
    case IOG_ENGINE_NULL:
        return &engine_null_ops;
    case IOG_ENGINE_PSYNC:
        return &engine_psync_ops;
    case IOG_ENGINE_IO_URING:
        return &engine_uring_ops;
    case IOG_ENGINE_LIBAIO:
        return &engine_libaio_ops;
    case IOG_ENGINE_SYNC:
        return &engine_sync_ops;
    default:
        return NULL;
    }
}

int job_file_names(const struct iog_job_spec *spec, const char *names[IOG_FILES_MAX])
{
    size_t pos = 0;
    int n = 0;
    for (;;) {
        size_t len = strnlen(spec->filename + pos, IOG_PATH_MAX - pos);
        if (pos + len == IOG_PATH_MAX)
            return -EINVAL; /* runs off the end */
        if (len == 0)
            return n;
        if (n == IOG_FILES_MAX)
            return -E2BIG;
        names[n++] = spec->filename + pos;
        pos += len + 1;
    }
}

#define INVALID(...)                                                                               \
    do {                                                                                           \
        SET_ERR(err, errlen, __VA_ARGS__);                                                         \
        return -EINVAL;                                                                            \
    } while (0)

#define MAX_BS (1ull << 30)
#define KNOWN_FLAGS                                                                                \
    (IOG_JOB_TIME_BASED | IOG_JOB_DIRECT | IOG_JOB_NO_LAYOUT | IOG_JOB_REFILL |                    \
     IOG_JOB_ZERO_BUFS | IOG_JOB_INVALIDATE | IOG_JOB_VERIFY_FATAL | IOG_JOB_TEST_CRASH)

/* The block size table of one direction; its largest size into *maxbs. */
static int validate_bs(const struct iog_job_spec *j, uint32_t i, uint32_t d, uint64_t *maxbs,
                       char *err, size_t errlen)
{
    if (j->nbs[d] < 1 || j->nbs[d] > IOG_BS_ENTRIES_MAX)
        INVALID("job %u: nbs[%u] must be in 1..%u, got %u", i, d, IOG_BS_ENTRIES_MAX, j->nbs[d]);
    uint64_t total = 0;
    for (uint32_t k = 0; k < j->nbs[d]; k++) {
        const struct iog_bs_entry *e = &j->bs[d][k];
        if (e->lo == 0)
            INVALID("job %u: bs[%u][%u].lo must be > 0", i, d, k);
        if (e->hi < e->lo)
            INVALID("job %u: bs[%u][%u].hi must be >= lo", i, d, k);
        if (e->hi > MAX_BS)
            INVALID("job %u: bs[%u][%u].hi must be <= 1 GiB", i, d, k);
        if (e->hi % e->lo != 0)
            INVALID("job %u: bs[%u][%u].hi must be a multiple of lo", i, d, k);
        if ((j->flags & IOG_JOB_DIRECT) && e->lo % 512 != 0)
            INVALID("job %u: bs[%u][%u].lo must be a multiple of 512 with direct I/O", i, d, k);
        if (e->reserved0 != 0)
            INVALID("job %u: bs[%u][%u].reserved0 must be 0", i, d, k);
        total += e->weight;
        if (e->hi > *maxbs)
            *maxbs = e->hi;
    }
    if (total != IOG_WEIGHT_TOTAL)
        INVALID("job %u: bs[%u] weights must sum to %u, got %llu", i, d, IOG_WEIGHT_TOTAL,
                (unsigned long long)total);
    uint64_t ba = j->blockalign[d];
    if (ba > j->size)
        INVALID("job %u: blockalign[%u] must be <= size", i, d);
    if ((j->flags & IOG_JOB_DIRECT) && ba % 512 != 0)
        INVALID("job %u: blockalign[%u] must be a multiple of 512 with direct I/O", i, d);
    return 0;
}

static int validate_pacing(const struct iog_job_spec *j, uint32_t i, char *err, size_t errlen)
{
    int limited[IOG_DATA_DIRS];
    for (uint32_t d = 0; d < IOG_DATA_DIRS; d++) {
        limited[d] = j->rate_iops[d] > 0 || j->rate_bytes[d] > 0;
        if (limited[d] && !job_uses_dir(j, d))
            INVALID("job %u: rate_iops[%u] / rate_bytes[%u]: the job never %s", i, d, d,
                    d == IOG_DIR_READ ? "reads" : "writes");
    }
    if ((j->rw == IOG_RW_RW || j->rw == IOG_RW_RANDRW) && limited[0] != limited[1])
        INVALID("job %u: rate_iops / rate_bytes: a mixed job is limited in both directions or "
                "neither",
                i);
    if (j->rate_process > IOG_RATE_POISSON)
        INVALID("job %u: rate_process %u is unknown", i, j->rate_process);
    if (j->thinktime_ns > UINT64_MAX / 4)
        INVALID("job %u: thinktime_ns too large", i);
    if (j->sync_kind > IOG_SYNC_FDATASYNC)
        INVALID("job %u: sync_kind %u is unknown", i, j->sync_kind);
    if ((j->sync_kind != IOG_SYNC_NONE) != (j->sync_every != 0))
        INVALID("job %u: sync_every must be > 0 exactly when sync_kind is set", i);
    return 0;
}

static int validate_dist(const struct iog_job_spec *j, uint32_t i, char *err, size_t errlen)
{
    double p = j->dist_param;
    int finite = p == p && p < 1e300 && p > -1e300;
    switch (j->dist) {
    case IOG_DIST_UNIFORM:
        break;
    case IOG_DIST_ZIPF:
        if (!finite || p <= 0.0 || p == 1.0)
            INVALID("job %u: dist_param (zipf theta) must be > 0 and != 1", i);
        break;
    case IOG_DIST_PARETO:
        if (!finite || p <= 0.0 || p >= 1.0)
            INVALID("job %u: dist_param (pareto h) must be in (0, 1)", i);
        break;
    case IOG_DIST_NORMAL:
        if (!finite || p <= 0.0)
            INVALID("job %u: dist_param (normal sigma, percent) must be > 0", i);
        break;
    case IOG_DIST_ZONED: {
        if (j->nzones < 1 || j->nzones > IOG_ZONES_MAX)
            INVALID("job %u: nzones must be in 1..%u", i, IOG_ZONES_MAX);
        uint64_t access = 0, size = 0;
        for (uint32_t z = 0; z < j->nzones; z++) {
            if (j->zones[z].access > 0 && j->zones[z].size == 0)
                INVALID("job %u: zones[%u].size must be > 0 when its access is", i, z);
            access += j->zones[z].access;
            size += j->zones[z].size;
        }
        if (access != IOG_WEIGHT_TOTAL || size != IOG_WEIGHT_TOTAL)
            INVALID("job %u: zones access and size must each sum to %u", i, IOG_WEIGHT_TOTAL);
        break;
    }
    default:
        INVALID("job %u: dist %u is unknown", i, j->dist);
    }
    if (j->reserved1 != 0)
        INVALID("job %u: reserved1 must be 0", i);
    return 0;
}

static int validate_data(const struct iog_job_spec *j, uint32_t i, char *err, size_t errlen)
{
    if (j->compress_pct > 100)
        INVALID("job %u: compress_pct must be <= 100, got %u", i, j->compress_pct);
    if (j->dedupe_pct > 100)
        INVALID("job %u: dedupe_pct must be <= 100, got %u", i, j->dedupe_pct);
    if (j->pattern_len > IOG_PATTERN_MAX)
        INVALID("job %u: pattern_len must be <= %u", i, IOG_PATTERN_MAX);
    if (j->compress_chunk > MAX_BS)
        INVALID("job %u: compress_chunk must be <= 1 GiB", i);
    if ((j->flags & IOG_JOB_ZERO_BUFS) && (j->compress_pct || j->dedupe_pct))
        INVALID("job %u: compress_pct and dedupe_pct must be 0 with zero buffers (flags)", i);
    return 0;
}

/* Verification keeps the expected contents of every block position in one
 * thread: one write size whose blocks never overlap, one thread per job, and
 * a bounded number of positions. */
static int validate_verify(const struct iog_job_spec *j, uint32_t i, uint32_t nfiles, char *err,
                           size_t errlen)
{
    if (j->verify > IOG_VERIFY_CRC32)
        INVALID("job %u: verify %u is unknown", i, j->verify);
    if (j->verify == IOG_VERIFY_NONE) {
        if (j->verify_backlog != 0)
            INVALID("job %u: verify_backlog must be 0 without verify", i);
        if (j->flags & IOG_JOB_VERIFY_FATAL)
            INVALID("job %u: flags VERIFY_FATAL needs verify", i);
        return 0;
    }
    if (j->engine == IOG_ENGINE_NULL)
        INVALID("job %u: verify needs an engine that does I/O, not null", i);
    if (j->rw != IOG_RW_WRITE && j->rw != IOG_RW_RANDWRITE)
        INVALID("job %u: verify needs rw write or randwrite", i);
    const struct iog_bs_entry *e = &j->bs[IOG_DIR_WRITE][0];
    if (j->nbs[IOG_DIR_WRITE] != 1 || e->lo != e->hi)
        INVALID("job %u: verify needs one write block size (no bs range or split)", i);
    if (e->lo < IOG_VERIFY_HEADER || e->lo % 8 != 0)
        INVALID("job %u: bs[1] must be a multiple of 8 and >= %u with verify, got %llu", i,
                IOG_VERIFY_HEADER, (unsigned long long)e->lo);
    if (j->blockalign[IOG_DIR_WRITE] != 0 && j->blockalign[IOG_DIR_WRITE] != e->lo)
        INVALID("job %u: blockalign[1] must be 0 or the block size (%llu) with verify, got %llu", i,
                (unsigned long long)e->lo, (unsigned long long)j->blockalign[IOG_DIR_WRITE]);
    if (j->numjobs != 1)
        INVALID("job %u: numjobs must be 1 with verify, got %u", i, j->numjobs);
    if (j->verify_backlog > VERIFY_MAX_BACKLOG)
        INVALID("job %u: verify_backlog must be <= %u, got %u", i, VERIFY_MAX_BACKLOG,
                j->verify_backlog);
    uint64_t blocks = j->size / nfiles / e->lo * nfiles;
    if (blocks > VERIFY_MAX_BLOCKS)
        INVALID("job %u: verify tracks at most %llu blocks per job; size %llu / bs %llu gives "
                "%llu: use a larger bs or a smaller size",
                i, VERIFY_MAX_BLOCKS, (unsigned long long)j->size, (unsigned long long)e->lo,
                (unsigned long long)blocks);
    return 0;
}

static int validate_spec(const struct iog_job_spec *j, uint32_t i, char *err, size_t errlen)
{
    if (j->struct_size != sizeof(struct iog_job_spec))
        INVALID("job %u: struct_size is %u, expected %zu", i, j->struct_size,
                sizeof(struct iog_job_spec));
    if (!engine_ops(j->engine))
        INVALID("job %u: engine %u is unknown", i, j->engine);
    if (j->rw > IOG_RW_RANDRW)
        INVALID("job %u: rw %u is unknown", i, j->rw);
    if (j->rwmixread > 100)
        INVALID("job %u: rwmixread must be <= 100, got %u", i, j->rwmixread);
    if (j->flags & ~KNOWN_FLAGS)
        INVALID("job %u: flags has unknown bits 0x%x", i, j->flags & ~KNOWN_FLAGS);
    if (j->size == 0)
        INVALID("job %u: size must be > 0", i);
    uint64_t maxbs = 0;
    int rc;
    for (uint32_t d = 0; d < IOG_DATA_DIRS; d++) {
        if (job_uses_dir(j, d) && (rc = validate_bs(j, i, d, &maxbs, err, errlen)) < 0)
            return rc;
    }
    if (j->iodepth < 1)
        INVALID("job %u: iodepth must be >= 1", i);
    if (j->iodepth > MAX_IODEPTH)
        INVALID("job %u: iodepth must be <= %u", i, MAX_IODEPTH);
    if ((j->engine == IOG_ENGINE_PSYNC || j->engine == IOG_ENGINE_SYNC) && j->iodepth != 1)
        INVALID("job %u: iodepth must be 1 for the %s engine", i,
                j->engine == IOG_ENGINE_PSYNC ? "psync" : "sync");
    if (j->numjobs < 1)
        INVALID("job %u: numjobs must be >= 1", i);
    if (j->numjobs > MAX_NUMJOBS)
        INVALID("job %u: numjobs must be <= %u", i, MAX_NUMJOBS);
    uint32_t nfiles = 1;
    if (j->engine != IOG_ENGINE_NULL) {
        const char *names[IOG_FILES_MAX];
        int n = job_file_names(j, names);
        if (n == -E2BIG)
            INVALID("job %u: filename lists more than %u files", i, IOG_FILES_MAX);
        if (n < 0)
            INVALID("job %u: filename is not NUL-terminated (the list ends with an empty name)", i);
        if (n == 0)
            INVALID("job %u: filename must not be empty", i);
        nfiles = (uint32_t)n;
    }
    if (j->size / nfiles < maxbs)
        INVALID("job %u: size must be >= the largest bs (%llu) in each of its %u file(s)", i,
                (unsigned long long)maxbs, nfiles);
    if (j->offset > UINT64_MAX - j->size || j->offset + j->size > (uint64_t)INT64_MAX)
        INVALID("job %u: offset + size overflows", i);
    if ((j->flags & IOG_JOB_DIRECT) && j->offset % 512 != 0)
        INVALID("job %u: offset must be a multiple of 512 with direct I/O", i);
    if ((j->flags & IOG_JOB_TIME_BASED) && j->runtime_ns == 0)
        INVALID("job %u: runtime_ns must be > 0 when time based", i);
    if (j->runtime_ns > UINT64_MAX / 4 || j->ramp_ns > UINT64_MAX / 4)
        INVALID("job %u: runtime_ns or ramp_ns too large", i);
    if (j->interval_ns != 0 && j->interval_ns < MIN_INTERVAL_NS)
        INVALID("job %u: interval_ns must be 0 or >= %llu", i, MIN_INTERVAL_NS);
    if (j->io_timeout_ns != 0 &&
        (j->io_timeout_ns < MIN_IO_TIMEOUT_NS || j->io_timeout_ns > UINT64_MAX / 4))
        INVALID("job %u: io_timeout_ns must be 0 or in [%llu, 2^62]", i, MIN_IO_TIMEOUT_NS);
    if (j->reserved0 != 0)
        INVALID("job %u: reserved0 must be 0", i);
    if ((rc = validate_pacing(j, i, err, errlen)) < 0)
        return rc;
    if ((rc = validate_dist(j, i, err, errlen)) < 0)
        return rc;
    if ((rc = validate_data(j, i, err, errlen)) < 0)
        return rc;
    return validate_verify(j, i, nfiles, err, errlen);
}

/* The job's files and the geometry of its coverage bitmap. */
static void job_plan_files(struct iog_job *job)
{
    const struct iog_job_spec *spec = &job->spec;
    job->nfiles = 1;
    if (job->ops != &engine_null_ops)
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
    for (uint32_t i = 0; i < njobs; i++) {
        int rc = validate_spec(&jobs[i], i, err, errlen);
        if (rc < 0)
            return rc;
        threads += jobs[i].numjobs;
        if (threads > MAX_THREADS)
            INVALID("job %u: numjobs brings the session to more than %u threads", i, MAX_THREADS);
    }

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
        job->spec = jobs[i];
        job->spec.filename[IOG_PATH_MAX - 1] = '\0';
        job->index = i;
        job->ops = engine_ops(jobs[i].engine);
        job->interval_ns = jobs[i].interval_ns ? jobs[i].interval_ns : DEFAULT_INTERVAL_NS;
        job->nworkers = jobs[i].numjobs;
        for (uint32_t f = 0; f < IOG_FILES_MAX; f++)
            job->layout_fd[f] = -1;
        job_plan_files(job);
        if (job_uses_dir(&jobs[i], IOG_DIR_WRITE))
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
            w->ops = job->ops;
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
        uint64_t tick = jobs[i].io_timeout_ns / 4;
        if (tick && tick < MIN_WATCH_TICK_NS)
            tick = MIN_WATCH_TICK_NS;
        if (tick && (!s->watch_tick_ns || tick < s->watch_tick_ns))
            s->watch_tick_ns = tick;
        if (jobs[i].runtime_ns == 0)
            known = 0;
        else if (jobs[i].ramp_ns + jobs[i].runtime_ns > expected)
            expected = jobs[i].ramp_ns + jobs[i].runtime_ns;
    }
    s->run_expected_ns = known ? expected : 0;
    s->t_count_start = UINT64_MAX;
    s->generation = new_generation(jobs[0].seed);
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

IOG_API int iog_session_poll(iog_session *s, struct iog_progress *out)
{
    if (!s || !out || out->struct_size != sizeof(*out))
        return -EINVAL;
    memset(out, 0, sizeof(*out));
    out->struct_size = sizeof(*out);
    out->jobs = s->njobs;
    int state = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
    if (state == IOG_STATE_CREATED)
        return 0;
    uint64_t now = clock_now_ns();
    if (state == IOG_STATE_DONE && __atomic_load_n(&s->monitor_done, __ATOMIC_ACQUIRE))
        now = s->t_done;
    uint64_t t_start = PUB_LOAD(&s->t_start_call);
    out->elapsed_ns = now - t_start;
    out->layout_total = PUB_LOAD(&s->layout_total);
    out->layout_bytes = PUB_LOAD(&s->layout_bytes);
    uint64_t run_start = PUB_LOAD(&s->t_run_start);
    if (s->run_expected_ns)
        out->expected_ns = (run_start ? run_start - t_start : out->elapsed_ns) + s->run_expected_ns;
    uint64_t cs = PUB_LOAD(&s->t_count_start);
    if (state == IOG_STATE_RAMP && now > cs)
        state = IOG_STATE_RUNNING; /* the background thread has not noticed yet */
    out->state = (uint32_t)state;
    if (state == IOG_STATE_LAYOUT)
        return 0;
    out->counted_ns = now > cs ? now - cs : 0;
    for (uint32_t j = 0; j < s->njobs; j++) {
        struct iog_job *job = &s->jobs[j];
        for (uint32_t t = 0; t < job->nworkers; t++) {
            struct iog_worker *w = job->workers[t];
            for (int d = 0; d < IOG_DIR_COUNT; d++) {
                if (d < IOG_DATA_DIRS) {
                    out->ios[d] += PUB_LOAD(&w->st[d].ios);
                    out->bytes[d] += PUB_LOAD(&w->st[d].bytes);
                }
                out->errors += PUB_LOAD(&w->st[d].errors);
            }
        }
        for (int d = 0; d < IOG_DATA_DIRS; d++)
            out->errors += PUB_LOAD(&job->timeouts[d].errors);
        if (PUB_LOAD(&job->threads_done) == job->nworkers)
            out->jobs_done++;
    }
    return 0;
}

IOG_API int iog_session_cancel(iog_session *s)
{
    if (!s)
        return -EINVAL;
    PUB_STORE(&s->cancel, 1);
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

IOG_API int iog_session_dir_stats(const iog_session *s, uint32_t job, uint32_t dir,
                                  struct iog_dir_stats *out)
{
    if (!out || out->struct_size != sizeof(*out))
        return -EINVAL;
    int rc = check_done(s, job, dir);
    if (rc < 0)
        return rc;
    const struct iog_job *jb = &s->jobs[job];
    struct merged_dir m;
    stats_merge_init(&m);
    uint64_t runtime = 0;
    for (uint32_t t = 0; t < jb->nworkers; t++) {
        stats_merge(&m, &jb->workers[t]->st[dir]);
        if (jb->workers[t]->runtime_ns > runtime)
            runtime = jb->workers[t]->runtime_ns;
    }
    if (dir < IOG_DATA_DIRS)
        merge_timeouts(&m, &jb->timeouts[dir]);
    memset(out, 0, sizeof(*out));
    out->struct_size = sizeof(*out);
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
    if (dir >= IOG_DATA_DIRS || (!out && cap > 0))
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

IOG_API int iog_session_job_stats(const iog_session *s, uint32_t job, struct iog_job_stats *out)
{
    if (!out || out->struct_size != sizeof(*out))
        return -EINVAL;
    int rc = check_done(s, job, 0);
    if (rc < 0)
        return rc;
    const struct iog_job *jb = &s->jobs[job];
    memset(out, 0, sizeof(*out));
    out->struct_size = sizeof(*out);
    out->nfiles = jb->nfiles;
    out->coverage_chunk = jb->coverage_chunk;
    out->coverage_total = jb->coverage_total;
    out->coverage_touched = coverage_touched(jb);

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
    return rc;
}

IOG_API int iog_session_histogram(const iog_session *s, uint32_t job, uint32_t dir, uint32_t lat,
                                  uint64_t *counts, size_t ncounts)
{
    if (!counts || ncounts < IOG_HIST_BUCKETS || lat >= IOG_LAT_COUNT)
        return -EINVAL;
    int rc = check_done(s, job, dir);
    if (rc < 0)
        return rc;
    const struct iog_job *jb = &s->jobs[job];
    memset(counts, 0, ncounts * sizeof(*counts));
    for (uint32_t t = 0; t < jb->nworkers; t++) {
        const uint64_t *h = jb->workers[t]->st[dir].hist[lat];
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
    if (!s || !out || out->struct_size != sizeof(*out))
        return -EINVAL;
    /* written once by the background thread, then published: no lock, so
     * that a stuck worker cannot keep the caller from reading it */
    if (!__atomic_load_n(&s->fault_set, __ATOMIC_ACQUIRE))
        return 0;
    *out = s->fault;
    return 1;
}

IOG_API int iog_session_verify(const iog_session *s, uint32_t job, struct iog_verify_stats *out,
                               struct iog_verify_failure *failures, size_t cap)
{
    if (!out || out->struct_size != sizeof(*out) || (!failures && cap > 0))
        return -EINVAL;
    int rc = check_done(s, job, 0);
    if (rc < 0)
        return rc;
    const struct iog_job *jb = &s->jobs[job];
    struct iog_verify_failure recs[IOG_VERIFY_RECORDS];
    uint32_t n = 0;
    memset(out, 0, sizeof(*out));
    out->struct_size = sizeof(*out);
    out->generation = s->generation;
    for (uint32_t t = 0; t < jb->nworkers; t++)
        if (jb->workers[t]->verify)
            verify_merge(jb->workers[t]->verify, out, recs, &n);
    out->nrecords = n;
    for (uint32_t i = 0; i < n && i < cap; i++)
        failures[i] = recs[i];
    return (int)n;
}

IOG_API void iog_session_destroy(iog_session *s)
{
    if (!s)
        return;
    PUB_STORE(&s->cancel, 1);
    join_threads(s);
    session_free(s);
}
