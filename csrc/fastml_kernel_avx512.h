/* Kernel perceptron prediction in 8-double AVX-512 vectors with fused multiply-adds: the copy
 * of fastml_kernel_decide (fastml_kernel_rows.h) that CPUs with AVX-512 run. The pass is
 * compute-bound (d multiply-adds and one exp per pair of rows), and the portable copy, 4
 * doubles wide and without FMA so that every x86-64 CPU gives its bits, reaches about half of
 * what these CPUs do.
 *
 * Rounding: each multiply-add rounds once, so the scores differ from the portable copy's in
 * the last bits (the tests allow 1e-13 of the sum of |coef k|; a few 1e-16 is typical), and a
 * CPU without AVX-512 gives the portable copy's. On one CPU the scores are the same whatever
 * the thread count and however the rows are split into calls: every row's sum runs in one
 * fixed order. The fused operations
 * are written as intrinsics, so the compiler's contraction setting cannot change them.
 *
 * Same tiling as the portable copy: 4 query rows x 128 stored rows per tile. For each 16
 * stored rows, the 4 x 16 dot products stay in 8 registers and become kernel values there,
 * the 8 vectors side by side through each step of the exp (one vector at a time left the
 * FMA units waiting on each step's latency: 1.4x slower), then go to an L1 tile; each output
 * sums coef * kernel value over the tile.
 *
 * exp for the rbf and sigmoid kernels: fastml_vexp.h's reduction and polynomial, in FMAs, and
 * 2^n applied by vscalefpd, which rounds once and gives the subnormal and zero results too,
 * so this copy needs no slow path for arguments below -708.
 *
 * Included by fastml_kernel_rows.h, after the kernel spec and the tile sizes it uses. */
#ifndef FASTML_KERNEL_AVX512_H
#define FASTML_KERNEL_AVX512_H

#include "fastml_vexp.h"
#include "fastml_avx512.h"

#if FASTML_HAVE_AVX512
/* x[v] = exp(x[v]) for N vectors of 8 lanes, x <= 40; exp(x) = 0 below about -745 (x is
 * clamped at -1000, where 2^n is far below the smallest subnormal, so -inf gives 0 too). The
 * vectors go through each step side by side: one exp is a chain of ~15 dependent operations,
 * and only several chains at once keep both FMA units busy. */
FASTML_AVX512_INLINE void fastml_v8_exp_n(__m512d *x, int N) {
    const __m512d shifter = FASTML_V8(FASTML_EXP_SHIFTER);
    __m512d n[2 * FASTML_DECIDE_ROWS], r[2 * FASTML_DECIDE_ROWS], r2[2 * FASTML_DECIDE_ROWS];
    int v;
    for (v = 0; v < N; v++) {
        __m512d xc = _mm512_max_pd(x[v], FASTML_V8(-1000.0));
        n[v] = _mm512_sub_pd(_mm512_fmadd_pd(xc, FASTML_V8(FASTML_EXP_LOG2E), shifter), shifter);
        r[v] = _mm512_fnmadd_pd(n[v], FASTML_V8(FASTML_EXP_LN2_HI), xc);
    }
    for (v = 0; v < N; v++) {
        r[v] = _mm512_fnmadd_pd(n[v], FASTML_V8(FASTML_EXP_LN2_LO), r[v]);
        r2[v] = _mm512_mul_pd(r[v], r[v]);
    }
#define FASTML_V8_PAIR(c1, c0) _mm512_fmadd_pd(r[v], FASTML_V8(c1), FASTML_V8(c0))
    for (v = 0; v < N; v++) {       /* q(r) by fastml_vexp.h's Estrin scheme */
        __m512d r4 = _mm512_mul_pd(r2[v], r2[v]);
        __m512d p01 = FASTML_V8_PAIR(FASTML_EXP_Q1, FASTML_EXP_Q0);
        __m512d p23 = FASTML_V8_PAIR(FASTML_EXP_Q3, FASTML_EXP_Q2);
        __m512d p45 = FASTML_V8_PAIR(FASTML_EXP_Q5, FASTML_EXP_Q4);
        __m512d p67 = FASTML_V8_PAIR(FASTML_EXP_Q7, FASTML_EXP_Q6);
        __m512d p89 = FASTML_V8_PAIR(FASTML_EXP_Q9, FASTML_EXP_Q8);
        __m512d hi = _mm512_fmadd_pd(p89, r4, _mm512_fmadd_pd(p67, r2[v], p45));
        x[v] = _mm512_fmadd_pd(hi, r4, _mm512_fmadd_pd(p23, r2[v], p01));     /* q */
    }
#undef FASTML_V8_PAIR
    for (v = 0; v < N; v++)         /* (1 + r + r^2 q) 2^n */
        x[v] = _mm512_scalef_pd(_mm512_add_pd(FASTML_V8(1.0), _mm512_fmadd_pd(r2[v], x[v], r[v])),
                                n[v]);
}

/* x[v] = tanh(x[v]) for N vectors of 8 lanes: fastml_v4_tanh's two forms (fastml_vexp.h),
 * with this file's exp over the N vectors side by side. */
FASTML_AVX512_INLINE void fastml_v8_tanh_n(__m512d *x, int N) {
    const __m512i sign_bit = _mm512_set1_epi64((long long)0x8000000000000000ULL);
    __m512d e[2 * FASTML_DECIDE_ROWS];
    int v;
    for (v = 0; v < N; v++)
        e[v] = _mm512_mul_pd(FASTML_V8(2.0),
                             _mm512_min_pd(_mm512_abs_pd(x[v]), FASTML_V8(FASTML_TANH_CLAMP)));
    fastml_v8_exp_n(e, N);
    for (v = 0; v < N; v++) {
        __m512d a = _mm512_abs_pd(x[v]), s = _mm512_mul_pd(a, a);
        __mmask8 large = _mm512_cmp_pd_mask(a, FASTML_V8(FASTML_TANH_SMALL), _CMP_GE_OQ);
        __m512d p = _mm512_fmadd_pd(_mm512_fmadd_pd(s, FASTML_V8(FASTML_TANH_P2),
                                                    FASTML_V8(FASTML_TANH_P1)),
                                    s, FASTML_V8(FASTML_TANH_P0));
        __m512d q = _mm512_fmadd_pd(_mm512_fmadd_pd(_mm512_add_pd(s, FASTML_V8(FASTML_TANH_Q2)),
                                                    s, FASTML_V8(FASTML_TANH_Q1)),
                                    s, FASTML_V8(FASTML_TANH_Q0));
        __m512d base = _mm512_mask_blend_pd(large, a, FASTML_V8(1.0));
        __m512d num = _mm512_mask_blend_pd(large, _mm512_mul_pd(_mm512_mul_pd(a, s), p),
                                           FASTML_V8(-2.0));
        __m512d den = _mm512_mask_blend_pd(large, q, _mm512_add_pd(e[v], FASTML_V8(1.0)));
        __m512d t = _mm512_add_pd(base, _mm512_div_pd(num, den));
        /* x's sign back on |tanh| (tanh is odd; NaN stays NaN, -0 stays -0) */
        x[v] = _mm512_castsi512_pd(_mm512_or_si512(
            _mm512_castpd_si512(t), _mm512_and_si512(_mm512_castpd_si512(x[v]), sign_bit)));
    }
}

/* dot[v] -> k(x_r, sv_b) for the N = 2R vectors of a tile's 4 x 16 dot products (row r = v / 2,
 * stored rows b = 8 (v % 2)... of sq_sv): the portable copy's formulas (a NaN distance counts
 * as 0 there and here). */
FASTML_AVX512_INLINE void fastml_v8_kernel_values(__m512d *dot, int N, const double *sq_x,
                                                  const double *sq_sv,
                                                  const fastml_kernel_spec *k) {
    int v;
    if (k->kind == FASTML_KERNEL_RBF) {
        for (v = 0; v < N; v++) {
            __m512d d2 = _mm512_fnmadd_pd(FASTML_V8(2.0), dot[v],
                                          _mm512_add_pd(FASTML_V8(sq_x[v / 2]),
                                                        _mm512_loadu_pd(sq_sv + 8 * (v % 2))));
            d2 = _mm512_max_pd(d2, _mm512_setzero_pd());        /* max(NaN, 0) is 0 */
            dot[v] = _mm512_mul_pd(FASTML_V8(-k->gamma), d2);
        }
        fastml_v8_exp_n(dot, N);
    } else if (k->kind == FASTML_KERNEL_POLY) {     /* fastml_int_power, 8 lanes at a time */
        for (v = 0; v < N; v++) {
            __m512d z = _mm512_fmadd_pd(dot[v], FASTML_V8(k->gamma), FASTML_V8(k->coef0));
            __m512d result = FASTML_V8(1.0);
            for (int degree = k->degree; degree > 0; degree >>= 1) {
                if (degree & 1) result = _mm512_mul_pd(result, z);
                z = _mm512_mul_pd(z, z);
            }
            dot[v] = result;
        }
    } else if (k->kind == FASTML_KERNEL_SIGMOID) {
        for (v = 0; v < N; v++)
            dot[v] = _mm512_fmadd_pd(dot[v], FASTML_V8(k->gamma), FASTML_V8(k->coef0));
        fastml_v8_tanh_n(dot, N);
    }
}

/* kv[r, b] = k(x_r, sv_{b0 + b}) for R query rows and w stored rows (w a multiple of 16). */
FASTML_AVX512_INLINE void fastml_v8_kernel_tile(int R, const double *const *x,
                                                const double *sq_x, ptrdiff_t d,
                                                const double *pack, ptrdiff_t m_pad,
                                                ptrdiff_t b0, ptrdiff_t w,
                                                const fastml_kernel_spec *k, double *kv) {
    const double *sq_sv = pack + d * m_pad;
    for (ptrdiff_t b = 0; b < w; b += 16) {
        __m512d acc[FASTML_DECIDE_ROWS][2];
        const double *col = pack + b0 + b;
        for (int r = 0; r < R; r++) acc[r][0] = acc[r][1] = _mm512_setzero_pd();
        for (ptrdiff_t j = 0; j < d; j++) {     /* the dot products, j in order */
            __m512d s0 = _mm512_loadu_pd(col + j * m_pad);
            __m512d s1 = _mm512_loadu_pd(col + j * m_pad + 8);
            for (int r = 0; r < R; r++) {
                __m512d xr = FASTML_V8(x[r][j]);
                acc[r][0] = _mm512_fmadd_pd(xr, s0, acc[r][0]);
                acc[r][1] = _mm512_fmadd_pd(xr, s1, acc[r][1]);
            }
        }
        fastml_v8_kernel_values(&acc[0][0], 2 * R, sq_x, sq_sv + b0 + b, k);
        for (int r = 0; r < R; r++)
            for (int v = 0; v < 2; v++)
                _mm512_storeu_pd(kv + r * FASTML_DECIDE_CHUNK + b + 8 * v, acc[r][v]);
    }
}

/* scores[r * K + c] += sum_b coef[c, b0 + b] kv[r, b]: 8 lane sums, then the lanes. */
FASTML_AVX512_INLINE void fastml_v8_sum_tile(int R, const double *kv, const double *coef,
                                             ptrdiff_t m_pad, ptrdiff_t K, ptrdiff_t b0,
                                             ptrdiff_t w, double *scores) {
    for (ptrdiff_t c = 0; c < K; c++) {
        const double *cc = coef + c * m_pad + b0;
        __m512d acc[FASTML_DECIDE_ROWS];    /* the rows' sums side by side: R chains */
        for (int r = 0; r < R; r++) acc[r] = _mm512_setzero_pd();
        for (ptrdiff_t b = 0; b < w; b += 8) {
            __m512d cb = _mm512_loadu_pd(cc + b);
            for (int r = 0; r < R; r++) {
                __m512d kr = _mm512_loadu_pd(kv + r * FASTML_DECIDE_CHUNK + b);
                acc[r] = _mm512_fmadd_pd(cb, kr, acc[r]);
            }
        }
        for (int r = 0; r < R; r++) scores[r * K + c] += _mm512_reduce_add_pd(acc[r]);
    }
}

FASTML_AVX512_INLINE void fastml_v8_decide_rows(int R, const double *const *x, const double *sq_x,
                                                ptrdiff_t d, const double *pack, ptrdiff_t m_pad,
                                                ptrdiff_t K, const fastml_kernel_spec *k,
                                                double *scores) {
    double kv[FASTML_DECIDE_ROWS * FASTML_DECIDE_CHUNK];
    const double *coef = pack + (d + 1) * m_pad;
    for (ptrdiff_t b0 = 0; b0 < m_pad; b0 += FASTML_DECIDE_CHUNK) {
        ptrdiff_t w = m_pad - b0 < FASTML_DECIDE_CHUNK ? m_pad - b0 : FASTML_DECIDE_CHUNK;
        fastml_v8_kernel_tile(R, x, sq_x, d, pack, m_pad, b0, w, k, kv);
        fastml_v8_sum_tile(R, kv, coef, m_pad, K, b0, w, scores);
    }
}

/* fastml_kernel_decide's contract (fastml_kernel_rows.h), in AVX-512. */
FASTML_AVX512 static void fastml_kernel_decide_avx512(const double *X, ptrdiff_t n, ptrdiff_t d,
                                                      const double *pack, ptrdiff_t m_pad,
                                                      ptrdiff_t K, const fastml_kernel_spec *k,
                                                      double *scores) {
    /* a local copy: the kv stores cannot alias it, so the kernel's kind and parameters stay
     * in registers and the kind's branch leaves the loops */
    const fastml_kernel_spec spec = *k;
    for (ptrdiff_t i = 0; i < n; i += FASTML_DECIDE_ROWS) {
        const double *x[FASTML_DECIDE_ROWS];
        double sq_x[FASTML_DECIDE_ROWS];
        int R = n - i < FASTML_DECIDE_ROWS ? (int)(n - i) : FASTML_DECIDE_ROWS;
        for (int r = 0; r < R; r++) {
            fastml_check_index(i + r, n);
            x[r] = X + (i + r) * d;
            sq_x[r] = 0.0;
            for (ptrdiff_t j = 0; j < d; j++) sq_x[r] = fma(x[r][j], x[r][j], sq_x[r]);
            for (ptrdiff_t c = 0; c < K; c++) scores[(i + r) * K + c] = 0.0;
        }
        double *out = scores + i * K;
        switch (R) {    /* R as a constant in each call: the row loops unroll */
        case 4: fastml_v8_decide_rows(4, x, sq_x, d, pack, m_pad, K, &spec, out); break;
        case 3: fastml_v8_decide_rows(3, x, sq_x, d, pack, m_pad, K, &spec, out); break;
        case 2: fastml_v8_decide_rows(2, x, sq_x, d, pack, m_pad, K, &spec, out); break;
        default: fastml_v8_decide_rows(1, x, sq_x, d, pack, m_pad, K, &spec, out); break;
        }
    }
}
#endif

#endif
