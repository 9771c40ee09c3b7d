/*
 * test_errors.c - failures: start reports open and layout errors with the
 * file name; reads past the end of a short file are counted as end-of-file
 * errors (ENODATA, with the offset of the first one) while the run goes on.
 */
#include <sys/stat.h>

#include "test_util.h"

static int expect_start_error(struct iog_job_spec *j, int want)
{
    char err[IOG_ERR_MAX] = "";
    iog_session *s = NULL;
    CHECK(iog_session_create(j, 1, &s, err, sizeof(err)) == 0);
    int rc = iog_session_start(s, err, sizeof(err));
    if (rc != want || strstr(err, j->filename) == NULL) {
        fprintf(stderr, "start: rc=%d want %d err='%s'\n", rc, want, err);
        iog_session_destroy(s);
        return T_FAIL;
    }
    CHECK(iog_session_wait(s, 0) == -EINVAL); /* not started */
    iog_session_destroy(s);
    return T_PASS;
}

static int test_missing_file_without_layout(void)
{
    char path[4096];
    CHECK(t_temp_path(path, sizeof(path)) == 0);
    struct iog_job_spec j = t_spec("psync", IOG_RW_READ, 4096, 1 << 16);
    j.flags = IOG_JOB_NO_LAYOUT;
    strcpy(j.filename, path);
    return expect_start_error(&j, -ENOENT);
}

static int test_directory_cannot_be_laid_out(void)
{
    char path[4096];
    CHECK(t_temp_path(path, sizeof(path)) == 0);
    CHECK(mkdir(path, 0755) == 0);
    struct iog_job_spec j = t_spec("io_uring", IOG_RW_WRITE, 4096, 1 << 16);
    strcpy(j.filename, path);
    int r = expect_start_error(&j, -EISDIR);
    rmdir(path);
    return r;
}

static int short_file_reads(const char *engine, uint32_t iodepth)
{
    char path[4096];
    CHECK(t_temp_path(path, sizeof(path)) == 0);
    int fd = open(path, O_RDWR | O_CREAT, 0644);
    CHECK(fd >= 0);
    char block[4096];
    memset(block, 1, sizeof(block));
    CHECK(write(fd, block, sizeof(block)) == (ssize_t)sizeof(block));
    close(fd);
    struct iog_job_spec j = t_spec(engine, IOG_RW_READ, 4096, 16 * 4096);
    j.iodepth = iodepth;
    j.flags = IOG_JOB_NO_LAYOUT;
    strcpy(j.filename, path);
    iog_session *s = NULL;
    int rc = t_run(&j, 1, &s);
    unlink(path);
    if (strcmp(engine, "io_uring") == 0 && (rc == -ENOSYS || rc == -EPERM))
        return iog_session_destroy(s), T_SKIP;
    CHECK(rc == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    CHECK_EQ_U64(st.ios, 1);
    CHECK_EQ_U64(st.bytes, 4096);
    CHECK_EQ_U64(st.errors, 15);
    CHECK_EQ_U64(st.first_errno, ENODATA);
    if (iodepth == 1)
        CHECK_EQ_U64(st.first_error_offset, 4096);
    CHECK(st.first_error_offset >= 4096 && st.first_error_offset < 16 * 4096);
    struct iog_progress p = {.struct_size = sizeof(p)};
    CHECK(iog_session_poll(s, &p) == 0);
    CHECK_EQ_U64(p.errors, 15);
    iog_session_destroy(s);
    return T_PASS;
}

static int test_psync_short_file_errors_counted(void)
{
    return short_file_reads("psync", 1);
}

static int test_uring_short_file_errors_counted(void)
{
    return short_file_reads("io_uring", 4);
}

static int test_read_only_file_readable(void)
{
    /* a read job opens read-only, so a file without write permission works */
    char path[4096];
    CHECK(t_temp_path(path, sizeof(path)) == 0);
    int fd = open(path, O_RDWR | O_CREAT, 0444);
    CHECK(fd >= 0);
    CHECK(ftruncate(fd, 1 << 16) == 0);
    close(fd);
    struct iog_job_spec j = t_spec("psync", IOG_RW_RANDREAD, 4096, 1 << 16);
    strcpy(j.filename, path);
    iog_session *s = NULL;
    int rc = t_run(&j, 1, &s);
    unlink(path);
    CHECK(rc == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    CHECK_EQ_U64(st.ios, 16);
    CHECK_EQ_U64(st.errors, 0);
    iog_session_destroy(s);
    return T_PASS;
}

int main(void)
{
    int result = T_PASS;
    RUN(test_missing_file_without_layout, result);
    RUN(test_directory_cannot_be_laid_out, result);
    RUN(test_psync_short_file_errors_counted, result);
    RUN(test_uring_short_file_errors_counted, result);
    RUN(test_read_only_file_readable, result);
    FINISH(result);
}
