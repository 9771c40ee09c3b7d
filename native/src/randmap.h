/*
 * randmap.h - the random map of a random job: every block of a file once
 * per pass, in an order that looks random (fio's default without
 * norandommap), without a bitmap. Each file walks a keyed permutation of its
 * n blocks: the k-th request of a pass goes to block perm(k). The
 * permutation is a bijection on the next power of two (rounds of adding a
 * key, multiplying by an odd constant and folding the high bits down, each
 * invertible modulo 2^bits), restricted to [0, n) by cycle walking: values
 * past n are mapped again until one falls inside, which takes fewer than two
 * rounds on average as 2^bits < 2n. A new pass draws new keys, so passes
 * differ. O(1) memory and a few multiplications per request.
 */
#ifndef IOGATE_RANDMAP_H
#define IOGATE_RANDMAP_H

#include <stdint.h>

#include "iogate.h"
#include "rng.h"

#define RANDMAP_ROUNDS 4

struct randmap {
    uint64_t n;     /* blocks per file; 0: no map */
    uint64_t mask;  /* 2^bits - 1, the smallest power of two minus one >= n - 1 */
    unsigned shift; /* the fold: bits / 2, at least 1 */
    uint64_t seed;  /* keys of (file, pass) derive from it */
    uint64_t next[IOG_FILES_MAX];
    uint64_t pass[IOG_FILES_MAX];
    uint64_t key[IOG_FILES_MAX][RANDMAP_ROUNDS];
};

static inline void randmap_rekey(struct randmap *m, uint32_t f)
{
    uint64_t x = m->seed ^ ((uint64_t)f << 48) ^ (m->pass[f] * 0x9e3779b97f4a7c15ull);
    for (int i = 0; i < RANDMAP_ROUNDS; i++)
        m->key[f][i] = splitmix64(&x);
}

/* A map over n >= 1 blocks for nfiles files, its keys from seed and stream. */
static inline void randmap_init(struct randmap *m, uint64_t n, uint32_t nfiles, uint64_t seed,
                                uint64_t stream)
{
    unsigned bits = 0;
    while (bits < 64 && (n - 1) >> bits)
        bits++;
    m->n = n;
    m->mask = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    m->shift = bits / 2 ? bits / 2 : 1;
    m->seed = seed ^ (stream * 0xd1b54a32d192ed03ull) ^ UINT64_C(0x72616e646d6170);
    for (uint32_t f = 0; f < nfiles && f < IOG_FILES_MAX; f++) {
        m->next[f] = 0;
        m->pass[f] = 0;
        randmap_rekey(m, f);
    }
}

static inline uint64_t randmap_permute(const struct randmap *m, const uint64_t *key, uint64_t x)
{
    do {
        for (int i = 0; i < RANDMAP_ROUNDS; i++) {
            x = (x + key[i]) & m->mask;
            x = (x * 0xbf58476d1ce4e5b9ull) & m->mask; /* odd: invertible mod 2^bits */
            x ^= x >> m->shift;                        /* invertible: the top bits stay */
        }
    } while (x >= m->n);
    return x;
}

/* The block of file f's next request: each of the n once per pass. */
static inline uint64_t randmap_next(struct randmap *m, uint32_t f)
{
    if (m->next[f] == m->n) {
        m->next[f] = 0;
        m->pass[f]++;
        randmap_rekey(m, f);
    }
    return randmap_permute(m, m->key[f], m->next[f]++);
}

#endif
