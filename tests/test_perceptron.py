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


# ---------------------------------------------------------------- the kernel perceptron

from fastml.datasets import load_xor                                    # noqa: E402
from fastml.linear_model._kernel_perceptron import KernelPerceptron           # noqa: E402


def phi_degree2(X):
    """003's explicit feature map of degree exactly 2 for u = (u1, u2):
    (u1^2, sqrt(2) u1 u2, u2^2), so that phi(u).phi(v) = (u.v)^2."""
    return np.column_stack([X[:, 0] ** 2, np.sqrt(2) * X[:, 0] * X[:, 1], X[:, 1] ** 2])


def kernel_perceptron_reference(X, T, order, epochs, k, budget=None):
    """Slow 003 kernel perceptron: the list of mistakes (index, coefficients, step) and the
    mistakes made; each margin is the kernel sum over the stored list."""
    stored, mistakes, step = [], 0, 0
    for _ in range(epochs):
        for i in order:
            step += 1
            m = np.zeros(T.shape[1])
            for j, c, _ in stored:
                m += c * k(X[j], X[i])
            wrong = T[i] * m <= 0
            if wrong.any():
                mistakes += 1
                if budget is not None and len(stored) >= budget:
                    stored.pop(0)
                stored.append((i, np.where(wrong, T[i], 0.0), step))
    return stored, mistakes, step


KERNEL_FUNCTIONS = {
    "linear": lambda u, v: u @ v,
    "poly": lambda u, v: (0.5 * (u @ v) + 1.0) ** 3,
    "rbf": lambda u, v: np.exp(-0.5 * np.sum((u - v) ** 2)),
    "sigmoid": lambda u, v: np.tanh(0.5 * (u @ v) + 0.1),
}


@pytest.mark.parametrize("kernel", list(KERNEL_FUNCTIONS))
@pytest.mark.parametrize("n_classes", [2, 3])
def test_kernel_perceptron_matches_the_slow_reference(kernel, n_classes):
    X, codes = problem(n=120, d=3, n_classes=n_classes, seed=11)
    T = signed_targets(codes, n_classes)
    stored, mistakes, steps = kernel_perceptron_reference(
        X, T, np.arange(len(X)), 2, KERNEL_FUNCTIONS[kernel])
    model = KernelPerceptron(kernel=kernel, gamma=0.5, coef0=0.1 if kernel == "sigmoid" else 1.0,
                             degree=3, max_iter=2, shuffle=False).fit(X, codes)
    assert model.n_mistakes_ == mistakes
    # decision function = sum over the stored mistakes of c * k(x_i, x)
    Xt = np.random.default_rng(0).normal(size=(20, 3))
    want = np.array([[sum(c[o] * KERNEL_FUNCTIONS[kernel](X[j], x) for j, c, _ in stored)
                      for o in range(T.shape[1])] for x in Xt])
    got = model.decision_function(Xt).reshape(len(Xt), -1)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    # one support vector per training row that erred, with its summed coefficients
    assert sorted(model.support_) == sorted({j for j, _, _ in stored})
    np.testing.assert_array_equal(model.support_vectors_, X[model.support_])


def test_averaged_and_budgeted_kernel_perceptron_match_the_reference():
    X, codes = problem(n=150, d=3, seed=12)
    T = signed_targets(codes, 2)
    k = KERNEL_FUNCTIONS["rbf"]
    Xt = np.random.default_rng(1).normal(size=(15, 3))
    for budget in (None, 7):
        stored, mistakes, steps = kernel_perceptron_reference(
            X, T, np.arange(len(X)), 3, k, budget=budget)
        # averaged: each stored mistake weighted by its survival time (steps it was in w)
        want_avg = np.array([sum(c[0] * (steps + 1 - s) / steps * k(X[j], x)
                                 for j, c, s in stored) for x in Xt])
        want_last = np.array([sum(c[0] * k(X[j], x) for j, c, _ in stored) for x in Xt])
        for average, want in ((True, want_avg), (False, want_last)):
            model = KernelPerceptron(gamma=0.5, max_iter=3, shuffle=False, budget=budget,
                                     average=average).fit(X, codes)
            assert model.n_mistakes_ == mistakes
            np.testing.assert_allclose(model.decision_function(Xt), want, rtol=1e-9,
                                       atol=1e-12)
            if budget:
                assert len(model.support_vectors_) <= budget


def test_budget_drops_the_oldest_inside_one_block():
    # budget far below the block size: evictions of mistakes made within the same block
    X, codes = problem(n=400, d=3, seed=13)
    T = signed_targets(codes, 2)
    stored, mistakes, _ = kernel_perceptron_reference(
        X, T, np.arange(len(X)), 1, KERNEL_FUNCTIONS["rbf"], budget=3)
    model = KernelPerceptron(gamma=0.5, max_iter=1, shuffle=False, budget=3).fit(X, codes)
    assert model.n_mistakes_ == mistakes
    assert list(model.support_) == [j for j, _, _ in stored]


def test_poly2_kernel_is_the_linear_perceptron_on_the_explicit_map():
    rng = np.random.default_rng(14)
    X = rng.normal(size=(300, 2))
    y = np.where(X[:, 0] ** 2 - 0.7 * X[:, 0] * X[:, 1] - 0.5 * X[:, 1] ** 2 > 0.2, 1, -1)
    kernel = KernelPerceptron(kernel="poly", degree=2, coef0=0.0, gamma=1.0, max_iter=4,
                              random_state=3).fit(X, y)
    linear = Perceptron(fit_intercept=False, max_iter=4, tol=None, random_state=3, shuffle=True).fit(
        phi_degree2(X), y)
    assert kernel.n_mistakes_ == linear.n_mistakes_
    Xt = rng.normal(size=(500, 2))
    np.testing.assert_array_equal(kernel.predict(Xt), linear.predict(phi_degree2(Xt)))
    np.testing.assert_allclose(kernel.decision_function(Xt),
                               linear.decision_function(phi_degree2(Xt)), rtol=1e-9, atol=1e-9)
    # w = sum_i c_i phi(x_i): the dual model is the primal one
    np.testing.assert_allclose(kernel.dual_coef_ @ phi_degree2(kernel.support_vectors_),
                               linear.coef_, rtol=1e-12, atol=1e-12)


def test_xor_needs_the_degree2_kernel():
    X, y = load_xor()
    # 003's degree-up-to-2 kernel (u.v + 1)^2 on the 0/1 table
    model = KernelPerceptron(kernel="poly", degree=2, gamma=1.0, coef0=1.0, max_iter=100,
                             shuffle=False).fit(X, y)
    np.testing.assert_array_equal(model.predict(X), y)
    assert model.n_iter_ < 100                        # converged: a mistake-free epoch
    # degree exactly 2 on the +-1 coding: y = xor is -u1 u2, one coordinate of phi
    S = 2 * X - 1
    exact = KernelPerceptron(kernel="poly", degree=2, gamma=1.0, coef0=0.0, max_iter=100,
                             shuffle=False).fit(S, y)
    np.testing.assert_array_equal(exact.predict(S), y)
    # no line separates XOR: the linear perceptron keeps erring, whatever the epochs
    for average in (False, True):
        linear = Perceptron(max_iter=1000, tol=None, shuffle=False, average=average).fit(X, y)
        assert linear.score(X, y) <= 0.75
        assert linear.n_iter_ == 1000


def test_callable_kernel_equals_the_builtin_and_wrong_shapes_are_refused():
    X, codes = problem(n=200, d=4, n_classes=3, seed=15)

    def rbf(A, B):
        return np.exp(-0.5 * ((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=2))

    builtin = KernelPerceptron(gamma=0.5, max_iter=3, random_state=0).fit(X, codes)
    custom = KernelPerceptron(kernel=rbf, max_iter=3, random_state=0).fit(X, codes)
    assert custom.n_mistakes_ == builtin.n_mistakes_
    np.testing.assert_allclose(custom.decision_function(X), builtin.decision_function(X),
                               rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match=r"kernel callable returned an array of shape \(3,\)"):
        KernelPerceptron(kernel=lambda A, B: np.ones(3)).fit(X, codes)
    with pytest.raises(ValueError, match="kernel callable returned an array of shape"):
        KernelPerceptron(kernel=lambda A, B: A @ B.T[:, :1]).fit(X, codes)
    with pytest.raises(ValueError, match="NaN"):
        KernelPerceptron(kernel=lambda A, B: np.full((len(A), len(B)), np.nan)).fit(X, codes)


def test_kernel_perceptron_partial_fit_equals_fit_epochs():
    X, codes = problem(n=200, d=3, seed=16)
    online = KernelPerceptron(gamma=0.5, shuffle=False)
    for _ in range(2):
        online.partial_fit(X, codes, classes=[0, 1])
    batch = KernelPerceptron(gamma=0.5, shuffle=False, max_iter=2).fit(X, codes)
    assert online.n_mistakes_ == batch.n_mistakes_
    # later partial_fit calls see new samples: their rows are stored, not merged
    np.testing.assert_allclose(online.decision_function(X), batch.decision_function(X),
                               rtol=1e-9, atol=1e-12)


def test_kernel_perceptron_float32_and_gamma_rules():
    X, codes = problem(n=200, d=3, seed=17)
    single = KernelPerceptron(random_state=0, max_iter=2).fit(X.astype(np.float32), codes)
    double = KernelPerceptron(random_state=0, max_iter=2).fit(X, codes)
    assert single.support_vectors_.dtype == np.float32
    assert (single.predict(X) == double.predict(X)).mean() > 0.97
    np.testing.assert_allclose(double._kparams["gamma"], 1.0 / (3 * X.var()))
    assert KernelPerceptron(gamma="auto").fit(X, codes)._kparams["gamma"] == 1 / 3
    for bad in (dict(kernel="cubic"), dict(gamma=-1.0), dict(budget=0), dict(degree=0)):
        with pytest.raises(ValueError, match=list(bad)[0]):
            KernelPerceptron(**bad).fit(X, codes)


# ---------------------------------------------------------------- the voted perceptron

from fastml.linear_model._voted import VotedPerceptron             # noqa: E402


def voted_reference(X, t, order, epochs, fit_intercept=True):
    """Freund & Schapire (1999), verbatim: k = 0, v_1 = 0, c_1 = 0; on a correct prediction
    c_k += 1, on a mistake v_{k+1} = v_k + y x, c_{k+1} = 1. Binary t in {-1, +1}."""
    Xa = np.hstack([X, np.ones((len(X), 1))]) if fit_intercept else X
    v, c = [np.zeros(Xa.shape[1])], [0]
    for _ in range(epochs):
        for i in order:
            if t[i] * (v[-1] @ Xa[i]) <= 0:
                v.append(v[-1] + t[i] * Xa[i])
                c.append(1)
            else:
                c[-1] += 1
    return np.array(v), np.array(c)


def voted_predict_reference(v, c, X, fit_intercept=True):
    Xa = np.hstack([X, np.ones((len(X), 1))]) if fit_intercept else X
    return np.array([sum(cj * np.sign(vj @ x) for vj, cj in zip(v, c)) for x in Xa])


@pytest.mark.parametrize("integer", [True, False])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_voted_perceptron_matches_freund_schapire(integer, fit_intercept):
    X, codes = problem(n=200, d=4, seed=21, integer=integer)
    t = np.where(codes == 1, 1.0, -1.0)
    v, c = voted_reference(X, t, np.arange(len(X)), 3, fit_intercept)
    model = VotedPerceptron(max_iter=3, shuffle=False, fit_intercept=fit_intercept).fit(X, codes)
    # the zero vector v_1 never votes (its count is 0: the first example is always a mistake)
    assert c[0] == 0
    V = np.column_stack([model.vectors_, model.vector_intercepts_]) if fit_intercept \
        else model.vectors_
    np.testing.assert_array_equal(V, v[1:])
    np.testing.assert_array_equal(model.vector_counts_, c[1:])
    assert model.n_mistakes_ == len(v) - 1
    Xt = problem(n=300, d=4, seed=22, integer=integer)[0]
    votes = voted_predict_reference(v, c, Xt, fit_intercept)
    np.testing.assert_array_equal(model.decision_function(Xt), votes)
    np.testing.assert_array_equal(model.predict(Xt), (votes > 0).astype(int))


def test_voted_counts_give_the_averaged_perceptron():
    # sum_j c_j v_j / T is the average of w after every step: the averaged perceptron
    X, codes = problem(n=200, d=4, seed=23, integer=True)
    voted = VotedPerceptron(max_iter=4, random_state=1).fit(X, codes)
    averaged = Perceptron(max_iter=4, tol=None, random_state=1, average=True).fit(X, codes)
    assert voted.vector_counts_.sum() == voted.t_ == 4 * len(X)
    np.testing.assert_array_equal(
        voted.vector_counts_ @ voted.vectors_ / voted.t_, averaged.coef_.ravel())
    # and the last vector is the plain perceptron's
    plain = Perceptron(max_iter=4, tol=None, random_state=1).fit(X, codes)
    np.testing.assert_array_equal(voted.vectors_[-1], plain.coef_.ravel())


def test_voted_multiclass_csr_and_partial_fit():
    X, codes = problem(n=300, d=5, n_classes=3, seed=24, integer=True)
    labels = np.array(["x", "y", "z"])[codes]
    dense = VotedPerceptron(max_iter=3, random_state=0).fit(X, labels)
    sparse = VotedPerceptron(max_iter=3, random_state=0).fit(sp.csr_matrix(X), labels)
    np.testing.assert_array_equal(dense.vectors_, sparse.vectors_)
    np.testing.assert_array_equal(dense.decision_function(X), sparse.decision_function(X))
    assert dense.decision_function(X).shape == (300, 3)
    # each class's perceptron votes with its own vectors: the reference, one class at a time
    for k in range(3):
        t = np.where(codes == k, 1.0, -1.0)
        mine = dense.vector_outputs_ == k
        v = np.column_stack([dense.vectors_[mine], dense.vector_intercepts_[mine]])
        np.testing.assert_array_equal(dense.decision_function(X)[:, k],
                                      voted_predict_reference(v, dense.vector_counts_[mine], X))
    online = VotedPerceptron(shuffle=False)
    for _ in range(2):
        online.partial_fit(X, labels, classes=["x", "y", "z"])
    batch = VotedPerceptron(max_iter=2, shuffle=False).fit(X, labels)
    np.testing.assert_array_equal(online.vectors_, batch.vectors_)
    np.testing.assert_array_equal(online.vector_counts_, batch.vector_counts_)
    assert dense.score(X, labels) > 0.8


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kernel", ["linear", "poly", "rbf", "sigmoid"])
def test_kernel_blocks_match_numpy(kernel, dtype):
    from fastml.linear_model import _kernel_perceptron_fast as kp
    rng = np.random.default_rng(30)
    A = (rng.normal(size=(70, 5)) * 3).astype(dtype)     # rbf arguments from 0 down to ~-1000
    B = np.vstack([A[:3], rng.normal(size=(90, 5)) * 3]).astype(dtype)
    a, b = A.astype(float), B.astype(float)
    dots = a @ b.T
    d2 = (a * a).sum(1)[:, None] + (b * b).sum(1)[None] - 2 * dots
    want = {"linear": dots, "poly": (0.3 * dots + 1.5) ** 3,
            "rbf": np.exp(-0.7 * np.maximum(d2, 0)), "sigmoid": np.tanh(0.3 * dots + 0.2)}[kernel]
    out = np.empty((70, 93), dtype=dtype)
    params = dict(kind=kp.KERNELS[kernel], gamma=0.7 if kernel == "rbf" else 0.3,
                  coef0=1.5 if kernel == "poly" else 0.2, degree=3)
    for threads in (1, 2):
        kp.kernel_block(A, B, (a * a).sum(1), (b * b).sum(1), out, params, threads)
        if dtype == np.float64:
            np.testing.assert_allclose(out, want, rtol=1e-13, atol=1e-300)
        else:
            np.testing.assert_allclose(out, want, rtol=2e-3, atol=1e-5)
    if kernel == "rbf":                 # k(x, x) = 1 up to the rounding of the norms trick
        np.testing.assert_allclose(out[:3, :3].diagonal(), 1.0,
                                   rtol=1e-12 if dtype == np.float64 else 1e-5)


def test_rbf_exp_is_accurate_over_its_whole_range():
    from fastml.linear_model import _kernel_perceptron_fast as kp
    # u = 0 against rows v with cached ||v||^2 = -x: d2 = 0 + (-x) - 2 * 0, the kernel exp(x)
    x = -np.concatenate([np.linspace(0, 750, 200_001), [1e-300, 5e-324, 708.0, 708.5, 1e6]])
    out = np.empty((1, x.size))
    kp.kernel_block(np.zeros((1, 1)), np.zeros((x.size, 1)), np.zeros(1), -x,
                    out, dict(kind=kp.KERNELS["rbf"], gamma=1.0, coef0=0.0, degree=1), 1)
    want = np.exp(x)
    normal = x > -708.0
    np.testing.assert_allclose(out[0, normal], want[normal], rtol=4e-16 * 4, atol=0)
    assert (out[0, ~normal] <= 1e-307).all() and (out[0, ~normal] >= 0).all()


@pytest.mark.parametrize("make", [lambda: VotedPerceptron(max_iter=2, verbose=2),
                                  lambda: KernelPerceptron(max_iter=2, verbose=2)])
def test_verbose_goes_through_progress_not_print(make, capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    est = make().fit(X, y)
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count(f"[{type(est).__name__}]") == est.n_iter_


def test_kernel_perceptron_leaves_blas_threads_alone_and_scans_once(monkeypatch):
    """BLAS is limited only inside fit/predict (fastml._threads.blas_limit: scoped, restored)
    and threadpoolctl's library scan happens once per process, not per call."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from fastml import _threads
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = (X[:, 0] > 0).astype(int)
    before = [(p["filepath"], p["num_threads"]) for p in threadpoolctl.threadpool_info()]
    model = KernelPerceptron(random_state=0).fit(X, y)
    model.predict(X[:1])
    scans = []
    original = threadpoolctl.ThreadpoolController.__init__

    def counting_init(self, *args, **kwargs):
        scans.append(1)
        original(self, *args, **kwargs)

    monkeypatch.setattr(threadpoolctl.ThreadpoolController, "__init__", counting_init)
    monkeypatch.setattr(threadpoolctl, "threadpool_limits", None)   # the old per-call path
    for _ in range(3):
        model.predict(X[:1])
    model.partial_fit(X, y)
    assert scans == [] or _threads._blas_controller() is None
    after = [(p["filepath"], p["num_threads"]) for p in threadpoolctl.threadpool_info()]
    assert after == before


def test_kernel_perceptron_gamma_scale_on_constant_float32_data():
    """gamma="scale" = 1 / (n_features * var(X)), 1.0 when X is constant: the variance is
    taken in float64 (float32 sums gave ~1e-26 and gamma ~ 1e26)."""
    X = np.full((30, 4), 0.1, dtype=np.float32)
    y = np.arange(30) % 2
    model = KernelPerceptron(max_iter=1, random_state=0).fit(X, y)
    assert model._kparams["gamma"] == 1.0
    X2 = np.random.default_rng(0).normal(size=(30, 4)).astype(np.float32)
    model = KernelPerceptron(max_iter=1, random_state=0).fit(X2, y)
    assert model._kparams["gamma"] == pytest.approx(1.0 / (4 * X2.astype(np.float64).var()))


def test_voted_perceptron_runs_freund_and_schapires_T_epochs():
    """max_iter is T: every epoch runs, mistake-free ones included (they add to the last
    vector's survival count); early_stopping=True stops at the first mistake-free epoch."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    X[:, 0] += np.where(y == 1, 1.0, -1.0)                 # separable with a wide margin
    full = VotedPerceptron(max_iter=10, random_state=0).fit(X, y)
    assert full.n_iter_ == 10 and full.t_ == 10 * len(X)
    assert full.vector_counts_.sum() == 10 * len(X)
    early = VotedPerceptron(max_iter=10, early_stopping=True, random_state=0).fit(X, y)
    assert early.n_iter_ < 10 and early.t_ == early.n_iter_ * len(X)
    np.testing.assert_array_equal(early.vectors_, full.vectors_)   # the same mistakes
    assert full.vector_counts_[-1] - early.vector_counts_[-1] == (10 - early.n_iter_) * len(X)


def test_kernel_perceptron_small_predict_enters_no_blas_limit(monkeypatch):
    """Issue 13: a one-row predict does not enter the BLAS thread limit, whose set-and-restore
    cost ~20 us, the whole budget of the call; built-in kernels predict without BLAS (one
    compiled pass) at any size; a callable kernel's large batch still enters it; the scores
    of one row and of the batch agree."""
    from fastml.linear_model import _kernel_perceptron as kp_module
    rng = np.random.default_rng(1)
    X = rng.normal(size=(600, 10))
    y = (X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=600) > 0).astype(int)
    model = KernelPerceptron(max_iter=2, random_state=0).fit(X, y)
    assert len(model.support_vectors_) > 50
    batch = model.decision_function(X)
    entered = []
    original = kp_module.blas_limit

    def counting_limit(n):
        entered.append(n)
        return original(n)

    monkeypatch.setattr(kp_module, "blas_limit", counting_limit)
    for i in (0, 5, 599):
        np.testing.assert_allclose(model.decision_function(X[i:i + 1]), batch[i:i + 1],
                                   rtol=1e-12, atol=1e-12)
    assert entered == []
    model.decision_function(np.repeat(X, 20, axis=0))      # 12,000 rows: still no BLAS
    assert entered == []
    custom = KernelPerceptron(kernel=lambda A, B: A @ B.T, max_iter=1, random_state=0).fit(X, y)
    entered.clear()                                        # (fit enters it too)
    custom.decision_function(np.repeat(X, 20, axis=0))     # its GEMM: BLAS may thread
    assert entered == [1]
    bad = X[:1].copy()
    bad[0, 3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        model.predict(bad)


# ---------------------------------------------------------------- the voted perceptron's budget

def budget_reference(full, budget):
    """The budget rule applied to the unbudgeted model's vectors in the order the pass made
    them: each new vector appended, and while there are more than `budget`, the adjacent pair
    with the smallest summed count (the first such pair) merged into its count-weighted mean.
    Returns, per output, (vectors with intercepts, counts)."""
    out = []
    for k in np.unique(full.vector_outputs_):
        mine = full.vector_outputs_ == k
        V = np.column_stack([full.vectors_[mine], full.vector_intercepts_[mine]])
        kept_v, kept_c = [], []
        for v, c in zip(V, full.vector_counts_[mine]):
            kept_v.append(v.astype(float))
            kept_c.append(float(c))
            if len(kept_c) > budget:
                sums = np.add(kept_c[:-1], kept_c[1:])
                j = int(np.argmin(sums))
                total = kept_c[j] + kept_c[j + 1]
                kept_v[j] = (kept_c[j] * kept_v[j] + kept_c[j + 1] * kept_v[j + 1]) / total
                kept_c[j] = total
                del kept_v[j + 1], kept_c[j + 1]
        out.append((np.array(kept_v), np.array(kept_c)))
    return out


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("budget", [1, 3, 40])
@pytest.mark.parametrize("sparse", [False, True])
def test_voted_budget_merges_the_smallest_adjacent_pair(n_classes, budget, sparse):
    X, codes = problem(n=500, d=4, n_classes=n_classes, seed=31)
    X = sp.csr_matrix(X) if sparse else X
    full = VotedPerceptron(max_iter=3, random_state=2).fit(X, codes)
    model = VotedPerceptron(max_iter=3, random_state=2, budget=budget).fit(X, codes)
    for k, (V, c) in enumerate(budget_reference(full, budget)):
        mine = model.vector_outputs_ == k
        assert mine.sum() == min(budget, (full.vector_outputs_ == k).sum())
        np.testing.assert_allclose(model.vectors_[mine], V[:, :-1], rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(model.vector_intercepts_[mine], V[:, -1], rtol=1e-13,
                                   atol=1e-13)
        np.testing.assert_array_equal(model.vector_counts_[mine], c)
    # merging keeps every vote's weight: each output's counts still sum to the steps
    for k in np.unique(model.vector_outputs_):
        assert model.vector_counts_[model.vector_outputs_ == k].sum() == model.t_
    assert model.n_mistakes_ == full.n_mistakes_


def test_voted_budget_of_one_is_the_averaged_perceptron_and_none_is_exact():
    X, codes = problem(n=300, d=4, seed=32, integer=True)
    averaged = Perceptron(max_iter=4, tol=None, shuffle=False, average=True).fit(X, codes)
    one = VotedPerceptron(max_iter=4, shuffle=False, budget=1).fit(X, codes)
    np.testing.assert_allclose(one.vectors_[0], averaged.coef_[0], rtol=1e-13)
    np.testing.assert_allclose(one.vector_intercepts_, averaged.intercept_, rtol=1e-13)
    # a budget the pass never reaches is no budget: Freund & Schapire's exact vote
    exact = VotedPerceptron(max_iter=4, random_state=1).fit(X, codes)
    roomy = VotedPerceptron(max_iter=4, random_state=1, budget=10**6).fit(X, codes)
    np.testing.assert_array_equal(roomy.vectors_, exact.vectors_)
    np.testing.assert_array_equal(roomy.decision_function(X), exact.decision_function(X))


def test_voted_budget_partial_fit_save_load_and_accuracy():
    import fastml
    X, codes = problem(n=2000, d=5, n_classes=3, seed=33)
    Xt, codes_t = problem(n=1000, d=5, n_classes=3, seed=33)
    online = VotedPerceptron(shuffle=False, budget=20)
    for _ in range(3):
        online.partial_fit(X, codes, classes=[0, 1, 2])
    batch = VotedPerceptron(max_iter=3, shuffle=False, budget=20).fit(X, codes)
    np.testing.assert_array_equal(online.vectors_, batch.vectors_)
    np.testing.assert_array_equal(online.vector_counts_, batch.vector_counts_)
    with pytest.raises(ValueError, match="budget=5 differs from the budget"):
        online.set_params(budget=5).partial_fit(X, codes)
    import io as _io
    buffer = _io.BytesIO()
    fastml.save(batch, buffer)
    buffer.seek(0)
    loaded = fastml.load(buffer)
    np.testing.assert_array_equal(loaded.decision_function(Xt), batch.decision_function(Xt))
    loaded.partial_fit(X, codes)                      # the store resumes after a load
    full = VotedPerceptron(max_iter=3, shuffle=False).fit(X, codes)
    assert len(full.vectors_) > 10 * len(batch.vectors_)
    assert batch.score(Xt, codes_t) >= full.score(Xt, codes_t) - 0.03


def test_voted_budget_is_refused_when_not_a_count():
    X, codes = problem(n=50, seed=34)
    for bad in (0, -1, 1.5, "10", 2**31):
        with pytest.raises(ValueError, match="budget"):
            VotedPerceptron(budget=bad).fit(X, codes)
