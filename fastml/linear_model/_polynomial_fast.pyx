# Polynomial feature expansion (lecture 001, "polynomial regression": y(x, w) = w0 + w1 x + ...
# + w_M x^M is a linear model on the powers of x; with several features, on all monomials of
# total degree <= M). The driver is fastml/linear_model/_polynomial.py (PolynomialFeatures).
#
# What it computes: out[i, c] = prod of the features in term c, for every row i. The terms are
# listed (in Python, once per shape, not per row) so that each term is its parent term times one
# feature: out[i, c] = out[i, parent[c]] * x[i, feature[c]], with parent -1 meaning the empty
# product 1 (and feature -1 meaning no factor: the bias column). Parents come before their
# children, so one left-to-right sweep over a row's output fills it with one multiply per
# column and no powers recomputed.
#
# Loop invariant (per row, left to right): out[i, :c] hold the finished terms 0..c-1.
# Rows are independent: they run in parallel threads, and the result does not depend on it.
#
# Contract (fastml/_core/__init__.py): shapes and the term table are checked at entry (the
# table comes from a model file too), so every index below is inside its memoryview.
from cython.parallel cimport prange
from cython cimport floating

from .._core._typedefs cimport index_t


def poly_expand(const floating[:, ::1] X, const index_t[::1] parent,
                const index_t[::1] feature, floating[:, ::1] out, int n_threads=1):
    """Fill out (n, n_terms) with the terms described by (parent, feature) (module note)."""
    cdef index_t n = X.shape[0], d = X.shape[1], T = parent.shape[0], i, c
    if out.shape[0] != n or out.shape[1] != T or feature.shape[0] != T:
        raise ValueError("poly_expand: inconsistent shapes")
    for c in range(T):
        if not (-1 <= parent[c] < c and -1 <= feature[c] < d):
            raise ValueError("poly_expand: a term's parent must come before it and its "
                             "feature must be a column of X")
        if parent[c] >= 0 and feature[c] < 0:
            raise ValueError("poly_expand: only the bias term has no feature")
    cdef floating v
    with nogil:
        for i in prange(n, num_threads=n_threads, schedule="static"):
            for c in range(T):
                v = 1 if feature[c] < 0 else X[i, feature[c]]
                if parent[c] >= 0:
                    v = v * out[i, parent[c]]
                out[i, c] = v
    return out
