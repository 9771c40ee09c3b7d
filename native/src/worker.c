/*
 * worker.c - one worker thread of a job: its setup before the run (file
 * descriptor, aligned buffers, request slots, engine state), the I/O loop
 * that decides what to issue next (direction, offset, when to stop) and
 * counts every completion in the thread's own statistics, and its teardown.
 * The loop takes no lock and allocates nothing.
 *
 * Counting: a request is counted (stats, histograms, series, the size
 * budget) when it was prepared at or after the end of the ramp, so nothing
 * completed during the ramp is counted. Without TIME_BASED a thread stops
 * once it has issued `size` counted bytes (one pass over the region) or
 * runtime_ns after the ramp, whichever comes first; with it, it stops at
 * ramp + runtime. Its counted time runs from the end of the ramp until its
 * loop ended (in-flight requests drained). Sequential jobs (including the
 * rw mix) share one offset that advances by the request length and wraps to
 * the region start; random jobs draw uniform block numbers of the request's
 * own block size, with replacement. A failed request counts as an error
 * with its errno; a short one as EIO. Synchronous engines report slat 0 and
 * clat = lat = the time around the request.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "session.h"

static int job_is_random(const struct iog_job_spec *spec)
{
    return spec->rw == IOG_RW_RANDREAD || spec->rw == IOG_RW_RANDWRITE || spec->rw == IOG_RW_RANDRW;
}

static int job_is_mixed(const struct iog_job_spec *spec)
{
    return spec->rw == IOG_RW_RW || spec->rw == IOG_RW_RANDRW;
}

int worker_setup(struct iog_worker *w, char *err, size_t errlen)
{
    const struct iog_job_spec *spec = &w->job->spec;
    uint32_t depth = spec->iodepth;
    int rc;

    w->fd = -1;
    for (int d = 0; d < IOG_DIR_COUNT; d++) {
        stats_init(&w->st[d]);
        w->nblocks[d] = spec->bs[d] ? spec->size / spec->bs[d] : 0;
    }
    rng_seed(&w->rng, spec->seed, w->index);
    w->region_start = spec->offset;
    w->region_end = spec->offset + spec->size;
    w->seq_off = w->region_start;

    w->ios = calloc(depth, sizeof(*w->ios));
    w->free_slots = calloc(depth, sizeof(*w->free_slots));
    w->done = calloc(depth, sizeof(*w->done));
    w->pending = calloc(depth, sizeof(*w->pending));
    if (!w->ios || !w->free_slots || !w->done || !w->pending)
        goto nomem;

    if (w->ops != &engine_null_ops) {
        uint64_t maxbs = spec->bs[0] > spec->bs[1] ? spec->bs[0] : spec->bs[1];
        size_t stride = (size_t)((maxbs + 4095) & ~UINT64_C(4095));
        if (posix_memalign(&w->bufmem, 4096, stride * depth) != 0) {
            w->bufmem = NULL;
            goto nomem;
        }
        rng_fill_nonzero(&w->rng, w->bufmem, stride * depth);
        for (uint32_t i = 0; i < depth; i++)
            w->ios[i].buf = (char *)w->bufmem + stride * i;
        rc = layout_open(w->job, &w->fd, err, errlen);
        if (rc < 0)
            return rc;
    }
    for (uint32_t i = 0; i < depth; i++)
        w->free_slots[i] = &w->ios[depth - 1 - i];
    return w->ops->init(w, err, errlen);

nomem:
    SET_ERR(err, errlen, "job %u: out of memory for worker %u", w->job->index, w->index);
    return -ENOMEM;
}

void worker_teardown(struct iog_worker *w)
{
    if (w->ops)
        w->ops->cleanup(w);
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
    free(w->bufmem);
    free(w->ios);
    free(w->free_slots);
    free(w->done);
    free(w->pending);
    w->bufmem = NULL;
    w->pending = NULL;
    w->ios = NULL;
    w->free_slots = NULL;
    w->done = NULL;
}

/* Decides the next request at time `now`; 0 when the worker must stop. */
static inline int plan_io(struct iog_worker *w, struct iog_io *io, uint64_t now)
{
    const struct iog_job_spec *spec = &w->job->spec;
    if (PUB_LOAD(&w->s->cancel))
        return 0;
    io->counted = now >= w->count_start;
    if (io->counted) {
        if (w->stop_at && now >= w->stop_at)
            return 0;
        if (!(spec->flags & IOG_JOB_TIME_BASED) && w->issued >= spec->size)
            return 0;
    }
    uint32_t dir;
    if (job_is_mixed(spec))
        dir = rng_below(&w->rng, 100) < spec->rwmixread ? IOG_DIR_READ : IOG_DIR_WRITE;
    else
        dir = job_fixed_dir(spec);
    uint64_t len = spec->bs[dir];
    uint64_t off;
    if (job_is_random(spec)) {
        off = w->region_start + rng_below(&w->rng, w->nblocks[dir]) * len;
    } else {
        off = w->seq_off;
        if (off + len > w->region_end)
            off = w->region_start;
        w->seq_off = off + len;
    }
    if (io->counted)
        w->issued += len;
    io->dir = (uint8_t)dir;
    io->len = (uint32_t)len;
    io->offset = off;
    return 1;
}

static inline void complete_io(struct iog_worker *w, struct iog_io *io, uint64_t slat,
                               uint64_t clat, uint64_t lat, uint64_t t_done)
{
    if (!io->counted)
        return;
    struct thread_dir_stats *st = &w->st[io->dir];
    if (io->res == (int64_t)io->len)
        stats_record_io(st, io->len, slat, clat, lat);
    else
        stats_record_error(st, io->res < 0 ? (int)-io->res : EIO, io->offset, t_done);
}

/* Synchronous engines: one request at a time, two clock reads per request. */
static void run_sync(struct iog_worker *w)
{
    struct iog_io io = {.buf = w->ios[0].buf};
    const struct iog_engine_ops *ops = w->ops;
    for (;;) {
        uint64_t t0 = clock_now_ns();
        if (!plan_io(w, &io, t0))
            break;
        ops->prep(w, &io);
        uint64_t t1 = clock_now_ns();
        complete_io(w, &io, 0, t1 - t0, t1 - t0, t1);
    }
}

static int transient(int rc)
{
    return rc == -EINTR || rc == -EAGAIN || rc == -EBUSY;
}

/* Requests handed to the kernel per submit. Submitting each request as soon
 * as it is prepared gets the device working earliest: measured on a virtio
 * disk at iodepth 32, batching a whole refill into one submit cost ~10% IOPS
 * because every request of the batch waited for the whole submission. */
#define SUBMIT_BATCH 1

/* Asynchronous engines: keep up to iodepth requests in flight; after a stop
 * (limit reached, cancel, fatal error) drain what is still in flight.
 * Prepared requests the kernel did not take yet (a short or transient
 * submit) stay queued, in order, and go with the next submit. */
static void run_async(struct iog_worker *w)
{
    const struct iog_engine_ops *ops = w->ops;
    uint32_t depth = w->job->spec.iodepth;
    uint32_t nfree = depth, inflight = 0, npending = 0;
    struct iog_io **pending = w->pending;
    int stopping = 0;

    for (;;) {
        while (!stopping && nfree > 0 && npending < SUBMIT_BATCH) {
            struct iog_io *io = w->free_slots[nfree - 1];
            uint64_t t = clock_now_ns();
            if (!plan_io(w, io, t)) {
                stopping = 1;
                break;
            }
            io->t_prep = t;
            int rc = ops->prep(w, io);
            if (rc < 0) { /* no room in the queue: not expected, stop cleanly */
                io->res = rc;
                complete_io(w, io, 0, 0, 0, t);
                stopping = 1;
                break;
            }
            nfree--;
            pending[npending++] = io;
        }
        if (npending > 0) {
            int rc = ops->submit(w);
            if (rc > 0) {
                uint32_t took = (uint32_t)rc < npending ? (uint32_t)rc : npending;
                uint64_t t = clock_now_ns();
                for (uint32_t i = 0; i < took; i++)
                    pending[i]->t_sub = t;
                inflight += took;
                npending -= took;
                memmove(pending, pending + took, npending * sizeof(*pending));
            } else if (rc == 0 || transient(rc)) {
                if (inflight == 0) {
                    sched_yield(); /* nothing to reap: retry the submit */
                    continue;
                }
            } else {
                /* The queue is unusable: fail what was never submitted and
                 * only collect what is already in flight. */
                uint64_t t = clock_now_ns();
                for (uint32_t i = 0; i < npending; i++) {
                    pending[i]->res = rc;
                    complete_io(w, pending[i], 0, 0, 0, t);
                }
                npending = 0;
                stopping = 1;
            }
        }
        if (!stopping && nfree > 0 && npending == 0)
            continue; /* room for more: issue before reaping */
        if (inflight == 0) {
            if (stopping && npending == 0)
                break;
            continue;
        }
        int n = ops->reap(w, 1, w->done, depth, 0);
        if (n < 0) {
            if (transient(n))
                continue;
            break; /* completions cannot be collected any more */
        }
        uint64_t t = clock_now_ns();
        for (int i = 0; i < n; i++) {
            struct iog_io *io = w->done[i];
            complete_io(w, io, io->t_sub - io->t_prep, t - io->t_sub, t - io->t_prep, t);
            w->free_slots[nfree++] = io;
        }
        inflight -= (uint32_t)n;
    }
}

void *worker_main(void *arg)
{
    struct iog_worker *w = arg;
    struct iog_session *s = w->s;
    int rc = w->ops->thread_start ? w->ops->thread_start(w) : 0;
    if (rc < 0) /* the engine cannot run here: every request would fail */
        stats_record_error(&w->st[job_fixed_dir(&w->job->spec)], -rc, w->region_start,
                           clock_now_ns());
    else if (w->ops->sync)
        run_sync(w);
    else
        run_async(w);
    /* Counted time runs until the loop ended (last completion or the stop
     * decision), so a time-based job reports at least its runtime. */
    uint64_t t_end = clock_now_ns();
    uint64_t runtime = t_end > w->count_start ? t_end - w->count_start : 0;
    PUB_STORE(&w->runtime_ns, runtime);
    worker_teardown(w);

    pthread_mutex_lock(&s->lock);
    PUB_STORE(&w->job->threads_done, w->job->threads_done + 1);
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    return NULL;
}
