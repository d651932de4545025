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

#endif
