"""The voted perceptron at scale (issue 33, item 5): W6, a vector budget, predict rows/s.

W6: make_classification(1,000,000 rows, 20 features of which 10 informative, flip_y=0.2,
class_sep=1.0, random_state=0), binary; the first 800,000 rows train (5 epochs, shuffled,
random_state=0), the last 200,000 test. Without a budget VotedPerceptron keeps every vector
it passes through (~1.6 million on W6), so predict costs ~1.6 million dot products a row.

Printed, threads pinned to one (OMP_NUM_THREADS=1 and threadpoolctl):
- fit time without a budget and with budget=1000, the vectors kept;
- predict: rows/s of the budgeted model on the 200,000 test rows, and of the unbudgeted
  model on SMALL (2,000) of them (its cost per row is what the budget removes);
- accuracy of both on those SMALL rows (the unbudgeted model cannot predict all 200,000 in a
  benchmark's time), and of the budgeted model on the whole test set; scikit-learn's
  Perceptron and fastml's averaged Perceptron on the same split for context.
- FASTML_BEFORE=/path/to/a/built/older/checkout: the unbudgeted fit of that checkout and of
  this one, in alternating child processes (ROUNDS each), median and spread (the fit before
  the voted perceptron had its own compiled pass).

Run: OMP_NUM_THREADS=1 python bench/bench_voted.py   (FASTML_BENCH_W6_ROWS=... for a smaller
W6; it keeps the 4:1 split).
"""
import os
import statistics
import subprocess
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

ROWS = int(os.environ.get("FASTML_BENCH_W6_ROWS", 1_000_000))
BUDGET = 1000
SMALL = 2000
ROUNDS = 3
HERE = os.path.dirname(os.path.abspath(__file__))


def w6(rows=ROWS):
    """(X_train, y_train, X_test, y_test) of W6 (module note)."""
    from sklearn.datasets import make_classification
    X, y = make_classification(n_samples=rows, n_features=20, n_informative=10, flip_y=0.2,
                               class_sep=1.0, random_state=0)
    cut = rows * 4 // 5
    return X[:cut], y[:cut], X[cut:], y[cut:]


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


CHILD = """
import sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(1, sys.argv[2])
import fastml
from bench_voted import w6
X, y, _, _ = w6(int(sys.argv[3]))
start = time.perf_counter()
model = fastml.VotedPerceptron(max_iter=5, random_state=0).fit(X, y)
print(time.perf_counter() - start, len(model.vectors_), fastml.__file__)
"""


def fit_in_child(checkout):
    out = subprocess.run([sys.executable, "-c", CHILD, checkout, HERE, str(ROWS)],
                         capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), int(out[1]), out[2]


def before_and_after(before):
    """Median and spread of the unbudgeted fit in alternating children, before / after."""
    times = {"before": [], "after": []}
    for _ in range(ROUNDS):
        for label, path in (("before", before), ("after", os.path.dirname(HERE))):
            seconds, vectors, where = fit_in_child(path)
            times[label].append(seconds)
    return {label: (statistics.median(t), min(t), max(t)) for label, t in times.items()}


def main():
    from threadpoolctl import threadpool_limits
    import fastml
    from sklearn.linear_model import Perceptron as SkPerceptron
    X, y, X_test, y_test = w6()
    print(f"W6: {len(X):,} x {X.shape[1]} train, {len(X_test):,} test; load "
          f"{os.getloadavg()[0]:.2f}; fastml {fastml.__file__}")
    rows = []
    with threadpool_limits(1):
        t_full, full = timed(lambda: fastml.VotedPerceptron(max_iter=5, random_state=0).fit(X, y))
        t_budget, budgeted = timed(lambda: fastml.VotedPerceptron(
            max_iter=5, random_state=0, budget=BUDGET).fit(X, y))
        t_pred, pred = timed(lambda: budgeted.predict(X_test))
        t_full_pred, full_small = timed(lambda: full.predict(X_test[:SMALL]))
        small = y_test[:SMALL]
        rows.append(("VotedPerceptron, no budget", t_full, len(full.vectors_),
                     SMALL / t_full_pred, np.mean(full_small == small), None))
        rows.append((f"VotedPerceptron(budget={BUDGET})", t_budget, len(budgeted.vectors_),
                     len(X_test) / t_pred, np.mean(pred[:SMALL] == small),
                     np.mean(pred == y_test)))
        for name, model in (("fastml Perceptron(average=True)",
                             fastml.Perceptron(max_iter=5, tol=None, average=True,
                                               random_state=0)),
                            ("scikit-learn Perceptron", SkPerceptron(max_iter=5, tol=None,
                                                                     random_state=0))):
            t_fit, _ = timed(lambda: model.fit(X, y))
            t_p, p = timed(lambda: model.predict(X_test))
            rows.append((name, t_fit, 1, len(X_test) / t_p, np.mean(p[:SMALL] == small),
                         np.mean(p == y_test)))
    print(f"\n| model | fit (s) | vectors | predict rows/s | accuracy, {SMALL:,} test rows | "
          f"accuracy, all test rows |")
    print("|---|---|---|---|---|---|")
    for name, fit_s, vectors, per_s, acc_small, acc_all in rows:
        print(f"| {name} | {fit_s:.2f} | {vectors:,} | {per_s:,.0f} | {acc_small:.4f} | "
              + ("-" if acc_all is None else f"{acc_all:.4f}") + " |")
    before = os.environ.get("FASTML_BEFORE")
    if before:
        result = before_and_after(before)
        print("\nunbudgeted fit, alternating child processes "
              f"({ROUNDS} each; median [min, max] s):")
        for label, (median, low, high) in result.items():
            print(f"  {label}: {median:.2f} [{low:.2f}, {high:.2f}]")
        print(f"  after / before: {result['after'][0] / result['before'][0]:.3f}")


if __name__ == "__main__":
    main()
