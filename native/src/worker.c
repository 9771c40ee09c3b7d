/*
 * worker.c - one worker thread of a job: its setup before the run (file
 * descriptors, aligned buffers and their first contents, request slots,
 * engine state), the I/O loop that decides what to issue next (direction,
 * size, file, offset, when it is due, when to stop) and counts every
 * completion in the thread's own statistics, and its teardown. The loop
 * takes no lock and allocates nothing.
 *
 * Counting: a request is counted (stats, histograms, series) when it was
 * prepared at or after the end of the ramp, so nothing completed during the
 * ramp is counted; the limits below count every request, the ramp's too (as
 * fio: a size-based job ends at its size, inside its ramp if need be). A
 * thread stops at the first of:
 * runtime_ns after the ramp; its byte limit issued (io_limit_bytes, else
 * one pass over the region - `size`, or with one block size the whole blocks
 * of each file's region - unless TIME_BASED); its request limit
 * issued (io_limit_ios); with IOG_JOB_FILL, a write that found the filesystem
 * full (ENOSPC, EDQUOT: no error); its job's stop word set (a cancel, or
 * exitall of a job whose exit_mask names it: then it ends as at its runtime's
 * end, end fsync and verify read-back included). A thread whose run ends
 * normally ends the jobs of its job's exit_mask. Its counted time runs from
 * the end of the ramp until its loop ended (in-flight requests drained) and,
 * with END_FSYNC, its files were synced. A job with start_delay_ns sleeps that long first
 * (from the run clock). Its ramp, runtime and rate schedules count from its start gate
 * (monitor.c, run_gate): when the threads of the jobs with its delay are all ready to
 * issue. A thread the scheduler runs late still issues: runtime_ns does not stop it before
 * its first counted request. A short transfer is
 * continued (synchronous engines loop in prep, asynchronous ones get the
 * remainder prepared again) and only a request complete in full is counted
 * as an io; one that fails, even after a partial transfer, is one error.
 *
 * I/O priorities: a thread sets the job's ioprio for itself before its
 * first request; with a command priority table (cmdprio) each data request
 * draws whether it carries one (choose_prio) and those are counted again
 * apart (stats_record_prio). Without a table the cost is one branch.
 *
 * io_timeout_ns: each slot's outstanding request is published for the
 * monitor (struct io_watch), which claims and counts the overdue ones; a
 * claimed request is dropped here if it ever completes.
 *
 * What to issue: a request's size comes from its direction's block size
 * table (an entry by weight, then for a range a uniform multiple of lo);
 * requests go to the job's files in turn. Sequential jobs keep one offset
 * per file that advances by the request length (plus seq_skip, see
 * seq_next) and wraps to the region start; random jobs draw an aligned
 * block number from the distribution.
 *
 * Trims (the trim rw modes) take their sizes, alignment and rate from slot 1
 * of the spec and are counted in IOG_DIR_TRIM. Whatever the engine, a trim
 * is performed here, synchronously (iog_trim: a discard or a punched hole;
 * at once for an engine that does no I/O), slat 0 and clat = lat, while the
 * requests already handed to an asynchronous engine stay in flight. In the
 * trim + write modes the request after each trim is a write of the same
 * file, offset and size; `size` counts the trims only.
 *
 * When: under a rate limit each direction has a schedule of due times fixed
 * from the start of the run (linear or exponential gaps); a request is not
 * prepared before it is due, and a late one is prepared at once, its
 * lateness kept as lag and inside resp. A mixed rate-limited job issues the
 * direction due first. While waiting, completions keep being reaped. When
 * the next request would be due at or after the end of the runtime, the
 * worker still waits (reaping) until that end before it stops, unless its
 * size is done: a rate-limited job runs for its runtime, as its counted time
 * says.
 * Synchronous engines report slat 0 and clat = lat = the time around the
 * request.
 *
 * A failed request's errno: the system's when a call failed; when a call
 * moved nothing, ENODATA for a read that stopped at or past the end of its
 * (regular) file - the file is shorter than the region, cut behind the run's
 * back - and EIO for anything else (a read that stops short inside the file,
 * a write that moves nothing): a device or file system fault.
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "internal.h"
#include "numa.h"
#include "verify.h"

#define IOPRIO_WHO_PROCESS 1 /* ioprio_set(2): `who` is a thread id, 0: the caller */

#define SLEEP_SLICE_NS     20000000ull /* waits wake up this often to honour a stop */
#define CAPTURE_RING_BYTES (1u << 20)  /* capture ring of a writing thread, at most... */
#define CAPTURE_RINGS_MAX  (32u << 20) /* ...and of all writing threads of a session */

static void plan_dir(struct iog_worker *w, uint32_t d)
{
    const struct iog_job_spec *spec = &w->job->spec;
    struct dir_plan *p = &w->plan[d];
    memset(p, 0, sizeof(*p));
    p->nbs = spec->nbs[d];
    p->min_len = UINT64_MAX;
    uint32_t cum = 0;
    for (uint32_t k = 0; k < p->nbs; k++) {
        const struct iog_bs_entry *e = &spec->bs[d][k];
        cum += e->weight;
        p->cum_weight[k] = cum;
        p->bs_lo[k] = e->lo;
        p->bs_steps[k] = e->hi / e->lo;
        if (e->lo < p->min_len)
            p->min_len = e->lo;
        if (e->hi > p->max_len)
            p->max_len = e->hi;
    }
    if (p->nbs == 1 && p->bs_steps[0] == 1)
        p->fixed_len = (uint32_t)p->bs_lo[0];
    p->align = spec->blockalign[d] ? spec->blockalign[d] : p->min_len;
    p->nblocks = (w->file_size - p->min_len) / p->align + 1;
    dist_init(&p->dist, spec, p->nblocks);
    double share = (double)spec->numjobs;
    if (spec->rate_iops[d])
        p->gap_per_io = 1e9 * share / (double)spec->rate_iops[d];
    if (spec->rate_bytes[d])
        p->gap_per_byte = 1e9 * share / (double)spec->rate_bytes[d];
    p->rated = p->gap_per_io > 0 || p->gap_per_byte > 0;
}

/* The bytes of a file's region a pass moves: its whole blocks when the job's
 * requests are one size aligned to it, else the region. */
static uint64_t whole_blocks(const struct iog_worker *w)
{
    const struct iog_job_spec *spec = &w->job->spec;
    uint64_t len = 0;
    for (uint32_t d = 0; d < IOG_DATA_DIRS; d++) {
        if (!job_uses_slot(spec, d))
            continue;
        const struct dir_plan *p = &w->plan[d];
        if (!p->fixed_len || p->align != p->fixed_len || (len && len != p->fixed_len))
            return w->file_size;
        len = p->fixed_len;
    }
    return len && w->file_size >= len ? w->file_size / len * len : w->file_size;
}

int worker_setup(struct iog_worker *w, char *err, size_t errlen)
{
    const struct iog_job *job = w->job;
    const struct iog_job_spec *spec = &job->spec;
    uint32_t depth = spec->iodepth;
    int rc;

    for (int d = 0; d < IOG_DIR_COUNT; d++)
        stats_init(&w->st[d]);
    rng_seed(&w->rng, spec->seed, w->index);
    w->file_size = job->file_size;
    w->region_start = spec->offset;
    w->region_end = spec->offset + job->file_size;
    for (uint32_t f = 0; f < job->nfiles; f++)
        w->seq_off[f] = w->region_start;
    w->next_file = w->index % job->nfiles;
    w->mixed = spec->rw == IOG_RW_RW || spec->rw == IOG_RW_RANDRW;
    w->random = spec->rw == IOG_RW_RANDREAD || spec->rw == IOG_RW_RANDWRITE ||
                spec->rw == IOG_RW_RANDRW || spec->rw == IOG_RW_RANDTRIM ||
                spec->rw == IOG_RW_RANDTRIMWRITE;
    w->trims = job_trims(spec);
    w->pair_write = spec->rw == IOG_RW_TRIMWRITE || spec->rw == IOG_RW_RANDTRIMWRITE;
    w->write_due = 0;
    uint64_t maxbs = 0;
    w->rated = 0;
    for (uint32_t d = 0; d < IOG_DATA_DIRS; d++) {
        if (!job_uses_slot(spec, d))
            continue;
        plan_dir(w, d);
        w->rated |= w->plan[d].rated;
        if (w->plan[d].max_len > maxbs)
            maxbs = w->plan[d].max_len;
    }
    w->mapped = 0;
    if (w->random && (spec->flags & IOG_JOB_RANDOM_MAP) && spec->dist == IOG_DIST_UNIFORM) {
        /* one map for every direction: a block read is not written in the pass */
        const struct dir_plan *first = NULL;
        int one_size = 1;
        for (uint32_t d = 0; d < IOG_DATA_DIRS; d++) {
            if (!job_uses_slot(spec, d))
                continue;
            const struct dir_plan *p = &w->plan[d];
            one_size &= p->fixed_len &&
                        (!first || (p->fixed_len == first->fixed_len && p->align == first->align));
            first = first ? first : p;
        }
        if (first && one_size) {
            randmap_init(&w->map, first->nblocks, job->nfiles, spec->seed, w->index);
            w->mapped = 1;
        }
    }
    w->paced = w->rated || spec->thinktime_ns > 0;
    w->think_until = 0;
    w->think_count = 0;
    w->think_pending = 0;
    w->writes_since_sync = 0;
    w->sync_pending = 0;
    w->issued = 0;
    w->nissued = 0;
    w->counting = 0;
    w->byte_limit = spec->io_limit_bytes                 ? spec->io_limit_bytes
                    : (spec->flags & IOG_JOB_TIME_BASED) ? UINT64_MAX
                                                         : spec->size;
    /* A pass moves the whole blocks of each file's region, as fio's does: a region that is
     * not a multiple of the one block size leaves its tail alone. */
    w->file_share = whole_blocks(w);
    if (!spec->io_limit_bytes && !(spec->flags & IOG_JOB_TIME_BASED))
        w->byte_limit = (uint64_t)job->nfiles * w->file_share;
    w->ios_limit = spec->io_limit_ios ? spec->io_limit_ios : UINT64_MAX;
    w->file_service = job->nfiles < 2                            ? FILES_ROUNDROBIN
                      : (spec->flags & IOG_JOB_FILES_RANDOM)     ? FILES_RANDOM
                      : (spec->flags & IOG_JOB_FILES_SEQUENTIAL) ? FILES_SEQUENTIAL
                                                                 : FILES_ROUNDROBIN;
    w->file_left = w->file_share; /* of the first file's, from the first request */
    w->fill = (spec->flags & IOG_JOB_FILL) != 0;
    w->flow = job->flow;
    w->flow_count = 0;
    w->refill = 0;

    w->ios = calloc(depth, sizeof(*w->ios));
    w->free_slots = calloc(depth, sizeof(*w->free_slots));
    w->done = calloc(depth, sizeof(*w->done));
    w->pending = calloc(depth, sizeof(*w->pending));
    w->due = calloc(depth, sizeof(*w->due));
    w->slot_file = calloc(depth, sizeof(*w->slot_file));
    if (!w->ios || !w->free_slots || !w->done || !w->pending || !w->due || !w->slot_file)
        goto nomem;
    if (spec->io_timeout_ns) { /* read by the monitor until destroy: not freed in teardown */
        if (!w->watch)
            w->watch = calloc(depth, sizeof(*w->watch));
        else
            memset(w->watch, 0, depth * sizeof(*w->watch));
        if (!w->watch)
            goto nomem;
    }
    w->test_crash = (spec->flags & IOG_JOB_TEST_CRASH) && w->index == 0;
    if (!w->coverage) {
        w->coverage = calloc((job->coverage_total + 63) / 64, sizeof(uint64_t));
        if (!w->coverage)
            goto nomem;
    } else {
        memset(w->coverage, 0, (job->coverage_total + 63) / 64 * sizeof(uint64_t));
    }

    int writes = job_uses_dir(spec, IOG_DIR_WRITE);
    if ((w->job->engine->flags & IOG_ENGINE_DOES_IO) || writes) {
        size_t stride = (size_t)((maxbs + 4095) & ~UINT64_C(4095));
        /* a mapping of their own: a NUMA memory policy given to them (numa.c) goes with
         * it when it is unmapped, and touches no other memory of the process */
        w->bufmem =
            mmap(NULL, stride * depth, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (w->bufmem == MAP_FAILED) {
            w->bufmem = NULL;
            goto nomem;
        }
        for (uint32_t i = 0; i < depth; i++)
            w->ios[i].buf = (char *)w->bufmem + stride * i;
        w->buf_stride = stride;
        w->buf_len = stride * depth;
    }
    if (writes) {
        data_writer_destroy(w->data); /* from an earlier, failed start */
        w->data = NULL;
        size_t ring = CAPTURE_RINGS_MAX / (w->s->data_writers ? w->s->data_writers : 1);
        if (ring > CAPTURE_RING_BYTES)
            ring = CAPTURE_RING_BYTES;
        rc = data_writer_create(spec, w->index, (size_t)w->plan[IOG_DIR_WRITE].max_len, ring,
                                &w->data, err, errlen);
        if (rc < 0)
            return rc;
        for (uint32_t i = 0; i < depth; i++)
            data_fill_initial(w->data, w->ios[i].buf, (size_t)w->plan[IOG_DIR_WRITE].max_len);
        w->refill = data_writer_varies(w->data);
    }
    verify_destroy(w->verify); /* from an earlier, failed start */
    w->verify = NULL;
    if (spec->verify != IOG_VERIFY_NONE) {
        struct verify_params vp = {.spec = spec,
                                   .names = job->spec.filename,
                                   .job = job->index,
                                   .nfiles = job->nfiles,
                                   .file_size = job->file_size,
                                   .generation = w->s->generation,
                                   .depth = depth};
        rc = verify_create(&vp, &w->verify, err, errlen);
        if (rc < 0)
            return rc;
    }
    /* Passes of a verified job do not overlap in flight: a block written at the end of one
     * pass and again at the start of the next could land torn (fio drains between loops). */
    w->pass_bytes = w->verify && writes ? (uint64_t)job->nfiles * w->file_share : 0;
    w->pass_end = w->pass_bytes ? w->pass_bytes : UINT64_MAX;
    w->pass_pending = 0;
    if (w->job->engine->flags & IOG_ENGINE_DOES_IO) {
        for (uint32_t f = 0; f < job->nfiles; f++) {
            rc = layout_open(job, f, &w->fds[f], err, errlen);
            if (rc < 0)
                return rc;
            w->nfiles++;
            struct stat st;
            w->blkdev[f] = w->trims && fstat(w->fds[f], &st) == 0 && S_ISBLK(st.st_mode);
        }
        w->fd = w->fds[0];
    }
    for (uint32_t i = 0; i < depth; i++) {
        w->free_slots[i] = &w->ios[depth - 1 - i];
        w->ios[i].ioprio = (uint16_t)spec->ioprio; /* cmdprio decides per request */
    }
    w->cmdprio = spec->ncmdprio[IOG_DIR_READ] || spec->ncmdprio[IOG_DIR_WRITE];
    w->ioprio_seen = 0;
    return w->ops->init ? w->ops->init(w, err, errlen) : 0;

nomem:
    SET_ERR(err, errlen, "job %u: out of memory for worker %u", w->job->index, w->index);
    return -ENOMEM;
}

void worker_teardown(struct iog_worker *w)
{
    if (w->ops && w->ops->cleanup)
        w->ops->cleanup(w);
    verify_release(w->verify);
    for (uint32_t f = 0; f < w->nfiles; f++) {
        close(w->fds[f]);
        w->fds[f] = -1;
    }
    w->nfiles = 0;
    w->fd = -1;
    if (w->bufmem)
        munmap(w->bufmem, w->buf_len);
    free(w->ios);
    free(w->free_slots);
    free(w->done);
    free(w->pending);
    free(w->due);
    free(w->slot_file);
    w->bufmem = NULL;
    w->pending = NULL;
    w->ios = NULL;
    w->free_slots = NULL;
    w->done = NULL;
    w->due = NULL;
    w->slot_file = NULL;
}

static inline uint32_t pick_len(struct iog_worker *w, const struct dir_plan *p)
{
    if (p->fixed_len)
        return p->fixed_len;
    uint32_t k = 0;
    if (p->nbs > 1) {
        uint64_t u = rng_below(&w->rng, IOG_WEIGHT_TOTAL);
        while (u >= p->cum_weight[k])
            k++;
    }
    uint64_t len = p->bs_lo[k];
    if (p->bs_steps[k] > 1)
        len *= 1 + rng_below(&w->rng, p->bs_steps[k]);
    return (uint32_t)len;
}

/* seq_skip: the offset after a request [off, off + len) of a sequential
 * job, kept within the region as iog_job_spec.seq_skip says. */
static inline uint64_t seq_next(const struct iog_worker *w, uint64_t off, uint32_t len)
{
    int64_t skip = w->job->spec.seq_skip;
    uint64_t end = off + len; /* <= region_end */
    if (skip >= 0)
        return (uint64_t)skip > w->region_end - end ? w->region_end : end + (uint64_t)skip;
    uint64_t back = (uint64_t)(-(skip + 1)) + 1; /* -skip without overflow */
    if (back <= end - w->region_start)
        return end - back;
    return back <= w->file_size ? w->region_end - back : w->region_start;
}

/* cmdprio: whether a request of direction dir and len bytes carries a
 * command priority (one draw against the running shares of the entries that
 * apply to its size), and the priority it carries: that one, else the
 * job's. */
static inline void choose_prio(struct iog_worker *w, struct iog_io *io, uint32_t dir, uint32_t len)
{
    const struct iog_job_spec *spec = &w->job->spec;
    io->prio = 0;
    io->ioprio = (uint16_t)spec->ioprio;
    if (dir >= IOG_DATA_DIRS)
        return; /* trims are performed synchronously, without one */
    uint32_t n = spec->ncmdprio[dir];
    const struct iog_cmdprio_entry *e = spec->cmdprio[dir];
    uint64_t u = UINT64_MAX, cum = 0;
    for (uint32_t k = 0; k < n; k++) {
        if (e[k].bs && e[k].bs != len)
            continue;
        if (u == UINT64_MAX)
            u = rng_below(&w->rng, IOG_WEIGHT_TOTAL);
        cum += e[k].share;
        if (u < cum) {
            io->prio = 1;
            io->ioprio = (uint16_t)e[k].ioprio;
            return;
        }
    }
}

/* Decides direction, size, file and offset of the next request into io
 * (slot `slot`), and its scheduled due time (0 without a rate limit). */
static inline void choose_io(struct iog_worker *w, struct iog_io *io, uint32_t slot)
{
    const struct iog_job_spec *spec = &w->job->spec;
    uint32_t dir, len, f;
    uint64_t off;
    struct dir_plan *p;
    if (w->write_due) { /* trimwrite: the write of the block trimmed last */
        w->write_due = 0;
        dir = IOG_DIR_WRITE;
        p = &w->plan[IOG_DIR_WRITE];
        len = w->pair_len;
        f = w->pair_file;
        off = w->pair_off;
        goto chosen;
    }
    if (!w->mixed)
        dir = job_fixed_dir(spec);
    else if (w->rated)
        dir = w->plan[IOG_DIR_READ].next_due <= w->plan[IOG_DIR_WRITE].next_due ? IOG_DIR_READ
                                                                                : IOG_DIR_WRITE;
    else
        dir = rng_below(&w->rng, 100) < spec->rwmixread ? IOG_DIR_READ : IOG_DIR_WRITE;
    p = &w->plan[dir_slot(dir)];
    len = pick_len(w, p);
    f = w->next_file;
    switch (w->file_service) {
    case FILES_ROUNDROBIN:
        w->next_file = f + 1 == w->job->nfiles ? 0 : f + 1;
        break;
    case FILES_RANDOM:
        f = (uint32_t)rng_below(&w->rng, w->job->nfiles);
        break;
    default: /* FILES_SEQUENTIAL: the file's share, then the next */
        if (w->file_left < len) {
            f = w->next_file = f + 1 == w->job->nfiles ? 0 : f + 1;
            w->file_left = w->file_share;
        }
        w->file_left = w->file_left > len ? w->file_left - len : 0;
        break;
    }
    if (w->random) {
        uint64_t b = w->mapped ? randmap_next(&w->map, f) : dist_next(&p->dist, &w->rng);
        if (!p->fixed_len) {
            uint64_t fit = (w->file_size - len) / p->align + 1;
            if (b >= fit)
                b %= fit;
        }
        off = w->region_start + b * p->align;
    } else {
        off = w->seq_off[f];
        if (off + len > w->region_end)
            off = w->region_start;
        w->seq_off[f] = w->job->spec.seq_skip ? seq_next(w, off, len) : off + len;
    }
    if (w->pair_write) {
        w->write_due = 1;
        w->pair_len = len;
        w->pair_file = f;
        w->pair_off = off;
    }
chosen:;
    uint64_t due = 0;
    if (p->rated) {
        due = (uint64_t)p->next_due;
        double gap = p->gap_per_io;
        if (p->gap_per_byte * len > gap)
            gap = p->gap_per_byte * len;
        if (spec->rate_process == IOG_RATE_POISSON)
            gap *= -log(1.0 - rng_unit(&w->rng));
        p->next_due += gap;
    }
    if (__builtin_expect(w->cmdprio, 0))
        choose_prio(w, io, dir, len);
    io->dir = (uint8_t)dir;
    io->len = len;
    io->offset = off;
    io->fd = w->nfiles ? w->fds[f] : -1;
    w->due[slot] = due;
    w->slot_file[slot] = f;
    if (dir == IOG_DIR_WRITE && w->refill)
        data_before_write(w->data, io->buf, len);
    if (w->verify && dir == IOG_DIR_WRITE) /* after the contents: the checksum covers them */
        verify_before_write(w->verify, slot, io->buf, len, f, off);
}

/* Whether the chosen request may be prepared at `now`; 0 when the worker
 * must stop. Decides whether it is counted. */
static inline int admit_io(struct iog_worker *w, struct iog_io *io, uint64_t now)
{
    if (PUB_LOAD(&w->job->stop))
        return 0;
    if (w->verify && verify_stopped(w->verify))
        return 0; /* IOG_JOB_VERIFY_FATAL */
    io->counted = now >= w->count_start;
    /* the end of the runtime, but never before the thread's first counted
     * request: one scheduled late still issues (counting is checked last,
     * off the path of every other request) */
    if (io->counted && w->stop_at && now >= w->stop_at && w->counting)
        return 0;
    /* The limits count the ramp's requests too, as fio does: a size-based job
     * whose size is done within its ramp ends there, having counted nothing.
     * trimwrite: the limits count the trims, each one's write follows it. */
    if (!(w->pair_write && io->dir == IOG_DIR_WRITE)) {
        if (w->issued >= w->byte_limit || w->nissued >= w->ios_limit)
            return 0;
        w->issued += io->len;
        w->nissued++;
    }
    w->counting |= io->counted;
    if (w->verify && io->dir == IOG_DIR_WRITE) /* a mix's reads are not verified */
        verify_submitted(w->verify, (uint32_t)(io - w->ios));
    return 1;
}

/* Whether the worker would still issue counted requests if time allowed:
 * neither of its limits (bytes, requests) reached. */
static inline int work_left(const struct iog_worker *w)
{
    return w->issued < w->byte_limit && w->nissued < w->ios_limit;
}

/* Sleeps until `t` (absolute); 0 when the job was stopped (cancelled or
 * ended by exitall) meanwhile. The start of a thinktime pause, its
 * thinktime_spin_ns, is spent busy instead. */
static int sleep_until(struct iog_worker *w, uint64_t t)
{
    const struct iog_job_spec *spec = &w->job->spec;
    uint64_t spin =
        spec->thinktime_spin_ns < spec->thinktime_ns ? spec->thinktime_spin_ns : spec->thinktime_ns;
    uint64_t busy_until = spin && w->think_until ? w->think_until - spec->thinktime_ns + spin : 0;
    for (;;) {
        if (PUB_LOAD(&w->job->stop))
            return 0;
        uint64_t now = clock_now_ns();
        if (now >= t)
            return 1;
        if (now < busy_until)
            continue; /* thinktime_spin: the CPU kept busy */
        uint64_t until = t - now > SLEEP_SLICE_NS ? now + SLEEP_SLICE_NS : t;
        struct timespec ts = clock_to_timespec(until);
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    }
}

static inline void mark_coverage(struct iog_worker *w, const struct iog_io *io, uint32_t file)
{
    const struct iog_job *job = w->job;
    uint64_t pos = (uint64_t)file * w->file_size + (io->offset - w->region_start);
    uint64_t c = pos >> job->coverage_shift;
    uint64_t last = (pos + io->len - 1) >> job->coverage_shift;
    /* chunks c..last: bits from c in its word, whole words, bits up to last */
    uint64_t *cov = w->coverage, wc = c >> 6, wl = last >> 6;
    uint64_t head = ~0ull << (c & 63), tail = ~0ull >> (63 - (last & 63));
    if (wc == wl) {
        cov[wc] |= head & tail;
        return;
    }
    cov[wc] |= head;
    for (uint64_t i = wc + 1; i < wl; i++)
        cov[i] = ~0ull;
    cov[wl] |= tail;
}

/* io_timeout_ns: publishes the request of `slot` as outstanding since t. */
static inline void watch_issue(struct iog_worker *w, const struct iog_io *io, uint32_t slot,
                               uint64_t t)
{
    struct io_watch *x = &w->watch[slot];
    PUB_STORE(&x->offset, io->offset);
    PUB_STORE(&x->len, io->len);
    PUB_STORE(&x->dir, (uint16_t)io->dir);
    PUB_STORE(&x->file, (uint16_t)w->slot_file[slot]);
    __atomic_store_n(&x->issued_ns, t, __ATOMIC_RELEASE);
}

/* Takes the request of `slot` back from the monitor's view; 1 when the
 * monitor already claimed it as past its timeout (and counted it). */
static inline int watch_finish(struct iog_worker *w, uint32_t slot)
{
    return __atomic_exchange_n(&w->watch[slot].issued_ns, 0, __ATOMIC_ACQ_REL) == WATCH_CLAIMED;
}

/* IOG_JOB_TEST_CRASH: a real invalid memory access. The pointer is read
 * through a volatile, so the compiler cannot prove it null, and the store is
 * volatile, so it is not dropped; the sanitizers leave the access to the
 * kernel (SIGSEGV). */
__attribute__((noinline, no_sanitize("address", "undefined"))) static void test_crash_now(void)
{
    volatile int *volatile p = NULL;
    *p = 1;
}

/* The errno of a request that failed at `at` (see the top of this file):
 * res < 0 is the system's; a call that moved nothing is ENODATA at the end of
 * a regular file being read, else EIO. The file is looked at only then, off
 * the path of requests that succeed. */
static int failure_errno(const struct iog_io *io, uint64_t at)
{
    if (io->res < 0)
        return (int)-io->res;
    struct stat st;
    if (io->dir == IOG_DIR_READ && fstat(io->fd, &st) == 0 && S_ISREG(st.st_mode) &&
        (uint64_t)st.st_size <= at)
        return ENODATA;
    return EIO;
}

/* IOG_JOB_FILL: whether the failed request found the filesystem full, which
 * ends the thread's run (admit_io lets nothing more through) and is no
 * error. */
static int filled_up(struct iog_worker *w, const struct iog_io *io)
{
    if (!w->fill || io->dir != IOG_DIR_WRITE || (io->res != -ENOSPC && io->res != -EDQUOT))
        return 0;
    w->byte_limit = 0;
    return 1;
}

/* A request is complete in full when res == len; otherwise it failed
 * (failure_errno) at offset + done, after `done` bytes that are counted
 * nowhere. */
static inline __attribute__((always_inline)) void complete_io_as(struct iog_worker *w,
                                                                 struct iog_io *io, uint64_t slat,
                                                                 uint64_t clat, uint64_t lat,
                                                                 uint64_t t_done, const int sync)
{
    uint32_t slot = (uint32_t)(io - w->ios);
    uint32_t done = io->done;
    io->done = 0;
    if (w->verify && io->dir == IOG_DIR_WRITE)
        verify_completed(w->verify, slot, io->res == (int64_t)io->len);
    if (w->watch && watch_finish(w, slot))
        return; /* past io_timeout_ns: counted by the monitor as ETIMEDOUT */
    if (__builtin_expect(w->test_crash, 0) && io->res == (int64_t)io->len)
        test_crash_now();
    if (!io->counted)
        return;
    struct thread_dir_stats *st = &w->st[io->dir];
    if (io->res == (int64_t)io->len) {
        if (w->paced)
            stats_record_io(st, io->len, slat, clat, lat, t_done - w->due[slot]);
        else if (sync) /* slat 0, clat = lat, and due when prepared: resp = lat */
            stats_record_io_sync(st, io->len, lat);
        else /* due when prepared: resp = lat */
            stats_record_io_unpaced(st, io->len, slat, clat, lat);
        if (__builtin_expect(io->prio, 0))
            stats_record_prio(st, clat);
        mark_coverage(w, io, w->slot_file[slot]);
        if (io->dir == IOG_DIR_WRITE && w->data)
            data_after_write(w->data, io->buf, io->len);
    } else if (!filled_up(w, io)) {
        stats_record_error(st, failure_errno(io, io->offset + done), io->offset + done, t_done);
    }
}

static inline void complete_io(struct iog_worker *w, struct iog_io *io, uint64_t slat,
                               uint64_t clat, uint64_t lat, uint64_t t_done)
{
    complete_io_as(w, io, slat, clat, lat, t_done, 0);
}

/* A request of a synchronous engine: slat 0, clat = lat. */
static inline void complete_io_sync(struct iog_worker *w, struct iog_io *io, uint64_t lat,
                                    uint64_t t_done)
{
    complete_io_as(w, io, 0, lat, lat, t_done, 1);
}

/* A trim, performed here whatever the engine (see the top of this file);
 * an engine that does no I/O completes it at once. */
static inline void perform_trim(struct iog_worker *w, struct iog_io *io, uint32_t slot)
{
    if (w->nfiles) {
        iog_trim(io, w->blkdev[w->slot_file[slot]]);
    } else {
        io->done = 0;
        io->res = io->len;
    }
}

/* Thinktime, sync_every and pass bookkeeping after a request was prepared:
 * after thinktime_blocks requests a pause is due, which starts once nothing
 * is in flight (start_think), as fio quiesces before it thinks: with
 * thinktime_blocks 1 an asynchronous engine issues one request at a time. A
 * verified job's pass issued whole drains before the next pass starts. */
static inline void after_prepare(struct iog_worker *w, const struct iog_io *io)
{
    const struct iog_job_spec *spec = &w->job->spec;
    if (spec->thinktime_ns) {
        uint32_t every = spec->thinktime_blocks ? spec->thinktime_blocks : 1;
        if (++w->think_count >= every) {
            w->think_count = 0;
            w->think_pending = 1;
        }
    }
    if (spec->sync_every && io->dir == IOG_DIR_WRITE && ++w->writes_since_sync >= spec->sync_every)
        w->sync_pending = 1;
    if (__builtin_expect(w->issued >= w->pass_end, 0)) {
        w->pass_end = w->issued - w->issued % w->pass_bytes + w->pass_bytes;
        w->pass_pending = 1;
    }
}

/* The engine's sync, else fsync or fdatasync of every file, nothing in
 * flight; one IOG_DIR_SYNC request whose latency is the whole call. */
static void do_sync(struct iog_worker *w)
{
    int kind = (int)w->job->spec.sync_kind;
    uint64_t t0 = clock_now_ns();
    int err = 0;
    if (w->ops->sync) {
        err = w->ops->sync(w, kind);
    } else {
        for (uint32_t f = 0; f < w->nfiles; f++) {
            int r = kind == IOG_SYNC_FDATASYNC ? fdatasync(w->fds[f]) : fsync(w->fds[f]);
            if (r < 0 && !err)
                err = errno;
        }
    }
    uint64_t t1 = clock_now_ns();
    w->writes_since_sync = 0;
    w->sync_pending = 0;
    if (!err && w->verify)
        verify_synced(w->verify);
    if (t0 < w->count_start)
        return;
    struct thread_dir_stats *st = &w->st[IOG_DIR_SYNC];
    if (err)
        stats_record_error(st, err, w->region_start, t1);
    else
        stats_record_io(st, 0, 0, t1 - t0, t1 - t0, t1 - t0);
}

/* END_FSYNC: after the run of a writing thread (nothing in flight), an
 * fsync of each of its files, each one IOG_DIR_SYNC request. */
static void end_fsync(struct iog_worker *w)
{
    const struct iog_job_spec *spec = &w->job->spec;
    if (!(spec->flags & IOG_JOB_END_FSYNC) || !job_uses_dir(spec, IOG_DIR_WRITE) ||
        PUB_LOAD(&w->s->cancel))
        return;
    struct thread_dir_stats *st = &w->st[IOG_DIR_SYNC];
    int synced = 1;
    for (uint32_t f = 0; f < w->nfiles; f++) {
        uint64_t t0 = clock_now_ns();
        int r = fsync(w->fds[f]);
        int err = r < 0 ? errno : 0;
        uint64_t t1 = clock_now_ns();
        synced = synced && !err;
        if (t0 < w->count_start)
            continue;
        if (err)
            stats_record_error(st, err, w->region_start, t1);
        else
            stats_record_io(st, 0, 0, t1 - t0, t1 - t0, t1 - t0);
    }
    if (synced && w->verify)
        verify_synced(w->verify);
}

/* verify_backlog: the writes completed since the last read-back are due to
 * be read back (with nothing in flight). */
static inline int verify_due(const struct iog_worker *w)
{
    return w->verify && verify_backlog_due(w->verify);
}

/* Issuing pauses, and what is in flight drains, before a sync, a
 * verification read-back or the next pass of a verified job. */
static inline int must_drain(const struct iog_worker *w)
{
    return w->sync_pending || w->think_pending || w->pass_pending || verify_due(w);
}

/* The thinktime pause due, from now: nothing is in flight. */
static void start_think(struct iog_worker *w)
{
    w->think_pending = 0;
    w->think_until = clock_now_ns() + w->job->spec.thinktime_ns;
}

static void verify_batch(struct iog_worker *w)
{
    verify_readback_batch(w->verify, w->fds, &w->s->cancel);
}

/* The earliest time the chosen request of `slot` may be prepared. */
static inline uint64_t ready_at(const struct iog_worker *w, uint32_t slot)
{
    return w->due[slot] > w->think_until ? w->due[slot] : w->think_until;
}

/* Flow control (flow.h): until this thread may issue its next request;
 * 0 when it must stop meanwhile (its job's stop word, or its runtime is over). A
 * thread with requests in flight asks again after each reap instead. */
static int flow_wait(struct iog_worker *w)
{
    uint64_t weight = w->job->spec.flow_weight, pause = w->job->spec.flow_sleep_ns;
    while (!flow_admit(w->flow, &w->flow_count, weight)) {
        uint64_t now = clock_now_ns();
        if (w->stop_at && now >= w->stop_at && now >= w->count_start)
            return 0;
        if (pause) {
            if (!sleep_until(w, now + pause))
                return 0;
        } else {
            if (PUB_LOAD(&w->job->stop))
                return 0;
            sched_yield();
        }
    }
    return 1;
}

/* Synchronous engines: one request at a time, two clock reads per request
 * (a third when paced). */
static void run_sync(struct iog_worker *w)
{
    struct iog_io *io = &w->ios[0];
    const struct iog_engine_ops *ops = w->ops;
    for (;;) {
        if (w->flow && !flow_wait(w))
            break;
        choose_io(w, io, 0);
        if (w->paced) {
            uint64_t ready = ready_at(w, 0);
            if (w->stop_at && ready >= w->stop_at) {
                /* nothing more is due within the runtime: the run still
                 * lasts until stop_at */
                if (work_left(w))
                    sleep_until(w, w->stop_at);
                break;
            }
            if (!sleep_until(w, ready))
                break;
        }
        uint64_t t0 = clock_now_ns();
        if (!admit_io(w, io, t0))
            break;
        if (!w->due[0])
            w->due[0] = t0;
        if (w->watch)
            watch_issue(w, io, 0, t0);
        if (io->dir == IOG_DIR_TRIM)
            perform_trim(w, io, 0);
        else
            ops->prep(w, io);
        uint64_t t1 = clock_now_ns();
        complete_io_sync(w, io, t1 - t0, t1);
        after_prepare(w, io);
        if (w->think_pending)
            start_think(w);
        if (w->sync_pending)
            do_sync(w);
        if (verify_due(w))
            verify_batch(w);
        w->pass_pending = 0; /* one request at a time: nothing to drain */
    }
    /* one request at a time: every counted request saw depth 1 */
    for (uint32_t d = 0; d < IOG_DIR_COUNT; d++) {
        if (d == IOG_DIR_SYNC)
            continue;
        struct thread_dir_stats *st = &w->st[d];
        uint64_t n = st->ios + st->errors;
        st->qd_sum = st->qd_samples = st->qd_hist[0] = n;
    }
}

static int transient(int rc)
{
    return rc == -EINTR || rc == -EAGAIN || rc == -EBUSY;
}

/* After a completion of an asynchronous engine: 1 when the transfer was
 * short and the remainder is prepared again (the request stays outstanding;
 * its latency runs on until its last completion), else 0, with res = len
 * when the request is complete in full. */
static inline int continue_short(struct iog_worker *w, struct iog_io *io)
{
    if (io->res <= 0)
        return 0; /* failed, or nothing moved (end of file): an error */
    uint64_t left = io->len - io->done;
    if ((uint64_t)io->res >= left) {
        io->res = io->len;
        return 0;
    }
    if (w->watch &&
        __atomic_load_n(&w->watch[io - w->ios].issued_ns, __ATOMIC_RELAXED) == WATCH_CLAIMED)
        return 0; /* past its timeout: complete_io drops it */
    io->done += (uint32_t)io->res;
    int rc = w->ops->prep(w, io);
    if (rc < 0) {
        io->res = rc;
        return 0;
    }
    return 1;
}

/* Asynchronous engines: keep up to iodepth requests in flight; after a stop
 * (limit reached, cancel, fatal error) drain what is still in flight.
 * Prepared requests the kernel did not take yet (a short or transient
 * submit) stay queued, in order, and go with the next submit. A request
 * chosen but not yet due keeps its slot while completions are reaped until
 * its due time. Before a sync, everything in flight completes.
 *
 * Batching (struct iog_job_spec): prepared requests wait until batch_submit
 * of them are pending or nothing more can be prepared now, then go in one
 * submit. By default (1) each request is submitted as soon as it is
 * prepared, which gets the device working earliest: measured on a virtio
 * disk at iodepth 32, batching a whole refill into one submit cost ~10% IOPS
 * because every request of the batch waited for the whole submission. A reap
 * waits for batch_complete_min completions (at most what is in flight) and
 * takes up to batch_complete_max, by default as many as the minimum (fio's
 * default): each completion is replaced before the next is taken, which keeps
 * the depth asked. Measured with libaio at iodepth 32 on a virtio disk,
 * taking every completion present at once kept 16.8 in flight at submission
 * (Little's law: 28.2), one at a time 32.0 (31.8), as fio (31.8). Once the
 * queue held iodepth requests, it drains (reaping) to depth_low before
 * requests are prepared again. */
static void run_async(struct iog_worker *w)
{
    const struct iog_engine_ops *ops = w->ops;
    const struct iog_job_spec *spec = &w->job->spec;
    uint32_t depth = spec->iodepth;
    uint32_t batch = spec->batch_submit ? spec->batch_submit : 1;
    uint32_t cmin = spec->batch_complete_min ? spec->batch_complete_min : 1;
    uint32_t cmax = spec->batch_complete_max ? spec->batch_complete_max : cmin;
    uint32_t low = spec->depth_low ? spec->depth_low : depth;
    uint32_t nfree = depth, inflight = 0, npending = 0;
    struct iog_io **pending = w->pending;
    struct iog_io *chosen = NULL; /* chosen, waiting to be due */
    int stopping = 0;
    int refill = 1; /* 0 from a full queue until it drained to low */

    for (;;) {
        uint64_t deadline = 0;
        int flow_held = 0; /* the flow holds the next request: reap first */
        while (!stopping && !must_drain(w) && npending < batch && refill && (chosen || nfree > 0)) {
            if (!chosen) {
                if (w->flow && !flow_admit(w->flow, &w->flow_count, spec->flow_weight)) {
                    if (inflight > 0 || npending > 0) {
                        flow_held = 1;
                        if (spec->flow_sleep_ns)
                            deadline = clock_now_ns() + spec->flow_sleep_ns;
                        break;
                    }
                    if (!flow_wait(w)) {
                        stopping = 1;
                        break;
                    }
                }
                chosen = w->free_slots[--nfree];
                choose_io(w, chosen, (uint32_t)(chosen - w->ios));
            }
            struct iog_io *io = chosen;
            uint32_t slot = (uint32_t)(io - w->ios);
            uint64_t t = clock_now_ns();
            if (w->paced) {
                uint64_t ready = ready_at(w, slot);
                if (ready > t) {
                    if (w->stop_at && ready >= w->stop_at) {
                        /* nothing more is due within the runtime: reap
                         * until stop_at, when admit_io stops the run */
                        if (t >= w->stop_at || !work_left(w)) {
                            stopping = 1;
                            break;
                        }
                        ready = w->stop_at;
                    }
                    if (inflight > 0 || npending > 0) {
                        deadline = ready; /* reap until then */
                        break;
                    }
                    if (!sleep_until(w, ready)) {
                        stopping = 1;
                        break;
                    }
                    t = clock_now_ns();
                }
            }
            if (!admit_io(w, io, t)) {
                stopping = 1;
                break;
            }
            chosen = NULL;
            io->t_prep = t;
            io->done = 0;
            if (!w->due[slot])
                w->due[slot] = t;
            if (w->watch)
                watch_issue(w, io, slot, t);
            if (io->dir == IOG_DIR_TRIM) { /* not queued: performed now */
                if (io->counted)
                    stats_record_qd(&w->st[IOG_DIR_TRIM], inflight + npending + 1);
                perform_trim(w, io, slot);
                uint64_t t1 = clock_now_ns();
                complete_io_sync(w, io, t1 - t, t1);
                w->free_slots[nfree++] = io;
                after_prepare(w, io);
                continue;
            }
            int rc = ops->prep(w, io);
            if (rc < 0) { /* no room in the queue: not expected, stop cleanly */
                io->res = rc;
                complete_io(w, io, 0, 0, 0, t);
                w->free_slots[nfree++] = io;
                stopping = 1;
                break;
            }
            pending[npending++] = io;
            after_prepare(w, io);
        }
        if (npending > 0) {
            int rc = ops->submit(w);
            if (rc > 0) {
                uint32_t took = (uint32_t)rc < npending ? (uint32_t)rc : npending;
                uint64_t t = clock_now_ns();
                for (uint32_t i = 0; i < took; i++) {
                    if (pending[i]->done)
                        continue; /* the rest of a short transfer: submitted before */
                    pending[i]->t_sub = t;
                    if (pending[i]->counted)
                        stats_record_qd(&w->st[pending[i]->dir], inflight + i + 1);
                }
                inflight += took;
                npending -= took;
                memmove(pending, pending + took, npending * sizeof(*pending));
                w->nsubmits += t >= w->count_start;
                if (inflight == depth && low < depth)
                    refill = 0;
            } else if (rc == 0 || transient(rc)) {
                if (inflight == 0) {
                    sched_yield(); /* nothing to reap: retry the submit */
                    continue;
                }
            } else {
                /* The queue is unusable: fail what was never submitted and
                 * only collect what is already in flight. */
                uint64_t t = clock_now_ns();
                for (uint32_t i = 0; i < npending; i++) {
                    pending[i]->res = rc;
                    complete_io(w, pending[i], 0, 0, 0, t);
                    w->free_slots[nfree++] = pending[i];
                }
                npending = 0;
                stopping = 1;
            }
        }
        if (!stopping && !must_drain(w) && !deadline && !flow_held && refill &&
            (chosen || nfree > 0) && npending == 0)
            continue; /* room for more: issue before reaping */
        if (inflight == 0) {
            if (npending > 0)
                continue;
            if (w->sync_pending) {
                do_sync(w);
                continue;
            }
            if (verify_due(w)) {
                verify_batch(w);
                continue;
            }
            if (w->think_pending) {
                start_think(w);
                continue;
            }
            w->pass_pending = 0; /* drained: the next pass may start */
            if (stopping)
                break;
            continue;
        }
        int n = ops->reap(w, cmin < inflight ? cmin : inflight, w->done, cmax, deadline);
        if (n < 0) {
            if (transient(n) || n == -ETIME)
                continue;
            break; /* completions cannot be collected any more */
        }
        uint64_t t = clock_now_ns();
        w->nreaps += n > 0 && t >= w->count_start;
        for (int i = 0; i < n; i++) {
            struct iog_io *io = w->done[i];
            if (continue_short(w, io)) {
                pending[npending++] = io;
                continue;
            }
            complete_io(w, io, io->t_sub - io->t_prep, t - io->t_sub, t - io->t_prep, t);
            w->free_slots[nfree++] = io;
        }
        inflight -= (uint32_t)n;
        if (inflight <= low)
            refill = 1;
    }
}

/* Rate schedules start at the job's start; the threads of a job interleave
 * their first requests rather than all starting at once. */
static void start_schedules(struct iog_worker *w)
{
    const struct iog_job_spec *spec = &w->job->spec;
    for (uint32_t d = 0; d < IOG_DATA_DIRS; d++) {
        struct dir_plan *p = &w->plan[d];
        if (!p->rated)
            continue;
        double first = p->gap_per_io;
        if (p->gap_per_byte * (double)p->min_len > first)
            first = p->gap_per_byte * (double)p->min_len;
        p->next_due = (double)w->run_start + first * w->index / spec->numjobs;
    }
}

/* After the run (not after a cancel or a fatal failure): verify_backlog
 * reads back the writes since the last read-back; otherwise every block
 * written is read back while the thread counts as verifying (state VERIFY).
 * Returns 1 when it counted itself as verifying. */
static int verify_after_run(struct iog_worker *w)
{
    struct iog_session *s = w->s;
    if (!w->verify || PUB_LOAD(&s->cancel) || verify_stopped(w->verify))
        return 0;
    if (w->job->spec.verify_backlog) {
        verify_batch(w);
        return 0;
    }
    pthread_mutex_lock(&s->lock);
    PUB_STORE(&w->job->threads_verifying, w->job->threads_verifying + 1);
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    verify_readback_all(w->verify, w->fds, &s->cancel);
    return 1;
}

/* The job's ioprio, set by the thread for itself (ioprio_set applies to the
 * calling thread); what ioprio_get then says is kept for the job's stats.
 * 0 or a negative errno. */
static int set_ioprio(struct iog_worker *w)
{
    uint32_t prio = w->job->spec.ioprio;
    if (!prio)
        return 0;
    if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, (int)prio) < 0)
        return -errno;
    long got = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0);
    PUB_STORE(&w->ioprio_seen, got < 0 ? 0 : (uint64_t)got);
    return 0;
}

/* iog_job_spec.cpus, or the CPUs of numa_cpu_nodes: the thread onto its CPUs
 * (with IOG_JOB_CPUS_SPLIT, the one of its index); then the memory policy of
 * the thread and its buffers (numa_mem_mode). 0, or a negative errno. */
static int set_cpus(struct iog_worker *w)
{
    const struct iog_job_spec *spec = &w->job->spec;
    if (spec->numa_cpu_nodes) {
        cpu_set_t nodes;
        int rc = numa_node_cpus(spec, &nodes);
        if (rc == 0 && pthread_setaffinity_np(pthread_self(), sizeof(nodes), &nodes) != 0)
            rc = -EINVAL;
        if (rc < 0)
            return rc;
    }
    int rc = numa_place_memory(spec, w->bufmem, w->buf_len);
    if (rc < 0)
        return rc;
    uint32_t n = 0;
    for (uint32_t k = 0; k < IOG_CPU_WORDS; k++)
        n += (uint32_t)__builtin_popcountll(spec->cpus[k]);
    if (!n)
        return 0;
    uint32_t pick = (spec->flags & IOG_JOB_CPUS_SPLIT) ? w->index % n : UINT32_MAX;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (uint32_t c = 0, seen = 0; c < IOG_CPUS_MAX && c < CPU_SETSIZE; c++) {
        if (!(spec->cpus[c / 64] >> (c % 64) & 1))
            continue;
        if (pick == UINT32_MAX || seen == pick)
            CPU_SET(c, &set);
        seen++;
    }
    return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

void *worker_main(void *arg)
{
    struct iog_worker *w = arg;
    struct iog_session *s = w->s;
    int rc = 0;
    /* start_delay_ns (w->run_start until the gate), then what the thread needs
     * to issue; a thread stopped meanwhile still passes the gate, so that the
     * others of its cohort are not kept waiting for it */
    if (w->run_start <= clock_now_ns() || sleep_until(w, w->run_start)) {
        rc = set_ioprio(w);
        if (rc == 0)
            rc = set_cpus(w);
        if (rc == 0 && w->ops->thread_start)
            rc = w->ops->thread_start(w);
    }
    if (!run_gate(w))
        goto ran; /* stopped before its job started: nothing counted */
    start_schedules(w);
    if (w->flow)
        flow_join(w->flow, w->job->spec.flow_weight);
    if (rc < 0) /* the priority or the engine cannot be had: every request would fail */
        stats_record_error(&w->st[job_fixed_dir(&w->job->spec)], -rc, w->region_start,
                           clock_now_ns());
    else if (!w->ops->submit) /* synchronous: prep() performs the request */
        run_sync(w);
    else
        run_async(w);
    if (rc >= 0) {
        end_fsync(w);
        if (w->job->spec.exit_mask && !PUB_LOAD(&s->cancel)) /* exitall */
            session_end_jobs(s, w->job->spec.exit_mask);
    }
    if (w->flow)
        flow_leave(w->flow, w->flow_count, w->job->spec.flow_weight);
ran:;
    /* Counted time runs until the loop ended (last completion or the stop
     * decision) and the end sync, so a time-based job reports at least its
     * runtime. */
    uint64_t t_end = clock_now_ns();
    uint64_t runtime = t_end > w->count_start ? t_end - w->count_start : 0;
    PUB_STORE(&w->runtime_ns, runtime);
    if (w->watch) /* nothing of this thread is outstanding any more */
        for (uint32_t i = 0; i < w->job->spec.iodepth; i++)
            __atomic_store_n(&w->watch[i].issued_ns, 0, __ATOMIC_RELAXED);
    /* the verify state file is complete once nothing more is written */
    verify_finish(w->verify, rc >= 0 && !PUB_LOAD(&s->cancel));
    int verified = verify_after_run(w);
    worker_teardown(w);

    pthread_mutex_lock(&s->lock);
    if (verified)
        PUB_STORE(&w->job->threads_verifying, w->job->threads_verifying - 1);
    PUB_STORE(&w->job->threads_done, w->job->threads_done + 1);
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    return NULL;
}
