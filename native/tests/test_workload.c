/*
 * test_workload.c - the workload language as realized by the engine: block
 * size tables (weights, ranges, alignment), rate limits and their lateness
 * (lag, resp), rate-limited jobs running for their runtime, offset distributions, several files,
 * sync every N writes, invalidate, and the realized counters (queue depth, block sizes, coverage).
 * Statistical checks use tolerances of a few standard deviations of the binomial count they test.
 */
#include <math.h>

#include "test_util.h"

#define SIGMAS 5.0

/* |observed - n p| within SIGMAS binomial standard deviations. */
static int binomial_ok(uint64_t observed, uint64_t n, double p)
{
    double sd = sqrt((double)n * p * (1.0 - p));
    double diff = fabs((double)observed - (double)n * p);
    if (diff > SIGMAS * sd + 1.0) {
        fprintf(stderr, "observed %llu of %llu, expected p=%.4f (%.1f sd off)\n",
                (unsigned long long)observed, (unsigned long long)n, p, diff / (sd ? sd : 1));
        return 0;
    }
    return 1;
}

static uint64_t percentile(iog_session *s, uint32_t dir, uint32_t lat, double p)
{
    static uint64_t counts[IOG_HIST_BUCKETS];
    if (iog_session_histogram(s, 0, dir, lat, counts, IOG_HIST_BUCKETS) < 0)
        return 0;
    uint64_t total = 0, seen = 0, lo, hi;
    for (uint32_t i = 0; i < IOG_HIST_BUCKETS; i++)
        total += counts[i];
    for (uint32_t i = 0; i < IOG_HIST_BUCKETS; i++) {
        seen += counts[i];
        if ((double)seen >= p / 100.0 * (double)total) {
            iog_hist_bounds(i, &lo, &hi);
            return lo;
        }
    }
    return 0;
}

static int job_stats(iog_session *s, struct iog_job_stats *js)
{
    memset(js, 0, sizeof(*js));
    js->struct_size = sizeof(*js);
    return iog_session_job_stats(s, 0, js);
}

static struct iog_job_spec timed_null(uint32_t rw, uint64_t runtime_ns)
{
    struct iog_job_spec j = t_spec("null", rw, 4096, 1 << 30);
    j.flags = IOG_JOB_TIME_BASED;
    j.runtime_ns = runtime_ns;
    return j;
}

static int test_bssplit_shares(void)
{
    /* a count, not a time, ends it: the same sample on a loaded machine */
    struct iog_job_spec j = timed_null(IOG_RW_RANDREAD, 60ull * 1000000000ull);
    j.io_limit_ios = 20000;
    static const uint64_t sizes[3] = {1024, 4096, 16384};
    static const uint32_t weights[3] = {100000, 800000, 100000};
    j.nbs[0] = 3;
    for (int k = 0; k < 3; k++)
        j.bs[0][k] = (struct iog_bs_entry){.lo = sizes[k], .hi = sizes[k], .weight = weights[k]};
    j.numjobs = 2;
    iog_session *s = NULL;
    CHECK(t_run(&j, 1, &s) == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    CHECK_EQ_U64(st.ios, 2 * 20000);
    struct iog_bs_count c[8];
    CHECK(iog_session_bs_counts(s, 0, IOG_DIR_READ, c, 8) == 3);
    uint64_t sum = 0, bytes = 0;
    for (int k = 0; k < 3; k++) {
        CHECK_EQ_U64(c[k].bs, sizes[k]); /* sorted by size */
        CHECK(binomial_ok(c[k].ios, st.ios, weights[k] / 1e6));
        sum += c[k].ios;
        bytes += c[k].ios * c[k].bs;
    }
    CHECK_EQ_U64(sum, st.ios);
    CHECK_EQ_U64(bytes, st.bytes);
    CHECK_EQ_U64(st.bs_other_ios, 0);
    CHECK(iog_session_bs_counts(s, 0, IOG_DIR_SYNC, c, 8) == -EINVAL);
    iog_session_destroy(s);
    return T_PASS;
}

static int test_bsrange_multiples(void)
{
    struct iog_job_spec j = timed_null(IOG_RW_RANDWRITE, 60ull * 1000000000ull);
    j.io_limit_ios = 20000;
    j.bs[1][0] = (struct iog_bs_entry){.lo = 1024, .hi = 8192, .weight = IOG_WEIGHT_TOTAL};
    iog_session *s = NULL;
    CHECK(t_run(&j, 1, &s) == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_WRITE, &st) == 0);
    struct iog_bs_count c[IOG_BS_TABLE_MAX];
    CHECK(iog_session_bs_counts(s, 0, IOG_DIR_WRITE, c, IOG_BS_TABLE_MAX) == 8);
    for (int k = 0; k < 8; k++) {
        CHECK_EQ_U64(c[k].bs, 1024u * (k + 1));
        CHECK(binomial_ok(c[k].ios, st.ios, 1.0 / 8));
    }
    iog_session_destroy(s);
    return T_PASS;
}

static int test_blockalign(void)
{
    /* 512-byte requests on 4 KiB boundaries over 64 KiB: coverage chunks are
     * 512 bytes, so only the first chunk of each 4 KiB block is touched */
    struct iog_job_spec j = t_spec("null", IOG_RW_RANDREAD, 512, 64 << 10);
    j.flags = IOG_JOB_TIME_BASED;
    /* 5000 draws over at most 128 chunks: one is missed with probability
     * below 128 * (127/128)^5000, about 1e-15; a count, not a time, ends it */
    j.runtime_ns = 60ull * 1000000000ull;
    j.io_limit_ios = 5000;
    j.blockalign[0] = 4096;
    iog_session *s = NULL;
    CHECK(t_run(&j, 1, &s) == 0);
    struct iog_job_stats js;
    CHECK(job_stats(s, &js) == 0);
    CHECK_EQ_U64(js.coverage_chunk, 512);
    CHECK_EQ_U64(js.coverage_total, 128);
    CHECK_EQ_U64(js.coverage_touched, 16);
    iog_session_destroy(s);
    /* default alignment: the block size, every chunk reachable */
    j.blockalign[0] = 0;
    CHECK(t_run(&j, 1, &s) == 0);
    CHECK(job_stats(s, &js) == 0);
    CHECK_EQ_U64(js.coverage_touched, 128);
    iog_session_destroy(s);
    return T_PASS;
}

/* The rate is a ceiling the schedule never passes, shared by the threads and split by
 * direction. How close a run comes to it is the machine's: a thread the scheduler wakes late
 * at the end of the run ends behind its schedule (under a sanitizer beside other work, by
 * more than 3%), so below the rate only a shortfall past `least` (a share of the rate) that
 * a wrong schedule would make fails here; bench/ measures the precision. */
static int rate_met(double iops, double rate, double least)
{
    return iops <= 1.03 * rate && iops >= least * rate;
}

static int test_rate_total_and_split(void)
{
    const uint64_t runtime = 1000000000;
    struct iog_job_spec j = timed_null(IOG_RW_RANDREAD, runtime);
    j.rate_iops[0] = 20000;
    j.numjobs = 2; /* 10000 each: twice that would pass the ceiling */
    iog_session *s = NULL;
    CHECK(t_run(&j, 1, &s) == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    iog_session_destroy(s);
    CHECK(rate_met(st.iops, 20000.0, 0.5));

    j = timed_null(IOG_RW_RANDRW, runtime);
    j.rate_iops[0] = 7000;
    j.rate_iops[1] = 3000;
    CHECK(t_run(&j, 1, &s) == 0);
    struct iog_dir_stats r, w;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &r) == 0);
    CHECK(t_stats(s, 0, IOG_DIR_WRITE, &w) == 0);
    iog_session_destroy(s);
    CHECK(rate_met(r.iops, 7000.0, 0.5));
    CHECK(rate_met(w.iops, 3000.0, 0.5));
    /* the direction due first goes first: a late end shortens both alike */
    CHECK(fabs((double)r.ios / (double)(r.ios + w.ios) - 0.7) < 0.02);

    /* bandwidth: 8 MB/s of 4 KiB requests is 1953 IOPS; poisson gaps */
    j = timed_null(IOG_RW_RANDWRITE, runtime);
    j.rate_bytes[1] = 8000000;
    j.rate_process = IOG_RATE_POISSON;
    CHECK(t_run(&j, 1, &s) == 0);
    CHECK(t_stats(s, 0, IOG_DIR_WRITE, &w) == 0);
    double want = 8000000.0 / 4096.0;
    CHECK(fabs((double)w.ios - want) < SIGMAS * sqrt(want));
    iog_session_destroy(s);
    return T_PASS;
}

static int test_stall_shows_in_resp(void)
{
    /* a 10000 IOPS schedule with a 100 ms pause every 2000 requests: the
     * requests due during a pause are late, lat does not see it */
    struct iog_job_spec j = timed_null(IOG_RW_RANDREAD, 1000000000);
    j.rate_iops[0] = 10000;
    j.thinktime_ns = 100000000;
    j.thinktime_blocks = 2000;
    iog_session *s = NULL;
    CHECK(t_run(&j, 1, &s) == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    CHECK_EQ_U64(st.lat[IOG_LAT_RESP].count, st.ios);
    CHECK_EQ_U64(st.lat[IOG_LAT_LAG].count, st.ios);
    CHECK(st.lat[IOG_LAT_RESP].max_ns >= 90000000);
    CHECK(st.lat[IOG_LAT_LAT].max_ns < 20000000);
    CHECK(percentile(s, IOG_DIR_READ, IOG_LAT_RESP, 99) >= 50000000);
    CHECK(percentile(s, IOG_DIR_READ, IOG_LAT_LAT, 99) < 1000000);
    CHECK(percentile(s, IOG_DIR_READ, IOG_LAT_LAG, 99) >= 50000000);
    /* the schedule is not abandoned: the requests due during the pauses still go (without
     * them, a third of the run's would be lost) */
    CHECK(rate_met(st.iops, 10000.0, 0.85));
    struct iog_interval v[4];
    int n = iog_session_series(s, 0, IOG_DIR_READ, v, 4);
    CHECK(n >= 1);
    CHECK(v[0].resp_p99_ns >= v[0].lat_p99_ns && v[0].resp_mean_ns >= v[0].lat_mean_ns);
    iog_session_destroy(s);
    return T_PASS;
}

static int test_no_rate_resp_is_lat(void)
{
    struct iog_job_spec j = t_spec("null", IOG_RW_RANDREAD, 4096, 4096 * 10000);
    iog_session *s = NULL;
    CHECK(t_run(&j, 1, &s) == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    CHECK_EQ_U64(st.lat[IOG_LAT_LAG].max_ns, 0);
    CHECK(st.lat[IOG_LAT_RESP].mean_ns == st.lat[IOG_LAT_LAT].mean_ns);
    /* sync engines: one request at a time */
    CHECK_EQ_U64(st.qd_samples, st.ios);
    CHECK_EQ_U64(st.qd_sum, st.ios);
    CHECK_EQ_U64(st.qd_hist[0], st.ios);
    iog_session_destroy(s);
    return T_PASS;
}

static int test_psync_rate_resp(void)
{
    char path[IOG_PATH_MAX];
    CHECK(t_temp_path(path, sizeof(path)) == 0);
    struct iog_job_spec j = t_spec("psync", IOG_RW_RANDRW, 4096, 1 << 20);
    j.flags = IOG_JOB_TIME_BASED;
    j.runtime_ns = 300000000;
    j.rate_iops[0] = 2000;
    j.rate_iops[1] = 1000;
    strcpy(j.filename, path);
    iog_session *s = NULL;
    int rc = t_run(&j, 1, &s);
    unlink(path);
    CHECK(rc == 0);
    for (uint32_t d = 0; d < IOG_DATA_DIRS; d++) {
        struct iog_dir_stats st;
        CHECK(t_stats(s, 0, d, &st) == 0);
        CHECK(st.ios > 0 && st.errors == 0);
        CHECK(st.lat[IOG_LAT_RESP].mean_ns >= st.lat[IOG_LAT_LAT].mean_ns);
        CHECK(st.lat[IOG_LAT_RESP].max_ns >= st.lat[IOG_LAT_LAT].max_ns);
        double want = d == IOG_DIR_READ ? 2000 : 1000;
        CHECK(rate_met(st.iops, want, 0.5));
    }
    iog_session_destroy(s);
    return T_PASS;
}

/* A rate-limited job of `engine` at 4 IOPS for 1 s (time based, or with a
 * size it does not finish): its due times are 0, 0.25, 0.5 and 0.75 s, the
 * next one is at the end of the runtime, and the job still runs until then,
 * so 4 requests over at least 1 s (4 IOPS, not 4 over 0.75 s). */
static int rate_runs_for_runtime(const char *engine, uint32_t flags)
{
    char path[IOG_PATH_MAX];
    CHECK(t_temp_path_in(path, sizeof(path), "IOGATE_TEST_DISK_DIR", "/var/tmp") == 0);
    struct iog_job_spec j = t_spec(engine, IOG_RW_RANDWRITE, 4096, 1 << 20);
    j.flags = flags;
    j.runtime_ns = 1000000000;
    j.rate_iops[IOG_DIR_WRITE] = 4;
    j.iodepth = strcmp(engine, "io_uring") == 0 ? 4 : 1;
    if (strcmp(engine, "null") != 0)
        strcpy(j.filename, path);
    iog_session *s = NULL;
    int rc = t_run(&j, 1, &s);
    unlink(path);
    if (strcmp(engine, "io_uring") == 0 && (rc == -ENOSYS || rc == -EPERM)) {
        iog_session_destroy(s);
        return T_SKIP;
    }
    CHECK(rc == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_WRITE, &st) == 0);
    CHECK_EQ_U64(st.errors, 0);
    CHECK_EQ_U64(st.ios, 4);
    CHECK(st.runtime_ns >= j.runtime_ns);
    iog_session_destroy(s);
    return T_PASS;
}

static int test_rate_runs_for_runtime(void)
{
    /* the synchronous loop and the asynchronous one */
    CHECK(rate_runs_for_runtime("null", IOG_JOB_TIME_BASED) == T_PASS);
    CHECK(rate_runs_for_runtime("null", 0) == T_PASS);
    int rc = rate_runs_for_runtime("io_uring", IOG_JOB_TIME_BASED);
    if (rc != T_PASS)
        return rc;
    return rate_runs_for_runtime("io_uring", 0);
}

/* A rate-limited job that issues its whole size before the runtime ends
 * stops then: 2 requests of its 8 KiB. */
static int test_rate_size_done_stops(void)
{
    struct iog_job_spec j = t_spec("null", IOG_RW_WRITE, 4096, 8192);
    j.runtime_ns = 1000000000;
    j.rate_iops[IOG_DIR_WRITE] = 4;
    iog_session *s = NULL;
    CHECK(t_run(&j, 1, &s) == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_WRITE, &st) == 0);
    CHECK_EQ_U64(st.ios, 2);
    iog_session_destroy(s);
    return T_PASS;
}

/* Fraction of chunks touched by a one-pass random read of n 4 KiB blocks. */
static int coverage_of(uint32_t dist, double param, double *frac)
{
    const uint64_t n = 20000;
    struct iog_job_spec j = t_spec("null", IOG_RW_RANDREAD, 4096, 4096 * n);
    j.dist = dist;
    j.dist_param = param;
    iog_session *s = NULL;
    CHECK(t_run(&j, 1, &s) == 0);
    struct iog_job_stats js;
    CHECK(job_stats(s, &js) == 0);
    *frac = (double)js.coverage_touched / (double)js.coverage_total;
    iog_session_destroy(s);
    return T_PASS;
}

static int test_distributions_concentrate(void)
{
    double uni, zipf, pareto, normal;
    CHECK(coverage_of(IOG_DIST_UNIFORM, 0, &uni) == T_PASS);
    /* n draws over n blocks with replacement touch 1 - 1/e of them */
    CHECK(fabs(uni - (1.0 - exp(-1.0))) < 0.02);
    CHECK(coverage_of(IOG_DIST_ZIPF, 1.2, &zipf) == T_PASS);
    CHECK(coverage_of(IOG_DIST_PARETO, 0.2, &pareto) == T_PASS);
    CHECK(coverage_of(IOG_DIST_NORMAL, 5.0, &normal) == T_PASS);
    fprintf(stderr, "coverage uniform %.3f zipf %.3f pareto %.3f normal %.3f\n", uni, zipf, pareto,
            normal);
    CHECK(zipf < 0.5 * uni);
    CHECK(pareto < 0.7 * uni);
    CHECK(normal < 0.5 * uni);
    return T_PASS;
}

static int test_zoned_share(void)
{
    /* zone 0: half the accesses on 100 of 1,000,000 blocks (all touched);
     * zone 1: the other half, rarely on the same block twice, so the
     * touched count tells how many accesses zone 1 got */
    const uint64_t blocks = 1000000;
    struct iog_job_spec j = t_spec("null", IOG_RW_RANDREAD, 512, 512 * blocks);
    j.dist = IOG_DIST_ZONED;
    j.nzones = 2;
    j.zones[0] = (struct iog_zone){500000, 100};
    j.zones[1] = (struct iog_zone){500000, 999900};
    j.flags = IOG_JOB_TIME_BASED;
    j.runtime_ns = 60ull * 1000000000ull;
    j.io_limit_ios = 8000; /* a count ends it: zone 0 covered for sure, on any machine */
    iog_session *s = NULL;
    CHECK(t_run(&j, 1, &s) == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    CHECK_EQ_U64(st.ios, 8000);
    struct iog_job_stats js;
    CHECK(job_stats(s, &js) == 0);
    CHECK_EQ_U64(js.coverage_chunk, 512);
    /* zone 1 got k accesses over m blocks: expected distinct m (1 - e^(-k/m)) */
    double m = 999900.0;
    double distinct1 = (double)js.coverage_touched - 100.0;
    CHECK(distinct1 > 0 && distinct1 < m);
    double k = -m * log(1.0 - distinct1 / m);
    CHECK(binomial_ok((uint64_t)llround(k), st.ios, 0.5));
    iog_session_destroy(s);
    return T_PASS;
}

static int test_sequential_coverage_full(void)
{
    struct iog_job_spec j = t_spec("null", IOG_RW_WRITE, 4096, 3 << 20);
    iog_session *s = NULL;
    CHECK(t_run(&j, 1, &s) == 0);
    struct iog_job_stats js;
    CHECK(job_stats(s, &js) == 0);
    CHECK_EQ_U64(js.nfiles, 1);
    CHECK(js.coverage_total > 0);
    CHECK_EQ_U64(js.coverage_touched, js.coverage_total);
    iog_session_destroy(s);
    return T_PASS;
}

/* Requests of 24 coverage chunks (12 KiB of 512 B chunks) start at every
 * bit position of the bitmap's words and span word boundaries: a pass of
 * 86 writes over 1 MiB touches the 2040 chunks of the first 85, the 86th
 * wrapping to the start. */
static int test_coverage_spanning_words(void)
{
    struct iog_job_spec j = t_spec("null", IOG_RW_WRITE, 12288, 1 << 20);
    iog_session *s = NULL;
    CHECK(t_run(&j, 1, &s) == 0);
    struct iog_job_stats js;
    CHECK(job_stats(s, &js) == 0);
    CHECK_EQ_U64(js.coverage_chunk, 512);
    CHECK_EQ_U64(js.coverage_total, 2048);
    CHECK_EQ_U64(js.coverage_touched, 2040);
    iog_session_destroy(s);
    return T_PASS;
}

static int test_sync_every(void)
{
    struct iog_job_spec j = t_spec("null", IOG_RW_RANDWRITE, 4096, 4096 * 1000);
    j.sync_kind = IOG_SYNC_FSYNC;
    j.sync_every = 7;
    iog_session *s = NULL;
    CHECK(t_run(&j, 1, &s) == 0);
    struct iog_dir_stats w, y;
    CHECK(t_stats(s, 0, IOG_DIR_WRITE, &w) == 0);
    CHECK(t_stats(s, 0, IOG_DIR_SYNC, &y) == 0);
    CHECK_EQ_U64(w.ios, 1000);
    CHECK_EQ_U64(y.ios, 1000 / 7);
    CHECK_EQ_U64(y.bytes, 0);
    CHECK_EQ_U64(y.lat[IOG_LAT_SLAT].max_ns, 0);
    iog_session_destroy(s);

    /* io_uring on a file: everything in flight completes before each sync */
    char path[IOG_PATH_MAX];
    CHECK(t_temp_path(path, sizeof(path)) == 0);
    j = t_spec("io_uring", IOG_RW_RANDWRITE, 4096, 4096 * 256);
    j.iodepth = 8;
    j.sync_kind = IOG_SYNC_FDATASYNC;
    j.sync_every = 10;
    strcpy(j.filename, path);
    int rc = t_run(&j, 1, &s);
    unlink(path);
    if (rc == -ENOSYS || rc == -EPERM) {
        iog_session_destroy(s);
        return T_SKIP;
    }
    CHECK(rc == 0);
    CHECK(t_stats(s, 0, IOG_DIR_WRITE, &w) == 0);
    CHECK(t_stats(s, 0, IOG_DIR_SYNC, &y) == 0);
    CHECK_EQ_U64(w.ios, 256);
    CHECK_EQ_U64(y.ios, 25);
    CHECK(y.lat[IOG_LAT_CLAT].min_ns > 0);
    CHECK(y.lat[IOG_LAT_RESP].mean_ns == y.lat[IOG_LAT_CLAT].mean_ns);
    iog_session_destroy(s);
    return T_PASS;
}

static int test_several_files(void)
{
    char a[IOG_PATH_MAX], b[IOG_PATH_MAX];
    CHECK(t_temp_path(a, sizeof(a)) == 0);
    CHECK(t_temp_path(b, sizeof(b)) == 0);
    struct iog_job_spec j = t_spec("psync", IOG_RW_WRITE, 4096, 2 << 20);
    memset(j.filename, 0, sizeof(j.filename));
    strcpy(j.filename, a);
    strcpy(j.filename + strlen(a) + 1, b);
    j.flags = IOG_JOB_INVALIDATE;
    iog_session *s = NULL;
    int rc = t_run(&j, 1, &s);
    struct stat_pair {
        off_t a, b;
    } sz = {-1, -1};
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    if (fa && fseeko(fa, 0, SEEK_END) == 0)
        sz.a = ftello(fa);
    if (fb && fseeko(fb, 0, SEEK_END) == 0)
        sz.b = ftello(fb);
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    unlink(a);
    unlink(b);
    CHECK(rc == 0);
    /* each file holds its half of the region */
    CHECK_EQ_U64(sz.a, 1 << 20);
    CHECK_EQ_U64(sz.b, 1 << 20);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_WRITE, &st) == 0);
    CHECK_EQ_U64(st.ios, 512);
    CHECK_EQ_U64(st.errors, 0);
    /* one sequential pass, requests in turn: each file's half is written
     * once, so every chunk of both is touched */
    struct iog_job_stats js;
    CHECK(job_stats(s, &js) == 0);
    CHECK_EQ_U64(js.nfiles, 2);
    CHECK_EQ_U64(js.coverage_touched, js.coverage_total);
    iog_session_destroy(s);
    return T_PASS;
}

/* On a device that completes asynchronously (O_DIRECT on a disk-backed
 * file), submissions see several requests in flight. Every ready completion
 * is reaped at once (so that clat is not inflated), then the slots are
 * refilled one by one: depths climb from what is left in flight up to
 * iodepth, so the mean sits between iodepth / 2 and iodepth. */
static int test_uring_queue_depth(void)
{
    char path[IOG_PATH_MAX];
    CHECK(t_temp_path_in(path, sizeof(path), "IOGATE_TEST_DISK_DIR", "/var/tmp") == 0);
    struct iog_job_spec j = t_spec("io_uring", IOG_RW_RANDREAD, 4096, 4 << 20);
    j.iodepth = 8;
    j.flags = IOG_JOB_TIME_BASED | IOG_JOB_DIRECT;
    j.runtime_ns = 100000000;
    strcpy(j.filename, path);
    iog_session *s = NULL;
    int rc = t_run(&j, 1, &s);
    unlink(path);
    if (rc == -ENOSYS || rc == -EPERM || rc == -EINVAL) { /* no io_uring or no O_DIRECT */
        iog_session_destroy(s);
        return T_SKIP;
    }
    CHECK(rc == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    CHECK(st.qd_samples > 0);
    uint64_t hist = 0;
    for (int b = 0; b < IOG_QD_BUCKETS; b++)
        hist += st.qd_hist[b];
    CHECK_EQ_U64(hist, st.qd_samples);
    double mean = (double)st.qd_sum / (double)st.qd_samples;
    fprintf(stderr, "io_uring qd mean %.2f\n", mean);
    /* more than one in flight on average, never more than iodepth (how many more
     * depends on the machine's load, not on the engine) */
    CHECK(mean > 1.0 && mean <= j.iodepth);
    CHECK(st.qd_hist[3] > 0);       /* depth 8 is bucket [8, 15] */
    CHECK_EQ_U64(st.qd_hist[4], 0); /* never above iodepth */
    iog_session_destroy(s);
    return T_PASS;
}

int main(void)
{
    int result = T_PASS;
    RUN(test_bssplit_shares, result);
    RUN(test_bsrange_multiples, result);
    RUN(test_blockalign, result);
    RUN(test_rate_total_and_split, result);
    RUN(test_stall_shows_in_resp, result);
    RUN(test_no_rate_resp_is_lat, result);
    RUN(test_psync_rate_resp, result);
    RUN(test_rate_runs_for_runtime, result);
    RUN(test_rate_size_done_stops, result);
    RUN(test_distributions_concentrate, result);
    RUN(test_zoned_share, result);
    RUN(test_sequential_coverage_full, result);
    RUN(test_coverage_spanning_words, result);
    RUN(test_sync_every, result);
    RUN(test_several_files, result);
    RUN(test_uring_queue_depth, result);
    FINISH(result);
}
