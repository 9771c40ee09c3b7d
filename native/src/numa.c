/*
 * numa.c - NUMA placement through libnuma, loaded the first time a job asks
 * for it (dlopen of libnuma.so.1, so that the library needs it only then):
 * the CPUs of a job's nodes (numa_cpu_nodes) and the memory policy of its
 * threads and their request buffers (numa_mem_policy). A machine without
 * libnuma, or whose kernel has no NUMA support, refuses such a job with the
 * reason; a node that is not there is refused by name.
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "numa.h"

/* libnuma's node and CPU sets, as its numa.h declares them */
struct bitmask {
    unsigned long size; /* bits */
    unsigned long *maskp;
};

static struct {
    pthread_once_t once;
    int ok;
    char why[160];
    int (*available)(void);
    int (*max_node)(void);
    struct bitmask *(*allocate_cpumask)(void);
    void (*bitmask_free)(struct bitmask *);
    int (*node_to_cpus)(int, struct bitmask *);
    int (*isbitset)(const struct bitmask *, unsigned int);
    long (*mbind)(void *, unsigned long, int, const unsigned long *, unsigned long, unsigned);
    long (*set_mempolicy)(int, const unsigned long *, unsigned long);
    struct bitmask **nodes; /* numa_nodes_ptr: the nodes this machine has */
} lib = {.once = PTHREAD_ONCE_INIT};

static void load(void)
{
    void *h = dlopen("libnuma.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(lib.why, sizeof(lib.why),
                 "NUMA placement needs libnuma (libnuma.so.1), which cannot be loaded here");
        return;
    }
#define SYM(field, name) *(void **)&lib.field = dlsym(h, name)
    SYM(available, "numa_available");
    SYM(max_node, "numa_max_node");
    SYM(allocate_cpumask, "numa_allocate_cpumask");
    SYM(bitmask_free, "numa_bitmask_free");
    SYM(node_to_cpus, "numa_node_to_cpus");
    SYM(isbitset, "numa_bitmask_isbitset");
    SYM(mbind, "mbind");
    SYM(set_mempolicy, "set_mempolicy");
    SYM(nodes, "numa_nodes_ptr");
#undef SYM
    if (!lib.available || !lib.max_node || !lib.allocate_cpumask || !lib.bitmask_free ||
        !lib.node_to_cpus || !lib.isbitset || !lib.mbind || !lib.set_mempolicy || !lib.nodes) {
        snprintf(lib.why, sizeof(lib.why), "this libnuma.so.1 lacks functions iogate uses");
        return;
    }
    if (lib.available() < 0) {
        snprintf(lib.why, sizeof(lib.why),
                 "the kernel has no NUMA support here (libnuma's numa_available fails)");
        return;
    }
    lib.ok = 1; /* the handle stays open: its functions are used until the process ends */
}

static int wants_numa(const struct iog_job_spec *j)
{
    return j->numa_cpu_nodes || j->numa_mem_mode != IOG_NUMA_MEM_NONE;
}

int numa_check(const struct iog_job_spec *j, uint32_t i, char *err, size_t errlen)
{
    if (j->numa_reserved != 0) {
        SET_ERR(err, errlen, "job %u: numa_reserved must be 0", i);
        return -EINVAL;
    }
    uint32_t mode = j->numa_mem_mode;
    if (mode > IOG_NUMA_MEM_INTERLEAVE) {
        SET_ERR(err, errlen, "job %u: numa_mem_mode %u is unknown", i, mode);
        return -EINVAL;
    }
    int takes_nodes =
        mode == IOG_NUMA_MEM_PREFER || mode == IOG_NUMA_MEM_BIND || mode == IOG_NUMA_MEM_INTERLEAVE;
    if (takes_nodes != (j->numa_mem_nodes != 0) ||
        (mode == IOG_NUMA_MEM_PREFER && __builtin_popcountll(j->numa_mem_nodes) != 1)) {
        SET_ERR(err, errlen,
                "job %u: numa_mem_nodes: prefer takes one node, bind and interleave one or "
                "more, the other modes none",
                i);
        return -EINVAL;
    }
    for (uint32_t k = 0; j->numa_cpu_nodes && k < IOG_CPU_WORDS; k++) {
        if (j->cpus[k]) {
            SET_ERR(err, errlen, "job %u: numa_cpu_nodes and cpus exclude each other", i);
            return -EINVAL;
        }
    }
    if (!wants_numa(j))
        return 0;
    pthread_once(&lib.once, load);
    if (!lib.ok) {
        SET_ERR(err, errlen, "job %u: %s", i, lib.why);
        return -EOPNOTSUPP;
    }
    int max = lib.max_node();
    uint64_t named = j->numa_cpu_nodes | j->numa_mem_nodes;
    for (int n = 0; n < IOG_NUMA_NODES_MAX; n++) {
        if (!(named >> n & 1))
            continue;
        if (n > max || !lib.isbitset(*lib.nodes, (unsigned)n)) {
            SET_ERR(err, errlen,
                    "job %u: NUMA node %d is not on this machine (its nodes are 0 to %d)", i, n,
                    max);
            return -EINVAL;
        }
    }
    return 0;
}

int numa_node_cpus(const struct iog_job_spec *j, cpu_set_t *set)
{
    CPU_ZERO(set);
    if (!j->numa_cpu_nodes)
        return 0;
    struct bitmask *cpus = lib.allocate_cpumask();
    if (!cpus)
        return -ENOMEM;
    int rc = 0;
    for (int n = 0; n < IOG_NUMA_NODES_MAX && rc == 0; n++) {
        if (!(j->numa_cpu_nodes >> n & 1))
            continue;
        if (lib.node_to_cpus(n, cpus) < 0) {
            rc = errno ? -errno : -EINVAL;
            break;
        }
        for (unsigned c = 0; c < cpus->size && c < CPU_SETSIZE; c++)
            if (lib.isbitset(cpus, c))
                CPU_SET(c, set);
    }
    lib.bitmask_free(cpus);
    return rc;
}

int numa_place_memory(const struct iog_job_spec *j, void *buf, size_t len)
{
    static const int kernel_mode[] = {[IOG_NUMA_MEM_DEFAULT] = MPOL_DEFAULT,
                                      [IOG_NUMA_MEM_LOCAL] = MPOL_LOCAL,
                                      [IOG_NUMA_MEM_PREFER] = MPOL_PREFERRED,
                                      [IOG_NUMA_MEM_BIND] = MPOL_BIND,
                                      [IOG_NUMA_MEM_INTERLEAVE] = MPOL_INTERLEAVE};
    if (j->numa_mem_mode == IOG_NUMA_MEM_NONE)
        return 0;
    int mode = kernel_mode[j->numa_mem_mode];
    unsigned long mask = (unsigned long)j->numa_mem_nodes;
    const unsigned long *nodes = mask ? &mask : NULL;
    unsigned long maxnode = mask ? IOG_NUMA_NODES_MAX + 1 : 0;
    /* the thread's later allocations (the kernel's for it too), then the buffers it already
     * has, their pages moved where the policy wants them */
    if (lib.set_mempolicy(mode, nodes, maxnode) < 0)
        return -errno;
    if (buf && len && lib.mbind(buf, len, mode, nodes, maxnode, MPOL_MF_MOVE) < 0)
        return -errno;
    return 0;
}
