/*
 * test_exitall.c - exitall (iog_job_spec.exit_mask): a job whose thread ends
 * its run ends the jobs of its mask as their runtime's end would (sleeping
 * and busy workers alike), end fsync and verify read-back included, leaves
 * the other jobs alone, and may end the other threads of its own job.
 * Assertions are on counted facts (ios, counted runtime), never wall time.
 */
#include "test_util.h"

#define HOUR_NS (3600ull * 1000000000ull)

/* A: 100 rate-limited reads, then ends jobs 1 (rate-limited, sleeping
 * between requests) and 2 (unpaced, always busy); both are time based with
 * an hour of runtime. Job 3, outside the mask, runs its short runtime out. */
static int test_exit_ends_masked_jobs(void)
{
    struct iog_job_spec j[4];
    j[0] = t_spec("null", IOG_RW_READ, 4096, 1 << 20);
    j[0].io_limit_ios = 100;
    j[0].rate_iops[IOG_DIR_READ] = 1000;
    j[0].exit_mask = (1u << 1) | (1u << 2);
    j[1] = t_spec("null", IOG_RW_RANDREAD, 4096, 1 << 20);
    j[1].flags = IOG_JOB_TIME_BASED;
    j[1].runtime_ns = HOUR_NS;
    j[1].rate_iops[IOG_DIR_READ] = 1000;
    j[2] = j[1];
    j[2].rate_iops[IOG_DIR_READ] = 0;
    j[3] = j[1];
    j[3].runtime_ns = 200000000; /* 0.2 s */
    j[3].rate_iops[IOG_DIR_READ] = 100;
    iog_session *s = NULL;
    CHECK(t_run(j, 4, &s) == 0); /* within the minute t_run waits, not the hour */
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    CHECK_EQ_U64(st.ios, 100);
    CHECK(st.errors == 0);
    for (uint32_t k = 1; k <= 2; k++) {
        CHECK(t_stats(s, k, IOG_DIR_READ, &st) == 0);
        CHECK(st.errors == 0);
        CHECK(st.runtime_ns < HOUR_NS / 60);
    }
    CHECK(t_stats(s, 1, IOG_DIR_READ, &st) == 0);
    CHECK(st.ios < 60ull * 1000); /* rate 1000/s, under a minute */
    /* not in the mask: its own runtime */
    CHECK(t_stats(s, 3, IOG_DIR_READ, &st) == 0);
    CHECK(st.runtime_ns >= j[3].runtime_ns);
    iog_session_destroy(s);
    return T_PASS;
}

/* A writing job with verify and end_fsync, ended by exitall of another,
 * still syncs its file and reads back what it wrote. The other one starts
 * a second late, so that the writer has written by then. */
static int test_ended_job_syncs_and_verifies(void)
{
    char path[IOG_PATH_MAX];
    CHECK(t_temp_path(path, sizeof(path)) == 0);
    struct iog_job_spec j[2];
    j[0] = t_spec("null", IOG_RW_READ, 4096, 1 << 20);
    j[0].io_limit_ios = 10;
    j[0].rate_iops[IOG_DIR_READ] = 100;
    j[0].start_delay_ns = 1000000000;
    j[0].exit_mask = UINT64_MAX; /* every job (itself included) */
    j[1] = t_spec("psync", IOG_RW_RANDWRITE, 4096, 256 << 10);
    strcpy(j[1].filename, path);
    j[1].flags = IOG_JOB_TIME_BASED | IOG_JOB_END_FSYNC;
    j[1].runtime_ns = HOUR_NS;
    j[1].rate_iops[IOG_DIR_WRITE] = 1000;
    j[1].verify = IOG_VERIFY_CRC32C;
    iog_session *s = NULL;
    int rc = t_run(j, 2, &s);
    unlink(path);
    CHECK(rc == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 1, IOG_DIR_WRITE, &st) == 0);
    CHECK(st.ios > 0 && st.errors == 0);
    CHECK(st.runtime_ns < HOUR_NS / 60);
    CHECK(t_stats(s, 1, IOG_DIR_SYNC, &st) == 0);
    CHECK_EQ_U64(st.ios, 1); /* the end fsync */
    struct iog_verify_stats v;
    memset(&v, 0, sizeof(v));
    v.struct_size = sizeof(v);
    CHECK(iog_session_verify(s, 1, &v, NULL, 0) == 0);
    CHECK(v.blocks_checked > 0);
    CHECK_EQ_U64(v.failures, 0);
    iog_session_destroy(s);
    return T_PASS;
}

/* The threads of one job: thread 0 issues its one request at the start and
 * ends at once (its next one would be due past its runtime); thread 1's
 * first request is due ~10 s later (rate schedules are staggered by thread)
 * and never comes, as the job's exit_mask names the job itself. */
static int test_exit_ends_own_clones(void)
{
    struct iog_job_spec j = t_spec("null", IOG_RW_READ, 4096, 1 << 20);
    j.numjobs = 2;
    j.flags = IOG_JOB_TIME_BASED;
    j.runtime_ns = 15ull * 1000000000ull;
    j.io_limit_ios = 1;
    j.rate_bytes[IOG_DIR_READ] = 410; /* 205 B/s a thread: a 4 KiB read every ~20 s */
    j.exit_mask = 1;
    iog_session *s = NULL;
    CHECK(t_run(&j, 1, &s) == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    CHECK_EQ_U64(st.ios, 1);
    CHECK(st.runtime_ns < j.runtime_ns);
    iog_session_destroy(s);
    return T_PASS;
}

/* Bit 63 stands for job 63 and every job after it. */
static int test_bit63_covers_later_jobs(void)
{
    enum { N = 66 };
    static struct iog_job_spec j[N];
    for (uint32_t k = 0; k < N; k++) {
        j[k] = t_spec("null", IOG_RW_READ, 4096, 1 << 20);
        j[k].flags = IOG_JOB_TIME_BASED;
        j[k].runtime_ns = HOUR_NS;
        j[k].rate_iops[IOG_DIR_READ] = 10;
    }
    j[0].flags = 0;
    j[0].runtime_ns = 0;
    j[0].io_limit_ios = 2;
    j[0].exit_mask = ~UINT64_C(1); /* jobs 1..62, and bit 63: 63, 64, 65 */
    iog_session *s = NULL;
    CHECK(t_run(j, N, &s) == 0);
    struct iog_dir_stats st;
    for (uint32_t k = 63; k < N; k++) {
        CHECK(t_stats(s, k, IOG_DIR_READ, &st) == 0);
        CHECK(st.runtime_ns < HOUR_NS / 60);
    }
    iog_session_destroy(s);
    return T_PASS;
}

int main(void)
{
    int result = T_PASS;
    RUN(test_exit_ends_masked_jobs, result);
    RUN(test_ended_job_syncs_and_verifies, result);
    RUN(test_exit_ends_own_clones, result);
    RUN(test_bit63_covers_later_jobs, result);
    FINISH(result);
}
