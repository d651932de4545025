/* Software prefetch of a memory range, for kernels that visit rows in a shuffled order:
 * asking for row order[r + k] while working on row order[r] hides the memory latency that the
 * hardware prefetcher cannot predict. A no-op on compilers without __builtin_prefetch.
 *
 * The empty volatile asm is load-bearing. GCC's pure-const analysis counts __builtin_prefetch
 * as no side effect, so a function whose only work is prefetching (this one, or a Cython
 * helper around it that was not inlined early) is marked `const`, and every call to it, whose
 * result is unused, is deleted: until 2026-11-26 the SGD loop's prefetches were all gone from
 * the compiled module (objdump found no prefetch instruction). A volatile asm is a side effect
 * the optimizer must keep; tests/test_config.py checks the instructions are there. */
#ifndef FASTML_PREFETCH_H
#define FASTML_PREFETCH_H

#include <stddef.h>

static inline void fastml_prefetch_range(const void *start, size_t n_bytes) {
#if defined(__GNUC__) || defined(__clang__)
    const char *p = (const char *)start;
    for (size_t off = 0; off < n_bytes; off += 64) __builtin_prefetch(p + off, 0, 3);
    __asm__ __volatile__("");
#else
    (void)start; (void)n_bytes;
#endif
}

#endif
