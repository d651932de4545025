/* The log of the chi-square survival function, log P(X > x) for X ~ chi2(df), stably for any
 * df > 0 and any statistic x >= 0: the binary-split tree builder compares attributes by the
 * log p-value of their best split (fastml/tree/_builder_fast.pyx), where the statistics of a
 * large node reach 1e5 and more and p = exp(-x/2 ...) underflows long before its log does.
 *
 * chi2.sf(x, df) = Q(a, z), the regularized upper incomplete gamma function with a = df/2 and
 * z = x/2. Both classical expansions (Numerical Recipes 6.2; Press et al. 2007) are written in
 * log space: the common factor z^a e^-z / Gamma(a) is added as a log, never evaluated.
 *   - z < a + 1: the series of the lower function P(a, z) = 1 - Q converges fast; log Q =
 *     log1p(-P), exact to a few ulps of Q even when P is tiny (Q near 1, log Q near 0);
 *   - z >= a + 1: the continued fraction of Q itself (modified Lentz), which converges fast
 *     there and keeps its relative accuracy however small Q is.
 * log Gamma(a) comes from a Lanczos approximation (g = 7, 9 terms; about 1e-15 relative) rather
 * than lgamma(), which writes the global signgam and so is not safe to call from the threads
 * that grow a forest's trees.
 */
#ifndef FASTML_CHI2_H
#define FASTML_CHI2_H

#include <math.h>

#define FASTML_CHI2_EPS 1e-16      /* relative size of the last term kept */
#define FASTML_CHI2_MAX_TERMS 100000
#define FASTML_CHI2_TINY 1e-300    /* Lentz's guard against a zero denominator */

/* log Gamma(a) for a > 0 (Lanczos, g = 7; a < 0.5 through Gamma(a) = Gamma(a + 1) / a). */
static inline double fastml_log_gamma(double a) {
    static const double c[9] = {
        0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
        -176.61502916214059, 12.507343278686905, -0.13857109526572012,
        9.9843695780195716e-6, 1.5056327351493116e-7};
    double x, t, s;
    int i;
    if (a < 0.5)
        return fastml_log_gamma(a + 1.0) - log(a);
    x = a - 1.0;
    s = c[0];
    for (i = 1; i < 9; i++)
        s += c[i] / (x + i);
    t = x + 7.5;
    return 0.91893853320467274178 + (x + 0.5) * log(t) - t + log(s); /* log sqrt(2 pi) */
}

/* log Q(a, z) for z < a + 1: the series of P(a, z) = z^a e^-z / Gamma(a + 1) * sum_k z^k /
 * ((a + 1) ... (a + k)). */
static inline double fastml_log_q_series(double a, double z) {
    double term = 1.0, sum = 1.0, ap = a, log_p;
    int k;
    for (k = 0; k < FASTML_CHI2_MAX_TERMS; k++) {
        ap += 1.0;
        term *= z / ap;
        sum += term;
        if (term < sum * FASTML_CHI2_EPS)
            break;
    }
    log_p = a * log(z) - z - fastml_log_gamma(a + 1.0) + log(sum);
    return log1p(-exp(log_p));
}

/* log Q(a, z) for z >= a + 1: z^a e^-z / Gamma(a) times the continued fraction
 * 1 / (z + 1 - a - 1 (1 - a) / (z + 3 - a - 2 (2 - a) / (z + 5 - a - ...))). */
static inline double fastml_log_q_fraction(double a, double z) {
    double b = z + 1.0 - a, c = 1.0 / FASTML_CHI2_TINY, d = 1.0 / b, h = d, an, delta;
    int i;
    for (i = 1; i < FASTML_CHI2_MAX_TERMS; i++) {
        an = -i * (i - a);
        b += 2.0;
        d = an * d + b;
        if (fabs(d) < FASTML_CHI2_TINY)
            d = FASTML_CHI2_TINY;
        c = b + an / c;
        if (fabs(c) < FASTML_CHI2_TINY)
            c = FASTML_CHI2_TINY;
        d = 1.0 / d;
        delta = d * c;
        h *= delta;
        if (fabs(delta - 1.0) < FASTML_CHI2_EPS)
            break;
    }
    return a * log(z) - z - fastml_log_gamma(a) + log(h);
}

/* log P(X > x), X ~ chi2(df): 0 for x <= 0, NaN for df <= 0 or a NaN argument. */
static inline double fastml_chi2_logsf(double x, double df) {
    double a = 0.5 * df, z = 0.5 * x;
    if (!(df > 0.0) || x != x)
        return NAN;
    if (z <= 0.0)
        return 0.0;
    if (isinf(z))
        return -INFINITY;
    return z < a + 1.0 ? fastml_log_q_series(a, z) : fastml_log_q_fraction(a, z);
}

#endif
