"""LogisticRegression: the lectures' worked example, the kernels against numpy references,
scikit-learn's optimum, multiclass forms, dtypes, sparse input and bad input."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from fastml import LogisticRegression
from fastml.linear_model import _batch_fast as _batch, _sgd_fast as _sgd
from fastml.linear_model._sgd import LOSSES
from fastml.linear_model._sgd import SGDEngine

from _reference import (adagrad_epoch_log, logistic_loss_grad, non_finite_problems,
                        sgd_epoch_log)


def random_problem(n=200, d=6, n_classes=2, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(dtype)
    W = rng.normal(size=(n_classes, d))
    codes = np.argmax(X @ W.T + rng.gumbel(size=(n, n_classes)), axis=1)
    return X, codes


# ---------------------------------------------------------------- lecture 004's one step

def test_lecture_004_one_sgd_step():
    # 004: theta = 0, x = (3, 2), y = 1, eta = 0.1: theta_1 = theta + eta (y - sigma(0)) x
    # = 0.1 * 0.5 * (3, 2, 1) = (0.15, 0.10, 0.05) for (w1, w2, b).
    model = LogisticRegression(solver="sgd", learning_rate="constant", eta0=0.1, alpha=0.0,
                               shuffle=False)
    model.partial_fit(np.array([[3.0, 2.0]]), np.array([1]), classes=[0, 1])
    np.testing.assert_allclose(model.coef_, [[0.15, 0.10]], rtol=0, atol=1e-15)
    np.testing.assert_allclose(model.intercept_, [0.05], rtol=0, atol=1e-15)


@pytest.mark.parametrize("form", ["summed", "mean"])
def test_lectures_gradient_ascent_with_lambda_reaches_the_fit(form):
    # 000 slide 5 / 002 "MLE vs MAP": w_i <- w_i + eta {-lambda w_i + sum_j x_i^j [y^j - P^j]}
    # (w_0 unpenalized), fastml's optimum with lambda = alpha * n; 000 slide 9 / 003's batch
    # form averages the sum (1/N sum_j ...): there lambda = alpha. (000 slide 9 writes the
    # objective as ln P - lambda ||w||^2, whose gradient is -2 lambda w; its update, which
    # fastml follows, is the gradient of ln P - lambda/2 ||w||^2.)
    rng = np.random.default_rng(4)
    n, alpha = 60, 0.05
    X = rng.normal(size=(n, 2))
    y = (X @ [1.5, -1.0] + 0.3 + rng.normal(size=n) > 0).astype(float)
    lam, eta, scale = (alpha * n, 1.0 / n, 1.0) if form == "summed" else (alpha, 1.0, 1.0 / n)
    w, w0 = np.zeros(2), 0.0
    for _ in range(5000):
        residual = y - 1 / (1 + np.exp(-(X @ w + w0)))
        w, w0 = w + eta * (-lam * w + scale * X.T @ residual), w0 + eta * scale * residual.sum()
    model = LogisticRegression(solver="newton", alpha=alpha, tol=1e-12).fit(X, y)
    np.testing.assert_allclose(model.coef_[0], w, rtol=0, atol=1e-9)
    np.testing.assert_allclose(model.intercept_[0], w0, rtol=0, atol=1e-9)


# ---------------------------------------------------------------- kernels vs numpy

@pytest.mark.kernel
@pytest.mark.parametrize("n_classes,reference", [(2, True), (4, False), (4, True)])
@pytest.mark.parametrize("sparse", [False, True])
def test_loss_grad_kernel_matches_numpy(n_classes, reference, sparse):
    X, codes = random_problem(n=600, n_classes=n_classes, seed=n_classes)
    rng = np.random.default_rng(1)
    K = n_classes - 1 if reference else n_classes
    W, b = rng.normal(size=(K, X.shape[1])), rng.normal(size=K)
    sw = rng.uniform(0.5, 2.0, size=len(X))
    loss_ref, gW_ref, gb_ref = logistic_loss_grad(X, codes, sw, W, b, reference)
    gW, gb = np.empty_like(W), np.empty_like(b)
    Xin = sp.csr_matrix(X) if sparse else X
    for threads in (1, 2):
        loss = _batch.loss_grad(Xin, codes.astype(np.float64), sw, W, b, gW, gb,
                                LOSSES["log"], 1 if reference else 0, reference,
                                threads)
        np.testing.assert_allclose(loss, loss_ref, rtol=1e-12)
        np.testing.assert_allclose(gW, gW_ref, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(gb, gb_ref, rtol=1e-12, atol=1e-12)


def engine_epoch(X, codes, K, reference, order, **kw):
    """An SGDEngine after one epoch in `order`, and the epoch's loss sum."""
    engine = SGDEngine(K, X.shape[1], X.dtype, loss="log", label_offset=1 if reference else 0,
                       reference=reference, **kw)
    Y = codes.astype(np.float64).reshape(-1, 1)
    loss_sum = engine.epoch(X, Y, np.ones(X.shape[0]), order.astype(np.intp), 0).loss
    return engine, loss_sum


def run_engine_epoch(X, codes, K, reference, order, **kw):
    return engine_epoch(X, codes, K, reference, order, **kw)[0]


@pytest.mark.kernel
@pytest.mark.parametrize("n_classes,reference", [(2, True), (3, False), (3, True)])
@pytest.mark.parametrize("schedule", ["constant", "inverse", "optimal"])
@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_sgd_epoch_matches_numpy(n_classes, reference, schedule, average, sparse):
    X, codes = random_problem(n=150, n_classes=n_classes, seed=3)
    order = np.random.default_rng(2).permutation(len(X))
    K = n_classes - 1 if reference else n_classes
    alpha = 0.01
    engine, loss_sum = engine_epoch(sp.csr_matrix(X) if sparse else X, codes, K, reference,
                                    order, learning_rate=schedule, eta0=0.05, alpha=alpha,
                                    average=average)
    t0 = engine.config["t0"]
    eta = {"constant": lambda t: 0.05, "inverse": lambda t: 0.05 / t,
           "optimal": lambda t: 1.0 / (alpha * (t0 + t - 1))}[schedule]
    losses = []
    W, b = sgd_epoch_log(X, codes, np.zeros((K, X.shape[1])), np.zeros(K), order, eta, alpha,
                         reference, average=average, losses=losses)
    np.testing.assert_allclose(engine.coef(), W, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(engine.intercept(), b, rtol=1e-12, atol=1e-13)
    # The epoch's loss: each row's loss before its step (binary rows add their log1p terms
    # 64 rows at a time, by the series: the same sum to rounding).
    assert loss_sum == pytest.approx(sum(losses), rel=1e-12)


@pytest.mark.kernel
@pytest.mark.parametrize("batch_size", [7, 64])
def test_minibatch_epoch_matches_numpy(batch_size):
    X, codes = random_problem(n=150, n_classes=3, seed=4)
    order = np.arange(len(X))
    engine = run_engine_epoch(X, codes, 3, False, order, learning_rate="decay", eta0=0.3,
                              alpha=0.02, batch_size=batch_size)
    W, b = sgd_epoch_log(X, codes, np.zeros((3, X.shape[1])), np.zeros(3), order,
                         lambda t: 0.3, 0.02, False, batch_size=batch_size)
    np.testing.assert_allclose(engine.coef(), W, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(engine.intercept(), b, rtol=1e-12, atol=1e-13)


@pytest.mark.kernel
def test_adagrad_epoch_matches_numpy():
    X, codes = random_problem(n=120, n_classes=2, seed=5)
    order = np.random.default_rng(3).permutation(len(X))
    engine, loss_sum = engine_epoch(X, codes, 1, True, order, learning_rate="adagrad",
                                    eta0=0.2, alpha=0.01)
    losses = []
    W, b = adagrad_epoch_log(X, codes, np.zeros((1, X.shape[1])), np.zeros(1), order, 0.2,
                             0.01, True, losses=losses)
    assert loss_sum == pytest.approx(sum(losses), rel=1e-7)     # measured: 3e-9
    # The kernel computes the rate 1 / (sqrt(G) + eps) in float32 (csrc/fastml_adagrad.h:
    # half the cost of float64's sqrt and division); the reference is all float64. The
    # weights agree to 1e-6 (measured: ~5e-8), and a wrong formula is off by far more.
    np.testing.assert_allclose(engine.coef(), W, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(engine.intercept(), b, rtol=1e-6, atol=1e-9)
    assert not np.allclose(engine.coef(), adagrad_epoch_log(
        X, codes, np.zeros((1, X.shape[1])), np.zeros(1), order, 0.2, 0.0, True)[0],
        rtol=1e-6, atol=1e-9)       # 1e-6 still tells alpha=0.01 from alpha=0


@pytest.mark.kernel
def test_sparse_adagrad_touches_only_present_features():
    X = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 1.0], [3.0, 0.0, 0.0]])
    codes = np.array([1, 0, 1])
    kw = dict(learning_rate="adagrad", eta0=0.2)
    # Without L2 the sparse and dense AdaGrad steps are the same.
    sparse = run_engine_epoch(sp.csr_matrix(X), codes, 1, True, np.arange(3), alpha=0.0, **kw)
    dense = run_engine_epoch(X, codes, 1, True, np.arange(3), alpha=0.0, **kw)
    np.testing.assert_allclose(sparse.coef(), dense.coef(), rtol=1e-12)
    # With L2, a row shrinks only the weights of its nonzero features, dense or sparse: w0 is
    # untouched by row 1 (x0 = 0) in both runs, which agree.
    sparse = run_engine_epoch(sp.csr_matrix(X), codes, 1, True, np.arange(2), alpha=0.5, **kw)
    dense = run_engine_epoch(X, codes, 1, True, np.arange(2), alpha=0.5, **kw)
    first = run_engine_epoch(X, codes, 1, True, np.arange(1), alpha=0.5, **kw)
    assert sparse.coef()[0, 0] == first.coef()[0, 0] == dense.coef()[0, 0]
    np.testing.assert_array_equal(sparse.coef(), dense.coef())


@pytest.mark.kernel
def test_l2_scale_is_folded_without_changing_the_model():
    # A huge alpha * eta drives the scale below 1e-9 quickly; the folded weights must equal the
    # plain recursion (with averaging on, A + B W must be preserved by the fold).
    X, codes = random_problem(n=100, n_classes=2, seed=6)
    order = np.arange(len(X))
    engine = run_engine_epoch(X, codes, 1, True, order, learning_rate="constant", eta0=0.5,
                              alpha=1.5, average=True)
    W, b = sgd_epoch_log(X, codes, np.zeros((1, 6)), np.zeros(1), order, lambda t: 0.5, 1.5,
                         True, average=True)
    np.testing.assert_allclose(engine.coef(), W, rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------- scikit-learn's optimum

@pytest.fixture(scope="module")
def breast_cancer():
    from sklearn.datasets import load_breast_cancer
    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    return X, y


def objective(model, X, y, alpha):
    p = model.predict_proba(X)[np.arange(len(y)), np.searchsorted(model.classes_, y)]
    return -np.mean(np.log(p)) + 0.5 * alpha * np.sum(model.coef_ ** 2)


@pytest.mark.parametrize("solver,max_iter", [("lbfgs", 1000), ("gd", 200000)])
def test_batch_solvers_reach_sklearn_objective(breast_cancer, solver, max_iter):
    from sklearn.linear_model import LogisticRegression as SkLR
    X, y = breast_cancer
    alpha = 1e-2
    sk = SkLR(C=1.0 / (alpha * len(y)), tol=1e-10, max_iter=10000).fit(X, y)
    ours = LogisticRegression(solver=solver, alpha=alpha, tol=1e-9, max_iter=max_iter).fit(X, y)
    f_sk, f_ours = objective(sk, X, y, alpha), objective(ours, X, y, alpha)
    assert abs(f_ours - f_sk) <= 1e-6 * f_sk
    np.testing.assert_allclose(ours.coef_, sk.coef_, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("solver", ["sgd", "minibatch"])
def test_sgd_lands_within_one_percent_of_optimum(breast_cancer, solver):
    X, y = breast_cancer
    alpha = 1e-2
    best = LogisticRegression(alpha=alpha, tol=1e-10, max_iter=1000).fit(X, y)
    sgd = LogisticRegression(solver=solver, alpha=alpha, max_iter=50, tol=None, batch_size=32,
                             random_state=0).fit(X, y)
    assert objective(sgd, X, y, alpha) <= 1.01 * objective(best, X, y, alpha)


# ---------------------------------------------------------------- multiclass forms

def test_multinomial_and_reference_agree_without_regularization():
    X, codes = random_problem(n=500, d=4, n_classes=3, seed=7)
    y = np.array(["a", "b", "c"])[codes]
    kw = dict(alpha=0.0, tol=1e-10, max_iter=2000)
    multi = LogisticRegression(multi_class="multinomial", **kw).fit(X, y)
    ref = LogisticRegression(multi_class="reference", **kw).fit(X, y)
    assert multi.coef_.shape == (3, 4) and ref.coef_.shape == (2, 4)
    np.testing.assert_allclose(multi.predict_proba(X), ref.predict_proba(X), atol=1e-6)
    # 002: class R is the reference: its margin is 0, the others are relative to it.
    np.testing.assert_allclose(ref.coef_, multi.coef_[:2] - multi.coef_[2], atol=1e-4)


def test_reference_form_probabilities_follow_lecture_002():
    X, codes = random_problem(n=300, d=3, n_classes=3, seed=8)
    model = LogisticRegression(multi_class="reference", alpha=0.1).fit(X, codes)
    M = X @ model.coef_.T + model.intercept_
    denom = 1.0 + np.exp(M).sum(axis=1)
    expected = np.column_stack([np.exp(M) / denom[:, None], 1.0 / denom])
    np.testing.assert_allclose(model.predict_proba(X), expected, rtol=1e-12)


# ---------------------------------------------------------------- dtypes, sparse, stability

@pytest.mark.parametrize("solver", ["lbfgs", "gd", "sgd"])
def test_float32_trains_in_float32_and_matches_float64(solver):
    X, codes = random_problem(n=400, d=5, seed=9)
    kw = dict(solver=solver, alpha=0.01, random_state=0, tol=None,
              max_iter={"lbfgs": 200, "gd": 2000, "sgd": 5}[solver])
    m64 = LogisticRegression(**kw).fit(X, codes)
    m32 = LogisticRegression(**kw).fit(X.astype(np.float32), codes)
    assert m32.coef_.dtype == np.float32
    np.testing.assert_allclose(m32.coef_, m64.coef_, rtol=2e-3, atol=2e-4)
    np.testing.assert_allclose(m32.predict_proba(X.astype(np.float32)), m64.predict_proba(X),
                               atol=1e-3)


@pytest.mark.parametrize("solver", ["lbfgs", "gd", "sgd", "minibatch"])
def test_csr_and_dense_give_the_same_model(solver):
    X, codes = random_problem(n=300, d=8, n_classes=3, seed=10)
    X[np.abs(X) < 0.7] = 0.0
    # (AdaGrad's L2 touches only a sparse row's stored features, so compare with a schedule
    # whose L2 is the exact scalar shrink.)
    kw = dict(solver=solver, alpha=0.01, random_state=0, max_iter=20, tol=None, batch_size=16,
              learning_rate="optimal")
    dense = LogisticRegression(**kw).fit(X, codes)
    sparse = LogisticRegression(**kw).fit(sp.csr_matrix(X), codes)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sparse.predict_proba(sp.csr_matrix(X)),
                               dense.predict_proba(X), rtol=1e-10)


@pytest.mark.parametrize("solver", ["lbfgs", "gd", "sgd"])
def test_huge_margins_stay_finite_and_silent(solver):
    X = np.array([[1e4], [-1e4], [2e4], [-2e4]])
    y = np.array([1, 0, 1, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        model = LogisticRegression(solver=solver, alpha=1e-3, max_iter=20, tol=None,
                                   random_state=0).fit(X, y)
        proba = model.predict_proba(X)
        logp = model.predict_log_proba(X)
    assert np.isfinite(proba).all() and np.isfinite(logp).all()
    assert (model.predict(X) == y).all()


def test_labels_of_any_type():
    X, codes = random_problem(n=200, d=3, seed=11)
    for labels in (np.array(["no", "yes"]), np.array([False, True]), np.array([-3, 7])):
        model = LogisticRegression().fit(X, labels[codes])
        assert (model.classes_ == labels).all()
        assert model.score(X, labels[codes]) > 0.7


def test_partial_fit_continues_and_matches_fit_epoch_by_epoch():
    X, codes = random_problem(n=300, d=4, seed=12)
    kw = dict(solver="sgd", alpha=1e-3, shuffle=False, learning_rate="constant", eta0=0.05)
    online = LogisticRegression(**kw)
    for _ in range(3):
        online.partial_fit(X, codes, classes=[0, 1])
    batch = LogisticRegression(max_iter=3, tol=None, **kw).fit(X, codes)
    np.testing.assert_allclose(online.coef_, batch.coef_, rtol=1e-12)
    assert online.n_iter_ == 3


def test_early_stopping_stops_and_records_losses():
    X, codes = random_problem(n=2000, d=5, seed=13)
    model = LogisticRegression(solver="sgd", early_stopping=True, max_iter=200, tol=1e-3,
                               n_iter_no_change=3, random_state=0).fit(X, codes)
    assert model.n_iter_ < 200
    assert len(model.loss_curve_) == model.n_iter_


@pytest.mark.parametrize("solver", ["sgd", "gd", "lbfgs"])
def test_verbose_reports_progress_and_silence_by_default(capsys, solver):
    X, codes = random_problem(n=100, d=3, seed=14)
    LogisticRegression(solver=solver, max_iter=2, tol=None, verbose=2).fit(X, codes)
    err = capsys.readouterr().err
    assert "[LogisticRegression" in err and ("loss=" in err or "objective=" in err)
    LogisticRegression(solver=solver, max_iter=2, tol=None, verbose=0).fit(X, codes)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


# ---------------------------------------------------------------- bad input and parameters

@pytest.mark.parametrize("params,match", [
    (dict(solver="irls"), "solver"),
    (dict(alpha=-1.0), "alpha"),
    (dict(learning_rate="fast"), "learning_rate"),
    (dict(max_iter=0), "max_iter"),
    (dict(solver="sgd", learning_rate="optimal", alpha=0.0), "alpha"),
    (dict(multi_class="ovr"), "multi_class"),
])
def test_bad_parameters_raise(params, match):
    X, codes = random_problem(n=50, d=3)
    with pytest.raises(ValueError, match=match):
        LogisticRegression(**params).fit(X, codes)


def test_partial_fit_needs_classes_and_rejects_unseen_labels():
    X, codes = random_problem(n=50, d=3)
    model = LogisticRegression(solver="sgd")
    with pytest.raises(ValueError, match="classes"):
        model.partial_fit(X, codes)
    model.partial_fit(X, codes, classes=[0, 1])
    with pytest.raises(ValueError, match="not in classes_"):
        model.partial_fit(X, np.full(len(X), 5))


def test_divergence_is_reported():
    X, codes = random_problem(n=200, d=3)
    with pytest.raises(FloatingPointError, match="diverged"):
        LogisticRegression(solver="sgd", learning_rate="constant", eta0=1e300, alpha=0.0,
                           max_iter=3, tol=None).fit(X * 1e10, codes)


# The scikit-learn checks fastml fails on purpose, with the reason (all others must pass).
# (none left: fastml's NotFittedError is scikit-learn's too once scikit-learn is imported)
SKLEARN_EXPECTED_FAILURES = {}


def test_sklearn_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator
    results = check_estimator(LogisticRegression(max_iter=500), on_fail=None)
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    assert failed == set(SKLEARN_EXPECTED_FAILURES), failed ^ set(SKLEARN_EXPECTED_FAILURES)


# ---------------------------------------------------------------- edge cases found in review

@pytest.mark.kernel
@pytest.mark.parametrize("solver", ["lbfgs", "gd", "sgd"])
def test_csr_without_stored_values(solver):
    # Every row all-zero: the kernels must not touch an empty buffer (debug build checks).
    X = sp.csr_matrix((40, 3))
    y = np.arange(40) % 2
    model = LogisticRegression(solver=solver, max_iter=5, tol=None, random_state=0).fit(X, y)
    np.testing.assert_array_equal(model.coef_, 0.0)
    np.testing.assert_allclose(model.predict_proba(X), 0.5, atol=0.01)  # balanced classes


@pytest.mark.parametrize("first,second", [(np.float64, np.float32), (np.float32, np.float64)])
def test_partial_fit_accepts_the_other_float_type(first, second):
    X, codes = random_problem(n=100, d=3, seed=15)
    model = LogisticRegression(solver="sgd", random_state=0)
    model.partial_fit(X.astype(first), codes, classes=[0, 1])
    model.partial_fit(X.astype(second), codes)
    assert model.coef_.dtype == first


def test_average_zero_means_no_averaging():
    X, codes = random_problem(n=100, d=3, seed=16)
    kw = dict(solver="sgd", max_iter=3, tol=None, random_state=0)
    plain = LogisticRegression(**kw).fit(X, codes)
    zero = LogisticRegression(average=0, **kw).fit(X, codes)
    np.testing.assert_array_equal(plain.coef_, zero.coef_)
    with pytest.raises(ValueError, match="average"):
        LogisticRegression(average=-2, **kw).fit(X, codes)


def _numpy_gradient(model, X, y, alpha):
    """The gradient of mean log-loss + alpha/2 |w|^2 at the model's binary weights (numpy)."""
    w, b = model.coef_.ravel().astype(float), float(model.intercept_[0])
    p = 1.0 / (1.0 + np.exp(-(X @ w + b)))
    return np.append(X.T @ (p - y) / len(y) + alpha * w, np.mean(p - y))


@pytest.mark.parametrize("tol", [1e-6, 1e-8, 1e-10])
def test_lbfgs_stops_on_the_gradient_as_documented(tol):
    """solver="lbfgs" stops at max|grad| <= tol, or warns (ConvergenceWarning) that it could
    not: scipy's relative-reduction test once stopped such runs early, silently."""
    from fastml.exceptions import ConvergenceWarning
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 5))
    y = (X @ np.arange(1.0, 6.0) + rng.normal(size=300) > 0).astype(float)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = LogisticRegression(solver="lbfgs", tol=tol, max_iter=1000, alpha=1e-3).fit(X, y)
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    gmax = np.max(np.abs(_numpy_gradient(model, X, y, 1e-3)))
    assert (gmax <= tol * 1.01) != warned
    if tol >= 1e-8:         # well above float64's floor on this problem: reached
        assert not warned


def test_lbfgs_warns_when_it_cannot_reach_tol():
    from fastml.exceptions import ConvergenceWarning
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 5))
    y = (X[:, 0] + rng.normal(size=300) > 0).astype(float)
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        LogisticRegression(solver="lbfgs", tol=1e-10, max_iter=3).fit(X, y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = LogisticRegression(solver="lbfgs", tol=1e-14, max_iter=10000).fit(X, y)
    gmax = np.max(np.abs(_numpy_gradient(model, X, y, 1e-4)))
    assert gmax <= 1e-14 or any(issubclass(w.category, ConvergenceWarning) for w in caught)


class _CountingPasses:
    """Counts the passes a gd fit makes over X: every call of the batch kernel (one fused
    pass) and of the row-norm pass behind the default step."""

    def __init__(self, monkeypatch):
        from fastml.linear_model import _logistic
        self.calls = 0
        kernel, norms = _logistic._batch.loss_grad, _logistic.squared_row_norms

        def counted(fn):
            def wrapper(*args, **kwargs):
                self.calls += 1
                return fn(*args, **kwargs)
            return wrapper

        class Kernels:
            loss_grad = staticmethod(counted(kernel))
        monkeypatch.setattr(_logistic, "_batch", Kernels)
        monkeypatch.setattr(_logistic, "squared_row_norms", counted(norms))


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("sparse", [False, True])
def test_default_gd_reads_X_at_most_T_plus_2_times(monkeypatch, n_classes, sparse):
    """Issue 13: the default step comes from one pass, not a power iteration (~45 passes)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 6)) * [1, 2, 3, 1, 0.5, 4]
    y = np.argmax(X[:, :n_classes] + rng.normal(size=(300, n_classes)), axis=1)
    counter = _CountingPasses(monkeypatch)
    T = 25
    model = LogisticRegression(solver="gd", max_iter=T, tol=None).fit(
        sp.csr_matrix(X) if sparse else X, y)
    assert model.n_iter_ == T
    assert counter.calls <= T + 2


@pytest.mark.parametrize("multi_class", ["multinomial", "reference"])
def test_default_gd_step_reaches_lbfgs_optimum(breast_cancer, multi_class):
    """The adaptive step (Frobenius start, growth by curvature, halving on a rise) converges
    to the optimum that lbfgs finds, with a loss curve that never rises (beyond rounding:
    near the optimum f changes by an ulp, and the step at the 1/L floor is always kept)."""
    X, y = breast_cancer
    y3 = np.where(X[:, 0] > 1, 2, y)
    for target in (y, y3):
        kw = dict(alpha=1e-2, multi_class=multi_class)
        best = LogisticRegression(tol=1e-10, max_iter=1000, **kw).fit(X, target)
        gd = LogisticRegression(solver="gd", tol=None, max_iter=3000, **kw).fit(X, target)
        f_best = objective(best, X, target, 1e-2)
        assert objective(gd, X, target, 1e-2) <= f_best * (1 + 1e-9)
        assert np.all(np.diff(gd.loss_curve_) <= 1e-13 * abs(f_best))


def test_default_gd_step_starts_at_the_frobenius_bound():
    """The first trial step is 1/L with L = (1/4) sum_i sw_i (||x_i||^2 + 1) / sum_i sw_i +
    alpha (binary log-loss): after one step the weights are -eta * gradient at 0."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 4))
    y = (X[:, 0] + rng.normal(size=200) > 0).astype(int)
    sw = rng.uniform(0.5, 2.0, size=200)
    alpha = 0.1
    L = 0.25 * np.sum(sw * (np.sum(X ** 2, axis=1) + 1)) / sw.sum() + alpha
    model = LogisticRegression(solver="gd", max_iter=1, tol=None, alpha=alpha).fit(
        X, y, sample_weight=sw)         # max_iter=1 is one step (it was 2: see test_gd_...)
    # the gradient of the mean weighted log-loss at w = 0, b = 0 (p = 1/2)
    r = (0.5 - y) * sw / sw.sum()
    np.testing.assert_allclose(model.coef_.ravel(), -(X.T @ r) / L, rtol=1e-12)
    np.testing.assert_allclose(model.intercept_, [-r.sum() / L], rtol=1e-12)


@pytest.mark.parametrize("solver", ["lbfgs", "gd"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batch_solvers_name_a_non_finite_x_found_by_their_first_pass(solver, dtype):
    """lbfgs and gd skip the up-front finiteness read of X: their first gradient pass is the
    check (see _Objective). Any NaN / inf cell, in any row (weight 0 included), for either
    output layout, must still give the named error, leave the model unfitted and X intact."""
    for trial, X, y, sw, message in non_finite_problems(np.random.default_rng(7), 60, 40,
                                                         dtype):
        given = X.copy()
        model = LogisticRegression(solver=solver, max_iter=3, fit_intercept=trial % 4 < 2,
                                   multi_class=("multinomial", "reference")[trial % 2])
        with pytest.raises(ValueError, match=message):
            model.fit(X, y, sample_weight=sw)
        assert not hasattr(model, "coef_")
        np.testing.assert_array_equal(X, given)


def test_batch_fit_on_finite_x_skips_the_separate_finiteness_read(monkeypatch):
    """On finite X the deferred check never runs the separate read of X."""
    import fastml.linear_model._logistic as logistic
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(500, 6)), rng.integers(0, 3, 500)
    calls = []
    monkeypatch.setattr(logistic, "_check_finite", lambda *a, **k: calls.append(a))
    for solver in ("lbfgs", "gd"):
        LogisticRegression(solver=solver, max_iter=5).fit(X, y)
    assert calls == []


# ---------------------------------------------------------------- an outside audit


@pytest.mark.parametrize("T", [1, 2, 5])
@pytest.mark.parametrize("sparse", [False, True])
def test_gd_max_iter_is_the_number_of_steps(monkeypatch, T, sparse):
    """max_iter=T takes T gradient steps, as scikit-learn counts iterations (it took T - 1:
    the first iteration only evaluated the start, and max_iter=1 returned w = 0); numpy's
    steps w <- w - eta0 grad at a constant eta0, n_iter_ = T, loss_curve_ the objective
    after each step, and T + 1 passes over X (the start's and one per step)."""
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 0, 1, 1])
    w, b, curve = 0.0, 0.0, []
    for _ in range(T):
        r = 1.0 / (1.0 + np.exp(-(X[:, 0] * w + b))) - y
        w, b = w - np.mean(r * X[:, 0]), b - np.mean(r)
        m = X[:, 0] * w + b
        curve.append(np.mean(np.logaddexp(0.0, m) - y * m))
    counter = _CountingPasses(monkeypatch)
    model = LogisticRegression(solver="gd", eta0=1.0, alpha=0.0, max_iter=T, tol=None).fit(
        sp.csr_matrix(X) if sparse else X, y)
    assert model.n_iter_ == T and counter.calls == T + 1
    np.testing.assert_allclose(model.coef_, [[w]], rtol=1e-12)
    np.testing.assert_allclose(model.intercept_, [b], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(model.loss_curve_, curve, rtol=1e-12)
    if T == 1:
        assert model.coef_[0, 0] == pytest.approx(0.5, rel=1e-14)   # the audit's number


def test_gd_stops_before_any_step_at_an_optimal_start():
    """A start whose gradient already meets tol takes no step: n_iter_ = 0."""
    model = LogisticRegression(solver="gd").fit(np.zeros((4, 2)), [0, 1, 0, 1])
    assert model.n_iter_ == 0 and model.loss_curve_ == []
    np.testing.assert_array_equal(model.coef_, 0.0)


def test_infinite_margins_give_probabilities_0_and_1_never_nan():
    """The audit's cases: a margin that overflows to +-inf on finite X (float32 1e38 x 12)
    gave NaN (logaddexp(0, inf) - inf, inf - inf in the softmax). P must be the limit of
    the softmax as the margins grow, which scipy's softmax of margins +-1e300 shows: 1 / 0,
    shared equally among classes tied at +inf; log P 0 / -inf."""
    from scipy.special import log_softmax, softmax
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 2)).astype(np.float32)
    y = (X[:, 0] - X[:, 1] > 0).astype(int)
    huge = np.array([[1e38, -1e38], [-1e38, 1e38]], dtype=np.float32)
    binary = LogisticRegression().fit(X, y)
    assert binary.coef_[0, 0] > 1 and binary.coef_[0, 1] < -1      # margins +inf, -inf
    limit = softmax(np.array([[0.0, 1e300], [0.0, -1e300]]), axis=1)
    np.testing.assert_array_equal(binary.predict_proba(huge), limit)
    np.testing.assert_array_equal(binary.predict_log_proba(huge),
                                  [[-np.inf, 0.0], [0.0, -np.inf]])
    np.testing.assert_array_equal(binary.predict(huge), [1, 0])
    three = LogisticRegression().fit(X, np.digitize(X[:, 0] - X[:, 1], [-0.5, 0.5]))
    P = three.predict_proba(huge)
    margins = three.decision_function(huge).astype(float)  # +-inf but the middle class's
    assert np.isinf(margins[:, [0, 2]]).all()
    np.testing.assert_array_equal(P, softmax(np.clip(margins, -1e300, 1e300), axis=1))
    np.testing.assert_array_equal(P, [[0, 0, 1], [1, 0, 0]])
    wide = LogisticRegression().fit(X.astype(float), y)
    np.testing.assert_array_equal(wide.predict_proba([[1e308, -1e308]]), [[0.0, 1.0]])
    # two classes tied at +inf share the row: the limit of softmax([m, m, -m])
    wide3 = LogisticRegression().fit(X.astype(float), np.digitize(X[:, 0], [-0.5, 0.5]))
    wide3.coef_ = np.array([[2.0, 0.0], [2.0, 0.0], [-2.0, 0.0]])
    wide3.intercept_ = np.zeros(3)
    np.testing.assert_array_equal(wide3.predict_proba([[1e308, 0.0]]),
                                  softmax([[1e300, 1e300, -1e300]], axis=1))
    np.testing.assert_allclose(wide3.predict_log_proba([[1e308, 0.0]]),
                               [[-np.log(2), -np.log(2), -np.inf]], rtol=1e-15)
    # large finite margins keep full relative accuracy: log P(1) = -log1p(e^-m) for m > 0
    # (scipy's log_softmax rounds -4.2e-18 at m = 40 to 0), -|m| - log1p(e^-|m|) for m < 0
    m = np.array([-800.0, -40.0, 0.0, 40.0, 800.0])
    soft = np.abs(m) + np.log1p(np.exp(-np.abs(m)))          # softplus(|m|)
    small = np.log1p(np.exp(-np.abs(m)))                      # softplus(-|m|)
    want = -np.c_[np.where(m > 0, soft, small), np.where(m > 0, small, soft)]
    np.testing.assert_allclose(binary._log_proba_from_margins(m[:, None]), want, rtol=1e-15)
    np.testing.assert_allclose(want, log_softmax(np.c_[np.zeros(5), m], axis=1),
                               rtol=1e-15, atol=1e-17)


def test_a_nan_margin_raises_a_clear_error():
    """A margin that is inf - inf (two terms of X w overflow with opposite signs) has no
    class: predict_proba, predict_log_proba, decision_function and predict raise, naming
    the row, instead of returning NaN or reading it as the negative class."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 2)).astype(np.float32)
    model = LogisticRegression().fit(X, (X[:, 0] - X[:, 1] > 0).astype(int))
    bad = np.array([[1.0, 1.0], [1e38, 1e38]], dtype=np.float32)
    for method in (model.predict_proba, model.predict_log_proba, model.decision_function,
                   model.predict):
        with pytest.raises(ValueError, match="margin of row 1 is NaN.*inf - inf"):
            method(bad)


@pytest.mark.parametrize("solver", ["sgd", "minibatch"])
def test_sgd_sample_weights_count_relative_to_their_mean(solver):
    """The batch solvers minimize sum_i s_i l_i / sum_i s_i + alpha/2 ||w||^2: scaling every
    weight by c changes nothing. SGD used to take the weights as given (sum_i s_i l_i / n),
    so c acted as alpha / c (the audit: coef 0.505 -> 0.786 for c = 10). Now the SGD fit
    is the same up to rounding, and integer weights give scikit-learn's optimum on the rows
    repeated (C = 1 / (alpha N)), as the lbfgs fit does."""
    from sklearn.linear_model import LogisticRegression as SkLR
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3))
    y = (X @ [1.0, -2.0, 0.5] + rng.logistic(size=600) > 0).astype(int)
    counts = rng.integers(1, 5, 600)
    alpha = 0.05
    params = dict(alpha=alpha, solver=solver, batch_size=16, learning_rate="optimal",
                  average=True, max_iter=200, tol=None, random_state=0)
    model = LogisticRegression(**params).fit(X, y, sample_weight=counts)
    scaled = LogisticRegression(**params).fit(X, y, sample_weight=10.0 * counts)
    np.testing.assert_allclose(scaled.coef_, model.coef_, rtol=1e-9)
    np.testing.assert_allclose(scaled.intercept_, model.intercept_, rtol=1e-9)
    np.testing.assert_allclose(scaled.loss_curve_, model.loss_curve_, rtol=1e-9)
    rows = np.repeat(np.arange(600), counts)
    ref = SkLR(C=1.0 / (alpha * len(rows)), tol=1e-12, max_iter=10000).fit(X[rows], y[rows])
    np.testing.assert_allclose(model.coef_, ref.coef_, rtol=1e-2)
    np.testing.assert_allclose(model.intercept_, ref.intercept_, atol=5e-3)


def test_sgd_partial_fit_weights_are_relative_to_the_rows_seen():
    """partial_fit: the weights count relative to their mean over every row given so far,
    so scaling all of them (every chunk) by c changes nothing either."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] + rng.normal(size=300) > 0).astype(int)
    sw = rng.uniform(0.5, 3.0, size=300)
    models = []
    for c in (1.0, 1000.0):
        model = LogisticRegression(solver="sgd", alpha=0.01, learning_rate="optimal",
                                   random_state=0)
        for rows in (slice(0, 100), slice(100, 250), slice(250, 300)):
            model.partial_fit(X[rows], y[rows], classes=[0, 1], sample_weight=c * sw[rows])
        models.append(model)
    np.testing.assert_allclose(models[1].coef_, models[0].coef_, rtol=1e-9)
    assert models[0]._engine.rows_seen == 300
    assert models[0]._engine.weight_seen == pytest.approx(sw.sum(), rel=1e-12)


def test_early_stopping_holds_out_rows_in_fit_only():
    """partial_fit never stops early, so with early_stopping=True it must still train on
    every row (it held out validation_fraction of the first chunk and never trained on
    them: 50 steps of 100 in the audit): the same model as without early stopping. fit
    still holds them out."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    y = (X[:, 0] > 0).astype(int)
    kw = dict(solver="sgd", shuffle=False, random_state=0)
    plain = LogisticRegression(**kw).partial_fit(X, y, classes=[0, 1])
    stopping = LogisticRegression(early_stopping=True, validation_fraction=0.5, **kw)
    stopping.partial_fit(X, y, classes=[0, 1])
    assert stopping._engine.n_steps == plain._engine.n_steps == 100
    np.testing.assert_array_equal(stopping.coef_, plain.coef_)
    stopping.partial_fit(X, y)
    assert stopping._engine.n_steps == 200
    fitted = LogisticRegression(early_stopping=True, validation_fraction=0.5, max_iter=1,
                                **kw).fit(X, y)
    assert fitted._engine.n_steps == 50


def test_solver_docstring_lists_every_solver():
    from fastml.linear_model._logistic import SOLVERS
    doc = LogisticRegression.__doc__
    line = doc[doc.index("solver :"):].splitlines()[0]
    assert all(f'"{solver}"' in line for solver in SOLVERS), line


@pytest.mark.parametrize("solver", ["lbfgs", "gd", "newton"])
def test_float32_data_are_solved_in_float64(solver):
    """The batch kernel's weights are float64 whatever X's dtype: float32 X reaches a tol far
    below float32's rounding, on the same path (iterations) as float64 X holding the same
    values, and coef_ is that optimum rounded to float32."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 5)).astype(np.float32)
    y = (X[:, 0] + rng.normal(size=500) > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        single = LogisticRegression(solver=solver, tol=1e-9, max_iter=5000).fit(X, y)
        double = LogisticRegression(solver=solver, tol=1e-9, max_iter=5000).fit(
            X.astype(np.float64), y)
    assert single.n_iter_ == double.n_iter_
    assert single.coef_.dtype == np.float32
    np.testing.assert_array_equal(single.coef_, double.coef_.astype(np.float32))


def test_lbfgs_precision_warning_names_float64():
    from fastml.exceptions import ConvergenceWarning
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 5))
    y = (X[:, 0] + rng.normal(size=500) > 0).astype(int)
    with pytest.warns(ConvergenceWarning, match="tol is below what float64 arithmetic"):
        LogisticRegression(tol=1e-14, max_iter=10000).fit(X, y)
