/* shuffle="block"'s row order for one SGD epoch (_sgd.py's epoch_order), in one pass:
 * the rows 0..n-1 cut into consecutive blocks of `block` rows (the last one shorter), the
 * blocks in a random order and the rows inside each block in a random order, each a
 * Fisher-Yates shuffle driven by the project's generator (fastml_rng.h) seeded once per epoch.
 * numpy built the same structure with rng.permuted, a Python list of blocks and a concatenate:
 * ~10 ms per epoch at 300k rows, a sixth of a perceptron fit; this is one write of `order`.
 */
#ifndef FASTML_SHUFFLE_H
#define FASTML_SHUFFLE_H

#include <stddef.h>
#include <stdint.h>
#include "fastml_rng.h"

/* Uniform integer in [0, n) without bias: Lemire's multiply-shift on the top 32 bits of a
 * draw (no 64-bit division, which would cost more than the rest of a shuffle step) for
 * n < 2^32; fastml_rng_below beyond. */
static inline uint64_t fastml_shuffle_below(fastml_rng *r, uint64_t n) {
    uint32_t n32 = (uint32_t)n, low, threshold;
    uint64_t m;
    if (n > 0xFFFFFFFFu) return fastml_rng_below(r, n);
    m = (fastml_rng_next(r) >> 32) * (uint64_t)n32;
    low = (uint32_t)m;
    if (low < n32) {                            /* rare: reject the biased low part */
        threshold = (uint32_t)(0u - n32) % n32;
        while (low < threshold) {
            m = (fastml_rng_next(r) >> 32) * (uint64_t)n32;
            low = (uint32_t)m;
        }
    }
    return m >> 32;
}

/* a[0:n] in a uniformly random order (Fisher-Yates, from the top). */
static inline void fastml_shuffle_intp(fastml_rng *r, ptrdiff_t *a, ptrdiff_t n) {
    ptrdiff_t i, j, t;
    for (i = n - 1; i > 0; i--) {
        j = (ptrdiff_t)fastml_shuffle_below(r, (uint64_t)i + 1);
        t = a[i]; a[i] = a[j]; a[j] = t;
    }
}

/* order[0:n] = the block order of n rows in blocks of `block` >= 1 rows (see above): first the
 * blocks' order (in `blocks`, the caller's scratch of ceil(n / block) entries), then each
 * block's rows written in that order and shuffled in place. */
static inline void fastml_block_order(uint64_t seed, ptrdiff_t n, ptrdiff_t block,
                                      ptrdiff_t *order, ptrdiff_t *blocks) {
    fastml_rng r;
    ptrdiff_t n_blocks = (n + block - 1) / block, k, q, pos = 0, first, size;
    fastml_rng_seed(&r, seed);
    for (k = 0; k < n_blocks; k++) blocks[k] = k;
    fastml_shuffle_intp(&r, blocks, n_blocks);
    for (k = 0; k < n_blocks; k++) {
        first = blocks[k] * block;
        size = n - first < block ? n - first : block;
        for (q = 0; q < size; q++) order[pos + q] = first + q;
        fastml_shuffle_intp(&r, order + pos, size);
        pos += size;
    }
}

#endif
