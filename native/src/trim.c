/*
 * trim.c - the trim of one request, shared by every engine: a discard of
 * the range on a block device (ioctl BLKDISCARD), a punched hole on a
 * regular file (fallocate PUNCH_HOLE | KEEP_SIZE: the size stays, the range
 * reads back as zeros and frees its blocks). Always synchronous; the worker
 * loop calls it in place of the engine for trim requests.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <sys/ioctl.h>

#include "engine.h"

void iog_trim(struct iog_io *io, int blkdev)
{
    int r;
    do {
        if (blkdev) {
            uint64_t range[2] = {io->offset, io->len};
            r = ioctl(io->fd, BLKDISCARD, range);
        } else {
            r = fallocate(io->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)io->offset,
                          (off_t)io->len);
        }
    } while (r < 0 && errno == EINTR);
    io->done = 0;
    io->res = r < 0 ? -errno : (int64_t)io->len;
}
