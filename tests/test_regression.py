"""LinearRegression, Ridge and their statistics: lecture 004's normal equation on a worked case,
the Gram kernel against numpy, numpy.linalg.lstsq and scikit-learn's LinearRegression / Ridge
to 1e-8, rank-deficient X, mergeable statistics, SGD against the closed form, dtypes."""
import warnings

import numpy as np
import pytest
from scipy.linalg import LinAlgWarning

from fastml import LinearRegression, LinearStats, Ridge
from fastml.linear_model import _regression_fast as _linreg


def problem(n=300, d=6, n_targets=None, seed=0, dtype=np.float64, offset=0.0):
    """Well-conditioned random data; y is (n,) for n_targets None, else (n, n_targets)."""
    rng = np.random.default_rng(seed)
    X = (rng.normal(size=(n, d)) + offset).astype(dtype)
    K = 1 if n_targets is None else n_targets
    Y = X.astype(np.float64) @ rng.normal(size=(d, K)) + 1.5 + 0.3 * rng.normal(size=(n, K))
    return X, (Y[:, 0] if n_targets is None else Y)


def lstsq_reference(X, y, fit_intercept):
    """numpy.linalg.lstsq on the explicitly centered (or raw) data, as (coef, intercept) in
    scikit-learn's shapes."""
    X = X.astype(np.float64)
    Y = y.reshape(len(y), -1)
    xm = X.mean(axis=0) if fit_intercept else np.zeros(X.shape[1])
    ym = Y.mean(axis=0) if fit_intercept else np.zeros(Y.shape[1])
    W = np.linalg.lstsq(X - xm, Y - ym, rcond=None)[0].T
    b = ym - W @ xm
    return (W[0], b[0]) if y.ndim == 1 else (W, b)


def assert_rel(actual, desired, rtol):
    actual, desired = np.asarray(actual, np.float64), np.asarray(desired, np.float64)
    err = np.linalg.norm(actual - desired) / max(np.linalg.norm(desired), 1e-300)
    assert err <= rtol, f"relative error {err:.3g} > {rtol:g}"


# ---------------------------------------------------------------- lecture 004

def test_lecture_004_normal_equation_on_a_line():
    # 004, "Normal Equation": w = (X^T X)^-1 X^T y. Points on y = 1 + 2x (with the column of
    # ones for w0): X^T X = [[3, 3], [3, 5]], X^T y = [9, 13] -> w = (1, 2).
    x = np.array([[0.0], [1.0], [2.0]])
    y = np.array([1.0, 3.0, 5.0])
    model = LinearRegression().fit(x, y)
    assert model.intercept_ == pytest.approx(1.0, abs=1e-14)
    np.testing.assert_allclose(model.coef_, [2.0], atol=1e-14)
    # the same through an explicit column of ones and no intercept
    ones = LinearRegression(fit_intercept=False).fit(np.c_[np.ones(3), x], y)
    np.testing.assert_allclose(ones.coef_, [1.0, 2.0], atol=1e-13)


# ---------------------------------------------------------------- the Gram kernel

@pytest.mark.kernel
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n_threads,block_rows,pad", [(1, 7, 0), (3, 5, 3), (2, 4096, 8)])
@pytest.mark.parametrize("order", ["C", "F"])
def test_gram_kernel_matches_numpy(dtype, weighted, n_threads, block_rows, pad, order):
    rng = np.random.default_rng(1)
    n, d, K = 53, 5, 2
    X = np.asarray(rng.normal(size=(n, d)).astype(dtype), order=order)
    Y = rng.normal(size=(n, K))
    sw = rng.uniform(0, 2, size=n) if weighted else np.empty(0)
    xs, ys = rng.normal(size=d), rng.normal(size=K)
    p = d + 1 + K
    G0 = rng.normal(size=(p + pad, p + pad))
    G0 = G0 + G0.T  # the kernel adds to what is there
    G = _linreg.gram_accumulate(X, Y, sw, xs, ys, G0.copy(), block_rows, n_threads)
    root = np.sqrt(sw if weighted else np.ones(n))[:, None]
    Z = np.c_[X.astype(np.float64) - xs, np.ones(n), Y - ys, np.zeros((n, pad))] * root
    np.testing.assert_allclose(np.asarray(G), G0 + Z.T @ Z, rtol=1e-12, atol=1e-12)


@pytest.mark.kernel
def test_gram_kernel_rejects_inconsistent_shapes():
    X, Y = np.zeros((4, 3)), np.zeros((4, 1))
    with pytest.raises(ValueError, match="inconsistent"):
        _linreg.gram_accumulate(X, Y, np.empty(0), np.zeros(3), np.zeros(1), np.zeros((4, 4)))
    with pytest.raises(ValueError, match="C- or F-contiguous"):
        _linreg.gram_accumulate(np.zeros((4, 6))[:, ::2], Y, np.empty(0), np.zeros(3),
                                np.zeros(1), np.zeros((8, 8)))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n, d, n_jobs", [(5000, 13, None), (3000, 1, 2), (1, 4, None)])
def test_column_major_statistics_equal_row_major(weighted, n, d, n_jobs):
    # fit_stream hands LinearStats column-major chunks (one memcpy per Arrow column): the same
    # shift and the same block values; only dsyrk's summation order (A^T A on the transposed
    # block) may differ, by a few ulps
    X, Y = problem(n=n, d=d, n_targets=2, seed=21, offset=40.0)
    sw = np.random.default_rng(22).uniform(0.1, 3.0, size=n) if weighted else None
    rows = LinearStats.from_data(X, Y, sw, n_jobs)
    columns = LinearStats.from_data(np.asfortranarray(X), Y, sw, n_jobs)
    assert not np.shares_memory(columns.Sxx, X)
    np.testing.assert_array_equal(columns.y_mean, rows.y_mean)
    for name in ("x_mean", "Sxx", "Sxy", "Syy"):
        assert_rel(getattr(columns, name), getattr(rows, name), 1e-14)
    assert_rel(LinearRegression().fit_stats(columns).coef_,
               LinearRegression().fit_stats(rows).coef_, 1e-12)


# ---------------------------------------------------------------- closed forms vs references

@pytest.mark.parametrize("solver", ["normal", "lstsq"])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("n_targets", [None, 3])
def test_matches_numpy_lstsq_and_sklearn(solver, fit_intercept, n_targets):
    from sklearn.linear_model import LinearRegression as SkLinearRegression
    X, y = problem(n_targets=n_targets, offset=2.0)
    model = LinearRegression(solver=solver, fit_intercept=fit_intercept).fit(X, y)
    coef, intercept = lstsq_reference(X, y, fit_intercept)
    sk = SkLinearRegression(fit_intercept=fit_intercept).fit(X, y)
    for ref_coef, ref_intercept in [(coef, intercept), (sk.coef_, sk.intercept_)]:
        assert np.shape(model.coef_) == np.shape(ref_coef)
        assert_rel(model.coef_, ref_coef, 1e-8)
        assert_rel(model.intercept_, ref_intercept, 1e-8) if fit_intercept else None
    if not fit_intercept:
        assert np.all(np.asarray(model.intercept_) == 0)
    assert model.rank_ == X.shape[1]
    assert model.predict(X).shape == y.shape


@pytest.mark.parametrize("solver", ["normal", "lstsq"])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("n_targets", [None, 2])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("alpha", [0.3, 1.0, 250.0])
def test_ridge_alpha_is_scikit_learns(solver, fit_intercept, n_targets, weighted, alpha):
    # issue 15: the same name means the same thing: penalty alpha ||w||^2 on the (weighted) SUM
    # of squared residuals, as sklearn.linear_model.Ridge(alpha).
    from sklearn.linear_model import Ridge as SkRidge
    X, y = problem(n_targets=n_targets, seed=2)
    sw = np.random.default_rng(3).uniform(0.5, 2.0, size=len(X)) if weighted else None
    model = Ridge(alpha=alpha, solver=solver, fit_intercept=fit_intercept).fit(X, y, sw)
    sk = SkRidge(alpha=alpha, fit_intercept=fit_intercept, solver="cholesky", tol=1e-12)
    sk.fit(X, y, sample_weight=sw)
    assert_rel(model.coef_, sk.coef_, 1e-10)
    assert_rel(model.intercept_, sk.intercept_, 1e-10) if fit_intercept else None


def test_ridge_default_alpha_is_scikit_learns():
    from sklearn.linear_model import Ridge as SkRidge
    assert Ridge().alpha == SkRidge().alpha == 1.0
    X, y = problem(n=50, seed=21)
    assert_rel(Ridge().fit(X, y).coef_, SkRidge().fit(X, y).coef_, 1e-10)


def test_ridge_on_many_rows_is_not_the_mean_loss_lambda():
    # The case, scaled down: alpha=1 on many rows barely shrinks (sklearn's meaning);
    # the old meaning (001's lambda on the mean loss, alpha * n here) shrank the weights to
    # near zero and gave an RMSE several times the noise.
    rng = np.random.default_rng(22)
    X = rng.standard_normal((20000, 20))
    y = X @ rng.standard_normal(20) + rng.standard_normal(20000)
    def rmse(model):
        return np.sqrt(np.mean((model.fit(X, y).predict(X) - y) ** 2))
    assert rmse(Ridge(alpha=1.0)) == pytest.approx(rmse(LinearRegression()), rel=1e-6)
    assert rmse(Ridge(alpha=1.0 * len(X))) > 1.5 * rmse(LinearRegression())  # the old meaning


@pytest.mark.parametrize("weighted", [False, True])
def test_lecture_001_lambda_is_alpha_over_n(weighted):
    # 001: min (1/n) sum (y - <w,x> - b)^2 + lambda ||w||^2 (with weights, (1/sum s) sum s_i ...);
    # documented mapping alpha = n * lambda (sum of the weights). Its gradient vanishes there.
    X, y = problem(seed=4)
    s = np.random.default_rng(5).uniform(0.5, 2.0, size=len(X)) if weighted else np.ones(len(X))
    lam = 0.5
    model = Ridge(alpha=s.sum() * lam).fit(X, y, s if weighted else None)
    r = y - X @ model.coef_ - model.intercept_
    grad_w = -2 / s.sum() * X.T @ (s * r) + 2 * lam * model.coef_
    grad_b = -2 / s.sum() * (s * r).sum()
    assert np.abs(grad_w).max() < 1e-10 and abs(grad_b) < 1e-10


def test_ridge_intercept_is_not_penalized():
    X, y = problem(seed=5)
    a = Ridge(alpha=2.0).fit(X, y)
    b = Ridge(alpha=2.0).fit(X, y + 100.0)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-10)
    assert b.intercept_ == pytest.approx(a.intercept_ + 100.0, rel=1e-12)


def test_ridge_alpha_zero_is_linear_regression():
    X, y = problem(seed=6)
    np.testing.assert_allclose(Ridge(alpha=0.0).fit(X, y).coef_,
                               LinearRegression().fit(X, y).coef_, rtol=1e-12)


@pytest.mark.parametrize("solver", ["normal", "lstsq"])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("n_targets", [None, 2])
def test_float32_input(solver, fit_intercept, n_targets):
    # Statistics are accumulated in float64, so the float32 model matches scikit-learn on the
    # same (float32-representable) numbers up to float32 rounding of the result.
    from sklearn.linear_model import LinearRegression as SkLinearRegression
    X, y = problem(n_targets=n_targets, seed=7, dtype=np.float32, offset=1.0)
    model = LinearRegression(solver=solver, fit_intercept=fit_intercept).fit(X, y)
    sk = SkLinearRegression(fit_intercept=fit_intercept).fit(X.astype(np.float64), y)
    assert model.coef_.dtype == np.float32
    assert model.predict(X).dtype == np.float32
    assert_rel(model.coef_, sk.coef_, 1e-6)
    assert_rel(model.intercept_, sk.intercept_, 1e-6) if fit_intercept else None


def test_large_feature_means_keep_full_accuracy():
    # The kernel shifts by a pilot mean before forming the Gram matrix, so centering does not
    # cancel catastrophically (an uncentered X^T X - n m m^T would lose ~8 digits here).
    X, y = problem(seed=8, offset=1e4)
    coef, intercept = lstsq_reference(X, y, True)
    model = LinearRegression().fit(X, y)
    assert_rel(model.coef_, coef, 1e-8)
    assert_rel(model.intercept_, intercept, 1e-8)


def test_sample_weight_equals_repeated_rows():
    X, y = problem(n=40, seed=9)
    counts = np.random.default_rng(10).integers(0, 4, size=len(X))
    a = LinearRegression().fit(X, y, sample_weight=counts)
    b = LinearRegression().fit(np.repeat(X, counts, axis=0), np.repeat(y, counts))
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9)
    assert a.intercept_ == pytest.approx(b.intercept_, rel=1e-9)


# ---------------------------------------------------------------- rank deficiency

@pytest.mark.parametrize("fit_intercept", [True, False])
def test_duplicated_column_warns_and_gives_the_minimum_norm_solution(fit_intercept):
    X, y = problem(seed=11)
    X = np.c_[X, X[:, 2]]  # rank d - 1
    coef, intercept = lstsq_reference(X, y, fit_intercept)  # numpy: minimum norm
    with pytest.warns(LinAlgWarning, match="ill-conditioned"):
        model = LinearRegression(fit_intercept=fit_intercept).fit(X, y)
    assert np.isfinite(model.coef_).all()
    assert model.rank_ == X.shape[1] - 1
    assert_rel(model.coef_, coef, 1e-8)
    assert model.coef_[2] == pytest.approx(model.coef_[-1], rel=1e-8)  # split evenly
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # lstsq is made for this: no warning
        direct = LinearRegression(solver="lstsq", fit_intercept=fit_intercept).fit(X, y)
    assert direct.rank_ == X.shape[1] - 1
    assert_rel(direct.coef_, coef, 1e-8)


def test_rank_deficient_statistics_give_the_minimum_norm_solution():
    # Without the data (partial_fit / fit_stats), the fallback is the pseudo-inverse of the
    # normal equations, which is the same minimum-norm solution.
    X, y = problem(seed=12)
    X = np.c_[X, -X[:, 0]]
    coef, intercept = lstsq_reference(X, y, True)
    with pytest.warns(LinAlgWarning):
        model = LinearRegression().partial_fit(X, y)
    assert model.rank_ == X.shape[1] - 1
    assert_rel(model.coef_, coef, 1e-7)
    assert model.intercept_ == pytest.approx(intercept, rel=1e-7)


def test_constant_target_and_constant_feature_stay_finite():
    X, _ = problem(n=20, seed=13)
    X[:, 1] = 3.0
    with pytest.warns(LinAlgWarning):
        model = LinearRegression().fit(X, np.full(20, 2.0))
    assert np.isfinite(model.coef_).all() and model.intercept_ == pytest.approx(2.0)
    np.testing.assert_allclose(model.predict(X), 2.0, atol=1e-12)


def test_single_row_fits_it_exactly():
    with pytest.warns(LinAlgWarning):
        model = LinearRegression().fit(np.array([[1.0, 2.0]]), np.array([3.0]))
    np.testing.assert_allclose(model.predict(np.array([[1.0, 2.0]])), [3.0])


# ---------------------------------------------------------------- statistics: a reduction

def test_stats_are_the_centered_moments():
    X, Y = problem(n=100, n_targets=2, seed=14, offset=5.0)
    sw = np.random.default_rng(15).uniform(0.1, 3.0, size=100)
    stats = LinearStats.from_data(X, Y, sw)
    xm, ym = np.average(X, axis=0, weights=sw), np.average(Y, axis=0, weights=sw)
    Xc, Yc = X - xm, Y - ym
    np.testing.assert_allclose(stats.x_mean, xm, rtol=1e-13)
    np.testing.assert_allclose(stats.y_mean, ym, rtol=1e-13)
    np.testing.assert_allclose(stats.Sxx, (Xc * sw[:, None]).T @ Xc, rtol=1e-11, atol=1e-10)
    np.testing.assert_allclose(stats.Sxy, (Xc * sw[:, None]).T @ Yc, rtol=1e-11, atol=1e-10)
    np.testing.assert_allclose(stats.Syy, (Yc * sw[:, None]).T @ Yc, rtol=1e-11, atol=1e-10)
    assert stats.weight == pytest.approx(sw.sum()) and stats.n_samples == 100


def test_merged_chunk_stats_equal_the_whole():
    X, Y = problem(n=250, n_targets=2, seed=16, offset=3.0)
    whole = LinearStats.from_data(X, Y)
    parts = [LinearStats.from_data(X[a:b], Y[a:b]) for a, b in [(0, 10), (10, 130), (130, 250)]]
    merged = parts[0] + parts[1] + parts[2]
    for name in ("x_mean", "y_mean", "Sxx", "Sxy", "Syy"):
        np.testing.assert_allclose(getattr(merged, name), getattr(whole, name), rtol=1e-11,
                                   atol=1e-9, err_msg=name)
    assert merged.n_samples == 250
    a = LinearRegression().fit_stats(merged)
    b = LinearRegression().fit(X, Y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-10)


@pytest.mark.parametrize("estimator", [LinearRegression(), Ridge(alpha=0.2)])
def test_partial_fit_on_chunks_equals_fit(estimator):
    X, y = problem(n=300, seed=17)
    full = type(estimator)(**estimator.get_params()).fit(X, y)
    for start in range(0, 300, 70):
        estimator.partial_fit(X[start:start + 70], y[start:start + 70])
    np.testing.assert_allclose(estimator.coef_, full.coef_, rtol=1e-10)
    assert estimator.intercept_ == pytest.approx(full.intercept_, rel=1e-10)
    assert estimator.stats_.n_samples == 300


def test_merge_rejects_other_shapes():
    a = LinearStats.from_data(*problem(n=10, d=3))
    b = LinearStats.from_data(*problem(n=10, d=4))
    with pytest.raises(ValueError, match="cannot merge"):
        a.merge(b)


def test_threads_give_the_same_model():
    X, y = problem(n=20000, d=8, seed=18)
    a = LinearRegression(n_jobs=1).fit(X, y)
    b = LinearRegression(n_jobs=2).fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12)


# ---------------------------------------------------------------- SGD: the shared loop

def standardized(n=2000, d=5, n_targets=None, seed=19):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    K = 1 if n_targets is None else n_targets
    Y = X @ rng.normal(size=(d, K)) + 2.0 + 0.5 * rng.normal(size=(n, K))
    return X, (Y[:, 0] if n_targets is None else Y)


@pytest.mark.parametrize("cls,params", [(LinearRegression, {}), (Ridge, {"alpha": 100.0})])
@pytest.mark.parametrize("n_targets", [None, 2])
def test_sgd_converges_to_the_closed_form(cls, params, n_targets):
    X, y = standardized(n_targets=n_targets)
    exact = cls(**params).fit(X, y)
    sgd = cls(solver="sgd", learning_rate="constant", eta0=0.01, average=len(X),
              max_iter=100, tol=None, random_state=0, **params).fit(X, y)
    truth = np.c_[np.atleast_2d(exact.coef_), np.atleast_1d(exact.intercept_)]
    found = np.c_[np.atleast_2d(sgd.coef_), np.atleast_1d(sgd.intercept_)]
    assert_rel(found, truth, 1e-3)
    assert sgd.n_iter_ == 100 and len(sgd.loss_curve_) == 100


def test_sgd_partial_fit_epochs_equal_fit():
    X, y = standardized(n=300, seed=20)
    params = dict(solver="sgd", max_iter=4, tol=None, random_state=3)
    fitted = LinearRegression(**params).fit(X, y)
    online = LinearRegression(**params)
    for _ in range(4):
        online.partial_fit(X, y)
    np.testing.assert_array_equal(online.coef_, fitted.coef_)
    assert online.intercept_ == fitted.intercept_


def test_sgd_one_step_is_the_squared_loss_gradient():
    # 001: w <- w - eta * d/dw (m - y)^2 / 2 = w - eta (m - y) x; from w = 0, b = 0.
    model = LinearRegression(solver="sgd", learning_rate="constant", eta0=0.1, average=False,
                             shuffle=False)
    model.partial_fit(np.array([[3.0, 2.0]]), np.array([1.0]))
    np.testing.assert_allclose(model.coef_, [0.3, 0.2], atol=1e-15)
    assert model.intercept_ == pytest.approx(0.1, abs=1e-15)


def test_partial_fit_exists_only_for_normal_and_sgd():
    assert hasattr(LinearRegression(), "partial_fit")
    assert hasattr(LinearRegression(solver="sgd"), "partial_fit")
    assert not hasattr(LinearRegression(solver="lstsq"), "partial_fit")


# ---------------------------------------------------------------- API and bad input

@pytest.mark.parametrize("params,pattern", [
    ({"solver": "qr"}, "solver"),
    ({"alpha": -1.0}, "alpha"),
    ({"n_jobs": 0}, "n_jobs"),
    ({"solver": "sgd", "eta0": 0.0}, "eta0"),
])
def test_bad_parameters_name_the_problem(params, pattern):
    X, y = problem(n=20)
    with pytest.raises(ValueError, match=pattern):
        Ridge(**params).fit(X, y)


@pytest.mark.parametrize("method", ["fit", "partial_fit"])
@pytest.mark.parametrize("value,pattern", [(np.nan, "NaN"), (np.inf, "infinity"),
                                           (1e200, "overflowed")])
def test_normal_solver_names_non_finite_input(method, value, pattern):
    # "normal" skips the separate finiteness pass and detects bad values from X^T X.
    X, y = problem(n=30)
    X[17, 2] = value
    with pytest.raises(ValueError, match=pattern):
        getattr(LinearRegression(), method)(X, y)


def test_partial_fit_rejects_a_different_number_of_targets():
    X, Y = problem(n=30, n_targets=2)
    model = LinearRegression().partial_fit(X, Y)
    with pytest.raises(ValueError, match="target"):
        model.partial_fit(X, Y[:, 0])


def test_sklearn_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator
    expected = set()                          # every check passes
    for est in (LinearRegression(), Ridge(), LinearRegression(solver="lstsq")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = check_estimator(est, on_fail=None)
        failed = {r["check_name"] for r in results if r["status"] == "failed"}
        assert failed == expected, (est, failed ^ expected)


# ---------------------------------------------------------------- threads (issue 10, 12)

def _record_kernel_threads(monkeypatch):
    """Wrap the Gram kernel: record (fastml threads, BLAS threads during the call)."""
    from fastml._threads import blas_threads
    from fastml.linear_model import _regression
    calls = []
    kernel = _regression._linreg.gram_accumulate

    def spy(*args):
        calls.append((args[-1], blas_threads()))
        return kernel(*args)
    monkeypatch.setattr(_regression._linreg, "gram_accumulate", spy)
    return calls


def test_n_jobs_none_is_one_fastml_thread_and_leaves_blas_alone(monkeypatch):
    # One rule (check_n_jobs): None = 1 thread of fastml's own; BLAS keeps its own setting.
    from fastml._threads import blas_threads
    calls = _record_kernel_threads(monkeypatch)
    before = blas_threads()
    X, y = problem(n=20000, d=8, seed=18)
    LinearRegression().fit(X, y)
    assert calls == [(1, before)]


def test_n_jobs_limits_blas_only_inside_the_call(monkeypatch):
    from threadpoolctl import threadpool_info
    calls = _record_kernel_threads(monkeypatch)
    before = threadpool_info()
    X, y = problem(n=20000, d=8, seed=18)
    LinearRegression(n_jobs=2).fit(X, y)
    assert calls == [(2, 1)]  # two row-splitting threads, BLAS on one thread inside
    assert threadpool_info() == before  # the process's BLAS setting is restored


def test_docstring_examples_run():
    import doctest
    from fastml.linear_model import _regression
    result = doctest.testmod(_regression, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


# ---------------------------------------------------------------- accuracy (issue 12)

@pytest.mark.parametrize("how", ["normal", "lstsq", "partial_fit"])
def test_rank_is_decided_on_scaled_columns(how):
    # A column 1e-12 times smaller than the others is not collinear: scaled, X is perfectly
    # conditioned. An unscaled SVD / eigen cutoff dropped it and got its weight wrong.
    X, y = problem(n=200, d=4, seed=30)
    X[:, 1] *= 1e-12
    coef, intercept = lstsq_reference(X / [1, 1e-12, 1, 1], y, True)
    model = LinearRegression(solver="lstsq" if how == "lstsq" else "normal")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        if how == "partial_fit":
            model.partial_fit(X[:100], y[:100]).partial_fit(X[100:], y[100:])
        else:
            model.fit(X, y)
    assert model.rank_ == 4
    assert_rel(model.coef_ * [1, 1e-12, 1, 1], coef, 1e-9)


@pytest.mark.parametrize("how", ["normal", "lstsq", "partial_fit"])
def test_collinear_columns_of_different_sizes_give_the_minimum_norm_solution(how):
    # Rank decided on scaled columns, but the minimum norm is the plain one (numpy's).
    X, y = problem(n=120, d=3, seed=31)
    X = np.c_[X, 3.0 * X[:, 0]]
    coef, intercept = lstsq_reference(X, y, True)
    model = LinearRegression(solver="lstsq" if how == "lstsq" else "normal")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LinAlgWarning)
        if how == "partial_fit":
            model.partial_fit(X[:60], y[:60]).partial_fit(X[60:], y[60:])
        else:
            model.fit(X, y)
    assert model.rank_ == 3
    assert_rel(model.coef_, coef, 1e-8)
    assert model.intercept_ == pytest.approx(intercept, rel=1e-8)


def test_qr_factor_only_when_the_normal_equations_are_ill_conditioned():
    # The fast path (one Gram pass, Cholesky) is what well-conditioned data gets; the QR pass
    # over the rows is paid only where the normal equations would lose digits.
    X, y = problem(n=500, d=5, seed=32)
    assert LinearStats.from_data(X, y).factor is None
    x = np.linspace(0.0, 10.0, 50)
    powers = np.ascontiguousarray(x[:, None] ** np.arange(1, 7))
    stats = LinearStats.from_data(powers, x)
    R = stats.factor
    assert R is not None and R.shape == (7, 7) and np.allclose(R, np.triu(R))
    gram = np.block([[stats.Sxx, stats.Sxy], [stats.Sxy.T, stats.Syy]])
    np.testing.assert_allclose(R.T @ R, gram, rtol=1e-9, atol=1e-9 * np.abs(gram).max())


def test_merged_factor_equals_the_factor_of_all_rows():
    x = np.linspace(0.0, 10.0, 60)
    X = np.ascontiguousarray(x[:, None] ** np.arange(1, 7))
    y = np.cos(x)
    whole = LinearStats.from_data(X, y, factor=True)
    # with a factor on both sides, and with one side (well-conditioned alone) without
    parts = [LinearStats.from_data(X[:25], y[:25], factor=True),
             LinearStats.from_data(X[25:], y[25:], factor=True)]
    for merged in (parts[0] + parts[1], parts[0] + LinearStats.from_data(X[25:], y[25:])):
        # R is unique up to the signs of its rows
        np.testing.assert_allclose(np.abs(merged.factor), np.abs(whole.factor), rtol=1e-7,
                                   atol=1e-9 * np.abs(whole.factor).max())
    assert (parts[0] + parts[1]).n_samples == 60


def test_weighted_sgd_ridge_reaches_the_closed_form():
    # The SGD loop's penalty is alpha / n (rows): with sample weights too, SGD's minimizer is
    # scikit-learn's weighted Ridge(alpha).
    rng = np.random.default_rng(23)
    X, y = standardized(n=3000, d=4, seed=24)
    sw = rng.uniform(0.2, 3.0, size=len(X))
    exact = Ridge(alpha=300.0).fit(X, y, sw)
    sgd = Ridge(alpha=300.0, solver="sgd", eta0=0.01, average=len(X), max_iter=100, tol=None,
                random_state=0, shuffle=True).fit(X, y, sw)
    assert_rel(sgd.coef_, exact.coef_, 2e-3)


def test_large_feature_means_need_no_qr_pass_with_an_intercept():
    # Large means make only the uncentered normal equations ill-conditioned: a fit with an
    # intercept keeps the one-pass path (no QR factor), one without computes the factor.
    X, y = problem(n=300, seed=33, offset=1e4)
    assert LinearStats.from_data(X, y, fit_intercept=True).factor is None
    assert LinearStats.from_data(X, y, fit_intercept=False).factor is not None
    assert LinearStats.from_data(X, y).factor is not None  # may serve either
    assert LinearRegression().fit(X, y).stats_.factor is None
    coef, _ = lstsq_reference(X, y, False)
    assert_rel(LinearRegression(fit_intercept=False).fit(X, y).coef_, coef, 1e-8)


@pytest.mark.parametrize("solver", ["normal", "lstsq"])
def test_overflowing_sample_weights_are_named(solver):
    # issue 12: weights of 1e308 each overflow the statistics; the error names the weights
    # (it blamed the features).
    X, y = problem(n=20)
    with pytest.raises(ValueError, match="sample_weight sums to more than the largest float64"):
        LinearRegression(solver=solver).fit(X, y, np.full(20, 1e308))
    # large but representable weights give the unweighted model (scaled alike)
    a = LinearRegression(solver=solver).fit(X, y, np.full(20, 1e250))
    np.testing.assert_allclose(a.coef_, LinearRegression().fit(X, y).coef_, rtol=1e-10)


def test_batch_size_too_large_for_c_is_a_value_error_naming_it():
    # issue 12: a Python int beyond C's range raised OverflowError from the kernel.
    X, y = problem(n=20)
    with pytest.raises(ValueError, match="batch_size"):
        LinearRegression(solver="sgd", batch_size=2**70).fit(X, y)


# ---------------------------------------------------------------- property: chunks = whole

def test_property_partial_fit_in_any_chunks_equals_fit():
    # Documented: after any sequence of chunks, partial_fit (solver="normal") equals fit on all
    # of them; also with sample weights, several targets, no intercept and ridge, and with
    # chunks too small to be full rank on their own (they carry a QR factor, merged exactly).
    from hypothesis import given, settings, strategies as st

    @settings(max_examples=40, deadline=None, derandomize=True)
    @given(n=st.integers(8, 60), d=st.integers(1, 5), seed=st.integers(0, 2**16),
           cuts=st.lists(st.floats(0.0, 1.0), max_size=6), weighted=st.booleans(),
           fit_intercept=st.booleans(), alpha=st.sampled_from([0.0, 0.5]),
           n_targets=st.sampled_from([None, 2]), offset=st.sampled_from([0.0, 50.0]))
    def check(n, d, seed, cuts, weighted, fit_intercept, alpha, n_targets, offset):
        X, y = problem(n=n, d=d, n_targets=n_targets, seed=seed, offset=offset)
        sw = np.random.default_rng(seed).uniform(0.1, 3.0, n) if weighted else None
        bounds = sorted({0, n, *(int(c * n) for c in cuts)})
        whole = Ridge(alpha=alpha, fit_intercept=fit_intercept).fit(X, y, sw)
        online = Ridge(alpha=alpha, fit_intercept=fit_intercept)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LinAlgWarning)  # early chunks can be rank deficient
            for a, b in zip(bounds[:-1], bounds[1:]):
                online.partial_fit(X[a:b], y[a:b], None if sw is None else sw[a:b])
        assert online.stats_.n_samples == n
        assert_rel(online.coef_, whole.coef_, 1e-8)
        if fit_intercept:
            assert_rel(online.intercept_, whole.intercept_, 1e-8)

    check()


def test_tiny_weights_with_huge_values_give_the_exact_line():
    """Weights 1e-310 with x ~1e154 and y ~1e199: W * outer(mean, mean) overflowed while
    centering and coef_ came out inf / NaN. y = 1e45 x exactly, so the slope is 1e45."""
    X = np.array([[1.25730221e154], [-1.32104863e154]])
    y = 1e45 * X[:, 0]
    model = LinearRegression().fit(X, y, sample_weight=np.array([1e-310, 1e-310]))
    assert model.coef_[0] == pytest.approx(1e45, rel=1e-12)
    assert abs(model.intercept_) <= 1e-12 * np.abs(y).max()
    np.testing.assert_allclose(model.predict(X), y, rtol=1e-12)


def test_a_solution_beyond_float32_is_refused_and_leaves_the_model_unfitted():
    """float32 X keeps float32 coef_: a slope of 1e60 would be stored as inf."""
    X = np.array([[1e-30], [2e-30], [3e-30]], dtype=np.float32)
    y = np.array([1e30, 2e30, 3e30])
    model = LinearRegression().fit(np.array([[1.0], [2.0], [4.0]]), y)
    with pytest.raises(ValueError, match="overflows float32.*rescale"):
        model.fit(X, y)
    assert not hasattr(model, "coef_") and not hasattr(model, "stats_")


# ---------------------------------------------------------------- an outside audit


def _ridge_closed_form(X, y, alpha, sw=None):
    """numpy: (Xc^T S Xc + alpha I)^-1 Xc^T S yc on the weighted-centered data."""
    sw = np.ones(len(X)) if sw is None else sw
    Xc = X - np.average(X, axis=0, weights=sw)
    yc = y - np.average(y, weights=sw)
    return np.linalg.solve(Xc.T @ (sw[:, None] * Xc) + alpha * np.eye(X.shape[1]),
                           Xc.T @ (sw * yc))


def test_ridge_sgd_partial_fit_penalizes_every_row_given_so_far():
    """The audit: the SGD penalty per row was alpha / (rows of the first chunk), kept for
    every later chunk, so 20 passes in chunks of 20 rows ended at [0.10 0.17 0.27] where
    chunks of 2000 gave [0.92 1.82 2.74]. The rule now: alpha is on the sum over every row
    given to partial_fit so far (as solver="normal" partial_fit merges them), i.e. a per-row
    penalty alpha / (rows so far). 20 passes over 2000 rows are 40000 rows: Ridge(200) on
    them (numpy), whatever the chunk size."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3))
    y = X @ [1.0, 2.0, 3.0] + rng.normal(size=2000)
    exact = _ridge_closed_form(np.tile(X, (20, 1)), np.tile(y, 20), 200.0)
    normal = Ridge(alpha=200.0)
    found = []
    for chunk in (2000, 200, 20):
        model = Ridge(alpha=200.0, solver="sgd", average=len(X), random_state=0)
        for _ in range(20):
            for start in range(0, 2000, chunk):
                model.partial_fit(X[start:start + chunk], y[start:start + chunk])
                if chunk == 2000:
                    normal.partial_fit(X[start:start + chunk], y[start:start + chunk])
        assert model._engine.config["alpha"] == 200.0 / 40000
        assert_rel(model.coef_, exact, 2e-2)         # (was 0.47 and 0.90 off for 200, 20)
        found.append(model.coef_)
    assert_rel(normal.coef_, exact, 1e-10)                # the same problem, solved exactly
    assert_rel(found[2], found[0], 2e-2)


def test_ridge_sgd_weights_change_the_problem_as_they_change_the_closed_form():
    """Ridge's alpha is on the weighted sum, so weights times c are alpha / c, for the closed
    form and SGD alike; the SGD steps themselves do not grow with c (the weights step
    relative to their mean). LinearRegression's SGD does not move at all."""
    X, y = standardized(n=500, d=3, seed=4)
    sw = np.random.default_rng(5).uniform(0.5, 2.0, size=len(X))
    params = dict(solver="sgd", eta0=0.01, max_iter=5, tol=None, random_state=0)
    a = Ridge(alpha=30.0, **params).fit(X, y, 10.0 * sw)
    b = Ridge(alpha=3.0, **params).fit(X, y, sw)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9)
    np.testing.assert_allclose(Ridge(alpha=30.0).fit(X, y, 10.0 * sw).coef_,
                               Ridge(alpha=3.0).fit(X, y, sw).coef_, rtol=1e-10)
    c = LinearRegression(**params).fit(X, y, sw)
    d = LinearRegression(**params).fit(X, y, 1e6 * sw)    # raw, eta0 x 1e6: diverged
    np.testing.assert_allclose(d.coef_, c.coef_, rtol=1e-9)


def test_weighted_ridge_sgd_fit_matches_numpy():
    X, y = standardized(n=2000, d=3, seed=6)
    sw = np.random.default_rng(7).integers(1, 5, size=len(X)).astype(float)
    sgd = Ridge(alpha=500.0, solver="sgd", eta0=0.005, average=len(X), max_iter=60, tol=None,
                random_state=0).fit(X, y, 3.0 * sw)
    assert_rel(sgd.coef_, _ridge_closed_form(X, y, 500.0, 3.0 * sw), 5e-3)
