/* exp(x) for four doubles at once, for the rbf kernel (csrc/fastml_kernel_rows.h), where libm's
 * exp, one call per value, was the cost of kernel perceptron predict; and tanh on top of it for
 * the sigmoid kernel (below fastml_v4_exp_fast).
 *
 * Method (Cephes/SLEEF style): x = n ln2 + r with n = round(x / ln2), |r| <= ln2/2 (Cody-Waite:
 * ln2 in two parts, n * ln2_hi exact), exp(r) = 1 + r + r^2 q(r) with q a degree-9 fit to
 * (e^r - 1 - r) / r^2 (Chebyshev, mpmath; |error| < 1.3e-17 on e^r, ~0.1 ulp), and 2^n written
 * into the exponent bits. The largest term, 1, is added last, so the result is within ~1 ulp.
 * The fast form is valid for -708 <= x <= 709 (2^n and the result are normal numbers);
 * fastml_exp_full handles the rest: subnormal results down to exp(-745.13) (2^n in two
 * factors, one rounding), 0 below, +inf above 709.78, NaN stays NaN.
 *
 * Written with GCC vector extensions (4 x double), so the width does not depend on the
 * auto-vectorizer: a FASTML_CLONES function (fastml_simd.h) gets AVX2 in its avx2 clone and
 * two SSE2 halves in the baseline clone. No FMA (the avx2 target does not enable it), so every
 * clone, and the scalar fastml_exp_full, round every operation the same way: the same bits on
 * every machine. Compilers without vector extensions get the scalar form. */
#ifndef FASTML_VEXP_H
#define FASTML_VEXP_H

#include <stdint.h>
#include <string.h>
#include <stddef.h>
#include <math.h>
#include "fastml_simd.h"

/* fastml_simd.h's four-double vector (fastml_v4d, a GCC vector there) and FASTML_INLINE,
 * with the integer views the exponent arithmetic needs. */
#if defined(__GNUC__)
#define FASTML_HAVE_V4 1
typedef int64_t fastml_v4i __attribute__((vector_size(32)));
typedef uint64_t fastml_v4u __attribute__((vector_size(32)));
#else
#define FASTML_HAVE_V4 0
#endif

#define FASTML_EXP_FAST_LO (-708.0)     /* n >= -1021: 2^n and exp(x) normal */
#define FASTML_EXP_FAST_HI 709.0        /* n <= 1023 */

/* The shared steps, scalar: reduction, polynomial, and 2^n as the bits of t (t = 1.5 * 2^52 + n
 * holds n in its low mantissa bits). Every operation is the one the vector form does. */
#define FASTML_EXP_SHIFTER 6755399441055744.0
#define FASTML_EXP_LOG2E 1.4426950408889634
/* ln2 = LN2_HI + LN2_LO, with n * LN2_HI exact */
#define FASTML_EXP_LN2_HI 0.693147180369123816490
#define FASTML_EXP_LN2_LO 1.90821492927058770002e-10
/* q(r) by Estrin's scheme: the same operations as Horner's give, in a chain of 6 instead of
 * 18 dependent steps (the vector loops are bound by that latency, not by the operations). */
/* q's coefficients: q(r) = Q0 + Q1 r + ... + Q9 r^9 */
#define FASTML_EXP_Q0 0.5000000000000001
#define FASTML_EXP_Q1 0.16666666666666669
#define FASTML_EXP_Q2 0.04166666666662367
#define FASTML_EXP_Q3 0.008333333333330027
#define FASTML_EXP_Q4 0.0013888888917442772
#define FASTML_EXP_Q5 0.00019841269863229763
#define FASTML_EXP_Q6 2.4801520940521364e-05
#define FASTML_EXP_Q7 2.755726818666448e-06
#define FASTML_EXP_Q8 2.7620257282985725e-07
#define FASTML_EXP_Q9 2.5100515333382707e-08
#define FASTML_EXP_POLY(T, r, q)                                                                  \
    do {                                                                                       \
        T r2_ = r * r, r4_ = r2_ * r2_;                                                        \
        T p01_ = r * FASTML_EXP_Q1 + FASTML_EXP_Q0;                                            \
        T p23_ = r * FASTML_EXP_Q3 + FASTML_EXP_Q2;                                            \
        T p45_ = r * FASTML_EXP_Q5 + FASTML_EXP_Q4;                                            \
        T p67_ = r * FASTML_EXP_Q7 + FASTML_EXP_Q6;                                            \
        T p89_ = r * FASTML_EXP_Q9 + FASTML_EXP_Q8;                                            \
        q = (p01_ + p23_ * r2_) + ((p45_ + p67_ * r2_) + p89_ * r4_) * r4_;                    \
    } while (0)

static FASTML_INLINE double fastml_exp_reduced(double x, double *t_out) {
    double t = x * FASTML_EXP_LOG2E + FASTML_EXP_SHIFTER, n = t - FASTML_EXP_SHIFTER;
    double r = (x - n * FASTML_EXP_LN2_HI) - n * FASTML_EXP_LN2_LO, q;
    FASTML_EXP_POLY(double, r, q);
    *t_out = t;
    return 1.0 + (r + (r * r) * q);
}

static FASTML_INLINE double fastml_pow2i(int64_t n) {   /* 2^n, -1022 <= n <= 1023 */
    uint64_t bits = (uint64_t)(n + 1023) << 52;
    double s;
    memcpy(&s, &bits, sizeof s);
    return s;
}

/* exp(x) for x <= 0 in straight-line code that GCC vectorizes across a loop (the batch
 * logistic loss, csrc/fastml_batch.h): fastml_exp_reduced's arithmetic, with exp(x) = 0 below
 * -708 (e^-708 ~ 3e-308) instead of fastml_exp_full's subnormal tail, which needs branches. */
static FASTML_INLINE double fastml_exp_neg(double x) {
    double xc = x > FASTML_EXP_FAST_LO ? x : FASTML_EXP_FAST_LO, t, e, scale;
    uint64_t bits;
    e = fastml_exp_reduced(xc, &t);
    memcpy(&bits, &t, sizeof bits);
    bits = (bits + 1023) << 52;                     /* (1.5 * 2^52 + n + 1023) << 52 = 2^n */
    memcpy(&scale, &bits, sizeof scale);
    return (x > FASTML_EXP_FAST_LO ? e : 0.0) * scale;
}

/* exp(x) over the whole double range (the slow lanes of the vector loops, and the tests). */
static inline double fastml_exp_full(double x) {
    double t, e, s1, s2;
    int64_t tb, n, n1;
    if (!(x == x)) return x;                        /* NaN */
    if (x > 709.782712893384) return 1.0 / 0.0;     /* exp(x) > DBL_MAX */
    if (x < -745.2) return 0.0;                     /* below half the smallest subnormal */
    e = fastml_exp_reduced(x, &t);
    memcpy(&tb, &t, sizeof tb);
    n = tb - INT64_C(0x4338000000000000);           /* the integer n in t's mantissa */
    n1 = n / 2;                                     /* 2^n = 2^n1 2^(n - n1), both normal: */
    s1 = fastml_pow2i(n1);                          /* e 2^n1 is exact, the second product */
    s2 = fastml_pow2i(n - n1);                      /* rounds once (to a subnormal if need be) */
    return (e * s1) * s2;
}

#if FASTML_HAVE_V4
static FASTML_INLINE void fastml_v4_store(double *p, fastml_v4d v) {
    memcpy(p, &v, sizeof v);
}

/* exp of four values in [FASTML_EXP_FAST_LO, FASTML_EXP_FAST_HI]: fastml_exp_full's arithmetic,
 * lane by lane. */
static FASTML_INLINE fastml_v4d fastml_v4_exp_fast(fastml_v4d x) {
    const fastml_v4d shifter = fastml_v4_set1(FASTML_EXP_SHIFTER);
    fastml_v4d t = x * fastml_v4_set1(FASTML_EXP_LOG2E) + shifter;
    fastml_v4d n = t - shifter;
    fastml_v4d r = (x - n * fastml_v4_set1(FASTML_EXP_LN2_HI)) - n * fastml_v4_set1(FASTML_EXP_LN2_LO);
    fastml_v4d q;
    FASTML_EXP_POLY(fastml_v4d, r, q);
    fastml_v4d e = fastml_v4_set1(1.0) + (r + (r * r) * q);
    fastml_v4u bits = ((fastml_v4u)t + 1023) << 52;         /* (1.5 * 2^52 + n + 1023) << 52 = 2^n */
    return e * (fastml_v4d)bits;
}
#endif

/* tanh(x), for the sigmoid kernel, where libm's tanh (one call per value) was 90% of kernel
 * perceptron predict. Cephes' method on a = |x|, which keeps the error within 2 ulp of the
 * correctly rounded value everywhere (the test's grid), and x's sign put back (tanh is odd):
 * - a < 0.625: a + a s P(s) / Q(s), s = a^2, with Cephes' degree-2 / degree-3 rational fit
 *   (the correction is below 0.12 a, so the rounding of a + ... dominates: no cancellation,
 *   and tiny a give a itself);
 * - a >= 0.625: 1 - 2 / (e^(2a) + 1) with the vector exp, where 2 / (e + 1) <= 0.45 and tanh
 *   >= 0.55, so the subtraction loses no bits; a is clamped at 20, where tanh already rounds
 *   to 1 (2 / (e^40 + 1) < 2^-54).
 * Both forms are base + num / den, so each lane picks its three operands and divides once.
 * NaN takes the first form and stays NaN; +-inf give +-1; -0 stays -0. The scalar and the
 * vector form do the same operations in the same order: the same bits in every lane and
 * every clone. */
#define FASTML_TANH_SMALL 0.625
#define FASTML_TANH_CLAMP 20.0
#define FASTML_TANH_P0 (-1.61468768441708447952e3)     /* P(s) = P0 + P1 s + P2 s^2 */
#define FASTML_TANH_P1 (-9.92877231001918586564e1)
#define FASTML_TANH_P2 (-9.64399179425052238628e-1)
#define FASTML_TANH_Q0 4.84406305325125486048e3       /* Q(s) = Q0 + Q1 s + Q2 s^2 + s^3 */
#define FASTML_TANH_Q1 2.23548839060100448583e3
#define FASTML_TANH_Q2 1.12811678491632931402e2
#define FASTML_TANH_P(s) ((s * FASTML_TANH_P2 + FASTML_TANH_P1) * s + FASTML_TANH_P0)
#define FASTML_TANH_Q(s) (((s + FASTML_TANH_Q2) * s + FASTML_TANH_Q1) * s + FASTML_TANH_Q0)

static inline double fastml_tanh(double x) {
    double a = fabs(x), s = a * a, t;
    if (a >= FASTML_TANH_SMALL)
        t = 1.0 + -2.0 / (fastml_exp_full(2.0 * (a < FASTML_TANH_CLAMP ? a : FASTML_TANH_CLAMP))
                          + 1.0);
    else
        t = a + ((a * s) * FASTML_TANH_P(s)) / FASTML_TANH_Q(s);
    return copysign(t, x);
}

#if FASTML_HAVE_V4
/* lanes of yes where mask is set, of no elsewhere */
static FASTML_INLINE fastml_v4d fastml_v4_select(fastml_v4i mask, fastml_v4d yes, fastml_v4d no) {
    return (fastml_v4d)(((fastml_v4i)yes & mask) | ((fastml_v4i)no & ~mask));
}

static FASTML_INLINE fastml_v4d fastml_v4_tanh(fastml_v4d x) {
    const fastml_v4u sign_bit = (fastml_v4u)fastml_v4_set1(-0.0);
    fastml_v4d a = (fastml_v4d)((fastml_v4u)x & ~sign_bit), s = a * a;
    fastml_v4i large = a >= fastml_v4_set1(FASTML_TANH_SMALL);
    fastml_v4d clamped = fastml_v4_select(a < fastml_v4_set1(FASTML_TANH_CLAMP), a,
                                          fastml_v4_set1(FASTML_TANH_CLAMP));
    fastml_v4d e = fastml_v4_exp_fast(fastml_v4_set1(2.0) * clamped);
    fastml_v4d base = fastml_v4_select(large, fastml_v4_set1(1.0), a);
    fastml_v4d num = fastml_v4_select(large, fastml_v4_set1(-2.0), (a * s) * FASTML_TANH_P(s));
    fastml_v4d den = fastml_v4_select(large, e + fastml_v4_set1(1.0), FASTML_TANH_Q(s));
    return (fastml_v4d)((fastml_v4u)(base + num / den) | ((fastml_v4u)x & sign_bit));
}
#endif

/* out[i] = tanh(a * x[i] + b) over n values (the sigmoid kernel's training transform on its
 * dot products, in place: in and out may be the same array; float32 rows are computed in
 * float64 and rounded once). */
#define FASTML_DEFINE_TANH_ROWS(NAME, T)                                                      \
FASTML_CLONES static void NAME(const T *x, T *out, ptrdiff_t n, double a, double b) {        \
    ptrdiff_t i = 0;                                                                          \
    FASTML_TANH_ROWS_V4(T)                                                                    \
    for (; i < n; i++) out[i] = (T)fastml_tanh((double)x[i] * a + b);                        \
}
#if FASTML_HAVE_V4
#define FASTML_TANH_ROWS_V4(T)                                                                \
    for (; i + 4 <= n; i += 4) {                                                              \
        fastml_v4d v = {(double)x[i], (double)x[i + 1], (double)x[i + 2], (double)x[i + 3]};  \
        v = fastml_v4_tanh(v * fastml_v4_set1(a) + fastml_v4_set1(b));                        \
        for (int l = 0; l < 4; l++) out[i + l] = (T)v[l];                                     \
    }
#else
#define FASTML_TANH_ROWS_V4(T)
#endif
FASTML_DEFINE_TANH_ROWS(fastml_tanh_rows_f64, double)
FASTML_DEFINE_TANH_ROWS(fastml_tanh_rows_f32, float)

/* out[i] = exp(x[i]) (the tests' entry point; in and out may be the same array). */
FASTML_CLONES static void fastml_exp_array(const double *x, double *out, ptrdiff_t n) {
    ptrdiff_t i = 0;
#if FASTML_HAVE_V4
    for (; i + 4 <= n; i += 4) {
        fastml_v4d v = fastml_load4_f64(x + i);
        fastml_v4i slow = (v < fastml_v4_set1(FASTML_EXP_FAST_LO)) | (v > fastml_v4_set1(FASTML_EXP_FAST_HI))
                      | (v != v);
        if (slow[0] | slow[1] | slow[2] | slow[3]) {
            for (int l = 0; l < 4; l++) out[i + l] = fastml_exp_full(x[i + l]);
        } else {
            fastml_v4_store(out + i, fastml_v4_exp_fast(v));
        }
    }
#endif
    for (; i < n; i++) out[i] = fastml_exp_full(x[i]);
}

#endif
