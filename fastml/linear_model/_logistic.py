"""Logistic regression (lectures 000, 001, 002, 004): batch gradient ascent with the cached
P-hat, L-BFGS on the same fused loss+gradient kernel, SGD and mini-batch SGD through the shared
loop, L2 (MAP with a Gaussian prior), binary and multiclass (softmax over K classes, or 002's
R-1 weight vectors with the last class fixed at zero).

The objective (minimized) is the mean weighted log-loss plus (alpha / 2) ||w||^2 (intercepts not
penalized). This is scikit-learn's SGDClassifier(loss="log_loss", alpha=alpha) objective and
LogisticRegression's with C = 1 / (alpha * n_samples). In the lectures' summed form (002:
w <- w + eta { -lambda w + sum_j x^j [y^j - P-hat^j] }) lambda = alpha * n_samples; in 000's
(slide 9) and 003's averaged form (w <- w + eta { -lambda w + 1/N sum_j ... }) lambda = alpha.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Union

import numpy as np

from .._base import BaseEstimator, ClassifierMixin, available_if, label_codes
from ..exceptions import ConvergenceWarning, DivergenceError
from .._plans import Objective, class_factors
from .._core._posterior import binary_log_posterior, log_posterior
from .._progress import progress
from . import _batch_fast as _batch
from .._validation import (_check_finite, check_class_weight, check_n_jobs, check_param,
                           check_random_state, check_sample_weight, check_X_y,
                           class_sample_weight)
from ._base import (LinearClassifierMixin, OutputLayout, all_or_nothing, check_n_jobs_param,
                    fresh_fit, labels_from_scores, start_partial_fit)
from ._iterate import iterate
from ._sgd import LOSSES, SCHEDULES, SGDEngine, pass_totals, run_epochs, sgd_plan

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from .._typing import (ArrayLike, ClassWeightLike, EstimatorT, MatrixLike, NDArray,
                           RandomStateLike, VectorLike)

SOLVERS = ("lbfgs", "gd", "newton", "sgd", "minibatch")


class LogisticRegression(LinearClassifierMixin, ClassifierMixin, BaseEstimator):
    """Logistic regression by maximum conditional likelihood (L2-regularized = MAP).

    Parameters
    ----------
    solver : "lbfgs" (default), "gd", "newton", "sgd" or "minibatch"
        "gd" is the lectures' batch gradient ascent: each iteration is one fused pass over X
        (margins, P-hat, residual and gradient while a block of rows is in cache), threads over
        row blocks; the step is `eta0` when given, else adaptive: it starts at 1/L with L a
        bound of the gradient's Lipschitz constant from one pass over X (the Frobenius
        bound), follows the curvature seen along the first steps (at most doubling) and
        halves (never below 1/L) when the objective rises, so it always converges and each
        iteration is one pass (a rejected trial step counts as an iteration). "lbfgs" feeds the
        same kernel to scipy's L-BFGS-B. "newton" is 001's Newton-Raphson on the same
        objective (fastml/linear_model/_newton.py): each iteration solves H d = -g with the
        Hessian of the regularized mean log-loss (IRLS for two classes; Newton-CG with
        Hessian-vector products when K d is large) and a backtracking line search that
        knows the objective's rounding: few iterations, each one pass over X on dense X
        (loss, gradient and Hessian), and a tol down to 1e-12 on well-posed problems. "sgd" updates
        on one row at a time, "minibatch" on `batch_size` rows (004: 512 or 1024), both
        through the shared SGD loop; their sample weights count relative to their mean
        (over the rows given so far, for partial_fit), so they minimize the same objective
        as the batch solvers: scaling every weight by c changes nothing.
    alpha : float, default 1e-4
        L2 strength: minimizes mean log-loss + alpha/2 ||w||^2 (0 = plain maximum likelihood).
    fit_intercept : bool, default True
    max_iter : int, default 100
        Iterations of the batch solvers (each one step: "gd" with max_iter=T takes T steps,
        as scikit-learn counts them); epochs of "sgd"/"minibatch".
    tol : float or None, default 1e-4
        Batch solvers stop when the largest |gradient| component is below tol (a
        ConvergenceWarning when max_iter, or floating point, stops them first; in float64
        "newton" reaches 1e-12, "gd" 1e-12 on well-conditioned problems, "lbfgs" 1e-8, see
        the user guide's "Tolerances in float64"); SGD stops when the epoch loss has not
        improved by tol for `n_iter_no_change` epochs. None or 0 runs exactly max_iter.
    learning_rate : "adagrad" (default), "constant", "inverse", "decay" or "optimal"
        SGD step sizes: eta0 * g / sqrt(sum g^2) per weight; eta0; eta0 / t (000's alpha/t);
        eta0 / (1 + decay * epoch) (001); 1 / (alpha (t0 + t)) (Bottou's, as scikit-learn).
        With "adagrad" the L2 term of a step reaches only the weights of the row's nonzero
        features (as in Vowpal Wabbit, so dense and CSR rows give the same model): a feature
        nonzero in a fraction f of the rows is penalized by f * alpha, not alpha. On data
        without zeros that is the objective above; on data with many zeros and alpha >~ 1e-3
        the other schedules (which apply alpha to every weight, lazily) or lbfgs reach the
        objective's optimum.
    eta0 : float, default None
        Base step: 0.1 for the SGD schedules when None; for "gd", None means 1/L.
    decay : float, default 1.0
    batch_size : int, default 512
        Rows per step of "minibatch". A batch_size larger than the rows (of the data, or of
        a partial_fit chunk) is clamped to the rows: one step per epoch on all of them.
    average : bool or int, default False
        Report the running average of the SGD iterates (an int starts averaging after that
        many steps).
    average_halflife : float or None, default None
        SGD: report the recency-weighted average of the iterates, the one t steps ago weighing
        2**(-t / average_halflife) (normalised; a step is a row for "sgd", a batch for
        "minibatch"), for streams that drift (003). Implies averaging (from the first step,
        or after `average` steps when that is an int); it carries on across `partial_fit`
        calls and `fastml.fit_stream` chunks.
    shuffle : bool or "block", default "block"
        Visit the rows in a new random order each epoch: True, a full permutation; "block",
        blocks of 256 consecutive rows in random order with the rows inside each block
        shuffled (reads X near memory bandwidth instead of waiting on each row; on data
        sorted by label it costs a little log-loss, see the user guide); False, the given
        order.
    early_stopping : bool or "progressive", default False
        SGD's `fit`: True holds out `validation_fraction` of the rows and stops when their
        log-loss stops improving by tol for n_iter_no_change epochs. "progressive" stops on
        `progressive_loss_` instead, with no rows held out (it watches the same numbers as
        the default rule; `fastml.fit_stream` also stops its passes on it). `partial_fit`
        runs one epoch and never stops early, so it holds nothing out and trains on every
        row it is given, as in scikit-learn.
    validation_fraction : float, default 0.1
    n_iter_no_change : int, default 5
    multi_class : "multinomial" (default) or "reference"
        More than two classes: softmax with one weight vector per class, or 002's R-1 vectors
        with the last class's margin fixed at 0. Two classes always use one vector (for
        classes_[1]), which is both.
    class_weight : None (default), "balanced" or dict {label: weight}
        Multiplies each row's sample weight by its class's weight, for every solver
        (scikit-learn's rule): "balanced" gives class c the weight n / (n_classes * n_c), n_c
        the sum of the sample weights of its rows and n theirs over all classes; a dict gives
        the classes it names their value and the others 1. The objective is then the
        weighted mean log-loss over these products, so scikit-learn's
        LogisticRegression(C, class_weight) is alpha = 1 / (C * the sum of the products)
        (= 1 / (C * n_samples) for "balanced" without sample weights). `partial_fit` takes a
        dict but refuses "balanced" (one chunk does not hold the class counts of all the
        data), as scikit-learn's partial_fit does.
    random_state : int, Generator or None
    verbose : int, default 0
        1: a progress bar (tqdm, if installed) over iterations / epochs showing the loss and
        weight or gradient norm; 2: one line per iteration / epoch; 0: silent.
    n_jobs : int or None
        Threads (None = 1, -1 = all cores). The batch solvers split the rows of each pass
        (the same model for any n_jobs). "sgd" / "minibatch" with n_jobs > 1 run each epoch
        (and each `partial_fit` call) by parameter mixing: the epoch's shuffled rows are cut
        into n_jobs contiguous shards, each runs SGD in its own thread from the same weights,
        then the weights are averaged (weighted by the shards' sample weights). This changes
        the model: it depends on n_jobs (give a number, not -1, to get the same model on any
        machine) and is deterministic for a fixed random_state and n_jobs; it costs a little
        log-loss per epoch (see the user guide). None or 1 is the serial loop.

    Attributes
    ----------
    coef_ : ndarray of shape (n_vectors, n_features)
        One weight vector for two classes (for classes_[1]), K (multinomial) or K - 1
        (reference) otherwise.
    intercept_ : ndarray of shape (n_vectors,)
    classes_ : ndarray of shape (n_classes,)
    n_iter_ : int
        Iterations (batch solvers: steps taken, 0 when the start already meets tol) or
        epochs (SGD) run.
    loss_curve_ : list of float
        The objective per iteration (batch) or the mean log-loss per epoch (SGD).
    progressive_loss_ : list of float
        SGD only: per epoch (and per `partial_fit` call) the weighted mean log-loss of each
        row under the model `predict_proba` would use before the step that uses it
        (progressive validation, as Vowpal Wabbit reports it): with averaging, the running
        average once it has started (one more dot product per row), else the iterate. The L2
        term is not included.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only for DataFrame input.

    Examples
    --------
    >>> import numpy as np
    >>> from fastml.linear_model import LogisticRegression
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> model = LogisticRegression(alpha=0.1).fit(X, [0, 0, 1, 1])
    >>> model.predict([[0.2], [2.8]]).tolist()
    [0, 1]
    >>> model.predict_proba([[1.5]]).round(3).tolist()
    [[0.5, 0.5]]
    """

    _accepts_sparse = True
    _foreign_params = {
        "C": ("fastml's regularization is alpha, the L2 penalty (alpha/2)||w||^2 on the "
              "mean loss: scikit-learn's C is alpha = 1 / (C * n_samples), e.g. C=1.0 on "
              "1,000 rows is alpha=1e-3"),
        "penalty": ("the penalty is always L2, of strength alpha: alpha > 0 for "
                    "penalty='l2', alpha=0 for penalty=None; L1 and elastic net are not offered"),
        "l1_ratio": "L1 and elastic-net penalties are not offered: the penalty is L2 (alpha)",
    }

    def __init__(self, solver: str = "lbfgs", alpha: float = 1e-4, fit_intercept: bool = True,
                 max_iter: int = 100, tol: Optional[float] = 1e-4, learning_rate: str = "adagrad",
                 eta0: Optional[float] = None, decay: float = 1.0, batch_size: int = 512,
                 average: Union[bool, int] = False, average_halflife: Optional[float] = None,
                 shuffle: Union[bool, str] = "block", early_stopping: Union[bool, str] = False,
                 validation_fraction: float = 0.1, n_iter_no_change: int = 5,
                 multi_class: str = "multinomial", class_weight: ClassWeightLike = None,
                 random_state: RandomStateLike = None, verbose: int = 0,
                 n_jobs: Optional[int] = None) -> None:
        self.solver = solver
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.decay = decay
        self.batch_size = batch_size
        self.average = average
        self.average_halflife = average_halflife
        self.shuffle = shuffle
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.multi_class = multi_class
        self.class_weight = class_weight
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs

    # ------------------------------------------------------------------ fitting

    @fresh_fit
    def fit(self: EstimatorT, X: MatrixLike, y: VectorLike,
            sample_weight: Optional[ArrayLike] = None) -> EstimatorT:
        """Fit on X and labels y by the chosen solver, from nothing: zero weights, and no
        state of an earlier fit or partial_fit, whatever solver made it, is kept.

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
        >>> from fastml.linear_model import LogisticRegression
        >>> X = np.array([[-2.0, 1.0], [-1.0, -1.0], [1.0, 1.0], [2.0, -1.0]])
        >>> model = LogisticRegression().fit(X, [0, 0, 1, 1])
        >>> model.predict([[-3.0, 0.0], [3.0, 0.0]]).tolist()
        [0, 1]
        """
        self._check_params()
        # The first pass over X doubles as its finiteness check, saving a read of X: a NaN or
        # inf in X makes the batch solvers' first gradient non-finite (_Objective) and stops
        # SGD's first epoch (run_epochs). Not with early stopping's held-out rows (never
        # trained on: SGD would not see them).
        batch = self.solver in ("lbfgs", "gd", "newton")
        first_pass_checks = batch or (self.solver in ("sgd", "minibatch")
                                      and not self._holds_out())
        X, y = check_X_y(X, y, accept_sparse=True, estimator=self, reset=True,
                         check_finite=not first_pass_checks)
        codes = self._encode_labels(y)
        sw = class_sample_weight(self.class_weight, self.classes_, codes,
                                 check_sample_weight(sample_weight, X.shape[0]))
        layout = OutputLayout(len(self.classes_), self.multi_class)
        if self.solver in ("sgd", "minibatch"):
            self._fit_sgd(X, codes, sw, layout, self.max_iter, finite_checked=False,
                          hold_out=self._holds_out())
        else:
            self._fit_batch(X, layout.codes(codes), sw, layout, finite_checked=not batch)
        return self

    @available_if(lambda self: self.solver in ("sgd", "minibatch"),
                  "needs solver='sgd' or 'minibatch'")
    @all_or_nothing(fitting=False)
    def partial_fit(self: EstimatorT, X: MatrixLike, y: VectorLike,
                    classes: Optional[VectorLike] = None,
                    sample_weight: Optional[ArrayLike] = None) -> EstimatorT:
        """One epoch of SGD on (X, y), continuing from the current state (online
        learning); solver='sgd' or 'minibatch'.

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
        >>> from fastml.linear_model import LogisticRegression
        >>> X = np.array([[-2.0, 1.0], [-1.0, -1.0], [1.0, 1.0], [2.0, -1.0]])
        >>> model = LogisticRegression(solver="sgd", random_state=0)
        >>> model = model.partial_fit(X[:2], [0, 0], classes=[0, 1])
        >>> model.partial_fit(X[2:], [1, 1]).classes_.tolist()
        [0, 1]
        """
        self._check_params()
        X, codes, sw, first = start_partial_fit(self, X, y, classes, sample_weight,
                                                check_finite=False)
        layout = OutputLayout(len(self.classes_), self.multi_class)
        self._fit_sgd(X, codes, sw, layout, 1, resume=not first, finite_checked=False)
        return self

    def _check_params(self):
        check_param("solver", self.solver, choices=SOLVERS)
        check_param("alpha", self.alpha, low=0.0)
        check_param("max_iter", self.max_iter, low=1, integer=True)
        check_param("tol", self.tol, low=0.0, allow_none=True)
        check_param("learning_rate", self.learning_rate, choices=SCHEDULES)
        check_param("eta0", self.eta0, low=0.0, low_inclusive=False, allow_none=True)
        check_param("multi_class", self.multi_class, choices=("multinomial", "reference"))
        check_class_weight(self.class_weight)
        check_param("validation_fraction", self.validation_fraction, low=0.0,
                    low_inclusive=False, high=0.5)
        check_param("n_iter_no_change", self.n_iter_no_change, low=1, integer=True)
        check_param("early_stopping", self.early_stopping, choices=(False, True, "progressive"))
        check_param("average_halflife", self.average_halflife, low=0.0, low_inclusive=False,
                    allow_none=True)
        if self.solver not in ("sgd", "minibatch") and self.average_halflife is not None:
            raise ValueError(f"average_halflife needs solver='sgd' or 'minibatch' (the "
                             f"{self.solver!r} solver has no iterates to average)")
        check_n_jobs_param(self.n_jobs)

    # ---- batch solvers: "gd" and "lbfgs" on the fused kernel

    def _fit_batch(self, X, codes, sw, layout, finite_checked=True):
        objective = _Objective(X, codes, sw, layout, self.alpha, self.fit_intercept,
                               check_n_jobs(self.n_jobs), finite_checked)
        self._solve(objective, X, codes, sw, layout)

    def _solve(self, objective, X=None, codes=None, sw=None, layout=None):
        """Minimize `objective` (in memory, or summed over parts: _SummedObjective) from
        zero by the solver, and set the solution."""
        x0 = np.zeros(objective.size)
        if self.solver == "lbfgs":
            x, n_iter, curve = self._run_lbfgs(objective, x0)
        elif self.solver == "newton":
            x, n_iter, curve = self._run_newton(objective, x0, X, codes, sw, layout)
        else:
            x, n_iter, curve = self._run_gd(objective, x0, X)
        self.coef_, self.intercept_ = objective.unpack(x)
        self.n_iter_ = n_iter
        self.loss_curve_ = curve

    # ---- fitted part by part (fastml/_plans.py)

    def _scaled_fit(self):
        """lbfgs / gd / newton: the objective (and Newton's Hessian) summed over the parts,
        exact; sgd / minibatch: passes of partial_fit (the SGD family's plan)."""
        self._check_params()
        if self.solver in ("sgd", "minibatch"):
            return sgd_plan(self, classifier=True, needs_totals=False)
        return Objective(start=_summed_start, prepare=_summed_prepare, solve=_summed_solve)

    def _run_lbfgs(self, objective, x0):
        from scipy.optimize import minimize
        curve, last = [], [np.nan]
        tol = self.tol if self.tol else 0.0
        with progress(self.max_iter, desc="LogisticRegression(lbfgs)", unit="iteration",
                      verbose=self.verbose) as bar:
            def fun(x):
                f, g = objective(x)
                last[0] = f
                return f, g

            def step(x):    # after each iteration: `last` is the objective at the new x
                curve.append(last[0])
                bar.update(objective=last[0])

            # With tol, stop on max|grad| <= tol only (gtol): ftol=0 switches off scipy's
            # relative-reduction test, which stopped tol=1e-10 runs at a gradient of 1e-5.
            # Without tol, run until max_iter or until f stops decreasing in floating point
            # (past that, steps only wander by rounding noise).
            result = minimize(fun, x0, jac=True, method="L-BFGS-B", callback=step,
                              options=dict(maxiter=self.max_iter, gtol=tol, maxls=50,
                                           ftol=0.0 if tol > 0 else 64 * np.finfo(float).eps))
        # result.jac is the gradient at result.x that L-BFGS-B already evaluated: another
        # objective(result.x) here would be one more full pass over X per fit.
        gmax = float(np.max(np.abs(result.jac))) if objective.size else 0.0
        if tol > 0 and gmax > tol:
            if result.nit >= self.max_iter:
                _warn_max_iter("lbfgs", self.max_iter)
            else:   # the line search can no longer decrease f in floating point
                import warnings
                warnings.warn(f"LogisticRegression(solver='lbfgs') stopped with max|gradient| "
                              f"= {gmax:.3g} > tol={tol}: {result.message}; tol is below what "
                              f"float64 arithmetic can reach on this problem",
                              ConvergenceWarning)
        return result.x, int(result.nit), curve

    def _run_newton(self, objective, x0, X, codes, sw, layout):
        """Newton-Raphson (001) on the same objective; see _newton.py."""
        from ._newton import NewtonProblem, newton_minimize
        problem = _SummedNewton(objective) if X is None else \
            NewtonProblem(objective, X, codes, sw, layout.n_outputs, layout.label_offset,
                          layout.reference, self.alpha, self.fit_intercept)
        tol = self.tol or 0.0
        with progress(self.max_iter, desc="LogisticRegression(newton)", unit="iteration",
                      verbose=self.verbose) as bar:
            x, n_iter, curve, status, separated = newton_minimize(
                problem, x0, max_iter=self.max_iter, tol=tol,
                on_iteration=lambda f, gmax: bar.update(objective=f, max_grad=gmax))
        import warnings
        if separated:
            warnings.warn("LogisticRegression(solver='newton', alpha=0): every training row is "
                          "classified correctly, so the data are separable and the maximum-"
                          "likelihood weights are infinite; the reported weights are where "
                          "the iterations stopped. Set alpha > 0 for a finite optimum.",
                          ConvergenceWarning)
        elif status == "max_iter" and tol > 0:
            _warn_max_iter("newton", self.max_iter)
        elif status == "floor" and tol > 0:
            _, g = objective(x)
            warnings.warn(f"LogisticRegression(solver='newton') stopped with max|gradient| = "
                          f"{np.max(np.abs(g)):.3g} > tol={tol}: neither the objective nor "
                          f"the gradient can show further progress in float64 arithmetic "
                          f"on this problem; tol is below what it can reach here",
                          ConvergenceWarning)
        return x, n_iter, curve

    def _run_gd(self, objective, x, X):
        """Gradient descent on the mean objective (ascent on the log-likelihood, 000/002).

        A given `eta0` is the constant step of the lectures. Without it the step adapts:
        eta starts at 1/L (L from objective.lipschitz: one pass); a trial point x - eta g is
        kept unless the objective rises, and in the first _GD_WARM_UP iterations eta then
        becomes min(2 eta, 1 / the curvature seen along the step) (later the gradients are
        small and their differences mostly rounding, which would make eta noise); a trial
        that raises the objective is dropped and eta halves, never below 1/L (where descent
        is guaranteed, so that step is always kept). The test is "did f rise beyond
        rounding", not Armijo's sufficient decrease, which flips wherever f falls at the
        edge of the test: rounding (float32, CSR vs dense sums) then sends equal problems
        down different paths.

        max_iter=T takes T steps (T trial points; a rejected one counts, as it costs a pass),
        as scikit-learn counts iterations, and n_iter_ is the steps taken (0 when the start
        already meets tol). The start is evaluated once before the first step, and each step
        evaluates its trial point in one fused pass (objective and gradient), so a fit of T
        iterations reads X T + 2 times with the default step (its bound is one pass) and
        T + 1 times with eta0. loss_curve_ holds the objective after each step."""
        adaptive = self.eta0 is None
        eta_min = 1.0 / objective.lipschitz(X) if adaptive else self.eta0
        curve, tol = [], self.tol or 0.0
        # a "rise" within the objective's rounding (float64: the kernel's weights and sums
        # are float64 for any X) is noise, not a rise: accepting it keeps equal problems
        # (dense / CSR, any summation order) on one path
        noise = 64 * np.finfo(np.float64).eps
        f, g = objective(x)
        if not np.isfinite(f):
            raise DivergenceError("gradient descent diverged; lower eta0")
        state = {"x": x, "f": f, "g": g, "gg": float(np.dot(g, g)), "eta": eta_min}
        if (float(np.max(np.abs(g))) if len(g) else 0.0) <= tol:
            return x, 0, curve          # the start is the optimum (X = 0, say): no step

        def step(i):
            x_new = state["x"] - state["eta"] * state["g"]
            f, g = objective(x_new)
            if not np.isfinite(f) and not adaptive:
                raise FloatingPointError("gradient descent diverged; lower eta0")
            if not adaptive or state["eta"] <= eta_min or (
                    np.isfinite(f) and f <= state["f"] + noise * abs(state["f"])):
                if adaptive and i < _GD_WARM_UP:
                    moved = state["eta"] * np.sqrt(state["gg"])     # accepted: the curvature
                    curv = float(np.linalg.norm(g - state["g"])) / moved if moved else 0.0
                    state["eta"] = max(eta_min, min(2.0 * state["eta"],   # along the step
                                                    1.0 / curv if curv > 0 else np.inf))
                state.update(x=x_new, f=f, g=g, gg=float(np.dot(g, g)))
            else:                                           # rejected: shorter step, same x
                state["eta"] = max(eta_min, 0.5 * state["eta"])
            f, g = state["f"], state["g"]
            curve.append(f)
            gmax = float(np.max(np.abs(g))) if len(g) else 0.0
            if not np.isfinite(f):
                raise DivergenceError("gradient descent diverged; lower eta0")
            return None, {"objective": f, "max_grad": gmax}, gmax <= tol

        n_run = iterate(step, self.max_iter, desc="LogisticRegression(gd)", unit="iteration",
                        verbose=self.verbose,
                        max_iter_warning=_max_iter_message("gd", self.max_iter) if tol > 0
                        else None)
        return state["x"], n_run, curve

    # ---- online solvers: the shared SGD loop

    def _holds_out(self):
        """Does an SGD fit keep rows out of training (early_stopping=True)?"""
        return not isinstance(self.early_stopping, str) and bool(self.early_stopping)

    def _fit_sgd(self, X, codes, sw, layout, epochs, resume=False, finite_checked=True,
                 hold_out=False):
        """`epochs` SGD epochs (fit: max_iter; partial_fit: 1) from a new state or, with
        `resume`, from the current one. hold_out (fit with early_stopping=True only): keep
        validation_fraction of the rows out of training to decide when to stop; partial_fit
        never stops early, so it trains on every row it is given. The sample weights step
        relative to their mean over the rows seen (SGDEngine.relative_weights), so SGD
        minimizes the batch solvers' objective, sum_i s_i l_i / sum_i s_i + alpha/2 ||W||^2."""
        rng = check_random_state(self.random_state) if not resume else self._rng
        if not resume:
            self._rng = rng
            self._engine = SGDEngine(
                layout.n_outputs, X.shape[1], X.dtype, loss="log",
                learning_rate=self.learning_rate,
                eta0=0.1 if self.eta0 is None else self.eta0, alpha=self.alpha,
                decay=self.decay, batch_size=self.batch_size if self.solver == "minibatch" else 1,
                fit_intercept=self.fit_intercept, average=self.average,
                average_halflife=self.average_halflife, label_offset=layout.label_offset,
                reference=layout.reference)
            self._epochs_done = 0
        Y = layout.targets(codes)
        validation = None
        if hold_out:
            X, Y, sw, validation = self._split_validation(X, Y, sw, layout, rng)
        sw = self._engine.relative_weights(sw, pass_totals(self))
        n_iter, curve, progressive = run_epochs(
            self._engine, X, Y, sw, max_iter=epochs,
            tol=self.tol if epochs > 1 else None, n_iter_no_change=self.n_iter_no_change,
            shuffle=self.shuffle, rng=rng, validation=validation, verbose=self.verbose,
            name="LogisticRegression", first_epoch=self._epochs_done,
            watch_progressive=self.early_stopping == "progressive", n_jobs=self.n_jobs,
            finite_checked=finite_checked)
        self._epochs_done += n_iter
        self.coef_ = self._engine.coef()
        self.intercept_ = self._engine.intercept()
        self.n_iter_ = self._epochs_done
        self.loss_curve_ = (getattr(self, "loss_curve_", []) if resume else []) + curve
        self.progressive_loss_ = (getattr(self, "progressive_loss_", []) if resume
                                  else []) + progressive

    def _split_validation(self, X, Y, sw, layout, rng):
        n = X.shape[0]
        n_val = max(1, int(round(self.validation_fraction * n)))
        if n - n_val < 1:
            raise ValueError(f"early_stopping needs more rows: {n} rows leave none for training")
        perm = rng.permutation(n)
        val, train = np.sort(perm[:n_val]), np.sort(perm[n_val:])
        X_val, codes_val, sw_val = X[val], Y[val, 0].astype(np.int64), sw[val]

        def validation_loss(engine):
            self.coef_, self.intercept_ = engine.coef(), engine.intercept()
            logp = self._log_proba_from_margins(self._raw_margins(X_val))
            picked = logp[np.arange(len(codes_val)), layout.class_of(codes_val)]
            return float(-np.average(picked, weights=sw_val))

        return X[train], np.ascontiguousarray(Y[train]), sw[train], validation_loss

    # ------------------------------------------------------------------ prediction

    def _raw_margins(self, X):
        return np.asarray(X @ self.coef_.T) + self.intercept_

    def _class_margins(self, M):
        """(n, n_classes) margins from the kernels' outputs: the reference class gets 0."""
        layout = OutputLayout(len(self.classes_), self.multi_class)
        M = np.asarray(M, dtype=np.float64)
        if not layout.reference:
            return M
        zero = np.zeros((M.shape[0], 1))
        # Two classes: the one vector is for classes_[1]; else the last class is the reference.
        return np.concatenate([zero, M] if layout.n_classes == 2 else [M, zero], axis=1)

    def _log_proba_from_margins(self, M, exponentiate=False):
        """log P(class | x) (P itself when exponentiate) from the kernels' outputs, finite or
        infinite: an infinite margin (X @ coef_ overflowed to +-inf on finite X) gives
        log P = 0 / -inf (P = 1 / 0), never NaN. One compiled call in the usual case (a one-row
        call costs its numpy calls, not its arithmetic). Two classes, margins [0, m]:
        log P = [-softplus(m), -softplus(-m)], stable at any m. More classes: the log-softmax
        around the row's largest margin (_core's log_posterior), or _log_softmax_at_infinity
        when a row's largest margin is infinite. (A NaN margin never gets here: _margins
        refuses it.)"""
        M = np.ascontiguousarray(M, dtype=np.float64)
        if M.shape[1] == 1:
            return binary_log_posterior(M.reshape(-1), exponentiate)
        M = self._class_margins(M)      # changed in place: the callers pass fresh margins
        if not log_posterior(M, True, exponentiate):
            M = self._log_softmax_at_infinity(M)
            if exponentiate:
                np.exp(M, out=M)
        return M

    @staticmethod
    def _log_softmax_at_infinity(M):
        """The log-softmax of rows some of whose margins are infinite: where a row's largest
        margin is +inf, the classes at it share the probability equally (the limit of margins
        growing alike) and the others get 0; the other rows as usual."""
        mx = M.max(axis=1, keepdims=True)
        with np.errstate(invalid="ignore"):
            out = M - (mx + np.log(np.exp(M - mx).sum(axis=1, keepdims=True)))
        infinite = ~np.isfinite(mx[:, 0])
        top = M[infinite] == mx[infinite]
        out[infinite] = np.where(top, -np.log(top.sum(axis=1, keepdims=True)), -np.inf)
        return out

    def predict_proba(self, X: MatrixLike) -> NDArray[np.float64]:
        """Parameters
        ----------
        X : array-like or CSR matrix of shape (n_samples, n_features)

        Returns
        -------
        P : ndarray of shape (n_samples, n_classes)
            P(class | x) for each of classes_, rows summing to 1, stable at any margin: one
            that overflows to +-inf (huge finite X) gives P = 1 / 0 (several classes at
            +inf share the row equally). A margin that is NaN (X @ coef_ overflowed to
            inf - inf) raises a ValueError naming the row.

        Examples
        --------
        >>> import numpy as np
        >>> from fastml.linear_model import LogisticRegression
        >>> model = LogisticRegression().fit([[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1])
        >>> model.predict_proba([[0.0], [3.0]]).argmax(axis=1).tolist()
        [0, 1]
        """
        return self._log_proba_from_margins(self._margins(X), exponentiate=True)

    def predict_log_proba(self, X: MatrixLike) -> NDArray[np.float64]:
        """Parameters
        ----------
        X : array-like or CSR matrix of shape (n_samples, n_features)

        Returns
        -------
        logP : ndarray of shape (n_samples, n_classes)
            log P(class | x) by log-sum-exp of the margins (finite where P underflows; 0 /
            -inf where a margin overflowed to +-inf; a NaN margin raises, as in
            predict_proba).

        Examples
        --------
        >>> import numpy as np
        >>> from fastml.linear_model import LogisticRegression
        >>> model = LogisticRegression().fit([[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1])
        >>> bool(np.isfinite(model.predict_log_proba([[1e6]])).all())
        True
        """
        return self._log_proba_from_margins(self._margins(X))

    def decision_function(self, X: MatrixLike) -> NDArray[np.floating[Any]]:
        """Parameters
        ----------
        X : array-like or CSR matrix of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            The margins: (n,) for two classes (the log-odds of classes_[1]); (n, n_classes)
            otherwise, with the reference class's column 0 when multi_class="reference".
            float32 when both X and the model (coef_) are float32, else float64
            (predict_proba is float64 either way).

        Examples
        --------
        >>> from fastml.linear_model import LogisticRegression
        >>> model = LogisticRegression().fit([[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1])
        >>> model.decision_function([[0.0], [3.0]]).shape
        (2,)
        """
        M = self._margins(X)
        if M.shape[1] == 1:
            return M.ravel()
        return self._class_margins(M).astype(M.dtype, copy=False)

    def predict(self, X: MatrixLike) -> NDArray[Any]:
        """Parameters
        ----------
        X : array-like or CSR matrix of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            The class with the largest margin (for two classes: classes_[1] where the log-odds
            are positive).

        Examples
        --------
        >>> from fastml.linear_model import LogisticRegression
        >>> LogisticRegression().fit([[0.0], [1.0], [2.0], [3.0]], ["a", "a", "b", "b"]).predict(
        ...     [[0.0], [3.0]]).tolist()
        ['a', 'b']
        """
        scores = self.decision_function(X)
        return labels_from_scores(self.classes_, scores)


_GD_WARM_UP = 8     # iterations in which gd's default step follows the curvature it sees


class _Objective:
    """mean weighted log-loss + alpha/2 ||W||^2 and its gradient, as a function of the flat
    parameter vector [W.ravel(), b] (what scipy's optimizers and our gradient descent take).
    One call = one fused pass of the kernel over X.

    finite_checked=False: X's finiteness is checked from the first call's result. A NaN or
    inf x_ij reaches every G[k, j] += r_ik x_ij of that call (r x inf is inf, or NaN when
    r = 0; NaN stays NaN), whatever the weights or the sample weight, so a finite gradient
    proves X finite, and a non-finite one sends X through the check that names the problem."""

    def __init__(self, X, codes, sw, layout, alpha, fit_intercept, n_threads,
                 finite_checked=True):
        self.X, self.sw, self.alpha = X, sw, alpha
        self.finite_checked = finite_checked
        self.y = np.ascontiguousarray(codes, dtype=np.float64)
        self.K, self.d = layout.n_outputs, X.shape[1]
        self.layout, self.fit_intercept, self.n_threads = layout, fit_intercept, n_threads
        self.weight_total = float(sw.sum())
        self.size = self.K * self.d + (self.K if fit_intercept else 0)
        self.grad_W = np.empty((self.K, self.d))
        self.grad_b = np.empty(self.K)

    def unpack(self, x):
        return unpack(x, self.K, self.d, self.fit_intercept, self.X.dtype)

    def __call__(self, x):
        return self._evaluate(x, None)

    def with_hessian_blocks(self, x):
        """(f, g, blocks): also the Hessian blocks of the summed log-loss in the same pass
        (dense X; _batch_fast.loss_grad's `hessian`: (K (K + 1) / 2, d + 1, d + 1), pair (k,
        l <= k) at k (k + 1) / 2 + l; divided by the total weight they are the mean's)."""
        blocks = np.empty((self.K * (self.K + 1) // 2, self.d + 1, self.d + 1))
        f, g = self._evaluate(x, blocks)
        return f, g, blocks

    def _evaluate(self, x, hessian):
        # the kernel takes the weights in float64 whatever X's dtype: never rounded
        W = x[:self.K * self.d].reshape(self.K, self.d)
        b = x[self.K * self.d:] if self.fit_intercept else np.zeros(self.K)
        loss = _batch.loss_grad(self.X, self.y, self.sw, W, b, self.grad_W, self.grad_b,
                                LOSSES["log"], self.layout.label_offset,
                                self.layout.reference, self.n_threads, hessian=hessian)
        scale = 1.0 / self.weight_total
        f = loss * scale + 0.5 * self.alpha * float(np.dot(x[:self.K * self.d],
                                                           x[:self.K * self.d]))
        g = np.empty(self.size)
        g[:self.K * self.d] = self.grad_W.ravel() * scale + self.alpha * x[:self.K * self.d]
        if self.fit_intercept:
            g[self.K * self.d:] = self.grad_b * scale
        if not self.finite_checked:
            if not (np.isfinite(f) and np.isfinite(g).all()):
                _check_finite(self.X, "X", allow_nan=False)   # raises, naming NaN or inf
            self.finite_checked = True                        # X finite; f may overflow
        return f, g

    def lipschitz(self, X):
        """An upper bound of the gradient's Lipschitz constant from one pass over X: the
        largest eigenvalue of the Hessian is at most bound * trace([X 1]^T diag(sw) [X 1]) /
        sum(sw) + alpha = bound * sum_i sw_i (||x_i||^2 + 1) / sum(sw) + alpha (the Frobenius
        bound; the binary log-loss's curvature is at most 1/4, the softmax's 1/2)."""
        return step_bound(np.dot(self.sw, squared_row_norms(X)), self.weight_total,
                          self.fit_intercept, self.layout.n_classes, self.alpha)


def unpack(x, K, d, fit_intercept, dtype):
    """(W (K, d), b (K,)) in `dtype` from the flat parameters [W.ravel(), b]."""
    W = np.ascontiguousarray(x[:K * d].reshape(K, d), dtype=dtype)
    b = x[K * d:] if fit_intercept else np.zeros(K)
    return W, np.ascontiguousarray(b, dtype=dtype)


# ---- the objective summed over parts (the Objective plan of fastml/_plans.py): the parts'
# sums of weighted log-loss and gradient (the batch kernel's, at alpha = 0), added up where
# the parts are, then divided by the total weight and regularized once, as _Objective does.

class _SummedTerms:
    """What every part's terms need: the classes, their layout on the kernel's outputs, each
    class's weight (None without class_weight), the intercept flag and the kernel's threads
    (small: it travels to workers)."""

    def __init__(self, classes, layout, factors, fit_intercept, n_threads):
        self.classes, self.layout, self.factors = classes, layout, factors
        self.fit_intercept, self.n_threads = fit_intercept, n_threads


def _summed_start(estimator, labels):
    estimator._encode_labels(labels.classes)     # fit's rules: 2 classes, not continuous
    return _SummedTerms(estimator.classes_,
                        OutputLayout(len(estimator.classes_), estimator.multi_class),
                        class_factors(estimator.class_weight, labels),
                        bool(estimator.fit_intercept), check_n_jobs(estimator.n_jobs))


def _summed_prepare(X, y, w, terms):
    """A part as the kernel takes it, validated as fit validates it: (X, kernel codes,
    weights, class weights multiplied in as fit multiplies them)."""
    X, y = check_X_y(X, y, accept_sparse=True)
    classes = label_codes(terms.classes, y)
    sw = np.ones(X.shape[0]) if w is None else check_sample_weight(w, X.shape[0], whole=False)
    if terms.factors is not None:
        sw = sw * terms.factors[classes]
    return X, terms.layout.codes(classes), sw


def _loss_terms(part, terms, x):
    """(summed weighted log-loss, its summed gradient over [W.ravel(), b], summed weight) of
    a part at x."""
    X, codes, sw = part
    weight = float(sw.sum())
    if weight == 0:
        return 0.0, np.zeros(len(x)), 0.0
    f, g = _Objective(X, codes, sw, terms.layout, 0.0, terms.fit_intercept, terms.n_threads)(x)
    return f * weight, g * weight, weight


def _norm_terms(part, terms):
    """A part's sum_i sw_i ||x_i||^2 and sum_i sw_i (the step bound's sums)."""
    X, _, sw = part
    return float(np.dot(sw, squared_row_norms(X))), float(sw.sum())


def _summed_solve(estimator, terms, total, schema):
    estimator._solve(_SummedObjective(terms, total, schema, float(estimator.alpha)))


class _SummedObjective:
    """_Objective's function summed over parts: each call is one evaluation of the terms on
    every part (`total`: a pass over a stream, a task per partition)."""

    def __init__(self, terms, total, schema, alpha):
        self.terms, self.total, self.alpha = terms, total, alpha
        self.K, self.d, self.dtype = terms.layout.n_outputs, schema.n_features, schema.dtype
        self.size = self.K * self.d + (self.K if terms.fit_intercept else 0)

    def unpack(self, x):
        return unpack(x, self.K, self.d, self.terms.fit_intercept, self.dtype)

    def __call__(self, x):
        loss, grad, weight = self.total(_loss_terms, np.asarray(x, dtype=np.float64))
        n = self.K * self.d
        f = loss / weight + 0.5 * self.alpha * float(np.dot(x[:n], x[:n]))
        g = grad / weight
        g[:n] += self.alpha * x[:n]
        return f, g

    def lipschitz(self, _X=None):
        norms, weight = self.total(_norm_terms)
        return step_bound(norms, weight, self.terms.fit_intercept, self.terms.layout.n_classes,
                          self.alpha)


def _part_newton(part, terms):
    """A part's NewtonProblem at alpha = 0: its sums, times its weight, add up over parts."""
    from ._newton import NewtonProblem
    X, codes, sw = part
    layout = terms.layout
    objective = _Objective(X, codes, sw, layout, 0.0, terms.fit_intercept, terms.n_threads)
    return NewtonProblem(objective, X, codes, sw, layout.n_outputs, layout.label_offset,
                         layout.reference, 0.0, terms.fit_intercept)


def _newton_terms(part, terms, x, with_hessian):
    """(summed weighted log-loss, summed gradient, summed weight[, summed Hessian]) of a part
    at x; the Hessian (of the summed log-loss, no alpha) in the kernel's pass on dense X."""
    problem = _part_newton(part, terms)
    if problem.S == 0:
        zeros = (0.0, np.zeros(len(x)), 0.0)
        return zeros + (np.zeros((len(x), len(x))),) if with_hessian else zeros
    f, g, H = problem.evaluate(x, with_hessian)
    if with_hessian and H is None:
        H = problem.hessian(x)
    out = (f * problem.S, g * problem.S, problem.S)
    return out + (H * problem.S,) if with_hessian else out


def _hessian_vector_terms(part, terms, x, v):
    """A part's summed Hessian (no alpha) times v at x (Newton-CG: two passes)."""
    problem = _part_newton(part, terms)
    if problem.S == 0:
        return np.zeros(len(v))
    return problem.hessian_vector(problem.probabilities(x), v) * problem.S


def _unseparated_terms(part, terms, x):
    """1 when some row of the part is not classified correctly at x, else 0."""
    problem = _part_newton(part, terms)
    return 0 if problem.S == 0 or problem.separated(x) else 1


class _SummedNewton:
    """newton_minimize's problem protocol (fastml/linear_model/_newton.py) for the objective
    summed over parts: each evaluation adds up the parts' log-loss, gradient and, when asked,
    Hessian (each computed where its part is, as NewtonProblem computes them in memory), then
    divides by the total weight and regularizes once. The direction's maths is
    NewtonProblem's own; Newton-CG's products are sums over the parts too."""

    def __init__(self, objective):
        from ._newton import FULL_HESSIAN_MAX, NewtonProblem
        terms = objective.terms
        self.objective, self.total, self.terms = objective, objective.total, terms
        self.K, self.d, self.size = objective.K, objective.d, objective.size
        self.alpha, self.fit_intercept = objective.alpha, terms.fit_intercept
        self.reference = terms.layout.reference
        self.forms_hessian = self.size <= FULL_HESSIAN_MAX
        self.weight = None
        self._problem = NewtonProblem
        self.null = NewtonProblem._null_space(self)

    def evaluate(self, x, with_hessian=False):
        with_hessian = with_hessian and self.forms_hessian
        out = self.total(_newton_terms, np.asarray(x, dtype=np.float64), with_hessian)
        loss, grad, self.weight = out[:3]
        n = self.K * self.d
        f = loss / self.weight + 0.5 * self.alpha * float(np.dot(x[:n], x[:n]))
        g = grad / self.weight
        g[:n] += self.alpha * x[:n]
        if not with_hessian:
            return f, g, None
        H = out[3] / self.weight
        H[np.arange(n), np.arange(n)] += self.alpha
        return f, g, H

    def hessian(self, x):
        return self.evaluate(x, with_hessian=True)[2] if self.forms_hessian else None

    def probabilities(self, x):
        """Newton-CG's probabilities stay with the parts: the point stands for them."""
        return np.asarray(x, dtype=np.float64)

    def hessian_vector(self, x, v):
        V = v[:self.K * self.d]
        out = self.total(_hessian_vector_terms, x, v) / self.weight
        out[:self.K * self.d] += self.alpha * V
        return out

    def flat(self, v):
        return self._problem.flat(self, v)

    def direction(self, x, g, H=None):
        return self._problem.direction(self, x, g, H)

    def separated(self, x):
        return self.total(_unseparated_terms, np.asarray(x, dtype=np.float64)) == 0


def squared_row_norms(X):
    """||x_i||^2 per row in float64: one pass over X (dense or CSR)."""
    if hasattr(X, "indptr"):
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        return np.bincount(rows, weights=np.square(X.data, dtype=np.float64),
                           minlength=X.shape[0])
    return np.einsum("ij,ij->i", X, X, dtype=np.float64)


def step_bound(weighted_sq_norms, weight, fit_intercept, n_classes, alpha):
    """The Lipschitz bound of _Objective.lipschitz from sum_i sw_i ||x_i||^2 and sum_i sw_i
    (the streamed and distributed objectives sum these over chunks)."""
    trace = (weighted_sq_norms + (weight if fit_intercept else 0.0)) / weight
    bound = 0.25 if n_classes == 2 else 0.5
    return max(bound * trace + alpha, np.finfo(np.float64).tiny)  # X = 0: any step will do


def _max_iter_message(solver, max_iter):
    return (f"LogisticRegression(solver={solver!r}) reached max_iter={max_iter} before the "
            f"gradient fell below tol; raise max_iter or tol")


def _warn_max_iter(solver, max_iter):
    import warnings
    warnings.warn(_max_iter_message(solver, max_iter), ConvergenceWarning)
