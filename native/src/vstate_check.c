/*
 * vstate_check.c - the check of a verify state file after a crash
 * (iog_verify_state_check): reads the header and replays the records of the
 * file vstate.c wrote (format: vstate_format.h), then reads back every block
 * position they name and judges it with the classifier of verify.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi.h"
#include "internal.h"
#include "verify.h"
#include "vstate_format.h"

#define READ_RECORDS 4096       /* records read at once by the replay */
#define CHECK_CHUNK  (1u << 20) /* bytes of blocks read at once */

#define LAST_DIRTY (1ull << 63) /* the block's last write is not covered by a sync yet */

struct check {
    struct iog_state_check r;
    struct iog_verify_failure recs[IOG_VERIFY_RECORDS];
    uint32_t nrecs;
    char names[VS_NAMES_MAX];
    uint64_t nblocks;
    uint64_t *durable; /* [nblocks] 0: no sync covered a write; else least sequence + 1 */
    uint64_t *last;    /* [nblocks] 0: never written; else its last write's sequence + 1 */
    uint32_t *dirty;   /* blocks written since the last sync */
    uint64_t ndirty;
    int durable_writes; /* VS_DURABLE_WRITES: every write covers itself */
};

static int fail(char *err, size_t errlen, int rc, const char *fmt, const char *path,
                const char *why)
{
    SET_ERR(err, errlen, fmt, path, why);
    return rc;
}

/* Reads and checks the header; 0 or a negative errno with a message. */
static int read_header(int fd, const char *path, struct check *c, uint64_t *hl_out, char *err,
                       size_t errlen)
{
    unsigned char fixed[VS_HEADER_FIXED];
    ssize_t r = pread(fd, fixed, sizeof(fixed), 0);
    if (r < 0)
        return fail(err, errlen, -errno, "verify state file %s: %s", path, strerror(errno));
    if (r == 0)
        return fail(err, errlen, -EBADMSG, "verify state file %s is empty: %s", path,
                    "the run that creates it never started its job, or the file was lost");
    if ((size_t)r < 8 || memcmp(fixed, VS_MAGIC, 8) != 0)
        return fail(err, errlen, -EINVAL, "%s is not a verify state file: %s", path,
                    "it does not begin with one's header");
    if ((size_t)r < sizeof(fixed))
        return fail(err, errlen, -EBADMSG, "verify state file %s is damaged: %s", path,
                    "it ends inside its header");
    if (vs_get32(fixed + 8) != VS_VERSION)
        return fail(err, errlen, -EINVAL, "verify state file %s: %s", path,
                    "it was written by another version of the format");
    uint64_t hl = vs_get32(fixed + 12), nl = vs_get32(fixed + 60);
    if (nl < 1 || nl > VS_NAMES_MAX || hl != vs_header_len(nl))
        return fail(err, errlen, -EBADMSG, "verify state file %s is damaged: %s", path,
                    "its header's lengths do not agree");
    unsigned char *hdr = malloc(hl);
    if (!hdr)
        return fail(err, errlen, -ENOMEM, "verify state file %s: %s", path, "out of memory");
    r = pread(fd, hdr, hl, 0);
    int ok = r == (ssize_t)hl && vs_get32(hdr + hl - 4) == crc32_iscsi(hdr, (int)(hl - 4), 0);
    if (ok) {
        memcpy(c->names, hdr + VS_HEADER_FIXED, nl);
        c->names[nl - 1] = 0;
    }
    free(hdr);
    if (!ok)
        return fail(err, errlen, -EBADMSG, "verify state file %s is damaged: %s", path,
                    "its header does not match its checksum");
    c->r.generation = vs_get64(fixed + 16);
    c->r.job = vs_get32(fixed + 24);
    c->r.verify = vs_get32(fixed + 28);
    c->r.block_size = vs_get64(fixed + 32);
    c->r.region_start = vs_get64(fixed + 40);
    c->r.file_blocks = vs_get64(fixed + 48);
    c->r.nfiles = vs_get32(fixed + 56);
    uint32_t flags = vs_get32(fixed + 64);
    c->durable_writes = (flags & VS_DURABLE_WRITES) != 0;
    if ((flags & ~VS_DURABLE_WRITES) || vs_get32(fixed + 68))
        return fail(err, errlen, -EBADMSG, "verify state file %s: %s", path,
                    "its header has flags this version does not know");
    if (!verify_kind_known(c->r.verify) || c->r.block_size < verify_min_block(c->r.verify) ||
        c->r.block_size > (1ull << 30) || c->r.nfiles < 1 || c->r.nfiles > IOG_FILES_MAX ||
        c->r.file_blocks > VERIFY_MAX_BLOCKS / c->r.nfiles)
        return fail(err, errlen, -EBADMSG, "verify state file %s: %s", path,
                    "its header describes no job iogate can run");
    c->nblocks = c->r.file_blocks * c->r.nfiles;
    *hl_out = hl;
    return 0;
}

/* Whether record `index` checks; its type then. */
static int record_type(const struct check *c, uint64_t index, const unsigned char *rec)
{
    if (vs_get32(rec) != vs_record_crc(c->r.generation, index, rec))
        return 0;
    int type = rec[4];
    if (rec[5] || rec[6] || rec[7] || vs_get32(rec + 12) || type < VS_WRITE || type > VS_END)
        return 0;
    if (type == VS_WRITE && vs_get32(rec + 8) >= c->nblocks)
        return 0;
    return type;
}

static void apply(struct check *c, int type, const unsigned char *rec)
{
    if (type == VS_WRITE) {
        uint32_t b = vs_get32(rec + 8);
        uint64_t seq = vs_get64(rec + 16) & ~LAST_DIRTY;
        c->r.writes++;
        if (c->durable_writes) { /* O_SYNC, O_DSYNC: it was durable when it completed */
            c->last[b] = c->durable[b] = seq + 1;
            return;
        }
        if (!(c->last[b] & LAST_DIRTY))
            c->dirty[c->ndirty++] = b;
        c->last[b] = (seq + 1) | LAST_DIRTY;
    } else if (type == VS_SYNC) {
        for (uint64_t i = 0; i < c->ndirty; i++) {
            uint32_t b = c->dirty[i];
            c->last[b] &= ~LAST_DIRTY;
            c->durable[b] = c->last[b];
        }
        c->ndirty = 0;
        c->r.syncs++;
    } else if (type == VS_END) {
        c->r.complete = 1;
    }
}

/* Replays the records; 0, or -EBADMSG with a message when a damaged record
 * lies before a point the file was made durable up to. */
static int replay(int fd, const char *path, uint64_t hl, struct check *c, char *err, size_t errlen)
{
    unsigned char *buf = malloc((size_t)READ_RECORDS * VS_RECORD);
    if (!buf)
        return fail(err, errlen, -ENOMEM, "verify state file %s: %s", path, "out of memory");
    uint64_t index = 0, bad = 0; /* bad: byte of the first record that does not check */
    int rc = 0;
    for (;;) {
        ssize_t r =
            pread(fd, buf, (size_t)READ_RECORDS * VS_RECORD, (off_t)(hl + index * VS_RECORD));
        if (r < 0) {
            rc = fail(err, errlen, -errno, "verify state file %s: %s", path, strerror(errno));
            break;
        }
        size_t n = (size_t)r / VS_RECORD;
        for (size_t i = 0; i < n; i++, index++) {
            const unsigned char *rec = buf + i * VS_RECORD;
            int type = record_type(c, index, rec);
            if (!bad && !type) {
                bad = hl + index * VS_RECORD;
                continue;
            }
            if (!bad) {
                apply(c, type, rec);
            } else if (type == VS_DURABLE && vs_get64(rec + 16) > bad) {
                char why[160];
                snprintf(why, sizeof(why),
                         "the record at byte %llu does not check, although the file was "
                         "made durable up to byte %llu",
                         (unsigned long long)bad, (unsigned long long)vs_get64(rec + 16));
                rc = fail(err, errlen, -EBADMSG, "verify state file %s is damaged: %s", path, why);
                goto out;
            }
        }
        if ((size_t)r < (size_t)READ_RECORDS * VS_RECORD) {
            uint64_t end = hl + index * VS_RECORD + (uint64_t)r % VS_RECORD;
            uint64_t from = bad ? bad : hl + index * VS_RECORD;
            c->r.ignored_bytes = end - from;
            break;
        }
    }
out:
    free(buf);
    return rc;
}

static void keep_failure(struct check *c, const struct iog_verify_failure *f)
{
    if (c->nrecs < IOG_VERIFY_RECORDS)
        c->recs[c->nrecs++] = *f;
}

/* Judges one block read back (`got` bytes or a negative errno). */
static void judge_block(struct check *c, struct verify_hasher *vh, uint64_t b, void *block,
                        int64_t got)
{
    uint32_t file = (uint32_t)(b / c->r.file_blocks);
    uint64_t durable = c->durable[b], last = c->last[b];
    int pending = (last & LAST_DIRTY) != 0;
    struct verify_expect e = {
        .generation = c->r.generation,
        .offset = c->r.region_start + (b % c->r.file_blocks) * c->r.block_size,
        .len = c->r.block_size,
        .seq = durable ? durable - 1 : 0,
        .file = file,
        .job = c->r.job,
    };
    struct iog_verify_failure f;
    int ok = verify_classify(vh, block, got, &e, &f);
    int short_read = f.kind == IOG_VERIFY_READ_ERROR && got >= 0;
    if (ok) {
        if (!pending) {
            c->r.intact++;
            return;
        }
        uint64_t want = (last & ~LAST_DIRTY) - 1;
        c->r.not_durable++;
        c->r.not_durable_new += want == 0 || f.found_seq >= want;
        return;
    }
    if (f.kind == IOG_VERIFY_LOST || short_read) {
        if (!durable) { /* never promised: what was there before is allowed */
            c->r.not_durable++;
            return;
        }
        f.kind = IOG_VERIFY_LOST;
        c->r.lost++;
    } else if (f.kind == IOG_VERIFY_TORN) {
        c->r.torn++;
    } else if (f.kind == IOG_VERIFY_MISDIRECTED) {
        c->r.misdirected++;
    } else {
        c->r.read_errors++;
    }
    keep_failure(c, &f);
}

/* Opens a file for the check: O_DIRECT where the blocks allow it, so that
 * the device is read rather than what the page cache kept. */
static int open_target(const char *name, const struct check *c)
{
    int aligned = c->r.block_size % 4096 == 0 && c->r.region_start % 4096 == 0;
    int fd = aligned ? open(name, O_RDONLY | O_DIRECT | O_CLOEXEC) : -1;
    if (fd < 0)
        fd = open(name, O_RDONLY | O_CLOEXEC);
    return fd;
}

static int read_blocks(struct check *c, const char *const *files, char *err, size_t errlen)
{
    struct verify_hasher vh;
    if (verify_hasher_init(&vh, c->r.verify) != 0)
        return fail(err, errlen, -ENOMEM, "%s%s", "verify state check: ", "out of memory");
    uint64_t bs = c->r.block_size;
    uint64_t per = CHECK_CHUNK / bs ? CHECK_CHUNK / bs : 1;
    void *buf = NULL;
    if (posix_memalign(&buf, 4096, (size_t)((per * bs + 4095) & ~4095ull)) != 0) {
        verify_hasher_fini(&vh);
        return fail(err, errlen, -ENOMEM, "%s%s", "verify state check: ", "out of memory");
    }
    int rc = 0;
    for (uint32_t f = 0; f < c->r.nfiles && !rc; f++) {
        int fd = open_target(files[f], c);
        if (fd < 0) {
            rc = fail(err, errlen, -errno, "cannot open %s: %s", files[f], strerror(errno));
            break;
        }
        uint64_t first = (uint64_t)f * c->r.file_blocks, end = first + c->r.file_blocks;
        for (uint64_t b = first; b < end;) {
            if (!c->last[b]) {
                b++;
                continue;
            }
            uint64_t n = 1; /* a run of written positions, read at once */
            while (n < per && b + n < end && c->last[b + n])
                n++;
            off_t off = (off_t)(c->r.region_start + (b - first) * bs);
            ssize_t r;
            do
                r = pread(fd, buf, (size_t)(n * bs), off);
            while (r < 0 && errno == EINTR);
            if (r < 0 && errno == EINVAL) { /* O_DIRECT refused here: read through the cache */
                close(fd);
                fd = open(files[f], O_RDONLY | O_CLOEXEC);
                if (fd < 0) {
                    rc = fail(err, errlen, -errno, "cannot open %s: %s", files[f], strerror(errno));
                    break;
                }
                continue;
            }
            int e = r < 0 ? errno : 0;
            for (uint64_t i = 0; i < n; i++) {
                int64_t got;
                if (e)
                    got = -(int64_t)e;
                else if ((uint64_t)r >= (i + 1) * bs)
                    got = (int64_t)bs;
                else
                    got = (uint64_t)r > i * bs ? r - (int64_t)(i * bs) : 0;
                judge_block(c, &vh, b + i, (char *)buf + i * bs, got);
                c->r.blocks++;
            }
            b += n;
        }
        if (fd >= 0)
            close(fd);
    }
    free(buf);
    verify_hasher_fini(&vh);
    return rc;
}

/* The names of a NUL-separated list, at most IOG_FILES_MAX; how many. */
static uint32_t split_names(const char *list, const char *out[IOG_FILES_MAX])
{
    uint32_t n = 0;
    size_t at = 0;
    while (at < VS_NAMES_MAX && list[at] && n < IOG_FILES_MAX) {
        out[n++] = list + at;
        at += strnlen(list + at, VS_NAMES_MAX - at) + 1;
    }
    return n;
}

/* Whether `files` are the files the state file was written for (with
 * other_names: as many). */
static int same_files(const struct check *c, const char *files, int other_names, const char *path,
                      char *err, size_t errlen)
{
    size_t a = vs_names_len(c->names), b = vs_names_len(files);
    if (a == b && memcmp(c->names, files, a) == 0)
        return 0;
    const char *ours[IOG_FILES_MAX], *theirs[IOG_FILES_MAX];
    uint32_t na = split_names(c->names, ours), nb = split_names(files, theirs);
    if (other_names && na == nb)
        return 0;
    SET_ERR(err, errlen,
            "verify state file %s was written for %u file(s) (the first %s), not for the %u "
            "given (the first %s)",
            path, na, na ? ours[0] : "none", nb, nb ? theirs[0] : "none");
    return -EXDEV;
}

static void check_free(struct check *c)
{
    free(c->durable);
    free(c->last);
    free(c->dirty);
    free(c);
}

IOG_API int iog_verify_state_check(const char *state_path, const char *files, uint32_t flags,
                                   struct iog_state_check *out, struct iog_verify_failure *failures,
                                   size_t cap, char *err, size_t errlen)
{
    uint32_t size = abi_out_size(out, IOG_STATE_CHECK_SIZE_VER0);
    if (!state_path || !files || !size || (!failures && cap > 0)) {
        SET_ERR(err, errlen, "iog_verify_state_check: %s", "bad arguments");
        return -EINVAL;
    }
    struct check *c = calloc(1, sizeof(*c));
    if (!c)
        return fail(err, errlen, -ENOMEM, "verify state file %s: %s", state_path, "out of memory");
    int fd = open(state_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        free(c);
        return fail(err, errlen, -e, "verify state file %s: %s", state_path,
                    e == ENOENT ? "no such file: was the run that writes it started with "
                                  "this verify_state?"
                                : strerror(e));
    }
    uint64_t hl = 0;
    int rc = read_header(fd, state_path, c, &hl, err, errlen);
    if (!rc)
        rc = same_files(c, files, (flags & IOG_STATE_OTHER_NAMES) != 0, state_path, err, errlen);
    if (!rc) {
        c->durable = calloc(c->nblocks, sizeof(*c->durable));
        c->last = calloc(c->nblocks, sizeof(*c->last));
        c->dirty = calloc(c->nblocks, sizeof(*c->dirty));
        if (!c->durable || !c->last || !c->dirty)
            rc = fail(err, errlen, -ENOMEM, "verify state file %s: %s", state_path,
                      "out of memory for its block positions");
    }
    if (!rc)
        rc = replay(fd, state_path, hl, c, err, errlen);
    close(fd);
    if (!rc) {
        const char *names[IOG_FILES_MAX];
        split_names(files, names);
        rc = read_blocks(c, names, err, errlen);
    }
    if (rc) {
        check_free(c);
        return rc;
    }
    c->r.nrecords = c->nrecs;
    for (uint32_t i = 0; i < c->nrecs && i < cap; i++)
        failures[i] = c->recs[i];
    abi_copy_out(out, size, &c->r, sizeof(c->r));
    int n = (int)c->nrecs;
    check_free(c);
    return n;
}
