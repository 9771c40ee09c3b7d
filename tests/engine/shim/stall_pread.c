/*
 * stall_pread.c - an LD_PRELOAD shim that makes one pread(2) call stall.
 *
 * The call numbered STALL_AT (1-based, counted over the process) sleeps
 * STALL_NS nanoseconds before reading; every other call goes straight to the
 * C library. Tests use it to stand in for a device that stops for a while.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

typedef ssize_t (*pread_fn)(int, void *, size_t, off_t);

static atomic_ulong calls;

static void maybe_stall(void)
{
    const char *at = getenv("STALL_AT");
    const char *ns = getenv("STALL_NS");
    if (at == NULL || ns == NULL)
        return;
    if (atomic_fetch_add(&calls, 1) + 1 != strtoul(at, NULL, 10))
        return;
    unsigned long long total = strtoull(ns, NULL, 10);
    struct timespec ts = {.tv_sec = (time_t)(total / 1000000000ull),
                          .tv_nsec = (long)(total % 1000000000ull)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static ssize_t forward(const char *name, int fd, void *buf, size_t n, off_t off)
{
    pread_fn real = (pread_fn)dlsym(RTLD_NEXT, name);
    maybe_stall();
    return real(fd, buf, n, off);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    return forward("pread", fd, buf, n, off);
}

ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
    return forward("pread64", fd, buf, n, off);
}
