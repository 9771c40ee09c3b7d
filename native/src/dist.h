/*
 * dist.h - where random requests land: a sampler of block numbers in
 * [0, n) for each enum iog_dist. Uniform is inline (the hot path); the others
 * (zipf by rejection-inversion, pareto by a power transform of a uniform,
 * normal by Box-Muller, zoned by a zone pick then a uniform block, sequence
 * by stepping through the given block indices) live in dist.c. Zipf and pareto rank blocks by heat;
 * a fixed affine bijection modulo n, derived from the job seed, spreads the hot ranks over the
 * region so that every thread of a job shares the same hot blocks.
 */
#ifndef IOGATE_DIST_H
#define IOGATE_DIST_H

#include <stdint.h>

#include "iogate.h"
#include "rng.h"

struct dist {
    uint32_t kind; /* enum iog_dist */
    uint64_t n;    /* blocks */
    uint64_t perm_mul, perm_add;
    double c[4]; /* sampler constants */
    double spare;
    int has_spare;
    uint32_t nzones;
    uint32_t zone_cum[IOG_ZONES_MAX];       /* running sums of the zones' access shares */
    uint64_t zone_start[IOG_ZONES_MAX + 1]; /* first block of each zone, then n */
    uint32_t nseq, seq_pos, seq_stride;     /* sequence: its length, the next entry */
    uint64_t seq_base;                      /* sequence with stride: the group's base */
    const uint64_t *seq;                    /* the spec's block indices */
};

/* Sets up a sampler over n >= 1 blocks for the job's distribution. */
void dist_init(struct dist *d, const struct iog_job_spec *spec, uint64_t n);

uint64_t dist_next_slow(struct dist *d, struct rng *r);

static inline uint64_t dist_next(struct dist *d, struct rng *r)
{
    if (d->kind == IOG_DIST_UNIFORM)
        return rng_below(r, d->n);
    return dist_next_slow(d, r);
}

#endif
