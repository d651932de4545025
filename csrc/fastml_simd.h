/* Loops worth an AVX2 copy, built next to the baseline copy a portable x86-64 wheel gets:
 * GCC's target_clones compiles both and picks one when the module loads (glibc ifunc), so one
 * wheel runs everywhere and uses AVX2 where the CPU has it. Elsewhere: one plain copy. */
#ifndef FASTML_SIMD_H
#define FASTML_SIMD_H

#include <stddef.h>
#include <math.h>

#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__) && defined(__GLIBC__)
#define FASTML_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define FASTML_CLONES
/* x . w over n values, for the SGD loop's dense rows (per row: one call, no BLAS dispatch,
 * which costs more than the arithmetic at n ~ 100). Eight partial sums, lane l summing
 * x[j] w[j] for j = l mod 8 in order, then a fixed tree: the AVX2 and the baseline clone
 * do the same operations in the same order, so both give the same bits. float32 rows are
 * multiplied and summed in float64. */
#define FASTML_DEFINE_DOT(NAME, T)                                                           \
FASTML_CLONES static double NAME(const T *x, const T *w, ptrdiff_t n) {                      \
    double acc[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0}, s;                            \
    ptrdiff_t j = 0;                                                                         \
    int l;                                                                                   \
    for (; j + 8 <= n; j += 8)                                                               \
        for (l = 0; l < 8; l++) acc[l] += (double)x[j + l] * (double)w[j + l];               \
    s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));   \
    for (; j < n; j++) s += (double)x[j] * (double)w[j];                                     \
    return s;                                                                                \
}

FASTML_DEFINE_DOT(fastml_dot_f64, double)
FASTML_DEFINE_DOT(fastml_dot_f32, float)

/* w += c x over n values: each w[j] += (T)(c * x[j]), the rounding of the CSR rows' loop
 * (_rows.pxd's row_axpy), so a dense row and the same row in CSR take the same step. */
#define FASTML_DEFINE_AXPY(NAME, T)                                                          \
FASTML_CLONES static void NAME(double c, const T *x, T *w, ptrdiff_t n) {                    \
    ptrdiff_t j;                                                                             \
    for (j = 0; j < n; j++) w[j] += (T)(c * (double)x[j]);                                   \
}

FASTML_DEFINE_AXPY(fastml_axpy_f64, double)
FASTML_DEFINE_AXPY(fastml_axpy_f32, float)

#endif

/* g[0:d] += X^T r for a C-contiguous (n_rows, d) block X: the gradient accumulation of the
 * batch logistic kernel. Four rows per sweep of g, so g is loaded and stored a quarter as often,
 * and the j loop (independent g[j]) vectorizes without reordering any sum. */
#define FASTML_DEFINE_XT_R(NAME, T)                                                          \
FASTML_CLONES static void NAME(ptrdiff_t n_rows, ptrdiff_t d, const T *X, const double *r,  \
                               double *g) {                                                  \
    ptrdiff_t i = 0, j;                                                                      \
    for (; i + 4 <= n_rows; i += 4) {                                                        \
        const T *x0 = X + i * d, *x1 = x0 + d, *x2 = x1 + d, *x3 = x2 + d;                   \
        double r0 = r[i], r1 = r[i + 1], r2 = r[i + 2], r3 = r[i + 3];                       \
        for (j = 0; j < d; j++)                                                              \
            g[j] += r0 * x0[j] + r1 * x1[j] + r2 * x2[j] + r3 * x3[j];                       \
    }                                                                                        \
    for (; i < n_rows; i++)                                                                  \
        for (j = 0; j < d; j++) g[j] += r[i] * X[i * d + j];                                 \
}

FASTML_DEFINE_XT_R(fastml_xt_r_f64, double)
FASTML_DEFINE_XT_R(fastml_xt_r_f32, float)

/* x . w over n values, for the SGD loop's dense rows (per row: one call, no BLAS dispatch,
 * which costs more than the arithmetic at n ~ 100). Eight partial sums, lane l summing
 * x[j] w[j] for j = l mod 8 in order, then a fixed tree: the AVX2 and the baseline clone
 * do the same operations in the same order, so both give the same bits. float32 rows are
 * multiplied and summed in float64. */
#define FASTML_DEFINE_DOT(NAME, T)                                                           \
FASTML_CLONES static double NAME(const T *x, const T *w, ptrdiff_t n) {                      \
    double acc[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0}, s;                            \
    ptrdiff_t j = 0;                                                                         \
    int l;                                                                                   \
    for (; j + 8 <= n; j += 8)                                                               \
        for (l = 0; l < 8; l++) acc[l] += (double)x[j + l] * (double)w[j + l];               \
    s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));   \
    for (; j < n; j++) s += (double)x[j] * (double)w[j];                                     \
    return s;                                                                                \
}

FASTML_DEFINE_DOT(fastml_dot_f64, double)
FASTML_DEFINE_DOT(fastml_dot_f32, float)

/* w += c x over n values: each w[j] += (T)(c * x[j]), the rounding of the CSR rows' loop
 * (_rows.pxd's row_axpy), so a dense row and the same row in CSR take the same step. */
#define FASTML_DEFINE_AXPY(NAME, T)                                                          \
FASTML_CLONES static void NAME(double c, const T *x, T *w, ptrdiff_t n) {                    \
    ptrdiff_t j;                                                                             \
    for (j = 0; j < n; j++) w[j] += (T)(c * (double)x[j]);                                   \
}

FASTML_DEFINE_AXPY(fastml_axpy_f64, double)
FASTML_DEFINE_AXPY(fastml_axpy_f32, float)

#endif
