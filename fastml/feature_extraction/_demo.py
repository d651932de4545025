"""Feature hashing's part of `fastml demo`: 003's case study, estimating click probabilities.
A click log with a known click model is hashed (FeatureHasher) and learned online by logistic
SGD, chunk by chunk with partial_fit; the progressive loss (each chunk scored before the model
learns from it, Vowpal Wabbit's progressive validation) and the held-out log-loss approach the
true model's log-loss."""
import time

import numpy as np

from ..datasets import make_clicks
from ..linear_model import LogisticRegression
from ..metrics import log_loss
from ._hashing import FeatureHasher

N_TRAIN, N_TEST, CHUNK = 150_000, 30_000, 15_000


def run(report):
    log = make_clicks(N_TRAIN + N_TEST, random_state=0)
    report.section("Hashed logistic SGD on a click log (003's case study)",
                   f"{N_TRAIN} impressions x 6 categorical fields with long tails "
                   f"(make_clicks), click rate {log.target.mean():.3f}, hashed to 2^20 columns")
    hasher = FeatureHasher(2**20, input_type="string")
    model = LogisticRegression(solver="sgd", alpha=1e-6, random_state=0)
    rows, y, classes = log.data.tolist(), log.target, np.array([0, 1])
    start, progressive = time.perf_counter(), []
    for first in range(0, N_TRAIN, CHUNK):
        X = hasher.transform(rows[first:first + CHUNK])
        chunk_y = y[first:first + CHUNK]
        if first:                    # score the chunk before learning from it
            progressive.append(log_loss(chunk_y, model.predict_proba(X), classes))
        model.partial_fit(X, chunk_y, classes=classes)
    seconds = time.perf_counter() - start
    test = slice(N_TRAIN, None)
    held_out = log_loss(y[test], model.predict_proba(hasher.transform(rows[test])), classes)
    truth = log_loss(y[test], np.column_stack([1 - log.proba[test], log.proba[test]]), classes)
    report.text(f"progressive log-loss by chunk: "
                f"{', '.join(f'{v:.4f}' for v in progressive[::3])}")
    rate = y[:N_TRAIN].mean()
    constant = log_loss(y[test], np.tile([1 - rate, rate], (N_TEST, 1)), classes)
    report.text(f"held-out log-loss {held_out:.4f}; the true click model's {truth:.4f}; "
                f"always predicting the base rate {constant:.4f}")
    report.text(f"hashing + one SGD pass: {N_TRAIN / seconds:,.0f} rows/s")
