/*
 * validate.c - reading and checking job specs: each spec of the caller's
 * array is copied in (whatever its struct_size, see abi.h) and every field
 * is checked, with a message naming the job and the field. The engine's
 * limits come from its descriptor (engine.h), never from its name.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "abi.h"
#include "engine.h"
#include "internal.h"
#include "numa.h"
#include "verify.h"

#define MAX_NUMJOBS       1024
#define MIN_INTERVAL_NS   1000000ull
#define MIN_IO_TIMEOUT_NS 1000000ull /* io_timeout_ns: 0 or at least 1 ms */

int job_file_names(const struct iog_job_spec *spec, const char *names[IOG_FILES_MAX])
{
    size_t pos = 0;
    int n = 0;
    for (;;) {
        size_t len = strnlen(spec->filename + pos, IOG_PATH_MAX - pos);
        if (pos + len == IOG_PATH_MAX)
            return -EINVAL; /* runs off the end */
        if (len == 0)
            return n;
        if (n == IOG_FILES_MAX)
            return -E2BIG;
        names[n++] = spec->filename + pos;
        pos += len + 1;
    }
}

#define INVALID(...)                                                                               \
    do {                                                                                           \
        SET_ERR(err, errlen, __VA_ARGS__);                                                         \
        return -EINVAL;                                                                            \
    } while (0)

#define MAX_BS (1ull << 30)
#define KNOWN_FLAGS                                                                                \
    (IOG_JOB_TIME_BASED | IOG_JOB_DIRECT | IOG_JOB_NO_LAYOUT | IOG_JOB_REFILL |                    \
     IOG_JOB_ZERO_BUFS | IOG_JOB_INVALIDATE | IOG_JOB_VERIFY_FATAL | IOG_JOB_TEST_CRASH |          \
     IOG_JOB_END_FSYNC | IOG_JOB_FILL | IOG_JOB_OSYNC | IOG_JOB_ODSYNC | IOG_JOB_RANDOM_MAP |      \
     IOG_JOB_FILES_RANDOM | IOG_JOB_FILES_SEQUENTIAL | IOG_JOB_CPUS_SPLIT | RING_FLAGS)
#define RING_FLAGS                                                                                 \
    (IOG_JOB_RING_FIXEDBUFS | IOG_JOB_RING_NO_REGFILES | IOG_JOB_RING_SQPOLL |                     \
     IOG_JOB_RING_SQPOLL_CPU | IOG_JOB_RING_HIPRI)

/* The CPUs this process may run on (none when they cannot be read). */
static void allowed_cpus(cpu_set_t *allowed)
{
    if (sched_getaffinity(0, sizeof(*allowed), allowed) != 0)
        CPU_ZERO(allowed);
}

/* iog_job_spec.cpus: each CPU named one this process may run on. */
static int validate_cpus(const struct iog_job_spec *j, uint32_t i, char *err, size_t errlen)
{
    cpu_set_t allowed;
    int any = 0;
    allowed_cpus(&allowed);
    for (uint32_t c = 0; c < IOG_CPUS_MAX; c++) {
        if (!(j->cpus[c / 64] >> (c % 64) & 1))
            continue;
        any = 1;
        if (c >= CPU_SETSIZE || !CPU_ISSET(c, &allowed))
            INVALID("job %u: cpus (cpus_allowed) names CPU %u, which this process may not run on "
                    "(%d CPUs are allowed to it)",
                    i, c, CPU_COUNT(&allowed));
    }
    if ((j->flags & IOG_JOB_CPUS_SPLIT) && !any)
        INVALID("job %u: flag CPUS_SPLIT needs cpus", i);
    return 0;
}

/* io_uring's fast paths (IOG_JOB_RING_*): an engine that takes them, and what each needs.
 * Whether a device polls (HIPRI) is the engine's to find when the job starts. */
static int validate_ring(const struct iog_job_spec *j, uint32_t i, const struct iog_engine *eng,
                         char *err, size_t errlen)
{
    if (j->ring_reserved != 0)
        INVALID("job %u: ring_reserved must be 0", i);
    if (!(j->flags & RING_FLAGS)) {
        if (j->sqpoll_cpu != 0)
            INVALID("job %u: sqpoll_cpu needs flag RING_SQPOLL_CPU", i);
        return 0;
    }
    if (!(eng->flags & IOG_ENGINE_RING))
        INVALID("job %u: fixedbufs, registerfiles, sqthread_poll and hipri are io_uring's "
                "options; the %s engine takes none of them",
                i, eng->name);
    if ((j->flags & IOG_JOB_RING_SQPOLL_CPU) && !(j->flags & IOG_JOB_RING_SQPOLL))
        INVALID("job %u: flag RING_SQPOLL_CPU needs RING_SQPOLL", i);
    if (!(j->flags & IOG_JOB_RING_SQPOLL_CPU) && j->sqpoll_cpu != 0)
        INVALID("job %u: sqpoll_cpu needs flag RING_SQPOLL_CPU", i);
    if (j->flags & IOG_JOB_RING_SQPOLL_CPU) {
        cpu_set_t allowed;
        allowed_cpus(&allowed);
        if (j->sqpoll_cpu >= CPU_SETSIZE || !CPU_ISSET(j->sqpoll_cpu, &allowed))
            INVALID("job %u: sqpoll_cpu (sqthread_poll_cpu) names CPU %u, which this process may "
                    "not run on (%d CPUs are allowed to it)",
                    i, j->sqpoll_cpu, CPU_COUNT(&allowed));
    }
    if ((j->flags & IOG_JOB_RING_HIPRI) && !(j->flags & IOG_JOB_DIRECT))
        INVALID("job %u: hipri polls for completions of direct I/O only: set direct", i);
    return 0;
}

/* The block size table of one direction; its largest size into *maxbs. */
static int validate_bs(const struct iog_job_spec *j, uint32_t i, uint32_t d, uint64_t *maxbs,
                       char *err, size_t errlen)
{
    if (j->nbs[d] < 1 || j->nbs[d] > IOG_BS_ENTRIES_MAX)
        INVALID("job %u: nbs[%u] must be in 1..%u, got %u", i, d, IOG_BS_ENTRIES_MAX, j->nbs[d]);
    uint64_t total = 0;
    for (uint32_t k = 0; k < j->nbs[d]; k++) {
        const struct iog_bs_entry *e = &j->bs[d][k];
        if (e->lo == 0)
            INVALID("job %u: bs[%u][%u].lo must be > 0", i, d, k);
        if (e->hi < e->lo)
            INVALID("job %u: bs[%u][%u].hi must be >= lo", i, d, k);
        if (e->hi > MAX_BS)
            INVALID("job %u: bs[%u][%u].hi must be <= 1 GiB", i, d, k);
        if (e->hi % e->lo != 0)
            INVALID("job %u: bs[%u][%u].hi must be a multiple of lo", i, d, k);
        if ((j->flags & IOG_JOB_DIRECT) && e->lo % 512 != 0)
            INVALID("job %u: bs[%u][%u].lo must be a multiple of 512 with direct I/O", i, d, k);
        if (e->reserved0 != 0)
            INVALID("job %u: bs[%u][%u].reserved0 must be 0", i, d, k);
        total += e->weight;
        if (e->hi > *maxbs)
            *maxbs = e->hi;
    }
    if (total != IOG_WEIGHT_TOTAL)
        INVALID("job %u: bs[%u] weights must sum to %u, got %llu", i, d, IOG_WEIGHT_TOTAL,
                (unsigned long long)total);
    uint64_t ba = j->blockalign[d];
    if (ba > j->size)
        INVALID("job %u: blockalign[%u] must be <= size", i, d);
    if ((j->flags & IOG_JOB_DIRECT) && ba % 512 != 0)
        INVALID("job %u: blockalign[%u] must be a multiple of 512 with direct I/O", i, d);
    return 0;
}

static int validate_pacing(const struct iog_job_spec *j, uint32_t i, char *err, size_t errlen)
{
    int limited[IOG_DATA_DIRS];
    for (uint32_t d = 0; d < IOG_DATA_DIRS; d++) {
        limited[d] = j->rate_iops[d] > 0 || j->rate_bytes[d] > 0;
        if (limited[d] && !job_uses_slot(j, d))
            INVALID("job %u: rate_iops[%u] / rate_bytes[%u]: the job never %s", i, d, d,
                    d == IOG_DIR_READ ? "reads" : "writes");
    }
    if ((j->rw == IOG_RW_RW || j->rw == IOG_RW_RANDRW) && limited[0] != limited[1])
        INVALID("job %u: rate_iops / rate_bytes: a mixed job is limited in both directions or "
                "neither",
                i);
    if (j->rate_process > IOG_RATE_POISSON)
        INVALID("job %u: rate_process %u is unknown", i, j->rate_process);
    if (j->thinktime_ns > UINT64_MAX / 4)
        INVALID("job %u: thinktime_ns too large", i);
    if (j->sync_kind > IOG_SYNC_FDATASYNC)
        INVALID("job %u: sync_kind %u is unknown", i, j->sync_kind);
    if ((j->sync_kind != IOG_SYNC_NONE) != (j->sync_every != 0))
        INVALID("job %u: sync_every must be > 0 exactly when sync_kind is set", i);
    return 0;
}

static int validate_dist(const struct iog_job_spec *j, uint32_t i, char *err, size_t errlen)
{
    double p = j->dist_param;
    int finite = p == p && p < 1e300 && p > -1e300;
    switch (j->dist) {
    case IOG_DIST_UNIFORM:
        break;
    case IOG_DIST_ZIPF:
        if (!finite || p <= 0.0 || p == 1.0)
            INVALID("job %u: dist_param (zipf theta) must be > 0 and != 1", i);
        break;
    case IOG_DIST_PARETO:
        if (!finite || p <= 0.0 || p >= 1.0)
            INVALID("job %u: dist_param (pareto h) must be in (0, 1)", i);
        break;
    case IOG_DIST_NORMAL:
        if (!finite || p <= 0.0)
            INVALID("job %u: dist_param (normal sigma, percent) must be > 0", i);
        break;
    case IOG_DIST_ZONED: {
        if (j->nzones < 1 || j->nzones > IOG_ZONES_MAX)
            INVALID("job %u: nzones must be in 1..%u", i, IOG_ZONES_MAX);
        uint64_t access = 0, size = 0;
        for (uint32_t z = 0; z < j->nzones; z++) {
            if (j->zones[z].access > 0 && j->zones[z].size == 0)
                INVALID("job %u: zones[%u].size must be > 0 when its access is", i, z);
            access += j->zones[z].access;
            size += j->zones[z].size;
        }
        if (access != IOG_WEIGHT_TOTAL || size != IOG_WEIGHT_TOTAL)
            INVALID("job %u: zones access and size must each sum to %u", i, IOG_WEIGHT_TOTAL);
        break;
    }
    case IOG_DIST_SEQUENCE:
        if (j->nsequence < 1 || j->nsequence > IOG_SEQUENCE_MAX)
            INVALID("job %u: nsequence must be in 1..%u", i, IOG_SEQUENCE_MAX);
        if (j->sequence_stride > 1)
            INVALID("job %u: sequence_stride must be 0 or 1", i);
        break;
    default:
        INVALID("job %u: dist %u is unknown", i, j->dist);
    }
    if (j->dist != IOG_DIST_SEQUENCE && (j->nsequence != 0 || j->sequence_stride != 0))
        INVALID("job %u: nsequence and sequence_stride are for dist SEQUENCE only", i);
    if (j->reserved1 != 0)
        INVALID("job %u: reserved1 must be 0", i);
    return 0;
}

static int validate_data(const struct iog_job_spec *j, uint32_t i, char *err, size_t errlen)
{
    if (j->write_layout > IOG_WRITE_LAYOUT_MAX)
        INVALID("job %u: write_layout %u is unknown (0..%u)", i, j->write_layout,
                IOG_WRITE_LAYOUT_MAX);
    if (j->compress_pct > 100)
        INVALID("job %u: compress_pct must be <= 100, got %u", i, j->compress_pct);
    if (j->dedupe_pct > 100)
        INVALID("job %u: dedupe_pct must be <= 100, got %u", i, j->dedupe_pct);
    if (j->pattern_len > IOG_PATTERN_MAX)
        INVALID("job %u: pattern_len must be <= %u", i, IOG_PATTERN_MAX);
    if (j->compress_chunk > MAX_BS)
        INVALID("job %u: compress_chunk must be <= 1 GiB", i);
    if ((j->flags & IOG_JOB_ZERO_BUFS) && (j->compress_pct || j->dedupe_pct))
        INVALID("job %u: compress_pct and dedupe_pct must be 0 with zero buffers (flags)", i);
    return 0;
}

/* Verification keeps the expected contents of every block position in one
 * thread: one write size whose blocks never overlap, one thread per job, and
 * a bounded number of positions. */
static int validate_verify(const struct iog_job_spec *j, uint32_t i, const struct iog_engine *eng,
                           uint32_t nfiles, char *err, size_t errlen)
{
    if (j->verify != IOG_VERIFY_NONE && !verify_kind_known(j->verify))
        INVALID("job %u: verify %u is unknown", i, j->verify);
    if (!memchr(j->verify_state, 0, sizeof(j->verify_state)))
        INVALID("job %u: verify_state is not NUL-terminated", i);
    if (j->verify == IOG_VERIFY_NONE) {
        if (j->verify_state[0])
            INVALID("job %u: verify_state needs verify", i);
        if (j->verify_backlog != 0)
            INVALID("job %u: verify_backlog must be 0 without verify", i);
        if (j->flags & IOG_JOB_VERIFY_FATAL)
            INVALID("job %u: flags VERIFY_FATAL needs verify", i);
        return 0;
    }
    if (!(eng->flags & IOG_ENGINE_DOES_IO))
        INVALID("job %u: verify needs an engine that does I/O, not %s", i, eng->name);
    if (j->rw != IOG_RW_WRITE && j->rw != IOG_RW_RANDWRITE && j->rw != IOG_RW_RW &&
        j->rw != IOG_RW_RANDRW)
        INVALID("job %u: verify needs rw write, randwrite, rw or randrw", i);
    const struct iog_bs_entry *e = &j->bs[IOG_DIR_WRITE][0];
    if (j->nbs[IOG_DIR_WRITE] != 1 || e->lo != e->hi)
        INVALID("job %u: verify needs one write block size (no bs range or split)", i);
    const struct iog_bs_entry *r = &j->bs[IOG_DIR_READ][0];
    if (j->rw == IOG_RW_RW && (j->nbs[IOG_DIR_READ] != 1 || r->lo != e->lo || r->hi != e->lo))
        INVALID("job %u: verify of a sequential mix needs reads of the write block size, so "
                "that every write starts on a block",
                i);
    if (e->lo < verify_min_block(j->verify) || e->lo % 8 != 0)
        INVALID("job %u: bs[1] must be a multiple of 8 and >= %u with verify, got %llu", i,
                verify_min_block(j->verify), (unsigned long long)e->lo);
    if (j->blockalign[IOG_DIR_WRITE] != 0 && j->blockalign[IOG_DIR_WRITE] != e->lo)
        INVALID("job %u: blockalign[1] must be 0 or the block size (%llu) with verify, got %llu", i,
                (unsigned long long)e->lo, (unsigned long long)j->blockalign[IOG_DIR_WRITE]);
    if (j->numjobs != 1)
        INVALID("job %u: numjobs must be 1 with verify, got %u", i, j->numjobs);
    if (j->verify_backlog > VERIFY_MAX_BACKLOG)
        INVALID("job %u: verify_backlog must be <= %u, got %u", i, VERIFY_MAX_BACKLOG,
                j->verify_backlog);
    uint64_t blocks = j->size / nfiles / e->lo * nfiles;
    if (blocks > VERIFY_MAX_BLOCKS)
        INVALID("job %u: verify tracks at most %llu blocks per job; size %llu / bs %llu gives "
                "%llu: use a larger bs or a smaller size",
                i, VERIFY_MAX_BLOCKS, (unsigned long long)j->size, (unsigned long long)e->lo,
                (unsigned long long)blocks);
    return 0;
}

/* Submission batching: only an asynchronous engine batches, and every
 * figure counts requests of the iodepth queue (0: the default). */
static int validate_batching(const struct iog_job_spec *j, uint32_t i, const struct iog_engine *e,
                             char *err, size_t errlen)
{
    const struct {
        const char *name;
        uint32_t v;
    } f[] = {{"batch_submit", j->batch_submit},
             {"batch_complete_min", j->batch_complete_min},
             {"batch_complete_max", j->batch_complete_max},
             {"depth_low", j->depth_low}};
    for (uint32_t k = 0; k < sizeof(f) / sizeof(f[0]); k++) {
        if (f[k].v == 0)
            continue;
        if (!e->ops.submit)
            INVALID("job %u: %s applies to asynchronous engines only; the %s engine performs "
                    "one request at a time: leave it 0",
                    i, f[k].name, e->name);
        if (f[k].v > j->iodepth)
            INVALID("job %u: %s must be at most iodepth (%u), got %u", i, f[k].name, j->iodepth,
                    f[k].v);
    }
    uint32_t cmin = j->batch_complete_min ? j->batch_complete_min : 1;
    if (j->batch_complete_max && j->batch_complete_max < cmin)
        INVALID("job %u: batch_complete_max (%u) must be at least batch_complete_min (%u)", i,
                j->batch_complete_max, cmin);
    return 0;
}

/* I/O priorities: the job's, and the command priority tables, which only
 * an engine that passes a priority per request can honour. */
static int validate_prio(const struct iog_job_spec *j, uint32_t i, const struct iog_engine *eng,
                         char *err, size_t errlen)
{
    if (j->ioprio > UINT16_MAX)
        INVALID("job %u: ioprio must be <= 0xffff (class << 13 | level), got 0x%x", i, j->ioprio);
    if (j->cmdprio_reserved != 0)
        INVALID("job %u: cmdprio_reserved must be 0", i);
    for (uint32_t d = 0; d < IOG_DATA_DIRS; d++) {
        uint32_t n = j->ncmdprio[d];
        if (n == 0)
            continue;
        if (!(eng->flags & IOG_ENGINE_CMDPRIO))
            INVALID("job %u: cmdprio: the %s engine cannot give single requests a priority; "
                    "use io_uring or libaio, or set only the job's ioprio",
                    i, eng->name);
        if (n > IOG_CMDPRIO_MAX)
            INVALID("job %u: ncmdprio[%u] must be <= %u, got %u", i, d, IOG_CMDPRIO_MAX, n);
        const struct iog_cmdprio_entry *e = j->cmdprio[d];
        for (uint32_t k = 0; k < n; k++) {
            if (e[k].share > IOG_WEIGHT_TOTAL)
                INVALID("job %u: cmdprio[%u][%u].share must be <= %u", i, d, k, IOG_WEIGHT_TOTAL);
            if (e[k].ioprio == 0 || e[k].ioprio > UINT16_MAX)
                INVALID("job %u: cmdprio[%u][%u].ioprio must be in 1..0xffff, got 0x%x", i, d, k,
                        e[k].ioprio);
            uint64_t total = 0; /* of the entries that apply to e[k]'s size */
            for (uint32_t m = 0; m < n; m++)
                if (e[m].bs == 0 || e[m].bs == e[k].bs)
                    total += e[m].share;
            if (total > IOG_WEIGHT_TOTAL)
                INVALID("job %u: cmdprio[%u]: the shares of one size sum to %llu, more than %u", i,
                        d, (unsigned long long)total, IOG_WEIGHT_TOTAL);
        }
    }
    return 0;
}

/* The engine a spec names, or a message listing the ones there are. */
static int validate_engine(const struct iog_job_spec *j, uint32_t i, const struct iog_engine **e,
                           char *err, size_t errlen)
{
    if (!memchr(j->engine, '\0', sizeof(j->engine)))
        INVALID("job %u: engine is not NUL-terminated (at most %u bytes)", i,
                IOG_ENGINE_NAME_MAX - 1);
    *e = engine_find(j->engine);
    if (*e)
        return 0;
    char known[IOG_ERR_MAX / 2] = "";
    size_t pos = 0;
    for (uint32_t k = 0; k < engine_count() && pos < sizeof(known); k++)
        pos += (size_t)snprintf(known + pos, sizeof(known) - pos, "%s%s", k ? ", " : "",
                                engine_at(k)->name);
    INVALID("job %u: engine '%s' is unknown; this library has %s", i, j->engine, known);
}

static int validate_spec(const struct iog_job_spec *j, uint32_t i, char *err, size_t errlen)
{
    const struct iog_engine *e;
    int rc = validate_engine(j, i, &e, err, errlen);
    if (rc < 0)
        return rc;
    if (j->rw > IOG_RW_RANDTRIMWRITE)
        INVALID("job %u: rw %u is unknown", i, j->rw);
    if (j->rwmixread > 100)
        INVALID("job %u: rwmixread must be <= 100, got %u", i, j->rwmixread);
    if (j->flags & ~KNOWN_FLAGS)
        INVALID("job %u: flags has unknown bits 0x%x", i, j->flags & ~KNOWN_FLAGS);
    if (j->size == 0)
        INVALID("job %u: size must be > 0", i);
    uint64_t maxbs = 0;
    for (uint32_t d = 0; d < IOG_DATA_DIRS; d++) {
        if (job_uses_slot(j, d) && (rc = validate_bs(j, i, d, &maxbs, err, errlen)) < 0)
            return rc;
    }
    if (j->iodepth < 1)
        INVALID("job %u: iodepth must be >= 1", i);
    if (j->iodepth > IOG_DEPTH_MAX)
        INVALID("job %u: iodepth must be <= %u", i, IOG_DEPTH_MAX);
    if (j->iodepth > e->max_depth && e->max_depth == 1)
        INVALID("job %u: iodepth must be 1 for the %s engine", i, e->name);
    if (j->iodepth > e->max_depth)
        INVALID("job %u: iodepth must be <= %u for the %s engine", i, e->max_depth, e->name);
    if ((j->flags & IOG_JOB_DIRECT) && (e->flags & IOG_ENGINE_NO_DIRECT))
        INVALID("job %u: flags DIRECT (O_DIRECT) cannot apply to the %s engine; clear it", i,
                e->name);
    if (j->numjobs < 1)
        INVALID("job %u: numjobs must be >= 1", i);
    if (j->numjobs > MAX_NUMJOBS)
        INVALID("job %u: numjobs must be <= %u", i, MAX_NUMJOBS);
    uint32_t nfiles = 1;
    if (e->flags & IOG_ENGINE_DOES_IO) {
        const char *names[IOG_FILES_MAX];
        int n = job_file_names(j, names);
        if (n == -E2BIG)
            INVALID("job %u: filename lists more than %u files", i, IOG_FILES_MAX);
        if (n < 0)
            INVALID("job %u: filename is not NUL-terminated (the list ends with an empty name)", i);
        if (n == 0)
            INVALID("job %u: filename must not be empty", i);
        nfiles = (uint32_t)n;
    }
    if (j->size / nfiles < maxbs)
        INVALID("job %u: size must be >= the largest bs (%llu) in each of its %u file(s)", i,
                (unsigned long long)maxbs, nfiles);
    if (j->offset > UINT64_MAX - j->size || j->offset + j->size > (uint64_t)INT64_MAX)
        INVALID("job %u: offset + size overflows", i);
    if ((j->flags & IOG_JOB_DIRECT) && j->offset % 512 != 0)
        INVALID("job %u: offset must be a multiple of 512 with direct I/O", i);
    if ((j->flags & IOG_JOB_TIME_BASED) && j->runtime_ns == 0)
        INVALID("job %u: runtime_ns must be > 0 when time based", i);
    if (j->runtime_ns > UINT64_MAX / 4 || j->ramp_ns > UINT64_MAX / 4)
        INVALID("job %u: runtime_ns or ramp_ns too large", i);
    if (j->interval_ns != 0 && j->interval_ns < MIN_INTERVAL_NS)
        INVALID("job %u: interval_ns must be 0 or >= %llu", i, MIN_INTERVAL_NS);
    if (j->io_timeout_ns != 0 &&
        (j->io_timeout_ns < MIN_IO_TIMEOUT_NS || j->io_timeout_ns > UINT64_MAX / 4))
        INVALID("job %u: io_timeout_ns must be 0 or in [%llu, 2^62]", i, MIN_IO_TIMEOUT_NS);
    if (j->start_delay_ns > UINT64_MAX / 4)
        INVALID("job %u: start_delay_ns too large", i);
    if (j->flow_sleep_ns > UINT64_MAX / 4)
        INVALID("job %u: flow_sleep_ns too large", i);
    if ((rc = validate_batching(j, i, e, err, errlen)) < 0)
        return rc;
    if (j->seq_skip != 0 && j->rw != IOG_RW_READ && j->rw != IOG_RW_WRITE && j->rw != IOG_RW_RW)
        INVALID("job %u: seq_skip applies to sequential jobs only (rw read, write or rw)", i);
    if ((j->flags & IOG_JOB_FILL) &&
        (j->rw != IOG_RW_WRITE || (j->flags & IOG_JOB_TIME_BASED) || j->ramp_ns != 0))
        INVALID("job %u: IOG_JOB_FILL needs rw write, neither time based nor a ramp", i);
    if ((j->flags & IOG_JOB_OSYNC) && (j->flags & IOG_JOB_ODSYNC))
        INVALID("job %u: flags OSYNC and ODSYNC exclude each other", i);
    if ((j->flags & IOG_JOB_FILES_RANDOM) && (j->flags & IOG_JOB_FILES_SEQUENTIAL))
        INVALID("job %u: flags FILES_RANDOM and FILES_SEQUENTIAL exclude each other", i);
    if ((rc = validate_cpus(j, i, err, errlen)) != 0)
        return rc;
    if ((rc = validate_ring(j, i, e, err, errlen)) != 0)
        return rc;
    if ((rc = numa_check(j, i, err, errlen)) != 0)
        return rc;
    if ((j->flags & (IOG_JOB_OSYNC | IOG_JOB_ODSYNC)) &&
        (!job_uses_dir(j, IOG_DIR_WRITE) || strcmp(e->name, "mmap") == 0))
        INVALID("job %u: flags OSYNC and ODSYNC need a job that writes, not with the %s engine", i,
                e->name);
    if (j->reserved0 != 0)
        INVALID("job %u: reserved0 must be 0", i);
    if ((rc = validate_pacing(j, i, err, errlen)) < 0)
        return rc;
    if ((rc = validate_dist(j, i, err, errlen)) < 0)
        return rc;
    if ((rc = validate_data(j, i, err, errlen)) < 0)
        return rc;
    if ((rc = validate_prio(j, i, e, err, errlen)) < 0)
        return rc;
    return validate_verify(j, i, e, nfiles, err, errlen);
}

int job_spec_read(const struct iog_job_spec *jobs, uint32_t i, struct iog_job_spec *out, char *err,
                  size_t errlen)
{
    /* The array's stride is the first spec's size; struct_size leads every
     * version of the struct. */
    uint32_t stride, size;
    memcpy(&stride, &jobs[0].struct_size, sizeof(stride));
    if (stride < IOG_JOB_SPEC_SIZE_VER0)
        INVALID("job %u: struct_size is %u, expected at least %u", i, stride,
                IOG_JOB_SPEC_SIZE_VER0);
    const unsigned char *user = (const unsigned char *)jobs + (size_t)i * stride;
    memcpy(&size, user, sizeof(size));
    if (size != stride)
        INVALID("job %u: struct_size is %u, but job 0's is %u (one array, one size)", i, size,
                stride);
    size_t bad = 0;
    int rc = abi_copy_in(out, sizeof(*out), user, size, IOG_JOB_SPEC_SIZE_VER0, &bad);
    if (rc == -E2BIG) {
        SET_ERR(err, errlen,
                "job %u: struct_size is %u, larger than this library's %zu, and byte %zu is not "
                "0: the spec sets a field this library does not have (use a newer libiogate)",
                i, size, sizeof(*out), bad);
        return rc;
    }
    out->filename[IOG_PATH_MAX - 1] = '\0';
    return validate_spec(out, i, err, errlen);
}
