"""The exceptions and warnings fastml raises (one module that every other one may import)."""

__all__ = ["NotFittedError", "ConvergenceWarning", "ModelFileError"]


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
