"""Naive Bayes (lecture 004; the Gaussian form as in 002): categorical, Gaussian and mixed.

P(y | x) is proportional to P(y) prod_i P(x_i | y) (004, "Naive Bayes Classifier"), computed in
log space, so hundreds of attributes do not underflow:
- categorical x_i: P(X_i = c | y) = n_c / n ("none"), (n_c + alpha) / (n + alpha v) ("laplace",
  004's Laplace estimate for alpha = 1, v = the number of values of X_i), or (n_c + m p) / (n + m)
  ("m-estimate", p = 1/v unless given). n counts the class's rows where X_i is not missing.
- real x_i: a normal density with the class's sample mean and variance, the variance with
  n - ddof in the denominator (ddof=1: 004's "sample variance = 2975" for income given No),
  plus a floor epsilon_ = var_smoothing * (largest variance of an attribute over all rows,
  n denominator) so that a constant attribute does not divide by zero (scikit-learn's rule;
  with sample weights the variance is the weighted one, where scikit-learn takes X's
  unweighted variance: weights count rows here).
- missing values (None / NaN) are ignored while estimating (004: "ignoring the instance during
  probability estimate calculations") and skipped in the product at prediction. A class with
  no value of an attribute that other classes have is scored on it with the estimate for "no
  data": categorical 1 / v (Laplace) or p (m-estimate), real the density of all classes'
  values; so no attribute counts for some classes and not for others.

Fitting is a reduction: class counts, category counts, and per class and attribute the count,
mean and M2 of the values, accumulated in one compiled pass and merged across `partial_fit`
chunks by Chan's formula, so fitting chunk by chunk equals fitting the whole. Prediction is a
compiled gather-sum over rows in parallel chunks.

Zero probabilities (smoothing="none"): a level never seen with a class, and a level never seen
at all (unseen at fit time), have probability 0. When every class has probability 0 for a row,
the posterior is 0/0 (004: "Naive Bayes will not be able to classify X"): predict_joint_log_proba
returns -inf for every class, predict_proba / predict_log_proba return the class priors for that
row (the data are treated as saying nothing), predict returns the a-priori most probable class,
and a ZeroProbabilityWarning says how many rows this happened to. Smoothing avoids it.
"""
from __future__ import annotations

import copy
import warnings
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from .._base import BaseEstimator, ClassifierMixin
from . import _nb_fast as _nb
from . import _sparse
from ._scaled import naive_bayes_plan
from .._core._moments import merge_moments
from .._core._posterior import log_posterior
from .._tabular import (MAX_INT_RANGE, CategoryEncoder, _as_kernel_ints, categorical_mask,
                       check_table, codes_for, numeric_block)
from .._validation import (_check_finite, _is_sparse, check_array, check_class_weight,
                           check_n_features, check_n_jobs, check_param, check_sample_weight,
                           check_target, class_weight_factors, state_array, state_count)

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from .._typing import ArrayLike, ClassWeightLike, EstimatorT, MatrixLike, NDArray, VectorLike
    from ..linear_model._logistic import LogisticRegression

SMOOTHING = ("laplace", "m-estimate", "none")


class ZeroProbabilityWarning(UserWarning):
    """Some rows have probability 0 under every class, so their posterior is undefined.

    Raised by the predict methods of `CategoricalNB` / `NaiveBayes` with smoothing="none"
    (and of any model whose densities underflow to 0); those rows are predicted from the
    class priors.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from fastml import CategoricalNB
    >>> model = CategoricalNB(smoothing="none").fit(np.array([["a"], ["b"]]), [0, 1])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     model.predict(np.array([["c"]])).tolist()
    [0]
    >>> caught[0].category.__name__
    'ZeroProbabilityWarning'
    """


def _check_total_weight(sw):
    """sw, unless its total is 0 (nothing to estimate from) or overflows float64."""
    with np.errstate(over="ignore"):
        total = float(np.sum(sw))
    if not total > 0:
        raise ValueError("sample_weight sums to 0: there is nothing to estimate the class "
                         "probabilities from")
    if not np.isfinite(total):
        raise ValueError(f"sample_weight sums to more than the largest float64 "
                         f"({np.finfo(np.float64).max:.3g}); refusing rather than computing "
                         f"infinite counts: divide sample_weight by a constant")
    return sw


def _check_finite_statistics(what, *arrays):
    """Refuse statistics that overflowed float64 (they would give inf / NaN probabilities).
    The call is refused as a whole, so the model keeps its previous state."""
    if not all(np.isfinite(a).all() for a in arrays):
        raise ValueError(f"{what} overflowed float64 (sample weights or values too large); "
                         f"refusing rather than predicting from inf / NaN: divide "
                         f"sample_weight by a constant, or rescale X")


def _warn_variance_floored(dof, m2):
    """Warn when a variance is 0 before the floor although its values differ: its degrees of
    freedom (the weighted count minus ddof) are not positive, as with sample weights that sum
    to ddof rows or fewer (e.g. normalised to 1), and the density would otherwise collapse
    onto the mean without anyone noticing."""
    floored = (dof <= 0) & (m2 > 0)
    if floored.any():
        first = tuple(int(i) for i in np.argwhere(floored)[0])
        warnings.warn(
            f"{int(floored.sum())} variance(s) set to the floor epsilon_ although the values "
            f"differ (the first at index {first}): the weighted count minus ddof is "
            f"{float(dof[first]):.3g}, not positive. sample_weight counts rows (weight w = w "
            f"rows); for weights that do not (e.g. normalised to sum to 1) use ddof=0",
            UserWarning, stacklevel=5)


# Each column's first guess of its range when counting an integer matrix: codes 0..255 (uint8
# codes, pandas' category codes, label encoders' output) are counted in one read of X; other
# ranges are counted in a second read, over the ranges the first one found.
GUESSED_RANGE = 256


def _count_int_matrix(X, y, sw, n_classes, n_threads):
    """(levels, tables) of an integer matrix: levels[j] the sorted distinct values (int64) of
    column j in rows of positive weight, tables[t] thread t's (n_classes, total levels) counts
    of those levels, column after column (see count_int_range). None when the columns' ranges
    are too wide for dense count tables (hashed ids) or hold values beyond int64: the caller
    then takes the encoder's path."""
    X = _as_kernel_ints(X)
    if X.dtype == np.uint64:
        return None
    d = X.shape[1]
    # count tables (n_classes x the summed ranges, per thread) no larger than X, so a small
    # chunk of many columns does not zero megabytes; never above MAX_INT_RANGE cells
    budget = min(MAX_INT_RANGE, max(1 << 16, X.size))
    lo = np.zeros(d, dtype=np.int64)
    width = np.full(d, min(GUESSED_RANGE, budget // (n_classes * d)), dtype=np.int64)
    tables, outside, low, high = _nb.count_int_range(X, y, sw, lo, width, n_classes, n_threads)
    if outside:          # count again over the ranges of the cells outside and the counted
        seen = _present_levels(tables, lo, width)
        # Python ints throughout: h - l overflows int64 for columns such as [0, 2**63 - 1]
        low = [min(l, int(s[0])) if len(s) else l for l, s in zip(low.tolist(), seen)]
        high = [max(h, int(s[-1])) if len(s) else h for h, s in zip(high.tolist(), seen)]
        widths = [max(0, h - l + 1) for l, h in zip(low, high)]
        if n_classes * sum(widths) > budget:
            return None
        lo, width = np.array(low, dtype=np.int64), np.array(widths, dtype=np.int64)
        tables = _nb.count_int_range(X, y, sw, lo, width, n_classes, n_threads)[0]
    # a level is in a row of positive weight exactly when its summed weight is positive
    present = tables.sum(axis=(0, 1)) > 0
    return _present_levels(tables, lo, width, present), tables[:, :, present]


def _present_levels(tables, lo, width, present=None):
    """Per column, the sorted values whose summed weight in count_int_range's tables is
    positive."""
    if present is None:
        present = tables.sum(axis=(0, 1)) > 0
    start = np.concatenate([[0], np.cumsum(width)])
    return [lo[j] + np.flatnonzero(present[start[j]:start[j + 1]]) for j in range(len(lo))]


def _rows(X, mask):
    return X.iloc[np.flatnonzero(mask)] if hasattr(X, "iloc") else X[mask]


class _FiniteLater:
    """A float X taken as it is, whose finiteness the Gaussian part checks from its moments
    (see GaussianNB._check_fit_X); shape passes through for the shared checks."""

    def __init__(self, array):
        self.array = array
        self.shape = array.shape


# ----------------------------------------------------------------------- the two kinds of part
def _relaid_classes(table, place, n_classes):
    """A per-class table (rows: classes) with row k moved to row place[k] of n_classes rows
    (a negative place drops the row: a stand-in class that holds nothing)."""
    out = np.zeros((n_classes,) + table.shape[1:])
    kept = place >= 0
    out[place[kept]] = table[kept]
    return out


class _CategoricalPart:
    """Category counts of some columns: counts (K, sum v_j) with v_j levels per column."""

    def __init__(self, columns, n_classes):
        self.encoder = CategoryEncoder(columns)
        self.n_classes = n_classes
        self.counts = np.zeros((n_classes, 0))

    def accumulate(self, X, y, sw, n_threads):
        """Add a chunk. Writes only into arrays it creates (the copied part's old ones may be
        restored by _BaseNB._fit). Sparse X (CSR of this part's columns): _sparse."""
        self.encoder = copy.copy(self.encoder)   # partial_fit replaces its vocabulary list
        old_levels = [0 if c is None else len(c) for c in self.encoder.categories_]
        if _is_sparse(X):
            self.counts = self._relaid(old_levels,
                                       self.encoder.add_levels(_sparse.column_levels(X, sw)))
            self._refuse_empty()
            self.counts = self.counts + _sparse.category_counts(
                X, y, sw, self.encoder.categories_, self.n_classes)
            return
        counted = None
        if self.encoder._int_matrix(X):
            counted = _count_int_matrix(self.encoder._selected(X), y, sw, self.n_classes,
                                        n_threads)
        if counted is None:
            # a row of weight 0 is not there: its levels do not join the vocabulary
            moved = self.encoder.partial_fit(X if sw.all() else _rows(X, sw > 0))
        else:
            moved = self.encoder.add_levels(counted[0])
        self.counts = self._relaid(old_levels, moved)
        self._refuse_empty()
        offsets = np.concatenate([[0], np.cumsum(self.n_categories)]).astype(np.int64)
        if counted is not None:   # counted already: add each thread's table, in thread order
            levels, tables = counted
            where = np.concatenate([start + codes_for(new, union) for start, new, union in
                                    zip(offsets, levels, self.encoder.categories_)])
            for table in tables:
                self.counts[:, where] += table
            return
        lookup = self.encoder.int_lookup(X)
        if lookup is not None:    # an integer matrix: counted through the lookup table
            _nb.count_int_categories(*lookup, y, sw, offsets, self.counts, n_threads)
            return
        codes = self.encoder.transform(X, n_threads=n_threads)
        _nb.count_categories(codes, y, sw, offsets, self.counts, n_threads)  # the new table

    def _refuse_empty(self):
        empty = np.flatnonzero(self.n_categories == 0)
        if len(empty):
            raise ValueError(f"categorical column {self.encoder.columns_[empty[0]]} has no "
                             f"values (every cell missing, or in a row of weight 0): there "
                             f"is nothing to estimate its probabilities from; drop it or "
                             f"fit on rows where it has values")

    @property
    def n_categories(self):
        return np.array([len(c) for c in self.encoder.categories_], dtype=np.int64)

    def _relaid(self, old_levels, moved):
        """The count table in the grown vocabularies' layout (each old level's column moved to
        its new position)."""
        new = np.zeros((self.n_classes, int(self.n_categories.sum())))
        old_start = new_start = 0
        for v_old, v_new, where in zip(old_levels, self.n_categories, moved):
            if where is not None and v_old:
                new[:, new_start + where] = self.counts[:, old_start:old_start + v_old]
            old_start += v_old
            new_start += v_new
        return new

    def merged(self, other):
        """The part of the rows of both (over the same classes): each column's vocabulary
        grown to the union of the two (their count columns moved as partial_fit moves
        them), the counts added. Neither part is changed."""
        mine, theirs = copy.copy(self), copy.copy(other)
        for part, new in ((mine, other), (theirs, self)):
            part.encoder = copy.deepcopy(part.encoder)
            before = [len(c) for c in part.encoder.categories_]
            part.counts = part._relaid(before, part.encoder.add_levels(new.encoder.categories_))
        mine.counts = mine.counts + theirs.counts
        return mine

    def with_classes(self, place, n_classes):
        """This part with its per-class rows moved to rows `place` of n_classes (zeros in
        the others)."""
        part = copy.copy(self)
        part.counts, part.n_classes = _relaid_classes(self.counts, place, n_classes), n_classes
        return part

    def per_column(self, table):
        bounds = np.cumsum(self.n_categories)[:-1]
        return np.split(table, bounds, axis=1)

    def finalize(self, smoothing, alpha, m, p):
        """log P(X_j = c | y) per column (K, v_j) and for an unseen level (K, n_columns)."""
        logs, unseen = [], []
        for count in self.per_column(self.counts):
            v = count.shape[1]
            n = count.sum(axis=1, keepdims=True)
            if smoothing == "laplace":
                num, den, zero = count + alpha, n + alpha * v, alpha
            elif smoothing == "m-estimate":
                prior = 1.0 / v if p is None else p
                num, den, zero = count + m * prior, n + m, m * prior
            else:
                num, den, zero = count, n, 0.0
            with np.errstate(divide="ignore", invalid="ignore"):
                prob = np.where(den > 0, num / np.where(den > 0, den, 1.0), 1.0 / v)
                prob_unseen = np.where(den[:, 0] > 0, zero / np.where(den[:, 0] > 0,
                                                                       den[:, 0], 1.0), 1.0 / v)
                logs.append(np.log(prob))
                unseen.append(np.log(prob_unseen))
        self.log_prob = logs
        self.unseen_log_prob = np.column_stack(unseen)
        # the kernel's table: per column its v_j levels then the unseen level, K values a row
        self.table = np.ascontiguousarray(np.concatenate(
            [np.column_stack([lp, u]).T for lp, u in zip(logs, unseen)], axis=0))
        self.table_offsets = np.concatenate([[0], np.cumsum(self.n_categories + 1)]).astype(
            np.int64)

    def check(self, n_classes, columns):
        """Raise ValueError unless this part counts `columns` for n_classes classes with
        tables in the layout the kernels index without bounds checks (count_categories adds
        at counts[y, offsets[j] + code]; categorical_jll reads table[offsets[j] + code] and,
        for an unseen level, table[offsets[j + 1] - 1]; codes stay below v_j)."""
        if not isinstance(self.encoder, CategoryEncoder) or self.encoder.columns_ != columns:
            raise ValueError("the categorical part does not encode the categorical columns")
        if state_count(self, "n_classes", low=1) != n_classes:
            raise ValueError("the categorical part has the wrong number of classes")
        v = self.n_categories
        state_array(self, "counts", np.float64, (n_classes, int(v.sum())))
        state_array(self, "table", np.float64, (int((v + 1).sum()), n_classes))
        offsets = state_array(self, "table_offsets", np.int64, (len(v) + 1,))
        if not np.array_equal(offsets, np.concatenate([[0], np.cumsum(v + 1)])):
            raise ValueError("the categorical part's table offsets do not match its levels")

    def joint_log_likelihood(self, X, out, n_threads):
        if _is_sparse(X):
            _sparse.categorical_jll(X, self.table, self.table_offsets,
                                    self.encoder.categories_, out)
            return
        lookup = self.encoder.int_lookup(X)
        if lookup is not None:    # an integer matrix: looked up without writing its codes
            _nb.categorical_jll_int(*lookup, self.table, self.table_offsets, out, n_threads)
            return
        codes = self.encoder.transform(X, n_threads=n_threads)
        _nb.categorical_jll(codes, self.table, self.table_offsets, out, n_threads)


class _GaussianPart:
    """Per class and attribute: weighted count, shift, mean (relative to the shift) and M2 of
    the non-missing values."""

    def __init__(self, n_classes, n_columns):
        self.moments = tuple(np.zeros((n_classes, n_columns)) for _ in range(4))

    def accumulate(self, X, y, sw, n_threads):
        if _is_sparse(X):         # (checked: finite but for NaN cells, the missing ones)
            self.moments = merge_moments(self.moments, _sparse.gaussian_moments(
                X, y, sw, self.moments[0].shape[0]))
            _check_finite_statistics("the means and variances", *self.moments)
            return
        unchecked = isinstance(X, _FiniteLater)
        if unchecked:
            X = X.array
            if not sw.all():    # a row of weight 0 may not reach the moments: read X first
                _check_finite(X, "X", allow_nan=True)
                unchecked = False
        chunk = tuple(np.empty_like(self.moments[0]) for _ in range(4))
        _nb.gaussian_moments(X, y, sw, *chunk, n_threads)
        if unchecked and not all(np.isfinite(m).all() for m in chunk):
            # an infinite x makes its class's sum, and so its moments, inf or NaN (NaN cells
            # are skipped); the read of X says which it was (else it is an overflow, below)
            _check_finite(X, "X", allow_nan=True)
        self.moments = merge_moments(self.moments, chunk)
        _check_finite_statistics("the means and variances", *self.moments)

    def merged(self, other):
        """The part of the rows of both (over the same classes): the moments merged by Chan's
        formula. Neither part is changed."""
        part = copy.copy(self)
        part.moments = merge_moments(self.moments, other.moments)
        return part

    def with_classes(self, place, n_classes):
        """This part with its per-class rows moved to rows `place` of n_classes (zeros in
        the others)."""
        part = copy.copy(self)
        part.moments = tuple(_relaid_classes(m, place, n_classes) for m in self.moments)
        return part

    def finalize(self, ddof, var_smoothing, shared=False):
        """Means, variances and the kernel's tables from the moments. shared: one variance
        per attribute for all classes, the within-class M2 pooled over the classes with
        n - ddof * K degrees of freedom (K = the classes with values of that attribute;
        ddof=1 gives the unbiased pooled variance, denominator n - K)."""
        # the floor is relative to the widest attribute over all classes (ddof 0, as np.var)
        total = tuple(m[0] for m in self.moments)
        for k in range(1, self.moments[0].shape[0]):
            total = merge_moments(total, tuple(m[k] for m in self.moments))
        n_all, m2_all = total[0], total[3]
        counts, shift, mean, m2 = self.moments
        with np.errstate(divide="ignore", invalid="ignore"):
            total_var = np.where(n_all > 0, m2_all / np.where(n_all > 0, n_all, 1.0), 0.0)
            widest = float(total_var.max()) if total_var.size else 0.0
            self.epsilon = var_smoothing * (widest if widest > 0 else 1.0)
            seen = counts > 0
            if shared:
                dof = counts.sum(axis=0) - ddof * seen.sum(axis=0)
                var = np.broadcast_to(np.where(dof > 0, m2.sum(axis=0) / np.where(
                    dof > 0, dof, 1.0), 0.0), counts.shape)
                _warn_variance_floored(dof, m2.sum(axis=0))
            else:
                dof = counts - ddof
                var = np.where(dof > 0, m2 / np.where(dof > 0, dof, 1.0), 0.0)
                _warn_variance_floored(dof, m2)
            # A class with no value of an attribute some class has: it is scored with the
            # density of all classes' values (004's estimate for "no data": the attribute's
            # own distribution). Adding nothing for that class alone would make the posterior
            # depend on the attribute's units, since the other classes' densities do.
            if shared:
                pooled_var = var[0]
            else:
                dof_all = n_all - ddof
                pooled_var = np.where(dof_all > 0, m2_all / np.where(dof_all > 0, dof_all, 1.0),
                                      0.0)
        self.n = counts
        tiny = np.finfo(np.float64).tiny
        self.var = np.maximum(var + self.epsilon, tiny)
        self.theta = np.where(seen, shift + mean, np.nan)
        self.var_public = np.where(seen, self.var, np.nan)
        # the kernel adds a - b (x - mean)^2; an attribute no class saw adds nothing
        any_seen = n_all > 0
        kernel_var = np.where(seen, self.var, np.maximum(pooled_var + self.epsilon, tiny))
        self.kernel_mean = np.where(seen, self.theta,
                                    np.where(any_seen, total[1] + total[2], 0.0))
        self.a = np.where(any_seen, -0.5 * np.log(2.0 * np.pi * kernel_var), 0.0)
        self.b = np.where(any_seen, 0.5 / kernel_var, 0.0)

    def check(self, n_classes, n_columns):
        """Raise ValueError unless every per-class table is (n_classes, n_columns) float64, as
        gaussian_moments / gaussian_jll index them (without bounds checks)."""
        shape = (n_classes, n_columns)
        if not isinstance(self.moments, tuple) or len(self.moments) != 4 or not all(
                isinstance(m, np.ndarray) and m.dtype == np.float64 and m.shape == shape
                for m in self.moments):
            raise ValueError(f"the Gaussian part's moments are not 4 float64 {shape} tables")
        for name in ("kernel_mean", "a", "b"):
            state_array(self, name, np.float64, shape)

    def joint_log_likelihood(self, X, out, n_threads):
        if _is_sparse(X):
            _sparse.gaussian_jll(X, self.kernel_mean, self.a, self.b, out)
            return
        _nb.gaussian_jll(X, self.kernel_mean, self.a, self.b, out, n_threads)


# ------------------------------------------------------------------------------ the estimators
class _BaseNB(ClassifierMixin, BaseEstimator):
    """fit / partial_fit / predict* shared by the three models; subclasses say how X is read
    (`_check_X`), which parts it has (`_make_parts`) and which data each part gets."""

    _allows_nan = True

    # --- fitting
    def fit(self: EstimatorT, X: MatrixLike, y: VectorLike,
            sample_weight: Optional[ArrayLike] = None) -> EstimatorT:
        """Learn class counts and per-class attribute statistics from X, y.

        Parameters
        ----------
        X : array-like or DataFrame, shape (n_samples, n_features)
            The attributes (see the class docstring for the kinds each model reads); None /
            NaN cells are missing and ignored.
        y : array-like, shape (n_samples,)
            Class labels (at least 2 distinct).
        sample_weight : array-like (n_samples,), float or None
            Non-negative weights; a row of weight w counts as w rows.

        Returns
        -------
        self
            The fitted estimator. If fit raises, the estimator is left unfitted.
        """
        self._forget_fit()
        return self._fit(X, y, None, sample_weight)

    def partial_fit(self: EstimatorT, X: MatrixLike, y: VectorLike,
                    classes: Optional[VectorLike] = None,
                    sample_weight: Optional[ArrayLike] = None) -> EstimatorT:
        """Add a chunk of rows to the statistics; after all chunks the model equals `fit` on
        all rows (to rounding: the moments are merged by Chan's formula).

        Parameters
        ----------
        X, y, sample_weight
            One chunk, as in `fit`. Categorical vocabularies grow with new levels.
        classes : array-like or None
            All the classes the stream will hold. May be given on the first call (then later
            chunks may miss some classes); later calls must give the same classes or None.

        Returns
        -------
        self
            The updated estimator. A chunk that raises leaves the model exactly as it was.
        """
        return self._fit(X, y, classes, sample_weight)

    def _forget_fit(self):
        """Drop everything fit learned (attributes ending in "_", and the parts)."""
        for name in [k for k in self.__dict__ if k.endswith("_") or k == "_parts"]:
            del self.__dict__[name]

    def _fit(self, X, y, classes, sample_weight):
        """All or nothing: a call that raises leaves the estimator exactly as it was before
        the call (unfitted, for fit), so a refused chunk does not leave its class counts.

        Restoring the attribute dict is enough because a call never writes into an array or
        object it found: it works on shallow copies of the parts and replaces arrays (see
        `_accumulate`), so no deep copy of large vocabularies is made per chunk."""
        before = dict(self.__dict__)
        try:
            return self._accumulate(X, y, classes, sample_weight)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise

    def _accumulate(self, X, y, classes, sample_weight):
        self._check_params()
        first = not hasattr(self, "class_count_")
        X = self._check_fit_X(X, reset=first)
        y = check_target(y)
        if X.shape[0] != y.shape[0]:
            raise ValueError(f"X and y have different numbers of samples: X has {X.shape[0]}, "
                             f"y has {y.shape[0]}")
        codes = self._labels(y, classes, first)
        sw = _check_total_weight(check_sample_weight(sample_weight, X.shape[0]))
        K = len(self.classes_)
        if first:
            self.class_count_ = np.zeros(K)
            self._parts = self._make_parts(X, K)
        self.class_count_ = self.class_count_ + np.bincount(codes, weights=sw, minlength=K)
        threads = check_n_jobs(self.n_jobs)
        parts = [copy.copy(part) for part in self._parts]   # see _fit: the old ones stay
        for part, data in zip(parts, self._part_data(X)):
            part.accumulate(data, codes, sw, threads)
        self._parts = parts
        # every count below (per class, level or attribute) sums a subset of these weights
        with np.errstate(over="ignore"):
            _check_finite_statistics("the class counts", self.class_count_.sum())
        self._finalize()
        return self

    def _check_fit_X(self, X, reset):
        """X for fit / partial_fit (the models reading X in place override it)."""
        return self._check_X(X, reset)

    def _check_fitted_state(self):
        """Run by fastml.io.load on a restored model: the parts are the ones fit makes for
        these columns, with tables the compiled kernels can index (see each part's check)."""
        if not hasattr(self, "class_count_"):
            return
        n_features = state_count(self, "n_features_in_", low=1)
        n_classes = len(state_array(self, "classes_", None, 1, contiguous=False))
        for name in ("class_count_", "class_prior_", "class_log_prior_"):
            state_array(self, name, np.float64, (n_classes,))
        expected = self._expected_parts(n_features)
        if not isinstance(self._parts, list) or \
                [type(p) for p in self._parts] != [kind for kind, _ in expected]:
            raise ValueError("the model's parts do not match its columns")
        for part, (_, columns) in zip(self._parts, expected):
            part.check(n_classes, columns)

    def _labels(self, y, classes, first):
        if not first:
            if classes is not None and not np.array_equal(np.unique(classes), self.classes_):
                raise ValueError(f"classes {list(classes)!r} differ from the classes of the "
                                 f"first partial_fit {self.classes_.tolist()!r}")
            return self._encode_known_labels(y)
        if classes is None:
            return self._encode_labels(y)
        self.classes_ = np.unique(check_target(classes, name="classes"))
        if len(self.classes_) < 2:
            raise ValueError(f"{type(self).__name__} needs at least 2 classes; got "
                             f"{self.classes_.tolist()!r}")
        return self._encode_known_labels(y)

    def _finalize(self):
        if self.priors is None:
            weighted = self._class_weighted_counts()
            self.class_prior_ = weighted / weighted.sum()
        else:
            self.class_prior_ = self._check_priors()
        with np.errstate(divide="ignore"):
            self.class_log_prior_ = np.log(self.class_prior_)
        self._finalize_parts()

    def _class_weighted_counts(self):
        """class_count_ times class_weight (class_weight_factors of these counts: the
        counts of every chunk so far): the estimated prior before normalisation."""
        counts = self.class_count_
        weighted = counts * class_weight_factors(self.class_weight, self.classes_, counts)
        if not weighted.sum() > 0:
            raise ValueError("class_weight gives every class present in y weight 0: there is "
                             "no class prior left to estimate")
        return weighted

    def _check_priors(self):
        priors = np.asarray(self.priors, dtype=np.float64).ravel()
        if priors.shape != (len(self.classes_),):
            raise ValueError(f"priors has {priors.size} values; there are "
                             f"{len(self.classes_)} classes")
        if not np.isfinite(priors).all() or (priors < 0).any():
            raise ValueError("priors must be finite and non-negative")
        if not np.isclose(priors.sum(), 1.0, rtol=0, atol=1e-8):
            raise ValueError(f"priors must sum to 1; they sum to {priors.sum()!r}")
        return priors / priors.sum()

    def _check_params(self):
        check_param("n_jobs", self.n_jobs, integer=True, allow_none=True)
        check_class_weight(self.class_weight)
        if self.class_weight is not None and self.priors is not None:
            raise ValueError("priors and class_weight both set the class prior (priors "
                             "directly, class_weight by reweighting the class counts): give "
                             "one of them")

    # --- fitting part by part (fastml/_plans.py)
    _part_layout = "C"      # the arrays an executor builds from columns for the parts

    def _scaled_fit(self):
        """Exact statistics: each part's model, merged over the union of the labels
        (naive_bayes/_scaled.py)."""
        return naive_bayes_plan(self, self._part_layout)

    # --- prediction
    def predict_joint_log_proba(self, X: MatrixLike) -> NDArray[np.float64]:
        """log P(X = x, y = k) = log P(y = k) + sum_i log P(x_i | y = k).

        Parameters
        ----------
        X : array-like or DataFrame, shape (n_samples, n_features)
            Missing cells are skipped (their attribute adds nothing).

        Returns
        -------
        ndarray, shape (n_samples, n_classes)
            -inf where a probability is 0 (smoothing="none").
        """
        return self._joint_log_proba(X)

    # The public methods call these (not each other): each public method is wrapped (dask
    # routing, output wrapping), and a one-row call pays for every layer it goes through.
    def _joint_log_proba(self, X):
        self._check_is_fitted("class_count_")
        X = self._check_X(X, reset=False)
        out = np.zeros((X.shape[0], len(self.classes_)))
        threads = check_n_jobs(self.n_jobs)
        for part, data in zip(self._parts, self._part_data(X)):
            part.joint_log_likelihood(data, out, threads)
        _nb.add_row(out, self.class_log_prior_)
        return out

    def _log_proba(self, X, exponentiate=False):
        """predict_log_proba's arithmetic (predict_proba's with exponentiate): rows shifted by
        their max, minus the log of the sum of exp, in one compiled call (_core's
        log_posterior)."""
        jll = self._joint_log_proba(X)
        if not log_posterior(jll, True, exponentiate):  # some row has probability 0 / NaN
            top = jll.max(axis=1)
            undefined = top == -np.inf
            if undefined.any():
                self._warn_undefined(undefined)
                jll[undefined] = self.class_log_prior_
                top[undefined] = self.class_log_prior_.max()
            jll -= top[:, None]
            log_posterior(jll, False, exponentiate)
        return jll

    def predict_log_proba(self, X: MatrixLike) -> NDArray[np.float64]:
        """log P(y = k | x), normalized in log space.

        Parameters
        ----------
        X : array-like or DataFrame, shape (n_samples, n_features)

        Returns
        -------
        ndarray, shape (n_samples, n_classes)
            A row with probability 0 under every class gets the log class priors (and a
            ZeroProbabilityWarning; see the module note).
        """
        return self._log_proba(X)

    def predict_proba(self, X: MatrixLike) -> NDArray[np.float64]:
        """P(y = k | x).

        Parameters
        ----------
        X : array-like or DataFrame, shape (n_samples, n_features)

        Returns
        -------
        ndarray, shape (n_samples, n_classes)
            Rows sum to 1; columns follow `classes_`.
        """
        return self._log_proba(X, exponentiate=True)

    def predict(self, X: MatrixLike) -> NDArray[Any]:
        """The class with the largest posterior probability.

        Parameters
        ----------
        X : array-like or DataFrame, shape (n_samples, n_features)

        Returns
        -------
        ndarray, shape (n_samples,)
            Labels from `classes_`; a row with probability 0 under every class gets the
            a-priori most probable class (with a ZeroProbabilityWarning).
        """
        jll = self._joint_log_proba(X)
        best = np.empty(jll.shape[0], dtype=np.int64)
        if _nb.argmax_rows(jll, best):  # some zero probability: look closer
            undefined = np.take_along_axis(jll, best[:, None], axis=1)[:, 0] == -np.inf
            if undefined.any():
                self._warn_undefined(undefined)
                best[undefined] = np.argmax(self.class_log_prior_)
        return self.classes_[best]

    def _warn_undefined(self, undefined):
        """Rows where every class has probability 0: their posterior is 0/0, so the callers
        use the class priors for them, and say so."""
        if hasattr(self, "smoothing"):
            cause = f"a zero count in each class with smoothing={self.smoothing!r}"
            advice = "Use smoothing='laplace' or 'm-estimate' to avoid zero probabilities."
        else:
            cause, advice = "a density that underflows to 0 in each class", ""
        warnings.warn(
            f"{int(undefined.sum())} row(s) have probability 0 under every class ({cause}), "
            f"so their posterior is undefined (lecture 004: naive Bayes cannot classify "
            f"them); predicting from the class priors for them. {advice}",
            ZeroProbabilityWarning, stacklevel=3)


class _SmoothingParams:
    """Validation of the categorical estimators' smoothing parameters."""

    def _check_smoothing(self):
        check_param("smoothing", self.smoothing, choices=SMOOTHING)
        check_param("alpha", self.alpha, low=0.0)
        check_param("m", self.m, low=0.0)
        check_param("p", self.p, low=0.0, high=1.0, low_inclusive=False, allow_none=True)

    def _smoothing_args(self):
        return self.smoothing, float(self.alpha), float(self.m), self.p


class _GaussianParams:
    """Validation of the Gaussian estimators' variance parameters."""

    def _check_gaussian(self):
        check_param("ddof", self.ddof, low=0.0)
        check_param("var_smoothing", self.var_smoothing, low=0.0)


class CategoricalNB(_SmoothingParams, _BaseNB):
    """Naive Bayes over categorical attributes (lecture 004), with Laplace / m-estimate / no
    smoothing.

    X may hold strings, integers, booleans or any hashable values per column (a numpy array, an
    object array or a DataFrame); None / NaN cells are missing. Each column's levels are the
    sorted distinct values seen at fit (a pandas categorical column: its declared categories).
    Sparse X (count or one-hot data; CSR, other scipy formats converted) is read from its
    stored entries: a sparse zero is the level 0 of its column (a one-hot column has the
    levels 0 and 1, a count column 0, 1, 2, ...), a stored NaN a missing cell; the model is
    the one its dense copy gives, without a dense copy.

    Parameters
    ----------
    smoothing : "laplace" (default), "m-estimate" or "none"
        P(X_i = c | y) = (n_c + alpha) / (n + alpha v), (n_c + m p) / (n + m) or n_c / n, with
        n the class's rows with X_i not missing and v the number of levels of X_i. A level
        unseen at fit time gets the zero-count value: alpha / (n + alpha v), m p / (n + m) or
        0. A class with no observed value of X_i gets 1 / v for every level.
    alpha : float, default 1.0
        Laplace's pseudo-count (004 uses 1; 0 is "none").
    m : float, default 1.0
        The m-estimate's equivalent sample size (confidence in p).
    p : float in (0, 1] or None
        The m-estimate's prior P(X_i = c | y); None means 1 / v per attribute.
    priors : array-like (n_classes,) or None
        Class priors; None estimates them from the class frequencies.
    class_weight : None (default), "balanced" or dict {label: weight}
        Reweights the estimated class prior: P(y = k) is proportional to class_weight_k
        times the weighted class count (scikit-learn's weights: "balanced" is
        n / (n_classes * n_k), which makes the prior uniform; a dict weighs the classes it
        names, the others 1). Only the prior moves: a class weight says what an error on a
        class costs, not how many rows it has, so the per-class estimates P(x_i | y) stay
        those of the data (multiplying sample_weight by it, as the discriminative models
        do, would only change how much the smoothing pseudo-counts and ddof weigh against
        the counts). Equal to `priors` set to that normalised product; the two cannot be
        given together. `partial_fit` takes "balanced" too: the prior comes from the class
        counts of every chunk so far.
    n_jobs : int or None
        Threads for counting and prediction (None = 1, -1 = all cores).

    Attributes
    ----------
    classes_ : ndarray (n_classes,)
        The sorted class labels.
    class_count_ : ndarray (n_classes,)
        Weighted number of rows per class.
    class_prior_, class_log_prior_ : ndarray (n_classes,)
        P(y = k) (estimated, or `priors`) and its log.
    categories_ : list of n_features arrays
        The sorted levels of each attribute.
    n_categories_ : ndarray (n_features,)
        The number of levels v_j of each attribute.
    category_count_ : list of (n_classes, v_j) arrays
        Weighted counts of each level per class.
    feature_log_prob_ : list of (n_classes, v_j) arrays
        log P(X_j = level | y).
    unseen_log_prob_ : ndarray (n_classes, n_features)
        log P of a level unseen at fit.
    n_features_in_ : int
    feature_names_in_ : ndarray of str (DataFrame input only)

    Examples
    --------
    Lecture 004's Refund attribute alone, with Laplace smoothing:

    >>> import numpy as np
    >>> from fastml import CategoricalNB
    >>> X = np.array([["Yes"], ["No"], ["No"], ["Yes"], ["No"], ["No"]])
    >>> y = ["No", "No", "No", "No", "Yes", "Yes"]
    >>> model = CategoricalNB().fit(X, y)
    >>> np.exp(model.feature_log_prob_[0]).round(3).tolist()  # levels ["No", "Yes"]
    [[0.5, 0.5], [0.75, 0.25]]
    >>> model.predict(np.array([["Yes"]])).tolist()
    ['No']
    """

    _accepts_categorical = True   # strings / categories encoded by _tabular
    _accepts_sparse = True        # count / one-hot data: _sparse

    def __init__(self, smoothing: str = "laplace", alpha: float = 1.0, m: float = 1.0,
                 p: Optional[ArrayLike] = None, priors: Optional[ArrayLike] = None,
                 class_weight: ClassWeightLike = None, n_jobs: Optional[int] = None) -> None:
        self.smoothing = smoothing
        self.alpha = alpha
        self.m = m
        self.p = p
        self.priors = priors
        self.class_weight = class_weight
        self.n_jobs = n_jobs

    def _check_params(self):
        super()._check_params()
        self._check_smoothing()

    def _check_X(self, X, reset):
        if _is_sparse(X):
            return _check_sparse_X(self, X, reset)
        X = check_table(X)
        check_n_features(self, X, reset=reset)
        return X

    def _make_parts(self, X, n_classes):
        return [_CategoricalPart(range(X.shape[1]), n_classes)]

    def _expected_parts(self, n_features):
        return [(_CategoricalPart, list(range(n_features)))]

    def _part_data(self, X):
        return [X]

    def _finalize_parts(self):
        part = self._parts[0]
        part.finalize(*self._smoothing_args())
        _set_categorical_attributes(self, part)


def _check_sparse_X(est, X, reset):
    """Sparse X for naive Bayes: CSR of float values (check_array), NaN cells missing."""
    return check_array(X, accept_sparse=True, allow_nan=True, estimator=est, reset=reset)


def _set_categorical_attributes(est, part):
    est.categories_ = list(part.encoder.categories_)
    est.n_categories_ = part.n_categories
    est.category_count_ = part.per_column(part.counts)
    est.feature_log_prob_ = part.log_prob
    est.unseen_log_prob_ = part.unseen_log_prob


def _set_gaussian_attributes(est, part):
    est.theta_ = part.theta
    est.var_ = part.var_public
    est.epsilon_ = part.epsilon
    est.feature_count_ = part.n


VARIANCES = ("per_class", "shared")


class GaussianNB(_GaussianParams, _BaseNB):
    """Naive Bayes with a normal density per class and attribute (lecture 004; 002's
    Gaussian naive Bayes).

    Parameters
    ----------
    variance : "per_class" (default) or "shared"
        "per_class": a variance per class and attribute (004). "shared": one variance per
        attribute for all classes, the within-class sums of squares pooled (002's
        class-independent sigma_i; its model is a logistic regression, see `to_logistic`).
    ddof : float, default 1
        The variance is M2 / (n - ddof): 1 gives 004's sample variance (2975 for income given
        No), 0 the maximum-likelihood variance (scikit-learn's). When n <= ddof the variance
        is 0 before the floor (with a UserWarning when the values differ: sample weights
        count rows, so weights normalised to sum to 1 need ddof=0). "shared" pools with n - ddof * K (K classes): ddof=1 is the
        unbiased pooled variance, denominator n - K.
    var_smoothing : float, default 1e-9
        epsilon_ = var_smoothing * (the largest variance of an attribute over all rows, with
        an n denominator; 1 if every attribute is constant) is added to every variance.
        With sample weights that variance is the weighted one (a row of weight 2 counts as
        two rows, here too); scikit-learn's GaussianNB takes it unweighted (and, in
        partial_fit, from the last chunk only), so weighted fits differ from it by epsilon_.
    priors : array-like (n_classes,) or None
    class_weight : None (default), "balanced" or dict {label: weight}
        Reweights the estimated class prior, as in CategoricalNB (the means and variances
        stay those of the data).
    n_jobs : int or None
        Threads for the moment pass and prediction (None = 1, -1 = all cores).

    X is numeric (float32 kept, other types as float64); NaN cells are missing, inf raises.
    Sparse X (CSR, other scipy formats converted) is read from its stored entries: a sparse
    zero is the value 0.0 (it enters the mean and variance), a stored NaN a missing cell;
    the model is the one its dense copy gives, without a dense copy.

    Attributes
    ----------
    classes_, class_count_, class_prior_, class_log_prior_
        As in CategoricalNB.
    theta_ : ndarray (n_classes, n_features)
        Per-class means. NaN where a class has no value of an attribute: the class is then
        scored on it with all classes' values (their mean and variance), so the posterior
        does not depend on the attribute's units.
    var_ : ndarray (n_classes, n_features)
        Per-class variances, epsilon_ included (NaN like theta_).
    feature_count_ : ndarray (n_classes, n_features)
        Weighted counts of the non-missing values.
    epsilon_ : float
        The variance floor added to every variance.
    n_features_in_ : int

    Examples
    --------
    Lecture 004's taxable income (in K) given Evade = No has sample variance 2975:

    >>> import numpy as np
    >>> from fastml import GaussianNB
    >>> income = [125, 100, 70, 120, 95, 60, 220, 85, 75, 90]
    >>> evade = ["No", "No", "No", "No", "Yes", "No", "No", "Yes", "No", "Yes"]
    >>> model = GaussianNB().fit(np.reshape(income, (-1, 1)), evade)
    >>> model.theta_[:, 0].round(6).tolist(), model.var_[:, 0].round(3).tolist()
    ([110.0, 90.0], [2975.0, 25.0])
    >>> model.predict([[120.0]]).tolist()
    ['No']
    """

    # its moment kernel reads column-major X through a small row panel in cache, with no
    # copy of X (_nb_fast.pyx): an executor's column-major arrays cost one copy less
    _part_layout = "F"

    def __init__(self, variance: str = "per_class", ddof: float = 1, var_smoothing: float = 1e-9,
                 priors: Optional[ArrayLike] = None, class_weight: ClassWeightLike = None,
                 n_jobs: Optional[int] = None) -> None:
        self.variance = variance
        self.ddof = ddof
        self.var_smoothing = var_smoothing
        self.priors = priors
        self.class_weight = class_weight
        self.n_jobs = n_jobs

    def _check_params(self):
        super()._check_params()
        self._check_gaussian()
        check_param("variance", self.variance, choices=VARIANCES)

    _accepts_sparse = True

    def _check_X(self, X, reset):
        return check_array(X, accept_sparse=True, allow_nan=True, estimator=self, reset=reset)

    def _check_fit_X(self, X, reset):
        """A float32 / float64 array in either layout is read in place (no copy; a
        column-major X is what a columnar source gives cheaply). Infinity is then found by the
        moment pass itself (_GaussianPart.accumulate), not by a separate read of X."""
        if type(X) is np.ndarray and X.ndim == 2 and X.dtype in (np.float64, np.float32) \
                and (X.flags.c_contiguous or X.flags.f_contiguous) and X.size > 0:
            check_n_features(self, X, reset=reset)
            return _FiniteLater(X)
        return self._check_X(X, reset)

    def to_logistic(self) -> LogisticRegression:
        """The logistic regression this model is (002: Gaussian naive Bayes with variances
        shared by the classes has exactly logistic regression's form).

        With one variance sigma_j^2 per attribute, log P(y = k | x) is, up to a term common
        to all classes, log pi_k + sum_j (mu_kj x_j - mu_kj^2 / 2) / sigma_j^2: linear in x.
        Two classes give 002's slide with the signs of fastml's convention (P(classes_[1] | x)
        = sigmoid(w . x + b)): w_j = -w_j(002) = (mu_1j - mu_0j) / sigma_j^2 and
        b = -w_0(002) = log(pi_1 / pi_0) - sum_j (mu_1j^2 - mu_0j^2) / (2 sigma_j^2).
        More classes give the softmax form, each class relative to classes_[0].

        Returns
        -------
        LogisticRegression
            Fitted (coef_, intercept_, classes_, n_features_in_ set; nothing is trained):
            its predict_proba equals this model's on data without missing cells.

        Raises
        ------
        ValueError
            With variance="per_class" (the log-odds are then quadratic in x).

        Examples
        --------
        >>> import numpy as np
        >>> from fastml import GaussianNB
        >>> X = np.array([[0.0], [2.0], [4.0], [6.0]])
        >>> gnb = GaussianNB(variance="shared").fit(X, [0, 0, 1, 1])
        >>> lr = gnb.to_logistic()
        >>> lr.coef_.round(6).tolist(), lr.intercept_.round(6).tolist()
        ([[2.0]], [-6.0])
        >>> bool(np.allclose(lr.predict_proba(X), gnb.predict_proba(X), rtol=0, atol=1e-12))
        True
        """
        from ..linear_model import LogisticRegression
        self._check_is_fitted("class_count_")
        if self.variance != "shared":
            raise ValueError(
                "to_logistic needs GaussianNB(variance='shared'): with per-class variances "
                "the log-odds are quadratic in x, so no logistic regression equals this "
                "model (002: only GNB with class-independent variances is linear)")
        # the means and variances the model scores with (a class without values of an
        # attribute: all classes' mean; an attribute no class saw: b = 0, no term)
        part = self._parts[0]
        mean, inv_var = part.kernel_mean, 2.0 * part.b        # b = 1 / (2 sigma^2)
        delta = mean - mean[0]                                # each class minus classes_[0]
        coef = delta * inv_var[0]
        intercept = (self.class_log_prior_ - self.class_log_prior_[0]) - (
            delta * (mean + mean[0]) * inv_var[0] / 2.0).sum(axis=1)
        if len(self.classes_) == 2:                           # one vector, for classes_[1]
            coef, intercept = coef[1:], intercept[1:]
        lr = LogisticRegression()
        lr.coef_, lr.intercept_ = np.ascontiguousarray(coef), np.ascontiguousarray(intercept)
        lr.classes_, lr.n_features_in_ = self.classes_.copy(), self.n_features_in_
        if hasattr(self, "feature_names_in_"):
            lr.feature_names_in_ = self.feature_names_in_.copy()
        return lr

    def _make_parts(self, X, n_classes):
        return [_GaussianPart(n_classes, X.shape[1])]

    def _expected_parts(self, n_features):
        return [(_GaussianPart, n_features)]

    def _part_data(self, X):
        return [X]

    def _finalize_parts(self):
        part = self._parts[0]
        part.finalize(float(self.ddof), float(self.var_smoothing),
                      shared=self.variance == "shared")
        _set_gaussian_attributes(self, part)


class NaiveBayes(_SmoothingParams, _GaussianParams, _BaseNB):
    """Lecture 004's mixed naive Bayes: categorical attributes counted (with smoothing), real
    attributes Gaussian, one posterior.

    Parameters
    ----------
    categorical_features : "auto" (default), "all", None, or column indices / names / a mask
        "auto": DataFrame columns of dtype object, string, category or bool are categorical;
        in a numpy object array a column is categorical when any non-missing value is not a
        real number (e.g. a string); string arrays are all categorical, numeric arrays (and
        sparse matrices) all real. Real columns must hold numbers (None / NaN are missing).
        Sparse X is read from its stored entries: a sparse zero is the value 0, the level 0
        of a categorical column and 0.0 of a real one; a stored NaN is a missing cell.
    smoothing, alpha, m, p : the categorical attributes' estimates, as in CategoricalNB.
        The default "laplace" avoids 004's zero probabilities; "none" gives 004's raw fractions.
    ddof, var_smoothing : the real attributes' variances, as in GaussianNB (the floor uses the
        real columns only).
    priors, class_weight, n_jobs : as in CategoricalNB.

    Attributes
    ----------
    categorical_features_ : ndarray (n_features,) of bool
        Which columns are categorical.
    categories_, n_categories_, category_count_, feature_log_prob_, unseen_log_prob_
        As in CategoricalNB, for the categorical columns in order.
    theta_, var_, feature_count_, epsilon_
        As in GaussianNB, for the real columns in order.
    classes_, class_count_, class_prior_, class_log_prior_, n_features_in_
        As in CategoricalNB.
    feature_names_in_ : ndarray of str (DataFrame input only)

    Examples
    --------
    Lecture 004's tax table (Refund, Marital Status, Taxable Income) without smoothing:

    >>> import numpy as np
    >>> from fastml import NaiveBayes
    >>> from fastml.datasets import load_tax_table
    >>> X, y = load_tax_table(return_X_y=True)
    >>> model = NaiveBayes(smoothing="none").fit(X, y)
    >>> model.categorical_features_.tolist()
    [True, True, False]
    >>> x = np.array([["No", "Married", 120.0]], dtype=object)
    >>> model.predict(x).tolist()
    ['No']
    """

    _accepts_categorical = True   # strings / categories encoded by _tabular

    def __init__(self, categorical_features: str = "auto", smoothing: str = "laplace",
                 alpha: float = 1.0, m: float = 1.0, p: Optional[ArrayLike] = None,
                 ddof: float = 1, var_smoothing: float = 1e-9, priors: Optional[ArrayLike] = None,
                 class_weight: ClassWeightLike = None, n_jobs: Optional[int] = None) -> None:
        self.categorical_features = categorical_features
        self.smoothing = smoothing
        self.alpha = alpha
        self.m = m
        self.p = p
        self.ddof = ddof
        self.var_smoothing = var_smoothing
        self.priors = priors
        self.class_weight = class_weight
        self.n_jobs = n_jobs

    def _check_params(self):
        super()._check_params()
        self._check_smoothing()
        self._check_gaussian()

    _accepts_sparse = True        # each column's kind as for a numeric array: _sparse

    def _check_X(self, X, reset):
        if _is_sparse(X):
            X = _check_sparse_X(self, X, reset)
            if reset:   # the rules of a numeric array ("auto": every column real)
                self.categorical_features_ = categorical_mask(
                    np.empty((0, X.shape[1]), dtype=X.dtype), self.categorical_features)
            return X
        X = check_table(X)
        check_n_features(self, X, reset=reset)
        if reset:
            self.categorical_features_ = categorical_mask(X, self.categorical_features)
        return X

    def _make_parts(self, X, n_classes):
        categorical = np.flatnonzero(self.categorical_features_)
        real = np.flatnonzero(~self.categorical_features_)
        parts = []
        if len(categorical):
            parts.append(_CategoricalPart(categorical.tolist(), n_classes))
        if len(real):
            parts.append(_GaussianPart(n_classes, len(real)))
        return parts

    def _expected_parts(self, n_features):
        mask = state_array(self, "categorical_features_", bool, (n_features,))
        categorical, real = np.flatnonzero(mask).tolist(), int((~mask).sum())
        return [(_CategoricalPart, categorical)] * bool(categorical) + \
            [(_GaussianPart, real)] * bool(real)

    def _part_data(self, X):
        if _is_sparse(X):           # each part its own columns, still CSR
            mask = self.categorical_features_
            return [X[:, np.flatnonzero(kind)] for kind in (mask, ~mask) if kind.any()]
        data = []
        n_categorical = int(np.count_nonzero(self.categorical_features_))
        if n_categorical:
            data.append(X)  # the encoder picks its own columns
        if n_categorical == 0 and type(X) is np.ndarray and \
                X.dtype in (np.float64, np.float32) and X.flags.c_contiguous:
            # numeric_block's checks without its copy (the Gaussian kernels read float32 as
            # GaussianNB's do: a float64 copy of float32 X tripled fit's memory)
            _check_finite(X, "X", allow_nan=True)
            data.append(X)
        elif n_categorical < len(self.categorical_features_):
            data.append(numeric_block(X, np.flatnonzero(~self.categorical_features_)))
        return data

    def _finalize_parts(self):
        for part in self._parts:
            if isinstance(part, _CategoricalPart):
                part.finalize(*self._smoothing_args())
                _set_categorical_attributes(self, part)
            else:
                part.finalize(float(self.ddof), float(self.var_smoothing))
                _set_gaussian_attributes(self, part)
