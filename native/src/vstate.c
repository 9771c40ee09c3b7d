/*
 * vstate.c - the writer of the verify state file: a ring filled by the I/O
 * thread, drained by a thread of its own (vstate.h). The format is in
 * vstate_format.h; the check after a crash is vstate_check.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "vstate.h"

#define RING_ENTRIES  (1u << 16) /* 1 MiB of entries between two drains */
#define DRAIN_RECORDS 4096       /* records encoded per write(2) */
#define IDLE_NS       1000000ull /* the thread looks at the ring every millisecond */

struct vs_entry {
    uint32_t type;
    uint32_t block;
    uint64_t value;
};

struct vstate_writer {
    int fd;
    uint64_t generation;
    struct vs_entry *ring;
    uint64_t head;    /* next entry the I/O thread fills (written by it only) */
    uint64_t tail;    /* next entry the thread drains (written by it only) */
    int closing;      /* 1: drain and stop; 2: also append END */
    int error;        /* first errno of the thread; then entries are not kept */
    uint64_t records; /* records appended */
    uint64_t offset;  /* where the next record goes */
    unsigned char *buf;
    pthread_t thread;
    int started;
};

static void encode_record(unsigned char *rec, uint64_t generation, uint64_t index,
                          const struct vs_entry *e)
{
    memset(rec, 0, VS_RECORD);
    rec[4] = (unsigned char)e->type;
    vs_put32(rec + 8, e->block);
    vs_put64(rec + 16, e->value);
    vs_put32(rec, vs_record_crc(generation, index, rec));
}

static int write_all(int fd, const unsigned char *p, size_t n, uint64_t off)
{
    while (n > 0) {
        ssize_t r = pwrite(fd, p, n, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? errno : EIO;
        p += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

static void push(struct vstate_writer *w, uint32_t type, uint32_t block, uint64_t value)
{
    uint64_t h = w->head;
    while (h - __atomic_load_n(&w->tail, __ATOMIC_ACQUIRE) >= RING_ENTRIES) {
        if (__atomic_load_n(&w->error, __ATOMIC_RELAXED))
            return; /* nothing is written any more */
        sched_yield();
    }
    w->ring[h & (RING_ENTRIES - 1)] = (struct vs_entry){type, block, value};
    __atomic_store_n(&w->head, h + 1, __ATOMIC_RELEASE);
}

void vstate_wrote(struct vstate_writer *w, uint32_t block, uint64_t seq)
{
    push(w, VS_WRITE, block, seq);
}

void vstate_synced(struct vstate_writer *w)
{
    push(w, VS_SYNC, 0, 0);
}

/* Appends n entries as records; the first errno, or 0. */
static int append(struct vstate_writer *w, const struct vs_entry *e, size_t n)
{
    for (size_t i = 0; i < n; i++)
        encode_record(w->buf + i * VS_RECORD, w->generation, w->records + i, &e[i]);
    int rc = write_all(w->fd, w->buf, n * VS_RECORD, w->offset);
    if (rc == 0) {
        w->records += n;
        w->offset += n * VS_RECORD;
    }
    return rc;
}

static int make_durable(struct vstate_writer *w)
{
    uint64_t upto = w->offset;
    if (fdatasync(w->fd) < 0)
        return errno;
    struct vs_entry d = {VS_DURABLE, 0, upto};
    return append(w, &d, 1);
}

static void *writer_main(void *arg)
{
    struct vstate_writer *w = arg;
    struct vs_entry batch[DRAIN_RECORDS];
    int dirty = 0, rc = 0;
    for (;;) {
        int closing = __atomic_load_n(&w->closing, __ATOMIC_ACQUIRE);
        uint64_t h = __atomic_load_n(&w->head, __ATOMIC_ACQUIRE);
        uint64_t t = w->tail;
        if (h != t) {
            size_t n = 0;
            while (t + n != h && n < DRAIN_RECORDS) {
                batch[n] = w->ring[(t + n) & (RING_ENTRIES - 1)];
                n++;
            }
            __atomic_store_n(&w->tail, t + n, __ATOMIC_RELEASE);
            rc = append(w, batch, n);
            if (rc)
                break;
            dirty = 1;
            continue;
        }
        if (dirty) {
            rc = make_durable(w);
            if (rc)
                break;
            dirty = 0;
        }
        if (closing) {
            if (closing == 2) {
                struct vs_entry end = {VS_END, 0, 0};
                rc = append(w, &end, 1);
            }
            if (!rc && fdatasync(w->fd) < 0)
                rc = errno;
            break;
        }
        struct timespec ts = {0, (long)IDLE_NS};
        nanosleep(&ts, NULL);
    }
    if (rc) /* the I/O thread stops waiting for room */
        __atomic_store_n(&w->error, rc, __ATOMIC_RELAXED);
    return NULL;
}

int vstate_open(const struct vstate_params *p, struct vstate_writer **out, char *err, size_t errlen)
{
    *out = NULL;
    int fd = open(p->path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        SET_ERR(err, errlen, "verify state file %s: %s", p->path, strerror(e));
        return -e;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_dev != p->id->dev ||
        (uint64_t)st.st_ino != p->id->ino) {
        close(fd);
        SET_ERR(err, errlen,
                "verify state file %s was replaced after it was created; "
                "nothing was written to it",
                p->path);
        return -ESTALE;
    }
    size_t nl = vs_names_len(p->names), hl = vs_header_len(nl);
    struct vstate_writer *w = calloc(1, sizeof(*w));
    unsigned char *hdr = calloc(1, hl);
    if (w) {
        w->ring = calloc(RING_ENTRIES, sizeof(*w->ring));
        w->buf = malloc((size_t)DRAIN_RECORDS * VS_RECORD);
    }
    if (!w || !hdr || !w->ring || !w->buf) {
        if (w) {
            free(w->ring);
            free(w->buf);
        }
        free(w);
        free(hdr);
        close(fd);
        SET_ERR(err, errlen, "verify state file %s: out of memory", p->path);
        return -ENOMEM;
    }
    memcpy(hdr, VS_MAGIC, 8);
    vs_put32(hdr + 8, VS_VERSION);
    vs_put32(hdr + 12, (uint32_t)hl);
    vs_put64(hdr + 16, p->generation);
    vs_put32(hdr + 24, p->job);
    vs_put32(hdr + 28, p->kind);
    vs_put64(hdr + 32, p->block_size);
    vs_put64(hdr + 40, p->region_start);
    vs_put64(hdr + 48, p->file_blocks);
    vs_put32(hdr + 56, p->nfiles);
    vs_put32(hdr + 60, (uint32_t)nl);
    vs_put32(hdr + 64, p->flags);
    memcpy(hdr + VS_HEADER_FIXED, p->names, nl);
    vs_put32(hdr + hl - 4, crc32_iscsi(hdr, (int)(hl - 4), 0));
    int rc = ftruncate(fd, 0) < 0 ? errno : write_all(fd, hdr, hl, 0);
    if (!rc && fdatasync(fd) < 0)
        rc = errno;
    free(hdr);
    w->fd = fd;
    w->generation = p->generation;
    w->offset = hl;
    if (!rc)
        rc = pthread_create(&w->thread, NULL, writer_main, w);
    if (rc) {
        SET_ERR(err, errlen, "verify state file %s: %s", p->path, strerror(rc));
        close(fd);
        free(w->ring);
        free(w->buf);
        free(w);
        return -rc;
    }
    w->started = 1;
    *out = w;
    return 0;
}

void vstate_close(struct vstate_writer *w, int complete, uint64_t *records, int32_t *error)
{
    if (!w)
        return;
    if (w->started) {
        __atomic_store_n(&w->closing, complete ? 2 : 1, __ATOMIC_RELEASE);
        pthread_join(w->thread, NULL);
    }
    if (records)
        *records = w->records;
    if (error)
        *error = __atomic_load_n(&w->error, __ATOMIC_RELAXED);
    close(w->fd);
    free(w->ring);
    free(w->buf);
    free(w);
}
