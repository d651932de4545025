"""The perceptron family (issue 3), next to scikit-learn and a numpy kernel perceptron.

- Perceptron, dense 1,000,000 x 100 float64, 5 epochs (shuffled): fastml Perceptron vs
  scikit-learn Perceptron; averaged: fastml Perceptron(average=True) vs
  SGDClassifier(loss="perceptron", average=True) (same algorithm: eta 1, no penalty). Accuracy
  on 200,000 held-out rows. FASTML_BENCH_ROWS overrides the row count.
- KernelPerceptron rbf, 20,000 training rows x 10 features, one epoch in the given order, and
  prediction of 5,000 rows: fastml vs a straightforward vectorized numpy kernel perceptron (per
  example, the kernel vector against the stored mistakes in one numpy expression; prediction by
  broadcasting in chunks), with scikit-learn's SVC(kernel="rbf") at the same gamma for context.
"""
import os

import numpy as np
import pytest

from conftest import record
from fastml import KernelPerceptron, Perceptron

N_ROWS = int(os.environ.get("FASTML_BENCH_ROWS", 1_000_000))
N_FEATURES = 100
GAMMA = 0.1


@pytest.fixture(scope="module")
def linear_data():
    """Standard-normal features, labels of a noisy linear rule (Bayes accuracy ~0.96)."""
    rng = np.random.default_rng(0)
    n_test = N_ROWS // 5
    X = rng.standard_normal((N_ROWS + n_test, N_FEATURES))
    w = rng.standard_normal(N_FEATURES)
    y = (X @ w + 0.5 * rng.standard_normal(len(X)) > 0).astype(np.int64)
    return X[:N_ROWS], y[:N_ROWS], X[N_ROWS:], y[N_ROWS:]


def accuracy(model, data):
    _, _, X_test, y_test = data
    return float(np.mean(model.predict(X_test) == y_test))


def test_perceptron_fastml(benchmark, linear_data, single_thread):
    X, y, _, _ = linear_data
    model = Perceptron(max_iter=5, tol=None, random_state=0)
    benchmark.pedantic(model.fit, args=(X, y), rounds=3, iterations=1)
    record(benchmark, "perceptron 5 epochs", "fastml", accuracy=accuracy(model, linear_data))


def test_perceptron_sklearn(benchmark, linear_data, single_thread):
    from sklearn.linear_model import Perceptron as SkPerceptron
    X, y, _, _ = linear_data
    model = SkPerceptron(max_iter=5, tol=None, random_state=0)
    benchmark.pedantic(model.fit, args=(X, y), rounds=3, iterations=1)
    record(benchmark, "perceptron 5 epochs", "scikit-learn Perceptron",
           accuracy=accuracy(model, linear_data))


def test_averaged_perceptron_fastml(benchmark, linear_data, single_thread):
    X, y, _, _ = linear_data
    model = Perceptron(max_iter=5, tol=None, average=True, random_state=0)
    benchmark.pedantic(model.fit, args=(X, y), rounds=3, iterations=1)
    record(benchmark, "averaged perceptron 5 epochs", "fastml",
           accuracy=accuracy(model, linear_data))


def test_averaged_perceptron_sklearn(benchmark, linear_data, single_thread):
    import warnings
    from sklearn.linear_model import SGDClassifier
    X, y, _, _ = linear_data
    model = SGDClassifier(loss="perceptron", penalty=None, learning_rate="constant", eta0=1.0,
                          average=True, max_iter=5, tol=None, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        benchmark.pedantic(model.fit, args=(X, y), rounds=3, iterations=1)
    record(benchmark, "averaged perceptron 5 epochs", "scikit-learn SGDClassifier(average)",
           accuracy=accuracy(model, linear_data))


# ---------------------------------------------------------------- kernel perceptron

@pytest.fixture(scope="module")
def kernel_data():
    """A nonlinear problem: 3 Gaussian clusters per class in 8 of 10 dimensions, 5% of the
    labels flipped (so the perceptron keeps making mistakes and stores a few thousand)."""
    from sklearn.datasets import make_classification
    X, y = make_classification(n_samples=25_000, n_features=10, n_informative=8,
                               n_redundant=0, n_clusters_per_class=3, class_sep=1.5,
                               flip_y=0.05, random_state=0)
    return X[:20_000], y[:20_000], X[20_000:], y[20_000:]


def numpy_kernel_perceptron(X, y, gamma):
    """The straightforward vectorized kernel perceptron: per example, the rbf kernel vector
    against the stored mistakes in one numpy expression (003's sum over M)."""
    t = np.where(y == 1, 1.0, -1.0)
    stored, coef, m = np.empty_like(X), np.empty(len(X)), 0
    for i, x in enumerate(X):
        score = coef[:m] @ np.exp(-gamma * ((stored[:m] - x) ** 2).sum(axis=1)) if m else 0.0
        if t[i] * score <= 0:
            stored[m], coef[m] = x, t[i]
            m += 1
    return stored[:m], coef[:m]


def numpy_kernel_predict(X, stored, coef, gamma, chunk=500):
    scores = np.empty(len(X))
    for first in range(0, len(X), chunk):
        block = X[first:first + chunk]
        K = np.exp(-gamma * ((block[:, None, :] - stored[None]) ** 2).sum(axis=2))
        scores[first:first + chunk] = K @ coef
    return (scores > 0).astype(np.int64)


def test_kernel_train_fastml(benchmark, kernel_data, single_thread):
    X, y, X_test, y_test = kernel_data
    model = KernelPerceptron(kernel="rbf", gamma=GAMMA, max_iter=1, shuffle=False)
    benchmark.pedantic(model.fit, args=(X, y), rounds=5, iterations=1)
    record(benchmark, "kernel perceptron rbf 1 epoch 20k x 10", "fastml",
           accuracy=float(np.mean(model.predict(X_test) == y_test)),
           mistakes=model.n_mistakes_)


def test_kernel_train_numpy(benchmark, kernel_data, single_thread):
    X, y, X_test, y_test = kernel_data
    stored, coef = benchmark.pedantic(numpy_kernel_perceptron, args=(X, y, GAMMA), rounds=2,
                                      iterations=1)
    record(benchmark, "kernel perceptron rbf 1 epoch 20k x 10", "numpy kernel perceptron",
           accuracy=float(np.mean(numpy_kernel_predict(X_test, stored, coef, GAMMA) == y_test)),
           mistakes=len(coef))


def test_kernel_train_svc(benchmark, kernel_data, single_thread):
    from sklearn.svm import SVC
    X, y, X_test, y_test = kernel_data
    model = SVC(kernel="rbf", gamma=GAMMA)
    benchmark.pedantic(model.fit, args=(X, y), rounds=1, iterations=1)
    record(benchmark, "kernel perceptron rbf 1 epoch 20k x 10", "scikit-learn SVC (context)",
           accuracy=model.score(X_test, y_test), support_vectors=len(model.support_))


@pytest.fixture(scope="module")
def kernel_models(kernel_data):
    from sklearn.svm import SVC
    X, y, _, _ = kernel_data
    ours = KernelPerceptron(kernel="rbf", gamma=GAMMA, max_iter=1, shuffle=False).fit(X, y)
    stored, coef = numpy_kernel_perceptron(X, y, GAMMA)
    return ours, (stored, coef), SVC(kernel="rbf", gamma=GAMMA).fit(X, y)


def test_kernel_predict_fastml(benchmark, kernel_data, kernel_models, single_thread):
    X_test = kernel_data[2]
    ours = kernel_models[0]
    benchmark.pedantic(ours.predict, args=(X_test,), rounds=5, iterations=1)
    record(benchmark, "kernel perceptron rbf predict 5k rows", "fastml",
           support_vectors=len(ours.support_vectors_))


def test_kernel_predict_numpy(benchmark, kernel_data, kernel_models, single_thread):
    X_test = kernel_data[2]
    stored, coef = kernel_models[1]
    benchmark.pedantic(numpy_kernel_predict, args=(X_test, stored, coef, GAMMA), rounds=3,
                       iterations=1)
    record(benchmark, "kernel perceptron rbf predict 5k rows", "numpy kernel perceptron",
           support_vectors=len(coef))


def test_kernel_predict_svc(benchmark, kernel_data, kernel_models, single_thread):
    X_test = kernel_data[2]
    svc = kernel_models[2]
    benchmark.pedantic(svc.predict, args=(X_test,), rounds=3, iterations=1)
    record(benchmark, "kernel perceptron rbf predict 5k rows", "scikit-learn SVC (context)",
           support_vectors=len(svc.support_))
