/*
 * analysis.c - the analysis thread of a session: it owns the measurement of
 * written data off the I/O path. Workers only capture samples of their
 * completed writes into their data writer's ring (data.c); this thread drains
 * every writer's ring, one sample of each writer in turn, and measures them
 * (zlib compressed size, block hashes) with its own deflate stream. It exists
 * only when some job writes, from iog_session_start until the background
 * thread ends the run (analysis_finish), which makes it measure everything
 * still captured, at full speed, before results can be read: that last part
 * is bounded by the rings (at most 1 MiB per writer, 32 MiB per session).
 *
 * Cost bound. While the run goes on, the thread runs at nice 19 and within a
 * CPU budget of 3% of one CPU, kept as two token buckets of thread CPU time
 * (CLOCK_THREAD_CPUTIME_ID): one of 2% for samples it compresses (and
 * hashes), one of 1% for samples it only hashes. Wall time adds its share to
 * each allowance, up to ANALYSIS_BURST_NS (10 ms each, also the allowance at
 * the start, so that a short run gets its sample measured too), and every
 * sample takes the CPU time it used from the bucket it was measured under. A
 * waiting sample is compressed while the compression allowance is not
 * negative, else only hashed while the hashing allowance is not, else the
 * thread sleeps until one of them is back to zero. Over any stretch of T ns
 * it uses at most 0.03 T + 20 ms of CPU. Hashing costs a small fraction of
 * compressing, so nearly every captured sample counts for the dedupe figure
 * while the compression ratio rests on as many as 2% of a CPU can compress.
 * When even hashing falls behind, captures find no free slot and are
 * skipped (counted) by the workers, which never wait. Idle, it looks at the
 * rings every ANALYSIS_POLL_NS.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "internal.h"

#define ANALYSIS_ZLIB_PCT 2 /* compressed (and hashed) samples */
#define ANALYSIS_HASH_PCT 1 /* samples only hashed */
#define ANALYSIS_NICE     19
#define ANALYSIS_BURST_NS 10000000ll  /* 10 ms of CPU, per bucket */
#define ANALYSIS_POLL_NS  10000000ull /* 10 ms */

struct analysis {
    struct data_writer **writers;
    size_t nwriters;
    struct data_analyser *an;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond; /* CLOCK_MONOTONIC; signalled by analysis_finish */
    int stop;            /* under lock */
    uint64_t wall_mark;  /* monotonic time at the last accounting */
    /* CPU ns the thread may still use, at most ANALYSIS_BURST_NS each */
    int64_t zlib_allowance, hash_allowance;
};

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Waits until `t` (absolute, monotonic) or a stop; 1 when stopped. */
static int wait_until(struct analysis *a, uint64_t t)
{
    struct timespec ts = clock_to_timespec(t);
    pthread_mutex_lock(&a->lock);
    while (!a->stop && clock_now_ns() < t)
        if (pthread_cond_timedwait(&a->cond, &a->lock, &ts) == ETIMEDOUT)
            break;
    int stop = a->stop;
    pthread_mutex_unlock(&a->lock);
    return stop;
}

/* One sample of every writer that has one waiting; how many. */
static size_t analyse_round(struct analysis *a)
{
    size_t n = 0;
    for (size_t i = 0; i < a->nwriters; i++)
        n += (size_t)data_analyse_one(a->writers[i], a->an, 1);
    return n;
}

/* Adds to each allowance its share of the wall time since the last call. */
static void earn(struct analysis *a)
{
    uint64_t now = clock_now_ns();
    uint64_t dt = now - a->wall_mark;
    a->wall_mark = now;
    a->zlib_allowance += (int64_t)(dt / 100 * ANALYSIS_ZLIB_PCT);
    a->hash_allowance += (int64_t)(dt / 100 * ANALYSIS_HASH_PCT);
    if (a->zlib_allowance > ANALYSIS_BURST_NS)
        a->zlib_allowance = ANALYSIS_BURST_NS;
    if (a->hash_allowance > ANALYSIS_BURST_NS)
        a->hash_allowance = ANALYSIS_BURST_NS;
}

/* Wall time until the sooner of the two allowances is back to zero. */
static uint64_t until_allowed(const struct analysis *a)
{
    uint64_t z = (uint64_t)(-a->zlib_allowance) / ANALYSIS_ZLIB_PCT * 100;
    uint64_t h = (uint64_t)(-a->hash_allowance) / ANALYSIS_HASH_PCT * 100;
    return (z < h ? z : h) + 1;
}

/* Measures the next sample of `dw` under whichever budget allows it (see the
 * top comment): 1 when one was measured, 0 when none is waiting, -1 when
 * neither budget allows any now. */
static int analyse_within_budget(struct analysis *a, struct data_writer *dw)
{
    earn(a);
    int compress = a->zlib_allowance >= 0;
    if (!compress && a->hash_allowance < 0)
        return -1;
    uint64_t cpu = thread_cpu_ns();
    if (!data_analyse_one(dw, a->an, compress))
        return 0;
    int64_t used = (int64_t)(thread_cpu_ns() - cpu);
    if (compress)
        a->zlib_allowance -= used;
    else
        a->hash_allowance -= used;
    return 1;
}

static void *analysis_main(void *arg)
{
    struct analysis *a = arg;
    /* a lower priority for this thread alone (a tid is a thread on Linux);
     * failing to lower it changes nothing else */
    (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), ANALYSIS_NICE);
    a->wall_mark = clock_now_ns();
    a->zlib_allowance = a->hash_allowance = ANALYSIS_BURST_NS;
    int stopped = 0;
    while (!stopped) {
        int any = 0, held = 0;
        for (size_t i = 0; i < a->nwriters && !stopped; i++) {
            int rc = analyse_within_budget(a, a->writers[i]);
            any |= rc > 0;
            held |= rc < 0;
        }
        if (held)
            stopped = wait_until(a, clock_now_ns() + until_allowed(a));
        else if (!any)
            stopped = wait_until(a, clock_now_ns() + ANALYSIS_POLL_NS);
    }
    /* the run is over: whatever was captured is measured, without a budget */
    while (analyse_round(a) > 0)
        ;
    return NULL;
}

static void analysis_free(struct analysis *a)
{
    data_analyser_destroy(a->an);
    free(a->writers);
    free(a);
}

int analysis_start(struct iog_session *s, char *err, size_t errlen)
{
    s->analysis = NULL;
    size_t n = 0;
    for (uint32_t j = 0; j < s->njobs; j++)
        for (uint32_t t = 0; t < s->jobs[j].nworkers; t++)
            n += s->jobs[j].workers[t]->data != NULL;
    if (n == 0)
        return 0; /* nothing writes: no thread */
    struct analysis *a = calloc(1, sizeof(*a));
    if (!a)
        goto nomem;
    a->writers = calloc(n, sizeof(*a->writers));
    if (!a->writers || data_analyser_create(DATA_SAMPLE_CAP, &a->an) < 0) {
        analysis_free(a);
        goto nomem;
    }
    for (uint32_t j = 0; j < s->njobs; j++)
        for (uint32_t t = 0; t < s->jobs[j].nworkers; t++)
            if (s->jobs[j].workers[t]->data)
                a->writers[a->nwriters++] = s->jobs[j].workers[t]->data;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&a->cond, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&a->lock, NULL);
    int rc = pthread_create(&a->thread, NULL, analysis_main, a);
    if (rc != 0) {
        pthread_cond_destroy(&a->cond);
        pthread_mutex_destroy(&a->lock);
        analysis_free(a);
        SET_ERR(err, errlen, "cannot start the analysis thread: %s", strerror(rc));
        return -rc;
    }
    s->analysis = a;
    return 0;

nomem:
    SET_ERR(err, errlen, "out of memory for the analysis of written data");
    return -ENOMEM;
}

void analysis_finish(struct iog_session *s)
{
    struct analysis *a = s->analysis;
    if (!a)
        return;
    pthread_mutex_lock(&a->lock);
    a->stop = 1;
    pthread_cond_broadcast(&a->cond);
    pthread_mutex_unlock(&a->lock);
    pthread_join(a->thread, NULL);
    pthread_cond_destroy(&a->cond);
    pthread_mutex_destroy(&a->lock);
    analysis_free(a);
    s->analysis = NULL;
}
