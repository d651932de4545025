# Class scores to (log) posteriors, for every classifier's predict_proba / predict_log_proba
# (naive Bayes' joint log-likelihoods, the linear classifiers' margins), and the NaN check of
# the linear classifiers' margins.
#
# A one-row predict costs its Python calls, not its arithmetic: the posterior is one call
# instead of numpy's max, subtract, exp, row sum, log, subtract (and exp), with the same IEEE
# operations per element in the same order. exp and log are the C library's, which numpy's
# float64 exp / log call on CPUs without AVX-512F (numpy's AVX-512F loops may differ from them
# in the last bit); the row sum replicates numpy's pairwise sum.
from libc.math cimport INFINITY, exp, log
from libc.stdlib cimport free, malloc
from cython cimport floating

import numpy as np

cdef extern from "fastml_math.h" nogil:
    double fastml_log1p_unit(double e)


cdef double pairwise_sum(const double *a, Py_ssize_t n) noexcept nogil:
    """np.add.reduce(a[:n]) with numpy's bits: its pairwise sum of a contiguous run (a plain
    loop below 8 values, 8 interleaved partial sums up to 128, halves beyond)."""
    cdef double r[8]
    cdef double res = 0.0
    cdef Py_ssize_t i, q, half
    if n < 8:
        for i in range(n):
            res += a[i]
        return res
    if n > 128:
        half = n // 2
        half -= half % 8
        return pairwise_sum(a, half) + pairwise_sum(a + half, n - half)
    for q in range(8):
        r[q] = a[q]
    i = 8
    while i < n - n % 8:
        for q in range(8):
            r[q] += a[i + q]
        i += 8
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    while i < n:
        res += a[i]
        i += 1
    return res


cdef bint row_maxima_finite(const double[:, ::1] scores) noexcept nogil:
    """Whether every row's max (np.max's: NaN if the row has one) is finite: not -inf (the
    row has probability 0 under every class), +inf (the shift would give inf - inf) or NaN."""
    cdef Py_ssize_t i, k
    cdef double top
    for i in range(scores.shape[0]):
        top = scores[i, 0]
        for k in range(1, scores.shape[1]):
            if scores[i, k] > top or scores[i, k] != scores[i, k]:
                top = scores[i, k]
        if top != top or top == INFINITY or top == -INFINITY:
            return False
    return True


def log_posterior(double[:, ::1] scores, bint shift=True, bint exponentiate=False):
    """Class scores (log-likelihoods, margins) to log posteriors, in place: scores[i] -=
    max(scores[i]) (when shift), then scores[i] -= log(sum(exp(scores[i]))), then
    scores = exp(scores) when exponentiate (the posterior itself).

    With shift, returns False and leaves scores unchanged when some row's max is not finite
    (-inf: probability 0 under every class; +inf or NaN): the caller's general path handles
    those rows, and may shift and call again with shift=False. Returns True when done."""
    cdef Py_ssize_t n = scores.shape[0], K = scores.shape[1], i, k
    cdef double top, norm
    cdef double *expd
    if K == 0:
        return True
    if shift and not row_maxima_finite(scores):     # all or nothing
        return False
    expd = <double *> malloc(K * sizeof(double))
    if expd == NULL:
        raise MemoryError()
    with nogil:
        for i in range(n):
            if shift:
                top = scores[i, 0]
                for k in range(1, K):
                    if scores[i, k] > top:
                        top = scores[i, k]
                for k in range(K):
                    scores[i, k] -= top
            for k in range(K):
                expd[k] = exp(scores[i, k])
            norm = log(pairwise_sum(expd, K))
            for k in range(K):
                scores[i, k] -= norm
                if exponentiate:
                    scores[i, k] = exp(scores[i, k])
    free(expd)
    return True


cdef inline double softplus(double m) noexcept nogil:
    """log(1 + e^m) at any m (+inf included) without overflow: max(m, 0) + log1p(e^-|m|)."""
    return (m if m > 0.0 else 0.0) + fastml_log1p_unit(exp(-m if m > 0.0 else m))


def binary_log_posterior(const double[::1] margins, bint exponentiate=False):
    """Two classes from the log-odds m of the second: an (n, 2) array of
    log P = [-softplus(m), -softplus(-m)] (P itself when exponentiate: [1/(1+e^m), 1/(1+e^-m)]
    by one exponential e^-|m|), finite or infinite m (P = 1 / 0 at +-inf). A NaN margin gives
    NaN: the callers refuse it before."""
    cdef Py_ssize_t n = margins.shape[0], i
    cdef double m, e, inv
    out = np.empty((n, 2))
    cdef double[:, ::1] o = out
    with nogil:
        for i in range(n):
            m = margins[i]
            if exponentiate:
                e = exp(-m if m > 0.0 else m)       # e^-|m| in [0, 1]
                inv = 1.0 / (1.0 + e)
                o[i, 0] = e * inv if m > 0.0 else inv
                o[i, 1] = inv if m > 0.0 else e * inv
            else:
                o[i, 0] = -softplus(m)
                o[i, 1] = -softplus(-m)
    return out


def first_nan_row(scores):
    """The index of the first row of the float32 / float64 2-D array scores holding a NaN,
    or -1: np.isnan(scores).any() in one call without temporaries (~0.3 us instead of ~2 us
    on one row; a fused-type def would spend ~1 us choosing its signature)."""
    if scores.dtype == np.float32:
        return nan_row[float](scores)
    return nan_row[double](scores)


cdef Py_ssize_t nan_row(const floating[:, :] scores) noexcept:
    cdef Py_ssize_t i, k
    for i in range(scores.shape[0]):
        for k in range(scores.shape[1]):
            if scores[i, k] != scores[i, k]:
                return i
    return -1
