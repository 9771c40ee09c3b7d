/*
 * test_validate.c - iog_session_create rejects each invalid field with
 * -EINVAL (or -EOPNOTSUPP for reserved engines) and a message naming the job
 * index and the field, and accepts a valid spec.
 */
#include "test_util.h"

/* Expects create to fail with `want` and a message containing `field`. */
static int expect_reject(const struct iog_job_spec *jobs, uint32_t n, int want, const char *field)
{
    char err[IOG_ERR_MAX] = "";
    iog_session *s = (iog_session *)0x1;
    int rc = iog_session_create(jobs, n, &s, err, sizeof(err));
    if (rc != want || s != NULL || strstr(err, field) == NULL) {
        fprintf(stderr, "field %s: rc=%d (want %d) err='%s'\n", field, rc, want, err);
        return T_FAIL;
    }
    return T_PASS;
}

#define REJECT(mutation, field)                                                                    \
    do {                                                                                           \
        struct iog_job_spec j = base;                                                              \
        mutation;                                                                                  \
        CHECK(expect_reject(&j, 1, -EINVAL, field) == T_PASS);                                     \
    } while (0)

static struct iog_job_spec base_spec(void)
{
    struct iog_job_spec j = t_spec(IOG_ENGINE_PSYNC, IOG_RW_RANDREAD, 4096, 1 << 20);
    strcpy(j.filename, "/tmp/iogate-never-opened");
    return j;
}

static int test_valid_spec_accepted(void)
{
    struct iog_job_spec j = base_spec();
    iog_session *s = NULL;
    char err[IOG_ERR_MAX];
    CHECK(iog_session_create(&j, 1, &s, err, sizeof(err)) == 0);
    CHECK(s != NULL);
    CHECK_EQ_U64(iog_session_jobs(s), 1);
    /* never started: wait is invalid, accessors refuse */
    CHECK(iog_session_wait(s, 0) == -EINVAL);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 0, 0, &st) < 0);
    iog_session_destroy(s);
    iog_session_destroy(NULL);
    return T_PASS;
}

static int test_each_field_rejected(void)
{
    struct iog_job_spec base = base_spec();
    REJECT(j.struct_size = 16, "struct_size");
    REJECT(j.engine = 99, "engine");
    REJECT(j.rw = 6, "rw");
    REJECT(j.rwmixread = 101, "rwmixread");
    REJECT(j.bs[0] = 0, "bs");
    REJECT((j.flags = IOG_JOB_DIRECT, j.bs[0] = 1000), "bs");
    REJECT(j.iodepth = 0, "iodepth");
    REJECT(j.iodepth = 2, "iodepth"); /* psync must be 1 */
    REJECT(j.numjobs = 0, "numjobs");
    REJECT(j.numjobs = 100000, "numjobs");
    REJECT(j.size = 0, "size");
    REJECT(j.size = 1024, "size"); /* smaller than bs */
    REJECT(j.offset = UINT64_MAX - 10, "offset");
    REJECT((j.flags = IOG_JOB_DIRECT, j.offset = 100), "offset");
    REJECT((j.flags = IOG_JOB_TIME_BASED, j.runtime_ns = 0), "runtime_ns");
    REJECT(j.interval_ns = 5, "interval_ns");
    REJECT(j.flags = 1u << 20, "flags");
    REJECT(j.reserved0 = 1, "reserved0");
    REJECT(j.filename[0] = '\0', "filename");
    REJECT(memset(j.filename, 'a', sizeof(j.filename)), "filename");
    return T_PASS;
}

static int test_unused_direction_bs_ignored(void)
{
    struct iog_job_spec j = base_spec();
    j.bs[IOG_DIR_WRITE] = 0; /* randread never writes */
    iog_session *s = NULL;
    CHECK(iog_session_create(&j, 1, &s, NULL, 0) == 0);
    iog_session_destroy(s);
    j.rw = IOG_RW_RANDRW;
    CHECK(expect_reject(&j, 1, -EINVAL, "bs[1]") == T_PASS);
    return T_PASS;
}

static int test_reserved_engines_unsupported(void)
{
    struct iog_job_spec j = base_spec();
    j.engine = IOG_ENGINE_LIBAIO;
    CHECK(expect_reject(&j, 1, -EOPNOTSUPP, "engine") == T_PASS);
    j.engine = IOG_ENGINE_SYNC;
    CHECK(expect_reject(&j, 1, -EOPNOTSUPP, "engine") == T_PASS);
    return T_PASS;
}

static int test_job_index_in_message(void)
{
    struct iog_job_spec jobs[3] = {base_spec(), base_spec(), base_spec()};
    jobs[2].iodepth = 0;
    CHECK(expect_reject(jobs, 3, -EINVAL, "job 2: iodepth") == T_PASS);
    CHECK(expect_reject(jobs, 0, -EINVAL, "job") == T_PASS);
    struct iog_job_spec many[5];
    for (int i = 0; i < 5; i++) {
        many[i] = base_spec();
        many[i].numjobs = 1000; /* 5000 threads in all */
    }
    CHECK(expect_reject(many, 5, -EINVAL, "job 4: numjobs") == T_PASS);
    return T_PASS;
}

static int test_null_engine_needs_no_filename(void)
{
    struct iog_job_spec j = t_spec(IOG_ENGINE_NULL, IOG_RW_READ, 4096, 4096);
    iog_session *s = NULL;
    CHECK(iog_session_create(&j, 1, &s, NULL, 0) == 0);
    iog_session_destroy(s);
    return T_PASS;
}

int main(void)
{
    int result = T_PASS;
    RUN(test_valid_spec_accepted, result);
    RUN(test_each_field_rejected, result);
    RUN(test_unused_direction_bs_ignored, result);
    RUN(test_reserved_engines_unsupported, result);
    RUN(test_job_index_in_message, result);
    RUN(test_null_engine_needs_no_filename, result);
    FINISH(result);
}
