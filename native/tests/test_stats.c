/*
 * test_stats.c - latency accumulators: exact mean and sample standard
 * deviation, min/max, histogram counts, and merging threads gives the same
 * summary as recording everything in one.
 */
#include <math.h>

#include "../src/stats.h"
#include "test_util.h"

static struct thread_dir_stats a, b, all;

static int test_mean_and_sample_stdev(void)
{
    stats_init(&a);
    for (uint64_t v = 1; v <= 10; v++)
        stats_record_io(&a, 4096, 0, v, v * 1000, v * 1000);
    struct iog_lat_summary s;
    stats_summary(&a.lat[IOG_LAT_CLAT], &s);
    CHECK_EQ_U64(s.count, 10);
    CHECK_EQ_U64(s.min_ns, 1);
    CHECK_EQ_U64(s.max_ns, 10);
    CHECK(fabs(s.mean_ns - 5.5) < 1e-12);
    CHECK(fabs(s.stdev_ns - 3.0276503540974917) < 1e-9);
    stats_summary(&a.lat[IOG_LAT_LAT], &s);
    CHECK(fabs(s.stdev_ns - 3027.6503540974917) < 1e-6);
    stats_summary(&a.lat[IOG_LAT_SLAT], &s);
    CHECK(s.stdev_ns == 0 && s.max_ns == 0);
    CHECK_EQ_U64(a.hist[IOG_LAT_CLAT][7], 1);
    CHECK_EQ_U64(a.ios, 10);
    CHECK_EQ_U64(a.bytes, 40960);
    return T_PASS;
}

static int test_stdev_no_cancellation(void)
{
    /* large values with a tiny spread: a naive float formula loses it */
    stats_init(&a);
    for (uint64_t i = 0; i < 100000; i++)
        stats_record_io(&a, 1, 0, 1000000000000ull + (i & 1), 0, 0);
    struct iog_lat_summary s;
    stats_summary(&a.lat[IOG_LAT_CLAT], &s);
    CHECK(fabs(s.stdev_ns - 0.5000025) < 1e-6);
    return T_PASS;
}

static int test_merge_equals_single(void)
{
    stats_init(&a);
    stats_init(&b);
    stats_init(&all);
    for (uint64_t v = 0; v < 1000; v++) {
        uint64_t x = v * v * 37 + 11;
        stats_record_io(v % 3 ? &a : &b, 512, x / 3, x, x + x / 3, x + x / 3 + 7);
        stats_record_io(&all, 512, x / 3, x, x + x / 3, x + x / 3 + 7);
    }
    stats_record_error(&b, EIO, 4096, 50);
    stats_record_error(&a, ENOSPC, 8192, 20); /* earlier: wins */
    stats_record_error(&a, EINVAL, 0, 10);    /* not the first of its thread */
    struct merged_dir m;
    stats_merge_init(&m);
    stats_merge(&m, &a);
    stats_merge(&m, &b);
    CHECK_EQ_U64(m.ios, 1000);
    CHECK_EQ_U64(m.bytes, 512000);
    CHECK_EQ_U64(m.errors, 3);
    CHECK_EQ_U64(m.first_errno, ENOSPC);
    CHECK_EQ_U64(m.first_error_offset, 8192);
    for (int k = 0; k < IOG_LAT_COUNT; k++) {
        struct iog_lat_summary x, y;
        stats_summary(&m.lat[k], &x);
        stats_summary(&all.lat[k], &y);
        CHECK(memcmp(&x, &y, sizeof(x)) == 0);
    }
    return T_PASS;
}

/* The synchronous engines' shortcut counts exactly what the general
 * unpaced update counts with slat 0 and clat = lat. */
static int test_sync_record_equals_unpaced(void)
{
    static struct thread_dir_stats a, b;
    stats_init(&a);
    stats_init(&b);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t lat = x % (i % 3 ? 5000 : 50000000);
        uint64_t bytes = i % 5 ? 4096 : 65536;
        stats_record_io_unpaced(&a, bytes, 0, lat, lat);
        stats_record_io_sync(&b, bytes, lat);
    }
    CHECK(memcmp(&a, &b, sizeof(a)) == 0);
    return T_PASS;
}

int main(void)
{
    int result = T_PASS;
    RUN(test_mean_and_sample_stdev, result);
    RUN(test_stdev_no_cancellation, result);
    RUN(test_merge_equals_single, result);
    RUN(test_sync_record_equals_unpaced, result);
    FINISH(result);
}
