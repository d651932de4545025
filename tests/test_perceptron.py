"""The perceptron family (003): Novikoff's bound, perceptron = SGD on the margin-0 hinge with
eta = 1, averaged and voted perceptrons against slow numpy references, the kernel perceptron
against the explicit feature map, XOR, kernels, budget, and bad input."""
import numpy as np
import pytest
import scipy.sparse as sp

from fastml import losses
from fastml.linear_model._perceptron import Perceptron

pytestmark = pytest.mark.kernel


# ---------------------------------------------------------------- slow numpy references

def signed_targets(codes, n_classes):
    """(n, K) targets in {-1, +1}: one column (for class 1) for two classes, else one-vs-rest."""
    if n_classes == 2:
        return np.where(codes == 1, 1.0, -1.0)[:, None]
    return np.where(codes[:, None] == np.arange(n_classes), 1.0, -1.0)


def sgd_margin0_hinge(X, T, order, epochs, fit_intercept=True):
    """003: SGD with eta = 1 on l(w, x) = max(0, -y w.x), the subgradient taken from
    fastml.losses (1[y w.x <= 0] (-y)), one output per column of T. Returns the last weights,
    the average of the weights after every step, every step's weights (for the vote) and the
    mistakes."""
    n_out = T.shape[1]
    W, b = np.zeros((n_out, X.shape[1])), np.zeros(n_out)
    history = []
    mistakes = 0
    for _ in range(epochs):
        for i in order:
            margins = W @ X[i] + (b if fit_intercept else 0.0)
            g = losses.perceptron_gradient(margins, T[i])
            W -= 1.0 * g[:, None] * X[i]
            if fit_intercept:
                b -= 1.0 * g
            mistakes += bool(g.any())
            history.append((W.copy(), b.copy()))
    Ws = np.array([h[0] for h in history])
    bs = np.array([h[1] for h in history])
    return W, b, Ws.mean(axis=0), bs.mean(axis=0), (Ws, bs), mistakes


def problem(n=150, d=5, n_classes=2, seed=0, integer=False):
    rng = np.random.default_rng(seed)
    X = rng.integers(-4, 5, size=(n, d)).astype(float) if integer else rng.normal(size=(n, d))
    W = rng.normal(size=(n_classes, d))
    codes = np.argmax(X @ W.T + 0.5 * rng.normal(size=(n, n_classes)), axis=1)
    return X, codes


# ---------------------------------------------------------------- Novikoff

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_converges_within_the_novikoff_bound(seed):
    rng = np.random.default_rng(seed)
    u = rng.normal(size=6)
    u /= np.linalg.norm(u)
    X = rng.normal(size=(2000, 6)) * rng.uniform(0.5, 3.0, size=6)
    X = X[np.abs(X @ u) >= 0.2][:500]         # linearly separable with margin >= 0.2 by u
    y = np.sign(X @ u)
    R = np.linalg.norm(X, axis=1).max()
    gamma = np.min(y * (X @ u))
    model = Perceptron(fit_intercept=False, tol=None, max_iter=10_000, random_state=seed)
    model.fit(X, y)
    assert model.score(X, y) == 1.0
    assert model.n_iter_ < 10_000                  # stopped on an epoch without a mistake
    assert 0 < model.n_mistakes_ <= (R / gamma) ** 2
    # converged means: one more pass makes no mistake
    margins = y * (X @ model.coef_.ravel())
    assert (margins > 0).all()


def test_novikoff_with_intercept_uses_the_augmented_vector():
    rng = np.random.default_rng(5)
    u, c = np.array([1.0, -2.0, 0.5]), 1.5          # separator u.x + c through x_0 = 1
    X = rng.normal(size=(1500, 3)) * 2
    X = X[np.abs(X @ u + c) >= 0.3]
    y = np.where(X @ u + c > 0, "yes", "no")
    Xa = np.hstack([X, np.ones((len(X), 1))])
    norm = np.linalg.norm(np.append(u, c))
    gamma = np.min(np.abs(X @ u + c)) / norm
    R = np.linalg.norm(Xa, axis=1).max()
    model = Perceptron(tol=None, max_iter=10_000, random_state=0).fit(X, y)
    assert model.score(X, y) == 1.0
    assert model.n_mistakes_ <= (R / gamma) ** 2


# ---------------------------------------------------------------- perceptron = SGD, eta = 1

@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("integer", [True, False])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_perceptron_is_sgd_on_the_margin0_hinge(n_classes, integer, fit_intercept):
    X, codes = problem(n_classes=n_classes, seed=n_classes, integer=integer)
    W, b, W_avg, b_avg, _, mistakes = sgd_margin0_hinge(
        X, signed_targets(codes, n_classes), np.arange(len(X)), 3, fit_intercept)
    for average in (False, True):
        model = Perceptron(max_iter=3, tol=None, shuffle=False, average=average,
                           fit_intercept=fit_intercept).fit(X, codes)
        want_W, want_b = (W_avg, b_avg) if average else (W, b)
        if integer:                                 # every sum is exact: the same bits
            np.testing.assert_array_equal(model.coef_, want_W)
            np.testing.assert_array_equal(model.intercept_, want_b if fit_intercept else 0.0)
        else:
            np.testing.assert_allclose(model.coef_, want_W, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(model.intercept_, want_b if fit_intercept else 0.0,
                                       rtol=1e-12, atol=1e-12)
        assert model.n_mistakes_ == mistakes


def test_shuffled_epochs_follow_the_orders_drawn():
    X, codes = problem(seed=3, integer=True)
    model = Perceptron(max_iter=4, tol=None, random_state=7).fit(X, codes)
    rng = np.random.default_rng(7)
    orders = [rng.permutation(len(X)) for _ in range(4)]
    T = signed_targets(codes, 2)
    W, b = np.zeros((1, X.shape[1])), np.zeros(1)
    for order in orders:
        for i in order:
            if T[i, 0] * (W[0] @ X[i] + b[0]) <= 0:
                W[0] += T[i, 0] * X[i]
                b[0] += T[i, 0]
    np.testing.assert_array_equal(model.coef_, W)
    np.testing.assert_array_equal(model.intercept_, b)


def test_partial_fit_is_one_epoch_of_fit():
    X, codes = problem(n_classes=3, seed=4, integer=True)
    labels = np.array(["a", "b", "c"])[codes]
    online = Perceptron(shuffle=False)
    for _ in range(3):
        online.partial_fit(X, labels, classes=["a", "b", "c"])
    batch = Perceptron(max_iter=3, tol=None, shuffle=False).fit(X, labels)
    np.testing.assert_array_equal(online.coef_, batch.coef_)
    np.testing.assert_array_equal(online.predict(X), batch.predict(X))
    with pytest.raises(ValueError, match="classes"):
        Perceptron().partial_fit(X, labels)
    with pytest.raises(ValueError, match="not in classes_"):
        online.partial_fit(X[:2], ["a", "z"])


def test_csr_and_float32_give_the_dense_answer():
    X, codes = problem(n=120, d=8, seed=6, integer=True)
    X[X < 1] = 0.0
    dense = Perceptron(max_iter=3, tol=None, random_state=0, average=True).fit(X, codes)
    sparse = Perceptron(max_iter=3, tol=None, random_state=0, average=True).fit(
        sp.csr_matrix(X), codes)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-12)
    single = Perceptron(max_iter=3, tol=None, random_state=0).fit(X.astype(np.float32), codes)
    assert single.coef_.dtype == np.float32
    np.testing.assert_array_equal(single.predict(X), Perceptron(
        max_iter=3, tol=None, random_state=0).fit(X, codes).predict(X))


def test_matches_sklearn_perceptron_on_a_fixed_order():
    skl = pytest.importorskip("sklearn.linear_model")
    X, codes = problem(n=300, n_classes=3, seed=8)
    ours = Perceptron(max_iter=5, tol=None, shuffle=False).fit(X, codes)
    theirs = skl.Perceptron(max_iter=5, tol=None, shuffle=False).fit(X, codes)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, rtol=1e-10, atol=1e-10)


def test_bad_parameters_are_named():
    X, codes = problem()
    with pytest.raises(ValueError, match="max_iter"):
        Perceptron(max_iter=0).fit(X, codes)
    with pytest.raises(ValueError, match="average"):
        Perceptron(average=-1).fit(X, codes)
