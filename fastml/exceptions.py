"""The exceptions and warnings fastml raises (one module that every other one may import)."""
import sys

__all__ = ["NotFittedError", "ConvergenceWarning", "DataConversionWarning", "ModelFileError",
           "DivergenceError", "NotScalable"]


class NotFittedError(ValueError, AttributeError):
    """Raised when predict-like methods are called before fit (a ValueError and an
    AttributeError, as scikit-learn's is, so `hasattr`-style checks and tests both work).

    When scikit-learn is already imported, what fastml raises is also a
    ``sklearn.exceptions.NotFittedError`` (a class deriving from both), so ``except`` on either
    catches it and scikit-learn's ``check_estimators_unfitted`` passes. scikit-learn is not a
    dependency and is never imported just for that (it would add about 1.2 s to
    ``import fastml``).

    Examples
    --------
    >>> from fastml import GaussianNB, NotFittedError
    >>> try:
    ...     GaussianNB().predict([[1.0]])
    ... except NotFittedError as exc:
    ...     print("not fitted")
    not fitted
    """


class ConvergenceWarning(UserWarning):
    """An iterative solver stopped at its iteration limit before meeting its tolerance.

    Examples
    --------
    >>> import warnings
    >>> from fastml import ConvergenceWarning
    >>> warnings.simplefilter("ignore", ConvergenceWarning)  # silence it in a script
    """


class DataConversionWarning(UserWarning):
    """A column-vector y (shape (n_samples, 1)) was flattened where a 1-D y is expected, with
    scikit-learn's message ("A column-vector y was passed when a 1d array was expected...").

    Estimators that take several targets (LinearRegression, Ridge, PolynomialRegression) read
    an (n, 1) y as one target column and do not warn, as in scikit-learn. When scikit-learn is
    already imported, what fastml emits is also a ``sklearn.exceptions.DataConversionWarning``
    (a class deriving from both), so a filter or ``pytest.warns`` on either class catches it;
    scikit-learn is never imported just for that (it would cost about 1.2 s).

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from fastml import GaussianNB
    >>> from fastml.exceptions import DataConversionWarning
    >>> X, y = np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([[0], [0], [1], [1]])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     model = GaussianNB().fit(X, y)
    >>> [w.category.__name__ for w in caught], model.classes_.shape
    (['DataConversionWarning'], (2,))
    """


def _also_sklearns(ours):
    """`ours`, or, once scikit-learn's exceptions module has been imported by someone, a
    class deriving from `ours` and from scikit-learn's class of the same name, so that an
    `except` clause or a warnings filter on either catches what fastml raises or emits.
    scikit-learn is never imported for it (about 1.2 s). The class is kept in this module's
    globals under its __qualname__, so its instances pickle."""
    theirs = getattr(sys.modules.get("sklearn.exceptions"), ours.__name__, None)
    if not (isinstance(theirs, type) and issubclass(theirs, BaseException)):
        return ours
    key = "_Sklearn" + ours.__name__
    both = globals().get(key)
    if both is None or theirs not in both.__mro__:
        both = type(ours.__name__, (ours, theirs),
                    {"__module__": __name__, "__qualname__": key, "__doc__": ours.__doc__})
        globals()[key] = both
    return both


def _data_conversion_warning():
    """The category to emit (see DataConversionWarning)."""
    return _also_sklearns(DataConversionWarning)


def not_fitted_error(message):
    """The NotFittedError to raise (see NotFittedError)."""
    return _also_sklearns(NotFittedError)(message)


class ModelFileError(ValueError):
    r"""The file is not a fastml model file, or is corrupted, truncated, from a newer format
    version, or names something outside the allowlist. The only exception `fastml.load`
    raises for a bad file.

    Examples
    --------
    >>> import io, fastml
    >>> try:
    ...     fastml.load(io.BytesIO(b"\x80\x04pickle"))
    ... except fastml.ModelFileError as exc:
    ...     print(str(exc)[:28])
    this is a pickle file, not a
    """


class DivergenceError(ValueError, FloatingPointError):
    """An iterative solver's step made the model infinite or NaN (SGD or gradient descent
    diverged): the step size is too large for the data's scale. The message names the epoch
    and row and what to change; the model is left at its last finite state.

    A ValueError, as every error caused by the data or the parameters is, and a
    FloatingPointError, as it was before this class existed, so either `except` catches it.

    Examples
    --------
    >>> import numpy as np
    >>> from fastml import DivergenceError, Perceptron
    >>> X, y = np.array([[1e300, 1e300], [-1e300, -1e300]]), np.array([0, 1])
    >>> try:
    ...     Perceptron(max_iter=2).fit(X, y)
    ... except DivergenceError as exc:
    ...     print(str(exc)[:28])
    SGD diverged in epoch 1 at r
    """


class NotScalable(TypeError):
    """The estimator cannot be fitted part by part (`fastml.fit_stream` over a file's chunks,
    `fit` on a dask collection): the message says why, in the estimator's own words, and
    what to do instead (fit in memory on a sample, or an estimator that scales).

    Each estimator says how it scales through its plan (see
    docs/developers/architecture.rst); one that has none, such as a tree's split search that
    needs every row at once, raises this. A TypeError, as the error was before this class
    existed, so either `except` catches it.

    Examples
    --------
    >>> import fastml
    >>> try:
    ...     fastml.fit_stream(fastml.KernelPerceptron(), [([[0.0], [1.0]], [0, 1])])
    ... except fastml.NotScalable as exc:
    ...     print(str(exc)[:47])
    KernelPerceptron cannot be fitted by fit_stream
    """
