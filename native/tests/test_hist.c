/*
 * test_hist.c - the histogram geometry (index and bounds agree, buckets are
 * contiguous and monotonic, relative error at midpoints within 1/256, the
 * overflow bucket) and percentiles computed from count arrays.
 */
#include "../src/hist.h"
#include "test_util.h"

#include <errno.h>

#define CHECK_EQ_INT(a, b) CHECK((int)(a) == (int)(b))

static int test_bucket_count(void)
{
    CHECK_EQ_U64(IOG_HIST_BUCKETS, 4353);
    CHECK_EQ_U64(iog_hist_index(IOG_HIST_TOP_NS - 1), IOG_HIST_BUCKETS - 2);
    CHECK_EQ_U64(iog_hist_index(IOG_HIST_TOP_NS), IOG_HIST_BUCKETS - 1);
    CHECK_EQ_U64(iog_hist_index(UINT64_MAX), IOG_HIST_BUCKETS - 1);
    return T_PASS;
}

static int test_linear_part_exact(void)
{
    for (uint64_t v = 0; v < IOG_HIST_LINEAR; v++) {
        uint64_t lo, hi;
        CHECK_EQ_U64(iog_hist_index(v), v);
        CHECK(iog_hist_bounds((uint32_t)v, &lo, &hi) == 0);
        CHECK_EQ_U64(lo, v);
        CHECK_EQ_U64(hi, v + 1);
    }
    CHECK_EQ_U64(iog_hist_index(256), 256);
    CHECK_EQ_U64(iog_hist_index(257), 256);
    CHECK_EQ_U64(iog_hist_index(258), 257);
    return T_PASS;
}

static int test_buckets_contiguous_and_consistent(void)
{
    uint64_t prev_hi = 0;
    for (uint32_t i = 0; i < IOG_HIST_BUCKETS; i++) {
        uint64_t lo, hi;
        CHECK(iog_hist_bounds(i, &lo, &hi) == 0);
        CHECK_EQ_U64(lo, prev_hi);
        CHECK(hi > lo);
        /* both ends and the midpoint map back to this bucket */
        CHECK_EQ_U64(iog_hist_index(lo), i);
        if (i + 1 < IOG_HIST_BUCKETS) {
            CHECK_EQ_U64(iog_hist_index(hi - 1), i);
            CHECK_EQ_U64(iog_hist_index(hi), i + 1);
        }
        prev_hi = hi;
    }
    CHECK_EQ_U64(prev_hi, UINT64_MAX);
    uint64_t lo, hi;
    CHECK(iog_hist_bounds(IOG_HIST_BUCKETS, &lo, &hi) == -EINVAL);
    return T_PASS;
}

static int test_relative_error_bound(void)
{
    /* The midpoint of a bucket is within 1/256 of every value in it. */
    for (uint32_t i = IOG_HIST_LINEAR; i + 1 < IOG_HIST_BUCKETS; i++) {
        uint64_t lo, hi;
        iog_hist_bounds(i, &lo, &hi);
        double mid = (double)lo + (double)(hi - lo) / 2.0;
        double worst = (mid - (double)lo) / (double)lo;
        CHECK(worst <= 1.0 / 256.0 + 1e-12);
    }
    /* and the index is monotonic over a spread of values */
    uint32_t prev = 0;
    for (uint64_t v = 1; v < (1ull << 41); v = v + v / 7 + 1) {
        uint32_t idx = iog_hist_index(v);
        CHECK(idx >= prev);
        prev = idx;
    }
    return T_PASS;
}

static int test_percentile_from_counts(void)
{
    static uint64_t counts[IOG_HIST_BUCKETS];
    memset(counts, 0, sizeof(counts));
    CHECK_EQ_U64(hist_percentile(counts, 99.0), 0);
    /* 1..100 ns, one each: p50 = 50, p99 = 99, p100 = 100 */
    for (uint64_t v = 1; v <= 100; v++)
        counts[hist_index(v)]++;
    CHECK_EQ_U64(hist_percentile(counts, 50.0), 50);
    CHECK_EQ_U64(hist_percentile(counts, 99.0), 99);
    CHECK_EQ_U64(hist_percentile(counts, 100.0), 100);
    CHECK_EQ_U64(hist_percentile(counts, 0.001), 1);
    /* a value in a wide bucket is reported as the bucket midpoint */
    memset(counts, 0, sizeof(counts));
    counts[hist_index(1000000)] = 10;
    uint64_t lo, hi;
    hist_bounds(hist_index(1000000), &lo, &hi);
    uint64_t p = hist_percentile(counts, 99.0);
    CHECK_EQ_U64(p, lo + (hi - lo) / 2);
    CHECK(p >= 1000000 - 1000000 / 256 && p <= 1000000 + 1000000 / 256);
    /* overflow values are reported at the top of the range */
    counts[HIST_OVERFLOW] = 1000;
    CHECK_EQ_U64(hist_percentile(counts, 99.0), IOG_HIST_TOP_NS);
    return T_PASS;
}

/* The rank is exact for decimal percentiles; a range of counts starting at
 * `first` gives the same answers as the whole array; extremes clamp. */
static int test_percentiles_rule(void)
{
    static uint64_t counts[IOG_HIST_BUCKETS];
    memset(counts, 0, sizeof(counts));
    for (uint64_t v = 1; v <= 1000; v++)
        counts[hist_index(v * 1000)]++;
    double ps[] = {99.9, 50.0, 100.0, 0.0};
    uint64_t whole[4], range[4];
    CHECK_EQ_INT(iog_hist_percentiles(counts, 0, IOG_HIST_BUCKETS, ps, 4, 0, UINT64_MAX, whole), 1);
    /* rank 999 of 1000 (a double product would give ceil(999.0000000000001) = 1000) */
    uint64_t lo, hi;
    hist_bounds(hist_index(999000), &lo, &hi);
    CHECK_EQ_U64(whole[0], lo + (hi - lo) / 2);
    hist_bounds(hist_index(1000), &lo, &hi);
    CHECK_EQ_U64(whole[3], lo + (hi - lo) / 2); /* p0 is the smallest sample */
    uint32_t first = hist_index(1000), last = hist_index(1000000);
    CHECK_EQ_INT(
        iog_hist_percentiles(counts + first, first, last - first + 1, ps, 4, 0, UINT64_MAX, range),
        1);
    for (int j = 0; j < 4; j++)
        CHECK_EQ_U64(range[j], whole[j]);
    /* the exact extremes clamp the answer */
    CHECK_EQ_INT(iog_hist_percentiles(counts, 0, IOG_HIST_BUCKETS, ps, 4, 1000, 1000000, whole), 1);
    CHECK_EQ_U64(whole[2], 1000000 < whole[2] ? 1000000 : whole[2]);
    CHECK(whole[2] <= 1000000 && whole[3] >= 1000);
    /* the overflow bucket reports the maximum when it is known */
    counts[HIST_OVERFLOW] = 100000;
    CHECK_EQ_INT(iog_hist_percentiles(counts, 0, IOG_HIST_BUCKETS, ps, 1, 0, 5ull << 40, whole), 1);
    CHECK_EQ_U64(whole[0], 5ull << 40);
    /* empty, and bad arguments */
    memset(counts, 0, sizeof(counts));
    CHECK_EQ_INT(iog_hist_percentiles(counts, 0, IOG_HIST_BUCKETS, ps, 4, 0, UINT64_MAX, whole), 0);
    double bad = 100.5;
    CHECK_EQ_INT(iog_hist_percentiles(counts, 0, IOG_HIST_BUCKETS, &bad, 1, 0, UINT64_MAX, whole),
                 -EINVAL);
    CHECK_EQ_INT(iog_hist_percentiles(counts, 10, IOG_HIST_BUCKETS, ps, 1, 0, UINT64_MAX, whole),
                 -EINVAL);
    CHECK_EQ_INT(iog_hist_percentiles(counts, 0, 4, ps, 1, 9, 8, whole), -EINVAL);
    return T_PASS;
}

int main(void)
{
    int result = T_PASS;
    RUN(test_bucket_count, result);
    RUN(test_linear_part_exact, result);
    RUN(test_buckets_contiguous_and_consistent, result);
    RUN(test_relative_error_bound, result);
    RUN(test_percentile_from_counts, result);
    RUN(test_percentiles_rule, result);
    FINISH(result);
}
