"""The exceptions and warnings fastml raises (one module that every other one may import)."""

__all__ = ["NotFittedError", "ConvergenceWarning", "ModelFileError", "DivergenceError"]


class NotFittedError(ValueError, AttributeError):
    """Raised when predict-like methods are called before fit (a ValueError and an
    AttributeError, as scikit-learn's is, so `hasattr`-style checks and tests both work).

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
