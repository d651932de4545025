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
# term and divides by the total weight. The weights W, b are float64 whatever the dtype of X
# (float32 rows are converted as they are read), so a solver's iterate is never rounded.
#
# Newton's Hessian (the `hessian` option, logistic loss, dense X): in the same pass, each row
# [x, 1] goes into a buffer of HESSIAN_ROWS rows with its curvature weights c_kl
# (csrc/fastml_batch.h's fastml_logistic_curvature), and a full buffer is added to the
# Hessian's blocks by csrc/fastml_gram.h, once per pair of outputs (the rows scaled by
# sqrt(|c|), sign + on the diagonal blocks and - off it): sum_i c_i,kl [x_i, 1][x_i, 1]^T at
# the core's multiply-add rate, while the rows are still in cache, and no BLAS call (whose
# thread pool inside these threads oversubscribed the cores). The loss and gradient are the
# same bits with or without it. The Hessian's sums follow a fixed order too (chunks in order,
# buffers flushed at row counts set by the shapes), so it is the same for any n_jobs.
from cython.parallel cimport prange, threadid
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memset
from cython cimport floating

from libc.math cimport sqrt, fabs
import numpy as np

from .._core._csrc cimport (fastml_max_threads, fastml_margins_f64, fastml_margins_f32,
                              fastml_xt_r_f64, fastml_xt_r_f32, fastml_logistic_block,
                              fastml_softmax_block, fastml_prefetch_cursor,
                              fastml_margins_cols_f64, fastml_margins_cols_f32,
                              fastml_xt_r_cols_f64, fastml_xt_r_cols_f32,
                              fastml_softmax_block_cols, fastml_cpu_has_avx512,
                              fastml_logistic_curvature, fastml_gram_stride,
                              fastml_gram_upper, fastml_gram_copy, fastml_widen_f32)
from ._loss cimport loss_and_dloss, LOSS_LOG
from ._rows cimport RowSource, row_source_of, get_row, row_axpy_double

# The multinomial pass runs its AVX-512 copy here (csrc/fastml_batch_avx512.h): its sums round
# once per multiply-add, so they differ from the portable copy's in the last bits. Asked at
# import, before any thread does; so is the copy of the Hessian's loops (csrc/fastml_gram.h).
AVX512_COPY = bool(fastml_cpu_has_avx512())
GRAM_COPY = ("plain", "avx2+fma", "avx512")[fastml_gram_copy()]

cdef enum:
    # A dense block is at most BLOCK_BYTES of X in float64 (8 rows of 100 features, at most
    # MAX_BLOCK_ROWS rows; float32 X is cut the same way and widened, see dense_block): the
    # block, the FASTML_PREFETCH_AHEAD (16 KB) of rows requested
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
    # Newton's Hessian: rows buffered per flush (32 rows of 104 doubles = 26 KB: the buffer
    # stays in L1 while csrc/fastml_gram.h's tiles sweep it), and the groups of consecutive
    # chunks that share one Hessian partial, within HESSIAN_BUDGET doubles.
    HESSIAN_ROWS = 32
    HESSIAN_BUDGET = 1 << 22


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
    double *wide          # (block_rows, d) a float32 block widened to float64 (else unused)


ctypedef struct HessianScratch:
    # One thread's Hessian buffer (NULL Z: no Hessian asked for).
    double *Z             # (HESSIAN_ROWS, s) the buffered rows [x, 1, 0...]
    double *C             # (HESSIAN_ROWS, pairs) their curvature weights
    double *T             # (HESSIAN_ROWS, s) one pair's scaled rows (K > 1)
    double *E             # (K) fastml_logistic_curvature's scratch
    double *H             # the group's (pairs, s, s) partial sums (upper triangles)
    Py_ssize_t rows       # rows in the buffer
    Py_ssize_t s          # fastml_gram_stride(d + 1): d + 1 rounded up to 8 doubles
    Py_ssize_t pairs      # K (K + 1) / 2
    int copy              # which copy of csrc/fastml_gram.h runs


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


cdef inline Py_ssize_t scratch_size(Py_ssize_t B, Py_ssize_t K, Py_ssize_t wide) noexcept nogil:
    return 3 * B * K + 3 * B + K + B * wide


cdef double *scratch_alloc(int n_threads, Py_ssize_t B, Py_ssize_t K,
                           Py_ssize_t wide) noexcept nogil:
    """One block of every thread's ThreadScratch buffers, with B x `wide` doubles for the
    widened float32 block (0 for float64 X) (NULL when out of memory)."""
    return <double *> malloc(n_threads * scratch_size(B, K, wide) * sizeof(double))


cdef inline ThreadScratch thread_scratch(double *base, int t, Py_ssize_t B,
                                         Py_ssize_t K, Py_ssize_t wide) noexcept nogil:
    """Thread t's slice of scratch_alloc's block."""
    cdef ThreadScratch ts
    ts.M = base + t * scratch_size(B, K, wide)
    ts.R = ts.M + B * K
    ts.E = ts.R + B * K
    ts.L = ts.E + B * K
    ts.S = ts.L + B
    ts.code = ts.S + B
    ts.dl = ts.code + B
    ts.wide = ts.dl + K
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


cdef void hessian_flush(HessianScratch *hs) noexcept nogil:
    """Add the buffered rows to the group's Hessian blocks: for each pair of outputs (k, l <=
    k), the rows scaled by sqrt(|c|) go to fastml_gram_upper with sign + on the diagonal
    blocks (c >= 0) and - off it (c <= 0). One output: the buffered rows are scaled already."""
    cdef Py_ssize_t r, j, p, k, s = hs.s, pairs = hs.pairs
    cdef double scale
    if hs.rows == 0:
        return
    if pairs == 1:
        fastml_gram_upper(hs.Z, hs.rows, s, 1.0, hs.H, hs.copy)
        hs.rows = 0
        return
    k = 0
    for p in range(pairs):
        for r in range(hs.rows):
            scale = sqrt(fabs(hs.C[r * pairs + p]))
            for j in range(s):
                hs.T[r * s + j] = scale * hs.Z[r * s + j]
        if p == k * (k + 1) // 2 + k:          # pair p = (k, k): a diagonal block
            fastml_gram_upper(hs.T, hs.rows, s, 1.0, hs.H + p * s * s, hs.copy)
            k += 1
        else:
            fastml_gram_upper(hs.T, hs.rows, s, -1.0, hs.H + p * s * s, hs.copy)
    hs.rows = 0


cdef void hessian_rows(const floating *X, Py_ssize_t n_rows, Py_ssize_t d, const double *M,
                       const double *sw, const LossSpec *ls,
                       HessianScratch *hs) noexcept nogil:
    """Buffer a block's rows [x, 1] with their curvature weights (margins M output-major),
    flushing the buffer whenever it fills. One output: the rows go in scaled by sqrt(c)."""
    cdef Py_ssize_t r, j, i = 0, take
    cdef double scale
    cdef double *z
    while i < n_rows:
        if hs.rows == HESSIAN_ROWS:
            hessian_flush(hs)
        take = min(n_rows - i, HESSIAN_ROWS - hs.rows)
        curvature(M, n_rows, i, take, sw, ls, hs)
        for r in range(take):
            scale = sqrt(hs.C[hs.rows + r]) if hs.pairs == 1 else 1.0
            z = hs.Z + (hs.rows + r) * hs.s
            for j in range(d):
                z[j] = scale * <double> X[(i + r) * d + j]
            z[d] = scale
        hs.rows += take
        i += take


cdef void curvature(const double *M, Py_ssize_t n_rows, Py_ssize_t first, Py_ssize_t take,
                    const double *sw, const LossSpec *ls, HessianScratch *hs) noexcept nogil:
    """The curvature weights of rows first..first+take of a block of n_rows rows whose margins
    M are output-major, into the buffer after its hs.rows rows."""
    cdef Py_ssize_t r, k
    cdef double *out = hs.C + hs.rows * hs.pairs
    cdef double *m = hs.E + ls.K
    if ls.K == 1:                   # output-major is contiguous: the rows in one call
        fastml_logistic_curvature(take, 1, M + first, sw + first, ls.reference, out, hs.E)
        return
    for r in range(take):           # one row at a time, its K margins gathered
        for k in range(ls.K):
            m[k] = M[k * n_rows + first + r]
        fastml_logistic_curvature(1, ls.K, m, sw + first + r, ls.reference,
                                  out + r * hs.pairs, hs.E)


cdef double dense_block(const floating *X, Py_ssize_t n_rows, const double *y,
                        const double *sw, const double *W, const double *b,
                        const LossSpec *ls, ThreadScratch *ts, fastml_prefetch_cursor *cursor,
                        double *grad, double *grad_b, HessianScratch *hs) noexcept nogil:
    """Loss of one dense block (in L1); adds its gradient to grad (K, d) and grad_b (K), and
    its rows to the Hessian buffer when one is given (hs.Z). The margins and R^T X loops
    request the rows ahead through `cursor` as they go. A float32 block is widened to
    float64 once (ts.wide, requesting the rows ahead meanwhile) and takes the float64 loops:
    the same products in the same order, so the bits of float64 X holding the same values."""
    cdef Py_ssize_t i, k, K = ls.K, d = ls.d
    cdef double loss
    cdef fastml_prefetch_cursor none
    if floating is float:
        fastml_widen_f32(n_rows * d, X, ts.wide, cursor)
        none.next = none.limit = none.end = <const char *> ts.wide    # requests nothing
        return dense_block[double](ts.wide, n_rows, y, sw, W, b, ls, ts, &none, grad, grad_b,
                                   hs)
    if ls.kind == LOSS_LOG and K > 1:
        return softmax_block(X, n_rows, y, sw, W, b, ls, ts, cursor, grad, grad_b, hs)
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
    if hs.Z != NULL:                 # K = 1 here: row-major margins are output-major too
        hessian_rows(X, n_rows, d, ts.M, sw, ls, hs)
    if floating is double:
        fastml_xt_r_f64(n_rows, d, K, X, ts.R, grad, cursor)
    else:
        fastml_xt_r_f32(n_rows, d, K, X, ts.R, grad, cursor)
    for i in range(n_rows):
        for k in range(K):
            grad_b[k] += ts.R[i * K + k]
    return loss


cdef double softmax_block(const floating *X, Py_ssize_t n_rows, const double *y,
                          const double *sw, const double *W, const double *b,
                          const LossSpec *ls, ThreadScratch *ts,
                          fastml_prefetch_cursor *cursor, double *grad,
                          double *grad_b, HessianScratch *hs) noexcept nogil:
    """dense_block for the softmax over K > 1 outputs: the margins and residuals output-major
    (ts.M[k * n_rows + i]), so the loss runs across rows and R^T X takes the outputs in
    register tiles (csrc/fastml_simd.h); the same sums in the same order as dense_block's."""
    cdef Py_ssize_t i, k, K = ls.K, d = ls.d
    cdef double loss
    if floating is double:
        fastml_margins_cols_f64(n_rows, d, K, X, W, b, ts.M, cursor)
    else:
        fastml_margins_cols_f32(n_rows, d, K, X, W, b, ts.M, cursor)
    if hs.Z != NULL:                 # before the loss, which overwrites nothing of M
        hessian_rows(X, n_rows, d, ts.M, sw, ls, hs)
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
                             const double *w) noexcept nogil:
    """x . w over a CSR row's stored values, every product in float64 (float32 products
    would round each term to 7 digits; _rows.row_dot keeps the SGD loop's float32 arithmetic)."""
    cdef Py_ssize_t j
    cdef double s = 0.0
    for j in range(nnz):
        s += <double> x[j] * w[idx[j]]
    return s


cdef double sparse_rows(const RowSource *src, const floating *values, Py_ssize_t first,
                        Py_ssize_t n_rows, const double *y, const double *sw, const double *W,
                        const double *b, const LossSpec *ls, ThreadScratch *ts,
                        double *grad, double *grad_b) noexcept nogil:
    """Loss of CSR rows first..first+n_rows (values: src's data, typed); adds their gradient
    to grad and grad_b."""
    cdef Py_ssize_t i, k, nnz, K = ls.K, d = ls.d
    cdef const floating *x = values
    cdef const int *idx
    cdef double loss = 0.0
    for i in range(first, first + n_rows):
        get_row(src, i, &x, &idx, &nnz)
        for k in range(K):
            ts.M[k] = sparse_dot(x, idx, nnz, W + k * d) + b[k]
        loss += sw[i] * loss_and_dloss(ls.kind, ls.label_offset, ls.reference, ts.M, &y[i], K,
                                       ts.dl)
        for k in range(K):
            if ts.dl[k] != 0.0:
                row_axpy_double(x, idx, nnz, sw[i] * ts.dl[k], grad + k * d)
            grad_b[k] += sw[i] * ts.dl[k]
    return loss


cdef void chunk_pass(const RowSource *src, const floating *values, Py_ssize_t first,
                     Py_ssize_t n_rows, Py_ssize_t B, const double *y, const double *sw,
                     const double *W, const double *b, const LossSpec *ls, ThreadScratch *ts,
                     double *partial, HessianScratch *hs) noexcept nogil:
    """Rows first..first+n_rows in blocks of B: partial = [loss, grad_b (K), grad (K, d)],
    summed in row order, and their Hessian added to hs.H (flushed at the chunk's end, so a
    chunk's sums do not depend on its neighbours). Invariant: partial holds the sums over
    the blocks done so far."""
    cdef Py_ssize_t start, rows, K = ls.K, d = ls.d
    cdef const floating *dense = values
    cdef double *grad_b = partial + 1
    cdef double *grad = partial + 1 + K
    cdef fastml_prefetch_cursor cursor
    if src.indices != NULL:
        partial[0] = sparse_rows(src, values, first, n_rows, y, sw, W, b, ls, ts, grad, grad_b)
        return
    cursor.next = cursor.limit = <const char *> (dense + first * d)
    cursor.end = <const char *> (dense + src.n_rows * d)
    start = first
    while start < first + n_rows:
        rows = min(B, first + n_rows - start)
        partial[0] += dense_block(dense + start * d, rows, y + start, sw + start, W, b, ls, ts,
                                  &cursor, grad, grad_b, hs)
        start += rows
    if hs.Z != NULL:
        hessian_flush(hs)


cdef int hessian_scratch_init(HessianScratch *hs, int n_threads, Py_ssize_t q,
                              Py_ssize_t K) noexcept nogil:
    """Every thread's Hessian buffers, the columns past [x, 1] zero (0, or -1 when out of
    memory)."""
    cdef int t
    cdef Py_ssize_t pairs = K * (K + 1) // 2, s = fastml_gram_stride(q)
    for t in range(n_threads):
        hs[t].s, hs[t].pairs, hs[t].rows, hs[t].H = s, pairs, 0, NULL
        hs[t].copy = fastml_gram_copy()
        hs[t].Z = <double *> calloc(HESSIAN_ROWS * s, sizeof(double))
        hs[t].T = <double *> calloc(HESSIAN_ROWS * s, sizeof(double))
        hs[t].C = <double *> malloc(HESSIAN_ROWS * pairs * sizeof(double))
        hs[t].E = <double *> malloc(2 * K * sizeof(double))
        if hs[t].Z == NULL or hs[t].T == NULL or hs[t].C == NULL or hs[t].E == NULL:
            return -1
    return 0


cdef void hessian_scratch_free(HessianScratch *hs, int n_threads) noexcept nogil:
    cdef int t
    for t in range(n_threads):
        free(hs[t].Z); free(hs[t].T); free(hs[t].C); free(hs[t].E)


cdef double run_pass(const RowSource *src, const floating *values, Py_ssize_t n,
                     const double *y, const double *sw, const double *W, const double *b,
                     const LossSpec *ls, int n_threads, double[:, ::1] grad,
                     double[::1] grad_b, double *hessian) except? -1.0:
    """The pass over the rows (see loss_grad); hessian: NULL, or the zeroed (pairs, s, s)
    output of the Hessian's blocks' upper triangles (s = fastml_gram_stride(d + 1))."""
    cdef Py_ssize_t K = ls.K, d = ls.d, q = d + 1, pairs = K * (K + 1) // 2
    cdef Py_ssize_t stride = 1 + K + K * d, B = block_rows(d, sizeof(double))
    cdef Py_ssize_t C, n_chunks, n_groups, per_group, c, g, j, first
    cdef Py_ssize_t h_size = pairs * fastml_gram_stride(q) * fastml_gram_stride(q)
    cdef int T, t
    cdef double total = 0.0
    cdef double *partials = NULL
    cdef double *scratch = NULL
    cdef double *h_partials = NULL
    cdef HessianScratch *hs = NULL
    cdef HessianScratch no_hessian
    cdef ThreadScratch ts
    C = chunk_rows(n, stride)
    n_chunks = (n + C - 1) // C
    per_group = 1                   # chunks sharing a Hessian partial (by the shapes only)
    if hessian != NULL:
        per_group = (n_chunks + max(1, HESSIAN_BUDGET // h_size) - 1) // max(
            1, HESSIAN_BUDGET // h_size)
    n_groups = (n_chunks + per_group - 1) // per_group
    T = max(1, min(n_threads, fastml_max_threads(), <int> n_groups))
    no_hessian.Z = NULL
    try:
        partials = <double *> calloc(n_chunks * stride, sizeof(double))
        scratch = scratch_alloc(T, B, K, d if floating is float else 0)
        if partials == NULL or scratch == NULL:
            raise MemoryError()
        if hessian != NULL:
            h_partials = <double *> calloc(n_groups * h_size, sizeof(double))
            hs = <HessianScratch *> calloc(T, sizeof(HessianScratch))
            if h_partials == NULL or hs == NULL or hessian_scratch_init(hs, T, q, K) != 0:
                raise MemoryError()
        for g in prange(n_groups, nogil=True, num_threads=T, schedule="static"):
            t = threadid()
            ts = thread_scratch(scratch, t, B, K, d if floating is float else 0)
            if hessian != NULL:
                hs[t].H = h_partials + g * h_size
            for c in range(g * per_group, min(n_chunks, (g + 1) * per_group)):
                first = c * C
                chunk_pass(src, values, first, min(C, n - first), B, y, sw, W, b, ls, &ts,
                           partials + c * stride, &hs[t] if hessian != NULL else &no_hessian)
        for c in range(n_chunks):             # the fixed order: chunk 0, 1, ...
            total += partials[c * stride]
            for j in range(K):
                grad_b[j] += partials[c * stride + 1 + j]
            for j in range(K * d):
                grad[j // d, j % d] += partials[c * stride + 1 + K + j]
        if hessian != NULL:
            for g in range(n_groups):         # and group 0, 1, ...
                for j in range(h_size):
                    hessian[j] += h_partials[g * h_size + j]
    finally:
        if hs != NULL:
            hessian_scratch_free(hs, T)
        free(hs); free(h_partials); free(partials); free(scratch)
    return total


def loss_grad(X, const double[::1] y, const double[::1] sample_weight, W, b,
              double[:, ::1] grad, double[::1] grad_b, int loss, int label_offset,
              bint reference, int n_threads=1, hessian=None):
    """sum_i sw_i * loss_i at weights W (K, d), b (K) for class codes y (as float64; output
    k stands for code k + label_offset; `reference`: the LOG loss's code 0 has margin 0);
    writes its (sub)gradient into grad (K, d) and grad_b (K). `loss` is a code of _loss.pxd
    (Python: _sgd_fast.LOSSES). X is dense C-contiguous or CSR, float32 or float64; W and b
    are used in float64 (float32 values convert exactly). The result has the same bits for
    every n_threads.

    hessian (LOG loss, dense X only): a float64 array of shape (K (K + 1) / 2, d + 1, d + 1),
    overwritten with the Hessian blocks of the summed loss, sum_i c_i,kl [x_i, 1][x_i, 1]^T
    for the pairs of outputs (k, l <= k), pair k (k + 1) / 2 + l (csrc/fastml_batch.h's
    fastml_logistic_curvature gives c); the loss and gradient are the same bits as without
    it, and so is the Hessian for every n_threads."""
    cdef RowSource src
    cdef LossSpec ls
    cdef const double[:, ::1] W64 = np.ascontiguousarray(W, dtype=np.float64)
    cdef const double[::1] b64 = np.ascontiguousarray(b, dtype=np.float64)
    cdef Py_ssize_t n = y.shape[0], K = W64.shape[0], d = W64.shape[1], q = d + 1
    cdef double[:, :, ::1] H, U
    cdef double *hessian_out = NULL
    cdef const double *Wp
    cdef double total
    if X.dtype == np.float32:
        row_source_of(X, d, <float> 0, &src)
    else:
        row_source_of(X, d, <double> 0, &src)
    if (src.n_rows != n or sample_weight.shape[0] != n or b64.shape[0] != K
            or grad.shape[0] != K or grad.shape[1] != d or grad_b.shape[0] != K):
        raise ValueError("loss_grad: shapes do not agree")
    if hessian is not None:
        if loss != LOSS_LOG or src.indices != NULL:
            raise ValueError("loss_grad: the Hessian is for the logistic loss on dense X")
        H = hessian
        if H.shape[0] != K * (K + 1) // 2 or H.shape[1] != q or H.shape[2] != q:
            raise ValueError("loss_grad: the Hessian's shape does not agree")
        U = np.zeros((H.shape[0], fastml_gram_stride(q), fastml_gram_stride(q)))
        hessian_out = &U[0, 0, 0]
    ls.kind, ls.label_offset, ls.reference, ls.K, ls.d = loss, label_offset, reference, K, d
    grad[:, :] = 0.0
    grad_b[:] = 0.0
    if n == 0 or K == 0:
        if hessian is not None:
            H[:, :, :] = 0.0
        return 0.0
    Wp = &W64[0, 0] if d > 0 else NULL      # no features: W has no element to point at
    if X.dtype == np.float32:
        total = run_pass(&src, <const float *> src.data, n, &y[0], &sample_weight[0], Wp,
                         &b64[0], &ls, n_threads, grad, grad_b, hessian_out)
    else:
        total = run_pass(&src, <const double *> src.data, n, &y[0], &sample_weight[0], Wp,
                         &b64[0], &ls, n_threads, grad, grad_b, hessian_out)
    if hessian_out != NULL:
        _symmetric_blocks(U, H)
    return total


cdef void _symmetric_blocks(const double[:, :, ::1] U, double[:, :, ::1] H) noexcept:
    """H's (q, q) blocks from the upper triangles of U's (s, s) ones."""
    cdef Py_ssize_t p, i, j
    for p in range(H.shape[0]):
        for i in range(H.shape[1]):
            for j in range(i, H.shape[2]):
                H[p, i, j] = H[p, j, i] = U[p, i, j]


def gram_copy_agrees(const double[:, ::1] T, double sign):
    """(the Gram of this CPU's copy, the plain copy's) of csrc/fastml_gram.h for a buffer T of
    s = fastml_gram_stride(columns) columns: the tests compare the copies."""
    cdef Py_ssize_t s = T.shape[1]
    if s != fastml_gram_stride(s):
        raise ValueError("gram_copy_agrees: the columns must be a multiple of 8")
    fast, plain = np.zeros((s, s)), np.zeros((s, s))
    cdef double[:, ::1] F = fast, P = plain
    if T.shape[0]:
        fastml_gram_upper(&T[0, 0], T.shape[0], s, sign, &F[0, 0], fastml_gram_copy())
        fastml_gram_upper(&T[0, 0], T.shape[0], s, sign, &P[0, 0], 0)
    return np.triu(fast), np.triu(plain)
