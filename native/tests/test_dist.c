/*
 * test_dist.c - the block samplers of dist.h drawn directly: the sequence
 * distribution visits exactly its block indices in order, over and over
 * (absolute), or from a base that moves on by their number after each pass
 * (stride), wrapping at the end of the region; indices past the region wrap
 * too. The library's validation takes a sequence only with its own dist.
 */
#include "dist.h"
#include "test_util.h"

static struct iog_job_spec sequence_spec(const uint64_t *blocks, uint32_t n, uint32_t stride)
{
    struct iog_job_spec j = t_spec("null", IOG_RW_RANDREAD, 4096, 12 * 4096);
    j.dist = IOG_DIST_SEQUENCE;
    j.nsequence = n;
    j.sequence_stride = stride;
    for (uint32_t i = 0; i < n; i++)
        j.sequence[i] = blocks[i];
    return j;
}

/* Draws `count` blocks over `nblocks` into out. */
static void draw(const struct iog_job_spec *j, uint64_t nblocks, uint64_t *out, int count)
{
    struct dist d;
    struct rng r;
    rng_seed(&r, 1, 0);
    dist_init(&d, j, nblocks);
    for (int i = 0; i < count; i++)
        out[i] = dist_next(&d, &r);
}

static int test_absolute_sequence_repeats(void)
{
    const uint64_t blocks[] = {2, 0, 1};
    struct iog_job_spec j = sequence_spec(blocks, 3, 0);
    uint64_t got[7];
    draw(&j, 12, got, 7);
    const uint64_t want[] = {2, 0, 1, 2, 0, 1, 2};
    for (int i = 0; i < 7; i++)
        CHECK_EQ_U64(got[i], want[i]);
    return T_PASS;
}

static int test_strided_sequence_moves_on_and_wraps(void)
{
    const uint64_t blocks[] = {2, 0, 1};
    struct iog_job_spec j = sequence_spec(blocks, 3, 1);
    uint64_t got[15];
    draw(&j, 12, got, 15);
    /* Groups of 3 from bases 0, 3, 6, 9, then back at 0 (12 blocks). */
    const uint64_t want[] = {2, 0, 1, 5, 3, 4, 8, 6, 7, 11, 9, 10, 2, 0, 1};
    for (int i = 0; i < 15; i++)
        CHECK_EQ_U64(got[i], want[i]);
    return T_PASS;
}

static int test_indices_past_the_region_wrap(void)
{
    const uint64_t blocks[] = {13, 5};
    struct iog_job_spec j = sequence_spec(blocks, 2, 1);
    uint64_t got[4];
    draw(&j, 10, got, 4);
    const uint64_t want[] = {3, 5, 5, 7}; /* 13 mod 10; base 2: 15 mod 10, 7 */
    for (int i = 0; i < 4; i++)
        CHECK_EQ_U64(got[i], want[i]);
    return T_PASS;
}

/* Whether session creation refuses j with -EINVAL and a message naming `what`. */
static int refused(const struct iog_job_spec *j, const char *what)
{
    char err[IOG_ERR_MAX] = "";
    iog_session *s = NULL;
    int rc = iog_session_create(j, 1, &s, err, sizeof(err));
    if (s)
        iog_session_destroy(s);
    return rc == -EINVAL && strstr(err, what) != NULL;
}

static int test_validation_of_sequences(void)
{
    const uint64_t blocks[] = {1};
    struct iog_job_spec j = sequence_spec(blocks, 1, 0);
    char err[IOG_ERR_MAX] = "";
    iog_session *s = NULL;
    CHECK(iog_session_create(&j, 1, &s, err, sizeof(err)) == 0);
    iog_session_destroy(s);
    j.nsequence = 0;
    CHECK(refused(&j, "nsequence"));
    j.nsequence = IOG_SEQUENCE_MAX + 1;
    CHECK(refused(&j, "nsequence"));
    j = sequence_spec(blocks, 1, 2);
    CHECK(refused(&j, "sequence_stride"));
    j = sequence_spec(blocks, 1, 0);
    j.dist = IOG_DIST_UNIFORM;
    CHECK(refused(&j, "for dist SEQUENCE only"));
    return T_PASS;
}

int main(void)
{
    int result = T_PASS;
    RUN(test_absolute_sequence_repeats, result);
    RUN(test_strided_sequence_moves_on_and_wraps, result);
    RUN(test_indices_past_the_region_wrap, result);
    RUN(test_validation_of_sequences, result);
    FINISH(result);
}
