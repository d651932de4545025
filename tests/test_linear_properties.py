"""Property tests (hypothesis, fixed budgets) for the linear classifiers: dense equals CSR,
inputs are never modified, a refused partial_fit changes nothing."""
import numpy as np
import pytest
import scipy.sparse as sp

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st              # noqa: E402
from hypothesis.extra import numpy as hnp                             # noqa: E402

from fastml.linear_model import (LinearSVM, LogisticRegression, Perceptron,   # noqa: E402
                                 VotedPerceptron)

SCHEDULES = ["constant", "inverse", "decay", "optimal", "adagrad"]
BUDGET = settings(max_examples=25, deadline=None, derandomize=True)


@st.composite
def problems(draw):
    n = draw(st.integers(4, 30))
    d = draw(st.integers(1, 6))
    X = draw(hnp.arrays(np.float64, (n, d), elements=st.floats(-5, 5, width=64)))
    X[draw(hnp.arrays(np.bool_, (n, d)))] = 0.0        # exact zeros: CSR really is sparse
    y = draw(hnp.arrays(np.int64, n, elements=st.integers(0, 2)))
    y[:2] = [0, 1]                                      # at least two classes
    return X, y


def _estimators(schedule, batch_size):
    return [LogisticRegression(solver="minibatch", batch_size=batch_size, max_iter=3, tol=None,
                               learning_rate=schedule, alpha=1e-2, random_state=0),
            LinearSVM(learning_rate=schedule, max_iter=3, tol=None, alpha=1e-2,
                      random_state=0),
            Perceptron(max_iter=3, tol=None, random_state=0, average=True)]


@BUDGET
@given(problems(), st.sampled_from(SCHEDULES), st.integers(1, 40))
def test_dense_equals_csr(problem, schedule, batch_size):
    X, y = problem
    for dense, csr in zip(_estimators(schedule, batch_size), _estimators(schedule, batch_size)):
        dense.fit(X, y)
        csr.fit(sp.csr_matrix(X), y)
        scale = max(1.0, float(np.abs(dense.coef_).max()))
        np.testing.assert_allclose(csr.coef_, dense.coef_, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(csr.intercept_, dense.intercept_, rtol=0, atol=1e-12 * scale)


@BUDGET
@given(problems(), st.sampled_from(SCHEDULES))
def test_inputs_unchanged_and_refused_chunks_change_nothing(problem, schedule):
    X, y = problem
    X_before, y_before = X.copy(), y.copy()
    for est in _estimators(schedule, 4) + [VotedPerceptron(max_iter=2, random_state=0)]:
        est.partial_fit(X, y, classes=[0, 1, 2])
        assert np.array_equal(X, X_before) and np.array_equal(y, y_before)
        coef = {k: np.copy(v) for k, v in vars(est).items() if isinstance(v, np.ndarray)}
        bad = X.copy()
        bad[0, 0] = np.nan
        for args in ((bad, y), (X, np.full_like(y, 9)), (X[:, :0], y)):
            with pytest.raises(ValueError):
                est.partial_fit(*args)
        for k, v in coef.items():
            assert np.array_equal(getattr(est, k), v, equal_nan=True)
