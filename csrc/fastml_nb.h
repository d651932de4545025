/* The two passes of naive Bayes' Gaussian moment kernel over one block of rows
 * (fastml/naive_bayes/_nb_fast.pyx states the algorithm), and the in-cache transpose that lets a
 * column-major X take the same passes.
 *
 * Why C: the inner loops run over a strip of attributes of the rows of one class; with
 * `restrict` (the tables never alias X) GCC vectorizes them, and the AVX2 clone does 4 doubles a
 * step. Each table element sees the same operations in the same row order as a scalar loop, and
 * no clone contracts to FMA (FMA is not part of target "avx2", and fp-contract is off here), so
 * every clone, and the row-major and column-major paths, give bit-identical moments.
 *
 * A block is rows of `width` attributes, row r at X + r * ldx; class tables are indexed
 * k * d + j (the caller offsets them to the block's first column). */
#ifndef FASTML_NB_H
#define FASTML_NB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fastml_simd.h"

/* fp-contract=off: no clone fuses a * b + c into an FMA (that would change the bits).
 * no-trapping-math: the NaN tests (v == v) may then become vector selects; with the default
 * GCC keeps a branch per cell (a compare of a signaling NaN could trap) and vectorizes
 * nothing. Neither changes a result: fastml never observes floating-point exceptions. */
#if defined(__GNUC__) && !defined(__clang__)
#define FASTML_NO_CONTRACT __attribute__((optimize("fp-contract=off", "no-trapping-math")))
#else
#define FASTML_NO_CONTRACT
#endif

/* The block's rows come grouped by class: group g is class klass[g], its rows (offsets into
 * the block, in row order) rows[first[g]..first[g + 1]). A group's sums for a strip of
 * FASTML_NB_STRIP columns stay in registers while all its rows stream past, and go to the
 * class tables once per block: one load of x per cell where adding each row into the tables
 * cost three loads and two stores (the passes were bound by those, 2-3.4x a read of X). Every
 * table element still adds the same values in the same row order (its rows in order, from the
 * table's value before the block), so the moments are the bits of the row-by-row loops. */
#define FASTML_NB_STRIP 16

/* The next block's bytes, requested one line per row visit (a NULL cursor: none). Grouped by
 * class, pass 1 visits a block's rows out of order (every K-th row, roughly), which the
 * hardware prefetcher does not follow: it waited on memory for most rows. Both passes visit a
 * block's rows (width / 16 + 1) times each, more visits than the next block has lines, so
 * the next block is in L2 when its turn comes and the passes run on cached rows. */
typedef struct {
    const char *next;
    const char *end;
} fastml_nb_cursor;

static FASTML_INLINE void fastml_nb_prefetch(fastml_nb_cursor *pf) {
    if (pf && pf->next < pf->end) {
        __builtin_prefetch(pf->next, 0, 2);
        pf->next += 64;
    }
}

#if defined(__GNUC__)
/* x where `keep` has its bits set (the NaN test v == v), else 0: a select without a branch */
typedef long long fastml_nb_v4m __attribute__((vector_size(32)));
static FASTML_INLINE fastml_v4d fastml_nb_keep(fastml_v4d x, fastml_v4d v) {
    return (fastml_v4d)((fastml_nb_v4m)x & (fastml_nb_v4m)(v == v));
}
#define FASTML_NB_LOAD_f64(p) fastml_load4_f64(p)
#define FASTML_NB_LOAD_f32(p) fastml_load4_f32(p)

/* Pass 1 on one group and a strip of 16 columns: 8 accumulators in registers. */
#define FASTML_DEFINE_NB_SUMS_STRIP(NAME, T, LOAD)                                           \
static FASTML_INLINE void NAME(const ptrdiff_t *rows, ptrdiff_t n_rows, const T *X,          \
                               ptrdiff_t ldx, const double *w, double *c, double *s,         \
                               fastml_nb_cursor *pf) {                                        \
    fastml_v4d c0 = fastml_load4_f64(c), c1 = fastml_load4_f64(c + 4),                       \
               c2 = fastml_load4_f64(c + 8), c3 = fastml_load4_f64(c + 12);                   \
    fastml_v4d s0 = fastml_load4_f64(s), s1 = fastml_load4_f64(s + 4),                       \
               s2 = fastml_load4_f64(s + 8), s3 = fastml_load4_f64(s + 12);                   \
    for (ptrdiff_t r = 0; r < n_rows; r++) {                                                 \
        const T *x = X + rows[r] * ldx;                                                      \
        const fastml_v4d wi = fastml_v4_set1(w[rows[r]]);                                    \
        fastml_v4d v0 = LOAD(x), v1 = LOAD(x + 4), v2 = LOAD(x + 8), v3 = LOAD(x + 12);      \
        fastml_nb_prefetch(pf);                                                              \
        c0 += fastml_nb_keep(wi, v0); s0 += fastml_nb_keep(wi * v0, v0);                     \
        c1 += fastml_nb_keep(wi, v1); s1 += fastml_nb_keep(wi * v1, v1);                     \
        c2 += fastml_nb_keep(wi, v2); s2 += fastml_nb_keep(wi * v2, v2);                     \
        c3 += fastml_nb_keep(wi, v3); s3 += fastml_nb_keep(wi * v3, v3);                     \
    }                                                                                        \
    memcpy(c, &c0, 32); memcpy(c + 4, &c1, 32); memcpy(c + 8, &c2, 32); memcpy(c + 12, &c3, 32); \
    memcpy(s, &s0, 32); memcpy(s + 4, &s1, 32); memcpy(s + 8, &s2, 32); memcpy(s + 12, &s3, 32); \
}

/* Pass 2 on one group and a strip of 16 columns. */
#define FASTML_DEFINE_NB_DEVS_STRIP(NAME, T, LOAD)                                           \
static FASTML_INLINE void NAME(const ptrdiff_t *rows, ptrdiff_t n_rows, const T *X,          \
                               ptrdiff_t ldx, const double *w, const double *c, double *d1,  \
                               double *d2, fastml_nb_cursor *pf) {                            \
    const fastml_v4d m0 = fastml_load4_f64(c), m1 = fastml_load4_f64(c + 4),                 \
                     m2 = fastml_load4_f64(c + 8), m3 = fastml_load4_f64(c + 12);             \
    fastml_v4d a0 = fastml_load4_f64(d1), a1 = fastml_load4_f64(d1 + 4),                     \
               a2 = fastml_load4_f64(d1 + 8), a3 = fastml_load4_f64(d1 + 12);                 \
    fastml_v4d b0 = fastml_load4_f64(d2), b1 = fastml_load4_f64(d2 + 4),                     \
               b2 = fastml_load4_f64(d2 + 8), b3 = fastml_load4_f64(d2 + 12);                 \
    for (ptrdiff_t r = 0; r < n_rows; r++) {                                                 \
        const T *x = X + rows[r] * ldx;                                                      \
        const fastml_v4d wi = fastml_v4_set1(w[rows[r]]);                                    \
        fastml_v4d v0 = LOAD(x), v1 = LOAD(x + 4), v2 = LOAD(x + 8), v3 = LOAD(x + 12);      \
        fastml_nb_prefetch(pf);                                                              \
        fastml_v4d e0 = fastml_nb_keep(v0 - m0, v0), e1 = fastml_nb_keep(v1 - m1, v1),       \
                   e2 = fastml_nb_keep(v2 - m2, v2), e3 = fastml_nb_keep(v3 - m3, v3);       \
        a0 += wi * e0; b0 += wi * e0 * e0;                                                   \
        a1 += wi * e1; b1 += wi * e1 * e1;                                                   \
        a2 += wi * e2; b2 += wi * e2 * e2;                                                   \
        a3 += wi * e3; b3 += wi * e3 * e3;                                                   \
    }                                                                                        \
    memcpy(d1, &a0, 32); memcpy(d1 + 4, &a1, 32); memcpy(d1 + 8, &a2, 32);                   \
    memcpy(d1 + 12, &a3, 32);                                                                \
    memcpy(d2, &b0, 32); memcpy(d2 + 4, &b1, 32); memcpy(d2 + 8, &b2, 32);                   \
    memcpy(d2 + 12, &b3, 32);                                                                \
}
#define FASTML_NB_STRIPS 1
#else
#define FASTML_NB_STRIPS 0
#endif

/* Pass 1: cnt[k, j] += w_i and sum[k, j] += w_i x_ij over the non-NaN x_ij of the rows of
 * class k (NaN adds 0): 16-column strips in registers (above), the rest cell by cell.
 * Products are formed for every cell and then selected: a product under the condition could
 * trap (GCC's default -ftrapping-math), so GCC would keep the branch and not vectorize. */
#define FASTML_DEFINE_NB_SUMS(NAME, STRIP, T)                                                \
FASTML_CLONES FASTML_NO_CONTRACT static void NAME(                                           \
        ptrdiff_t n_groups, const int64_t *klass, const ptrdiff_t *first,                   \
        const ptrdiff_t *rows, ptrdiff_t width, const T *X, ptrdiff_t ldx, const double *w, \
        ptrdiff_t d, double *cnt, double *sum, fastml_nb_cursor *pf) {                       \
    for (ptrdiff_t g = 0; g < n_groups; g++) {                                               \
        double *FASTML_RESTRICT c = cnt + klass[g] * d;                                      \
        double *FASTML_RESTRICT s = sum + klass[g] * d;                                      \
        const ptrdiff_t *group = rows + first[g], n_rows = first[g + 1] - first[g];          \
        ptrdiff_t j0 = 0;                                                                    \
        if (FASTML_NB_STRIPS)                                                                \
            for (; j0 + FASTML_NB_STRIP <= width; j0 += FASTML_NB_STRIP)                     \
                STRIP(group, n_rows, X + j0, ldx, w, c + j0, s + j0, pf);                    \
        for (ptrdiff_t r = 0; r < n_rows; r++) {                                             \
            const T *FASTML_RESTRICT x = X + group[r] * ldx;                                 \
            const double wi = w[group[r]];                                                   \
            if (j0 < width) fastml_nb_prefetch(pf);                                          \
            for (ptrdiff_t j = j0; j < width; j++) {                                         \
                const double v = (double)x[j], wv = wi * v;                                  \
                c[j] += v == v ? wi : 0.0;                                                   \
                s[j] += v == v ? wv : 0.0;                                                   \
            }                                                                                \
        }                                                                                    \
    }                                                                                        \
}

/* Pass 2: with dev = x_ij - center[k, j] (0 for NaN), d1[k, j] += w_i dev and
 * d2[k, j] += (w_i dev) dev. */
#define FASTML_DEFINE_NB_DEVS(NAME, STRIP, T)                                                \
FASTML_CLONES FASTML_NO_CONTRACT static void NAME(                                           \
        ptrdiff_t n_groups, const int64_t *klass, const ptrdiff_t *first,                   \
        const ptrdiff_t *rows, ptrdiff_t width, const T *X, ptrdiff_t ldx, const double *w, \
        ptrdiff_t d, const double *center, double *d1, double *d2, fastml_nb_cursor *pf) {   \
    for (ptrdiff_t g = 0; g < n_groups; g++) {                                               \
        const double *FASTML_RESTRICT c = center + klass[g] * d;                             \
        double *FASTML_RESTRICT s1 = d1 + klass[g] * d;                                      \
        double *FASTML_RESTRICT s2 = d2 + klass[g] * d;                                      \
        const ptrdiff_t *group = rows + first[g], n_rows = first[g + 1] - first[g];          \
        ptrdiff_t j0 = 0;                                                                    \
        if (FASTML_NB_STRIPS)                                                                \
            for (; j0 + FASTML_NB_STRIP <= width; j0 += FASTML_NB_STRIP)                     \
                STRIP(group, n_rows, X + j0, ldx, w, c + j0, s1 + j0, s2 + j0, pf);          \
        for (ptrdiff_t r = 0; r < n_rows; r++) {                                             \
            const T *FASTML_RESTRICT x = X + group[r] * ldx;                                 \
            const double wi = w[group[r]];                                                   \
            if (j0 < width) fastml_nb_prefetch(pf);                                          \
            for (ptrdiff_t j = j0; j < width; j++) {                                         \
                const double v = (double)x[j];                                               \
                const double diff = v - c[j], dev = v == v ? diff : 0.0;                     \
                s1[j] += wi * dev;                                                           \
                s2[j] += wi * dev * dev;                                                     \
            }                                                                                \
        }                                                                                    \
    }                                                                                        \
}

/* dst[i * ldd + j] = src[j * lds + i] for i < n, j < width: a column-major panel copied
 * row-major (the panel then stays in L1/L2 for the two passes that follow). 4 x 4 tiles in
 * GCC vector types: 4 loads of 4 rows of one column, 8 shuffles, 4 stores of 4 columns of one
 * row (a scalar copy costs a store per value, as much as both passes). V is a vector of 4 T,
 * M the integer vector of its shuffle masks. */
#define FASTML_DEFINE_NB_TRANSPOSE(NAME, T, V, M)                                            \
FASTML_CLONES static void NAME(ptrdiff_t n, ptrdiff_t width, const T *src, ptrdiff_t lds,     \
                               T *dst, ptrdiff_t ldd) {                                      \
    typedef T V __attribute__((vector_size(4 * sizeof(T))));                                 \
    ptrdiff_t i, j, b;                                                                       \
    const M even = {0, 4, 2, 6}, odd = {1, 5, 3, 7}, low = {0, 1, 4, 5}, high = {2, 3, 6, 7}; \
    for (j = 0; j + 4 <= width; j += 4) {                                                    \
        const T *c0 = src + j * lds, *c1 = c0 + lds, *c2 = c1 + lds, *c3 = c2 + lds;         \
        for (i = 0; i + 4 <= n; i += 4) {                                                    \
            V r0, r1, r2, r3, t0, t1, t2, t3, o0, o1, o2, o3;                                \
            memcpy(&r0, c0 + i, sizeof(V));                                                  \
            memcpy(&r1, c1 + i, sizeof(V));                                                  \
            memcpy(&r2, c2 + i, sizeof(V));                                                  \
            memcpy(&r3, c3 + i, sizeof(V));                                                  \
            t0 = __builtin_shuffle(r0, r1, even);    /* (0,0) (0,1) (2,0) (2,1): (row,col) */\
            t1 = __builtin_shuffle(r0, r1, odd);     /* (1,0) (1,1) (3,0) (3,1) */           \
            t2 = __builtin_shuffle(r2, r3, even);    /* (0,2) (0,3) (2,2) (2,3) */           \
            t3 = __builtin_shuffle(r2, r3, odd);     /* (1,2) (1,3) (3,2) (3,3) */           \
            o0 = __builtin_shuffle(t0, t2, low);                                             \
            o1 = __builtin_shuffle(t1, t3, low);                                             \
            o2 = __builtin_shuffle(t0, t2, high);                                            \
            o3 = __builtin_shuffle(t1, t3, high);                                            \
            memcpy(dst + i * ldd + j, &o0, sizeof(V));                                       \
            memcpy(dst + (i + 1) * ldd + j, &o1, sizeof(V));                                 \
            memcpy(dst + (i + 2) * ldd + j, &o2, sizeof(V));                                 \
            memcpy(dst + (i + 3) * ldd + j, &o3, sizeof(V));                                 \
        }                                                                                    \
        for (; i < n; i++)                                                                   \
            for (b = 0; b < 4; b++) dst[i * ldd + j + b] = src[(j + b) * lds + i];           \
    }                                                                                        \
    for (; j < width; j++)                                                                   \
        for (i = 0; i < n; i++) dst[i * ldd + j] = src[j * lds + i];                         \
}

/* CategoricalNB's count pass over an integer matrix (rows 0..n of X, d columns): for every
 * cell inside its column's range [lo[j], lo[j] + width[j]), table[y_i * W + start[j] + x_ij -
 * lo[j]] += w_i; every other cell is not counted but widens [mn[j], mx[j]] to cover it (the
 * caller sets them to INT64_MAX / INT64_MIN and, when any cell was outside, counts again over
 * the ranges those and the counted values span). Returns the number of cells outside. The
 * distance to lo is taken in uint64: exact over all of int64, and a value below lo wraps to a
 * large distance, so one comparison tests both ends. A scatter, so not vectorized; `restrict`
 * keeps lo, width and start in registers or L1. The _unit copies count rows of weight 1 (no
 * sample_weight, the usual case) in uint32 cells: an integer add where the float64 one kept
 * each cell's load-add-store chain 4 cycles long (the pass took ~3 ns a cell); the caller adds
 * the counts (exact integers) to its float64 tables. */
#define FASTML_DEFINE_NB_COUNT_RANGE(NAME, T, COUNT, ADD)                                    \
static int64_t NAME(ptrdiff_t n, ptrdiff_t d, const T *X, const int64_t *y, const double *w, \
                    const int64_t *lo, const int64_t *width, const int64_t *start,           \
                    ptrdiff_t W, COUNT *table, int64_t *mn, int64_t *mx) {                   \
    int64_t outside = 0;                                                                     \
    (void)w;                                                                                 \
    for (ptrdiff_t i = 0; i < n; i++) {                                                      \
        const T *FASTML_RESTRICT x = X + i * d;                                              \
        COUNT *FASTML_RESTRICT t = table + y[i] * W;                                         \
        int64_t *FASTML_RESTRICT low = mn, *FASTML_RESTRICT high = mx;                       \
        for (ptrdiff_t j = 0; j < d; j++) {                                                  \
            const int64_t v = (int64_t)x[j];                                                 \
            const uint64_t at = (uint64_t)v - (uint64_t)lo[j];                               \
            if (at < (uint64_t)width[j]) {                                                   \
                t[start[j] + (ptrdiff_t)at] += ADD;                                          \
            } else {                                                                         \
                outside++;                                                                   \
                low[j] = v < low[j] ? v : low[j];                                            \
                high[j] = v > high[j] ? v : high[j];                                         \
            }                                                                                \
        }                                                                                    \
    }                                                                                        \
    return outside;                                                                          \
}

#if FASTML_NB_STRIPS
FASTML_DEFINE_NB_SUMS_STRIP(fastml_nb_sums_strip_f64, double, FASTML_NB_LOAD_f64)
FASTML_DEFINE_NB_SUMS_STRIP(fastml_nb_sums_strip_f32, float, FASTML_NB_LOAD_f32)
FASTML_DEFINE_NB_DEVS_STRIP(fastml_nb_devs_strip_f64, double, FASTML_NB_LOAD_f64)
FASTML_DEFINE_NB_DEVS_STRIP(fastml_nb_devs_strip_f32, float, FASTML_NB_LOAD_f32)
#else
#define fastml_nb_sums_strip_f64(...)
#define fastml_nb_sums_strip_f32(...)
#define fastml_nb_devs_strip_f64(...)
#define fastml_nb_devs_strip_f32(...)
#endif
FASTML_DEFINE_NB_SUMS(fastml_nb_sums_f64, fastml_nb_sums_strip_f64, double)
FASTML_DEFINE_NB_SUMS(fastml_nb_sums_f32, fastml_nb_sums_strip_f32, float)
FASTML_DEFINE_NB_DEVS(fastml_nb_devs_f64, fastml_nb_devs_strip_f64, double)
FASTML_DEFINE_NB_DEVS(fastml_nb_devs_f32, fastml_nb_devs_strip_f32, float)
FASTML_DEFINE_NB_COUNT_RANGE(fastml_nb_count_range_i64, int64_t, double, w[i])
FASTML_DEFINE_NB_COUNT_RANGE(fastml_nb_count_range_i32, int32_t, double, w[i])
FASTML_DEFINE_NB_COUNT_RANGE(fastml_nb_count_range_unit_i64, int64_t, uint32_t, 1u)
FASTML_DEFINE_NB_COUNT_RANGE(fastml_nb_count_range_unit_i32, int32_t, uint32_t, 1u)
#if defined(__GNUC__) && !defined(__clang__)   /* __builtin_shuffle is GCC's */
typedef long long fastml_nb_mask4_64 __attribute__((vector_size(32)));
typedef int fastml_nb_mask4_32 __attribute__((vector_size(16)));
FASTML_DEFINE_NB_TRANSPOSE(fastml_nb_transpose_f64, double, fastml_nb_v4_64, fastml_nb_mask4_64)
FASTML_DEFINE_NB_TRANSPOSE(fastml_nb_transpose_f32, float, fastml_nb_v4_32, fastml_nb_mask4_32)
#else                                            /* other compilers: the plain copy */
#define FASTML_DEFINE_NB_TRANSPOSE_PLAIN(NAME, T)                                            \
static void NAME(ptrdiff_t n, ptrdiff_t width, const T *src, ptrdiff_t lds, T *dst,           \
                 ptrdiff_t ldd) {                                                            \
    for (ptrdiff_t j = 0; j < width; j++)                                                    \
        for (ptrdiff_t i = 0; i < n; i++) dst[i * ldd + j] = src[j * lds + i];               \
}
FASTML_DEFINE_NB_TRANSPOSE_PLAIN(fastml_nb_transpose_f64, double)
FASTML_DEFINE_NB_TRANSPOSE_PLAIN(fastml_nb_transpose_f32, float)
#endif

#endif
