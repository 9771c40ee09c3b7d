/*
 * engine_uring.c - the io_uring engine (liburing): a ring of iodepth entries
 * per worker with its files registered when the kernel allows it. prep()
 * fills an SQE, submit() hands every queued SQE to the kernel, reap() waits
 * for at least `min` CQEs (but not past a deadline) and then takes all that
 * are ready in one batch. A request's I/O priority goes in its SQE.
 * A short completion is reported as it is (res < the bytes asked for); the
 * worker prepares the remainder again (see iog_io.done).
 */
#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "engine.h"
#include "internal.h"

struct uring_data {
    struct io_uring ring;
    int ring_ready;
    int fixed_files; /* the worker's fds are registered, fds[i] as index i */
    int disabled;    /* created disabled; the worker thread enables it */
    unsigned ncqes;
    struct io_uring_cqe *cqes[];
};

static int uring_init(struct iog_worker *w, char *err, size_t errlen)
{
    unsigned depth = w->job->spec.iodepth;
    struct uring_data *d = calloc(1, sizeof(*d) + depth * sizeof(d->cqes[0]));
    if (!d) {
        SET_ERR(err, errlen, "job %u: out of memory for io_uring state", w->job->index);
        return -ENOMEM;
    }
    d->ncqes = depth;
    /* Task work runs when this worker enters the kernel anyway rather than
     * through interrupts; the ring is enabled by its worker thread, which
     * becomes its only submitter. Older kernels get a plain ring. */
    struct io_uring_params p;
    memset(&p, 0, sizeof(p));
    p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_R_DISABLED;
    int rc = io_uring_queue_init_params(depth, &d->ring, &p);
    if (rc == 0) {
        d->disabled = 1;
    } else if (rc == -EINVAL) {
        memset(&p, 0, sizeof(p));
        p.flags = IORING_SETUP_COOP_TASKRUN;
        rc = io_uring_queue_init_params(depth, &d->ring, &p);
        if (rc == -EINVAL)
            rc = io_uring_queue_init(depth, &d->ring, 0);
    }
    if (rc < 0) {
        SET_ERR(err, errlen, "job %u: io_uring_queue_init(%u) failed for '%s': %s", w->job->index,
                depth, w->job->spec.filename, strerror(-rc));
        free(d);
        return rc;
    }
    d->ring_ready = 1;
    d->fixed_files = io_uring_register_files(&d->ring, w->fds, w->nfiles) == 0;
    w->engine_data = d;
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
    if (io->dir == IOG_DIR_READ)
        io_uring_prep_read(sqe, fd, buf, len, off);
    else
        io_uring_prep_write(sqe, fd, buf, len, off);
    sqe->ioprio = io->ioprio;
    if (d->fixed_files)
        sqe->flags |= IOSQE_FIXED_FILE;
    io_uring_sqe_set_data(sqe, io);
    return 0;
}

static int uring_submit(struct iog_worker *w)
{
    struct uring_data *d = w->engine_data;
    return io_uring_submit(&d->ring);
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
    .flags = IOG_ENGINE_DOES_IO | IOG_ENGINE_CMDPRIO,
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
