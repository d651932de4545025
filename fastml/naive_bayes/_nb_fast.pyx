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
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memset
from cython cimport floating

from .._core._encode cimport UNSEEN_CODE
from .._core._moments cimport chan_merge

cdef enum:
    BLOCK = 256        # rows per moment block: 256 x 100 float64 = 200 KB, stays in L2
    PRED_CHUNK = 1024  # rows per prediction task


cdef inline Py_ssize_t split(Py_ssize_t n, int parts, int t) noexcept nogil:
    """Start of part t of range(n) cut into `parts` contiguous, nearly equal parts."""
    return (n * t) // parts


def count_categories(const int[:, ::1] codes, const long long[::1] y, const double[::1] sw,
                     const long long[::1] offsets, double[:, ::1] counts, int n_threads=1):
    """counts[y_i, offsets[j] + codes[i, j]] += sw[i] for every non-missing cell (code >= 0).

    counts has shape (n_classes, offsets[d]); it is added to, not reset."""
    cdef Py_ssize_t n = codes.shape[0], d = codes.shape[1]
    cdef Py_ssize_t width = counts.shape[1], size = counts.shape[0] * counts.shape[1]
    cdef Py_ssize_t i, j, idx, lo, hi
    cdef int t, T = max(1, min(n_threads, <int> (n // 4096) + 1))
    cdef int c
    cdef double *tables = <double *> calloc(T * size, sizeof(double))
    cdef double *tab
    if tables == NULL:
        raise MemoryError()
    with nogil:
        for t in prange(T, num_threads=T, schedule="static"):
            tab = tables + t * size
            lo = split(n, T, t)
            hi = split(n, T, t + 1)
            for i in range(lo, hi):
                idx = y[i] * width
                for j in range(d):
                    c = codes[i, j]
                    if c >= 0:
                        tab[idx + offsets[j] + c] += sw[i]
        for t in range(T):
            tab = tables + t * size
            for idx in range(size):
                counts[idx // width, idx % width] += tab[idx]
    free(tables)


cdef void moments_range(const floating[:, ::1] X, const long long[::1] y, const double[::1] sw,
                        Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t K, double *acc,
                        double *blk, unsigned char *seen) noexcept nogil:
    """Merge rows lo..hi into acc = (n, shift, mean, m2) (4 arrays of K x d) block by block;
    blk = (n, center, d1, d2) is the block's scratch (4 arrays of K x d).

    A block is summed (pass 1), centered on its rounded mean c, and summed again while in
    cache (pass 2: d1 = sum w (x - c), d2 = sum w (x - c)^2); the corrected two-pass formula
    M2 = d2 - d1^2 / n then holds to rounding, and the block's mean relative to the running
    shift is (c - shift) + d1 / n."""
    cdef Py_ssize_t d = X.shape[1], kd = K * d, start, stop, i, j, k, base, idx
    cdef double w, x, dev, nb
    cdef const floating *row
    cdef double *n = acc
    cdef double *shift = acc + kd
    cdef double *mean = acc + 2 * kd
    cdef double *m2 = acc + 3 * kd
    cdef double *bn = blk
    cdef double *center = blk + kd
    cdef double *d1 = blk + 2 * kd
    cdef double *d2 = blk + 3 * kd
    start = lo
    while start < hi:
        stop = min(start + BLOCK, hi)
        for i in range(start, stop):          # pass 1: count and sum of the block
            k = y[i]
            w = sw[i]
            base = k * d
            if not seen[k]:
                seen[k] = 1
                memset(bn + base, 0, d * sizeof(double))
                memset(center + base, 0, d * sizeof(double))
                memset(d1 + base, 0, d * sizeof(double))
                memset(d2 + base, 0, d * sizeof(double))
            row = &X[i, 0]
            for j in range(d):                # branch-free (NaN adds 0) so it vectorizes
                x = row[j]
                bn[base + j] += w if x == x else 0.0
                center[base + j] += w * x if x == x else 0.0
        for k in range(K):                    # centers: the block means, rounded
            if seen[k]:
                base = k * d
                for j in range(d):
                    if bn[base + j] > 0:
                        center[base + j] /= bn[base + j]
        for i in range(start, stop):          # pass 2: deviations from the center, in cache
            base = y[i] * d
            w = sw[i]
            row = &X[i, 0]
            for j in range(d):
                x = row[j]
                dev = x - center[base + j] if x == x else 0.0
                d1[base + j] += w * dev
                d2[base + j] += w * dev * dev
        for k in range(K):
            if seen[k]:
                seen[k] = 0
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


def gaussian_moments(const floating[:, ::1] X, const long long[::1] y, const double[::1] sw,
                     double[:, ::1] n, double[:, ::1] shift, double[:, ::1] mean,
                     double[:, ::1] m2, int n_threads=1):
    """Weighted count, mean and M2 per class (rows) and attribute (columns) of the non-NaN
    values of X, written to n, shift, mean, m2 (each (n_classes, d), overwritten): the mean
    of the values is shift + mean (0 + 0 where n = 0)."""
    cdef Py_ssize_t N = X.shape[0], d = X.shape[1], K = n.shape[0], kd = K * d, idx
    cdef int t, T = max(1, min(n_threads, <int> (N // 4096) + 1))
    # per thread: the accumulators (4 K d), the block scratch (4 K d) and K seen flags
    cdef double *buf = <double *> calloc(T * 8 * kd, sizeof(double))
    cdef unsigned char *seen = <unsigned char *> calloc(T * K, 1)
    cdef double *p
    cdef double *q
    if buf == NULL or seen == NULL:
        free(buf)
        free(seen)
        raise MemoryError()
    with nogil:
        for t in prange(T, num_threads=T, schedule="static"):
            p = buf + t * 8 * kd
            moments_range(X, y, sw, split(N, T, t), split(N, T, t + 1), K, p, p + 4 * kd,
                          seen + t * K)
        p = buf                               # thread 0's moments absorb the others, in order
        for t in range(1, T):
            q = buf + t * 8 * kd
            for idx in range(kd):
                chan_merge(p + idx, p + kd + idx, p + 2 * kd + idx, p + 3 * kd + idx,
                           q[idx], q[kd + idx], q[2 * kd + idx], q[3 * kd + idx])
        for idx in range(kd):
            n[idx // d, idx % d] = p[idx]
            shift[idx // d, idx % d] = p[kd + idx]
            mean[idx // d, idx % d] = p[2 * kd + idx]
            m2[idx // d, idx % d] = p[3 * kd + idx]
    free(buf)
    free(seen)


def categorical_jll(const int[:, ::1] codes, const double[:, ::1] table,
                    const long long[::1] offsets, double[:, ::1] out, int n_threads=1):
    """out[i, k] += sum over non-missing j of table[offsets[j] + codes[i, j], k].

    Each attribute's block of rows in `table` holds its v_j levels and then one row for a level
    unseen at fit (code UNSEEN); a missing cell (code -1) adds nothing."""
    cdef Py_ssize_t n = codes.shape[0], d = codes.shape[1], K = table.shape[1]
    cdef Py_ssize_t chunk, i, j, k, row
    cdef Py_ssize_t n_chunks = (n + PRED_CHUNK - 1) // PRED_CHUNK
    cdef int c
    cdef const double *level
    with nogil:
        for chunk in prange(n_chunks, num_threads=max(1, n_threads), schedule="static"):
            for i in range(chunk * PRED_CHUNK, min(n, (chunk + 1) * PRED_CHUNK)):
                for j in range(d):
                    c = codes[i, j]
                    if c == UNSEEN_CODE:
                        row = offsets[j + 1] - 1
                    elif c >= 0:
                        row = offsets[j] + c
                    else:
                        continue
                    level = &table[row, 0]
                    for k in range(K):
                        out[i, k] += level[k]


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
    cdef Py_ssize_t chunk, i, k
    cdef Py_ssize_t n_chunks = (n + PRED_CHUNK - 1) // PRED_CHUNK
    with nogil:
        for chunk in prange(n_chunks, num_threads=max(1, n_threads), schedule="static"):
            for i in range(chunk * PRED_CHUNK, min(n, (chunk + 1) * PRED_CHUNK)):
                for k in range(K):
                    out[i, k] += gaussian_row(&X[i, 0], &mean[k, 0], &a[k, 0], &b[k, 0], d)
