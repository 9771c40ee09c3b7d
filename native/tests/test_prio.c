/*
 * test_prio.c - I/O priorities: a command priority share is honoured per
 * request by the asynchronous engines (the prioritized requests counted
 * apart, within a binomial tolerance of the share; 0% and 100% exactly),
 * with a latency histogram of their own; the job's priority is what the
 * worker thread runs with, whatever the engine; engines that cannot pass a
 * priority per request are refused a command priority table.
 */
#include <math.h>
#include <sys/syscall.h>

#include "test_util.h"

#define PRIO_BE(level) ((2u << 13) | (level))
#define PRIO_IDLE      (3u << 13)
#define REQUESTS       4000u
#define BS             4096u

static char path[512];

static struct iog_job_spec prio_spec(const char *engine, uint32_t share)
{
    struct iog_job_spec j = t_spec(engine, IOG_RW_RANDREAD, BS, 1u << 20);
    snprintf(j.filename, sizeof(j.filename), "%s", path);
    j.iodepth = 8;
    j.io_limit_bytes = (uint64_t)REQUESTS * BS;
    j.flags = IOG_JOB_NO_LAYOUT;
    j.ncmdprio[IOG_DIR_READ] = 1;
    j.cmdprio[IOG_DIR_READ][0] =
        (struct iog_cmdprio_entry){.bs = 0, .share = share, .ioprio = PRIO_BE(0)};
    return j;
}

/* Runs `engine` with a share (ppm) and checks the prioritized count: exact at
 * 0 and 100%, else within 5 binomial standard deviations. */
static int check_share(const char *engine, uint32_t share)
{
    struct iog_job_spec j = prio_spec(engine, share);
    iog_session *s = NULL;
    CHECK(t_run(&j, 1, &s) == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    CHECK_EQ_U64(st.errors, 0);
    CHECK_EQ_U64(st.ios, REQUESTS);
    double p = share / 1e6, n = (double)st.ios;
    if (share == 0 || share == IOG_WEIGHT_TOTAL) {
        CHECK_EQ_U64(st.prio_ios, share ? st.ios : 0);
    } else {
        double tol = 5.0 * sqrt(n * p * (1.0 - p));
        if (fabs((double)st.prio_ios - n * p) > tol) {
            fprintf(stderr, "%s: %llu of %llu prioritized, expected %.0f +- %.0f\n", engine,
                    (unsigned long long)st.prio_ios, (unsigned long long)st.ios, n * p, tol);
            return T_FAIL;
        }
    }
    CHECK_EQ_U64(st.prio_clat.count, st.prio_ios);
    /* the histogram of the prioritized requests holds exactly them */
    static uint64_t counts[IOG_HIST_BUCKETS];
    CHECK(iog_session_histogram(s, 0, IOG_DIR_READ, IOG_HIST_PRIO_CLAT, counts, IOG_HIST_BUCKETS) ==
          0);
    uint64_t total = 0;
    for (uint32_t b = 0; b < IOG_HIST_BUCKETS; b++)
        total += counts[b];
    CHECK_EQ_U64(total, st.prio_ios);
    if (st.prio_ios) {
        CHECK(st.prio_clat.min_ns >= st.lat[IOG_LAT_CLAT].min_ns);
        CHECK(st.prio_clat.max_ns <= st.lat[IOG_LAT_CLAT].max_ns);
    }
    iog_session_destroy(s);
    return T_PASS;
}

static int test_uring_shares(void)
{
    CHECK(check_share("io_uring", 0) == T_PASS);
    CHECK(check_share("io_uring", 200000) == T_PASS);
    CHECK(check_share("io_uring", IOG_WEIGHT_TOTAL) == T_PASS);
    return T_PASS;
}

static int test_libaio_shares(void)
{
    CHECK(check_share("libaio", 0) == T_PASS);
    CHECK(check_share("libaio", 200000) == T_PASS);
    CHECK(check_share("libaio", IOG_WEIGHT_TOTAL) == T_PASS);
    return T_PASS;
}

/* An entry for one size applies to requests of that size only. */
static int test_bssplit_entries(void)
{
    struct iog_job_spec j = prio_spec("io_uring", IOG_WEIGHT_TOTAL);
    j.nbs[IOG_DIR_READ] = 2;
    j.bs[IOG_DIR_READ][0] = (struct iog_bs_entry){.lo = 4096, .hi = 4096, .weight = 500000};
    j.bs[IOG_DIR_READ][1] = (struct iog_bs_entry){.lo = 8192, .hi = 8192, .weight = 500000};
    j.cmdprio[IOG_DIR_READ][0].bs = 8192;
    iog_session *s = NULL;
    CHECK(t_run(&j, 1, &s) == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    struct iog_bs_count bc[4];
    CHECK(iog_session_bs_counts(s, 0, IOG_DIR_READ, bc, 4) == 2);
    CHECK_EQ_U64(bc[1].bs, 8192);
    CHECK_EQ_U64(st.prio_ios, bc[1].ios);
    iog_session_destroy(s);
    return T_PASS;
}

/* The job's priority is the worker thread's, with a synchronous engine too. */
static int test_job_prio_sync(void)
{
    struct iog_job_spec j = t_spec("psync", IOG_RW_READ, BS, 64 * 1024);
    snprintf(j.filename, sizeof(j.filename), "%s", path);
    j.flags = IOG_JOB_NO_LAYOUT;
    j.ioprio = PRIO_BE(5);
    iog_session *s = NULL;
    CHECK(t_run(&j, 1, &s) == 0);
    struct iog_job_stats js;
    memset(&js, 0, sizeof(js));
    js.struct_size = sizeof(js);
    CHECK(iog_session_job_stats(s, 0, &js) == 0);
    CHECK_EQ_U64(js.ioprio, PRIO_BE(5));
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    CHECK_EQ_U64(st.errors, 0);
    CHECK_EQ_U64(st.prio_ios, 0);
    iog_session_destroy(s);
    /* this thread's own priority is untouched by the job's */
    long mine = syscall(SYS_ioprio_get, 1, 0);
    CHECK(mine != (long)PRIO_BE(5));
    return T_PASS;
}

/* A priority the kernel refuses is an error of the job, not a crash. */
static int test_invalid_prio(void)
{
    struct iog_job_spec j = t_spec("psync", IOG_RW_READ, BS, 64 * 1024);
    snprintf(j.filename, sizeof(j.filename), "%s", path);
    j.flags = IOG_JOB_NO_LAYOUT;
    j.ioprio = (7u << 13); /* no such class */
    iog_session *s = NULL;
    CHECK(t_run(&j, 1, &s) == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    CHECK_EQ_U64(st.errors, 1);
    CHECK_EQ_U64(st.first_errno, EINVAL);
    CHECK_EQ_U64(st.ios, 0);
    iog_session_destroy(s);
    return T_PASS;
}

static int test_validation(void)
{
    char err[IOG_ERR_MAX];
    iog_session *s = NULL;
    struct iog_job_spec j = prio_spec("psync", 200000);
    j.iodepth = 1;
    CHECK(iog_session_create(&j, 1, &s, err, sizeof(err)) == -EINVAL);
    CHECK(strstr(err, "cmdprio") && strstr(err, "psync") && strstr(err, "io_uring"));
    j = prio_spec("io_uring", IOG_WEIGHT_TOTAL + 1);
    CHECK(iog_session_create(&j, 1, &s, err, sizeof(err)) == -EINVAL);
    CHECK(strstr(err, "share"));
    j = prio_spec("io_uring", 600000);
    j.ncmdprio[IOG_DIR_READ] = 2;
    j.cmdprio[IOG_DIR_READ][1] = (struct iog_cmdprio_entry){.share = 600000, .ioprio = PRIO_IDLE};
    CHECK(iog_session_create(&j, 1, &s, err, sizeof(err)) == -EINVAL);
    CHECK(strstr(err, "sum"));
    j = prio_spec("io_uring", 200000);
    j.ioprio = 0x10000;
    CHECK(iog_session_create(&j, 1, &s, err, sizeof(err)) == -EINVAL);
    j = prio_spec("io_uring", 200000);
    CHECK(iog_session_create(&j, 1, &s, err, sizeof(err)) == 0);
    iog_session_destroy(s);
    return T_PASS;
}

int main(void)
{
    if (t_temp_path(path, sizeof(path)) < 0 || t_make_file(path, 256, BS, 0x5a) < 0) {
        fprintf(stderr, "cannot create %s\n", path);
        return T_FAIL;
    }
    int result = T_PASS;
    RUN(test_validation, result);
    RUN(test_uring_shares, result);
    RUN(test_libaio_shares, result);
    RUN(test_bssplit_entries, result);
    RUN(test_job_prio_sync, result);
    RUN(test_invalid_prio, result);
    unlink(path);
    FINISH(result);
}
