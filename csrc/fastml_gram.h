/* Newton's Hessian blocks (_batch_fast.pyx's `hessian`): U += sign * T^T T for a buffer T of
 * `rows` rows of s doubles (row-major, s a multiple of 8, the columns past the data zero),
 * into the upper triangle of the (s, s) row-major U (U[b * s + a] for a >= b; some entries
 * just below the diagonal are written too, with their correct values).
 *
 * Why not BLAS's dsyrk: on these shapes (s ~ 100 columns, a few hundred rows per call) OpenBLAS
 * spent a third of its time packing the panels it had just been given, ran at ~40% of the
 * core's FMA peak, and called from the batch kernel's threads it had to be held to one thread
 * of its own (its thread pool inside ours oversubscribed the cores). These loops need no
 * packing: a tile of the output stays in registers while every buffered row streams past it,
 * the row's slice of 8-24 columns loaded as vectors, 8 (AVX-512) or 4 (AVX2) of its values
 * broadcast; one fused multiply-add per vector and broadcast.
 *
 * Copies: AVX-512 (8 doubles, FMA; where fastml_avx512.h says it runs), AVX2 with FMA (4
 * doubles; x86-64 CPUs with AVX2 and FMA, and the AVX-512 ones with FASTML_DISABLE_AVX512 set),
 * and a plain loop for the rest. They round differently (FMA, lane order): the Hessian only
 * steers Newton's steps (the gradient that decides convergence comes from the batch kernel).
 * Each sum has one fixed order: tile by tile, rows in order, then added to U with sign; so
 * a copy gives the same bits for the same buffers, whatever the threads. */
#ifndef FASTML_GRAM_H
#define FASTML_GRAM_H

#include <stddef.h>
#include "fastml_avx512.h"

/* Row stride of the buffers and of U: q columns rounded up to a multiple of 8 doubles. */
static inline ptrdiff_t fastml_gram_stride(ptrdiff_t q) { return (q + 7) / 8 * 8; }

/* The plain copy: U[b, a] += sign t_b t_a for a >= b, row by row (the compiler vectorizes over
 * a). */
static void fastml_gram_plain(const double *T, ptrdiff_t rows, ptrdiff_t s, double sign,
                              double *U) {
    ptrdiff_t r, a, b;
    for (r = 0; r < rows; r++) {
        const double *t = T + r * s;
        for (b = 0; b < s; b++) {
            double tb = sign * t[b];
            double *u = U + b * s;
            for (a = b; a < s; a++) u[a] += tb * t[a];
        }
    }
}

#if FASTML_HAVE_AVX512
#define FASTML_AVX2_FMA __attribute__((target("avx2,fma")))
#define FASTML_AVX2_FMA_INLINE static inline __attribute__((always_inline, target("avx2,fma")))

/* One tile, AVX-512: U's rows b0..b0+7, columns a0..a0+8 NA - 1 (24 accumulators for NA = 3),
 * summed over the rows of T, then added to U with sign. */
FASTML_AVX512_INLINE void fastml_gram_tile_v8(const double *T, ptrdiff_t rows, ptrdiff_t s,
                                              ptrdiff_t b0, ptrdiff_t a0, const int NA,
                                              double sign, double *U) {
    __m512d acc[8][3], x[3];
    const __m512d sv = _mm512_set1_pd(sign);
    for (int i = 0; i < 8; i++)
        for (int v = 0; v < NA; v++) acc[i][v] = _mm512_setzero_pd();
    for (ptrdiff_t r = 0; r < rows; r++) {
        const double *t = T + r * s;
        for (int v = 0; v < NA; v++) x[v] = _mm512_loadu_pd(t + a0 + 8 * v);
        for (int i = 0; i < 8; i++) {
            __m512d tb = _mm512_set1_pd(t[b0 + i]);
            for (int v = 0; v < NA; v++) acc[i][v] = _mm512_fmadd_pd(x[v], tb, acc[i][v]);
        }
    }
    for (int i = 0; i < 8; i++)
        for (int v = 0; v < NA; v++) {
            double *u = U + (b0 + i) * s + a0 + 8 * v;
            _mm512_storeu_pd(u, _mm512_fmadd_pd(sv, acc[i][v], _mm512_loadu_pd(u)));
        }
}

FASTML_AVX512 static void fastml_gram_avx512(const double *T, ptrdiff_t rows, ptrdiff_t s,
                                             double sign, double *U) {
    for (ptrdiff_t b0 = 0; b0 < s; b0 += 8)
        for (ptrdiff_t a0 = b0; a0 < s; a0 += 24) {
            ptrdiff_t left = (s - a0) / 8;
            if (left >= 3) fastml_gram_tile_v8(T, rows, s, b0, a0, 3, sign, U);
            else if (left == 2) fastml_gram_tile_v8(T, rows, s, b0, a0, 2, sign, U);
            else fastml_gram_tile_v8(T, rows, s, b0, a0, 1, sign, U);
        }
}

/* One tile, AVX2: U's rows b0..b0+3, columns a0..a0+4 NA - 1 (12 accumulators for NA = 3: the
 * 16 registers hold them, the 3 row vectors and one broadcast). */
FASTML_AVX2_FMA_INLINE void fastml_gram_tile_v4(const double *T, ptrdiff_t rows, ptrdiff_t s,
                                                ptrdiff_t b0, ptrdiff_t a0, const int NA,
                                                double sign, double *U) {
    __m256d acc[4][3], x[3];
    const __m256d sv = _mm256_set1_pd(sign);
    for (int i = 0; i < 4; i++)
        for (int v = 0; v < NA; v++) acc[i][v] = _mm256_setzero_pd();
    for (ptrdiff_t r = 0; r < rows; r++) {
        const double *t = T + r * s;
        for (int v = 0; v < NA; v++) x[v] = _mm256_loadu_pd(t + a0 + 4 * v);
        for (int i = 0; i < 4; i++) {
            __m256d tb = _mm256_broadcast_sd(t + b0 + i);
            for (int v = 0; v < NA; v++) acc[i][v] = _mm256_fmadd_pd(x[v], tb, acc[i][v]);
        }
    }
    for (int i = 0; i < 4; i++)
        for (int v = 0; v < NA; v++) {
            double *u = U + (b0 + i) * s + a0 + 4 * v;
            _mm256_storeu_pd(u, _mm256_fmadd_pd(sv, acc[i][v], _mm256_loadu_pd(u)));
        }
}

FASTML_AVX2_FMA static void fastml_gram_avx2(const double *T, ptrdiff_t rows, ptrdiff_t s,
                                             double sign, double *U) {
    for (ptrdiff_t b0 = 0; b0 < s; b0 += 4)
        for (ptrdiff_t a0 = b0; a0 < s; a0 += 12) {
            ptrdiff_t left = (s - a0) / 4;
            if (left >= 3) fastml_gram_tile_v4(T, rows, s, b0, a0, 3, sign, U);
            else if (left == 2) fastml_gram_tile_v4(T, rows, s, b0, a0, 2, sign, U);
            else fastml_gram_tile_v4(T, rows, s, b0, a0, 1, sign, U);
        }
}

/* Whether the AVX2 + FMA copy runs here (the AVX-512 one not running). */
static int fastml_cpu_has_avx2_fma(void) {
    static int known = -1;
    if (known < 0) {
        __builtin_cpu_init();
        known = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
    return known;
}
#endif

/* Which copy runs here: 2 AVX-512, 1 AVX2 + FMA, 0 the plain loop (show_config, tests). */
static int fastml_gram_copy(void) {
#if FASTML_HAVE_AVX512
    if (fastml_cpu_has_avx512()) return 2;
    if (fastml_cpu_has_avx2_fma()) return 1;
#endif
    return 0;
}

/* U += sign * T^T T (see the header); the copy this CPU runs, or the plain one (copy = 0). */
static void fastml_gram_upper(const double *T, ptrdiff_t rows, ptrdiff_t s, double sign,
                              double *U, int copy) {
#if FASTML_HAVE_AVX512
    if (copy == 2) {
        fastml_gram_avx512(T, rows, s, sign, U);
        return;
    }
    if (copy == 1) {
        fastml_gram_avx2(T, rows, s, sign, U);
        return;
    }
#endif
    (void)copy;
    fastml_gram_plain(T, rows, s, sign, U);
}

#endif
