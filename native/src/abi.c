/*
 * abi.c - what the library promises about its public structs: version
 * queries, the layout description of every public struct (sizeof and each
 * member's name, offset, size, type and array lengths, so that bindings can
 * build their copy from it or check it at load time), the value of every
 * public constant (for the same check), both read from iogate.h at build time,
 * and the struct_size convention (a caller's struct may be smaller or larger
 * than the library's: abi.h).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "abi.h"
#include "iogate.h"

#ifndef IOGATE_VERSION
#define IOGATE_VERSION "0.1.0"
#endif

#define MEMBER_SIZE(t, m) sizeof(((struct t *)0)->m)
/* clang-format off */
#define FIELD(t, m, type, d0, d1) \
    {#m, (uint32_t)offsetof(struct t, m), (uint32_t)MEMBER_SIZE(t, m), type, {d0, d1}}
#define CONSTANT(n) {#n, (int64_t)(n)}
/* clang-format on */
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

struct struct_desc {
    const char *name;
    uint32_t size;
    const struct iog_layout_field *fields;
    uint32_t nfields;
};

/* structs[] and constants[]: every struct and constant of iogate.h, read from
 * it at build time (cmake/abi_tables.cmake). */
#include "abi_tables.inc"

/* The first version of a struct is never larger than the struct. */
_Static_assert(IOG_JOB_SPEC_SIZE_VER0 <= sizeof(struct iog_job_spec), "job spec VER0");
_Static_assert(IOG_DIR_STATS_SIZE_VER0 <= sizeof(struct iog_dir_stats), "dir stats VER0");
_Static_assert(IOG_JOB_STATS_SIZE_VER0 <= sizeof(struct iog_job_stats), "job stats VER0");
_Static_assert(IOG_VERIFY_STATS_SIZE_VER0 <= sizeof(struct iog_verify_stats), "verify VER0");
_Static_assert(IOG_FAULT_SIZE_VER0 <= sizeof(struct iog_fault), "fault VER0");
_Static_assert(IOG_PROGRESS_SIZE_VER0 <= sizeof(struct iog_progress), "progress VER0");
_Static_assert(IOG_ENGINE_INFO_SIZE_VER0 <= sizeof(struct iog_engine_info), "engine info VER0");
_Static_assert(IOG_DISK_SAMPLE_SIZE_VER0 <= sizeof(struct iog_disk_sample), "disk sample VER0");
_Static_assert(IOG_STATE_CHECK_SIZE_VER0 == sizeof(struct iog_state_check), "state check VER0");

int abi_copy_in(void *dst, size_t ksize, const void *user, size_t usize, size_t ver0, size_t *bad)
{
    if (usize < ver0)
        return -EINVAL;
    const unsigned char *u = user;
    for (size_t i = ksize; i < usize; i++) {
        if (u[i] != 0) {
            if (bad)
                *bad = i;
            return -E2BIG;
        }
    }
    size_t n = usize < ksize ? usize : ksize;
    memcpy(dst, user, n);
    memset((unsigned char *)dst + n, 0, ksize - n);
    return 0;
}

uint32_t abi_out_size(const void *user, size_t ver0)
{
    if (!user)
        return 0;
    uint32_t size;
    memcpy(&size, user, sizeof(size));
    return size < ver0 ? 0 : size;
}

void abi_copy_out(void *user, uint32_t usize, const void *src, size_t ksize)
{
    size_t n = usize < ksize ? usize : ksize;
    memcpy(user, src, n);
    if (usize > ksize)
        memset((unsigned char *)user + ksize, 0, usize - ksize);
    memcpy(user, &usize, sizeof(usize));
}

IOG_API uint32_t iog_abi_version(void)
{
    return IOG_ABI_VERSION;
}

IOG_API const char *iog_version(void)
{
    return IOGATE_VERSION;
}

IOG_API int iog_describe_constants(const struct iog_constant **out)
{
    if (!out)
        return -EINVAL;
    *out = constants;
    return (int)COUNT(constants);
}

IOG_API int iog_describe_struct(const char *name, uint32_t *size,
                                const struct iog_layout_field **fields)
{
    if (!name)
        return -ENOENT;
    for (size_t i = 0; i < COUNT(structs); i++) {
        if (strcmp(structs[i].name, name) != 0)
            continue;
        if (size)
            *size = structs[i].size;
        if (fields)
            *fields = structs[i].fields;
        return (int)structs[i].nfields;
    }
    return -ENOENT;
}
