"""Predict latency for embedding (issue 13): one row through every estimator of
`fastml.all_estimators()`, fastml next to scikit-learn's same call, plus two batch rows
(forest predict_proba on 400k x 20, kernel perceptron predict rate).

One row is a (1, n_features) float64 C-contiguous array, the call is the whole public method
(validation included). A call takes microseconds, so the figure is the minimum over many calls
(ROUNDS, default 2000): robust to a loaded machine, where a median is not. Threads are pinned:
OMP_NUM_THREADS=1 and threadpoolctl limits BLAS/OpenMP to one thread for both libraries.

Run the table:   OMP_NUM_THREADS=1 python bench/bench_predict_latency.py [name ...] [batch]
                 ("kernel_batch": only the kernel perceptron's batch rows)
Or the suite:    pytest bench/bench_predict_latency.py --benchmark-only
"""
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import pytest

ROUNDS = int(os.environ.get("BENCH_LATENCY_ROUNDS", 2000))
N_BATCH = int(os.environ.get("BENCH_FOREST_PREDICT_N", 400_000))


def _classification(n=2000, d=10, classes=2, seed=0):
    from sklearn.datasets import make_classification
    return make_classification(n_samples=n, n_features=d, n_informative=min(d, 6),
                               n_redundant=0, n_classes=classes, random_state=seed)


def _regression(n=2000, d=10, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)


def _codes(n=2000, d=10, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 5, size=(n, d)).astype(np.float64)
    return X, (X[:, 0] + X[:, 1] > 4).astype(int)


def _kernel_data(seed=0):
    """Noisy 10-dimensional data: 1,640 mistakes in one epoch; three epochs with budget=2000
    keep the last 2,000 (1,826 distinct rows once repeats are merged)."""
    X, y = _classification(n=4000, d=10, seed=seed)
    flip = np.random.default_rng(seed).random(len(y)) < 0.25
    return X, np.where(flip, 1 - y, y)


def cases():
    """name -> (fastml model factory, scikit-learn factory, data, methods)."""
    import fastml
    from sklearn import (ensemble, linear_model, naive_bayes, pipeline, preprocessing, svm,
                         tree)
    clf = _classification()
    reg = _regression()
    cat = _codes()
    kp = _kernel_data()
    poly = (lambda: fastml.PolynomialRegression(degree=2),
            lambda: pipeline.make_pipeline(preprocessing.PolynomialFeatures(2),
                                           linear_model.LinearRegression()))
    return {
        "CategoricalNB": (fastml.CategoricalNB, naive_bayes.CategoricalNB, cat,
                          ("predict", "predict_proba")),
        "DecisionTreeClassifier": (lambda: fastml.DecisionTreeClassifier(max_depth=8),
                                   lambda: tree.DecisionTreeClassifier(max_depth=8), clf,
                                   ("predict", "predict_proba")),
        "DecisionTreeRegressor": (lambda: fastml.DecisionTreeRegressor(max_depth=8),
                                  lambda: tree.DecisionTreeRegressor(max_depth=8), reg,
                                  ("predict",)),
        "GaussianNB": (fastml.GaussianNB, naive_bayes.GaussianNB, clf,
                       ("predict", "predict_proba")),
        "KernelPerceptron": (lambda: fastml.KernelPerceptron(max_iter=3, budget=2000,
                                                             random_state=0),
                             lambda: svm.SVC(kernel="rbf", gamma="scale"), kp,
                             ("predict", "decision_function")),
        "LinearRegression": (fastml.LinearRegression, linear_model.LinearRegression, reg,
                             ("predict",)),
        "LinearSVM": (fastml.LinearSVM, svm.LinearSVC, clf, ("predict", "decision_function")),
        "LogisticRegression": (fastml.LogisticRegression, linear_model.LogisticRegression, clf,
                               ("predict", "predict_proba", "decision_function")),
        "NaiveBayes": (fastml.NaiveBayes, naive_bayes.GaussianNB, clf,
                       ("predict", "predict_proba")),
        "Perceptron": (fastml.Perceptron, linear_model.Perceptron, clf,
                       ("predict", "decision_function")),
        "PolynomialFeatures": (lambda: fastml.PolynomialFeatures(degree=2),
                               lambda: preprocessing.PolynomialFeatures(2), reg,
                               ("transform",)),
        "PolynomialRegression": poly + (reg, ("predict",)),
        "RandomForestClassifier": (
            lambda: fastml.RandomForestClassifier(n_estimators=100, max_depth=8,
                                                  random_state=0),
            lambda: ensemble.RandomForestClassifier(n_estimators=100, max_depth=8,
                                                    random_state=0),
            clf, ("predict", "predict_proba")),
        "RandomForestRegressor": (
            lambda: fastml.RandomForestRegressor(n_estimators=100, max_depth=8,
                                                 random_state=0),
            lambda: ensemble.RandomForestRegressor(n_estimators=100, max_depth=8,
                                                   random_state=0),
            reg, ("predict",)),
        "Ridge": (fastml.Ridge, linear_model.Ridge, reg, ("predict",)),
        "VotedPerceptron": (fastml.VotedPerceptron, linear_model.Perceptron, clf,
                            ("predict",)),
    }


def min_call(fn, rounds=ROUNDS):
    """The minimum time of one call over `rounds` calls (seconds)."""
    best = float("inf")
    clock = time.perf_counter
    for _ in range(rounds):
        t0 = clock()
        fn()
        t = clock() - t0
        if t < best:
            best = t
    return best


_FITTED = {}


def fitted(name):
    if name not in _FITTED:
        make_ours, make_peer, (X, y), methods = cases()[name]
        ours = make_ours()
        peer = make_peer()
        if methods == ("transform",):
            ours.fit(X), peer.fit(X)
        else:
            ours.fit(X, y), peer.fit(X, y)
        row = np.ascontiguousarray(X[:1], dtype=np.float64)
        _FITTED[name] = ours, peer, row, methods
    return _FITTED[name]


def latency_table(names):
    from threadpoolctl import threadpool_limits
    lines = ["| estimator | call | fastml µs | scikit-learn µs | ratio | note |",
             "|---|---|---|---|---|---|"]
    with threadpool_limits(limits=1):
        for name in names:
            ours, peer, row, methods = fitted(name)
            note = ""
            if name == "KernelPerceptron":
                note = f"{len(ours.support_vectors_)} mistakes; peer SVC " \
                       f"{len(peer.support_vectors_)} SVs"
            for method in methods:
                f, p = getattr(ours, method), getattr(peer, method)
                f(row), p(row)
                tf, tp = min_call(lambda: f(row)), min_call(lambda: p(row))
                lines.append(f"| {name} | {method} | {tf * 1e6:.1f} | {tp * 1e6:.1f} | "
                             f"{tp / tf:.1f}x | {note} |")
                print(lines[-1], flush=True)
    return lines


def batch_table():
    from threadpoolctl import threadpool_limits
    import fastml
    from sklearn.ensemble import RandomForestClassifier
    lines = []
    with threadpool_limits(limits=1):
        X, y = _classification(n=20_000, d=20, classes=3)
        Xt, _ = _classification(n=N_BATCH, d=20, classes=3, seed=1)
        ours = fastml.RandomForestClassifier(n_estimators=100, max_depth=8, random_state=0)
        peer = RandomForestClassifier(n_estimators=100, max_depth=8, random_state=0)
        ours.fit(X, y), peer.fit(X, y)
        tf = min(min_call(lambda: ours.predict_proba(Xt), 1) for _ in range(3))
        tp = min(min_call(lambda: peer.predict_proba(Xt), 1) for _ in range(3))
        lines.append(f"| RandomForestClassifier predict_proba {N_BATCH} x 20, 100 trees depth 8 "
                     f"| {tf:.3f} s | {tp:.3f} s | {tp / tf:.1f}x |")
        print(lines[-1], flush=True)
        lines += kernel_batch_rows()
    return lines


def kernel_batch_rows():
    """KernelPerceptron.predict on 100k x 10 rows, one epoch of _kernel_data's mistakes, per
    built-in kernel: wall clock and CPU time (process_time, which a loaded machine inflates
    less), minimum of 3, at the default n_jobs (None = 1 thread) and at n_jobs=2 (CPU time
    then sums both threads)."""
    import fastml
    from threadpoolctl import threadpool_limits
    lines = []
    with threadpool_limits(limits=1, user_api="blas"):  # n_jobs alone sets the threads
        _kernel_batch(fastml, lines)
    return lines


def _kernel_batch(fastml, lines):
    Xk, yk = _kernel_data()
    Xq = np.random.default_rng(2).normal(size=(100_000, 10))
    for kernel, extra in (("rbf", {}), ("poly", dict(degree=3, coef0=1.0)), ("sigmoid", {})):
        kp = fastml.KernelPerceptron(kernel=kernel, max_iter=1, random_state=0,
                                     **extra).fit(Xk, yk)
        for n_jobs in (None, 2):
            kp.set_params(n_jobs=n_jobs)
            wall = cpu = float("inf")
            for _ in range(3):
                t0, c0 = time.perf_counter(), time.process_time()
                kp.predict(Xq)
                wall = min(wall, time.perf_counter() - t0)
                cpu = min(cpu, time.process_time() - c0)
            lines.append(f"| KernelPerceptron({kernel}) predict, 100k rows x 10, "
                         f"{len(kp.support_vectors_)} mistakes, n_jobs={n_jobs} | wall "
                         f"{wall:.3f} s = {len(Xq) / wall / 1e3:.0f}k rows/s | CPU {cpu:.3f} s "
                         f"= {len(Xq) / cpu / 1e3:.0f}k rows/s per CPU-second | |")
            print(lines[-1], flush=True)


# ------------------------------------------------------------------ the pytest-benchmark suite
@pytest.fixture(scope="module", params=sorted(
    ["CategoricalNB", "DecisionTreeClassifier", "DecisionTreeRegressor", "GaussianNB",
     "KernelPerceptron", "LinearRegression", "LinearSVM", "LogisticRegression", "NaiveBayes",
     "Perceptron", "PolynomialFeatures", "PolynomialRegression", "RandomForestClassifier",
     "RandomForestRegressor", "Ridge", "VotedPerceptron"]))
def estimator_name(request):
    return request.param


@pytest.mark.parametrize("who", ["fastml", "scikit-learn"])
def test_one_row(benchmark, estimator_name, who, single_thread):
    from conftest import record
    ours, peer, row, methods = fitted(estimator_name)
    model = ours if who == "fastml" else peer
    method = getattr(model, methods[0])
    benchmark.pedantic(method, args=(row,), rounds=ROUNDS, iterations=1, warmup_rounds=10)
    record(benchmark, f"one row {estimator_name}.{methods[0]} (µs scale)", who)


if __name__ == "__main__":
    wanted = sys.argv[1:] or sorted(cases())
    batch = "batch" in wanted
    names = [n for n in wanted if n not in ("batch", "kernel_batch")]
    latency_table(names)
    if batch or not sys.argv[1:]:
        batch_table()
    elif "kernel_batch" in wanted:
        kernel_batch_rows()
