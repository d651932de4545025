/* Software prefetch of a memory range, for kernels that visit rows in a shuffled order:
 * asking for row order[r + k] while working on row order[r] hides the memory latency that the
 * hardware prefetcher cannot predict. A no-op on compilers without __builtin_prefetch. */
#ifndef FASTML_PREFETCH_H
#define FASTML_PREFETCH_H

#include <stddef.h>

static inline void fastml_prefetch_range(const void *start, size_t n_bytes) {
#if defined(__GNUC__) || defined(__clang__)
    const char *p = (const char *)start;
    for (size_t off = 0; off < n_bytes; off += 64) __builtin_prefetch(p + off, 0, 3);
#else
    (void)start; (void)n_bytes;
#endif
}

#endif
