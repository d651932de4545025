/* AdaGrad's per-weight update for one dense row x, for the SGD loop (_sgd_fast.pyx):
 *     g = dl * x[j] + alpha * w[j] (the L2 term only where x[j] != 0);  G[j] += g^2;
 *     w[j] -= eta0 g / (sqrt(G[j]) + eps)
 * and, when averaging (A != NULL), A[j] -= B * (the step), keeping the lazy average exact.
 *
 * The L2 term reaches only the coordinates the row touches (x[j] != 0), as it does for CSR
 * rows, whose untouched coordinates the loop never visits: a dense row and the same row in
 * CSR give the same model. A coordinate with x[j] == 0 gets g = 0, hence a zero step.
 *
 * Why C and not Cython: the loop is bound by sqrt and division, which run twice as fast with
 * AVX2 as with the SSE2 a portable x86-64 wheel is compiled for (see fastml_simd.h). The
 * x[j] != 0 test selects between two constants (alpha or 0), never guards a load: written as
 * `x[j] != 0 ? alpha * w[j] : 0` gcc does not vectorize the loop (4x slower).
 */
#ifndef FASTML_ADAGRAD_H
#define FASTML_ADAGRAD_H

#include "fastml_simd.h"

#define FASTML_DEFINE_ADAGRAD(NAME, T)                                                        \
FASTML_CLONES static void NAME(const T *x, double dl, T *w, double *G, double *A,            \
                               ptrdiff_t n, double alpha, double eta0, double eps, double B) { \
    ptrdiff_t j;                                                                              \
    if (A != NULL) {                                                                          \
        for (j = 0; j < n; j++) {                                                             \
            double xj = (double)x[j];                                                         \
            double g = dl * xj + (xj != 0.0 ? alpha : 0.0) * (double)w[j];                    \
            G[j] += g * g;                                                                    \
            double step = -eta0 * g / (sqrt(G[j]) + eps);                                     \
            w[j] = (T)((double)w[j] + step);                                                  \
            A[j] -= B * step;                                                                 \
        }                                                                                     \
    } else {                                                                                  \
        for (j = 0; j < n; j++) {                                                             \
            double xj = (double)x[j];                                                         \
            double g = dl * xj + (xj != 0.0 ? alpha : 0.0) * (double)w[j];                    \
            G[j] += g * g;                                                                    \
            w[j] = (T)((double)w[j] - eta0 * g / (sqrt(G[j]) + eps));                         \
        }                                                                                     \
    }                                                                                         \
}

FASTML_DEFINE_ADAGRAD(fastml_adagrad_f64, double)
FASTML_DEFINE_ADAGRAD(fastml_adagrad_f32, float)

#endif
