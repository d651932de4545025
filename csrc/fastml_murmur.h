/* MurmurHash3_x86_32 (Austin Appleby's public-domain design), the 32-bit hash that
 * scikit-learn's FeatureHasher and Vowpal Wabbit hash feature names with, so a column index
 * computed here is the one those tools compute. Blocks are read as little-endian words byte by
 * byte, so the value is the same on every platform (x86 and ARM load them the same way). */
#ifndef FASTML_MURMUR_H
#define FASTML_MURMUR_H

#include <stddef.h>
#include <stdint.h>

static inline uint32_t fastml_rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

static inline uint32_t fastml_murmur3_32(const char *key, size_t len, uint32_t seed) {
    const unsigned char *data = (const unsigned char *)key;
    const uint32_t c1 = 0xcc9e2d51u, c2 = 0x1b873593u;
    size_t n_blocks = len / 4, i;
    uint32_t h = seed, k;
    for (i = 0; i < n_blocks; i++) {
        const unsigned char *b = data + 4 * i;
        k = (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
        k *= c1;
        k = fastml_rotl32(k, 15);
        k *= c2;
        h ^= k;
        h = fastml_rotl32(h, 13);
        h = h * 5 + 0xe6546b64u;
    }
    k = 0;
    switch (len & 3) {          /* the tail: the last 1-3 bytes */
    case 3: k ^= (uint32_t)data[4 * n_blocks + 2] << 16; /* fall through */
    case 2: k ^= (uint32_t)data[4 * n_blocks + 1] << 8;  /* fall through */
    case 1: k ^= (uint32_t)data[4 * n_blocks];
            k *= c1;
            k = fastml_rotl32(k, 15);
            k *= c2;
            h ^= k;
    }
    h ^= (uint32_t)len;         /* finalization: avalanche the bits */
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

#endif
