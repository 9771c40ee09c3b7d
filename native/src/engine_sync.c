/*
 * engine_libaio.c - the sync engine (lseek + read/write): placeholder until
 * implemented; every worker's init fails with -EOPNOTSUPP.
 */
#include <errno.h>

#include "engine.h"
#include "session.h"

static int sync_init(struct iog_worker *w, char *err, size_t errlen)
{
    (void)w;
    SET_ERR(err, errlen, "the sync engine is not available in this build");
    return -EOPNOTSUPP;
}

static void sync_cleanup(struct iog_worker *w)
{
    (void)w;
}

const struct iog_engine_ops engine_sync_ops = {
    .name = "sync",
    .init = sync_init,
    .cleanup = sync_cleanup,
};
