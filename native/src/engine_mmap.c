/*
 * engine_mmap.c - the mmap engine: each file's region of the job is mapped
 * into the worker (MAP_SHARED, from the page below the region start to the
 * region end); a read copies out of the mapping with memcpy, a write copies
 * into it; synchronous, one request at a time. sync_every's fsync and
 * fdatasync both become msync(MS_SYNC) of every mapping (it writes the
 * mapping's dirty pages back and waits for them). O_DIRECT cannot apply to a
 * mapping: a job with IOG_JOB_DIRECT is refused (IOG_ENGINE_NO_DIRECT).
 *
 * A page of the mapping past the end of its file (a file shorter than the
 * region, or truncated during the run) raises SIGBUS when touched. It must
 * not kill the process: the copy runs under a recovery point of its thread
 * (sigsetjmp without the signal mask, no system call per request), and a
 * SIGBUS handler installed once for the process jumps back to it when the
 * faulting address lies in the range that thread is copying; the request
 * then fails as a transfer that moved nothing (res 0, done = the bytes below
 * the faulting page), which the worker counts as ENODATA for a read at or
 * past the end of its file and EIO otherwise. Looking at the file size
 * before each copy instead would be racy (the file can shrink between the
 * look and the copy) and cost a system call per request. A SIGBUS that is
 * not this engine's (another address, another thread) goes to the handler
 * that was there before, or kills the process as it would have without
 * this one. Leaving the handler by siglongjmp leaves SIGBUS unblocked
 * (SA_NODEFER, and unblocked again after a fault), and the handler is
 * checked again at every worker's setup, so a handler installed later by
 * someone else is chained, not lost.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine.h"
#include "internal.h"

struct mmap_file {
    int fd;
    char *base;       /* the mapping */
    size_t len;       /* its length */
    uint64_t map_off; /* file offset of base */
};

struct mmap_data {
    uint32_t nfiles;
    struct mmap_file files[];
};

/* The copy in progress in this thread: its recovery point and the range of
 * the mapping it touches; the address that faulted. */
static __thread sigjmp_buf *copy_jump;
static __thread const char *copy_lo, *copy_hi;
static __thread const char *copy_fault;

static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction prev_bus; /* the handler before ours */

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    sigjmp_buf *jump = copy_jump;
    const char *addr = si->si_addr;
    if (jump && si->si_code > 0 && addr >= copy_lo && addr < copy_hi) {
        copy_fault = addr;
        copy_jump = NULL;
        siglongjmp(*jump, 1);
    }
    /* not a fault of this engine's copy */
    if (prev_bus.sa_flags & SA_SIGINFO) {
        prev_bus.sa_sigaction(sig, si, uc);
    } else if (prev_bus.sa_handler != SIG_DFL && prev_bus.sa_handler != SIG_IGN) {
        prev_bus.sa_handler(sig);
    } else {
        /* as without this handler: the faulting access runs again and the
         * default action ends the process; a sent signal is raised again */
        signal(SIGBUS, SIG_DFL);
        if (si->si_code <= 0)
            raise(SIGBUS);
    }
}

/* Installs on_sigbus unless it is the process's SIGBUS handler already. */
static int install_handler(void)
{
    int rc = 0;
    pthread_mutex_lock(&handler_lock);
    struct sigaction cur;
    if (sigaction(SIGBUS, NULL, &cur) < 0) {
        rc = -errno;
    } else if (!(cur.sa_flags & SA_SIGINFO) || cur.sa_sigaction != on_sigbus) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = on_sigbus;
        sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        prev_bus = cur;
        if (sigaction(SIGBUS, &sa, NULL) < 0)
            rc = -errno;
    }
    pthread_mutex_unlock(&handler_lock);
    return rc;
}

static void mmap_cleanup(struct iog_worker *w)
{
    struct mmap_data *d = w->engine_data;
    if (!d)
        return;
    for (uint32_t f = 0; f < d->nfiles; f++)
        munmap(d->files[f].base, d->files[f].len);
    free(d);
    w->engine_data = NULL;
}

static int mmap_init(struct iog_worker *w, char *err, size_t errlen)
{
    const struct iog_job *job = w->job;
    int rc = install_handler();
    if (rc < 0) {
        SET_ERR(err, errlen, "job %u: cannot install the SIGBUS handler of the mmap engine: %s",
                job->index, strerror(-rc));
        return rc;
    }
    struct mmap_data *d = calloc(1, sizeof(*d) + w->nfiles * sizeof(d->files[0]));
    if (!d) {
        SET_ERR(err, errlen, "job %u: out of memory for mmap state", job->index);
        return -ENOMEM;
    }
    w->engine_data = d;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    int prot = PROT_READ | (job_uses_dir(&job->spec, IOG_DIR_WRITE) ? PROT_WRITE : 0);
    for (uint32_t f = 0; f < w->nfiles; f++) {
        struct mmap_file *mf = &d->files[f];
        mf->fd = w->fds[f];
        mf->map_off = w->region_start & ~(page - 1);
        mf->len = (size_t)(w->region_end - mf->map_off);
        void *p = mmap(NULL, mf->len, prot, MAP_SHARED, mf->fd, (off_t)mf->map_off);
        if (p == MAP_FAILED) {
            rc = -errno;
            SET_ERR(err, errlen, "job %u: mmap of '%s' [%llu, %llu) failed: %s", job->index,
                    job->files[f], (unsigned long long)mf->map_off,
                    (unsigned long long)w->region_end, strerror(-rc));
            mmap_cleanup(w);
            return rc;
        }
        mf->base = p;
        d->nfiles++;
    }
    return 0;
}

static int mmap_prep(struct iog_worker *w, struct iog_io *io)
{
    struct mmap_data *d = w->engine_data;
    const struct mmap_file *mf = d->files;
    while (mf->fd != io->fd)
        mf++;
    char *p = mf->base + (io->offset - mf->map_off);
    sigjmp_buf jump;
    if (sigsetjmp(jump, 0)) {
        /* SIGBUS: the page at copy_fault is past the end of the file. The
         * handler is SA_NODEFER, but where a runtime wraps it (sanitizers)
         * SIGBUS may still be blocked after the jump: unblock it, or the
         * next fault would end the process. Faults only: no system call on
         * the way of a request that succeeds. */
        sigset_t bus;
        sigemptyset(&bus);
        sigaddset(&bus, SIGBUS);
        pthread_sigmask(SIG_UNBLOCK, &bus, NULL);
        uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
        uintptr_t below = (uintptr_t)copy_fault & ~(uintptr_t)(page - 1);
        io->done = below > (uintptr_t)p ? (uint32_t)(below - (uintptr_t)p) : 0;
        io->res = 0;
        return 0;
    }
    copy_lo = p;
    copy_hi = p + io->len;
    copy_jump = &jump;
    /* the handler reads these: keep the stores around the copy */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (io->dir == IOG_DIR_READ)
        memcpy(io->buf, p, io->len);
    else
        memcpy(p, io->buf, io->len);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    copy_jump = NULL;
    io->done = io->len;
    io->res = io->len;
    return 0;
}

static int mmap_sync(struct iog_worker *w, int kind)
{
    (void)kind;
    struct mmap_data *d = w->engine_data;
    int err = 0;
    for (uint32_t f = 0; f < d->nfiles; f++)
        if (msync(d->files[f].base, d->files[f].len, MS_SYNC) < 0 && !err)
            err = errno;
    return err;
}

const struct iog_engine engine_mmap = {
    .name = "mmap",
    .summary = "mmap(2) of the job's region, memcpy in and out, one request at a time",
    .order = 50,
    .max_depth = 1,
    .flags = IOG_ENGINE_DOES_IO | IOG_ENGINE_NO_DIRECT | IOG_ENGINE_NO_EXTEND,
    .ops =
        {
            .init = mmap_init,
            .prep = mmap_prep,
            .sync = mmap_sync,
            .cleanup = mmap_cleanup,
        },
};
IOG_ENGINE_REGISTER(engine_mmap);
