"""PolynomialFeatures (the expansion kernel against scikit-learn and a numpy product of powers)
and PolynomialRegression (lecture 001: y(x, w) = w0 + w1 x + ... + w_M x^M recovered from
noise-free samples)."""
import numpy as np
import pytest

from fastml import PolynomialFeatures, PolynomialRegression, Ridge
from fastml.linear_model import _polynomial_fast as _poly


@pytest.mark.kernel
@pytest.mark.parametrize("degree", [0, 1, 2, 3])
@pytest.mark.parametrize("interaction_only", [False, True])
@pytest.mark.parametrize("include_bias", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_expansion_matches_sklearn_and_powers(degree, interaction_only, include_bias, dtype):
    from sklearn.preprocessing import PolynomialFeatures as SkPolynomialFeatures
    if degree == 0 and not include_bias:
        pytest.skip("no output features")
    X = np.random.default_rng(0).normal(size=(11, 4)).astype(dtype)
    ours = PolynomialFeatures(degree, interaction_only=interaction_only,
                              include_bias=include_bias)
    out = ours.fit_transform(X)
    sk = SkPolynomialFeatures(degree=degree, interaction_only=interaction_only,
                              include_bias=include_bias).fit(X)
    assert out.dtype == dtype
    np.testing.assert_array_equal(ours.powers_, sk.powers_)
    np.testing.assert_array_equal(ours.get_feature_names_out(), sk.get_feature_names_out())
    # Reference: the product of powers, column by column.
    ref = np.prod(X.astype(np.float64)[:, None, :] ** ours.powers_[None, :, :], axis=2)
    rtol = 1e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(out, ref, rtol=rtol, atol=0)


@pytest.mark.kernel
def test_kernel_threads_do_not_change_the_result():
    X = np.random.default_rng(1).normal(size=(1000, 3))
    pf = PolynomialFeatures(3).fit(X)
    one = np.empty((1000, pf.n_output_features_))
    two = np.empty_like(one)
    _poly.poly_expand(X, pf._parent, pf._feature, one, 1)
    _poly.poly_expand(X, pf._parent, pf._feature, two, 2)
    np.testing.assert_array_equal(one, two)


@pytest.mark.kernel
def test_kernel_rejects_a_parent_after_its_child():
    X = np.ones((2, 2))
    with pytest.raises(ValueError, match="parent"):
        _poly.poly_expand(X, np.array([1, -1], dtype=np.int64), np.array([0, 0], dtype=np.int64),
                          np.empty((2, 2)))


def test_feature_names_from_dataframe_columns():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    names = PolynomialFeatures(2, include_bias=False).fit(frame).get_feature_names_out()
    assert list(names) == ["a", "b", "a^2", "a b", "b^2"]


def test_degree_zero_without_bias_is_an_error():
    with pytest.raises(ValueError, match="no output features"):
        PolynomialFeatures(0, include_bias=False).fit(np.ones((3, 2)))


@pytest.mark.parametrize("degree", [1, 2, 3, 5])
def test_recovers_a_noise_free_polynomial(degree):
    # 001: y(x, w) = w0 + w1 x + ... + w_M x^M is linear in w; least squares on M+1 or more
    # noise-free samples returns w.
    rng = np.random.default_rng(degree)
    w = rng.normal(size=degree + 1)
    x = np.linspace(-1.0, 1.0, 40).reshape(-1, 1)
    y = np.polynomial.polynomial.polyval(x[:, 0], w)
    model = PolynomialRegression(degree).fit(x, y)
    assert model.intercept_ == pytest.approx(w[0], abs=1e-10)
    np.testing.assert_allclose(model.coef_, w[1:], rtol=0, atol=1e-10)
    np.testing.assert_array_equal(model.powers_.ravel(), np.arange(1, degree + 1))
    np.testing.assert_allclose(model.predict(x), y, atol=1e-10)


def test_recovers_a_two_feature_quadratic():
    rng = np.random.default_rng(7)
    X = rng.uniform(-1, 1, size=(60, 2))
    y = 0.5 + X[:, 0] - 2 * X[:, 1] + 3 * X[:, 0] ** 2 - X[:, 0] * X[:, 1] + 0.25 * X[:, 1] ** 2
    model = PolynomialRegression(2).fit(X, y)
    assert model.intercept_ == pytest.approx(0.5, abs=1e-10)
    np.testing.assert_allclose(model.coef_, [1, -2, 3, -1, 0.25], atol=1e-10)


def test_ridge_polynomial_is_ridge_on_the_features():
    rng = np.random.default_rng(8)
    x = rng.uniform(-2, 2, size=(50, 1))
    y = np.sin(x[:, 0]) + 0.1 * rng.normal(size=50)
    model = PolynomialRegression(4, alpha=0.1).fit(x, y)
    direct = Ridge(alpha=0.1).fit(PolynomialFeatures(4, include_bias=False).fit_transform(x), y)
    np.testing.assert_allclose(model.coef_, direct.coef_, rtol=1e-12)
    assert model.intercept_ == pytest.approx(direct.intercept_, rel=1e-12)


def test_high_degree_on_unscaled_x_stays_accurate():
    # x in [0, 10], degree 6: X^T X is too ill-conditioned for Cholesky; the fit solves from
    # the QR factor of the data instead. The columns are independent (the rank is decided on
    # scaled columns), so there is nothing to warn about, and the polynomial is reproduced.
    import warnings
    x = np.linspace(0.0, 10.0, 30).reshape(-1, 1)
    w = np.array([1.0, -0.5, 0.25, 0.1, -0.02, 0.003, -0.0001])
    y = np.polynomial.polynomial.polyval(x[:, 0], w)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = PolynomialRegression(6).fit(x, y)
    assert model.rank_ == 6
    np.testing.assert_allclose(model.predict(x), y, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(np.r_[model.intercept_, model.coef_], w, rtol=1e-5, atol=1e-7)


def test_n_jobs_follows_check_n_jobs_and_gives_the_same_output():
    # issue 10: one n_jobs rule (None = 1, -1 = every core); threads never change the result.
    X = np.random.default_rng(0).normal(size=(3000, 4))
    one = PolynomialFeatures(3, n_jobs=None).fit_transform(X)
    for n_jobs in (1, 2, -1):
        np.testing.assert_array_equal(PolynomialFeatures(3, n_jobs=n_jobs).fit_transform(X), one)
    model = PolynomialRegression(2, n_jobs=2).fit(X, X[:, 0] ** 2)
    assert model.features_.n_jobs == 2
    with pytest.raises(ValueError, match="n_jobs"):
        PolynomialFeatures(2, n_jobs=0).fit(X)


def test_docstring_examples_run():
    import doctest
    from fastml.linear_model import _polynomial
    result = doctest.testmod(_polynomial, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("d,degree,interaction_only,include_bias", [
    (1, 0, False, True), (1, 5, False, False), (3, 4, False, True), (5, 3, True, True),
    (4, 7, True, False), (6, 2, False, False)])
def test_output_width_is_scikit_learns(d, degree, interaction_only, include_bias):
    from sklearn.preprocessing import PolynomialFeatures as SkPolynomialFeatures
    from fastml.linear_model._polynomial import n_output_features
    X = np.ones((2, d))
    sk = SkPolynomialFeatures(degree, interaction_only=interaction_only,
                              include_bias=include_bias).fit(X)
    assert n_output_features(d, degree, interaction_only, include_bias) == \
        sk.n_output_features_
    ours = PolynomialFeatures(degree, interaction_only=interaction_only,
                              include_bias=include_bias).fit(X)
    assert ours.n_output_features_ == sk.n_output_features_


@pytest.mark.parametrize("degree", [2**31, 2**70, 10**6])
def test_huge_degree_is_refused_before_allocating(degree):
    # issue 12: degree=2**31 ran forever; the width is computed first (C(d + degree, degree)),
    # and a Python int too large for C is a ValueError naming the parameter, not OverflowError.
    X = np.ones((3, 2))
    with pytest.raises(ValueError, match=r"degree=.*output columns"):
        PolynomialFeatures(degree).fit(X)
    with pytest.raises(ValueError, match=r"degree=.*terms"):
        PolynomialRegression(degree).fit(X, np.ones(3))


def test_width_limits_are_exact_at_the_boundary():
    from fastml.linear_model._polynomial import MAX_OUTPUT_FEATURES, n_output_features
    from fastml.linear_model._regression import MAX_POLYNOMIAL_TERMS
    # 1 feature: degree + 1 columns with the bias
    assert n_output_features(1, MAX_OUTPUT_FEATURES - 1) == MAX_OUTPUT_FEATURES
    assert n_output_features(1, MAX_OUTPUT_FEATURES) == MAX_OUTPUT_FEATURES + 1
    # 243 features at degree 2 without the bias: 243 + 243 * 244 / 2 = 29889 terms (fits);
    # 244 features: 30134 (refused)
    X = np.zeros((2, 244))
    assert n_output_features(243, 2, include_bias=False) == 29889 <= MAX_POLYNOMIAL_TERMS
    with pytest.raises(ValueError, match="30,000"):
        PolynomialRegression(2).fit(X, np.zeros(2))


def test_huge_n_jobs_is_clamped_not_an_overflow():
    X = np.random.default_rng(1).normal(size=(50, 2))
    expected = PolynomialFeatures(2).fit_transform(X)
    np.testing.assert_array_equal(PolynomialFeatures(2, n_jobs=2**70).fit_transform(X), expected)
    model = PolynomialRegression(2, n_jobs=2**70).fit(X, X[:, 0] ** 2)
    assert model.coef_[2] == pytest.approx(1.0)


def test_predict_validates_once_and_equals_the_pipeline():
    # predict expands the checked X itself (no second and third check_array): the same numbers
    # as model_.predict(features_.transform(X)), and the same error when x^k overflows
    from fastml import PolynomialRegression
    from fastml.linear_model._regression_fast import count_nonfinite
    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 3))
    model = PolynomialRegression(degree=3).fit(X, X[:, 0] ** 3 - X[:, 1] * X[:, 2] + 1)
    for rows in (X[:1], X, X.astype(np.float32)):
        np.testing.assert_array_equal(model.predict(rows),
                                      model.model_.predict(model.features_.transform(rows)))
    with pytest.raises(ValueError, match="contains infinity"):
        model.predict(np.array([[1e120, 0.0, 1.0]]))
    with pytest.raises(ValueError, match="contains NaN"):
        model.predict(np.array([[np.nan, 0.0, 1.0]]))
    assert count_nonfinite(np.array([[1.0, np.inf], [np.nan, -np.inf]])) == 3
    assert count_nonfinite(np.ones((2, 2), dtype=np.float32)) == 0


# ---------------------------------------------------------------- an outside audit

def test_polynomial_sgd_takes_random_state_and_ridges_sgd_settings():
    """PolynomialRegression(solver="sgd") had no random_state (two fits differed by ~0.01)
    and no SGD settings. It now has Ridge's (and LinearRegression's), same names and
    defaults, handed to the Ridge on the expansion: the same model, bit for bit, as that
    Ridge on PolynomialFeatures(include_bias=False)."""
    from fastml import LinearRegression
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = X[:, 0] ** 2 + X[:, 1]
    settings = dict(max_iter=7, tol=None, learning_rate="inverse", eta0=0.02, decay=0.5,
                    batch_size=2, average=False, shuffle=True, n_iter_no_change=3,
                    random_state=0, verbose=0)
    a = PolynomialRegression(solver="sgd", alpha=0.5, **settings).fit(X, y)
    b = PolynomialRegression(solver="sgd", alpha=0.5, **settings).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    expanded = PolynomialFeatures(2, include_bias=False).fit_transform(X)
    ref = Ridge(alpha=0.5, solver="sgd", **settings).fit(expanded, y)
    np.testing.assert_array_equal(a.coef_, ref.coef_)
    assert a.intercept_ == ref.intercept_ and a.n_iter_ == 7
    ridge, linear = Ridge().get_params(), LinearRegression().get_params()
    shared = set(linear) - {"fit_intercept", "solver", "n_jobs"}
    poly = PolynomialRegression().get_params()
    assert shared <= set(poly) and all(poly[k] == ridge[k] == linear[k] for k in shared)
    assert PolynomialRegression(random_state=None).get_params()["random_state"] is None


def test_003s_term_count_for_degree_6_on_100_features():
    """003 "Higher order polynomials": C(d + m - 1, d) monomials of degree exactly d, "d = 6,
    m = 100: about 1.6 billion terms" (C(105, 6) = 1,609,344,100). PolynomialFeatures counts
    every degree up to d (C(106, 6) with the bias) and refuses that width before allocating."""
    from math import comb
    from fastml.linear_model._polynomial import n_output_features
    def count(degree):  # without the default limit, past which counting stops
        return n_output_features(100, degree, limit=10**12)
    exactly_6 = count(6) - count(5)
    assert exactly_6 == comb(105, 6) == 1_609_344_100
    assert round(exactly_6 / 1e9, 1) == 1.6
    assert count(6) == comb(106, 6)
    with pytest.raises(ValueError, match="degree=6.*100 feature"):
        PolynomialFeatures(degree=6).fit(np.zeros((1, 100)))
