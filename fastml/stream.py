"""Fitting on data larger than memory: `fit_stream` reads a source chunk by chunk.

Each estimator keeps its own algorithm; the driver only decides how chunks reach it
(DESIGN.md, "Scale"):
- sums of per-chunk statistics, one pass, equal to `fit` on the whole table: naive Bayes
  (all three, through `partial_fit`: class counts, category counts, moments merged by Chan's
  formula), LinearRegression / Ridge / PolynomialRegression with solver="normal"
  (`LinearStats.merge`, then one solve);
- a sum of per-chunk loss and gradient, one pass per iteration: LogisticRegression with
  solver="gd" or "lbfgs" (the batch kernel through the estimator's objective);
- `partial_fit` per chunk, `epochs` passes: the SGD family (LogisticRegression sgd/minibatch,
  Perceptron, VotedPerceptron, LinearSVM(solver="sgd"), LinearRegression / Ridge with
  solver="sgd"). Rows are shuffled within each chunk (the estimator's `shuffle`); step-size
  schedules, the step count and averaging carry on across chunks, and every chunk of pass e
  runs as epoch e, so with shuffle=False the result equals `fit` on the concatenation with
  max_iter=epochs, tol=None, shuffle=False (for mini-batches, when the chunk sizes are
  multiples of batch_size: a mini-batch does not span two chunks).
Trees, forests and the kernel perceptron need all rows at once: they get a clear error.

Sources: a Parquet file, a directory of Parquet files or a glob (pyarrow.dataset, record
batches of `chunk_rows`), a CSV file (pyarrow's streaming reader), an iterable of (X, y) or
(X, y, sample_weight) chunks or of DataFrames, or a callable returning a fresh such iterable.
Algorithms that need several passes (classes first, then the data; batch iterations; epochs)
need a file or a callable; a one-shot iterator gets one pass and a clear error otherwise.

pyarrow is imported only when a file is read, so `import fastml` works without it.
"""
from __future__ import annotations

import glob
import inspect
import os
import queue
import re
import threading
from typing import Any, Optional, Sequence, TYPE_CHECKING

import numpy as np

from ._progress import progress

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from ._typing import EstimatorT

__all__ = ["fit_stream"]

CHUNK_BYTES = 64 << 20  # the default chunk: about 64 MB of float64 features
PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")
CSV_BLOCK_BYTES = 1 << 24  # the CSV reader's block; column types are inferred from the first
CSV_SUFFIXES = (".csv", ".tsv", ".csv.gz", ".csv.bz2")


def fit_stream(estimator: EstimatorT, source: Any, target: Optional[str] = None, *,
               chunk_rows: Optional[int] = None, epochs: Optional[int] = None,
               columns: Optional[Sequence[str]] = None, drop: Optional[Sequence[str]] = None,
               sample_weight: Optional[str] = None, verbose: Optional[bool] = None) -> EstimatorT:
    """Fit `estimator` on `source` without holding more than about one chunk in memory.

    Parameters
    ----------
    estimator : an unfitted (or to-be-refitted) fastml estimator.
    source : path of a Parquet file / directory / glob or of a CSV file; an iterable of
        (X, y), (X, y, sample_weight) or DataFrame chunks; or a callable returning one.
    target : str, the label / target column (tabular sources). Not used with (X, y) chunks.
    chunk_rows : int, rows per chunk read from a file (default: about 64 MB of features).
        Iterables keep their own chunks.
    epochs : int, passes of the SGD family (default 1); other estimators make the passes
        their algorithm needs.
    columns : list of feature columns to use (default: all but target, sample_weight, drop).
    drop : list of columns to leave out.
    sample_weight : str, the column holding the row weights (tabular sources).
    verbose : int, progress over rows read (default: the estimator's `verbose`, else 0).

    Returns the fitted estimator.
    """
    plan = _plan_for(estimator, epochs)
    if verbose is None:
        verbose = getattr(estimator, "verbose", 0) or 0
    stream = _Stream(source, target, chunk_rows=chunk_rows, columns=columns, drop=drop,
                     weight=sample_weight, verbose=verbose, desc=type(estimator).__name__)
    return plan(estimator, stream, epochs)


# ------------------------------------------------------------------------ which algorithm
def _plan_for(estimator, epochs):
    """The driver for this estimator, or a clear error for those that need all rows."""
    from .linear_model import (KernelPerceptron, LinearRegression, LogisticRegression,
                               PolynomialRegression, Ridge)
    from .naive_bayes import CategoricalNB, GaussianNB, NaiveBayes
    name = type(estimator).__name__
    if epochs is not None:
        if not isinstance(epochs, (int, np.integer)) or isinstance(epochs, bool) or epochs < 1:
            raise ValueError(f"epochs must be a positive integer; got {epochs!r}")
    exact = isinstance(estimator, (GaussianNB, CategoricalNB, NaiveBayes)) or (
        isinstance(estimator, (LinearRegression, Ridge, PolynomialRegression))
        and estimator.solver == "normal")
    batch = isinstance(estimator, LogisticRegression) and estimator.solver in ("gd", "lbfgs")
    if (exact or batch) and epochs not in (None, 1):
        raise ValueError(f"epochs={epochs} is for the SGD family; {name} is fitted exactly "
                         f"(one pass of statistics, or one pass per solver iteration)")
    if isinstance(estimator, (GaussianNB, CategoricalNB, NaiveBayes)):
        return _fit_partial_passes
    if isinstance(estimator, PolynomialRegression) and estimator.solver == "normal":
        return _fit_polynomial
    if isinstance(estimator, (LinearRegression, Ridge)) and estimator.solver == "normal":
        return _fit_least_squares
    if batch:
        return _fit_logistic_batch
    if isinstance(estimator, KernelPerceptron):
        raise TypeError("KernelPerceptron cannot be fitted by fit_stream: its model is every "
                        "mistake it made (support vectors, compared with every row), so it "
                        "needs the rows in memory; fit it in memory on a sample, or use "
                        "Perceptron / LinearSVM, which stream")
    if _has_partial_fit(estimator):
        return _fit_partial_passes
    if name.startswith("RandomForest"):
        raise TypeError(f"{name} cannot be fitted by fit_stream: each tree's split search "
                        f"needs all rows at once; fit it in memory (on a sample if need be), "
                        f"or pass a dask array / DataFrame to fit to grow the trees on "
                        f"workers (pip install 'fastml[dask]')")
    if name.startswith("DecisionTree"):
        raise TypeError(f"{name} cannot be fitted by fit_stream: the split search needs all "
                        f"rows at once; fit it in memory (on a sample if need be), or use a "
                        f"RandomForest on a dask collection")
    solver = getattr(estimator, "solver", None)
    raise TypeError(f"{name}" + (f"(solver={solver!r})" if solver else "") +
                    " cannot be fitted by fit_stream: it has no streaming form "
                    "(streams: naive Bayes, linear / ridge / polynomial regression with "
                    "solver='normal', LogisticRegression, and the SGD family)")


def _has_partial_fit(estimator):
    try:
        return callable(getattr(estimator, "partial_fit"))
    except AttributeError:   # available_if: not with this solver
        return False


def _is_classifier(estimator):
    from ._base import ClassifierMixin
    return isinstance(estimator, ClassifierMixin)


# ---------------------------------------------------------------------------- the drivers
def _fit_partial_passes(estimator, stream, epochs):
    """partial_fit on every chunk: one pass for naive Bayes (exact), `epochs` passes for the
    SGD family; every chunk of pass e runs as epoch e of the schedule."""
    _forget_fit(estimator)
    classes = stream.classes() if _is_classifier(estimator) else None
    takes_weight = "sample_weight" in inspect.signature(estimator.partial_fit).parameters
    sgd = not _is_naive_bayes(estimator)
    n_passes = (epochs or 1) if sgd else 1
    curve = []
    for epoch in range(n_passes):
        loss_sum = weight_sum = 0.0
        for chunk in stream.chunks():
            kwargs = {}
            if _is_classifier(estimator):
                if classes is None:     # a one-shot iterator: the first chunk's labels
                    classes = np.unique(_as_labels(chunk.y))
                    if len(classes) < 2:
                        raise ValueError(_ONE_SHOT_CLASSES.format(
                            what=f"only the class {classes.tolist()!r}"))
                kwargs["classes"] = classes
            if chunk.weight is not None:
                if not takes_weight:
                    raise TypeError(f"{type(estimator).__name__}.partial_fit takes no "
                                    f"sample_weight; drop the sample_weight column")
                kwargs["sample_weight"] = chunk.weight
            if sgd:
                _set_sgd_epoch(estimator, epoch)
            try:
                estimator.partial_fit(chunk.X, chunk.y, **kwargs)
            except ValueError as error:
                if "labels not in classes_" in str(error) and not stream.reader.repeatable:
                    raise ValueError(_ONE_SHOT_CLASSES.format(
                        what=f"not every label: chunk {chunk.index} (rows from {chunk.start}) "
                             f"brings a label the first chunk did not have ({error})")) \
                        from None
                raise
            if sgd:
                w = chunk.total_weight()
                loss_sum += _last_chunk_loss(estimator) * w
                weight_sum += w
        if sgd:
            curve.append(loss_sum / weight_sum if weight_sum else np.nan)
    if sgd:
        _finish_sgd(estimator, n_passes, curve)
    return estimator


_ONE_SHOT_CLASSES = ("with a one-shot iterator the first chunk fixes the classes, and it holds "
                     "{what}; pass a file, or a callable returning a fresh iterable, so that "
                     "fit_stream can read the labels first")


def _fit_least_squares(estimator, stream, epochs):
    """LinearRegression / Ridge (normal): LinearStats per chunk, merged, one solve."""
    stats = _accumulate_stats(estimator, stream, transform=None)
    return estimator.fit_stats(stats, reset=True)


def _fit_polynomial(estimator, stream, epochs):
    """PolynomialRegression (normal): statistics of the chunks' polynomial features."""
    from .linear_model import PolynomialFeatures
    state = {}

    def expand(X):
        if "features" not in state:
            state["features"] = PolynomialFeatures(
                estimator.degree, interaction_only=estimator.interaction_only,
                include_bias=False).fit(X)
        return state["features"].transform(X)

    stats = _accumulate_stats(estimator, stream, transform=expand)
    return _finish_polynomial(estimator, state["features"], stats)


def _accumulate_stats(estimator, stream, transform):
    from ._validation import check_sample_weight, check_X_y
    from .linear_model import LinearStats
    from ._validation import check_param
    _forget_fit(estimator)
    if hasattr(estimator, "_check_params"):
        estimator._check_params()
    else:       # PolynomialRegression checks its degree in fit
        check_param("degree", estimator.degree, low=1, integer=True)
    total = None
    for k, chunk in enumerate(stream.chunks()):
        X, y = check_X_y(chunk.X, chunk.y, multi_output=True, estimator=estimator,
                         reset=k == 0)
        if transform is not None:
            X = np.ascontiguousarray(transform(X))
        sw = None if chunk.weight is None else check_sample_weight(chunk.weight, X.shape[0])
        stats = LinearStats.from_data(X, y.reshape(X.shape[0], -1), sw,
                                      getattr(estimator, "n_jobs", None))
        if total is not None and stats.Sxy.shape != total.Sxy.shape:
            raise ValueError(f"chunk {k} has {stats.Sxy.shape[1]} target column(s); the first "
                             f"chunks had {total.Sxy.shape[1]}")
        total = stats if total is None else total.merge(stats)
    if total is None:
        raise ValueError("the source has no rows")
    return total


def _fit_logistic_batch(estimator, stream, epochs):
    """LogisticRegression gd / lbfgs: the estimator's solver, fed by an objective that
    streams the source once per evaluation and sums the chunks' loss and gradient."""
    if not stream.reader.repeatable:
        raise ValueError(f"LogisticRegression(solver={estimator.solver!r}) reads the data "
                         f"once per iteration, but the source is a one-shot iterator; pass "
                         f"a file, or a callable that returns a fresh iterable")
    _forget_fit(estimator)
    estimator._check_params()
    estimator._encode_labels(stream.classes())
    return _solve_logistic(estimator, _StreamedLogisticObjective(estimator, stream))


def _solve_logistic(estimator, objective):
    """Run the estimator's own gd / lbfgs loop on an objective that sums chunks (streamed
    here, partitions in fastml._dask)."""
    x0 = np.zeros(objective.size)
    if estimator.solver == "lbfgs":
        x, n_iter, curve = estimator._run_lbfgs(objective, x0)
    else:
        x, n_iter, curve = estimator._run_gd(objective, x0, None)
    estimator.coef_, estimator.intercept_ = objective.unpack(x)
    estimator.n_iter_ = n_iter
    estimator.loss_curve_ = curve
    return estimator


class _StreamedLogisticObjective:
    """The same function as LogisticRegression's in-memory objective (mean weighted log-loss
    + alpha/2 ||W||^2 over the flat [W.ravel(), b]), one streamed pass per call."""

    def __init__(self, estimator, stream):
        from .linear_model._base import OutputLayout
        self.estimator, self.stream = estimator, stream
        self.layout = OutputLayout(len(estimator.classes_), estimator.multi_class)
        self.alpha, self.fit_intercept = float(estimator.alpha), bool(estimator.fit_intercept)
        self.d = self.dtype = None
        self._first_pass = True
        self._read_shape()

    def _read_shape(self):
        """Features and dtype from the first chunk (validated as fit validates X)."""
        chunk = next(iter(self._prepared()))
        self.d, self.dtype = chunk[0].shape[1], chunk[0].dtype
        self.K = self.layout.n_outputs
        self.size = self.K * self.d + (self.K if self.fit_intercept else 0)

    def _prepared(self):
        """(X, kernel codes, sw) per chunk, validated as fit validates them."""
        from ._validation import check_sample_weight, check_X_y
        est = self.estimator
        for k, chunk in enumerate(self.stream.chunks()):
            X, y = check_X_y(chunk.X, chunk.y, accept_sparse=True, estimator=est,
                             reset=self._first_pass and k == 0)
            codes = self.layout.codes(est._encode_known_labels(y))
            sw = check_sample_weight(chunk.weight, X.shape[0]) if chunk.weight is not None \
                else np.ones(X.shape[0])
            yield X, codes, sw
        self._first_pass = False

    def unpack(self, x):
        W = np.ascontiguousarray(x[:self.K * self.d].reshape(self.K, self.d), dtype=self.dtype)
        b = x[self.K * self.d:] if self.fit_intercept else np.zeros(self.K)
        return W, np.ascontiguousarray(b, dtype=self.dtype)

    def __call__(self, x):
        loss, grad, weight = 0.0, np.zeros(self.size), 0.0
        for X, codes, sw in self._prepared():
            chunk_loss, chunk_grad, chunk_weight = _chunk_loss_grad(
                self.estimator, X, codes, sw, self.layout, x)
            loss += chunk_loss
            grad += chunk_grad
            weight += chunk_weight
        return _regularized(loss, grad, weight, x, self.alpha, self.K * self.d)

    def lipschitz(self, _X=None, n_power=20):
        """LogisticRegression's step bound (see _Objective.lipschitz), from the weighted Gram
        matrix of [X 1] summed over one pass instead of 2 * n_power passes."""
        gram, weight = 0.0, 0.0
        for X, _, sw in self._prepared():
            Z = _with_ones(X) if self.fit_intercept else X
            S = Z.T @ _scale_rows(Z, sw)
            gram = gram + (S.toarray() if hasattr(S, "toarray") else S)
            weight += float(sw.sum())
        return _power_bound(gram / weight, self.layout.n_classes, self.alpha, n_power)


def _regularized(loss, grad, weight, x, alpha, n_weights):
    """mean loss + alpha/2 ||w||^2 and its gradient (intercepts not penalized), as
    LogisticRegression's _Objective forms them."""
    f = loss / weight + 0.5 * alpha * float(np.dot(x[:n_weights], x[:n_weights]))
    g = grad / weight
    g[:n_weights] += alpha * x[:n_weights]
    return f, g


def _with_ones(X):
    import scipy.sparse as sp
    ones = np.ones((X.shape[0], 1), dtype=X.dtype)
    return sp.hstack([X, sp.csr_matrix(ones)], format="csr") if sp.issparse(X) \
        else np.hstack([X, ones])


def _scale_rows(Z, sw):
    return Z.multiply(sw[:, None]).tocsr() if hasattr(Z, "tocsr") else Z * sw[:, None]


def _power_bound(gram, n_classes, alpha, n_power):
    """The power iteration of _Objective.lipschitz on the normalized Gram matrix (same start
    vector, same steps: w = G v is what its two passes compute)."""
    rng = np.random.default_rng(0)
    v = rng.normal(size=gram.shape[0])
    lam = 0.0
    for _ in range(n_power):
        v /= np.linalg.norm(v)
        w = gram @ v
        lam = float(np.linalg.norm(w))
        v = w
    bound = 0.25 if n_classes == 2 else 0.5
    return bound * lam * 1.01 + alpha


# ------------------------------------------------------ adapters onto estimator internals
# The few places fit_stream (and fastml.dask) reach into an estimator's internals, each in one
# small function so a refactor of the estimator re-points one line.

def _chunk_loss_grad(estimator, X, codes, sw, layout, x):
    """(summed weighted log-loss, its summed gradient over [W.ravel(), b], summed weight) of
    one chunk at x, by LogisticRegression's batch kernel (its _Objective with alpha=0 returns
    means; scaled back to sums so chunks add)."""
    from ._validation import check_n_jobs
    from .linear_model._logistic import _Objective
    weight = float(sw.sum())
    if weight == 0:
        return 0.0, np.zeros(len(x)), 0.0
    objective = _Objective(X, codes, sw, layout, 0.0, estimator.fit_intercept,
                           check_n_jobs(estimator.n_jobs))
    f, g = objective(x)
    return f * weight, g * weight, weight


def _set_sgd_epoch(estimator, epoch):
    """Make the next partial_fit run as epoch `epoch` of the schedule (the decay schedule and
    the epoch counters read it): every chunk of a pass belongs to the same epoch."""
    if hasattr(estimator, "_epochs_done"):
        estimator._epochs_done = epoch
    elif hasattr(estimator, "_mistakes"):        # VotedPerceptron counts in n_iter_
        estimator.n_iter_ = epoch


def _last_chunk_loss(estimator):
    curve = getattr(estimator, "loss_curve_", None)
    return float(curve[-1]) if curve else np.nan


def _finish_sgd(estimator, n_passes, curve):
    """Epoch counters and the loss curve as one fit over the concatenation reports them."""
    if hasattr(estimator, "_epochs_done"):
        estimator._epochs_done = n_passes
    if hasattr(estimator, "n_iter_"):
        estimator.n_iter_ = n_passes
    if hasattr(estimator, "loss_curve_"):
        estimator.loss_curve_ = curve


def _finish_polynomial(estimator, features, stats):
    """PolynomialRegression's fitted state from the statistics of its features (what its fit
    sets after Ridge.fit)."""
    from .linear_model import Ridge
    model = Ridge(alpha=estimator.alpha, fit_intercept=estimator.fit_intercept,
                  solver="normal", n_jobs=estimator.n_jobs).fit_stats(stats)
    estimator.features_, estimator.model_ = features, model
    estimator.coef_, estimator.intercept_ = model.coef_, model.intercept_
    estimator.powers_ = features.powers_
    estimator.rank_ = model.rank_
    return estimator


def _is_naive_bayes(estimator):
    from .naive_bayes import CategoricalNB, GaussianNB, NaiveBayes
    return isinstance(estimator, (GaussianNB, CategoricalNB, NaiveBayes))


def _forget_fit(estimator):
    """Start from scratch, as fit does (partial_fit continues from any earlier state)."""
    for name in list(vars(estimator)):
        if name.endswith("_") and not name.startswith("__") or name in (
                "_engine", "_parts", "_rng", "_epochs_done", "_mistakes", "_single_target"):
            delattr(estimator, name)


# ---------------------------------------------------------------------------- the chunks
class _Chunk:
    __slots__ = ("X", "y", "weight", "index", "start")

    def __init__(self, X, y, weight, index, start):
        self.X, self.y, self.weight, self.index, self.start = X, y, weight, index, start

    @property
    def n_rows(self):
        return self.X.shape[0]

    def total_weight(self):
        return float(self.n_rows if self.weight is None else np.sum(self.weight))


class _Stream:
    """Chunks of a source, as (X, y, weight) with the column rules of fit: the same feature
    columns in every chunk, each column keeping its kind (numeric / categorical)."""

    def __init__(self, source, target, *, chunk_rows, columns, drop, weight, verbose, desc):
        if chunk_rows is not None and (not isinstance(chunk_rows, (int, np.integer))
                                       or isinstance(chunk_rows, bool) or chunk_rows < 1):
            raise ValueError(f"chunk_rows must be a positive integer; got {chunk_rows!r}")
        self.target, self.weight, self.chunk_rows = target, weight, chunk_rows
        self.columns = None if columns is None else list(columns)
        self.drop = [] if drop is None else list(drop)
        self.verbose, self.desc = verbose, desc
        self.reader = _reader_for(source)
        self.passes = 0
        self.kinds = None
        names = self.reader.column_names()
        if names is not None:
            missing = [c for c in [target, weight, *(self.columns or []), *self.drop]
                       if c is not None and c not in names]
            if missing:
                raise ValueError(f"the source has no column(s) {missing}; it has {names}")
            if target is None:
                raise ValueError("target is required for tabular sources: the name of the "
                                 "label / target column")

    def chunks(self):
        """One pass over the source: _Chunk objects, with progress in rows."""
        if self.passes and not self.reader.repeatable:
            raise ValueError(
                f"{self.desc} needs another pass over the data, but the source is a one-shot "
                f"iterator; pass a file, or a callable that returns a fresh iterable")
        self.passes += 1
        start = 0
        with progress(self.reader.total_rows(), desc=f"fit_stream {self.desc}", unit="row",
                      verbose=self.verbose) as bar:
            for k, raw in enumerate(self.reader.raw_chunks(self._needed(), self.chunk_rows)):
                chunk = self._split(raw, k, start)
                if chunk.n_rows == 0:
                    continue
                yield chunk
                start += chunk.n_rows
                bar.update(chunk.n_rows)
        if start == 0:
            raise ValueError("the source has no rows")

    def classes(self):
        """The sorted distinct labels over the whole source (a pass over the target alone
        where the source can read one column), as fit would find them."""
        if not self.reader.repeatable:
            return None    # the first chunk decides; a new label later gets a clear error
        found = None
        for y in self.reader.target_values(self):
            labels = np.unique(_as_labels(y))
            found = labels if found is None else np.union1d(found, labels)
        if found is None:
            raise ValueError("the source has no rows")
        return found

    def _needed(self):
        """The columns to read from a file (None: all)."""
        if self.columns is None:
            return None
        extra = [c for c in (self.target, self.weight) if c is not None]
        return list(dict.fromkeys(self.columns + extra))

    def _split(self, raw, k, start):
        if isinstance(raw, tuple):
            if len(raw) not in (2, 3):
                raise ValueError(f"chunk {k} is a tuple of {len(raw)} items; expected (X, y) "
                                 f"or (X, y, sample_weight)")
            X, y = raw[0], raw[1]
            w = raw[2] if len(raw) == 3 else None
            if self.weight is not None:
                raise ValueError("sample_weight names a column, but the chunks are (X, y) "
                                 "tuples: give weights as (X, y, sample_weight)")
            if _is_frame(X):
                self._check_kinds(X, k, start)
            return _Chunk(X, y, w, k, start)
        if self.target is None:
            raise ValueError("target is required for tabular sources: the name of the label "
                             "/ target column")
        names = list(raw.column_names if _is_arrow(raw) else _to_frame(raw).columns)
        missing = [c for c in [self.target, self.weight, *(self.columns or []), *self.drop]
                   if c is not None and c not in names]
        if missing:
            raise ValueError(f"chunk {k} (rows from {start}) has no column(s) {missing}; "
                             f"it has {names}")
        features = self.columns if self.columns is not None else [
            c for c in names if c not in (self.target, self.weight) and c not in self.drop]
        X = _numeric_frame(raw, features) if _is_arrow(raw) else None
        frame = raw if X is not None else _to_frame(raw)
        if X is None:
            X = frame[features]
        self._check_kinds(X, k, start)
        w = None if self.weight is None else _column_values(frame, self.weight, np.float64)
        return _Chunk(X, _column_values(frame, self.target), w, k, start)

    def _check_kinds(self, X, k, start):
        """Every chunk has the first chunk's columns, each numeric or categorical as there."""
        kinds = {c: _column_kind(X[c]) for c in X.columns}
        if self.kinds is None:
            self.kinds = kinds
            return
        if list(kinds) != list(self.kinds):
            raise ValueError(f"chunk {k} (rows from {start}) has columns {list(kinds)}; the "
                             f"first chunk had {list(self.kinds)}")
        for name, kind in kinds.items():
            before = self.kinds[name]
            if kind is not None and before is not None and kind != before:
                raise ValueError(f"column {name!r} changes type in chunk {k} (rows from "
                                 f"{start}): {before} in the chunks before, {kind} here; "
                                 f"make its type the same in every chunk")
            if before is None:
                self.kinds[name] = kind


def _column_kind(col):
    """'numeric' or 'categorical' by fit's rule (_tabular); None for an all-missing column,
    which fits either."""
    from ._tabular import _column_is_categorical, missing_mask
    if col.dtype == object:
        values = col.to_numpy()
        if missing_mask(values).all():
            return None
    return "categorical" if _column_is_categorical(col) else "numeric"


def _as_labels(y):
    from ._validation import check_target
    return check_target(y)


def _is_frame(X):
    from ._validation import _is_pandas_frame
    return _is_pandas_frame(X)


def _is_arrow(raw):
    return hasattr(raw, "column_names") and hasattr(raw, "to_pandas")


def _column_values(frame, name, dtype=None):
    """One column of an Arrow table or a DataFrame as a numpy array (Arrow nulls: None in
    object columns, NaN in numeric ones, as to_pandas gives them); a DataFrame's column stays a
    Series unless a dtype is asked for."""
    if not _is_arrow(frame):
        return frame[name] if dtype is None else frame[name].to_numpy(dtype=dtype)
    values = frame.column(name).to_numpy(zero_copy_only=False)
    return values if dtype is None else values.astype(dtype, copy=False)


def _numeric_frame(table, features):
    """The feature columns of an all-numeric Arrow table as a DataFrame over one C-contiguous
    array: one copy from Arrow's column buffers into the kernels' row layout (to_pandas would
    copy into a column-major block, and the estimator again to rows). None when a column is
    not an integer or a float (strings, bools, dates, ...): those go through to_pandas and
    fit's column rules."""
    import pyarrow as pa
    import pandas as pd
    from ._core._layout import rows_from_columns
    types = [table.schema.field(name).type for name in features]
    # bool columns are categorical by fit's rules (fastml._tabular): they take the other path
    if not features or not all(pa.types.is_floating(t) or pa.types.is_integer(t) for t in types):
        return None
    dtype = np.float32 if all(t == pa.float32() for t in types) else np.float64
    columns = [_column_values(table, name, dtype) for name in features]
    return pd.DataFrame(rows_from_columns(columns), columns=features, copy=False)


def _to_frame(raw):
    if _is_frame(raw):
        return raw
    if hasattr(raw, "to_pandas"):      # a pyarrow RecordBatch / Table
        return raw.to_pandas()
    raise TypeError(f"a chunk of type {type(raw).__name__} is neither (X, y) nor a DataFrame "
                    f"nor an Arrow record batch")


# ---------------------------------------------------------------------------- the readers
def _reader_for(source):
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        lowered = path.lower()
        if lowered.endswith(CSV_SUFFIXES):
            if not os.path.isfile(path):
                raise FileNotFoundError(f"no CSV file {path!r}")
            return _CSVReader(path)
        if os.path.isdir(path) or lowered.endswith(PARQUET_SUFFIXES) or glob.has_magic(path):
            return _ParquetReader(path)
        raise ValueError(f"cannot tell the format of {path!r}: give a .parquet / .csv file, "
                         f"a directory of Parquet files or a glob")
    if callable(source):
        return _IterableReader(source, repeatable=True)
    if hasattr(source, "__iter__"):
        return _IterableReader(lambda: source, repeatable=not _is_iterator(source))
    raise TypeError(f"source of type {type(source).__name__} is not a file path, an iterable "
                    f"of chunks or a callable returning one")


def _is_iterator(obj):
    return iter(obj) is obj


class _IterableReader:
    def __init__(self, make, repeatable):
        self.make, self.repeatable = make, repeatable

    def total_rows(self):
        return None

    def column_names(self):
        return None

    def raw_chunks(self, columns, chunk_rows):
        return iter(self.make())

    def target_values(self, stream):
        for chunk in stream.chunks():
            yield chunk.y


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.csv  # noqa: F401
        import pyarrow.dataset  # noqa: F401
    except ImportError:
        raise ImportError("reading Parquet / CSV files chunk by chunk needs pyarrow: "
                          "pip install 'fastml[pandas]'") from None
    return pyarrow


def _default_rows(n_columns):
    return max(1024, CHUNK_BYTES // (8 * max(1, n_columns)))


class _ParquetReader:
    """Parquet files read one after the other, each by pyarrow's synchronous batch reader
    (a dataset scanner reads ahead as far as it likes; this holds one row group at most)."""
    repeatable = True

    def __init__(self, path):
        pa = _pyarrow()
        if glob.has_magic(path):
            files = sorted(glob.glob(path))
        elif os.path.isdir(path):   # its Parquet files (a directory may hold others)
            files = sorted(glob.glob(os.path.join(path, "**", "*"), recursive=True))
            files = [f for f in files if f.lower().endswith(PARQUET_SUFFIXES)] or path
        else:
            files = path
        if isinstance(files, list) and not files:
            raise FileNotFoundError(f"no file matches {path!r}")
        if isinstance(files, str) and not os.path.exists(files):
            raise FileNotFoundError(f"no Parquet file or directory {path!r}")
        dataset = pa.dataset.dataset(files, format="parquet")
        self.files, self.schema = list(dataset.files), dataset.schema
        self._rows = dataset.count_rows()

    def total_rows(self):
        return self._rows

    def column_names(self):
        return list(self.schema.names)

    def raw_chunks(self, columns, chunk_rows):
        rows = chunk_rows or _default_rows(len(self.schema.names))
        return _read_ahead(_rebatch(self._batches(columns, rows), rows))

    def _batches(self, columns, rows):
        import pyarrow.parquet as pq
        for path in self.files:
            # pre_buffer=False: by default pyarrow buffers ahead without bound (the whole file)
            with pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 22) as parquet:
                if parquet.schema_arrow.names != self.schema.names:
                    raise ValueError(f"{path} has columns {parquet.schema_arrow.names}; the "
                                     f"first file has {self.schema.names}")
                yield from parquet.iter_batches(batch_size=rows, columns=columns)

    def target_values(self, stream):
        for batch in self.raw_chunks([stream.target], stream.chunk_rows):
            yield batch.column(0).to_numpy(zero_copy_only=False)


class _CSVReader:
    repeatable = True

    def __init__(self, path):
        _pyarrow()
        self.path = path

    def total_rows(self):
        return None

    def column_names(self):
        return list(self._open(None).schema.names)

    def _open(self, columns):
        pa = _pyarrow()
        convert = pa.csv.ConvertOptions(include_columns=columns) if columns else None
        return pa.csv.open_csv(self.path, read_options=pa.csv.ReadOptions(
            block_size=CSV_BLOCK_BYTES), convert_options=convert)

    def raw_chunks(self, columns, chunk_rows):
        reader = self._open(columns)
        rows = chunk_rows or _default_rows(len(reader.schema.names))
        return _read_ahead(_rebatch(self._batches(reader), rows))

    def _batches(self, reader):
        """The reader's batches; a cell that does not parse as its column's type (fixed by
        the first block) becomes an error naming the column and the chunk."""
        pa = _pyarrow()
        names, k, row = reader.schema.names, 0, 0
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                return
            except pa.ArrowInvalid as error:
                raise ValueError(_csv_type_error(str(error), names, reader.schema, k, row,
                                                 self.path)) from None
            yield batch
            k += 1
            row += batch.num_rows

    def target_values(self, stream):
        for batch in self.raw_chunks([stream.target], stream.chunk_rows):
            yield batch.column(0).to_numpy(zero_copy_only=False)


def _csv_type_error(message, names, schema, k, row, path):
    found = re.search(r"column #(\d+)", message)
    column = names[int(found.group(1))] if found and int(found.group(1)) < len(names) else "?"
    kind = schema.field(column).type if column in names else "?"
    return (f"{path}: column {column!r} changes type in block {k} (rows from {row}): it was "
            f"read as {kind} from the first block, and this block holds a value that is not "
            f"({message})")


def _read_ahead(chunks):
    """The items of `chunks`, with the next one read by a background thread while the caller
    fits the current one. Arrow's readers and fastml's kernels both release the GIL, so on two
    cores decoding the file overlaps fitting. At most one chunk waits in the queue (beside the
    one the thread reads and the one being fitted). Only fastml's own file readers use it: a
    user's iterable may not be safe to drive from another thread. An error in the reader is
    raised in the caller; a caller that stops early stops the thread."""
    pending = queue.Queue(maxsize=1)
    stop = threading.Event()
    end = object()

    def put(item):
        while not stop.is_set():
            try:
                pending.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def read():
        try:
            for chunk in chunks:
                if not put((chunk, None)):
                    return
            put((end, None))
        except BaseException as error:  # handed to the caller, raised there
            put((end, error))

    thread = threading.Thread(target=read, name="fastml-read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            chunk, error = pending.get()
            if error is not None:
                raise error
            if chunk is end:
                return
            yield chunk
    finally:
        stop.set()
        thread.join()


def _rebatch(batches, rows):
    """Arrow batches regrouped into tables of exactly `rows` rows (the last may be shorter):
    small batches are joined, large ones sliced, so a chunk is what the caller asked for."""
    import pyarrow as pa
    pending, count = [], 0
    for batch in batches:
        offset = 0
        while offset < batch.num_rows:
            take = min(rows - count, batch.num_rows - offset)
            pending.append(batch.slice(offset, take))
            count += take
            offset += take
            if count == rows:
                yield pa.Table.from_batches(pending)
                pending, count = [], 0
    if count:
        yield pa.Table.from_batches(pending)
