"""What every linear classifier shares: margins from coef_/intercept_, predict, and how class
codes become the SGD loop's outputs (one output for two classes, one per class otherwise)."""
import numpy as np

from .._validation import check_array, check_sample_weight, check_X_y


class LinearClassifierMixin:
    """decision_function = X @ coef_.T + intercept_ (1-D for two classes); predict = argmax
    (or the sign for two classes). Needs `coef_`, `intercept_`, `classes_`."""

    def _margins(self, X):
        self._check_is_fitted("coef_")
        X = check_array(X, accept_sparse=self._accepts_sparse, estimator=self, reset=False)
        M = X @ self.coef_.T
        return np.asarray(M) + self.intercept_

    def decision_function(self, X):
        """Signed distance-like scores: (n,) for two classes (positive = classes_[1]), else
        (n, n_classes)."""
        M = self._margins(X)
        return M.ravel() if M.shape[1] == 1 else M

    def predict(self, X):
        M = self._margins(X)
        codes = (M[:, 0] > 0).astype(np.intp) if M.shape[1] == 1 else np.argmax(M, axis=1)
        return self.classes_[codes]


def one_vs_rest_outputs(n_classes):
    """(n_outputs, label_offset) for per-output losses: two classes use one output standing
    for class code 1; more classes use one output per class."""
    return (1, 1) if n_classes == 2 else (n_classes, 0)


def labels_as_targets(codes):
    """The SGD loop reads classification labels as a (n, 1) float64 column of class codes."""
    return np.ascontiguousarray(codes, dtype=np.float64).reshape(-1, 1)


def start_partial_fit(estimator, X, y, classes, sample_weight=None, *, state="_engine",
                      accept_sparse=True):
    """Validate one partial_fit call of an online classifier: (X, codes, sw, first call?).
    The first call (no `state` attribute yet) fixes the features and learns `classes_` from
    `classes` (required then); later calls must bring the same features and known labels."""
    first = getattr(estimator, state, None) is None
    X, y = check_X_y(X, y, accept_sparse=accept_sparse, estimator=estimator, reset=first)
    if first:
        if classes is None:
            raise ValueError("classes must be given on the first call to partial_fit")
        estimator._encode_labels(classes)
    codes = estimator._encode_known_labels(y)
    return X, codes, check_sample_weight(sample_weight, X.shape[0]), first
