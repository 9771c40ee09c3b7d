/*
 * engine_null.c - the null engine: every request completes at once with its
 * full length and nothing touches a file. It measures the engine's own
 * overhead; iodepth is accepted but has no effect.
 */
#include "engine.h"

static int null_prep(struct iog_worker *w, struct iog_io *io)
{
    (void)w;
    io->res = io->len;
    return 0;
}

const struct iog_engine engine_null = {
    .name = "null",
    .summary = "no I/O: every request completes at once",
    .order = 90,
    .max_depth = IOG_DEPTH_MAX,
    .flags = 0,
    .ops =
        {
            .prep = null_prep,
        },
};
IOG_ENGINE_REGISTER(engine_null);
