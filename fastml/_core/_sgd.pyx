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
from libc.string cimport memset
from cython cimport floating

from ._loss cimport LOSS_LOG, LOSS_HINGE, LOSS_PERCEPTRON, LOSS_SQUARED, loss_and_dloss
from ._rows cimport get_row, row_dot, row_axpy, row_axpy_double

cdef enum:
    ETA_CONSTANT = 0
    ETA_INVERSE = 1
    ETA_DECAY = 2
    ETA_OPTIMAL = 3
    ETA_ADAGRAD = 4

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
STATE_SIZE = 4

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


# ---------------------------------------------------------------- step sizes

cdef inline double step_size(const SGDConfig *cfg, double t) noexcept nogil:
    if cfg.schedule == ETA_INVERSE:
        return cfg.eta0 / t
    if cfg.schedule == ETA_DECAY:
        return cfg.eta0 / (1.0 + cfg.decay * cfg.epoch)
    if cfg.schedule == ETA_OPTIMAL:
        return 1.0 / (cfg.alpha * (cfg.t0 + t - 1.0))
    return cfg.eta0                         # constant; adagrad scales it per weight


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


cdef void adagrad_update(const floating *data, const int *indptr, const int *indices,
                         Py_ssize_t n_features, const Py_ssize_t *rows, Py_ssize_t nb,
                         floating *W, floating *b, double *G, double *Gb, double *A,
                         double *state, Py_ssize_t K, const SGDConfig *cfg,
                         const double *dloss, Scratch *s) noexcept nogil:
    """Per-weight steps eta0 * g / sqrt(sum of g^2) on the coordinates the batch touches
    (all of them for dense rows); L2 enters each touched coordinate's gradient."""
    cdef Py_ssize_t r, k, i, j, q, nnz, n_touched = 0
    cdef const floating *x
    cdef const int *idx
    cdef double g, delta, gsum, B = state[STATE_B]
    for r in range(nb):
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
        n_touched = n_features
    for q in range(n_touched):
        j = q if indices == NULL else s.touched[q]
        if indices != NULL:
            s.mark[j] = 0
        for k in range(K):
            g = s.grad[k * n_features + j] + cfg.alpha * W[k * n_features + j]
            s.grad[k * n_features + j] = 0.0
            if g == 0.0:
                continue
            G[k * n_features + j] += g * g
            delta = -cfg.eta0 * g / (sqrt(G[k * n_features + j]) + cfg.adagrad_eps)
            W[k * n_features + j] = <floating> (W[k * n_features + j] + delta)
            if cfg.average:
                A[k * n_features + j] -= B * delta
    if cfg.fit_intercept:
        for k in range(K):
            gsum = 0.0
            for r in range(nb):
                gsum += dloss[r * K + k]
            if gsum != 0.0:
                Gb[k] += gsum * gsum
                b[k] = <floating> (b[k] - cfg.eta0 * gsum / (sqrt(Gb[k]) + cfg.adagrad_eps))


# ---------------------------------------------------------------- the epoch

cdef int run_epoch(const floating *data, const int *indptr, const int *indices,
                   Py_ssize_t n_features, const double[:, ::1] Y, const double *sw,
                   const Py_ssize_t *order, Py_ssize_t n_order,
                   floating *W, floating *b, Py_ssize_t K, double *G, double *Gb,
                   double *A, double *Ab, double *state, const SGDConfig *cfg, Scratch *s,
                   double *loss_out, Py_ssize_t *updates_out) noexcept nogil:
    """Returns 0, or -1 when a margin stopped being finite (the step size is too large)."""
    cdef Py_ssize_t first, r, k, i, nb, nnz
    cdef const floating *x
    cdef const int *idx
    cdef double eta, loss_sum = 0.0, row_w, bias
    cdef Py_ssize_t updates = 0
    cdef bint any_step, row_step
    cdef Py_ssize_t batch = cfg.batch_size, n_batches = (n_order + batch - 1) // batch, q
    for q in range(n_batches):
        first = q * batch
        nb = min(batch, n_order - first)
        state[STATE_T] += 1.0
        eta = step_size(cfg, state[STATE_T])
        any_step = False
        for r in range(nb):                 # 1) margins and loss derivatives at the current w
            i = order[first + r]
            get_row(data, indptr, indices, n_features, i, &x, &idx, &nnz)
            for k in range(K):
                bias = b[k] if cfg.fit_intercept else 0.0
                s.margins[k] = state[STATE_SCALE] * row_dot(x, idx, nnz, W + k * n_features) + bias
                if not isfinite(s.margins[k]):
                    return -1
            loss_sum += sw[i] * loss_and_dloss(cfg.loss, cfg.label_offset, cfg.reference, s.margins,
                                                 &Y[i, 0], K, s.dloss + r * K)
            row_w = sw[i] / nb
            row_step = False
            for k in range(K):
                s.dloss[r * K + k] *= row_w
                if s.dloss[r * K + k] != 0.0:
                    row_step = True
            if row_step:
                updates += 1
                any_step = True
        if cfg.schedule == ETA_ADAGRAD:     # 2) the step
            adagrad_update(data, indptr, indices, n_features, order + first, nb, W, b, G, Gb,
                           A, state, K, cfg, s.dloss, s)
        elif any_step or cfg.alpha > 0.0:
            plain_update(data, indptr, indices, n_features, order + first, nb, W, b, A, state,
                         K, cfg, eta, s.dloss)
        if cfg.average and state[STATE_T] > cfg.average_start:   # 3) the running average
            state[STATE_B] += state[STATE_SCALE]
            state[STATE_N_AVG] += 1.0
            for k in range(K):
                Ab[k] += b[k]
    loss_out[0] = loss_sum
    updates_out[0] = updates
    return 0


def sgd_epoch(X, const double[:, ::1] Y, const double[::1] sample_weight,
              const Py_ssize_t[::1] order, floating[:, ::1] W, floating[::1] b,
              double[:, ::1] G, double[::1] Gb, double[:, ::1] A, double[::1] Ab,
              double[::1] state, SGDConfig cfg):
    """One epoch over `order` (rows of X, dense C-contiguous or CSR) updating W, b, G, A and
    `state` in place. Returns (sum of sw_i * loss_i before each step, rows with a nonzero
    gradient, diverged flag). G/Gb are used by adagrad, A/Ab by averaging (else shape 0)."""
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
    s.margins = <double *> malloc(K * sizeof(double))
    s.dloss = <double *> malloc(cfg.batch_size * K * sizeof(double))
    s.grad = <double *> calloc(K * n_features, sizeof(double)) if cfg.schedule == ETA_ADAGRAD else NULL
    s.touched = <int *> malloc(n_features * sizeof(int)) if cfg.schedule == ETA_ADAGRAD else NULL
    s.mark = <char *> calloc(n_features, 1) if cfg.schedule == ETA_ADAGRAD else NULL
    try:
        if s.margins == NULL or s.dloss == NULL or (cfg.schedule == ETA_ADAGRAD and (
                s.grad == NULL or s.touched == NULL or s.mark == NULL)):
            raise MemoryError()
        with nogil:
            status = run_epoch(data, indptr, indices, n_features, Y, &sample_weight[0],
                               &order[0], order.shape[0], &W[0, 0], &b[0], K,
                               &G[0, 0] if G.shape[0] else NULL,
                               &Gb[0] if Gb.shape[0] else NULL,
                               &A[0, 0] if A.shape[0] else NULL,
                               &Ab[0] if Ab.shape[0] else NULL,
                               &state[0], &cfg, &s, &loss_sum, &updates)
    finally:
        free(s.margins); free(s.dloss); free(s.grad); free(s.touched); free(s.mark)
    return loss_sum, updates, status != 0
