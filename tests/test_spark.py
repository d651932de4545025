"""The Spark backend (issue 34): every family's plan on a Spark DataFrame, exact against the
in-memory fit where the maths is a sum (1e-10), the SGD family and forests equal to the dask
backend on the same partitions; a task that fails once is retried by Spark with an identical
result (a mapped task, and a barrier task in the middle of an iterative fit); a failed fit
leaves the estimator as it was; empty, skewed and one-class partitions, NaN in features or
labels and bad weights give fit's errors, naming the partition and its first row; a Parquet
table is read by the tasks from its files; lazy predictions; the pyspark.ml stages in a
Pipeline. One local session (tests/conftest.py) for all; the data are small."""
import functools
import os
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fastml
from _robust import same, snapshot

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::DeprecationWarning")

RNG = np.random.default_rng(7)
N, D = 600, 4
X = RNG.normal(size=(N, D))
Y_CLASS = (X[:, 0] - 0.5 * X[:, 1] + 0.4 * RNG.normal(size=N) > 0).astype(np.int64)
Y_THREE = np.digitize(X[:, 0] + 0.3 * RNG.normal(size=N), [-0.4, 0.4]).astype(np.int64)
Y_REAL = X @ [1.0, -2.0, 0.5, 3.0] + 0.7 + RNG.normal(size=N)
WEIGHT = RNG.uniform(0.2, 2.0, size=N)
FEATURES = ["a", "b", "c", "d"]
SIZES = (90, 0, 200, 10, 180, 120)          # skewed, with an empty partition


def table(X=X, y=Y_CLASS, w=None):
    frame = pd.DataFrame(X, columns=FEATURES[:X.shape[1]]).assign(y=y)
    return frame if w is None else frame.assign(w=w)


def spark_frame(spark, frame, sizes=SIZES):
    """A Spark DataFrame of `frame`'s rows in order, partition i holding sizes[i] rows."""
    assert sum(sizes) == len(frame)
    starts = np.cumsum((0,) + tuple(sizes))
    rows = [tuple(r.item() if hasattr(r, "item") else r for r in row)
            for row in frame.itertuples(index=False)]
    pieces = [rows[a:b] for a, b in zip(starts[:-1], starts[1:])]
    rdd = spark.sparkContext.parallelize(range(len(sizes)), len(sizes)).flatMap(
        lambda k: pieces[k])
    return spark.createDataFrame(rdd, _schema(frame))


def _schema(frame):
    from pyspark.sql import types as T
    kinds = {"f": T.DoubleType(), "i": T.LongType(), "b": T.BooleanType()}
    return T.StructType([
        T.StructField(c, T.FloatType() if frame[c].dtype == np.float32 else
                      kinds.get(frame[c].dtype.kind, T.StringType())) for c in frame.columns])


# ------------------------------------------------------------------ exact where a sum
EXACT = [
    ("GaussianNB", fastml.GaussianNB, Y_THREE, ["theta_", "var_", "class_count_"]),
    ("NaiveBayes", fastml.NaiveBayes, Y_THREE, ["class_count_"]),
    ("LinearRegression", fastml.LinearRegression, Y_REAL, ["coef_", "intercept_"]),
    ("Ridge", lambda: fastml.Ridge(alpha=3.0), Y_REAL, ["coef_", "intercept_"]),
    ("PolynomialRegression", lambda: fastml.PolynomialRegression(degree=2), Y_REAL,
     ["n_features_in_"]),
    ("LogisticRegression-lbfgs", lambda: fastml.LogisticRegression(alpha=1e-3),
     Y_THREE, ["coef_", "intercept_", "n_iter_"]),
    ("LogisticRegression-gd", lambda: fastml.LogisticRegression(
        solver="gd", alpha=1e-2, max_iter=25, tol=None), Y_CLASS, ["coef_", "intercept_"]),
    ("LogisticRegression-newton", lambda: fastml.LogisticRegression(solver="newton"),
     Y_THREE, ["coef_", "intercept_", "n_iter_"]),
]


@pytest.mark.parametrize("make, y, names", [e[1:] for e in EXACT], ids=[e[0] for e in EXACT])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_exact_plans_equal_fit(spark, make, y, names, weighted):
    """Statistics and objectives over skewed partitions (one empty) with and without
    weights: the in-memory fit to 1e-10, predictions too."""
    frame = table(y=y, w=WEIGHT if weighted else None)
    df = spark_frame(spark, frame)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = make().fit(df, "y", sample_weight="w" if weighted else None)
        expected = make().fit(frame[FEATURES], frame["y"],
                              sample_weight=WEIGHT if weighted else None)
    for name in names:
        np.testing.assert_allclose(getattr(got, name), getattr(expected, name),
                                   rtol=1e-10, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(got.predict(frame[FEATURES]), expected.predict(frame[FEATURES]),
                               rtol=1e-10, atol=1e-10)
    assert list(got.feature_names_in_) == FEATURES and got.n_features_in_ == D


def test_categorical_naive_bayes_and_text_columns(spark):
    """Text and integer category columns (a DataFrame reaches the plan): counts equal fit's."""
    codes = np.abs(np.round(2 * X[:, :2])).astype(np.int64)
    frame = pd.DataFrame({"k": codes[:, 0], "t": np.where(codes[:, 1] > 1, "hi", "lo"),
                          "y": Y_THREE})
    df = spark_frame(spark, frame)
    for make in (fastml.CategoricalNB, fastml.NaiveBayes):
        got = make().fit(df, "y")
        expected = make().fit(frame[["k", "t"]], frame["y"])
        np.testing.assert_allclose(got.predict_proba(frame[["k", "t"]]),
                                   expected.predict_proba(frame[["k", "t"]]), rtol=1e-10)


def test_a_vector_column_and_float32_columns(spark):
    """An ml vector column (VectorAssembler's output) is the features; float32 columns keep
    float32 as fit keeps them."""
    from pyspark.ml.feature import VectorAssembler
    frame = table(y=Y_REAL)
    df = VectorAssembler(inputCols=FEATURES, outputCol="v").transform(
        spark_frame(spark, frame)).select("v", "y")
    for make in (fastml.LinearRegression, lambda: fastml.LogisticRegression(alpha=1e-2)):
        y = Y_REAL if make is fastml.LinearRegression else (Y_REAL > 0).astype(int)
        data = df if make is fastml.LinearRegression else \
            df.withColumn("y", (df["y"] > 0).cast("long"))
        got, expected = make().fit(data, "y"), make().fit(X, y)
        np.testing.assert_allclose(got.coef_, expected.coef_, rtol=1e-10, atol=1e-12)
        assert got.n_features_in_ == D and not hasattr(got, "feature_names_in_")
    single = spark_frame(spark, table(y=Y_REAL).astype({c: np.float32 for c in FEATURES}))
    got = fastml.LinearRegression().fit(single, "y")
    expected = fastml.LinearRegression().fit(X.astype(np.float32), Y_REAL)
    np.testing.assert_allclose(got.coef_, expected.coef_, rtol=1e-5)


# -------------------------------------------------- approximate plans: as the dask backend
def dask_fit(make, frame, sizes, weight=None):
    da = pytest.importorskip("dask.array")
    Xd = da.from_array(frame[FEATURES].to_numpy(), chunks=(sizes, D))
    yd = da.from_array(frame["y"].to_numpy(), chunks=sizes)
    wd = None if weight is None else da.from_array(weight, chunks=sizes)
    return make().fit(Xd, yd, sample_weight=wd)


MIXED = [
    ("LogisticRegression-sgd", lambda: fastml.LogisticRegression(
        solver="sgd", max_iter=4, tol=None, random_state=3), Y_CLASS),
    ("Perceptron", lambda: fastml.Perceptron(max_iter=3, random_state=4), Y_CLASS),
    ("LinearSVM", lambda: fastml.LinearSVM(max_iter=3, random_state=5), Y_THREE),
    ("Ridge-sgd", lambda: fastml.Ridge(solver="sgd", max_iter=3, random_state=6), Y_REAL),
]


@pytest.mark.parametrize("make, y", [m[1:] for m in MIXED], ids=[m[0] for m in MIXED])
def test_the_sgd_family_mixes_as_on_dask(spark, make, y):
    """Parameter mixing over the same partitions gives the dask backend's model exactly
    (the parts' seeds come from random_state, the round and the part's index; the empty
    partition adds nothing)."""
    sizes = (150, 0, 250, 200)
    frame = table(y=y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = make().fit(spark_frame(spark, frame, sizes), "y")
        expected = dask_fit(make, table(y=y), sizes)
    np.testing.assert_array_equal(got.coef_, expected.coef_)
    np.testing.assert_array_equal(got.loss_curve_, expected.loss_curve_)


def test_forests_grow_as_on_dask(spark):
    """Each partition grows its share of the trees on its own rows: the dask backend's
    forest for the same partitions (the same deal of trees and seeds)."""
    make = functools.partial(fastml.RandomForestClassifier, n_estimators=5, max_depth=4,
                             random_state=2)
    sizes = (200, 150, 250)
    frame = table(y=Y_THREE)
    got = make().fit(spark_frame(spark, frame, sizes), "y")
    expected = dask_fit(make, frame, sizes)
    np.testing.assert_array_equal(got.predict_proba(X), expected.predict_proba(X))
    regressor = fastml.RandomForestRegressor(n_estimators=4, max_depth=3, random_state=1)
    fitted = regressor.fit(spark_frame(spark, table(y=Y_REAL), sizes), "y")
    assert len(fitted.estimators_) == 4
    assert np.corrcoef(fitted.predict(X), Y_REAL)[0, 1] > 0.8


def test_columns_and_information_gain(spark):
    df = spark_frame(spark, table())
    poly = fastml.PolynomialFeatures(degree=2).fit(df.select(*FEATURES))
    assert poly.n_output_features_ == fastml.PolynomialFeatures(degree=2).fit(
        X).n_output_features_
    from fastml.info import information_gain_table
    codes = pd.DataFrame({"k": np.abs(np.round(X[:, 0])).astype(int), "r": X[:, 1],
                          "y": Y_THREE})
    got = information_gain_table(spark_frame(spark, codes), "y")
    expected = information_gain_table(codes[["k", "r"]], codes["y"])
    assert [r["name"] for r in got.rows] == [r["name"] for r in expected.rows]
    np.testing.assert_allclose([r["gain"] for r in got.rows],
                               [r["gain"] for r in expected.rows], rtol=1e-12)


# ----------------------------------------------------------------------- reliability
def fail_once(function, marker, *args):
    """`function`, except that its first call (in whichever task comes first) raises a
    RuntimeError, as a lost executor would: a task failure, not a data error."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return function(*args)
    raise RuntimeError("injected failure")


class FlakyRegression(fastml.LinearRegression):
    """LinearRegression whose per-partition statistics fail once."""
    marker = None

    def _scaled_fit(self):
        plan = super()._scaled_fit()
        plan.part = functools.partial(fail_once, plan.part, self.marker)
        return plan


class FlakyLogistic(fastml.LogisticRegression):
    """LogisticRegression whose parts, held in the barrier stage, fail once while they are
    prepared (after the label pass: in the middle of the fit)."""
    marker = None

    def _scaled_fit(self):
        plan = super()._scaled_fit()
        plan.prepare = functools.partial(fail_once, plan.prepare, self.marker)
        return plan


@pytest.mark.parametrize("flaky, plain", [(FlakyRegression, fastml.LinearRegression),
                                          (FlakyLogistic, fastml.LogisticRegression)],
                         ids=["mapped task", "barrier task"])
def test_a_task_failing_once_is_retried_with_the_same_result(spark, tmp_path, flaky, plain):
    """A mapped task is rerun by Spark; a barrier task's whole stage is rerun and the driver
    starts the fit over on the new tasks: bit for bit the undisturbed fit."""
    df = spark_frame(spark, table(y=Y_REAL if plain is fastml.LinearRegression else Y_CLASS))
    estimator = flaky()
    estimator.marker = str(tmp_path / "failed-once")
    estimator.fit(df, "y")
    assert os.path.exists(estimator.marker)         # the failure did happen
    undisturbed = plain().fit(df, "y")
    np.testing.assert_array_equal(estimator.coef_, undisturbed.coef_)
    np.testing.assert_array_equal(estimator.intercept_, undisturbed.intercept_)


@pytest.mark.parametrize("one_host", [True, False], ids=["staged in files", "coalesced"])
def test_more_partitions_than_task_slots(spark, monkeypatch, one_host):
    """Six partitions, two task slots: on one machine each partition is staged in a file the
    barrier tasks map (and removed after the fit, also after a refused one), across machines
    the partitions are coalesced; either way the iterative fit equals the in-memory one,
    weights and all."""
    from pyspark import SparkFiles
    from fastml import _spark
    monkeypatch.setattr(_spark, "_one_host", lambda spark: one_host)
    frame = table(y=Y_THREE, w=WEIGHT)
    df = spark_frame(spark, frame)
    got = fastml.LogisticRegression().fit(df, "y", sample_weight="w")
    expected = fastml.LogisticRegression().fit(frame[FEATURES], frame["y"],
                                               sample_weight=WEIGHT)
    np.testing.assert_allclose(got.coef_, expected.coef_, rtol=1e-9, atol=1e-12)
    broken = frame.copy()
    broken.loc[N - 1, "b"] = np.nan     # in the last partition: a refused fit leaves no file
    with pytest.raises(ValueError, match="NaN"):
        fastml.LogisticRegression().fit(spark_frame(spark, broken), "y", sample_weight="w")
    root = SparkFiles.getRootDirectory()
    left = [n for n in os.listdir(root) if n.startswith("fastml-staged-")]
    assert not left, [os.listdir(os.path.join(root, n)) for n in left]


FAILING = [("GaussianNB", fastml.GaussianNB, Y_THREE),
           ("LinearRegression", fastml.LinearRegression, Y_REAL),
           ("LogisticRegression", fastml.LogisticRegression, Y_CLASS),
           ("Perceptron", lambda: fastml.Perceptron(random_state=np.random.default_rng(1)),
            Y_CLASS),
           ("RandomForest", lambda: fastml.RandomForestClassifier(n_estimators=3,
                                                                  random_state=0), Y_CLASS)]


@pytest.mark.parametrize("make, y", [f[1:] for f in FAILING], ids=[f[0] for f in FAILING])
def test_a_failed_fit_leaves_the_estimator_as_it_was(spark, make, y):
    """Infinity in partition 4 (rows from 300): fit's message, naming the partition and its first
    row; the earlier fit stays bit for bit (a Generator random_state too)."""
    estimator = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.fit(spark_frame(spark, table(y=y)), "y")
    before = snapshot(estimator)
    bad = X.copy()
    bad[350, 2] = np.inf
    with pytest.raises(ValueError) as in_memory:
        make().fit(bad, y)
    with pytest.raises(ValueError, match=r"\(in partition 4, rows from 300\)$") as caught:
        estimator.fit(spark_frame(spark, table(bad, y)), "y")
    assert str(caught.value).startswith(str(in_memory.value).split(" (")[0][:40])
    same(before, snapshot(estimator))


def test_labels_and_weights_give_fits_errors(spark):
    """A NaN label, a negative or NaN weight, one class in all the data: fit's errors; a
    partition of one class, or of zero weight, is fine."""
    y = Y_CLASS.astype(float)
    y[420] = np.nan
    for make in (fastml.GaussianNB, fastml.LogisticRegression):
        with pytest.raises(ValueError, match="NaN") as in_memory:
            make().fit(X, y)
        with pytest.raises(ValueError, match=r"NaN.*\(in partition 4, rows from 300\)"):
            make().fit(spark_frame(spark, table(y=y)), "y")
    for weight, message in ((-1.0, "negative"), (np.nan, "NaN")):
        w = WEIGHT.copy()
        w[100] = weight
        with pytest.raises(ValueError, match=message):
            fastml.GaussianNB().fit(X, Y_CLASS, sample_weight=w)
        with pytest.raises(ValueError, match=rf"{message}.*\(in partition 2, rows from 90\)"):
            fastml.GaussianNB().fit(spark_frame(spark, table(w=w)), "y", sample_weight="w")
    one = np.zeros(N, dtype=np.int64)
    with pytest.raises(ValueError) as in_memory:
        fastml.LogisticRegression().fit(X, one)
    with pytest.raises(ValueError) as caught:
        fastml.LogisticRegression().fit(spark_frame(spark, table(y=one)), "y")
    assert str(caught.value) == str(in_memory.value)
    ordered = np.sort(Y_CLASS)       # partitions 0 to 3 hold class 0 only
    frame = table(y=ordered)
    got = fastml.LogisticRegression().fit(spark_frame(spark, frame), "y")
    expected = fastml.LogisticRegression().fit(frame[FEATURES], ordered)
    np.testing.assert_allclose(got.coef_, expected.coef_, rtol=1e-10)
    w = WEIGHT.copy()
    w[90:290] = 0.0                  # partition 2 weighs nothing
    got = fastml.GaussianNB().fit(spark_frame(spark, table(w=w)), "y", sample_weight="w")
    np.testing.assert_allclose(got.theta_, fastml.GaussianNB().fit(
        X, Y_CLASS, sample_weight=w).theta_, rtol=1e-10)


def test_no_rows_and_bad_columns(spark):
    empty = spark_frame(spark, table().iloc[:0], sizes=(0, 0))
    for make in (fastml.GaussianNB, fastml.LinearRegression, fastml.LogisticRegression):
        with pytest.raises(ValueError, match="0 samples"):
            make().fit(empty, "y")
    df = spark_frame(spark, table())
    with pytest.raises(TypeError, match="name of one of its columns"):
        fastml.GaussianNB().fit(df, "nope")
    with pytest.raises(ValueError, match="y is required"):
        fastml.GaussianNB().fit(df)
    with pytest.raises(TypeError, match="array<"):
        fastml.GaussianNB().fit(df.selectExpr("array(a, b) as v", "y"), "y")
    with pytest.raises(fastml.NotScalable, match="on a Spark DataFrame: .*split search"):
        fastml.DecisionTreeClassifier().fit(df, "y")
    with pytest.raises(fastml.NotScalable, match="on a Spark DataFrame"):
        fastml.VotedPerceptron().fit(df, "y")


@settings(max_examples=4, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(sizes=st.lists(st.integers(0, 60), min_size=1, max_size=5).filter(
    lambda s: sum(s) >= 20))
def test_any_partitioning_equals_fit(spark, sizes):
    """For any partitioning (empty partitions included), GaussianNB and L-BFGS on Spark
    equal the in-memory fit."""
    n = sum(sizes)
    frame = table(X[:n], Y_CLASS[:n])
    df = spark_frame(spark, frame, tuple(sizes))
    for make, name in ((fastml.GaussianNB, "theta_"), (fastml.LogisticRegression, "coef_")):
        np.testing.assert_allclose(getattr(make().fit(df, "y"), name),
                                   getattr(make().fit(frame[FEATURES], frame["y"]), name),
                                   rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------------- a Parquet table
@pytest.fixture(scope="module")
def parquet_table(tmp_path_factory):
    """Three Parquet files of two row groups each."""
    directory = tmp_path_factory.mktemp("spark-parquet")
    frame = table(y=Y_THREE, w=WEIGHT)
    for k in range(3):
        frame.iloc[k * 200:(k + 1) * 200].to_parquet(directory / f"part-{k}.parquet",
                                                     row_group_size=100)
    return str(directory), frame


def test_a_parquet_table_is_read_by_the_tasks(spark, parquet_table, monkeypatch):
    """spark.read.parquet(path), columns selected: the tasks read the files' row groups
    themselves (no JVM-to-Python copy), exact as fit; errors name the file and row group; a
    filtered DataFrame is shipped as Arrow batches instead."""
    from fastml import _spark
    path, frame = parquet_table
    df = spark.read.parquet(path)
    plans = [fastml.GaussianNB()._scaled_fit(), fastml.LogisticRegression()._scaled_fit()]
    assert len(_spark._Table(df, "y", "w", plans[0]).files) == 6
    assert _spark._Table(df.select("a", "b", "y"), "y", None, plans[1]).files is not None
    assert _spark._Table(df.filter("a > 0"), "y", None, plans[0]).files is None
    assert _spark._Table(df.selectExpr("a + 1 as a", "y"), "y", None, plans[0]).files is None
    for make, name in ((fastml.GaussianNB, "theta_"),
                       (lambda: fastml.LogisticRegression(alpha=1e-2), "coef_")):
        got = make().fit(df, "y", sample_weight="w")
        expected = make().fit(frame[FEATURES], frame["y"], sample_weight=frame["w"])
        np.testing.assert_allclose(getattr(got, name), getattr(expected, name), rtol=1e-10)
    bad = frame.copy()
    bad.loc[430, "c"] = np.inf
    bad.iloc[400:600].to_parquet(os.path.join(path, "part-2.parquet"), row_group_size=100)
    with pytest.raises(ValueError, match=r"infinity.*\(in part-2.parquet, row group 0, "
                                         r"rows from 400\)"):
        fastml.GaussianNB().fit(spark.read.parquet(path), "y", sample_weight="w")
    frame.iloc[400:600].to_parquet(os.path.join(path, "part-2.parquet"), row_group_size=100)


# ----------------------------------------------------------------------- predictions
def test_predictions_are_a_lazy_column(spark):
    """predict / predict_proba / decision_function / transform of a fitted estimator on a
    Spark DataFrame: the DataFrame with one more column, equal to the in-memory output."""
    frame = table(y=Y_THREE)
    df = spark_frame(spark, frame).drop("y")
    for estimator in (fastml.LogisticRegression().fit(frame[FEATURES], frame["y"]),
                      fastml.GaussianNB().fit(X, Y_THREE),
                      fastml.PolynomialFeatures(degree=2).fit(frame[FEATURES])):
        for method in ("predict", "predict_proba", "decision_function", "transform"):
            if not hasattr(estimator, method):
                continue
            out = getattr(estimator, method)(df)
            assert out.columns == FEATURES + [method]
            values = out.toPandas()[method].to_numpy()
            values = np.stack(values) if values.dtype == object else values
            np.testing.assert_allclose(values, getattr(estimator, method)(frame[FEATURES]),
                                       rtol=1e-12, atol=1e-12)


def test_the_ml_stages_in_a_pipeline(spark, tmp_path):
    """VectorAssembler and SparkEstimator in a pyspark.ml Pipeline: the model's predictions
    and probabilities (ml vectors) equal the in-memory fit's, an MLlib evaluator reads them,
    and the fitted fastml estimator saves and loads off Spark."""
    from pyspark.ml import Pipeline
    from pyspark.ml.evaluation import BinaryClassificationEvaluator
    from pyspark.ml.feature import VectorAssembler
    from fastml.spark import SparkEstimator, SparkModel
    frame = table(y=Y_CLASS.astype(float), w=WEIGHT)
    df = spark_frame(spark, frame)
    pipeline = Pipeline(stages=[
        VectorAssembler(inputCols=FEATURES, outputCol="features"),
        SparkEstimator(fastml.LogisticRegression(alpha=1e-3), labelCol="y", weightCol="w")])
    model = pipeline.fit(df)
    fitted = model.stages[-1]
    assert isinstance(fitted, SparkModel)
    expected = fastml.LogisticRegression(alpha=1e-3).fit(X, Y_CLASS.astype(float),
                                                         sample_weight=WEIGHT)
    np.testing.assert_allclose(fitted.estimator.coef_, expected.coef_, rtol=1e-10)
    out = model.transform(df).toPandas()
    np.testing.assert_array_equal(out["prediction"], expected.predict(X))
    np.testing.assert_allclose(np.stack(out["probability"].map(lambda v: v.toArray())),
                               expected.predict_proba(X), rtol=1e-10)
    auc = BinaryClassificationEvaluator(labelCol="y", rawPredictionCol="probability") \
        .evaluate(model.transform(df))
    assert 0.8 < auc <= 1.0
    path = tmp_path / "model.fastml"
    fastml.save(fitted.estimator, path)
    np.testing.assert_array_equal(fastml.load(path).predict(X), expected.predict(X))
    by_columns = SparkEstimator(fastml.GaussianNB(), inputCols=FEATURES, labelCol="y",
                                probabilityCol="", rawPredictionCol="").fit(df)
    assert by_columns.transform(df).columns == df.columns + ["prediction"]
