/*
 * test_late_start.c - a job's runtime counts from its own start: a time-based
 * job whose threads the scheduler runs late (hundreds of threads created one
 * after another, while the test's own threads keep every CPU busy) still
 * issues, with ramp and start delay alike. The assertions are on counted
 * facts only (every job did I/O; with a limit of one request a thread, the
 * job's count is its thread count), never on wall time: a library that sets
 * every job's stop time before it creates the threads fails them for the
 * threads it created after that time.
 */
#include <pthread.h>

#include "test_util.h"

#define MS       1000000ull
#define HOGS_MAX 64

/* Threads per test, divided under a sanitizer: its runtime makes creating a
 * thread ten or more times slower, so a quarter of them still starts long
 * after the first job's millisecond is over, in a quarter of the time. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FEWER 4
#else
#define FEWER 1
#endif

/* Busy threads, one per online CPU, spinning until told to stop. */
struct hogs {
    pthread_t t[HOGS_MAX];
    int n;
    int stop;
};

static void *hog_main(void *arg)
{
    struct hogs *h = arg;
    while (!__atomic_load_n(&h->stop, __ATOMIC_RELAXED))
        ;
    return NULL;
}

static void hogs_start(struct hogs *h)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    h->n = 0;
    h->stop = 0;
    for (long i = 0; i < cpus && i < HOGS_MAX; i++)
        if (pthread_create(&h->t[h->n], NULL, hog_main, h) == 0)
            h->n++;
}

static void hogs_stop(struct hogs *h)
{
    __atomic_store_n(&h->stop, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < h->n; i++)
        pthread_join(h->t[i], NULL);
}

/* Runs njobs specs beside the hogs. */
static int run_hogged(const struct iog_job_spec *jobs, uint32_t njobs, iog_session **s)
{
    struct hogs h;
    hogs_start(&h);
    int rc = t_run(jobs, njobs, s);
    hogs_stop(&h);
    return rc;
}

static struct iog_job_spec short_job(uint64_t runtime_ns)
{
    struct iog_job_spec j = t_spec("null", IOG_RW_READ, 4096, 1 << 20);
    j.flags = IOG_JOB_TIME_BASED;
    j.runtime_ns = runtime_ns;
    return j;
}

/* Many 1 ms jobs in one session: the last of their threads exists long after
 * the first one's millisecond is over. Every job reads, for at least its
 * runtime. */
static int test_every_job_issues(void)
{
    enum { N = 600 / FEWER };
    static struct iog_job_spec j[N];
    for (uint32_t k = 0; k < N; k++)
        j[k] = short_job(1 * MS);
    iog_session *s = NULL;
    CHECK(run_hogged(j, N, &s) == 0);
    uint32_t idle = 0;
    for (uint32_t k = 0; k < N; k++) {
        struct iog_dir_stats st;
        CHECK(t_stats(s, k, IOG_DIR_READ, &st) == 0);
        CHECK_EQ_U64(st.errors, 0);
        CHECK(st.runtime_ns >= j[k].runtime_ns);
        idle += st.ios == 0;
    }
    CHECK_EQ_U64(idle, 0);
    iog_session_destroy(s);
    return T_PASS;
}

/* The threads of one job: with one request a thread, the job counts one
 * request per thread, however late each of them got the CPU. */
static int test_every_thread_issues(void)
{
    struct iog_job_spec j = short_job(1 * MS);
    j.numjobs = 256 / FEWER;
    j.io_limit_ios = 1;
    iog_session *s = NULL;
    CHECK(run_hogged(&j, 1, &s) == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    CHECK_EQ_U64(st.ios, j.numjobs);
    CHECK_EQ_U64(st.errors, 0);
    iog_session_destroy(s);
    return T_PASS;
}

/* Start delay and ramp: jobs of two delays (the jobs of a delay start
 * together), each with a ramp, count a request of every thread after it.
 * Time-based without a request limit: the ramp's requests count toward a
 * limit, so one request a thread could all be spent in the ramp. */
static int test_delay_and_ramp_count_from_the_start(void)
{
    enum { N = 200 / FEWER };
    static struct iog_job_spec j[N];
    for (uint32_t k = 0; k < N; k++) {
        j[k] = short_job(1 * MS);
        j[k].numjobs = 2;
        j[k].ramp_ns = 1 * MS;
        j[k].start_delay_ns = k % 2 ? 2 * MS : 0;
    }
    iog_session *s = NULL;
    CHECK(run_hogged(j, N, &s) == 0);
    for (uint32_t k = 0; k < N; k++) {
        struct iog_dir_stats st;
        CHECK(t_stats(s, k, IOG_DIR_READ, &st) == 0);
        CHECK(st.ios >= j[k].numjobs);
        CHECK_EQ_U64(st.errors, 0);
    }
    iog_session_destroy(s);
    return T_PASS;
}

/* A job whose first request is due after its runtime (a rate schedule) still
 * issues nothing: only a late thread is let through, not one with nothing due. */
static int test_nothing_due_issues_nothing(void)
{
    struct iog_job_spec j = short_job(1 * MS);
    j.numjobs = 2;
    j.rate_iops[IOG_DIR_READ] = 2; /* a request a second each, thread 1's due after 0.5 s */
    iog_session *s = NULL;
    CHECK(t_run(&j, 1, &s) == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    CHECK_EQ_U64(st.ios, 1); /* thread 0's, due at the start */
    iog_session_destroy(s);
    return T_PASS;
}

int main(void)
{
    int result = T_PASS;
    RUN(test_every_job_issues, result);
    RUN(test_every_thread_issues, result);
    RUN(test_delay_and_ramp_count_from_the_start, result);
    RUN(test_nothing_due_issues_nothing, result);
    FINISH(result);
}
