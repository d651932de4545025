# Level-1/2 BLAS for fused float32/float64 through scipy's cython_blas: the vendored OpenBLAS
# dispatches to the CPU's best kernels at run time (AVX2/AVX-512), which a portable -O3 build
# of our own loops cannot do. Inline wrappers so kernels call one name for both precisions.
from cython cimport floating
from scipy.linalg.cython_blas cimport ddot, sdot, daxpy, saxpy, dgemv, sgemv, dgemm, sgemm


cdef inline floating fm_dot(int n, const floating *x, const floating *y) noexcept nogil:
    """sum_i x[i] * y[i] (unit strides)."""
    cdef int one = 1
    if floating is double:
        return ddot(&n, <double *> x, &one, <double *> y, &one)
    else:
        return sdot(&n, <float *> x, &one, <float *> y, &one)


cdef inline void fm_axpy(int n, floating a, const floating *x, floating *y) noexcept nogil:
    """y += a * x (unit strides)."""
    cdef int one = 1
    if floating is double:
        daxpy(&n, &a, <double *> x, &one, y, &one)
    else:
        saxpy(&n, &a, <float *> x, &one, y, &one)


cdef inline void fm_gemv_rows(int n_rows, int n_cols, const floating *A, const floating *x,
                              floating *y) noexcept nogil:
    """y = A @ x for a C-contiguous (n_rows, n_cols) block A."""
    # A C-contiguous (r, c) block is a Fortran (c, r) matrix: A @ x is op 'T' on it.
    cdef char trans = b'T'
    cdef int one = 1
    cdef floating alpha = 1.0, beta = 0.0
    if floating is double:
        dgemv(&trans, &n_cols, &n_rows, &alpha, <double *> A, &n_cols, <double *> x, &one,
              &beta, y, &one)
    else:
        sgemv(&trans, &n_cols, &n_rows, &alpha, <float *> A, &n_cols, <float *> x, &one,
              &beta, y, &one)


cdef inline void fm_gemv_rows_t_acc(int n_rows, int n_cols, const floating *A, const floating *r,
                                    floating *g) noexcept nogil:
    """g += A.T @ r for a C-contiguous (n_rows, n_cols) block A."""
    cdef char trans = b'N'
    cdef int one = 1
    cdef floating alpha = 1.0, beta = 1.0
    if floating is double:
        dgemv(&trans, &n_cols, &n_rows, &alpha, <double *> A, &n_cols, <double *> r, &one,
              &beta, g, &one)
    else:
        sgemv(&trans, &n_cols, &n_rows, &alpha, <float *> A, &n_cols, <float *> r, &one,
              &beta, g, &one)


cdef inline void fm_gemm_abt(int m, int n, int k, const floating *A, const floating *B,
                             floating *C) noexcept nogil:
    """C (m, n) = A (m, k) @ B.T with B (n, k); all C-contiguous."""
    # Row-major C = A B^T is column-major C^T = B A^T: gemm('T', 'N') on the Fortran views.
    cdef char ta = b'T', tb = b'N'
    cdef floating alpha = 1.0, beta = 0.0
    if floating is double:
        dgemm(&ta, &tb, &n, &m, &k, &alpha, <double *> B, &k, <double *> A, &k, &beta, C, &n)
    else:
        sgemm(&ta, &tb, &n, &m, &k, &alpha, <float *> B, &k, <float *> A, &k, &beta, C, &n)


cdef inline void fm_gemm_atb_acc(int m, int n, int k, const floating *A, const floating *B,
                                 floating *C) noexcept nogil:
    """C (n, k) += A.T @ B with A (m, n), B (m, k); all C-contiguous."""
    # Row-major C = A^T B is column-major C^T = B^T A: gemm('N', 'T') on the Fortran views.
    cdef char ta = b'N', tb = b'T'
    cdef floating alpha = 1.0, beta = 1.0
    if floating is double:
        dgemm(&ta, &tb, &k, &n, &m, &alpha, <double *> B, &k, <double *> A, &n, &beta, C, &k)
    else:
        sgemm(&ta, &tb, &k, &n, &m, &alpha, <float *> B, &k, <float *> A, &n, &beta, C, &k)
