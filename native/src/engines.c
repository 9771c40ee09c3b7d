/*
 * engines.c - the registry of I/O engines: every engine_*.c registers its
 * descriptor in the linker section iog_engines (IOG_ENGINE_REGISTER); this
 * file walks that section, orders the engines (by their order field, then
 * name) so that every listing is stable, finds one by name, and describes
 * them through the public API (iog_engine_count, iog_engine_describe).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "abi.h"
#include "engine.h"
#include "iogate.h"

/* The linker defines these around the section in this shared object (or
 * executable); hidden, so that each refers to its own. */
extern const struct iog_engine *const __start_iog_engines[] __attribute__((visibility("hidden")));
extern const struct iog_engine *const __stop_iog_engines[] __attribute__((visibility("hidden")));

#define ENGINES_MAX 64

static const struct iog_engine *sorted[ENGINES_MAX];
static uint32_t nsorted;
static pthread_once_t sort_once = PTHREAD_ONCE_INIT;

static int before(const struct iog_engine *a, const struct iog_engine *b)
{
    return a->order != b->order ? a->order < b->order : strcmp(a->name, b->name) < 0;
}

static void sort_engines(void)
{
    for (const struct iog_engine *const *p = __start_iog_engines; p < __stop_iog_engines; p++) {
        if (nsorted == ENGINES_MAX)
            break;
        uint32_t i = nsorted++;
        while (i > 0 && before(*p, sorted[i - 1])) {
            sorted[i] = sorted[i - 1];
            i--;
        }
        sorted[i] = *p;
    }
}

uint32_t engine_count(void)
{
    pthread_once(&sort_once, sort_engines);
    return nsorted;
}

const struct iog_engine *engine_at(uint32_t index)
{
    return index < engine_count() ? sorted[index] : NULL;
}

const struct iog_engine *engine_find(const char *name)
{
    for (uint32_t i = 0; i < engine_count(); i++)
        if (strcmp(sorted[i]->name, name) == 0)
            return sorted[i];
    return NULL;
}

IOG_API int iog_engine_count(void)
{
    return (int)engine_count();
}

IOG_API int iog_engine_describe(uint32_t index, struct iog_engine_info *out)
{
    uint32_t size = abi_out_size(out, IOG_ENGINE_INFO_SIZE_VER0);
    if (!size)
        return -EINVAL;
    const struct iog_engine *e = engine_at(index);
    if (!e)
        return -ENOENT;
    struct iog_engine_info info;
    memset(&info, 0, sizeof(info));
    info.max_depth = e->max_depth;
    info.flags = e->flags;
    strncpy(info.name, e->name, sizeof(info.name) - 1);
    strncpy(info.summary, e->summary, sizeof(info.summary) - 1);
    abi_copy_out(out, size, &info, sizeof(info));
    return 0;
}
