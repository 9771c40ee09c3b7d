/*
 * test_struct_size.c - the struct_size convention (top of iogate.h). The
 * copy helpers of abi.c on a struct with two versions (compiled in: the
 * public structs are all at their first version yet), then every entry point
 * through the public API: larger structs from a newer caller (a zero tail is
 * accepted, a non-zero one refused with -E2BIG), sizes below the first
 * version refused, an array of specs read with the caller's stride, and
 * output structs written up to the caller's size with the tail zeroed.
 */
#include <stddef.h>

#include "abi.h"
#include "test_util.h"

/* A struct at version 1 (v1) and the library's version 2 (v2: one field
 * appended). */
struct v1 {
    uint32_t struct_size;
    uint32_t a;
    uint64_t b;
};
struct v2 {
    uint32_t struct_size;
    uint32_t a;
    uint64_t b;
    uint64_t c; /* since version 2 */
};
#define V2_VER0 sizeof(struct v1)

static int test_copy_in_smaller_is_zero_filled(void)
{
    struct v1 old = {.struct_size = sizeof(old), .a = 1, .b = 2};
    struct v2 lib;
    memset(&lib, 0xAA, sizeof(lib));
    CHECK(abi_copy_in(&lib, sizeof(lib), &old, sizeof(old), V2_VER0, NULL) == 0);
    CHECK(lib.a == 1 && lib.b == 2 && lib.c == 0);
    return T_PASS;
}

static int test_copy_in_larger_with_zero_tail(void)
{
    struct {
        struct v2 v;
        uint64_t d, e;
    } newer = {.v = {.struct_size = sizeof(newer), .a = 1, .b = 2, .c = 3}};
    struct v2 lib;
    CHECK(abi_copy_in(&lib, sizeof(lib), &newer, sizeof(newer), V2_VER0, NULL) == 0);
    CHECK(lib.a == 1 && lib.b == 2 && lib.c == 3);
    return T_PASS;
}

static int test_copy_in_larger_with_nonzero_tail(void)
{
    struct {
        struct v2 v;
        uint64_t d, e;
    } newer = {.v = {.struct_size = sizeof(newer)}, .e = 1};
    struct v2 lib;
    size_t bad = 0;
    CHECK(abi_copy_in(&lib, sizeof(lib), &newer, sizeof(newer), V2_VER0, &bad) == -E2BIG);
    CHECK_EQ_U64(bad, offsetof(__typeof__(newer), e));
    return T_PASS;
}

static int test_copy_in_below_first_version(void)
{
    struct v2 lib, user = {0};
    CHECK(abi_copy_in(&lib, sizeof(lib), &user, V2_VER0 - 1, V2_VER0, NULL) == -EINVAL);
    CHECK(abi_copy_in(&lib, sizeof(lib), &user, 0, V2_VER0, NULL) == -EINVAL);
    return T_PASS;
}

static int test_copy_out_prefix_only(void)
{
    struct {
        struct v1 v;
        uint64_t guard; /* past the caller's struct: never written */
    } old;
    memset(&old, 0x55, sizeof(old));
    old.v.struct_size = sizeof(old.v);
    uint32_t size = abi_out_size(&old, V2_VER0);
    CHECK_EQ_U64(size, sizeof(struct v1));
    struct v2 lib = {.struct_size = sizeof(lib), .a = 1, .b = 2, .c = 3};
    abi_copy_out(&old, size, &lib, sizeof(lib));
    CHECK(old.v.struct_size == sizeof(struct v1) && old.v.a == 1 && old.v.b == 2);
    CHECK(old.guard == 0x5555555555555555ull);
    return T_PASS;
}

static int test_copy_out_larger_tail_zeroed(void)
{
    struct {
        struct v2 v;
        uint64_t d;
    } newer;
    memset(&newer, 0x55, sizeof(newer));
    newer.v.struct_size = sizeof(newer);
    uint32_t size = abi_out_size(&newer, V2_VER0);
    struct v2 lib = {.struct_size = sizeof(lib), .a = 1, .b = 2, .c = 3};
    abi_copy_out(&newer, size, &lib, sizeof(lib));
    CHECK(newer.v.struct_size == sizeof(newer) && newer.v.c == 3 && newer.d == 0);
    uint32_t small = V2_VER0 - 1;
    CHECK(abi_out_size(&small, V2_VER0) == 0);
    CHECK(abi_out_size(NULL, V2_VER0) == 0);
    return T_PASS;
}

/* ---- the public API ---- */

/* A job spec of a newer caller: the library's struct and 64 bytes more. */
struct newer_spec {
    struct iog_job_spec spec;
    uint64_t later[8];
};

static struct newer_spec newer_null_spec(void)
{
    struct newer_spec n;
    memset(&n, 0, sizeof(n));
    n.spec = t_spec("null", IOG_RW_READ, 4096, 4096 * 16);
    n.spec.struct_size = sizeof(n);
    return n;
}

static int test_session_create_newer_caller(void)
{
    /* two specs: the library must step through the array by their size */
    struct newer_spec jobs[2] = {newer_null_spec(), newer_null_spec()};
    jobs[1].spec.rw = IOG_RW_WRITE;
    iog_session *s = NULL;
    char err[IOG_ERR_MAX] = "";
    CHECK(iog_session_create(&jobs[0].spec, 2, &s, err, sizeof(err)) == 0);
    CHECK(iog_session_start(s, err, sizeof(err)) == 0);
    CHECK(iog_session_wait(s, 60ull * 1000000000ull) == 0);
    struct iog_dir_stats st;
    CHECK(t_stats(s, 1, IOG_DIR_WRITE, &st) == 0);
    CHECK_EQ_U64(st.ios, 16);
    iog_session_destroy(s);

    jobs[1].later[5] = 7; /* a field this library does not have */
    s = NULL;
    CHECK(iog_session_create(&jobs[0].spec, 2, &s, err, sizeof(err)) == -E2BIG);
    CHECK(s == NULL);
    CHECK(strstr(err, "job 1: struct_size") != NULL);
    CHECK(strstr(err, "is not 0") != NULL);

    jobs[1] = newer_null_spec();
    jobs[1].spec.struct_size = sizeof(struct iog_job_spec);
    CHECK(iog_session_create(&jobs[0].spec, 2, &s, err, sizeof(err)) == -EINVAL);
    CHECK(strstr(err, "job 1: struct_size") != NULL);

    jobs[0].spec.struct_size = IOG_JOB_SPEC_SIZE_VER0 - 8;
    CHECK(iog_session_create(&jobs[0].spec, 1, &s, err, sizeof(err)) == -EINVAL);
    CHECK(strstr(err, "expected at least") != NULL);
    return T_PASS;
}

static int test_outputs_of_a_newer_caller(void)
{
    struct iog_job_spec j = t_spec("null", IOG_RW_READ, 4096, 4096 * 16);
    iog_session *s = NULL;
    CHECK(t_run(&j, 1, &s) == 0);
    struct {
        struct iog_dir_stats st;
        uint64_t later[4];
    } d;
    memset(&d, 0xEE, sizeof(d));
    d.st.struct_size = sizeof(d);
    CHECK(iog_session_dir_stats(s, 0, IOG_DIR_READ, &d.st) == 0);
    CHECK(d.st.struct_size == sizeof(d) && d.st.ios == 16);
    for (int i = 0; i < 4; i++)
        CHECK(d.later[i] == 0);
    struct {
        struct iog_progress p;
        uint64_t later;
    } p = {.p = {.struct_size = sizeof(p)}, .later = 1};
    CHECK(iog_session_poll(s, &p.p) == 0);
    CHECK(p.p.jobs == 1 && p.later == 0);
    struct {
        struct iog_job_stats js;
        uint64_t later;
    } js = {.js = {.struct_size = sizeof(js)}, .later = 1};
    CHECK(iog_session_job_stats(s, 0, &js.js) == 0);
    CHECK(js.js.nfiles == 1 && js.later == 0);
    struct {
        struct iog_verify_stats v;
        uint64_t later;
    } v = {.v = {.struct_size = sizeof(v)}, .later = 1};
    CHECK(iog_session_verify(s, 0, &v.v, NULL, 0) == 0);
    CHECK(v.later == 0 && v.v.generation != 0);
    struct {
        struct iog_fault f;
        uint64_t later;
    } f = {.f = {.struct_size = sizeof(f)}, .later = 1};
    CHECK(iog_session_fault(s, &f.f) == 0); /* no fault: nothing written */
    /* below the first version: refused */
    struct iog_dir_stats small = {.struct_size = IOG_DIR_STATS_SIZE_VER0 - 8};
    CHECK(iog_session_dir_stats(s, 0, IOG_DIR_READ, &small) == -EINVAL);
    struct iog_progress psmall = {.struct_size = 8};
    CHECK(iog_session_poll(s, &psmall) == -EINVAL);
    struct iog_fault fsmall = {.struct_size = 4};
    CHECK(iog_session_fault(s, &fsmall) == -EINVAL);
    iog_session_destroy(s);
    return T_PASS;
}

static int test_engine_info(void)
{
    int n = iog_engine_count();
    CHECK(n >= 5);
    struct {
        struct iog_engine_info e;
        uint64_t later;
    } info = {.e = {.struct_size = sizeof(info)}, .later = 1};
    /* these four in this order (others may come between), null last */
    const char *expect[] = {"io_uring", "libaio", "psync", "sync"};
    int seen = 0;
    for (int i = 0; i < n; i++) {
        CHECK(iog_engine_describe((uint32_t)i, &info.e) == 0);
        CHECK(info.e.name[0] != '\0' && info.e.summary[0] != '\0' && info.later == 0);
        CHECK(info.e.max_depth >= 1);
        if (seen < 4 && strcmp(info.e.name, expect[seen]) == 0) {
            CHECK(info.e.flags & IOG_ENGINE_DOES_IO);
            CHECK_EQ_U64(info.e.max_depth, seen < 2 ? 4096 : 1);
            seen++;
        }
    }
    CHECK_EQ_U64(seen, 4);
    CHECK(iog_engine_describe((uint32_t)n - 1, &info.e) == 0);
    CHECK(strcmp(info.e.name, "null") == 0 && !(info.e.flags & IOG_ENGINE_DOES_IO));
    CHECK(iog_engine_describe((uint32_t)n, &info.e) == -ENOENT);
    info.e.struct_size = IOG_ENGINE_INFO_SIZE_VER0 - 1;
    CHECK(iog_engine_describe(0, &info.e) == -EINVAL);
    CHECK(iog_engine_describe(0, NULL) == -EINVAL);
    return T_PASS;
}

int main(void)
{
    int result = T_PASS;
    RUN(test_copy_in_smaller_is_zero_filled, result);
    RUN(test_copy_in_larger_with_zero_tail, result);
    RUN(test_copy_in_larger_with_nonzero_tail, result);
    RUN(test_copy_in_below_first_version, result);
    RUN(test_copy_out_prefix_only, result);
    RUN(test_copy_out_larger_tail_zeroed, result);
    RUN(test_session_create_newer_caller, result);
    RUN(test_outputs_of_a_newer_caller, result);
    RUN(test_engine_info, result);
    FINISH(result);
}
