"""The exceptions and warnings fastml raises (one module that every other one may import)."""

__all__ = ["NotFittedError", "ConvergenceWarning", "ModelFileError"]


class NotFittedError(ValueError, AttributeError):
    """Raised when predict-like methods are called before fit (a ValueError and an
    AttributeError, as scikit-learn's is, so `hasattr`-style checks and tests both work)."""


class ConvergenceWarning(UserWarning):
    """An iterative solver stopped at its iteration limit before meeting its tolerance."""


class ModelFileError(ValueError):
    """The file is not a fastml model file, or is corrupted, truncated, from a newer format
    version, or names something outside the allowlist."""
