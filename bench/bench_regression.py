"""Linear / ridge / polynomial regression next to scikit-learn and numpy. Sizes from issue 6:
dense 1,000,000 x 100 float64 (FASTML_BENCH_ROWS overrides the row count). Each closed form
runs twice: single-threaded (threadpoolctl limits BLAS and OpenMP to one thread) and with the
default threads. numpy's peer is the bare normal equation: X.T @ X (numpy's syrk), X.T @ y and
solve, without an intercept, so fastml runs the same problem there (fit_intercept=False)."""
import os
from contextlib import nullcontext

import numpy as np
import pytest

from conftest import record
from fastml import LinearRegression, PolynomialFeatures, Ridge

N_ROWS = int(os.environ.get("FASTML_BENCH_ROWS", 1_000_000))
N_FEATURES = 100
THREADS = {"1 thread": 1, "default threads": None}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N_ROWS, N_FEATURES)) + rng.uniform(-1, 1, N_FEATURES)
    y = X @ rng.standard_normal(N_FEATURES) + 3.0 + rng.standard_normal(N_ROWS)
    return X, y


def limits(threads):
    from threadpoolctl import threadpool_limits
    return threadpool_limits(limits=1) if threads == 1 else nullcontext()


def rmse(pred, y):
    return float(np.sqrt(np.mean((pred - y) ** 2)))


@pytest.fixture(scope="module")
def sklearn_rmse(data):
    from sklearn.linear_model import LinearRegression as SkLinearRegression
    X, y = data
    return {True: rmse(SkLinearRegression().fit(X, y).predict(X), y),
            False: rmse(SkLinearRegression(fit_intercept=False).fit(X, y).predict(X), y)}


@pytest.mark.parametrize("mode", THREADS)
def test_normal_fastml(benchmark, data, sklearn_rmse, mode):
    X, y = data
    model = LinearRegression()
    with limits(THREADS[mode]):
        benchmark.pedantic(model.fit, args=(X, y), rounds=5, iterations=1, warmup_rounds=1)
    quality = rmse(model.predict(X), y)
    record(benchmark, f"linreg 1M x 100, intercept, {mode}", "fastml", rmse=quality)
    assert quality == pytest.approx(sklearn_rmse[True], rel=1e-9)


@pytest.mark.parametrize("mode", THREADS)
def test_normal_sklearn(benchmark, data, mode):
    from sklearn.linear_model import LinearRegression as SkLinearRegression
    X, y = data
    model = SkLinearRegression()
    with limits(THREADS[mode]):
        benchmark.pedantic(model.fit, args=(X, y), rounds=2, iterations=1)
    record(benchmark, f"linreg 1M x 100, intercept, {mode}", "scikit-learn LinearRegression",
           rmse=rmse(model.predict(X), y))


@pytest.mark.parametrize("mode", THREADS)
def test_normal_no_intercept_fastml(benchmark, data, sklearn_rmse, mode):
    X, y = data
    model = LinearRegression(fit_intercept=False)
    with limits(THREADS[mode]):
        benchmark.pedantic(model.fit, args=(X, y), rounds=5, iterations=1, warmup_rounds=1)
    quality = rmse(model.predict(X), y)
    record(benchmark, f"normal equation 1M x 100, no intercept, {mode}", "fastml", rmse=quality)
    assert quality == pytest.approx(sklearn_rmse[False], rel=1e-9)


@pytest.mark.parametrize("mode", THREADS)
def test_normal_no_intercept_numpy(benchmark, data, sklearn_rmse, mode):
    X, y = data

    def numpy_normal_equation():
        return np.linalg.solve(X.T @ X, X.T @ y)

    with limits(THREADS[mode]):
        w = benchmark.pedantic(numpy_normal_equation, rounds=5, iterations=1, warmup_rounds=1)
    record(benchmark, f"normal equation 1M x 100, no intercept, {mode}",
           "numpy X.T @ X + solve", rmse=rmse(X @ w, y))


def test_ridge_fastml(benchmark, data):
    X, y = data
    model = Ridge(alpha=1e-3 * len(X))   # scikit-learn's alpha (issue 15): the same as below
    with limits(1):
        benchmark.pedantic(model.fit, args=(X, y), rounds=5, iterations=1, warmup_rounds=1)
    record(benchmark, "ridge 1M x 100, 1 thread", "fastml", rmse=rmse(model.predict(X), y))


def test_ridge_sklearn(benchmark, data):
    from sklearn.linear_model import Ridge as SkRidge
    X, y = data
    model = SkRidge(alpha=1e-3 * len(X), solver="cholesky")  # the same alpha, the same model
    with limits(1):
        benchmark.pedantic(model.fit, args=(X, y), rounds=2, iterations=1)
    record(benchmark, "ridge 1M x 100, 1 thread", "scikit-learn Ridge(cholesky)",
           rmse=rmse(model.predict(X), y))


@pytest.fixture(scope="module")
def small(data):
    X, _ = data
    return np.ascontiguousarray(X[: N_ROWS // 4, :10])


def test_poly_features_fastml(benchmark, small):
    pf = PolynomialFeatures(3).fit(small)
    with limits(1):
        out = benchmark.pedantic(pf.transform, args=(small,), rounds=3, iterations=1)
    record(benchmark, "polynomial features 250k x 10, degree 3, 1 thread", "fastml",
           columns=out.shape[1])


def test_poly_features_sklearn(benchmark, small):
    from sklearn.preprocessing import PolynomialFeatures as SkPolynomialFeatures
    pf = SkPolynomialFeatures(degree=3).fit(small)
    with limits(1):
        out = benchmark.pedantic(pf.transform, args=(small,), rounds=3, iterations=1)
    record(benchmark, "polynomial features 250k x 10, degree 3, 1 thread",
           "scikit-learn PolynomialFeatures", columns=out.shape[1])
