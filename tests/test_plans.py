"""Fitting part by part (issue 29): the plan protocol's executors, fit_stream (chunks) and the
dask backend (partitions), on every family. A fit that fails at any part leaves the estimator
bit for bit as it was (its fit, n_iter_, the state of a Generator given as random_state) and
names the part and its first row; sample weights are checked per part as fit checks them; a
str names one column; the stream's misleading errors are clear; an estimator without a plan
gets NotScalable with its reason."""
import functools
import os
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import fastml  # noqa: E402
from fastml import fit_stream  # noqa: E402
from _robust import same, snapshot  # noqa: E402

N, CHUNK, BAD_ROW = 1000, 100, 530
RNG = np.random.default_rng(0)
X = RNG.normal(size=(N, 4))
Y_CLASS = (X[:, 0] + 0.3 * RNG.normal(size=N) > 0).astype(np.int64)
Y_REAL = X @ [1.0, 2.0, 3.0, 4.0] + RNG.normal(size=N)

# (id, estimator maker, target): every family's plan, each solver that has one
FAMILIES = [
    ("GaussianNB", lambda: fastml.GaussianNB(), Y_CLASS),
    ("CategoricalNB", lambda: fastml.CategoricalNB(), Y_CLASS),
    ("NaiveBayes", lambda: fastml.NaiveBayes(), Y_CLASS),
    ("LinearRegression", lambda: fastml.LinearRegression(), Y_REAL),
    ("Ridge", lambda: fastml.Ridge(alpha=2.0), Y_REAL),
    ("PolynomialRegression", lambda: fastml.PolynomialRegression(degree=2), Y_REAL),
    ("LogisticRegression-lbfgs", lambda: fastml.LogisticRegression(), Y_CLASS),
    ("LogisticRegression-gd", lambda: fastml.LogisticRegression(solver="gd", max_iter=20),
     Y_CLASS),
    ("LogisticRegression-newton", lambda: fastml.LogisticRegression(solver="newton"), Y_CLASS),
    ("LogisticRegression-sgd", lambda: fastml.LogisticRegression(
        solver="sgd", random_state=np.random.default_rng(3)), Y_CLASS),
    ("Perceptron", lambda: fastml.Perceptron(random_state=np.random.default_rng(4)), Y_CLASS),
    ("LinearSVM", lambda: fastml.LinearSVM(random_state=5), Y_CLASS),
    ("VotedPerceptron", lambda: fastml.VotedPerceptron(random_state=6), Y_CLASS),
    ("Ridge-sgd", lambda: fastml.Ridge(solver="sgd", alpha=1.0, random_state=7), Y_REAL),
]
IDS = [name for name, _, _ in FAMILIES]


def features_for(estimator):
    """CategoricalNB counts categories: small integer codes."""
    return np.abs(np.round(2 * X)) if isinstance(estimator, fastml.CategoricalNB) else X


def chunks_of(Xs, ys, w=None):
    return lambda: iter([(Xs[i:i + CHUNK], ys[i:i + CHUNK]) if w is None else
                         (Xs[i:i + CHUNK], ys[i:i + CHUNK], w[i:i + CHUNK])
                         for i in range(0, len(ys), CHUNK)])


@pytest.mark.parametrize("make, y", [f[1:] for f in FAMILIES], ids=IDS)
def test_a_failing_late_chunk_leaves_the_estimator_as_it_was(make, y):
    """A refused chunk 5 of 10: the earlier fit stays, bit for bit (a Perceptron refused at
    chunk 5 once predicted from chunks 0-4; naive Bayes, least squares and L-BFGS were left
    unfitted), and the error names chunk 5 and its first row."""
    estimator = make()
    Xs = features_for(estimator)
    bad = Xs.copy()
    bad[BAD_ROW, 2] = np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit_stream(estimator, chunks_of(Xs, y))
    before = snapshot(estimator)
    with pytest.raises(ValueError, match=r"infinity.* \(in chunk 5, rows from 500\)$"):
        fit_stream(estimator, chunks_of(bad, y))
    same(before, snapshot(estimator))
    unfitted = make()
    with pytest.raises(ValueError, match="chunk 5"):
        fit_stream(unfitted, chunks_of(bad, y))
    same(snapshot(make()), snapshot(unfitted))


@pytest.mark.parametrize("make, y", [f[1:] for f in FAMILIES if f[0] != "VotedPerceptron"],
                         ids=[i for i in IDS if i != "VotedPerceptron"])
def test_a_failing_partition_leaves_the_estimator_as_it_was(make, y, dask_client):
    da = pytest.importorskip("dask.array")
    dd = pytest.importorskip("dask.dataframe")
    estimator = make()
    Xs = features_for(estimator)
    bad = Xs.copy()
    bad[BAD_ROW, 2] = np.inf
    chunks = (200, 300, 100, 250, 150)       # row 530 is in partition 2, rows from 500
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.fit(da.from_array(Xs, chunks=(chunks, 4)), da.from_array(y, chunks=chunks))
    before = snapshot(estimator)
    with pytest.raises(ValueError, match=r"infinity.* \(in partition 2, rows from 500\)$"):
        estimator.fit(da.from_array(bad, chunks=(chunks, 4)), da.from_array(y, chunks=chunks))
    same(before, snapshot(estimator))
    frame = dd.from_pandas(pd.DataFrame(bad, columns=list("abcd")).assign(y=y),
                           npartitions=4)       # the rows of the partitions are counted
    starts = list(frame.divisions[:-1])         # (the index is the row number)
    part = int(np.searchsorted(starts, BAD_ROW, side="right") - 1)
    with pytest.raises(ValueError, match=rf"\(in partition {part}, rows from {starts[part]}\)"):
        estimator.fit(frame[list("abcd")], frame["y"])
    same(before, snapshot(estimator))


@pytest.mark.parametrize("weight, message", [(np.nan, "NaN or infinity"),
                                             (-1.0, "negative"), (-np.inf, "NaN or infinity")])
@pytest.mark.parametrize("make", [fastml.GaussianNB, fastml.CategoricalNB, fastml.NaiveBayes,
                                  fastml.LinearRegression, fastml.Perceptron])
def test_bad_weights_in_one_part_are_refused_as_fit_refuses_them(make, weight, message):
    """Naive Bayes skipped a chunk / partition whose weights were all NaN, negative or -inf
    (fit refuses them); a part whose weights are all 0 is fine (its labels still count)."""
    estimator = make()
    Xs, y = features_for(estimator), Y_CLASS
    w = np.ones(N)
    w[300:400] = weight
    with pytest.raises(ValueError, match=rf"{message}.*\(in chunk 3, rows from 300\)"):
        fit_stream(estimator, chunks_of(Xs, y, w))
    with pytest.raises(ValueError, match=message):
        make().fit(Xs, y, sample_weight=w)
    da = pytest.importorskip("dask.array")
    with pytest.raises(ValueError, match=rf"{message}.*\(in partition 3, rows from 300\)"):
        make().fit(da.from_array(Xs, chunks=(CHUNK, 4)), da.from_array(y, chunks=CHUNK),
                   sample_weight=da.from_array(w, chunks=CHUNK))
    w[300:400] = 0.0
    streamed = fit_stream(make(), chunks_of(Xs, y, w))
    fitted = make().fit(Xs, y, sample_weight=w)
    if hasattr(fitted, "theta_"):
        np.testing.assert_allclose(streamed.theta_, fitted.theta_, rtol=1e-12)
    if isinstance(fitted, fastml.LinearRegression):
        np.testing.assert_allclose(streamed.coef_, fitted.coef_, rtol=1e-10)


@pytest.fixture(scope="module")
def table_path(tmp_path_factory):
    frame = pd.DataFrame(X, columns=["price", "area", "rooms", "age"]).assign(y=Y_REAL)
    path = tmp_path_factory.mktemp("plans") / "houses.parquet"
    frame.to_parquet(path, row_group_size=250)
    return str(path), frame


def test_a_str_names_one_column(table_path):
    """columns="price" fitted on columns p, r, i, c, e; drop="price" dropped them."""
    path, frame = table_path
    one = fit_stream(fastml.LinearRegression(), path, "y", columns="price")
    np.testing.assert_allclose(one.coef_, fastml.LinearRegression().fit(
        frame[["price"]], frame["y"]).coef_, rtol=1e-10)
    assert list(one.feature_names_in_) == ["price"]
    rest = fit_stream(fastml.LinearRegression(), path, "y", drop="price")
    assert list(rest.feature_names_in_) == ["area", "rooms", "age"]
    with pytest.raises(ValueError, match="columns must name columns"):
        fit_stream(fastml.LinearRegression(), path, "y", columns=[0, 1])


def test_a_late_bad_label_names_its_own_chunk(tmp_path):
    """A NaN label at row 4,512 of a CSV was reported at "chunk 0" (the label pass runs beside
    the first chunk's fit): it now names the chunk that holds it."""
    rows = ["a,b,y"] + [f"{i % 7},{i % 5},{i % 2}" for i in range(6000)]
    rows[4513] = "1,2,"
    path = tmp_path / "labels.csv"
    path.write_text("\n".join(rows) + "\n")
    for model in (fastml.Perceptron(), fastml.LogisticRegression()):
        with pytest.raises(ValueError, match=r"^y contains NaN.* \(in chunk 4, rows from 4000\)$"):
            fit_stream(model, str(path), "y", chunk_rows=1000)


def test_labels_that_change_type_between_files_are_named(tmp_path):
    """Integer labels in one file and text in the next gave numpy's "'<' not supported
    between instances of 'str' and 'int'"."""
    pd.DataFrame({"x": [0.0, 1.0, 2.0], "y": [0, 1, 0]}).to_parquet(tmp_path / "a.parquet")
    pd.DataFrame({"x": [0.0, 1.0, 2.0], "y": ["no", "yes", "no"]}).to_parquet(
        tmp_path / "b.parquet")
    for model in (fastml.GaussianNB(), fastml.Perceptron(), fastml.LogisticRegression()):
        with pytest.raises(ValueError, match="labels change type"):
            fit_stream(model, str(tmp_path), "y")


def test_duplicate_column_names_are_named(tmp_path):
    path = tmp_path / "twice.csv"
    path.write_text("a,a,y\n1,2,0\n3,4,1\n")
    with pytest.raises(ValueError, match=r"more than one column named \['a'\]"):
        fit_stream(fastml.GaussianNB(), str(path), "y")
    frame = pd.DataFrame([[1.0, 2.0, 0], [3.0, 4.0, 1]], columns=["a", "a", "y"])
    with pytest.raises(ValueError, match=r"chunk 0 .*more than one column named \['a'\]"):
        fit_stream(fastml.GaussianNB(), [frame], "y")


def test_chunks_as_python_lists_stream():
    """(X, y) chunks given as lists gave AttributeError ('list' has no attribute 'shape')."""
    Xl, yl = X[:200].tolist(), Y_CLASS[:200].tolist()
    streamed = fit_stream(fastml.GaussianNB(), [(Xl[:100], yl[:100]), (Xl[100:], yl[100:])])
    np.testing.assert_allclose(streamed.theta_, fastml.GaussianNB().fit(Xl, yl).theta_,
                               rtol=1e-12)


class OnlyPartialFit(fastml.BaseEstimator):
    """An online estimator of a user's: partial_fit, no plan."""

    def __init__(self, rate=0.1):
        self.rate = rate

    def partial_fit(self, X, y, classes=None):
        self.mean_ = np.mean(X, axis=0)
        return self

    def fit(self, X, y):
        return self.partial_fit(X, y)


def test_an_estimator_without_a_plan_is_not_scalable_and_says_why():
    """A partial_fit is not a plan: how do two parts' states combine? It failed in Dask with
    an AttributeError ('no attribute _engine')."""
    chunks = [(X[:100], Y_CLASS[:100])]
    with pytest.raises(fastml.NotScalable, match=r"OnlyPartialFit cannot be fitted by "
                                                 r"fit_stream: it has no plan .*partial_fit"):
        fit_stream(OnlyPartialFit(), chunks)
    da = pytest.importorskip("dask.array")
    with pytest.raises(fastml.NotScalable, match="cannot be fitted on a dask collection"):
        OnlyPartialFit().fit(da.from_array(X, chunks=(CHUNK, 4)),
                             da.from_array(Y_CLASS, chunks=CHUNK))
    assert issubclass(fastml.NotScalable, TypeError)
    for estimator, reason in [(fastml.KernelPerceptron(), "support vectors"),
                              (fastml.DecisionTreeClassifier(), "split search")]:
        with pytest.raises(fastml.NotScalable, match=reason):
            fit_stream(estimator, chunks)


def test_dask_errors_that_misled(dask_client):
    """A forest on a DataFrame with a categorical column said "Cannot interpret
    'CategoricalDtype' as a data type"; a pandas y beside a dask X is told how to partition
    it."""
    da = pytest.importorskip("dask.array")
    dd = pytest.importorskip("dask.dataframe")
    Xd = da.from_array(X, chunks=(CHUNK, 4))
    frame = pd.DataFrame({"a": X[:, 0], "c": pd.Categorical(np.where(X[:, 1] > 0, "u", "v"))})
    ddf = dd.from_pandas(frame, npartitions=3)
    with pytest.raises(TypeError, match="numeric columns only"):
        fastml.RandomForestClassifier(n_estimators=3).fit(
            ddf, dd.from_pandas(pd.Series(Y_CLASS), npartitions=3))
    with pytest.raises(TypeError, match=r"y is a ndarray; give y as a dask array"):
        fastml.GaussianNB().fit(Xd, Y_CLASS)


@settings(max_examples=25, deadline=None)
@given(sizes=st.lists(st.integers(1, 40), min_size=1, max_size=8), bad=st.integers(0, 7),
       data=st.data())
def test_any_chunking_equals_fit_and_any_failing_chunk_changes_nothing(sizes, bad, data):
    """For any chunking, the streamed GaussianNB / LinearRegression equals fit on all rows; a
    chunk made bad anywhere is named with its first row and leaves the fit as it was."""
    n = sum(sizes)
    starts = np.cumsum([0] + sizes[:-1])
    Xs, yc, yr = X[:n], np.arange(n) % 3, Y_REAL[:n]

    def source(Xv, yv):
        return lambda: iter([(Xv[s:s + k], yv[s:s + k]) for s, k in zip(starts, sizes)])

    for make, y in ((fastml.GaussianNB, yc), (fastml.LinearRegression, yr)):
        if make is fastml.GaussianNB and len(np.unique(y)) < 2:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            streamed = fit_stream(make(), source(Xs, y))
            fitted = make().fit(Xs, y)
        for name in ("theta_", "coef_"):
            if hasattr(fitted, name):
                np.testing.assert_allclose(getattr(streamed, name), getattr(fitted, name),
                                           rtol=1e-7, atol=1e-9)
        k = bad % len(sizes)
        row = int(starts[k]) + data.draw(st.integers(0, sizes[k] - 1))
        broken = Xs.copy()
        broken[row, 1] = np.nan if make is fastml.LinearRegression else np.inf
        before = snapshot(streamed)
        with pytest.raises(ValueError, match=rf"\(in chunk {k}, rows from {starts[k]}\)$"):
            fit_stream(streamed, source(broken, y))
        same(before, snapshot(streamed))


def test_the_cache_parses_a_csv_once_and_is_removed(tmp_path, monkeypatch):
    """L-BFGS reads the data once per iteration: with the cache (the default) the CSV is
    parsed once, the later passes read the chunks back from a temporary directory, which is
    removed after the fit (after a failed one too); the model is the same either way."""
    from fastml import _readers
    frame = pd.DataFrame(X, columns=list("abcd")).assign(y=Y_CLASS)
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    parses = []
    tables = _readers.CSVReader._tables
    monkeypatch.setattr(_readers.CSVReader, "_tables",
                        lambda self, columns: parses.append(columns) or tables(self, columns))
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    params = dict(alpha=1e-3, max_iter=30, tol=None)
    cached = fit_stream(fastml.LogisticRegression(**params), str(path), "y", chunk_rows=150,
                        cache=str(cache_dir))
    assert len(parses) == 1 and os.listdir(cache_dir) == []
    parses.clear()
    uncached = fit_stream(fastml.LogisticRegression(**params), str(path), "y", chunk_rows=150,
                          cache=False)
    assert len(parses) > 5      # the labels, then a pass per evaluation
    np.testing.assert_array_equal(cached.coef_, uncached.coef_)
    fitted = fastml.LogisticRegression(**params).fit(frame[list("abcd")], frame["y"])
    np.testing.assert_allclose(cached.coef_, fitted.coef_, rtol=1e-8)
    sgd = dict(shuffle=False, tol=None, random_state=0)
    streamed = fit_stream(fastml.Perceptron(**sgd), str(path), "y", chunk_rows=150, epochs=4,
                          cache=str(cache_dir))
    np.testing.assert_array_equal(streamed.coef_, fit_stream(
        fastml.Perceptron(**sgd), str(path), "y", chunk_rows=150, epochs=4, cache=False).coef_)
    frame.assign(a=frame["a"].astype(object).where(frame.index < 900, "text")).to_csv(
        path, index=False)
    monkeypatch.setattr(fastml.stream, "CSV_BLOCK_BYTES", 4096)     # types from the first 4 kB
    with pytest.raises(ValueError, match="changes type"):
        fit_stream(fastml.LogisticRegression(**params), str(path), "y", chunk_rows=150,
                   cache=str(cache_dir))
    assert os.listdir(cache_dir) == []


LAZY = ("predict", "predict_proba", "predict_log_proba", "decision_function", "transform")


@pytest.mark.parametrize("name", [name for name, _ in fastml.all_estimators()])
def test_every_fitted_estimator_predicts_lazily_on_dask(name, dask_client):
    """predict / predict_proba / decision_function / transform of every estimator, fitted in
    memory, give lazy dask collections equal to the in-memory outputs (Perceptron and
    LinearSVM, whose predict is inherited, computed the whole array and returned numpy, and
    failed on a dask DataFrame)."""
    da = pytest.importorskip("dask.array")
    dd = pytest.importorskip("dask.dataframe")
    from _robust import good_data, make
    estimator = make(dict(fastml.all_estimators())[name])
    Xs, y = good_data(estimator, n=120, d=3, n_classes=3)
    if isinstance(estimator, fastml.CategoricalNB):
        Xs = np.abs(np.round(Xs))
    frame = pd.DataFrame(Xs, columns=["a", "b", "c"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.fit(frame, y)
    methods = [m for m in LAZY if hasattr(estimator, m)]
    assert methods
    for method in methods:
        expected = np.asarray(getattr(estimator, method)(frame))
        on_array = getattr(estimator, method)(da.from_array(Xs, chunks=(50, 3)))
        assert isinstance(on_array, da.Array), method
        on_frame = getattr(estimator, method)(dd.from_pandas(frame, npartitions=3))
        assert isinstance(on_frame, (dd.Series, dd.DataFrame)), method
        for lazy in (on_array, on_frame):
            got = np.asarray(lazy.compute())
            assert got.shape == expected.shape, method
            if expected.dtype.kind in "fc":
                np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
            else:
                np.testing.assert_array_equal(got, expected)



def test_routing_keeps_a_conditional_method_conditional():
    """A routed method that exists only under a condition (available_if) stays so: hasattr
    tells the truth, and where it exists a dask X goes to the backend."""
    from fastml._base import available_if

    class Sometimes(fastml.BaseEstimator):
        def __init__(self, proba=True):
            self.proba = proba

        @available_if(lambda self: self.proba, "needs proba=True")
        def predict_proba(self, X):
            return np.full((len(X), 2), 0.5)

    assert not hasattr(Sometimes(proba=False), "predict_proba")
    da = pytest.importorskip("dask.array")
    lazy = Sometimes().predict_proba(da.from_array(X, chunks=(CHUNK, 4)))
    assert isinstance(lazy, da.Array) and lazy.shape == (N, 2)
    np.testing.assert_array_equal(lazy.compute(), np.full((N, 2), 0.5))


# ------------------------------------------------------------------ class_weight in parts
W = RNG.uniform(0.2, 2.0, size=N)
Y_RARE = (X[:, 0] + 0.5 * RNG.normal(size=N) > 1.0).astype(np.int64)   # ~17% positives
EXACT_CLASS_WEIGHTED = [
    ("lbfgs", lambda cw: fastml.LogisticRegression(class_weight=cw, tol=1e-10, max_iter=500)),
    ("gd", lambda cw: fastml.LogisticRegression(solver="gd", class_weight=cw, tol=1e-10,
                                                max_iter=3000)),
]
ONE_PASS_CLASS_WEIGHTED = [      # shuffle=False: one streamed pass is fit's first epoch
    ("Perceptron", lambda cw: fastml.Perceptron(class_weight=cw, shuffle=False, tol=None,
                                                max_iter=1)),
    ("LinearSVM", lambda cw: fastml.LinearSVM(class_weight=cw, shuffle=False, tol=None,
                                              max_iter=1)),
    ("LogisticRegression-sgd", lambda cw: fastml.LogisticRegression(
        solver="sgd", class_weight=cw, shuffle=False, tol=None, max_iter=1)),
]


@pytest.mark.parametrize("class_weight", [{0: 1.0, 1: 3.0}, "balanced"], ids=["dict", "balanced"])
@pytest.mark.parametrize("make", [m for _, m in EXACT_CLASS_WEIGHTED + ONE_PASS_CLASS_WEIGHTED],
                         ids=[i for i, _ in EXACT_CLASS_WEIGHTED + ONE_PASS_CLASS_WEIGHTED])
def test_class_weight_in_a_stream_is_fits(make, class_weight):
    # "balanced" weighs by the whole stream's class totals (the label pass), as fit does; the
    # weights and class weights multiply, as in fit
    fitted = make(class_weight).fit(X, Y_RARE, sample_weight=W)
    streamed = fit_stream(make(class_weight), chunks_of(X, Y_RARE, W), epochs=1)
    # (the solvers stop within their tolerance of the optimum: 1e-7 of coefficients near 3)
    np.testing.assert_allclose(streamed.coef_, fitted.coef_, rtol=1e-8, atol=1e-7)
    unweighted = make(None).fit(X, Y_RARE, sample_weight=W)
    assert np.abs(unweighted.coef_ - fitted.coef_).max() > 1e-3   # the weights matter here


@pytest.mark.parametrize("class_weight", [{0: 1.0, 1: 3.0}, "balanced"], ids=["dict", "balanced"])
@pytest.mark.parametrize("make", [m for _, m in EXACT_CLASS_WEIGHTED],
                         ids=[i for i, _ in EXACT_CLASS_WEIGHTED])
def test_class_weight_on_dask_is_fits(make, class_weight, dask_client):
    da = pytest.importorskip("dask.array")
    chunks = (200, 300, 100, 250, 150)
    fitted = make(class_weight).fit(X, Y_RARE, sample_weight=W)
    distributed = make(class_weight).fit(da.from_array(X, chunks=(chunks, 4)),
                                         da.from_array(Y_RARE, chunks=chunks),
                                         sample_weight=da.from_array(W, chunks=chunks))
    np.testing.assert_allclose(distributed.coef_, fitted.coef_, rtol=1e-8, atol=1e-7)


def test_balanced_on_dask_passes_uses_the_whole_datas_class_totals(dask_client):
    # a partition holding one class must not make that class "balanced" on its own: the
    # factors come from all partitions' totals (here: the parts' models are mixed, so the
    # check is that the fit runs and weighs the rare class up, as fit does)
    da = pytest.importorskip("dask.array")
    order = np.argsort(Y_RARE, kind="stable")          # partitions of one class each
    Xs, ys = X[order], Y_RARE[order]
    model = fastml.LogisticRegression(solver="sgd", class_weight="balanced", random_state=0)
    model.fit(da.from_array(Xs, chunks=250), da.from_array(ys, chunks=250))
    plain = fastml.LogisticRegression(solver="sgd", random_state=0)
    plain.fit(da.from_array(Xs, chunks=250), da.from_array(ys, chunks=250))
    assert model.predict(X).mean() > plain.predict(X).mean()


def test_balanced_needs_a_source_that_can_be_read_twice():
    one_shot = iter([(X[i:i + CHUNK], Y_RARE[i:i + CHUNK]) for i in range(0, N, CHUNK)])
    with pytest.raises(ValueError, match="one-shot iterator cannot be read twice"):
        fit_stream(fastml.Perceptron(class_weight="balanced"), one_shot)
    with pytest.raises(ValueError, match="one-shot iterator cannot be read twice"):
        fit_stream(fastml.LogisticRegression(solver="sgd", class_weight="balanced"), one_shot)


def test_label_summaries_merge_their_class_totals():
    from fastml._plans import label_summary
    a = label_summary(None, np.array(["b", "b", "c"]), np.array([1.0, 2.0, 0.5]), True)
    b = label_summary(None, np.array(["a", "c"]), None, True)
    merged = a.merge(b)
    assert merged.classes.tolist() == ["a", "b", "c"]
    assert merged.class_totals.tolist() == [1.0, 3.0, 1.5]
    assert (merged.rows, merged.weight) == (5, 5.5)


NEWTON = [dict(alpha=1e-3), dict(alpha=0.0, tol=1e-10), dict(alpha=1e-2, class_weight="balanced")]


@pytest.mark.parametrize("params", NEWTON, ids=["alpha", "alpha=0", "balanced"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_newton_over_parts_is_the_in_memory_fit(params, n_classes, dask_client):
    """solver="newton" (it was NotScalable): the parts' log-loss, gradient and Hessian summed
    for the in-memory solver, streamed and on dask: the same iterations and the same model
    to rounding (1e-10), with sample weights and class weights."""
    da = pytest.importorskip("dask.array")
    noise = np.random.default_rng(5).normal(size=N)
    y = Y_CLASS if n_classes == 2 else np.digitize(X[:, 1] + 0.5 * noise, [-0.4, 0.4])
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=N)
    make = functools.partial(fastml.LogisticRegression, solver="newton", **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = make().fit(X, y, sample_weight=w)
        streamed = fit_stream(make(), chunks_of(X, y, w))
        distributed = make().fit(da.from_array(X, chunks=(250, 4)),
                                 da.from_array(y, chunks=250),
                                 sample_weight=da.from_array(w, chunks=250))
    for model in (streamed, distributed):
        assert model.n_iter_ == fitted.n_iter_
        np.testing.assert_allclose(model.coef_, fitted.coef_, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(model.intercept_, fitted.intercept_, rtol=1e-10,
                                   atol=1e-12)


def test_newton_cg_and_sparse_parts_are_the_in_memory_fit():
    """More parameters than Newton forms a Hessian for (Newton-CG: the products summed over
    the parts) and CSR chunks: the in-memory fit to 1e-10."""
    import scipy.sparse as sp
    rng = np.random.default_rng(2)
    wide = rng.normal(size=(900, 210))
    y = np.digitize(wide[:, 0] + wide[:, 1] + rng.normal(size=900), [-0.5, 0.5])
    sparse = sp.random(900, 30, density=0.2, random_state=3, format="csr")
    y_sparse = (np.asarray(sparse.sum(axis=1)).ravel() + 0.5 * rng.normal(size=900) > 3)
    for Xs, ys in ((wide, y), (sparse, y_sparse.astype(int))):
        make = functools.partial(fastml.LogisticRegression, solver="newton", alpha=1e-2)
        fitted = make().fit(Xs, ys)
        streamed = fit_stream(make(), lambda: iter([(Xs[i:i + 300], ys[i:i + 300])
                                                    for i in range(0, 900, 300)]))
        assert streamed.n_iter_ == fitted.n_iter_
        np.testing.assert_allclose(streamed.coef_, fitted.coef_, rtol=1e-10, atol=1e-12)


def test_columns_of_one_dask_parquet_read_stay_aligned(tmp_path, dask_client):
    """X and y selected from one dd.read_parquet: dask reads the narrow y column in fewer,
    larger partitions than the features (it fuses the reads of small columns), so pairing
    X's partition i with y's gave "X has 100 rows, y has 400"; the partitions are now split
    from one frame."""
    dd = pytest.importorskip("dask.dataframe")
    wide = np.tile(X, (1, 10))
    names = [f"x{j}" for j in range(wide.shape[1])]
    frame = pd.DataFrame(wide, columns=names).assign(y=Y_REAL, w=np.linspace(0.5, 2.0, N))
    for k in range(10):
        frame.iloc[100 * k:100 * (k + 1)].to_parquet(tmp_path / f"part-{k}.parquet")
    table = dd.read_parquet(str(tmp_path))
    got = fastml.LinearRegression().fit(table[names], table["y"], sample_weight=table["w"])
    expected = fastml.LinearRegression().fit(frame[names], frame["y"], sample_weight=frame["w"])
    np.testing.assert_allclose(got.coef_, expected.coef_, rtol=1e-8, atol=1e-10)
