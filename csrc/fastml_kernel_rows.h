/* Kernel values for the kernel perceptron (_kernel_perceptron_fast.pyx), with the vector exp of
 * fastml_vexp.h.
 *
 * - fastml_rbf_rows_f64/f32 (training): dot products out[a, b] = u_a . v_b, in place, become
 *   exp(-gamma ||u_a - v_b||^2), the squared distance from the cached squared norms,
 *   ||u||^2 + ||v||^2 - 2 u.v, clamped at 0 against rounding (a NaN distance counts as 0).
 * - fastml_kernel_decide (prediction): scores[i, k] = sum_b coef[k, b] k(x_i, sv_b) in one pass
 *   over tiles of 4 rows x 128 stored rows: the dot products (from the transposed stored rows,
 *   so one vector load serves 4 stored rows), the kernel values and their weighted sums, all in
 *   L1. BLAS is not used: with d = 10 a GEMM runs far below peak (d is its inner length), and
 *   the kernel matrix went to memory and back between the GEMM and the transform.
 *
 * Rounding: the kernel value of each pair is computed as in the training transform (same
 * formula, same exp); the sum over the stored rows is in a fixed order (4 lane partial sums per
 * 128-row chunk, then the chunks in order), whatever the thread count.
 *
 * CPUs with AVX-512 run fastml_kernel_avx512.h's copy of the pass instead (fastml_kernel_decide
 * at the end of this file picks it): 8 lanes and fused multiply-adds, ~2x faster, the same
 * formulas rounded fewer times. */
#ifndef FASTML_KERNEL_ROWS_H
#define FASTML_KERNEL_ROWS_H

#include <math.h>
#include "fastml_vexp.h"
#include "fastml_debug.h"

/* The scalar rbf value: the tails and the lanes that underflow (exp below -708). */
static FASTML_INLINE double fastml_rbf_value(double dot, double sq_a, double sq_b,
                                                   double gamma) {
    double d2 = (sq_a + sq_b) - 2.0 * dot;
    d2 = d2 > 0.0 ? d2 : 0.0;
    return fastml_exp_full(-gamma * d2);
}

#if FASTML_HAVE_V4
/* -gamma * max(d2, 0) for four pairs: the argument of exp. */
static FASTML_INLINE fastml_v4d fastml_v4_rbf_arg(fastml_v4d dot, fastml_v4d sq_a, fastml_v4d sq_b,
                                                fastml_v4d neg_gamma) {
    fastml_v4d d2 = (sq_a + sq_b) - fastml_v4_set1(2.0) * dot;
    d2 = (fastml_v4d)((fastml_v4i)d2 & (d2 > fastml_v4_set1(0.0)));     /* d2 > 0 ? d2 : 0 */
    return neg_gamma * d2;
}

static FASTML_INLINE int fastml_v4_any(fastml_v4i m) {
    return (m[0] | m[1] | m[2] | m[3]) != 0;
}
#endif

/* One row of the training transform: row[b] (a dot product) -> rbf value, b < n_b. */
#define FASTML_DEFINE_RBF_ROWS(NAME, T)                                                          \
FASTML_CLONES static void NAME(T *out, ptrdiff_t n_a, ptrdiff_t n_b, const double *sq_a,         \
                               const double *sq_b, double gamma) {                               \
    ptrdiff_t a, b;                                                                              \
    for (a = 0; a < n_a; a++) {                                                                  \
        T *row = out + a * n_b;                                                                  \
        b = 0;                                                                                   \
        FASTML_RBF_ROWS_V4(T)                                                                    \
        for (; b < n_b; b++) row[b] = (T)fastml_rbf_value((double)row[b], sq_a[a], sq_b[b], gamma); \
    }                                                                                            \
}

#if FASTML_HAVE_V4
#define FASTML_RBF_ROWS_V4(T)                                                                    \
    for (; b + 4 <= n_b; b += 4) {                                                               \
        fastml_v4d dot = {(double)row[b], (double)row[b + 1], (double)row[b + 2], (double)row[b + 3]}; \
        fastml_v4d x = fastml_v4_rbf_arg(dot, fastml_v4_set1(sq_a[a]), fastml_load4_f64(sq_b + b), \
                                 fastml_v4_set1(-gamma));                                          \
        if (fastml_v4_any(x < fastml_v4_set1(FASTML_EXP_FAST_LO))) {                               \
            for (int l = 0; l < 4; l++)                                                          \
                row[b + l] = (T)fastml_rbf_value(dot[l], sq_a[a], sq_b[b + l], gamma);           \
        } else {                                                                                 \
            fastml_v4d e = fastml_v4_exp_fast(x);                                                  \
            for (int l = 0; l < 4; l++) row[b + l] = (T)e[l];                                    \
        }                                                                                        \
    }
#else
#define FASTML_RBF_ROWS_V4(T)
#endif

FASTML_DEFINE_RBF_ROWS(fastml_rbf_rows_f64, double)
FASTML_DEFINE_RBF_ROWS(fastml_rbf_rows_f32, float)

/* ------------------------------------------------------------------------------ prediction */

enum { FASTML_KERNEL_LINEAR = 0, FASTML_KERNEL_POLY = 1, FASTML_KERNEL_RBF = 2,
       FASTML_KERNEL_SIGMOID = 3 };
#define FASTML_DECIDE_ROWS 4        /* query rows per tile: 4 x 2 vector accumulators */
#define FASTML_DECIDE_CHUNK 128     /* stored rows per tile: 3 x 4 x 128 doubles = 12 KB */
#define FASTML_PACK_ALIGN 16        /* the packed columns are a multiple of this (4 vectors) */
#define FASTML_DECIDE_MAX_D 32      /* columns per pass of the dot products (x in 4 KB) */

typedef struct {
    int kind, degree;
    double gamma, coef0;
    double sq_max;      /* the largest stored squared norm (rbf's underflow bound) */
} fastml_kernel_spec;

/* base ** degree by squaring: the training kernels' int_power, operation for operation. */
static FASTML_INLINE double fastml_int_power(double base, int degree) {
    double result = 1.0;
    while (degree > 0) {
        if (degree & 1) result *= base;
        base *= base;
        degree >>= 1;
    }
    return result;
}

/* dots[r * CHUNK + b] = x_r . sv_{b0 + b} for R rows and w (a multiple of 16) stored rows, from
 * the transposed stored rows svt (d, m_pad); the sum over j runs in order 0..d-1. */
static FASTML_INLINE void fastml_dot_tile(int R, const double *const *x, ptrdiff_t d,
                                                 const double *svt, ptrdiff_t m_pad,
                                                 ptrdiff_t b0, ptrdiff_t w, double *dots) {
    ptrdiff_t b, j;
    int r;
#if FASTML_HAVE_V4
    double xb[FASTML_DECIDE_MAX_D * FASTML_DECIDE_ROWS * 4];
    /* 8 independent sums in flight (the adds' latency, not their count, bounds a row alone):
     * 4 rows x 2 vectors, or 1-2 rows x 4 vectors */
    const int NV = R <= 2 ? 4 : 2;
    ptrdiff_t j0, j1, l;
    int v;
    for (j0 = 0; j0 < d; j0 = j1) {         /* columns in blocks of FASTML_DECIDE_MAX_D */
        j1 = d - j0 < FASTML_DECIDE_MAX_D ? d : j0 + FASTML_DECIDE_MAX_D;
        for (j = j0; j < j1; j++)           /* x[r][j] in 4 lanes: the inner loop loads it */
            for (r = 0; r < R; r++)         /* as an operand, no broadcast shuffles */
                for (l = 0; l < 4; l++) xb[((j - j0) * FASTML_DECIDE_ROWS + r) * 4 + l] = x[r][j];
        for (b = 0; b < w; b += 4 * NV) {
            fastml_v4d acc[FASTML_DECIDE_ROWS][4];
            const double *col = svt + b0 + b;
            for (r = 0; r < R; r++)         /* continue the sum of the previous block */
                for (v = 0; v < NV; v++)
                    acc[r][v] = j0 ? fastml_load4_f64(dots + r * FASTML_DECIDE_CHUNK + b + 4 * v)
                                   : fastml_v4_set1(0.0);
            for (j = j0; j < j1; j++) {
                const double *xj = xb + (j - j0) * FASTML_DECIDE_ROWS * 4;
                fastml_v4d s[4];
                for (v = 0; v < NV; v++) s[v] = fastml_load4_f64(col + j * m_pad + 4 * v);
                for (r = 0; r < R; r++) {
                    fastml_v4d xr = fastml_load4_f64(xj + 4 * r);
                    for (v = 0; v < NV; v++) acc[r][v] += xr * s[v];
                }
            }
            for (r = 0; r < R; r++)
                for (v = 0; v < NV; v++)
                    fastml_v4_store(dots + r * FASTML_DECIDE_CHUNK + b + 4 * v, acc[r][v]);
        }
    }
#else
    for (r = 0; r < R; r++)
        for (b = 0; b < w; b++) {
            double s = 0.0;
            for (j = 0; j < d; j++) s += x[r][j] * svt[j * m_pad + b0 + b];
            dots[r * FASTML_DECIDE_CHUNK + b] = s;
        }
#endif
}

/* kv[r, b] = k(x_r, sv_{b0 + b}) from the dot products, for R rows (squared norms sq_x) and w
 * stored rows. check_underflow: some rbf argument may be below -708, where the fast exp does not
 * hold (the caller skips the check when its bound on the distances rules that out). */
static FASTML_INLINE void fastml_kernel_tile(int R, const double *dots, double *kv,
                                                    const double *sq_x, const double *sq_sv,
                                                    ptrdiff_t b0, ptrdiff_t w,
                                                    const fastml_kernel_spec *k,
                                                    int check_underflow) {
    ptrdiff_t b;
    int r;
    double g = k->gamma, c0 = k->coef0;
    for (r = 0; r < R; r++) {
        const double *dot = dots + r * FASTML_DECIDE_CHUNK;
        double *row = kv + r * FASTML_DECIDE_CHUNK;
        if (k->kind == FASTML_KERNEL_RBF) {
            b = 0;
#if FASTML_HAVE_V4
            fastml_v4i slow = {0, 0, 0, 0};
            fastml_v4d sqa = fastml_v4_set1(sq_x[r]), ng = fastml_v4_set1(-g);
            for (; b < w; b += 16) {        /* four independent chains per iteration */
                fastml_v4d xs[4];
                for (int v = 0; v < 4; v++) {
                    xs[v] = fastml_v4_rbf_arg(fastml_load4_f64(dot + b + 4 * v), sqa,
                                          fastml_load4_f64(sq_sv + b0 + b + 4 * v), ng);
                    if (check_underflow) slow |= xs[v] < fastml_v4_set1(FASTML_EXP_FAST_LO);
                }
                for (int v = 0; v < 4; v++) fastml_v4_store(row + b + 4 * v, fastml_v4_exp_fast(xs[v]));
            }
            if (!fastml_v4_any(slow)) continue;
            for (b = 0; b < w; b++)     /* a rare slow tile: redo the values that underflow */
                if (-g * fmax((sq_x[r] + sq_sv[b0 + b]) - 2.0 * dot[b], 0.0) < FASTML_EXP_FAST_LO)
                    row[b] = fastml_rbf_value(dot[b], sq_x[r], sq_sv[b0 + b], g);
#else
            (void)check_underflow;
            for (; b < w; b++) row[b] = fastml_rbf_value(dot[b], sq_x[r], sq_sv[b0 + b], g);
#endif
        } else if (k->kind == FASTML_KERNEL_POLY) {
            b = 0;
#if FASTML_HAVE_V4
            for (; b < w; b += 4) {         /* fastml_int_power, four lanes at a time */
                fastml_v4d base = fastml_load4_f64(dot + b) * g + c0, result = fastml_v4_set1(1.0);
                int degree = k->degree;
                while (degree > 0) {
                    if (degree & 1) result *= base;
                    base *= base;
                    degree >>= 1;
                }
                fastml_v4_store(row + b, result);
            }
#endif
            for (; b < w; b++) row[b] = fastml_int_power(g * dot[b] + c0, k->degree);
        } else if (k->kind == FASTML_KERNEL_SIGMOID) {
            fastml_tanh_rows_f64(dot, row, w, g, c0);
        } else {
            for (b = 0; b < w; b++) row[b] = dot[b];
        }
    }
}

/* scores[r * K + k] += sum_b coef[k, b0 + b] kv[r, b]: 4 lane sums, then lanes 0+1 and 2+3. */
static FASTML_INLINE void fastml_sum_tile(int R, const double *kv, const double *coef,
                                                 ptrdiff_t m_pad, ptrdiff_t K, ptrdiff_t b0,
                                                 ptrdiff_t w, double *scores) {
    ptrdiff_t b, c;
    int r;
    for (c = 0; c < K; c++) {
        const double *cc = coef + c * m_pad + b0;
#if FASTML_HAVE_V4
        /* the rows' sums side by side: R independent chains (one alone waits on each add) */
        fastml_v4d acc[FASTML_DECIDE_ROWS];
        for (r = 0; r < R; r++) acc[r] = fastml_v4_set1(0.0);
        for (b = 0; b < w; b += 4) {
            fastml_v4d cb = fastml_load4_f64(cc + b);
            for (r = 0; r < R; r++) acc[r] += cb * fastml_load4_f64(kv + r * FASTML_DECIDE_CHUNK + b);
        }
        for (r = 0; r < R; r++) scores[r * K + c] += (acc[r][0] + acc[r][1]) + (acc[r][2] + acc[r][3]);
#else
        for (r = 0; r < R; r++) {
            const double *row = kv + r * FASTML_DECIDE_CHUNK;
            double acc[4] = {0.0, 0.0, 0.0, 0.0};
            for (b = 0; b < w; b++) acc[b % 4] += cc[b] * row[b];
            scores[r * K + c] += (acc[0] + acc[1]) + (acc[2] + acc[3]);
        }
#endif
    }
}

#if FASTML_HAVE_V4
/* scores[r] += sum_b coef[b0 + b] rbf(x_r, sv_{b0 + b}) for one output (K = 1) when no value
 * can underflow: fastml_kernel_tile's values summed as fastml_sum_tile sums them (the same
 * products in the same order: the same bits), without the round trip through kv. */
static FASTML_INLINE void fastml_rbf_sum_tile(int R, const double *dots, const double *sq_x,
                                              const double *sq_sv, const double *coef,
                                              ptrdiff_t b0, ptrdiff_t w, double gamma,
                                              double *scores) {
    fastml_v4d ng = fastml_v4_set1(-gamma);
    for (int r = 0; r < R; r++) {
        const double *dot = dots + r * FASTML_DECIDE_CHUNK;
        fastml_v4d acc = fastml_v4_set1(0.0), sqa = fastml_v4_set1(sq_x[r]);
        for (ptrdiff_t b = 0; b < w; b += 16) {     /* four exp chains per iteration */
            fastml_v4d xs[4];
            for (int v = 0; v < 4; v++)
                xs[v] = fastml_v4_rbf_arg(fastml_load4_f64(dot + b + 4 * v), sqa,
                                          fastml_load4_f64(sq_sv + b0 + b + 4 * v), ng);
            for (int v = 0; v < 4; v++)
                acc += fastml_load4_f64(coef + b0 + b + 4 * v) * fastml_v4_exp_fast(xs[v]);
        }
        scores[r] += (acc[0] + acc[1]) + (acc[2] + acc[3]);
    }
}
#endif

/* R rows (R <= 4, pointers x[r] to d values, their squared norms sq_x) against the pack. */
static FASTML_INLINE void fastml_decide_rows(int R, const double *const *x,
                                                    const double *sq_x, ptrdiff_t d,
                                                    const double *pack, ptrdiff_t m_pad,
                                                    ptrdiff_t K, const fastml_kernel_spec *k,
                                                    int check_underflow, double *scores) {
    double dots[FASTML_DECIDE_ROWS * FASTML_DECIDE_CHUNK];
    double kv[FASTML_DECIDE_ROWS * FASTML_DECIDE_CHUNK];
    const double *sq_sv = pack + d * m_pad, *coef = pack + (d + 1) * m_pad;
    ptrdiff_t b0, w;
    for (b0 = 0; b0 < m_pad; b0 += FASTML_DECIDE_CHUNK) {
        w = m_pad - b0 < FASTML_DECIDE_CHUNK ? m_pad - b0 : FASTML_DECIDE_CHUNK;
        fastml_dot_tile(R, x, d, pack, m_pad, b0, w, dots);
#if FASTML_HAVE_V4
        if (K == 1 && k->kind == FASTML_KERNEL_RBF && !check_underflow) {
            fastml_rbf_sum_tile(R, dots, sq_x, sq_sv, coef, b0, w, k->gamma, scores);
            continue;
        }
#endif
        fastml_kernel_tile(R, dots, kv, sq_x, sq_sv, b0, w, k, check_underflow);
        fastml_sum_tile(R, kv, coef, m_pad, K, b0, w, scores);
    }
}

/* scores (n, K) = sum over the stored rows of coef * k(x_i, sv) for the rows X (n, d).
 * pack (d + 1 + K, m_pad), m_pad a multiple of FASTML_PACK_ALIGN: the stored rows transposed (d rows), their
 * squared norms, the coefficients; padding columns are 0 (coefficient 0: they add 0). */
FASTML_CLONES static void fastml_kernel_decide_portable(const double *X, ptrdiff_t n,
                                                        ptrdiff_t d, const double *pack,
                                                        ptrdiff_t m_pad, ptrdiff_t K,
                                                        const fastml_kernel_spec *k,
                                                        double *scores) {
    ptrdiff_t i, c, j;
    int r, R;
    for (i = 0; i < n; i += FASTML_DECIDE_ROWS) {
        const double *x[FASTML_DECIDE_ROWS];
        double sq_x[FASTML_DECIDE_ROWS], sq_hi = 0.0;
        R = n - i < FASTML_DECIDE_ROWS ? (int)(n - i) : FASTML_DECIDE_ROWS;
        for (r = 0; r < R; r++) {
            fastml_check_index(i + r, n);
            x[r] = X + (i + r) * d;
            sq_x[r] = 0.0;
            for (j = 0; j < d; j++) sq_x[r] += x[r][j] * x[r][j];
            sq_hi = sq_x[r] > sq_hi ? sq_x[r] : sq_hi;
            for (c = 0; c < K; c++) scores[(i + r) * K + c] = 0.0;
        }
        /* ||x - sv||^2 <= (|x| + |sv|)^2: when gamma times that (with room for rounding) stays
         * above -700, no value of this tile can underflow the fast exp */
        int check = k->kind == FASTML_KERNEL_RBF
                    && !(k->gamma * (sq_hi + k->sq_max + 2.0 * sqrt(sq_hi * k->sq_max)) < 700.0);
        double *out = scores + i * K;
        /* R as a constant in each call: the row loops unroll and the accumulators stay in
         * registers */
        switch (R) {
        case 4: if (check) fastml_decide_rows(4, x, sq_x, d, pack, m_pad, K, k, 1, out);
                else fastml_decide_rows(4, x, sq_x, d, pack, m_pad, K, k, 0, out);
                break;
        case 3: fastml_decide_rows(3, x, sq_x, d, pack, m_pad, K, k, check, out); break;
        case 2: fastml_decide_rows(2, x, sq_x, d, pack, m_pad, K, k, check, out); break;
        default: fastml_decide_rows(1, x, sq_x, d, pack, m_pad, K, k, check, out); break;
        }
    }
}

#include "fastml_kernel_avx512.h"

/* The pass above, or its AVX-512 copy (fastml_kernel_avx512.h) where the CPU has AVX-512 and
 * wide is set; wide = 0 asks for the portable copy (the tests compare the two). */
static void fastml_kernel_decide(const double *X, ptrdiff_t n, ptrdiff_t d, const double *pack,
                                 ptrdiff_t m_pad, ptrdiff_t K, const fastml_kernel_spec *k,
                                 int wide, double *scores) {
#if FASTML_HAVE_AVX512
    if (wide && fastml_cpu_has_avx512()) {
        fastml_kernel_decide_avx512(X, n, d, pack, m_pad, K, k, scores);
        return;
    }
#else
    (void)wide;
#endif
    fastml_kernel_decide_portable(X, n, d, pack, m_pad, K, k, scores);
}

/* The voted perceptron's votes (fastml/linear_model/_perceptron.py): votes[i, k] =
 * sum_j c_j sign(v_j . x_i + b_j) over output k's vectors. pack (d + 2, m_pad): the vectors
 * transposed, their intercepts, their counts (as doubles); output k owns columns
 * [starts[k], starts[k + 1]), each start a multiple of FASTML_PACK_ALIGN, padding with count 0. The votes are
 * sums of integers below 2^53, exact in any order. */
FASTML_CLONES static void fastml_voted_votes(const double *X, ptrdiff_t n, ptrdiff_t d,
                                             const double *pack, ptrdiff_t m_pad,
                                             const int64_t *starts, ptrdiff_t K, double *votes) {
    double dots[FASTML_DECIDE_ROWS * FASTML_DECIDE_CHUNK];
    const double *icpt = pack + d * m_pad, *count = pack + (d + 1) * m_pad;
    ptrdiff_t i, c, b0, b, w, end;
    int r, R;
    for (i = 0; i < n; i += FASTML_DECIDE_ROWS) {
        const double *x[FASTML_DECIDE_ROWS];
        R = n - i < FASTML_DECIDE_ROWS ? (int)(n - i) : FASTML_DECIDE_ROWS;
        for (r = 0; r < R; r++) x[r] = X + (i + r) * d;
        for (c = 0; c < K; c++) {
            end = starts[c + 1];
            for (r = 0; r < R; r++) votes[(i + r) * K + c] = 0.0;
            for (b0 = starts[c]; b0 < end; b0 += FASTML_DECIDE_CHUNK) {
                fastml_check_index(end - 1, m_pad);
                w = end - b0 < FASTML_DECIDE_CHUNK ? end - b0 : FASTML_DECIDE_CHUNK;
                switch (R) {        /* R as a constant: see fastml_kernel_decide */
                case 4: fastml_dot_tile(4, x, d, pack, m_pad, b0, w, dots); break;
                case 3: fastml_dot_tile(3, x, d, pack, m_pad, b0, w, dots); break;
                case 2: fastml_dot_tile(2, x, d, pack, m_pad, b0, w, dots); break;
                default: fastml_dot_tile(1, x, d, pack, m_pad, b0, w, dots); break;
                }
                for (r = 0; r < R; r++) {
                    const double *dot = dots + r * FASTML_DECIDE_CHUNK;
                    b = 0;
#if FASTML_HAVE_V4
                    fastml_v4d acc[4], zero = fastml_v4_set1(0.0);
                    int v;
                    for (v = 0; v < 4; v++) acc[v] = zero;
                    for (; b < w; b += 16)  /* four sums in flight */
                        for (v = 0; v < 4; v++) {
                            fastml_v4d m = fastml_load4_f64(dot + b + 4 * v) + fastml_load4_f64(icpt + b0 + b + 4 * v);
                            fastml_v4i cnt = (fastml_v4i)fastml_load4_f64(count + b0 + b + 4 * v);
                            acc[v] += (fastml_v4d)(cnt & (m > zero)) - (fastml_v4d)(cnt & (m < zero));
                        }
                    acc[0] = (acc[0] + acc[1]) + (acc[2] + acc[3]);
                    votes[(i + r) * K + c] += (acc[0][0] + acc[0][1]) + (acc[0][2] + acc[0][3]);
#endif
                    for (; b < w; b++) {
                        double m = dot[b] + icpt[b0 + b];
                        votes[(i + r) * K + c] += m > 0.0 ? count[b0 + b]
                                                  : (m < 0.0 ? -count[b0 + b] : 0.0);
                    }
                }
            }
        }
    }
}

#endif
