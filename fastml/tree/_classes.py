"""DecisionTreeClassifier and DecisionTreeRegressor: the lectures' ID3 / IG* trees.

000 / 002 "Basic Decision Tree Building Summarized": split on the attribute of highest
information gain; a categorical attribute gets one child per value (multiway, ID3), a real one
the binary test x < t with the best threshold t = x_i + (x_{i+1} - x_i)/2 (IG*); stop when the
outputs agree or the inputs are identical, never because every gain is zero (XOR). 000's
chi-square pruning (`max_pchance`) collapses, bottom-up, the splits whose p_chance exceeds it.

Choices the lectures leave open, made here (and tested):
- Ties: gains within info.GAIN_TIE (1e-10) bits are ties (regression: within 1e-10 of the
  node's sum of squared deviations); the first feature (column order; draw order under
  `max_features`) and then the smallest threshold win.
- Missing values (NaN in a real column, None/NaN in a categorical one) are learned, not
  rejected: at a real split the rows with the value missing go to the side that gives the larger
  gain (right on ties); at a categorical split, or where no training row was missing, they follow
  the majority path (the child with the most training rows). A real column's candidates also
  include the missing-vs-present cut (threshold +inf, the rows with a value left, the missing
  ones right; after every other threshold in the tie order), so a column whose values only say
  "known" (1.0 / NaN) splits too.
- A category never seen at fit time, or not seen at that node, also takes the majority path.
- `feature_importances_`: total information gain of each attribute, sum over its splits of
  (n_node / n) * IG, normalised to sum to 1 (scikit-learn's convention; n counts weight when
  the fit has sample weights).
- Sample weights (`fit(X, y, sample_weight)`, and `class_weight`): a row of weight w counts w
  in every class count, target sum and impurity, so integer weights grow the tree of the
  repeated rows and a weight of 0 drops the row; `min_samples_leaf` and `n_node_samples`
  count rows, `min_weight_fraction_leaf` bounds a leaf's weight as in scikit-learn.
The compiled builder is fastml/tree/_builder_fast.pyx (its header describes the algorithm); the
fitted tree's storage, its walks and its checks are fastml/tree/_tree_fast.pyx.
"""
from __future__ import annotations

import numbers
import os
from typing import TYPE_CHECKING, Any, Optional, Union

import numpy as np

from .._base import BaseEstimator, ClassifierMixin, RegressorMixin, all_or_nothing
from ..exceptions import NotScalable
from .._tabular import TabularEncoder, is_auto
from .._validation import (_is_pandas_frame, _is_sparse, check_array, check_n_features,
                           check_n_jobs, check_param, check_random_state, check_sample_weight,
                           check_target, class_sample_weight, seed_from, state_array,
                           state_count)
from ._builder_fast import CATEGORICAL_SPLITS, CRITERIA, build_tree
from ._hist_fast import MAX_BINS, bin_features, bin_sparse, grow_hist_tree
from ._prune import chi2_prune
from ._tree_fast import KIND_LEAF, Tree, forest_sum

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from .._typing import (ArrayLike, ClassWeightLike, EstimatorT, MatrixLike, NDArray,
                           RandomStateLike, VectorLike)

__all__ = ["DecisionTreeClassifier", "DecisionTreeRegressor"]



def presort(Xf, n_threads=1):
    """Each feature's rows sorted by value, NaN last, equal values in row order (once per
    fit; forests share it).

    Parameters
    ----------
    Xf : ndarray of shape (n_features, n_samples), float64
    n_threads : int, default=1
        Features sorted in parallel threads (numpy's sort releases the GIL).

    Returns
    -------
    order : ndarray of int32, shape (n_features, n_samples)

    Examples
    --------
    >>> presort(np.array([[3.0, np.nan, 1.0, 3.0]])).tolist()
    [[2, 0, 3, 1]]
    """
    order = np.empty(Xf.shape, dtype=np.int32)

    def sort_feature(f):
        order[f] = sorted_rows(Xf[f])

    if n_threads == 1 or Xf.shape[0] < 2:
        for f in range(Xf.shape[0]):
            sort_feature(f)
        return order
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(n_threads) as pool:
        list(pool.map(sort_feature, range(Xf.shape[0])))
    return order


def sorted_values(Xf, order):
    """Each feature's values in its presort's order: Xs[f, i] = Xf[f, order[f, i]]."""
    return np.ascontiguousarray(np.take_along_axis(Xf, order, axis=1))


def sorted_rows(x):
    """The rows of x by value, NaN last, equal values in row order: the stable argsort, by
    numpy's quicksort (its SIMD argsort, ~3x the stable one on W3's columns) and then a sort
    of just the runs of equal values by row (columns of many ties: the stable sort)."""
    order = np.argsort(x, kind="quicksort")
    ranked = x[order]
    tied = (ranked[1:] == ranked[:-1]) | (np.isnan(ranked[1:]) & np.isnan(ranked[:-1]))
    if not tied.any():
        return order
    if 4 * np.count_nonzero(tied) > len(x):   # many ties (few values): timsort's runs win
        return np.argsort(x, kind="stable")
    in_run = np.zeros(len(x), dtype=bool)       # the entries of runs of two or more
    in_run[1:] |= tied
    in_run[:-1] |= tied
    where = np.flatnonzero(in_run)
    run = np.cumsum(np.concatenate(([True], ~tied)))[where]   # run number, non-decreasing
    by_row = np.argsort(run.astype(np.int64) * len(x) + order[where], kind="quicksort")
    order[where] = order[where][by_row]
    return order


def grow_tree(Xs, order, counts, y, is_categorical, n_levels, *, n_classes, criterion,
              max_depth, min_samples_split, min_samples_leaf, max_leaf_nodes, max_features,
              seed, n_threads=1, categorical_split=0, weights=None, min_weight_leaf=0.0):
    """One call of the compiled builder (it runs without the GIL: forests call it from
    threads, one OpenMP thread each).

    Parameters
    ----------
    Xs, order : ndarrays of shape (n_features, n_samples)
        Each feature's rows in sorted order (presort) and their encoded values in that
        order (sorted_values).
    counts : ndarray of int32 or None
        Per-row bootstrap multiplicities (None: each row once).
    y : ndarray
        Class codes (int32) or targets (float64, criterion "squared_error").
    is_categorical, n_levels : ndarrays of shape (n_features,)
    n_classes, criterion, max_depth, ..., seed, n_threads, categorical_split
        As ``EncodedInput._limits`` returns them.
    weights : ndarray of float64 or None
        Per-row sample weights (None: 1 each, the builder's count copy).
    min_weight_leaf : float
        The least weight of a leaf (min_weight_leaf).

    Returns
    -------
    Tree

    Examples
    --------
    >>> Xf = np.array([[2.0, 0.0, 3.0, 1.0]])
    >>> order = presort(Xf)
    >>> tree = grow_tree(sorted_values(Xf, order), order, None, np.array([1, 0, 1, 0], np.int32),
    ...                  np.zeros(1, np.uint8), np.zeros(1, np.int32), n_classes=2,
    ...                  criterion=CRITERIA["entropy"], max_depth=5, min_samples_split=2,
    ...                  min_samples_leaf=1, max_leaf_nodes=0, max_features=1, seed=0)
    >>> tree.node_count, float(tree.threshold[0])
    (3, 1.5)
    """
    empty_i, empty_d = np.zeros(0, np.int32), np.zeros(0, np.float64)
    classification = criterion != CRITERIA["squared_error"]
    return build_tree(
        Xs, order, empty_i if counts is None else counts,
        empty_d if weights is None else weights,
        y if classification else empty_i, empty_d if classification else y,
        is_categorical, n_levels, n_classes, criterion, max_depth, min_samples_split,
        min_samples_leaf, min_weight_leaf, max_leaf_nodes, max_features, seed, n_threads,
        categorical_split)


# The largest |target| a regression tree takes: its sums of squared deviations (the split
# costs) must stay finite for any number of rows a tree can take (2**31), and 2 * 2**490
# squared times 2**31 is far below float64's largest (about 2**1024).
MAX_ABS_TARGET = 2.0 ** 490
# The range of a fit's total sample weight: entropies sum w log2 w and Gini squares of class
# weights, which must neither overflow nor underflow to 0. Only the weights' ratios change a
# tree, so any weights can be brought into it by a common factor.
WEIGHT_RANGE = (2.0 ** -450, 2.0 ** 450)


def regression_targets(y, weights=None):
    """y as finite float64 targets a regression tree can split on (ValueError otherwise):
    its weighted sums of squared deviations must stay finite (weights: the fit's sample
    weights, or None)."""
    y = check_target(y, numeric=True).astype(np.float64)
    largest = float(np.abs(y).max()) if y.size else 0.0
    if largest > MAX_ABS_TARGET:
        raise ValueError(f"y has values up to {largest:.3g} in magnitude: their squared "
                         f"deviations, which regression trees sum to rank the splits, would "
                         f"overflow float64; divide y by a constant (at most "
                         f"{MAX_ABS_TARGET:.3g} in magnitude)")
    if weights is not None and largest > 0 and \
            np.log2(largest) * 2 + 2 + np.log2(weights.sum()) > 1000:
        raise ValueError(f"y has values up to {largest:.3g} in magnitude and sample_weight "
                         f"sums to {weights.sum():.3g}: the weighted squared deviations would "
                         f"overflow float64; divide y or the weights by a constant")
    return y


def fit_weights(sample_weight, n_samples, class_weight=None, classes=None, codes=None):
    """The rows' sample weights times their class weights (class_weight of a classifier:
    None, "balanced" or a dict; _validation.class_sample_weight, scikit-learn's rule with
    weighted class counts), float64; None when every row weighs 1, which grows the same
    tree by the builders' faster count copy.

    Examples
    --------
    >>> fit_weights(None, 3) is None, fit_weights([1, 1, 1], 3) is None
    (True, True)
    >>> fit_weights(None, 4, "balanced", np.array(["a", "b"]), np.array([0, 0, 0, 1])).tolist()
    [0.6666666666666666, 0.6666666666666666, 0.6666666666666666, 2.0]
    """
    if sample_weight is None and class_weight is None:
        return None
    weights = check_sample_weight(sample_weight, n_samples)
    if class_weight is not None:
        weights = class_sample_weight(class_weight, classes, codes, weights)
    total = float(weights.sum())
    if not WEIGHT_RANGE[0] <= total <= WEIGHT_RANGE[1]:
        raise ValueError(f"sample_weight sums to {total:.3g}: a tree needs a total between "
                         f"2^-450 and 2^450; multiply the weights by a common factor (only "
                         f"their ratios change the tree)")
    if (weights == 1.0).all():
        return None
    return weights


def min_weight_leaf(fraction, counts, weights, n_samples):
    """min_weight_fraction_leaf as the least weight of a leaf, as scikit-learn computes it:
    the fraction of the tree's total weight (a forest tree's: its bootstrap counts times the
    sample weights)."""
    if fraction == 0:
        return 0.0
    if weights is None:
        total = n_samples if counts is None else counts.sum()
    else:
        total = (weights if counts is None else counts * weights).sum()
    return fraction * float(total)


def resolve_max_features(max_features, n_features):
    """The number of features a node tries, from the max_features parameter.

    Parameters
    ----------
    max_features : None, "sqrt", "log2", int >= 1 or float in (0, 1]
    n_features : int

    Returns
    -------
    int in [1, n_features]

    Examples
    --------
    >>> [resolve_max_features(m, 20) for m in ("sqrt", 0.5, 99)]
    [4, 10, 20]
    """
    if max_features is None:
        return n_features
    if isinstance(max_features, str):
        if max_features == "sqrt":
            return max(1, int(np.sqrt(n_features)))
        if max_features == "log2":
            return max(1, int(np.log2(n_features)))
        raise ValueError(f"max_features must be None, 'sqrt', 'log2', an int or a float in "
                         f"(0, 1]; got {max_features!r}")
    if isinstance(max_features, numbers.Integral) and not isinstance(max_features, bool):
        check_param("max_features", max_features, low=1, integer=True, c_int=False)
        return min(int(max_features), n_features)
    check_param("max_features", max_features, low=0, high=1, low_inclusive=False)
    return max(1, int(max_features * n_features))


class HistTakesSparse:
    """`_accepts_sparse` of the trees and forests: an estimator with splitter="hist" takes
    sparse X (its tags say so); the class itself, as its defaults (splitter="best"), does not
    (what the command line asks of a model class)."""

    def __get__(self, obj, owner=None):
        return obj is not None and getattr(obj, "splitter", None) == "hist"


class EncodedInput:
    """Parameter checks and the tabular encoding shared by trees and forests. Sparse X
    (scipy CSR / CSC, splitter="hist") is kept sparse: a CSR matrix of real columns."""

    _accepts_categorical = True   # strings / categories encoded by _tabular

    _fitted_attr = "tree_"

    _accepts_sparse = HistTakesSparse()

    def _limits(self, n_samples, n_features):
        """The growth limits as the builder takes them. Any integer is accepted (a Python int
        has no size limit); each is clamped to what n_samples rows can reach, which leaves
        the tree unchanged (no tree over n rows is deeper than n, has more than n leaves, or
        splits a node of more than n rows), so the C integers cannot overflow."""
        check_param("criterion", self.criterion, choices=self._criteria)
        check_param("categorical_split", self.categorical_split,
                    choices=tuple(CATEGORICAL_SPLITS))
        check_param("splitter", self.splitter, choices=("best", "hist"))
        check_param("max_bins", self.max_bins, low=2, high=MAX_BINS, integer=True)
        check_param("max_depth", self.max_depth, low=1, integer=True, allow_none=True,
                    c_int=False)  # clamped to the data below
        check_param("min_samples_split", self.min_samples_split, low=2, integer=True,
                    c_int=False)  # clamped to the data below
        check_param("min_samples_leaf", self.min_samples_leaf, low=1, integer=True,
                    c_int=False)  # clamped to the data below
        check_param("min_weight_fraction_leaf", self.min_weight_fraction_leaf, low=0.0,
                    high=0.5)
        check_param("max_leaf_nodes", self.max_leaf_nodes, low=2, integer=True, allow_none=True,
                    c_int=False)  # clamped to the data below
        beyond = n_samples + 1  # as good as infinite for a sample of n_samples rows
        return dict(
            criterion=CRITERIA[self.criterion],
            max_depth=beyond if self.max_depth is None else min(int(self.max_depth), beyond),
            min_samples_split=min(int(self.min_samples_split), beyond),
            min_samples_leaf=min(int(self.min_samples_leaf), beyond),
            max_leaf_nodes=0 if self.max_leaf_nodes is None else
            min(int(self.max_leaf_nodes), beyond),
            max_features=resolve_max_features(self.max_features, n_features),
            categorical_split=CATEGORICAL_SPLITS[self.categorical_split])

    def _grower(self, Xe, n_threads=1):
        """The splitter's one-off work on the encoded X (the presort of its columns, or the
        binning) and the function that grows a tree from it: grow(counts, y, **limits)."""
        is_cat, n_levels = self.categorical_mask_.astype(np.uint8), self._n_levels()
        if _is_sparse(Xe):
            if self.splitter != "hist":
                raise ValueError("X is sparse: splitter='best' sorts a dense copy of every "
                                 "column; use splitter='hist', which bins the nonzeros and "
                                 "never densifies X (or pass X.toarray() if it fits in "
                                 "memory)")
            data = bin_sparse(Xe, int(self.max_bins), n_threads)
            return lambda counts, y, categorical_split=None, **kw: grow_hist_tree(
                data, counts, y, is_cat, n_levels, **kw)
        if self.splitter == "hist":  # bins straight from the rows (no transposed copy)
            if self.categorical_split != "multiway" and is_cat.any():
                raise ValueError("splitter='hist' splits categorical columns multiway (their "
                                 "level codes are the bins); categorical_split='"
                                 f"{self.categorical_split}' needs splitter='best'")
            data = bin_features(np.ascontiguousarray(Xe), is_cat, n_levels,
                                int(self.max_bins), n_threads)
            return lambda counts, y, categorical_split=None, **kw: grow_hist_tree(
                data, counts, y, is_cat, n_levels, **kw)
        Xf = np.ascontiguousarray(Xe.T)
        order = presort(Xf, n_threads)
        Xs = sorted_values(Xf, order)      # each tree reads its lists' values in sequence
        del Xf
        return lambda counts, y, **kw: grow_tree(Xs, order, counts, y, is_cat, n_levels, **kw)

    def _encode_fit(self, X):
        """X → float64 matrix (codes for categorical columns), recording the vocabulary; a
        sparse X → a checked CSR matrix (its columns are real)."""
        if _is_sparse(X):
            return self._encode_fit_sparse(X)
        self._encoder = TabularEncoder(self.categorical_features)
        Xe = self._encoder.fit_transform(X)
        check_n_features(self, X if _is_pandas_frame(X) else Xe, reset=True)
        self.categorical_mask_ = self._encoder.categorical_mask_
        self.categories_ = self._encoder.categories_
        return Xe

    def _encode_fit_sparse(self, X):
        """A sparse X's checks (canonical float64 CSR, NaN = missing, no infinity) and the
        encoder of its real columns, which also encodes dense X at predict time."""
        if not (self.categorical_features is None or is_auto(self.categorical_features)):
            raise ValueError("X is sparse, and sparse columns are real: categorical_features "
                             "must be 'auto' or None")
        Xs = check_array(X, accept_sparse=True, allow_nan=True, dtype=np.float64)
        check_n_features(self, Xs, reset=True)
        self._encoder = TabularEncoder(None)
        self._encoder.fit(np.zeros((1, Xs.shape[1])))
        self.categorical_mask_ = self._encoder.categorical_mask_
        self.categories_ = self._encoder.categories_
        return Xs

    def _encode(self, X):
        self._check_is_fitted(self._fitted_attr)
        if X is None:
            raise ValueError("X is None; expected an array of shape (n_samples, n_features)")
        if _is_sparse(X):
            if self.categorical_mask_.any():
                raise ValueError("X is sparse, but the model has categorical columns: pass "
                                 "them as a DataFrame or an array")
            Xs = check_array(X, accept_sparse=True, allow_nan=True, dtype=np.float64)
            check_n_features(self, Xs, reset=False)
            return Xs
        frame = _is_pandas_frame(X)
        if frame:       # the names first: a reordered frame is told so, not that a column of
            check_n_features(self, X, reset=False)   # the wrong kind holds strings
        Xe = self._encoder.transform(X, owner=type(self).__name__)
        if not frame:
            check_n_features(self, Xe, reset=False)
        return Xe

    def _check_fitted_state(self):
        """Run by fastml.io.load on a restored tree or forest: the encoder, the column
        kinds and every tree agree (see Tree.check) -- a single tree's own, and a forest's
        trees with the forest's columns, since the forest walks them on its own encoding."""
        if not hasattr(self, self._fitted_attr):
            return
        n_features = state_count(self, "n_features_in_", low=1)
        mask = state_array(self, "categorical_mask_", bool, (n_features,))
        encoder = self._encoder
        if not isinstance(encoder, TabularEncoder) or encoder.n_features_ != n_features \
                or not np.array_equal(encoder.categorical_mask_, mask):
            raise ValueError("the column encoder does not match n_features_in_ and "
                             "categorical_mask_")
        if not isinstance(self.categories_, list) or len(self.categories_) != n_features:
            raise ValueError(f"categories_ is not a list of {n_features} entries")
        # a categorical column has a list of levels (empty when the column was all missing)
        if [c is not None for c in self.categories_] != mask.tolist() or \
                self._n_levels().tolist() != [0 if c is None else len(c)
                                              for c in encoder.categories_]:
            raise ValueError("categories_ does not match the categorical columns")
        n_levels = self._n_levels()
        n_values = 1
        if self._estimator_type == "classifier":
            n_values = state_count(self, "n_classes_", low=1)
            state_array(self, "classes_", None, (n_values,), contiguous=False)
        for tree in self._trees():
            tree.check_columns(n_features, n_values, n_levels)

    def _trees(self):
        fitted = getattr(self, self._fitted_attr)
        if self._fitted_attr == "tree_":
            if not isinstance(fitted, Tree):
                raise ValueError("tree_ is not a Tree")
            return [fitted]
        if not isinstance(fitted, list) or not fitted or not all(
                type(est) is self._tree_class for est in fitted):
            raise ValueError(f"estimators_ is not a non-empty list of "
                             f"{self._tree_class.__name__}")
        return [est._trees()[0] for est in fitted]

    def _n_levels(self):
        return np.array([len(c) if c is not None else 0 for c in self.categories_],
                        dtype=np.int32)

    @staticmethod
    def _check_lengths(Xe, y):
        if len(y) != Xe.shape[0]:
            raise ValueError(f"X and y have different numbers of samples: X has {Xe.shape[0]}, "
                             f"y has {len(y)}")


class BaseDecisionTree(EncodedInput, BaseEstimator):
    """The builder call and the inspection methods shared by the classifier and regressor."""

    _allows_nan = True

    def _scaled_fit(self):
        """Not fitted part by part (fastml/_plans.py): see the reason."""
        raise NotScalable("the split search needs all rows at once; fit it in memory (on a "
                          "sample if need be: X.compute() for a dask collection), or use a "
                          "RandomForest, whose trees grow on dask partitions")

    def _grow(self, Xe, y, n_classes, weights):
        limits = self._limits(*Xe.shape)
        rng = check_random_state(self.random_state)
        # each thread gets scratch the size of the sample: more threads than features (which
        # they share out) or than cores cannot help, so n_jobs is clamped to both
        n_threads = min(check_n_jobs(self.n_jobs), Xe.shape[1], os.cpu_count() or 1)
        grow = self._grower(Xe, n_threads)
        self.tree_ = grow(None, y, n_classes=n_classes, seed=seed_from(rng),
                          n_threads=n_threads, weights=weights,
                          min_weight_leaf=min_weight_leaf(self.min_weight_fraction_leaf, None,
                                                          weights, Xe.shape[0]), **limits)

    # ------------------------------------------------------------------ inspection
    def apply(self, X: MatrixLike) -> NDArray[np.intp]:
        """The id of the leaf each sample ends in.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features_in_)
            The columns seen at fit (NaN / None = missing).

        Returns
        -------
        ndarray of int64, shape (n_samples,)
        """
        return self.tree_.apply(self._encode(X))[0]

    def decision_path(self, X: MatrixLike) -> Any:
        """Which nodes each sample passes through.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features_in_)
            The columns seen at fit (NaN / None = missing).

        Returns
        -------
        scipy.sparse.csr_matrix of shape (n_samples, tree_.node_count)
        """
        return self.tree_.decision_path(self._encode(X))

    def get_depth(self) -> int:
        """The depth of the deepest leaf (a single leaf has depth 0).

        Returns
        -------
        int
        """
        self._check_is_fitted("tree_")
        return self.tree_.max_depth

    def get_n_leaves(self) -> int:
        """The number of leaves.

        Returns
        -------
        int
        """
        self._check_is_fitted("tree_")
        return self.tree_.n_leaves

    @property
    def feature_importances_(self):
        """Total information gain (variance reduction) per feature, normalised to sum to 1."""
        self._check_is_fitted("tree_")
        t = self.tree_
        inner = t.kind != KIND_LEAF
        total = np.zeros(self.n_features_in_)
        np.add.at(total, t.feature[inner], (t.weighted_n_node_samples * t.gain)[inner])
        s = total.sum()
        return total / s if s > 0 else total


class DecisionTreeClassifier(ClassifierMixin, BaseDecisionTree):
    """A decision tree by information gain (000/001/002), with chi-square pruning.

    Parameters
    ----------
    criterion : {"entropy", "gini"}, default="entropy"
        "entropy" is the lectures' information gain.
    max_depth : int or None, default=None
        Deepest level grown (None: unlimited; any integer is accepted).
    min_samples_split : int, default=2
        A node with fewer rows is a leaf.
    min_samples_leaf : int, default=1
        Every child of a split holds at least this many rows (001).
    max_leaf_nodes : int or None, default=None
        Grow best-first by gain until the tree has this many leaves (None: depth-first,
        unlimited).
    max_pchance : float in [0, 1] or None, default=None
        000's MaxPchance: after growing, splits whose Pearson chi-square p_chance exceeds it
        are collapsed, bottom-up, until none is prunable. With sample weights the test runs
        on the weighted class counts read as frequencies: a weight of 3 is three observed
        rows (integer weights prune as the repeated rows do), so scaling every weight by c
        scales the statistic by c; with non-integer weights the p-value is that of counts
        equal to the weights, an approximation.
    categorical_features : "auto", "all", None, or list of names / indices, or bool mask
        Columns that get ID3's multiway split. "auto": category/string/bool columns and object
        columns holding non-numbers (the rules of fastml/_tabular.py). Values unseen at fit
        time take the majority path.
    max_features : None, "sqrt", "log2", int or float in (0, 1], default=None
        Features tried per node (None: all).
    random_state : int, Generator or None, default=None
        Seed of the feature draws (only matters with max_features).
    n_jobs : int or None, default=None
        Threads that search the features' splits (and partition the rows) of the large nodes
        (a few thousand rows or more); None = 1, -1 = every core. The tree is the same for
        any n_jobs.
    categorical_split : {"multiway", "binary"}, default="multiway"
        "multiway": ID3's split (000), one child per level present at the node; the attribute
        is used up on that path, and the attribute of the largest information gain is chosen
        (the lectures' rule). "binary": the best partition of the levels present at the node
        into two groups (exact for two classes and for regression, Breiman et al. 1984; with
        more classes the best of one scan per class, each class's levels ordered by their
        proportion of it); the attribute can be tested again deeper, and many-level columns
        do not fragment the data. Missing values and levels not present at the node go to the
        larger group. In binary mode (on data with a categorical column) each attribute's
        split is still the one of largest gain, but the attribute is chosen by the
        significance of that split (CHAID's rule, Kass 1980; Loh & Shih 1997): the smallest
        log p-value of Pearson's chi-square test of its 2 x classes table (regression: the
        likelihood-ratio test of the variance reduction), plus log(2^(P-1) - 1) for a
        categorical attribute with P levels at the node, the Bonferroni adjustment for the
        partitions searched. The largest gain would favour many-level attributes whose best
        partition fits noise by chance. With sample weights the table holds weighted counts,
        read as frequencies (scaling every weight scales the statistic). See the tree user
        guide.
    splitter : {"best", "hist"}, default="best"
        "best": the lectures' exact sweep over every sorted value. "hist": the same search
        over binned values (fastml/tree/_hist_fast.pyx), several times faster on large data;
        on columns of at most `max_bins` distinct values it grows the identical tree.
    max_bins : int in [2, 255], default=255
        splitter="hist": bins of a real column (quantiles when it has more distinct values;
        missing values get a bin of their own). Categorical columns keep their level codes
        (at most 255 levels).
    min_weight_fraction_leaf : float in [0, 0.5], default=0.0
        Every child of a split holds at least this fraction of the total sample weight (of
        the rows without sample weights), as in scikit-learn.
    class_weight : None, "balanced" or dict {label: weight}, default=None
        Weights of the classes, multiplied with sample_weight: "balanced" is
        n / (n_classes * n_c) with n_c the class's summed sample weight (scikit-learn's
        formula; scikit-learn's own trees count the class's rows instead, which differs only
        when sample_weight is given). A row's weight counts in every class count, so the
        entropy, the Gini index, the chi-square pruning and the leaves' frequencies are
        weighted.

    Attributes
    ----------
    tree_ : Tree
        The fitted tree's arrays (fastml/tree/_tree_fast.pyx).
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of str (when X was a DataFrame)
    categorical_mask_ : ndarray of bool, shape (n_features_in_,)
    categories_ : list
        The levels of each categorical column (None for a real column).
    feature_importances_ : ndarray of shape (n_features_in_,)

    Examples
    --------
    >>> import numpy as np
    >>> from fastml import DecisionTreeClassifier
    >>> X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 2, dtype=float)
    >>> y = np.array([0, 1, 1, 0] * 2)  # XOR: two levels of zero-gain splits
    >>> tree = DecisionTreeClassifier().fit(X, y)
    >>> tree.predict(X[:4]).tolist(), tree.get_depth()
    ([0, 1, 1, 0], 2)

    A categorical column split into two groups of levels (``categorical_split="binary"``):

    >>> from fastml import export_text
    >>> colour = np.array([["red"], ["blue"], ["green"]] * 4, dtype=object)
    >>> binary = DecisionTreeClassifier(categorical_split="binary").fit(colour, [1, 1, 0] * 4)
    >>> print(export_text(binary, ["colour"]), end="")
    colour in {blue, red}: predict 1 (0: 0, 1: 8)
    colour = green: predict 0 (0: 4, 1: 0)
    """

    _criteria = ("entropy", "gini")

    def __init__(self, criterion: str = "entropy", max_depth: Optional[int] = None,
                 min_samples_split: int = 2, min_samples_leaf: int = 1,
                 max_leaf_nodes: Optional[int] = None, max_pchance: Optional[float] = None,
                 categorical_features: Optional[Union[str, ArrayLike]] = "auto",
                 max_features: Optional[Union[str, int, float, None]] = None,
                 random_state: RandomStateLike = None, n_jobs: Optional[int] = None,
                 categorical_split: str = "multiway", splitter: str = "best",
                 max_bins: int = 255, min_weight_fraction_leaf: float = 0.0,
                 class_weight: ClassWeightLike = None) -> None:
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_leaf_nodes = max_leaf_nodes
        self.max_pchance = max_pchance
        self.categorical_features = categorical_features
        self.max_features = max_features
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.categorical_split = categorical_split
        self.splitter = splitter
        self.max_bins = max_bins
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.class_weight = class_weight

    @all_or_nothing(fitting=True)  # a refit that fails leaves it unfitted, not half-built
    def fit(self: EstimatorT, X: MatrixLike, y: VectorLike,
            sample_weight: Optional[ArrayLike] = None) -> EstimatorT:
        """Grow the tree (then chi-square prune it, with max_pchance).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Real and categorical columns (NaN / None = missing, learned, not rejected).
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Finite weights >= 0 (None: 1 each), multiplied with class_weight. Integer
            weights grow the tree of the repeated rows; rows of weight 0 are left out.

        Returns
        -------
        self
        """
        Xe = self._encode_fit(X)
        codes = self._encode_labels(y)
        self._check_lengths(Xe, codes)
        check_param("max_pchance", self.max_pchance, low=0, high=1, allow_none=True)
        self.n_classes_ = len(self.classes_)
        weights = fit_weights(sample_weight, len(codes), self.class_weight, self.classes_,
                              codes)
        self._grow(Xe, codes.astype(np.int32), self.n_classes_, weights)
        if self.max_pchance is not None:
            self.tree_ = chi2_prune(self.tree_, self.max_pchance)
        return self

    def _proba(self, Xe):
        """The leaf class counts of each row divided by their sum (the forest's walk over
        one tree: no per-row index arrays to allocate and gather)."""
        out = np.zeros((Xe.shape[0], self.tree_.value.shape[1]))
        forest_sum([self.tree_], Xe, out, True)
        return out

    def predict_proba(self, X: MatrixLike) -> NDArray[np.float64]:
        """Class frequencies of the training rows in the leaf each sample reaches.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features_in_)
            The columns seen at fit (NaN / None = missing).

        Returns
        -------
        ndarray of shape (n_samples, n_classes_), columns in classes_ order
        """
        return self._proba(self._encode(X))

    def predict_log_proba(self, X: MatrixLike) -> NDArray[np.float64]:
        """The log of predict_proba (-inf for a class absent from the leaf).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features_in_)
            The columns seen at fit (NaN / None = missing).

        Returns
        -------
        ndarray of shape (n_samples, n_classes_)
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X: MatrixLike) -> NDArray[Any]:
        """The majority class of the leaf each sample reaches (first in classes_ on ties).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features_in_)
            The columns seen at fit (NaN / None = missing).

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


class DecisionTreeRegressor(RegressorMixin, BaseDecisionTree):
    """A regression tree: the same builder with variance reduction as the criterion (000:
    "can be used for regression"); leaves predict the mean of their training targets.

    Parameters
    ----------
    criterion : {"squared_error"}, default="squared_error"
    max_depth, min_samples_split, min_samples_leaf, max_leaf_nodes, categorical_features,
    max_features, random_state, n_jobs, categorical_split, splitter, max_bins,
    min_weight_fraction_leaf
        As for DecisionTreeClassifier (binary categorical splits order the levels by their
        mean target, which is exact for the squared error) (there is no chi-square pruning).

    Attributes
    ----------
    tree_ : Tree
        The fitted tree's arrays; ``tree_.value[:, 0]`` is each node's mean target.
    n_features_in_, feature_names_in_, categorical_mask_, categories_, feature_importances_
        As for DecisionTreeClassifier.

    Examples
    --------
    >>> import numpy as np
    >>> from fastml import DecisionTreeRegressor
    >>> X = np.array([[1.0], [2.0], [3.0], [10.0], [11.0], [12.0]])
    >>> y = np.array([1.0, 1.0, 1.0, 5.0, 5.0, 5.0])
    >>> reg = DecisionTreeRegressor(max_depth=1).fit(X, y)
    >>> float(reg.tree_.threshold[0]), reg.predict([[2.5], [11.5]]).tolist()
    (6.5, [1.0, 5.0])
    """

    _criteria = ("squared_error",)

    def __init__(self, criterion: str = "squared_error", max_depth: Optional[int] = None,
                 min_samples_split: int = 2, min_samples_leaf: int = 1,
                 max_leaf_nodes: Optional[int] = None,
                 categorical_features: Optional[Union[str, ArrayLike]] = "auto",
                 max_features: Optional[Union[str, int, float, None]] = None,
                 random_state: RandomStateLike = None, n_jobs: Optional[int] = None,
                 categorical_split: str = "multiway", splitter: str = "best",
                 max_bins: int = 255, min_weight_fraction_leaf: float = 0.0) -> None:
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_leaf_nodes = max_leaf_nodes
        self.categorical_features = categorical_features
        self.max_features = max_features
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.categorical_split = categorical_split
        self.splitter = splitter
        self.max_bins = max_bins
        self.min_weight_fraction_leaf = min_weight_fraction_leaf

    @all_or_nothing(fitting=True)  # a refit that fails leaves it unfitted, not half-built
    def fit(self: EstimatorT, X: MatrixLike, y: VectorLike,
            sample_weight: Optional[ArrayLike] = None) -> EstimatorT:
        """Grow the tree by variance reduction.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Real and categorical columns (NaN / None = missing, learned, not rejected).
        y : array-like of shape (n_samples,)
            Finite numeric targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Finite weights >= 0 (None: 1 each): leaves predict the weighted mean, splits
            reduce the weighted squared error. Integer weights grow the tree of the repeated
            rows; rows of weight 0 are left out.

        Returns
        -------
        self
        """
        Xe = self._encode_fit(X)
        y = check_target(y, numeric=True)
        self._check_lengths(Xe, y)
        weights = fit_weights(sample_weight, len(y))
        y = regression_targets(y, weights)
        self._grow(Xe, np.ascontiguousarray(y), 1, weights)
        return self

    def _predict(self, Xe):
        out = np.zeros((Xe.shape[0], 1))
        forest_sum([self.tree_], Xe, out, False)
        return out[:, 0]

    def predict(self, X: MatrixLike) -> NDArray[Any]:
        """The mean training target of the leaf each sample reaches.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features_in_)
            The columns seen at fit (NaN / None = missing).

        Returns
        -------
        ndarray of float64, shape (n_samples,)
        """
        return self._predict(self._encode(X))
