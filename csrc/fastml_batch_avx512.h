/* The multinomial batch pass (K > 1 outputs, _batch_fast.pyx's softmax_block) in 8-double
 * AVX-512 vectors with fused multiply-adds (fastml_avx512.h says when it runs and what it
 * changes): the margins M = X W^T + b and the gradient G += R^T X of fastml_simd.h's
 * fastml_margins_cols / fastml_xt_r_cols, the same loops (4 rows at a time, the outputs of G
 * in tiles of 2-3 with the residuals in registers, the same paced prefetches) at twice the
 * width and with one rounding per multiply-add. With 5 classes the portable pass is bound by
 * its arithmetic (1.4x the time of one read of X on an AVX-512 machine); this one is not.
 *
 * Sum orders (each fixed, so the results do not depend on threads or blocks): M[i, k] has 8
 * lane sums over j = l mod 8, the last d mod 8 columns by a masked load, then the lanes; G[k,
 * j] adds ((r0 x0 + r1 x1) + r2 x2) + r3 x3 per group of 4 rows, the last 1-3 rows of a block
 * one by one, as the portable copy does. */
#ifndef FASTML_BATCH_AVX512_H
#define FASTML_BATCH_AVX512_H

#include "fastml_simd.h"
#include "fastml_avx512.h"

#if FASTML_HAVE_AVX512
/* The lanes of the d mod 8 last columns (0 when d is a multiple of 8). */
static inline __mmask8 fastml_v8_tail_mask(ptrdiff_t d) {
    return (__mmask8)((1u << (d % 8)) - 1u);
}

/* M[k * n_rows + r] = x_r . W[k] + b[k] for the R rows x_r = x0 + r d; paced: two prefetches
 * per 8 columns of the first output, as the portable copy. */
FASTML_AVX512_INLINE void fastml_v8_margins_rows(int R, const double *x0, ptrdiff_t d,
                                                 ptrdiff_t K, const double *W, const double *b,
                                                 double *M, ptrdiff_t n_rows,
                                                 fastml_prefetch_cursor *c, int paced) {
    const __mmask8 tail = fastml_v8_tail_mask(d);
    const ptrdiff_t d8 = d - d % 8;
    for (ptrdiff_t k = 0; k < K; k++) {
        const double *w = W + k * d;
        __m512d acc[4];
        for (int r = 0; r < R; r++) acc[r] = _mm512_setzero_pd();
        for (ptrdiff_t j = 0; j < d8; j += 8) {
            if (paced && k == 0) {
                fastml_cursor_step(c, 1);
                fastml_cursor_step(c, 1);
            }
            __m512d wv = _mm512_loadu_pd(w + j);
            for (int r = 0; r < R; r++)
                acc[r] = _mm512_fmadd_pd(_mm512_loadu_pd(x0 + r * d + j), wv, acc[r]);
        }
        if (tail) {
            __m512d wv = _mm512_maskz_loadu_pd(tail, w + d8);
            for (int r = 0; r < R; r++)
                acc[r] = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(tail, x0 + r * d + d8), wv, acc[r]);
        }
        for (int r = 0; r < R; r++) M[k * n_rows + r] = _mm512_reduce_add_pd(acc[r]) + b[k];
    }
}

FASTML_AVX512 static void fastml_margins_cols_f64_avx512(ptrdiff_t n_rows, ptrdiff_t d,
                                                         ptrdiff_t K, const double *X,
                                                         const double *W, const double *b,
                                                         double *M,
                                                         fastml_prefetch_cursor *cursor) {
    fastml_prefetch_cursor local = *cursor, *c = &local;   /* see fastml_prefetch_cursor */
    ptrdiff_t i = 0;
    for (; i + 4 <= n_rows; i += 4) {
        fastml_cursor_at(c, X + i * d);
        fastml_v8_margins_rows(4, X + i * d, d, K, W, b, M + i, n_rows, c, 1);
    }
    for (; i < n_rows; i++) fastml_v8_margins_rows(1, X + i * d, d, K, W, b, M + i, n_rows, c, 0);
    *cursor = local;
}

/* G[k, j..] += ((r0 x0 + r1 x1) + r2 x2) + r3 x3 over 8 columns (mask: which of them), for the
 * KB outputs of the tile, whose residuals v[row][k] are in registers. */
FASTML_AVX512_INLINE void fastml_v8_xt_r_columns(int KB, __m512d v[4][FASTML_TILE_MAX],
                                                 const double *const *x, ptrdiff_t j,
                                                 __mmask8 mask, ptrdiff_t d, double *G) {
    __m512d a[4];
    for (int r = 0; r < 4; r++) a[r] = _mm512_maskz_loadu_pd(mask, x[r] + j);
    for (int k = 0; k < KB; k++) {
        __m512d s = _mm512_mul_pd(v[0][k], a[0]);
        s = _mm512_fmadd_pd(v[1][k], a[1], s);
        s = _mm512_fmadd_pd(v[2][k], a[2], s);
        s = _mm512_fmadd_pd(v[3][k], a[3], s);
        _mm512_mask_storeu_pd(G + k * d + j, mask,
                              _mm512_add_pd(_mm512_maskz_loadu_pd(mask, G + k * d + j), s));
    }
}

/* One tile of KB outputs over the 4 rows x[0..3] (residuals R[k * n + 0..3]); paced: two
 * prefetches per 8 columns, as the portable copy's one per 4. */
FASTML_AVX512_INLINE void fastml_v8_xt_r_tile(ptrdiff_t d, const int KB, const double *const *x,
                                              const double *R, ptrdiff_t n, double *G,
                                              fastml_prefetch_cursor *c, int paced) {
    __m512d v[4][FASTML_TILE_MAX];
    const ptrdiff_t d8 = d - d % 8;
    for (int k = 0; k < KB; k++)
        for (int r = 0; r < 4; r++) v[r][k] = FASTML_V8(R[k * n + r]);
    for (ptrdiff_t j = 0; j < d8; j += 8) {
        if (paced) {
            fastml_cursor_step(c, 1);
            fastml_cursor_step(c, 1);
        }
        fastml_v8_xt_r_columns(KB, v, x, j, (__mmask8)0xFF, d, G);
    }
    if (d8 < d) fastml_v8_xt_r_columns(KB, v, x, d8, fastml_v8_tail_mask(d), d, G);
}

FASTML_AVX512 static void fastml_xt_r_cols_f64_avx512(ptrdiff_t n_rows, ptrdiff_t d, ptrdiff_t K,
                                                      const double *X, const double *R,
                                                      double *G,
                                                      fastml_prefetch_cursor *cursor) {
    fastml_prefetch_cursor local = *cursor, *c = &local;   /* see fastml_prefetch_cursor */
    ptrdiff_t i = 0, j, k;
    for (; i + 4 <= n_rows; i += 4) {
        const double *x[4] = {X + i * d, X + (i + 1) * d, X + (i + 2) * d, X + (i + 3) * d};
        fastml_cursor_at(c, x[0]);
        for (k = 0; k < K; k += fastml_tile_width(k, K)) {
            const double *r = R + k * n_rows + i;
            switch (fastml_tile_width(k, K)) {     /* KB a constant: the tile in registers */
            case 3: fastml_v8_xt_r_tile(d, 3, x, r, n_rows, G + k * d, c, k == 0); break;
            case 2: fastml_v8_xt_r_tile(d, 2, x, r, n_rows, G + k * d, c, k == 0); break;
            default: fastml_v8_xt_r_tile(d, 1, x, r, n_rows, G + k * d, c, k == 0);
            }
        }
    }
    for (; i < n_rows; i++)                 /* the block's last 1-3 rows, one by one */
        for (k = 0; k < K; k++) {
            __m512d rk = FASTML_V8(R[k * n_rows + i]);
            double *g = G + k * d;
            for (j = 0; j < d; j += 8) {
                __mmask8 mask = d - j >= 8 ? (__mmask8)0xFF : fastml_v8_tail_mask(d);
                __m512d xv = _mm512_maskz_loadu_pd(mask, X + i * d + j);
                __m512d gv = _mm512_maskz_loadu_pd(mask, g + j);
                _mm512_mask_storeu_pd(g + j, mask, _mm512_fmadd_pd(rk, xv, gv));
            }
        }
    *cursor = local;
}
#endif

/* The multinomial pass's two float64 loops: the AVX-512 copies where they run, else
 * fastml_simd.h's portable ones. */
static void fastml_margins_cols_f64(ptrdiff_t n_rows, ptrdiff_t d, ptrdiff_t K, const double *X,
                                    const double *W, const double *b, double *M,
                                    fastml_prefetch_cursor *cursor) {
#if FASTML_HAVE_AVX512
    if (fastml_cpu_has_avx512()) {
        fastml_margins_cols_f64_avx512(n_rows, d, K, X, W, b, M, cursor);
        return;
    }
#endif
    fastml_margins_cols_f64_portable(n_rows, d, K, X, W, b, M, cursor);
}

static void fastml_xt_r_cols_f64(ptrdiff_t n_rows, ptrdiff_t d, ptrdiff_t K, const double *X,
                                 const double *R, double *G, fastml_prefetch_cursor *cursor) {
#if FASTML_HAVE_AVX512
    if (fastml_cpu_has_avx512()) {
        fastml_xt_r_cols_f64_avx512(n_rows, d, K, X, R, G, cursor);
        return;
    }
#endif
    fastml_xt_r_cols_f64_portable(n_rows, d, K, X, R, G, cursor);
}

#endif
