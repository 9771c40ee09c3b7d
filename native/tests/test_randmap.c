/*
 * test_randmap.c - the random map: for block counts around every power of
 * two and some large ones, each pass of each file visits every block exactly
 * once; passes and files differ in order; the first half of a pass is spread
 * evenly over the region (within five standard deviations per bucket).
 */
#include "../src/randmap.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* one pass of file f: every block once */
static int one_pass_each_block_once(struct randmap *m, uint32_t f, uint64_t n, uint8_t *seen)
{
    memset(seen, 0, n);
    for (uint64_t k = 0; k < n; k++) {
        uint64_t b = randmap_next(m, f);
        CHECK(b < n);
        CHECK(seen[b] == 0);
        seen[b] = 1;
    }
    return T_PASS;
}

static int test_every_block_once_per_pass(void)
{
    uint8_t *seen = malloc(1u << 21);
    CHECK(seen != NULL);
    for (unsigned bits = 0; bits <= 20; bits++) {
        uint64_t base = UINT64_C(1) << bits;
        uint64_t ns[] = {base - 1, base, base + 1, base + base / 3};
        for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
            uint64_t n = ns[i];
            if (n == 0)
                continue;
            struct randmap m;
            randmap_init(&m, n, 2, 0x1234, bits);
            for (uint32_t pass = 0; pass < 2; pass++)
                for (uint32_t f = 0; f < 2; f++)
                    if (one_pass_each_block_once(&m, f, n, seen) != T_PASS) {
                        fprintf(stderr, "n=%llu pass %u file %u\n", (unsigned long long)n, pass, f);
                        free(seen);
                        return T_FAIL;
                    }
        }
    }
    free(seen);
    return T_PASS;
}

static int test_passes_and_files_differ(void)
{
    enum { N = 4096 };
    uint64_t a[N], b[N], c[N];
    struct randmap m;
    randmap_init(&m, N, 2, 7, 0);
    for (int k = 0; k < N; k++)
        a[k] = randmap_next(&m, 0);
    for (int k = 0; k < N; k++)
        b[k] = randmap_next(&m, 0); /* the second pass */
    for (int k = 0; k < N; k++)
        c[k] = randmap_next(&m, 1);
    int same_ab = 0, same_ac = 0, in_order = 0;
    for (int k = 0; k < N; k++) {
        same_ab += a[k] == b[k];
        same_ac += a[k] == c[k];
        in_order += k > 0 && a[k] == a[k - 1] + 1;
    }
    /* a random order agrees with another at about 1 place in N, and has about 1 step
     * of +1 */
    CHECK(same_ab < 16);
    CHECK(same_ac < 16);
    CHECK(in_order < 16);
    /* another seed or stream, another order */
    struct randmap o;
    randmap_init(&o, N, 1, 7, 1);
    int same = 0;
    for (int k = 0; k < N; k++)
        same += randmap_next(&o, 0) == a[k];
    CHECK(same < 16);
    return T_PASS;
}

static int test_first_half_of_a_pass_is_spread_evenly(void)
{
    /* n blocks in B buckets; the first n/2 draws of a pass hit each bucket
     * n/(2B) times, a hypergeometric count of variance about n/(4B) (1 - 1/B) */
    const uint64_t ns[] = {1000, 1u << 16, 100003};
    enum { B = 16 };
    for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
        uint64_t n = ns[i], counts[B] = {0};
        struct randmap m;
        randmap_init(&m, n, 1, 42, 0);
        for (uint64_t k = 0; k < n / 2; k++)
            counts[randmap_next(&m, 0) * B / n]++;
        double mean = (double)(n / 2) / B, sd = sqrt((double)n / (4.0 * B) * (1.0 - 1.0 / B));
        for (int b = 0; b < B; b++)
            CHECK(fabs((double)counts[b] - mean) <= 5 * sd + 1);
    }
    return T_PASS;
}

int main(void)
{
    int result = T_PASS;
    RUN(test_every_block_once_per_pass, result);
    RUN(test_passes_and_files_differ, result);
    RUN(test_first_half_of_a_pass_is_spread_evenly, result);
    FINISH(result);
}
