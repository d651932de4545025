/* The two passes of naive Bayes' Gaussian moment kernel over one block of rows
 * (fastml/naive_bayes/_nb_fast.pyx states the algorithm), and the in-cache transpose that lets a
 * column-major X take the same passes.
 *
 * Why C: the inner loops run over the attributes of one row into that row's class tables; with
 * `restrict` (the tables never alias X) GCC vectorizes them, and the AVX2 clone does 4 doubles a
 * step. Each table element sees the same operations in the same row order as a scalar loop, and
 * no clone contracts to FMA (FMA is not part of target "avx2", and fp-contract is off here), so
 * every clone, and the row-major and column-major paths, give bit-identical moments.
 *
 * A block is `n` rows of `width` attributes, row i at X + i * ldx; class tables are indexed
 * y[i] * d + j (the caller offsets them to the block's first column). */
#ifndef FASTML_NB_H
#define FASTML_NB_H

#include <stddef.h>
#include <stdint.h>

#include "fastml_simd.h"

/* fp-contract=off: no clone fuses a * b + c into an FMA (that would change the bits).
 * no-trapping-math: the NaN tests (v == v) may then become vector selects; with the default
 * GCC keeps a branch per cell (a compare of a signaling NaN could trap) and vectorizes
 * nothing. Neither changes a result: fastml never observes floating-point exceptions. */
#if defined(__GNUC__) && !defined(__clang__)
#define FASTML_NO_CONTRACT __attribute__((optimize("fp-contract=off", "no-trapping-math")))
#else
#define FASTML_NO_CONTRACT
#endif

/* Pass 1: cnt[k, j] += w_i and sum[k, j] += w_i x_ij over the non-NaN x_ij of the rows of
 * class k (NaN adds 0). Products are formed for every cell and then selected: a product under
 * the condition could trap (GCC's default -ftrapping-math), so GCC would keep the branch and
 * not vectorize. */
#define FASTML_DEFINE_NB_SUMS(NAME, T)                                                       \
FASTML_CLONES FASTML_NO_CONTRACT static void NAME(                                           \
        ptrdiff_t n, ptrdiff_t width, const T *X, ptrdiff_t ldx, const int64_t *y,          \
        const double *w, ptrdiff_t d, double *cnt, double *sum) {                            \
    for (ptrdiff_t i = 0; i < n; i++) {                                                      \
        const T *restrict x = X + i * ldx;                                                   \
        double *restrict c = cnt + y[i] * d;                                                 \
        double *restrict s = sum + y[i] * d;                                                 \
        const double wi = w[i];                                                              \
        for (ptrdiff_t j = 0; j < width; j++) {                                              \
            const double v = (double)x[j], wv = wi * v;                                      \
            const double add_c = v == v ? wi : 0.0, add_s = v == v ? wv : 0.0;               \
            c[j] += add_c;                                                                   \
            s[j] += add_s;                                                                   \
        }                                                                                    \
    }                                                                                        \
}

/* Pass 2: with dev = x_ij - center[k, j] (0 for NaN), d1[k, j] += w_i dev and
 * d2[k, j] += (w_i dev) dev. */
#define FASTML_DEFINE_NB_DEVS(NAME, T)                                                       \
FASTML_CLONES FASTML_NO_CONTRACT static void NAME(                                           \
        ptrdiff_t n, ptrdiff_t width, const T *X, ptrdiff_t ldx, const int64_t *y,          \
        const double *w, ptrdiff_t d, const double *center, double *d1, double *d2) {        \
    for (ptrdiff_t i = 0; i < n; i++) {                                                      \
        const T *restrict x = X + i * ldx;                                                   \
        const double *restrict c = center + y[i] * d;                                        \
        double *restrict s1 = d1 + y[i] * d;                                                 \
        double *restrict s2 = d2 + y[i] * d;                                                 \
        const double wi = w[i];                                                              \
        for (ptrdiff_t j = 0; j < width; j++) {                                              \
            const double v = (double)x[j];                                                   \
            const double diff = v - c[j], dev = v == v ? diff : 0.0;                         \
            s1[j] += wi * dev;                                                               \
            s2[j] += wi * dev * dev;                                                         \
        }                                                                                    \
    }                                                                                        \
}

/* dst[i * ldd + j] = src[j * lds + i] for i < n, j < width: a column-major panel copied
 * row-major, 4 x 4 tiles so both sides touch few cache lines per step (the panel is small
 * enough to stay in L1/L2 for the two passes that follow). */
#define FASTML_DEFINE_NB_TRANSPOSE(NAME, T)                                                  \
FASTML_CLONES static void NAME(ptrdiff_t n, ptrdiff_t width, const T *src, ptrdiff_t lds,     \
                               T *dst, ptrdiff_t ldd) {                                      \
    ptrdiff_t i, j, a, b;                                                                    \
    for (j = 0; j + 4 <= width; j += 4) {                                                    \
        const T *restrict s0 = src + j * lds;                                                \
        for (i = 0; i + 4 <= n; i += 4)                                                      \
            for (a = 0; a < 4; a++)                                                          \
                for (b = 0; b < 4; b++)                                                      \
                    dst[(i + a) * ldd + j + b] = s0[b * lds + i + a];                        \
        for (; i < n; i++)                                                                   \
            for (b = 0; b < 4; b++) dst[i * ldd + j + b] = s0[b * lds + i];                  \
    }                                                                                        \
    for (; j < width; j++)                                                                   \
        for (i = 0; i < n; i++) dst[i * ldd + j] = src[j * lds + i];                         \
}

FASTML_DEFINE_NB_SUMS(fastml_nb_sums_f64, double)
FASTML_DEFINE_NB_SUMS(fastml_nb_sums_f32, float)
FASTML_DEFINE_NB_DEVS(fastml_nb_devs_f64, double)
FASTML_DEFINE_NB_DEVS(fastml_nb_devs_f32, float)
FASTML_DEFINE_NB_TRANSPOSE(fastml_nb_transpose_f64, double)
FASTML_DEFINE_NB_TRANSPOSE(fastml_nb_transpose_f32, float)

#endif
