"""fit_stream over several passes (issue 29): the chunk cache and the SGD family's epochs,
against their floors and against Vowpal Wabbit's cache; and peak memory against file size.

Every figure is one fit in a fresh process (its wall time, and its peak resident memory above
its resident set just before the fit: /proc's VmHWM), the contenders alternating round by
round (the machine is shared); the tables give the median of ROUNDS and the spread. Threads:
OMP_NUM_THREADS=1 (fastml's kernels), pyarrow decodes with its own pool, VW on its thread.

- lbfgs: LogisticRegression(max_iter=30, tol=None) streamed from a CSV file (the cache: the
  file is parsed once, the next passes map its chunks back) and from its Parquet copy
  (snappy), next to one parse of the CSV (pyarrow.csv.read_csv). Goal: CSV <= one parse +
  1.5x Parquet. FASTML_BENCH_LBFGS_ROWS x 50 float64 (default 400,000: a 393 MB CSV).
- sgd: LogisticRegression(solver="sgd"), 5 epochs, streamed from W1's Parquet file (800,000 x
  100 float64, logistic labels, snappy, one row group: pandas' to_parquet), against the
  in-memory fit (max_iter=5, tol=None on X already loaded), one read of the file (pyarrow,
  all columns) and Vowpal Wabbit (vowpalwabbit, --loss_function logistic, 5 passes from its
  cache file, written by an earlier run that is not timed). Goals: <= 2x the in-memory fit +
  one read; faster than VW from its cache. FASTML_BENCH_W1_ROWS changes the rows.
- rss: GaussianNB (one pass) and LogisticRegression(solver="sgd") 5 epochs at the default
  chunking, on CSV and Parquet files of 1x, 2x and 4x FASTML_BENCH_RSS_ROWS rows x 50.

Run: python bench/bench_stream_passes.py [lbfgs] [sgd] [rss]   (all three without arguments;
the data is written once under $FASTML_BENCH_DIR, default /tmp/fastml-bench-stream).
"""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np

ROUNDS = int(os.environ.get("FASTML_BENCH_ROUNDS", 3))
FOLDER = os.environ.get("FASTML_BENCH_DIR", "/tmp/fastml-bench-stream")

CHILD = textwrap.dedent("""
    import json, sys, time
    def resident():
        return int(open("/proc/self/statm").read().split()[1]) * 4096
    def peak():
        return [int(l.split()[1]) * 1024 for l in open("/proc/self/status")
                if l.startswith("VmHWM")][0]
    import numpy as np, pandas, pyarrow, pyarrow.csv, pyarrow.parquet
    import fastml
    kind, path, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    if kind == "memory":
        X, y = np.load(path + ".X.npy"), np.load(path + ".y.npy")
    before, start = resident(), time.perf_counter()
    if kind == "parse":
        pyarrow.csv.read_csv(path)
    elif kind == "read":
        with pyarrow.parquet.ParquetFile(path, pre_buffer=False) as f:
            for _ in f.iter_batches(batch_size=65536):
                pass
    elif kind == "lbfgs":
        fastml.fit_stream(fastml.LogisticRegression(max_iter=30, tol=None), path, "y")
    elif kind == "memory":
        fastml.LogisticRegression(solver="sgd", random_state=0, max_iter=5, tol=None).fit(X, y)
    elif kind == "sgd":
        fastml.fit_stream(fastml.LogisticRegression(solver="sgd", random_state=0), path, "y",
                          epochs=int(extra[0]))
    elif kind == "nb":
        fastml.fit_stream(fastml.GaussianNB(), path, "y")
    elif kind == "vw":
        import vowpalwabbit
        vowpalwabbit.Workspace(f"--cache_file {path} --passes 5 --loss_function logistic "
                               f"--holdout_off --quiet").finish()
    print(json.dumps({"seconds": time.perf_counter() - start,
                      "peak_mb": (peak() - before) / 2**20}))
""")


def run(kind, path, *extra):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", CHILD, kind, path, *map(str, extra)],
                          capture_output=True, text=True, env=env)
    if done.returncode:
        raise RuntimeError(f"{kind} {path}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def rounds(cases):
    """{name: [result per round]} for cases {name: (kind, path, *extra)}, alternating."""
    out = {name: [] for name in cases}
    for _ in range(ROUNDS):
        for name, case in cases.items():
            out[name].append(run(*case))
    return out


def median(results, key="seconds"):
    values = sorted(r[key] for r in results)
    return values[len(values) // 2], values[0], values[-1]


def table(results, floor_note=""):
    print(f"\nload {os.getloadavg()[0]:.1f}; {os.cpu_count()} cores; {ROUNDS} rounds"
          f"{floor_note}")
    print("| run | seconds, median (min-max) | peak RSS above start, MB (median) |")
    print("|---|---|---|")
    for name, values in results.items():
        t, lo, hi = median(values)
        print(f"| {name} | {t:.2f} ({lo:.2f}-{hi:.2f}) | {median(values, 'peak_mb')[0]:.0f} |")


# ------------------------------------------------------------------------------- the data
def logistic_table(rows, d, seed):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d) / np.sqrt(d) * 2
    X = rng.standard_normal((rows, d))
    y = (rng.uniform(size=rows) < 1 / (1 + np.exp(-(X @ w)))).astype(np.int64)
    return X, y


def write_files(name, rows, d, seed, csv=True, vw=False):
    """<name>.parquet (pandas' to_parquet: snappy, one row group), <name>.csv (pyarrow's
    writer), <name>.X.npy / .y.npy and, with vw, <name>.vw and its VW cache."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.csv as pc
    base = os.path.join(FOLDER, name)
    if os.path.exists(base + ".parquet"):
        return base
    os.makedirs(FOLDER, exist_ok=True)
    X, y = logistic_table(rows, d, seed)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(d)]).assign(y=y)
    frame.to_parquet(base + ".parquet")
    np.save(base + ".parquet.X.npy", X)
    np.save(base + ".parquet.y.npy", y)
    if csv:
        pc.write_csv(pa.Table.from_pandas(frame, preserve_index=False), base + ".csv")
    if vw:
        write_vw(X, y, base + ".vw")
        import vowpalwabbit
        vowpalwabbit.Workspace(f"-d {base}.vw --cache_file {base}.vwcache --passes 1 "
                               f"--loss_function logistic --quiet").finish()
    return base


def write_vw(X, y, path):
    """VW's text format ("1 |x 0:0.5 1:-1.25 ..."), built column by column by pyarrow."""
    import pyarrow as pa
    import pyarrow.compute as pc
    with open(path, "wb") as out:
        for start in range(0, len(y), 50_000):
            block = X[start:start + 50_000]
            parts = [pa.array(np.where(y[start:start + 50_000] == 1, "1 |x", "-1 |x"))]
            parts += [pc.binary_join_element_wise(pa.array(np.full(len(block), f"{j}")),
                                                  pc.cast(pa.array(block[:, j]), pa.string()),
                                                  ":") for j in range(X.shape[1])]
            lines = pc.binary_join_element_wise(*parts, " ")
            out.write(("\n".join(lines.to_pylist()) + "\n").encode())


# ------------------------------------------------------------------------------- the rows
def bench_lbfgs():
    base = write_files("lbfgs", int(os.environ.get("FASTML_BENCH_LBFGS_ROWS", 400_000)), 50, 1)
    results = rounds({"one parse of the CSV (pyarrow.csv.read_csv)": ("parse", base + ".csv"),
                      "fit_stream L-BFGS, CSV (cache)": ("lbfgs", base + ".csv"),
                      "fit_stream L-BFGS, Parquet": ("lbfgs", base + ".parquet")})
    table(results)
    parse, csv, parquet = (median(v)[0] for v in results.values())
    print(f"CSV / (parse + 1.5 Parquet) = {csv / (parse + 1.5 * parquet):.2f} (goal <= 1)")


def bench_sgd():
    base = write_files("w1", int(os.environ.get("FASTML_BENCH_W1_ROWS", 800_000)), 100, 5,
                       csv=False, vw=True)
    results = rounds({"in memory, 5 epochs": ("memory", base + ".parquet"),
                      "one read of the Parquet file": ("read", base + ".parquet"),
                      "fit_stream, 5 epochs": ("sgd", base + ".parquet", 5),
                      "Vowpal Wabbit, 5 passes from its cache": ("vw", base + ".vwcache")})
    table(results)
    memory, read, stream, vw = (median(v)[0] for v in results.values())
    print(f"stream / (2 x memory + read) = {stream / (2 * memory + read):.2f} (goal <= 1); "
          f"VW / stream = {vw / stream:.2f} (goal > 1)")


def bench_rss():
    rows = int(os.environ.get("FASTML_BENCH_RSS_ROWS", 200_000))
    cases = {}
    for times in (1, 2, 4):
        base = write_files(f"rss{times}", rows * times, 50, 7)
        mb = os.path.getsize(base + ".csv") / 1e6
        for kind in ("csv", "parquet"):
            cases[f"{kind} {times}x ({mb:.0f} MB CSV), GaussianNB"] = ("nb", f"{base}.{kind}")
            cases[f"{kind} {times}x, SGD 5 epochs"] = ("sgd", f"{base}.{kind}", 5)
    table(rounds(cases), "; default chunking (16 MB of features)")


if __name__ == "__main__":
    chosen = sys.argv[1:] or ["lbfgs", "sgd", "rss"]
    for name in chosen:
        {"lbfgs": bench_lbfgs, "sgd": bench_sgd, "rss": bench_rss}[name]()
