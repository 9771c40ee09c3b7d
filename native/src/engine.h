/*
 * engine.h - the interface between the worker loop and an I/O engine. An
 * engine is a table of operations; synchronous engines perform a request in
 * prep() and leave submit/reap unused, asynchronous ones queue in prep(),
 * hand queued requests to the kernel in submit() and collect completions in
 * reap().
 */
#ifndef IOGATE_ENGINE_H
#define IOGATE_ENGINE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

struct iog_worker;

/* One request slot; a worker owns iodepth of them. */
struct iog_io {
    uint64_t offset;
    uint64_t t_prep; /* when the request was prepared */
    uint64_t t_sub;  /* when submit() returned with it */
    void *buf;
    int64_t res; /* bytes transferred, or a negative errno */
    int fd;      /* the file this request goes to (a job may have several) */
    uint32_t len;
    uint32_t done;   /* bytes already transferred by earlier, short transfers */
    uint8_t dir;     /* enum iog_dir */
    uint8_t counted; /* prepared after the ramp ended */
};

struct iog_engine_ops {
    const char *name;
    /* prep() performs the whole request, continuing after short transfers:
     * res = len when every byte moved, else 0 (a transfer moved nothing: end
     * of file) or a negative errno, with done = the bytes moved before. */
    int sync;
    /* Per-worker setup after its file is open; message into err on failure. */
    int (*init)(struct iog_worker *w, char *err, size_t errlen);
    /* Optional: runs in the worker thread before its first request. */
    int (*thread_start)(struct iog_worker *w);
    /* Prepares (sync: performs) one request. 0 or a negative errno. An
     * asynchronous engine transfers [offset + done, offset + len) from
     * buf + done and reports that transfer's result in res: the worker
     * prepares the remainder again after a short one. */
    int (*prep)(struct iog_worker *w, struct iog_io *io);
    /* Hands prepared requests to the kernel: count submitted or -errno. */
    int (*submit)(struct iog_worker *w);
    /* Collects up to max completions into out, waiting for at least min of
     * them, but when deadline_ns (absolute, CLOCK_MONOTONIC) is not 0 not
     * past it: then fewer than min (even 0) may return. Count or -errno. */
    int (*reap)(struct iog_worker *w, unsigned min, struct iog_io **out, unsigned max,
                uint64_t deadline_ns);
    /* Releases what init() set up; safe to call when init() failed. */
    void (*cleanup)(struct iog_worker *w);
};

/* One system call of a synchronous engine: moves up to n bytes at offset
 * `off` of the request's file, from or into buf; what read(2) returns. */
typedef long (*iog_sync_step)(const struct iog_io *io, char *buf, size_t n, uint64_t off);

/* Performs a request of a synchronous engine with `step`, as prep() must:
 * retried on EINTR, continued after a short transfer until every byte moved,
 * a call moved nothing (end of file: res 0) or failed (res -errno); done =
 * the bytes moved. Inline, so that each engine's step is called directly. */
static inline void iog_sync_transfer(struct iog_io *io, iog_sync_step step)
{
    char *buf = io->buf;
    uint32_t done = 0;
    int64_t res = io->len;
    while (done < io->len) {
        long r = step(io, buf + done, io->len - done, io->offset + done);
        if (r == -EINTR)
            continue;
        if (r <= 0) { /* an error, or nothing moved (end of file) */
            res = r;
            break;
        }
        done += (uint32_t)r;
    }
    io->done = done;
    io->res = res;
}

extern const struct iog_engine_ops engine_null_ops;
extern const struct iog_engine_ops engine_psync_ops;
extern const struct iog_engine_ops engine_uring_ops;
extern const struct iog_engine_ops engine_libaio_ops;
extern const struct iog_engine_ops engine_sync_ops;

#endif
