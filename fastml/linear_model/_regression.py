"""Least squares, ridge and polynomial regression (lectures 001 and 004).

004's normal equation w = (X^T X)^-1 X^T y and 001's ridge regression

    min_w  (1/n) sum_i (y_i - <w, x_i>)^2 + lambda ||w||^2

are solved from the sufficient statistics of the data (n, the means, X^T X, X^T y), which one
pass over X collects with BLAS (fastml/linear_model/_regression_fast.pyx). Those statistics are a reduction:
`LinearStats` holds them for one chunk of rows and `merge` combines chunks exactly (Chan's
formula on centered moments), so a fit can stream over chunks or run on workers and be merged
(`partial_fit` with solver="normal" does this). solver="lstsq" solves the centered least-squares
problem by SVD (LAPACK gelsd, the minimum-norm solution); solver="sgd" runs the library's one
SGD loop (fastml/linear_model/_sgd_fast.pyx) on the squared loss.
"""
import warnings

import numpy as np
from scipy import linalg
from scipy.linalg import LinAlgWarning

from .._base import BaseEstimator, RegressorMixin, available_if
from .._threads import blas_limit
from . import _regression_fast as _linreg
from .._validation import (check_array, check_n_jobs, check_param, check_random_state,
                           check_sample_weight, check_X_y, state_count)
from ._polynomial import PolynomialFeatures
from ._sgd import SCHEDULES, SGDEngine, run_epochs

SOLVERS = ("normal", "lstsq", "sgd")

# The normal equations lose about cond(A) * eps of relative accuracy in w; below this reciprocal
# condition number of A (LAPACK's estimate from the Cholesky factor) we say so and solve the
# least-squares problem instead.
RCOND_LIMIT = 1e-10


# ---------------------------------------------------------------------------- statistics

class LinearStats:
    """Sufficient statistics of weighted least squares over a set of rows, mergeable.

    Centered moments merge without cancellation (Chan et al.):
    Sxx = Sxx_a + Sxx_b + (W_a W_b / W) (mean_b - mean_a)(mean_b - mean_a)^T, so statistics of
    chunks (or of workers) combine exactly; `LinearRegression.fit_stats` fits from them.

    Parameters
    ----------
    weight : float
        The sum of the sample weights (the number of rows when unweighted).
    n_samples : int
        The number of rows.
    x_mean : ndarray of shape (n_features,)
        The weighted feature means.
    y_mean : ndarray of shape (n_targets,)
        The weighted target means.
    Sxx : ndarray of shape (n_features, n_features)
        sum_i w_i (x_i - x_mean)(x_i - x_mean)^T.
    Sxy : ndarray of shape (n_features, n_targets)
        sum_i w_i (x_i - x_mean)(y_i - y_mean)^T.
    Syy : ndarray of shape (n_targets, n_targets)
        sum_i w_i (y_i - y_mean)(y_i - y_mean)^T.

    Attributes
    ----------
    weight, n_samples, x_mean, y_mean, Sxx, Sxy, Syy
        As given.

    Examples
    --------
    >>> import numpy as np
    >>> from fastml import LinearRegression, LinearStats
    >>> X, y = np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([1.0, 3.0, 5.0, 7.0])
    >>> stats = LinearStats.from_data(X[:2], y[:2]) + LinearStats.from_data(X[2:], y[2:])
    >>> stats.n_samples, stats.x_mean.tolist(), stats.Sxx.tolist()
    (4, [1.5], [[5.0]])
    >>> LinearRegression().fit_stats(stats).coef_.round(6).tolist()
    [2.0]
    """

    def __init__(self, weight, n_samples, x_mean, y_mean, Sxx, Sxy, Syy):
        self.weight = float(weight)
        self.n_samples = int(n_samples)
        self.x_mean, self.y_mean = np.asarray(x_mean), np.asarray(y_mean)
        self.Sxx, self.Sxy, self.Syy = np.asarray(Sxx), np.asarray(Sxy), np.asarray(Syy)

    @classmethod
    def from_data(cls, X, Y, sample_weight=None, n_jobs=None):
        """Statistics of the rows of X with targets Y, in one pass.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            C-contiguous float32 or float64 (the estimators validate first).
        Y : ndarray of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : ndarray of shape (n_samples,), optional
        n_jobs : int or None
            fastml threads (`check_n_jobs`: None = 1).

        Returns
        -------
        stats : LinearStats

        The shift (the mean of the first rows) keeps the centering accurate when the features
        have large means.
        """
        Y = np.ascontiguousarray(Y, dtype=np.float64).reshape(X.shape[0], -1)
        n, d = X.shape
        K = Y.shape[1]
        head = slice(0, min(n, 1024))
        x_shift = np.mean(X[head], axis=0, dtype=np.float64)
        y_shift = np.mean(Y[head], axis=0)
        p = d + 1 + K
        q = _linreg.padded_size(p)
        G = np.zeros((q, q))
        sw = np.empty(0) if sample_weight is None else np.ascontiguousarray(sample_weight,
                                                                             dtype=np.float64)
        block_rows = _linreg.block_rows_for(q)
        _gram(X, Y, sw, x_shift, y_shift, G, block_rows, n_jobs)
        if not np.isfinite(G).all():
            # NaN / inf in X reach G: the estimators skip the separate finiteness pass over X
            # (10% of a fit) and let this one name the problem.
            check_array(X)
            raise ValueError("X^T X overflowed: feature values are too large (about 1e154 or "
                             "more); rescale X")
        W = G[d, d]
        mz, my = G[d, :d] / W, G[d, d + 1:p] / W
        return cls(W, n, x_shift + mz, y_shift + my,
                   G[:d, :d] - W * np.outer(mz, mz),
                   G[:d, d + 1:p] - W * np.outer(mz, my),
                   G[d + 1:p, d + 1:p] - W * np.outer(my, my))

    def merge(self, other):
        """Statistics of the union of both sets of rows (neither is modified).

        Parameters
        ----------
        other : LinearStats
            With the same numbers of features and targets.

        Returns
        -------
        stats : LinearStats
        """
        if self.Sxy.shape != other.Sxy.shape:
            raise ValueError(f"cannot merge statistics of shapes {self.Sxy.shape} and "
                             f"{other.Sxy.shape} (features x targets)")
        Wa, Wb = self.weight, other.weight
        W = Wa + Wb
        dx, dy = other.x_mean - self.x_mean, other.y_mean - self.y_mean
        f = Wa * Wb / W
        return LinearStats(W, self.n_samples + other.n_samples,
                           self.x_mean + dx * (Wb / W), self.y_mean + dy * (Wb / W),
                           self.Sxx + other.Sxx + f * np.outer(dx, dx),
                           self.Sxy + other.Sxy + f * np.outer(dx, dy),
                           self.Syy + other.Syy + f * np.outer(dy, dy))

    __add__ = merge

    def normal_equations(self, alpha=0.0, fit_intercept=True):
        """(A, B) with A W = B the ridge normal equations of 001's objective with
        lambda = alpha: A = Sxx + lambda * weight * I (centered, when fitting an intercept;
        the uncentered X^T X otherwise), B = X^T y likewise."""
        if fit_intercept:
            A, B = self.Sxx.copy(), self.Sxy.copy()
        else:
            A = self.Sxx + self.weight * np.outer(self.x_mean, self.x_mean)
            B = self.Sxy + self.weight * np.outer(self.x_mean, self.y_mean)
        A[np.diag_indices_from(A)] += alpha * self.weight
        return A, B

    def solve(self, alpha=0.0, fit_intercept=True):
        """(coef (K, d), intercept (K,), rank, ok): Cholesky when A is well conditioned (ok),
        else the minimum-norm solution of the normal equations by eigendecomposition
        (ok=False: the caller warns, or re-solves on the data)."""
        A, B = self.normal_equations(alpha, fit_intercept)
        W, rank, ok = cholesky_solve(A, B)
        if not ok:
            W, rank = min_norm_solve(A, B)
        return W.T, self.intercept_for(W.T, fit_intercept), rank, ok

    def intercept_for(self, coef, fit_intercept):
        """The unpenalized intercept: mean(y) - <w, mean(x)> (0 without an intercept)."""
        if not fit_intercept:
            return np.zeros(coef.shape[0])
        return self.y_mean - coef @ self.x_mean


def cholesky_solve(A, B):
    """Solve A W = B by Cholesky; (W, rank, ok) with ok False when A is not positive definite
    or its reciprocal condition number is below RCOND_LIMIT."""
    d = A.shape[0]
    try:
        factor = linalg.cho_factor(A, lower=True, check_finite=False)
    except linalg.LinAlgError:
        return None, None, False
    anorm = np.abs(A).sum(axis=0).max()
    rcond, info = linalg.lapack.dpocon(factor[0], anorm, uplo="L")
    if info != 0 or not rcond >= RCOND_LIMIT:
        return None, None, False
    return linalg.cho_solve(factor, B, check_finite=False), d, True


def min_norm_solve(A, B):
    """Minimum-norm solution of the symmetric positive semi-definite system A W = B: the
    pseudo-inverse through eigh, dropping eigenvalues at the level of A's rounding noise."""
    evals, V = linalg.eigh(A, check_finite=False)
    top = max(float(evals[-1]), 0.0)
    keep = evals > top * A.shape[0] * np.finfo(np.float64).eps * 16
    Vk = V[:, keep]
    return Vk @ ((Vk.T @ B) / evals[keep][:, None]), int(keep.sum())


def _gram(X, Y, sw, x_shift, y_shift, G, block_rows, n_jobs):
    """Run the Gram kernel on `check_n_jobs(n_jobs)` threads of fastml's own (None = 1).

    One thread leaves the threading to BLAS: dsyrk runs under the process's own BLAS setting.
    Several threads split the rows, each with its own buffer and Gram matrix, and BLAS is
    limited to one thread inside them for this call only (`fastml._threads.blas_limit`, restored
    on exit): the output (p x p, p ~ 100) is too small for BLAS to share well, and splitting the
    rows is ~1.7x faster on 2 cores than OpenBLAS's threaded dsyrk."""
    n_blocks = -(-X.shape[0] // block_rows)
    threads = max(1, min(check_n_jobs(n_jobs), n_blocks))
    if threads == 1:
        return _linreg.gram_accumulate(X, Y, sw, x_shift, y_shift, G, block_rows, 1)
    with blas_limit(1):
        return _linreg.gram_accumulate(X, Y, sw, x_shift, y_shift, G, block_rows, threads)


def lstsq_solve(X, Y, sw, alpha, fit_intercept):
    """Least squares on the data itself (SVD, LAPACK gelsd: the minimum-norm solution):
    rows scaled by sqrt(w), centered for the intercept, ridge as sqrt(lambda W) I extra rows.
    Returns (coef (K, d), intercept (K,), rank)."""
    Xd = np.array(X, dtype=np.float64)
    Y = np.array(Y, dtype=np.float64).reshape(X.shape[0], -1)
    W = float(sw.sum())
    x_mean = np.average(Xd, axis=0, weights=sw) if fit_intercept else np.zeros(X.shape[1])
    y_mean = np.average(Y, axis=0, weights=sw) if fit_intercept else np.zeros(Y.shape[1])
    root = np.sqrt(sw)[:, None]
    Xd -= x_mean
    Xd *= root
    Yc = (Y - y_mean) * root
    if alpha > 0:
        d = X.shape[1]
        Xd = np.vstack([Xd, np.sqrt(alpha * W) * np.eye(d)])
        Yc = np.vstack([Yc, np.zeros((d, Y.shape[1]))])
    # numpy's cutoff: singular values below eps * max(n, d) * s_max are rounding noise
    cutoff = np.finfo(np.float64).eps * max(Xd.shape)
    coef, _, rank, _ = linalg.lstsq(Xd, Yc, cond=cutoff, lapack_driver="gelsd",
                                    check_finite=False)
    coef = coef.T
    intercept = y_mean - coef @ x_mean if fit_intercept else np.zeros(Y.shape[1])
    return coef, intercept, int(rank)


# ---------------------------------------------------------------------------- estimators

def _multi_output_tags(tags):
    """scikit-learn's tags for a regressor that takes 2-D y (one model per target column)."""
    tags.target_tags.multi_output = True
    tags.target_tags.single_output = True
    return tags


class _LeastSquares(RegressorMixin, BaseEstimator):
    """What LinearRegression and Ridge share: the three solvers, partial_fit, predict.
    Subclasses give `_lambda()`, 001's lambda."""

    def __sklearn_tags__(self):
        return _multi_output_tags(super().__sklearn_tags__())

    def fit(self, X, y, sample_weight=None):
        """Fit the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        self._check_params()
        # "normal" finds NaN / inf in X from the statistics (LinearStats.from_data)
        X, y = check_X_y(X, y, multi_output=True, check_finite=self.solver != "normal",
                         estimator=self, reset=True)
        sw = check_sample_weight(sample_weight, X.shape[0])
        self._single_target = y.ndim == 1
        Y = y.reshape(X.shape[0], -1)
        self._engine = None
        if self.solver == "sgd":
            self._fit_sgd(X, Y, sw, self.max_iter, resume=False)
            return self
        if self.solver == "lstsq":
            coef, intercept, rank = lstsq_solve(X, Y, sw, self._lambda(), self.fit_intercept)
        else:
            stats = LinearStats.from_data(X, Y, None if sample_weight is None else sw,
                                          self.n_jobs)
            coef, intercept, rank, ok = stats.solve(self._lambda(), self.fit_intercept)
            if not ok:
                self._warn_ill_conditioned("solving by least squares (SVD) on the data instead")
                coef, intercept, rank = lstsq_solve(X, Y, sw, self._lambda(), self.fit_intercept)
            self.stats_ = stats
        self.rank_ = rank
        self.n_iter_ = 1  # one pass over the data
        self._set_solution(coef, intercept, X.dtype)
        return self

    @available_if(lambda self: self.solver in ("normal", "sgd"),
                  "needs solver='normal' (exact, merges statistics) or 'sgd' (one epoch)")
    def partial_fit(self, X, y, sample_weight=None):
        """Learn from one more chunk of rows.

        solver="normal": the chunk's statistics are merged into `stats_` and the model
        re-solved, so after any sequence of chunks the model equals `fit` on all of them.
        solver="sgd": one SGD epoch over the chunk, continuing from the current weights
        (online learning).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        self._check_params()
        first = not hasattr(self, "coef_")
        # "normal" finds NaN / inf in X from the statistics (LinearStats.from_data)
        X, y = check_X_y(X, y, multi_output=True, check_finite=self.solver != "normal",
                         estimator=self, reset=first)
        sw = check_sample_weight(sample_weight, X.shape[0])
        Y = y.reshape(X.shape[0], -1)
        if first:
            self._single_target = y.ndim == 1
            self._engine = None
        elif Y.shape[1] != self._n_targets():
            raise ValueError(f"y has {Y.shape[1]} target(s); this model was fitted with "
                             f"{self._n_targets()}")
        if self.solver == "sgd":
            resume = not first and getattr(self, "_engine", None) is not None
            self._fit_sgd(X, Y, sw, 1, resume=resume)
            return self
        stats = LinearStats.from_data(X, Y, None if sample_weight is None else sw, self.n_jobs)
        self.stats_ = stats if first else self.stats_.merge(stats)
        self.fit_stats(self.stats_, reset=False)
        return self

    def fit_stats(self, stats, reset=True):
        """Fit from `LinearStats` (e.g. merged over chunks on workers) without the data.

        An ill-conditioned system gets the minimum-norm solution and a warning.

        Parameters
        ----------
        stats : LinearStats
        reset : bool, default True
            Take the numbers of features and targets from `stats`.

        Returns
        -------
        self
        """
        self._check_params()
        if self.solver != "normal":
            raise ValueError(f"fit_stats needs solver='normal'; got solver={self.solver!r}")
        if reset:
            self.n_features_in_ = stats.Sxx.shape[0]
            self._single_target = stats.Sxy.shape[1] == 1
        coef, intercept, rank, ok = stats.solve(self._lambda(), self.fit_intercept)
        if not ok:
            self._warn_ill_conditioned("returning the minimum-norm solution")
        self.stats_ = stats
        self.rank_ = rank
        self.n_iter_ = 1
        dtype = getattr(self, "coef_", np.empty(0)).dtype if not reset else np.float64
        self._set_solution(coef, intercept, dtype)
        return self

    def _warn_ill_conditioned(self, action):
        warnings.warn(
            f"{type(self).__name__}: X^T X is singular or ill-conditioned (collinear or "
            f"constant features; reciprocal condition number below {RCOND_LIMIT:g}); "
            f"{action}", LinAlgWarning, stacklevel=3)

    def _n_targets(self):
        return 1 if np.ndim(self.coef_) == 1 else self.coef_.shape[0]

    def _set_solution(self, coef, intercept, dtype):
        coef = np.asarray(coef, dtype=dtype)
        intercept = np.asarray(intercept, dtype=dtype)
        if self._single_target:
            self.coef_, self.intercept_ = coef[0].copy(), intercept.dtype.type(intercept[0])
        else:
            self.coef_, self.intercept_ = coef, intercept

    # ---- the shared SGD loop

    def _fit_sgd(self, X, Y, sw, epochs, resume):
        if not resume:
            self._rng = check_random_state(self.random_state)
            self._engine = SGDEngine(
                Y.shape[1], X.shape[1], X.dtype, loss="squared",
                learning_rate=self.learning_rate,
                eta0=self.eta0, decay=self.decay,
                # the loop minimizes mean (m - y)^2 / 2 + alpha/2 ||w||^2: half of 001's
                # objective when alpha = lambda, so the same minimizer
                alpha=self._lambda(), batch_size=self.batch_size,
                fit_intercept=self.fit_intercept, average=self.average)
            self._epochs_done = 0
        n_iter, curve = run_epochs(
            self._engine, X, Y, sw, max_iter=epochs, tol=self.tol if epochs > 1 else None,
            n_iter_no_change=self.n_iter_no_change, shuffle=self.shuffle, rng=self._rng,
            verbose=self.verbose, name=type(self).__name__, first_epoch=self._epochs_done)
        self._epochs_done += n_iter
        self.n_iter_ = self._epochs_done
        self.loss_curve_ = (getattr(self, "loss_curve_", []) if resume else []) + curve
        self._set_solution(self._engine.coef(), self._engine.intercept(), X.dtype)

    def _check_params(self):
        check_param("solver", self.solver, choices=SOLVERS)
        check_param("fit_intercept", self.fit_intercept, choices=(True, False))
        check_n_jobs(self.n_jobs)
        if self.solver == "sgd":
            check_param("max_iter", self.max_iter, low=1, integer=True)
            check_param("tol", self.tol, low=0.0, allow_none=True)
            check_param("learning_rate", self.learning_rate, choices=SCHEDULES)
            check_param("eta0", self.eta0, low=0.0, low_inclusive=False)
            check_param("decay", self.decay, low=0.0)
            check_param("batch_size", self.batch_size, low=1, integer=True)
            check_param("n_iter_no_change", self.n_iter_no_change, low=1, integer=True)

    # ---- prediction

    def _check_fitted_state(self):
        """Run by fastml.io.load: coef_ (n_features_in_,) with a scalar intercept_, or
        (n_targets, n_features_in_) with intercept_ (n_targets,); an SGD state that agrees."""
        if not hasattr(self, "coef_"):
            return
        from ._base import check_float_array, check_sgd_engine
        n_features = state_count(self, "n_features_in_", low=1)
        single = np.ndim(self.coef_) == 1
        coef = check_float_array(self, "coef_", (n_features,) if single else (None, n_features))
        n_targets = 1 if single else len(coef)
        if single and not isinstance(self.intercept_, (float, np.floating)):
            raise ValueError("intercept_ is not a float")
        if not single:
            check_float_array(self, "intercept_", (n_targets,))
        if getattr(self, "_engine", None) is not None:
            check_sgd_engine(self._engine, n_targets, n_features)

    def predict(self, X):
        """X @ coef_.T + intercept_.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,) for a 1-D y at fit, else (n_samples, n_targets)
        """
        self._check_is_fitted("coef_")
        X = check_array(X, estimator=self, reset=False)
        return X @ self.coef_.T + self.intercept_


_SOLVER_DOC = """
    fit_intercept : bool, default True
        Fit an unpenalized intercept (centering by the weighted means), as in scikit-learn.
    solver : "normal" (default), "lstsq" or "sgd"
        Which algorithm fits (scikit-learn's Ridge has a `solver` too, with other values).
        "normal": 004's normal equation. One pass over X forms X^T X and X^T y with BLAS
        (symmetric rank-k updates, threads over row blocks), Cholesky solves; when X^T X is
        singular or ill-conditioned (collinear features) a LinAlgWarning says so and the
        problem is solved by "lstsq" instead (never NaN or inf). "lstsq": SVD of the centered
        X (LAPACK gelsd): the minimum-norm least-squares solution, slower, for ill-conditioned
        data. "sgd": the shared SGD loop on the squared loss (001), with partial_fit.
    max_iter : int, default 1000
        SGD epochs at most ("sgd" only), as in scikit-learn's SGDRegressor.
    tol : float or None, default 1e-4
        SGD stops when the epoch's mean loss has not improved by tol for n_iter_no_change
        epochs; None runs max_iter epochs (scikit-learn's SGDRegressor rule).
    learning_rate : "constant" (default), "inverse", "decay", "optimal" or "adagrad"
        SGD step sizes (see LogisticRegression): eta0; eta0 / t; eta0 / (1 + decay * epoch)
        (001); 1 / (alpha (t0 + t)) (needs alpha > 0); AdaGrad. A constant step with
        averaging (Polyak-Ruppert) converges to the least-squares solution (Bach & Moulines
        2013) where a constant step alone keeps bouncing; eta0 must stay below about
        1 / mean ||x||^2 (standardize the features). The names that scikit-learn's
        SGDRegressor also has ("constant", "optimal") mean the same there.
    eta0 : float, default 0.01
        The initial SGD step, as in SGDRegressor.
    decay : float, default 1.0
        001's step decay for learning_rate="decay". No scikit-learn counterpart.
    batch_size : int, default 1
        Rows per SGD step. No scikit-learn counterpart.
    average : bool or int, default True
        Report the average of the SGD iterates; an int starts averaging after that many
        steps (n_samples: after the first epoch, which drops the start-up transient), as in
        SGDRegressor.
    shuffle : bool, default True
        Shuffle the rows every SGD epoch, as in SGDRegressor.
    n_iter_no_change : int, default 5
        See tol, as in SGDRegressor.
    random_state : int, Generator or None, default None
        The SGD row order.
    verbose : int, default 0
        Progress of the SGD epochs (fastml/_progress.py).
    n_jobs : int or None, default None
        fastml's threads forming X^T X ("normal"), as `fastml._validation.check_n_jobs`
        counts them: None = 1 (BLAS then threads dsyrk under its own setting), -1 = every
        core. With more than one, BLAS runs single-threaded inside them for the call only.
        (scikit-learn's LinearRegression uses n_jobs for its multi-target solves.)

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_targets, n_features)
        The weights, in X's dtype (float32 stays float32; statistics are accumulated in
        float64).
    intercept_ : float or ndarray of shape (n_targets,)
        The intercept (0 without fit_intercept).
    rank_ : int
        The rank of the (centered) X ("normal" / "lstsq").
    stats_ : LinearStats
        The statistics of the data ("normal"); partial_fit merges into them.
    n_iter_ : int
        SGD epochs; 1 for the closed forms (one pass over the data).
    loss_curve_ : list of float
        The mean loss of each SGD epoch ("sgd").
    n_features_in_ : int
        The number of features seen by fit.
    feature_names_in_ : ndarray of str
        The column names of a DataFrame given to fit.
"""


class LinearRegression(_LeastSquares):
    __doc__ = """Ordinary least squares: min_w sum_i w_i (y_i - <w, x_i> - b)^2 (004).

    Parameters
    ----------""" + _SOLVER_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastml import LinearRegression
    >>> X = np.array([[0.0], [1.0], [2.0]])
    >>> model = LinearRegression().fit(X, [1.0, 3.0, 5.0])
    >>> round(float(model.intercept_), 6), model.coef_.round(6).tolist()
    (1.0, [2.0])
    >>> model.predict([[3.0]]).round(6).tolist()
    [7.0]
    """

    def __init__(self, fit_intercept=True, solver="normal", max_iter=1000, tol=1e-4,
                 learning_rate="constant", eta0=0.01, decay=1.0, batch_size=1, average=True,
                 shuffle=True, n_iter_no_change=5, random_state=None, verbose=0, n_jobs=None):
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.decay = decay
        self.batch_size = batch_size
        self.average = average
        self.shuffle = shuffle
        self.n_iter_no_change = n_iter_no_change
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs

    def _lambda(self):
        return 0.0


class Ridge(_LeastSquares):
    __doc__ = """Ridge regression exactly as lecture 001 writes it:

        min_w  (1/n) sum_i (y_i - <w, x_i> - b)^2 + lambda ||w||^2,   lambda = alpha

    (with sample weights, (1/sum w) sum_i w_i (...)^2). The intercept b is not penalized.
    Normal equations: (Xc^T Xc + n alpha I) w = Xc^T yc on the centered data.

    How alpha maps to other conventions: scikit-learn's Ridge minimizes
    ||y - Xw - b||^2 + alpha_sk ||w||^2, so alpha_sk = n_samples * alpha (sum of the sample
    weights when weighted); scikit-learn's SGDRegressor(penalty="l2") and this library's SGD
    loop use alpha/2 ||w||^2 on the half squared loss, i.e. their alpha = alpha here.

    Parameters
    ----------
    alpha : float, default 0.01
        001's lambda (>= 0; 0 is ordinary least squares).""" + _SOLVER_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastml import Ridge
    >>> X = np.array([[0.0], [1.0], [2.0]])
    >>> Ridge(alpha=0.0).fit(X, [1.0, 3.0, 5.0]).coef_.round(6).tolist()
    [2.0]
    """

    def __init__(self, alpha=0.01, fit_intercept=True, solver="normal", max_iter=1000, tol=1e-4,
                 learning_rate="constant", eta0=0.01, decay=1.0, batch_size=1, average=True,
                 shuffle=True, n_iter_no_change=5, random_state=None, verbose=0, n_jobs=None):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.decay = decay
        self.batch_size = batch_size
        self.average = average
        self.shuffle = shuffle
        self.n_iter_no_change = n_iter_no_change
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs

    def _check_params(self):
        check_param("alpha", self.alpha, low=0.0)
        super()._check_params()

    def _lambda(self):
        return float(self.alpha)


class PolynomialRegression(RegressorMixin, BaseEstimator):
    """Polynomial regression (001): y(x, w) = w0 + w1 x + w2 x^2 + ... + w_M x^M.

    A linear model on the powers of x (on every monomial of total degree <= M with several
    features), fitted by least squares, or by ridge with alpha > 0: scikit-learn's
    ``make_pipeline(PolynomialFeatures(degree, include_bias=False), Ridge(alpha))``.
    scikit-learn has no single class for it.

    Parameters
    ----------
    degree : int, default 2
        M, as PolynomialFeatures' degree.
    alpha : float, default 0.0
        The ridge penalty, as Ridge's alpha (0: least squares).
    interaction_only : bool, default False
        As PolynomialFeatures' interaction_only.
    fit_intercept : bool, default True
        w0, unpenalized.
    solver : "normal" (default), "lstsq" or "sgd"
        As in Ridge. High degrees on an unscaled x make X^T X ill-conditioned: "normal" then
        warns and solves by SVD; scaling x to [-1, 1] first avoids that.
    n_jobs : int or None, default None
        Threads of the feature expansion and of X^T X (None = 1, -1 = every core).

    Attributes
    ----------
    intercept_ : float or ndarray of shape (n_targets,)
        w0.
    coef_ : ndarray of shape (n_terms,) or (n_targets, n_terms)
        w1..w_M for one feature; in general one weight per column of
        PolynomialFeatures(degree, include_bias=False), in its order.
    powers_ : ndarray of shape (n_terms, n_features_in_)
        The exponents of each column.
    rank_ : int
        The rank of the expanded, centered X ("normal" / "lstsq").
    features_ : PolynomialFeatures
        The fitted expansion.
    model_ : Ridge
        The fitted linear model on the expansion.
    n_features_in_ : int
        The number of features seen by fit.

    Examples
    --------
    >>> import numpy as np
    >>> from fastml import PolynomialRegression
    >>> x = np.linspace(-1, 1, 9).reshape(-1, 1)
    >>> model = PolynomialRegression(degree=2).fit(x, 1 + 2 * x[:, 0] - 3 * x[:, 0] ** 2)
    >>> round(float(model.intercept_), 6), model.coef_.round(6).tolist()
    (1.0, [2.0, -3.0])
    """

    def __init__(self, degree=2, alpha=0.0, interaction_only=False, fit_intercept=True,
                 solver="normal", n_jobs=None):
        self.degree = degree
        self.alpha = alpha
        self.interaction_only = interaction_only
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        return _multi_output_tags(super().__sklearn_tags__())

    def fit(self, X, y, sample_weight=None):
        """Expand X into its monomials and fit the linear model on them.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        check_param("degree", self.degree, low=1, integer=True)
        X, y = check_X_y(X, y, multi_output=True,
                         estimator=self, reset=True)
        self.features_ = PolynomialFeatures(self.degree, interaction_only=self.interaction_only,
                                            include_bias=False, n_jobs=self.n_jobs).fit(X)
        self.model_ = Ridge(alpha=self.alpha, fit_intercept=self.fit_intercept,
                            solver=self.solver, n_jobs=self.n_jobs)
        self.model_.fit(self.features_.transform(X), y, sample_weight)
        self.coef_, self.intercept_ = self.model_.coef_, self.model_.intercept_
        self.powers_ = self.features_.powers_
        if hasattr(self.model_, "rank_"):
            self.rank_ = self.model_.rank_
        return self

    def predict(self, X):
        """y(x, w) for each row of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,) or (n_samples, n_targets)
        """
        self._check_is_fitted("model_")
        X = check_array(X, estimator=self, reset=False)
        return self.model_.predict(self.features_.transform(X))
