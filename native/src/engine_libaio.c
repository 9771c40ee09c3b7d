/*
 * engine_libaio.c - the libaio engine (Linux native AIO): one AIO context of
 * iodepth events per worker, with its iocbs and event array allocated once
 * at init. prep() fills a free iocb and queues it, submit() hands the queue
 * to io_submit(2), reap() collects events with io_getevents(2), waiting no
 * later than the caller's deadline.
 *
 * Native AIO is only asynchronous with O_DIRECT (IOG_JOB_DIRECT). On buffered
 * files the kernel performs the copy inside io_submit(), so the request is
 * already complete when submit returns: the job still runs, but its slat
 * holds the I/O time, clat is near zero and the realized queue depth stays
 * near 1 whatever iodepth says. A short completion is reported as it is
 * (res < the bytes asked for); the worker prepares the remainder again (see
 * iog_io.done). A request's I/O priority goes in its iocb (aio_reqprio with
 * IOCB_FLAG_IOPRIO).
 */
#include <errno.h>
#include <libaio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "engine.h"
#include "internal.h"

#ifndef IOCB_FLAG_IOPRIO
#define IOCB_FLAG_IOPRIO (1 << 1) /* the kernel's ABI (linux/aio_abi.h): aio_reqprio is set */
#endif

struct libaio_data {
    io_context_t ctx;
    int ctx_ready;
    unsigned depth;
    unsigned nfree;          /* iocbs neither queued nor in flight */
    unsigned nqueued;        /* prepared, not yet taken by io_submit */
    struct iocb **free;      /* stack of depth entries */
    struct iocb **queued;    /* in preparation order */
    struct io_event *events; /* one reap's completions */
    struct iocb iocbs[];
};

static void libaio_cleanup(struct iog_worker *w)
{
    struct libaio_data *d = w->engine_data;
    if (!d)
        return;
    if (d->ctx_ready)
        io_destroy(d->ctx); /* waits for (or cancels) what is still in flight */
    free(d->free);
    free(d->queued);
    free(d->events);
    free(d);
    w->engine_data = NULL;
}

static int libaio_init(struct iog_worker *w, char *err, size_t errlen)
{
    unsigned depth = w->job->spec.iodepth;
    struct libaio_data *d = calloc(1, sizeof(*d) + depth * sizeof(d->iocbs[0]));
    if (!d) {
        SET_ERR(err, errlen, "job %u: out of memory for libaio state", w->job->index);
        return -ENOMEM;
    }
    w->engine_data = d;
    int rc = -ENOMEM;
    d->depth = depth;
    d->free = calloc(depth, sizeof(*d->free));
    d->queued = calloc(depth, sizeof(*d->queued));
    d->events = calloc(depth, sizeof(*d->events));
    if (!d->free || !d->queued || !d->events)
        goto nomem;
    for (unsigned i = 0; i < depth; i++)
        d->free[i] = &d->iocbs[i];
    d->nfree = depth;
    rc = io_setup((int)depth, &d->ctx); /* libaio returns -errno */
    if (rc < 0) {
        SET_ERR(err, errlen, "job %u: io_setup(%u) failed for '%s': %s%s", w->job->index, depth,
                w->job->spec.filename, strerror(-rc),
                rc == -EAGAIN ? " (the system-wide limit fs.aio-max-nr is reached)" : "");
        goto out;
    }
    d->ctx_ready = 1;
    return 0;
nomem:
    SET_ERR(err, errlen, "job %u: out of memory for libaio state", w->job->index);
out:
    libaio_cleanup(w);
    return rc;
}

static int libaio_prep(struct iog_worker *w, struct iog_io *io)
{
    struct libaio_data *d = w->engine_data;
    if (d->nfree == 0)
        return -EBUSY;
    struct iocb *cb = d->free[--d->nfree];
    /* the part a short completion left, or the whole request */
    char *buf = (char *)io->buf + io->done;
    size_t len = io->len - io->done;
    long long off = (long long)(io->offset + io->done);
    if (io->dir == IOG_DIR_READ)
        io_prep_pread(cb, io->fd, buf, len, off);
    else
        io_prep_pwrite(cb, io->fd, buf, len, off);
    if (io->ioprio) {
        cb->aio_reqprio = (short)io->ioprio;
        cb->u.c.flags |= IOCB_FLAG_IOPRIO;
    }
    cb->data = io;
    d->queued[d->nqueued++] = cb;
    return 0;
}

static int libaio_submit(struct iog_worker *w)
{
    struct libaio_data *d = w->engine_data;
    if (d->nqueued == 0)
        return 0;
    int rc;
    do
        rc = io_submit(d->ctx, (long)d->nqueued, d->queued);
    while (rc == -EINTR);
    if (rc > 0) {
        /* the kernel takes a prefix; the rest goes with the next submit */
        d->nqueued -= (unsigned)rc;
        memmove(d->queued, d->queued + rc, d->nqueued * sizeof(*d->queued));
    } else if (rc < 0 && rc != -EAGAIN) {
        /* the first queued request was refused for good: the worker fails
         * every queued request, so their iocbs are free again */
        while (d->nqueued > 0)
            d->free[d->nfree++] = d->queued[--d->nqueued];
    }
    return rc;
}

/* The result of a completion: bytes moved, or a negative errno. */
static int64_t event_result(const struct io_event *ev)
{
    long res = (long)ev->res, res2 = (long)ev->res2;
    if (res < 0)
        return res;
    return res2 < 0 ? res2 : res;
}

static int libaio_reap(struct iog_worker *w, unsigned min, struct iog_io **out, unsigned max,
                       uint64_t deadline_ns)
{
    struct libaio_data *d = w->engine_data;
    if (max > d->depth)
        max = d->depth;
    if (min > max)
        min = max;
    int rc;
    for (;;) {
        struct timespec ts, *timeout = NULL;
        if (deadline_ns != 0) {
            uint64_t now = clock_now_ns();
            ts = clock_to_timespec(deadline_ns > now ? deadline_ns - now : 0);
            timeout = &ts;
        }
        rc = io_getevents(d->ctx, (long)min, (long)max, d->events, timeout);
        if (rc != -EINTR)
            break;
    }
    if (rc < 0)
        return rc;
    for (int i = 0; i < rc; i++) {
        struct iog_io *io = d->events[i].data;
        io->res = event_result(&d->events[i]);
        d->free[d->nfree++] = d->events[i].obj;
        out[i] = io;
    }
    return rc;
}

const struct iog_engine engine_libaio = {
    .name = "libaio",
    .summary = "Linux native AIO (libaio), iodepth requests in flight",
    .order = 20,
    .max_depth = IOG_DEPTH_MAX,
    .flags = IOG_ENGINE_DOES_IO | IOG_ENGINE_CMDPRIO,
    .ops =
        {
            .init = libaio_init,
            .prep = libaio_prep,
            .submit = libaio_submit,
            .reap = libaio_reap,
            .cleanup = libaio_cleanup,
        },
};
IOG_ENGINE_REGISTER(engine_libaio);
