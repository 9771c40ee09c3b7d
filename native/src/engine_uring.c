/*
 * engine_uring.c - the io_uring engine (liburing): a ring of iodepth entries
 * per worker with its files registered when the kernel allows it. prep()
 * fills an SQE, submit() hands every queued SQE to the kernel, reap() waits
 * for at least `min` CQEs (but not past a deadline) and then takes all that
 * are ready in one batch. A request's I/O priority goes in its SQE.
 * A short completion is reported as it is (res < the bytes asked for); the
 * worker prepares the remainder again (see iog_io.done).
 *
 * The job's IOG_JOB_RING_* flags choose io_uring's fast paths: registered
 * buffers (one per request slot, READ_FIXED / WRITE_FIXED), no registered
 * files, a submission polling thread (SQPOLL, optionally on one CPU) and
 * polled completions (IOPOLL, refused up front for a file whose block
 * device's queue does not poll).
 */
#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "clock.h"
#include "engine.h"
#include "internal.h"

struct uring_data {
    struct io_uring ring;
    int ring_ready;
    int fixed_files;  /* the worker's fds are registered, fds[i] as index i */
    int fixed_bufs;   /* each slot's buffer is registered, slot i as index i */
    int sqpoll;       /* a kernel thread takes the submissions */
    int disabled;     /* created disabled; the worker thread enables it */
    unsigned prepped; /* requests prepared since the last submit */
    unsigned ncqes;
    struct io_uring_cqe *cqes[];
};

/* Whether the block device holding file `f` of the worker (itself, or the
 * filesystem's device) polls for completions: its queue/io_poll is 1. 0 with
 * the reason in err when not. */
static int device_polls(struct iog_worker *w, uint32_t f, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(w->fds[f], &st) != 0)
        return -errno;
    dev_t dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
    char path[96], value[8] = "";
    /* a whole disk has queue/ itself; a partition's is its disk's, one up */
    const char *where[] = {"/sys/dev/block/%u:%u/queue/io_poll",
                           "/sys/dev/block/%u:%u/../queue/io_poll"};
    for (int k = 0; k < 2 && !value[0]; k++) {
        snprintf(path, sizeof(path), where[k], major(dev), minor(dev));
        FILE *fp = fopen(path, "re");
        if (!fp)
            continue;
        if (!fgets(value, sizeof(value), fp))
            value[0] = 0;
        fclose(fp);
    }
    if (value[0] == '1')
        return 1;
    const char *name = w->job->spec.filename;
    for (uint32_t k = 0; k < f; k++)
        name += strlen(name) + 1;
    SET_ERR(err, errlen,
            "job %u: hipri polls for completions, but '%s' is on device %u:%u, whose queue %s "
            "(an NVMe device polls when the nvme module has poll_queues); leave hipri out",
            w->job->index, name, major(dev), minor(dev),
            value[0] ? "does not poll (queue/io_poll is 0)" : "has no queue/io_poll to poll");
    return 0;
}

/* Registers each request slot's buffer with the ring, slot i as buffer i. */
static int register_buffers(struct iog_worker *w, struct uring_data *d, char *err, size_t errlen)
{
    unsigned depth = w->job->spec.iodepth;
    struct iovec *iov = calloc(depth, sizeof(*iov));
    if (!iov) {
        SET_ERR(err, errlen, "job %u: out of memory for io_uring state", w->job->index);
        return -ENOMEM;
    }
    for (unsigned i = 0; i < depth; i++) {
        iov[i].iov_base = w->ios[i].buf;
        iov[i].iov_len = w->buf_stride;
    }
    int rc = io_uring_register_buffers(&d->ring, iov, depth);
    free(iov);
    if (rc < 0) {
        SET_ERR(err, errlen,
                "job %u: fixedbufs: registering %u buffers of %zu bytes with io_uring failed: %s%s",
                w->job->index, depth, w->buf_stride, strerror(-rc),
                rc == -ENOMEM ? " (the locked-memory limit, RLIMIT_MEMLOCK, may be too low)" : "");
        return rc;
    }
    d->fixed_bufs = 1;
    return 0;
}

static int uring_init(struct iog_worker *w, char *err, size_t errlen)
{
    unsigned depth = w->job->spec.iodepth;
    struct uring_data *d = calloc(1, sizeof(*d) + depth * sizeof(d->cqes[0]));
    if (!d) {
        SET_ERR(err, errlen, "job %u: out of memory for io_uring state", w->job->index);
        return -ENOMEM;
    }
    d->ncqes = depth;
    const struct iog_job_spec *spec = &w->job->spec;
    unsigned polled = (spec->flags & IOG_JOB_RING_HIPRI) ? IORING_SETUP_IOPOLL : 0;
    for (uint32_t f = 0; polled && f < w->nfiles; f++) {
        int rc = device_polls(w, f, err, errlen);
        if (rc <= 0) {
            free(d);
            return rc < 0 ? rc : -EOPNOTSUPP;
        }
    }
    struct io_uring_params p;
    memset(&p, 0, sizeof(p));
    int rc;
    if (spec->flags & IOG_JOB_RING_SQPOLL) {
        /* The kernel's polling thread submits: no single issuer, no deferred task work.
         * It frees the entries it took only after issuing them all, and a request that
         * completes as it is issued (a read from the page cache) may be reaped and its
         * slot prepared again before: twice iodepth entries always leave room. */
        p.flags = IORING_SETUP_SQPOLL | polled;
        if (spec->flags & IOG_JOB_RING_SQPOLL_CPU) {
            p.flags |= IORING_SETUP_SQ_AFF;
            p.sq_thread_cpu = spec->sqpoll_cpu;
        }
        rc = io_uring_queue_init_params(2 * depth, &d->ring, &p);
        d->sqpoll = 1;
    } else {
        /* Task work runs when this worker enters the kernel anyway rather than
         * through interrupts; the ring is enabled by its worker thread, which
         * becomes its only submitter. Older kernels get a plain ring. */
        p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
                  IORING_SETUP_R_DISABLED | polled;
        rc = io_uring_queue_init_params(depth, &d->ring, &p);
        if (rc == 0) {
            d->disabled = 1;
        } else if (rc == -EINVAL) {
            memset(&p, 0, sizeof(p));
            p.flags = IORING_SETUP_COOP_TASKRUN | polled;
            rc = io_uring_queue_init_params(depth, &d->ring, &p);
            if (rc == -EINVAL)
                rc = io_uring_queue_init(depth, &d->ring, polled);
        }
    }
    if (rc < 0) {
        SET_ERR(err, errlen, "job %u: io_uring_queue_init(%u%s%s) failed for '%s': %s",
                w->job->index, depth, p.flags & IORING_SETUP_SQPOLL ? ", SQPOLL" : "",
                polled ? ", IOPOLL" : "", spec->filename, strerror(-rc));
        free(d);
        return rc;
    }
    d->ring_ready = 1;
    w->engine_data = d; /* cleanup frees it from here on */
    if (!(spec->flags & IOG_JOB_RING_NO_REGFILES))
        d->fixed_files = io_uring_register_files(&d->ring, w->fds, w->nfiles) == 0;
    if (spec->flags & IOG_JOB_RING_FIXEDBUFS)
        return register_buffers(w, d, err, errlen);
    return 0;
}

/* Called by the worker thread before its first request. */
static int uring_thread_start(struct iog_worker *w)
{
    struct uring_data *d = w->engine_data;
    if (!d->disabled)
        return 0;
    d->disabled = 0;
    /* liburing < 2.4 has no wrapper for this registration opcode */
    if (syscall(__NR_io_uring_register, d->ring.ring_fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0) < 0)
        return -errno;
    return 0;
}

static int uring_prep(struct iog_worker *w, struct iog_io *io)
{
    struct uring_data *d = w->engine_data;
    struct io_uring_sqe *sqe = io_uring_get_sqe(&d->ring);
    while (!sqe && d->sqpoll && io_uring_sqring_wait(&d->ring) >= 0)
        sqe = io_uring_get_sqe(&d->ring); /* not expected: the ring has room for two depths */
    if (!sqe)
        return -EBUSY;
    int fd = io->fd;
    if (d->fixed_files) {
        fd = 0;
        while (w->fds[fd] != io->fd) /* few files: the first is the usual case */
            fd++;
    }
    /* the part a short completion left, or the whole request */
    char *buf = (char *)io->buf + io->done;
    unsigned len = io->len - io->done;
    uint64_t off = io->offset + io->done;
    if (d->fixed_bufs) {
        int index = (int)(io - w->ios);
        if (io->dir == IOG_DIR_READ)
            io_uring_prep_read_fixed(sqe, fd, buf, len, off, index);
        else
            io_uring_prep_write_fixed(sqe, fd, buf, len, off, index);
    } else if (io->dir == IOG_DIR_READ) {
        io_uring_prep_read(sqe, fd, buf, len, off);
    } else {
        io_uring_prep_write(sqe, fd, buf, len, off);
    }
    sqe->ioprio = io->ioprio;
    if (d->fixed_files)
        sqe->flags |= IOSQE_FIXED_FILE;
    io_uring_sqe_set_data(sqe, io);
    d->prepped++;
    return 0;
}

static int uring_submit(struct iog_worker *w)
{
    struct uring_data *d = w->engine_data;
    int rc = io_uring_submit(&d->ring);
    unsigned prepped = d->prepped;
    d->prepped = 0;
    /* With SQPOLL, io_uring_submit counts the entries the polling thread has not
     * taken yet: 0 when it took them all at once. Every prepared entry is in the
     * ring by then, and the thread takes it: all of them are submitted. */
    if (d->sqpoll && rc >= 0)
        return (int)prepped;
    return rc;
}

static int uring_reap(struct iog_worker *w, unsigned min, struct iog_io **out, unsigned max,
                      uint64_t deadline_ns)
{
    struct uring_data *d = w->engine_data;
    if (max > d->ncqes)
        max = d->ncqes;
    if (min > max)
        min = max;
    unsigned n = io_uring_peek_batch_cqe(&d->ring, d->cqes, max);
    if (n < min) { /* wait until min are in the completion queue (n still are) */
        struct io_uring_cqe *cqe;
        int rc = 0;
        if (deadline_ns) {
            uint64_t now = clock_now_ns();
            if (now < deadline_ns) {
                uint64_t left = deadline_ns - now;
                struct __kernel_timespec ts = {.tv_sec = (long long)(left / 1000000000ull),
                                               .tv_nsec = (long long)(left % 1000000000ull)};
                rc = io_uring_wait_cqes(&d->ring, &cqe, min, &ts, NULL);
                if (rc == -ETIME)
                    rc = 0; /* the deadline passed: what is there */
            }
        } else {
            rc = io_uring_wait_cqe_nr(&d->ring, &cqe, min);
        }
        if (rc < 0 && n == 0)
            return rc;
        n = io_uring_peek_batch_cqe(&d->ring, d->cqes, max);
    }
    for (unsigned i = 0; i < n; i++) {
        struct iog_io *io = io_uring_cqe_get_data(d->cqes[i]);
        io->res = d->cqes[i]->res;
        out[i] = io;
    }
    io_uring_cq_advance(&d->ring, n);
    return (int)n;
}

static void uring_cleanup(struct iog_worker *w)
{
    struct uring_data *d = w->engine_data;
    if (!d)
        return;
    if (d->ring_ready)
        io_uring_queue_exit(&d->ring);
    free(d);
    w->engine_data = NULL;
}

const struct iog_engine engine_uring = {
    .name = "io_uring",
    .summary = "io_uring via liburing, iodepth requests in flight",
    .order = 10,
    .max_depth = IOG_DEPTH_MAX,
    .flags = IOG_ENGINE_DOES_IO | IOG_ENGINE_CMDPRIO | IOG_ENGINE_RING,
    .ops =
        {
            .init = uring_init,
            .thread_start = uring_thread_start,
            .prep = uring_prep,
            .submit = uring_submit,
            .reap = uring_reap,
            .cleanup = uring_cleanup,
        },
};
IOG_ENGINE_REGISTER(engine_uring);
