"""The shared SGD loop (fastml/linear_model/_sgd_fast.pyx through _sgd.py): properties every
linear online learner inherits."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, strategies as st

from _reference import non_finite_problems
from test_properties import BUDGET

from fastml.linear_model._sgd import LOSSES, SCHEDULES, SGDEngine, epoch_order, run_epochs

pytestmark = pytest.mark.kernel


def _data(n=120, d=7, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.5] = 0.0          # half zeros: CSR rows really are sparse
    w = rng.normal(size=d)
    labels = (X @ w + 0.3 * rng.normal(size=n) > 0).astype(np.float64)
    targets = (X @ w).reshape(-1, 1)
    return X, labels.reshape(-1, 1), targets


def _fit(X, Y, loss, schedule, batch_size, average, seed=0, dtype=np.float64):
    engine = SGDEngine(1, X.shape[1], dtype, loss=loss, learning_rate=schedule,
                       eta0=0.05, alpha=1e-2, decay=0.5, batch_size=batch_size,
                       average=average, label_offset=1 if loss != "squared" else 0,
                       reference=loss == "log")
    run_epochs(engine, X, Y, np.ones(X.shape[0]), max_iter=4, tol=None, n_iter_no_change=5,
               shuffle=True, rng=np.random.default_rng(seed))
    return engine.coef(), engine.intercept()


@pytest.mark.parametrize("loss, schedule", list(itertools.product(LOSSES, SCHEDULES)))
def test_dense_and_csr_give_the_same_model(loss, schedule):
    """Every schedule and loss: CSR rows and the same rows dense agree to 1e-12 (AdaGrad's L2
    term once reached the coordinates a dense row does not touch, 111% apart)."""
    X, labels, targets = _data()
    Y = targets if loss == "squared" else labels
    for batch_size, average in ((1, False), (1, True), (5, False), (5, 3)):
        dense = _fit(X, Y, loss, schedule, batch_size, average)
        csr = _fit(sp.csr_matrix(X), Y, loss, schedule, batch_size, average)
        for a, b in zip(dense, csr):
            scale = max(1.0, float(np.abs(a).max()))
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * scale,
                                       err_msg=f"batch_size={batch_size} average={average}")


@pytest.mark.parametrize("loss", ["perceptron", "hinge"])
def test_averaged_float32_dense_rows_step_as_csr_rows(loss):
    """float32 weights, the averaged steps: a dense row's A -= B c x (csrc/fastml_simd.h's
    AVX2 clone) rounds as the CSR loop does, so the two give the same bits."""
    X, Y, _ = _data(n=300, d=13, seed=2)
    X = X.astype(np.float32)
    dense = _fit(X, Y, loss, "constant", 1, True, dtype=np.float32)
    csr = _fit(sp.csr_matrix(X), Y, loss, "constant", 1, True, dtype=np.float32)
    assert dense[0].dtype == np.float32 and np.abs(dense[0]).max() > 0
    for a, b in zip(dense, csr):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("n_outputs", [1, 3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_adagrad_next_margin_while_stepping_on_many_features(n_outputs, dtype):
    """AdaGrad's dense steps compute the next row's dot products while they step
    (csrc/fastml_adagrad.h, spans of 32 weights). With 77 features every part of that loop
    runs (two spans, then 8, 4 and 1 left over), and the model must be the CSR rows' model,
    whose margins are plain dot products after each step."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(300, 77)).astype(dtype)
    X[rng.random(X.shape) < 0.3] = 0.0
    n_classes = 2 if n_outputs == 1 else n_outputs      # one output: binary
    codes = rng.integers(0, n_classes, 300)
    models = []
    for rows in (X, sp.csr_matrix(X)):
        engine = SGDEngine(n_outputs, 77, dtype, loss="log", learning_rate="adagrad",
                           eta0=0.1, alpha=1e-3, label_offset=1 if n_outputs == 1 else 0,
                           reference=n_outputs == 1)
        run_epochs(engine, rows, codes.astype(np.float64).reshape(-1, 1), np.ones(300),
                   max_iter=3, tol=None, n_iter_no_change=5, shuffle=True,
                   rng=np.random.default_rng(0))
        models.append(engine.coef())
    dense, csr = models
    assert np.abs(dense).max() > 0.01
    np.testing.assert_allclose(dense, csr, rtol=0,
                               atol=(1e-12 if dtype == np.float64 else 1e-5) * np.abs(dense).max())


@pytest.mark.parametrize("loss, schedule, average", [("log", "adagrad", False),
                                                     ("perceptron", "constant", True),
                                                     ("hinge", "optimal", False)])
def test_block_path_gives_the_dense_model(loss, schedule, average):
    """shuffle="block" on dense rows steps on each block in place while the next one is
    prefetched (run_epoch's block path); the steps are those of the same order through CSR
    rows and through the row gather (the same order with its first two blocks' rows
    interleaved cannot be a block)."""
    X, Y, _ = _data(n=600, d=9, seed=4)     # 2 blocks of 256 and a short one of 88 rows
    order = epoch_order(np.random.default_rng(1), 600, "block")

    def fit(X, order):
        engine = SGDEngine(1, 9, np.float64, loss=loss, learning_rate=schedule, eta0=0.05,
                           alpha=1e-2, average=average, label_offset=1,
                           reference=loss == "log")
        for epoch in range(2):
            engine.epoch(X, Y, np.ones(600), order, epoch)
        return np.concatenate([engine.coef().ravel(), engine.intercept()])

    dense = fit(X, order)
    np.testing.assert_allclose(dense, fit(sp.csr_matrix(X), order), rtol=0, atol=1e-12)
    # move row order[0] one block later: no chunk is a block any more, the gather runs
    moved = np.concatenate([order[1:257], order[:1], order[257:]])
    np.testing.assert_allclose(fit(X, moved), fit(sp.csr_matrix(X), moved), rtol=0,
                               atol=1e-12)
    assert not np.allclose(fit(X, moved), dense)


def test_logistic_adagrad_dense_equals_csr():
    """The reported case: LogisticRegression's SGD default (AdaGrad) on data with zeros."""
    from fastml.linear_model import LogisticRegression
    X, labels, _ = _data(n=200, d=10, seed=3)
    y = labels.ravel()
    a = LogisticRegression(solver="sgd", max_iter=5, tol=None, random_state=0).fit(X, y)
    b = LogisticRegression(solver="sgd", max_iter=5, tol=None, random_state=0).fit(
        sp.csr_matrix(X), y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=0, atol=1e-12)


@pytest.mark.parametrize("batch_size", [40, 10**9, 2**40, 2**80])
def test_batch_size_beyond_the_rows_is_the_rows(batch_size):
    """A batch never holds more rows than there are: batch_size > n is clamped to n (it once
    allocated batch_size-sized buffers: 8 GB for 40 rows; 2**40 overflowed C's int)."""
    from fastml.linear_model import LogisticRegression
    X, labels, _ = _data(n=40, d=5, seed=4)
    y = labels.ravel()
    ref = LogisticRegression(solver="minibatch", batch_size=40, max_iter=3, tol=None,
                             random_state=0).fit(X, y)
    big = LogisticRegression(solver="minibatch", batch_size=batch_size, max_iter=3, tol=None,
                             random_state=0).fit(X, y)
    np.testing.assert_array_equal(big.coef_, ref.coef_)
    chunked = LogisticRegression(solver="minibatch", batch_size=batch_size, random_state=0)
    chunked.partial_fit(X[:25], y[:25], classes=[0, 1]).partial_fit(X[25:], y[25:])
    assert np.isfinite(chunked.coef_).all()


# ---------------------------------------------------------------- shuffle="block" (issue 13)

def _block_structure_holds(order, n, block):
    """order is a permutation of range(n) made of whole aligned blocks, each contiguous."""
    assert order.dtype == np.intp and np.array_equal(np.sort(order), np.arange(n))
    pos = 0
    while pos < n:
        k = order[pos] // block
        size = min(block, n - k * block)
        assert set(order[pos:pos + size].tolist()) == set(range(k * block, k * block + size))
        pos += size


@BUDGET
@given(n=st.integers(0, 2000), block=st.integers(1, 300), seed=st.integers(0, 2**32 - 1))
def test_block_order_is_a_permutation_of_whole_blocks(n, block, seed):
    from fastml.linear_model._sgd import epoch_order
    order = epoch_order(np.random.default_rng(seed), n, "block", block=block)
    _block_structure_holds(order, n, block)
    again = epoch_order(np.random.default_rng(seed), n, "block", block=block)
    np.testing.assert_array_equal(order, again)             # a seed fixes the order


def test_block_order_shuffles_blocks_and_rows_inside_them():
    from fastml.linear_model._sgd import epoch_order
    order = epoch_order(np.random.default_rng(0), 2560, "block", block=256)
    _block_structure_holds(order, 2560, 256)
    starts = order[::256] // 256
    assert sorted(starts.tolist()) == list(range(10)) and starts.tolist() != list(range(10))
    assert not np.array_equal(np.sort(order[:256]), order[:256])   # rows shuffled in a block
    assert not np.array_equal(order, epoch_order(np.random.default_rng(0), 2560, True))


class _Xoshiro:
    """csrc/fastml_rng.h's xoshiro256** seeded by splitmix64, in Python integers."""
    M = 2**64 - 1

    def __init__(self, seed):
        self.s, x = [], seed
        for _ in range(4):
            x = (x + 0x9e3779b97f4a7c15) & self.M
            z = ((x ^ (x >> 30)) * 0xbf58476d1ce4e5b9) & self.M
            z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & self.M
            self.s.append(z ^ (z >> 31))

    def next(self):
        s, rotl = self.s, lambda v, k: ((v << k) | (v >> (64 - k))) & self.M
        result = (rotl((s[1] * 5) & self.M, 7) * 9) & self.M
        t = (s[1] << 17) & self.M
        s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def below(self, n):
        """Lemire's unbiased multiply-shift on the draw's top 32 bits (n < 2^32)."""
        m = (self.next() >> 32) * n
        if m % 2**32 < n:
            while m % 2**32 < (2**32 - n) % n:
                m = (self.next() >> 32) * n
        return m >> 32


def _block_order_replica(seed, n, block):
    rng = _Xoshiro(seed)

    def shuffle(a):                         # Fisher-Yates from the top
        for i in range(len(a) - 1, 0, -1):
            j = rng.below(i + 1)
            a[i], a[j] = a[j], a[i]
        return a

    blocks = shuffle(list(range(-(-n // block))))
    return np.array([row for k in blocks
                     for row in shuffle(list(range(k * block, min(n, (k + 1) * block))))])


@pytest.mark.parametrize("n, block", [(2, 1), (7, 3), (600, 256), (1000, 1), (513, 512)])
def test_block_order_is_the_seeded_c_shuffle(n, block):
    """epoch_order's block order is one seed drawn from the numpy Generator, then Fisher-Yates
    over the blocks and inside each block with the project's generator (csrc/fastml_shuffle.h):
    an exact Python replica."""
    rng = np.random.default_rng(5)
    seed = int(np.random.default_rng(5).integers(2**64, dtype=np.uint64))
    np.testing.assert_array_equal(epoch_order(rng, n, "block", block=block),
                                  _block_order_replica(seed, n, block))


@pytest.mark.parametrize("n", [0, 1, 100, 256])
def test_one_block_is_the_full_shuffle(n):
    """Up to one block of rows, "block" is shuffle=True: the same seeded permutation."""
    np.testing.assert_array_equal(epoch_order(np.random.default_rng(3), n, "block"),
                                  epoch_order(np.random.default_rng(3), n, True))


def test_block_shuffle_on_sorted_labels():
    """The weak case of block shuffling: X sorted by label, so each 256-row block holds one
    class. Within an epoch the blocks still alternate at random, and the fit stays within 2%
    of the full shuffle's held-out log-loss (unshuffled it is far off)."""
    from fastml.linear_model import LogisticRegression
    from fastml.metrics import log_loss
    rng = np.random.default_rng(1)
    X = rng.normal(size=(24_000, 10))
    y = (X @ rng.normal(size=10) + rng.logistic(size=len(X)) > 0).astype(np.int64)
    X_test, y_test, X, y = X[20_000:], y[20_000:], X[:20_000], y[:20_000]
    s = np.argsort(y, kind="stable")
    losses = {}
    for shuffle in (True, "block", False):
        m = LogisticRegression(solver="sgd", max_iter=5, tol=None, random_state=0,
                               shuffle=shuffle).fit(X[s], y[s])
        losses[shuffle] = log_loss(y_test, m.predict_proba(X_test), m.classes_)
    assert losses["block"] <= 1.02 * losses[True]
    assert losses[False] > 1.1 * losses[True]


@pytest.mark.parametrize("shuffle", ["full", "yes", 2, None])
def test_shuffle_must_be_a_bool_or_block(shuffle):
    from fastml.linear_model import Perceptron
    X, labels, _ = _data()
    with pytest.raises(ValueError, match="shuffle must be True, False or 'block'"):
        Perceptron(max_iter=2, shuffle=shuffle).fit(X, labels.ravel())


# ---------------------------------------------------------------- X's finiteness, first epoch

def _sgd_fits():
    """The fits whose first epoch is X's finiteness check (run_epochs(finite_checked=False))."""
    from fastml import LinearSVM, LogisticRegression, Perceptron
    return [lambda s: LogisticRegression(solver="sgd", max_iter=2, random_state=s),
            lambda s: LogisticRegression(solver="minibatch", batch_size=4, max_iter=2,
                                         random_state=s),
            lambda s: LogisticRegression(solver="sgd", max_iter=2, n_jobs=2, random_state=s),
            lambda s: Perceptron(max_iter=2, random_state=s, shuffle="block"),
            lambda s: Perceptron(max_iter=2, average=True, n_jobs=2, random_state=s),
            lambda s: LinearSVM(solver="sgd", max_iter=2, random_state=s)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sgd_fits_name_a_non_finite_x_found_by_their_first_epoch(dtype):
    """The SGD fits skip the up-front finiteness read of dense X: the first epoch computes
    every row's margins, and a NaN / inf cell makes its row's margins non-finite whatever the
    weights (inf x 0 is NaN). Any cell, any row (weight 0 included), up to 600 rows (several
    shuffle blocks, two threads), K = 1 or 3 outputs: the named error, the model left
    unfitted, X as given."""
    fits = _sgd_fits()
    for trial, X, y, sw, message in non_finite_problems(np.random.default_rng(11), 48, 600,
                                                         dtype):
        given = X.copy()
        model = fits[trial % len(fits)](trial)
        with pytest.raises(ValueError, match=message):
            model.fit(X, y, sample_weight=sw)
        assert not hasattr(model, "coef_"), model
        np.testing.assert_array_equal(X, given)


def test_sgd_fit_on_finite_x_skips_the_separate_finiteness_read(monkeypatch):
    """On finite dense X no separate read checks X (the first epoch did); a divergence on
    finite X stays a divergence (DivergenceError); a refit of a fitted model on X with a NaN
    fails as every failed fit does (all_or_nothing: unfitted, never half-built)."""
    import fastml._validation as validation
    import fastml.linear_model._sgd as sgd
    from fastml import Perceptron
    from fastml.exceptions import DivergenceError
    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(700, 6)), rng.integers(0, 3, 700)
    reads = []
    real = validation._check_finite

    def spy(values, *args, **kwargs):
        if getattr(values, "shape", None) == X.shape:
            reads.append(values)
        return real(values, *args, **kwargs)

    monkeypatch.setattr(validation, "_check_finite", spy)
    monkeypatch.setattr(sgd, "_check_finite", spy)
    for make in _sgd_fits():
        make(0).fit(X, y)
    assert reads == []
    from fastml import LogisticRegression
    huge = X * 1e300                    # finite, but the margins overflow: a divergence
    model = LogisticRegression(solver="sgd", learning_rate="constant", eta0=1e10, max_iter=2)
    with pytest.raises(DivergenceError):
        model.fit(huge, y)
    assert len(reads) == 1              # the check ran once, on the failure, and passed
    fitted = Perceptron(max_iter=2, random_state=0).fit(X, y)
    bad = X.copy()
    bad[350, 2] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        fitted.fit(bad, y)
    assert not hasattr(fitted, "coef_") and not hasattr(fitted, "_engine")


def test_sgd_early_stopping_still_checks_its_held_out_rows():
    """Held-out rows are never trained on, so a fit with them checks X up front."""
    from fastml import LogisticRegression
    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(200, 3)), rng.integers(0, 2, 200)
    for row in range(0, 200, 7):
        bad = X.copy()
        bad[row, 1] = np.inf
        with pytest.raises(ValueError, match="X contains infinity"):
            LogisticRegression(solver="sgd", early_stopping=True, max_iter=3,
                               random_state=0).fit(bad, y)


def test_a_diverging_sgd_warns():
    """Steps too long for X's scale: the loss rose 386 -> 1.1e10 over 6 epochs and the fit
    stopped on tol in silence with R^2 = -2569 (an outside audit)."""
    import warnings
    from fastml.exceptions import ConvergenceWarning
    from fastml.linear_model import LinearRegression
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5)) * 6
    y = X @ [1.0, 2, 3, 4, 5]
    with pytest.warns(ConvergenceWarning, match="diverged: the mean training loss rose"):
        LinearRegression(solver="sgd", random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LinearRegression(solver="sgd", random_state=0, max_iter=50).fit(X / 6, y / 6)
