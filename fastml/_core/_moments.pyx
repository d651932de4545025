# Chan's merge of weighted moments for Python callers (the formula is in _moments.pxd, where the
# naive Bayes kernel cimports it for its per-block and per-thread merges).
import numpy as np

from ._moments cimport chan_factors, chan_merge


def merge_factors(double na, double nb):
    """(n, nb / n, na nb / n) for merging two samples of weights na and nb: the merged mean is
    ma + (mb - ma) * (nb / n) and the merged scatter M2a + M2b + (na nb / n) delta delta^T.

    An empty side (weight <= 0) contributes nothing: (na, 0, 0) or (nb, 1, 0).

    >>> merge_factors(1.0, 3.0)
    (4.0, 0.75, 0.75)
    """
    cdef double n, frac_b, cross
    chan_factors(na, nb, &n, &frac_b, &cross)
    return n, frac_b, cross


def merge_moments(a, b):
    """Moments (n, shift, mean, m2) of the union of two samples, elementwise.

    a and b are 4-tuples of float64 arrays of one shape; the true mean is shift + mean (the
    naive Bayes kernel's form, so data far from 0 merge without cancellation). Returns new
    arrays; the result keeps a's shift where a has data, else takes b's.

    >>> [float(v[0]) for v in merge_moments(*[tuple(np.array([v]) for v in m)
    ...                                        for m in ((2, 10, 0, 2), (2, 10, 2, 2))])]
    [4.0, 10.0, 1.0, 8.0]
    """
    shape = np.shape(a[0])
    out = [np.array(v, dtype=np.float64, order="C").reshape(-1) for v in a]
    other = [np.ascontiguousarray(v, dtype=np.float64).reshape(-1) for v in b]
    if any(v.shape != out[0].shape for v in out + other):
        raise ValueError("merge_moments needs 8 arrays of one shape")
    cdef double[::1] n = out[0], shift = out[1], mean = out[2], m2 = out[3]
    cdef const double[::1] nb = other[0], sb = other[1], mb = other[2], m2b = other[3]
    cdef Py_ssize_t i
    with nogil:
        for i in range(n.shape[0]):
            chan_merge(&n[i], &shift[i], &mean[i], &m2[i], nb[i], sb[i], mb[i], m2b[i])
    return tuple(v.reshape(shape) for v in out)
