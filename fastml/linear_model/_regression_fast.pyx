# Sufficient statistics of least squares (lecture 004, "Normal Equation" w = (X^T X)^-1 X^T y;
# 001's ridge adds lambda to the diagonal), in one read of X.
#
# What it computes: G += Z^T Z for the augmented, shifted, weighted rows
#     z_i = sqrt(sw_i) * [x_i - x_shift, 1, y_i - y_shift]          (length p = d + 1 + K)
# so one symmetric rank-k update (BLAS dsyrk) yields every statistic at once: the scatter
# sum w (x-s)(x-s)^T, the sums sum w (x-s) and sum w, the cross products sum w (x-s)(y-t)^T and
# sum w (y-t)(y-t)^T. Rows are copied block by block into a small double buffer (the block stays
# in cache while dsyrk reads it), which is where the shift, the weights, the constant column and
# the targets are folded in, and float32 input is widened to double (statistics are always
# accumulated in double). The shift (a rough mean, e.g. of the first rows) keeps the later
# centering free of cancellation when the features have large means.
#
# Loop invariant (between blocks): G = sum over the rows of the blocks done so far of z_i z_i^T
# (the lower triangle in C order; the upper triangle is mirrored at the end of the call).
from libc.math cimport sqrt
from libc.stdlib cimport malloc, free
from cython cimport floating
from cython.parallel cimport prange
from libc.string cimport memset
from scipy.linalg.cython_blas cimport dsyrk


cdef void fill_block(const floating[:, ::1] X, const double[:, ::1] Y, const double[::1] sw,
                     const double[::1] x_shift, const double[::1] y_shift, Py_ssize_t start,
                     Py_ssize_t stop, Py_ssize_t q, double *Z) noexcept nogil:
    """Z[r - start] = sqrt(sw_r) [x_r - x_shift, 1, y_r - y_shift, 0...] (q values) for r in
    [start, stop)."""
    cdef Py_ssize_t d = X.shape[1], K = Y.shape[1], r, j
    cdef bint weighted = sw.shape[0] > 0
    cdef double s
    cdef double *z
    for r in range(start, stop):
        z = Z + (r - start) * q
        s = sqrt(sw[r]) if weighted else 1.0
        for j in range(d):
            z[j] = s * (X[r, j] - x_shift[j])
        z[d] = s
        for j in range(K):
            z[d + 1 + j] = s * (Y[r, j] - y_shift[j])
        for j in range(d + 1 + K, q):
            z[j] = 0.0


cdef void gram_rows(const floating[:, ::1] X, const double[:, ::1] Y, const double[::1] sw,
                    const double[::1] x_shift, const double[::1] y_shift, Py_ssize_t start,
                    Py_ssize_t stop, Py_ssize_t block_rows, Py_ssize_t q, double *Z,
                    double *G) noexcept nogil:
    """G (q, q) += Z^T Z over rows [start, stop), block by block through the buffer Z."""
    cdef int p = <int> q, m
    cdef Py_ssize_t s
    cdef double one = 1.0
    cdef char uplo = b'U', trans = b'N'
    while start < stop:
        s = min(start + block_rows, stop)
        fill_block(X, Y, sw, x_shift, y_shift, start, s, q, Z)
        m = <int> (s - start)
        # Z is a C-order (m, p) block, i.e. a Fortran (p, m) matrix A: A A^T = Z^T Z.
        # G in C order is a Fortran matrix too (symmetric): Fortran 'U' = our lower triangle.
        dsyrk(&uplo, &trans, &p, &m, &one, Z, &p, &one, G, &p)
        start = s


def gram_accumulate(const floating[:, ::1] X, const double[:, ::1] Y, const double[::1] sw,
                    const double[::1] x_shift, const double[::1] y_shift, double[:, ::1] G,
                    Py_ssize_t block_rows=4096, int n_threads=1):
    """G += Z^T Z over all rows of X (see the module note); sw of length 0 means unit weights.
    G is (q, q) with q >= p = n_features + 1 + n_targets (zero padding: OpenBLAS's dsyrk runs
    ~10% faster when q is a multiple of 8) and is returned symmetric. n_threads > 1
    splits the rows into contiguous parts with private buffers and Gram matrices (call it with
    BLAS itself single-threaded); 1 leaves the threading to BLAS."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], K = Y.shape[1]
    cdef Py_ssize_t p = d + 1 + K, q = G.shape[0], i, j, t
    if Y.shape[0] != n or q < p or G.shape[1] != q or x_shift.shape[0] != d \
            or y_shift.shape[0] != K or (sw.shape[0] != 0 and sw.shape[0] != n):
        raise ValueError("gram_accumulate: inconsistent shapes")
    block_rows = max(1, min(block_rows, n))
    n_threads = <int> max(1, min(n_threads, (n + block_rows - 1) // block_rows))
    cdef double *Z = <double *> malloc(n_threads * block_rows * q * sizeof(double))
    cdef double *parts = <double *> malloc(n_threads * q * q * sizeof(double))
    if Z == NULL or parts == NULL:
        free(Z)
        free(parts)
        raise MemoryError()
    with nogil:
        memset(parts, 0, n_threads * q * q * sizeof(double))
        for t in prange(n_threads, num_threads=n_threads, schedule="static"):
            gram_rows(X, Y, sw, x_shift, y_shift, n * t // n_threads, n * (t + 1) // n_threads,
                      block_rows, q, Z + t * block_rows * q, parts + t * q * q)
        for t in range(n_threads):
            for i in range(q):
                for j in range(i + 1):
                    G[i, j] += parts[t * q * q + i * q + j]
        for i in range(q):
            for j in range(i + 1, q):
                G[i, j] = G[j, i]
    free(Z)
    free(parts)
    return G
