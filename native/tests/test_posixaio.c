/*
 * test_posixaio.c - the posixaio engine through the public API: what it
 * writes is where it belongs (verify, both read-back modes), writes land in
 * the file byte for byte, reads keep several requests in flight, and reads
 * past the end of a short file are counted end-of-file errors.
 */
#include "test_util.h"

#define BS 4096u

static int make_file(const char *path, uint32_t blocks, char byte)
{
    return t_make_file(path, blocks, BS, (unsigned char)byte);
}

static int test_verify_passes(void)
{
    char path[IOG_PATH_MAX];
    CHECK(t_disk_path(path, sizeof(path)) == 0);
    for (uint32_t backlog = 0; backlog <= 16; backlog += 16) {
        struct iog_job_spec j = t_spec("posixaio", IOG_RW_RANDWRITE, BS, 256 * BS);
        strcpy(j.filename, path);
        j.iodepth = 8;
        j.verify = IOG_VERIFY_XXH64;
        j.verify_backlog = backlog;
        iog_session *s = NULL;
        int rc = t_run(&j, 1, &s);
        CHECK(rc == 0);
        struct iog_verify_stats v = {.struct_size = sizeof(v)};
        struct iog_dir_stats w;
        CHECK(iog_session_verify(s, 0, &v, NULL, 0) == 0);
        CHECK(t_stats(s, 0, IOG_DIR_WRITE, &w) == 0);
        iog_session_destroy(s);
        CHECK_EQ_U64(w.ios, 256);
        CHECK_EQ_U64(w.errors, 0);
        CHECK_EQ_U64(v.failures, 0);
        CHECK_EQ_U64(v.blocks_written, 256);
        CHECK(v.blocks_checked > 0);
    }
    unlink(path);
    return T_PASS;
}

static int test_writes_land_in_the_file(void)
{
    char path[IOG_PATH_MAX];
    CHECK(t_disk_path(path, sizeof(path)) == 0);
    CHECK(make_file(path, 40, 'o') == 0);
    struct iog_job_spec j = t_spec("posixaio", IOG_RW_WRITE, BS, 32 * BS);
    strcpy(j.filename, path);
    j.offset = 4 * BS;
    j.iodepth = 4;
    j.compress_pct = 100; /* buffers are the pattern only */
    j.pattern_len = 1;
    j.pattern[0] = 'p';
    iog_session *s = NULL;
    CHECK(t_run(&j, 1, &s) == 0);
    iog_session_destroy(s);
    static char buf[40 * BS];
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    CHECK(pread(fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf));
    close(fd);
    unlink(path);
    for (uint32_t i = 0; i < sizeof(buf); i++)
        CHECK(buf[i] == (i >= 4 * BS && i < 36 * BS ? 'p' : 'o'));
    return T_PASS;
}

static int test_reads_and_short_file(void)
{
    char path[IOG_PATH_MAX];
    CHECK(t_disk_path(path, sizeof(path)) == 0);
    CHECK(make_file(path, 64, 1) == 0);
    struct iog_job_spec j = t_spec("posixaio", IOG_RW_RANDREAD, BS, 64 * BS);
    strcpy(j.filename, path);
    j.iodepth = 16;
    j.flags = IOG_JOB_NO_LAYOUT;
    iog_session *s = NULL;
    CHECK(t_run(&j, 1, &s) == 0);
    struct iog_dir_stats r;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &r) == 0);
    iog_session_destroy(s);
    CHECK_EQ_U64(r.ios, 64);
    CHECK_EQ_U64(r.errors, 0);
    CHECK(r.qd_samples == 64 && r.qd_sum > r.qd_samples); /* more than one in flight */

    CHECK(truncate(path, 16 * BS) == 0);
    j.rw = IOG_RW_READ;
    CHECK(t_run(&j, 1, &s) == 0);
    CHECK(t_stats(s, 0, IOG_DIR_READ, &r) == 0);
    iog_session_destroy(s);
    unlink(path);
    CHECK_EQ_U64(r.ios, 16);
    CHECK_EQ_U64(r.errors, 48);
    CHECK_EQ_U64(r.first_errno, ENODATA);
    return T_PASS;
}

int main(void)
{
    int result = T_PASS;
    RUN(test_verify_passes, result);
    RUN(test_writes_land_in_the_file, result);
    RUN(test_reads_and_short_file, result);
    FINISH(result);
}
