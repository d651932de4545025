"""Fitting on data larger than memory: `fit_stream` reads a source chunk by chunk and runs the
estimator's plan over the chunks, one after the other.

This module knows no estimator. Each estimator's plan (fastml/_plans.py, built by its
family; docs/developers/architecture.rst) says what a chunk contributes, and the stream folds
the chunks into it:
- Statistics, one pass: each chunk's statistics merged into the running total, finished once
  (naive Bayes, LinearRegression / Ridge / PolynomialRegression with solver="normal"): equal
  to `fit` on the whole table;
- Objective, one pass per evaluation: the chunks' sums of loss and gradient (and Hessian)
  added up for the estimator's own solver (LogisticRegression lbfgs / gd / newton): the
  in-memory fit's iterates;
- Passes, `epochs` passes of partial_fit over the chunks (the SGD family). Rows are shuffled
  within each chunk (the estimator's `shuffle`); step-size schedules, the step count and
  averaging carry on across chunks, and every chunk of pass e runs as epoch e, so with
  shuffle=False the result equals `fit` on the concatenation with max_iter=epochs, tol=None
  (for mini-batches, when the chunk sizes are multiples of batch_size). Every pass steps with
  the whole source's rows and weight as its totals, as fit's epochs do: a repeatable source
  gets one pass over its label and weight columns first (beside the first chunk's read, for
  a file; it also finds the classes). A one-shot iterator cannot, so its first chunk fixes
  the classes and its first pass weighs by the rows read so far, as partial_fit does.
  `progressive_loss_` and `loss_curve_` get one value per pass; an estimator with
  early_stopping="progressive" stops making passes once that progressive loss has not
  improved by its `tol` for `n_iter_no_change` passes;
- an ensemble grown per part, or no plan at all (trees, the kernel perceptron): NotScalable,
  with the estimator's reason.

Every fit is a transaction: it runs on a working copy, so one that fails at any chunk leaves
the estimator exactly as it was, and a data error names the chunk and its first row.

Sources (fastml/_readers.py): a Parquet file, a directory of Parquet files or a glob, a CSV
file, an iterable of (X, y) or (X, y, sample_weight) chunks or of DataFrames, or a callable
returning a fresh such iterable. Fits that read the data more than once need a file or a
callable; a one-shot iterator gets one pass and a clear error otherwise.

Memory: at most two chunks are alive (the one being fitted, the next being read by a
background thread), plus the reader's buffer (a CSV block; a Parquet page per column). A fit
that reads a file's features more than once (batch solvers, several epochs, or a label pass
over a CSV) writes each chunk as it was built into a temporary directory on the first pass
(the cache) and memory-maps it back on the next passes: the file is parsed once.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from typing import Any, Optional, Sequence, TYPE_CHECKING, Union

import numpy as np

from ._plans import (Schema, add_up, float_dtype, label_summary, located, plan_for,
                     record_features, transaction)
from ._progress import progress
from ._readers import (BLOCK_BYTES, column_values, numeric_matrix, open_source,
                       read_ahead as _read_ahead)
from .exceptions import NotScalable

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from ._typing import EstimatorT

__all__ = ["fit_stream"]

CSV_BLOCK_BYTES = BLOCK_BYTES   # the CSV reader's block (tests make it small)


def fit_stream(estimator: EstimatorT, source: Any, target: Optional[str] = None, *,
               chunk_rows: Optional[int] = None, epochs: Optional[int] = None,
               columns: Optional[Union[str, Sequence[str]]] = None,
               drop: Optional[Union[str, Sequence[str]]] = None,
               sample_weight: Optional[str] = None, cache: Union[bool, str] = True,
               verbose: Optional[int] = None) -> EstimatorT:
    """Fit `estimator` on `source` chunk by chunk, holding about two chunks in memory.

    Parameters
    ----------
    estimator : fastml estimator
        Unfitted, or fitted (the new fit replaces the old one; a fit that fails leaves it as
        it was). Which estimators stream, and how exactly, is in the user guide's
        "Streaming" page; the others raise NotScalable with the reason.
    source : str, path, iterable or callable
        A Parquet file, a directory of Parquet files or a glob, or a CSV file (.csv, .tsv,
        .csv.gz, .csv.bz2); an iterable of (X, y), (X, y, sample_weight) or DataFrame
        chunks; or a callable returning a fresh such iterable (needed for fits that read the
        data more than once).
    target : str, optional
        The label / target column (tabular sources; not used with (X, y) chunks).
    chunk_rows : int, optional
        Rows per chunk read from a file (default: about 16 MB of float64 features).
        Iterables keep their own chunks.
    epochs : int, optional
        Passes of the SGD family (default 1; fewer when the estimator has
        early_stopping="progressive" and its progressive loss stops improving). Other
        estimators make the passes their algorithm needs.
    columns : str or list of str, optional
        The feature columns (default: all but target, sample_weight and drop).
    drop : str or list of str, optional
        Columns to leave out.
    sample_weight : str, optional
        The column holding the row weights (tabular sources).
    cache : bool or str, default True
        When the fit reads a file's features more than once, copy its chunks on the first
        pass into a temporary directory (a str: inside that directory) and read them back
        from there, memory-mapped; removed when the fit ends. False reads the file again
        every pass.
    verbose : int, optional
        Progress over the rows read (default: the estimator's `verbose`, else 0).

    Returns
    -------
    estimator
        The fitted estimator.

    Raises
    ------
    NotScalable
        The estimator cannot be fitted chunk by chunk (the message says why and what to do).
    ValueError
        Bad data, naming the chunk and its first row.

    Examples
    --------
    >>> import numpy as np
    >>> import fastml
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(1000, 3))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> chunks = [(X[i:i + 250], y[i:i + 250]) for i in range(0, 1000, 250)]
    >>> model = fastml.fit_stream(fastml.GaussianNB(), chunks)
    >>> bool(np.allclose(model.theta_, fastml.GaussianNB().fit(X, y).theta_))
    True
    """
    plan = _plan_for(estimator, epochs)
    if verbose is None:
        verbose = getattr(estimator, "verbose", 0) or 0
    stream = _Stream(source, target, chunk_rows=chunk_rows, columns=columns, drop=drop,
                     weight=sample_weight, verbose=verbose, desc=type(estimator).__name__,
                     order=plan.layout, frames=plan.frames)
    try:
        if cache is not False and stream.reads_features(plan, epochs) > 1:
            stream.cache_in(None if cache is True else cache)
        with transaction(estimator) as working:
            _RUNNERS[plan.kind](working, plan, stream, epochs)
    except ValueError as error:
        where = error if stream.at is None else located(error, "chunk", *stream.at)
        if where is error:
            raise
        raise where from error
    finally:
        stream.close()
    return estimator


def _plan_for(estimator, epochs):
    """The estimator's plan, with `epochs` checked against it."""
    plan = plan_for(estimator, "by fit_stream")
    if epochs is not None:
        if not isinstance(epochs, (int, np.integer)) or isinstance(epochs, bool) or epochs < 1:
            raise ValueError(f"epochs must be a positive integer; got {epochs!r}")
        if epochs != 1 and plan.kind in ("statistics", "objective"):
            raise ValueError(f"epochs={epochs} is for the SGD family; "
                             f"{type(estimator).__name__} is fitted exactly (one pass of "
                             f"statistics, or one pass per solver iteration)")
    return plan


def _layout_for(estimator, plan):
    """"C" or "F": the order of the arrays built from numeric Arrow chunks, the plan's (its
    kernels read either; "F" costs one memcpy per Arrow column, about half the transposing
    copy into rows)."""
    return plan.layout


# ------------------------------------------------------------------ the plans, chunk by chunk
def _run_statistics(estimator, plan, stream, epochs):
    context = plan.start(estimator, stream.labels(plan.classes) if plan.needs_labels
                         else None)
    total = None
    for chunk in stream.chunks():
        statistics = plan.part(*stream.given(chunk), context)
        total = statistics if total is None else total if statistics is None else \
            plan.merge(total, statistics)
    plan.finish(estimator, total, stream.schema())
    record_features(estimator, stream.schema())


def _run_objective(estimator, plan, stream, epochs):
    """The solver's iterations, each evaluation of its objective one pass over the chunks."""
    stream.require_passes("reads the data once per iteration")
    context = plan.start(estimator, stream.labels(plan.classes))

    def total(fn, *args):
        return add_up(fn(plan.prepare(*stream.given(chunk), context), context, *args)
                      for chunk in stream.chunks())

    plan.solve(estimator, context, total, stream.schema())
    record_features(estimator, stream.schema())


def _run_passes(estimator, plan, stream, epochs):
    """partial_fit on every chunk, pass after pass; every chunk of pass e runs as epoch e.
    Every pass steps with one pass's rows and weight as the totals: the first with those of
    the label pass (when the source gets one), the later ones with the first pass's."""
    n_passes, stop = plan.schedule(estimator, epochs or 1)
    labels = _labels_meanwhile(stream, plan.classes) \
        if plan.needs_labels or stream.weight is not None else None
    context = None if labels is not None else plan.start(estimator, None)
    model, totals, curve, progressive = None, None, [], []
    for epoch in range(n_passes):
        terms = None
        for chunk in stream.chunks():
            if context is None:     # the first chunk is there: so are the labels
                summary = labels() or _first_chunk_labels(chunk, plan.classes)
                context = plan.start(estimator, summary)
                totals = plan.totals(context, summary)
            model, part = _step(plan, model, stream, chunk, epoch, totals, context)
            terms = part if terms is None else terms + part
        loss, progressive_loss = terms.means()
        curve.append(loss)
        progressive.append(progressive_loss)
        if stop(loss, progressive_loss):
            break
        totals = (terms.rows, terms.weight)
    plan.finish(estimator, model, curve, progressive)
    record_features(estimator, stream.schema())


def _step(plan, model, stream, chunk, epoch, totals, context):
    try:
        return plan.step(*stream.given(chunk), context, model, epoch, totals)
    except ValueError as error:
        if "labels not in classes_" in str(error) and not stream.reader.repeatable:
            raise ValueError(_ONE_SHOT_CLASSES.format(
                what=f"not every label: chunk {chunk.index} (rows from {chunk.start}) brings "
                     f"a label the first chunk did not have ({error})")) from None
        raise


def _first_chunk_labels(chunk, with_classes):
    """A one-shot iterator's labels: its first chunk's (it cannot be read twice)."""
    summary = label_summary(None, chunk.y, None, with_classes)
    if with_classes and len(summary.classes) < 2:
        raise ValueError(_ONE_SHOT_CLASSES.format(
            what=f"only the class {summary.classes.tolist()!r}"))
    summary.rows = summary.weight = None        # the totals are not known
    return summary


_ONE_SHOT_CLASSES = ("with a one-shot iterator the first chunk fixes the classes, and it holds "
                     "{what}; pass a file, or a callable returning a fresh iterable, so that "
                     "fit_stream can read the labels first")


def _labels_meanwhile(stream, with_classes):
    """stream.labels(with_classes) as a function to call when the first chunk is there. A
    file's target and weight columns are read by a background thread meanwhile (the pass
    over them overlaps the first chunk's read); other sources, and a file being cached (the
    label pass is then the pass that writes the cache), are read now."""
    if not stream.reader.threads or stream.cache is not None:
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


def _run_ensemble(estimator, plan, stream, epochs):
    raise NotScalable(f"{stream.desc} cannot be fitted by fit_stream: "
                      f"{plan.why_not_sequential}")


def _run_columns(estimator, plan, stream, epochs):
    chunk = next(iter(stream.chunks()))
    plan.finish(estimator, chunk.X[:1] if not hasattr(chunk.X, "iloc") else chunk.X.iloc[:1])


_RUNNERS = {"statistics": _run_statistics, "objective": _run_objective,
            "passes": _run_passes, "ensemble": _run_ensemble, "columns": _run_columns}


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


class _Stream:
    """Chunks of a source, as (X, y, weight) with the column rules of fit: the same feature
    columns in every chunk, each column keeping its kind (numeric / categorical)."""

    def __init__(self, source, target, *, chunk_rows, columns, drop, weight, verbose, desc,
                 order="C", frames=False):
        if chunk_rows is not None and (not isinstance(chunk_rows, (int, np.integer))
                                       or isinstance(chunk_rows, bool) or chunk_rows < 1):
            raise ValueError(f"chunk_rows must be a positive integer; got {chunk_rows!r}")
        self.target, self.weight, self.chunk_rows = target, weight, chunk_rows
        self.columns = None if columns is None else _names(columns, "columns")
        self.drop = [] if drop is None else _names(drop, "drop")
        # a feature that is the target (or the weights) would be learned from: y = 1 * y
        leaked = [c for c in (target, weight) if c is not None and c in (self.columns or [])]
        if leaked:
            raise ValueError(f"columns lists {leaked}, which is the target / sample_weight "
                             f"column; columns names the features only")
        self.verbose, self.desc, self.order, self.frames = verbose, desc, order, frames
        self.reader = open_source(source, labels=(target,), block_bytes=CSV_BLOCK_BYTES)
        self.passes, self.kinds, self.at, self.cache, self.first = 0, None, None, None, None
        self.width = self.names = self.dtype = None
        names = self.reader.column_names()
        if names is not None:
            _refuse_duplicates(names, "the source")
            missing = [c for c in [target, weight, *(self.columns or []), *self.drop]
                       if c is not None and c not in names]
            if missing:
                raise ValueError(f"the source has no column(s) {missing}; it has {names}")
            if target is None:
                raise ValueError("target is required for tabular sources: the name of the "
                                 "label / target column")

    # --- what the executor asks
    def given(self, chunk):
        """(X, y, w) as the plan's per-part functions take them: the chunk's numeric array,
        or its DataFrame (the plan keeps names, or the columns are not all numbers)."""
        X = chunk.X if self.frames or chunk.matrix is None else chunk.matrix
        return X, chunk.y, chunk.weight

    def schema(self):
        """The features (reading the first chunk if no pass has yet)."""
        if self.width is None:
            self.peek()
        return Schema(self.width, self.names, self.dtype)

    def peek(self):
        """Read the first chunk (kept for the next pass of a one-shot source)."""
        chunks = self.chunks()
        first = next(chunks)
        if not self.reader.repeatable:
            self.first = first
            self.passes -= 1
        chunks.close()

    def require_passes(self, why):
        if not self.reader.repeatable:
            raise ValueError(f"{self.desc} {why}, but the source is a one-shot iterator; "
                             f"pass a file, or a callable that returns a fresh iterable")

    def reads_features(self, plan, epochs):
        """How many times `plan` reads the features of a file (0 for other sources): a
        label pass reads them too where the file has no columns of its own (a CSV)."""
        if not (self.reader.repeatable and self.reader.threads):
            return 0
        reads = {"objective": 2, "passes": epochs or 1}.get(plan.kind, 1)
        label_pass = plan.needs_labels or (plan.kind == "passes" and self.weight is not None)
        return reads + (label_pass and not self.reader.columnar)

    def cache_in(self, directory):
        self.cache = _ChunkCache(directory)

    def close(self):
        if self.cache is not None:
            self.cache.close()

    # --- passes
    def chunks(self):
        """One pass over the source: _Chunk objects, with progress in rows."""
        if self.passes and not self.reader.repeatable:
            raise ValueError(
                f"{self.desc} needs another pass over the data, but the source is a one-shot "
                f"iterator; pass a file, or a callable that returns a fresh iterable")
        self.passes += 1
        if self.cache is not None and self.cache.complete:
            chunks = self.cache.chunks(self.names if self.frames else None)
        else:
            chunks = self._built_chunks()
        with progress(self.reader.total_rows(), desc=f"fit_stream {self.desc}", unit="row",
                      verbose=self.verbose) as bar:
            for chunk in chunks:
                self.at = (chunk.index, chunk.start)    # where an error in its fit comes from
                self._check_width(chunk)
                yield chunk
                bar.update(chunk.n_rows)
        self.at = None

    def _built_chunks(self):
        """The chunks built from the reader (kept in the cache, when there is one)."""
        if self.first is not None:
            first, self.first = self.first, None
            yield first
        raws = self.reader.batches(self._needed(), self.chunk_rows)
        # a file's reader runs in a background thread; a user's iterable may not be safe to
        # drive from another thread
        chunks = self._read_in_background(raws) if self.reader.threads else \
            self._split_all(raws)
        if self.cache is not None:
            self.cache.restart()
        yield from chunks
        if self.cache is not None:
            self.cache.complete = True

    def _check_width(self, chunk):
        """Every chunk has the first's number of features (each chunk is fitted on its own:
        without this a merge failed deep in the moments, or dropped a column)."""
        width = chunk.X.shape[1]
        if self.width is None:
            X = chunk.X if chunk.matrix is None else chunk.matrix
            self.width = width
            self.names = list(X.columns) if hasattr(X, "columns") else \
                list(chunk.X.columns) if hasattr(chunk.X, "columns") else None
            self.dtype = float_dtype(X.dtypes if hasattr(X, "dtypes") else
                                     [getattr(X, "dtype", None)])
        elif width != self.width:
            raise ValueError(f"chunk {chunk.index} (rows from {chunk.start}) has {width} "
                             f"features; the chunks before had {self.width}")

    def _split_all(self, raws):
        """The non-empty chunks of the source's raw chunks, in order."""
        start, buffers = 0, _Buffers()
        for k, raw in enumerate(raws):
            chunk = self._build(raw, k, start, buffers)
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
                    raw = costs.timed_build(self._build, raw, k, start, buffers)
                yield k, start, raw
                start += raw.num_rows if _is_arrow(raw) else raw.n_rows
                del raw
                clock = time.perf_counter()

        rows = 0
        for k, start, item in _read_ahead(read()):
            chunk = item if isinstance(item, _Chunk) else \
                costs.timed_build(self._build, item, k, start, buffers)
            del item
            if chunk.n_rows == 0:
                continue
            rows += chunk.n_rows
            clock = time.perf_counter()
            yield chunk
            costs.fit = time.perf_counter() - clock
        if rows == 0:
            raise ValueError("the source has no rows")

    def labels(self, with_classes):
        """One pass over the target and weight columns where the source can read them alone
        (else over the chunks: a file being cached is cached by it): a LabelSummary of the
        rows, their total weight (checked as fit checks it) and, with with_classes, the
        sorted distinct labels. None for a one-shot iterator (its first chunk decides)."""
        if not self.reader.repeatable:
            return None
        summary = None
        for k, start, y, w in self._label_values():
            try:
                part = label_summary(None, y, w, with_classes)
                summary = part if summary is None else summary.merge(part)
            except ValueError as error:
                raise located(error, "chunk", k, start) from None
        if summary is None or summary.rows == 0:
            raise ValueError("the source has no rows")
        if summary.weight == 0:
            raise ValueError("sample_weight sums to 0 (zero everywhere): nothing to learn from")
        return summary

    def _label_values(self):
        """(chunk index, first row, labels, weights or None) of each chunk of one pass."""
        if self.cache is not None or not self.reader.threads:
            for chunk in self.chunks():
                yield chunk.index, chunk.start, chunk.y, chunk.weight
            return
        columns = [self.target] + ([self.weight] if self.weight is not None else [])
        start = 0
        for k, table in enumerate(_read_ahead(self.reader.batches(columns, self.chunk_rows))):
            values = [table.column(j).to_numpy(zero_copy_only=False)
                      for j in range(len(columns))]
            yield k, start, values[0], values[1] if len(values) == 2 else None
            start += table.num_rows

    def classes(self):
        """The sorted distinct labels over the whole source, as fit would find them (None
        for a one-shot iterator)."""
        labels = self.labels(with_classes=True)
        return None if labels is None else labels.classes

    def _needed(self):
        """The columns to read from a file (None: all)."""
        if self.columns is None:
            return None
        extra = [c for c in (self.target, self.weight) if c is not None]
        return list(dict.fromkeys(self.columns + extra))

    def _build(self, raw, k, start, buffers):
        """The chunk of a raw chunk, written to the cache when there is one (by the thread
        that builds it: _StageCosts weighs the write with the build)."""
        chunk = self._split(raw, k, start, buffers)
        if self.cache is not None and chunk.n_rows:
            self.cache.write(chunk)
        return chunk

    def _split(self, raw, k, start, buffers=None):
        if isinstance(raw, tuple):
            return self._split_tuple(raw, k, start)
        if self.target is None:
            raise ValueError("target is required for tabular sources: the name of the label "
                             "/ target column")
        names = list(raw.column_names if _is_arrow(raw) else _to_frame(raw).columns)
        _refuse_duplicates(names, f"chunk {k} (rows from {start})")
        missing = [c for c in [self.target, self.weight, *(self.columns or []), *self.drop]
                   if c is not None and c not in names]
        if missing:
            raise ValueError(f"chunk {k} (rows from {start}) has no column(s) {missing}; "
                             f"it has {names}")
        features = self.columns if self.columns is not None else [
            c for c in names if c not in (self.target, self.weight) and c not in self.drop]
        matrix = numeric_matrix(raw, features, self.order, buffers) if _is_arrow(raw) \
            else None
        if matrix is not None:
            import pandas as pd
            frame, X = raw, pd.DataFrame(matrix, columns=features, copy=False)
        else:
            frame = _to_frame(raw)
            X = frame[features]
        self._check_kinds(X, k, start)
        w = None if self.weight is None else column_values(frame, self.weight, np.float64)
        return _Chunk(X, column_values(frame, self.target), w, k, start, matrix)

    def _split_tuple(self, raw, k, start):
        """An (X, y) or (X, y, sample_weight) chunk; lists become arrays."""
        if len(raw) not in (2, 3):
            raise ValueError(f"chunk {k} is a tuple of {len(raw)} items; expected (X, y) "
                             f"or (X, y, sample_weight)")
        if self.weight is not None:
            raise ValueError("sample_weight names a column, but the chunks are (X, y) "
                             "tuples: give weights as (X, y, sample_weight)")
        X, y, w = (np.asarray(v) if isinstance(v, (list, tuple)) else v
                   for v in (*raw, None)[:3])
        if _is_frame(X):
            _refuse_duplicates(list(X.columns), f"chunk {k} (rows from {start})")
            self._check_kinds(X, k, start)
        elif getattr(X, "ndim", 2) != 2:
            raise ValueError(f"chunk {k} (rows from {start}): X must be 2-D (rows, "
                             f"features); got shape {getattr(X, 'shape', None)}")
        return _Chunk(X, y, w, k, start)

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


def _names(value, what):
    """A list of column names: one name given as a str is that name (not its letters)."""
    if isinstance(value, str):
        return [value]
    names = list(value)
    bad = [n for n in names if not isinstance(n, str)]
    if bad:
        raise ValueError(f"{what} must name columns (str); got {bad!r}")
    return names


def _refuse_duplicates(names, where):
    seen, twice = set(), []
    for name in names:
        if name in seen and name not in twice:
            twice.append(name)
        seen.add(name)
    if twice:
        raise ValueError(f"{where} has more than one column named {twice}; give every "
                         f"column its own name")


class _ChunkCache:
    """The chunks of one pass, written as they are built into a temporary directory and read
    back by later passes, memory-mapped: a CSV file is parsed once, a Parquet file decoded
    once, and no chunk is converted to the estimator's layout again. A numeric chunk's
    features are a .npy file in that layout (mapped copy-on-write: a kernel may read it in
    place), its labels and weights an uncompressed Arrow IPC file; a chunk with text columns
    is an Arrow IPC file of its columns. Each chunk is its own mapping, released with the
    chunk, so memory holds the chunks in use only."""
    Y, W = "__fastml_y__", "__fastml_w__"

    def __init__(self, directory):
        self.directory = tempfile.mkdtemp(prefix="fastml-stream-", dir=directory)
        self.written, self.complete = {}, False

    def restart(self):
        self.written, self.complete = {}, False

    def write(self, chunk):
        """Write a chunk (from either thread of the pass: the files are named by its index)."""
        import pyarrow as pa
        base = os.path.join(self.directory, str(chunk.index))
        columns = {self.Y: pa.array(np.asarray(chunk.y))}
        if chunk.weight is not None:
            columns[self.W] = pa.array(np.asarray(chunk.weight, dtype=np.float64))
        if chunk.matrix is not None:
            np.save(base + ".npy", chunk.matrix)
            table = pa.table(columns)
        else:
            table = pa.Table.from_pandas(chunk.X, preserve_index=False)
            for name, values in columns.items():
                table = table.append_column(name, values)
        with pa.OSFile(base + ".arrow", "wb") as sink, \
                pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        self.written[chunk.index] = (chunk.start, chunk.matrix is not None)

    def chunks(self, names):
        """The chunks written, in order; a numeric chunk's X is its mapped array, or a
        DataFrame over it with `names` (None: the plan takes arrays; a DataFrame around a
        mapping may outlive the chunk until the garbage collector finds it)."""
        import pandas as pd
        import pyarrow as pa
        for index in sorted(self.written):
            start, numeric = self.written[index]
            base = os.path.join(self.directory, str(index))
            with pa.memory_map(base + ".arrow") as source:
                table = pa.ipc.open_file(source).read_all()
                y = table.column(self.Y).to_numpy(zero_copy_only=False)
                w = table.column(self.W).to_numpy().copy() if self.W in table.column_names \
                    else None
                if numeric:
                    matrix = X = np.load(base + ".npy", mmap_mode="c")
                    if names is not None:
                        X = pd.DataFrame(matrix, columns=names, copy=False)
                else:
                    matrix, X = None, table.drop_columns(
                        [c for c in (self.Y, self.W) if c in table.column_names]).to_pandas()
                del table
            yield _Chunk(X, y, w, index, start, matrix)

    def close(self):
        shutil.rmtree(self.directory, ignore_errors=True)


class _StageCosts:
    """The seconds of the last chunk's three stages (reading the file, building its arrays,
    fitting it), each timed in the thread that ran it (elapsed, not CPU time: pyarrow decodes
    in its own pool's threads), which decide where the next chunk's arrays are built. With
    the reader building them, a chunk is done every max(read + build, fit) seconds; with the
    caller, every max(read, fit + build): the caller builds when that is shorter (a fit
    quicker than a read), the reader otherwise (and until the first fit is timed)."""

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


def _column_kind(col):
    """'numeric' or 'categorical' by fit's rule (_tabular); None for an all-missing column,
    which fits either."""
    from ._tabular import column_is_categorical, missing_mask
    if col.dtype == object:
        values = col.to_numpy()
        if missing_mask(values).all():
            return None
    return "categorical" if column_is_categorical(col) else "numeric"


def _is_frame(X):
    return hasattr(X, "columns") and hasattr(X, "iloc")


def _is_arrow(raw):
    return hasattr(raw, "column_names") and hasattr(raw, "to_pandas")
