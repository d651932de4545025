"""The Spark backend (fastml/_router.py): `fit` on a Spark DataFrame runs the estimator's plan
(fastml/_plans.py) where the DataFrame's rows are, and every fitted estimator's predict /
predict_proba / decision_function / transform on one returns the DataFrame with the output as
one more column, computed lazily by a pandas UDF. fit takes the label and the weights as
column names: ``estimator.fit(df, "label", sample_weight="weight")``, the features being the
other columns (numbers, text / booleans as categories) or one ``pyspark.ml`` vector column.

This module knows no estimator; the plans' maths run through `run_on_parts`, this module only
moves data (docs/developers/architecture.rst; the choices are argued in
docs/user_guide/spark.rst):
- Data leaves the JVM as Arrow record batches (`mapInArrow`), never as Python rows, and a
  DataFrame that is a Parquet table as read (``spark.read.parquet``, columns selected) is not
  shipped at all: the tasks read the files' row groups with pyarrow, in fit_stream's bounded
  chunks. The parts are the DataFrame's partitions, or the files' row groups;
- Statistics: one job, each task folding its part chunk by chunk (bounded memory); merged on
  the driver in part order. A label pass first, when the plan needs one, reads the label and
  weight columns only;
- Objective, Passes, Ensemble: the parts are read once into a barrier stage whose tasks hold
  them in memory and serve the driver over a socket (fastml/_spark_channel.py: a random
  token authenticates the link): each solver evaluation sends the parameters to every task
  and gets back one small value per part (a sum, a model, trees), summed on the driver in
  part order, so only the per-iteration sums move and the result does not depend on how the
  parts are grouped into tasks. A DataFrame with more partitions than the cluster's task
  slots is regrouped first: on one machine each partition is staged in an Arrow file that the
  barrier tasks map; across machines the partitions are coalesced and checkpointed on the
  executors (no shuffle), each row keeping its partition's number.
Reliability: a task that fails is retried by Spark (a barrier stage as a whole, the fit then
restarting on the new tasks), with the same result; data errors are returned by the tasks,
not retried, and raised on the driver naming the part and its first row; the fit is a
transaction (`transaction`).
"""
import contextlib
import functools
import itertools
import os
import pickle
import secrets
import shutil
import threading
import warnings

import numpy as np

from ._plans import (Schema, float_dtype, label_summary, located, merged_labels, plan_for,
                     record_features, run_on_parts, transaction)
from ._readers import column_values, default_rows, numeric_matrix, rebatch
from ._spark_channel import Channel, Link, Lost, PartError, driver_host

WHERE = "on a Spark DataFrame"
TAG = "__fastml_part__"             # a regrouped row's partition of origin
RESULT = "part long, rows long, width long, result binary"
DATA_ERRORS = (ValueError, TypeError)   # the estimator's verdict on the data: not retried


# ----------------------------------------------------------------------------- fit
def fit(estimator, X, y=None, sample_weight=None, **kwargs):
    """The estimator's plan over the DataFrame X (see the module note); y and sample_weight
    name its label and weight columns."""
    if kwargs:
        raise TypeError(f"{type(estimator).__name__}.fit on a Spark DataFrame takes X, y, "
                        f"sample_weight; got {sorted(kwargs)}")
    plan = plan_for(estimator, WHERE)
    if plan.kind == "columns":
        table = _Table(X, None, None, plan)
        with transaction(estimator) as working:
            plan.finish(working, table.sample())
        return estimator
    table = _Table(X, y, sample_weight, plan)
    parts = _Mapped(table) if plan.kind == "statistics" else _Held(table)
    try:
        while True:
            try:
                parts.rejoin()
                with transaction(estimator) as working:
                    run_on_parts(working, plan, parts, WHERE)
                    record_features(working, parts.schema())
                return estimator
            except Lost:       # Spark reruns the barrier stage: start over on its new tasks
                continue
    finally:
        parts.close()


def summarize(plan, X, y):
    """A Statistics plan's finished result over the DataFrame X and its label column y (not
    an estimator's: fastml.info's tables)."""
    parts = _Mapped(_Table(X, y, None, plan))
    total = parts.map_reduce(plan.part, plan.merge, plan.start(None, None))
    if total is None:
        raise ValueError("y is empty")
    return plan.finish(None, total, parts.schema())


# ------------------------------------------------------------------------- the table
class _Columns:
    """What a task makes of a table's columns (small: it travels with the tasks): the
    features (one vector column, or columns of numbers, or with text / booleans a
    DataFrame), the label and weight columns, the layout and whether the plan wants names."""

    def __init__(self, features, vector, label, weight, layout="C", frames=False):
        self.features, self.vector, self.label, self.weight = features, vector, label, weight
        self.layout, self.frames = layout, frames

    def read(self):
        return [c for c in (*self.features, self.label, self.weight) if c is not None]

    def labels_only(self):
        return _Columns([], False, self.label, self.weight)

    def arrays(self, table):
        """(X, y, w) of an Arrow table (X None when no feature is asked for)."""
        y = None if self.label is None else column_values(table, self.label)
        w = None if self.weight is None else column_values(table, self.weight, np.float64)
        if not self.features:
            return None, y, w
        if self.vector:
            X = _vectors(table.column(self.features[0]), self.layout)
        else:
            X = numeric_matrix(table, self.features, self.layout)
            if X is None:
                return table.select(self.features).to_pandas(), y, w
        if self.frames and not self.vector:
            import pandas as pd
            X = pd.DataFrame(X, columns=self.features, copy=False)
        return X, y, w


def _vectors(column, layout):
    """A vector column (vector_to_array's list<double>) as a matrix; every row's vector has
    the first's length."""
    import pyarrow as pa
    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if column.null_count:
        raise ValueError("the features vector is null in some rows")
    sizes = np.diff(column.offsets.to_numpy())
    if len(sizes) and (sizes != sizes[0]).any():
        raise ValueError(f"the feature vectors differ in length ({sizes.min()} to "
                         f"{sizes.max()}); give every row a vector of the same size")
    values = column.flatten().to_numpy(zero_copy_only=False)
    X = values.reshape(len(sizes), sizes[0] if len(sizes) else 0)
    return np.asfortranarray(X) if layout == "F" else X


class _Table:
    """A DataFrame's features, label and weight columns (checked on the driver), and how its
    parts are read: from the JVM as Arrow batches, or, for a Parquet table as read, from its
    files' row groups by the tasks themselves."""

    def __init__(self, df, label, weight, plan):
        if not hasattr(df, "_jdf"):
            raise TypeError("fastml runs on a classic Spark session's DataFrames (a Spark "
                            "Connect DataFrame has no executors it can reach); use a "
                            "SparkSession of pyspark, not of Spark Connect")
        from pyspark.sql import functions as F
        self.df, self.spark = df, df.sparkSession
        names = df.columns
        for what, name in (("y", label), ("sample_weight", weight)):
            if name is not None and (not isinstance(name, str) or name not in names):
                raise TypeError(f"X is a Spark DataFrame: give {what} as the name of one of "
                                f"its columns {names}; got {name!r}")
        if label is None and plan.kind != "columns":
            raise ValueError("y is required: fit(df, 'label'), the name of the label column")
        _refuse_duplicates(names)
        features = [c for c in names if c not in (label, weight)]
        types = {f.name: f.dataType for f in df.schema.fields}
        vector = _is_vector(types, features)
        kinds = {c: _kind(c, types[c]) for c in features} if not vector else {}
        frames = plan.frames or "categorical" in kinds.values()
        self.columns = _Columns(features, vector, label, weight, plan.layout, frames)
        self.exprs = [_select(F, df, c, types[c], vector) for c in features] + \
            [df[c] for c in (label,) if c is not None] + \
            [df[c].cast("double").alias(c) for c in (weight,) if c is not None]
        dtype = np.float64 if vector or frames else \
            float_dtype([np.dtype(np.float32 if _spark_name(types[c]) == "FloatType" else
                                  np.float64) for c in features])
        self.width = None if vector else len(features)
        self.names = None if vector else features
        self.dtype = dtype
        self.files = None if plan.kind == "columns" else _parquet_parts(df, self.columns)

    def schema(self, width=None):
        return Schema(self.width if width is None else width, self.names, self.dtype)

    def sample(self):
        """One row of zeros carrying the columns (a Columns plan's finish)."""
        import pandas as pd
        if self.columns.vector:
            size = self.df.select(self.exprs[0]).first()[0]
            return np.zeros((1, len(size)))
        return pd.DataFrame(np.zeros((1, len(self.names))), columns=self.names)

    def slots(self):
        """The tasks the cluster runs at once (a barrier stage's limit)."""
        context = self.spark.sparkContext
        return max(1, context.defaultParallelism //
                   int(context.getConf().get("spark.task.cpus", "1")))

    def job(self, columns, tasks=None):
        """(input DataFrame, reader, number of tasks, number of parts) for a job over the
        parts: a task per part (tasks None), or at most `tasks` tasks, each reading a run
        of parts."""
        from pyspark.sql import functions as F
        if self.files is not None:
            groups = _runs([rows for _, _, rows in self.files], tasks or len(self.files))
            reader = _FileParts(columns, [[(k, *self.files[k][:2]) for k in group]
                                          for group in groups])
            return self.spark.range(len(groups), numPartitions=len(groups)), reader, \
                len(groups), len(self.files)
        wanted = set(columns.read())
        frame = self.df.select(*[e for e, c in zip(self.exprs, self._expr_names())
                                 if c in wanted])
        partitions = frame.rdd.getNumPartitions()
        if tasks is None or partitions <= tasks and _barrier_ready(frame, partitions):
            return frame, _FrameParts(columns, tagged=False), partitions, partitions
        # more partitions than task slots (or a lineage a barrier stage refuses: a union, a
        # coalesce). On one machine, each partition's Arrow batches are staged in a file by
        # an ordinary job, and the barrier tasks map the files: no copy inside the JVM.
        if _one_host(self.spark):
            staged = _staged(frame)
            groups = _runs([rows for _, rows in staged], tasks)
            reader = _StagedParts(columns, [[(k, staged[k][0]) for k in group]
                                            for group in groups])
            return self.spark.range(len(groups), numPartitions=len(groups)), reader, \
                len(groups), partitions
        # across machines: regrouped without a shuffle, each row tagged with its partition,
        # and checkpointed on the executors (a barrier stage takes no coalesce)
        tagged = frame.withColumn(TAG, F.spark_partition_id())
        return tagged.coalesce(tasks).localCheckpoint(eager=True), \
            _FrameParts(columns, tagged=True), tasks, partitions

    def _expr_names(self):
        c = self.columns
        return c.features + [n for n in (c.label, c.weight) if n is not None]


def _barrier_ready(frame, partitions):
    """Spark's rule for a barrier stage (DAGScheduler): within the stage, every RDD has the
    stage's number of partitions and at most one shuffle dependency (no union, no
    coalesce). Checked on the DataFrame's RDD lineage; in doubt, no."""
    try:
        pending, seen = [frame._jdf.queryExecution().toRdd()], set()
        while pending:
            rdd = pending.pop()
            if rdd.id() in seen:
                continue
            seen.add(rdd.id())
            if rdd.getNumPartitions() != partitions:
                return False
            dependencies = rdd.dependencies()
            shuffles = 0
            for k in range(dependencies.size()):
                dependency = dependencies.apply(k)
                if "Shuffle" in dependency.getClass().getSimpleName():
                    shuffles += 1
                else:
                    pending.append(dependency.rdd())
            if shuffles > 1:
                return False
        return True
    except Exception:
        return False


def _refuse_duplicates(names):
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"the DataFrame has more than one column named {twice}; give every "
                         f"column its own name")


def _spark_name(data_type):
    return type(data_type).__name__


def _is_vector(types, features):
    vectors = [c for c in features if _spark_name(types[c]) == "VectorUDT"]
    if vectors and len(features) > 1:
        raise TypeError(f"the features are a vector column ({vectors[0]!r}) and other "
                        f"columns ({[c for c in features if c not in vectors][:5]}); give "
                        f"one vector column, or plain columns (select the ones to use)")
    return bool(vectors)


NUMBERS = ("ByteType", "ShortType", "IntegerType", "LongType", "FloatType", "DoubleType",
           "DecimalType")


def _kind(name, data_type):
    kind = _spark_name(data_type)
    if kind in NUMBERS:
        return "numeric"
    if kind in ("StringType", "BooleanType", "CharType", "VarcharType"):
        return "categorical"
    raise TypeError(f"column {name!r} is of type {data_type.simpleString()}: a feature is a "
                    f"number, a text or boolean category, or one ml vector column")


def _select(F, df, name, data_type, vector):
    if vector:
        from pyspark.ml.functions import vector_to_array
        return vector_to_array(df[name]).alias(name)
    if _spark_name(data_type) == "DecimalType":
        return df[name].cast("double").alias(name)
    return df[name]


def _runs(rows, n):
    """`len(rows)` parts in at most n runs of consecutive parts, of about equal rows."""
    n = max(1, min(n, len(rows)))
    bounds = np.cumsum(rows, dtype=float)
    total = bounds[-1] if len(bounds) else 0
    cuts = [int(np.searchsorted(bounds, total * k / n)) for k in range(1, n)] if total else \
        [len(rows) * k // n for k in range(1, n)]
    edges = sorted(set([0] + [min(c + 1, len(rows)) for c in cuts] + [len(rows)]))
    return [list(range(a, b)) for a, b in zip(edges[:-1], edges[1:]) if b > a]


def _parquet_parts(df, columns):
    """[(path, row group, rows)] of the Parquet files of a DataFrame that is a Parquet table
    as read, columns selected and nothing else (its optimized plan a file relation, under at
    most a Project of plain columns), whose files are local to pyarrow and hold the columns;
    else None (the rows then come from the JVM as Arrow batches)."""
    try:
        if not _plain_scan(df._jdf.queryExecution().optimizedPlan()):
            return None
        import pyarrow.fs as pafs
        import pyarrow.parquet as pq
        parts = []
        for uri in sorted(df.inputFiles()):
            filesystem, path = pafs.FileSystem.from_uri(uri)
            if not isinstance(filesystem, pafs.LocalFileSystem):
                return None     # remote stores: left to Spark's readers
            metadata = pq.ParquetFile(path).metadata
            if not set(columns.read()) <= set(metadata.schema.to_arrow_schema().names):
                return None     # a partition column, a renamed one: not in the files
            parts += [(path, g, metadata.row_group(g).num_rows)
                      for g in range(metadata.num_row_groups)]
        return parts or None
    except Exception:   # any doubt: Spark reads it
        return None


def _plain_scan(node):
    """A Parquet relation, or a Project of its columns (no expression, no alias)."""
    if node.nodeName() == "Project":
        columns = node.projectList()
        if any(columns.apply(k).getClass().getSimpleName() != "AttributeReference"
               for k in range(columns.size())):
            return False
        node = node.child()
    return node.getClass().getSimpleName() == "LogicalRelation" and \
        node.relation().fileFormat().toString() == "Parquet"


# ----------------------------------------------------------------------------- predict
def apply(estimator, name, X, *args, **kwargs):
    """X with one more column, named after the method, holding estimator.<name> of each row
    (computed lazily, batch by batch, by a pandas UDF)."""
    method = getattr(type(estimator), name)     # without the routing to this backend
    method = functools.partial(getattr(method, "__wrapped__", method), estimator,
                               **kwargs)
    if args:
        method = functools.partial(_with_args, method, args)
    return with_outputs(X, estimator, {name: method})


def _with_args(method, args, X):
    return method(X, *args)


def with_outputs(df, estimator, outputs, features=None, vectors=False):
    """df with a column per entry of `outputs` ({column: function of X}, e.g. bound methods
    of the fitted estimator), computed together by one pandas UDF over the feature columns
    (`features`, else the estimator's feature_names_in_, else df's one vector column, else
    all of df's columns); 2-D outputs are arrays, or ml vectors with vectors=True."""
    from pyspark.sql import functions as F, types as T
    taken = [c for c in outputs if c in df.columns]
    if taken:
        raise ValueError(f"the DataFrame already has column(s) {taken}")
    features, vector = _feature_columns(df, estimator) if features is None else \
        (features, _is_vector({f.name: f.dataType for f in df.schema.fields}, features))
    samples = {c: _sample_output(f, df, features, vector) for c, f in outputs.items()}
    kinds = {c: (s.dtype.kind if s.dtype.kind in "fiub" else "U", s.ndim)
             for c, s in samples.items()}
    returned = T.StructType([T.StructField(c, _spark_type(T, *kinds[c])) for c in outputs])
    udf = F.pandas_udf(functools.partial(_outputs_of, outputs, kinds, features, vector),
                       returned)
    inputs = [_select(F, df, c, None, vector) for c in features]
    column = f"__fastml_{secrets.token_hex(4)}__"
    out = df.withColumn(column, udf(*inputs))
    for c in outputs:
        value = out[column][c]
        if vectors and kinds[c][1] == 2:
            from pyspark.ml.functions import array_to_vector
            value = array_to_vector(value)
        out = out.withColumn(c, value)
    return out.drop(column)


def _feature_columns(df, estimator):
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None:
        missing = [c for c in names if c not in df.columns]
        if missing:
            raise ValueError(f"the DataFrame has no column(s) {missing}, which the estimator "
                             f"was fitted on")
        return list(names), False
    types = {f.name: f.dataType for f in df.schema.fields}
    vectors = [c for c in df.columns if _spark_name(types[c]) == "VectorUDT"]
    if len(vectors) == 1:
        return vectors, True
    expected = getattr(estimator, "n_features_in_", len(df.columns))
    if len(df.columns) != expected or vectors:
        raise ValueError(f"the estimator was fitted on {expected} features without names; "
                         f"give a DataFrame of those columns only, or one vector column")
    return list(df.columns), False


def _spark_type(T, kind, ndim):
    base = {"f": T.DoubleType(), "i": T.LongType(), "u": T.LongType(),
            "b": T.BooleanType()}.get(kind, T.StringType())
    return T.ArrayType(base) if ndim == 2 else base


def _features_of(series, features, vector):
    """The estimator's X from the UDF's columns: a DataFrame with the fitted names, or a
    matrix of the vector column's rows."""
    import pandas as pd
    if vector:
        values = series[0].to_numpy()
        return np.stack(values) if len(values) else np.empty((0, 0))
    return pd.DataFrame(dict(zip(features, series)))


def _sample_output(function, df, features, vector):
    """The output on one row (its dtype and width): a row of zeros, or, when the estimator
    refuses it (a category it has not seen), the DataFrame's first row."""
    import pandas as pd
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            width = len(df.select(features[0]).first()[0]) if vector else None
            X = np.zeros((1, width)) if vector else \
                pd.DataFrame(np.zeros((1, len(features))), columns=features)
            return np.asarray(function(X))
        except (ValueError, TypeError):
            with _quiet():
                first = df.select(*features).limit(1).toPandas()
            return np.asarray(function(_features_of([first[c] for c in features],
                                                    features, vector)))


def _outputs_of(outputs, kinds, features, vector, *series):
    """The pandas UDF: one batch's outputs, a DataFrame with a column per output."""
    import pandas as pd
    n = len(series[0])
    if n == 0:
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in outputs})
    X = _features_of(series, features, vector)
    frame = {}
    for c, function in outputs.items():
        value = np.asarray(function(X))
        if kinds[c][0] == "U":
            value = value.astype(str)
        frame[c] = list(value) if value.ndim == 2 else value
    return pd.DataFrame(frame)


# ----------------------------------------------------------------- the parts, in tasks
class _FrameParts:
    """A task's parts from its Arrow batches: its partition (a part), or, regrouped, the
    runs of rows of each partition of origin (the TAG column)."""

    def __init__(self, columns, tagged):
        self.columns, self.tagged = columns, tagged

    def parts(self, batches, task):
        rows = default_rows(len(self.columns.features) or 1)
        if not self.tagged:
            yield task, rebatch(batches, rows)
            return
        for part, pieces in itertools.groupby(_tag_runs(batches), key=lambda p: p[0]):
            yield part, rebatch((piece for _, piece in pieces), rows)


def _tag_runs(batches):
    """(partition of origin, batch slice without the TAG column) for each run of rows."""
    for batch in batches:
        tags = batch.column(batch.schema.get_field_index(TAG)).to_numpy()
        batch = batch.drop_columns([TAG])
        edges = np.flatnonzero(np.diff(tags)) + 1
        for a, b in zip(np.r_[0, edges], np.r_[edges, len(tags)]):
            yield int(tags[a]), batch.slice(a, b - a)


class _FileParts:
    """A task's parts read from files: its run of them (groups[task], each entry starting with
    its part's number), each read in fit_stream's chunks. These are the files' row groups
    (pyarrow decodes 8,192 rows at a time, without reading ahead)."""

    def __init__(self, columns, groups):
        self.columns, self.groups = columns, groups

    def parts(self, batches, task):
        for _ in batches:       # the task's input: its number only
            pass
        rows = default_rows(len(self.columns.features) or 1)
        for entry in self.groups[task]:
            yield entry[0], self.read(entry, rows)

    def read(self, entry, rows):
        import pyarrow.parquet as pq
        _, path, group = entry
        with pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 16) as file:
            yield from rebatch(file.iter_batches(
                batch_size=min(rows, 1 << 13), row_groups=[group],
                columns=self.columns.read(), use_threads=False), rows)


def _one_host(spark):
    """Whether the driver and every executor run on one machine (local mode, or a one-node
    cluster): a file an executor writes is then one every task can read."""
    try:
        infos = spark.sparkContext._jsc.sc().statusTracker().getExecutorInfos()
        return len({info.host() for info in infos}) == 1
    except Exception:   # in doubt, no
        return False


def _staged(frame):
    """[(path, rows)] per partition of `frame`: an ordinary job writes each partition's Arrow
    batches as they come to an Arrow file in the executor's scratch folder (SparkFiles'
    root, removed with the session), named by a fresh key; a rerun task rewrites its file."""
    folder = f"fastml-staged-{secrets.token_hex(6)}"
    with _quiet():
        rows = frame.mapInArrow(functools.partial(_stage_task, folder), RESULT).collect()
    rows = sorted(rows, key=lambda r: r.part)
    return [(pickle.loads(row.result)[1], row.rows) for row in rows]


def _stage_task(folder, batches):
    import pyarrow as pa
    from pyspark import SparkFiles, TaskContext
    context = TaskContext.get()
    part = context.partitionId()
    directory = os.path.join(SparkFiles.getRootDirectory(), folder)
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"part-{part}.arrow")
    temporary, rows, writer = f"{path}.{context.taskAttemptId()}", 0, None
    with pa.OSFile(temporary, "wb") as sink:
        for batch in batches:
            if writer is None:
                writer = pa.ipc.new_file(sink, batch.schema)
            writer.write_batch(batch)
            rows += batch.num_rows
        if writer is not None:
            writer.close()
    if rows:
        os.replace(temporary, path)
    else:
        os.remove(temporary)
        path = None
    yield _result([(part, rows, -1, pickle.dumps(("ok", path)))])


class _StagedParts(_FileParts):
    """A barrier task's parts: its run of staged partitions (_staged), each file mapped into
    memory. The driver removes the files when the fit ends (not before: a rerun stage maps
    them again); staging happens on one machine only, so the driver sees them."""

    def read(self, entry, rows):
        import pyarrow as pa
        _, path = entry
        if path is None:        # a partition without rows
            return
        with pa.memory_map(path) as source:
            file = pa.ipc.open_file(source)
            yield from rebatch((file.get_batch(k) for k in range(file.num_record_batches)),
                               rows)

    def remove(self):
        """The fit's staging folder, with what a failed attempt may have left in it."""
        for path in {os.path.dirname(p) for group in self.groups for _, p in group if p}:
            shutil.rmtree(path, ignore_errors=True)


def _task_index():
    from pyspark import TaskContext
    return TaskContext.get().partitionId()


def _result(rows):
    """An Arrow batch of (part, rows, width, pickled result) rows."""
    import pyarrow as pa
    columns = list(zip(*rows)) if rows else [[], [], [], []]
    return pa.RecordBatch.from_arrays(
        [pa.array(columns[0], pa.int64()), pa.array(columns[1], pa.int64()),
         pa.array(columns[2], pa.int64()), pa.array(columns[3], pa.binary())],
        names=["part", "rows", "width", "result"])


def _fold_task(reader, fn, merge, args, batches):
    """A mapped task: per part, fn over its chunks merged (None: no rows), or the first data
    error (then the task stops: a later part cannot come first)."""
    out = []
    for part, chunks in reader.parts(batches, _task_index()):
        total, rows, width = None, 0, -1
        try:
            for table in chunks:
                if table.num_rows == 0:
                    continue
                X, y, w = reader.columns.arrays(table)
                value = fn(X, y, w, *args)
                total = value if total is None else total if value is None else \
                    merge(total, value)
                rows += table.num_rows
                width = -1 if X is None else X.shape[1]
        except DATA_ERRORS as error:
            out.append((part, rows, width, pickle.dumps(("error", error))))
            break
        out.append((part, rows, width, pickle.dumps(("ok", total))))
    yield _result(out)


class _Mapped:
    """Parts for a one-pass plan: each job maps every part once (a task per partition, or a
    run of row groups per task slot's worth), folding it chunk by chunk."""

    def __init__(self, table):
        self.table, self.width = table, None

    def schema(self):
        return self.table.schema(self.width)

    def labels(self, with_classes, each=False):
        found = self._run(self.table.columns.labels_only(), label_summary, _merge_labels,
                          with_classes)
        return merged_labels(found, each)

    def map_reduce(self, fn, merge, *args):
        found = [v for v in self._run(self.table.columns, fn, merge, *args) if v is not None]
        return functools.reduce(merge, found) if found else None

    def _run(self, columns, fn, merge, *args):
        """[fn's merged value per part], in part order; the first data error raised."""
        frame, reader, _, _ = self.table.job(columns, self.table.slots() * 4
                                          if self.table.files is not None else None)
        task = functools.partial(_fold_task, reader, fn, merge, args)
        with _quiet():
            rows = frame.mapInArrow(task, RESULT).collect()
        found = _unpacked(rows, self.table)
        widths = {r.width for r in rows if r.width >= 0 and r.rows}
        if columns.features and len(widths) > 1:
            raise ValueError(f"the feature vectors differ in length between partitions "
                             f"({sorted(widths)})")
        if columns.features and widths:
            self.width = widths.pop()
        return found

    def rejoin(self):
        """Nothing to wait for: Spark reruns a failed task of a mapped job by itself."""

    def close(self):
        pass


def _merge_labels(a, b):
    return a.merge(b)


def _unpacked(rows, table):
    """The results of a job's rows in part order; the first part's error raised, naming the
    part and its first row (the rows of the parts before it are all counted)."""
    rows = sorted(rows, key=lambda r: r.part)
    found, start = [], 0
    for row in rows:
        status, value = pickle.loads(row.result)
        if status == "error":
            raise _where(value, table, row.part, start)
        found.append(value if row.rows else None)
        start += row.rows
    return found


def _where(error, table, part, start):
    if table.files is not None:
        path, group, _ = table.files[part]
        return located(error, f"{os.path.basename(path)}, row group", group, start)
    return located(error, "partition", part, start)


@contextlib.contextmanager
def _quiet():
    """pyspark's warning about pandas >= 3, which mapInArrow gives though the batches stay
    Arrow (no pandas on that path): left out of the user's output."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
        yield


# ----------------------------------------------------------- the parts, held in tasks
class _Held:
    """Parts held in memory by the tasks of a barrier stage, which serve the driver over a
    socket: the driver sends a module-level function and small arguments, each task applies
    it to each of its parts and sends one value per part back."""

    def __init__(self, table):
        self.table, self.channel, self.job, self.reader = table, None, None, None

    def rejoin(self):
        """Start the barrier stage (the first time), and wait until every task holds its
        parts (again, after a task was lost)."""
        if self.channel is None:
            frame, self.reader, tasks, self.n_parts = self.table.job(self.table.columns,
                                                                     self.table.slots())
            self.channel = Channel(driver_host(self.table.spark), tasks)
            serve = functools.partial(_hold_task, self.reader, self.channel.address,
                                      self.channel.token)
            self.job = self.channel.job = _Job(self.table.spark, frame, serve)
        try:
            ready = self.channel.gather()
        except PartError as failed:
            raise _where(failed.error, self.table, failed.part, None) from None
        parts = sorted(p for summary in ready for p in summary)
        self.rows = {part: rows for part, rows, _ in parts}
        widths = {width for _, rows, width in parts if rows and width >= 0}
        if len(widths) > 1:
            raise ValueError(f"the feature vectors differ in length between partitions "
                             f"({sorted(widths)})")
        self.width = widths.pop() if widths else self.table.width
        self.order = range(self.n_parts)    # a part no task holds (no rows) maps to None

    def schema(self):
        return self.table.schema(self.width)

    def labels(self, with_classes, each=False):
        return merged_labels(self.map(label_summary, with_classes), each)

    def map(self, fn, *args, indexed=False, key=None):
        """[fn(X, y, w, [part,] *args)] in part order (None for a part without rows); with
        key, [fn(value, *args)] of the values derived under that key."""
        try:
            replies = self.channel.ask(("map", key, fn, args, indexed))
        except PartError as failed:
            start = sum(self.rows.get(p, 0) for p in self.order if p < failed.part)
            raise _where(failed.error, self.table, failed.part, start) from None
        found = dict(kv for reply in replies for kv in reply)
        return [found.get(part) for part in self.order]

    def derive(self, fn, *args):
        key = secrets.token_hex(4)
        self.map(fn, *args, key=("derive", key))
        return _Derived(self, key)

    def map_reduce(self, fn, merge, *args):
        found = [v for v in self.map(fn, *args) if v is not None]
        return functools.reduce(merge, found) if found else None

    def close(self):
        if self.channel is not None:
            self.channel.close()
            self.job.join()
        if isinstance(self.reader, _StagedParts):
            self.reader.remove()


class _Derived:
    """Values derived from the held parts, kept by their tasks."""

    def __init__(self, held, key):
        self.held, self.key = held, key

    def map(self, fn, *args):
        return self.held.map(fn, *args, key=self.key)

    def release(self):
        self.held.map(None, key=("release", self.key))


def _hold_task(reader, address, token, batches):
    """A barrier task: read its parts, then serve the driver until it says stop."""
    import pyarrow as pa
    from pyspark import BarrierTaskContext
    context = BarrierTaskContext.get()
    task, part, held = context.partitionId(), None, {}
    with Link.connect(address) as link:
        link.sock.sendall(token)
        link.send((task, context.taskAttemptId()))
        try:
            for part, chunks in reader.parts(batches, task):
                tables = [t for t in chunks if t.num_rows]
                held[part] = reader.columns.arrays(pa.concat_tables(tables)) if tables \
                    else None
                del tables
        except DATA_ERRORS as error:
            link.send(("error", (part, error)))
        else:
            link.send(("ok", [(p, 0 if v is None else len(v[1]),
                               -1 if v is None else v[0].shape[1]) for p, v in held.items()]))
        _serve(link, held)
    yield _result([])


def _serve(link, held):
    """Answer the driver's requests on the held parts (X, y, w) until it says stop: ("map",
    key, fn, args, indexed) -> [(part, value)], where key None maps fn over the parts, a
    derived key over the values derived under it, ("derive", key) keeps fn's values under
    key, ("release", key) drops them."""
    derived = {}
    while True:
        request = link.receive()
        if request is None:     # dropped (a task of this stage was lost): fail, so that
            raise ConnectionError("the driver dropped this task's link")   # Spark reruns it
        if request[0] == "stop":
            return
        _, key, fn, args, indexed = request
        out, part = [], None
        try:
            if key is None or key[0] == "derive":
                for part, v in held.items():
                    if v is not None:
                        out.append((part, fn(*v, *((part,) if indexed else ()), *args)))
                if key is not None:
                    derived[key[1]], out = dict(out), []
            elif key[0] == "release":
                derived.pop(key[1], None)
            else:
                out = [(part, fn(v, *args)) for part, v in derived[key].items()]
        except DATA_ERRORS as error:
            link.send(("error", (part, error)))
            continue
        link.send(("ok", out))


class _Job:
    """The barrier stage, run by a thread of the driver (its collect blocks until the tasks
    end) in a job group of its own. It ends with a shuffle (of one row per task), which makes
    it a stage Spark reruns when a task fails (a failed barrier result stage is not)."""

    def __init__(self, spark, frame, serve):
        self.context, self.error = spark.sparkContext, None
        self.group = f"fastml-{secrets.token_hex(6)}"
        self.thread = threading.Thread(target=self._run, args=(frame, serve), daemon=True,
                                       name="fastml-spark-job")
        self.thread.start()

    def _run(self, frame, serve):
        try:
            self.context.setJobGroup(self.group, "fastml: the parts held for a fit", True)
            with _quiet():
                frame.mapInArrow(serve, RESULT, barrier=True).repartition(1).collect()
        except BaseException as error:      # handed to the driver's thread
            self.error = error

    def check(self):
        """Raise when the job has ended while its tasks are awaited (Spark gave up)."""
        if not self.thread.is_alive():
            message = str(self.error).strip().splitlines()[:3] if self.error else \
                ["it ended before its tasks reported"]
            raise RuntimeError("the Spark job holding the parts failed: " +
                               " ".join(message)) from self.error

    def join(self):
        self.thread.join(timeout=30)
        if self.thread.is_alive():
            self.context.cancelJobGroup(self.group)
            self.thread.join()
