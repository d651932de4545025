"""Polynomial features (lecture 001: polynomial regression is a linear model on the powers of x,
y(x, w) = w0 + w1 x + w2 x^2 + ... + w_M x^M; with several features, on every monomial of
total degree <= M)."""
from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Optional, Sequence

import numpy as np

from .._base import BaseEstimator, TransformerMixin
from .._plans import Columns
from . import _polynomial_fast as _poly
from ._base import fresh_fit
from .._validation import check_array, check_n_jobs, check_param, state_array, state_count

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from .._typing import EstimatorT, MatrixLike, NDArray, VectorLike

# Output values per thread below which another thread costs more than it saves (starting
# an OpenMP team is ~10 us; one output value is ~1 ns): small inputs run on one thread.
MIN_VALUES_PER_THREAD = 1_000_000
# The widest expansion PolynomialFeatures builds. Its term table is listed in Python (about a
# second and 100 MB per million terms) and even 1,000 rows of a million columns take 8 GB; the
# width is computed (`n_output_features`) and checked before anything is allocated.
MAX_OUTPUT_FEATURES = 1_000_000


def n_output_features(n_features, degree, interaction_only=False, include_bias=True,
                      limit=MAX_OUTPUT_FEATURES):
    """The number of monomials of total degree <= `degree` in `n_features` variables, as
    scikit-learn counts them: C(n_features + degree, degree) with the bias, sum over k <= degree
    of C(n_features, k) for interaction_only; one fewer without the bias. Counting stops past
    `limit` (it returns limit + 1), so a huge degree costs nothing.

    Parameters
    ----------
    n_features : int
    degree : int
    interaction_only : bool, default False
    include_bias : bool, default True
    limit : int, default MAX_OUTPUT_FEATURES

    Returns
    -------
    n_output : int
        At most limit + 1.

    Examples
    --------
    >>> n_output_features(2, 2)
    6
    >>> n_output_features(1, 2**31, include_bias=False, limit=10)
    11
    """
    # C(m, k) for k = 0, 1, ...: c_k = c_{k-1} (m - k + 1) / k, increasing while k <= m / 2,
    # which covers every term summed or returned here, so stopping past the limit is exact.
    bias = 1 if include_bias else 0
    if interaction_only:
        total, c = 0, 1
        for k in range(0, min(degree, n_features) + 1):
            if k > 0:
                c = c * (n_features - k + 1) // k
            total += c
            if total - 1 + bias > limit:
                return limit + 1
        return total - 1 + bias
    m, k_max = n_features + degree, min(n_features, degree)
    c = 1
    for k in range(1, k_max + 1):
        c = c * (m - k + 1) // k
        if c - 1 + bias > limit:
            return limit + 1
    return c - 1 + bias


def _row_term_counts(per_row, degree, interaction_only):
    """The stored monomials of degree 1..degree in rows of per_row stored values each:
    sum_k C(m + k - 1, k) = C(m + degree, degree) - 1, or sum_k C(m, k) for interaction_only
    (at most the output's width: every one is a distinct column)."""
    from math import comb
    lengths, where = np.unique(per_row, return_inverse=True)
    counts = [sum(comb(m, k) for k in range(1, min(degree, m) + 1)) if interaction_only
              else comb(m + degree, degree) - 1 for m in lengths.tolist()]
    return np.array(counts, dtype=np.int64)[where.reshape(-1)]

def _rank_tables(d, degree, interaction_only, include_bias):
    """poly_expand_csr's tables: offsets[k] the first column of degree k (k = 0..degree), and
    prefix[j, v] = the degree-j monomials over the features after v that may follow a factor
    v, summed over the factors below v (j = 0..degree - 1, v = 0..d)."""
    from math import comb
    offsets = np.zeros(degree + 1, dtype=np.int64)
    column = 1 if include_bias else 0
    for k in range(1, degree + 1):
        offsets[k] = column
        column += comb(d, k) if interaction_only else comb(d + k - 1, k)
    prefix = np.zeros((max(degree, 1), d + 1), dtype=np.int64)
    v = np.arange(d)
    for j in range(degree):
        # the monomials of degree j that may follow factor v: over features > v (strict) or
        # >= v; C(n, j) exactly, summed: the ranks stay below MAX_OUTPUT_FEATURES
        follow = [comb(d - u - 1, j) if interaction_only else comb(d - u + j - 1, j)
                  for u in v.tolist()]
        prefix[j, 1:] = np.cumsum(np.array(follow, dtype=np.int64))
    return offsets, prefix


class PolynomialFeatures(TransformerMixin, BaseEstimator):
    """All monomials of the features of total degree 0 (the bias column) to `degree`.

    Column order is scikit-learn's: by degree, then lexicographic in the feature indices
    (x0, x1, x0^2, x0 x1, x1^2 for two features and degree 2). The compiled kernel writes the
    expanded matrix in one sweep, each column the product of an earlier column and one feature
    (fastml/linear_model/_polynomial_fast.pyx).

    Parameters
    ----------
    degree : int, default 2
        The largest total degree of a monomial, as in scikit-learn (a (min, max) tuple is not
        supported).
    interaction_only : bool, default False
        Only products of distinct features (x0 x1, not x0^2), as in scikit-learn.
    include_bias : bool, default True
        Include the constant column 1 (leave it out when the model fits its own intercept), as
        in scikit-learn.
    n_jobs : int or None, default None
        Threads for `transform` (`fastml._validation.check_n_jobs`: None = 1, -1 = every
        core); fewer when the output is small. No scikit-learn counterpart.

    `fit` computes the output width first and refuses more than MAX_OUTPUT_FEATURES
    (1,000,000) columns with a ValueError, before allocating anything.

    Sparse X (CSR; other scipy formats are converted to CSR) gives a CSR expansion: a monomial
    is stored where all its features are stored, so a row with m stored values has
    sum_k C(m + k - 1, k) stored terms (C(m, k) with interaction_only) and the bias 1, each the
    same value as the dense expansion's, in the same columns (zeros of X stay zeros of every
    monomial they enter; the bias column is stored in every row).

    Attributes
    ----------
    powers_ : ndarray of shape (n_output_features_, n_features_in_)
        The exponent of each input feature in each output column.
    n_output_features_ : int
        The number of output columns.
    n_features_in_ : int
        The number of input features.
    feature_names_in_ : ndarray of str
        The column names of a DataFrame given to `fit`.

    Examples
    --------
    >>> import numpy as np
    >>> from fastml import PolynomialFeatures
    >>> X = np.array([[2.0, 3.0]])
    >>> PolynomialFeatures(degree=2).fit_transform(X)
    array([[1., 2., 3., 4., 6., 9.]])
    >>> PolynomialFeatures(degree=2).fit(X).get_feature_names_out().tolist()
    ['1', 'x0', 'x1', 'x0^2', 'x0 x1', 'x1^2']
    """

    _estimator_type = "transformer"
    _accepts_sparse = True

    def __init__(self, degree: int = 2, interaction_only: bool = False, include_bias: bool = True,
                 n_jobs: Optional[int] = None) -> None:
        self.degree = degree
        self.interaction_only = interaction_only
        self.include_bias = include_bias
        self.n_jobs = n_jobs

    @fresh_fit   # as every model's fit: a refit that raises leaves it unfitted, not the old fit
    def fit(self: EstimatorT, X: MatrixLike, y: Optional[VectorLike] = None) -> EstimatorT:
        """Learn the number of input features and list the output terms.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self : PolynomialFeatures
        """
        check_param("degree", self.degree, low=0, integer=True, c_int=False)  # width checked next
        check_n_jobs(self.n_jobs)
        X = check_array(X, accept_sparse=True, estimator=self, reset=True)
        width = n_output_features(X.shape[1], self.degree, self.interaction_only,
                                  self.include_bias)
        if width > MAX_OUTPUT_FEATURES:
            raise ValueError(
                f"PolynomialFeatures(degree={self.degree}) on {X.shape[1]} feature(s) would make "
                f"more than {MAX_OUTPUT_FEATURES:,} output columns (the limit); lower the degree, "
                f"use interaction_only=True or fewer features")
        if width == 0:
            raise ValueError("PolynomialFeatures with degree=0 and include_bias=False has no "
                             "output features")
        terms = self._terms(X.shape[1])
        index = {t: i for i, t in enumerate(terms)}
        # Each term is its parent (itself without its last factor) times that factor; the
        # empty product (parent -1) is 1.
        self._parent = np.array([index[t[:-1]] if len(t) > 1 else -1 for t in terms],
                                dtype=np.int64)
        self._feature = np.array([t[-1] if t else -1 for t in terms], dtype=np.int64)
        powers = np.zeros((len(terms), X.shape[1]), dtype=np.int64)
        for i, t in enumerate(terms):
            for j in t:
                powers[i, j] += 1
        self.powers_ = powers
        self.n_output_features_ = len(terms)
        return self

    def _scaled_fit(self):
        """Fitted from the columns alone (fastml/_plans.py): no row is read."""
        return Columns(finish=_fit_columns)

    def _terms(self, d):
        combine = (itertools.combinations if self.interaction_only
                   else itertools.combinations_with_replacement)
        start = 0 if self.include_bias else 1
        # no product of distinct features is longer than d: stop there (itertools allocates
        # k indices per call even when it yields nothing, so a huge degree would take O(k^2))
        top = min(self.degree, d) if self.interaction_only else self.degree
        return [t for k in range(start, top + 1) for t in combine(range(d), k)]

    def _check_fitted_state(self):
        """Run by fastml.io.load: one (parent, feature) pair and one powers_ row per output
        column (poly_expand itself refuses a parent or feature out of range)."""
        if not hasattr(self, "powers_"):
            return
        n_features = state_count(self, "n_features_in_", low=1)
        n_terms = state_count(self, "n_output_features_", low=1)
        state_array(self, "powers_", np.int64, (n_terms, n_features))
        state_array(self, "_parent", np.int64, (n_terms,))
        state_array(self, "_feature", np.int64, (n_terms,))

    def transform(self, X: MatrixLike) -> Any:
        """Expand X into its monomials.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features_in_)

        Returns
        -------
        XP : ndarray or CSR matrix of shape (n_samples, n_output_features_)
            In X's dtype (float32 stays float32); CSR for sparse X.
        """
        self._check_is_fitted("powers_")
        return self._expand(check_array(X, accept_sparse=True, estimator=self, reset=False))

    def _expand(self, X):
        """transform's work on an X that check_array has passed (PolynomialRegression.predict
        validates X once, then expands it here)."""
        if hasattr(X, "indptr"):
            return self._expand_csr(X)
        out = np.empty((X.shape[0], self.n_output_features_), dtype=X.dtype)
        values = X.shape[0] * self.n_output_features_
        threads = max(1, min(check_n_jobs(self.n_jobs), values // MIN_VALUES_PER_THREAD))
        _poly.poly_expand(X, self._parent, self._feature, out, threads)
        return out

    def _expand_csr(self, X):
        """The CSR expansion of CSR X (poly_expand_csr): each row's stored monomials, counted
        first (from its number of stored values) to size the output."""
        import scipy.sparse as sp
        d, degree = self.n_features_in_, int(self.degree)
        sizes = _row_term_counts(np.diff(X.indptr), degree, self.interaction_only) + \
            (1 if self.include_bias else 0)
        out_indptr = np.zeros(X.shape[0] + 1, dtype=np.int64)
        np.cumsum(sizes, out=out_indptr[1:])
        offsets, prefix = _rank_tables(d, degree, self.interaction_only, self.include_bias)
        nnz = int(out_indptr[-1])
        out_data = np.empty(nnz, dtype=X.dtype)
        out_indices = np.empty(nnz, dtype=np.int64)
        _poly.poly_expand_csr(X.data, X.indices, X.indptr.astype(np.int64), offsets, prefix,
                              bool(self.interaction_only), bool(self.include_bias),
                              out_indptr, out_data, out_indices,
                              np.empty(max(degree, 1), dtype=np.int64))
        small = nnz < 2**31       # int32 indices where they fit, as scipy builds them
        out = sp.csr_matrix((out_data, out_indices.astype(np.int32) if small else out_indices,
                             out_indptr.astype(np.int32) if small else out_indptr),
                            shape=(X.shape[0], self.n_output_features_))
        if (X.data == 0).any():   # stored zeros of X made stored zeros of their monomials
            out.eliminate_zeros()
        return out

    def get_feature_names_out(
            self, input_features: Optional[Sequence[str]] = None) -> NDArray[np.object_]:
        """The output columns' names, like "x0^2 x1".

        Parameters
        ----------
        input_features : list of str, optional
            The input names (default: the DataFrame's columns, else x0, x1, ...).

        Returns
        -------
        names : ndarray of object
        """
        self._check_is_fitted("powers_")
        if input_features is None:
            input_features = getattr(self, "feature_names_in_", None)
        if input_features is None:
            input_features = [f"x{j}" for j in range(self.n_features_in_)]
        if len(input_features) != self.n_features_in_:
            raise ValueError(f"input_features has {len(input_features)} names; expected "
                             f"{self.n_features_in_}")
        names = []
        for row in self.powers_:
            parts = [name if p == 1 else f"{name}^{p}"
                     for name, p in zip(input_features, row) if p > 0]
            names.append(" ".join(parts) if parts else "1")
        return np.asarray(names, dtype=object)


def _fit_columns(estimator, sample):
    estimator.fit(sample)
