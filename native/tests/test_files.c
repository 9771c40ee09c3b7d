/*
 * test_files.c - psync and io_uring sessions against real temporary files:
 * layout creates the file with non-zero data, a one-pass job issues exactly
 * size / bs requests, sequential writes cover every block once, random
 * writes stay block-aligned inside the region, direct I/O works; a pinned
 * file is written only while it is the file its identity names.
 */
#include <sys/stat.h>

#include "test_util.h"

static char path[4096];

static int file_all_nonzero(const char *p, uint64_t from, uint64_t len)
{
    int fd = open(p, O_RDONLY);
    if (fd < 0)
        return 0;
    unsigned char buf[65536];
    int ok = 1;
    uint64_t off = from, end = from + len;
    while (ok && off < end) {
        size_t n = end - off < sizeof(buf) ? (size_t)(end - off) : sizeof(buf);
        ssize_t r = pread(fd, buf, n, (off_t)off);
        if (r <= 0) {
            ok = 0;
            break;
        }
        for (ssize_t i = 0; i < r; i++)
            if (buf[i] == 0)
                ok = 0;
        off += (uint64_t)r;
    }
    close(fd);
    return ok;
}

/* -1: could not run here (io_uring or O_DIRECT unavailable), else 0 / rc */
static int run_or_skip(struct iog_job_spec *j, iog_session **s)
{
    char err[IOG_ERR_MAX];
    int rc = iog_session_create(j, 1, s, err, sizeof(err));
    if (rc < 0) {
        fprintf(stderr, "create: %s\n", err);
        return rc;
    }
    rc = iog_session_start(*s, err, sizeof(err));
    if (rc == -ENOSYS || rc == -EPERM || (rc == -EINVAL && (j->flags & IOG_JOB_DIRECT))) {
        fprintf(stderr, "skipping: %s\n", err);
        iog_session_destroy(*s);
        *s = NULL;
        return -1;
    }
    if (rc < 0) {
        fprintf(stderr, "start: %s\n", err);
        return rc;
    }
    return iog_session_wait(*s, 60ull * 1000000000ull);
}

static int one_pass_read(const char *engine, uint32_t rw, uint32_t iodepth, uint32_t flags)
{
    const uint64_t bs = 4096, size = 4 << 20, offset = 1 << 20;
    CHECK(t_temp_path(path, sizeof(path)) == 0);
    struct iog_job_spec j = t_spec(engine, rw, bs, size);
    j.offset = offset;
    j.iodepth = iodepth;
    j.flags = flags;
    strcpy(j.filename, path);
    iog_session *s = NULL;
    int rc = run_or_skip(&j, &s);
    if (rc == -1)
        return unlink(path), T_SKIP;
    CHECK(rc == 0);
    struct stat sb;
    CHECK(stat(path, &sb) == 0);
    CHECK_EQ_U64(sb.st_size, offset + size);
    CHECK(sb.st_blocks * 512 >= (long long)(offset + size)); /* real blocks, no holes */
    CHECK(file_all_nonzero(path, 0, offset + size));
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    CHECK_EQ_U64(st.ios, size / bs);
    CHECK_EQ_U64(st.bytes, size);
    CHECK_EQ_U64(st.errors, 0);
    CHECK_EQ_U64(st.first_errno, 0);
    CHECK_EQ_U64(st.lat[IOG_LAT_CLAT].count, size / bs);
    CHECK(st.lat[IOG_LAT_LAT].mean_ns >= st.lat[IOG_LAT_CLAT].mean_ns);
    if (strcmp(engine, "io_uring") == 0)
        CHECK(st.lat[IOG_LAT_SLAT].max_ns > 0);
    iog_session_destroy(s);
    unlink(path);
    return T_PASS;
}

static int test_psync_seq_read(void)
{
    return one_pass_read("psync", IOG_RW_READ, 1, 0);
}

static int test_psync_rand_read(void)
{
    return one_pass_read("psync", IOG_RW_RANDREAD, 1, 0);
}

static int test_uring_rand_read_qd8(void)
{
    return one_pass_read("io_uring", IOG_RW_RANDREAD, 8, 0);
}

static int test_uring_direct_qd32(void)
{
    return one_pass_read("io_uring", IOG_RW_RANDREAD, 32, IOG_JOB_DIRECT);
}

/* A zero-filled file, then a write job without layout: which blocks changed
 * shows which offsets the job wrote. */
static int write_coverage(const char *engine, uint32_t rw, uint32_t iodepth, int *all_written)
{
    const uint64_t bs = 8192, size = 1 << 20, offset = 64 << 10;
    CHECK(t_temp_path(path, sizeof(path)) == 0);
    int fd = open(path, O_RDWR | O_CREAT, 0644);
    CHECK(fd >= 0);
    CHECK(ftruncate(fd, (off_t)(offset + size + 65536)) == 0);
    struct iog_job_spec j = t_spec(engine, rw, bs, size);
    j.offset = offset;
    j.iodepth = iodepth;
    j.flags = IOG_JOB_NO_LAYOUT;
    strcpy(j.filename, path);
    iog_session *s = NULL;
    int rc = run_or_skip(&j, &s);
    if (rc == -1) {
        close(fd);
        unlink(path);
        return T_SKIP;
    }
    CHECK(rc == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_WRITE, &st) == 0);
    CHECK_EQ_U64(st.ios, size / bs);
    CHECK_EQ_U64(st.errors, 0);
    iog_session_destroy(s);
    unsigned char *buf = malloc(offset + size + 65536);
    CHECK(pread(fd, buf, offset + size + 65536, 0) == (ssize_t)(offset + size + 65536));
    close(fd);
    unlink(path);
    /* nothing outside the region; each block entirely written or untouched */
    for (uint64_t i = 0; i < offset; i++)
        CHECK(buf[i] == 0);
    for (uint64_t i = offset + size; i < offset + size + 65536; i++)
        CHECK(buf[i] == 0);
    *all_written = 1;
    for (uint64_t b = 0; b < size / bs; b++) {
        unsigned char *p = buf + offset + b * bs;
        size_t nz = 0;
        for (uint64_t i = 0; i < bs; i++)
            nz += p[i] != 0;
        CHECK(nz == 0 || nz == bs);
        if (nz == 0)
            *all_written = 0;
    }
    free(buf);
    return T_PASS;
}

static int test_psync_seq_write_covers_region(void)
{
    int all = 0;
    int rc = write_coverage("psync", IOG_RW_WRITE, 1, &all);
    if (rc != T_PASS)
        return rc;
    CHECK(all);
    return T_PASS;
}

static int test_uring_seq_write_covers_region(void)
{
    int all = 0;
    int rc = write_coverage("io_uring", IOG_RW_WRITE, 4, &all);
    if (rc != T_PASS)
        return rc;
    CHECK(all);
    return T_PASS;
}

static int test_uring_rand_write_aligned(void)
{
    int all = 1;
    int rc = write_coverage("io_uring", IOG_RW_RANDWRITE, 16, &all);
    if (rc != T_PASS)
        return rc;
    CHECK(!all); /* with replacement, 128 draws over 128 blocks miss some */
    return T_PASS;
}

static int test_uring_time_based_mixed(void)
{
    CHECK(t_temp_path(path, sizeof(path)) == 0);
    struct iog_job_spec j = t_spec("io_uring", IOG_RW_RANDRW, 4096, 1 << 20);
    j.iodepth = 4;
    j.numjobs = 2;
    j.flags = IOG_JOB_TIME_BASED;
    j.runtime_ns = 200000000;
    j.ramp_ns = 50000000;
    j.interval_ns = 50000000;
    strcpy(j.filename, path);
    iog_session *s = NULL;
    int rc = run_or_skip(&j, &s);
    if (rc == -1)
        return unlink(path), T_SKIP;
    CHECK(rc == 0);
    for (uint32_t d = 0; d < IOG_DATA_DIRS; d++) {
        struct iog_dir_stats st;
        CHECK(t_stats(s, 0, d, &st) == 0);
        CHECK(st.ios > 0);
        CHECK_EQ_U64(st.errors, 0);
        CHECK(st.runtime_ns >= j.runtime_ns && st.runtime_ns < j.runtime_ns + 150000000);
        struct iog_interval v[16];
        int n = iog_session_series(s, 0, d, v, 16);
        CHECK(n >= 2 && n <= 4);
        uint64_t total = 0;
        for (int i = 0; i < n; i++)
            total += v[i].ios;
        CHECK_EQ_U64(total, st.ios);
    }
    iog_session_destroy(s);
    unlink(path);
    return T_PASS;
}

/* A pinned file: written when it is the file pinned; refused with ESTALE
 * (and left as it is) when another file, or a link, is found at its path. */
static int test_pinned_file(void)
{
    char other[4096];
    CHECK(t_temp_path(path, sizeof(path)) == 0);
    CHECK(t_temp_path(other, sizeof(other)) == 0);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    CHECK(fd >= 0);
    close(fd);
    struct stat sb;
    CHECK(stat(path, &sb) == 0);
    struct iog_job_spec j = t_spec("psync", IOG_RW_WRITE, 4096, 64 << 10);
    strcpy(j.filename, path);
    j.file_ids[0].dev = (uint64_t)sb.st_dev;
    j.file_ids[0].ino = (uint64_t)sb.st_ino;
    iog_session *s = NULL;
    CHECK(run_or_skip(&j, &s) == 0);
    iog_session_destroy(s);
    CHECK(stat(path, &sb) == 0);
    CHECK_EQ_U64(sb.st_size, 64 << 10);

    /* another file at the path: never opened for writing, never created */
    CHECK(rename(path, other) == 0);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    CHECK(fd >= 0);
    close(fd);
    char err[IOG_ERR_MAX];
    CHECK(iog_session_create(&j, 1, &s, err, sizeof(err)) == 0);
    CHECK(iog_session_start(s, err, sizeof(err)) == -ESTALE);
    CHECK(strstr(err, "no longer the file that was checked") != NULL);
    iog_session_destroy(s);
    CHECK(stat(path, &sb) == 0);
    CHECK_EQ_U64(sb.st_size, 0);

    /* a link to the pinned file itself is not followed either */
    CHECK(unlink(path) == 0);
    CHECK(symlink(other, path) == 0);
    CHECK(iog_session_create(&j, 1, &s, err, sizeof(err)) == 0);
    CHECK(iog_session_start(s, err, sizeof(err)) == -ESTALE);
    iog_session_destroy(s);
    unlink(path);
    unlink(other);
    return T_PASS;
}

int main(void)
{
    int result = T_PASS;
    RUN(test_psync_seq_read, result);
    RUN(test_psync_rand_read, result);
    RUN(test_uring_rand_read_qd8, result);
    RUN(test_uring_direct_qd32, result);
    RUN(test_psync_seq_write_covers_region, result);
    RUN(test_uring_seq_write_covers_region, result);
    RUN(test_uring_rand_write_aligned, result);
    RUN(test_uring_time_based_mixed, result);
    RUN(test_pinned_file, result);
    FINISH(result);
}
