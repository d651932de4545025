"""What the linear classifiers share: margins from coef_/intercept_ and predict, how class
codes become the kernels' outputs, partial_fit's validation, all-or-nothing fitting and the
fresh start of every fit (`fresh_fit`, `forget_fit`). (The
iteration loop every solver runs is _iterate.py; the SGD state's check lives with the state,
in _sgd.py.)"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import numpy as np

from ._sgd import check_sgd_engine
from .._core._posterior import first_nan_row

from .._base import forget_fit  # noqa: F401 (the linear models import it from here)
from .._base import all_or_nothing  # noqa: F401 (the linear models import it from here)
from .._validation import (check_array, check_param, check_sample_weight, check_target,
                           check_X_y, class_sample_weight, state_array, state_count)

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from .._typing import MatrixLike, NDArray


class LinearClassifierMixin:
    """decision_function = X @ coef_.T + intercept_ (1-D for two classes); predict = argmax
    (or the sign for two classes). Needs `coef_`, `intercept_`, `classes_`."""

    def _check_fitted_state(self):
        """Run by fastml.io.load on a restored model: coef_ (n_vectors, n_features_in_) of
        floats with one intercept per vector, n_vectors fitting the classes (one vector for
        two classes, K or K - 1 otherwise), and the SGD state agreeing with them."""
        if not hasattr(self, "coef_"):
            return
        n_features = state_count(self, "n_features_in_", low=1)
        n_classes = len(state_array(self, "classes_", None, 1, contiguous=False))
        coef = check_float_array(self, "coef_", (None, n_features))
        check_float_array(self, "intercept_", (coef.shape[0],))
        if coef.shape[0] not in (n_classes - 1, n_classes) or coef.shape[0] < 1:
            raise ValueError(f"coef_ has {coef.shape[0]} rows for {n_classes} classes")
        if getattr(self, "_engine", None) is not None:
            check_sgd_engine(self._engine, coef.shape[0], n_features)

    def _margins(self, X):
        """X @ coef_.T + intercept_ (n, n_vectors). X is finite (check_array), but a product
        can overflow: to +-inf, which the scores and probabilities handle (a sure class), or,
        when two terms overflow with opposite signs, to inf - inf = NaN, which has no class:
        that raises a ValueError naming the first such row, rather than passing NaN on
        (predict would read it as the negative class, predict_proba return NaN)."""
        self._check_is_fitted("coef_")
        X = check_array(X, accept_sparse=self._accepts_sparse, estimator=self, reset=False)
        # (no np.errstate around it: entering one costs ~2 us of a ~10 us one-row predict;
        # an overflow, rare, keeps numpy's RuntimeWarning, and is handled below either way)
        M = np.asarray(X @ self.coef_.T) + self.intercept_
        row = first_nan_row(M)          # (np.isnan(M).any() costs ~2 us of a one-row call)
        if row >= 0:
            raise ValueError(f"the margin of row {row} is NaN: X @ coef_ overflowed "
                             f"{M.dtype} to inf - inf (terms of opposite signs beyond its "
                             f"range); rescale X (e.g. standardize it) to score this row")
        return M

    def decision_function(self, X: MatrixLike) -> NDArray[np.floating[Any]]:
        """Parameters
        ----------
        X : array-like or CSR matrix of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            X @ coef_.T + intercept_: (n,) for two classes (positive = classes_[1]), else one
            column per class. float32 when both X and the model (coef_) are float32, else
            float64.

        Examples
        --------
        >>> import numpy as np
        >>> from fastml.linear_model import Perceptron
        >>> X = np.array([[-2.0, 1.0], [-1.0, -1.0], [1.0, 1.0], [2.0, -1.0]])
        >>> model = Perceptron(random_state=0).fit(X, [0, 0, 1, 1])
        >>> (model.decision_function(X) > 0).tolist()
        [False, False, True, True]
        """
        M = self._margins(X)
        return M.ravel() if M.shape[1] == 1 else M

    def predict(self, X: MatrixLike) -> NDArray[Any]:
        """Parameters
        ----------
        X : array-like or CSR matrix of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            The class with the largest margin (two classes: classes_[1] where it is positive).

        Examples
        --------
        >>> import numpy as np
        >>> from fastml.linear_model import Perceptron
        >>> X = np.array([[-2.0, 1.0], [-1.0, -1.0], [1.0, 1.0], [2.0, -1.0]])
        >>> model = Perceptron(random_state=0).fit(X, [0, 0, 1, 1])
        >>> model.predict([[-3.0, 0.0], [3.0, 0.0]]).tolist()
        [0, 1]
        """
        M = self._margins(X)
        return labels_from_scores(self.classes_, M.ravel() if M.shape[1] == 1 else M)


class OutputLayout:
    """How K class codes map onto the kernels' linear outputs: the one definition every linear
    classifier (and the kernel perceptron) uses.

    Parameters
    ----------
    n_classes : int
        K >= 2.
    scheme : "one_vs_rest" (default), "multinomial" or "reference"
        "one_vs_rest" (hinge, perceptron): one output per class, each with its own +-1
        targets. "multinomial" (logistic): one softmax output per class. "reference"
        (logistic, lecture 002): K - 1 outputs, the last class has margin 0. Two classes always
        use one output, for classes_[1] (class 0 is the zero-margin reference of the logistic
        loss, the -1 side of the others).

    Attributes
    ----------
    n_outputs : int
        Rows of coef_.
    label_offset : int
        Output k stands for kernel code k + label_offset.
    reference : bool
        The logistic loss has a class with a fixed zero margin (kernel code 0).

    Examples
    --------
    >>> import numpy as np
    >>> layout = OutputLayout(3, "reference")
    >>> layout.n_outputs, layout.label_offset, layout.codes(np.array([0, 1, 2])).tolist()
    (2, 1, [1, 2, 0])
    >>> OutputLayout(2).signed(np.array([0, 1])).ravel().tolist()
    [-1.0, 1.0]
    """

    def __init__(self, n_classes, scheme="one_vs_rest"):
        self.n_classes = n_classes
        if scheme == "one_vs_rest":
            self.reference = False
            self.n_outputs, self.label_offset = (1, 1) if n_classes == 2 else (n_classes, 0)
        else:
            self.reference = n_classes == 2 or scheme == "reference"
            self.n_outputs = n_classes - 1 if self.reference else n_classes
            self.label_offset = 1 if self.reference else 0
        # "reference" with K > 2: the kernels' reference is code 0, so codes rotate by one
        self._rotate = self.reference and n_classes > 2

    def codes(self, codes):
        """Kernel codes of class codes 0..K-1 (the identity except for "reference")."""
        return (codes + 1) % self.n_classes if self._rotate else codes

    def class_of(self, kernel_codes):
        """Class codes of kernel codes: the inverse of `codes`."""
        return (kernel_codes - 1) % self.n_classes if self._rotate else kernel_codes

    def targets(self, codes):
        """The SGD loop's targets for class codes: a (n, 1) float64 column of kernel codes."""
        return np.ascontiguousarray(self.codes(codes), dtype=np.float64).reshape(-1, 1)

    def signed(self, codes):
        """(n, n_outputs) targets in {-1, +1}: +1 where the output stands for the row's class
        (the perceptron's y of each one-vs-rest output)."""
        wanted = np.arange(self.n_outputs) + self.label_offset
        return np.ascontiguousarray(np.where(self.codes(codes)[:, None] == wanted, 1.0, -1.0))


# The largest values of the integer parameters that reach the kernels as C types.
C_INT_MAX = 2**31 - 1               # a C int (threads, the polynomial kernel's degree)
C_INDEX_MAX = 2**63 - 1             # an index_t / Py_ssize_t (counts of rows and mistakes)


def check_n_jobs_param(n_jobs):
    """n_jobs fits the kernels' C int thread count (ValueError naming it, not OverflowError);
    the count itself comes from _validation.check_n_jobs."""
    check_param("n_jobs", n_jobs, integer=True, low=-C_INT_MAX, high=C_INT_MAX,
                allow_none=True)


def start_partial_fit(estimator, X, y, classes, sample_weight=None, *, state="_engine",
                      accept_sparse=True, check_finite=True):
    """Validate one partial_fit call of an online classifier: (X, codes, sw, first call?).
    The first call (no `state` attribute yet: never fitted, or fitted by a solver that has
    no such state) starts from nothing (`forget_fit`), fixes the features and learns
    `classes_` from `classes` (required then); later calls must bring the same features and
    known labels. The estimator's class_weight (a dict; "balanced" is refused) multiplies
    the sample weights. check_finite=False: the caller's epoch proves X finite (run_epochs'
    finite_checked=False), saving a read of X per call (a stream's every chunk and pass)."""
    first = getattr(estimator, state, None) is None
    if first:
        forget_fit(estimator)
    X, y = check_X_y(X, y, accept_sparse=accept_sparse, estimator=estimator, reset=first,
                     check_finite=check_finite)
    if first:
        if classes is None:
            raise ValueError("classes must be given on the first call to partial_fit")
        estimator._encode_labels(classes, name="classes")
    elif classes is not None and not np.array_equal(
            np.unique(check_target(classes, name="classes")), estimator.classes_):
        raise ValueError(f"classes {list(classes)!r} differ from the classes of the first "
                         f"partial_fit {estimator.classes_.tolist()!r}")
    codes = estimator._encode_known_labels(y)
    sw = class_sample_weight(getattr(estimator, "class_weight", None), estimator.classes_, codes,
                             check_sample_weight(sample_weight, X.shape[0]), partial=True)
    return X, codes, sw, first


def fresh_fit(method):
    """Decorator of every linear model's `fit`: scikit-learn's semantics, where fit starts
    from nothing. The earlier model is forgotten first (`forget_fit`), whatever solver made
    it (a batch refit once kept an earlier SGD fit's `_engine`, which fastml.load then
    refused, and an SGD refit of LinearRegression kept `stats_` that a later
    partial_fit(solver="normal") merged into); and the fit is all or nothing
    (`all_or_nothing(fitting=True)`: a fit that raises leaves the estimator unfitted)."""
    @all_or_nothing(fitting=True)
    @functools.wraps(method)
    def run(self, *args, **kwargs):
        forget_fit(self)
        return method(self, *args, **kwargs)
    return run


def check_float_array(owner, name, shape):
    """owner.<name>: a float32 / float64 array of this shape (for _check_fitted_state)."""
    value = state_array(owner, name, None, shape, contiguous=False)
    if value.dtype not in (np.float32, np.float64):
        raise ValueError(f"{name} has dtype {value.dtype}; expected float32 or float64")
    return value


def labels_from_scores(classes, scores):
    """The predicted labels of linear scores: classes[1] where a 1-D score (two classes) is
    positive, else the class of the largest score (the one decision rule of every linear
    classifier and perceptron here)."""
    scores = np.asarray(scores)
    codes = (scores > 0).astype(np.intp) if scores.ndim == 1 else np.argmax(scores, axis=1)
    return classes[codes]
