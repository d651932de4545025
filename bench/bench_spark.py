"""fastml on Spark against Spark's MLlib, against one Arrow pass, and against fastml on Dask, on
the same Parquet table (issue 34): local[2] (2 cores), 4M rows x 50 float64 columns in 16
Parquet files (1.6 GB) plus a binary label y and a real target t, and a 200,000-row test file.

Every row of bench/README.md's table is one command, each in a fresh process (a new Spark
session and a warm-up fit on 2,000 rows, not timed), printing one JSON line (seconds and the
quality measure):

    python bench/bench_spark.py data [--rows 4000000]       # write the table (once)
    python bench/bench_spark.py run ROW [--rows N]           # one measurement
    python bench/bench_spark.py rounds [--rounds 3] ROW...   # ROWs alternating, fresh processes

ROW is one of ROWS below: "mllib-" rows run MLlib (read + VectorAssembler + fit from Parquet,
or on a cached assembled DataFrame), "fastml-" rows fastml's Spark backend (from Parquet: the
tasks read the files; "cached": a cached DataFrame, shipped as Arrow batches), "arrow-pass"
one mapInArrow pass that turns each partition into a matrix and returns its X^T X, "dask-"
fastml on Dask (2 worker processes, 1 thread each) from the same files, "overhead-" the
per-iteration cost of an iterative fit on Spark. Quality: the training log-loss (L-BFGS's
objective, alpha = 0 as MLlib's regParam = 0), the training RMSE, the accuracy on the test
file. Threads: each Spark task and each dask worker runs fastml's kernels on one thread.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.environ.get("FASTML_SPARK_BENCH_DATA", "/tmp/fastml-spark-bench")
D, FILES = 50, 16
FEATURES = [f"x{j}" for j in range(D)]


# ------------------------------------------------------------------------------ the data
def write_data(rows, seed=0):
    """16 Parquet files of rows / 16 rows each (pyarrow's defaults: one row group per file),
    y ~ Bernoulli(sigmoid(x . w)), t = x . v + N(0, 1); and test.parquet (200,000 rows)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    rng = np.random.default_rng(seed)
    w, v = rng.normal(scale=0.12, size=D), rng.normal(size=D)
    table_dir = os.path.join(DATA, f"table-{rows}")
    os.makedirs(table_dir, exist_ok=True)

    def table(n):
        X = rng.normal(size=(n, D))
        p = 1.0 / (1.0 + np.exp(-(X @ w)))
        columns = {name: X[:, j] for j, name in enumerate(FEATURES)}
        columns["y"] = (rng.uniform(size=n) < p).astype(np.int64)
        columns["t"] = X @ v + rng.normal(size=n)
        return pa.table(columns)

    for k in range(FILES):
        pq.write_table(table(rows // FILES), os.path.join(table_dir, f"part-{k:02d}.parquet"))
    pq.write_table(table(200_000), os.path.join(DATA, f"test-{rows}.parquet"))
    return table_dir


def paths(rows):
    return os.path.join(DATA, f"table-{rows}"), os.path.join(DATA, f"test-{rows}.parquet")


# ---------------------------------------------------------------------------- sessions
def session():
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[2]").appName("fastml-bench")
             .config("spark.ui.enabled", "false")
             .config("spark.driver.memory", os.environ.get("SPARK_DRIVER_MEMORY", "10g"))
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.executorEnv.OMP_NUM_THREADS", "1")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def cached(spark, table_dir, assembled):
    """The table as a cached DataFrame (materialized before the clock starts): its columns
    (after a transformation, so it is no plain Parquet scan) or MLlib's assembled vector."""
    from pyspark.ml.feature import VectorAssembler
    df = spark.read.parquet(table_dir)
    if assembled:
        df = VectorAssembler(inputCols=FEATURES, outputCol="features").transform(df) \
            .select("features", "y", "t")
    else:
        df = df.withColumn("t", df["t"] + 0.0)
    df = df.cache()
    df.count()
    return df


def assembled(spark, table_dir):
    from pyspark.ml.feature import VectorAssembler
    return VectorAssembler(inputCols=FEATURES, outputCol="features").transform(
        spark.read.parquet(table_dir))


# --------------------------------------------------------------------------------- rows
def log_loss(p, y):
    p = np.clip(p, 1e-15, 1 - 1e-15)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def held_out(test_path, target):
    import pandas as pd
    frame = pd.read_parquet(test_path)
    return frame[FEATURES].to_numpy(), frame[target].to_numpy()


def mllib_logistic(spark, table_dir, test_path, source):
    from pyspark.ml.classification import LogisticRegression
    df = cached(spark, table_dir, True) if source == "cached" else None
    start = time.perf_counter()
    data = df if df is not None else assembled(spark, table_dir)
    model = LogisticRegression(featuresCol="features", labelCol="y").fit(data)
    seconds = time.perf_counter() - start
    history = model.summary.objectiveHistory
    return dict(seconds=seconds, iterations=len(history) - 1, log_loss=history[-1])


def fastml_logistic(spark, table_dir, test_path, source):
    import fastml
    df = cached(spark, table_dir, False) if source == "cached" else None
    start = time.perf_counter()
    data = df if df is not None else spark.read.parquet(table_dir)
    model = fastml.LogisticRegression(alpha=0.0, tol=1e-4).fit(
        data.select(*FEATURES, "y"), "y")
    seconds = time.perf_counter() - start
    return dict(seconds=seconds, iterations=model.n_iter_, log_loss=model.loss_curve_[-1])


def mllib_linear(spark, table_dir, test_path, source):
    from pyspark.ml.regression import LinearRegression
    df = cached(spark, table_dir, True) if source == "cached" else None
    start = time.perf_counter()
    data = df if df is not None else assembled(spark, table_dir)
    model = LinearRegression(featuresCol="features", labelCol="t", solver="normal").fit(data)
    seconds = time.perf_counter() - start
    return dict(seconds=seconds, rmse=model.summary.rootMeanSquaredError)


def fastml_linear(spark, table_dir, test_path, source):
    import fastml
    df = cached(spark, table_dir, False) if source == "cached" else None
    start = time.perf_counter()
    data = df if df is not None else spark.read.parquet(table_dir)
    model = fastml.LinearRegression().fit(data.select(*FEATURES, "t"), "t")
    seconds = time.perf_counter() - start
    X, t = held_out(test_path, "t")
    return dict(seconds=seconds, test_rmse=float(np.sqrt(np.mean((model.predict(X) - t) ** 2))))


def mllib_bayes(spark, table_dir, test_path, source):
    from pyspark.ml.classification import NaiveBayes
    df = cached(spark, table_dir, True) if source == "cached" else None
    start = time.perf_counter()
    data = df if df is not None else assembled(spark, table_dir)
    model = NaiveBayes(featuresCol="features", labelCol="y", modelType="gaussian").fit(data)
    seconds = time.perf_counter() - start
    return dict(seconds=seconds, theta00=float(model.theta.toArray()[0, 0]))


def fastml_bayes(spark, table_dir, test_path, source):
    import fastml
    df = cached(spark, table_dir, False) if source == "cached" else None
    start = time.perf_counter()
    data = df if df is not None else spark.read.parquet(table_dir)
    model = fastml.GaussianNB().fit(data.select(*FEATURES, "y"), "y")
    seconds = time.perf_counter() - start
    return dict(seconds=seconds, theta00=float(model.theta_[0, 0]))


def mllib_forest(spark, table_dir, test_path, source):
    from pyspark.ml.classification import RandomForestClassifier
    df = cached(spark, table_dir, True)
    start = time.perf_counter()
    model = RandomForestClassifier(featuresCol="features", labelCol="y", numTrees=10,
                                   maxDepth=10, seed=0).fit(df)
    seconds = time.perf_counter() - start
    from pyspark.ml.feature import VectorAssembler
    tdf = VectorAssembler(inputCols=FEATURES, outputCol="features").transform(
        spark.read.parquet(test_path))
    out = model.transform(tdf).select("prediction", "y").toPandas()
    return dict(seconds=seconds, test_accuracy=float(np.mean(out["prediction"] == out["y"])))


def fastml_forest(spark, table_dir, test_path, source):
    import fastml
    df = cached(spark, table_dir, False) if source == "cached" else None
    start = time.perf_counter()
    data = df if df is not None else spark.read.parquet(table_dir)
    model = fastml.RandomForestClassifier(n_estimators=10, max_depth=10, random_state=0,
                                          n_jobs=1).fit(data.select(*FEATURES, "y"), "y")
    seconds = time.perf_counter() - start
    X, y = held_out(test_path, "y")
    return dict(seconds=seconds, test_accuracy=float(np.mean(model.predict(X) == y)))


def arrow_pass(spark, table_dir, test_path, source):
    """One mapInArrow pass over the cached DataFrame: each partition to a float64 matrix,
    its X^T X back (the cost of leaving the JVM once)."""
    import pyarrow as pa
    df = cached(spark, table_dir, False).select(*FEATURES)

    def gram(batches):
        total = np.zeros((D, D))
        for batch in batches:
            X = np.column_stack([c.to_numpy(zero_copy_only=False) for c in batch.columns])
            total += X.T @ X
        yield pa.RecordBatch.from_arrays([pa.array([total.tobytes()], pa.binary())], ["g"])

    start = time.perf_counter()
    rows = df.mapInArrow(gram, "g binary").collect()
    seconds = time.perf_counter() - start
    return dict(seconds=seconds, partitions=len(rows))


def overhead(spark, table_dir, test_path, source):
    """The per-iteration cost of an iterative fit on Spark (from Parquet, parts held in the
    barrier stage): gradient descent (one pass per step, a fixed number of steps) with 21
    steps and with 1, (t21 - t1) / (steps21 - steps1), each after a fit that starts the
    Python workers; and the round trip of an empty request to the held parts."""
    import fastml
    from fastml import _spark
    data = spark.read.parquet(table_dir).select(*FEATURES, "y")
    times, steps = {}, {}
    for iterations in (1, 1, 21):
        model = fastml.LogisticRegression(solver="gd", alpha=1e-4, max_iter=iterations,
                                          tol=None)
        start = time.perf_counter()
        model.fit(data, "y")
        times[iterations], steps[iterations] = time.perf_counter() - start, model.n_iter_
    plan = fastml.LogisticRegression()._scaled_fit()
    held = _spark._Held(_spark._Table(data, "y", None, plan))
    held.rejoin()
    trips = []
    for _ in range(50):     # np.result_type(X, y, w): an importable no-op for every part
        start = time.perf_counter()
        held.map(np.result_type)
        trips.append(time.perf_counter() - start)
    held.close()
    per_iteration = (times[21] - times[1]) / (steps[21] - steps[1])
    return dict(seconds=per_iteration, fit_1=times[1], fit_21=times[21], steps=steps[21],
                round_trip_ms=1e3 * float(np.median(trips)))


def dask_fit(kind):
    def run(spark, table_dir, test_path, source):
        import dask.dataframe as dd
        import fastml
        from distributed import Client, LocalCluster
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None)
        client = Client(cluster)
        try:
            start = time.perf_counter()
            frame = dd.read_parquet(table_dir)
            if kind == "logistic":
                model = fastml.LogisticRegression(alpha=0.0, tol=1e-4).fit(
                    frame[FEATURES], frame["y"])
                out = dict(iterations=model.n_iter_, log_loss=model.loss_curve_[-1])
            elif kind == "linear":
                fastml.LinearRegression().fit(frame[FEATURES], frame["t"])
                out = {}
            else:
                fastml.GaussianNB().fit(frame[FEATURES], frame["y"])
                out = {}
            return dict(seconds=time.perf_counter() - start, **out)
        finally:
            client.close()
            cluster.close()
    return run


ROWS = {
    "mllib-logistic-parquet": (mllib_logistic, "parquet"),
    "fastml-logistic-parquet": (fastml_logistic, "parquet"),
    "mllib-linear-parquet": (mllib_linear, "parquet"),
    "fastml-linear-parquet": (fastml_linear, "parquet"),
    "mllib-bayes-parquet": (mllib_bayes, "parquet"),
    "fastml-bayes-parquet": (fastml_bayes, "parquet"),
    "arrow-pass": (arrow_pass, "cached"),
    "mllib-logistic-cached": (mllib_logistic, "cached"),
    "fastml-logistic-cached": (fastml_logistic, "cached"),
    "mllib-linear-cached": (mllib_linear, "cached"),
    "fastml-linear-cached": (fastml_linear, "cached"),
    "mllib-bayes-cached": (mllib_bayes, "cached"),
    "fastml-bayes-cached": (fastml_bayes, "cached"),
    "mllib-forest-cached": (mllib_forest, "cached"),
    "fastml-forest-cached": (fastml_forest, "cached"),
    "fastml-forest-parquet": (fastml_forest, "parquet"),
    "dask-logistic-parquet": (dask_fit("logistic"), "parquet"),
    "dask-linear-parquet": (dask_fit("linear"), "parquet"),
    "dask-bayes-parquet": (dask_fit("bayes"), "parquet"),
    "overhead-logistic-parquet": (overhead, "parquet"),
}


def warm_up(spark, row):
    """The contender's machinery started before the clock (a long-lived cluster has it
    running): its fit on 2,000 rows (MLlib: the JVM's code paths; fastml: the Python workers
    and their imports, a barrier stage)."""
    import pandas as pd
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(rng.normal(size=(2000, D)), columns=FEATURES)
    frame["y"], frame["t"] = (frame["x0"] > 0).astype(np.int64), frame["x1"]
    small = spark.createDataFrame(frame).repartition(4)
    if row.startswith("mllib-"):
        from pyspark.ml.classification import LogisticRegression, NaiveBayes
        from pyspark.ml.feature import VectorAssembler
        from pyspark.ml.regression import LinearRegression
        data = VectorAssembler(inputCols=FEATURES, outputCol="features").transform(small)
        LogisticRegression(labelCol="y").fit(data)
        LinearRegression(labelCol="t", solver="normal").fit(data)
        NaiveBayes(labelCol="y", modelType="gaussian").fit(data)
    else:
        import fastml
        fastml.GaussianNB().fit(small.select(*FEATURES, "y"), "y")
        fastml.LogisticRegression(max_iter=3).fit(small.select(*FEATURES, "y"), "y")


def run(row, rows):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from threadpoolctl import threadpool_limits
    table_dir, test_path = paths(rows)
    function, source = ROWS[row]
    spark = None if row.startswith("dask-") else session()
    if spark is not None:
        warm_up(spark, row)
    with threadpool_limits(1):
        out = function(spark, table_dir, test_path, source)
    out.update(row=row, rows=rows, load=os.getloadavg()[0])
    print(json.dumps(out), flush=True)
    return out


def rounds(names, n_rounds, rows):
    """The rows alternating, each in a fresh process; the medians and spread of seconds."""
    found = {name: [] for name in names}
    for r in range(n_rounds):
        for name in names:
            out = subprocess.run([sys.executable, __file__, "run", name, "--rows", str(rows)],
                                 capture_output=True, text=True)
            line = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
            if not line:
                print(out.stderr[-3000:], file=sys.stderr)
                continue
            found[name].append(json.loads(line[-1]))
            print(line[-1], flush=True)
    for name, outs in found.items():
        seconds = sorted(o["seconds"] for o in outs)
        loads = [o["load"] for o in outs]
        if seconds:
            print(f"# {name}: median {np.median(seconds):.2f} s (min {seconds[0]:.2f}, max "
                  f"{seconds[-1]:.2f}) over {len(seconds)}; load {min(loads):.1f}-"
                  f"{max(loads):.1f}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["data", "run", "rounds"])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.command == "data":
        print(write_data(args.rows))
    elif args.command == "run":
        run(args.names[0], args.rows)
    else:
        rounds(args.names, args.rounds, args.rows)


if __name__ == "__main__":
    main()
