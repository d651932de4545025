# The batch kernel of the linear models: loss and (sub)gradient over all rows in ONE pass
# over X. Lecture 000: with P-hat cached, a logistic-regression gradient step costs O(N k);
# 003's "Subgradient Descent for Hinge Minimization" is the same pass with the hinge.
#
# For a block of rows that fits in cache we compute the margins M = X_blk W^T + b, then the
# loss and its derivative per row (loss_and_dloss from _loss.pxd: the definitions the SGD loop
# uses; for the logistic loss, P-hat and the residual R = sw * (P-hat - Y)), and accumulate
# R^T X_blk into the gradient while the block is still in cache: X is read from memory once
# per call (numpy's X.T @ (y - sigmoid(X @ w)) reads it twice). Blocks are spread over threads
# (OpenMP), each with its own gradient buffer, summed at the end. The margins go through BLAS
# (gemv for one output, gemm for several); the next block is prefetched meanwhile.
#
# Returns sum_i sw_i * loss_i and writes d/dW, d/db of that sum; the estimator adds the L2
# term and divides by the total weight. Invariant of the block loop: grad_thread[t] = sum over
# the blocks thread t has finished of R_blk^T X_blk.
from cython.parallel cimport prange, threadid
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memset
from cython cimport floating

from .._core._csrc cimport (fastml_prefetch_range, fastml_xt_r_f64, fastml_xt_r_f32,
                              fastml_max_threads)
from .._core._blas cimport fm_gemv_rows, fm_gemm_abt, fm_gemm_atb_acc
from ._loss cimport loss_and_dloss
from ._rows cimport get_row, row_dot, row_axpy_double

cdef enum:
    BLOCK_ROWS = 256    # 256 rows x 100 float64 features = 200 KB: stays in L2


cdef double dense_block(const floating *X, Py_ssize_t n_rows, Py_ssize_t n_next, Py_ssize_t d,
                        const double *y, const double *sw, const floating *W,
                        const floating *b, Py_ssize_t K, int loss_kind, int label_offset,
                        bint reference, floating *margins, floating *blk_grad, double *resid, double *grad,
                        double *grad_b, double *m, double *dl) noexcept nogil:
    """Loss of one dense block; adds its gradient to grad (K, d) and grad_b (K). While the
    CPU works on the block's P-hat and residuals, the next n_next rows are prefetched, so
    memory keeps streaming instead of idling until the next GEMV asks for them."""
    cdef Py_ssize_t i, k, j
    cdef double loss = 0.0
    if K == 1:
        fm_gemv_rows(<int> n_rows, <int> d, X, W, margins)
    else:
        fm_gemm_abt(<int> n_rows, <int> K, <int> d, X, W, margins)
    for i in range(n_rows):
        if i < n_next:
            fastml_prefetch_range(X + (n_rows + i) * d, d * sizeof(floating))
        for k in range(K):
            m[k] = margins[i * K + k] + b[k]
        loss += sw[i] * loss_and_dloss(loss_kind, label_offset, reference, m, &y[i], K, dl)
        for k in range(K):
            resid[i * K + k] = sw[i] * dl[k]
            grad_b[k] += resid[i * K + k]
    if K == 1:                          # the residuals' X^T r, straight into float64
        if floating is double:
            fastml_xt_r_f64(n_rows, d, X, resid, grad)
        else:
            fastml_xt_r_f32(n_rows, d, X, resid, grad)
        return loss
    for i in range(n_rows * K):         # several outputs: one GEMM for R^T X
        margins[i] = <floating> resid[i]
    memset(blk_grad, 0, K * d * sizeof(floating))
    fm_gemm_atb_acc(<int> n_rows, <int> K, <int> d, margins, X, blk_grad)
    for j in range(K * d):              # float32 blocks are summed in float64
        grad[j] += blk_grad[j]
    return loss


cdef double sparse_block(const floating *data, const int *indptr, const int *indices,
                         Py_ssize_t first, Py_ssize_t n_rows, Py_ssize_t d,
                         const double *y, const double *sw, const floating *W,
                         const floating *b, Py_ssize_t K, int loss_kind, int label_offset,
                         bint reference, double *grad, double *grad_b, double *m, double *dl) noexcept nogil:
    """Loss of CSR rows first..first+n_rows; adds their gradient to grad and grad_b."""
    cdef Py_ssize_t i, k, nnz
    cdef const floating *x
    cdef const int *idx
    cdef double loss = 0.0
    for i in range(first, first + n_rows):
        get_row(data, indptr, indices, d, i, &x, &idx, &nnz)
        for k in range(K):
            m[k] = row_dot(x, idx, nnz, W + k * d) + b[k]
        loss += sw[i] * loss_and_dloss(loss_kind, label_offset, reference, m, &y[i], K, dl)
        for k in range(K):
            if dl[k] != 0.0:
                row_axpy_double(x, idx, nnz, sw[i] * dl[k], grad + k * d)
            grad_b[k] += sw[i] * dl[k]
    return loss


def loss_grad(X, const double[::1] y, const double[::1] sample_weight,
              const floating[:, ::1] W, const floating[::1] b, double[:, ::1] grad,
              double[::1] grad_b, int loss, int label_offset, bint reference, int n_threads=1):
    """sum_i sw_i * loss_i at weights W (K, d), b (K) for class codes y (as float64; output
    k stands for code k + label_offset; `reference`: the LOG loss's code 0 has margin 0);
    writes its (sub)gradient into grad (K, d) and grad_b (K). `loss` is a code of _loss.pxd
    (Python: _sgd_fast.LOSSES).
    X is dense C-contiguous or CSR."""
    cdef Py_ssize_t n = y.shape[0], K = W.shape[0], d = W.shape[1]
    cdef Py_ssize_t n_blocks = (n + BLOCK_ROWS - 1) // BLOCK_ROWS, blk, first, rows, t, j
    cdef const floating[:, ::1] dense
    cdef const floating[::1] csr_data
    cdef const int[::1] csr_indptr, csr_indices
    cdef const floating *data
    cdef const int *indptr = NULL
    cdef const int *indices = NULL
    cdef bint sparse = hasattr(X, "indptr")
    cdef int T = max(1, min(n_threads, fastml_max_threads(), <int> n_blocks))
    cdef double total = 0.0
    if sparse:
        csr_data, csr_indptr, csr_indices = X.data, X.indptr, X.indices
        data, indptr, indices = &csr_data[0], &csr_indptr[0], &csr_indices[0]
    else:
        dense = X
        data = &dense[0, 0]
    # Per-thread scratch: gradient sums (double), margins / residuals and block gradient
    # (floating, for BLAS), and the K-vectors of one row.
    cdef double *tgrad = <double *> calloc(T * (K * d + K), sizeof(double))
    cdef floating *tmarg = <floating *> malloc(T * BLOCK_ROWS * K * sizeof(floating))
    cdef floating *tblk = <floating *> malloc(T * K * d * sizeof(floating))
    cdef double *trow = <double *> malloc(T * 2 * K * sizeof(double))
    cdef double *tres = <double *> malloc(T * BLOCK_ROWS * K * sizeof(double))
    try:
        if tgrad == NULL or tmarg == NULL or tblk == NULL or trow == NULL or tres == NULL:
            raise MemoryError()
        for blk in prange(n_blocks, nogil=True, num_threads=T, schedule="static"):
            t = threadid()
            first = blk * BLOCK_ROWS
            rows = min(<Py_ssize_t> BLOCK_ROWS, n - first)
            if sparse:
                total += sparse_block(data, indptr, indices, first, rows, d, &y[0],
                                      &sample_weight[0], &W[0, 0], &b[0], K, loss,
                                      label_offset, reference, tgrad + t * (K * d + K),
                                      tgrad + t * (K * d + K) + K * d,
                                      trow + t * 2 * K, trow + t * 2 * K + K)
            else:
                total += dense_block(data + first * d, rows,
                                     min(<Py_ssize_t> BLOCK_ROWS, n - first - rows), d,
                                     &y[first], &sample_weight[first], &W[0, 0], &b[0], K,
                                     loss, label_offset, reference,
                                     tmarg + t * BLOCK_ROWS * K, tblk + t * K * d,
                                     tres + t * BLOCK_ROWS * K, tgrad + t * (K * d + K),
                                     tgrad + t * (K * d + K) + K * d,
                                     trow + t * 2 * K, trow + t * 2 * K + K)
        grad[:, :] = 0.0
        grad_b[:] = 0.0
        for t in range(T):
            for j in range(K * d):
                grad[j // d, j % d] += tgrad[t * (K * d + K) + j]
            for j in range(K):
                grad_b[j] += tgrad[t * (K * d + K) + K * d + j]
    finally:
        free(tgrad); free(tmarg); free(tblk); free(trow); free(tres)
    return total
