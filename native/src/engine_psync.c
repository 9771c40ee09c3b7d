/*
 * engine_psync.c - the psync engine: one pread(2) or pwrite(2) per request,
 * on the request's file, performed in prep(), retried on EINTR. A short
 * transfer is continued with the remainder until the request is done or a
 * call moves nothing (end of file) or fails. Its slat is 0 and clat = lat =
 * the time around the system calls.
 */
#include <errno.h>
#include <unistd.h>

#include "engine.h"
#include "session.h"

static int psync_init(struct iog_worker *w, char *err, size_t errlen)
{
    (void)w;
    (void)err;
    (void)errlen;
    return 0;
}

/* pread(2) or pwrite(2) at the offset: -errno on failure */
static long psync_step(const struct iog_io *io, char *buf, size_t n, uint64_t off)
{
    ssize_t r = io->dir == IOG_DIR_READ ? pread(io->fd, buf, n, (off_t)off)
                                        : pwrite(io->fd, buf, n, (off_t)off);
    return r < 0 ? -errno : (long)r;
}

static int psync_prep(struct iog_worker *w, struct iog_io *io)
{
    (void)w;
    iog_sync_transfer(io, psync_step);
    return 0;
}

static void psync_cleanup(struct iog_worker *w)
{
    (void)w;
}

const struct iog_engine_ops engine_psync_ops = {
    .name = "psync",
    .sync = 1,
    .init = psync_init,
    .prep = psync_prep,
    .cleanup = psync_cleanup,
};
