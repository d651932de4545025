"""Property-based tests, part 3: the public functions (fastml.info, fastml.metrics,
fastml.losses) and PolynomialFeatures' output width. Whatever the input, a function returns a
value inside its documented range (entropy in [0, log2 k], 0 <= information gain <= H(y),
accuracy in [0, 1], p-values in [0, 1], rmse >= 0, no NaN from finite input) or raises
ValueError / TypeError, and never modifies its input."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fastml
from fastml import info, losses, metrics
from test_properties import BUDGET, assert_unchanged, call, copy_of, matrices, read_only

FUNCS = settings(BUDGET, max_examples=40)


@st.composite
def vectors(draw, n=None, kinds=("int", "str", "float", "bool", "object", "nan", "huge")):
    n = draw(st.integers(0, 12)) if n is None else n
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(kinds))
    if kind == "int":
        return rng.integers(-3, 3, size=n)
    if kind == "str":
        return np.array([f"c{v}" for v in rng.integers(0, 3, size=n)], dtype=object)
    if kind == "bool":
        return rng.random(n) > 0.5
    if kind == "object":
        return np.array([[1, "a", None, 2.5][v] for v in rng.integers(0, 4, size=n)],
                        dtype=object)
    v = rng.normal(size=n)
    if kind == "nan" and n:
        v[rng.integers(n)] = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
    if kind == "huge":
        v *= draw(st.sampled_from([1e300, 1e-300, 1e155]))
    return v


def finite_numbers(*arrays):
    try:
        return all(np.isfinite(np.asarray(a, dtype=float)).all() for a in arrays)
    except (TypeError, ValueError):
        return False


def checked(fn, *args, **kwargs):
    """fn on read-only copies; asserts the inputs are unchanged; (value, error)."""
    args = [read_only(a) for a in args]
    before = [copy_of(a) for a in args]
    out = call(fn, *args, **kwargs)
    for i, (a, b) in enumerate(zip(before, args)):
        assert_unchanged(a, b, f"argument {i}")
    return out


@FUNCS
@given(data=st.data())
def test_entropy_of_labels(data):
    y = data.draw(vectors())
    h, err = checked(info.entropy, y)
    if err is None:
        k = len(set(map(repr, y.tolist())))
        assert 0 <= h <= math.log2(max(k, 1)) + 1e-12, (h, k)


@FUNCS
@given(data=st.data())
def test_entropy_of_counts(data):
    counts = np.abs(data.draw(vectors(kinds=("float", "huge", "nan", "int"))))
    if data.draw(st.booleans()) and len(counts):
        counts[0] = -counts[0] - 1  # a negative count must be refused
    h, err = checked(info.entropy, counts, counts=True)
    if err is None:
        assert (counts >= 0).all() and np.isfinite(counts).all(), \
            f"entropy accepted counts {counts}"
        assert 0 <= h <= math.log2(max(len(counts), 1)) + 1e-9, (h, counts)


@pytest.mark.parametrize("counts", [[1e308, 1e308], [1e308, 1.0], [1.7e308, 1e308, 1e300]])
def test_entropy_of_huge_counts_is_finite(counts):
    p = np.array(counts) / np.sum(np.array(counts) / 1e300) / 1e300
    expected = -sum(q * math.log2(q) for q in p if q > 0)
    assert info.entropy(np.array(counts), counts=True) == pytest.approx(expected, abs=1e-12)


@FUNCS
@given(data=st.data())
def test_conditional_entropy_and_information_gain_are_in_range(data):
    n = data.draw(st.integers(0, 12))
    y, x = data.draw(vectors(n)), data.draw(vectors(n))
    threshold = data.draw(st.sampled_from([None, 0.0, np.nan, "a", 1e308]))
    hyx, err = checked(info.conditional_entropy, y, x)
    ig, err_ig = checked(info.information_gain, y, x, threshold)
    # rows with x missing are left out of both (documented), so the bound is log2(k) of y
    bound = math.log2(max(len(set(map(repr, y.tolist()))), 1)) + 1e-9
    if err is None:
        assert 0 <= hyx <= bound, (hyx, bound)
    if err_ig is None:
        assert -1e-12 <= ig <= bound, (ig, bound)


@FUNCS
@given(data=st.data())
def test_best_threshold(data):
    n = data.draw(st.integers(0, 12))
    x, y = data.draw(vectors(n)), data.draw(vectors(n))
    out, err = checked(info.best_threshold, x, y)
    if err is None and finite_numbers(x):
        assert out is not None


@FUNCS
@given(data=st.data())
def test_chi2_test_p_value_in_range(data):
    rows, cols = data.draw(st.integers(0, 4)), data.draw(st.integers(0, 4))
    rng = np.random.default_rng(data.draw(st.integers(0, 999)))
    table = rng.integers(0, 20, size=(rows, cols)).astype(float)
    table *= data.draw(st.sampled_from([1.0, 1e300, 1e-300]))
    if rows and cols and data.draw(st.booleans()):
        table[0, 0] = data.draw(st.sampled_from([np.nan, -1.0, np.inf]))
    out, err = checked(info.chi2_test, table)
    if err is None:
        values = [v for v in (out if isinstance(out, tuple) else vars(out).values())
                  if isinstance(v, (float, np.floating))]
        assert not any(np.isnan(v) for v in values), f"chi2_test({table}) = {out}"


@FUNCS
@given(data=st.data())
def test_information_gain_table(data):
    X = data.draw(matrices(max_rows=10))
    y = data.draw(vectors(X.shape[0], kinds=("int", "str", "bool")))
    X0 = copy_of(X)
    table, err = checked(info.information_gain_table, X, y)
    assert_unchanged(X0, X, "X")
    if err is None:
        assert str(table)


@FUNCS
@given(data=st.data())
def test_metrics_are_in_range(data):
    n = data.draw(st.integers(0, 12))
    a, b = data.draw(vectors(n)), data.draw(vectors(n))
    acc, err = checked(metrics.accuracy, a, b)
    if err is None:
        assert 0 <= acc <= 1
    for fn in (metrics.rmse, metrics.r2):
        v, err = checked(fn, a, b)
        if err is None and finite_numbers(a, b):
            assert not np.isnan(v), f"{fn.__name__} gave NaN on finite input"
            if fn is metrics.rmse:
                assert v >= 0
            else:
                assert v <= 1 + 1e-12
    # the labels of the text arrays compared (int 2 and float 2.0 are '2' and '2.0' as text)
    classes = np.unique(np.concatenate([a.astype(str), b.astype(str)])) if n else np.array([])
    cm, err = checked(metrics.confusion_matrix, a.astype(str), b.astype(str), classes)
    if err is None:
        assert np.asarray(cm).sum() == n
    proba = np.abs(data.draw(vectors(n, kinds=("float", "nan", "huge"))))
    P = np.stack([proba, 1 - proba], axis=1) if n else np.empty((0, 2))
    loss, err = checked(metrics.log_loss, (a > 0) if a.dtype.kind == "f" else a, P,
                        np.array([False, True]))
    if err is None:
        assert loss >= 0


LOSS_FUNCTIONS = [getattr(losses, name) for name in losses.__all__ if callable(
    getattr(losses, name))]


@pytest.mark.parametrize("fn", LOSS_FUNCTIONS, ids=lambda f: f.__name__)
@FUNCS
@given(data=st.data())
def test_losses_are_finite_on_finite_input(fn, data):
    n = data.draw(st.integers(0, 8))
    y_pred = data.draw(vectors(n, kinds=("float", "huge", "nan", "int")))
    y = data.draw(st.sampled_from([np.sign(y_pred) + (y_pred == 0), np.ones(n),
                                   np.zeros(n), data.draw(vectors(n))]))
    out, err = checked(fn, y_pred, y)
    if err is None and finite_numbers(y_pred, y):
        assert not np.isnan(np.asarray(out, dtype=float)).any(), f"{fn.__name__} gave NaN"


@settings(BUDGET, max_examples=30)
@given(d=st.integers(1, 5), degree=st.integers(0, 4), bias=st.booleans(),
       interaction=st.booleans())
def test_polynomial_features_width_and_values(d, degree, bias, interaction):
    """The output has exactly the documented monomials: every product of at most `degree`
    inputs (distinct inputs when interaction_only), in some order, plus the bias column."""
    X = np.random.default_rng(d * 10 + degree).normal(size=(4, d))
    pf = fastml.PolynomialFeatures(degree=degree, include_bias=bias,
                                   interaction_only=interaction)
    out, err = call(pf.fit_transform, X)
    if err is not None:
        assert degree == 0 and not bias or degree < 0, err  # nothing to output
        return
    pick = itertools.combinations if interaction else itertools.combinations_with_replacement
    columns = [np.prod(X[:, list(c)], axis=1) for k in range(0 if bias else 1, degree + 1)
               for c in pick(range(d), k)]
    expected = np.stack(columns, axis=1) if columns else np.empty((4, 0))
    assert out.shape == expected.shape
    got = sorted(map(tuple, np.round(out.T, 12)))
    want = sorted(map(tuple, np.round(expected.T, 12)))
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-10)
