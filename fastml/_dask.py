"""The dask backend (fastml/_router.py): `fit` on dask arrays / DataFrames runs the estimator's
plan over the partitions, and every fitted estimator's predict / predict_proba /
decision_function / transform returns a lazy dask collection.

This module knows no estimator; each plan (fastml/_plans.py, docs/developers/architecture.rst)
says what a partition contributes:
- Statistics: merged pairwise in a tree on the workers, one graph. Exact;
- Objective: the partitions prepared once and persisted on the workers; each evaluation of the
  solver's objective is one task per partition carrying the parameters, its sums added on the
  client. Exact;
- Passes: iterative parameter mixing: each round every partition runs one local pass from the
  mixed model (its own seed from random_state, round and partition), mixed by the family's
  rule, weighted by the partitions' weights; up to max_iter rounds, stopping on tol as fit
  does. Deterministic for a seed and a partitioning; not the single-machine path;
- Ensemble: each partition grows its share of the members on its own rows;
- Columns: fitted from the collection's columns.
A fit runs on a working copy (one that fails leaves the estimator as it was); a data error
names the partition and its first row. A lost worker's tasks are retried by Dask elsewhere.
With a dask.distributed Client the work runs on its cluster, else on dask's local scheduler.
"""
import functools
import re
import warnings

import numpy as np

from ._plans import (Schema, float_dtype, label_summary, located, merged_labels, plan_for,
                     record_features, run_on_parts, transaction)
from ._router import is_dask_collection


# ----------------------------------------------------------------------------- fit
def fit(estimator, X, y=None, sample_weight=None, **kwargs):
    """The estimator's plan over the partitions of X, y (see the module note)."""
    if kwargs:
        raise TypeError(f"{type(estimator).__name__}.fit on dask input takes X, y, "
                        f"sample_weight; got {sorted(kwargs)}")
    plan = plan_for(estimator, "on a dask collection")
    schema = _schema(X)
    if plan.kind == "columns":
        with transaction(estimator) as working:
            plan.finish(working, _sample(X))
        return estimator
    if sample_weight is not None and not is_dask_collection(sample_weight):
        raise TypeError("X is a dask collection: give sample_weight as a dask array / Series "
                        "partitioned like X")
    parts = _Partitions(X, y, sample_weight, schema)
    try:
        with transaction(estimator) as working:
            run_on_parts(working, plan, parts, "on a dask collection")
            record_features(working, schema)
    except ValueError as error:
        where = parts.locate(error)
        if where is error:
            raise
        raise where from error
    finally:
        parts.release()
    return estimator


def summarize(plan, X, y):
    """A Statistics plan's finished result over the partitions of X, y (not an estimator's:
    fastml.info's tables)."""
    total = _Partitions(X, y, None).map_reduce(plan.part, plan.merge, plan.start(None, None))
    if total is None:
        raise ValueError("y is empty")
    return plan.finish(None, total, _schema(X))


def _schema(X):
    if _is_frame(X):
        return Schema(len(X.columns), list(X.columns), float_dtype(X.dtypes))
    if getattr(X, "ndim", None) != 2:
        raise ValueError(f"X is a {getattr(X, 'ndim', '?')}-D dask array; expected 2-D "
                         f"(n_samples, n_features)")
    return Schema(X.shape[1], None, float_dtype([X.dtype]))


def _sample(X):
    """One row with X's columns (meta: no data is computed)."""
    return X._meta_nonempty.iloc[:1] if _is_frame(X) else np.zeros((1, X.shape[1]), X.dtype)


# ------------------------------------------------------------------------------ the data
class _Partitions:
    """The (X, y, sample_weight) partitions of the input, or values derived from them on the
    workers, and how to run a function on each (never on a partition without rows). They are
    persisted on the workers (or in this process without a client) the first time `map` or
    `derive` runs over them; a single map_reduce runs as one graph instead, the partitions
    computed by the tasks that use them (one round trip to the scheduler, not two). Small
    arguments (the parameters of an evaluation) travel inside the tasks: a lost worker's
    tasks are then simply rerun elsewhere."""

    def __init__(self, X, y, sample_weight, schema=None):
        self.parts, self.starts = _partition_triples(X, y, sample_weight)
        self.client, self.raw, self._futures = _client(), True, None
        self._schema = schema

    def schema(self):
        return self._schema

    def labels(self, with_classes, each=False):
        """The LabelSummary of all partitions (weights checked as fit checks them); with
        each, also every partition's (None for one without rows)."""
        return merged_labels(self.map(label_summary, with_classes), each)

    @property
    def futures(self):
        """The partitions persisted where they are computed (once)."""
        if self._futures is None:
            self._futures = self._compute(self.parts, keep=True)
        return self._futures

    def _tasks(self, func, args, indexed=False, parts=None):
        import dask
        parts = self.futures if parts is None else parts
        return [dask.delayed(_apply, pure=False)(p, (i, start), func, args, self.raw, indexed)
                for i, (p, start) in enumerate(zip(parts, self.starts))]

    def _compute(self, tasks, keep=False):
        import dask
        if self.client is not None:
            futures = self.client.compute(tasks)
            return futures if keep else self.client.gather(futures)
        return list(dask.persist(*tasks) if keep else dask.compute(*tasks, scheduler="sync"))

    def map(self, func, *args, indexed=False):
        """[func(X_i, y_i, w_i, *args) for each partition i] (with indexed=True,
        func(X_i, y_i, w_i, i, *args); derived partitions: func(value_i, *args)), computed
        where the data are; None for a partition without rows."""
        return self._compute(self._tasks(func, args, indexed))

    def derive(self, func, *args):
        """New partitions func(X_i, y_i, w_i, *args), kept on the workers."""
        futures = self._compute(self._tasks(func, args), keep=True)
        if self.client is not None:
            _raise_first_error(futures)    # validation errors surface here
        derived = object.__new__(_Partitions)
        derived.client, derived.parts, derived.starts = self.client, None, self.starts
        derived.raw, derived._futures = False, futures
        return derived

    def map_reduce(self, func, merge, *args):
        """func on every partition, then `merge` pairwise in a tree on the workers: one graph
        (on the persisted partitions if they are, else on the partitions' own tasks)."""
        import dask
        values = self._tasks(func, args, parts=self._futures or self.parts)
        while len(values) > 1:
            paired = [dask.delayed(_merge_or_keep)(merge, a, b)
                      for a, b in zip(values[::2], values[1::2])]
            values = paired + ([values[-1]] if len(values) % 2 else [])
        if self.client is None:
            return values[0].compute(scheduler="sync")
        return self.client.compute(values[0]).result()

    def locate(self, error):
        """`error` with the first row of the partition it names, when the partition's start
        was not known where it was raised (a DataFrame's partitions: counted now)."""
        found = re.search(r" \(in partition (\d+)\)$", str(error))
        if type(error) is not ValueError or not found or self.parts is None:
            return error
        import dask
        index = int(found.group(1))
        start = sum(dask.compute(*[dask.delayed(_rows_of)(p) for p in self.parts[:index]]))
        return ValueError(f"{str(error)[:found.start()]} (in partition {index}, rows from "
                          f"{start})")

    def release(self):
        if self.client is not None and self._futures is not None:
            self.client.cancel(self._futures)


def _apply(part, where, fn, extra, raw, indexed):
    """fn on one partition (None for one without rows); a data error names the partition
    (and its first row, when known)."""
    if part is None or (raw and _rows(part[0]) == 0):
        return None
    args = part if raw else (part,)
    try:
        return fn(*args, where[0], *extra) if indexed else fn(*args, *extra)
    except ValueError as error:
        raise located(error, "partition", *where) from None


def _rows_of(part):
    return _rows(part[0])


def _raise_first_error(futures):
    """Wait for futures whose results stay on the workers, and raise the first task's error
    in partition order (gathering them would copy every partition to the client)."""
    from distributed import wait
    wait(futures)
    for future in futures:
        if future.status in ("error", "cancelled"):
            future.result()


def _merge_or_keep(merge, a, b):
    return b if a is None else a if b is None else merge(a, b)


def _client():
    try:
        from distributed import get_client
        return get_client()
    except (ImportError, ValueError):
        return None


def _partition_triples(X, y, sample_weight):
    """Delayed (X_i, y_i, w_i) with rows aligned (y / weights rechunked like X), and each
    partition's first row (None when not known without computing)."""
    import dask
    if y is None:
        raise ValueError("y is required: fit(X, y) on dask collections")
    if _is_frame(X) and all(_is_frame(v) for v in (y, sample_weight) if v is not None):
        return _frame_triples(X, y, sample_weight), [None] * X.npartitions
    X_parts, lengths = _row_blocks(X)
    y_parts = _aligned(y, X, lengths, "y")
    w_parts = [None] * len(X_parts) if sample_weight is None else \
        _aligned(sample_weight, X, lengths, "sample_weight")
    starts = [None] * len(X_parts) if lengths is None or np.isnan(lengths).any() else \
        np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(int).tolist()
    return [dask.delayed(tuple)([a, b, c]) for a, b, c in zip(X_parts, y_parts, w_parts)], \
        starts


def _frame_triples(X, y, sample_weight):
    """A dask DataFrame X with its y and weights as columns of one frame, split per partition:
    partitioned apart, a narrow column (y alone) may be read in fewer, larger partitions than
    the features (dask fuses the reads of a Parquet table's small columns)."""
    import dask
    extra = {"y": (_Y, y), "sample_weight": (_W, sample_weight)}
    columns = {}
    for name, (column, v) in extra.items():
        if v is not None:
            if v.npartitions != X.npartitions:
                raise ValueError(f"{name} has {v.npartitions} partitions and X "
                                 f"{X.npartitions}; give both from the same DataFrame")
            columns[column] = v
    whole = X.assign(**columns)
    return [dask.delayed(_split_frame)(part, sample_weight is not None)
            for part in whole.to_delayed()]


_Y, _W = "__fastml_y__", "__fastml_w__"


def _split_frame(part, weighted):
    return part.drop(columns=[_Y, _W] if weighted else [_Y]), part[_Y], \
        part[_W] if weighted else None


def _row_blocks(X):
    if _is_frame(X):
        return list(X.to_delayed()), None
    _schema(X)      # a 2-D array
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    return list(X.to_delayed()[:, 0]), X.chunks[0]


def _aligned(v, X, lengths, name):
    if not is_dask_collection(v):
        raise TypeError(f"X is a dask collection but {name} is a {type(v).__name__}; give "
                        f"{name} as a dask array / Series partitioned like X (e.g. "
                        f"dask.array.from_array({name}, chunks=X.chunks[0]), or a column of "
                        f"the same dask DataFrame)")
    if _is_frame(v):
        if not _is_frame(X) or v.npartitions != X.npartitions:
            raise ValueError(f"{name} has {v.npartitions} partitions and X "
                             f"{getattr(X, 'npartitions', X.numblocks[0])}; give both from "
                             f"the same DataFrame")
        return list(v.to_delayed())
    if lengths is None:
        raise TypeError(f"X is a dask DataFrame and {name} a dask array: give {name} as a "
                        f"column (Series) of the same DataFrame")
    if np.isnan(X.shape[0]) or np.isnan(v.shape[0]):
        # unknown sizes (a DataFrame's to_dask_array(), which compared as "different numbers
        # of samples: nan and nan"): the blocks are paired as they are, each partition's
        # rows checked against its y where it is fitted
        n_x, n_v = X.numblocks[0], v.numblocks[0]
        if n_x != n_v or v.ndim > 2 or (v.ndim == 2 and v.numblocks[1] > 1):
            raise ValueError(f"the row blocks of X or {name} have unknown sizes (a "
                             f"DataFrame's to_dask_array()?) and X has {n_x} of them, {name} "
                             f"{n_v}: give both from the same DataFrame, or call "
                             f"to_dask_array(lengths=True)")
    elif v.shape[0] != X.shape[0]:
        raise ValueError(f"X and {name} have different numbers of samples: {X.shape[0]} "
                         f"and {v.shape[0]}")
    elif v.chunks[0] != lengths:
        v = v.rechunk({0: lengths})
    blocks = v.to_delayed()
    return list(blocks if blocks.ndim == 1 else blocks[:, 0])


def _is_frame(obj):
    return hasattr(obj, "npartitions") and hasattr(obj, "map_partitions")


def _rows(X):
    return X.shape[0]


# ----------------------------------------------------------------------------- predict
def apply(estimator, name, X, *args, **kwargs):
    """estimator.<name> applied partition by partition: a lazy dask array for a dask array,
    a dask Series / DataFrame for a dask DataFrame (X is never collected)."""
    method = getattr(type(estimator), name)     # without the routing to this backend:
    method = functools.partial(getattr(method, "__wrapped__", method), estimator)
    sample = _sample_output(method, X, args, kwargs)
    call = functools.partial(_call, method, sample, args, kwargs)
    if _is_frame(X):
        import pandas as pd
        meta = pd.Series(np.empty(0, sample.dtype)) if sample.ndim == 1 else \
            pd.DataFrame(np.empty((0, sample.shape[1]), sample.dtype))
        return X.map_partitions(_framed, call, meta=meta)
    _schema(X)      # a 2-D array
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    if sample.ndim == 1:
        return X.map_blocks(call, dtype=sample.dtype, drop_axis=1,
                            meta=np.empty((0,), dtype=sample.dtype))
    return X.map_blocks(call, dtype=sample.dtype, chunks=(X.chunks[0], (sample.shape[1],)),
                        meta=np.empty((0, 0), dtype=sample.dtype))


def _call(method, sample, args, kwargs, X):
    if X.shape[0] == 0:
        return np.empty((0,) + sample.shape[1:], dtype=sample.dtype)
    return np.asarray(method(X, *args, **kwargs))


def _framed(frame, call):
    import pandas as pd
    out = call(frame)
    return pd.Series(out, index=frame.index) if out.ndim == 1 else \
        pd.DataFrame(out, index=frame.index)


def _sample_output(method, X, args, kwargs):
    """The method's output on one row (its dtype and width, for the lazy result's meta): a
    row of X's meta (no data computed), or, when the estimator refuses that made-up row (a
    category it has not seen), X's first row."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return np.asarray(method(_sample(X), *args, **kwargs))
        except (ValueError, TypeError):
            first = X.head(1) if _is_frame(X) else X[:1].compute()
            return np.asarray(method(first, *args, **kwargs))
