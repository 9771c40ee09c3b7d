/*
 * abi.c - what the library promises about its public structs: version
 * queries, the layout description of every public struct (sizeof and each
 * member's name, offset and size, so that bindings can check at load time
 * that they agree with the library), the value of every public constant (for
 * the same check), and the struct_size convention (a caller's struct may be
 * smaller or larger than the library's: abi.h).
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
#define FIELD(t, m) {#m, (uint32_t)offsetof(struct t, m), (uint32_t)MEMBER_SIZE(t, m)}
/* clang-format on */

static const struct iog_layout_field job_spec_fields[] = {
    FIELD(iog_job_spec, struct_size),
    FIELD(iog_job_spec, engine),
    FIELD(iog_job_spec, rw),
    FIELD(iog_job_spec, rwmixread),
    FIELD(iog_job_spec, nbs),
    FIELD(iog_job_spec, bs),
    FIELD(iog_job_spec, blockalign),
    FIELD(iog_job_spec, iodepth),
    FIELD(iog_job_spec, numjobs),
    FIELD(iog_job_spec, size),
    FIELD(iog_job_spec, offset),
    FIELD(iog_job_spec, runtime_ns),
    FIELD(iog_job_spec, ramp_ns),
    FIELD(iog_job_spec, interval_ns),
    FIELD(iog_job_spec, seed),
    FIELD(iog_job_spec, flags),
    FIELD(iog_job_spec, reserved0),
    FIELD(iog_job_spec, rate_iops),
    FIELD(iog_job_spec, rate_bytes),
    FIELD(iog_job_spec, rate_process),
    FIELD(iog_job_spec, dist),
    FIELD(iog_job_spec, dist_param),
    FIELD(iog_job_spec, nzones),
    FIELD(iog_job_spec, reserved1),
    FIELD(iog_job_spec, zones),
    FIELD(iog_job_spec, thinktime_ns),
    FIELD(iog_job_spec, thinktime_blocks),
    FIELD(iog_job_spec, sync_kind),
    FIELD(iog_job_spec, sync_every),
    FIELD(iog_job_spec, compress_pct),
    FIELD(iog_job_spec, compress_chunk),
    FIELD(iog_job_spec, dedupe_pct),
    FIELD(iog_job_spec, pattern_len),
    FIELD(iog_job_spec, pattern),
    FIELD(iog_job_spec, verify),
    FIELD(iog_job_spec, verify_backlog),
    FIELD(iog_job_spec, io_timeout_ns),
    FIELD(iog_job_spec, file_ids),
    FIELD(iog_job_spec, filename),
    FIELD(iog_job_spec, io_limit_bytes),
    FIELD(iog_job_spec, io_limit_ios),
    FIELD(iog_job_spec, seq_skip),
    FIELD(iog_job_spec, start_delay_ns),
    FIELD(iog_job_spec, flow_id),
    FIELD(iog_job_spec, flow_weight),
    FIELD(iog_job_spec, flow_sleep_ns),
    /* submission batching */
    FIELD(iog_job_spec, batch_submit),
    FIELD(iog_job_spec, batch_complete_min),
    FIELD(iog_job_spec, batch_complete_max),
    FIELD(iog_job_spec, depth_low),
    FIELD(iog_job_spec, exit_mask),
    FIELD(iog_job_spec, ioprio),
    FIELD(iog_job_spec, ncmdprio),
    FIELD(iog_job_spec, cmdprio_reserved),
    FIELD(iog_job_spec, cmdprio),
    FIELD(iog_job_spec, verify_state_id),
    FIELD(iog_job_spec, verify_state),
    FIELD(iog_job_spec, nsequence),
    FIELD(iog_job_spec, sequence_stride),
    FIELD(iog_job_spec, sequence),
};

static const struct iog_layout_field cmdprio_entry_fields[] = {
    FIELD(iog_cmdprio_entry, bs),
    FIELD(iog_cmdprio_entry, share),
    FIELD(iog_cmdprio_entry, ioprio),
};

static const struct iog_layout_field bs_entry_fields[] = {
    FIELD(iog_bs_entry, lo),
    FIELD(iog_bs_entry, hi),
    FIELD(iog_bs_entry, weight),
    FIELD(iog_bs_entry, reserved0),
};

static const struct iog_layout_field zone_fields[] = {
    FIELD(iog_zone, access),
    FIELD(iog_zone, size),
};

static const struct iog_layout_field file_id_fields[] = {
    FIELD(iog_file_id, dev),
    FIELD(iog_file_id, ino),
};

static const struct iog_layout_field lat_summary_fields[] = {
    FIELD(iog_lat_summary, count),    FIELD(iog_lat_summary, min_ns),
    FIELD(iog_lat_summary, max_ns),   FIELD(iog_lat_summary, mean_ns),
    FIELD(iog_lat_summary, stdev_ns),
};

static const struct iog_layout_field dir_stats_fields[] = {
    FIELD(iog_dir_stats, struct_size),
    FIELD(iog_dir_stats, dir),
    FIELD(iog_dir_stats, ios),
    FIELD(iog_dir_stats, bytes),
    FIELD(iog_dir_stats, runtime_ns),
    FIELD(iog_dir_stats, iops),
    FIELD(iog_dir_stats, bw_bytes),
    FIELD(iog_dir_stats, lat),
    FIELD(iog_dir_stats, errors),
    FIELD(iog_dir_stats, first_errno),
    FIELD(iog_dir_stats, reserved0),
    FIELD(iog_dir_stats, first_error_offset),
    FIELD(iog_dir_stats, qd_sum),
    FIELD(iog_dir_stats, qd_samples),
    FIELD(iog_dir_stats, qd_hist),
    FIELD(iog_dir_stats, bs_other_ios),
    FIELD(iog_dir_stats, first_error_ns),
    FIELD(iog_dir_stats, prio_ios),
    FIELD(iog_dir_stats, prio_clat),
};

static const struct iog_layout_field bs_count_fields[] = {
    FIELD(iog_bs_count, bs),
    FIELD(iog_bs_count, ios),
};

static const struct iog_layout_field job_stats_fields[] = {
    FIELD(iog_job_stats, struct_size),
    FIELD(iog_job_stats, nfiles),
    FIELD(iog_job_stats, coverage_chunk),
    FIELD(iog_job_stats, coverage_total),
    FIELD(iog_job_stats, coverage_touched),
    FIELD(iog_job_stats, data_sampled_bytes),
    FIELD(iog_job_stats, data_compressed_bytes),
    FIELD(iog_job_stats, data_blocks),
    FIELD(iog_job_stats, data_duplicate_blocks),
    FIELD(iog_job_stats, data_samples_skipped),
    FIELD(iog_job_stats, submits),
    FIELD(iog_job_stats, reaps),
    FIELD(iog_job_stats, ioprio),
};

static const struct iog_layout_field interval_fields[] = {
    FIELD(iog_interval, end_ns),      FIELD(iog_interval, ios),
    FIELD(iog_interval, bytes),       FIELD(iog_interval, iops),
    FIELD(iog_interval, bw_bytes),    FIELD(iog_interval, clat_mean_ns),
    FIELD(iog_interval, clat_p99_ns), FIELD(iog_interval, lat_mean_ns),
    FIELD(iog_interval, lat_p99_ns),  FIELD(iog_interval, resp_mean_ns),
    FIELD(iog_interval, resp_p99_ns),
};

static const struct iog_layout_field verify_stats_fields[] = {
    FIELD(iog_verify_stats, struct_size),    FIELD(iog_verify_stats, nrecords),
    FIELD(iog_verify_stats, generation),     FIELD(iog_verify_stats, blocks_written),
    FIELD(iog_verify_stats, blocks_checked), FIELD(iog_verify_stats, failures),
    FIELD(iog_verify_stats, by_kind),        FIELD(iog_verify_stats, elapsed_ns),
    FIELD(iog_verify_stats, state_records),  FIELD(iog_verify_stats, state_error),
    FIELD(iog_verify_stats, state_reserved),
};

static const struct iog_layout_field state_check_fields[] = {
    FIELD(iog_state_check, struct_size),
    FIELD(iog_state_check, nrecords),
    FIELD(iog_state_check, generation),
    FIELD(iog_state_check, job),
    FIELD(iog_state_check, verify),
    FIELD(iog_state_check, block_size),
    FIELD(iog_state_check, region_start),
    FIELD(iog_state_check, file_blocks),
    FIELD(iog_state_check, nfiles),
    FIELD(iog_state_check, complete),
    FIELD(iog_state_check, writes),
    FIELD(iog_state_check, syncs),
    FIELD(iog_state_check, ignored_bytes),
    FIELD(iog_state_check, blocks),
    FIELD(iog_state_check, intact),
    FIELD(iog_state_check, not_durable),
    FIELD(iog_state_check, not_durable_new),
    FIELD(iog_state_check, lost),
    FIELD(iog_state_check, torn),
    FIELD(iog_state_check, misdirected),
    FIELD(iog_state_check, read_errors),
};

static const struct iog_layout_field verify_failure_fields[] = {
    FIELD(iog_verify_failure, kind),
    FIELD(iog_verify_failure, file),
    FIELD(iog_verify_failure, offset),
    FIELD(iog_verify_failure, len),
    FIELD(iog_verify_failure, expected_generation),
    FIELD(iog_verify_failure, expected_seq),
    FIELD(iog_verify_failure, found_generation),
    FIELD(iog_verify_failure, found_seq),
    FIELD(iog_verify_failure, found_offset),
    FIELD(iog_verify_failure, found_file),
    FIELD(iog_verify_failure, error),
    FIELD(iog_verify_failure, stored_checksum),
    FIELD(iog_verify_failure, computed_checksum),
};

static const struct iog_layout_field fault_fields[] = {
    FIELD(iog_fault, struct_size), FIELD(iog_fault, kind), FIELD(iog_fault, job),
    FIELD(iog_fault, thread),      FIELD(iog_fault, dir),  FIELD(iog_fault, file),
    FIELD(iog_fault, offset),      FIELD(iog_fault, len),  FIELD(iog_fault, outstanding_ns),
    FIELD(iog_fault, timeout_ns),
};

static const struct iog_layout_field engine_info_fields[] = {
    FIELD(iog_engine_info, struct_size), FIELD(iog_engine_info, max_depth),
    FIELD(iog_engine_info, flags),       FIELD(iog_engine_info, reserved0),
    FIELD(iog_engine_info, name),        FIELD(iog_engine_info, summary),
};

static const struct iog_layout_field progress_fields[] = {
    FIELD(iog_progress, struct_size),  FIELD(iog_progress, state),
    FIELD(iog_progress, elapsed_ns),   FIELD(iog_progress, counted_ns),
    FIELD(iog_progress, expected_ns),  FIELD(iog_progress, ios),
    FIELD(iog_progress, bytes),        FIELD(iog_progress, errors),
    FIELD(iog_progress, jobs_done),    FIELD(iog_progress, jobs),
    FIELD(iog_progress, layout_bytes), FIELD(iog_progress, layout_total),
    FIELD(iog_progress, trim_ios),     FIELD(iog_progress, trim_bytes),
};

static const struct iog_layout_field disk_sample_fields[] = {
    FIELD(iog_disk_sample, struct_size),
    FIELD(iog_disk_sample, ncounters),
    FIELD(iog_disk_sample, end_ns),
    FIELD(iog_disk_sample, counters),
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const struct struct_desc {
    const char *name;
    uint32_t size;
    const struct iog_layout_field *fields;
    uint32_t nfields;
} structs[] = {
    {"iog_job_spec", sizeof(struct iog_job_spec), job_spec_fields, COUNT(job_spec_fields)},
    {"iog_bs_entry", sizeof(struct iog_bs_entry), bs_entry_fields, COUNT(bs_entry_fields)},
    {"iog_zone", sizeof(struct iog_zone), zone_fields, COUNT(zone_fields)},
    {"iog_cmdprio_entry", sizeof(struct iog_cmdprio_entry), cmdprio_entry_fields,
     COUNT(cmdprio_entry_fields)},
    {"iog_file_id", sizeof(struct iog_file_id), file_id_fields, COUNT(file_id_fields)},
    {"iog_dir_stats", sizeof(struct iog_dir_stats), dir_stats_fields, COUNT(dir_stats_fields)},
    {"iog_bs_count", sizeof(struct iog_bs_count), bs_count_fields, COUNT(bs_count_fields)},
    {"iog_job_stats", sizeof(struct iog_job_stats), job_stats_fields, COUNT(job_stats_fields)},
    {"iog_lat_summary", sizeof(struct iog_lat_summary), lat_summary_fields,
     COUNT(lat_summary_fields)},
    {"iog_interval", sizeof(struct iog_interval), interval_fields, COUNT(interval_fields)},
    {"iog_progress", sizeof(struct iog_progress), progress_fields, COUNT(progress_fields)},
    {"iog_verify_stats", sizeof(struct iog_verify_stats), verify_stats_fields,
     COUNT(verify_stats_fields)},
    {"iog_verify_failure", sizeof(struct iog_verify_failure), verify_failure_fields,
     COUNT(verify_failure_fields)},
    {"iog_fault", sizeof(struct iog_fault), fault_fields, COUNT(fault_fields)},
    {"iog_engine_info", sizeof(struct iog_engine_info), engine_info_fields,
     COUNT(engine_info_fields)},
    {"iog_disk_sample", sizeof(struct iog_disk_sample), disk_sample_fields,
     COUNT(disk_sample_fields)},
    {"iog_state_check", sizeof(struct iog_state_check), state_check_fields,
     COUNT(state_check_fields)},
};

/* Every constant of iogate.h: each #define IOG_* that is a number, each enum value. */
/* clang-format off */
#define CONSTANT(n) {#n, (int64_t)(n)}
/* clang-format on */

static const struct iog_constant constants[] = {
    CONSTANT(IOG_ABI_VERSION),
    CONSTANT(IOG_ABI_REVISION),
    CONSTANT(IOG_JOB_SPEC_SIZE_VER0),
    CONSTANT(IOG_DIR_STATS_SIZE_VER0),
    CONSTANT(IOG_JOB_STATS_SIZE_VER0),
    CONSTANT(IOG_VERIFY_STATS_SIZE_VER0),
    CONSTANT(IOG_FAULT_SIZE_VER0),
    CONSTANT(IOG_PROGRESS_SIZE_VER0),
    CONSTANT(IOG_ENGINE_INFO_SIZE_VER0),
    CONSTANT(IOG_DISK_SAMPLE_SIZE_VER0),
    CONSTANT(IOG_STATE_CHECK_SIZE_VER0),
    CONSTANT(IOG_HIST_SUB_BITS),
    CONSTANT(IOG_HIST_SUB_BUCKETS),
    CONSTANT(IOG_HIST_LINEAR),
    CONSTANT(IOG_HIST_TOP_BITS),
    CONSTANT(IOG_HIST_TOP_NS),
    CONSTANT(IOG_HIST_BUCKETS),
    CONSTANT(IOG_PATH_MAX),
    CONSTANT(IOG_ERR_MAX),
    CONSTANT(IOG_DATA_DIRS),
    CONSTANT(IOG_BS_ENTRIES_MAX),
    CONSTANT(IOG_BS_TABLE_MAX),
    CONSTANT(IOG_ZONES_MAX),
    CONSTANT(IOG_SEQUENCE_MAX),
    CONSTANT(IOG_PATTERN_MAX),
    CONSTANT(IOG_FILES_MAX),
    CONSTANT(IOG_QD_BUCKETS),
    CONSTANT(IOG_WEIGHT_TOTAL),
    CONSTANT(IOG_VERIFY_HEADER),
    CONSTANT(IOG_VERIFY_RECORDS),
    CONSTANT(IOG_CMDPRIO_MAX),
    CONSTANT(IOG_ENGINE_NAME_MAX),
    CONSTANT(IOG_ENGINE_SUMMARY_MAX),
    CONSTANT(IOG_ENGINE_DOES_IO),
    CONSTANT(IOG_ENGINE_NO_DIRECT),
    CONSTANT(IOG_ENGINE_CMDPRIO),
    CONSTANT(IOG_HIST_PRIO_CLAT),
    CONSTANT(IOG_JOB_TIME_BASED),
    CONSTANT(IOG_JOB_DIRECT),
    CONSTANT(IOG_JOB_NO_LAYOUT),
    CONSTANT(IOG_JOB_REFILL),
    CONSTANT(IOG_JOB_ZERO_BUFS),
    CONSTANT(IOG_JOB_INVALIDATE),
    CONSTANT(IOG_JOB_VERIFY_FATAL),
    CONSTANT(IOG_JOB_TEST_CRASH),
    CONSTANT(IOG_JOB_END_FSYNC),
    CONSTANT(IOG_JOB_FILL),
    CONSTANT(IOG_JOB_OSYNC),
    CONSTANT(IOG_JOB_ODSYNC),
    CONSTANT(IOG_DISK_COUNTERS),
    CONSTANT(IOG_DISKS_MAX),
    CONSTANT(IOG_STATE_OTHER_NAMES),
    CONSTANT(IOG_RW_READ),
    CONSTANT(IOG_RW_WRITE),
    CONSTANT(IOG_RW_RANDREAD),
    CONSTANT(IOG_RW_RANDWRITE),
    CONSTANT(IOG_RW_RW),
    CONSTANT(IOG_RW_RANDRW),
    CONSTANT(IOG_RW_TRIM),
    CONSTANT(IOG_RW_RANDTRIM),
    CONSTANT(IOG_RW_TRIMWRITE),
    CONSTANT(IOG_RW_RANDTRIMWRITE),
    CONSTANT(IOG_DIR_READ),
    CONSTANT(IOG_DIR_WRITE),
    CONSTANT(IOG_DIR_SYNC),
    CONSTANT(IOG_DIR_TRIM),
    CONSTANT(IOG_DIR_COUNT),
    CONSTANT(IOG_LAT_SLAT),
    CONSTANT(IOG_LAT_CLAT),
    CONSTANT(IOG_LAT_LAT),
    CONSTANT(IOG_LAT_RESP),
    CONSTANT(IOG_LAT_LAG),
    CONSTANT(IOG_LAT_COUNT),
    CONSTANT(IOG_RATE_LINEAR),
    CONSTANT(IOG_RATE_POISSON),
    CONSTANT(IOG_DIST_UNIFORM),
    CONSTANT(IOG_DIST_ZIPF),
    CONSTANT(IOG_DIST_PARETO),
    CONSTANT(IOG_DIST_NORMAL),
    CONSTANT(IOG_DIST_ZONED),
    CONSTANT(IOG_DIST_SEQUENCE),
    CONSTANT(IOG_SYNC_NONE),
    CONSTANT(IOG_SYNC_FSYNC),
    CONSTANT(IOG_SYNC_FDATASYNC),
    CONSTANT(IOG_STATE_CREATED),
    CONSTANT(IOG_STATE_LAYOUT),
    CONSTANT(IOG_STATE_RAMP),
    CONSTANT(IOG_STATE_RUNNING),
    CONSTANT(IOG_STATE_VERIFY),
    CONSTANT(IOG_STATE_DONE),
    CONSTANT(IOG_VERIFY_NONE),
    CONSTANT(IOG_VERIFY_CRC32C),
    CONSTANT(IOG_VERIFY_XXH64),
    CONSTANT(IOG_VERIFY_CRC32),
    CONSTANT(IOG_VERIFY_MD5),
    CONSTANT(IOG_VERIFY_SHA1),
    CONSTANT(IOG_VERIFY_SHA256),
    CONSTANT(IOG_VERIFY_SHA512),
    CONSTANT(IOG_VERIFY_CRC64),
    CONSTANT(IOG_VERIFY_XXH32),
    CONSTANT(IOG_VERIFY_META),
    CONSTANT(IOG_VERIFY_TORN),
    CONSTANT(IOG_VERIFY_LOST),
    CONSTANT(IOG_VERIFY_MISDIRECTED),
    CONSTANT(IOG_VERIFY_READ_ERROR),
    CONSTANT(IOG_VERIFY_KINDS),
    CONSTANT(IOG_FAULT_NONE),
    CONSTANT(IOG_FAULT_IO_TIMEOUT),
};

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
