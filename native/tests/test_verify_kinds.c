/*
 * test_verify_kinds.c - every checksum kind of verify (enum iog_verify).
 * The private part (src/verify.c is compiled into this program): each
 * algorithm against its published check value, the long digests kept whole
 * in the digest area after the header, and for every kind a good block
 * passes while a torn one (a sector of another write) is caught; a flipped
 * data byte is caught by every kind with a data checksum, and META (no data
 * checksum) catches a flipped header. The public part: the smallest block
 * each kind allows, and a clean run of every kind through the public API.
 */
#include <isa-l/crc64.h>
#include <xxhash.h>

#include "../src/verify.h"
#include "test_util.h"

#define BS  4096u
#define GEN 0x0a0b0c0d0e0f1011ull

static const struct {
    uint32_t kind;
    uint32_t digest; /* bytes */
    uint32_t min_block;
} kinds[] = {
    {IOG_VERIFY_CRC32C, 4, 64},   {IOG_VERIFY_XXH64, 8, 64}, {IOG_VERIFY_CRC32, 4, 64},
    {IOG_VERIFY_MD5, 16, 80},     {IOG_VERIFY_SHA1, 20, 88}, {IOG_VERIFY_SHA256, 32, 96},
    {IOG_VERIFY_SHA512, 64, 128}, {IOG_VERIFY_CRC64, 8, 64}, {IOG_VERIFY_XXH32, 4, 64},
    {IOG_VERIFY_META, 0, 64},
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

static int hex_is(const unsigned char *d, uint32_t n, const char *hex)
{
    char buf[2 * VERIFY_DIGEST_MAX + 1];
    for (uint32_t i = 0; i < n; i++)
        snprintf(buf + 2 * i, 3, "%02x", d[i]);
    if (strcmp(buf, hex) != 0) {
        fprintf(stderr, "digest %s, expected %s\n", buf, hex);
        return 0;
    }
    return 1;
}

static int test_check_values(void)
{
    const char *s = "123456789";
    /* the published check values of each algorithm, as the header keeps them */
    CHECK_EQ_U64(verify_checksum(IOG_VERIFY_MD5, s, 9), 0x38453b3294e7f925ull);
    CHECK_EQ_U64(verify_checksum(IOG_VERIFY_SHA1, s, 9), 0x73048e801dbcc3f7ull);
    CHECK_EQ_U64(verify_checksum(IOG_VERIFY_SHA256, s, 9), 0xeb9138c3d3b0e215ull);
    CHECK_EQ_U64(verify_checksum(IOG_VERIFY_SHA512, s, 9), 0xf6eac8d12d76e6d9ull);
    /* CRC-64 with fio's polynomial (Jones, reflected), init 0, no final xor */
    CHECK_EQ_U64(verify_checksum(IOG_VERIFY_CRC64, s, 9), 0xe9c6d914c4b8d9caull);
    CHECK_EQ_U64(verify_checksum(IOG_VERIFY_XXH32, "", 0), 0x02cc5d05u);
    CHECK_EQ_U64(verify_checksum(IOG_VERIFY_META, s, 9), 0);
    /* and the whole digests */
    struct {
        uint32_t kind;
        const char *hex;
    } whole[] = {
        {IOG_VERIFY_MD5, "25f9e794323b453885f5181f1b624d0b"},
        {IOG_VERIFY_SHA1, "f7c3bc1d808e04732adf679965ccc34ca7ae3441"},
        {IOG_VERIFY_SHA256, "15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225"},
        {IOG_VERIFY_SHA512, "d9e6762dd1c8eaf6d61b3c6192fc408d4d6d5f1176d0c29169bc24e71c3f274a"
                            "d27fcd5811b313d681f7e55ec02d73d499c95455b6b5bb503acf574fba8ffe85"},
    };
    for (unsigned i = 0; i < sizeof(whole) / sizeof(whole[0]); i++) {
        struct verify_hasher vh;
        unsigned char d[VERIFY_DIGEST_MAX];
        CHECK(verify_hasher_init(&vh, whole[i].kind) == 0);
        verify_digest(&vh, s, 9, d);
        verify_digest(&vh, s, 9, d); /* a hasher is reused */
        verify_hasher_fini(&vh);
        CHECK(hex_is(d, verify_digest_len(whole[i].kind), whole[i].hex));
    }
    /* the libraries agree on a longer buffer */
    unsigned char buf[BS];
    for (unsigned i = 0; i < BS; i++)
        buf[i] = (unsigned char)(i * 11 + 5);
    CHECK_EQ_U64(verify_checksum(IOG_VERIFY_XXH32, buf, BS), XXH32(buf, BS, 0));
    CHECK_EQ_U64(verify_checksum(IOG_VERIFY_CRC64, buf, BS), ~crc64_jones_refl(~0ull, buf, BS));
    CHECK(verify_hasher_init(&(struct verify_hasher){0}, 99) == -EINVAL);
    return T_PASS;
}

static void craft(unsigned char *block, uint32_t kind, uint64_t seq)
{
    for (unsigned i = 0; i < BS; i++)
        block[i] = (unsigned char)(i ^ (seq * 29));
    struct verify_header h = {.magic = VERIFY_MAGIC,
                              .version = VERIFY_VERSION,
                              .kind = (uint16_t)kind,
                              .offset = 8192,
                              .len = BS,
                              .generation = GEN,
                              .seq = seq,
                              .file = 1,
                              .job = 2};
    verify_seal(NULL, block, BS, &h);
}

static const struct verify_expect expect = {
    .generation = GEN, .offset = 8192, .len = BS, .seq = 5, .file = 1, .job = 2};

static int test_digest_layout(void)
{
    for (unsigned k = 0; k < NKINDS; k++) {
        uint32_t kind = kinds[k].kind;
        CHECK(verify_kind_known(kind));
        CHECK_EQ_U64(verify_digest_len(kind), kinds[k].digest);
        CHECK_EQ_U64(verify_min_block(kind), kinds[k].min_block);
        unsigned char block[BS], copy[BS];
        craft(block, kind, 5);
        CHECK(block[4] == 3 && block[5] == 0); /* header version 3 */
        CHECK(block[6] == kind);
        memcpy(copy, block, BS);
        uint32_t area = kinds[k].digest > 8 ? (kinds[k].digest + 7) / 8 * 8 : 0;
        memset(copy + VH_CHECKSUM, 0, 8);
        memset(copy + VH_DIGEST, 0, area);
        unsigned char d[VERIFY_DIGEST_MAX];
        uint64_t sum = verify_checksum(kind, copy, BS);
        struct verify_header h;
        verify_header_decode(block, &h);
        CHECK_EQ_U64(h.checksum, sum); /* the field holds the sum of the block without it */
        if (area) {
            /* the whole digest right after the header, the rest of the area zero */
            struct verify_hasher vh;
            CHECK(verify_hasher_init(&vh, kind) == 0);
            verify_digest(&vh, copy, BS, d);
            verify_hasher_fini(&vh);
            CHECK(memcmp(block + VH_DIGEST, d, kinds[k].digest) == 0);
            for (uint32_t i = kinds[k].digest; i < area; i++)
                CHECK(block[VH_DIGEST + i] == 0);
            CHECK(block[VH_DIGEST + area] == copy[VH_DIGEST + area]); /* contents after it */
        } else {
            CHECK(block[VH_DIGEST] == (unsigned char)(VH_DIGEST ^ (5 * 29))); /* contents */
        }
        if (kind == IOG_VERIFY_META)
            CHECK_EQ_U64(h.checksum, 0);
    }
    return T_PASS;
}

static int classify(uint32_t kind, unsigned char *block, struct iog_verify_failure *f)
{
    struct verify_hasher vh;
    if (verify_hasher_init(&vh, kind) != 0)
        return -1;
    int ok = verify_classify(&vh, block, BS, &expect, f);
    verify_hasher_fini(&vh);
    return ok;
}

static int test_every_kind_catches_a_tear(void)
{
    for (unsigned k = 0; k < NKINDS; k++) {
        uint32_t kind = kinds[k].kind;
        unsigned char good[BS], older[BS], block[BS];
        struct iog_verify_failure f;
        craft(good, kind, 5);
        memcpy(block, good, BS);
        CHECK(classify(kind, block, &f) == 1); /* a good block passes */
        CHECK(memcmp(block, good, BS) == 0);   /* and is left as it was */
        /* torn: the second half is still the earlier write's */
        craft(older, kind, 4);
        memcpy(block + BS / 2, older + BS / 2, BS / 2);
        CHECK(classify(kind, block, &f) == 0);
        CHECK_EQ_U64(f.kind, IOG_VERIFY_TORN);
        CHECK_EQ_U64(f.found_seq, 5);
        /* torn within the first sector only: the stamps all hold */
        memcpy(block, good, BS);
        memcpy(block + 256, older + 256, 256);
        int caught = classify(kind, block, &f) == 0;
        CHECK(caught == (kind != IOG_VERIFY_META)); /* META checks no data */
    }
    return T_PASS;
}

static int test_every_checksum_catches_a_flipped_byte(void)
{
    for (unsigned k = 0; k < NKINDS; k++) {
        uint32_t kind = kinds[k].kind;
        unsigned char good[BS], block[BS];
        struct iog_verify_failure f;
        craft(good, kind, 5);
        /* one bit of the data of a later sector, not its stamp */
        memcpy(block, good, BS);
        block[3 * 512 + 100] ^= 0x10;
        int ok = classify(kind, block, &f);
        if (kind == IOG_VERIFY_META) {
            CHECK(ok == 1); /* what META does not check */
        } else {
            CHECK(ok == 0);
            CHECK_EQ_U64(f.kind, IOG_VERIFY_TORN);
            CHECK(f.stored_checksum != f.computed_checksum || kinds[k].digest > 8);
        }
        /* one bit of the digest area of a long digest, past its first 8 bytes */
        if (kinds[k].digest > 8) {
            memcpy(block, good, BS);
            block[VH_DIGEST + kinds[k].digest - 1] ^= 1;
            CHECK(classify(kind, block, &f) == 0);
            CHECK_EQ_U64(f.kind, IOG_VERIFY_TORN);
        }
        /* one bit of the header's offset: another block's header */
        memcpy(block, good, BS);
        block[VH_OFFSET + 1] ^= 0x01;
        CHECK(classify(kind, block, &f) == 0);
        CHECK(f.kind == IOG_VERIFY_TORN || f.kind == IOG_VERIFY_MISDIRECTED);
        /* one bit of a stamp */
        memcpy(block, good, BS);
        block[5 * 512 + 3] ^= 0x80;
        CHECK(classify(kind, block, &f) == 0);
        CHECK_EQ_U64(f.kind, IOG_VERIFY_TORN);
        /* a block too short for the kind's digest area */
        if (kinds[k].min_block > 64) {
            memcpy(block, good, BS);
            struct verify_header h;
            verify_header_decode(block, &h);
            h.len = kinds[k].min_block - 8;
            verify_header_encode(block, &h);
            struct verify_expect e = expect;
            CHECK(verify_classify(NULL, block, BS, &e, &f) == 0);
            CHECK_EQ_U64(f.kind, IOG_VERIFY_TORN);
        }
    }
    return T_PASS;
}

/* A block of another kind than the job's is judged with its own kind. */
static int test_a_block_of_another_kind(void)
{
    unsigned char block[BS];
    struct iog_verify_failure f;
    craft(block, IOG_VERIFY_SHA256, 5);
    CHECK(classify(IOG_VERIFY_CRC32C, block, &f) == 1);
    return T_PASS;
}

/* ---- through the public API ----------------------------------------------- */

static int create_rc(uint32_t kind, uint64_t bs, char *err)
{
    struct iog_job_spec j = t_spec("psync", IOG_RW_WRITE, bs, 1 << 20);
    j.verify = kind;
    strcpy(j.filename, "/nonexistent/verify-me");
    iog_session *s = NULL;
    int rc = iog_session_create(&j, 1, &s, err, IOG_ERR_MAX);
    iog_session_destroy(s);
    return rc;
}

static int test_smallest_block(void)
{
    char err[IOG_ERR_MAX];
    for (unsigned k = 0; k < NKINDS; k++) {
        uint32_t min = kinds[k].min_block;
        CHECK(create_rc(kinds[k].kind, min, err) == 0);
        err[0] = 0;
        CHECK(create_rc(kinds[k].kind, min - 8, err) == -EINVAL);
        char want[64];
        snprintf(want, sizeof(want), ">= %u with verify", min);
        if (!strstr(err, want)) {
            fprintf(stderr, "kind %u: '%s' lacks '%s'\n", kinds[k].kind, err, want);
            return T_FAIL;
        }
    }
    CHECK(create_rc(IOG_VERIFY_META + 1, BS, err) == -EINVAL);
    CHECK(strstr(err, "is unknown") != NULL);
    return T_PASS;
}

static int test_clean_runs_of_every_kind(void)
{
    const uint64_t size = 64 * BS;
    for (unsigned k = 0; k < NKINDS; k++) {
        for (uint32_t backlog = 0; backlog <= 8; backlog += 8) {
            char path[IOG_PATH_MAX];
            CHECK(t_temp_path(path, sizeof(path)) == 0);
            struct iog_job_spec j = t_spec("psync", IOG_RW_WRITE, BS, size);
            j.verify = kinds[k].kind;
            j.verify_backlog = backlog;
            strcpy(j.filename, path);
            iog_session *s = NULL;
            int rc = t_run(&j, 1, &s);
            unlink(path);
            struct iog_verify_stats st = {.struct_size = sizeof(st)};
            if (rc == 0)
                rc = iog_session_verify(s, 0, &st, NULL, 0);
            iog_session_destroy(s);
            if (rc != 0 || st.failures != 0 || st.blocks_checked != size / BS ||
                st.blocks_written != size / BS) {
                fprintf(stderr, "kind %u backlog %u: rc %d failures %llu checked %llu\n",
                        kinds[k].kind, backlog, rc, (unsigned long long)st.failures,
                        (unsigned long long)st.blocks_checked);
                return T_FAIL;
            }
        }
    }
    return T_PASS;
}

int main(void)
{
    int result = T_PASS;
    RUN(test_check_values, result);
    RUN(test_digest_layout, result);
    RUN(test_every_kind_catches_a_tear, result);
    RUN(test_every_checksum_catches_a_flipped_byte, result);
    RUN(test_a_block_of_another_kind, result);
    RUN(test_smallest_block, result);
    RUN(test_clean_runs_of_every_kind, result);
    FINISH(result);
}
