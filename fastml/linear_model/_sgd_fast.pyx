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
# (001, t = epoch); optimal 1/(alpha (t0 + t)) (Bottou); adagrad eta0/sqrt(sum g^2) per weight
# (its L2 term reaches the coordinates a step touches, x_j != 0, for dense and CSR rows alike).
#
# Tricks that keep a step O(nnz(x) K), not O(n_features K):
# - L2 is a scalar: w = scale * v, so the shrink (1 - eta*alpha) multiplies `scale` only.
# - Averaging is lazy: with S_T = sum_{t<=T} r^(T-t) w_t kept as c (A + B v), a step v += D
#   gives A -= B D (O(nnz)); then S <- r S + w is c *= r, B += scale / c (O(1)). The average is
#   S_T / Z_T with Z_T = sum r^(T-t), formed once at the end. r = 1 is the uniform average
#   (c stays 1: the same arithmetic as A + B v); r = 2^(-1/halflife) weights the iterate t
#   steps ago by 2^(-t/halflife) (recency-weighted, for drifting streams; the c trick is the
#   rescaling of Bottou's ASGD). c is folded into A and B before 1/c can overflow.
# Loop invariant (between batches): w_k = scale * W[k], and, when averaging,
# c * (A[k] + B * W[k]) = the r-weighted sum of the weight vectors after each averaged step.
#
# Progressive validation (Vowpal Wabbit's): each row's loss at the weights before the step that
# uses it, summed over the epoch. Of the model one would deploy at that moment, the one coef()
# reports: with averaging (once it has started) that is the average, whose margin is
# c (x.A + B x.W) / Z + Ab / Z, one more dot product per row and output (only then); the loss
# and the mistake rule (some output's loss derivative nonzero: the perceptron's t m <= 0) are
# _loss.pxd's, at those margins.
from libc.math cimport sqrt, isfinite
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memset, memcpy
from cython cimport floating

from ._loss cimport (LOSS_LOG, LOSS_HINGE, LOSS_PERCEPTRON, LOSS_SQUARED, loss_and_dloss,
                     binary_target)
from .._core._typedefs cimport index_t
from ._rows cimport (RowSource, row_source, get_row, row_dot, row_dot_double, row_axpy,
                    row_axpy_double)
from .._core._csrc cimport (fastml_prefetch_range, fastml_adagrad_f64, fastml_adagrad_f32,
                            fastml_adagrad_grad_f64, fastml_adagrad_grad_f32,
                            fastml_adagrad_dot_f64, fastml_adagrad_dot_f32,
                            fastml_adagrad_rate, fastml_check_index, fastml_block_order,
                            fastml_logistic_loss_but_log1p, fastml_weighted_log1p_sum)
from libc.stdint cimport uint64_t

cdef enum:
    GATHER_AHEAD = 8        # rows requested ahead while gathering a shuffled chunk: about the
                            # reads a core keeps in flight (10-12 line-fill buffers)
    GATHER_ROWS = 256       # rows per gathered chunk (200 KB of float64 x 100: stays in L2)

# shuffle="block" (_sgd.py's epoch_order) permutes blocks of this many consecutive rows and the
# rows inside each block: run_epoch steps on each block where it lies in X while the next block
# streams into cache in memory order (two blocks, 400 KB of float64 x 100, fit Zen 3's L2).
SHUFFLE_BLOCK_ROWS = GATHER_ROWS

# The binary logistic loss's log1p(e^-|m|) terms wait in Scratch for this many rows, then are
# added by one vectorized loop (flush_deferred_loss): a libm log per row, in the middle of the
# step, cost ~7% of a logistic SGD step (bench/README.md, seventh session).
cdef enum:
    DEFERRED_ROWS = 64

# Fold the L2 scale into W once it falls below this: between folds W grows like 1/scale and
# A + B W cancels, so a smaller threshold costs digits (1e-4 keeps ~12); a fold is O(K d),
# rare for small alpha.
cdef double FOLD_BELOW = 1e-4
# Fold the average's scalar c into A and B once it falls below this: B grows like 1/c, and
# c = 2^-500 keeps B and A far from overflow; a fold is O(K d), once per ~500 halflives.
cdef double AVERAGE_FOLD_BELOW = 3.054936363499605e-151    # 2^-500

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
    STATE_B = 2         # the B of the lazy average c (A + B W)
    STATE_N_AVG = 3     # Z: sum of the averaged steps' weights (their count when uniform)
    STATE_C = 4         # the c of the lazy average c (A + B W)
    N_STATE = 5         # the array's length
# ... exported to Python: the driver (_sgd.py) reads and sizes the slots by these names.
STATE_SLOTS = {"scale": STATE_SCALE, "steps": STATE_T, "average_b": STATE_B,
               "n_averaged": STATE_N_AVG, "average_c": STATE_C}
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
    Py_ssize_t batch_size # rows per step (sgd_epoch clamps it to the epoch's rows)
    bint fit_intercept
    bint average
    double average_start  # averaging starts after this many steps
    double average_decay  # r: the weight of an iterate shrinks by r per step (1 = uniform)
    double adagrad_eps

ctypedef struct Targets:
    const double *Y       # (n, n_targets): class code (as a double) or regression targets
    Py_ssize_t n_targets
    const double *sw      # (n,) sample weights


ctypedef struct Model:
    # The fused-dtype weights W (K, d) and intercepts b (K,) are passed beside this struct
    # (a struct cannot hold a fused type); everything here is float64.
    Py_ssize_t K
    Py_ssize_t d          # n_features
    double *G             # (K, d) adagrad's sums of squared gradients (else NULL)
    double *Gb            # (K,)
    double *A             # (K, d) the lazy running average's A (else NULL)
    double *Ab            # (K,) the running sum of the intercepts
    double *state         # the STATE_* slots


ctypedef struct Scratch:
    double *margins       # (K,)
    double *dots          # (K,) x . W[k] of the row (its margins before the scale and bias)
    double *deployed_m    # (K,) the deployed (averaged) model's margins, when averaging
    double *deployed_dl   # (K,) and its loss derivatives there
    double *next_dots     # (K,) x . w_k of the next row, computed by the step before it ...
    bint have_next_dots   # ... when this is set (adagrad_dense_row_ahead)
    double *dloss         # (batch_size, K): sw_i * dloss / |batch| per row of the batch
    double *grad          # (K, n_features): adagrad's batch gradient (NULL otherwise)
    int *touched          # adagrad: the coordinates this batch touches (x_j != 0 in some row)
    char *mark            # adagrad: 1 for the coordinates already in `touched`
    void *rows_buf        # dense + shuffled: the current chunk's rows, contiguous (else NULL)
    Py_ssize_t *local     # 0, 1, 2, ...: row positions inside rows_buf
    double *y_buf         # the chunk's targets and sample weights, gathered with its rows
    double *sw_buf
    signed char *step_log # (n_order, K) or NULL: 1 where output k stepped on the r-th row
    Py_ssize_t log_pos    # rows logged so far (the position in `order`)
    double loss_sum       # this epoch: sum of sw_i * loss_i before each step (less the
                          # deferred terms below, until flush_deferred_loss adds them)
    double *deferred_e    # (DEFERRED_ROWS,) binary LOG: e = e^-|m| of rows whose log1p(e) ...
    double *deferred_sw   # ... times their sw is still to be added to loss_sum
    Py_ssize_t n_deferred
    Py_ssize_t updates    # this epoch: rows with a nonzero gradient
    double step_weight    # this epoch: sum of sw_i over those rows (the perceptron's mistakes)
    double deployed_loss  # averaging, this epoch: sum of sw_i * loss_i at the deployed model
    double deployed_mistakes  # ... and of sw_i over the rows it gets wrong (see the header)


cdef int scratch_init(Scratch *s, Py_ssize_t K, Py_ssize_t n_features, Py_ssize_t n_targets,
                      Py_ssize_t chunk, Py_ssize_t item_size, const SGDConfig *cfg,
                      bint gather) noexcept nogil:
    """Allocate the epoch's scratch: the per-batch buffers, adagrad's gradient and touched
    coordinates, and (dense rows in a shuffled order) the gathered chunk. Returns -1 when out
    of memory; scratch_free is safe after any outcome."""
    cdef bint adagrad = cfg.schedule == ETA_ADAGRAD
    cdef Py_ssize_t r
    memset(s, 0, sizeof(Scratch))
    s.margins = <double *> malloc(K * sizeof(double))
    s.dots = <double *> malloc(3 * K * sizeof(double))
    s.deployed_m = s.dots + K if s.dots != NULL else NULL
    s.deployed_dl = s.dots + 2 * K if s.dots != NULL else NULL
    s.next_dots = <double *> malloc(K * sizeof(double))
    s.dloss = <double *> malloc(cfg.batch_size * K * sizeof(double))
    s.deferred_e = <double *> malloc(DEFERRED_ROWS * sizeof(double))
    s.deferred_sw = <double *> malloc(DEFERRED_ROWS * sizeof(double))
    if (s.margins == NULL or s.dots == NULL or s.next_dots == NULL or s.dloss == NULL
            or s.deferred_e == NULL or s.deferred_sw == NULL):
        return -1
    if adagrad:
        s.grad = <double *> calloc(K * n_features, sizeof(double))
        s.touched = <int *> malloc(n_features * sizeof(int))
        s.mark = <char *> calloc(n_features, 1)
        if s.grad == NULL or s.touched == NULL or s.mark == NULL:
            return -1
    if gather:
        s.rows_buf = malloc(chunk * n_features * item_size)
        s.local = <Py_ssize_t *> malloc(chunk * sizeof(Py_ssize_t))
        s.y_buf = <double *> malloc(chunk * n_targets * sizeof(double))
        s.sw_buf = <double *> malloc(chunk * sizeof(double))
        if (s.rows_buf == NULL or s.local == NULL or s.y_buf == NULL
                or s.sw_buf == NULL):
            return -1
        for r in range(chunk):
            s.local[r] = r
    return 0


cdef void scratch_free(Scratch *s) noexcept nogil:
    free(s.margins); free(s.dots); free(s.dloss); free(s.grad); free(s.touched); free(s.mark)
    free(s.rows_buf); free(s.local); free(s.y_buf); free(s.sw_buf)
    free(s.deferred_e); free(s.deferred_sw); free(s.next_dots)
    s.margins = s.dots = s.next_dots = s.dloss = s.grad = s.y_buf = s.sw_buf = NULL
    s.deployed_m = s.deployed_dl = NULL
    s.deferred_e = s.deferred_sw = NULL
    s.touched = NULL
    s.mark = NULL
    s.rows_buf = NULL
    s.local = NULL


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


cdef inline void plain_shrink(floating *W, Model *m, const SGDConfig *cfg,
                              double eta) noexcept nogil:
    """The L2 shrink w <- (1 - eta alpha) w of a step: O(1) on `scale` (a rare O(K d) fold)."""
    cdef double *state = m.state
    if cfg.alpha > 0.0:
        state[STATE_SCALE] *= max(1.0 - eta * cfg.alpha, 0.0)
        if state[STATE_SCALE] < FOLD_BELOW:
            fold_scale(W, m.A, state, m.K * m.d, cfg.average)


cdef inline void plain_row(const floating *x, const int *idx, Py_ssize_t nnz, const double *dl,
                           double eta, floating *W, Model *m, const SGDConfig *cfg) noexcept nogil:
    """One row's gradient step on each output k with dl[k] != 0 (O(nnz K)), and the lazy
    average's A -= B (the step)."""
    cdef Py_ssize_t k, d = m.d
    cdef double c
    cdef double *state = m.state
    for k in range(m.K):
        if dl[k] == 0.0:
            continue
        c = -eta * dl[k]
        if state[STATE_SCALE] != 1.0:       # x / 1 is x: no divide on the step's critical path
            c /= state[STATE_SCALE]
        row_axpy(x, idx, nnz, c, W + k * d)
        if cfg.average and state[STATE_B] != 0.0:
            row_axpy_double(x, idx, nnz, -state[STATE_B] * c, m.A + k * d)


cdef inline void plain_intercept(floating *b, const double *dloss, Py_ssize_t nb,
                                 Py_ssize_t K, double eta, const SGDConfig *cfg) noexcept nogil:
    """b_k -= eta * (the batch's summed dloss_k)."""
    cdef Py_ssize_t r, k
    cdef double bsum
    if cfg.fit_intercept:
        for k in range(K):
            bsum = 0.0
            for r in range(nb):
                bsum += dloss[r * K + k]
            b[k] = <floating> (b[k] - eta * bsum)


cdef void plain_update(const RowSource *src, const Py_ssize_t *rows, Py_ssize_t nb,
                       floating *W, floating *b, Model *m, const SGDConfig *cfg, double eta,
                       const double *dloss) noexcept nogil:
    """Shrink by the L2 factor, then add each row's gradient step (O(nnz K) per row)."""
    cdef Py_ssize_t r, nnz
    cdef const floating *x
    cdef const int *idx
    plain_shrink(W, m, cfg, eta)
    for r in range(nb):
        get_row(src, rows[r], &x, &idx, &nnz)
        plain_row(x, idx, nnz, dloss + r * m.K, eta, W, m, cfg)
    plain_intercept(b, dloss, nb, m.K, eta, cfg)


cdef inline void adagrad_row(const floating *x, double dl, floating *w, double *G, double *A,
                             Py_ssize_t n, const SGDConfig *cfg, double B) noexcept nogil:
    """AdaGrad on the n weights of one output for one dense row x with loss derivative dl,
    plus the L2 term where x[j] != 0; A (or NULL) is the lazy average. See
    csrc/fastml_adagrad.h."""
    if floating is double:
        fastml_adagrad_f64(x, dl, w, G, A, n, cfg.alpha, cfg.eta0, cfg.adagrad_eps, B)
    else:
        fastml_adagrad_f32(x, dl, w, G, A, n, cfg.alpha, cfg.eta0, cfg.adagrad_eps, B)


cdef inline void adagrad_dense_row(const floating *x, floating *W, Model *m,
                                   const SGDConfig *cfg, const double *dl) noexcept nogil:
    """AdaGrad's step for one dense row on the K outputs: vectorized, no gradient buffer."""
    cdef Py_ssize_t k, d = m.d
    cdef double B = m.state[STATE_B]
    for k in range(m.K):
        adagrad_row(x, dl[k], W + k * d, m.G + k * d,
                    m.A + k * d if cfg.average else NULL, d, cfg, B)


cdef inline void adagrad_dense_row_ahead(const floating *x, const floating *x_next, floating *W,
                                        Model *m, const SGDConfig *cfg,
                                        Scratch *s) noexcept nogil:
    """adagrad_dense_row's step (no average) fused with the next row's dot products x_next .
    w_k at the stepped weights, left in s.next_dots for its row_loss: the next margin is
    ready when the last weight is (csrc/fastml_adagrad.h, fastml_adagrad_dot)."""
    cdef Py_ssize_t k, d = m.d
    for k in range(m.K):
        if floating is double:
            s.next_dots[k] = fastml_adagrad_dot_f64(x, s.dloss[k], W + k * d, m.G + k * d, d,
                                                    cfg.alpha, cfg.eta0, cfg.adagrad_eps,
                                                    x_next)
        else:
            s.next_dots[k] = fastml_adagrad_dot_f32(x, s.dloss[k], W + k * d, m.G + k * d, d,
                                                    cfg.alpha, cfg.eta0, cfg.adagrad_eps,
                                                    x_next)
    s.have_next_dots = True


cdef inline void adagrad_intercept(floating *b, Model *m, const SGDConfig *cfg,
                                   const double *dloss, Py_ssize_t nb) noexcept nogil:
    """AdaGrad's step on the intercepts (no L2): the batch's summed dloss_k."""
    cdef Py_ssize_t r, k, K = m.K
    cdef double gsum
    cdef float eps = <float> cfg.adagrad_eps
    if cfg.fit_intercept:
        for k in range(K):
            gsum = 0.0
            for r in range(nb):
                gsum += dloss[r * K + k]
            m.Gb[k] += gsum * gsum
            b[k] = <floating> (b[k] - cfg.eta0 * gsum * fastml_adagrad_rate(m.Gb[k], eps))


cdef void adagrad_update(const RowSource *src, const Py_ssize_t *rows, Py_ssize_t nb,
                         floating *W, floating *b, Model *m, const SGDConfig *cfg,
                         const double *dloss, Scratch *s) noexcept nogil:
    """Per-weight steps eta0 * g / (sqrt(sum of g^2) + eps) on the coordinates the batch
    touches: those where some row of the batch has x_j != 0. L2 enters the gradient of those
    coordinates only, lazily, for dense and CSR rows alike (so both give the same model); a
    sparse batch visits only its touched weights, which keeps its step O(nnz K). The rate
    1 / (sqrt(G) + eps) is fastml_adagrad_rate on every path (csrc/fastml_adagrad.h)."""
    cdef Py_ssize_t r, k, j, q, nnz, n_touched = 0, off, K = m.K, d = src.n_features
    cdef const floating *x
    cdef const int *idx
    cdef double g, delta, B = m.state[STATE_B]
    cdef double *G = m.G
    cdef double *A = m.A
    cdef float eps = <float> cfg.adagrad_eps
    if src.indices == NULL and nb == 1:     # one dense row: vectorized, no gradient buffer
        get_row(src, rows[0], &x, &idx, &nnz)
        adagrad_dense_row(x, W, m, cfg, dloss)
    else:
        for r in range(nb):                 # the batch's gradient, and the coordinates it touches
            get_row(src, rows[r], &x, &idx, &nnz)
            if idx == NULL:                 # dense: a branch-free pass that vectorizes
                for q in range(nnz):
                    s.mark[q] |= x[q] != 0
            else:
                for q in range(nnz):
                    if x[q] != 0 and not s.mark[idx[q]]:
                        s.mark[idx[q]] = 1
                        s.touched[n_touched] = idx[q]
                        n_touched += 1
            for k in range(K):
                if dloss[r * K + k] != 0.0:
                    row_axpy_double(x, idx, nnz, dloss[r * K + k], s.grad + k * d)
        if src.indices == NULL:             # dense: every coordinate, vectorized (g = 0 where
            for k in range(K):              # no row touched it: a zero step)
                off = k * d
                if floating is double:
                    fastml_adagrad_grad_f64(s.grad + off, s.mark, W + off, G + off,
                                            A + off if cfg.average else NULL, d, cfg.alpha,
                                            cfg.eta0, cfg.adagrad_eps, B)
                else:
                    fastml_adagrad_grad_f32(s.grad + off, s.mark, W + off, G + off,
                                            A + off if cfg.average else NULL, d, cfg.alpha,
                                            cfg.eta0, cfg.adagrad_eps, B)
            memset(s.mark, 0, d)
        for q in range(n_touched):          # CSR: the touched coordinates only
            j = s.touched[q]
            s.mark[j] = 0
            for k in range(K):
                off = k * d + j
                g = s.grad[off] + cfg.alpha * W[off]
                s.grad[off] = 0.0
                G[off] += g * g
                delta = -cfg.eta0 * g * fastml_adagrad_rate(G[off], eps)
                W[off] = <floating> (W[off] + delta)
                if cfg.average:
                    A[off] -= B * delta
    adagrad_intercept(b, m, cfg, dloss, nb)


# ---------------------------------------------------------------- the epoch

cdef inline void add_binary_log_loss(double m, double y, double sw, const SGDConfig *cfg,
                                     Scratch *s, double *dl) noexcept nogil:
    """Add sw * the binary logistic loss of one row (_loss.pxd's) to s.loss_sum, and write
    dl[0] = dloss/dm: all of the loss but its log1p(e) term, which waits in s.deferred_* for
    flush_deferred_loss. (It adds to s.loss_sum itself: in a caller's `s.loss_sum += ...` the
    old sum would be read before a flush here and the flushed terms lost.)"""
    cdef double e
    s.loss_sum += sw * fastml_logistic_loss_but_log1p(
        m, binary_target(<index_t> y, cfg.label_offset), dl, &e)
    s.deferred_e[s.n_deferred] = e
    s.deferred_sw[s.n_deferred] = sw
    s.n_deferred += 1
    if s.n_deferred == DEFERRED_ROWS:
        flush_deferred_loss(s)


cdef inline void flush_deferred_loss(Scratch *s) noexcept nogil:
    """Add the deferred sw * log1p(e) terms to s.loss_sum (vectorized, in row order)."""
    s.loss_sum += fastml_weighted_log1p_sum(s.n_deferred, s.deferred_e, s.deferred_sw)
    s.n_deferred = 0


cdef inline int row_loss(const floating *x, const int *idx, Py_ssize_t nnz, Py_ssize_t i,
                         Py_ssize_t nb, const Targets *tg, const floating *W, const floating *b,
                         Model *m, const SGDConfig *cfg, Scratch *s, double *dl) noexcept nogil:
    """A step's first half for one row (targets and weight at index i of tg) of a batch of nb:
    the margins at the current w, the row's loss into s.loss_sum, dl[k] = sw_i * dloss_k / nb
    and the epoch's counts. Returns -1 when a margin is not finite (no step may be taken),
    1 when the row steps (some dl[k] != 0), else 0."""
    cdef Py_ssize_t k, K = m.K
    cdef double row_w, bias, dot
    cdef double *margins = s.margins
    cdef int step = 0
    for k in range(K):
        bias = b[k] if cfg.fit_intercept else 0.0
        dot = s.next_dots[k] if s.have_next_dots else row_dot(x, idx, nnz, W + k * m.d)
        s.dots[k] = dot
        margins[k] = m.state[STATE_SCALE] * dot + bias
        if not isfinite(margins[k]):
            return -1
    s.have_next_dots = False
    if cfg.average:
        deployed_row_loss(x, idx, nnz, i, tg, m, cfg, s)
    if cfg.loss == LOSS_LOG and K == 1 and cfg.reference:
        add_binary_log_loss(margins[0], tg.Y[i * tg.n_targets], tg.sw[i], cfg, s, dl)
    else:
        s.loss_sum += tg.sw[i] * loss_and_dloss(cfg.loss, cfg.label_offset, cfg.reference,
                                                margins, tg.Y + i * tg.n_targets, K, dl)
    row_w = tg.sw[i] / nb
    for k in range(K):
        dl[k] *= row_w
        if dl[k] != 0.0:
            step = 1
    if s.step_log != NULL:                  # the voted perceptron's record of its mistakes
        for k in range(K):
            s.step_log[s.log_pos * K + k] = dl[k] != 0.0
        s.log_pos += 1
    if step:
        s.updates += 1
        s.step_weight += tg.sw[i]
    return step


cdef void deployed_row_loss(const floating *x, const int *idx, Py_ssize_t nnz, Py_ssize_t i,
                           const Targets *tg, Model *m, const SGDConfig *cfg,
                           Scratch *s) noexcept nogil:
    """Progressive validation of the deployed model (see the header): the row's loss and
    mistake at the averaged weights once averaging has started (their margins from x . A and
    the row's x . W in s.dots), else at the iterate's margins s.margins."""
    cdef Py_ssize_t k
    cdef double Z = m.state[STATE_N_AVG], c, B
    cdef double *margins = s.margins
    cdef double loss
    if Z > 0.0:
        c, B = m.state[STATE_C] / Z, m.state[STATE_B]
        for k in range(m.K):
            s.deployed_m[k] = (c * (row_dot_double(x, idx, nnz, m.A + k * m.d) + B * s.dots[k])
                               + m.Ab[k] / Z)
        margins = s.deployed_m
    loss = loss_and_dloss(cfg.loss, cfg.label_offset, cfg.reference, margins,
                          tg.Y + i * tg.n_targets, m.K, s.deployed_dl)
    s.deployed_loss += tg.sw[i] * loss
    for k in range(m.K):
        if s.deployed_dl[k] != 0.0:
            s.deployed_mistakes += tg.sw[i]
            break


cdef Py_ssize_t run_batch(const RowSource *src, const Py_ssize_t *rows, const Py_ssize_t *ids,
                          Py_ssize_t nb, const Targets *tg, floating *W, floating *b, Model *m,
                          const SGDConfig *cfg, Scratch *s) noexcept nogil:
    """One step on a batch of nb rows: rows[r] locates row r in `src`, ids[r] its targets
    tg.Y[ids[r] * n_targets:] and weight tg.sw[ids[r]]. Returns -1, or the batch position r
    of a row whose margin is not finite (the step size was too large); no step is then taken.
    (dense_row_step is this step for one dense row.)"""
    cdef Py_ssize_t r, nnz
    cdef const floating *x
    cdef const int *idx
    cdef double eta
    cdef bint any_step = False
    cdef int step
    m.state[STATE_T] += 1.0
    eta = step_size(cfg, m.state[STATE_T])
    for r in range(nb):                     # 1) margins and loss derivatives at the current w
        get_row(src, rows[r], &x, &idx, &nnz)
        step = row_loss(x, idx, nnz, ids[r], nb, tg, W, b, m, cfg, s, s.dloss + r * m.K)
        if step < 0:
            return r
        any_step = any_step or step
    if cfg.schedule == ETA_ADAGRAD:         # 2) the step
        adagrad_update(src, rows, nb, W, b, m, cfg, s.dloss, s)
    elif any_step or cfg.alpha > 0.0:
        plain_update(src, rows, nb, W, b, m, cfg, eta, s.dloss)
    if cfg.average and m.state[STATE_T] > cfg.average_start:  # 3) the running average
        average_step(b, m, cfg, m.K * m.d)
    return -1


cdef inline bint dense_row_step(const floating *x, const floating *x_next, Py_ssize_t i,
                                const Targets *tg, floating *W, floating *b, Model *m,
                                const SGDConfig *cfg, Scratch *s) noexcept nogil:
    """run_batch for one dense row x (targets and weight at index i), the usual SGD step:
    the same arithmetic, with the row in hand instead of behind a RowSource. x_next (or
    NULL) is the row the next step takes: AdaGrad computes its dots on the way. False when
    x's margin is not finite (no step taken)."""
    cdef double eta
    cdef int step
    m.state[STATE_T] += 1.0
    eta = step_size(cfg, m.state[STATE_T])
    step = row_loss(x, <const int *> NULL, m.d, i, 1, tg, W, b, m, cfg, s, s.dloss)
    if step < 0:
        return False
    if cfg.schedule == ETA_ADAGRAD:
        if x_next != NULL and not cfg.average:
            adagrad_dense_row_ahead(x, x_next, W, m, cfg, s)
        else:
            adagrad_dense_row(x, W, m, cfg, s.dloss)
        adagrad_intercept(b, m, cfg, s.dloss, 1)
    elif step or cfg.alpha > 0.0:
        plain_shrink(W, m, cfg, eta)
        plain_row(x, <const int *> NULL, m.d, s.dloss, eta, W, m, cfg)
        plain_intercept(b, s.dloss, 1, m.K, eta, cfg)
    if cfg.average and m.state[STATE_T] > cfg.average_start:
        average_step(b, m, cfg, m.K * m.d)
    return True


cdef inline void average_step(const floating *b, Model *m, const SGDConfig *cfg,
                              Py_ssize_t size) noexcept nogil:
    """S <- r S + w and Z <- r Z + 1 after a step: O(K), plus a rare O(K d) fold of c. The
    uniform average (r = 1) keeps its own branch: c stays 1, and no multiply or divide."""
    cdef Py_ssize_t j
    cdef double r = cfg.average_decay
    cdef double *state = m.state
    if r == 1.0:
        state[STATE_B] += state[STATE_SCALE]
        state[STATE_N_AVG] += 1.0
        for j in range(m.K):
            m.Ab[j] += b[j]
        return
    state[STATE_C] *= r
    if state[STATE_C] < AVERAGE_FOLD_BELOW:         # c (A + B W) = (cA) + (cB) W
        for j in range(size):
            m.A[j] *= state[STATE_C]
        state[STATE_B] *= state[STATE_C]
        state[STATE_C] = 1.0
    state[STATE_B] += state[STATE_SCALE] / state[STATE_C]
    state[STATE_N_AVG] = r * state[STATE_N_AVG] + 1.0
    for j in range(m.K):
        m.Ab[j] = r * m.Ab[j] + b[j]


cdef inline void prefetch_row(const floating *X, Py_ssize_t i, Py_ssize_t d,
                              const Targets *tg) noexcept nogil:
    """Ask for row i of X and its targets and weight ahead of their use."""
    fastml_prefetch_range(X + i * d, d * sizeof(floating))
    fastml_prefetch_range(tg.Y + i * tg.n_targets, tg.n_targets * sizeof(double))
    fastml_prefetch_range(tg.sw + i, sizeof(double))


cdef void gather_rows(const RowSource *src, const Targets *tg, const Py_ssize_t *order,
                      Py_ssize_t n, Scratch *s, const floating *like) noexcept nogil:
    """Row r of the chunk buffers = row order[r] of X, Y and sw, for r < n: a tight copy
    loop with prefetching keeps many memory reads in flight, where the SGD loop would wait for
    each shuffled row (and its target and weight) in turn. (`like` only fixes the dtype.)"""
    cdef Py_ssize_t r, i, d = src.n_features, n_targets = tg.n_targets
    cdef const floating *data = <const floating *> src.data
    cdef floating *rows = <floating *> s.rows_buf
    for r in range(n):
        if r + GATHER_AHEAD < n:
            prefetch_row(data, order[r + GATHER_AHEAD], d, tg)
        i = order[r]
        fastml_check_index(i, src.n_rows)
        memcpy(rows + r * d, data + i * d, d * sizeof(floating))
        memcpy(s.y_buf + r * n_targets, tg.Y + i * n_targets, n_targets * sizeof(double))
        s.sw_buf[r] = tg.sw[i]


cdef Py_ssize_t block_at(const Py_ssize_t *order, Py_ssize_t n_left, Py_ssize_t n_rows,
                         Py_ssize_t *base) noexcept nogil:
    """When order[0:n] names only rows of one block of shuffle="block" (the n = min(BLOCK,
    n_rows - base) consecutive rows from base, a multiple of BLOCK), set *base and return n;
    else 0 (another order: the test fails at once, on the first rows of another block)."""
    cdef Py_ssize_t r, first = order[0] - order[0] % GATHER_ROWS, n
    n = min(<Py_ssize_t> GATHER_ROWS, n_rows - first)
    if n > n_left:
        return 0
    for r in range(n):
        if order[r] < first or order[r] >= first + n:
            return 0
    base[0] = first
    return n


cdef struct Ahead:
    # The rows to prefetch during a chunk's steps, one per step: rows[0:n] in that order, or
    # (rows == NULL) the n consecutive rows from `first`, a block, requested in memory order.
    const Py_ssize_t *rows
    Py_ssize_t first
    Py_ssize_t n


cdef Ahead next_chunk(const Py_ssize_t *order, Py_ssize_t n_left, Py_ssize_t chunk,
                      Py_ssize_t n_rows) noexcept nogil:
    """The rows of the chunk that starts at order[0] (n_left rows left in the epoch)."""
    cdef Ahead ahead
    cdef Py_ssize_t n_block = block_at(order, n_left, n_rows, &ahead.first) if n_left > 0 else 0
    if n_block > 0:
        ahead.rows, ahead.n = NULL, n_block
    else:
        ahead.rows, ahead.first, ahead.n = order, 0, min(chunk, n_left)
    return ahead


cdef inline void prefetch_ahead(const floating *X, Py_ssize_t d, const Targets *tg,
                                const Ahead *ahead, Py_ssize_t r) noexcept nogil:
    """Step r's share of the next chunk's prefetch. A block goes in memory order: its rows'
    lines one row per step, its targets and weights one line (8 doubles) per 8 steps."""
    cdef Py_ssize_t i, rows
    if r >= ahead.n:
        return
    if ahead.rows != NULL:
        prefetch_row(X, ahead.rows[r], d, tg)
        return
    i = ahead.first + r
    fastml_prefetch_range(X + i * d, d * sizeof(floating))
    if r % 8 == 0:
        rows = min(8, ahead.n - r)          # the block's rows only: no address past its end
        fastml_prefetch_range(tg.Y + i * tg.n_targets, rows * tg.n_targets * sizeof(double))
        fastml_prefetch_range(tg.sw + i, rows * sizeof(double))


cdef Py_ssize_t run_chunk(const RowSource *src, const Py_ssize_t *rows, Py_ssize_t n,
                          const Targets *tg, floating *W, floating *b, Model *m,
                          const SGDConfig *cfg, Scratch *s, const floating *next_X,
                          const Targets *next_tg, const Ahead *ahead) noexcept nogil:
    """The steps on rows[0:n] of src (row rows[r]'s targets and weight at index rows[r] of
    tg), in batches of cfg.batch_size. One dense row per step (plain SGD on dense X, the usual
    case) steps straight on the row in memory: the row source's branch is taken once per chunk,
    not per row. Meanwhile the next chunk's rows (`ahead`, of next_X) are prefetched, one per
    step, so they are in cache when their turn comes. Returns -1, or the position r whose
    margin was not finite."""
    cdef Py_ssize_t r, i, first = 0, nb, bad, d = src.n_features
    cdef const floating *X = <const floating *> src.data
    cdef const floating *x_next
    if src.indices == NULL and cfg.batch_size == 1:
        for r in range(n):
            prefetch_ahead(next_X, d, next_tg, ahead, r)
            i = rows[r]
            fastml_check_index(i, src.n_rows)
            x_next = NULL
            if r + 1 < n:
                fastml_check_index(rows[r + 1], src.n_rows)
                x_next = X + rows[r + 1] * d
            if not dense_row_step(X + i * d, x_next, i, tg, W, b, m, cfg, s):
                return r
        return -1
    while first < n:
        nb = min(cfg.batch_size, n - first)
        bad = run_batch(src, rows + first, rows + first, nb, tg, W, b, m, cfg, s)
        if bad >= 0:
            return first + bad
        first += nb
    return -1


cdef Py_ssize_t run_epoch(const RowSource *src, const Targets *tg, const Py_ssize_t *order,
                          Py_ssize_t n_order, floating *W, floating *b, Model *m,
                          const SGDConfig *cfg, Scratch *s) noexcept nogil:
    """The batches of one epoch, in `order`, a chunk at a time. Dense rows in a shuffled order
    (s.rows_buf != NULL) are read ahead, the next chunk's rows during this chunk's steps:
    - a block of shuffle="block" (one row per step) is stepped on where it lies in X, and the
      next block is requested in memory order, so it streams in at bandwidth (bench/README.md,
      branch sgdfast: this replaced a copy of each block, which waited on memory);
    - otherwise whole batches of rows are gathered in `order` into s.rows_buf / y_buf / sw_buf
      by a tight copy loop, which keeps many reads in flight where stepping straight on
      shuffled rows waits on memory, and stepped on there.
    Returns -1, or the position in `order` of the row whose margin stopped being finite (the
    epoch stops there)."""
    cdef Py_ssize_t c0 = 0, c1, bad = -1, n_block, base = 0
    cdef const floating *X = <const floating *> src.data
    cdef Py_ssize_t chunk = max(1, GATHER_ROWS // cfg.batch_size) * cfg.batch_size
    cdef RowSource gathered = src[0]
    cdef Targets gathered_tg = tg[0]
    cdef Ahead ahead
    gathered.data, gathered.indptr, gathered.indices = s.rows_buf, NULL, NULL
    gathered.n_rows = chunk
    gathered_tg.Y, gathered_tg.sw = s.y_buf, s.sw_buf
    s.loss_sum = 0.0
    s.n_deferred = 0
    s.have_next_dots = False
    s.updates = 0
    s.step_weight = 0.0
    s.deployed_loss = 0.0
    s.deployed_mistakes = 0.0
    ahead.rows, ahead.n = NULL, 0               # in order: the hardware prefetcher suffices
    while c0 < n_order and bad < 0:
        c1 = min(c0 + chunk, n_order)
        n_block = (block_at(order + c0, n_order - c0, src.n_rows, &base)
                   if s.rows_buf != NULL and cfg.batch_size == 1 else 0)
        if n_block > 0:
            c1 = c0 + n_block
        if s.rows_buf != NULL:
            ahead = next_chunk(order + c1, n_order - c1, chunk, src.n_rows)
        if n_block > 0:                     # a block of shuffle="block": its rows in X
            bad = run_chunk(src, order + c0, n_block, tg, W, b, m, cfg, s, X, tg, &ahead)
        elif s.rows_buf != NULL:            # shuffled batches: gathered, then stepped on
            gather_rows(src, tg, order + c0, c1 - c0, s, W)
            bad = run_chunk(&gathered, s.local, c1 - c0, &gathered_tg, W, b, m, cfg, s, X,
                            tg, &ahead)
        else:
            bad = run_chunk(src, order + c0, c1 - c0, tg, W, b, m, cfg, s, X, tg, &ahead)
        if bad >= 0:
            bad += c0
        c0 = c1
    flush_deferred_loss(s)
    if not cfg.average:                     # the iterate is the deployed model
        s.deployed_loss, s.deployed_mistakes = s.loss_sum, s.step_weight
    return bad


def block_order(uint64_t seed, Py_ssize_t[::1] order, Py_ssize_t block):
    """Fill `order` (n rows) with shuffle="block"'s order of one epoch drawn from `seed`:
    blocks of `block` consecutive rows in a random order, the rows of each in a random order
    (csrc/fastml_shuffle.h)."""
    cdef Py_ssize_t n = order.shape[0]
    cdef Py_ssize_t *blocks
    if block < 1:
        raise ValueError("block must be >= 1")
    if n == 0:
        return
    blocks = <Py_ssize_t *> malloc(((n - 1) // block + 1) * sizeof(Py_ssize_t))
    if blocks == NULL:
        raise MemoryError()
    with nogil:
        fastml_block_order(seed, n, block, &order[0], blocks)
    free(blocks)


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
    gradient, -1 or the position in `order` of the row whose margin was not finite: the epoch
    stopped there, sum of sw_i over the rows with a nonzero gradient, and the last two's
    progressive-validation counterparts at the deployed model: sum of sw_i * loss_i and sum of
    sw_i over the rows it gets wrong, the iterate's own sums without averaging). G/Gb are used by
    adagrad, A/Ab by averaging (else shape 0). step_log, if given (len(order), K), receives 1
    where output k took a step on the r-th row of `order` and 0 elsewhere."""
    cdef RowSource src
    cdef Targets tg
    cdef Model m
    cdef Scratch s
    cdef Py_ssize_t K = W.shape[0], n_features = W.shape[1], bad, r
    cdef bint adagrad = cfg.schedule == ETA_ADAGRAD
    cdef bint gather
    cdef Py_ssize_t chunk
    row_source(X, W, &src)
    if cfg.batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    # A batch never holds more rows than the epoch: a larger batch_size is the epoch's rows,
    # the same steps, and every buffer below is sized by the rows, not by the parameter.
    cfg.batch_size = min(cfg.batch_size, max(<Py_ssize_t> 1, order.shape[0]))
    if (b.shape[0] != K or Y.shape[0] != src.n_rows or sample_weight.shape[0] != src.n_rows
            or state.shape[0] != N_STATE
            or (adagrad and (G.shape[0] != K or G.shape[1] != n_features or Gb.shape[0] != K))
            or (cfg.average and (A.shape[0] != K or A.shape[1] != n_features
                                 or Ab.shape[0] != K))
            or (cfg.loss == LOSS_SQUARED and Y.shape[1] != K) or Y.shape[1] < 1):
        raise ValueError("sgd_epoch: shapes do not agree")
    for r in range(order.shape[0]):         # O(n): the row numbers the loop trusts
        if order[r] < 0 or order[r] >= src.n_rows:
            raise ValueError("sgd_epoch: `order` names a row outside X")
    if step_log is not None and (step_log.shape[0] != order.shape[0] or step_log.shape[1] != K):
        raise ValueError("step_log must have shape (len(order), n_outputs)")
    tg.Y, tg.n_targets, tg.sw = &Y[0, 0] if Y.shape[0] else NULL, Y.shape[1], \
        &sample_weight[0] if sample_weight.shape[0] else NULL
    m.K, m.d = K, n_features
    m.G = &G[0, 0] if G.shape[0] else NULL
    m.Gb = &Gb[0] if Gb.shape[0] else NULL
    m.A = &A[0, 0] if A.shape[0] else NULL
    m.Ab = &Ab[0] if Ab.shape[0] else NULL
    m.state = &state[0]
    gather = src.indices == NULL and not is_identity(order)
    chunk = max(1, GATHER_ROWS // cfg.batch_size) * cfg.batch_size
    if scratch_init(&s, K, n_features, Y.shape[1], chunk, sizeof(floating), &cfg, gather) != 0:
        scratch_free(&s)
        raise MemoryError()
    s.step_log = &step_log[0, 0] if step_log is not None and step_log.shape[0] else NULL
    s.log_pos = 0
    try:
        if order.shape[0] == 0:
            return 0.0, 0, -1, 0.0, 0.0, 0.0
        with nogil:
            bad = run_epoch(&src, &tg, &order[0], order.shape[0], &W[0, 0], &b[0], &m, &cfg,
                            &s)
        return s.loss_sum, s.updates, bad, s.step_weight, s.deployed_loss, s.deployed_mistakes
    finally:
        scratch_free(&s)


# ================================================================ parameter mixing (n_jobs > 1)
# The shards of one epoch of SGDEngine.mixed_epoch (_sgd.py) in one call: shard j, a contiguous
# stretch of the epoch's order, steps through run_epoch on its own copy of the state (slot j of
# stacked arrays), all shards at once on OpenMP threads with the GIL released throughout. The
# mix (an O(shards K d) weighted average) stays in _sgd.py's mix_into, the one definition the
# Dask driver shares.
from cython.parallel cimport prange

ctypedef struct ShardOutcome:
    double loss_sum       # what sgd_epoch returns for the shard ...
    Py_ssize_t updates
    Py_ssize_t bad        # -1, or the position in the shard of the row whose margin broke
    double step_weight
    double deployed_loss
    double deployed_mistakes
    double weight_sum     # ... and its rows' sample-weight sum: the shard's share in the mix
    int status            # 0; -1 out of memory; -2 a row outside X


cdef Py_ssize_t block_head(const Py_ssize_t *order, Py_ssize_t n) noexcept nogil:
    """How many rows at the start of order[0:n] lie in the shuffle="block" block of order[0]
    (1 for most other orders). A shard cut inside a block steps on these first, on their own,
    so that run_epoch then meets every later block whole and steps on it in place;
    otherwise every chunk of the shard straddles two blocks and is gathered row by row (the
    shard took 1.45x as long, bench/README.md)."""
    cdef Py_ssize_t r = 1, first = order[0] - order[0] % GATHER_ROWS
    while r < n and first <= order[r] < first + GATHER_ROWS:
        r += 1
    return r


cdef bint is_consecutive(const Py_ssize_t *order, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t r
    for r in range(1, n):
        if order[r] != order[0] + r:
            return False
    return True


cdef Py_ssize_t run_piece(const RowSource *src, const Targets *tg, const Py_ssize_t *order,
                         Py_ssize_t n, floating *W, floating *b, Model *m, const SGDConfig *cfg,
                         Scratch *s, ShardOutcome *out) noexcept nogil:
    """run_epoch over order[0:n], its sums added to out's; returns what run_epoch returns."""
    cdef Py_ssize_t bad = run_epoch(src, tg, order, n, W, b, m, cfg, s)
    out.loss_sum += s.loss_sum
    out.updates += s.updates
    out.step_weight += s.step_weight
    out.deployed_loss += s.deployed_loss
    out.deployed_mistakes += s.deployed_mistakes
    return bad


cdef void run_shard(const RowSource *src, const Targets *tg, const Py_ssize_t *order,
                    Py_ssize_t n, floating *W, floating *b, Model *m, SGDConfig cfg,
                    ShardOutcome *out) noexcept nogil:
    """sgd_epoch's steps over order[0:n] (n >= 1) on the state (W, b, m), and the rows' weight
    sum. Rows in consecutive order are read in place, others copied chunk by chunk, as in
    sgd_epoch; one-row batches step on the block head first, on its own (block_head: the same
    steps, since no batch spans the cut)."""
    cdef Scratch s
    cdef Py_ssize_t r, head = 0
    cdef bint gather = src.indices == NULL and not is_consecutive(order, n)
    memset(out, 0, sizeof(ShardOutcome))
    out.bad = -1
    for r in range(n):                      # O(n): the row numbers the loop trusts
        if order[r] < 0 or order[r] >= src.n_rows:
            out.status = -2
            return
        out.weight_sum += tg.sw[order[r]]
    cfg.batch_size = min(cfg.batch_size, n)     # as sgd_epoch: never more rows than the epoch's
    if scratch_init(&s, m.K, m.d, tg.n_targets,
                    max(1, GATHER_ROWS // cfg.batch_size) * cfg.batch_size, sizeof(floating),
                    &cfg, gather) == 0:
        if cfg.batch_size == 1:
            head = block_head(order, n)
        out.bad = run_piece(src, tg, order, head, W, b, m, &cfg, &s, out)
        if out.bad < 0:
            out.bad = run_piece(src, tg, order + head, n - head, W, b, m, &cfg, &s, out)
            if out.bad >= 0:
                out.bad += head
    else:
        out.status = -1
    scratch_free(&s)


cdef void *private_copy(const void *data, size_t size, bint *failed) noexcept nogil:
    """A copy of `size` bytes in memory allocated by the calling thread (NULL for no data)."""
    cdef void *copy
    if data == NULL or size == 0:
        return NULL
    copy = malloc(size)
    if copy == NULL:
        failed[0] = True
    else:
        memcpy(copy, data, size)
    return copy


cdef void run_shard_apart(const RowSource *src, const Targets *tg, const Py_ssize_t *order,
                          Py_ssize_t n, floating *W, floating *b, Model *m, SGDConfig cfg,
                          ShardOutcome *out) noexcept nogil:
    """run_shard on this thread's own copy of the shard's state (and outcome), written back at
    the end. The shards' slots are neighbours in the stacked arrays and every step writes b and
    the clock (and W on most steps): stepping in place, two threads would share the cache lines
    at the slots' edges and pull them from each other's core on every step (the two-shard
    epoch took 27 ms against 22.5 ms apart, 300k x 100 perceptron; bench/README.md)."""
    cdef size_t Kd = m.K * m.d, K = m.K
    cdef bint failed = False
    cdef Model mine = m[0]
    cdef ShardOutcome result                 # on this thread's stack, like the state
    cdef floating *W_mine = <floating *> private_copy(W, Kd * sizeof(floating), &failed)
    cdef floating *b_mine = <floating *> private_copy(b, K * sizeof(floating), &failed)
    mine.G = <double *> private_copy(m.G, Kd * sizeof(double), &failed)
    mine.Gb = <double *> private_copy(m.Gb, K * sizeof(double), &failed)
    mine.A = <double *> private_copy(m.A, Kd * sizeof(double), &failed)
    mine.Ab = <double *> private_copy(m.Ab, K * sizeof(double), &failed)
    mine.state = <double *> private_copy(m.state, N_STATE * sizeof(double), &failed)
    if failed:
        memset(&result, 0, sizeof(ShardOutcome))
        result.status = -1
    else:
        run_shard(src, tg, order, n, W_mine, b_mine, &mine, cfg, &result)
        memcpy(W, W_mine, Kd * sizeof(floating))
        memcpy(b, b_mine, K * sizeof(floating))
        memcpy(m.state, mine.state, N_STATE * sizeof(double))
        if m.G != NULL:
            memcpy(m.G, mine.G, Kd * sizeof(double))
            memcpy(m.Gb, mine.Gb, K * sizeof(double))
        if m.A != NULL:
            memcpy(m.A, mine.A, Kd * sizeof(double))
            memcpy(m.Ab, mine.Ab, K * sizeof(double))
    free(W_mine); free(b_mine); free(mine.G); free(mine.Gb); free(mine.A); free(mine.Ab)
    free(mine.state)
    out[0] = result


def sgd_shards_epoch(X, const double[:, ::1] Y, const double[::1] sample_weight,
                     const Py_ssize_t[::1] order, const Py_ssize_t[::1] bounds,
                     floating[:, :, ::1] W, floating[:, ::1] b, double[:, :, ::1] G,
                     double[:, ::1] Gb, double[:, :, ::1] A, double[:, ::1] Ab,
                     double[:, ::1] state, SGDConfig cfg):
    """The shards of one epoch of parameter mixing: shard j = order[bounds[j]:bounds[j + 1]]
    (bounds strictly increasing from 0 to len(order)) takes sgd_epoch's steps on state slot j:
    W[j], b[j], G[j], Gb[j], A[j], Ab[j], state[j] (sgd_epoch's shapes behind a leading shard
    axis), every shard on its own OpenMP thread. Returns, per shard, (sum of sw_i * loss_i
    before each step, rows with a nonzero gradient, -1 or the position in the shard of the row
    whose margin was not finite: that shard stopped there, sum of sw_i over the rows with a
    nonzero gradient, the progressive sums of sgd_epoch at the shard's deployed model, sum of
    sw_i over the shard's rows)."""
    cdef Py_ssize_t S = bounds.shape[0] - 1, K = W.shape[1], d = W.shape[2], j
    cdef bint adagrad = cfg.schedule == ETA_ADAGRAD
    cdef RowSource src
    cdef Targets tg
    cdef Model *models = NULL
    cdef ShardOutcome *outs = NULL
    if S < 1 or K < 1 or d < 1:
        raise ValueError("sgd_shards_epoch: no shards, outputs or features")
    row_source(X, W[0], &src)
    if cfg.batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    if (b.shape[0] != S or b.shape[1] != K or state.shape[0] != S or state.shape[1] != N_STATE
            or Y.shape[0] != src.n_rows or sample_weight.shape[0] != src.n_rows
            or (adagrad and (G.shape[0] != S or G.shape[1] != K or G.shape[2] != d
                             or Gb.shape[0] != S or Gb.shape[1] != K))
            or (cfg.average and (A.shape[0] != S or A.shape[1] != K or A.shape[2] != d
                                 or Ab.shape[0] != S or Ab.shape[1] != K))
            or (cfg.loss == LOSS_SQUARED and Y.shape[1] != K) or Y.shape[1] < 1
            or bounds[0] != 0 or bounds[S] != order.shape[0]):
        raise ValueError("sgd_shards_epoch: shapes do not agree")
    for j in range(S):
        if bounds[j + 1] <= bounds[j]:
            raise ValueError("sgd_shards_epoch: the shard bounds must increase")
    tg.Y, tg.n_targets, tg.sw = &Y[0, 0], Y.shape[1], &sample_weight[0]
    models = <Model *> calloc(S, sizeof(Model))
    outs = <ShardOutcome *> calloc(S, sizeof(ShardOutcome))
    try:
        if models == NULL or outs == NULL:
            raise MemoryError()
        for j in range(S):
            models[j].K, models[j].d, models[j].state = K, d, &state[j, 0]
            if adagrad:
                models[j].G, models[j].Gb = &G[j, 0, 0], &Gb[j, 0]
            if cfg.average:
                models[j].A, models[j].Ab = &A[j, 0, 0], &Ab[j, 0]
        with nogil:
            for j in prange(S, num_threads=S, schedule="static", chunksize=1):
                run_shard_apart(&src, &tg, &order[bounds[j]], bounds[j + 1] - bounds[j],
                          &W[j, 0, 0], &b[j, 0], &models[j], cfg, &outs[j])
        for j in range(S):
            if outs[j].status == -1:
                raise MemoryError()
            if outs[j].status == -2:
                raise ValueError("sgd_shards_epoch: `order` names a row outside X")
        return [(outs[j].loss_sum, outs[j].updates, outs[j].bad, outs[j].step_weight,
                 outs[j].deployed_loss, outs[j].deployed_mistakes, outs[j].weight_sum)
                for j in range(S)]
    finally:
        free(models)
        free(outs)
