/* Loops worth an AVX2 copy, built next to the baseline copy a portable x86-64 wheel gets:
 * GCC's target_clones compiles both and picks one when the module loads (glibc ifunc), so one
 * wheel runs everywhere and uses AVX2 where the CPU has it. Elsewhere: one plain copy.
 *
 * Every sum below has one fixed order, written out in the C (lane arrays, 4-row groups): the
 * compiler vectorizes across independent sums and never reassociates one (no -ffast-math), and
 * neither copy contracts a*b+c into an FMA (the "avx2" target has no FMA), so the AVX2 and the
 * baseline copy give the same bits. The one exception is kernel perceptron predict's AVX-512
 * copy (fastml_kernel_avx512.h), which uses FMA on purpose and says so. */
#ifndef FASTML_SIMD_H
#define FASTML_SIMD_H

#include <stddef.h>
#include <math.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__) && defined(__GLIBC__)
#define FASTML_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define FASTML_CLONES
#endif

#if defined(__GNUC__)
#define FASTML_INLINE __attribute__((always_inline)) inline
#else
#define FASTML_INLINE inline
#endif

/* A pointer argument no other argument's memory overlaps (the loops it lets gcc vectorize
 * without runtime overlap checks). */
#ifdef _MSC_VER
#define FASTML_RESTRICT __restrict
#else
#define FASTML_RESTRICT restrict
#endif

/* Four doubles as one value: a GCC/clang vector (one AVX2 register, or two SSE2 ones in the
 * baseline copy), or elsewhere (MSVC) a struct with the same elementwise arithmetic, so every
 * build adds in the same order and gives the same bits. */
#if defined(__GNUC__)
/* the vector helpers are always inlined: no vector crosses a call, whatever the ABI says */
#pragma GCC diagnostic ignored "-Wpsabi"
typedef double fastml_v4d __attribute__((vector_size(32)));
typedef float fastml_v4f __attribute__((vector_size(16)));
#define FASTML_LANE(v, l) ((v)[l])

static FASTML_INLINE fastml_v4d fastml_load4_f32(const float *p) {
    fastml_v4f v;
    memcpy(&v, p, sizeof v);
    return __builtin_convertvector(v, fastml_v4d);
}

/* acc + x * y */
static FASTML_INLINE fastml_v4d fastml_v4_madd(fastml_v4d acc, fastml_v4d x, fastml_v4d y) {
    return acc + x * y;
}

static FASTML_INLINE fastml_v4d fastml_v4_add(fastml_v4d x, fastml_v4d y) { return x + y; }

static FASTML_INLINE fastml_v4d fastml_v4_mul(fastml_v4d x, fastml_v4d y) { return x * y; }
#else
typedef struct { double v[4]; } fastml_v4d;
#define FASTML_LANE(x, l) ((x).v[l])

static FASTML_INLINE fastml_v4d fastml_load4_f32(const float *p) {
    fastml_v4d r = {{p[0], p[1], p[2], p[3]}};
    return r;
}

static FASTML_INLINE fastml_v4d fastml_v4_madd(fastml_v4d acc, fastml_v4d x, fastml_v4d y) {
    int l;
    for (l = 0; l < 4; l++) acc.v[l] += x.v[l] * y.v[l];
    return acc;
}

static FASTML_INLINE fastml_v4d fastml_v4_add(fastml_v4d x, fastml_v4d y) {
    int l;
    for (l = 0; l < 4; l++) x.v[l] += y.v[l];
    return x;
}

static FASTML_INLINE fastml_v4d fastml_v4_mul(fastml_v4d x, fastml_v4d y) {
    int l;
    for (l = 0; l < 4; l++) x.v[l] *= y.v[l];
    return x;
}
#endif

static FASTML_INLINE fastml_v4d fastml_load4_f64(const double *p) {
    fastml_v4d v;
    memcpy(&v, p, sizeof v);
    return v;
}

static FASTML_INLINE fastml_v4d fastml_v4_set1(double x) {
    fastml_v4d v;
    FASTML_LANE(v, 0) = FASTML_LANE(v, 1) = FASTML_LANE(v, 2) = FASTML_LANE(v, 3) = x;
    return v;
}

/* The lanes of lo + hi added pairwise: ((0 + 2) + (1 + 3)). */
static FASTML_INLINE double fastml_lanes_total(fastml_v4d lo, fastml_v4d hi) {
    lo = fastml_v4_add(lo, hi);
    return (FASTML_LANE(lo, 0) + FASTML_LANE(lo, 2)) + (FASTML_LANE(lo, 1) + FASTML_LANE(lo, 3));
}

/* x . w in float64 with 8 lane sums: lane l adds x[j] w[j] for j = l mod 8 in increasing j
 * (two independent 4-double vectors lo, hi), then the rest of d in 4s into lo, the lanes as in
 * fastml_lanes_total, and the last d mod 4 products one by one. The margins' four-row loop
 * below adds in exactly this order. NAME##_from finishes the same sum from column j (a
 * multiple of 8) with lo, hi holding columns 0..j-1: AdaGrad's fused step (fastml_adagrad.h)
 * does the first columns itself, between its spans. x and w may differ in type (float32 rows,
 * float64 weights): every product is of the two values converted to double, so a float32 w
 * holding the same values gives the same bits. */
#define FASTML_DEFINE_DOT2(NAME, TX, LOADX, TW, LOADW)                                       \
static FASTML_INLINE double NAME##_from(const TX *x, const TW *w, ptrdiff_t j, ptrdiff_t d,  \
                                        fastml_v4d lo, fastml_v4d hi) {                       \
    double s;                                                                                 \
    for (; j + 8 <= d; j += 8) {                                                              \
        lo = fastml_v4_madd(lo, LOADX(x + j), LOADW(w + j));                                  \
        hi = fastml_v4_madd(hi, LOADX(x + j + 4), LOADW(w + j + 4));                          \
    }                                                                                         \
    if (j + 4 <= d) {                                                                         \
        lo = fastml_v4_madd(lo, LOADX(x + j), LOADW(w + j));                                  \
        j += 4;                                                                               \
    }                                                                                         \
    s = fastml_lanes_total(lo, hi);                                                           \
    for (; j < d; j++) s += (double)x[j] * (double)w[j];                                     \
    return s;                                                                                 \
}                                                                                             \
                                                                                              \
static FASTML_INLINE double NAME(const TX *x, const TW *w, ptrdiff_t d) {                    \
    return NAME##_from(x, w, 0, d, fastml_v4_set1(0.0), fastml_v4_set1(0.0));                \
}
#define FASTML_DEFINE_DOT(NAME, T, LOAD) FASTML_DEFINE_DOT2(NAME, T, LOAD, T, LOAD)

FASTML_DEFINE_DOT(fastml_dot_f64, double, fastml_load4_f64)
FASTML_DEFINE_DOT(fastml_dot_f32, float, fastml_load4_f32)
/* float32 rows against float64 weights (the batch kernel's margins: its weights are float64
 * whatever the dtype of X, so a solver's iterate is not rounded to float32 at each pass) */
FASTML_DEFINE_DOT2(fastml_dot_f32_f64, float, fastml_load4_f32, double, fastml_load4_f64)

/* The SGD loop's dense rows (_rows.pxd): per row one call, no BLAS dispatch, which costs more
 * than the arithmetic at n ~ 100. The dot is the one above (the batch margins' sum order),
 * compiled again inside an AVX2 clone; float32 rows are multiplied and summed in float64. */
FASTML_CLONES static double fastml_row_dot_f64(const double *x, const double *w, ptrdiff_t n) {
    return fastml_dot_f64(x, w, n);
}

FASTML_CLONES static double fastml_row_dot_f32(const float *x, const float *w, ptrdiff_t n) {
    return fastml_dot_f32(x, w, n);
}

/* x . a for a float64 vector a (the averaged SGD's A: the deployed model's margin of
 * progressive validation, _sgd_fast.pyx) */
FASTML_CLONES static double fastml_row_dot_f32_f64(const float *x, const double *a,
                                                   ptrdiff_t n) {
    return fastml_dot_f32_f64(x, a, n);
}

/* w += c x over n values: each w[j] += (T)(c * x[j]), the rounding of the CSR rows' loop
 * (_rows.pxd's row_axpy), so a dense row and the same row in CSR take the same step. */
#define FASTML_DEFINE_AXPY(NAME, T)                                                          \
FASTML_CLONES static void NAME(double c, const T *x, T *w, ptrdiff_t n) {                    \
    ptrdiff_t j;                                                                             \
    for (j = 0; j < n; j++) w[j] += (T)(c * (double)x[j]);                                   \
}

FASTML_DEFINE_AXPY(fastml_axpy_f64, double)
FASTML_DEFINE_AXPY(fastml_axpy_f32, float)

/* a += c x over n values into a float64 accumulator (the averaged SGD's A, _rows.pxd's
 * row_axpy_double): each a[j] += c * x[j], the CSR loop's rounding, in an AVX2 clone. */
#define FASTML_DEFINE_AXPY_ACC(NAME, T)                                                      \
FASTML_CLONES static void NAME(double c, const T *x, double *a, ptrdiff_t n) {               \
    ptrdiff_t j;                                                                             \
    for (j = 0; j < n; j++) a[j] += c * (double)x[j];                                        \
}

FASTML_DEFINE_AXPY_ACC(fastml_axpy_acc_f64, double)
FASTML_DEFINE_AXPY_ACC(fastml_axpy_acc_f32, float)

/* Software prefetch paced by the work: the batch kernel alternates between reading new rows
 * (the margins) and arithmetic on rows already in L1 (the loss, R^T X); with the hardware
 * prefetcher alone memory idles during the arithmetic, and the kernel took the time of the read
 * plus the time of the arithmetic. Prefetching a whole block at once does not help either: a
 * core has only a few dozen line requests in flight, so a burst of prefetches stalls. Instead
 * every inner-loop iteration of both loops requests one or two lines of the rows ahead
 * (8-16 KB past the rows being read), so requests leave at the pace the data is consumed and
 * memory streams during the arithmetic too. */
#define FASTML_PREFETCH_LEAD 8192
#define FASTML_PREFETCH_AHEAD 16384
#define FASTML_PREFETCH_NEAR 4096

typedef struct {
    const char *next;      /* the next line to request */
    const char *end;       /* the end of X: nothing past it is requested */
    const char *limit;     /* min(end, the rows being read + FASTML_PREFETCH_AHEAD) */
} fastml_prefetch_cursor;
/* The kernels below step a local copy of the caller's cursor and hand it back at the end: gcc
 * keeps a local's fields in registers, while through the caller's pointer it loaded `limit`
 * and stored `next` at every step, a store-to-load chain in the inner loop (binary 1M x 100
 * pass 60-76 -> 57-74 ms, bench/README.md, eighth session). */

/* Start of a group of rows at `at`: the requests stay between FASTML_PREFETCH_LEAD and
 * FASTML_PREFETCH_AHEAD bytes past the rows being read (nearer lines are on their way). */
static FASTML_INLINE void fastml_cursor_at(fastml_prefetch_cursor *c, const void *at) {
    const char *p = (const char *)at;
    if (c->end - p <= FASTML_PREFETCH_LEAD) {
        c->limit = c->next;             /* nothing left to request */
        return;
    }
    if (c->next < p + FASTML_PREFETCH_LEAD) c->next = p + FASTML_PREFETCH_LEAD;
    c->limit = c->end - p > FASTML_PREFETCH_AHEAD ? p + FASTML_PREFETCH_AHEAD : c->end;
}

/* Locality 2 (prefetcht1: into L2, not L1): the request does not hold one of L1's few miss
 * buffers for the whole trip from memory, and the demand loads 8-16 KB later hit L2. Against
 * locality 3 (into L1) the binary 1M x 100 pass went 67-73 -> 63-65 ms (bench/README.md,
 * seventh session). With `near_too` the line FASTML_PREFETCH_NEAR bytes behind it, in L2 by
 * then, is also requested into L1 (locality 3), 4-12 KB ahead of the rows being read, so the
 * margins' loads of the next block can hit L1 instead of waiting on L2: the binary 1M x 100
 * float64 pass 0-10% faster, depending on the minute (bench/README.md, ninth session). The
 * float32 kernels leave it out (near_too = 0): they are bound by their arithmetic (the
 * conversions to double), where the extra instruction cost ~10%. */
#define FASTML_NEAR_TOO(T) (sizeof(T) == sizeof(double))

static FASTML_INLINE void fastml_cursor_step(fastml_prefetch_cursor *c, int near_too) {
    if (c->next < c->limit) {
        __builtin_prefetch(c->next, 0, 2);
        if (near_too) __builtin_prefetch(c->next - FASTML_PREFETCH_NEAR, 0, 3);
        c->next += 64;
    }
}

/* M[i, k] = X[i] . W[k] + b[k] for a C-contiguous (n_rows, d) block X and weights W (K, d):
 * the margins of the batch kernel, in float64 whatever the dtype of X (W and b are float64).
 * Four rows at a time (w loaded once for four); two paced prefetches per 8 columns of the
 * first output. M[i, k] is stored at M[AT(i, k)]: row-major (i * K + k) or output-major
 * (k * n_rows + i). */
#define FASTML_AT_ROWS(i, k) ((i) * K + (k))
#define FASTML_AT_COLS(i, k) ((k) * n_rows + (i))
#define FASTML_DEFINE_MARGINS(NAME, DOT, T, LOAD, AT)                                         \
FASTML_CLONES static void NAME(ptrdiff_t n_rows, ptrdiff_t d, ptrdiff_t K, const T *X,       \
                               const double *W, const double *b, double *M,                  \
                               fastml_prefetch_cursor *cursor) {                              \
    ptrdiff_t i = 0, k, j, r;                                                                 \
    fastml_prefetch_cursor local = *cursor, *c = &local;   /* see fastml_prefetch_cursor */   \
    for (; i + 4 <= n_rows; i += 4) {                                                         \
        const T *x0 = X + i * d, *x1 = x0 + d, *x2 = x1 + d, *x3 = x2 + d;                    \
        fastml_cursor_at(c, x0);                                                              \
        for (k = 0; k < K; k++) {                                                             \
            const double *w = W + k * d;                                                      \
            fastml_v4d lo0 = fastml_v4_set1(0.0), hi0 = lo0, lo1 = lo0, hi1 = lo0, lo2 = lo0, \
                       hi2 = lo0, lo3 = lo0, hi3 = lo0, wlo, whi;                             \
            double out[4];                                                                    \
            for (j = 0; j + 8 <= d; j += 8) {                                                 \
                if (k == 0) {                                                                 \
                    fastml_cursor_step(c, FASTML_NEAR_TOO(T));                                \
                    fastml_cursor_step(c, FASTML_NEAR_TOO(T));                                \
                }                                                                             \
                wlo = fastml_load4_f64(w + j);                                                \
                whi = fastml_load4_f64(w + j + 4);                                            \
                lo0 = fastml_v4_madd(lo0, LOAD(x0 + j), wlo);                                 \
                hi0 = fastml_v4_madd(hi0, LOAD(x0 + j + 4), whi);                             \
                lo1 = fastml_v4_madd(lo1, LOAD(x1 + j), wlo);                                 \
                hi1 = fastml_v4_madd(hi1, LOAD(x1 + j + 4), whi);                             \
                lo2 = fastml_v4_madd(lo2, LOAD(x2 + j), wlo);                                 \
                hi2 = fastml_v4_madd(hi2, LOAD(x2 + j + 4), whi);                             \
                lo3 = fastml_v4_madd(lo3, LOAD(x3 + j), wlo);                                 \
                hi3 = fastml_v4_madd(hi3, LOAD(x3 + j + 4), whi);                             \
            }                                                                                 \
            if (j + 4 <= d) {                                                                 \
                wlo = fastml_load4_f64(w + j);                                                \
                lo0 = fastml_v4_madd(lo0, LOAD(x0 + j), wlo);                                 \
                lo1 = fastml_v4_madd(lo1, LOAD(x1 + j), wlo);                                 \
                lo2 = fastml_v4_madd(lo2, LOAD(x2 + j), wlo);                                 \
                lo3 = fastml_v4_madd(lo3, LOAD(x3 + j), wlo);                                 \
                j += 4;                                                                       \
            }                                                                                 \
            out[0] = fastml_lanes_total(lo0, hi0);                                            \
            out[1] = fastml_lanes_total(lo1, hi1);                                            \
            out[2] = fastml_lanes_total(lo2, hi2);                                            \
            out[3] = fastml_lanes_total(lo3, hi3);                                            \
            for (; j < d; j++)                                                                \
                for (r = 0; r < 4; r++) out[r] += (double)X[(i + r) * d + j] * (double)w[j]; \
            for (r = 0; r < 4; r++) M[AT(i + r, k)] = out[r] + (double)b[k];                 \
        }                                                                                     \
    }                                                                                         \
    for (; i < n_rows; i++)                                                                   \
        for (k = 0; k < K; k++)                                                               \
            M[AT(i, k)] = DOT(X + i * d, W + k * d, d) + (double)b[k];                       \
    *cursor = local;                                                                          \
}

/* G[k, 0:d] += sum_i R[i, k] X[i, 0:d] for k < K, over a C-contiguous (n_rows, d) block X and
 * its residuals R (n_rows, K): the gradient accumulation of the batch kernel, while the block
 * is in L1. Four rows per sweep of G[k], so G is loaded and stored a quarter as often; the
 * columns are independent sums, 4 per vector. The order per G[k, j]: groups of 4 rows from
 * the block's first row, ((r0 x0 + r1 x1) + r2 x2) + r3 x3 added to G; the last 1-3 rows one
 * by one. Blocks start at multiples of 4 rows of their chunk, so a chunk's sums do not depend
 * on how it is cut into blocks. One paced prefetch per 4 columns of the first output. */
#define FASTML_DEFINE_XT_R(NAME, T, LOAD)                                                     \
FASTML_CLONES static void NAME(ptrdiff_t n_rows, ptrdiff_t d, ptrdiff_t K, const T *X,       \
                               const double *R, double *G, fastml_prefetch_cursor *cursor) { \
    ptrdiff_t i = 0, j, k;                                                                    \
    fastml_prefetch_cursor local = *cursor, *c = &local;   /* see fastml_prefetch_cursor */   \
    for (; i + 4 <= n_rows; i += 4) {                                                         \
        const T *x0 = X + i * d, *x1 = x0 + d, *x2 = x1 + d, *x3 = x2 + d;                    \
        fastml_cursor_at(c, x0);                                                              \
        for (k = 0; k < K; k++) {                                                             \
            double r0 = R[i * K + k], r1 = R[(i + 1) * K + k], r2 = R[(i + 2) * K + k],       \
                   r3 = R[(i + 3) * K + k], *g = G + k * d;                                   \
            fastml_v4d v0 = fastml_v4_set1(r0), v1 = fastml_v4_set1(r1),                      \
                       v2 = fastml_v4_set1(r2), v3 = fastml_v4_set1(r3), gv;                  \
            for (j = 0; j + 4 <= d; j += 4) {                                                 \
                if (k == 0) fastml_cursor_step(c, FASTML_NEAR_TOO(T));                        \
                gv = fastml_load4_f64(g + j);                                                 \
                gv = fastml_v4_add(gv, fastml_v4_madd(fastml_v4_madd(fastml_v4_madd(          \
                         fastml_v4_mul(v0, LOAD(x0 + j)),                                     \
                         v1, LOAD(x1 + j)), v2, LOAD(x2 + j)), v3, LOAD(x3 + j)));            \
                memcpy(g + j, &gv, sizeof gv);                                                \
            }                                                                                 \
            for (; j < d; j++)                                                                \
                g[j] += r0 * (double)x0[j] + r1 * (double)x1[j] + r2 * (double)x2[j]          \
                        + r3 * (double)x3[j];                                                 \
        }                                                                                     \
    }                                                                                         \
    for (; i < n_rows; i++)                                                                   \
        for (k = 0; k < K; k++) {                                                             \
            double rk = R[i * K + k], *g = G + k * d;                                         \
            for (j = 0; j < d; j++) g[j] += rk * (double)X[i * d + j];                        \
        }                                                                                     \
    *cursor = local;                                                                          \
}

FASTML_DEFINE_XT_R(fastml_xt_r_f64, double, fastml_load4_f64)
FASTML_DEFINE_XT_R(fastml_xt_r_f32, float, fastml_load4_f32)

FASTML_DEFINE_MARGINS(fastml_margins_f64, fastml_dot_f64, double, fastml_load4_f64,
                      FASTML_AT_ROWS)
FASTML_DEFINE_MARGINS(fastml_margins_f32, fastml_dot_f32_f64, float, fastml_load4_f32,
                      FASTML_AT_ROWS)

/* ---- The multinomial batch kernel (K > 1 outputs, issue 13) ----
 * The block's margins and residuals in output-major order ((K, n_rows): M[k * n_rows + i]), so
 * the softmax (fastml_softmax_block_cols, fastml_batch.h) runs across rows, vectorized, with no
 * per-row loop over k. G += R^T X takes the outputs in tiles of 2 (the last tile 3 when K is
 * odd): fastml_xt_r loads every x vector once per output, these once per tile, with the
 * tile's residuals in registers (4 rows x 3 outputs = 12 broadcasts: the 16 AVX2 registers
 * hold them, wider tiles would spill). Every M[i, k] and G[k, j] is summed in exactly the
 * order of fastml_margins / fastml_xt_r (same bits). */
#define FASTML_TILE_MAX 3

/* Outputs in the tile that starts at output k of K. */
static FASTML_INLINE int fastml_tile_width(ptrdiff_t k, ptrdiff_t K) {
    return K - k == 3 ? 3 : (K - k >= 2 ? 2 : 1);
}

/* G[k, j] += ((r0 x0 + r1 x1) + r2 x2) + r3 x3 for the KB outputs of G (rows of length d) whose
 * residuals of rows x0..x3 are R[k * n + 0..3]: fastml_xt_r's sum, each x loaded once. KB is
 * a constant at each call, so the loops over k unroll and the arrays live in registers. */
#define FASTML_DEFINE_XT_R_TILE(NAME, T, LOAD)                                               \
static FASTML_INLINE void NAME(ptrdiff_t d, const int KB, const T *x0, const T *x1,          \
                               const T *x2, const T *x3, const double *R, ptrdiff_t n,       \
                               double *G, fastml_prefetch_cursor *c, int paced) {             \
    fastml_v4d v0[FASTML_TILE_MAX], v1[FASTML_TILE_MAX], v2[FASTML_TILE_MAX],                \
               v3[FASTML_TILE_MAX], a0, a1, a2, a3, gv;                                       \
    ptrdiff_t j, t;                                                                           \
    int k;                                                                                    \
    for (k = 0; k < KB; k++) {                                                                \
        v0[k] = fastml_v4_set1(R[k * n]);                                                     \
        v1[k] = fastml_v4_set1(R[k * n + 1]);                                                 \
        v2[k] = fastml_v4_set1(R[k * n + 2]);                                                 \
        v3[k] = fastml_v4_set1(R[k * n + 3]);                                                 \
    }                                                                                         \
    for (j = 0; j + 4 <= d; j += 4) {                                                         \
        if (paced) fastml_cursor_step(c, FASTML_NEAR_TOO(T));                                 \
        a0 = LOAD(x0 + j);                                                                    \
        a1 = LOAD(x1 + j);                                                                    \
        a2 = LOAD(x2 + j);                                                                    \
        a3 = LOAD(x3 + j);                                                                    \
        for (k = 0; k < KB; k++) {                                                            \
            gv = fastml_load4_f64(G + k * d + j);                                             \
            gv = fastml_v4_add(gv, fastml_v4_madd(fastml_v4_madd(fastml_v4_madd(              \
                     fastml_v4_mul(v0[k], a0), v1[k], a1), v2[k], a2), v3[k], a3));           \
            memcpy(G + k * d + j, &gv, sizeof gv);                                            \
        }                                                                                     \
    }                                                                                         \
    for (t = j; t < d; t++)                                                                   \
        for (k = 0; k < KB; k++)                                                              \
            G[k * d + t] += R[k * n] * (double)x0[t] + R[k * n + 1] * (double)x1[t]           \
                            + R[k * n + 2] * (double)x2[t] + R[k * n + 3] * (double)x3[t];    \
}

/* G[k, 0:d] += sum_i R[k * n_rows + i] X[i, 0:d] (R output-major), as fastml_xt_r (same
 * groups of 4 rows, same order per G[k, j]); one paced prefetch per 4 columns of the first
 * tile. */
#define FASTML_DEFINE_XT_R_COLS(NAME, TILE, T)                                               \
FASTML_CLONES static void NAME(ptrdiff_t n_rows, ptrdiff_t d, ptrdiff_t K, const T *X,       \
                               const double *R, double *G, fastml_prefetch_cursor *cursor) { \
    ptrdiff_t i = 0, j, k;                                                                    \
    fastml_prefetch_cursor local = *cursor, *c = &local;   /* see fastml_prefetch_cursor */   \
    for (; i + 4 <= n_rows; i += 4) {                                                         \
        const T *x0 = X + i * d, *x1 = x0 + d, *x2 = x1 + d, *x3 = x2 + d;                    \
        fastml_cursor_at(c, x0);                                                              \
        for (k = 0; k < K; k += fastml_tile_width(k, K)) {                                    \
            const double *r = R + k * n_rows + i;                                             \
            double *g = G + k * d;                                                            \
            int paced = k == 0;                                                               \
            switch (fastml_tile_width(k, K)) {                                                \
            case 3: TILE(d, 3, x0, x1, x2, x3, r, n_rows, g, c, paced); break;                \
            case 2: TILE(d, 2, x0, x1, x2, x3, r, n_rows, g, c, paced); break;                \
            default: TILE(d, 1, x0, x1, x2, x3, r, n_rows, g, c, paced);                      \
            }                                                                                 \
        }                                                                                     \
    }                                                                                         \
    for (; i < n_rows; i++)                                                                   \
        for (k = 0; k < K; k++) {                                                             \
            double rk = R[k * n_rows + i], *g = G + k * d;                                    \
            for (j = 0; j < d; j++) g[j] += rk * (double)X[i * d + j];                        \
        }                                                                                     \
    *cursor = local;                                                                          \
}

/* out[0:n] = X[0:n] in float64, one paced prefetch per 16 values (a line of float32): the
 * batch kernel widens a float32 block once and runs the float64 loops on it. Converting in
 * each loop (the margins, then R^T X) cost two conversions per value, and the float32 pass
 * ran at ~60% of the float64 one's rate per value; the products are the same (a float32
 * value is exact in float64), so are the bits. */
FASTML_CLONES static void fastml_widen_f32(ptrdiff_t n, const float *X, double *out,
                                           fastml_prefetch_cursor *cursor) {
    ptrdiff_t i = 0, j;
    fastml_prefetch_cursor local = *cursor, *c = &local;   /* see fastml_prefetch_cursor */
    fastml_cursor_at(c, X);
    for (; i + 16 <= n; i += 16) {
        fastml_cursor_step(c, 1);
        for (j = 0; j < 16; j++) out[i + j] = (double)X[i + j];
    }
    for (; i < n; i++) out[i] = (double)X[i];
    *cursor = local;
}

/* float64: the portable copies behind fastml_batch_avx512.h's fastml_margins_cols_f64 and
 * fastml_xt_r_cols_f64 (an AVX-512 copy of each runs where the CPU has it) */
FASTML_DEFINE_MARGINS(fastml_margins_cols_f64_portable, fastml_dot_f64, double, fastml_load4_f64,
                      FASTML_AT_COLS)
FASTML_DEFINE_MARGINS(fastml_margins_cols_f32, fastml_dot_f32_f64, float, fastml_load4_f32,
                      FASTML_AT_COLS)
FASTML_DEFINE_XT_R_TILE(fastml_xt_r_tile_f64, double, fastml_load4_f64)
FASTML_DEFINE_XT_R_TILE(fastml_xt_r_tile_f32, float, fastml_load4_f32)
FASTML_DEFINE_XT_R_COLS(fastml_xt_r_cols_f64_portable, fastml_xt_r_tile_f64, double)
FASTML_DEFINE_XT_R_COLS(fastml_xt_r_cols_f32, fastml_xt_r_tile_f32, float)

#endif
