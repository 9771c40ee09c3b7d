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
 * CPU budget of ANALYSIS_BUDGET_PCT (3%) of one CPU, kept as a token bucket
 * of thread CPU time (CLOCK_THREAD_CPUTIME_ID): wall time adds 3% of itself
 * to the allowance, up to ANALYSIS_BURST_NS (20 ms, also the allowance at
 * the start, so that a short run gets its sample measured too), every sample
 * takes the CPU time it used, and an allowance below zero is slept off. Over
 * any stretch of T ns it uses at most 0.03 T + 20 ms of CPU. When it falls
 * behind, captures find no free slot and are skipped (counted) by the
 * workers, which never wait. Idle, it looks at the rings every
 * ANALYSIS_POLL_NS.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "session.h"

#define ANALYSIS_BUDGET_PCT 3
#define ANALYSIS_NICE       19
#define ANALYSIS_BURST_NS   20000000ll /* 20 ms of CPU */
#define ANALYSIS_POLL_NS    10000000ull /* 10 ms */

struct analysis {
    struct data_writer **writers;
    size_t nwriters;
    struct data_analyser *an;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond; /* CLOCK_MONOTONIC; signalled by analysis_finish */
    int stop;            /* under lock */
    uint64_t cpu_mark;   /* thread CPU time at the last accounting */
    uint64_t wall_mark;  /* monotonic time at the last accounting */
    int64_t allowance;   /* CPU ns the thread may still use, at most ANALYSIS_BURST_NS */
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
        n += (size_t)data_analyse_one(a->writers[i], a->an);
    return n;
}

/* After a sample: the CPU it used leaves the allowance, the wall time since
 * the last accounting adds its share; returns how long to sleep (ns) to get
 * back to an allowance of zero. */
static uint64_t account(struct analysis *a)
{
    uint64_t cpu = thread_cpu_ns(), now = clock_now_ns();
    int64_t earned = (int64_t)((now - a->wall_mark) / 100 * ANALYSIS_BUDGET_PCT);
    a->allowance += earned - (int64_t)(cpu - a->cpu_mark);
    if (a->allowance > ANALYSIS_BURST_NS)
        a->allowance = ANALYSIS_BURST_NS;
    a->cpu_mark = cpu;
    a->wall_mark = now;
    if (a->allowance >= 0)
        return 0;
    return (uint64_t)(-a->allowance) / ANALYSIS_BUDGET_PCT * 100;
}

static void *analysis_main(void *arg)
{
    struct analysis *a = arg;
    /* a lower priority for this thread alone (a tid is a thread on Linux);
     * failing to lower it changes nothing else */
    (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), ANALYSIS_NICE);
    a->cpu_mark = thread_cpu_ns();
    a->wall_mark = clock_now_ns();
    a->allowance = ANALYSIS_BURST_NS;
    int stopped = 0;
    while (!stopped) {
        int any = 0;
        for (size_t i = 0; i < a->nwriters && !stopped; i++) {
            if (!data_analyse_one(a->writers[i], a->an))
                continue;
            any = 1;
            uint64_t pause = account(a);
            if (pause)
                stopped = wait_until(a, clock_now_ns() + pause);
        }
        if (!any && !stopped)
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
