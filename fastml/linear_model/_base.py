"""What every linear classifier shares: margins from coef_/intercept_, predict, and how class
codes become the SGD loop's outputs (one output for two classes, one per class otherwise)."""
import numpy as np

from .._validation import check_array, check_n_features


class LinearClassifierMixin:
    """decision_function = X @ coef_.T + intercept_ (1-D for two classes); predict = argmax
    (or the sign for two classes). Needs `coef_`, `intercept_`, `classes_`."""

    def _margins(self, X):
        self._check_is_fitted("coef_")
        X = check_array(X, accept_sparse=self._accepts_sparse)
        check_n_features(self, X, reset=False)
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
