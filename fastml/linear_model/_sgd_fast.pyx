# The one stochastic-gradient loop of fastml: every linear online learner runs through it.
#
# What it computes: one pass over the rows in `order`, in mini-batches of `batch_size` rows
# (1 = plain SGD, lecture 000's "one-sample estimate"), of
#     w_k <- (1 - eta*alpha) w_k - eta * sum_{i in batch} sw_i * dloss_k(m_i, y_i) * x_i / |batch|
#     b_k <- b_k - eta * sum_{i in batch} sw_i * dloss_k(m_i, y_i) / |batch|
# for K linear outputs m_k = w_k.x + b_k, where dloss is the derivative of the loss in the margin:
#   LOG         softmax cross-entropy (binary: logistic, 004's (sigma(w.x+b) - y) x_j); with
#               `reference` set, label 0 has the fixed margin 0 (002's R-1 weight vectors)
#   HINGE       max(0, 1 - t m) per output, t = +1 for the output's class, -1 otherwise (003)
#   PERCEPTRON  max(0, -t m), a mistake when t m <= 0 (003: perceptron = SGD on this, eta = 1)
#   SQUARED     (m - y)^2 / 2 per output (regression, 001)
# Step sizes (001/000): constant eta0; inverse eta0/t (000's alpha/t); decay eta0/(1+d*epoch)
# (001, t = epoch); optimal 1/(alpha (t0 + t)) (Bottou); adagrad eta0/sqrt(sum g^2) per weight.
#
# Tricks that keep a step O(nnz(x) K), not O(n_features K):
# - L2 is a scalar: w = scale * v, so the shrink (1 - eta*alpha) multiplies `scale` only.
# - Averaging is lazy: with S_T = sum_{t<=T} w_t kept as A + B v, a step v += D gives
#   A -= B D and B += scale, both O(nnz); the average is (A + B v) / T, formed once at the end.
# Loop invariant (between batches): w_k = scale * W[k], and, when averaging,
# A[k] + B * W[k] = sum of the weight vectors after each averaged step so far.
from libc.math cimport exp, log, sqrt, isfinite
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memset, memcpy
from cython cimport floating

from ._loss cimport LOSS_LOG, LOSS_HINGE, LOSS_PERCEPTRON, LOSS_SQUARED, loss_and_dloss
from ._rows cimport get_row, row_dot, row_axpy, row_axpy_double
from .._core._csrc cimport fastml_prefetch_range, fastml_adagrad_f64, fastml_adagrad_f32

cdef enum:
    PREFETCH_AHEAD = 8      # rows requested ahead while gathering a shuffled chunk
    GATHER_ROWS = 256       # rows per gathered chunk (200 KB of float64 x 100: stays in L2)

cdef enum:
    ETA_CONSTANT = 0
    ETA_INVERSE = 1
    ETA_DECAY = 2
    ETA_OPTIMAL = 3
    ETA_ADAGRAD = 4

# The one Python mapping of the loss codes of _loss.pxd (the batch kernel takes the same codes).
LOSSES = {"log": LOSS_LOG, "hinge": LOSS_HINGE, "perceptron": LOSS_PERCEPTRON,
          "squared": LOSS_SQUARED}
SCHEDULES = {"constant": ETA_CONSTANT, "inverse": ETA_INVERSE, "decay": ETA_DECAY,
             "optimal": ETA_OPTIMAL, "adagrad": ETA_ADAGRAD}

# Indices into the `state` array that carries the loop's scalars between calls.
cdef enum:
    STATE_SCALE = 0     # w = scale * W
    STATE_T = 1         # steps taken so far (t of the schedules)
    STATE_B = 2         # the B of the lazy average A + B W
    STATE_N_AVG = 3     # steps averaged so far
    N_STATE = 4         # the array's length
# ... exported to Python: the driver (_sgd.py) reads and sizes the slots by these names.
STATE_SLOTS = {"scale": STATE_SCALE, "steps": STATE_T, "average_b": STATE_B,
               "n_averaged": STATE_N_AVG}
STATE_SIZE = N_STATE

ctypedef struct SGDConfig:
    int loss
    int label_offset      # output k stands for class label k + label_offset
    bint reference        # LOG only: label 0 is the reference class with margin 0
    int schedule
    double eta0
    double decay
    double alpha
    double t0
    int epoch
    int batch_size
    bint fit_intercept
    bint average
    double average_start  # averaging starts after this many steps
    double adagrad_eps

ctypedef struct Scratch:
    double *margins       # (K,)
    double *dloss         # (batch_size, K): sw_i * dloss / |batch| per row of the batch
    double *grad          # (K, n_features): adagrad's batch gradient (NULL otherwise)
    int *touched          # adagrad, sparse rows: coordinates touched in this batch
    char *mark
    void *rows_buf        # dense + shuffled: the current chunk's rows, contiguous (else NULL)
    Py_ssize_t *local     # 0, 1, 2, ...: row positions inside rows_buf
    double *y_buf         # the chunk's targets and sample weights, gathered with its rows
    double *sw_buf
    signed char *step_log # (n_order, K) or NULL: 1 where output k stepped on the r-th row
    Py_ssize_t log_pos    # rows logged so far (the position in `order`)


# ---------------------------------------------------------------- step sizes

cdef inline double step_size(const SGDConfig *cfg, double t) noexcept nogil:
    if cfg.schedule == ETA_INVERSE:
        return cfg.eta0 / t
    if cfg.schedule == ETA_DECAY:
        return cfg.eta0 / (1.0 + cfg.decay * cfg.epoch)
    if cfg.schedule == ETA_OPTIMAL:
        return 1.0 / (cfg.alpha * (cfg.t0 + t - 1.0))
    return cfg.eta0                         # constant; adagrad scales it per weight


def schedule_step(SGDConfig cfg, double t):
    """The step size at step t (1, 2, ...) of cfg's schedule: `step_size`, the rule the loop
    uses, for a driver that steps in Python (LinearSVM's batch subgradient descent)."""
    return step_size(&cfg, t)


# ---------------------------------------------------------------- updates

cdef void fold_scale(floating *W, double *A, double *state, Py_ssize_t size,
                     bint average) noexcept nogil:
    """Multiply the scale into W so it never underflows; keeps A + B W unchanged."""
    cdef Py_ssize_t j
    cdef double B = state[STATE_B]
    if average and B != 0.0:
        for j in range(size):
            A[j] += B * W[j]
        state[STATE_B] = 0.0
    for j in range(size):
        W[j] = <floating> (W[j] * state[STATE_SCALE])
    state[STATE_SCALE] = 1.0


cdef void plain_update(const floating *data, const int *indptr, const int *indices,
                       Py_ssize_t n_features, const Py_ssize_t *rows, Py_ssize_t nb,
                       floating *W, floating *b, double *A, double *state, Py_ssize_t K,
                       const SGDConfig *cfg, double eta, const double *dloss) noexcept nogil:
    """Shrink by the L2 factor, then add each row's gradient step (O(nnz K) per row)."""
    cdef Py_ssize_t r, k, i, nnz
    cdef const floating *x
    cdef const int *idx
    cdef double c, bsum
    if cfg.alpha > 0.0:
        state[STATE_SCALE] *= max(1.0 - eta * cfg.alpha, 0.0)
        # Fold early: between folds W grows like 1/scale and A + B W cancels, so a small
        # threshold would cost digits (1e-4 keeps ~12); folding is O(K d), rare for small alpha.
        if state[STATE_SCALE] < 1e-4:
            fold_scale(W, A, state, K * n_features, cfg.average)
    for r in range(nb):
        i = rows[r]
        get_row(data, indptr, indices, n_features, i, &x, &idx, &nnz)
        for k in range(K):
            if dloss[r * K + k] == 0.0:
                continue
            c = -eta * dloss[r * K + k] / state[STATE_SCALE]
            row_axpy(x, idx, nnz, c, W + k * n_features)
            if cfg.average and state[STATE_B] != 0.0:
                row_axpy_double(x, idx, nnz, -state[STATE_B] * c, A + k * n_features)
    if cfg.fit_intercept:
        for k in range(K):
            bsum = 0.0
            for r in range(nb):
                bsum += dloss[r * K + k]
            b[k] = <floating> (b[k] - eta * bsum)


cdef inline void adagrad_coords(const double *grad, const floating *x, double dl,
                                floating *w, double *G, double *A, Py_ssize_t n,
                                const SGDConfig *cfg, double B) noexcept nogil:
    """AdaGrad on n contiguous weights with gradient grad[j] (or dl * x[j] when grad is
    NULL) plus the L2 term; A (or NULL) is the lazy average. See csrc/fastml_adagrad.h."""
    if floating is double:
        fastml_adagrad_f64(grad, x, dl, w, G, A, n, cfg.alpha, cfg.eta0, cfg.adagrad_eps, B)
    else:
        fastml_adagrad_f32(grad, x, dl, w, G, A, n, cfg.alpha, cfg.eta0, cfg.adagrad_eps, B)


cdef void adagrad_update(const floating *data, const int *indptr, const int *indices,
                         Py_ssize_t n_features, const Py_ssize_t *rows, Py_ssize_t nb,
                         floating *W, floating *b, double *G, double *Gb, double *A,
                         double *state, Py_ssize_t K, const SGDConfig *cfg,
                         const double *dloss, Scratch *s) noexcept nogil:
    """Per-weight steps eta0 * g / sqrt(sum of g^2) on the coordinates the batch touches
    (all of them for dense rows); L2 enters each touched coordinate's gradient."""
    cdef Py_ssize_t r, k, i, j, q, nnz, n_touched = 0, off
    cdef const floating *x
    cdef const int *idx
    cdef double g, delta, gsum, B = state[STATE_B]
    if indices == NULL and nb == 1:         # one dense row: no gradient buffer needed
        x = data + rows[0] * n_features
        for k in range(K):
            adagrad_coords(NULL, x, dloss[k], W + k * n_features, G + k * n_features,
                           A + k * n_features if cfg.average else NULL, n_features, cfg, B)
    else:
        for r in range(nb):                 # the batch's gradient, and the coordinates it touches
            i = rows[r]
            get_row(data, indptr, indices, n_features, i, &x, &idx, &nnz)
            if indices != NULL:
                for q in range(nnz):
                    if not s.mark[idx[q]]:
                        s.mark[idx[q]] = 1
                        s.touched[n_touched] = idx[q]
                        n_touched += 1
            for k in range(K):
                if dloss[r * K + k] != 0.0:
                    row_axpy_double(x, idx, nnz, dloss[r * K + k], s.grad + k * n_features)
        if indices == NULL:
            for k in range(K):
                off = k * n_features
                adagrad_coords(s.grad + off, <const floating *> NULL, 0.0, W + off, G + off,
                               A + off if cfg.average else NULL, n_features, cfg, B)
                memset(s.grad + off, 0, n_features * sizeof(double))
        else:
            for q in range(n_touched):
                j = s.touched[q]
                s.mark[j] = 0
                for k in range(K):
                    off = k * n_features + j
                    g = s.grad[off] + cfg.alpha * W[off]
                    s.grad[off] = 0.0
                    G[off] += g * g
                    delta = -cfg.eta0 * g / (sqrt(G[off]) + cfg.adagrad_eps)
                    W[off] = <floating> (W[off] + delta)
                    if cfg.average:
                        A[off] -= B * delta
    if cfg.fit_intercept:
        for k in range(K):
            gsum = 0.0
            for r in range(nb):
                gsum += dloss[r * K + k]
            Gb[k] += gsum * gsum
            b[k] = <floating> (b[k] - cfg.eta0 * gsum / (sqrt(Gb[k]) + cfg.adagrad_eps))


# ---------------------------------------------------------------- the epoch

cdef int run_batch(const floating *data, const int *indptr, const int *indices,
                   Py_ssize_t n_features, const Py_ssize_t *rows, const Py_ssize_t *ids,
                   Py_ssize_t nb, const double *Y, Py_ssize_t n_targets, const double *sw,
                   floating *W, floating *b, Py_ssize_t K, double *G, double *Gb,
                   double *A, double *Ab, double *state, const SGDConfig *cfg, Scratch *s,
                   double *loss_sum, Py_ssize_t *updates) noexcept nogil:
    """One step on a batch of nb rows: rows[r] locates row r in `data`, ids[r] its targets
    Y[ids[r] * n_targets:] and weight sw[ids[r]]. Returns 0, or -1 when a margin stopped being finite (step size too large)."""
    cdef Py_ssize_t r, k, i, nnz
    cdef const floating *x
    cdef const int *idx
    cdef double eta, row_w, bias
    cdef bint any_step = False, row_step
    state[STATE_T] += 1.0
    eta = step_size(cfg, state[STATE_T])
    for r in range(nb):                     # 1) margins and loss derivatives at the current w
        i = ids[r]
        get_row(data, indptr, indices, n_features, rows[r], &x, &idx, &nnz)
        for k in range(K):
            bias = b[k] if cfg.fit_intercept else 0.0
            s.margins[k] = state[STATE_SCALE] * row_dot(x, idx, nnz, W + k * n_features) + bias
            if not isfinite(s.margins[k]):
                return -1
        loss_sum[0] += sw[i] * loss_and_dloss(cfg.loss, cfg.label_offset, cfg.reference,
                                              s.margins, Y + i * n_targets, K, s.dloss + r * K)
        row_w = sw[i] / nb
        row_step = False
        for k in range(K):
            s.dloss[r * K + k] *= row_w
            if s.dloss[r * K + k] != 0.0:
                row_step = True
        if s.step_log != NULL:              # the voted perceptron's record of its mistakes
            for k in range(K):
                s.step_log[s.log_pos * K + k] = s.dloss[r * K + k] != 0.0
            s.log_pos += 1
        if row_step:
            updates[0] += 1
            any_step = True
    if cfg.schedule == ETA_ADAGRAD:         # 2) the step
        adagrad_update(data, indptr, indices, n_features, rows, nb, W, b, G, Gb, A, state, K,
                       cfg, s.dloss, s)
    elif any_step or cfg.alpha > 0.0:
        plain_update(data, indptr, indices, n_features, rows, nb, W, b, A, state, K, cfg, eta,
                     s.dloss)
    if cfg.average and state[STATE_T] > cfg.average_start:   # 3) the running average
        state[STATE_B] += state[STATE_SCALE]
        state[STATE_N_AVG] += 1.0
        for k in range(K):
            Ab[k] += b[k]
    return 0


cdef void gather_rows(const floating *data, Py_ssize_t n_features, const double *Y,
                      Py_ssize_t n_targets, const double *sw, const Py_ssize_t *order,
                      Py_ssize_t n, Scratch *s) noexcept nogil:
    """Row r of the chunk buffers = row order[r] of X, Y and sw, for r < n: a tight copy
    loop with prefetching keeps many memory reads in flight, where the SGD loop would wait for
    each shuffled row (and its target and weight) in turn."""
    cdef Py_ssize_t r, i
    cdef floating *rows = <floating *> s.rows_buf
    for r in range(n):
        if r + PREFETCH_AHEAD < n:
            i = order[r + PREFETCH_AHEAD]
            fastml_prefetch_range(data + i * n_features, n_features * sizeof(floating))
            fastml_prefetch_range(Y + i * n_targets, n_targets * sizeof(double))
            fastml_prefetch_range(sw + i, sizeof(double))
        i = order[r]
        memcpy(rows + r * n_features, data + i * n_features, n_features * sizeof(floating))
        memcpy(s.y_buf + r * n_targets, Y + i * n_targets, n_targets * sizeof(double))
        s.sw_buf[r] = sw[i]


cdef int run_epoch(const floating *data, const int *indptr, const int *indices,
                   Py_ssize_t n_features, const double *Y, Py_ssize_t n_targets,
                   const double *sw,
                   const Py_ssize_t *order, Py_ssize_t n_order,
                   floating *W, floating *b, Py_ssize_t K, double *G, double *Gb,
                   double *A, double *Ab, double *state, const SGDConfig *cfg, Scratch *s,
                   double *loss_out, Py_ssize_t *updates_out) noexcept nogil:
    """The batches of one epoch, in `order`. Dense rows in a shuffled order are first copied,
    a chunk of whole batches at a time, into s.rows_buf / y_buf / sw_buf (contiguous), then
    stepped on there."""
    cdef Py_ssize_t batch = cfg.batch_size, first, c0, c1, nb, status = 0
    cdef Py_ssize_t chunk = max(1, GATHER_ROWS // batch) * batch
    loss_out[0] = 0.0
    updates_out[0] = 0
    c0 = 0
    while c0 < n_order and status == 0:
        c1 = min(c0 + chunk, n_order)
        if s.rows_buf != NULL:
            gather_rows(data, n_features, Y, n_targets, sw, order + c0, c1 - c0, s)
        first = c0
        while first < c1 and status == 0:
            nb = min(batch, c1 - first)
            if s.rows_buf != NULL:
                status = run_batch(<floating *> s.rows_buf, NULL, NULL, n_features,
                                   s.local + (first - c0), s.local + (first - c0), nb,
                                   s.y_buf, n_targets, s.sw_buf, W, b, K, G, Gb, A, Ab, state,
                                   cfg, s, loss_out, updates_out)
            else:
                status = run_batch(data, indptr, indices, n_features, order + first,
                                   order + first, nb, Y, n_targets, sw, W, b, K, G, Gb, A, Ab,
                                   state, cfg, s, loss_out, updates_out)
            first += nb
        c0 = c1
    return status


cdef bint is_identity(const Py_ssize_t[::1] order) noexcept:
    cdef Py_ssize_t r
    for r in range(order.shape[0]):
        if order[r] != r:
            return False
    return True


def sgd_epoch(X, const double[:, ::1] Y, const double[::1] sample_weight,
              const Py_ssize_t[::1] order, floating[:, ::1] W, floating[::1] b,
              double[:, ::1] G, double[::1] Gb, double[:, ::1] A, double[::1] Ab,
              double[::1] state, SGDConfig cfg, signed char[:, ::1] step_log=None):
    """One epoch over `order` (rows of X, dense C-contiguous or CSR) updating W, b, G, A and
    `state` in place. Returns (sum of sw_i * loss_i before each step, rows with a nonzero
    gradient, diverged flag). G/Gb are used by adagrad, A/Ab by averaging (else shape 0).
    step_log, if given (len(order), K), receives 1 where output k took a step on the r-th row
    of `order` and 0 elsewhere."""
    cdef const floating[:, ::1] dense
    cdef const floating[::1] csr_data
    cdef const int[::1] csr_indptr, csr_indices
    cdef const floating *data
    cdef const int *indptr = NULL
    cdef const int *indices = NULL
    cdef Py_ssize_t K = W.shape[0], n_features = W.shape[1]
    cdef Scratch s
    cdef double loss_sum = 0.0
    cdef Py_ssize_t updates = 0
    cdef int status
    if hasattr(X, "indptr"):
        csr_data, csr_indptr, csr_indices = X.data, X.indptr, X.indices
        data, indptr, indices = &csr_data[0], &csr_indptr[0], &csr_indices[0]
    else:
        dense = X
        data = &dense[0, 0]
    if cfg.batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    if step_log is not None and (step_log.shape[0] != order.shape[0] or step_log.shape[1] != K):
        raise ValueError("step_log must have shape (len(order), n_outputs)")
    s.step_log = &step_log[0, 0] if step_log is not None and step_log.shape[0] else NULL
    s.log_pos = 0
    cdef bint adagrad = cfg.schedule == ETA_ADAGRAD
    cdef bint gather = indices == NULL and not is_identity(order)
    cdef Py_ssize_t chunk = max(1, GATHER_ROWS // cfg.batch_size) * cfg.batch_size, r
    s.margins = <double *> malloc(K * sizeof(double))
    s.dloss = <double *> malloc(cfg.batch_size * K * sizeof(double))
    s.grad = <double *> calloc(K * n_features, sizeof(double)) if adagrad else NULL
    s.touched = <int *> malloc(n_features * sizeof(int)) if adagrad else NULL
    s.mark = <char *> calloc(n_features, 1) if adagrad else NULL
    s.rows_buf = malloc(chunk * n_features * sizeof(floating)) if gather else NULL
    s.local = <Py_ssize_t *> malloc(chunk * sizeof(Py_ssize_t)) if gather else NULL
    s.y_buf = <double *> malloc(chunk * Y.shape[1] * sizeof(double)) if gather else NULL
    s.sw_buf = <double *> malloc(chunk * sizeof(double)) if gather else NULL
    try:
        if (s.margins == NULL or s.dloss == NULL
                or (adagrad and (s.grad == NULL or s.touched == NULL or s.mark == NULL))
                or (gather and (s.rows_buf == NULL or s.local == NULL or s.y_buf == NULL
                                or s.sw_buf == NULL))):
            raise MemoryError()
        if gather:
            for r in range(chunk):
                s.local[r] = r
        with nogil:
            status = run_epoch(data, indptr, indices, n_features, &Y[0, 0], Y.shape[1],
                               &sample_weight[0],
                               &order[0], order.shape[0], &W[0, 0], &b[0], K,
                               &G[0, 0] if G.shape[0] else NULL,
                               &Gb[0] if Gb.shape[0] else NULL,
                               &A[0, 0] if A.shape[0] else NULL,
                               &Ab[0] if Ab.shape[0] else NULL,
                               &state[0], &cfg, &s, &loss_sum, &updates)
    finally:
        free(s.margins); free(s.dloss); free(s.grad); free(s.touched); free(s.mark)
        free(s.rows_buf); free(s.local); free(s.y_buf); free(s.sw_buf)
    return loss_sum, updates, status != 0
