/*
 * engine_posixaio.c - the posixaio engine: POSIX AIO, aio_read(3) and
 * aio_write(3), up to iodepth requests in flight per worker. prep() fills a
 * free aiocb and queues it, submit() hands the queue to the C library in
 * order, reap() collects the finished requests (aio_error, aio_return) and
 * waits for more with aio_suspend(3), no later than the caller's deadline.
 *
 * It stands for programs written against the portable API. The GNU C
 * library performs these requests with pread/pwrite in a pool of threads of
 * its own, one request of a file descriptor at a time, so that the realized
 * queue depth at the device stays near 1 per file whatever iodepth says,
 * while slat and clat show what the API costs. A short completion is
 * reported as it is; the worker prepares the remainder again (see
 * iog_io.done).
 */
#include <aio.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "engine.h"
#include "internal.h"

struct paio_slot {
    struct aiocb cb;
    struct iog_io *io;
};

struct paio_data {
    unsigned depth;
    unsigned nfree;               /* slots neither queued nor in flight */
    unsigned nqueued;             /* prepared, not yet handed to the library */
    unsigned ninflight;           /* handed to the library, not yet collected */
    struct paio_slot **free;      /* stack of depth entries */
    struct paio_slot **queued;    /* in preparation order */
    struct paio_slot **inflight;  /* in no particular order */
    const struct aiocb **suspend; /* the list aio_suspend waits on */
    struct paio_slot slots[];
};

/* Waits until nothing of this worker is in flight any more: the library's
 * threads still use those aiocbs and buffers. */
static void paio_drain(struct paio_data *d)
{
    for (unsigned i = 0; i < d->ninflight; i++)
        aio_cancel(d->inflight[i]->cb.aio_fildes, &d->inflight[i]->cb);
    while (d->ninflight > 0) {
        struct paio_slot *s = d->inflight[d->ninflight - 1];
        int e = aio_error(&s->cb);
        if (e == EINPROGRESS) {
            const struct aiocb *one[1] = {&s->cb};
            aio_suspend(one, 1, NULL);
            continue;
        }
        aio_return(&s->cb);
        d->ninflight--;
    }
}

static void paio_cleanup(struct iog_worker *w)
{
    struct paio_data *d = w->engine_data;
    if (!d)
        return;
    paio_drain(d);
    free(d->free);
    free(d->queued);
    free(d->inflight);
    free(d->suspend);
    free(d);
    w->engine_data = NULL;
}

static int paio_init(struct iog_worker *w, char *err, size_t errlen)
{
    unsigned depth = w->job->spec.iodepth;
    struct paio_data *d = calloc(1, sizeof(*d) + depth * sizeof(d->slots[0]));
    if (d) {
        w->engine_data = d;
        d->depth = depth;
        d->free = calloc(depth, sizeof(*d->free));
        d->queued = calloc(depth, sizeof(*d->queued));
        d->inflight = calloc(depth, sizeof(*d->inflight));
        d->suspend = calloc(depth, sizeof(*d->suspend));
    }
    if (!d || !d->free || !d->queued || !d->inflight || !d->suspend) {
        SET_ERR(err, errlen, "job %u: out of memory for posixaio state", w->job->index);
        paio_cleanup(w);
        return -ENOMEM;
    }
    for (unsigned i = 0; i < depth; i++)
        d->free[i] = &d->slots[i];
    d->nfree = depth;
    return 0;
}

static int paio_prep(struct iog_worker *w, struct iog_io *io)
{
    struct paio_data *d = w->engine_data;
    if (d->nfree == 0)
        return -EBUSY;
    struct paio_slot *s = d->free[--d->nfree];
    /* the part a short completion left, or the whole request */
    memset(&s->cb, 0, sizeof(s->cb));
    s->cb.aio_fildes = io->fd;
    s->cb.aio_offset = (off_t)(io->offset + io->done);
    s->cb.aio_buf = (char *)io->buf + io->done;
    s->cb.aio_nbytes = io->len - io->done;
    s->cb.aio_sigevent.sigev_notify = SIGEV_NONE;
    s->io = io;
    d->queued[d->nqueued++] = s;
    return 0;
}

static int paio_submit(struct iog_worker *w)
{
    struct paio_data *d = w->engine_data;
    if (d->nqueued == 0)
        return 0;
    unsigned n = 0;
    while (n < d->nqueued) {
        struct paio_slot *s = d->queued[n];
        int r = s->io->dir == IOG_DIR_READ ? aio_read(&s->cb) : aio_write(&s->cb);
        if (r < 0) {
            int e = errno;
            if (n > 0 || e == EAGAIN)
                break; /* the rest goes with the next submit */
            /* refused for good: the worker fails every queued request */
            while (d->nqueued > 0)
                d->free[d->nfree++] = d->queued[--d->nqueued];
            return -e;
        }
        d->inflight[d->ninflight++] = s;
        n++;
    }
    d->nqueued -= n;
    memmove(d->queued, d->queued + n, d->nqueued * sizeof(*d->queued));
    return n > 0 ? (int)n : -EAGAIN;
}

static int paio_reap(struct iog_worker *w, unsigned min, struct iog_io **out, unsigned max,
                     uint64_t deadline_ns)
{
    struct paio_data *d = w->engine_data;
    unsigned n = 0;
    for (;;) {
        for (unsigned i = 0; i < d->ninflight && n < max;) {
            struct paio_slot *s = d->inflight[i];
            int e = aio_error(&s->cb);
            if (e == EINPROGRESS) {
                i++;
                continue;
            }
            ssize_t r = aio_return(&s->cb);
            s->io->res = e ? -(int64_t)e : (int64_t)r;
            out[n++] = s->io;
            d->inflight[i] = d->inflight[--d->ninflight];
            d->free[d->nfree++] = s;
        }
        if (n >= min || n == max || d->ninflight == 0)
            return (int)n;
        struct timespec ts, *timeout = NULL;
        if (deadline_ns != 0) {
            uint64_t now = clock_now_ns();
            if (now >= deadline_ns)
                return (int)n;
            ts = clock_to_timespec(deadline_ns - now);
            timeout = &ts;
        }
        for (unsigned i = 0; i < d->ninflight; i++)
            d->suspend[i] = &d->inflight[i]->cb;
        if (aio_suspend(d->suspend, (int)d->ninflight, timeout) < 0 && errno != EAGAIN &&
            errno != EINTR)
            return n > 0 ? (int)n : -errno;
    }
}

const struct iog_engine engine_posixaio = {
    .name = "posixaio",
    .summary = "POSIX AIO (aio_read, aio_write), iodepth requests in flight",
    .order = 25,
    .max_depth = IOG_DEPTH_MAX,
    .flags = IOG_ENGINE_DOES_IO,
    .ops =
        {
            .init = paio_init,
            .prep = paio_prep,
            .submit = paio_submit,
            .reap = paio_reap,
            .cleanup = paio_cleanup,
        },
};
IOG_ENGINE_REGISTER(engine_posixaio);
