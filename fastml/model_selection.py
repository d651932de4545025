"""Splitting data for held-out evaluation."""
from __future__ import annotations

import numbers
from typing import Any, List, TYPE_CHECKING, Union

import numpy as np

from ._validation import check_random_state

if TYPE_CHECKING:  # hints only (see fastml/_typing.py)
    from ._typing import MatrixLike, RandomStateLike, VectorLike


def _take(a, idx):
    if hasattr(a, "iloc"):
        return a.iloc[idx]
    if hasattr(a, "tocsr"):
        return a.tocsr()[idx]
    return np.asarray(a)[idx]


def train_test_split(X: MatrixLike, y: VectorLike, *, test_size: Union[float, int] = 0.25,
                     random_state: RandomStateLike = None, stratify: bool = False) -> List[Any]:
    """(X_train, X_test, y_train, y_test), a random split with `test_size` (a fraction in
    (0, 1) or a row count) held out; `stratify=True` keeps each class's share in both parts.

    Parameters
    ----------
    X : array-like, sparse matrix or DataFrame of shape (n_samples, ...)
        Rows to split (kept in their type).
    y : array-like or Series of shape (n_samples,)
        Targets, split the same way.
    test_size : float or int, default 0.25
        A fraction in (0, 1) of the rows, or a number of rows, to hold out.
    random_state : None, int or numpy Generator
        Seed of the shuffle.
    stratify : bool, default False
        Hold out the same share of every class of y.

    Returns
    -------
    X_train, X_test, y_train, y_test
        The rows of each part, in their original order.

    Raises
    ------
    ValueError
        If the split leaves no row on one side.

    Examples
    --------
    >>> import numpy as np
    >>> from fastml.model_selection import train_test_split
    >>> X, y = np.arange(20).reshape(10, 2), np.arange(10)
    >>> X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
    >>> X_train.shape, X_test.shape, sorted(np.concatenate([y_train, y_test]).tolist()) == list(range(10))
    ((7, 2), (3, 2), True)
    """
    n = X.shape[0] if hasattr(X, "shape") else len(X)
    n_y = y.shape[0] if hasattr(y, "shape") else len(y)
    if n != n_y:
        raise ValueError(f"X and y have different numbers of samples: X has {n}, y has {n_y}")
    n_test = _n_test_rows(test_size, n)
    rng = check_random_state(random_state)
    if stratify:
        y_arr = np.asarray(y)
        test = []
        for c in np.unique(y_arr):
            rows = np.flatnonzero(y_arr == c)
            rng.shuffle(rows)
            test.append(rows[:int(round(len(rows) * n_test / n))])
        test = np.sort(np.concatenate(test))
        train = np.setdiff1d(np.arange(n), test)
    else:
        perm = rng.permutation(n)
        test, train = np.sort(perm[:n_test]), np.sort(perm[n_test:])
    return _take(X, train), _take(X, test), _take(y, train), _take(y, test)


def _n_test_rows(test_size, n):
    """The rows `test_size` holds out of n: a fraction in (0, 1) rounds, an integer is a count;
    both must leave at least one row on each side."""
    if isinstance(test_size, (bool, np.bool_)) or not isinstance(test_size, numbers.Real) \
            or not np.isfinite(test_size):
        raise ValueError(f"test_size must be a fraction in (0, 1) or a number of rows; got "
                         f"{test_size!r}")
    if isinstance(test_size, numbers.Integral):
        n_test = int(test_size)
    elif 0 < test_size < 1:
        n_test = int(round(test_size * n))
    else:
        raise ValueError(f"test_size={test_size!r} must be a fraction in (0, 1) (or a whole "
                         f"number of rows)")
    if not 0 < n_test < n:
        raise ValueError(f"test_size={test_size!r} leaves no rows for training or for testing "
                         f"({n} rows)")
    return n_test
