/*
 * engine.h - the interface between the worker loop and an I/O engine. An
 * engine is a table of operations; synchronous engines perform a request in
 * prep() and leave submit/reap unused, asynchronous ones queue in prep(),
 * hand queued requests to the kernel in submit() and collect completions in
 * reap().
 */
#ifndef IOGATE_ENGINE_H
#define IOGATE_ENGINE_H

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

extern const struct iog_engine_ops engine_null_ops;
extern const struct iog_engine_ops engine_psync_ops;
extern const struct iog_engine_ops engine_uring_ops;
extern const struct iog_engine_ops engine_libaio_ops;
extern const struct iog_engine_ops engine_sync_ops;

#endif
