"""`fastml fit DATA --hash BITS` (003's click data): the feature columns go through
FeatureHasher ("column=value" tokens for text, (column, value) pairs for numbers, missing cells
left out), the saved model hashes new rows the same way for `predict` / `evaluate`, in memory
and with --chunk-rows. Predictions equal an in-Python FeatureHasher + LogisticRegression."""
import csv

import numpy as np
import pytest

pytest.importorskip("pyarrow")

import fastml  # noqa: E402
from fastml import cli  # noqa: E402
from fastml._tabular_io import HashedModel, read_table  # noqa: E402
from fastml.datasets import make_clicks  # noqa: E402
from fastml.feature_extraction import FeatureHasher  # noqa: E402
from fastml.io import load  # noqa: E402

N = 3000


@pytest.fixture(scope="module")
def clicks(tmp_path_factory):
    """A click log as Parquet: six text fields, a numeric column with missing cells, a text
    cell missing, the 0/1 target `clicked`."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    path = tmp_path_factory.mktemp("hash")
    log = make_clicks(N, random_state=0)
    rng = np.random.default_rng(1)
    columns = {name: log.data[:, j].tolist() for j, name in enumerate(log.feature_names)}
    columns["site"][5] = None
    position = rng.integers(1, 6, size=N).astype(float)
    position[::97] = np.nan
    columns["position"] = [None if np.isnan(v) else float(v) for v in position]
    columns["clicked"] = log.target.astype(np.int64).tolist()
    pq.write_table(pa.table(columns), path / "clicks.parquet")
    return path, path / "clicks.parquet"


def records(path):
    """The rows as FeatureHasher's dict input, the documented way: text cells as strings,
    numbers as numbers, missing cells left out."""
    cols = read_table(path)
    y = cols.pop("clicked").astype(np.int64)
    names = list(cols)
    rows = []
    for i in range(len(y)):
        row = {}
        for name in names:
            v = cols[name][i]
            if v is None or (isinstance(v, float) and np.isnan(v)):
                continue
            row[name] = v
        rows.append(row)
    return rows, y


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def python_model(path, **params):
    rows, y = records(path)
    X = FeatureHasher(2**20, input_type="dict").transform(rows)
    model = fastml.LogisticRegression(solver="sgd", random_state=0, **params).fit(X, y)
    return model, X, y


def test_fit_hash_and_predict_equal_featurehasher_plus_logistic_sgd(clicks, capsys):
    path, data = clicks
    out_model = path / "clicks.fastml"
    assert cli.main(["fit", str(data), "--target", "clicked", "--model", "logreg", "--hash",
                     "20", "--param", "solver=sgd", "--param", "max_iter=10", "--param",
                     "tol=null", "--test-size", "0", "--quiet", "--out", str(out_model)]) == 0
    out = capsys.readouterr().out
    assert "hashing: 7 columns -> 2^20 features" in out
    assert "split: 3000 train, 0 test" in out       # no row dropped for its missing cells
    model = load(out_model)
    assert isinstance(model, HashedModel) and model.n_features == 2**20
    assert model.feature_names_ == ["ad", "advertiser", "site", "user", "hour", "device",
                                    "position"]
    reference, X, y = python_model(data, max_iter=10, tol=None)
    np.testing.assert_array_equal(model.estimator.coef_, reference.coef_)

    proba_csv = path / "proba.csv"
    assert cli.main(["predict", str(out_model), str(data), "--proba", "--quiet", "--out",
                     str(proba_csv)]) == 0
    rows = read_csv(proba_csv)
    assert rows[0] == ["P(0)", "P(1)"] and len(rows) == N + 1
    got = np.array([[float(v) for v in r] for r in rows[1:]])
    np.testing.assert_allclose(got, reference.predict_proba(X), rtol=1e-15, atol=0)

    # predict in chunks hashes each chunk alike
    chunked_csv = path / "proba_chunked.csv"
    assert cli.main(["predict", str(out_model), str(data), "--proba", "--chunk-rows", "700",
                     "--out", str(chunked_csv)]) == 0
    assert read_csv(chunked_csv) == rows

    capsys.readouterr()
    assert cli.main(["evaluate", str(out_model), str(data), "--target", "clicked"]) == 0
    out = capsys.readouterr().out
    accuracy = float(out.split("accuracy=")[1].split()[0])
    assert accuracy == pytest.approx(float(np.mean(reference.predict(X) == y)), abs=1e-4)


def test_streaming_fit_with_hash_equals_one_pass_in_memory(clicks, capsys):
    # fit_stream's contract for the SGD family: with shuffle=False the chunks (any size) give
    # the model of fit on all rows with max_iter=1, tol=None.
    path, data = clicks
    out_model = path / "streamed.fastml"
    assert cli.main(["fit", str(data), "--target", "clicked", "--model", "logreg", "--hash",
                     "20", "--param", "solver=sgd", "--param", "shuffle=false",
                     "--chunk-rows", "700", "--quiet", "--out", str(out_model)]) == 0
    assert "hashing: 7 columns -> 2^20 features" in capsys.readouterr().out
    model = load(out_model)
    assert isinstance(model, HashedModel) and model.target == "clicked"
    reference, X, _ = python_model(data, shuffle=False, max_iter=1, tol=None)
    np.testing.assert_allclose(model.estimator.coef_, reference.coef_, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(model.predict_proba(read_table(data)),
                               reference.predict_proba(X), rtol=1e-12)


def test_hashed_model_round_trips_and_hashes_without_pandas(clicks, tmp_path, monkeypatch):
    _, data = clicks
    cols = read_table(data)
    y = cols.pop("clicked")
    model = HashedModel(fastml.LogisticRegression(solver="sgd", max_iter=3, tol=None),
                        n_features=2**12, target="clicked").fit(cols, y)
    fastml.save(model, tmp_path / "m.fastml")
    again = fastml.load(tmp_path / "m.fastml")
    assert again.n_features == 2**12 and again.feature_names_ == model.feature_names_
    np.testing.assert_array_equal(again.predict_proba(cols), model.predict_proba(cols))
    with_pandas = model.transform(cols)
    import sys
    monkeypatch.setitem(sys.modules, "pandas", None)     # the row-by-row path: same matrix
    without = model.transform(cols)
    assert (with_pandas != without).nnz == 0 and with_pandas.nnz > 0


@pytest.mark.parametrize("bits, message", [("0", "1 to 30 bits"), ("31", "1 to 30 bits"),
                                           ("x", "whole number of bits")])
def test_bad_hash_bits_exit_2(bits, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["fit", "auto-mpg", "--target", "origin", "--model", "logreg", "--hash", bits])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_predict_names_a_missing_column(clicks, tmp_path, capsys):
    path, data = clicks
    out_model = tmp_path / "small.fastml"
    assert cli.main(["fit", str(data), "--target", "clicked", "--model", "logreg", "--hash",
                     "10", "--param", "solver=sgd", "--param", "max_iter=2", "--param",
                     "tol=null", "--quiet", "--out", str(out_model)]) == 0
    import pyarrow.parquet as pq
    table = pq.read_table(data).drop_columns(["device"])
    pq.write_table(table, tmp_path / "no_device.parquet")
    capsys.readouterr()
    assert cli.main(["predict", str(out_model), str(tmp_path / "no_device.parquet")]) == 2
    assert "no column 'device'" in capsys.readouterr().err


def test_models_that_need_dense_input_are_refused_by_name(clicks, capsys):
    _, data = clicks
    assert cli.main(["fit", str(data), "--target", "clicked", "--model", "tree", "--hash",
                     "10", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--hash gives sparse features, which DecisionTreeClassifier does not take" in err
    assert "logreg" in err and "tree" not in err.split("use one of:")[1]
