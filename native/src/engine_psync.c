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

const struct iog_engine engine_psync = {
    .name = "psync",
    .summary = "pread(2) and pwrite(2), one request at a time",
    .order = 30,
    .max_depth = 1,
    .flags = IOG_ENGINE_DOES_IO,
    .ops =
        {
            .prep = psync_prep,
        },
};
IOG_ENGINE_REGISTER(engine_psync);
