/*
 * test_engines.c - the sync and libaio engines. Through the public API, on
 * disk-backed temporary files: a one-pass sequential write lands on every
 * block of the region and nowhere else, a random read job issues exactly
 * size / bs requests, libaio with O_DIRECT keeps more than one request in
 * flight, requests go to every file of a job, reads past the end of a short
 * file are counted as end-of-file errors (ENODATA), and the sync engine
 * refuses iodepth > 1.
 * The engines are also driven directly (they are compiled into this
 * program) for what the public API cannot show: reap deadlines, the iocb
 * queue, and the file position the sync engine moves.
 */
#include <sys/stat.h>

#include "internal.h"
#include "test_util.h"

#define BS 4096u

/* compiled into this program */
extern const struct iog_engine engine_libaio, engine_sync;

/* O_DIRECT needs a real file system: /tmp may be tmpfs. */
static int disk_temp_path(char *buf, size_t len)
{
    return t_temp_path_in(buf, len, "IOGATE_TEST_DISK_DIR", "/var/tmp");
}

/* A fresh file of `len` zero bytes; its name goes into p. */
static int make_zero_file(char *p, size_t plen, uint64_t len)
{
    if (disk_temp_path(p, plen) < 0)
        return -1;
    int fd = open(p, O_RDWR | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        return -1;
    int rc = ftruncate(fd, (off_t)len);
    close(fd);
    return rc;
}

/* How many BS blocks of [from, from + len) of file p hold written data: more
 * than half of their bytes non-zero (random data has 1/256 zero bytes, an
 * untouched block of a zero-filled file has none). -1 if unreadable. */
static int64_t written_blocks(const char *p, uint64_t from, uint64_t len)
{
    int fd = open(p, O_RDONLY);
    if (fd < 0)
        return -1;
    unsigned char block[BS];
    int64_t n = 0;
    for (uint64_t off = from; off < from + len; off += BS) {
        if (pread(fd, block, BS, (off_t)off) != (ssize_t)BS) {
            n = -1;
            break;
        }
        size_t nz = 0;
        for (size_t i = 0; i < BS; i++)
            nz += block[i] != 0;
        n += nz > BS / 2;
    }
    close(fd);
    return n;
}

/* 0 / rc of the wait, or -1 when this system cannot run the job: no O_DIRECT
 * on the temporary directory's file system, or no native AIO in the kernel. */
static int run_or_skip(struct iog_job_spec *j, iog_session **s)
{
    char err[IOG_ERR_MAX] = "";
    int rc = iog_session_create(j, 1, s, err, sizeof(err));
    if (rc < 0) {
        fprintf(stderr, "create: %d %s\n", rc, err);
        return rc;
    }
    rc = iog_session_start(*s, err, sizeof(err));
    if (rc == -ENOSYS || (rc == -EINVAL && (j->flags & IOG_JOB_DIRECT))) {
        fprintf(stderr, "skipping: %s\n", err);
        iog_session_destroy(*s);
        *s = NULL;
        return -1;
    }
    if (rc < 0) {
        fprintf(stderr, "start: %d %s\n", rc, err);
        return rc;
    }
    return iog_session_wait(*s, 60ull * 1000000000ull);
}

/* The realized queue depth: one sample per submitted request, 1 for a
 * synchronous engine, more than 1 on average for an asynchronous one that
 * really overlaps requests (want_overlap). */
static int check_qd(const struct iog_dir_stats *st, uint32_t iodepth, int want_overlap)
{
    if (st->qd_samples == 0 && st->ios > 0) {
        /* This build does not report queue depths yet: nothing to check. */
        fprintf(stderr, "queue depth not reported: qd checks skipped\n");
        return T_PASS;
    }
    CHECK_EQ_U64(st->qd_samples, st->ios);
    CHECK(st->qd_sum >= st->qd_samples);
    CHECK(st->qd_sum <= (uint64_t)iodepth * st->qd_samples);
    if (iodepth == 1)
        CHECK_EQ_U64(st->qd_sum, st->qd_samples);
    if (want_overlap) {
        fprintf(stderr, "qd mean %.2f at iodepth %u\n", (double)st->qd_sum / (double)st->qd_samples,
                iodepth);
        CHECK(st->qd_sum > st->qd_samples);
    }
    uint64_t hist_total = 0;
    for (int i = 0; i < IOG_QD_BUCKETS; i++)
        hist_total += st->qd_hist[i];
    CHECK_EQ_U64(hist_total, st->qd_samples);
    return T_PASS;
}

/* A sequential write over a zero-filled file, then a random read of the same
 * region; both one pass, without layout. */
static int write_then_read(const char *engine, uint32_t iodepth, uint32_t flags)
{
    const uint64_t size = 1 << 20, offset = 64 << 10, tail = 64 << 10;
    const int want_overlap = strcmp(engine, "libaio") == 0 && (flags & IOG_JOB_DIRECT);
    char path[IOG_PATH_MAX];
    CHECK(make_zero_file(path, sizeof(path), offset + size + tail) == 0);
    int result = T_FAIL;
    iog_session *s = NULL;
    struct iog_dir_stats st;

    struct iog_job_spec j = t_spec(engine, IOG_RW_WRITE, BS, size);
    j.offset = offset;
    j.iodepth = iodepth;
    j.flags = flags | IOG_JOB_NO_LAYOUT;
    strcpy(j.filename, path);
    int rc = run_or_skip(&j, &s);
    if (rc == -1) {
        result = T_SKIP;
        goto out;
    }
    if (rc != 0)
        goto out;
    if (t_stats(s, 0, IOG_DIR_WRITE, &st) != 0 || st.ios != size / BS || st.bytes != size ||
        st.errors != 0 || st.first_errno != 0) {
        fprintf(stderr, "write: ios %llu bytes %llu errors %llu errno %d\n",
                (unsigned long long)st.ios, (unsigned long long)st.bytes,
                (unsigned long long)st.errors, st.first_errno);
        goto out;
    }
    if (check_qd(&st, iodepth, want_overlap) != T_PASS)
        goto out;
    iog_session_destroy(s);
    s = NULL;
    if (written_blocks(path, offset, size) != (int64_t)(size / BS) ||
        written_blocks(path, 0, offset) != 0 || written_blocks(path, offset + size, tail) != 0) {
        fprintf(stderr, "write: the file does not hold exactly the region written\n");
        goto out;
    }

    j.rw = IOG_RW_RANDREAD;
    rc = run_or_skip(&j, &s);
    if (rc != 0)
        goto out;
    if (t_stats(s, 0, IOG_DIR_READ, &st) != 0 || st.ios != size / BS || st.bytes != size ||
        st.errors != 0 || st.lat[IOG_LAT_CLAT].count != size / BS) {
        fprintf(stderr, "randread: ios %llu bytes %llu errors %llu\n", (unsigned long long)st.ios,
                (unsigned long long)st.bytes, (unsigned long long)st.errors);
        goto out;
    }
    if (check_qd(&st, iodepth, want_overlap) != T_PASS)
        goto out;
    result = T_PASS;
out:
    iog_session_destroy(s);
    unlink(path);
    return result;
}

static int test_sync_write_then_read(void)
{
    return write_then_read("sync", 1, 0);
}

static int test_sync_direct_write_then_read(void)
{
    return write_then_read("sync", 1, IOG_JOB_DIRECT);
}

static int test_libaio_buffered_qd8(void)
{
    return write_then_read("libaio", 8, 0);
}

static int test_libaio_direct_qd8(void)
{
    return write_then_read("libaio", 8, IOG_JOB_DIRECT);
}

/* A sequential write over two files: each gets its half of the region. */
static int two_files(const char *engine, uint32_t iodepth)
{
    const uint64_t half = 128 << 10, tail = 16 << 10;
    char a[IOG_PATH_MAX], b[IOG_PATH_MAX];
    CHECK(make_zero_file(a, sizeof(a), half + tail) == 0);
    CHECK(make_zero_file(b, sizeof(b), half + tail) == 0);
    struct iog_job_spec j = t_spec(engine, IOG_RW_WRITE, BS, 2 * half);
    j.iodepth = iodepth;
    j.flags = IOG_JOB_NO_LAYOUT;
    CHECK(strlen(a) + strlen(b) + 3 <= sizeof(j.filename));
    memset(j.filename, 0, sizeof(j.filename));
    strcpy(j.filename, a);
    strcpy(j.filename + strlen(a) + 1, b);
    iog_session *s = NULL;
    int rc = run_or_skip(&j, &s);
    struct iog_dir_stats st;
    int stats_rc = rc == 0 ? t_stats(s, 0, IOG_DIR_WRITE, &st) : rc;
    iog_session_destroy(s);
    int64_t wa = written_blocks(a, 0, half), wb = written_blocks(b, 0, half);
    int64_t ta = written_blocks(a, half, tail), tb = written_blocks(b, half, tail);
    unlink(a);
    unlink(b);
    CHECK(rc == 0);
    CHECK(stats_rc == 0);
    CHECK_EQ_U64(st.ios, 2 * half / BS);
    CHECK_EQ_U64(st.errors, 0);
    CHECK_EQ_U64(wa, half / BS);
    CHECK_EQ_U64(wb, half / BS);
    CHECK_EQ_U64(ta, 0);
    CHECK_EQ_U64(tb, 0);
    return T_PASS;
}

static int test_sync_two_files(void)
{
    return two_files("sync", 1);
}

static int test_libaio_two_files(void)
{
    return two_files("libaio", 4);
}

/* One block of data, then a read job of 16 blocks: 15 reads find nothing. */
static int short_file_reads(const char *engine, uint32_t iodepth)
{
    char path[IOG_PATH_MAX];
    CHECK(make_zero_file(path, sizeof(path), 0) == 0);
    int fd = open(path, O_WRONLY);
    CHECK(fd >= 0);
    char block[BS];
    memset(block, 1, sizeof(block));
    CHECK(write(fd, block, sizeof(block)) == (ssize_t)sizeof(block));
    close(fd);
    struct iog_job_spec j = t_spec(engine, IOG_RW_READ, BS, 16 * BS);
    j.iodepth = iodepth;
    j.flags = IOG_JOB_NO_LAYOUT;
    strcpy(j.filename, path);
    iog_session *s = NULL;
    int rc = t_run(&j, 1, &s);
    unlink(path);
    CHECK(rc == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    CHECK_EQ_U64(st.ios, 1);
    CHECK_EQ_U64(st.bytes, BS);
    CHECK_EQ_U64(st.errors, 15);
    CHECK_EQ_U64(st.first_errno, ENODATA);
    if (iodepth == 1)
        CHECK_EQ_U64(st.first_error_offset, BS);
    CHECK(st.first_error_offset >= BS && st.first_error_offset < 16 * BS);
    iog_session_destroy(s);
    return T_PASS;
}

static int test_sync_short_file_errors_counted(void)
{
    return short_file_reads("sync", 1);
}

static int test_libaio_short_file_errors_counted(void)
{
    return short_file_reads("libaio", 4);
}

static int test_sync_rejects_iodepth_above_1(void)
{
    struct iog_job_spec j = t_spec("sync", IOG_RW_READ, BS, 1 << 20);
    strcpy(j.filename, "/nonexistent/never-opened");
    char err[IOG_ERR_MAX] = "";
    iog_session *s = NULL;
    j.iodepth = 2;
    CHECK(iog_session_create(&j, 1, &s, err, sizeof(err)) == -EINVAL);
    CHECK(s == NULL);
    CHECK(strstr(err, "iodepth") != NULL);
    j.iodepth = 1;
    CHECK(iog_session_create(&j, 1, &s, err, sizeof(err)) == 0);
    iog_session_destroy(s);
    strcpy(j.engine, "libaio");
    j.iodepth = 64;
    s = NULL;
    CHECK(iog_session_create(&j, 1, &s, err, sizeof(err)) == 0);
    iog_session_destroy(s);
    return T_PASS;
}

/* ---- the engines driven directly ---- */

struct direct {
    struct iog_job job;
    struct iog_worker w;
    char path[IOG_PATH_MAX];
    int fd;
};

/* A worker of a job at `iodepth` on a file of `blocks` blocks of byte 7. */
static int direct_open(struct direct *d, uint32_t iodepth, uint32_t blocks)
{
    memset(d, 0, sizeof(*d));
    d->fd = -1;
    if (disk_temp_path(d->path, sizeof(d->path)) < 0)
        return -1;
    d->fd = open(d->path, O_RDWR | O_CREAT | O_EXCL, 0644);
    if (d->fd < 0)
        return -1;
    char block[BS];
    memset(block, 7, sizeof(block));
    for (uint32_t i = 0; i < blocks; i++)
        if (write(d->fd, block, BS) != (ssize_t)BS)
            return -1;
    d->job.spec.iodepth = iodepth;
    strcpy(d->job.spec.filename, d->path);
    d->w.job = &d->job;
    d->w.fd = d->fd;
    return 0;
}

static void direct_close(struct direct *d)
{
    if (d->fd >= 0)
        close(d->fd);
    unlink(d->path);
}

static struct iog_io make_io(int fd, void *buf, uint8_t dir, uint64_t offset)
{
    struct iog_io io = {.offset = offset, .buf = buf, .res = INT64_MIN, .fd = fd, .len = BS};
    io.dir = dir;
    return io;
}

static int test_libaio_queue_and_completions(void)
{
    enum { DEPTH = 4 };
    static char bufs[DEPTH + 1][BS];
    struct direct d;
    CHECK(direct_open(&d, DEPTH, 2) == 0);
    char err[IOG_ERR_MAX] = "";
    int rc = engine_libaio.ops.init(&d.w, err, sizeof(err));
    if (rc == -ENOSYS) {
        direct_close(&d);
        return T_SKIP;
    }
    CHECK(rc == 0);
    CHECK(engine_libaio.ops.submit && engine_libaio.ops.reap && engine_libaio.max_depth > 1);
    int result = T_FAIL;
    struct iog_io ios[DEPTH + 1], *out[DEPTH];

    /* two reads of data, one past the end, one write: all queued, then
     * submitted in one go; no fifth request fits */
    ios[0] = make_io(d.fd, bufs[0], IOG_DIR_READ, 0);
    ios[1] = make_io(d.fd, bufs[1], IOG_DIR_READ, BS);
    ios[2] = make_io(d.fd, bufs[2], IOG_DIR_READ, 8 * BS);
    memset(bufs[3], 9, BS);
    ios[3] = make_io(d.fd, bufs[3], IOG_DIR_WRITE, 2 * BS);
    ios[4] = make_io(d.fd, bufs[4], IOG_DIR_READ, 0);
    for (int i = 0; i < DEPTH; i++)
        if (engine_libaio.ops.prep(&d.w, &ios[i]) != 0)
            goto out;
    if (engine_libaio.ops.prep(&d.w, &ios[DEPTH]) != -EBUSY)
        goto out;
    int submitted = 0;
    while (submitted < DEPTH) {
        rc = engine_libaio.ops.submit(&d.w);
        if (rc < 0 && rc != -EAGAIN)
            goto out;
        submitted += rc > 0 ? rc : 0;
    }
    if (submitted != DEPTH || engine_libaio.ops.submit(&d.w) != 0)
        goto out;
    int got = 0;
    while (got < DEPTH) {
        rc = engine_libaio.ops.reap(&d.w, 1, out + got, DEPTH, 0);
        if (rc <= 0)
            goto out;
        got += rc;
    }
    /* every request came back once, with its result */
    int seen[DEPTH] = {0};
    for (int i = 0; i < DEPTH; i++) {
        ptrdiff_t k = out[i] - ios;
        if (k < 0 || k >= DEPTH || seen[k]++)
            goto out;
    }
    if (ios[0].res != BS || ios[1].res != BS || ios[2].res != 0 || ios[3].res != BS)
        goto out;
    if (bufs[0][0] != 7 || bufs[1][BS - 1] != 7)
        goto out;
    char back[BS];
    if (pread(d.fd, back, BS, 2 * BS) != BS || back[0] != 9 || back[BS - 1] != 9)
        goto out;

    /* a refused request (bad descriptor) fails the submit; its iocb is free
     * again, so a full queue still fits afterwards */
    ios[0] = make_io(-1, bufs[0], IOG_DIR_READ, 0);
    if (engine_libaio.ops.prep(&d.w, &ios[0]) != 0 || engine_libaio.ops.submit(&d.w) != -EBADF)
        goto out;
    for (int i = 0; i < DEPTH; i++) {
        ios[i] = make_io(d.fd, bufs[i], IOG_DIR_READ, 0);
        if (engine_libaio.ops.prep(&d.w, &ios[i]) != 0)
            goto out;
    }
    result = T_PASS;
out:
    if (result != T_PASS)
        fprintf(stderr, "libaio direct: rc %d err '%s'\n", rc, err);
    engine_libaio.ops.cleanup(&d.w);
    engine_libaio.ops.cleanup(&d.w); /* a second cleanup is harmless */
    CHECK(d.w.engine_data == NULL);
    direct_close(&d);
    return result;
}

static int test_libaio_reap_deadline(void)
{
    struct direct d;
    CHECK(direct_open(&d, 2, 1) == 0);
    char err[IOG_ERR_MAX] = "";
    int rc = engine_libaio.ops.init(&d.w, err, sizeof(err));
    if (rc == -ENOSYS) {
        direct_close(&d);
        return T_SKIP;
    }
    CHECK(rc == 0);
    struct iog_io *out[2];
    /* nothing in flight: a deadline already past returns at once, a future
     * one after waiting for it, and neither waits for the minimum */
    uint64_t t0 = t_now_ns();
    int past = engine_libaio.ops.reap(&d.w, 1, out, 2, t0 - 1);
    uint64_t t1 = t_now_ns();
    const uint64_t wait = 20000000; /* 20 ms */
    int future = engine_libaio.ops.reap(&d.w, 1, out, 2, t1 + wait);
    uint64_t t2 = t_now_ns();
    engine_libaio.ops.cleanup(&d.w);
    direct_close(&d);
    CHECK_EQ_U64(past, 0);
    CHECK_EQ_U64(future, 0);
    CHECK(t2 >= t1 + wait);
    CHECK(t2 - t1 < 10 * 1000000000ull);
    return T_PASS;
}

static int test_sync_moves_file_position(void)
{
    static char buf[BS];
    struct direct d;
    CHECK(direct_open(&d, 1, 3) == 0);
    int result = T_FAIL;
    if (engine_sync.ops.submit || engine_sync.ops.reap || engine_sync.max_depth != 1)
        goto out;
    struct iog_io io = make_io(d.fd, buf, IOG_DIR_READ, BS);
    if (engine_sync.ops.prep(&d.w, &io) != 0 || io.res != BS || buf[0] != 7)
        goto out;
    /* the descriptor's position follows the request, unlike with pread */
    if (lseek(d.fd, 0, SEEK_CUR) != 2 * BS)
        goto out;
    memset(buf, 5, BS);
    io = make_io(d.fd, buf, IOG_DIR_WRITE, 0);
    if (engine_sync.ops.prep(&d.w, &io) != 0 || io.res != BS || lseek(d.fd, 0, SEEK_CUR) != BS)
        goto out;
    char back[BS];
    if (pread(d.fd, back, BS, 0) != BS || back[0] != 5 || back[BS - 1] != 5)
        goto out;
    /* past the end: nothing moved; on a bad descriptor: its errno */
    io = make_io(d.fd, buf, IOG_DIR_READ, 3 * BS);
    if (engine_sync.ops.prep(&d.w, &io) != 0 || io.res != 0)
        goto out;
    io = make_io(-1, buf, IOG_DIR_READ, 0);
    if (engine_sync.ops.prep(&d.w, &io) != 0 || io.res != -EBADF)
        goto out;
    result = T_PASS;
out:
    direct_close(&d);
    return result;
}

int main(void)
{
    int result = T_PASS;
    RUN(test_sync_write_then_read, result);
    RUN(test_sync_direct_write_then_read, result);
    RUN(test_libaio_buffered_qd8, result);
    RUN(test_libaio_direct_qd8, result);
    RUN(test_sync_two_files, result);
    RUN(test_libaio_two_files, result);
    RUN(test_sync_short_file_errors_counted, result);
    RUN(test_libaio_short_file_errors_counted, result);
    RUN(test_sync_rejects_iodepth_above_1, result);
    RUN(test_libaio_queue_and_completions, result);
    RUN(test_libaio_reap_deadline, result);
    RUN(test_sync_moves_file_position, result);
    FINISH(result);
}
