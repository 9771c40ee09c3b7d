/*
 * test_faults.c - what happens when I/O misbehaves: io_timeout_ns is
 * validated, a request the kernel does not complete (a read of an empty
 * FIFO) becomes the session's fault while poll and fault stay answerable,
 * short transfers are continued until the request is done (a FIFO hands
 * out what it holds) or counted as one error when they cannot be (end of
 * file, the file size limit), and IOG_JOB_TEST_CRASH kills the process with
 * SIGSEGV.
 */
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "test_util.h"

#define BS      4096
#define MS      1000000ull
#define SECONDS 1000000000ull

static int create_only(struct iog_job_spec *j, char *err, size_t errlen)
{
    iog_session *s = NULL;
    int rc = iog_session_create(j, 1, &s, err, errlen);
    iog_session_destroy(s);
    return rc;
}

static int test_io_timeout_validated(void)
{
    struct iog_job_spec j = t_spec("null", IOG_RW_READ, BS, 1 << 20);
    char err[IOG_ERR_MAX] = "";
    const uint64_t bad[] = {1, MS - 1, UINT64_MAX};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        j.io_timeout_ns = bad[i];
        err[0] = '\0';
        CHECK(create_only(&j, err, sizeof(err)) == -EINVAL);
        CHECK(strstr(err, "io_timeout_ns") != NULL);
    }
    const uint64_t good[] = {0, MS, 30 * SECONDS};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        j.io_timeout_ns = good[i];
        CHECK(create_only(&j, err, sizeof(err)) == 0);
    }
    j.io_timeout_ns = 0;
    j.flags = IOG_JOB_TEST_CRASH; /* a known flag, only created here */
    CHECK(create_only(&j, err, sizeof(err)) == 0);
    return T_PASS;
}

/* A file of `len` bytes of 0x5a at a fresh temporary path. */
static int make_file(char *path, size_t cap, size_t len)
{
    if (t_temp_path(path, cap) < 0)
        return -1;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        return -1;
    static char block[BS];
    memset(block, 0x5a, sizeof(block));
    for (size_t off = 0; off < len;) {
        size_t n = len - off < BS ? len - off : BS;
        if (write(fd, block, n) != (ssize_t)n) {
            close(fd);
            return -1;
        }
        off += n;
    }
    close(fd);
    return 0;
}

static int fault_of(iog_session *s, struct iog_fault *f)
{
    memset(f, 0, sizeof(*f));
    f->struct_size = sizeof(*f);
    return iog_session_fault(s, f);
}

static int test_fault_api_on_a_clean_run(void)
{
    char path[IOG_PATH_MAX];
    CHECK(make_file(path, sizeof(path), 16 * BS) == 0);
    struct iog_job_spec j = t_spec("psync", IOG_RW_READ, BS, 16 * BS);
    j.flags = IOG_JOB_NO_LAYOUT;
    j.io_timeout_ns = 30 * SECONDS;
    strcpy(j.filename, path);
    char err[IOG_ERR_MAX];
    iog_session *s = NULL;
    CHECK(iog_session_create(&j, 1, &s, err, sizeof(err)) == 0);
    struct iog_fault f;
    CHECK(fault_of(s, &f) == 0); /* not started: no fault */
    CHECK(fault_of(NULL, &f) == -EINVAL);
    CHECK(iog_session_fault(s, NULL) == -EINVAL);
    f.struct_size = sizeof(f) - 8;
    CHECK(iog_session_fault(s, &f) == -EINVAL);
    CHECK(iog_session_start(s, err, sizeof(err)) == 0);
    CHECK(iog_session_wait(s, 60 * SECONDS) == 0);
    unlink(path);
    CHECK(fault_of(s, &f) == 0);
    CHECK_EQ_U64(f.kind, IOG_FAULT_NONE);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    CHECK_EQ_U64(st.ios, 16);
    CHECK_EQ_U64(st.errors, 0);
    iog_session_destroy(s);
    return T_PASS;
}

/* A FIFO at a fresh path, held open for reading and writing by the test so
 * that the engine's open does not block; the test's end is in *wfd. */
static int make_fifo(char *path, size_t cap, int *wfd)
{
    if (t_temp_path(path, cap) < 0 || mkfifo(path, 0600) < 0)
        return -1;
    *wfd = open(path, O_RDWR);
    return *wfd < 0 ? -1 : 0;
}

static int write_all(int fd, size_t len, char fill)
{
    static char buf[16 * BS];
    if (len > sizeof(buf))
        return -1;
    memset(buf, fill, len);
    return write(fd, buf, len) == (ssize_t)len ? 0 : -1;
}

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / SECONDS), .tv_nsec = (long)(ns % SECONDS)};
    nanosleep(&ts, NULL);
}

static int skip_engine(int rc)
{
    return rc == -ENOSYS || rc == -EPERM || rc == -EOPNOTSUPP;
}

/* A read of an empty FIFO never completes: the monitor claims it once it is
 * past io_timeout_ns, while the worker is still waiting for it (io_uring:
 * in the kernel's queue; libaio: inside io_submit, which reads pipes
 * synchronously). */
static int stalled_read(const char *engine)
{
    const uint64_t timeout = 100 * MS;
    char path[IOG_PATH_MAX];
    int wfd;
    CHECK(make_fifo(path, sizeof(path), &wfd) == 0);
    struct iog_job_spec j = t_spec(engine, IOG_RW_READ, BS, 4 * BS);
    j.flags = IOG_JOB_NO_LAYOUT;
    j.io_timeout_ns = timeout;
    strcpy(j.filename, path);
    char err[IOG_ERR_MAX];
    iog_session *s = NULL;
    CHECK(iog_session_create(&j, 1, &s, err, sizeof(err)) == 0);
    uint64_t t0 = t_now_ns();
    int rc = iog_session_start(s, err, sizeof(err));
    unlink(path);
    if (skip_engine(rc)) {
        close(wfd);
        iog_session_destroy(s);
        return T_SKIP;
    }
    CHECK(rc == 0);
    struct iog_fault f;
    while ((rc = fault_of(s, &f)) == 0 && t_now_ns() - t0 < 30 * SECONDS)
        sleep_ns(2 * MS);
    uint64_t seen = t_now_ns() - t0;
    CHECK(rc == 1);
    fprintf(stderr, "  fault seen after %.1f ms (timeout %.0f ms)\n", seen / 1e6, timeout / 1e6);
    CHECK(seen >= timeout);
    CHECK_EQ_U64(f.struct_size, sizeof(f));
    CHECK_EQ_U64(f.kind, IOG_FAULT_IO_TIMEOUT);
    CHECK_EQ_U64(f.job, 0);
    CHECK_EQ_U64(f.thread, 0);
    CHECK_EQ_U64(f.dir, IOG_DIR_READ);
    CHECK_EQ_U64(f.file, 0);
    CHECK_EQ_U64(f.offset, 0);
    CHECK_EQ_U64(f.len, BS);
    CHECK_EQ_U64(f.timeout_ns, timeout);
    CHECK(f.outstanding_ns > timeout && f.outstanding_ns <= seen);

    /* the worker is still stuck: wait says so, poll answers and counts the
     * timeout as an error, and the struct size is still checked */
    CHECK(iog_session_wait(s, 0) == -ETIMEDOUT);
    CHECK(iog_session_wait(s, 20 * MS) == -ETIMEDOUT);
    struct iog_progress p = {.struct_size = sizeof(p)};
    CHECK(iog_session_poll(s, &p) == 0);
    CHECK_EQ_U64(p.errors, 1);
    CHECK_EQ_U64(p.ios[IOG_DIR_READ], 0);
    CHECK(p.state != IOG_STATE_DONE);
    struct iog_fault bad = {.struct_size = 4};
    CHECK(iog_session_fault(s, &bad) == -EINVAL);

    /* data releases the read: the claimed request is dropped, not counted,
     * and the cancelled session ends */
    CHECK(write_all(wfd, BS, 1) == 0);
    CHECK(iog_session_wait(s, 30 * SECONDS) == 0);
    close(wfd);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    CHECK_EQ_U64(st.ios, 0);
    CHECK_EQ_U64(st.bytes, 0);
    CHECK_EQ_U64(st.errors, 1);
    CHECK_EQ_U64(st.first_errno, ETIMEDOUT);
    CHECK_EQ_U64(st.first_error_offset, 0);
    struct iog_fault again;
    CHECK(fault_of(s, &again) == 1);
    CHECK(memcmp(&again, &f, sizeof(f)) == 0);
    iog_session_destroy(s);
    return T_PASS;
}

static int test_uring_stalled_read_is_a_fault(void)
{
    return stalled_read("io_uring");
}

static int test_libaio_stalled_read_is_a_fault(void)
{
    return stalled_read("libaio");
}

/* A FIFO hands a read what it holds: the first request gets 1000 bytes and
 * must be completed by resubmitting the rest, which waits for more data.
 * The latency of that request covers the wait. */
static int fifo_short_reads(const char *engine)
{
    const size_t head = 1000, total = 4 * BS;
    const uint64_t hold = 50 * MS;
    char path[IOG_PATH_MAX];
    int wfd;
    CHECK(make_fifo(path, sizeof(path), &wfd) == 0);
    CHECK(write_all(wfd, head, 2) == 0);
    struct iog_job_spec j = t_spec(engine, IOG_RW_READ, BS, total);
    j.flags = IOG_JOB_NO_LAYOUT;
    j.io_timeout_ns = 60 * SECONDS; /* the watch runs too, and sees nothing */
    strcpy(j.filename, path);
    char err[IOG_ERR_MAX];
    iog_session *s = NULL;
    CHECK(iog_session_create(&j, 1, &s, err, sizeof(err)) == 0);
    int rc = iog_session_start(s, err, sizeof(err));
    unlink(path);
    if (skip_engine(rc)) {
        close(wfd);
        iog_session_destroy(s);
        return T_SKIP;
    }
    CHECK(rc == 0);
    /* the first read took what was there: now it waits for the rest */
    int queued = 1;
    uint64_t t0 = t_now_ns();
    while (ioctl(wfd, FIONREAD, &queued) == 0 && queued > 0 && t_now_ns() - t0 < 30 * SECONDS)
        sleep_ns(MS);
    CHECK_EQ_U64(queued, 0);
    sleep_ns(hold);
    CHECK(write_all(wfd, total - head, 3) == 0);
    CHECK(iog_session_wait(s, 30 * SECONDS) == 0);
    close(wfd);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    CHECK_EQ_U64(st.errors, 0);
    CHECK_EQ_U64(st.ios, 4);
    CHECK_EQ_U64(st.bytes, total);
    /* one latency sample and one submission per request, not per transfer */
    CHECK_EQ_U64(st.lat[IOG_LAT_LAT].count, 4);
    CHECK_EQ_U64(st.qd_samples, 4);
    CHECK(st.lat[IOG_LAT_LAT].max_ns >= hold);
    struct iog_fault f;
    CHECK(fault_of(s, &f) == 0);
    iog_session_destroy(s);
    return T_PASS;
}

static int test_uring_short_reads_resubmitted(void)
{
    return fifo_short_reads("io_uring");
}

static int test_libaio_short_reads_resubmitted(void)
{
    return fifo_short_reads("libaio");
}

/* A file of one block and 1000 bytes, read in two blocks: the second read
 * moves 1000 bytes, then nothing (end of file). One request counted, one
 * error at the offset where the transfer stopped; the 1000 bytes count
 * nowhere. */
static int partial_then_eof(const char *engine)
{
    char path[IOG_PATH_MAX];
    CHECK(make_file(path, sizeof(path), BS + 1000) == 0);
    struct iog_job_spec j = t_spec(engine, IOG_RW_READ, BS, 2 * BS);
    j.flags = IOG_JOB_NO_LAYOUT;
    strcpy(j.filename, path);
    iog_session *s = NULL;
    int rc = t_run(&j, 1, &s);
    unlink(path);
    if (skip_engine(rc))
        return iog_session_destroy(s), T_SKIP;
    CHECK(rc == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_READ, &st) == 0);
    CHECK_EQ_U64(st.ios, 1);
    CHECK_EQ_U64(st.bytes, BS);
    CHECK_EQ_U64(st.errors, 1);
    CHECK_EQ_U64(st.first_errno, ENODATA); /* the end of the file, not a device error */
    CHECK_EQ_U64(st.first_error_offset, BS + 1000);
    CHECK_EQ_U64(st.lat[IOG_LAT_LAT].count, 1);
    iog_session_destroy(s);
    return T_PASS;
}

static int test_psync_partial_read_then_eof(void)
{
    return partial_then_eof("psync");
}

static int test_sync_partial_read_then_eof(void)
{
    return partial_then_eof("sync");
}

static int test_uring_partial_read_then_eof(void)
{
    return partial_then_eof("io_uring");
}

static int test_libaio_partial_read_then_eof(void)
{
    return partial_then_eof("libaio");
}

/* Under a file size limit one block and 1000 bytes past the start, the
 * second write of a block moves 1000 bytes and the rest fails with EFBIG:
 * one error where the transfer stopped, the partial bytes counted nowhere. */
static int partial_write_then_efbig(const char *engine)
{
    char path[IOG_PATH_MAX];
    CHECK(make_file(path, sizeof(path), 0) == 0);
    struct iog_job_spec j = t_spec(engine, IOG_RW_WRITE, BS, 2 * BS);
    j.flags = IOG_JOB_NO_LAYOUT;
    strcpy(j.filename, path);
    struct rlimit old, lim;
    CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
    lim = old;
    lim.rlim_cur = BS + 1000;
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    iog_session *s = NULL;
    int rc = t_run(&j, 1, &s);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, prev);
    struct stat sb;
    int stat_rc = stat(path, &sb);
    unlink(path);
    if (skip_engine(rc))
        return iog_session_destroy(s), T_SKIP;
    CHECK(rc == 0);
    CHECK(stat_rc == 0);
    CHECK_EQ_U64(sb.st_size, BS + 1000);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, IOG_DIR_WRITE, &st) == 0);
    CHECK_EQ_U64(st.ios, 1);
    CHECK_EQ_U64(st.bytes, BS);
    CHECK_EQ_U64(st.errors, 1);
    CHECK_EQ_U64(st.first_errno, EFBIG);
    CHECK_EQ_U64(st.first_error_offset, BS + 1000);
    iog_session_destroy(s);
    return T_PASS;
}

static int test_psync_partial_write_then_efbig(void)
{
    return partial_write_then_efbig("psync");
}

static int test_sync_partial_write_then_efbig(void)
{
    return partial_write_then_efbig("sync");
}

static int test_uring_partial_write_then_efbig(void)
{
    return partial_write_then_efbig("io_uring");
}

static int test_libaio_partial_write_then_efbig(void)
{
    return partial_write_then_efbig("libaio");
}

/* The crash switch in a child process: it must die of SIGSEGV, not return,
 * not abort. The sanitizers' SIGSEGV handler is put back to the default so
 * that the signal itself is what the parent sees. */
static int test_crash_switch_kills_with_sigsegv(void)
{
    fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        signal(SIGSEGV, SIG_DFL);
        struct iog_job_spec j = t_spec("null", IOG_RW_WRITE, BS, 1 << 20);
        j.flags = IOG_JOB_TEST_CRASH;
        iog_session *s = NULL;
        int rc = t_run(&j, 1, &s);
        _exit(rc == 0 ? 0 : 2); /* survived: the parent reports it */
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (!WIFSIGNALED(status))
        fprintf(stderr, "  child exited with %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    CHECK(WIFSIGNALED(status));
    CHECK_EQ_U64(WTERMSIG(status), SIGSEGV);
    return T_PASS;
}

int main(void)
{
    int result = T_PASS;
    RUN(test_io_timeout_validated, result);
    RUN(test_fault_api_on_a_clean_run, result);
    RUN(test_uring_stalled_read_is_a_fault, result);
    RUN(test_libaio_stalled_read_is_a_fault, result);
    RUN(test_uring_short_reads_resubmitted, result);
    RUN(test_libaio_short_reads_resubmitted, result);
    RUN(test_psync_partial_read_then_eof, result);
    RUN(test_sync_partial_read_then_eof, result);
    RUN(test_uring_partial_read_then_eof, result);
    RUN(test_libaio_partial_read_then_eof, result);
    RUN(test_psync_partial_write_then_efbig, result);
    RUN(test_sync_partial_write_then_efbig, result);
    RUN(test_uring_partial_write_then_efbig, result);
    RUN(test_libaio_partial_write_then_efbig, result);
    RUN(test_crash_switch_kills_with_sigsegv, result);
    FINISH(result);
}
