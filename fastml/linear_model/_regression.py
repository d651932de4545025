"""Least squares, ridge and polynomial regression (lectures 001 and 004).

004's normal equation w = (X^T X)^-1 X^T y and ridge regression are solved from the sufficient
statistics of the data (n, the means, X^T X, X^T y), which one pass over X collects with BLAS
(fastml/linear_model/_regression_fast.pyx). Those statistics are a reduction: `LinearStats`
holds them for one chunk of rows and `merge` combines chunks exactly (Chan's formula on centered
moments), so a fit can stream over chunks or run on workers and be merged (`partial_fit` with
solver="normal" does this).

Accuracy (checked against NIST's StRD in tests/test_nist.py): every rank or conditioning
decision is made on scaled columns; well-conditioned normal equations are solved by Cholesky of
the matrix equilibrated by its diagonal, and ill-conditioned ones from the QR factor of the
data, which the statistics then carry (and merge). solver="lstsq" always solves from that
factor (QR, then SVD of the triangular factor: the minimum-norm solution); solver="sgd" runs
the library's one SGD loop (fastml/linear_model/_sgd_fast.pyx) on the squared loss.
"""
from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Optional, Union

import numpy as np
from scipy import linalg
from scipy.linalg import LinAlgWarning

from .._base import BaseEstimator, RegressorMixin, all_or_nothing, available_if
from ..exceptions import ConvergenceWarning, NotScalable
from .._plans import Statistics
from .._threads import blas_limit
from . import _regression_fast as _linreg
from .._validation import (_check_finite, check_array, check_n_jobs, check_param,
                           check_random_state, check_regression_targets, check_sample_weight,
                           check_X_y, state_count)
from ._base import forget_fit, fresh_fit
from ._polynomial import PolynomialFeatures, n_output_features
from ._regression_fast import count_nonfinite
from ._sgd import SCHEDULES, SGDEngine, pass_totals, run_epochs, sgd_plan

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from .._typing import ArrayLike, EstimatorT, MatrixLike, NDArray, RandomStateLike, VectorLike

SOLVERS = ("normal", "lstsq", "lsqr", "sgd")
# The widest polynomial expansion PolynomialRegression fits: least squares on p columns forms a
# p x p matrix of doubles (X^T X; 7.2 GB at 30,000), checked before expanding anything.
MAX_POLYNOMIAL_TERMS = 30_000

# Every rank or conditioning decision is made on the column-scaled problem: each column of the
# centered X divided by its norm (A = X^T X equilibrated by its diagonal). Unscaled, columns of
# very different sizes (x and x^10 in a polynomial fit) look collinear when they are not.
#
# The normal equations lose about log10(1 / rcond) of float64's 16 digits, rcond being the
# reciprocal condition number of the scaled A (LAPACK's estimate from its Cholesky factor).
# Above NORMAL_RCOND they keep about 9 digits and Cholesky answers; below it the problem is
# solved from the QR factor of the data, which loses only about half as many (cond(X) is
# sqrt(cond(A))).
NORMAL_RCOND = 1e-6
# Rows per block of the blocked QR of the data (TSQR): memory stays at one block of rows, and the
# triangular factor stacked on each block (p rows) is a small overhead on a block this long.
QR_BLOCK_ROWS = 4096
EPS = np.finfo(np.float64).eps

# Sparse X: its normal equations are formed (X^T X, d x d, from the stored entries) when d is
# at most SPARSE_GRAM_FEATURES (X^T X <= 8 MB) or X^T X takes no more memory than X itself;
# wider sparse X is solved by LSQR (sparse_gram_fits, _lsqr_solve), never densified.
SPARSE_GRAM_FEATURES = 1024
# partial_fit(solver="normal") merges X^T X whatever X: refused beyond 2 GB of it.
MAX_GRAM_FEATURES = 16_384
# LSQR's stopping tolerances (scipy's atol and btol): on a well-conditioned problem the
# solution then agrees with the normal equations' to about 10 digits.
LSQR_TOL = 1e-12
# Sparse X with a larger fraction of its cells stored has its statistics taken by the dense
# kernel (_sparse_product_pays), densified DENSE_BLOCK_VALUES at a time (32 MB of float64).
SPARSE_DENSITY = 1 / 16
DENSE_BLOCK_VALUES = 1 << 22


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
    factor : ndarray of shape (n_features + n_targets,) * 2, optional
        The upper-triangular R of the QR factorization of the centered, weighted rows
        sqrt(w_i) [x_i - x_mean, y_i - y_mean], so R^T R = [[Sxx, Sxy], [Sxy^T, Syy]].
        `from_data` computes it (from the rows, by Householder QR) when the normal equations
        of the data are ill-conditioned; the solution then loses about half as many digits.

    Attributes
    ----------
    weight, n_samples, x_mean, y_mean, Sxx, Sxy, Syy, factor
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

    def __init__(self, weight, n_samples, x_mean, y_mean, Sxx, Sxy, Syy, factor=None):
        self.weight = float(weight)
        self.n_samples = int(n_samples)
        self.x_mean, self.y_mean = np.asarray(x_mean), np.asarray(y_mean)
        self.Sxx, self.Sxy, self.Syy = np.asarray(Sxx), np.asarray(Sxy), np.asarray(Syy)
        self.factor = None if factor is None else np.asarray(factor)

    @classmethod
    def from_data(cls, X, Y, sample_weight=None, n_jobs=None, factor=None, fit_intercept=None):
        """Statistics of the rows of X with targets Y, in one pass.

        Parameters
        ----------
        X : ndarray or CSR matrix of shape (n_samples, n_features)
            C- or F-contiguous float32 or float64, or a checked CSR matrix (the estimators
            validate first; CSR X is never densified, see _sparse_stats).
        Y : ndarray of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : ndarray of shape (n_samples,), optional
        n_jobs : int or None
            fastml threads (`check_n_jobs`: None = 1).
        factor : bool or None, default None
            Also compute the QR factor of the rows: None = when the scaled normal equations
            would lose more than about 7 digits (see NORMAL_RCOND), True = always.
        fit_intercept : bool or None, default None
            Which normal equations that decision looks at: the centered ones (True), the
            uncentered ones (False), or both (None: the statistics may serve either). Large
            feature means make only the uncentered ones ill-conditioned.

        Returns
        -------
        stats : LinearStats

        Dense X: the shift (the mean of the first rows) keeps the centering accurate when the
        features have large means.
        """
        Y = np.ascontiguousarray(Y, dtype=np.float64).reshape(X.shape[0], -1)
        if sample_weight is not None:
            sample_weight = np.ascontiguousarray(sample_weight, dtype=np.float64)
        if hasattr(X, "indptr") and _sparse_product_pays(X, sample_weight):
            stats = _sparse_stats(cls, X, Y, sample_weight)
        else:
            stats = _dense_stats(cls, X, Y, sample_weight, n_jobs)
        if factor or (factor is None and not stats._normal_equations_accurate(fit_intercept)):
            stats.factor = _qr_factor(X, Y, sample_weight, stats.x_mean, stats.y_mean)
        return stats

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
        from .._core._moments import merge_factors  # Chan's merge, one copy for all callers
        W, frac_b, f = merge_factors(self.weight, other.weight)
        dx, dy = other.x_mean - self.x_mean, other.y_mean - self.y_mean
        merged = LinearStats(W, self.n_samples + other.n_samples,
                             self.x_mean + dx * frac_b, self.y_mean + dy * frac_b,
                             self.Sxx + other.Sxx + f * np.outer(dx, dx),
                             self.Sxy + other.Sxy + f * np.outer(dx, dy),
                             self.Syy + other.Syy + f * np.outer(dy, dy))
        # The QR factors too when either side carries one: stacked with Chan's correction row
        # and triangularized again.
        merged.factor = _merged_factor(self, other, f)
        return merged

    __add__ = merge

    def normal_equations(self, alpha=0.0, fit_intercept=True):
        """The ridge normal equations A W = B.

        A = Sxx + alpha I and B = Sxy (centered, when fitting an intercept; the uncentered
        X^T X and X^T y otherwise).

        Parameters
        ----------
        alpha : float, default 0.0
            scikit-learn Ridge's: the penalty alpha ||w||^2 on the (weighted) sum of squared
            residuals.
        fit_intercept : bool, default True

        Returns
        -------
        A : ndarray of shape (n_features, n_features)
        B : ndarray of shape (n_features, n_targets)
        """
        if fit_intercept:
            A, B = self.Sxx.copy(), self.Sxy.copy()
        else:
            A = self.Sxx + self.weight * np.outer(self.x_mean, self.x_mean)
            B = self.Sxy + self.weight * np.outer(self.x_mean, self.y_mean)
        A[np.diag_indices_from(A)] += alpha
        return A, B

    def solve(self, alpha=0.0, fit_intercept=True, use_factor=False):
        """Solve the ridge problem (alpha as in `normal_equations`).

        In order: Cholesky of the column-scaled normal equations when they keep about 9 digits
        (NORMAL_RCOND); else the QR factor, when the statistics carry one (the minimum-norm
        solution, with the rank decided on the scaled columns); else the minimum-norm solution
        of the scaled normal equations by eigendecomposition (exact=False: digits may be
        lost, the caller warns).

        Parameters
        ----------
        alpha : float, default 0.0
        fit_intercept : bool, default True
        use_factor : bool, default False
            Solve from the QR factor (when there is one) even if Cholesky would do.

        Returns
        -------
        coef : ndarray of shape (n_targets, n_features)
        intercept : ndarray of shape (n_targets,)
        rank : int
            The rank of the scaled (centered) X that the solution used.
        exact : bool
            False when the answer came from ill-conditioned normal equations.
        """
        A, B = self.normal_equations(alpha, fit_intercept)
        W = None if use_factor and self.factor is not None else _scaled_cholesky(A, B)
        rank, exact = A.shape[0], True
        if W is None and self.factor is not None:
            W, rank = self._solve_factor(alpha, fit_intercept)
        elif W is None:
            W, rank = _min_norm_gram(A, B)
            exact = False
        return W.T, self.intercept_for(W.T, fit_intercept), rank, exact

    def _normal_equations_accurate(self, fit_intercept=None):
        """Whether Cholesky of the scaled normal equations keeps about 9 digits, with the
        intercept, without, or (None) both."""
        forms = (True, False) if fit_intercept is None else (fit_intercept,)
        return all(_scaled_cholesky_factor(self.normal_equations(0.0, fit)[0]) is not None
                   for fit in forms)

    def _solve_factor(self, alpha, fit_intercept):
        """(W (d, K), rank): least squares on the triangular factor, R11 W ~ R12, with
        sqrt(alpha) I below R11 for ridge; without an intercept the means' row sqrt(weight)
        [x_mean, y_mean] is put back first (the uncentered problem)."""
        d = self.Sxx.shape[0]
        R = self.factor
        if not fit_intercept:
            means = np.sqrt(self.weight) * np.r_[self.x_mean, self.y_mean]
            R = np.linalg.qr(np.vstack([R, means]), mode="r")
        M, B = R[:d, :d], R[:d, d:]
        if alpha > 0:
            M = np.vstack([M, np.sqrt(alpha) * np.eye(d)])
            B = np.vstack([B, np.zeros((d, B.shape[1]))])
        return _min_norm_lstsq(M, B, rtol=EPS * max(self.n_samples, d))

    def intercept_for(self, coef, fit_intercept):
        """The unpenalized intercept: mean(y) - <w, mean(x)> (0 without an intercept).

        Parameters
        ----------
        coef : ndarray of shape (n_targets, n_features)
        fit_intercept : bool

        Returns
        -------
        intercept : ndarray of shape (n_targets,)
        """
        if not fit_intercept:
            return np.zeros(coef.shape[0])
        return self.y_mean - coef @ self.x_mean


def _dense_stats(cls, X, Y, sw, n_jobs):
    """LinearStats from one pass of the Gram kernel over the rows [x - x_shift, 1,
    y - y_shift], the shift the mean of the first rows (it keeps the centering accurate when
    the features have large means). CSR X whose centering would lose digits
    (_centering_keeps_digits) comes here too, densified DENSE_BLOCK_VALUES at a time."""
    n, d = X.shape
    K = Y.shape[1]
    head = slice(0, min(n, 1024))
    # (numpy sums a column-major block in another order: the C copy of these few rows
    # gives a column-major X, as fit_stream builds, the same shift as a row-major one)
    x_shift = np.mean(_dense_rows(X, head), axis=0, dtype=np.float64)
    y_shift = np.mean(Y[head], axis=0)
    p = d + 1 + K
    q = _linreg.padded_size(p)
    G = np.zeros((q, q))
    block_rows = _linreg.block_rows_for(q)
    step = max(1, DENSE_BLOCK_VALUES // d) if hasattr(X, "indptr") else n
    for first in range(0, n, step):
        rows = slice(first, min(n, first + step))
        _gram(_dense_rows(X, rows), Y[rows], np.empty(0) if sw is None else sw[rows],
              x_shift, y_shift, G, block_rows, n_jobs)
    if not np.isfinite(G).all():
        # NaN / inf in X reach G: the estimators skip the separate finiteness pass over X
        # (10% of a fit) and let this one name the problem.
        check_array(X)
        _refuse_overflow(sw)
    W = G[d, d]
    mz, my = G[d, :d] / W, G[d, d + 1:p] / W
    return _centered(cls, W, n, x_shift + mz, y_shift + my, G[:d, :d], G[:d, d + 1:p],
                     G[d + 1:p, d + 1:p], mz, my)


def _dense_rows(X, rows):
    """Rows of X as a C- or F-contiguous array (CSR rows densified)."""
    return X[rows].toarray() if hasattr(X, "indptr") else np.ascontiguousarray(X[rows]) \
        if rows.start or rows.stop < len(X) else X


def _sparse_product_pays(X, sw):
    """Whether CSR X's statistics come from the sparse product (_sparse_stats) rather than the
    dense kernel on blocks of densified rows (_dense_stats): when X is sparse enough for the
    product to be the faster (fewer than SPARSE_DENSITY of its cells stored: a row of m
    stored values costs m^2 products there and d^2 / 2 multiply-adds in BLAS, about 50 times
    faster each) and its centering keeps its digits (_centering_keeps_digits)."""
    stored = X.nnz / max(1, X.shape[0] * X.shape[1])
    return stored < SPARSE_DENSITY and _centering_keeps_digits(X, sw)


def _centering_keeps_digits(X, sw):
    """Whether _sparse_stats's centering (W m m^T taken from X^T S X) loses at most about a
    bit: every column's squared weighted mean m^2 at most its variance, as for a column
    that is mostly zeros. Otherwise the sums are taken about a shift by the dense kernel,
    a block of densified rows at a time (the price: n x d operations, not nnz)."""
    w = np.ones(X.shape[0]) if sw is None else sw
    total = float(w.sum())
    mean = np.asarray(X.T @ w, dtype=np.float64).ravel() / total
    variance = _weighted_column_squares(X, w) / total - mean * mean
    return bool(np.all(mean * mean <= variance))


def _sparse_stats(cls, X, Y, sw):
    """LinearStats of CSR X without densifying it: X^T S X (d x d) by a sparse product, X^T S Y
    and the weighted means, S the sample weights. No shift: it would fill X in. Centering
    subtracts W m m^T from X^T S X, which loses about log2(1 + m^2 / var) bits of a column of
    mean m and variance var; a column that is mostly zeros (the reason to store it sparse)
    has m^2 / var = p / (1 - p) < 1 when a fraction p < 1/2 of it is nonzero, so at most a
    bit is lost, and X whose columns do worse goes to _dense_stats instead
    (_centering_keeps_digits). (Rows of the sparse data in the QR factor, when the normal
    equations are ill-conditioned, are densified a block at a time: _qr_factor.)"""
    n = X.shape[0]
    w = np.ones(n) if sw is None else sw
    SX = _row_scaled(X, w)
    W = float(w.sum())
    x_sum = np.asarray(SX.sum(axis=0)).ravel()
    y_mean = (w @ Y) / W
    Yc = Y - y_mean
    with np.errstate(over="ignore", invalid="ignore"):
        Gxx = np.asarray((X.T @ SX).toarray())
        Sxy = np.asarray(SX.T @ Yc)
        Syy = Yc.T @ (w[:, None] * Yc)
    if not (np.isfinite(Gxx).all() and np.isfinite(Sxy).all() and np.isfinite(Syy).all()):
        _refuse_overflow(sw)
    x_mean = x_sum / W
    return _centered(cls, W, n, x_mean, y_mean, Gxx, Sxy, Syy, x_mean, np.zeros_like(y_mean))


def _row_scaled(X, w):
    """The CSR matrix diag(w) X (a copy of X's values, same structure)."""
    import scipy.sparse as sp
    scaled = np.repeat(w, np.diff(X.indptr)) * X.data
    return sp.csr_matrix((scaled, X.indices, X.indptr), shape=X.shape)


def _refuse_overflow(sw):
    """The ValueError for statistics that overflowed on finite X."""
    with np.errstate(over="ignore"):
        weights_overflow = sw is not None and not np.isfinite(sw.sum() * 2.0 ** 64)
    if weights_overflow:
        raise ValueError("the sample weights are too large: their sum (times the squared "
                         "features) overflows float64; rescale them (least squares does not "
                         "change when all weights are scaled alike)")
    raise ValueError("X^T X overflowed: feature values are too large (about 1e154 or more); "
                     "rescale X")


def _centered(cls, W, n, x_mean, y_mean, Gxx, Gxy, Gyy, mz, my):
    """LinearStats from sums about a shift, Gxx = sum_i w_i (x_i - s)(x_i - s)^T and so on,
    with mz, my the weighted means of x - s and y - t: Chan's correction W mz mz^T taken out."""
    with np.errstate(over="ignore", invalid="ignore"):
        stats = cls(W, n, x_mean, y_mean, Gxx - W * np.outer(mz, mz),
                    Gxy - W * np.outer(mz, my), Gyy - W * np.outer(my, my))
    if not all(np.isfinite(a).all() for a in (stats.Sxx, stats.Sxy, stats.Syy)):
        # W (mz my^T) overflows when tiny weights meet huge means (1e-310 and 1e199):
        # the same product as (sqrt(W) mz)(sqrt(W) my)^T, whose factors stay in range
        r = np.sqrt(W)
        stats = cls(W, n, x_mean, y_mean, Gxx - np.outer(r * mz, r * mz),
                    Gxy - np.outer(r * mz, r * my), Gyy - np.outer(r * my, r * my))
        if not all(np.isfinite(a).all() for a in (stats.Sxx, stats.Sxy, stats.Syy)):
            raise ValueError("the centered sums of squares overflow float64: X or y "
                             "values are too large; rescale them")
    return stats


def sparse_gram_fits(X):
    """Whether fit forms the normal equations of CSR X (SPARSE_GRAM_FEATURES): d small, or
    X^T X (8 d^2 bytes) no larger than X's own arrays."""
    d = X.shape[1]
    size = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    return d <= SPARSE_GRAM_FEATURES or 8 * d * d <= size


def _lsqr_solve(X, Y, sw, alpha, fit_intercept, max_iter, name):
    """(coef (K, d), intercept (K,), iterations): ridge (alpha >= 0) on dense or CSR X by LSQR
    (Paige & Saunders; scipy's), one target column at a time, from matrix-vector products with
    X and X^T only: X is neither densified nor copied.

    The operator is the centered, weighted X, sqrt(w) (X - 1 m^T) with m the weighted means
    (m = 0 without an intercept), applied as X v - (m . v); the intercept is then
    mean(y) - coef . m, unpenalized as in the normal equations. alpha > 0: LSQR runs on the
    rows [sqrt(w) (X - 1 m^T); sqrt(alpha) I] with each column scaled to unit norm (the
    diagonal preconditioner: hashed or one-hot columns differ in norm by orders of magnitude,
    and the scaling halves the iterations on them), the unique ridge solution. alpha = 0:
    the columns unscaled, so that LSQR from 0 returns the minimum-norm least-squares solution,
    as the normal equations do. Stops at LSQR_TOL or after max_iter iterations (with a
    ConvergenceWarning)."""
    from scipy.sparse.linalg import LinearOperator, lsqr
    n, d = X.shape
    w = np.ones(n) if sw is None else sw
    root, total = np.sqrt(w), float(w.sum())
    if fit_intercept:
        x_mean = np.asarray(X.T @ w, dtype=np.float64).ravel() / total
        y_mean = (w @ Y) / total
    else:
        x_mean, y_mean = np.zeros(d), np.zeros(Y.shape[1])
    if alpha > 0:
        col_sq = np.maximum(_weighted_column_squares(X, w) - total * x_mean ** 2, 0.0)
        scale = 1.0 / np.sqrt(col_sq + alpha)
    else:
        scale = np.ones(d)
    damp = np.sqrt(alpha)
    rows = n + (d if alpha > 0 else 0)

    def matvec(z):
        v = scale * np.ravel(z)
        top = root * (np.asarray(X @ v).ravel() - x_mean @ v)
        return np.concatenate([top, damp * v]) if alpha > 0 else top

    def rmatvec(u):
        u = np.ravel(u)
        a = root * u[:n]
        g = np.asarray(X.T @ a).ravel() - x_mean * a.sum()
        if alpha > 0:
            g += damp * u[n:]
        return scale * g

    operator = LinearOperator((rows, d), matvec=matvec, rmatvec=rmatvec, dtype=np.float64)
    coef, most = np.zeros((Y.shape[1], d)), 0
    for k in range(Y.shape[1]):
        b = root * (Y[:, k] - y_mean[k])
        if alpha > 0:
            b = np.concatenate([b, np.zeros(d)])
        z, stop, iterations = lsqr(operator, b, atol=LSQR_TOL, btol=LSQR_TOL,
                                   iter_lim=max_iter)[:3]
        if stop == 7:
            warnings.warn(f"{name}(solver_='lsqr') reached max_iter={max_iter} iterations "
                          f"before LSQR's tolerance {LSQR_TOL}; raise max_iter",
                          ConvergenceWarning, stacklevel=4)
        coef[k] = scale * z
        most = max(most, int(iterations))
    return coef, y_mean - coef @ x_mean, most


def _weighted_column_squares(X, w):
    """sum_i w_i x_ij^2 for each column j (CSR: from the stored entries)."""
    if hasattr(X, "indptr"):
        weights = np.repeat(w, np.diff(X.indptr)) * np.square(X.data, dtype=np.float64)
        return np.bincount(X.indices, weights=weights, minlength=X.shape[1])
    return np.einsum("ij,ij,i->j", X, X, w, dtype=np.float64)


def _finite_solution(coef, intercept, dtype):
    """coef and intercept in `dtype`, or a ValueError when they overflowed: a solution
    beyond float64 (or float32, for float32 X) is refused, never stored as inf / NaN."""
    with np.errstate(over="ignore", invalid="ignore"):
        coef, intercept = np.asarray(coef, dtype=dtype), np.asarray(intercept, dtype=dtype)
    if not (np.isfinite(coef).all() and np.isfinite(intercept).all()):
        raise ValueError(f"the least-squares solution overflows {np.dtype(dtype).name}: "
                         f"the coefficients or the intercept are too large to represent; "
                         f"rescale X or y")
    return coef, intercept


def _column_scale(A):
    """sqrt(diag(A)): the column norms of the (centered) X; 1 for an all-zero column."""
    scale = np.sqrt(np.maximum(np.diag(A), 0.0))
    scale[scale == 0] = 1.0
    return scale


def _scaled_cholesky_factor(A):
    """(Cholesky factor of A / (D D^T), D) with D = _column_scale(A), or None when that matrix is
    not positive definite or its reciprocal condition number is below NORMAL_RCOND."""
    scale = _column_scale(A)
    As = A / np.outer(scale, scale)
    try:
        factor = linalg.cho_factor(As, lower=True, check_finite=False)
    except linalg.LinAlgError:
        return None
    rcond, info = linalg.lapack.dpocon(factor[0], np.abs(As).sum(axis=0).max(), uplo="L")
    if info != 0 or not rcond >= NORMAL_RCOND:
        return None
    return factor, scale


def _scaled_cholesky(A, B):
    """W with A W = B by the scaled Cholesky factor, or None (see _scaled_cholesky_factor)."""
    found = _scaled_cholesky_factor(A)
    if found is None:
        return None
    factor, scale = found
    return linalg.cho_solve(factor, B / scale[:, None], check_finite=False) / scale[:, None]


def _without_null_space(W, null_scaled, scale):
    """W minus its component in the null space: null_scaled holds the dropped directions of the
    scaled problem as columns, which are null_scaled / scale in W's coordinates. The result is
    the minimum-norm solution in the original coordinates, not merely in the scaled ones."""
    if null_scaled.shape[1] == 0:
        return W
    Q = np.linalg.qr(null_scaled / scale[:, None])[0]
    return W - Q @ (Q.T @ W)


def _min_norm_lstsq(M, B, rtol):
    """(W, rank): the minimum-norm least-squares solution of M W ~ B, by SVD of M with its
    columns scaled to unit norm; singular values below rtol times the largest count as zero."""
    scale = np.linalg.norm(M, axis=0)
    scale[scale == 0] = 1.0
    U, s, Vt = linalg.svd(M / scale, full_matrices=True, check_finite=False)
    keep = np.zeros(M.shape[1], dtype=bool)
    keep[:s.size] = s > rtol * s[0] if s.size and s[0] > 0 else False
    k = int(keep.sum())
    W = Vt[:k].T @ ((U[:, :k].T @ B) / s[:k, None])
    return _without_null_space(W / scale[:, None], Vt[k:].T, scale), k


def _min_norm_gram(A, B):
    """(W, rank): the minimum-norm solution of the symmetric positive semi-definite A W = B
    through eigh of A equilibrated by its diagonal, dropping eigenvalues at the level of its
    rounding noise. Only for statistics without a QR factor: about half the digits that the
    factor would give are lost."""
    scale = _column_scale(A)
    evals, V = linalg.eigh(A / np.outer(scale, scale), check_finite=False)
    keep = evals > max(float(evals[-1]), 0.0) * A.shape[0] * EPS * 16
    Vk = V[:, keep]
    W = (Vk @ ((Vk.T @ (B / scale[:, None])) / evals[keep][:, None])) / scale[:, None]
    return _without_null_space(W, V[:, ~keep], scale), int(keep.sum())


def _square(R, p):
    """R padded with zero rows to (p, p) (a QR of fewer rows than columns is shorter)."""
    return R if R.shape[0] == p else np.vstack([R, np.zeros((p - R.shape[0], p))])


def _qr_factor(X, Y, sample_weight, x_mean, y_mean):
    """The (p, p) upper-triangular R of the centered, weighted rows sqrt(w) [x - x_mean,
    y - y_mean] (p = n_features + n_targets), by Householder QR block by block (TSQR: each
    block is stacked under the factor so far and triangularized), in float64. Sparse X is
    densified one block of rows at a time."""
    n, d = X.shape
    p = d + Y.shape[1]
    R = np.zeros((0, p))
    for start in range(0, n, QR_BLOCK_ROWS):
        rows = slice(start, min(start + QR_BLOCK_ROWS, n))
        Z = np.empty((rows.stop - start, p))
        Z[:, :d] = X[rows].toarray() if hasattr(X, "indptr") else X[rows]
        Z[:, :d] -= x_mean
        Z[:, d:] = Y[rows] - y_mean
        if sample_weight is not None:
            Z *= np.sqrt(sample_weight[rows])[:, None]
        R = np.linalg.qr(np.vstack([R, Z]), mode="r")
    return _square(R, p)


def _gram_root(stats):
    """M with M^T M = [[Sxx, Sxy], [Sxy^T, Syy]] (by eigh), for merging statistics that carry
    no QR factor with ones that do."""
    S = np.block([[stats.Sxx, stats.Sxy], [stats.Sxy.T, stats.Syy]])
    evals, V = linalg.eigh(S, check_finite=False)
    return np.sqrt(np.maximum(evals, 0.0))[:, None] * V.T


def _merged_factor(a, b, chan_factor):
    """The QR factor of a's and b's rows together, None when neither carries one. Chan's
    correction term f d d^T (f = W_a W_b / W from merge_factors, d = mean_b - mean_a) is one
    more row sqrt(f) d under the two factors: it re-centers both parts on the common mean."""
    if a.factor is None and b.factor is None:
        return None
    shift = np.r_[b.x_mean - a.x_mean, b.y_mean - a.y_mean] * np.sqrt(chan_factor)
    parts = [x.factor if x.factor is not None else _gram_root(x) for x in (a, b)]
    R = np.linalg.qr(np.vstack(parts + [shift]), mode="r")
    return _square(R, R.shape[1])


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


# ---------------------------------------------------------------------------- estimators

def _multi_output_tags(tags):
    """scikit-learn's tags for a regressor that takes 2-D y (one model per target column)."""
    tags.target_tags.multi_output = True
    tags.target_tags.single_output = True
    return tags


class _LeastSquares(RegressorMixin, BaseEstimator):
    """What LinearRegression and Ridge share: the solvers, partial_fit, predict. Subclasses
    give `_alpha()`, scikit-learn Ridge's alpha (0 for least squares)."""

    _accepts_sparse = True

    def __sklearn_tags__(self):
        return _multi_output_tags(super().__sklearn_tags__())

    @fresh_fit  # from nothing; a fit that fails leaves it unfitted, not half-built
    def fit(self: EstimatorT, X: MatrixLike, y: VectorLike,
            sample_weight: Optional[ArrayLike] = None) -> EstimatorT:
        """Fit the model, from nothing: no state of an earlier fit or partial_fit (the
        statistics of solver="normal", the SGD state) is kept, whatever solver made it.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        self._check_params()
        # "normal" finds NaN / inf in X from the statistics (LinearStats.from_data)
        X, y = check_X_y(X, y, accept_sparse=True, multi_output=True,
                         check_finite=self.solver != "normal", estimator=self, reset=True)
        sw = check_sample_weight(sample_weight, X.shape[0])
        self._single_target = y.ndim == 1
        Y = y.reshape(X.shape[0], -1)
        self.solver_ = self._solver_for(X)
        if self.solver_ == "sgd":
            self._fit_sgd(X, Y, sw, self.max_iter, resume=False)
            return self
        if self.solver_ == "lsqr":
            coef, intercept, self.n_iter_ = _lsqr_solve(
                X, Y, None if sample_weight is None else sw, self._alpha(), self.fit_intercept,
                self.max_iter, type(self).__name__)
            self._set_solution(coef, intercept, X.dtype)
            return self
        # "lstsq" always solves from the QR factor of the data; "normal" only when the scaled
        # normal equations are ill-conditioned (from_data computes the factor then).
        lstsq = self.solver_ == "lstsq"
        stats = LinearStats.from_data(X, Y, None if sample_weight is None else sw, self.n_jobs,
                                      factor=True if lstsq else None,
                                      fit_intercept=self.fit_intercept)
        coef, intercept, rank, exact = stats.solve(self._penalty(stats), self.fit_intercept,
                                                   use_factor=lstsq)
        if not lstsq:
            self._warn_if_degenerate(rank, exact)
            self.stats_ = stats
        self.rank_ = rank
        self.n_iter_ = 1  # one pass over the data
        self._set_solution(coef, intercept, X.dtype)
        return self

    def _solver_for(self, X):
        """The solver a fit on X runs (`solver_`): the `solver` parameter, except that CSR X
        too wide for its normal equations (sparse_gram_fits) is solved by "lsqr" under
        solver="normal", and refused by "lstsq" (whose QR factor has X's width squared)."""
        if not hasattr(X, "indptr") or self.solver in ("sgd", "lsqr") or sparse_gram_fits(X):
            return self.solver
        if self.solver == "lstsq":
            raise ValueError(f"solver='lstsq' on sparse X of {X.shape[1]} columns would hold a "
                             f"{X.shape[1]} x {X.shape[1]} QR factor; use solver='normal' (it "
                             f"runs LSQR on wide sparse X) or 'lsqr'")
        return "lsqr"

    @available_if(lambda self: self.solver in ("normal", "sgd"),
                  "needs solver='normal' (exact, merges statistics) or 'sgd' (one epoch)")
    @all_or_nothing(fitting=False)   # a refused chunk leaves the model as it was
    def partial_fit(self: EstimatorT, X: MatrixLike, y: VectorLike,
                    sample_weight: Optional[ArrayLike] = None) -> EstimatorT:
        """Learn from one more chunk of rows.

        solver="normal": the chunk's statistics are merged into `stats_` and the model
        re-solved, so after any sequence of chunks the model equals `fit` on all of them.
        solver="sgd": one SGD epoch over the chunk, continuing from the current weights
        (online learning), toward that same model: Ridge's penalty is on the sum over every
        row given so far (see Ridge), and the sample weights count relative to their mean
        over those rows.

        A call continues only from the state of its own solver (the statistics `stats_` of
        "normal", the SGD state of "sgd"). With none (the first call, or a model that `fit`
        made with another solver) it starts from nothing, as `fit` does.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        self._check_params()
        first = (not hasattr(self, "stats_") if self.solver == "normal"
                 else getattr(self, "_engine", None) is None)
        if first:           # an earlier model of another solver (or none): start over
            forget_fit(self)
        # "normal" finds NaN / inf in X from the statistics (LinearStats.from_data)
        X, y = check_X_y(X, y, accept_sparse=True, multi_output=True,
                         check_finite=self.solver != "normal", estimator=self, reset=first)
        sw = check_sample_weight(sample_weight, X.shape[0])
        Y = y.reshape(X.shape[0], -1)
        if self.solver == "normal" and X.shape[1] > MAX_GRAM_FEATURES:
            raise ValueError(f"partial_fit(solver='normal') merges X^T X, {X.shape[1]} x "
                             f"{X.shape[1]} here ({8 * X.shape[1] ** 2 / 1e9:.3g} GB): for "
                             f"this many features use fit (LSQR on sparse X) or solver='sgd'")
        if first:
            self._single_target = y.ndim == 1
        elif Y.shape[1] != self._n_targets():
            raise ValueError(f"y has {Y.shape[1]} target(s); this model was fitted with "
                             f"{self._n_targets()}")
        if self.solver == "sgd":
            self.solver_ = "sgd"
            self._fit_sgd(X, Y, sw, 1, resume=not first)
            return self
        stats = LinearStats.from_data(X, Y, None if sample_weight is None else sw,
                                      self.n_jobs, fit_intercept=self.fit_intercept)
        self.fit_stats(stats if first else self.stats_ + stats, reset=False)
        return self

    def fit_stats(self, stats: LinearStats, reset: bool = True) -> Any:
        """Fit from `LinearStats` (e.g. merged over chunks on workers) without the data.

        Solved as `LinearStats.solve` says: ill-conditioned statistics are solved from their
        QR factor (`from_data` computes one for such data, `+` merges it); rank-deficient X
        gets the minimum-norm solution and a LinAlgWarning, and so do ill-conditioned
        statistics without a factor (digits may be lost).

        Parameters
        ----------
        stats : LinearStats
        reset : bool, default True
            A fit: start from nothing, as `fit` does (no statistics, SGD state or other
            attribute of an earlier fit stays), and take the numbers of features and targets
            from `stats`. Only `feature_names_in_` is kept, when it names as many features as
            `stats` has: the names a caller recorded while it collected these statistics
            (fastml.fit_stream, the Dask driver). False (partial_fit): update the model.

        Returns
        -------
        self
        """
        self._check_params()
        if self.solver != "normal":
            raise ValueError(f"fit_stats needs solver='normal'; got solver={self.solver!r}")
        coef, intercept, rank, exact = stats.solve(self._penalty(stats), self.fit_intercept)
        dtype = getattr(self, "coef_", np.empty(0)).dtype if not reset else np.float64
        coef, intercept = _finite_solution(coef, intercept, dtype)  # before any state changes
        if reset:           # a fit from the statistics: nothing of an earlier model stays
            names = getattr(self, "feature_names_in_", None)
            forget_fit(self)
            if names is not None and len(names) == stats.Sxx.shape[0]:
                self.feature_names_in_ = names
            self.n_features_in_ = stats.Sxx.shape[0]
            self._single_target = stats.Sxy.shape[1] == 1
        self._warn_if_degenerate(rank, exact)
        self.stats_ = stats
        self.rank_ = rank
        self.n_iter_ = 1
        self.solver_ = "normal"
        self._set_solution(coef, intercept, dtype)
        return self

    # ---- fitted part by part (fastml/_plans.py)

    def _scaled_fit(self):
        """solver="normal": LinearStats per part, merged, one solve (exact); "sgd": passes of
        partial_fit (the SGD family's plan, stepping with the whole data's totals)."""
        self._check_params()
        if self.solver == "sgd":
            return sgd_plan(self, classifier=False, needs_totals=self._alpha() > 0)
        if self.solver != "normal":
            raise NotScalable(f"solver={self.solver!r} has no streaming form (it factors all "
                              f"rows at once); use solver='normal' (exact: the statistics "
                              f"merge) or 'sgd'")
        return Statistics(start=_stats_start, part=part_statistics, merge=merge_statistics,
                          finish=_finish_least_squares, layout="F")

    def _warn_if_degenerate(self, rank, exact):
        """LinAlgWarning when X is rank deficient (the minimum-norm solution is returned), or
        when ill-conditioned statistics without a QR factor had to be solved as they are."""
        d = self.n_features_in_
        if rank < d:
            problem = (f"X is singular or ill-conditioned: rank {rank} of {d} after scaling its "
                       f"columns (collinear or constant features); returning the minimum-norm "
                       f"solution")
        elif not exact:
            problem = ("X^T X is ill-conditioned and these statistics carry no QR factor "
                       "(LinearStats.factor); digits may be lost")
        else:
            return
        warnings.warn(f"{type(self).__name__}: {problem}", LinAlgWarning, stacklevel=3)

    def _penalty(self, stats):
        """The ridge penalty added to the diagonal of X^T X (LinearStats.normal_equations):
        alpha itself, as scikit-learn's Ridge adds it to the sum of squared residuals."""
        return self._alpha()

    def _n_targets(self):
        return 1 if np.ndim(self.coef_) == 1 else self.coef_.shape[0]

    def _set_solution(self, coef, intercept, dtype):
        coef, intercept = _finite_solution(coef, intercept, dtype)
        if self._single_target:
            self.coef_, self.intercept_ = coef[0].copy(), intercept.dtype.type(intercept[0])
        else:
            self.coef_, self.intercept_ = coef, intercept

    # ---- the shared SGD loop

    def _fit_sgd(self, X, Y, sw, epochs, resume):
        """`epochs` epochs of the SGD loop on the squared loss, from a new state or (resume,
        partial_fit) the current one.

        With S the sample weight of every row given so far (fit: its rows; partial_fit: every
        chunk since the start, this one included) and N those rows, the loop steps with the
        weights s'_i = s_i N / S (mean 1: SGDEngine.relative_weights) and the per-row penalty
        a = alpha / S, so it minimizes (1/N) sum_i s'_i (m_i - y_i)^2 / 2 + a/2 ||w||^2 =
        (1/(2S)) (sum_i s_i (m_i - y_i)^2 + alpha ||w||^2): Ridge's objective over those rows
        (up to the factor), the model that fit (or solver="normal" partial_fit) gives on
        them. The weights' scale then only changes the problem as it does for the closed
        forms, never the step sizes."""
        if not resume:
            self._rng = check_random_state(self.random_state)
            self._engine = SGDEngine(
                Y.shape[1], X.shape[1], X.dtype, loss="squared",
                learning_rate=self.learning_rate,
                eta0=self.eta0, decay=self.decay,
                alpha=self._alpha() / float(np.sum(sw)), batch_size=self.batch_size,
                fit_intercept=self.fit_intercept, average=self.average)
            self._epochs_done = 0
        engine = self._engine
        sw = engine.relative_weights(sw, pass_totals(self))
        if self._alpha() > 0 and engine.weight_seen > 0:    # the penalty per row as the
            engine.config["alpha"] = self._alpha() / engine.weight_seen    # rows accrue
        n_iter, curve, _ = run_epochs(
            engine, X, Y, sw, max_iter=epochs, tol=self.tol if epochs > 1 else None,
            n_iter_no_change=self.n_iter_no_change, shuffle=self.shuffle, rng=self._rng,
            verbose=self.verbose, name=type(self).__name__, first_epoch=self._epochs_done,
            n_jobs=self.n_jobs)
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
            # the SGD kernel holds the batch size in a C int
            check_param("batch_size", self.batch_size, low=1, high=2**31 - 1, integer=True)
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

    def predict(self, X: MatrixLike) -> NDArray[Any]:
        """X @ coef_.T + intercept_.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,) for a 1-D y at fit, else (n_samples, n_targets)
            float32 when both X and the model (coef_) are float32, else float64.
        """
        self._check_is_fitted("coef_")
        X = check_array(X, accept_sparse=True, estimator=self, reset=False)
        return np.asarray(X @ self.coef_.T) + self.intercept_


_SOLVER_DOC = """
    fit_intercept : bool, default True
        Fit an unpenalized intercept (centering by the weighted means), as in scikit-learn.
    solver : "normal" (default), "lstsq", "lsqr" or "sgd"
        Which algorithm fits (scikit-learn's Ridge has a `solver` too, with other values);
        `solver_` says which one ran.
        "normal": 004's normal equation. One pass over X forms X^T X and X^T y with BLAS
        (symmetric rank-k updates, threads over row blocks); Cholesky of X^T X scaled by its
        diagonal solves when that keeps about 9 digits, else a second pass takes the QR factor
        of the rows and the problem is solved from it (Filip, NIST's hardest set, keeps 7
        digits). Rank deficient X (collinear or constant features, the rank decided on scaled
        columns) gets the minimum-norm solution and a LinAlgWarning, never NaN or inf.
        "lstsq": always the QR factor, then SVD of its triangle: the minimum-norm solution,
        with no warning; slower. "lsqr": LSQR (Paige & Saunders, scipy's), iterations of
        one product with X and one with X^T each, to LSQR's tolerance 1e-12 (about 10 digits
        of the normal equations' answer on a well-conditioned problem): no d x d matrix, for
        wide sparse X. "sgd": the shared SGD loop on the squared loss (001), with partial_fit.

        Sparse X (CSR; CSC, COO and the other scipy formats are converted to CSR, a copy of
        the stored entries, never a dense copy) is taken by every solver. "normal" forms
        X^T X when it is small: at most 1,024 columns, or X^T X (8 d^2 bytes) no larger
        than X's own arrays; from the stored entries by a sparse product when fewer than
        1/16 of the cells are stored (and no column's mean exceeds its spread, which would
        cost the centering digits), else by the dense kernel on blocks of rows densified
        2^22 values at a time. Wider sparse X is solved by "lsqr" (`solver_` = "lsqr"),
        whose extra memory is a few vectors of n_samples and n_features. "lstsq"
        densifies 4,096 rows at a time and is refused on X too wide for the normal
        equations. Dense and sparse X of the same values give the same model
        (to about 1e-15 relative on well-conditioned data).
    max_iter : int, default 1000
        SGD epochs at most ("sgd"), as in scikit-learn's SGDRegressor; LSQR iterations at
        most ("lsqr", with a ConvergenceWarning when they run out).
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
    shuffle : bool or "block", default "block"
        Visit the rows in a new random order each epoch: True, a full permutation; "block",
        blocks of 256 consecutive rows in random order with the rows inside each block
        shuffled (reads X near memory bandwidth instead of waiting on each row; on data
        sorted by label it costs a little log-loss, see the user guide); False, the given
        order.
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
        solver="sgd" with n_jobs > 1 runs each epoch (and each `partial_fit` call) by
        parameter mixing: the shuffled rows cut into n_jobs shards, SGD on each in its own
        thread from the same weights, then the weights averaged; that model depends on n_jobs
        (give a number, not -1, for the same model on any machine) and is deterministic for
        a fixed random_state and n_jobs.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_targets, n_features)
        The weights, in X's dtype (float32 stays float32; statistics are accumulated in
        float64).
    intercept_ : float or ndarray of shape (n_targets,)
        The intercept (0 without fit_intercept).
    rank_ : int
        The rank of the (centered) X ("normal" / "lstsq"; not set by "lsqr").
    stats_ : LinearStats
        The statistics of the data ("normal"); partial_fit merges into them.
    solver_ : str
        The solver that ran: `solver`, or "lsqr" where "normal" met sparse X too wide for
        its normal equations.
    n_iter_ : int
        SGD epochs; LSQR iterations (the most of any target); 1 for the closed forms (one
        pass over the data).
    loss_curve_ : list of float
        The mean loss of each SGD epoch ("sgd").
    n_features_in_ : int
        The number of features seen by fit.
    feature_names_in_ : ndarray of str
        The column names of a DataFrame given to fit.
"""


class LinearRegression(_LeastSquares):
    __doc__ = """Ordinary least squares: min_w sum_i s_i (y_i - <w, x_i> - b)^2 (004).

    The same model as ``sklearn.linear_model.LinearRegression`` (s_i the sample weights). Its
    fit_intercept and n_jobs exist here too; positive (non-negative weights) and copy_X (the
    input is never modified here) do not. The parameters without a counterpart in
    scikit-learn's LinearRegression choose and drive the solver (they follow SGDRegressor
    where it has the same name).

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

    def __init__(self, fit_intercept: bool = True, solver: str = "normal", max_iter: int = 1000,
                 tol: Optional[float] = 1e-4, learning_rate: str = "constant", eta0: float = 0.01,
                 decay: float = 1.0, batch_size: int = 1, average: Union[bool, int] = True,
                 shuffle: Union[bool, str] = "block", n_iter_no_change: int = 5,
                 random_state: RandomStateLike = None, verbose: int = 0,
                 n_jobs: Optional[int] = None) -> None:
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

    def _alpha(self):
        return 0.0


class Ridge(_LeastSquares):
    __doc__ = """Ridge regression, with scikit-learn's alpha:

        min_w,b  sum_i s_i (y_i - <w, x_i> - b)^2 + alpha ||w||^2

    (s_i the sample weights, 1 by default); the intercept b is not penalized. The normal
    equations are (Xc^T S Xc + alpha I) w = Xc^T S yc on the centered data: the same model as
    ``sklearn.linear_model.Ridge(alpha)`` on the same data.

    Lecture 001 writes ridge on the mean loss, (1/n) sum_i (y_i - <w, x_i> - b)^2 +
    lambda ||w||^2; it is this objective divided by n, so lambda maps to alpha = n * lambda
    (n the number of rows; the sum of the sample weights when weighted): for 001's lambda,
    use ``Ridge(alpha=len(X) * lam)``. The SGD loop's own penalty (a/2 ||w||^2 on the mean half
    squared loss, as in scikit-learn's SGDRegressor) is a = alpha / n (alpha / sum_i s_i when
    weighted; the loop steps with the weights scaled to average 1).

    partial_fit: alpha penalizes a sum over a data set, and a stream of chunks has no data set
    size. Both solvers take the data set to be every row given to partial_fit so far (since
    the first call): solver="normal" merges the chunks' statistics and solves exactly that
    ridge problem; solver="sgd" runs each chunk's epoch with the per-row penalty
    a = alpha / (the sample weight of every row given so far, this chunk included), so it
    heads for the same model whatever the chunk sizes. A row given twice (a second pass over
    the same data) counts twice, as for "normal": after k passes over n rows the penalty is
    that of alpha on k n rows; to keep Ridge(alpha) on n rows over several passes, use fit
    (max_iter epochs), or alpha * k with partial_fit. In the first pass the early chunks meet
    a stronger penalty per row than the later ones (alpha over fewer rows), which the
    iterates forget as the pass goes on.

    Parameters
    ----------
    alpha : float, default 1.0
        The penalty on ||w||^2 added to the sum of squared residuals, as in scikit-learn
        (>= 0; 0 is ordinary least squares). 001's lambda is alpha / n.""" + _SOLVER_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from fastml import Ridge
    >>> X = np.array([[0.0], [1.0], [2.0]])
    >>> Ridge(alpha=0.0).fit(X, [1.0, 3.0, 5.0]).coef_.round(6).tolist()
    [2.0]
    >>> # sum of squares 2 w^2 (centered x = -1, 0, 1) + alpha w^2: w = 2 * 2 / (2 + alpha)
    >>> Ridge(alpha=2.0).fit(X, [1.0, 3.0, 5.0]).coef_.round(6).tolist()
    [1.0]
    """

    def __init__(self, alpha: float = 1.0, fit_intercept: bool = True, solver: str = "normal",
                 max_iter: int = 1000, tol: Optional[float] = 1e-4,
                 learning_rate: str = "constant", eta0: float = 0.01, decay: float = 1.0,
                 batch_size: int = 1, average: Union[bool, int] = True,
                 shuffle: Union[bool, str] = "block", n_iter_no_change: int = 5,
                 random_state: RandomStateLike = None, verbose: int = 0,
                 n_jobs: Optional[int] = None) -> None:
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

    def _alpha(self):
        return float(self.alpha)


# The SGD settings LinearRegression, Ridge and PolynomialRegression share (one set, one
# meaning; PolynomialRegression hands them to its Ridge).
_SGD_SETTINGS = ("max_iter", "tol", "learning_rate", "eta0", "decay", "batch_size", "average",
                 "shuffle", "n_iter_no_change", "random_state", "verbose")


class PolynomialRegression(RegressorMixin, BaseEstimator):
    """Polynomial regression (001): y(x, w) = w0 + w1 x + w2 x^2 + ... + w_M x^M.

    A linear model on the powers of x (on every monomial of total degree <= M with several
    features), fitted by least squares, or by ridge with alpha > 0: scikit-learn's
    ``make_pipeline(PolynomialFeatures(degree, include_bias=False), Ridge(alpha))``.
    scikit-learn has no single class for it. Sparse X gives a sparse expansion (see
    PolynomialFeatures), fitted as Ridge fits sparse X.

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
        solves from the QR factor of the expanded data (NIST's degree-10 Filip keeps 7
        digits); scaling x to [-1, 1] first keeps it on the one-pass Cholesky path.
    max_iter, tol, learning_rate, eta0, decay, batch_size : as in Ridge
        See below.
    average, shuffle, n_iter_no_change, random_state, verbose : as in Ridge
        The settings of solver="sgd", with the names, defaults and meanings of Ridge's (and
        LinearRegression's), passed to the Ridge fitted on the expansion: max_iter=1000,
        tol=1e-4, learning_rate="constant", eta0=0.01, decay=1.0, batch_size=1, average=True,
        shuffle="block", n_iter_no_change=5, random_state=None (the row order: an int gives
        the same model on every fit, as in scikit-learn; None a new order each fit), verbose=0.
        The closed-form solvers ignore them. Powers of an unscaled x make eta0's bound (about
        1 / mean ||x||^2 over the expanded columns) small: scale x to [-1, 1] first.
    n_jobs : int or None, default None
        Threads of the feature expansion and of X^T X (None = 1, -1 = every core); with
        solver="sgd", the parameter-mixing threads of LinearRegression's n_jobs.

    `fit` computes the number of terms first and refuses more than MAX_POLYNOMIAL_TERMS
    (30,000) with a ValueError, before expanding anything.

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
    n_iter_ : int
        SGD epochs ("sgd"); 1 for the closed forms (one pass over the data).
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

    def __init__(self, degree: int = 2, alpha: float = 0.0, interaction_only: bool = False,
                 fit_intercept: bool = True, solver: str = "normal", max_iter: int = 1000,
                 tol: Optional[float] = 1e-4, learning_rate: str = "constant",
                 eta0: float = 0.01, decay: float = 1.0, batch_size: int = 1,
                 average: Union[bool, int] = True, shuffle: Union[bool, str] = "block",
                 n_iter_no_change: int = 5, random_state: RandomStateLike = None,
                 verbose: int = 0, n_jobs: Optional[int] = None) -> None:
        self.degree = degree
        self.alpha = alpha
        self.interaction_only = interaction_only
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

    _accepts_sparse = True

    def __sklearn_tags__(self):
        return _multi_output_tags(super().__sklearn_tags__())

    @fresh_fit  # from nothing; a fit that fails leaves it unfitted, not half-built
    def fit(self: EstimatorT, X: MatrixLike, y: VectorLike,
            sample_weight: Optional[ArrayLike] = None) -> EstimatorT:
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
        check_param("degree", self.degree, low=1, integer=True, c_int=False)  # width checked next
        check_n_jobs(self.n_jobs)
        X, y = check_X_y(X, y, accept_sparse=True, multi_output=True, estimator=self,
                         reset=True)
        width = n_output_features(X.shape[1], self.degree, self.interaction_only,
                                  include_bias=False, limit=MAX_POLYNOMIAL_TERMS)
        if width > MAX_POLYNOMIAL_TERMS:
            raise ValueError(
                f"PolynomialRegression(degree={self.degree}) on {X.shape[1]} feature(s) would fit "
                f"more than {MAX_POLYNOMIAL_TERMS:,} terms (the limit: X^T X alone would need "
                f"{8 * MAX_POLYNOMIAL_TERMS ** 2 / 1e9:.1f} GB or more); lower the degree, use "
                f"interaction_only=True or fewer features")
        self.features_ = PolynomialFeatures(self.degree, interaction_only=self.interaction_only,
                                            include_bias=False, n_jobs=self.n_jobs).fit(X)
        self.model_ = Ridge(alpha=self.alpha, fit_intercept=self.fit_intercept,
                            solver=self.solver, n_jobs=self.n_jobs,
                            **{name: getattr(self, name) for name in _SGD_SETTINGS})
        self.model_.fit(self.features_.transform(X), y, sample_weight)
        self.coef_, self.intercept_ = self.model_.coef_, self.model_.intercept_
        self.powers_ = self.features_.powers_
        self.n_iter_ = self.model_.n_iter_
        self.solver_ = self.model_.solver_
        if hasattr(self.model_, "rank_"):
            self.rank_ = self.model_.rank_
        return self

    def _check_fitted_state(self):
        """Run by fastml.io.load: features_ is a PolynomialFeatures of n_features_in_ inputs
        and model_ a Ridge on its columns (each checked as an object of its own too)."""
        if not hasattr(self, "model_"):
            return
        if type(self.features_) is not PolynomialFeatures or type(self.model_) is not Ridge:
            raise ValueError("PolynomialRegression's features_ and model_ are not a "
                             "PolynomialFeatures and a Ridge")
        n_features = state_count(self, "n_features_in_", low=1)
        if state_count(self.features_, "n_features_in_", low=1) != n_features or \
                state_count(self.model_, "n_features_in_", low=1) != \
                state_count(self.features_, "n_output_features_", low=1):
            raise ValueError("PolynomialRegression's expansion and model do not agree in width")

    def _scaled_fit(self):
        """solver="normal": LinearStats of each part's monomials, merged, one solve."""
        check_param("degree", self.degree, low=1, integer=True, c_int=False)
        check_n_jobs(self.n_jobs)
        if self.solver != "normal":
            raise NotScalable(f"solver={self.solver!r} has no streaming form; use "
                              f"solver='normal' (exact: the statistics merge)")
        return Statistics(start=_stats_start, part=part_statistics, merge=merge_statistics,
                          finish=_finish_polynomial)

    def predict(self, X: MatrixLike) -> NDArray[Any]:
        """y(x, w) for each row of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,) or (n_samples, n_targets)
            float32 when both X and the model (coef_) are float32, else float64.
        """
        self._check_is_fitted("model_")
        X = check_array(X, accept_sparse=True, estimator=self, reset=False)
        # model_.predict(features_.transform(X)) without validating X twice more (40% of a
        # one-row call): the expansion of a checked X has features_'s width by construction,
        # and its values are checked as model_'s check_array checks them (x^k can overflow),
        # by a compiled count that costs less than numpy's reduction on a few rows
        expanded = self.features_._expand(X)
        values = expanded.data.reshape(-1, 1) if hasattr(expanded, "indptr") else expanded
        if count_nonfinite(values):
            _check_finite(values, "X", allow_nan=False)    # model_'s error
        return np.asarray(expanded @ self.model_.coef_.T) + self.model_.intercept_


# ---- least squares part by part: the Statistics plan (fastml/_plans.py) of LinearRegression,
# Ridge and PolynomialRegression with solver="normal": LinearStats per part, merged by Chan's
# formula (LinearStats.merge), one solve. Equal to fit on all rows.

def _stats_start(estimator, labels):
    """(threads, expansion): PolynomialRegression's parts expand their rows into monomials
    (degree, interaction_only); the others' are taken as they are (None)."""
    degree = estimator.get_params().get("degree")
    expansion = None if degree is None else (degree, estimator.interaction_only)
    return estimator.n_jobs, expansion


def part_statistics(X, y, w, context):
    """A part's LinearStats, its rows validated as fit(solver="normal") validates them
    (from_data finds NaN / inf in X itself). A float array is taken in its layout (the
    validation would copy a column-major one into rows)."""
    n_jobs, expansion = context
    if isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype in (np.float32, np.float64):
        y = check_regression_targets(y)
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"X and y have different numbers of samples: X has "
                             f"{X.shape[0]}, y has {y.shape[0]}")
    else:
        X, y = check_X_y(X, y, multi_output=True, check_finite=False)
    if expansion is not None:
        X = np.ascontiguousarray(_expanded(X, *expansion))
    sw = None if w is None else check_sample_weight(w, X.shape[0], whole=False)
    if sw is not None and not sw.any():
        return None         # rows that weigh nothing add nothing
    return LinearStats.from_data(X, y.reshape(X.shape[0], -1), sw, n_jobs)


def _expanded(X, degree, interaction_only):
    """X's monomials (PolynomialRegression's features), refusing too many terms as fit does."""
    width = n_output_features(X.shape[1], degree, interaction_only, include_bias=False,
                              limit=MAX_POLYNOMIAL_TERMS)
    if width > MAX_POLYNOMIAL_TERMS:
        raise ValueError(f"PolynomialRegression(degree={degree}) on {X.shape[1]} feature(s) "
                         f"would fit more than {MAX_POLYNOMIAL_TERMS:,} terms; lower the "
                         f"degree, use interaction_only=True or fewer features")
    features = PolynomialFeatures(degree, interaction_only=interaction_only,
                                  include_bias=False)
    return features.fit(X).transform(X)


def merge_statistics(a, b):
    if a.Sxy.shape[1] != b.Sxy.shape[1]:
        raise ValueError(f"a part has {b.Sxy.shape[1]} target column(s); the parts before "
                         f"had {a.Sxy.shape[1]}")
    return a.merge(b)


def _finish_least_squares(estimator, stats, schema):
    estimator.fit_stats(stats, reset=True)


def _finish_polynomial(estimator, stats, schema):
    """What PolynomialRegression's fit sets after its Ridge's fit, from the statistics of the
    parts' monomials."""
    features = PolynomialFeatures(estimator.degree, interaction_only=estimator.interaction_only,
                                  include_bias=False, n_jobs=estimator.n_jobs).fit(
        np.zeros((1, schema.n_features)))
    model = Ridge(alpha=estimator.alpha, fit_intercept=estimator.fit_intercept,
                  solver="normal", n_jobs=estimator.n_jobs).fit_stats(stats)
    estimator.features_, estimator.model_ = features, model
    estimator.coef_, estimator.intercept_ = model.coef_, model.intercept_
    estimator.powers_ = features.powers_
    estimator.rank_, estimator.n_iter_ = model.rank_, model.n_iter_
