# The batch kernel of the linear models: loss and (sub)gradient over all rows in ONE pass
# over X. Lecture 000: with P-hat cached, a logistic-regression gradient step costs O(N k);
# 003's "Subgradient Descent for Hinge Minimization" is the same pass with the hinge.
#
# Dense X goes by blocks of rows small enough to stay in L1 (block_rows): the margins
# M = X_blk W^T + b (csrc/fastml_simd.h), the loss and its derivative per row (for the
# logistic loss vectorized across the block's rows, csrc/fastml_batch.h; the other losses
# through loss_and_dloss of _loss.pxd, the definitions the SGD loop uses), the residuals
# R = sw * dloss, then G += R^T X_blk (fastml_simd.h) while the block is still in L1. The
# softmax over K > 1 outputs keeps M and R output-major (softmax_block), so its loss runs
# across rows and R^T X takes the outputs in register tiles: the same sums, fewer loads. X is
# read from memory once per call; the rows ahead are prefetched as the loops go, so memory
# streams while the arithmetic runs (bench/README.md, branch batch: ~1.4x one X.sum() for
# binary rows of 100 features, where the arithmetic alone is about half a read).
#
# Threads and sums: the rows are cut into chunks by a rule on the shapes only (chunk_rows),
# never on the thread count; each chunk sums its loss and gradient in row order into its own
# buffer, and the chunks' buffers are added in chunk order at the end. Threads only decide who
# computes which chunk, so the result has the same bits for any n_jobs.
#
# Returns sum_i sw_i * loss_i and writes d/dW, d/db of that sum; the estimator adds the L2
# term and divides by the total weight.
from cython.parallel cimport prange, threadid
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memset
from cython cimport floating

from .._core._csrc cimport (fastml_max_threads, fastml_margins_f64, fastml_margins_f32,
                              fastml_xt_r_f64, fastml_xt_r_f32, fastml_logistic_block,
                              fastml_softmax_block, fastml_prefetch_cursor,
                              fastml_margins_cols_f64, fastml_margins_cols_f32,
                              fastml_xt_r_cols_f64, fastml_xt_r_cols_f32,
                              fastml_softmax_block_cols, fastml_cpu_has_avx512)
from ._loss cimport loss_and_dloss, LOSS_LOG
from ._rows cimport RowSource, row_source, get_row, row_axpy_double

# The multinomial pass runs its AVX-512 copy here (csrc/fastml_batch_avx512.h): its sums round
# once per multiply-add, so they differ from the portable copy's in the last bits. Asked at
# import, before any thread does.
AVX512_COPY = bool(fastml_cpu_has_avx512())

cdef enum:
    # A dense block is at most BLOCK_BYTES of X (8 rows of 100 float64 features, at most
    # MAX_BLOCK_ROWS rows): the block, the FASTML_PREFETCH_AHEAD (16 KB) of rows requested
    # ahead of it (csrc/fastml_simd.h), the weights and the gradient fit together in the 32 KB
    # L1 data cache, so G += R^T X_blk rereads the block from L1. Larger blocks (256 rows, in
    # L2, as before) were slower: the loss and R^T X then run long stretches without reading
    # memory, which idles unless prefetches are issued all along.
    BLOCK_BYTES = 8192
    MAX_BLOCK_ROWS = 64
    # Chunks (the units of the fixed summation order): at least CHUNK_MIN_ROWS rows, at most
    # MAX_CHUNKS of them (enough to spread over threads), and their gradient buffers within
    # PARTIALS_BUDGET doubles (but at least 2 chunks, as 2 threads had before).
    CHUNK_MIN_ROWS = 2048
    MAX_CHUNKS = 64
    PARTIALS_BUDGET = 1 << 22


ctypedef struct LossSpec:
    int kind              # a LOSS_* code of _loss.pxd
    int label_offset      # output k stands for class code k + label_offset
    bint reference        # LOG: code 0 has the fixed margin 0
    Py_ssize_t K          # outputs
    Py_ssize_t d          # features


ctypedef struct ThreadScratch:
    # One thread's buffers, all float64, each (block_rows, K) or (block_rows,) or (K,).
    double *M             # the block's margins
    double *R             # the block's residuals sw_i * dloss_i
    double *E             # softmax: the exponentials
    double *L             # the block's weighted losses
    double *S             # softmax: the row maxima, then the sums of exponentials
    double *code          # softmax, output-major: the rows' label outputs
    double *dl            # (K,) one row's loss derivatives (generic losses, CSR rows)


cdef Py_ssize_t block_rows(Py_ssize_t d, Py_ssize_t item_size) noexcept nogil:
    """Rows per dense block: BLOCK_BYTES of X, a multiple of 4 (fastml_xt_r's row groups)
    between 4 and MAX_BLOCK_ROWS."""
    cdef Py_ssize_t rows = BLOCK_BYTES // max(<Py_ssize_t> 1, d * item_size)
    return max(<Py_ssize_t> 4, min(<Py_ssize_t> MAX_BLOCK_ROWS, rows - rows % 4))


cdef Py_ssize_t chunk_rows(Py_ssize_t n, Py_ssize_t stride) noexcept nogil:
    """Rows per chunk, from n and the size of a chunk's buffer only (see the header); a
    multiple of 4, so every block starts on a 4-row group."""
    cdef Py_ssize_t n_chunks = min((n + CHUNK_MIN_ROWS - 1) // CHUNK_MIN_ROWS,
                                   <Py_ssize_t> MAX_CHUNKS,
                                   max(<Py_ssize_t> 2, PARTIALS_BUDGET // stride))
    cdef Py_ssize_t rows = (n + max(n_chunks, <Py_ssize_t> 1) - 1) // max(n_chunks, <Py_ssize_t> 1)
    return max(<Py_ssize_t> 4, rows + (-rows) % 4)


cdef double *scratch_alloc(int n_threads, Py_ssize_t B, Py_ssize_t K) noexcept nogil:
    """One block of every thread's ThreadScratch buffers (NULL when out of memory)."""
    return <double *> malloc(n_threads * (3 * B * K + 3 * B + K) * sizeof(double))


cdef inline ThreadScratch thread_scratch(double *base, int t, Py_ssize_t B,
                                         Py_ssize_t K) noexcept nogil:
    """Thread t's slice of scratch_alloc's block."""
    cdef ThreadScratch ts
    ts.M = base + t * (3 * B * K + 3 * B + K)
    ts.R = ts.M + B * K
    ts.E = ts.R + B * K
    ts.L = ts.E + B * K
    ts.S = ts.L + B
    ts.code = ts.S + B
    ts.dl = ts.code + B
    return ts


cdef double generic_losses(Py_ssize_t n_rows, const double *y, const double *sw,
                           const LossSpec *ls, ThreadScratch *ts) noexcept nogil:
    """Loss of the block's rows from their margins ts.M, residuals into ts.R, through the
    shared loss definitions (hinge, perceptron; y holds one value per row)."""
    cdef Py_ssize_t i, k, K = ls.K
    cdef double loss = 0.0
    for i in range(n_rows):
        loss += sw[i] * loss_and_dloss(ls.kind, ls.label_offset, ls.reference, ts.M + i * K,
                                       y + i, K, ts.dl)
        for k in range(K):
            ts.R[i * K + k] = sw[i] * ts.dl[k]
    return loss


cdef double dense_block(const floating *X, Py_ssize_t n_rows, const double *y,
                        const double *sw, const floating *W, const floating *b,
                        const LossSpec *ls, ThreadScratch *ts, fastml_prefetch_cursor *cursor,
                        double *grad, double *grad_b) noexcept nogil:
    """Loss of one dense block (in L1); adds its gradient to grad (K, d) and grad_b (K). The
    margins and R^T X loops request the rows ahead through `cursor` as they go."""
    cdef Py_ssize_t i, k, K = ls.K, d = ls.d
    cdef double loss
    if ls.kind == LOSS_LOG and K > 1:
        return softmax_block(X, n_rows, y, sw, W, b, ls, ts, cursor, grad, grad_b)
    if floating is double:
        fastml_margins_f64(n_rows, d, K, X, W, b, ts.M, cursor)
    else:
        fastml_margins_f32(n_rows, d, K, X, W, b, ts.M, cursor)
    if ls.kind == LOSS_LOG and ls.reference:
        loss = fastml_logistic_block(n_rows, ts.M, y, sw, ls.label_offset, ts.R, ts.L)
    elif ls.kind == LOSS_LOG:        # one output without a reference class: a softmax of one
        loss = fastml_softmax_block(n_rows, K, ts.M, y, sw, ls.label_offset, ls.reference,
                                    ts.R, ts.L, ts.E, ts.S)
    else:
        loss = generic_losses(n_rows, y, sw, ls, ts)
    if floating is double:
        fastml_xt_r_f64(n_rows, d, K, X, ts.R, grad, cursor)
    else:
        fastml_xt_r_f32(n_rows, d, K, X, ts.R, grad, cursor)
    for i in range(n_rows):
        for k in range(K):
            grad_b[k] += ts.R[i * K + k]
    return loss


cdef double softmax_block(const floating *X, Py_ssize_t n_rows, const double *y,
                          const double *sw, const floating *W, const floating *b,
                          const LossSpec *ls, ThreadScratch *ts,
                          fastml_prefetch_cursor *cursor, double *grad,
                          double *grad_b) noexcept nogil:
    """dense_block for the softmax over K > 1 outputs: the margins and residuals output-major
    (ts.M[k * n_rows + i]), so the loss runs across rows and R^T X takes the outputs in
    register tiles (csrc/fastml_simd.h); the same sums in the same order as dense_block's."""
    cdef Py_ssize_t i, k, K = ls.K, d = ls.d
    cdef double loss
    if floating is double:
        fastml_margins_cols_f64(n_rows, d, K, X, W, b, ts.M, cursor)
    else:
        fastml_margins_cols_f32(n_rows, d, K, X, W, b, ts.M, cursor)
    loss = fastml_softmax_block_cols(n_rows, K, ts.M, y, sw, ls.label_offset, ls.reference,
                                     ts.R, ts.L, ts.E, ts.S, ts.code)
    if floating is double:
        fastml_xt_r_cols_f64(n_rows, d, K, X, ts.R, grad, cursor)
    else:
        fastml_xt_r_cols_f32(n_rows, d, K, X, ts.R, grad, cursor)
    for k in range(K):
        for i in range(n_rows):
            grad_b[k] += ts.R[k * n_rows + i]
    return loss


cdef inline double sparse_dot(const floating *x, const int *idx, Py_ssize_t nnz,
                             const floating *w) noexcept nogil:
    """x . w over a CSR row's stored values, every product in float64 (float32 products
    would round each term to 7 digits; _rows.row_dot keeps the SGD loop's float32 arithmetic)."""
    cdef Py_ssize_t j
    cdef double s = 0.0
    for j in range(nnz):
        s += <double> x[j] * <double> w[idx[j]]
    return s


cdef double sparse_rows(const RowSource *src, Py_ssize_t first, Py_ssize_t n_rows,
                        const double *y, const double *sw, const floating *W,
                        const floating *b, const LossSpec *ls, ThreadScratch *ts,
                        double *grad, double *grad_b) noexcept nogil:
    """Loss of CSR rows first..first+n_rows; adds their gradient to grad and grad_b."""
    cdef Py_ssize_t i, k, nnz, K = ls.K, d = ls.d
    cdef const floating *x
    cdef const int *idx
    cdef double loss = 0.0
    for i in range(first, first + n_rows):
        get_row(src, i, &x, &idx, &nnz)
        for k in range(K):
            ts.M[k] = sparse_dot(x, idx, nnz, W + k * d) + <double> b[k]
        loss += sw[i] * loss_and_dloss(ls.kind, ls.label_offset, ls.reference, ts.M, &y[i], K,
                                       ts.dl)
        for k in range(K):
            if ts.dl[k] != 0.0:
                row_axpy_double(x, idx, nnz, sw[i] * ts.dl[k], grad + k * d)
            grad_b[k] += sw[i] * ts.dl[k]
    return loss


cdef void chunk_pass(const RowSource *src, Py_ssize_t first, Py_ssize_t n_rows,
                     Py_ssize_t B, const double *y, const double *sw, const floating *W,
                     const floating *b, const LossSpec *ls, ThreadScratch *ts,
                     double *partial) noexcept nogil:
    """Rows first..first+n_rows in blocks of B: partial = [loss, grad_b (K), grad (K, d)],
    summed in row order. Invariant: partial holds the sums over the blocks done so far."""
    cdef Py_ssize_t start, rows, K = ls.K, d = ls.d
    cdef const floating *dense = <const floating *> src.data
    cdef double *grad_b = partial + 1
    cdef double *grad = partial + 1 + K
    cdef fastml_prefetch_cursor cursor
    if src.indices != NULL:
        partial[0] = sparse_rows(src, first, n_rows, y, sw, W, b, ls, ts, grad, grad_b)
        return
    cursor.next = cursor.limit = <const char *> (dense + first * d)
    cursor.end = <const char *> (dense + src.n_rows * d)
    start = first
    while start < first + n_rows:
        rows = min(B, first + n_rows - start)
        partial[0] += dense_block(dense + start * d, rows, y + start, sw + start, W, b, ls, ts,
                                  &cursor, grad, grad_b)
        start += rows


def loss_grad(X, const double[::1] y, const double[::1] sample_weight,
              const floating[:, ::1] W, const floating[::1] b, double[:, ::1] grad,
              double[::1] grad_b, int loss, int label_offset, bint reference, int n_threads=1):
    """sum_i sw_i * loss_i at weights W (K, d), b (K) for class codes y (as float64; output
    k stands for code k + label_offset; `reference`: the LOG loss's code 0 has margin 0);
    writes its (sub)gradient into grad (K, d) and grad_b (K). `loss` is a code of _loss.pxd
    (Python: _sgd_fast.LOSSES). X is dense C-contiguous or CSR. The result has the same bits
    for every n_threads."""
    cdef RowSource src
    cdef LossSpec ls
    cdef Py_ssize_t n = y.shape[0], K = W.shape[0], d = W.shape[1]
    cdef Py_ssize_t stride = 1 + K + K * d, B = block_rows(d, sizeof(floating))
    cdef Py_ssize_t C, n_chunks, c, j, first
    cdef int T, t
    cdef double total = 0.0
    cdef double *partials
    cdef double *scratch
    cdef ThreadScratch ts
    cdef const floating *Wp
    row_source(X, W, &src)
    if (src.n_rows != n or sample_weight.shape[0] != n or b.shape[0] != K
            or grad.shape[0] != K or grad.shape[1] != d or grad_b.shape[0] != K):
        raise ValueError("loss_grad: shapes do not agree")
    ls.kind, ls.label_offset, ls.reference, ls.K, ls.d = loss, label_offset, reference, K, d
    grad[:, :] = 0.0
    grad_b[:] = 0.0
    if n == 0 or K == 0:
        return 0.0
    Wp = &W[0, 0] if d > 0 else NULL        # no features: W has no element to point at
    C = chunk_rows(n, stride)
    n_chunks = (n + C - 1) // C
    T = max(1, min(n_threads, fastml_max_threads(), <int> n_chunks))
    partials = <double *> calloc(n_chunks * stride, sizeof(double))
    scratch = scratch_alloc(T, B, K)
    if partials == NULL or scratch == NULL:
        free(partials); free(scratch)
        raise MemoryError()
    try:
        for c in prange(n_chunks, nogil=True, num_threads=T, schedule="static"):
            ts = thread_scratch(scratch, threadid(), B, K)
            first = c * C
            chunk_pass(&src, first, min(C, n - first), B, &y[0], &sample_weight[0], Wp, &b[0],
                       &ls, &ts, partials + c * stride)
        for c in range(n_chunks):             # the fixed order: chunk 0, 1, ...
            total += partials[c * stride]
            for j in range(K):
                grad_b[j] += partials[c * stride + 1 + j]
            for j in range(K * d):
                grad[j // d, j % d] += partials[c * stride + 1 + K + j]
    finally:
        free(partials); free(scratch)
    return total
