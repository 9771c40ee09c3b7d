/*
 * engine_libaio.c - the libaio engine (Linux native AIO): placeholder until
 * implemented; every worker's init fails with -EOPNOTSUPP.
 */
#include <errno.h>

#include "engine.h"
#include "session.h"

static int libaio_init(struct iog_worker *w, char *err, size_t errlen)
{
    (void)w;
    SET_ERR(err, errlen, "the libaio engine is not available in this build");
    return -EOPNOTSUPP;
}

static void libaio_cleanup(struct iog_worker *w)
{
    (void)w;
}

const struct iog_engine_ops engine_libaio_ops = {
    .name = "libaio",
    .init = libaio_init,
    .cleanup = libaio_cleanup,
};
