"""The metrics the demo and the command line report (same definitions as scikit-learn's)."""
import numpy as np


def accuracy(y_true, y_pred):
    """Fraction of labels predicted exactly."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    return float(np.mean(y_true == y_pred))


def log_loss(y_true, proba, classes, eps=1e-15):
    """Mean -log P(true class); `proba` columns follow `classes` (probabilities clipped at eps
    so one confident mistake gives a large finite number, not inf)."""
    classes = np.asarray(classes)
    idx = np.searchsorted(classes, np.asarray(y_true))
    p = np.asarray(proba, dtype=np.float64)[np.arange(len(idx)), idx]
    return float(-np.mean(np.log(np.clip(p, eps, 1.0))))


def confusion_matrix(y_true, y_pred, classes):
    """counts[i, j] = rows of true class classes[i] predicted as classes[j]."""
    classes = np.asarray(classes)
    t = np.searchsorted(classes, np.asarray(y_true))
    p = np.searchsorted(classes, np.asarray(y_pred))
    out = np.zeros((len(classes), len(classes)), dtype=np.int64)
    np.add.at(out, (t, p), 1)
    return out


def rmse(y_true, y_pred):
    """Root mean squared error."""
    diff = np.asarray(y_true, dtype=np.float64) - np.asarray(y_pred, dtype=np.float64)
    return float(np.sqrt(np.mean(diff ** 2)))


def r2(y_true, y_pred):
    """Coefficient of determination 1 - SS_res / SS_tot."""
    y_true = np.asarray(y_true, dtype=np.float64)
    ss_res = np.sum((y_true - np.asarray(y_pred, dtype=np.float64)) ** 2)
    ss_tot = np.sum((y_true - y_true.mean()) ** 2)
    return float(1.0 - ss_res / ss_tot) if ss_tot > 0 else 0.0
