/*
 * rng.h - the pseudo-random generator of the engine: xoshiro256** seeded
 * through splitmix64, so that every worker thread gets an independent stream
 * derived from the job seed and its thread index. Also the range reduction
 * used to pick block numbers without a division.
 */
#ifndef IOGATE_RNG_H
#define IOGATE_RNG_H

#include <stddef.h>
#include <stdint.h>

struct rng {
    uint64_t s[4];
};

static inline uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Seeds from (seed, stream): distinct streams give unrelated sequences. */
static inline void rng_seed(struct rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ull);
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

static inline uint64_t rng_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t rng_next(struct rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = rng_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rng_rotl(s[3], 45);
    return out;
}

/* Uniform integer in [0, n) (Lemire's multiply-shift, bias < n / 2^64). */
static inline uint64_t rng_below(struct rng *r, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

/* Uniform double in [0, 1) with 53 random bits. */
static inline double rng_unit(struct rng *r)
{
    return (double)(rng_next(r) >> 11) * 0x1p-53;
}

/* Fills buf with pseudo-random bytes none of which is zero. */
static inline void rng_fill_nonzero(struct rng *r, void *buf, size_t len)
{
    unsigned char *p = buf;
    while (len > 0) {
        uint64_t v = rng_next(r);
        for (int i = 0; i < 8 && len > 0; i++, len--) {
            unsigned char c = (unsigned char)(v >> (8 * i));
            *p++ = c ? c : 0xa5;
        }
    }
}

#endif
