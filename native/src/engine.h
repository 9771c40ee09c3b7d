/*
 * engine.h - the interface between the worker loop and an I/O engine. An
 * engine is a descriptor (name, summary, capabilities) with a table of
 * operations; synchronous engines perform a request in prep() and have no
 * submit/reap, asynchronous ones queue in prep(), hand queued requests to the
 * kernel in submit() and collect completions in reap(). Each engine registers
 * its descriptor from its own file (IOG_ENGINE_REGISTER); engines.c lists
 * them.
 */
#ifndef IOGATE_ENGINE_H
#define IOGATE_ENGINE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "iogate.h"

struct iog_worker;

/* The deepest queue any engine keeps: max_depth of engines with no limit of
 * their own, and the limit of iodepth. */
#define IOG_DEPTH_MAX 4096

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
    uint8_t prio;    /* carries a command priority (iog_job_spec.cmdprio) */
    uint16_t ioprio; /* the request's I/O priority for the engine, 0: none */
};

/* What an engine does. prep is required; every other operation is
 * optional (NULL: not needed). A synchronous engine performs a request in
 * prep() and has no submit/reap; an asynchronous one has both. */
struct iog_engine_ops {
    /* Optional: per-worker setup after its files are open; message into err on
     * failure. */
    int (*init)(struct iog_worker *w, char *err, size_t errlen);
    /* Optional: runs in the worker thread before its first request. */
    int (*thread_start)(struct iog_worker *w);
    /* Prepares one request. A synchronous engine performs the whole request,
     * continuing after short transfers: res = len when every byte moved, else
     * 0 (a transfer moved nothing: end of file) or a negative errno, with
     * done = the bytes moved before. An asynchronous engine transfers
     * [offset + done, offset + len) from buf + done and reports that
     * transfer's result in res: the worker prepares the remainder again after
     * a short one. 0 or a negative errno. */
    int (*prep)(struct iog_worker *w, struct iog_io *io);
    /* Asynchronous engines: hands prepared requests to the kernel: count
     * submitted or -errno. */
    int (*submit)(struct iog_worker *w);
    /* Asynchronous engines: collects up to max completions into out, waiting
     * for at least min of them, but when deadline_ns (absolute,
     * CLOCK_MONOTONIC) is not 0 not past it: then fewer than min (even 0) may
     * return. Count or -errno. */
    int (*reap)(struct iog_worker *w, unsigned min, struct iog_io **out, unsigned max,
                uint64_t deadline_ns);
    /* Optional: makes the worker's writes durable (sync_every) with nothing
     * in flight, kind an enum iog_sync_kind; 0 or a positive errno. NULL:
     * fsync(2) or fdatasync(2) of every file. */
    int (*sync)(struct iog_worker *w, int kind);
    /* Optional: releases what init() set up; safe to call when init() failed
     * and more than once. */
    void (*cleanup)(struct iog_worker *w);
};

/* One I/O engine: what it is, what it can do, and its operations. Every
 * engine_*.c defines one and registers it with IOG_ENGINE_REGISTER; nothing
 * else lists the engines. */
struct iog_engine {
    const char *name;    /* < IOG_ENGINE_NAME_MAX bytes, unique                  */
    const char *summary; /* one line: what it issues, < IOG_ENGINE_SUMMARY_MAX    */
    uint32_t order;      /* place in the listing (ascending; ties by name)       */
    uint32_t max_depth;  /* requests one worker keeps in flight at most; 1: sync  */
    uint32_t flags;      /* IOG_ENGINE_* capabilities (iogate.h)                  */
    struct iog_engine_ops ops;
};

/* Registers `desc` (a const struct iog_engine) with the library: a pointer to
 * it goes into the linker section iog_engines, which engines.c walks. */
#define IOG_ENGINE_REGISTER(desc)                                                                  \
    static const struct iog_engine *const desc##_registered                                        \
        __attribute__((used, section("iog_engines"), aligned(sizeof(void *)))) = &(desc)

/* engines.c: the registered engines in listing order, and lookup by name. */
uint32_t engine_count(void);
const struct iog_engine *engine_at(uint32_t index);
const struct iog_engine *engine_find(const char *name);

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

/* trim.c: performs the trim of a request on its file, synchronously:
 * BLKDISCARD when `blkdev` (the file is a block device), else a hole punched
 * with fallocate(PUNCH_HOLE | KEEP_SIZE). res = len, or -errno (EOPNOTSUPP
 * from a file system that cannot punch holes); done = 0. The worker loop
 * calls it for every engine that does I/O: trims are not queued. */
void iog_trim(struct iog_io *io, int blkdev);

#endif
