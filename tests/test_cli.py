"""The `fastml` command, run as `python -m fastml` in a subprocess (so it works from the
source tree and from an installed package) on the bundled data and on generated CSV and
Parquet files: outputs parse and are in range, numbers agree with the library, user errors
exit 2 with one line on stderr and no traceback."""
import csv
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import fastml
from fastml import cli
from fastml._tabular_io import read_table
from fastml.io import load

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(fastml.__file__)))
HAS_TREE = hasattr(fastml, "DecisionTreeClassifier")


def run(*args, cwd):
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-m", "fastml", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def metrics(out, label):
    """{'accuracy': 0.8, ...} from a line 'label: accuracy=0.8000  log_loss=0.4'."""
    line = next(s for s in out.splitlines() if s.startswith(label + ":"))
    return {k: float(v) for k, v in re.findall(r"(\w+)=(-?[\d.]+(?:e-?\d+)?)", line)}


def confusion(out):
    lines = out.splitlines()
    start = next(i for i, s in enumerate(lines) if s.startswith("confusion matrix"))
    rows = []
    for s in lines[start + 2:]:
        cells = s.split()
        if not cells or not all(c.isdigit() for c in cells[1:]) or len(cells) < 2:
            break
        rows.append([int(c) for c in cells[1:]])
    return np.array(rows)


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A generated mixed table (numbers, text categories, empty cells) as CSV and Parquet."""
    path = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(0)
    n = 300
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    color = rng.choice(["red", "green", "blue"], size=n)
    label = np.where(x1 + (color == "red") * 1.5 > 0.5, "yes", "no")
    value = 3 * x1 - 2 * x2 + (color == "blue") * 4 + 0.1 * rng.normal(size=n)
    rows = [["x1", "x2", "color", "label", "value"]]
    for i in range(n):
        cells = [f"{x1[i]:.6f}", f"{x2[i]:.6f}", color[i], label[i], f"{value[i]:.6f}"]
        if i % 50 == 7:
            cells[1] = ""  # a missing number
        if i % 60 == 11:
            cells[2] = ""  # a missing category
        rows.append(cells)
    with open(path / "mixed.csv", "w", newline="") as f:
        csv.writer(f).writerows(rows)
    import pyarrow as pa
    import pyarrow.parquet as pq
    columns = read_table(path / "mixed.csv")
    pq.write_table(pa.table({k: list(v) if v.dtype == object else v
                             for k, v in columns.items()}), path / "mixed.parquet")
    with open(path / "x1x2y.csv", "w", newline="") as f:  # lecture 001's 6-row table
        csv.writer(f).writerows([["X1", "X2", "Y"], ["T", "T", "T"], ["T", "F", "T"],
                                 ["T", "T", "T"], ["T", "F", "T"], ["F", "T", "T"],
                                 ["F", "F", "F"]])
    return path


# ---------------------------------------------------------------- fit / predict / evaluate

@pytest.fixture(scope="module")
def logreg_run(work):
    return run("fit", "auto-mpg", "--target", "origin", "--model", "logreg", "--drop", "name",
               "--param", "max_iter=300", "--out", "cars.fastml", "--plot", "cars.png",
               cwd=work)


def test_fit_on_bundled_data_reports_metrics_and_saves(logreg_run, work):
    code, out, err = logreg_run
    assert code == 0, err
    for part in ("train", "test"):
        m = metrics(out, part)
        assert 0.6 < m["accuracy"] <= 1 and 0 <= m["log_loss"] < 1.5
    cm = confusion(out)
    assert cm.shape == (3, 3)
    assert cm.sum() == int(re.search(r"(\d+) test", out).group(1))
    assert np.trace(cm) / cm.sum() == pytest.approx(metrics(out, "test")["accuracy"], abs=1e-4)
    assert "dropped 14 rows with missing values" in err  # logreg takes no NaN
    assert re.search(r"fit time: [\d.]+ s", out)
    assert (work / "cars.fastml").stat().st_size > 0 and (work / "cars.png").stat().st_size > 0


def test_predict_writes_one_prediction_per_row(logreg_run, work):
    code, out, err = run("predict", "cars.fastml", "auto-mpg", cwd=work)
    assert code == 0, err
    rows = list(csv.reader(out.splitlines()))
    assert rows[0] == ["prediction"] and len(rows) == 1 + 406
    lines = [r[0] for r in rows]
    assert set(lines[1:]) == {"america", "asia", "europe", ""}
    assert lines[1:].count("") == 14  # rows with a missing cell get no prediction
    model = load(work / "cars.fastml")
    columns = read_table(os.path.join(ROOT, "fastml", "datasets", "data", "auto_mpg.csv"))
    keep = ~np.isnan(columns["horsepower"]) & ~np.isnan(columns["mpg"])
    expected = model.predict({k: v[keep] for k, v in columns.items()})
    assert [s for s in lines[1:] if s] == list(expected)


def test_predict_proba_to_a_file(logreg_run, work):
    code, out, err = run("predict", "cars.fastml", "auto-mpg", "--proba", "--out", "p.csv",
                         cwd=work)
    assert code == 0, err
    assert "wrote 406 probability rows to p.csv" in out
    with open(work / "p.csv") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["P(america)", "P(asia)", "P(europe)"]
    probs = np.array([[float(c) for c in r] for r in rows[1:] if r[0]])
    assert probs.shape == (392, 3)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-12)


def test_evaluate_agrees_with_the_library(logreg_run, work):
    code, out, err = run("evaluate", "cars.fastml", "auto-mpg", "--target", "origin", cwd=work)
    assert code == 0, err
    model = load(work / "cars.fastml")
    columns = read_table(os.path.join(ROOT, "fastml", "datasets", "data", "auto_mpg.csv"))
    keep = ~np.isnan(columns["horsepower"]) & ~np.isnan(columns["mpg"])
    rows = {k: v[keep] for k, v in columns.items()}
    accuracy = float(np.mean(model.predict(rows) == rows["origin"]))
    assert metrics(out, "evaluate")["accuracy"] == pytest.approx(accuracy, abs=1e-4)
    assert confusion(out).sum() == 392


@pytest.mark.skipif(not HAS_TREE, reason="decision trees not in this build")
def test_tree_on_generated_csv_and_parquet_with_categories_and_missing_cells(work):
    shown = []
    for fmt in ("csv", "parquet"):
        code, out, err = run("fit", f"mixed.{fmt}", "--target", "label", "--model", "tree",
                             "--drop", "value", "--param", "max_depth=4", "--out",
                             f"t_{fmt}.fastml", cwd=work)
        assert code == 0, err
        assert "300 rows x 3 features (1 text)" in out
        assert metrics(out, "test")["accuracy"] > 0.8
        shown.append([s for s in out.splitlines()
                      if not s.startswith(("data:", "fit time", "saved"))])
    assert shown[0] == shown[1]  # both formats give the same typed columns, the same model
    code, out, err = run("predict", "t_parquet.fastml", "mixed.csv", cwd=work)
    assert code == 0, err
    assert len(out.splitlines()) == 301 and "" not in out.splitlines()  # NaN handled natively


REGRESSORS = [n for n, c in fastml.all_estimators() if c._estimator_type == "regressor"]


@pytest.mark.skipif(not REGRESSORS, reason="no regressor in this build")
def test_regressor_on_parquet_reports_rmse_and_r2(work):
    short = {v: k for k, v in cli.MODELS.items()}
    model = short.get(REGRESSORS[0], REGRESSORS[0])
    code, out, err = run("fit", "mixed.parquet", "--target", "value", "--model", model,
                         "--drop", "label", cwd=work)
    assert code == 0, err
    for part in ("train", "test"):
        m = metrics(out, part)
        assert m["rmse"] >= 0 and 0.5 < m["r2"] <= 1.0
    assert "confusion" not in out


# ---------------------------------------------------------------- info-gain, tree, demo

def test_info_gain_reproduces_lecture_001(work):
    code, out, err = run("info-gain", "x1x2y.csv", "--target", "Y", cwd=work)
    assert code == 0, err
    assert "Information gains using the training set (6 records)" in out
    gains = dict(re.findall(r"^(X\d)\s+\S+\s+[\d ]+?\s{2,}([\d.]+)$", out, re.M))
    assert float(gains["X1"]) == pytest.approx(0.32, abs=0.005)  # 001: IG(X1) = 0.32
    assert float(gains["X1"]) > float(gains["X2"])


@pytest.mark.skipif(not HAS_TREE, reason="decision trees not in this build")
def test_tree_prints_the_table_and_the_tree(work):
    code, out, err = run("tree", "auto-mpg", "--target", "origin", "--drop", "name",
                         "--max-depth", "2", "--plot", "tree.png", cwd=work)
    assert code == 0, err
    assert "Information gains using the training set (406 records)" in out
    assert re.search(r"decision tree \(depth 2, leaves \d", out)
    assert "predict" in out and (work / "tree.png").stat().st_size > 0
    accuracy = float(re.search(r"training accuracy ([\d.]+)", out).group(1))
    assert 0.5 < accuracy <= 1


def test_demo_runs(work):
    code, out, err = run("demo", cwd=work)
    assert code == 0, err
    assert out.startswith("fastml demo") and re.search(r"done in [\d.]+ s", out)


# ---------------------------------------------------------------- user errors: exit 2

@pytest.mark.parametrize("args, message", [
    (["fit", "nope.csv", "--target", "y", "--model", "logreg"], "no such data file: nope.csv"),
    (["fit", "auto-mpg", "--target", "colour", "--model", "logreg"],
     "the data has no column 'colour'"),
    (["fit", "auto-mpg", "--target", "origin", "--model", "magic"],
     "unknown model 'magic'; available: logreg"),
    (["fit", "auto-mpg", "--target", "origin", "--model", "logreg", "--param", "depth=3"],
     "invalid parameter 'depth' for LogisticRegression"),
    (["fit", "auto-mpg", "--target", "origin", "--model", "logreg", "--param", "solver=fast"],
     "solver must be one of"),
    (["predict", "missing.fastml", "auto-mpg"], "no such model file"),
    (["predict", "mixed.csv", "auto-mpg"], "not a fastml model file"),
    (["info-gain", "auto-mpg", "--target", "nope"], "the data has no column 'nope'"),
    # a transformer is no model: it was offered in the list and fit ended in a traceback
    (["fit", "auto-mpg", "--target", "mpg", "--model", "PolynomialFeatures"],
     "'PolynomialFeatures' is a transformer (it has no predict), not a model"),
])
def test_user_errors_exit_2_with_one_line(work, args, message):
    code, out, err = run(*args, cwd=work)
    assert code == 2
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("fastml: error: ")
    assert message in err


@pytest.mark.skipif(not REGRESSORS, reason="no regressor in this build")
def test_text_target_for_a_regressor_exits_2(work):
    code, out, err = run("fit", "auto-mpg", "--target", "origin", "--model", REGRESSORS[0],
                         cwd=work)
    assert code == 2 and "Traceback" not in err
    assert "holds text (e.g. 'america')" in err and "is a regressor and needs numbers" in err


def test_damaged_model_file_exits_2(logreg_run, work):
    data = bytearray((work / "cars.fastml").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (work / "bad.fastml").write_bytes(bytes(data))
    code, out, err = run("evaluate", "bad.fastml", "auto-mpg", "--target", "origin", cwd=work)
    assert code == 2 and "checksum mismatch" in err and "Traceback" not in err


def test_help_shows_an_example(work):
    code, out, err = run("fit", "--help", cwd=work)
    assert code == 0 and "example:" in out and "fastml fit auto-mpg" in out
    for command in ("demo", "predict", "evaluate", "info-gain", "tree"):
        with pytest.raises(SystemExit) as exit_info:
            cli.main([command, "--help"])
        assert exit_info.value.code == 0
    assert "fastml fit" in cli.build_parser().format_help()


def test_bad_option_value_exits_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["fit", "auto-mpg", "--target", "origin", "--model", "logreg",
                  "--test-size", "1.5"])
    assert exit_info.value.code == 2
    assert "--test-size: expected a number in [0, 1)" in capsys.readouterr().err


# ---------------------------------------------------------------- in-process pieces

def test_every_estimator_is_reachable_by_class_name_and_short_names_resolve():
    for name, cls in fastml.all_estimators():
        if hasattr(cls, "predict"):
            assert cli.resolve_model(name) is cls
        else:  # a transformer: fit / predict / evaluate would end in a traceback
            with pytest.raises(cli.CLIError, match="is a transformer"):
                cli.resolve_model(name)
            assert name not in cli.available_models()
    for short, class_name in cli.MODELS.items():
        if hasattr(fastml, class_name):
            assert cli.resolve_model(short) is getattr(fastml, class_name)
            assert short in cli.available_models()


def test_unknown_model_lists_what_exists():
    with pytest.raises(cli.CLIError) as info:
        cli.resolve_model("gradient-boosting")
    listed = str(info.value).split("available: ")[1].split(", ")
    assert "logreg" in listed
    assert len(listed) >= len([cls for _, cls in fastml.all_estimators()
                               if hasattr(cls, "predict")])


def test_parse_params():
    assert cli.parse_params(["alpha=0.5", "max_depth=3", "solver=sgd", "tol=None",
                             "shuffle=false", "sizes=[1, 2]"]) == {
        "alpha": 0.5, "max_depth": 3, "solver": "sgd", "tol": None, "shuffle": False,
        "sizes": [1, 2]}
    with pytest.raises(cli.CLIError, match="NAME=VALUE"):
        cli.parse_params(["alpha"])


def test_csv_reader_types_columns_the_same_with_and_without_pyarrow(work, monkeypatch):
    with_arrow = read_table(work / "mixed.csv")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    plain = read_table(work / "mixed.csv")
    assert list(plain) == list(with_arrow) == ["x1", "x2", "color", "label", "value"]
    for name in plain:
        a, b = plain[name], with_arrow[name]
        assert a.dtype == b.dtype, name
        if a.dtype == object:
            assert list(a) == list(b), name
        else:
            np.testing.assert_array_equal(a, b)
    assert plain["x2"].dtype == np.float64 and np.isnan(plain["x2"][7])
    assert plain["color"][11] is None and plain["color"][0] in ("red", "green", "blue")
    with pytest.raises(ImportError, match="pyarrow"):
        read_table(work / "mixed.parquet")


@pytest.mark.skipif(not HAS_TREE, reason="decision trees not in this build")
def test_native_categorical_models_get_the_same_input_without_pandas(work, monkeypatch):
    from fastml._tabular_io import TabularModel, take_rows
    columns = read_table(work / "mixed.csv")
    features = {k: v for k, v in columns.items() if k not in ("label", "value")}
    with_pandas = TabularModel(fastml.DecisionTreeClassifier(max_depth=4)).fit(
        features, columns["label"])
    monkeypatch.setitem(sys.modules, "pandas", None)
    plain = TabularModel(fastml.DecisionTreeClassifier(max_depth=4)).fit(
        features, columns["label"])
    assert isinstance(plain.transform(features), np.ndarray)
    rows = take_rows(features, np.arange(0, 300, 7))
    np.testing.assert_array_equal(plain.predict_proba(rows), with_pandas.predict_proba(rows))


def test_one_hot_encoding_for_numeric_models():
    from fastml._tabular_io import TabularModel
    columns = {"n": np.array([0.5, 1.5, 2.5]),
               "c": np.array(["x", "y", None], dtype=object)}
    model = TabularModel(fastml.LogisticRegression())
    model.fit(columns, np.array([0, 1, 1]))
    assert model.input_names() == ["n", "c=x", "c=y"]
    new = {"n": np.array([1.0, 2.0]), "c": np.array(["y", "unseen"], dtype=object)}
    np.testing.assert_array_equal(model.transform(new), [[1.0, 0.0, 1.0], [2.0, 0.0, 0.0]])
    with pytest.raises(ValueError, match="no column 'c'"):
        model.transform({"n": new["n"]})


@pytest.mark.parametrize("model", ["logreg", "nb"] + (["tree"] if HAS_TREE else []))
def test_a_text_column_of_digits_stays_text_in_a_new_file(tmp_path, model):
    """A column of codes ("1", "2", "3", "A") is text at fit; a new file whose cells are all
    digits must still be read as text. Each file was typed on its own: the codes arrived as
    numbers, matched none of the model's levels, and evaluate scored 0.38-0.53 instead of 1.0
    with exit code 0 (an outside audit)."""
    rng = np.random.default_rng(0)
    g = rng.choice(["1", "2", "3", "A"], 400)
    x = rng.normal(size=400)
    y = np.where(np.isin(g, ["1", "3"]), "pos", "neg")
    lines = ["g,x,y"] + [f"{a},{b:.4f},{c}" for a, b, c in zip(g, x, y)]
    (tmp_path / "tr.csv").write_text("\n".join(lines) + "\n")
    keep = g != "A"
    test = ["g,x,y"] + [f"{a},{b:.4f},{c}" for a, b, c in zip(g[keep], x[keep], y[keep])]
    (tmp_path / "te.csv").write_text("\n".join(test) + "\n")
    code, out, err = run("fit", "tr.csv", "--target", "y", "--model", model, "--quiet",
                         "--out", "m.fastml", cwd=tmp_path)
    assert code == 0, err
    code, out, err = run("evaluate", "m.fastml", "te.csv", "--target", "y", cwd=tmp_path)
    assert code == 0, err
    assert metrics(out, "evaluate")["accuracy"] == 1.0
    for extra in ([], ["--chunk-rows", "50"]):
        code, out, err = run("predict", "m.fastml", "te.csv", *extra, cwd=tmp_path)
        assert code == 0, err
        assert out.split()[1:] == y[keep].tolist()


def test_read_table_text_columns_keep_their_cells(tmp_path):
    (tmp_path / "d.csv").write_text("a,b\n01,1\n2,\n,3\n")
    cols = read_table(tmp_path / "d.csv", text_columns=["a"])
    assert cols["a"].tolist() == ["01", "2", None]
    np.testing.assert_array_equal(cols["b"], [1.0, np.nan, 3.0])
