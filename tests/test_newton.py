"""LogisticRegression(solver="newton") (001: "Newton-Raphson (segundo orden)"): Spector &
Mazzeo's logit data against its maximum-likelihood estimate and Stata's published fit, the
Hessian against finite differences, and agreement with L-BFGS on the same objective."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import fastml
from fastml.exceptions import ConvergenceWarning
from fastml.linear_model import _newton

from test_properties import BUDGET

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
    """The NewtonProblem LogisticRegression builds, for kernel codes y."""
    from fastml.linear_model._base import OutputLayout
    from fastml.linear_model._logistic import _Objective
    sw = np.ones(len(y)) if sw is None else sw
    layout = OutputLayout(K + 1 if reference else K, "reference" if reference else "multinomial")
    assert layout.n_outputs == K
    objective = _Objective(X, y, sw, layout, alpha, fit_intercept, 1)
    return _newton.NewtonProblem(objective, X, y.astype(float), sw, K, layout.label_offset,
                                 reference, alpha, fit_intercept)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("K, reference", [(1, True), (3, False), (2, True)])
def test_the_hessian_is_the_derivative_of_the_gradient(K, reference, sparse):
    """The Hessian of the fused kernel pass (dense X) and of the weighted Gram products (CSR)
    against central differences of a numpy gradient, and H v against Newton-CG's products."""
    rng = np.random.default_rng(0)
    n, d = 60, 3
    X = rng.normal(size=(n, d))
    n_classes = K + 1 if reference else K
    y = rng.integers(0, n_classes, n)
    sw = rng.uniform(0.5, 2.0, n)
    problem = problem_for(sp.csr_matrix(X) if sparse else X, y, 0.1, K, reference, sw=sw)
    assert problem.fused != sparse
    x = rng.normal(size=problem.size) * 0.3

    def gradient(x):                          # numpy reference of the mean objective's gradient
        P = problem.probabilities(x)
        R = (P - problem.T) * (sw / sw.sum())[:, None]
        W, _ = problem.unpack(x)
        return np.r_[(R.T @ X + 0.1 * W).ravel(), R.sum(axis=0)]

    H = problem.hessian(x)
    eps = 1e-6
    numeric = np.column_stack([(gradient(x + eps * e) - gradient(x - eps * e)) / (2 * eps)
                               for e in np.eye(problem.size)])
    np.testing.assert_allclose(H, numeric, atol=1e-7)
    np.testing.assert_allclose(problem.evaluate(x)[1], gradient(x), atol=1e-14)
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


def random_problem(seed, n_classes, d, raw, float32):
    """Labels drawn from a softmax of a random linear model (never separable at these sizes:
    20-40 rows per parameter), columns standardized or raw: offsets of +-50, scales 0.1-100
    (cond(H) up to ~1e10)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 40)) * d * n_classes + 50
    Z = rng.normal(size=(n, d))
    y = np.argmax(Z @ rng.normal(size=(d, n_classes)) * rng.uniform(0.3, 3)
                  + rng.gumbel(size=(n, n_classes)), axis=1)
    X = Z * 10 ** rng.uniform(-1, 2, d) + rng.uniform(-50, 50, d) if raw else Z
    return X.astype(np.float32 if float32 else np.float64), y


def gradient_history(X, y, **params):
    """max|gradient| after each Newton step, through the solver's own loop."""
    history = []
    original = _newton.newton_minimize

    def recording(problem, x, *, on_iteration, **kw):
        return original(problem, x, on_iteration=lambda f, g: (history.append(g),
                                                               on_iteration(f, g)), **kw)
    _newton.newton_minimize = recording
    try:
        model = fastml.LogisticRegression(solver="newton", **params).fit(X, y)
    finally:
        _newton.newton_minimize = original
    return model, np.array(history)


@settings(BUDGET, max_examples=25)
@given(seed=st.integers(0, 2**16), n_classes=st.integers(2, 4), d=st.integers(1, 8),
       raw=st.booleans(), float32=st.booleans(), alpha=st.sampled_from([0.0, 1e-6, 1e-4, 1e-2]),
       multi_class=st.sampled_from(["multinomial", "reference"]), fit_intercept=st.booleans())
def test_property_newton_reaches_1e_10_on_offset_and_scaled_columns(
        seed, n_classes, d, raw, float32, alpha, multi_class, fit_intercept):
    """Issue 32: tol=1e-10 in at most 12 iterations, no warning, on raw columns (offsets,
    scales: the objective's rounding is far above what the last steps gain) as on
    standardized ones, float32 or float64, binary or multinomial; the gradient at the result
    meets tol by the kernel and agrees with numpy's; quadratic convergence near the
    optimum on standardized columns."""
    X, y = random_problem(seed, n_classes, d, raw, float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model, history = gradient_history(X, y, tol=1e-10, alpha=alpha,
                                          multi_class=multi_class, fit_intercept=fit_intercept)
    assert model.n_iter_ <= 12 and history[-1] <= 1e-10
    # the gradient at the solver's own (float64) iterate, by numpy
    from _reference import logistic_loss_grad
    from fastml.linear_model._base import OutputLayout
    layout = OutputLayout(n_classes, multi_class)
    codes = layout.codes(np.searchsorted(model.classes_, y))
    W = np.asarray(model.coef_, dtype=np.float64)
    b = np.asarray(model.intercept_, dtype=np.float64)
    if not float32:                             # coef_ is the iterate itself
        Xf = X.astype(np.float64)
        _, gW, gb = logistic_loss_grad(Xf, codes, np.ones(len(y)), W, b, layout.reference)
        g = np.r_[(gW / len(y) + alpha * W).ravel(), gb / len(y) if fit_intercept else []]
        assert np.max(np.abs(g)) <= 1e-10 + 1e-13 * np.abs(Xf).max() * max(1.0, np.abs(W).max())
    if not raw:
        local = [(a, b) for a, b in zip(history, history[1:]) if a < 1e-3 and b > 1e-13]
        assert all(b <= 1e4 * a * a for a, b in local), history


def test_a_tolerance_below_the_floor_stops_with_a_warning_that_says_so():
    """tol=0 is "run max_iter"; a positive tol floating point cannot reach ends at the
    floor with a warning naming it, not after max_iter passes."""
    X, y = random_problem(3, 2, 5, True, False)
    with pytest.warns(ConvergenceWarning, match="float64 arithmetic"):
        model = fastml.LogisticRegression(solver="newton", tol=1e-300, max_iter=100).fit(X, y)
    assert model.n_iter_ < 20


def test_the_softmax_takes_no_more_steps_than_the_reference_form():
    """The softmax's flat direction is handled exactly (projected out, given curvature in the
    factorization): on the same data it needs at most one step more than the reference-class
    form, which has no flat direction (it took 11 against 6 on ANES96 before), float32
    columns included."""
    for seed in range(12):
        X, y = random_problem(seed, 3 + seed % 3, 6, seed % 2 == 0, seed % 3 == 0)
        steps = {form: fastml.LogisticRegression(solver="newton", tol=1e-10,
                                                 multi_class=form).fit(X, y).n_iter_
                 for form in ("multinomial", "reference")}
        assert steps["multinomial"] <= steps["reference"] + 1, (seed, steps)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_same_model_for_any_n_jobs(n_classes):
    """The loss, gradient and Hessian of a pass have the same bits for any thread count (the
    batch kernel's fixed sum order), so the Newton iterates and the model do too."""
    X, y = random_problem(11, n_classes, 6, True, False)
    X, y = np.tile(X, (20, 1)), np.tile(y, 20)         # many chunks: 2,048-row minimum
    fits = [fastml.LogisticRegression(solver="newton", tol=1e-10, n_jobs=j).fit(X, y)
            for j in (1, 2, 3)]
    for fit in fits[1:]:
        np.testing.assert_array_equal(fit.coef_, fits[0].coef_)
        np.testing.assert_array_equal(fit.intercept_, fits[0].intercept_)
        assert fit.n_iter_ == fits[0].n_iter_
