"""LogisticRegression(solver="newton") (001: "Newton-Raphson (segundo orden)"): Spector &
Mazzeo's logit data against its maximum-likelihood estimate and Stata's published fit, the
Hessian against finite differences, and agreement with L-BFGS on the same objective."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import fastml
from fastml.exceptions import ConvergenceWarning
from fastml.linear_model import _newton

pytestmark = pytest.mark.kernel

# Spector & Mazzeo (1980), as published in Greene's Econometric Analysis (Table F14.1) and in
# statsmodels' datasets: GPA, TUCE, PSI -> GRADE, 32 students.
SPECTOR = np.array([
    [2.66, 20, 0, 0], [2.89, 22, 0, 0], [3.28, 24, 0, 0], [2.92, 12, 0, 0], [4.00, 21, 0, 1],
    [2.86, 17, 0, 0], [2.76, 17, 0, 0], [2.87, 21, 0, 0], [3.03, 25, 0, 0], [3.92, 29, 0, 1],
    [2.63, 20, 0, 0], [3.32, 23, 0, 0], [3.57, 23, 0, 0], [3.26, 25, 0, 1], [3.53, 26, 0, 0],
    [2.74, 19, 0, 0], [2.75, 25, 0, 0], [2.83, 19, 0, 0], [3.12, 23, 1, 0], [3.16, 25, 1, 1],
    [2.06, 22, 1, 0], [3.62, 28, 1, 1], [2.89, 14, 1, 0], [3.51, 26, 1, 0], [3.54, 24, 1, 1],
    [2.83, 27, 1, 1], [3.39, 17, 1, 1], [2.67, 24, 1, 0], [3.65, 21, 1, 1], [4.00, 23, 1, 1],
    [3.10, 21, 1, 0], [2.39, 19, 1, 1]])
# The maximum-likelihood estimate to 17 digits (Newton in 40-digit arithmetic, mpmath).
MLE = np.array([2.8261125948893209, 0.095157661317909287, 2.3786876550933545])
MLE_INTERCEPT = -13.021346858115689
# Stata 11's published fit (glm grade gpa tuce psi, family(binomial); statsmodels' test
# results): its log-likelihood to 14 digits; its coefficients stop at a gradient of 3e-6, so
# they agree with the MLE to about 7 digits only.
STATA_LOGLIK = -12.88963422213144
STATA = np.array([2.8261124216999, 0.09515765001172, 2.3786875040587, -13.021345912635])


def digits(value, reference):
    return -np.log10(np.abs(value - reference) / np.abs(reference))


def spector_fit(**params):
    X, y = SPECTOR[:, :3], SPECTOR[:, 3]
    return fastml.LogisticRegression(solver="newton", alpha=0.0, tol=1e-12, **params).fit(X, y)


def test_spector_mazzeo_matches_the_maximum_likelihood_estimate():
    model = spector_fit()
    assert model.n_iter_ <= 10
    assert np.all(digits(model.coef_[0], MLE) >= 9)
    assert digits(model.intercept_[0], MLE_INTERCEPT) >= 9
    # Stata's coefficients to their own precision, its log-likelihood to 12 digits.
    assert np.all(digits(np.r_[model.coef_[0], model.intercept_], STATA) >= 6)
    X, y = SPECTOR[:, :3], SPECTOR[:, 3]
    p = model.predict_proba(X)[:, 1]
    loglik = float(np.sum(y * np.log(p) + (1 - y) * np.log1p(-p)))
    assert digits(loglik, STATA_LOGLIK) >= 12


def test_the_objective_decreases_every_iteration():
    curve = np.array(spector_fit().loss_curve_)
    assert np.all(np.diff(curve) <= 0)


def problem_for(X, y, alpha, K, reference, fit_intercept=True, sw=None):
    sw = np.ones(len(y)) if sw is None else sw
    offset = 1 if reference else 0
    return _newton.NewtonProblem(X, y.astype(float), sw, K, offset, reference, alpha,
                                 fit_intercept)


@pytest.mark.parametrize("K, reference", [(1, True), (3, False), (2, True)])
def test_the_hessian_is_the_derivative_of_the_gradient(K, reference):
    rng = np.random.default_rng(0)
    n, d = 60, 3
    X = rng.normal(size=(n, d))
    n_classes = K + 1 if reference else K
    y = rng.integers(0, n_classes, n)
    sw = rng.uniform(0.5, 2.0, n)
    problem = problem_for(X, y, 0.1, K, reference, sw=sw)
    x = rng.normal(size=problem.size) * 0.3

    def gradient(x):                          # numpy reference of the mean objective's gradient
        P = problem.probabilities(x)
        R = (P - problem.T) * (sw / sw.sum())[:, None]
        W, _ = problem.unpack(x)
        return np.r_[(R.T @ X + 0.1 * W).ravel(), R.sum(axis=0)]

    H = problem.hessian(problem.probabilities(x))
    eps = 1e-6
    numeric = np.column_stack([(gradient(x + eps * e) - gradient(x - eps * e)) / (2 * eps)
                               for e in np.eye(problem.size)])
    np.testing.assert_allclose(H, numeric, atol=1e-7)
    v = rng.normal(size=problem.size)
    np.testing.assert_allclose(problem.hessian_vector(problem.probabilities(x), v), H @ v,
                               atol=1e-12)


def three_classes(n=400, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = np.argmax(X @ rng.normal(size=(5, 3)) + rng.normal(size=(n, 3)), axis=1)
    return X, y


@pytest.mark.parametrize("multi_class", ["multinomial", "reference"])
def test_multiclass_reaches_the_lbfgs_optimum(multi_class):
    X, y = three_classes()
    newton = fastml.LogisticRegression(solver="newton", alpha=1e-3, tol=1e-10,
                                       multi_class=multi_class).fit(X, y)
    lbfgs = fastml.LogisticRegression(solver="lbfgs", alpha=1e-3, tol=1e-10, max_iter=2000,
                                      multi_class=multi_class).fit(X, y)
    assert newton.n_iter_ <= 12
    np.testing.assert_allclose(newton.predict_proba(X), lbfgs.predict_proba(X), atol=1e-7)
    np.testing.assert_allclose(newton.coef_, lbfgs.coef_, atol=1e-6)
    assert newton.loss_curve_[-1] <= lbfgs.loss_curve_[-1] + 1e-12


def test_multinomial_intercepts_are_the_symmetric_ones_of_lbfgs_and_scikit_learn():
    """A softmax's intercepts are defined up to one shared constant (its Hessian is singular
    there): Newton reported iris's shifted by ~10 from lbfgs's and scikit-learn's, which sum to
    0 over the classes (the probabilities were equal). With alpha = 0 the weights too."""
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression as SkLogisticRegression
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    alpha = 1e-2
    sk = SkLogisticRegression(C=1 / (alpha * len(y)), tol=1e-12, max_iter=10000).fit(X, y)
    newton = fastml.LogisticRegression(solver="newton", alpha=alpha, tol=1e-9).fit(X, y)
    np.testing.assert_allclose(newton.intercept_, sk.intercept_, atol=1e-5)
    np.testing.assert_allclose(newton.coef_, sk.coef_, atol=1e-5)
    X3, y3 = three_classes()
    for alpha in (1e-3, 0.0):
        model = fastml.LogisticRegression(solver="newton", alpha=alpha, tol=1e-9).fit(X3, y3)
        assert abs(model.intercept_.sum()) < 1e-9
        if alpha == 0:
            np.testing.assert_allclose(model.coef_.sum(axis=0), 0.0, atol=1e-9)


def test_newton_cg_equals_the_factored_hessian(monkeypatch):
    X, y = three_classes()
    full = fastml.LogisticRegression(solver="newton", alpha=1e-3, tol=1e-10).fit(X, y)
    monkeypatch.setattr(_newton, "FULL_HESSIAN_MAX", 0)
    cg = fastml.LogisticRegression(solver="newton", alpha=1e-3, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(cg.predict_proba(X), full.predict_proba(X), atol=1e-8)


def test_csr_float32_and_weights_agree_with_the_dense_fit():
    X, y = three_classes(300)
    dense = fastml.LogisticRegression(solver="newton", alpha=1e-2, tol=1e-10).fit(X, y)
    sparse = fastml.LogisticRegression(solver="newton", alpha=1e-2, tol=1e-10).fit(
        sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, atol=1e-9)
    single = fastml.LogisticRegression(solver="newton", alpha=1e-2, tol=1e-5).fit(
        X.astype(np.float32), y)
    assert single.coef_.dtype == np.float32
    np.testing.assert_allclose(single.coef_, dense.coef_, atol=1e-4)
    # Integer weights = repeated rows.
    w = np.random.default_rng(2).integers(1, 4, len(y))
    weighted = fastml.LogisticRegression(solver="newton", alpha=1e-2, tol=1e-10).fit(
        X, y, sample_weight=w)
    repeated = fastml.LogisticRegression(solver="newton", alpha=1e-2, tol=1e-10).fit(
        np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, atol=1e-9)


def test_separable_data_without_a_penalty_warn_and_stay_finite():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 0, 1, 1])
    with pytest.warns(ConvergenceWarning, match="separable"):
        model = fastml.LogisticRegression(solver="newton", alpha=0.0).fit(X, y)
    assert np.all(np.isfinite(model.coef_)) and np.all(np.isfinite(model.intercept_))
    assert (model.predict(X) == y).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)     # a penalty makes it finite
        fastml.LogisticRegression(solver="newton", alpha=1e-2).fit(X, y)


def test_max_iter_ends_the_run_with_a_warning():
    X, y = three_classes()
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        fastml.LogisticRegression(solver="newton", alpha=1e-3, tol=1e-14, max_iter=1).fit(X, y)
