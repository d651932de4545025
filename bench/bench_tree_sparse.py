"""Sparse X for the histogram forest (issue 31): fastml's RandomForestClassifier(splitter="hist")
against scikit-learn's RandomForestClassifier on the same hashed click table, a CSR matrix.

Data: datasets.make_clicks(BENCH_SPARSE_ROWS + 50,000, random_state=0) hashed by
fastml.FeatureHasher(2**18, input_type="string") (six tokens a row: 200,000 x 262,144 with
1.2M stored values, 15 MB as CSR); the first BENCH_SPARSE_ROWS rows train, the last 50,000
test. Each library fits BENCH_SPARSE_TREES fully grown trees (criterion "entropy", default
max_features "sqrt", random_state=0) with n_jobs=BENCH_SPARSE_JOBS threads, in a fresh
subprocess; BLAS is pinned to one thread. Reported: fit wall and CPU time, the process's peak
resident memory during the fit above its memory just before it (the CSR, y and the imports
already there), as a multiple of the CSR's own bytes, the forest's own size (the trees'
arrays), and the held-out AUC and log-loss.
Run: OMP_NUM_THREADS=1 python bench/bench_tree_sparse.py [fastml|sklearn ...]  (a Markdown table)
"""
import json
import os
import subprocess
import sys

ROWS = int(os.environ.get("BENCH_SPARSE_ROWS", 200_000))
TREES = int(os.environ.get("BENCH_SPARSE_TREES", 10))
JOBS = int(os.environ.get("BENCH_SPARSE_JOBS", 2))

CHILD = r"""
import json, sys, time
import numpy as np
import fastml
from fastml.datasets import make_clicks
from threadpoolctl import threadpool_limits

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024

who, rows, trees, jobs = json.loads(sys.argv[1])
log = make_clicks(rows + 50_000, random_state=0)
hasher = fastml.FeatureHasher(n_features=2**18, input_type="string")
X = hasher.transform(log.data[:rows].tolist())
Xt = hasher.transform(log.data[rows:].tolist())
y, yt = log.target[:rows], log.target[rows:]
csr = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
if who == "fastml":
    model = fastml.RandomForestClassifier(n_estimators=trees, splitter="hist", n_jobs=jobs,
                                          random_state=0)
else:
    from sklearn.ensemble import RandomForestClassifier
    model = RandomForestClassifier(n_estimators=trees, criterion="entropy", n_jobs=jobs,
                                   random_state=0)
before = status("VmRSS:")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")           # the peak (VmHWM) starts again from here
with threadpool_limits(1):
    wall, cpu = time.perf_counter(), time.process_time()
    model.fit(X, y)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
peak = status("VmHWM:") - before
if who == "fastml":
    trees_bytes = sum(sum(a.nbytes for a in (e.tree_.nodes, e.tree_.value, e.tree_.children,
                                              e.tree_.seen)) for e in model.estimators_)
else:
    trees_bytes = sum(e.tree_.__getstate__()["nodes"].nbytes +
                      e.tree_.__getstate__()["values"].nbytes for e in model.estimators_)
p = np.clip(model.predict_proba(Xt)[:, 1], 1e-15, 1 - 1e-15)
from sklearn.metrics import roc_auc_score
print(json.dumps(dict(wall=wall, cpu=cpu, csr=csr, peak=peak, trees=trees_bytes,
                      auc=roc_auc_score(yt, p),
                      log_loss=float(-np.mean(yt * np.log(p) + (1 - yt) * np.log1p(-p))))))
"""


def run(who):
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps([who, ROWS, TREES, JOBS])],
                         capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(names):
    print(f"hashed clicks {ROWS} x 2^18 CSR, {TREES} trees, n_jobs={JOBS}\n")
    print("| library | fit wall (s) | fit CPU (s) | peak RSS over fit | x CSR | forest arrays "
          "| AUC | log-loss |")
    print("|---|---|---|---|---|---|---|---|")
    for who in names:
        r = run(who)
        print(f"| {who} | {r['wall']:.1f} | {r['cpu']:.1f} | {r['peak'] / 1e6:.0f} MB | "
              f"{r['peak'] / r['csr']:.1f}x | {r['trees'] / 1e6:.0f} MB | {r['auc']:.4f} | "
              f"{r['log_loss']:.4f} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or ["fastml", "sklearn"])
