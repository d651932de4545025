"""The loss functions of lecture 001's table ("Choosing the Loss Function") and 003's hinge and
perceptron losses, each with its (sub)gradient in the prediction, vectorized over samples.

Every function takes the prediction ``y_pred`` (001's y_h = h_w(x): a score for the margin
losses, a predicted label for the 0/1 loss) and the truth ``y``, broadcasts them like numpy,
and returns one float64 value per sample. The gradient in the weights of a linear model
h_w(x) = w.x follows by the chain rule: d loss / d w = gradient(y_pred, y) * x.

=========== ======================================== ========================================
loss        value (001 / 003)                        (sub)gradient in y_pred
=========== ======================================== ========================================
quadratic   (y_pred - y)^2                           2 (y_pred - y)
zero_one    0 if y_pred == y else 1                  0 (flat wherever it is differentiable)
hinge       max(0, 1 - y y_pred), y in {-1, +1}      -y where y y_pred < 1, else 0
perceptron  max(0, -y y_pred), y in {-1, +1} (003)   -y where y y_pred <= 0, else 0
logistic    ln(1 + exp(-y y_pred)), y in {-1, +1}    -y sigma(-y y_pred)
=========== ======================================== ========================================

The kinks of the hinge and the perceptron loss take the subgradients the SGD loop uses
(fastml/linear_model/_loss.pxd): 003's slide "Subgradient of Hinge" picks -y x at y (w.x) = 0 for the
perceptron (one line: 1[y (w.x) <= 0] (-y x)); at the hinge's kink y y_pred = 1 any value in
[-y, 0] is a subgradient and 0 is taken. The logistic loss is computed without overflow for any
margin (log-sum-exp and a two-sided sigmoid).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from ._typing import ArrayLike, NDArray

__all__ = ["quadratic_loss", "quadratic_gradient", "zero_one_loss", "zero_one_gradient",
           "hinge_loss", "hinge_gradient", "perceptron_loss", "perceptron_gradient",
           "logistic_loss", "logistic_gradient", "LOSSES"]


def _as_float(y_pred, y):
    y_pred = np.asarray(y_pred, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if not (np.isfinite(y_pred).all() and np.isfinite(y).all()):
        raise ValueError("y_pred and y must be finite (no NaN or infinity)")
    return y_pred, y


def _signed(y_pred, y, name):
    """Inputs of the margin losses: float arrays with y in {-1, +1} (001: 'y in {-1, +1}')."""
    y_pred, y = _as_float(y_pred, y)
    if not np.isin(y, (-1.0, 1.0)).all():
        raise ValueError(f"{name} needs labels y in {{-1, +1}}; got values "
                         f"{np.unique(y)[:5].tolist()} (encode 0/1 labels as 2*y - 1)")
    return y_pred, y


def quadratic_loss(y_pred: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
    """001's quadratic loss (y_h - y)^2 (the L2 loss of ridge regression).

    Parameters
    ----------
    y_pred : array-like
        Predictions (scores; labels for the 0/1 loss).
    y : array-like
        The truth, broadcast against y_pred.

    Returns
    -------
    ndarray of float64
        One value per sample.

    Examples
    --------
    >>> from fastml.losses import quadratic_loss
    >>> quadratic_loss([1.0, 3.0], [0.0, 1.0]).tolist()
    [1.0, 4.0]
    """
    y_pred, y = _as_float(y_pred, y)
    return (y_pred - y) ** 2


def quadratic_gradient(y_pred: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
    """d/dy_pred of (y_pred - y)^2 = 2 (y_pred - y).

    Parameters
    ----------
    y_pred : array-like
        Predictions (scores; labels for the 0/1 loss).
    y : array-like
        The truth, broadcast against y_pred.

    Returns
    -------
    ndarray of float64
        One value per sample.

    Examples
    --------
    >>> from fastml.losses import quadratic_gradient
    >>> quadratic_gradient([1.0, 3.0], [0.0, 1.0]).tolist()
    [2.0, 4.0]
    """
    y_pred, y = _as_float(y_pred, y)
    return 2.0 * (y_pred - y)


def zero_one_loss(y_pred: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
    """001's binary loss: 0 where the predicted label equals the truth, 1 elsewhere. Labels of
    any type (compare scores by passing np.sign(scores) against y in {-1, +1}).

    Parameters
    ----------
    y_pred : array-like
        Predictions (scores; labels for the 0/1 loss).
    y : array-like
        The truth, broadcast against y_pred.

    Returns
    -------
    ndarray of float64
        One value per sample.

    Examples
    --------
    >>> from fastml.losses import zero_one_loss
    >>> zero_one_loss([1, -1], [1, 1]).tolist()
    [0.0, 1.0]
    """
    y_pred, y = np.asarray(y_pred), np.asarray(y)
    return (y_pred != y).astype(np.float64)


def zero_one_gradient(y_pred: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
    """The 0/1 loss is piecewise constant: its gradient is 0 wherever it exists, which is why
    it is minimized through a convex surrogate (hinge, logistic) instead.

    Parameters
    ----------
    y_pred : array-like
        Predictions (scores; labels for the 0/1 loss).
    y : array-like
        The truth, broadcast against y_pred.

    Returns
    -------
    ndarray of float64
        One value per sample.

    Examples
    --------
    >>> from fastml.losses import zero_one_gradient
    >>> zero_one_gradient([1, -1], [1, 1]).tolist()
    [0.0, 0.0]
    """
    y_pred, y = np.asarray(y_pred), np.asarray(y)
    return np.zeros(np.broadcast(y_pred, y).shape)


def hinge_loss(y_pred: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
    """001/003's hinge loss max(0, 1 - y y_pred) for y in {-1, +1} (the SVM's loss).

    Parameters
    ----------
    y_pred : array-like
        Predictions (scores; labels for the 0/1 loss).
    y : array-like
        The truth, broadcast against y_pred.

    Returns
    -------
    ndarray of float64
        One value per sample.

    Examples
    --------
    >>> from fastml.losses import hinge_loss
    >>> hinge_loss([2.0, 0.5, -1.0], [1, 1, 1]).tolist()
    [0.0, 0.5, 2.0]
    """
    y_pred, y = _signed(y_pred, y, "hinge_loss")
    return np.maximum(0.0, 1.0 - y * y_pred)


def hinge_gradient(y_pred: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
    """A subgradient of the hinge loss: -y where y y_pred < 1, else 0.

    Parameters
    ----------
    y_pred : array-like
        Predictions (scores; labels for the 0/1 loss).
    y : array-like
        The truth, broadcast against y_pred.

    Returns
    -------
    ndarray of float64
        One value per sample.

    Examples
    --------
    >>> from fastml.losses import hinge_gradient
    >>> hinge_gradient([2.0, 0.5, -1.0], [1, 1, 1]).tolist()
    [0.0, -1.0, -1.0]
    """
    y_pred, y = _signed(y_pred, y, "hinge_gradient")
    return np.where(y * y_pred < 1.0, -y, 0.0)


def perceptron_loss(y_pred: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
    """003's "What is the perceptron optimizing": the hinge at margin 0, max(0, -y y_pred).

    Parameters
    ----------
    y_pred : array-like
        Predictions (scores; labels for the 0/1 loss).
    y : array-like
        The truth, broadcast against y_pred.

    Returns
    -------
    ndarray of float64
        One value per sample.

    Examples
    --------
    >>> from fastml.losses import perceptron_loss
    >>> perceptron_loss([2.0, 0.5, -1.0], [1, 1, 1]).tolist()
    [0.0, 0.0, 1.0]
    """
    y_pred, y = _signed(y_pred, y, "perceptron_loss")
    return np.maximum(0.0, -y * y_pred)


def perceptron_gradient(y_pred: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
    """003's subgradient 1[y y_pred <= 0] (-y): a mistake (or a tie) moves w by y x.

    Parameters
    ----------
    y_pred : array-like
        Predictions (scores; labels for the 0/1 loss).
    y : array-like
        The truth, broadcast against y_pred.

    Returns
    -------
    ndarray of float64
        One value per sample.

    Examples
    --------
    >>> from fastml.losses import perceptron_gradient
    >>> perceptron_gradient([2.0, 0.0, -1.0], [1, 1, 1]).tolist()
    [0.0, -1.0, -1.0]
    """
    y_pred, y = _signed(y_pred, y, "perceptron_gradient")
    return np.where(y * y_pred <= 0.0, -y, 0.0)


def logistic_loss(y_pred: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
    """001's logistic loss ln(1 + e^{-y y_pred}) for y in {-1, +1}, stable at any margin.

    Parameters
    ----------
    y_pred : array-like
        Predictions (scores; labels for the 0/1 loss).
    y : array-like
        The truth, broadcast against y_pred.

    Returns
    -------
    ndarray of float64
        One value per sample.

    Examples
    --------
    >>> from fastml.losses import logistic_loss
    >>> logistic_loss([0.0, 1000.0], [1, -1]).round(4).tolist()
    [0.6931, 1000.0]
    """
    y_pred, y = _signed(y_pred, y, "logistic_loss")
    return np.logaddexp(0.0, -y * y_pred)


def logistic_gradient(y_pred: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
    """d/dy_pred ln(1 + e^{-y y_pred}) = -y sigma(-y y_pred) = -y / (1 + e^{y y_pred}).

    Parameters
    ----------
    y_pred : array-like
        Predictions (scores; labels for the 0/1 loss).
    y : array-like
        The truth, broadcast against y_pred.

    Returns
    -------
    ndarray of float64
        One value per sample.

    Examples
    --------
    >>> from fastml.losses import logistic_gradient
    >>> logistic_gradient([0.0, 1000.0], [1, -1]).round(4).tolist()
    [-0.5, 1.0]
    """
    y_pred, y = _signed(y_pred, y, "logistic_gradient")
    return -y * _sigmoid(-y * y_pred)


def _sigmoid(z):
    """1 / (1 + e^-z) without overflow: e^z / (1 + e^z) for negative z."""
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


LOSSES = {
    "quadratic": (quadratic_loss, quadratic_gradient),
    "zero_one": (zero_one_loss, zero_one_gradient),
    "hinge": (hinge_loss, hinge_gradient),
    "perceptron": (perceptron_loss, perceptron_gradient),
    "logistic": (logistic_loss, logistic_gradient),
}
