/*
 * data.c - write buffer contents and the measurement of what was written
 * (see data.h).
 *
 * Contents. Every buffer is generated from a 64-bit content seed, so equal
 * seeds give equal bytes and a repeated buffer is regenerated instead of
 * stored. A buffer is built chunk by chunk (compress_chunk bytes, 0 means
 * 512; a last, shorter chunk is built the same way at its own length): first
 * the random part, non-zero pseudo-random bytes so that written data never
 * looks like a hole, then the compressible part, the pattern repeated from
 * its first byte in every chunk (so that the compressible parts of all chunks
 * are equal), or zeros without a pattern. IOG_JOB_ZERO_BUFS gives zeros.
 *
 * The random share of a chunk is not simply (100 - compress_pct)%: deflate
 * codes random bytes as literals of slightly more than 8 bits, each chunk's
 * compressible part still costs a few bytes of back references, and every
 * buffer carries a zlib header, Huffman tables and a checksum. Together
 * these add about 2% of a 4 KiB buffer, which would make the realized ratio
 * miss its target by that much. So data_writer_create calibrates the share
 * against zlib itself: it compresses reference buffers (built exactly as
 * writes are, from fixed seeds, 64 KiB of them in all, each of the largest
 * write size up to 256 KiB) at level 6 and bisects the random share until
 * their compressed size is (100 - compress_pct)% of their size. Writes of
 * that size then hit the target; much smaller writes of a mix come out a
 * little less compressible (their fixed overhead weighs more). The share
 * only ever goes down from the nominal one, and compress_pct 0 stays fully
 * random (zlib stores it with a few bytes of framing: ratio just over 1).
 *
 * Refill and dedupe. Without either, buffers keep the contents given by
 * data_fill_initial and data_before_write does nothing. Otherwise every
 * write gets new contents: with probability dedupe_pct / 100 those of one of
 * the last 16 distinct buffers of the pool (uniformly chosen), else those of
 * a fresh seed. The pool holds the seeds of sampled writes (below): a buffer
 * is repeated only if it was measured, so the duplicates a sample can see
 * are the duplicates that were written, and the measured share estimates
 * dedupe_pct (a repeat of a buffer that was not sampled would be a
 * duplicate no sample could detect). While the pool is still empty a
 * repeat gets a fresh seed instead.
 *
 * Measurement. Every 64th completed write (the 1st, 65th, ...) is sampled,
 * at most 4096 per thread and at most 2^20 blocks: it is compressed on its
 * own with zlib level 6 (a deflate stream made once and reset per sample),
 * and the 64-bit hash (crc32 << 32 | adler32) of each 4 KiB block (a
 * shorter write is one block) is kept for data_count_duplicates.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "data.h"
#include "rng.h"

#define DEFAULT_CHUNK 512
#define POOL_SIZE     16
#define SAMPLE_EVERY  64
#define SAMPLES_MAX   4096
#define HASH_BLOCK    4096
#define HASHES_MAX    (1u << 20)
#define ZLIB_LEVEL    6

/* Calibration of the random share (see the top comment). */
#define CALIBRATE_BYTES   (64u << 10)  /* compressed per step, over one or more buffers */
#define CALIBRATE_LEN_MAX (256u << 10) /* size of a reference buffer, at most          */
#define CALIBRATE_STEPS   14
#define CALIBRATE_SEED    0x243f6a8885a308d3ull

/* Remembers which content seed a request buffer holds, so that a sampled
 * write's contents can enter the dedupe pool. Direct mapped by address: a
 * collision forgets the older buffer, which then just does not enter the
 * pool. */
struct seed_slot {
    const void *buf;
    uint64_t seed;
};

struct data_writer {
    struct rng rng; /* content seeds and dedupe choices of this thread */
    uint32_t flags;
    uint32_t dedupe_pct;
    size_t chunk;
    double random_share; /* of each chunk, after the deflate correction */
    size_t pattern_len;
    uint8_t pattern[IOG_PATTERN_MAX];
    int varies; /* refill or dedupe: new contents before every write */

    uint64_t pool[POOL_SIZE];
    uint32_t pool_len, pool_next;
    struct seed_slot *slots;
    size_t slot_mask;

    /* measurement */
    uint64_t writes;
    uint32_t samples;
    size_t max_bs;
    z_stream zs;
    int zs_ready;
    unsigned char *zout;
    size_t zout_cap;
    uint64_t *hashes;
    size_t nhashes, hash_cap;
    struct data_totals totals;
};

static void set_err(char *err, size_t errlen, const char *msg)
{
    if (err && errlen)
        snprintf(err, errlen, "%s", msg);
}

/* Random bytes of a chunk of n bytes. */
static size_t random_bytes(const struct data_writer *dw, size_t n)
{
    double r = dw->random_share * (double)n + 0.5;
    if (r <= 0)
        return 0;
    return r >= (double)n ? n : (size_t)r;
}

/* The bytes of content `seed`: a function of the seed and len only, and the
 * contents of a shorter len are a prefix of a longer one. */
static void generate(const struct data_writer *dw, uint64_t seed, unsigned char *p, size_t len)
{
    if (dw->flags & IOG_JOB_ZERO_BUFS) {
        memset(p, 0, len);
        return;
    }
    struct rng r;
    rng_seed(&r, seed, 0);
    for (size_t off = 0; off < len; off += dw->chunk) {
        size_t n = len - off < dw->chunk ? len - off : dw->chunk;
        size_t nrand = random_bytes(dw, n);
        rng_fill_nonzero(&r, p + off, nrand);
        unsigned char *q = p + off + nrand;
        size_t rest = n - nrand;
        if (dw->pattern_len == 0) {
            memset(q, 0, rest);
            continue;
        }
        for (size_t i = 0; i < rest; i += dw->pattern_len) {
            size_t m = rest - i < dw->pattern_len ? rest - i : dw->pattern_len;
            memcpy(q + i, dw->pattern, m);
        }
    }
}

static struct seed_slot *slot_of(const struct data_writer *dw, const void *buf)
{
    uint64_t h = (uint64_t)(uintptr_t)buf * 0x9e3779b97f4a7c15ull;
    return &dw->slots[(h >> 32) & dw->slot_mask];
}

static void fill_seed(struct data_writer *dw, uint64_t seed, void *buf, size_t len)
{
    generate(dw, seed, buf, len);
    struct seed_slot *s = slot_of(dw, buf);
    s->buf = buf;
    s->seed = seed;
}

void data_fill_initial(struct data_writer *dw, void *buf, size_t len)
{
    fill_seed(dw, rng_next(&dw->rng), buf, len);
}

void data_before_write(struct data_writer *dw, void *buf, size_t len)
{
    if (!dw->varies)
        return;
    uint64_t seed;
    if (dw->pool_len > 0 && rng_below(&dw->rng, 100) < dw->dedupe_pct)
        seed = dw->pool[rng_below(&dw->rng, dw->pool_len)];
    else
        seed = rng_next(&dw->rng);
    fill_seed(dw, seed, buf, len);
}

/* Puts the seed of a sampled buffer into the pool unless it is there. */
static void pool_add(struct data_writer *dw, const void *buf)
{
    const struct seed_slot *s = slot_of(dw, buf);
    if (s->buf != buf)
        return;
    for (uint32_t i = 0; i < dw->pool_len; i++)
        if (dw->pool[i] == s->seed)
            return;
    dw->pool[dw->pool_next] = s->seed;
    dw->pool_next = (dw->pool_next + 1) % POOL_SIZE;
    if (dw->pool_len < POOL_SIZE)
        dw->pool_len++;
}

static uint64_t block_hash(const unsigned char *p, size_t n)
{
    uint64_t c = crc32(0L, Z_NULL, 0);
    uint64_t a = adler32(0L, Z_NULL, 0);
    c = crc32((uLong)c, p, (uInt)n);
    a = adler32((uLong)a, p, (uInt)n);
    return (c << 32) | (a & 0xffffffffu);
}

static size_t compressed_size(struct data_writer *dw, const void *buf, size_t len)
{
    if (deflateReset(&dw->zs) != Z_OK)
        return len;
    dw->zs.next_in = (Bytef *)(uintptr_t)buf;
    dw->zs.avail_in = (uInt)len;
    dw->zs.next_out = dw->zout;
    dw->zs.avail_out = (uInt)dw->zout_cap;
    if (deflate(&dw->zs, Z_FINISH) != Z_STREAM_END)
        return len; /* cannot happen with deflateBound room: count as incompressible */
    return dw->zout_cap - dw->zs.avail_out;
}

/* Sets the random share of a chunk so that zlib compresses buffers of the
 * largest write size (up to CALIBRATE_LEN_MAX) to (100 - compress_pct)% of
 * their size. 0 or -ENOMEM. */
static int calibrate(struct data_writer *dw, uint32_t compress_pct)
{
    double nominal = (100.0 - compress_pct) / 100.0;
    dw->random_share = nominal;
    if (compress_pct == 0 || compress_pct == 100 || (dw->flags & IOG_JOB_ZERO_BUFS))
        return 0;
    size_t len = dw->max_bs < CALIBRATE_LEN_MAX ? dw->max_bs : CALIBRATE_LEN_MAX;
    size_t nbufs = (CALIBRATE_BYTES + len - 1) / len;
    unsigned char *buf = malloc(len);
    if (!buf)
        return -ENOMEM;
    double target = nominal * (double)(len * nbufs);
    double lo = 0, hi = nominal;
    for (int step = 0; step < CALIBRATE_STEPS; step++) {
        dw->random_share = (lo + hi) / 2;
        size_t compressed = 0;
        for (size_t i = 0; i < nbufs; i++) {
            generate(dw, CALIBRATE_SEED + i, buf, len);
            compressed += compressed_size(dw, buf, len);
        }
        if ((double)compressed > target)
            hi = dw->random_share;
        else
            lo = dw->random_share;
    }
    dw->random_share = (lo + hi) / 2;
    free(buf);
    return 0;
}

int data_writer_create(const struct iog_job_spec *spec, uint32_t thread, size_t max_bs,
                       struct data_writer **out, char *err, size_t errlen)
{
    int rc = 0;
    *out = NULL;
    if (max_bs == 0 || spec->compress_pct > 100 || spec->dedupe_pct > 100 ||
        spec->pattern_len > IOG_PATTERN_MAX || max_bs > (size_t)UINT32_MAX) {
        set_err(err, errlen, "data: bad buffer size, compress, dedupe or pattern setting");
        return -EINVAL;
    }
    struct data_writer *dw = calloc(1, sizeof(*dw));
    if (!dw) {
        set_err(err, errlen, "data: out of memory");
        return -ENOMEM;
    }
    rng_seed(&dw->rng, spec->seed ^ 0x6a09e667f3bcc908ull, thread);
    dw->flags = spec->flags;
    dw->dedupe_pct = spec->dedupe_pct;
    dw->chunk = spec->compress_chunk ? spec->compress_chunk : DEFAULT_CHUNK;
    dw->pattern_len = spec->pattern_len;
    memcpy(dw->pattern, spec->pattern, spec->pattern_len);
    dw->varies = (spec->flags & IOG_JOB_REFILL) || spec->dedupe_pct > 0;
    dw->max_bs = max_bs;

    /* a slot table with room for every request buffer, at most half full */
    size_t nslots = 16;
    while (nslots < 4 * (size_t)(spec->iodepth ? spec->iodepth : 1))
        nslots <<= 1;
    dw->slots = calloc(nslots, sizeof(*dw->slots));
    dw->slot_mask = nslots - 1;

    size_t per_write = (max_bs + HASH_BLOCK - 1) / HASH_BLOCK;
    dw->hash_cap = per_write > HASHES_MAX / SAMPLES_MAX ? HASHES_MAX : per_write * SAMPLES_MAX;
    dw->hashes = malloc(dw->hash_cap * sizeof(*dw->hashes));

    if (deflateInit2(&dw->zs, ZLIB_LEVEL, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY) == Z_OK) {
        dw->zs_ready = 1;
        dw->zout_cap = deflateBound(&dw->zs, (uLong)max_bs);
        dw->zout = malloc(dw->zout_cap);
    }
    if (!dw->slots || !dw->hashes || !dw->zs_ready || !dw->zout ||
        calibrate(dw, spec->compress_pct) < 0) {
        set_err(err, errlen, "data: out of memory");
        rc = -ENOMEM;
        goto out;
    }
    *out = dw;
out:
    if (rc < 0)
        data_writer_destroy(dw);
    return rc;
}

void data_after_write(struct data_writer *dw, const void *buf, size_t len)
{
    uint64_t n = dw->writes++;
    if (n % SAMPLE_EVERY != 0 || dw->samples >= SAMPLES_MAX || len == 0 || len > dw->max_bs)
        return;
    size_t nblocks = (len + HASH_BLOCK - 1) / HASH_BLOCK;
    if (nblocks > dw->hash_cap - dw->nhashes)
        return; /* the hash array is full: the sample ends here */
    dw->samples++;
    if (dw->varies)
        pool_add(dw, buf);
    const unsigned char *p = buf;
    for (size_t off = 0; off < len; off += HASH_BLOCK) {
        size_t m = len - off < HASH_BLOCK ? len - off : HASH_BLOCK;
        dw->hashes[dw->nhashes++] = block_hash(p + off, m);
    }
    dw->totals.sampled_bytes += len;
    dw->totals.compressed_bytes += compressed_size(dw, buf, len);
    dw->totals.blocks += nblocks;
}

void data_writer_totals(const struct data_writer *dw, struct data_totals *out)
{
    *out = dw->totals;
}

size_t data_writer_hashes(const struct data_writer *dw, const uint64_t **hashes)
{
    *hashes = dw->hashes;
    return dw->nhashes;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int data_count_duplicates(const uint64_t *const *hashes, const size_t *counts, size_t nthreads,
                          uint64_t *duplicates)
{
    *duplicates = 0;
    size_t total = 0;
    for (size_t t = 0; t < nthreads; t++)
        total += counts[t];
    if (total < 2)
        return 0;
    uint64_t *all = malloc(total * sizeof(*all));
    if (!all)
        return -ENOMEM;
    size_t n = 0;
    for (size_t t = 0; t < nthreads; t++) {
        if (counts[t] == 0)
            continue; /* its array may be NULL */
        memcpy(all + n, hashes[t], counts[t] * sizeof(*all));
        n += counts[t];
    }
    qsort(all, n, sizeof(*all), cmp_u64);
    uint64_t dup = 0;
    for (size_t i = 1; i < n; i++)
        dup += all[i] == all[i - 1];
    *duplicates = dup;
    free(all);
    return 0;
}

void data_writer_destroy(struct data_writer *dw)
{
    if (!dw)
        return;
    if (dw->zs_ready)
        deflateEnd(&dw->zs);
    free(dw->zout);
    free(dw->hashes);
    free(dw->slots);
    free(dw);
}
