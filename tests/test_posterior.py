"""fastml/_core/_posterior.pyx: class scores to (log) posteriors in one compiled call, shared by
naive Bayes and the linear classifiers, against numpy's steps and exact references."""
import math

import numpy as np
import pytest

from fastml._core._posterior import binary_log_posterior, first_nan_row, log_posterior


# --- the log-softmax (log_posterior) against numpy's steps
def numpy_uses_the_c_library_exp_log(values):
    """numpy's float64 exp / log are the C library's (as log_posterior's) on CPUs without
    AVX-512F; its AVX-512F loops may round differently in the last bit."""
    return np.array_equal(np.exp(values), [math.exp(v) for v in values]) and \
        np.array_equal(np.log(np.abs(values)), [math.log(abs(v)) for v in values])


@pytest.mark.parametrize("K", [1, 2, 3, 7, 8, 9, 15, 16, 17, 127, 128, 129, 300, 1000])
def test_log_posterior_equals_the_numpy_steps(K):
    rng = np.random.default_rng(K)
    jll = rng.normal(scale=30.0, size=(64, K)) - 500.0
    ref = jll - jll.max(axis=1, keepdims=True)
    ref -= np.log(np.add.reduce(np.exp(ref), axis=1, keepdims=True))
    log_post, post = jll.copy(), jll.copy()
    assert log_posterior(log_post, True, False)
    assert log_posterior(post, True, True)
    if numpy_uses_the_c_library_exp_log(jll.ravel()[:2000]):
        np.testing.assert_array_equal(log_post, ref)           # bit for bit
        np.testing.assert_array_equal(post, np.exp(ref))
    else:
        np.testing.assert_allclose(log_post, ref, rtol=1e-14, atol=1e-14)
        np.testing.assert_allclose(post, np.exp(ref), rtol=1e-14, atol=0)
    np.testing.assert_allclose(post.sum(axis=1), 1.0, rtol=1e-13)


@pytest.mark.parametrize("top", [-np.inf, np.inf, np.nan])
def test_log_posterior_leaves_rows_without_a_finite_max_to_the_caller(top):
    scores = np.array([[-1.0, -2.0], [top, -3.0 if top != -np.inf else top]])
    before = scores.copy()
    assert not log_posterior(scores, True, False)
    np.testing.assert_array_equal(scores, before)              # all or nothing
    nan_row = np.array([[0.0, np.nan]])
    assert log_posterior(nan_row, False, True)                 # shifted already: NaN stays
    assert np.isnan(nan_row).all()
    assert log_posterior(np.zeros((3, 0)), True, True)


# --- two classes from the log-odds
def reference_binary(m):
    """[log P(class 0), log P(class 1)] = [-log(1 + e^m), -log(1 + e^-m)] in exact arithmetic
    (mpmath-free: math.log1p / math.exp where they cannot overflow)."""
    def softplus(z):
        return z + math.log1p(math.exp(-z)) if z > 0 else math.log1p(math.exp(z))
    return [-softplus(m), -softplus(-m)]


MARGINS = [0.0, 1e-300, -1e-300, 1e-17, -1e-17, 0.5, -0.5, 1.0, -3.0, 20.0, -20.0, 36.0, -40.0,
           700.0, -700.0, 745.5, -746.0, 1e4, -1e4, 1e300, -1e300]


def test_binary_log_posterior_is_stable_and_exact_at_any_margin():
    m = np.array(MARGINS)
    logp = binary_log_posterior(m, False)
    p = binary_log_posterior(m, True)
    ref = np.array([reference_binary(v) for v in MARGINS])
    np.testing.assert_allclose(logp, ref, rtol=4e-16, atol=0)
    np.testing.assert_allclose(p, np.exp(ref), rtol=1e-15, atol=0)    # (exp of a rounded log)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=2.3e-16)
    assert np.isfinite(logp).all() and np.all(logp <= 0)
    np.testing.assert_array_equal(p[0], [0.5, 0.5])
    np.testing.assert_array_equal(p[:, 0], binary_log_posterior(-m, True)[:, 1])   # symmetry


def test_binary_log_posterior_at_infinite_and_nan_margins():
    m = np.array([np.inf, -np.inf, np.nan])
    np.testing.assert_array_equal(binary_log_posterior(m, False)[:2], [[-np.inf, 0.0],
                                                                       [0.0, -np.inf]])
    np.testing.assert_array_equal(binary_log_posterior(m, True)[:2], [[0.0, 1.0], [1.0, 0.0]])
    assert np.isnan(binary_log_posterior(m, False)[2]).all()
    assert np.isnan(binary_log_posterior(m, True)[2]).all()
    assert binary_log_posterior(np.empty(0), True).shape == (0, 2)


# --- the NaN check of margins
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_first_nan_row_finds_the_first_row_with_a_nan(dtype):
    scores = np.zeros((5, 3), dtype=dtype)
    assert first_nan_row(scores) == -1
    scores[3, 2] = np.inf
    scores[4, 0] = -np.inf
    assert first_nan_row(scores) == -1                          # infinities are not NaN
    scores[3, 1], scores[1, 2] = np.nan, np.nan
    assert first_nan_row(scores) == 1
    assert first_nan_row(scores[2:, ::2]) == -1                 # strided views are read right
    assert first_nan_row(scores[:, 1::2]) == 3
    assert first_nan_row(np.asfortranarray(scores)) == 1
    assert first_nan_row(np.zeros((0, 2), dtype=dtype)) == -1


# --- any margins: the properties every caller relies on
from hypothesis import given, settings, strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

MARGIN_VALUES = st.floats(allow_nan=False, width=64)        # +-inf and +-1.8e308 included


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(hnp.arrays(np.float64, st.integers(0, 20), elements=MARGIN_VALUES))
def test_property_binary_posterior_of_any_margin(m):
    """P rows are probabilities summing to 1 (to rounding), log P = log of P where P is
    normal, both finite-or-(-inf) and never NaN, and the input is not changed."""
    before = m.copy()
    P, logP = binary_log_posterior(m, True), binary_log_posterior(m, False)
    np.testing.assert_array_equal(m, before)
    assert P.shape == logP.shape == (len(m), 2)
    assert np.all((P >= 0) & (P <= 1)) and not np.isnan(logP).any() and np.all(logP <= 0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=3e-16)
    normal = P > 1e-300
    np.testing.assert_allclose(np.exp(logP[normal]), P[normal], rtol=1e-15)


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(0, 8), st.integers(1, 6)),
                  elements=st.floats(-1e300, 1e300)))
def test_property_log_posterior_of_finite_scores(scores):
    """Finite scores (the usual case): the log-softmax, rows of P summing to 1, the largest
    score with the largest posterior, equal to numpy's shifted log-sum-exp to rounding."""
    ref = scores - scores.max(axis=1, keepdims=True)
    ref = ref - np.log(np.exp(ref).sum(axis=1, keepdims=True))
    logP, P = scores.copy(), scores.copy()
    assert log_posterior(logP, True, False) and log_posterior(P, True, True)
    np.testing.assert_allclose(logP, ref, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-14)
    top = P[np.arange(len(P)), scores.argmax(axis=1)]
    np.testing.assert_array_equal(top, P.max(axis=1))           # exp keeps the order
