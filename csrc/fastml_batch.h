/* The logistic loss of the batch kernel (_batch_fast.pyx) over a block of margins, written so
 * the compiler vectorizes it across rows: one libm exp and log per row (scalar calls, ~40 ns a
 * row) cost more than reading the row, so here exp is fastml_exp_neg (fastml_vexp.h,
 * within 2 ulp) and log a series, both plain arithmetic. The formulas are those of
 * fastml_math.h / _loss.pxd (one exponential e = e^-|m| per binary row; the softmax shifted by
 * its largest margin); the results agree with them to a few ulps, not bit for bit.
 *
 * Each function writes R[i, k] = sw_i * d loss_i / d m_ik and L[i] = sw_i * loss_i, and returns
 * sum_i L[i] added in row order. */
#ifndef FASTML_BATCH_H
#define FASTML_BATCH_H

#include <stdint.h>
#include <string.h>
#include "fastml_simd.h"
#include "fastml_vexp.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__) \
    && defined(__GLIBC__)
/* no-trapping-math: the selects below become blends (no signalling NaN reaches them) */
#define FASTML_LOSS_CLONES \
    __attribute__((target_clones("avx2", "default"), optimize("no-trapping-math")))
#else
#define FASTML_LOSS_CLONES
/* The curvature of the logistic loss per row, for Newton's Hessian (_batch_fast.pyx's
 * `hessian`): the weights of H_kl = sum_i c_i,kl [x_i, 1][x_i, 1]^T for every pair of outputs
 * (k, l <= k), pair number k (k + 1) / 2 + l, from the margins M (output-major: M[k * n_rows
 * + i]; for K = 1 simply M[i]):
 *     c_kk = sw p_k (1 - p_k),   c_kl = -sw p_k p_l  (l < k),
 * with p the sigmoid of the one output (K = 1 with `reference`) or the softmax over the K
 * outputs (and the zero margin of the reference class). 1 - p_k is the sum of the other
 * classes' terms, not a subtraction from 1, so c_kk keeps its digits when p_k is near 1; the
 * binary form is e / (1 + e)^2 with e = e^-|m|. C is (n_rows, K (K + 1) / 2), row-major; E is
 * (K) scratch. */
FASTML_LOSS_CLONES static void fastml_logistic_curvature(ptrdiff_t n_rows, ptrdiff_t K,
                                                         const double *M, const double *sw,
                                                         int reference, double *C, double *E) {
    ptrdiff_t i, j, k, l, pairs = K * (K + 1) / 2;
    if (K == 1 && reference) {
        for (i = 0; i < n_rows; i++) {
            double e = fastml_exp_nonpositive(-fabs(M[i])), inv = 1.0 / (1.0 + e);
            C[i] = sw[i] * (e * inv) * inv;
        }
        return;
    }
    for (i = 0; i < n_rows; i++) {
        double mx = reference ? 0.0 : M[i], ref, total, inv2;
        double *c = C + i * pairs;
        for (k = 0; k < K; k++) mx = M[k * n_rows + i] > mx ? M[k * n_rows + i] : mx;
        ref = reference ? fastml_exp_nonpositive(-mx) : 0.0;
        total = ref;
        for (k = 0; k < K; k++) {
            E[k] = fastml_exp_nonpositive(M[k * n_rows + i] - mx);
            total += E[k];
        }
        inv2 = sw[i] / (total * total);
        for (k = 0; k < K; k++) {
            double rest = ref;
            for (j = 0; j < K; j++) rest += j == k ? 0.0 : E[j];
            for (l = 0; l < k; l++) c[k * (k + 1) / 2 + l] = -(E[k] * E[l]) * inv2;
            c[k * (k + 1) / 2 + k] = (E[k] * rest) * inv2;
        }
    }
}

#endif

/* log((1 + s) / (1 - s)) = 2 atanh(s) for 0 <= s <= 1/3 by its series 2 s sum_n s^2n / (2n+1)
 * to n = 15: the first term left out is below 2e-17 of the sum. The 16 terms are summed by
 * Estrin's scheme (pairs, then pairs of pairs with u^2, u^4, u^8), four multiply-add levels deep
 * instead of Horner's fifteen: the loss loops are vectorized across rows, and with Horner each
 * vector waited ~90 cycles on its own chain (the binary loss took 15-20 ns a row, more than
 * the rest of the kernel's arithmetic). */
static FASTML_INLINE double fastml_log_ratio(double s) {
    double u = s * s, u2 = u * u, u4 = u2 * u2, u8 = u4 * u4;
    double a0 = 1.0 + u * (1.0 / 3.0), a1 = 1.0 / 5.0 + u * (1.0 / 7.0);
    double a2 = 1.0 / 9.0 + u * (1.0 / 11.0), a3 = 1.0 / 13.0 + u * (1.0 / 15.0);
    double a4 = 1.0 / 17.0 + u * (1.0 / 19.0), a5 = 1.0 / 21.0 + u * (1.0 / 23.0);
    double a6 = 1.0 / 25.0 + u * (1.0 / 27.0), a7 = 1.0 / 29.0 + u * (1.0 / 31.0);
    double b0 = a0 + u2 * a1, b1 = a2 + u2 * a3, b2 = a4 + u2 * a5, b3 = a6 + u2 * a7;
    double c0 = b0 + u4 * b1, c1 = b2 + u4 * b3;
    return 2.0 * s * (c0 + u8 * c1);
}

/* log(1 + e) for 0 <= e <= 1: (1 + s) / (1 - s) = 1 + e at s = e / (2 + e) <= 1/3, with no
 * cancellation at small e (unlike log(1 + e)). */
static FASTML_INLINE double fastml_log1p_unit_series(double e) {
    return fastml_log_ratio(e / (2.0 + e));
}

/* sum_i w[i] log(1 + e[i]) for e[i] in [0, 1] (the SGD loop's deferred loss terms): the log
 * by the series, vectorized across i; e[] is overwritten with the terms, added in order of i. */
FASTML_LOSS_CLONES static double fastml_weighted_log1p_sum(ptrdiff_t n, double *e,
                                                           const double *w) {
    ptrdiff_t i;
    double total = 0.0;
    for (i = 0; i < n; i++) e[i] = w[i] * fastml_log1p_unit_series(e[i]);
    for (i = 0; i < n; i++) total += e[i];
    return total;
}

/* log(z) for 1 <= z < 2^1023: z = 2^k f with 1 <= f < 2, log z = k ln 2 + log f and
 * log f = 2 atanh((f - 1) / (f + 1)) (f - 1 exact). k comes from the exponent bits as a
 * double (2^52 + k + 1023 written into a double's mantissa), which AVX2 can do. */
static FASTML_INLINE double fastml_log_ge1(double z) {
    uint64_t bits, fbits, kbits;
    double f, kd;
    memcpy(&bits, &z, sizeof bits);
    fbits = (bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
    kbits = (bits >> 52) | 0x4330000000000000ULL;
    memcpy(&f, &fbits, sizeof f);
    memcpy(&kd, &kbits, sizeof kd);
    kd -= 4503599627371519.0;                 /* 2^52 + 1023 */
    return kd * FASTML_EXP_LN2_HI
           + (kd * FASTML_EXP_LN2_LO + fastml_log_ratio((f - 1.0) / (f + 1.0)));
}

/* e^x for x <= 0 (fastml_exp_neg), NaN for NaN (which fastml_exp_neg maps to 0) */
static FASTML_INLINE double fastml_exp_nonpositive(double x) {
    return x == x ? fastml_exp_neg(x) : x;
}

/* Binary logistic loss (one output, class code `positive` is the output's class, the other
 * has margin 0): loss = (max(m, 0) - t m) + log(1 + e), d/dm = sigma(m) - t, e = e^-|m|.
 * A NaN margin gives a NaN loss and derivative, as with libm's exp. */
FASTML_LOSS_CLONES static double fastml_logistic_block(ptrdiff_t n_rows, const double *M,
                                                       const double *y, const double *sw,
                                                       double positive, double *R, double *L) {
    ptrdiff_t i;
    double total = 0.0;
    for (i = 0; i < n_rows; i++) {
        double m = M[i], t = y[i] == positive ? 1.0 : 0.0;
        double e = fastml_exp_nonpositive(-fabs(m)), inv = 1.0 / (1.0 + e);
        double dl = (m >= 0.0 ? inv : e * inv) - t;
        R[i] = sw[i] * dl;
        L[i] = sw[i] * (((m > 0.0 ? m : 0.0) - t * m) + fastml_log1p_unit_series(e));
    }
    for (i = 0; i < n_rows; i++) total += L[i];
    return total;
}

/* Softmax cross-entropy over K outputs per row (output k stands for class code k + offset;
 * with `reference`, class code 0 has the fixed margin 0): loss = log(sum_k e^(m_k - mx)) + mx
 * - m_label, d/dm_k = p_k - [k is the label]. E (n_rows, K) and S (n_rows) are scratch; the
 * exps and logs run as flat vectorized loops, the per-row maxima and sums in order of k. */
FASTML_LOSS_CLONES static double fastml_softmax_block(ptrdiff_t n_rows, ptrdiff_t K,
                                                      const double *M, const double *y,
                                                      const double *sw, int offset,
                                                      int reference, double *R, double *L,
                                                      double *E, double *S) {
    ptrdiff_t i, k;
    double total = 0.0;
    for (i = 0; i < n_rows; i++) {               /* E <- m_ik - mx_i, S <- mx_i */
        double mx = reference ? 0.0 : M[i * K];
        for (k = 0; k < K; k++) mx = M[i * K + k] > mx ? M[i * K + k] : mx;
        for (k = 0; k < K; k++) E[i * K + k] = M[i * K + k] - mx;
        S[i] = mx;
    }
    for (i = 0; i < n_rows * K; i++) E[i] = fastml_exp_nonpositive(E[i]);
    for (i = 0; i < n_rows; i++) {               /* L <- mx_i - m_label; S <- sum of exps */
        double mx = S[i], z = reference ? fastml_exp_nonpositive(-mx) : 0.0;
        ptrdiff_t label = (ptrdiff_t)y[i] - offset;
        for (k = 0; k < K; k++) z += E[i * K + k];
        L[i] = mx - (label >= 0 && label < K ? M[i * K + label] : 0.0);
        S[i] = z;
    }
    for (i = 0; i < n_rows; i++) L[i] = sw[i] * (fastml_log_ge1(S[i]) + L[i]);
    for (i = 0; i < n_rows; i++) {
        ptrdiff_t label = (ptrdiff_t)y[i] - offset;
        for (k = 0; k < K; k++)
            R[i * K + k] = sw[i] * (E[i * K + k] / S[i] - (k == label ? 1.0 : 0.0));
    }
    for (i = 0; i < n_rows; i++) total += L[i];
    return total;
}

/* fastml_softmax_block's loss and derivatives for margins M and residuals R in output-major
 * order ((K, n_rows): M[k * n_rows + i], fastml_simd.h's "cols" loops), with the same
 * operations in the same order per row (the same bits). In fastml_softmax_block the per-row
 * loops over k (the maxima, the sums, a division per value) run scalar, K steps per row; here
 * every step is a loop across the block's rows, one output at a time, which the compiler
 * vectorizes for any K. E is (K, n_rows) scratch, S and code (n_rows). */
FASTML_LOSS_CLONES static double fastml_softmax_block_cols(
        ptrdiff_t n_rows, ptrdiff_t K, const double *FASTML_RESTRICT M,
        const double *FASTML_RESTRICT y, const double *FASTML_RESTRICT sw, int offset,
        int reference, double *FASTML_RESTRICT R, double *FASTML_RESTRICT L,
        double *FASTML_RESTRICT E, double *FASTML_RESTRICT S, double *FASTML_RESTRICT code) {
    ptrdiff_t i, k, n = n_rows;
    double total = 0.0;
    for (i = 0; i < n; i++) {                    /* code <- the label's output; L <- m_label */
        ptrdiff_t label = (ptrdiff_t)y[i] - offset;
        code[i] = (double)label;
        L[i] = label >= 0 && label < K ? M[label * n + i] : 0.0;
        S[i] = reference ? 0.0 : M[i];           /* S <- mx_i */
    }
    for (k = 0; k < K; k++)
        for (i = 0; i < n; i++) S[i] = M[k * n + i] > S[i] ? M[k * n + i] : S[i];
    for (k = 0; k < K; k++)
        for (i = 0; i < n; i++) E[k * n + i] = fastml_exp_nonpositive(M[k * n + i] - S[i]);
    for (i = 0; i < n; i++) {                    /* L <- mx_i - m_label; S <- sum of exps */
        L[i] = S[i] - L[i];
        S[i] = reference ? fastml_exp_nonpositive(-S[i]) : 0.0;
    }
    for (k = 0; k < K; k++)
        for (i = 0; i < n; i++) S[i] += E[k * n + i];
    for (i = 0; i < n; i++) L[i] = sw[i] * (fastml_log_ge1(S[i]) + L[i]);
    for (k = 0; k < K; k++)
        for (i = 0; i < n; i++)
            R[k * n + i] = sw[i] * (E[k * n + i] / S[i] - ((double)k == code[i] ? 1.0 : 0.0));
    for (i = 0; i < n; i++) total += L[i];
    return total;
}

/* The curvature of the logistic loss per row, for Newton's Hessian (_batch_fast.pyx's
 * `hessian`): the weights of H_kl = sum_i c_i,kl [x_i, 1][x_i, 1]^T for every pair of outputs
 * (k, l <= k), pair number k (k + 1) / 2 + l, from the margins M (output-major: M[k * n_rows
 * + i]; for K = 1 simply M[i]):
 *     c_kk = sw p_k (1 - p_k),   c_kl = -sw p_k p_l  (l < k),
 * with p the sigmoid of the one output (K = 1 with `reference`) or the softmax over the K
 * outputs (and the zero margin of the reference class). 1 - p_k is the sum of the other
 * classes' terms, not a subtraction from 1, so c_kk keeps its digits when p_k is near 1; the
 * binary form is e / (1 + e)^2 with e = e^-|m|. C is (n_rows, K (K + 1) / 2), row-major; E is
 * (K) scratch. */
FASTML_LOSS_CLONES static void fastml_logistic_curvature(ptrdiff_t n_rows, ptrdiff_t K,
                                                         const double *M, const double *sw,
                                                         int reference, double *C, double *E) {
    ptrdiff_t i, j, k, l, pairs = K * (K + 1) / 2;
    if (K == 1 && reference) {
        for (i = 0; i < n_rows; i++) {
            double e = fastml_exp_nonpositive(-fabs(M[i])), inv = 1.0 / (1.0 + e);
            C[i] = sw[i] * (e * inv) * inv;
        }
        return;
    }
    for (i = 0; i < n_rows; i++) {
        double mx = reference ? 0.0 : M[i], ref, total, inv2;
        double *c = C + i * pairs;
        for (k = 0; k < K; k++) mx = M[k * n_rows + i] > mx ? M[k * n_rows + i] : mx;
        ref = reference ? fastml_exp_nonpositive(-mx) : 0.0;
        total = ref;
        for (k = 0; k < K; k++) {
            E[k] = fastml_exp_nonpositive(M[k * n_rows + i] - mx);
            total += E[k];
        }
        inv2 = sw[i] / (total * total);
        for (k = 0; k < K; k++) {
            double rest = ref;
            for (j = 0; j < K; j++) rest += j == k ? 0.0 : E[j];
            for (l = 0; l < k; l++) c[k * (k + 1) / 2 + l] = -(E[k] * E[l]) * inv2;
            c[k * (k + 1) / 2 + k] = (E[k] * rest) * inv2;
        }
    }
}

#endif
