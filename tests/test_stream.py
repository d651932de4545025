"""fit_stream: every exact estimator streamed from a multi-chunk file equals fit on the whole
table; LogisticRegression's batch solvers equal the in-memory fit; the SGD family equals fit on
the concatenation in the order the chunks were visited; bounded memory under RLIMIT_AS; clear
errors for estimators that need all rows, for columns that change type and one-shot sources."""
import os
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import fastml  # noqa: E402
from fastml import fit_stream  # noqa: E402
from _robust import run_python  # noqa: E402

NUM = [f"f{i}" for i in range(5)]


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(0)
    n = 2000
    X = rng.normal(size=(n, len(NUM))) * [1, 2, 3, 1, 1] + [3, -1, 100, 0, 5]
    w = rng.normal(size=len(NUM))
    frame = pd.DataFrame(X, columns=NUM)
    frame["yr"] = X @ w + rng.normal(size=n)
    score = (X - X.mean(axis=0)) / X.std(axis=0) @ w
    frame["yc"] = np.where(score + rng.normal(size=n) > 0, "yes", "no")
    frame["y3"] = np.digitize(score + rng.normal(size=n), [-0.5, 0.5])
    # "blue" first appears in the last quarter: a later chunk grows the vocabulary
    frame["color"] = np.where(np.arange(n) < 1500, rng.choice(["red", "green"], size=n),
                              rng.choice(["red", "green", "blue"], size=n))
    frame["weight"] = rng.uniform(0.5, 2.0, size=n)
    return frame


@pytest.fixture(scope="module")
def parquet_path(table, tmp_path_factory):
    path = tmp_path_factory.mktemp("stream") / "table.parquet"
    pq.write_table(pa.Table.from_pandas(table, preserve_index=False), path, row_group_size=300)
    return str(path)


def relative_error(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


EXACT = [
    (lambda: fastml.GaussianNB(), "yc", NUM),
    (lambda: fastml.GaussianNB(ddof=0), "y3", NUM),
    (lambda: fastml.CategoricalNB(), "yc", ["color"]),
    (lambda: fastml.NaiveBayes(smoothing="m-estimate"), "y3", NUM[:2] + ["color"]),
    (lambda: fastml.LinearRegression(), "yr", NUM),
    (lambda: fastml.Ridge(alpha=0.3), "yr", NUM),
    (lambda: fastml.Ridge(alpha=0.1, fit_intercept=False), "yr", NUM),
    (lambda: fastml.PolynomialRegression(degree=2, alpha=1e-3), "yr", NUM[:3]),
]


def assert_same_model(streamed, fitted, X):
    if hasattr(fitted, "predict_proba"):
        np.testing.assert_allclose(streamed.predict_proba(X), fitted.predict_proba(X),
                                   rtol=0, atol=1e-12)
        np.testing.assert_array_equal(streamed.classes_, fitted.classes_)
        for name in ("theta_", "var_", "class_count_"):
            if hasattr(fitted, name):
                assert relative_error(getattr(streamed, name), getattr(fitted, name)) < 1e-10
        if hasattr(fitted, "categories_"):
            for a, b in zip(streamed.categories_, fitted.categories_):
                np.testing.assert_array_equal(a, b)
    else:
        assert relative_error(streamed.coef_, fitted.coef_) < 1e-10
        assert relative_error(np.ravel(streamed.intercept_) + 1, np.ravel(fitted.intercept_) + 1) \
            < 1e-10
        assert relative_error(streamed.predict(X), fitted.predict(X)) < 1e-10
    assert streamed.n_features_in_ == fitted.n_features_in_
    np.testing.assert_array_equal(streamed.feature_names_in_, list(X.columns))


@pytest.mark.parametrize("make, target, columns", EXACT)
def test_parquet_stream_equals_fit_on_whole_table(make, target, columns, table, parquet_path):
    streamed = fit_stream(make(), parquet_path, target, chunk_rows=350, columns=columns)
    fitted = make().fit(table[columns], table[target])
    assert_same_model(streamed, fitted, table[columns])


@pytest.mark.parametrize("make, target, columns", EXACT[::2])
def test_weighted_stream_equals_weighted_fit(make, target, columns, table, parquet_path):
    streamed = fit_stream(make(), parquet_path, target, chunk_rows=400, columns=columns,
                          sample_weight="weight")
    fitted = make().fit(table[columns], table[target], sample_weight=table["weight"])
    assert_same_model(streamed, fitted, table[columns])


def test_directory_glob_csv_and_iterables_are_the_same_stream(table, tmp_path):
    columns = NUM[:2] + ["color"]
    frame = table[columns + ["y3"]]
    for k, start in enumerate(range(0, len(frame), 700)):
        pq.write_table(pa.Table.from_pandas(frame.iloc[start:start + 700],
                                            preserve_index=False), tmp_path / f"part{k}.parquet")
    frame.to_csv(tmp_path / "table.csv", index=False)   # a directory reads its Parquet files
    fitted = fastml.NaiveBayes().fit(frame[columns], frame["y3"])
    pieces = [frame.iloc[s:s + 333] for s in range(0, len(frame), 333)]
    sources = [str(tmp_path), str(tmp_path / "part*.parquet"), str(tmp_path / "table.csv"),
               lambda: iter(pieces), pieces,
               lambda: ((p[columns], p["y3"]) for p in pieces)]
    for source in sources:
        streamed = fit_stream(fastml.NaiveBayes(), source, "y3", chunk_rows=256)
        assert_same_model(streamed, fitted, frame[columns])


@pytest.mark.parametrize("solver", ["lbfgs", "gd"])
@pytest.mark.parametrize("target", ["yc", "y3"])
def test_logistic_batch_solvers_equal_in_memory_fit(solver, target, table, parquet_path):
    X = table[NUM]
    X = (X - X.mean()) / X.std()
    frame = X.assign(y=table[target])
    params = dict(solver=solver, alpha=1e-3, max_iter=60, tol=1e-6)
    chunks = [frame.iloc[s:s + 450] for s in range(0, len(frame), 450)]
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastml.ConvergenceWarning)
        streamed = fit_stream(fastml.LogisticRegression(**params), lambda: iter(chunks), "y")
        fitted = fastml.LogisticRegression(**params).fit(X, table[target])
    assert relative_error(streamed.coef_, fitted.coef_) < 1e-8
    assert relative_error(streamed.intercept_, fitted.intercept_) < 1e-8
    assert streamed.n_iter_ == fitted.n_iter_
    np.testing.assert_allclose(streamed.loss_curve_, fitted.loss_curve_, rtol=1e-10)


def test_logistic_on_csr_chunks_equals_fit():
    import scipy.sparse as sp
    rng = np.random.default_rng(3)
    X = sp.random(600, 8, density=0.3, random_state=4, format="csr")
    y = (X @ rng.normal(size=8) + 0.1 * rng.normal(size=600) > 0).astype(int)
    parts = [(X[s:s + 170], y[s:s + 170]) for s in range(0, 600, 170)]
    params = dict(solver="gd", alpha=1e-2, max_iter=40, tol=None)
    streamed = fit_stream(fastml.LogisticRegression(**params), parts)
    fitted = fastml.LogisticRegression(**params).fit(X, y)
    assert relative_error(streamed.coef_, fitted.coef_) < 1e-8


SGD = [
    (lambda **k: fastml.LogisticRegression(solver="sgd", learning_rate="decay", eta0=0.05, **k),
     "yc"),
    (lambda **k: fastml.LogisticRegression(solver="minibatch", batch_size=64, **k), "y3"),
    (lambda **k: fastml.Perceptron(average=True, **k), "yc"),
    (lambda **k: fastml.LinearSVM(**k), "y3"),
    (lambda **k: fastml.LinearRegression(solver="sgd", learning_rate="inverse", eta0=0.01, **k),
     "yr"),
]


@pytest.fixture(scope="module")
def scaled(table):
    X = table[NUM]
    return (X - X.mean()) / X.std()


@pytest.mark.parametrize("make, target", SGD)
def test_sgd_epochs_equal_fit_over_the_concatenation(make, target, table, scaled):
    """shuffle=False: the schedule, step count and averaging carry on across chunks, and every
    chunk of pass e is epoch e, so three passes equal fit with max_iter=3 (chunks of 320
    rows: a mini-batch does not span two chunks, so chunks a multiple of batch_size align)."""
    frame = scaled.assign(y=table[target])
    chunks = [frame.iloc[s:s + 320] for s in range(0, len(frame), 320)]
    streamed = fit_stream(make(shuffle=False, tol=None, random_state=0),
                          lambda: iter(chunks), "y", epochs=3)
    fitted = make(shuffle=False, tol=None, max_iter=3, random_state=0).fit(scaled,
                                                                              table[target])
    np.testing.assert_allclose(streamed.coef_, fitted.coef_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(streamed.intercept_, fitted.intercept_, rtol=1e-12, atol=1e-12)
    assert streamed.n_iter_ == 3
    np.testing.assert_allclose(streamed.loss_curve_, fitted.loss_curve_, rtol=1e-10)


def test_ridge_sgd_later_passes_keep_one_pass_of_penalty(table, scaled):
    """Ridge(solver="sgd") steps with the per-row penalty alpha / (total weight): every pass
    steps with one pass's totals, as fit's epochs do (the first with those of the pass over
    the labels before it). As running sums the totals grew every pass and the penalty fell as
    1 / pass: at alpha = n (lambda = 1), 20 passes gave a coefficient norm of 3.87 where fit
    gives 2.26 (the exact ridge: 2.28); with the first pass online, 2.3% off fit's coef."""
    n = len(scaled)
    params = dict(solver="sgd", alpha=float(n), shuffle=False, tol=None, max_iter=20,
                  eta0=0.002, average=True)
    chunks = [(scaled.to_numpy()[s:s + 400], table["yr"].to_numpy()[s:s + 400])
              for s in range(0, n, 400)]
    streamed = fit_stream(fastml.Ridge(**params), lambda: iter(chunks), epochs=20)
    fitted = fastml.Ridge(**params).fit(scaled.to_numpy(), table["yr"].to_numpy())
    exact = fastml.Ridge(alpha=float(n)).fit(scaled.to_numpy(), table["yr"].to_numpy())
    np.testing.assert_allclose(streamed.coef_, fitted.coef_, rtol=1e-12)
    np.testing.assert_allclose(fitted.coef_, exact.coef_, atol=0.03 * np.abs(
        exact.coef_).max())                     # (20 SGD epochs approach the exact ridge)
    assert "_pass_totals" not in vars(streamed)   # a later partial_fit counts its rows again


@pytest.mark.parametrize("make, target", [
    (lambda: fastml.LogisticRegression(solver="sgd", alpha=0.01), "yc"),
    (lambda: fastml.Ridge(solver="sgd", alpha=50.0, learning_rate="adagrad"), "yr"),
    (lambda: fastml.LinearSVM(alpha=0.01), "y3")])
def test_weighted_first_pass_equals_fits_first_epoch(make, target, table, parquet_path):
    """A file's weights are summed by the pass over its labels before the first pass, so the
    first pass steps with the whole file's totals as fit's first epoch does (it weighed by
    the rows read so far: 0.3% off fit's coef for weighted logistic SGD)."""
    model = make().set_params(shuffle=False, tol=None, max_iter=1)
    streamed = fit_stream(model, parquet_path, target, columns=NUM, sample_weight="weight",
                          chunk_rows=300)
    fitted = make().set_params(shuffle=False, tol=None, max_iter=1).fit(
        table[NUM].to_numpy(), table[target].to_numpy(), sample_weight=table["weight"])
    np.testing.assert_allclose(streamed.coef_, fitted.coef_, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(streamed.intercept_, fitted.intercept_, rtol=1e-11, atol=1e-13)


def test_sgd_shuffles_rows_within_each_chunk(table, scaled):
    """One pass with shuffle=True equals fit (shuffle=False) on the rows in the order of the
    chunk-local permutations drawn from the estimator's random_state."""
    frame = scaled.assign(y=table["yc"])
    sizes = [700, 700, 600]
    starts = np.cumsum([0] + sizes[:-1])
    chunks = [frame.iloc[s:s + n] for s, n in zip(starts, sizes)]
    streamed = fit_stream(fastml.LogisticRegression(solver="sgd", random_state=7, shuffle=True),
                          chunks, "y")
    rng = np.random.default_rng(7)
    order = np.concatenate([s + rng.permutation(n) for s, n in zip(starts, sizes)])
    fitted = fastml.LogisticRegression(solver="sgd", shuffle=False, max_iter=1, tol=None) \
        .fit(scaled.iloc[order], table["yc"].iloc[order])
    np.testing.assert_allclose(streamed.coef_, fitted.coef_, rtol=1e-12)
    assert not np.allclose(streamed.coef_, fastml.LogisticRegression(
        solver="sgd", shuffle=False, max_iter=1, tol=None).fit(scaled, table["yc"]).coef_)


def test_voted_perceptron_streams(table, scaled):
    frame = scaled.assign(y=table["yc"])
    chunks = [frame.iloc[s:s + 500] for s in range(0, len(frame), 500)]
    streamed = fit_stream(fastml.VotedPerceptron(shuffle=False), lambda: iter(chunks), "y",
                          epochs=2)
    fitted = fastml.VotedPerceptron(shuffle=False, max_iter=2).fit(scaled, table["yc"])
    np.testing.assert_allclose(streamed.decision_function(scaled),
                               fitted.decision_function(scaled), rtol=1e-12)


def test_one_shot_iterator(table):
    """A generator gives one pass: enough for naive Bayes (whatever labels each chunk holds),
    a clear error for the batch solvers, and, for the SGD family, whose first chunk fixes the
    classes, a clear error when a later chunk brings a new label."""
    frame = table[NUM + ["yc"]]
    pieces = (frame.iloc[s:s + 500] for s in range(0, len(frame), 500))
    streamed = fit_stream(fastml.GaussianNB(), pieces, "yc")
    fitted = fastml.GaussianNB().fit(frame[NUM], frame["yc"])
    np.testing.assert_allclose(streamed.theta_, fitted.theta_, rtol=1e-12)
    with pytest.raises(ValueError, match="one-shot iterator"):
        fit_stream(fastml.LogisticRegression(), iter([frame]), "yc")
    ordered = frame.sort_values("yc")
    halves = [ordered.iloc[:500], ordered.iloc[500:1200], ordered.iloc[1200:]]
    streamed = fit_stream(fastml.GaussianNB(), iter(halves), "yc")   # "no" only, then both
    fitted = fastml.GaussianNB().fit(ordered[NUM], ordered["yc"])
    assert_same_model(streamed, fitted, ordered[NUM])
    with pytest.raises(ValueError, match="chunk 1 .*label the first chunk did not have"):
        fit_stream(fastml.Perceptron(), iter([frame, frame.assign(yc="maybe")]), "yc")
    with pytest.raises(ValueError, match="first chunk fixes the classes.*only the class"):
        fit_stream(fastml.Perceptron(), iter([ordered.iloc[:500], ordered.iloc[-500:]]), "yc")
    with pytest.raises(ValueError, match="another pass.*one-shot"):
        fit_stream(fastml.Perceptron(), iter([frame.iloc[:500]]), "yc", epochs=2)


def test_column_changing_type_is_an_error_naming_column_and_chunk(table, tmp_path,
                                                                   monkeypatch):
    first = table[["f0", "color", "yc"]].iloc[:100]
    second = first.copy()
    second["f0"] = "x"
    with pytest.raises(ValueError, match=r"column 'f0' changes type in chunk 1 \(rows from "
                                         r"100\): numeric .* categorical"):
        fit_stream(fastml.NaiveBayes(), [first, second], "yc")
    path = tmp_path / "changes.csv"
    rows = ["a,b,y"] + [f"{i},{i},0" for i in range(4000)] + ["1,oops,1"]
    path.write_text("\n".join(rows) + "\n")
    monkeypatch.setattr(fastml.stream, "CSV_BLOCK_BYTES", 4096)   # types from the first 4 kB
    with pytest.raises(ValueError, match="column 'b' changes type in block"):
        fit_stream(fastml.NaiveBayes(), str(path), "y", chunk_rows=100_000)


def test_ragged_csv_row_is_named_as_such(tmp_path, monkeypatch):
    """A row with more (or fewer) fields than the header: in a later block it was reported as
    "column '?' changes type in block 5 ... read as ? from the first block"; in the first
    block pyarrow's ArrowInvalid came out without the file's name."""
    rows = ["a,b,y"] + [f"{i},{i},{i % 2}" for i in range(4000)]
    late, first, empty = (tmp_path / name for name in ("late.csv", "first.csv", "empty.csv"))
    late.write_text("\n".join(rows + ["5,6,7,1"] + rows[1:50]) + "\n")
    first.write_text("\n".join(rows[:10] + ["5,6"] + rows[10:20]) + "\n")
    empty.write_text("")
    monkeypatch.setattr(fastml.stream, "CSV_BLOCK_BYTES", 4096)
    with pytest.raises(ValueError, match=r"late.csv: a row in block \d+ \(rows from \d+\) has "
                                         r"4 fields where the header has 3 \(a ragged row"):
        fit_stream(fastml.GaussianNB(), str(late), "y")
    with pytest.raises(ValueError, match=r"first.csv: a row in the first block has 2 fields "
                                         r"where the header has 3"):
        fit_stream(fastml.GaussianNB(), str(first), "y")
    with pytest.raises(ValueError, match=r"cannot read .*empty.csv: Empty CSV file"):
        fit_stream(fastml.GaussianNB(), str(empty), "y")


def test_csv_integer_feature_with_a_later_decimal_streams(tmp_path, monkeypatch):
    """Column types come from the CSV's first block: a feature column of integers there that
    holds 6.5 in a later block stopped fit_stream ("column 'b' changes type in block 5 ...
    read as int64"), where fit on the file in memory reads it as floats. Integer features
    are now read as float64 (they become floats in the arrays anyway); the integer labels
    keep their type, so the classes are those of the in-memory fit."""
    rows = ["a,b,y"] + [f"{i},{i * 7 % 13},{i % 3}" for i in range(4000)] + ["5,6.5,1"]
    path = tmp_path / "late_decimal.csv"
    path.write_text("\n".join(rows) + "\n")
    monkeypatch.setattr(fastml.stream, "CSV_BLOCK_BYTES", 4096)
    frame = pd.read_csv(path)
    for make in (fastml.GaussianNB, fastml.LinearRegression):
        streamed = fit_stream(make(), str(path), "y", chunk_rows=500)
        fitted = make().fit(frame[["a", "b"]], frame["y"])
        for name in ("theta_", "var_", "class_count_", "coef_", "intercept_", "classes_"):
            if hasattr(fitted, name):
                np.testing.assert_allclose(getattr(streamed, name), getattr(fitted, name),
                                           rtol=1e-10)
    assert streamed.n_features_in_ == 2
    assert fit_stream(fastml.GaussianNB(), str(path), "y").classes_.dtype.kind == "i"


def test_parquet_files_with_int_and_float_column_stream(tmp_path):
    """Parquet files written one by one (pandas: a day without decimals is int64): a chunk
    joining the two files' batches failed in Arrow ("Schema at index 1 was different");
    the chunks now stop at the change, numbers stream as numbers, text is named."""
    rng = np.random.default_rng(3)
    a = pd.DataFrame({"x": rng.integers(0, 9, 50), "z": rng.normal(size=50),
                      "y": rng.integers(0, 2, 50)})
    b = pd.DataFrame({"x": rng.normal(size=50), "z": rng.normal(size=50),
                      "y": rng.integers(0, 3, 50)})
    numbers, text = tmp_path / "numbers", tmp_path / "text"
    numbers.mkdir(), text.mkdir()
    a.to_parquet(numbers / "a.parquet"), b.to_parquet(numbers / "b.parquet")
    a.to_parquet(text / "a.parquet"), b.assign(x=b.x.astype(str)).to_parquet(text / "b.parquet")
    whole = pd.concat([a, b], ignore_index=True)
    for make in (fastml.GaussianNB, fastml.LinearRegression):
        streamed = fit_stream(make(), str(numbers), "y", chunk_rows=7)
        fitted = make().fit(whole[["x", "z"]], whole["y"])
        for name in ("theta_", "var_", "class_count_", "coef_", "intercept_"):
            if hasattr(fitted, name):
                np.testing.assert_allclose(getattr(streamed, name), getattr(fitted, name),
                                           rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match=r"column 'x' changes type in chunk \d+ \(rows from "
                                         r"50\): numeric .* categorical"):
        fit_stream(fastml.NaiveBayes(), str(text), "y", chunk_rows=7)


@pytest.mark.parametrize("spec", [["i", "j"], "i"])
def test_naive_bayes_categorical_features_by_name_on_numeric_files(spec, tmp_path):
    """NaiveBayes(categorical_features=<names>) on an all-numeric file: each chunk went to
    it as the bare float array, and fit_stream failed ("categorical_features names column
    'i', which X does not have (columns: None)"); it equals fit on the frame."""
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"i": rng.integers(0, 4, 100), "j": rng.integers(10, 13, 100),
                          "z": rng.normal(size=100), "y": rng.integers(0, 2, 100)})
    path = tmp_path / "ints.parquet"
    frame.to_parquet(path)
    streamed = fit_stream(fastml.NaiveBayes(categorical_features=spec), str(path), "y",
                          chunk_rows=30)
    fitted = fastml.NaiveBayes(categorical_features=spec).fit(frame[["i", "j", "z"]],
                                                              frame["y"])
    np.testing.assert_array_equal(streamed.categorical_features_,
                                  fitted.categorical_features_)
    np.testing.assert_allclose(streamed.predict_proba(frame[["i", "j", "z"]]),
                               fitted.predict_proba(frame[["i", "j", "z"]]), rtol=1e-12)


def test_a_data_error_names_the_chunk_it_came_from(tmp_path):
    """An inf or NaN deep in a large file: the estimator's "X contains infinity" said what,
    not where; fit_stream adds the chunk and its first row (errors that already say where
    are left as they are)."""
    rows = ["a,b,y"] + [f"{i},{i % 7},{i % 2}" for i in range(100)]
    rows[58] = "57,inf,1"
    path = tmp_path / "inf.csv"
    path.write_text("\n".join(rows) + "\n")
    for model in (fastml.GaussianNB(), fastml.LinearRegression(), fastml.LogisticRegression(),
                  fastml.Perceptron()):
        with pytest.raises(ValueError, match=r"X contains infinity.* \(in chunk 2, rows "
                                             r"from 50\)$"):
            fit_stream(model, str(path), "y", chunk_rows=25)
    chunks = [(np.ones((5, 2)), np.arange(5) % 2), (np.ones((5, 3)), np.arange(5) % 2)]
    with pytest.raises(ValueError, match=r"^chunk 1 \(rows from 5\) has 3 features; the "
                                         r"chunks before had 2$"):
        fit_stream(fastml.GaussianNB(), chunks)


def test_columns_naming_the_target_is_refused(parquet_path):
    """columns=[..., target] made the target a feature: LinearRegression learned y = 1 * y
    (coef_ [0, 1]) without a word."""
    with pytest.raises(ValueError, match=r"columns lists \['yr'\], which is the target"):
        fit_stream(fastml.LinearRegression(), parquet_path, "yr", columns=["f0", "yr"])


def test_estimators_that_need_all_rows_get_a_clear_error(parquet_path):
    for estimator, message in [
            (fastml.DecisionTreeClassifier(), "fit it in memory"),
            (fastml.RandomForestClassifier(), "dask"),
            (fastml.KernelPerceptron(), "support vectors"),
            (fastml.LinearRegression(solver="lstsq"), "no streaming form"),
            (fastml.LinearSVM(solver="subgradient"), "no streaming form")]:
        with pytest.raises(TypeError, match=message):
            fit_stream(estimator, parquet_path, "yc")
    with pytest.raises(ValueError, match="epochs=3 is for the SGD family"):
        fit_stream(fastml.GaussianNB(), parquet_path, "yc", epochs=3)
    with pytest.raises(ValueError, match=r"no column\(s\) \['nope'\]"):
        fit_stream(fastml.GaussianNB(), parquet_path, "nope")
    with pytest.raises(FileNotFoundError):
        fit_stream(fastml.GaussianNB(), parquet_path + ".missing.parquet", "yc")


def test_progress_counts_rows(parquet_path, table, capsys):
    fit_stream(fastml.GaussianNB(), parquet_path, "yc", columns=NUM, chunk_rows=700,
               verbose=2)
    lines = [line for line in capsys.readouterr().err.splitlines() if "fit_stream" in line]
    assert [line.split()[2] for line in lines] == ["700/2000", "1400/2000", "2000/2000"]


def test_refit_starts_from_scratch(table, parquet_path):
    model = fastml.GaussianNB()
    fit_stream(model, parquet_path, "yc", columns=NUM)
    fit_stream(model, parquet_path, "yc", columns=NUM)
    np.testing.assert_allclose(model.class_count_.sum(), len(table))


MEMORY_SCRIPT = textwrap.dedent("""
    import resource, sys
    def address_space():
        for line in open("/proc/self/status"):
            if line.startswith("VmSize"):
                return int(line.split()[1]) * 1024
    import numpy as np, pandas as pd, pyarrow.parquet
    import fastml
    path, mode, extra = sys.argv[1], sys.argv[2], int(sys.argv[3])
    limit = address_space() + extra
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        if mode == "stream":
            model = fastml.fit_stream(fastml.GaussianNB(), path, "y", chunk_rows=10000)
        else:
            # the whole table in memory (pyarrow's threaded reader can hang, not fail, when an
            # allocation is refused, so the batches are gathered here)
            batches = pyarrow.parquet.ParquetFile(path).iter_batches(use_threads=False)
            frame = pd.concat([b.to_pandas() for b in batches], ignore_index=True)
            model = fastml.GaussianNB().fit(frame.drop(columns="y"), frame["y"])
    except (MemoryError, pyarrow.lib.ArrowException):   # an allocation the limit refused
        sys.exit(3)
    print(repr(float(model.theta_[1, 0])))
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc")
def test_streaming_a_file_larger_than_the_memory_limit(tmp_path):
    """A ~380 MB file under a 160 MB address-space allowance above the interpreter's
    baseline: streaming succeeds (with the exact means), loading it whole fails."""
    rng = np.random.default_rng(0)
    n, d = 1_000_000, 40
    path = tmp_path / "big.parquet"
    with pq.ParquetWriter(path, pa.schema([(f"x{j}", pa.float64()) for j in range(d)] +
                                          [("y", pa.int64())]), compression="none") as out:
        mean_x0 = np.zeros(2)
        count = np.zeros(2)
        for _ in range(n // 100_000):
            X = rng.standard_normal((100_000, d))
            y = (X[:, 1] > 0).astype(np.int64)
            out.write_table(pa.table({**{f"x{j}": X[:, j] for j in range(d)}, "y": y}))
            mean_x0 += np.bincount(y, weights=X[:, 0], minlength=2)
            count += np.bincount(y, minlength=2)
            del X
    assert os.path.getsize(path) > 2 * (160 << 20)
    env = dict(os.environ, ARROW_DEFAULT_MEMORY_POOL="system", MALLOC_ARENA_MAX="2",
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")

    def run(mode):
        return run_python(["-c", MEMORY_SCRIPT, str(path), mode, str(160 << 20)], 300, env)

    streamed = run("stream")
    assert streamed.returncode == 0, streamed.stderr[-2000:]
    assert abs(float(streamed.stdout) - mean_x0[1] / count[1]) < 1e-12
    whole = run("whole")
    assert whole.returncode == 3, (whole.returncode, whole.stderr[-2000:])


def test_cli_fit_and_predict_stream(table, parquet_path, tmp_path, capsys):
    """`fastml fit --chunk-rows` saves the streamed model (equal to fit on all rows) and
    `fastml predict --chunk-rows` writes the same file as the in-memory predict."""
    from fastml.cli import main
    from fastml.io import load
    columns = NUM + ["color"]
    frame = table[columns + ["yc"]]
    data = tmp_path / "data.parquet"
    frame.to_parquet(data)
    model_path = tmp_path / "m.fastml"
    assert main(["fit", str(data), "--target", "yc", "--model", "NaiveBayes",
                 "--chunk-rows", "300", "--out", str(model_path), "--quiet"]) == 0
    streamed = load(str(model_path))
    fitted = fastml.NaiveBayes().fit(frame[columns], frame["yc"])
    np.testing.assert_allclose(streamed.predict_proba({c: frame[c].to_numpy()
                                                       for c in columns}),
                               fitted.predict_proba(frame[columns]), atol=1e-12)
    outputs = []
    for extra in (["--chunk-rows", "333"], []):
        out = tmp_path / f"p{len(extra)}.csv"
        assert main(["predict", str(model_path), str(data), "--proba", "--out", str(out),
                     "--quiet", *extra]) == 0
        outputs.append(out.read_text())
    assert outputs[0] == outputs[1]
    assert len(outputs[0].splitlines()) == len(frame) + 1


def test_numeric_arrow_chunks_equal_their_pandas_form(tmp_path):
    # fit_stream copies all-numeric Arrow chunks straight into rows (no to_pandas): int columns
    # with nulls become NaN as to_pandas makes them. A bool column (categorical by fit's rules)
    # sends its chunk through to_pandas: both paths must give fit's model.
    rng = np.random.default_rng(3)
    n = 900
    ints = pa.array([None if i % 7 == 0 else int(v) for i, v in enumerate(rng.integers(0, 9, n))],
                    type=pa.int64())
    table = pa.table({"i": ints, "b": pa.array(rng.uniform(size=n) < 0.3),
                      "f": pa.array(rng.normal(size=n).astype(np.float32)),
                      "y": pa.array(np.where(rng.uniform(size=n) < 0.5, "a", "b"))})
    path = tmp_path / "numeric.parquet"
    pq.write_table(table, path, row_group_size=200)
    frame = table.to_pandas()
    for columns in (["i", "f"], ["i", "b", "f"]):
        X = frame[columns]
        streamed = fit_stream(fastml.NaiveBayes(), str(path), "y", chunk_rows=250,
                              columns=columns)
        fitted = fastml.NaiveBayes().fit(X, frame["y"])
        np.testing.assert_allclose(streamed.predict_proba(X), fitted.predict_proba(X), rtol=0,
                                   atol=1e-12)
        np.testing.assert_array_equal(streamed.feature_names_in_, columns)


@pytest.mark.parametrize("make, order", [
    (lambda: fastml.LinearRegression(), "F"),           # LinearStats: BLAS on column blocks
    (lambda: fastml.Ridge(alpha=0.5), "F"),
    (lambda: fastml.LinearRegression(solver="sgd"), "C"),   # the SGD kernel walks rows
    (lambda: fastml.LogisticRegression(solver="sgd"), "C"),
    (lambda: fastml.PolynomialRegression(degree=2), "C"),   # the expansion walks rows
    (lambda: fastml.GaussianNB(), "F"),                 # moments read F without a copy
])
def test_each_estimator_gets_its_layout_and_every_chunk_keeps_its_values(make, order, table,
                                                                        parquet_path):
    """The chunks a pass builds from numeric Arrow columns are in the estimator's layout
    (stream._LAYOUTS), hold the file's values, and stay intact while the caller keeps them
    (the arrays are reused only once nothing refers to them)."""
    from fastml.stream import _layout_for, _plan_for, _Stream
    estimator = make()
    layout = _layout_for(estimator, _plan_for(estimator, None))
    assert layout == order
    stream = _Stream(parquet_path, "yr", chunk_rows=300, columns=NUM, drop=None, weight=None,
                     verbose=0, desc="test", order=layout)
    for _ in range(2):   # a pass that keeps every chunk, then one that drops each at once
        kept = list(stream.chunks())
        assert [c.start for c in kept] == list(range(0, len(table), 300))
        for chunk in kept:
            assert chunk.matrix.flags["F_CONTIGUOUS" if order == "F" else "C_CONTIGUOUS"]
            rows = table.iloc[chunk.start:chunk.start + chunk.n_rows]
            np.testing.assert_array_equal(chunk.matrix, rows[NUM].to_numpy())
            np.testing.assert_array_equal(chunk.X.to_numpy(), rows[NUM].to_numpy())
            np.testing.assert_array_equal(chunk.y, rows["yr"].to_numpy())
        sums = [float(c.matrix.sum()) for c in stream.chunks()]
        np.testing.assert_allclose(sums, [table[NUM].iloc[s:s + 300].to_numpy().sum()
                                          for s in range(0, len(table), 300)], rtol=1e-12)


def test_read_ahead_builds_a_chunk_only_once_the_last_one_is_taken():
    """At most two chunks are alive: while the caller holds chunk j, the reader thread may
    build chunk j + 1, but starts on chunk j + 2 only once the caller has taken j + 1 (a queue
    of one plus the thread would have started j + 2 already)."""
    import time
    from fastml.stream import _read_ahead
    started = [0]

    def produce():
        for k in range(8):
            started[0] = k + 1
            yield k

    for j, item in enumerate(_read_ahead(produce())):
        assert item == j
        time.sleep(0.02)     # the caller fits: time for the thread to run ahead if it could
        assert started[0] <= j + 2
    assert started[0] == 8


def test_read_ahead_raises_the_readers_error_and_stops_its_thread():
    import threading
    from fastml.stream import _read_ahead

    def produce():
        yield 1
        raise OSError("disk gone")

    with pytest.raises(OSError, match="disk gone"):
        list(_read_ahead(produce()))
    items = _read_ahead(iter(range(100)))
    assert next(items) == 0
    items.close()       # a caller that stops early
    assert not [t for t in threading.enumerate() if t.name == "fastml-read-ahead"]


@pytest.mark.parametrize("labels", [np.array(["no", "yes", "zz"]), np.array([3, 7, 9]),
                                    np.array([-2.0, 0.0, 3.0]), np.array([False, True]),
                                    np.array([0, 255], dtype=np.uint8)])
@pytest.mark.parametrize("make", [lambda: fastml.GaussianNB(priors=None),
                                  lambda: fastml.CategoricalNB(),
                                  lambda: fastml.NaiveBayes(smoothing="m-estimate")])
def test_naive_bayes_chunks_holding_some_classes_equal_fit(make, labels, table):
    """Naive Bayes finds the classes as it goes: chunks holding one class (fitted with a
    stand-in second class), then all, then another mix, merge into fit's model (classes,
    counts, moments, priors), whatever the label type."""
    columns = NUM[:3] + ["color"] if isinstance(make(), fastml.NaiveBayes) else \
        (["color"] if isinstance(make(), fastml.CategoricalNB) else NUM)
    frame = table[columns].copy()
    y = labels[np.arange(len(frame)) % len(labels)]
    y[:300], y[300:450] = labels[-1], labels[0]         # single-class chunks first
    frame["label"] = y
    chunks = [frame.iloc[s:e] for s, e in [(0, 300), (300, 450), (450, 1000), (1000, 2000)]]
    streamed = fit_stream(make(), chunks, "label")
    fitted = make().fit(frame[columns], frame["label"])
    assert streamed.classes_.dtype.kind == fitted.classes_.dtype.kind
    np.testing.assert_array_equal(streamed.class_count_, fitted.class_count_)
    assert_same_model(streamed, fitted, frame[columns])


def test_naive_bayes_priors_and_too_few_classes():
    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(300, 3)), np.repeat(["a", "b", "c"], 100)
    chunks = [(X[s:s + 100], y[s:s + 100]) for s in range(0, 300, 100)]   # one class each
    priors = [0.2, 0.3, 0.5]
    streamed = fit_stream(fastml.GaussianNB(priors=priors), chunks)
    fitted = fastml.GaussianNB(priors=priors).fit(X, y)
    np.testing.assert_array_equal(streamed.class_prior_, fitted.class_prior_)
    np.testing.assert_allclose(streamed.predict_proba(X), fitted.predict_proba(X), atol=1e-12)
    with pytest.raises(ValueError, match="at least 2 classes in y; got 1 class"):
        fit_stream(fastml.GaussianNB(), chunks[:1])
    with pytest.raises(ValueError, match="continuous values in y"):
        fit_stream(fastml.GaussianNB(), [(X[:100], np.full(100, 0.5)), (X[100:], y[100:] == "b")])
    with pytest.raises(ValueError, match="priors has 2 values; there are 3 classes"):
        fit_stream(fastml.GaussianNB(priors=[0.5, 0.5]), chunks)


def test_stage_costs_build_where_the_thread_would_wait():
    """A chunk's arrays are built by the caller when its fit is quicker than a read (the
    reader then sets the pace), by the reader otherwise, and by the reader until the first
    fit has been timed."""
    from fastml.stream import _StageCosts
    costs = _StageCosts()
    costs.read, costs.build = 0.24, 0.08
    assert not costs.build_in_caller()          # no fit timed yet
    costs.fit = 0.10                            # 0.24 a chunk against 0.32
    assert costs.build_in_caller()
    costs.fit = 0.35                            # 0.43 against 0.35
    assert not costs.build_in_caller()


@pytest.mark.parametrize("in_caller", [False, True])
def test_chunks_built_by_either_thread_are_the_same(in_caller, table, parquet_path,
                                                    monkeypatch):
    from fastml import stream
    monkeypatch.setattr(stream._StageCosts, "build_in_caller", lambda self: in_caller)
    built = []
    split = stream._Stream._split

    def recording_split(self, *args):
        import threading
        built.append(threading.current_thread().name)
        return split(self, *args)

    monkeypatch.setattr(stream._Stream, "_split", recording_split)
    streamed = fit_stream(fastml.GaussianNB(), parquet_path, "yc", chunk_rows=300,
                          columns=NUM)
    assert len(built) == 7
    assert set(built) == {"MainThread" if in_caller else "fastml-read-ahead"}
    assert_same_model(streamed, fastml.GaussianNB().fit(table[NUM], table["yc"]), table[NUM])


def test_sgd_classes_are_found_beside_the_first_read(table, parquet_path, monkeypatch):
    """The SGD family's pass over a file's labels (classes and totals) runs in a background
    thread while the first chunk is read: its classes are the file's, and its error is raised
    in the caller."""
    import threading
    from fastml import stream
    seen = []
    labels = stream._Stream.labels

    def recording(self, with_classes):
        seen.append(threading.current_thread().name)
        return labels(self, with_classes)
    monkeypatch.setattr(stream._Stream, "labels", recording)
    model = fit_stream(fastml.Perceptron(random_state=0), parquet_path, "y3", columns=NUM,
                       chunk_rows=300)
    assert seen == ["fastml-labels"]
    np.testing.assert_array_equal(model.classes_, np.unique(table["y3"]))

    def failing(self, with_classes):
        raise OSError("target column unreadable")
    monkeypatch.setattr(stream._Stream, "labels", failing)
    with pytest.raises(OSError, match="target column unreadable"):
        fit_stream(fastml.Perceptron(), parquet_path, "y3", columns=NUM, chunk_rows=300)


def test_csv_stream_reads_cells_as_the_in_memory_reader_does(tmp_path):
    """An empty text cell is missing, "NA" is a level: the streamed CSV reader used pyarrow's
    default nulls ("NA", "null", "" ...), so fit_stream learned '' as a level and dropped "NA"
    (an outside audit); Parquet streams already agreed."""
    from fastml._tabular_io import _frame, read_table
    path = tmp_path / "na.csv"
    path.write_text("c,x,y\nNA,1,a\nNA,2,a\nUS,3,b\nUS,1,b\n,2,a\nUS,0,b\nNA,5,a\nUS,4,b\n")
    columns = read_table(path)
    y = columns.pop("y")
    fitted = fastml.NaiveBayes().fit(_frame(columns), y)
    streamed = fit_stream(fastml.NaiveBayes(), str(path), "y", chunk_rows=3)
    assert [c.tolist() for c in streamed.categories_] == [["NA", "US"]]
    X = _frame(columns)
    np.testing.assert_allclose(streamed.predict_proba(X), fitted.predict_proba(X), rtol=1e-12)


@pytest.mark.parametrize("make", [fastml.GaussianNB, fastml.CategoricalNB, fastml.NaiveBayes])
def test_naive_bayes_chunk_with_other_columns_is_named(make):
    """Naive Bayes fits each chunk on its own and merges: a chunk with another number of
    features gave "merge_moments needs 8 arrays of one shape" (GaussianNB), a broadcasting
    error (NaiveBayes), or no error at all (CategoricalNB kept 2 columns' counts and silently
    dropped the third); it now names the chunk and both widths."""
    X = np.arange(40).reshape(20, 2) % 5
    y = np.arange(20) % 2
    chunks = [(X[:10], y[:10]), (np.c_[X[10:], X[10:, :1]], y[10:])]
    with pytest.raises(ValueError, match=r"chunk 1 \(rows from 10\) has 3 features; the "
                                         r"chunks before had 2"):
        fit_stream(make(), chunks)
