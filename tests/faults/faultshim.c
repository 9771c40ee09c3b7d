/*
 * faultshim.c - an LD_PRELOAD library that makes chosen reads and writes of
 * chosen files misbehave, for tests of how the engine (or anything else)
 * copes with a failing device.
 *
 * It interposes pread, pread64, preadv, preadv64, preadv2, preadv64v2, read
 * and their write counterparts. A call is "matching" when its descriptor's
 * path (readlink of /proc/self/fd/N, looked up on every call so that a
 * reused descriptor number is never mistaken for an older file) contains
 * IOGATE_FAULT_PATH and its direction is selected by IOGATE_FAULT_OP. Every
 * other call goes straight to the C library. Matching calls are numbered
 * over the whole process (all threads); those numbered
 * [AFTER, AFTER + COUNT) are faulted (COUNT 0: all from AFTER on).
 *
 * Environment:
 *   IOGATE_FAULT_PATH      substring of the path; unset or empty: inactive
 *   IOGATE_FAULT_OP        read | write | both (default both)
 *   IOGATE_FAULT_MODE      eio | enospc | short | torn | drop | misdirect | stall;
 *                          unset or unknown: inactive
 *   IOGATE_FAULT_AFTER     matching calls that pass before the first fault (0)
 *   IOGATE_FAULT_COUNT     faulted calls, then calls pass again (0: no end)
 *   IOGATE_FAULT_STALL_MS  how long stall sleeps (1000)
 *   IOGATE_FAULT_SHIFT     misdirect's displacement in bytes, may be negative
 *                          (default: the length of the request)
 *
 * Modes, for a write:
 *   eio, enospc  nothing is written; -1 with errno EIO or ENOSPC
 *   short        the first half is written and its length returned
 *   torn         the first half is written, the full length returned
 *   drop         nothing is written, the full length returned
 *   misdirect    the whole buffer lands at offset + shift, the full length
 *                is returned
 *   stall        sleeps, then writes normally
 * and for a read the same with "read into the buffer" for "write": torn and
 * drop leave (part of) the buffer as it was, misdirect reads from elsewhere.
 * For read(2) and write(2) the file position moves as if the full request
 * had been done wherever the full length is returned.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

enum mode { M_NONE, M_EIO, M_ENOSPC, M_SHORT, M_TORN, M_DROP, M_MISDIRECT, M_STALL };

typedef ssize_t (*pread_fn)(int, void *, size_t, off_t);
typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*preadv_fn)(int, const struct iovec *, int, off_t);
typedef ssize_t (*preadv2_fn)(int, const struct iovec *, int, off_t, int);
typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*write_fn)(int, const void *, size_t);

static struct {
    enum mode mode;
    int reads, writes; /* which directions match */
    char path[PATH_MAX];
    unsigned long long after, count, stall_ms;
    int has_shift;
    long long shift;
    pread_fn pread, pread64;
    pwrite_fn pwrite, pwrite64;
    preadv_fn preadv, preadv64, pwritev, pwritev64;
    preadv2_fn preadv2, preadv64v2, pwritev2, pwritev64v2;
    read_fn read;
    write_fn write;
} cfg;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_ullong matched; /* matching calls so far, numbered from 0 */

static unsigned long long env_ull(const char *name, unsigned long long dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtoull(v, NULL, 10) : dflt;
}

static void setup(void)
{
    cfg.pread = (pread_fn)dlsym(RTLD_NEXT, "pread");
    cfg.pread64 = (pread_fn)dlsym(RTLD_NEXT, "pread64");
    cfg.pwrite = (pwrite_fn)dlsym(RTLD_NEXT, "pwrite");
    cfg.pwrite64 = (pwrite_fn)dlsym(RTLD_NEXT, "pwrite64");
    cfg.preadv = (preadv_fn)dlsym(RTLD_NEXT, "preadv");
    cfg.preadv64 = (preadv_fn)dlsym(RTLD_NEXT, "preadv64");
    cfg.pwritev = (preadv_fn)dlsym(RTLD_NEXT, "pwritev");
    cfg.pwritev64 = (preadv_fn)dlsym(RTLD_NEXT, "pwritev64");
    cfg.preadv2 = (preadv2_fn)dlsym(RTLD_NEXT, "preadv2");
    cfg.preadv64v2 = (preadv2_fn)dlsym(RTLD_NEXT, "preadv64v2");
    cfg.pwritev2 = (preadv2_fn)dlsym(RTLD_NEXT, "pwritev2");
    cfg.pwritev64v2 = (preadv2_fn)dlsym(RTLD_NEXT, "pwritev64v2");
    cfg.read = (read_fn)dlsym(RTLD_NEXT, "read");
    cfg.write = (write_fn)dlsym(RTLD_NEXT, "write");

    const char *path = getenv("IOGATE_FAULT_PATH");
    const char *mode = getenv("IOGATE_FAULT_MODE");
    const char *op = getenv("IOGATE_FAULT_OP");
    if (!path || !*path || strlen(path) >= sizeof(cfg.path) || !mode)
        return;
    static const char *const names[] = {"none", "eio",  "enospc",    "short",
                                        "torn", "drop", "misdirect", "stall"};
    for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(mode, names[i]) == 0)
            cfg.mode = (enum mode)i;
    strcpy(cfg.path, path);
    cfg.reads = !op || strcmp(op, "write") != 0;
    cfg.writes = !op || strcmp(op, "read") != 0;
    cfg.after = env_ull("IOGATE_FAULT_AFTER", 0);
    cfg.count = env_ull("IOGATE_FAULT_COUNT", 0);
    cfg.stall_ms = env_ull("IOGATE_FAULT_STALL_MS", 1000);
    const char *shift = getenv("IOGATE_FAULT_SHIFT");
    if (shift && *shift) {
        cfg.has_shift = 1;
        cfg.shift = strtoll(shift, NULL, 10);
    }
}

/* The mode to apply to this call: M_NONE to pass it through. */
static enum mode decide(int fd, int is_write)
{
    pthread_once(&once, setup);
    if (cfg.mode == M_NONE || !(is_write ? cfg.writes : cfg.reads))
        return M_NONE;
    char link[64], target[PATH_MAX];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof(target) - 1);
    if (n < 0)
        return M_NONE;
    target[n] = '\0';
    if (!strstr(target, cfg.path))
        return M_NONE;
    unsigned long long i = atomic_fetch_add(&matched, 1);
    if (i < cfg.after || (cfg.count && i - cfg.after >= cfg.count))
        return M_NONE;
    return cfg.mode;
}

static void stall(void)
{
    struct timespec ts = {.tv_sec = (time_t)(cfg.stall_ms / 1000),
                          .tv_nsec = (long)(cfg.stall_ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static off_t shifted(off_t off, size_t len)
{
    return off + (off_t)(cfg.has_shift ? cfg.shift : (long long)len);
}

static size_t iov_total(const struct iovec *iov, int cnt)
{
    size_t total = 0;
    for (int i = 0; i < cnt; i++)
        total += iov[i].iov_len;
    return total;
}

/* Copies `iov` into `out` cut to its first `keep` bytes; returns the count. */
static int iov_cut(const struct iovec *iov, int cnt, size_t keep, struct iovec *out)
{
    int n = 0;
    for (int i = 0; i < cnt && keep > 0; i++) {
        out[n] = iov[i];
        if (out[n].iov_len > keep)
            out[n].iov_len = keep;
        keep -= out[n].iov_len;
        n++;
    }
    return n;
}

static ssize_t fail(int err)
{
    errno = err;
    return -1;
}

/* -- positional, one buffer ------------------------------------------------ */

static ssize_t do_pread(pread_fn real, int fd, void *buf, size_t len, off_t off)
{
    switch (decide(fd, 0)) {
    case M_EIO:
        return fail(EIO);
    case M_ENOSPC:
        return fail(ENOSPC);
    case M_SHORT:
        return real(fd, buf, len / 2, off);
    case M_TORN: {
        ssize_t r = real(fd, buf, len / 2, off);
        return r < 0 ? r : (ssize_t)len;
    }
    case M_DROP:
        return (ssize_t)len;
    case M_MISDIRECT:
        return real(fd, buf, len, shifted(off, len));
    case M_STALL:
        stall();
        break;
    case M_NONE:
        break;
    }
    return real(fd, buf, len, off);
}

static ssize_t do_pwrite(pwrite_fn real, int fd, const void *buf, size_t len, off_t off)
{
    switch (decide(fd, 1)) {
    case M_EIO:
        return fail(EIO);
    case M_ENOSPC:
        return fail(ENOSPC);
    case M_SHORT:
        return real(fd, buf, len / 2, off);
    case M_TORN: {
        ssize_t r = real(fd, buf, len / 2, off);
        return r < 0 ? r : (ssize_t)len;
    }
    case M_DROP:
        return (ssize_t)len;
    case M_MISDIRECT: {
        ssize_t r = real(fd, buf, len, shifted(off, len));
        return r < 0 ? r : (ssize_t)len;
    }
    case M_STALL:
        stall();
        break;
    case M_NONE:
        break;
    }
    return real(fd, buf, len, off);
}

ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
    pthread_once(&once, setup);
    return do_pread(cfg.pread, fd, buf, len, off);
}

ssize_t pread64(int fd, void *buf, size_t len, off_t off)
{
    pthread_once(&once, setup);
    return do_pread(cfg.pread64, fd, buf, len, off);
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
    pthread_once(&once, setup);
    return do_pwrite(cfg.pwrite, fd, buf, len, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off_t off)
{
    pthread_once(&once, setup);
    return do_pwrite(cfg.pwrite64, fd, buf, len, off);
}

/* -- positional, vectors (v2: the variant with flags, else plain) ----------- */

static ssize_t call_v(preadv_fn plain, preadv2_fn v2, int fd, const struct iovec *iov, int cnt,
                      off_t off, int flags)
{
    return v2 ? v2(fd, iov, cnt, off, flags) : plain(fd, iov, cnt, off);
}

static ssize_t do_vec(int is_write, preadv_fn plain, preadv2_fn v2, int fd, const struct iovec *iov,
                      int cnt, off_t off, int flags)
{
    enum mode m = decide(fd, is_write);
    /* preadv2 and pwritev2 take offset -1 for the file position: not faulted */
    if (m == M_NONE || off < 0 || cnt < 0 || cnt > IOV_MAX)
        return call_v(plain, v2, fd, iov, cnt, off, flags);
    size_t len = iov_total(iov, cnt);
    struct iovec half[IOV_MAX];
    int nhalf = iov_cut(iov, cnt, len / 2, half);
    ssize_t r;
    switch (m) {
    case M_EIO:
        return fail(EIO);
    case M_ENOSPC:
        return fail(ENOSPC);
    case M_SHORT:
        return call_v(plain, v2, fd, half, nhalf, off, flags);
    case M_TORN:
        r = call_v(plain, v2, fd, half, nhalf, off, flags);
        return r < 0 ? r : (ssize_t)len;
    case M_DROP:
        return (ssize_t)len;
    case M_MISDIRECT:
        r = call_v(plain, v2, fd, iov, cnt, shifted(off, len), flags);
        return r < 0 ? r : (ssize_t)len;
    case M_STALL:
        stall();
        break;
    case M_NONE:
        break;
    }
    return call_v(plain, v2, fd, iov, cnt, off, flags);
}

ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
    pthread_once(&once, setup);
    return do_vec(0, cfg.preadv, NULL, fd, iov, cnt, off, 0);
}

ssize_t preadv64(int fd, const struct iovec *iov, int cnt, off_t off)
{
    pthread_once(&once, setup);
    return do_vec(0, cfg.preadv64, NULL, fd, iov, cnt, off, 0);
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    pthread_once(&once, setup);
    return do_vec(1, cfg.pwritev, NULL, fd, iov, cnt, off, 0);
}

ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off_t off)
{
    pthread_once(&once, setup);
    return do_vec(1, cfg.pwritev64, NULL, fd, iov, cnt, off, 0);
}

ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    pthread_once(&once, setup);
    return do_vec(0, NULL, cfg.preadv2, fd, iov, cnt, off, flags);
}

ssize_t preadv64v2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    pthread_once(&once, setup);
    return do_vec(0, NULL, cfg.preadv64v2, fd, iov, cnt, off, flags);
}

ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    pthread_once(&once, setup);
    return do_vec(1, NULL, cfg.pwritev2, fd, iov, cnt, off, flags);
}

ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    pthread_once(&once, setup);
    return do_vec(1, NULL, cfg.pwritev64v2, fd, iov, cnt, off, flags);
}

/* -- at the file position ---------------------------------------------------- */

/* Claims `len` bytes were moved when `moved` were: the file position skips
 * the rest, as it would have after the full transfer. */
static ssize_t claim(int fd, size_t len, size_t moved)
{
    if (lseek(fd, (off_t)(len - moved), SEEK_CUR) < 0)
        return -1;
    return (ssize_t)len;
}

ssize_t read(int fd, void *buf, size_t len)
{
    pthread_once(&once, setup);
    enum mode m = decide(fd, 0);
    ssize_t r;
    off_t pos;
    switch (m) {
    case M_EIO:
        return fail(EIO);
    case M_ENOSPC:
        return fail(ENOSPC);
    case M_SHORT:
        return cfg.read(fd, buf, len / 2);
    case M_TORN:
        r = cfg.read(fd, buf, len / 2);
        return r < 0 ? r : claim(fd, len, (size_t)r);
    case M_DROP:
        return claim(fd, len, 0);
    case M_MISDIRECT:
        pos = lseek(fd, 0, SEEK_CUR);
        if (pos < 0)
            return -1;
        r = cfg.pread64(fd, buf, len, shifted(pos, len));
        return r < 0 ? r : claim(fd, len, 0); /* pread64 left the position */
    case M_STALL:
        stall();
        break;
    case M_NONE:
        break;
    }
    return cfg.read(fd, buf, len);
}

ssize_t write(int fd, const void *buf, size_t len)
{
    pthread_once(&once, setup);
    enum mode m = decide(fd, 1);
    ssize_t r;
    off_t pos;
    switch (m) {
    case M_EIO:
        return fail(EIO);
    case M_ENOSPC:
        return fail(ENOSPC);
    case M_SHORT:
        return cfg.write(fd, buf, len / 2);
    case M_TORN:
        r = cfg.write(fd, buf, len / 2);
        return r < 0 ? r : claim(fd, len, (size_t)r);
    case M_DROP:
        return claim(fd, len, 0);
    case M_MISDIRECT:
        pos = lseek(fd, 0, SEEK_CUR);
        if (pos < 0)
            return -1;
        r = cfg.pwrite64(fd, buf, len, shifted(pos, len));
        return r < 0 ? r : claim(fd, len, 0); /* pread64 left the position */
    case M_STALL:
        stall();
        break;
    case M_NONE:
        break;
    }
    return cfg.write(fd, buf, len);
}
