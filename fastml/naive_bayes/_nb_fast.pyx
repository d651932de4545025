# Naive Bayes kernels (lecture 004, "Estimate Probabilities from Data"; 002 for the Gaussian
# form): fit is a reduction, prediction a gather-sum.
#
# Fit, categorical: one pass over the int32 codes adds each row's weight to
# counts[y_i, offset_j + code_ij] (code < 0 = missing: that row does not count for that
# attribute, 004's "ignore the instance"). Threads count row ranges into private tables that are
# summed at the end. Invariant: counts[k, offset_j + c] = sum of w_i over the rows seen so far
# with y_i = k and code_ij = c.
#
# Fit, Gaussian: per class and attribute the weighted count n, mean and M2 = sum w (x - mean)^2
# of the non-missing values, in one read of X: a block of BLOCK rows is summed (pass 1), then
# its deviations from its own rounded mean c are summed while it is still in cache (pass 2:
# the corrected two-pass M2 = sum w (x-c)^2 - (sum w (x-c))^2 / n), and the block is merged
# into the running moments by Chan's formula (fastml/_core/_moments.pxd, the one copy)
#     n = na + nb, delta = mb - ma, mean = ma + delta nb / n, M2 = M2a + M2b + delta^2 na nb / n,
# with means kept relative to a shift (the first block's center), so delta is a difference of
# small numbers even for data far from 0 (values around 1e6 with unit spread keep M2 to 1e-15
# instead of 1e-11). The same merge joins threads here, and partial_fit chunks and
# classes in naive_bayes/_classes.py (through _moments.merge_moments).
# Invariant: (n, shift + mean, M2)[k, j] describe exactly the blocks merged so far.
#
# Predict: out[i, k] += sum_j table[offset_j + code_ij, k] (categorical, a gather: the K values
# of one level are contiguous) and out[i, k] += sum_j a[k, j] - b[k, j] (x_ij - mean[k, j])^2
# (Gaussian, a = -log(2 pi var)/2, b = 1/(2 var)), skipping missing cells; rows in parallel
# chunks, so the (n, K) result is exact whatever the thread count.
from cython.parallel cimport prange
from libc.stdlib cimport calloc, free, malloc
from libc.math cimport INFINITY
from libc.string cimport memset
from cython cimport floating

import numpy as np

from .._core._csrc cimport fastml_check_index
from .._core._encode cimport UNSEEN_CODE, distance, int_t
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from .._core._moments cimport chan_merge
from .._core._typedefs cimport index_t

cdef enum:
    # Rows per moment block: 256 rows x 100 float64 attributes = 200 KB, so pass 2 re-reads
    # the block from L2 instead of memory.
    BLOCK = 256
    # Rows per prediction task: enough work per task to hide the scheduling, small enough to
    # balance threads on a few thousand rows.
    PRED_CHUNK = 1024
    # A fitting thread gets at least this many rows: below it, starting the thread and merging
    # its private table cost more than the counting it saves.
    MIN_ROWS_PER_THREAD = 4096


cdef inline Py_ssize_t split(Py_ssize_t n, int parts, int t) noexcept nogil:
    """Start of part t of range(n) cut into `parts` contiguous, nearly equal parts."""
    return (n * t) // parts


cdef inline int fit_threads(Py_ssize_t n_rows, int n_threads) noexcept nogil:
    """Threads for a fitting reduction over n_rows (see MIN_ROWS_PER_THREAD)."""
    return max(1, min(n_threads, <int> (n_rows // MIN_ROWS_PER_THREAD) + 1))


# The shape checks every kernel makes at entry (_core's contract: O(1), before any loop).
cdef inline void check_rows(str name, Py_ssize_t got, Py_ssize_t n) except *:
    if got != n:
        raise ValueError(f"{name} has {got} rows; the kernel was given {n}")


cdef inline void check_shape(str name, Py_ssize_t rows, Py_ssize_t cols, Py_ssize_t want_rows,
                             Py_ssize_t want_cols) except *:
    if rows != want_rows or cols != want_cols:
        raise ValueError(f"{name} must be ({want_rows}, {want_cols}); got ({rows}, {cols})")


# ------------------------------------------------------------------------ categorical counts
cdef struct CountScratch:
    double *tables      # one private (n_classes, width) count table per thread
    Py_ssize_t size     # n_classes * width: the length of one table
    int n_threads


cdef int count_scratch_init(CountScratch *s, int n_threads, Py_ssize_t size) except -1:
    s.n_threads, s.size = n_threads, size
    s.tables = <double *> calloc(n_threads * size, sizeof(double))
    if s.tables == NULL:
        raise MemoryError()
    return 0


cdef void count_scratch_free(CountScratch *s) noexcept:
    free(s.tables)
    s.tables = NULL


cdef void count_scratch_add_to(CountScratch *s, double[:, ::1] counts) noexcept nogil:
    """counts += the threads' private tables, in thread order (the same sums whatever ran
    where)."""
    cdef Py_ssize_t width = counts.shape[1], idx
    cdef int t
    cdef double *tab
    for t in range(s.n_threads):
        tab = s.tables + t * s.size
        for idx in range(s.size):
            counts[idx // width, idx % width] += tab[idx]


cdef void check_count_args(Py_ssize_t n, Py_ssize_t d, const index_t[::1] y,
                           const double[::1] sw, const index_t[::1] offsets,
                           double[:, ::1] counts) except *:
    check_rows("y", y.shape[0], n)
    check_rows("sw", sw.shape[0], n)
    check_rows("offsets", offsets.shape[0], d + 1)
    if counts.shape[1] != offsets[d]:
        raise ValueError(f"counts has {counts.shape[1]} columns; offsets end at {offsets[d]}")


def count_categories(const int[:, ::1] codes, const index_t[::1] y, const double[::1] sw,
                     const index_t[::1] offsets, double[:, ::1] counts, int n_threads=1):
    """counts[y_i, offsets[j] + codes[i, j]] += sw[i] for every non-missing cell (code >= 0).

    counts has shape (n_classes, offsets[d]); it is added to, not reset. Trusted values
    (_core's contract): 0 <= y_i < n_classes and codes[i, j] < offsets[j + 1] - offsets[j]."""
    cdef Py_ssize_t n = codes.shape[0], d = codes.shape[1]
    check_count_args(n, d, y, sw, offsets, counts)
    cdef Py_ssize_t width = counts.shape[1], i, j, idx, lo, hi
    cdef CountScratch s
    cdef int t, c
    cdef double *tab
    count_scratch_init(&s, fit_threads(n, n_threads), counts.shape[0] * width)
    with nogil:
        for t in prange(s.n_threads, num_threads=s.n_threads, schedule="static"):
            tab = s.tables + t * s.size
            lo = split(n, s.n_threads, t)
            hi = split(n, s.n_threads, t + 1)
            for i in range(lo, hi):
                idx = y[i] * width
                for j in range(d):
                    c = codes[i, j]
                    if c >= 0:
                        fastml_check_index(idx + offsets[j] + c, s.size)
                        tab[idx + offsets[j] + c] += sw[i]
        count_scratch_add_to(&s, counts)
    count_scratch_free(&s)


cdef inline int lut_code(int_t x, int64_t lo, const index_t *lut_range,
                         const int *lut) noexcept nogil:
    """encode_int's code of x in a column whose lookup slice is lut[lut_range[0]:lut_range[1]]
    over the values lo, lo + 1, ...: the slice's entry, or UNSEEN outside it."""
    cdef uint64_t v = distance(x, lo)
    if x < lo or v >= <uint64_t> (lut_range[1] - lut_range[0]):
        return UNSEEN_CODE
    return lut[lut_range[0] + <index_t> v]


def count_int_categories(const int_t[:, ::1] X, const int64_t[::1] lo,
                         const index_t[::1] lut_offsets, const int[::1] lut,
                         const index_t[::1] y, const double[::1] sw,
                         const index_t[::1] offsets, double[:, ::1] counts, int n_threads=1):
    """count_categories of the codes encode_int (fastml/_core/_encode.pyx) gives X, without
    writing them: code = lut[lut_offsets[j] + X[i, j] - lo[j]] inside column j's range, else
    UNSEEN (not counted). The same rows per thread and the same order of additions as
    count_categories, so the same counts."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1]
    check_count_args(n, d, y, sw, offsets, counts)
    check_rows("lo", lo.shape[0], d)
    check_rows("lut_offsets", lut_offsets.shape[0], d + 1)
    if lut.shape[0] < lut_offsets[d]:
        raise ValueError("lut is shorter than its offsets say")
    cdef Py_ssize_t width = counts.shape[1], i, j, idx, lo_row, hi_row
    cdef CountScratch s
    cdef int t, c
    cdef double *tab
    cdef const int *lut_data = &lut[0] if lut.shape[0] else NULL  # empty: every cell UNSEEN
    count_scratch_init(&s, fit_threads(n, n_threads), counts.shape[0] * width)
    with nogil:
        for t in prange(s.n_threads, num_threads=s.n_threads, schedule="static"):
            tab = s.tables + t * s.size
            lo_row = split(n, s.n_threads, t)
            hi_row = split(n, s.n_threads, t + 1)
            for i in range(lo_row, hi_row):
                idx = y[i] * width
                for j in range(d):
                    c = lut_code(X[i, j], lo[j], &lut_offsets[j], lut_data)
                    if c >= 0:                # not UNSEEN
                        fastml_check_index(idx + offsets[j] + c, s.size)
                        tab[idx + offsets[j] + c] += sw[i]
        count_scratch_add_to(&s, counts)
    count_scratch_free(&s)


cdef extern from "fastml_nb.h" nogil:
    int64_t fastml_nb_count_range_i64(Py_ssize_t n, Py_ssize_t d, const int64_t *X,
                                      const index_t *y, const double *w, const int64_t *lo,
                                      const int64_t *width, const int64_t *start, Py_ssize_t W,
                                      double *table, int64_t *mn, int64_t *mx) noexcept
    int64_t fastml_nb_count_range_i32(Py_ssize_t n, Py_ssize_t d, const int32_t *X,
                                      const index_t *y, const double *w, const int64_t *lo,
                                      const int64_t *width, const int64_t *start, Py_ssize_t W,
                                      double *table, int64_t *mn, int64_t *mx) noexcept
    int64_t fastml_nb_count_range_unit_i64(Py_ssize_t n, Py_ssize_t d, const int64_t *X,
                                           const index_t *y, const double *w,
                                           const int64_t *lo, const int64_t *width,
                                           const int64_t *start, Py_ssize_t W,
                                           uint32_t *table, int64_t *mn, int64_t *mx) noexcept
    int64_t fastml_nb_count_range_unit_i32(Py_ssize_t n, Py_ssize_t d, const int32_t *X,
                                           const index_t *y, const double *w,
                                           const int64_t *lo, const int64_t *width,
                                           const int64_t *start, Py_ssize_t W,
                                           uint32_t *table, int64_t *mn, int64_t *mx) noexcept


cdef bint unit_weights(const double[::1] sw) noexcept nogil:
    """Every weight 1 (fit without sample_weight): count_int_range then counts in integers."""
    cdef Py_ssize_t i
    for i in range(sw.shape[0]):
        if sw[i] != 1.0:
            return False
    return True


cdef inline int64_t count_unit(const int_t[:, ::1] X, Py_ssize_t first, Py_ssize_t stop,
                               const index_t[::1] y, const double[::1] sw,
                               const int64_t[::1] lo, const int64_t[::1] width,
                               const int64_t[::1] start, Py_ssize_t W, uint32_t *counts,
                               int64_t *low, int64_t *high) noexcept nogil:
    """count_int_range's pass over rows first..stop of weight 1, in integer counts."""
    if int_t is int64_t:
        return fastml_nb_count_range_unit_i64(
            stop - first, X.shape[1], &X[first, 0], &y[first], &sw[first], &lo[0], &width[0],
            &start[0], W, counts, low, high)
    else:
        return fastml_nb_count_range_unit_i32(
            stop - first, X.shape[1], &X[first, 0], &y[first], &sw[first], &lo[0], &width[0],
            &start[0], W, counts, low, high)


def count_int_range(const int_t[:, ::1] X, const index_t[::1] y, const double[::1] sw,
                    const int64_t[::1] lo, const int64_t[::1] width, Py_ssize_t n_classes,
                    int n_threads=1):
    """Counts of an integer matrix by (class, column, value) for the values inside each
    column's range [lo[j], lo[j] + width[j]), in one read of X (CategoricalNB's fit: the
    levels are the values with a positive count, so no separate scan finds them).

    Returns (tables, outside, low, high): tables[t, k, start[j] + x - lo[j]] (start = the
    running sum of width) is the summed weight of value x in column j among thread t's rows
    of class k (the rows split as count_categories splits them, each thread adding its rows in
    order, so adding tables[0], tables[1], ... to a count table gives count_categories' sums);
    outside is the number of cells not counted, and low[j], high[j] the smallest and largest
    of them in column j (INT64_MAX and INT64_MIN when none). Trusted: 0 <= y_i < n_classes."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], j
    check_rows("y", y.shape[0], n)
    check_rows("sw", sw.shape[0], n)
    check_rows("lo", lo.shape[0], d)
    check_rows("width", width.shape[0], d)
    if n_classes < 1:
        raise ValueError(f"n_classes must be at least 1; got {n_classes}")
    start_array = np.zeros(d, dtype=np.int64)
    cdef int64_t[::1] start = start_array
    cdef Py_ssize_t W = 0
    for j in range(d):
        if width[j] < 0:
            raise ValueError(f"width[{j}] is negative ({width[j]})")
        start[j] = W
        W += width[j]
    cdef int T = fit_threads(n, n_threads), t
    # rows of weight 1 are counted in uint32 cells (csrc/fastml_nb.h), exact below 2^32 rows
    cdef bint unit = n < 4294967295 and unit_weights(sw)
    tables_array = np.zeros((T, n_classes, W))
    counts_array = np.zeros((T if unit else 0, n_classes, W), dtype=np.uint32)
    low_array = np.full((T, d), np.iinfo(np.int64).max, dtype=np.int64)
    high_array = np.full((T, d), np.iinfo(np.int64).min, dtype=np.int64)
    cdef double[:, :, ::1] tables = tables_array
    cdef uint32_t[:, :, ::1] counts = counts_array    # (0, K, W) unless unit
    cdef int64_t[:, ::1] low = low_array, high = high_array
    cdef int64_t[::1] outside = np.zeros(T, dtype=np.int64)
    cdef Py_ssize_t first, stop
    if n > 0 and d > 0:
        with nogil:
            for t in prange(T, num_threads=T, schedule="static"):
                first = split(n, T, t)        # fit_threads leaves every thread some rows
                stop = split(n, T, t + 1)
                if unit:
                    outside[t] = count_unit(X, first, stop, y, sw, lo, width, start, W,
                                            &counts[t, 0, 0] if W > 0 else NULL,
                                            &low[t, 0], &high[t, 0])
                elif int_t is int64_t:
                    outside[t] = fastml_nb_count_range_i64(
                        stop - first, d, &X[first, 0], &y[first], &sw[first], &lo[0],
                        &width[0], &start[0], W, &tables[t, 0, 0] if W > 0 else NULL,
                        &low[t, 0], &high[t, 0])
                else:
                    outside[t] = fastml_nb_count_range_i32(
                        stop - first, d, &X[first, 0], &y[first], &sw[first], &lo[0],
                        &width[0], &start[0], W, &tables[t, 0, 0] if W > 0 else NULL,
                        &low[t, 0], &high[t, 0])
    if unit:
        tables_array[...] = counts_array
    return tables_array, int(np.sum(outside)), low_array.min(axis=0), high_array.max(axis=0)


# ------------------------------------------------------------------------- Gaussian moments
# The two passes over a block run in C (csrc/fastml_nb.h: vectorized, AVX2 clone); a column-major
# X is copied panel by panel into a small row-major scratch (PANEL columns of one block, in
# cache) and takes the same passes, so its moments are bit-identical to the row-major ones.
cdef extern from "fastml_nb.h" nogil:
    ctypedef struct fastml_nb_cursor:
        const char *next
        const char *end
    void fastml_nb_sums_f64(Py_ssize_t n_groups, const index_t *klass, const Py_ssize_t *first,
                            const Py_ssize_t *rows, Py_ssize_t width, const double *X,
                            Py_ssize_t ldx, const double *w, Py_ssize_t d, double *cnt,
                            double *sum, fastml_nb_cursor *pf) noexcept
    void fastml_nb_sums_f32(Py_ssize_t n_groups, const index_t *klass, const Py_ssize_t *first,
                            const Py_ssize_t *rows, Py_ssize_t width, const float *X,
                            Py_ssize_t ldx, const double *w, Py_ssize_t d, double *cnt,
                            double *sum, fastml_nb_cursor *pf) noexcept
    void fastml_nb_devs_f64(Py_ssize_t n_groups, const index_t *klass, const Py_ssize_t *first,
                            const Py_ssize_t *rows, Py_ssize_t width, const double *X,
                            Py_ssize_t ldx, const double *w, Py_ssize_t d,
                            const double *center, double *d1, double *d2,
                            fastml_nb_cursor *pf) noexcept
    void fastml_nb_devs_f32(Py_ssize_t n_groups, const index_t *klass, const Py_ssize_t *first,
                            const Py_ssize_t *rows, Py_ssize_t width, const float *X,
                            Py_ssize_t ldx, const double *w, Py_ssize_t d,
                            const double *center, double *d1, double *d2,
                            fastml_nb_cursor *pf) noexcept
    void fastml_nb_transpose_f64(Py_ssize_t n, Py_ssize_t width, const double *src,
                                 Py_ssize_t lds, double *dst, Py_ssize_t ldd) noexcept
    void fastml_nb_transpose_f32(Py_ssize_t n, Py_ssize_t width, const float *src,
                                 Py_ssize_t lds, float *dst, Py_ssize_t ldd) noexcept


cdef enum:
    # Columns per panel of a column-major block: 256 rows x 64 float64 = 128 KB of scratch per
    # thread, filled and read twice while in L2 (32 columns: 8% slower, more calls per row).
    PANEL = 64


ctypedef struct Groups:
    # A block's rows grouped by class (csrc/fastml_nb.h): group g is class klass[g], its rows
    # (offsets in the block, in order) rows[first[g]..first[g + 1]); slot[k] is class k's
    # group, -1 for the classes not in the block.
    Py_ssize_t n
    index_t *klass        # (BLOCK,)
    Py_ssize_t *first     # (BLOCK + 1,)
    Py_ssize_t *rows      # (BLOCK,)
    Py_ssize_t *slot      # (K,)


cdef void group_rows(const index_t *y, Py_ssize_t m, Py_ssize_t K,
                     Py_ssize_t d, Groups *g, double *bn, double *center, double *d1,
                     double *d2) noexcept nogil:
    """Group the block's m rows by class (a counting sort, classes in order of first
    appearance) and zero the block tables of its classes."""
    cdef Py_ssize_t i, k, j, base
    g.n = 0
    for i in range(m):
        k = y[i]
        fastml_check_index(k, K)              # the C passes index the K x d tables by y
        if g.slot[k] < 0:
            g.slot[k] = g.n
            g.klass[g.n] = k
            g.first[g.n + 1] = 0
            g.n += 1
            base = k * d
            memset(bn + base, 0, d * sizeof(double))
            memset(center + base, 0, d * sizeof(double))
            memset(d1 + base, 0, d * sizeof(double))
            memset(d2 + base, 0, d * sizeof(double))
        g.first[g.slot[k] + 1] += 1
    g.first[0] = 0
    for j in range(g.n):
        g.first[j + 1] += g.first[j]
    for i in range(m):                        # rows[first[slot] ...] in row order
        j = g.slot[y[i]]
        g.rows[g.first[j]] = i
        g.first[j] += 1
    for j in range(g.n, 0, -1):               # first[] moved to each group's end: back one
        g.first[j] = g.first[j - 1]
    g.first[0] = 0


cdef inline void block_sums(const floating *X, const Groups *g, Py_ssize_t width,
                            Py_ssize_t ldx, const double *w, Py_ssize_t d, double *cnt,
                            double *sum, fastml_nb_cursor *pf) noexcept nogil:
    if floating is double:
        fastml_nb_sums_f64(g.n, g.klass, g.first, g.rows, width, X, ldx, w, d, cnt, sum, pf)
    else:
        fastml_nb_sums_f32(g.n, g.klass, g.first, g.rows, width, X, ldx, w, d, cnt, sum, pf)


cdef inline void block_devs(const floating *X, const Groups *g, Py_ssize_t width,
                            Py_ssize_t ldx, const double *w, Py_ssize_t d,
                            const double *center, double *d1, double *d2,
                            fastml_nb_cursor *pf) noexcept nogil:
    if floating is double:
        fastml_nb_devs_f64(g.n, g.klass, g.first, g.rows, width, X, ldx, w, d, center, d1, d2,
                           pf)
    else:
        fastml_nb_devs_f32(g.n, g.klass, g.first, g.rows, width, X, ldx, w, d, center, d1, d2,
                           pf)


cdef inline void transpose(const floating *src, Py_ssize_t n, Py_ssize_t width,
                           Py_ssize_t lds, floating *dst) noexcept nogil:
    if floating is double:
        fastml_nb_transpose_f64(n, width, src, lds, dst, PANEL)
    else:
        fastml_nb_transpose_f32(n, width, src, lds, dst, PANEL)


cdef inline void block_centers(const Groups *g, Py_ssize_t width, Py_ssize_t d,
                               const double *cnt, double *center) noexcept nogil:
    """center = sum / count where count > 0, for the classes of the block: the block means,
    rounded (pass 2 centers on them)."""
    cdef Py_ssize_t q, j, base
    for q in range(g.n):
        base = g.klass[q] * d
        for j in range(width):
            if cnt[base + j] > 0:
                center[base + j] /= cnt[base + j]


cdef void moments_range(const floating *X, Py_ssize_t N, Py_ssize_t d, bint fortran,
                        const index_t *y, const double *sw, Py_ssize_t lo, Py_ssize_t hi,
                        Py_ssize_t K, double *acc, double *blk, Groups *g,
                        floating *panel) noexcept nogil:
    """Merge rows lo..hi of X (N x d; row-major, or column-major when `fortran`, through the
    scratch `panel` of BLOCK x PANEL values) into acc = (n, shift, mean, m2) (4 arrays of
    K x d) block by block; blk = (n, center, d1, d2) is the block's scratch (4 arrays of K x d),
    g the block's grouping of its rows by class.

    A block is summed (pass 1), centered on its rounded mean c, and summed again while in
    cache (pass 2: d1 = sum w (x - c), d2 = sum w (x - c)^2); the corrected two-pass formula
    M2 = d2 - d1^2 / n then holds to rounding, and the block's mean relative to the running
    shift is (c - shift) + d1 / n. Each (class, attribute) sees its rows in order whatever the
    layout, so both layouts give the same bits."""
    cdef Py_ssize_t kd = K * d, start, stop, m, j, j0, width, k, q, base, idx
    cdef double nb
    cdef double *n = acc
    cdef double *shift = acc + kd
    cdef double *mean = acc + 2 * kd
    cdef double *m2 = acc + 3 * kd
    cdef double *bn = blk
    cdef double *center = blk + kd
    cdef double *d1 = blk + 2 * kd
    cdef double *d2 = blk + 3 * kd
    cdef fastml_nb_cursor ahead
    start = lo
    while start < hi:
        stop = min(start + BLOCK, hi)
        m = stop - start
        # the next block's rows, requested while this one is summed (csrc/fastml_nb.h)
        ahead.next = <const char *> (X + stop * d)
        ahead.end = <const char *> (X + min(stop + BLOCK, hi) * d)
        group_rows(y + start, m, K, d, g, bn, center, d1, d2)
        if fortran:                           # panel by panel: copy, sum, center, deviate
            j0 = 0
            while j0 < d:
                width = min(<Py_ssize_t> PANEL, d - j0)
                transpose(X + j0 * N + start, m, width, N, panel)
                block_sums(panel, g, width, PANEL, sw + start, d, bn + j0, center + j0, NULL)
                block_centers(g, width, d, bn + j0, center + j0)
                block_devs(panel, g, width, PANEL, sw + start, d, center + j0, d1 + j0,
                           d2 + j0, NULL)
                j0 += PANEL
        else:
            block_sums(X + start * d, g, d, d, sw + start, d, bn, center, &ahead)
            block_centers(g, d, d, bn, center)
            block_devs(X + start * d, g, d, d, sw + start, d, center, d1, d2, &ahead)
        for q in range(g.n):
            k = g.klass[q]
            g.slot[k] = -1
            base = k * d
            for j in range(d):
                idx = base + j
                nb = bn[idx]
                if nb <= 0:
                    continue
                if n[idx] <= 0:
                    shift[idx] = center[idx]
                chan_merge(n + idx, shift + idx, mean + idx, m2 + idx, nb, shift[idx],
                           (center[idx] - shift[idx]) + d1[idx] / nb,
                           d2[idx] - d1[idx] * d1[idx] / nb)
        start = stop


cdef struct MomentScratch:
    # per thread: the accumulators (n, shift, mean, m2: 4 K d doubles), then the block's
    # scratch (n, center, d1, d2: 4 K d), the block's Groups, and a BLOCK x PANEL panel for
    # column-major X
    double *buf
    Py_ssize_t *group_buf   # per thread: first (BLOCK + 1), rows (BLOCK), slot (K)
    index_t *klass          # per thread: (BLOCK,)
    char *panels
    Py_ssize_t kd       # K * d: the length of one table
    Py_ssize_t K
    int n_threads


cdef int moment_scratch_init(MomentScratch *s, int n_threads, Py_ssize_t K,
                             Py_ssize_t d, bint fortran) except -1:
    cdef Py_ssize_t i
    s.n_threads, s.kd, s.K = n_threads, K * d, K
    s.buf = <double *> calloc(n_threads * 8 * s.kd, sizeof(double))
    s.group_buf = <Py_ssize_t *> malloc(n_threads * (2 * BLOCK + 1 + K) * sizeof(Py_ssize_t))
    s.klass = <index_t *> malloc(n_threads * BLOCK * sizeof(index_t))
    s.panels = <char *> calloc(n_threads * BLOCK * PANEL if fortran else 1, sizeof(double))
    if s.buf == NULL or s.group_buf == NULL or s.klass == NULL or s.panels == NULL:
        moment_scratch_free(s)
        raise MemoryError()
    for i in range(n_threads * (2 * BLOCK + 1 + K)):
        s.group_buf[i] = -1
    return 0


cdef Groups moment_groups(MomentScratch *s, int t) noexcept nogil:
    """Thread t's Groups in the scratch (its slots all -1: no class in the block yet)."""
    cdef Groups g
    cdef Py_ssize_t *base = s.group_buf + t * (2 * BLOCK + 1 + s.K)
    g.n, g.first, g.rows, g.slot = 0, base, base + BLOCK + 1, base + 2 * BLOCK + 1
    g.klass = s.klass + t * BLOCK
    return g


cdef void moment_scratch_free(MomentScratch *s) noexcept:
    free(s.buf)
    free(s.group_buf)
    free(s.klass)
    free(s.panels)
    s.buf, s.group_buf, s.klass, s.panels = NULL, NULL, NULL, NULL


def gaussian_moments(const floating[:, :] X, const index_t[::1] y, const double[::1] sw,
                     double[:, ::1] n, double[:, ::1] shift, double[:, ::1] mean,
                     double[:, ::1] m2, int n_threads=1):
    """Weighted count, mean and M2 per class (rows) and attribute (columns) of the non-NaN
    values of X, written to n, shift, mean, m2 (each (n_classes, d), overwritten): the mean
    of the values is shift + mean (0 + 0 where n = 0). X is C- or F-contiguous (read in
    place, the same bits either way). Trusted: 0 <= y_i < n_classes."""
    cdef Py_ssize_t N = X.shape[0], d = X.shape[1], K = n.shape[0], kd = K * d, idx
    cdef Py_ssize_t item = sizeof(floating)
    # a dimension of length 1 may have any stride: it does not decide the layout
    cdef bint c_order = (d == 1 or X.strides[1] == item) and (N == 1 or X.strides[0] == d * item)
    cdef bint fortran = not c_order and (N == 1 or X.strides[0] == item) and (
        d == 1 or X.strides[1] == N * item)
    if not (c_order or fortran):
        raise ValueError("X must be C- or F-contiguous")
    check_rows("y", y.shape[0], N)
    check_rows("sw", sw.shape[0], N)
    check_shape("n", n.shape[0], n.shape[1], K, d)
    check_shape("shift", shift.shape[0], shift.shape[1], K, d)
    check_shape("mean", mean.shape[0], mean.shape[1], K, d)
    check_shape("m2", m2.shape[0], m2.shape[1], K, d)
    cdef MomentScratch s
    cdef Groups g
    cdef int t, T
    cdef double *p
    cdef double *q
    if N == 0 or kd == 0:
        for name, table in (("n", n), ("shift", shift), ("mean", mean), ("m2", m2)):
            table[:, :] = 0.0
        return
    cdef const floating *data = &X[0, 0]
    moment_scratch_init(&s, fit_threads(N, n_threads), K, d, fortran)
    T = s.n_threads
    with nogil:
        for t in prange(T, num_threads=T, schedule="static"):
            p = s.buf + t * 8 * kd
            g = moment_groups(&s, t)
            moments_range(data, N, d, fortran, &y[0], &sw[0], split(N, T, t),
                          split(N, T, t + 1), K, p, p + 4 * kd, &g,
                          <floating *> (s.panels + t * BLOCK * PANEL * sizeof(double)))
        p = s.buf                             # thread 0's moments absorb the others, in order
        for t in range(1, T):
            q = s.buf + t * 8 * kd
            for idx in range(kd):
                chan_merge(p + idx, p + kd + idx, p + 2 * kd + idx, p + 3 * kd + idx,
                           q[idx], q[kd + idx], q[2 * kd + idx], q[3 * kd + idx])
        for idx in range(kd):
            n[idx // d, idx % d] = p[idx]
            shift[idx // d, idx % d] = p[kd + idx]
            mean[idx // d, idx % d] = p[2 * kd + idx]
            m2[idx // d, idx % d] = p[3 * kd + idx]
    moment_scratch_free(&s)


# ------------------------------------------------------------------------------- prediction
cdef inline void add_level(double *out_row, int c, Py_ssize_t j, const double *table,
                           const index_t *offsets, Py_ssize_t K) noexcept nogil:
    """out_row += the table row of code c of column j: its level's row, the unseen row for
    UNSEEN, nothing for MISSING."""
    cdef Py_ssize_t row, k
    if c == UNSEEN_CODE:
        row = offsets[j + 1] - 1
    elif c >= 0:
        row = offsets[j] + c
    else:
        return
    for k in range(K):
        out_row[k] += table[row * K + k]


cdef void check_jll_args(Py_ssize_t n, Py_ssize_t d, const double[:, ::1] table,
                         const index_t[::1] offsets, double[:, ::1] out) except *:
    check_rows("offsets", offsets.shape[0], d + 1)
    check_rows("table", table.shape[0], offsets[d])
    check_shape("out", out.shape[0], out.shape[1], n, table.shape[1])


def categorical_jll(const int[:, ::1] codes, const double[:, ::1] table,
                    const index_t[::1] offsets, double[:, ::1] out, int n_threads=1):
    """out[i, k] += sum over non-missing j of table[offsets[j] + codes[i, j], k].

    Each attribute's block of rows in `table` holds its v_j levels and then one row for a level
    unseen at fit (code UNSEEN); a missing cell (code MISSING) adds nothing. Trusted: a code
    c >= 0 of column j is below offsets[j + 1] - offsets[j] - 1."""
    cdef Py_ssize_t n = codes.shape[0], d = codes.shape[1], K = table.shape[1]
    check_jll_args(n, d, table, offsets, out)
    cdef Py_ssize_t chunk, i, j
    cdef Py_ssize_t n_chunks = (n + PRED_CHUNK - 1) // PRED_CHUNK
    if n == 0 or K == 0:
        return
    with nogil:
        for chunk in prange(n_chunks, num_threads=max(1, n_threads), schedule="static"):
            for i in range(chunk * PRED_CHUNK, min(n, (chunk + 1) * PRED_CHUNK)):
                for j in range(d):
                    add_level(&out[i, 0], codes[i, j], j, &table[0, 0], &offsets[0], K)


def categorical_jll_int(const int_t[:, ::1] X, const int64_t[::1] lo,
                        const index_t[::1] lut_offsets, const int[::1] lut,
                        const double[:, ::1] table, const index_t[::1] offsets,
                        double[:, ::1] out, int n_threads=1):
    """categorical_jll of the codes encode_int (fastml/_core/_encode.pyx) gives X, without
    writing them (a one-row predict is then one call, a batch one pass): the same rows added
    in the same order, so the same sums."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], K = table.shape[1]
    check_jll_args(n, d, table, offsets, out)
    check_rows("lo", lo.shape[0], d)
    check_rows("lut_offsets", lut_offsets.shape[0], d + 1)
    if lut.shape[0] < lut_offsets[d]:
        raise ValueError("lut is shorter than its offsets say")
    cdef Py_ssize_t chunk, i, j
    cdef Py_ssize_t n_chunks = (n + PRED_CHUNK - 1) // PRED_CHUNK
    cdef const int *lut_data = &lut[0] if lut.shape[0] else NULL  # empty: every cell UNSEEN
    if n == 0 or K == 0:
        return
    with nogil:
        for chunk in prange(n_chunks, num_threads=max(1, n_threads), schedule="static"):
            for i in range(chunk * PRED_CHUNK, min(n, (chunk + 1) * PRED_CHUNK)):
                for j in range(d):
                    add_level(&out[i, 0], lut_code(X[i, j], lo[j], &lut_offsets[j], lut_data),
                              j, &table[0, 0], &offsets[0], K)


cdef inline double gaussian_row(const floating *x, const double *mean, const double *a,
                                const double *b, Py_ssize_t d) noexcept nogil:
    """sum over non-NaN j of a[j] - b[j] (x[j] - mean[j])^2, in four interleaved partial sums
    (independent chains the compiler can pipeline and pair into SIMD lanes)."""
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, v, dev
    cdef Py_ssize_t j = 0
    while j + 4 <= d:
        v = x[j]
        dev = v - mean[j]
        s0 += a[j] - b[j] * dev * dev if v == v else 0.0
        v = x[j + 1]
        dev = v - mean[j + 1]
        s1 += a[j + 1] - b[j + 1] * dev * dev if v == v else 0.0
        v = x[j + 2]
        dev = v - mean[j + 2]
        s2 += a[j + 2] - b[j + 2] * dev * dev if v == v else 0.0
        v = x[j + 3]
        dev = v - mean[j + 3]
        s3 += a[j + 3] - b[j + 3] * dev * dev if v == v else 0.0
        j += 4
    while j < d:
        v = x[j]
        dev = v - mean[j]
        s0 += a[j] - b[j] * dev * dev if v == v else 0.0
        j += 1
    return (s0 + s1) + (s2 + s3)


def gaussian_jll(const floating[:, ::1] X, const double[:, ::1] mean, const double[:, ::1] a,
                 const double[:, ::1] b, double[:, ::1] out, int n_threads=1):
    """out[i, k] += sum over non-NaN j of a[k, j] - b[k, j] (X[i, j] - mean[k, j])^2."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], K = mean.shape[0]
    check_shape("mean", mean.shape[0], mean.shape[1], K, d)
    check_shape("a", a.shape[0], a.shape[1], K, d)
    check_shape("b", b.shape[0], b.shape[1], K, d)
    check_shape("out", out.shape[0], out.shape[1], n, K)
    cdef Py_ssize_t chunk, i, k
    cdef Py_ssize_t n_chunks = (n + PRED_CHUNK - 1) // PRED_CHUNK
    with nogil:
        for chunk in prange(n_chunks, num_threads=max(1, n_threads), schedule="static"):
            for i in range(chunk * PRED_CHUNK, min(n, (chunk + 1) * PRED_CHUNK)):
                for k in range(K):
                    out[i, k] += gaussian_row(&X[i, 0], &mean[k, 0], &a[k, 0], &b[k, 0], d)


# ------------------------------------------------------------------------- the posterior
# A one-row predict costs its Python calls, not its arithmetic: the log-sum-exp is one
# compiled call (fastml/_core/_posterior.pyx, shared with the linear classifiers), and these
# helpers save the rest.
def add_row(double[:, ::1] out, const double[::1] row):
    """out[i, k] += row[k] (out += row)."""
    cdef Py_ssize_t i, k
    check_rows("row", row.shape[0], out.shape[1])
    for i in range(out.shape[0]):
        for k in range(out.shape[1]):
            out[i, k] += row[k]


def argmax_rows(const double[:, ::1] jll, index_t[::1] best):
    """best[i] = np.argmax(jll[i]) (the first maximum; the first NaN if any); returns whether
    some value is -inf (the caller then looks for rows with probability 0)."""
    cdef Py_ssize_t i, k
    cdef double top
    cdef bint neg_inf = False
    check_rows("best", best.shape[0], jll.shape[0])
    if jll.shape[1] == 0:
        raise ValueError("jll has no columns")
    for i in range(jll.shape[0]):
        top = jll[i, 0]
        best[i] = 0
        for k in range(jll.shape[1]):
            neg_inf = neg_inf or jll[i, k] == -INFINITY
        if top != top:
            continue
        for k in range(1, jll.shape[1]):
            if not (jll[i, k] <= top):    # numpy's test: a NaN is a maximum and ends the row
                top = jll[i, k]
                best[i] = k
                if top != top:
                    break
    return neg_inf
