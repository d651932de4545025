"""Splitting data for held-out evaluation."""
import numpy as np

from ._validation import check_random_state


def _take(a, idx):
    if hasattr(a, "iloc"):
        return a.iloc[idx]
    if hasattr(a, "tocsr"):
        return a.tocsr()[idx]
    return np.asarray(a)[idx]


def train_test_split(X, y, *, test_size=0.25, random_state=None, stratify=False):
    """(X_train, X_test, y_train, y_test), a random split with `test_size` (a fraction in
    (0, 1) or a row count) held out; `stratify=True` keeps each class's share in both parts."""
    n = X.shape[0] if hasattr(X, "shape") else len(X)
    n_test = int(round(test_size * n)) if isinstance(test_size, float) else int(test_size)
    if not 0 < n_test < n:
        raise ValueError(f"test_size={test_size!r} leaves no rows for training or for testing "
                         f"({n} rows)")
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
