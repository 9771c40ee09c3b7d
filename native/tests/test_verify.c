/*
 * test_verify.c - data verification. The private part (src/verify.c is
 * compiled into this program): checksums against their published check
 * values, the header layout, what the classifier makes of crafted blocks of
 * every kind (torn, lost, misdirected, read error, raced writes), and the
 * expected-state bookkeeping driven by hand on a real file (raced and failed
 * writes, backlog batches, fatal stop). The public part: clean runs with
 * each checksum, engine and read-back mode report no failure and check what
 * they wrote, the headers on disk say what was written, sessions differ in
 * generation, and invalid specs are refused with the field named.
 */
#include <sys/stat.h>

#include <isa-l/crc.h>
#include <xxhash.h>
#include <zlib.h>

#include "../src/verify.h"
#include "test_util.h"

#define BS  4096u
#define GEN 0x1122334455667788ull

static const uint32_t kinds[] = {IOG_VERIFY_CRC32C, IOG_VERIFY_XXH64, IOG_VERIFY_CRC32};

/* ---- checksums and header --------------------------------------------- */

static int test_checksum_check_values(void)
{
    const char *s = "123456789";
    /* the standard check values of each algorithm */
    CHECK_EQ_U64(verify_checksum(IOG_VERIFY_CRC32C, s, 9), 0xe3069283u);
    CHECK_EQ_U64(verify_checksum(IOG_VERIFY_CRC32, s, 9), 0xcbf43926u);
    CHECK_EQ_U64(verify_checksum(IOG_VERIFY_XXH64, "", 0), 0xef46db3751d8e999ull);
    /* and the libraries agree on a longer buffer */
    unsigned char buf[BS];
    for (unsigned i = 0; i < BS; i++)
        buf[i] = (unsigned char)(i * 7 + 3);
    CHECK_EQ_U64(verify_checksum(IOG_VERIFY_CRC32C, buf, BS),
                 ~crc32_iscsi(buf, BS, ~0u) & 0xffffffffu);
    CHECK_EQ_U64(verify_checksum(IOG_VERIFY_XXH64, buf, BS), XXH64(buf, BS, 0));
    CHECK_EQ_U64(verify_checksum(IOG_VERIFY_CRC32, buf, BS), crc32(0, buf, BS));
    return T_PASS;
}

static int test_header_layout(void)
{
    unsigned char block[BS];
    memset(block, 0xab, sizeof(block));
    struct verify_header h = {.magic = VERIFY_MAGIC,
                              .version = VERIFY_VERSION,
                              .kind = IOG_VERIFY_XXH64,
                              .offset = 0x0102030405060708ull,
                              .len = BS,
                              .generation = GEN,
                              .seq = 42,
                              .file = 3,
                              .job = 7};
    verify_seal(NULL, block, BS, &h);
    CHECK(memcmp(block, "IOGV", 4) == 0);
    CHECK(block[4] == 3 && block[5] == 0);                /* version 3, little endian */
    CHECK(block[6] == IOG_VERIFY_XXH64 && block[7] == 0); /* checksum kind */
    CHECK(block[8] == 0x08 && block[15] == 0x01);         /* offset, little endian */
    CHECK(block[24] == 0x88 && block[31] == 0x11);        /* generation */
    CHECK(block[32] == 42 && block[40] == 3 && block[44] == 7);
    for (int i = 56; i < 64; i++)
        CHECK(block[i] == 0); /* reserved */
    CHECK(block[64] == 0xab); /* the contents after the header are kept */
    /* but for the stamp at the start of every later sector */
    for (unsigned sec = 1; sec < BS / 512; sec++) {
        uint64_t stamp = 0;
        for (int i = 7; i >= 0; i--)
            stamp = stamp << 8 | block[sec * 512 + (unsigned)i];
        CHECK_EQ_U64(stamp, verify_stamp(&h, sec));
        CHECK(block[sec * 512 - 1] == 0xab && block[sec * 512 + 8] == 0xab);
    }
    CHECK(verify_stamp(&h, 1) != verify_stamp(&h, 2));
    struct verify_header d;
    verify_header_decode(block, &d);
    CHECK_EQ_U64(d.magic, VERIFY_MAGIC);
    CHECK_EQ_U64(d.offset, h.offset);
    CHECK_EQ_U64(d.len, BS);
    CHECK_EQ_U64(d.generation, GEN);
    CHECK_EQ_U64(d.seq, 42);
    CHECK_EQ_U64(d.file, 3);
    CHECK_EQ_U64(d.job, 7);
    /* the checksum is of the block with its checksum field zero */
    unsigned char copy[BS];
    memcpy(copy, block, BS);
    memset(copy + 48, 0, 8);
    CHECK_EQ_U64(d.checksum, XXH64(copy, BS, 0));
    CHECK_EQ_U64(verify_block_checksum(NULL, IOG_VERIFY_XXH64, block, BS, NULL), d.checksum);
    CHECK(memcmp(block + 48, copy + 48, 8) != 0); /* restored after computing */
    return T_PASS;
}

/* ---- the classifier ------------------------------------------------------ */

/* A block as written for (offset, seq) of file 1 of job 2, generation gen. */
static void craft(unsigned char *block, uint32_t kind, uint64_t gen, uint64_t offset, uint64_t seq,
                  uint32_t file, uint32_t job)
{
    for (unsigned i = 0; i < BS; i++)
        block[i] = (unsigned char)(i ^ (seq * 13));
    struct verify_header h = {.magic = VERIFY_MAGIC,
                              .version = VERIFY_VERSION,
                              .kind = (uint16_t)kind,
                              .offset = offset,
                              .len = BS,
                              .generation = gen,
                              .seq = seq,
                              .file = file,
                              .job = job};
    verify_seal(NULL, block, BS, &h);
}

static const struct verify_expect expect_at_8k = {
    .generation = GEN, .offset = 8192, .len = BS, .seq = 5, .file = 1, .job = 2};

static int test_classify_pass(void)
{
    unsigned char block[BS];
    struct iog_verify_failure f;
    for (unsigned k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        craft(block, kinds[k], GEN, 8192, 5, 1, 2);
        CHECK(verify_classify(NULL, block, BS, &expect_at_8k, &f) == 1);
    }
    /* a newer write than the last acknowledged one: nothing was lost */
    craft(block, IOG_VERIFY_CRC32C, GEN, 8192, 6, 1, 2);
    CHECK(verify_classify(NULL, block, BS, &expect_at_8k, &f) == 1);
    /* raced writes: any sequence of this generation */
    struct verify_expect raced = expect_at_8k;
    raced.seq = 0;
    craft(block, IOG_VERIFY_CRC32C, GEN, 8192, 2, 1, 2);
    CHECK(verify_classify(NULL, block, BS, &raced, &f) == 1);
    return T_PASS;
}

static int test_classify_torn(void)
{
    unsigned char block[BS];
    struct iog_verify_failure f;
    for (unsigned k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        craft(block, kinds[k], GEN, 8192, 5, 1, 2);
        block[BS / 2 + 100] ^= 0x40; /* the second half is not what was written */
        CHECK(verify_classify(NULL, block, BS, &expect_at_8k, &f) == 0);
        CHECK_EQ_U64(f.kind, IOG_VERIFY_TORN);
        CHECK_EQ_U64(f.offset, 8192);
        CHECK_EQ_U64(f.file, 1);
        CHECK_EQ_U64(f.len, BS);
        CHECK_EQ_U64(f.expected_generation, GEN);
        CHECK_EQ_U64(f.expected_seq, 5);
        CHECK_EQ_U64(f.found_generation, GEN);
        CHECK_EQ_U64(f.found_seq, 5);
        CHECK_EQ_U64(f.found_offset, 8192);
        CHECK(f.stored_checksum != f.computed_checksum);
        struct verify_header h;
        verify_header_decode(block, &h);
        CHECK_EQ_U64(f.stored_checksum, h.checksum);
        CHECK_EQ_U64(f.error, 0);
    }
    /* new first half over an older block: torn even though raced */
    unsigned char old[BS];
    craft(old, IOG_VERIFY_CRC32C, GEN ^ 1, 8192, 9, 1, 2);
    craft(block, IOG_VERIFY_CRC32C, GEN, 8192, 5, 1, 2);
    memcpy(block + BS / 2, old + BS / 2, BS / 2);
    struct verify_expect raced = expect_at_8k;
    raced.seq = 0;
    CHECK(verify_classify(NULL, block, BS, &raced, &f) == 0);
    CHECK_EQ_U64(f.kind, IOG_VERIFY_TORN);
    CHECK_EQ_U64(f.expected_seq, 0);
    /* a header of this run claiming more than the block holds */
    craft(block, IOG_VERIFY_CRC32C, GEN, 8192, 5, 1, 2);
    block[16 + 2] = 1; /* len += 64 KiB */
    CHECK(verify_classify(NULL, block, BS, &expect_at_8k, &f) == 0);
    CHECK_EQ_U64(f.kind, IOG_VERIFY_TORN);
    return T_PASS;
}

static int test_classify_lost(void)
{
    unsigned char block[BS];
    struct iog_verify_failure f;
    /* no header at all: found fields stay 0 */
    memset(block, 0x5a, BS);
    CHECK(verify_classify(NULL, block, BS, &expect_at_8k, &f) == 0);
    CHECK_EQ_U64(f.kind, IOG_VERIFY_LOST);
    CHECK_EQ_U64(f.found_generation, 0);
    CHECK_EQ_U64(f.found_seq, 0);
    CHECK_EQ_U64(f.expected_seq, 5);
    memset(block, 0, BS);
    CHECK(verify_classify(NULL, block, BS, &expect_at_8k, &f) == 0);
    CHECK_EQ_U64(f.kind, IOG_VERIFY_LOST);
    /* an unknown version or checksum kind is no header either */
    for (unsigned v = 1; v <= 4; v += v == 2 ? 2 : 1) { /* 1: before stamps, 2: before digests */
        craft(block, IOG_VERIFY_CRC32C, GEN, 8192, 5, 1, 2);
        block[4] = (unsigned char)v;
        CHECK(verify_classify(NULL, block, BS, &expect_at_8k, &f) == 0);
        CHECK_EQ_U64(f.kind, IOG_VERIFY_LOST);
        CHECK_EQ_U64(f.found_generation, 0);
    }
    static const unsigned char unknown_kinds[] = {IOG_VERIFY_NONE, IOG_VERIFY_META + 1};
    for (unsigned u = 0; u < sizeof(unknown_kinds); u++) {
        craft(block, IOG_VERIFY_CRC32C, GEN, 8192, 5, 1, 2);
        block[6] = unknown_kinds[u];
        CHECK(verify_classify(NULL, block, BS, &expect_at_8k, &f) == 0);
        CHECK_EQ_U64(f.kind, IOG_VERIFY_LOST);
    }
    /* an older generation: the write never reached the block */
    craft(block, IOG_VERIFY_XXH64, 0x99, 8192, 77, 1, 2);
    CHECK(verify_classify(NULL, block, BS, &expect_at_8k, &f) == 0);
    CHECK_EQ_U64(f.kind, IOG_VERIFY_LOST);
    CHECK_EQ_U64(f.found_generation, 0x99);
    CHECK_EQ_U64(f.found_seq, 77);
    CHECK_EQ_U64(f.expected_generation, GEN);
    CHECK(f.stored_checksum == f.computed_checksum);
    /* an older generation, even at another offset, is a lost write here */
    craft(block, IOG_VERIFY_XXH64, 0x99, 4096, 77, 1, 2);
    CHECK(verify_classify(NULL, block, BS, &expect_at_8k, &f) == 0);
    CHECK_EQ_U64(f.kind, IOG_VERIFY_LOST);
    /* this generation, an earlier write of the block */
    craft(block, IOG_VERIFY_CRC32, GEN, 8192, 4, 1, 2);
    CHECK(verify_classify(NULL, block, BS, &expect_at_8k, &f) == 0);
    CHECK_EQ_U64(f.kind, IOG_VERIFY_LOST);
    CHECK_EQ_U64(f.found_seq, 4);
    CHECK_EQ_U64(f.expected_seq, 5);
    /* an older run with a larger block size */
    craft(block, IOG_VERIFY_CRC32C, 0x99, 8192, 5, 1, 2);
    block[16 + 2] = 1;
    CHECK(verify_classify(NULL, block, BS, &expect_at_8k, &f) == 0);
    CHECK_EQ_U64(f.kind, IOG_VERIFY_LOST);
    return T_PASS;
}

static int test_classify_misdirected(void)
{
    unsigned char block[BS];
    struct iog_verify_failure f;
    craft(block, IOG_VERIFY_CRC32C, GEN, 4096, 5, 1, 2); /* for the previous block */
    CHECK(verify_classify(NULL, block, BS, &expect_at_8k, &f) == 0);
    CHECK_EQ_U64(f.kind, IOG_VERIFY_MISDIRECTED);
    CHECK_EQ_U64(f.found_offset, 4096);
    CHECK_EQ_U64(f.offset, 8192);
    CHECK_EQ_U64(f.found_generation, GEN);
    craft(block, IOG_VERIFY_CRC32C, GEN, 8192, 5, 0, 2); /* for another file */
    CHECK(verify_classify(NULL, block, BS, &expect_at_8k, &f) == 0);
    CHECK_EQ_U64(f.kind, IOG_VERIFY_MISDIRECTED);
    CHECK_EQ_U64(f.found_file, 0);
    CHECK_EQ_U64(f.file, 1);
    craft(block, IOG_VERIFY_CRC32C, GEN, 8192, 5, 1, 3); /* of another job */
    CHECK(verify_classify(NULL, block, BS, &expect_at_8k, &f) == 0);
    CHECK_EQ_U64(f.kind, IOG_VERIFY_MISDIRECTED);
    /* a smaller block of this run (another job's size) with a valid checksum */
    struct verify_header h = {.magic = VERIFY_MAGIC,
                              .version = VERIFY_VERSION,
                              .kind = IOG_VERIFY_CRC32C,
                              .offset = 8192,
                              .len = BS / 2,
                              .generation = GEN,
                              .seq = 5,
                              .file = 1,
                              .job = 2};
    verify_seal(NULL, block, BS / 2, &h);
    CHECK(verify_classify(NULL, block, BS, &expect_at_8k, &f) == 0);
    CHECK_EQ_U64(f.kind, IOG_VERIFY_MISDIRECTED);
    CHECK(f.stored_checksum == f.computed_checksum);
    return T_PASS;
}

static int test_classify_read_error(void)
{
    unsigned char block[BS];
    struct iog_verify_failure f;
    craft(block, IOG_VERIFY_CRC32C, GEN, 8192, 5, 1, 2);
    CHECK(verify_classify(NULL, block, -EIO, &expect_at_8k, &f) == 0);
    CHECK_EQ_U64(f.kind, IOG_VERIFY_READ_ERROR);
    CHECK_EQ_U64(f.error, EIO);
    CHECK(verify_classify(NULL, block, -ENXIO, &expect_at_8k, &f) == 0);
    CHECK_EQ_U64(f.error, ENXIO);
    CHECK(verify_classify(NULL, block, BS / 2, &expect_at_8k, &f) == 0); /* short */
    CHECK_EQ_U64(f.kind, IOG_VERIFY_READ_ERROR);
    CHECK_EQ_U64(f.error, EIO);
    CHECK_EQ_U64(f.offset, 8192);
    CHECK_EQ_U64(f.expected_seq, 5);
    return T_PASS;
}

/* ---- the expected state, driven by hand on a real file ------------------ */

struct rig {
    char path[IOG_PATH_MAX];
    int fd;
    struct iog_job_spec spec;
    struct verify_state *vs;
    unsigned char *slot[4]; /* request buffers of 4 slots */
};

static int rig_open(struct rig *r, uint32_t blocks, uint32_t backlog, uint32_t flags)
{
    memset(r, 0, sizeof(*r));
    r->fd = -1;
    if (t_temp_path(r->path, sizeof(r->path)) < 0)
        return -1;
    r->fd = open(r->path, O_RDWR | O_CREAT | O_EXCL, 0644);
    if (r->fd < 0 || ftruncate(r->fd, (off_t)blocks * BS) < 0)
        return -1;
    r->spec = t_spec("psync", IOG_RW_RANDWRITE, BS, (uint64_t)blocks * BS);
    r->spec.verify = IOG_VERIFY_CRC32C;
    r->spec.verify_backlog = backlog;
    r->spec.flags = flags;
    struct verify_params p = {.spec = &r->spec,
                              .job = 0,
                              .nfiles = 1,
                              .file_size = (uint64_t)blocks * BS,
                              .generation = GEN,
                              .depth = 4};
    char err[IOG_ERR_MAX];
    if (verify_create(&p, &r->vs, err, sizeof(err)) < 0)
        return -1;
    for (int i = 0; i < 4; i++)
        if (!(r->slot[i] = malloc(BS)))
            return -1;
    return 0;
}

static void rig_close(struct rig *r)
{
    verify_destroy(r->vs);
    for (int i = 0; i < 4; i++)
        free(r->slot[i]);
    if (r->fd >= 0)
        close(r->fd);
    unlink(r->path);
}

/* Slot `slot` prepares a write of block `blk` and submits it. */
static void rig_submit(struct rig *r, uint32_t slot, uint64_t blk)
{
    memset(r->slot[slot], (int)(0x10 + slot), BS);
    verify_before_write(r->vs, slot, r->slot[slot], BS, 0, blk * BS);
    verify_submitted(r->vs, slot);
}

/* The device stores slot's buffer at its block (or not, for a lost write). */
static int rig_land(struct rig *r, uint32_t slot, uint64_t blk)
{
    return pwrite(r->fd, r->slot[slot], BS, (off_t)(blk * BS)) == (ssize_t)BS ? 0 : -1;
}

static struct iog_verify_stats rig_stats(const struct rig *r, struct iog_verify_failure *recs)
{
    struct iog_verify_stats st;
    memset(&st, 0, sizeof(st));
    uint32_t n = 0;
    verify_merge(r->vs, &st, recs, &n);
    st.nrecords = n;
    return st;
}

static int test_state_sequence_and_loss(void)
{
    struct rig r;
    static const int no_cancel = 0;
    CHECK(rig_open(&r, 8, 0, 0) == 0);
    /* block 0: two writes one after the other, the second never lands */
    rig_submit(&r, 0, 0);
    CHECK(rig_land(&r, 0, 0) == 0);
    verify_completed(r.vs, 0, 1);
    rig_submit(&r, 1, 0);
    verify_completed(r.vs, 1, 1); /* acknowledged, lost */
    /* block 3: one write that lands */
    rig_submit(&r, 2, 3);
    CHECK(rig_land(&r, 2, 3) == 0);
    verify_completed(r.vs, 2, 1);
    /* block 5: a write that failed is not judged */
    rig_submit(&r, 3, 5);
    verify_completed(r.vs, 3, 0);
    verify_readback_all(r.vs, &r.fd, &no_cancel);
    struct iog_verify_failure recs[IOG_VERIFY_RECORDS];
    struct iog_verify_stats st = rig_stats(&r, recs);
    CHECK_EQ_U64(st.blocks_written, 3);
    CHECK_EQ_U64(st.blocks_checked, 2); /* blocks 0 and 3; block 5 is unknown */
    CHECK_EQ_U64(st.failures, 1);
    CHECK_EQ_U64(st.by_kind[IOG_VERIFY_LOST], 1);
    CHECK_EQ_U64(st.nrecords, 1);
    CHECK_EQ_U64(recs[0].offset, 0);
    CHECK_EQ_U64(recs[0].expected_seq, 2);
    CHECK_EQ_U64(recs[0].found_seq, 1);
    CHECK_EQ_U64(recs[0].found_generation, GEN);
    rig_close(&r);
    return T_PASS;
}

static int test_state_races(void)
{
    struct rig r;
    static const int no_cancel = 0;
    CHECK(rig_open(&r, 8, 0, 0) == 0);
    /* block 1: seq 1 and 2 in flight together; the device keeps seq 1 */
    rig_submit(&r, 0, 1);
    rig_submit(&r, 1, 1);
    CHECK(rig_land(&r, 1, 1) == 0);
    CHECK(rig_land(&r, 0, 1) == 0);
    verify_completed(r.vs, 1, 1);
    verify_completed(r.vs, 0, 1);
    /* block 2: raced, then one write alone settles it: seq 5 must be there */
    rig_submit(&r, 0, 2); /* seq 3 */
    rig_submit(&r, 1, 2); /* seq 4 */
    CHECK(rig_land(&r, 0, 2) == 0);
    verify_completed(r.vs, 0, 1);
    verify_completed(r.vs, 1, 1);
    rig_submit(&r, 2, 2); /* seq 5, alone */
    verify_completed(r.vs, 2, 1);
    /* block 4: a write alone, then an overlapping pair whose first one
     * completes first: still raced until both are done */
    rig_submit(&r, 0, 4); /* seq 6 */
    CHECK(rig_land(&r, 0, 4) == 0);
    verify_completed(r.vs, 0, 1);
    rig_submit(&r, 1, 4); /* seq 7 */
    rig_submit(&r, 2, 4); /* seq 8 */
    CHECK(rig_land(&r, 2, 4) == 0);
    CHECK(rig_land(&r, 1, 4) == 0); /* seq 7 last on disk */
    verify_completed(r.vs, 1, 1);
    verify_completed(r.vs, 2, 1);
    verify_readback_all(r.vs, &r.fd, &no_cancel);
    struct iog_verify_failure recs[IOG_VERIFY_RECORDS];
    struct iog_verify_stats st = rig_stats(&r, recs);
    CHECK_EQ_U64(st.blocks_checked, 3);
    CHECK_EQ_U64(st.failures, 1); /* block 2 only */
    CHECK_EQ_U64(recs[0].offset, 2 * BS);
    CHECK_EQ_U64(recs[0].kind, IOG_VERIFY_LOST);
    CHECK_EQ_U64(recs[0].expected_seq, 5);
    CHECK_EQ_U64(recs[0].found_seq, 3);
    rig_close(&r);
    return T_PASS;
}

static int test_state_backlog_and_fatal(void)
{
    struct rig r;
    static const int no_cancel = 0;
    CHECK(rig_open(&r, 8, 2, IOG_JOB_VERIFY_FATAL) == 0);
    rig_submit(&r, 0, 0);
    CHECK(rig_land(&r, 0, 0) == 0);
    verify_completed(r.vs, 0, 1);
    CHECK(!verify_backlog_due(r.vs));
    rig_submit(&r, 0, 1);
    CHECK(rig_land(&r, 0, 1) == 0);
    verify_completed(r.vs, 0, 1);
    CHECK(verify_backlog_due(r.vs));
    verify_readback_batch(r.vs, &r.fd, &no_cancel);
    CHECK(!verify_backlog_due(r.vs));
    struct iog_verify_failure recs[IOG_VERIFY_RECORDS];
    struct iog_verify_stats st = rig_stats(&r, recs);
    CHECK_EQ_U64(st.blocks_checked, 2);
    CHECK_EQ_U64(st.failures, 0);
    CHECK(!verify_stopped(r.vs));
    /* two lost writes in the next batch: the first stops the job */
    rig_submit(&r, 0, 2);
    verify_completed(r.vs, 0, 1);
    rig_submit(&r, 0, 3);
    verify_completed(r.vs, 0, 1);
    verify_readback_batch(r.vs, &r.fd, &no_cancel);
    st = rig_stats(&r, recs);
    CHECK(verify_stopped(r.vs));
    CHECK_EQ_U64(st.failures, 1);
    CHECK_EQ_U64(st.blocks_checked, 3);
    CHECK_EQ_U64(recs[0].offset, 2 * BS);
    CHECK_EQ_U64(recs[0].found_generation, 0); /* a hole: no header */
    rig_close(&r);
    return T_PASS;
}

/* ---- rewrites: every sector of a block tells one write from another ----- */

#define SECTOR 512u

/* Whether blocks a and b differ in every 512-byte sector. */
static int differ_in_every_sector(const unsigned char *a, const unsigned char *b)
{
    for (unsigned s = 0; s < BS / SECTOR; s++) {
        if (memcmp(a + s * SECTOR, b + s * SECTOR, SECTOR) == 0) {
            fprintf(stderr, "    sector %u is the same in both writes\n", s);
            return 0;
        }
    }
    return 1;
}

/* Whether `now` with any one sector still holding `before` (the write of
 * that sector was dropped, the rest landed) is judged torn. */
static int every_stale_sector_is_torn(const unsigned char *before, const unsigned char *now,
                                      const struct verify_expect *e)
{
    unsigned char block[BS];
    struct iog_verify_failure f;
    int ok = 1;
    for (unsigned s = 0; s < BS / SECTOR; s++) {
        memcpy(block, now, BS);
        memcpy(block + s * SECTOR, before + s * SECTOR, SECTOR);
        if (verify_classify(NULL, block, BS, e, &f)) {
            fprintf(stderr, "    stale sector %u passed\n", s);
            ok = 0;
        } else if (f.kind != IOG_VERIFY_TORN) {
            fprintf(stderr, "    stale sector %u: kind %u, not torn\n", s, f.kind);
            ok = 0;
        }
    }
    return ok;
}

static int test_rewrites_differ_in_every_sector(void)
{
    struct rig r;
    CHECK(rig_open(&r, 8, 0, 0) == 0);
    unsigned char first[BS], second[BS], rerun[BS];
    /* One request buffer whose contents stay (no refill_buffers): only
     * what verification puts into it changes from write to write. */
    memset(r.slot[0], 0x5a, BS);
    verify_before_write(r.vs, 0, r.slot[0], BS, 0, 2 * BS); /* seq 1 */
    memcpy(first, r.slot[0], BS);
    verify_submitted(r.vs, 0);
    verify_completed(r.vs, 0, 1);
    verify_before_write(r.vs, 0, r.slot[0], BS, 0, 2 * BS); /* seq 2 */
    memcpy(second, r.slot[0], BS);
    CHECK(differ_in_every_sector(first, second));
    struct verify_expect e = {
        .generation = GEN, .offset = 2 * BS, .len = BS, .seq = 2, .file = 0, .job = 0};
    CHECK(every_stale_sector_is_torn(first, second, &e));

    /* The same job run again: another session's generation, the same
     * sequence numbers, the same buffer contents. */
    struct verify_params p = {.spec = &r.spec,
                              .job = 0,
                              .nfiles = 1,
                              .file_size = 8 * BS,
                              .generation = GEN ^ 0xf00d,
                              .depth = 4};
    struct verify_state *again = NULL;
    char err[IOG_ERR_MAX];
    CHECK(verify_create(&p, &again, err, sizeof(err)) == 0);
    memset(r.slot[0], 0x5a, BS);
    verify_before_write(again, 0, r.slot[0], BS, 0, 2 * BS); /* seq 1 again */
    memcpy(rerun, r.slot[0], BS);
    verify_destroy(again);
    CHECK(differ_in_every_sector(first, rerun));
    e.generation = p.generation;
    e.seq = 1;
    CHECK(every_stale_sector_is_torn(first, rerun, &e));

    /* The stamps are checked apart from the checksum: a stale sector is
     * torn even where the checksum happens to match (made to, here). */
    unsigned char block[BS];
    memcpy(block, rerun, BS);
    memcpy(block + 3 * SECTOR, first + 3 * SECTOR, SECTOR);
    struct verify_header h;
    verify_header_decode(block, &h);
    CHECK_EQ_U64(verify_stale_sector(block, BS, &h), 3);
    memset(block + 48, 0, 8);
    uint64_t sum = verify_checksum(IOG_VERIFY_CRC32C, block, BS);
    for (int i = 0; i < 8; i++)
        block[48 + i] = (unsigned char)(sum >> (8 * i));
    struct iog_verify_failure f;
    CHECK(verify_classify(NULL, block, BS, &e, &f) == 0);
    CHECK_EQ_U64(f.kind, IOG_VERIFY_TORN);
    CHECK_EQ_U64(f.stored_checksum, f.computed_checksum);
    rig_close(&r);
    return T_PASS;
}

static int test_state_records_capped(void)
{
    struct rig r;
    static const int no_cancel = 0;
    CHECK(rig_open(&r, 40, 0, 0) == 0);
    for (uint64_t b = 0; b < 40; b++) { /* every write lost */
        rig_submit(&r, 0, b);
        verify_completed(r.vs, 0, 1);
    }
    verify_readback_all(r.vs, &r.fd, &no_cancel);
    struct iog_verify_failure recs[IOG_VERIFY_RECORDS];
    struct iog_verify_stats st = rig_stats(&r, recs);
    CHECK_EQ_U64(st.failures, 40);
    CHECK_EQ_U64(st.by_kind[IOG_VERIFY_LOST], 40);
    CHECK_EQ_U64(st.nrecords, IOG_VERIFY_RECORDS);
    for (uint32_t i = 0; i < IOG_VERIFY_RECORDS; i++)
        CHECK_EQ_U64(recs[i].offset, i * BS); /* in the order found */
    rig_close(&r);
    return T_PASS;
}

/* ---- whole runs ------------------------------------------------------------ */

static int get_verify(iog_session *s, uint32_t job, struct iog_verify_stats *st,
                      struct iog_verify_failure *recs)
{
    memset(st, 0, sizeof(*st));
    st->struct_size = sizeof(*st);
    return iog_session_verify(s, job, st, recs, recs ? IOG_VERIFY_RECORDS : 0);
}

/* Runs a verify job; 1 when its engine is unavailable here (skip). */
static int run_clean(const char *engine, uint32_t rw, uint32_t kind, uint32_t backlog,
                     uint32_t iodepth, uint32_t flags, uint64_t size, struct iog_verify_stats *out,
                     struct iog_dir_stats *w)
{
    char path[IOG_PATH_MAX];
    if (t_temp_path(path, sizeof(path)) < 0)
        return -1;
    struct iog_job_spec j = t_spec(engine, rw, BS, size);
    j.verify = kind;
    j.verify_backlog = backlog;
    j.iodepth = iodepth;
    j.flags = flags;
    strcpy(j.filename, path);
    iog_session *s = NULL;
    int rc = t_run(&j, 1, &s);
    unlink(path);
    if (strcmp(engine, "io_uring") == 0 && (rc == -ENOSYS || rc == -EPERM)) {
        iog_session_destroy(s);
        return 1;
    }
    if (rc == 0)
        rc = t_stats(s, 0, IOG_DIR_WRITE, w);
    if (rc == 0)
        rc = get_verify(s, 0, out, NULL) == 0 ? 0 : -1;
    iog_session_destroy(s);
    return rc;
}

static int test_clean_runs(void)
{
    static const struct {
        const char *engine;
        uint32_t iodepth;
    } engines[] = {{"psync", 1}, {"io_uring", 8}, {"libaio", 8}, {"sync", 1}};
    const uint64_t size = 256 * BS;
    int skipped = 0;
    for (unsigned e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
        for (unsigned k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
            for (uint32_t backlog = 0; backlog <= 16; backlog += 16) {
                struct iog_verify_stats st;
                struct iog_dir_stats w;
                int rc = run_clean(engines[e].engine, IOG_RW_WRITE, kinds[k], backlog,
                                   engines[e].iodepth, 0, size, &st, &w);
                if (rc == 1) {
                    skipped = 1;
                    continue;
                }
                if (rc != 0 || st.failures != 0 || st.blocks_written != size / BS ||
                    st.blocks_checked != size / BS || w.ios != size / BS || w.errors != 0) {
                    fprintf(stderr,
                            "engine %s kind %u backlog %u: rc %d failures %llu written %llu "
                            "checked %llu ios %llu errors %llu\n",
                            engines[e].engine, kinds[k], backlog, rc,
                            (unsigned long long)st.failures, (unsigned long long)st.blocks_written,
                            (unsigned long long)st.blocks_checked, (unsigned long long)w.ios,
                            (unsigned long long)w.errors);
                    return T_FAIL;
                }
                CHECK(st.generation != 0);
                CHECK(st.elapsed_ns > 0);
                CHECK_EQ_U64(st.nrecords, 0);
            }
        }
    }
    return skipped ? T_SKIP : T_PASS;
}

/* Random writes over a few blocks at depth 16 race for the same blocks all
 * the time: still no failure; each block is read back once after the run,
 * each write once with a backlog. */
static int test_random_races_are_clean(void)
{
    const uint64_t size = 16 * BS;
    for (uint32_t backlog = 0; backlog <= 3; backlog += 3) {
        for (uint32_t flags = 0; flags <= IOG_JOB_REFILL; flags += IOG_JOB_REFILL) {
            char path[IOG_PATH_MAX];
            CHECK(t_temp_path(path, sizeof(path)) == 0);
            struct iog_job_spec j = t_spec("io_uring", IOG_RW_RANDWRITE, BS, size);
            j.verify = IOG_VERIFY_XXH64;
            j.verify_backlog = backlog;
            j.iodepth = 16;
            j.flags = flags | IOG_JOB_TIME_BASED;
            j.runtime_ns = 200 * 1000000ull;
            strcpy(j.filename, path);
            iog_session *s = NULL;
            int rc = t_run(&j, 1, &s);
            unlink(path);
            if (rc == -ENOSYS || rc == -EPERM)
                return iog_session_destroy(s), T_SKIP;
            CHECK(rc == 0);
            struct iog_verify_stats st;
            struct iog_verify_failure recs[IOG_VERIFY_RECORDS];
            CHECK(get_verify(s, 0, &st, recs) == 0);
            struct iog_dir_stats w;
            CHECK(t_stats(s, 0, IOG_DIR_WRITE, &w) == 0);
            iog_session_destroy(s);
            if (st.failures) {
                fprintf(stderr, "kind %u at %llu: seq %llu found %llu\n", recs[0].kind,
                        (unsigned long long)recs[0].offset,
                        (unsigned long long)recs[0].expected_seq,
                        (unsigned long long)recs[0].found_seq);
            }
            CHECK_EQ_U64(st.failures, 0);
            CHECK(w.ios > 100);
            CHECK_EQ_U64(st.blocks_written, w.ios); /* no ramp: every write counted */
            if (backlog)
                CHECK_EQ_U64(st.blocks_checked, st.blocks_written);
            else
                CHECK_EQ_U64(st.blocks_checked, 16);
        }
    }
    return T_PASS;
}

/* The headers on disk after a sequential psync run over two files: block k
 * of the run holds sequence k + 1, its own offset and file, the session's
 * generation, and a valid checksum. */
static int test_headers_on_disk(void)
{
    char a[IOG_PATH_MAX], b[IOG_PATH_MAX];
    CHECK(t_temp_path(a, sizeof(a)) == 0);
    CHECK(t_temp_path(b, sizeof(b)) == 0);
    const uint64_t per_file = 32 * BS;
    struct iog_job_spec j = t_spec("psync", IOG_RW_WRITE, BS, 2 * per_file);
    j.verify = IOG_VERIFY_CRC32;
    j.offset = 3 * BS; /* the region starts past the file start */
    memset(j.filename, 0, sizeof(j.filename));
    strcpy(j.filename, a);
    strcpy(j.filename + strlen(a) + 1, b);
    struct iog_job_spec jobs[2] = {j, j};
    jobs[0].verify = IOG_VERIFY_NONE; /* job 1 is the one that verifies */
    jobs[0].rw = IOG_RW_READ;
    jobs[0].flags = 0;
    iog_session *s = NULL;
    CHECK(t_run(jobs, 2, &s) == 0);
    struct iog_verify_stats st;
    CHECK(get_verify(s, 1, &st, NULL) == 0);
    CHECK_EQ_U64(st.failures, 0);
    CHECK_EQ_U64(st.blocks_checked, 64);
    struct iog_verify_stats none;
    CHECK(get_verify(s, 0, &none, NULL) == 0); /* a job without verify: nothing */
    CHECK_EQ_U64(none.blocks_written, 0);
    CHECK_EQ_U64(none.generation, st.generation);
    iog_session_destroy(s);

    unsigned char block[BS];
    const char *files[2] = {a, b};
    for (uint32_t f = 0; f < 2; f++) {
        int fd = open(files[f], O_RDONLY);
        CHECK(fd >= 0);
        for (uint64_t k = 0; k < 32; k++) {
            uint64_t off = j.offset + k * BS;
            CHECK(pread(fd, block, BS, (off_t)off) == (ssize_t)BS);
            struct verify_header h;
            verify_header_decode(block, &h);
            CHECK_EQ_U64(h.magic, VERIFY_MAGIC);
            CHECK_EQ_U64(h.version, VERIFY_VERSION);
            CHECK_EQ_U64(verify_stale_sector(block, BS, &h), 0); /* every stamp in place */
            CHECK_EQ_U64(h.kind, IOG_VERIFY_CRC32);
            CHECK_EQ_U64(h.offset, off);
            CHECK_EQ_U64(h.len, BS);
            CHECK_EQ_U64(h.generation, st.generation);
            CHECK_EQ_U64(h.seq, 2 * k + f + 1); /* the files take turns */
            CHECK_EQ_U64(h.file, f);
            CHECK_EQ_U64(h.job, 1);
            CHECK_EQ_U64(h.reserved, 0);
            CHECK_EQ_U64(h.checksum,
                         verify_block_checksum(NULL, IOG_VERIFY_CRC32, block, BS, NULL));
            unsigned char zero[8] = {0};
            memcpy(block + 48, zero, 8);
            CHECK_EQ_U64(h.checksum, crc32(0, block, BS));
        }
        close(fd);
    }
    unlink(a);
    unlink(b);
    return T_PASS;
}

static int test_generations_differ(void)
{
    struct iog_verify_stats st[2];
    struct iog_dir_stats w;
    for (int i = 0; i < 2; i++)
        CHECK(run_clean("psync", IOG_RW_WRITE, IOG_VERIFY_CRC32C, 0, 1, 0, 4 * BS, &st[i], &w) ==
              0);
    CHECK(st[0].generation != 0 && st[1].generation != 0);
    CHECK(st[0].generation != st[1].generation);
    return T_PASS;
}

static int test_verify_getter_errors(void)
{
    char path[IOG_PATH_MAX];
    CHECK(t_temp_path(path, sizeof(path)) == 0);
    struct iog_job_spec j = t_spec("psync", IOG_RW_WRITE, BS, 64 * BS);
    j.verify = IOG_VERIFY_CRC32C;
    j.flags = IOG_JOB_TIME_BASED;
    j.runtime_ns = 60ull * 1000000000ull;
    strcpy(j.filename, path);
    char err[IOG_ERR_MAX];
    iog_session *s = NULL;
    CHECK(iog_session_create(&j, 1, &s, err, sizeof(err)) == 0);
    struct iog_verify_stats st = {.struct_size = sizeof(st)};
    CHECK(iog_session_verify(s, 0, &st, NULL, 0) == -EINVAL); /* never started */
    CHECK(iog_session_start(s, err, sizeof(err)) == 0);
    CHECK(iog_session_verify(s, 0, &st, NULL, 0) == -EBUSY); /* runs for a minute */
    CHECK(iog_session_verify(s, 1, &st, NULL, 0) == -EINVAL);
    st.struct_size = 8;
    CHECK(iog_session_verify(s, 0, &st, NULL, 0) == -EINVAL);
    st.struct_size = sizeof(st);
    CHECK(iog_session_verify(s, 0, &st, NULL, 1) == -EINVAL); /* no room for records */
    CHECK(iog_session_verify(s, 0, NULL, NULL, 0) == -EINVAL);
    /* cancel once writes happen (a cancel during layout starts no worker) */
    struct iog_progress p = {.struct_size = sizeof(p)};
    uint64_t deadline = t_now_ns() + 30ull * 1000000000ull;
    do {
        CHECK(iog_session_poll(s, &p) == 0);
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 1000000};
        nanosleep(&ts, NULL);
    } while (p.ios[IOG_DIR_WRITE] == 0 && t_now_ns() < deadline);
    CHECK(p.ios[IOG_DIR_WRITE] > 0);
    iog_session_cancel(s);
    CHECK(iog_session_wait(s, 30ull * 1000000000ull) == 0);
    CHECK(iog_session_verify(s, 0, &st, NULL, 0) == 0);
    CHECK(st.blocks_written > 0);
    CHECK_EQ_U64(st.blocks_checked, 0); /* cancelled: no read-back */
    CHECK(iog_session_poll(s, &p) == 0);
    CHECK_EQ_U64(p.state, IOG_STATE_DONE);
    iog_session_destroy(s);
    unlink(path);
    return T_PASS;
}

/* ---- validation ------------------------------------------------------------ */

static int expect_invalid(const struct iog_job_spec *j, const char *needle)
{
    char err[IOG_ERR_MAX] = "";
    iog_session *s = NULL;
    int rc = iog_session_create(j, 1, &s, err, sizeof(err));
    if (rc != -EINVAL || !strstr(err, "job 0:") || !strstr(err, needle)) {
        fprintf(stderr, "create: rc=%d err='%s', wanted -EINVAL with '%s'\n", rc, err, needle);
        iog_session_destroy(s);
        return T_FAIL;
    }
    return T_PASS;
}

static struct iog_job_spec verify_spec(void)
{
    struct iog_job_spec j = t_spec("psync", IOG_RW_WRITE, BS, 1 << 20);
    j.verify = IOG_VERIFY_CRC32C;
    strcpy(j.filename, "/nonexistent/verify-me");
    return j;
}

static int test_validation(void)
{
    struct iog_job_spec j = verify_spec();
    char err[IOG_ERR_MAX];
    iog_session *s = NULL;
    CHECK(iog_session_create(&j, 1, &s, err, sizeof(err)) == 0); /* the baseline is fine */
    iog_session_destroy(s);

    j = verify_spec();
    j.verify = IOG_VERIFY_META + 1;
    CHECK(expect_invalid(&j, "verify 11 is unknown") == T_PASS);
    j = verify_spec();
    j.rw = IOG_RW_RANDRW; /* a mix verifies the blocks it writes */
    CHECK(iog_session_create(&j, 1, &s, err, sizeof(err)) == 0);
    iog_session_destroy(s);
    j = verify_spec();
    j.rw = IOG_RW_RW;
    j.bs[0][0].lo = j.bs[0][0].hi = BS / 2; /* a sequential mix: writes off their blocks */
    CHECK(expect_invalid(&j, "reads of the write block size") == T_PASS);
    j = verify_spec();
    j.rw = IOG_RW_READ;
    CHECK(expect_invalid(&j, "rw write, randwrite, rw or randrw") == T_PASS);
    j = verify_spec();
    strcpy(j.engine, "null");
    CHECK(expect_invalid(&j, "not null") == T_PASS);
    j = verify_spec();
    j.bs[1][0].hi = 4 * BS; /* a range */
    CHECK(expect_invalid(&j, "one write block size") == T_PASS);
    j = verify_spec();
    j.nbs[1] = 2; /* a split */
    j.bs[1][0].weight = IOG_WEIGHT_TOTAL / 2;
    j.bs[1][1] = (struct iog_bs_entry){.lo = 8192, .hi = 8192, .weight = IOG_WEIGHT_TOTAL / 2};
    CHECK(expect_invalid(&j, "one write block size") == T_PASS);
    j = verify_spec();
    j.bs[1][0].lo = j.bs[1][0].hi = 32;
    CHECK(expect_invalid(&j, "bs[1] must be a multiple of 8 and >= 64") == T_PASS);
    j = verify_spec();
    j.bs[1][0].lo = j.bs[1][0].hi = 100;
    CHECK(expect_invalid(&j, "got 100") == T_PASS);
    j = verify_spec();
    j.blockalign[1] = 512;
    CHECK(expect_invalid(&j, "blockalign[1] must be 0 or the block size") == T_PASS);
    j = verify_spec();
    j.numjobs = 2;
    CHECK(expect_invalid(&j, "numjobs must be 1 with verify") == T_PASS);
    j = verify_spec();
    j.verify_backlog = VERIFY_MAX_BACKLOG + 1;
    CHECK(expect_invalid(&j, "verify_backlog must be <=") == T_PASS);
    j = verify_spec();
    j.size = (VERIFY_MAX_BLOCKS + 1) * 512;
    j.bs[1][0].lo = j.bs[1][0].hi = 512;
    CHECK(expect_invalid(&j, "at most 67108864 blocks") == T_PASS);
    CHECK(expect_invalid(&j, "gives 67108865") == T_PASS);
    j = verify_spec();
    j.verify = IOG_VERIFY_NONE;
    j.verify_backlog = 4;
    CHECK(expect_invalid(&j, "verify_backlog must be 0 without verify") == T_PASS);
    j = verify_spec();
    j.verify = IOG_VERIFY_NONE;
    j.flags = IOG_JOB_VERIFY_FATAL;
    CHECK(expect_invalid(&j, "VERIFY_FATAL needs verify") == T_PASS);
    /* the block bound counts whole blocks per file */
    j = verify_spec();
    j.size = VERIFY_MAX_BLOCKS * 512;
    j.bs[1][0].lo = j.bs[1][0].hi = 512;
    CHECK(iog_session_create(&j, 1, &s, err, sizeof(err)) == 0);
    iog_session_destroy(s);
    return T_PASS;
}

/* ---- the verify state file ----------------------------------------------- */

static int check_state(const char *state, const char *target, uint32_t flags,
                       struct iog_state_check *out, struct iog_verify_failure *recs, char *err)
{
    char files[IOG_PATH_MAX] = {0};
    strcpy(files, target);
    memset(out, 0, sizeof(*out));
    out->struct_size = sizeof(*out);
    return iog_verify_state_check(state, files, flags, out, recs, IOG_VERIFY_RECORDS, err,
                                  IOG_ERR_MAX);
}

/* A verified psync write job of `blocks` blocks on a new temporary target
 * with a verify state file created here, as the caller of the library does:
 * its descriptor (kept open by the test, closed by it), or -1. */
static int state_job(struct iog_job_spec *j, char *target, char *state, uint32_t blocks)
{
    if (t_temp_path(target, IOG_PATH_MAX) < 0 || t_temp_path(state, IOG_PATH_MAX) < 0)
        return -1;
    int sfd = open(state, O_RDWR | O_CREAT | O_EXCL, 0644);
    struct stat st;
    if (sfd < 0 || fstat(sfd, &st) < 0)
        return -1;
    *j = t_spec("psync", IOG_RW_WRITE, BS, (uint64_t)blocks * BS);
    j->verify = IOG_VERIFY_CRC32C;
    strcpy(j->filename, target);
    strcpy(j->verify_state, state);
    j->verify_state_id.dev = (uint64_t)st.st_dev;
    j->verify_state_id.ino = (uint64_t)st.st_ino;
    return sfd;
}

/* A run that records its writes and syncs, then checks that hold, a block put
 * back to old data, a state file cut short, and refusals. */
static int test_state_file(void)
{
    char target[IOG_PATH_MAX], state[IOG_PATH_MAX], err[IOG_ERR_MAX];
    struct iog_job_spec j;
    int sfd = state_job(&j, target, state, 64);
    CHECK(sfd >= 0);
    j.sync_kind = IOG_SYNC_FDATASYNC;
    j.sync_every = 8;
    struct stat st;
    iog_session *s = NULL;
    CHECK(t_run(&j, 1, &s) == 0);
    struct iog_verify_stats vs;
    CHECK(get_verify(s, 0, &vs, NULL) == 0);
    iog_session_destroy(s);
    close(sfd);
    CHECK(vs.state_error == 0);
    CHECK(vs.state_records >= 64 + 8 + 1); /* writes, syncs, the end */

    struct iog_state_check c;
    struct iog_verify_failure recs[IOG_VERIFY_RECORDS];
    CHECK(check_state(state, target, 0, &c, recs, err) == 0);
    CHECK_EQ_U64(c.writes, 64);
    CHECK_EQ_U64(c.syncs, 8);
    CHECK_EQ_U64(c.blocks, 64);
    CHECK_EQ_U64(c.intact, 64);
    CHECK(c.complete == 1 && c.ignored_bytes == 0 && c.block_size == BS);

    /* block 3 back to zeros: a write a sync covered is lost */
    int fd = open(target, O_WRONLY);
    CHECK(fd >= 0);
    unsigned char zero[BS] = {0};
    CHECK(pwrite(fd, zero, BS, 3 * BS) == BS);
    close(fd);
    CHECK(check_state(state, target, 0, &c, recs, err) == 1);
    CHECK_EQ_U64(c.lost, 1);
    CHECK_EQ_U64(c.intact, 63);
    CHECK(recs[0].kind == IOG_VERIFY_LOST && recs[0].offset == 3 * BS);

    /* cut inside the last record: read up to it, the end record gone */
    CHECK(stat(state, &st) == 0);
    CHECK(truncate(state, st.st_size - 5) == 0);
    CHECK(check_state(state, target, 0, &c, recs, err) == 1);
    CHECK(c.complete == 0 && c.ignored_bytes == 24 - 5);

    /* another target, by name: refused unless told the names may differ */
    CHECK(check_state(state, "/nonexistent/other", 0, &c, recs, err) == -EXDEV);
    CHECK(strstr(err, "was written for 1 file(s)") != NULL);
    CHECK(check_state(state, "/nonexistent/other", IOG_STATE_OTHER_NAMES, &c, recs, err) ==
          -ENOENT);

    /* not a state file; missing; bad arguments */
    CHECK(check_state(target, target, 0, &c, recs, err) == -EINVAL);
    unlink(state);
    CHECK(check_state(state, target, 0, &c, recs, err) == -ENOENT);
    c.struct_size = 8;
    CHECK(iog_verify_state_check(state, target, 0, &c, NULL, 0, err, sizeof(err)) == -EINVAL);
    unlink(target);
    return T_PASS;
}

/* The state file must be the very file the caller created. */
static int test_state_file_identity(void)
{
    char target[IOG_PATH_MAX], state[IOG_PATH_MAX];
    struct iog_job_spec j;
    int sfd = state_job(&j, target, state, 8);
    CHECK(sfd >= 0);
    j.verify_state_id.ino++; /* not this file */
    char err[IOG_ERR_MAX];
    iog_session *s = NULL;
    int rc = iog_session_create(&j, 1, &s, err, sizeof(err));
    if (rc == 0)
        rc = iog_session_start(s, err, sizeof(err));
    iog_session_destroy(s);
    close(sfd);
    unlink(state);
    unlink(target);
    CHECK(rc == -ESTALE);
    CHECK(strstr(err, "was replaced after it was created") != NULL);
    return T_PASS;
}

int main(void)
{
    int result = T_PASS;
    RUN(test_checksum_check_values, result);
    RUN(test_header_layout, result);
    RUN(test_classify_pass, result);
    RUN(test_classify_torn, result);
    RUN(test_classify_lost, result);
    RUN(test_classify_misdirected, result);
    RUN(test_classify_read_error, result);
    RUN(test_state_sequence_and_loss, result);
    RUN(test_state_races, result);
    RUN(test_state_backlog_and_fatal, result);
    RUN(test_state_records_capped, result);
    RUN(test_rewrites_differ_in_every_sector, result);
    RUN(test_clean_runs, result);
    RUN(test_random_races_are_clean, result);
    RUN(test_headers_on_disk, result);
    RUN(test_generations_differ, result);
    RUN(test_verify_getter_errors, result);
    RUN(test_validation, result);
    RUN(test_state_file, result);
    RUN(test_state_file_identity, result);
    FINISH(result);
}
