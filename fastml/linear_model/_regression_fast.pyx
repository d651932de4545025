# Sufficient statistics of least squares (lecture 004, "Normal Equation" w = (X^T X)^-1 X^T y;
# 001's ridge adds its penalty to the diagonal), in one read of X. The driver is
# fastml/linear_model/_regression.py (LinearStats.from_data).
#
# What it computes: G += Z^T Z for the augmented, shifted, weighted rows
#     z_i = sqrt(sw_i) * [x_i - x_shift, 1, y_i - y_shift]          (length p = d + 1 + K)
# so one symmetric rank-k update (BLAS dsyrk) yields every statistic at once: the scatter
# sum w (x-s)(x-s)^T, the sums sum w (x-s) and sum w, the cross products sum w (x-s)(y-t)^T and
# sum w (y-t)(y-t)^T. Rows are copied block by block into a small double buffer (the block stays
# in cache while dsyrk reads it; from a column-major X the block is copied column by column and
# stored column-major), which is where the shift, the weights, the constant column and
# the targets are folded in, and float32 input is widened to double (statistics are always
# accumulated in double). The shift (a rough mean, e.g. of the first rows) keeps the later
# centering free of cancellation when the features have large means.
#
# Loop invariant (between blocks): G = sum over the rows of the blocks done so far of z_i z_i^T
# (the lower triangle in C order; the upper triangle is mirrored at the end of the call).
#
# Contract (fastml/_core/__init__.py): shapes are checked at entry; values are trusted (the
# driver finds NaN / inf from G itself). The buffer walks are raw pointers, so their indices are
# checked by fastml_check_index in the debug build.
from libc.math cimport isfinite, sqrt
from libc.stdlib cimport malloc, calloc, free
from cython cimport floating
from cython.parallel cimport prange
from scipy.linalg.cython_blas cimport dsyrk

from .._core._csrc cimport fastml_check_index
from .._core._typedefs cimport index_t

# G's side is padded to a multiple of GRAM_PAD with zero columns: OpenBLAS's dsyrk runs ~10%
# faster on 1M x 100 when the matrix side is a multiple of 8 (its register-block width).
GRAM_PAD = 8
# Rows per block: a block of BLOCK_BYTES (2 MiB, the per-core L2 of current x86 parts) stays in
# cache between fill_block writing it and dsyrk reading it; at least MIN_BLOCK_ROWS so that
# dsyrk's rank-k update is a BLAS-3 call and not a series of rank-1 updates, at most
# MAX_BLOCK_ROWS (past it a bigger block gains nothing measurable).
BLOCK_BYTES = 2 << 20
MIN_BLOCK_ROWS = 64
MAX_BLOCK_ROWS = 4096


def padded_size(Py_ssize_t p):
    """The side of G for p statistics: p rounded up to a multiple of GRAM_PAD."""
    return -(-p // GRAM_PAD) * GRAM_PAD


def block_rows_for(Py_ssize_t q):
    """Rows per block for a Gram matrix of side q (see BLOCK_BYTES)."""
    return int(min(MAX_BLOCK_ROWS, max(MIN_BLOCK_ROWS, BLOCK_BYTES // (8 * q))))


cdef struct GramScratch:
    # Per thread: a row buffer of block_rows x q doubles and a private q x q Gram matrix.
    double *Z
    double *parts
    index_t n_threads
    index_t block_rows
    index_t q


cdef int scratch_init(GramScratch *s, index_t n_threads, index_t block_rows,
                      index_t q) noexcept nogil:
    """Allocate the buffers (the Gram parts zeroed); -1 when out of memory (nothing to free)."""
    s.n_threads, s.block_rows, s.q = n_threads, block_rows, q
    s.Z = <double *> malloc(n_threads * block_rows * q * sizeof(double))
    s.parts = <double *> calloc(n_threads * q * q, sizeof(double))
    if s.Z == NULL or s.parts == NULL:
        scratch_free(s)
        return -1
    return 0


cdef void scratch_free(GramScratch *s) noexcept nogil:
    free(s.Z)
    free(s.parts)
    s.Z = NULL
    s.parts = NULL


cdef void fill_block(const floating *X, index_t n, index_t d, const double[:, ::1] Y,
                     const double[::1] sw, const double[::1] x_shift, const double[::1] y_shift,
                     index_t start, index_t stop, index_t q, double *Z,
                     index_t z_size) noexcept nogil:
    """Z[r - start] = sqrt(sw_r) [x_r - x_shift, 1, y_r - y_shift, 0...] (q values) for r in
    [start, stop), X C-contiguous (n rows, d columns); Z holds z_size doubles."""
    cdef index_t K = Y.shape[1], r, j
    cdef bint weighted = sw.shape[0] > 0
    cdef double s
    cdef double *z
    cdef const floating *x
    for r in range(start, stop):
        fastml_check_index((r - start) * q + q - 1, z_size)
        fastml_check_index(r * d + d - 1, n * d)
        z = Z + (r - start) * q
        x = X + r * d
        s = sqrt(sw[r]) if weighted else 1.0
        for j in range(d):
            z[j] = s * (x[j] - x_shift[j])
        z[d] = s
        for j in range(K):
            z[d + 1 + j] = s * (Y[r, j] - y_shift[j])
        for j in range(d + 1 + K, q):
            z[j] = 0.0


cdef void fill_block_columns(const floating *X, index_t n, index_t d, const double[:, ::1] Y,
                             const double[::1] sw, const double[::1] x_shift,
                             const double[::1] y_shift, index_t start, index_t stop, index_t q,
                             double *Z, index_t z_size) noexcept nogil:
    """The same block as fill_block, from an F-contiguous X (n rows, d columns), stored
    column-major: Z[j * m + (r - start)] (m = stop - start), so that both X's columns and Z's
    are walked in order. The values are fill_block's, bit for bit."""
    cdef index_t K = Y.shape[1], m = stop - start, r, j
    cdef bint weighted = sw.shape[0] > 0
    cdef double shift
    cdef double *z
    cdef double *s = Z + d * m    # the constant column sqrt(sw_r) is also every row's scale
    cdef const floating *x
    fastml_check_index(q * m - 1, z_size)
    for r in range(m):
        s[r] = sqrt(sw[start + r]) if weighted else 1.0
    for j in range(d):
        fastml_check_index(j * n + stop - 1, n * d)
        z, x, shift = Z + j * m, X + j * n + start, x_shift[j]
        for r in range(m):
            z[r] = s[r] * (x[r] - shift)
    for j in range(K):
        z, shift = Z + (d + 1 + j) * m, y_shift[j]
        for r in range(m):
            z[r] = s[r] * (Y[start + r, j] - shift)
    for j in range((d + 1 + K) * m, q * m):
        Z[j] = 0.0


cdef void gram_rows(const floating[:, :] X, bint columns, const double[:, ::1] Y,
                    const double[::1] sw, const double[::1] x_shift, const double[::1] y_shift,
                    index_t start, index_t stop, index_t block_rows, index_t q, double *Z,
                    double *G) noexcept nogil:
    """G (q, q) += Z^T Z over rows [start, stop), block by block through the buffer Z
    (block_rows x q doubles); X is C-contiguous, or F-contiguous when `columns`."""
    cdef int p = <int> q, m
    cdef index_t s, n = X.shape[0], d = X.shape[1]
    cdef double one = 1.0
    cdef char uplo = b'U', trans = b'T' if columns else b'N'
    while start < stop:
        s = min(start + block_rows, stop)
        m = <int> (s - start)
        if columns:
            fill_block_columns(&X[0, 0], n, d, Y, sw, x_shift, y_shift, start, s, q, Z,
                               block_rows * q)
            # Z is a Fortran (m, p) matrix A: A^T A = Z^T Z.
            dsyrk(&uplo, &trans, &p, &m, &one, Z, &m, &one, G, &p)
        else:
            fill_block(&X[0, 0], n, d, Y, sw, x_shift, y_shift, start, s, q, Z, block_rows * q)
            # Z is a C-order (m, p) block, i.e. a Fortran (p, m) matrix A: A A^T = Z^T Z.
            dsyrk(&uplo, &trans, &p, &m, &one, Z, &p, &one, G, &p)
        # G in C order is a Fortran matrix too (symmetric): Fortran 'U' = our lower triangle.
        start = s


def gram_accumulate(const floating[:, :] X, const double[:, ::1] Y, const double[::1] sw,
                    const double[::1] x_shift, const double[::1] y_shift, double[:, ::1] G,
                    Py_ssize_t block_rows=MAX_BLOCK_ROWS, int n_threads=1):
    """G += Z^T Z over all rows of X (see the module note); sw of length 0 means unit weights.

    X is C- or F-contiguous (fit_stream builds column-major chunks: one memcpy per Arrow
    column); both give the same Z values, and for F order the blocks are copied column by
    column and handed to dsyrk transposed.

    G is (q, q) with q >= p = n_features + 1 + n_targets (zero padding, see GRAM_PAD) and is
    returned symmetric. n_threads > 1 splits the rows into contiguous parts with private
    buffers and Gram matrices (call it with BLAS itself single-threaded); 1 leaves the
    threading to BLAS."""
    cdef index_t n = X.shape[0], d = X.shape[1], K = Y.shape[1]
    cdef index_t p = d + 1 + K, q = G.shape[0], i, j, t
    cdef Py_ssize_t size = sizeof(floating)
    cdef bint rows_in_order = (X.strides[1] == size or d <= 1) and (
        X.strides[0] == d * size or n <= 1)
    cdef bint columns = not rows_in_order and (X.strides[0] == size or n <= 1) and (
        X.strides[1] == n * size or d <= 1)
    if not rows_in_order and not columns:
        raise ValueError("gram_accumulate: X must be C- or F-contiguous")
    if Y.shape[0] != n or q < p or G.shape[1] != q or x_shift.shape[0] != d \
            or y_shift.shape[0] != K or (sw.shape[0] != 0 and sw.shape[0] != n):
        raise ValueError("gram_accumulate: inconsistent shapes")
    cdef index_t rows = max(1, min(<index_t> block_rows, n))
    cdef index_t threads = max(1, min(<index_t> n_threads, (n + rows - 1) // rows))
    cdef GramScratch s
    if scratch_init(&s, threads, rows, q) < 0:
        raise MemoryError("gram_accumulate: not enough memory for the row buffers")
    with nogil:
        for t in prange(threads, num_threads=<int> threads, schedule="static"):
            gram_rows(X, columns, Y, sw, x_shift, y_shift, n * t // threads,
                      n * (t + 1) // threads, rows, q, s.Z + t * rows * q, s.parts + t * q * q)
        for t in range(threads):
            for i in range(q):
                for j in range(i + 1):
                    fastml_check_index(t * q * q + i * q + j, threads * q * q)
                    G[i, j] += s.parts[t * q * q + i * q + j]
        for i in range(q):
            for j in range(i + 1, q):
                G[i, j] = G[j, i]
    scratch_free(&s)
    return G


def count_nonfinite(const floating[:, ::1] values):
    """The number of entries of `values` that are inf or NaN. PolynomialRegression's predict
    asks whether the expansion of a finite X overflowed (x^k can): on a few rows numpy's
    reduction would cost more than the expansion itself."""
    cdef index_t count = 0, i, j
    with nogil:
        for i in range(values.shape[0]):
            for j in range(values.shape[1]):
                count += not isfinite(values[i, j])
    return count
