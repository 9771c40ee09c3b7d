/*
 * layout.c - preparing a job's file before any worker runs: creating it and
 * extending it to offset + size with non-zero pseudo-random data (real
 * blocks, not holes), then fsync; and opening each worker's own descriptor.
 * Block devices and IOG_JOB_NO_LAYOUT jobs are never created or extended.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session.h"

#define LAYOUT_CHUNK (1u << 20)

static int job_writes(const struct iog_job_spec *spec)
{
    return spec->rw != IOG_RW_READ && spec->rw != IOG_RW_RANDREAD;
}

static int extend_file(int fd, uint64_t from, uint64_t to, uint64_t seed, const char *path,
                       uint32_t job, char *err, size_t errlen)
{
    int rc = 0;
    void *buf = NULL;
    if (posix_memalign(&buf, 4096, LAYOUT_CHUNK) != 0) {
        SET_ERR(err, errlen, "job %u: out of memory laying out '%s'", job, path);
        return -ENOMEM;
    }
    struct rng r;
    rng_seed(&r, seed, UINT64_C(0x6c61796f7574)); /* a stream of its own */
    rng_fill_nonzero(&r, buf, LAYOUT_CHUNK);
    uint64_t off = from;
    while (off < to) {
        size_t n = to - off < LAYOUT_CHUNK ? (size_t)(to - off) : LAYOUT_CHUNK;
        ssize_t w = pwrite(fd, buf, n, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = w < 0 ? -errno : -EIO;
            SET_ERR(err, errlen, "job %u: cannot lay out '%s' at offset %llu: %s", job, path,
                    (unsigned long long)off, strerror(-rc));
            goto out;
        }
        off += (uint64_t)w;
    }
    if (fsync(fd) < 0) {
        rc = -errno;
        SET_ERR(err, errlen, "job %u: fsync of '%s' failed: %s", job, path, strerror(-rc));
    }
out:
    free(buf);
    return rc;
}

int layout_prepare(const struct iog_job *job, char *err, size_t errlen)
{
    const struct iog_job_spec *spec = &job->spec;
    if (job->ops == &engine_null_ops || (spec->flags & IOG_JOB_NO_LAYOUT))
        return 0;
    const char *path = spec->filename;
    uint64_t want = spec->offset + spec->size;
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode))
            return 0;
        if (S_ISREG(st.st_mode) && (uint64_t)st.st_size >= want)
            return 0;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        int rc = -errno;
        SET_ERR(err, errlen, "job %u: cannot create '%s': %s", job->index, path, strerror(-rc));
        return rc;
    }
    int rc = 0;
    if (fstat(fd, &st) < 0) {
        rc = -errno;
        SET_ERR(err, errlen, "job %u: cannot stat '%s': %s", job->index, path, strerror(-rc));
        goto out;
    }
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size < want)
        rc = extend_file(fd, (uint64_t)st.st_size, want, spec->seed, path, job->index, err, errlen);
out:
    close(fd);
    return rc;
}

int layout_open(const struct iog_job *job, int *fd, char *err, size_t errlen)
{
    const struct iog_job_spec *spec = &job->spec;
    int flags = (job_writes(spec) ? O_RDWR : O_RDONLY) | O_CLOEXEC;
    if (spec->flags & IOG_JOB_DIRECT)
        flags |= O_DIRECT;
    *fd = open(spec->filename, flags);
    if (*fd < 0) {
        int rc = -errno;
        SET_ERR(err, errlen, "job %u: cannot open '%s': %s", job->index, spec->filename,
                strerror(-rc));
        return rc;
    }
    return 0;
}
