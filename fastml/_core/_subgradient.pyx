# Batch (sub)gradient of the one-vs-rest margin losses in ONE pass over X: 003's "Subgradient
# Descent for Hinge Minimization", w <- w - eta (1/N) sum_i 1[y_i (w.x_i) < 1] (-y_i x_i) (+ L2).
#
# For a block of rows that fits in cache: margins M = X_blk W^T + b by BLAS, the loss and its
# derivative per row from _loss.pxd (loss_and_dloss: the same definition the SGD loop uses),
# then R^T X_blk added to the gradient while the block is still in cache, so X is read once per
# step. Blocks are spread over threads, each with its own gradient buffer.
# Returns sum_i sw_i loss_i and writes d/dW, d/db of that sum (the caller adds the L2 term and
# divides by the total weight). Invariant of the block loop: tgrad[t] = sum over the blocks
# thread t has finished of R_blk^T X_blk (and of R_blk for the intercepts).
from cython.parallel cimport prange, threadid
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memset
from cython cimport floating

from ._loss cimport loss_and_dloss, LOSS_HINGE, LOSS_PERCEPTRON
from ._rows cimport get_row, row_dot, row_axpy_double
from ._blas cimport fm_gemv_rows, fm_gemv_rows_t_acc, fm_gemm_abt, fm_gemm_atb_acc

LOSSES = {"hinge": LOSS_HINGE, "perceptron": LOSS_PERCEPTRON}

cdef enum:
    BLOCK_ROWS = 256


cdef double block_loss_grad(const floating *data, const int *indptr, const int *indices,
                            Py_ssize_t first, Py_ssize_t n_rows, Py_ssize_t d,
                            const double *y, const double *sw, const floating *W,
                            const floating *b, Py_ssize_t K, int loss, int label_offset,
                            floating *margins, floating *blk_grad, double *grad,
                            double *grad_b, double *m, double *dl) noexcept nogil:
    """Loss of rows first..first+n_rows; adds their gradient to grad (K, d), grad_b (K)."""
    cdef Py_ssize_t i, k, j, nnz
    cdef const floating *x
    cdef const int *idx
    cdef double total = 0.0
    cdef bint dense = indices == NULL
    if dense:
        if K == 1:
            fm_gemv_rows(<int> n_rows, <int> d, data + first * d, W, margins)
        else:
            fm_gemm_abt(<int> n_rows, <int> K, <int> d, data + first * d, W, margins)
    for i in range(n_rows):
        get_row(data, indptr, indices, d, first + i, &x, &idx, &nnz)
        for k in range(K):
            m[k] = (margins[i * K + k] if dense else row_dot(x, idx, nnz, W + k * d)) + b[k]
        total += sw[first + i] * loss_and_dloss(loss, label_offset, False, m, &y[first + i],
                                                K, dl)
        for k in range(K):
            grad_b[k] += sw[first + i] * dl[k]
            if dense:
                margins[i * K + k] = <floating> (sw[first + i] * dl[k])   # now the residuals
            elif dl[k] != 0.0:
                row_axpy_double(x, idx, nnz, sw[first + i] * dl[k], grad + k * d)
    if dense:
        memset(blk_grad, 0, K * d * sizeof(floating))
        if K == 1:
            fm_gemv_rows_t_acc(<int> n_rows, <int> d, data + first * d, margins, blk_grad)
        else:
            fm_gemm_atb_acc(<int> n_rows, <int> K, <int> d, margins, data + first * d, blk_grad)
        for j in range(K * d):
            grad[j] += blk_grad[j]
    return total


def loss_grad(X, const double[::1] y, const double[::1] sample_weight,
              const floating[:, ::1] W, const floating[::1] b, double[:, ::1] grad,
              double[::1] grad_b, int loss, int label_offset, int n_threads=1):
    """sum_i sw_i * loss_i (one-vs-rest hinge or perceptron loss; output k stands for class
    code k + label_offset) at W (K, d), b (K); writes its subgradient into grad and grad_b.
    X is dense C-contiguous or CSR; y holds the class codes as float64."""
    cdef Py_ssize_t n = y.shape[0], K = W.shape[0], d = W.shape[1]
    cdef Py_ssize_t n_blocks = (n + BLOCK_ROWS - 1) // BLOCK_ROWS, blk, t, j, stride = K * d + K
    cdef const floating[:, ::1] dense
    cdef const floating[::1] csr_data
    cdef const int[::1] csr_indptr, csr_indices
    cdef const floating *data
    cdef const int *indptr = NULL
    cdef const int *indices = NULL
    cdef int T = max(1, min(n_threads, <int> n_blocks))
    cdef double total = 0.0
    if hasattr(X, "indptr"):
        csr_data, csr_indptr, csr_indices = X.data, X.indptr, X.indices
        data, indptr, indices = &csr_data[0], &csr_indptr[0], &csr_indices[0]
    else:
        dense = X
        data = &dense[0, 0]
    cdef double *tgrad = <double *> calloc(T * stride, sizeof(double))
    cdef floating *tmarg = <floating *> malloc(T * BLOCK_ROWS * K * sizeof(floating))
    cdef floating *tblk = <floating *> malloc(T * K * d * sizeof(floating))
    cdef double *trow = <double *> malloc(T * 2 * K * sizeof(double))
    try:
        if tgrad == NULL or tmarg == NULL or tblk == NULL or trow == NULL:
            raise MemoryError()
        for blk in prange(n_blocks, nogil=True, num_threads=T, schedule="static"):
            t = threadid()
            total += block_loss_grad(data, indptr, indices, blk * BLOCK_ROWS,
                                     min(<Py_ssize_t> BLOCK_ROWS, n - blk * BLOCK_ROWS), d,
                                     &y[0], &sample_weight[0], &W[0, 0], &b[0], K, loss,
                                     label_offset, tmarg + t * BLOCK_ROWS * K, tblk + t * K * d,
                                     tgrad + t * stride, tgrad + t * stride + K * d,
                                     trow + t * 2 * K, trow + t * 2 * K + K)
        grad[:, :] = 0.0
        grad_b[:] = 0.0
        for t in range(T):
            for j in range(K * d):
                grad[j // d, j % d] += tgrad[t * stride + j]
            for j in range(K):
                grad_b[j] += tgrad[t * stride + K * d + j]
    finally:
        free(tgrad); free(tmarg); free(tblk); free(trow)
    return total
