/*
 * verify.c - block headers, sector stamps, checksums, classification of
 * read-backs and the per-thread expected state (see verify.h).
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <isa-l/crc.h>
#include <isa-l/crc64.h>
#include <openssl/evp.h>
#include <xxhash.h>
#include <zlib.h>

#include "clock.h"
#include "verify.h"
#include "vstate.h"

/* One block's expected state (see verify.h): the sequence number of its last
 * write completed in full, writes in flight, and flags. */
#define B_SEQ_BITS     48
#define B_SEQ_MASK     ((1ull << B_SEQ_BITS) - 1)
#define B_FLIGHT_SHIFT B_SEQ_BITS
#define B_FLIGHT_ONE   (1ull << B_FLIGHT_SHIFT)
#define B_FLIGHT_MASK  (0x1fffull << B_FLIGHT_SHIFT) /* 13 bits: more than any iodepth */
#define B_OVERLAP      (1ull << 61) /* a write was submitted while another was in flight */
#define B_RACED        (1ull << 62) /* the last completed writes raced: any sequence passes */
#define B_UNKNOWN      (1ull << 63) /* a write failed: contents undefined */

struct verify_state {
    /* results, kept until the session is destroyed */
    uint64_t blocks_written;
    uint64_t blocks_checked;
    uint64_t failures;
    uint64_t by_kind[IOG_VERIFY_KINDS];
    uint64_t elapsed_ns;
    uint32_t nrecords;
    struct iog_verify_failure records[IOG_VERIFY_RECORDS];
    int stop;               /* a fatal failure was seen */
    uint64_t state_records; /* the verify state file's, once closed */
    int32_t state_error;

    /* what the run needs */
    uint32_t kind;
    uint32_t job;
    uint32_t bs;
    int fatal;
    uint32_t backlog; /* 0: read back after the run */
    uint64_t generation;
    uint64_t region_start;
    uint64_t per_file; /* block positions per file */
    uint64_t nblocks;  /* over all files */
    uint64_t next_seq;
    uint64_t *blocks;            /* [nblocks] expected state */
    uint64_t *slot_seq;          /* [depth] sequence number of each request slot's write */
    uint64_t *slot_blk;          /* [depth] block of each request slot's write */
    uint64_t *batch;             /* blocks of the writes completed since the last read-back */
    uint32_t nbatch;             /* entries in batch */
    uint32_t batch_cap;          /* backlog + depth: the drain adds at most depth */
    unsigned char *rbuf;         /* aligned read buffer of bs bytes */
    struct verify_hasher hasher; /* of kind: made once, used on every write */
    struct vstate_writer *state; /* the verify state file, NULL without one */
};

/* Little-endian fields, each one load or store (memcpy: any alignment). */
static inline void put_le16(unsigned char *p, uint16_t v)
{
    v = htole16(v);
    memcpy(p, &v, sizeof(v));
}

static inline void put_le32(unsigned char *p, uint32_t v)
{
    v = htole32(v);
    memcpy(p, &v, sizeof(v));
}

static inline void put_le64(unsigned char *p, uint64_t v)
{
    v = htole64(v);
    memcpy(p, &v, sizeof(v));
}

static inline uint16_t get_le16(const unsigned char *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof(v));
    return le16toh(v);
}

static inline uint32_t get_le32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return le32toh(v);
}

static inline uint64_t get_le64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return le64toh(v);
}

void verify_header_encode(void *block, const struct verify_header *h)
{
    unsigned char *p = block;
    put_le32(p + VH_MAGIC, h->magic);
    put_le16(p + VH_VERSION, h->version);
    put_le16(p + VH_KIND, h->kind);
    put_le64(p + VH_OFFSET, h->offset);
    put_le64(p + VH_LEN, h->len);
    put_le64(p + VH_GENERATION, h->generation);
    put_le64(p + VH_SEQ, h->seq);
    put_le32(p + VH_FILE, h->file);
    put_le32(p + VH_JOB, h->job);
    put_le64(p + VH_CHECKSUM, h->checksum);
    put_le64(p + VH_RESERVED, h->reserved);
}

void verify_header_decode(const void *block, struct verify_header *h)
{
    const unsigned char *p = block;
    h->magic = get_le32(p + VH_MAGIC);
    h->version = get_le16(p + VH_VERSION);
    h->kind = get_le16(p + VH_KIND);
    h->offset = get_le64(p + VH_OFFSET);
    h->len = get_le64(p + VH_LEN);
    h->generation = get_le64(p + VH_GENERATION);
    h->seq = get_le64(p + VH_SEQ);
    h->file = get_le32(p + VH_FILE);
    h->job = get_le32(p + VH_JOB);
    h->checksum = get_le64(p + VH_CHECKSUM);
    h->reserved = get_le64(p + VH_RESERVED);
}

/* The digest of every kind: its length, and for OpenSSL's its EVP name. */
static const struct {
    uint8_t len;
    const char *evp;
} digests[] = {
    [IOG_VERIFY_CRC32C] = {4, NULL},      [IOG_VERIFY_XXH64] = {8, NULL},
    [IOG_VERIFY_CRC32] = {4, NULL},       [IOG_VERIFY_MD5] = {16, "MD5"},
    [IOG_VERIFY_SHA1] = {20, "SHA1"},     [IOG_VERIFY_SHA256] = {32, "SHA256"},
    [IOG_VERIFY_SHA512] = {64, "SHA512"}, [IOG_VERIFY_CRC64] = {8, NULL},
    [IOG_VERIFY_XXH32] = {4, NULL},       [IOG_VERIFY_META] = {0, NULL},
};
#define NDIGESTS (sizeof(digests) / sizeof(digests[0]))

int verify_kind_known(uint32_t kind)
{
    return kind > IOG_VERIFY_NONE && kind < NDIGESTS;
}

uint32_t verify_digest_len(uint32_t kind)
{
    return verify_kind_known(kind) ? digests[kind].len : 0;
}

/* Bytes after the header that hold the digest: none for a checksum that
 * fits the header's field, else the digest rounded up to 8 bytes. */
static inline uint32_t digest_area(uint32_t kind)
{
    uint32_t n = verify_digest_len(kind);
    return n > 8 ? (n + 7) & ~7u : 0;
}

uint32_t verify_min_block(uint32_t kind)
{
    return IOG_VERIFY_HEADER + digest_area(kind);
}

int verify_hasher_init(struct verify_hasher *vh, uint32_t kind)
{
    memset(vh, 0, sizeof(*vh));
    if (!verify_kind_known(kind))
        return -EINVAL;
    vh->kind = kind;
    if (!digests[kind].evp)
        return 0;
    vh->md = EVP_MD_fetch(NULL, digests[kind].evp, NULL);
    vh->ctx = EVP_MD_CTX_new();
    if (!vh->md || !vh->ctx) {
        verify_hasher_fini(vh);
        return -ENOMEM;
    }
    return 0;
}

void verify_hasher_fini(struct verify_hasher *vh)
{
    EVP_MD_CTX_free(vh->ctx);
    EVP_MD_free(vh->md);
    vh->ctx = vh->md = NULL;
}

/* The number a checksum of at most 8 bytes gives. */
static uint64_t short_sum(uint32_t kind, const void *buf, size_t len)
{
    /* Block sizes are at most 1 GiB: they fit the libraries' int lengths. */
    switch (kind) {
    case IOG_VERIFY_CRC32C: /* standard CRC-32C: initial and final inversion */
        return ~crc32_iscsi((unsigned char *)buf, (int)len, ~0u) & 0xffffffffu;
    case IOG_VERIFY_XXH64:
        return XXH64(buf, len, 0);
    case IOG_VERIFY_CRC32:
        return crc32(0, buf, (uInt)len);
    case IOG_VERIFY_CRC64:
        /* fio's crc64 (crc/crc64.c) is the reflected CRC-64 of polynomial
         * 0xad93d23594c935a9 (its table's 0x95ac9329ac4bc9b5 reversed; ISA-L
         * calls it "Jones") from 0 without a final inversion. ISA-L inverts
         * the seed on entry and the result on return: seeding with ~0 and
         * inverting the result gives exactly that. */
        return ~crc64_jones_refl(~0ull, buf, len);
    case IOG_VERIFY_XXH32:
        return XXH32(buf, len, 0);
    default: /* META */
        return 0;
    }
}

uint64_t verify_digest(struct verify_hasher *vh, const void *buf, size_t len, unsigned char *out)
{
    if (!vh->ctx) {
        uint64_t v = short_sum(vh->kind, buf, len);
        put_le64(out, v);
        return v;
    }
    unsigned int n = 0;
    if (EVP_DigestInit_ex2(vh->ctx, vh->md, NULL) != 1 ||
        EVP_DigestUpdate(vh->ctx, buf, len) != 1 || EVP_DigestFinal_ex(vh->ctx, out, &n) != 1)
        memset(out, 0, verify_digest_len(vh->kind)); /* never matches a block's digest */
    return get_le64(out);
}

uint64_t verify_checksum(uint32_t kind, const void *buf, size_t len)
{
    struct verify_hasher vh;
    unsigned char d[VERIFY_DIGEST_MAX];
    if (verify_hasher_init(&vh, kind) != 0)
        return 0;
    uint64_t v = verify_digest(&vh, buf, len, d);
    verify_hasher_fini(&vh);
    return v;
}

/* A bijective 64-bit mixer (the splitmix64 finalizer). */
static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* What a block's stamps share: its generation, offset, file and job. */
static inline uint64_t stamp_key(const struct verify_header *h)
{
    uint64_t where = mix64(h->offset ^ mix64(((uint64_t)h->file << 32 | h->job) + 1));
    return mix64(h->generation ^ where);
}

/* For a fixed key and sector, key ^ seq * odd is a bijection of seq, and so
 * is mix64 of it: writes of one block within a generation never share a
 * stamp. */
static inline uint64_t stamp_at(uint64_t key, uint64_t seq, uint64_t sector)
{
    return mix64(key ^ (seq * 0x9e3779b97f4a7c15ull) ^ (sector * 0xd1b54a32d192ed03ull));
}

uint64_t verify_stamp(const struct verify_header *h, uint64_t sector)
{
    return stamp_at(stamp_key(h), h->seq, sector);
}

uint64_t verify_stale_sector(const void *block, size_t len, const struct verify_header *h)
{
    const unsigned char *p = block;
    uint64_t key = stamp_key(h);
    /* len is a multiple of 8: a sector that starts in the block holds a stamp */
    for (size_t off = VERIFY_SECTOR; off + VERIFY_STAMP <= len; off += VERIFY_SECTOR) {
        uint64_t sector = off / VERIFY_SECTOR;
        if (get_le64(p + off) != stamp_at(key, h->seq, sector))
            return sector;
    }
    return 0;
}

static void stamp_sectors(unsigned char *p, size_t len, const struct verify_header *h)
{
    uint64_t key = stamp_key(h);
    for (size_t off = VERIFY_SECTOR; off + VERIFY_STAMP <= len; off += VERIFY_SECTOR)
        put_le64(p + off, stamp_at(key, h->seq, off / VERIFY_SECTOR));
}

uint64_t verify_block_checksum(struct verify_hasher *vh, uint32_t kind, void *block, size_t len,
                               unsigned char *digest)
{
    struct verify_hasher own;
    if (!vh) {
        if (verify_hasher_init(&own, kind) != 0)
            return 0;
        vh = &own;
    }
    unsigned char *p = block, saved[8 + VERIFY_DIGEST_MAX], d[VERIFY_DIGEST_MAX];
    uint32_t area = digest_area(kind);
    memcpy(saved, p + VH_CHECKSUM, 8);
    memcpy(saved + 8, p + VH_DIGEST, area);
    memset(p + VH_CHECKSUM, 0, 8);
    memset(p + VH_DIGEST, 0, area);
    uint64_t c = verify_digest(vh, block, len, digest ? digest : d);
    memcpy(p + VH_CHECKSUM, saved, 8);
    memcpy(p + VH_DIGEST, saved + 8, area);
    if (vh == &own)
        verify_hasher_fini(&own);
    return c;
}

void verify_seal(struct verify_hasher *vh, void *block, size_t len, const struct verify_header *h)
{
    struct verify_hasher own;
    if (!vh) {
        if (verify_hasher_init(&own, h->kind) != 0)
            return;
        vh = &own;
    }
    unsigned char *p = block, d[VERIFY_DIGEST_MAX];
    uint32_t area = digest_area(h->kind);
    struct verify_header t = *h;
    t.checksum = 0;
    stamp_sectors(block, len, &t);
    verify_header_encode(block, &t);
    memset(p + VH_DIGEST, 0, area);
    put_le64(p + VH_CHECKSUM, verify_digest(vh, block, len, d));
    memcpy(p + VH_DIGEST, d, verify_digest_len(h->kind) * (area != 0));
    if (vh == &own)
        verify_hasher_fini(&own);
}

int verify_classify(struct verify_hasher *vh, void *block, int64_t got,
                    const struct verify_expect *e, struct iog_verify_failure *f)
{
    memset(f, 0, sizeof(*f));
    f->file = e->file;
    f->offset = e->offset;
    f->len = e->len;
    f->expected_generation = e->generation;
    f->expected_seq = e->seq;
    if (got < 0 || (uint64_t)got != e->len) {
        f->kind = IOG_VERIFY_READ_ERROR;
        f->error = got < 0 ? (int32_t)-got : EIO;
        return 0;
    }
    struct verify_header h;
    verify_header_decode(block, &h);
    if (h.magic != VERIFY_MAGIC || h.version != VERIFY_VERSION || !verify_kind_known(h.kind)) {
        f->kind = IOG_VERIFY_LOST; /* never written by a verifying job */
        return 0;
    }
    f->found_generation = h.generation;
    f->found_seq = h.seq;
    f->found_offset = h.offset;
    f->found_file = h.file;
    f->stored_checksum = h.checksum;
    int ours = h.generation == e->generation;
    if (h.len < verify_min_block(h.kind) || h.len > e->len) {
        /* The checksum cannot be checked: judge by whose header it is. */
        f->kind = ours ? IOG_VERIFY_TORN : IOG_VERIFY_LOST;
        return 0;
    }
    unsigned char d[VERIFY_DIGEST_MAX];
    /* a block of another kind than the job's (a failure anyway) gets a hasher of its own */
    struct verify_hasher *use = vh && vh->kind == h.kind ? vh : NULL;
    f->computed_checksum = verify_block_checksum(use, h.kind, block, (size_t)h.len, d);
    int sum_ok = f->computed_checksum == h.checksum;
    if (digest_area(h.kind))
        sum_ok =
            sum_ok && memcmp((unsigned char *)block + VH_DIGEST, d, verify_digest_len(h.kind)) == 0;
    if (!sum_ok || verify_stale_sector(block, (size_t)h.len, &h)) {
        f->kind = IOG_VERIFY_TORN;
        return 0;
    }
    if (!ours) {
        f->kind = IOG_VERIFY_LOST;
        return 0;
    }
    if (h.offset != e->offset || h.file != e->file || h.job != e->job || h.len != e->len) {
        f->kind = IOG_VERIFY_MISDIRECTED;
        return 0;
    }
    if (e->seq && h.seq < e->seq) {
        f->kind = IOG_VERIFY_LOST;
        return 0;
    }
    return 1;
}

int verify_create(const struct verify_params *p, struct verify_state **out, char *err,
                  size_t errlen)
{
    const struct iog_job_spec *spec = p->spec;
    struct verify_state *vs = calloc(1, sizeof(*vs));
    if (!vs)
        goto nomem;
    vs->kind = spec->verify;
    vs->job = p->job;
    vs->bs = (uint32_t)spec->bs[IOG_DIR_WRITE][0].lo;
    vs->fatal = (spec->flags & IOG_JOB_VERIFY_FATAL) != 0;
    vs->backlog = spec->verify_backlog;
    vs->generation = p->generation;
    vs->region_start = spec->offset;
    vs->per_file = p->file_size / vs->bs;
    vs->nblocks = vs->per_file * p->nfiles;
    /* calloc leaves untouched pages to the kernel's zero page: positions
     * never written cost no memory */
    vs->blocks = calloc(vs->nblocks, sizeof(*vs->blocks));
    vs->slot_seq = calloc(p->depth, sizeof(*vs->slot_seq));
    vs->slot_blk = calloc(p->depth, sizeof(*vs->slot_blk));
    if (!vs->blocks || !vs->slot_seq || !vs->slot_blk)
        goto nomem;
    if (vs->backlog) {
        vs->batch_cap = vs->backlog + p->depth;
        vs->batch = calloc(vs->batch_cap, sizeof(*vs->batch));
        if (!vs->batch)
            goto nomem;
    }
    void *rbuf;
    if (posix_memalign(&rbuf, 4096, ((size_t)vs->bs + 4095) & ~(size_t)4095) != 0)
        goto nomem;
    vs->rbuf = rbuf;
    if (verify_hasher_init(&vs->hasher, vs->kind) != 0)
        goto nomem;
    if (spec->verify_state[0]) {
        struct vstate_params sp = {
            .path = spec->verify_state,
            .id = &spec->verify_state_id,
            .generation = p->generation,
            .job = p->job,
            .kind = vs->kind,
            .block_size = vs->bs,
            .region_start = vs->region_start,
            .file_blocks = vs->per_file,
            .nfiles = p->nfiles,
            .flags = (spec->flags & (IOG_JOB_OSYNC | IOG_JOB_ODSYNC)) ? VS_DURABLE_WRITES : 0,
            .names = p->names};
        int rc = vstate_open(&sp, &vs->state, err, errlen);
        if (rc < 0) {
            verify_destroy(vs);
            return rc;
        }
    }
    *out = vs;
    return 0;

nomem:
    verify_destroy(vs);
    if (err && errlen > 0)
        snprintf(err, errlen, "job %u: out of memory for the verification state", p->job);
    return -ENOMEM;
}

void verify_finish(struct verify_state *vs, int complete)
{
    if (!vs || !vs->state)
        return;
    vstate_close(vs->state, complete, &vs->state_records, &vs->state_error);
    vs->state = NULL;
}

void verify_release(struct verify_state *vs)
{
    if (!vs)
        return;
    verify_finish(vs, 0);
    free(vs->blocks);
    free(vs->slot_seq);
    free(vs->slot_blk);
    free(vs->batch);
    free(vs->rbuf);
    vs->blocks = vs->slot_seq = vs->slot_blk = vs->batch = NULL;
    vs->rbuf = NULL;
    vs->nbatch = 0;
    verify_hasher_fini(&vs->hasher);
}

void verify_destroy(struct verify_state *vs)
{
    verify_release(vs);
    free(vs);
}

void verify_before_write(struct verify_state *vs, uint32_t slot, void *buf, uint32_t len,
                         uint32_t file, uint64_t offset)
{
    struct verify_header h = {
        .magic = VERIFY_MAGIC,
        .version = VERIFY_VERSION,
        .kind = (uint16_t)vs->kind,
        .offset = offset,
        .len = len,
        .generation = vs->generation,
        .seq = ++vs->next_seq,
        .file = file,
        .job = vs->job,
    };
    verify_seal(&vs->hasher, buf, len, &h);
    vs->slot_seq[slot] = h.seq;
    vs->slot_blk[slot] = file * vs->per_file + (offset - vs->region_start) / vs->bs;
}

void verify_submitted(struct verify_state *vs, uint32_t slot)
{
    uint64_t *b = &vs->blocks[vs->slot_blk[slot]];
    if (*b & B_FLIGHT_MASK)
        *b |= B_OVERLAP | B_RACED;
    else
        *b &= ~B_OVERLAP; /* a write alone: it can settle the block's contents */
    *b += B_FLIGHT_ONE;
}

void verify_completed(struct verify_state *vs, uint32_t slot, int ok)
{
    uint64_t blk = vs->slot_blk[slot];
    uint64_t *b = &vs->blocks[blk];
    uint64_t v = *b - B_FLIGHT_ONE;
    if (ok) {
        uint64_t seq = vs->slot_seq[slot] & B_SEQ_MASK;
        if (seq > (v & B_SEQ_MASK))
            v = (v & ~B_SEQ_MASK) | seq;
        /* The last of writes that never overlapped decides the contents. */
        if (!(v & B_FLIGHT_MASK) && !(v & B_OVERLAP))
            v &= ~(B_RACED | B_UNKNOWN);
        vs->blocks_written++;
        if (vs->backlog && vs->nbatch < vs->batch_cap)
            vs->batch[vs->nbatch++] = blk;
        if (vs->state) /* raced or unsettled: any write of this run may be what lands */
            vstate_wrote(vs->state, (uint32_t)blk,
                         (v & (B_RACED | B_UNKNOWN)) ? 0 : (v & B_SEQ_MASK));
    } else {
        v |= B_UNKNOWN;
    }
    *b = v;
}

void verify_synced(struct verify_state *vs)
{
    if (vs->state)
        vstate_synced(vs->state);
}

int verify_backlog_due(const struct verify_state *vs)
{
    return vs->backlog && vs->nbatch >= vs->backlog;
}

int verify_stopped(const struct verify_state *vs)
{
    return vs->stop;
}

static void record_failure(struct verify_state *vs, const struct iog_verify_failure *f)
{
    vs->failures++;
    vs->by_kind[f->kind]++;
    if (vs->nrecords < IOG_VERIFY_RECORDS)
        vs->records[vs->nrecords++] = *f;
    if (vs->fatal)
        vs->stop = 1;
}

/* Reads back block `blk` and judges it; skipped when it was not written
 * this run or its contents are not known. */
static void check_block(struct verify_state *vs, const int *fds, uint64_t blk)
{
    uint64_t st = vs->blocks[blk];
    uint64_t seq = st & B_SEQ_MASK;
    if (seq == 0 || (st & (B_UNKNOWN | B_FLIGHT_MASK)))
        return;
    uint32_t file = (uint32_t)(blk / vs->per_file);
    struct verify_expect e = {
        .generation = vs->generation,
        .offset = vs->region_start + (blk % vs->per_file) * vs->bs,
        .len = vs->bs,
        .seq = (st & B_RACED) ? 0 : seq,
        .file = file,
        .job = vs->job,
    };
    ssize_t r;
    do
        r = pread(fds[file], vs->rbuf, vs->bs, (off_t)e.offset);
    while (r < 0 && errno == EINTR);
    struct iog_verify_failure f;
    vs->blocks_checked++;
    if (!verify_classify(&vs->hasher, vs->rbuf, r < 0 ? -(int64_t)errno : (int64_t)r, &e, &f))
        record_failure(vs, &f);
}

void verify_readback_batch(struct verify_state *vs, const int *fds, const int *cancel)
{
    uint64_t t0 = clock_now_ns();
    for (uint32_t i = 0; i < vs->nbatch && !vs->stop; i++) {
        if (__atomic_load_n(cancel, __ATOMIC_RELAXED))
            break;
        check_block(vs, fds, vs->batch[i]);
    }
    vs->nbatch = 0;
    vs->elapsed_ns += clock_now_ns() - t0;
}

void verify_readback_all(struct verify_state *vs, const int *fds, const int *cancel)
{
    uint64_t t0 = clock_now_ns();
    for (uint64_t blk = 0; blk < vs->nblocks && !vs->stop; blk++) {
        if (__atomic_load_n(cancel, __ATOMIC_RELAXED))
            break;
        check_block(vs, fds, blk);
    }
    vs->elapsed_ns += clock_now_ns() - t0;
}

void verify_merge(const struct verify_state *vs, struct iog_verify_stats *out,
                  struct iog_verify_failure *recs, uint32_t *nrecs)
{
    out->blocks_written += vs->blocks_written;
    out->blocks_checked += vs->blocks_checked;
    out->failures += vs->failures;
    for (int k = 0; k < IOG_VERIFY_KINDS; k++)
        out->by_kind[k] += vs->by_kind[k];
    if (vs->elapsed_ns > out->elapsed_ns)
        out->elapsed_ns = vs->elapsed_ns;
    out->state_records += vs->state_records;
    if (!out->state_error)
        out->state_error = vs->state_error;
    for (uint32_t i = 0; i < vs->nrecords && *nrecs < IOG_VERIFY_RECORDS; i++)
        recs[(*nrecs)++] = vs->records[i];
}
