/*
 * test_mmap.c - the mmap engine through the public API: what it writes is in
 * the file, verify passes with it, msync stands for sync_every, direct and
 * deep queues are refused, and a file shorter than the region - from the
 * start or truncated under a running job - gives counted errors, never a
 * SIGBUS that ends the process. A SIGBUS that is not the engine's still ends
 * the process as it would without the engine.
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "test_util.h"

#define BS 4096u

/* A file of `blocks` blocks whose block i is all byte (i & 0xff). */
static int make_file(const char *path, uint32_t blocks)
{
    return t_make_file(path, blocks, BS, -1);
}

static int test_writes_land_in_the_file(void)
{
    char path[IOG_PATH_MAX];
    CHECK(t_disk_path(path, sizeof(path)) == 0);
    CHECK(make_file(path, 72) == 0);
    struct iog_job_spec j = t_spec("mmap", IOG_RW_WRITE, BS, 64 * BS);
    strcpy(j.filename, path);
    j.offset = 3 * BS + 512; /* the mapping starts at the page below */
    j.compress_pct = 100;    /* buffers are the pattern only */
    j.pattern_len = 1;
    j.pattern[0] = 'm';
    j.sync_kind = IOG_SYNC_FSYNC;
    j.sync_every = 16;
    iog_session *s = NULL;
    int rc = t_run(&j, 1, &s);
    struct iog_dir_stats w, sy;
    CHECK(rc == 0);
    CHECK(t_stats(s, 0, IOG_DIR_WRITE, &w) == 0);
    CHECK(t_stats(s, 0, IOG_DIR_SYNC, &sy) == 0);
    iog_session_destroy(s);
    CHECK_EQ_U64(w.ios, 64);
    CHECK_EQ_U64(w.errors, 0);
    CHECK_EQ_U64(sy.ios, 4);
    CHECK_EQ_U64(sy.errors, 0);
    /* read back with pread: the region is all pattern, the rest of the file
     * as it was */
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    static char buf[72 * BS];
    CHECK(pread(fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf));
    close(fd);
    unlink(path);
    for (uint32_t i = 0; i < sizeof(buf); i++) {
        int in = i >= j.offset && i < j.offset + j.size;
        char want = in ? 'm' : (char)(i / BS);
        if (buf[i] != want) {
            fprintf(stderr, "byte %u is 0x%02x, expected 0x%02x\n", i, (unsigned char)buf[i],
                    (unsigned char)want);
            return T_FAIL;
        }
    }
    return T_PASS;
}

static int test_reads_see_the_file(void)
{
    char path[IOG_PATH_MAX];
    CHECK(t_disk_path(path, sizeof(path)) == 0);
    CHECK(make_file(path, 32) == 0);
    struct iog_job_spec j = t_spec("mmap", IOG_RW_RANDREAD, BS, 32 * BS);
    strcpy(j.filename, path);
    j.flags = IOG_JOB_NO_LAYOUT;
    j.numjobs = 2;
    iog_session *s = NULL;
    int rc = t_run(&j, 1, &s);
    struct iog_dir_stats r;
    CHECK(rc == 0);
    CHECK(t_stats(s, 0, IOG_DIR_READ, &r) == 0);
    iog_session_destroy(s);
    unlink(path);
    CHECK_EQ_U64(r.ios, 64);
    CHECK_EQ_U64(r.bytes, 64 * BS);
    CHECK_EQ_U64(r.errors, 0);
    return T_PASS;
}

static int test_verify_passes(void)
{
    char path[IOG_PATH_MAX];
    CHECK(t_disk_path(path, sizeof(path)) == 0);
    for (uint32_t backlog = 0; backlog <= 8; backlog += 8) {
        struct iog_job_spec j = t_spec("mmap", IOG_RW_RANDWRITE, BS, 128 * BS);
        strcpy(j.filename, path);
        j.verify = IOG_VERIFY_CRC32C;
        j.verify_backlog = backlog;
        iog_session *s = NULL;
        int rc = t_run(&j, 1, &s);
        CHECK(rc == 0);
        struct iog_verify_stats v = {.struct_size = sizeof(v)};
        CHECK(iog_session_verify(s, 0, &v, NULL, 0) == 0);
        iog_session_destroy(s);
        CHECK_EQ_U64(v.failures, 0);
        CHECK_EQ_U64(v.blocks_written, 128);
        CHECK(v.blocks_checked > 0);
    }
    unlink(path);
    return T_PASS;
}

static int expect_refused(const struct iog_job_spec *j, const char *a, const char *b)
{
    iog_session *s = NULL;
    char err[IOG_ERR_MAX] = "";
    CHECK(iog_session_create(j, 1, &s, err, sizeof(err)) == -EINVAL);
    CHECK(s == NULL);
    if (!strstr(err, a) || !strstr(err, b)) {
        fprintf(stderr, "message: %s\n", err);
        return T_FAIL;
    }
    return T_PASS;
}

static int test_direct_and_depth_refused(void)
{
    struct iog_job_spec j = t_spec("mmap", IOG_RW_READ, BS, 16 * BS);
    strcpy(j.filename, "/nonexistent");
    j.flags = IOG_JOB_DIRECT;
    CHECK(expect_refused(&j, "flags DIRECT", "mmap engine") == T_PASS);
    j.flags = 0;
    j.iodepth = 4;
    CHECK(expect_refused(&j, "iodepth must be 1", "mmap engine") == T_PASS);
    return T_PASS;
}

/* A region of 16 blocks over a file of 4: the 12 reads past its end fail
 * with ENODATA, the writes with EIO, and the process lives on. */
static int test_short_file(void)
{
    char path[IOG_PATH_MAX];
    CHECK(t_disk_path(path, sizeof(path)) == 0);
    for (uint32_t rw = IOG_RW_READ; rw <= IOG_RW_WRITE; rw++) {
        CHECK(make_file(path, 4) == 0);
        struct iog_job_spec j = t_spec("mmap", rw, BS, 16 * BS);
        strcpy(j.filename, path);
        j.flags = IOG_JOB_NO_LAYOUT;
        iog_session *s = NULL;
        int rc = t_run(&j, 1, &s);
        CHECK(rc == 0);
        struct iog_dir_stats st;
        uint32_t dir = rw == IOG_RW_READ ? IOG_DIR_READ : IOG_DIR_WRITE;
        CHECK(t_stats(s, 0, dir, &st) == 0);
        iog_session_destroy(s);
        CHECK_EQ_U64(st.ios, 4);
        CHECK_EQ_U64(st.errors, 12);
        CHECK_EQ_U64(st.first_errno, rw == IOG_RW_READ ? ENODATA : EIO);
        CHECK_EQ_U64(st.first_error_offset, 4 * BS);
    }
    unlink(path);
    return T_PASS;
}

/* Polls until cond(progress) holds or the session ends; 1 when it held. */
static int wait_for(iog_session *s, int (*cond)(const struct iog_progress *))
{
    for (;;) {
        struct iog_progress p = {.struct_size = sizeof(p)};
        if (iog_session_poll(s, &p) < 0)
            return 0;
        if (cond(&p))
            return 1;
        if (p.state == IOG_STATE_DONE)
            return 0;
        usleep(1000);
    }
}

static int some_ios(const struct iog_progress *p)
{
    return p->ios[0] + p->ios[1] > 0;
}

static int some_errors(const struct iog_progress *p)
{
    return p->errors > 0;
}

/* The file shrinks to nothing under a running time-based job (two threads):
 * the requests after that fail and are counted; the job ends when
 * cancelled, with its earlier requests counted. */
static int test_truncated_under_a_running_job(void)
{
    char path[IOG_PATH_MAX];
    CHECK(t_disk_path(path, sizeof(path)) == 0);
    for (uint32_t rw = IOG_RW_RANDREAD; rw <= IOG_RW_RANDWRITE; rw++) {
        CHECK(make_file(path, 256) == 0);
        struct iog_job_spec j = t_spec("mmap", rw, BS, 256 * BS);
        strcpy(j.filename, path);
        j.flags = IOG_JOB_TIME_BASED | IOG_JOB_NO_LAYOUT;
        j.runtime_ns = 3600ull * 1000000000ull; /* until cancelled */
        j.numjobs = 2;
        iog_session *s = NULL;
        char err[IOG_ERR_MAX];
        CHECK(iog_session_create(&j, 1, &s, err, sizeof(err)) == 0);
        CHECK(iog_session_start(s, err, sizeof(err)) == 0);
        CHECK(wait_for(s, some_ios));
        CHECK(truncate(path, 0) == 0);
        int saw = wait_for(s, some_errors);
        iog_session_cancel(s);
        CHECK(iog_session_wait(s, 60ull * 1000000000ull) == 0);
        CHECK(saw);
        struct iog_dir_stats st;
        uint32_t dir = rw == IOG_RW_RANDREAD ? IOG_DIR_READ : IOG_DIR_WRITE;
        CHECK(t_stats(s, 0, dir, &st) == 0);
        iog_session_destroy(s);
        CHECK(st.ios > 0 && st.errors > 0);
        CHECK_EQ_U64(st.first_errno, rw == IOG_RW_RANDREAD ? ENODATA : EIO);
    }
    unlink(path);
    return T_PASS;
}

static void exit_42(int sig)
{
    (void)sig;
    _exit(42);
}

/* In a child: a handler of the program's own (exit 42) or none, then an mmap
 * job whose handler chains to it, then a SIGBUS of the program's own (a
 * mapping past the end of a file). Its wait status. */
static int own_sigbus(const char *path, int own_handler)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (own_handler)
            signal(SIGBUS, exit_42);
        struct iog_job_spec j = t_spec("mmap", IOG_RW_READ, BS, 16 * BS);
        strcpy(j.filename, path);
        iog_session *s = NULL;
        if (t_run(&j, 1, &s) != 0)
            _exit(3);
        iog_session_destroy(s);
        int fd = open(path, O_RDWR);
        if (fd < 0 || ftruncate(fd, 0) < 0)
            _exit(4);
        volatile char *p = mmap(NULL, BS, PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
            _exit(5);
        (void)p[0]; /* past the end of the file */
        _exit(6);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    return status;
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1 /* the runtime's own SIGBUS handler reports and exits */
#else
#define SANITIZED 0
#endif

/* After an mmap job installed its handler, a SIGBUS of the program's own
 * still reaches the handler it had, or ends it as it would have. */
static int test_other_sigbus_is_handed_on(void)
{
    char path[IOG_PATH_MAX];
    CHECK(t_disk_path(path, sizeof(path)) == 0);
    CHECK(make_file(path, 16) == 0);
    int status = own_sigbus(path, 1);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 42);
    CHECK(make_file(path, 16) == 0);
    status = own_sigbus(path, 0);
    unlink(path);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    int reported = WIFSIGNALED(status) || code == 1 || (code > 6 && code != 42);
    if (SANITIZED ? !reported : !(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS)) {
        fprintf(stderr, "child status 0x%x\n", status);
        return T_FAIL;
    }
    return T_PASS;
}

int main(void)
{
    int result = T_PASS;
    RUN(test_writes_land_in_the_file, result);
    RUN(test_reads_see_the_file, result);
    RUN(test_verify_passes, result);
    RUN(test_direct_and_depth_refused, result);
    RUN(test_short_file, result);
    RUN(test_truncated_under_a_running_job, result);
    RUN(test_other_sigbus_is_handed_on, result);
    FINISH(result);
}
