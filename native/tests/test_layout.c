/*
 * test_layout.c - layout runs in the background: start returns before a
 * large layout finishes, progress reports the LAYOUT state and
 * layout_bytes / layout_total, the run clock starts only after layout,
 * cancel during layout ends the session at once with nothing counted, a
 * layout failure becomes an error of its job, jobs sharing a file lay it
 * out once, and the RAMP state is reported during ramp_time.
 *
 * Large files go to a disk-backed directory ($IOGATE_TEST_DISK_DIR, else
 * /var/tmp) so that /tmp on tmpfs does not turn them into memory.
 */
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "test_util.h"

#define MiB     (1ull << 20)
#define MS      1000000ull
#define SECONDS 1000000000ull
#define BIG     (512 * MiB)

/* Big files go to a disk-backed directory: /tmp may be a RAM-backed tmpfs. */
static int disk_path(char *buf, size_t len)
{
    return t_temp_path_in(buf, len, "IOGATE_TEST_DISK_DIR", "/var/tmp");
}

static void pause_ms(unsigned ms)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)ms * 1000000L};
    nanosleep(&ts, NULL);
}

static int poll_now(iog_session *s, struct iog_progress *p)
{
    memset(p, 0, sizeof(*p));
    p->struct_size = sizeof(*p);
    return iog_session_poll(s, p);
}

static int start_job(struct iog_job_spec *j, uint32_t n, iog_session **s, uint64_t *start_ns)
{
    char err[IOG_ERR_MAX] = "";
    CHECK(iog_session_create(j, n, s, err, sizeof(err)) == 0);
    uint64_t t0 = t_now_ns();
    int rc = iog_session_start(*s, err, sizeof(err));
    *start_ns = t_now_ns() - t0;
    if (rc < 0)
        fprintf(stderr, "start: %d %s\n", rc, err);
    CHECK(rc == 0);
    return T_PASS;
}

static int check_nothing_counted(iog_session *s, uint32_t job)
{
    for (uint32_t d = 0; d < IOG_DIR_COUNT; d++) {
        struct iog_dir_stats st;
        CHECK(t_stats(s, job, d, &st) == 0);
        CHECK_EQ_U64(st.ios, 0);
        CHECK_EQ_U64(st.bytes, 0);
        CHECK_EQ_U64(st.runtime_ns, 0);
        CHECK_EQ_U64(st.lat[IOG_LAT_LAT].count, 0);
        CHECK(iog_session_series(s, job, d, NULL, 0) == 0);
    }
    return T_PASS;
}

/* A 512 MiB layout, then a short time-based read run. */
static int run_big_layout(const char *path)
{
    struct iog_job_spec j = t_spec("psync", IOG_RW_RANDREAD, 4096, BIG);
    j.flags = IOG_JOB_TIME_BASED;
    j.runtime_ns = 200 * MS;
    strcpy(j.filename, path);
    iog_session *s = NULL;
    uint64_t start_ns;
    CHECK(start_job(&j, 1, &s, &start_ns) == T_PASS);

    struct iog_progress p;
    uint64_t last_bytes = 0, last_layout_elapsed = 0;
    int seen_layout = 0;
    uint64_t deadline = t_now_ns() + 300 * SECONDS;
    for (;;) {
        CHECK(poll_now(s, &p) == 0);
        if (p.state != IOG_STATE_LAYOUT)
            break;
        seen_layout = 1;
        last_layout_elapsed = p.elapsed_ns;
        CHECK_EQ_U64(p.layout_total, BIG);
        CHECK(p.layout_bytes >= last_bytes && p.layout_bytes <= BIG);
        CHECK_EQ_U64(p.counted_ns, 0);
        CHECK(p.expected_ns >= p.elapsed_ns + j.runtime_ns);
        last_bytes = p.layout_bytes;
        CHECK(t_now_ns() < deadline);
        pause_ms(2);
    }
    CHECK(seen_layout);
    /* Counting began after the last poll that still saw LAYOUT. */
    CHECK(p.state == IOG_STATE_RUNNING || p.state == IOG_STATE_DONE);
    CHECK(p.counted_ns <= p.elapsed_ns - last_layout_elapsed);
    CHECK_EQ_U64(p.layout_bytes, BIG);
    /* start did the quick part only */
    fprintf(stderr, "  start %.1f ms, layout >= %.1f ms\n", start_ns / 1e6,
            last_layout_elapsed / 1e6);
    CHECK(start_ns * 10 < last_layout_elapsed);

    CHECK(iog_session_wait(s, 60 * SECONDS) == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    /* A run clock started before layout would have expired during it. */
    CHECK(st.ios > 0);
    CHECK(st.runtime_ns >= j.runtime_ns);
    CHECK_EQ_U64(st.errors, 0);
    CHECK(poll_now(s, &p) == 0);
    CHECK_EQ_U64(p.layout_bytes, p.layout_total);
    iog_session_destroy(s);
    struct stat sb;
    CHECK(stat(path, &sb) == 0);
    CHECK_EQ_U64(sb.st_size, BIG);
    return T_PASS;
}

static int test_start_returns_before_layout_finishes(void)
{
    char path[4096];
    CHECK(disk_path(path, sizeof(path)) == 0);
    int r = run_big_layout(path);
    unlink(path);
    return r;
}

static int cancel_during_layout(const char *path)
{
    struct iog_job_spec j = t_spec("psync", IOG_RW_WRITE, 4096, BIG);
    j.flags = IOG_JOB_TIME_BASED;
    j.runtime_ns = 60 * SECONDS;
    strcpy(j.filename, path);
    iog_session *s = NULL;
    uint64_t start_ns;
    CHECK(start_job(&j, 1, &s, &start_ns) == T_PASS);
    struct iog_progress p;
    uint64_t deadline = t_now_ns() + 60 * SECONDS;
    do {
        CHECK(poll_now(s, &p) == 0);
        CHECK(p.state == IOG_STATE_LAYOUT);
        CHECK(t_now_ns() < deadline);
    } while (p.layout_bytes == 0);
    uint64_t t0 = t_now_ns();
    CHECK(iog_session_cancel(s) == 0);
    CHECK(iog_session_wait(s, 30 * SECONDS) == 0);
    uint64_t took = t_now_ns() - t0;
    fprintf(stderr, "  cancel took %.1f ms\n", took / 1e6);
    CHECK(took < 2 * SECONDS);
    CHECK(poll_now(s, &p) == 0);
    CHECK_EQ_U64(p.state, IOG_STATE_DONE);
    CHECK(p.layout_bytes < p.layout_total);
    CHECK_EQ_U64(p.counted_ns, 0);
    CHECK_EQ_U64(p.errors, 0);
    CHECK_EQ_U64(p.jobs_done, 1);
    CHECK(check_nothing_counted(s, 0) == T_PASS);
    iog_session_destroy(s);
    struct stat sb;
    CHECK(stat(path, &sb) == 0);
    CHECK((uint64_t)sb.st_size < BIG);
    return T_PASS;
}

static int test_cancel_during_layout_is_prompt(void)
{
    char path[4096];
    CHECK(disk_path(path, sizeof(path)) == 0);
    int r = cancel_during_layout(path);
    unlink(path);
    return r;
}

/* Layout of a file larger than RLIMIT_FSIZE fails with EFBIG in the
 * background; the session stops without running the other job. */
static int layout_error(const char *path)
{
    struct iog_job_spec j[2] = {t_spec("psync", IOG_RW_READ, 4096, 4 * MiB),
                                t_spec("null", IOG_RW_READ, 4096, MiB)};
    strcpy(j[0].filename, path);
    j[1].flags = IOG_JOB_TIME_BASED;
    j[1].runtime_ns = 60 * SECONDS;
    iog_session *s = NULL;
    uint64_t start_ns;
    CHECK(start_job(j, 2, &s, &start_ns) == T_PASS);
    CHECK(iog_session_wait(s, 30 * SECONDS) == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_WRITE, &st) == 0);
    CHECK_EQ_U64(st.errors, 1);
    CHECK_EQ_U64(st.first_errno, EFBIG);
    CHECK_EQ_U64(st.first_error_offset, MiB);
    CHECK_EQ_U64(st.ios, 0);
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    CHECK_EQ_U64(st.ios, 0);
    CHECK_EQ_U64(st.errors, 0);
    CHECK(check_nothing_counted(s, 1) == T_PASS);
    struct iog_progress p;
    CHECK(poll_now(s, &p) == 0);
    CHECK_EQ_U64(p.state, IOG_STATE_DONE);
    CHECK_EQ_U64(p.errors, 1);
    CHECK_EQ_U64(p.jobs_done, 2);
    CHECK_EQ_U64(p.layout_total, 4 * MiB);
    CHECK_EQ_U64(p.layout_bytes, MiB);
    iog_session_destroy(s);
    return T_PASS;
}

static int test_layout_failure_is_a_job_error(void)
{
    char path[4096];
    CHECK(t_temp_path(path, sizeof(path)) == 0);
    struct rlimit saved;
    CHECK(getrlimit(RLIMIT_FSIZE, &saved) == 0);
    if (saved.rlim_cur != RLIM_INFINITY && saved.rlim_cur < 4 * MiB)
        return T_SKIP;
    void (*old)(int) = signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = {.rlim_cur = MiB, .rlim_max = saved.rlim_max};
    CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
    int r = layout_error(path);
    setrlimit(RLIMIT_FSIZE, &saved);
    signal(SIGXFSZ, old);
    unlink(path);
    return r;
}

static int test_shared_file_is_laid_out_once(void)
{
    char path[4096];
    CHECK(t_temp_path(path, sizeof(path)) == 0);
    struct iog_job_spec j[2] = {t_spec("psync", IOG_RW_READ, 4096, 2 * MiB),
                                t_spec("psync", IOG_RW_RANDREAD, 4096, 3 * MiB)};
    j[1].offset = MiB;
    strcpy(j[0].filename, path);
    strcpy(j[1].filename, path);
    iog_session *s = NULL;
    uint64_t start_ns;
    int r = start_job(j, 2, &s, &start_ns);
    if (r == T_PASS && iog_session_wait(s, 60 * SECONDS) != 0)
        r = T_FAIL;
    struct iog_progress p;
    if (r == T_PASS && (poll_now(s, &p) != 0 || p.layout_total != 4 * MiB ||
                        p.layout_bytes != 4 * MiB || p.errors != 0))
        r = T_FAIL;
    struct stat sb;
    if (r == T_PASS && (stat(path, &sb) != 0 || (uint64_t)sb.st_size != 4 * MiB))
        r = T_FAIL;
    iog_session_destroy(s);
    unlink(path);
    return r;
}

static int test_ramp_state_is_reported(void)
{
    struct iog_job_spec j = t_spec("null", IOG_RW_READ, 4096, MiB);
    j.flags = IOG_JOB_TIME_BASED;
    j.ramp_ns = 300 * MS;
    j.runtime_ns = 200 * MS;
    iog_session *s = NULL;
    uint64_t start_ns;
    CHECK(start_job(&j, 1, &s, &start_ns) == T_PASS);
    struct iog_progress p;
    uint32_t last = IOG_STATE_CREATED;
    int seen_ramp = 0, seen_running = 0;
    uint64_t deadline = t_now_ns() + 30 * SECONDS;
    do {
        CHECK(poll_now(s, &p) == 0);
        CHECK(p.state >= last); /* states only move forward */
        last = p.state;
        if (p.state == IOG_STATE_RAMP) {
            seen_ramp = 1;
            CHECK_EQ_U64(p.counted_ns, 0);
            CHECK_EQ_U64(p.ios[IOG_DIR_READ], 0);
        } else if (p.state == IOG_STATE_RUNNING) {
            seen_running = 1;
            CHECK(p.counted_ns > 0);
        }
        CHECK(t_now_ns() < deadline);
        pause_ms(1);
    } while (p.state != IOG_STATE_DONE);
    CHECK(seen_ramp && seen_running);
    CHECK(iog_session_wait(s, 0) == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    CHECK(st.ios > 0);
    CHECK(st.runtime_ns >= j.runtime_ns && st.runtime_ns < j.runtime_ns + j.ramp_ns);
    iog_session_destroy(s);
    return T_PASS;
}

int main(void)
{
    int result = T_PASS;
    RUN(test_ramp_state_is_reported, result);
    RUN(test_shared_file_is_laid_out_once, result);
    RUN(test_layout_failure_is_a_job_error, result);
    RUN(test_cancel_during_layout_is_prompt, result);
    RUN(test_start_returns_before_layout_finishes, result);
    FINISH(result);
}
