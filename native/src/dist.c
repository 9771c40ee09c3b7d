/*
 * dist.c - the non-uniform offset samplers of dist.h.
 */
#include "dist.h"

#include <math.h>

/* (e^t - 1) / t and log(1 + t) / t, continuous at t = 0. */
static double expm1_over(double t)
{
    return fabs(t) > 1e-8 ? expm1(t) / t : 1.0 + t / 2.0;
}

static double log1p_over(double t)
{
    return fabs(t) > 1e-8 ? log1p(t) / t : 1.0 - t / 2.0;
}

/* Zipf with exponent s over ranks 1..n by rejection-inversion: H is an
 * integral of the density h(x) = x^-s, sampled by inversion, and a rank is
 * accepted when the area of its bar covers the drawn point. */
static double zipf_h(double s, double x)
{
    return exp(-s * log(x));
}

static double zipf_H(double s, double x)
{
    double lx = log(x);
    return expm1_over((1.0 - s) * lx) * lx;
}

static double zipf_Hinv(double s, double y)
{
    double t = y * (1.0 - s);
    if (t < -1.0)
        t = -1.0;
    return exp(log1p_over(t) * y);
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

void dist_init(struct dist *d, const struct iog_job_spec *spec, uint64_t n)
{
    *d = (struct dist){.kind = spec->dist, .n = n ? n : 1, .perm_mul = 1};
    n = d->n;
    uint64_t x = spec->seed ^ 0x646973745f70726dull;
    d->perm_add = splitmix64(&x) % n;
    if (n > 1) {
        uint64_t m = splitmix64(&x) % n;
        if (m == 0)
            m = 1;
        while (gcd(m, n) != 1)
            m = m + 1 < n ? m + 1 : 1;
        d->perm_mul = m;
    }
    double s = spec->dist_param;
    switch (spec->dist) {
    case IOG_DIST_ZIPF:
        d->c[0] = s;
        d->c[1] = zipf_H(s, 1.5) - 1.0;
        d->c[2] = zipf_H(s, (double)n + 0.5);
        d->c[3] = 2.0 - zipf_Hinv(s, zipf_H(s, 2.5) - zipf_h(s, 2.0));
        break;
    case IOG_DIST_PARETO:
        /* u^(ln h / ln (1 - h)) puts 1 - h of the draws on the first h of
         * the range: h = 0.2 is the 80/20 rule. */
        d->c[0] = log(s) / log(1.0 - s);
        break;
    case IOG_DIST_NORMAL:
        d->c[0] = (double)n / 2.0;
        d->c[1] = s / 100.0 * (double)n;
        break;
    case IOG_DIST_ZONED: {
        uint64_t size_cum = 0;
        uint32_t acc = 0;
        d->nzones = spec->nzones;
        for (uint32_t i = 0; i < spec->nzones; i++) {
            d->zone_start[i] = (uint64_t)((unsigned __int128)size_cum * n / IOG_WEIGHT_TOTAL);
            acc += spec->zones[i].access;
            d->zone_cum[i] = acc;
            size_cum += spec->zones[i].size;
        }
        d->zone_start[spec->nzones] = n;
        break;
    }
    case IOG_DIST_SEQUENCE:
        d->nseq = spec->nsequence;
        d->seq_stride = spec->sequence_stride;
        d->seq = spec->sequence;
        break;
    default:
        d->kind = IOG_DIST_UNIFORM;
        break;
    }
}

static uint64_t permute(const struct dist *d, uint64_t rank)
{
    return (uint64_t)(((unsigned __int128)rank * d->perm_mul + d->perm_add) % d->n);
}

static uint64_t zipf_rank(struct dist *d, struct rng *r)
{
    double s = d->c[0], hx1 = d->c[1], hn = d->c[2], sconst = d->c[3];
    double n = (double)d->n;
    for (;;) {
        double u = hn + rng_unit(r) * (hx1 - hn);
        double x = zipf_Hinv(s, u);
        double k = floor(x + 0.5);
        if (k < 1.0)
            k = 1.0;
        else if (k > n)
            k = n;
        if (k - x <= sconst || u >= zipf_H(s, k + 0.5) - zipf_h(s, k))
            return (uint64_t)k - 1;
    }
}

static double normal_draw(struct dist *d, struct rng *r)
{
    if (d->has_spare) {
        d->has_spare = 0;
        return d->spare;
    }
    double u1 = 1.0 - rng_unit(r); /* (0, 1]: log is finite */
    double u2 = rng_unit(r);
    double rad = sqrt(-2.0 * log(u1));
    d->spare = rad * sin(2.0 * M_PI * u2);
    d->has_spare = 1;
    return rad * cos(2.0 * M_PI * u2);
}

uint64_t dist_next_slow(struct dist *d, struct rng *r)
{
    switch (d->kind) {
    case IOG_DIST_ZIPF:
        return permute(d, zipf_rank(d, r));
    case IOG_DIST_PARETO: {
        uint64_t k = (uint64_t)((double)d->n * pow(rng_unit(r), d->c[0]));
        return permute(d, k < d->n ? k : d->n - 1);
    }
    case IOG_DIST_NORMAL:
        for (;;) {
            double x = floor(d->c[0] + normal_draw(d, r) * d->c[1]);
            if (x >= 0.0 && x < (double)d->n)
                return (uint64_t)x;
        }
    case IOG_DIST_ZONED: {
        uint64_t u = rng_below(r, IOG_WEIGHT_TOTAL);
        uint32_t z = 0;
        while (z + 1 < d->nzones && u >= d->zone_cum[z])
            z++;
        uint64_t lo = d->zone_start[z], hi = d->zone_start[z + 1];
        if (hi <= lo) /* a zone smaller than one block: its first block */
            return lo < d->n ? lo : d->n - 1;
        return lo + rng_below(r, hi - lo);
    }
    case IOG_DIST_SEQUENCE: {
        uint64_t b = (d->seq_base + d->seq[d->seq_pos] % d->n) % d->n;
        if (++d->seq_pos == d->nseq) {
            d->seq_pos = 0;
            if (d->seq_stride)
                d->seq_base = (d->seq_base + d->nseq) % d->n;
        }
        return b;
    }
    default:
        return rng_below(r, d->n);
    }
}
