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
 * write size up to DATA_SAMPLE_CAP, the most a sample measures) at level 6 and bisects the random
 * share until their compressed size is (100 - compress_pct)% of their size. Writes of that size
 * then hit the target; much smaller writes of a mix come out a little less compressible (their
 * fixed overhead weighs more). The share only ever goes down from the nominal one, and compress_pct
 * 0 stays fully random (zlib stores it with a few bytes of framing: ratio just over 1).
 *
 * Refill and dedupe. Without either, buffers keep the contents given by
 * data_fill_initial and data_before_write does nothing. Otherwise every
 * write gets new contents: with probability dedupe_pct / 100 those of one of
 * the last 16 distinct buffers of the pool (uniformly chosen), else those of
 * a fresh seed. The pool holds the seeds of captured writes (below): a
 * buffer is repeated only if it was measured, so the duplicates a sample can see
 * are the duplicates that were written, and the measured share estimates
 * dedupe_pct (a repeat of a buffer that was not sampled would be a
 * duplicate no sample could detect). While the pool is still empty a
 * repeat gets a fresh seed instead.
 *
 * Measurement, and what it costs the I/O thread. A write is due for a
 * sample by bytes written: the first completed write is, and after a capture
 * of n bytes of a write that started at byte w of the thread's writes, the
 * first write that starts at or after w + 64 n (CAPTURE_SPACING): of equal
 * writes up to sample_cap, every 64th. Capture copies the first n = min(len,
 * sample_cap) bytes of the write into a free slot of the capture ring (as
 * many slots of sample_cap <= DATA_SAMPLE_CAP bytes as the ring's bytes
 * allow, allocated at create) and publishes it with a release store of the
 * ring head; the analysing thread takes it with an acquire load and gives the slot back
 * with a release store of the tail. So the I/O thread pays, per write, one
 * addition and one comparison, and per capture one memcpy: captured bytes
 * are at most 1/64 (1.6%) of the bytes written plus one sample. A due write
 * that finds every slot taken is not captured (samples_skipped counts it):
 * the I/O thread never waits for the analysis, and when the analysis is
 * slower than the captures the sample simply thins out. At most 4096 samples
 * are captured per thread, and at most 2^20 blocks.
 *
 * Analysis (data_analyse_one, on the session's analysis thread): the 64-bit
 * hash (XXH3, from libxxhash) of each of a sample's 4 KiB blocks (a shorter
 * sample is one block) is kept for data_count_duplicates, and, when the
 * analysis thread's budget for it allows, the sample is compressed on its
 * own with zlib level 6 (the analyser's deflate stream, reset per sample).
 * Hashing is cheap and compressing is not, so the dedupe figure rests on
 * every captured sample (blocks) and the compression ratio on the
 * compressed ones (sampled_bytes). Every captured sample is analysed (the
 * analysis thread drains the rings before results are read), so the totals
 * are those of exactly the captured samples. The dedupe pool takes a seed when its
 * buffer is captured (on the writer's thread, which owns the pool), so every
 * repeat of a pooled seed repeats a buffer that is measured.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include <zlib.h>

#include "data.h"
#include "rng.h"

#define DEFAULT_CHUNK 512
#define POOL_SIZE     16
#define SAMPLES_MAX   4096
#define HASH_BLOCK    4096
#define HASHES_MAX    (1u << 20)
#define ZLIB_LEVEL    6

/* Capture (see the top comment). */
#define CAPTURE_SPACING 64 /* bytes written per byte captured, at least */
#define RING_SLOTS_MAX  256

/* Calibration of the random share (see the top comment). */
#define CALIBRATE_BYTES   (64u << 10)     /* compressed per step, over one or more buffers */
#define CALIBRATE_LEN_MAX DATA_SAMPLE_CAP /* a reference buffer: what a sample measures */
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

/* One capture slot: the first len bytes of a write. */
struct sample_slot {
    unsigned char *bytes;
    size_t len;
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
    size_t max_bs;

    /* capture: written by the writer's thread only */
    uint64_t written;      /* bytes of completed counted writes */
    uint64_t next_capture; /* written at which a write is due, UINT64_MAX: never */
    uint32_t captured;
    size_t blocks_captured;
    uint64_t skipped;
    size_t sample_cap;
    uint32_t nring; /* slots in ring */
    struct sample_slot *ring;
    unsigned char *ringmem;
    /* ring positions (counts, slot = count % nring): head written by the
     * writer (release), tail by the analysing thread (release) */
    uint64_t head __attribute__((aligned(64)));
    uint64_t tail __attribute__((aligned(64)));

    /* analysis: written by the analysing thread only */
    uint64_t *hashes __attribute__((aligned(64)));
    size_t nhashes, hash_cap;
    struct data_totals totals;
};

struct data_analyser {
    z_stream zs;
    unsigned char *zout;
    size_t zout_cap;
    size_t max_len;
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

int data_writer_varies(const struct data_writer *dw)
{
    return dw->varies;
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
    return XXH3_64bits(p, n);
}

int data_analyser_create(size_t max_len, struct data_analyser **out)
{
    *out = NULL;
    struct data_analyser *an = calloc(1, sizeof(*an));
    if (!an)
        return -ENOMEM;
    if (deflateInit2(&an->zs, ZLIB_LEVEL, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(an);
        return -ENOMEM;
    }
    an->max_len = max_len;
    an->zout_cap = deflateBound(&an->zs, (uLong)max_len);
    an->zout = malloc(an->zout_cap);
    if (!an->zout) {
        data_analyser_destroy(an);
        return -ENOMEM;
    }
    *out = an;
    return 0;
}

void data_analyser_destroy(struct data_analyser *an)
{
    if (!an)
        return;
    deflateEnd(&an->zs);
    free(an->zout);
    free(an);
}

static size_t compressed_size(struct data_analyser *an, const void *buf, size_t len)
{
    if (len > an->max_len || deflateReset(&an->zs) != Z_OK)
        return len;
    an->zs.next_in = (Bytef *)(uintptr_t)buf;
    an->zs.avail_in = (uInt)len;
    an->zs.next_out = an->zout;
    an->zs.avail_out = (uInt)an->zout_cap;
    if (deflate(&an->zs, Z_FINISH) != Z_STREAM_END)
        return len; /* cannot happen with deflateBound room: count as incompressible */
    return an->zout_cap - an->zs.avail_out;
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
    struct data_analyser *an = NULL;
    unsigned char *buf = malloc(len);
    if (!buf || data_analyser_create(len, &an) < 0) {
        free(buf);
        return -ENOMEM;
    }
    double target = nominal * (double)(len * nbufs);
    double lo = 0, hi = nominal;
    for (int step = 0; step < CALIBRATE_STEPS; step++) {
        dw->random_share = (lo + hi) / 2;
        size_t compressed = 0;
        for (size_t i = 0; i < nbufs; i++) {
            generate(dw, CALIBRATE_SEED + i, buf, len);
            compressed += compressed_size(an, buf, len);
        }
        if ((double)compressed > target)
            hi = dw->random_share;
        else
            lo = dw->random_share;
    }
    dw->random_share = (lo + hi) / 2;
    data_analyser_destroy(an);
    free(buf);
    return 0;
}

int data_writer_create(const struct iog_job_spec *spec, uint32_t thread, size_t max_bs,
                       size_t ring_bytes, struct data_writer **out, char *err, size_t errlen)
{
    int rc = 0;
    *out = NULL;
    if (max_bs == 0 || spec->compress_pct > 100 || spec->dedupe_pct > 100 ||
        spec->pattern_len > IOG_PATTERN_MAX || max_bs > (size_t)UINT32_MAX) {
        set_err(err, errlen, "data: bad buffer size, compress, dedupe or pattern setting");
        return -EINVAL;
    }
    /* the ring positions sit on cache lines of their own */
    struct data_writer *dw = aligned_alloc(64, (sizeof(*dw) + 63) & ~(size_t)63);
    if (dw)
        memset(dw, 0, sizeof(*dw));
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

    /* capture ring: whole writes up to DATA_SAMPLE_CAP, as many as fit in
     * ring_bytes (at most RING_SLOTS_MAX); a smaller budget shortens the one
     * slot */
    size_t cap = max_bs < DATA_SAMPLE_CAP ? max_bs : DATA_SAMPLE_CAP;
    size_t nring = cap ? ring_bytes / cap : 0;
    if (nring > RING_SLOTS_MAX)
        nring = RING_SLOTS_MAX;
    if (nring == 0) {
        nring = 1;
        size_t fit = ring_bytes & ~(size_t)(HASH_BLOCK - 1);
        if (fit < cap)
            cap = fit > HASH_BLOCK ? fit : HASH_BLOCK < cap ? HASH_BLOCK : cap;
    }
    dw->sample_cap = cap;
    dw->nring = (uint32_t)nring;
    dw->ring = calloc(nring, sizeof(*dw->ring));
    dw->ringmem = malloc(nring * cap);
    if (dw->ring && dw->ringmem)
        for (size_t i = 0; i < nring; i++)
            dw->ring[i].bytes = dw->ringmem + i * cap;

    size_t per_sample = (cap + HASH_BLOCK - 1) / HASH_BLOCK;
    dw->hash_cap = per_sample > HASHES_MAX / SAMPLES_MAX ? HASHES_MAX : per_sample * SAMPLES_MAX;
    dw->hashes = malloc(dw->hash_cap * sizeof(*dw->hashes));

    if (!dw->slots || !dw->hashes || !dw->ring || !dw->ringmem ||
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

/* A due write: into a free slot of the ring, or counted as skipped. */
static void capture(struct data_writer *dw, const void *buf, size_t len, uint64_t before)
{
    size_t n = len < dw->sample_cap ? len : dw->sample_cap;
    size_t nblocks = (n + HASH_BLOCK - 1) / HASH_BLOCK;
    if (n == 0 || dw->captured >= SAMPLES_MAX || nblocks > dw->hash_cap - dw->blocks_captured) {
        dw->next_capture = UINT64_MAX; /* the sample is complete */
        return;
    }
    dw->next_capture = before + (uint64_t)n * CAPTURE_SPACING;
    uint64_t head = dw->head; /* written by this thread only */
    if (head - __atomic_load_n(&dw->tail, __ATOMIC_ACQUIRE) >= dw->nring) {
        dw->skipped++;
        return;
    }
    struct sample_slot *slot = &dw->ring[head % dw->nring];
    memcpy(slot->bytes, buf, n);
    slot->len = n;
    dw->captured++;
    dw->blocks_captured += nblocks;
    if (dw->varies)
        pool_add(dw, buf);
    __atomic_store_n(&dw->head, head + 1, __ATOMIC_RELEASE);
}

void data_after_write(struct data_writer *dw, const void *buf, size_t len)
{
    uint64_t before = dw->written;
    dw->written = before + len;
    if (__builtin_expect(before >= dw->next_capture, 0) && len <= dw->max_bs)
        capture(dw, buf, len, before);
}

int data_analyse_one(struct data_writer *dw, struct data_analyser *an, int compress)
{
    uint64_t tail = dw->tail; /* written by this thread only */
    if (tail == __atomic_load_n(&dw->head, __ATOMIC_ACQUIRE))
        return 0;
    const struct sample_slot *slot = &dw->ring[tail % dw->nring];
    const unsigned char *p = slot->bytes;
    size_t len = slot->len;
    for (size_t off = 0; off < len; off += HASH_BLOCK) {
        size_t m = len - off < HASH_BLOCK ? len - off : HASH_BLOCK;
        dw->hashes[dw->nhashes++] = block_hash(p + off, m);
    }
    dw->totals.blocks += (len + HASH_BLOCK - 1) / HASH_BLOCK;
    if (compress) {
        dw->totals.sampled_bytes += len;
        dw->totals.compressed_bytes += compressed_size(an, p, len);
    }
    __atomic_store_n(&dw->tail, tail + 1, __ATOMIC_RELEASE);
    return 1;
}

void data_writer_totals(const struct data_writer *dw, struct data_totals *out)
{
    *out = dw->totals;
    out->samples_skipped = dw->skipped;
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
    free(dw->ring);
    free(dw->ringmem);
    free(dw->hashes);
    free(dw->slots);
    free(dw);
}
