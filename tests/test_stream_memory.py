"""Bounded memory (issue 29): the peak resident memory of fit_stream, and of the CLI's fit and
predict with --chunk-rows, grows by a few chunks plus a fixed reader buffer, whatever the
file's size and the number of epochs, on CSV and Parquet. Streaming a CSV held most of the
file (pyarrow's streaming reader read it all ahead: an 800 MB CSV peaked near 800 MB whatever
chunk_rows). Each case runs in a fresh process, which reports its peak resident set (VmHWM;
getrusage's ru_maxrss keeps the parent's peak across fork and exec) above its resident set
just before the fit."""
import json
import os
import sys
import textwrap

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("pyarrow.csv")
pq = pytest.importorskip("pyarrow.parquet")

from _robust import run_python  # noqa: E402

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")

CHUNK_ROWS, D = 5000, 20          # a chunk: 0.8 MB of float64 features
SMALL, LARGE = 100_000, 400_000   # the CSV files: about 19 and 76 MB, 20x and 80x a chunk

SCRIPT = textwrap.dedent("""
    import json, resource, sys  # noqa: E401
    def resident():
        return int(open("/proc/self/statm").read().split()[1]) * resource.getpagesize()
    import numpy, pandas, pyarrow, pyarrow.csv, pyarrow.parquet
    import fastml, fastml.cli
    path, mode, rows = sys.argv[1], sys.argv[2], sys.argv[3]
    before = resident()
    if mode == "nb":
        fastml.fit_stream(fastml.GaussianNB(), path, "y", chunk_rows=int(rows))
    elif mode == "sgd5":
        fastml.fit_stream(fastml.LogisticRegression(solver="sgd", random_state=0), path, "y",
                          chunk_rows=int(rows), epochs=5)
    elif mode == "lbfgs":
        fastml.fit_stream(fastml.LogisticRegression(max_iter=5), path, "y",
                          chunk_rows=int(rows))
    elif mode == "cli-fit":
        fastml.cli.main(["fit", path, "--target", "y", "--model", "GaussianNB", "--chunk-rows",
                         rows, "--out", path + ".fastml", "--quiet"])
    else:
        fastml.cli.main(["predict", path + ".fastml", path, "--chunk-rows", rows, "--out",
                         path + ".predicted.csv", "--quiet"])
    peak = [int(line.split()[1]) * 1024 for line in open("/proc/self/status")
            if line.startswith("VmHWM")][0]
    print(json.dumps((peak - before) / 2**20))
""")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    import pyarrow.csv as pc
    folder = tmp_path_factory.mktemp("memory")
    rng = np.random.default_rng(0)
    out = {}
    for name, n in (("small", SMALL), ("large", LARGE)):
        path = folder / f"{name}.csv"
        with pc.CSVWriter(path, pa.schema([(f"x{j}", pa.float64()) for j in range(D)] +
                                          [("y", pa.int64())])) as writer:
            for start in range(0, n, 100_000):
                X = rng.standard_normal((100_000, D)).round(6)
                writer.write_table(pa.table({**{f"x{j}": X[:, j] for j in range(D)},
                                             "y": (X[:, 0] > 0).astype(np.int64)}))
        out[f"{name}.csv"] = str(path)
    table = pa.csv.read_csv(out["large.csv"])
    pq.write_table(table, folder / "large.parquet", row_group_size=100_000)
    out["large.parquet"] = str(folder / "large.parquet")
    return out


def growth(path, mode):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    done = run_python(["-c", SCRIPT, path, mode, str(CHUNK_ROWS)], 300, env)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_streaming_memory_does_not_grow_with_the_file(files):
    """Four times the rows, the same peak (to a few MB), for one pass and for five epochs."""
    assert os.path.getsize(files["large.csv"]) > 10 * CHUNK_ROWS * D * 8
    for mode in ("nb", "sgd5"):
        small, large = growth(files["small.csv"], mode), growth(files["large.csv"], mode)
        assert large - small < 12, (mode, small, large)


@pytest.mark.parametrize("mode", ["nb", "sgd5", "lbfgs", "cli-fit", "cli-predict"])
@pytest.mark.parametrize("name", ["large.csv", "large.parquet"])
def test_every_streamed_fit_and_prediction_is_bounded(files, name, mode):
    """A fixed reader buffer (a 4 MB CSV block and its parse; Parquet pages) and a few chunks,
    far below the 76 MB file, the multi-pass fits included (their later passes read the
    cache's chunks, each mapped only while it is used)."""
    peak = growth(files[name], mode)
    assert peak < 90, (name, mode, peak)
