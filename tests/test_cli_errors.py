"""Whatever a user feeds the `fastml` command, it answers with one line on stderr and exit
status 2, never a traceback (issue 12). Run in-process: an exception escaping `main` fails
the test."""
import hashlib
import json
import struct

import numpy as np
import pytest

import fastml
from fastml import cli
from fastml._tabular_io import _read_csv_stdlib


def one_line_error(capsys, argv, match):
    code = cli.main([str(a) for a in argv])
    err = capsys.readouterr().err
    lines = [s for s in err.splitlines() if s.startswith("fastml: error:")]
    assert code == 2, err
    assert len(lines) == 1 and "Traceback" not in err, err
    assert match in lines[0], lines[0]
    return lines[0]


def test_sgd_diverging_on_the_bundled_data(capsys):
    one_line_error(capsys, ["fit", "auto-mpg", "--target", "mpg", "--model", "linreg", "--param",
                            "solver=sgd", "--drop", "name", "--quiet"], "diverged")


def test_integer_parameter_too_large_for_c(capsys):
    # (a tree's max_depth of any size means "no limit"; a count C holds as given must fit)
    one_line_error(capsys, ["fit", "auto-mpg", "--target", "origin", "--model", "logreg",
                            "--drop", "name", "--param", "max_iter=99999999999", "--quiet"],
                   "max_iter")


@pytest.fixture
def parquet(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    def write(name, **columns):
        path = tmp_path / name
        pq.write_table(pa.table(columns), path)
        return path
    return write, pa


def test_parquet_list_column_is_named(capsys, parquet):
    write, pa = parquet
    path = write("list.parquet", tags=pa.array([[1], [2, 3], [4], [5]]), x=[1.0, 2, 3, 4],
                 y=["a", "b", "a", "b"])
    one_line_error(capsys, ["fit", path, "--target", "y", "--model", "tree"], "'tags'")


def test_parquet_int64_beyond_2_53_is_named(capsys, parquet):
    write, pa = parquet
    path = write("ids.parquet", id=pa.array([2**53 + 1, 5, 7, 9], pa.int64()), x=[1.0, 2, 3, 4],
                 y=["a", "b", "a", "b"])
    line = one_line_error(capsys, ["fit", path, "--target", "y", "--model", "tree"], "'id'")
    assert "2**53" in line


def test_duplicate_csv_column_is_refused_naming_it(capsys, tmp_path):
    path = tmp_path / "dup.csv"
    path.write_text("a,b,a,y\n1,2,3,p\n4,5,6,q\n7,8,9,p\n1,1,1,q\n")
    one_line_error(capsys, ["fit", path, "--target", "y", "--model", "tree"],
                   "two columns named 'a'")
    with pytest.raises(ValueError, match="two columns named 'a'"):
        _read_csv_stdlib(str(path))  # the reader used without pyarrow


@pytest.mark.parametrize("command", ["info-gain", "tree"])
def test_all_empty_column_is_named(capsys, tmp_path, command):
    path = tmp_path / "empty.csv"
    path.write_text("a,notes,y\n1,,p\n2,,q\n3,,p\n4,,q\n")
    one_line_error(capsys, [command, path, "--target", "y"], "column 'notes' has no values")


def test_deeply_nested_model_file(capsys, tmp_path):
    model = tmp_path / "m.fastml"
    fastml.save(fastml.GaussianNB().fit([[0.0], [1.0]], [0, 1]), model)
    data = model.read_bytes()
    header_len = struct.unpack_from("<8sHQ", data)[2]
    header = json.loads(data[18:18 + header_len])
    header["root"]["params"]["items"][0][1] = "DEEP"
    text = json.dumps(header).encode().replace(
        b'"DEEP"', ('{"$": "list", "items": [' * 50000 + "1" + "]}" * 50000).encode())
    body = struct.pack("<8sHQ", data[:8], 1, len(text)) + text + data[18 + header_len:-32]
    model.write_bytes(body + hashlib.sha256(body).digest())
    data_file = tmp_path / "x.csv"
    data_file.write_text("x0\n1.0\n")
    one_line_error(capsys, ["predict", model, data_file], "nested")


@pytest.mark.parametrize("exc, expected", [
    (KeyError("mpg"), "no such column or key: 'mpg'"),
    (MemoryError(), "out of memory"),
    (OverflowError("int too large to convert to C long"), "numerical error (OverflowError)"),
    (RecursionError("maximum recursion depth exceeded"), "nested too deeply"),
    (FloatingPointError("overflow encountered in exp"), "overflow encountered in exp"),
])
def test_every_user_error_kind_gets_a_named_one_line_message(exc, expected):
    assert isinstance(exc, cli.USER_ERRORS)
    message = cli.error_message(exc)
    assert expected in message and "\n" not in message
