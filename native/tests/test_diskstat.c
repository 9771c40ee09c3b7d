/*
 * test_diskstat.c - device statistics: a watched stat file is read at count
 * start, at every interval end of the series and at the end of the run (a
 * regular file holding a stat line stands in for /sys/block/DEV/stat, and a
 * real device's file is watched when sysfs has one); lines of 11 to 17 (and
 * more) counters; what watching refuses.
 */
#include <dirent.h>

#include "test_util.h"

static int write_line(const char *path, const char *line)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return -1;
    ssize_t n = (ssize_t)strlen(line);
    int rc = write(fd, line, (size_t)n) == n ? 0 : -1;
    close(fd);
    return rc;
}

/* A timed null-engine job with a ramp and several intervals. */
static struct iog_job_spec timed_job(void)
{
    struct iog_job_spec j = t_spec("null", IOG_RW_RANDREAD, 4096, 1 << 20);
    j.flags |= IOG_JOB_TIME_BASED;
    j.ramp_ns = 30000000ull;
    j.runtime_ns = 250000000ull;
    j.interval_ns = 100000000ull;
    return j;
}

static int run_watching(struct iog_job_spec *j, const char *stat_path, iog_session **s)
{
    char err[IOG_ERR_MAX];
    int rc = iog_session_create(j, 1, s, err, sizeof(err));
    if (rc < 0)
        return rc;
    rc = iog_session_watch_disk(*s, stat_path, err, sizeof(err));
    if (rc != 0) {
        fprintf(stderr, "watch: %d %s\n", rc, err);
        return rc < 0 ? rc : -1;
    }
    rc = iog_session_start(*s, err, sizeof(err));
    if (rc < 0)
        return rc;
    return iog_session_wait(*s, 60ull * 1000000000ull);
}

static int samples_of(iog_session *s, struct iog_disk_sample **out)
{
    int n = iog_session_disk_samples(s, 0, NULL, 0);
    if (n <= 0)
        return n;
    *out = calloc((size_t)n, sizeof(**out));
    (*out)[0].struct_size = sizeof(**out);
    return iog_session_disk_samples(s, 0, *out, (uint32_t)n);
}

static int test_samples_at_boundaries(void)
{
    char path[256];
    CHECK(t_temp_path(path, sizeof(path)) == 0);
    CHECK(write_line(path, "   10    2   80   7   20    3  160   9    1   50   60   "
                           "4    0   32    1    5    2\n") == 0);
    struct iog_job_spec j = timed_job();
    iog_session *s = NULL;
    CHECK(run_watching(&j, path, &s) == 0);
    int nser = iog_session_series(s, 0, IOG_DIR_READ, NULL, 0);
    CHECK(nser >= 2);
    struct iog_interval *iv = calloc((size_t)nser, sizeof(*iv));
    CHECK(iog_session_series(s, 0, IOG_DIR_READ, iv, (size_t)nser) == nser);
    struct iog_disk_sample *v = NULL;
    int n = samples_of(s, &v);
    /* one at count start, then one per interval end: the series' own ends */
    CHECK_EQ_U64((uint64_t)n, (uint64_t)nser + 1);
    CHECK_EQ_U64(v[0].end_ns, 0);
    for (int i = 0; i < nser; i++)
        CHECK_EQ_U64(v[i + 1].end_ns, iv[i].end_ns);
    static const uint64_t want[IOG_DISK_COUNTERS] = {10, 2,  80, 7, 20, 3, 160, 9, 1,
                                                     50, 60, 4,  0, 32, 1, 5,   2};
    for (int i = 0; i < n; i++) {
        CHECK_EQ_U64(v[i].struct_size, sizeof(v[i]));
        CHECK_EQ_U64(v[i].ncounters, IOG_DISK_COUNTERS);
        for (int k = 0; k < IOG_DISK_COUNTERS; k++)
            CHECK_EQ_U64(v[i].counters[k], want[k]);
    }
    /* asking for none answers how many; an index past the watched devices is refused */
    CHECK(iog_session_disk_samples(s, 0, v, 0) == n);
    CHECK(iog_session_disk_samples(s, 1, v, 1) == -EINVAL);
    free(v);
    free(iv);
    iog_session_destroy(s);
    unlink(path);
    return T_PASS;
}

static int test_field_counts(void)
{
    static const char *lines[] = {
        "1 2 3 4 5 6 7 8 9 10 11\n",
        "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n",
        "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20\n",
    };
    static const uint32_t want[] = {11, 15, IOG_DISK_COUNTERS};
    for (int c = 0; c < 3; c++) {
        char path[256];
        CHECK(t_temp_path(path, sizeof(path)) == 0);
        CHECK(write_line(path, lines[c]) == 0);
        struct iog_job_spec j = t_spec("null", IOG_RW_READ, 4096, 4096 * 16);
        iog_session *s = NULL;
        CHECK(run_watching(&j, path, &s) == 0);
        struct iog_disk_sample *v = NULL;
        int n = samples_of(s, &v);
        CHECK(n >= 2); /* count start and end */
        for (int i = 0; i < n; i++) {
            CHECK_EQ_U64(v[i].ncounters, want[c]);
            for (uint32_t k = 0; k < IOG_DISK_COUNTERS; k++)
                CHECK_EQ_U64(v[i].counters[k], k < want[c] ? k + 1 : 0);
        }
        free(v);
        iog_session_destroy(s);
        unlink(path);
    }
    return T_PASS;
}

static int test_refusals(void)
{
    char path[256], err[IOG_ERR_MAX];
    CHECK(t_temp_path(path, sizeof(path)) == 0);
    CHECK(write_line(path, "1 2 3 4 5 6 7 8 9 10\n") == 0); /* 10: too few */
    struct iog_job_spec j = t_spec("null", IOG_RW_READ, 4096, 4096 * 16);
    iog_session *s = NULL;
    CHECK(iog_session_create(&j, 1, &s, err, sizeof(err)) == 0);
    CHECK(iog_session_watch_disk(s, path, err, sizeof(err)) == -EINVAL);
    CHECK(strstr(err, path) != NULL);
    CHECK(iog_session_watch_disk(s, "/nonexistent/stat", err, sizeof(err)) == -ENOENT);
    CHECK(write_line(path, "1 2 3 4 5 6 7 8 9 10 11\n") == 0);
    for (int i = 0; i < IOG_DISKS_MAX; i++)
        CHECK(iog_session_watch_disk(s, path, err, sizeof(err)) == i);
    CHECK(iog_session_watch_disk(s, path, err, sizeof(err)) == -ENOSPC);
    CHECK(iog_session_disk_samples(s, 0, NULL, 0) == -EINVAL); /* never started */
    CHECK(iog_session_start(s, err, sizeof(err)) == 0);
    CHECK(iog_session_watch_disk(s, path, err, sizeof(err)) == -EALREADY);
    CHECK(iog_session_wait(s, 60ull * 1000000000ull) == 0);
    for (uint32_t d = 0; d < IOG_DISKS_MAX; d++)
        CHECK(iog_session_disk_samples(s, d, NULL, 0) >= 2);
    iog_session_destroy(s);
    unlink(path);
    return T_PASS;
}

/* A real device's counters never go backwards between readings. */
static int test_real_device(void)
{
    DIR *d = opendir("/sys/block");
    if (!d)
        return T_SKIP;
    char path[512] = "";
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/sys/block/%s/stat", e->d_name);
        if (access(path, R_OK) == 0)
            break;
        path[0] = '\0';
    }
    closedir(d);
    if (!path[0])
        return T_SKIP;
    struct iog_job_spec j = timed_job();
    iog_session *s = NULL;
    CHECK(run_watching(&j, path, &s) == 0);
    struct iog_disk_sample *v = NULL;
    int n = samples_of(s, &v);
    CHECK(n >= 2);
    for (int i = 1; i < n; i++) {
        CHECK(v[i].ncounters >= 11);
        CHECK(v[i].end_ns > v[i - 1].end_ns);
        for (int k = 0; k < 8; k++) /* ios, merges, sectors, ticks: cumulative */
            CHECK(v[i].counters[k] >= v[i - 1].counters[k]);
    }
    free(v);
    iog_session_destroy(s);
    return T_PASS;
}

int main(void)
{
    int result = T_PASS;
    RUN(test_samples_at_boundaries, result);
    RUN(test_field_counts, result);
    RUN(test_refusals, result);
    RUN(test_real_device, result);
    FINISH(result);
}
