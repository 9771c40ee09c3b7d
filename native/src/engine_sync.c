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

/* read(2) or write(2) at the file position, which follows the request: an
 * interrupted call that moved nothing left it alone, a short one advanced
 * it. -errno on failure. */
static long sync_step(const struct iog_io *io, char *buf, size_t n, uint64_t off)
{
    (void)off;
    ssize_t r = io->dir == IOG_DIR_READ ? read(io->fd, buf, n) : write(io->fd, buf, n);
    return r < 0 ? -errno : (long)r;
}

static int sync_prep(struct iog_worker *w, struct iog_io *io)
{
    (void)w;
    io->done = 0;
    if (lseek(io->fd, (off_t)io->offset, SEEK_SET) < 0) {
        io->res = -errno;
        return 0;
    }
    iog_sync_transfer(io, sync_step);
    return 0;
}

const struct iog_engine engine_sync = {
    .name = "sync",
    .summary = "lseek(2) then read(2) or write(2), one request at a time",
    .order = 40,
    .max_depth = 1,
    .flags = IOG_ENGINE_DOES_IO,
    .ops =
        {
            .prep = sync_prep,
        },
};
IOG_ENGINE_REGISTER(engine_sync);
