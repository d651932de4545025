"""The linear SVM of lectures 001 and 003: minimize the average hinge loss plus an L2 penalty,

    (1/N) sum_i max(0, 1 - y_i (w.x_i + b)) + (alpha / 2) ||w||^2,

y in {-1, +1} (one-vs-rest for more classes, summing the outputs' losses; b not penalized;
weighted: sum_i s_i hinge_i / sum_i s_i). In 001's "lambda R(w)" form, lambda = alpha / 2.

In scikit-learn terms this is SGDClassifier(loss="hinge", penalty="l2", alpha=alpha)'s
objective (the same alpha; with shuffle=False and learning_rate="optimal", solver="sgd"
takes its very steps: tests/test_svm.py). LinearSVC is another model unless told otherwise:
it minimizes C sum_i loss_i + (1/2) ||w||^2 (with C = 1 / (alpha N), this objective times
C N) but its default loss is the squared hinge (loss="squared_hinge"), and it penalizes the
intercept, as the weight of a constant feature worth intercept_scaling (default 1). The
equivalent is LinearSVC(loss="hinge", C=1 / (alpha N), intercept_scaling=100), a large
intercept_scaling making the intercept's penalty negligible. Measured on breast cancer
(standardized, alpha = 0.01; objective above): the optimum is 0.06608; LinearSVC(loss="hinge",
intercept_scaling=100) reaches 0.06608, with intercept_scaling=1 0.06611 (b 0.17 instead of
0.21), and the default LinearSVC(C=1 / (alpha N)) 0.0808, 22% above it.

Two solvers, both from 003: "sgd" is the per-example subgradient step (the shared SGD loop with
loss="hinge"), "subgradient" the batch "Subgradient Descent for Hinge Minimization", one fused
pass over X per step (fastml/linear_model/_batch_fast.pyx, the kernel of logistic regression's "gd").
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Union

import numpy as np

from .._base import available_if
from ..exceptions import NotScalable
from . import _batch_fast as _batch
from .._validation import (check_n_jobs, check_param, check_sample_weight, check_X_y,
                           class_sample_weight)
from ._base import OutputLayout, fresh_fit
from ._iterate import iterate
from ._perceptron import _OnlineLinearClassifier
from ._sgd import LOSSES, SCHEDULES, step_sizes

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from .._typing import (ArrayLike, ClassWeightLike, EstimatorT, MatrixLike,
                           RandomStateLike, VectorLike)

SOLVERS = ("sgd", "subgradient")
BATCH_SCHEDULES = ("optimal", "inverse", "constant")


class LinearSVM(_OnlineLinearClassifier):
    """Linear support vector machine: hinge loss + (alpha/2) ||w||^2 by subgradient methods.

    Parameters
    ----------
    alpha : float, default 1e-4
        L2 strength (> 0).
    solver : "sgd" (default) or "subgradient"
        "sgd": one row per step through the shared SGD loop (supports partial_fit, averaging,
        dense and CSR rows); its sample weights count relative to their mean (over the rows
        given so far, for partial_fit), so it minimizes the objective above whatever their
        scale. "subgradient": full-batch subgradient descent, each step one fused pass over X
        (threads over row blocks with n_jobs); since a subgradient step need not decrease the
        objective, it reports the best of the start (w = 0) and the point after each step,
        every one of them evaluated: max_iter=T takes T steps and reads X T + 1 times.
    learning_rate : str, default "optimal"
        "optimal" 1/(alpha (t0 + t)) (Bottou's; the strongly convex rate), "inverse" eta0/t,
        "constant" eta0; "sgd" also takes "decay" and "adagrad". t counts steps (rows for "sgd",
        passes for "subgradient").
    eta0 : float, default 0.01
    max_iter : int, default 1000
        Epochs of "sgd", steps of "subgradient".
    tol : float or None, default 1e-4
        Stop when the objective ("subgradient") or the epoch's mean hinge loss ("sgd") has not
        improved by tol for n_iter_no_change iterations. None or 0 runs max_iter.
    n_iter_no_change : int, default 5
    early_stopping : False or "progressive", default False
        "sgd": "progressive" stops on `progressive_loss_` (the epoch's mean hinge loss, each
        row's taken before its update; without averaging, the numbers the default rule
        watches) by `tol` and `n_iter_no_change`, with no rows held out; it is what
        `fastml.fit_stream` stops its passes on.
    average : bool or int, default False
        "sgd": report the average of the iterates (an int starts it after that many steps).
    average_halflife : float or None, default None
        "sgd": report the recency-weighted average of the iterates, the one t steps ago
        weighing 2**(-t / average_halflife) (normalised), for streams that drift. Implies
        averaging (from the first step, or after `average` steps when that is an int); it
        carries on across `partial_fit` calls.
    shuffle : bool or "block", default "block"
        Visit the rows in a new random order each epoch: True, a full permutation; "block",
        blocks of 256 consecutive rows in random order with the rows inside each block
        shuffled (reads X near memory bandwidth instead of waiting on each row; on data
        sorted by label it costs a little log-loss, see the user guide); False, the given
        order.
    fit_intercept : bool, default True
    class_weight : None (default), "balanced" or dict {label: weight}
        Multiplies each row's sample weight by its class's weight, for both solvers
        (scikit-learn's rule: "balanced" is n / (n_classes * n_c) with n_c the summed sample
        weight of class c; a dict weighs the classes it names, the others 1): the objective
        is the mean hinge loss weighted by these products. `partial_fit` takes a dict and
        refuses "balanced" (one chunk does not hold the class counts of all the data), as
        scikit-learn's does.
    random_state : int, Generator or None
    verbose : int, default 0
    n_jobs : int or None
        Threads (None = 1, -1 = all cores): "subgradient" splits the rows of each pass (the
        same model for any n_jobs); "sgd" with n_jobs > 1 runs each epoch (and each
        `partial_fit` call) by parameter mixing: the shuffled rows cut into n_jobs shards,
        SGD on each in its own thread from the same weights, then the weights averaged.
        That model depends on n_jobs (give a number, not -1, for the same model on any
        machine) and is deterministic for a fixed random_state and n_jobs.

    Attributes
    ----------
    coef_ : ndarray of shape (n_vectors, n_features)
        One vector for two classes (for classes_[1]), one per class otherwise.
    intercept_ : ndarray of shape (n_vectors,)
    classes_ : ndarray of shape (n_classes,)
    n_iter_ : int
        Epochs ("sgd") or steps ("subgradient") run.
    loss_curve_ : list of float
        The objective per step ("subgradient"), the mean hinge loss per epoch ("sgd").
    progressive_loss_ : list of float
        "sgd": per epoch (and per `partial_fit` call) the weighted mean hinge loss of each row
        (summed over the classes' one-vs-rest outputs) under the model `predict` would use
        before its update: the running average once averaging has started, else the
        iterate.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from fastml.linear_model import LinearSVM
    >>> X = np.array([[-2.0, 1.0], [-1.0, -1.0], [1.0, 1.0], [2.0, -1.0]])
    >>> model = LinearSVM(alpha=0.01, random_state=0).fit(X, [-1, -1, 1, 1])
    >>> model.predict([[-3.0, 0.0], [3.0, 0.0]]).tolist()
    [-1, 1]
    """

    _foreign_params = {
        "C": ("fastml's regularization is alpha, the L2 penalty (alpha/2)||w||^2 on the "
              "mean hinge loss: scikit-learn's C is alpha = 1 / (C * n_samples), e.g. C=1.0 on "
              "1,000 rows is alpha=1e-3"),
        "penalty": ("the penalty is always L2, of strength alpha (alpha=0: none); L1 and "
                    "elastic net are not offered"),
        "loss": "the loss is the hinge loss; LogisticRegression(solver='sgd') is the log loss",
    }

    def __init__(self, alpha: float = 1e-4, solver: str = "sgd", learning_rate: str = "optimal",
                 eta0: float = 0.01, max_iter: int = 1000, tol: Optional[float] = 1e-4,
                 n_iter_no_change: int = 5, early_stopping: Union[bool, str] = False,
                 average: Union[bool, int] = False, average_halflife: Optional[float] = None,
                 shuffle: Union[bool, str] = "block", fit_intercept: bool = True,
                 class_weight: ClassWeightLike = None, random_state: RandomStateLike = None,
                 verbose: int = 0, n_jobs: Optional[int] = None) -> None:
        self.alpha = alpha
        self.solver = solver
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.early_stopping = early_stopping
        self.average = average
        self.average_halflife = average_halflife
        self.shuffle = shuffle
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs

    def _check_params(self):
        super()._check_params()
        check_param("solver", self.solver, choices=SOLVERS)
        check_param("alpha", self.alpha, low=0.0, low_inclusive=False)
        check_param("eta0", self.eta0, low=0.0, low_inclusive=False)
        check_param("learning_rate", self.learning_rate,
                    choices=SCHEDULES if self.solver == "sgd" else BATCH_SCHEDULES)
        if self.solver != "sgd":
            for name, used in (("early_stopping", self.early_stopping == "progressive"),
                               ("average_halflife", self.average_halflife is not None)):
                if used:
                    raise ValueError(f"{name}={getattr(self, name)!r} needs solver='sgd' (the "
                                     f"'subgradient' solver takes full-batch steps)")

    def _engine_options(self):
        return dict(loss="hinge", learning_rate=self.learning_rate, eta0=self.eta0,
                    alpha=self.alpha)

    @fresh_fit
    def fit(self: EstimatorT, X: MatrixLike, y: VectorLike,
            sample_weight: Optional[ArrayLike] = None) -> EstimatorT:
        """Minimize the regularized mean hinge loss on X and labels y.

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
        >>> from fastml.linear_model import LinearSVM
        >>> X = np.array([[-2.0, 1.0], [-1.0, -1.0], [1.0, 1.0], [2.0, -1.0]])
        >>> model = LinearSVM(random_state=0).fit(X, [0, 0, 1, 1])
        >>> model.predict([[-3.0, 0.0], [3.0, 0.0]]).tolist()
        [0, 1]
        """
        if self.solver == "sgd":
            return super().fit(X, y, sample_weight)
        self._check_params()
        X, y = check_X_y(X, y, accept_sparse=True, estimator=self, reset=True)
        codes = self._encode_labels(y)
        sw = class_sample_weight(self.class_weight, self.classes_, codes,
                                 check_sample_weight(sample_weight, X.shape[0]))
        self._fit_subgradient(X, codes, sw)
        return self

    def _scaled_fit(self):
        """solver="sgd": passes of partial_fit (the SGD family's plan)."""
        self._check_params()
        if self.solver != "sgd":
            raise NotScalable(f"solver={self.solver!r} has no streaming form (each of its "
                              f"steps reads every row); use solver='sgd'")
        return super()._scaled_fit()

    @available_if(lambda self: self.solver == "sgd", "needs solver='sgd'")
    def partial_fit(self: EstimatorT, X: MatrixLike, y: VectorLike,
                    classes: Optional[VectorLike] = None,
                    sample_weight: Optional[ArrayLike] = None) -> EstimatorT:
        """One epoch of SGD over (X, y) from the current weights (solver='sgd').

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
        >>> from fastml.linear_model import LinearSVM
        >>> X = np.array([[-2.0, 1.0], [-1.0, -1.0], [1.0, 1.0], [2.0, -1.0]])
        >>> model = LinearSVM(random_state=0)
        >>> model = model.partial_fit(X[:2], [0, 0], classes=[0, 1])
        >>> model.partial_fit(X[2:], [1, 1]).classes_.tolist()
        [0, 1]
        """
        return super().partial_fit(X, y, classes=classes, sample_weight=sample_weight)

    def objective(self, X: MatrixLike, y: VectorLike,
                  sample_weight: Optional[ArrayLike] = None) -> float:
        """The training objective at the fitted weights: mean hinge + (alpha/2) ||coef_||^2,
        the hinge weighted by sample_weight times class_weight as in fit.

        Parameters
        ----------
        X : array-like or CSR matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Labels among classes_.
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        objective : float

        Examples
        --------
        >>> import numpy as np
        >>> from fastml.linear_model import LinearSVM
        >>> X = np.array([[-2.0, 1.0], [-1.0, -1.0], [1.0, 1.0], [2.0, -1.0]])
        >>> model = LinearSVM(solver="subgradient", max_iter=50).fit(X, [0, 0, 1, 1])
        >>> bool(model.objective(X, [0, 0, 1, 1]) <= 1.0)     # below the objective at w = 0
        True
        """
        self._check_is_fitted("coef_")
        X, y = check_X_y(X, y, accept_sparse=True, dtype=self.coef_.dtype, estimator=self,
                         reset=False)
        codes = self._encode_known_labels(y)
        sw = class_sample_weight(self.class_weight, self.classes_, codes,
                                 check_sample_weight(sample_weight, X.shape[0]))
        hinge = self._hinge_sum(X, codes, sw, self.coef_, self.intercept_)[0]
        return hinge / sw.sum() + 0.5 * self.alpha * float(np.sum(self.coef_.astype(float) ** 2))

    def _hinge_sum(self, X, codes, sw, W, b):
        label_offset = OutputLayout(len(self.classes_)).label_offset
        gW, gb = np.empty(W.shape), np.empty(W.shape[0])
        total = _batch.loss_grad(X, codes.astype(np.float64), sw, W, b, gW, gb,
                                 LOSSES["hinge"], label_offset, False,
                                 check_n_jobs(self.n_jobs))
        return total, gW, gb

    def _fit_subgradient(self, X, codes, sw):
        """003's batch subgradient descent: w <- w - eta_t ((1/N) sum_i dl_i x_i + alpha w).

        A subgradient step need not lower the objective, so the best point seen is reported:
        the start (w = 0) and the point after every step, each evaluated (objective and
        subgradient) in one fused pass over X. The start is evaluated before the first step
        and each step evaluates the point it reaches, whose subgradient the next step takes:
        max_iter=T takes T steps, n_iter_ = T (fewer when tol stops it), X is read T + 1
        times, and loss_curve_ holds the objective after each step."""
        n_outputs = OutputLayout(len(self.classes_)).n_outputs
        total_weight = float(sw.sum())
        step_size = step_sizes("hinge", self.learning_rate, eta0=self.eta0, alpha=self.alpha)
        curve = []

        def evaluate(W, b):
            hinge, gW, gb = self._hinge_sum(X, codes, sw, W, b)
            penalty = 0.5 * self.alpha * float(np.sum(W.astype(float) ** 2))
            objective = hinge / total_weight + penalty
            return {"W": W, "b": b, "objective": objective, "gW": gW, "gb": gb}

        at = evaluate(np.zeros((n_outputs, X.shape[1]), dtype=X.dtype),
                      np.zeros(n_outputs, dtype=X.dtype))
        best = at

        def step(i):
            nonlocal at, best
            eta = step_size(i + 1)
            W = (at["W"] - eta * (at["gW"] / total_weight + self.alpha * at["W"])).astype(X.dtype)
            b = (at["b"] - eta * at["gb"] / total_weight).astype(X.dtype) if self.fit_intercept \
                else at["b"]
            at = evaluate(W, b)
            curve.append(at["objective"])
            if at["objective"] < best["objective"]:
                best = at
            return at["objective"], {"objective": at["objective"]}, False

        iterate(step, self.max_iter, desc="LinearSVM(subgradient)", unit="step",
                verbose=self.verbose, tol=self.tol, n_iter_no_change=self.n_iter_no_change,
                max_iter_warning=(f"LinearSVM(solver='subgradient') reached max_iter="
                                  f"{self.max_iter} before the objective settled; raise "
                                  f"max_iter") if self.tol else None)
        self.coef_, self.intercept_ = best["W"], best["b"]
        self.n_iter_ = len(curve)
        self.loss_curve_ = curve
