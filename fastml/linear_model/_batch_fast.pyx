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
from ._rows cimport RowSource, row_source, get_row, row_dot, row_axpy_double

cdef enum:
    BLOCK_ROWS = 256    # 256 rows x 100 float64 features = 200 KB: stays in L2


ctypedef struct LossSpec:
    int kind              # a LOSS_* code of _loss.pxd
    int label_offset      # output k stands for class code k + label_offset
    bint reference        # LOG: code 0 has the fixed margin 0
    Py_ssize_t K          # outputs
    Py_ssize_t d          # features


ctypedef struct ThreadScratch:
    # One thread's buffers (float64 sums; `floating` ones for BLAS are void * here since a
    # struct cannot hold a fused type).
    double *grad          # (K, d) the thread's gradient sum
    double *grad_b        # (K,)
    double *m             # (K,) one row's margins
    double *dl            # (K,) one row's loss derivatives
    double *resid         # (BLOCK_ROWS, K) the block's residuals sw_i * dloss_i
    void *margins         # (BLOCK_ROWS, K) floating: the block's margins, then its residuals
    void *blk_grad        # (K, d) floating: the block's R^T X


ctypedef struct BatchScratch:
    int n_threads
    double *sums          # n_threads x (K d + K): grad and grad_b of each thread
    double *rows          # n_threads x 2K: m and dl
    double *resid         # n_threads x BLOCK_ROWS K
    void *margins         # n_threads x BLOCK_ROWS K floating
    void *blk_grad        # n_threads x K d floating


cdef int scratch_init(BatchScratch *s, int n_threads, Py_ssize_t K, Py_ssize_t d,
                      Py_ssize_t item_size) noexcept nogil:
    """Allocate every thread's buffers; -1 when out of memory (scratch_free is safe then)."""
    memset(s, 0, sizeof(BatchScratch))
    s.n_threads = n_threads
    s.sums = <double *> calloc(n_threads * (K * d + K), sizeof(double))
    s.rows = <double *> malloc(n_threads * 2 * K * sizeof(double))
    s.resid = <double *> malloc(n_threads * BLOCK_ROWS * K * sizeof(double))
    s.margins = malloc(n_threads * BLOCK_ROWS * K * item_size)
    s.blk_grad = malloc(n_threads * K * d * item_size)
    if (s.sums == NULL or s.rows == NULL or s.resid == NULL or s.margins == NULL
            or s.blk_grad == NULL):
        return -1
    return 0


cdef void scratch_free(BatchScratch *s) noexcept nogil:
    free(s.sums); free(s.rows); free(s.resid); free(s.margins); free(s.blk_grad)
    s.sums = s.rows = s.resid = NULL
    s.margins = s.blk_grad = NULL


cdef inline ThreadScratch thread_scratch(const BatchScratch *s, int t, Py_ssize_t K,
                                         Py_ssize_t d, Py_ssize_t item_size) noexcept nogil:
    """Thread t's slice of the shared buffers."""
    cdef ThreadScratch ts
    ts.grad = s.sums + t * (K * d + K)
    ts.grad_b = ts.grad + K * d
    ts.m = s.rows + t * 2 * K
    ts.dl = ts.m + K
    ts.resid = s.resid + t * BLOCK_ROWS * K
    ts.margins = <char *> s.margins + t * BLOCK_ROWS * K * item_size
    ts.blk_grad = <char *> s.blk_grad + t * K * d * item_size
    return ts


cdef double dense_block(const floating *X, Py_ssize_t n_rows, Py_ssize_t n_next,
                        const double *y, const double *sw, const floating *W,
                        const floating *b, const LossSpec *ls, ThreadScratch *ts) noexcept nogil:
    """Loss of one dense block; adds its gradient to ts.grad (K, d) and ts.grad_b (K). While
    the CPU works on the block's P-hat and residuals, the next n_next rows are prefetched, so
    memory keeps streaming instead of idling until the next GEMV asks for them."""
    cdef Py_ssize_t i, k, j, K = ls.K, d = ls.d
    cdef double loss = 0.0
    cdef floating *margins = <floating *> ts.margins
    cdef floating *blk_grad = <floating *> ts.blk_grad
    if K == 1:
        fm_gemv_rows(<int> n_rows, <int> d, X, W, margins)
    else:
        fm_gemm_abt(<int> n_rows, <int> K, <int> d, X, W, margins)
    for i in range(n_rows):
        if i < n_next:
            fastml_prefetch_range(X + (n_rows + i) * d, d * sizeof(floating))
        for k in range(K):
            ts.m[k] = margins[i * K + k] + b[k]
        loss += sw[i] * loss_and_dloss(ls.kind, ls.label_offset, ls.reference, ts.m, &y[i], K,
                                       ts.dl)
        for k in range(K):
            ts.resid[i * K + k] = sw[i] * ts.dl[k]
            ts.grad_b[k] += ts.resid[i * K + k]
    if K == 1:                          # the residuals' X^T r, straight into float64
        if floating is double:
            fastml_xt_r_f64(n_rows, d, X, ts.resid, ts.grad)
        else:
            fastml_xt_r_f32(n_rows, d, X, ts.resid, ts.grad)
        return loss
    for i in range(n_rows * K):         # several outputs: one GEMM for R^T X
        margins[i] = <floating> ts.resid[i]
    memset(blk_grad, 0, K * d * sizeof(floating))
    fm_gemm_atb_acc(<int> n_rows, <int> K, <int> d, margins, X, blk_grad)
    for j in range(K * d):              # float32 blocks are summed in float64
        ts.grad[j] += blk_grad[j]
    return loss


cdef double sparse_block(const RowSource *src, Py_ssize_t first, Py_ssize_t n_rows,
                         const double *y, const double *sw, const floating *W,
                         const floating *b, const LossSpec *ls, ThreadScratch *ts) noexcept nogil:
    """Loss of CSR rows first..first+n_rows; adds their gradient to ts.grad and ts.grad_b."""
    cdef Py_ssize_t i, k, nnz, K = ls.K, d = ls.d
    cdef const floating *x
    cdef const int *idx
    cdef double loss = 0.0
    for i in range(first, first + n_rows):
        get_row(src, i, &x, &idx, &nnz)
        for k in range(K):
            ts.m[k] = row_dot(x, idx, nnz, W + k * d) + b[k]
        loss += sw[i] * loss_and_dloss(ls.kind, ls.label_offset, ls.reference, ts.m, &y[i], K,
                                       ts.dl)
        for k in range(K):
            if ts.dl[k] != 0.0:
                row_axpy_double(x, idx, nnz, sw[i] * ts.dl[k], ts.grad + k * d)
            ts.grad_b[k] += sw[i] * ts.dl[k]
    return loss


def loss_grad(X, const double[::1] y, const double[::1] sample_weight,
              const floating[:, ::1] W, const floating[::1] b, double[:, ::1] grad,
              double[::1] grad_b, int loss, int label_offset, bint reference, int n_threads=1):
    """sum_i sw_i * loss_i at weights W (K, d), b (K) for class codes y (as float64; output
    k stands for code k + label_offset; `reference`: the LOG loss's code 0 has margin 0);
    writes its (sub)gradient into grad (K, d) and grad_b (K). `loss` is a code of _loss.pxd
    (Python: _sgd_fast.LOSSES). X is dense C-contiguous or CSR."""
    cdef RowSource src
    cdef LossSpec ls
    cdef BatchScratch s
    cdef ThreadScratch ts
    cdef Py_ssize_t n = y.shape[0], K = W.shape[0], d = W.shape[1], item = sizeof(floating)
    cdef Py_ssize_t n_blocks = (n + BLOCK_ROWS - 1) // BLOCK_ROWS, blk, first, rows, j
    cdef int T = max(1, min(n_threads, fastml_max_threads(), <int> n_blocks)), t
    cdef double total = 0.0
    cdef const floating *dense
    row_source(X, W, &src)
    if (src.n_rows != n or sample_weight.shape[0] != n or b.shape[0] != K
            or grad.shape[0] != K or grad.shape[1] != d or grad_b.shape[0] != K):
        raise ValueError("loss_grad: shapes do not agree")
    ls.kind, ls.label_offset, ls.reference, ls.K, ls.d = loss, label_offset, reference, K, d
    grad[:, :] = 0.0
    grad_b[:] = 0.0
    if n == 0 or K == 0:
        return 0.0
    dense = <const floating *> src.data
    if scratch_init(&s, T, K, d, item) != 0:
        scratch_free(&s)
        raise MemoryError()
    try:
        for blk in prange(n_blocks, nogil=True, num_threads=T, schedule="static"):
            ts = thread_scratch(&s, threadid(), K, d, item)
            first = blk * BLOCK_ROWS
            rows = min(<Py_ssize_t> BLOCK_ROWS, n - first)
            if src.indices != NULL:
                total += sparse_block(&src, first, rows, &y[0], &sample_weight[0], &W[0, 0],
                                      &b[0], &ls, &ts)
            else:
                total += dense_block(dense + first * d, rows,
                                     min(<Py_ssize_t> BLOCK_ROWS, n - first - rows),
                                     &y[first], &sample_weight[first], &W[0, 0], &b[0], &ls,
                                     &ts)
        for t in range(T):
            for j in range(K * d):
                grad[j // d, j % d] += s.sums[t * (K * d + K) + j]
            for j in range(K):
                grad_b[j] += s.sums[t * (K * d + K) + K * d + j]
    finally:
        scratch_free(&s)
    return total
