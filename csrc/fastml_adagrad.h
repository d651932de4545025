/* AdaGrad's per-weight update on n contiguous weights, for the SGD loop (_sgd_fast.pyx):
 *     g = (grad[j] or dl * x[j]) + alpha * w[j];  G[j] += g^2;  w[j] -= eta0 g / (sqrt(G[j]) + eps)
 * and, when averaging (A != NULL), A[j] -= B * (the step), keeping the lazy average exact.
 *
 * Why C and not Cython: the loop is bound by sqrt and division, which run twice as fast with
 * AVX2 as with the SSE2 a portable x86-64 wheel is compiled for (see fastml_simd.h).
 * A zero gradient gives a zero step (0 / (sqrt(G) + eps) = 0), so the loops need no branch.
 */
#ifndef FASTML_ADAGRAD_H
#define FASTML_ADAGRAD_H

#include "fastml_simd.h"

#define FASTML_DEFINE_ADAGRAD(NAME, T)                                                        \
FASTML_CLONES static void NAME(const double *grad, const T *x, double dl, T *w, double *G,    \
                               double *A, ptrdiff_t n, double alpha, double eta0, double eps, \
                               double B) {                                                    \
    ptrdiff_t j;                                                                              \
    if (A != NULL) {                                                                          \
        for (j = 0; j < n; j++) {                                                             \
            double g = (grad != NULL ? grad[j] : dl * (double)x[j]) + alpha * (double)w[j];  \
            G[j] += g * g;                                                                    \
            double step = -eta0 * g / (sqrt(G[j]) + eps);                                     \
            w[j] = (T)((double)w[j] + step);                                                  \
            A[j] -= B * step;                                                                 \
        }                                                                                     \
    } else if (grad == NULL) {                                                                \
        for (j = 0; j < n; j++) {                                                             \
            double g = dl * (double)x[j] + alpha * (double)w[j];                              \
            G[j] += g * g;                                                                    \
            w[j] = (T)((double)w[j] - eta0 * g / (sqrt(G[j]) + eps));                         \
        }                                                                                     \
    } else {                                                                                  \
        for (j = 0; j < n; j++) {                                                             \
            double g = grad[j] + alpha * (double)w[j];                                        \
            G[j] += g * g;                                                                    \
            w[j] = (T)((double)w[j] - eta0 * g / (sqrt(G[j]) + eps));                         \
        }                                                                                     \
    }                                                                                         \
}

FASTML_DEFINE_ADAGRAD(fastml_adagrad_f64, double)
FASTML_DEFINE_ADAGRAD(fastml_adagrad_f32, float)

#endif
