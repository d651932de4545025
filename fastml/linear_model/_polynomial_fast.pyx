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


# ---------------------------------------------------------------- CSR rows
# A monomial is nonzero in a row only if each of its features is: the CSR expansion enumerates,
# row by row, the monomials of the row's stored features only (no term table is walked), in
# the dense column order (by degree, then lexicographic in the feature indices), so each
# output row comes out sorted. A monomial's column is offsets[k] plus its lexicographic rank
# among the degree-k monomials, sum over its factors t of
# prefix[k - 1 - t, a_t] - prefix[k - 1 - t, low_t], where prefix[j, v] counts the degree-j
# monomials over the features below v that could follow, low_t = a_{t-1} (a_{t-1} + 1 for
# interaction_only; 0 for t = 0): the monomials with the same first t factors and a smaller
# (t+1)-th one. A value is the product of its factors left to right, as the dense sweep
# multiplies a term's parent by its last factor: the same bits.

def poly_expand_csr(const floating[::1] data, const int[::1] indices, const index_t[::1] indptr,
                    const index_t[::1] offsets, const index_t[:, ::1] prefix,
                    bint interaction_only, bint include_bias, const index_t[::1] out_indptr,
                    floating[::1] out_data, index_t[::1] out_indices, index_t[::1] p):
    """Fill the CSR expansion (out_indptr given, from the counts of each row's monomials)
    of the CSR rows (data, indices, indptr): offsets (degree + 1,) the first column of each
    degree, prefix (degree, d + 1) the rank table of the note above; p (degree,) scratch."""
    cdef Py_ssize_t n = indptr.shape[0] - 1, degree = offsets.shape[0] - 1
    cdef Py_ssize_t d = prefix.shape[1] - 1, i, k, t, m, start, pos, top
    cdef index_t column, a, low
    cdef floating value
    if (out_indptr.shape[0] != n + 1 or prefix.shape[0] != max(degree, 1)
            or p.shape[0] < degree
            or out_data.shape[0] != out_indices.shape[0] or data.shape[0] != indices.shape[0]):
        raise ValueError("poly_expand_csr: inconsistent shapes")
    for i in range(n):
        if not 0 <= indptr[i] <= indptr[i + 1] <= indices.shape[0]:
            raise ValueError("poly_expand_csr: indptr out of range")
    if out_indptr[n] != out_data.shape[0]:
        raise ValueError("poly_expand_csr: out_indptr does not match the output's length")
    with nogil:
        for i in range(n):
            start, m = indptr[i], indptr[i + 1] - indptr[i]
            pos = out_indptr[i]
            if include_bias:
                out_indices[pos] = 0
                out_data[pos] = 1
                pos += 1
            for k in range(1, degree + 1):
                if interaction_only and k > m:
                    break
                if m == 0:
                    break
                for t in range(k):          # the first monomial: p = 0, 0, ... (0, 1, ...)
                    p[t] = t if interaction_only else 0
                while True:
                    column = offsets[k]
                    value = 1
                    low = 0
                    for t in range(k):
                        a = indices[start + p[t]]
                        if a >= d or a < 0 or pos >= out_indptr[i + 1]:
                            with gil:
                                raise ValueError("poly_expand_csr: an index is out of range")
                        column += prefix[k - 1 - t, a] - prefix[k - 1 - t, low]
                        value = data[start + p[t]] if t == 0 else value * data[start + p[t]]
                        low = a + 1 if interaction_only else a
                    out_indices[pos] = column
                    out_data[pos] = value
                    pos += 1
                    top = k - 1                 # the next monomial, lexicographically
                    while top >= 0 and p[top] == (m - k + top if interaction_only else m - 1):
                        top -= 1
                    if top < 0:
                        break
                    p[top] += 1
                    for t in range(top + 1, k):
                        p[t] = p[t - 1] + 1 if interaction_only else p[top]
