/*
 * test_validate.c - iog_session_create rejects each invalid field with
 * -EINVAL and a message naming the job index and the field, and accepts
 * valid specs using every field.
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
    struct iog_job_spec j = t_spec("psync", IOG_RW_RANDREAD, 4096, 1 << 20);
    strcpy(j.filename, "/tmp/iogate-never-opened");
    return j;
}

/* Writes a list of n short file names into j.filename; returns n. */
static int many_files(struct iog_job_spec *j, int n)
{
    memset(j->filename, 0, sizeof(j->filename));
    size_t pos = 0;
    for (int i = 0; i < n; i++)
        pos += (size_t)snprintf(j->filename + pos, sizeof(j->filename) - pos, "/tmp/f%d", i) + 1;
    return n;
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
    REJECT(strcpy(j.engine, "spdk"), "engine 'spdk' is unknown; this library has io_uring");
    REJECT(memset(j.engine, 'x', sizeof(j.engine)), "engine is not NUL-terminated");
    REJECT(j.rw = IOG_RW_RANDTRIMWRITE + 1, "rw");
    REJECT(j.rwmixread = 101, "rwmixread");
    REJECT(j.nbs[0] = 0, "nbs[0]");
    REJECT(j.nbs[0] = IOG_BS_ENTRIES_MAX + 1, "nbs[0]");
    REJECT(j.bs[0][0].lo = 0, "bs[0][0].lo");
    REJECT(j.bs[0][0].hi = 2048, "bs[0][0].hi");
    REJECT(j.bs[0][0].hi = 6144, "bs[0][0].hi"); /* not a multiple of lo */
    REJECT((j.bs[0][0].lo = j.bs[0][0].hi = 2ull << 30), "bs[0][0].hi");
    REJECT(j.bs[0][0].weight = 999999, "bs[0] weights");
    REJECT(j.bs[0][0].reserved0 = 1, "bs[0][0].reserved0");
    REJECT((j.flags = IOG_JOB_DIRECT, j.bs[0][0].lo = j.bs[0][0].hi = 1000), "bs[0][0].lo");
    REJECT(j.blockalign[0] = 2u << 20, "blockalign[0]");
    REJECT((j.flags = IOG_JOB_DIRECT, j.blockalign[0] = 1000), "blockalign[0]");
    REJECT(j.rate_iops[1] = 100, "rate_iops[1]");   /* randread never writes */
    REJECT(j.rate_bytes[1] = 100, "rate_bytes[1]"); /* randread never writes */
    REJECT((j.rw = IOG_RW_RANDRW, j.rate_iops[0] = 100), "mixed job");
    REJECT(j.rate_process = 2, "rate_process");
    REJECT(j.dist = 6, "dist");
    REJECT(j.dist = IOG_DIST_SEQUENCE, "nsequence");
    REJECT(j.nsequence = 1, "for dist SEQUENCE only");
    REJECT((j.dist = IOG_DIST_ZIPF, j.dist_param = 1.0), "zipf");
    REJECT((j.dist = IOG_DIST_ZIPF, j.dist_param = 0.0), "zipf");
    REJECT((j.dist = IOG_DIST_PARETO, j.dist_param = 1.0), "pareto");
    REJECT((j.dist = IOG_DIST_NORMAL, j.dist_param = -1.0), "normal");
    REJECT((j.dist = IOG_DIST_ZONED, j.nzones = 0), "nzones");
    REJECT((j.dist = IOG_DIST_ZONED, j.nzones = 2, j.zones[0] = (struct iog_zone){600000, 500000},
            j.zones[1] = (struct iog_zone){300000, 500000}),
           "zones");
    REJECT(j.reserved1 = 1, "reserved1");
    REJECT(j.sync_kind = 3, "sync_kind");
    REJECT(j.sync_every = 4, "sync_every");
    REJECT(j.compress_pct = 101, "compress_pct");
    REJECT(j.dedupe_pct = 101, "dedupe_pct");
    REJECT(j.pattern_len = IOG_PATTERN_MAX + 1, "pattern_len");
    REJECT((j.flags = IOG_JOB_ZERO_BUFS, j.compress_pct = 50), "zero buffers");
    REJECT((j.flags = IOG_JOB_ZERO_BUFS, j.dedupe_pct = 10), "zero buffers");
    REJECT(j.iodepth = 0, "iodepth");
    REJECT(j.iodepth = 2, "iodepth"); /* psync must be 1 */
    REJECT((strcpy(j.engine, "sync"), j.iodepth = 2), "iodepth");
    REJECT(j.numjobs = 0, "numjobs");
    REJECT(j.numjobs = 100000, "numjobs");
    REJECT(j.size = 0, "size");
    REJECT(j.size = 1024, "size"); /* smaller than bs */
    REJECT(j.offset = UINT64_MAX - 10, "offset");
    REJECT((j.flags = IOG_JOB_DIRECT, j.offset = 100), "offset");
    REJECT((j.flags = IOG_JOB_TIME_BASED, j.runtime_ns = 0), "runtime_ns");
    REJECT(j.interval_ns = 5, "interval_ns");
    REJECT(j.flags = 1u << 31, "flags");
    REJECT(j.reserved0 = 1, "reserved0");
    REJECT(j.flags = IOG_JOB_FILL, "IOG_JOB_FILL"); /* base spec reads */
    REJECT((j.rw = IOG_RW_WRITE, j.flags = IOG_JOB_FILL | IOG_JOB_TIME_BASED,
            j.runtime_ns = 1000000000),
           "IOG_JOB_FILL");
    REJECT((j.rw = IOG_RW_WRITE, j.flags = IOG_JOB_FILL, j.ramp_ns = 1000), "IOG_JOB_FILL");
    REJECT(j.filename[0] = '\0', "filename");
    REJECT(memset(j.filename, 'a', sizeof(j.filename)), "filename");
    /* a list must end with an empty name inside the buffer */
    REJECT((memset(j.filename, 'a', sizeof(j.filename)), j.filename[10] = '\0'), "filename");
    REJECT(many_files(&j, IOG_FILES_MAX + 1), "filename");
    REJECT((many_files(&j, 4), j.size = 8192), "size"); /* 2 KiB per file < bs */
    return T_PASS;
}

static int test_new_fields_accepted(void)
{
    struct iog_job_spec j = base_spec();
    j.rw = IOG_RW_RANDRW;
    j.nbs[0] = 2;
    j.bs[0][0] = (struct iog_bs_entry){.lo = 512, .hi = 4096, .weight = 400000};
    j.bs[0][1] = (struct iog_bs_entry){.lo = 16384, .hi = 16384, .weight = 600000};
    j.rate_iops[0] = 700;
    j.rate_iops[1] = 300;
    j.rate_process = IOG_RATE_POISSON;
    j.dist = IOG_DIST_ZONED;
    j.nzones = 2;
    j.zones[0] = (struct iog_zone){800000, 200000};
    j.zones[1] = (struct iog_zone){200000, 800000};
    j.sync_kind = IOG_SYNC_FDATASYNC;
    j.sync_every = 8;
    j.compress_pct = 50;
    j.pattern_len = 4;
    j.flags = IOG_JOB_REFILL | IOG_JOB_INVALIDATE;
    CHECK(many_files(&j, IOG_FILES_MAX) == IOG_FILES_MAX);
    iog_session *s = NULL;
    char err[IOG_ERR_MAX] = "";
    int rc = iog_session_create(&j, 1, &s, err, sizeof(err));
    if (rc != 0)
        fprintf(stderr, "%s\n", err);
    CHECK(rc == 0);
    iog_session_destroy(s);
    return T_PASS;
}

static int test_unused_direction_bs_ignored(void)
{
    struct iog_job_spec j = base_spec();
    j.nbs[IOG_DIR_WRITE] = 0; /* randread never writes */
    iog_session *s = NULL;
    CHECK(iog_session_create(&j, 1, &s, NULL, 0) == 0);
    iog_session_destroy(s);
    j.rw = IOG_RW_RANDRW;
    CHECK(expect_reject(&j, 1, -EINVAL, "nbs[1]") == T_PASS);
    return T_PASS;
}

static int test_all_engines_known(void)
{
    struct iog_job_spec j = base_spec();
    int n = iog_engine_count();
    CHECK(n >= 5);
    for (uint32_t e = 0; e < (uint32_t)n; e++) {
        struct iog_engine_info info = {.struct_size = sizeof(info)};
        CHECK(iog_engine_describe(e, &info) == 0);
        strcpy(j.engine, info.name);
        j.flags = 0;
        j.iodepth = 1;
        iog_session *s = NULL;
        CHECK(iog_session_create(&j, 1, &s, NULL, 0) == 0);
        iog_session_destroy(s);
    }
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

/* io_uring's fast paths: only for an engine that takes them, each with what it needs. */
static int test_ring_flags(void)
{
    struct iog_job_spec base = base_spec(); /* psync */
    REJECT(j.flags |= IOG_JOB_RING_FIXEDBUFS, "the psync engine takes none of them");
    REJECT(j.flags |= IOG_JOB_RING_NO_REGFILES, "the psync engine takes none of them");
    REJECT(j.sqpoll_cpu = 1, "sqpoll_cpu needs flag RING_SQPOLL_CPU");
    REJECT(j.ring_reserved = 1, "ring_reserved");
    strcpy(base.engine, "io_uring");
    base.iodepth = 8;
    REJECT(j.flags |= IOG_JOB_RING_SQPOLL_CPU, "RING_SQPOLL_CPU needs RING_SQPOLL");
    REJECT(j.flags |= IOG_JOB_RING_HIPRI, "set direct");
    REJECT((j.flags |= IOG_JOB_RING_SQPOLL | IOG_JOB_RING_SQPOLL_CPU, j.sqpoll_cpu = IOG_CPUS_MAX),
           "sqpoll_cpu (sqthread_poll_cpu) names CPU");
    struct iog_job_spec j = base;
    j.flags |= IOG_JOB_RING_FIXEDBUFS | IOG_JOB_RING_NO_REGFILES | IOG_JOB_RING_SQPOLL;
    iog_session *s = NULL;
    CHECK(iog_session_create(&j, 1, &s, NULL, 0) == 0);
    iog_session_destroy(s);
    return T_PASS;
}

/* NUMA placement: the fields' own rules, and a node the machine lacks (63 here). */
static int test_numa_fields(void)
{
    struct iog_job_spec base = base_spec();
    REJECT(j.numa_reserved = 1, "numa_reserved");
    REJECT(j.numa_mem_mode = IOG_NUMA_MEM_INTERLEAVE + 1, "numa_mem_mode 6 is unknown");
    REJECT((j.numa_mem_mode = IOG_NUMA_MEM_PREFER, j.numa_mem_nodes = 3), "prefer takes one node");
    REJECT(j.numa_mem_mode = IOG_NUMA_MEM_BIND, "bind and interleave one or more");
    REJECT((j.numa_mem_mode = IOG_NUMA_MEM_LOCAL, j.numa_mem_nodes = 1), "the other modes none");
    REJECT((j.numa_cpu_nodes = 1, j.cpus[0] = 1), "numa_cpu_nodes and cpus exclude each other");
    char err[IOG_ERR_MAX] = "";
    iog_session *s = NULL;
    struct iog_job_spec j = base;
    j.numa_cpu_nodes = 1ull << 63;
    int rc = iog_session_create(&j, 1, &s, err, sizeof(err));
    /* without libnuma or NUMA: refused as such; else node 63 is not on this machine */
    CHECK(rc == -EOPNOTSUPP || (rc == -EINVAL && strstr(err, "NUMA node 63 is not on this")));
    CHECK(s == NULL);
    return T_PASS;
}

static int test_null_engine_needs_no_filename(void)
{
    struct iog_job_spec j = t_spec("null", IOG_RW_READ, 4096, 4096);
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
    RUN(test_all_engines_known, result);
    RUN(test_new_fields_accepted, result);
    RUN(test_job_index_in_message, result);
    RUN(test_null_engine_needs_no_filename, result);
    RUN(test_ring_flags, result);
    RUN(test_numa_fields, result);
    FINISH(result);
}
