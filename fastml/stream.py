"""Fitting on data larger than memory: `fit_stream` reads a source chunk by chunk.

Each estimator keeps its own algorithm; the driver only decides how chunks reach it
(DESIGN.md, "Scale"):
- sums of per-chunk statistics, one pass, equal to `fit` on the whole table: naive Bayes
  (all three, through `partial_fit` with the classes each chunk holds: class counts, category
  counts, moments merged by Chan's formula over the union of the labels), LinearRegression /
  Ridge / PolynomialRegression with solver="normal" (`LinearStats.merge`, then one solve);
- a sum of per-chunk loss and gradient, one pass per iteration: LogisticRegression with
  solver="gd" or "lbfgs" (the batch kernel through the estimator's objective);
- `partial_fit` per chunk, `epochs` passes: the SGD family (LogisticRegression sgd/minibatch,
  Perceptron, VotedPerceptron, LinearSVM(solver="sgd"), LinearRegression / Ridge with
  solver="sgd"). Rows are shuffled within each chunk (the estimator's `shuffle`); step-size
  schedules, the step count and averaging carry on across chunks, and every chunk of pass e
  runs as epoch e, so with shuffle=False the result equals `fit` on the concatenation with
  max_iter=epochs, tol=None, shuffle=False (for mini-batches, when the chunk sizes are
  multiples of batch_size: a mini-batch does not span two chunks). Every pass steps with
  the whole source's rows and weight as its totals, as fit's epochs do (the weights scaled
  by rows / weight; Ridge(solver="sgd")'s per-row penalty alpha / total weight): a
  repeatable source gets one pass over its label and weight columns first (beside the first
  chunk's read, for a file; it also finds the classes). A one-shot iterator cannot, so its
  first pass weighs by the rows read so far, as partial_fit does; so does a regressor's
  first pass over a user's (X, y, sample_weight) chunks without alpha. `progressive_loss_` and
  `loss_curve_` get one value per pass (the chunks' values weighted by their rows' weight);
  an estimator with early_stopping="progressive" stops making passes once that progressive
  loss has not improved by its `tol` for `n_iter_no_change` passes.
Trees, forests and the kernel perceptron need all rows at once: they get a clear error.

Sources: a Parquet file, a directory of Parquet files or a glob (pyarrow.dataset, record
batches of `chunk_rows`), a CSV file (pyarrow's streaming reader), an iterable of (X, y) or
(X, y, sample_weight) chunks or of DataFrames, or a callable returning a fresh such iterable.
Algorithms that need several passes (the SGD family's classes first, then the data; batch
iterations; epochs) need a file or a callable; a one-shot iterator gets one pass and a clear
error otherwise.

pyarrow is imported only when a file is read, so `import fastml` works without it.
"""
from __future__ import annotations

import glob
import inspect
import os
import queue
import re
import threading
import time
from typing import Any, Optional, Sequence, TYPE_CHECKING

import numpy as np

from ._base import forget_fit
from ._extras import install_hint, require
from ._progress import progress
from ._tabular_io import csv_convert_options

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
    epochs : int, passes of the SGD family (default 1; fewer when the estimator has
        early_stopping="progressive" and its progressive loss stops improving); other
        estimators make the passes their algorithm needs.
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
                     weight=sample_weight, verbose=verbose, desc=type(estimator).__name__,
                     order=_layout_for(estimator, plan))
    try:
        return plan(estimator, stream, epochs)
    except ValueError as error:
        raise _located(error, stream.at) from error


def _located(error, at):
    """A data error raised while a chunk was fitted ("X contains infinity") with the chunk
    it came from: in a file of many chunks, the message alone does not say where. Errors
    that already say where (the stream's own), and ValueError's subclasses, are kept."""
    message = str(error)
    if at is None or type(error) is not ValueError or re.search(r"\b(chunk|block) \d", message):
        return error
    return ValueError(f"{message} (in chunk {at[0]}, rows from {at[1]})")


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
        return _fit_naive_bayes
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
                        f"workers ({install_hint('dask')})")
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
def _fit_naive_bayes(estimator, stream, epochs):
    """Naive Bayes, one pass: each chunk's statistics with the classes it holds, merged into
    the running total over the union of the labels (_nb_merge), so no pass is spent finding
    the classes first, and a one-shot iterator may bring a new label in any chunk."""
    forget_fit(estimator)
    template, total, names, width = _nb_template(estimator), None, None, None
    by_name = _names_columns(getattr(template, "categorical_features", None))
    for chunk in stream.chunks():
        X = chunk.X if by_name else _kernel_input(chunk)
        statistics = _nb_statistics(X, chunk.y, chunk.weight, template)
        width = _same_width(statistics[0], width, chunk)
        total = statistics if total is None else _nb_merge(total, statistics)
        names = _array_columns(chunk) if names is None else names
    _nb_finish(estimator, total)
    _record_feature_names(estimator, names)
    return estimator


def _names_columns(spec):
    """Whether NaiveBayes' categorical_features names columns: the chunks then go to it as
    DataFrames (a chunk built from numeric columns is otherwise given as its bare array,
    and the names were "not in X (columns: None)")."""
    if spec is None or isinstance(spec, str):
        return isinstance(spec, str) and spec not in ("auto", "all")
    items = np.ravel(spec).tolist() if isinstance(spec, np.ndarray) else list(spec)
    return any(isinstance(item, str) for item in items)


def _same_width(model, width, chunk):
    """The number of features of the chunks so far, or a clear error for a chunk with
    another (each chunk is fitted on its own: without this the merge failed deep in the
    moments, "merge_moments needs 8 arrays of one shape")."""
    if model is None:       # rows that weigh nothing
        return width
    if width is not None and model.n_features_in_ != width:
        raise ValueError(f"chunk {chunk.index} (rows from {chunk.start}) has "
                         f"{model.n_features_in_} features; the chunks before had {width}")
    return model.n_features_in_


def _kernel_input(chunk):
    """What partial_fit is given: the float array itself for a chunk built from numeric Arrow
    columns (a DataFrame around a column-major array would be copied into rows by the
    estimator's checks; the feature names are recorded once, by _record_feature_names),
    else X as the source gave it."""
    return chunk.X if chunk.matrix is None else chunk.matrix


def _array_columns(chunk):
    """The columns a chunk's array was built from (None: the estimator was given X itself).
    Kept instead of the chunk, whose array is reused once nothing refers to it (_Buffers)."""
    return None if chunk.matrix is None else list(chunk.X.columns)


def _record_feature_names(estimator, columns):
    """Record the columns the chunks' arrays were built from as fit on the DataFrame does
    (the stream has checked that every chunk has the same columns)."""
    import pandas as pd
    from ._validation import check_n_features
    if columns is not None:
        check_n_features(estimator, pd.DataFrame(columns=columns), reset=True)


def _fit_partial_passes(estimator, stream, epochs):
    """The SGD family: partial_fit on every chunk, `epochs` passes; every chunk of pass e
    runs as epoch e of the schedule. Every pass steps with one pass's rows and weight as the
    totals (SGDEngine.relative_weights), as fit's epochs do: the first from the pass over
    the labels and weights that a repeatable source gets before it (_label_pass_meanwhile),
    the later ones from the first pass (as running sums, the totals grew every pass, and
    Ridge's per-row penalty alpha / total weight fell as 1 / pass)."""
    try:
        return _partial_passes(estimator, stream, epochs)
    finally:
        _pass_totals(estimator, None)


def _pass_totals(estimator, totals):
    """Set (or with None, drop) the one-pass totals the SGD family's partial_fit steps with
    (fastml.linear_model._sgd.pass_totals); a fitted model keeps none, so a user's later
    partial_fit adds its rows to the running totals again."""
    if totals is not None:
        estimator._pass_totals = totals
    elif "_pass_totals" in vars(estimator):
        del estimator._pass_totals


def _partial_passes(estimator, stream, epochs):
    forget_fit(estimator)
    classifier = _is_classifier(estimator)
    classes, found = None, None
    if classifier or _first_pass_needs_totals(estimator, stream):
        found = _label_pass_meanwhile(stream, classifier)
    takes_weight = "sample_weight" in inspect.signature(estimator.partial_fit).parameters
    curve, progressive, names, rows = [], [], None, 0
    stop = _ProgressiveStop(estimator)
    for epoch in range(epochs or 1):
        loss_sum = progressive_sum = weight_sum = 0.0
        for chunk in stream.chunks():
            kwargs = {}
            if found is not None:
                labels, found = found(), None
                if labels is not None:      # a repeatable source: the whole pass's
                    classes = labels.classes
                    _pass_totals(estimator, (labels.rows, labels.weight))
            if classifier:
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
            _set_sgd_epoch(estimator, epoch)
            try:
                estimator.partial_fit(_kernel_input(chunk), chunk.y, **kwargs)
            except ValueError as error:
                if "labels not in classes_" in str(error) and not stream.reader.repeatable:
                    raise ValueError(_ONE_SHOT_CLASSES.format(
                        what=f"not every label: chunk {chunk.index} (rows from {chunk.start}) "
                             f"brings a label the first chunk did not have ({error})")) \
                        from None
                raise
            names = _array_columns(chunk) if names is None else names
            w = chunk.total_weight()
            loss_sum += _last_chunk_loss(estimator) * w
            progressive_sum += _last_chunk_loss(estimator, "progressive_loss_") * w
            weight_sum += w
            rows += chunk.n_rows if epoch == 0 else 0
        curve.append(loss_sum / weight_sum if weight_sum else np.nan)
        progressive.append(progressive_sum / weight_sum if weight_sum else np.nan)
        if stop(progressive[-1]):
            break
        _pass_totals(estimator, (rows, weight_sum))
    _finish_sgd(estimator, len(curve), curve, progressive)
    _record_feature_names(estimator, names)
    return estimator


def _first_pass_needs_totals(estimator, stream):
    """Whether the first pass of partial_fit differs from fit's first epoch without the
    totals: sample weights (scaled by rows / weight) or a ridge penalty (alpha / weight per
    row). Weights inside a user's (X, y, w) chunks are found only when read; a classifier's
    label pass finds them, a regressor's first pass then weighs by the rows read so far."""
    alpha = getattr(estimator, "_alpha", None)
    return stream.weight is not None or (alpha is not None and alpha() > 0)


def _label_pass_meanwhile(stream, with_classes):
    """stream.labels(with_classes) as a function to call when the first chunk is there. A
    file's target and weight columns are read by a background thread meanwhile (the pass over
    them overlaps the first chunk's read); other sources are read now (a user's iterable may
    not be safe to drive from two threads)."""
    if not stream.reader.read_ahead:
        labels = stream.labels(with_classes)
        return lambda: labels
    outcome = {}

    def read():
        try:
            outcome["labels"] = stream.labels(with_classes)
        except BaseException as error:  # handed to the caller, raised there
            outcome["error"] = error

    thread = threading.Thread(target=read, name="fastml-labels", daemon=True)
    thread.start()

    def result():
        thread.join()
        if "error" in outcome:
            raise outcome["error"]
        return outcome["labels"]
    return result


class _ProgressiveStop:
    """early_stopping="progressive" across passes: called with each pass's progressive loss,
    True once it has not dropped by more than the estimator's tol below the best seen for
    n_iter_no_change passes in a row (the rule of linear_model/_iterate.py). Never True for
    an estimator without that setting, or with tol None or 0."""

    def __init__(self, estimator):
        self.tol = getattr(estimator, "tol", None) \
            if getattr(estimator, "early_stopping", False) == "progressive" else None
        self.patience = getattr(estimator, "n_iter_no_change", 5)
        self.best, self.stale = np.inf, 0

    def __call__(self, value):
        if not self.tol:
            return False
        self.stale = self.stale + 1 if value > self.best - self.tol else 0
        self.best = min(self.best, value)
        return self.stale >= self.patience


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
    from ._validation import check_param, check_sample_weight
    from .linear_model import LinearStats
    forget_fit(estimator)
    if hasattr(estimator, "_check_params"):
        estimator._check_params()
    else:       # PolynomialRegression checks its degree in fit
        check_param("degree", estimator.degree, low=1, integer=True)
    total = None
    for k, chunk in enumerate(stream.chunks()):
        X, y = _regression_input(chunk, estimator, reset=k == 0)
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


# The layout of the arrays fit_stream builds from numeric Arrow chunks, for the estimators
# whose kernels do not care about it: "F" (column-major) costs one memcpy per Arrow column,
# about half the transposing copy into rows ("C"). Every other estimator (the SGD family, the
# batch logistic kernel, PolynomialRegression's expansion) walks rows and gets "C".
# GaussianNB's moment kernel reads column-major X through a small row panel in cache, with no
# copy of X (naive_bayes/_nb_fast.pyx), so it takes the cheaper copy too.
_LAYOUTS = {
    _fit_least_squares: "F",        # LinearStats: dsyrk on column-major blocks
    "GaussianNB": "F",
}


def _layout_for(estimator, plan):
    """"C" or "F": the order of the arrays built from numeric Arrow chunks (_LAYOUTS)."""
    return _LAYOUTS.get(plan, _LAYOUTS.get(type(estimator).__name__, "C"))


def _regression_input(chunk, estimator, reset):
    """A chunk's (X, y) validated as fit(solver="normal") validates them: LinearStats.from_data
    finds NaN / inf in X itself. A chunk built from numeric Arrow columns keeps its layout
    (check_array would copy a column-major array into rows)."""
    from ._validation import check_n_features, check_regression_targets, check_X_y
    if chunk.matrix is None:
        return check_X_y(chunk.X, chunk.y, multi_output=True, check_finite=False,
                         estimator=estimator, reset=reset)
    check_n_features(estimator, chunk.X, reset=reset)     # the names, from the DataFrame
    y = check_regression_targets(chunk.y)
    if y.shape[0] != chunk.n_rows:
        raise ValueError(f"X and y have different numbers of samples: X has {chunk.n_rows}, "
                         f"y has {y.shape[0]}")
    return chunk.matrix, y


def _fit_logistic_batch(estimator, stream, epochs):
    """LogisticRegression gd / lbfgs: the estimator's solver, fed by an objective that
    streams the source once per evaluation and sums the chunks' loss and gradient."""
    if not stream.reader.repeatable:
        raise ValueError(f"LogisticRegression(solver={estimator.solver!r}) reads the data "
                         f"once per iteration, but the source is a one-shot iterator; pass "
                         f"a file, or a callable that returns a fresh iterable")
    forget_fit(estimator)
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

    def lipschitz(self, _X=None):
        """LogisticRegression's step bound (see _Objective.lipschitz), from sum_i sw_i
        ||x_i||^2 and sum_i sw_i summed over one pass."""
        from .linear_model._logistic import squared_row_norms, step_bound
        total, weight = 0.0, 0.0
        for X, _, sw in self._prepared():
            total += float(np.dot(sw, squared_row_norms(X)))
            weight += float(sw.sum())
        return step_bound(total, weight, self.fit_intercept, self.layout.n_classes, self.alpha)


def _regularized(loss, grad, weight, x, alpha, n_weights):
    """mean loss + alpha/2 ||w||^2 and its gradient (intercepts not penalized), as
    LogisticRegression's _Objective forms them."""
    f = loss / weight + 0.5 * alpha * float(np.dot(x[:n_weights], x[:n_weights]))
    g = grad / weight
    g[:n_weights] += alpha * x[:n_weights]
    return f, g


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


def _last_chunk_loss(estimator, name="loss_curve_"):
    curve = getattr(estimator, name, None)
    return float(curve[-1]) if curve else np.nan


def _finish_sgd(estimator, n_passes, curve, progressive=None):
    """Epoch counters and the loss curves as one fit over the concatenation reports them."""
    if hasattr(estimator, "_epochs_done"):
        estimator._epochs_done = n_passes
    if hasattr(estimator, "n_iter_"):
        estimator.n_iter_ = n_passes
    if hasattr(estimator, "loss_curve_"):
        estimator.loss_curve_ = curve
    if hasattr(estimator, "progressive_loss_") and progressive is not None:
        estimator.progressive_loss_ = progressive


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


# --- naive Bayes: statistics per chunk (or partition) with the classes it holds, merged
# exactly over the union of the labels (fit_stream here, the Dask driver in fastml._dask)
def _nb_template(estimator):
    """An unfitted copy to fit each chunk with; priors=None, as a chunk's classes are not all
    the classes: the estimator's priors are applied once the classes are known (_nb_finish)."""
    template = type(estimator)(**estimator.get_params(deep=False))
    template.priors = None
    return template


def _nb_statistics(X, y, w, template):
    """(model, labels): a copy of `template` fitted on the rows X, y, w with the classes they
    hold, and those classes. A single class is fitted with a stand-in second class that holds
    no row (partial_fit wants two; _nb_finish drops it). Rows that weigh nothing give (None,
    labels): their labels are classes of the fit (with count 0), as in fit. None for no
    rows. Called with the rows first, as fastml._dask's partition functions are."""
    from ._base import clone
    if len(y) == 0:
        return None
    y = _as_labels(y)
    single = bool((y == y[0]).all())
    if w is not None and not np.any(np.asarray(w) > 0):
        return None, np.unique(y)
    model = clone(template)
    if single:
        model.partial_fit(X, y, classes=[y[0], _stand_in_label(y[0])], sample_weight=w)
        return model, y[:1]
    model.partial_fit(X, y, sample_weight=w)
    return model, model.classes_


def _stand_in_label(label):
    """A label of the same kind as `label` and different from it."""
    if isinstance(label, (bool, np.bool_)):
        return not label
    if isinstance(label, (str, bytes)):
        return label + type(label)("_" if isinstance(label, str) else b"_")
    if isinstance(label, (float, np.floating)):
        return np.nextafter(label, 0.0 if label else 1.0)
    return label - 1 if label > 0 else label + 1


def _nb_merge(a, b):
    """The (model, labels) of the rows of a and b: labels united, models merged over the
    union of their classes (_nb_merge_models; a class one side lacks holds nothing there)."""
    (model_a, labels_a), (model_b, labels_b) = a, b
    labels = np.union1d(labels_a, labels_b)
    if model_a is None or model_b is None:
        return (model_b if model_a is None else model_a), labels
    classes = np.union1d(model_a.classes_, model_b.classes_)
    return _nb_merge_models(_nb_with_classes(model_a, classes),
                            _nb_with_classes(model_b, classes)), labels


def _nb_finish(estimator, statistics):
    """Give `estimator` the merged model, over exactly the labels seen (stand-ins dropped),
    with its own priors."""
    model, labels = (None, None) if statistics is None else statistics
    if model is None:
        raise ValueError("X has 0 samples" if labels is None else
                         "sample_weight sums to 0: there is nothing to estimate the class "
                         "probabilities from")
    _nb_template(estimator)._encode_labels(labels)   # fit's rules: 2 classes, not continuous
    model = _nb_with_classes(model, labels)
    model.priors = estimator.priors
    model._finalize()
    _adopt(estimator, model)


def _nb_with_classes(model, classes):
    """`model` over `classes` (sorted): its per-class rows moved to their classes' places,
    rows of zeros for the classes it has not seen; its classes missing from `classes` are
    stand-ins holding nothing and are dropped. Adapter onto fastml/naive_bayes/_classes.py:
    the class counts, the Gaussian parts' moments and the categorical parts' counts are the
    per-class tables."""
    import copy
    from .naive_bayes._classes import _GaussianPart
    if np.array_equal(model.classes_, classes):
        return model
    place = np.searchsorted(classes, model.classes_).clip(max=len(classes) - 1)
    kept = classes[place] == model.classes_

    def relaid(table):
        out = np.zeros((len(classes),) + table.shape[1:])
        out[place[kept]] = table[kept]
        return out

    model = copy.copy(model)
    model.classes_ = classes
    model.class_count_ = relaid(model.class_count_)
    model._parts = [copy.copy(part) for part in model._parts]
    for part in model._parts:
        if isinstance(part, _GaussianPart):
            part.moments = tuple(relaid(m) for m in part.moments)
        else:
            part.counts, part.n_classes = relaid(part.counts), len(classes)
    return model


def _nb_merge_models(a, b):
    """The naive Bayes model of the union of a's and b's rows, both over the same classes
    (adapter onto the parts of fastml/naive_bayes/_classes.py: counts add, moments merge by
    Chan's formula, category vocabularies first grown to their union). Updates a."""
    from ._core._moments import merge_moments
    from .naive_bayes._classes import _GaussianPart
    if getattr(a, "categorical_features_", None) is not None and not np.array_equal(
            a.categorical_features_, b.categorical_features_):
        column = int(np.flatnonzero(a.categorical_features_ != b.categorical_features_)[0])
        raise ValueError(f"column {column} is categorical in some partitions and numeric in "
                         f"others; give it one type (e.g. astype(str) or astype(float))")
    a.class_count_ = a.class_count_ + b.class_count_
    for part_a, part_b in zip(a._parts, b._parts):
        if isinstance(part_a, _GaussianPart):
            part_a.moments = merge_moments(part_a.moments, part_b.moments)
        else:
            _grow_vocabulary(part_a, part_b)
            _grow_vocabulary(part_b, part_a)
            part_a.counts = part_a.counts + part_b.counts
    return a     # finalized once, by _nb_finish


def _grow_vocabulary(part, other):
    """Add `other`'s levels to `part`'s vocabularies (its count columns move as
    partial_fit moves them)."""
    before = [len(c) for c in part.encoder.categories_]
    moved = part.encoder.add_levels(other.encoder.categories_)
    part.counts = part._relaid(before, moved)


def _adopt(estimator, fitted):
    """Copy the fitted state of `fitted` (same class and parameters) onto `estimator`."""
    params = set(estimator.get_params(deep=False))
    for key, value in vars(fitted).items():
        if key not in params:
            setattr(estimator, key, value)


# ---------------------------------------------------------------------------- the chunks
class _Chunk:
    """X (what the estimator is given: an array, or a DataFrame carrying the feature names),
    y, weight, the chunk's index and first row; `matrix` is X's values when fit_stream built
    them from numeric Arrow columns (a float array in the stream's layout), else None."""
    __slots__ = ("X", "y", "weight", "index", "start", "matrix")

    def __init__(self, X, y, weight, index, start, matrix=None):
        self.X, self.y, self.weight, self.index, self.start = X, y, weight, index, start
        self.matrix = matrix

    @property
    def n_rows(self):
        return self.X.shape[0]

    def total_weight(self):
        return rows_weight(self.n_rows, self.weight)


def rows_weight(n_rows, weight):
    """The total weight of n_rows rows: their sample weights' sum, n_rows without weights (the
    totals SGDEngine.relative_weights steps with, summed by the stream and the Dask driver)."""
    return float(n_rows if weight is None else np.sum(np.asarray(weight, dtype=np.float64)))


class _Labels:
    """What one pass over a source's target and weight columns found (_Stream.labels)."""

    def __init__(self, classes, rows, weight):
        self.classes, self.rows, self.weight = classes, rows, weight


class _Stream:
    """Chunks of a source, as (X, y, weight) with the column rules of fit: the same feature
    columns in every chunk, each column keeping its kind (numeric / categorical)."""

    def __init__(self, source, target, *, chunk_rows, columns, drop, weight, verbose, desc,
                 order="C"):
        if chunk_rows is not None and (not isinstance(chunk_rows, (int, np.integer))
                                       or isinstance(chunk_rows, bool) or chunk_rows < 1):
            raise ValueError(f"chunk_rows must be a positive integer; got {chunk_rows!r}")
        self.target, self.weight, self.chunk_rows = target, weight, chunk_rows
        self.columns = None if columns is None else list(columns)
        self.drop = [] if drop is None else list(drop)
        # a feature that is the target (or the weights) would be learned from: y = 1 * y
        leaked = [c for c in (target, weight) if c is not None and c in (self.columns or [])]
        if leaked:
            raise ValueError(f"columns lists {leaked}, which is the target / sample_weight "
                             f"column; columns names the features only")
        self.verbose, self.desc, self.order = verbose, desc, order
        self.reader = _reader_for(source, labels=(target,))
        self.passes = 0
        self.kinds = None
        self.at = None
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
        raws = self.reader.batches(self._needed(), self.chunk_rows)
        # a file's reader runs in a background thread; a user's iterable may not be safe to
        # drive from another thread
        chunks = self._read_in_background(raws) if self.reader.read_ahead else \
            self._split_all(raws)
        with progress(self.reader.total_rows(), desc=f"fit_stream {self.desc}", unit="row",
                      verbose=self.verbose) as bar:
            for chunk in chunks:
                self.at = (chunk.index, chunk.start)    # where an error in its fit comes from
                yield chunk
                bar.update(chunk.n_rows)
        self.at = None

    def _split_all(self, raws):
        """The non-empty chunks of the source's raw chunks, in order."""
        start, buffers = 0, _Buffers()
        for k, raw in enumerate(raws):
            chunk = self._split(raw, k, start, buffers)
            del raw     # the Arrow table is copied: do not hold it while the chunk is fitted
            if chunk.n_rows == 0:
                continue
            yield chunk
            start += chunk.n_rows
        if start == 0:
            raise ValueError("the source has no rows")

    def _read_in_background(self, raws):
        """_split_all's chunks of a file's Arrow tables, read by a background thread
        (_read_ahead) while the caller fits the last chunk; each chunk's arrays are built by
        the thread that would otherwise wait (_StageCosts), the reader's or the caller's."""
        buffers, costs = _Buffers(), _StageCosts()

        def read():     # in the reader thread: (k, start, raw table or its chunk)
            start, clock = 0, time.perf_counter()
            for k, raw in enumerate(raws):
                costs.read = time.perf_counter() - clock
                if not costs.build_in_caller():
                    raw = costs.timed_build(self._split, raw, k, start, buffers)
                yield k, start, raw
                start += raw.num_rows if _is_arrow(raw) else raw.n_rows
                del raw
                clock = time.perf_counter()

        rows = 0
        for k, start, item in _read_ahead(read()):
            chunk = item if isinstance(item, _Chunk) else \
                costs.timed_build(self._split, item, k, start, buffers)
            del item
            if chunk.n_rows == 0:
                continue
            rows += chunk.n_rows
            clock = time.perf_counter()
            yield chunk
            costs.fit = time.perf_counter() - clock
        if rows == 0:
            raise ValueError("the source has no rows")

    def classes(self):
        """The sorted distinct labels over the whole source, as fit would find them (None
        for a one-shot iterator: its first chunk decides, a new label later gets a clear
        error)."""
        labels = self.labels(with_classes=True)
        return None if labels is None else labels.classes

    def labels(self, with_classes):
        """One pass over the target and weight columns alone where the source can read
        columns (None for a one-shot iterator): the rows, their total weight and, with
        with_classes, the sorted distinct labels."""
        if not self.reader.repeatable:
            return None
        found, rows, weight = None, 0, 0.0
        for y, w in self.reader.label_values(self):
            if with_classes:
                labels = np.unique(_as_labels(y))
                found = labels if found is None else np.union1d(found, labels)
            rows += len(y)
            weight += rows_weight(len(y), w)
        if rows == 0:
            raise ValueError("the source has no rows")
        return _Labels(found, rows, weight)

    def _needed(self):
        """The columns to read from a file (None: all)."""
        if self.columns is None:
            return None
        extra = [c for c in (self.target, self.weight) if c is not None]
        return list(dict.fromkeys(self.columns + extra))

    def _split(self, raw, k, start, buffers=None):
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
        matrix = _numeric_matrix(raw, features, self.order, buffers) if _is_arrow(raw) \
            else None
        if matrix is not None:
            import pandas as pd
            frame, X = raw, pd.DataFrame(matrix, columns=features, copy=False)
        else:
            frame = _to_frame(raw)
            X = frame[features]
        self._check_kinds(X, k, start)
        w = None if self.weight is None else _column_values(frame, self.weight, np.float64)
        return _Chunk(X, _column_values(frame, self.target), w, k, start, matrix)

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
    from ._tabular import column_is_categorical, missing_mask
    if col.dtype == object:
        values = col.to_numpy()
        if missing_mask(values).all():
            return None
    return "categorical" if column_is_categorical(col) else "numeric"


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


def _numeric_matrix(table, features, order, buffers=None):
    """The feature columns of an all-numeric Arrow table as one float array in `order` ("C":
    rows, for the kernels that walk rows; "F": column-major), copied once from Arrow's column
    buffers, record batch by record batch (to_pandas would copy into a column-major block,
    and the estimator again to rows; concatenating a column's pieces would copy once more).
    None when a column is not an integer or a float (strings, bools, dates, ...): those go
    through to_pandas and fit's column rules. The array comes from `buffers` (a _Buffers)
    when given."""
    import pyarrow as pa
    from ._core._layout import fill_from_columns
    types = [table.schema.field(name).type for name in features]
    # bool columns are categorical by fit's rules (fastml._tabular): they take the other path
    if not features or not all(pa.types.is_floating(t) or pa.types.is_integer(t) for t in types):
        return None
    dtype = np.float32 if all(t == pa.float32() for t in types) else np.float64
    shape = (table.num_rows, len(features))
    out = np.empty(shape, dtype, order=order) if buffers is None else \
        buffers.empty(shape, dtype, order)
    start = 0
    for batch in table.select(features).to_batches():
        if batch.num_rows:
            # Arrow nulls become NaN (to_numpy's rule, as to_pandas makes them)
            fill_from_columns([column.to_numpy(zero_copy_only=False).astype(dtype, copy=False)
                               for column in batch.columns], out, start)
            start += batch.num_rows
    return out


class _StageCosts:
    """The seconds of the last chunk's three stages (reading the file, building its arrays,
    fitting it), each timed in the thread that ran it (elapsed, not CPU time: pyarrow decodes
    in its own pool's threads), which decide where the next chunk's arrays are built. With
    the reader
    building them, a chunk is done every max(read + build, fit) seconds; with the caller,
    every max(read, fit + build): the caller builds when that is shorter (a fit quicker than
    a read), the reader otherwise (and until the first fit is timed)."""

    def __init__(self):
        self.read = self.build = 0.0
        self.fit = np.inf

    def build_in_caller(self):
        return max(self.read, self.fit + self.build) < max(self.read + self.build, self.fit)

    def timed_build(self, split, raw, *args):
        clock = time.perf_counter()
        chunk = split(raw, *args)
        self.build = time.perf_counter() - clock
        return chunk


class _Buffers:
    """The arrays of one pass's chunks, each reused once nothing else refers to it.

    A fresh chunk-sized array is new memory from the system, faulted in page by page when the
    copy first writes it: that costs about as much as the copy itself. Reuse is safe by
    reference count: an array that only this pool refers to cannot be read by anyone (a numpy
    view, a DataFrame or a memoryview over it holds a reference). At most `SIZE` arrays are
    kept, the chunk being fitted and the next (see _read_ahead); when both are still in use
    (the caller has not yet let go of the last chunk), `empty` waits a little, then returns a
    fresh array that it does not keep."""
    SIZE = 2
    WAITS, WAIT_SECONDS = 10, 0.001

    def __init__(self):
        self.arrays = []

    def empty(self, shape, dtype, order):
        """An uninitialized array of that shape, dtype and order ("C" / "F")."""
        import sys
        contiguous = "F_CONTIGUOUS" if order == "F" else "C_CONTIGUOUS"
        for _ in range(self.WAITS):
            for array in self.arrays:
                # three references: the list, this loop's name and getrefcount's argument
                if sys.getrefcount(array) == 3 and array.shape == shape and \
                        array.dtype == dtype and array.flags[contiguous]:
                    return array
            if len(self.arrays) < self.SIZE:
                break
            time.sleep(self.WAIT_SECONDS)   # lets the caller's thread drop its last chunk
        out = np.empty(shape, dtype, order=order)
        if len(self.arrays) < self.SIZE:
            self.arrays.append(out)
        return out


def _to_frame(raw):
    if _is_frame(raw):
        return raw
    if hasattr(raw, "to_pandas"):      # a pyarrow RecordBatch / Table
        return raw.to_pandas()
    raise TypeError(f"a chunk of type {type(raw).__name__} is neither (X, y) nor a DataFrame "
                    f"nor an Arrow record batch")


# ---------------------------------------------------------------------------- the readers
def _reader_for(source, text_columns=(), labels=None):
    """The reader of a source; text_columns: CSV columns read as text, labels: the CSV
    columns that keep an integer type (see _CSVReader)."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        lowered = path.lower()
        if lowered.endswith(CSV_SUFFIXES):
            if not os.path.isfile(path):
                raise FileNotFoundError(f"no CSV file {path!r}")
            return _CSVReader(path, text_columns, labels)
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
    read_ahead = False    # a user's iterable may not be safe to drive from another thread

    def __init__(self, make, repeatable):
        self.make, self.repeatable = make, repeatable

    def total_rows(self):
        return None

    def column_names(self):
        return None

    def batches(self, columns, chunk_rows):
        return iter(self.make())

    raw_chunks = batches

    def label_values(self, stream):
        for chunk in stream.chunks():
            yield chunk.y, chunk.weight


def _pyarrow():
    purpose = "reading Parquet / CSV files chunk by chunk"
    for module in ("pyarrow.csv", "pyarrow.dataset"):
        require(module, "pandas", purpose)
    return require("pyarrow", "pandas", purpose)


def _default_rows(n_columns):
    return max(1024, CHUNK_BYTES // (8 * max(1, n_columns)))


class _ParquetReader:
    """Parquet files read one after the other, each by pyarrow's synchronous batch reader
    (a dataset scanner reads ahead as far as it likes; this holds one row group at most)."""
    repeatable = read_ahead = True

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

    def batches(self, columns, chunk_rows):
        """Arrow tables of `chunk_rows` rows (the last may be shorter)."""
        rows = chunk_rows or _default_rows(len(self.schema.names))
        return _rebatch(self._batches(columns, rows), rows)

    def raw_chunks(self, columns, chunk_rows):
        """`batches`, each read by a background thread while the caller uses the last."""
        return _read_ahead(self.batches(columns, chunk_rows))

    def _batches(self, columns, rows):
        import pyarrow.parquet as pq
        for path in self.files:
            # pre_buffer=False: by default pyarrow buffers ahead without bound (the whole file)
            with pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 22) as parquet:
                if parquet.schema_arrow.names != self.schema.names:
                    raise ValueError(f"{path} has columns {parquet.schema_arrow.names}; the "
                                     f"first file has {self.schema.names}")
                yield from parquet.iter_batches(batch_size=rows, columns=columns)

    def label_values(self, stream):
        return _file_label_values(self, stream)


class _CSVReader:
    """A CSV file read block by block. Column types are inferred from the first block; with
    `labels` given (fit_stream: the target), the integer columns other than those are read
    as float64, so a feature column whose first block holds only integers may hold a
    decimal later (its values become floats in the chunks' arrays anyway; a label column
    keeps its type, as the classes are its values)."""
    repeatable = read_ahead = True

    def __init__(self, path, text_columns=(), labels=None):
        _pyarrow()
        self.path = path
        self.text_columns = tuple(text_columns)
        self.labels = None if labels is None else tuple(labels)

    def total_rows(self):
        return None

    def column_names(self):
        return list(self._open(None).schema.names)

    def _open(self, columns):
        pa = _pyarrow()
        reader = self._open_as(columns, {})
        if self.labels is None:
            return reader
        floats = {field.name: pa.float64() for field in reader.schema
                  if pa.types.is_integer(field.type) and field.name not in self.labels}
        return self._open_as(columns, floats) if floats else reader

    def _open_as(self, columns, types):
        pa = _pyarrow()
        # the in-memory reader's conversion (an empty cell is missing, text columns stay text)
        options = csv_convert_options(columns, self.text_columns)
        options.column_types = {**options.column_types, **types}
        try:
            return pa.csv.open_csv(self.path, read_options=pa.csv.ReadOptions(
                block_size=CSV_BLOCK_BYTES), convert_options=options)
        except pa.ArrowInvalid as error:    # the first block is read here: name the file
            message = str(error)
            raise ValueError(_csv_ragged_error(message, self.path, "the first block") or
                             f"cannot read {self.path}: {message}") from None

    def batches(self, columns, chunk_rows):
        """Arrow tables of `chunk_rows` rows (the last may be shorter)."""
        reader = self._open(columns)
        rows = chunk_rows or _default_rows(len(reader.schema.names))
        return _rebatch(self._batches(reader), rows)

    def raw_chunks(self, columns, chunk_rows):
        """`batches`, each read by a background thread while the caller uses the last."""
        return _read_ahead(self.batches(columns, chunk_rows))

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

    def label_values(self, stream):
        return _file_label_values(self, stream)


def _file_label_values(reader, stream):
    """(target, weight or None) of each batch of a file, read alone."""
    columns = [stream.target] + ([stream.weight] if stream.weight is not None else [])
    for batch in reader.raw_chunks(columns, stream.chunk_rows):
        values = [batch.column(j).to_numpy(zero_copy_only=False) for j in range(len(columns))]
        yield values[0], values[1] if len(values) == 2 else None


def _csv_type_error(message, names, schema, k, row, path):
    ragged = _csv_ragged_error(message, path, f"block {k} (rows from {row})")
    if ragged:
        return ragged
    found = re.search(r"column #(\d+)", message)
    column = names[int(found.group(1))] if found and int(found.group(1)) < len(names) else "?"
    kind = schema.field(column).type if column in names else "?"
    return (f"{path}: column {column!r} changes type in block {k} (rows from {row}): it was "
            f"read as {kind} from the first block, and this block holds a value that is not "
            f"({message})")


def _csv_ragged_error(message, path, where):
    """The error for a row with more or fewer fields than the header (pyarrow's "Expected 3
    columns, got 4"), else None: it is no column's type changing."""
    found = re.search(r"Expected (\d+) columns, got (\d+)", message)
    if not found:
        return None
    expected, got = found.groups()
    return (f"{path}: a row in {where} has {got} fields where the header has {expected} "
            f"(a ragged row; every row needs one field per column) ({message})")


def _read_ahead(chunks):
    """The items of `chunks`, each made by a background thread while the caller uses the one
    before: Arrow's readers and fastml's array copies release the GIL, so on two cores reading
    the file overlaps fitting. The thread starts on item k + 2 only once the caller has taken
    item k + 1, so at most two chunks are alive at a time (the one the caller uses and the
    next), whatever the file's size. Only fastml's own file readers use it: a user's iterable
    may not be safe to drive from another thread. An error in the reader is raised in the
    caller; a caller that stops early stops the thread."""
    ready = queue.Queue()
    taken = threading.Semaphore(0)     # released each time the caller takes an item
    stop = threading.Event()
    end = object()

    def read():
        try:
            for chunk in chunks:
                ready.put((chunk, None))
                while not taken.acquire(timeout=0.05):
                    if stop.is_set():
                        return
            ready.put((end, None))
        except BaseException as error:  # handed to the caller, raised there
            ready.put((end, error))

    thread = threading.Thread(target=read, name="fastml-read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            chunk, error = ready.get()
            taken.release()
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
    small batches are joined, large ones sliced, so a chunk is what the caller asked for. While
    the caller holds a table, this holds none of its batches (the read-ahead thread keeps at
    most the table it is converting). A chunk does not span two column types: at a batch
    whose schema differs (a later Parquet file with an int64 column as double), the rows so
    far are a shorter chunk; the chunks' own checks then take a number for a number and name
    a column that turns to text (Arrow refused to join them: "Schema at index 1 was
    different")."""
    pending, count = [], 0
    for batch in batches:
        if pending and not batch.schema.equals(pending[0].schema, check_metadata=False):
            count = 0
            yield _joined(pending)
        offset, size = 0, batch.num_rows
        while offset < size:
            take = min(rows - count, size - offset)
            pending.append(batch.slice(offset, take))
            count += take
            offset += take
            if offset == size:
                batch = None
            if count == rows:
                count = 0
                yield _joined(pending)
    if count:
        yield _joined(pending)


def _joined(pending):
    """One table of the batches in `pending`, which is emptied (a generator that yields the
    table holds no reference to it or to them)."""
    import pyarrow as pa
    table = pa.Table.from_batches(pending)
    pending.clear()
    return table
