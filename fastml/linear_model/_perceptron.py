"""The perceptron family of lecture 003: the perceptron (plain and averaged), Freund & Schapire's
voted perceptron, and the kernelized perceptron.

The linear learners run the one SGD loop (fastml/_core/_sgd.pyx): 003's "Perceptron & Stochastic
Gradient Descent" shows the perceptron update w <- w + 1[y (w.x) <= 0] y x is SGD on the hinge
at margin 0, max(0, -y w.x), with step size 1. That is the loop with loss="perceptron",
learning_rate="constant", eta0=1, alpha=0 (the intercept is the weight of 003's x_0 = 1).
Several classes are learned one-vs-rest: one perceptron per class, each with its own mistakes.
"""
import numpy as np

from .._base import BaseEstimator, ClassifierMixin, available_if
from .._validation import (check_array, check_n_features, check_param, check_random_state,
                           check_sample_weight, check_X_y)
from ._base import LinearClassifierMixin, labels_as_targets, one_vs_rest_outputs
from ._sgd import SGDEngine, run_epochs


class _OnlineLinearClassifier(LinearClassifierMixin, ClassifierMixin, BaseEstimator):
    """fit / partial_fit of a one-vs-rest linear classifier on the shared SGD loop.

    Subclasses give `_engine_options()` (loss, learning_rate, eta0, alpha) and may check their
    own parameters in `_check_params`; they need max_iter, tol, n_iter_no_change, shuffle,
    average, fit_intercept, random_state and verbose attributes.
    """

    _accepts_sparse = True
    _stop_without_updates = False   # the perceptron: a mistake-free epoch means converged

    def fit(self, X, y, sample_weight=None):
        """Learn from X (dense or CSR) and labels y of any type, starting from w = 0."""
        self._check_params()
        X, y = check_X_y(X, y, accept_sparse=True)
        check_n_features(self, X, reset=True)
        codes = self._encode_labels(y)
        sw = check_sample_weight(sample_weight, X.shape[0])
        self._engine = None
        self._run(X, codes, sw, self.max_iter, resume=False)
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One epoch over (X, y) continuing from the current weights (online learning).
        `classes` (every label that will ever appear) is required on the first call."""
        self._check_params()
        first = getattr(self, "_engine", None) is None
        X, y = check_X_y(X, y, accept_sparse=True)
        check_n_features(self, X, reset=first)
        if first:
            if classes is None:
                raise ValueError("classes must be given on the first call to partial_fit")
            self._encode_labels(classes)
        codes = self._encode_known_labels(y)
        sw = check_sample_weight(sample_weight, X.shape[0])
        self._run(X, codes, sw, 1, resume=not first)
        return self

    def _check_params(self):
        check_param("max_iter", self.max_iter, low=1, integer=True)
        check_param("tol", self.tol, low=0.0, allow_none=True)
        check_param("n_iter_no_change", self.n_iter_no_change, low=1, integer=True)
        if not isinstance(self.average, (bool, np.bool_)):
            check_param("average", self.average, low=1, integer=True)

    def _new_engine(self, X):
        n_outputs, label_offset = one_vs_rest_outputs(len(self.classes_))
        return SGDEngine(n_outputs, X.shape[1], X.dtype, fit_intercept=self.fit_intercept,
                         average=self.average, label_offset=label_offset,
                         **self._engine_options())

    def _run(self, X, codes, sw, epochs, resume):
        if not resume:
            self._rng = check_random_state(self.random_state)
            self._engine = self._new_engine(X)
            self._epochs_done = 0
            self.loss_curve_ = []
        engine = self._engine
        if engine.dtype != X.dtype:     # partial_fit with another float type: keep the first
            X = X.astype(engine.dtype)
        n_iter, curve = run_epochs(
            engine, X, labels_as_targets(codes), sw, max_iter=epochs,
            tol=self.tol if epochs > 1 else None, n_iter_no_change=self.n_iter_no_change,
            shuffle=self.shuffle, rng=self._rng, verbose=self.verbose,
            name=type(self).__name__, first_epoch=self._epochs_done,
            stop_without_updates=self._stop_without_updates and epochs > 1)
        self._epochs_done += n_iter
        self.coef_ = engine.coef()
        self.intercept_ = engine.intercept()
        self.n_iter_ = self._epochs_done
        self.t_ = engine.n_steps
        self.loss_curve_ = self.loss_curve_ + curve


class Perceptron(_OnlineLinearClassifier):
    """Rosenblatt's perceptron (003): on a mistake, y (w.x) <= 0, w <- w + y x; step 1.

    Parameters
    ----------
    max_iter : int, default 1000
        Epochs (passes over the data). Training stops earlier after an epoch without a
        mistake (converged: the data are separated) or when the mean perceptron loss has not
        improved by `tol` for `n_iter_no_change` epochs.
    tol : float or None, default 1e-3
        None or 0 disables the loss criterion.
    n_iter_no_change : int, default 5
    shuffle : bool, default True
        Visit the rows in a new random order each epoch (False: the given order).
    average : bool or int, default False
        Report the averaged weight vector (003: "report averaged weights"): the mean of w after
        every step (every example), kept lazily in O(nnz(x)) per mistake. An int starts the
        average after that many steps.
    fit_intercept : bool, default True
        Learn w_0 for 003's constant feature x_0 = 1.
    random_state : int, Generator or None
        Seeds the shuffling.
    verbose : int, default 0
        Print the loss, |w| and the mistakes of each epoch.

    Attributes: coef_ (n_vectors, n_features), intercept_ (n_vectors,), classes_, n_iter_
    (epochs), t_ (steps), n_mistakes_ (updates: rows that moved some w), loss_curve_ (mean
    perceptron loss per epoch), n_features_in_. Two classes use one vector, for classes_[1].
    """

    _stop_without_updates = True

    def __init__(self, max_iter=1000, tol=1e-3, n_iter_no_change=5, shuffle=True, average=False,
                 fit_intercept=True, random_state=None, verbose=0):
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.shuffle = shuffle
        self.average = average
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.verbose = verbose

    def _engine_options(self):
        return dict(loss="perceptron", learning_rate="constant", eta0=1.0, alpha=0.0)

    def _run(self, X, codes, sw, epochs, resume):
        super()._run(X, codes, sw, epochs, resume)
        self.n_mistakes_ = self._engine.n_updates
