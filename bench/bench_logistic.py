"""Logistic regression: SGD epochs, one batch-gradient iteration, and L-BFGS to convergence,
each next to scikit-learn (and numpy for the gradient). Sizes from issue 2: dense 1,000,000 x
100 float64 with a held-out test split (FASTML_BENCH_ROWS overrides the row count)."""
import os

import numpy as np
import pytest

from conftest import record
from fastml import LogisticRegression
from fastml.linear_model._base import OutputLayout
from fastml.linear_model._logistic import _Objective
from fastml.metrics import log_loss

N_ROWS = int(os.environ.get("FASTML_BENCH_ROWS", 1_000_000))
N_FEATURES = 100
ALPHA = 1e-6


@pytest.fixture(scope="module")
def data():
    """Standard-normal features, labels from a logistic model with noise (optimum log-loss
    about 0.59), 20% held out."""
    rng = np.random.default_rng(0)
    n_test = N_ROWS // 5
    X = rng.standard_normal((N_ROWS + n_test, N_FEATURES))
    w = rng.standard_normal(N_FEATURES) / np.sqrt(N_FEATURES)
    y = (X @ w + 0.3 + rng.logistic(size=len(X)) > 0).astype(np.int64)
    return X[:N_ROWS], y[:N_ROWS], X[N_ROWS:], y[N_ROWS:]


@pytest.fixture(scope="module")
def optimum(data):
    X, y, X_test, y_test = data
    best = LogisticRegression(alpha=ALPHA, tol=1e-8, max_iter=500).fit(X, y)
    return log_loss(y_test, best.predict_proba(X_test), best.classes_)


def held_out(model, data):
    _, _, X_test, y_test = data
    return log_loss(y_test, model.predict_proba(X_test), model.classes_)


def test_sgd_fastml(benchmark, data, optimum, single_thread):
    X, y, _, _ = data
    model = LogisticRegression(solver="sgd", alpha=ALPHA, max_iter=5, tol=None, random_state=0)
    benchmark.pedantic(model.fit, args=(X, y), rounds=3, iterations=1)
    record(benchmark, "logreg SGD 5 epochs", "fastml", log_loss=held_out(model, data),
           optimum=optimum)
    assert held_out(model, data) <= 1.01 * optimum


def test_sgd_sklearn(benchmark, data, optimum, single_thread):
    from sklearn.linear_model import SGDClassifier
    X, y, _, _ = data
    model = SGDClassifier(loss="log_loss", alpha=ALPHA, max_iter=5, tol=None, random_state=0)
    benchmark.pedantic(model.fit, args=(X, y), rounds=3, iterations=1)
    record(benchmark, "logreg SGD 5 epochs", "scikit-learn SGDClassifier",
           log_loss=held_out(model, data), optimum=optimum)


@pytest.fixture(scope="module")
def gradient_setup(data):
    X, y, _, _ = data
    w = np.random.default_rng(1).standard_normal(N_FEATURES) * 0.1
    objective = _Objective(X, y, np.ones(len(y)), OutputLayout(2, "multinomial"), ALPHA, False, 1)
    return X, y, w, objective


def test_gd_iteration_fastml(benchmark, gradient_setup, single_thread):
    X, y, w, objective = gradient_setup
    benchmark.pedantic(objective, args=(w,), rounds=10, iterations=1)
    record(benchmark, "logreg one gradient pass", "fastml")


def test_gd_iteration_numpy(benchmark, gradient_setup, single_thread):
    from scipy.special import expit
    X, y, w, _ = gradient_setup
    benchmark.pedantic(lambda: X.T @ (y - expit(X @ w)), rounds=10, iterations=1)
    record(benchmark, "logreg one gradient pass", "numpy X.T @ (y - sigmoid(X @ w))")


def test_gd_iteration_bandwidth_floor(benchmark, gradient_setup, single_thread):
    X = gradient_setup[0]
    benchmark.pedantic(X.sum, rounds=10, iterations=1)
    record(benchmark, "logreg one gradient pass", "X.sum() (one read of X)")


@pytest.mark.parametrize("threads", [1, 2])
def test_gd_iteration_fastml_threads(benchmark, gradient_setup, threads):
    X, y, w, objective = gradient_setup
    objective.n_threads = threads
    benchmark.pedantic(objective, args=(w,), rounds=10, iterations=1)
    objective.n_threads = 1
    record(benchmark, "logreg one gradient pass, OpenMP threads", f"fastml n_jobs={threads}"
           if threads > 1 else "fastml")


@pytest.fixture(scope="module", params=[3, 5], ids=lambda k: f"{k}classes")
def multinomial_setup(request, data):
    """One pass of the multinomial objective (K softmax outputs, as a K-class default fit
    makes): labels from K random linear scores, weights at a random point."""
    X = data[0]
    n_classes = request.param
    rng = np.random.default_rng(2)
    y = np.argmax(X @ rng.standard_normal((N_FEATURES, n_classes)) / np.sqrt(N_FEATURES)
                  + rng.gumbel(size=(len(X), n_classes)), axis=1)
    w = rng.standard_normal(n_classes * N_FEATURES) * 0.1
    objective = _Objective(X, y, np.ones(len(y)), OutputLayout(n_classes, "multinomial"),
                           ALPHA, False, 1)
    return X, y, w, objective, n_classes


def test_gd_iteration_multinomial_fastml(benchmark, multinomial_setup, single_thread):
    X, y, w, objective, n_classes = multinomial_setup
    benchmark.pedantic(objective, args=(w,), rounds=10, iterations=1)
    record(benchmark, f"logreg one gradient pass, {n_classes} classes", "fastml")


def test_gd_iteration_multinomial_numpy(benchmark, multinomial_setup, single_thread):
    from scipy.special import softmax
    X, y, w, _, n_classes = multinomial_setup
    W = w.reshape(n_classes, N_FEATURES)
    onehot = np.eye(n_classes)[y]
    benchmark.pedantic(lambda: (softmax(X @ W.T, axis=1) - onehot).T @ X, rounds=10,
                       iterations=1)
    record(benchmark, f"logreg one gradient pass, {n_classes} classes",
           "numpy (softmax(X @ W.T) - Y).T @ X")


def test_gd_iteration_multinomial_bandwidth_floor(benchmark, multinomial_setup,
                                                  single_thread):
    X, _, _, _, n_classes = multinomial_setup
    benchmark.pedantic(X.sum, rounds=10, iterations=1)
    record(benchmark, f"logreg one gradient pass, {n_classes} classes",
           "X.sum() (one read of X)")


def objective_value(model, X, y):
    p = model.predict_proba(X)[np.arange(len(y)), y]
    return -np.mean(np.log(p)) + 0.5 * ALPHA * float(np.sum(model.coef_ ** 2))


def test_lbfgs_fastml(benchmark, data, single_thread):
    X, y, _, _ = data
    model = LogisticRegression(alpha=ALPHA, tol=1e-6, max_iter=500)
    benchmark.pedantic(model.fit, args=(X, y), rounds=2, iterations=1)
    record(benchmark, "logreg L-BFGS to convergence", "fastml",
           objective=objective_value(model, X, y), iterations=model.n_iter_)


def test_lbfgs_sklearn(benchmark, data, single_thread):
    from sklearn.linear_model import LogisticRegression as SkLR
    X, y, _, _ = data
    model = SkLR(C=1.0 / (ALPHA * len(y)), tol=1e-6, max_iter=500)
    benchmark.pedantic(model.fit, args=(X, y), rounds=2, iterations=1)
    record(benchmark, "logreg L-BFGS to convergence", "scikit-learn LogisticRegression",
           objective=objective_value(model, X, y), iterations=int(model.n_iter_[0]))
