# The kernelized perceptron of lecture 003 ("Finally the Kernel Trick!!!"): w is never formed;
# the model is its list of mistakes M, and a point is scored by sum_{i in M} y_i k(x_i, x).
#
# What it computes:
# - kernel_block: K[a, b] = k(A_a, B_b) for two blocks of rows, through one GEMM for all the dot
#   products and one fused pass that turns them into kernel values (003's "Common kernels"):
#     linear u.v | poly (gamma u.v + coef0)^degree | rbf exp(-gamma ||u - v||^2) with
#     ||u - v||^2 = ||u||^2 + ||v||^2 - 2 u.v from cached squared norms | sigmoid tanh(gamma u.v + coef0)
# - train_block: the perceptron's sequential pass over a block of B rows, given the kernels
#   between the block and the mistakes stored before it (G1, B x M0) and within the block
#   (G2, B x B). The stored mistakes live in one contiguous buffer, rows [head, tail): a
#   mistake is appended at tail (its row, its signed coefficient per output, its step), and a
#   budget drops the oldest by moving head. No Python and no allocation per example.
# Loop invariant of train_block, before row t: margins[t', k] (t' >= t) holds
#   sum over the still-stored mistakes from before the block of C[k, j] k(x_j, x_t'),
# and the block's own stored mistakes are new[:, first_new:n_new] (their G2 rows add the rest).
# One-vs-rest: output k makes its own mistakes; a row that is a mistake for any output is stored
# once, with coefficient y_k for the outputs that erred and 0 for the others.
from libc.math cimport tanh
from libc.string cimport memcpy
from cython cimport floating
from cython.parallel cimport prange

from .._core._blas cimport fm_dot, fm_gemm_abt, fm_gemv_rows
from .._core._csrc cimport fastml_rbf_rows_f64, fastml_rbf_rows_f32
from .._core._typedefs cimport index_t

cdef enum:
    TRANSFORM_ROWS = 64     # kernel_block: rows per task, so a task's GEMM output (64 x n_b)
                            # is still in cache when the transform reads it
    SUM_ROWS = 32           # train_block: rows whose kernels against the stored mistakes are
                            # formed and summed while in cache (32 x M0 values)

cdef enum:
    KERNEL_LINEAR = 0
    KERNEL_POLY = 1
    KERNEL_RBF = 2
    KERNEL_SIGMOID = 3

KERNELS = {"linear": KERNEL_LINEAR, "poly": KERNEL_POLY, "rbf": KERNEL_RBF,
           "sigmoid": KERNEL_SIGMOID}

ctypedef struct KernelParams:
    int kind
    double gamma
    double coef0
    int degree


cdef inline double int_power(double base, int degree) noexcept nogil:
    """base ** degree for degree >= 1 by squaring (exact for small integer bases)."""
    cdef double result = 1.0
    while degree > 0:
        if degree & 1:
            result *= base
        base *= base
        degree >>= 1
    return result


cdef void transform_rows(floating *out, Py_ssize_t n_a, Py_ssize_t n_b, const double *sq_a,
                         const double *sq_b, const KernelParams *p) noexcept nogil:
    """Dot products out[a, b] = A_a . B_b -> kernel values, in place (one pass)."""
    cdef Py_ssize_t a, b
    cdef floating *row
    cdef double g = p.gamma, c0 = p.coef0
    if p.kind == KERNEL_LINEAR:
        return
    if p.kind == KERNEL_RBF:
        if floating is double:
            fastml_rbf_rows_f64(out, n_a, n_b, sq_a, sq_b, g)
        else:
            fastml_rbf_rows_f32(out, n_a, n_b, sq_a, sq_b, g)
        return
    for a in range(n_a):
        row = out + a * n_b
        if p.kind == KERNEL_POLY:
            if p.degree == 2:
                for b in range(n_b):
                    row[b] = <floating> ((g * row[b] + c0) * (g * row[b] + c0))
            else:
                for b in range(n_b):
                    row[b] = <floating> int_power(g * row[b] + c0, p.degree)
        else:
            for b in range(n_b):
                row[b] = <floating> tanh(g * row[b] + c0)


def kernel_block(const floating[:, ::1] A, const floating[:, ::1] B, const double[::1] sq_a,
                 const double[::1] sq_b, floating[:, ::1] out, KernelParams params,
                 int n_threads=1):
    """out (n_a, n_b) = k(A_a, B_b). sq_a / sq_b: squared row norms (used by rbf only)."""
    cdef Py_ssize_t n_a = A.shape[0], n_b = B.shape[0], d = A.shape[1]
    cdef Py_ssize_t n_chunks, c, first, rows, step
    if n_a == 0 or n_b == 0:
        return
    if B.shape[1] != d or out.shape[0] != n_a or out.shape[1] != n_b:
        raise ValueError("kernel_block: shapes do not agree")
    if params.kind == KERNEL_RBF and (sq_a.shape[0] != n_a or sq_b.shape[0] != n_b):
        raise ValueError("kernel_block: rbf needs the squared norms of both blocks")
    step = TRANSFORM_ROWS
    n_chunks = (n_a + step - 1) // step
    with nogil:
        for c in prange(n_chunks, num_threads=max(1, n_threads), schedule="static"):
            first = c * step
            rows = min(step, n_a - first)
            fm_gemm_abt(<int> rows, <int> n_b, <int> d, &A[first, 0], &B[0, 0], &out[first, 0])
            transform_rows(&out[first, 0], rows, n_b,
                           &sq_a[first] if sq_a.shape[0] else NULL,
                           &sq_b[0] if sq_b.shape[0] else NULL, &params)


def train_block(const floating[:, ::1] Xb, const double[:, ::1] Tb,
                const index_t[::1] rows_b, floating[:, ::1] G1,
                floating[:, ::1] G2, bint given, const double[::1] sq_b, KernelParams params,
                floating[:, ::1] SV, double[::1] sq_sv,
                floating[:, ::1] C, index_t[::1] step_of, index_t[::1] row_of,
                Py_ssize_t head, Py_ssize_t tail, Py_ssize_t budget, index_t step0,
                double[:, ::1] margins, Py_ssize_t[:, ::1] new):
    """One sequential perceptron pass over the block rows Xb (B, d) with signed targets
    Tb (B, K) in {-1, +1}. G1 (B, tail - head): kernels against the stored mistakes (buffer rows
    head..tail-1); G2 (B, B): kernels within the block. Both are `given` (a user's kernel) or
    computed here from `params` (and the block's squared norms sq_b for rbf): G1 in chunks of
    rows whose kernel sums are taken while the chunk is in cache, G2 only in the rows of the
    block's mistakes (mistakes are few: most of the B x B block is never needed). Appends mistakes to the buffer (rows SV,
    squared norms sq_sv, coefficients C (K, capacity), step numbers step_of, training row
    numbers row_of; the caller guarantees capacity >= tail + B) and drops the oldest beyond
    `budget` (0 = keep all). margins (B, K) and new (2, B) are scratch: the buffer position and
    the block row of each mistake made in this block. Returns (head, tail, mistakes)."""
    cdef Py_ssize_t B = Xb.shape[0], d = Xb.shape[1], K = Tb.shape[1]
    cdef Py_ssize_t M0 = tail - head, head0 = head, t, u, j, k, q, n_new = 0, first_new = 0
    cdef Py_ssize_t mistakes = 0, pos, c0, c1
    cdef double m, c, s
    cdef bint erred, rbf = params.kind == KERNEL_RBF
    if B == 0:
        return head, tail, 0
    if (G1.shape[0] != B or G1.shape[1] != M0 or G2.shape[0] != B or G2.shape[1] != B
            or C.shape[0] != K or SV.shape[0] < tail + B or margins.shape[0] < B
            or new.shape[0] != 2 or new.shape[1] < B or SV.shape[1] != d
            or Tb.shape[0] != B or rows_b.shape[0] != B or margins.shape[1] != K
            or not 0 <= head <= tail or C.shape[1] != SV.shape[0]
            or step_of.shape[0] != SV.shape[0] or row_of.shape[0] != SV.shape[0]
            or (rbf and (sq_b.shape[0] != B or sq_sv.shape[0] != SV.shape[0]))):
        raise ValueError("train_block: shapes do not agree")
    with nogil:
        c0 = 0
        while c0 < B:                       # kernel sums over the mistakes stored before
            c1 = min(c0 + <Py_ssize_t> SUM_ROWS, B)
            if not given and M0 > 0:
                fm_gemm_abt(<int> (c1 - c0), <int> M0, <int> d, &Xb[c0, 0], &SV[head0, 0],
                            &G1[c0, 0])
                transform_rows(&G1[c0, 0], c1 - c0, M0, &sq_b[c0] if rbf else NULL,
                               &sq_sv[head0] if rbf else NULL, &params)
            for t in range(c0, c1):
                for k in range(K):
                    margins[t, k] = fm_dot(<int> M0, &C[k, head0], &G1[t, 0]) if M0 > 0 else 0.0
            c0 = c1
        for t in range(B):
            erred = False
            for k in range(K):
                m = margins[t, k]
                for q in range(first_new, n_new):
                    m += C[k, new[0, q]] * G2[new[1, q], t]
                margins[t, k] = m
                if Tb[t, k] * m <= 0.0:
                    erred = True
            if not erred:
                continue
            mistakes += 1
            if not given and t + 1 < B:   # kernels of this mistake with the rows after it
                fm_gemv_rows(<int> (B - t - 1), <int> d, &Xb[t + 1, 0], &Xb[t, 0], &G2[t, t + 1])
                transform_rows(&G2[t, t + 1], 1, B - t - 1, &sq_b[t] if rbf else NULL,
                               &sq_b[t + 1] if rbf else NULL, &params)
            if budget > 0 and tail - head >= budget:     # drop the oldest stored mistake
                if head < head0 + M0:       # from before the block: undo its part of the sums
                    for u in range(t + 1, B):
                        for k in range(K):
                            margins[u, k] -= C[k, head] * G1[u, head - head0]
                else:
                    first_new += 1
                head += 1
            pos = tail
            memcpy(&SV[pos, 0], &Xb[t, 0], d * sizeof(floating))
            if rbf:
                sq_sv[pos] = sq_b[t]
            for k in range(K):
                c = Tb[t, k]
                C[k, pos] = <floating> (c if c * margins[t, k] <= 0.0 else 0.0)
            step_of[pos] = step0 + t + 1
            row_of[pos] = rows_b[t]
            new[0, n_new] = pos
            new[1, n_new] = t
            n_new += 1
            tail += 1
    return head, tail, mistakes
