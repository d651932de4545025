/* The AVX-512 copies of the compute-bound kernels (fastml_kernel_avx512.h: kernel perceptron
 * predict; fastml_batch_avx512.h: the multinomial batch pass): what they share.
 *
 * The portable copies (fastml_simd.h's FASTML_CLONES) are 4 doubles wide and never fuse a
 * multiply and an add, so every x86-64 CPU gives the same bits. These copies are 8 wide and
 * use FMA on purpose (written as intrinsics, whatever the compiler's contraction setting):
 * the arithmetic-bound passes run up to 2x faster, and their results differ from the portable
 * copies' in the last bits. On one CPU they are the same whatever the thread count.
 *
 * A CPU runs them when it has AVX-512F and FMA (the OS saving the registers) and the
 * environment does not set FASTML_DISABLE_AVX512 to a non-empty value other than "0": the
 * switch for users who need the portable bits on every machine, e.g. a cluster of mixed CPUs. */
#ifndef FASTML_AVX512_H
#define FASTML_AVX512_H

#include <stdlib.h>

#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__) && defined(__GLIBC__)
#define FASTML_HAVE_AVX512 1
#include <immintrin.h>

#define FASTML_AVX512 __attribute__((target("avx512f,fma")))
#define FASTML_AVX512_INLINE static inline __attribute__((always_inline, target("avx512f,fma")))
#define FASTML_V8(x) _mm512_set1_pd(x)

/* Whether the AVX-512 copies run here; decided once per module, at its first call (the
 * modules ask at import, before any thread runs). */
static int fastml_cpu_has_avx512(void) {
    static int known = -1;
    if (known < 0) {
        const char *off = getenv("FASTML_DISABLE_AVX512");
        __builtin_cpu_init();
        known = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma")
                && !(off && off[0] && !(off[0] == '0' && !off[1]));
    }
    return known;
}
#else
#define FASTML_HAVE_AVX512 0
#define FASTML_AVX512
static int fastml_cpu_has_avx512(void) { return 0; }
#endif

#endif
