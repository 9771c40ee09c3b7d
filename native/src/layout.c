/*
 * layout.c - preparing the jobs' files before any worker runs, in two steps.
 * layout_prepare (synchronous, in iog_session_start) creates every file that
 * needs layout and works out how far each must be extended, so that open
 * errors reach the caller; layout_run (in the background thread) extends
 * each file to offset + size / nfiles with non-zero pseudo-random data (real
 * blocks, not holes), chunk by chunk, publishing progress and honouring
 * cancel between chunks, then fsyncs. A job that only writes data finds its
 * file prepared as iog_job_spec.write_layout says instead, as fio prepares
 * it: by default the blocks are allocated (fallocate) and nothing is written
 * but what the job writes; with data only with fio's overwrite=1. Also drops
 * the files' cache for IOG_JOB_INVALIDATE jobs and opens each worker's own
 * descriptors. Block devices and IOG_JOB_NO_LAYOUT jobs are never created or
 * extended. Every open of a job's file goes through target_open, which holds
 * a pinned file (iog_job_spec.file_ids) to the identity its caller checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "internal.h"

#define LAYOUT_CHUNK (1u << 20)
/* Written chunks are handed to writeback at once and waited for this many
 * chunks later: progress then tracks the device rather than the page cache,
 * cancel is not stuck behind gigabytes of dirty pages, and the final fsync
 * has little left to do. */
#define WRITEBACK_WINDOW 16

static int job_writes(const struct iog_job_spec *spec)
{
    return spec->rw != IOG_RW_READ && spec->rw != IOG_RW_RANDREAD;
}

static int needs_layout(const struct iog_job *job)
{
    return (job->engine->flags & IOG_ENGINE_DOES_IO) && !(job->spec.flags & IOG_JOB_NO_LAYOUT);
}

/* How a job's files are prepared: with data, unless the job only writes data
 * and its engine can extend a file by writing. */
static uint32_t layout_how(const struct iog_job *job)
{
    const struct iog_job_spec *spec = &job->spec;
    int writes_only = spec->rw == IOG_RW_WRITE || spec->rw == IOG_RW_RANDWRITE;
    if (!writes_only || (job->engine->flags & IOG_ENGINE_NO_EXTEND))
        return IOG_WRITE_LAYOUT_DATA;
    return spec->write_layout;
}

static int pinned(const struct iog_job *job, uint32_t f)
{
    const struct iog_file_id *id = &job->spec.file_ids[f];
    return id->dev != 0 || id->ino != 0;
}

/* Opens file `f` of a job with `flags` (O_CLOEXEC added) into *fd; 0 or a
 * negative errno, described in err. A pinned file is opened without
 * following a symbolic link in the last component, never created, and must
 * be the very file that was checked; an unpinned one is opened as named. */
static int target_open(const struct iog_job *job, uint32_t f, int flags, int *fd, char *err,
                       size_t errlen)
{
    const char *path = job->files[f];
    int pin = pinned(job, f);
    if (pin)
        flags = (flags & ~O_CREAT) | O_NOFOLLOW;
    *fd = open(path, flags | O_CLOEXEC, 0644);
    if (*fd < 0) {
        int rc = -errno;
        if (pin && (rc == -ELOOP || rc == -ENOENT || rc == -ENOTDIR))
            goto replaced;
        SET_ERR(err, errlen, "job %u: cannot open '%s': %s", job->index, path, strerror(-rc));
        return rc;
    }
    if (!pin)
        return 0;
    struct stat st;
    if (fstat(*fd, &st) < 0) {
        int rc = -errno;
        SET_ERR(err, errlen, "job %u: cannot stat '%s': %s", job->index, path, strerror(-rc));
        close(*fd);
        *fd = -1;
        return rc;
    }
    const struct iog_file_id *id = &job->spec.file_ids[f];
    if (S_ISBLK(st.st_mode) ? (uint64_t)st.st_rdev == id->dev && id->ino == 0
                            : S_ISREG(st.st_mode) && (uint64_t)st.st_dev == id->dev &&
                                  (uint64_t)st.st_ino == id->ino)
        return 0;
    close(*fd);
    *fd = -1;
replaced:
    SET_ERR(err, errlen,
            "job %u: '%s' is no longer the file that was checked before the run (it, or a "
            "directory on its path, was replaced since); refusing to touch it",
            job->index, path);
    return -ESTALE;
}

/* Opens (creating it unless pinned) file `f` of one job if it is too short;
 * leaves the plan in job->layout_*[f]. */
static int plan_file(struct iog_job *job, uint32_t f, struct stat *st, char *err, size_t errlen)
{
    uint64_t want = job->spec.offset + job->file_size;
    int fd, rc;
    if (pinned(job, f)) {
        rc = target_open(job, f, O_RDONLY | O_NONBLOCK, &fd, err, errlen);
        if (rc < 0)
            return rc;
        int known = fstat(fd, st) == 0;
        close(fd);
        if (known && (S_ISBLK(st->st_mode) || (uint64_t)st->st_size >= want))
            return 0;
    } else if (stat(job->files[f], st) == 0) {
        if (S_ISBLK(st->st_mode) || S_ISCHR(st->st_mode))
            return 0;
        if (S_ISREG(st->st_mode) && (uint64_t)st->st_size >= want)
            return 0;
    }
    rc = target_open(job, f, O_WRONLY | O_CREAT, &fd, err, errlen);
    if (rc < 0) {
        if (rc != -ESTALE && !pinned(job, f))
            SET_ERR(err, errlen, "job %u: cannot create '%s': %s", job->index, job->files[f],
                    strerror(-rc));
        return rc;
    }
    if (fstat(fd, st) < 0) {
        rc = -errno;
        SET_ERR(err, errlen, "job %u: cannot stat '%s': %s", job->index, job->files[f],
                strerror(-rc));
        close(fd);
        return rc;
    }
    uint32_t how = layout_how(job);
    if (!S_ISREG(st->st_mode) || (uint64_t)st->st_size >= want || how == IOG_WRITE_LAYOUT_NONE) {
        close(fd);
        return 0;
    }
    job->layout_fd[f] = fd;
    job->layout_from[f] = (uint64_t)st->st_size;
    job->layout_to[f] = want;
    job->layout_how[f] = how;
    return 0;
}

int layout_prepare(struct iog_session *s, char *err, size_t errlen)
{
    /* one entry per file being extended, to find files named twice */
    struct file_id {
        dev_t dev;
        ino_t ino;
        struct iog_job *job;
        uint32_t file;
    } *ids = NULL;
    size_t nids = 0, cap = 0;
    for (uint32_t j = 0; j < s->njobs; j++)
        cap += s->jobs[j].nfiles;
    ids = calloc(cap ? cap : 1, sizeof(*ids));
    if (!ids) {
        SET_ERR(err, errlen, "out of memory planning the layout");
        return -ENOMEM;
    }
    int rc = 0;
    uint64_t total = 0;
    for (uint32_t j = 0; j < s->njobs && rc == 0; j++) {
        struct iog_job *job = &s->jobs[j];
        if (!needs_layout(job))
            continue;
        for (uint32_t f = 0; f < job->nfiles && rc == 0; f++) {
            struct stat st;
            rc = plan_file(job, f, &st, err, errlen);
            if (rc < 0 || job->layout_fd[f] < 0)
                continue;
            /* A file named twice: the first entry extends it as far as any
             * needs, with data if any job needs data. */
            size_t i = 0;
            while (i < nids && (ids[i].dev != st.st_dev || ids[i].ino != st.st_ino))
                i++;
            if (i < nids) {
                struct iog_job *first = ids[i].job;
                uint32_t ff = ids[i].file;
                if (job->layout_to[f] > first->layout_to[ff])
                    first->layout_to[ff] = job->layout_to[f];
                if (job->layout_how[f] == IOG_WRITE_LAYOUT_DATA)
                    first->layout_how[ff] = IOG_WRITE_LAYOUT_DATA;
                close(job->layout_fd[f]);
                job->layout_fd[f] = -1;
                continue;
            }
            ids[nids++] = (struct file_id){st.st_dev, st.st_ino, job, f};
        }
    }
    free(ids);
    if (rc < 0) {
        layout_release(s);
        return rc;
    }
    /* progress counts the bytes written with data */
    for (uint32_t j = 0; j < s->njobs; j++)
        for (uint32_t f = 0; f < s->jobs[j].nfiles; f++)
            if (s->jobs[j].layout_fd[f] >= 0 && s->jobs[j].layout_how[f] == IOG_WRITE_LAYOUT_DATA)
                total += s->jobs[j].layout_to[f] - s->jobs[j].layout_from[f];
    PUB_STORE(&s->layout_total, total);
    return 0;
}

void layout_release(struct iog_session *s)
{
    for (uint32_t j = 0; j < s->njobs; j++) {
        for (uint32_t f = 0; f < IOG_FILES_MAX; f++) {
            if (s->jobs[j].layout_fd[f] >= 0)
                close(s->jobs[j].layout_fd[f]);
            s->jobs[j].layout_fd[f] = -1;
        }
    }
}

/* A layout failure is an error of the job, in the WRITE direction. */
static int layout_failed(struct iog_job *job, int err, uint64_t offset)
{
    stats_record_error(&job->workers[0]->st[IOG_DIR_WRITE], err, offset, clock_now_ns());
    return -err;
}

/* Extends one file of a job without writing data, as layout_how says; 0 or a
 * negative errno (recorded). A filesystem that cannot allocate ahead
 * (EOPNOTSUPP) leaves the file to grow as it is written, as fio does. */
static int extend_without_data(struct iog_job *job, uint32_t f)
{
    int fd = job->layout_fd[f];
    uint64_t from = job->layout_from[f], to = job->layout_to[f];
    off_t len = (off_t)(to - from);
    int rc = 0;
    switch (job->layout_how[f]) {
    case IOG_WRITE_LAYOUT_ALLOCATE:
        rc = fallocate(fd, 0, (off_t)from, len) < 0 ? errno : 0;
        break;
    case IOG_WRITE_LAYOUT_KEEP_SIZE:
        rc = fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)from, len) < 0 ? errno : 0;
        break;
    case IOG_WRITE_LAYOUT_POSIX:
        rc = posix_fallocate(fd, (off_t)from, len);
        break;
    case IOG_WRITE_LAYOUT_TRUNCATE:
        rc = ftruncate(fd, (off_t)to) < 0 ? errno : 0;
        break;
    default:
        break;
    }
    if (rc == EOPNOTSUPP || rc == ENOSYS)
        rc = 0;
    return rc ? layout_failed(job, rc, from) : 0;
}

/* Extends one file of a job; 0, 1 when cancelled, or a negative errno (recorded). */
static int extend_file(struct iog_session *s, struct iog_job *job, uint32_t f, void *buf)
{
    if (job->layout_how[f] != IOG_WRITE_LAYOUT_DATA)
        return extend_without_data(job, f);
    int fd = job->layout_fd[f];
    uint64_t from = job->layout_from[f], to = job->layout_to[f];
    struct rng r;
    rng_seed(&r, job->spec.seed, UINT64_C(0x6c61796f7574) + f); /* a stream of its own */
    rng_fill_nonzero(&r, buf, LAYOUT_CHUNK);
    uint64_t off = from;
    while (off < to) {
        if (PUB_LOAD(&s->cancel))
            return 1;
        size_t n = to - off < LAYOUT_CHUNK ? (size_t)(to - off) : LAYOUT_CHUNK;
        ssize_t w = pwrite(fd, buf, n, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return layout_failed(job, w < 0 ? errno : EIO, off);
        /* Best effort: fsync below is what decides whether the data made it. */
        sync_file_range(fd, (off_t)off, w, SYNC_FILE_RANGE_WRITE);
        uint64_t behind = (uint64_t)WRITEBACK_WINDOW * LAYOUT_CHUNK;
        if (off - from >= behind)
            sync_file_range(fd, (off_t)(off - behind), LAYOUT_CHUNK,
                            SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                                SYNC_FILE_RANGE_WAIT_AFTER);
        off += (uint64_t)w;
        PUB_ADD(&s->layout_bytes, (uint64_t)w);
    }
    if (fsync(fd) < 0)
        return layout_failed(job, errno, from);
    return 0;
}

int layout_run(struct iog_session *s)
{
    int rc = 0;
    void *buf = NULL;
    for (uint32_t j = 0; j < s->njobs && rc == 0; j++) {
        struct iog_job *job = &s->jobs[j];
        for (uint32_t f = 0; f < job->nfiles && rc == 0; f++) {
            if (job->layout_fd[f] < 0)
                continue;
            if (!buf && posix_memalign(&buf, 4096, LAYOUT_CHUNK) != 0) {
                buf = NULL;
                rc = layout_failed(job, ENOMEM, job->layout_from[f]);
                break;
            }
            rc = extend_file(s, job, f, buf);
            close(job->layout_fd[f]);
            job->layout_fd[f] = -1;
        }
    }
    free(buf);
    layout_release(s);
    return rc;
}

/* Drops the cached pages of every file of IOG_JOB_INVALIDATE jobs (after
 * layout wrote them): best effort, the run reads from the device if it can. */
void layout_invalidate(struct iog_session *s)
{
    for (uint32_t j = 0; j < s->njobs; j++) {
        struct iog_job *job = &s->jobs[j];
        if (!(job->spec.flags & IOG_JOB_INVALIDATE) || !(job->engine->flags & IOG_ENGINE_DOES_IO))
            continue;
        for (uint32_t f = 0; f < job->nfiles; f++) {
            int fd;
            if (target_open(job, f, O_RDONLY, &fd, NULL, 0) < 0)
                continue;
            fdatasync(fd); /* dirty pages cannot be dropped */
            posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
            close(fd);
        }
    }
}

int layout_open(const struct iog_job *job, uint32_t file, int *fd, char *err, size_t errlen)
{
    const struct iog_job_spec *spec = &job->spec;
    int flags = job_writes(spec) ? O_RDWR : O_RDONLY;
    if (spec->flags & IOG_JOB_DIRECT)
        flags |= O_DIRECT;
    if (spec->flags & IOG_JOB_OSYNC) /* validated: a job that writes */
        flags |= O_SYNC;
    else if (spec->flags & IOG_JOB_ODSYNC)
        flags |= O_DSYNC;
    return target_open(job, file, flags, fd, err, errlen);
}
