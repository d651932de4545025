"""The small worked-example tables of the lectures, typed in from the decks."""
from __future__ import annotations

import numbers
from typing import Optional, TYPE_CHECKING, Union

import numpy as np

from ._base import Dataset, object_matrix, to_frame, to_series

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from .._typing import XyPair

# 004, "Estimate Probabilities from Data": Tid, Refund, Marital Status, Taxable Income (K), Evade.
_TAX_ROWS = [
    (1, "Yes", "Single", 125.0, "No"),
    (2, "No", "Married", 100.0, "No"),
    (3, "No", "Single", 70.0, "No"),
    (4, "Yes", "Married", 120.0, "No"),
    (5, "No", "Divorced", 95.0, "Yes"),
    (6, "No", "Married", 60.0, "No"),
    (7, "Yes", "Divorced", 220.0, "No"),
    (8, "No", "Single", 85.0, "Yes"),
    (9, "No", "Married", 75.0, "No"),
    (10, "No", "Single", 90.0, "Yes"),
]

# 001, "Splitting: choosing a good attribute" (the 6-row version used for H(Y) = 0.65).
_X1X2Y_ROWS = [("T", "T", "T"), ("T", "F", "T"), ("T", "T", "T"),
               ("T", "F", "T"), ("F", "T", "T"), ("F", "F", "F")]


def _table(columns, features, target, *, return_X_y, as_frame, descr):
    if return_X_y:
        if as_frame:
            frame = to_frame(columns)
            return frame[features], frame[target]
        return object_matrix(columns, features), columns[target]
    return Dataset(
        data=to_frame({c: columns[c] for c in features}) if as_frame
        else {c: columns[c] for c in features},
        target=to_series(columns[target], target) if as_frame else columns[target],
        feature_names=list(features), target_name=target, DESCR=descr)


def load_tax_table(*, return_X_y: bool = False, as_frame: bool = False,
                   drop_tid: Optional[int] = None) -> Union[Dataset, XyPair]:
    """004's 10-row tax-evasion table: Refund (Yes/No), Marital Status (Single/Married/
    Divorced), Taxable Income (in thousands, float) → Evade (Yes/No).

    `drop_tid=7` removes that row (004's zero-probability example). With return_X_y and no
    frame, X is a (10, 3) object array (strings and floats) and y an array of strings.

    Parameters
    ----------
    return_X_y : bool, default False
        Return ``(X, y)`` instead of a Dataset.
    as_frame : bool, default False
        pandas DataFrame / Series instead of arrays (needs pandas).
    drop_tid : int, optional
        The Tid (1-10) of a row to leave out.

    Returns
    -------
    Dataset or (X, y)

    Raises
    ------
    ValueError
        If `drop_tid` is not one of the Tids 1-10 (an unknown Tid used to drop nothing).
    ImportError
        With as_frame=True when pandas is not installed.

    Examples
    --------
    >>> from fastml.datasets import load_tax_table
    >>> X, y = load_tax_table(return_X_y=True)
    >>> X.shape, list(y).count("Yes")
    ((10, 3), 3)
    """
    tids = [r[0] for r in _TAX_ROWS]
    if drop_tid is not None and (isinstance(drop_tid, (bool, np.bool_))
                                 or not isinstance(drop_tid, numbers.Integral)
                                 or drop_tid not in tids):
        raise ValueError(f"drop_tid must be one of the table's Tids {tids[0]}-{tids[-1]} "
                         f"(or None); got {drop_tid!r}")
    rows = [r for r in _TAX_ROWS if r[0] != drop_tid]
    columns = {
        "Refund": np.array([r[1] for r in rows], dtype=object),
        "Marital Status": np.array([r[2] for r in rows], dtype=object),
        "Taxable Income": np.array([r[3] for r in rows]),
        "Evade": np.array([r[4] for r in rows], dtype=object),
    }
    return _table(columns, ["Refund", "Marital Status", "Taxable Income"], "Evade",
                  return_X_y=return_X_y, as_frame=as_frame,
                  descr="Lecture 004: tax evasion (10 rows; Taxable Income in thousands)")


def load_x1x2y_table(*, return_X_y: bool = False, as_frame: bool = False) -> Union[Dataset,
                     XyPair]:
    """001's 6-row table of booleans X1, X2 → Y ('T'/'F'): H(Y) = 0.65, IG(X1) = 0.32.

    Parameters
    ----------
    return_X_y : bool, default False
        Return ``(X, y)`` instead of a Dataset.
    as_frame : bool, default False
        pandas DataFrame / Series instead of arrays (needs pandas).

    Returns
    -------
    Dataset or (X, y)
        X of shape (6, 2) and y of shape (6,), object arrays of "T" / "F".

    Raises
    ------
    ImportError
        With as_frame=True when pandas is not installed.

    Examples
    --------
    >>> from fastml.datasets import load_x1x2y_table
    >>> X, y = load_x1x2y_table(return_X_y=True)
    >>> X.shape, sorted(set(y))
    ((6, 2), ['F', 'T'])
    """
    columns = {name: np.array([r[j] for r in _X1X2Y_ROWS], dtype=object)
               for j, name in enumerate(["X1", "X2", "Y"])}
    return _table(columns, ["X1", "X2"], "Y", return_X_y=return_X_y, as_frame=as_frame,
                  descr="Lecture 001: the X1/X2/Y table (6 rows)")


def load_xor(*, return_X_y: bool = True) -> Union[Dataset, XyPair]:
    """The XOR truth table (000: why "stop when every gain is zero" is wrong):
    X = [[0,0],[0,1],[1,0],[1,1]], y = [0,1,1,0].

    Parameters
    ----------
    return_X_y : bool, default True
        Return ``(X, y)``; False gives a Dataset.

    Returns
    -------
    (X, y) or Dataset
        X of shape (4, 2) float64, y of shape (4,) int.

    Examples
    --------
    >>> from fastml.datasets import load_xor
    >>> X, y = load_xor()
    >>> y.tolist()
    [0, 1, 1, 0]
    """
    X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    y = np.array([0, 1, 1, 0])
    if return_X_y:
        return X, y
    return Dataset(data=X, target=y, feature_names=["x1", "x2"], target_name="y",
                   DESCR="XOR: y = x1 xor x2")
