"""Naive Bayes next to scikit-learn (issue 5 sizes; FASTML_BENCH_ROWS overrides the rows):
- Gaussian: 1,000,000 x 100 float64, 5 classes: fit and predict_proba vs GaussianNB;
- categorical: 1,000,000 x 20 attributes x 10 levels (int codes), 3 classes: fit and predict vs
  CategoricalNB(alpha=1).
One thread each (fastml's n_jobs=None; scikit-learn's numpy work is single-threaded), plus
fastml's fit on a column-major X, with n_jobs=2, on codes outside 0..255, and one read of X
for scale. The quality column holds the accuracy on a held-out set and, for the fastml rows,
the largest difference of its predict_proba from scikit-learn's (the two compute the same
model).

The categorical rows as a CPU-time table (the machine is shared: minima of process_time over
ROUNDS runs, fastml and scikit-learn interleaved in one process, one thread each):
    OMP_NUM_THREADS=1 python bench/bench_naive_bayes.py
"""
import os
import time

import numpy as np
import pytest

from conftest import record
from fastml import CategoricalNB, GaussianNB

N_ROWS = int(os.environ.get("FASTML_BENCH_ROWS", 1_000_000))
ROUNDS = 3


@pytest.fixture(scope="module")
def gaussian_data():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 5, size=N_ROWS)
    shift = rng.normal(scale=0.15, size=(5, 100))
    X = rng.standard_normal((N_ROWS, 100)) + shift[y]
    test = slice(0, 20000)
    return X, y, X[test], y[test]


def make_categorical_data():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, size=N_ROWS)
    X = rng.integers(0, 10, size=(N_ROWS, 20))
    tilt = rng.random((N_ROWS, 20)) < 0.15                # some cells lean to the class
    X[tilt] = (y[:, None] * 3 + np.arange(20))[tilt] % 10
    return X, y, X[:20000], y[:20000]


@pytest.fixture(scope="module")
def categorical_data():
    return make_categorical_data()


def accuracy(model, X, y):
    return float(np.mean(model.predict(X) == y))


@pytest.fixture(scope="module")
def sk_gaussian(gaussian_data):
    from sklearn.naive_bayes import GaussianNB as SkGaussianNB
    X, y, _, _ = gaussian_data
    return SkGaussianNB().fit(X, y)


@pytest.fixture(scope="module")
def sk_categorical(categorical_data):
    from sklearn.naive_bayes import CategoricalNB as SkCategoricalNB
    X, y, _, _ = categorical_data
    return SkCategoricalNB(alpha=1.0).fit(X, y)


# ------------------------------------------------------------------------- Gaussian
def test_gaussian_fit_fastml(benchmark, gaussian_data, sk_gaussian, single_thread):
    X, y, X_test, y_test = gaussian_data
    model = GaussianNB(ddof=0)
    benchmark.pedantic(model.fit, args=(X, y), rounds=ROUNDS, iterations=1)
    gap = np.abs(model.predict_proba(X_test) - sk_gaussian.predict_proba(X_test)).max()
    record(benchmark, "GaussianNB fit 1M x 100, 5 classes", "fastml",
           accuracy=accuracy(model, X_test, y_test), max_proba_diff_vs_sklearn=gap)


def test_gaussian_fit_fastml_column_major(benchmark, gaussian_data, single_thread):
    """X in column-major order (what a columnar source gives): read in place, no copy."""
    X, y, X_test, y_test = gaussian_data
    XF = np.asfortranarray(X)
    model = GaussianNB(ddof=0)
    benchmark.pedantic(model.fit, args=(XF, y), rounds=ROUNDS, iterations=1)
    record(benchmark, "GaussianNB fit 1M x 100, 5 classes", "fastml, X column-major",
           accuracy=accuracy(model, X_test, y_test))


def test_gaussian_fit_fastml_two_threads(benchmark, gaussian_data):
    """n_jobs=2 (the one row of this file that is not single-threaded)."""
    X, y, X_test, y_test = gaussian_data
    model = GaussianNB(ddof=0, n_jobs=2)
    benchmark.pedantic(model.fit, args=(X, y), rounds=ROUNDS, iterations=1)
    record(benchmark, "GaussianNB fit 1M x 100, 5 classes", "fastml, n_jobs=2",
           accuracy=accuracy(model, X_test, y_test))


def test_read_of_X(benchmark, gaussian_data, single_thread):
    """One read of X (its sum): the floor the Gaussian fit is compared with."""
    X = gaussian_data[0]
    benchmark.pedantic(X.sum, rounds=ROUNDS, iterations=1)
    record(benchmark, "GaussianNB fit 1M x 100, 5 classes", "one read of X (X.sum())")


def test_gaussian_fit_sklearn(benchmark, gaussian_data, single_thread):
    from sklearn.naive_bayes import GaussianNB as SkGaussianNB
    X, y, X_test, y_test = gaussian_data
    model = SkGaussianNB()
    benchmark.pedantic(model.fit, args=(X, y), rounds=ROUNDS, iterations=1)
    record(benchmark, "GaussianNB fit 1M x 100, 5 classes", "scikit-learn GaussianNB",
           accuracy=accuracy(model, X_test, y_test))


def test_gaussian_proba_fastml(benchmark, gaussian_data, single_thread):
    X, y, X_test, y_test = gaussian_data
    model = GaussianNB(ddof=0).fit(X, y)
    benchmark.pedantic(model.predict_proba, args=(X,), rounds=ROUNDS, iterations=1)
    record(benchmark, "GaussianNB predict_proba 1M x 100", "fastml",
           accuracy=accuracy(model, X_test, y_test))


def test_gaussian_proba_sklearn(benchmark, gaussian_data, sk_gaussian, single_thread):
    X, _, X_test, y_test = gaussian_data
    benchmark.pedantic(sk_gaussian.predict_proba, args=(X,), rounds=ROUNDS, iterations=1)
    record(benchmark, "GaussianNB predict_proba 1M x 100", "scikit-learn GaussianNB",
           accuracy=accuracy(sk_gaussian, X_test, y_test))


# ------------------------------------------------------------------------- categorical
def test_categorical_fit_fastml(benchmark, categorical_data, sk_categorical, single_thread):
    X, y, X_test, y_test = categorical_data
    model = CategoricalNB(alpha=1.0)
    benchmark.pedantic(model.fit, args=(X, y), rounds=ROUNDS, iterations=1)
    gap = np.abs(model.predict_proba(X_test) - sk_categorical.predict_proba(X_test)).max()
    record(benchmark, "CategoricalNB fit 1M x 20 x 10 levels, 3 classes", "fastml",
           accuracy=accuracy(model, X_test, y_test), max_proba_diff_vs_sklearn=gap)


def test_categorical_fit_fastml_offset_codes(benchmark, categorical_data, single_thread):
    """Codes 1000..1009: outside the one-read guess 0..255, so a min / max and a second count
    (the path of any narrow range that does not start near 0)."""
    X, y, X_test, y_test = categorical_data
    X_offset = X + 1000
    model = CategoricalNB(alpha=1.0)
    benchmark.pedantic(model.fit, args=(X_offset, y), rounds=ROUNDS, iterations=1)
    record(benchmark, "CategoricalNB fit 1M x 20 x 10 levels, 3 classes",
           "fastml, codes 1000..1009", accuracy=accuracy(model, X_test + 1000, y_test))


def test_categorical_fit_sklearn(benchmark, categorical_data, single_thread):
    from sklearn.naive_bayes import CategoricalNB as SkCategoricalNB
    X, y, X_test, y_test = categorical_data
    model = SkCategoricalNB(alpha=1.0)
    benchmark.pedantic(model.fit, args=(X, y), rounds=ROUNDS, iterations=1)
    record(benchmark, "CategoricalNB fit 1M x 20 x 10 levels, 3 classes",
           "scikit-learn CategoricalNB", accuracy=accuracy(model, X_test, y_test))


def test_categorical_predict_fastml(benchmark, categorical_data, single_thread):
    X, y, X_test, y_test = categorical_data
    model = CategoricalNB(alpha=1.0).fit(X, y)
    benchmark.pedantic(model.predict, args=(X,), rounds=ROUNDS, iterations=1)
    record(benchmark, "CategoricalNB predict 1M x 20", "fastml",
           accuracy=accuracy(model, X_test, y_test))


def test_categorical_predict_sklearn(benchmark, categorical_data, sk_categorical,
                                     single_thread):
    X, _, X_test, y_test = categorical_data
    benchmark.pedantic(sk_categorical.predict, args=(X,), rounds=ROUNDS, iterations=1)
    record(benchmark, "CategoricalNB predict 1M x 20", "scikit-learn CategoricalNB",
           accuracy=accuracy(sk_categorical, X_test, y_test))


# ------------------------------------------------------------------------- the CPU-time table
def categorical_cpu_table():
    from sklearn.naive_bayes import CategoricalNB as SkCategoricalNB
    from threadpoolctl import threadpool_limits
    X, y, X_test, _ = make_categorical_data()
    X_offset = X + 1000
    ours, theirs = CategoricalNB(alpha=1.0).fit(X, y), SkCategoricalNB(alpha=1.0).fit(X, y)
    rows = {"fit": lambda: CategoricalNB(alpha=1.0).fit(X, y),
            "fit, codes 1000..1009": lambda: CategoricalNB(alpha=1.0).fit(X_offset, y),
            "scikit-learn fit": lambda: SkCategoricalNB(alpha=1.0).fit(X, y),
            "predict": lambda: ours.predict(X),
            "scikit-learn predict": lambda: theirs.predict(X),
            "one read of X (X.sum())": X.sum}
    best = dict.fromkeys(rows, float("inf"))
    with threadpool_limits(limits=1):
        for _ in range(ROUNDS + 2):
            for name, call in rows.items():
                start = time.process_time()
                call()
                best[name] = min(best[name], time.process_time() - start)
    gap = np.abs(ours.predict_proba(X_test) - theirs.predict_proba(X_test)).max()
    print(f"CategoricalNB, {N_ROWS:,} x 20 x 10 levels, 3 classes: CPU ms (min of "
          f"{ROUNDS + 2}), load average {os.getloadavg()[0]:.1f}")
    for name, seconds in best.items():
        print(f"| {name} | {seconds * 1e3:.1f} |")
    print(f"fit {best['scikit-learn fit'] / best['fit']:.1f}x, codes 1000..1009 "
          f"{best['scikit-learn fit'] / best['fit, codes 1000..1009']:.1f}x, predict "
          f"{best['scikit-learn predict'] / best['predict']:.1f}x scikit-learn; largest "
          f"predict_proba difference {gap:.1e}")


if __name__ == "__main__":
    categorical_cpu_table()
