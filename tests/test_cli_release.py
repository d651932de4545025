"""The CLI's rough edges a first release cannot have: models saved silent, --plot checked before
the fit, a reader that stops early, crafted model files, --chunk-rows out of range. Every
failure is one line on stderr and exit status 2."""
import hashlib
import json
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

import fastml
from fastml import cli
from fastml._tabular_io import HashedModel, TabularModel

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(fastml.__file__)))


def one_line_error(capsys, argv, match):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    lines = [s for s in err.splitlines() if s.startswith("fastml: ")]
    assert code == 2, err
    assert len(lines) == 1 and "Traceback" not in err, err
    assert match in lines[0], lines[0]
    return out, lines[0]


def rewrite_root(path, edit):
    """Replace the root of a model file's JSON header by edit(root) and re-seal the file (a
    crafted file: its SHA-256 is right, its content is not what fastml writes)."""
    data = path.read_bytes()
    header_len = struct.unpack_from("<8sHQ", data)[2]
    header = json.loads(data[18:18 + header_len])
    header["root"] = edit(header["root"])
    text = json.dumps(header).encode()
    body = struct.pack("<8sHQ", data[:8], 1, len(text)) + text + data[18 + header_len:-32]
    path.write_bytes(body + hashlib.sha256(body).digest())


@pytest.fixture
def data_csv(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    path = tmp_path / "d.csv"
    lines = ["a,b,c,y"] + [f"{a},{b},{c},{t}" for (a, b, c), t in zip(X.tolist(), y)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("model, extra", [
    ("forest", ["--param", "n_estimators=3"]),
    ("logreg", ["--param", "solver=sgd"]),
    ("logreg", ["--param", "solver=sgd", "--chunk-rows", "100"]),
])
def test_a_model_saved_by_the_cli_is_silent_in_a_users_program(tmp_path, data_csv, model,
                                                               extra, capsys):
    # the fit showed progress (verbose=1); the file must not carry it into a user's code
    out = tmp_path / "m.fastml"
    assert cli.main(["fit", str(data_csv), "--target", "y", "--model", model, *extra,
                     "--out", str(out)]) == 0
    saved = fastml.load(out)
    inner = saved.estimator if isinstance(saved, (TabularModel, HashedModel)) else saved
    assert inner.get_params()["verbose"] == 0
    capsys.readouterr()
    saved.predict({"a": np.zeros(2), "b": np.ones(2), "c": np.ones(2)})
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize("argv", [
    ["fit", "auto-mpg", "--target", "origin", "--model", "tree", "--plot", "x.png"],
    ["tree", "auto-mpg", "--target", "origin", "--drop", "name", "--plot", "x.png"],
])
def test_plot_without_matplotlib_fails_before_the_fit(monkeypatch, capsys, argv):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out, line = one_line_error(capsys, argv, "--plot needs matplotlib: "
                                             "pip install 'fastml-classic[plot]'")
    assert "fit time" not in out and "decision tree" not in out and out == ""


def test_evaluate_plot_without_matplotlib_fails_before_reading(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    one_line_error(capsys, ["evaluate", tmp_path / "none.fastml", "auto-mpg", "--target", "y",
                            "--plot", "x.png"], "--plot needs matplotlib")


def test_predict_into_a_reader_that_stops_early_exits_quietly(tmp_path, data_csv):
    model = tmp_path / "m.fastml"
    assert cli.main(["fit", str(data_csv), "--target", "y", "--model", "tree", "--quiet",
                     "--out", str(model)]) == 0
    big = tmp_path / "big.csv"
    rows = data_csv.read_text().splitlines()
    big.write_text("\n".join([rows[0]] + rows[1:] * 200) + "\n")      # 60,000 rows
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    for extra in ([], ["--chunk-rows", "1000"]):
        proc = subprocess.Popen([sys.executable, "-m", "fastml", "predict", str(model),
                                 str(big), *extra], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env, cwd=tmp_path)
        assert proc.stdout.readline().strip() == b"prediction"
        proc.stdout.close()                       # the reader leaves (as `| head -1` does)
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=120) == 0, err
        assert err == "", err


def test_a_model_file_whose_root_is_not_an_estimator_exits_2(tmp_path, data_csv, capsys):
    model = tmp_path / "m.fastml"
    fastml.save(fastml.GaussianNB().fit([[0.0], [1.0]], [0, 1]), model)
    rewrite_root(model, lambda root: 5)
    for command in (["predict", model, data_csv], ["evaluate", model, data_csv, "--target", "y"]):
        one_line_error(capsys, command, "holds a int, not a model that predicts")


def test_a_hashed_model_without_its_columns_exits_2(tmp_path, data_csv, capsys):
    model = tmp_path / "m.fastml"
    assert cli.main(["fit", str(data_csv), "--target", "y", "--model", "logreg", "--hash", "8",
                     "--quiet", "--out", str(model)]) == 0

    def drop_names(root):
        root["state"]["items"] = [kv for kv in root["state"]["items"]
                                  if kv[0] != "feature_names_"]
        return root
    rewrite_root(model, drop_names)
    capsys.readouterr()
    one_line_error(capsys, ["predict", model, data_csv], "never fitted (it has no "
                                                         "feature_names_)")


def test_a_wrapped_model_whose_estimator_is_not_one_is_refused_at_load(tmp_path, data_csv,
                                                                       capsys):
    model = tmp_path / "m.fastml"
    assert cli.main(["fit", str(data_csv), "--target", "y", "--model", "nb", "--quiet",
                     "--out", str(model)]) == 0

    def swap_estimator(root):
        root["params"]["items"] = [[k, 7 if k == "estimator" else v]
                                   for k, v in root["params"]["items"]]
        return root
    rewrite_root(model, swap_estimator)
    with pytest.raises(fastml.ModelFileError, match="not a fastml estimator that predicts"):
        fastml.load(model)
    capsys.readouterr()
    one_line_error(capsys, ["predict", model, data_csv], "not a fastml estimator that predicts")


@pytest.mark.parametrize("command", ["fit", "predict"])
@pytest.mark.parametrize("value, message", [("-5", "expected at least 1 row per chunk, got -5"),
                                            ("0", "expected at least 1 row per chunk, got 0"),
                                            ("many", "expected a whole number of rows")])
def test_chunk_rows_must_be_a_positive_count(capsys, command, value, message):
    argv = ({"fit": ["fit", "auto-mpg", "--target", "origin", "--model", "tree"],
             "predict": ["predict", "m.fastml", "auto-mpg"]}[command]
            + ["--chunk-rows", value])
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and message in err and "Traceback" not in err


def test_an_unexpected_failure_is_one_line_and_status_2(monkeypatch, capsys):
    def broken(args):
        raise AttributeError("a bug")
    monkeypatch.setattr(cli, "run_demo", broken)
    monkeypatch.delenv("FASTML_TRACEBACK", raising=False)
    assert cli.build_parser().parse_args(["demo"]).func is broken
    code = cli.main(["demo"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("fastml: internal error: AttributeError: a bug")
    assert len(err.strip().splitlines()) == 1
