/*
 * engine_psync.c - the psync engine: one pread(2) or pwrite(2) per request,
 * on the request's file, performed in prep(), retried on EINTR. Its slat is 0 and clat = lat = the
 * time around the system call.
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
    ssize_t r;
    do {
        if (io->dir == IOG_DIR_READ)
            r = pread(io->fd, io->buf, io->len, (off_t)io->offset);
        else
            r = pwrite(io->fd, io->buf, io->len, (off_t)io->offset);
    } while (r < 0 && errno == EINTR);
    io->res = r < 0 ? -errno : r;
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
