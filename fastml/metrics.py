"""Evaluation metrics: the one home of accuracy, log-loss, the confusion matrix, RMSE and R².

The definitions, names and keyword arguments are scikit-learn's (`accuracy_score`, `log_loss`,
`confusion_matrix`, `mean_squared_error`, `r2_score`), so results can be compared one to one.
`estimator.score`, the `fastml` command, `fastml.plot` and the demos all call these.

Labels outside the known classes
--------------------------------
`log_loss(y_true, proba, classes)` needs P(true label) for every row, so a label of `y_true`
that is not in `classes` (a class the model never saw at fit) is an error that names the label
(scikit-learn's rule), never a silent "probability 0". `confusion_matrix` with explicit
`labels` ignores rows whose true or predicted label is outside them (scikit-learn's rule); the
`fastml` command passes the fitted classes plus the unseen ones so nothing is dropped.
"""
from __future__ import annotations

import numbers
from typing import Any, List, Optional, TYPE_CHECKING

import numpy as np

from ._tabular import refuse_missing_labels

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from ._typing import ArrayLike, NDArray, VectorLike

__all__ = ["accuracy_score", "accuracy", "log_loss", "confusion_matrix", "unique_labels",
           "mean_squared_error", "rmse", "r2_score", "r2"]


def _weights(sample_weight, n):
    if sample_weight is None:
        return None
    from ._validation import check_sample_weight
    return check_sample_weight(sample_weight, n)


def _same_length(a, b, names=("y_true", "y_pred")):
    if len(a) != len(b):
        raise ValueError(f"{names[0]} and {names[1]} have different lengths: {len(a)} and "
                         f"{len(b)}")
    if len(a) == 0:
        raise ValueError(f"{names[0]} is empty; at least 1 sample is required")


def accuracy_score(y_true: VectorLike, y_pred: VectorLike, *,
                   sample_weight: Optional[ArrayLike] = None) -> float:
    """Fraction of labels predicted exactly (weighted by `sample_weight` when given).

    On 2-D multilabel indicator input (0/1 entries, one column per label) it is the subset
    accuracy, as in scikit-learn: a row counts only if every one of its labels is predicted
    right, and `sample_weight` weighs rows.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_labels)
        True and predicted labels (any comparable values; an (n_samples, 1) column is read as
        n_samples labels), or two multilabel indicator matrices of the same shape.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative weight of each row.

    Returns
    -------
    float
        The (weighted) fraction of rows with ``y_pred == y_true`` (every entry of the row, for
        multilabel input).

    Raises
    ------
    ValueError
        If the lengths differ, the weights are invalid, a label is NaN or missing (None,
        pd.NA, NaT; scikit-learn's rule), a 1-D array meets a 2-D one, the two matrices
        differ in shape, or a 2-D input is not a 0/1 indicator matrix (scikit-learn refuses
        multiclass-multioutput too).

    Examples
    --------
    >>> from fastml.metrics import accuracy_score
    >>> accuracy_score([0, 1, 1, 0], [0, 1, 0, 0])
    0.75
    >>> accuracy_score([[0, 1], [1, 1]], [[0, 1], [1, 0]])  # subset accuracy
    0.5
    """
    y_true = _classification_labels(y_true, "y_true", multilabel=True)
    y_pred = _classification_labels(y_pred, "y_pred", multilabel=True)
    if y_true.ndim != y_pred.ndim:
        raise ValueError(f"y_true has shape {y_true.shape} and y_pred {y_pred.shape}: a "
                         f"metric cannot mix 1-D labels with a 2-D multilabel indicator "
                         f"matrix")
    _same_length(y_true, y_pred)
    if y_true.ndim == 2:
        if y_true.shape != y_pred.shape:
            raise ValueError(f"y_true and y_pred are multilabel indicator matrices of "
                             f"different shapes: {y_true.shape} and {y_pred.shape}")
        correct = (y_true == y_pred).all(axis=1).astype(np.float64)
    else:
        correct = (y_true == y_pred).astype(np.float64)
    return float(np.average(correct, weights=_weights(sample_weight, len(correct))))


def accuracy(y_true: VectorLike, y_pred: VectorLike) -> float:
    """The same as `accuracy_score(y_true, y_pred)` (kept for existing callers).

    Examples
    --------
    >>> accuracy(["a", "b"], ["a", "a"])
    0.5
    """
    return accuracy_score(y_true, y_pred)


def unique_labels(*ys: VectorLike) -> List[Any]:
    """The sorted union of the labels in `ys` (sorted by their text when the values cannot be
    compared with each other, e.g. numbers among strings).

    Parameters
    ----------
    *ys : array-like
        Label arrays.

    Returns
    -------
    list
        The distinct labels, sorted.

    Raises
    ------
    ValueError
        If a label is NaN or missing (None, pd.NA, NaT): NaN is not equal to itself, so each
        one would be a label of its own (scikit-learn refuses NaN labels too).

    Examples
    --------
    >>> unique_labels([2, 0], [1, 2])
    [0, 1, 2]
    """
    values = set()
    for i, y in enumerate(ys):
        labels = _labels_array(y)
        refuse_missing_labels(labels, f"unique_labels argument {i}")
        values.update(labels.tolist())
    try:
        return sorted(values)
    except TypeError:
        return sorted(values, key=str)


def _labels_array(labels):
    """Labels as an array without numpy's coercion of mixed numbers and text to text."""
    if isinstance(labels, np.ndarray):
        return labels.ravel()
    labels = list(labels)
    if all(isinstance(v, str) for v in labels) or all(
            isinstance(v, (numbers.Number, np.number)) for v in labels):
        return np.asarray(labels)
    out = np.empty(len(labels), dtype=object)
    out[:] = labels
    return out


def _classification_labels(y, name, *, multilabel=False):
    """Labels of a classification metric: 1-D (an (n, 1) column is read as n labels), mixed
    numbers and text kept apart, no missing label. With `multilabel`, a 2-D multilabel
    indicator matrix (0/1 or bool entries, at least 2 columns) is kept 2-D; any other 2-D
    input is refused (scikit-learn's multiclass-multioutput rule)."""
    if hasattr(y, "to_numpy") and not isinstance(y, np.ndarray):
        y = y.to_numpy()
    arr = y if isinstance(y, np.ndarray) else np.asarray(y)
    if arr.ndim == 1 and not isinstance(y, np.ndarray):
        arr = _labels_array(y)  # numpy would turn [1, "a"] into two strings
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    refuse_missing_labels(arr, name)
    if arr.ndim == 1:
        return arr
    if arr.ndim == 2 and multilabel:
        if arr.dtype.kind in "biuf" and np.isin(arr, (0, 1)).all():
            return arr
        raise ValueError(f"{name} is 2-D (shape {arr.shape}) but not a multilabel indicator "
                         f"matrix of 0/1 entries: multiclass-multioutput input is not "
                         f"supported (scikit-learn's rule)")
    raise ValueError(f"{name} must be 1-D (n_samples,); got shape {arr.shape}"
                     + (" (multilabel input is not supported here)" if arr.ndim == 2 else ""))


def _label_codes(values, labels):
    """Position of each value in `labels` (any order), -1 where it is not there. Numbers
    against numbers and text against text go through numpy; anything else through a dict."""
    values, labels = _labels_array(values), _labels_array(labels)
    kinds = {values.dtype.kind, labels.dtype.kind}
    if kinds <= set("biuf") or kinds <= set("US"):
        order = np.argsort(labels, kind="stable")
        ranked = labels[order]
        pos = np.clip(np.searchsorted(ranked, values), 0, max(len(ranked) - 1, 0))
        if len(ranked) == 0:
            return np.full(len(values), -1, dtype=np.int64)
        return np.where(ranked[pos] == values, order[pos], -1).astype(np.int64)
    index = {c: j for j, c in enumerate(labels.tolist())}
    return np.array([index.get(v, -1) for v in values.tolist()], dtype=np.int64)


def log_loss(y_true: VectorLike, y_proba: ArrayLike, classes: Optional[VectorLike] = None,
             eps: float = 1e-15, *, labels: Optional[VectorLike] = None,
             sample_weight: Optional[ArrayLike] = None) -> float:
    """Mean cross-entropy -log P(true label) of predicted class probabilities.

    Probabilities are clipped to [eps, 1] first, so one confident mistake gives a large
    finite loss (-log(1e-15) = 34.5), not inf.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_proba : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities, column j for ``classes[j]`` (e.g. ``model.predict_proba(X)``
        with ``model.classes_``). A 1-D array is P(classes[1]) of a binary problem.
    classes : array-like of shape (n_classes,), optional
        The label of each column. Default: the sorted labels of `y_true`. `labels` is the
        same argument under scikit-learn's name.
    eps : float in [0, 0.5), default 1e-15
        Lower clip of the probabilities. 0 turns the clip off (a zero probability of the true
        label then gives inf). From 0.5 up the clip would raise both probabilities of a
        binary problem to the same value (eps=1 scored every prediction 0), so such values
        are refused, as are negative ones (older scikit-learn, whose `eps` this is, took
        [0, 1]; from 1.5 on it clips at the dtype's machine epsilon and has no `eps`).
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative weight of each row.

    Returns
    -------
    float
        The (weighted) mean of -log p.

    Raises
    ------
    ValueError
        If `y_true` holds a label that is not in `classes` (the message names it: a model
        cannot be scored on a class it never saw), if the number of columns differs from the
        number of classes, if the lengths differ, if `y_proba` holds NaN or values outside
        [0, 1] (scikit-learn's rule), if a label is NaN or missing, or if `eps` is not a
        number in [0, 0.5).

    Examples
    --------
    >>> from fastml.metrics import log_loss
    >>> round(log_loss([0, 1], [[0.8, 0.2], [0.4, 0.6]], [0, 1]), 6)  # (-ln .8 - ln .6) / 2
    0.366985
    >>> log_loss(["a", "c"], [[0.5, 0.5], [0.5, 0.5]], ["a", "b"])
    Traceback (most recent call last):
    ...
    ValueError: y_true has labels that are not among the classes ['a', 'b']: ['c']
    """
    if classes is not None and labels is not None:
        raise ValueError("pass the classes once: either `classes` or `labels`")
    classes = labels if classes is None else classes
    _check_eps(eps)
    y_true = _classification_labels(y_true, "y_true")
    classes = _labels_array(unique_labels(y_true) if classes is None else classes)
    refuse_missing_labels(classes, "classes")
    proba = np.asarray(y_proba, dtype=np.float64)
    if proba.ndim == 1:
        if len(classes) != 2:
            raise ValueError(f"1-D probabilities mean a binary problem; there are "
                             f"{len(classes)} classes")
        proba = np.column_stack([1.0 - proba, proba])
    if proba.ndim != 2 or proba.shape[1] != len(classes):
        raise ValueError(f"y_proba has shape {proba.shape}; expected (n_samples, "
                         f"{len(classes)}), one column per class")
    _same_length(y_true, proba, ("y_true", "y_proba"))
    # scikit-learn's rule: probabilities are numbers in [0, 1] (a NaN would make the loss NaN,
    # a value above 1 is a score passed by mistake)
    if np.isnan(proba).any():
        raise ValueError("y_proba contains NaN; expected probabilities in [0, 1]")
    if proba.size and (proba.min() < 0 or proba.max() > 1):
        raise ValueError(f"y_proba contains values outside [0, 1] (from {proba.min():g} to "
                         f"{proba.max():g}); expected probabilities")
    codes = _label_codes(y_true, classes)
    if (codes < 0).any():
        unseen = unique_labels(y_true[codes < 0])
        raise ValueError(f"y_true has labels that are not among the classes "
                         f"{classes.tolist()!r}: {unseen!r}")
    p = np.clip(proba[np.arange(len(codes)), codes], eps, 1.0)
    with np.errstate(divide="ignore"):  # eps=0 and p = 0: the loss is inf, as documented
        loss = np.average(-np.log(p), weights=_weights(sample_weight, len(p)))
    return float(loss) + 0.0  # + 0.0: a perfect score is 0.0, never -0.0


def _check_eps(eps):
    if isinstance(eps, (bool, np.bool_)) or not isinstance(eps, numbers.Real) \
            or not 0.0 <= float(eps) < 0.5:
        raise ValueError(f"eps must be a number in [0, 0.5) (the lower clip of the "
                         f"probabilities; default 1e-15); got {eps!r}")


def confusion_matrix(y_true: VectorLike, y_pred: VectorLike, labels: Optional[VectorLike] = None,
                     *, sample_weight: Optional[ArrayLike] = None) -> NDArray[Any]:
    """counts[i, j] = number (or total weight) of rows of true label labels[i] predicted as
    labels[j].

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        True and predicted labels (an (n_samples, 1) column is read as n_samples labels).
    labels : array-like, optional
        The labels that index the rows and columns, in that order. Default: the sorted union
        of `y_true` and `y_pred`. Rows whose true or predicted label is not among them are
        left out (scikit-learn's rule).
    sample_weight : array-like of shape (n_samples,), optional
        Weight of each row; the matrix is then float64.

    Returns
    -------
    ndarray of shape (n_labels, n_labels)
        int64 counts (float64 with weights).

    Raises
    ------
    ValueError
        If the lengths differ, a label is NaN or missing (None, pd.NA, NaT; scikit-learn's
        rule), or the input is 2-D with more than one column (multilabel input is not
        supported, as in scikit-learn).

    Examples
    --------
    >>> from fastml.metrics import confusion_matrix
    >>> confusion_matrix(["a", "b", "b"], ["a", "a", "b"])
    array([[1, 0],
           [1, 1]])
    """
    y_true = _classification_labels(y_true, "y_true")
    y_pred = _classification_labels(y_pred, "y_pred")
    _same_length(y_true, y_pred)
    labels = _labels_array(unique_labels(y_true, y_pred) if labels is None else labels)
    refuse_missing_labels(labels, "labels")
    t, p = _label_codes(y_true, labels), _label_codes(y_pred, labels)
    kept = (t >= 0) & (p >= 0)
    w = _weights(sample_weight, len(t))
    out = np.zeros((len(labels), len(labels)), dtype=np.int64 if w is None else np.float64)
    np.add.at(out, (t[kept], p[kept]), 1 if w is None else w[kept])
    return out


def mean_squared_error(y_true: VectorLike, y_pred: VectorLike, *,
                       sample_weight: Optional[ArrayLike] = None) -> float:
    """Mean of (y_true - y_pred)² over rows (and outputs).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_outputs)
        True and predicted values.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative weight of each row.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the shapes differ or a value is NaN or infinite.

    Examples
    --------
    >>> mean_squared_error([1.0, 2.0], [1.0, 4.0])
    2.0
    """
    y_true, y_pred, scale = _scaled_pair(y_true, y_pred)
    per_output = np.average((y_true - y_pred) ** 2, axis=0,
                            weights=_weights(sample_weight, len(y_true)))
    with np.errstate(over="ignore", under="ignore"):  # the true value may be beyond float64
        return float(np.mean(per_output) * scale * scale)  # (then inf, or 0 below 5e-324)


def rmse(y_true: VectorLike, y_pred: VectorLike, *,
         sample_weight: Optional[ArrayLike] = None) -> float:
    """Root mean squared error, sqrt(mean_squared_error).

    Examples
    --------
    >>> rmse([0.0, 0.0], [3.0, 4.0])  # sqrt((9 + 16) / 2)
    3.5355339059327378
    """
    y_true, y_pred, scale = _scaled_pair(y_true, y_pred)
    per_output = np.average((y_true - y_pred) ** 2, axis=0,
                            weights=_weights(sample_weight, len(y_true)))
    # the root taken before scaling back, so values near 1e300 give a finite rmse and values
    # near 1e-200 a nonzero one
    with np.errstate(over="ignore", under="ignore"):  # the true value may exceed float64
        return float(np.sqrt(np.mean(per_output)) * scale)


def _regression_pair(y_true, y_pred):
    """Both as float64 arrays of one shape. Only the same shape is accepted, or a 1-D (n,)
    against an (n, 1) column (both are then read as (n,)); anything else, even of the same
    size (a (2, 3) against a (3, 2): outputs and samples swapped), is a ValueError naming
    both shapes, never a reshape."""
    y_true = np.asarray(y_true, dtype=np.float64)
    y_pred = np.asarray(y_pred, dtype=np.float64)
    if y_true.shape != y_pred.shape:
        column = [a.ndim == 2 and a.shape[1] == 1 for a in (y_true, y_pred)]
        if {y_true.ndim, y_pred.ndim} == {1, 2} and any(column) and \
                len(y_true) == len(y_pred):
            y_true, y_pred = y_true.reshape(-1), y_pred.reshape(-1)  # (n, 1) against (n,)
        else:
            raise ValueError(f"y_true and y_pred have different shapes: {y_true.shape} and "
                             f"{y_pred.shape}; expected the same shape (or (n,) against "
                             f"(n, 1))")
    if y_true.ndim == 0 or len(y_true) == 0:
        raise ValueError("y_true is empty; at least 1 sample is required")
    if y_true.ndim > 2:
        raise ValueError(f"y_true has {y_true.ndim} dimensions (shape {y_true.shape}); "
                         f"expected (n_samples,) or (n_samples, n_outputs)")
    # scikit-learn's rule: a NaN would make R² 1.0 or NaN without a word
    for name, values in (("y_true", y_true), ("y_pred", y_pred)):
        if not np.isfinite(values).all():
            raise ValueError(f"{name} contains NaN or infinity")
    return y_true, y_pred


def _scaled_pair(y_true, y_pred):
    """(y_true / s, y_pred / s, s) with s the power of 2 just below the largest |value| (1 if
    every value is 0), so the largest scaled |value| is in [1, 2): no square or sum of squares
    can overflow (values near 1e300) or underflow to 0 (values near 1e-200, whose squares are
    below the smallest float64). Multiplying by a power of 2 is exact (short of values more
    than ~2**1000 below the largest, whose squares could not count next to its own), so R²
    (a ratio of sums of squares) is unchanged and MSE and RMSE are scaled back exactly."""
    y_true, y_pred = _regression_pair(y_true, y_pred)
    top = max(float(np.max(np.abs(a), initial=0.0)) for a in (y_true, y_pred))
    if top == 0.0:
        return y_true, y_pred, 1.0
    exponent = int(np.frexp(top)[1]) - 1
    return np.ldexp(y_true, -exponent), np.ldexp(y_pred, -exponent), float(np.ldexp(1.0, exponent))


def r2_score(y_true: VectorLike, y_pred: VectorLike, *,
             sample_weight: Optional[ArrayLike] = None) -> float:
    """Coefficient of determination R² = 1 - SS_res / SS_tot, averaged uniformly over outputs.

    A constant `y_true` (SS_tot = 0) gives 1.0 when predicted exactly and 0.0 otherwise
    (scikit-learn's `force_finite` rule), never a division by zero.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_outputs)
        True and predicted values.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative weight of each row.

    Returns
    -------
    float
        At most 1; 0 for predicting the mean; negative when worse than the mean.

    Raises
    ------
    ValueError
        If the shapes differ or a value is NaN or infinite.

    Examples
    --------
    >>> r2_score([1.0, 2.0, 3.0], [1.0, 2.0, 4.0])  # 1 - 1 / 2
    0.5
    """
    y_true, y_pred, _ = _scaled_pair(y_true, y_pred)  # R² does not change with the scale
    w = _weights(sample_weight, len(y_true))
    mean = np.average(y_true, axis=0, weights=w)
    ss_res = np.average((y_true - y_pred) ** 2, axis=0, weights=w)
    ss_tot = np.average((y_true - mean) ** 2, axis=0, weights=w)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        score = np.where(ss_tot > 0, 1.0 - ss_res / np.where(ss_tot > 0, ss_tot, 1.0),
                         np.where(ss_res > 0, 0.0, 1.0))
    return float(np.mean(score))


def r2(y_true: VectorLike, y_pred: VectorLike) -> float:
    """The same as `r2_score(y_true, y_pred)` (kept for existing callers).

    Examples
    --------
    >>> r2([2.0, 2.0], [2.0, 2.0])  # constant and exact
    1.0
    """
    return r2_score(y_true, y_pred)
