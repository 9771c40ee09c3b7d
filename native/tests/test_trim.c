/*
 * test_trim.c - trims: the shared helper punches a hole in a regular file
 * (seen with SEEK_HOLE and st_blocks), and trim jobs through the public API
 * count IOG_DIR_TRIM: a sequential trim job punches its whole region with
 * every engine that does I/O, randtrim counts size / bs trims, trimwrite
 * trims and rewrites every block (the file ends full of written data), the
 * null engine counts trims without a file, and a file system that cannot
 * punch holes gives counted trim errors with their errno.
 */
#include <sys/stat.h>

#include "engine.h"
#include "test_util.h"

#define BS 4096u

/* Whether [off, off + len) of fd is a hole: the next data is at or past its end. */
static int is_hole(int fd, uint64_t off, uint64_t len)
{
    off_t d = lseek(fd, (off_t)off, SEEK_DATA);
    return d < 0 ? errno == ENXIO : (uint64_t)d >= off + len;
}

/* A disk-backed file of `blocks` blocks of data, synced; 0 or -1. */
static int make_data_file(char *path, size_t len, uint32_t blocks)
{
    if (t_disk_path(path, len) != 0 || t_make_file(path, blocks, BS, 'd') != 0)
        return -1;
    int fd = open(path, O_RDWR);
    if (fd < 0)
        return -1;
    fsync(fd);
    close(fd);
    return 0;
}

static int test_helper_punches_a_hole(void)
{
    char path[IOG_PATH_MAX];
    CHECK(make_data_file(path, sizeof(path), 16) == 0);
    int fd = open(path, O_RDWR);
    CHECK(fd >= 0);
    struct stat before, after;
    CHECK(fstat(fd, &before) == 0);
    struct iog_io io = {.offset = 4 * BS, .len = 8 * BS, .fd = fd, .done = 7};
    iog_trim(&io, 0);
    if (io.res == -EOPNOTSUPP) {
        close(fd);
        unlink(path);
        return T_SKIP;
    }
    CHECK_EQ_U64(io.res, 8 * BS);
    CHECK_EQ_U64(io.done, 0);
    CHECK(fstat(fd, &after) == 0);
    CHECK_EQ_U64(after.st_size, 16 * BS); /* KEEP_SIZE */
    CHECK(after.st_blocks < before.st_blocks);
    CHECK(is_hole(fd, 4 * BS, 8 * BS));
    CHECK(!is_hole(fd, 0, 4 * BS));
    CHECK(!is_hole(fd, 12 * BS, 4 * BS));
    char buf[BS];
    CHECK(pread(fd, buf, BS, 5 * BS) == BS);
    for (uint32_t i = 0; i < BS; i++)
        CHECK(buf[i] == 0);
    /* a descriptor that is not open for writing: the system's errno */
    int ro = open(path, O_RDONLY);
    CHECK(ro >= 0);
    struct iog_io bad = {.offset = 0, .len = BS, .fd = ro};
    iog_trim(&bad, 0);
    CHECK_EQ_U64(bad.res, -EBADF);
    /* BLKDISCARD on a regular file: the ioctl's errno */
    struct iog_io blk = {.offset = 0, .len = BS, .fd = fd};
    iog_trim(&blk, 1);
    CHECK(blk.res < 0);
    close(ro);
    close(fd);
    unlink(path);
    return T_PASS;
}

static int has_engine(const char *name)
{
    for (int i = 0; i < iog_engine_count(); i++) {
        struct iog_engine_info e = {.struct_size = sizeof(e)};
        if (iog_engine_describe((uint32_t)i, &e) == 0 && strcmp(e.name, name) == 0)
            return 1;
    }
    return 0;
}

/* Runs a job of `rw` with `engine` on a fresh data file of 32 blocks; fills
 * the trim and write stats; the file stays for the caller (path). */
static int run_on_file(const char *engine, uint32_t rw, uint32_t depth, char *path, size_t len,
                       struct iog_dir_stats *trim, struct iog_dir_stats *write)
{
    if (make_data_file(path, len, 32) != 0)
        return -1;
    struct iog_job_spec j = t_spec(engine, rw, BS, 32 * BS);
    j.nbs[0] = 0; /* the read slot is ignored by trim modes */
    j.iodepth = depth;
    strcpy(j.filename, path);
    iog_session *s = NULL;
    int rc = t_run(&j, 1, &s);
    if (rc == 0)
        rc = t_stats(s, 0, IOG_DIR_TRIM, trim);
    if (rc == 0)
        rc = t_stats(s, 0, IOG_DIR_WRITE, write);
    iog_session_destroy(s);
    return rc;
}

static int test_trim_job_punches_its_region(void)
{
    static const struct {
        const char *engine;
        uint32_t depth;
    } engines[] = {{"psync", 1},    {"sync", 1},     {"libaio", 4},
                   {"io_uring", 4}, {"posixaio", 4}, {"mmap", 1}};
    for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
        char path[IOG_PATH_MAX];
        struct iog_dir_stats t, w;
        if (!has_engine(engines[e].engine)) /* not in this build */
            continue;
        CHECK(run_on_file(engines[e].engine, IOG_RW_TRIM, engines[e].depth, path, sizeof(path), &t,
                          &w) == 0);
        if (t.errors && t.first_errno == EOPNOTSUPP) {
            unlink(path);
            return T_SKIP;
        }
        fprintf(stderr, "  %s: %llu trims\n", engines[e].engine, (unsigned long long)t.ios);
        CHECK_EQ_U64(t.errors, 0);
        CHECK_EQ_U64(t.ios, 32);
        CHECK_EQ_U64(t.bytes, 32 * BS);
        CHECK_EQ_U64(t.dir, IOG_DIR_TRIM);
        CHECK_EQ_U64(t.lat[IOG_LAT_SLAT].max_ns, 0);
        CHECK_EQ_U64(t.lat[IOG_LAT_CLAT].count, 32);
        CHECK(t.lat[IOG_LAT_CLAT].mean_ns == t.lat[IOG_LAT_LAT].mean_ns);
        CHECK_EQ_U64(w.ios, 0);
        int fd = open(path, O_RDONLY);
        CHECK(fd >= 0);
        struct stat st;
        CHECK(fstat(fd, &st) == 0);
        CHECK_EQ_U64(st.st_size, 32 * BS);
        CHECK(is_hole(fd, 0, 32 * BS));
        close(fd);
        unlink(path);
    }
    return T_PASS;
}

static int test_randtrim_counts_size_over_bs(void)
{
    char path[IOG_PATH_MAX];
    struct iog_dir_stats t, w;
    CHECK(run_on_file("psync", IOG_RW_RANDTRIM, 1, path, sizeof(path), &t, &w) == 0);
    if (t.errors && t.first_errno == EOPNOTSUPP) {
        unlink(path);
        return T_SKIP;
    }
    CHECK_EQ_U64(t.ios, 32);
    CHECK_EQ_U64(t.errors, 0);
    uint64_t counted = 0;
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    for (uint32_t b = 0; b < 32; b++)
        counted += is_hole(fd, (uint64_t)b * BS, BS);
    close(fd);
    unlink(path);
    CHECK(counted > 0); /* random blocks may repeat: some, not all */
    return T_PASS;
}

static int test_trimwrite_rewrites_every_block(void)
{
    static const uint32_t modes[] = {IOG_RW_TRIMWRITE, IOG_RW_RANDTRIMWRITE};
    for (size_t m = 0; m < 2; m++) {
        char path[IOG_PATH_MAX];
        struct iog_dir_stats t, w;
        CHECK(run_on_file("libaio", modes[m], 4, path, sizeof(path), &t, &w) == 0);
        if (t.errors && t.first_errno == EOPNOTSUPP) {
            unlink(path);
            return T_SKIP;
        }
        CHECK_EQ_U64(t.errors, 0);
        CHECK_EQ_U64(w.errors, 0);
        CHECK_EQ_U64(t.ios, 32); /* size counts the trims... */
        CHECK_EQ_U64(w.ios, 32); /* ...each followed by its write */
        CHECK_EQ_U64(w.bytes, t.bytes);
        int fd = open(path, O_RDONLY);
        CHECK(fd >= 0);
        if (modes[m] == IOG_RW_TRIMWRITE) {
            /* every block trimmed and written again: data, no holes */
            off_t h = lseek(fd, 0, SEEK_HOLE);
            CHECK_EQ_U64(h, 32 * BS);
        }
        close(fd);
        unlink(path);
    }
    return T_PASS;
}

static int test_null_engine_counts_trims(void)
{
    struct iog_job_spec j = t_spec("null", IOG_RW_RANDTRIMWRITE, BS, 64 * BS);
    iog_session *s = NULL;
    CHECK(t_run(&j, 1, &s) == 0);
    struct iog_dir_stats t, w, r;
    CHECK(t_stats(s, 0, IOG_DIR_TRIM, &t) == 0);
    CHECK(t_stats(s, 0, IOG_DIR_WRITE, &w) == 0);
    CHECK(t_stats(s, 0, IOG_DIR_READ, &r) == 0);
    struct iog_bs_count c[4];
    CHECK(iog_session_bs_counts(s, 0, IOG_DIR_TRIM, c, 4) == 1);
    CHECK_EQ_U64(c[0].bs, BS);
    CHECK_EQ_U64(c[0].ios, 64);
    CHECK(iog_session_bs_counts(s, 0, IOG_DIR_SYNC, c, 4) == -EINVAL);
    CHECK(t_stats(s, 0, IOG_DIR_COUNT, &r) == -EINVAL);
    struct iog_progress p = {.struct_size = sizeof(p)};
    CHECK(iog_session_poll(s, &p) == 0);
    CHECK_EQ_U64(p.trim_ios, 64);
    CHECK_EQ_U64(p.trim_bytes, 64 * BS);
    CHECK_EQ_U64(p.ios[IOG_DIR_WRITE], 64);
    iog_session_destroy(s);
    CHECK_EQ_U64(t.ios, 64);
    CHECK_EQ_U64(w.ios, 64);
    CHECK_EQ_U64(r.ios, 0);
    return T_PASS;
}

static int test_trim_rejects_verify(void)
{
    struct iog_job_spec j = t_spec("psync", IOG_RW_TRIMWRITE, BS, 64 * BS);
    strcpy(j.filename, "/nonexistent/never-opened");
    j.verify = IOG_VERIFY_CRC32C;
    iog_session *s = NULL;
    char err[IOG_ERR_MAX] = "";
    CHECK(iog_session_create(&j, 1, &s, err, sizeof(err)) == -EINVAL);
    CHECK(strstr(err, "verify") != NULL);
    j = t_spec("psync", 10, BS, 64 * BS); /* past the last mode */
    strcpy(j.filename, "/nonexistent/never-opened");
    CHECK(iog_session_create(&j, 1, &s, err, sizeof(err)) == -EINVAL);
    CHECK(strstr(err, "rw 10 is unknown") != NULL);
    return T_PASS;
}

int main(void)
{
    int result = T_PASS;
    RUN(test_helper_punches_a_hole, result);
    RUN(test_trim_job_punches_its_region, result);
    RUN(test_randtrim_counts_size_over_bs, result);
    RUN(test_trimwrite_rewrites_every_block, result);
    RUN(test_null_engine_counts_trims, result);
    RUN(test_trim_rejects_verify, result);
    FINISH(result);
}
