"""Sparse ridge regression (issue 31): a hashed click table, fastml against scikit-learn on the
same CSR, with the peak memory of each fit.

Data: fastml.datasets.make_clicks(ROWS, random_state=0) hashed by fastml.FeatureHasher into
2^18 columns (6 stored values a row: 200,000 x 262,144 with 1.2 million stored values, 15 MB
of CSR), target the clicks (0/1). Ridge(alpha=1) with an intercept: fastml chooses LSQR for X
this wide (solver_), to LSQR's tolerance 1e-12; scikit-learn's Ridge with its default solver
(tol=1e-4) and with solver="lsqr" and "sparse_cg" at tol=1e-10, which reach the same
coefficients as fastml's to about 1e-8.

Each fit runs in a fresh child process, alternating fastml / scikit-learn (ROUNDS each), one
thread (OMP_NUM_THREADS=1, threadpoolctl limits in the child); printed per fit: the median
time and its spread, the peak RSS increase during fit (Linux /proc: VmHWM after the peak is
reset to the current RSS just before fit) as a multiple of the CSR's bytes, and the largest
coefficient difference from fastml's.
Run: OMP_NUM_THREADS=1 python bench/bench_sparse_regression.py  (FASTML_BENCH_ROWS=... for a
smaller table).
"""
import json
import os
import statistics
import subprocess
import sys

ROWS = int(os.environ.get("FASTML_BENCH_ROWS", 200_000))
ROUNDS = 3
HERE = os.path.dirname(os.path.abspath(__file__))

FITS = {
    "fastml Ridge": "fastml.Ridge(alpha=1.0)",
    "scikit-learn Ridge (default solver, tol=1e-4)": "sklearn.linear_model.Ridge(alpha=1.0)",
    "scikit-learn Ridge(solver='lsqr', tol=1e-10)":
        "sklearn.linear_model.Ridge(alpha=1.0, solver='lsqr', tol=1e-10)",
    "scikit-learn Ridge(solver='sparse_cg', tol=1e-10)":
        "sklearn.linear_model.Ridge(alpha=1.0, solver='sparse_cg', tol=1e-10)",
}

CHILD = r"""
import gc, json, sys, time
import numpy as np
import fastml, sklearn.linear_model
from threadpoolctl import threadpool_limits
from fastml.datasets import make_clicks
log = make_clicks(int(sys.argv[2]), random_state=0, as_frame=True)
X = fastml.FeatureHasher(n_features=2**18).fit_transform(log.data)
y = log.target.to_numpy().astype(float)
del log
gc.collect()

def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key))

model = eval(sys.argv[1])
before = status("VmRSS")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
with threadpool_limits(1):
    start = time.perf_counter()
    model.fit(X, y)
    seconds = time.perf_counter() - start
print(json.dumps(dict(seconds=seconds, extra=status("VmHWM") - before, nnz=int(X.nnz),
                      csr=int(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes),
                      solver=getattr(model, "solver_", ""), coef=model.coef_.tolist())))
"""


def run(expression):
    out = subprocess.run([sys.executable, "-c", CHILD, expression, str(ROWS)],
                         capture_output=True, text=True, check=True, cwd=HERE).stdout
    return json.loads(out)


def main():
    import numpy as np
    results = {name: [] for name in FITS}
    for _ in range(ROUNDS):
        for name, expression in FITS.items():      # alternating, one child per fit
            results[name].append(run(expression))
    ours = np.array(results["fastml Ridge"][0]["coef"])
    first = results["fastml Ridge"][0]
    print(f"{ROWS:,} x 262,144 hashed clicks, {first['nnz']:,} stored values, CSR "
          f"{first['csr'] / 1e6:.1f} MB; load {os.getloadavg()[0]:.2f}; one thread\n")
    print("| fit | median time (s) [min, max] | time / fastml | peak RSS increase (x CSR) | "
          "max coef difference from fastml |")
    print("|---|---|---|---|---|")
    base = statistics.median(r["seconds"] for r in results["fastml Ridge"])
    for name, runs in results.items():
        times = [r["seconds"] for r in runs]
        median = statistics.median(times)
        memory = max(r["extra"] for r in runs) / runs[0]["csr"]
        diff = float(np.max(np.abs(np.array(runs[0]["coef"]) - ours)))
        label = name + (f" (solver_={runs[0]['solver']})" if runs[0]["solver"] else "")
        print(f"| {label} | {median:.2f} [{min(times):.2f}, {max(times):.2f}] | "
              f"{median / base:.2f} | {memory:.2f} | {diff:.1e} |")


if __name__ == "__main__":
    main()
