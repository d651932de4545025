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
#   mistake is appended at tail (its row, its signed coefficient per output, the weight seen
#   before it), and a budget drops the oldest by moving head. No Python and no allocation per
#   example. A row of weight s counts as s copies of it in a row (weighted_visits).
# Loop invariant of train_block, before row t: margins[t', k] (t' >= t) holds
#   sum over the still-stored mistakes from before the block of C[k, j] k(x_j, x_t'),
# and the block's own stored mistakes are new[:, first_new:n_new] (their G2 rows add the rest).
# One-vs-rest: output k makes its own mistakes; a row that is a mistake for any output is stored
# once, with coefficient y_k for the outputs that erred and 0 for the others.
from libc.stdint cimport int64_t
from libc.math cimport ceil, floor
from libc.string cimport memcpy
from cython cimport floating
from cython.parallel cimport prange

from .._core._blas cimport fm_dot, fm_gemm_abt, fm_gemv_rows
from .._core._csrc cimport (fastml_cpu_has_avx512, fastml_exp_array, fastml_kernel_decide,
                            fastml_kernel_spec, fastml_rbf_rows_f32, fastml_rbf_rows_f64,
                            fastml_tanh_rows_f32, fastml_tanh_rows_f64, fastml_voted_votes)
from .._core._typedefs cimport index_t

cdef enum:
    TRANSFORM_ROWS = 64     # kernel_block: rows per task, so a task's GEMM output (64 x n_b)
                            # is still in cache when the transform reads it
    SUM_ROWS = 32           # train_block: rows whose kernels against the stored mistakes are
                            # formed and summed while in cache (32 x M0 values)
    DECIDE_ROWS = 64        # kernel_decide: rows per thread task

# kernel_decide runs its AVX-512 copy on this CPU (csrc/fastml_kernel_avx512.h): its scores
# differ from the portable copy's in the last bits.
WIDE_DECIDE = bool(fastml_cpu_has_avx512())

# The packed model's columns are a multiple of this (FASTML_PACK_ALIGN, csrc/fastml_kernel_rows.h).
PACK_ALIGN = 16

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
    if p.kind == KERNEL_SIGMOID:    # the vector tanh of csrc/fastml_vexp.h, as predict uses
        if floating is double:
            fastml_tanh_rows_f64(out, out, n_a * n_b, g, c0)
        else:
            fastml_tanh_rows_f32(out, out, n_a * n_b, g, c0)
        return
    for a in range(n_a):            # poly
        row = out + a * n_b
        if p.degree == 2:
            for b in range(n_b):
                row[b] = <floating> ((g * row[b] + c0) * (g * row[b] + c0))
        else:
            for b in range(n_b):
                row[b] = <floating> int_power(g * row[b] + c0, p.degree)


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


cdef inline double weighted_visits(double s, double z, double q) noexcept nogil:
    """The weight of a row's mistake visits: a row of weight s is visited as s copies in a
    row (floor(s) visits of weight 1, then one of the fraction left), and a visit is a
    mistake while the margin z = t m <= 0; each mistake visit of weight u adds u q to z
    (q = k(x, x)). So: min(s, floor(-z / q) + 1) when q > 0; every visit when q <= 0 (the
    margin never rises). z <= 0 (the first visit is a mistake)."""
    cdef double needed
    if q <= 0.0:
        return s
    needed = floor(-z / q) + 1.0
    return needed if needed < s else s


def train_block(const floating[:, ::1] Xb, const double[:, ::1] Tb, const double[::1] sw_b,
                const index_t[::1] rows_b, floating[:, ::1] G1,
                floating[:, ::1] G2, bint given, const double[::1] sq_b, KernelParams params,
                floating[:, ::1] SV, double[::1] sq_sv,
                floating[:, ::1] C, double[::1] start_of, index_t[::1] row_of,
                Py_ssize_t head, Py_ssize_t tail, Py_ssize_t budget, double position0,
                double[:, ::1] margins, Py_ssize_t[:, ::1] new):
    """One sequential perceptron pass over the block rows Xb (B, d) with signed targets
    Tb (B, K) in {-1, +1} and weights sw_b (B,). G1 (B, tail - head): kernels against the
    stored mistakes (buffer rows head..tail-1); G2 (B, B): kernels within the block. Both are
    `given` (a user's kernel) or computed here from `params` (and the block's squared norms
    sq_b for rbf): G1 in chunks of rows whose kernel sums are taken while the chunk is in
    cache, G2 only in the rows of the block's mistakes (mistakes are few: most of the B x B
    block is never needed). Appends mistakes to the buffer (rows SV,
    squared norms sq_sv, coefficients C (K, capacity), the weight seen before each row
    start_of, training row numbers row_of; the caller guarantees capacity >= tail + B) and
    drops the oldest beyond `budget` (0 = keep all). position0: the weight seen before the
    block. margins (B, K) and new (2, B) are scratch: the buffer position and the block row
    of each mistake made in this block.

    Weights: a row of weight s is s visits in a row (weighted_visits); output k's
    coefficient grows by t_k times the weight of its mistake visits, what s copies of the row
    would add (weight 1: the lecture's update; weight 0: the row is skipped). Returns (head,
    tail, mistake visits)."""
    cdef Py_ssize_t B = Xb.shape[0], d = Xb.shape[1], K = Tb.shape[1]
    cdef Py_ssize_t M0 = tail - head, head0 = head, t, u, j, k, q, n_new = 0, first_new = 0
    cdef Py_ssize_t mistakes = 0, pos, c0, c1
    cdef double m, c, s, z, self_k, added, most, position = position0
    cdef floating self_dot
    cdef bint erred, rbf = params.kind == KERNEL_RBF
    if B == 0:
        return head, tail, 0
    if (G1.shape[0] != B or G1.shape[1] != M0 or G2.shape[0] != B or G2.shape[1] != B
            or C.shape[0] != K or SV.shape[0] < tail + B or margins.shape[0] < B
            or new.shape[0] != 2 or new.shape[1] < B or SV.shape[1] != d
            or Tb.shape[0] != B or rows_b.shape[0] != B or margins.shape[1] != K
            or sw_b.shape[0] != B
            or not 0 <= head <= tail or C.shape[1] != SV.shape[0]
            or start_of.shape[0] != SV.shape[0] or row_of.shape[0] != SV.shape[0]
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
            s = sw_b[t]
            if s == 0.0:                    # weight 0: the row is not there
                continue
            erred = False
            for k in range(K):
                m = margins[t, k]
                for q in range(first_new, n_new):
                    m += C[k, new[0, q]] * G2[new[1, q], t]
                margins[t, k] = m
                if Tb[t, k] * m <= 0.0:
                    erred = True
            if not erred:
                position += s
                continue
            self_k = 0.0
            if s > 1.0:                     # k(x_t, x_t): how far one visit moves the margin
                if given:
                    self_k = G2[t, t]
                else:
                    self_dot = fm_dot(<int> d, &Xb[t, 0], &Xb[t, 0])
                    transform_rows(&self_dot, 1, 1, &sq_b[t] if rbf else NULL,
                                   &sq_b[t] if rbf else NULL, &params)
                    self_k = self_dot
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
            most = 0.0
            for k in range(K):
                c = Tb[t, k]
                z = c * margins[t, k]
                added = 0.0
                if z <= 0.0:
                    added = 1.0 if s == 1.0 else weighted_visits(s, z, self_k)
                C[k, pos] = <floating> (c * added)
                most = max(most, added)
            mistakes += <Py_ssize_t> ceil(most)     # visits that erred for some output
            start_of[pos] = position
            row_of[pos] = rows_b[t]
            new[0, n_new] = pos
            new[1, n_new] = t
            n_new += 1
            tail += 1
            position += s
    return head, tail, mistakes


def kernel_decide(const double[:, ::1] X, const double[:, ::1] pack, KernelParams params,
                  double sq_max, double[:, ::1] scores, int n_threads=1, bint wide=True):
    """scores (n, K) = sum over the stored rows of coef * k(x_i, sv), in one pass per tile of
    rows (csrc/fastml_kernel_rows.h: fastml_kernel_decide). pack (d + 1 + K, m_pad): the
    stored rows transposed, their squared norms, the coefficients, zero-padded to a multiple
    of PACK_ALIGN columns; sq_max: the largest squared norm. Threads split the rows; each
    row's sum is the same whatever the split. wide=False: the portable copy even where the
    CPU has AVX-512 (see WIDE_DECIDE)."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], K = scores.shape[1], m_pad = pack.shape[1]
    cdef Py_ssize_t n_tasks, c, first
    cdef fastml_kernel_spec spec
    if (pack.shape[0] != d + 1 + K or m_pad % PACK_ALIGN or scores.shape[0] != n
            or not KERNEL_LINEAR <= params.kind <= KERNEL_SIGMOID or params.degree < 1):
        raise ValueError("kernel_decide: shapes or kernel parameters do not agree")
    if n == 0:
        return
    if m_pad == 0 or d == 0:
        scores[:, :] = 0.0
        return
    spec.kind, spec.degree = params.kind, params.degree
    spec.gamma, spec.coef0, spec.sq_max = params.gamma, params.coef0, sq_max
    n_tasks = (n + DECIDE_ROWS - 1) // DECIDE_ROWS
    with nogil:
        if n_threads > 1 and n_tasks > 1:
            for c in prange(n_tasks, num_threads=n_threads, schedule="static"):
                first = c * DECIDE_ROWS
                fastml_kernel_decide(&X[first, 0], min(<Py_ssize_t> DECIDE_ROWS, n - first), d,
                                     &pack[0, 0], m_pad, K, &spec, wide, &scores[first, 0])
        else:
            fastml_kernel_decide(&X[0, 0], n, d, &pack[0, 0], m_pad, K, &spec, wide,
                                 &scores[0, 0])


def voted_votes(const double[:, ::1] X, const double[:, ::1] pack, const int64_t[::1] starts,
                double[:, ::1] votes):
    """votes (n, K) = sum_j c_j sign(v_j . x_i + b_j) over each output's vectors (the voted
    perceptron, csrc/fastml_kernel_rows.h: fastml_voted_votes). pack (d + 2, m_pad): the
    vectors transposed, their intercepts, their counts; output k owns the columns
    [starts[k], starts[k + 1]), every start a multiple of PACK_ALIGN. One thread (the
    estimator has no n_jobs)."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], K = votes.shape[1], m_pad = pack.shape[1]
    cdef Py_ssize_t c
    if (pack.shape[0] != d + 2 or m_pad % PACK_ALIGN or votes.shape[0] != n
            or starts.shape[0] != K + 1 or K < 1):
        raise ValueError("voted_votes: shapes do not agree")
    for c in range(K + 1):
        if (starts[c] % PACK_ALIGN or not 0 <= starts[c] <= m_pad
                or (c and starts[c] < starts[c - 1])):
            raise ValueError("voted_votes: the output segments are not ordered packed columns")
    if n == 0:
        return
    with nogil:
        fastml_voted_votes(&X[0, 0], n, d, &pack[0, 0] if m_pad else NULL, m_pad, &starts[0], K,
                           &votes[0, 0])


def vector_exp(const double[::1] x, double[::1] out):
    """out = exp(x) by csrc/fastml_vexp.h (the rbf kernel's exp), for the tests."""
    if out.shape[0] != x.shape[0]:
        raise ValueError("vector_exp: x and out differ in length")
    if x.shape[0]:
        with nogil:
            fastml_exp_array(&x[0], &out[0], x.shape[0])


def vector_tanh(const double[::1] x, double[::1] out, double a=1.0, double b=-0.0):
    """out = tanh(a x + b) by csrc/fastml_vexp.h (the sigmoid kernel's tanh), for the tests."""
    if out.shape[0] != x.shape[0]:
        raise ValueError("vector_tanh: x and out differ in length")
    if x.shape[0]:
        with nogil:
            fastml_tanh_rows_f64(&x[0], &out[0], x.shape[0], a, b)
