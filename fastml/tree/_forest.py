"""Random forests (001: "use ensembles of different trees"): each tree is grown by the same
compiled builder on a bootstrap sample, trying `max_features` random attributes per node.

Speed: the features are sorted once for the whole forest; a tree's sorted lists are that one
order with each row repeated as often as the bootstrap drew it (no sort per tree). The builder
runs without the GIL, so `n_jobs` threads grow trees in parallel; prediction also runs the
trees in threads. Out-of-bag: each row is predicted by the trees whose sample missed it
(`oob_score=True` gives `oob_score_` and `oob_decision_function_` / `oob_prediction_`).

Sample weights (and class_weight) multiply the bootstrap counts, as scikit-learn's forests did
up to its version 1.8: a tree sees row i with weight count_i * sample_weight_i, the bootstrap
itself drawn uniformly over the rows, so it is the one the forest draws without weights.
(scikit-learn 1.9 draws the bootstrap with probabilities proportional to the weights
instead.) min_samples_leaf counts bootstrap draws, as the repeated rows of a tree's sample.
"""
from __future__ import annotations

import copy
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Optional, Union

import numpy as np

from .. import metrics
from .._base import BaseEstimator, ClassifierMixin, RegressorMixin, all_or_nothing, label_codes
from .._extras import install_hint
from .._plans import Ensemble, adopt, class_factors, weigh_rows
from .._progress import track
from .._threads import blas_limit
from .._validation import (check_n_jobs, check_param, check_random_state, check_target,
                           class_weight_factors, seed_from)
from ._classes import (DecisionTreeClassifier, DecisionTreeRegressor, EncodedInput,
                       fit_weights, min_weight_leaf, regression_targets)
from ._tree_fast import forest_sum

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from .._typing import (ArrayLike, ClassWeightLike, EstimatorT, MatrixLike, NDArray,
                           RandomStateLike, VectorLike)

__all__ = ["RandomForestClassifier", "RandomForestRegressor"]

# The most trees a forest grows: each is kept in memory (a Python object and its arrays, a few
# kB even for a stump), and the seeds are drawn up front, so a mistyped n_estimators=10**12
# must be refused at once rather than exhaust memory after an hour.
MAX_ESTIMATORS = 1_000_000


class BaseForest(EncodedInput, BaseEstimator):
    _allows_nan = True
    _fitted_attr = "estimators_"

    def _fit_forest(self, Xe, y_kernel, n_outputs, weights=None):
        """Grow the trees on the encoded X (passed, never kept: a failed fit leaves no copy
        of the data on the estimator); weights: the rows' sample weights or None."""
        check_param("n_estimators", self.n_estimators, low=1, high=MAX_ESTIMATORS, integer=True,
                    c_int=False)
        if self.oob_score and not self.bootstrap:
            raise ValueError("oob_score=True needs bootstrap=True (no row is out of bag "
                             "otherwise)")
        limits = self._limits(*Xe.shape)
        n_jobs = check_n_jobs(self.n_jobs)
        # presorted or binned once; every tree reads the same shared, read-only arrays
        grow = self._grower(Xe, n_jobs)
        rng = check_random_state(self.random_state)
        seeds = [seed_from(rng) for _ in range(self.n_estimators)]
        n = Xe.shape[0]

        def grow_one(seed):
            tree_rng = np.random.default_rng(seed)
            counts = None
            if self.bootstrap:
                counts = np.bincount(tree_rng.integers(0, n, n), minlength=n).astype(np.int32)
            tree_weights = self._tree_weights(weights, counts, y_kernel)
            tree = grow(counts, y_kernel, n_classes=n_outputs, seed=seed_from(tree_rng),
                        weights=tree_weights,
                        min_weight_leaf=min_weight_leaf(self.min_weight_fraction_leaf, counts,
                                                        tree_weights, n), **limits)
            return tree, counts

        # BLAS on one thread inside the pool's threads (the trees call none, but a pool of
        # threads each starting BLAS's own would oversubscribe the cores)
        with blas_limit(1), ThreadPoolExecutor(min(n_jobs, len(seeds))) as pool:
            grown = list(track(pool.map(grow_one, seeds), total=len(seeds),
                               desc=type(self).__name__, unit="tree", verbose=self.verbose))
        self.estimators_ = [self._wrap(tree) for tree, _ in grown]
        if self.oob_score:
            self._set_oob(Xe, [counts == 0 for _, counts in grown])
        return self

    # ---- grown part by part (fastml/_plans.py)

    def _scaled_fit(self):
        """Each part grows its share of the trees on its own rows, the bootstrap drawn
        within the part, with one shared encoding (numeric columns) and the classes of all
        parts: the forest is their union. Approximate: a tree sees one part's rows."""
        if self.oob_score:
            raise ValueError("oob_score=True is not available when the trees grow on parts "
                             "(each tree's out-of-bag rows live in other parts); fit with "
                             "oob_score=False")
        check_param("n_estimators", self.n_estimators, low=1, high=MAX_ESTIMATORS,
                    integer=True, c_int=False)
        classifier = self._estimator_type == "classifier"
        return Ensemble(needs_labels=classifier, classes=classifier,
                        start=_parts_start, deal=_parts_deal, grow=_parts_grow,
                        finish=_parts_finish, why_not_sequential=(
                            "each tree's split search needs all rows at once; fit it in "
                            "memory (on a sample if need be), or pass a dask array / "
                            f"DataFrame to fit to grow the trees on workers "
                            f"({install_hint('dask')})"))

    def _tree_weights(self, weights, counts, y_kernel):
        """A tree's sample weights (which its bootstrap counts multiply): the forest's; the
        classifier's class_weight="balanced_subsample" makes them per tree."""
        return weights

    def _fit_state(self, name):
        """What fit keeps for the out-of-bag score and the trees' weights while it runs
        (_state, dropped after the fit), or None outside a fit (a Dask driver's)."""
        return getattr(self, "_state", {}).get(name)

    def _wrap(self, tree):
        """A fitted single-tree estimator around a grown tree (to inspect or export it)."""
        est = self._tree_class(**{k: getattr(self, k) for k in self._tree_params})
        for name in ("n_features_in_", "categorical_mask_", "categories_", "_encoder",
                     "feature_names_in_", "classes_", "n_classes_"):
            if hasattr(self, name):
                setattr(est, name, getattr(self, name))
        est.tree_ = tree
        return est

    def _tree_sum(self, Xe, n_values, normalize):
        """The sum over the trees of each row's leaf values (class frequencies when
        `normalize`), in one compiled walk over all trees (threads split the rows)."""
        out = np.zeros((Xe.shape[0], n_values))
        forest_sum([est.tree_ for est in self.estimators_], Xe, out, normalize,
                   check_n_jobs(self.n_jobs))
        return out

    @property
    def feature_importances_(self):
        """Mean over the trees that gained information of their total-information-gain
        importances, normalised to sum to 1 (all zeros when no tree gained any), as
        scikit-learn's forests: a single-leaf tree (e.g. a bootstrap sample of one class), or
        one whose splits all gained 0 (XOR at max_depth=1), has all-zero importances, and
        counting them made the sum fall below 1."""
        self._check_is_fitted("estimators_")
        per_tree = [est.feature_importances_ for est in self.estimators_]
        gained = [imp for imp in per_tree if imp.sum() > 0]
        if not gained:
            return np.zeros(self.n_features_in_)
        mean = np.mean(gained, axis=0)
        return mean / mean.sum()

    def apply(self, X: MatrixLike) -> NDArray[np.intp]:
        """The leaf each sample reaches in each tree.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features_in_)
            The columns seen at fit (NaN / None = missing).

        Returns
        -------
        ndarray of int64, shape (n_samples, n_estimators)
        """
        self._check_is_fitted("estimators_")
        Xe = self._encode(X)
        return np.column_stack([est.tree_.apply(Xe)[0] for est in self.estimators_])


def _parts_start(estimator, labels, schema):
    """The forest every part grows its trees with: the columns as numbers (one encoding
    for all parts), the classes of all parts."""
    template = type(estimator)(**estimator.get_params(deep=False))
    template._encode_fit(np.zeros((1, schema.n_features)))
    template.estimators_ = []      # the builder's "fitted" mark, so _encode accepts rows
    if labels is not None:
        template._encode_labels(labels.classes)
        template.n_classes_ = len(template.classes_)
        template._state = _parts_class_weights(estimator, labels)
    return template


def _class_weighing(forest):
    """(per tree?, the class_weight for the whole data): "balanced_subsample" balances each
    tree's bootstrap sample; without a bootstrap the sample is the data, and it is
    "balanced" (as in scikit-learn)."""
    subsample = forest.class_weight == "balanced_subsample" and forest.bootstrap
    class_weight = "balanced" if forest.class_weight == "balanced_subsample" else \
        forest.class_weight
    return subsample, class_weight


def _parts_class_weights(estimator, labels):
    """How the parts weigh classes, as fit does: "balanced" (and a dict) by the class totals
    of ALL the parts (the label pass's), "balanced_subsample" by each tree's own sample."""
    subsample, class_weight = _class_weighing(estimator)
    return dict(subsample=subsample,
                factors=None if subsample else class_factors(class_weight, labels))


def _parts_deal(template, sizes):
    """(trees, seed) per part: the trees in proportion to the parts' sizes (their total
    sample weights; largest remainders), one seed each from the forest's random_state."""
    sizes = np.asarray(sizes, dtype=float)
    exact = template.n_estimators * sizes / sizes.sum()
    shares = np.floor(exact).astype(int)
    for i in np.argsort(-(exact - shares))[:template.n_estimators - shares.sum()]:
        shares[i] += 1
    rng = check_random_state(template.random_state)
    return [(int(share), seed_from(rng)) for share in shares]


def _parts_grow(X, y, w, template, count, seed):
    """`count` trees on a part's rows, by the forest's own builder, the rows weighted as fit
    weighs them (sample weights times the class weights)."""
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("a forest grown on parts takes numeric columns only (the parts must "
                        "share one encoding); encode the text / categorical columns as "
                        "numbers first") from None
    forest = copy.deepcopy(template)
    forest.n_estimators, forest.random_state = count, seed
    Xe = forest._encode(X)
    weights = None if w is None else fit_weights(w, len(y))
    if hasattr(template, "classes_"):
        state = template._state
        if state["factors"] is not None:
            weights = weigh_rows(state["factors"], forest.classes_, y, weights)
        elif state["subsample"] and weights is None:
            weights = np.ones(len(y))
        forest._fit_forest(Xe, label_codes(forest.classes_, y).astype(np.int32),
                           forest.n_classes_, weights)
    else:
        forest._fit_forest(Xe, np.ascontiguousarray(regression_targets(y)), 1, weights)
    return forest.estimators_


def _parts_finish(estimator, template, members, schema):
    template.__dict__.pop("_state", None)
    template.estimators_ = members
    adopt(estimator, template)


_FOREST_DOC = """

    Parameters
    ----------
    n_estimators : int, default=100
        Number of trees (at most MAX_ESTIMATORS = 1,000,000).
    criterion : str
        The split criterion, as for the single tree ("entropy" or "gini" for the classifier,
        "squared_error" for the regressor).
    max_depth : int or None, default=None
        As for the single tree.
    min_samples_split : int, default=2
        As for the single tree.
    min_samples_leaf : int, default=1
        As for the single tree.
    max_leaf_nodes : int or None, default=None
        As for the single tree.
    categorical_features : "auto", "all", None, or list of names / indices, or bool mask
        As for the single tree (default "auto").
    categorical_split : {"multiway", "binary"}, default="multiway"
        As for the single tree.
    max_features : None, "sqrt", "log2", int or float in (0, 1]
        Features tried per node ("sqrt" by default for classification, 1.0 = all for
        regression, as in scikit-learn).
    bootstrap : bool, default=True
        Grow each tree on a bootstrap sample of the rows.
    oob_score : bool, default=False
        Score each row with the trees that did not see it (needs bootstrap).
    n_jobs : int or None, default=None
        Threads that grow (and predict with) the trees; None = 1, -1 = all cores. The forest
        is the same for any n_jobs.
    random_state : int, Generator or None, default=None
        Seed of the bootstrap samples and the feature draws.
    splitter : {"best", "hist"}, default="best"
        As for the single tree; with "hist" the columns are binned once and the trees share
        the binned matrix (a bootstrap sample is row weights, never a copy).
    max_bins : int in [2, 255], default=255
        As for the single tree (splitter="hist").
    min_weight_fraction_leaf : float in [0, 0.5], default=0.0
        As for the single tree: the fraction of each tree's total weight (its bootstrap
        counts times the sample weights) a leaf must hold.
    verbose : int, default=0
        1 = a progress bar over the trees as they finish (tqdm if installed), 2 = a line per
        tree, 0 = silent.

    Attributes
    ----------
    estimators_ : list of single-tree estimators
        Fitted trees that share the forest's column encoding (inspect or export any one).
    n_features_in_ : int
        As for the single tree.
    feature_names_in_ : ndarray of str
        As for the single tree (when X was a DataFrame).
    categorical_mask_ : ndarray of bool of shape (n_features_in_,)
        As for the single tree.
    categories_ : list
        As for the single tree.
    feature_importances_ : ndarray of shape (n_features_in_,)
        Mean over the trees of their information-gain importances.
    oob_score_ : float
        Out-of-bag accuracy (classifier) or R^2 (regressor), with oob_score=True; weighted
        by the fit's sample_weight.
"""

_FOREST_NOTES = """
    Notes
    -----
    Sample weights multiply each tree's bootstrap counts, as scikit-learn's forests did up to
    version 1.8 (1.9 draws the bootstrap in proportion to the weights): the bootstrap is the
    one drawn without weights, so a weighted forest is not the forest of repeated rows (its
    trees are, with ``bootstrap=False``). min_samples_leaf counts bootstrap draws.
"""


class RandomForestClassifier(ClassifierMixin, BaseForest):
    __doc__ = "A random forest of information-gain trees (001)." + _FOREST_DOC + """
    classes_ : ndarray of shape (n_classes,)
    oob_decision_function_ : ndarray of shape (n_samples, n_classes)
        Out-of-bag class frequencies (NaN for a row every tree saw).
""" + _FOREST_NOTES + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastml import RandomForestClassifier
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]] * 5)
    >>> y = (X[:, 0] >= 3).astype(int)
    >>> forest = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    >>> forest.predict([[0.5], [4.5]]).tolist()
    [0, 1]
    """
    _tree_class = DecisionTreeClassifier
    _tree_params = ("criterion", "max_depth", "min_samples_split", "min_samples_leaf",
                    "max_leaf_nodes", "categorical_features", "max_features",
                    "categorical_split", "splitter", "max_bins", "min_weight_fraction_leaf")
    _criteria = DecisionTreeClassifier._criteria

    def __init__(self, n_estimators: int = 100, criterion: str = "entropy",
                 max_depth: Optional[int] = None, min_samples_split: int = 2,
                 min_samples_leaf: int = 1, max_leaf_nodes: Optional[int] = None,
                 max_features: Union[str, int, float, None] = "sqrt", bootstrap: bool = True,
                 oob_score: bool = False, n_jobs: Optional[int] = None,
                 categorical_features: Optional[Union[str, ArrayLike]] = "auto",
                 random_state: RandomStateLike = None, verbose: int = 0,
                 categorical_split: str = "multiway", splitter: str = "best",
                 max_bins: int = 255, min_weight_fraction_leaf: float = 0.0,
                 class_weight: Union[ClassWeightLike, str] = None) -> None:
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_leaf_nodes = max_leaf_nodes
        self.max_features = max_features
        self.bootstrap = bootstrap
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.verbose = verbose
        self.categorical_split = categorical_split
        self.splitter = splitter
        self.max_bins = max_bins
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.class_weight = class_weight

    @all_or_nothing(fitting=True)  # a refit that fails leaves it unfitted, not half-built
    def fit(self: EstimatorT, X: MatrixLike, y: VectorLike,
            sample_weight: Optional[ArrayLike] = None) -> EstimatorT:
        """Grow the trees, each on its bootstrap sample.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Real and categorical columns (NaN / None = missing, learned, not rejected).
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Finite weights >= 0 (None: 1 each), multiplied with class_weight and with each
            tree's bootstrap counts (see Notes).

        Returns
        -------
        self
        """
        Xe = self._encode_fit(X)
        codes = self._encode_labels(y)
        self._check_lengths(Xe, codes)
        self.n_classes_ = len(self.classes_)
        subsample, class_weight = _class_weighing(self)
        weights = fit_weights(sample_weight, len(codes), None if subsample else class_weight,
                              self.classes_, codes)
        if subsample and weights is None:
            weights = np.ones(len(codes))
        self._state = dict(codes=codes, subsample=subsample,
                           sample_weight=fit_weights(sample_weight, len(codes)))
        try:
            return self._fit_forest(Xe, codes.astype(np.int32), self.n_classes_, weights)
        finally:
            del self._state

    def _tree_weights(self, weights, counts, y_kernel):
        """With class_weight="balanced_subsample", the sample weights times the balanced
        class weights of the tree's own sample (class totals of counts x sample weights, as
        "balanced" weighs its counts)."""
        if not self._fit_state("subsample"):
            return weights
        drawn = weights if counts is None else counts * weights
        totals = np.bincount(y_kernel, weights=drawn, minlength=self.n_classes_)
        return weights * class_weight_factors("balanced", self.classes_, totals)[y_kernel]

    def _set_oob(self, Xe, oob_masks):
        total = np.zeros((Xe.shape[0], self.n_classes_))
        for est, mask in zip(self.estimators_, oob_masks):
            if mask.any():
                total[mask] += est._proba(Xe[mask])
        seen = total.sum(axis=1) > 0
        with np.errstate(invalid="ignore"):
            self.oob_decision_function_ = total / total.sum(axis=1, keepdims=True)
        w = self._fit_state("sample_weight")
        self.oob_score_ = metrics.accuracy_score(
            self._fit_state("codes")[seen], np.argmax(total[seen], axis=1),
            sample_weight=None if w is None else w[seen])

    def predict_proba(self, X: MatrixLike) -> NDArray[np.float64]:
        """Mean over the trees of their leaf class frequencies.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features_in_)
            The columns seen at fit (NaN / None = missing).

        Returns
        -------
        ndarray of shape (n_samples, n_classes_), columns in classes_ order
        """
        Xe = self._encode(X)
        return self._tree_sum(Xe, self.n_classes_, True) / len(self.estimators_)

    def predict(self, X: MatrixLike) -> NDArray[Any]:
        """The class of largest mean probability over the trees.

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


class RandomForestRegressor(RegressorMixin, BaseForest):
    __doc__ = "A random forest of variance-reduction trees." + _FOREST_DOC + """
    oob_prediction_ : ndarray of shape (n_samples,)
        Out-of-bag mean prediction (NaN for a row every tree saw).
""" + _FOREST_NOTES + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastml import RandomForestRegressor
    >>> X = np.arange(20.0)[:, None]
    >>> y = np.where(X[:, 0] < 10, 1.0, 3.0)
    >>> forest = RandomForestRegressor(n_estimators=10, random_state=0).fit(X, y)
    >>> forest.predict([[2.0], [17.0]]).round(1).tolist()
    [1.0, 3.0]
    """
    _tree_class = DecisionTreeRegressor
    _tree_params = RandomForestClassifier._tree_params
    _criteria = DecisionTreeRegressor._criteria

    def __init__(self, n_estimators: int = 100, criterion: str = "squared_error",
                 max_depth: Optional[int] = None, min_samples_split: int = 2,
                 min_samples_leaf: int = 1, max_leaf_nodes: Optional[int] = None,
                 max_features: Union[str, int, float, None] = 1.0, bootstrap: bool = True,
                 oob_score: bool = False, n_jobs: Optional[int] = None,
                 categorical_features: Optional[Union[str, ArrayLike]] = "auto",
                 random_state: RandomStateLike = None, verbose: int = 0,
                 categorical_split: str = "multiway", splitter: str = "best",
                 max_bins: int = 255, min_weight_fraction_leaf: float = 0.0) -> None:
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_leaf_nodes = max_leaf_nodes
        self.max_features = max_features
        self.bootstrap = bootstrap
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.verbose = verbose
        self.categorical_split = categorical_split
        self.splitter = splitter
        self.max_bins = max_bins
        self.min_weight_fraction_leaf = min_weight_fraction_leaf

    @all_or_nothing(fitting=True)  # a refit that fails leaves it unfitted, not half-built
    def fit(self: EstimatorT, X: MatrixLike, y: VectorLike,
            sample_weight: Optional[ArrayLike] = None) -> EstimatorT:
        """Grow the trees, each on its bootstrap sample.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Real and categorical columns (NaN / None = missing, learned, not rejected).
        y : array-like of shape (n_samples,)
            Finite numeric targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Finite weights >= 0 (None: 1 each), multiplied with each tree's bootstrap
            counts (see Notes).

        Returns
        -------
        self
        """
        Xe = self._encode_fit(X)
        y = check_target(y, numeric=True)
        self._check_lengths(Xe, y)
        weights = fit_weights(sample_weight, len(y))
        y = np.ascontiguousarray(regression_targets(y, weights))
        self._state = dict(y=y, sample_weight=weights)
        try:
            return self._fit_forest(Xe, y, 1, weights)
        finally:
            del self._state

    def _set_oob(self, Xe, oob_masks):
        total, hits = np.zeros(Xe.shape[0]), np.zeros(Xe.shape[0])
        for est, mask in zip(self.estimators_, oob_masks):
            if mask.any():
                total[mask] += est._predict(Xe[mask])
                hits[mask] += 1
        seen = hits > 0
        with np.errstate(invalid="ignore"):
            self.oob_prediction_ = total / hits
        w = self._fit_state("sample_weight")
        self.oob_score_ = metrics.r2_score(self._fit_state("y")[seen], self.oob_prediction_[seen],
                                           sample_weight=None if w is None else w[seen])

    def predict(self, X: MatrixLike) -> NDArray[Any]:
        """Mean over the trees of their leaf means.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features_in_)
            The columns seen at fit (NaN / None = missing).

        Returns
        -------
        ndarray of float64, shape (n_samples,)
        """
        Xe = self._encode(X)
        return self._tree_sum(Xe, 1, False)[:, 0] / len(self.estimators_)
