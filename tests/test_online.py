"""Online learning on a changing stream (lecture 003, issue 14 part 3): the recency-weighted
average of the SGD iterates (`average_halflife`), progressive validation (`progressive_loss_`)
and `early_stopping="progressive"`, for Perceptron, LogisticRegression (sgd / minibatch) and
LinearSVM. The compiled loop is compared with a plain numpy replica that keeps every iterate."""
import io

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import fastml
from fastml.linear_model import LinearSVM, LogisticRegression, Perceptron
from fastml.linear_model._sgd import step_sizes
from test_properties import BUDGET

pytestmark = pytest.mark.kernel


# ---------------------------------------------------------------- the numpy replica
def _loss_rows(kind, M, codes, n_classes):
    """Per-row loss and d loss / d margin (n, K) at margins M (n, K), the kernels' losses
    (_loss.pxd): binary = one output for class 1 (log: the logistic with class 0 at margin
    0); more classes = one output per class (log: softmax; hinge / perceptron: one-vs-rest).
    "mistakes" is the perceptron's 0/1 loss: 1 where some output has t m <= 0."""
    n, K = M.shape
    if K == 1:
        T = np.where(codes == 1, 1.0, -1.0)[:, None]
    else:
        T = -np.ones((n, K))
        T[np.arange(n), codes] = 1.0
    if kind == "log":
        if K == 1:
            t = (codes == 1).astype(float)
            p = 1.0 / (1.0 + np.exp(-M[:, 0]))
            return np.logaddexp(0.0, M[:, 0]) - t * M[:, 0], (p - t)[:, None]
        mx = M.max(axis=1, keepdims=True)
        lse = mx[:, 0] + np.log(np.exp(M - mx).sum(axis=1))
        P = np.exp(M - lse[:, None])
        onehot = np.zeros_like(M)
        onehot[np.arange(n), codes] = 1.0
        return lse - M[np.arange(n), codes], P - onehot
    Z = T * M
    if kind == "hinge":
        return np.where(Z < 1, 1 - Z, 0.0).sum(axis=1), np.where(Z < 1, -T, 0.0)
    dl = np.where(Z <= 0, -T, 0.0)
    if kind == "mistakes":
        return (Z <= 0).any(axis=1).astype(float), dl
    return np.where(Z <= 0, -Z, 0.0).sum(axis=1), dl


class Replica:
    """Plain SGD with every iterate kept: w <- (1 - eta alpha)_+ w - eta sum_batch sw dl x /
    |batch|; the reported weights are sum_t r^(T-t) w_t / sum_t r^(T-t) over the steps after
    `start` (r = 2^(-1/halflife), 1 without one); the progressive loss of a pass is the
    weighted mean loss of each row under the reported model (coef()) before its step. With
    `relative` (all but the perceptron) the step weights are sw * N / S, N and S the rows and
    weight of every row given so far (`new` rows: a fit's first epoch, each partial_fit
    chunk), so they average 1 and SGD minimizes the batch objective sum sw l / sum sw +
    alpha/2 ||w||^2."""

    def __init__(self, kind, n_outputs, d, eta, alpha, *, batch_size=1, average=False,
                 halflife=None, progressive=None, n_classes=2, relative=True):
        self.kind, self.eta, self.alpha, self.batch_size = kind, eta, alpha, batch_size
        self.progressive_kind = progressive or kind
        self.n_classes = n_classes
        self.W, self.b = np.zeros((n_outputs, d)), np.zeros(n_outputs)
        self.start = 0 if isinstance(average, bool) else int(average)
        self.averaging = bool(average) or halflife is not None
        self.r = 1.0 if halflife is None else 2.0 ** (-1.0 / halflife)
        self.iterates, self.t = [], 0          # (step t, W, b) after every step
        self.relative, self.rows_seen, self.weight_seen = relative, 0, 0.0

    def epoch(self, X, codes, sw, new=True):
        if new:
            self.rows_seen += len(sw)
            self.weight_seen += float(np.sum(sw))
        if self.relative:
            sw = sw * (self.rows_seen / self.weight_seen)
        loss_total = 0.0
        for first in range(0, len(codes), self.batch_size):
            rows = slice(first, first + self.batch_size)
            Xb, cb, swb = X[rows], codes[rows], sw[rows]
            M = Xb @ self.W.T + self.b
            W_now, b_now = self.coef()              # the model predict would use now
            loss_total += np.sum(swb * _loss_rows(self.progressive_kind, Xb @ W_now.T + b_now,
                                                  cb, self.n_classes)[0])
            _, dl = _loss_rows(self.kind, M, cb, self.n_classes)
            dl = dl * (swb / len(cb))[:, None]
            self.t += 1
            eta = self.eta(self.t)
            self.W = max(1.0 - eta * self.alpha, 0.0) * self.W - eta * dl.T @ Xb
            self.b = self.b - eta * dl.sum(axis=0)
            self.iterates.append((self.t, self.W.copy(), self.b.copy()))
        return loss_total / sw.sum()

    def coef(self):
        kept = [(t, W, b) for t, W, b in self.iterates if t > self.start]
        if not self.averaging or not kept:
            return self.W, self.b
        weights = np.array([self.r ** (self.t - t) for t, _, _ in kept])
        W = sum(c * W for c, (_, W, _) in zip(weights, kept)) / weights.sum()
        b = sum(c * b for c, (_, _, b) in zip(weights, kept)) / weights.sum()
        return W, b


def _data(n=90, d=6, n_classes=2, seed=0, sparse_fraction=0.4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < sparse_fraction] = 0.0
    W = rng.normal(size=(n_classes, d))
    codes = np.argmax(X @ W.T + 0.7 * rng.normal(size=(n, n_classes)), axis=1)
    codes[:n_classes] = np.arange(n_classes)            # every class present
    sw = rng.uniform(0.5, 2.0, size=n)
    return X, codes, sw


def _estimator_and_replica(name, n_classes, d, *, halflife, average=False, batch_size=4):
    """A fastml estimator (rows in the given order) and the replica that should match it."""
    K = 1 if n_classes == 2 else n_classes
    common = dict(shuffle=False, average=average, average_halflife=halflife, tol=None)
    if name == "Perceptron":
        est = Perceptron(max_iter=3, **common)
        rep = Replica("perceptron", K, d, lambda t: 1.0, 0.0, average=average,
                      halflife=halflife, progressive="mistakes", n_classes=n_classes,
                      relative=False)
    elif name == "LinearSVM":
        est = LinearSVM(alpha=0.01, max_iter=3, **common)
        eta = step_sizes("hinge", "optimal", eta0=0.01, alpha=0.01)
        rep = Replica("hinge", K, d, eta, 0.01, average=average, halflife=halflife,
                      n_classes=n_classes)
    else:
        solver = "sgd" if name == "LogisticRegression(sgd)" else "minibatch"
        size = 1 if solver == "sgd" else batch_size
        est = LogisticRegression(solver=solver, learning_rate="inverse", eta0=0.5, alpha=0.01,
                                 batch_size=batch_size, max_iter=3, **common)
        rep = Replica("log", K, d, lambda t: 0.5 / t, 0.01, batch_size=size, average=average,
                      halflife=halflife, n_classes=n_classes)
    return est, rep


NAMES = ["Perceptron", "LinearSVM", "LogisticRegression(sgd)", "LogisticRegression(minibatch)"]


def _close(actual, expected):
    np.testing.assert_allclose(actual, expected, rtol=1e-12,
                               atol=1e-12 * max(1.0, float(np.max(np.abs(expected)))))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("halflife, average", [(7.0, False), (0.3, False), (5.0, 20),
                                               (None, True)])
@pytest.mark.parametrize("sparse", [False, True])
def test_fit_equals_the_numpy_replica(name, n_classes, halflife, average, sparse):
    """coef_, intercept_ and progressive_loss_ of three epochs equal the replica's to 1e-12,
    dense and CSR: the recency-weighted average (halflife 0.3 folds the kernel's scale c
    into A and B every ~150 steps), averaging started after 20 steps, and the uniform one."""
    X, codes, sw = _data(n_classes=n_classes)
    est, rep = _estimator_and_replica(name, n_classes, X.shape[1], halflife=halflife,
                                      average=average)
    est.fit(sp.csr_matrix(X) if sparse else X, codes, sample_weight=sw)
    expected_progressive = [rep.epoch(X, codes, sw, new=i == 0) for i in range(3)]
    W, b = rep.coef()
    _close(est.coef_, W)
    _close(est.intercept_, b)
    _close(est.progressive_loss_, expected_progressive)


@pytest.mark.parametrize("name", NAMES)
def test_the_average_and_progressive_loss_carry_on_across_partial_fit(name):
    """partial_fit on three chunks = the replica on their concatenation (one pass): the
    recency-weighted average continues across calls, and progressive_loss_ has one value
    per call (the chunk's mean loss before each update)."""
    X, codes, sw = _data(n=96, n_classes=3, seed=1)
    est, rep = _estimator_and_replica(name, 3, X.shape[1], halflife=6.0, batch_size=4)
    chunks = [slice(0, 40), slice(40, 72), slice(72, 96)]
    expected = []
    for rows in chunks:
        est.partial_fit(X[rows], codes[rows], classes=[0, 1, 2], sample_weight=sw[rows])
        expected.append(rep.epoch(X[rows], codes[rows], sw[rows]))
    W, b = rep.coef()
    _close(est.coef_, W)
    _close(est.intercept_, b)
    _close(est.progressive_loss_, expected)


def test_fit_stream_carries_the_average_across_chunks():
    """fit_stream over chunks, two passes, shuffle=False: the replica's model over the
    concatenation, and one progressive loss per pass (the chunks' values weighted)."""
    X, codes, sw = _data(n=80, seed=2)
    est, rep = _estimator_and_replica("LogisticRegression(sgd)", 2, X.shape[1], halflife=9.0)
    chunks = [(X[i:i + 24], codes[i:i + 24], sw[i:i + 24]) for i in range(0, 80, 24)]
    fastml.fit_stream(est, lambda: iter(chunks), epochs=2)
    # every pass steps with one pass's totals, as fit's epochs do: the first from the pass
    # over the labels and weights before it (a repeatable source), the second from the first
    rep.rows_seen, rep.weight_seen = float(len(sw)), float(sum(c[2].sum() for c in chunks))
    expected = []
    for p in range(2):
        losses = [rep.epoch(*chunk, new=False) for chunk in chunks]
        expected.append(np.average(losses, weights=[c[2].sum() for c in chunks]))
    W, b = rep.coef()
    _close(est.coef_, W)
    _close(est.intercept_, b)
    _close(est.progressive_loss_, expected)


@settings(BUDGET, max_examples=15)
@given(seed=st.integers(0, 2**16), halflife=st.floats(0.05, 1e4),
       start=st.sampled_from([False, 3, 40]), n=st.integers(1, 60),
       name=st.sampled_from(NAMES), n_classes=st.sampled_from([2, 3]))
def test_property_any_halflife_matches_the_replica(seed, halflife, start, n, name, n_classes):
    """Any halflife (from far below one step to near-uniform), averaging start and stream
    length: the compiled lazy average equals the explicit weighted sum of the iterates."""
    X, codes, sw = _data(n=max(n, n_classes), n_classes=n_classes, seed=seed)
    est, rep = _estimator_and_replica(name, n_classes, X.shape[1], halflife=halflife,
                                      average=start)
    est.fit(X, codes, sample_weight=sw)    # (a perceptron stops after a mistake-free epoch)
    progressive = [rep.epoch(X, codes, sw, new=i == 0) for i in range(est.n_iter_)]
    W, b = rep.coef()
    _close(est.coef_, W)
    _close(est.intercept_, b)
    _close(est.progressive_loss_, progressive)


# ---------------------------------------------------------------- the changing stream
def _drifting_stream(n, d, seed):
    """Rows x ~ N(0, I); labels from w1 for the first half and from w2 for the second (003:
    "user preferences change over time"), with 5% label noise; and a test set drawn after the
    change."""
    rng = np.random.default_rng(seed)
    w1 = rng.normal(size=d)
    w2 = rng.normal(size=d)
    X = rng.normal(size=(n, d))
    w = np.where((np.arange(n) < n // 2)[:, None], w1, w2)
    y = ((X * w).sum(axis=1) > 0).astype(int)
    flip = rng.random(n) < 0.05
    y[flip] = 1 - y[flip]
    X_test = rng.normal(size=(5000, d))
    return X, y, X_test, (X_test @ w2 > 0).astype(int)


@pytest.mark.parametrize("make", [
    lambda **kw: Perceptron(**kw),
    lambda **kw: LinearSVM(alpha=1e-4, learning_rate="constant", eta0=0.2, **kw),
    lambda **kw: LogisticRegression(solver="sgd", learning_rate="constant", eta0=0.5,
                                    alpha=1e-4, **kw),
], ids=["Perceptron", "LinearSVM", "LogisticRegression"])
def test_recency_weighted_average_wins_after_the_change(make):
    """One pass of partial_fit over a stream whose true weights change halfway: on the new
    distribution the recency-weighted average (halflife 300 steps) beats both the uniform
    average (still half the old w) and the last iterate (noisy) by 2 points of accuracy,
    for each of three seeds."""
    for seed in range(3):
        X, y, X_test, y_test = _drifting_stream(20000, 10, seed)
        scores = {}
        for kind, options in (("last", {}), ("uniform", dict(average=True)),
                              ("recent", dict(average_halflife=300.0))):
            model = make(random_state=seed, shuffle=True, **options)
            for first in range(0, len(y), 1000):
                model.partial_fit(X[first:first + 1000], y[first:first + 1000], classes=[0, 1])
            scores[kind] = model.score(X_test, y_test)
        assert scores["recent"] > max(scores["last"], scores["uniform"]) + 0.02, scores


# ---------------------------------------------------------------- early_stopping="progressive"
def _stop_epoch(curve, tol, patience):
    """The epoch count at which the rule of _iterate.py stops on `curve` (None: never)."""
    best, stale = np.inf, 0
    for i, value in enumerate(curve):
        stale = stale + 1 if value > best - tol else 0
        best = min(best, value)
        if stale >= patience:
            return i + 1
    return None


def test_perceptron_early_stopping_watches_the_mistake_rate():
    """Non-separable data: with early_stopping="progressive" the perceptron stops where the
    rule stops on its mistake rate (progressive_loss_), not on the mean perceptron loss; the
    mistake rate of each epoch is its mistakes over its rows."""
    X, codes, _ = _data(n=300, seed=3, sparse_fraction=0.0)
    model = Perceptron(early_stopping="progressive", tol=0.01, n_iter_no_change=3,
                       max_iter=200, random_state=0, shuffle=True).fit(X, codes)
    assert model.n_iter_ < 200
    assert _stop_epoch(model.progressive_loss_, 0.01, 3) == model.n_iter_ == \
        len(model.progressive_loss_)
    plain = Perceptron(tol=None, max_iter=model.n_iter_, random_state=0,
                       shuffle=True).fit(X, codes)
    assert plain.n_mistakes_ == model.n_mistakes_
    assert sum(model.progressive_loss_) * len(X) == pytest.approx(model.n_mistakes_)
    # the perceptron loss is another curve (it grows with |w|): the two rules differ here
    assert _stop_epoch(model.loss_curve_, 0.01, 3) != model.n_iter_


def test_logistic_progressive_early_stopping_holds_nothing_out():
    """LogisticRegression: "progressive" trains on every row (the model equals the one of the
    default rule, which watches the same numbers), True holds out validation_fraction."""
    X, codes, _ = _data(n=400, seed=4, sparse_fraction=0.0)
    options = dict(solver="sgd", tol=1e-3, n_iter_no_change=2, max_iter=100, random_state=0)
    progressive = LogisticRegression(early_stopping="progressive", **options).fit(X, codes)
    default = LogisticRegression(**options).fit(X, codes)
    held_out = LogisticRegression(early_stopping=True, **options).fit(X, codes)
    assert progressive.n_iter_ < 100
    assert progressive.n_iter_ == _stop_epoch(progressive.progressive_loss_, 1e-3, 2)
    np.testing.assert_array_equal(progressive.coef_, default.coef_)
    assert progressive.progressive_loss_ == progressive.loss_curve_
    assert not np.allclose(held_out.coef_, progressive.coef_)


def test_fit_stream_stops_its_passes_on_the_progressive_loss():
    X, codes, _ = _data(n=300, seed=5, sparse_fraction=0.0)
    chunks = [(X[i:i + 100], codes[i:i + 100]) for i in range(0, 300, 100)]
    model = LinearSVM(early_stopping="progressive", tol=0.05, n_iter_no_change=2,
                      random_state=0)
    fastml.fit_stream(model, lambda: iter(chunks), epochs=40)
    assert model.n_iter_ < 40
    assert len(model.progressive_loss_) == model.n_iter_ == \
        _stop_epoch(model.progressive_loss_, 0.05, 2)
    unstopped = fastml.fit_stream(LinearSVM(tol=0.05, n_iter_no_change=2, random_state=0),
                                  lambda: iter(chunks), epochs=40)
    assert unstopped.n_iter_ == 40


# ---------------------------------------------------------------- parameters and state
@pytest.mark.parametrize("make", [Perceptron, LinearSVM,
                                  lambda **kw: LogisticRegression(solver="sgd", **kw)])
@pytest.mark.parametrize("bad", [0, -1.0, float("inf"), float("nan"), "10", True])
def test_bad_halflife_is_a_clear_error(make, bad):
    X, codes, _ = _data()
    with pytest.raises(ValueError, match="average_halflife"):
        make(average_halflife=bad).fit(X, codes)


@pytest.mark.parametrize("make", [Perceptron, LinearSVM,
                                  lambda **kw: LogisticRegression(solver="sgd", **kw)])
def test_bad_early_stopping_is_a_clear_error(make):
    X, codes, _ = _data()
    with pytest.raises(ValueError, match="early_stopping"):
        make(early_stopping="validation").fit(X, codes)


@pytest.mark.parametrize("make, option", [
    (lambda **kw: LinearSVM(solver="subgradient", **kw), dict(average_halflife=5.0)),
    (lambda **kw: LinearSVM(solver="subgradient", **kw), dict(early_stopping="progressive")),
    (lambda **kw: LogisticRegression(solver="lbfgs", **kw), dict(average_halflife=5.0)),
])
def test_batch_solvers_refuse_the_online_options(make, option):
    X, codes, _ = _data()
    with pytest.raises(ValueError, match=next(iter(option))):
        make(**option).fit(X, codes)


@pytest.mark.parametrize("name", NAMES)
def test_save_load_resumes_the_recency_weighted_average(name):
    """fastml.save / load keeps the lazy average (A, B, c, Z) and progressive_loss_: a loaded
    model's next partial_fit equals the original's to the bit."""
    X, codes, sw = _data(n=60, n_classes=3, seed=6)
    est, _ = _estimator_and_replica(name, 3, X.shape[1], halflife=0.4)
    est.partial_fit(X[:40], codes[:40], classes=[0, 1, 2], sample_weight=sw[:40])
    buffer = io.BytesIO()
    fastml.save(est, buffer)
    loaded = fastml.load(io.BytesIO(buffer.getvalue()))
    assert loaded.progressive_loss_ == est.progressive_loss_
    for model in (est, loaded):
        model.partial_fit(X[40:], codes[40:], sample_weight=sw[40:])
    np.testing.assert_array_equal(loaded.coef_, est.coef_)
    np.testing.assert_array_equal(loaded.intercept_, est.intercept_)
    assert loaded.progressive_loss_ == est.progressive_loss_


def test_a_batch_refit_drops_the_progressive_loss():
    """progressive_loss_ describes the last fit: a refit by a batch solver removes it."""
    X, codes, _ = _data()
    for model, batch in ((LogisticRegression(solver="sgd"), dict(solver="lbfgs")),
                         (LinearSVM(), dict(solver="subgradient", max_iter=5))):
        model.fit(X, codes)
        assert len(model.progressive_loss_) == model.n_iter_
        assert not hasattr(model.set_params(**batch).fit(X, codes), "progressive_loss_")


def _concept_change(n=2000, d=5, seed=0):
    """A concept that changes halfway (lecture 003's drifting stream), with label noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w1, w2 = rng.normal(size=d), rng.normal(size=d)
    margin = np.where(np.arange(n) < n // 2, X @ w1, X @ w2)
    y = (margin + rng.normal(size=n) > 0).astype(int)
    return X, y


def test_progressive_loss_measures_the_deployed_model_by_row_by_row_replay():
    """Issue 32: with averaging, progressive_loss_ is the mistake rate (log-loss) of the model
    predict (predict_proba) would use before each row's step, the running average, replayed
    here row by row with partial_fit; not the raw iterate's, which this stream makes worse."""
    X, y = _concept_change()
    for model, measure in [
            (Perceptron(average_halflife=50, shuffle=False, max_iter=1, tol=None), "mistakes"),
            (LogisticRegression(solver="sgd", average=True, learning_rate="constant",
                                eta0=0.05, shuffle=False, max_iter=1, tol=None), "log")]:
        fitted = fastml.clone(model).fit(X, y)
        replay, losses = fastml.clone(model), []
        for i in range(len(y)):
            if i == 0:      # zero weights: every margin 0, a mistake by the perceptron's rule
                losses.append(1.0 if measure == "mistakes" else np.log(2.0))
            elif measure == "mistakes":
                losses.append(float(replay.predict(X[i:i + 1])[0] != y[i]))
            else:
                losses.append(-np.log(replay.predict_proba(X[i:i + 1])[0, y[i]]))
            replay.partial_fit(X[i:i + 1], y[i:i + 1], classes=[0, 1])
        np.testing.assert_allclose(fitted.progressive_loss_, [np.mean(losses)], rtol=1e-12)
        np.testing.assert_array_equal(fitted.coef_, replay.coef_)
    # the raw iterate's mistake rate is another number: 0.175 here against the average's 0.153
    raw = Perceptron(shuffle=False, max_iter=1, tol=None).fit(X, y)
    averaged = Perceptron(average_halflife=50, shuffle=False, max_iter=1, tol=None).fit(X, y)
    assert averaged.progressive_loss_[0] < raw.progressive_loss_[0] - 0.01
