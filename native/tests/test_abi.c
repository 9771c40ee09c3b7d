/*
 * test_abi.c - version queries and iog_describe_struct: every public struct
 * is described with its real sizeof, fields in order, non-overlapping and
 * inside the struct, each with its C type and array lengths, and unknown
 * names are rejected; iog_describe_constants
 * names each constant once, with the value this header gives it.
 */
#include <stddef.h>

#include "test_util.h"

static int check_struct(const char *name, uint32_t want_size, const char *first, const char *last)
{
    uint32_t size = 0;
    const struct iog_layout_field *f = NULL;
    int n = iog_describe_struct(name, &size, &f);
    CHECK(n > 0);
    CHECK_EQ_U64(size, want_size);
    CHECK(strcmp(f[0].name, first) == 0);
    uint32_t end = 0;
    for (int i = 0; i < n; i++) {
        CHECK(f[i].offset >= end);
        CHECK(f[i].size > 0);
        end = f[i].offset + f[i].size;
        CHECK(end <= size);
    }
    if (last)
        CHECK(strcmp(f[n - 1].name, last) == 0);
    else /* a struct that grows at its end: nothing past its last member but padding */
        CHECK(size - end < 8);
    return T_PASS;
}

static int test_versions(void)
{
    CHECK_EQ_U64(iog_abi_version(), IOG_ABI_VERSION);
    CHECK(iog_version() != NULL && strlen(iog_version()) > 0);
    return T_PASS;
}

static int test_describe_all(void)
{
    CHECK(check_struct("iog_job_spec", sizeof(struct iog_job_spec), "struct_size", NULL) == T_PASS);
    CHECK(check_struct("iog_dir_stats", sizeof(struct iog_dir_stats), "struct_size", "prio_clat") ==
          T_PASS);
    CHECK(check_struct("iog_bs_entry", sizeof(struct iog_bs_entry), "lo", "reserved0") == T_PASS);
    CHECK(check_struct("iog_zone", sizeof(struct iog_zone), "access", "size") == T_PASS);
    CHECK(check_struct("iog_cmdprio_entry", sizeof(struct iog_cmdprio_entry), "bs", "ioprio") ==
          T_PASS);
    CHECK(check_struct("iog_bs_count", sizeof(struct iog_bs_count), "bs", "ios") == T_PASS);
    CHECK(check_struct("iog_job_stats", sizeof(struct iog_job_stats), "struct_size", "ioprio") ==
          T_PASS);
    CHECK(check_struct("iog_lat_summary", sizeof(struct iog_lat_summary), "count", "stdev_ns") ==
          T_PASS);
    CHECK(check_struct("iog_interval", sizeof(struct iog_interval), "end_ns", "resp_p99_ns") ==
          T_PASS);
    CHECK(check_struct("iog_progress", sizeof(struct iog_progress), "struct_size", "trim_bytes") ==
          T_PASS);
    CHECK(check_struct("iog_verify_stats", sizeof(struct iog_verify_stats), "struct_size",
                       "state_reserved") == T_PASS);
    CHECK(check_struct("iog_state_check", sizeof(struct iog_state_check), "struct_size",
                       "read_errors") == T_PASS);
    CHECK(check_struct("iog_verify_failure", sizeof(struct iog_verify_failure), "kind",
                       "computed_checksum") == T_PASS);
    CHECK(check_struct("iog_fault", sizeof(struct iog_fault), "struct_size", "timeout_ns") ==
          T_PASS);
    return T_PASS;
}

static int test_array_members(void)
{
    const struct iog_layout_field *f;
    uint32_t size;
    int n = iog_describe_struct("iog_job_spec", &size, &f);
    int seen = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(f[i].name, "bs") == 0) {
            CHECK_EQ_U64(f[i].offset, offsetof(struct iog_job_spec, bs));
            CHECK_EQ_U64(f[i].size,
                         sizeof(struct iog_bs_entry) * IOG_DATA_DIRS * IOG_BS_ENTRIES_MAX);
            CHECK(strcmp(f[i].type, "struct iog_bs_entry") == 0);
            CHECK_EQ_U64(f[i].dims[0], IOG_DATA_DIRS);
            CHECK_EQ_U64(f[i].dims[1], IOG_BS_ENTRIES_MAX);
            seen++;
        }
        if (strcmp(f[i].name, "filename") == 0) {
            CHECK_EQ_U64(f[i].size, IOG_PATH_MAX);
            CHECK(strcmp(f[i].type, "char") == 0);
            CHECK_EQ_U64(f[i].dims[0], IOG_PATH_MAX);
            CHECK_EQ_U64(f[i].dims[1], 0);
            seen++;
        }
        if (strcmp(f[i].name, "seq_skip") == 0) {
            CHECK(strcmp(f[i].type, "int64_t") == 0);
            CHECK_EQ_U64(f[i].dims[0], 0);
            seen++;
        }
        if (strcmp(f[i].name, "dist_param") == 0) {
            CHECK(strcmp(f[i].type, "double") == 0);
            seen++;
        }
    }
    CHECK_EQ_U64(seen, 4);
    n = iog_describe_struct("iog_dir_stats", &size, &f);
    for (int i = 0; i < n; i++)
        if (strcmp(f[i].name, "lat") == 0)
            CHECK_EQ_U64(f[i].size, sizeof(struct iog_lat_summary) * IOG_LAT_COUNT);
    return T_PASS;
}

/* The value the library describes for `name`, or -1 (as *found 0) when it has none. */
static int64_t described(const struct iog_constant *c, int n, const char *name, int *found)
{
    *found = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(c[i].name, name) == 0) {
            *found += 1;
            return c[i].value;
        }
    }
    return -1;
}

static int test_constants(void)
{
    const struct iog_constant *c = NULL;
    CHECK(iog_describe_constants(NULL) == -EINVAL);
    int n = iog_describe_constants(&c);
    CHECK(n > 100 && c != NULL);
    for (int i = 0; i < n; i++) { /* every name once, all of them IOG_ */
        CHECK(strncmp(c[i].name, "IOG_", 4) == 0);
        for (int j = i + 1; j < n; j++)
            CHECK(strcmp(c[i].name, c[j].name) != 0);
    }
    int found;
    CHECK_EQ_U64(described(c, n, "IOG_ABI_VERSION", &found), IOG_ABI_VERSION);
    CHECK(found);
    CHECK_EQ_U64(described(c, n, "IOG_ABI_REVISION", &found), IOG_ABI_REVISION);
    CHECK(found);
    CHECK_EQ_U64(described(c, n, "IOG_FILES_MAX", &found), IOG_FILES_MAX);
    CHECK(found);
    CHECK_EQ_U64(described(c, n, "IOG_HIST_TOP_NS", &found), IOG_HIST_TOP_NS);
    CHECK(found);
    CHECK_EQ_U64(described(c, n, "IOG_JOB_ODSYNC", &found), IOG_JOB_ODSYNC);
    CHECK(found);
    CHECK_EQ_U64(described(c, n, "IOG_VERIFY_META", &found), IOG_VERIFY_META);
    CHECK(found);
    CHECK(described(c, n, "IOG_API", &found) == -1 && !found);
    return T_PASS;
}

static int test_unknown_struct(void)
{
    uint32_t size = 7;
    const struct iog_layout_field *f = NULL;
    CHECK(iog_describe_struct("iog_nothing", &size, &f) == -ENOENT);
    CHECK(iog_describe_struct(NULL, &size, &f) == -ENOENT);
    CHECK_EQ_U64(size, 7);
    return T_PASS;
}

int main(void)
{
    int result = T_PASS;
    RUN(test_versions, result);
    RUN(test_describe_all, result);
    RUN(test_array_members, result);
    RUN(test_unknown_struct, result);
    RUN(test_constants, result);
    FINISH(result);
}
