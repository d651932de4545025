/* AdaGrad's per-weight update for the SGD loop (_sgd_fast.pyx):
 *     g = dl * x[j] + alpha * w[j] (the L2 term only where x[j] != 0);  G[j] += g^2;
 *     w[j] -= eta0 g / (sqrt(G[j]) + eps)
 * and, when averaging (A != NULL), A[j] -= B * (the step), keeping the lazy average exact.
 *
 * The L2 term reaches only the coordinates the row touches (x[j] != 0), as it does for CSR
 * rows, whose untouched coordinates the loop never visits: a dense row and the same row in
 * CSR give the same model. A coordinate with x[j] == 0 gets g = 0, hence a zero step.
 *
 * The cost: a float64 sqrt and a division per weight per row were most of an SGD step (4-wide
 * vsqrtpd/vdivpd with long throughput). The per-weight rate 1 / (sqrt(G) + eps) is computed in
 * float32 instead (fastml_adagrad_rate): correctly rounded IEEE sqrt and division, relative
 * error below 2^-22 per rate; the gradient, G (the state) and w stay float64, so the rounding
 * does not accumulate: fitted weights move by ~1e-8 relative (tests/test_sgd.py holds them to
 * 1e-6 of the float64 formula). Every path (dense row, dense batch, CSR) uses the same rate.
 *
 * Why C and not Cython: these loops vectorize (and use AVX2 where the CPU has it, see
 * fastml_simd.h). The x[j] != 0 test selects between two constants (alpha or 0), never guards
 * a load: written as `x[j] != 0 ? alpha * w[j] : 0` gcc does not vectorize the loop.
 */
#ifndef FASTML_ADAGRAD_H
#define FASTML_ADAGRAD_H

#include "fastml_simd.h"

/* 1 / (sqrt(G) + eps) in float32 arithmetic (see above). G >= 0; float(G) may round to 0 or
 * overflow to inf, which gives 1/eps (sqrt(G) << eps anyway) or 0 (a vanishing step). */
static inline double fastml_adagrad_rate(double G, float eps) {
    return (double)(1.0f / (sqrtf((float)G) + eps));
}

/* The step without averaging on n weights of one output, for one dense row x with loss
 * derivative dl (x, w and G are separate arrays). */
#define FASTML_DEFINE_ADAGRAD_SPAN(NAME, T)                                                   \
static FASTML_INLINE void NAME(const T *FASTML_RESTRICT x, double dl, T *FASTML_RESTRICT w,  \
                               double *FASTML_RESTRICT G, ptrdiff_t n, double alpha,         \
                               double eta0, float epsf) {                                    \
    ptrdiff_t j;                                                                              \
    for (j = 0; j < n; j++) {                                                                 \
        double xj = (double)x[j];                                                             \
        double g = dl * xj + (xj != 0.0 ? alpha : 0.0) * (double)w[j];                        \
        double Gj = G[j] + g * g;                                                             \
        G[j] = Gj;                                                                            \
        w[j] = (T)((double)w[j] - eta0 * g * fastml_adagrad_rate(Gj, epsf));                  \
    }                                                                                         \
}

FASTML_DEFINE_ADAGRAD_SPAN(fastml_adagrad_span_f64, double)
FASTML_DEFINE_ADAGRAD_SPAN(fastml_adagrad_span_f32, float)

/* One dense row x with loss derivative dl, on the n weights of one output; with the lazy
 * average A when A != NULL (its own loop: a store under a condition does not vectorize). */
#define FASTML_DEFINE_ADAGRAD(NAME, SPAN, T)                                                  \
FASTML_CLONES static void NAME(const T *x, double dl, T *w, double *G, double *A,            \
                               ptrdiff_t n, double alpha, double eta0, double eps, double B) { \
    ptrdiff_t j;                                                                              \
    float epsf = (float)eps;                                                                  \
    if (A == NULL) {                                                                          \
        SPAN(x, dl, w, G, n, alpha, eta0, epsf);                                              \
        return;                                                                               \
    }                                                                                         \
    for (j = 0; j < n; j++) {                                                                 \
        double xj = (double)x[j];                                                             \
        double g = dl * xj + (xj != 0.0 ? alpha : 0.0) * (double)w[j];                        \
        double Gj = G[j] + g * g;                                                             \
        double step = -eta0 * g * fastml_adagrad_rate(Gj, epsf);                              \
        G[j] = Gj;                                                                            \
        w[j] = (T)((double)w[j] + step);                                                      \
        A[j] -= B * step;                                                                     \
    }                                                                                         \
}

FASTML_DEFINE_ADAGRAD(fastml_adagrad_f64, fastml_adagrad_span_f64, double)
FASTML_DEFINE_ADAGRAD(fastml_adagrad_f32, fastml_adagrad_span_f32, float)

/* The step without averaging, fused with the dot product of the NEXT row x_next with the
 * weights just stepped (its margin, which the SGD loop would compute next). A row's step and
 * the next row's dot are the two halves of the loop's serial chain; fused, the dot's loads and
 * multiply-adds run beside the step's float32 sqrt and division, and the next margin is ready
 * as soon as the last weight is (logistic SGD ~3% faster per row, bench/README.md, seventh
 * session). The weights go in spans of FASTML_ADAGRAD_SPAN (a loop gcc vectorizes; a span of
 * 8 was unrolled into scalar code), each followed by its share of the dot, which
 * fastml_dot's own code (fastml_simd.h, DOT_FROM) finishes after the last span: the bits of
 * fastml_row_dot(x_next, w) after the step. */
#define FASTML_ADAGRAD_SPAN 32
#define FASTML_DEFINE_ADAGRAD_DOT(NAME, SPAN, T, LOAD, DOT_FROM)                              \
FASTML_CLONES static double NAME(const T *x, double dl, T *w, double *G, ptrdiff_t n,        \
                                 double alpha, double eta0, double eps, const T *x_next) {   \
    ptrdiff_t j = 0, q;                                                                       \
    float epsf = (float)eps;                                                                  \
    fastml_v4d lo = fastml_v4_set1(0.0), hi = lo;                                             \
    for (; j + FASTML_ADAGRAD_SPAN <= n; j += FASTML_ADAGRAD_SPAN) {                          \
        SPAN(x + j, dl, w + j, G + j, FASTML_ADAGRAD_SPAN, alpha, eta0, epsf);                \
        for (q = j; q < j + FASTML_ADAGRAD_SPAN; q += 8) {                                    \
            lo = fastml_v4_madd(lo, LOAD(x_next + q), LOAD(w + q));                           \
            hi = fastml_v4_madd(hi, LOAD(x_next + q + 4), LOAD(w + q + 4));                   \
        }                                                                                     \
    }                                                                                         \
    SPAN(x + j, dl, w + j, G + j, n - j, alpha, eta0, epsf);      /* the last n mod 32 */     \
    return DOT_FROM(x_next, w, j, n, lo, hi);                                                 \
}

FASTML_DEFINE_ADAGRAD_DOT(fastml_adagrad_dot_f64, fastml_adagrad_span_f64, double,
                          fastml_load4_f64, fastml_dot_f64_from)
FASTML_DEFINE_ADAGRAD_DOT(fastml_adagrad_dot_f32, fastml_adagrad_span_f32, float,
                          fastml_load4_f32, fastml_dot_f32_from)

/* A dense mini-batch: the batch's summed gradient grad[0:n] (zeroed here for the next batch)
 * and touched[j] = 1 where some row of the batch has x_j != 0 (L2 reaches those only; the
 * caller clears it, since the K outputs share it). An untouched weight gets g = 0, a zero
 * step: the same model as the CSR path, which never visits it. */
#define FASTML_DEFINE_ADAGRAD_GRAD(NAME, T)                                                   \
FASTML_CLONES static void NAME(double *grad, const char *touched, T *w, double *G, double *A, \
                               ptrdiff_t n, double alpha, double eta0, double eps, double B) { \
    ptrdiff_t j;                                                                              \
    float epsf = (float)eps;                                                                  \
    for (j = 0; j < n; j++) {                                                                 \
        double g = grad[j] + (touched[j] ? alpha : 0.0) * (double)w[j];                       \
        double Gj = G[j] + g * g;                                                             \
        double step = -eta0 * g * fastml_adagrad_rate(Gj, epsf);                              \
        G[j] = Gj;                                                                            \
        w[j] = (T)((double)w[j] + step);                                                      \
        grad[j] = step;         /* kept for the average below, zeroed there */                \
    }                                                                                         \
    if (A != NULL)                                                                            \
        for (j = 0; j < n; j++) A[j] -= B * grad[j];                                          \
    for (j = 0; j < n; j++) grad[j] = 0.0;                                                    \
}

FASTML_DEFINE_ADAGRAD_GRAD(fastml_adagrad_grad_f64, double)
FASTML_DEFINE_ADAGRAD_GRAD(fastml_adagrad_grad_f32, float)

#endif
