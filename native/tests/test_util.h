/*
 * test_util.h - small helpers shared by the C tests: check macros that
 * report the failing line, a job spec builder with sane defaults, temporary
 * files, and a run-to-completion helper. Exit codes follow the usual
 * convention: 0 pass, 1 fail, 77 skip.
 */
#ifndef IOGATE_TEST_UTIL_H
#define IOGATE_TEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "iogate.h"

#define T_PASS 0
#define T_FAIL 1
#define T_SKIP 77

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            return T_FAIL;                                                                         \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_U64(a, b)                                                                         \
    do {                                                                                           \
        unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b);             \
        if (a_ != b_) {                                                                            \
            fprintf(stderr, "%s:%d: %s == %llu, expected %s == %llu\n", __FILE__, __LINE__, #a,    \
                    a_, #b, b_);                                                                   \
            return T_FAIL;                                                                         \
        }                                                                                          \
    } while (0)

/* Runs one test function; a skip of one case does not hide failures of others. */
#define RUN(fn, result)                                                                            \
    do {                                                                                           \
        int r_ = fn();                                                                             \
        fprintf(stderr, "%-40s %s\n", #fn, r_ == T_PASS ? "ok" : r_ == T_SKIP ? "skip" : "FAIL");  \
        if (r_ == T_FAIL)                                                                          \
            (result) = T_FAIL;                                                                     \
        else if (r_ == T_SKIP && (result) == T_PASS)                                               \
            (result) = T_SKIP_SEEN;                                                                \
    } while (0)
#define T_SKIP_SEEN    1000
#define FINISH(result) return (result) == T_SKIP_SEEN ? T_PASS : (result)

static inline uint64_t t_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline struct iog_job_spec t_spec(const char *engine, uint32_t rw, uint64_t bs,
                                         uint64_t size)
{
    struct iog_job_spec j;
    memset(&j, 0, sizeof(j));
    j.struct_size = sizeof(j);
    snprintf(j.engine, sizeof(j.engine), "%s", engine);
    j.rw = rw;
    j.rwmixread = 50;
    for (int d = 0; d < IOG_DATA_DIRS; d++) {
        j.nbs[d] = 1;
        j.bs[d][0] = (struct iog_bs_entry){.lo = bs, .hi = bs, .weight = IOG_WEIGHT_TOTAL};
    }
    j.iodepth = 1;
    j.numjobs = 1;
    j.size = size;
    j.seed = 1234;
    return j;
}

/* A fresh, empty temporary path (the file is removed again) in the directory
 * named by the environment variable `env`, else `fallback`; its name goes
 * into buf. */
static inline int t_temp_path_in(char *buf, size_t len, const char *env, const char *fallback)
{
    const char *dir = getenv(env);
    snprintf(buf, len, "%s/iogate-test-XXXXXX", dir && *dir ? dir : fallback);
    int fd = mkstemp(buf);
    if (fd < 0)
        return -errno;
    close(fd);
    unlink(buf);
    return 0;
}

static inline int t_temp_path(char *buf, size_t len)
{
    return t_temp_path_in(buf, len, "TMPDIR", "/tmp");
}

/* Creates, starts and waits for a session of njobs specs. */
/* Creates path with `blocks` blocks of `bs` bytes: block i all `byte`, or all
 * (i & 0xff) when byte is negative. 0 or -1. */
static inline int t_make_file(const char *path, uint32_t blocks, uint32_t bs, int byte)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return -1;
    char *block = malloc(bs);
    int rc = block ? 0 : -1;
    for (uint32_t i = 0; rc == 0 && i < blocks; i++) {
        memset(block, byte < 0 ? (int)(i & 0xff) : byte, bs);
        if (pwrite(fd, block, bs, (off_t)i * bs) != (ssize_t)bs)
            rc = -1;
    }
    free(block);
    close(fd);
    return rc;
}

/* A temporary file name on a disk-backed filesystem ($IOGATE_TEST_DISK_DIR, else
 * /var/tmp), where O_DIRECT works and a file may be large. */
static inline int t_disk_path(char *buf, size_t len)
{
    return t_temp_path_in(buf, len, "IOGATE_TEST_DISK_DIR", "/var/tmp");
}

static inline int t_run(const struct iog_job_spec *jobs, uint32_t njobs, iog_session **out)
{
    char err[IOG_ERR_MAX];
    int rc = iog_session_create(jobs, njobs, out, err, sizeof(err));
    if (rc < 0) {
        fprintf(stderr, "create: %d %s\n", rc, err);
        return rc;
    }
    rc = iog_session_start(*out, err, sizeof(err));
    if (rc < 0) {
        fprintf(stderr, "start: %d %s\n", rc, err);
        return rc;
    }
    return iog_session_wait(*out, 60ull * 1000000000ull);
}

static inline int t_stats(iog_session *s, uint32_t job, uint32_t dir, struct iog_dir_stats *st)
{
    memset(st, 0, sizeof(*st));
    st->struct_size = sizeof(*st);
    return iog_session_dir_stats(s, job, dir, st);
}

#endif
