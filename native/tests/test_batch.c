/*
 * test_batch.c - submission batching of the asynchronous engines
 * (batch_submit, batch_complete_min/max, depth_low): what the spec accepts,
 * and what the worker loop did, as the engine's own calls and the queue
 * depths sampled at submission count it. Reads of a small file, size-based,
 * with completions taken in fixed-size reaps so every count is exact.
 */
#include "test_util.h"

#define BS     4096u
#define BLOCKS 256u

static char path[256];

/* A read job of the whole test file on `engine` at iodepth 16. */
static struct iog_job_spec read_job(const char *engine)
{
    struct iog_job_spec j = t_spec(engine, IOG_RW_READ, BS, (uint64_t)BLOCKS * BS);
    j.iodepth = 16;
    snprintf(j.filename, sizeof(j.filename), "%s", path);
    return j;
}

struct outcome {
    struct iog_dir_stats rd;
    struct iog_job_stats js;
};

/* Runs one job; T_SKIP when the engine cannot run here. */
static int run_job(const struct iog_job_spec *j, struct outcome *o)
{
    iog_session *s = NULL;
    int rc = t_run(j, 1, &s);
    if (rc < 0) {
        iog_session_destroy(s);
        return T_FAIL;
    }
    t_stats(s, 0, IOG_DIR_READ, &o->rd);
    memset(&o->js, 0, sizeof(o->js));
    o->js.struct_size = sizeof(o->js);
    rc = iog_session_job_stats(s, 0, &o->js);
    iog_session_destroy(s);
    if (rc < 0)
        return T_FAIL;
    if (o->rd.errors && o->rd.ios == 0) {
        fprintf(stderr, "  %s cannot run here (errno %d): skipped\n", j->engine, o->rd.first_errno);
        return T_SKIP;
    }
    return T_PASS;
}

static int rejects(const struct iog_job_spec *j, const char *needle)
{
    char err[IOG_ERR_MAX] = "";
    iog_session *s = NULL;
    int rc = iog_session_create(j, 1, &s, err, sizeof(err));
    if (rc >= 0)
        iog_session_destroy(s);
    if (rc != -EINVAL || !strstr(err, needle)) {
        fprintf(stderr, "  expected EINVAL naming '%s', got %d '%s'\n", needle, rc, err);
        return 0;
    }
    return 1;
}

static int test_validation(void)
{
    struct iog_job_spec j = read_job("libaio");
    j.batch_submit = 17;
    CHECK(rejects(&j, "batch_submit must be at most iodepth (16)"));
    j = read_job("libaio");
    j.depth_low = 20;
    CHECK(rejects(&j, "depth_low must be at most iodepth"));
    j = read_job("libaio");
    j.batch_complete_min = 8;
    j.batch_complete_max = 4;
    CHECK(rejects(&j, "batch_complete_max (4) must be at least batch_complete_min (8)"));
    j = read_job("psync");
    j.iodepth = 1;
    j.batch_submit = 1;
    CHECK(rejects(&j, "batch_submit applies to asynchronous engines only"));
    j = read_job("libaio");
    j.batch_submit = 16;
    j.batch_complete_min = 16;
    j.batch_complete_max = 16;
    j.depth_low = 1;
    char err[IOG_ERR_MAX] = "";
    iog_session *s = NULL;
    CHECK(iog_session_create(&j, 1, &s, err, sizeof(err)) == 0);
    iog_session_destroy(s);
    return T_PASS;
}

/* By default every request goes in its own submit. */
static int defaults(const char *engine)
{
    struct iog_job_spec j = read_job(engine);
    struct outcome o;
    int rc = run_job(&j, &o);
    if (rc != T_PASS)
        return rc;
    CHECK_EQ_U64(o.rd.ios, BLOCKS);
    CHECK_EQ_U64(o.js.submits, BLOCKS);
    CHECK(o.js.reaps >= 1 && o.js.reaps <= BLOCKS);
    return T_PASS;
}

/* Batches of 8 submitted and reaped: a refill is one batch. */
static int batches_of_8(const char *engine)
{
    struct iog_job_spec j = read_job(engine);
    j.batch_submit = 8;
    j.batch_complete_min = 8;
    j.batch_complete_max = 8;
    struct outcome o;
    int rc = run_job(&j, &o);
    if (rc != T_PASS)
        return rc;
    CHECK_EQ_U64(o.rd.ios, BLOCKS);
    CHECK_EQ_U64(o.js.submits, BLOCKS / 8);
    CHECK_EQ_U64(o.js.reaps, BLOCKS / 8);
    /* each batch is sampled as it went in: 1..8, then 9..16 on top of 8 */
    CHECK_EQ_U64(o.rd.qd_samples, BLOCKS);
    return T_PASS;
}

/* iodepth 16, reaps of exactly 4. With depth_low 4 the queue drains from 16
 * to 4 before it is filled again, so after the first fill (depths 1..16)
 * every refill submits at depths 5..16; without it, at 13..16. */
static int low_water(const char *engine, uint32_t low)
{
    struct iog_job_spec j = read_job(engine);
    j.batch_complete_min = 4;
    j.batch_complete_max = 4;
    j.depth_low = low;
    struct outcome o;
    int rc = run_job(&j, &o);
    if (rc != T_PASS)
        return rc;
    CHECK_EQ_U64(o.rd.ios, BLOCKS);
    CHECK_EQ_U64(o.js.submits, BLOCKS);
    CHECK_EQ_U64(o.js.reaps, BLOCKS / 4);
    /* first fill: 1 | 2,3 | 4..7 | 8..15 | 16 */
    uint64_t first[5] = {1, 2, 4, 8, 1}, want[5];
    uint64_t sum = 136;
    if (low == 4) { /* (256 - 16) / 12 = 20 refills of 5..16 */
        uint64_t refill[5] = {0, 0, 3, 8, 1};
        for (int b = 0; b < 5; b++)
            want[b] = first[b] + 20 * refill[b];
        sum += 20 * 126;
    } else { /* (256 - 16) / 4 = 60 refills of 13..16 */
        uint64_t refill[5] = {0, 0, 0, 3, 1};
        for (int b = 0; b < 5; b++)
            want[b] = first[b] + 60 * refill[b];
        sum += 60 * 58;
    }
    for (int b = 0; b < 5; b++)
        CHECK_EQ_U64(o.rd.qd_hist[b], want[b]);
    CHECK_EQ_U64(o.rd.qd_sum, sum);
    return T_PASS;
}

static int test_uring_defaults(void)
{
    return defaults("io_uring");
}
static int test_libaio_defaults(void)
{
    return defaults("libaio");
}
static int test_uring_batches(void)
{
    return batches_of_8("io_uring");
}
static int test_libaio_batches(void)
{
    return batches_of_8("libaio");
}
static int test_uring_low(void)
{
    return low_water("io_uring", 4);
}
static int test_libaio_low(void)
{
    return low_water("libaio", 4);
}
static int test_uring_no_low(void)
{
    return low_water("io_uring", 0);
}
static int test_libaio_no_low(void)
{
    return low_water("libaio", 0);
}

int main(void)
{
    if (t_temp_path(path, sizeof(path)) < 0 || t_make_file(path, BLOCKS, BS, 7) < 0) {
        fprintf(stderr, "cannot create a test file\n");
        return T_FAIL;
    }
    int result = T_PASS;
    RUN(test_validation, result);
    RUN(test_uring_defaults, result);
    RUN(test_libaio_defaults, result);
    RUN(test_uring_batches, result);
    RUN(test_libaio_batches, result);
    RUN(test_uring_low, result);
    RUN(test_libaio_low, result);
    RUN(test_uring_no_low, result);
    RUN(test_libaio_no_low, result);
    unlink(path);
    FINISH(result);
}
