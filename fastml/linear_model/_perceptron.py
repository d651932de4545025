"""The linear perceptron of lecture 003, plain and averaged (Freund & Schapire's voted
perceptron is in _voted.py and the kernelized perceptron in _kernel_perceptron.py, each beside
its compiled loop).

The linear learners run the one SGD loop (fastml/linear_model/_sgd_fast.pyx): 003's "Perceptron & Stochastic
Gradient Descent" shows the perceptron update w <- w + 1[y (w.x) <= 0] y x is SGD on the hinge
at margin 0, max(0, -y w.x), with step size 1. That is the loop with loss="perceptron",
learning_rate="constant", eta0=1, alpha=0 (the intercept is the weight of 003's x_0 = 1).
Several classes are learned one-vs-rest: one perceptron per class, each with its own mistakes.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Union

import numpy as np

from .._base import BaseEstimator, ClassifierMixin
from .._validation import (check_class_weight, check_param, check_random_state,
                           check_sample_weight, check_X_y, class_sample_weight)
from ._base import (LinearClassifierMixin, OutputLayout, all_or_nothing, check_n_jobs_param,
                    fresh_fit, start_partial_fit)
from ._sgd import SGDEngine, pass_totals, run_epochs, sgd_plan

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from .._typing import (ArrayLike, ClassWeightLike, EstimatorT, MatrixLike,
                           RandomStateLike, VectorLike)


class _OnlineLinearClassifier(LinearClassifierMixin, ClassifierMixin, BaseEstimator):
    """fit / partial_fit of a one-vs-rest linear classifier on the shared SGD loop.

    Subclasses give `_engine_options()` (loss, learning_rate, eta0, alpha) and may check their
    own parameters in `_check_params`; they need max_iter, tol, n_iter_no_change, shuffle,
    average, average_halflife, early_stopping, fit_intercept, random_state, verbose and n_jobs
    (> 1: epochs by parameter mixing over threads, _sgd.py's SGDEngine.mixed_epoch)
    attributes, and class_weight (check_class_weight; it multiplies the sample weights).
    """

    _accepts_sparse = True
    _stop_without_updates = False   # the perceptron: a mistake-free epoch means converged
    _progressive = "loss"           # progressive_loss_: the engine's loss, or "mistakes" (0/1)
    # Step with the sample weights relative to their mean (SGDEngine.relative_weights), so
    # SGD minimizes sum_i s_i l_i / sum_i s_i + alpha/2 ||w||^2, scale-free in the weights as
    # every batch objective here is. The perceptron (alpha = 0, eta = 1) takes them as given:
    # its w from 0 scales with them and its predictions do not.
    _relative_weights = True

    @fresh_fit
    def fit(self: EstimatorT, X: MatrixLike, y: VectorLike,
            sample_weight: Optional[ArrayLike] = None) -> EstimatorT:
        """Learn from X and labels y, starting from w = 0.

        Parameters
        ----------
        X : array-like or CSR matrix of shape (n_samples, n_features)
            Dense or CSR rows.
        y : array-like of shape (n_samples,)
            Labels of any hashable type (at least two classes).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights of the rows (default: 1 each).

        Returns
        -------
        self

        Examples
        --------
        >>> import numpy as np
        >>> from fastml.linear_model import Perceptron
        >>> X = np.array([[-2.0, 1.0], [-1.0, -1.0], [1.0, 1.0], [2.0, -1.0]])
        >>> model = Perceptron(random_state=0).fit(X, [0, 0, 1, 1])
        >>> model.predict([[-3.0, 0.0], [3.0, 0.0]]).tolist()
        [0, 1]
        """
        self._check_params()
        # The first epoch doubles as X's finiteness check (run_epochs), saving a read of X.
        X, y = check_X_y(X, y, accept_sparse=True, estimator=self, reset=True,
                         check_finite=False)
        codes = self._encode_labels(y)
        sw = class_sample_weight(self.class_weight, self.classes_, codes,
                                 check_sample_weight(sample_weight, X.shape[0]))
        self._run(X, codes, sw, self.max_iter, resume=False, finite_checked=False)
        return self

    @all_or_nothing(fitting=False)
    def partial_fit(self: EstimatorT, X: MatrixLike, y: VectorLike,
                    classes: Optional[VectorLike] = None,
                    sample_weight: Optional[ArrayLike] = None) -> EstimatorT:
        """One epoch over (X, y) continuing from the current weights (online learning).

        Parameters
        ----------
        X : array-like or CSR matrix of shape (n_samples, n_features)
            Dense or CSR rows.
        y : array-like of shape (n_samples,)
            Labels of any hashable type (at least two classes).
        classes : array-like, optional
            Every label that will ever appear: required on the first call; a later call
            may repeat it (the same set) or omit it.
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights of the rows (default: 1 each).

        Returns
        -------
        self

        Examples
        --------
        >>> import numpy as np
        >>> from fastml.linear_model import Perceptron
        >>> X = np.array([[-2.0, 1.0], [-1.0, -1.0], [1.0, 1.0], [2.0, -1.0]])
        >>> model = Perceptron(random_state=0)
        >>> model = model.partial_fit(X[:2], [0, 0], classes=[0, 1])
        >>> model.partial_fit(X[2:], [1, 1]).classes_.tolist()
        [0, 1]
        """
        self._check_params()
        X, codes, sw, first = start_partial_fit(self, X, y, classes, sample_weight,
                                                check_finite=False)
        self._run(X, codes, sw, 1, resume=not first, finite_checked=False)
        return self

    def _check_params(self):
        check_param("max_iter", self.max_iter, low=1, integer=True)
        check_param("tol", self.tol, low=0.0, allow_none=True)
        check_param("n_iter_no_change", self.n_iter_no_change, low=1, integer=True)
        if not isinstance(self.average, (bool, np.bool_)):
            check_param("average", self.average, low=1, integer=True)
        check_param("average_halflife", self.average_halflife, low=0.0, low_inclusive=False,
                    allow_none=True)
        check_param("early_stopping", self.early_stopping, choices=(False, "progressive"))
        check_class_weight(self.class_weight)
        check_n_jobs_param(self.n_jobs)

    def _scaled_fit(self):
        """Passes of partial_fit over the parts (fastml/_plans.py; the SGD family's plan)."""
        self._check_params()
        return sgd_plan(self, classifier=True, needs_totals=False)

    def _new_engine(self, X):
        layout = OutputLayout(len(self.classes_))
        return SGDEngine(layout.n_outputs, X.shape[1], X.dtype, fit_intercept=self.fit_intercept,
                         average=self.average, average_halflife=self.average_halflife,
                         label_offset=layout.label_offset, **self._engine_options())

    def _run(self, X, codes, sw, epochs, resume, finite_checked=True):
        if not resume:
            self._rng = check_random_state(self.random_state)
            self._engine = self._new_engine(X)
            self._epochs_done = 0
            self.loss_curve_ = []
            self.progressive_loss_ = []
        engine = self._engine
        if self._relative_weights:
            sw = engine.relative_weights(sw, pass_totals(self))
        n_iter, curve, progressive = run_epochs(
            engine, X, OutputLayout(len(self.classes_)).targets(codes), sw, max_iter=epochs,
            tol=self.tol if epochs > 1 else None, n_iter_no_change=self.n_iter_no_change,
            shuffle=self.shuffle, rng=self._rng, verbose=self.verbose,
            name=type(self).__name__, first_epoch=self._epochs_done,
            stop_without_updates=self._stop_without_updates and epochs > 1,
            progressive=self._progressive,
            watch_progressive=self.early_stopping == "progressive", n_jobs=self.n_jobs,
            finite_checked=finite_checked)
        self._epochs_done += n_iter
        self.coef_ = engine.coef()
        self.intercept_ = engine.intercept()
        self.n_iter_ = self._epochs_done
        self.t_ = engine.n_steps
        self.loss_curve_ = self.loss_curve_ + curve
        self.progressive_loss_ = self.progressive_loss_ + progressive


class Perceptron(_OnlineLinearClassifier):
    """Rosenblatt's perceptron (003): on a mistake, y (w.x) <= 0, w <- w + y x; step 1.

    Parameters
    ----------
    max_iter : int, default 1000
        Epochs (passes over the data). Training stops earlier after an epoch without a
        mistake (converged: the data are separated) or when the mean perceptron loss (with
        ``early_stopping="progressive"``: the mistake rate) has not improved by `tol` for
        `n_iter_no_change` epochs.
    tol : float or None, default 1e-3
        None or 0 disables the loss criterion.
    n_iter_no_change : int, default 5
    early_stopping : False or "progressive", default False
        "progressive": the `tol` criterion watches `progressive_loss_` (the epoch's mistake
        rate) instead of the mean perceptron loss, which grows with |w|; no rows are held out.
    shuffle : bool or "block", default "block"
        Visit the rows in a new random order each epoch: True, a full permutation; "block",
        blocks of 256 consecutive rows in random order with the rows inside each block
        shuffled (reads X near memory bandwidth instead of waiting on each row; on data
        sorted by label it costs a little log-loss, see the user guide); False, the given
        order.
    average : bool or int, default False
        Report the averaged weight vector (003: "report averaged weights"): the mean of w after
        every step (every example), kept lazily in O(nnz(x)) per mistake. An int starts the
        average after that many steps.
    average_halflife : float or None, default None
        Report the recency-weighted average instead (003: "averaging biased towards recent
        w(t)", for streams that drift): the iterate t steps ago weighs 2**(-t /
        average_halflife), normalised. Implies averaging (from the first step, or after
        `average` steps when that is an int); it carries on across `partial_fit` calls.
    fit_intercept : bool, default True
        Learn w_0 for 003's constant feature x_0 = 1.
    class_weight : None (default), "balanced" or dict {label: weight}
        Multiplies each row's sample weight by its class's weight (scikit-learn's rule:
        "balanced" is n / (n_classes * n_c) with n_c the summed sample weight of class c; a
        dict weighs the classes it names, the others 1): a mistake on a row of weight s
        updates w <- w + s y x. `partial_fit` takes a dict and refuses "balanced" (one
        chunk does not hold the class counts of all the data), as scikit-learn's does.
    random_state : int, Generator or None
        Seeds the shuffling.
    verbose : int, default 0
        Print the loss, |w| and the mistakes of each epoch.
    n_jobs : int or None, default None
        Threads (None = 1, -1 = all cores). n_jobs > 1 runs each epoch (and each
        `partial_fit` call) by parameter mixing: the epoch's shuffled rows are cut into n_jobs
        contiguous shards, each runs the perceptron in its own thread from the same weights
        (and the same running average), then they are averaged (weighted by the shards'
        sample weights). That model depends on n_jobs (give a number, not -1, for the same
        model on any machine) and is deterministic for a fixed random_state and n_jobs. None
        or 1 is the serial loop.

    Attributes
    ----------
    coef_ : ndarray of shape (n_vectors, n_features)
        One vector for two classes (for classes_[1]), one per class otherwise.
    intercept_ : ndarray of shape (n_vectors,)
    classes_ : ndarray of shape (n_classes,)
    n_iter_ : int
        Epochs run.
    t_ : int
        Steps (rows visited).
    n_mistakes_ : int
        Rows that moved some w.
    loss_curve_ : list of float
        Mean perceptron loss per epoch.
    progressive_loss_ : list of float
        Per epoch (and per `partial_fit` call): the weighted fraction of rows on which the
        perceptron made a mistake, y (w.x) <= 0 for some class, judged before that row's
        update by the w `predict` would use: the running average once averaging has started,
        else the iterate (progressive validation; with unit weights and no averaging,
        mistakes / rows of the epoch).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from fastml.linear_model import Perceptron
    >>> X = np.array([[-2.0, 1.0], [-1.0, -1.0], [1.0, 1.0], [2.0, -1.0]])
    >>> model = Perceptron(random_state=0).fit(X, ["no", "no", "yes", "yes"])
    >>> model.predict([[-3.0, 0.0], [3.0, 0.0]]).tolist()
    ['no', 'yes']
    """

    _stop_without_updates = True
    _progressive = "mistakes"
    _relative_weights = False       # w <- w + s_i y_i x_i, the weights as given

    _foreign_params = {
        "penalty": ("the perceptron is unregularized (003's update); LinearSVM(alpha=...) is "
                    "the hinge loss with an L2 penalty"),
        "alpha": ("the perceptron is unregularized (003's update); LinearSVM(alpha=...) is the "
                  "hinge loss with an L2 penalty"),
        "eta0": ("the step is 1, as in 003: scaling it scales w and changes no prediction "
                 "(scikit-learn's default eta0=1 is the same perceptron)"),
    }

    def __init__(self, max_iter: int = 1000, tol: Optional[float] = 1e-3,
                 n_iter_no_change: int = 5, early_stopping: Union[bool, str] = False,
                 shuffle: Union[bool, str] = "block", average: Union[bool, int] = False,
                 average_halflife: Optional[float] = None, fit_intercept: bool = True,
                 class_weight: ClassWeightLike = None, random_state: RandomStateLike = None,
                 verbose: int = 0, n_jobs: Optional[int] = None) -> None:
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.early_stopping = early_stopping
        self.shuffle = shuffle
        self.average = average
        self.average_halflife = average_halflife
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs

    def _engine_options(self):
        return dict(loss="perceptron", learning_rate="constant", eta0=1.0, alpha=0.0)

    def _run(self, X, codes, sw, epochs, resume, finite_checked=True):
        super()._run(X, codes, sw, epochs, resume, finite_checked)
        self.n_mistakes_ = self._engine.n_updates
