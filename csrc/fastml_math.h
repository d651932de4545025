/* Numerically stable scalar functions shared by the kernels (the SGD loop and the batch
 * logistic kernel, through _loss.pxd).
 *
 * sigmoid(z) = 1 / (1 + e^-z) and log(1 + e^z) are evaluated so that no exponential ever
 * overflows: both are written with e^-|z| in (0, 1]. They are exact to the last bit or two of
 * double precision at any |z| (1e4 included).
 */
#ifndef FASTML_MATH_H
#define FASTML_MATH_H

#include <math.h>

/* log(1 + e) for e in [0, 1], accurate to a few ulps (Goldberg's trick: the rounding error of
 * u = 1 + e cancels in e / (u - 1)), using log() which is several times faster than log1p(). */
static inline double fastml_log1p_unit(double e) {
    double u = 1.0 + e;
    return u == 1.0 ? e : log(u) * e / (u - 1.0);
}

/* The binary logistic loss log(1 + e^m) - t m and its derivative sigma(m) - t, sharing one
 * exponential: with e = e^-|m| (in (0, 1], never overflows), sigma(m) = 1/(1+e) for m >= 0 and
 * e/(1+e) otherwise, and log(1 + e^m) - t m = (max(m, 0) - t m) + log1p(e) (the first term is
 * exact 0 for a confident right answer, so a tiny log1p(e) is kept).
 *
 * fastml_logistic_loss_but_log1p returns the loss without its log1p(e) term and passes e out:
 * the SGD loop steps on the derivative at once and adds the log1p terms later, many rows at a
 * time by a vectorized series (fastml_weighted_log1p_sum, _sgd_fast.pyx). */
static inline double fastml_logistic_loss_but_log1p(double m, double t, double *dloss,
                                                    double *e_out) {
    double e = exp(-fabs(m));
    double inv = 1.0 / (1.0 + e);
    *dloss = (m >= 0.0 ? inv : e * inv) - t;
    *e_out = e;
    return (m > 0.0 ? m : 0.0) - t * m;
}

static inline double fastml_logistic_loss_dloss(double m, double t, double *dloss) {
    double e, rest = fastml_logistic_loss_but_log1p(m, t, dloss, &e);
    return rest + fastml_log1p_unit(e);
}

#endif
