"""Model state of the linear models: under failure (issue 12) a refused partial_fit chunk
leaves the model exactly as it was, a failed fit leaves it unfitted, a diverging SGD step
names its epoch and row, and partial_fit refuses a different `classes`; and a refit, with any
solver, starts from nothing (an outside audit: refits kept an earlier solver's state)."""
import pickle
import warnings

import numpy as np
import pytest

from fastml.exceptions import DivergenceError, NotFittedError
from fastml.linear_model import (KernelPerceptron, LinearRegression, LinearStats, LinearSVM,
                                 LogisticRegression, Perceptron, PolynomialFeatures,
                                 PolynomialRegression, Ridge, VotedPerceptron)

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


# ---------------------------------------------------------------- a refit starts from nothing
# (an outside audit: a batch refit after an SGD fit kept `_engine`, so fastml.load refused the
# saved model; an SGD refit of LinearRegression kept `stats_` / `rank_` of an earlier
# solver="normal" fit, which a later partial_fit(solver="normal") merged into)

def _two_problems():
    """Two unrelated problems of different widths and class counts: anything a refit keeps
    from the first shows up as a wrong shape or a wrong number."""
    rng = np.random.default_rng(5)
    XA, XB = rng.normal(size=(50, 3)), rng.normal(size=(60, 5))
    return (XA, rng.integers(0, 3, 50)), (XB, (XB[:, 0] + XB[:, 1] > 0).astype(int))


def _regression_problems():
    (XA, _), (XB, _) = _two_problems()
    return (XA, XA @ [100.0, 100.0, 100.0]), (XB, XB @ [1.0, 2.0, 3.0, 4.0, 5.0] + 1.0)


SOLVERS = {
    LogisticRegression: ["lbfgs", "gd", "newton", "sgd", "minibatch"],
    LinearSVM: ["sgd", "subgradient"],
    LinearRegression: ["normal", "lstsq", "sgd"],
    Ridge: ["normal", "lstsq", "sgd"],
    PolynomialRegression: ["normal", "lstsq", "sgd"],
}
REFITS = [(cls, first, then) for cls, solvers in SOLVERS.items()
          for first in solvers for then in solvers]


def _make(cls, solver):
    extra = dict(max_iter=5, tol=None) if cls is not PolynomialRegression else dict(max_iter=5)
    return cls(solver=solver, random_state=0, **extra)


def _partial_fit(est, X, y, classes):
    try:
        est.partial_fit
    except AttributeError:
        return est
    return est.partial_fit(X, y, classes=classes) if classes is not None \
        else est.partial_fit(X, y)


@pytest.mark.parametrize("cls, first, then", REFITS,
                         ids=[f"{c.__name__}-{a}-{b}" for c, a, b in REFITS])
def test_a_refit_with_any_solver_equals_a_fresh_fit(cls, first, then, tmp_path):
    """fit (and partial_fit) with one solver on one problem, then fit with another solver on
    another: everything the estimator holds equals a new estimator's fit on the second
    problem (scikit-learn's semantics; no estimator here has warm_start), and the model
    saves and loads."""
    import fastml
    classifier = cls in (LogisticRegression, LinearSVM)
    (XA, yA), (XB, yB) = _two_problems() if classifier else _regression_problems()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # max_iter=5: convergence warnings
        est = _make(cls, first).fit(XA, yA)
        _partial_fit(est, XA, yA, np.unique(yA) if classifier else None)
        est.set_params(solver=then).fit(XB, yB)
        fresh = _make(cls, then).fit(XB, yB)
    assert _snapshot(est) == _snapshot(fresh)
    fastml.save(est, tmp_path / "model.fml")
    loaded = fastml.load(tmp_path / "model.fml")
    np.testing.assert_array_equal(loaded.predict(XB), fresh.predict(XB))


def test_audit_batch_refit_after_sgd_saves_loads_and_partial_fit_starts_over(tmp_path):
    """The audit's case: SGD on 3 features and 3 classes, lbfgs on 5 and 2: the saved file
    loads (it used to be refused: "the SGD state's weights have shape (3, 3)"), and back on
    SGD, partial_fit starts over as a first call does (it raised a shape error)."""
    import fastml
    (XA, yA), (XB, yB) = _two_problems()
    m = LogisticRegression(solver="sgd", random_state=0).fit(XA, yA)
    m.set_params(solver="lbfgs").fit(XB, yB)
    assert not hasattr(m, "_engine") and not hasattr(m, "progressive_loss_")
    fastml.save(m, tmp_path / "m.fml")
    np.testing.assert_array_equal(fastml.load(tmp_path / "m.fml").coef_, m.coef_)
    m.set_params(solver="sgd").partial_fit(XB, yB, classes=[0, 1])
    fresh = LogisticRegression(solver="sgd", random_state=0).partial_fit(XB, yB, classes=[0, 1])
    assert _snapshot(m) == _snapshot(fresh)


def test_audit_sgd_refit_forgets_the_normal_statistics():
    """The audit's case: a solver="normal" fit on old data, an SGD refit on new data, then
    partial_fit(solver="normal") on the new data again: the model is least squares on the
    new data (numpy.linalg.lstsq: [1, 2, 3]); the old data used to leak in ([81.6 71.1
    73.8]) through the kept stats_."""
    rng = np.random.default_rng(0)
    XA, XC = rng.normal(size=(40, 3)), rng.normal(size=(10, 3))
    m = LinearRegression().fit(XA, XA @ [100.0, 100, 100])
    m.set_params(solver="sgd", random_state=0).fit(XC, XC @ [1.0, 2, 3])
    assert not hasattr(m, "stats_") and not hasattr(m, "rank_")
    m.set_params(solver="normal").partial_fit(XC, XC @ [1.0, 2, 3])
    Xc = np.c_[XC, np.ones(len(XC))]
    expected = np.linalg.lstsq(Xc, XC @ [1.0, 2, 3], rcond=None)[0]
    np.testing.assert_allclose(m.coef_, expected[:3], rtol=1e-10)
    np.testing.assert_allclose(m.coef_, [1.0, 2.0, 3.0], rtol=1e-10)
    assert m.stats_.n_samples == len(XC)


def test_normal_partial_fit_after_an_lstsq_fit_starts_over():
    """An lstsq fit keeps no statistics: partial_fit(solver="normal") starts from the chunk
    (it raised AttributeError: no stats_)."""
    (_, _), (X, y) = _regression_problems()
    m = LinearRegression(solver="lstsq").fit(X[:30], y[:30] * 7)
    m.set_params(solver="normal").partial_fit(X, y)
    np.testing.assert_allclose(m.coef_, [1.0, 2.0, 3.0, 4.0, 5.0], rtol=1e-10)
    assert m.stats_.n_samples == len(X)


def test_fit_stats_forgets_an_earlier_sgd_fit():
    (_, _), (X, y) = _regression_problems()
    m = Ridge(alpha=1.0, solver="sgd", max_iter=3, tol=None, random_state=0).fit(X, y)
    m.set_params(solver="normal").fit_stats(LinearStats.from_data(X, y))
    assert not hasattr(m, "_engine") and not hasattr(m, "loss_curve_")
    np.testing.assert_allclose(m.coef_, Ridge(alpha=1.0).fit(X, y).coef_, rtol=1e-12)


@pytest.mark.parametrize("make", ONLINE + [
    lambda: LogisticRegression(), lambda: LogisticRegression(solver="gd", max_iter=5),
    lambda: LogisticRegression(solver="newton"), lambda: LogisticRegression(solver="sgd",
                                                                            early_stopping=True),
    lambda: LinearSVM(solver="subgradient", max_iter=5),
    lambda: LinearRegression(), lambda: LinearRegression(solver="sgd", max_iter=3),
    lambda: Ridge(solver="lstsq"), lambda: PolynomialRegression(solver="sgd", max_iter=3),
    lambda: PolynomialFeatures()])
def test_forget_fit_knows_every_private_state(make):
    """forget_fit drops the fitted attributes (names ending in "_") and the private state
    listed in fastml._base.FIT_STATE, nothing else: after fit and partial_fit, every attribute
    an estimator holds must be a parameter, a fitted attribute or in that list (a new
    private state must be listed there, or a refit would keep it)."""
    from fastml._base import FIT_STATE
    X, y = _data()
    est = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
        if hasattr(est, "partial_fit") and not isinstance(est, PolynomialFeatures):
            _partial_fit(est, X, y, [0, 1] if hasattr(est, "classes_") else None)
    params = set(est.get_params(deep=False))
    left = {name for name in vars(est) if name not in params and not name.endswith("_")}
    assert left <= set(FIT_STATE), left - set(FIT_STATE)


def test_a_refit_keeps_what_is_not_its_own():
    """Attributes fastml does not own stay through a refit: scikit-learn's set_output
    configuration, and what a Pipeline puts on its steps around their fit (its callback
    context, which it deletes afterwards: a refit that dropped it broke Pipeline.fit)."""
    X, y = _data()
    features = PolynomialFeatures().set_output(transform="default").fit(X)
    features.fit(X)
    assert features._sklearn_output_config == {"transform": "default"}
    model = LinearRegression().fit(X, y)
    model._parent_callback_ctx = context = object()
    model.set_params(solver="sgd", max_iter=2, tol=None).fit(X, y)
    assert model._parent_callback_ctx is context
    pipeline = pytest.importorskip("sklearn.pipeline")
    fitted = pipeline.make_pipeline(PolynomialFeatures(), Ridge()).fit(X, y)
    np.testing.assert_allclose(fitted.predict(X), Ridge().fit(
        PolynomialFeatures().fit_transform(X), y).predict(PolynomialFeatures().fit_transform(X)))


@pytest.mark.parametrize("make", [
    lambda: LinearRegression(), lambda: Ridge(alpha=2.0),
    lambda: LinearRegression(solver="sgd", random_state=0),
    lambda: Ridge(alpha=2.0, solver="sgd", random_state=0)])
def test_a_refused_regression_chunk_changes_nothing(make):
    """partial_fit of the regressors is all or nothing (all_or_nothing(fitting=False), as
    for the classifiers): a chunk with NaN, or a chunk that would start over after a model
    of another solver, leaves the model as it was."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = X @ [1.0, -2.0, 0.5]
    est = make().partial_fit(X, y)
    before, predicted = _snapshot(est), est.predict(X)
    bad = X.copy()
    bad[5, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.partial_fit(bad, y)
    assert _snapshot(est) == before
    np.testing.assert_array_equal(est.predict(X), predicted)
    other = "sgd" if est.solver == "normal" else "normal"
    est.set_params(solver=other)                  # partial_fit would start over here
    with pytest.raises(ValueError, match="NaN"):
        est.partial_fit(bad, y)
    est.set_params(solver="sgd" if other == "normal" else "normal")
    assert _snapshot(est) == before
