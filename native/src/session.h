/*
 * session.h - the private data model of a session: jobs, their worker
 * threads with per-thread statistics, and the per-job interval series kept by
 * the background (monitor) thread. Shared by session.c (lifecycle and
 * accessors), worker.c (the I/O loop), monitor.c (the background thread:
 * layout, run start, series and completion) and layout.c.
 */
#ifndef IOGATE_SESSION_H
#define IOGATE_SESSION_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "data.h"
#include "engine.h"
#include "iogate.h"
#include "rng.h"
#include "stats.h"

struct iog_session;
struct iog_job;

struct iog_worker {
    struct thread_dir_stats st[IOG_DIR_COUNT]; /* written only by this worker */
    struct iog_session *s;
    struct iog_job *job;
    const struct iog_engine_ops *ops;
    uint32_t index; /* thread index within the job */
    int fd;
    void *engine_data;
    struct data_writer *data; /* write buffer contents and sampling; lives until
                                 session destroy, so job stats can merge it */
    void *bufmem;
    struct iog_io *ios;         /* iodepth request slots */
    struct iog_io **free_slots; /* stack of idle slots */
    struct iog_io **done;       /* completions of one reap */
    struct iog_io **pending;    /* prepared, not yet taken by the kernel */
    struct rng rng;
    /* issue plan */
    uint64_t region_start, region_end;
    uint64_t seq_off;
    uint64_t nblocks[IOG_DIR_COUNT];
    uint64_t issued;      /* counted bytes issued */
    uint64_t count_start; /* absolute ns at which counting begins */
    uint64_t stop_at;     /* absolute ns at which issuing stops, 0: never */
    uint64_t runtime_ns;  /* counted time, published when the thread ends */
    pthread_t thread;
    int thread_started;
};

struct iog_series {
    struct iog_interval *v;
    size_t n, cap;
};

/* What the monitor saw of a job's cumulative counters at its last interval. */
struct mon_snap {
    uint64_t ios, bytes, clat_sum, clat_count, lat_sum, lat_count;
};

struct iog_job {
    struct iog_job_spec spec;
    const struct iog_engine_ops *ops;
    uint32_t index;
    struct iog_worker **workers;
    uint32_t nworkers;
    uint64_t interval_ns;
    uint64_t count_start;  /* absolute ns */
    uint32_t threads_done; /* relaxed atomic, written under the session lock */
    /* layout plan, made by start, carried out by the background thread */
    int layout_fd;                   /* open for writing while the file must be extended, else -1 */
    uint64_t layout_from, layout_to; /* extend [from, to) */
    /* monitor-owned */
    struct iog_series series[IOG_DIR_COUNT];
    struct mon_snap prev[IOG_DIR_COUNT];
    uint64_t *prev_hist; /* [dir][clat, lat][bucket] */
    uint64_t last_end_ns;
    uint64_t next_end_ns;
    int boundaries_over; /* past runtime_ns: only the final interval is left */
    int finished;
};

struct iog_session {
    struct iog_job *jobs;
    uint32_t njobs;
    int state;              /* enum iog_state; release-stored, acquire-loaded */
    int starting;           /* set by the first iog_session_start */
    int started;            /* release-stored after the background thread runs */
    int cancel;             /* relaxed atomic, checked by workers every request */
    uint64_t t_start_call;  /* iog_session_start entry */
    uint64_t t_run_start;   /* end of layout, start of the run clock; 0 before */
    uint64_t t_count_start; /* earliest count start over jobs; UINT64_MAX before */
    uint64_t t_done;
    uint64_t run_expected_ns; /* longest ramp + runtime over jobs, 0 if unknown */
    uint64_t layout_total;    /* set by start before the background thread */
    uint64_t layout_bytes;    /* relaxed atomic, written by the background thread */
    pthread_mutex_t lock;
    pthread_cond_t cond; /* CLOCK_MONOTONIC; worker done, monitor done */
    int monitor_done;    /* every final interval emitted */
    pthread_t monitor;
    int monitor_started;
    uint64_t *scratch_hist; /* monitor-owned */
};

/* The direction of a job that is not a mix (READ for mixes). */
static inline uint32_t job_fixed_dir(const struct iog_job_spec *spec)
{
    return (spec->rw == IOG_RW_WRITE || spec->rw == IOG_RW_RANDWRITE) ? IOG_DIR_WRITE
                                                                      : IOG_DIR_READ;
}

/* worker.c */
int worker_setup(struct iog_worker *w, char *err, size_t errlen);
void worker_teardown(struct iog_worker *w);
void *worker_main(void *arg);

/* monitor.c */
int monitor_prepare(struct iog_session *s);
void *monitor_main(void *arg);
void monitor_free(struct iog_session *s);

/* layout.c */
int layout_prepare(struct iog_session *s, char *err, size_t errlen);
int layout_run(struct iog_session *s);
void layout_release(struct iog_session *s);
int layout_open(const struct iog_job *job, int *fd, char *err, size_t errlen);

#define SET_ERR(err, errlen, ...)                                                                  \
    do {                                                                                           \
        if ((err) && (errlen) > 0)                                                                 \
            snprintf((err), (errlen), __VA_ARGS__);                                                \
    } while (0)

#endif
