/*
 * internal.h - the library's private data model of a session: jobs, their
 * worker threads with per-thread statistics, and the per-job interval series
 * kept by the background (monitor) thread, with the functions the private
 * modules call on each other. Never installed: the public API is iogate.h.
 * Shared by validate.c (job specs), session.c (lifecycle), query.c
 * (accessors), worker.c (the I/O loop), monitor.c (the background thread:
 * layout, run start, series and completion), analysis.c (the measurement of
 * written data), layout.c and the engines.
 */
#ifndef IOGATE_INTERNAL_H
#define IOGATE_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "data.h"
#include "dist.h"
#include "engine.h"
#include "flow.h"
#include "iogate.h"
#include "randmap.h"
#include "rng.h"
#include "stats.h"

struct iog_session;
struct iog_job;
struct verify_state;
struct analysis;

/* How one direction of a worker picks request sizes, offsets and due times
 * (fixed at setup from the job spec; see worker.c). */
struct dir_plan {
    uint32_t fixed_len; /* not 0: every request has this size (fast path) */
    uint32_t nbs;
    uint32_t cum_weight[IOG_BS_ENTRIES_MAX]; /* running sums of the entries' weights */
    uint64_t bs_lo[IOG_BS_ENTRIES_MAX];
    uint64_t bs_steps[IOG_BS_ENTRIES_MAX]; /* multiples of lo in [lo, hi] */
    uint64_t max_len;
    uint64_t min_len;
    uint64_t align;      /* random offsets are multiples of this from the region start */
    uint64_t nblocks;    /* aligned start positions for a request of min_len */
    struct dist dist;    /* where random requests land, over nblocks */
    int rated;           /* a rate schedule applies */
    double gap_per_io;   /* ns between requests from rate_iops, 0 if none */
    double gap_per_byte; /* ns per byte from rate_bytes, 0 if none */
    double next_due;     /* absolute ns at which the next request is due */
};

/* What the monitor sees of one request slot when the job has io_timeout_ns:
 * the worker publishes the request (relaxed stores, then issued_ns with
 * release) before handing it to the engine and takes it back with an
 * exchange when it completes; the monitor claims an overdue one by swapping
 * issued_ns to WATCH_CLAIMED, and the worker then drops its result. */
struct io_watch {
    uint64_t issued_ns; /* 0: idle; the slot's request is outstanding since then */
    uint64_t offset;
    uint32_t len;
    uint16_t dir;
    uint16_t file;
};
#define WATCH_CLAIMED UINT64_MAX

/* ETIMEDOUT errors the monitor counted for a job in one direction (the
 * workers' stats have a single writer each, so these are kept apart and
 * merged when read). Relaxed atomics, written by the monitor only. */
struct timeout_errors {
    uint64_t errors;
    uint64_t first_offset;
    uint64_t first_ns; /* when the first one became overdue */
};

/* iog_worker.file_service: IOG_JOB_FILES_* as one value. */
enum { FILES_ROUNDROBIN, FILES_RANDOM, FILES_SEQUENTIAL };

struct iog_worker {
    struct thread_dir_stats st[IOG_DIR_COUNT]; /* written only by this worker */
    struct iog_session *s;
    struct iog_job *job;
    const struct iog_engine_ops *ops; /* the job's engine's */
    uint32_t index;                   /* thread index within the job */
    int fd;                           /* the first file's descriptor (fds[0]), -1 when none */
    int fds[IOG_FILES_MAX];
    uint32_t nfiles; /* descriptors open in fds */
    void *engine_data;
    struct data_writer *data; /* write buffer contents and sampling; lives until
                                 session destroy, so job stats can merge it */
    int refill;               /* data gives writes new contents before each one */
    uint64_t *coverage;       /* bitmap of touched chunks, lives until destroy */
    /* when the job verifies: its state; the results live until destroy */
    struct verify_state *verify;
    void *bufmem;
    size_t buf_stride;          /* bytes between two slots' buffers in bufmem */
    size_t buf_len;             /* bytes of bufmem, a mapping of its own */
    struct iog_io *ios;         /* iodepth request slots */
    struct iog_io **free_slots; /* stack of idle slots */
    struct iog_io **done;       /* completions of one reap */
    struct iog_io **pending;    /* prepared, not yet taken by the kernel */
    uint64_t *due;              /* due time of each slot's request */
    uint32_t *slot_file;        /* file index of each slot's request */
    struct io_watch *watch;     /* iodepth entries when io_timeout_ns, lives until destroy */
    int test_crash;             /* IOG_JOB_TEST_CRASH on the job's first thread */
    struct rng rng;
    /* issue plan */
    struct dir_plan plan[IOG_DATA_DIRS]; /* per slot: trims use slot 1 (dir_slot) */
    int mixed, random, rated, paced;
    int mapped; /* random offsets from the random map (IOG_JOB_RANDOM_MAP) */
    struct randmap map;
    int trims;                         /* the job trims: trims are performed here */
    int pair_write;                    /* trimwrite: each trim is followed by a write */
    int write_due;                     /* the next request is the write of the last trim */
    uint32_t pair_len, pair_file;      /* that trim's size and file... */
    uint64_t pair_off;                 /* ...and offset */
    uint8_t blkdev[IOG_FILES_MAX];     /* trims: the file is a block device */
    uint64_t region_start, region_end; /* in each file */
    uint64_t file_size;                /* region_end - region_start */
    uint64_t seq_off[IOG_FILES_MAX];
    uint32_t next_file;
    int file_service;     /* FILES_* (above): how requests go from file to file */
    uint64_t file_share;  /* bytes a pass moves in each file (FILES_SEQUENTIAL: then the next) */
    uint64_t file_left;   /* FILES_SEQUENTIAL: of the current file's share */
    uint64_t think_until; /* thinktime: no request before this (absolute ns) */
    uint32_t think_count; /* requests since the last think */
    int think_pending;    /* a think is due once nothing is in flight */
    uint32_t writes_since_sync;
    int sync_pending;      /* sync_every writes were prepared: drain, then sync */
    uint64_t pass_bytes;   /* verify: bytes of one pass over the region (0: no drain) */
    uint64_t pass_end;     /* verify: issued bytes at which the current pass ends */
    int pass_pending;      /* verify: a pass was issued whole; drain before the next */
    uint64_t issued;       /* bytes issued, the ramp's too (as fio counts them) */
    uint64_t nissued;      /* requests issued, the ramp's too */
    int counting;          /* a counted request (after the ramp) was issued */
    uint64_t byte_limit;   /* stop once issued reaches it (UINT64_MAX: none; 0 once a
                              IOG_JOB_FILL write found the filesystem full) */
    int fill;              /* IOG_JOB_FILL */
    struct iog_flow *flow; /* the job's flow, NULL when none */
    uint64_t flow_count;   /* requests this thread issued in its flow */
    uint64_t ios_limit;    /* stop once nissued reaches it (UINT64_MAX: none) */
    /* The thread's clock (absolute ns), its job's (run_gate), taken under the
     * session lock when the thread leaves the start gate. Before: run_start
     * is the end of start_delay_ns, count_start UINT64_MAX (nothing counts)
     * and stop_at 0. */
    uint64_t run_start;   /* the run (and rate schedules) begins: the job's start */
    uint64_t count_start; /* counting begins: run_start + ramp_ns */
    uint64_t stop_at;     /* issuing stops (after the first counted request), 0: never */
    uint64_t runtime_ns;  /* counted time, published when the thread ends */
    uint64_t nsubmits;    /* submit calls that took requests, in counted time */
    uint64_t nreaps;      /* reap calls that returned completions, in counted time */
    pthread_t thread;
    int thread_started;
    /* I/O priorities: the job has a command priority table; what
     * ioprio_get reported after the thread set the job's ioprio */
    int cmdprio;
    uint64_t ioprio_seen;
};

struct iog_series {
    struct iog_interval *v;
    size_t n, cap;
};

/* What the monitor saw of a job's cumulative counters at its last interval. */
struct mon_snap {
    uint64_t ios, bytes, clat_sum, clat_count, lat_sum, lat_count, resp_sum, resp_count;
};

struct iog_job {
    struct iog_job_spec spec;
    const struct iog_engine *engine;
    uint32_t index;
    uint32_t nfiles;                  /* 1 for an engine that does no I/O (null) */
    const char *files[IOG_FILES_MAX]; /* into spec.filename */
    uint64_t file_size;               /* each file's region: size / nfiles */
    uint64_t coverage_chunk;          /* bytes per coverage bit, a power of two */
    uint32_t coverage_shift;          /* log2(coverage_chunk) */
    uint64_t coverage_total;          /* chunks over all files */
    struct iog_worker **workers;
    uint32_t nworkers;
    struct iog_flow *flow; /* its flow (flow.h), NULL without a flow_weight */
    uint64_t interval_ns;
    /* The job's clock (absolute ns), set under the session lock by the thread
     * that opens its start gate (monitor.c, run_gate): run_start when the
     * threads of its cohort were all ready to issue, count_start after the
     * ramp; UINT64_MAX (and started 0) until then. */
    uint64_t run_start;
    uint64_t count_start;
    int started;
    /* The start gate: the jobs with the same start_delay_ns (a cohort) start
     * together; cohort is the index of the first of them, whose
     * cohort_threads and cohort_ready count the threads of all of them.
     * Written under the session lock. */
    uint32_t cohort;
    uint32_t cohort_threads;
    uint32_t cohort_ready;
    uint32_t threads_done; /* relaxed atomic, written under the session lock */
    /* the job's stop word (enum job_stop), relaxed atomic, checked by its
     * workers before every request instead of the session's cancel */
    int stop;
    /* threads reading back after their run (not yet done); relaxed atomic,
     * written under the session lock */
    uint32_t threads_verifying;
    struct timeout_errors timeouts[IOG_DIR_COUNT];
    /* layout plan, made by start, carried out by the background thread;
     * per file: open for writing while it must be extended, else -1 */
    int layout_fd[IOG_FILES_MAX];
    uint64_t layout_from[IOG_FILES_MAX], layout_to[IOG_FILES_MAX]; /* extend [from, to) */
    uint32_t layout_how[IOG_FILES_MAX];                            /* IOG_WRITE_LAYOUT_* */
    /* monitor-owned */
    struct iog_series series[IOG_DIR_COUNT];
    struct mon_snap prev[IOG_DIR_COUNT];
    uint64_t *prev_hist; /* [dir][clat, lat, resp][bucket] */
    uint64_t last_end_ns;
    uint64_t next_end_ns;
    int boundaries_over; /* past runtime_ns: only the final interval is left */
    int finished;
};

/* A watched device (diskstat.c): its stat file and the readings the monitor took. */
struct disk_watch {
    int fd;
    struct iog_disk_sample *v;
    size_t n, cap;
};

struct iog_session {
    struct iog_job *jobs;
    uint32_t njobs;
    int state;             /* enum iog_state; release-stored, acquire-loaded */
    int starting;          /* set by the first iog_session_start */
    int started;           /* release-stored after the background thread runs */
    int cancel;            /* relaxed atomic; set with every job's stop (session_cancel) */
    uint64_t t_start_call; /* iog_session_start entry */
    uint64_t t_run_start;  /* end of layout, start of the run clock; 0 before */
    /* earliest count start over the jobs started so far; UINT64_MAX before.
     * Fixed once it passed: a job started later counts from later. */
    uint64_t t_count_start;
    int counting; /* t_count_start passed and was seen (monitor.c); under the lock */
    uint64_t t_done;
    uint64_t run_expected_ns; /* longest ramp + runtime over jobs, 0 if unknown */
    uint64_t layout_total;    /* set by start before the background thread */
    uint64_t layout_bytes;    /* relaxed atomic, written by the background thread */
    pthread_mutex_t lock;
    pthread_cond_t cond; /* CLOCK_MONOTONIC; worker done, monitor done */
    int monitor_done;    /* every final interval emitted */
    pthread_t monitor;
    int monitor_started;
    uint64_t *scratch_hist;    /* monitor-owned */
    uint64_t generation;       /* of verified blocks, fixed at create */
    uint32_t data_writers;     /* worker threads that write, fixed at create */
    struct analysis *analysis; /* the analysis thread, while it runs (analysis.c) */
    struct iog_flow *flows;    /* flow.h: up to one per job, nflows used */
    uint32_t nflows;
    uint64_t watch_tick_ns; /* how often the monitor looks for overdue requests, 0: never */
    struct iog_fault fault; /* the first fault, written once by the monitor */
    int fault_set;          /* release-stored after fault is filled */
    /* device statistics: watched before start, read by the monitor only */
    struct disk_watch disks[IOG_DISKS_MAX];
    uint32_t ndisks;
};

/* A job's stop word: its workers issue nothing more once it is not
 * JOB_GO. JOB_ENDED (exitall of a job, iog_job_spec.exit_mask) stops them
 * as the end of their runtime would: end fsync and verify read-back still
 * happen. JOB_CANCELLED (the session's cancel) stops everything. */
enum job_stop { JOB_GO = 0, JOB_ENDED = 1, JOB_CANCELLED = 2 };

/* Cancels the session: every job stops, nothing more is done after the run. */
static inline void session_cancel(struct iog_session *s)
{
    __atomic_store_n(&s->cancel, 1, __ATOMIC_RELAXED);
    for (uint32_t j = 0; j < s->njobs; j++)
        __atomic_store_n(&s->jobs[j].stop, JOB_CANCELLED, __ATOMIC_RELAXED);
}

/* exitall: ends the jobs of `mask` (bit j: job j; bit 63: also every job
 * after it) that are still going, as if their runtime had run out. */
static inline void session_end_jobs(struct iog_session *s, uint64_t mask)
{
    for (uint32_t j = 0; j < s->njobs; j++) {
        if (!(mask >> (j < 63 ? j : 63) & 1))
            continue;
        int go = JOB_GO;
        __atomic_compare_exchange_n(&s->jobs[j].stop, &go, JOB_ENDED, 0, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED);
    }
}

/* Whether the job's rw mode trims (IOG_RW_TRIM .. IOG_RW_RANDTRIMWRITE). */
static inline int job_trims(const struct iog_job_spec *spec)
{
    return spec->rw >= IOG_RW_TRIM && spec->rw <= IOG_RW_RANDTRIMWRITE;
}

/* The direction of a job that is not a mix (READ for mixes, TRIM for the
 * trim + write pairs). */
static inline uint32_t job_fixed_dir(const struct iog_job_spec *spec)
{
    if (job_trims(spec))
        return IOG_DIR_TRIM;
    return (spec->rw == IOG_RW_WRITE || spec->rw == IOG_RW_RANDWRITE) ? IOG_DIR_WRITE
                                                                      : IOG_DIR_READ;
}

/* Whether the job's rw mode ever issues requests of direction `dir`. */
static inline int job_uses_dir(const struct iog_job_spec *spec, uint32_t dir)
{
    switch (spec->rw) {
    case IOG_RW_READ:
    case IOG_RW_RANDREAD:
        return dir == IOG_DIR_READ;
    case IOG_RW_WRITE:
    case IOG_RW_RANDWRITE:
        return dir == IOG_DIR_WRITE;
    case IOG_RW_TRIM:
    case IOG_RW_RANDTRIM:
        return dir == IOG_DIR_TRIM;
    case IOG_RW_TRIMWRITE:
    case IOG_RW_RANDTRIMWRITE:
        return dir == IOG_DIR_TRIM || dir == IOG_DIR_WRITE;
    default:
        return dir < IOG_DATA_DIRS;
    }
}

/* Whether slot d (< IOG_DATA_DIRS) of the spec's per-direction arrays (block
 * sizes, blockalign, rates) is used: its direction's, and slot 1 for trims. */
static inline int job_uses_slot(const struct iog_job_spec *spec, uint32_t d)
{
    return job_uses_dir(spec, d) || (d == IOG_DIR_WRITE && job_trims(spec));
}

/* The slot of the spec's per-direction arrays that describes direction dir. */
static inline uint32_t dir_slot(uint32_t dir)
{
    return dir == IOG_DIR_TRIM ? IOG_DIR_WRITE : dir;
}

/* diskstat.c: parses a stat line into at most IOG_DISK_COUNTERS counters;
 * returns how many it read. */
uint32_t disk_parse(const char *line, uint64_t counters[IOG_DISK_COUNTERS]);
/* diskstat.c (monitor): reads every watched device as of the absolute time
 * `at` (on or after the session's count start), unless a reading as late
 * exists. */
void disk_sample(struct iog_session *s, uint64_t at);
/* diskstat.c: closes the watched files and frees their readings. */
void disk_free(struct iog_session *s);

/* validate.c: splits a spec's filename list; the count, or -EINVAL. */
int job_file_names(const struct iog_job_spec *spec, const char *names[IOG_FILES_MAX]);
/* validate.c: copies job i of the caller's array (whatever its struct_size)
 * into *out and checks it; 0 or a negative errno with a message. */
int job_spec_read(const struct iog_job_spec *jobs, uint32_t i, struct iog_job_spec *out, char *err,
                  size_t errlen);

/* worker.c */
int worker_setup(struct iog_worker *w, char *err, size_t errlen);
void worker_teardown(struct iog_worker *w);
void *worker_main(void *arg);

/* monitor.c */
int monitor_prepare(struct iog_session *s);
/* monitor.c: the start gate of a worker thread ready to issue (after its
 * start delay, its priority and engine set): the last thread of its cohort to
 * get there starts the cohort's clocks; the thread waits for its job's and
 * takes it. 1 when the thread runs, 0 when its job was stopped before. */
int run_gate(struct iog_worker *w);
void *monitor_main(void *arg);
void monitor_free(struct iog_session *s);

/* analysis.c: starts the analysis thread when some worker writes (after
 * worker setup); finish (by the background thread, or by a failed start)
 * makes it measure what is still captured and joins it. */
int analysis_start(struct iog_session *s, char *err, size_t errlen);
void analysis_finish(struct iog_session *s);

/* layout.c */
int layout_prepare(struct iog_session *s, char *err, size_t errlen);
int layout_run(struct iog_session *s);
void layout_release(struct iog_session *s);
int layout_open(const struct iog_job *job, uint32_t file, int *fd, char *err, size_t errlen);
void layout_invalidate(struct iog_session *s);

#define SET_ERR(err, errlen, ...)                                                                  \
    do {                                                                                           \
        if ((err) && (errlen) > 0)                                                                 \
            snprintf((err), (errlen), __VA_ARGS__);                                                \
    } while (0)

#endif
