"""Property-based tests (hypothesis) over every public estimator, found through
fastml.all_estimators() so a new estimator is covered the moment it is exported.

Each property has a fixed, derandomized budget (BUDGET below), so a CI run is reproducible and
bounded. What is checked, whatever the input (shapes with 0 / 1 rows and 1 column, every dtype,
NaN / inf anywhere, F-order, strided and read-only arrays, odd labels, sample weights and
hyper-parameter extremes):
- the call returns a documented result or raises ValueError / TypeError (NotFittedError is a
  ValueError); never another exception type, a crash or a hang;
- the inputs are unchanged (read-only arrays are passed, so a write fails loudly);
- a refused call leaves a fitted model exactly as it was (every attribute compared);
- a successful fit gives a model whose outputs are sane (labels from classes_, probabilities
  in [0, 1] summing to 1, no NaN) and does not depend on the input's memory layout.
The sparse, chunked-fit and hyper-parameter properties are in test_properties_models.py, the
public functions' in test_properties_functions.py.
"""
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from fastml import NotFittedError
from _robust import ALLOWED, ESTIMATORS, METHODS, fitted, good_data, make, outputs, same, \
    state, takes

# No shrinking by default: a failing property then costs exactly its max_examples runs, so CI
# time stays bounded; FASTML_HYPOTHESIS_SHRINK=1 shrinks a failure to a minimal example when
# debugging it.
PHASES = tuple(Phase) if os.environ.get("FASTML_HYPOTHESIS_SHRINK") \
    else (Phase.explicit, Phase.reuse, Phase.generate)
BUDGET = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                  phases=PHASES, suppress_health_check=list(HealthCheck))

DTYPES = ["f8", "f4", "i8", "i4", "u1", "b1", "O-num", "O-str", "U"]
LAYOUTS = ["C", "F", "strided", "readonly", "readonly-F"]


def lay_out(X, layout):
    """The same values in another memory layout (a strided view, Fortran order, read-only)."""
    if X.ndim != 2:
        return X
    if layout in ("F", "readonly-F"):
        X = np.asfortranarray(X)
    elif layout == "strided":
        wide = np.empty((X.shape[0] * 2, X.shape[1] * 2), dtype=X.dtype)
        wide[::2, ::2] = X
        X = wide[::2, ::2]
    if layout.startswith("readonly"):
        X = X.copy(order="K")
        X.flags.writeable = False
    return X


@st.composite
def matrices(draw, min_rows=0, max_rows=12, max_cols=4, specials=True):
    """A 2-D input of any dtype and layout, possibly with NaN / inf cells."""
    n = draw(st.integers(min_rows, max_rows))
    d = draw(st.integers(1, max_cols))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = draw(st.sampled_from([1.0, 1.0, 1e-300, 1e155, 1e300]))
    values = rng.normal(size=(n, d)) * scale
    if specials and n and draw(st.booleans()):
        k = draw(st.integers(1, n * d))
        cells = rng.choice(n * d, size=k, replace=True)
        values.flat[cells] = rng.choice([np.nan, np.inf, -np.inf], size=k)
    dtype = draw(st.sampled_from(DTYPES))
    finite = np.nan_to_num(values, nan=0, posinf=0, neginf=0)
    if dtype in ("f8", "f4"):
        with np.errstate(over="ignore"):
            X = values.astype(dtype)
    elif dtype in ("i8", "i4"):
        X = np.clip(np.round(finite), -2**31, 2**31 - 1).astype(dtype)
    elif dtype == "u1":
        X = (np.abs(np.round(finite)) % 256).astype(np.uint8)
    elif dtype == "b1":
        X = finite > 0
    elif dtype == "O-num":
        X = values.astype(object)
        if n and draw(st.booleans()):
            X[rng.integers(n), rng.integers(d)] = None
    elif dtype == "O-str":
        X = np.array([[f"v{int(abs(v)) % 4}" for v in row] for row in finite], dtype=object)
        if n:
            X = X.reshape(n, d)
            if draw(st.booleans()):
                X[rng.integers(n), rng.integers(d)] = None
        else:
            X = np.empty((0, d), dtype=object)
    else:
        X = np.array([[f"v{int(abs(v)) % 4}" for v in row] for row in finite], dtype="U3")
        X = X.reshape(n, d)
    return lay_out(X, draw(st.sampled_from(LAYOUTS)))


@st.composite
def targets(draw, est, n):
    """Labels (ints, strings, bools, mixed, one class, many classes) or regression targets."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if est._estimator_type == "regressor":
        y = rng.normal(size=n) * draw(st.sampled_from([1.0, 1e200, 1e-200]))
        if n and draw(st.integers(0, 4)) == 0:
            y[rng.integers(n)] = draw(st.sampled_from([np.nan, np.inf]))
        return y
    if est._estimator_type != "classifier":
        return None
    k = draw(st.sampled_from([1, 2, 2, 3, 7]))
    codes = rng.integers(0, k, size=n)
    style = draw(st.sampled_from(["int", "str", "bool", "mixed", "float", "neg"]))
    if style == "int":
        return codes
    if style == "neg":
        return codes * -1000 - 5
    if style == "str":
        return np.array([f"class {c}" for c in codes], dtype=object)
    if style == "bool":
        return codes % 2 == 0
    if style == "float":
        return codes.astype(float) + 0.5
    return np.array([c if c % 2 else f"{c}" for c in codes], dtype=object)  # ints and strings


@st.composite
def weights(draw, n):
    kind = draw(st.sampled_from(["none", "none", "ones", "zeros", "some-zero", "huge", "tiny",
                                 "negative", "nan", "scalar", "scalar-bad", "wrong-length"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if kind == "none":
        return None
    if kind == "ones":
        return np.ones(n)
    if kind == "zeros":
        return np.zeros(n)
    if kind == "some-zero":
        return (rng.random(n) > 0.5).astype(float)
    if kind == "huge":
        return np.full(n, 1e308)
    if kind == "tiny":
        return np.full(n, 1e-310)
    if kind == "negative":
        w = rng.random(n)
        if n:
            w[0] = -1
        return w
    if kind == "nan":
        w = np.ones(n)
        if n:
            w[-1] = np.nan
        return w
    if kind == "scalar":
        return draw(st.sampled_from([1.0, 2, 0.5]))
    if kind == "scalar-bad":
        return draw(st.sampled_from([0.0, -1.0, np.nan, np.inf]))
    return np.ones(n + 1)


def read_only(a):
    if isinstance(a, np.ndarray):
        a = a.copy(order="K")
        a.flags.writeable = False
    return a


def copy_of(a):
    return a.copy(order="K") if isinstance(a, np.ndarray) else a


def assert_unchanged(before, after, name):
    if isinstance(before, np.ndarray):
        assert after.dtype == before.dtype and after.shape == before.shape, name
        if before.dtype.kind in "fc":
            np.testing.assert_array_equal(after, before, err_msg=f"{name} was modified")
        else:
            assert all(a is b or a == b for a, b in zip(after.ravel().tolist(),
                                                         before.ravel().tolist())), \
                f"{name} was modified"
    else:
        assert after == before or (after != after and before != before), f"{name} was modified"


def has_non_finite(X):
    try:
        F = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        return False  # strings: not numbers at all
    return not np.isfinite(F).all()


def call(fn, *args, **kwargs):
    """fn(...) -> (result, None) or (None, exception); only the allowed types may escape."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args, **kwargs), None
        except ALLOWED as exc:
            assert str(exc), f"{type(exc).__name__} with an empty message"
            return None, exc


def check_outputs(est, X, labels=None):
    """A fitted model's answers on X are well formed (or X is refused with an allowed type)."""
    n = X.shape[0]
    for method in METHODS:
        if not hasattr(est, method):
            continue
        out, err = call(getattr(est, method), X)
        if err is not None:
            continue
        out = np.asarray(out)
        assert out.shape[0] == n, f"{method}: {out.shape} rows for {n}"
        if method == "predict" and est._estimator_type == "classifier":
            classes = list(est.classes_)
            assert all(any(p is c or p == c for c in classes) for p in out.tolist()), \
                f"predict gave labels outside classes_ {classes}"
        if method == "predict_proba":
            assert not np.isnan(out).any(), "predict_proba returned NaN"
            assert ((out >= 0) & (out <= 1)).all()
            np.testing.assert_allclose(out.sum(axis=1), 1.0, atol=1e-9)
        if method in ("predict", "decision_function") and out.dtype.kind == "f" \
                and not has_non_finite(X):
            assert not np.isnan(out).any(), f"{method} returned NaN on finite input"
    if labels is not None and est._estimator_type == "classifier":
        original = list(labels.tolist()) if isinstance(labels, np.ndarray) else list(labels)
        for c in est.classes_.tolist():
            assert any(c == o and type(c) is type(o) or (c == o and not isinstance(c, str)
                                                         and not isinstance(o, str))
                       for o in original), \
                f"class {c!r} ({type(c).__name__}) is not one of the labels given (converted?)"


def no_nan_state(est):
    for name, value in vars(est).items():
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            assert not np.isnan(value).any(), f"fit on finite data left NaN in {name}"


def est_params(only=None):
    """Every estimator (those `only` accepts) as a pytest param named after it."""
    return [pytest.param(cls, id=name) for name, cls in ESTIMATORS
            if only is None or only(cls)]


@pytest.mark.parametrize("cls", est_params())
@BUDGET
@given(data=st.data())
def test_fit_any_input_gives_result_or_clear_error(cls, data):
    est = make(cls)
    X = data.draw(matrices())
    y = data.draw(targets(est, X.shape[0]))
    sw = data.draw(weights(X.shape[0])) if takes(cls, "fit", "sample_weight") else None
    X0, y0, sw0 = copy_of(X), copy_of(y), copy_of(sw)
    y, sw = read_only(y), read_only(sw)
    kwargs = {} if sw is None else {"sample_weight": sw}
    fit, err = call(est.fit, X, y, **kwargs)
    assert_unchanged(X0, X, "X")
    if y0 is not None:
        assert_unchanged(y0, y, "y")
    if sw0 is not None:
        assert_unchanged(sw0, sw, "sample_weight")
    if err is not None:
        return
    assert fit is est
    assert X.shape[0] > 0, "fit accepted 0 rows"
    if not est._allows_nan:
        assert not has_non_finite(X), "fit accepted NaN / inf in X"
    if y is not None and est._estimator_type == "regressor":
        assert np.isfinite(np.asarray(y, dtype=float)).all(), "fit accepted NaN / inf in y"
    if sw is not None:
        w = np.asarray(sw, dtype=float)
        assert np.isfinite(w).all() and (w >= 0).all() and w.sum() > 0, \
            f"fit accepted sample_weight {sw!r}"
    check_outputs(est, X, y)
    if not has_non_finite(X) and (y is None or est._estimator_type != "regressor"):
        no_nan_state(est)


@pytest.mark.parametrize("cls", est_params())
@BUDGET
@given(data=st.data())
def test_layout_and_read_only_do_not_change_the_model(cls, data):
    """Good data in F-order, as a strided view or read-only fits the same model as a C copy."""
    est = make(cls)
    seed = data.draw(st.integers(0, 1000))
    X, y = good_data(est, n=data.draw(st.integers(6, 30)), d=data.draw(st.integers(1, 4)),
                     seed=seed)
    layout = data.draw(st.sampled_from(LAYOUTS[1:]))
    Xl = lay_out(X, layout)
    reference = make(cls).fit(X, y)
    model = est.fit(Xl, read_only(y))
    np.testing.assert_array_equal(Xl, X)
    a, b = outputs(reference, X), outputs(model, Xl)
    for key in a:
        if a[key].dtype.kind == "f":
            np.testing.assert_allclose(b[key], a[key], rtol=1e-9, atol=1e-12, err_msg=key)
        else:
            assert (a[key] == b[key]).all(), key


def cleanly_unfitted(est, X):
    """Every answering method raises NotFittedError (what a fit that failed part-way must
    leave: issue 12), rather than answering from a half-built model or crashing."""
    for method in METHODS:
        if hasattr(est, method):
            try:
                getattr(est, method)(X)
                return False
            except NotFittedError:
                continue
            except Exception as exc:
                raise AssertionError(f"{method} after a refused fit raised "
                                     f"{type(exc).__name__}: {exc} (a half-built model)")
    return True


def bad_inputs(est, X, y):
    """A bad variant of (X, y) for a model fitted on (X, y): the calls below must refuse it."""
    n, d = X.shape
    return st.sampled_from([
        ("nan", lambda: (np.where(np.arange(n * d).reshape(n, d) == 1, np.nan, X), y)),
        ("inf", lambda: (np.where(np.arange(n * d).reshape(n, d) == 2, np.inf, X), y)),
        ("columns", lambda: (X[:, :-1] if d > 1 else np.hstack([X, X]), y)),
        ("empty", lambda: (X[:0], None if y is None else y[:0])),
        ("1-D", lambda: (X[:, 0], y)),
        ("3-D", lambda: (X[None], y)),
        ("strings", lambda: (np.full((n, d), "abc", dtype=object), y)),
        ("complex", lambda: (X + 1j, y)),
        ("y-length", lambda: (X, None if y is None else y[:-1])),
        ("y-nan", lambda: (X, None if y is None else np.where(np.arange(n) == 0, np.nan, y))),
        ("unseen-class", lambda: (X, None if y is None else
                                  np.where(np.arange(n) == 0, 99, y))),
        ("one-class", lambda: (X, None if y is None else np.zeros_like(y))),
    ])


@pytest.mark.parametrize("cls", est_params())
@BUDGET
@given(data=st.data())
def test_refused_call_leaves_model_unchanged(cls, data):
    est, X, y = fitted(cls)
    before = state(est)
    # LogisticRegression(solver="lbfgs") has no partial_fit: hasattr is the truth here
    case, bad = data.draw(bad_inputs(est, X, y))
    Xb, yb = bad()
    methods = [m for m in ("fit", "partial_fit", *METHODS) if hasattr(est, m)]
    method = data.draw(st.sampled_from(methods))
    if method in ("fit", "partial_fit"):
        args = (Xb,) if est._estimator_type == "transformer" else (Xb, yb)
    else:
        args = (Xb,)
    result, err = call(getattr(est, method), *args)
    if method == "fit" and err is not None and cleanly_unfitted(est, X):
        return  # a failed fit may leave the estimator unfitted (issue 12), never half-built
    if err is not None or method not in ("fit", "partial_fit"):
        same(before, state(est), f"{type(est).__name__} after refused {method}({case})")


@pytest.mark.parametrize("cls", est_params(only=lambda c: hasattr(c, "partial_fit")))
@BUDGET
@given(data=st.data())
def test_refused_partial_fit_chunk_leaves_model_unchanged(cls, data):
    """After a good chunk, a chunk refused for bad values (NaN, unseen class, wrong shape,
    bad weights) must not leave a trace: the next good chunk gives the same model as if the
    bad one had never been offered."""
    est = make(cls, online=True)
    X, y = good_data(est, n=30)
    first = {"classes": np.unique(y)} if est._estimator_type == "classifier" else {}
    est.partial_fit(X[:15], y[:15], **first)
    before = state(est)
    case, bad = data.draw(bad_inputs(est, X[15:], y[15:]))
    Xb, yb = bad()
    kwargs = {}
    if takes(cls, "partial_fit", "sample_weight") and data.draw(st.booleans()):
        kwargs["sample_weight"] = data.draw(st.sampled_from([-1.0, np.nan, 0.0]))
        Xb, yb = X[15:], y[15:]
        case = f"sample_weight={kwargs['sample_weight']}"
    _, err = call(est.partial_fit, Xb, yb, **kwargs)
    if err is not None:
        same(before, state(est), f"{type(est).__name__} after refused partial_fit({case})")
