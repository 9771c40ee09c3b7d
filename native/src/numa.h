/*
 * numa.h - NUMA placement of a job's threads and buffers (numa.c), through
 * libnuma loaded on first use.
 */
#ifndef IOGATE_NUMA_H
#define IOGATE_NUMA_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>

#include "iogate.h"

/* The NUMA fields of job i checked, and libnuma loaded when they ask for
 * placement: 0, or a negative errno with the reason in err (-EOPNOTSUPP: no
 * libnuma or no NUMA here; -EINVAL: a node this machine lacks). */
int numa_check(const struct iog_job_spec *j, uint32_t i, char *err, size_t errlen);

/* The CPUs of the job's numa_cpu_nodes into set (empty without them). */
int numa_node_cpus(const struct iog_job_spec *j, cpu_set_t *set);

/* The job's memory policy for the calling thread and for [buf, buf + len),
 * whose pages move to conform; nothing without one. 0 or a negative errno. */
int numa_place_memory(const struct iog_job_spec *j, void *buf, size_t len);

#endif
