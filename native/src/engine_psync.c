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

static int psync_prep(struct iog_worker *w, struct iog_io *io)
{
    (void)w;
    char *buf = io->buf;
    uint32_t done = 0;
    int64_t res = io->len;
    while (done < io->len) {
        ssize_t r;
        off_t off = (off_t)(io->offset + done);
        if (io->dir == IOG_DIR_READ)
            r = pread(io->fd, buf + done, io->len - done, off);
        else
            r = pwrite(io->fd, buf + done, io->len - done, off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) { /* an error, or nothing moved (end of file) */
            res = r < 0 ? -errno : 0;
            break;
        }
        done += (uint32_t)r;
    }
    io->done = done;
    io->res = res;
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
