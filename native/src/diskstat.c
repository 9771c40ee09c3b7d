/*
 * diskstat.c - device statistics: the stat files of the block devices a
 * session watches (iog_session_watch_disk), read by the monitor thread at
 * count start, at interval boundaries and at the end of the run, and copied
 * out afterwards (iog_session_disk_samples). Nothing here runs on the I/O
 * path: a reading is one pread of a held descriptor.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi.h"
#include "internal.h"

#define DISK_LINE_MAX 512

uint32_t disk_parse(const char *line, uint64_t counters[IOG_DISK_COUNTERS])
{
    uint32_t n = 0;
    const char *p = line;
    memset(counters, 0, IOG_DISK_COUNTERS * sizeof(uint64_t));
    while (n < IOG_DISK_COUNTERS) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p < '0' || *p > '9')
            break;
        uint64_t v = 0;
        while (*p >= '0' && *p <= '9')
            v = v * 10 + (uint64_t)(*p++ - '0');
        if (*p != '\0' && *p != ' ' && *p != '\t' && *p != '\n')
            break; /* not a number: the line is something else */
        counters[n++] = v;
    }
    return n;
}

/* One reading of a held stat file; the number of counters, 0 when it failed. */
static uint32_t disk_read(int fd, uint64_t counters[IOG_DISK_COUNTERS])
{
    char buf[DISK_LINE_MAX];
    ssize_t got = pread(fd, buf, sizeof(buf) - 1, 0);
    if (got <= 0)
        return 0;
    buf[got] = '\0';
    return disk_parse(buf, counters);
}

IOG_API int iog_session_watch_disk(iog_session *s, const char *stat_path, char *err, size_t errlen)
{
    if (!s || !stat_path) {
        SET_ERR(err, errlen, "iog_session_watch_disk: no session or path");
        return -EINVAL;
    }
    if (__atomic_load_n(&s->starting, __ATOMIC_ACQUIRE)) {
        SET_ERR(err, errlen, "%s: devices are watched before the session starts", stat_path);
        return -EALREADY;
    }
    if (s->ndisks >= IOG_DISKS_MAX) {
        SET_ERR(err, errlen, "%s: a session watches at most %d devices", stat_path, IOG_DISKS_MAX);
        return -ENOSPC;
    }
    int fd = open(stat_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        SET_ERR(err, errlen, "%s: %s", stat_path, strerror(e));
        return -e;
    }
    uint64_t counters[IOG_DISK_COUNTERS];
    if (disk_read(fd, counters) < 11) {
        close(fd);
        SET_ERR(err, errlen,
                "%s: not a block device statistics file (expected at least 11 counters)",
                stat_path);
        return -EINVAL;
    }
    struct disk_watch *w = &s->disks[s->ndisks];
    memset(w, 0, sizeof(*w));
    w->fd = fd;
    return (int)s->ndisks++;
}

void disk_sample(struct iog_session *s, uint64_t at)
{
    uint64_t base = PUB_LOAD(&s->t_count_start);
    uint64_t end = at > base ? at - base : 0;
    for (uint32_t d = 0; d < s->ndisks; d++) {
        struct disk_watch *w = &s->disks[d];
        if (w->n && w->v[w->n - 1].end_ns >= end)
            continue; /* a reading as late exists: boundaries shared by jobs */
        if (w->n == w->cap) {
            size_t cap = w->cap ? w->cap * 2 : 64;
            struct iog_disk_sample *v = realloc(w->v, cap * sizeof(*v));
            if (!v)
                continue; /* the reading is dropped; the run goes on */
            w->v = v;
            w->cap = cap;
        }
        struct iog_disk_sample *x = &w->v[w->n];
        memset(x, 0, sizeof(*x));
        x->struct_size = sizeof(*x);
        x->end_ns = end;
        x->ncounters = disk_read(w->fd, x->counters);
        if (x->ncounters > 0)
            w->n++;
    }
}

void disk_free(struct iog_session *s)
{
    for (uint32_t d = 0; d < s->ndisks; d++) {
        close(s->disks[d].fd);
        free(s->disks[d].v);
        memset(&s->disks[d], 0, sizeof(s->disks[d]));
    }
    s->ndisks = 0;
}

IOG_API int iog_session_disk_samples(const iog_session *s, uint32_t disk,
                                     struct iog_disk_sample *out, uint32_t n)
{
    if (!s || disk >= s->ndisks)
        return -EINVAL;
    if (!__atomic_load_n(&s->started, __ATOMIC_ACQUIRE))
        return -EINVAL;
    if (!__atomic_load_n(&s->monitor_done, __ATOMIC_ACQUIRE))
        return -EBUSY;
    const struct disk_watch *w = &s->disks[disk];
    if (n > 0) {
        uint32_t size = abi_out_size(out, IOG_DISK_SAMPLE_SIZE_VER0);
        if (!size)
            return -EINVAL;
        for (uint32_t i = 0; i < n && i < w->n; i++)
            abi_copy_out((unsigned char *)out + (size_t)i * size, size, &w->v[i], sizeof(w->v[i]));
    }
    return (int)w->n;
}
