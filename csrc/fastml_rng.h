/* A small, fast, seeded random number generator for shuffling and sampling inside kernels.
 *
 * xoshiro256** (Blackman & Vigna, public domain reference algorithm), seeded through
 * splitmix64 so any 64-bit seed gives a well-mixed state. The state is a plain struct that a
 * kernel keeps on its stack: no globals, so threads each own one and runs are reproducible.
 */
#ifndef FASTML_RNG_H
#define FASTML_RNG_H

#include <stdint.h>

typedef struct { uint64_t s[4]; } fastml_rng;

static inline uint64_t fastml_splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline void fastml_rng_seed(fastml_rng *r, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) r->s[i] = fastml_splitmix64(&x);
}

static inline uint64_t fastml_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t fastml_rng_next(fastml_rng *r) {
    uint64_t *s = r->s;
    uint64_t result = fastml_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
    s[2] ^= t;
    s[3] = fastml_rotl(s[3], 45);
    return result;
}

/* Uniform integer in [0, n) without modulo bias: reject the top partial block of 2^64. */
static inline uint64_t fastml_rng_below(fastml_rng *r, uint64_t n) {
    if (n <= 1) return 0;
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do { x = fastml_rng_next(r); } while (x >= limit);
    return x % n;
}

/* Uniform double in [0, 1) with 53 random bits. */
static inline double fastml_rng_uniform(fastml_rng *r) {
    return (fastml_rng_next(r) >> 11) * 0x1.0p-53;
}

#endif
