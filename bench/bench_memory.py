"""Peak memory of each family's default fit, as a multiple of X's size (issue 13, "Memory").

Each family is fitted in a fresh subprocess (so one fit's pages or caches never count for the
next), on X = 200,000 x 50 float64, C-contiguous (80 MB; BENCH_MEMORY_ROWS / _COLS change it):
- RSS: the process's peak resident set (getrusage's ru_maxrss) minus its resident set just
  before fit, with X and y already built and a fit on 2,000 rows done first (so module
  imports do not count); one fit, nothing else traced;
- tracemalloc: the peak of Python and numpy allocations (numpy reports its data buffers to
  tracemalloc) during a second fit in the same process, above what was allocated before it.
  The compiled kernels' own malloc'd buffers (the tree builders' C arrays) are not traced;
  RSS sees them.
Labels: 3 classes (classifiers), a noisy linear target (regressors); CategoricalNB gets integer
codes 0..9 in float64; PolynomialRegression, KernelPerceptron and the forest get smaller
problems (their own sizes are in the table: degree-2 features of 50 columns are 1,326
columns, the kernel perceptron is quadratic in its mistakes, a forest is its trees) -- the
ratio is always to their own X.
Run: OMP_NUM_THREADS=1 python bench/bench_memory.py [name ...]  (prints a Markdown table)
"""
import json
import os
import subprocess
import sys

ROWS = int(os.environ.get("BENCH_MEMORY_ROWS", 200_000))
COLS = int(os.environ.get("BENCH_MEMORY_COLS", 50))

# name: (constructor expression, rows, columns, data kind)
FAMILIES = {
    "LogisticRegression lbfgs": ("fastml.LogisticRegression()", ROWS, COLS, "class"),
    "LogisticRegression gd": ("fastml.LogisticRegression(solver='gd')", ROWS, COLS, "class"),
    "LogisticRegression sgd": ("fastml.LogisticRegression(solver='sgd')", ROWS, COLS, "class"),
    "Perceptron": ("fastml.Perceptron()", ROWS, COLS, "class"),
    "LinearSVM": ("fastml.LinearSVM()", ROWS, COLS, "binary"),
    "KernelPerceptron": ("fastml.KernelPerceptron(max_iter=1)", ROWS // 20, 10, "binary"),
    "LinearRegression": ("fastml.LinearRegression()", ROWS, COLS, "real"),
    "Ridge": ("fastml.Ridge()", ROWS, COLS, "real"),
    "PolynomialRegression": ("fastml.PolynomialRegression()", ROWS, 10, "real"),
    "GaussianNB": ("fastml.GaussianNB()", ROWS, COLS, "class"),
    "CategoricalNB": ("fastml.CategoricalNB()", ROWS, COLS, "codes"),
    "NaiveBayes": ("fastml.NaiveBayes()", ROWS, COLS, "class"),
    "DecisionTree exact": ("fastml.DecisionTreeClassifier()", ROWS, COLS, "class"),
    "DecisionTree hist": ("fastml.DecisionTreeClassifier(splitter='hist')", ROWS, COLS,
                          "class"),
    "RandomForest 10 trees": ("fastml.RandomForestClassifier(n_estimators=10, random_state=0)",
                              ROWS // 4, COLS, "class"),
}

CHILD = r"""
import gc, json, resource, sys, tracemalloc
import numpy as np
import fastml

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()

make, n, d, kind = json.loads(sys.argv[1])
rng = np.random.default_rng(0)
if kind == "codes":
    X = rng.integers(0, 10, size=(n, d)).astype(np.float64)
    y = (X[:, 0] + X[:, 1] + rng.integers(0, 5, n)) % 3
else:
    X = rng.standard_normal((n, d))
    score = X[:, :5].sum(axis=1) + rng.standard_normal(n)
    y = {"class": np.digitize(score, [-1.0, 1.0]), "binary": (score > 0).astype(int),
         "real": score}[kind]
eval(make).fit(X[:2000], y[:2000])    # imports and first-call caches, outside the figure
gc.collect()
before = rss()
fastml_model = eval(make)
fastml_model.fit(X, y)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
del fastml_model
gc.collect()
tracemalloc.start()
base = tracemalloc.get_traced_memory()[0]
model = eval(make)
model.fit(X, y)
traced = tracemalloc.get_traced_memory()[1] - base
tracemalloc.stop()
print(json.dumps({"x_bytes": X.nbytes, "rss": peak, "traced": traced}))
"""


def measure(name):
    make, n, d, kind = FAMILIES[name]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps([make, n, d, kind])],
                          capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(names):
    print(f"| family (default fit) | X | tracemalloc peak / X | RSS growth / X |")
    print("|---|---|---|---|")
    for name in names or FAMILIES:
        _, n, d, _ = FAMILIES[name]
        r = measure(name)
        mb = r["x_bytes"] / 1e6
        print(f"| {name} | {n:,} x {d} ({mb:.0f} MB) | {r['traced'] / r['x_bytes']:.2f}x | "
              f"{r['rss'] / r['x_bytes']:.2f}x |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
