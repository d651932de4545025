# One pass of IRLS for binary logistic regression (001's Newton-Raphson; the "iteratively
# reweighted least squares" form): at the parameters (w, b), for every row
#     m = w.x + b,  p = sigma(m),  loss = log(1 + e^m) - y m,  r = s (p - y),  c = s p (1 - p)
# and the sums  L = sum loss s,  g = sum r [x, 1],  H = sum c [x, 1][x, 1]^T.
# A block of rows is read once while it is in cache: a dot product gives each margin, the scalars come
# from the stable loss of csrc/fastml_math.h, the block scaled by sqrt(c) goes to dsyrk (the
# normal equations' accumulation, _regression_fast.pyx) and r to a gemv for g. So a Newton
# step costs one read of X where margins, gradient and Hessian as separate passes cost three.
# Threads take contiguous row ranges with private (H, g, L), summed at the end.
# Loop invariant (between blocks): (L, g, H) hold the sums over the blocks done so far.
from libc.math cimport sqrt
from libc.stdlib cimport malloc, free
from libc.string cimport memset
from cython cimport floating
from cython.parallel cimport prange
from scipy.linalg.cython_blas cimport dsyrk, dgemv

from .._core._csrc cimport fastml_logistic_loss_dloss

cdef enum:
    BLOCK_ROWS = 256    # 256 rows x 100 features x 8 bytes = 200 KB: the block stays in L2


ctypedef struct Scratch:
    double *Z           # (BLOCK_ROWS, q) rows scaled by sqrt(c), with the constant column
    double *r           # (BLOCK_ROWS,) residuals s (p - y)
    double *H           # (q, q) private Hessian sums
    double *g           # (q,) private gradient sums
    double loss


cdef int scratch_init(Scratch *s, int n_threads, Py_ssize_t q) except -1 nogil:
    cdef int t
    for t in range(n_threads):
        s[t].Z = <double *> malloc(BLOCK_ROWS * q * sizeof(double))
        s[t].r = <double *> malloc(BLOCK_ROWS * sizeof(double))
        s[t].H = <double *> malloc(q * q * sizeof(double))
        s[t].g = <double *> malloc(q * sizeof(double))
        if s[t].Z == NULL or s[t].r == NULL or s[t].H == NULL or s[t].g == NULL:
            return -1
        memset(s[t].H, 0, q * q * sizeof(double))
        memset(s[t].g, 0, q * sizeof(double))
        s[t].loss = 0.0
    return 0


cdef void scratch_free(Scratch *s, int n_threads) noexcept nogil:
    cdef int t
    for t in range(n_threads):
        free(s[t].Z)
        free(s[t].r)
        free(s[t].H)
        free(s[t].g)


cdef void irls_rows(const floating[:, ::1] X, const double[::1] y, const double[::1] sw,
                    const double[::1] w, double b, Py_ssize_t start, Py_ssize_t stop,
                    Py_ssize_t q, Scratch *s) noexcept nogil:
    """Add rows [start, stop) to s's (loss, g, H), block by block."""
    cdef Py_ssize_t d = X.shape[1], i, j, r, m
    cdef double margin, dloss, c, scale
    cdef double *z
    cdef int p = <int> q, rows, one = 1
    cdef double alpha = 1.0
    cdef char uplo = b'U', trans = b'N'
    while start < stop:
        m = min(BLOCK_ROWS, stop - start)
        for r in range(m):
            i = start + r
            z = s.Z + r * q
            margin = b
            for j in range(d):
                margin += X[i, j] * w[j]
            s.loss += sw[i] * fastml_logistic_loss_dloss(margin, y[i], &dloss)
            s.r[r] = sw[i] * dloss                  # dloss = p - y
            c = dloss + y[i]                        # p
            scale = sqrt(sw[i] * c * (1.0 - c))
            for j in range(d):
                z[j] = scale * X[i, j]
            z[d] = scale
            for j in range(d + 1, q):
                z[j] = 0.0
        rows = <int> m
        # Z is a C-order (m, q) block, a Fortran (q, m) matrix A: H += A A^T (Fortran 'U' is
        # our lower triangle), and g += A0 r with A0 = the unscaled rows, re-read from X below.
        dsyrk(&uplo, &trans, &p, &rows, &alpha, s.Z, &p, &alpha, s.H, &p)
        for r in range(m):
            i = start + r
            for j in range(d):
                s.g[j] += s.r[r] * X[i, j]
            s.g[d] += s.r[r]
        start += m


def irls_pass(const floating[:, ::1] X, const double[::1] y, const double[::1] sw,
              const double[::1] w, double b, double[:, ::1] H, double[::1] g, int n_threads=1):
    """H = sum c [x,1][x,1]^T and g = sum r [x,1] (both overwritten; H is (q, q) with
    q >= d + 1, zero-padded), returns sum s loss. y holds 0/1 targets."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], q = H.shape[0], i, j
    cdef int t, T
    cdef double loss = 0.0
    cdef Scratch *scratch
    if y.shape[0] != n or sw.shape[0] != n or w.shape[0] != d or q < d + 1 \
            or H.shape[1] != q or g.shape[0] != q:
        raise ValueError("irls_pass: inconsistent shapes")
    T = <int> max(1, min(n_threads, (n + BLOCK_ROWS - 1) // BLOCK_ROWS))
    scratch = <Scratch *> malloc(T * sizeof(Scratch))
    if scratch == NULL:
        raise MemoryError()
    memset(scratch, 0, T * sizeof(Scratch))
    try:
        if scratch_init(scratch, T, q) != 0:
            raise MemoryError()
        with nogil:
            for t in prange(T, num_threads=T, schedule="static"):
                irls_rows(X, y, sw, w, b, n * t // T, n * (t + 1) // T, q, &scratch[t])
            memset(&H[0, 0], 0, q * q * sizeof(double))
            memset(&g[0], 0, q * sizeof(double))
            for t in range(T):
                loss += scratch[t].loss
                for i in range(q):
                    g[i] += scratch[t].g[i]
                    for j in range(i + 1):
                        H[i, j] += scratch[t].H[i * q + j]
            for i in range(q):
                for j in range(i + 1, q):
                    H[i, j] = H[j, i]
    finally:
        scratch_free(scratch, T)
        free(scratch)
    return loss
