# Binning for splitter="hist": X, dense or sparse, once per fit (a forest's trees share it) as
# uint8 bin codes and the ends of each bin; the histogram builder (_hist_fast.pyx) reads them.
#
# A real column of at most max_bins distinct values gets one bin per value; a longer one gets
# equal-frequency (quantile) bins from a sorted sample of at most BIN_SAMPLE rows. NaN is the
# missing bin (255). Categorical columns (dense X only) keep their level codes as bins. Each
# bin has ends lo, hi: its value (a bin per value), or the edges around it.
#
# Sparse X (CSR / CSC) is binned from its nonzeros, never densified: a column's distinct
# values are its stored values plus 0 when some row does not store one, and its sample is
# the stored values of the sampled rows plus one run of zeros for the rest (quantile edges
# over runs of equal values, quantile_edges_runs, which place the edges quantile_edges
# places over the same sorted values). So a sparse column gets the bins the same column gets
# dense, and its rows the same codes. The codes are kept in CSR form, and only the entries
# whose code is not the bin of 0.0 (zero_bin): the rows a column does not list are in that
# bin, and the builder counts them as the node's total minus the other bins (as LightGBM
# does), so its histograms cost the node's nonzeros, not rows x columns.
from libc.math cimport isnan, NAN, INFINITY
from libc.stdlib cimport malloc, free, qsort
from libc.string cimport memcpy, memmove
from libc.stdint cimport uint8_t, int32_t, int64_t

import numpy as np

from cython.parallel cimport prange, threadid

from ._grow cimport split_point

cdef extern from "fastml_bin.h" nogil:
    int FASTML_BIN_MISSING
    void fastml_bin_column(const double *X, Py_ssize_t stride, Py_ssize_t n,
                           const double *edges, uint8_t *codes) noexcept

cdef enum:
    SLOTS = 256          # bins 0..254, then the missing bin
    MISSING = 255        # the bin code of NaN (and of a missing categorical level)
    EDGES = 255          # edges per dense column while binning (padded with +inf)

# The largest max_bins: codes 0..254 leave 255 for the missing bin in a uint8.
MAX_BINS = 255
MISSING_BIN = MISSING
if FASTML_BIN_MISSING != MISSING:  # the C binning writes the missing code the builder reads
    raise ImportError("csrc/fastml_bin.h's FASTML_BIN_MISSING differs from MISSING")
# Rows sampled to place the quantile edges of a column of more than max_bins values: ~200
# sample values per bin at 255 bins (LightGBM samples 200,000; sorting them costs more than
# the whole tree search on a few hundred thousand rows, for edges a fraction of a bin apart).
BIN_SAMPLE = 50_000


cdef class Binned:
    """X binned once per fit (a forest's trees share it; read-only).

    Attributes
    ----------
    bins : ndarray of uint8, shape (n_features, n_samples), or None (sparse X)
        Column-major bin codes (255 = missing).
    indptr, indices, codes : ndarrays (int64, int32, uint8), or None (dense X)
        Sparse X: the codes in CSR form, only the entries whose code is not zero_bin[f].
    zero_bin : ndarray of uint8, shape (n_features,), or None (dense X)
        Sparse X: the bin of 0.0 in each column (that of every row it does not list).
    lo, hi : ndarrays of float64
        The ends of the bins of a real column f, at bin_start[f] + 0 .. n_bins[f] - 1: its
        value (lo = hi) when every value has a bin, else the edges around it (lo <= x < hi;
        -inf / +inf at the ends). A cut between bins g < g' gets the threshold
        split_point(hi[g], lo[g']), which every training value of g lies below and every one
        of g' at or above.
    bin_start : ndarray of int64, shape (n_features + 1,)
    n_bins : ndarray of int32, shape (n_features,)
        Bins of each column (its levels, for a categorical one).
    """
    cdef readonly object bins, indptr, indices, codes, zero_bin, lo, hi, bin_start, n_bins

    def __init__(self, n_bins, lo, hi, bin_start, bins=None, indptr=None, indices=None,
                 codes=None, zero_bin=None):
        self.bins, self.lo, self.hi, self.n_bins = bins, lo, hi, n_bins
        self.bin_start = bin_start
        self.indptr, self.indices, self.codes, self.zero_bin = indptr, indices, codes, zero_bin
        for a in (bins, indptr, indices, codes, zero_bin, lo, hi, bin_start, n_bins):
            if a is not None:
                a.flags.writeable = False

    @property
    def sparse(self):
        return self.bins is None

    @property
    def n_features(self):
        return len(self.n_bins)

    def ends(self, f):
        """(lo, hi): the ends of column f's bins, n_bins[f] each."""
        start = self.bin_start[f]
        return self.lo[start:start + self.n_bins[f]], self.hi[start:start + self.n_bins[f]]


# ---------------------------------------------------------------- edges

cdef int distinct_values(const double *col, Py_ssize_t n, Py_ssize_t stride, int max_bins,
                         double *out) noexcept nogil:
    """The sorted distinct non-missing values of col into out[0:k]; k, or -1 as soon as there
    are more than max_bins (a continuous column stops after about max_bins rows)."""
    cdef Py_ssize_t i
    cdef int k = 0, a, b, mid
    cdef double v, last = NAN
    for i in range(n):
        v = col[i * stride]
        if isnan(v) or v == last:  # runs of one value are common in low-cardinality columns
            continue
        last = v
        a = 0
        b = k
        while a < b:
            mid = (a + b) >> 1
            if out[mid] < v:
                a = mid + 1
            else:
                b = mid
        if a < k and out[a] == v:
            continue
        if k == max_bins:
            return -1
        memmove(out + a + 1, out + a, (k - a) * sizeof(double))
        out[a] = v
        k += 1
    return k


cdef int quantile_edges(const double *v, Py_ssize_t s, int max_bins, double *edges) noexcept nogil:
    """Equal-frequency edges over the sorted sample v[0:s]: each edge falls between two
    distinct values, the next one a 1/(bins left) share of the rest further on, so a heavy
    value takes one bin and the others are shared out again. Returns the number of edges."""
    cdef Py_ssize_t last = 0, pos
    cdef int n_edges = 0
    while n_edges < max_bins - 1:
        pos = last + (s - last) // (max_bins - n_edges)
        if pos < last + 1:
            pos = last + 1
        while pos < s and v[pos - 1] == v[pos]:
            pos += 1
        if pos >= s:
            break
        edges[n_edges] = split_point(v[pos - 1], v[pos])
        n_edges += 1
        last = pos
    return n_edges


cdef int quantile_edges_runs(const double *values, const Py_ssize_t *ends, int n_runs,
                             int max_bins, double *edges) noexcept nogil:
    """quantile_edges over the sorted sample given as runs: values[r] repeated up to position
    ends[r] (exclusive; ends[n_runs - 1] = s). The same walk: a position inside a run moves
    to the run's end, the edge falls between that run's value and the next one's."""
    cdef Py_ssize_t last = 0, pos, s = ends[n_runs - 1] if n_runs > 0 else 0
    cdef int n_edges = 0, r = 0
    while n_edges < max_bins - 1:
        pos = last + (s - last) // (max_bins - n_edges)
        if pos < last + 1:
            pos = last + 1
        while r < n_runs and ends[r] <= pos - 1:   # the run of position pos - 1
            r += 1
        if r >= n_runs or ends[r] >= s:
            break
        pos = ends[r]
        edges[n_edges] = split_point(values[r], values[r + 1])
        n_edges += 1
        last = pos
    return n_edges


cdef inline int count_le(const double *edges, int n_edges, double v) noexcept nogil:
    """The bin code of v: how many of the sorted edges are <= v (NaN: the missing bin)."""
    cdef int a = 0, b = n_edges, mid
    if isnan(v):
        return MISSING
    while a < b:
        mid = (a + b) >> 1
        if edges[mid] <= v:
            a = mid + 1
        else:
            b = mid
    return a


# ---------------------------------------------------------------- dense X

cdef void bin_rows(const double *X, Py_ssize_t i0, Py_ssize_t i1, Py_ssize_t d, Py_ssize_t n,
                   const double *edges, const unsigned char *is_cat,
                   uint8_t *bins) noexcept nogil:
    """Bin codes of rows [i0, i1) of the row-major X into the column-major bins: for a real
    feature, the number of edges <= x (x < edge <=> bin <= the edge's index; csrc's
    fastml_bin_column). Feature by feature over a block of rows that stays in cache."""
    cdef Py_ssize_t i, f
    cdef double v
    for f in range(d):
        if not is_cat[f]:
            fastml_bin_column(X + i0 * d + f, d, i1 - i0, edges + f * EDGES, bins + f * n + i0)
            continue
        for i in range(i0, i1):
            v = X[i * d + f]
            # a level code 0..254 (checked by bin_features), or NaN: the missing bin
            bins[f * n + i] = MISSING if isnan(v) else <uint8_t> v


def check_binning(int d, int max_bins, int n_threads, is_categorical=None, n_levels=None):
    if not 2 <= max_bins <= MAX_BINS:
        raise ValueError(f"max_bins must be an integer in [2, {MAX_BINS}]; got {max_bins}")
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1; got {n_threads}")
    if is_categorical is not None:
        for f in np.flatnonzero((np.asarray(is_categorical) != 0) &
                                (np.asarray(n_levels) > MAX_BINS)):
            raise ValueError(
                f"splitter='hist' takes categorical columns of at most {MAX_BINS} levels; "
                f"column {f} has {n_levels[f]} (use splitter='best' for it)")


def sample_rows(Py_ssize_t n):
    """The rows whose values place the quantile edges: all of them, or BIN_SAMPLE drawn with
    a fixed seed (the same rows for dense and sparse X)."""
    if n <= BIN_SAMPLE:
        return np.arange(n)
    return np.sort(np.random.default_rng(0).choice(n, BIN_SAMPLE, replace=False))


def ragged_ends(lo2, hi2, n_bins):
    """The (n_features, SLOTS) ends as Binned's ragged lo, hi and bin_start."""
    bin_start = np.zeros(len(n_bins) + 1, dtype=np.int64)
    np.cumsum(n_bins, out=bin_start[1:])
    keep = np.arange(SLOTS)[None, :] < np.asarray(n_bins)[:, None]
    return (np.ascontiguousarray(lo2[keep]), np.ascontiguousarray(hi2[keep]), bin_start)


def bin_features(const double[:, ::1] X, const unsigned char[::1] is_categorical,
                 const int[::1] n_levels, int max_bins=MAX_BINS, int n_threads=1):
    """Bin the columns of a dense X for splitter="hist" (once per fit).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float64, C-contiguous
        The encoded columns (NaN = missing; categorical columns as level codes).
    is_categorical : ndarray of uint8, shape (n_features,)
    n_levels : ndarray of int32, shape (n_features,)
        Levels of each categorical column (at most 255).
    max_bins : int in [2, 255], default=255
        Bins of a real column (missing values get a bin of their own besides).
    n_threads : int, default=1
        Threads that bin blocks of rows.

    Returns
    -------
    Binned

    Examples
    --------
    >>> X = np.array([[3.0], [1.0], [np.nan], [1.0], [7.0]])
    >>> b = bin_features(X, np.zeros(1, np.uint8), np.zeros(1, np.int32))
    >>> b.bins.tolist(), b.n_bins.tolist(), b.ends(0)[1].tolist()
    ([[1, 0, 255, 0, 2]], [3], [1.0, 3.0, 7.0])
    """
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], f, blk, n_blocks
    if is_categorical.shape[0] != d or n_levels.shape[0] != d:
        raise ValueError("bin_features: the arrays' shapes do not match")
    check_binning(d, max_bins, n_threads, is_categorical, n_levels)
    if n == 0 or d == 0:
        raise ValueError("bin_features: X is empty")
    bins_a = np.empty((d, n), dtype=np.uint8)
    edges_a = np.zeros((d, MAX_BINS), dtype=np.float64)
    n_edges_a = np.full(d, -1, dtype=np.int32)
    lo_a = np.full((d, SLOTS), np.nan)
    hi_a = np.full((d, SLOTS), np.nan)
    cdef uint8_t[:, ::1] bins = bins_a
    cdef double[:, ::1] edges = edges_a, lo = lo_a, hi = hi_a
    cdef int[::1] n_edges = n_edges_a
    cdef int k
    with nogil:  # columns of at most max_bins values: one bin per value
        for f in prange(d, num_threads=n_threads, schedule="dynamic"):
            if not is_categorical[f]:
                k = distinct_values(&X[0, f], n, d, max_bins, &edges[f, 0])
                if k >= 0:  # each bin is one value: lo = hi = it
                    memcpy(&lo[f, 0], &edges[f, 0], k * sizeof(double))
                    memcpy(&hi[f, 0], &edges[f, 0], k * sizeof(double))
                    n_edges[f] = quantile_edges(&edges[f, 0], k, k, &edges[f, 0]) \
                        if k > 1 else 0
    many = np.flatnonzero((n_edges_a < 0) & (np.asarray(is_categorical) == 0))
    if len(many):  # the rest: quantile edges of a sorted sample (numpy's sort)
        sample = np.ascontiguousarray(np.take(np.asarray(X), sample_rows(n), axis=0)[:, many].T)
        sample.sort(axis=1)  # NaN last
        quantiles(sample, many.astype(np.intp), max_bins, edges_a, n_edges_a)
        for f in many:  # a bin is [lo, hi) between its edges
            set_quantile_ends(lo_a[f], hi_a[f], edges_a[f], n_edges_a[f])
    for f in range(d):  # pad past the last edge: bin_rows' search reads all 255
        edges_a[f, max(n_edges_a[f], 0):] = np.inf
    n_blocks = (n + 1023) // 1024
    with nogil:
        for blk in prange(n_blocks, num_threads=n_threads, schedule="static"):
            bin_rows(&X[0, 0], blk * 1024, min(n, blk * 1024 + 1024), d, n, &edges[0, 0],
                     &is_categorical[0], &bins[0, 0])
    n_bins = np.where(np.asarray(is_categorical) != 0, np.asarray(n_levels),
                      np.maximum(n_edges_a, 0) + 1).astype(np.int32)
    lo_r, hi_r, bin_start = ragged_ends(lo_a, hi_a, n_bins)
    return Binned(n_bins, lo_r, hi_r, bin_start, bins=bins_a)


def set_quantile_ends(lo, hi, edges, k):
    """A column of quantile bins: bin g is [edges[g - 1], edges[g]), -inf / +inf at the ends."""
    lo[0], hi[k] = -np.inf, np.inf
    lo[1:k + 1] = edges[:k]
    hi[:k] = edges[:k]


cdef void quantiles(const double[:, ::1] sample, const Py_ssize_t[::1] features, int max_bins,
                    double[:, ::1] edges, int[::1] n_edges) noexcept:
    """Quantile edges of each listed feature from its sorted sample row (NaN last)."""
    cdef Py_ssize_t i, s
    with nogil:
        for i in range(features.shape[0]):
            s = sample.shape[1]
            while s > 0 and isnan(sample[i, s - 1]):
                s -= 1
            n_edges[features[i]] = quantile_edges(&sample[i, 0], s, max_bins,
                                                  &edges[features[i], 0]) if s > 0 else 0


# ---------------------------------------------------------------- sparse X

cdef int by_value(const void *a, const void *b) noexcept nogil:
    cdef double x = (<const double *> a)[0], y = (<const double *> b)[0]
    return -1 if x < y else (1 if x > y else 0)


cdef int sorted_runs(double *v, Py_ssize_t n_values, Py_ssize_t n_zeros, double *values,
                     Py_ssize_t *ends) noexcept nogil:
    """The runs of the sorted multiset v[0:n_values] (non-missing, nonzero; sorted here in
    place) plus n_zeros zeros: their distinct values and end positions. Returns the number of
    runs."""
    cdef Py_ssize_t i, pos = 0
    cdef int r = 0, zeros_done = n_zeros == 0
    qsort(v, n_values, sizeof(double), by_value)
    for i in range(n_values + 1):
        if not zeros_done and (i == n_values or v[i] > 0.0):
            values[r] = 0.0
            pos += n_zeros
            ends[r] = pos
            r += 1
            zeros_done = 1
        if i == n_values:
            break
        if r > 0 and values[r - 1] == v[i]:
            pos += 1
            ends[r - 1] = pos
        else:
            values[r] = v[i]
            pos += 1
            ends[r] = pos
            r += 1
    return r


cdef int column_runs(const double *val, const int32_t *row, Py_ssize_t nnz, Py_ssize_t n_rows,
                     const uint8_t *in_sample, Py_ssize_t n_sample, double *scratch,
                     double *values, Py_ssize_t *ends) noexcept nogil:
    """The runs of a sparse column's values over the rows of the sample (in_sample NULL: all
    n_rows rows): its stored values there (NaN left out, zeros counted as zeros) and a zero
    for every sampled row it does not store. Returns the number of runs."""
    cdef Py_ssize_t i, kept = 0, stored = 0, n_zeros
    cdef double v
    for i in range(nnz):
        if in_sample != NULL and not in_sample[row[i]]:
            continue
        stored += 1
        v = val[i]
        if isnan(v):
            continue
        if v == 0.0:
            continue
        scratch[kept] = v
        kept += 1
    n_zeros = (n_sample if in_sample != NULL else n_rows) - stored
    for i in range(nnz):                 # stored zeros are zeros too
        if (in_sample == NULL or in_sample[row[i]]) and val[i] == 0.0:
            n_zeros += 1
    return sorted_runs(scratch, kept, n_zeros, values, ends)


cdef void sparse_column_edges(const double *val, const int32_t *row, Py_ssize_t nnz,
                              Py_ssize_t n_rows, const uint8_t *in_sample,
                              Py_ssize_t n_sample, int max_bins, double *scratch,
                              double *values, Py_ssize_t *ends, double *edges, double *lo,
                              double *hi, int *n_bins) noexcept nogil:
    """Column f's bins from its nonzeros, as bin_features makes them for the dense column:
    one per distinct value (its runs over all rows) when there are at most max_bins, else
    quantile bins of the runs over the sampled rows. Fills edges, lo, hi (n_bins[0] each)."""
    cdef int r, k
    r = column_runs(val, row, nnz, n_rows, NULL, n_rows, scratch, values, ends)
    if r <= max_bins:
        memcpy(lo, values, r * sizeof(double))
        memcpy(hi, values, r * sizeof(double))
        k = quantile_edges(values, r, r, edges) if r > 1 else 0
        n_bins[0] = max(r, 1)
        if r == 0:          # every value missing: one (empty) bin, as a dense column gets
            lo[0] = hi[0] = NAN
        return
    r = column_runs(val, row, nnz, n_rows, in_sample, n_sample, scratch, values, ends)
    k = quantile_edges_runs(values, ends, r, max_bins, edges)
    lo[0] = -INFINITY
    hi[k] = INFINITY
    memcpy(lo + 1, edges, k * sizeof(double))
    memcpy(hi, edges, k * sizeof(double))
    n_bins[0] = k + 1


def bin_sparse(X, int max_bins=MAX_BINS, int n_threads=1):
    """Bin a sparse X (scipy CSR or CSC, float64, NaN = missing) for splitter="hist" from its
    nonzeros: the bins and codes bin_features gives the dense X, the codes as CSR entries
    off each column's zero bin (see the module comment).

    Parameters
    ----------
    X : scipy.sparse matrix of shape (n_samples, n_features), float64, canonical
    max_bins : int in [2, 255], default=255
    n_threads : int, default=1

    Returns
    -------
    Binned

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> X = sp.csr_matrix(np.array([[3.0, 0.0], [0.0, 0.0], [np.nan, 1.0], [3.0, 0.0]]))
    >>> b = bin_sparse(X)
    >>> b.n_bins.tolist(), b.zero_bin.tolist(), b.ends(0)[0].tolist()
    ([2, 2], [0, 0], [0.0, 3.0])
    >>> b.indptr.tolist(), b.indices.tolist(), b.codes.tolist()
    ([0, 1, 1, 3, 4], [0, 0, 1, 0], [1, 255, 1, 1])
    """
    n, d = X.shape
    check_binning(d, max_bins, n_threads)
    if n == 0 or d == 0:
        raise ValueError("bin_sparse: X is empty")
    Xc = X.tocsc()
    col_ptr = np.ascontiguousarray(Xc.indptr, dtype=np.int64)
    col_row = np.ascontiguousarray(Xc.indices, dtype=np.int32)
    col_val = np.ascontiguousarray(Xc.data, dtype=np.float64)
    rows = sample_rows(n)
    in_sample_a = np.zeros(n, dtype=np.uint8)
    in_sample_a[rows] = 1
    counts = np.diff(col_ptr)
    longest = int(counts.max()) if d else 0
    cap = np.minimum(counts + 1, max_bins + 1).astype(np.int64)   # runs are at most nnz + 1
    bin_start_a = np.zeros(d + 1, dtype=np.int64)
    np.cumsum(cap, out=bin_start_a[1:])
    lo_a = np.full(bin_start_a[d], np.nan)
    hi_a = np.full(bin_start_a[d], np.nan)
    edges_a = np.full(bin_start_a[d], np.inf)
    n_bins_a = np.ones(d, dtype=np.int32)
    zero_a = np.zeros(d, dtype=np.uint8)
    cdef const int64_t[::1] cp = col_ptr
    cdef const int32_t[::1] cr = col_row
    cdef const double[::1] cv = col_val
    cdef const uint8_t[::1] in_sample = in_sample_a
    cdef const int64_t[::1] start = bin_start_a
    cdef double[::1] lo = lo_a, hi = hi_a, edges = edges_a
    cdef int[::1] n_bins = n_bins_a
    cdef uint8_t[::1] zero_bin = zero_a
    cdef Py_ssize_t f, width = longest + 2, n_sample = len(rows), nn = n, dd = d
    cdef int t, nt = max(1, min(n_threads, d))
    cdef const double *vp = &cv[0] if cv.shape[0] else NULL
    cdef const int32_t *rp = &cr[0] if cr.shape[0] else NULL
    cdef double *scratch = <double *> malloc(nt * 2 * width * sizeof(double))
    cdef Py_ssize_t *ends = <Py_ssize_t *> malloc(nt * width * sizeof(Py_ssize_t))
    cdef double *values
    if scratch == NULL or ends == NULL:
        free(scratch)
        free(ends)
        raise MemoryError("no memory to bin the sparse columns")
    try:
        with nogil:
            for f in prange(dd, num_threads=nt, schedule="dynamic"):
                t = threadid()
                values = scratch + (2 * t + 1) * width
                sparse_column_edges(vp + cp[f], rp + cp[f], cp[f + 1] - cp[f], nn,
                                    &in_sample[0], n_sample, max_bins, scratch + 2 * t * width,
                                    values, ends + t * width, &edges[0] + start[f],
                                    &lo[0] + start[f], &hi[0] + start[f], &n_bins[f])
                zero_bin[f] = <uint8_t> count_le(&edges[0] + start[f], n_bins[f] - 1, 0.0)
    finally:
        free(scratch)
        free(ends)
    indptr, indices, codes = sparse_codes(X.tocsr(), edges_a, bin_start_a, n_bins_a, zero_a,
                                          n_threads)
    return Binned(n_bins_a, lo_a, hi_a, bin_start_a, indptr=indptr, indices=indices,
                  codes=codes, zero_bin=zero_a)


def sparse_codes(Xr, const double[::1] edges, const int64_t[::1] bin_start,
                 const int[::1] n_bins, const uint8_t[::1] zero_bin, int n_threads):
    """The bin codes of a CSR X's entries, in CSR form, leaving out those in their column's
    zero bin: two passes over the rows (count, then fill)."""
    cdef Py_ssize_t n = Xr.shape[0], i
    cdef const int32_t[::1] ind = np.ascontiguousarray(Xr.indices, dtype=np.int32)
    cdef const int64_t[::1] ptr = np.ascontiguousarray(Xr.indptr, dtype=np.int64)
    cdef const double[::1] val = np.ascontiguousarray(Xr.data, dtype=np.float64)
    kept_a = np.zeros(n + 1, dtype=np.int64)
    cdef int64_t[::1] kept = kept_a
    if ind.shape[0] == 0:
        return kept_a, np.zeros(0, np.int32), np.zeros(0, np.uint8)
    with nogil:
        for i in prange(n, num_threads=n_threads, schedule="static"):
            kept[i + 1] = row_codes(&ind[0], &val[0], ptr[i], ptr[i + 1], &edges[0],
                                    &bin_start[0], &n_bins[0], &zero_bin[0], NULL, NULL)
    indptr_a = np.cumsum(kept_a)
    indices_a = np.empty(indptr_a[n], dtype=np.int32)
    codes_a = np.empty(indptr_a[n], dtype=np.uint8)
    cdef const int64_t[::1] out_ptr = indptr_a
    cdef int32_t[::1] out_ind = indices_a
    cdef uint8_t[::1] out_code = codes_a
    if indptr_a[n] > 0:
        with nogil:
            for i in prange(n, num_threads=n_threads, schedule="static"):
                row_codes(&ind[0], &val[0], ptr[i], ptr[i + 1], &edges[0], &bin_start[0],
                          &n_bins[0], &zero_bin[0], &out_ind[0] + out_ptr[i],
                          &out_code[0] + out_ptr[i])
    return indptr_a, indices_a, codes_a


cdef Py_ssize_t row_codes(const int32_t *ind, const double *val, int64_t p0, int64_t p1,
                          const double *edges, const int64_t *bin_start, const int *n_bins,
                          const uint8_t *zero_bin, int32_t *out_ind,
                          uint8_t *out_code) noexcept nogil:
    """The entries p0..p1 of a row off their column's zero bin: their number, and (out_ind
    not NULL) their columns and codes."""
    cdef int64_t p
    cdef Py_ssize_t k = 0
    cdef int f, code
    for p in range(p0, p1):
        f = ind[p]
        code = count_le(edges + bin_start[f], n_bins[f] - 1, val[p])
        if code == zero_bin[f]:
            continue
        if out_ind != NULL:
            out_ind[k] = f
            out_code[k] = <uint8_t> code
        k += 1
    return k
