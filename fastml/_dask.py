"""Dask input: `fit` on dask arrays / DataFrames runs the distributed form of each algorithm,
and predict / predict_proba / decision_function / transform return lazy dask collections.

Drivers over the same kernels, never new maths (DESIGN.md, "Scaling out"):
- exact (equal to `fit` on the concatenated partitions):
  naive Bayes: each partition's counts and moments (`partial_fit` with the classes it
  holds), merged pairwise on the workers over the union of the labels (counts add; moments
  by Chan's formula; category vocabularies grown to their union first), one graph;
  LinearRegression / Ridge / PolynomialRegression (normal): `LinearStats` per partition,
  tree-summed on the workers, one solve;
  LogisticRegression gd / lbfgs: the partitions are persisted once on the workers as
  validated (X, codes, weights); each objective evaluation submits one task per partition
  carrying the current weights (a few KB) and returning (loss, gradient), summed on the
  client.
- approximate (documented): forests: each partition grows its share of the trees on its own
  rows (bootstrap within the partition; numeric columns); the SGD family by iterative
  parameter mixing: each epoch, every
  partition runs one local epoch of `partial_fit` from the current state (its own seed from
  random_state, epoch and partition), then the states are averaged weighted by rows. The
  result is deterministic for a fixed random_state and partitioning; it is not the
  single-machine SGD path.
- a single decision tree, the kernel perceptron and the voted perceptron: a clear error
  naming the alternatives.
A lost worker is Dask's business: its tasks are retried on another worker (the same inputs
give the same model), and a task that fails for good raises; no partial model is returned.

With a dask.distributed Client the work runs on its cluster; without one, on dask's local
scheduler. dask is imported only when a dask collection is met.
"""
import functools
import warnings

import numpy as np

ROUTED = ("fit", "predict", "predict_proba", "predict_log_proba", "predict_joint_log_proba",
          "decision_function", "transform")


def is_dask_collection(obj):
    """dask.is_dask_collection without importing dask (a dask collection has a graph)."""
    return hasattr(obj, "__dask_graph__") and not isinstance(obj, type)


def route_collections(cls):
    """Wrap the fit / predict methods `cls` defines so a dask collection goes to this module
    (BaseEstimator calls this for every estimator class; numpy input costs one hasattr)."""
    for name in ROUTED:
        method = cls.__dict__.get(name)
        if callable(method) and not getattr(method, "_routes_dask", False):
            setattr(cls, name, _routed(name, method))


def _routed(name, method):
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        # X as the method takes it (positional or by name; FeatureHasher.fit takes none)
        X = args[0] if args else kwargs.get("X")
        if X is not None and is_dask_collection(X):
            if name == "fit":
                return fit(self, *args, **kwargs)
            return lazy_method(self, name, *args, **kwargs)
        return method(self, *args, **kwargs)
    wrapper._routes_dask = True
    return wrapper


# ------------------------------------------------------------------------------ the data
class _Partitions:
    """The (X, y, sample_weight) partitions of the input, and how to run one function on each.
    They are persisted on the workers (or in this process without a client) the first time
    a driver maps over them; a single map_reduce runs as one graph instead, the partitions
    computed by the tasks that use them (one round trip to the scheduler, not two)."""

    def __init__(self, X, y, sample_weight):
        self.parts = _partition_triples(X, y, sample_weight)
        self.client = _client()
        self.n = len(self.parts)
        self._futures = None

    @property
    def futures(self):
        """The partitions persisted where they are computed (once)."""
        if self._futures is None:
            import dask
            self._futures = self.client.compute(self.parts) if self.client is not None \
                else list(dask.persist(*self.parts))
        return self._futures

    def map(self, func, *args, indexed=False):
        """[func(X_i, y_i, w_i, *args) for each partition i] (with indexed=True,
        func(X_i, y_i, w_i, i, *args)), computed where the data are."""
        index = list(range(self.n)) if indexed else [None] * self.n
        if self.client is not None:
            # small arguments (the weights: K x d floats) travel inside the tasks rather than
            # by scatter(broadcast=True): a lost worker's tasks are then simply rerun, where
            # a broadcast replica stalls the scheduler while it retries the dead address
            futures = self.client.map(_apply, self.futures, index, fn=func, extra=list(args),
                                      pure=False)
            return self.client.gather(futures)
        import dask
        return list(dask.compute(*[dask.delayed(_apply)(p, i, fn=func, extra=args)
                                   for p, i in zip(self.futures, index)], scheduler="sync"))

    def derive(self, func, *args):
        """New partitions func(X_i, y_i, w_i, *args) (a triple), kept on the workers."""
        if self.client is not None:
            futures = self.client.map(_apply, self.futures, [None] * self.n, fn=func,
                                      extra=list(args), pure=False)
            _raise_first_error(futures)    # validation errors surface here
        else:
            import dask
            futures = list(dask.persist(*[dask.delayed(_apply)(p, None, fn=func, extra=args)
                                          for p in self.futures]))
        derived = object.__new__(_Partitions)
        derived.client, derived.parts, derived.n = self.client, None, self.n
        derived._futures = futures
        return derived

    def map_reduce(self, func, merge, *args):
        """func on every partition, then `merge` pairwise in a tree on the workers: one graph
        (on the persisted partitions if they are, else on the partitions' own tasks)."""
        import dask
        values = [dask.delayed(_apply)(p, None, fn=func, extra=args)
                  for p in (self.parts if self._futures is None else self._futures)]
        while len(values) > 1:
            paired = [dask.delayed(_merge_or_keep)(merge, a, b)
                      for a, b in zip(values[::2], values[1::2])]
            values = paired + ([values[-1]] if len(values) % 2 else [])
        if self.client is None:
            return values[0].compute(scheduler="sync")
        return self.client.compute(values[0]).result()

    def release(self):
        if self.client is not None and self._futures is not None:
            self.client.cancel(self._futures)


def _raise_first_error(futures):
    """Wait for futures whose results stay on the workers, and raise the first task's error
    in partition order. Gathering them to see errors would copy every partition to the client
    (at 4M x 50 most of a fit's time)."""
    from distributed import wait
    wait(futures)
    for future in futures:
        if future.status in ("error", "cancelled"):
            future.result()


def _apply(part, index, fn, extra=()):
    return fn(*part, *extra) if index is None else fn(*part, index, *extra)


def _merge_or_keep(merge, a, b):
    if a is None:
        return b
    if b is None:
        return a
    return merge(a, b)


def _client():
    try:
        from distributed import get_client
        return get_client()
    except (ImportError, ValueError):
        return None


def _partition_triples(X, y, sample_weight):
    """Delayed (X_i, y_i, w_i) with rows aligned (y / weights rechunked like X)."""
    import dask
    if y is None:
        raise ValueError("y is required: fit(X, y) on dask collections")
    X_parts, lengths = _row_blocks(X, "X")
    y_parts = _aligned(y, X, lengths, "y")
    w_parts = [None] * len(X_parts) if sample_weight is None else \
        _aligned(sample_weight, X, lengths, "sample_weight")
    return [dask.delayed(tuple)([a, b, c]) for a, b, c in zip(X_parts, y_parts, w_parts)]


def _row_blocks(X, name):
    if _is_dask_frame(X):
        return list(X.to_delayed()), None
    if getattr(X, "ndim", None) != 2:
        raise ValueError(f"{name} is a {getattr(X, 'ndim', '?')}-D dask array; expected 2-D "
                         f"(n_samples, n_features)")
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    return list(X.to_delayed()[:, 0]), X.chunks[0]


def _aligned(v, X, lengths, name):
    if not is_dask_collection(v):
        raise TypeError(f"X is a dask collection but {name} is {type(v).__name__}; give "
                        f"{name} as a dask array / Series partitioned like X")
    if _is_dask_frame(v):
        if not _is_dask_frame(X) or v.npartitions != X.npartitions:
            raise ValueError(f"{name} has {v.npartitions} partitions and X "
                             f"{X.npartitions}; give both from the same DataFrame")
        return list(v.to_delayed())
    if lengths is None:
        raise TypeError(f"X is a dask DataFrame and {name} a dask array: give {name} as a "
                        f"column (Series) of the same DataFrame")
    if np.isnan(X.shape[0]) or np.isnan(v.shape[0]):
        return _blocks_of_unknown_size(v, X, name)
    if v.shape[0] != X.shape[0]:
        raise ValueError(f"X and {name} have different numbers of samples: {X.shape[0]} "
                         f"and {v.shape[0]}")
    if v.chunks[0] != lengths:
        v = v.rechunk({0: lengths})
    blocks = v.to_delayed()
    return list(blocks if blocks.ndim == 1 else blocks[:, 0])


def _blocks_of_unknown_size(v, X, name):
    """v's row blocks paired with X's as they are, when the sizes of either are unknown (a
    DataFrame's to_dask_array(): NaN sizes, which compared as "different numbers of samples:
    nan and nan"). Each partition's rows are checked against its y where it is fitted."""
    n_x, n_v = X.numblocks[0], v.numblocks[0]
    if n_x != n_v or v.ndim > 2 or (v.ndim == 2 and v.numblocks[1] > 1):
        raise ValueError(f"the row blocks of X or {name} have unknown sizes (a DataFrame's "
                         f"to_dask_array()?) and X has {n_x} of them, {name} {n_v}: give "
                         f"both from the same DataFrame, or call to_dask_array(lengths=True)")
    blocks = v.to_delayed()
    return list(blocks if blocks.ndim == 1 else blocks[:, 0])


def _is_dask_frame(obj):
    return hasattr(obj, "npartitions") and hasattr(obj, "map_partitions")


def _rows(X):
    return X.shape[0]


# ----------------------------------------------------------------------------- fit
def fit(estimator, X, y=None, sample_weight=None, **kwargs):
    """The distributed fit of `estimator` on dask X, y (see the module note)."""
    from .linear_model import (LinearRegression, LogisticRegression, PolynomialFeatures,
                               PolynomialRegression, Ridge)
    from .naive_bayes import CategoricalNB, GaussianNB, NaiveBayes
    from ._base import forget_fit
    from .stream import _has_partial_fit
    name = type(estimator).__name__
    if kwargs:
        raise TypeError(f"{name}.fit on dask input takes X, y, sample_weight; got "
                        f"{sorted(kwargs)}")
    if isinstance(estimator, PolynomialFeatures):    # it only needs the number of columns
        return _original(estimator, "fit")(np.zeros((1, _n_columns(X))))
    for kind, why in _WHY_NOT.items():
        if name.startswith(kind):
            raise TypeError(f"{name} cannot be fitted on a dask collection: {why}")
    if sample_weight is not None and not is_dask_collection(sample_weight):
        raise TypeError("X is a dask collection: give sample_weight as a dask array / Series "
                        "partitioned like X")
    if name.startswith("RandomForest"):
        driver = _fit_forest
    elif isinstance(estimator, (GaussianNB, CategoricalNB, NaiveBayes)):
        driver = _fit_naive_bayes
    elif isinstance(estimator, (LinearRegression, Ridge, PolynomialRegression)) and \
            estimator.solver == "normal":
        driver = _fit_least_squares
    elif isinstance(estimator, LogisticRegression) and estimator.solver in ("gd", "lbfgs"):
        driver = _fit_logistic_batch
    elif _has_partial_fit(estimator):
        driver = _fit_parameter_mixing
    else:
        raise TypeError(f"{name}" + (f"(solver={estimator.solver!r})"
                                     if hasattr(estimator, "solver") else "") +
                        " has no distributed form: use solver='normal' / 'lbfgs' / 'sgd', or "
                        "fit in memory on X.compute()")
    forget_fit(estimator)
    parts = _Partitions(X, y, sample_weight)
    try:
        driver(estimator, parts, X)
    finally:
        parts.release()
    _set_feature_names(estimator, X)
    return estimator


_WHY_NOT = {
    "KernelPerceptron": "its model is every mistake it made, compared with every row; fit it "
                        "in memory on a sample (X.compute()), or use Perceptron / LinearSVM, "
                        "which run on dask",
    "VotedPerceptron": "its model is the sequence of weight vectors it passed through, each "
                       "with its survival count, which parameter mixing cannot average; fit "
                       "it in memory on X.compute() (or a sample), or use "
                       "Perceptron(average=True), the averaged form of its vote (003), which "
                       "runs on dask",
    "DecisionTree": "the split search needs all rows at once; fit it in memory on "
                    "X.compute() (or a sample), or use naive Bayes / a linear model, which "
                    "run on dask",
}


def _original(estimator, name):
    """The method without the dask routing."""
    method = getattr(type(estimator), name)
    return functools.partial(getattr(method, "__wrapped__", method), estimator)


def _set_feature_names(estimator, X):
    if _is_dask_frame(X):
        names = [c for c in X.columns]
        if names and all(isinstance(c, str) for c in names):
            estimator.feature_names_in_ = np.asarray(names, dtype=object)
        estimator.n_features_in_ = len(names)
    else:
        estimator.n_features_in_ = int(X.shape[1])


def _classes_of(parts):
    from .stream import _as_labels
    found = [v for v in parts.map(_labels_of) if v is not None]
    if not found:
        raise ValueError("y has 0 samples")
    return functools.reduce(np.union1d, found)


def _labels_of(X, y, w):
    """A partition's labels, those of rows of weight 0 included: fit (and fit_stream) make
    them classes (with no weight), and the partitions' tasks encode every label against the
    classes (leaving them out failed there: "y has labels not in classes_")."""
    from .stream import _as_labels
    if _rows(X) == 0:
        return None
    return np.unique(_as_labels(y)) if len(y) else None


# --- naive Bayes: each partition's statistics with the classes it holds, merged exactly
# over the union of the labels on the workers (fastml.stream's naive Bayes pieces): one round
def _fit_naive_bayes(estimator, parts, X):
    from .stream import _nb_finish, _nb_merge, _nb_statistics, _nb_template
    _nb_finish(estimator, parts.map_reduce(_nb_statistics, _nb_merge,
                                           _nb_template(estimator)))


# --- forests: each partition grows its share of the trees (approximate)
def _fit_forest(estimator, parts, X):
    """Each partition grows a share of the n_estimators trees (in proportion to its rows) on
    its own rows, with the bootstrap drawn within the partition; the forest is their union.
    Numeric columns only: the trees share one encoding (the columns as numbers) and the
    classes found over all partitions. Approximate: a tree sees one partition's rows."""
    from ._validation import check_random_state, seed_from
    from .stream import _adopt, _is_classifier
    if getattr(estimator, "oob_score", False):
        raise ValueError("oob_score=True is not available on dask input (each tree's out-of-"
                         "bag rows live in another partition); fit with oob_score=False")
    if _is_dask_frame(X) and any(not np.issubdtype(t, np.number) for t in X.dtypes):
        raise TypeError("a forest on a dask DataFrame takes numeric columns only (the "
                        "partitions must share one encoding); encode the text columns first")
    template = type(estimator)(**estimator.get_params(deep=False))
    template._encode_fit(np.zeros((1, _n_columns(X))))
    template.estimators_ = []      # the builder's "fitted" mark, so _encode accepts rows
    if _is_classifier(estimator):
        template.classes_ = _classes_of(parts)
        template.n_classes_ = len(template.classes_)
    rows = np.array(parts.map(_row_count), dtype=float)
    if rows.sum() == 0:
        raise ValueError("X has 0 samples")
    shares = _apportion(estimator.n_estimators, rows)
    rng = check_random_state(estimator.random_state)
    seeds = [seed_from(rng) for _ in range(parts.n)]
    grown = parts.map(_grow_share, template, shares, seeds, indexed=True)
    template.estimators_ = [tree for trees in grown for tree in trees]
    _adopt(estimator, template)


def _row_count(X, y, w):
    return _rows(X)


def _apportion(total, rows):
    """Integers proportional to rows summing to total (largest remainders)."""
    exact = total * rows / rows.sum()
    share = np.floor(exact).astype(int)
    for i in np.argsort(-(exact - share))[:total - share.sum()]:
        share[i] += 1
    return share.tolist()


def _grow_share(X, y, w, part, template, shares, seeds):
    """Grow this partition's trees with the forest's own builder (adapter onto
    BaseForest._fit_forest, fed the shared encoding and class codes)."""
    import copy
    from types import SimpleNamespace
    from ._base import ClassifierMixin
    from ._validation import check_target
    if shares[part] == 0 or _rows(X) == 0:
        return []
    if w is not None:
        raise TypeError("forests take no sample_weight")
    forest = copy.deepcopy(template)
    forest.n_estimators, forest.random_state = shares[part], seeds[part]
    Xe = forest._encode(np.asarray(X, dtype=np.float64))
    if hasattr(template, "classes_"):
        codes = ClassifierMixin._encode_known_labels(SimpleNamespace(classes_=forest.classes_),
                                                     y).astype(np.int32)
        forest._fit_forest(Xe, codes, forest.n_classes_)
    else:
        forest._fit_forest(Xe, np.ascontiguousarray(check_target(y, numeric=True),
                                                    dtype=np.float64), 1)
    return forest.estimators_


# --- least squares: statistics tree-summed
def _fit_least_squares(estimator, parts, X):
    from .linear_model import PolynomialRegression
    from .stream import _finish_polynomial
    n_features = _n_columns(X)
    features = None
    if isinstance(estimator, PolynomialRegression):
        from .linear_model import PolynomialFeatures
        features = PolynomialFeatures(estimator.degree,
                                      interaction_only=estimator.interaction_only,
                                      include_bias=False).fit(np.zeros((1, n_features)))
    stats = parts.map_reduce(_stats_partition, _merge_stats, features)
    if stats is None:
        raise ValueError("X has 0 samples")
    if features is not None:
        _finish_polynomial(estimator, features, stats)
    else:
        estimator.fit_stats(stats, reset=True)


def _stats_partition(X, y, w, features):
    from ._validation import check_sample_weight, check_X_y
    from .linear_model import LinearStats
    if _rows(X) == 0:
        return None
    X, y = check_X_y(X, y, multi_output=True)
    if features is not None:
        X = np.ascontiguousarray(features.transform(X))
    sw = None if w is None else check_sample_weight(np.asarray(w), X.shape[0])
    return LinearStats.from_data(X, y.reshape(X.shape[0], -1), sw)


def _merge_stats(a, b):
    return a.merge(b)


def _n_columns(X):
    return len(X.columns) if _is_dask_frame(X) else int(X.shape[1])


# --- logistic regression gd / lbfgs: one task per partition per evaluation
def _fit_logistic_batch(estimator, parts, X):
    from .linear_model._base import OutputLayout
    estimator._check_params()
    estimator._encode_labels(_classes_of(parts))
    layout = OutputLayout(len(estimator.classes_), estimator.multi_class)
    prepared = parts.derive(_validated_logistic, estimator.classes_, layout)
    try:
        dtypes = {d for d in prepared.map(_dtype_of) if d is not None}
        objective = _DaskLogisticObjective(estimator, prepared, layout, _n_columns(X),
                                           np.float32 if dtypes == {"float32"} else np.float64)
        from .stream import _solve_logistic
        _solve_logistic(estimator, objective)
    finally:
        prepared.release()


def _dtype_of(X, codes, sw):
    return None if X is None else str(X.dtype)


def _validated_logistic(X, y, w, classes, layout):
    """A partition as the batch kernel takes it: (X, kernel codes, weights), validated once;
    (None, None, None) when empty."""
    if _rows(X) == 0:
        return None, None, None
    from types import SimpleNamespace
    from ._base import ClassifierMixin
    from ._validation import check_sample_weight, check_X_y
    X, y = check_X_y(X, y, accept_sparse=True)
    codes = layout.codes(ClassifierMixin._encode_known_labels(SimpleNamespace(classes_=classes),
                                                              y))
    sw = np.ones(X.shape[0]) if w is None else check_sample_weight(np.asarray(w), X.shape[0])
    return X, codes, sw


def _logistic_loss_grad(X, codes, sw, x, layout, template):
    from .stream import _chunk_loss_grad
    if X is None:
        return 0.0, np.zeros(len(x)), 0.0
    return _chunk_loss_grad(template, X, codes, sw, layout, x)


def _logistic_norms(X, codes, sw):
    """A partition's sum_i sw_i ||x_i||^2 and sum_i sw_i (LogisticRegression's step bound)."""
    from .linear_model._logistic import squared_row_norms
    if X is None:
        return None
    return float(np.dot(sw, squared_row_norms(X))), float(sw.sum())


class _DaskLogisticObjective:
    """LogisticRegression's objective over the persisted partitions: each call runs one task
    per partition with x as its argument; the sums come back to the client."""

    def __init__(self, estimator, parts, layout, n_features, dtype):
        self.estimator, self.parts, self.layout = estimator, parts, layout
        self.alpha, self.fit_intercept = float(estimator.alpha), bool(estimator.fit_intercept)
        self.K, self.d, self.dtype = layout.n_outputs, n_features, dtype
        # what the per-partition kernel call reads from the estimator, without its state
        self.template = type(estimator)(**estimator.get_params(deep=False))
        self.size = self.K * self.d + (self.K if self.fit_intercept else 0)

    def unpack(self, x):
        W = np.ascontiguousarray(x[:self.K * self.d].reshape(self.K, self.d), dtype=self.dtype)
        b = x[self.K * self.d:] if self.fit_intercept else np.zeros(self.K)
        return W, np.ascontiguousarray(b, dtype=self.dtype)

    def __call__(self, x):
        from .stream import _regularized
        results = self.parts.map(_logistic_loss_grad, np.asarray(x, dtype=np.float64),
                                 self.layout, self.template)
        loss = sum(r[0] for r in results)
        grad = np.sum([r[1] for r in results], axis=0)
        weight = sum(r[2] for r in results)
        return _regularized(loss, grad, weight, x, self.alpha, self.K * self.d)

    def lipschitz(self, _X=None):
        from .linear_model._logistic import step_bound
        sums = [r for r in self.parts.map(_logistic_norms) if r is not None]
        return step_bound(sum(t for t, _ in sums), sum(w for _, w in sums),
                          self.fit_intercept, self.layout.n_classes, self.alpha)


# --- the SGD family: iterative parameter mixing
def _fit_parameter_mixing(estimator, parts, X):
    """Each epoch: every partition runs one local epoch of partial_fit from the current state
    (seeded by random_state, epoch and partition), then the states are averaged with the
    partitions' row weights. Stops after max_iter epochs, or earlier when the mean epoch loss
    has not improved by tol for n_iter_no_change epochs."""
    from ._validation import check_random_state
    from .stream import _adopt, _is_classifier, _pass_totals
    classes = _classes_of(parts) if _is_classifier(estimator) else None
    # one pass's rows and weight: every partition's partial_fit steps with them as the totals
    # (SGDEngine.relative_weights), as fit does; its own partition's running sums made
    # Ridge's per-row penalty alpha / weight grow with the number of partitions and fall
    # with the epochs
    totals = [t for t in parts.map(_row_weight) if t is not None]
    if not totals:      # (np.sum of no totals is a scalar, which failed to unpack)
        raise ValueError("X has 0 samples")
    totals = (sum(rows for rows, _ in totals), sum(weight for _, weight in totals))
    seed = int(check_random_state(estimator.random_state).integers(2**31 - 1))
    tol, patience = getattr(estimator, "tol", None), getattr(estimator, "n_iter_no_change", 5)
    watch_progressive = getattr(estimator, "early_stopping", False) == "progressive"
    state, curve, progressive, best, stale = None, [], [], np.inf, 0
    for epoch in range(estimator.max_iter):
        local = [r for r in parts.map(_local_epoch, estimator, state, classes, seed, epoch,
                                      totals, indexed=True) if r is not None]
        if not local:
            raise ValueError("X has 0 samples")
        state = _mix([r[0] for r in local], np.array([r[2] for r in local]), state)
        weights = [r[2] for r in local]
        curve.append(float(np.average([r[1] for r in local], weights=weights)))
        progressive.append(float(np.average([r[3] for r in local], weights=weights)))
        if tol:
            watched = progressive[-1] if watch_progressive else curve[-1]
            stale = stale + 1 if watched > best - tol else 0
            best = min(best, watched)
            if stale >= patience:
                break
    _adopt(estimator, state)
    _pass_totals(estimator, None)
    _finish_mixing(estimator, len(curve), curve, progressive)


def _row_weight(X, y, w):
    """A partition's rows and their total weight (None when empty)."""
    from .stream import rows_weight
    if _rows(X) == 0:
        return None
    return _rows(X), rows_weight(_rows(X), w)


def _local_epoch(X, y, w, part, template, state, classes, seed, epoch, totals):
    """One epoch of partial_fit on a partition from `state` (None: from scratch); returns
    (the model, its mean loss, the partition's weight, its progressive loss)."""
    import copy
    from ._base import clone
    from .stream import _pass_totals, _set_sgd_epoch
    if _rows(X) == 0:
        return None
    model = clone(template) if state is None else copy.deepcopy(state)
    if state is None:
        model.set_params(random_state=np.random.default_rng([seed, epoch, part]))
    else:
        model._rng = np.random.default_rng([seed, epoch, part])
    _set_sgd_epoch(model, epoch)
    _pass_totals(model, totals)
    kwargs = {} if classes is None else {"classes": classes}
    if w is not None:
        kwargs["sample_weight"] = np.asarray(w)
    model.partial_fit(X, y, **kwargs)
    weight = float(_rows(X) if w is None else np.sum(w))
    progressive = getattr(model, "progressive_loss_", model.loss_curve_)
    return model, float(model.loss_curve_[-1]), weight, float(progressive[-1])


def _mix(models, weights, start):
    """The models' SGD states mixed into the first's (fastml.linear_model._sgd.mix_into: the
    row-weighted average, the one definition); the update counter becomes `start`'s (the
    model every one of them began this epoch from; None: from scratch) plus the updates each
    made, so n_mistakes_ counts every update once."""
    from .linear_model._sgd import mix_into
    first = models[0]
    engines = [m._engine for m in models]
    before = 0 if start is None else start._engine.n_updates
    updates = before + sum(e.n_updates - before for e in engines)
    mix_into(first._engine, engines, weights)
    first._engine.n_updates = int(updates)
    first.coef_, first.intercept_ = first._engine.coef(), first._engine.intercept()
    return first


def _finish_mixing(estimator, n_epochs, curve, progressive):
    from .stream import _finish_sgd
    _finish_sgd(estimator, n_epochs, curve, progressive)
    if hasattr(estimator, "_single_target") and np.ndim(estimator.coef_) == 2 and \
            estimator._single_target:
        estimator.coef_, estimator.intercept_ = estimator.coef_[0], estimator.intercept_[0]


# ----------------------------------------------------------------------------- predict
def lazy_method(estimator, name, X, *args, **kwargs):
    """estimator.<name> applied block by block: a lazy dask array for a dask array, a dask
    Series / DataFrame for a dask DataFrame (never collecting X)."""
    method = _original(estimator, name)
    sample = _sample_output(method, X, args, kwargs)
    if _is_dask_frame(X):
        return _map_partitions(method, X, sample, args, kwargs)
    if getattr(X, "ndim", 2) != 2:
        raise ValueError(f"X is a {X.ndim}-D dask array; expected 2-D (n_samples, n_features)")
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    block = functools.partial(_call_block, method, sample, args=args, kwargs=kwargs)
    if sample.ndim == 1:
        return X.map_blocks(block, dtype=sample.dtype, drop_axis=1,
                            meta=np.empty((0,), dtype=sample.dtype))
    return X.map_blocks(block, dtype=sample.dtype, chunks=(X.chunks[0], (sample.shape[1],)),
                        meta=np.empty((0, 0), dtype=sample.dtype))


def _call_block(method, sample, block, args=(), kwargs=None):
    if block.shape[0] == 0:
        return np.empty((0,) + sample.shape[1:], dtype=sample.dtype)
    return method(block, *args, **(kwargs or {}))


def _sample_output(method, X, args, kwargs):
    """The method's output on a fake row (dtype and width, for the lazy result's meta)."""
    if _is_dask_frame(X):
        row = X._meta_nonempty.iloc[:1]
    else:
        row = np.zeros((1, X.shape[1]), dtype=X.dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = np.asarray(method(row, *args, **kwargs))
    return out


def _map_partitions(method, X, sample, args, kwargs):
    import pandas as pd

    def on_frame(frame):
        if len(frame) == 0:
            out = np.empty((0,) + sample.shape[1:], dtype=sample.dtype)
        else:
            out = np.asarray(method(frame, *args, **kwargs))
        if out.ndim == 1:
            return pd.Series(out, index=frame.index)
        return pd.DataFrame(out, index=frame.index)

    if sample.ndim == 1:
        meta = pd.Series(np.empty(0, dtype=sample.dtype))
    else:
        meta = pd.DataFrame(np.empty((0, sample.shape[1]), dtype=sample.dtype))
    return X.map_partitions(on_frame, meta=meta)


# ------------------------------------------------------------------ information gain tables
def information_gain_table(X, y, *, feature_names=None, categorical_features="auto"):
    """fastml.info.information_gain_table on dask X, y by count reductions: each partition
    counts (value, class) pairs per column, the counts are summed, and the lectures' IG
    (categorical) and IG* sweep over sorted distinct values (real) run on the sums; equal to
    the in-memory table."""
    from collections import Counter
    from ._tabular import TabularEncoder
    from .info import InformationGainTable
    meta = X._meta_nonempty.iloc[:2] if _is_dask_frame(X) else np.zeros((2, X.shape[1]),
                                                                        dtype=X.dtype)
    encoder = TabularEncoder(categorical_features=categorical_features).fit(meta)
    parts = _Partitions(X, y, None)
    try:
        counted = [c for c in parts.map(_pair_counts) if c is not None]
    finally:
        parts.release()
    if not counted:
        raise ValueError("y is empty")
    n_records = sum(n for n, _ in counted)
    columns = [sum((c[j] for _, c in counted), Counter()) for j in range(len(counted[0][1]))]
    classes = np.unique(np.asarray(list(columns[-1])))      # the labels' Counter
    names = feature_names if feature_names is not None else encoder.feature_names_
    rows = [_ig_row(str(name), counts, classes, encoder.categorical_mask_[j])
            for j, (name, counts) in enumerate(zip(names, columns[:-1]))]
    return InformationGainTable(classes, rows, n_records)


def _pair_counts(X, y, w):
    """(rows, [Counter of (value, label) per column without missing values] + [Counter of
    labels])."""
    from collections import Counter
    from ._tabular import column, missing_mask
    from .info import _as_labels
    if _rows(X) == 0:
        return None
    labels = _as_labels(y, "y").tolist()
    out = []
    for j in range(X.shape[1]):
        values = np.asarray(column(X, j).to_numpy(dtype=object) if hasattr(X, "iloc")
                            else X[:, j])
        keep = ~missing_mask(values)
        out.append(Counter(zip(values[keep].tolist(), np.asarray(labels,
                                                                  dtype=object)[keep].tolist())))
    out.append(Counter(labels))
    return _rows(X), out


def _ig_row(name, counts, classes, categorical):
    """One row of the table from the column's (value, class) counts (info.py's formulas)."""
    from .info import _n_log2_n, split_point
    from ._tabular import sorted_levels
    index = {c: k for k, c in enumerate(classes.tolist())}
    values = sorted_levels(np.array(list({v for v, _ in counts}), dtype=object)) \
        if categorical else np.unique(np.array([float(v) for v, _ in counts]))
    position = {v: i for i, v in enumerate(values.tolist())}
    table = np.zeros((len(values), len(classes)))
    for (value, label), c in counts.items():
        table[position[value if categorical else float(value)], index[label]] += c
    totals = table.sum(axis=0)
    n = totals.sum()
    h = _n_log2_n(n) - _n_log2_n(totals).sum()         # n H(Y) in bits
    if categorical:
        per_value = table.sum(axis=1)
        h_given = (_n_log2_n(per_value) - _n_log2_n(table).sum(axis=1)).sum()
        return {"name": name, "kind": "categorical", "values": [str(v) for v in values],
                "distribution": table.astype(int).tolist(), "gain": float((h - h_given) / n)}
    if len(values) < 2:
        return {"name": name, "kind": "real", "values": ["(constant)"],
                "distribution": [totals.astype(int).tolist()], "gain": 0.0}
    left = np.cumsum(table, axis=0)[:-1]
    n_left = left.sum(axis=1)
    h_given = (_n_log2_n(n_left) + _n_log2_n(n - n_left)
               - (_n_log2_n(left) + _n_log2_n(totals - left)).sum(axis=1))
    gains = (h - h_given) / n
    i = int(np.flatnonzero(gains >= gains.max() - 1e-12)[0])
    t = split_point(values[i], values[i + 1])
    return {"name": name, "kind": "real", "values": [f"< {t:g}", f">= {t:g}"],
            "distribution": [left[i].astype(int).tolist(),
                             (totals - left[i]).astype(int).tolist()],
            "gain": float(gains[i])}
