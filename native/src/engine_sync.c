/*
 * engine_sync.c - the sync engine: lseek(2) to the request's offset, then
 * read(2) or write(2), performed in prep(), iodepth 1. It stands for programs
 * that do plain read/write I/O: two system calls per request where psync
 * makes one, and the request moves the descriptor's file position, which is
 * shared by everything using the same open file description, so a worker's
 * descriptors must be its own. Retried on EINTR; a short transfer is
 * continued with the remainder until the request is done or a call moves
 * nothing (end of file) or fails.
 */
#include <errno.h>
#include <sys/types.h>
#include <unistd.h>

#include "engine.h"
#include "iogate.h"

static int sync_init(struct iog_worker *w, char *err, size_t errlen)
{
    (void)w;
    (void)err;
    (void)errlen;
    return 0;
}

static int sync_prep(struct iog_worker *w, struct iog_io *io)
{
    (void)w;
    io->done = 0;
    if (lseek(io->fd, (off_t)io->offset, SEEK_SET) < 0) {
        io->res = -errno;
        return 0;
    }
    /* An interrupted call that moved nothing left the position alone, and a
     * short one advanced it: the remainder follows from there. */
    char *buf = io->buf;
    uint32_t done = 0;
    int64_t res = io->len;
    while (done < io->len) {
        ssize_t r;
        if (io->dir == IOG_DIR_READ)
            r = read(io->fd, buf + done, io->len - done);
        else
            r = write(io->fd, buf + done, io->len - done);
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

static void sync_cleanup(struct iog_worker *w)
{
    (void)w;
}

const struct iog_engine_ops engine_sync_ops = {
    .name = "sync",
    .sync = 1,
    .init = sync_init,
    .prep = sync_prep,
    .cleanup = sync_cleanup,
};
