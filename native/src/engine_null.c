/*
 * engine_null.c - the null engine: every request completes at once with its
 * full length and nothing touches a file. It measures the engine's own
 * overhead; iodepth is accepted but has no effect.
 */
#include "engine.h"

static int null_init(struct iog_worker *w, char *err, size_t errlen)
{
    (void)w;
    (void)err;
    (void)errlen;
    return 0;
}

static int null_prep(struct iog_worker *w, struct iog_io *io)
{
    (void)w;
    io->res = io->len;
    return 0;
}

static void null_cleanup(struct iog_worker *w)
{
    (void)w;
}

const struct iog_engine_ops engine_null_ops = {
    .name = "null",
    .sync = 1,
    .init = null_init,
    .prep = null_prep,
    .cleanup = null_cleanup,
};
