/*
 * flow.h - flow control between the jobs of a session (fio's flow, flow_id,
 * flow_sleep): the threads of the jobs that share a flow_id keep the requests
 * they issue in the proportion of their weights. Each flow has a counter of
 * the requests its threads issued (from 1) and the sum of the weights of its
 * threads still running; a thread asks flow_admit before each request, and
 * waits while its own count is a larger share of the counter than its weight
 * is of the weights. A thread that ends takes its count and weight out, so the
 * others go on in their own proportion. Nothing here is used by a job without
 * a weight.
 */
#ifndef IOGATE_FLOW_H
#define IOGATE_FLOW_H

#include <stdint.h>

struct iog_flow {
    uint32_t id;
    uint64_t count;  /* atomic: requests issued by its threads, from 1 */
    uint64_t weight; /* atomic: the weights of its threads still running */
};

struct iog_session;

/* The session's flows, one per flow_id among its jobs with a weight, each
 * job pointed at its own (job->flow); 0 or -ENOMEM. */
int flows_create(struct iog_session *s);

/* Whether a thread with `weight` and its own `count` may issue a request
 * now; if so, counts it. */
static inline int flow_admit(struct iog_flow *f, uint64_t *count, uint64_t weight)
{
    uint64_t total = __atomic_load_n(&f->count, __ATOMIC_RELAXED);
    uint64_t weights = __atomic_load_n(&f->weight, __ATOMIC_RELAXED);
    if ((unsigned __int128)*count * weights > (unsigned __int128)weight * total)
        return 0;
    __atomic_add_fetch(&f->count, 1, __ATOMIC_RELAXED);
    ++*count;
    return 1;
}

/* A thread's start (after its start delay): its weight joins the flow. */
static inline void flow_join(struct iog_flow *f, uint64_t weight)
{
    __atomic_add_fetch(&f->weight, weight, __ATOMIC_RELAXED);
}

/* A thread's end: its count and weight leave the flow. */
static inline void flow_leave(struct iog_flow *f, uint64_t count, uint64_t weight)
{
    __atomic_sub_fetch(&f->count, count, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&f->weight, weight, __ATOMIC_RELAXED);
}

#endif
