"""The driver of the one SGD loop (_sgd_fast.pyx) that every linear online learner uses.

`SGDEngine` holds the loop's state between epochs and `partial_fit` calls: the weights W (K, d)
stored as scale * W, the intercepts, AdaGrad's sums of squared gradients, the lazy running
average (A, B) and the step count t. `run_epochs` runs epochs with shuffling, convergence on the
training loss (`tol`, `n_iter_no_change`), early stopping on a held-out fraction, divergence
detection and per-epoch progress; with n_jobs > 1, each epoch by parameter mixing over threads
(`SGDEngine.mixed_epoch`, `mix_into`: the one definition of mixing, which the Dask driver
uses too). Estimators (LogisticRegression, Perceptron, LinearSVM,
LinearRegression(solver="sgd")) differ only in the loss and how labels become targets.
"""
import copy
import inspect
import warnings
from concurrent.futures import ThreadPoolExecutor, wait
from typing import NamedTuple

import numpy as np

from . import _sgd_fast as _sgd
from ._iterate import StopRule, iterate
from .._plans import Passes, PassTerms, adopt, class_factors, weigh_rows
from ..exceptions import ConvergenceWarning, DivergenceError
from .._validation import (_check_finite, check_n_jobs, check_param, check_random_state,
                           check_sample_weight, state_array, state_count)

SCHEDULES = tuple(_sgd.SCHEDULES)
LOSSES = _sgd.LOSSES            # loss name -> the kernels' code (_loss.pxd)
_SCALE, _STEPS, _AVERAGE_B, _N_AVERAGED, _AVERAGE_C = (
    _sgd.STATE_SLOTS[name] for name in ("scale", "steps", "average_b", "n_averaged", "average_c"))


class EpochSums(NamedTuple):
    """What an SGD epoch sums over its rows (SGDEngine.epoch)."""
    loss: float                 # sw_i * loss_i at the iterate before each row's step
    updates: int                # rows that moved w
    step_weight: float          # their sw_i (the perceptron's mistakes)
    deployed_loss: float        # sw_i * loss_i at the model coef() reports before the step
    deployed_mistakes: float    # sw_i over the rows that model gets wrong


class SGDEngine:
    """State of the SGD loop for K outputs over d features (see _sgd_fast.pyx for the update).

    Parameters
    ----------
    n_outputs, n_features : int
        K and d.
    dtype : float32 or float64
        The weights' dtype (X must have it).
    loss : "log", "hinge", "perceptron" or "squared"
    learning_rate : "constant", "inverse", "decay", "optimal" or "adagrad"
    eta0, alpha, decay : float
        Base step, L2 strength, decay of the "decay" schedule.
    batch_size : int, default 1
        Rows per step (clamped to the rows of each epoch).
    fit_intercept : bool, default True
    average : bool or int, default False
        Report the running average of the iterates; an int n starts it after n steps.
    average_halflife : float or None, default None
        Weight the iterate t steps ago by 2**(-t / average_halflife) in that average
        (normalised); implies averaging (from the first step unless `average` is an int).
    label_offset : int, default 0
        Output k stands for class code k + label_offset.
    reference : bool, default False
        The "log" loss has a zero-margin class 0 (binary logistic, 002's R-1 vectors).
    adagrad_eps : float, default 1e-8

    Attributes
    ----------
    W, b : ndarray
        Weights (K, d), stored as scale * W, and intercepts (K,).
    G, Gb : ndarray
        AdaGrad's sums of squared gradients (shape 0 for the other schedules).
    A, Ab : ndarray
        The lazy running average c (A + B W) and the running sum of the intercepts (shape 0
        without averaging).
    state : ndarray
        The loop's scalars, by the kernel's STATE_SLOTS.
    n_updates : int
        Rows that moved w so far.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> Y = np.array([[1.0], [0.0]])                  # class codes, output 0 = code 1
    >>> engine = SGDEngine(1, 2, np.float64, loss="perceptron", learning_rate="constant",
    ...                    eta0=1.0, alpha=0.0, label_offset=1)
    >>> engine.epoch(X, Y, np.ones(2), np.arange(2), 0)[:3]       # loss, updates, weight
    (1.0, 2, 2.0)
    >>> engine.coef().tolist(), engine.intercept().tolist()
    ([[1.0, -1.0]], [0.0])
    """

    def __init__(self, n_outputs, n_features, dtype, *, loss, learning_rate, eta0, alpha,
                 decay=0.0, batch_size=1, fit_intercept=True, average=False,
                 average_halflife=None, label_offset=0, reference=False, adagrad_eps=1e-8):
        check_param("learning_rate", learning_rate, choices=SCHEDULES)
        check_param("alpha", alpha, low=0.0)
        check_param("eta0", eta0, low=0.0, low_inclusive=False)
        check_param("decay", decay, low=0.0)
        check_param("batch_size", batch_size, low=1, integer=True, c_int=False)  # clamped to the rows
        if learning_rate == "optimal" and alpha == 0:
            raise ValueError("learning_rate='optimal' needs alpha > 0 (eta = 1/(alpha (t0+t)))")
        self.dtype = np.dtype(dtype)
        self.W = np.zeros((n_outputs, n_features), dtype=self.dtype)
        self.b = np.zeros(n_outputs, dtype=self.dtype)
        adagrad = learning_rate == "adagrad"
        self.G = np.zeros((n_outputs, n_features) if adagrad else (0, 0))
        self.Gb = np.zeros(n_outputs if adagrad else 0)
        if average is None or isinstance(average, (bool, np.bool_)):
            averaging, start = bool(average), 0
        else:   # an int n: average the steps after the first n; 0 = off (as scikit-learn)
            check_param("average", average, low=0, integer=True)
            averaging, start = average > 0, int(average)
        decay = average_decay(average_halflife)
        averaging = averaging or average_halflife is not None
        self.A = np.zeros((n_outputs, n_features) if averaging else (0, 0))
        self.Ab = np.zeros(n_outputs if averaging else 0)
        self.state = np.zeros(_sgd.STATE_SIZE)
        self.state[_SCALE] = 1.0
        self.state[_AVERAGE_C] = 1.0
        self.n_updates = 0  # rows that moved w so far (the perceptron's mistakes)
        # rows and sample weight given so far (relative_weights): the loop steps with the
        # weights scaled to average 1 over them
        self.rows_seen = self.weight_seen = 0.0
        self.config = _schedule_config(loss, learning_rate, eta0, alpha, decay)
        self.config.update(
            # beyond the rows a batch is all of them (the kernel clamps per call); this clamp
            # only keeps a huge int inside C's Py_ssize_t
            label_offset=label_offset, reference=reference,
            batch_size=int(min(batch_size, np.iinfo(np.intp).max)),
            fit_intercept=bool(fit_intercept), average=averaging, average_start=float(start),
            average_decay=decay, adagrad_eps=float(adagrad_eps))

    def relative_weights(self, sample_weight, totals=None):
        """The weights the loop steps with for these rows: `sample_weight` scaled by
        rows_seen / weight_seen, the totals over every row given so far, these included
        (a fit gives its rows once; partial_fit adds each chunk). They average 1 over the rows
        seen, so only the ratios of the weights matter, as in the batch objective
        sum_i s_i l_i / sum_i s_i + penalty: the loop's steps are eta (s'_i dl_i + alpha w),
        whose fixed point is that objective's minimizer only when the s'_i average 1 (with the
        raw weights, scaling them all by c acted as alpha / c). Unit weights are returned
        as they are (the factor is exactly 1).

        totals: (rows, weight) of one pass over all the data, given by the passes over parts
        that know them (sgd_plan below: a stream's passes, the dask rounds): these
        rows are part of that pass, and a pass that reads them again does not add them
        twice, so the totals become exactly those (as a fit's are), not running sums."""
        sample_weight = np.asarray(sample_weight, dtype=np.float64)
        if totals is not None:
            self.rows_seen, self.weight_seen = (float(t) for t in totals)
        else:
            self.rows_seen = getattr(self, "rows_seen", 0.0) + float(len(sample_weight))
            self.weight_seen = getattr(self, "weight_seen", 0.0) + \
                float(np.sum(sample_weight))
        factor = self.rows_seen / self.weight_seen if self.weight_seen > 0 else 1.0
        return sample_weight if factor == 1.0 else sample_weight * factor

    def epoch(self, X, Y, sample_weight, order, epoch_index, step_log=None):
        """One pass over the rows `order`; returns its EpochSums: the weighted loss sum, the
        rows that moved w and their weight sum, each row's loss taken at the weights before the
        step that uses it; and the same loss and mistakes (rows some output's loss derivative
        is nonzero on) of the model coef() would report before each step: the running average
        once averaging has started (progressive validation of the deployed model). step_log
        (len(order), n_outputs) int8, if given, records which outputs stepped on each row (the
        voted perceptron's mistakes).

        A step that makes a margin, a weight or the loss infinite or NaN raises
        DivergenceError (a ValueError and a FloatingPointError) naming the epoch and row, and
        leaves the state as it was before this epoch (its last finite state)."""
        self.config["epoch"] = int(epoch_index)
        saved = self._arrays()
        loss_sum, updates, bad, step_weight, deployed_loss, deployed_mistakes = \
            _sgd.sgd_epoch(X, Y, sample_weight, order, self.W, self.b, self.G, self.Gb, self.A,
                           self.Ab, self.state, self.config, step_log)
        if _diverged(loss_sum, bad, self.W, self.b):
            for name, value in saved.items():
                getattr(self, name)[...] = value
            raise _divergence_error(epoch_index, order, bad)
        self.n_updates += updates
        return EpochSums(loss_sum, updates, step_weight, deployed_loss, deployed_mistakes)

    def mixed_epoch(self, X, Y, sample_weight, order, epoch_index, n_shards):
        """One epoch by parameter mixing on `n_shards` threads; returns what `epoch` returns,
        summed over the shards.

        `order` is cut into n_shards contiguous shards (their lengths differ by at most one
        row; fewer when there are fewer rows). Each shard runs `epoch`'s steps on its own copy
        of this state, all from the same weights and the same step clock t, every shard on its
        own thread in one compiled call (_sgd_fast.sgd_shards_epoch, the GIL released). Then
        this state becomes their mix (`mix_into`, weighted by the shards' sample-weight sums)
        and t becomes t + the steps of all the shards: the next epoch starts where the serial
        one would, so the schedules (inverse, optimal) decay with the total updates; within an
        epoch each shard's steps are sized as the first len(shard) steps of a serial epoch
        would be. The result depends on `order` and n_shards only, never on thread timing. A
        shard that diverges raises its DivergenceError (the first such shard in order) and
        leaves this state as it was."""
        n = len(order)
        bounds = np.unique([n * i // n_shards for i in range(n_shards + 1)]).astype(np.intp)
        if len(bounds) < 3:                 # one shard: the serial epoch
            return self.epoch(X, Y, sample_weight, order, epoch_index)
        self.config["epoch"] = int(epoch_index)
        n_shards = len(bounds) - 1
        stacked = {name: np.repeat(getattr(self, name)[np.newaxis], n_shards, axis=0)
                   for name in _STATE_ARRAYS}
        results = _sgd.sgd_shards_epoch(X, Y, sample_weight, order, bounds,
                                        *(stacked[name] for name in _STATE_ARRAYS), self.config)
        for j, (loss_sum, _, bad, *_) in enumerate(results):
            if _diverged(loss_sum, bad, stacked["W"][j], stacked["b"][j]):
                raise _divergence_error(epoch_index, order[bounds[j]:bounds[j + 1]], bad)
        shards = [self._with_state({name: stacked[name][j] for name in _STATE_ARRAYS})
                  for j in range(n_shards)]
        steps = self.n_steps + sum(shard.n_steps - self.n_steps for shard in shards)
        loss_sum, updates, _, step_weight, deployed_loss, deployed_mistakes, _ = (
            sum(column) for column in zip(*results))
        mix_into(self, shards, [weight for *_, weight in results])
        self.state[_STEPS] = steps
        self.n_updates += updates
        return EpochSums(loss_sum, updates, step_weight, deployed_loss, deployed_mistakes)

    def _with_state(self, arrays):
        """A shallow copy of this engine holding the state `arrays` (name -> array)."""
        engine = copy.copy(self)
        for name, value in arrays.items():
            setattr(engine, name, value)
        return engine

    def _arrays(self):
        """Copies of the state arrays an epoch changes in place (O(K d): an epoch is O(n d))."""
        return {name: getattr(self, name).copy() for name in _STATE_ARRAYS}

    def _check_fitted_state(self):
        """Run by fastml.io.load on a restored state: raise ValueError unless it is one the
        compiled loop (_sgd_fast.pyx) can resume from: W (K, d) and b (K,) in one float dtype,
        AdaGrad's sums (K, d) / (K,) exactly when its schedule is adagrad, the running average
        (K, d) / (K,) exactly when averaging, a known loss and schedule. (The estimator checks
        that K and d fit it: check_sgd_engine.)"""
        if not isinstance(self.dtype, np.dtype) or self.dtype not in (np.float32, np.float64):
            raise ValueError("the SGD state's dtype is not float32 or float64")
        K, d = state_array(self, "W", self.dtype, 2).shape
        state_array(self, "b", self.dtype, (K,))
        config = self.config
        if not isinstance(config, dict) or config.get("loss") not in LOSSES.values() \
                or config.get("schedule") not in _sgd.SCHEDULES.values():
            raise ValueError("the SGD state has an unknown loss or schedule")
        if not isinstance(config.get("average"), bool):
            raise ValueError("the SGD state's average flag is not a boolean")
        decay = config.get("average_decay")
        if not isinstance(decay, float) or not 0.0 <= decay <= 1.0:
            raise ValueError("the SGD state's average_decay is not in [0, 1]")
        adagrad, averaging = config["schedule"] == _sgd.SCHEDULES["adagrad"], config["average"]
        state_array(self, "G", np.float64, (K, d) if adagrad else (0, 0))
        state_array(self, "Gb", np.float64, (K,) if adagrad else (0,))
        state_array(self, "A", np.float64, (K, d) if averaging else (0, 0))
        state_array(self, "Ab", np.float64, (K,) if averaging else (0,))
        state = state_array(self, "state", np.float64, (_sgd.STATE_SIZE,))
        if not 0.0 < state[_AVERAGE_C] <= 1.0:
            raise ValueError("the SGD state's running-average scale is not in (0, 1]")
        state_count(self, "n_updates")
        for name in ("rows_seen", "weight_seen"):       # absent from files of older versions
            value = getattr(self, name, 0.0)
            if not isinstance(value, float) or not 0.0 <= value < np.inf:
                raise ValueError(f"the SGD state's {name} is not a finite float >= 0")
        if not isinstance(config.get("batch_size"), int) or config["batch_size"] < 1:
            raise ValueError("the SGD state's batch_size is not a positive integer")

    def fold_average(self):
        """Make the lazy representation explicit, with no change to coef() or to later steps:
        W holds the weights (scale 1) and A the r-weighted sum of the averaged iterates
        (B = 0, c = 1), so states of several engines can be averaged slot by slot (the Dask
        driver's parameter mixing). O(K d)."""
        if self.config["average"]:
            c, B = self.state[_AVERAGE_C], self.state[_AVERAGE_B]
            self.A = c * (self.A + B * self.W)
            self.state[_AVERAGE_B], self.state[_AVERAGE_C] = 0.0, 1.0
        self.W = (self.state[_SCALE] * self.W).astype(self.dtype)
        self.state[_SCALE] = 1.0

    @property
    def n_steps(self):
        return int(self.state[_STEPS])

    def coef(self):
        """The weights to report (K, d): the running average when averaging has started,
        else the last iterate."""
        n_avg = self.state[_N_AVERAGED]
        if self.config["average"] and n_avg > 0:
            c = self.state[_AVERAGE_C]
            return (c * (self.A + self.state[_AVERAGE_B] * self.W) / n_avg).astype(self.dtype)
        return (self.state[_SCALE] * self.W).astype(self.dtype)

    def intercept(self):
        """The intercepts to report (K,), averaged like `coef`."""
        n_avg = self.state[_N_AVERAGED]
        if self.config["average"] and n_avg > 0:
            return (self.Ab / n_avg).astype(self.dtype)
        return self.b.copy()


_STATE_ARRAYS = ("W", "b", "G", "Gb", "A", "Ab", "state")   # sgd_epoch's order of them


def _diverged(loss_sum, bad, W, b):
    """Did an epoch stop at a row (bad >= 0) or leave the loss, a weight or an intercept not
    finite?"""
    return bad >= 0 or not (np.isfinite(loss_sum) and np.isfinite(W).all()
                            and np.isfinite(b).all())


def _divergence_error(epoch_index, order, bad):
    where = f" at row {int(order[bad])}" if bad >= 0 else ""
    return DivergenceError(
        f"SGD diverged in epoch {int(epoch_index) + 1}{where}: a margin, weight or loss became "
        f"infinite or NaN. Lower eta0 (or use learning_rate='adagrad'), or scale the features "
        f"(e.g. standardize X); the model is left as it was before this epoch")


def mix_into(target, engines, weights):
    """Parameter mixing, the one definition (threads: SGDEngine.mixed_epoch; parts on
    workers: sgd_plan's mix): set `target`'s state (it may be one of `engines`) to the weighted average
    of the engines' states, slot by slot: the weights (scale folded in), intercepts, AdaGrad's
    sums, and the running average's explicit sum S and mass Z (fold_average), so the reported
    average is sum_j p_j S_j / sum_j p_j Z_j (the mean of the engines' averages when their
    masses agree). `weights` >= 0 (the engines' rows or sample weights; all zero = equal);
    the step clock is averaged too and the counter n_updates is left to the caller."""
    p = np.asarray(weights, dtype=np.float64)
    p = p / p.sum() if p.sum() > 0 else np.full(len(engines), 1.0 / len(engines))
    for engine in engines:   # S = A, w = W in every engine: the slots average as the sums do
        engine.fold_average()

    def average(name):
        return np.tensordot(p, np.stack([getattr(engine, name) for engine in engines]), axes=1)

    target.W, target.b = average("W").astype(target.dtype), average("b").astype(target.dtype)
    target.G, target.Gb, target.A, target.Ab = (average(name) for name in ("G", "Gb", "A", "Ab"))
    target.state = average("state")
    target.state[_SCALE] = target.state[_AVERAGE_C] = 1.0    # 1 in every engine (not 1 - ulp)
    for name in ("rows_seen", "weight_seen"):   # the totals behind relative_weights: their
        setattr(target, name, float(sum(        # ratio stays the engines' mean sample weight
            q * getattr(engine, name, 0.0) for q, engine in zip(p, engines))))


def pass_totals(estimator):
    """The (rows, weight) of one pass over all the data that a driver set on `estimator` for
    its partial_fit calls (`_pass_totals`, see SGDEngine.relative_weights), else None."""
    return getattr(estimator, "_pass_totals", None)


def check_sgd_engine(engine, n_outputs, n_features):
    """Raise ValueError unless `engine` is an SGDEngine whose state fits n_outputs x n_features
    (fastml.io.load runs this on a restored model)."""
    if type(engine) is not SGDEngine:
        raise ValueError("the SGD state is not an SGDEngine")
    engine._check_fitted_state()
    if engine.W.shape != (n_outputs, n_features):
        raise ValueError(f"the SGD state's weights have shape {engine.W.shape}; the model has "
                         f"{n_outputs} outputs and {n_features} features")


def average_decay(halflife):
    """r = 2**(-1/halflife), the factor by which an averaged iterate's weight shrinks per step
    (1.0, the uniform average, for None); halflife must be a finite number > 0 (a tiny one
    gives r = 0: the last iterate)."""
    if halflife is None:
        return 1.0
    check_param("average_halflife", halflife, low=0.0, low_inclusive=False)
    return float(2.0 ** (-1.0 / float(halflife)))


def _schedule_config(loss, learning_rate, eta0, alpha, decay):
    """The loop's config entries that fix the loss and the step-size schedule."""
    return dict(loss=LOSSES[loss], schedule=_sgd.SCHEDULES[learning_rate],
                eta0=float(eta0), decay=float(decay), alpha=float(alpha),
                t0=_optimal_t0(loss, alpha), epoch=0)


def step_sizes(loss, learning_rate, *, eta0, alpha, decay=0.0):
    """eta(t), t = 1, 2, ...: the SGD loop's own schedule (one definition, in the kernel) for
    solvers that step outside it. "adagrad" has no single step size and is refused."""
    if learning_rate == "adagrad":
        raise ValueError("learning_rate='adagrad' has one step size per weight")
    config = _schedule_config(loss, learning_rate, eta0, alpha, decay)
    config.update(label_offset=0, reference=False, batch_size=1, fit_intercept=True,
                  average=False, average_start=0.0, average_decay=1.0, adagrad_eps=0.0)
    return lambda t: _sgd.schedule_step(config, float(t))


def _optimal_t0(loss, alpha):
    """Bottou's t0 for eta = 1/(alpha (t0 + t)): the first step is typw / |dloss(-typw)| with
    typw = sqrt(1/sqrt(alpha)), the typical weight size (scikit-learn uses the same rule)."""
    if alpha <= 0:
        return 1.0
    typw = np.sqrt(1.0 / np.sqrt(alpha))
    dloss = 1.0 + typw if loss == "squared" else 1.0
    return 1.0 / ((typw / dloss) * alpha)


SHUFFLES = (True, False, "block")


def check_shuffle(shuffle):
    """shuffle must be True (a full permutation per epoch), False (the rows in order) or
    "block" (see epoch_order)."""
    if not (isinstance(shuffle, (bool, np.bool_)) or (isinstance(shuffle, str)
                                                       and shuffle == "block")):
        raise ValueError(f"shuffle must be True, False or 'block'; got {shuffle!r}")


def epoch_order(rng, n, shuffle, block=_sgd.SHUFFLE_BLOCK_ROWS):
    """The row order of one epoch (intp).

    True: rng.permutation(n), each row anywhere (the gather waits on memory for every row).
    "block": the rows cut into consecutive blocks of `block` rows (the last one shorter), the
    blocks in a random order and the rows inside each block in a random order (a compiled
    shuffle seeded by one draw from rng, csrc/fastml_shuffle.h). The kernel then
    reads X one contiguous stretch at a time, near memory bandwidth; the price is that rows of
    one block stay together within an epoch, which matters only when X is sorted (by label, say)
    at a scale of `block` rows or more: see bench/README.md for the log-loss it costs there.
    One block (n <= block) is a full shuffle: then "block" is True, the same permutation.
    False: 0, 1, ..., n - 1.
    """
    if not shuffle:
        return np.arange(n, dtype=np.intp)
    if isinstance(shuffle, str) and n > block:  # "block": one compiled pass, seeded from rng
        order = np.empty(n, dtype=np.intp)
        _sgd.block_order(int(rng.integers(2**64, dtype=np.uint64)), order, block)
        return order
    return rng.permutation(n).astype(np.intp)


def run_epochs(engine, X, Y, sample_weight, *, max_iter, tol, n_iter_no_change, shuffle, rng,
               validation=None, verbose=0, name="SGD", first_epoch=0,
               stop_without_updates=False, progressive="loss", watch_progressive=False,
               n_jobs=None, finite_checked=True):
    """Run up to `max_iter` epochs of `engine` over (X, Y).

    Stops early when the epoch's mean loss has not dropped by more than `tol` below the best
    seen for `n_iter_no_change` epochs in a row (tol=None or 0 runs exactly max_iter epochs).
    With `validation=(score_fn)`, the loss that decides is score_fn(engine) on held-out rows
    instead; with `watch_progressive`, the epoch's progressive loss. `stop_without_updates`
    also stops after an epoch in which no row moved w (the perceptron has converged: no
    mistakes).

    The progressive loss of an epoch (Vowpal Wabbit's progressive validation) is the weighted
    mean over its rows of each row's loss at the weights the model would predict with before
    the step that uses it: the running average once averaging has started, else the iterate
    (whose progressive loss equals the mean training loss). progressive="loss" takes the
    engine's loss, "mistakes" the 0/1 loss (the perceptron's: some output with t m <= 0).
    n_jobs (`check_n_jobs`: None = 1) > 1 runs each epoch by parameter mixing over that many
    threads (SGDEngine.mixed_epoch) and draws the next epoch's row order meanwhile
    (_EpochOrders: the same orders); 1 is the serial loop.
    finite_checked=False: X's finiteness is proven by the first epoch instead of a separate
    read (a fit's validation skips it). Every row's margins are computed at the weights of its
    step, and a NaN or inf x_ij makes them NaN or infinite whatever the weights (inf x 0 is
    NaN, NaN stays NaN); the epoch then stops at that row, the engine keeps its state from
    before the epoch, and X goes through the usual check, whose error names the problem. An
    epoch that finishes has seen every row: X is finite.
    Returns (epochs run, list of mean training losses, list of progressive losses).
    """
    n_shards = check_n_jobs(n_jobs)
    check_shuffle(shuffle)
    X_given, X = X, X.astype(engine.dtype, copy=False)   # a later partial_fit chunk may be
    # float32 / 64; the finiteness check reads X_given (a cast may overflow: that is divergence)
    n = X.shape[0]
    weight_total = float(np.sum(sample_weight))
    curve, progressive_curve = [], []

    orders = _EpochOrders(rng, n, shuffle, max_iter, ahead=n_shards > 1)

    def run_epoch(order, epoch):
        return (engine.epoch(X, Y, sample_weight, order, epoch) if n_shards == 1
                else engine.mixed_epoch(X, Y, sample_weight, order, epoch, n_shards))

    def step(epoch):
        nonlocal finite_checked
        order = orders.take()
        try:
            sums = run_epoch(order, epoch)
        except DivergenceError:
            if not finite_checked:
                _check_finite(X_given, "X", allow_nan=False)    # raises, naming NaN or inf
            raise
        finite_checked = True
        mean_loss = sums.loss / weight_total
        curve.append(mean_loss)
        progressive_curve.append((sums.deployed_mistakes if progressive == "mistakes"
                                  else sums.deployed_loss) / weight_total)
        watched = (validation(engine) if validation is not None
                   else progressive_curve[-1] if watch_progressive else mean_loss)
        shown = {"loss": mean_loss, "|w|": float(np.linalg.norm(engine.coef())),
                 "updates": sums.updates}
        if validation is not None:
            shown["validation"] = watched
        elif watch_progressive:
            shown["progressive"] = watched
        return watched, shown, stop_without_updates and sums.updates == 0

    warn = (tol is not None and tol > 0 and validation is None and max_iter > 1)
    with orders:
        n_run = iterate(step, max_iter, desc=name, unit="epoch", verbose=verbose, tol=tol,
                        n_iter_no_change=n_iter_no_change, first=first_epoch,
                        max_iter_warning=f"{name} stopped at max_iter={max_iter} epochs before "
                        f"the loss settled (tol={tol}); raise max_iter to converge"
                        if warn else None)
    _warn_if_diverging(curve, name)
    return n_run, curve, progressive_curve


# An epoch loss this many times the first epoch's is divergence, not noise: the steps are too
# long for X's scale (squared loss grows without bound; the logistic and hinge losses too).
DIVERGING_GROWTH = 100.0


def _warn_if_diverging(curve, name):
    """A ConvergenceWarning when the last epoch's mean loss is DIVERGING_GROWTH times the
    first's or more: the weights stayed finite (no DivergenceError), but the model is worse
    than the one the first epoch started from, and stopping on tol said nothing (an outside
    audit: Ridge(solver="sgd") reached a loss of 1e10 from 386 in silence)."""
    if len(curve) >= 2 and curve[-1] >= DIVERGING_GROWTH * curve[0] and curve[-1] > 0:
        warnings.warn(f"{name} diverged: the mean training loss rose from {curve[0]:.4g} in "
                      f"the first epoch to {curve[-1]:.4g}; lower eta0 (or use "
                      f"learning_rate='adagrad') or standardize X", ConvergenceWarning,
                      stacklevel=3)


class _EpochOrders:
    """The row orders (epoch_order) of up to `max_epochs` epochs, taken one by one.

    With `ahead`, the next epoch's order is drawn on a helper thread while the current epoch
    runs: a mixed epoch (n_jobs > 1) holds no GIL, and epoch_order, serial, would otherwise
    stand between its parallel epochs. The draws are the same, in the same sequence; leaving
    the `with` block puts rng back where the epochs that ran left it (the loop may stop before
    it takes a drawn order), so what follows (partial_fit) sees the rng it would serially."""

    def __init__(self, rng, n, shuffle, max_epochs, ahead):
        self._rng, self._draw = rng, lambda: epoch_order(rng, n, shuffle)
        self._left = max_epochs
        self._pool = ThreadPoolExecutor(1) if ahead and max_epochs > 1 else None
        self._next = self._rng_before_next = None

    def take(self):
        order = self._draw() if self._next is None else self._next.result()
        self._left -= 1
        self._next = None
        if self._pool is not None and self._left > 0:
            self._rng_before_next = self._rng.bit_generator.state
            self._next = self._pool.submit(self._draw)
        return order

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        if self._pool is not None:
            if self._next is not None:      # drawn but never taken: undo its draws
                wait([self._next])
                self._rng.bit_generator.state = self._rng_before_next
            self._pool.shutdown()


# ------------------------------------------------------- fitted part by part (fastml/_plans.py)
# Passes of partial_fit over the parts: one after the other in a stream (every part of pass e
# runs as epoch e of the schedule, with one pass's rows and weight as the totals, as fit's
# epochs do), or by iterative parameter mixing on workers (each round every part runs one
# local epoch from the mixed model, its rows in an order drawn from (seed, epoch, part), and
# the models are averaged weighted by the parts' weights, mix_into). The one definition for
# every estimator of the SGD family; `why_not_mixed` is set for one that cannot be averaged.

def sgd_plan(estimator, *, classifier, needs_totals, why_not_mixed=None):
    """The Passes plan of an SGD estimator. needs_totals: its first pass differs from fit's
    first epoch without the whole data's totals even unweighted (a ridge penalty per row)."""
    return Passes(needs_labels=classifier or needs_totals, classes=classifier,
                  start=_passes_start, totals=_passes_totals,
                  step=_passes_step, local=_passes_local,
                  mix=None if why_not_mixed else _passes_mix, why_not_mixed=why_not_mixed,
                  seed=_passes_seed, schedule=_passes_schedule, finish=_passes_finish)


class _PassesContext:
    """What every part's partial_fit needs: an unfitted copy of the estimator, the classes
    (None for a regressor) and each class's weight (None without class_weight: with it, the
    steps take the class-weighted sample weights and the copy none of its own)."""

    def __init__(self, template, classes, factors):
        self.template, self.classes, self.factors = template, classes, factors


def _passes_start(estimator, labels):
    check = getattr(estimator, "_check_params", None)
    if check is not None:
        check()
    template = type(estimator)(**estimator.get_params(deep=False))
    classes = None if labels is None else labels.classes
    if classes is not None and len(classes) < 2:
        estimator._encode_labels(classes)   # fit's error: at least 2 classes
    # class_weight as fit applies it: with the whole data's class totals ("balanced" too,
    # which a partial_fit alone refuses), multiplied into every part's sample weights
    factors = None if classes is None else \
        class_factors(getattr(estimator, "class_weight", None), labels)
    if factors is not None:
        template.set_params(class_weight=None)
    return _PassesContext(template, classes, factors)


def _passes_totals(context, labels):
    """One pass's (rows, weight) as the steps weigh the rows: class-weighted with it."""
    if labels.totals is None or context.factors is None:
        return labels.totals
    return labels.rows, float(np.dot(context.factors, labels.class_totals))


def _passes_step(X, y, w, context, model, epoch, totals):
    """One part of pass `epoch`, fitted in place (model None: the first part, on an unfitted
    copy sharing the estimator's parameters); returns (model, PassTerms)."""
    if model is None:
        model = copy.copy(context.template)
    if hasattr(model, "_epochs_done"):      # the schedule and the epoch counters read it
        model._epochs_done = epoch
    elif hasattr(model, "_mistakes"):       # VotedPerceptron counts its epochs in n_iter_
        model.n_iter_ = epoch
    if totals is not None:
        model._pass_totals = totals
    elif "_pass_totals" in vars(model):
        del model._pass_totals
    kwargs = {} if context.classes is None else {"classes": context.classes}
    if context.factors is not None:
        w = weigh_rows(context.factors, context.classes, y,
                       None if w is None else check_sample_weight(w, len(y), whole=False))
    if w is not None:
        if "sample_weight" not in inspect.signature(model.partial_fit).parameters:
            raise TypeError(f"{type(model).__name__}.partial_fit takes no sample_weight; give "
                            f"no sample weights")
        w = check_sample_weight(w, len(y), whole=False)
        if not w.any():         # nothing to learn from (fit's check of the sum is the
            return model, PassTerms(0.0, 0.0, 0.0, len(y))    # label pass's)
        kwargs["sample_weight"] = w
    model.partial_fit(X, y, **kwargs)
    weight = float(len(y) if w is None else np.sum(np.asarray(w, dtype=np.float64)))
    return model, PassTerms(_last(model, "loss_curve_") * weight,
                            _last(model, "progressive_loss_") * weight, weight, len(y))


def _last(model, name):
    curve = getattr(model, name, None)
    return float(curve[-1]) if curve else np.nan


def _passes_local(X, y, w, context, model, epoch, totals, part, seed):
    """One local epoch on a part, from a copy of the mixed model (None: from scratch), its
    rows in an order drawn from (seed, epoch, part)."""
    rng = np.random.default_rng([seed, epoch, part])
    if model is None:
        model = copy.copy(context.template)
        model.random_state = rng
    else:
        model = copy.deepcopy(model)
        model._rng = rng
    return _passes_step(X, y, w, context, model, epoch, totals)


def _passes_mix(models, weights, start):
    """The parts' models mixed into the first's (mix_into, the row-weighted average); the
    update counter becomes `start`'s (the model every one of them began this round from;
    None: from scratch) plus the updates each made, so n_mistakes_ counts every update once."""
    first = models[0]
    engines = [m._engine for m in models]
    before = 0 if start is None else start._engine.n_updates
    updates = before + sum(e.n_updates - before for e in engines)
    mix_into(first._engine, engines, weights)
    first._engine.n_updates = int(updates)
    first.coef_, first.intercept_ = first._engine.coef(), first._engine.intercept()
    if getattr(first, "_single_target", False):     # LinearRegression / Ridge with a 1-D y
        first.coef_, first.intercept_ = first.coef_[0], first.intercept_[0]
    if hasattr(first, "t_"):
        first.t_ = first._engine.n_steps
    return first


def _passes_seed(estimator):
    return int(check_random_state(estimator.random_state).integers(2**31 - 1))


def _passes_schedule(estimator, epochs):
    """(passes, stop): `epochs` passes asked for by the caller stop early only by the
    estimator's early_stopping="progressive"; without them (None) the estimator's max_iter
    passes stop as fit's epochs do, on its tol."""
    progressive = getattr(estimator, "early_stopping", False) == "progressive"
    tol = getattr(estimator, "tol", None) if progressive or epochs is None else None
    rule = StopRule(tol, getattr(estimator, "n_iter_no_change", 5))
    passes = estimator.max_iter if epochs is None else epochs
    return passes, lambda loss, progressive_loss: rule(progressive_loss if progressive
                                                       else loss)


def _passes_finish(estimator, model, curve, progressive):
    """The fitted state of `model`, with the epoch counters and the loss curves of one fit
    over all the passes; the pass totals dropped (a later partial_fit counts its rows)."""
    if "_pass_totals" in vars(model):
        del model._pass_totals
    adopt(estimator, model)
    if hasattr(estimator, "_epochs_done"):
        estimator._epochs_done = len(curve)
    if hasattr(estimator, "n_iter_"):
        estimator.n_iter_ = len(curve)
    if hasattr(estimator, "loss_curve_"):
        estimator.loss_curve_ = curve
    if hasattr(estimator, "progressive_loss_"):
        estimator.progressive_loss_ = progressive
