"""The kernelized perceptron of lecture 003 ("Finally the Kernel Trick!!!"): the driver of
_kernel_perceptron_fast.pyx. The model is its list of mistakes, kept in a `_MistakeBuffer`; a
point is scored by sum_{i in M} y_i k(x_i, x). Several classes: one-vs-rest.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Union

import numpy as np

from .._base import BaseEstimator, ClassifierMixin
from ..exceptions import NotScalable
from .._threads import blas_limit
from .._validation import (check_array, check_class_weight, check_n_jobs, check_param,
                           check_random_state, check_sample_weight, check_X_y,
                           class_sample_weight, state_array, state_count)
from ._base import (C_INDEX_MAX, C_INT_MAX, OutputLayout, all_or_nothing, check_n_jobs_param,
                    fresh_fit, labels_from_scores, start_partial_fit)
from ._iterate import iterate

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from .._typing import (ArrayLike, ClassWeightLike, EstimatorT, MatrixLike, NDArray,
                           RandomStateLike, VectorLike)

# GEMMs of fewer multiply-adds (m * n * k) than this run on one thread in OpenBLAS
# (SMP_THRESHOLD_MIN 65536 x GEMM_MULTITHREAD_THRESHOLD 4), so no BLAS thread limit is needed.
_BLAS_SERIAL_WORK = 1 << 18


class _MistakeBuffer:
    """The kernel perceptron's stored mistakes, contiguous rows [head, tail) of growing arrays:
    the rows, their squared norms (rbf), the signed coefficient per output, the weight seen
    before each was made (its step - 1 without sample weights) and a sample id (the same row
    seen in a later epoch has the same id)."""

    def __init__(self, n_features, n_outputs, dtype, capacity=256):
        self.head = self.tail = 0
        self.rows = np.zeros((capacity, n_features), dtype=dtype)
        self.sq = np.zeros(capacity)
        self.coef = np.zeros((n_outputs, capacity), dtype=dtype)
        self.start = np.zeros(capacity)
        self.sample = np.zeros(capacity, dtype=np.int64)

    def reserve(self, extra):
        """Make room for `extra` more rows after tail: slide the live rows to the front when
        the budget freed enough, else double the capacity."""
        live = self.tail - self.head
        capacity = self.rows.shape[0]
        if self.tail + extra <= capacity:
            return
        if self.head > 0 and live + extra <= capacity:
            new_capacity = capacity
        else:
            new_capacity = max(2 * capacity, live + extra)
        for name in ("rows", "sq", "start", "sample"):
            old = getattr(self, name)
            new = np.zeros((new_capacity,) + old.shape[1:], dtype=old.dtype)
            new[:live] = old[self.head:self.tail]
            setattr(self, name, new)
        coef = np.zeros((self.coef.shape[0], new_capacity), dtype=self.coef.dtype)
        coef[:, :live] = self.coef[:, self.head:self.tail]
        self.coef = coef
        self.head, self.tail = 0, live

    def check(self, n_features, n_outputs):
        """Raise ValueError unless the buffer is what train_block (no bounds checks) can
        append to: rows (capacity, n_features) and coef (n_outputs, capacity) in one float
        dtype, float64 squared norms and starts, int64 sample ids, 0 <= head <= tail <=
        capacity."""
        rows = state_array(self, "rows", None, (None, n_features))
        if rows.dtype not in (np.float32, np.float64):
            raise ValueError("the mistake buffer's rows are not float32 or float64")
        capacity = len(rows)
        state_array(self, "coef", rows.dtype, (n_outputs, capacity))
        state_array(self, "sq", np.float64, (capacity,))
        state_array(self, "start", np.float64, (capacity,))
        state_array(self, "sample", np.int64, (capacity,))
        head, tail = state_count(self, "head"), state_count(self, "tail")
        if not head <= tail <= capacity:
            raise ValueError(f"the mistake buffer's live rows [{head}, {tail}) are not inside "
                             f"its {capacity} rows")

    def live(self, name):
        return getattr(self, name)[..., self.head:self.tail] if name == "coef" else \
            getattr(self, name)[self.head:self.tail]


class KernelPerceptron(ClassifierMixin, BaseEstimator):
    """The kernelized perceptron (003): remember each mistake (x_i, y_i); predict
    sign(sum_{i in M} y_i k(x_i, x)). Several classes: one-vs-rest.

    Sample weights count copies: a row of weight s is visited as s copies of it in a row
    (floor(s) visits of weight 1, then one of the fraction left). Each visit with
    y_i f(x_i) <= 0 is a mistake of that visit's weight u, and the lecture's update
    alpha_i <- alpha_i + y_i becomes alpha_i <- alpha_i + u y_i, so a mistake on the row adds
    y_i times the weight of its mistake visits: min(s, floor(-y_i f(x_i) / k(x_i, x_i)) + 1),
    the weight itself for s <= 1 (or when k(x_i, x_i) <= 0). An integer weight is exactly
    that many copies of the row in a row (shuffle=False: the same model as the repeated data,
    to rounding), a weight 0 drops the row, and weights <= 1 scaled alike give the same
    predictions. (A weight scaled past 1 is more copies, which is another fit: the
    perceptron has no loss scale for the weights to cancel in.) With a budget, a weighted
    row is one stored mistake whatever its weight.

    Parameters
    ----------
    kernel : "rbf" (default), "poly", "linear", "sigmoid" or a callable
        rbf exp(-gamma ||u - v||^2) (003's Gaussian kernel with gamma = 1 / (2 sigma^2));
        poly (gamma u.v + coef0)^degree: coef0=0 is 003's "polynomials of degree exactly d",
        coef0=1 with gamma=1 its "degree up to d" kernel (u.v + 1)^d; sigmoid
        tanh(gamma u.v + coef0); linear u.v. A callable k(A, B) must return the
        (len(A), len(B)) matrix of kernel values; it is called once per block of rows.
    degree : int, default 3
    gamma : float, "scale" or "auto", default "scale"
        "scale" = 1 / (n_features * X.var()), "auto" = 1 / n_features (scikit-learn's rules);
        with sample weights X.var() is the weighted variance of X's values (each row's values
        counting its weight), so weights still count copies of the rows.
    coef0 : float, default 0.0
    max_iter : int, default 10
        Epochs; training stops earlier after an epoch without a mistake.
    budget : int or None, default None
        Keep at most this many mistakes, dropping the oldest (a budgeted perceptron).
    average : bool, default False
        Report the averaged perceptron: each stored mistake weighted by its survival time (the
        steps it has been part of w) over the steps seen, i.e. the mean of w after every step
        (with sample weights, every visit: survival and steps in weight).
        With a budget, mistakes already dropped do not enter the average.
    shuffle : bool, default True
    class_weight : None (default), "balanced" or dict {label: weight}
        Multiplies each row's sample weight by its class's weight (scikit-learn's rule:
        "balanced" is n / (n_classes * n_c) with n_c the summed sample weight of class c; a
        dict weighs the classes it names, the others 1). `partial_fit` takes a dict and
        refuses "balanced" (one chunk does not hold the class counts of all the data).
    random_state : int, Generator or None
    verbose : int, default 0
    n_jobs : int or None
        Threads for prediction (None = 1, -1 = all cores): they split the rows, and every
        row's score is the same whatever their number.

    Attributes
    ----------
    support_vectors_ : ndarray of shape (n_support, n_features)
        The stored mistakes' rows, one per training row.
    dual_coef_ : ndarray of shape (n_vectors, n_support)
        decision_function(x) = dual_coef_ @ k(support_vectors_, x).
    support_ : ndarray of shape (n_support,)
        Row numbers in the last fit's X, -1 for rows of earlier partial_fit calls.
    n_mistakes_ : int
        Mistakes made in training (visits, with sample weights).
    n_iter_ : int
        Epochs run.
    t_ : int
        Steps (rows visited; a row of weight 0 is not).
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from fastml.linear_model import KernelPerceptron
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])   # XOR
    >>> model = KernelPerceptron(kernel="poly", degree=2, coef0=1.0, gamma=1.0,
    ...                          max_iter=20, random_state=0).fit(X, [0, 0, 1, 1])
    >>> model.predict(X).tolist()
    [0, 0, 1, 1]
    """

    _accepts_sparse = False

    def _scaled_fit(self):
        """Not fitted part by part (fastml/_plans.py): see the reason."""
        raise NotScalable("its model is every mistake it made (support vectors, compared with "
                          "every row), so it needs the rows in memory; fit it in memory on a "
                          "sample, or use Perceptron / LinearSVM, which scale")

    def __init__(self, kernel: str = "rbf", degree: int = 3, gamma: Union[float, str] = "scale",
                 coef0: float = 0.0, max_iter: int = 10, budget: Optional[int] = None,
                 average: bool = False, shuffle: bool = True,
                 class_weight: ClassWeightLike = None, random_state: RandomStateLike = None,
                 verbose: int = 0, n_jobs: Optional[int] = None) -> None:
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.max_iter = max_iter
        self.budget = budget
        self.average = average
        self.shuffle = shuffle
        self.class_weight = class_weight
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs

    # ------------------------------------------------------------------ parameters

    def _check_params(self):
        if not callable(self.kernel):
            check_param("kernel", self.kernel, choices=tuple(_kp().KERNELS))
        check_param("degree", self.degree, low=1, high=C_INT_MAX, integer=True)
        if not isinstance(self.gamma, str):
            check_param("gamma", self.gamma, low=0.0, low_inclusive=False)
        else:
            check_param("gamma", self.gamma, choices=("scale", "auto"))
        check_param("coef0", self.coef0)
        check_param("max_iter", self.max_iter, low=1, integer=True)
        check_param("budget", self.budget, low=1, high=C_INDEX_MAX, integer=True,
                    allow_none=True)
        check_class_weight(self.class_weight)
        check_n_jobs_param(self.n_jobs)

    def _check_fitted_state(self):
        """Run by fastml.io.load: kernel parameters the compiled kernels accept (a callable
        kind only with a callable kernel), support vectors and coefficients that agree, and
        a mistake buffer train_block can resume from."""
        if not hasattr(self, "support_vectors_"):
            return
        n_features = state_count(self, "n_features_in_", low=1)
        n_outputs = OutputLayout(len(state_array(self, "classes_", None, 1,
                                                 contiguous=False))).n_outputs
        params = self._kparams
        kind = params["kind"] if isinstance(params, dict) else None
        if not (kind in _kp().KERNELS.values() or kind == -1) or isinstance(kind, bool):
            raise ValueError(f"unknown kernel kind {kind!r}")
        if (kind == -1) != callable(self.kernel):  # a function only where fit was given one
            raise ValueError("the kernel parameter does not match the fitted kernel")
        for name in ("gamma", "coef0"):
            if not isinstance(params[name], float) or not np.isfinite(params[name]):
                raise ValueError(f"kernel {name} {params[name]!r} is not a finite float")
        if not isinstance(params["degree"], int) or not 1 <= params["degree"] < 2**31:
            raise ValueError(f"kernel degree {params['degree']!r} is not a positive int")
        SV = state_array(self, "support_vectors_", None, (None, n_features))
        if SV.dtype not in (np.float32, np.float64):
            raise ValueError("support_vectors_ is not float32 or float64")
        state_array(self, "dual_coef_", SV.dtype, (n_outputs, len(SV)))
        state_array(self, "_sv_sq", np.float64, (len(SV),))
        if not isinstance(self._buffer, _MistakeBuffer):
            raise ValueError("the mistake buffer is missing")
        self._buffer.check(n_features, n_outputs)
        if self._buffer.rows.dtype != SV.dtype:
            raise ValueError("the mistake buffer and support_vectors_ differ in dtype")
        self._pack_model()

    def _kernel_params(self, X, sw):
        if self.gamma == "scale":
            with np.errstate(over="ignore"):            # an overflow is refused next
                var = _variance(X, sw)
            _check_kernel_range(X)
            gamma = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
        elif self.gamma == "auto":
            gamma = 1.0 / X.shape[1]
        else:
            gamma = float(self.gamma)
        kind = -1 if callable(self.kernel) else _kp().KERNELS[self.kernel]
        return dict(kind=kind, gamma=gamma, coef0=float(self.coef0), degree=int(self.degree))

    # ------------------------------------------------------------------ kernels

    def _kernel(self, A, B, sq_a=None, sq_b=None):
        """k(A_a, B_b) as an (len(A), len(B)) array in A's dtype."""
        out = np.empty((A.shape[0], B.shape[0]), dtype=A.dtype)
        if A.shape[0] == 0 or B.shape[0] == 0:
            return out
        if callable(self.kernel):
            return self._call_user_kernel(A, B)
        params = self._kparams
        empty = np.empty(0)
        rbf = params["kind"] == _kp().KERNELS["rbf"]
        _kp().kernel_block(A, B, _sq_norms(A) if rbf and sq_a is None else (sq_a if rbf else empty),
                           _sq_norms(B) if rbf and sq_b is None else (sq_b if rbf else empty),
                           out, params, check_n_jobs(self.n_jobs))
        return out

    def _call_user_kernel(self, A, B):
        K = np.asarray(self.kernel(A, B))
        want = (A.shape[0], B.shape[0])
        if K.shape != want:
            raise ValueError(f"the kernel callable returned an array of shape {K.shape} for "
                             f"inputs of {A.shape[0]} and {B.shape[0]} rows; it must return "
                             f"the {want} matrix k(A[i], B[j])")
        if K.dtype.kind not in "biuf" or not np.isfinite(K).all():
            raise ValueError("the kernel callable returned non-numeric, NaN or infinite values")
        return np.ascontiguousarray(K, dtype=A.dtype)

    # ------------------------------------------------------------------ fitting

    @fresh_fit
    def fit(self: EstimatorT, X: MatrixLike, y: VectorLike,
            sample_weight: Optional[ArrayLike] = None) -> EstimatorT:
        """Learn from X and labels y, starting with no mistakes.

        Parameters
        ----------
        X : array-like or CSR matrix of shape (n_samples, n_features)
            Dense rows.
        y : array-like of shape (n_samples,)
            Labels of any hashable type (at least two classes).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights of the rows (default: 1 each), counting copies (see the
            class docstring).

        Returns
        -------
        self

        Examples
        --------
        >>> import numpy as np
        >>> from fastml.linear_model import KernelPerceptron
        >>> X = np.array([[-2.0, 1.0], [-1.0, -1.0], [1.0, 1.0], [2.0, -1.0]])
        >>> model = KernelPerceptron(random_state=0).fit(X, [0, 0, 1, 1])
        >>> model.predict([[-3.0, 0.0], [3.0, 0.0]]).tolist()
        [0, 1]
        """
        self._check_params()
        X, y = check_X_y(X, y, estimator=self, reset=True)
        codes = self._encode_labels(y)
        sw = class_sample_weight(self.class_weight, self.classes_, codes,
                                 check_sample_weight(sample_weight, X.shape[0]))
        self._start(X, sw)
        self._train(X, codes, sw, self.max_iter)
        return self

    @all_or_nothing(fitting=False)
    def partial_fit(self: EstimatorT, X: MatrixLike, y: VectorLike,
                    classes: Optional[VectorLike] = None,
                    sample_weight: Optional[ArrayLike] = None) -> EstimatorT:
        """One epoch over (X, y), continuing from the stored mistakes.

        Parameters
        ----------
        X : array-like or CSR matrix of shape (n_samples, n_features)
            Dense rows.
        y : array-like of shape (n_samples,)
            Labels of any hashable type (at least two classes).
        classes : array-like, optional
            Every label that will ever appear: required on the first call; a later call
            may repeat it (the same set) or omit it.
        sample_weight : array-like of shape (n_samples,), optional
            As in `fit`.

        Returns
        -------
        self

        Examples
        --------
        >>> import numpy as np
        >>> from fastml.linear_model import KernelPerceptron
        >>> X = np.array([[-2.0, 1.0], [-1.0, -1.0], [1.0, 1.0], [2.0, -1.0]])
        >>> model = KernelPerceptron(random_state=0)
        >>> model = model.partial_fit(X[:2], [0, 0], classes=[0, 1])
        >>> model.partial_fit(X[2:], [1, 1]).classes_.tolist()
        [0, 1]
        """
        self._check_params()
        X, codes, sw, first = start_partial_fit(self, X, y, classes, sample_weight,
                                                state="_buffer", accept_sparse=False)
        if first:
            self._start(X, sw)
        self._train(X.astype(self._buffer.rows.dtype, copy=False), codes, sw, 1)
        return self

    def _start(self, X, sw):
        n_outputs = OutputLayout(len(self.classes_)).n_outputs
        self._kparams = self._kernel_params(X, sw)
        self._buffer = _MistakeBuffer(X.shape[1], n_outputs, X.dtype)
        self._rng = check_random_state(self.random_state)
        self._steps = self._samples_seen = 0
        self._weight_seen = 0.0
        self.n_mistakes_ = self.n_iter_ = 0

    def _train(self, X, codes, sw, epochs):
        if not callable(self.kernel):
            _check_kernel_range(X)
        with blas_limit(1):     # sequential and small GEMMs: BLAS threads only add wake-ups
            self._run_epochs(X, codes, sw, epochs)

    def _run_epochs(self, X, codes, sw, epochs):
        T = OutputLayout(len(self.classes_)).signed(codes)
        first_sample = self._samples_seen

        def step(epoch):
            order = self._rng.permutation(len(X)) if self.shuffle else np.arange(len(X))
            mistakes = self._epoch(X, T, sw, order, first_sample)
            self.n_mistakes_ += mistakes
            self.n_iter_ += 1
            shown = {"mistakes": mistakes, "stored": self._buffer.tail - self._buffer.head}
            return None, shown, mistakes == 0 and epochs > 1

        iterate(step, epochs, desc="KernelPerceptron", unit="epoch", verbose=self.verbose,
                first=self.n_iter_)
        self._samples_seen += len(X)
        self.t_ = self._steps
        self._publish(first_sample, len(X))

    def _epoch(self, X, T, sw, order, first_sample):
        """One pass in blocks of rows: the kernels between a block and the stored mistakes
        come from one call (BLAS, or the user's callable), then the Cython loop walks the
        block row by row."""
        buf, rbf = self._buffer, self._kparams["kind"] == _kp().KERNELS["rbf"]
        user_kernel = callable(self.kernel)
        params = self._kparams if not user_kernel else dict(self._kparams, kind=0)
        budget = int(self.budget or 0)
        mistakes, start = 0, 0
        block = 512
        margins = np.empty((block, T.shape[1]))
        scratch = np.empty((2, block), dtype=np.intp)
        G2 = np.zeros((block, block), dtype=X.dtype)
        empty = np.empty(0)
        while start < len(order):
            idx = order[start:start + block]
            Xb, Tb, sw_b = X[idx], T[idx], sw[idx]
            buf.reserve(len(idx))
            sq_b = _sq_norms(Xb) if rbf else empty
            if user_kernel:
                G1, G2b = self._kernel(Xb, buf.live("rows")), self._kernel(Xb, Xb)
            else:                           # scratch: the Cython loop computes what it needs
                G1 = np.empty((len(idx), buf.tail - buf.head), dtype=X.dtype)
                G2b = G2[:len(idx), :len(idx)]
            buf.head, buf.tail, m = _kp().train_block(
                Xb, Tb, sw_b, (idx + first_sample).astype(np.int64), G1,
                np.ascontiguousarray(G2b), user_kernel, sq_b, params, buf.rows, buf.sq,
                buf.coef, buf.start, buf.sample, buf.head, buf.tail, budget,
                self._weight_seen, margins, scratch)
            mistakes += m
            self._steps += int(np.count_nonzero(sw_b))
            self._weight_seen += float(np.sum(sw_b))
            start += len(idx)
        return mistakes

    def _publish(self, first_sample, n_last):
        """support_vectors_ / dual_coef_ from the buffer: averaged weights if asked, and one
        entry per training row (a row that erred in several epochs has its terms summed)."""
        buf = self._buffer
        coef = buf.live("coef").astype(np.float64)
        if self.average and self._weight_seen > 0:
            coef = _averaged(coef, buf.live("start"), self._weight_seen)
        samples = buf.live("sample")
        unique, first, inverse = np.unique(samples, return_index=True, return_inverse=True)
        merged = np.zeros((coef.shape[0], len(unique)))
        np.add.at(merged.T, inverse.ravel(), coef.T)
        order = np.argsort(first, kind="stable")        # keep the order they were stored in
        dtype = buf.rows.dtype
        self.support_vectors_ = np.ascontiguousarray(buf.live("rows")[first[order]])
        self.dual_coef_ = np.ascontiguousarray(merged[:, order], dtype=dtype)
        self._sv_sq = np.ascontiguousarray(buf.live("sq")[first[order]])
        sample = unique[order]
        self.support_ = np.where(sample >= first_sample, sample - first_sample, -1)
        self._pack_model()

    def _pack_model(self):
        """The form predict reads (kernel_decide): the support vectors transposed, their
        squared norms and the coefficients, float64, one array with zero-padded columns (a
        padding column has coefficient 0: it adds exactly 0). Derived from the fitted
        attributes, rebuilt after a load, never trusted from a file."""
        SV, coef = self.support_vectors_, self.dual_coef_
        m, d = SV.shape
        align = _kp().PACK_ALIGN
        pack = np.zeros((d + 1 + len(coef), -(-m // align) * align))
        pack[:d, :m] = SV.T
        pack[d, :m] = self._sv_sq
        pack[d + 1:, :m] = coef
        self._pack = pack
        self._sq_max = float(self._sv_sq.max()) if m else 0.0

    # ------------------------------------------------------------------ prediction

    def decision_function(self, X: MatrixLike) -> NDArray[np.float64]:
        """Parameters
        ----------
        X : array-like or CSR matrix of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            sum_i dual_coef_[:, i] k(support_vectors_[i], x): (n,) for two classes (positive =
            classes_[1]), else one column per class. Built-in kernels: one compiled pass that
            forms and sums the kernel values in cache (no kernel matrix), in float64, the same
            scores whatever n_jobs; a callable kernel: its matrix in row chunks.

        Examples
        --------
        >>> import numpy as np
        >>> from fastml.linear_model import KernelPerceptron
        >>> X = np.array([[-2.0, 1.0], [-1.0, -1.0], [1.0, 1.0], [2.0, -1.0]])
        >>> model = KernelPerceptron(random_state=0).fit(X, [0, 0, 1, 1])
        >>> (model.decision_function(X) > 0).tolist()
        [False, False, True, True]
        """
        self._check_is_fitted("support_vectors_")
        X = check_array(X, dtype=self.support_vectors_.dtype, estimator=self, reset=False)
        SV, coef = self.support_vectors_, self.dual_coef_
        if callable(self.kernel):
            scores = np.zeros((X.shape[0], coef.shape[0]), dtype=np.float64)
            if not len(SV):
                return scores.ravel() if scores.shape[1] == 1 else scores
            if X.shape[0] * SV.size < _BLAS_SERIAL_WORK:
                self._decide(X, SV, coef, scores)   # BLAS runs it on one thread anyway: no
            else:                                   # limit to enter (that costs ~20 us)
                with blas_limit(1):                 # threads split the rows (n_jobs) instead
                    self._decide(X, SV, coef, scores)
            return scores.ravel() if scores.shape[1] == 1 else scores
        # built-in kernels: one compiled pass (kernel values formed and summed in cache);
        # float32 models are scored in float64 (their rows and X's are exact in it)
        pack = self.__dict__.get("_pack")
        if pack is None:                            # a model pickled before the pack existed
            self._pack_model()
            pack = self._pack
        scores = np.empty((X.shape[0], coef.shape[0]), dtype=np.float64)
        _kp().kernel_decide(X if X.dtype == np.float64 else X.astype(np.float64), pack,
                            self._kparams, self._sq_max, scores, check_n_jobs(self.n_jobs))
        if np.isnan(scores).any():      # inf - inf inside a kernel value: no sign to predict
            row = int(np.argwhere(np.isnan(scores))[0, 0])
            raise ValueError(f"the kernel score of row {row} of X is NaN: its values overflow "
                             f"float64 inside the {self.kernel} kernel; rescale X")
        return scores.ravel() if scores.shape[1] == 1 else scores

    def _decide(self, X, SV, coef, scores):
        """A callable kernel's scores += k(X, SV) @ coef.T, a chunk of rows at a time (at most
        ~4M kernel values, 32 MB in float64, live at once)."""
        chunk = max(1, min((1 << 22) // len(SV), len(X)))
        for first in range(0, len(X), chunk):
            scores[first:first + chunk] = self._kernel(X[first:first + chunk], SV) @ coef.T

    def predict(self, X: MatrixLike) -> NDArray[Any]:
        """Parameters
        ----------
        X : array-like or CSR matrix of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            The class with the largest score.

        Examples
        --------
        >>> import numpy as np
        >>> from fastml.linear_model import KernelPerceptron
        >>> X = np.array([[-2.0, 1.0], [-1.0, -1.0], [1.0, 1.0], [2.0, -1.0]])
        >>> model = KernelPerceptron(random_state=0).fit(X, [0, 0, 1, 1])
        >>> model.predict([[-3.0, 0.0], [3.0, 0.0]]).tolist()
        [0, 1]
        """
        scores = self.decision_function(X)
        return labels_from_scores(self.classes_, scores)


def _averaged(coef, start, total):
    """The averaged coefficients: each mistake visit counts for the weight seen from it to
    the end (its survival, the visit included) over the total weight seen. A stored row whose
    mistake visits weigh e = |c| (unit visits, then the fraction) began at weight start P, so
    its visits began at P, P + 1, ... and their summed survival is e (total - P) - g(e), with
    g(e) = f (f - 1) / 2 + (e - f) f, f = floor(e) (g(1) = 0: c (total - P) / total, the
    steps it was part of w over the steps, without weights)."""
    e = np.abs(coef)
    f = np.floor(e)
    later = f * (f - 1) / 2 + (e - f) * f
    return np.sign(coef) * (e * (total - start) - later) / total


def _variance(X, sw):
    """The variance of all of X's values in float64 (float32 sums make constant data's
    variance ~1e-26, not 0), each row's values weighing its sample weight (np.var itself when
    the weights are equal)."""
    if (sw == sw[0]).all():
        return float(np.var(X, dtype=np.float64))
    p = sw / sw.sum()
    mean = float(p @ X.mean(axis=1, dtype=np.float64))
    return float(p @ np.mean(np.square(X - mean, dtype=np.float64), axis=1))


def _check_kernel_range(X):
    """Training rows whose squared norms overflow float64 (|x| ~ 1e154 and beyond) make the
    built-in kernels inf - inf = NaN, and the perceptron would learn from NaN comparisons."""
    if X.shape[0] and not np.isfinite(_sq_norms(X)).all():
        raise ValueError(f"X has values up to {float(np.abs(X).max()):.3g}: the squared norms "
                         f"of its rows overflow float64, and so would the kernel values; "
                         f"rescale X (e.g. standardize its columns)")


def _sq_norms(A):
    """Squared row norms in float64 (rbf's cached ||x||^2)."""
    return np.einsum("ij,ij->i", A, A, dtype=np.float64)


def _kp():
    from . import _kernel_perceptron_fast as _kernel_perceptron
    return _kernel_perceptron
