"""Model state of the linear classifiers under failure (issue 12): a refused partial_fit chunk
leaves the model exactly as it was, a failed fit leaves it unfitted, a diverging SGD step
names its epoch and row, and partial_fit refuses a different `classes`."""
import pickle

import numpy as np
import pytest

from fastml.exceptions import DivergenceError, NotFittedError
from fastml.linear_model import (KernelPerceptron, LinearSVM, LogisticRegression, Perceptron,
                                 VotedPerceptron)

ONLINE = [lambda: LogisticRegression(solver="sgd", random_state=0),
          lambda: LogisticRegression(solver="minibatch", batch_size=8, random_state=0),
          lambda: Perceptron(random_state=0), lambda: LinearSVM(random_state=0),
          lambda: VotedPerceptron(random_state=0), lambda: KernelPerceptron(random_state=0)]


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    return X, (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)


def _snapshot(obj):
    """A canonical picture of everything an estimator holds (arrays by dtype, shape and
    bytes; objects by their attributes), to compare states for exact equality."""
    if isinstance(obj, np.ndarray):
        return ("array", obj.dtype.str, obj.shape, obj.tobytes())
    if isinstance(obj, np.random.Generator):
        return ("rng", repr(obj.bit_generator.state))
    if isinstance(obj, dict):
        return ("dict", tuple((k, _snapshot(v)) for k, v in obj.items()))
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, tuple(_snapshot(v) for v in obj))
    if hasattr(obj, "__dict__") and not callable(obj):
        return (type(obj).__name__, _snapshot(vars(obj)))
    return pickle.dumps(obj)


@pytest.mark.parametrize("make", ONLINE)
def test_partial_fit_with_other_classes_raises_and_changes_nothing(make):
    X, y = _data()
    est = make().partial_fit(X, y, classes=[0, 1])
    before = _snapshot(est)
    with pytest.raises(ValueError, match="differ from the classes"):
        est.partial_fit(X, y, classes=[0, 1, 2])
    assert _snapshot(est) == before
    est.partial_fit(X, y, classes=[1, 0])          # the same classes, in any order: fine


@pytest.mark.parametrize("make", ONLINE)
def test_a_refused_first_chunk_leaves_the_estimator_unfitted(make):
    X, y = _data()
    est = make()
    with pytest.raises(ValueError):
        est.partial_fit(X, np.where(y == 1, 7, 0), classes=[0, 1])   # label 7 is unknown
    assert not hasattr(est, "classes_")
    with pytest.raises(NotFittedError):
        est.predict(X)
    est.partial_fit(X, y, classes=[0, 1])          # and it can start again
    assert est.predict(X).shape == (len(X),)


@pytest.mark.parametrize("make", [
    lambda: LogisticRegression(solver="sgd", learning_rate="constant", eta0=1.0, shuffle=False),
    lambda: LinearSVM(learning_rate="constant", eta0=1.0, alpha=1e-3, shuffle=False)])
def test_a_diverging_chunk_is_refused_and_the_model_kept(make):
    """One chunk with huge values once poisoned the weights for good while predict served a
    stale coef_; now the step raises, naming the epoch and row, and nothing changes."""
    X, y = _data()
    est = make().partial_fit(X, y, classes=[0, 1])
    before, predicted = _snapshot(est), est.predict(X)
    bad, y_bad = X.copy(), y.copy()
    # Rows 7 and 8 are the same huge row, wrongly classified: row 7's step makes w ~ 1e200,
    # row 8's margin overflows.
    bad[7] = bad[8] = -1e200 * np.sign(est.coef_[0])
    y_bad[7] = y_bad[8] = 1
    with pytest.raises(FloatingPointError, match=r"epoch 2 at row 8.*eta0.*scale") as info:
        est.partial_fit(bad, y_bad)
    # a DivergenceError: the ValueError every bad-data error is, and still a FloatingPointError
    assert isinstance(info.value, ValueError) and isinstance(info.value, DivergenceError)
    assert _snapshot(est) == before
    assert np.isfinite(est._engine.W).all()
    np.testing.assert_array_equal(est.predict(X), predicted)
    est.partial_fit(X, y)                          # learning goes on from the finite state
    assert np.isfinite(est.coef_).all()


def test_a_failed_fit_leaves_the_estimator_unfitted():
    X, y = _data()
    est = LogisticRegression(solver="sgd", learning_rate="constant", eta0=1.0,
                             random_state=0).fit(X, y)
    bad, y_bad = X.copy(), y.copy()
    bad[3] = bad[4] = -1e200 * np.sign(est.coef_[0])
    y_bad[3] = y_bad[4] = 1
    est.set_params(shuffle=False)
    with pytest.raises(FloatingPointError, match="epoch 1 at row 4"):
        est.fit(bad, y_bad)
    assert not hasattr(est, "coef_") and not hasattr(est, "_engine")
    with pytest.raises(NotFittedError):
        est.predict(X)
    assert est.get_params()["eta0"] == 1.0


def test_a_kernel_that_fails_mid_fit_leaves_the_kernel_perceptron_unfitted():
    X, y = _data()
    calls = []

    def kernel(A, B):
        calls.append(1)
        if len(calls) > 3:
            raise RuntimeError("the kernel broke")
        return A @ B.T

    est = KernelPerceptron(kernel=kernel, max_iter=5, random_state=0)
    with pytest.raises(RuntimeError):
        est.fit(X, y)
    assert not hasattr(est, "support_vectors_") and not hasattr(est, "_buffer")
    with pytest.raises(NotFittedError):
        est.predict(X)


@pytest.mark.parametrize("make, name", [
    (lambda v: KernelPerceptron(kernel="poly", degree=v), "degree"),
    (lambda v: KernelPerceptron(budget=v), "budget"),
    (lambda v: KernelPerceptron(n_jobs=v), "n_jobs"),
    (lambda v: LogisticRegression(solver="gd", n_jobs=v), "n_jobs"),
    (lambda v: LinearSVM(solver="subgradient", n_jobs=v), "n_jobs")])
@pytest.mark.parametrize("value", [2**31, 2**63, 10**30])
def test_integers_too_large_for_c_name_the_parameter(make, name, value):
    """Integer parameters that reach C raise ValueError naming them, not OverflowError."""
    X, y = _data()
    if name == "budget" and value < 2**63:
        return                      # a budget of 2**31 fits an index: valid
    with pytest.raises(ValueError, match=name):
        make(value).fit(X, y)
