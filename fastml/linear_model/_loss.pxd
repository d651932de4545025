# The losses of the linear models as inline functions of the margins, shared by the SGD loop
# (_sgd_fast.pyx) and the batch gradient kernel (_batch_fast.pyx): one definition of each loss.
# The batch kernel's dense logistic path evaluates the same formulas vectorized across rows
# (csrc/fastml_batch.h; equal to these to a few ulps, not bit for bit).
#   LOG         softmax cross-entropy; binary = logistic: loss log(1+e^m) - y m, d/dm = p - y
#               (004's cross-entropy gradient); with `reference`, label 0 has margin 0 (002)
#   HINGE       max(0, 1 - t m) per output (t = +1 for the output's class, else -1) (001, 003)
#   PERCEPTRON  max(0, -t m): a mistake when t m <= 0 (003)
#   SQUARED     (m - y)^2 / 2 per output (001)
from libc.math cimport exp, log
from .._core._csrc cimport fastml_logistic_loss_dloss
from .._core._typedefs cimport index_t

cdef enum:
    LOSS_LOG = 0
    LOSS_HINGE = 1
    LOSS_PERCEPTRON = 2
    LOSS_SQUARED = 3


cdef inline double binary_target(index_t label, int label_offset) noexcept nogil:
    """LOG with one output and `reference` (binary): t = 1 for the output's class, else 0."""
    return 1.0 if label == label_offset else 0.0


cdef inline double softmax_loss(const double *m, Py_ssize_t K, index_t label, int label_offset,
                                bint reference, double *dl) noexcept nogil:
    """Cross-entropy of the softmax over m[0:K] (plus a zero margin for label 0 when
    `reference`); output k stands for label k + label_offset. Writes d loss / d m into dl."""
    cdef Py_ssize_t k
    cdef double mx, zsum, loss
    if K == 1 and reference:                # binary: p = sigma(m), stable at any |m|
        return fastml_logistic_loss_dloss(m[0], binary_target(label, label_offset), dl)
    mx = 0.0 if reference else m[0]
    for k in range(K):
        if m[k] > mx:
            mx = m[k]
    zsum = exp(-mx) if reference else 0.0
    for k in range(K):
        dl[k] = exp(m[k] - mx)
        zsum += dl[k]
    loss = log(zsum) + mx
    for k in range(K):
        dl[k] /= zsum
        if k + label_offset == label:
            dl[k] -= 1.0
            loss -= m[k]
    return loss


cdef inline double loss_and_dloss(int loss, int label_offset, bint reference, const double *m,
                                  const double *y, Py_ssize_t K, double *dl) noexcept nogil:
    """Loss of one row at margins m[0:K]; writes d loss / d m_k into dl[0:K]. y is the row's
    label (as a double) for the classification losses, its K targets for SQUARED."""
    cdef Py_ssize_t k
    cdef index_t label
    cdef double total = 0.0, t, z
    if loss == LOSS_SQUARED:
        for k in range(K):
            dl[k] = m[k] - y[k]
            total += 0.5 * dl[k] * dl[k]
        return total
    label = <index_t> y[0]
    if loss == LOSS_LOG:
        return softmax_loss(m, K, label, label_offset, reference, dl)
    for k in range(K):                      # hinge / perceptron, one-vs-rest per output
        t = 1.0 if k + label_offset == label else -1.0
        z = t * m[k]
        if loss == LOSS_HINGE:
            dl[k] = -t if z < 1.0 else 0.0
            total += 1.0 - z if z < 1.0 else 0.0
        else:
            dl[k] = -t if z <= 0.0 else 0.0
            total += -z if z <= 0.0 else 0.0
    return total
