"""The shared SGD loop (fastml/linear_model/_sgd_fast.pyx through _sgd.py): properties every
linear online learner inherits."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from fastml.linear_model._sgd import LOSSES, SCHEDULES, SGDEngine, run_epochs

pytestmark = pytest.mark.kernel


def _data(n=120, d=7, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.5] = 0.0          # half zeros: CSR rows really are sparse
    w = rng.normal(size=d)
    labels = (X @ w + 0.3 * rng.normal(size=n) > 0).astype(np.float64)
    targets = (X @ w).reshape(-1, 1)
    return X, labels.reshape(-1, 1), targets


def _fit(X, Y, loss, schedule, batch_size, average, seed=0):
    engine = SGDEngine(1, X.shape[1], np.float64, loss=loss, learning_rate=schedule,
                       eta0=0.05, alpha=1e-2, decay=0.5, batch_size=batch_size,
                       average=average, label_offset=1 if loss != "squared" else 0,
                       reference=loss == "log")
    run_epochs(engine, X, Y, np.ones(X.shape[0]), max_iter=4, tol=None, n_iter_no_change=5,
               shuffle=True, rng=np.random.default_rng(seed))
    return engine.coef(), engine.intercept()


@pytest.mark.parametrize("loss, schedule", list(itertools.product(LOSSES, SCHEDULES)))
def test_dense_and_csr_give_the_same_model(loss, schedule):
    """Every schedule and loss: CSR rows and the same rows dense agree to 1e-12 (AdaGrad's L2
    term once reached the coordinates a dense row does not touch, 111% apart)."""
    X, labels, targets = _data()
    Y = targets if loss == "squared" else labels
    for batch_size, average in ((1, False), (1, True), (5, False), (5, 3)):
        dense = _fit(X, Y, loss, schedule, batch_size, average)
        csr = _fit(sp.csr_matrix(X), Y, loss, schedule, batch_size, average)
        for a, b in zip(dense, csr):
            scale = max(1.0, float(np.abs(a).max()))
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * scale,
                                       err_msg=f"batch_size={batch_size} average={average}")


def test_logistic_adagrad_dense_equals_csr():
    """The reported case: LogisticRegression's SGD default (AdaGrad) on data with zeros."""
    from fastml.linear_model import LogisticRegression
    X, labels, _ = _data(n=200, d=10, seed=3)
    y = labels.ravel()
    a = LogisticRegression(solver="sgd", max_iter=5, tol=None, random_state=0).fit(X, y)
    b = LogisticRegression(solver="sgd", max_iter=5, tol=None, random_state=0).fit(
        sp.csr_matrix(X), y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=0, atol=1e-12)


@pytest.mark.parametrize("batch_size", [40, 10**9, 2**40, 2**80])
def test_batch_size_beyond_the_rows_is_the_rows(batch_size):
    """A batch never holds more rows than there are: batch_size > n is clamped to n (it once
    allocated batch_size-sized buffers: 8 GB for 40 rows; 2**40 overflowed C's int)."""
    from fastml.linear_model import LogisticRegression
    X, labels, _ = _data(n=40, d=5, seed=4)
    y = labels.ravel()
    ref = LogisticRegression(solver="minibatch", batch_size=40, max_iter=3, tol=None,
                             random_state=0).fit(X, y)
    big = LogisticRegression(solver="minibatch", batch_size=batch_size, max_iter=3, tol=None,
                             random_state=0).fit(X, y)
    np.testing.assert_array_equal(big.coef_, ref.coef_)
    chunked = LogisticRegression(solver="minibatch", batch_size=batch_size, random_state=0)
    chunked.partial_fit(X[:25], y[:25], classes=[0, 1]).partial_fit(X[25:], y[25:])
    assert np.isfinite(chunked.coef_).all()
