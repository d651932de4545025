"""Newton-Raphson logistic regression (issue 14 part 1) on 1M x 20 (FASTML_BENCH_ROWS
overrides the rows) next to fastml's L-BFGS and scikit-learn's newton-cholesky, all to the
same tight optimum (alpha = 1e-4 on the mean loss = scikit-learn's C = 1 / (alpha n)); and on
W1 (bench/workloads.py, 800k x 100) at the default tol, one thread and n_jobs=2 (issue 33:
<= 1.0 s on one thread, >= 1.6x with two). The quality columns give the objective reached
and the passes over X each solver made (a pass of the batch kernel, with or without the
Hessian, is one; so are a probabilities pass and a weighted Gram product of the CSR path)."""
import os

import numpy as np
import pytest

from conftest import record
from fastml import LogisticRegression
from fastml.linear_model import _newton
from workloads import w1

N_ROWS = int(os.environ.get("FASTML_BENCH_ROWS", 1_000_000))
ALPHA = 1e-4
ROUNDS = 3
GROUP = f"logistic regression to 1e-10, {N_ROWS} x 20"


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N_ROWS, 20))
    w = rng.normal(size=20) * 0.5
    y = (rng.random(N_ROWS) < 1.0 / (1.0 + np.exp(-(X @ w - 0.3)))).astype(np.int64)
    return X, y


def objective(model, X, y):
    p = np.clip(model.predict_proba(X)[:, 1], 1e-300, 1 - 1e-16)
    loss = -np.mean(y * np.log(p) + (1 - y) * np.log1p(-p))
    return float(loss + 0.5 * ALPHA * np.sum(np.asarray(model.coef_, float) ** 2))


class PassCounter:
    """Counts passes over X: objective evaluations (the batch kernel), margins and Hessian
    blocks (Newton)."""

    def __init__(self, monkeypatch):
        from fastml.linear_model import _logistic
        self.passes = 0
        for owner, name in ((_logistic._batch, "loss_grad"), (_newton, "weighted_gram"),
                            (_newton.NewtonProblem, "probabilities")):
            original = getattr(owner, name)
            monkeypatch.setattr(owner, name, self._counted(original))

    def _counted(self, fn):
        def counted(*args, **kwargs):
            self.passes += 1
            return fn(*args, **kwargs)
        return counted


@pytest.mark.parametrize("solver", ["newton", "lbfgs"])
def test_fastml(benchmark, data, solver, single_thread, monkeypatch):
    X, y = data
    counter = PassCounter(monkeypatch)
    model = LogisticRegression(solver=solver, alpha=ALPHA, tol=1e-10, max_iter=1000)
    benchmark.pedantic(model.fit, args=(X, y), rounds=ROUNDS, iterations=1)
    record(benchmark, GROUP, "fastml" if solver == "newton" else "fastml lbfgs",
           objective=objective(model, X, y), passes_over_X=counter.passes / ROUNDS,
           iterations=model.n_iter_)


def test_sklearn_newton_cholesky(benchmark, data, single_thread):
    from sklearn.linear_model import LogisticRegression as SkLogisticRegression
    X, y = data
    model = SkLogisticRegression(solver="newton-cholesky", C=1.0 / (ALPHA * len(y)), tol=1e-10,
                                 max_iter=1000)
    benchmark.pedantic(model.fit, args=(X, y), rounds=ROUNDS, iterations=1)
    record(benchmark, GROUP, "scikit-learn newton-cholesky", objective=objective(model, X, y),
           iterations=int(np.max(model.n_iter_)))


W1_GROUP = "logistic regression on W1 (800k x 100), default tol"


@pytest.fixture(scope="module")
def w1_data():
    return w1()


@pytest.mark.parametrize("solver, n_jobs", [("newton", 1), ("newton", 2), ("lbfgs", 1)])
def test_w1_fastml(benchmark, w1_data, solver, n_jobs, monkeypatch):
    from threadpoolctl import threadpool_limits
    X, y = w1_data
    counter = PassCounter(monkeypatch)
    model = LogisticRegression(solver=solver, n_jobs=n_jobs)
    with threadpool_limits(limits=1, user_api="blas"):
        benchmark.pedantic(model.fit, args=(X, y), rounds=ROUNDS, iterations=1)
    who = "fastml" if (solver, n_jobs) == ("newton", 1) else f"fastml {solver} n_jobs={n_jobs}"
    record(benchmark, W1_GROUP, who, passes_over_X=counter.passes / ROUNDS,
           iterations=model.n_iter_)


def test_w1_sklearn_newton_cholesky(benchmark, w1_data, single_thread):
    from sklearn.linear_model import LogisticRegression as SkLogisticRegression
    X, y = w1_data
    model = SkLogisticRegression(solver="newton-cholesky", C=1.0 / (ALPHA * len(y)))
    benchmark.pedantic(model.fit, args=(X, y), rounds=ROUNDS, iterations=1)
    record(benchmark, W1_GROUP, "scikit-learn newton-cholesky",
           iterations=int(np.max(model.n_iter_)))
