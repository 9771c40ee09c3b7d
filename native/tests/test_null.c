/*
 * test_null.c - full sessions on the null engine: exact request counts in
 * stats, histograms and series; numjobs; read/write mix; ramp exclusion;
 * prompt cancel; lifecycle errors (double start, busy accessors).
 */
#include "test_util.h"

static uint64_t hist_total(iog_session *s, uint32_t job, uint32_t dir, uint32_t lat)
{
    static uint64_t counts[IOG_HIST_BUCKETS];
    if (iog_session_histogram(s, job, dir, lat, counts, IOG_HIST_BUCKETS) < 0)
        return UINT64_MAX;
    uint64_t total = 0;
    for (uint32_t i = 0; i < IOG_HIST_BUCKETS; i++)
        total += counts[i];
    return total;
}

static uint64_t series_ios(iog_session *s, uint32_t job, uint32_t dir, int *nout)
{
    int n = iog_session_series(s, job, dir, NULL, 0);
    *nout = n;
    if (n <= 0)
        return 0;
    struct iog_interval *v = calloc((size_t)n, sizeof(*v));
    int m = iog_session_series(s, job, dir, v, (size_t)n);
    uint64_t total = 0, prev_end = 0;
    for (int i = 0; i < m; i++) {
        total += v[i].ios;
        if (v[i].end_ns < prev_end)
            total = UINT64_MAX / 2; /* ends must not go backwards */
        prev_end = v[i].end_ns;
    }
    free(v);
    return total;
}

static int test_exact_count(void)
{
    const uint64_t n = 100000;
    struct iog_job_spec j = t_spec("null", IOG_RW_RANDREAD, 4096, 4096 * n);
    iog_session *s = NULL;
    CHECK(t_run(&j, 1, &s) == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    CHECK_EQ_U64(st.ios, n);
    CHECK_EQ_U64(st.bytes, 4096 * n);
    CHECK_EQ_U64(st.errors, 0);
    CHECK_EQ_U64(st.first_errno, 0);
    CHECK(st.runtime_ns > 0);
    CHECK(st.iops > 0);
    for (uint32_t k = 0; k < IOG_LAT_COUNT; k++) {
        CHECK_EQ_U64(st.lat[k].count, n);
        CHECK_EQ_U64(hist_total(s, 0, IOG_DIR_READ, k), n);
        CHECK(st.lat[k].min_ns <= st.lat[k].max_ns);
        CHECK(st.lat[k].mean_ns >= (double)st.lat[k].min_ns);
        CHECK(st.lat[k].mean_ns <= (double)st.lat[k].max_ns);
    }
    CHECK_EQ_U64(st.lat[IOG_LAT_SLAT].max_ns, 0); /* sync engines: slat is 0 */
    CHECK(t_stats(s, 0, IOG_DIR_WRITE, &st) == 0);
    CHECK_EQ_U64(st.ios, 0);
    CHECK_EQ_U64(st.lat[IOG_LAT_LAT].min_ns, 0);
    CHECK_EQ_U64(hist_total(s, 0, IOG_DIR_WRITE, IOG_LAT_LAT), 0);
    int nint;
    CHECK_EQ_U64(series_ios(s, 0, IOG_DIR_READ, &nint), n);
    CHECK(nint >= 1);
    struct iog_progress p = {.struct_size = sizeof(p)};
    CHECK(iog_session_poll(s, &p) == 0);
    CHECK_EQ_U64(p.state, IOG_STATE_DONE);
    CHECK_EQ_U64(p.ios[IOG_DIR_READ], n);
    CHECK_EQ_U64(p.jobs_done, 1);
    iog_session_destroy(s);
    return T_PASS;
}

static int test_numjobs_and_two_jobs(void)
{
    struct iog_job_spec j[2] = {t_spec("null", IOG_RW_READ, 4096, 4096 * 1000),
                                t_spec("null", IOG_RW_WRITE, 512, 512 * 700)};
    j[0].numjobs = 4;
    iog_session *s = NULL;
    CHECK(t_run(j, 2, &s) == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    CHECK_EQ_U64(st.ios, 4000);
    CHECK(t_stats(s, 1, IOG_DIR_WRITE, &st) == 0);
    CHECK_EQ_U64(st.ios, 700);
    CHECK_EQ_U64(st.bytes, 512 * 700);
    CHECK(t_stats(s, 1, IOG_DIR_READ, &st) == 0);
    CHECK_EQ_U64(st.ios, 0);
    CHECK(t_stats(s, 2, IOG_DIR_READ, &st) == -EINVAL);
    CHECK(t_stats(s, 0, IOG_DIR_SYNC, &st) == 0);
    CHECK_EQ_U64(st.ios, 0);
    CHECK(t_stats(s, 0, IOG_DIR_COUNT, &st) == -EINVAL);
    iog_session_destroy(s);
    return T_PASS;
}

static int test_rwmix_share(void)
{
    const uint64_t n = 200000;
    struct iog_job_spec j = t_spec("null", IOG_RW_RANDRW, 4096, 4096 * n);
    j.rwmixread = 70;
    iog_session *s = NULL;
    CHECK(t_run(&j, 1, &s) == 0);
    struct iog_dir_stats r, w;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &r) == 0);
    CHECK(t_stats(s, 0, IOG_DIR_WRITE, &w) == 0);
    CHECK_EQ_U64(r.ios + w.ios, n);
    double share = (double)r.ios / (double)n;
    CHECK(share > 0.68 && share < 0.72);
    iog_session_destroy(s);
    return T_PASS;
}

static int test_time_based_ramp_excluded(void)
{
    struct iog_job_spec j = t_spec("null", IOG_RW_RANDREAD, 4096, 1 << 30);
    j.flags = IOG_JOB_TIME_BASED;
    j.runtime_ns = 200000000;
    j.ramp_ns = 300000000;
    j.interval_ns = 50000000;
    iog_session *s = NULL;
    uint64_t t0 = t_now_ns();
    CHECK(t_run(&j, 1, &s) == 0);
    uint64_t wall = t_now_ns() - t0;
    CHECK(wall >= j.ramp_ns + j.runtime_ns);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    /* counted time is the runtime only, not ramp + runtime */
    CHECK(st.runtime_ns >= j.runtime_ns);
    CHECK(st.runtime_ns < j.runtime_ns + 150000000);
    CHECK(st.ios > 0);
    int nint;
    CHECK_EQ_U64(series_ios(s, 0, IOG_DIR_READ, &nint), st.ios);
    /* boundaries every 50 ms (a late wake-up may fold two into one), no
     * sliver after the last boundary, the final one ends with the run */
    CHECK(nint >= 2 && nint <= 4);
    struct iog_interval v[8];
    int m = iog_session_series(s, 0, IOG_DIR_READ, v, 8);
    CHECK(m == nint);
    for (int i = 0; i + 1 < m; i++) {
        CHECK_EQ_U64(v[i].end_ns % j.interval_ns, 0);
        CHECK(v[i].end_ns < j.runtime_ns);
        CHECK(v[i].ios > 0 && v[i].iops > 0 && v[i].lat_mean_ns > 0);
    }
    CHECK_EQ_U64(v[m - 1].end_ns, st.runtime_ns);
    CHECK(v[m - 1].end_ns - v[m - 2].end_ns >= j.interval_ns);
    /* the rate does not include the ramp: ios over runtime */
    CHECK(st.iops > 0.9 * (double)st.ios * 1e9 / (double)(j.runtime_ns + 150000000));
    iog_session_destroy(s);
    return T_PASS;
}

static int test_cancel_is_prompt(void)
{
    struct iog_job_spec j = t_spec("null", IOG_RW_READ, 4096, 1 << 30);
    j.flags = IOG_JOB_TIME_BASED;
    j.runtime_ns = 600ull * 1000000000ull;
    j.numjobs = 2;
    iog_session *s = NULL;
    char err[IOG_ERR_MAX];
    CHECK(iog_session_create(&j, 1, &s, err, sizeof(err)) == 0);
    CHECK(iog_session_start(s, err, sizeof(err)) == 0);
    CHECK(iog_session_start(s, err, sizeof(err)) == -EALREADY);
    struct iog_progress p = {.struct_size = sizeof(p)};
    do {
        CHECK(iog_session_poll(s, &p) == 0);
    } while (p.ios[IOG_DIR_READ] == 0);
    CHECK(p.state == IOG_STATE_RUNNING);
    /* expected = time before the run clock started + runtime */
    CHECK(p.expected_ns >= j.runtime_ns && p.expected_ns - j.runtime_ns <= p.elapsed_ns);
    CHECK_EQ_U64(p.layout_total, 0);
    CHECK(iog_session_wait(s, 0) == -ETIMEDOUT);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == -EBUSY);
    uint64_t t0 = t_now_ns();
    CHECK(iog_session_cancel(s) == 0);
    CHECK(iog_session_cancel(s) == 0);
    CHECK(iog_session_wait(s, 10ull * 1000000000ull) == 0);
    CHECK(t_now_ns() - t0 < 2000000000ull);
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    CHECK(st.ios > 0);
    CHECK_EQ_U64(st.lat[IOG_LAT_LAT].count, st.ios);
    int nint;
    CHECK_EQ_U64(series_ios(s, 0, IOG_DIR_READ, &nint), st.ios);
    iog_session_destroy(s);
    return T_PASS;
}

static int test_series_while_running(void)
{
    /* A long run cut into 50 ms intervals: the intervals completed so far can be
     * read while it runs, they only grow, and the run goes on meanwhile. */
    struct iog_job_spec j = t_spec("null", IOG_RW_READ, 4096, 1 << 30);
    j.flags = IOG_JOB_TIME_BASED;
    j.runtime_ns = 600ull * 1000000000ull;
    j.interval_ns = 50ull * 1000000ull;
    iog_session *s = NULL;
    CHECK(iog_session_create(&j, 1, &s, NULL, 0) == 0);
    CHECK(iog_session_series(s, 0, IOG_DIR_READ, NULL, 0) == -EINVAL); /* not started */
    CHECK(iog_session_start(s, NULL, 0) == 0);
    struct iog_interval iv[4];
    int n = 0, before = 0;
    while (n < 3) {
        CHECK(iog_session_wait(s, 10ull * 1000000ull) == -ETIMEDOUT); /* still running */
        n = iog_session_series(s, 0, IOG_DIR_READ, iv, 4);
        CHECK(n >= before);
        before = n;
    }
    for (int i = 0; i < 3; i++) {
        CHECK(iv[i].ios > 0);
        CHECK_EQ_U64(iv[i].end_ns, (uint64_t)(i + 1) * j.interval_ns);
    }
    CHECK(iog_session_cancel(s) == 0);
    CHECK(iog_session_wait(s, 10ull * 1000000000ull) == 0);
    iog_session_destroy(s);
    return T_PASS;
}

static int test_destroy_while_running(void)
{
    struct iog_job_spec j = t_spec("null", IOG_RW_READ, 4096, 1 << 30);
    j.flags = IOG_JOB_TIME_BASED;
    j.runtime_ns = 600ull * 1000000000ull;
    iog_session *s = NULL;
    CHECK(iog_session_create(&j, 1, &s, NULL, 0) == 0);
    CHECK(iog_session_start(s, NULL, 0) == 0);
    uint64_t t0 = t_now_ns();
    iog_session_destroy(s);
    CHECK(t_now_ns() - t0 < 2000000000ull);
    return T_PASS;
}

static int test_seed_repeatable_mix(void)
{
    /* same seed, same mix of directions; another seed, another mix */
    uint64_t reads[3];
    for (int i = 0; i < 3; i++) {
        struct iog_job_spec j = t_spec("null", IOG_RW_RANDRW, 4096, 4096 * 10000);
        j.seed = i == 2 ? 99 : 7;
        iog_session *s = NULL;
        CHECK(t_run(&j, 1, &s) == 0);
        struct iog_dir_stats st;
        CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
        reads[i] = st.ios;
        iog_session_destroy(s);
    }
    CHECK_EQ_U64(reads[0], reads[1]);
    CHECK(reads[0] != reads[2]);
    return T_PASS;
}

int main(void)
{
    int result = T_PASS;
    RUN(test_exact_count, result);
    RUN(test_numjobs_and_two_jobs, result);
    RUN(test_rwmix_share, result);
    RUN(test_time_based_ramp_excluded, result);
    RUN(test_cancel_is_prompt, result);
    RUN(test_series_while_running, result);
    RUN(test_destroy_while_running, result);
    RUN(test_seed_repeatable_mix, result);
    FINISH(result);
}
