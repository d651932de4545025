"""n_jobs > 1 for the SGD family: each epoch by parameter mixing over threads (issue 13;
fastml/linear_model/_sgd.py, SGDEngine.mixed_epoch and mix_into).

The reference is a replica written here in numpy: copies of the state each run the serial
kernel on one contiguous shard of the epoch's order, then their weights, intercepts, AdaGrad
sums and running averages (explicit sum S = c (A + B W) and mass Z) are averaged with the
shards' sample-weight sums, and the step clock advances by all the shards' steps."""
import copy
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from fastml import ConvergenceWarning, LinearRegression, LinearSVM, LogisticRegression, Perceptron
from fastml.exceptions import DivergenceError
from fastml.linear_model import _sgd_fast
from fastml.linear_model._sgd import SGDEngine, epoch_order

pytestmark = pytest.mark.kernel

SCALE, STEPS, AVERAGE_B, N_AVERAGED, AVERAGE_C = range(5)     # _sgd_fast.STATE_SLOTS


def _data(n=301, d=6, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.3] = 0.0
    W = rng.normal(size=(d, classes))
    labels = np.argmax(X @ W + rng.gumbel(size=(n, classes)), axis=1).astype(np.float64)
    return X, labels.reshape(-1, 1), (X @ W[:, :1] + 0.1 * rng.normal(size=(n, 1)))


def _shards(order, k):
    bounds = [len(order) * i // k for i in range(k + 1)]
    return [order[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]


def replica_mixed_epoch(engine, X, Y, sw, order, epoch, k):
    """A new engine holding the mix of `engine` after one epoch over `order` in k shards."""
    copies = [copy.deepcopy(engine) for _ in _shards(order, k)]
    for e, rows in zip(copies, _shards(order, k)):
        e.epoch(X, Y, sw, rows, epoch)
    p = np.array([sw[rows].sum() for rows in _shards(order, k)])
    p = p / p.sum()

    def mean(values):
        return sum(pj * np.asarray(v, dtype=np.float64) for pj, v in zip(p, values))

    mixed = copy.deepcopy(engine)
    mixed.W = mean([e.state[SCALE] * e.W.astype(np.float64) for e in copies]).astype(e.dtype)
    mixed.b = mean([e.b for e in copies]).astype(e.dtype)
    mixed.G, mixed.Gb, mixed.Ab = (mean([getattr(e, name) for e in copies])
                                   for name in ("G", "Gb", "Ab"))
    if engine.config["average"]:
        mixed.A = mean([e.state[AVERAGE_C] * (e.A + e.state[AVERAGE_B] * e.W) for e in copies])
    mixed.state = np.array([1.0, engine.n_steps + sum(e.n_steps - engine.n_steps
                                                      for e in copies),
                            0.0, mean([e.state[N_AVERAGED] for e in copies]), 1.0])
    mixed.n_updates = engine.n_updates + sum(e.n_updates - engine.n_updates for e in copies)
    return mixed


def _engine(loss, schedule, batch_size=1, average=False, halflife=None, dtype=np.float64,
            K=1):
    return SGDEngine(K, 6, dtype, loss=loss, learning_rate=schedule, eta0=0.05, alpha=1e-2,
                     decay=0.5, batch_size=batch_size, average=average,
                     average_halflife=halflife, label_offset=0 if K > 1 or loss == "squared"
                     else 1, reference=loss == "log" and K == 1)


def _model(engine):
    return np.concatenate([engine.coef().ravel(), engine.intercept()])


CASES = [("log", "adagrad", 1, False, None, 1), ("log", "optimal", 1, True, None, 1),
         ("perceptron", "constant", 1, True, None, 1), ("hinge", "inverse", 1, 40, None, 1),
         ("squared", "decay", 4, False, None, 1), ("log", "constant", 1, False, 20.0, 1),
         ("log", "adagrad", 8, True, None, 3), ("hinge", "adagrad", 1, 100, None, 3)]


@pytest.mark.parametrize("loss, schedule, batch_size, average, halflife, K", CASES)
@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("csr", [False, True])
def test_mixed_epoch_equals_the_numpy_replica(loss, schedule, batch_size, average, halflife,
                                              K, k, csr):
    """Every loss, schedule, averaging (from step 0, from step n, recency-weighted) and
    mini-batches, K = 1 or 3 outputs, dense and CSR, 2 or 3 shards, unequal sample weights:
    two mixed epochs after a serial one (so the lazy scale and average are mid-flight) give the
    replica's model to 1e-12, and so does a serial epoch after them (the whole state agrees:
    clock, AdaGrad sums, average mass)."""
    X, labels, targets = _data(classes=max(K, 2))
    Y = np.repeat(targets, K, axis=1) if loss == "squared" else labels
    Xin = sp.csr_matrix(X) if csr else X
    sw = np.random.default_rng(1).uniform(0.2, 2.0, size=len(X))
    engine = _engine(loss, schedule, batch_size, average, halflife, K=K)
    rng = np.random.default_rng(2)
    engine.epoch(Xin, Y, sw, epoch_order(rng, len(X), True), 0)
    replica = copy.deepcopy(engine)
    for epoch in (1, 2):
        order = epoch_order(rng, len(X), True)
        got = engine.mixed_epoch(Xin, Y, sw, order, epoch, k)
        replica = replica_mixed_epoch(replica, Xin, Y, sw, order, epoch, k)
        np.testing.assert_allclose(_model(engine), _model(replica), rtol=0, atol=1e-12)
        assert engine.n_steps == replica.n_steps and engine.n_updates == replica.n_updates
        assert got[1] <= len(X) and np.isfinite(got[0])
    order = epoch_order(rng, len(X), True)
    engine.epoch(Xin, Y, sw, order, 3)
    replica.epoch(Xin, Y, sw, order, 3)
    np.testing.assert_allclose(_model(engine), _model(replica), rtol=0, atol=1e-12)


@pytest.mark.parametrize("n, k", [(1000, 2), (1000, 3), (1024, 2), (600, 5)])
@pytest.mark.parametrize("shuffle", ["block", False])
@pytest.mark.parametrize("loss, schedule, average", [("perceptron", "constant", True),
                                                     ("log", "adagrad", False)])
def test_shards_cut_inside_a_block_take_the_serial_shards_steps(n, k, shuffle, loss, schedule,
                                                                average):
    """The compiled shards (sgd_shards_epoch) run a shard that starts inside a block of
    shuffle="block" in two pieces (the block's head, then whole blocks) and rows in consecutive
    order in place: each shard's state is bit for bit what the serial epoch gives on a copy
    over the same rows (shards cut mid-block, at a block boundary: 1024 / 2, and 5 shards)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(n, 6))
    Y = (rng.random((n, 1)) < 0.5).astype(np.float64)
    sw = rng.uniform(0.5, 1.5, size=n)
    engine = _engine(loss, schedule, average=average)
    engine.epoch(X, Y, sw, epoch_order(rng, n, True), 0)
    order = epoch_order(rng, n, shuffle)
    bounds = np.array([n * i // k for i in range(k + 1)], dtype=np.intp)
    names = ("W", "b", "G", "Gb", "A", "Ab", "state")
    stacked = [np.repeat(getattr(engine, name)[np.newaxis], k, axis=0) for name in names]
    engine.config["epoch"] = 1
    results = _sgd_fast.sgd_shards_epoch(X, Y, sw, order, bounds, *stacked, engine.config)
    for j, rows in enumerate(_shards(order, k)):
        serial = copy.deepcopy(engine)
        got = serial.epoch(X, Y, sw, rows, 1)
        loss_sum, updates, bad, step_weight, deployed_loss, deployed_mistakes, weight_sum = \
            results[j]
        assert (updates, bad) == (got.updates, -1)  # the sums: the head's and the rest's added
        np.testing.assert_allclose(
            [loss_sum, step_weight, deployed_loss, deployed_mistakes, weight_sum],
            [got.loss, got.step_weight, got.deployed_loss, got.deployed_mistakes,
             sw[rows].sum()], rtol=1e-13)
        for name, values in zip(names, stacked):
            np.testing.assert_array_equal(values[j], getattr(serial, name), err_msg=name)


def test_shards_refuse_rows_outside_x_and_leave_the_state():
    X, labels, _ = _data()
    engine = _engine("log", "constant")
    before = copy.deepcopy(engine._arrays())
    order = np.arange(len(X))
    order[200] = len(X)
    with pytest.raises(ValueError, match="outside X"):
        engine.mixed_epoch(X, labels, np.ones(len(X)), order, 0, 2)
    for name, value in before.items():
        np.testing.assert_array_equal(getattr(engine, name), value, err_msg=name)


def test_early_stop_leaves_the_rng_where_the_serial_loop_would():
    """n_jobs > 1 draws the next epoch's order during the current epoch: when the loop stops
    before taking it, the rng goes back, so it is where the epochs that ran left it (the
    following partial_fit shuffles as it would serially)."""
    X, labels, _ = _data(n=600)
    y = labels.ravel()
    model = Perceptron(max_iter=50, tol=0.5, n_iter_no_change=1, random_state=3, n_jobs=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    assert 1 < model.n_iter_ < 50
    rng = np.random.default_rng(3)
    for _ in range(model.n_iter_):
        epoch_order(rng, len(X), model.shuffle)
    assert model._rng.bit_generator.state == rng.bit_generator.state


def test_mixed_epoch_float32_equals_the_replica():
    X, labels, _ = _data()
    X32, sw = X.astype(np.float32), np.ones(len(X))
    engine = _engine("log", "adagrad", average=True, dtype=np.float32)
    replica = copy.deepcopy(engine)
    for epoch in range(3):
        order = epoch_order(np.random.default_rng(epoch), len(X), True)
        engine.mixed_epoch(X32, labels, sw, order, epoch, 2)
        replica = replica_mixed_epoch(replica, X32, labels, sw, order, epoch, 2)
    assert engine.W.dtype == engine.coef().dtype == np.float32
    np.testing.assert_allclose(_model(engine), _model(replica), rtol=1e-6, atol=1e-6)


def test_the_clock_advances_by_every_shards_steps():
    """t advances by the steps of every shard: the serial epoch's rows for one row per step;
    with mini-batches each shard's batches (51 and 52 rows: 6 + 6, the serial epoch 11)."""
    X, labels, _ = _data(n=103)
    for batch_size, steps in ((1, 103), (10, 6 + 6)):
        engine = _engine("log", "inverse", batch_size)
        engine.mixed_epoch(X, labels, np.ones(103), np.arange(103), 0, 2)
        assert engine.n_steps == steps


@pytest.mark.parametrize("make, y", [
    (lambda j: LogisticRegression(solver="sgd", max_iter=3, tol=None, random_state=0,
                                  n_jobs=j), "labels"),
    (lambda j: LogisticRegression(solver="minibatch", batch_size=16, max_iter=3, tol=None,
                                  average=True, random_state=0, n_jobs=j), "labels"),
    (lambda j: Perceptron(max_iter=3, tol=None, average=True, random_state=0, n_jobs=j),
     "labels"),
    (lambda j: LinearSVM(max_iter=3, tol=None, random_state=0, n_jobs=j), "labels"),
    (lambda j: LinearRegression(solver="sgd", max_iter=3, tol=None, random_state=0, n_jobs=j),
     "targets")])
def test_estimators_mix_like_the_replica_and_repeat_exactly(make, y):
    """fit with n_jobs=2 = the replica run epoch by epoch on the estimator's own row orders
    (same seed); three runs give the same bits; n_jobs=2 is not the serial model."""
    X, labels, targets = _data(classes=3 if y == "labels" else 2)
    target = labels.ravel() if y == "labels" else targets.ravel()
    fits = [make(2).fit(X, target) for _ in range(3)]
    for other in fits[1:]:
        np.testing.assert_array_equal(other.coef_, fits[0].coef_)
        np.testing.assert_array_equal(other.intercept_, fits[0].intercept_)
    serial = make(1)
    serial.fit(X, target)
    assert not np.allclose(serial.coef_, fits[0].coef_)
    engine = copy.deepcopy(serial._engine)       # a fresh state of the same configuration
    for name in ("W", "b", "G", "Gb", "A", "Ab"):
        getattr(engine, name)[...] = 0
    engine.state[:] = [1.0, 0.0, 0.0, 0.0, 1.0]
    engine.n_updates = 0
    Y = serial_targets(serial, target)
    rng = np.random.default_rng(0)
    for epoch in range(3):
        order = epoch_order(rng, len(X), serial.shuffle)   # the default: "block"
        engine = replica_mixed_epoch(engine, X, Y, np.ones(len(X)), order, epoch, 2)
    np.testing.assert_allclose(np.ravel(fits[0].coef_), np.ravel(engine.coef()), rtol=0,
                               atol=1e-12)
    np.testing.assert_allclose(np.ravel(fits[0].intercept_), np.ravel(engine.intercept()),
                               rtol=0, atol=1e-12)


def serial_targets(model, target):
    """The kernel's targets of a fitted model (its OutputLayout), or the regression column."""
    from fastml.linear_model._base import OutputLayout
    if not hasattr(model, "classes_"):
        return target.reshape(-1, 1)
    scheme = getattr(model, "multi_class", "one_vs_rest")
    layout = OutputLayout(len(model.classes_), scheme)
    return layout.targets(np.searchsorted(model.classes_, target))


def test_partial_fit_is_one_mixing_round():
    X, labels, _ = _data()
    y = labels.ravel()
    model = Perceptron(random_state=5, n_jobs=2)
    model.partial_fit(X[:150], y[:150], classes=[0, 1]).partial_fit(X[150:], y[150:])
    reference = Perceptron(random_state=5)
    reference.partial_fit(X[:1], y[:1], classes=[0, 1])      # the configuration, then reset
    engine = copy.deepcopy(reference._engine)
    for name in ("W", "b"):
        getattr(engine, name)[...] = 0
    engine.state[:] = [1.0, 0.0, 0.0, 0.0, 1.0]
    engine.n_updates = 0
    rng = np.random.default_rng(5)
    Y = labels.astype(np.float64)
    for part, (a, b) in enumerate(((0, 150), (150, len(X)))):
        order = epoch_order(rng, b - a, True)
        engine = replica_mixed_epoch(engine, np.ascontiguousarray(X[a:b]), Y[a:b],
                                     np.ones(b - a), order, part, 2)
    np.testing.assert_allclose(model.coef_.ravel(), engine.coef().ravel(), rtol=0, atol=1e-12)
    assert model.n_mistakes_ == engine.n_updates and model.t_ == len(X)


STORED = {  # coefficients and intercepts with n_jobs=None before n_jobs existed (main 386caf0)
    "logistic_sgd": ([1.1437268599679742, -2.2635653625654553, 0.6057443869118632,
                      0.02823220456578979], [0.005225416638988836]),
    "logistic_minibatch_avg": ([3.509010453502052, -6.912847148737684, 1.7944307864376579,
                                -0.20965835344534356], [-0.17032411868204891]),
    "perceptron_avg": ([3.254595496478699, -6.687915790253634, 1.8428977568938576,
                        -0.06855009515961538], [-0.06333333333333334]),
    "svm": ([18.65892718602441, -37.502820564577874, 11.42059707621005, 5.543958356894127],
            [10.038899477709073]),
    "regression_sgd": ([0.8969015369799078, -1.794424821454445, 0.4368491726095413,
                        0.025318903111503054], [0.006126357130929456]),
}


@pytest.mark.parametrize("n_jobs", [None, 1])
def test_one_thread_is_the_serial_loop_bit_for_bit(n_jobs):
    rng = np.random.default_rng(11)
    X, w = rng.normal(size=(300, 4)), np.array([1.0, -2.0, 0.5, 0.0])
    y = (X @ w + 0.5 * rng.normal(size=300) > 0).astype(int)
    yr = X @ w + 0.1 * rng.normal(size=300)
    common = dict(max_iter=3, tol=None, random_state=0, n_jobs=n_jobs, shuffle=True)  # stored
    models = {
        "logistic_sgd": (LogisticRegression(solver="sgd", **common), y),
        "logistic_minibatch_avg": (LogisticRegression(
            solver="minibatch", batch_size=16, average=True, learning_rate="optimal",
            **common), y),
        "perceptron_avg": (Perceptron(average=True, **common), y),
        "svm": (LinearSVM(**common), y),
        "regression_sgd": (LinearRegression(solver="sgd", **common), yr)}
    for name, (model, target) in models.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(X, target)
        assert np.ravel(model.coef_).tolist() == STORED[name][0], name
        assert np.ravel(model.intercept_).tolist() == STORED[name][1], name


def test_csr_mixes_like_dense():
    X, labels, _ = _data(n=400)
    y = labels.ravel()
    dense = LogisticRegression(solver="sgd", max_iter=4, tol=None, random_state=1,
                               n_jobs=2).fit(X, y)
    csr = LogisticRegression(solver="sgd", max_iter=4, tol=None, random_state=1,
                             n_jobs=2).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(dense.coef_, csr.coef_, rtol=0, atol=1e-12)


def test_two_threads_stay_within_one_percent_of_the_optimum():
    """W1-like data (logistic, 100 features, as tests/test_dask.py): with n_jobs=2 the
    held-out log-loss after the default epochs is within 1% of the lbfgs optimum."""
    n, d = 16_000, 100
    rng = np.random.default_rng(5)
    w = rng.normal(size=d) / np.sqrt(d) * 2
    X = rng.normal(size=(n, d))
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(X @ w)))).astype(int)
    train, test = slice(0, 12_000), slice(12_000, None)
    mixed = LogisticRegression(solver="sgd", random_state=3, n_jobs=2).fit(X[train], y[train])
    optimum = LogisticRegression(alpha=1e-4).fit(X[train], y[train])

    def log_loss(model):
        return -np.mean(np.log(model.predict_proba(X[test])[np.arange(4000), y[test]]))

    assert log_loss(mixed) <= 1.01 * log_loss(optimum)


def test_a_diverging_shard_leaves_the_state_as_it_was():
    X, _, targets = _data()
    X = X * 1e3
    engine = _engine("squared", "constant")
    engine.config["eta0"] = 10.0
    before = {name: value.copy() for name, value in engine._arrays().items()}
    with pytest.raises(DivergenceError, match="SGD diverged in epoch 1"):
        engine.mixed_epoch(X, targets, np.ones(len(X)), np.arange(len(X)), 0, 2)
    for name, value in before.items():
        np.testing.assert_array_equal(getattr(engine, name), value, err_msg=name)
    assert engine.n_updates == 0


def test_fewer_rows_than_threads_and_inputs_unchanged():
    X, labels, _ = _data(n=3)
    y = labels.ravel()
    X_before = X.copy()
    one_row = Perceptron(random_state=0, n_jobs=8).partial_fit(X[:1], y[:1], classes=[0, 1])
    serial = Perceptron(random_state=0).partial_fit(X[:1], y[:1], classes=[0, 1])
    np.testing.assert_array_equal(one_row.coef_, serial.coef_)    # one shard: the serial step
    Perceptron(random_state=0, n_jobs=8, max_iter=2).fit(X, y)
    np.testing.assert_array_equal(X, X_before)


@pytest.mark.parametrize("n_jobs, message", [(0, "n_jobs must be"), (1.5, "n_jobs"),
                                             ("2", "n_jobs"), (2**40, "n_jobs")])
def test_bad_n_jobs_is_refused(n_jobs, message):
    X, labels, _ = _data()
    with pytest.raises((ValueError, TypeError), match=message):
        Perceptron(n_jobs=n_jobs).fit(X, labels.ravel())
